/* See pipeline_util.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_util.h"

double tol_for(cls_dtype t) { return t == CLS_F64 ? TOL_F64 : TOL_F32; }

int suite_runs(cls_dtype t)
{
    return t == CLS_F32 || !test_suite_is("rusticl");
}

cls_array make_out(const cls_array *x)
{
    cls_array y = ref_copy(x);
    size_t n = x->batch * x->rows * x->cols;
    for (size_t i = 0; i < n; i++) {
        if (y.dtype == CLS_F64) ((double *)y.data)[i] = -12345.0;
        else ((float *)y.data)[i] = -12345.0f;
    }
    return y;
}

void check_stats(const cls_stats *s, const cls_array *x, cls_scope scope, int has_moments, const char *label)
{
    cls_stats_info info;
    assert_int_equal(cls_stats_describe(s, &info), CLS_OK);
    size_t groups = ref_groups(x, scope);
    assert_int_equal(info.groups, groups);
    assert_int_equal(info.cols, x->cols);
    assert_int_equal(info.has_moments, has_moments);
    size_t n = groups * x->cols;
    cls_column_stats *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    ref_fit(x, scope, want);
    for (size_t g = 0; g < groups; g++)
        for (size_t c = 0; c < x->cols; c++)
            assert_int_equal(test_column(s, g, c, &got[g * x->cols + c]), CLS_OK);
    /* the device's float32 accumulation of m2 is the loosest part */
    double tol = x->dtype == CLS_F64 ? 1e-9 : 1e-4;
    size_t bad = ref_compare_stats(got, want, n, has_moments, tol, label);
    free(want);
    free(got);
    assert_int_equal(bad, 0);
}

cls_stats *check_fit_transform(cls_context *ctx, const cls_array *x, const cls_pipeline *p, const char *label)
{
    cls_array y = make_out(x);
    cls_stats *s = NULL;
    cls_status st = cls_fit_transform(ctx, p, x, &y, &s);
    if (st != CLS_OK) print_error("%s: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    assert_non_null(s);
    size_t n = x->batch * x->rows * x->cols;
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    ref_fit_transform(x, p, want, NULL);
    size_t bad = ref_compare(&y, want, tol_for(x->dtype), label);
    free(want);
    ref_free(&y);
    assert_int_equal(bad, 0);
    int moments = p->scaler == CLS_ZSCORE || p->scaler == CLS_NONE;
    check_stats(s, x, p->scope, moments, label);
    return s;
}

void check_transform(cls_context *ctx, const cls_array *x, const cls_pipeline *p, const cls_stats *s,
                     const cls_array *fit_on, const char *label)
{
    cls_array y = make_out(x);
    cls_status st = cls_transform(ctx, p, s, x, &y);
    if (st != CLS_OK) print_error("%s: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    size_t n = x->batch * x->rows * x->cols;
    size_t groups = ref_groups(fit_on, p->scope);
    cls_column_stats *rs = calloc(groups * x->cols, sizeof *rs);
    double *want = malloc(n * sizeof *want);
    assert_non_null(rs);
    assert_non_null(want);
    ref_fit(fit_on, p->scope, rs);
    ref_transform(x, p, p->scaler == CLS_NONE ? NULL : rs, want);
    size_t bad = ref_compare(&y, want, tol_for(x->dtype), label);
    free(rs);
    free(want);
    ref_free(&y);
    assert_int_equal(bad, 0);
}

/* An inverse returns values on the data's scale, computed from float32
 * parameters (mean, sd, min, range) that carry ~1e-7 of that scale: near
 * zero this exceeds 1e-5 of the value itself. Element i may differ by
 * tol * max(1, |want|, max |x| of its column). */
size_t compare_on_column_scale(const cls_array *y, const double *want, const cls_array *x, double tol,
                                      const char *label)
{
    double *scale = calloc(x->cols, sizeof *scale);
    assert_non_null(scale);
    size_t n = x->batch * x->rows * x->cols, wrong = 0;
    for (size_t i = 0; i < n; i++) {
        double v = fabs(ref_get(x, i));
        if (isfinite(v) && v > scale[i % x->cols]) scale[i % x->cols] = v;
    }
    for (size_t i = 0; i < n; i++) {
        double got = ref_get(y, i), w = want[i];
        int ok = isnan(w) ? isnan(got)
                 : isinf(w) ? got == w
                            : fabs(got - w) <= tol * fmax(fmax(1.0, fabs(w)), scale[i % x->cols]);
        if (ok) continue;
        if (wrong++ < 5) print_message("# %s: element %zu got %.9g want %.17g\n", label, i, got, w);
    }
    free(scale);
    return wrong;
}

int all_fp64(cls_context *ctx)
{
    for (size_t i = 0; i < cls_device_count(ctx); i++) {
        cls_device_info d;
        if (cls_device_get(ctx, i, &d) != CLS_OK || !d.fp64) return 0;
    }
    return 1;
}

void clean_into(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, int with_mask, cleaned *r)
{
    size_t ne = (scope == CLS_SCOPE_BATCH ? 1 : x->batch) * x->cols;
    memset(r, 0, sizeof *r);
    r->y = make_out(x);
    r->miss = calloc(ne, 8);
    r->clip = calloc(ne, 8);
    r->fill = calloc(ne, 8);
    r->lo = calloc(ne, 8);
    r->hi = calloc(ne, 8);
    if (with_mask) r->mask = malloc(x->batch * x->rows * x->cols + 1);
    o.missing_out = r->miss;
    o.clipped_out = r->clip;
    o.fill_out = r->fill;
    o.lower_out = r->lo;
    o.upper_out = r->hi;
    o.iterations_out = &r->iters;
    if (with_mask) o.mask_out = r->mask;
    cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &o}, x, &r->y, NULL);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
}

void cleaned_free(cleaned *r)
{
    ref_free(&r->y);
    free(r->miss);
    free(r->clip);
    free(r->fill);
    free(r->lo);
    free(r->hi);
    free(r->mask);
}
