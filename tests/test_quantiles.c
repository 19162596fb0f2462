/* cls_quantiles: exact, bit for bit, against sorting in plain C, on hostile
 * columns (ties, heavy tails, NaN and +-Inf, constant, all missing, float32
 * at an offset), short columns (one counting pass) and long ones (radix
 * passes, several units of rows), both scopes and dtypes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "clean_ref.h"

static const double qs[] = {0.0, 0.25, 0.5, 0.75, 1.0, 0.1, 0.999};
#define NQ (sizeof qs / sizeof qs[0])

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
            double *out = malloc(G * NQ * c * sizeof *out), *col = malloc(rows * sizeof *col);
            cls_status st = cls_quantiles(ctx, &(cls_pipeline){.scope = scope}, &x, qs, NQ, out);
            if (st != CLS_OK) fail_msg("cls_quantiles: %s: %s", cls_status_str(st), cls_last_error(ctx));
            size_t bad = 0;
            for (size_t g = 0; g < G; g++)
                for (size_t k = 0; k < c; k++) {
                    size_t n = cref_column(&x, scope, g, k, col);
                    for (size_t j = 0; j < NQ; j++) {
                        double want = cref_quantile(col, n, qs[j], t), got = out[(g * NQ + j) * c + k];
                        int same = (isnan(want) && isnan(got)) || memcmp(&want, &got, 8) == 0;
                        if (!same && bad++ < 5)
                            printf("# %s %s %zux%zux%zu group %zu col %zu q %g: got %.17g want %.17g (n %zu)\n",
                                   t == CLS_F64 ? "f64" : "f32", sc ? "batch" : "matrix", b, r, c, g, k, qs[j],
                                   got, want, n);
                    }
                }
            assert_int_equal(bad, 0);
            free(out);
            free(col);
        }
        cref_free(&x);
    }
}

/* Short columns take one pass, in either of two kernel shapes that
 * select.c picks by device type: a block of 4 or 8 columns in the lanes of
 * a work-item's vectors (qsort32/64/128: CPU drivers, simulators) or a
 * column per work-item (qsort32g/64g, qselect_small: GPUs). The test hook
 * runs each on every device, on blocks cut short by the last column. */
static void short_columns_one_pass(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int shape = 0; shape < 2; shape++) {
        ctx->tune.qsort_column = shape ? 1 : -1;
        check(ctx, 3, 37, 16, 1);   /* matrix scope: 37 rows; batch: 111 */
        check(ctx, 2, 1, 9, 2);     /* one-row columns */
        check(ctx, 2, 29, 13, 3);   /* 29 rows; batch 58 */
        check(ctx, 1, 100, 11, 4);  /* 65 to 128 rows */
        /* qsort128's second half: a network of its values alone up to 16
         * of them (65-80 rows), the 64-value one past that */
        check(ctx, 1, 65, 11, 5);
        check(ctx, 1, 80, 11, 6);
        check(ctx, 1, 81, 11, 7);
    }
    ctx->tune.qsort_column = 0;
    cls_context_destroy(ctx);
}

/* Long columns: counting passes until the wanted buckets are small, then
 * their values gathered on the host (quantiles/gather.c); and, with the
 * gather off, every counting pass on the device (the kernels' later
 * digits). */
static void long_columns_radix_passes(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t rows = test_suite_is("oclgrind") ? 150 : 700;
    check(ctx, 2, rows, 8, 3);
    ctx->tune.no_gather = 1;
    check(ctx, 2, rows, 8, 13);
    ctx->tune.no_gather = 0;
    cls_context_destroy(ctx);
}

static void many_units_of_rows(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind")) test_skip("280k values: too slow for the simulator; pocl and rusticl run it");
    cls_context *ctx = test_context(NULL, 0, 0);
    check(ctx, 1, 140000, 2, 4);  /* more rows than one unit holds */
    ctx->tune.no_gather = 1;
    check(ctx, 1, 140000, 2, 5);
    ctx->tune.no_gather = 0;
    cls_context_destroy(ctx);
}

/* -0.0 sorts before +0.0 on every path (the sorting networks compare
 * values, so they put the signs back; counting and radix use keys). */
static void negative_zero_sorts_first(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t sizes[] = {5, 50, 100, 300};
    for (size_t si = 0; si < 4; si++) {
        size_t n = sizes[si];
        double *d = malloc(n * sizeof *d);
        /* 2/5 -0.0, 2/5 +0.0, 1/5 ones, interleaved */
        for (size_t i = 0; i < n; i++) d[i] = i % 5 == 4 ? 1.0 : i % 2 ? -0.0 : 0.0;
        size_t nneg = 0, nzero = 0;
        for (size_t i = 0; i < n; i++) {
            nneg += d[i] == 0 && signbit(d[i]);
            nzero += d[i] == 0;
        }
        for (int ti = 0; ti < 2; ti++) {
            cls_dtype t = ti ? CLS_F64 : CLS_F32;
            if (!runs(t)) continue;
            float *f = malloc(n * sizeof *f);
            for (size_t i = 0; i < n; i++) f[i] = (float)d[i];
            cls_array x = {.data = ti ? (void *)d : (void *)f, .dtype = t, .batch = 1, .rows = n, .cols = 1};
            /* weights 0.75 pick the upper value's sign (numpy's _lerp: b - 0 * 0.25):
               rank nneg - 1 is the last -0.0, rank nneg the first +0.0 */
            double q[2] = {((double)nneg - 1.25) / (double)(n - 1), ((double)nneg - 0.25) / (double)(n - 1)};
            double out[2];
            cls_status st = cls_quantiles(ctx, NULL, &x, q, 2, out);
            if (st != CLS_OK) fail_msg("cls_quantiles: %s", cls_last_error(ctx));
            printf("# %zu rows %s: %g %g\n", n, ti ? "f64" : "f32", out[0], out[1]);
            assert_true(out[0] == 0 && signbit(out[0]));
            assert_true(out[1] == 0 && !signbit(out[1]));
            free(f);
        }
        assert_true(nzero > nneg);
        free(d);
    }
    cls_context_destroy(ctx);
}

static void bad_arguments_fail_cleanly(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    float d[4] = {1, 2, 3, 4};
    cls_array x = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 4, .cols = 1};
    double q = 1.5, out[1];
    assert_int_equal(cls_quantiles(ctx, NULL, &x, &q, 1, out), CLS_E_ARG);
    q = NAN;
    assert_int_equal(cls_quantiles(ctx, NULL, &x, &q, 1, out), CLS_E_ARG);
    q = 0.5;
    assert_int_equal(cls_quantiles(ctx, NULL, &x, &q, 1, NULL), CLS_E_ARG);
    assert_int_equal(cls_quantiles(ctx, NULL, &x, &q, 1, out), CLS_OK);
    assert_true(out[0] == 2.5);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_columns_one_pass),
        cmocka_unit_test(long_columns_radix_passes),
        cmocka_unit_test(many_units_of_rows),
        cmocka_unit_test(negative_zero_sorts_first),
        cmocka_unit_test(bad_arguments_fail_cleanly),
    };
    return TEST_RUN("quantiles", tests, NULL, NULL);
}
