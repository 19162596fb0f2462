/* The statistics object: Chan's merge against plain two-pass sums, the
 * scalers' params forward and inverse, the decimal exponent, and the stats
 * file (round trip, the exact bytes docs/FORMAT.md specifies, and every way a
 * file can be malformed). No OpenCL: everything here is host code. */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "internal.h"

/* ---- helpers ---- */

/* A column's statistics from its values, the plain way: two passes. */
static cls_column_stats reference(const double *x, size_t n)
{
    cls_column_stats c = cls_column_empty();
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            c.missing++;
            continue;
        }
        if (c.count == 0 || x[i] < c.min) c.min = x[i];
        if (c.count == 0 || x[i] > c.max) c.max = x[i];
        if (c.count == 0 || fabs(x[i]) > c.absmax) c.absmax = fabs(x[i]);
        sum += x[i];
        c.count++;
    }
    if (c.count == 0) return c;
    c.mean = sum / (double)c.count;
    c.m2 = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) c.m2 += (x[i] - c.mean) * (x[i] - c.mean);
    return c;
}

static cls_stats_info info_of(cls_scaler scaler, size_t groups, size_t cols)
{
    cls_stats_info in;
    memset(&in, 0, sizeof in);
    in.scaler = scaler;
    in.scope = CLS_SCOPE_MATRIX;
    in.lo = 0;
    in.hi = 1;
    in.dtype = CLS_F64;
    in.groups = groups;
    in.cols = cols;
    in.has_moments = 1;
    return in;
}

static void assert_column_close(const cls_column_stats *a, const cls_column_stats *e, double tol)
{
    assert_int_equal(a->count, e->count);
    assert_int_equal(a->missing, e->missing);
    assert_close(a->min, e->min, 0.0);
    assert_close(a->max, e->max, 0.0);
    assert_close(a->absmax, e->absmax, 0.0);
    assert_close(a->mean, e->mean, tol);
    assert_close(a->m2, e->m2, tol);
}

/* Column data for the merge tests: varied scales and offsets, a few missing. */
#define ROWS 1000
#define COLS 6
static void make_data(double x[COLS][ROWS], uint64_t seed)
{
    rng r;
    rng_seed(&r, seed);
    for (size_t c = 0; c < COLS; c++) {
        double scale = pow(10.0, (double)c - 2), offset = rng_range(&r, -100, 100);
        for (size_t i = 0; i < ROWS; i++) {
            double u = rng_uniform(&r);
            x[c][i] = u < 0.02 ? NAN : u < 0.03 ? -INFINITY : offset + scale * rng_normal(&r);
        }
    }
}

static void write_bytes(const char *path, const unsigned char *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len) assert_int_equal(fwrite(p, 1, len, f), len); /* an empty file may come with p = NULL */
    assert_int_equal(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *p = malloc(1 << 20);
    assert_non_null(p);
    *len = fread(p, 1, 1 << 20, f);
    fclose(f);
    return p;
}

/* A small statistics object with every kind of column: finite, NaN moments,
 * all missing. */
static cls_stats *sample_stats(void)
{
    cls_stats_info in = info_of(CLS_ZSCORE, 2, 3);
    in.lo = -0.25;
    in.hi = 7.5;
    in.clip = 1;
    in.dtype = CLS_F32;
    in.rows = 11;
    cls_stats *s = cls_stats_new(&in);
    assert_non_null(s);
    for (size_t i = 0; i < 6; i++) {
        cls_column_stats *c = &s->col[i];
        c->count = 10 - i;
        c->missing = 1 + i;
        c->min = -1.0 / 3 - (double)i;
        c->max = 1e300 + (double)i;
        c->mean = 0.1 * (double)i;
        c->m2 = 5e-310 * (double)i;  /* subnormal */
        c->absmax = 1e300;
    }
    s->col[2] = cls_column_empty();
    s->col[2].missing = 11;
    s->col[4].mean = s->col[4].m2 = NAN;
    return s;
}

/* Loads `path`, expecting CLS_E_FORMAT and a message that names the file. */
static void assert_load_format_error(const char *path)
{
    cls_stats *s = (cls_stats *)1;
    cls_status st = cls_stats_load(path, &s);
    if (st != CLS_E_FORMAT) print_error("%s: %s\n", cls_status_str(st), cls_last_error(NULL));
    assert_int_equal(st, CLS_E_FORMAT);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(NULL), path));
}

/* ---- columns and merge ---- */

static void empty_column_has_count_0_and_nan_values(void **state)
{
    (void)state;
    cls_column_stats c = cls_column_empty();
    assert_int_equal(c.count, 0);
    assert_int_equal(c.missing, 0);
    assert_true(isnan(c.min) && isnan(c.max) && isnan(c.mean) && isnan(c.m2) && isnan(c.absmax));
}

static void new_stats_are_all_empty(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_MINMAX, 3, 4);
    cls_stats *s = cls_stats_new(&in);
    assert_non_null(s);
    cls_stats_info out;
    assert_int_equal(cls_stats_describe(s, &out), CLS_OK);
    assert_int_equal(out.groups, 3);
    assert_int_equal(out.cols, 4);
    for (size_t g = 0; g < 3; g++)
        for (size_t c = 0; c < 4; c++) {
            cls_column_stats col, e = cls_column_empty();
            assert_int_equal(test_column(s, g, c, &col), CLS_OK);
            assert_column_close(&col, &e, 0.0);
        }
    cls_stats_destroy(s);
}

static void new_stats_with_overflowing_shape_is_null(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_MINMAX, SIZE_MAX / 2, 3);
    assert_null(cls_stats_new(&in));
    in.groups = SIZE_MAX / sizeof(cls_column_stats) + 1;
    in.cols = 1;
    assert_null(cls_stats_new(&in));
    assert_null(cls_stats_new(NULL));
}

static void columns_table_and_describe_reject_null(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_MINMAX, 2, 3);
    cls_stats *s = cls_stats_new(&in);
    cls_column_stats *t = cls_stats_columns(s);
    assert_non_null(t);
    t[1 * 3 + 2].count = 7;  /* the table is the statistics: group 1, column 2 */
    cls_column_stats c;
    assert_int_equal(test_column(s, 1, 2, &c), CLS_OK);
    assert_int_equal(c.count, 7);
    assert_null(cls_stats_columns(NULL));
    assert_int_equal(cls_stats_describe(NULL, &in), CLS_E_ARG);
    assert_int_equal(cls_stats_describe(s, NULL), CLS_E_ARG);
    cls_stats_destroy(s);
}

static void destroy_null_is_a_no_op(void **state)
{
    (void)state;
    cls_stats_destroy(NULL);
}

static void merge_of_halves_equals_whole(void **state)
{
    (void)state;
    static double x[COLS][ROWS];
    make_data(x, 1);
    cls_stats_info in = info_of(CLS_ZSCORE, 1, COLS);
    cls_stats *a = cls_stats_new(&in), *b = cls_stats_new(&in);
    for (size_t c = 0; c < COLS; c++) {
        /* uneven halves, so that na != nb */
        a->col[c] = reference(x[c], 377);
        b->col[c] = reference(x[c] + 377, ROWS - 377);
    }
    assert_int_equal(cls_stats_merge(a, b), CLS_OK);
    for (size_t c = 0; c < COLS; c++) {
        cls_column_stats whole = reference(x[c], ROWS);
        assert_column_close(&a->col[c], &whole, 1e-12);
    }
    cls_stats_destroy(a);
    cls_stats_destroy(b);
}

static void merge_of_many_chunks_equals_whole(void **state)
{
    (void)state;
    static double x[COLS][ROWS];
    make_data(x, 2);
    for (size_t c = 0; c < COLS; c++) {
        cls_column_stats acc = cls_column_empty();
        for (size_t i = 0; i < ROWS; i += 37) {
            size_t n = ROWS - i < 37 ? ROWS - i : 37;
            cls_column_stats part = reference(x[c] + i, n);
            cls_column_merge(&acc, &part, 1);
        }
        cls_column_stats whole = reference(x[c], ROWS);
        assert_column_close(&acc, &whole, 1e-12);
    }
}

static void merge_keeps_m2_accurate_when_mean_is_1e6_times_spread(void **state)
{
    (void)state;
    static double x[ROWS];
    rng r;
    rng_seed(&r, 3);
    for (size_t i = 0; i < ROWS; i++) x[i] = 1e6 + rng_normal(&r);
    cls_column_stats acc = cls_column_empty();
    for (size_t i = 0; i < ROWS; i += 100) {
        cls_column_stats part = reference(x + i, 100);
        cls_column_merge(&acc, &part, 1);
    }
    cls_column_stats whole = reference(x, ROWS);
    assert_close(acc.mean, whole.mean, 1e-15);
    assert_close(acc.m2 / whole.m2, 1.0, 1e-9);
}

static void merge_into_empty_column_copies_exactly(void **state)
{
    (void)state;
    double x[] = {0.1, 0.7, -3.3, NAN, 1e-17};
    cls_column_stats from = reference(x, 5), into = cls_column_empty();
    into.missing = 2;
    cls_column_merge(&into, &from, 1);
    from.missing += 2;
    assert_column_close(&into, &from, 0.0);
}

static void merge_from_empty_column_leaves_column_unchanged(void **state)
{
    (void)state;
    double x[] = {0.1, 0.7, -3.3, 1e-17};
    cls_column_stats into = reference(x, 4), from = cls_column_empty(), before = into;
    from.missing = 3;
    cls_column_merge(&into, &from, 1);
    before.missing += 3;
    assert_column_close(&into, &before, 0.0);
}

static void merge_of_two_empty_columns_stays_empty(void **state)
{
    (void)state;
    cls_column_stats a = cls_column_empty(), b = cls_column_empty();
    b.missing = 4;
    cls_column_merge(&a, &b, 1);
    b.missing = 4;
    assert_column_close(&a, &b, 0.0);
}

static void merge_adds_missing_counts(void **state)
{
    (void)state;
    double x[] = {1, NAN, 2, INFINITY, -INFINITY}, y[] = {NAN, 5, NAN};
    cls_column_stats a = reference(x, 5), b = reference(y, 3);
    cls_column_merge(&a, &b, 1);
    assert_int_equal(a.missing, 5);
    assert_int_equal(a.count, 3);
}

static void merge_without_moments_leaves_mean_and_m2_nan(void **state)
{
    (void)state;
    double x[] = {1, 2, 3}, y[] = {-4, 5};
    cls_column_stats a = reference(x, 3), b = reference(y, 2);
    a.mean = a.m2 = NAN;
    b.mean = b.m2 = NAN;
    cls_column_merge(&a, &b, 0);
    assert_int_equal(a.count, 5);
    assert_close(a.min, -4, 0.0);
    assert_close(a.max, 5, 0.0);
    assert_close(a.absmax, 5, 0.0);
    assert_true(isnan(a.mean) && isnan(a.m2));
}

static void stats_merge_has_moments_only_when_both_have(void **state)
{
    (void)state;
    double x[] = {1, 2, 3};
    cls_stats_info in = info_of(CLS_NONE, 1, 1);
    cls_stats *a = cls_stats_new(&in), *b = cls_stats_new(&in);
    a->col[0] = b->col[0] = reference(x, 3);
    assert_int_equal(cls_stats_merge(a, b), CLS_OK);
    assert_int_equal(a->info.has_moments, 1);
    assert_close(a->col[0].m2, 4.0, 1e-15);  /* equal means: the m2 add */
    b->info.has_moments = 0;
    b->col[0].mean = b->col[0].m2 = NAN;
    assert_int_equal(cls_stats_merge(a, b), CLS_OK);
    assert_int_equal(a->info.has_moments, 0);
    assert_true(isnan(a->col[0].mean) && isnan(a->col[0].m2));
    assert_int_equal(a->col[0].count, 9);
    cls_stats_destroy(a);
    cls_stats_destroy(b);
}

static void stats_merge_adds_rows_in_every_group(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_MINMAX, 2, 2);
    in.rows = 7;
    cls_stats *a = cls_stats_new(&in);
    in.rows = 5;
    cls_stats *b = cls_stats_new(&in);
    double x[] = {4, -1}, y[] = {9};
    b->col[3] = reference(x, 2);
    a->col[3] = reference(y, 1);
    assert_int_equal(cls_stats_merge(a, b), CLS_OK);
    assert_int_equal(a->info.rows, 12);
    assert_int_equal(a->col[3].count, 3);
    assert_close(a->col[3].min, -1, 0.0);
    assert_close(a->col[3].max, 9, 0.0);
    assert_int_equal(a->col[0].count, 0);
    cls_stats_destroy(a);
    cls_stats_destroy(b);
}

static void stats_merge_rejects_mismatched_pipelines_and_shapes(void **state)
{
    (void)state;
    cls_stats_info base = info_of(CLS_MINMAX, 2, 3);
    cls_stats *a = cls_stats_new(&base);
    for (int k = 0; k < 8; k++) {
        cls_stats_info in = base;
        switch (k) {
        case 0: in.scaler = CLS_ZSCORE; break;
        case 1: in.scope = CLS_SCOPE_BATCH; break;
        case 2: in.cols = 4; break;
        case 3: in.groups = 1; break;
        case 4: in.dtype = CLS_F32; break;
        case 5: in.lo = -1; break;
        case 6: in.hi = 2; break;
        case 7: in.clip = 1; break;
        }
        cls_stats *b = cls_stats_new(&in);
        assert_int_equal(cls_stats_merge(a, b), CLS_E_ARG);
        cls_stats_destroy(b);
    }
    assert_int_equal(cls_stats_merge(a, NULL), CLS_E_ARG);
    assert_int_equal(cls_stats_merge(NULL, a), CLS_E_ARG);
    assert_int_equal(a->info.rows, 0);
    cls_stats_destroy(a);
}

/* ---- params ---- */

static double apply(cls_params p, double x) { return (x - p.shift) * p.m + p.o; }

static cls_column_stats column_of(const double *x, size_t n) { return reference(x, n); }

static void minmax_maps_min_to_lo_and_max_to_hi(void **state)
{
    (void)state;
    double x[] = {3, -2, 8, 0.5};
    cls_column_stats c = column_of(x, 4);
    cls_params p = cls_params_of(&c, CLS_MINMAX, -1, 3, 0, CLS_F64);
    assert_close(apply(p, -2), -1, 1e-15);
    assert_close(apply(p, 8), 3, 1e-15);
    assert_close(apply(p, 3), 1, 1e-15);
}

static void minmax_constant_column_maps_to_lo(void **state)
{
    (void)state;
    double x[] = {4, 4, 4};
    cls_column_stats c = column_of(x, 3);
    cls_params p = cls_params_of(&c, CLS_MINMAX, 0.25, 1, 0, CLS_F64);
    assert_close(p.m, 0, 0.0);
    assert_close(apply(p, 4), 0.25, 0.0);
}

static void zscore_uses_population_std(void **state)
{
    (void)state;
    double x[] = {2, 4, 4, 4, 5, 5, 7, 9};  /* mean 5, population std 2 */
    cls_column_stats c = column_of(x, 8);
    cls_params p = cls_params_of(&c, CLS_ZSCORE, 0, 1, 0, CLS_F64);
    assert_close(apply(p, 9), 2, 1e-15);
    assert_close(apply(p, 5), 0, 1e-15);
    assert_close(apply(p, 2), -1.5, 1e-15);
}

static void zscore_std_0_maps_to_0(void **state)
{
    (void)state;
    double x[] = {-7, -7};
    cls_column_stats c = column_of(x, 2);
    cls_params p = cls_params_of(&c, CLS_ZSCORE, 0, 1, 0, CLS_F64);
    assert_close(p.m, 0, 0.0);
    assert_close(apply(p, -7), 0, 0.0);
}

static void decimal_divides_by_power_of_ten_above_absmax(void **state)
{
    (void)state;
    double x[] = {-345, 12, 99.5};
    cls_column_stats c = column_of(x, 3);
    cls_params p = cls_params_of(&c, CLS_DECIMAL, 0, 1, 0, CLS_F64);
    assert_close(p.m, 1e-3, 1e-15);
    assert_close(apply(p, -345), -0.345, 1e-15);
    cls_params q = cls_params_of(&c, CLS_DECIMAL, 0, 1, 1, CLS_F64);
    assert_close(q.m, 1e3, 1e-15);
}

static void inverse_undoes_forward_for_every_scaler(void **state)
{
    (void)state;
    rng r;
    rng_seed(&r, 4);
    double x[50];
    for (size_t i = 0; i < 50; i++) x[i] = 123.0 + 40.0 * rng_normal(&r);
    cls_column_stats c = column_of(x, 50);
    cls_scaler all[] = {CLS_NONE, CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
    for (size_t k = 0; k < 4; k++) {
        cls_params f = cls_params_of(&c, all[k], -2, 5, 0, CLS_F64), b = cls_params_of(&c, all[k], -2, 5, 1, CLS_F64);
        for (size_t i = 0; i < 50; i++) assert_close(apply(b, apply(f, x[i])), x[i], 1e-12);
    }
}

static void none_and_empty_columns_get_identity_params(void **state)
{
    (void)state;
    double x[] = {1, 2};
    cls_column_stats full = column_of(x, 2), empty = cls_column_empty();
    empty.missing = 5;
    cls_scaler all[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
    for (int inv = 0; inv < 2; inv++) {
        cls_params p = cls_params_of(&full, CLS_NONE, -1, 1, inv, CLS_F64);
        assert_true(p.shift == 0 && p.m == 1 && p.o == 0);
        for (size_t k = 0; k < 3; k++) {
            p = cls_params_of(&empty, all[k], -1, 1, inv, CLS_F64);
            assert_true(p.shift == 0 && p.m == 1 && p.o == 0);
        }
    }
}

static void decimal_exponent_table(void **state)
{
    (void)state;
    static const struct { double a; int j; } t[] = {
        {0, 0},      {1, 1},       {9.99, 1},    {10, 2},      {99, 2},    {100, 3},
        {0.1, 0},    {0.05, -1},   {0.0999, -1}, {0.01, -1},   {1e-300, -299},
        {1e300, 301}, {0.5, 0},    {1000, 4},    {999.9999, 3}, {1e-308, -307},
        {1.7976931348623157e308, 309}, {1.5e308, 309}, {9.9e307, 308},
        /* subnormal only: 10^-j must stay finite, so j stops at -308 */
        {9.9e-309, -308}, {4.9e-324, -308},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int j = cls_decimal_exponent(t[i].a);
        if (j != t[i].j) print_error("cls_decimal_exponent(%.17g) = %d, expected %d\n", t[i].a, j, t[i].j);
        assert_int_equal(j, t[i].j);
    }
    assert_int_equal(cls_decimal_exponent(NAN), 0);
    assert_int_equal(cls_decimal_exponent(INFINITY), 0);
    /* float32 data: j is chosen by the value stored in float. 0.01f lies just
     * below 1/100, but 0.01f * 100 rounds to 1.0f, so j = -1 (y = 0.1f);
     * the float just below 0.01f stays below one at j = -2. */
    assert_int_equal(cls_decimal_exponent_in(0.01f, CLS_F32), -1);
    assert_int_equal(cls_decimal_exponent_in(nextafterf(0.01f, 0), CLS_F32), -2);
    assert_int_equal(cls_decimal_exponent_in(0.01f, CLS_F64), -2); /* as a double it stays below */
    assert_int_equal(cls_decimal_exponent_in(100.0f, CLS_F32), 3);
    assert_int_equal(cls_decimal_exponent_in(99.99999f, CLS_F32), 2);
    /* float32 at its limits: above 1e38 the multiplier 1e-39 is subnormal
     * but finite; a subnormal-only column stops at j = -38 (10^38) */
    assert_int_equal(cls_decimal_exponent_in(FLT_MAX, CLS_F32), 39);
    assert_int_equal(cls_decimal_exponent_in(1.5e38f, CLS_F32), 39);
    assert_int_equal(cls_decimal_exponent_in(9.9e37f, CLS_F32), 38);
    assert_int_equal(cls_decimal_exponent_in(1.2e-38f, CLS_F32), -37);
    assert_int_equal(cls_decimal_exponent_in(1e-40f, CLS_F32), -38);
    assert_int_equal(cls_decimal_exponent_in(1.4e-45f, CLS_F32), -38);
    double big[] = {FLT_MAX, -2e38};
    cls_column_stats cb = column_of(big, 2);
    cls_params pb = cls_params_of(&cb, CLS_DECIMAL, 0, 1, 0, CLS_F32);
    assert_true((float)pb.m > 0);
    assert_close((float)pb.m * (float)FLT_MAX, FLT_MAX / 1e39, 1e-5);
    /* around every power of ten (the double nearest 10^k, and its
     * neighbours), j is the smallest integer whose stored quotient, computed
     * here in long double and rounded to double, is below one */
    for (int k = -20; k <= 20; k++) {
        char buf[32];
        snprintf(buf, sizeof buf, "1e%d", k);
        double p = strtod(buf, NULL);
        double around[3] = {nextafter(p, 0), p, nextafter(p, INFINITY)};
        for (int i = 0; i < 3; i++) {
            double a = around[i];
            int j = cls_decimal_exponent(a);
            double at = (double)((long double)a / powl(10.0L, j));
            double below = (double)((long double)a / powl(10.0L, j - 1));
            if (!(at < 1.0 && below >= 1.0))
                fail_msg("cls_decimal_exponent(%.17g) = %d: stored %.17g at j, %.17g at j - 1", a, j, at, below);
        }
    }
}

/* ---- files ---- */

static void save_then_load_preserves_every_field_bit_for_bit(void **state)
{
    (void)state;
    char dir[1024], path[1100];
    test_tmpdir(dir, sizeof dir, "stats-roundtrip");
    snprintf(path, sizeof path, "%s/s.clss", dir);
    cls_stats *s = sample_stats();
    assert_int_equal(cls_stats_save(s, path), CLS_OK);
    cls_stats *l = NULL;
    assert_int_equal(cls_stats_load(path, &l), CLS_OK);
    assert_non_null(l);
    assert_int_equal(l->info.scaler, s->info.scaler);
    assert_int_equal(l->info.scope, s->info.scope);
    assert_int_equal(l->info.clip, s->info.clip);
    assert_int_equal(l->info.dtype, s->info.dtype);
    assert_int_equal(l->info.groups, s->info.groups);
    assert_int_equal(l->info.cols, s->info.cols);
    assert_int_equal(l->info.rows, s->info.rows);
    assert_int_equal(l->info.has_moments, s->info.has_moments);
    assert_memory_equal(&l->info.lo, &s->info.lo, sizeof(double));
    assert_memory_equal(&l->info.hi, &s->info.hi, sizeof(double));
    for (size_t i = 0; i < 6; i++) {
        const cls_column_stats *a = &l->col[i], *e = &s->col[i];
        assert_int_equal(a->count, e->count);
        assert_int_equal(a->missing, e->missing);
        const double *av[] = {&a->min, &a->max, &a->mean, &a->m2, &a->absmax};
        const double *ev[] = {&e->min, &e->max, &e->mean, &e->m2, &e->absmax};
        for (size_t k = 0; k < 5; k++) assert_memory_equal(av[k], ev[k], sizeof(double));
    }
    cls_stats_destroy(s);
    cls_stats_destroy(l);
}

static void version_1_file_of_the_documented_bytes_still_loads(void **state)
{
    (void)state;
    /* docs/FORMAT.md's version 1 example, assembled by hand: 1 group x 2 columns. */
    static const unsigned char expected[] = {
        'C', 'L', 'S', 'S', 'T', 'A', 'T', 'S',         /*  0 magic */
        1, 0, 0, 0,                                     /*  8 version 1 */
        2, 0, 0, 0,                                     /* 12 scaler: z-score */
        0, 0, 0, 0,                                     /* 16 scope: matrix */
        1, 0, 0, 0,                                     /* 20 clip */
        0, 0, 0, 0, 0, 0, 0xf0, 0xbf,                   /* 24 lo = -1.0 */
        0, 0, 0, 0, 0, 0, 0x00, 0x40,                   /* 32 hi = 2.0 */
        0, 0, 0, 0,                                     /* 40 dtype: float32 */
        1, 0, 0, 0,                                     /* 44 has_moments */
        1, 0, 0, 0, 0, 0, 0, 0,                         /* 48 groups */
        2, 0, 0, 0, 0, 0, 0, 0,                         /* 56 cols */
        5, 0, 0, 0, 0, 0, 0, 0,                         /* 64 rows */
        4, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0,          /*  72 count */
        1, 0, 0, 0, 0, 0, 0, 0,  5, 0, 0, 0, 0, 0, 0, 0,          /*  88 missing */
        0, 0, 0, 0, 0, 0, 0x00, 0xc0,  0, 0, 0, 0, 0, 0, 0xf8, 0x7f, /* 104 min: -2, NaN */
        0, 0, 0, 0, 0, 0, 0x10, 0x40,  0, 0, 0, 0, 0, 0, 0xf8, 0x7f, /* 120 max: 4, NaN */
        0, 0, 0, 0, 0, 0, 0xe0, 0x3f,  0, 0, 0, 0, 0, 0, 0xf8, 0x7f, /* 136 mean: 0.5, NaN */
        0, 0, 0, 0, 0, 0, 0x39, 0x40,  0, 0, 0, 0, 0, 0, 0xf8, 0x7f, /* 152 m2: 25, NaN */
        0, 0, 0, 0, 0, 0, 0x10, 0x40,  0, 0, 0, 0, 0, 0, 0xf8, 0x7f, /* 168 absmax: 4, NaN */
        0x9c, 0x5e, 0x99, 0x50,                         /* 184 CRC-32 of bytes 0..183 */
    };
    char dir[1024], path[1100];
    test_tmpdir(dir, sizeof dir, "stats-v1");
    snprintf(path, sizeof path, "%s/tiny.clss", dir);
    write_bytes(path, expected, sizeof expected);
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_load(path, &s), CLS_OK);
    assert_int_equal(s->info.scaler, CLS_ZSCORE);
    assert_int_equal(s->info.clip, 1);
    assert_int_equal(s->info.dtype, CLS_F32);
    assert_int_equal(s->info.rows, 5);
    assert_int_equal(s->info.has_quantiles, 0);
    assert_true(s->info.lo == -1 && s->info.hi == 2);
    assert_int_equal(s->col[0].count, 4);
    assert_int_equal(s->col[1].missing, 5);
    assert_true(s->col[0].min == -2 && s->col[0].max == 4 && s->col[0].mean == 0.5 && s->col[0].m2 == 25);
    assert_true(isnan(s->col[0].median) && isnan(s->col[0].q_lo) && isnan(s->col[1].min));
    cls_stats_destroy(s);
}

static void saved_file_is_version_2_with_quantiles(void **state)
{
    (void)state;
    cls_stats_info in = info_of(CLS_ROBUST, 1, 2);
    in.has_quantiles = 1;
    in.qmin = 10;
    in.qmax = 90;
    in.unit_variance = 1;
    in.has_moments = 0;
    cls_stats *s = cls_stats_new(&in);
    s->col[0].count = 3;
    s->col[0].median = 1.5;
    s->col[0].q_lo = -0.25;
    s->col[0].q_hi = 4;
    char dir[1024], path[1100];
    test_tmpdir(dir, sizeof dir, "stats-v2");
    snprintf(path, sizeof path, "%s/robust.clss", dir);
    assert_int_equal(cls_stats_save(s, path), CLS_OK);
    size_t len;
    unsigned char *got = read_bytes(path, &len);
    assert_int_equal(len, 100 + 80 * 2);
    assert_int_equal(got[8], 2);   /* version */
    assert_int_equal(got[12], 4);  /* scaler: robust */
    assert_int_equal(got[72], 1);  /* has_quantiles */
    assert_int_equal(got[76], 4);  /* robust flags: unit_variance */
    free(got);
    cls_stats *l = NULL;
    assert_int_equal(cls_stats_load(path, &l), CLS_OK);
    assert_int_equal(l->info.scaler, CLS_ROBUST);
    assert_int_equal(l->info.has_quantiles, 1);
    assert_int_equal(l->info.unit_variance, 1);
    assert_int_equal(l->info.no_centering, 0);
    assert_true(l->info.qmin == 10 && l->info.qmax == 90);
    assert_true(l->col[0].median == 1.5 && l->col[0].q_lo == -0.25 && l->col[0].q_hi == 4);
    assert_true(isnan(l->col[1].median));
    cls_stats_destroy(l);
    cls_stats_destroy(s);
}

static void save_replaces_a_file_and_leaves_no_temp_file(void **state)
{
    (void)state;
    char dir[1024], path[1100];
    test_tmpdir(dir, sizeof dir, "stats-replace");
    snprintf(path, sizeof path, "%s/s.clss", dir);
    write_bytes(path, (const unsigned char *)"old", 3);
    cls_stats *s = sample_stats();
    assert_int_equal(cls_stats_save(s, path), CLS_OK);
    cls_stats *l = NULL;
    assert_int_equal(cls_stats_load(path, &l), CLS_OK);
    cls_stats_destroy(l);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    assert_int_equal(n, 1);
    cls_stats_destroy(s);
}

static void save_to_missing_folder_is_io_error(void **state)
{
    (void)state;
    char dir[1024], path[1100];
    test_tmpdir(dir, sizeof dir, "stats-nofolder");
    snprintf(path, sizeof path, "%s/no/such/folder/s.clss", dir);
    cls_stats *s = sample_stats();
    assert_int_equal(cls_stats_save(s, path), CLS_E_IO);
    assert_non_null(strstr(cls_last_error(NULL), path));
    assert_non_null(strstr(cls_last_error(NULL), strerror(ENOENT)));
    cls_stats_destroy(s);
}

static void load_missing_file_is_io_error(void **state)
{
    (void)state;
    char dir[1024], path[1100];
    test_tmpdir(dir, sizeof dir, "stats-missing");
    snprintf(path, sizeof path, "%s/none.clss", dir);
    cls_stats *s = (cls_stats *)1;
    assert_int_equal(cls_stats_load(path, &s), CLS_E_IO);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(NULL), path));
    assert_non_null(strstr(cls_last_error(NULL), strerror(ENOENT)));
}

/* Saves the sample into `path` and returns its bytes. */
static unsigned char *sample_file(const char *name, char *path, size_t plen, size_t *len)
{
    char dir[1024];
    test_tmpdir(dir, sizeof dir, name);
    snprintf(path, plen, "%s/s.clss", dir);
    cls_stats *s = sample_stats();
    assert_int_equal(cls_stats_save(s, path), CLS_OK);
    cls_stats_destroy(s);
    return read_bytes(path, len);
}

static void store_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void reseal(unsigned char *buf, size_t len) { store_u32(buf + len - 4, cls_crc32(0, buf, len - 4)); }

static void load_rejects_empty_file(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    free(sample_file("stats-empty", path, sizeof path, &len));
    write_bytes(path, NULL, 0);
    assert_load_format_error(path);
}

static void load_rejects_wrong_magic(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    unsigned char *buf = sample_file("stats-magic", path, sizeof path, &len);
    memcpy(buf, "CLSSTATZ", 8);
    reseal(buf, len);
    write_bytes(path, buf, len);
    assert_load_format_error(path);
    assert_non_null(strstr(cls_last_error(NULL), "not a clscale stats file"));
    free(buf);
}

static void load_rejects_newer_version(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    unsigned char *buf = sample_file("stats-version", path, sizeof path, &len);
    store_u32(buf + 8, 7);
    reseal(buf, len);
    write_bytes(path, buf, len);
    assert_load_format_error(path);
    assert_non_null(strstr(cls_last_error(NULL), "format version 7; this clscale reads version 2"));
    free(buf);
}

static void load_rejects_enum_values_out_of_range(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    unsigned char *buf = sample_file("stats-enum", path, sizeof path, &len);
    /* scaler, scope, clip, dtype, has_moments */
    const size_t at[] = {12, 16, 20, 40, 44};
    for (size_t k = 0; k < 5; k++) {
        unsigned char save[4];
        memcpy(save, buf + at[k], 4);
        store_u32(buf + at[k], 99);
        reseal(buf, len);
        write_bytes(path, buf, len);
        assert_load_format_error(path);
        memcpy(buf + at[k], save, 4);
    }
    free(buf);
}

static void load_rejects_truncation_at_every_length(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    unsigned char *buf = sample_file("stats-trunc", path, sizeof path, &len);
    for (size_t cut = 1; cut < len; cut++) {
        write_bytes(path, buf, cut);
        assert_load_format_error(path);
    }
    free(buf);
}

static void load_rejects_a_trailing_byte(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    unsigned char *buf = sample_file("stats-trailing", path, sizeof path, &len);
    unsigned char *more = calloc(len + 1, 1);
    memcpy(more, buf, len);
    write_bytes(path, more, len + 1);
    assert_load_format_error(path);
    assert_non_null(strstr(cls_last_error(NULL), "trailing"));
    free(more);
    free(buf);
}

static void load_rejects_one_flipped_byte_anywhere(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    unsigned char *buf = sample_file("stats-flip", path, sizeof path, &len);
    for (size_t i = 0; i < len; i++) {
        buf[i] ^= 0x10;
        write_bytes(path, buf, len);
        assert_load_format_error(path);
        buf[i] ^= 0x10;
    }
    /* a flip in the data itself is caught by the checksum */
    buf[len / 2] ^= 1;
    write_bytes(path, buf, len);
    assert_load_format_error(path);
    assert_non_null(strstr(cls_last_error(NULL), "corrupted: checksum mismatch"));
    free(buf);
}

static void load_rejects_huge_group_count_in_small_file(void **state)
{
    (void)state;
    char path[1100];
    size_t len;
    unsigned char *buf = sample_file("stats-huge", path, sizeof path, &len);
    const uint64_t huge[][2] = {{1ull << 40, 3}, {1ull << 62, 1ull << 62}, {UINT64_MAX, 1}};
    for (size_t k = 0; k < 3; k++) {
        for (int i = 0; i < 8; i++) {
            buf[48 + i] = (unsigned char)(huge[k][0] >> (8 * i));
            buf[56 + i] = (unsigned char)(huge[k][1] >> (8 * i));
        }
        reseal(buf, len);
        write_bytes(path, buf, len);
        assert_load_format_error(path);
    }
    free(buf);
}

static void load_rejects_a_folder_with_io_error(void **state)
{
    (void)state;
    char dir[1024];
    test_tmpdir(dir, sizeof dir, "stats-folder");
    cls_stats *s = NULL;
    assert_int_equal(cls_stats_load(dir, &s), CLS_E_IO);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(NULL), dir));
}

static void save_and_load_reject_null_arguments(void **state)
{
    (void)state;
    cls_stats *s = sample_stats(), *l = NULL;
    assert_int_equal(cls_stats_save(NULL, "/tmp/x"), CLS_E_ARG);
    assert_int_equal(cls_stats_save(s, NULL), CLS_E_ARG);
    assert_int_equal(cls_stats_load(NULL, &l), CLS_E_ARG);
    assert_int_equal(cls_stats_load("/tmp/x", NULL), CLS_E_ARG);
    cls_stats_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_column_has_count_0_and_nan_values),
        cmocka_unit_test(new_stats_are_all_empty),
        cmocka_unit_test(new_stats_with_overflowing_shape_is_null),
        cmocka_unit_test(columns_table_and_describe_reject_null),
        cmocka_unit_test(destroy_null_is_a_no_op),
        cmocka_unit_test(merge_of_halves_equals_whole),
        cmocka_unit_test(merge_of_many_chunks_equals_whole),
        cmocka_unit_test(merge_keeps_m2_accurate_when_mean_is_1e6_times_spread),
        cmocka_unit_test(merge_into_empty_column_copies_exactly),
        cmocka_unit_test(merge_from_empty_column_leaves_column_unchanged),
        cmocka_unit_test(merge_of_two_empty_columns_stays_empty),
        cmocka_unit_test(merge_adds_missing_counts),
        cmocka_unit_test(merge_without_moments_leaves_mean_and_m2_nan),
        cmocka_unit_test(stats_merge_has_moments_only_when_both_have),
        cmocka_unit_test(stats_merge_adds_rows_in_every_group),
        cmocka_unit_test(stats_merge_rejects_mismatched_pipelines_and_shapes),
        cmocka_unit_test(minmax_maps_min_to_lo_and_max_to_hi),
        cmocka_unit_test(minmax_constant_column_maps_to_lo),
        cmocka_unit_test(zscore_uses_population_std),
        cmocka_unit_test(zscore_std_0_maps_to_0),
        cmocka_unit_test(decimal_divides_by_power_of_ten_above_absmax),
        cmocka_unit_test(inverse_undoes_forward_for_every_scaler),
        cmocka_unit_test(none_and_empty_columns_get_identity_params),
        cmocka_unit_test(decimal_exponent_table),
        cmocka_unit_test(save_then_load_preserves_every_field_bit_for_bit),
        cmocka_unit_test(version_1_file_of_the_documented_bytes_still_loads),
        cmocka_unit_test(saved_file_is_version_2_with_quantiles),
        cmocka_unit_test(save_replaces_a_file_and_leaves_no_temp_file),
        cmocka_unit_test(save_to_missing_folder_is_io_error),
        cmocka_unit_test(save_and_load_reject_null_arguments),
        cmocka_unit_test(load_missing_file_is_io_error),
        cmocka_unit_test(load_rejects_a_folder_with_io_error),
        cmocka_unit_test(load_rejects_empty_file),
        cmocka_unit_test(load_rejects_wrong_magic),
        cmocka_unit_test(load_rejects_newer_version),
        cmocka_unit_test(load_rejects_enum_values_out_of_range),
        cmocka_unit_test(load_rejects_truncation_at_every_length),
        cmocka_unit_test(load_rejects_a_trailing_byte),
        cmocka_unit_test(load_rejects_one_flipped_byte_anywhere),
        cmocka_unit_test(load_rejects_huge_group_count_in_small_file),
    };
    return TEST_RUN("stats", tests, NULL, NULL);
}
