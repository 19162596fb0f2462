/* The robust and max-abs scalers (scikit-learn's RobustScaler and
 * MaxAbsScaler) fitted and applied on the devices, against plain C: the
 * median and quantile range by sorting (clean_ref.c), the scaling by
 * reference.c; hostile columns, both scopes and dtypes, the options,
 * inverse transforms, and the stats file's round trip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"
#include "pipeline_util.h"

/* Statistics of x as the robust scaler wants them, by sorting. */
static cls_column_stats *robust_ref(const cls_array *x, const cls_pipeline *p)
{
    size_t G = cref_groups(x, p->scope), rows = cref_group_rows(x, p->scope);
    cls_column_stats *st = calloc(G * x->cols, sizeof *st);
    ref_fit(x, p->scope, st);
    double *col = malloc(rows * sizeof *col);
    double qa = p->qmin == 0 && p->qmax == 0 ? 25 : p->qmin, qb = p->qmin == 0 && p->qmax == 0 ? 75 : p->qmax;
    for (size_t g = 0; g < G; g++)
        for (size_t c = 0; c < x->cols; c++) {
            size_t n = cref_column(x, p->scope, g, c, col);
            cls_column_stats *s = &st[g * x->cols + c];
            /* the 0.5 quantile (float64 interpolation), not nanmedian's float32 mean */
            s->median = cref_quantile(col, n, 0.5, x->dtype);
            s->q_lo = cref_quantile(col, n, qa / 100, x->dtype);
            s->q_hi = cref_quantile(col, n, qb / 100, x->dtype);
        }
    free(col);
    return st;
}

static void check(cls_context *ctx, const cls_array *x, const cls_pipeline *p, const char *label)
{
    size_t n = x->batch * x->rows * x->cols;
    cls_array y = make_out(x);
    cls_stats *s = NULL;
    cls_status st = cls_fit_transform(ctx, p, x, &y, &s);
    if (st != CLS_OK) fail_msg("%s: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
    cls_column_stats *want_st = robust_ref(x, p);
    double *want = malloc(n * sizeof *want);
    ref_transform(x, p, want_st, want);
    size_t bad = 0;
    double tol = x->dtype == CLS_F64 ? 1e-12 : 2e-6;
    for (size_t i = 0; i < n; i++) {
        double got = cref_get(&y, i), w = x->dtype == CLS_F32 ? (double)(float)want[i] : want[i];
        int ok = (isnan(got) && isnan(w)) || got == w || fabs(got - w) <= tol * fmax(1, fabs(w));
        if (!ok && bad++ < 5) printf("# %s: element %zu: got %.17g want %.17g\n", label, i, got, w);
    }
    assert_int_equal(bad, 0);
    /* the statistics: the quantiles exact */
    cls_stats_info info;
    assert_int_equal(cls_stats_describe(s, &info), CLS_OK);
    if (p->scaler == CLS_ROBUST) {
        assert_int_equal(info.has_quantiles, 1);
        for (size_t e = 0; e < info.groups * info.cols; e++) {
            cls_column_stats c;
            assert_int_equal(test_column(s, e / info.cols, e % info.cols, &c), CLS_OK);
            const double *gv[3] = {&c.median, &c.q_lo, &c.q_hi}, *wv[3] = {&want_st[e].median, &want_st[e].q_lo,
                                                                          &want_st[e].q_hi};
            for (int k = 0; k < 3; k++)
                if (!(isnan(*gv[k]) && isnan(*wv[k])) && memcmp(gv[k], wv[k], 8))
                    fail_msg("%s: entry %zu statistic %d: got %.17g want %.17g", label, e, k, *gv[k], *wv[k]);
        }
    }
    /* the inverse brings the data back */
    cls_pipeline inv = *p;
    inv.inverse = 1;
    cls_array z = make_out(x);
    st = cls_transform(ctx, &inv, s, &y, &z);
    if (st != CLS_OK) fail_msg("%s inverse: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        double got = cref_get(&z, i), w = cref_get(x, i);
        int ok = (isnan(got) && isnan(w)) || got == w || fabs(got - w) <= (x->dtype == CLS_F64 ? 1e-9 : 1e-4) * fmax(1, fabs(w));
        if (!ok && bad++ < 5) printf("# %s inverse: element %zu: got %.17g want %.17g\n", label, i, got, w);
    }
    assert_int_equal(bad, 0);
    free(want);
    free(want_st);
    cls_stats_destroy(s);
    ref_free(&y);
    ref_free(&z);
}

static void scalers_on_hostile_columns(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t rows = test_suite_is("oclgrind") ? 40 : 150; /* batch scope: long columns (radix) */
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        cls_array x = cref_make(t, 2, rows, 16, 70 + (uint64_t)ti);
        /* drop the infinities: scikit-learn refuses them, clscale skips them, the references agree */
        for (int sc = 0; sc < 2; sc++) {
            cls_pipeline p = {0};
            p.scope = sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
            char label[96];
            p.scaler = CLS_ROBUST;
            snprintf(label, sizeof label, "robust %s %s", ti ? "f64" : "f32", sc ? "batch" : "matrix");
            check(ctx, &x, &p, label);
            p.scaler = CLS_MAXABS;
            snprintf(label, sizeof label, "maxabs %s %s", ti ? "f64" : "f32", sc ? "batch" : "matrix");
            check(ctx, &x, &p, label);
        }
        cref_free(&x);
    }
    cls_context_destroy(ctx);
}

static void robust_options(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = cref_make(t, 1, 33, 8, 90);
    cls_pipeline p = {.scaler = CLS_ROBUST, .qmin = 10, .qmax = 90, .unit_variance = 1};
    check(ctx, &x, &p, "robust 10..90 unit variance");
    cls_pipeline q = {.scaler = CLS_ROBUST, .no_centering = 1};
    check(ctx, &x, &q, "robust without centering");
    cls_pipeline r = {.scaler = CLS_ROBUST, .no_scaling = 1, .qmin = 5, .qmax = 5};
    check(ctx, &x, &r, "robust without scaling");
    cls_pipeline bad = {.scaler = CLS_ROBUST, .qmin = 80, .qmax = 20};
    cls_array y = make_out(&x);
    assert_int_equal(cls_fit_transform(ctx, &bad, &x, &y, NULL), CLS_E_ARG);
    bad.qmin = -1;
    bad.qmax = 50;
    assert_int_equal(cls_fit_transform(ctx, &bad, &x, &y, NULL), CLS_E_ARG);
    cls_pipeline notrobust = {.scaler = CLS_ZSCORE, .unit_variance = 1};
    assert_int_equal(cls_fit_transform(ctx, &notrobust, &x, &y, NULL), CLS_E_ARG);
    ref_free(&y);
    cref_free(&x);
    cls_context_destroy(ctx);
}

static void robust_stats_file_round_trip_and_apply(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_array x = cref_make(CLS_F32, 2, 21, 8, 91);
    cls_pipeline p = {.scaler = CLS_ROBUST, .qmin = 20, .qmax = 70};
    cls_array y = make_out(&x), z = make_out(&x);
    cls_stats *s = NULL, *l = NULL;
    assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, &s), CLS_OK);
    char dir[1024], path[1100];
    test_tmpdir(dir, sizeof dir, "robust-stats");
    snprintf(path, sizeof path, "%s/r.clss", dir);
    assert_int_equal(cls_stats_save(s, path), CLS_OK);
    assert_int_equal(cls_stats_load(path, &l), CLS_OK);
    assert_int_equal(cls_transform(ctx, NULL, l, &x, &z), CLS_OK); /* the pipeline recorded in the file */
    assert_memory_equal(y.data, z.data, 2 * 21 * 8 * 4);
    /* a z-score fit has no quantiles: robust refuses it */
    cls_pipeline zp = {.scaler = CLS_ZSCORE};
    cls_stats *zs = NULL;
    assert_int_equal(cls_fit(ctx, &zp, &x, &zs), CLS_OK);
    assert_int_equal(cls_transform(ctx, &p, zs, &x, &z), CLS_E_ARG);
    /* quantiles do not merge */
    assert_int_equal(cls_stats_merge(s, l), CLS_E_UNSUPPORTED);
    cls_stats_destroy(zs);
    cls_stats_destroy(s);
    cls_stats_destroy(l);
    ref_free(&y);
    ref_free(&z);
    cref_free(&x);
    cls_context_destroy(ctx);
}

/* A robust fit takes its count, missing, min, max and absmax from its
 * selection (ranks 0 and n - 1), not from a statistics pass: they are the
 * statistics pass's (a min-max fit's) exactly, at the regimes' boundaries
 * (one row, the networks' 64/65 and 128/129 rows, the sort regime), on
 * hostile columns (ties, +-Inf, constant, all NaN) and a column with a
 * single finite value. */
static void robust_fit_counts_and_extremes_are_the_statistics_pass(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    static const size_t lengths[] = {1, 2, 64, 65, 128, 129, 300};
    size_t nl = test_suite_is("oclgrind") ? 4 : sizeof lengths / sizeof lengths[0];
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t li = 0; li < nl; li++) {
            cls_array x = cref_make(t, 2, lengths[li], 9, 120 + li);
            /* column 8: one finite value per matrix, the rest NaN */
            for (size_t b = 0; b < 2; b++)
                for (size_t r = 0; r < lengths[li]; r++)
                {
                    size_t i = (b * lengths[li] + r) * 9 + 8;
                    double v = r == lengths[li] / 2 ? -2.5 : NAN;
                    if (t == CLS_F64) ((double *)x.data)[i] = v;
                    else ((float *)x.data)[i] = (float)v;
                }
            for (int sc = 0; sc < 2; sc++) {
                cls_pipeline rp = {.scaler = CLS_ROBUST, .scope = sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
                cls_pipeline mp = {.scaler = CLS_MINMAX, .scope = rp.scope};
                cls_stats *rs = NULL, *ms = NULL;
                if (cls_fit(ctx, &rp, &x, &rs) != CLS_OK || cls_fit(ctx, &mp, &x, &ms) != CLS_OK)
                    fail_msg("%zu rows: %s", lengths[li], cls_last_error(ctx));
                cls_stats_info ri, mi;
                assert_int_equal(cls_stats_describe(rs, &ri), CLS_OK);
                assert_int_equal(cls_stats_describe(ms, &mi), CLS_OK);
                assert_int_equal(ri.rows, mi.rows);
                assert_int_equal(ri.groups, mi.groups);
                for (size_t e = 0; e < ri.groups * ri.cols; e++) {
                    cls_column_stats a, w;
                    assert_int_equal(test_column(rs, e / ri.cols, e % ri.cols, &a), CLS_OK);
                    assert_int_equal(test_column(ms, e / ri.cols, e % ri.cols, &w), CLS_OK);
                    const double *av[3] = {&a.min, &a.max, &a.absmax}, *wv[3] = {&w.min, &w.max, &w.absmax};
                    if (a.count != w.count || a.missing != w.missing)
                        fail_msg("%s %zu rows scope %d entry %zu: count %llu missing %llu, want %llu %llu",
                                 ti ? "f64" : "f32", lengths[li], sc, e, (unsigned long long)a.count,
                                 (unsigned long long)a.missing, (unsigned long long)w.count,
                                 (unsigned long long)w.missing);
                    for (int k = 0; k < 3; k++)
                        if (!(isnan(*av[k]) && isnan(*wv[k])) && *av[k] != *wv[k])
                            fail_msg("%s %zu rows scope %d entry %zu: extreme %d %.17g, want %.17g",
                                     ti ? "f64" : "f32", lengths[li], sc, e, k, *av[k], *wv[k]);
                }
                cls_stats_destroy(rs);
                cls_stats_destroy(ms);
            }
            cref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

/* Tables wider than their groups are long take each column's quantile
 * weights from a table by count (fit_quantiles.c): the statistics are the
 * reference's bit for bit at every count (the hostile columns' NaN and
 * +-Inf leave counts from 0 to the group's rows), at the regimes'
 * boundaries, for quantile ranges whose ends are ranks or between them. */
static void robust_wide_tables_take_weights_by_count(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    static const size_t lengths[] = {1, 2, 3, 20, 64, 65, 129, 300};
    size_t nl = test_suite_is("oclgrind") ? 4 : sizeof lengths / sizeof lengths[0];
    static const double ranges[][2] = {{25, 75}, {10, 90}, {0, 100}, {33.3, 66.7}};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!suite_runs(t)) continue;
        for (size_t li = 0; li < nl; li++) {
            /* more columns than either scope's group has rows */
            size_t rows = lengths[li], cols = (2 * rows / 8 + 2) * 8;
            cls_array x = cref_make(t, 2, rows, cols, 140 + li);
            for (int sc = 0; sc < 2; sc++)
                for (size_t qi = 0; qi < sizeof ranges / sizeof ranges[0]; qi++) {
                    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX,
                                      .qmin = ranges[qi][0], .qmax = ranges[qi][1]};
                    char label[96];
                    snprintf(label, sizeof label, "robust %s %zu x %zu scope %d range %g..%g", ti ? "f64" : "f32",
                             rows, cols, sc, p.qmin, p.qmax);
                    check(ctx, &x, &p, label);
                }
            cref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalers_on_hostile_columns),
        cmocka_unit_test(robust_options),
        cmocka_unit_test(robust_stats_file_round_trip_and_apply),
        cmocka_unit_test(robust_fit_counts_and_extremes_are_the_statistics_pass),
        cmocka_unit_test(robust_wide_tables_take_weights_by_count),
    };
    return TEST_RUN("robust", tests, NULL, NULL);
}
