/* The discount product y = x * factors, alone and fused with each scaler
 * (forward and inverse), for every broadcast shape of the factors, against
 * the float64 reference; factors that cannot be used are CLS_E_ARG and leave
 * the output alone; small slices cut the data into factor windows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_util.h"

static const cls_scaler scalers[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
static const char *const scaler_names[] = {"minmax", "zscore", "decimal"};

static const char *dtype_name(cls_dtype t) { return t == CLS_F64 ? "f64" : "f32"; }
static size_t bytes_of(const cls_array *a) { return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4); }

/* The data's shape and every factor shape that broadcasts against it. */
enum { B = 3, R = 17, C = 6 };
typedef struct fshape {
    size_t b, r, c;
    const char *name;
} fshape;
static const fshape fshapes[] = {
    {1, 1, C, "(cols)"},          {1, R, C, "(rows, cols)"},   {B, R, C, "(batch, rows, cols)"},
    {1, R, 1, "(1, rows, 1)"},    {B, 1, 1, "(batch, 1, 1)"},  {B, 1, C, "(batch, 1, cols)"},
    {1, 1, 1, "scalar (1, 1, 1)"}, {B, R, 1, "(batch, rows, 1)"},
};
enum { NFSHAPES = sizeof fshapes / sizeof fshapes[0] };

static void discount_alone_every_factor_shape(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (size_t k = 0; k < NFSHAPES; k++) {
            const fshape *fs = &fshapes[k];
            char label[96];
            snprintf(label, sizeof label, "discount %s %s", fs->name, dtype_name(dt));
            cls_array x = ref_make(dt, B, R, C, 4000 + k * 2 + (uint64_t)t, REF_MISSING | REF_NEGATIVE);
            cls_array f = ref_make_factors(dt, fs->b, fs->r, fs->c, 4100 + k);
            cls_pipeline p = {.factors = &f};
            check_transform(ctx, &x, &p, NULL, &x, label);
            /* fit_transform with no scaler: the discount plus a describe */
            cls_stats_destroy(check_fit_transform(ctx, &x, &p, label));
            ref_free(&x);
            ref_free(&f);
        }
    }
    cls_context_destroy(ctx);
}

/* Each scaler, fitted and applied, then discounted in the same pass. */
static void scaler_fused_with_discount(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int sc = 0; sc < 3; sc++)
            for (int scope = 0; scope < 2; scope++)
                for (size_t k = 0; k < NFSHAPES; k++) {
                    const fshape *fs = &fshapes[k];
                    char label[128];
                    snprintf(label, sizeof label, "%s + discount %s %s %s", scaler_names[sc], fs->name,
                             dtype_name(dt), scope ? "batch" : "matrix");
                    uint64_t seed = 4200 + (uint64_t)(t * 1000 + sc * 100 + scope * 10) + k;
                    cls_array x = ref_make(dt, B, R, C, seed, REF_MISSING | REF_NEGATIVE);
                    cls_array x2 = ref_make(dt, B, R, C, seed + 5000, REF_MISSING | REF_NEGATIVE);
                    cls_array f = ref_make_factors(dt, fs->b, fs->r, fs->c, seed + 7);
                    cls_pipeline p = {.scaler = scalers[sc], .scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX,
                                      .factors = &f};
                    cls_stats *s = check_fit_transform(ctx, &x, &p, label);
                    /* the same statistics on other data, with the discount */
                    check_transform(ctx, &x2, &p, s, &x, label);
                    cls_stats_destroy(s);
                    ref_free(&x);
                    ref_free(&x2);
                    ref_free(&f);
                }
    }
    cls_context_destroy(ctx);
}

/* inverse then discount: y = inverse(forward(x)) * factors, as the
 * reference computes it from forward(x) and x's statistics. */
static void inverse_then_discount(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int sc = 0; sc < 3; sc++)
            for (size_t k = 0; k < NFSHAPES; k += 2) {
                const fshape *fs = &fshapes[k];
                char label[128];
                snprintf(label, sizeof label, "inverse %s + discount %s %s", scaler_names[sc], fs->name,
                         dtype_name(dt));
                uint64_t seed = 4400 + (uint64_t)(t * 100 + sc * 10) + k;
                cls_array x = ref_make(dt, B, R, C, seed, REF_MISSING | REF_NEGATIVE);
                cls_array f = ref_make_factors(dt, fs->b, fs->r, fs->c, seed + 7);
                cls_pipeline p = {.scaler = scalers[sc], .scope = sc == 1 ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
                if (p.scaler == CLS_MINMAX) {
                    p.lo = -1;
                    p.hi = 1;
                }
                cls_array y = make_out(&x);
                cls_stats *s = NULL;
                assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, &s), CLS_OK);
                p.inverse = 1;
                p.factors = &f;
                cls_array z = make_out(&x);
                cls_status st = cls_transform(ctx, &p, s, &y, &z);
                if (st != CLS_OK) print_error("%s: %s\n", label, cls_last_error(ctx));
                assert_int_equal(st, CLS_OK);
                size_t n = x.batch * x.rows * x.cols;
                double *want = malloc(n * sizeof *want);
                cls_column_stats *rs = calloc(ref_groups(&x, p.scope) * x.cols, sizeof *rs);
                assert_non_null(want);
                assert_non_null(rs);
                ref_fit(&x, p.scope, rs);
                ref_transform(&y, &p, rs, want);
                assert_int_equal(compare_on_column_scale(&z, want, &x, tol_for(dt), label), 0);
                free(want);
                free(rs);
                cls_stats_destroy(s);
                ref_free(&x);
                ref_free(&y);
                ref_free(&z);
                ref_free(&f);
            }
    }
    cls_context_destroy(ctx);
}

/* Both calls refuse `p` with CLS_E_ARG, a message naming `word`, and an
 * output left as it was. */
static void assert_refused(cls_context *ctx, const cls_pipeline *p, const cls_array *x, const cls_stats *s,
                           const char *word, const char *label)
{
    cls_array y = make_out(x), before = ref_copy(&y);
    cls_stats *fitted = (cls_stats *)&fitted; /* must come back NULL */
    cls_status st = cls_fit_transform(ctx, p, x, &y, &fitted);
    if (st != CLS_E_ARG) fail_msg("%s: cls_fit_transform returned %s", label, cls_status_str(st));
    assert_null(fitted);
    const char *msg = cls_last_error(ctx);
    if (!strstr(msg, word)) fail_msg("%s: message \"%s\" does not name \"%s\"", label, msg, word);
    assert_memory_equal(y.data, before.data, bytes_of(&y));
    st = cls_transform(ctx, p, s, x, &y);
    if (st != CLS_E_ARG) fail_msg("%s: cls_transform returned %s", label, cls_status_str(st));
    msg = cls_last_error(ctx);
    if (!strstr(msg, word)) fail_msg("%s: message \"%s\" does not name \"%s\"", label, msg, word);
    assert_memory_equal(y.data, before.data, bytes_of(&y));
    ref_free(&y);
    ref_free(&before);
}

static void factors_that_do_not_broadcast_are_refused(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const fshape bad[] = {
        {1, 1, C + 1, "cols + 1"}, {1, R - 1, C, "rows - 1"}, {B + 1, 1, 1, "batch + 1"},
        {2, R, C, "batch 2 of 3"}, {1, C, R, "transposed"}, {1, 1, 2 * C, "twice the cols"},
    };
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        cls_array x = ref_make(dt, B, R, C, 4600 + (uint64_t)t, REF_MISSING);
        cls_pipeline fit_p = {.scaler = CLS_ZSCORE};
        cls_stats *s = NULL;
        assert_int_equal(cls_fit(ctx, &fit_p, &x, &s), CLS_OK);
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            cls_array f = ref_make_factors(dt, bad[k].b, bad[k].r, bad[k].c, 4700 + k);
            char label[96];
            snprintf(label, sizeof label, "factors %s %s", bad[k].name, dtype_name(dt));
            cls_pipeline alone = {.factors = &f};
            assert_refused(ctx, &alone, &x, NULL, "broadcast", label);
            cls_pipeline fused = {.scaler = CLS_ZSCORE, .factors = &f};
            assert_refused(ctx, &fused, &x, s, "broadcast", label);
            ref_free(&f);
        }
        cls_stats_destroy(s);
        ref_free(&x);
    }
    cls_context_destroy(ctx);
}

static void factors_of_the_other_dtype_are_refused(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32, other = t ? CLS_F32 : CLS_F64;
        if (!suite_runs(dt)) continue;
        cls_array x = ref_make(dt, B, R, C, 4800 + (uint64_t)t, 0);
        cls_array f = ref_make_factors(other, 1, R, C, 4810);
        cls_pipeline fit_p = {.scaler = CLS_MINMAX};
        cls_stats *s = NULL;
        assert_int_equal(cls_fit(ctx, &fit_p, &x, &s), CLS_OK);
        cls_pipeline alone = {.factors = &f};
        assert_refused(ctx, &alone, &x, NULL, "factors", dtype_name(dt));
        cls_pipeline fused = {.scaler = CLS_MINMAX, .factors = &f};
        assert_refused(ctx, &fused, &x, s, "factors", dtype_name(dt));
        cls_stats_destroy(s);
        ref_free(&f);
        ref_free(&x);
    }
    cls_context_destroy(ctx);
}

static size_t report_slices(cls_context *ctx)
{
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.slices_done, rep.slices);
    return rep.slices;
}

/* Every factor shape of data b x r x c. */
static size_t factor_shapes(size_t b, size_t r, size_t c, fshape out[NFSHAPES])
{
    for (size_t k = 0; k < NFSHAPES; k++) {
        out[k] = fshapes[k];
        out[k].b = fshapes[k].b == B ? b : 1;
        out[k].r = fshapes[k].r == R ? r : 1;
        out[k].c = fshapes[k].c == C ? c : 1;
    }
    return NFSHAPES;
}

/* Every factor shape under 4 KiB slices: discount alone (rows merged into
 * long rows, cut in blocks), min-max per matrix (column blocks, one pass)
 * and z-score over a batch of more than 4096 rows (two passes), each slice
 * reading its own window of the factors. */
static void every_factor_shape_with_small_slices(void **state)
{
    (void)state;
    int tiny = test_suite_is("oclgrind");
    const size_t shapes[2][3] = {{3, tiny ? 100 : 300, tiny ? 20 : 40}, {3, 1500, tiny ? 1 : 4}};
    cls_context *ctx = test_context(NULL, 0, 4096);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int k = 0; k < 2; k++) {
            size_t b = shapes[k][0], r = shapes[k][1], c = shapes[k][2];
            cls_array x = ref_make(dt, b, r, c, 5100 + (uint64_t)(t * 10 + k), REF_MISSING | REF_NEGATIVE);
            fshape fs[NFSHAPES];
            factor_shapes(b, r, c, fs);
            for (size_t i = 0; i < NFSHAPES; i++) {
                if (tiny && i % 2) continue;
                cls_array f = ref_make_factors(dt, fs[i].b, fs[i].r, fs[i].c, 5200 + i);
                char label[160];
                snprintf(label, sizeof label, "small slices %zux%zux%zu factors %zux%zux%zu %s", b, r, c, fs[i].b,
                         fs[i].r, fs[i].c, dtype_name(dt));
                cls_pipeline p = {.factors = &f};
                check_transform(ctx, &x, &p, NULL, &x, label);
                p.scaler = k ? CLS_ZSCORE : CLS_MINMAX;
                p.scope = k ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
                cls_stats_destroy(check_fit_transform(ctx, &x, &p, label));
                cls_report rep;
                assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
                assert_int_equal(rep.phases, k ? 2 : 1);
                assert_true(rep.slices > 2);
                ref_free(&f);
            }
            ref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

/* The users' discount (100 x 400 x 5 by 400 x 5, float64) with 4 KiB slices:
 * every matrix is cut into blocks, each reading its own window of the
 * factors. Oclgrind: 10 matrices. */
static void discount_100x400x5_by_400x5_with_small_slices(void **state)
{
    (void)state;
    size_t batch = test_suite_is("oclgrind") ? 10 : 100;
    for (int staging = 0; staging < 2; staging++) {
        cls_context *ctx = test_context(NULL, staging ? CLS_FORCE_STAGING : 0, 4096);
        for (int t = 0; t < 2; t++) {
            cls_dtype dt = t ? CLS_F64 : CLS_F32;
            if (!suite_runs(dt)) continue;
            char label[96];
            snprintf(label, sizeof label, "discount %zux400x5 %s%s", batch, dtype_name(dt),
                     staging ? " staging" : "");
            cls_array x = ref_make(dt, batch, 400, 5, 4900 + (uint64_t)t, REF_MISSING | REF_NEGATIVE);
            cls_array f = ref_make_factors(dt, 1, 400, 5, 4910 + (uint64_t)t);
            cls_pipeline p = {.factors = &f};
            check_transform(ctx, &x, &p, NULL, &x, label);
            size_t slices = report_slices(ctx);
            if (slices < bytes_of(&x) / 4096) fail_msg("%s: only %zu slices", label, slices);
            ref_free(&x);
            ref_free(&f);
        }
        cls_context_destroy(ctx);
    }
}

/* Scalers fused with that discount under small slices: column blocks (one
 * pass) and batch-scope statistics over 40,000 rows (two passes), whose
 * scaling pass reads factor windows. */
static void scaler_and_discount_with_small_slices(void **state)
{
    (void)state;
    int tiny = test_suite_is("oclgrind");
    size_t batch = tiny ? 11 : 100, rows = 400;
    cls_context *ctx = test_context(NULL, 0, 4096);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        cls_array x = ref_make(dt, batch, rows, 5, 5000 + (uint64_t)t, REF_MISSING | REF_NEGATIVE);
        cls_array f = ref_make_factors(dt, 1, rows, 5, 5010 + (uint64_t)t);
        for (int sc = 0; sc < 3; sc++)
            for (int scope = 0; scope < 2; scope++) {
                if (tiny && sc != scope) continue;
                cls_pipeline p = {.scaler = scalers[sc], .scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX,
                                  .factors = &f};
                char label[128];
                snprintf(label, sizeof label, "%s + discount small slices %s %s", scaler_names[sc],
                         dtype_name(dt), scope ? "batch" : "matrix");
                cls_stats_destroy(check_fit_transform(ctx, &x, &p, label));
                cls_report rep;
                assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
                assert_int_equal(rep.phases, scope ? 2 : 1);
                assert_true(rep.slices > batch);
            }
        ref_free(&x);
        ref_free(&f);
    }
    cls_context_destroy(ctx);
}

/* How many of the last call's kernels had this name (CLS_PROFILE). */
static size_t kernels_named(cls_context *ctx, const char *name)
{
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    size_t n = 0;
    for (size_t i = 0; i < rep.nevents; i++)
        if (rep.events[i].kind == CLS_EV_KERNEL && rep.events[i].name && strcmp(rep.events[i].name, name) == 0)
            n++;
    return n;
}

/* Rows of thousands of values take the streaming discount kernel (a run of
 * one row per work-item), whatever the factors' shape: per column (fsc 1),
 * one per row or matrix (fsc 0), merged or not. Odd widths leave partial
 * vectors at the ends of runs; slices of 16 KiB cut rows into column blocks
 * that read factor windows, also through the staging path; and a view one
 * element into its buffer, in place, is neither 16-byte aligned (no
 * non-temporal stores) nor out of place. */
static void long_rows_stream_through_the_discount_kernel(void **state)
{
    (void)state;
    int tiny = test_suite_is("oclgrind");
    size_t b = 2, r = 3, c = tiny ? 1100 : 3001;
    /* mode 0: default slices; 1: 16 KiB slices; 2: 16 KiB slices through
     * the discrete-GPU (staging) path, packed slices on device buffers */
    for (int mode = 0; mode < 3; mode++) {
        int small = mode > 0;
        cls_context *ctx = test_context(NULL, CLS_PROFILE | (mode == 2 ? CLS_FORCE_STAGING : 0), small ? 16384 : 0);
        for (int t = 0; t < 2; t++) {
            cls_dtype dt = t ? CLS_F64 : CLS_F32;
            if (!suite_runs(dt)) continue;
            cls_array x = ref_make(dt, b, r, c, 5300 + (uint64_t)(t * 2 + small), REF_MISSING | REF_NEGATIVE);
            fshape fs[NFSHAPES];
            factor_shapes(b, r, c, fs);
            for (size_t i = 0; i < NFSHAPES; i++) {
                if (tiny && small && i % 2) continue;
                cls_array f = ref_make_factors(dt, fs[i].b, fs[i].r, fs[i].c, 5400 + i);
                char label[160];
                snprintf(label, sizeof label, "long rows %zux%zux%zu factors %s %s%s%s", b, r, c, fs[i].name,
                         dtype_name(dt), small ? " 16 KiB slices" : "", mode == 2 ? " staging" : "");
                cls_pipeline p = {.factors = &f};
                check_transform(ctx, &x, &p, NULL, &x, label);
                /* a narrow remainder of a row may go to the apply kernel */
                if (kernels_named(ctx, "discount") == 0 || (!small && kernels_named(ctx, "apply") != 0))
                    fail_msg("%s: the discount kernel did not take the slices", label);
                if (small && report_slices(ctx) < 2) fail_msg("%s: one slice", label);
                ref_free(&f);
            }
            ref_free(&x);
            /* in place, on a view one element into its buffer, large enough
             * (over 1 MiB) for PoCL's non-temporal stores */
            size_t wide = tiny ? c : 30001;
            x = ref_make(dt, b, r, wide, 5350 + (uint64_t)(t * 2 + small), REF_MISSING | REF_NEGATIVE);
            cls_array f = ref_make_factors(dt, 1, r, wide, 5500 + (uint64_t)t);
            size_t n = b * r * wide, es = dt == CLS_F64 ? 8 : 4;
            char *buf = malloc((n + 1) * es);
            assert_non_null(buf);
            memcpy(buf + es, x.data, n * es);
            cls_array v = x;
            v.data = buf + es;
            cls_pipeline p = {.factors = &f};
            cls_status st = cls_transform(ctx, &p, NULL, &v, &v);
            if (st != CLS_OK) print_error("%s\n", cls_last_error(ctx));
            assert_int_equal(st, CLS_OK);
            assert_true(kernels_named(ctx, "discount") > 0);
            double *want = malloc(n * sizeof *want);
            assert_non_null(want);
            ref_transform(&x, &p, NULL, want);
            assert_int_equal(ref_compare(&v, want, tol_for(dt), "long rows, in place, misaligned"), 0);
            free(want);
            free(buf);
            ref_free(&f);
            ref_free(&x);
        }
        cls_context_destroy(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(discount_alone_every_factor_shape),
        cmocka_unit_test(scaler_fused_with_discount),
        cmocka_unit_test(inverse_then_discount),
        cmocka_unit_test(factors_that_do_not_broadcast_are_refused),
        cmocka_unit_test(factors_of_the_other_dtype_are_refused),
        cmocka_unit_test(every_factor_shape_with_small_slices),
        cmocka_unit_test(discount_100x400x5_by_400x5_with_small_slices),
        cmocka_unit_test(scaler_and_discount_with_small_slices),
        cmocka_unit_test(long_rows_stream_through_the_discount_kernel),
    };
    return TEST_RUN("discount", tests, NULL, NULL);
}
