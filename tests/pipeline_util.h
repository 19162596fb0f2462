/* Helpers shared by the pipeline tests: run a pipeline on the suite's
 * devices and compare with the float64 reference. */
#ifndef CLS_TEST_PIPELINE_UTIL_H
#define CLS_TEST_PIPELINE_UTIL_H

#include "common.h"
#include "reference.h"

/* Tolerances relative to max(1, |expected|). float32 results must match the
 * float64 reference to ~1e-5 even for offset data (DESIGN.md). */
#define TOL_F32 1e-5
#define TOL_F64 1e-10
double tol_for(cls_dtype t);

/* The devices of the suite able to run dtype t (rusticl has no float64). */
int suite_runs(cls_dtype t);

/* Fit-transforms x out of place on ctx, checks the output and the
 * statistics against the reference; returns the fitted statistics. */
cls_stats *check_fit_transform(cls_context *ctx, const cls_array *x, const cls_pipeline *p, const char *label);

/* Transforms with stats `s` and checks against the reference using the
 * reference's statistics of `fit_on`. */
void check_transform(cls_context *ctx, const cls_array *x, const cls_pipeline *p, const cls_stats *s,
                     const cls_array *fit_on, const char *label);

/* Checks cls_stats against reference statistics of x. */
void check_stats(const cls_stats *s, const cls_array *x, cls_scope scope, int has_moments, const char *label);

/* Compares an inverse transform's output on its column's scale: element i
 * may differ by tol * max(1, |want|, max |x| of its column), since float32
 * parameters carry ~1e-7 of the data's scale. Returns the wrong count. */
size_t compare_on_column_scale(const cls_array *y, const double *want, const cls_array *x, double tol,
                               const char *label);

/* An output array like x, filled with a sentinel. */
cls_array make_out(const cls_array *x);

/* Whether every device of ctx has float64. */
int all_fp64(cls_context *ctx);

/* A cleaning call's outputs, one entry per statistics group and column. */
typedef struct cleaned {
    cls_array y;
    uint64_t *miss, *clip;
    double   *fill, *lo, *hi;
    uint8_t  *mask;           /* NULL unless asked */
    unsigned  iters;
} cleaned;

/* cls_clean_data(ctx, o, scope, x) into a fresh r: every per-entry output
 * of o pointed at r's (and, with_mask, mask_out); fails the test with the
 * library's message on error. cleaned_free() frees r. */
void clean_into(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, int with_mask, cleaned *r);
void cleaned_free(cleaned *r);

#endif
