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
 * here prints or aborts. Calls only libc, libm and the team (bench_threads.c).
 *
 * This file: the discount and the two entry points; min-max in
 * bench_ref_minmax.c, z-score in bench_ref_zscore.c, the shared inner loops
 * in bench_ref_kernels.h. */
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
#include "bench_ref_kernels.h"

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

/* ---- the references ----------------------------------------------------- */

void bench_ref_single(const bench_workload *w, const void *x, const void *factors, void *y)
{
    if (!w || !x || !y || !bench_elements(w)) return;
    int f64 = w->dtype == CLS_F64;
    switch (w->kind) {
    case BENCH_MINMAX_MATRIX:
        bench_ref_minmax_single(w, x, y);
        break;
    case BENCH_DISCOUNT:
        if (f64) discount_single(w, x, factors, y, CLS_F64);
        else discount_single(w, x, factors, y, CLS_F32);
        break;
    case BENCH_ZSCORE_BATCH:
        bench_ref_zscore_single(w, x, y);
        break;
    }
}

void bench_ref_threads(const bench_workload *w, const void *x, const void *factors, void *y,
                       unsigned threads)
{
    if (!w || !x || !y || !bench_elements(w)) return;
    switch (w->kind) {
    case BENCH_MINMAX_MATRIX: bench_ref_minmax_threads(w, x, y, threads); break;
    case BENCH_DISCOUNT: {
        discount_job j = {.w = w, .x = x, .f = factors, .y = y};
        team_run(resolve_threads(threads), discount_worker, &j, NULL);
        break;
    }
    case BENCH_ZSCORE_BATCH: bench_ref_zscore_threads(w, x, y, threads); break;
    }
}

