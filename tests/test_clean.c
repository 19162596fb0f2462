/* The cleaning stage on the devices (cls_fit_transform, cls_fit_transform with
 * a cls_clean) against a float64 reference in plain C written below:
 * astropy's sigma_clip(axis=0) (cumulative masks, median or mean centre,
 * std or mad_std), scikit-learn's SimpleImputer (mean, median, most
 * frequent with the smallest of ties, constant), missing values NaN, +-Inf
 * or a sentinel; hostile columns (clean_ref.c: ties, heavy tails, +-Inf,
 * constant, all-NaN, a large offset), one-row columns, both scopes and
 * dtypes, the counts, the mask (mask_out), the fused scaling, in place, and
 * bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"
#include "pipeline_util.h"

/* Cleans x on the devices and compares with the reference; with `scaler`,
 * through cls_fit_transform and a z-score / min-max of the reference's
 * cleaned data. */
static void check(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, cls_scaler scaler,
                  const char *label)
{
    size_t n = x->batch * x->rows * x->cols, G = cref_groups(x, scope), ne = G * x->cols;
    uint64_t *miss = calloc(ne, 8), *clip = calloc(ne, 8), *wmiss = calloc(ne, 8), *wclip = calloc(ne, 8);
    double *want = malloc(n * sizeof *want);
    double *lo = malloc(ne * sizeof *lo), *hi = malloc(ne * sizeof *hi);
    o.missing_out = miss;
    o.clipped_out = clip;
    o.lower_out = lo;
    o.upper_out = hi;
    for (size_t g = 0; g < G; g++)
        for (size_t c = 0; c < x->cols; c++)
            cref_clean_column(x, scope, g, c, &o, want, &wmiss[g * x->cols + c], &wclip[g * x->cols + c]);
    cls_array y = make_out(x);
    cls_status st;
    if (scaler == CLS_NONE) st = cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &o}, x, &y, NULL);
    else {
        cls_pipeline p = {.scaler = scaler, .scope = scope, .clean = &o};
        st = cls_fit_transform(ctx, &p, x, &y, NULL);
        /* the reference scales its cleaned data column by column */
        size_t R = cref_group_rows(x, scope), C = x->cols;
        for (size_t e = 0; e < ne; e++) {
            size_t base = (e / C) * R * C + e % C, k = 0;
            double sum = 0, mn = INFINITY, mx = -INFINITY, m2 = 0;
            for (size_t r = 0; r < R; r++) {
                double v = want[base + r * C];
                if (!isfinite(v)) continue;
                k++;
                sum += v;
                mn = fmin(mn, v);
                mx = fmax(mx, v);
            }
            double mean = sum / (double)k;
            for (size_t r = 0; r < R; r++) {
                double v = want[base + r * C];
                if (isfinite(v)) m2 += (v - mean) * (v - mean);
            }
            double sd = sqrt(m2 / (double)k);
            for (size_t r = 0; k && r < R; r++) {
                double *v = &want[base + r * C];
                if (!isfinite(*v)) continue;
                if (scaler == CLS_ZSCORE) *v = sd > 0 ? (*v - mean) / sd : 0;
                else *v = mx > mn ? (*v - mn) / (mx - mn) : 0;
            }
        }
    }
    if (st != CLS_OK) fail_msg("%s: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
    /* float32: the reference's float64 arithmetic on float32 inputs; the
     * scaled large-offset column carries float32's resolution at 1e6 */
    double tol = x->dtype == CLS_F64 ? (scaler ? 1e-7 : 1e-12) : (scaler ? 1e-3 : 1e-6);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double got = cref_get(&y, i), w = x->dtype == CLS_F32 ? (double)(float)want[i] : want[i];
        int ok = (isnan(got) && isnan(w)) || got == w || fabs(got - w) <= tol * fmax(1, fabs(w));
        if (!ok && bad++ < 5) printf("# %s: element %zu (column %zu): got %.17g want %.17g\n", label, i,
                                     i % x->cols, got, w);
    }
    assert_int_equal(bad, 0);
    for (size_t e = 0; e < ne; e++) {
        if (miss[e] != wmiss[e] || clip[e] != wclip[e])
            fail_msg("%s: entry %zu: missing %llu clipped %llu, want %llu, %llu", label, e,
                     (unsigned long long)miss[e], (unsigned long long)clip[e], (unsigned long long)wmiss[e],
                     (unsigned long long)wclip[e]);
    }
    /* the bounds handed out are the last ones, values of the data's type:
     * the values outside them are those clipped (NaN bounds clip nothing);
     * without clipping -Inf and +Inf */
    size_t R = cref_group_rows(x, scope), C = x->cols;
    for (size_t e = 0; e < ne; e++) {
        uint64_t out = 0;
        for (size_t r = 0; r < R; r++) {
            double v = cref_get(x, (e / C) * R * C + r * C + e % C);
            if (isfinite(v) && !(o.has_missing_value && v == o.missing_value)) out += v < lo[e] || v > hi[e];
        }
        if (out != clip[e] || (x->dtype == CLS_F32 && isfinite(lo[e]) && (double)(float)lo[e] != lo[e]))
            fail_msg("%s: entry %zu: %llu values outside [%.17g, %.17g], %llu clipped", label, e,
                     (unsigned long long)out, lo[e], hi[e], (unsigned long long)clip[e]);
        if (o.sigma <= 0 && !(lo[e] == -INFINITY && hi[e] == INFINITY))
            fail_msg("%s: entry %zu: bounds %g %g without clipping", label, e, lo[e], hi[e]);
    }
    /* no output (out NULL): mask_out, 1 where missing or outside those
     * bounds, and the moments of the values kept (mean_out, m2_out)
     * against a two-pass float64 reference over the same values */
    if (scaler == CLS_NONE) {
        uint8_t *mask = malloc(n);
        double *mean = malloc(ne * sizeof *mean), *m2 = malloc(ne * sizeof *m2);
        memset(mask, 7, n);
        cls_clean k = o;
        k.mask_out = mask;
        k.mean_out = mean;
        k.m2_out = m2;
        k.missing_out = k.clipped_out = NULL;
        k.lower_out = k.upper_out = NULL;
        st = cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &k}, x, NULL, NULL);
        if (st != CLS_OK) fail_msg("%s: mask: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
        for (size_t i = 0; i < n; i++) {
            size_t e = (i / (R * C)) * C + i % C;
            double v = cref_get(x, i);
            int want_m = !isfinite(v) || (o.has_missing_value && v == o.missing_value) || v < lo[e] || v > hi[e];
            if (mask[i] != want_m)
                fail_msg("%s: mask element %zu (%.17g in [%.17g, %.17g]): %u, want %d", label, i, v, lo[e], hi[e],
                         mask[i], want_m);
        }
        /* float32 data summed in float32 where the device lacks float64 */
        double mtol = x->dtype == CLS_F64 ? 1e-12 : 1e-5;
        for (size_t e = 0; e < ne; e++) {
            size_t base = (e / C) * R * C + e % C, kept = 0;
            double sum = 0, dev = 0;
            for (size_t r = 0; r < R; r++)
                if (!mask[base + r * C]) {
                    kept++;
                    sum += cref_get(x, base + r * C);
                }
            double wm = kept ? sum / (double)kept : NAN;
            for (size_t r = 0; r < R; r++)
                if (!mask[base + r * C]) dev += (cref_get(x, base + r * C) - wm) * (cref_get(x, base + r * C) - wm);
            double wm2 = kept ? dev : NAN;
            /* m2 against the spread's scale: the sums are shifted, not centred */
            double scale = kept ? fmax(1, wm * wm * (double)kept) : 1;
            if (kept != R - miss[e] - clip[e])
                fail_msg("%s: entry %zu: %zu kept by the mask, counts say %llu", label, e, kept,
                         (unsigned long long)(R - miss[e] - clip[e]));
            if (!(isnan(mean[e]) && isnan(wm)) && !(fabs(mean[e] - wm) <= mtol * fmax(1, fabs(wm))))
                fail_msg("%s: entry %zu: mean %.17g, want %.17g", label, e, mean[e], wm);
            if (!(isnan(m2[e]) && isnan(wm2)) && !(fabs(m2[e] - wm2) <= mtol * fmax(wm2, scale)))
                fail_msg("%s: entry %zu: m2 %.17g, want %.17g", label, e, m2[e], wm2);
        }
        /* CLS_CLIP_KEEP: every value written as read, bit for bit, beside
         * the same mask and counts; in place nothing changes */
        if (o.impute == CLS_IMPUTE_NONE) {
            uint8_t *mk2 = malloc(n);
            uint64_t *clip2 = calloc(ne, 8);
            cls_array y2 = make_out(x), x2 = make_out(x);
            size_t bytes = n * (x->dtype == CLS_F64 ? 8 : 4);
            memset(y2.data, 0x5a, bytes);
            memcpy(x2.data, x->data, bytes);
            cls_clean kk = o;
            kk.mode = CLS_CLIP_KEEP;
            kk.mask_out = mk2;
            kk.clipped_out = clip2;
            kk.missing_out = NULL;
            kk.lower_out = kk.upper_out = NULL;
            for (int inplace = 0; inplace < 2; inplace++) {
                memset(mk2, 7, n);
                st = cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &kk}, inplace ? &x2 : x, inplace ? &x2 : &y2, NULL);
                if (st != CLS_OK) fail_msg("%s: keep: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
                assert_memory_equal(inplace ? x2.data : y2.data, x->data, bytes);
                assert_memory_equal(mk2, mask, n);
                assert_memory_equal(clip2, clip, ne * 8);
            }
            ref_free(&y2);
            ref_free(&x2);
            free(mk2);
            free(clip2);
        }
        free(mask);
        free(mean);
        free(m2);
    }
    ref_free(&y);
    free(lo);
    free(hi);
    free(want);
    free(miss);
    free(clip);
    free(wmiss);
    free(wclip);
}

static size_t small(size_t pocl) { return test_suite_is("oclgrind") ? 30 : pocl; }

static void imputation_matches_simpleimputer(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_impute how[] = {CLS_IMPUTE_MEAN, CLS_IMPUTE_MEDIAN, CLS_IMPUTE_MOST_FREQUENT, CLS_IMPUTE_CONSTANT};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        cls_array x = cref_make(t, 2, small(150), 16, 200 + (uint64_t)ti);
        for (int sc = 0; sc < 2; sc++)
            for (size_t h = 0; h < 4; h++) {
                cls_clean o = {.impute = how[h], .fill_value = -3.5};
                char label[96];
                snprintf(label, sizeof label, "impute %d %s %s", (int)how[h], ti ? "f64" : "f32",
                         sc ? "batch" : "matrix");
                check(ctx, &x, sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX, o, CLS_NONE, label);
                /* a sentinel: the small integers' column holds -2 .. 2 */
                o.has_missing_value = 1;
                o.missing_value = -2;
                snprintf(label, sizeof label, "impute %d sentinel %s %s", (int)how[h], ti ? "f64" : "f32",
                         sc ? "batch" : "matrix");
                check(ctx, &x, sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX, o, CLS_NONE, label);
            }
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

static void sigma_clipping_matches_astropy(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        /* 700 rows: longer than a chunk (512) and than one counting pass (128) */
        cls_array x = cref_make(t, 1, small(700), 16, 300 + (uint64_t)ti);
        for (int v = 0; v < 8; v++) {
            cls_clean o = {.sigma = v & 4 ? 2 : 3, .maxiters = v & 4 ? -1 : 0,
                           .center = v & 1 ? CLS_CENTER_MEAN : CLS_CENTER_MEDIAN,
                           .spread = v & 2 ? CLS_SPREAD_MAD_STD : CLS_SPREAD_STD};
            char label[96];
            snprintf(label, sizeof label, "clip %d %s", v, ti ? "f64" : "f32");
            check(ctx, &x, CLS_SCOPE_MATRIX, o, CLS_NONE, label);
        }
        cls_clean lu = {.sigma = 3, .sigma_lower = 1.5, .sigma_upper = 2.5, .maxiters = 2};
        check(ctx, &x, CLS_SCOPE_MATRIX, lu, CLS_NONE, ti ? "clip lower/upper f64" : "clip lower/upper f32");
        cls_clean cl = {.sigma = 2, .maxiters = -1, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_MEDIAN};
        check(ctx, &x, CLS_SCOPE_MATRIX, cl, CLS_NONE, ti ? "clamp f64" : "clamp f32");
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

static void cleaning_fused_with_scaling(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        cls_array x = cref_make(t, 3, small(90), 16, 400 + (uint64_t)ti);
        cls_clean o = {.sigma = 3, .impute = CLS_IMPUTE_MEAN, .has_missing_value = 1, .missing_value = 2};
        check(ctx, &x, CLS_SCOPE_MATRIX, o, CLS_ZSCORE, ti ? "clean+zscore f64" : "clean+zscore f32");
        check(ctx, &x, CLS_SCOPE_BATCH, o, CLS_MINMAX, ti ? "clean+minmax f64" : "clean+minmax f32");
        /* clamping does not fuse: cleaned first, then fitted and scaled */
        o.mode = CLS_CLIP_CLAMP;
        check(ctx, &x, CLS_SCOPE_MATRIX, o, CLS_ZSCORE, ti ? "clamp+zscore f64" : "clamp+zscore f32");
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

static void hostile_shapes_and_in_place(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    /* one-row columns */
    cls_array one = cref_make(t, 4, 1, 8, 500);
    cls_clean o = {.sigma = 3, .impute = CLS_IMPUTE_MOST_FREQUENT};
    check(ctx, &one, CLS_SCOPE_MATRIX, o, CLS_NONE, "one row");
    cref_free(&one);
    /* in place, clamped: the input is read whole before it is written */
    cls_array x = cref_make(t, 1, small(200), 8, 501);
    cls_clean c = {.sigma = 2, .maxiters = -1, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_CONSTANT,
                   .fill_value = 9};
    cls_array y = make_out(&x);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &y, NULL), CLS_OK);
    size_t bytes = x.rows * x.cols * (t == CLS_F64 ? 8 : 4);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &x, NULL), CLS_OK);
    assert_memory_equal(x.data, y.data, bytes);
    ref_free(&y);
    cref_free(&x);
    cls_context_destroy(ctx);
}

/* Tall narrow tables: the passes launch work-groups of whole rows (C
 * columns x 64 / C rows), so row counts that no group height divides and
 * one-column tables must come out whole. */
static void narrow_tables(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    const size_t cols[] = {1, 3, 7};
    for (size_t i = 0; i < 3; i++) {
        cls_array x = cref_make(t, 2, small(1001), cols[i], 600 + i);
        char label[64];
        cls_clean o = {.impute = CLS_IMPUTE_MEAN};
        snprintf(label, sizeof label, "narrow %zu columns, mean", cols[i]);
        check(ctx, &x, CLS_SCOPE_MATRIX, o, CLS_NONE, label);
        cls_clean c = {.sigma = 2.5, .maxiters = -1, .impute = CLS_IMPUTE_CONSTANT, .fill_value = 4};
        snprintf(label, sizeof label, "narrow %zu columns, clipped, z-score", cols[i]);
        check(ctx, &x, CLS_SCOPE_BATCH, c, CLS_ZSCORE, label);
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

/* Tables wider than a work-group of the last pass (64 columns and more):
 * its last group of columns moves back over the one before it (clean.cl),
 * so column counts no group width divides, one row, in place, and each
 * combination of its flags, built fixed and read at run time, must come
 * out whole and equal. */
static void wide_tables(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const size_t cols[] = {65, 1031}, rows[] = {1, 7};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (int run = 0; run < 2; run++) {
            cls_context_tuning(ctx)->clean_flags_runtime = run;
            for (size_t i = 0; i < 2; i++) {
                cls_array x = cref_make(t, 2, rows[i], cols[i], 700 + i + 10 * (uint64_t)ti);
                char label[96];
                const char *tag = run ? "flags at run time" : "flags built in";
                cls_clean m = {.impute = CLS_IMPUTE_MEDIAN, .has_missing_value = 1, .missing_value = -2};
                snprintf(label, sizeof label, "wide %zu, median, sentinel, %s", cols[i], tag);
                check(ctx, &x, CLS_SCOPE_MATRIX, m, CLS_NONE, label);
                cls_clean c = {.sigma = 2, .maxiters = -1};
                snprintf(label, sizeof label, "wide %zu, clipped, %s", cols[i], tag);
                check(ctx, &x, CLS_SCOPE_BATCH, c, CLS_NONE, label);
                cls_clean k = {.sigma = 2, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_CONSTANT, .fill_value = 4};
                snprintf(label, sizeof label, "wide %zu, clamped, filled, %s", cols[i], tag);
                check(ctx, &x, CLS_SCOPE_MATRIX, k, CLS_NONE, label);
                cls_clean f = {.sigma = 3, .impute = CLS_IMPUTE_MEAN};
                snprintf(label, sizeof label, "wide %zu, clipped, min-max, %s", cols[i], tag);
                check(ctx, &x, CLS_SCOPE_MATRIX, f, CLS_MINMAX, label);
                /* in place: the moved-back group's items over the group
                 * before it store nothing */
                cls_array y = make_out(&x);
                cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &k};
                assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
                assert_int_equal(cls_fit_transform(ctx, &p, &x, &x, NULL), CLS_OK);
                assert_memory_equal(x.data, y.data, x.batch * x.rows * x.cols * (t == CLS_F64 ? 8 : 4));
                ref_free(&y);
                cref_free(&x);
            }
        }
    }
    cls_context_destroy(ctx);
}

static void bad_arguments_leave_out_untouched(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 1, 10, 8, 600);
    cls_array y = make_out(&x), before = make_out(&x);
    size_t bytes = 10 * 8 * (t == CLS_F64 ? 8 : 4);
    const cls_clean bad[] = {
        {.has_missing_value = 1, .missing_value = NAN},
        {.impute = CLS_IMPUTE_CONSTANT, .fill_value = NAN},
        {.impute = CLS_IMPUTE_CONSTANT, .fill_value = INFINITY},
        {.sigma = -1},
        {.sigma = NAN},
        {.sigma_lower = 2}, /* the upper side resolves to 0 */
        {.impute = (cls_impute)9},
        {.sigma = 3, .mode = (cls_clip_mode)5},
        {.sigma = 3, .mode = CLS_CLIP_KEEP, .impute = CLS_IMPUTE_MEAN}, /* values as read: no fill */
        {.has_missing_value = 1, .missing_value = 3, .mode = CLS_CLIP_KEEP, .impute = CLS_IMPUTE_CONSTANT,
         .fill_value = 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &bad[i]}, &x, &y, NULL), CLS_E_ARG);
        assert_true(strlen(cls_last_error(ctx)) > 0);
        cls_pipeline p = {.scaler = CLS_ZSCORE, .clean = &bad[i]};
        assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_E_ARG);
        assert_memory_equal(y.data, before.data, bytes);
    }
    /* the mask and the kept values' moments are cls_fit_transform's alone: a
     * pipeline refuses them, also with nothing else to clean */
    uint8_t mask[80];
    double mean[8];
    memset(mask, 7, sizeof mask);
    for (int i = 0; i < 3; i++) {
        cls_clean only = {.sigma = i == 1 ? 3 : 0, .impute = i == 2 ? CLS_IMPUTE_MEAN : CLS_IMPUTE_NONE};
        if (i == 0) only.mask_out = mask;
        else only.mean_out = mean;
        cls_pipeline pm = {.scaler = CLS_ZSCORE, .clean = &only};
        assert_int_equal(cls_fit_transform(ctx, &pm, &x, &y, NULL), CLS_E_ARG);
        assert_non_null(strstr(cls_last_error(ctx), "mask_out"));
        assert_memory_equal(y.data, before.data, bytes);
    }
    for (size_t i = 0; i < sizeof mask; i++) assert_int_equal(mask[i], 7);
    /* so are values written as read: a scaler would scale the values clipped */
    cls_clean keep = {.sigma = 3, .mode = CLS_CLIP_KEEP};
    cls_pipeline pk = {.scaler = CLS_MINMAX, .clean = &keep};
    assert_int_equal(cls_fit_transform(ctx, &pk, &x, &y, NULL), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(ctx), "CLS_CLIP_KEEP"));
    assert_memory_equal(y.data, before.data, bytes);
    /* the scaler's options are checked with the cleaning's, before any pass
     * writes, whichever way the cleaning runs: its last pass fused with the
     * scaler (clipping), the engine's one pass (mean imputation), or the
     * scaler after it (robust) */
    cls_clean clip3 = {.sigma = 3}, mean_fill = {.impute = CLS_IMPUTE_MEAN};
    const cls_clean *ways[] = {&clip3, &mean_fill};
    cls_array wide = cref_make(t, 1, 1, 3, 601); /* factors that do not broadcast against 8 columns */
    for (size_t w = 0; w < 2; w++) {
        const cls_pipeline badp[] = {
            {.scaler = CLS_MINMAX, .lo = 1, .hi = 0, .clean = ways[w]},
            {.scaler = CLS_ZSCORE, .clip = 1, .clean = ways[w]},
            {.scaler = CLS_MINMAX, .qmin = 10, .qmax = 90, .clean = ways[w]},
            {.scaler = CLS_ROBUST, .qmin = 90, .qmax = 10, .clean = ways[w]},
            {.scaler = CLS_ROBUST, .factors = &wide, .clean = ways[w]},
        };
        for (size_t i = 0; i < sizeof badp / sizeof badp[0]; i++) {
            assert_int_equal(cls_fit_transform(ctx, &badp[i], &x, &y, NULL), CLS_E_ARG);
            assert_non_null(strstr(cls_last_error(ctx), badp[i].factors ? "factors" : "pipeline"));
            assert_memory_equal(y.data, before.data, bytes);
        }
    }
    ref_free(&wide);
    /* cleaning belongs to cls_fit_transform */
    cls_clean ok = {.impute = CLS_IMPUTE_MEAN};
    cls_pipeline p = {.scaler = CLS_ZSCORE, .clean = &ok};
    cls_stats *s = NULL;
    assert_int_equal(cls_fit(ctx, &p, &x, &s), CLS_E_ARG);
    assert_null(s);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &ok}, NULL, &y, NULL), CLS_E_ARG);
    /* a zero cls_clean is no cleaning: the plain pipeline */
    cls_clean none = {0};
    p.clean = &none;
    assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
    ref_free(&y);
    ref_free(&before);
    cref_free(&x);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(imputation_matches_simpleimputer),
        cmocka_unit_test(sigma_clipping_matches_astropy),
        cmocka_unit_test(cleaning_fused_with_scaling),
        cmocka_unit_test(hostile_shapes_and_in_place),
        cmocka_unit_test(narrow_tables),
        cmocka_unit_test(wide_tables),
        cmocka_unit_test(bad_arguments_leave_out_untouched),
    };
    return TEST_RUN("clean", tests, NULL, NULL);
}
