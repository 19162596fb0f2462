/* cls_mpi_fit() and cls_mpi_fit_transform() (in memory, or streamed from
 * files): the ranks check their arguments in one small allreduce; in
 * CLS_SCOPE_BATCH each rank then makes the core's call (cls_fit,
 * cls_fit_transform) with the combine hooks of mpi_quantiles.c and
 * mpi_reduce.c, and the core decides the passes (fusing, streaming,
 * counting passes) and calls the hooks between them; in CLS_SCOPE_MATRIX
 * each rank fits its own matrices, nothing exchanged but the outcomes.
 * Calls the core's public API (clscale.h) and the other files of src/mpi/. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* Every scaler of the core's table (cls_scaler_name) distributes: the
 * statistics it needs merge by Chan's formulas (and min/max), or, for
 * quantiles, the ranks find them together in the core's counting passes,
 * the histograms of each pass summed by MPI_Allreduce (mpi_quantiles.c).
 * A value outside the table fails with CLS_E_UNSUPPORTED. */
static int distributed(cls_scaler s) { return cls_scaler_name(s) != NULL; }

static int matrix_scope(const cls_pipeline *p) { return p && p->scope == CLS_SCOPE_MATRIX; }

/* Light curves: a trend or bins along the rows (any field set: the core
 * refuses one set alone). Per matrix they run in each rank on its whole
 * matrices, with no exchange. */
static int light_curves(const cls_clean *c)
{
    return c && (c->detrend != CLS_DETREND_NONE || c->bin_rows || c->bin_stat != CLS_BIN_NONE || c->window ||
                 c->polyorder || c->deriv || c->delta != 0 || c->edge || c->cval != 0 || c->origin ||
                 c->detrend_op);
}

/* Bins reduced to one row each (cleaning alone; a sum or a count, or a
 * mean or median into an output of other rows, as the core decides): the
 * output has ceil(rows / bin_rows) rows per matrix. */
static int bins_reduce(const cls_pipeline *p, const cls_array *in, const cls_array *out)
{
    if (!p || !p->clean || p->scaler != CLS_NONE || p->factors || !p->clean->bin_rows) return 0;
    cls_bin_stat s = p->clean->bin_stat;
    return s == CLS_BIN_SUM || s == CLS_BIN_COUNT || (s != CLS_BIN_NONE && out && out->rows != in->rows);
}

static void key_add(mpi_check *c, const char *name, int64_t v, int only_with_data)
{
    c->key[c->nkeys] = v;
    c->key_name[c->nkeys] = name;
    c->key_only_with_data[c->nkeys] = only_with_data;
    c->nkeys++;
}

/* A double as two non-negative halves of its bits (its bits as one int64
 * could be INT64_MIN, which has no negation). */
static void key_double(mpi_check *c, const char *name, double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    key_add(c, name, (int64_t)(b >> 32), 0);
    key_add(c, name, (int64_t)(b & 0xffffffffu), 0);
}

typedef enum mode { FIT, FIT_TRANSFORM } mode;

/* This rank's part of a call. */
typedef struct call {
    cls_context       *ctx;
    const cls_pipeline *p;
    const cls_array   *in;     /* in memory; for a file, its shape (data NULL) */
    cls_array         *out;    /* FIT_TRANSFORM */
    const cls_array *fin, *fout; /* a file's arrays (cls_mpi_stream_*), else NULL */
    mode               mode;
    int                wants_stats; /* FIT, or FIT_TRANSFORM with `fitted` */
    int                has_data;
    cls_status         st;
    const char        *why;
    cls_stats         *local;  /* this rank's fit */
} call;

/* The arguments one rank can check alone. */
static void check_local(call *k)
{
    const cls_array *x = k->in;
    k->st = CLS_E_ARG;
    if (!k->ctx) k->why = "ctx is NULL";
    else if (!k->p) k->why = "pipeline is NULL";
    else if (!x) k->why = "the local array is NULL";
    else if (x->cols == 0) k->why = "the local array has 0 columns (every rank gives the columns, also with no rows)";
    else if (x->dtype != CLS_F32 && x->dtype != CLS_F64) k->why = "the local array's dtype is neither CLS_F32 nor CLS_F64";
    else if (k->p->scope != CLS_SCOPE_MATRIX && k->p->scope != CLS_SCOPE_BATCH) k->why = "pipeline: unknown scope";
    else if (k->p->inverse) k->why = "an inverse pipeline cannot be fitted";
    else if (k->p->scope == CLS_SCOPE_MATRIX && x->batch && !x->rows)
        k->why = "CLS_SCOPE_MATRIX: the local matrices have 0 rows";
    else if (k->mode == FIT_TRANSFORM && x->batch && x->rows && !k->out) k->why = "out is NULL";
    else if (light_curves(k->p->clean) && k->p->scope == CLS_SCOPE_BATCH) {
        k->st = CLS_E_UNSUPPORTED;
        k->why = "light curves (detrend, bins) run across MPI ranks per matrix (CLS_SCOPE_MATRIX: each rank its "
                 "whole matrices, no exchange); in CLS_SCOPE_BATCH the batch's rows are one series, which the ranks' "
                 "ranges would cut";
    } else if (!distributed(k->p->scaler)) {
        k->st = CLS_E_UNSUPPORTED;
        k->why = "pipeline: unknown scaler (not one of the core library's, cls_scaler_name)";
    } else if (k->p->clean && k->p->scope == CLS_SCOPE_BATCH && k->mode != FIT_TRANSFORM) {
        k->st = CLS_E_UNSUPPORTED;
        k->why = "a cleaning stage (imputation, sigma clipping) runs across MPI ranks in CLS_SCOPE_BATCH in "
                 "cls_mpi_fit_transform (it writes the cleaned data)";
    } else k->st = CLS_OK;
    k->has_data = k->st == CLS_OK && x->batch && x->rows;
}

static void fill_keys(mpi_check *c, const call *k)
{
    const cls_pipeline *p = k->st == CLS_OK ? k->p : NULL;
    const cls_array *x = k->st == CLS_OK ? k->in : NULL;
    /* the scaler's options as every rank passed them, whatever the scaler
     * (the header asks the same pipeline of every rank; the core refuses
     * clip and the quantile options where the scaler takes none) */
    key_add(c, "scalers", p ? p->scaler : 0, 0);
    key_add(c, "scopes", p ? p->scope : 0, 0);
    key_add(c, "dtypes", x ? x->dtype : 0, 0);
    key_add(c, "columns", x ? (int64_t)x->cols : 0, 0);
    key_add(c, "clip", p ? !!p->clip : 0, 0);
    key_double(c, "range lo", p ? p->lo : 0);
    key_double(c, "range hi", p ? p->hi : 0);
    key_double(c, "quantile ranges (qmin)", p ? p->qmin : 0);
    key_double(c, "quantile ranges (qmax)", p ? p->qmax : 0);
    key_add(c, "quantile options (no_centering, no_scaling, unit_variance)",
            p ? (!!p->no_centering) | (!!p->no_scaling) << 1 | (!!p->unit_variance) << 2 : 0, 0);
    /* one info.rows describes every matrix */
    key_add(c, "rows per matrix", p && p->scope == CLS_SCOPE_MATRIX && x ? (int64_t)x->rows : 0, 1);
    /* every rank asks for the statistics or none does: a rank without data
     * takes their description from a rank with data */
    key_add(c, "requests for the fitted statistics (fitted NULL or not)", k->wants_stats, 0);
    /* a cleaning stage across ranks: every rank takes the same decisions */
    const cls_clean *cl = p && p->scope == CLS_SCOPE_BATCH ? p->clean : NULL;
    key_add(c, "cleaning stages (clean NULL or not)", cl != NULL, 0);
    key_add(c, "cleaning: missing_value set", cl ? !!cl->has_missing_value : 0, 0);
    key_double(c, "cleaning: missing_value", cl && cl->has_missing_value ? cl->missing_value : 0);
    key_add(c, "cleaning: imputation", cl ? cl->impute : 0, 0);
    key_double(c, "cleaning: fill_value", cl && cl->impute == CLS_IMPUTE_CONSTANT ? cl->fill_value : 0);
    key_double(c, "cleaning: sigma", cl ? cl->sigma : 0);
    key_double(c, "cleaning: sigma_lower", cl ? cl->sigma_lower : 0);
    key_double(c, "cleaning: sigma_upper", cl ? cl->sigma_upper : 0);
    key_add(c, "cleaning: maxiters", cl ? cl->maxiters : 0, 0);
    key_add(c, "cleaning: clip centre, spread and mode", cl ? cl->center | cl->spread << 4 | cl->mode << 8 : 0, 0);
    key_add(c, "scalers' discount factors (NULL or not)", p ? p->factors != NULL : 0, 0);
    /* light curves, per matrix: the same trend and bins on every rank */
    const cls_clean *lc = p && light_curves(p->clean) ? p->clean : NULL;
    key_add(c, "light curves: trend, operation, edge", lc ? lc->detrend | lc->detrend_op << 4 | lc->edge << 8 : 0, 0);
    key_add(c, "light curves: window, polyorder, deriv", lc ? (int64_t)lc->window << 16 | lc->polyorder << 8 | lc->deriv : 0, 0);
    key_add(c, "light curves: origin", lc ? lc->origin : 0, 0);
    key_double(c, "light curves: delta", lc ? lc->delta : 0);
    key_double(c, "light curves: cval", lc ? lc->cval : 0);
    key_add(c, "light curves: bins", lc ? (int64_t)lc->bin_rows << 8 | lc->bin_stat : 0, 0);
}

/* The statistics of a rank without matrices (CLS_SCOPE_MATRIX): the
 * description that the lowest rank with data broadcasts, no matrices. */
static cls_status empty_stats(MPI_Comm comm, int root, call *k)
{
    cls_stats_info info;
    memset(&info, 0, sizeof info);
    if (k->has_data && cls_stats_describe(k->local, &info) != CLS_OK) return CLS_E_ARG;
    /* ranks of one job share one ABI: the struct travels as bytes */
    int e = MPI_Bcast(&info, (int)sizeof info, MPI_BYTE, root, comm);
    if (e != MPI_SUCCESS) return mpi_fail_call("MPI_Bcast (the statistics' description)", e);
    if (k->has_data) return CLS_OK;
    info.groups = 0;
    return cls_stats_create(&info, NULL, &k->local);
}

/* The hooks' collectives into the rank's report: the statistics' merge
 * (a fit's, or a cleaning's moments passes), the counting passes. */
static void record(double t, const mpi_combine_state *c, int cleaning)
{
    cls_mpi_report *r = mpi_report();
    double now = MPI_Wtime(), call = now - t, hooks = c->reduce + c->agree + c->quantile_reduce;
    if (cleaning) {
        r->clean = call;
        r->clean_reduce = c->reduce + c->agree;
        r->clean_bytes = c->bytes;
        r->clean_passes = c->stats_passes;
    } else {
        /* a fit_transform's transform: the work between the fit's last
         * collective and the closing agreement */
        r->transform = c->work_to > c->work_from && c->work_from > 0 ? c->work_to - c->work_from : 0;
        r->fit = call - hooks - r->transform;
        r->reduce = c->reduce;
        r->reduce_bytes = c->bytes;
    }
    if (c->passes) {
        /* from the statistics' merge that precedes them */
        r->quantiles = now - (c->quantiles_from ? c->quantiles_from : t);
        r->quantile_reduce = c->quantile_reduce;
        r->quantile_bytes = c->quantile_bytes;
        r->quantile_passes = c->passes;
    }
}

static cls_status run(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p, const cls_array *in, cls_array *out,
                      const cls_array *fin, const cls_array *fout, mode m, const char *arg_error,
                      cls_stats **result)
{
    mpi_clear_error();
    cls_mpi_report *r = mpi_report();
    memset(r, 0, sizeof *r);
    double t0 = MPI_Wtime();
    call k;
    memset(&k, 0, sizeof k);
    k.ctx = ctx;
    k.p = p;
    k.in = in;
    k.out = out;
    k.fin = fin;
    k.fout = fout;
    k.mode = m;
    k.wants_stats = m == FIT || result || !matrix_scope(p);
    check_local(&k);
    if (arg_error && k.st == CLS_OK) {
        k.st = CLS_E_ARG;
        k.why = arg_error;
        k.has_data = 0;
    }
    int matrix = k.st == CLS_OK && p->scope == CLS_SCOPE_MATRIX;

    /* per matrix: each rank its own whole matrices, no exchange; its
     * statistics only when asked (collecting them costs groups x cols x 80
     * bytes: 142 MB for seed-A) */
    double t = MPI_Wtime();
    if (matrix && k.has_data) {
        cls_stats **keep = k.wants_stats ? &k.local : NULL;
        const cls_array *x = fin ? fin : in;
        if (m == FIT_TRANSFORM) k.st = cls_fit_transform(ctx, p, x, fin ? (cls_array *)fout : out, keep);
        else k.st = cls_fit(ctx, p, x, &k.local);
        if (k.st != CLS_OK) k.why = cls_last_error(ctx);
        r->fit = MPI_Wtime() - t;
    }

    mpi_check c;
    memset(&c, 0, sizeof c);
    c.status = k.st;
    c.why = k.why;
    c.has_data = k.has_data;
    fill_keys(&c, &k);
    t = MPI_Wtime();
    cls_status st = mpi_check_all(comm, &c);
    r->check = MPI_Wtime() - t;
    if (st == CLS_OK && c.first_with_data < 0) {
        mpi_set_error("no rank holds data (every rank passed 0 rows)");
        st = CLS_E_ARG;
    }
    cls_stats *s = NULL;
    if (st == CLS_OK && matrix) {
        /* a rank without matrices: the description of the lowest rank with
         * data, no matrices; every rank knows first_without_data and
         * wants_stats, so all or none take part in the broadcast */
        if (c.first_without_data >= 0 && k.wants_stats) {
            st = empty_stats(comm, c.first_with_data, &k);
            st = cls_mpi_agree(comm, st, st == CLS_E_NOMEM ? "out of memory for empty statistics" : mpi_error());
        }
        s = k.local;
        k.local = NULL;
    } else if (st == CLS_OK) {
        /* all rows as one: the library's calls with the hooks, which it calls
         * between its passes (every decision on fusing, streaming and
         * counting passes is the library's) */
        mpi_combine_state cs;
        cls_combine hook;
        mpi_combine_init(&cs, comm, ctx, &hook);
        cls_pipeline pc = *p;
        pc.combine = &hook;
        /* a rank without rows passes its columns with none, in host memory */
        cls_array none = {.data = NULL, .dtype = in->dtype, .batch = 0, .rows = 0, .cols = in->cols};
        cls_array none_out = none;
        const cls_array *x = !k.has_data ? &none : fin ? fin : in;
        cls_array *y = !k.has_data ? &none_out : fin ? (cls_array *)fout : out;
        t = MPI_Wtime();
        if (m == FIT_TRANSFORM) st = cls_fit_transform(ctx, &pc, x, y, result ? &s : NULL);
        else st = cls_fit(ctx, &pc, x, &s);
        /* a failure reached every rank through the hooks, which composed
         * the message naming the failing rank (published below) */
        record(t, &cs, p->clean != NULL);
    }
    cls_stats_destroy(k.local);
    if (st != CLS_OK) {
        cls_stats_destroy(s);
        s = NULL;
    }
    if (result) *result = s;
    else cls_stats_destroy(s);
    r->total = MPI_Wtime() - t0;
    return st;
}

cls_status cls_mpi_fit(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p, const cls_array *local_x,
                       cls_stats **out)
{
    if (out) *out = NULL;
    cls_stats *s = NULL;
    /* a NULL out is this rank's argument error: the others still learn it */
    cls_status st = run(ctx, comm, p, local_x, NULL, NULL, NULL, FIT, out ? NULL : "cls_mpi_fit: out is NULL", &s);
    if (out) *out = s;
    else cls_stats_destroy(s);
    return mpi_publish(ctx, st);
}

/* arrays in files (CLS_IN_FILE), each rank its own part */
static cls_status stream_fit_transform(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p, const cls_array *in,
                                       const cls_array *out, cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    /* the checks and keys read the shape the files give */
    cls_array x = {.data = NULL, .dtype = CLS_F32, .batch = 0, .rows = 0, .cols = 0}, y;
    const char *bad = NULL;
    if (!in) bad = "cls_mpi_fit_transform: in is NULL";
    else {
        x.dtype = in->dtype;
        x.batch = in->batch;
        x.rows = in->rows;
        x.cols = in->cols;
        /* bins reduced per matrix: ceil(rows / bin_rows) rows each */
        size_t orows = bins_reduce(p, in, out) && p->scope == CLS_SCOPE_MATRIX && in->rows
                           ? (in->rows + p->clean->bin_rows - 1) / p->clean->bin_rows
                           : in->rows;
        if (x.batch && x.rows && !out) bad = "cls_mpi_fit_transform: out is NULL";
        else if (out && (out->dtype != in->dtype || out->batch != in->batch || out->rows != orows ||
                         out->cols != in->cols))
            bad = orows != in->rows ? "cls_mpi_fit_transform: out's dtype or shape is not in's with one row per bin"
                                    : "cls_mpi_fit_transform: out's dtype or shape differs from in's";
    }
    y = x;
    if (out && !bad) y.rows = out->rows;
    return run(ctx, comm, p, &x, &y, bad ? NULL : in, bad ? NULL : out, FIT_TRANSFORM, bad, fitted);
}

cls_status cls_mpi_fit_transform(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p, const cls_array *in,
                                 cls_array *out, cls_stats **fitted)
{
    if (in && in->where == CLS_IN_FILE) return mpi_publish(ctx, stream_fit_transform(ctx, comm, p, in, out, fitted));
    if (fitted) *fitted = NULL;
    return mpi_publish(ctx, run(ctx, comm, p, in, out, NULL, NULL, FIT_TRANSFORM, NULL, fitted));
}
