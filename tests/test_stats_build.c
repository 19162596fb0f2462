/* Statistics from values (cls_stats_create) and the map they give
 * (cls_stats_params): what the Python package relies on to pickle fitted
 * statistics, restate them before a merge and show scikit-learn's fitted
 * attributes. The last test proves on the devices that the map read back is
 * the one cls_transform applies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static cls_stats_info info_of(cls_scaler scaler, size_t groups, size_t cols)
{
    cls_stats_info in;
    memset(&in, 0, sizeof in);
    in.scaler = scaler;
    in.scope = CLS_SCOPE_MATRIX;
    in.lo = -1;
    in.hi = 3;
    in.dtype = CLS_F64;
    in.groups = groups;
    in.cols = cols;
    in.rows = 10;
    in.has_moments = 1;
    return in;
}

static cls_column_stats column(double min, double max, double mean, double m2)
{
    cls_column_stats c;
    c.count = 8;
    c.missing = 2;
    c.min = min;
    c.max = max;
    c.mean = mean;
    c.m2 = m2;
    c.absmax = fmax(fabs(min), fabs(max));
    return c;
}

static void create_keeps_info_and_columns(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_ZSCORE, 2, 2);
    in.clip = 7; /* any non-zero is "on" */
    in.dtype = CLS_F32;
    cls_column_stats cols[4] = {column(-2, 5, 1.5, 20), column(0.25, 0.25, 0.25, 0),
                                column(-1e300, 1e300, 0, 1e10), column(3, 4, 3.5, 1)};
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_create(&in, cols, &s), CLS_OK);
    assert_non_null(s);
    cls_stats_info out;
    assert_int_equal(cls_stats_describe(s, &out), CLS_OK);
    assert_int_equal(out.scaler, CLS_ZSCORE);
    assert_int_equal(out.groups, 2);
    assert_int_equal(out.cols, 2);
    assert_int_equal(out.rows, 10);
    assert_int_equal(out.clip, 1);
    assert_int_equal(out.dtype, CLS_F32);
    assert_close(out.lo, -1, 0.0);
    assert_close(out.hi, 3, 0.0);
    for (size_t i = 0; i < 4; i++) {
        cls_column_stats c;
        assert_int_equal(test_column(s, i / 2, i % 2, &c), CLS_OK);
        assert_int_equal(c.count, cols[i].count);
        assert_int_equal(c.missing, cols[i].missing);
        assert_close(c.min, cols[i].min, 0.0);
        assert_close(c.max, cols[i].max, 0.0);
        assert_close(c.mean, cols[i].mean, 0.0);
        assert_close(c.m2, cols[i].m2, 0.0);
        assert_close(c.absmax, cols[i].absmax, 0.0);
    }
    cls_stats_destroy(s);
}

/* Every scaler the pipeline has: max-abs and robust statistics built
 * from values (the cleaning stage builds max-abs ones; a bound older than
 * both scalers refused them). */
static void create_takes_maxabs_and_robust(void **state)
{
    (void)state;
    cls_column_stats c = column(-3, 2, 0.5, 4.0);
    c.median = 0.25;
    c.q_lo = -1;
    c.q_hi = 1.5;
    cls_stats_info in = info_of(CLS_MAXABS, 1, 1);
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_create(&in, &c, &s), CLS_OK);
    cls_affine a;
    assert_int_equal(cls_stats_params(s, 0, 0, 0, &a), CLS_OK);
    /* -3 / max|x| = -1 */
    assert_true(fabs(((-3 - a.shift) * a.scale + a.offset) - (-1.0)) < 1e-15);
    cls_stats_destroy(s);
    in = info_of(CLS_ROBUST, 1, 1);
    in.has_quantiles = 1;
    in.qmin = 25;
    in.qmax = 75;
    s = NULL;
    assert_int_equal(cls_stats_create(&in, &c, &s), CLS_OK);
    assert_int_equal(cls_stats_params(s, 0, 0, 0, &a), CLS_OK);
    /* (x - median) / (q_hi - q_lo) at x = 2.75: 1 */
    assert_true(fabs(((2.75 - a.shift) * a.scale + a.offset) - 1.0) < 1e-15);
    cls_stats_destroy(s);
}

static void create_stores_empty_columns_as_nan_and_keeps_missing(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_MINMAX, 1, 1);
    in.has_moments = 0;
    cls_column_stats c = column(1, 2, 1.5, 0.5); /* garbage behind count 0 */
    c.count = 0;
    c.missing = 10;
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_create(&in, &c, &s), CLS_OK);
    cls_column_stats got;
    assert_int_equal(test_column(s, 0, 0, &got), CLS_OK);
    assert_int_equal(got.count, 0);
    assert_int_equal(got.missing, 10);
    assert_true(isnan(got.min) && isnan(got.max) && isnan(got.mean) && isnan(got.m2) && isnan(got.absmax));
    cls_stats_destroy(s);
}

static void create_without_moments_stores_nan_moments(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_MINMAX, 1, 1);
    in.has_moments = 0;
    cls_column_stats c = column(1, 2, 1.5, 0.5);
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_create(&in, &c, &s), CLS_OK);
    cls_column_stats got;
    assert_int_equal(test_column(s, 0, 0, &got), CLS_OK);
    assert_close(got.min, 1, 0.0);
    assert_true(isnan(got.mean) && isnan(got.m2));
    cls_stats_destroy(s);
}

static void expect_rejected(const cls_stats_info *in, const cls_column_stats *cols, const char *why)
{
    cls_stats *s = (cls_stats *)1;
    cls_status st = cls_stats_create(in, cols, &s);
    if (st != CLS_E_ARG) print_error("accepted: %s\n", why);
    assert_int_equal(st, CLS_E_ARG);
    assert_null(s);
}

static void create_rejects_bad_descriptions(void **state)
{
    (void)state;
    cls_column_stats c = column(1, 2, 1.5, 0.5);
    cls_stats_info in = info_of(CLS_ZSCORE, 1, 1);
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_create(NULL, &c, &s), CLS_E_ARG);
    assert_int_equal(cls_stats_create(&in, &c, NULL), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(NULL), "cls_stats_create"));
    /* no columns: empty ones, for a process that holds no matrix too */
    assert_int_equal(cls_stats_create(&in, NULL, &s), CLS_OK);
    cls_column_stats e;
    assert_int_equal(test_column(s, 0, 0, &e), CLS_OK);
    assert_int_equal(e.count, 0);
    assert_true(isnan(e.min) && isnan(e.mean));
    cls_stats_destroy(s);
    s = NULL;
    cls_stats_info none = in;
    none.groups = 0;
    assert_int_equal(cls_stats_create(&none, NULL, &s), CLS_OK);
    cls_stats_destroy(s);
    s = NULL;
    none.cols = 0;
    assert_int_equal(cls_stats_create(&none, NULL, &s), CLS_E_ARG);
    assert_null(s);
    cls_stats_info bad = in;
    bad.scaler = (cls_scaler)99;
    expect_rejected(&bad, &c, "unknown scaler");
    bad = in;
    bad.scaler = CLS_ROBUST;
    expect_rejected(&bad, &c, "robust without quantiles");
    bad.has_quantiles = 1;
    c.median = c.q_lo = c.q_hi = NAN;
    expect_rejected(&bad, &c, "robust with a NaN median in a column with values");
    c = column(1, 2, 1.5, 0.5);
    bad = in;
    bad.scope = (cls_scope)2;
    expect_rejected(&bad, &c, "unknown scope");
    bad = in;
    bad.dtype = (cls_dtype)2;
    expect_rejected(&bad, &c, "unknown dtype");
    bad = in;
    bad.groups = 0;
    expect_rejected(&bad, &c, "no groups");
    bad = in;
    bad.cols = 0;
    expect_rejected(&bad, &c, "no columns");
    cls_column_stats two[2] = {c, c};
    bad = in;
    bad.scope = CLS_SCOPE_BATCH;
    bad.groups = 2;
    expect_rejected(&bad, two, "batch scope with 2 groups");
    bad = in;
    bad.lo = NAN;
    expect_rejected(&bad, &c, "NaN lo");
    bad = in;
    bad.hi = INFINITY;
    expect_rejected(&bad, &c, "infinite hi");
    bad = in;
    bad.scaler = CLS_MINMAX;
    bad.lo = 2;
    bad.hi = 1;
    expect_rejected(&bad, &c, "min-max range lo > hi");
    bad = in;
    bad.has_moments = 0;
    expect_rejected(&bad, &c, "z-score without moments");
    bad = in;
    bad.groups = SIZE_MAX / 2;
    bad.cols = 3;
    expect_rejected(&bad, &c, "overflowing shape");
}

static void create_rejects_inconsistent_columns(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_ZSCORE, 1, 1);
    cls_column_stats c = column(1, 2, 1.5, 0.5), bad;
    bad = c;
    bad.min = 3;
    expect_rejected(&in, &bad, "min > max");
    bad = c;
    bad.max = NAN;
    expect_rejected(&in, &bad, "NaN max");
    bad = c;
    bad.min = -INFINITY;
    expect_rejected(&in, &bad, "infinite min");
    bad = c;
    bad.absmax = 1.5;
    expect_rejected(&in, &bad, "absmax below max");
    bad = c;
    bad.mean = NAN;
    expect_rejected(&in, &bad, "NaN mean with moments");
    bad = c;
    bad.m2 = -1;
    expect_rejected(&in, &bad, "negative m2");
    /* the same moments are not looked at without has_moments */
    in.scaler = CLS_MINMAX;
    in.has_moments = 0;
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_create(&in, &bad, &s), CLS_OK);
    cls_stats_destroy(s);
}

static void params_follow_each_scaler(void **state)
{
    (void)state;
    cls_column_stats cols[2] = {column(-2, 6, 1, 32), column(0.5, 0.5, 0.5, 0)};
    cls_affine a;
    cls_stats *s = NULL;

    cls_stats_info in = info_of(CLS_MINMAX, 1, 2); /* range [-1, 3] */
    assert_int_equal(cls_stats_create(&in, cols, &s), CLS_OK);
    assert_int_equal(cls_stats_params(s, 0, 0, 0, &a), CLS_OK);
    assert_close(a.shift, -2, 0.0);
    assert_close(a.scale, 4.0 / 8.0, 1e-15);
    assert_close(a.offset, -1, 0.0);
    assert_int_equal(cls_stats_params(s, 0, 0, 1, &a), CLS_OK);
    assert_close(a.shift, -1, 0.0);
    assert_close(a.scale, 8.0 / 4.0, 1e-15);
    assert_close(a.offset, -2, 0.0);
    assert_int_equal(cls_stats_params(s, 0, 1, 0, &a), CLS_OK); /* constant column maps to lo */
    assert_close(a.scale, 0, 0.0);
    assert_close(a.offset, -1, 0.0);
    cls_stats_destroy(s);

    in.lo = in.hi = 0; /* the pipeline's default range [0, 1] */
    assert_int_equal(cls_stats_create(&in, cols, &s), CLS_OK);
    assert_int_equal(cls_stats_params(s, 0, 0, 0, &a), CLS_OK);
    assert_close(a.scale, 1.0 / 8.0, 1e-15);
    assert_close(a.offset, 0, 0.0);
    cls_stats_destroy(s);

    in = info_of(CLS_ZSCORE, 1, 2); /* count 8, m2 32: std 2 */
    assert_int_equal(cls_stats_create(&in, cols, &s), CLS_OK);
    assert_int_equal(cls_stats_params(s, 0, 0, 0, &a), CLS_OK);
    assert_close(a.shift, 1, 0.0);
    assert_close(a.scale, 0.5, 1e-15);
    assert_close(a.offset, 0, 0.0);
    assert_int_equal(cls_stats_params(s, 0, 0, 1, &a), CLS_OK);
    assert_close(a.scale, 2, 1e-15);
    assert_close(a.offset, 1, 0.0);
    assert_int_equal(cls_stats_params(s, 0, 1, 0, &a), CLS_OK); /* std 0 maps to 0 */
    assert_close(a.scale, 0, 0.0);
    cls_stats_destroy(s);

    in = info_of(CLS_DECIMAL, 1, 2); /* absmax 6: j = 1 */
    assert_int_equal(cls_stats_create(&in, cols, &s), CLS_OK);
    assert_int_equal(cls_stats_params(s, 0, 0, 0, &a), CLS_OK);
    assert_close(a.shift, 0, 0.0);
    assert_close(a.scale, 0.1, 1e-15);
    assert_int_equal(cls_stats_params(s, 0, 0, 1, &a), CLS_OK);
    assert_close(a.scale, 10, 1e-15);
    assert_int_equal(cls_stats_params(s, 0, 1, 0, &a), CLS_OK); /* absmax 0.5: j = 0 */
    assert_close(a.scale, 1, 0.0);
    cls_stats_destroy(s);
}

static void params_are_identity_for_empty_columns_and_no_scaler(void **state)
{
    (void)state;
    cls_column_stats cols[2] = {column(-2, 6, 1, 32), column(0, 0, 0, 0)};
    cols[1].count = 0;
    cls_stats_info in = info_of(CLS_MINMAX, 1, 2);
    cls_stats *s = NULL;
    cls_affine a;
    assert_int_equal(cls_stats_create(&in, cols, &s), CLS_OK);
    assert_int_equal(cls_stats_params(s, 0, 1, 0, &a), CLS_OK);
    assert_close(a.shift, 0, 0.0);
    assert_close(a.scale, 1, 0.0);
    assert_close(a.offset, 0, 0.0);
    cls_stats_destroy(s);
    in.scaler = CLS_NONE;
    assert_int_equal(cls_stats_create(&in, cols, &s), CLS_OK);
    assert_int_equal(cls_stats_params(s, 0, 0, 0, &a), CLS_OK);
    assert_close(a.shift, 0, 0.0);
    assert_close(a.scale, 1, 0.0);
    assert_close(a.offset, 0, 0.0);
    assert_int_equal(cls_stats_params(s, 1, 0, 0, &a), CLS_E_ARG);
    assert_int_equal(cls_stats_params(s, 0, 2, 0, &a), CLS_E_ARG);
    assert_int_equal(cls_stats_params(NULL, 0, 0, 0, &a), CLS_E_ARG);
    assert_int_equal(cls_stats_params(s, 0, 0, 0, NULL), CLS_E_ARG);
    cls_stats_destroy(s);
}

/* Fits each scaler on the devices, rebuilds the statistics from what
 * cls_stats_columns() holds, and checks that a transform with the rebuilt
 * statistics writes exactly (x - shift) * scale + offset from
 * cls_stats_params, forward and inverse. */
static void params_are_what_transform_applies(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    enum { B = 2, R = 37, C = 5 };
    static double x[B * R * C], y[B * R * C];
    rng g;
    rng_seed(&g, 23);
    for (size_t i = 0; i < B * R * C; i++) x[i] = rng_range(&g, -50, 150) + (i % C == 3 ? 1e4 : 0);
    x[7] = NAN;
    for (size_t r = 0; r < R; r++) x[r * C + 2] = 4.25; /* constant column in group 0 */
    const cls_scaler scalers[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
    for (size_t k = 0; k < 3; k++) {
        for (int inverse = 0; inverse <= 1; inverse++) {
            cls_array in = {.data = x, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C}, out = {.data = y, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
            cls_pipeline p;
            memset(&p, 0, sizeof p);
            p.scaler = scalers[k];
            p.lo = -1;
            p.hi = 2;
            if (p.scaler != CLS_MINMAX) p.lo = p.hi = 0;
            cls_stats *fitted = NULL, *s = NULL;
            if (cls_fit(ctx, &p, &in, &fitted) != CLS_OK) fail_msg("fit: %s", cls_last_error(ctx));
            p.inverse = inverse;
            cls_stats_info info;
            assert_int_equal(cls_stats_describe(fitted, &info), CLS_OK);
            cls_column_stats cols[B * C];
            for (size_t i = 0; i < B * C; i++)
                assert_int_equal(test_column(fitted, i / C, i % C, &cols[i]), CLS_OK);
            assert_int_equal(cls_stats_create(&info, cols, &s), CLS_OK);
            if (cls_transform(ctx, &p, s, &in, &out) != CLS_OK) fail_msg("transform: %s", cls_last_error(ctx));
            for (size_t i = 0; i < B * R * C; i++) {
                size_t grp = i / (R * C), col = i % C;
                cls_affine a;
                assert_int_equal(cls_stats_params(s, grp, col, inverse, &a), CLS_OK);
                double want = isfinite(x[i]) ? (x[i] - a.shift) * a.scale + a.offset : x[i];
                assert_close(y[i], want, 1e-12);
            }
            cls_stats_destroy(fitted);
            cls_stats_destroy(s);
        }
    }
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_keeps_info_and_columns),
        cmocka_unit_test(create_takes_maxabs_and_robust),
        cmocka_unit_test(create_stores_empty_columns_as_nan_and_keeps_missing),
        cmocka_unit_test(create_without_moments_stores_nan_moments),
        cmocka_unit_test(create_rejects_bad_descriptions),
        cmocka_unit_test(create_rejects_inconsistent_columns),
        cmocka_unit_test(params_follow_each_scaler),
        cmocka_unit_test(params_are_identity_for_empty_columns_and_no_scaler),
        cmocka_unit_test(params_are_what_transform_applies),
    };
    return TEST_RUN("stats_build", tests, NULL, NULL);
}
