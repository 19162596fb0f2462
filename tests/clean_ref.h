/* Float64 references of the cleaning tests, plain C: quantiles and medians
 * by sorting (numpy's formulas written out), and hostile data. */
#ifndef CLS_TEST_CLEAN_REF_H
#define CLS_TEST_CLEAN_REF_H

#include "common.h"

/* Hostile columns, by column index modulo 8: 0 normal, 1 ties (small
 * integers), 2 heavy tails (Cauchy), 3 with NaN and +-Inf, 4 constant,
 * 5 all NaN, 6 float32 at a large offset (1e6 + small), 7 normal with NaN. */
cls_array cref_make(cls_dtype t, size_t b, size_t r, size_t c, uint64_t seed);
/* Columns that make the one-pass clipping kernels' sums over the sorted
 * values (clip.cl, clip_local.cl) work, two matrices of rows x cols, by
 * column modulo 6: outliers at many scales clipped one scale per iteration
 * (the sums of the clipped values outweigh those kept: summed afresh), a
 * lower bound creeping up (sigma_lower small: the range drifts away from the
 * first median), values doubling row by row, ties beside tiny differences,
 * a value per row of a ramp (with cref_make's NaN), one huge value. */
cls_array cref_make_scales(cls_dtype t, size_t rows, size_t cols, uint64_t seed);
void cref_free(cls_array *a);
double cref_get(const cls_array *a, size_t i);

/* The finite values of column c of group g (scope as the library's) sorted
 * ascending into out (room for rows of the group); returns how many. */
size_t cref_column(const cls_array *a, cls_scope scope, size_t g, size_t c, double *out);
/* numpy.nanquantile(linear) of sorted values v[0..n), for data of dtype t. */
double cref_quantile(const double *v, size_t n, double q, cls_dtype t);
/* numpy.nanmedian of sorted v[0..n) in dtype t. */
double cref_median(const double *v, size_t n, cls_dtype t);
/* Cleans column c of group g of x as the options say (astropy's
 * sigma_clip(axis=0): cumulative masks, median or mean centre, std or
 * mad_std; then SimpleImputer's fill): the reference output into want
 * (indexed like x), and the counts of missing and clipped values. */
void cref_clean_column(const cls_array *x, cls_scope scope, size_t g, size_t c, const cls_clean *o, double *want,
                       uint64_t *missing, uint64_t *clipped);
size_t cref_groups(const cls_array *a, cls_scope scope);
size_t cref_group_rows(const cls_array *a, cls_scope scope);

#endif
