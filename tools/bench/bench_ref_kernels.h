/* The host references' inner loops (bench_ref*.c): contiguous runs of W
 * elements, the shape gcc vectorises at -O2 without -march flags. Private
 * to tools/bench/; every function is inlined with a constant dtype. */
#ifndef BENCH_REF_KERNELS_H
#define BENCH_REF_KERNELS_H

#include <float.h>
#include <math.h>

#include "bench_host.h"

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

#endif /* BENCH_REF_KERNELS_H */
