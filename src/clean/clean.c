/* The cleaning stage: cls_host_clean() and cls_host_fit_transform() (which
 * cleans ahead of the scaler when the pipeline asks). Owns the order of
 * the passes: a moments pass (missing values counted; the data copied to
 * `out` with missing values NaN when clipping), one masking pass per
 * clipping iteration (bounds from the previous pass's moments, or from
 * the counting passes for a median or mad_std), the fill values, then one
 * pass that writes the result, with the scaler's map fused into it when
 * the scaler's statistics follow from the moments (a scaler whose
 * descriptor needs no exact quantiles, such as min-max or z-score: the
 * kept values' moments plus k copies of the fill).
 * Short groups (<= 64 rows, clip_fast.h) clip in one pass instead of the moments and
 * masking passes, and find their fill there too. Imputation alone (mean,
 * constant, a sentinel) ahead of a one-pass scaler goes to impute_fused.c
 * instead where the call's route says so (its impute_fused). Every entry
 * here acts on the call's route (plan/route.h) and checks its arguments
 * once before any pass writes (a scaler after the cleaning or light
 * curves: plan/checks.c's cls_check_fit_transform); the passes after check
 * nothing again. A file's chunks (api/stream.c, whose door checked the
 * call) take the cls_chunk_* entries: the same runs, no checks. Across processes (cls_fit_transform): every moments
 * pass's moments merged by the caller's combine->stats hook, the medians
 * by the combined counting passes, so every process takes the same
 * decisions; a process with no rows takes no device pass but every
 * collective; neither one-pass route is taken there (each needs every row
 * of a group in one process).
 * Calls: checks.c (the checks of the call), clean_pass.c, clip_fast.c,
 * impute_fused.c, select.c (medians), stats/mode_count.c (the most
 * frequent value of a streamed file), lightcurve.c (trends and bins after
 * the cleaning), flatten.c (the trend refitted between clips),
 * pipeline.c (what cannot fuse, after its checks),
 * clean/ (host arithmetic), scalers/ (params). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "stats/clean_host.h"
#include "stats/mode_count.h"
#include "quantiles/regime.h"
#include "clean/clean_pass.h"
#include "clean/clean_stream.h"
#include "clean/entries.h"
#include "clean/clip_fast.h"
#include "clean/flatten.h"
#include "clean/impute_fused.h"
#include "engine/job.h"
#include "quantiles/select.h"
#include "lightcurve/lightcurve.h"
#include "plan/entries.h"
#include "plan/route.h"
#include "scalers/scaler.h"
#include "stats/quantile.h"
#include "util/pool.h"
#include "util/table.h"

typedef struct copts {
    int        has_sent;
    double     sent;
    cls_impute impute;
    double     fill;
    int        clip;
    double     slo, shi;
    int        maxiters;   /* < 0: until nothing changes */
    int        center_mean, mad;
    int        clamp;
    int        keep;       /* CLS_CLIP_KEEP: values written as read */
} copts;

/* The options of c as the passes take them (checked already: check_opts). */
static void opts_of(const cls_clean *c, copts *o)
{
    memset(o, 0, sizeof *o);
    o->has_sent = c->has_missing_value != 0;
    o->sent = c->missing_value;
    o->impute = c->impute;
    o->fill = c->fill_value;
    o->clip = c->sigma > 0 || c->sigma_lower > 0 || c->sigma_upper > 0;
    if (o->clip) {
        o->slo = c->sigma_lower > 0 ? c->sigma_lower : c->sigma;
        o->shi = c->sigma_upper > 0 ? c->sigma_upper : c->sigma;
        o->maxiters = c->maxiters == 0 ? 5 : c->maxiters < 0 ? -1 : c->maxiters;
        o->center_mean = c->center == CLS_CENTER_MEAN;
        o->mad = c->spread == CLS_SPREAD_MAD_STD;
        o->clamp = c->mode == CLS_CLIP_CLAMP;
    }
    o->keep = c->mode == CLS_CLIP_KEEP;
}

static cls_status resolve(cls_context *ctx, const cls_clean *c, copts *o, int data_only)
{
    cls_status st = cls_check_clean_opts(ctx, c, data_only);
    if (st == CLS_OK) opts_of(c, o);
    return st;
}

/* combined: rows (and, in batch scope, batch) may be 0, data then NULL */
static cls_status check_arrays(cls_context *ctx, const cls_array *in, const cls_array *out, int combined,
                               cls_scope scope)
{
    if (!in || !out) return cls_fail(ctx, CLS_E_ARG, "cleaning: NULL array");
    int empty = !in->batch || !in->rows;
    if (combined && empty && in->cols && (in->batch || scope == CLS_SCOPE_BATCH)) {
        if (in->dtype != CLS_F32 && in->dtype != CLS_F64)
            return cls_fail(ctx, CLS_E_ARG, "cleaning: unknown dtype");
        if (out->dtype != in->dtype || out->batch != in->batch || out->rows != in->rows || out->cols != in->cols)
            return cls_fail(ctx, CLS_E_ARG, "cleaning: out's shape or dtype differs from in's");
        return CLS_OK;
    }
    if (!in->data || !out->data) return cls_fail(ctx, CLS_E_ARG, "cleaning: NULL array");
    if (in->dtype != CLS_F32 && in->dtype != CLS_F64) return cls_fail(ctx, CLS_E_ARG, "cleaning: unknown dtype");
    if (!in->batch || !in->rows || !in->cols)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: shape %zu x %zu x %zu has a zero dimension", in->batch,
                        in->rows, in->cols);
    if (out->dtype != in->dtype || out->batch != in->batch || out->rows != in->rows || out->cols != in->cols)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: out's shape or dtype differs from in's");
    size_t es = in->dtype == CLS_F64 ? 8 : 4;
    if (in->batch > SIZE_MAX / in->rows || in->batch * in->rows > SIZE_MAX / in->cols / es)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: the shape overflows");
    size_t bytes = in->batch * in->rows * in->cols * es;
    const char *a = in->data, *b = out->data;
    if (a != b && a < b + bytes && b < a + bytes)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: out overlaps in without being it");
    return CLS_OK;
}

/* What a run needs besides the options: G x C tables. */
typedef struct cwork {
    size_t       ne;
    cls_cmoments m;
    uint64_t    *n0;
    double      *L, *H, *cen, *spr, *fill, *prm;
    cls_column_stats *cs;      /* the hook's table (combined), else NULL */
} cwork;

static void work_free(cwork *w)
{
    /* kept for the next call's tables (table.h) */
    size_t b = (w->ne ? w->ne : 1) * 8;
    void *t[13] = {w->m.n, w->m.below, w->m.above, w->m.mean, w->m.m2, w->m.min, w->m.max,
                   w->n0, w->L, w->H, w->cen, w->spr, w->fill};
    for (int i = 0; i < 13; i++) cls_table_free(t[i], b);
    cls_table_free(w->prm, 7 * b);
    free(w->cs);
}

static int work_alloc(cwork *w, size_t ne)
{
    memset(w, 0, sizeof *w);
    w->ne = ne;
    size_t b = (ne ? ne : 1) * 8;
    w->m.n = cls_table_alloc(b);
    w->m.below = cls_table_alloc(b);
    w->m.above = cls_table_alloc(b);
    w->m.mean = cls_table_alloc(b);
    w->m.m2 = cls_table_alloc(b);
    w->m.min = cls_table_alloc(b);
    w->m.max = cls_table_alloc(b);
    w->n0 = cls_table_alloc(b);
    w->L = cls_table_alloc(b);
    w->H = cls_table_alloc(b);
    w->cen = cls_table_alloc(b);
    w->spr = cls_table_alloc(b);
    w->fill = cls_table_alloc(b);
    w->prm = cls_table_alloc(7 * b);
    return w->m.n && w->m.below && w->m.above && w->m.mean && w->m.m2 && w->m.min && w->m.max && w->n0 &&
           w->L && w->H && w->cen && w->spr && w->fill && w->prm;
}

/* Where a run's data is: in memory (v: the input at x, the output at y),
 * or streamed in chunks (src; v then only gives the shape). */
typedef struct cdata {
    cls_cview          v;
    const cls_csource *src;
} cdata;

/* Where medians() puts each entry's median and, with n, its count of
 * values taking part (a cls_qput_fn). */
typedef struct med_put {
    cls_median_out m;
    uint64_t      *n;
} med_put;

static void med_put_fn(void *user, size_t e, uint64_t n, const double *pv)
{
    med_put *p = user;
    cls_select_median_put(&p->m, e, n, pv);
    if (p->n) p->n[e] = n;
}

/* Medians of every column's values that are not missing and, with lo, not
 * outside [lo, hi]; with absdev, of |x - cen|. NaN for an empty column.
 * n, when not NULL, receives each entry's count of such values (the
 * selection counts them: a median fill alone needs no moments pass for
 * its missing counts). */
static cls_status medians_n(cls_context *ctx, const cdata *d, const copts *o, const double *lo, const double *hi,
                            const double *absdev, double *out, uint64_t *n, const cls_combine *cb)
{
    const cls_cview *v = &d->v;
    cls_qview qv = {v->x, v->dtype, v->G, v->Rg, v->C};
    cls_qfilter f;
    memset(&f, 0, sizeof f);
    f.has_sent = o->has_sent;
    f.sent = o->sent;
    f.cen = absdev;
    f.flo = lo;
    f.fhi = hi;
    /* |x - cen| of float32 data is a float32 value on the device too */
    med_put m = {{absdev ? CLS_F64 : v->dtype, out}, n};
    return cls_select_put(ctx, &qv, &f, 2, cls_select_median_ranks, NULL, cb, d->src ? &d->src->read : NULL,
                          med_put_fn, &m);
}

static cls_status medians(cls_context *ctx, const cdata *d, const copts *o, const double *lo, const double *hi,
                          const double *absdev, double *out, const cls_combine *cb)
{
    return medians_n(ctx, d, o, lo, hi, absdev, out, NULL, cb);
}

/* Centre and spread of every column's kept values (the moments in w->m;
 * the data in v, the values kept those inside w->L, w->H). */
static cls_status centre_spread(cls_context *ctx, const cdata *v, const copts *o, cwork *w,
                                const cls_combine *cb)
{
    cls_status st = CLS_OK;
    size_t ne = w->ne;
    if (o->center_mean) {
        for (size_t e = 0; e < ne; e++) w->cen[e] = w->m.n[e] ? w->m.mean[e] : NAN;
    } else {
        st = medians(ctx, v, o, w->L, w->H, NULL, w->cen, cb);
    }
    if (st != CLS_OK) return st;
    if (!o->mad) {
        for (size_t e = 0; e < ne; e++) w->spr[e] = w->m.n[e] ? sqrt(w->m.m2[e] / (double)w->m.n[e]) : NAN;
        return CLS_OK;
    }
    /* mad_std: the median of |x - median|, whatever the centre */
    double *med = w->cen, *own = NULL;
    if (o->center_mean) {
        own = malloc(ne * sizeof *own);
        st = own ? medians(ctx, v, o, w->L, w->H, NULL, own, cb) : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
        if (!own && cb) st = cb->fn(cb->user, st, NULL, 0);
        med = own;
    }
    if (st == CLS_OK) st = medians(ctx, v, o, w->L, w->H, med, w->spr, cb);
    if (st == CLS_OK)
        for (size_t e = 0; e < ne; e++) w->spr[e] *= CLS_MAD_STD;
    free(own);
    return st;
}

/* The scaler's params of every column from the cleaned data's statistics
 * into planes 3..6 of w->prm; fills *cols for the fitted statistics. */
static void fused_params(const cls_pipeline *p, const cls_cview *v, uint64_t rows, const copts *o, cwork *w,
                         cls_column_stats *cols)
{
    cls_scaler_opts so = cls_scaler_opts_of(p);
    size_t ne = w->ne;
    for (size_t e = 0; e < ne; e++) {
        cls_column_stats c = cls_column_empty();
        c.missing = rows;
        if (w->m.n[e]) {
            c.count = w->m.n[e];
            c.missing = rows - w->m.n[e];
            c.min = w->m.min[e];
            c.max = w->m.max[e];
            c.mean = w->m.mean[e];
            c.m2 = w->m.m2[e];
            c.absmax = fmax(fabs(c.min), fabs(c.max));
        }
        if (o->impute != CLS_IMPUTE_NONE && isfinite(w->fill[e])) {
            uint64_t k = c.missing;
            cls_column_add_constant(&c, k, w->fill[e]);
            c.missing = 0;
        }
        cols[e] = c;
        cls_params pr = cls_params_with(&c, p->scaler, &so, 0, v->dtype);
        double shi = v->dtype == CLS_F64 ? pr.shift : (double)(float)pr.shift;
        w->prm[3 * ne + e] = shi;
        w->prm[4 * ne + e] = pr.shift - shi;
        w->prm[5 * ne + e] = pr.m;
        w->prm[6 * ne + e] = pr.o;
    }
}

static void moments_clear(cls_cmoments *m, size_t n)
{
    for (size_t e = 0; e < n; e++) {
        m->n[e] = m->below[e] = m->above[e] = 0;
        m->mean[e] = m->m2[e] = m->min[e] = m->max[e] = NAN;
    }
}

/* Streamed: each chunk's moments (C entries of its group) merged into the
 * group's with Chan's formulas, chunks in the order of the file. */
typedef struct mchunk {
    cls_context       *ctx;
    const cdata       *d;
    unsigned           flags;
    double             sent;
    const double      *lo, *hi;
    cls_cmoments      *acc;
    cwork              part;  /* C entries */
} mchunk;

static cls_status moments_chunk(void *cu, uint64_t g, uint64_t rows, const char *x)
{
    mchunk *k = cu;
    size_t C = k->d->v.C, e0 = (size_t)g * C;
    cls_cview v = {x, NULL, k->d->v.dtype, 1, rows, C, NULL};
    cls_cmoments *p = &k->part.m, *a = k->acc;
    cls_status st = cls_clean_moments(k->ctx, &v, k->flags, k->sent, k->lo ? k->lo + e0 : NULL,
                                      k->hi ? k->hi + e0 : NULL, p);
    for (size_t c = 0; st == CLS_OK && c < C; c++) {
        a->below[e0 + c] += p->below[c];
        a->above[e0 + c] += p->above[c];
        cls_cmoments_fold(a, e0 + c, p->n[c], p->mean[c], p->m2[c], p->min[c], p->max[c]);
    }
    return st;
}

/* A moments pass; a process with no rows (combined) takes none. */
static cls_status moments(cls_context *ctx, const cdata *d, unsigned flags, double sent, const double *lo,
                          const double *hi, cls_cmoments *m)
{
    const cls_cview *v = &d->v;
    size_t ne = (size_t)v->G * v->C;
    if (!v->G || !v->Rg) {
        moments_clear(m, ne);
        return CLS_OK;
    }
    if (!d->src) return cls_clean_moments(ctx, v, flags, sent, lo, hi, m);
    mchunk k = {ctx, d, flags, sent, lo, hi, m, {0}};
    if (!work_alloc(&k.part, v->C)) {
        work_free(&k.part);
        return cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory");
    }
    moments_clear(m, ne);
    cls_status st = d->src->read.each(d->src->read.user, moments_chunk, &k);
    work_free(&k.part);
    return st;
}

/* Streamed: the last pass, each chunk cleaned in place with its group's
 * planes of prm. */
typedef struct achunk {
    cls_context  *ctx;
    const cdata  *d;
    unsigned      flags;
    double        sent, rlo, rhi;
    const double *prm;
    double       *sub;  /* 7 x C */
} achunk;

static cls_status apply_chunk(void *cu, uint64_t g, uint64_t rows, char *x, uint8_t *mask)
{
    achunk *k = cu;
    size_t C = k->d->v.C, ne = (size_t)k->d->v.G * C;
    for (size_t pl = 0; pl < 7; pl++) memcpy(k->sub + pl * C, k->prm + pl * ne + (size_t)g * C, C * sizeof *k->sub);
    /* the chunk's mask goes where the source puts it (clean_stream.h) */
    cls_cview v = {x, x, k->d->v.dtype, 1, rows, C, mask};
    return cls_clean_apply(k->ctx, &v, mask ? k->flags : k->flags & ~CLS_CF_MASK, k->sent, k->sub, k->rlo, k->rhi);
}

static cls_status apply(cls_context *ctx, const cdata *d, unsigned flags, double sent, const double *prm, double rlo,
                        double rhi)
{
    if (!d->src) return cls_clean_apply(ctx, &d->v, flags, sent, prm, rlo, rhi);
    achunk k = {ctx, d, flags, sent, rlo, rhi, prm, malloc(7 * d->v.C * sizeof(double))};
    if (!k.sub) return cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory");
    cls_status st = d->src->write(d->src->read.user, apply_chunk, &k);
    free(k.sub);
    return st;
}

/* Across processes: this process's outcome and moments to the stats hook,
 * the merged moments back (below and above stay this process's own: the
 * run does not read them); *rows: the rows of a group over all processes.
 * Without a hook, *rows is this process's. */
static cls_status combine_moments(const cls_combine *cb, cls_status st, cwork *w, uint64_t Rg, uint64_t *rows)
{
    if (!cb) {
        *rows = Rg;
        return st;
    }
    size_t ne = w->ne;
    if (st == CLS_OK) {
        for (size_t e = 0; e < ne; e++) {
            cls_column_stats *c = &w->cs[e];
            *c = cls_column_empty();
            c->missing = Rg - w->m.n[e];
            if (w->m.n[e]) {
                c->count = w->m.n[e];
                c->min = w->m.min[e];
                c->max = w->m.max[e];
                c->absmax = fmax(fabs(c->min), fabs(c->max));
                c->mean = w->m.mean[e];
                c->m2 = w->m.m2[e];
            }
        }
    }
    st = cb->stats(cb->user, st, st == CLS_OK ? w->cs : NULL, st == CLS_OK ? ne : 0);
    if (st != CLS_OK) return st;
    for (size_t e = 0; e < ne; e++) {
        const cls_column_stats *c = &w->cs[e];
        w->m.n[e] = c->count;
        w->m.mean[e] = c->count ? c->mean : NAN;
        w->m.m2[e] = c->count ? c->m2 : NAN;
        w->m.min[e] = c->count ? c->min : NAN;
        w->m.max[e] = c->count ? c->max : NAN;
    }
    *rows = ne ? w->cs[0].count + w->cs[0].missing : 0;
    return CLS_OK;
}

/* The most frequent value of every column (host, clean_host.c): blocks
 * of up to CLS_MODE_COLS columns of a group (one sweep over its rows
 * gathers them), blocks spread over the context's host threads, each with
 * its own scratch while those stay within 1 GiB, else one block after
 * another. It was a qsort of one column after another: 1.2-1.6x
 * scikit-learn's time. */
typedef struct mode_work {
    const cls_cview *v;
    int              sent;
    double           sv;
    const double    *lo, *hi;  /* the kept values' bounds, or NULL */
    double          *fill;
    size_t           w, nb;    /* columns a block, blocks a group */
    uint64_t        *scratch;  /* shared, when one thread does all */
    atomic_int       failed;
} mode_work;

static void mode_item(void *arg, size_t i)
{
    mode_work *m = arg;
    const cls_cview *v = m->v;
    size_t es = v->dtype == CLS_F64 ? 8 : 4, g = i / m->nb, c0 = (i % m->nb) * m->w;
    size_t nc = v->C - c0 < m->w ? v->C - c0 : m->w;
    const char *x0 = v->x + ((size_t)g * v->Rg * v->C + c0) * es;
    uint64_t *s = m->scratch ? m->scratch : malloc(CLS_MODE_SCRATCH(v->Rg, m->w) * sizeof *s);
    if (!s) {
        atomic_store(&m->failed, 1);
        return;
    }
    size_t e0 = g * v->C + c0;
    cls_most_frequent_cols(x0, v->dtype, v->C, v->Rg, nc, m->sent, m->sv, m->lo ? m->lo + e0 : NULL,
                           m->hi ? m->hi + e0 : NULL, s, m->fill + e0);
    if (!m->scratch) free(s);
}

static cls_status modes(cls_context *ctx, const cls_cview *v, const copts *o, const double *lo, const double *hi,
                        double *fill)
{
    if (!v->G || !v->C) return CLS_OK;
    mode_work m = {v, o->has_sent, o->sent, lo, hi, fill, 1, 0, NULL, 0};
    atomic_init(&m.failed, 0);
    /* blocks of at most 64 MiB of keys */
    while (m.w < CLS_MODE_COLS && m.w < v->C && 2 * m.w * (size_t)v->Rg * 8 <= ((size_t)64 << 20)) m.w *= 2;
    m.nb = (v->C + m.w - 1) / m.w;
    size_t items = (size_t)v->G * m.nb, per = CLS_MODE_SCRATCH(v->Rg, m.w) * sizeof(uint64_t);
    if (items > 1 && per * cls_pool_size(ctx->pool) <= ((size_t)1 << 30)) {
        cls_pool_run(ctx->pool, items, mode_item, &m);
    } else {
        m.scratch = malloc(per);
        for (size_t i = 0; m.scratch && i < items; i++) mode_item(&m, i);
        if (!m.scratch) atomic_store(&m.failed, 1);
        free(m.scratch);
    }
    return atomic_load(&m.failed) ? cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory for the most frequent values")
                                  : CLS_OK;
}

/* The most frequent value of every column of data streamed in chunks
 * (stats/mode_count.h): counting passes over the chunks, each a read of
 * the data, in a budget of host memory on top of the stream's buffers
 * (the context's scratch budget, at most CLS_MODE_STREAM_BYTES: the pool
 * of a streamed file takes most of the tool's 400 MB). Data with fewer
 * distinct values per column than the budget's slots take one pass;
 * more, a pass per cut range. */
#define CLS_MODE_STREAM_BYTES ((size_t)64 << 20)

typedef struct mode_pass {
    cls_mode_count *m;
    cls_pool       *pool;
} mode_pass;

static cls_status mode_chunk(void *cu, uint64_t g, uint64_t rows, const char *x)
{
    mode_pass *k = cu;
    cls_mode_count_rows(k->m, k->pool, g, x, rows);
    return CLS_OK;
}

static cls_status modes_stream(cls_context *ctx, const cdata *d, const copts *o, const double *lo,
                               const double *hi, double *fill)
{
    const cls_cview *v = &d->v;
    size_t budget = ctx->cfg.scratch_bytes ? ctx->cfg.scratch_bytes : CLS_SCRATCH_DEFAULT;
    if (budget < CLS_MODE_COUNT_MIN_BYTES)
        return cls_fail(ctx, CLS_E_NOMEM, "cleaning: most_frequent over a file streamed in chunks: the scratch "
                        "budget (cls_config.scratch_bytes = %zu bytes) cannot hold one column's counting table "
                        "(%zu bytes at least)", budget, CLS_MODE_COUNT_MIN_BYTES);
    if (budget > CLS_MODE_STREAM_BYTES) budget = CLS_MODE_STREAM_BYTES;
    size_t ne = (size_t)v->G * v->C;
    mode_pass k = {cls_mode_count_new(v->dtype, v->C, ne, v->Rg, budget, o->has_sent, o->sent, lo, hi,
                                      cls_pool_size(ctx->pool)),
                   ctx->pool};
    if (!k.m) return cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory for the most frequent values' counts");
    cls_status st = CLS_OK;
    int r;
    while (st == CLS_OK && (r = cls_mode_count_begin(k.m)) != 0) {
        if (r < 0) {
            st = cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory for the most frequent values' counts");
            break;
        }
        st = d->src->read.each(d->src->read.user, mode_chunk, &k);
        cls_mode_count_end(k.m);
    }
    if (st == CLS_OK) cls_mode_count_result(k.m, fill);
    cls_mode_count_free(k.m);
    return st;
}

/* Cleans in into out; with `p` (a scaler that fuses), scales in the same
 * last pass and returns the fitted statistics in *fitted (may be NULL).
 * *fused says whether the scaler ran. */
static cls_status clean_run(cls_context *ctx, const cls_clean *c, const copts *o, cls_scope scope,
                            const cls_array *in, cls_array *out, const cls_csource *src, const cls_pipeline *p,
                            int *fused, cls_stats **fitted, const cls_combine *cb)
{
    uint64_t G = scope == CLS_SCOPE_BATCH ? 1 : in->batch;
    uint64_t Rg = scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
    size_t C = in->cols, ne = (size_t)G * C;
    uint64_t rows = Rg; /* a group's rows over every process */
    cwork w;
    cls_column_stats *cols = NULL;
    cls_status st = CLS_OK;
    *fused = 0;
    if (!work_alloc(&w, ne) || (cb && !(w.cs = malloc((ne ? ne : 1) * sizeof *w.cs)))) {
        work_free(&w);
        st = cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory for %zu columns", ne);
        return cb ? cb->stats(cb->user, st, NULL, 0) : st;
    }
    /* every pass reads the input, the values a clip keeps given by bounds;
     * only the last pass writes (out may be in) */
    cls_cview vin = {in->data, out ? out->data : NULL, in->dtype, G, Rg, C, c->mask_out};
    cdata din = {vin, src};
    /* one pass over each column sorted once (clip_fast.c): clipping, and
     * the fills that need the order (median, most frequent) without
     * clipping too (no iteration) */
    int ordered = o->clip || o->impute == CLS_IMPUTE_MEDIAN || o->impute == CLS_IMPUTE_MOST_FREQUENT;
    int fast = !cb && !src && ordered &&
               cls_clip_fast_fits(ctx, &vin, !o->clip && o->impute == CLS_IMPUTE_MEDIAN);
    unsigned iters = 0;
    if (fast) {
        cls_clip_opts xo = {.has_sent = o->has_sent, .sent = o->sent, .slo = o->slo, .shi = o->shi,
                            .maxiters = o->clip ? o->maxiters : 0, .center_mean = o->center_mean, .mad = o->mad,
                            .clamp = o->clamp, .keep = o->keep, .fill = (int)o->impute, .fill_value = o->fill,
                            .write = p == NULL && out, .moments = p || c->mean_out || c->m2_out,
                            .unread = !p && !c->missing_out && !c->clipped_out && !c->fill_out &&
                                      !c->lower_out && !c->upper_out && !c->mean_out && !c->m2_out};
        st = cls_clip_fast(ctx, &vin, &xo, w.n0, &w.m, w.L, w.H, w.fill, &iters);
    }
    unsigned sf = o->has_sent ? CLS_CF_SENT : 0;
    /* pass 1: missing values counted, the moments of the rest; none where
     * nothing reads them (a fill by a median, a most frequent value or a
     * constant, alone, no per-column count asked for): the fill's own
     * selection and the last pass then read the data, as a robust fit's
     * selection and its scaling pass do */
    int counted = o->clip || p || cb || src || o->impute == CLS_IMPUTE_MEAN || c->missing_out ||
                  c->clipped_out || c->mean_out || c->m2_out;
    /* a median fill alone: the selection counts each column's values, so
     * the missing counts come with the medians (the moments pass took
     * about twice the selection's time) */
    int sel_counts = !o->clip && !p && !cb && o->impute == CLS_IMPUTE_MEDIAN && !c->mean_out && !c->m2_out;
    if (sel_counts) counted = 0;
    if (st == CLS_OK && !fast && counted) st = moments(ctx, &din, sf, o->sent, NULL, NULL, &w.m);
    if (!fast && counted) st = combine_moments(cb, st, &w, Rg, &rows);
    if (st == CLS_OK && !fast && counted) memcpy(w.n0, w.m.n, ne * sizeof *w.n0);
    for (size_t e = 0; e < ne && !fast; e++) {
        w.L[e] = -INFINITY;
        w.H[e] = INFINITY;
    }
    /* each iteration keeps the values inside every bound so far (an
     * interval: [L, H]), as astropy's loop, which makes clipped values NaN */
    if (st == CLS_OK && o->clip && !fast) {
        for (;;) {
            if (o->maxiters >= 0 && iters >= (unsigned)o->maxiters) break;
            iters++;
            st = centre_spread(ctx, &din, o, &w, cb);
            if (st != CLS_OK) break;
            for (size_t e = 0; e < ne; e++) {
                double lo = w.cen[e] - w.spr[e] * o->slo, hi = w.cen[e] + w.spr[e] * o->shi;
                if (lo > w.L[e]) w.L[e] = lo;
                if (hi < w.H[e]) w.H[e] = hi;
            }
            uint64_t before = 0, after = 0;
            for (size_t e = 0; e < ne; e++) before += w.m.n[e];
            st = moments(ctx, &din, sf, o->sent, w.L, w.H, &w.m);
            st = combine_moments(cb, st, &w, Rg, &rows);
            if (st != CLS_OK) break;
            for (size_t e = 0; e < ne; e++) after += w.m.n[e];
            if (after == before) break;
        }
    }
    /* As astropy's sigma_clip: the values clipped in the end are those
     * outside the last iteration's bounds. A value an earlier iteration
     * clipped comes back when inside them (a mean centre moves once the
     * outliers are gone), and NaN bounds (nothing was left to compute them
     * from) clip nothing. Where no bound of the last iteration is wider than
     * the bounds so far (the common case) the last pass kept exactly those
     * values; else one more pass over the input keeps them. The decision
     * reads only combined numbers: every process takes it alike. */
    if (st == CLS_OK && o->clip && !fast && iters > 0) {
        int again = 0;
        for (size_t e = 0; e < ne; e++) {
            double lo = w.cen[e] - w.spr[e] * o->slo, hi = w.cen[e] + w.spr[e] * o->shi;
            if (isnan(lo) || isnan(hi)) again |= w.m.n[e] != w.n0[e];
            else again |= lo < w.L[e] || hi > w.H[e];
            w.L[e] = lo;
            w.H[e] = hi;
        }
        if (again) {
            st = moments(ctx, &din, sf, o->sent, w.L, w.H, &w.m);
            st = combine_moments(cb, st, &w, Rg, &rows);
        }
    }
    /* fill values over the kept values */
    if (st == CLS_OK && !fast) {
        for (size_t e = 0; e < ne; e++) w.fill[e] = NAN;
        if (o->impute == CLS_IMPUTE_MEAN) {
            for (size_t e = 0; e < ne; e++) w.fill[e] = w.m.n[e] ? w.m.mean[e] : NAN;
            if (in->dtype == CLS_F32)
                for (size_t e = 0; e < ne; e++) w.fill[e] = (double)(float)w.fill[e];
        } else if (o->impute == CLS_IMPUTE_MEDIAN) {
            st = medians_n(ctx, &din, o, o->clip ? w.L : NULL, o->clip ? w.H : NULL, NULL, w.fill,
                           sel_counts ? w.n0 : NULL, cb);
        } else if (o->impute == CLS_IMPUTE_MOST_FREQUENT) { /* never combined (the callers refuse it) */
            st = src ? modes_stream(ctx, &din, o, o->clip ? w.L : NULL, o->clip ? w.H : NULL, w.fill)
                     : modes(ctx, &vin, o, o->clip ? w.L : NULL, o->clip ? w.H : NULL, w.fill);
        } else if (o->impute == CLS_IMPUTE_CONSTANT) {
            for (size_t e = 0; e < ne; e++) w.fill[e] = o->fill;
        }
    }
    /* every failure so far went through the hooks (combined) */
    int agreed = st != CLS_OK;
    /* the last pass: clean (and scale) into out, and the mask (the one-pass
     * clip wrote them unless a scaler follows; nothing to write: no pass) */
    if (st == CLS_OK && !(fast && !p) && (out || vin.mask || p)) {
        unsigned fl = (o->has_sent ? CLS_CF_SENT : 0) | (o->clip ? CLS_CF_BOUNDS : 0) |
                      (o->clip && o->clamp ? CLS_CF_CLAMP : 0) | (o->impute != CLS_IMPUTE_NONE ? CLS_CF_FILL : 0) |
                      (vin.mask ? CLS_CF_MASK : 0) | (out ? 0 : CLS_CF_NOY) | (o->keep ? CLS_CF_KEEP : 0);
        for (size_t e = 0; e < ne; e++) {
            w.prm[e] = w.L[e];
            w.prm[ne + e] = w.H[e];
            w.prm[2 * ne + e] = w.fill[e];
            w.prm[3 * ne + e] = 0;
            w.prm[4 * ne + e] = 0;
            w.prm[5 * ne + e] = 1;
            w.prm[6 * ne + e] = 0;
        }
        double rlo = 0, rhi = 0;
        if (p) {
            cols = malloc(ne * sizeof *cols);
            if (!cols) st = cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory");
            else {
                fused_params(p, &vin, rows, o, &w, cols);
                fl |= CLS_CF_SCALE;
                if (p->clip && cls_scaler_get(p->scaler)->ranged) {
                    cls_scaler_opts so = cls_scaler_opts_of(p);
                    fl |= CLS_CF_RCLIP;
                    rlo = so.lo;
                    rhi = so.hi;
                }
            }
        }
        if (st == CLS_OK && G && Rg) st = apply(ctx, &din, fl, o->sent, w.prm, rlo, rhi);
    }
    if (st == CLS_OK && p && fitted) {
        cls_stats_info info;
        memset(&info, 0, sizeof info);
        info.scaler = p->scaler;
        info.scope = scope;
        cls_scaler_opts so = cls_scaler_opts_of(p);
        int ranged = cls_scaler_get(p->scaler)->ranged;
        info.lo = ranged ? so.lo : p->lo;
        info.hi = ranged ? so.hi : p->hi;
        info.clip = p->clip;
        info.dtype = in->dtype;
        info.groups = (size_t)G;
        info.cols = C;
        info.rows = rows;
        info.has_moments = 1;
        st = cls_stats_create(&info, cols, fitted);
        if (st != CLS_OK) st = cls_fail(ctx, st, "cleaning: the cleaned data's statistics did not check out");
    }
    /* the last pass's outcome, the same on every process; a failure that
     * a hook returned has already reached them all */
    if (cb && !agreed)
        st = cb->stats(cb->user, st, NULL, 0);
    if (st != CLS_OK && fitted && *fitted) {
        cls_stats_destroy(*fitted);
        *fitted = NULL;
    }
    if (st == CLS_OK) {
        *fused = p != NULL;
        for (size_t e = 0; e < ne; e++) {
            if (c->missing_out) c->missing_out[e] = rows - w.n0[e];
            if (c->clipped_out) c->clipped_out[e] = o->clip ? w.n0[e] - w.m.n[e] : 0;
            if (c->fill_out) c->fill_out[e] = w.fill[e];
            /* the bounds as the passes compared with them: values of the
             * data's type (the kernels take them as REAL) */
            double lo = o->clip ? w.L[e] : -INFINITY, hi = o->clip ? w.H[e] : INFINITY;
            if (c->lower_out) c->lower_out[e] = in->dtype == CLS_F32 ? (double)(float)lo : lo;
            if (c->upper_out) c->upper_out[e] = in->dtype == CLS_F32 ? (double)(float)hi : hi;
            /* the moments of the values kept (the last pass's: the kept set's) */
            if (c->mean_out) c->mean_out[e] = w.m.n[e] ? w.m.mean[e] : NAN;
            if (c->m2_out) c->m2_out[e] = w.m.n[e] ? w.m.m2[e] : NAN;
        }
        if (c->iterations_out) *c->iterations_out = iters;
    }
    free(cols);
    work_free(&w);
    return st;
}

/* flatten.c's clip of the residuals (cls_flatten_clip) */
static cls_status clip_mask(cls_context *ctx, cls_dtype t, const void *r, uint64_t G, uint64_t Rg, size_t C,
                            double sigma, uint8_t *mask)
{
    cls_clean k = {.sigma = sigma, .maxiters = 5, .mode = CLS_CLIP_KEEP, .mask_out = mask};
    copts o;
    cls_status st = resolve(ctx, &k, &o, 1);
    if (st != CLS_OK) return st;
    cls_array a = {.data = (void *)r, .dtype = t, .batch = (size_t)G, .rows = (size_t)Rg, .cols = C};
    int fused;
    /* no output: the values are kept as they are, the mask alone written */
    return clean_run(ctx, &k, &o, CLS_SCOPE_MATRIX, &a, NULL, NULL, NULL, &fused, NULL, NULL);
}

/* The cleaning alone, its options checked (o): its own passes where
 * `passes` (the route's clean_passes), through the engine's one pass where
 * `impute_fused` (the route's), then the trend and the smoothing by bins
 * over the cleaned values in out. */
static cls_status clean_alone(cls_context *ctx, int passes, int impute_fused, const cls_clean *c, const copts *o,
                              cls_scope scope, const cls_array *in, cls_array *out)
{
    int lc = cls_lc_active(c);
    uint64_t G = scope == CLS_SCOPE_BATCH ? 1 : in->batch;
    uint64_t Rg = scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
    if (lc && !passes)
        return cls_flatten_run(ctx, c, clip_mask, in->dtype, in->data, out->data, G, Rg, in->cols);
    /* values written as read, in place: nothing to write */
    if (o->keep && out && out->data == in->data && !lc) out = NULL;
    cls_status st;
    /* imputation alone by the mean or a constant: the engine's one pass
     * (the cleaning stage's two passes took 3.4-5.5x a scaler pass) */
    cls_pipeline alone = {.scaler = CLS_NONE, .scope = scope, .clean = c};
    int fused;
    if (out && impute_fused) st = cls_impute_fused(ctx, &alone, in, out, NULL);
    else st = clean_run(ctx, c, o, scope, in, out, NULL, NULL, &fused, NULL, NULL);
    /* clipping, then the trend, then the bins (over the cleaned values, in out) */
    if (st == CLS_OK && lc)
        st = cls_flatten_run(ctx, c, clip_mask, in->dtype, out->data, out->data, G, Rg, in->cols);
    return st;
}

cls_status cls_host_clean(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                          const cls_array *in, cls_array *out)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    if (!c) return cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: NULL cleaning options");
    if ((unsigned)scope > CLS_SCOPE_BATCH) return cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: unknown scope");
    /* out NULL: the mask and the per-column outputs alone */
    cls_status st = check_arrays(ctx, in, out ? out : in, 0, scope);
    copts o;
    if (st == CLS_OK) st = resolve(ctx, c, &o, 1);
    /* the light curves' checks too before any pass: bad options leave out as it was */
    if (st != CLS_OK) return st;
    int lc = cls_lc_active(c);
    uint64_t Rg = scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
    if (lc) st = cls_check_curves(ctx, c, Rg, 0);
    if (st == CLS_OK && lc && !out)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: a trend or bins write the data: out may not be NULL");
    if (st != CLS_OK) return st;
    return clean_alone(ctx, r->clean_passes, r->impute_fused, c, &o, scope, in, out);
}

/* Bins reduced, the call checked (o: its options): the cleaning and
 * trend first where they run, into a copy (in is only read). */
static cls_status bin_run(cls_context *ctx, const cls_route *r, const cls_clean *c, const copts *o, cls_scope scope,
                          const cls_array *in, cls_array *out)
{
    uint64_t G = scope == CLS_SCOPE_BATCH ? 1 : in->batch;
    uint64_t Rg = scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
    size_t es = in->dtype == CLS_F64 ? 8 : 4, ib = in->batch * in->rows * in->cols * es;
    if (!r->clean_passes && c->detrend == CLS_DETREND_NONE)
        return cls_lc_reduce(ctx, c, in->dtype, in->data, out->data, G, Rg, in->cols);
    cls_array tmp = *in;
    tmp.data = malloc(ib ? ib : 1);
    if (!tmp.data) return cls_fail(ctx, CLS_E_NOMEM, "bins reduced: out of memory for a copy of %zu bytes", ib);
    cls_clean pre = *c;
    pre.bin_rows = 0;
    pre.bin_stat = CLS_BIN_NONE;
    /* pre's options are c's */
    cls_status st = clean_alone(ctx, r->clean_passes, r->impute_fused, &pre, o, scope, in, &tmp);
    if (st == CLS_OK) st = cls_lc_reduce(ctx, c, in->dtype, tmp.data, out->data, G, Rg, in->cols);
    free(tmp.data);
    return st;
}

cls_status cls_host_bin(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                        const cls_array *in, cls_array *out)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    if (!c) return cls_fail(ctx, CLS_E_ARG, "bins reduced: NULL cleaning options");
    if ((unsigned)scope > CLS_SCOPE_BATCH) return cls_fail(ctx, CLS_E_ARG, "bins reduced: unknown scope");
    if (!out) return cls_fail(ctx, CLS_E_ARG, "bins reduced: NULL output array");
    cls_status st = check_arrays(ctx, in, in, 0, scope);
    copts o;
    if (st == CLS_OK) st = resolve(ctx, c, &o, 1);
    if (st != CLS_OK) return st;
    uint64_t G = scope == CLS_SCOPE_BATCH ? 1 : in->batch;
    uint64_t Rg = scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
    st = cls_check_curves(ctx, c, Rg, 1);
    if (st != CLS_OK) return st;
    if (c->mask_out) return cls_fail(ctx, CLS_E_ARG, "bins reduced: no mask_out (the rows change; "
                                     "cls_fit_transform writes the mask)");
    uint64_t nb = (Rg + c->bin_rows - 1) / c->bin_rows;
    if (!out->data || out->dtype != in->dtype || out->batch != G || out->rows != nb || out->cols != in->cols)
        return cls_fail(ctx, CLS_E_ARG, "bins reduced: out must be %llu x %llu x %zu of in's dtype (one row per "
                        "bin of %u rows)", (unsigned long long)G, (unsigned long long)nb, in->cols, c->bin_rows);
    const char *a = in->data, *b = out->data;
    size_t es = in->dtype == CLS_F64 ? 8 : 4, ib = in->batch * in->rows * in->cols * es;
    size_t ob = (size_t)(G * nb) * in->cols * es;
    if (a < b + ob && b < a + ib) return cls_fail(ctx, CLS_E_ARG, "bins reduced: out overlaps in");
    return bin_run(ctx, r, c, &o, scope, in, out);
}

/* The checks of the combined calls; a failure reaches every process
 * through the hook (once, as no pass ran). */
static cls_status check_combined(cls_context *ctx, const cls_clean *c, cls_scope scope, const cls_array *in,
                                 const cls_array *out, const cls_combine *cb, copts *o)
{
    cls_status st = CLS_OK;
    if (!ctx) st = CLS_E_ARG;
    else if (!ctx->usable) st = cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    else if (!cb->stats)
        st = cls_fail(ctx, CLS_E_ARG, "cleaning across processes: the combine hook has no stats function");
    else if (!c) st = cls_fail(ctx, CLS_E_ARG, "cleaning across processes: NULL cleaning options");
    else if ((unsigned)scope > CLS_SCOPE_BATCH) st = cls_fail(ctx, CLS_E_ARG, "cleaning: unknown scope");
    if (st == CLS_OK) st = check_arrays(ctx, in, out, 1, scope);
    if (st == CLS_OK) st = resolve(ctx, c, o, 0);
    if (st == CLS_OK && o->impute == CLS_IMPUTE_MOST_FREQUENT)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "cleaning across processes: most_frequent imputation needs every "
                      "value of a column in one process (counts do not give it); use mean, median or constant");
    if (st == CLS_OK) return st;
    return cb->stats ? cb->stats(cb->user, st, NULL, 0) : cb->fn(cb->user, st, NULL, 0);
}

cls_status cls_host_clean_combined(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                                   const cls_array *in, cls_array *out, const cls_combine *combine)
{
    if (!combine || !combine->fn) return cls_host_clean(ctx, r, c, scope, in, out);
    copts o;
    cls_status st = check_combined(ctx, c, scope, in, out, combine, &o);
    if (st != CLS_OK) return st;
    int fused;
    return clean_run(ctx, c, &o, scope, in, out, NULL, NULL, &fused, NULL, combine);
}

cls_status cls_host_fit_transform_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                           const cls_array *in, cls_array *out, const cls_combine *combine,
                                           cls_stats **fitted)
{
    if (!combine || !combine->fn) return cls_host_fit_transform(ctx, p, r, in, out, fitted);
    if (fitted) *fitted = NULL;
    copts o;
    cls_status st = CLS_OK;
    if (!p) {
        st = ctx ? cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: NULL pipeline") : CLS_E_ARG;
        return combine->stats ? combine->stats(combine->user, st, NULL, 0) : combine->fn(combine->user, st, NULL, 0);
    }
    /* no cleaning stage: the planner's fit across processes, each its own transform */
    if (!r->cleans) return cls_host_fit_transform_across(ctx, p, in, out, fitted);
    st = check_combined(ctx, p->clean, p->scope, in, out, combine, &o);
    if (st != CLS_OK) return st;
    int fused = 0;
    if (r->fuses) return clean_run(ctx, p->clean, &o, p->scope, in, out, NULL, p, &fused, fitted, combine);
    /* the scaler (factors, statistics) after the cleaning, over its output, as
     * one process runs it: the cleaning across processes writes out, then the
     * rest is fitted across them and applied to out in place */
    st = clean_run(ctx, p->clean, &o, p->scope, in, out, NULL, NULL, &fused, NULL, combine);
    if (st != CLS_OK || (p->scaler == CLS_NONE && !p->factors && !fitted)) return st;
    cls_pipeline rest = *p;
    rest.clean = NULL;
    return cls_host_fit_transform_across(ctx, &rest, out, out, fitted);
}

/* A fit-transform with a cleaning stage, the call checked (o: the
 * options of its cleaning's passes): light curves, the cleaning stage
 * whole (cleaning, trend, bins) into out, then the scaler over it in
 * place; else the cleaning's passes (the scaler fused into the last where
 * the route says), or the engine's one pass, then what did not fuse. */
static cls_status fit_transform_run(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const copts *o,
                                    const cls_array *in, cls_array *out, cls_stats **fitted)
{
    cls_pipeline rest = *p;
    rest.clean = NULL;
    cls_status st;
    if (cls_lc_active(p->clean)) {
        st = clean_alone(ctx, r->clean_passes, r->impute_fused_alone, p->clean, o, p->scope, in, out);
        if (st != CLS_OK) return st;
        return cls_do_fit_transform(ctx, &rest, out, out, NULL, fitted);
    }
    /* imputation alone ahead of a one-pass scaler: the engine's one pass */
    if (r->impute_fused) return cls_impute_fused(ctx, p, in, out, fitted);
    int fused = 0;
    st = clean_run(ctx, p->clean, o, p->scope, in, out, NULL, r->fuses ? p : NULL, &fused, fitted, NULL);
    if (st != CLS_OK || fused || (p->scaler == CLS_NONE && !p->factors && !fitted)) return st;
    /* the rest of the pipeline over the cleaned data, in place */
    return cls_do_fit_transform(ctx, &rest, out, out, NULL, fitted);
}

cls_status cls_host_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *in,
                                  cls_array *out, cls_stats **fitted)
{
    if (!p || !r->cleans) return cls_fit_transform_plain(ctx, p, in, out, fitted);
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    if (fitted) *fitted = NULL;
    if (p->inverse)
        return cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: inverse needs fitted statistics; use cls_transform");
    if ((unsigned)p->scope > CLS_SCOPE_BATCH) return cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: unknown scope");
    if (p->scaler != CLS_NONE && !cls_scaler_get(p->scaler))
        return cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: unknown scaler %d", (int)p->scaler);
    cls_status st = check_arrays(ctx, in, out, 0, p->scope);
    int lc = cls_lc_active(p->clean);
    cls_clean plain;
    copts o;
    if (st == CLS_OK) st = resolve(ctx, cls_lc_strip(p->clean, &plain), &o, 0);
    /* every option of both stages checked once, before any pass writes
     * out: the light curves', the scaler's, the factors' */
    cls_pipeline rest = *p;
    rest.clean = NULL;
    uint64_t Rg = p->scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
    if (st == CLS_OK) st = cls_check_fit_transform(ctx, &rest, lc ? p->clean : NULL, Rg, in, out);
    if (st != CLS_OK) return st;
    return fit_transform_run(ctx, p, r, &o, in, out, fitted);
}

/* ---- a file's chunks (api/stream.c): the call checked at its door ---- */

cls_status cls_chunk_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *in,
                                   cls_array *out, cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    if (!r->cleans) return cls_do_fit_transform(ctx, p, in, out, NULL, fitted);
    cls_clean plain;
    copts o;
    opts_of(cls_lc_strip(p->clean, &plain), &o);
    return fit_transform_run(ctx, p, r, &o, in, out, fitted);
}

cls_status cls_chunk_clean(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                           const cls_array *in, cls_array *out)
{
    copts o;
    opts_of(c, &o);
    return clean_alone(ctx, r->clean_passes, r->impute_fused, c, &o, scope, in, out);
}

cls_status cls_chunk_bin(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                         const cls_array *in, cls_array *out)
{
    copts o;
    opts_of(c, &o);
    return bin_run(ctx, r, c, &o, scope, in, out);
}

/* Streamed, alone or across processes (cb, both hooks set). */
static cls_status clean_stream(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *shape,
                               const cls_csource *src, const cls_combine *cb, cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    copts o;
    /* cleaning alone (no scaler, factors or statistics; one process) writes
     * its data only, as cls_host_clean: a mask too (each chunk's put in
     * place by the source, clean_stream.h) */
    int alone = !cb && p->scaler == CLS_NONE && !p->factors && !fitted;
    cls_status st = p->clean ? CLS_OK : cls_fail(ctx, CLS_E_ARG, "cleaning: no cleaning stage");
    /* one process: the file's call checked its options at its door
     * (cls_check_clean_opts); across processes they are checked here,
     * every process told */
    if (st == CLS_OK && cb) st = resolve(ctx, p->clean, &o, alone);
    else if (st == CLS_OK) opts_of(p->clean, &o);
    int can_fuse = st == CLS_OK && r->fusable;
    if (st == CLS_OK && cb && o.impute == CLS_IMPUTE_MOST_FREQUENT)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "cleaning streamed across processes: most_frequent imputation needs "
                      "every value of a column in one process (counts do not give it); use mean, median or constant");
    else if (st == CLS_OK && cb && p->scaler != CLS_NONE && !can_fuse)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "cleaning streamed across processes: the scaler does not fuse with "
                      "the cleaning (its statistics need exact quantiles, or the pipeline has discount factors "
                      "or clamps its clipping ahead of the scaler)");
    else if (st == CLS_OK && !r->clean_streams)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "cleaning streamed in chunks: the scaler does not fuse with the "
                      "cleaning (robust scaling, discount factors, or clamped clipping ahead of a scaler)");
    if (st != CLS_OK) return cb ? cb->stats(cb->user, st, NULL, 0) : st;
    cls_array in = *shape, out = *shape;
    in.data = out.data = NULL;
    int fused = 0;
    /* across processes, cleaning alone runs as cls_fit_transform does */
    const cls_pipeline *fp = can_fuse && !(cb && p->scaler == CLS_NONE) ? p : NULL;
    return clean_run(ctx, p->clean, &o, p->scope, &in, &out, src, fp, &fused, fp ? fitted : NULL, cb);
}

cls_status cls_clean_stream(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *shape,
                            const cls_csource *src, cls_stats **fitted)
{
    return clean_stream(ctx, p, r, shape, src, NULL, fitted);
}

cls_status cls_clean_stream_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                     const cls_array *shape, const cls_csource *src, const cls_combine *cb,
                                     cls_stats **fitted)
{
    if (!cb->stats) {
        cls_status st = cls_fail(ctx, CLS_E_ARG, "cleaning across processes: the combine hook has no stats function");
        return cb->fn(cb->user, st, NULL, 0);
    }
    return clean_stream(ctx, p, r, shape, src, cb, fitted);
}
