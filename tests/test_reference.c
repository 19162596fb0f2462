/* The float64 reference (reference.c) against values computed by hand: if the
 * oracle is wrong, every device test is wrong with it. Also the generators:
 * seeded, and their features present. Needs no OpenCL device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "reference.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static cls_array f64(double *data, size_t batch, size_t rows, size_t cols)
{
    cls_array a = {.data = data, .dtype = CLS_F64, .batch = batch, .rows = rows, .cols = cols};
    return a;
}

static void assert_all_close(const double *got, const double *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++) assert_close(got[i], want[i], tol);
}

/* Asserts got[i] and want[i] are the same number or the same kind of missing. */
static void assert_same(double got, double want)
{
    if (isnan(want)) assert_true(isnan(got));
    else assert_true(got == want);
}

static void assert_stats(const cls_column_stats *s, uint64_t count, uint64_t missing, double min, double max,
                         double mean, double m2, double absmax)
{
    assert_int_equal(s->count, count);
    assert_int_equal(s->missing, missing);
    assert_close(s->min, min, 1e-15);
    assert_close(s->max, max, 1e-15);
    assert_close(s->mean, mean, 1e-15);
    assert_close(s->m2, m2, 1e-14);
    assert_close(s->absmax, absmax, 1e-15);
}

/* ------------------------------------------------------------------------ */
/* Fit                                                                       */
/* ------------------------------------------------------------------------ */

static void fit_ignores_and_counts_nonfinite(void **state)
{
    (void)state;
    double d[] = {1, -2, NAN, 4, 3, -INFINITY, INFINITY, 6};
    cls_array x = f64(d, 1, 4, 2);
    cls_column_stats s[2];
    ref_fit(&x, CLS_SCOPE_MATRIX, s);
    assert_stats(&s[0], 2, 2, 1, 3, 2, 2, 3);
    /* -2, 4, 6: mean 8/3, m2 = (14/3)^2 + (4/3)^2 + (10/3)^2 = 312/9 */
    assert_stats(&s[1], 3, 1, -2, 6, 8.0 / 3, 312.0 / 9, 6);
}

static void fit_all_missing_column_is_nan(void **state)
{
    (void)state;
    double d[] = {1, NAN, 2, INFINITY, 5, -INFINITY};
    cls_array x = f64(d, 1, 3, 2);
    cls_column_stats s[2];
    ref_fit(&x, CLS_SCOPE_BATCH, s);
    assert_int_equal(s[1].count, 0);
    assert_int_equal(s[1].missing, 3);
    assert_true(isnan(s[1].min) && isnan(s[1].max) && isnan(s[1].mean) && isnan(s[1].m2) && isnan(s[1].absmax));
    assert_stats(&s[0], 3, 0, 1, 5, 8.0 / 3, 78.0 / 9, 5);
}

static void fit_scope_matrix_and_batch_differ(void **state)
{
    (void)state;
    double d[] = {1, 10, 3, 20, /* matrix 1 */ 5, 30, 7, 60};
    cls_array x = f64(d, 2, 2, 2);
    assert_int_equal(ref_groups(&x, CLS_SCOPE_MATRIX), 2);
    assert_int_equal(ref_groups(&x, CLS_SCOPE_BATCH), 1);
    cls_column_stats m[4], b[2];
    ref_fit(&x, CLS_SCOPE_MATRIX, m);
    assert_stats(&m[0], 2, 0, 1, 3, 2, 2, 3);
    assert_stats(&m[1], 2, 0, 10, 20, 15, 50, 20);
    assert_stats(&m[2], 2, 0, 5, 7, 6, 2, 7);
    assert_stats(&m[3], 2, 0, 30, 60, 45, 450, 60);
    ref_fit(&x, CLS_SCOPE_BATCH, b);
    assert_stats(&b[0], 4, 0, 1, 7, 4, 20, 7);
    assert_stats(&b[1], 4, 0, 10, 60, 30, 1400, 60);
}

static void fit_negative_values_absmax(void **state)
{
    (void)state;
    double d[] = {-7.5, 2, 0.25, -3};
    cls_array x = f64(d, 1, 4, 1);
    cls_column_stats s;
    ref_fit(&x, CLS_SCOPE_BATCH, &s);
    /* mean -2.0625; m2 = sum of squares 69.3125 - 4 * 2.0625^2 */
    assert_stats(&s, 4, 0, -7.5, 2, -2.0625, 69.3125 - 4 * 2.0625 * 2.0625, 7.5);
}

/* A mean 1e9 times the spread: sum of squares minus n mean^2 would lose it all. */
static void fit_m2_exact_with_large_offset(void **state)
{
    (void)state;
    size_t n = 300000;
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = 1e9 + (double)(i % 3) - 1.0;
    cls_array x = f64(d, 1, n, 1);
    cls_column_stats s;
    ref_fit(&x, CLS_SCOPE_BATCH, &s);
    assert_close(s.mean, 1e9, 1e-16);
    assert_close(s.m2, 2.0 * n / 3, 1e-12);
    free(d);
}

/* float data: the statistics are of the float values as stored. */
static void fit_float_uses_stored_values(void **state)
{
    (void)state;
    float d[] = {0.1f, 10000.5f, 0.2f, 10001.5f, 0.3f, 10002.5f};
    cls_array x = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 3, .cols = 2};
    cls_column_stats s[2];
    ref_fit(&x, CLS_SCOPE_BATCH, s);
    assert_true(s[0].min == (double)0.1f);
    assert_true(s[0].max == (double)0.3f);
    assert_close(s[0].mean, ((double)0.1f + (double)0.2f + (double)0.3f) / 3, 1e-16);
    assert_stats(&s[1], 3, 0, 10000.5, 10002.5, 10001.5, 2, 10002.5);
}

/* ------------------------------------------------------------------------ */
/* Scalers                                                                   */
/* ------------------------------------------------------------------------ */

static void minmax_default_range_and_custom_range(void **state)
{
    (void)state;
    double d[] = {2, -1, 4, 0, 6, 1, 10, 3};
    cls_array x = f64(d, 1, 4, 2);
    double y[8];
    cls_pipeline p = {.scaler = CLS_MINMAX};
    ref_fit_transform(&x, &p, y, NULL);
    double want[] = {0, 0, 0.25, 0.25, 0.5, 0.5, 1, 1};
    assert_all_close(y, want, 8, 1e-15);

    p.lo = -1;
    p.hi = 1;
    ref_fit_transform(&x, &p, y, NULL);
    double want2[] = {-1, -1, -0.5, -0.5, 0, 0, 1, 1};
    assert_all_close(y, want2, 8, 1e-15);
}

static void minmax_inverse_restores(void **state)
{
    (void)state;
    double d[] = {2, -1, 4, 0, 6, 1, 10, 3};
    cls_array x = f64(d, 1, 4, 2);
    cls_column_stats s[2];
    ref_fit(&x, CLS_SCOPE_MATRIX, s);
    double yd[] = {-1, -1, -0.5, -0.5, 0, 0, 1, 1}, back[8];
    cls_array y = f64(yd, 1, 4, 2);
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = -1, .hi = 1, .inverse = 1};
    ref_transform(&y, &p, s, back);
    assert_all_close(back, d, 8, 1e-15);
    /* Outside the range it extrapolates: y = 3 is one range width above hi. */
    yd[7] = 3;
    ref_transform(&y, &p, s, back);
    assert_close(back[7], 3 + 4, 1e-15);
}

static void minmax_clip_clamps_finite_results(void **state)
{
    (void)state;
    double fitd[] = {0, 10};
    cls_array fit = f64(fitd, 1, 2, 1);
    cls_column_stats s;
    ref_fit(&fit, CLS_SCOPE_BATCH, &s);
    double d[] = {-5, 5, 15, NAN, INFINITY, -INFINITY}, y[6];
    cls_array x = f64(d, 1, 6, 1);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    ref_transform(&x, &p, &s, y);
    double want[] = {-0.5, 0.5, 1.5, NAN, INFINITY, -INFINITY};
    assert_all_close(y, want, 6, 1e-15);
    p.clip = 1;
    ref_transform(&x, &p, &s, y);
    double want2[] = {0, 0.5, 1, NAN, INFINITY, -INFINITY};
    assert_all_close(y, want2, 6, 1e-15);
    p.lo = 2;
    p.hi = 4;
    ref_transform(&x, &p, &s, y);
    double want3[] = {2, 3, 4, NAN, INFINITY, -INFINITY};
    assert_all_close(y, want3, 6, 1e-15);
}

static void minmax_constant_column_maps_to_lo(void **state)
{
    (void)state;
    double d[] = {3, 1, 3, 2, 3, 5}, y[6];
    cls_array x = f64(d, 1, 3, 2);
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = 2, .hi = 5};
    cls_column_stats s[2];
    ref_fit_transform(&x, &p, y, s);
    double want[] = {2, 2, 2, 2.75, 2, 5};
    assert_all_close(y, want, 6, 1e-15);
    /* The inverse of a constant column gives the constant back, whatever y. */
    double yd[] = {2, 2, 7, 2.75, -1, 5}, back[6];
    cls_array yy = f64(yd, 1, 3, 2);
    p.inverse = 1;
    ref_transform(&yy, &p, s, back);
    double want2[] = {3, 1, 3, 2, 3, 5};
    assert_all_close(back, want2, 6, 1e-15);
}

static void zscore_forward_and_inverse(void **state)
{
    (void)state;
    double d[] = {2, 4, 4, 4, 5, 5, 7, 9}, y[8], back[8];
    cls_array x = f64(d, 1, 8, 1);
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    cls_column_stats s;
    ref_fit_transform(&x, &p, y, &s);
    /* mean 5, population sd 2 (the sample sd would be 2.138) */
    double want[] = {-1.5, -0.5, -0.5, -0.5, 0, 0, 1, 2};
    assert_all_close(y, want, 8, 1e-15);
    cls_array yy = f64(y, 1, 8, 1);
    p.inverse = 1;
    ref_transform(&yy, &p, &s, back);
    assert_all_close(back, d, 8, 1e-15);
}

static void zscore_constant_column_maps_to_zero(void **state)
{
    (void)state;
    double d[] = {7, 1, 7, 3, 7, NAN}, y[6], back[6];
    cls_array x = f64(d, 1, 3, 2);
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    cls_column_stats s[2];
    ref_fit_transform(&x, &p, y, s);
    double want[] = {0, -1, 0, 1, 0, NAN};
    assert_all_close(y, want, 6, 1e-15);
    double yd[] = {0, -1, 3, 1, -2, NAN};
    cls_array yy = f64(yd, 1, 3, 2);
    p.inverse = 1;
    ref_transform(&yy, &p, s, back);
    double want2[] = {7, 1, 7, 3, 7, NAN};
    assert_all_close(back, want2, 6, 1e-15);
}

static void decimal_exponents(void **state)
{
    (void)state;
    /* columns: absmax 0.05 (j = -1), 100 (an exact power: j = 3), 99.5 (j = 2),
     * 1 (j = 1), 0 (j = 0), 0.001 (an exact power: j = -2), 12345 (j = 5) */
    double d[] = {0.05, 100, 99.5, 1, 0, -0.001, -12345, /* row 1 */ -0.02, -3, 1, 0.5, 0, 0.0005, 2};
    double want[] = {0.5, 0.1, 0.995, 0.1, 0, -0.1, -0.12345, /* row 1 */ -0.2, -0.003, 0.01, 0.05, 0, 0.05, 0.00002};
    double y[14], back[14];
    cls_array x = f64(d, 1, 2, 7);
    cls_pipeline p = {.scaler = CLS_DECIMAL};
    cls_column_stats s[7];
    ref_fit_transform(&x, &p, y, s);
    assert_all_close(y, want, 14, 1e-15);
    for (size_t i = 0; i < 14; i++) assert_true(fabs(y[i]) < 1);
    cls_array yy = f64(y, 1, 2, 7);
    p.inverse = 1;
    ref_transform(&yy, &p, s, back);
    assert_all_close(back, d, 14, 1e-12);
}

static void decimal_all_missing_and_float(void **state)
{
    (void)state;
    /* float 0.1f is a little above 0.1: 0.1f / 10^0 < 1 but 0.1f / 10^-1 >= 1, so j = 0. */
    float d[] = {0.1f, 5.0f, -0.04f, 9.99f};
    cls_array x = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 2, .cols = 2};
    cls_pipeline p = {.scaler = CLS_DECIMAL};
    double y[4];
    ref_fit_transform(&x, &p, y, NULL);
    assert_close(y[0], (double)0.1f, 1e-16);
    assert_close(y[2], (double)-0.04f, 1e-16);
    assert_close(y[1], (double)5.0f / 10, 1e-16);
    assert_close(y[3], (double)9.99f / 10, 1e-16);
}

static void nonfinite_pass_through_every_scaler(void **state)
{
    (void)state;
    double d[] = {1, NAN, 2, INFINITY, 4, -INFINITY, 8, 3};
    cls_array x = f64(d, 1, 4, 2);
    cls_scaler sc[] = {CLS_NONE, CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
    for (size_t k = 0; k < LEN(sc); k++)
        for (int inverse = 0; inverse < 2; inverse++) {
            cls_pipeline p = {.scaler = sc[k], .clip = 1, .inverse = inverse};
            cls_column_stats s[2];
            double y[8];
            ref_fit_transform(&x, &p, y, s);
            assert_int_equal(s[1].count, 1);
            assert_int_equal(s[1].missing, 3);
            assert_true(isnan(y[1]));
            assert_true(y[3] == INFINITY);
            assert_true(y[5] == -INFINITY);
        }
}

static void all_missing_column_passes_through(void **state)
{
    (void)state;
    double d[] = {1, NAN, 3, INFINITY, 5, -INFINITY};
    cls_array x = f64(d, 1, 3, 2);
    cls_scaler sc[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
    for (size_t k = 0; k < LEN(sc); k++)
        for (int inverse = 0; inverse < 2; inverse++) {
            cls_pipeline p = {.scaler = sc[k], .inverse = inverse};
            double y[6];
            ref_fit_transform(&x, &p, y, NULL);
            for (size_t i = 1; i < 6; i += 2) assert_same(y[i], d[i]);
            for (size_t i = 0; i < 6; i += 2) assert_true(isfinite(y[i]));
        }
}

static void none_without_factors_is_identity(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 2, 5, 3, 7, REF_MISSING);
    double y[30];
    cls_pipeline p = {.scaler = CLS_NONE};
    ref_transform(&x, &p, NULL, y);
    for (size_t i = 0; i < 30; i++) assert_same(y[i], ref_get(&x, i));
    ref_free(&x);
}

/* ------------------------------------------------------------------------ */
/* Discount                                                                  */
/* ------------------------------------------------------------------------ */

static void broadcast_accepts_numpy_shapes(void **state)
{
    (void)state;
    cls_array x = {.data = NULL, .dtype = CLS_F64, .batch = 3, .rows = 4, .cols = 5};
    struct {
        size_t b, r, c, s0, s1, s2;
    } ok[] = {
        {1, 1, 5, 0, 0, 1},  /* (cols) */
        {1, 4, 5, 0, 5, 1},  /* (rows, cols) */
        {3, 4, 5, 20, 5, 1}, /* (batch, rows, cols) */
        {1, 4, 1, 0, 1, 0},  /* (1, rows, 1) */
        {3, 1, 1, 1, 0, 0},  /* (batch, 1, 1) */
        {3, 1, 5, 5, 0, 1},  /* (batch, 1, cols) */
        {1, 1, 1, 0, 0, 0},  /* a scalar */
    };
    for (size_t i = 0; i < LEN(ok); i++) {
        cls_array f = {.data = NULL, .dtype = CLS_F64, .batch = ok[i].b, .rows = ok[i].r, .cols = ok[i].c};
        size_t st[3] = {99, 99, 99};
        assert_true(ref_broadcast(&x, &f, st));
        assert_int_equal(st[0], ok[i].s0);
        assert_int_equal(st[1], ok[i].s1);
        assert_int_equal(st[2], ok[i].s2);
    }
    struct {
        size_t b, r, c;
    } bad[] = {
        {1, 5, 5}, /* (rows + 1, cols) */
        {2, 4, 5}, /* batch 2 vs 3 */
        {2, 1, 1}, {1, 1, 4}, {1, 1, 6}, {1, 4, 0}, {3, 4, 1 + 5},
    };
    for (size_t i = 0; i < LEN(bad); i++) {
        cls_array f = {.data = NULL, .dtype = CLS_F64, .batch = bad[i].b, .rows = bad[i].r, .cols = bad[i].c};
        size_t st[3];
        assert_false(ref_broadcast(&x, &f, st));
    }
    size_t st[3];
    assert_false(ref_broadcast(&x, NULL, st));
}

static void discount_broadcasts_values(void **state)
{
    (void)state;
    /* 2 x 2 x 3, values 1..12 */
    double d[12], y[12];
    for (size_t i = 0; i < 12; i++) d[i] = (double)(i + 1);
    cls_array x = f64(d, 2, 2, 3);
    cls_pipeline p = {.scaler = CLS_NONE};

    double fc[] = {1, 10, 100};
    cls_array f1 = f64(fc, 1, 1, 3);
    p.factors = &f1;
    ref_transform(&x, &p, NULL, y);
    double want1[] = {1, 20, 300, 4, 50, 600, 7, 80, 900, 10, 110, 1200};
    assert_all_close(y, want1, 12, 0);

    double fr[] = {2, 3};
    cls_array f2 = f64(fr, 1, 2, 1);
    p.factors = &f2;
    ref_transform(&x, &p, NULL, y);
    double want2[] = {2, 4, 6, 12, 15, 18, 14, 16, 18, 30, 33, 36};
    assert_all_close(y, want2, 12, 0);

    double fb[] = {-1, 0.5};
    cls_array f3 = f64(fb, 2, 1, 1);
    p.factors = &f3;
    ref_transform(&x, &p, NULL, y);
    double want3[] = {-1, -2, -3, -4, -5, -6, 3.5, 4, 4.5, 5, 5.5, 6};
    assert_all_close(y, want3, 12, 0);

    double fbc[] = {1, 2, 3, 4, 5, 6};
    cls_array f4 = f64(fbc, 2, 1, 3);
    p.factors = &f4;
    ref_transform(&x, &p, NULL, y);
    double want4[] = {1, 4, 9, 4, 10, 18, 28, 40, 54, 40, 55, 72};
    assert_all_close(y, want4, 12, 0);

    cls_array f5 = f64(d, 2, 2, 3); /* the full shape: squares */
    p.factors = &f5;
    ref_transform(&x, &p, NULL, y);
    for (size_t i = 0; i < 12; i++) assert_close(y[i], d[i] * d[i], 0);
}

static void discount_after_scaling_and_of_missing(void **state)
{
    (void)state;
    /* columns {0, 10} and {5, 15}; min-max gives {0, 1} in both */
    double d[] = {0, 5, 10, 15}, y[4];
    cls_array x = f64(d, 1, 2, 2);
    double fd[] = {2, 3};
    cls_array f = f64(fd, 1, 1, 2);
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = 1, .hi = 2, .factors = &f};
    ref_fit_transform(&x, &p, y, NULL);
    double want[] = {2, 3, 4, 6};
    assert_all_close(y, want, 4, 1e-15);

    /* The discount multiplies missing values too, after they passed the scaler. */
    double m[] = {NAN, INFINITY, -INFINITY, 4};
    cls_array xm = f64(m, 1, 2, 2);
    double fm[] = {0.5, -2};
    cls_array f2 = f64(fm, 1, 1, 2);
    p.factors = &f2;
    ref_fit_transform(&xm, &p, y, NULL);
    assert_true(isnan(y[0]));
    assert_true(y[1] == -INFINITY);
    assert_true(y[2] == -INFINITY);
    assert_close(y[3], 1 * -2.0, 1e-15); /* constant column: lo */

    /* Inverse, then discount. */
    double yd[] = {1, 1, 2, 2};
    cls_array yy = f64(yd, 1, 2, 2);
    cls_column_stats s[2];
    ref_fit(&x, CLS_SCOPE_MATRIX, s);
    p.factors = &f;
    p.inverse = 1;
    ref_transform(&yy, &p, s, y);
    double want2[] = {0, 15, 20, 45};
    assert_all_close(y, want2, 4, 1e-15);
}

static void discount_float_factors_as_stored(void **state)
{
    (void)state;
    float d[] = {1.0f, 3.0f};
    cls_array x = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 1, .cols = 2};
    float fd[] = {0.1f, 0.7f};
    cls_array f = {.data = fd, .dtype = CLS_F32, .batch = 1, .rows = 1, .cols = 2};
    cls_pipeline p = {.scaler = CLS_NONE, .factors = &f};
    double y[2];
    ref_transform(&x, &p, NULL, y);
    assert_true(y[0] == (double)0.1f);
    assert_true(y[1] == 3.0 * (double)0.7f);
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

static void compare_counts_wrong_elements(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 2, 50, 7, 11, REF_MISSING);
    size_t n = 2 * 50 * 7;
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) want[i] = ref_get(&x, i);
    assert_int_equal(ref_compare(&x, want, 0, "identical"), 0);

    /* Seven finite elements off by 1e-3 relative. */
    size_t moved = 0;
    for (size_t i = 3; i < n && moved < 7; i += 13)
        if (isfinite(want[i])) {
            want[i] *= 1.001;
            moved++;
        }
    assert_int_equal(moved, 7);
    assert_int_equal(ref_compare(&x, want, 1e-5, "perturbed"), 7);
    assert_int_equal(ref_compare(&x, want, 1e-2, "loose"), 0);
    ref_free(&x);
    free(want);

    /* Missing values: NaN equals NaN only, an infinity itself only. */
    double g[] = {NAN, INFINITY, 1, NAN, -INFINITY, 0};
    double w[] = {NAN, INFINITY, NAN, 1, INFINITY, 1e-6};
    cls_array y = f64(g, 1, 2, 3);
    assert_int_equal(ref_compare(&y, w, 1e-5, "missing"), 3);
    /* Tolerance is absolute below 1: 0 vs 1e-6 passes at 1e-5. */
    assert_int_equal(ref_compare(&y, w, 1e-7, "missing"), 4);
}

static void compare_stats_counts_wrong_entries(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F64, 3, 20, 4, 5, REF_MISSING | REF_ALL_MISSING);
    cls_column_stats want[12], got[12];
    ref_fit(&x, CLS_SCOPE_MATRIX, want);
    memcpy(got, want, sizeof got);
    assert_int_equal(ref_compare_stats(got, want, 12, 1, 0, "same"), 0);
    got[1].count++;
    got[5].missing++;
    got[6].mean *= 1.01;
    got[8].m2 *= 1.01; /* not 7: that is the all-missing column, m2 NaN */
    assert_int_equal(ref_compare_stats(got, want, 12, 1, 1e-5, "moments"), 4);
    assert_int_equal(ref_compare_stats(got, want, 12, 0, 1e-5, "no moments"), 2);
    memcpy(got, want, sizeof got);
    got[2].max *= 1.01;
    got[3].min = 0; /* NaN wanted: the all-missing column */
    assert_int_equal(ref_compare_stats(got, want, 12, 0, 1e-5, "bounds"), 2);
    ref_free(&x);
}

/* ------------------------------------------------------------------------ */
/* Generators                                                                */
/* ------------------------------------------------------------------------ */

static void generators_are_seeded(void **state)
{
    (void)state;
    cls_dtype t[] = {CLS_F32, CLS_F64};
    for (size_t k = 0; k < 2; k++) {
        size_t bytes = 2 * 30 * 6 * (t[k] == CLS_F64 ? 8 : 4);
        unsigned feat = REF_MISSING | REF_NEGATIVE;
        cls_array a = ref_make(t[k], 2, 30, 6, 42, feat), b = ref_make(t[k], 2, 30, 6, 42, feat);
        cls_array c = ref_make(t[k], 2, 30, 6, 43, feat), d = ref_copy(&a);
        assert_memory_equal(a.data, b.data, bytes);
        assert_memory_not_equal(a.data, c.data, bytes);
        assert_memory_equal(a.data, d.data, bytes);
        assert_int_equal(d.dtype, t[k]);
        assert_int_equal(d.batch, 2);
        assert_int_equal(d.rows, 30);
        assert_int_equal(d.cols, 6);
        cls_array f = ref_make_factors(t[k], 1, 30, 6, 1), g = ref_make_factors(t[k], 1, 30, 6, 1);
        assert_memory_equal(f.data, g.data, bytes / 2);
        for (size_t i = 0; i < 180; i++) assert_true(ref_get(&f, i) >= 0.5 && ref_get(&f, i) < 1.5);
        ref_free(&a);
        ref_free(&b);
        ref_free(&c);
        ref_free(&d);
        ref_free(&f);
        ref_free(&g);
        assert_null(a.data);
    }
}

static void generator_plain_columns_differ(void **state)
{
    (void)state;
    unsigned feats[] = {0, REF_NEGATIVE};
    for (size_t k = 0; k < 2; k++) {
        cls_array x = ref_make(CLS_F32, 1, 2000, 9, 3, feats[k]);
        cls_column_stats s[9];
        ref_fit(&x, CLS_SCOPE_BATCH, s);
        size_t zeros = 0;
        for (size_t i = 0; i < 2000 * 9; i++) zeros += ref_get(&x, i) == 0;
        assert_true(zeros < 2000 * 9);
        for (size_t c = 0; c < 9; c++) {
            assert_int_equal(s[c].count, 2000);
            assert_int_equal(s[c].missing, 0);
            if (feats[k] & REF_NEGATIVE) assert_true(s[c].min < 0 && s[c].max > 0);
            else assert_true(s[c].min > 0);
            if (c > 0) assert_true(fabs(s[c].mean - s[c - 1].mean) > 0.05 * fabs(s[c].mean) ||
                                   fabs(s[c].max - s[c - 1].max) > 0.05 * fabs(s[c].max));
        }
        ref_free(&x);
    }
}

static void generator_features_present(void **state)
{
    (void)state;
    unsigned feat = REF_MISSING | REF_CONSTANT | REF_ALL_MISSING;
    cls_array x = ref_make(CLS_F32, 3, 200, 5, 9, feat);
    cls_column_stats m[15], b[5];
    ref_fit(&x, CLS_SCOPE_MATRIX, m);
    ref_fit(&x, CLS_SCOPE_BATCH, b);
    uint64_t missing = 0, values = 3 * 200 * 5;
    for (size_t g = 0; g < 3; g++) {
        assert_true(m[g * 5].max == m[g * 5].min);
        assert_true(m[g * 5].m2 == 0);
        assert_int_equal(m[g * 5 + 4].count, 0);
        assert_int_equal(m[g * 5 + 4].missing, 200);
        for (size_t c = 0; c < 4; c++) missing += m[g * 5 + c].missing;
    }
    assert_true(b[0].max == b[0].min);
    assert_int_equal(b[4].count, 0);
    /* ~3% of the other 4 columns, and in every column */
    assert_true(missing > values * 4 / 5 * 0.015 && missing < values * 4 / 5 * 0.05);
    for (size_t c = 0; c < 4; c++) assert_true(b[c].missing > 0);
    /* The all-missing column holds NaN and both infinities. */
    int nan = 0, pinf = 0, ninf = 0;
    for (size_t r = 0; r < 600; r++) {
        double v = ref_get(&x, r * 5 + 4);
        nan |= isnan(v);
        pinf |= v == INFINITY;
        ninf |= v == -INFINITY;
    }
    assert_true(nan && pinf && ninf);
    ref_free(&x);

    /* Tiny arrays still get a missing value; one column is the constant one. */
    cls_array t = ref_make(CLS_F64, 1, 3, 1, 1, REF_MISSING | REF_CONSTANT);
    cls_column_stats s;
    ref_fit(&t, CLS_SCOPE_BATCH, &s);
    assert_true(s.missing >= 1);
    if (s.count) assert_true(s.min == s.max);
    ref_free(&t);

    /* Fewer than 3 columns: no all-missing column. */
    cls_array two = ref_make(CLS_F64, 1, 10, 2, 1, REF_ALL_MISSING);
    cls_column_stats s2[2];
    ref_fit(&two, CLS_SCOPE_BATCH, s2);
    assert_int_equal(s2[0].missing + s2[1].missing, 0);
    ref_free(&two);
}

static void generator_offset_mean_is_1e4_spreads(void **state)
{
    (void)state;
    cls_dtype t[] = {CLS_F32, CLS_F64};
    for (size_t k = 0; k < 2; k++) {
        cls_array x = ref_make(t[k], 2, 3000, 6, 21, REF_OFFSET | REF_NEGATIVE);
        cls_column_stats s[12];
        ref_fit(&x, CLS_SCOPE_MATRIX, s);
        for (size_t i = 0; i < 12; i++) {
            double sd = sqrt(s[i].m2 / s[i].count), ratio = s[i].mean / sd;
            assert_true(sd > 0.45 && sd < 2.2);
            assert_true(fabs(ratio) > 0.9e4 && fabs(ratio) < 1.1e4);
            assert_true((ratio < 0) == (int)(i % 6 % 2)); /* odd columns negative */
        }
        ref_free(&x);
    }
}

/* The whole chain on generated data agrees with a direct computation. */
static void fit_transform_matches_direct_formula(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F64, 2, 40, 3, 17, REF_NEGATIVE | REF_MISSING);
    cls_array f = ref_make_factors(CLS_F64, 1, 40, 1, 18);
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX, .factors = &f};
    double y[240];
    cls_column_stats s[6];
    ref_fit_transform(&x, &p, y, s);
    for (size_t b = 0; b < 2; b++)
        for (size_t r = 0; r < 40; r++)
            for (size_t c = 0; c < 3; c++) {
                size_t i = (b * 40 + r) * 3 + c;
                double v = ref_get(&x, i), fac = ref_get(&f, r);
                const cls_column_stats *cs = &s[b * 3 + c];
                double want = isfinite(v) ? (v - cs->mean) / sqrt(cs->m2 / cs->count) * fac : v * fac;
                assert_close(y[i], want, 1e-14);
            }
    ref_free(&x);
    ref_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fit_ignores_and_counts_nonfinite),
        cmocka_unit_test(fit_all_missing_column_is_nan),
        cmocka_unit_test(fit_scope_matrix_and_batch_differ),
        cmocka_unit_test(fit_negative_values_absmax),
        cmocka_unit_test(fit_m2_exact_with_large_offset),
        cmocka_unit_test(fit_float_uses_stored_values),
        cmocka_unit_test(minmax_default_range_and_custom_range),
        cmocka_unit_test(minmax_inverse_restores),
        cmocka_unit_test(minmax_clip_clamps_finite_results),
        cmocka_unit_test(minmax_constant_column_maps_to_lo),
        cmocka_unit_test(zscore_forward_and_inverse),
        cmocka_unit_test(zscore_constant_column_maps_to_zero),
        cmocka_unit_test(decimal_exponents),
        cmocka_unit_test(decimal_all_missing_and_float),
        cmocka_unit_test(nonfinite_pass_through_every_scaler),
        cmocka_unit_test(all_missing_column_passes_through),
        cmocka_unit_test(none_without_factors_is_identity),
        cmocka_unit_test(broadcast_accepts_numpy_shapes),
        cmocka_unit_test(discount_broadcasts_values),
        cmocka_unit_test(discount_after_scaling_and_of_missing),
        cmocka_unit_test(discount_float_factors_as_stored),
        cmocka_unit_test(compare_counts_wrong_elements),
        cmocka_unit_test(compare_stats_counts_wrong_entries),
        cmocka_unit_test(generators_are_seeded),
        cmocka_unit_test(generator_plain_columns_differ),
        cmocka_unit_test(generator_features_present),
        cmocka_unit_test(generator_offset_mean_is_1e4_spreads),
        cmocka_unit_test(fit_transform_matches_direct_formula),
    };
    return TEST_RUN("reference", tests, NULL, NULL);
}
