/* A cleaning stage streamed over groups larger than a buffer, ahead of a
 * scaler that does not fuse with it (robust scaling; z-score after clamped
 * clipping; discount factors): the cleaning's passes write the output,
 * then the rest of the pipeline rewrites it in place (stream.c). The
 * in-memory call's bytes and statistics where its decisions are exact
 * (counts, medians, quantiles), within the rounding of merged moments
 * elsewhere; progress that only grows and ends at its total; and a peak
 * resident memory that grows by the pool, not by the file. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static cls_context *ctx;
static char dir[4096];

typedef struct prog {
    uint64_t done, total, calls;
    int      back;  /* done went back, or passed total */
} prog;

static prog pr;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    prog *p = user;
    if (done < p->done || done > total) p->back = 1;
    p->done = done;
    p->total = total;
    p->calls++;
}

static int group_setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "stream_clean_scaler");
    cls_config cfg = {0};
    cfg.progress = on_progress;
    cfg.progress_user = &pr;
    return cls_context_create(&cfg, &ctx) == CLS_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    cls_context_destroy(ctx);
    return 0;
}

static int runs(cls_dtype t) { return t == CLS_F32 || !test_suite_is("rusticl"); }
static size_t es_of(cls_dtype t) { return t == CLS_F64 ? 8 : 4; }
static size_t bytes_of(const cls_array *x) { return x->batch * x->rows * x->cols * es_of(x->dtype); }

static const char *path(const char *name)
{
    static char ring[8][4400];
    static unsigned next;
    char *b = ring[next++ % 8];
    snprintf(b, sizeof ring[0], "%s/%s", dir, name);
    return b;
}

/* Seeded: normal columns with outliers, NaN, +-Inf, a constant column and
 * an all-missing one. */
static cls_array data(cls_dtype t, size_t b, size_t r, size_t c, uint64_t seed)
{
    cls_array a = {.data = malloc(b * r * c * es_of(t)), .dtype = t, .batch = b, .rows = r, .cols = c};
    assert_non_null(a.data);
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < b * r * c; i++) {
        size_t col = i % c;
        double v = rng_normal(&g) * 2.0 + 50.0 * (double)col;
        if (i % 53 == 9) v += 40.0;
        if (col == 1) v = -3.25;
        if (c > 3 && col == 3) v = NAN;
        if (i % 97 == 5) v = NAN;
        if (i % 131 == 7) v = i % 2 ? INFINITY : -INFINITY;
        if (t == CLS_F64) ((double *)a.data)[i] = v;
        else ((float *)a.data)[i] = (float)v;
    }
    return a;
}

static int file_of(const char *name, const cls_array *x)
{
    int fd = open(path(name), O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    if (x) assert_int_equal(pwrite(fd, x->data, bytes_of(x), 0), (ssize_t)bytes_of(x));
    return fd;
}

static void *read_back(int fd, size_t n)
{
    void *b = malloc(n);
    assert_non_null(b);
    assert_int_equal(pread(fd, b, n, 0), (ssize_t)n);
    return b;
}

static void assert_same_values(const void *got, const void *want, cls_dtype t, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++) {
        double a = t == CLS_F64 ? ((const double *)got)[i] : ((const float *)got)[i];
        double b = t == CLS_F64 ? ((const double *)want)[i] : ((const float *)want)[i];
        if ((isnan(a) && isnan(b)) || a == b) continue;
        if (tol == 0 ? memcmp(&a, &b, sizeof a) != 0 && !(a == 0 && b == 0) : !(fabs(a - b) <= tol * (1 + fabs(b))))
            fail_msg("value %zu: %.17g, in memory %.17g (tol %g)", i, a, b, tol);
    }
}

/* p over x in memory, then over the file with `buffer` bytes a chunk. */
static void one_case(const cls_pipeline *p, const cls_array *x, size_t buffer, double tol)
{
    cls_array y = *x;
    y.data = malloc(bytes_of(x));
    assert_non_null(y.data);
    cls_stats *want = NULL, *got = NULL;
    if (cls_fit_transform(ctx, p, x, &y, &want) != CLS_OK) fail_msg("in memory: %s", cls_last_error(ctx));
    int fi = file_of("in.bin", x), fo = file_of("out.bin", NULL);
    assert_int_equal(ftruncate(fo, (off_t)bytes_of(x)), 0);
    cls_stream_opts o = {.buffer_bytes = buffer, .buffers = 3};
    cls_array a = {.where = CLS_IN_FILE, .fd = fi, .dtype = x->dtype, .batch = x->batch, .rows = x->rows,
                   .cols = x->cols, .path = "in.bin", .stream = &o};
    cls_array b = a;
    b.fd = fo;
    b.path = "out.bin";
    b.stream = NULL;
    memset(&pr, 0, sizeof pr);
    cls_status st = cls_fit_transform(ctx, p, &a, &b, &got);
    if (st != CLS_OK) fail_msg("streamed: %s", cls_last_error(ctx));
    void *out = read_back(fo, bytes_of(x));
    assert_same_values(out, y.data, x->dtype, x->batch * x->rows * x->cols, tol);
    const cls_column_stats *cw = cls_stats_columns(want), *cg = cls_stats_columns(got);
    cls_stats_info iw, ig;
    assert_int_equal(cls_stats_describe(want, &iw), CLS_OK);
    assert_int_equal(cls_stats_describe(got, &ig), CLS_OK);
    assert_int_equal(ig.groups, iw.groups);
    assert_int_equal(ig.scaler, iw.scaler);
    for (size_t e = 0; e < iw.groups * iw.cols; e++) {
        assert_int_equal(cg[e].count, cw[e].count);
        assert_int_equal(cg[e].missing, cw[e].missing);
        if (iw.has_quantiles) {
            assert_true(cg[e].median == cw[e].median || (isnan(cg[e].median) && isnan(cw[e].median)));
            assert_true(cg[e].q_lo == cw[e].q_lo || (isnan(cg[e].q_lo) && isnan(cw[e].q_lo)));
            assert_true(cg[e].q_hi == cw[e].q_hi || (isnan(cg[e].q_hi) && isnan(cw[e].q_hi)));
        }
    }
    /* the progress: never back, done at the end */
    assert_false(pr.back);
    assert_true(pr.calls > 0);
    assert_int_equal(pr.done, pr.total);
    free(out);
    cls_stats_destroy(want);
    cls_stats_destroy(got);
    close(fi);
    close(fo);
    free(y.data);
}

/* Robust scaling after 3-sigma clipping and a median fill: the medians,
 * the clip's decisions and the quantiles are exact, so are the bytes. */
static void robust_after_streamed_cleaning_is_the_call_in_memory(void **state)
{
    (void)state;
    int small = test_suite_is("oclgrind");
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = data(t, 2, small ? 120 : 500, 5, 11 + ti);
        cls_clean c = {.impute = CLS_IMPUTE_MEDIAN, .sigma = 3};
        for (int s = 0; s < 2; s++) {
            cls_pipeline p = {.scaler = CLS_ROBUST, .scope = s ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX, .clean = &c,
                              .qmin = 10, .qmax = 90};
            one_case(&p, &x, 41 * 5 * es_of(t), 0);
        }
        free(x.data);
    }
}

/* z-score after clamped clipping (a clamp does not fuse: the clamped
 * values are in the statistics), and discount factors after cleaning. */
static void other_scalers_after_streamed_cleaning(void **state)
{
    (void)state;
    int small = test_suite_is("oclgrind");
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        double tol = t == CLS_F64 ? 1e-12 : 1e-5;
        size_t R = small ? 120 : 500;
        cls_array x = data(t, 2, R, 5, 23 + ti);
        cls_clean clamp = {.sigma = 2.5, .mode = CLS_CLIP_CLAMP, .spread = CLS_SPREAD_MAD_STD};
        cls_pipeline z = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX, .clean = &clamp};
        one_case(&z, &x, 37 * 5 * es_of(t), tol);
        /* factors of shape rows x cols */
        cls_array f = data(t, 1, R, 5, 99);
        for (size_t i = 0; i < R * 5; i++) {
            double v = 0.5 + (double)(i % 7) / 8;
            if (t == CLS_F64) ((double *)f.data)[i] = v;
            else ((float *)f.data)[i] = (float)v;
        }
        cls_clean fill = {.impute = CLS_IMPUTE_MEDIAN, .sigma = 3};
        cls_pipeline d = {.scaler = CLS_NONE, .scope = CLS_SCOPE_MATRIX, .clean = &fill, .factors = &f};
        one_case(&d, &x, 37 * 5 * es_of(t), 0);
        free(f.data);
        free(x.data);
    }
}

/* Robust scaling after clipping over a 64 MiB file, twice the pool: the
 * peak resident memory grows by one pool (the two stages' never both) and
 * the engine's state, not by the file (Linux's clear_refs resets the
 * peak). */
static void peak_memory_is_the_pool_not_the_file(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind") || test_suite_is("rusticl")) test_skip("64 MiB of data: PoCL only");
    if (TEST_UNDER_ASAN) test_skip("AddressSanitizer's quarantine and shadow memory are in the RSS");
    const size_t R = 1 << 20, C = 16, mib = 1 << 20; /* float32: 64 MiB */
    float *m = malloc((R / 16) * C * 4);
    assert_non_null(m);
    rng g;
    rng_seed(&g, 7);
    int fi = file_of("big.bin", NULL), fo = file_of("big-out.bin", NULL);
    for (size_t k = 0; k < 16; k++) {
        for (size_t i = 0; i < (R / 16) * C; i++)
            m[i] = i % 89 == 1 ? NAN : (float)(rng_normal(&g) * 5.0 + (i % 211 == 3 ? 60.0 : 0.0));
        assert_int_equal(pwrite(fi, m, (R / 16) * C * 4, (off_t)(k * (R / 16) * C * 4)), (ssize_t)((R / 16) * C * 4));
    }
    free(m);
    assert_int_equal(ftruncate(fo, (off_t)(R * C * 4)), 0);
    cls_stream_opts o = {.buffer_bytes = 8 * mib, .buffers = 4, .flags = CLS_STREAM_DROP_CACHE};
    cls_array a = {.where = CLS_IN_FILE, .fd = fi, .dtype = CLS_F32, .batch = 1, .rows = R, .cols = C,
                   .path = "big.bin", .stream = &o};
    cls_array b = a;
    b.fd = fo;
    b.path = "big-out.bin";
    cls_clean c = {.impute = CLS_IMPUTE_MEDIAN, .sigma = 3};
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_MATRIX, .clean = &c};
    /* the kernels built and the engine's tables made once first */
    cls_array sa = a, sb = b;
    sa.rows = sb.rows = 65536;
    assert_int_equal(cls_fit_transform(ctx, &p, &sa, &sb, NULL), CLS_OK);
    long before = test_peak_rss_reset();
    cls_status st = cls_fit_transform(ctx, &p, &a, &b, NULL);
    if (st != CLS_OK) fail_msg("%s", cls_last_error(ctx));
    long grew = test_peak_rss_kb() - before;
    /* the pool (32 MiB: one at a time, the cleaning's, then the scaler's)
     * and the engine's per-call state (the selection's gather within 16
     * MiB among it), against the 128 MiB a call through memory touches
     * and the 64 MiB of two pools */
    if (grew > 64 * 1024) fail_msg("the peak RSS grew by %ld KiB over a 64 MiB file (pool: 32 MiB)", grew);
    close(fi);
    close(fo);
    unlink(path("big.bin"));
    unlink(path("big-out.bin"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(robust_after_streamed_cleaning_is_the_call_in_memory),
        cmocka_unit_test(other_scalers_after_streamed_cleaning),
        cmocka_unit_test(peak_memory_is_the_pool_not_the_file),
    };
    return TEST_RUN("stream_clean_scaler", tests, group_setup, group_teardown);
}
