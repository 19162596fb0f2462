/* The benchmark's host side (tools/bench/bench_{data,ref,stream,threads}.c): workload shapes and sizes,
 * seeded data, both host references against hand-checked values and against
 * each other, the error measure, STREAM and the machine's description. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "bench.h"

static const bench_workload *find(const bench_workload *ws, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ws[i].name, name) == 0) return &ws[i];
    fail_msg("no workload %s", name);
    return NULL;
}

static size_t esize(const bench_workload *w) { return w->dtype == CLS_F64 ? 8 : 4; }

static double get(const bench_workload *w, const void *p, size_t i)
{
    return w->dtype == CLS_F64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

static void set(const bench_workload *w, void *p, size_t i, double v)
{
    if (w->dtype == CLS_F64) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
}

static void check_shape(const bench_workload *w, bench_kind kind, cls_dtype t, size_t batch,
                        size_t rows, size_t cols, size_t frows, size_t fcols)
{
    assert_int_equal(w->kind, kind);
    assert_int_equal(w->dtype, t);
    assert_int_equal(w->batch, batch);
    assert_int_equal(w->rows, rows);
    assert_int_equal(w->cols, cols);
    assert_int_equal(w->frows, frows);
    assert_int_equal(w->fcols, fcols);
    assert_non_null(w->description);
    assert_true(strlen(w->description) > 0);
}

static void workloads_are_the_users_shapes_at_size_1(void **state)
{
    (void)state;
    bench_workload ws[8];
    size_t n = bench_workloads(1.0, ws, 8);
    assert_int_equal(n, 4);
    check_shape(find(ws, n, "seed-a"), BENCH_MINMAX_MATRIX, CLS_F64, 18, 60, 98450, 0, 0);
    check_shape(find(ws, n, "seed-b"), BENCH_DISCOUNT, CLS_F64, 100, 4000, 5, 4000, 5);
    check_shape(find(ws, n, "seed-b-large"), BENCH_DISCOUNT, CLS_F64, 20, 1000000, 5, 1000000, 5);
    check_shape(find(ws, n, "table"), BENCH_ZSCORE_BATCH, CLS_F32, 1, 2000000, 8, 0, 0);
}

static void size_scales_the_first_dimension_that_is_not_1(void **state)
{
    (void)state;
    bench_workload ws[4];
    size_t n = bench_workloads(2.0, ws, 4);
    assert_int_equal(n, 4);
    check_shape(find(ws, n, "seed-a"), BENCH_MINMAX_MATRIX, CLS_F64, 36, 60, 98450, 0, 0);
    check_shape(find(ws, n, "seed-b"), BENCH_DISCOUNT, CLS_F64, 200, 4000, 5, 4000, 5);
    check_shape(find(ws, n, "seed-b-large"), BENCH_DISCOUNT, CLS_F64, 40, 1000000, 5, 1000000, 5);
    check_shape(find(ws, n, "table"), BENCH_ZSCORE_BATCH, CLS_F32, 1, 4000000, 8, 0, 0);

    n = bench_workloads(0.5, ws, 4);
    check_shape(find(ws, n, "seed-a"), BENCH_MINMAX_MATRIX, CLS_F64, 9, 60, 98450, 0, 0);
    check_shape(find(ws, n, "seed-b"), BENCH_DISCOUNT, CLS_F64, 50, 4000, 5, 4000, 5);
    check_shape(find(ws, n, "seed-b-large"), BENCH_DISCOUNT, CLS_F64, 10, 1000000, 5, 1000000, 5);
    check_shape(find(ws, n, "table"), BENCH_ZSCORE_BATCH, CLS_F32, 1, 1000000, 8, 0, 0);

    /* 18 x 0.02 rounds to 0: at least 1. */
    n = bench_workloads(0.02, ws, 4);
    assert_int_equal(find(ws, n, "seed-a")->batch, 1);
    assert_int_equal(find(ws, n, "seed-b")->batch, 2);
    assert_int_equal(find(ws, n, "seed-b-large")->batch, 1);
    assert_int_equal(find(ws, n, "table")->rows, 40000);
    n = bench_workloads(0.0, ws, 4);
    for (size_t i = 0; i < n; i++) assert_true(ws[i].batch >= 1 && ws[i].rows >= 1);
}

static void workloads_never_write_past_cap(void **state)
{
    (void)state;
    bench_workload ws[3];
    memset(ws, 0, sizeof ws);
    assert_int_equal(bench_workloads(1.0, ws, 2), 2);
    assert_null(ws[2].name);
    assert_int_equal(bench_workloads(1.0, NULL, 0), 0);
}

static void bytes_count_input_output_and_factors_once(void **state)
{
    (void)state;
    bench_workload ws[4];
    size_t n = bench_workloads(1.0, ws, 4);
    const bench_workload *a = find(ws, n, "seed-a"), *b = find(ws, n, "seed-b");
    const bench_workload *bl = find(ws, n, "seed-b-large"), *t = find(ws, n, "table");
    assert_int_equal(bench_elements(a), (size_t)18 * 60 * 98450);
    assert_int_equal(bench_bytes(a), 2ull * 18 * 60 * 98450 * 8);
    assert_int_equal(bench_bytes(b), 2ull * 100 * 4000 * 5 * 8 + 4000ull * 5 * 8);
    assert_int_equal(bench_bytes(bl), 2ull * 20 * 1000000 * 5 * 8 + 1000000ull * 5 * 8);
    assert_int_equal(bench_elements(t), (size_t)2000000 * 8);
    assert_int_equal(bench_bytes(t), 2ull * 2000000 * 8 * 4);
}

static void pipeline_is_what_clscale_runs(void **state)
{
    (void)state;
    bench_workload ws[4];
    size_t n = bench_workloads(1.0, ws, 4);
    cls_array f = {.data = NULL, .dtype = CLS_F64, .batch = 1, .rows = 4000, .cols = 5};
    cls_pipeline p = bench_pipeline(find(ws, n, "seed-a"), NULL);
    assert_int_equal(p.scaler, CLS_MINMAX);
    assert_int_equal(p.scope, CLS_SCOPE_MATRIX);
    assert_close(p.lo, 0.0, 0.0);
    assert_close(p.hi, 1.0, 0.0);
    assert_false(p.clip);
    assert_false(p.inverse);
    assert_null(p.factors);
    p = bench_pipeline(find(ws, n, "seed-b"), &f);
    assert_int_equal(p.scaler, CLS_NONE);
    assert_ptr_equal(p.factors, &f);
    p = bench_pipeline(find(ws, n, "table"), NULL);
    assert_int_equal(p.scaler, CLS_ZSCORE);
    assert_int_equal(p.scope, CLS_SCOPE_BATCH);
    assert_null(p.factors);
}

/* ---- data --------------------------------------------------------------- */

static void fill_is_deterministic_and_seed_dependent(void **state)
{
    (void)state;
    bench_workload w = {"t", "t", BENCH_DISCOUNT, CLS_F64, 3, 50, 13, 50, 13};
    size_t n = bench_elements(&w), nf = w.frows * w.fcols;
    double *x1 = malloc(n * 8), *x2 = malloc(n * 8), *f1 = malloc(nf * 8), *f2 = malloc(nf * 8);
    bench_fill(&w, x1, f1, 7);
    bench_fill(&w, x2, f2, 7);
    assert_memory_equal(x1, x2, n * 8);
    assert_memory_equal(f1, f2, nf * 8);
    bench_fill(&w, x2, f2, 8);
    assert_memory_not_equal(x1, x2, n * 8);
    assert_memory_not_equal(f1, f2, nf * 8);
    for (size_t i = 0; i < nf; i++) assert_true(f1[i] >= 0.5 && f1[i] < 1.5);
    for (size_t i = 0; i < n; i++) {
        size_t c = i % w.cols;
        assert_true(x1[i] >= -(double)(c % 7 + 1) * 10 && x1[i] < (double)(c % 11 + 2) * 25);
    }
    /* Without factors, x is the same. */
    bench_fill(&w, x2, NULL, 7);
    assert_memory_equal(x1, x2, n * 8);
    /* Fixed values: the same numbers on every machine (every product in the
     * generator is exact, so fused multiply-add cannot change them). */
    assert_true(x1[0] == 0x1.0046d68f2p+5);
    assert_true(x1[n - 1] == 0x1.1d53f62734p+6);
    assert_true(f1[nf - 1] == 0x1.2c368dbep+0);
    bench_workload z = {"table", "t", BENCH_ZSCORE_BATCH, CLS_F32, 1, 3, 8, 0, 0};
    float zx[24];
    bench_fill(&z, zx, NULL, 7);
    assert_true(zx[0] == 0x1.94c12ep+6f);
    assert_true(zx[23] == 0x1.5bdda2p+7f);
    free(x1);
    free(x2);
    free(f1);
    free(f2);
}

static void fill_gives_table_columns_their_mean_and_sd(void **state)
{
    (void)state;
    bench_workload w = {"table", "t", BENCH_ZSCORE_BATCH, CLS_F32, 1, 40000, 8, 0, 0};
    float *x = malloc(bench_elements(&w) * sizeof *x);
    bench_fill(&w, x, NULL, 1);
    for (size_t c = 0; c < w.cols; c++) {
        double s = 0, ss = 0;
        for (size_t r = 0; r < w.rows; r++) s += x[r * w.cols + c];
        double mean = s / (double)w.rows;
        for (size_t r = 0; r < w.rows; r++) ss += (x[r * w.cols + c] - mean) * (x[r * w.cols + c] - mean);
        double sd = sqrt(ss / (double)w.rows), want_sd = 1.0 + (double)c / 4.0;
        assert_close(mean, 100.0 + 10.0 * (double)c, 0.05 * want_sd / (100.0 + 10.0 * (double)c));
        assert_close(sd, want_sd, 0.03);
    }
    free(x);
}

/* ---- hand-checked values ------------------------------------------------ */

static const unsigned thread_counts[] = {0, 1, 2, 3, 7};

/* Runs single and every thread count on x; each result must be `want`. */
static void expect(const bench_workload *w, const double *x, const double *f, const double *want,
                   double tol)
{
    size_t n = bench_elements(w), nf = w->frows * w->fcols;
    void *xi = malloc(n * esize(w)), *fi = nf ? malloc(nf * esize(w)) : NULL, *y = malloc(n * esize(w));
    for (size_t i = 0; i < n; i++) set(w, xi, i, x[i]);
    for (size_t i = 0; i < nf; i++) set(w, fi, i, f[i]);
    for (size_t k = 0; k <= sizeof thread_counts / sizeof thread_counts[0]; k++) {
        memset(y, 0x5a, n * esize(w));
        if (k == 0) bench_ref_single(w, xi, fi, y);
        else bench_ref_threads(w, xi, fi, y, thread_counts[k - 1]);
        for (size_t i = 0; i < n; i++) assert_close(get(w, y, i), want[i], tol);
    }
    free(xi);
    free(fi);
    free(y);
}

static void minmax_hand_checked_1x3x2(void **state)
{
    (void)state;
    bench_workload w = {"m", "m", BENCH_MINMAX_MATRIX, CLS_F64, 1, 3, 2, 0, 0};
    const double x[] = {1, 10, 3, 20, 2, 40};
    const double want[] = {0, 0, 1, 1.0 / 3.0, 0.5, 1};
    expect(&w, x, NULL, want, 1e-15);
}

static void minmax_has_statistics_per_matrix(void **state)
{
    (void)state;
    bench_workload w = {"m", "m", BENCH_MINMAX_MATRIX, CLS_F32, 2, 2, 1, 0, 0};
    const double x[] = {0, 4, 100, 101};
    const double want[] = {0, 1, 0, 1};
    expect(&w, x, NULL, want, 0.0);
}

static void minmax_constant_column_maps_to_lo(void **state)
{
    (void)state;
    bench_workload w = {"m", "m", BENCH_MINMAX_MATRIX, CLS_F64, 1, 3, 2, 0, 0};
    const double x[] = {5, 1, 5, 2, 5, 3};
    const double want[] = {0, 0, 0, 0.5, 0, 1};
    expect(&w, x, NULL, want, 1e-15);
}

static void minmax_ignores_and_passes_through_missing_values(void **state)
{
    (void)state;
    bench_workload w = {"m", "m", BENCH_MINMAX_MATRIX, CLS_F64, 1, 4, 2, 0, 0};
    const double x[] = {NAN, 1, 2, INFINITY, 4, -INFINITY, 6, 3};
    const double want[] = {NAN, 0, 0, INFINITY, 0.5, -INFINITY, 1, 1};
    expect(&w, x, NULL, want, 1e-15);
}

static void minmax_nan_alone_is_ignored_and_passed_through(void **state)
{
    (void)state;
    /* No infinity: the threaded reference's fast path, whose NaN handling is
     * by arithmetic. Column 1 is missing entirely. */
    bench_workload w = {"m", "m", BENCH_MINMAX_MATRIX, CLS_F64, 1, 3, 2, 0, 0};
    const double x[] = {1, NAN, NAN, NAN, 3, NAN};
    const double want[] = {0, NAN, NAN, NAN, 1, NAN};
    expect(&w, x, NULL, want, 0.0);
}

static void discount_multiplies_by_factors_of_each_row(void **state)
{
    (void)state;
    bench_workload w = {"d", "d", BENCH_DISCOUNT, CLS_F64, 2, 2, 3, 2, 3};
    const double x[] = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
    const double f[] = {0.5, 1, 2, 0.25, 3, 1.5};
    const double want[] = {0.5, 2, 6, 1, 15, 9, 5, 20, 60, 10, 150, 90};
    expect(&w, x, f, want, 1e-15);
}

static void discount_broadcasts_a_single_factor_row(void **state)
{
    (void)state;
    bench_workload w = {"d", "d", BENCH_DISCOUNT, CLS_F64, 1, 2, 2, 1, 2};
    const double x[] = {1, 2, 3, 4}, f[] = {10, 100}, want[] = {10, 200, 30, 400};
    expect(&w, x, f, want, 0.0);
}

static void zscore_hand_checked_over_the_whole_batch(void **state)
{
    (void)state;
    /* Two matrices of 2 x 2 share statistics: column 0 is 1, 2, 3, 4
     * (mean 2.5, population sd sqrt(1.25)), column 1 is constant. */
    bench_workload w = {"z", "z", BENCH_ZSCORE_BATCH, CLS_F32, 2, 2, 2, 0, 0};
    const double x[] = {1, 7, 2, 7, 3, 7, 4, 7};
    double sd = sqrt(1.25);
    const double want[] = {-1.5 / sd, 0, -0.5 / sd, 0, 0.5 / sd, 0, 1.5 / sd, 0};
    expect(&w, x, NULL, want, 1e-7);
}

static void zscore_ignores_and_passes_through_missing_values(void **state)
{
    (void)state;
    bench_workload w = {"z", "z", BENCH_ZSCORE_BATCH, CLS_F64, 1, 5, 1, 0, 0};
    const double x[] = {1, NAN, 3, INFINITY, 5};
    double sd = sqrt(8.0 / 3.0);
    const double want[] = {-2 / sd, NAN, 0, INFINITY, 2 / sd};
    expect(&w, x, NULL, want, 1e-15);
}

static void zscore_leaves_an_all_missing_column_missing(void **state)
{
    (void)state;
    bench_workload w = {"z", "z", BENCH_ZSCORE_BATCH, CLS_F32, 1, 3, 2, 0, 0};
    const double x[] = {NAN, 5, -INFINITY, 5, NAN, 5};
    const double want[] = {NAN, 0, -INFINITY, 0, NAN, 0};
    expect(&w, x, NULL, want, 0.0);
}

static void zscore_is_stable_when_the_mean_dwarfs_the_spread(void **state)
{
    (void)state;
    bench_workload w = {"z", "z", BENCH_ZSCORE_BATCH, CLS_F64, 1, 4, 1, 0, 0};
    const double x[] = {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4};
    double sd = sqrt(1.25);
    const double want[] = {-1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd};
    expect(&w, x, NULL, want, 1e-12);
}

/* ---- single against threads --------------------------------------------- */

/* Fills w, optionally plants missing values, and checks that every thread
 * count gives what the single-threaded reference gives. */
static void agree(const bench_workload *w, int missing)
{
    size_t n = bench_elements(w), nf = w->frows * w->fcols;
    void *x = malloc(n * esize(w)), *f = nf ? malloc(nf * esize(w)) : NULL;
    void *y1 = malloc(n * esize(w)), *yt = malloc(n * esize(w));
    assert_true(x && y1 && yt && (f || !nf));
    bench_fill(w, x, f, 2024);
    if (missing) {
        rng r;
        rng_seed(&r, 5);
        const double odd[] = {NAN, INFINITY, -INFINITY};
        for (size_t k = 0; k < n / 50 + 1; k++) set(w, x, rng_next(&r) % n, odd[k % 3]);
        /* A whole column missing, and a constant one. */
        if (w->cols > 2)
            for (size_t r0 = 0; r0 < w->batch * w->rows; r0++) {
                set(w, x, r0 * w->cols + 1, NAN);
                set(w, x, r0 * w->cols + 2, 42.0);
            }
    }
    bench_ref_single(w, x, f, y1);
    /* float32 outputs: the same double up to merge order may round to the
     * neighbouring float, so allow one float ulp there. */
    double tol = w->dtype == CLS_F64 ? 1e-12 : 1.2e-7;
    for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; k++) {
        memset(yt, 0x5a, n * esize(w));
        bench_ref_threads(w, x, f, yt, thread_counts[k]);
        double e = bench_max_error(w, yt, y1);
        if (!(e <= tol))
            fail_msg("%s %zu x %zu x %zu, %u threads: error %g", w->name, w->batch, w->rows, w->cols,
                     thread_counts[k], e);
    }
    if (missing) {
        for (size_t i = 0; i < n; i++) {
            double v = get(w, x, i);
            if (!isfinite(v) && w->kind != BENCH_DISCOUNT) {
                if (isnan(v)) assert_true(isnan(get(w, y1, i)));
                else assert_true(get(w, y1, i) == v);
            }
        }
    }
    free(x);
    free(f);
    free(y1);
    free(yt);
}

static void threads_agree_with_single_on_every_workload(void **state)
{
    (void)state;
    bench_workload ws[4];
    size_t n = bench_workloads(0.02, ws, 4);
    for (size_t i = 0; i < n; i++) {
        bench_workload w = ws[i];
        /* Small enough for a test, several cache blocks and row tiles still. */
        if (w.kind == BENCH_MINMAX_MATRIX) w.cols = 3001;
        if (w.kind == BENCH_DISCOUNT && w.rows > 20000) w.rows = w.frows = 20011;
        if (w.kind == BENCH_ZSCORE_BATCH) w.rows = 5003;
        agree(&w, 0);
        agree(&w, 1);
    }
}

static void threads_agree_with_single_on_odd_shapes(void **state)
{
    (void)state;
    const bench_workload shapes[] = {
        /* one column, fewer columns than a chunk, more threads than blocks */
        {"m1", "", BENCH_MINMAX_MATRIX, CLS_F64, 3, 5, 1, 0, 0},
        {"m2", "", BENCH_MINMAX_MATRIX, CLS_F64, 2, 7, 5, 0, 0},
        {"m3", "", BENCH_MINMAX_MATRIX, CLS_F32, 4, 60, 1037, 0, 0},
        {"m4", "", BENCH_MINMAX_MATRIX, CLS_F64, 1, 2000, 67, 0, 0},
        {"m5", "", BENCH_MINMAX_MATRIX, CLS_F64, 2, 1, 3000, 0, 0},
        {"d1", "", BENCH_DISCOUNT, CLS_F64, 3, 1, 5, 1, 5},
        {"d2", "", BENCH_DISCOUNT, CLS_F32, 5, 3001, 3, 3001, 3},
        {"d3", "", BENCH_DISCOUNT, CLS_F64, 4, 17, 6, 1, 6},
        {"d4", "", BENCH_DISCOUNT, CLS_F64, 4, 17, 6, 17, 1},
        {"z1", "", BENCH_ZSCORE_BATCH, CLS_F32, 3, 7, 1, 0, 0},
        {"z2", "", BENCH_ZSCORE_BATCH, CLS_F64, 2, 331, 11, 0, 0},
        {"z3", "", BENCH_ZSCORE_BATCH, CLS_F64, 1, 50, 1500, 0, 0},
        {"z4", "", BENCH_ZSCORE_BATCH, CLS_F32, 1, 2, 3, 0, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        agree(&shapes[i], 0);
        agree(&shapes[i], 1);
    }
}

/* ---- error and tolerance ------------------------------------------------ */

static void max_error_is_relative_and_nan_aware(void **state)
{
    (void)state;
    bench_workload w = {"e", "e", BENCH_MINMAX_MATRIX, CLS_F64, 1, 2, 3, 0, 0};
    double a[6] = {1, 2, NAN, 1000, -0.5, INFINITY}, b[6];
    memcpy(b, a, sizeof a);
    assert_close(bench_max_error(&w, a, b), 0.0, 0.0);
    b[3] = 1000.5;   /* 0.5 / 1000.5 */
    b[4] = -0.25;    /* 0.25 / max(1, 0.25) */
    assert_close(bench_max_error(&w, a, b), 0.25, 1e-15);
    b[4] = -0.5;
    assert_close(bench_max_error(&w, a, b), 0.5 / 1000.5, 1e-15);
    b[2] = 3;
    assert_true(isinf(bench_max_error(&w, a, b)));
    b[2] = NAN;
    a[0] = NAN;
    assert_true(isinf(bench_max_error(&w, a, b)));
    a[0] = 1;
    b[5] = 7;
    assert_true(isinf(bench_max_error(&w, a, b)));

    bench_workload w32 = {"e", "e", BENCH_ZSCORE_BATCH, CLS_F32, 1, 1, 2, 0, 0};
    float c[2] = {1, 2}, d[2] = {1, 2.5f};
    assert_close(bench_max_error(&w32, c, d), 0.2, 1e-7);
    assert_close(bench_tolerance(&w), 1e-9, 0.0);
    assert_close(bench_tolerance(&w32), 2e-5, 0.0);
}

/* ---- the machine -------------------------------------------------------- */

static void stream_gives_finite_positive_bandwidth(void **state)
{
    (void)state;
    const unsigned threads[] = {1, 2, 0};
    for (size_t i = 0; i < 3; i++) {
        double c = bench_stream_copy(1 << 20, threads[i], 3);
        double t = bench_stream_triad(1 << 20, threads[i], 3);
        assert_true(isfinite(c) && c > 0.0);
        assert_true(isfinite(t) && t > 0.0);
    }
    double tiny = bench_stream_copy(1, 3, 0);   /* one element, more threads than elements */
    assert_true(isfinite(tiny) && tiny > 0.0);
}

static void cpu_model_and_count_are_known(void **state)
{
    (void)state;
    char buf[256];
    bench_cpu_model(buf, sizeof buf);
    assert_true(strlen(buf) > 0);
    assert_null(strchr(buf, '\n'));
    char small[4];
    bench_cpu_model(small, sizeof small);
    assert_true(strlen(small) <= 3);
    assert_true(bench_cpus() >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workloads_are_the_users_shapes_at_size_1),
        cmocka_unit_test(size_scales_the_first_dimension_that_is_not_1),
        cmocka_unit_test(workloads_never_write_past_cap),
        cmocka_unit_test(bytes_count_input_output_and_factors_once),
        cmocka_unit_test(pipeline_is_what_clscale_runs),
        cmocka_unit_test(fill_is_deterministic_and_seed_dependent),
        cmocka_unit_test(fill_gives_table_columns_their_mean_and_sd),
        cmocka_unit_test(minmax_hand_checked_1x3x2),
        cmocka_unit_test(minmax_has_statistics_per_matrix),
        cmocka_unit_test(minmax_constant_column_maps_to_lo),
        cmocka_unit_test(minmax_ignores_and_passes_through_missing_values),
        cmocka_unit_test(minmax_nan_alone_is_ignored_and_passed_through),
        cmocka_unit_test(discount_multiplies_by_factors_of_each_row),
        cmocka_unit_test(discount_broadcasts_a_single_factor_row),
        cmocka_unit_test(zscore_hand_checked_over_the_whole_batch),
        cmocka_unit_test(zscore_ignores_and_passes_through_missing_values),
        cmocka_unit_test(zscore_leaves_an_all_missing_column_missing),
        cmocka_unit_test(zscore_is_stable_when_the_mean_dwarfs_the_spread),
        cmocka_unit_test(threads_agree_with_single_on_every_workload),
        cmocka_unit_test(threads_agree_with_single_on_odd_shapes),
        cmocka_unit_test(max_error_is_relative_and_nan_aware),
        cmocka_unit_test(stream_gives_finite_positive_bandwidth),
        cmocka_unit_test(cpu_model_and_count_are_known),
    };
    return TEST_RUN("bench_host", tests, NULL, NULL);
}
