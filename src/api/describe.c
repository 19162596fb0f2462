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

#include "engine/passes.h"
#include "quantiles/select.h"
#include "stats/duplicates.h"
#include "stats/quantile.h"

#define OUT_CHUNK 1024u     /* rows per work-item of the outlier pass */
#define HASH_BLOCK 4096u    /* columns per work-item of the hash pass */
#define UNIT_BYTES (32u << 20)

typedef struct desc {
    const cls_array *x;
    cls_qview        v;
    size_t           es;
    uint64_t         unit_rows;   /* rows per unit (both passes) */
    uint64_t         parts;       /* units per group (outliers) */
    void            *mean, *thr;  /* per entry, in the data's dtype */
    cls_summary     *s;
    uint64_t        *hash;        /* per row of the whole array */
    int              duplicates;  /* the caller asked for the duplicate rows */
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
        cls_column_summary *col = s->s->columns + g * C;
        pthread_mutex_lock(&s->lock);
        for (size_t j = 0; j < nchunks; j++)
            for (size_t c = 0; c < C; c++) col[c].outliers += cnt[j * C + c];
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

static cls_status summarise(cls_context *ctx, desc *d, double sigma)
{
    const cls_array *x = d->x;
    cls_summary *s = d->s;
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
    uint64_t *cnt = malloc(n * sizeof *cnt);
    double *vals = malloc(n * 6 * sizeof *vals);
    if (!mean || !thr || !cnt || !vals) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    for (size_t e = 0; st == CLS_OK && e < n; e++) {
        cls_column_summary *c = &s->columns[e];
        c->count = cs[e].count;
        c->missing = cs[e].missing;
        c->min = c->count ? cs[e].min : NAN;
        c->max = c->count ? cs[e].max : NAN;
        c->mean = c->count ? cs[e].mean : NAN;
        c->std = c->count ? sqrt(cs[e].m2 / (double)c->count) : NAN;
        c->median = c->q25 = c->q75 = NAN;
        c->outliers = 0;
        mean[e] = c->mean;
        thr[e] = sigma * c->std;
    }
    cls_stats_destroy(fitted);
    if (st == CLS_OK) st = cls_select(ctx, &d->v, NULL, 6, describe_ranks, NULL, cnt, vals);
    for (size_t e = 0; st == CLS_OK && e < n; e++) {
        if (!cnt[e]) continue;
        cls_column_summary *c = &s->columns[e];
        const double *pv = vals + e * 6;
        uint64_t lo, hi;
        double gamma;
        cls_quantile_ranks(0.25, cnt[e], &lo, &hi, &gamma);
        c->q25 = lo == hi ? pv[0] : cls_quantile_lerp(pv[0], pv[1], gamma, x->dtype);
        c->median = cls_median_of(pv[2], pv[3], cnt[e], x->dtype);
        cls_quantile_ranks(0.75, cnt[e], &lo, &hi, &gamma);
        c->q75 = lo == hi ? pv[4] : cls_quantile_lerp(pv[4], pv[5], gamma, x->dtype);
    }
    if (st == CLS_OK) {
        d->mean = to_real(mean, n, x->dtype);
        d->thr = to_real(thr, n, x->dtype);
        if (!d->mean || !d->thr) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK) st = cls_passes_run(ctx, x->dtype, (size_t)(d->v.G * d->parts), outlier_unit, d);
    uint64_t total = d->v.G * d->v.Rg;
    if (st == CLS_OK && d->duplicates) {
        d->hash = malloc((size_t)total * sizeof *d->hash);
        if (!d->hash) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK && d->duplicates)
        st = cls_passes_run(ctx, x->dtype, (size_t)((total + d->unit_rows - 1) / d->unit_rows), hash_unit, d);
    for (size_t g = 0; st == CLS_OK && d->duplicates && g < s->groups; g++) {
        const char *rows = d->v.x + (size_t)(g * d->v.Rg) * d->v.C * d->es;
        if (cls_count_duplicate_rows(rows, x->dtype, d->v.Rg, d->v.C, d->hash + g * d->v.Rg,
                                     &s->duplicate_rows[g]) != CLS_OK)
            st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    free(mean);
    free(thr);
    free(cnt);
    free(vals);
    return st;
}

cls_status cls_describe(cls_context *ctx, const cls_array *x, cls_scope scope, double sigma, cls_summary *out)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    if (!x || !x->data || !out || !out->columns) return cls_fail(ctx, CLS_E_ARG, "cls_describe: NULL argument");
    if (x->dtype != CLS_F32 && x->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "cls_describe: dtype %d is neither CLS_F32 nor CLS_F64", (int)x->dtype);
    if (!x->batch || !x->rows || !x->cols)
        return cls_fail(ctx, CLS_E_ARG, "cls_describe: shape %zu x %zu x %zu has a zero dimension", x->batch,
                        x->rows, x->cols);
    if ((unsigned)scope > CLS_SCOPE_BATCH) return cls_fail(ctx, CLS_E_ARG, "cls_describe: unknown scope %d", (int)scope);
    if (sigma == 0) sigma = 3;
    if (!(sigma > 0) || !isfinite(sigma))
        return cls_fail(ctx, CLS_E_ARG, "cls_describe: sigma %g must be a finite number above 0", sigma);
    desc d;
    memset(&d, 0, sizeof d);
    d.x = x;
    d.es = x->dtype == CLS_F64 ? 8 : 4;
    d.v = (cls_qview){x->data, x->dtype, scope == CLS_SCOPE_BATCH ? 1 : x->batch,
                      scope == CLS_SCOPE_BATCH ? (uint64_t)x->batch * x->rows : x->rows, x->cols};
    d.unit_rows = UNIT_BYTES / (x->cols * d.es);
    if (!d.unit_rows) d.unit_rows = 1;
    d.parts = (d.v.Rg + d.unit_rows - 1) / d.unit_rows;
    /* the summary is built aside and copied to the caller's arrays only
     * when every pass succeeded: a failed call leaves them as they were */
    cls_summary s = {.dtype = x->dtype, .scope = scope, .groups = (size_t)d.v.G, .rows = d.v.Rg,
                     .cols = x->cols, .sigma = sigma};
    s.columns = calloc(s.groups * s.cols, sizeof *s.columns);
    s.duplicate_rows = calloc(s.groups, sizeof *s.duplicate_rows);
    if (!s.columns || !s.duplicate_rows) {
        free(s.columns);
        free(s.duplicate_rows);
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    d.s = &s;
    d.duplicates = out->duplicate_rows != NULL;
    pthread_mutex_init(&d.lock, NULL);
    cls_status st = summarise(ctx, &d, sigma);
    pthread_mutex_destroy(&d.lock);
    free(d.mean);
    free(d.thr);
    free(d.hash);
    if (st == CLS_OK) {
        memcpy(out->columns, s.columns, s.groups * s.cols * sizeof *s.columns);
        if (out->duplicate_rows) memcpy(out->duplicate_rows, s.duplicate_rows, s.groups * sizeof *s.duplicate_rows);
        out->dtype = s.dtype;
        out->scope = s.scope;
        out->groups = s.groups;
        out->rows = s.rows;
        out->cols = s.cols;
        out->sigma = s.sigma;
    }
    free(s.columns);
    free(s.duplicate_rows);
    return st;
}
