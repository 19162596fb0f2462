/* The min-max-per-matrix references (bench_ref.c says why two): column
 * blocks that stay in L2 between the statistics and the scaling, the next
 * block prefetched, threads over blocks; and the single-thread loops. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_host.h"
#include "bench_ref_kernels.h"

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

void bench_ref_minmax_threads(const bench_workload *w, const void *x, void *y, unsigned threads)
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
        bench_ref_minmax_threads(w, x, y, 1);
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


void bench_ref_minmax_single(const bench_workload *w, const void *x, void *y)
{
    if (w->dtype == CLS_F64) minmax_single(w, x, y, CLS_F64);
    else minmax_single(w, x, y, CLS_F32);
}
