/* Every scaler x dtype x scope, fitted and applied in one call, against the
 * float64 reference: values, statistics, missing values, constant and
 * all-missing columns, and the float32 offset case. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_util.h"

static const cls_scaler scalers[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
static const char *const scaler_names[] = {"minmax", "zscore", "decimal"};

static void run_all(unsigned features, size_t b, size_t r, size_t c, uint64_t seed)
{
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int sc = 0; sc < 3; sc++) {
            for (int scope = 0; scope < 2; scope++) {
                cls_array x = ref_make(dt, b, r, c, seed + (uint64_t)(sc * 7 + scope), features);
                cls_pipeline p = {0};
                p.scaler = scalers[sc];
                p.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
                char label[128];
                snprintf(label, sizeof label, "%s %s %s features %#x", scaler_names[sc],
                         dt == CLS_F64 ? "f64" : "f32", scope ? "batch" : "matrix", features);
                cls_stats *s = check_fit_transform(ctx, &x, &p, label);
                cls_stats_destroy(s);
                ref_free(&x);
            }
        }
    }
    cls_context_destroy(ctx);
}

static void plain_columns(void **state)
{
    (void)state;
    run_all(0, 3, 57, 19, 100);
}

/* Wide groups: from 32768 statistics entries a slice's conversion of the
 * device statistics is cut into pieces of 16384 columns shared by the copy
 * pool (engine/slice.c); 2 x 40000 columns per matrix cut each group into
 * three pieces, the last one short; one group of 40000 in scope batch.
 * Oclgrind: one row of 33000 columns, still past the cut. */
static void wide_groups_convert_in_pieces(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind")) {
        run_all(REF_MISSING | REF_ALL_MISSING | REF_CONSTANT, 1, 1, 33000, 150);
        return;
    }
    run_all(REF_MISSING | REF_ALL_MISSING | REF_CONSTANT | REF_NEGATIVE, 2, 3, 40000, 150);
}

static void negative_values(void **state)
{
    (void)state;
    run_all(REF_NEGATIVE, 2, 41, 13, 200);
}

static void missing_values_are_skipped_and_passed_through(void **state)
{
    (void)state;
    run_all(REF_MISSING, 3, 50, 11, 300);
}

static void constant_and_all_missing_columns(void **state)
{
    (void)state;
    run_all(REF_CONSTANT | REF_ALL_MISSING | REF_MISSING, 2, 33, 9, 400);
}

static void float32_offset_mean_1e4_times_spread(void **state)
{
    (void)state;
    run_all(REF_OFFSET, 2, 300, 10, 500);
    run_all(REF_OFFSET | REF_NEGATIVE | REF_MISSING, 2, 300, 10, 510);
}

static void minmax_custom_range_and_clip(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        cls_array x = ref_make(dt, 2, 40, 7, 600 + t, REF_NEGATIVE | REF_MISSING);
        cls_pipeline p = {.scaler = CLS_MINMAX, .lo = -3, .hi = 5};
        cls_stats_destroy(check_fit_transform(ctx, &x, &p, "range -3..5"));
        p.clip = 1;
        cls_stats_destroy(check_fit_transform(ctx, &x, &p, "range -3..5 clip"));
        ref_free(&x);
    }
    cls_context_destroy(ctx);
}

static void put(cls_array *x, size_t i, double v)
{
    if (x->dtype == CLS_F64) ((double *)x->data)[i] = v;
    else ((float *)x->data)[i] = (float)v;
}

/* The statistics kernels assume a block of rows is finite and check it
 * afterwards (a NaN or an infinity makes the block's sum non-finite), then
 * redo a failed block carefully: a few missing values in otherwise clean
 * data, a +Inf beside a -Inf in one block of one column (their sum is NaN),
 * a lone infinity, a NaN in the last row and in a partial vector's lanes.
 * 8 and 16 columns fill whole vectors, 11 does not; 20011 rows in one
 * batch group take the chunked statistics, per matrix the fused kernel. */
static void sparse_missing_values_in_clean_blocks(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    int small = test_suite_is("oclgrind") || test_suite_is("rusticl");
    const size_t widths[] = {8, 11, 16};
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (size_t wi = 0; wi < 3; wi++) {
            size_t c = widths[wi], b = 3, r = small ? 700 : 20011 / 3 + 1;
            for (int sc = 0; sc < 3; sc++)
                for (int scope = 0; scope < 2; scope++) {
                    cls_array x = ref_make(dt, b, r, c, 2000 + wi * 10 + (size_t)(sc * 2 + scope) + 100 * (size_t)t,
                                           REF_NEGATIVE);
                    size_t n = b * r * c;
                    put(&x, 37 * c + 2, NAN);
                    put(&x, 100 * c + c - 1, INFINITY);       /* same block, same column */
                    put(&x, 103 * c + c - 1, -INFINITY);
                    put(&x, (r + 250) * c + 1, -INFINITY);    /* alone, second matrix */
                    put(&x, n - 1, NAN);                       /* last row, last lane */
                    put(&x, n / 2, INFINITY);
                    cls_pipeline p = {0};
                    p.scaler = scalers[sc];
                    p.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
                    char label[128];
                    snprintf(label, sizeof label, "%s %s %s %zu cols, sparse missing", scaler_names[sc],
                             dt == CLS_F64 ? "f64" : "f32", scope ? "batch" : "matrix", c);
                    cls_stats_destroy(check_fit_transform(ctx, &x, &p, label));
                    ref_free(&x);
                }
        }
    }
    cls_context_destroy(ctx);
}

/* Decimal scaling at the ends of each dtype's range, fitted on the device
 * (its own 10^-j) and applied with host params (cls_transform): a float32
 * column above 1e38 (10^-39 is subnormal in float), one at FLT_MAX beside
 * -FLT_MAX, a column of subnormal values only (j stops at -38), and the
 * float64 equivalents (above 1e308; subnormal only, j stops at -308). */
static void decimal_at_the_ends_of_the_range(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    enum { R = 37, C = 6 };
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        double top = t ? DBL_MAX : FLT_MAX, tiny = t ? 4.9e-322 : 1.4e-43;
        double big = t ? 1.2e308 : 1.2e38;
        rng g;
        rng_seed(&g, 9100 + (uint64_t)t);
        cls_array x = ref_make(dt, 1, R, C, 9100 + (uint64_t)t, 0);
        for (size_t r = 0; r < R; r++) {
            double u = rng_range(&g, -1, 1);
            put(&x, r * C + 0, big * (0.5 + 0.5 * fabs(u)));  /* above 1e38 / 1e308 */
            put(&x, r * C + 1, r == 3 ? top : r == 5 ? -top : u * 1e30);
            put(&x, r * C + 2, tiny * (1 + 50 * fabs(u)));      /* subnormal only */
            put(&x, r * C + 3, u * 1e-30);                      /* an ordinary small column */
        }
        put(&x, 7 * C + 0, NAN);
        cls_pipeline p = {.scaler = CLS_DECIMAL};
        for (int scope = 0; scope < 2; scope++) {
            p.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
            char label[96];
            snprintf(label, sizeof label, "decimal at the range's ends, %s, %s", t ? "f64" : "f32",
                     scope ? "batch" : "matrix");
            cls_stats *s = check_fit_transform(ctx, &x, &p, label);
            check_transform(ctx, &x, &p, s, &x, label);
            cls_stats_destroy(s);
        }
        ref_free(&x);
    }
    cls_context_destroy(ctx);
}

/* Rows of an odd number of float pairs (or of an odd number of doubles)
 * start every other row 8 bytes past a 16-byte boundary, and rows of an
 * odd number of floats at every multiple of 4 bytes past one, where
 * PoCL's non-temporal stores (outputs over 1 MiB) write in 4-, 8- and
 * 16-byte pieces. The fused call and the transform, into outputs at a
 * 16-byte boundary and 4, 8 and 12 bytes past it (8 for doubles), write
 * the same bytes, match the reference, and leave the 16 bytes on either
 * side of the output as they were. */
#define GUARD_BYTES 16
static void *guarded_out(cls_dtype dt, size_t n, size_t shift, cls_array *y, const cls_array *x)
{
    size_t es = dt == CLS_F64 ? 8 : 4;
    unsigned char *buf = aligned_alloc(64, (n * es + 2 * GUARD_BYTES + 63) / 64 * 64);
    assert_non_null(buf);
    memset(buf, 0x5a, n * es + 2 * GUARD_BYTES);
    *y = *x;
    y->data = buf + GUARD_BYTES - shift;
    return buf;
}

static void guards_untouched(const unsigned char *buf, size_t nbytes, size_t shift, const char *label)
{
    for (size_t i = 0; i < GUARD_BYTES - shift; i++)
        if (buf[i] != 0x5a) fail_msg("%s: byte %zu before the output written", label, GUARD_BYTES - shift - i);
    for (size_t i = GUARD_BYTES - shift + nbytes; i < nbytes + 2 * GUARD_BYTES; i++)
        if (buf[i] != 0x5a) fail_msg("%s: byte %zu past the output written", label, i - (GUARD_BYTES - shift + nbytes));
}

/* One scaler, fused and as a transform, into every shift's output. */
static void rows_at_shifts(cls_context *ctx, cls_dtype dt, size_t b, size_t r, size_t c, int sc, uint64_t seed)
{
    size_t es = dt == CLS_F64 ? 8 : 4, n = b * r * c, nshift = es == 8 ? 2 : 4;
    cls_array x = ref_make(dt, b, r, c, seed, REF_MISSING | REF_NEGATIVE);
    cls_pipeline p = {.scaler = scalers[sc], .scope = CLS_SCOPE_MATRIX};
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    ref_fit_transform(&x, &p, want, NULL);
    for (int op = 0; op < 2; op++) {
        cls_stats *s = NULL;
        if (op) assert_int_equal(cls_fit(ctx, &p, &x, &s), CLS_OK);
        void *first = NULL;
        cls_array y0 = x;
        for (size_t k = 0; k < nshift; k++) {
            size_t shift = k * (es == 8 ? 8 : 4);
            char label[128];
            snprintf(label, sizeof label, "%s %s %s, rows of %zu bytes, output %zu bytes past 16",
                     scaler_names[sc], es == 8 ? "f64" : "f32", op ? "transform" : "fit_transform", c * es, shift);
            cls_array y;
            void *buf = guarded_out(dt, n, shift, &y, &x);
            cls_stats *sk = NULL;
            cls_status st = op ? cls_transform(ctx, &p, s, &x, &y) : cls_fit_transform(ctx, &p, &x, &y, &sk);
            if (st != CLS_OK) print_error("%s: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
            assert_int_equal(st, CLS_OK);
            cls_stats_destroy(sk);
            guards_untouched(buf, n * es, shift, label);
            assert_int_equal(ref_compare(&y, want, tol_for(dt), label), 0);
            if (!first) {
                first = buf;
                y0 = y;
                continue;
            }
            if (memcmp(y0.data, y.data, n * es) != 0) fail_msg("%s: differs from the aligned output", label);
            free(buf);
        }
        free(first);
        cls_stats_destroy(s);
    }
    free(want);
    ref_free(&x);
}

static void rows_off_16_bytes_take_pieces(void **state)
{
    (void)state;
    int tiny = test_suite_is("oclgrind");
    /* the pieces of every vector width on PoCL (the default 8 elsewhere) */
    static const unsigned vecs[] = {8, 4, 16};
    for (size_t v = 0; v < (test_suite_is("pocl") ? 3u : 1u); v++) {
        cls_tuning t = {0};
        t.vec = vecs[v];
        cls_context *ctx = test_context_tuned(&t, NULL, 0, 0);
        /* each matrix over 1 MiB: rows of 2050 and 2049 floats, 1025 doubles */
        size_t b = 2, r = tiny ? 5 : 130;
        for (int sc = 0; sc < 2; sc++) {
            if (suite_runs(CLS_F32)) {
                rows_at_shifts(ctx, CLS_F32, b, r, tiny ? 18 : 2050, sc, 9300 + (uint64_t)sc);
                rows_at_shifts(ctx, CLS_F32, b, r, tiny ? 17 : 2049, sc, 9310 + (uint64_t)sc);
            }
            if (suite_runs(CLS_F64)) rows_at_shifts(ctx, CLS_F64, b, r, tiny ? 9 : 1025, sc, 9320 + (uint64_t)sc);
        }
        cls_context_destroy(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_columns),
        cmocka_unit_test(negative_values),
        cmocka_unit_test(wide_groups_convert_in_pieces),
        cmocka_unit_test(missing_values_are_skipped_and_passed_through),
        cmocka_unit_test(constant_and_all_missing_columns),
        cmocka_unit_test(float32_offset_mean_1e4_times_spread),
        cmocka_unit_test(minmax_custom_range_and_clip),
        cmocka_unit_test(sparse_missing_values_in_clean_blocks),
        cmocka_unit_test(decimal_at_the_ends_of_the_range),
        cmocka_unit_test(rows_off_16_bytes_take_pieces),
    };
    return TEST_RUN("scalers", tests, NULL, NULL);
}
