/* cls_describe of an array in a file (CLS_IN_FILE, CLS_IN_NPY), read
 * through the stream's pool: the in-memory call's summary, bit for bit when
 * every chunk holds whole groups; when groups span chunks, counts, missing,
 * extremes, quartiles, outliers and duplicate rows the same, means and
 * stds within the rounding of their merge over the chunks; the duplicate
 * rows counted in several parts of the hash space as in one; and the
 * peak resident memory during a call over a file many times the pool
 * grows by the pool, not by the file. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static cls_context *ctx;
static char dir[4096];

static int group_setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "describe_stream");
    ctx = test_context(NULL, 0, 0);
    return ctx ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    cls_context_destroy(ctx);
    return 0;
}

static int runs(cls_dtype t) { return t == CLS_F32 || !test_suite_is("rusticl"); }
static size_t es_of(cls_dtype t) { return t == CLS_F64 ? 8 : 4; }

static const char *path(const char *name)
{
    static char ring[8][4400];
    static unsigned next;
    char *b = ring[next++ % 8];
    snprintf(b, sizeof ring[0], "%s/%s", dir, name);
    return b;
}

static void put(cls_array *a, size_t i, double v)
{
    if (a->dtype == CLS_F64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

static double get(const cls_array *a, size_t i)
{
    return a->dtype == CLS_F64 ? ((const double *)a->data)[i] : (double)((const float *)a->data)[i];
}

/* Seeded data: normal columns far from 0, NaN and +-Inf, a constant
 * column, an all-missing one, ties (a column of few values), and rows
 * copied over later rows (across chunks; -0.0 for 0.0 in some). */
static cls_array data(cls_dtype t, size_t b, size_t r, size_t c, uint64_t seed)
{
    cls_array a = {.data = malloc(b * r * c * es_of(t)), .dtype = t, .batch = b, .rows = r, .cols = c};
    assert_non_null(a.data);
    rng g;
    rng_seed(&g, seed);
    size_t n = b * r * c;
    for (size_t i = 0; i < n; i++) {
        size_t col = i % c;
        double v = rng_normal(&g) * 3.0 + 1000.0 * (double)col;
        if (col == 1) v = 2.5;
        if (col == 2) v = (double)(rng_next(&g) % 5);
        if (c > 3 && col == 3) v = NAN;
        if (i % 97 == 5) v = NAN;
        if (i % 131 == 7) v = i % 2 ? INFINITY : -INFINITY;
        if (i % 389 == 11) v = 1e4 + 1000.0 * (double)col; /* outliers */
        put(&a, i, v);
    }
    size_t R = b * r;
    for (size_t k = 0; k < R / 4; k++) {
        size_t from = (size_t)(rng_next(&g) % R), to = (size_t)(rng_next(&g) % R);
        for (size_t j = 0; j < c; j++) {
            double v = get(&a, from * c + j);
            put(&a, to * c + j, v == 0 && k % 2 ? -0.0 : v);
        }
    }
    return a;
}

static int fd_with(const cls_array *x, uint64_t offset)
{
    int fd = open(path("d.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    size_t n = x->batch * x->rows * x->cols * es_of(x->dtype);
    char junk[64];
    memset(junk, 0x5a, sizeof junk);
    assert_true(offset <= sizeof junk);
    assert_int_equal(pwrite(fd, junk, offset, 0), (ssize_t)offset);
    assert_int_equal(pwrite(fd, x->data, n, (off_t)offset), (ssize_t)n);
    return fd;
}

static cls_summary summary_new(size_t groups, size_t cols)
{
    cls_summary s = {.columns = calloc(groups * cols, sizeof *s.columns),
                     .duplicate_rows = calloc(groups, sizeof *s.duplicate_rows)};
    assert_non_null(s.columns);
    assert_non_null(s.duplicate_rows);
    return s;
}

/* Bit for bit, but for the sign of a zero: which of -0.0 and 0.0 a min, a
 * max or a sort meets first depends on the order the values come in (as
 * in test_describe.c). */
static int bits_equal(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, 8) == 0 || (a == 0 && b == 0);
}

static void assert_bits(double got, double want, const char *what, size_t e)
{
    if (!bits_equal(got, want)) fail_msg("%s of entry %zu: %.17g, in memory %.17g", what, e, got, want);
}

/* got (a file) against want (memory): tol 0 asks for the same bits
 * everywhere; else means and stds within tol, relative. */
static void assert_same_summary(const cls_summary *got, const cls_summary *want, double tol)
{
    assert_int_equal(got->groups, want->groups);
    assert_int_equal(got->rows, want->rows);
    assert_int_equal(got->cols, want->cols);
    for (size_t e = 0; e < want->groups * want->cols; e++) {
        const cls_column_summary *a = &got->columns[e], *b = &want->columns[e];
        assert_int_equal(a->count, b->count);
        assert_int_equal(a->missing, b->missing);
        assert_bits(a->min, b->min, "min", e);
        assert_bits(a->max, b->max, "max", e);
        assert_bits(a->q25, b->q25, "q25", e);
        assert_bits(a->median, b->median, "median", e);
        assert_bits(a->q75, b->q75, "q75", e);
        assert_int_equal(a->outliers, b->outliers);
        if (tol == 0) {
            assert_bits(a->mean, b->mean, "mean", e);
            assert_bits(a->std, b->std, "std", e);
        } else {
            assert_close(a->mean, b->mean, tol * (1 + fabs(b->mean)));
            assert_close(a->std, b->std, tol * (1 + fabs(b->std)));
        }
    }
    for (size_t g = 0; g < want->groups; g++) assert_int_equal(got->duplicate_rows[g], want->duplicate_rows[g]);
}

static void one_case(cls_dtype t, cls_scope scope, size_t b, size_t r, size_t c, size_t buffer, double tol)
{
    cls_array x = data(t, b, r, c, 17 + b + r + c);
    size_t groups = scope == CLS_SCOPE_BATCH ? 1 : b;
    cls_summary want = summary_new(groups, c), got = summary_new(groups, c);
    if (cls_describe(ctx, &x, scope, 2.5, &want) != CLS_OK) fail_msg("in memory: %s", cls_last_error(ctx));
    int fd = fd_with(&x, 48);
    cls_stream_opts o = {.buffer_bytes = buffer, .buffers = 3};
    cls_array f = {.where = CLS_IN_FILE, .fd = fd, .offset = 48, .dtype = t, .batch = b, .rows = r, .cols = c,
                   .path = "d.bin", .stream = &o};
    if (cls_describe(ctx, &f, scope, 2.5, &got) != CLS_OK) fail_msg("file: %s", cls_last_error(ctx));
    assert_same_summary(&got, &want, tol);
    close(fd);
    /* a .npy path: the same (not in the simulator: the same passes again) */
    if (!test_suite_is("oclgrind")) {
        cls_summary npy = summary_new(groups, c);
        test_write_npy(path("d.npy"), &x);
        cls_array p = {.where = CLS_IN_NPY, .path = path("d.npy"), .stream = &o};
        if (cls_describe(ctx, &p, scope, 2.5, &npy) != CLS_OK) fail_msg(".npy: %s", cls_last_error(ctx));
        assert_same_summary(&npy, &want, tol);
        free(npy.columns);
        free(npy.duplicate_rows);
    }
    free(want.columns);
    free(want.duplicate_rows);
    free(got.columns);
    free(got.duplicate_rows);
    free(x.data);
}

/* Whole matrices in a chunk (matrix scope; the batch in one buffer): each
 * chunk's summary is the in-memory call's, bit for bit. */
static void whole_groups_are_the_call_in_memory_bit_for_bit(void **state)
{
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        size_t mat = 300 * 6 * es_of(t);
        one_case(t, CLS_SCOPE_MATRIX, 5, 300, 6, 2 * mat, 0);
        one_case(t, CLS_SCOPE_BATCH, 5, 300, 6, 5 * mat, 0);
    }
}

/* Groups larger than a buffer: the moments merged over chunks, the
 * quartiles by counting passes over the file, the outliers and the
 * duplicate rows (copied across chunks) counted over it. */
static void groups_larger_than_a_buffer_are_exact_but_for_merged_moments(void **state)
{
    (void)state;
    int small = test_suite_is("oclgrind");
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        double tol = t == CLS_F64 ? 1e-12 : 1e-5;
        size_t r = small ? 160 : 700, buf = 37 * 5 * es_of(t); /* 37 rows a chunk: rows cut anywhere */
        one_case(t, CLS_SCOPE_MATRIX, 3, r, 5, buf, tol);
        one_case(t, CLS_SCOPE_BATCH, 3, r, 5, buf, tol);
        /* one column; a single row per group */
        one_case(t, CLS_SCOPE_MATRIX, 2, r, 1, 16 * es_of(t), tol);
        one_case(t, CLS_SCOPE_BATCH, 40, 1, 3, 5 * 3 * es_of(t), tol);
    }
}

/* The duplicate rows' table in parts of the hash space (a part a pass):
 * the same count as in one part. */
static void duplicate_rows_in_parts_count_as_in_one(void **state)
{
    (void)state;
    cls_tuning *tu = cls_context_tuning(ctx);
    tu->hash_part_rows = 50;
    cls_dtype t = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    one_case(t, CLS_SCOPE_MATRIX, 2, 300, 4, 29 * 4 * es_of(t), t == CLS_F64 ? 1e-12 : 1e-5);
    one_case(t, CLS_SCOPE_BATCH, 2, 300, 4, 29 * 4 * es_of(t), t == CLS_F64 ? 1e-12 : 1e-5);
    tu->hash_part_rows = 0;
}

/* A file that is not there, or not a .npy file: a clear failure, the
 * caller's arrays untouched. */
static void bad_files_fail_naming_them(void **state)
{
    (void)state;
    cls_summary s = summary_new(1, 1);
    s.columns[0].count = 12345;
    cls_array p = {.where = CLS_IN_NPY, .path = path("missing.npy")};
    assert_int_equal(cls_describe(ctx, &p, CLS_SCOPE_MATRIX, 3, &s), CLS_E_IO);
    assert_non_null(strstr(cls_last_error(ctx), "missing.npy"));
    FILE *f = fopen(path("junk.npy"), "wb");
    assert_non_null(f);
    fputs("not a numpy file at all", f);
    fclose(f);
    p.path = path("junk.npy");
    assert_int_equal(cls_describe(ctx, &p, CLS_SCOPE_MATRIX, 3, &s), CLS_E_FORMAT);
    assert_int_equal(s.columns[0].count, 12345);
    free(s.columns);
    free(s.duplicate_rows);
}

/* A 64 MiB file, 32 times the pool, one group: the peak resident memory
 * during the call grows by the pool, a part of the duplicate rows' table
 * and the engine's state, not by the file (Linux's clear_refs resets the
 * peak). */
static void peak_memory_is_the_pool_not_the_file(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind") || test_suite_is("rusticl")) test_skip("64 MiB of data: PoCL only");
    if (TEST_UNDER_ASAN) test_skip("AddressSanitizer's quarantine and shadow memory are in the RSS");
    const size_t R = 1 << 20, C = 16, mib = 1 << 20, part = R / 8; /* float32: 64 MiB */
    /* no long ties: the selection's host end may gather the values of a
     * bucket that ties fill, up to a budget of its own (select.c) */
    float *m = malloc(part * C * 4);
    assert_non_null(m);
    rng g;
    rng_seed(&g, 5);
    for (size_t i = 0; i < part * C; i++) m[i] = i % 97 == 3 ? NAN : (float)(rng_normal(&g) * 10.0 + (double)(i % C));
    int fd = open(path("big.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    for (size_t k = 0; k < 8; k++)
        assert_int_equal(pwrite(fd, m, part * C * 4, (off_t)(k * part * C * 4)), (ssize_t)(part * C * 4));
    free(m);
    cls_stream_opts o = {.buffer_bytes = mib / 2, .buffers = 4, .flags = CLS_STREAM_DROP_CACHE};
    cls_array f = {.where = CLS_IN_FILE, .fd = fd, .dtype = CLS_F32, .batch = 1, .rows = R, .cols = C,
                   .path = "big.bin", .stream = &o};
    cls_summary s = summary_new(1, C);
    /* the duplicate rows' table in 8 parts: 2 MiB each */
    cls_context_tuning(ctx)->hash_part_rows = part;
    /* the kernels built and the engine's tables made once first */
    cls_array small = f;
    small.rows = 4096;
    assert_int_equal(cls_describe(ctx, &small, CLS_SCOPE_BATCH, 3, &s), CLS_OK);
    long before = test_peak_rss_reset();
    cls_status st = cls_describe(ctx, &f, CLS_SCOPE_BATCH, 3, &s);
    if (st != CLS_OK) fail_msg("%s", cls_last_error(ctx));
    long grew = test_peak_rss_kb() - before;
    /* every row is 8 times in the file */
    assert_int_equal(s.duplicate_rows[0], R - part);
    cls_context_tuning(ctx)->hash_part_rows = 0;
    /* the pool (2 MiB), a part of the duplicate rows' table (2 MiB, and as
     * much to sort it) and the engine's state, against the 64 MiB file */
    if (grew > 24 * 1024) fail_msg("the peak RSS grew by %ld KiB over a 64 MiB file (pool: 2 MiB)", grew);
    free(s.columns);
    free(s.duplicate_rows);
    close(fd);
    unlink(path("big.bin"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_groups_are_the_call_in_memory_bit_for_bit),
        cmocka_unit_test(groups_larger_than_a_buffer_are_exact_but_for_merged_moments),
        cmocka_unit_test(duplicate_rows_in_parts_count_as_in_one),
        cmocka_unit_test(bad_files_fail_naming_them),
        cmocka_unit_test(peak_memory_is_the_pool_not_the_file),
    };
    return TEST_RUN("describe_stream", tests, group_setup, group_teardown);
}
