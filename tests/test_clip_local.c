/* The one-pass clipping's GPU kernel (cl/clip_local.cl: a column per
 * work-item, its rows in local memory), forced on every device through the
 * test hook ctx->clip_local, against the float64 reference of astropy's
 * sigma_clip + SimpleImputer (clean_ref.c) and against the path the device
 * takes otherwise (ctx->clip_local = -1): clip.cl's kernel (on Oclgrind
 * built unoptimised, src/engine/program.c).
 *
 * Against the other path: the same counts, masks (mask_out too), fill values and
 * iterations, the output byte for byte, except clamped values (the bounds,
 * computed from sums over the sorted values: within tol). The cases of
 * test_clip_fast.c, fewer: hostile columns (ties, heavy tails, NaN and
 * +-Inf, constant, all-NaN, float32 at 1e6), a sentinel, rows 1 to 64
 * (both networks), column counts that leave the last work-group part-full
 * (LW 32 or 64 columns), every option, the hostile scales of the sorted
 * sums, a fused scaler's statistics (the row-order moments) and in place.
 * rusticl: float32, rows <= 33 (test_clip_fast.c says why); Oclgrind:
 * small shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "clean_ref.h"
#include "pipeline_util.h"

typedef cleaned result;

static int same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* Whether some device of ctx built kernel k for dtype t. */
static int built(cls_context *ctx, int k, cls_dtype t)
{
    for (size_t i = 0; i < ctx->ndevs; i++)
        for (unsigned c = 0; c < CLS_MAX_QUEUES; c++)
            if (ctx->devs[i].k[c][k][t]) return 1;
    return 0;
}

/* Cleans x with o, clip_local.cl's kernel forced (local) or not. */
static void run(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, int local, result *r)
{
    ctx->clip_local = local ? 1 : -1;
    clean_into(ctx, x, scope, o, 1, r);
    ctx->clip_local = 0;
}

static void check(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, const char *label)
{
    size_t G = cref_groups(x, scope), C = x->cols, ne = G * C, n = x->batch * x->rows * C;
    size_t rows = cref_group_rows(x, scope);
    int k = rows <= 32 ? CLS_K_CLIP32L : CLS_K_CLIP64L;
    result f, m;
    run(ctx, x, scope, o, 1, &f);
    if (!built(ctx, k, x->dtype)) fail_msg("%s: %s was not run", label, cls_kernel_names[k]);
    double *want = malloc(n * sizeof *want);
    uint64_t *wmiss = calloc(ne, 8), *wclip = calloc(ne, 8);
    for (size_t g = 0; g < G; g++)
        for (size_t c = 0; c < C; c++) cref_clean_column(x, scope, g, c, &o, want, &wmiss[g * C + c], &wclip[g * C + c]);
    double tol = x->dtype == CLS_F64 ? 1e-12 : 1e-6;
    size_t bad = 0;
    /* CLS_CLIP_KEEP: the mask where the reference (which masks) is NaN or
     * +-Inf, and every value as read */
    if (o.mode == CLS_CLIP_KEEP)
        for (size_t i = 0; i < n; i++) {
            if (f.mask[i] != !isfinite(want[i]) && bad++ < 5)
                printf("# %s: element %zu: mask %u, reference %.17g\n", label, i, f.mask[i], want[i]);
            want[i] = cref_get(x, i);
        }
    for (size_t i = 0; i < n; i++) {
        double got = cref_get(&f.y, i), w = x->dtype == CLS_F32 ? (double)(float)want[i] : want[i];
        if (!((isnan(got) && isnan(w)) || got == w || fabs(got - w) <= tol * fmax(1, fabs(w))) && bad++ < 5)
            printf("# %s: element %zu (column %zu): got %.17g want %.17g\n", label, i, i % C, got, w);
    }
    for (size_t e = 0; e < ne; e++)
        if ((f.miss[e] != wmiss[e] || f.clip[e] != wclip[e]) && bad++ < 10)
            printf("# %s: entry %zu: missing %llu clipped %llu, want %llu %llu\n", label, e,
                   (unsigned long long)f.miss[e], (unsigned long long)f.clip[e], (unsigned long long)wmiss[e],
                   (unsigned long long)wclip[e]);
    /* the mask: where the output is NaN or +-Inf (NaN where clipped or
     * missing, +-Inf passed through) when nothing is filled or clamped */
    if (o.mode == CLS_CLIP_MASK && o.impute == CLS_IMPUTE_NONE)
        for (size_t i = 0; i < n; i++)
            if (f.mask[i] != !isfinite(cref_get(&f.y, i)) && bad++ < 5)
                printf("# %s: element %zu: mask %u, output %.17g\n", label, i, f.mask[i], cref_get(&f.y, i));
    if (bad) fail_msg("%s: %zu differences from the reference", label, bad);
    /* the other path: clip.cl's kernel (on Oclgrind, unoptimised and slow:
     * on groups of 33 rows only, and where the devices have float64, as
     * test_clip_fast.c compares) */
    int og = test_suite_is("oclgrind");
    if (!og || (rows == 33 && (x->dtype == CLS_F64 || all_fp64(ctx)))) {
        run(ctx, x, scope, o, 0, &m);
        size_t es = x->dtype == CLS_F64 ? 8 : 4;
        int clamp = o.mode == CLS_CLIP_CLAMP;
        double ctol = x->dtype == CLS_F64 ? tol : 1e-5;
        for (size_t i = 0; i < n; i++)
            if (memcmp((const char *)f.y.data + i * es, (const char *)m.y.data + i * es, es) != 0 &&
                !(clamp && fabs(cref_get(&f.y, i) - cref_get(&m.y, i)) <= ctol * fmax(1, fabs(cref_get(&m.y, i)))) &&
                bad++ < 5)
                printf("# %s: element %zu: clip_local %.17g, other %.17g\n", label, i, cref_get(&f.y, i),
                       cref_get(&m.y, i));
        for (size_t e = 0; e < ne; e++)
            if ((f.miss[e] != m.miss[e] || f.clip[e] != m.clip[e] || !same(f.fill[e], m.fill[e])) && bad++ < 10)
                printf("# %s: entry %zu: clip_local missing %llu clipped %llu fill %.17g, other %llu %llu %.17g\n",
                       label, e, (unsigned long long)f.miss[e], (unsigned long long)f.clip[e], f.fill[e],
                       (unsigned long long)m.miss[e], (unsigned long long)m.clip[e], m.fill[e]);
        if (f.iters != m.iters && bad++ < 10) printf("# %s: iterations %u, other %u\n", label, f.iters, m.iters);
        for (size_t i = 0; i < n; i++)
            if (f.mask[i] != m.mask[i] && bad++ < 10)
                printf("# %s: element %zu: mask %u, other %u\n", label, i, f.mask[i], m.mask[i]);
        cleaned_free(&m);
        if (bad) fail_msg("%s: %zu differences from the other path", label, bad);
    }
    cleaned_free(&f);
    free(want);
    free(wmiss);
    free(wclip);
}

/* columns: odd, past one work-group of 64 (and two of 32) on PoCL and
 * rusticl, part of one (two of 32) on Oclgrind */
static size_t cols(void) { return test_suite_is("oclgrind") ? 37 : test_suite_is("rusticl") ? 67 : 69; }
static size_t rows_max(void) { return test_suite_is("rusticl") ? 33 : 64; }

static const cls_clean opts[] = {
    {.sigma = 3},
    {.sigma = 3, .maxiters = -1},
    {.sigma = 2, .maxiters = -1, .center = CLS_CENTER_MEAN},
    {.sigma = 2.5, .maxiters = 3, .spread = CLS_SPREAD_MAD_STD},
    {.sigma = 2, .maxiters = -1, .center = CLS_CENTER_MEAN, .spread = CLS_SPREAD_MAD_STD},
    {.sigma = 3, .sigma_lower = 1.5, .sigma_upper = 2.5, .maxiters = 1},
    {.sigma = 2, .maxiters = -1, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_MEDIAN},
    {.sigma = 2, .impute = CLS_IMPUTE_MEAN, .has_missing_value = 1, .missing_value = 1},
    {.sigma = 2, .maxiters = -1, .impute = CLS_IMPUTE_MOST_FREQUENT},
    {.sigma = 1.5, .impute = CLS_IMPUTE_CONSTANT, .fill_value = -3.5, .mode = CLS_CLIP_CLAMP},
    {.sigma = 2.5, .maxiters = -1, .mode = CLS_CLIP_KEEP, .has_missing_value = 1, .missing_value = 1},
};
#define NOPTS (sizeof opts / sizeof opts[0])

static void local_kernel_equals_other_path_and_reference(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    int og = test_suite_is("oclgrind");
    const size_t rows[] = {60, 1, 2, 3, 31, 32, 33, 64};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            if (rows[ri] > rows_max() || (og && rows[ri] != 60 && rows[ri] != 3 && rows[ri] != 33)) continue;
            cls_array x = cref_make(t, 2, rows[ri], cols(), 1700 + ri + 10 * (uint64_t)ti);
            /* every option set on 60 rows, two on the others (Oclgrind: two
             * per dtype on 60 rows, and CLS_CLIP_KEEP in float64; one on 3
             * and 33) */
            for (size_t k = 0; k < NOPTS; k++) {
                int want = ri == 0 ? !og || k == 1 + 3 * (size_t)ti || k == 6 + 2 * (size_t)ti ||
                                         (ti && k == NOPTS - 1)
                                   : k == 1 || (!og && k == 4 + ri % 6);
                if (!want) continue;
                char label[96];
                snprintf(label, sizeof label, "%s rows %zu options %zu", ti ? "f64" : "f32", rows[ri], k);
                check(ctx, &x, CLS_SCOPE_MATRIX, opts[k], label);
            }
            cref_free(&x);
        }
        /* batch scope: 3 matrices of 11 rows are one group of 33 */
        cls_array b = cref_make(t, 3, 11, cols(), 1790 + (uint64_t)ti);
        check(ctx, &b, CLS_SCOPE_BATCH, opts[6], ti ? "f64 batch clamp" : "f32 batch clamp");
        cref_free(&b);
    }
    cls_context_destroy(ctx);
}

static void local_kernel_holds_on_hostile_scales(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_clean o[] = {
        {.sigma = 3, .sigma_lower = 0.2, .sigma_upper = 3, .maxiters = -1},
        {.sigma = 1.5, .maxiters = -1, .center = CLS_CENTER_MEAN, .impute = CLS_IMPUTE_MEAN},
        {.sigma = 1, .maxiters = -1, .spread = CLS_SPREAD_MAD_STD, .mode = CLS_CLIP_CLAMP},
        {.sigma = 2, .sigma_lower = 3, .sigma_upper = 0.3, .maxiters = 2, .mode = CLS_CLIP_CLAMP},
    };
    const size_t rows[] = {60, 33, 5};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            /* Oclgrind: float32 on 60 rows, float64 on 5 */
            if (rows[ri] > rows_max() || (test_suite_is("oclgrind") && ri != 2 * (size_t)ti)) continue;
            cls_array x = cref_make_scales(t, rows[ri], 24, 1950 + ri);
            for (size_t k = 0; k < sizeof o / sizeof o[0]; k++) {
                if (test_suite_is("oclgrind") && k % 2) continue;
                char label[96];
                snprintf(label, sizeof label, "scales %s rows %zu options %zu", ti ? "f64" : "f32", rows[ri], k);
                check(ctx, &x, CLS_SCOPE_MATRIX, o[k], label);
            }
            cref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

/* A scaler after the cleaning: the kernel hands on the moments it summed
 * in row order (no output written): fitted statistics and output as the
 * other path's, bit for bit where the device sums in float64. */
static void fused_scaler_equals_other_path(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 2, test_suite_is("rusticl") ? 30 : 60, cols(), 1800);
    cls_clean o = {.sigma = 3, .maxiters = -1, .impute = CLS_IMPUTE_MEAN, .has_missing_value = 1, .missing_value = 2};
    cls_pipeline p = {.scaler = CLS_ZSCORE, .clean = &o};
    cls_array y[2] = {make_out(&x), make_out(&x)};
    cls_stats *s[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        ctx->clip_local = k ? -1 : 1;
        cls_status st = cls_fit_transform(ctx, &p, &x, &y[k], &s[k]);
        ctx->clip_local = 0;
        if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    }
    assert_true(built(ctx, x.rows <= 32 ? CLS_K_CLIP32L : CLS_K_CLIP64L, t));
    size_t n = x.batch * x.rows * x.cols;
    for (size_t i = 0; i < n; i++)
        if (!same(cref_get(&y[0], i), cref_get(&y[1], i)))
            fail_msg("element %zu: clip_local %.17g, other %.17g", i, cref_get(&y[0], i), cref_get(&y[1], i));
    for (size_t g = 0; g < x.batch; g++)
        for (size_t c = 0; c < x.cols; c++) {
            cls_column_stats a, b;
            assert_int_equal(test_column(s[0], g, c, &a), CLS_OK);
            assert_int_equal(test_column(s[1], g, c, &b), CLS_OK);
            if (a.count != b.count || a.missing != b.missing || !same(a.mean, b.mean) || !same(a.m2, b.m2) ||
                !same(a.min, b.min) || !same(a.max, b.max))
                fail_msg("group %zu column %zu: count %llu mean %.17g m2 %.17g, other %llu %.17g %.17g", g, c,
                         (unsigned long long)a.count, a.mean, a.m2, (unsigned long long)b.count, b.mean, b.m2);
        }
    for (int k = 0; k < 2; k++) {
        cls_stats_destroy(s[k]);
        ref_free(&y[k]);
    }
    cref_free(&x);
    cls_context_destroy(ctx);
}

/* In place, clamped: each work-item reads its column whole before it
 * writes it. */
static void in_place_equals_out_of_place(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 2, 30, cols(), 1900);
    cls_clean c = {.sigma = 2, .maxiters = -1, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_MEDIAN};
    cls_array y = make_out(&x);
    ctx->clip_local = 1;
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &y, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &x, NULL), CLS_OK);
    ctx->clip_local = 0;
    assert_true(built(ctx, CLS_K_CLIP32L, t));
    assert_memory_equal(x.data, y.data, x.batch * x.rows * x.cols * (t == CLS_F64 ? 8 : 4));
    ref_free(&y);
    cref_free(&x);
    cls_context_destroy(ctx);
}

/* Unforced, each device takes its own kernel: clip_local.cl's on a GPU,
 * clip.cl's on a CPU device (PoCL, rusticl's llvmpipe) and on Oclgrind (a
 * simulator claiming every type is not taken for a GPU). */
static void auto_picks_by_device_type(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t gpus = 0, n = cls_device_count(ctx);
    for (size_t i = 0; i < n; i++) {
        unsigned ty = ctx->devs[i].info.type;
        gpus += (ty & CLS_DEVICE_GPU) && !(ty & CLS_DEVICE_CPU);
    }
    cls_array x = cref_make(CLS_F32, 2, 20, cols(), 2000);
    cls_array y = make_out(&x);
    cls_clean c = {.sigma = 2, .maxiters = -1};
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &y, NULL), CLS_OK);
    int vec = built(ctx, CLS_K_CLIP32, CLS_F32), loc = built(ctx, CLS_K_CLIP32L, CLS_F32);
    if (gpus == n) {
        assert_true(loc && !vec);
    } else if (gpus == 0) {
        assert_true(vec && !loc);
    }
    ref_free(&y);
    cref_free(&x);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(local_kernel_equals_other_path_and_reference),
        cmocka_unit_test(local_kernel_holds_on_hostile_scales),
        cmocka_unit_test(fused_scaler_equals_other_path),
        cmocka_unit_test(in_place_equals_out_of_place),
        cmocka_unit_test(auto_picks_by_device_type),
    };
    return TEST_RUN("clip_local", tests, NULL, NULL);
}
