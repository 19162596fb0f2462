/* Exact statistics at every group length (src/quantiles/regime.h): the regime
 * decided by length, scratch budget and loop limit, and the sort regime
 * (cl/sort.cl, cl/clip_sort.cl: each column sorted once in scratch) equal
 * to the counting passes it replaces (order statistics bit for bit; the
 * values clipping keeps and clips exactly, sums within rounding) and to the plain-C
 * reference of numpy's nanquantile and astropy's sigma_clip.
 *
 * Clipping, and median and most-frequent imputation without it (the same
 * kernels, no iteration). Lengths at each boundary: the networks' last (64
 * clipping, 128 order statistics) and one past, around the merge sort's
 * cut-over to the radix passes (96 kept values: 100 rows, some NaN), the
 * last length clip_sort.cl sorts a block of columns by a network in
 * vector lanes (128) and one past, a few hundred and a thousand, and
 * a group whose window exceeds a small budget (scratch_bytes), which then
 * takes the counting passes. Columns from clean_ref.c's hostile set (ties,
 * Cauchy tails, NaN and +-Inf, constant, all NaN, large offset) and signed
 * zeros; float32 and float64 where the suite has them; on Oclgrind the
 * shortest lengths only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"
#include "quantiles/regime.h"
#include "quantiles/select.h"
#include "internal.h"
#include "pipeline_util.h"

/* How the sort regime's windows are sorted in the tests that follow: 0
 * as regime.c decides for the device (a work-item per column on CPU
 * drivers), 1 by every work-item at once (cl/sort.cl's wsort, a GPU's
 * way), forced here so that every suite runs both. */
static int parallel_sort;

static cls_context *budget_context(size_t scratch)
{
    cls_config cfg = {0};
    cfg.scratch_bytes = scratch;
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) fail_msg("cls_context_create: %s", cls_last_error(ctx));
    ctx->sort_parallel = parallel_sort;
    return ctx;
}

/* Whether a device's loop limit (rusticl) keeps groups of `rows` from the
 * sort regime: the rule regime.c states, 16 loops over the rows of each of
 * a work-item's columns. */
static int over_limit(const cls_context *ctx, uint64_t rows)
{
    for (size_t i = 0; i < ctx->ndevs; i++)
        if (ctx->devs[i].loop_limit && rows * 16 * CLS_SORT_LANES > ctx->devs[i].loop_limit) return 1;
    return 0;
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* The decision itself, without running a device. */
static void regime_by_length_budget_and_loop_limit(void **state)
{
    (void)state;
    cls_context *ctx = budget_context(0);
    assert_int_equal(cls_regime_of(ctx, 1, 8, 64), CLS_REGIME_NETWORK);
    assert_int_equal(cls_regime_of(ctx, 64, 8, 64), CLS_REGIME_NETWORK);
    assert_int_equal(cls_regime_of(ctx, 129, 4, 128), over_limit(ctx, 129) ? CLS_REGIME_COUNT : CLS_REGIME_SORT);
    /* past a loop limit (rusticl) the counting passes; else a million-row
     * group fits the default budget */
    assert_int_equal(cls_regime_of(ctx, 1000000, 8, 64), over_limit(ctx, 1000000) ? CLS_REGIME_COUNT : CLS_REGIME_SORT);
    assert_int_equal(cls_regime_of(ctx, 65, 8, 64), over_limit(ctx, 65) ? CLS_REGIME_COUNT : CLS_REGIME_SORT);
    /* more rows than the budget's windows hold: the counting passes */
    assert_int_equal(cls_regime_of(ctx, (uint64_t)1 << 31, 8, 64), CLS_REGIME_COUNT);
    /* a launch takes at least one window, and never more than the budget */
    size_t w = cls_sort_columns(ctx, 300, 8);
    assert_true(w >= 1);
    assert_true(w * cls_sort_window_bytes(300, 8) <= CLS_SCRATCH_DEFAULT);
    cls_context_destroy(ctx);
    /* a budget one window of 1000 float64 rows holds, per device */
    size_t one = (size_t)cls_sort_window_bytes(1000, 8);
    ctx = budget_context(one * 4);
    size_t nd = ctx->ndevs;
    int fits = !over_limit(ctx, 1000) && nd <= 4;
    assert_int_equal(cls_regime_of(ctx, 1000, 8, 64), fits ? CLS_REGIME_SORT : CLS_REGIME_COUNT);
    assert_int_equal(cls_regime_of(ctx, 5000, 8, 64), CLS_REGIME_COUNT);
    if (fits) assert_int_equal(cls_sort_columns(ctx, 1000, 8), 4 / nd);
    cls_context_destroy(ctx);
}

static size_t cols(void) { return test_suite_is("oclgrind") ? 9 : 19; }

static int skip_rows(size_t rows)
{
    if (test_suite_is("oclgrind")) return rows > 130;
    return 0;
}

/* Signed zeros in every fourth column from 3 on: the sort keeps -0 first. */
static void add_zeros(cls_array *x)
{
    size_t C = x->cols;
    for (size_t i = 0; i < x->batch * x->rows * C; i++) {
        size_t c = i % C, r = i / C % x->rows;
        if (c % 4 != 3) continue;
        double v = r % 5 == 0 ? 0.0 : r % 11 == 4 ? 1.0 : -0.0;
        if (x->dtype == CLS_F64) ((double *)x->data)[i] = v;
        else ((float *)x->data)[i] = (float)v;
    }
}

/* Quantiles q of x's groups by two paths, a (the sort regime, named
 * `path`) and b (the counting passes), compared bit for bit, and a with
 * the plain-C reference (within tol relative, 0: bit for bit). */
static void expect_quantiles(const cls_array *x, const double *q, size_t nq, const double *a, const double *b,
                             const char *path, double tol)
{
    const char *t = x->dtype == CLS_F64 ? "f64" : "f32";
    size_t C = x->cols, R = x->rows;
    double *v = malloc(R * sizeof *v);
    assert_non_null(v);
    for (size_t g = 0; g < x->batch; g++)
        for (size_t c = 0; c < C; c++) {
            size_t m = cref_column(x, CLS_SCOPE_MATRIX, g, c, v);
            for (size_t j = 0; j < nq; j++) {
                size_t i = (g * nq + j) * C + c;
                double want = m ? cref_quantile(v, m, q[j], x->dtype) : NAN;
                if (!same(a[i], b[i]))
                    fail_msg("%s rows %zu group %zu column %zu q %g: %s %.17g, counting %.17g", t, R, g, c, q[j],
                             path, a[i], b[i]);
                if (!(same(a[i], want) || (tol > 0 && fabs(a[i] - want) <= tol * fmax(1, fabs(want)))))
                    fail_msg("%s rows %zu group %zu column %zu q %g: %.17g, reference %.17g", t, R, g, c, q[j], a[i],
                             want);
            }
        }
    free(v);
}

static void quantiles_equal_counting_and_reference(void **state)
{
    (void)state;
    cls_context *sort = budget_context(0), *count = budget_context(1);
    /* 129-512 rows: eight neighbouring columns selected in vector lanes
     * (cl/sort.cl's q_lanes8, CLS_SORT_LANE_MAX), 513 one past */
    const size_t rows[] = {129, 130, 200, CLS_SORT_LANE_MAX - 1, CLS_SORT_LANE_MAX, CLS_SORT_LANE_MAX + 1, 1000, 3000};
    const double q[] = {0, 0.1, 0.25, 0.5, 0.75, 0.99, 1};
    const size_t nq = sizeof q / sizeof q[0];
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            if (skip_rows(rows[ri])) continue;
            size_t es = ti ? 8 : 4;
            int sorted = cls_regime_of(sort, rows[ri], es, 128) == CLS_REGIME_SORT;
            assert_int_equal(cls_regime_of(count, rows[ri], es, 128), CLS_REGIME_COUNT);
            cls_array x = cref_make(t, 2, rows[ri], cols(), 4100 + ri + 10 * (uint64_t)ti);
            add_zeros(&x);
            size_t n = x.batch * nq * x.cols;
            double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
            assert_int_equal(cls_quantiles(sort, NULL, &x, q, nq, a), CLS_OK);
            assert_int_equal(cls_quantiles(count, NULL, &x, q, nq, b), CLS_OK);
            expect_quantiles(&x, q, nq, a, b, "sorted", 1e-12);
            printf("# %s rows %zu: %s regime\n", ti ? "f64" : "f32", rows[ri], sorted ? "sort" : "counting");
            free(a);
            free(b);
            cref_free(&x);
        }
    }
    cls_context_destroy(sort);
    cls_context_destroy(count);
}

/* The options every clipping test below runs. */
static const cls_clean clip_opts[] = {
    {.sigma = 3, .maxiters = -1},
    {.sigma = 2, .maxiters = -1, .center = CLS_CENTER_MEAN, .impute = CLS_IMPUTE_MEAN},
    {.sigma = 2.5, .maxiters = 3, .spread = CLS_SPREAD_MAD_STD, .impute = CLS_IMPUTE_MEDIAN},
    {.sigma = 2, .maxiters = -1, .center = CLS_CENTER_MEAN, .spread = CLS_SPREAD_MAD_STD,
     .impute = CLS_IMPUTE_MOST_FREQUENT},
    {.sigma = 3, .sigma_lower = 1.5, .sigma_upper = 2.5, .maxiters = 1, .has_missing_value = 1,
     .missing_value = 1},
    /* the fills that need the order, without clipping: the same kernels, no iteration */
    {.impute = CLS_IMPUTE_MEDIAN},
    {.impute = CLS_IMPUTE_MOST_FREQUENT, .has_missing_value = 1, .missing_value = 1},
};

/* x cleaned with each of clip_opts by the sort regime, on each of the
 * nsort contexts of sorts (windows sorted one way each), against the
 * float64 reference (astropy's sigma_clip + SimpleImputer), and against
 * the counting passes (count, run once per option for all of them; NULL:
 * not compared) where sums are float64: the values kept and clipped, the
 * fills and the iterations; the first nopt options. */
static void clip_case(cls_context *const *sorts, size_t nsort, cls_context *count, const cls_array *x_, int ti,
                      size_t R, size_t nopt)
{
    const cls_clean *opts = clip_opts;
    cls_array x = *x_;
    size_t C = x.cols, ne = x.batch * C, n = x.batch * x.rows * C, es = ti ? 8 : 4;
    const char *t = ti ? "f64" : "f32";
    /* float32: sums in float32 where a device lacks float64 */
    double tol = ti ? 1e-12 : 1e-5;
    for (size_t k = 0; k < nopt; k++) {
        /* astropy's sigma_clip + SimpleImputer in float64 */
        double *want = malloc(n * sizeof *want);
        uint64_t *wm = malloc(ne * sizeof *wm), *wc = malloc(ne * sizeof *wc);
        for (size_t g = 0; g < x.batch; g++)
            for (size_t c = 0; c < C; c++)
                cref_clean_column(&x, CLS_SCOPE_MATRIX, g, c, &opts[k], want, &wm[g * C + c], &wc[g * C + c]);
        /* the counting passes where sums are float64: the same values
         * kept and clipped, the same iterations; values equal but for
         * a mean fill or a clamp to a bound, which the counting
         * passes sum in chunks of rows merged (Chan) and the sort
         * regime in one run or from the sorted sums: within tol */
        int counted = count && (ti || all_fp64(sorts[0]));
        cleaned b;
        if (counted) clean_into(count, &x, CLS_SCOPE_MATRIX, opts[k], 0, &b);
        for (size_t si = 0; si < nsort; si++) {
            const char *way = sorts[si]->sort_parallel == 1 ? " (windows sorted by every work-item)" : "";
            cleaned a;
            clean_into(sorts[si], &x, CLS_SCOPE_MATRIX, opts[k], 0, &a);
            size_t bad = 0;
            for (size_t e = 0; e < ne; e++)
                if ((a.miss[e] != wm[e] || a.clip[e] != wc[e]) && bad++ < 5)
                    printf("# entry %zu: missing %llu clipped %llu, want %llu %llu\n", e,
                           (unsigned long long)a.miss[e], (unsigned long long)a.clip[e],
                           (unsigned long long)wm[e], (unsigned long long)wc[e]);
            for (size_t i = 0; i < n; i++) {
                double got = cref_get(&a.y, i), w = ti ? want[i] : (double)(float)want[i];
                if (!(same(got, w) || got == w || fabs(got - w) <= tol * fmax(1, fabs(w))) && bad++ < 5)
                    printf("# element %zu: %.17g, want %.17g\n", i, got, w);
            }
            if (bad) fail_msg("%s rows %zu options %zu%s: %zu differences from the reference", t, R, k, way, bad);
            if (counted) {
                for (size_t i = 0; i < n; i++)
                    if (memcmp((char *)a.y.data + i * es, (char *)b.y.data + i * es, es) != 0 &&
                        !(fabs(cref_get(&a.y, i) - cref_get(&b.y, i)) <= tol * fmax(1, fabs(cref_get(&b.y, i)))))
                        fail_msg("%s rows %zu options %zu%s element %zu (column %zu, %.17g): %.17g, counting "
                                 "passes %.17g; bounds [%.17g, %.17g], counting [%.17g, %.17g]",
                                 t, R, k, way, i, i % C, cref_get(&x, i), cref_get(&a.y, i),
                                 cref_get(&b.y, i), a.lo[i / (x.rows * C) * C + i % C],
                                 a.hi[i / (x.rows * C) * C + i % C], b.lo[i / (x.rows * C) * C + i % C],
                                 b.hi[i / (x.rows * C) * C + i % C]);
                for (size_t e = 0; e < ne; e++)
                    if (a.miss[e] != b.miss[e] || a.clip[e] != b.clip[e] ||
                        !(same(a.fill[e], b.fill[e]) || fabs(a.fill[e] - b.fill[e]) <= tol * fmax(1, fabs(b.fill[e]))))
                        fail_msg("%s rows %zu options %zu%s entry %zu: clipped %llu fill %.17g, counting %llu "
                                 "%.17g", t, R, k, way, e, (unsigned long long)a.clip[e],
                                 a.fill[e], (unsigned long long)b.clip[e], b.fill[e]);
                if (a.iters != b.iters)
                    fail_msg("%s rows %zu options %zu%s: %u iterations, counting %u", t, R, k, way, a.iters,
                             b.iters);
            }
            cleaned_free(&a);
        }
        if (counted) cleaned_free(&b);
        free(want);
        free(wm);
        free(wc);
    }
}

/* Both ways of sorting the windows (a work-item per column, and every
 * work-item at once) against one run of the counting passes. */
static void clipping_equals_counting_and_reference(void **state)
{
    (void)state;
    parallel_sort = 0;
    cls_context *sort = budget_context(0), *count = budget_context(1);
    parallel_sort = 1;
    cls_context *sort_all = budget_context(0);
    parallel_sort = 0;
    cls_context *const sorts[] = {sort, sort_all};
    /* 513-16383 kept values: clip_sort.cl sorts the buckets it reads (S_LAZY_MIN, S_WIDE_MIN) */
    const size_t rows[] = {33, 64, 65, 66, 100, 127, 128, 129, 300, 520, 600, 1000, 1500, 16383, 16384};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            if (skip_rows(rows[ri])) continue;
            /* Oclgrind: clip_sort.cl's network runs at 65-127 rows already;
             * 128 and 129 too took the suite past its time limit */
            if (test_suite_is("oclgrind") && (rows[ri] == 128 || rows[ri] == 129)) continue;
            /* rusticl takes the counting passes past 512 rows (its loop
             * limit): 16383 and 16384 rows there took the suite past its
             * time limit and test no kernel of the sort regime */
            if (test_suite_is("rusticl") && rows[ri] > 1500) continue;
            cls_array x = cref_make(t, 2, rows[ri], cols(), 4200 + ri + 10 * (uint64_t)ti);
            add_zeros(&x);
            clip_case(sorts, 2, count, &x, ti, rows[ri], sizeof clip_opts / sizeof clip_opts[0]);
            cref_free(&x);
        }
    }
    cls_context_destroy(sort);
    cls_context_destroy(sort_all);
    cls_context_destroy(count);
}

/* Columns of CLS_SORT_WIDE_MIN rows or more, clipped in buckets by value
 * that clip_sort.cl sorts only where an iteration reads them (s_lin), and
 * one row fewer (buckets by high bits): the benchmark's data (normal, a few
 * far outliers, a few negatives), ties across zero, a narrow cluster
 * beside huge values, half the column one value (a bucket past the radix
 * cut-over), a constant (no range: sorted whole), +-Inf among values,
 * signed zeros among values, values far from 1 (float32 squares near its
 * largest), a single value and an all-NaN column; eight columns (one
 * block of vector lanes) and on PoCL two more (a work-item's lanes one by one). As
 * the float64 reference and the counting passes. */
static void clipping_in_buckets_by_value(void **state)
{
    (void)state;
    cls_context *sort = budget_context(0), *count = budget_context(1);
    int sim = test_suite_is("oclgrind");
    const size_t rows[] = {CLS_SORT_WIDE_MIN - 1, CLS_SORT_WIDE_MIN, CLS_SORT_WIDE_MIN + 3001};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            size_t R = rows[ri], C = sim ? 8 : 10;
            /* the loop limit's counting passes test no kernel here; the
             * simulator takes the boundary itself */
            if (over_limit(sort, R) || (sim && R != CLS_SORT_WIDE_MIN)) continue;
            cls_array x = cref_make(t, 1, R, C, 4700 + ri + 10 * (uint64_t)ti);
            rng g;
            rng_seed(&g, 4800 + ri);
            for (size_t r = 0; r < R; r++) {
                double z = rng_normal(&g), u = rng_uniform(&g);
                double v[10];
                v[0] = 10.0 + 2.0 * z;
                if (r % 1000 == 17) v[0] *= 50.0;
                if (r % 5000 == 3) v[0] = -v[0];
                v[1] = round(z * 4) / 4 - 0.5;
                v[2] = r % 97 == 5 ? -1e30 : r % 89 == 7 ? 1e30 : 10.0 + z * 1e-3;
                v[3] = u < 0.5 ? 3.0 : 3.0 + z;
                v[4] = 7.0;
                v[5] = r % 3 == 0 ? INFINITY : r % 7 == 1 ? -INFINITY : 1.0 + z;
                v[6] = r % 3 == 0 ? -0.0 : r % 3 == 1 && u < 0.3 ? 0.0 : z;
                v[7] = ti ? 1e150 * z : 1e15 * z;
                v[8] = r == R / 2 ? 3.0 : NAN;
                v[9] = NAN;
                for (size_t c = 0; c < C; c++) {
                    if (t == CLS_F64) ((double *)x.data)[r * C + c] = v[c];
                    else ((float *)x.data)[r * C + c] = (float)v[c];
                }
            }
            /* the simulator: the first options alone (median and std to
             * convergence; its passes over 2^17 values take minutes), and
             * against the reference only: the counting passes' kernels run
             * there at the shorter lengths, and PoCL compares
             * them with these buckets at this one */
            clip_case(&sort, 1, sim ? NULL : count, &x, ti, R, sim ? 1 : sizeof clip_opts / sizeof clip_opts[0]);
            printf("# %s rows %zu: masks and values as the reference's\n", ti ? "f64" : "f32", R);
            cref_free(&x);
        }
    }
    cls_context_destroy(sort);
    cls_context_destroy(count);
}

/* Fills alone (a median, a most frequent value, a constant) with no
 * per-column count asked for: no moments pass runs (clean.c), and past the
 * networks a median fill is selected (select.c), not sorted whole
 * (clip_fast.h). Lengths at each boundary (one row, the clipping
 * networks' 64, the selection networks' 128, the sort regime), the
 * hostile columns and signed zeros; the values and the mask as the
 * reference's and as the call that counts (clean_into asks for every
 * per-column output), bit for bit. */
static void fills_alone_without_counts(void **state)
{
    (void)state;
    cls_context *ctx = budget_context(0);
    const cls_clean opts[] = {
        {.impute = CLS_IMPUTE_MEDIAN},
        {.impute = CLS_IMPUTE_MEDIAN, .has_missing_value = 1, .missing_value = 1},
        {.impute = CLS_IMPUTE_MOST_FREQUENT},
        {.impute = CLS_IMPUTE_CONSTANT, .fill_value = 7},
    };
    const size_t rows[] = {1, 2, 64, 65, 128, 129, 300, 1000};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            if (skip_rows(rows[ri])) continue;
            cls_array x = cref_make(t, 2, rows[ri], cols(), 4600 + ri + 10 * (uint64_t)ti);
            add_zeros(&x);
            size_t C = x.cols, n = x.batch * x.rows * C, es = ti ? 8 : 4;
            for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
                cleaned counted;
                clean_into(ctx, &x, CLS_SCOPE_MATRIX, opts[k], 1, &counted);
                cls_array y = x;
                y.data = malloc(n * es);
                unsigned char *mask = malloc(n);
                cls_clean o = opts[k];
                o.mask_out = mask;
                cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &o}, &x,
                                                  &y, NULL);
                if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
                double *want = malloc(n * sizeof *want);
                uint64_t wm, wc;
                for (size_t g = 0; g < x.batch; g++)
                    for (size_t c = 0; c < C; c++) cref_clean_column(&x, CLS_SCOPE_MATRIX, g, c, &opts[k], want, &wm, &wc);
                for (size_t i = 0; i < n; i++) {
                    double got = cref_get(&y, i), w = ti ? want[i] : (double)(float)want[i];
                    /* == for the signed zeros: the reference's qsort leaves ties in any order */
                    if (!same(got, w) && got != w)
                        fail_msg("%s rows %zu options %zu element %zu (column %zu, %.17g): %.17g, reference %.17g",
                                 ti ? "f64" : "f32", rows[ri], k, i, i % C, cref_get(&x, i), got, w);
                    if (memcmp((char *)y.data + i * es, (char *)counted.y.data + i * es, es) != 0 ||
                        mask[i] != counted.mask[i])
                        fail_msg("%s rows %zu options %zu element %zu: %.17g mask %d, counted %.17g mask %d",
                                 ti ? "f64" : "f32", rows[ri], k, i, got, mask[i], cref_get(&counted.y, i),
                                 counted.mask[i]);
                }
                free(want);
                free(mask);
                free(y.data);
                cleaned_free(&counted);
            }
            cref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

/* Groups of one row (select.c reads each value, no kernel): quantiles,
 * medians and robust scaling as the reference (numpy's nanquantile,
 * nanmedian, scikit-learn's RobustScaler: NaN and +-Inf missing, a value
 * its own every quantile, signed zeros kept, an IQR of 0 a scale of 1),
 * several groups, float32 and float64. */
static void one_row_groups(void **state)
{
    (void)state;
    cls_context *ctx = budget_context(0);
    const double q[] = {0, 0.25, 0.5, 0.75, 1};
    const size_t nq = sizeof q / sizeof q[0];
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        cls_array x = cref_make(t, 3, 1, 2 * cols() + 1, 4700 + (uint64_t)ti);
        add_zeros(&x);
        /* one row has few of cref_make's hostile values: set them */
        const double hostile[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e30, -1e-30, 3.5};
        for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
            if (ti) ((double *)x.data)[i * 3] = hostile[i];
            else ((float *)x.data)[i * 3] = (float)hostile[i];
        }
        size_t C = x.cols, G = x.batch, es = ti ? 8 : 4;
        double *a = malloc(G * nq * C * sizeof *a), *m = malloc(G * C * sizeof *m);
        cls_array y = x;
        y.data = malloc(G * C * es);
        cls_pipeline p = {.scaler = CLS_ROBUST, .qmin = 25, .qmax = 75};
        assert_int_equal(cls_quantiles(ctx, NULL, &x, q, nq, a), CLS_OK);
        assert_int_equal(cls_medians(ctx, NULL, &x, m), CLS_OK);
        assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
        for (size_t g = 0; g < G; g++)
            for (size_t c = 0; c < C; c++) {
                size_t e = g * C + c;
                double v = cref_get(&x, e), want = isfinite(v) ? v : NAN;
                for (size_t j = 0; j < nq; j++)
                    if (!same(a[(g * nq + j) * C + c], want))
                        fail_msg("%s group %zu column %zu (%.17g) q %g: %.17g", ti ? "f64" : "f32", g, c, v, q[j],
                                 a[(g * nq + j) * C + c]);
                if (!same(m[e], want))
                    fail_msg("%s group %zu column %zu (%.17g): median %.17g", ti ? "f64" : "f32", g, c, v, m[e]);
                double yv = cref_get(&y, e);
                if (isfinite(v) ? !same(yv, 0.0) : isnan(v) && !isnan(yv))
                    fail_msg("%s group %zu column %zu (%.17g): robust %.17g", ti ? "f64" : "f32", g, c, v, yv);
            }
        free(y.data);
        free(m);
        free(a);
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

/* Several quantiles of long columns of normal values with outliers (the
 * shapes sweep's data): q_select's targets in different buckets of one
 * level each split their own range, and one that an earlier target had
 * moved along was left in a range another's keys were then copied into
 * (the 0.25 quantile of 5000 rows two ranks off when the median was
 * asked too). Bit for bit against the reference, float32 and float64. */
static void quantiles_of_many_targets(void **state)
{
    (void)state;
    cls_context *ctx = budget_context(0);
    const double q[] = {0.25, 0.5, 0.75, 0.1, 0.9, 0.99};
    const size_t nq = sizeof q / sizeof q[0], R = 5000, C = 400;
    if (skip_rows(R)) test_skip("Oclgrind: short columns only");
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        cls_array x = cref_make(t, 1, R, C, 4800 + (uint64_t)ti);
        rng g;
        rng_seed(&g, 4900 + (uint64_t)ti);
        for (size_t i = 0; i < R * C; i++) {
            double u = rng_uniform(&g), z = sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * rng_uniform(&g));
            double v = 10 + 2 * z, w = rng_uniform(&g);
            v = w < 0.01 ? NAN : w < 0.011 ? 50 * v : v;
            if (ti) ((double *)x.data)[i] = v;
            else ((float *)x.data)[i] = (float)v;
        }
        double *a = malloc(nq * C * sizeof *a), *v = malloc(R * sizeof *v);
        /* every number of quantiles from 1 on: the bug needed two */
        for (size_t k = 1; k <= nq; k++) {
            assert_int_equal(cls_quantiles(ctx, NULL, &x, q, k, a), CLS_OK);
            for (size_t c = 0; c < C; c++) {
                size_t m = cref_column(&x, CLS_SCOPE_MATRIX, 0, c, v);
                for (size_t j = 0; j < k; j++) {
                    double want = cref_quantile(v, m, q[j], t);
                    if (!same(a[j * C + c], want))
                        fail_msg("%s column %zu, %zu quantiles, q %g: %.17g, reference %.17g", ti ? "f64" : "f32",
                                 c, k, q[j], a[j * C + c], want);
                }
            }
        }
        free(a);
        free(v);
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

/* Keys whose highest varying bits do not tell them apart (cl/sort.cl sorts
 * by two or four of those first, then each run of equal ones by the
 * rest): values a few
 * units of 2^-40 apart beside one huge one, a shuffled ramp of them, ties
 * among them; and clean_ref.c's hostile scales. Order statistics and
 * clipping as the counting passes. */
static void runs_of_equal_high_digits(void **state)
{
    (void)state;
    if (!suite_runs(CLS_F64)) test_skip("no float64 on this implementation");
    cls_context *sort = budget_context(0), *count = budget_context(1);
    /* 1024 and 1025: the last with two high digits and the first with
     * four (cl/sort.cl's S_TWO_MAX) */
    const size_t rows[] = {97, 300, 1024, 1025, 2000};
    const double q[] = {0.1, 0.5, 0.9};
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
        size_t R = rows[ri], C = 6;
        if (skip_rows(R)) continue;
        cls_array x = cref_make_scales(CLS_F64, R, C, 4300 + ri);
        double *d = x.data;
        rng g;
        rng_seed(&g, 4400 + ri);
        for (size_t r = 0; r < R; r++) {
            /* columns 0-2 of the first matrix: ramps 2^-40 apart, shuffled */
            double u = rng_range(&g, 0, 1);
            d[r * C + 0] = r == R / 3 ? 1e300 : 1.0 + (double)((r * 7919) % R) * 0x1p-40;
            d[r * C + 1] = r == 0 ? -1e300 : -(1.0 + (double)((r * 104729) % R) * 0x1p-40);
            d[r * C + 2] = r == R - 1 ? 1e300 : 1e-300 * (1.0 + (double)(u < 0.5 ? r % 5 : (r * 31) % R) * 0x1p-44);
        }
        size_t G = x.batch, nq = 3, n = G * nq * C;
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        assert_int_equal(cls_quantiles(sort, NULL, &x, q, nq, a), CLS_OK);
        assert_int_equal(cls_quantiles(count, NULL, &x, q, nq, b), CLS_OK);
        for (size_t i = 0; i < n; i++)
            if (!same(a[i], b[i])) fail_msg("rows %zu entry %zu: sorted %.17g, counting %.17g", R, i, a[i], b[i]);
        cls_clean opts[] = {{.sigma = 3, .maxiters = -1}, {.sigma = 2, .maxiters = -1, .spread = CLS_SPREAD_MAD_STD}};
        for (size_t k = 0; k < 2; k++) {
            cleaned p, m;
            clean_into(sort, &x, CLS_SCOPE_MATRIX, opts[k], 0, &p);
            clean_into(count, &x, CLS_SCOPE_MATRIX, opts[k], 0, &m);
            for (size_t e = 0; e < G * C; e++)
                if (p.clip[e] != m.clip[e] || p.miss[e] != m.miss[e])
                    fail_msg("rows %zu options %zu entry %zu: clipped %llu, counting %llu", R, k, e,
                             (unsigned long long)p.clip[e], (unsigned long long)m.clip[e]);
            cleaned_free(&p);
            cleaned_free(&m);
        }
        free(a);
        free(b);
        cref_free(&x);
    }
    cls_context_destroy(sort);
    cls_context_destroy(count);
}

/* The clipping kernel's sort (cl/sort.cl: digits aligned to the highest
 * varying bit, three high 11-bit digits from CLS_SORT_WIDE_MIN keys and
 * four from 2^20) and its loads and writes (cl/clip_sort.cl: a block of 8
 * neighbouring lanes as vectors, 9 columns so that the ninth takes the
 * lane-by-lane way): keys that vary in few or odd bits, integers
 * (low bits constant), a ramp of close values (six bits above the lowest twelve
 * vary), powers of two of both signs with signed zeros (only the sign and
 * exponent vary), the benchmark's normal data with outliers and a value
 * below 2 (every exponent bit varies), a constant, a single value, +-Inf
 * among values, all NaN, ties; rows around each cut-over (the merge sort,
 * two high digits, 11-bit digits: past 1025 on PoCL only; 2^20 rows, where
 * a fourth high digit returns, take minutes against the reference). The values and
 * masks as astropy's (the float64 reference) and as the counting passes. */
static void clipping_keys_of_few_varying_bits(void **state)
{
    (void)state;
    cls_context *sort = budget_context(0), *count = budget_context(1);
    const size_t rows[] = {100, 300, 1024, 1025, CLS_SORT_WIDE_MIN - 1, CLS_SORT_WIDE_MIN};
    const cls_clean opts[] = {{.sigma = 3, .maxiters = -1},
                              {.sigma = 2, .maxiters = -1, .spread = CLS_SPREAD_MAD_STD, .center = CLS_CENTER_MEAN}};
    const size_t C = 9;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            size_t R = rows[ri];
            if (skip_rows(R) || (R > 1025 && !test_suite_is("pocl"))) continue;
            cls_array x = cref_make(t, 1, R, C, 4700 + ri + 10 * (uint64_t)ti);
            rng g;
            rng_seed(&g, 4800 + ri);
            for (size_t r = 0; r < R; r++) {
                double z = rng_normal(&g);
                double v3 = 10.0 + 2.0 * z;
                if (r % 1000 == 17) v3 *= 50.0;
                if (r == 3) v3 = 1.5;
                double vs[9] = {
                    (double)((r * 7919) % R) + (r == R / 2 ? 1e9 : 0),
                    1.0 + (double)((r * 104729) % 64) * (ti ? 0x1p-40 : 0x1p-17),
                    (r % 2 ? -1.0 : 1.0) * (r % 23 == 0 ? 0.0 : ldexp(1.0, (int)(r % 20) - 10)),
                    v3,
                    7.25,
                    r == R / 3 ? 4.0 : NAN,
                    r % 50 == 1 ? INFINITY : r % 50 == 2 ? -INFINITY : z,
                    NAN,
                    (double)(r % 3) + (r == 5 ? 40.0 : 0.0),
                };
                for (size_t c = 0; c < C; c++) {
                    if (t == CLS_F64) ((double *)x.data)[r * C + c] = vs[c];
                    else ((float *)x.data)[r * C + c] = (float)vs[c];
                }
            }
            size_t n = R * C;
            double *want = malloc(n * sizeof *want);
            for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
                cleaned a, b;
                clean_into(sort, &x, CLS_SCOPE_MATRIX, opts[k], 1, &a);
                clean_into(count, &x, CLS_SCOPE_MATRIX, opts[k], 1, &b);
                double tol = ti ? 1e-12 : 1e-5;
                for (size_t c = 0; c < C; c++) {
                    uint64_t wm, wc;
                    cref_clean_column(&x, CLS_SCOPE_MATRIX, 0, c, &opts[k], want, &wm, &wc);
                    if (a.miss[c] != wm || a.clip[c] != wc)
                        fail_msg("%s rows %zu options %zu column %zu: missing %llu clipped %llu, want %llu %llu",
                                 ti ? "f64" : "f32", R, k, c, (unsigned long long)a.miss[c],
                                 (unsigned long long)a.clip[c], (unsigned long long)wm, (unsigned long long)wc);
                    if (a.clip[c] != b.clip[c] || a.miss[c] != b.miss[c])
                        fail_msg("%s rows %zu options %zu column %zu: clipped %llu, counting %llu",
                                 ti ? "f64" : "f32", R, k, c, (unsigned long long)a.clip[c],
                                 (unsigned long long)b.clip[c]);
                    for (size_t r = 0; r < R; r++) {
                        size_t i = r * C + c;
                        double got = cref_get(&a.y, i), w = ti ? want[i] : (double)(float)want[i];
                        if (!(same(got, w) || got == w || fabs(got - w) <= tol * fmax(1, fabs(w))))
                            fail_msg("%s rows %zu options %zu element %zu: %.17g, want %.17g", ti ? "f64" : "f32",
                                     R, k, i, got, w);
                        if (a.mask[i] != b.mask[i] || a.mask[i] != (uint8_t)!isfinite(got))
                            fail_msg("%s rows %zu options %zu element %zu: mask %d, counting %d, value %.17g",
                                     ti ? "f64" : "f32", R, k, i, a.mask[i], b.mask[i], got);
                    }
                }
                cleaned_free(&a);
                cleaned_free(&b);
            }
            free(want);
            cref_free(&x);
        }
    }
    cls_context_destroy(sort);
    cls_context_destroy(count);
}

/* The selection among unsorted keys of a CPU driver (cl/sort.cl's
 * q_select: each level splits the range of a wanted rank by the digit at
 * its highest varying bit, 8 bits, 11 from CLS_SORT_WIDE_MIN rows on, and
 * sorts a range once it is short): ties across every level's bucket
 * boundaries (a few distinct values, bits set at one digit per level, so
 * each level halves the range), a value holding half the column with the
 * wanted ranks at its edges, signs and huge values beside a narrow cluster
 * (the first digit the sign and exponent), the benchmark's normal data with
 * a few outliers (neighbouring ranks parting below one crowded bucket),
 * values a binade apart each (the vector lanes' counting passes, 129-512
 * rows, giving the block back to q_select), and clean_ref.c's hostile set
 * (NaN, +-Inf, constant, all NaN) in the other columns. As the counting
 * passes and the float64 reference, bit for bit. */
static void selection_by_levels(void **state)
{
    (void)state;
    cls_context *sort = budget_context(0), *count = budget_context(1);
    const size_t rows[] = {300, 3000, CLS_SORT_WIDE_MIN + 3000};
    const double q[] = {0, 0.25, 0.4999, 0.5, 0.75, 1};
    const size_t nq = sizeof q / sizeof q[0];
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            size_t R = rows[ri];
            if (test_suite_is("oclgrind") ? R > 300 : test_suite_is("rusticl") && R > 3000) continue;
            cls_array x = cref_make(t, 1, R, test_suite_is("oclgrind") ? 8 : 12, 4500 + ri + 10 * (uint64_t)ti);
            size_t C = x.cols;
            rng g;
            rng_seed(&g, 4600 + ri);
            unsigned digit = R >= CLS_SORT_WIDE_MIN ? 11 : 8, mb = ti ? 52 : 23;
            for (size_t r = 0; r < R; r++) {
                /* column 0: a bit set or not at one place per digit below
                 * the highest, 2^k distinct values, many copies of each */
                double m = 0;
                for (unsigned b = 0; b < mb; b += digit)
                    if (rng_uniform(&g) < 0.5) m += ldexp(1.0, (int)b - (int)mb);
                double v0 = 1.0 + m;
                /* column 1: half the column one value, the rest just
                 * above and below it */
                double u = rng_uniform(&g);
                double v1 = u < 0.5 ? 3.0 : u < 0.75 ? 3.0 + ldexp(1.0, -(int)mb + 1) : 3.0 - ldexp(1.0, -(int)mb);
                /* column 2: a narrow cluster, a few negative and huge values */
                double v2 = r % 97 == 5 ? -1e30 : r % 89 == 7 ? 1e30 : 10.0 + rng_normal(&g) * 1e-3;
                /* column 3: the shapes benchmark's data, normal(10, 2) with
                 * one value in a thousand times 50 and one below 2: the
                 * first digit leaves nearly every key in one bucket, and
                 * neighbouring ranks (a quantile's two) part at the next
                 * level, each moving once a level */
                double v3 = 10.0 + 2.0 * rng_normal(&g);
                if (r % 1000 == 17) v3 *= 50.0;
                if (r == 3) v3 = 1.5;
                /* column 4: every value in a binade of its own, so that
                 * q_lanes8's interpolated pivots crawl and the block falls
                 * back to q_select (within float32's range) */
                double v4 = ldexp(1.0 + 1e-3 * (double)(r % 7), (int)(r % 200) - 100) * (r % 2 ? 1 : -1);
                double vs[5] = {v0, v1, v2, v3, v4};
                for (size_t c = 0; c < 5; c++) {
                    if (t == CLS_F64) ((double *)x.data)[r * C + c] = vs[c];
                    else ((float *)x.data)[r * C + c] = (float)vs[c];
                }
            }
            size_t n = nq * C;
            double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *v = malloc(R * sizeof *v);
            assert_int_equal(cls_quantiles(sort, NULL, &x, q, nq, a), CLS_OK);
            assert_int_equal(cls_quantiles(count, NULL, &x, q, nq, b), CLS_OK);
            for (size_t c = 0; c < C; c++) {
                size_t m = cref_column(&x, CLS_SCOPE_MATRIX, 0, c, v);
                for (size_t j = 0; j < nq; j++) {
                    size_t i = j * C + c;
                    double want = m ? cref_quantile(v, m, q[j], t) : NAN;
                    if (!same(a[i], b[i]))
                        fail_msg("%s rows %zu column %zu q %g: selected %.17g, counting %.17g", ti ? "f64" : "f32",
                                 R, c, q[j], a[i], b[i]);
                    if (!same(a[i], want))
                        fail_msg("%s rows %zu column %zu q %g: %.17g, reference %.17g", ti ? "f64" : "f32", R, c,
                                 q[j], a[i], want);
                }
            }
            printf("# %s rows %zu: %s regime\n", ti ? "f64" : "f32", R,
                   cls_regime_of(sort, R, ti ? 8 : 4, 128) == CLS_REGIME_SORT ? "sort" : "counting");
            free(a);
            free(b);
            free(v);
            cref_free(&x);
        }
    }
    cls_context_destroy(sort);
    cls_context_destroy(count);
}

/* Both sides of the rank table's length (select.h's CLS_SELECT_TABLE_MAX):
 * up to it, the sort regime on a CPU driver loads and selects in one
 * launch with the ranks from a table by count; one past it, two launches
 * with the host's ranks in between. Nine columns of two matrices: a block
 * of eight neighbours of one row (the load's vector path), and blocks cut
 * by the matrices' boundary and the last column (its scalar path);
 * hostile columns and signed zeros, against the counting passes and the
 * reference. Too long for Oclgrind and past rusticl's loop limit. */
static void selection_at_the_rank_table_length(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind") || test_suite_is("rusticl"))
        test_skip("groups of 65536 rows: too slow on Oclgrind, past rusticl's loop limit");
    cls_context *sort = budget_context(0), *count = budget_context(1);
    const size_t rows[] = {CLS_SELECT_TABLE_MAX, CLS_SELECT_TABLE_MAX + 1};
    const double q[] = {0, 0.25, 0.5, 0.75, 0.999, 1};
    const size_t nq = sizeof q / sizeof q[0];
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        for (size_t ri = 0; ri < 2; ri++) {
            size_t R = rows[ri];
            assert_int_equal(cls_regime_of(sort, R, ti ? 8 : 4, 128), CLS_REGIME_SORT);
            cls_array x = cref_make(t, 2, R, 9, 4700 + ri + 10 * (uint64_t)ti);
            add_zeros(&x);
            size_t n = x.batch * nq * x.cols;
            double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
            assert_int_equal(cls_quantiles(sort, NULL, &x, q, nq, a), CLS_OK);
            assert_int_equal(cls_quantiles(count, NULL, &x, q, nq, b), CLS_OK);
            expect_quantiles(&x, q, nq, a, b, "selected", 0);
            free(a);
            free(b);
            cref_free(&x);
        }
    }
    cls_context_destroy(sort);
    cls_context_destroy(count);
}

/* The decision of how windows are sorted: a GPU proper sorts them with
 * every work-item, any other device a work-item per column; a test's
 * choice overrides both. */
static void parallel_sort_by_device(void **state)
{
    (void)state;
    cls_context *ctx = budget_context(0);
    for (size_t i = 0; i < ctx->ndevs; i++) {
        const cls_dev *d = &ctx->devs[i];
        int gpu = (d->info.type & CLS_DEVICE_GPU) && !(d->info.type & CLS_DEVICE_CPU);
        ctx->sort_parallel = 0;
        assert_int_equal(cls_sort_parallel(ctx, d), gpu);
        ctx->sort_parallel = 1;
        assert_true(cls_sort_parallel(ctx, d));
        ctx->sort_parallel = -1;
        assert_false(cls_sort_parallel(ctx, d));
    }
    cls_context_destroy(ctx);
}

/* The same tests with the windows sorted by every work-item at once
 * (tiles of up to 1024 rows, then merges: 1500 and 3000 rows take one and
 * two of them), whatever the device (the clipping runs both ways itself:
 * clipping_equals_counting_and_reference). */
static void parallel_quantiles(void **state)
{
    parallel_sort = 1;
    quantiles_equal_counting_and_reference(state);
    parallel_sort = 0;
}
static void parallel_high_digits(void **state)
{
    parallel_sort = 1;
    runs_of_equal_high_digits(state);
    parallel_sort = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regime_by_length_budget_and_loop_limit),
        cmocka_unit_test(parallel_sort_by_device),
        cmocka_unit_test(quantiles_equal_counting_and_reference),
        cmocka_unit_test(clipping_equals_counting_and_reference),
        cmocka_unit_test(clipping_in_buckets_by_value),
        cmocka_unit_test(fills_alone_without_counts),
        cmocka_unit_test(one_row_groups),
        cmocka_unit_test(quantiles_of_many_targets),
        cmocka_unit_test(runs_of_equal_high_digits),
        cmocka_unit_test(clipping_keys_of_few_varying_bits),
        cmocka_unit_test(selection_by_levels),
        cmocka_unit_test(selection_at_the_rank_table_length),
        cmocka_unit_test(parallel_quantiles),
        cmocka_unit_test(parallel_high_digits),
    };
    return TEST_RUN("regimes", tests, NULL, NULL);
}
