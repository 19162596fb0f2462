/* cls_mpi_fit(), cls_mpi_fit_transform() and cls_mpi_fit_transform():
 * each rank fits its own data (in memory, or streamed from a file) with the
 * core API, the ranks check their outcomes and arguments in one small
 * allreduce, and in CLS_SCOPE_BATCH combine their statistics in one
 * allreduce of the column table (mpi_reduce.c); the transform is local.
 * Calls the core's public API and the other files of src/mpi/. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi_internal.h"

/* Every scaler of the core's table (cls_scaler_name) distributes: the
 * statistics it needs merge by Chan's formulas (and min/max), or, for
 * quantiles, the ranks find them together in the core's counting passes,
 * the histograms of each pass summed by MPI_Allreduce (mpi_quantiles.c).
 * A value outside the table fails with CLS_E_UNSUPPORTED. */
static int distributed(cls_scaler s) { return cls_scaler_name(s) != NULL; }

/* The scaler's exact quantiles are found across the ranks (batch scope):
 * the route says whether it takes counting passes (its descriptor's needs). */
static int needs_quantiles(const cls_pipeline *p)
{
    cls_route r;
    cls_route_fit_transform(p, &(cls_array){.where = CLS_IN_HOST}, NULL, 0, &r);
    return r.quantiles && p->scope == CLS_SCOPE_BATCH;
}

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
    } else if (k->p->clean && k->p->scope == CLS_SCOPE_BATCH &&
               (k->mode != FIT_TRANSFORM || (k->fin && !mpi_clean_streams(k->p)))) {
        k->st = CLS_E_UNSUPPORTED;
        k->why = "a cleaning stage (imputation, sigma clipping) runs across MPI ranks in CLS_SCOPE_BATCH only in "
                 "cls_mpi_fit_transform, and streamed from files only ahead of min-max, z-score, decimal, max-abs "
                 "or no scaler (no factors, no clamping ahead of a scaler)";
    } else if (k->p->clean && k->p->scope == CLS_SCOPE_BATCH && k->p->clean->impute == CLS_IMPUTE_MOST_FREQUENT) {
        k->st = CLS_E_UNSUPPORTED;
        k->why = "most_frequent imputation is not distributed across MPI ranks (it needs every value of a column "
                 "in one process, counts do not give it); use mean, median or constant";
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

/* The statistics of a rank without data: the description that the lowest
 * rank with data broadcasts, no rows (batch) or no matrices (matrix). */
static cls_status empty_stats(MPI_Comm comm, int root, call *k)
{
    cls_stats_info info;
    memset(&info, 0, sizeof info);
    if (k->has_data && cls_stats_describe(k->local, &info) != CLS_OK) return CLS_E_ARG;
    /* ranks of one job share one ABI: the struct travels as bytes */
    int e = MPI_Bcast(&info, (int)sizeof info, MPI_BYTE, root, comm);
    if (e != MPI_SUCCESS) return mpi_fail_call("MPI_Bcast (the statistics' description)", e);
    if (k->has_data) return CLS_OK;
    if (info.scope == CLS_SCOPE_BATCH) info.rows = 0;
    else info.groups = 0;
    return cls_stats_create(&info, NULL, &k->local);
}

/* Merges the batch statistics of every rank into one new object. */
static cls_status combine(MPI_Comm comm, call *k, cls_stats **out)
{
    cls_stats_info info;
    cls_stats_describe(k->local, &info);
    return mpi_combine(comm, cls_stats_columns(k->local), &info, out);
}

/* A scaler whose quantiles are found across the ranks (needs_quantiles)
 * fits on each rank only what merges (cls_host_fit_mergeable: count,
 * missing, extremes, moments as its descriptor needs them), not the
 * quantiles of its own rows alone; the quantiles follow over every rank's
 * rows (quantiles()). A file's part is mapped read-only for it, as for
 * the counting passes. */
static cls_status fit_mergeable(call *k)
{
    cls_array x = *k->in;
    void *base = NULL;
    size_t len = 0;
    cls_status st = k->fin ? mpi_map_part(k->fin, &x, &base, &len) : CLS_OK;
    if (st != CLS_OK) return cls_fail(k->ctx, st, "%s", mpi_error());
    st = cls_host_fit_mergeable(k->ctx, k->p, &x, &k->local);
    if (base) munmap(base, len);
    return st;
}

/* The robust statistics' quantiles over every rank's rows, into s. A rank
 * without data, and a file's part (mapped read-only), take part too. */
static cls_status quantiles(MPI_Comm comm, call *k, cls_stats *s)
{
    cls_array x = {.data = NULL, .dtype = k->in->dtype, .batch = k->has_data ? k->in->batch : 0, .rows = k->has_data ? k->in->rows : 0, .cols = k->in->cols};
    void *base = NULL;
    size_t len = 0;
    cls_status st = CLS_OK;
    if (k->has_data && k->fin) st = mpi_map_part(k->fin, &x, &base, &len);
    else if (k->has_data) x.data = k->in->data;
    /* a failure here reaches the others through the hook */
    st = mpi_fit_quantiles(comm, k->ctx, k->p, &x, s, st, st == CLS_OK ? NULL : mpi_error());
    if (base) munmap(base, len);
    return st;
}

static cls_status run(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p, const cls_array *in, cls_array *out,
                      const cls_array *fin, const cls_array *fout, mode m, const char *arg_error,
                      cls_stats **result);

/* A cleaning stage in batch scope, after the ranks agreed on the
 * arguments: cleaned across the ranks (mpi_clean.c), the scaler fused
 * there, or fitted and applied across the ranks to the cleaned rows in
 * place (run() again, without the cleaning). */
static cls_status clean_then_rest(cls_context *ctx, MPI_Comm comm, const call *k, cls_stats **result)
{
    const cls_pipeline *p = k->p;
    int fuses = mpi_clean_fuses(p);
    if (k->fin) /* streamed: the scaler fuses or there is none (check_local) */
        return mpi_clean_run_files(ctx, comm, p, k->fin, k->fout, k->has_data, fuses ? result : NULL);
    cls_status st = mpi_clean_run(ctx, comm, p, k->in, k->out, k->has_data, fuses ? result : NULL);
    cls_pipeline rest = *p;
    rest.clean = NULL;
    if (st != CLS_OK || fuses || (rest.scaler == CLS_NONE && !rest.factors && !result)) return st;
    cls_mpi_report keep = *mpi_report();
    st = run(ctx, comm, &rest, k->has_data ? k->out : k->in, k->has_data ? k->out : NULL, NULL, NULL, FIT_TRANSFORM,
             NULL, result);
    cls_mpi_report *r = mpi_report();
    r->clean = keep.clean;
    r->clean_reduce = keep.clean_reduce;
    r->clean_bytes = keep.clean_bytes;
    r->clean_passes = keep.clean_passes;
    r->check += keep.check;
    return st;
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

    /* a cleaning stage across ranks (check_local let it through) */
    int cleaning = k.st == CLS_OK && p->clean && !matrix;
    double t = MPI_Wtime();
    if (k.has_data && !cleaning) {
        /* per matrix: one pass; its statistics only when asked (collecting
         * them costs groups x cols x 80 bytes: 142 MB for seed-A) */
        cls_stats **keep = k.wants_stats ? &k.local : NULL;
        if (fin && m == FIT_TRANSFORM && matrix) k.st = cls_fit_transform(ctx, p, fin, (cls_array *)fout, keep);
        else if (needs_quantiles(p)) k.st = fit_mergeable(&k);
        else if (fin) k.st = cls_fit(ctx, p, fin, &k.local);
        else if (m == FIT_TRANSFORM && matrix) k.st = cls_fit_transform(ctx, p, in, out, keep);
        else k.st = cls_fit(ctx, p, in, &k.local);
        if (k.st != CLS_OK) k.why = cls_last_error(ctx);
    }
    if (!cleaning) r->fit = MPI_Wtime() - t;

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
    if (st == CLS_OK && cleaning) {
        st = clean_then_rest(ctx, comm, &k, result);
        r->total = MPI_Wtime() - t0;
        return st;
    }
    /* every rank knows first_without_data and wants_stats: all or none take
     * part in the broadcast */
    if (st == CLS_OK && c.first_without_data >= 0 && k.wants_stats) {
        st = empty_stats(comm, c.first_with_data, &k);
        st = cls_mpi_agree(comm, st, st == CLS_E_NOMEM ? "out of memory for empty statistics" : mpi_error());
    }
    cls_stats *s = NULL;
    if (st == CLS_OK && !matrix) {
        st = combine(comm, &k, &s);
        st = cls_mpi_agree(comm, st, st == CLS_E_NOMEM ? "out of memory for the combined statistics" : mpi_error());
        if (st == CLS_OK && needs_quantiles(p)) st = quantiles(comm, &k, s);
    }
    if (st == CLS_OK && matrix) {
        s = k.local;
        k.local = NULL;
    }
    cls_stats_destroy(k.local);

    if (st == CLS_OK && m == FIT_TRANSFORM && !matrix) {
        cls_status ts = CLS_OK;
        t = MPI_Wtime();
        if (k.has_data) ts = fin ? cls_transform(ctx, p, s, fin, (cls_array *)fout) : cls_transform(ctx, p, s, in, out);
        r->transform = MPI_Wtime() - t;
        st = cls_mpi_agree(comm, ts, ts != CLS_OK ? cls_last_error(ctx) : NULL);
    }
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
