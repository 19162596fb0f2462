/* The one-pass clipping of short groups (<= 64 rows: cl/clip.cl,
 * src/clean/clip_fast.c) against the multi-pass path it replaces
 * (the context's count_regime, tests only) and against the float64 reference of
 * astropy's sigma_clip + SimpleImputer (clean_ref.c): outputs, counts,
 * fill values, iterations and the fused scaler's fitted statistics.
 *
 * Where the devices have float64 (ACC = double in clip.cl) the two paths
 * keep and clip the same values and hand on the same statistics (the
 * one-pass kernel sums the kept values once more in row order, as the
 * multi-pass path does): equal bit for bit, except clamped values, which
 * are the bounds: the one-pass kernel computes them from sums over the
 * sorted values, within tol of the multi-pass path's. Without float64
 * (rusticl, float32) the one-pass kernel's centre and spread are float32:
 * there it is checked against the reference only.
 *
 * Hostile data (clean_ref.c's columns: ties, heavy tails, NaN and +-Inf,
 * constant, all-NaN, float32 at 1e6), a sentinel, group sizes 1 to 64
 * (each sorting network: 32 and 64 rows, and the first 4, 8 or 16 values
 * sorted alone where the rows are that few), the last block of columns
 * part-full, both scopes (batch scope with few rows in all), median or
 * mean centre, std or mad_std, sigma_lower != sigma_upper, maxiters 1, 3,
 * 5 and none, mask and clamp, every imputation; mask_out alone and beside
 * the output on both paths.
 *
 * On Oclgrind too (its clip.cl builds are unoptimised: program.c says
 * why), on fewer and smaller cases: group sizes 1, 7, 33, 60 and 64, 9
 * columns, each option set once on one of them, the hostile scales on 5
 * rows, the signed zeros on 31, 2 matrices and two offsets in the
 * streamed case. What the simulator adds is its checks of every access
 * (bounds, races) on each kernel and branch, which one shape at each
 * network boundary gives; the values at every size and option are PoCL's
 * and rusticl's to compare. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"
#include "internal.h"
#include "pipeline_util.h"

typedef cleaned result;

static int same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* Cleans x with o through the one-pass path or (multipass) the counting
 * passes. */
static void run(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, int multipass, result *r)
{
    ctx->count_regime = multipass;
    clean_into(ctx, x, scope, o, 0, r);
    ctx->count_regime = 0;
}

/* mask_out (astropy's mask: 1 where missing or clipped) on the path
 * `multipass` picks: alone (out NULL), beside the output, whose bytes must
 * stay f's, and (without imputation) beside CLS_CLIP_KEEP's output, the
 * input's bytes; against the values outside f's bounds, which the checks
 * below tie to the reference. */
static size_t check_mask(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, int multipass,
                         const result *f, double *mean, double *m2, const char *label)
{
    size_t G = cref_groups(x, scope), C = x->cols, R = cref_group_rows(x, scope), n = x->batch * x->rows * C;
    size_t ne = G * C, es = x->dtype == CLS_F64 ? 8 : 4, bad = 0;
    uint8_t *mask = malloc(n ? n : 1);
    uint64_t *clip = calloc(ne, 8);
    for (int pass = 0; pass < 3; pass++) {
        int both = pass > 0, keep = pass == 2;
        if (keep && o.impute != CLS_IMPUTE_NONE) break;
        cls_clean k = o;
        if (keep) k.mode = CLS_CLIP_KEEP;
        memset(mask, 7, n);
        k.mask_out = mask;
        k.clipped_out = clip;
        /* the moments of the values kept, with no output written (the
         * one-pass kernel sums them in row order then) */
        k.mean_out = both ? NULL : mean;
        k.m2_out = both ? NULL : m2;
        cls_array y = both ? make_out(x) : (cls_array){0};
        ctx->count_regime = multipass;
        cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &k}, x, both ? &y : NULL, NULL);
        ctx->count_regime = 0;
        if (st != CLS_OK) fail_msg("%s: mask: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
        for (size_t i = 0; i < n; i++) {
            size_t e = (i / (R * C)) * C + i % C;
            double v = cref_get(x, i);
            int miss = !isfinite(v) || (o.has_missing_value && v == o.missing_value);
            int want = miss || v < f->lo[e] || v > f->hi[e];
            if (mask[i] != want && bad++ < 5)
                printf("# %s: %s mask, element %zu (%.17g in [%.17g, %.17g]): %u, want %d\n", label,
                       both ? "output and" : "alone,", i, v, f->lo[e], f->hi[e], mask[i], want);
            const cls_array *w = keep ? x : &f->y;
            if (both && memcmp((const char *)y.data + i * es, (const char *)w->data + i * es, es) != 0 &&
                bad++ < 5)
                printf("# %s: element %zu: with a mask%s %.17g, want %.17g\n", label, i, keep ? ", kept" : "",
                       cref_get(&y, i), cref_get(w, i));
        }
        for (size_t e = 0; e < ne; e++)
            if (clip[e] != f->clip[e] && bad++ < 10)
                printf("# %s: mask: entry %zu: clipped %llu, without a mask %llu\n", label, e,
                       (unsigned long long)clip[e], (unsigned long long)f->clip[e]);
        if (both) ref_free(&y);
    }
    free(mask);
    free(clip);
    return bad;
}

static void check(cls_context *ctx, const cls_array *x, cls_scope scope, cls_clean o, const char *label)
{
    size_t G = cref_groups(x, scope), C = x->cols, ne = G * C, n = x->batch * x->rows * C;
    result f, m;
    run(ctx, x, scope, o, 0, &f);
    /* the reference */
    double *want = malloc(n * sizeof *want);
    uint64_t *wmiss = calloc(ne, 8), *wclip = calloc(ne, 8);
    for (size_t g = 0; g < G; g++)
        for (size_t c = 0; c < C; c++) cref_clean_column(x, scope, g, c, &o, want, &wmiss[g * C + c], &wclip[g * C + c]);
    double tol = x->dtype == CLS_F64 ? 1e-12 : 1e-6;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double got = cref_get(&f.y, i), w = x->dtype == CLS_F32 ? (double)(float)want[i] : want[i];
        int ok = (isnan(got) && isnan(w)) || got == w || fabs(got - w) <= tol * fmax(1, fabs(w));
        if (!ok && bad++ < 5)
            printf("# %s: element %zu (column %zu): got %.17g want %.17g\n", label, i, i % C, got, w);
    }
    for (size_t e = 0; e < ne; e++)
        if (f.miss[e] != wmiss[e] || f.clip[e] != wclip[e]) {
            if (bad++ < 10)
                printf("# %s: entry %zu: missing %llu clipped %llu, want %llu %llu\n", label, e,
                       (unsigned long long)f.miss[e], (unsigned long long)f.clip[e],
                       (unsigned long long)wmiss[e], (unsigned long long)wclip[e]);
        }
    /* the bounds handed out (lower_out, upper_out) are the last ones: the
     * values outside them are exactly those clipped (NaN bounds clip
     * nothing) */
    size_t R = cref_group_rows(x, scope);
    for (size_t e = 0; e < ne; e++) {
        size_t g = e / C, c = e % C;
        uint64_t out = 0;
        for (size_t r = 0; r < R; r++) {
            double v = cref_get(x, g * R * C + r * C + c);
            if (isfinite(v) && !(o.has_missing_value && v == o.missing_value)) out += v < f.lo[e] || v > f.hi[e];
        }
        if (out != f.clip[e] && bad++ < 10)
            printf("# %s: entry %zu: %llu values outside [%.17g, %.17g], %llu clipped\n", label, e,
                   (unsigned long long)out, f.lo[e], f.hi[e], (unsigned long long)f.clip[e]);
    }
    if (bad) fail_msg("%s: %zu differences from the reference", label, bad);
    double *fmean = malloc(ne * sizeof *fmean), *fm2 = malloc(ne * sizeof *fm2);
    double *mmean = malloc(ne * sizeof *mmean), *mm2 = malloc(ne * sizeof *mm2);
    bad = check_mask(ctx, x, scope, o, 0, &f, fmean, fm2, label);
    if (bad) fail_msg("%s: %zu differences in the mask (one pass)", label, bad);
    /* the multi-pass path: the same bits */
    if (x->dtype == CLS_F64 || all_fp64(ctx)) {
        run(ctx, x, scope, o, 1, &m);
        /* bytes, NaN payloads included: one process's output is compared
         * byte for byte with MPI ranks' (which take the multi-pass path).
         * Clamped values are the bounds, which the one-pass kernel computes
         * from sums over the sorted values (clip.cl), in float64 also for
         * float32 data: within tol of the reference (above); the multi-pass
         * path sums float32 data in float32 (2.5e-6 apart seen on the
         * scales columns): within ctol of it. */
        size_t es = x->dtype == CLS_F64 ? 8 : 4;
        int clamp = o.mode == CLS_CLIP_CLAMP;
        double ctol = x->dtype == CLS_F64 ? tol : 1e-5;
        for (size_t i = 0; i < n; i++)
            if (memcmp((const char *)f.y.data + i * es, (const char *)m.y.data + i * es, es) != 0 &&
                !(clamp && fabs(cref_get(&f.y, i) - cref_get(&m.y, i)) <= ctol * fmax(1, fabs(cref_get(&m.y, i)))) &&
                bad++ < 5)
                printf("# %s: element %zu: one pass %.17g, multi-pass %.17g\n", label, i, cref_get(&f.y, i),
                       cref_get(&m.y, i));
        for (size_t e = 0; e < ne; e++)
            if ((f.miss[e] != m.miss[e] || f.clip[e] != m.clip[e] || !same(f.fill[e], m.fill[e])) && bad++ < 10)
                printf("# %s: entry %zu: one pass missing %llu clipped %llu fill %.17g, multi-pass %llu %llu "
                       "%.17g\n", label, e, (unsigned long long)f.miss[e], (unsigned long long)f.clip[e], f.fill[e],
                       (unsigned long long)m.miss[e], (unsigned long long)m.clip[e], m.fill[e]);
        for (size_t e = 0; e < ne; e++)
            for (int k = 0; k < 2; k++) {
                double a = k ? f.hi[e] : f.lo[e], b = k ? m.hi[e] : m.lo[e];
                if (!(isnan(a) && isnan(b)) && a != b && !(fabs(a - b) <= ctol * fmax(1, fabs(b))) && bad++ < 10)
                    printf("# %s: entry %zu: bound %d one pass %.17g, multi-pass %.17g\n", label, e, k, a, b);
            }
        if (f.iters != m.iters && bad++ < 10)
            printf("# %s: iterations %u, multi-pass %u\n", label, f.iters, m.iters);
        bad += check_mask(ctx, x, scope, o, 1, &m, mmean, mm2, label);
        /* mean_out, m2_out: the same bits on both paths */
        for (size_t e = 0; e < ne; e++)
            if ((!same(fmean[e], mmean[e]) || !same(fm2[e], mm2[e])) && bad++ < 10)
                printf("# %s: entry %zu: one pass mean %.17g m2 %.17g, multi-pass %.17g %.17g\n", label, e,
                       fmean[e], fm2[e], mmean[e], mm2[e]);
        cleaned_free(&m);
        if (bad) fail_msg("%s: %zu differences from the multi-pass path (or its mask)", label, bad);
    }
    cleaned_free(&f);
    free(want);
    free(wmiss);
    free(wclip);
    free(fmean);
    free(fm2);
    free(mmean);
    free(mm2);
}

static size_t cols(void) { return test_suite_is("oclgrind") ? 9 : test_suite_is("rusticl") ? 21 : 37; }

/* The simulator runs each case for seconds: the sizes it skips. */
static int skipped_on_oclgrind(size_t rows)
{
    return test_suite_is("oclgrind") && rows != 1 && rows != 7 && rows != 33 && rows != 60 && rows != 64;
}

static void one_pass_equals_multipass_and_reference(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_clean opts[] = {
        {.sigma = 3},                                                        /* astropy's defaults */
        {.sigma = 3, .maxiters = -1},
        {.sigma = 2, .maxiters = -1, .center = CLS_CENTER_MEAN},
        {.sigma = 2.5, .maxiters = 3, .spread = CLS_SPREAD_MAD_STD},
        {.sigma = 2, .maxiters = -1, .center = CLS_CENTER_MEAN, .spread = CLS_SPREAD_MAD_STD},
        {.sigma = 3, .sigma_lower = 1.5, .sigma_upper = 2.5, .maxiters = 1},
        {.sigma = 2, .maxiters = -1, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_MEDIAN},
        {.sigma = 2, .impute = CLS_IMPUTE_MEAN, .has_missing_value = 1, .missing_value = 1},
        {.sigma = 2, .maxiters = -1, .impute = CLS_IMPUTE_MOST_FREQUENT},
        {.sigma = 1.5, .impute = CLS_IMPUTE_CONSTANT, .fill_value = -3.5, .mode = CLS_CLIP_CLAMP},
    };
    /* each network of clip.cl at its ends: the kernel sorts the first qb
     * values, qb the power of two >= rows (1, 4, 8, 16 or the kernel's 32
     * or 64), and its loops stop at rows */
    const size_t rows[] = {60, 1, 2, 3, 7, 31, 32, 33, 63, 64, 4, 5, 8, 12, 16, 17};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            /* rusticl: its cold builds of the 64- and 128-row networks are slow */
            if ((test_suite_is("rusticl") && rows[ri] > 33) || skipped_on_oclgrind(rows[ri])) continue;
            cls_array x = cref_make(t, 2, rows[ri], cols(), 700 + ri + 10 * (uint64_t)ti);
            /* every option set on seed-A's 60 rows; two on the other sizes
             * (on Oclgrind, 60 rows leaves out those the other sizes run:
             * 64 rows takes the same network) */
            for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
                if (ri > 0 && k != 1 && k != 4 + ri % 6) continue;
                if (ri == 0 && test_suite_is("oclgrind") && (k == 1 || k == 5 || k == 7 || k == 8)) continue;
                char label[96];
                snprintf(label, sizeof label, "%s rows %zu options %zu", ti ? "f64" : "f32", rows[ri], k);
                check(ctx, &x, CLS_SCOPE_MATRIX, opts[k], label);
            }
            cref_free(&x);
        }
        /* batch scope: 3 matrices of 20 rows are one group of 60 */
        cls_array b = cref_make(t, 3, 20, cols(), 790 + (uint64_t)ti);
        check(ctx, &b, CLS_SCOPE_BATCH, opts[1], ti ? "f64 batch" : "f32 batch");
        check(ctx, &b, CLS_SCOPE_BATCH, opts[6], ti ? "f64 batch clamp" : "f32 batch clamp");
        cref_free(&b);
    }
    cls_context_destroy(ctx);
}

static void sorted_sums_hold_on_hostile_scales(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_clean opts[] = {
        {.sigma = 3, .maxiters = -1},
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
            /* Oclgrind: the 8-value network alone (the 64-value one at 33
             * rows, on these columns, took minutes of the simulator; the
             * first case runs it there) */
            if ((test_suite_is("rusticl") && rows[ri] > 33) || (test_suite_is("oclgrind") && rows[ri] != 5))
                continue;
            cls_array x = cref_make_scales(t, rows[ri], 24, 950 + ri);
            for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
                char label[96];
                snprintf(label, sizeof label, "scales %s rows %zu options %zu", ti ? "f64" : "f32", rows[ri], k);
                check(ctx, &x, CLS_SCOPE_MATRIX, opts[k], label);
            }
            cref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

/* A scaler after the cleaning: the one-pass kernel hands its statistics to
 * the last pass; output and fitted statistics as the multi-pass path's. */
static void fused_scaler_equals_multipass(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t) || !(t == CLS_F64 || all_fp64(ctx))) continue;
        cls_array x = cref_make(t, 3, 60, cols(), 800 + (uint64_t)ti);
        cls_clean o = {.sigma = 3, .maxiters = -1, .impute = CLS_IMPUTE_MEAN, .has_missing_value = 1,
                       .missing_value = 2};
        for (int sc = 0; sc < 2; sc++) {
            cls_pipeline p = {.scaler = sc ? CLS_MINMAX : CLS_ZSCORE, .clean = &o};
            cls_array y[2] = {make_out(&x), make_out(&x)};
            cls_stats *s[2] = {NULL, NULL};
            for (int mp = 0; mp < 2; mp++) {
                ctx->count_regime = mp;
                cls_status st = cls_fit_transform(ctx, &p, &x, &y[mp], &s[mp]);
                ctx->count_regime = 0;
                if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
            }
            size_t n = x.batch * x.rows * x.cols;
            for (size_t i = 0; i < n; i++)
                if (!same(cref_get(&y[0], i), cref_get(&y[1], i)))
                    fail_msg("element %zu: one pass %.17g, multi-pass %.17g", i, cref_get(&y[0], i),
                             cref_get(&y[1], i));
            for (size_t g = 0; g < x.batch; g++)
                for (size_t c = 0; c < x.cols; c++) {
                    cls_column_stats a, b;
                    assert_int_equal(test_column(s[0], g, c, &a), CLS_OK);
                    assert_int_equal(test_column(s[1], g, c, &b), CLS_OK);
                    if (a.count != b.count || a.missing != b.missing || !same(a.mean, b.mean) ||
                        !same(a.m2, b.m2) || !same(a.min, b.min) || !same(a.max, b.max))
                        fail_msg("group %zu column %zu: count %llu mean %.17g m2 %.17g, multi-pass %llu %.17g "
                                 "%.17g", g, c, (unsigned long long)a.count, a.mean, a.m2,
                                 (unsigned long long)b.count, b.mean, b.m2);
                }
            for (int k = 0; k < 2; k++) {
                cls_stats_destroy(s[k]);
                ref_free(&y[k]);
            }
        }
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

/* In place, clamped: each work-item reads its columns whole before it
 * writes them. */
/* -0 and +0 in one column: the network leaves them in either order and
 * clip.cl puts -0 first afterwards (only for lanes that have a zero), as
 * the counting passes rank them; a median or a clamped value that is a
 * zero keeps its sign bit as the multi-pass path's (check() compares
 * bytes). Columns: zeros of both signs with NaN, mostly -0, half and half
 * with an outlier, and none (lanes without a zero beside lanes with). */
static void signed_zeros_as_the_multipass_path(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_clean opts[] = {
        {.sigma = 2, .maxiters = -1, .impute = CLS_IMPUTE_MEDIAN},
        {.sigma = 1.5, .maxiters = -1, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_MOST_FREQUENT},
        {.sigma = 2, .spread = CLS_SPREAD_MAD_STD, .impute = CLS_IMPUTE_MEDIAN},
    };
    const size_t rows[] = {60, 31};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < 2; ri++) {
            /* Oclgrind: the 32-value network (the first case runs 60 rows there) */
            if (test_suite_is("oclgrind") && rows[ri] == 60) continue;
            cls_array x = cref_make(t, 2, rows[ri], cols(), 1200 + ri + 10 * (uint64_t)ti);
            size_t C = x.cols;
            for (size_t i = 0; i < x.batch * x.rows * C; i++) {
                size_t c = i % C, r = i / C % x.rows;
                double v = cref_get(&x, i);
                switch (c % 4) {
                case 0: v = r % 7 == 3 ? NAN : r % 2 ? -0.0 : 0.0; break;
                case 1: v = r % 5 == 0 ? 0.0 : r % 11 == 4 ? 1.0 : r % 13 == 6 ? -1.0 : -0.0; break;
                case 2: v = r == 0 ? 1e3 : r % 2 ? -0.0 : 0.0; break;
                default: break;
                }
                if (t == CLS_F64) ((double *)x.data)[i] = v;
                else ((float *)x.data)[i] = (float)v;
            }
            for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
                char label[96];
                snprintf(label, sizeof label, "signed zeros %s rows %zu options %zu", ti ? "f64" : "f32", rows[ri], k);
                check(ctx, &x, CLS_SCOPE_MATRIX, opts[k], label);
            }
            cref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

static void in_place_equals_out_of_place(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 3, 50, cols(), 900);
    cls_clean c = {.sigma = 2, .maxiters = -1, .mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_MEDIAN};
    cls_array y = make_out(&x);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &y, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &x, NULL), CLS_OK);
    assert_memory_equal(x.data, y.data, x.batch * x.rows * x.cols * (t == CLS_F64 ? 8 : 4));
    ref_free(&y);
    cref_free(&x);
    cls_context_destroy(ctx);
}

/* Large outputs whose rows all start a 64-byte line at the same column:
 * the one-pass kernel's first block ends there and the rest stream whole
 * lines (clip_fast.c: lead, CLS_XF_NT, on PoCL). Outputs placed at every
 * kind of offset from a line (0, one value, most of a line), and in place,
 * against the multi-pass path byte for byte (counts too); 1.15 MB each. */
static void streamed_whole_lines_equal_the_multipass_path(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t) || (t == CLS_F32 && !all_fp64(ctx))) continue;
        size_t es = ti ? 8 : 4, C = 640 / es, B = test_suite_is("oclgrind") ? 2 : 30, R = 60, n = B * R * C,
               bytes = n * es;
        cls_array x = cref_make(t, B, R, C, 950 + (uint64_t)ti);
        cls_clean c = {.sigma = 2.5, .maxiters = -1, .impute = CLS_IMPUTE_MEAN};
        uint64_t clip_m[30 * 160], clip_f[30 * 160];
        c.clipped_out = clip_m;
        cls_array want = make_out(&x);
        ctx->count_regime = 1;
        cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &want, NULL);
        ctx->count_regime = 0;
        assert_int_equal(st, CLS_OK);
        char *mem = aligned_alloc(64, bytes + 128);
        assert_non_null(mem);
        const size_t offs[] = {0, 40, es, 64 - es};
        /* Oclgrind stages (no host-unified memory): the output's offset
         * is the host copy's, the same code on every driver; a line's
         * start and a point inside one */
        size_t noffs = test_suite_is("oclgrind") ? 2 : sizeof offs / sizeof offs[0];
        for (size_t k = 0; k < noffs; k++) {
            cls_array y = x;
            y.data = mem + offs[k];
            memset(mem, 0x5a, bytes + 128);
            c.clipped_out = clip_f;
            assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &y, NULL), CLS_OK);
            if (memcmp(y.data, want.data, bytes) != 0)
                fail_msg("%s: output at %zu bytes from a line differs from the multi-pass path", ti ? "f64" : "f32",
                         offs[k]);
            assert_memory_equal(clip_f, clip_m, B * C * sizeof *clip_f);
            /* nothing written past the output */
            for (size_t i = offs[k] + bytes; i < bytes + 128; i++) assert_int_equal((unsigned char)mem[i], 0x5a);
            /* in place, at the same offset */
            memcpy(y.data, x.data, bytes);
            assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &y, &y, NULL), CLS_OK);
            if (memcmp(y.data, want.data, bytes) != 0)
                fail_msg("%s: in place at %zu bytes from a line differs", ti ? "f64" : "f32", offs[k]);
            /* CLS_CLIP_KEEP streams the input's own bytes */
            cls_clean kc = {.sigma = 2.5, .maxiters = -1, .mode = CLS_CLIP_KEEP, .clipped_out = clip_f};
            memset(mem, 0x5a, bytes + 128);
            assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &kc}, &x, &y, NULL), CLS_OK);
            if (memcmp(y.data, x.data, bytes) != 0)
                fail_msg("%s: kept values at %zu bytes from a line differ from the input", ti ? "f64" : "f32",
                         offs[k]);
            for (size_t i = offs[k] + bytes; i < bytes + 128; i++) assert_int_equal((unsigned char)mem[i], 0x5a);
        }
        free(mem);
        ref_free(&want);
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_pass_equals_multipass_and_reference),
        cmocka_unit_test(sorted_sums_hold_on_hostile_scales),
        cmocka_unit_test(fused_scaler_equals_multipass),
        cmocka_unit_test(signed_zeros_as_the_multipass_path),
        cmocka_unit_test(in_place_equals_out_of_place),
        cmocka_unit_test(streamed_whole_lines_equal_the_multipass_path),
    };
    return TEST_RUN("clip_fast", tests, NULL, NULL);
}
