/* cls_medians: numpy's nanmedian, exact, bit for bit against sorting in
 * plain C (clean_ref.c's cref_median: the mean of the middle two in the
 * data's dtype), on hostile columns (ties, heavy tails, NaN and +-Inf,
 * constant, all missing, float32 at 1e6 where the float32 mean rounds),
 * short columns in both kernel shapes, long ones (radix passes), both
 * scopes and dtypes; signed zeros; bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "clean_ref.h"

static int runs(cls_dtype t) { return t == CLS_F32 || !test_suite_is("rusticl"); }

static void check(cls_context *ctx, size_t b, size_t r, size_t c, uint64_t seed)
{
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = cref_make(t, b, r, c, seed + (uint64_t)ti);
        for (int sc = 0; sc < 2; sc++) {
            cls_scope scope = sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
            size_t G = cref_groups(&x, scope), rows = cref_group_rows(&x, scope);
            double *out = malloc(G * c * sizeof *out), *col = malloc(rows * sizeof *col);
            cls_status st = cls_medians(ctx, &(cls_pipeline){.scope = scope}, &x, out);
            if (st != CLS_OK) fail_msg("cls_medians: %s: %s", cls_status_str(st), cls_last_error(ctx));
            size_t bad = 0;
            for (size_t g = 0; g < G; g++)
                for (size_t k = 0; k < c; k++) {
                    size_t n = cref_column(&x, scope, g, k, col);
                    double want = cref_median(col, n, t), got = out[g * c + k];
                    int same = (isnan(want) && isnan(got)) || memcmp(&want, &got, 8) == 0;
                    if (!same && bad++ < 5)
                        printf("# %s %s %zux%zux%zu group %zu col %zu: got %.17g want %.17g (n %zu)\n",
                               t == CLS_F64 ? "f64" : "f32", sc ? "batch" : "matrix", b, r, c, g, k, got, want, n);
                }
            assert_int_equal(bad, 0);
            free(out);
            free(col);
        }
        cref_free(&x);
    }
}

/* short groups in both kernel shapes (as test_quantiles), long ones by
 * the radix passes */
static void medians_equal_sorting(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    /* Oclgrind: one shape (the simulator's builds are slow; test_quantiles
     * runs both there) */
    for (int shape = 0; shape < (test_suite_is("oclgrind") ? 1 : 2); shape++) {
        ctx->tune.qsort_column = shape ? 1 : -1;
        check(ctx, 3, 36, 16, 21); /* matrix scope: 36 rows (even); batch: 108 */
        check(ctx, 2, 1, 9, 22);   /* one-row columns */
        check(ctx, 2, 29, 13, 23); /* 29 rows; batch 58 */
        /* qsort32 sorts only the first 4, 8 or 16 values of so few rows */
        check(ctx, 2, 3, 11, 24);  /* 3 rows; batch 6 */
        check(ctx, 2, 7, 10, 25);  /* 7 rows; batch 14 */
        check(ctx, 2, 12, 9, 26);  /* 12 rows; batch 24 */
        /* qsort128 sorts a second half of at most 16 values alone */
        check(ctx, 2, 33, 11, 27); /* 33 rows; batch 66 */
        check(ctx, 2, 40, 9, 28);  /* 40 rows; batch 80 */
    }
    ctx->tune.qsort_column = 0;
    check(ctx, 2, test_suite_is("oclgrind") ? 150 : 600, 8, 24);
    cls_context_destroy(ctx);
}

/* -0.0 before +0.0: a median of two zeros of each sign is their mean in
 * the dtype (-0 + +0 = +0), of an odd count the middle one's sign */
static void signed_zeros(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const double v[2][5] = {{-0.0, -0.0, 0.0, 1.0, -1.0}, {-0.0, -0.0, -0.0, 0.0, NAN}};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        /* two columns, 5 rows */
        double d[10];
        float f[10];
        for (size_t i = 0; i < 10; i++) {
            d[i] = v[i % 2][i / 2];
            f[i] = (float)d[i];
        }
        cls_array x = {.data = ti ? (void *)d : (void *)f, .dtype = t, .batch = 1, .rows = 5, .cols = 2};
        double out[2];
        assert_int_equal(cls_medians(ctx, NULL, &x, out), CLS_OK);
        /* {-1, -0, -0, +0, 1}: the middle is -0; {-0, -0, -0, +0}: (-0 + -0) / 2 = -0 */
        assert_true(out[0] == 0 && signbit(out[0]));
        assert_true(out[1] == 0 && signbit(out[1]));
    }
    cls_context_destroy(ctx);
}

static void bad_arguments_fail_cleanly(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    float d[4] = {4, 1, 3, 2};
    cls_array x = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 4, .cols = 1};
    double out[1] = {7};
    assert_int_equal(cls_medians(ctx, NULL, &x, NULL), CLS_E_ARG);
    assert_int_equal(cls_medians(NULL, NULL, &x, out), CLS_E_ARG);
    assert_int_equal(cls_medians(ctx, &(cls_pipeline){.scope = (cls_scope)7}, &x, out), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(ctx), "cls_medians"));
    cls_array z = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 0, .cols = 1};
    assert_int_equal(cls_medians(ctx, NULL, &z, out), CLS_E_ARG);
    assert_true(out[0] == 7);
    assert_int_equal(cls_medians(ctx, NULL, &x, out), CLS_OK);
    assert_true(out[0] == 2.5);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(medians_equal_sorting),
        cmocka_unit_test(signed_zeros),
        cmocka_unit_test(bad_arguments_fail_cleanly),
    };
    return TEST_RUN("medians", tests, NULL, NULL);
}
