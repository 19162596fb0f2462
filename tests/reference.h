/* The float64 reference every device test compares with, and the test data
 * generators. Plain C written to be obviously right, not fast; it never calls
 * the clscale library (it is the independent oracle), only reads its types.
 *
 * Semantics (docs: DESIGN.md "Data model"): statistics per column over the
 * rows of a group (CLS_SCOPE_MATRIX: each matrix; CLS_SCOPE_BATCH: all
 * batch x rows rows); NaN and +-Inf are missing: ignored by the fit, passed
 * through by the scaler; the discount then multiplies every value, missing
 * ones included. Float data is read as stored and computed on in double. */
#ifndef CLS_TEST_REFERENCE_H
#define CLS_TEST_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "clscale.h"
#include "common.h" /* rng */

/* Statistics groups of a shape under a scope: batch, or 1. */
size_t ref_groups(const cls_array *x, cls_scope scope);

/* Statistics over the finite values; `out` has ref_groups(x, scope) * x->cols
 * entries, [g * cols + c]. Mean and m2 by a corrected two-pass sum in long
 * double; count 0 gives NaN min, max, mean, m2 and absmax. */
void ref_fit(const cls_array *x, cls_scope scope, cls_column_stats *out);

/* Whether `factors` broadcast against x (numpy rules, right-aligned, a factor
 * dimension equal to the data's or 1). When they do, fills the element
 * strides into the factors' data for x's batch, rows and cols (0 where
 * broadcast) and returns 1; else returns 0. */
int ref_broadcast(const cls_array *x, const cls_array *factors, size_t strides[3]);

/* The pipeline applied to x with `stats` (ref_groups(x, p->scope) * cols
 * entries; may be NULL when p->scaler == CLS_NONE); `out` receives
 * batch * rows * cols doubles. The inverse ignores `clip`. Fails the running
 * test on misuse (no stats for a scaler, factors that do not broadcast). */
void ref_transform(const cls_array *x, const cls_pipeline *p, const cls_column_stats *stats, double *out);

/* Fits (always: CLS_NONE is a describe) then transforms; `stats_out` may be
 * NULL, else receives ref_groups(x, p->scope) * cols entries. */
void ref_fit_transform(const cls_array *x, const cls_pipeline *p, double *out, cls_column_stats *stats_out);

/* Compares a device result y (float or double) with the reference: element i
 * is wrong when |y - want| > tol * max(1, |want|) (NaN equals NaN, an infinity
 * equals itself). Prints the first 5 wrong elements as
 * "label: [b, r, c] got G want W" with print_message.
 * @return the number of wrong elements. */
size_t ref_compare(const cls_array *y, const double *want, double tol, const char *label);

/* The same for n statistics entries: count and missing exactly; min, max and
 * absmax (and mean and m2 when has_moments) within tol as above. Prints the
 * wrong fields of the first 5 wrong entries.
 * @return the number of wrong entries. */
size_t ref_compare_stats(const cls_column_stats *got, const cls_column_stats *want, size_t n, int has_moments,
                         double tol, const char *label);

/* ref_make() features. */
enum {
    REF_MISSING = 1 << 0,     /* ~3% of values NaN, +Inf or -Inf, spread over columns (at least one) */
    REF_CONSTANT = 1 << 1,    /* column 0 holds one value in every matrix (the same one for all) */
    REF_ALL_MISSING = 1 << 2, /* the last column is all NaN/+-Inf (if cols > 2) */
    REF_OFFSET = 1 << 3,      /* column c: mean = 1e4 * sd, sd in [0.5, 2]; values mean + sd * N(0,1) */
    REF_NEGATIVE = 1 << 4,    /* values span negative and positive, scales differing per column
                                 (with REF_OFFSET: odd columns get mean -1e4 * sd) */
};

/* Test data: a malloc'ed array (free with ref_free()) of seeded random
 * values, never all zeros, with optional features. Without features column c
 * is uniform over a positive range whose offset and width depend on c, so a
 * wrong column index shows. The same seed gives the same data everywhere. */
cls_array ref_make(cls_dtype dtype, size_t batch, size_t rows, size_t cols, uint64_t seed, unsigned features);

/* Discount factors of the given shape (1-D: batch = rows = 1), uniform in
 * [0.5, 1.5). */
cls_array ref_make_factors(cls_dtype dtype, size_t batch, size_t rows, size_t cols, uint64_t seed);

void ref_free(cls_array *a);

/* A malloc'ed copy of a (same dtype and shape), for in-place tests. */
cls_array ref_copy(const cls_array *a);

/* Element i (flat, C order) as double. */
double ref_get(const cls_array *a, size_t i);

#endif
