/* Host arithmetic of the cleaning stage (src/clean/): pure C, no OpenCL. */
#ifndef CLS_CLEAN_HOST_H
#define CLS_CLEAN_HOST_H

#include <stdint.h>
#include <string.h>

#include "clscale.h"

/* Keys that sort as the values do, for counting equal values (the modes):
 * the sign bit flipped for positive values, every bit for negative ones;
 * -0.0 counts as +0.0. */
static inline uint64_t cls_mode_key(double v)
{
    if (v == 0) v = 0.0;
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
}

static inline double cls_mode_value(uint64_t k)
{
    uint64_t b = (k >> 63) ? k & ~((uint64_t)1 << 63) : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* astropy's mad_std factor: 1 / Phi^-1(3/4). */
#define CLS_MAD_STD 1.482602218505602

/* The most frequent values of `ncols` (at most CLS_MODE_COLS) neighbouring
 * columns, `rows` values each, starting at x, rows `ld` elements apart,
 * into out[0..ncols): values that are not finite or equal `sent`
 * (has_sent) skipped, and with lo (not NULL) those outside [lo[c], hi[c]]
 * (compared in the data's dtype, as the devices compare them; NaN bounds
 * skip nothing); scikit-learn's SimpleImputer most_frequent, the
 * smallest of ties; NaN when no value is left. -0.0 and +0.0 count as one
 * value (returned as +0.0). `scratch` holds CLS_MODE_SCRATCH(rows, ncols)
 * words (the values' keys and a radix sort's). */
#define CLS_MODE_COLS 8
#define CLS_MODE_COUNTS 12288u
#define CLS_MODE_SCRATCH(rows, ncols) (((size_t)(ncols) + 1) * (size_t)(rows) + CLS_MODE_COUNTS)
void cls_most_frequent_cols(const void *x, cls_dtype t, size_t ld, uint64_t rows, size_t ncols, int has_sent,
                            double sent, const double *lo, const double *hi, uint64_t *scratch, double *out);

/* Adds k copies of the finite value v to column statistics c (Chan's
 * formulas with a group of k equal values, whose m2 is 0). */
void cls_column_add_constant(cls_column_stats *c, uint64_t k, double v);

/* Imputation of n columns whose statistics (of the values kept, `rows`
 * each) are in col: fill[e] becomes the column's fill (imp 1: its mean,
 * rounded to float32 for float32 data, NaN when no value is kept; imp 2:
 * c; imp 0: NaN), missing[e] (when not NULL) its count of missing values,
 * and col[e] the statistics of the imputed column (the missing values'
 * copies of a finite fill added, none missing then), as the cleaning
 * stage's last pass makes them. */
void cls_impute_columns(cls_column_stats *col, size_t n, uint64_t rows, unsigned imp, double c, cls_dtype t,
                        double *fill, uint64_t *missing);

/* The same for one column: returns its fill, and its missing count in
 * *missing (may be NULL). */
double cls_impute_column(cls_column_stats *s, uint64_t rows, unsigned imp, double c, cls_dtype t,
                         uint64_t *missing);

#endif
