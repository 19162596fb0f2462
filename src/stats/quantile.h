/* numpy's quantile arithmetic on order statistics, so that values found by
 * counting on the devices give numpy's answers bit for bit. Pure C.
 *
 * Order statistics are 0-based ranks among a column's n values that take
 * part (finite, not the sentinel, inside the clip bounds); quantile q of
 * them is numpy.nanquantile(method="linear"): v = (n - 1) * q in float64;
 * v >= n - 1 gives the largest; else the values of ranks floor(v) and
 * floor(v) + 1 interpolated as numpy's _lerp does. The median is numpy's
 * nanmedian: the mean of the two middle values (in the data's dtype). */
#ifndef CLS_QUANTILE_H
#define CLS_QUANTILE_H

#include <stdint.h>

#include "clscale.h"

/* The ranks quantile q (in [0, 1]) of n >= 1 values interpolates between,
 * and the weight of the upper one. Inline, as the next: cls_host_quantiles()
 * runs both for every column (millions per call). */
static inline void cls_quantile_ranks(double q, uint64_t n, uint64_t *lo, uint64_t *hi, double *gamma)
{
    double v = ((double)n - 1.0) * q;
    if (v >= (double)n - 1.0) {
        *lo = *hi = n - 1;
        *gamma = 0.0;
        return;
    }
    /* v >= 0: the truncation is floor */
    uint64_t f = (uint64_t)v;
    *lo = f;
    *hi = f + 1;
    *gamma = v - (double)f;
}

/* numpy's _lerp(a, b, t): a + (b - a) * t, or b - (b - a) * (1 - t) for
 * t >= 0.5; b - a in the data's dtype (numpy subtracts the float32 values
 * before the float64 weight meets them). */
static inline double cls_quantile_lerp(double a, double b, double t, cls_dtype dt)
{
    double d = dt == CLS_F32 ? (double)((float)b - (float)a) : b - a;
    return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}
/* The ranks of the median of n >= 1 values (equal for odd n). */
void cls_median_ranks(uint64_t n, uint64_t *lo, uint64_t *hi);
/* numpy's median of the middle values a <= b: (a + b) / 2 in dtype, a when n is odd. */
double cls_median_of(double a, double b, uint64_t n, cls_dtype dt);

/* The order-preserving key of a value of dtype dt and back. */
uint64_t cls_key_of(double v, cls_dtype dt);
double cls_value_of_key(uint64_t k, cls_dtype dt);

#endif
