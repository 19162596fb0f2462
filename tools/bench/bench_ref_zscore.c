/* The z-score-over-the-batch references (bench_ref.c says why two):
 * per-thread Welford, a Chan merge, then a threaded scaling pass; and the
 * single-thread loops. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_host.h"
#include "bench_ref_kernels.h"

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

void bench_ref_zscore_threads(const bench_workload *w, const void *x, void *y, unsigned threads)
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


void bench_ref_zscore_single(const bench_workload *w, const void *x, void *y)
{
    if (w->dtype == CLS_F64) zscore_single(w, x, y, CLS_F64);
    else zscore_single(w, x, y, CLS_F32);
}
