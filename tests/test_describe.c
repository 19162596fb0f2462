/* cls_describe against plain C: counts, extremes and moments of hostile
 * columns (clean_ref.c), median and quartiles bit for bit (sorting), the
 * outliers at k sigma counted from the summary's own mean and std in the
 * data's dtype, and duplicate rows counted pairwise (NaN equal to NaN,
 * -0.0 to 0.0, as pandas' duplicated()), on short columns (sorting
 * networks, rank counting), long ones (radix passes), both scopes and
 * dtypes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"


/* A summary whose arrays the test owns, as a caller's are (filled with 0xA5
 * bytes, so that a call that must not write them can be checked). */
static cls_summary summary_new(size_t groups, size_t cols, int duplicates)
{
    cls_summary s = {.columns = malloc(groups * cols * sizeof *s.columns),
                     .duplicate_rows = duplicates ? malloc(groups * sizeof *s.duplicate_rows) : NULL};
    assert_non_null(s.columns);
    memset(s.columns, 0xA5, groups * cols * sizeof *s.columns);
    if (duplicates) {
        assert_non_null(s.duplicate_rows);
        memset(s.duplicate_rows, 0xA5, groups * sizeof *s.duplicate_rows);
    }
    return s;
}

static void summary_free(cls_summary *s)
{
    free(s->columns);
    free(s->duplicate_rows);
}

static int untouched(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i] != 0xA5) return 0;
    return 1;
}

static int runs(cls_dtype t) { return t == CLS_F32 || !test_suite_is("rusticl"); }

static void put(cls_array *a, size_t i, double v)
{
    if (a->dtype == CLS_F64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

/* Rows copied over later rows (some with -0.0 for 0.0 and another NaN),
 * so that every group holds duplicates; one column of zeros signs. */
static void add_duplicates(cls_array *a, uint64_t seed)
{
    size_t R = a->batch * a->rows, C = a->cols;
    rng g;
    rng_seed(&g, seed);
    for (size_t r = 0; r < R; r++) put(a, r * C + C - 1, (rng_next(&g) % 3 == 0) ? 0.0 : (double)(rng_next(&g) % 4));
    for (size_t k = 0; k < R / 3; k++) {
        size_t from = (size_t)(rng_next(&g) % R), to = (size_t)(rng_next(&g) % R);
        for (size_t c = 0; c < C; c++) {
            double v = cref_get(a, from * C + c);
            if (v == 0 && k % 2) v = -0.0;
            if (isnan(v) && k % 2) v = -NAN;
            put(a, to * C + c, v);
        }
    }
}

static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static uint64_t ref_duplicates(const cls_array *a, size_t g, size_t rows)
{
    uint64_t dup = 0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < i; j++) {
            size_t c = 0;
            while (c < a->cols && same_value(cref_get(a, ((g * rows + i) * a->cols) + c),
                                             cref_get(a, ((g * rows + j) * a->cols) + c)))
                c++;
            if (c == a->cols) {
                dup++;
                break;
            }
        }
    return dup;
}

/* Bit for bit, but for the sign of a zero: the reference's sort leaves
 * -0.0 and 0.0 in either order (numpy's partition does too). */
static int bits_equal(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, 8) == 0 || (a == 0 && b == 0);
}

static void check(cls_context *ctx, size_t b, size_t r, size_t c, uint64_t seed, double sigma)
{
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = cref_make(t, b, r, c, seed + (uint64_t)ti);
        add_duplicates(&x, seed);
        for (int sc = 0; sc < 2; sc++) {
            cls_scope scope = sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
            size_t G = cref_groups(&x, scope), rows = cref_group_rows(&x, scope);
            cls_summary sum = summary_new(G, c, 1), *s = &sum;
            cls_status st = cls_describe(ctx, &x, scope, sigma, s);
            if (st != CLS_OK) fail_msg("cls_describe: %s: %s", cls_status_str(st), cls_last_error(ctx));
            assert_int_equal(s->groups, G);
            assert_int_equal(s->rows, rows);
            assert_int_equal(s->cols, c);
            assert_true(s->sigma == (sigma == 0 ? 3 : sigma));
            double *col = malloc(rows * sizeof *col);
            size_t bad = 0;
            for (size_t g = 0; g < G; g++) {
                assert_int_equal(s->duplicate_rows[g], ref_duplicates(&x, g, rows));
                for (size_t k = 0; k < c; k++) {
                    const cls_column_summary *m = &s->columns[g * c + k];
                    size_t n = cref_column(&x, scope, g, k, col);
                    assert_int_equal(m->count, n);
                    assert_int_equal(m->missing, rows - n);
                    double sum = 0, ss = 0;
                    for (size_t i = 0; i < n; i++) sum += col[i];
                    double mean = n ? sum / (double)n : NAN;
                    for (size_t i = 0; i < n; i++) ss += (col[i] - mean) * (col[i] - mean);
                    double sd = n ? sqrt(ss / (double)n) : NAN;
                    assert_true(bits_equal(m->min, n ? col[0] : NAN));
                    assert_true(bits_equal(m->max, n ? col[n - 1] : NAN));
                    /* the moments pass runs in the data's dtype (Welford, Chan) */
                    assert_close(m->mean, mean, t == CLS_F64 ? 1e-9 : 1e-5);
                    assert_close(m->std, sd, t == CLS_F64 ? 1e-7 : 1e-5);
                    double want[3] = {cref_quantile(col, n, 0.25, t), cref_median(col, n, t),
                                      cref_quantile(col, n, 0.75, t)};
                    double got[3] = {m->q25, m->median, m->q75};
                    for (int j = 0; j < 3; j++)
                        if (!bits_equal(got[j], want[j]) && bad++ < 5)
                            printf("# %s %s col %zu stat %d: got %.17g want %.17g\n", t == CLS_F64 ? "f64" : "f32",
                                   sc ? "batch" : "matrix", k, j, got[j], want[j]);
                    /* outliers from the summary's own mean and std, in the data's dtype */
                    uint64_t out = 0;
                    double k_sd = s->sigma * m->std;
                    for (size_t i = 0; i < n; i++) {
                        if (t == CLS_F64) out += fabs(col[i] - m->mean) > k_sd;
                        else out += fabsf((float)col[i] - (float)m->mean) > (float)k_sd;
                    }
                    assert_int_equal(m->outliers, out);
                }
            }
            assert_int_equal(bad, 0);
            free(col);
            /* without duplicate_rows: the same columns, the hashing pass skipped */
            cls_summary lean = summary_new(G, c, 0);
            assert_int_equal(cls_describe(ctx, &x, scope, sigma, &lean), CLS_OK);
            assert_memory_equal(lean.columns, s->columns, G * c * sizeof *s->columns);
            summary_free(&lean);
            summary_free(s);
        }
        cref_free(&x);
    }
}

static void short_columns(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    check(ctx, 3, 21, 16, 11, 0);  /* matrix: 21 rows (network of 32); batch: 63 (network of 64) */
    check(ctx, 2, 1, 9, 12, 2);    /* one-row columns */
    if (!test_suite_is("oclgrind")) check(ctx, 1, 100, 9, 13, 1.5);  /* rank counting */
    cls_context_destroy(ctx);
}

static void long_columns(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    check(ctx, 2, test_suite_is("oclgrind") ? 140 : 600, 8, 14, 2.5);
    cls_context_destroy(ctx);
}

static void heavy_duplicates_and_wide_rows(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind")) test_skip("too slow for the simulator: the hash blocks of wide rows run on pocl and rusticl");
    cls_context *ctx = test_context(NULL, 0, 0);
    /* 5000 columns: each row hashed in two blocks; 40 rows of 4 patterns */
    size_t R = 40, C = 5000;
    cls_array x = {.data = malloc(R * C * 4), .dtype = CLS_F32, .batch = 1, .rows = R, .cols = C};
    for (size_t r = 0; r < R; r++)
        for (size_t c = 0; c < C; c++) ((float *)x.data)[r * C + c] = (float)((r % 4) * (c % 7)) - (c == 4999 && r % 8 == 1 ? 0.5f : 0.0f);
    cls_summary s = summary_new(1, C, 1);
    assert_int_equal(cls_describe(ctx, &x, CLS_SCOPE_MATRIX, 0, &s), CLS_OK);
    assert_int_equal(s.duplicate_rows[0], ref_duplicates(&x, 0, R));
    assert_int_equal(s.duplicate_rows[0], R - 5);
    summary_free(&s);
    free(x.data);
    cls_context_destroy(ctx);
}

static void bad_arguments_fail_cleanly(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    float d[4] = {1, 2, 3, 4};
    cls_array x = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 4, .cols = 1};
    cls_summary s = summary_new(1, 1, 1);
    assert_int_equal(cls_describe(ctx, &x, CLS_SCOPE_MATRIX, -1, &s), CLS_E_ARG);
    assert_int_equal(cls_describe(ctx, &x, CLS_SCOPE_MATRIX, NAN, &s), CLS_E_ARG);
    assert_int_equal(cls_describe(ctx, &x, CLS_SCOPE_MATRIX, INFINITY, &s), CLS_E_ARG);
    assert_int_equal(cls_describe(ctx, NULL == ctx ? NULL : &x, (cls_scope)7, 3, &s), CLS_E_ARG);
    assert_int_equal(cls_describe(ctx, &x, CLS_SCOPE_MATRIX, 3, NULL), CLS_E_ARG);
    cls_array z = {.data = d, .dtype = CLS_F32, .batch = 1, .rows = 0, .cols = 1};
    assert_int_equal(cls_describe(ctx, &z, CLS_SCOPE_MATRIX, 3, &s), CLS_E_ARG);
    cls_summary none = {0};
    assert_int_equal(cls_describe(ctx, &x, CLS_SCOPE_MATRIX, 3, &none), CLS_E_ARG);
    /* a refused call writes nothing of the caller's */
    assert_true(untouched(s.columns, sizeof *s.columns) && untouched(s.duplicate_rows, sizeof *s.duplicate_rows));
    assert_int_equal(cls_describe(ctx, &x, CLS_SCOPE_MATRIX, 3, &s), CLS_OK);
    assert_true(s.columns[0].median == 2.5 && s.columns[0].q25 == 1.75 && s.duplicate_rows[0] == 0);
    summary_free(&s);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_columns),
        cmocka_unit_test(long_columns),
        cmocka_unit_test(heavy_duplicates_and_wide_rows),
        cmocka_unit_test(bad_arguments_fail_cleanly),
    };
    return TEST_RUN("describe", tests, NULL, NULL);
}
