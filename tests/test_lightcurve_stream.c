/* Light curves streamed from a file (cls_fit_transform of CLS_IN_FILE
 * arrays, src/api/stream.c) against the same call on the arrays in
 * memory, byte for byte: chunks of whole matrices (a few per buffer,
 * forced small through cls_stream_opts), blocks of columns of matrices
 * larger than a buffer, the whole batch in batch scope; every edge mode,
 * windows longer than the series, odd sizes, gaps (NaN, Inf); bins
 * smoothed and reduced (the output then one row per bin, its file
 * written at its own offsets); bins alone in row blocks of whole bins;
 * series larger than a buffer in blocks of rows with halo rows (a block
 * of one row, windows longer than a block, edges, gaps at the blocks'
 * borders, bins across them; a clipping or an imputation ahead: its
 * statistics over the whole series first; a wrap edge, whose blocks at
 * the series' ends hold its other end). A cleaning's mask (mask_out)
 * streamed the same bytes as in memory, each block writing its own rows'
 * (never its halo's); a reduced output of the wrong shape refused, the
 * output left as it was; the process's peak memory grows by the buffers,
 * not by the file, a mask written or not. */
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
    test_tmpdir(dir, sizeof dir, "lightcurve_stream");
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

/* Light curves: a trend, a transit, noise; a gap of NaN in column 0 of
 * every matrix, an Inf and a NaN here and there. */
static cls_array curves(cls_dtype t, size_t b, size_t r, size_t c, uint64_t seed)
{
    cls_array a = {.data = malloc(b * r * c * es_of(t) + 8), .dtype = t, .batch = b, .rows = r, .cols = c};
    assert_non_null(a.data);
    rng g;
    rng_seed(&g, seed);
    for (size_t k = 0; k < b; k++)
        for (size_t i = 0; i < r; i++)
            for (size_t j = 0; j < c; j++) {
                size_t at = (k * r + i) * c + j;
                double v = 10.0 * (double)j + 100 + sin((double)i * 0.05 + (double)k) + (i % 37 < 3 ? -0.5 : 0) +
                           0.1 * rng_normal(&g);
                if (j == 0 && i >= 5 && i < 9) v = NAN;
                if (at % 211 == 17) v = at % 2 ? INFINITY : NAN;
                if (t == CLS_F64) ((double *)a.data)[at] = v;
                else ((float *)a.data)[at] = (float)v;
            }
    return a;
}

/* `n` bytes of `data` at byte 64 of a new file (junk before); its fd, read-only */
static int file_of(const char *p, const void *data, size_t n)
{
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    char junk[64];
    memset(junk, 0x5a, sizeof junk);
    assert_int_equal(pwrite(fd, junk, 64, 0), 64);
    assert_int_equal(pwrite(fd, data, n, 64), (ssize_t)n);
    close(fd);
    fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    return fd;
}

/* An output file of n bytes of 0x42 at byte 64; its fd, read-write */
static int out_file(const char *p, size_t n)
{
    void *b = malloc(n ? n : 1);
    assert_non_null(b);
    memset(b, 0x42, n);
    int fd = file_of(p, b, n);
    close(fd);
    free(b);
    fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    return fd;
}

static cls_array on_file(int fd, const cls_array *x, const cls_stream_opts *o)
{
    cls_array a = {.where = CLS_IN_FILE, .fd = fd, .offset = 64, .dtype = x->dtype, .batch = x->batch,
                   .rows = x->rows, .cols = x->cols, .stream = o};
    return a;
}

/* cls_fit_transform of p over x in memory into an array shaped `oshape`,
 * and over x in a file with buffers of `buffer` bytes: the same bytes
 * (and, with fitted, the same statistics). */
static void same_streamed(const cls_pipeline *p, const cls_array *x, const cls_array *oshape, size_t buffer,
                          int fitted, const char *what)
{
    size_t es = es_of(x->dtype), ib = x->batch * x->rows * x->cols * es;
    size_t ob = oshape->batch * oshape->rows * oshape->cols * es;
    cls_array y = *oshape;
    y.data = malloc(ob + 8);
    assert_non_null(y.data);
    cls_stats *s1 = NULL, *s2 = NULL;
    cls_status st = cls_fit_transform(ctx, p, x, &y, fitted ? &s1 : NULL);
    if (st != CLS_OK) fail_msg("%s: in memory: %s", what, cls_last_error(ctx));
    int fi = file_of(path("in.bin"), x->data, ib), fo = out_file(path("out.bin"), ob);
    cls_stream_opts o = {.buffer_bytes = buffer};
    cls_array fx = on_file(fi, x, &o), fy = on_file(fo, oshape, NULL);
    st = cls_fit_transform(ctx, p, &fx, &fy, fitted ? &s2 : NULL);
    if (st != CLS_OK) fail_msg("%s: streamed: %s", what, cls_last_error(ctx));
    char *got = malloc(ob + 1);
    assert_non_null(got);
    assert_int_equal(pread(fo, got, ob, 64), (ssize_t)ob);
    for (size_t i = 0; i < ob / es; i++)
        if (memcmp(got + i * es, (char *)y.data + i * es, es)) {
            double a = x->dtype == CLS_F64 ? ((double *)(void *)got)[i] : ((float *)(void *)got)[i];
            double b = x->dtype == CLS_F64 ? ((double *)y.data)[i] : ((float *)y.data)[i];
            fail_msg("%s: value %zu of %zu streamed %.17g, in memory %.17g", what, i, ob / es, a, b);
        }
    if (fitted) {
        cls_stats_info a, b;
        assert_int_equal(cls_stats_describe(s1, &a), CLS_OK);
        assert_int_equal(cls_stats_describe(s2, &b), CLS_OK);
        assert_int_equal(a.groups, b.groups);
        for (size_t g = 0; g < a.groups; g++)
            for (size_t c = 0; c < a.cols; c++) {
                cls_column_stats u, v;
                test_column(s1, g, c, &u);
                test_column(s2, g, c, &v);
                assert_int_equal(u.count, v.count);
                assert_close(u.min, v.min, 0);
                assert_close(u.max, v.max, 0);
            }
    }
    cls_stats_destroy(s1);
    cls_stats_destroy(s2);
    close(fi);
    close(fo);
    free(got);
    free(y.data);
}

typedef struct lc_case {
    const char *name;
    cls_clean   c;
} lc_case;

/* Trends (each edge mode once, windows even, odd and longer than the 37
 * rows), smoothed bins, clipping first */
static const lc_case trends[] = {
    {"mean 5 reflect", {.detrend = CLS_DETREND_MEAN, .window = 5}},
    {"mean 101 wrap", {.detrend = CLS_DETREND_MEAN, .window = 101, .edge = CLS_EDGE_WRAP}},
    {"mean 4 nearest origin 1", {.detrend = CLS_DETREND_MEAN, .window = 4, .edge = CLS_EDGE_NEAREST, .origin = 1}},
    {"mean 7 constant", {.detrend = CLS_DETREND_MEAN, .window = 7, .edge = CLS_EDGE_CONSTANT, .cval = 2.5}},
    {"mean 9 mirror trend", {.detrend = CLS_DETREND_MEAN, .window = 9, .edge = CLS_EDGE_MIRROR,
                             .detrend_op = CLS_DETREND_TREND}},
    {"savgol 9,2 interp", {.detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2}},
    {"savgol 101,2 mirror", {.detrend = CLS_DETREND_SAVGOL, .window = 101, .polyorder = 2, .edge = CLS_EDGE_MIRROR}},
    {"savgol 8,3 nearest divide", {.detrend = CLS_DETREND_SAVGOL, .window = 8, .polyorder = 3,
                                   .edge = CLS_EDGE_NEAREST, .detrend_op = CLS_DETREND_DIVIDE}},
    {"savgol 11,2 wrap deriv 1", {.detrend = CLS_DETREND_SAVGOL, .window = 11, .polyorder = 2,
                                  .edge = CLS_EDGE_WRAP, .deriv = 1}},
    {"savgol 5,2 constant", {.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 2, .edge = CLS_EDGE_CONSTANT,
                             .cval = 100}},
    {"bins of 4 median", {.bin_rows = 4, .bin_stat = CLS_BIN_MEDIAN}},
    {"mean 5, bins of 5 boundary", {.detrend = CLS_DETREND_MEAN, .window = 5, .bin_rows = 5,
                                    .bin_stat = CLS_BIN_BOUNDARY}},
    {"clip 3, savgol 9,2, bins of 3 mean", {.sigma = 3, .detrend = CLS_DETREND_SAVGOL, .window = 9,
                                             .polyorder = 2, .bin_rows = 3, .bin_stat = CLS_BIN_MEAN}},
};

static void streamed_trends_equal_the_call_in_memory_bit_for_bit(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!runs(dt)) continue;
        cls_array x = curves(dt, 7, 37, 3, 11);
        size_t mat = 37 * 3 * es_of(dt);
        for (size_t k = 0; k < sizeof trends / sizeof *trends; k++) {
            char what[128];
            snprintf(what, sizeof what, "%s %s", trends[k].name, t ? "float64" : "float32");
            cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &trends[k].c};
            /* 2 matrices a buffer: chunks of 2, 2, 2 and 1 */
            same_streamed(&p, &x, &x, 2 * mat + mat / 2, 0, what);
        }
        free(x.data);
    }
}

static void streamed_trend_then_scaler_equals_the_call_in_memory(void **state)
{
    (void)state;
    cls_dtype dt = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = curves(dt, 5, 41, 2, 12);
    size_t mat = 41 * 2 * es_of(dt);
    cls_clean c = {.sigma = 3, .detrend = CLS_DETREND_SAVGOL, .window = 15, .polyorder = 2,
                   .detrend_op = CLS_DETREND_DIVIDE, .bin_rows = 6, .bin_stat = CLS_BIN_MEDIAN};
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX, .clean = &c};
    same_streamed(&p, &x, &x, 2 * mat, 1, "clip, savgol, bins, min-max per matrix");
    /* batch scope: the batch's rows one series, the batch in one buffer */
    p.scope = CLS_SCOPE_BATCH;
    same_streamed(&p, &x, &x, 5 * mat, 1, "clip, savgol, bins, min-max, batch scope");
    p.scaler = CLS_NONE;
    c.detrend = CLS_DETREND_MEAN;
    c.polyorder = 0;
    c.detrend_op = CLS_DETREND_SUBTRACT;
    c.window = 301; /* longer than the batch's 205 rows */
    same_streamed(&p, &x, &x, 5 * mat, 0, "clip, mean 301, bins, batch scope");
    free(x.data);
}

static void streamed_bins_reduce_to_one_row_per_bin(void **state)
{
    (void)state;
    static const cls_bin_stat stats[] = {CLS_BIN_MEAN, CLS_BIN_MEDIAN, CLS_BIN_SUM, CLS_BIN_COUNT};
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!runs(dt)) continue;
        cls_array x = curves(dt, 7, 37, 3, 13);
        size_t mat = 37 * 3 * es_of(dt);
        for (size_t k = 0; k < 4; k++) {
            char what[128];
            cls_clean c = {.bin_rows = 4, .bin_stat = stats[k]};
            if (k == 1) {
                c.detrend = CLS_DETREND_MEAN;
                c.window = 5;
            }
            if (k == 2) c.sigma = 3;
            cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &c};
            cls_array o = {.dtype = dt, .batch = 7, .rows = 10, .cols = 3}; /* ceil(37 / 4) */
            snprintf(what, sizeof what, "bins of 4, stat %d, %s", (int)stats[k], t ? "float64" : "float32");
            same_streamed(&p, &x, &o, 3 * mat, 0, what);
            /* batch scope: 7 x 37 rows in bins of 4, the batch in one buffer */
            p.scope = CLS_SCOPE_BATCH;
            cls_array ob = {.dtype = dt, .batch = 1, .rows = 65, .cols = 3};
            snprintf(what, sizeof what, "bins of 4, stat %d, batch scope, %s", (int)stats[k], t ? "float64" : "float32");
            same_streamed(&p, &x, &ob, 7 * mat, 0, what);
        }
        free(x.data);
    }
}

/* A .npy output has no shape of its own: bins asked to reduce (bin_reduce,
 * or a sum or a count) write a file of one row per bin, its header saying
 * so, its values those of the call in memory; a bin's mean without
 * bin_reduce keeps the input's shape. */
static void npy_bins_reduce_to_a_file_of_their_shape(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!runs(dt)) continue;
        size_t es = es_of(dt);
        cls_array x = curves(dt, 7, 37, 3, 17);
        test_write_npy(path("x.npy"), &x);
        static const struct {
            cls_bin_stat stat;
            int reduce, scope;
            size_t batch, rows;
            const char *shape;
        } cases[] = {
            {CLS_BIN_MEAN, 1, CLS_SCOPE_MATRIX, 7, 10, "(7, 10, 3)"},
            {CLS_BIN_MEDIAN, 1, CLS_SCOPE_BATCH, 1, 65, "(1, 65, 3)"},
            {CLS_BIN_COUNT, 0, CLS_SCOPE_MATRIX, 7, 10, "(7, 10, 3)"},
            {CLS_BIN_MEAN, 0, CLS_SCOPE_MATRIX, 7, 37, "(7, 37, 3)"},
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            cls_clean c = {.bin_rows = 4, .bin_stat = cases[k].stat, .bin_reduce = cases[k].reduce};
            cls_pipeline p = {.scope = (cls_scope)cases[k].scope, .clean = &c};
            size_t n = cases[k].batch * cases[k].rows * 3;
            cls_array y = {.data = malloc(n * es), .dtype = dt, .batch = cases[k].batch, .rows = cases[k].rows,
                           .cols = 3};
            assert_non_null(y.data);
            cls_status st = cls_fit_transform(ctx, &p, &x, &y, NULL);
            if (st != CLS_OK) fail_msg("case %zu in memory: %s", k, cls_last_error(ctx));
            /* two matrices a buffer; the batch scope's one series in one */
            cls_stream_opts o = {.buffer_bytes = (cases[k].scope == CLS_SCOPE_BATCH ? 7 : 2) * 37 * 3 * es};
            st = cls_fit_transform(ctx, &p, &(cls_array){.where = CLS_IN_NPY, .path = path("x.npy"), .stream = &o},
                                   &(cls_array){.where = CLS_IN_NPY, .path = path("y.npy")}, NULL);
            if (st != CLS_OK) fail_msg("case %zu as .npy: %s", k, cls_last_error(ctx));
            FILE *f = fopen(path("y.npy"), "rb");
            assert_non_null(f);
            char *got = malloc(n * es + 1024);
            assert_non_null(got);
            size_t len = fread(got, 1, n * es + 1024, f);
            fclose(f);
            assert_true(len > n * es);
            size_t hdr = len - n * es;
            got[hdr - 1] = 0; /* the header ends in a newline */
            if (!strstr(got + 10, cases[k].shape)) fail_msg("case %zu: header %s, expected shape %s", k, got + 10,
                                                      cases[k].shape);
            assert_memory_equal(got + hdr, y.data, n * es);
            free(got);
            free(y.data);
        }
        free(x.data);
    }
}

/* Matrices larger than a buffer but with many columns: blocks of columns
 * hold whole series (every row of their columns), trends and reduced
 * bins included (the output's rows then written in runs of a block). */
static void column_blocks_of_a_matrix_larger_than_a_buffer(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind")) test_skip("150000 values a call: too slow under Oclgrind");
    cls_array x = curves(CLS_F32, 2, 50, 1500, 14);
    size_t buffer = 1024 * 50 * 4; /* 1024 columns of a matrix: 2 blocks each */
    cls_clean c = {.detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2, .edge = CLS_EDGE_MIRROR};
    cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &c};
    same_streamed(&p, &x, &x, buffer, 0, "savgol 9,2 in blocks of columns");
    c.bin_rows = 7;
    c.bin_stat = CLS_BIN_MEAN;
    cls_array o = {.dtype = CLS_F32, .batch = 2, .rows = 8, .cols = 1500};
    same_streamed(&p, &x, &o, buffer, 0, "savgol 9,2 then bins of 7 reduced, blocks of columns");
    free(x.data);
}

/* Bins alone (no trend, no cleaning) per matrix need no whole series: a
 * matrix of 400 rows (9600 B) in row blocks of a multiple of the bin's
 * rows (4 KiB buffers), each block's bins at their place; a bin longer
 * than a buffer's rows takes a block of its own. */
static void bins_alone_stream_in_row_blocks_of_whole_bins(void **state)
{
    (void)state;
    cls_dtype dt = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = curves(dt, 3, 400, 3, 17);
    static const struct {
        unsigned k;
        cls_bin_stat s;
        int reduce;
    } cases[] = {{7, CLS_BIN_MEDIAN, 0}, {7, CLS_BIN_MEAN, 1}, {5, CLS_BIN_COUNT, 1}, {3, CLS_BIN_BOUNDARY, 0},
                 {300, CLS_BIN_MEDIAN, 1}, {33, CLS_BIN_SUM, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cls_clean c = {.bin_rows = cases[i].k, .bin_stat = cases[i].s};
        cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &c};
        cls_array o = x;
        if (cases[i].reduce) o.rows = (400 + cases[i].k - 1) / cases[i].k;
        char what[96];
        snprintf(what, sizeof what, "bins of %u, stat %d, %s", cases[i].k, (int)cases[i].s,
                 cases[i].reduce ? "reduced" : "smoothed");
        same_streamed(&p, &x, &o, 4096, 0, what);
    }
    free(x.data);
}

/* Series larger than a buffer (matrices of 400 or 1500 rows, too narrow
 * for blocks of columns; the batch of 3 matrices in batch scope) in
 * blocks of rows with halo rows: the bytes of the call in memory. 4 KiB
 * buffers hold fewer rows than a halo: blocks of one row (or one bin);
 * larger buffers give blocks of a few hundred rows, which the kernels'
 * chunks of rows per work-item straddle; a window longer than the
 * series reads all of it. NaN and Inf every 211 values
 * and a gap in column 0 lie at many blocks' borders. */
static const lc_case halo_cases[] = {
    {"mean 5 reflect", {.detrend = CLS_DETREND_MEAN, .window = 5}},
    {"mean 4 nearest origin 1", {.detrend = CLS_DETREND_MEAN, .window = 4, .edge = CLS_EDGE_NEAREST, .origin = 1}},
    {"mean 7 constant origin -3", {.detrend = CLS_DETREND_MEAN, .window = 7, .edge = CLS_EDGE_CONSTANT,
                                   .cval = 2.5, .origin = -3}},
    {"mean 301 mirror trend", {.detrend = CLS_DETREND_MEAN, .window = 301, .edge = CLS_EDGE_MIRROR,
                               .detrend_op = CLS_DETREND_TREND}},
    {"savgol 9,2 interp", {.detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2}},
    {"savgol 101,2 interp", {.detrend = CLS_DETREND_SAVGOL, .window = 101, .polyorder = 2}},
    {"savgol 101,2 mirror", {.detrend = CLS_DETREND_SAVGOL, .window = 101, .polyorder = 2, .edge = CLS_EDGE_MIRROR}},
    {"savgol 8,3 nearest divide", {.detrend = CLS_DETREND_SAVGOL, .window = 8, .polyorder = 3,
                                   .edge = CLS_EDGE_NEAREST, .detrend_op = CLS_DETREND_DIVIDE}},
    {"savgol 11,2 constant deriv 1", {.detrend = CLS_DETREND_SAVGOL, .window = 11, .polyorder = 2,
                                      .edge = CLS_EDGE_CONSTANT, .cval = 100, .deriv = 1}},
    {"savgol 31,4 interp", {.detrend = CLS_DETREND_SAVGOL, .window = 31, .polyorder = 4}},
    {"savgol 999,1 mirror (longer than the series)", {.detrend = CLS_DETREND_SAVGOL, .window = 999, .polyorder = 1,
                                                       .edge = CLS_EDGE_MIRROR}},
    {"bins of 4 median", {.bin_rows = 4, .bin_stat = CLS_BIN_MEDIAN}},
    {"mean 5, bins of 7 boundary", {.detrend = CLS_DETREND_MEAN, .window = 5, .bin_rows = 7,
                                    .bin_stat = CLS_BIN_BOUNDARY}},
    {"savgol 21,2, bins of 33 mean", {.detrend = CLS_DETREND_SAVGOL, .window = 21, .polyorder = 2,
                                      .bin_rows = 33, .bin_stat = CLS_BIN_MEAN}},
    {"clip 2, savgol 9,2, bins of 3 mean", {.sigma = 2, .detrend = CLS_DETREND_SAVGOL, .window = 9,
                                            .polyorder = 2, .bin_rows = 3, .bin_stat = CLS_BIN_MEAN}},
    {"median clip 2.5 3 iterations, impute median, mean 11",
     {.sigma = 2.5, .maxiters = 3, .center = CLS_CENTER_MEDIAN, .impute = CLS_IMPUTE_MEDIAN,
      .detrend = CLS_DETREND_MEAN, .window = 11}},
    {"impute median, savgol 15,2 interp divide", {.impute = CLS_IMPUTE_MEDIAN, .detrend = CLS_DETREND_SAVGOL,
                                                  .window = 15, .polyorder = 2, .detrend_op = CLS_DETREND_DIVIDE}},
    /* a wrap edge: the blocks at the series' ends hold its other end */
    {"mean 5 wrap", {.detrend = CLS_DETREND_MEAN, .window = 5, .edge = CLS_EDGE_WRAP}},
    {"mean 8 wrap origin 3, bins of 4 median", {.detrend = CLS_DETREND_MEAN, .window = 8, .edge = CLS_EDGE_WRAP,
                                                .origin = 3, .bin_rows = 4, .bin_stat = CLS_BIN_MEDIAN}},
    {"savgol 101,2 wrap", {.detrend = CLS_DETREND_SAVGOL, .window = 101, .polyorder = 2, .edge = CLS_EDGE_WRAP}},
    {"savgol 31,4 wrap divide", {.detrend = CLS_DETREND_SAVGOL, .window = 31, .polyorder = 4,
                                 .edge = CLS_EDGE_WRAP, .detrend_op = CLS_DETREND_DIVIDE}},
    {"clip 2, savgol 9,2 wrap", {.sigma = 2, .detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2,
                                 .edge = CLS_EDGE_WRAP}},
    {"savgol 777,1 wrap (longer than the series)", {.detrend = CLS_DETREND_SAVGOL, .window = 777, .polyorder = 1,
                                                    .edge = CLS_EDGE_WRAP}},
};
#define HALO_WRAP_FIRST 17 /* halo_cases' first wrap case */

static void series_larger_than_a_buffer_stream_with_halo_rows(void **state)
{
    (void)state;
    int grind = test_suite_is("oclgrind");
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!runs(dt) || (grind && !t)) continue;
        /* Oclgrind: series of 40 rows in blocks of one row, a few cases */
        size_t es = es_of(dt), R = grind ? 40 : 2000, row = 3 * es;
        /* blocks of a few hundred rows (a halo is a window and a kernel's
         * chunk of rows, up to about 1100 rows here) */
        cls_array x = curves(dt, 3, R, 3, 21);
        /* blocks of one row (or one bin): buffers smaller than a halo */
        cls_array xs = curves(dt, 2, grind ? 60 : 300, 3, 22);
        for (size_t k = 0; k < sizeof halo_cases / sizeof *halo_cases; k++)
            for (int scope = 0; scope < 2; scope++) {
                if (grind && k != 0 && k != 4 && k != 12 && k != 14 && k != HALO_WRAP_FIRST + 2) continue;
                char what[160];
                cls_pipeline p = {.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX, .clean = &halo_cases[k].c};
                size_t buf = (grind ? 10 : 1500) * row;
                /* a window longer than the series: over the short ones only */
                int longer = halo_cases[k].c.window > 500;
                snprintf(what, sizeof what, "%s, %s, %s scope, buffer of %zu bytes", halo_cases[k].name,
                         t ? "float64" : "float32", scope ? "batch" : "matrix", buf);
                if (!longer) same_streamed(&p, &x, &x, buf, 0, what);
                if ((k % 3 && !longer && k < HALO_WRAP_FIRST) || grind) continue;
                snprintf(what, sizeof what, "%s, %s, %s scope, blocks of one row", halo_cases[k].name,
                         t ? "float64" : "float32", scope ? "batch" : "matrix");
                same_streamed(&p, &xs, &xs, 4096, 0, what);
            }
        size_t ro = (R + 9) / 10;
        /* bins reduced after a trend: each block's bins at their place */
        cls_clean c = {.detrend = CLS_DETREND_SAVGOL, .window = 15, .polyorder = 2, .bin_rows = 10,
                       .bin_stat = CLS_BIN_MEDIAN, .bin_reduce = 1};
        cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &c};
        cls_array o = {.dtype = dt, .batch = 3, .rows = ro, .cols = 3};
        cls_array os = {.dtype = dt, .batch = 2, .rows = (xs.rows + 9) / 10, .cols = 3};
        size_t some = (grind ? 10 : 400) * row;
        if (!grind) same_streamed(&p, &xs, &os, 4096, 0, "savgol 15,2, bins of 10 reduced, blocks of one bin");
        same_streamed(&p, &x, &o, some, 0, "savgol 15,2, bins of 10 reduced");
        c.edge = CLS_EDGE_WRAP;
        same_streamed(&p, &x, &o, some, 0, "savgol 15,2 wrap, bins of 10 reduced");
        c.edge = CLS_EDGE_DEFAULT;
        p.scope = CLS_SCOPE_BATCH;
        cls_array ob = {.dtype = dt, .batch = 1, .rows = (3 * R + 9) / 10, .cols = 3};
        same_streamed(&p, &x, &ob, some, 0, "savgol 15,2, bins of 10 reduced, batch scope");
        /* a scaler after: the blocks write the trend, min-max follows */
        c.bin_reduce = 0;
        c.bin_stat = CLS_BIN_MEAN;
        c.detrend_op = CLS_DETREND_DIVIDE;
        p.scaler = CLS_MINMAX;
        same_streamed(&p, &x, &x, some, 1, "savgol 15,2 divide, bins of 10, min-max, batch scope");
        p.scope = CLS_SCOPE_MATRIX;
        same_streamed(&p, &x, &x, some, 1, "savgol 15,2 divide, bins of 10, min-max per matrix");
        free(x.data);
        free(xs.data);
    }
}

/* The passes over the file of a streamed call of p over x (buffers of
 * `buffer` bytes): the report's phases. */
static int streamed_passes(const cls_pipeline *p, const cls_array *x, size_t buffer)
{
    size_t ib = x->batch * x->rows * x->cols * es_of(x->dtype);
    int fi = file_of(path("in.bin"), x->data, ib), fo = out_file(path("out.bin"), ib);
    cls_stream_opts o = {.buffer_bytes = buffer};
    cls_array fx = on_file(fi, x, &o), fy = on_file(fo, x, NULL);
    if (cls_fit_transform(ctx, p, &fx, &fy, NULL) != CLS_OK) fail_msg("streamed: %s", cls_last_error(ctx));
    cls_report r;
    assert_int_equal(cls_last_report(ctx, &r), CLS_OK);
    close(fi);
    close(fo);
    return r.phases;
}

/* A scaler of extremes (min-max, max-abs, decimal) after a trend in halo
 * blocks is fitted from the blocks as they are written: the trend's pass
 * and the scaler's writing pass, no pass of its own to fit it; the same
 * bytes and statistics as in memory. A z-score after them fits in a pass
 * of its own (its moments merged over other chunks would differ in their
 * last bits). */
static void a_scaler_of_extremes_after_halo_blocks_takes_no_fitting_pass(void **state)
{
    (void)state;
    int grind = test_suite_is("oclgrind");
    cls_dtype dt = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    size_t R = grind ? 40 : 900, row = 3 * es_of(dt), buf = (grind ? 10 : 300) * row;
    cls_array x = curves(dt, 3, R, 3, 41);
    static const cls_scaler sc[] = {CLS_MINMAX, CLS_MAXABS, CLS_DECIMAL};
    for (int clip = 0; clip < 2; clip++)
        for (size_t k = 0; k < 3; k++)
            for (int scope = 0; scope < 2; scope++) {
                if (grind && (k || clip)) continue;
                cls_clean c = {.sigma = clip ? 3 : 0, .detrend = CLS_DETREND_SAVGOL, .window = 15, .polyorder = 2,
                               .detrend_op = CLS_DETREND_DIVIDE};
                cls_pipeline p = {.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX, .scaler = sc[k],
                                  .clean = &c};
                char what[160];
                snprintf(what, sizeof what, "%sscaler %d after savgol 15,2 divide, %s scope", clip ? "clip 3, " : "",
                         (int)sc[k], scope ? "batch" : "matrix");
                same_streamed(&p, &x, &x, buf, 1, what);
                /* the trend's pass (its cleaning's too), then the scaler's
                 * writing pass over OUT */
                int want = 2;
                if (clip) {
                    /* the clipping's read passes come first: count them
                     * without a scaler (the trend's pass is its last) */
                    cls_pipeline q = p;
                    q.scaler = CLS_NONE;
                    want = streamed_passes(&q, &x, buf) + 1;
                }
                int got = streamed_passes(&p, &x, buf);
                if (got != want) fail_msg("%s: %d passes over the file, not %d", what, got, want);
            }
    if (!grind) {
        cls_clean c = {.detrend = CLS_DETREND_SAVGOL, .window = 15, .polyorder = 2};
        cls_pipeline p = {.scope = CLS_SCOPE_BATCH, .scaler = CLS_ZSCORE, .clean = &c};
        int got = streamed_passes(&p, &x, buf);
        if (got != 3) fail_msg("z-score after halo blocks: %d passes, not 3 (trend, fit, apply)", got);
    }
    free(x.data);
}

/* cls_fit_transform of p over x in memory and streamed with buffers of
 * `buffer` bytes, mask_out asked for: the same values and the same mask,
 * every byte of the streamed mask written (it starts as other bytes). */
static void same_masked(cls_pipeline *p, cls_clean *c, const cls_array *x, size_t buffer, const char *what)
{
    size_t es = es_of(x->dtype), nv = x->batch * x->rows * x->cols, ib = nv * es;
    uint8_t *m1 = malloc(nv), *m2 = malloc(nv);
    cls_array y = *x;
    y.data = malloc(ib + 8);
    assert_true(m1 && m2 && y.data);
    memset(m1, 0x42, nv);
    memset(m2, 0x17, nv);
    c->mask_out = m1;
    cls_status st = cls_fit_transform(ctx, p, x, &y, NULL);
    if (st != CLS_OK) fail_msg("%s: in memory: %s", what, cls_last_error(ctx));
    int fi = file_of(path("in.bin"), x->data, ib), fo = out_file(path("out.bin"), ib);
    cls_stream_opts o = {.buffer_bytes = buffer};
    cls_array fx = on_file(fi, x, &o), fy = on_file(fo, x, NULL);
    c->mask_out = m2;
    st = cls_fit_transform(ctx, p, &fx, &fy, NULL);
    c->mask_out = NULL;
    if (st != CLS_OK) fail_msg("%s: streamed: %s", what, cls_last_error(ctx));
    char *got = malloc(ib);
    assert_non_null(got);
    assert_int_equal(pread(fo, got, ib, 64), (ssize_t)ib);
    for (size_t i = 0; i < nv; i++) {
        if (m1[i] != m2[i]) fail_msg("%s: mask byte %zu of %zu streamed %u, in memory %u", what, i, nv, m2[i], m1[i]);
        if (memcmp(got + i * es, (char *)y.data + i * es, es)) {
            double a = x->dtype == CLS_F64 ? ((double *)(void *)got)[i] : ((float *)(void *)got)[i];
            double b = x->dtype == CLS_F64 ? ((double *)y.data)[i] : ((float *)y.data)[i];
            fail_msg("%s: value %zu of %zu streamed %.17g, in memory %.17g", what, i, nv, a, b);
        }
    }
    close(fi);
    close(fo);
    free(got);
    free(y.data);
    free(m1);
    free(m2);
}

/* A cleaning that writes a mask, a trend after it: each block's mask is
 * written with its block (its own rows; the halo rows read, never
 * written), a wrap edge's blocks at the ends too; and the same over
 * chunks of whole matrices, row chunks of a cleaning alone and blocks of
 * one row. */
static void a_mask_streams_with_its_blocks_halo_rows_never_written(void **state)
{
    (void)state;
    int grind = test_suite_is("oclgrind");
    static const lc_case cases[] = {
        {"clip 3, mean 5 wrap", {.sigma = 3, .detrend = CLS_DETREND_MEAN, .window = 5, .edge = CLS_EDGE_WRAP}},
        {"clip 2, savgol 9,2", {.sigma = 2, .detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2}},
        {"clip 2, savgol 101,2 mirror, bins of 4 median",
         {.sigma = 2, .detrend = CLS_DETREND_SAVGOL, .window = 101, .polyorder = 2,
          .edge = CLS_EDGE_MIRROR, .bin_rows = 4, .bin_stat = CLS_BIN_MEDIAN}},
        {"clip 2.5, impute median, mean 11 divide",
         {.sigma = 2.5, .impute = CLS_IMPUTE_MEDIAN, .detrend = CLS_DETREND_MEAN, .window = 11,
          .detrend_op = CLS_DETREND_DIVIDE}},
        {"clip 2 (no trend)", {.sigma = 2}},
        {"clip 2 keep (no trend)", {.sigma = 2, .mode = CLS_CLIP_KEEP}},
    };
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!runs(dt) || (grind && !t)) continue;
        size_t es = es_of(dt), R = grind ? 40 : 900, row = 3 * es;
        cls_array x = curves(dt, 3, R, 3, 31);
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
            for (int scope = 0; scope < 2; scope++) {
                if (grind && k > 1) continue;
                cls_clean c = cases[k].c;
                cls_pipeline p = {.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX, .clean = &c};
                char what[200];
                const char *sc = scope ? "batch" : "matrix";
                /* blocks of a few hundred rows (Oclgrind: a few) */
                size_t buf = (grind ? 10 : 300) * row;
                snprintf(what, sizeof what, "%s, %s, %s scope, buffer of %zu bytes", cases[k].name,
                         t ? "float64" : "float32", sc, buf);
                same_masked(&p, &c, &x, buf, what);
                if (grind) continue;
                /* blocks of one row (or one bin) and their halo */
                snprintf(what, sizeof what, "%s, %s, %s scope, blocks of one row", cases[k].name,
                         t ? "float64" : "float32", sc);
                same_masked(&p, &c, &x, 4096, what);
                /* whole matrices, two to a buffer (the last chunk one) */
                snprintf(what, sizeof what, "%s, %s, %s scope, two matrices a buffer", cases[k].name,
                         t ? "float64" : "float32", sc);
                same_masked(&p, &c, &x, 2 * R * row, what);
            }
        free(x.data);
    }
}

/* A reduced output of the wrong shape, and a mask asked of bins reduced,
 * refused before anything is written. */
static void a_reduced_output_of_the_wrong_shape_is_refused_naming_the_right_one(void **state)
{
    (void)state;
    cls_dtype dt = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = curves(dt, 3, 400, 3, 15);
    size_t es = es_of(dt), n = 3 * 400 * 3 * es;
    int fi = file_of(path("in.bin"), x.data, n), fo = out_file(path("out.bin"), n);
    cls_array fx = on_file(fi, &x, NULL), fy = on_file(fo, &x, NULL);
    cls_clean c = {.detrend = CLS_DETREND_MEAN, .window = 5, .bin_rows = 10, .bin_stat = CLS_BIN_SUM};
    cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &c};
    assert_int_equal(cls_fit_transform(ctx, &p, &fx, &fy, NULL), CLS_E_ARG);
    if (!strstr(cls_last_error(ctx), "3 x 40 x 3")) fail_msg("no right shape in: %s", cls_last_error(ctx));
    /* bins reduced write no mask, as in memory, whether a buffer holds
     * a series or not (halo blocks) */
    uint8_t mask[3 * 400 * 3];
    cls_array r40 = x;
    r40.rows = 40;
    cls_array fr = on_file(fo, &r40, NULL);
    c.mask_out = mask;
    c.sigma = 3;
    cls_stream_opts small = {.buffer_bytes = 4096};
    for (int k = 0; k < 2; k++) {
        fx.stream = k ? &small : NULL;
        assert_int_equal(cls_fit_transform(ctx, &p, &fx, &fr, NULL), CLS_E_ARG);
        if (!strstr(cls_last_error(ctx), "mask_out")) fail_msg("no mask_out in: %s", cls_last_error(ctx));
    }
    /* the output as it was */
    unsigned char *b = malloc(n);
    assert_non_null(b);
    assert_int_equal(pread(fo, b, n, 64), (ssize_t)n);
    for (size_t i = 0; i < n; i++) assert_int_equal(b[i], 0x42);
    free(b);
    free(x.data);
    close(fi);
    close(fo);
}

/* flatten (flatten_niters): chunks of whole matrices give the bytes in
 * memory, a clipping and bins with it too; a series larger than a buffer
 * is refused (the clip's statistics are over the whole series), the
 * output left as it was */
static void flatten_streams_whole_matrices_and_refuses_halo_blocks(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!runs(dt)) continue;
        cls_array x = curves(dt, 5, 37, 3, 17);
        size_t es = es_of(dt), mat = 37 * 3 * es, n = 5 * mat;
        if (dt == CLS_F64) ((double *)x.data)[10 * 3] = 50; /* an outlier */
        else ((float *)x.data)[10 * 3] = 50;
        cls_clean fl = {.detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2,
                        .detrend_op = CLS_DETREND_DIVIDE, .flatten_niters = 3};
        cls_clean all = fl;
        all.sigma = 4;
        all.bin_rows = 4;
        all.bin_stat = CLS_BIN_MEDIAN;
        cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &fl}, q = {.scope = CLS_SCOPE_MATRIX, .clean = &all};
        same_streamed(&p, &x, &x, 2 * mat + mat / 2, 0, t ? "flatten float64" : "flatten float32");
        same_streamed(&q, &x, &x, 2 * mat + mat / 2, 0,
                      t ? "clip, flatten, bins float64" : "clip, flatten, bins float32");
        /* batch scope: the file one series of 185 rows, buffers of 2 matrices */
        int fi = file_of(path("in.bin"), x.data, n), fo = out_file(path("out.bin"), n);
        cls_stream_opts o = {.buffer_bytes = 2 * mat};
        cls_array fx = on_file(fi, &x, &o), fy = on_file(fo, &x, NULL);
        cls_pipeline b = {.scope = CLS_SCOPE_BATCH, .clean = &fl};
        assert_int_equal(cls_fit_transform(ctx, &b, &fx, &fy, NULL), CLS_E_UNSUPPORTED);
        if (!strstr(cls_last_error(ctx), "whole series") || !strstr(cls_last_error(ctx), "buffer_bytes"))
            fail_msg("the refusal says neither why nor what to do: %s", cls_last_error(ctx));
        unsigned char *got = malloc(n);
        assert_non_null(got);
        assert_int_equal(pread(fo, got, n, 64), (ssize_t)n);
        for (size_t i = 0; i < n; i++) assert_int_equal(got[i], 0x42);
        /* with a buffer of the whole series: the call in memory */
        cls_stream_opts big = {.buffer_bytes = n};
        fx.stream = &big;
        assert_int_equal(cls_fit_transform(ctx, &b, &fx, &fy, NULL), CLS_OK);
        cls_array y = x;
        y.data = malloc(n);
        assert_non_null(y.data);
        assert_int_equal(cls_fit_transform(ctx, &b, &x, &y, NULL), CLS_OK);
        assert_int_equal(pread(fo, got, n, 64), (ssize_t)n);
        assert_memory_equal(got, y.data, n);
        free(got);
        free(y.data);
        close(fi);
        close(fo);
        free(x.data);
    }
}

/* A file 32 times the pool: the peak resident memory during the call
 * grows by the buffers and the engine's state, not by the file (Linux's
 * clear_refs resets the peak), per matrix and with the file one series
 * (batch scope: halo blocks). */
static void peak_memory_is_the_pool_not_the_file(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind") || test_suite_is("rusticl")) test_skip("64 MiB of data: PoCL only");
    if (TEST_UNDER_ASAN) test_skip("AddressSanitizer's quarantine and shadow memory are in the RSS");
    const size_t B = 256, R = 2048, C = 32, mib = 1 << 20; /* float32: 64 MiB */
    int fi = open(path("big.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fi >= 0);
    cls_array m = curves(CLS_F32, 1, R, C, 16);
    for (size_t b = 0; b < B; b++)
        assert_int_equal(pwrite(fi, m.data, R * C * 4, (off_t)(64 + b * R * C * 4)), (ssize_t)(R * C * 4));
    int fo = out_file(path("big-out.bin"), 0);
    assert_int_equal(ftruncate(fo, (off_t)(64 + B * R * C * 4)), 0);
    cls_stream_opts o = {.buffer_bytes = 2 * mib, .buffers = 4, .flags = CLS_STREAM_DROP_CACHE};
    cls_array shape = {.dtype = CLS_F32, .batch = B, .rows = R, .cols = C};
    cls_array fx = on_file(fi, &shape, &o), fy = on_file(fo, &shape, NULL);
    cls_clean c = {.detrend = CLS_DETREND_SAVGOL, .window = 101, .polyorder = 2, .bin_rows = 10,
                   .bin_stat = CLS_BIN_MEDIAN};
    cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = &c};
    /* the kernels built and the engine's tables made once first */
    cls_array small = shape;
    small.batch = 2;
    cls_array sx = on_file(fi, &small, &o), sy = on_file(fo, &small, NULL);
    assert_int_equal(cls_fit_transform(ctx, &p, &sx, &sy, NULL), CLS_OK);
    long before = test_peak_rss_reset();
    cls_status st = cls_fit_transform(ctx, &p, &fx, &fy, NULL);
    if (st != CLS_OK) fail_msg("%s", cls_last_error(ctx));
    long grew = test_peak_rss_kb() - before;
    /* the pool (8 MiB) and the engine's per-call state: 24 MiB in all at
     * most, against the 128 MiB a call through memory touches */
    if (grew > 24 * 1024) fail_msg("the peak RSS grew by %ld KiB over a 64 MiB file (pool: 8 MiB)", grew);
    /* batch scope: the file one series, in blocks with halo rows (each
     * block's trend through a mapping of a buffer's size) */
    p.scope = CLS_SCOPE_BATCH;
    before = test_peak_rss_reset();
    st = cls_fit_transform(ctx, &p, &fx, &fy, NULL);
    if (st != CLS_OK) fail_msg("batch scope: %s", cls_last_error(ctx));
    grew = test_peak_rss_kb() - before;
    if (grew > 24 * 1024) fail_msg("batch scope: the peak RSS grew by %ld KiB over a 64 MiB file (pool: 8 MiB)", grew);
    /* a clipping that writes a mask ahead of the trend, the file one
     * series: the mask is the caller's (16 MiB, resident before), each
     * block's put in place from a chunk's mask of a buffer's values (a
     * mean centre: a median's counting passes take their histograms in
     * the scratch budget, cls_config.scratch_bytes, not what this shows) */
    uint8_t *mask = malloc(B * R * C);
    assert_non_null(mask);
    memset(mask, 0x42, B * R * C);
    cls_clean cm = {.sigma = 3, .center = CLS_CENTER_MEAN, .mask_out = NULL, .detrend = CLS_DETREND_SAVGOL, .window = 101, .polyorder = 2};
    p.clean = &cm;
    /* its kernels built first: the clipping's passes */
    cm.mask_out = NULL;
    assert_int_equal(cls_fit_transform(ctx, &p, &sx, &sy, NULL), CLS_OK);
    cm.mask_out = mask;
    before = test_peak_rss_reset();
    st = cls_fit_transform(ctx, &p, &fx, &fy, NULL);
    if (st != CLS_OK) fail_msg("a mask, batch scope: %s", cls_last_error(ctx));
    grew = test_peak_rss_kb() - before;
    if (grew > 24 * 1024)
        fail_msg("a mask, batch scope: the peak RSS grew by %ld KiB over a 64 MiB file (pool: 8 MiB)", grew);
    free(mask);
    free(m.data);
    close(fi);
    close(fo);
    unlink(path("big.bin"));
    unlink(path("big-out.bin"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(streamed_trends_equal_the_call_in_memory_bit_for_bit),
        cmocka_unit_test(streamed_trend_then_scaler_equals_the_call_in_memory),
        cmocka_unit_test(streamed_bins_reduce_to_one_row_per_bin),
        cmocka_unit_test(npy_bins_reduce_to_a_file_of_their_shape),
        cmocka_unit_test(column_blocks_of_a_matrix_larger_than_a_buffer),
        cmocka_unit_test(bins_alone_stream_in_row_blocks_of_whole_bins),
        cmocka_unit_test(series_larger_than_a_buffer_stream_with_halo_rows),
        cmocka_unit_test(a_scaler_of_extremes_after_halo_blocks_takes_no_fitting_pass),
        cmocka_unit_test(a_mask_streams_with_its_blocks_halo_rows_never_written),
        cmocka_unit_test(a_reduced_output_of_the_wrong_shape_is_refused_naming_the_right_one),
        cmocka_unit_test(flatten_streams_whole_matrices_and_refuses_halo_blocks),
        cmocka_unit_test(peak_memory_is_the_pool_not_the_file),
    };
    return TEST_RUN("lightcurve_stream", tests, group_setup, group_teardown);
}
