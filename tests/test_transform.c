/* Statistics used apart from the data they came from: fit on one array and
 * transform another, the pipeline recorded in the statistics, the inverse,
 * merging the statistics of two parts, saving and loading them, in-place
 * calls, and one device against two. Every result is checked against the
 * float64 reference, or bit for bit against the same call done another way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_util.h"

static const cls_scaler scalers[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
static const char *const scaler_names[] = {"minmax", "zscore", "decimal"};

static const char *dtype_name(cls_dtype t) { return t == CLS_F64 ? "f64" : "f32"; }
static size_t elem_size(cls_dtype t) { return t == CLS_F64 ? 8 : 4; }
static size_t bytes_of(const cls_array *a) { return a->batch * a->rows * a->cols * elem_size(a->dtype); }

/* With several implementations in one context ("all") a slice may land on
 * any of them, and two compilers may round differently (contraction): there
 * two runs of the same call agree within the dtype's tolerance. With one
 * implementation they must agree bit for bit. */
static int bitwise_suite(void) { return !test_suite_is("all"); }

static void assert_same_output(const cls_array *a, const cls_array *b, const char *label)
{
    if (bitwise_suite()) {
        if (memcmp(a->data, b->data, bytes_of(a)) != 0) {
            size_t n = a->batch * a->rows * a->cols;
            for (size_t i = 0; i < n; i++)
                if (memcmp((const char *)a->data + i * elem_size(a->dtype),
                           (const char *)b->data + i * elem_size(a->dtype), elem_size(a->dtype)) != 0) {
                    fail_msg("%s: element %zu differs: %.17g vs %.17g", label, i, ref_get(a, i), ref_get(b, i));
                }
        }
        return;
    }
    size_t n = a->batch * a->rows * a->cols;
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) want[i] = ref_get(b, i);
    size_t bad = ref_compare(a, want, tol_for(a->dtype), label);
    free(want);
    assert_int_equal(bad, 0);
}

static cls_stats *fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, const char *label)
{
    cls_stats *s = NULL;
    cls_status st = cls_fit(ctx, p, x, &s);
    if (st != CLS_OK) print_error("%s: cls_fit: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    assert_non_null(s);
    return s;
}

static void transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                      cls_array *out, const char *label)
{
    cls_status st = cls_transform(ctx, p, s, in, out);
    if (st != CLS_OK) print_error("%s: cls_transform: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
}

static cls_stats *fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                                const char *label)
{
    cls_stats *s = NULL;
    cls_status st = cls_fit_transform(ctx, p, in, out, &s);
    if (st != CLS_OK)
        print_error("%s: cls_fit_transform: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    assert_non_null(s);
    return s;
}

static int has_moments(cls_scaler s) { return s == CLS_ZSCORE || s == CLS_NONE; }

/* cls_fit on x1, cls_transform of x2 (other rows; with batch scope another
 * batch too): the reference fits x1 and transforms x2. */
static void fit_on_one_array_transform_another(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int sc = 0; sc < 3; sc++)
            for (int scope = 0; scope < 2; scope++) {
                uint64_t seed = 3000 + (uint64_t)(t * 100 + sc * 10 + scope);
                cls_array x1 = ref_make(dt, 3, 40, 9, seed, REF_MISSING);
                /* wider values than x1's: outside its min and max */
                cls_array x2 = ref_make(dt, scope ? 5 : 3, scope ? 31 : 70, 9, seed + 1, REF_NEGATIVE | REF_MISSING);
                cls_pipeline p = {.scaler = scalers[sc], .scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
                char label[128];
                snprintf(label, sizeof label, "fit/transform %s %s %s", scaler_names[sc], dtype_name(dt),
                         scope ? "batch" : "matrix");
                cls_stats *s = fit(ctx, &p, &x1, label);
                check_stats(s, &x1, p.scope, has_moments(p.scaler), label);
                check_transform(ctx, &x2, &p, s, &x1, label);
                cls_stats_destroy(s);
                ref_free(&x1);
                ref_free(&x2);
            }
    }
    cls_context_destroy(ctx);
}

/* Columns c = 0..11 of magnitude 10^(c - 6); in each matrix row 3 holds
 * +-10^(c - 6) as stored in the dtype, so the column's max |x| sits on a
 * decimal boundary (0.01f is just below 1/100, 0.01 just above); the last
 * column is all zeros. */
static cls_array make_decades(cls_dtype dt, size_t batch, size_t rows, uint64_t seed)
{
    const size_t cols = 12;
    cls_array x = ref_make(dt, batch, rows, cols, seed, REF_NEGATIVE);
    for (size_t b = 0; b < batch; b++)
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t i = (b * rows + r) * cols + c;
                double unit = pow(10.0, (double)c - 6.0);
                double v = r == 3 ? (c % 2 ? -unit : unit) : ref_get(&x, i) / 300.0 * unit;
                if (c == cols - 1) v = 0;
                if (dt == CLS_F64) ((double *)x.data)[i] = v;
                else ((float *)x.data)[i] = (float)v;
            }
    return x;
}

/* cls_transform with the statistics cls_fit_transform returned gives what
 * cls_fit_transform wrote (within the dtype's tolerance: one computes the
 * scaler's parameters on the device, the other on the host), and both
 * match the reference: groups that fit a work-item, groups of more than
 * 4096 rows (parameters from the chunk merge), and two passes. */
static void transform_with_fitted_stats_equals_fit_transform(void **state)
{
    (void)state;
    cls_context *dflt = test_context(NULL, 0, 0), *small = test_context(NULL, 0, 4096);
    int tiny = test_suite_is("oclgrind");
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int k = 0; k < 3; k++) {
            cls_context *ctx = k == 2 ? small : dflt;
            size_t rows = k == 0 ? 50 : 4500;
            cls_array x = make_decades(dt, k == 0 ? 2 : 1, rows, 3050 + (uint64_t)(t * 10 + k));
            for (int sc = 0; sc < 3; sc++) {
                if (tiny && k && sc != 2) continue;
                cls_pipeline p = {.scaler = scalers[sc], .scope = CLS_SCOPE_MATRIX};
                char label[128];
                snprintf(label, sizeof label, "fitted %s %s %zu rows%s", scaler_names[sc], dtype_name(dt), rows,
                         k == 2 ? " small slices" : "");
                cls_array y = make_out(&x), z = make_out(&x);
                cls_stats *s = fit_transform(ctx, &p, &x, &y, label);
                transform(ctx, &p, s, &x, &z, label);
                size_t n = x.batch * x.rows * x.cols;
                double *want = malloc(n * sizeof *want);
                assert_non_null(want);
                ref_fit_transform(&x, &p, want, NULL);
                size_t bad_y = ref_compare(&y, want, tol_for(dt), label);
                size_t bad_z = ref_compare(&z, want, tol_for(dt), label);
                for (size_t i = 0; i < n; i++) want[i] = ref_get(&z, i);
                size_t bad_yz = ref_compare(&y, want, tol_for(dt), "fit_transform vs transform");
                free(want);
                cls_stats_destroy(s);
                ref_free(&y);
                ref_free(&z);
                if (bad_y || bad_z || bad_yz)
                    fail_msg("%s: %zu wrong from cls_fit_transform, %zu from cls_transform, %zu differ", label,
                             bad_y, bad_z, bad_yz);
            }
            ref_free(&x);
        }
    }
    cls_context_destroy(dflt);
    cls_context_destroy(small);
}

/* p = NULL: the scaler, scope, range and clip recorded at fit time. */
static void transform_without_pipeline_uses_the_recorded_one(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_pipeline pipelines[] = {
        {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX, .lo = -2, .hi = 3, .clip = 1},
        {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_BATCH, .lo = 10, .hi = 20},
        {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH},
        {.scaler = CLS_DECIMAL, .scope = CLS_SCOPE_MATRIX},
    };
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (size_t k = 0; k < sizeof pipelines / sizeof pipelines[0]; k++) {
            const cls_pipeline *p = &pipelines[k];
            char label[96];
            snprintf(label, sizeof label, "recorded pipeline %zu %s", k, dtype_name(dt));
            cls_array x1 = ref_make(dt, 2, 50, 7, 3200 + k, REF_MISSING);
            cls_array x2 = ref_make(dt, 2, 60, 7, 3210 + k, REF_NEGATIVE | REF_MISSING);
            cls_stats *s = fit(ctx, p, &x1, label);

            cls_array y_rec = make_out(&x2), y_p = make_out(&x2);
            transform(ctx, NULL, s, &x2, &y_rec, label);
            transform(ctx, p, s, &x2, &y_p, label);
            size_t n = x2.batch * x2.rows * x2.cols;
            double *want = malloc(n * sizeof *want);
            cls_column_stats *rs = calloc(ref_groups(&x1, p->scope) * x1.cols, sizeof *rs);
            assert_non_null(want);
            assert_non_null(rs);
            ref_fit(&x1, p->scope, rs);
            ref_transform(&x2, p, rs, want);
            assert_int_equal(ref_compare(&y_rec, want, tol_for(dt), label), 0);
            assert_same_output(&y_rec, &y_p, label);
            free(want);
            free(rs);
            ref_free(&y_rec);
            ref_free(&y_p);
            cls_stats_destroy(s);
            ref_free(&x1);
            ref_free(&x2);
        }
    }
    cls_context_destroy(ctx);
}

/* x ~ inverse(forward(x)) within the dtype's tolerance on the column's
 * scale; missing values come back as they were (same bits); the inverse
 * also matches the reference's inverse of the forward result. */
static void inverse_undoes_forward(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int sc = 0; sc < 3; sc++)
            for (int scope = 0; scope < 2; scope++) {
                char label[128];
                snprintf(label, sizeof label, "inverse %s %s %s", scaler_names[sc], dtype_name(dt),
                         scope ? "batch" : "matrix");
                cls_array x = ref_make(dt, 3, 45, 8, 3300 + (uint64_t)(t * 100 + sc * 10 + scope),
                                       REF_MISSING | REF_CONSTANT | REF_ALL_MISSING | REF_NEGATIVE);
                cls_pipeline p = {.scaler = scalers[sc], .scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
                if (p.scaler == CLS_MINMAX) {
                    p.lo = -1;
                    p.hi = 2;
                }
                cls_array y = make_out(&x), z = make_out(&x);
                cls_stats *s = fit_transform(ctx, &p, &x, &y, label);
                cls_pipeline inv = p;
                inv.inverse = 1;
                transform(ctx, &inv, s, &y, &z, label);

                size_t n = x.batch * x.rows * x.cols;
                double *want = malloc(n * sizeof *want);
                assert_non_null(want);
                for (size_t i = 0; i < n; i++) want[i] = ref_get(&x, i);
                assert_int_equal(compare_on_column_scale(&z, want, &x, tol_for(dt), label), 0);
                /* missing values: the very same bits */
                for (size_t i = 0; i < n; i++)
                    if (!isfinite(want[i]))
                        assert_memory_equal((char *)z.data + i * elem_size(dt), (char *)x.data + i * elem_size(dt),
                                            elem_size(dt));
                cls_column_stats *rs = calloc(ref_groups(&x, p.scope) * x.cols, sizeof *rs);
                assert_non_null(rs);
                ref_fit(&x, p.scope, rs);
                ref_transform(&y, &inv, rs, want);
                assert_int_equal(compare_on_column_scale(&z, want, &x, tol_for(dt), label), 0);
                free(rs);
                free(want);
                cls_stats_destroy(s);
                ref_free(&x);
                ref_free(&y);
                ref_free(&z);
            }
    }
    cls_context_destroy(ctx);
}

/* Whole statistics against merged ones: counts, min, max, absmax exactly;
 * moments within the tolerance of check_stats (the merge order differs). */
static void assert_stats_agree(const cls_stats *a, const cls_stats *b, const char *label)
{
    cls_stats_info ia, ib;
    assert_int_equal(cls_stats_describe(a, &ia), CLS_OK);
    assert_int_equal(cls_stats_describe(b, &ib), CLS_OK);
    assert_int_equal(ia.groups, ib.groups);
    assert_int_equal(ia.cols, ib.cols);
    assert_int_equal(ia.rows, ib.rows);
    assert_int_equal(ia.has_moments, ib.has_moments);
    double tol = ia.dtype == CLS_F64 ? 1e-9 : 1e-4;
    for (size_t g = 0; g < ia.groups; g++)
        for (size_t c = 0; c < ia.cols; c++) {
            cls_column_stats u, v;
            assert_int_equal(test_column(a, g, c, &u), CLS_OK);
            assert_int_equal(test_column(b, g, c, &v), CLS_OK);
            if (u.count != v.count || u.missing != v.missing)
                fail_msg("%s: [%zu, %zu] count %llu/%llu missing %llu/%llu", label, g, c,
                         (unsigned long long)u.count, (unsigned long long)v.count, (unsigned long long)u.missing,
                         (unsigned long long)v.missing);
            assert_close(u.min, v.min, 0.0);
            assert_close(u.max, v.max, 0.0);
            assert_close(u.absmax, v.absmax, 0.0);
            if (ia.has_moments) {
                assert_close(u.mean, v.mean, tol);
                assert_close(u.m2, v.m2, tol);
            }
        }
}

static void halves_merge_to_whole(cls_context *ctx, const cls_array *x, const cls_array *h1, const cls_array *h2,
                                  cls_scaler scaler, const char *what)
{
    cls_pipeline p = {.scaler = scaler, .scope = CLS_SCOPE_BATCH};
    char label[128];
    snprintf(label, sizeof label, "merge %s %s scaler %d", what, dtype_name(x->dtype), (int)scaler);
    cls_stats *a = fit(ctx, &p, h1, label), *b = fit(ctx, &p, h2, label), *w = fit(ctx, &p, x, label);
    assert_int_equal(cls_stats_merge(a, b), CLS_OK);
    check_stats(a, x, CLS_SCOPE_BATCH, has_moments(scaler), label);
    cls_stats_info info;
    assert_int_equal(cls_stats_describe(a, &info), CLS_OK);
    assert_int_equal(info.rows, x->batch * x->rows);
    assert_stats_agree(a, w, label);
    /* and the merged statistics scale the whole like its own */
    if (scaler != CLS_NONE) check_transform(ctx, x, &p, a, x, label);
    cls_stats_destroy(a);
    cls_stats_destroy(b);
    cls_stats_destroy(w);
}

static void stats_of_two_halves_merge_to_stats_of_whole(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_scaler fitted[] = {CLS_NONE, CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        size_t es = elem_size(dt);
        for (size_t k = 0; k < 4; k++) {
            unsigned feat = REF_MISSING | REF_NEGATIVE | (k == 2 ? REF_OFFSET : 0);
            /* one table split by rows, unevenly */
            cls_array x = ref_make(dt, 1, 601, 11, 3400 + k, feat);
            cls_array h1 = {.data = x.data, .dtype = dt, .batch = 1, .rows = 250, .cols = 11};
            cls_array h2 = {.data = (char *)x.data + 250 * 11 * es, .dtype = dt, .batch = 1, .rows = 351, .cols = 11};
            halves_merge_to_whole(ctx, &x, &h1, &h2, fitted[k], "rows");
            ref_free(&x);
            /* a batch split by matrices */
            x = ref_make(dt, 6, 101, 11, 3410 + k, feat);
            cls_array b1 = {.data = x.data, .dtype = dt, .batch = 2, .rows = 101, .cols = 11};
            cls_array b2 = {.data = (char *)x.data + 2 * 101 * 11 * es, .dtype = dt, .batch = 4, .rows = 101, .cols = 11};
            halves_merge_to_whole(ctx, &x, &b1, &b2, fitted[k], "matrices");
            ref_free(&x);
        }
    }
    cls_context_destroy(ctx);
}

static int same_double(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Save, load, transform with the loaded statistics (and their recorded
 * pipeline): the same bits as with the statistics that were saved. */
static void saved_and_loaded_stats_transform_bit_for_bit(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    test_tmpdir(dir, sizeof dir, "transform-stats");
    cls_context *ctx = test_context(NULL, 0, 0);
    const cls_pipeline pipelines[] = {
        {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX, .lo = -1, .hi = 1, .clip = 1},
        {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH},
        {.scaler = CLS_DECIMAL, .scope = CLS_SCOPE_MATRIX},
        {.scaler = CLS_NONE, .scope = CLS_SCOPE_BATCH},
    };
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (size_t k = 0; k < sizeof pipelines / sizeof pipelines[0]; k++) {
            const cls_pipeline *p = &pipelines[k];
            char label[96];
            snprintf(label, sizeof label, "save/load %zu %s", k, dtype_name(dt));
            snprintf(path, sizeof path, "%s/s%zu-%d.clss", dir, k, t);
            cls_array x1 = ref_make(dt, 3, 40, 6, 3500 + k, REF_MISSING | REF_NEGATIVE);
            cls_array x2 = ref_make(dt, 3, 33, 6, 3510 + k, REF_MISSING | REF_NEGATIVE);
            cls_stats *s = fit(ctx, p, &x1, label), *l = NULL;
            cls_status st = cls_stats_save(s, path);
            if (st != CLS_OK) print_error("%s: save: %s\n", label, cls_last_error(NULL));
            assert_int_equal(st, CLS_OK);
            st = cls_stats_load(path, &l);
            if (st != CLS_OK) print_error("%s: load: %s\n", label, cls_last_error(NULL));
            assert_int_equal(st, CLS_OK);
            assert_non_null(l);

            cls_stats_info a, b;
            assert_int_equal(cls_stats_describe(s, &a), CLS_OK);
            assert_int_equal(cls_stats_describe(l, &b), CLS_OK);
            assert_int_equal(a.scaler, b.scaler);
            assert_int_equal(a.scope, b.scope);
            assert_true(same_double(a.lo, b.lo) && same_double(a.hi, b.hi));
            assert_int_equal(a.clip, b.clip);
            assert_int_equal(a.dtype, b.dtype);
            assert_int_equal(a.groups, b.groups);
            assert_int_equal(a.cols, b.cols);
            assert_int_equal(a.rows, b.rows);
            assert_int_equal(a.has_moments, b.has_moments);
            for (size_t g = 0; g < a.groups; g++)
                for (size_t c = 0; c < a.cols; c++) {
                    cls_column_stats u, v;
                    assert_int_equal(test_column(s, g, c, &u), CLS_OK);
                    assert_int_equal(test_column(l, g, c, &v), CLS_OK);
                    assert_true(u.count == v.count && u.missing == v.missing);
                    assert_true(same_double(u.min, v.min) && same_double(u.max, v.max));
                    assert_true(same_double(u.mean, v.mean) && same_double(u.m2, v.m2));
                    assert_true(same_double(u.absmax, v.absmax));
                }

            if (p->scaler != CLS_NONE) {
                cls_array y_orig = make_out(&x2), y_load = make_out(&x2), y_rec = make_out(&x2);
                transform(ctx, p, s, &x2, &y_orig, label);
                transform(ctx, p, l, &x2, &y_load, label);
                transform(ctx, NULL, l, &x2, &y_rec, label);
                assert_same_output(&y_load, &y_orig, label);
                assert_same_output(&y_rec, &y_orig, label);
                check_transform(ctx, &x2, p, l, &x1, label);
                ref_free(&y_orig);
                ref_free(&y_load);
                ref_free(&y_rec);
            }
            cls_stats_destroy(s);
            cls_stats_destroy(l);
            ref_free(&x1);
            ref_free(&x2);
        }
    }
    cls_context_destroy(ctx);
}

/* In place (out = in) against out of place, for fit_transform and for
 * transform, on one context. Small slices: many slices, and a group that
 * needs two passes (the second pass writes over its own input). */
static void in_place_on(cls_context *ctx, size_t b, size_t r, size_t c, uint64_t seed, const char *what)
{
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int sc = 0; sc < 3; sc++)
            for (int scope = 0; scope < 2; scope++) {
                char label[128];
                snprintf(label, sizeof label, "in place %s %s %s %s", what, scaler_names[sc], dtype_name(dt),
                         scope ? "batch" : "matrix");
                uint64_t sd = seed + (uint64_t)(t * 100 + sc * 10 + scope);
                cls_array x = ref_make(dt, b, r, c, sd, REF_MISSING | REF_NEGATIVE);
                cls_array f = ref_make_factors(dt, 1, r, c, sd + 7);
                cls_pipeline p = {.scaler = scalers[sc], .scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
                if (sc == 0) p.factors = &f; /* fused with a discount */

                cls_array y = make_out(&x), xi = ref_copy(&x);
                cls_stats *s = fit_transform(ctx, &p, &x, &y, label);
                cls_stats_destroy(fit_transform(ctx, &p, &xi, &xi, label));
                assert_same_output(&xi, &y, label);

                cls_array x2 = ref_make(dt, b, r, c, sd + 1, REF_MISSING | REF_NEGATIVE);
                cls_array y2 = make_out(&x2), x2i = ref_copy(&x2);
                transform(ctx, &p, s, &x2, &y2, label);
                transform(ctx, &p, s, &x2i, &x2i, label);
                assert_same_output(&x2i, &y2, label);
                check_transform(ctx, &x2, &p, s, &x, label);

                cls_stats_destroy(s);
                ref_free(&x);
                ref_free(&f);
                ref_free(&y);
                ref_free(&xi);
                ref_free(&x2);
                ref_free(&y2);
                ref_free(&x2i);
            }
    }
}

static void in_place_equals_out_of_place(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    in_place_on(ctx, 4, 70, 13, 3600, "default slices");
    cls_context_destroy(ctx);
}

static void in_place_equals_out_of_place_with_small_slices(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 4096);
    int tiny = test_suite_is("oclgrind"); /* ~20 us per element */
    in_place_on(ctx, tiny ? 2 : 3, 60, tiny ? 20 : 40, 3700, "column blocks");
    in_place_on(ctx, 1, 4500, tiny ? 1 : 3, 3800, "two phases");
    cls_context_destroy(ctx);
}

/* The same through pinned staging slots, as on a discrete GPU: phase 2 of
 * an in-place call writes back over the input it staged in phase 1.
 * (Oclgrind takes this path always: the tests above cover it there.) */
static void in_place_equals_out_of_place_through_staging(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind")) test_skip("Oclgrind stages always: the tests above cover it there");
    cls_context *ctx = test_context(NULL, CLS_FORCE_STAGING, 4096);
    in_place_on(ctx, 3, 60, 40, 3750, "staging column blocks");
    in_place_on(ctx, 1, 4500, 3, 3850, "staging two phases");
    cls_context_destroy(ctx);
}

/* Two contexts over the same data: "0" (one PoCL device) and "0,1" (both).
 * One-pass results (each statistics group whole in one slice) must be the
 * same bits. Where statistics are merged from several slices, the slicing
 * may differ with the devices taking part and so may the order of the
 * merges: there results agree within 1e-12 (float64) or 2e-6 (float32)
 * relative to max(1, |value|), the rounding of a few merges. */
static void assert_agree(const cls_array *a, const cls_array *b, int exact, const char *label)
{
    if (exact) {
        if (memcmp(a->data, b->data, bytes_of(a)) != 0) fail_msg("%s: one and two devices differ", label);
        return;
    }
    size_t n = a->batch * a->rows * a->cols;
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) want[i] = ref_get(b, i);
    size_t bad = ref_compare(a, want, a->dtype == CLS_F64 ? 1e-12 : 2e-6, label);
    free(want);
    assert_int_equal(bad, 0);
}

static void agree_on(cls_context *c1, cls_context *c2, size_t b, size_t r, size_t c, int exact, uint64_t seed)
{
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        for (int sc = 0; sc < 3; sc++)
            for (int scope = 0; scope < 2; scope++) {
                char label[128];
                snprintf(label, sizeof label, "1 vs 2 devices %zux%zux%zu %s %s %s", b, r, c, scaler_names[sc],
                         dtype_name(dt), scope ? "batch" : "matrix");
                cls_array x = ref_make(dt, b, r, c, seed + (uint64_t)(t * 100 + sc * 10 + scope),
                                       REF_MISSING | REF_NEGATIVE);
                cls_pipeline p = {.scaler = scalers[sc], .scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
                cls_array y1 = make_out(&x), y2 = make_out(&x);
                cls_stats *s1 = fit_transform(c1, &p, &x, &y1, label);
                cls_stats *s2 = fit_transform(c2, &p, &x, &y2, label);
                cls_report rep;
                assert_int_equal(cls_last_report(c2, &rep), CLS_OK);
                assert_int_equal(rep.ndevices, 2);
                assert_int_equal(rep.phases, exact ? 1 : 2);
                assert_agree(&y2, &y1, exact, label);
                assert_stats_agree(s2, s1, label);
                /* and the reference agrees with both */
                size_t n = x.batch * x.rows * x.cols;
                double *want = malloc(n * sizeof *want);
                assert_non_null(want);
                ref_fit_transform(&x, &p, want, NULL);
                assert_int_equal(ref_compare(&y2, want, tol_for(dt), label), 0);
                free(want);
                cls_stats_destroy(s1);
                cls_stats_destroy(s2);
                ref_free(&x);
                ref_free(&y1);
                ref_free(&y2);
            }
    }
}

static void one_device_and_two_devices_agree(void **state)
{
    (void)state;
    if (!test_suite_is("pocl")) test_skip("needs the pocl suite (two devices of one implementation)");
    cls_context *c1 = test_context("0", 0, 0), *c2 = test_context("0,1", 0, 0);
    assert_int_equal(cls_device_count(c1), 1);
    assert_int_equal(cls_device_count(c2), 2);
    agree_on(c1, c2, 40, 200, 50, 1, 3900);
    cls_context_destroy(c1);
    cls_context_destroy(c2);

    c1 = test_context("0", 0, 65536);
    c2 = test_context("0,1", 0, 65536);
    agree_on(c1, c2, 2, 20000, 8, 0, 3950);
    cls_context_destroy(c1);
    cls_context_destroy(c2);
}

/* The identity (no scaler, no discount) is a host copy: the output equals
 * the input bit for bit, and the report of that call lists every device of
 * the context with no slice, not the previous call's work nor no device. */
static void identity_copies_and_reports_every_device_idle(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    cls_array x = ref_make(CLS_F32, 2, 31, 7, 8800, REF_MISSING | REF_NEGATIVE);
    cls_array y = make_out(&x);
    cls_pipeline scale = {.scaler = CLS_MINMAX}, none = {0};
    assert_int_equal(cls_fit_transform(ctx, &scale, &x, &y, NULL), CLS_OK); /* a report with slices */
    assert_int_equal(cls_transform(ctx, &none, NULL, &x, &y), CLS_OK);
    assert_memory_equal(y.data, x.data, 2 * 31 * 7 * sizeof(float));
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.ndevices, cls_device_count(ctx));
    assert_non_null(rep.devices);
    for (size_t i = 0; i < rep.ndevices; i++) {
        assert_int_equal(rep.devices[i].device, i);
        assert_int_equal(rep.devices[i].slices, 0);
        assert_null(rep.devices[i].failed);
    }
    assert_int_equal(rep.slices, 0);
    ref_free(&x);
    ref_free(&y);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fit_on_one_array_transform_another),
        cmocka_unit_test(transform_with_fitted_stats_equals_fit_transform),
        cmocka_unit_test(transform_without_pipeline_uses_the_recorded_one),
        cmocka_unit_test(inverse_undoes_forward),
        cmocka_unit_test(stats_of_two_halves_merge_to_stats_of_whole),
        cmocka_unit_test(saved_and_loaded_stats_transform_bit_for_bit),
        cmocka_unit_test(in_place_equals_out_of_place),
        cmocka_unit_test(in_place_equals_out_of_place_with_small_slices),
        cmocka_unit_test(in_place_equals_out_of_place_through_staging),
        cmocka_unit_test(one_device_and_two_devices_agree),
        cmocka_unit_test(identity_copies_and_reports_every_device_idle),
    };
    return TEST_RUN("transform", tests, NULL, NULL);
}
