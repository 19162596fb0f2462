/* Exact order statistics by counting on the devices (select.h), and the
 * public cls_quantiles.
 * Short columns (a group of at most CLS_QSMALL rows): one pass, each
 * work-item sorting its column's keys in private memory, by a sorting
 * network unrolled at compile time for up to 32 or 64 rows (cl/quantile.cl
 * qsort32, qsort64), else by counting ranks (qselect_small). Longer ones: radix select. Pass 0 counts the top 8 bits
 * of every value's key per column (which also gives n, hence the ranks);
 * each later pass counts the next 8 bits of the values whose higher bits
 * match each wanted rank's prefix so far; after the last pass the prefix is
 * the whole key, so the value is exact. Every count is exact: nothing is
 * sorted on the host and nothing is estimated.
 * Several processes (cls_quantiles): every group takes the radix
 * passes, and the caller's hook sums each pass's histograms over the
 * processes before the digits are settled, so all settle the same digits.
 * Calls: passes.c (the units on the devices), stats/quantile.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantiles/gather.h"
#include "quantiles/entries.h"
#include "quantiles/window.h"
#include "engine/passes.h"
#include "quantiles/regime.h"
#include "quantiles/select.h"
#include "stats/quantile.h"
#include "util/table.h"

/* The values a streamed selection's gather may copy out (8 bytes each):
 * resident memory on top of the stream's pool. */
#define CLS_GATHER_STREAM_BYTES ((size_t)16 << 20)

typedef struct sel {
    const cls_qview   *v;
    const cls_qfilter *f;
    const cls_combine *comb;    /* several processes' counts summed, or NULL */
    size_t   es, nk;
    unsigned qflags;
    void    *cen, *flo, *fhi;   /* the filter in the data's dtype, or NULL */
    uint64_t *count;
    double  *vals;
    cls_qtake_fn take;          /* small path: the results to take (cls_select_small), or NULL */
    void    *take_user;
    pthread_mutex_t lock;
    /* small and sort paths */
    uint32_t *rank_tab;         /* small path: (Rg + 1) * nk */
    uint64_t gpu;               /* groups per unit */
    cls_sort_scratch *scr;      /* sort path: its scratch (cls_sort_scratch_new) */
    cls_rank_fn rank;           /* sort path: the ranks of a count */
    void    *rank_user;
    /* radix path */
    size_t   W, nseg, parts;    /* columns per segment, segments of the wave, row parts per segment */
    uint64_t unit_rows;         /* this pass's rows per unit, */
    unsigned chunk;             /* per work-item, */
    unsigned bits;              /* digit width (8, or a wide first pass: wide_bits) */
    int      wide;              /* a wide first pass and windows may be taken (cls_count_wide_first) */
    size_t   sub, wsub;         /* and column blocks of wsub columns per segment */
    uint64_t seg0;              /* first segment of the wave (global index) */
    const cls_qsource *src;     /* the data in chunks (a streamed file), or NULL: v->x */
    /* the rows being counted: groups from cg0 on, crows rows each, at cx,
     * and the units over them: segments [useg0, useg0 + nuseg) x parts */
    const char *cx;
    uint64_t cg0, crows, useg0;
    size_t   nuseg;
    size_t   nkp;               /* targets counted in this pass */
    unsigned shift;
    uint64_t *prefix;           /* G * C * nk: the wanted keys' bits found so far */
    uint64_t *resid;            /* G * C * nk: their rank among the values matching the prefix */
    uint64_t *bcnt;             /* G * C * nk: how many values match the prefix */
    uint64_t *hist;             /* the wave's histograms: seg * W * nkp * 2^bits */
} sel;

static void *to_real(const double *a, size_t n, cls_dtype t)
{
    if (!a) return NULL;
    void *r = malloc((n ? n : 1) * (t == CLS_F64 ? 8 : 4));
    if (!r) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (t == CLS_F64) ((double *)r)[i] = a[i];
        else ((float *)r)[i] = (float)a[i];
    }
    return r;
}

/* Buffers of the filter for entries [e0, e0 + n); dummies where absent. */
static cls_status filter_buffers(sel *s, cls_context *ctx, cls_dev *d, size_t e0, size_t n, cl_mem m[3])
{
    void *src[3] = {s->cen, s->flo, s->fhi};
    cls_status st = CLS_OK;
    for (int i = 0; i < 3 && st == CLS_OK; i++)
        st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, src[i] ? n * s->es : s->es,
                             src[i] ? (const char *)src[i] + e0 * s->es : NULL, &m[i]);
    return st;
}

static void release(cl_mem *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i]) clReleaseMemObject(m[i]);
}

/* A unit's results: each unit owns its entries, so no lock. */
static void deliver(sel *s, size_t e0, size_t ne, const void *cnt, const void *val)
{
    if (s->take) {
        s->take(s->take_user, e0, ne, cnt, val);
    } else {
        for (size_t i = 0; i < ne; i++) s->count[e0 + i] = ((const uint32_t *)cnt)[i];
        for (size_t i = 0; i < ne * s->nk; i++) s->vals[e0 * s->nk + i] = cls_pass_at(val, i, s->es);
    }
}

/* The arguments the order-statistics kernels of whole groups share
 * (quantile.cl's qsort kernels, sort.cl's qsortg): the unit's data m[0]
 * from entry e0 on, the filter m[1..3]. */
static void qsort_args(cls_kargs *a, const sel *s, const cl_mem *m, uint64_t e0)
{
    const cls_qview *v = s->v;
    cls_karg_mem(a, m[0]);
    cls_karg_u64(a, 0);
    cls_karg_u32(a, v->C);
    cls_karg_u32(a, v->Rg);
    cls_karg_u64(a, v->C);
    cls_karg_u64(a, v->Rg * v->C);
    cls_karg_u64(a, e0);
    cls_karg_u32(a, s->qflags);
    cls_karg_real(a, s->f && s->f->has_sent ? s->f->sent : 0);
    cls_karg_mem(a, m[1]);
    cls_karg_mem(a, m[2]);
    cls_karg_mem(a, m[3]);
}

/* ---- short columns: one counting pass ---- */

/* Whether d sorts short columns a column per work-item (qsort32g/64g,
 * qselect_small: a GPU) rather than in the lanes of a block of columns
 * (qsort32/64/128: CPU drivers, simulators), or as a test forces. */
static int column_kernel(const cls_context *ctx, const cls_dev *d)
{
    if (ctx->tune.qsort_column) return ctx->tune.qsort_column > 0;
    return cls_pass_gpu(d);
}

static cls_status small_unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    sel *s = user;
    const cls_qview *v = s->v;
    uint64_t g0 = u * s->gpu, ng = v->G - g0 < s->gpu ? v->G - g0 : s->gpu;
    size_t C = v->C, ne = (size_t)(ng * C), e0 = (size_t)g0 * C;
    cl_mem m[7] = {0};
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK};
    size_t local = 0;
    /* columns per work-item: the lanes of qsort32/64 (cl/lanes.cl's XW) */
    int col = column_kernel(ctx, d);
    size_t xw = col ? 1 : (v->dtype == CLS_F64 ? 1 : 2) * (size_t)d->xw64;
    int k = v->Rg > 64   ? (col ? CLS_K_QSELECT_SMALL : CLS_K_QSORT128)
            : v->Rg > 32 ? (col ? CLS_K_QSORT64G : CLS_K_QSORT64)
                         : (col ? CLS_K_QSORT32G : CLS_K_QSORT32);
    cls_status st = cls_kernel_get(ctx, d, k, v->dtype, 0, &a.k, &local, NULL);
    if (st == CLS_OK) st = cls_pass_input(ctx, d, v->x + (size_t)(g0 * v->Rg) * C * s->es,
                                          (size_t)(ng * v->Rg) * C * s->es, &m[0]);
    if (st == CLS_OK) st = filter_buffers(s, ctx, d, e0, ne, &m[1]);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, (size_t)(v->Rg + 1) * s->nk * 4,
                                           s->rank_tab, &m[4]);
    /* the results over kept host tables where large (a million columns) */
    void *ch = NULL, *vh = NULL;
    if (st == CLS_OK) st = cls_pass_result_buffer(ctx, d, CL_MEM_WRITE_ONLY, ne * 4, &ch, &m[5]);
    if (st == CLS_OK) st = cls_pass_result_buffer(ctx, d, CL_MEM_WRITE_ONLY, ne * s->nk * s->es, &vh, &m[6]);
    if (st == CLS_OK) {
        qsort_args(&a, s, m, 0);
        cls_karg_mem(&a, m[4]);
        cls_karg_u32(&a, s->nk);
        cls_karg_mem(&a, m[5]);
        cls_karg_mem(&a, m[6]);
        st = cls_pass_launch(&a, local, (C + xw - 1) / xw, (size_t)ng);
    }
    /* the results mapped, not read into fresh host memory (on a CPU
     * device no copy at all) */
    void *cnt = NULL, *val = NULL;
    if (st == CLS_OK) st = cls_pass_map(ctx, d, m[5], ne * 4, &cnt);
    if (st == CLS_OK) st = cls_pass_map(ctx, d, m[6], ne * s->nk * s->es, &val);
    if (st == CLS_OK) deliver(s, e0, ne, cnt, val);
    st = cls_pass_unmap(ctx, d, m[5], cnt, st);
    st = cls_pass_unmap(ctx, d, m[6], val, st);
    release(m, 7);
    cls_table_free(ch, ne * 4);
    cls_table_free(vh, ne * s->nk * s->es);
    return st;
}

/* ---- groups of one row: the value itself ---- */

/* Entries [e0, e0 + ne) of groups of one row (entry e is element e): each
 * value, when the filter takes it (quantile.cl's q_take, in the data's
 * dtype), is every order statistic of its group, count 1; else count 0
 * and NaN. No kernel: a million one-row columns paid a launch's network,
 * buffers and copies for a read of each value. */
#define ONE_ROW_BLOCK 1024
static void one_row_block(const sel *s, size_t e0, size_t ne, uint32_t *cnt, void *val)
{
    const cls_qview *v = s->v;
    int sen = (s->qflags & CLS_QF_SENTINEL) != 0, bnd = (s->qflags & CLS_QF_BOUNDS) != 0,
        dev = (s->qflags & CLS_QF_ABSDEV) != 0;
    for (size_t i = 0; i < ne; i++) {
        size_t e = e0 + i;
        int ok;
        double t;
        if (s->es == 8) {
            double x = ((const double *)v->x)[e];
            ok = isfinite(x) && !(sen && x == s->f->sent);
            ok = ok && !(bnd && (x < ((const double *)s->flo)[e] || x > ((const double *)s->fhi)[e]));
            t = dev ? fabs(x - ((const double *)s->cen)[e]) : x;
        } else {
            float x = ((const float *)v->x)[e];
            ok = isfinite(x) && !(sen && x == (float)s->f->sent);
            ok = ok && !(bnd && (x < ((const float *)s->flo)[e] || x > ((const float *)s->fhi)[e]));
            t = dev ? (double)fabsf(x - ((const float *)s->cen)[e]) : (double)x;
        }
        ok = ok && !isnan(t);
        cnt[i] = (uint32_t)ok;
        for (size_t j = 0; j < s->nk; j++) {
            if (s->es == 8) ((double *)val)[i * s->nk + j] = ok ? t : NAN;
            else ((float *)val)[i * s->nk + j] = ok ? (float)t : NAN;
        }
    }
}

static cls_status one_row(sel *s, cls_context *ctx)
{
    size_t n = (size_t)s->v->G * s->v->C;
    uint32_t *cnt = malloc(ONE_ROW_BLOCK * sizeof *cnt);
    void *val = malloc(ONE_ROW_BLOCK * s->nk * s->es);
    if (!cnt || !val) {
        free(cnt);
        free(val);
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    for (size_t e0 = 0; e0 < n; e0 += ONE_ROW_BLOCK) {
        size_t ne = n - e0 < ONE_ROW_BLOCK ? n - e0 : ONE_ROW_BLOCK;
        one_row_block(s, e0, ne, cnt, val);
        deliver(s, e0, ne, cnt, val);
    }
    free(cnt);
    free(val);
    return CLS_OK;
}
#undef ONE_ROW_BLOCK

/* ---- longer columns that a window of scratch holds: sorted once ---- */


/* A unit of whole groups (as small_unit's), in runs of as many entries
 * as the device's scratch holds (regime.h). Where the ranks come from a
 * table by count (s->rank_tab: groups of up to CLS_SELECT_TABLE_MAX
 * rows), one launch of qsortg's phase 3 loads each entry's values into
 * its window and selects the wanted ranks there (cl/sort.cl's q_select: a
 * histogram of the leading varying digit, then only the buckets of the
 * wanted ranks); longer groups take phase 0 (the load and counts), the
 * host making each entry's ranks from its count, then phase 2 (the
 * selection). Where the device sorts the windows with every work-item at
 * once (cls_wsort), phase 1 picks from them sorted. */
static cls_status sort_unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    sel *s = user;
    const cls_qview *v = s->v;
    uint64_t g0 = u * s->gpu, ng = v->G - g0 < s->gpu ? v->G - g0 : s->gpu;
    size_t C = v->C, ne = (size_t)(ng * C), e0 = (size_t)g0 * C, nk = s->nk;
    size_t w = cls_sort_columns(ctx, v->Rg, s->es);
    cl_mem m[4] = {0}, scr = NULL;
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK};
    size_t local = 0;
    uint32_t *rk = malloc((w < ne ? w : ne) * nk * sizeof *rk);
    cls_status st = rk ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK) st = cls_kernel_get(ctx, d, CLS_K_QSORTG, v->dtype, 0, &a.k, &local, NULL);
    if (st == CLS_OK) st = cls_sort_scratch_get(ctx, s->scr, d, v->Rg, s->es, &scr);
    if (st == CLS_OK) st = cls_pass_input(ctx, d, v->x + (size_t)(g0 * v->Rg) * C * s->es,
                                          (size_t)(ng * v->Rg) * C * s->es, &m[0]);
    if (st == CLS_OK) st = filter_buffers(s, ctx, d, e0, ne, &m[1]);
    if (w > ne) w = ne;
    size_t lsz = cls_sort_local(d, (w + CLS_SORT_LANES - 1) / CLS_SORT_LANES);
    /* one launch a run where the ranks come from a table by count (qsortg's
     * phase 3: each window selected while still in the core's caches) */
    int par = cls_sort_parallel(ctx, d), fused = !par && s->rank_tab;
    cl_mem tb = NULL;
    if (st == CLS_OK && fused)
        st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, (size_t)(v->Rg + 1) * nk * 4, s->rank_tab, &tb);
    for (size_t c0 = 0; st == CLS_OK && c0 < ne; c0 += w) {
        size_t n = ne - c0 < w ? ne - c0 : w;
        cl_mem cb = NULL, vb = NULL, rb = NULL;
        void *cnt = NULL, *val = NULL;
        st = cls_pass_buffer(ctx, d, CL_MEM_READ_WRITE, n * 4, NULL, &cb);
        if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_WRITE_ONLY, n * nk * s->es, NULL, &vb);
        if (st == CLS_OK && fused) {
            a.i = 0;
            qsort_args(&a, s, m, c0);
            cls_karg_mem(&a, tb);
            cls_karg_u32(&a, nk);
            cls_karg_mem(&a, cb);
            cls_karg_mem(&a, vb);
            cls_karg_mem(&a, scr);
            cls_karg_u64(&a, n);
            cls_karg_u32(&a, 3);
            st = cls_pass_launch(&a, lsz, (n + CLS_SORT_LANES - 1) / CLS_SORT_LANES, 1);
        }
        /* phase 0 by every work-item at once where the device wants it */
        unsigned ph0 = fused ? 2 : 0;
        if (st == CLS_OK && par) {
            cls_wsort_args wa = {m[0], m[1], m[2], m[3], scr, cb, 0, C, v->Rg * C, c0, 0, n,
                                 (uint32_t)C, (uint32_t)v->Rg, s->qflags,
                                 s->f && s->f->has_sent ? s->f->sent : 0};
            st = cls_wsort(ctx, d, v->dtype, &wa);
            ph0 = 1;
        }
        for (unsigned phase = ph0; st == CLS_OK && phase < 2; phase++) {
            if (phase == 1) {
                /* the ranks of each entry's count */
                st = cls_pass_map(ctx, d, cb, n * 4, &cnt);
                uint64_t r[16];
                for (size_t i = 0; st == CLS_OK && i < n; i++) {
                    uint32_t c = ((const uint32_t *)cnt)[i];
                    if (c) s->rank(s->rank_user, c, r);
                    for (size_t j = 0; j < nk; j++) rk[i * nk + j] = c ? (uint32_t)r[j] : 0;
                }
                st = cls_pass_unmap(ctx, d, cb, cnt, st);
                cnt = NULL;
                if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, n * nk * 4, rk, &rb);
            }
            a.i = 0;
            qsort_args(&a, s, m, c0);
            cls_karg_mem(&a, phase ? rb : m[0]); /* phase 0 reads no ranks */
            cls_karg_u32(&a, nk);
            cls_karg_mem(&a, cb);
            cls_karg_mem(&a, vb);
            cls_karg_mem(&a, scr);
            cls_karg_u64(&a, n);
            /* a CPU driver: phase 0 loads, phase 1 is the kernel's 2,
             * which selects among the unsorted keys; after wsort the
             * kernel's phase 1 picks from the sorted windows */
            cls_karg_u32(&a, ph0 || !phase ? phase : 2);
            /* phase 0: CLS_SORT_LANES entries a work-item; phase 1: one */
            if (st == CLS_OK) st = cls_pass_launch(&a, lsz, phase ? n : (n + CLS_SORT_LANES - 1) / CLS_SORT_LANES, 1);
        }
        if (st == CLS_OK) st = cls_pass_map(ctx, d, cb, n * 4, &cnt);
        if (st == CLS_OK) st = cls_pass_map(ctx, d, vb, n * nk * s->es, &val);
        if (st == CLS_OK) deliver(s, e0 + c0, n, cnt, val);
        st = cls_pass_unmap(ctx, d, cb, cnt, st);
        st = cls_pass_unmap(ctx, d, vb, val, st);
        cl_mem t[3] = {cb, vb, rb};
        release(t, 3);
    }
    release(&tb, 1);
    release(m, 4);
    free(rk);
    return st;
}

/* ---- long columns: radix passes ---- */

static cls_status hist_unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    sel *s = user;
    const cls_qview *v = s->v;
    size_t C = v->C;
    uint64_t seg = s->useg0 + u / (s->parts * s->sub), part = u % s->parts;
    size_t sb = (size_t)(u / s->parts % s->sub);
    size_t segs_per_group = (C + s->W - 1) / s->W;
    uint64_t g = seg / segs_per_group;
    size_t sc0 = (size_t)(seg % segs_per_group) * s->W, SW = C - sc0 < s->W ? C - sc0 : s->W;
    /* the unit's block of the segment's columns (empty past its last) */
    size_t cs = sb * s->wsub, c0 = sc0 + cs, W = cs >= SW ? 0 : SW - cs < s->wsub ? SW - cs : s->wsub;
    if (!W) return CLS_OK;
    uint64_t r0 = part * s->unit_rows, rows = s->crows - r0 < s->unit_rows ? s->crows - r0 : s->unit_rows;
    size_t e0 = (size_t)g * C + c0, nkp = s->nkp, nk = s->nk, nb = (size_t)1 << s->bits;
    unsigned nchunks = (unsigned)((rows + s->chunk - 1) / s->chunk);
    size_t per_chunk = W * nkp * nb;
    cl_mem m[7] = {0};
    uint32_t *h = malloc(per_chunk * 4);
    void *pf = malloc(W * nkp * s->es);
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK}, b = a;
    size_t local = 0, blocal = 0;
    cls_status st = h && pf ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK) {
        for (size_t c = 0; c < W; c++)
            for (size_t t = 0; t < nkp; t++) {
                uint64_t k = s->prefix[(e0 + c) * nk + t];
                if (s->es == 8) ((uint64_t *)pf)[c * nkp + t] = k;
                else ((uint32_t *)pf)[c * nkp + t] = (uint32_t)k;
            }
        st = cls_kernel_get(ctx, d, CLS_K_QHIST, v->dtype, 0, &a.k, &local, NULL);
    }
    if (st == CLS_OK) st = cls_kernel_get(ctx, d, CLS_K_QHIST_REDUCE, v->dtype, 0, &b.k, &blocal, NULL);
    if (st == CLS_OK) st = cls_pass_input(ctx, d, s->cx + (size_t)((g - s->cg0) * s->crows + r0) * C * s->es,
                                          (size_t)rows * C * s->es, &m[0]);
    if (st == CLS_OK) st = filter_buffers(s, ctx, d, e0, W, &m[1]);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, W * nkp * s->es, pf, &m[4]);
    /* wide digits: one histogram per column, which the chunks count into
     * atomically (quantile.cl), zeroed here (a work-item's loop over 2^16
     * counters would pass rusticl's bound on a loop), nothing to sum */
    int wide = s->bits > 8;
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_READ_WRITE, (wide ? 1 : nchunks) * per_chunk * 4, NULL, &m[5]);
    if (st == CLS_OK && !wide) st = cls_pass_buffer(ctx, d, CL_MEM_WRITE_ONLY, per_chunk * 4, NULL, &m[6]);
    if (st == CLS_OK && wide) {
        cl_uint zero = 0;
        cl_int e = clEnqueueFillBuffer(d->q[0], m[5], &zero, sizeof zero, 0, per_chunk * 4, 0, NULL, NULL);
        if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clEnqueueFillBuffer", e);
    }
    if (st == CLS_OK) {
        cls_karg_mem(&a, m[0]);
        cls_karg_u64(&a, c0);
        cls_karg_u32(&a, W);
        cls_karg_u64(&a, rows);
        cls_karg_u64(&a, C);
        cls_karg_u32(&a, s->chunk);
        cls_karg_u64(&a, 0);
        cls_karg_u32(&a, s->qflags);
        cls_karg_real(&a, s->f && s->f->has_sent ? s->f->sent : 0);
        cls_karg_mem(&a, m[1]);
        cls_karg_mem(&a, m[2]);
        cls_karg_mem(&a, m[3]);
        cls_karg_mem(&a, m[4]);
        cls_karg_u32(&a, nkp);
        cls_karg_u32(&a, s->shift);
        cls_karg_u32(&a, s->bits);
        cls_karg_mem(&a, m[5]);
        st = cls_pass_launch(&a, local, W, nchunks);
    }
    if (st == CLS_OK && !wide) {
        cls_karg_mem(&b, m[5]);
        cls_karg_u32(&b, nchunks);
        cls_karg_u64(&b, per_chunk);
        cls_karg_mem(&b, m[6]);
        st = cls_pass_launch(&b, blocal, per_chunk, 1);
    }
    if (st == CLS_OK) {
        cl_int e = clEnqueueReadBuffer(d->q[0], wide ? m[5] : m[6], CL_TRUE, 0, per_chunk * 4, h, 0, NULL, NULL);
        if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clEnqueueReadBuffer", e);
    }
    if (st == CLS_OK) {
        uint64_t *acc = s->hist + ((size_t)(seg - s->seg0) * s->W + cs) * nkp * nb;
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < per_chunk; i++) acc[i] += h[i];
        pthread_mutex_unlock(&s->lock);
    }
    release(m, 7);
    free(h);
    free(pf);
    return st;
}

/* Counts the wave's segments of groups [g0, g0 + ng), rows * C values each
 * at x, into the wave's histograms. */
static cls_status count_rows(sel *s, cls_context *ctx, uint64_t g0, uint64_t ng, uint64_t rows, const char *x)
{
    size_t spg = (s->v->C + s->W - 1) / s->W;
    uint64_t a = g0 * spg > s->seg0 ? g0 * spg : s->seg0;
    uint64_t b = (g0 + ng) * spg < s->seg0 + s->nseg ? (g0 + ng) * spg : s->seg0 + s->nseg;
    if (a >= b || !rows) return CLS_OK;
    s->cx = x;
    s->cg0 = g0;
    s->crows = rows;
    s->useg0 = a;
    s->nuseg = (size_t)(b - a);
    s->parts = (size_t)((rows + s->unit_rows - 1) / s->unit_rows);
    return cls_passes_run(ctx, s->v->dtype, s->nuseg * s->sub * s->parts, hist_unit, s);
}

/* A pass over chunks; win: the first pass's windows (window.h), or NULL */
typedef struct chunk_ctx { sel *s; cls_context *ctx; cls_window *win; } chunk_ctx;

static cls_status count_chunk(void *cu, uint64_t g, uint64_t rows, const char *x)
{
    chunk_ctx *c = cu;
    if (!x || g >= c->s->v->G || rows > c->s->v->Rg)
        return cls_fail(c->ctx, CLS_E_ARG, "cls_select: a chunk of %llu rows of group %llu is outside the data",
                        (unsigned long long)rows, (unsigned long long)g);
    cls_status st = count_rows(c->s, c->ctx, g, 1, rows, x);
    if (st == CLS_OK && c->win) cls_window_rows(c->win, c->ctx->pool, g, x, rows);
    return st;
}

/* After a pass: each target's digit, from its histogram and residual rank. */
static void settle(sel *s, size_t seg_local, uint64_t seg, int first, cls_rank_fn rank, void *user)
{
    const cls_qview *v = s->v;
    size_t C = v->C, segs_per_group = (C + s->W - 1) / s->W;
    uint64_t g = seg / segs_per_group;
    size_t c0 = (size_t)(seg % segs_per_group) * s->W, W = C - c0 < s->W ? C - c0 : s->W;
    uint64_t ranks[16];
    for (size_t c = 0; c < W; c++) {
        size_t e = (size_t)g * C + c0 + c;
        size_t nb = (size_t)1 << s->bits;
        const uint64_t *hc = s->hist + (seg_local * s->W + c) * s->nkp * nb;
        if (first) {
            uint64_t n = 0;
            for (size_t i = 0; i < nb; i++) n += hc[i];
            s->count[e] = n;
            if (n) rank(user, n, ranks);
            for (size_t t = 0; t < s->nk; t++) {
                s->prefix[e * s->nk + t] = 0;
                s->resid[e * s->nk + t] = n ? ranks[t] : UINT64_MAX;
            }
        }
        if (!s->count[e]) continue;
        for (size_t t = 0; t < s->nk; t++) {
            const uint64_t *ht = hc + (first ? 0 : t * nb);
            uint64_t k = s->resid[e * s->nk + t], cum = 0;
            size_t dg = nb - 1;
            for (size_t i = 0; i < nb; i++) {
                if (k < cum + ht[i]) {
                    dg = i;
                    break;
                }
                cum += ht[i];
            }
            s->prefix[e * s->nk + t] |= (uint64_t)dg << s->shift;
            s->resid[e * s->nk + t] = k - cum;
            s->bcnt[e * s->nk + t] = ht[dg];
        }
    }
}

/* ---- the end on the host: the few values of the settled buckets ---- */

typedef struct gsweep { sel *s; cls_context *ctx; cls_gather *g; uint64_t g0, g1; } gsweep;

static cls_status gather_chunk(void *cu, uint64_t g, uint64_t rows, const char *x)
{
    gsweep *w = cu;
    if (g >= w->g0 && g < w->g1) cls_gather_rows(w->g, w->ctx->pool, g, x, rows);
    return CLS_OK;
}

/* After a pass that settled the wave's buckets: when they hold at most
 * `max` values together, one sweep over the data copies them out and a
 * selection on the host finishes every wanted key (*done = 1); else
 * nothing changes. The switch no_gather (testing.h) turns it off (the tests of the
 * later counting passes). */
static cls_status try_gather(sel *s, cls_context *ctx, uint64_t max, int *done)
{
    *done = 0;
    const cls_qview *v = s->v;
    size_t C = v->C, nk = s->nk, spg = (C + s->W - 1) / s->W;
    uint64_t sa = s->seg0, sb = s->seg0 + s->nseg - 1;
    size_t e0 = (size_t)(sa / spg) * C + (size_t)(sa % spg) * s->W;
    size_t lastc = (size_t)(sb % spg) * s->W, lastw = C - lastc < s->W ? C - lastc : s->W;
    size_t e1 = (size_t)(sb / spg) * C + lastc + lastw;
    cls_gather_filter gf = {s->f && s->f->has_sent, s->f ? s->f->sent : 0, s->cen, s->flo, s->fhi};
    cls_gather *g = cls_gather_new(v->dtype, C, e0, e1 - e0, nk, s->prefix + e0 * nk, s->bcnt + e0 * nk, s->shift,
                                   &gf);
    if (!g) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (cls_gather_size(g) > max) {
        cls_gather_free(g);
        return CLS_OK;
    }
    gsweep w = {s, ctx, g, sa / spg, sb / spg + 1};
    size_t es = v->dtype == CLS_F64 ? 8 : 4;
    cls_status st = CLS_OK;
    if (s->src) st = s->src->each(s->src->user, gather_chunk, &w);
    else
        for (uint64_t grp = w.g0; grp < w.g1; grp++)
            cls_gather_rows(g, ctx->pool, grp, v->x + (size_t)(grp * v->Rg) * C * es, v->Rg);
    uint64_t *key = st == CLS_OK ? malloc((e1 - e0) * nk * sizeof *key) : NULL;
    if (st == CLS_OK && !key) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK && cls_gather_pick(g, s->resid + e0 * nk, key) != 0)
        st = cls_fail(ctx, CLS_E_IO, "exact quantiles: the data changed between two passes over it (or out of "
                      "memory for the last values)");
    for (size_t e = e0; st == CLS_OK && e < e1; e++)
        if (s->count[e])
            for (size_t t = 0; t < nk; t++) s->prefix[e * nk + t] = key[(e - e0) * nk + t];
    free(key);
    cls_gather_free(g);
    if (st == CLS_OK) *done = 1;
    return st;
}

/* The width of the first counting pass's digits (its histograms count
 * every value once, one target per column): streamed data, where each
 * pass is a read of the file, take up to 16 bits, as wide as the
 * histograms of every column of the one wave fit `budget`, so that the
 * wanted buckets are narrow enough to be gathered after that one pass
 * (16 bits: the sign, the exponent and the top mantissa bits of a
 * float64's key; 1/65536 of the range of a float32's). In memory, or
 * across processes (no gather), or in several waves: 8. */
static unsigned wide_bits(const sel *s, uint64_t nsegs, size_t wave, size_t budget)
{
    if (!s->wide || wave < nsegs) return 8;
    unsigned b = 16;
    while (b > 8 && (uint64_t)nsegs * s->W * ((uint64_t)1 << b) * 8 > budget) b--;
    return b;
}

/* A pass's digit width and units: 8-bit digits over units of chunk8-row
 * work-items; wide digits over blocks of at most 8 columns (a histogram
 * per column, 2 MiB a unit at 16 bits), a work-item counting up to 16384
 * rows (a loop within rusticl's bound), 64 work-items a column. */
static void pass_shape(sel *s, unsigned bits, unsigned chunk8, uint64_t unit_rows8)
{
    s->bits = bits;
    if (bits <= 8) {
        s->chunk = chunk8;
        s->unit_rows = unit_rows8;
        s->sub = 1;
        s->wsub = s->W;
        return;
    }
    s->wsub = s->W < 8 ? s->W : 8;
    s->sub = (s->W + s->wsub - 1) / s->wsub;
    s->chunk = 16384;
    s->unit_rows = (uint64_t)s->chunk * 64;
}

/* The first pass's windows over streamed data of one wave (window.h),
 * within the gather's bound; NULL where not tried (in memory, several
 * processes, several waves, no gather, too many entries or no memory:
 * the counting passes then take their course). */
static cls_window *first_windows(const sel *s, int gather, uint64_t max, uint64_t nsegs, size_t wave,
                                 cls_rank_fn rank, void *user)
{
    if (!s->wide || !gather || wave < nsegs) return NULL;
    cls_gather_filter gf = {s->f && s->f->has_sent, s->f ? s->f->sent : 0, s->cen, s->flo, s->fhi};
    return cls_window_new(s->v->dtype, s->v->G, s->v->Rg, s->v->C, s->nk, rank, user, &gf, max);
}

/* After the first pass: every wanted key from the windows where each
 * wanted rank fell in its window (*done = 1), else nothing changes. */
static cls_status pick_windows(sel *s, cls_context *ctx, cls_window *w, int *done)
{
    size_t n = (size_t)s->v->G * s->v->C, nk = s->nk;
    uint64_t *key = malloc((n ? n : 1) * nk * sizeof *key);
    if (!key) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (cls_window_pick(w, s->count, key) == 0) {
        for (size_t e = 0; e < n; e++)
            if (s->count[e])
                for (size_t t = 0; t < nk; t++) s->prefix[e * nk + t] = key[e * nk + t];
        *done = 1;
    }
    free(key);
    return CLS_OK;
}

static cls_status radix(sel *s, cls_context *ctx, cls_rank_fn rank, void *user)
{
    const cls_qview *v = s->v;
    size_t C = v->C, nk = s->nk, n = (size_t)v->G * C;
    /* the histograms of a wave within the context's budget (regime.c),
     * at least one column's */
    size_t budget = cls_count_budget(ctx, s->src != NULL, s->comb != NULL), one = nk * 256 * 8;
    if (budget < one) {
        cls_status st = cls_fail(ctx, CLS_E_NOMEM, "exact selection: the scratch budget (cls_config.scratch_bytes "
                                 "= %zu bytes) cannot hold one column's counting histograms (%zu bytes)",
                                 budget, one);
        return s->comb ? s->comb->fn(s->comb->user, st, NULL, 0) : st;
    }
    s->wide = cls_count_wide_first(ctx, s->src != NULL, s->comb != NULL);
    s->W = C < 4096 / nk ? C : 4096 / nk;
    if (s->W > budget / one) s->W = budget / one;
    if (!s->W) s->W = 1;
    unsigned chunk8 = (unsigned)(32768 / nk < 2048 ? 32768 / nk : 2048);
    size_t max_chunks = 8192 / (s->W * nk) ? 8192 / (s->W * nk) : 1;
    if (max_chunks > 64) max_chunks = 64;
    uint64_t unit_rows8 = (uint64_t)chunk8 * max_chunks;
    size_t segs_per_group = (C + s->W - 1) / s->W;
    uint64_t nsegs = v->G * segs_per_group;
    size_t wave = budget / (s->W * nk * 256 * 8);
    if (!wave) wave = 1;
    if (wave > nsegs) wave = (size_t)nsegs;  /* the histograms of what there is */
    unsigned b0 = wide_bits(s, nsegs, wave, budget);
    size_t hn = wave * s->W * nk * 256, hn0 = wave * s->W * ((size_t)1 << b0);
    s->prefix = malloc(n * nk * sizeof *s->prefix);
    s->resid = malloc(n * nk * sizeof *s->resid);
    s->bcnt = calloc(n * nk, sizeof *s->bcnt);
    s->hist = malloc((hn > hn0 ? hn : hn0) * sizeof *s->hist);
    cls_status st = s->prefix && s->resid && s->bcnt && s->hist ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    /* the host's end: not across processes (each holds only its own values) */
    int gather = !s->comb && !ctx->tune.no_gather;
    /* the keys it copies out (8 bytes each): within the budget in memory;
     * streamed within CLS_GATHER_STREAM_BYTES, as a file's larger budget is for fewer
     * waves of histograms while the keys are resident memory on top of
     * the stream's pool (a gather declined costs one more counting pass,
     * a read of the file) */
    uint64_t gather_max = (s->src ? (uint64_t)(ctx->tune.gather_bytes ? ctx->tune.gather_bytes
                                                                         : CLS_GATHER_STREAM_BYTES)
                                  : (uint64_t)budget) / 8;
    /* a failure before the first pass still reaches the other processes */
    if (st != CLS_OK && s->comb) s->comb->fn(s->comb->user, st, NULL, 0);
    unsigned key_bits = v->dtype == CLS_F64 ? 64 : 32;
    for (uint64_t w0 = 0; st == CLS_OK && w0 < nsegs; w0 += wave) {
        size_t nseg = (size_t)(nsegs - w0 < wave ? nsegs - w0 : wave);
        s->seg0 = w0;
        s->nseg = nseg;
        for (unsigned pass = 0, got = 0; st == CLS_OK && got < key_bits; pass++) {
            s->nkp = pass == 0 ? 1 : nk;
            pass_shape(s, pass == 0 ? b0 : 8, chunk8, unit_rows8);
            got += s->bits;
            s->shift = key_bits - got;
            size_t nh = nseg * s->W * s->nkp * ((size_t)1 << s->bits);
            memset(s->hist, 0, nh * sizeof *s->hist);
            chunk_ctx cc = {s, ctx, pass == 0 ? first_windows(s, gather, gather_max, nsegs, wave, rank, user) : NULL};
            st = s->src ? s->src->each(s->src->user, count_chunk, &cc) : count_rows(s, ctx, 0, v->G, v->Rg, v->x);
            /* the same nh on every process: it depends on G, C and nk only */
            if (s->comb) st = s->comb->fn(s->comb->user, st, st == CLS_OK ? s->hist : NULL, st == CLS_OK ? nh : 0);
            for (size_t i = 0; st == CLS_OK && i < nseg; i++) settle(s, i, w0 + i, pass == 0, rank, user);
            int done = 0;
            if (cc.win) {
                if (st == CLS_OK) st = pick_windows(s, ctx, cc.win, &done);
                cls_window_free(cc.win);
            }
            /* (after one pass of 8 bits a bucket holds 1/256 of a column
             * at best: no gather tried) */
            if (st == CLS_OK && !done && gather && (pass >= 1 || s->bits > 8) && got < key_bits)
                st = try_gather(s, ctx, gather_max, &done);
            if (done) break;
        }
    }
    if (st == CLS_OK)
        for (size_t e = 0; e < n; e++)
            for (size_t t = 0; t < nk; t++)
                s->vals[e * nk + t] = s->count[e] ? cls_value_of_key(s->prefix[e * nk + t], v->dtype) : NAN;
    free(s->prefix);
    free(s->resid);
    free(s->bcnt);
    free(s->hist);
    return st;
}

/* The ranks of every count up to the group's rows, rank_tab[n * nk + j]
 * (quantile.cl's short columns, sort.cl's qsortg phase 3). */
static cls_status rank_table(sel *s, cls_context *ctx, cls_rank_fn rank, void *user)
{
    size_t nk = s->nk;
    s->rank_tab = calloc((size_t)(s->v->Rg + 1) * nk, 4);
    if (!s->rank_tab) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    uint64_t r[16];
    for (uint64_t m = 1; m <= s->v->Rg; m++) {
        rank(user, m, r);
        for (size_t j = 0; j < nk; j++) s->rank_tab[m * nk + j] = (uint32_t)r[j];
    }
    return CLS_OK;
}

static cls_status select_any(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                             void *user, const cls_combine *comb, const cls_qsource *src, uint64_t *count,
                             double *vals, cls_qtake_fn take, void *take_user)
{
    if (nk == 0 || nk > 16) {
        cls_status st = cls_fail(ctx, CLS_E_ARG, "cls_select: %zu ranks per column (1..16)", nk);
        return comb ? comb->fn(comb->user, st, NULL, 0) : st;
    }
    sel s;
    memset(&s, 0, sizeof s);
    s.v = v;
    s.f = f;
    s.comb = comb;
    s.src = src;
    s.es = v->dtype == CLS_F64 ? 8 : 4;
    s.nk = nk;
    s.count = count;
    s.vals = vals;
    s.take = take;
    s.take_user = take_user;
    size_t n = (size_t)v->G * v->C;
    if (f) {
        s.qflags = (f->has_sent ? CLS_QF_SENTINEL : 0) | (f->cen ? CLS_QF_ABSDEV : 0) | (f->flo ? CLS_QF_BOUNDS : 0);
        s.cen = to_real(f->cen, n, v->dtype);
        s.flo = to_real(f->flo, n, v->dtype);
        s.fhi = to_real(f->fhi, n, v->dtype);
    }
    pthread_mutex_init(&s.lock, NULL);
    cls_status st = CLS_OK;
    cls_regime regime = cls_regime_of(ctx, v->Rg, s.es, CLS_QSMALL);
    if ((f && ((f->cen && !s.cen) || (f->flo && (!s.flo || !s.fhi))))) {
        st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
        if (comb) st = comb->fn(comb->user, st, NULL, 0);
    } else if (!comb && !src && regime == CLS_REGIME_NETWORK && v->Rg == 1) {
        /* a group of one row: its value is each of its order statistics */
        st = one_row(&s, ctx);
    } else if (!comb && !src && regime == CLS_REGIME_NETWORK) {
        st = rank_table(&s, ctx, rank, user);
        /* units of whole groups, about 16 MiB each */
        uint64_t gbytes = v->Rg * v->C * s.es;
        s.gpu = gbytes >= (16u << 20) ? 1 : (16u << 20) / gbytes;
        if (st == CLS_OK) st = cls_passes_run(ctx, v->dtype, (size_t)((v->G + s.gpu - 1) / s.gpu), small_unit, &s);
    } else if (!comb && !src && regime == CLS_REGIME_SORT) {
        s.rank = rank;
        s.rank_user = user;
        if (v->Rg <= CLS_SELECT_TABLE_MAX) st = rank_table(&s, ctx, rank, user);
        s.scr = cls_sort_scratch_new(ctx);
        /* units of whole groups, about 16 MiB each */
        uint64_t gbytes = v->Rg * v->C * s.es;
        s.gpu = gbytes >= (16u << 20) ? 1 : (16u << 20) / gbytes;
        if (st == CLS_OK)
            st = s.scr ? cls_passes_run(ctx, v->dtype, (size_t)((v->G + s.gpu - 1) / s.gpu), sort_unit, &s)
                       : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
        cls_sort_scratch_free(ctx, s.scr);
    } else {
        st = radix(&s, ctx, rank, user);
    }
    pthread_mutex_destroy(&s.lock);
    free(s.rank_tab);
    free(s.cen);
    free(s.flo);
    free(s.fhi);
    return st;
}

cls_status cls_select_combined(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk,
                               cls_rank_fn rank, void *user, const cls_combine *comb, uint64_t *count, double *vals)
{
    return select_any(ctx, v, f, nk, rank, user, comb, NULL, count, vals, NULL, NULL);
}

cls_status cls_select_small(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                            void *user, cls_qtake_fn take, void *take_user)
{
    if (cls_regime_of(ctx, v->Rg, v->dtype == CLS_F64 ? 8 : 4, CLS_QSMALL) == CLS_REGIME_COUNT || !take)
        return cls_fail(ctx, CLS_E_ARG, "cls_select_small: groups of %llu rows take counting passes, or no consumer",
                        (unsigned long long)v->Rg);
    return select_any(ctx, v, f, nk, rank, user, NULL, NULL, NULL, NULL, take, take_user);
}

cls_status cls_select_source(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                             void *user, const cls_combine *comb, const cls_qsource *src, uint64_t *count,
                             double *vals)
{
    if (!src || !src->each) {
        cls_status st = cls_fail(ctx, CLS_E_ARG, "cls_select_source: no source");
        return comb ? comb->fn(comb->user, st, NULL, 0) : st;
    }
    return select_any(ctx, v, f, nk, rank, user, comb, src, count, vals, NULL, NULL);
}

cls_status cls_select(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                      void *user, uint64_t *count, double *vals)
{
    return cls_select_combined(ctx, v, f, nk, rank, user, NULL, count, vals);
}

/* cls_select_small's consumer for cls_select_put: each entry's values as
 * doubles to put */
typedef struct sput {
    cls_qput_fn put;
    void       *user;
    size_t      nk, es;
} sput;

static void put_take(void *user, size_t e0, size_t n, const uint32_t *count, const void *vals)
{
    const sput *p = user;
    double pv[16];
    for (size_t i = 0; i < n; i++) {
        for (size_t t = 0; t < p->nk; t++) pv[t] = cls_pass_at(vals, i * p->nk + t, p->es);
        p->put(p->user, e0 + i, count[i], pv);
    }
}

cls_status cls_select_put(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                          void *user, const cls_combine *comb, const cls_qsource *src, cls_qput_fn put,
                          void *put_user)
{
    if (!comb && !src && cls_regime_of(ctx, v->Rg, v->dtype == CLS_F64 ? 8 : 4, CLS_QSMALL) != CLS_REGIME_COUNT) {
        sput p = {put, put_user, nk, v->dtype == CLS_F64 ? 8 : 4};
        return cls_select_small(ctx, v, f, nk, rank, user, put_take, &p);
    }
    size_t n = (size_t)v->G * v->C;
    uint64_t *cnt = malloc((n ? n : 1) * sizeof *cnt);
    double *vals = malloc((n ? n : 1) * nk * sizeof *vals);
    cls_status st = cnt && vals ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory for %zu columns", n);
    if (st == CLS_OK && src) st = cls_select_source(ctx, v, f, nk, rank, user, comb, src, cnt, vals);
    else if (st == CLS_OK) st = cls_select_combined(ctx, v, f, nk, rank, user, comb, cnt, vals);
    else if (comb) st = comb->fn(comb->user, st, NULL, 0);
    for (size_t e = 0; st == CLS_OK && e < n; e++) put(put_user, e, cnt[e], vals + e * nk);
    free(cnt);
    free(vals);
    return st;
}

void cls_select_median_ranks(void *user, uint64_t n, uint64_t *ranks)
{
    (void)user;
    cls_median_ranks(n, &ranks[0], &ranks[1]);
}

/* ---- cls_quantiles ---- */

typedef struct qreq { const double *q; size_t nq; } qreq;

static void quantile_ranks(void *user, uint64_t n, uint64_t *r)
{
    const qreq *q = user;
    for (size_t j = 0; j < q->nq; j++) {
        double gamma;
        cls_quantile_ranks(q->q[j], n, &r[2 * j], &r[2 * j + 1], &gamma);
    }
}

/* The argument checks of cls_quantiles (and cls_medians, fn naming the
 * call); rows or batch may be 0 (with data
 * NULL) only when several processes combine their counts. */
static cls_status check_select(cls_context *ctx, const char *fn, const cls_array *x, cls_scope scope, const double *q,
                               size_t nq, double *out, int combined)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    if (!x || !out || (nq && !q)) return cls_fail(ctx, CLS_E_ARG, "%s: NULL argument", fn);
    if (x->dtype != CLS_F32 && x->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "%s: dtype %d is neither CLS_F32 nor CLS_F64", fn, (int)x->dtype);
    if ((unsigned)scope > CLS_SCOPE_BATCH) return cls_fail(ctx, CLS_E_ARG, "%s: unknown scope %d", fn, (int)scope);
    int empty = !x->batch || !x->rows;
    if (!x->cols || (empty && !(combined && (x->batch || scope == CLS_SCOPE_BATCH))))
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu has a zero dimension", fn,
                        x->batch, x->rows, x->cols);
    if (!x->data && !empty) return cls_fail(ctx, CLS_E_ARG, "%s: NULL argument", fn);
    if (nq == 0 || nq > 8) return cls_fail(ctx, CLS_E_ARG, "%s: %zu quantiles (1..8 per call)", fn, nq);
    for (size_t j = 0; j < nq; j++)
        if (!(q[j] >= 0 && q[j] <= 1))
            return cls_fail(ctx, CLS_E_ARG, "%s: q[%zu] = %g is outside [0, 1]", fn, j, q[j]);
    return CLS_OK;
}

/* Where cls_quantiles puts its results, and numpy's weights by count for
 * short groups (most columns of a call share a handful of counts;
 * millions of entries per call): wt[n * nq + j], -1 where no value is
 * interpolated. */
typedef struct qput {
    const double *q;
    size_t        nq, C;
    cls_dtype     dt;
    double       *wt;
    double       *out;
} qput;

/* Entry e's nq quantiles from its count n and its 2 * nq order statistics
 * pv (a cls_qput_fn). */
static void quantiles_put(void *user, size_t e, uint64_t n, const double *pv)
{
    const qput *o = user;
    size_t g = e / o->C, c = e % o->C;
    for (size_t j = 0; j < o->nq; j++) {
        double res = NAN, gamma;
        if (n) {
            if (o->wt) {
                gamma = o->wt[n * o->nq + j];
            } else {
                uint64_t lo, hi;
                cls_quantile_ranks(o->q[j], n, &lo, &hi, &gamma);
                if (lo == hi) gamma = -1;
            }
            res = gamma < 0 ? pv[2 * j] : cls_quantile_lerp(pv[2 * j], pv[2 * j + 1], gamma, o->dt);
        }
        o->out[(g * o->nq + j) * o->C + c] = res;
    }
}

/* The statistics view of x's groups for scope. */
static cls_qview view_of(const cls_array *x, cls_scope scope)
{
    cls_qview v = {x->data, x->dtype, scope == CLS_SCOPE_BATCH ? 1 : x->batch,
                   scope == CLS_SCOPE_BATCH ? (uint64_t)x->batch * x->rows : x->rows, x->cols};
    return v;
}

cls_status cls_host_quantiles_combined(cls_context *ctx, const cls_array *x, cls_scope scope, const double *q, size_t nq,
                                  const cls_combine *combine, double *out)
{
    if (combine && !combine->fn) combine = NULL;
    cls_status st = check_select(ctx, "cls_quantiles", x, scope, q, nq, out, combine != NULL);
    if (st != CLS_OK) return combine ? combine->fn(combine->user, st, NULL, 0) : st;
    cls_qview v = view_of(x, scope);
    qreq r = {q, nq};
    qput o = {q, nq, v.C, x->dtype, NULL, out};
    if (!combine && v.Rg <= CLS_QSMALL) {
        /* short groups of one process: numpy's weights by count (at most
         * Rg here; across processes the counts are summed); a failed
         * malloc only costs the table's speed */
        o.wt = malloc((size_t)(v.Rg + 1) * nq * sizeof *o.wt);
        for (uint64_t m = 1; o.wt && m <= v.Rg; m++)
            for (size_t j = 0; j < nq; j++) {
                uint64_t lo, hi;
                cls_quantile_ranks(q[j], m, &lo, &hi, &o.wt[m * nq + j]);
                if (lo == hi) o.wt[m * nq + j] = -1;
            }
    }
    st = cls_select_put(ctx, &v, NULL, 2 * nq, quantile_ranks, &r, combine, NULL, quantiles_put, &o);
    free(o.wt);
    return st;
}

cls_status cls_host_quantiles(cls_context *ctx, const cls_array *x, cls_scope scope, const double *q, size_t nq,
                         double *out)
{
    return cls_host_quantiles_combined(ctx, x, scope, q, nq, NULL, out);
}

/* ---- numpy's nanmedian (cls_medians) ---- */

void cls_select_median_put(void *user, size_t e, uint64_t n, const double *pv)
{
    const cls_median_out *o = user;
    o->out[e] = n ? cls_median_of(pv[0], pv[1], n, o->dtype) : NAN;
}

/* The middle two order statistics come from the counts summed over the
 * processes like any other, and their (a + b) / 2 from the summed count:
 * the same arithmetic as one process's over all the rows. */
cls_status cls_host_medians_combined(cls_context *ctx, const cls_array *x, cls_scope scope,
                                     const cls_combine *combine, double *out)
{
    static const double half = 0.5;
    if (combine && !combine->fn) combine = NULL;
    cls_status st = check_select(ctx, "cls_medians", x, scope, &half, 1, out, combine != NULL);
    if (st != CLS_OK) return combine ? combine->fn(combine->user, st, NULL, 0) : st;
    cls_qview v = view_of(x, scope);
    cls_median_out o = {x->dtype, out};
    return cls_select_put(ctx, &v, NULL, 2, cls_select_median_ranks, NULL, combine, NULL, cls_select_median_put, &o);
}

cls_status cls_host_medians(cls_context *ctx, const cls_array *x, cls_scope scope, double *out)
{
    return cls_host_medians_combined(ctx, x, scope, NULL, out);
}
