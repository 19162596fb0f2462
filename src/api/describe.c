/* cls_describe: the data summary (clscale.h). Moments by cls_fit, the
 * median and quartiles by cls_select (the quantiles' passes), then two
 * passes of cl/describe.cl over units of rows that every device pulls: the
 * outliers at k sigma per column, and a hash of every row. Rows whose
 * hashes are equal are compared exactly on the host
 * (stats/duplicates.c). The data is only read.
 * Calls: passes.c, select.c, pipeline (cls_fit), stats/. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/describe.h"
#include "api/entries.h"
#include "engine/passes.h"
#include "quantiles/select.h"
#include "stats/duplicates.h"
#include "stats/quantile.h"

#define OUT_CHUNK 1024u     /* rows per work-item of the outlier pass */
#define HASH_BLOCK 4096u    /* columns per work-item of the hash pass */
#define UNIT_BYTES (32u << 20)

typedef struct desc {
    cls_qview        v;
    size_t           es;
    uint64_t         unit_rows;   /* rows per unit (both passes) */
    uint64_t         parts;       /* units per group (outliers) */
    void            *mean, *thr;  /* per entry, in the data's dtype */
    uint64_t        *outliers;    /* per entry: added to */
    uint64_t        *hash;        /* per row of the view */
    pthread_mutex_t  lock;
} desc;

static void release(cl_mem *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i]) clReleaseMemObject(m[i]);
}

static cls_status outlier_unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    desc *s = user;
    const cls_qview *v = &s->v;
    size_t C = v->C;
    uint64_t g = u / s->parts, r0 = (u % s->parts) * s->unit_rows;
    uint64_t rows = v->Rg - r0 < s->unit_rows ? v->Rg - r0 : s->unit_rows;
    unsigned chunk = (unsigned)(rows < OUT_CHUNK ? rows : OUT_CHUNK);
    size_t nchunks = (size_t)((rows + chunk - 1) / chunk);
    cl_mem m[4] = {0};
    uint32_t *cnt = malloc(nchunks * C * 4);
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK};
    size_t local = 0;
    cls_status st = cnt ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK) st = cls_kernel_get(ctx, d, CLS_K_OUTLIERS, v->dtype, 0, &a.k, &local, NULL);
    if (st == CLS_OK)
        st = cls_pass_input(ctx, d, v->x + (size_t)(g * v->Rg + r0) * C * s->es, (size_t)rows * C * s->es, &m[0]);
    if (st == CLS_OK)
        st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, C * s->es, (const char *)s->mean + g * C * s->es, &m[1]);
    if (st == CLS_OK)
        st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, C * s->es, (const char *)s->thr + g * C * s->es, &m[2]);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_WRITE_ONLY, nchunks * C * 4, NULL, &m[3]);
    if (st == CLS_OK) {
        cls_karg_mem(&a, m[0]);
        cls_karg_u32(&a, C);
        cls_karg_u64(&a, rows);
        cls_karg_u64(&a, C);
        cls_karg_u32(&a, chunk);
        cls_karg_u64(&a, 0);
        cls_karg_mem(&a, m[1]);
        cls_karg_mem(&a, m[2]);
        cls_karg_mem(&a, m[3]);
        st = cls_pass_launch(&a, local, C, nchunks);
    }
    if (st == CLS_OK) {
        cl_int e = clEnqueueReadBuffer(d->q[0], m[3], CL_TRUE, 0, nchunks * C * 4, cnt, 0, NULL, NULL);
        if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clEnqueueReadBuffer", e);
    }
    if (st == CLS_OK) {
        uint64_t *col = s->outliers + g * C;
        pthread_mutex_lock(&s->lock);
        for (size_t j = 0; j < nchunks; j++)
            for (size_t c = 0; c < C; c++) col[c] += cnt[j * C + c];
        pthread_mutex_unlock(&s->lock);
    }
    release(m, 4);
    free(cnt);
    return st;
}

static cls_status hash_unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    desc *s = user;
    const cls_qview *v = &s->v;
    size_t C = v->C;
    uint64_t total = v->G * v->Rg, r0 = u * s->unit_rows;
    uint64_t rows = total - r0 < s->unit_rows ? total - r0 : s->unit_rows;
    unsigned nblocks = (unsigned)((C + HASH_BLOCK - 1) / HASH_BLOCK);
    cl_mem m[2] = {0};
    uint64_t *h = malloc((size_t)rows * nblocks * 8);
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK};
    size_t local = 0;
    cls_status st = h ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK) st = cls_kernel_get(ctx, d, CLS_K_ROW_HASH, v->dtype, 0, &a.k, &local, NULL);
    if (st == CLS_OK) st = cls_pass_input(ctx, d, v->x + (size_t)r0 * C * s->es, (size_t)rows * C * s->es, &m[0]);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_WRITE_ONLY, (size_t)rows * nblocks * 8, NULL, &m[1]);
    if (st == CLS_OK) {
        cls_karg_mem(&a, m[0]);
        cls_karg_u64(&a, rows);
        cls_karg_u64(&a, C);
        cls_karg_u32(&a, HASH_BLOCK);
        cls_karg_u32(&a, nblocks);
        cls_karg_mem(&a, m[1]);
        st = cls_pass_launch(&a, local, (size_t)rows, nblocks);
    }
    if (st == CLS_OK) {
        cl_int e = clEnqueueReadBuffer(d->q[0], m[1], CL_TRUE, 0, (size_t)rows * nblocks * 8, h, 0, NULL, NULL);
        if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clEnqueueReadBuffer", e);
    }
    if (st == CLS_OK)
        for (uint64_t r = 0; r < rows; r++) /* each unit owns its rows: no lock */
            s->hash[r0 + r] = cls_fnv1a64(CLS_FNV_SEED, h + r * nblocks, (size_t)nblocks * 8);
    release(m, 2);
    free(h);
    return st;
}

/* Ranks of q25, the median and q75 (low and high each). */
static void describe_ranks(void *user, uint64_t n, uint64_t *r)
{
    (void)user;
    double gamma;
    cls_quantile_ranks(0.25, n, &r[0], &r[1], &gamma);
    cls_median_ranks(n, &r[2], &r[3]);
    cls_quantile_ranks(0.75, n, &r[4], &r[5], &gamma);
}

static void *to_real(const double *a, size_t n, cls_dtype t)
{
    void *r = malloc((n ? n : 1) * (t == CLS_F64 ? 8 : 4));
    if (!r) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (t == CLS_F64) ((double *)r)[i] = a[i];
        else ((float *)r)[i] = (float)a[i];
    }
    return r;
}

static void desc_init(desc *d, const cls_qview *v)
{
    memset(d, 0, sizeof *d);
    d->v = *v;
    d->es = v->dtype == CLS_F64 ? 8 : 4;
    d->unit_rows = UNIT_BYTES / (v->C * d->es);
    if (!d->unit_rows) d->unit_rows = 1;
    d->parts = (d->v.Rg + d->unit_rows - 1) / d->unit_rows;
}

cls_status cls_describe_outliers(cls_context *ctx, const cls_qview *v, const double *mean, const double *thr,
                                 uint64_t *outliers)
{
    if (!v->G || !v->Rg || !v->C) return CLS_OK;
    desc d;
    desc_init(&d, v);
    size_t n = (size_t)v->G * v->C;
    d.mean = to_real(mean, n, v->dtype);
    d.thr = to_real(thr, n, v->dtype);
    d.outliers = outliers;
    cls_status st = d.mean && d.thr ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    pthread_mutex_init(&d.lock, NULL);
    if (st == CLS_OK) st = cls_passes_run(ctx, v->dtype, (size_t)(d.v.G * d.parts), outlier_unit, &d);
    pthread_mutex_destroy(&d.lock);
    free(d.mean);
    free(d.thr);
    return st;
}

cls_status cls_describe_hashes(cls_context *ctx, const cls_qview *v, uint64_t *hash)
{
    uint64_t total = v->G * v->Rg;
    if (!total || !v->C) return CLS_OK;
    desc d;
    desc_init(&d, v);
    d.hash = hash;
    return cls_passes_run(ctx, v->dtype, (size_t)((total + d.unit_rows - 1) / d.unit_rows), hash_unit, &d);
}

void cls_describe_ranks(void *user, uint64_t n, uint64_t *r) { describe_ranks(user, n, r); }

void cls_describe_quartiles(cls_column_summary *c, uint64_t n, const double *pv, cls_dtype t)
{
    c->median = c->q25 = c->q75 = NAN;
    if (!n) return;
    uint64_t lo, hi;
    double gamma;
    cls_quantile_ranks(0.25, n, &lo, &hi, &gamma);
    c->q25 = lo == hi ? pv[0] : cls_quantile_lerp(pv[0], pv[1], gamma, t);
    c->median = cls_median_of(pv[2], pv[3], n, t);
    cls_quantile_ranks(0.75, n, &lo, &hi, &gamma);
    c->q75 = lo == hi ? pv[4] : cls_quantile_lerp(pv[4], pv[5], gamma, t);
}

void cls_describe_moments(cls_column_summary *c, const cls_column_stats *cs, double sigma, double *mean, double *thr)
{
    c->count = cs->count;
    c->missing = cs->missing;
    c->min = c->count ? cs->min : NAN;
    c->max = c->count ? cs->max : NAN;
    c->mean = c->count ? cs->mean : NAN;
    c->std = c->count ? sqrt(cs->m2 / (double)c->count) : NAN;
    c->median = c->q25 = c->q75 = NAN;
    c->outliers = 0;
    *mean = c->mean;
    *thr = sigma * c->std;
}

static cls_status summarise(cls_context *ctx, const cls_array *x, const cls_qview *v, cls_summary *s, double sigma,
                            int duplicates)
{
    size_t n = s->groups * s->cols;
    cls_pipeline p;
    memset(&p, 0, sizeof p);
    p.scaler = CLS_NONE;
    p.scope = s->scope;
    cls_stats *fitted = NULL;
    cls_status st = cls_host_fit(ctx, &p, x, &fitted);
    if (st != CLS_OK) return st;
    const cls_column_stats *cs = cls_stats_columns(fitted);
    double *mean = malloc(n * sizeof *mean), *thr = malloc(n * sizeof *thr);
    uint64_t *cnt = malloc(n * sizeof *cnt), *outl = calloc(n ? n : 1, sizeof *outl), *hash = NULL;
    double *vals = malloc(n * 6 * sizeof *vals);
    if (!mean || !thr || !cnt || !vals || !outl) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    for (size_t e = 0; st == CLS_OK && e < n; e++) cls_describe_moments(&s->columns[e], &cs[e], sigma, &mean[e], &thr[e]);
    cls_stats_destroy(fitted);
    if (st == CLS_OK) st = cls_select(ctx, v, NULL, 6, describe_ranks, NULL, cnt, vals);
    for (size_t e = 0; st == CLS_OK && e < n; e++) cls_describe_quartiles(&s->columns[e], cnt[e], vals + e * 6, x->dtype);
    if (st == CLS_OK) st = cls_describe_outliers(ctx, v, mean, thr, outl);
    for (size_t e = 0; st == CLS_OK && e < n; e++) s->columns[e].outliers = outl[e];
    uint64_t total = v->G * v->Rg;
    size_t es = x->dtype == CLS_F64 ? 8 : 4;
    if (st == CLS_OK && duplicates) {
        hash = malloc((size_t)total * sizeof *hash);
        if (!hash) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK && duplicates) st = cls_describe_hashes(ctx, v, hash);
    for (size_t g = 0; st == CLS_OK && duplicates && g < s->groups; g++) {
        const char *rows = v->x + (size_t)(g * v->Rg) * v->C * es;
        if (cls_count_duplicate_rows(rows, x->dtype, v->Rg, v->C, hash + g * v->Rg, &s->duplicate_rows[g]) != CLS_OK)
            st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    free(mean);
    free(thr);
    free(cnt);
    free(vals);
    free(outl);
    free(hash);
    return st;
}

cls_status cls_host_describe(cls_context *ctx, const cls_array *x, cls_scope scope, double sigma, cls_summary *out)
{
    if (!x->data) return cls_fail(ctx, CLS_E_ARG, "cls_describe: NULL argument");
    if (x->dtype != CLS_F32 && x->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "cls_describe: dtype %d is neither CLS_F32 nor CLS_F64", (int)x->dtype);
    if (!x->batch || !x->rows || !x->cols)
        return cls_fail(ctx, CLS_E_ARG, "cls_describe: shape %zu x %zu x %zu has a zero dimension", x->batch,
                        x->rows, x->cols);
    cls_qview v = {x->data, x->dtype, scope == CLS_SCOPE_BATCH ? 1 : x->batch,
                   scope == CLS_SCOPE_BATCH ? (uint64_t)x->batch * x->rows : x->rows, x->cols};
    /* the summary is built aside and copied to the caller's arrays only
     * when every pass succeeded: a failed call leaves them as they were */
    cls_summary s = {.dtype = x->dtype, .scope = scope, .groups = (size_t)v.G, .rows = v.Rg,
                     .cols = x->cols, .sigma = sigma};
    s.columns = calloc(s.groups * s.cols, sizeof *s.columns);
    s.duplicate_rows = calloc(s.groups, sizeof *s.duplicate_rows);
    cls_status st = s.columns && s.duplicate_rows ? summarise(ctx, x, &v, &s, sigma, out->duplicate_rows != NULL)
                                                  : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK) cls_summary_put(out, &s);
    free(s.columns);
    free(s.duplicate_rows);
    return st;
}

void cls_summary_put(cls_summary *out, const cls_summary *s)
{
    memcpy(out->columns, s->columns, s->groups * s->cols * sizeof *s->columns);
    if (out->duplicate_rows) memcpy(out->duplicate_rows, s->duplicate_rows, s->groups * sizeof *s->duplicate_rows);
    out->dtype = s->dtype;
    out->scope = s->scope;
    out->groups = s->groups;
    out->rows = s->rows;
    out->cols = s->cols;
    out->sigma = s->sigma;
}
