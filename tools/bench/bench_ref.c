/* The host references clscale is measured against (bench.h).
 *
 * Two references per workload. bench_ref_single() is the code a user writes
 * first: natural row-major loops, one thread. bench_ref_threads() is what a
 * good engineer writes in an afternoon, so that the benchmark's speedups are
 * honest: min-max works on column blocks that stay in L2 between the
 * statistics and the scaling (the data touches DRAM once), prefetching the
 * next block; discounting streams row tiles whose factors stay in cache
 * across the batch; z-score runs per-thread Welford, a Chan merge, then a
 * threaded scaling pass. Inner loops run over fixed chunks of W contiguous
 * elements, the shape gcc vectorises at -O2 without -march flags, with no
 * test per element: a run that meets a missing value is redone exactly.
 *
 * Both follow clscale's semantics (DESIGN.md): non-finite values are missing,
 * ignored by the fit and passed through; arithmetic in double, results in the
 * workload's dtype. Threads are created per call; if one cannot be created
 * the work runs on the threads that exist, the caller's at least. Nothing
 * here prints or aborts. Calls only libc, libm and the team (bench_threads.c). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "bench_host.h"

/* ---- kernels: contiguous runs, W at a time ------------------------------ */

/* Each has a fast form, which needs no test per element, and an exact form,
 * which tests every element for missing values. The fast statistics skip NaN
 * for free (every comparison with NaN is false) but take in +-Inf, which then
 * shows in the result: the caller redoes that run exactly. The fast scaling
 * passes NaN through by arithmetic; it is used only where no +-Inf exists. */
BH_INLINE void minmax_fast(const void *restrict x, cls_dtype t, size_t off, size_t n,
                           double *restrict mn, double *restrict mx)
{
    size_t c = 0;
    for (; c + W <= n; c += W) {
#pragma GCC unroll 8
        for (int k = 0; k < W; k++) {
            double v = ld(x, t, off + c + k);
            mn[c + k] = v < mn[c + k] ? v : mn[c + k];
            mx[c + k] = v > mx[c + k] ? v : mx[c + k];
        }
    }
    for (; c < n; c++) {
        double v = ld(x, t, off + c);
        mn[c] = v < mn[c] ? v : mn[c];
        mx[c] = v > mx[c] ? v : mx[c];
    }
}

/* Four rows at a time: mn and mx are read and written once per four rows. */
BH_INLINE void minmax_fast4(const void *restrict x, cls_dtype t, size_t off, size_t stride, size_t n,
                            double *restrict mn, double *restrict mx)
{
    size_t c = 0;
    for (; c + W <= n; c += W) {
#pragma GCC unroll 8
        for (int k = 0; k < W; k++) {
            size_t i = off + c + k;
            double a = ld(x, t, i), b = ld(x, t, i + stride);
            double d = ld(x, t, i + 2 * stride), e = ld(x, t, i + 3 * stride);
            double lo = mn[c + k], hi = mx[c + k];
            lo = a < lo ? a : lo;
            lo = b < lo ? b : lo;
            lo = d < lo ? d : lo;
            lo = e < lo ? e : lo;
            hi = a > hi ? a : hi;
            hi = b > hi ? b : hi;
            hi = d > hi ? d : hi;
            hi = e > hi ? e : hi;
            mn[c + k] = lo;
            mx[c + k] = hi;
        }
    }
    for (int r = 0; r < 4; r++) minmax_fast(x, t, off + c + r * stride, n - c, mn + c, mx + c);
}

BH_INLINE void minmax_exact(const void *restrict x, cls_dtype t, size_t off, size_t n,
                            double *restrict mn, double *restrict mx)
{
    for (size_t c = 0; c < n; c++) {
        double v = ld(x, t, off + c);
        if (fabs(v) <= DBL_MAX) {
            mn[c] = v < mn[c] ? v : mn[c];
            mx[c] = v > mx[c] ? v : mx[c];
        }
    }
}

/* y = (x - a) * s + lo. */
BH_INLINE void affine_fast(const void *restrict x, void *restrict y, cls_dtype t, size_t off,
                           size_t n, const double *restrict a, const double *restrict s, double lo)
{
    size_t c = 0;
    for (; c + W <= n; c += W) {
#pragma GCC unroll 8
        for (int k = 0; k < W; k++)
            st(y, t, off + c + k, (ld(x, t, off + c + k) - a[c + k]) * s[c + k] + lo);
    }
    for (; c < n; c++) st(y, t, off + c, (ld(x, t, off + c) - a[c]) * s[c] + lo);
}

/* The same for finite x; any other x is copied. */
BH_INLINE void affine_exact(const void *restrict x, void *restrict y, cls_dtype t, size_t off,
                            size_t n, const double *restrict a, const double *restrict s, double lo)
{
    for (size_t c = 0; c < n; c++) {
        double v = ld(x, t, off + c);
        st(y, t, off + c, fabs(v) <= DBL_MAX ? (v - a[c]) * s[c] + lo : v);
    }
}

BH_INLINE void mul_store(const void *restrict x, const void *restrict f, void *restrict y,
                         cls_dtype t, size_t off, size_t foff, size_t n)
{
    size_t i = 0;
    for (; i + W <= n; i += W) {
#pragma GCC unroll 8
        for (int k = 0; k < W; k++)
            st(y, t, off + i + k, ld(x, t, off + i + k) * ld(f, t, foff + i + k));
    }
    for (; i < n; i++) st(y, t, off + i, ld(x, t, off + i) * ld(f, t, foff + i));
}

/* ---- min-max per matrix ------------------------------------------------- */

static size_t l2_bytes(void)
{
#ifdef _SC_LEVEL2_CACHE_SIZE
    long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (v >= 64 * 1024) return (size_t)v;
#endif
    return 512 * 1024;
}

/* Columns per block: input and output of this block and of the next one,
 * being prefetched, fill half of L2. */
static size_t minmax_block_cols(const bench_workload *w)
{
    size_t per_col = w->rows * 2 * dtype_size(w->dtype);
    size_t b = l2_bytes() / 4 / (per_col ? per_col : 1);
    b = b / W * W;
    if (b < W) b = W;
    if (b > BLOCK_MAX) b = BLOCK_MAX;
    return b < w->cols ? b : w->cols;
}

static void minmax_init(double *mn, double *mx, size_t n)
{
    for (size_t c = 0; c < n; c++) {
        mn[c] = INFINITY;
        mx[c] = -INFINITY;
    }
}

/* Software prefetch, a line at a time. Blocks are rows 8 KiB apart, which
 * defeats the hardware prefetcher (it stops at page boundaries): each member
 * fetches the next block's x into L2 while it works on this one, and this
 * block's y a few rows ahead of the scaling. */
enum { Y_AHEAD = 4 };

static void prefetch_span(const void *p, size_t bytes, int write)
{
    for (size_t o = 0; o < bytes; o += 64) {
        if (write) __builtin_prefetch((const char *)p + o, 1, 2);
        else __builtin_prefetch((const char *)p + o, 0, 2);
    }
}

/* Matrix m, columns [c0, c0 + n): statistics, then scaling while in cache.
 * A block with +-Inf (seen by the fast statistics) is redone exactly. The
 * block of nn columns at `next` (nn 0: none) is prefetched meanwhile. */
BH_INLINE void minmax_block(const bench_workload *w, const void *x, void *y, cls_dtype t,
                            size_t m, size_t c0, size_t n, size_t next, size_t nn)
{
    double mn[BLOCK_MAX], mx[BLOCK_MAX], s[BLOCK_MAX];
    const double lo = 0.0, hi = 1.0;
    size_t rows = w->rows, cols = w->cols, base = m * rows * cols + c0, es = dtype_size(t), r = 0;
    const char *xb = x, *yb = y;
    minmax_init(mn, mx, n);
    for (; r + 4 <= rows; r += 4) {
        for (size_t q = r; q < r + 4 && nn; q++) prefetch_span(xb + (next + q * cols) * es, nn * es, 0);
        minmax_fast4(x, t, base + r * cols, cols, n, mn, mx);
    }
    for (; r < rows; r++) {
        if (nn) prefetch_span(xb + (next + r * cols) * es, nn * es, 0);
        minmax_fast(x, t, base + r * cols, n, mn, mx);
    }
    int inf = 0;
    for (size_t c = 0; c < n; c++) inf |= mn[c] == -INFINITY || mx[c] == INFINITY;
    if (inf) {
        minmax_init(mn, mx, n);
        for (r = 0; r < rows; r++) minmax_exact(x, t, base + r * cols, n, mn, mx);
    }
    for (size_t c = 0; c < n; c++) {
        double range = mx[c] - mn[c];
        s[c] = range > 0.0 ? (hi - lo) / range : 0.0;   /* constant column: lo */
    }
    for (r = 0; r < rows && r < Y_AHEAD; r++) prefetch_span(yb + (base + r * cols) * es, n * es, 1);
    for (r = 0; r < rows; r++) {
        if (r + Y_AHEAD < rows) prefetch_span(yb + (base + (r + Y_AHEAD) * cols) * es, n * es, 1);
        if (inf) affine_exact(x, y, t, base + r * cols, n, mn, s, lo);
        else affine_fast(x, y, t, base + r * cols, n, mn, s, lo);
    }
}

typedef struct minmax_job {
    const bench_workload *w;
    const void *x;
    void *y;
    size_t block, nblocks;
    atomic_size_t next;
} minmax_job;

static void minmax_worker(team *t, unsigned id, void *arg)
{
    (void)t;
    (void)id;
    minmax_job *j = arg;
    size_t total = j->w->batch * j->nblocks, cols = j->w->cols, rows = j->w->rows;
    size_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    while (i < total) {
        size_t k = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        size_t m = i / j->nblocks, c0 = i % j->nblocks * j->block;
        size_t n = cols - c0 < j->block ? cols - c0 : j->block;
        size_t next = 0, nnext = 0;
        if (k < total) {
            size_t km = k / j->nblocks, kc0 = k % j->nblocks * j->block;
            next = km * rows * cols + kc0;
            nnext = cols - kc0 < j->block ? cols - kc0 : j->block;
        }
        if (j->w->dtype == CLS_F64) minmax_block(j->w, j->x, j->y, CLS_F64, m, c0, n, next, nnext);
        else minmax_block(j->w, j->x, j->y, CLS_F32, m, c0, n, next, nnext);
        i = k;
    }
}

static void minmax_threads(const bench_workload *w, const void *x, void *y, unsigned threads)
{
    minmax_job j = {.w = w, .x = x, .y = y, .block = minmax_block_cols(w)};
    j.nblocks = (w->cols + j.block - 1) / j.block;
    atomic_init(&j.next, 0);
    team_run(resolve_threads(threads), minmax_worker, &j, NULL);
}

BH_INLINE void minmax_single(const bench_workload *w, const void *x, void *y, cls_dtype t)
{
    const double lo = 0.0, hi = 1.0;
    size_t rows = w->rows, cols = w->cols;
    double *mn = malloc(2 * cols * sizeof *mn);
    if (!mn) {
        minmax_threads(w, x, y, 1);
        return;
    }
    double *mx = mn + cols;
    for (size_t m = 0; m < w->batch; m++) {
        size_t base = m * rows * cols;
        for (size_t c = 0; c < cols; c++) {
            mn[c] = INFINITY;
            mx[c] = -INFINITY;
        }
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                double v = ld(x, t, base + r * cols + c);
                if (isfinite(v)) {
                    if (v < mn[c]) mn[c] = v;
                    if (v > mx[c]) mx[c] = v;
                }
            }
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t i = base + r * cols + c;
                double v = ld(x, t, i);
                if (!isfinite(v)) st(y, t, i, v);
                else if (mx[c] == mn[c]) st(y, t, i, lo);
                else st(y, t, i, (v - mn[c]) / (mx[c] - mn[c]) * (hi - lo) + lo);
            }
    }
    free(mn);
}

/* ---- discount ----------------------------------------------------------- */

/* Factors broadcast numpy's way: frows is 1 or rows, fcols 1 or cols (other
 * shapes wrap around, never out of bounds); none at all multiplies by 1. */
BH_INLINE void discount_rows(const bench_workload *w, const void *x, const void *f, void *y,
                             cls_dtype t, size_t m, size_t r0, size_t r1)
{
    size_t rows = w->rows, cols = w->cols, frows = w->frows, fcols = w->fcols;
    size_t base = m * rows * cols;
    if (!f || !frows || !fcols) {
        for (size_t i = base + r0 * cols; i < base + r1 * cols; i++) st(y, t, i, ld(x, t, i));
    } else if (frows == rows && fcols == cols) {
        mul_store(x, f, y, t, base + r0 * cols, r0 * cols, (r1 - r0) * cols);
    } else {
        for (size_t r = r0; r < r1; r++) {
            size_t fr = (frows == rows ? r : r % frows) * fcols;
            if (fcols == cols) mul_store(x, f, y, t, base + r * cols, fr, cols);
            else
                for (size_t c = 0; c < cols; c++)
                    st(y, t, base + r * cols + c, ld(x, t, base + r * cols + c) * ld(f, t, fr + c % fcols));
        }
    }
}

typedef struct discount_job {
    const bench_workload *w;
    const void *x, *f;
    void *y;
} discount_job;

/* Each member owns a range of rows; it walks them in tiles whose factors
 * (64 KiB) stay in cache while every matrix of the batch uses them. */
static void discount_worker(team *t, unsigned id, void *arg)
{
    discount_job *j = arg;
    const bench_workload *w = j->w;
    size_t lo, hi;
    share(w->rows, id, t->n, &lo, &hi);
    size_t tile = 8192 / (w->cols ? w->cols : 1);
    if (tile < 1) tile = 1;
    for (size_t r0 = lo; r0 < hi; r0 += tile) {
        size_t r1 = hi - r0 < tile ? hi : r0 + tile;
        for (size_t m = 0; m < w->batch; m++) {
            if (w->dtype == CLS_F64) discount_rows(w, j->x, j->f, j->y, CLS_F64, m, r0, r1);
            else discount_rows(w, j->x, j->f, j->y, CLS_F32, m, r0, r1);
        }
    }
}

BH_INLINE void discount_single(const bench_workload *w, const void *x, const void *f, void *y,
                               cls_dtype t)
{
    size_t rows = w->rows, cols = w->cols, frows = w->frows, fcols = w->fcols;
    int plain = f && frows == rows && fcols == cols;
    for (size_t m = 0; m < w->batch; m++)
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t i = (m * rows + r) * cols + c;
                double fv = plain ? ld(f, t, r * cols + c)
                          : (!f || !frows || !fcols) ? 1.0
                          : ld(f, t, (r % frows) * fcols + c % fcols);
                st(y, t, i, ld(x, t, i) * fv);
            }
}

/* ---- z-score over the batch --------------------------------------------- */

/* Welford over rows [r0, r1) for every column, into n/mean/m2 (zeroed by
 * the caller). The fast form assumes complete rows: one count, one division
 * per row for all columns. A missing value makes its column's mean NaN or
 * Inf for good, so the caller sees it and redoes the rows exactly. */
BH_INLINE void welford_fast(const void *restrict x, cls_dtype t, size_t cols, size_t r0, size_t r1,
                            double *restrict n, double *restrict mean, double *restrict m2)
{
    double count = 0.0;
    for (size_t r = r0; r < r1; r++) {
        size_t base = r * cols, c = 0;
        count += 1.0;
        double inv = 1.0 / count;
        for (; c + W <= cols; c += W) {
#pragma GCC unroll 8
            for (int k = 0; k < W; k++) {
                double v = ld(x, t, base + c + k), d = v - mean[c + k];
                mean[c + k] += d * inv;
                m2[c + k] += d * (v - mean[c + k]);
            }
        }
        for (; c < cols; c++) {
            double v = ld(x, t, base + c), d = v - mean[c];
            mean[c] += d * inv;
            m2[c] += d * (v - mean[c]);
        }
    }
    for (size_t c = 0; c < cols; c++) n[c] = count;
}

BH_INLINE void welford_exact(const void *restrict x, cls_dtype t, size_t cols, size_t r0, size_t r1,
                             double *restrict n, double *restrict mean, double *restrict m2)
{
    for (size_t r = r0; r < r1; r++)
        for (size_t c = 0; c < cols; c++) {
            double v = ld(x, t, r * cols + c);
            if (fabs(v) <= DBL_MAX) {
                n[c] += 1.0;
                double d = v - mean[c];
                mean[c] += d / n[c];
                m2[c] += d * (v - mean[c]);
            }
        }
}

typedef struct zscore_job {
    const bench_workload *w;
    const void *x;
    void *y;
    double *part;        /* per member: n, mean, m2, each `stride` long */
    size_t stride;
    atomic_int missing;  /* some member met a missing value */
    const double *mean, *inv;
} zscore_job;

BH_INLINE void zscore_fit_rows(zscore_job *j, cls_dtype t, unsigned id, size_t lo, size_t hi)
{
    size_t cols = j->w->cols, stride = j->stride;
    double *n = j->part + (size_t)id * 3 * stride, *mean = n + stride, *m2 = mean + stride;
    welford_fast(j->x, t, cols, lo, hi, n, mean, m2);
    int ok = 1;
    for (size_t c = 0; c < cols; c++) ok &= fabs(mean[c]) <= DBL_MAX && fabs(m2[c]) <= DBL_MAX;
    if (ok) return;
    atomic_store(&j->missing, 1);
    memset(n, 0, 3 * stride * sizeof *n);
    welford_exact(j->x, t, cols, lo, hi, n, mean, m2);
}

static void zscore_fit_worker(team *t, unsigned id, void *arg)
{
    zscore_job *j = arg;
    size_t lo, hi;
    share(j->w->batch * j->w->rows, id, t->n, &lo, &hi);
    if (j->w->dtype == CLS_F64) zscore_fit_rows(j, CLS_F64, id, lo, hi);
    else zscore_fit_rows(j, CLS_F32, id, lo, hi);
}

BH_INLINE void zscore_affine(const void *x, void *y, cls_dtype t, int exact, size_t off, size_t n,
                             const double *a, const double *s)
{
    if (exact) affine_exact(x, y, t, off, n, a, s, 0.0);
    else affine_fast(x, y, t, off, n, a, s, 0.0);
}

BH_INLINE void zscore_scale_rows(zscore_job *j, cls_dtype t, size_t lo, size_t hi)
{
    size_t cols = j->w->cols;
    int exact = atomic_load(&j->missing);
    if (cols <= BLOCK_MAX / 2) {
        /* Narrow rows: repeat mean and 1/sd so that a run spans many rows. */
        double pm[BLOCK_MAX], ps[BLOCK_MAX];
        size_t k = BLOCK_MAX / cols;
        for (size_t i = 0; i < k * cols; i++) {
            pm[i] = j->mean[i % cols];
            ps[i] = j->inv[i % cols];
        }
        for (size_t r = lo; r < hi; r += k) {
            size_t nr = hi - r < k ? hi - r : k;
            zscore_affine(j->x, j->y, t, exact, r * cols, nr * cols, pm, ps);
        }
    } else {
        for (size_t r = lo; r < hi; r++)
            for (size_t c0 = 0; c0 < cols; c0 += BLOCK_MAX) {
                size_t n = cols - c0 < BLOCK_MAX ? cols - c0 : BLOCK_MAX;
                zscore_affine(j->x, j->y, t, exact, r * cols + c0, n, j->mean + c0, j->inv + c0);
            }
    }
}

static void zscore_scale_worker(team *t, unsigned id, void *arg)
{
    zscore_job *j = arg;
    size_t lo, hi;
    share(j->w->batch * j->w->rows, id, t->n, &lo, &hi);
    if (j->w->dtype == CLS_F64) zscore_scale_rows(j, CLS_F64, lo, hi);
    else zscore_scale_rows(j, CLS_F32, lo, hi);
}

BH_INLINE void zscore_single(const bench_workload *w, const void *x, void *y, cls_dtype t);

static void zscore_threads(const bench_workload *w, const void *x, void *y, unsigned threads)
{
    unsigned want = resolve_threads(threads);
    size_t cols = w->cols, stride = (cols + 7) / 8 * 8;   /* members' sums on separate lines */
    double *part = calloc((size_t)want * 3 + 1, stride * sizeof *part);
    if (!part) {
        if (w->dtype == CLS_F64) zscore_single(w, x, y, CLS_F64);
        else zscore_single(w, x, y, CLS_F32);
        return;
    }
    zscore_job j = {.w = w, .x = x, .y = y, .part = part, .stride = stride};
    atomic_init(&j.missing, 0);
    unsigned k = team_run(want, zscore_fit_worker, &j, NULL);
    /* Chan's merge, in member order. */
    double *n = part, *mean = part + stride, *m2 = part + 2 * stride;
    for (unsigned i = 1; i < k; i++) {
        const double *p = part + (size_t)i * 3 * stride;
        for (size_t c = 0; c < cols; c++) {
            double nb = p[c], mb = p[stride + c], m2b = p[2 * stride + c];
            if (nb == 0.0) continue;
            double na = n[c], nn = na + nb, d = mb - mean[c];
            mean[c] += d * (nb / nn);
            m2[c] += m2b + d * d * (na * nb / nn);
            n[c] = nn;
        }
    }
    double *inv = part + (size_t)want * 3 * stride;
    for (size_t c = 0; c < cols; c++) {
        double sd = n[c] > 0.0 ? sqrt(m2[c] / n[c]) : 0.0;
        inv[c] = sd > 0.0 ? 1.0 / sd : 0.0;                 /* sd 0: 0 */
    }
    j.mean = mean;
    j.inv = inv;
    team_run(want, zscore_scale_worker, &j, NULL);
    free(part);
}

BH_INLINE void zscore_single(const bench_workload *w, const void *x, void *y, cls_dtype t)
{
    size_t rows = w->batch * w->rows, cols = w->cols;
    double *n = calloc(3 * cols + 1, sizeof *n);
    if (!n) {
        /* No memory for the column sums: one column at a time. */
        for (size_t c = 0; c < cols; c++) {
            double cn = 0, mean = 0, m2 = 0;
            for (size_t r = 0; r < rows; r++) {
                double v = ld(x, t, r * cols + c);
                if (!isfinite(v)) continue;
                cn += 1;
                double d = v - mean;
                mean += d / cn;
                m2 += d * (v - mean);
            }
            double sd = cn > 0 ? sqrt(m2 / cn) : 0.0;
            for (size_t r = 0; r < rows; r++) {
                double v = ld(x, t, r * cols + c);
                st(y, t, r * cols + c, !isfinite(v) ? v : sd == 0.0 ? 0.0 : (v - mean) / sd);
            }
        }
        return;
    }
    double *mean = n + cols, *m2 = mean + cols;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            double v = ld(x, t, r * cols + c);
            if (!isfinite(v)) continue;
            n[c] += 1;
            double d = v - mean[c];
            mean[c] += d / n[c];
            m2[c] += d * (v - mean[c]);
        }
    for (size_t c = 0; c < cols; c++) m2[c] = n[c] > 0 ? sqrt(m2[c] / n[c]) : 0.0;   /* now sd */
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t i = r * cols + c;
            double v = ld(x, t, i);
            st(y, t, i, !isfinite(v) ? v : m2[c] == 0.0 ? 0.0 : (v - mean[c]) / m2[c]);
        }
    free(n);
}

/* ---- the references ----------------------------------------------------- */

void bench_ref_single(const bench_workload *w, const void *x, const void *factors, void *y)
{
    if (!w || !x || !y || !bench_elements(w)) return;
    int f64 = w->dtype == CLS_F64;
    switch (w->kind) {
    case BENCH_MINMAX_MATRIX:
        if (f64) minmax_single(w, x, y, CLS_F64);
        else minmax_single(w, x, y, CLS_F32);
        break;
    case BENCH_DISCOUNT:
        if (f64) discount_single(w, x, factors, y, CLS_F64);
        else discount_single(w, x, factors, y, CLS_F32);
        break;
    case BENCH_ZSCORE_BATCH:
        if (f64) zscore_single(w, x, y, CLS_F64);
        else zscore_single(w, x, y, CLS_F32);
        break;
    }
}

void bench_ref_threads(const bench_workload *w, const void *x, const void *factors, void *y,
                       unsigned threads)
{
    if (!w || !x || !y || !bench_elements(w)) return;
    switch (w->kind) {
    case BENCH_MINMAX_MATRIX: minmax_threads(w, x, y, threads); break;
    case BENCH_DISCOUNT: {
        discount_job j = {.w = w, .x = x, .f = factors, .y = y};
        team_run(resolve_threads(threads), discount_worker, &j, NULL);
        break;
    }
    case BENCH_ZSCORE_BATCH: zscore_threads(w, x, y, threads); break;
    }
}
