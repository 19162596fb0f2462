/* Imputation fused into the scaling (clean/impute_fused.c, the *_imp
 * kernels): cls_fit_transform with a cleaning stage that imputes by the
 * mean or a constant, or only names a sentinel, ahead of min-max, z-score,
 * max-abs or decimal, against
 *   - a float64 reference in plain C written below (SimpleImputer, then the
 *     scaler fitted on the imputed column), and
 *   - the cleaning stage's own passes (clean.c), which a context made with
 *     the switch impute_unfused takes: outputs, fitted statistics, missing
 *     counts and fills.
 * The two paths sum in different orders (clean.c per row, float32 in
 * float64; the fused kernel in blocks of 16 rows merged by Chan's
 * formulas, float32 in float32), so they agree to rounding, not bit for
 * bit: an element may differ by a relative tolerance plus 64 units in the
 * last place of its column's magnitude times the scaler's multiplier (a
 * float32 fill rounded to the other neighbour of the mean is one such
 * unit). Data: hostile columns (clean_ref.c: NaN, +-Inf, a constant
 * column, an all-NaN column, ties that hold the sentinel, a large offset),
 * both scopes and dtypes, a group larger than a slice (two phases), groups
 * taller than one work-item's column, the discount, shapes of 1, and a
 * float32 column whose mean is 1e4 times its spread. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"
#include "pipeline_util.h"

typedef struct refcol {
    double fill, mean, m2, mn, mx, m; /* m: the scaler's multiplier */
    uint64_t count, missing;
    double scale;                     /* max |x| of the column, for the tolerance */
} refcol;

static int is_missing(double v, const cls_clean *o)
{
    return !isfinite(v) || (o->has_missing_value && v == o->missing_value);
}

/* SimpleImputer then the scaler on column (g, c): want[] indexed like x. */
static refcol ref_column(const cls_array *x, cls_scope scope, size_t g, size_t c, const cls_clean *o,
                         cls_scaler scaler, const double *factors, double *want)
{
    refcol rc;
    memset(&rc, 0, sizeof rc);
    cls_dtype t = x->dtype;
    size_t R = cref_group_rows(x, scope), C = x->cols, base = g * R * C + c;
    size_t n = 0;
    double sum = 0;
    for (size_t r = 0; r < R; r++) {
        double v = cref_get(x, base + r * C);
        if (is_missing(v, o)) continue;
        n++;
        sum += v;
        rc.scale = fmax(rc.scale, fabs(v));
    }
    double mean0 = n ? sum / (double)n : NAN;
    rc.fill = NAN;
    if (o->impute == CLS_IMPUTE_MEAN && n) rc.fill = t == CLS_F32 ? (double)(float)mean0 : mean0;
    if (o->impute == CLS_IMPUTE_CONSTANT) rc.fill = o->fill_value;
    int filled = isfinite(rc.fill);
    if (filled) rc.scale = fmax(rc.scale, fabs(rc.fill));
    rc.missing = R - n;
    /* the imputed column's statistics, two-pass */
    rc.count = 0;
    rc.mn = INFINITY;
    rc.mx = -INFINITY;
    sum = 0;
    for (size_t r = 0; r < R; r++) {
        double v = cref_get(x, base + r * C);
        if (is_missing(v, o)) {
            if (!filled) continue;
            v = rc.fill;
        }
        rc.count++;
        sum += v;
        rc.mn = fmin(rc.mn, v);
        rc.mx = fmax(rc.mx, v);
    }
    rc.mean = rc.count ? sum / (double)rc.count : NAN;
    rc.m2 = 0;
    for (size_t r = 0; r < R; r++) {
        double v = cref_get(x, base + r * C);
        if (is_missing(v, o)) {
            if (!filled) continue;
            v = rc.fill;
        }
        rc.m2 += (v - rc.mean) * (v - rc.mean);
    }
    double shift = 0, o_ = 0;
    rc.m = 1;
    if (scaler == CLS_ZSCORE) {
        double sd = rc.count ? sqrt(rc.m2 / (double)rc.count) : 0;
        shift = rc.mean;
        rc.m = sd > 0 ? 1 / sd : 0;
    } else if (scaler == CLS_MINMAX) {
        double range = rc.mx - rc.mn;
        shift = rc.mn;
        rc.m = range > 0 ? 1 / range : 0;
    } else if (scaler == CLS_MAXABS) {
        double a = fmax(fabs(rc.mn), fabs(rc.mx));
        rc.m = a >= 10 * (t == CLS_F64 ? DBL_EPSILON : FLT_EPSILON) ? 1 / a : 1;
    }
    for (size_t r = 0; r < R; r++) {
        size_t i = base + r * C;
        double v = cref_get(x, i), y;
        if (!is_missing(v, o)) y = (v - shift) * rc.m + o_;
        else if (o->impute != CLS_IMPUTE_NONE) y = filled ? (rc.fill - shift) * rc.m + o_ : NAN;
        else y = isfinite(v) ? NAN : v; /* a sentinel alone becomes NaN; NaN and +-Inf stay */
        want[i] = factors ? y * factors[i] : y;
    }
    return rc;
}

/* Whether got is want to the tolerance of the file's comment. */
static int close_to(double got, double want, cls_dtype t, double colscale, double m)
{
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (got == want) return 1;
    double eps = t == CLS_F64 ? DBL_EPSILON : FLT_EPSILON, tol = t == CLS_F64 ? TOL_F64 : TOL_F32;
    return fabs(got - want) <= tol * fmax(1, fabs(want)) + 64 * eps * colscale * fabs(m);
}

/* strict (float32 offset columns): a kept value within 1e-5 relative, a
 * filled one within a unit in the last place of the float32 fill. */
static int strict;

static size_t compare(const cls_array *y, const double *want, const refcol *rc, const cls_array *x,
                      cls_scope scope, const double *factors, const cls_clean *o, const char *label,
                      const char *what)
{
    size_t R = cref_group_rows(x, scope), C = x->cols, n = x->batch * x->rows * C, bad = 0;
    for (size_t i = 0; i < n; i++) {
        const refcol *k = &rc[(i / (R * C)) * C + i % C];
        double f = factors ? fabs(factors[i]) : 1;
        double got = cref_get(y, i), w = want[i];
        if (strict) {
            double unit = is_missing(cref_get(x, i), o) ? fabs(k->fill) * FLT_EPSILON * fabs(k->m) : 0;
            if (fabs(got - w) <= TOL_F32 * fmax(1, fabs(w)) + unit) continue;
        } else if (close_to(got, w, x->dtype, k->scale * f, k->m)) {
            continue;
        }
        if (bad++ < 5)
            printf("# %s: %s: element %zu (column %zu): got %.17g want %.17g\n", label, what, i, i % C, got, w);
    }
    return bad;
}

static void compare_stats(cls_stats *got, const refcol *rc, size_t ne, cls_dtype t, const char *label,
                          const char *what)
{
    cls_column_stats *s = cls_stats_columns(got);
    assert_non_null(s);
    for (size_t e = 0; e < ne; e++) {
        const refcol *w = &rc[e];
        double eps = t == CLS_F64 ? 1e-12 : 1e-6, sd = w->count ? sqrt(w->m2 / (double)w->count) : 0;
        uint64_t wmiss = isfinite(w->fill) ? 0 : w->missing;
        int ok = s[e].count == w->count && s[e].missing == wmiss;
        if (w->count) {
            ok = ok && s[e].min == w->mn && s[e].max == w->mx;
            ok = ok && fabs(s[e].mean - w->mean) <= eps * (fabs(w->mean) + sd) * 4;
            ok = ok && fabs(s[e].m2 - w->m2) <= (t == CLS_F64 ? 1e-9 : 1e-4) * w->m2 + eps * w->scale * w->scale;
        }
        if (!ok)
            fail_msg("%s: %s statistics of entry %zu: count %llu missing %llu min %.17g max %.17g mean %.17g "
                     "m2 %.17g; want %llu %llu %.17g %.17g %.17g %.17g", label, what, e,
                     (unsigned long long)s[e].count, (unsigned long long)s[e].missing, s[e].min, s[e].max,
                     s[e].mean, s[e].m2, (unsigned long long)w->count,
                     (unsigned long long)wmiss, w->mn, w->mx, w->mean, w->m2);
    }
}

static int oclgrind(void) { return test_suite_is("oclgrind"); }
/* Oclgrind and rusticl (8-20x slower than PoCL, cold builds of every
 * kernel) run fewer and smaller cases. */
static int light(void) { return oclgrind() || test_suite_is("rusticl"); }
/* rusticl's cold builds of the scaling kernels take minutes each here:
 * its cases all name a sentinel (the builds with the most code, shared by
 * the cases), and clean.c's path is compared on PoCL and Oclgrind only. */
static int rusticl(void) { return test_suite_is("rusticl"); }

/* The clean.c path: a context with the switch impute_unfused. */
static cls_context *unfused_context(size_t slice_bytes)
{
    cls_tuning t = test_tune;
    t.impute_unfused = 1;
    return test_context_tuned(&t, NULL, 0, slice_bytes);
}

/* Fit-transforms x with cleaning `o` and `scaler` on ctx (fused) and on
 * old (clean.c's passes; NULL: not compared), checks both against the
 * reference and each other. */
static void check(cls_context *ctx, cls_context *old, const cls_array *x, cls_scope scope, cls_clean o,
                  cls_scaler scaler, const cls_array *factors, const char *label)
{
    size_t n = x->batch * x->rows * x->cols, G = cref_groups(x, scope), ne = G * x->cols;
    if (rusticl()) old = NULL;
    double *fw = NULL;
    if (factors) {
        fw = malloc(n * sizeof *fw);
        for (size_t i = 0; i < n; i++) fw[i] = cref_get(factors, i);
    }
    double *want = malloc(n * sizeof *want), *fill = malloc(ne * sizeof *fill), *fill2 = malloc(ne * sizeof *fill2);
    uint64_t *miss = calloc(ne, 8), *miss2 = calloc(ne, 8), *clip = malloc(ne * 8);
    memset(clip, 0xff, ne * 8);
    refcol *rc = malloc(ne * sizeof *rc);
    for (size_t g = 0; g < G; g++)
        for (size_t c = 0; c < x->cols; c++)
            rc[g * x->cols + c] = ref_column(x, scope, g, c, &o, scaler, fw, want);
    cls_pipeline p = {.scaler = scaler, .scope = scope, .clean = &o, .factors = factors};
    cls_array y = make_out(x), y2 = make_out(x);
    cls_stats *s = NULL, *s2 = NULL;
    o.missing_out = miss;
    o.fill_out = fill;
    o.clipped_out = clip;
    cls_status st = cls_fit_transform(ctx, &p, x, &y, &s);
    if (st != CLS_OK) fail_msg("%s: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
    int decimal = scaler == CLS_DECIMAL; /* compared with clean.c's path only */
    if (!decimal) {
        assert_int_equal(compare(&y, want, rc, x, scope, fw, &o, label, "vs reference"), 0);
        if (!factors) compare_stats(s, rc, ne, x->dtype, label, "fused");
    }
    /* nobody wants the statistics: the kernels skip them, and min-max sums
     * the mean itself instead of taking the moments */
    {
        cls_clean q = o;
        q.missing_out = NULL;
        q.fill_out = NULL;
        q.clipped_out = NULL;
        cls_pipeline pq = p;
        pq.clean = &q;
        st = cls_fit_transform(ctx, &pq, x, &y2, NULL);
        if (st != CLS_OK) fail_msg("%s (no statistics): %s: %s", label, cls_status_str(st), cls_last_error(ctx));
        if (!decimal) assert_int_equal(compare(&y2, want, rc, x, scope, fw, &o, label, "no statistics"), 0);
    }
    for (size_t e = 0; e < ne; e++) {
        assert_int_equal(miss[e], rc[e].missing);
        assert_int_equal(clip[e], 0);
        /* a float32 mean is summed in float32 on the device: a unit in
         * the last place of the mean plus the sum's rounding */
        double eps = x->dtype == CLS_F64 ? DBL_EPSILON : FLT_EPSILON;
        double tf = 2 * eps * fabs(rc[e].fill) + 16 * eps * rc[e].scale;
        if (!(isnan(fill[e]) && isnan(rc[e].fill)) && !(fabs(fill[e] - rc[e].fill) <= tf))
            fail_msg("%s: fill of entry %zu: %.17g, want %.17g", label, e, fill[e], rc[e].fill);
    }
    if (old) {
        o.missing_out = miss2;
        o.fill_out = fill2;
        /* clean.c's statistics of max-abs fail cls_stats_create's check of
         * the scaler (it stops at CLS_DECIMAL): not asked for there */
        int stats2 = scaler != CLS_MAXABS;
        st = cls_fit_transform(old, &p, x, &y2, stats2 ? &s2 : NULL);
        if (st != CLS_OK) fail_msg("%s (clean.c): %s: %s", label, cls_status_str(st), cls_last_error(old));
        double *w2 = malloc(n * sizeof *w2);
        for (size_t i = 0; i < n; i++) w2[i] = cref_get(&y2, i);
        assert_int_equal(compare(&y, w2, rc, x, scope, fw, &o, label, "vs clean.c"), 0);
        free(w2);
        assert_memory_equal(miss, miss2, ne * 8);
        if (stats2 && !factors && !decimal) compare_stats(s2, rc, ne, x->dtype, label, "clean.c");
        cls_stats_info a, b;
        if (stats2) {
            assert_int_equal(cls_stats_describe(s, &a), CLS_OK);
            assert_int_equal(cls_stats_describe(s2, &b), CLS_OK);
            assert_int_equal(a.groups, b.groups);
            assert_int_equal(a.cols, b.cols);
            assert_int_equal(a.rows, b.rows);
            assert_int_equal(a.has_moments, b.has_moments);
            assert_true(a.lo == b.lo && a.hi == b.hi && a.scaler == b.scaler && a.scope == b.scope);
        }
    }
    cls_stats_destroy(s);
    cls_stats_destroy(s2);
    ref_free(&y);
    ref_free(&y2);
    free(want);
    free(fill);
    free(fill2);
    free(miss);
    free(miss2);
    free(clip);
    free(rc);
    free(fw);
}


static void fused_matches_reference_and_clean_path(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0), *old = unfused_context(0);
    /* CLS_NONE: imputation alone, the identity map after the fill */
    const cls_scaler scalers[] = {CLS_ZSCORE, CLS_MINMAX, CLS_MAXABS, CLS_DECIMAL, CLS_NONE};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        cls_array x = cref_make(t, 3, light() ? 9 : 61, 16, 700 + (uint64_t)ti);
        for (int sc = 0; sc < 2; sc++)
            for (int v = 0; v < 5; v++)
                for (size_t k = 0; k < 5; k++) {
                    if (light() && ((k >= 2 && k < 4) || v == 1 || v == 2)) continue;
                    if (rusticl() && v == 0) continue;
                    /* v: mean, mean + sentinel, constant, constant + sentinel, sentinel alone */
                    cls_clean o = {.impute = v == 4 ? CLS_IMPUTE_NONE : v < 2 ? CLS_IMPUTE_MEAN
                                                                      : CLS_IMPUTE_CONSTANT,
                                   .fill_value = -3.5, .has_missing_value = v == 1 || v >= 3,
                                   .missing_value = -2};
                    char label[96];
                    snprintf(label, sizeof label, "%s %s imputation %d scaler %d", ti ? "f64" : "f32",
                             sc ? "batch" : "matrix", v, (int)scalers[k]);
                    check(ctx, old, &x, sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX, o, scalers[k], NULL, label);
                }
        cref_free(&x);
    }
    cls_context_destroy(old);
    cls_context_destroy(ctx);
}

/* min-max with clipping to [lo, hi]: the fill is clipped like the values. */
static void range_and_clip_apply_to_the_fill(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0), *old = unfused_context(0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 2, oclgrind() ? 9 : 40, 8, 710);
    cls_clean o = {.impute = CLS_IMPUTE_CONSTANT, .fill_value = 1e9};
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = -1, .hi = 2, .clip = 1, .clean = &o};
    cls_array y = make_out(&x), y2 = make_out(&x);
    assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(old, &p, &x, &y2, NULL), CLS_OK);
    size_t n = x.batch * x.rows * x.cols;
    for (size_t i = 0; i < n; i++) {
        double a = cref_get(&y, i), b = cref_get(&y2, i);
        assert_true(a >= -1 && a <= 2);
        assert_close(a, b, t == CLS_F64 ? 1e-12 : 1e-6);
    }
    ref_free(&y);
    ref_free(&y2);
    cref_free(&x);
    cls_context_destroy(old);
    cls_context_destroy(ctx);
}

/* A group taller than one work-item's column (4096 rows) and larger than
 * a slice: statistics, host params from the imputed columns' statistics,
 * then the scaling pass with a fifth params plane (the scaled fill). */
static void two_phases_when_a_group_exceeds_a_slice(void **state)
{
    (void)state;
    if (rusticl()) test_skip("minutes on rusticl (its cold builds); PoCL and Oclgrind run it");
    cls_context *ctx = test_context(NULL, 0, 4096), *old = unfused_context(4096);
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t) || (light() && ti)) continue;
        cls_array x = cref_make(t, 2, 2100, light() ? 4 : 8, 720 + (uint64_t)ti);
        cls_clean m = {.impute = CLS_IMPUTE_MEAN, .has_missing_value = 1, .missing_value = 2};
        cls_clean k = {.impute = CLS_IMPUTE_CONSTANT, .fill_value = 0.5};
        check(ctx, old, &x, CLS_SCOPE_BATCH, m, CLS_ZSCORE, NULL, ti ? "two phases mean f64" : "two phases mean f32");
        check(ctx, old, &x, CLS_SCOPE_BATCH, m, CLS_NONE, NULL, ti ? "two phases mean alone f64" : "two phases mean alone f32");
        if (!light())
            check(ctx, old, &x, CLS_SCOPE_BATCH, k, CLS_MINMAX, NULL, ti ? "two phases const f64" : "two phases const f32");
        cref_free(&x);
    }
    cls_context_destroy(old);
    cls_context_destroy(ctx);
}

/* Groups taller than one work-item's column (4096 rows): chunked
 * statistics, params and fill made on the device, then the scaling. */
static void tall_groups_in_one_pass(void **state)
{
    (void)state;
    if (rusticl()) test_skip("minutes on rusticl (its cold builds); PoCL runs it");
    if (oclgrind()) test_skip("12600 values a pass: minutes on Oclgrind; PoCL runs it");
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 3, 1400, light() ? 4 : 8, 730);
    cls_clean m = {.impute = CLS_IMPUTE_MEAN, .has_missing_value = 1, .missing_value = -2};
    cls_clean k = {.impute = CLS_IMPUTE_CONSTANT, .fill_value = 3};
    check(ctx, NULL, &x, CLS_SCOPE_BATCH, m, CLS_ZSCORE, NULL, "tall mean zscore");
    if (!light()) check(ctx, NULL, &x, CLS_SCOPE_BATCH, k, CLS_MAXABS, NULL, "tall constant maxabs");
    cref_free(&x);
    cls_context_destroy(ctx);
}

/* The discount factors multiply the scaled values and fills alike. */
static void discount_fuses_too(void **state)
{
    (void)state;
    if (rusticl()) test_skip("minutes on rusticl (its cold builds); PoCL and Oclgrind run it");
    cls_context *ctx = test_context(NULL, 0, 0), *old = unfused_context(0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    size_t R = light() ? 9 : 50;
    cls_array x = cref_make(t, 2, R, 16, 740);
    cls_array f = {.data = malloc(R * (t == CLS_F64 ? 8 : 4)), .dtype = t, .batch = 1, .rows = R, .cols = 1};
    for (size_t r = 0; r < R; r++) {
        double v = pow(0.97, (double)r);
        if (t == CLS_F64) ((double *)f.data)[r] = v;
        else ((float *)f.data)[r] = (float)v;
    }
    /* the reference multiplies element by element: expand the factors */
    cls_array fe = {.data = malloc(2 * R * 16 * 8), .dtype = CLS_F64, .batch = 2, .rows = R, .cols = 16};
    for (size_t i = 0; i < 2 * R * 16; i++) ((double *)fe.data)[i] = cref_get(&f, (i / 16) % R);
    cls_clean m = {.impute = CLS_IMPUTE_MEAN};
    size_t n = 2 * R * 16;
    double *want = malloc(n * sizeof *want);
    refcol rc[32];
    for (size_t g = 0; g < 2; g++)
        for (size_t c = 0; c < 16; c++)
            rc[g * 16 + c] = ref_column(&x, CLS_SCOPE_MATRIX, g, c, &m, CLS_ZSCORE, fe.data, want);
    cls_pipeline p = {.scaler = CLS_ZSCORE, .clean = &m, .factors = &f};
    cls_array y = make_out(&x), y2 = make_out(&x);
    assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
    assert_int_equal(compare(&y, want, rc, &x, CLS_SCOPE_MATRIX, fe.data, &m, "discount", "vs reference"), 0);
    assert_int_equal(cls_fit_transform(old, &p, &x, &y2, NULL), CLS_OK);
    for (size_t i = 0; i < n; i++) want[i] = cref_get(&y2, i);
    assert_int_equal(compare(&y, want, rc, &x, CLS_SCOPE_MATRIX, fe.data, &m, "discount", "vs clean.c"), 0);
    free(want);
    ref_free(&y);
    ref_free(&y2);
    free(f.data);
    free(fe.data);
    cref_free(&x);
    cls_context_destroy(old);
    cls_context_destroy(ctx);
}

static void shapes_of_one(void **state)
{
    (void)state;
    if (rusticl()) test_skip("minutes on rusticl (its cold builds); PoCL and Oclgrind run it");
    cls_context *ctx = test_context(NULL, 0, 0), *old = unfused_context(0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    const size_t shapes[][3] = {{1, 1, 1}, {1, 1, 9}, {1, 7, 1}, {5, 1, 3}, {1, 3, 6}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        cls_array x = cref_make(t, shapes[s][0], shapes[s][1], shapes[s][2], 750 + s);
        cls_clean m = {.impute = CLS_IMPUTE_MEAN, .has_missing_value = 1, .missing_value = 7.25};
        cls_clean k = {.impute = CLS_IMPUTE_CONSTANT, .fill_value = -1};
        char label[64];
        snprintf(label, sizeof label, "shape %zu x %zu x %zu", shapes[s][0], shapes[s][1], shapes[s][2]);
        check(ctx, old, &x, CLS_SCOPE_MATRIX, m, CLS_ZSCORE, NULL, label);
        if (!light() || (s == 0 && !rusticl())) check(ctx, old, &x, CLS_SCOPE_BATCH, k, CLS_MINMAX, NULL, label);
        cref_free(&x);
    }
    cls_context_destroy(old);
    cls_context_destroy(ctx);
}

/* float32: a column whose mean is 1e4 times its spread, 10% missing,
 * matches the float64 reference to 1e-5 relative (the fills to one unit
 * in the last place of the float32 mean, which is the value imputed). */
static void put(cls_array *a, size_t i, double v)
{
    if (a->dtype == CLS_F64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

/* cls_fit_transform imputing alone (mean, constant, a sentinel alone) takes
 * the engine's one pass too (its report says so; the cleaning stage's
 * passes leave none): values present come out with their bits (-0.0
 * too), missing ones as the cleaning stage's passes fill them (to the
 * fill's rounding), the same counts and fills. */
static void imputation_alone_in_one_pass(void **state)
{
    (void)state;
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 3, light() ? 9 : 61, 16, 740);
    size_t n = x.batch * x.rows * x.cols;
    for (size_t i = 0; i < n; i += 37) put(&x, i, -0.0);
    for (int sc = 0; sc < 2; sc++)
        for (int v = 0; v < 3; v++) {
            cls_scope scope = sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
            size_t ne = cref_groups(&x, scope) * x.cols;
            cls_context *ctx = test_context(NULL, 0, 0), *old = unfused_context(0);
            uint64_t *miss = calloc(ne, 8), *miss2 = calloc(ne, 8);
            double *fill = malloc(ne * 8), *fill2 = malloc(ne * 8);
            cls_clean o = {.impute = v == 0 ? CLS_IMPUTE_MEAN : v == 1 ? CLS_IMPUTE_CONSTANT : CLS_IMPUTE_NONE,
                           .fill_value = -3.5, .has_missing_value = v != 0, .missing_value = -2,
                           .missing_out = miss, .fill_out = fill};
            cls_array y = make_out(&x), y2 = make_out(&x);
            if (cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &o}, &x, &y, NULL) != CLS_OK) fail_msg("%s", cls_last_error(ctx));
            cls_report r;
            assert_int_equal(cls_last_report(ctx, &r), CLS_OK);
            assert_true(r.phases >= 1 && r.slices_done > 0);
            o.missing_out = miss2;
            o.fill_out = fill2;
            if (cls_fit_transform(old, &(cls_pipeline){.scope = scope, .clean = &o}, &x, &y2, NULL) != CLS_OK) fail_msg("%s", cls_last_error(old));
            assert_memory_equal(miss, miss2, ne * 8);
            size_t R = cref_group_rows(&x, scope), bad = 0;
            for (size_t i = 0; i < n; i++) {
                double a = cref_get(&y, i), b = cref_get(&y2, i), in = cref_get(&x, i);
                size_t e = (i / (R * x.cols)) * x.cols + i % x.cols;
                int present = isfinite(in) && !(v != 0 && in == -2);
                int ok = present ? (a == b && signbit(a) == signbit(in))
                                 : (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= 4 * FLT_EPSILON * fmax(1, fabs(fill2[e]));
                if (!ok && bad++ < 5)
                    printf("# scope %d imputation %d: element %zu: %.17g, the passes %.17g (input %.17g)\n", sc, v, i,
                           a, b, in);
            }
            assert_int_equal(bad, 0);
            ref_free(&y);
            ref_free(&y2);
            free(miss);
            free(miss2);
            free(fill);
            free(fill2);
            cls_context_destroy(old);
            cls_context_destroy(ctx);
        }
    cref_free(&x);
}

static void float32_offset_columns_keep_their_precision(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t R = light() ? 40 : 500, C = 9;
    cls_array x = {.data = malloc(2 * R * C * 4), .dtype = CLS_F32, .batch = 2, .rows = R, .cols = C};
    rng g;
    rng_seed(&g, 760);
    for (size_t i = 0; i < 2 * R * C; i++)
        ((float *)x.data)[i] = rng_uniform(&g) < 0.1 ? NAN : (float)(1e4 * (1 + (double)(i % C)) + rng_normal(&g));
    strict = 1;
    for (int v = 0; v < 2; v++) {
        cls_clean o = {.impute = v ? CLS_IMPUTE_CONSTANT : CLS_IMPUTE_MEAN, .fill_value = 1e4,
                       .has_missing_value = rusticl(), .missing_value = -1};
        check(ctx, NULL, &x, CLS_SCOPE_MATRIX, o, CLS_ZSCORE, NULL, v ? "offset constant" : "offset mean");
    }
    strict = 0;
    free(x.data);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fused_matches_reference_and_clean_path),
        cmocka_unit_test(range_and_clip_apply_to_the_fill),
        cmocka_unit_test(two_phases_when_a_group_exceeds_a_slice),
        cmocka_unit_test(tall_groups_in_one_pass),
        cmocka_unit_test(discount_fuses_too),
        cmocka_unit_test(shapes_of_one),
        cmocka_unit_test(float32_offset_columns_keep_their_precision),
        cmocka_unit_test(imputation_alone_in_one_pass),
    };
    return TEST_RUN("impute_fused", tests, NULL, NULL);
}
