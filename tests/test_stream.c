/* The streaming calls (cls_stream_*) against the in-memory calls on the
 * same data: byte for byte when the statistics take one pass, within the
 * rounding of merged moments when they take two; and their failures on bad
 * input: a file shorter than its array, truncated, grown or written while
 * read, a read error (a pipe), a full disk (/dev/full), each naming the
 * file and the byte offset, with cls_fit_transform() of .npy paths leaving no output; and
 * their progress: a total that never counts a pass that does not run,
 * reached at the end, and the passes told as they begin.
 * Small buffers (a few KiB) make many chunks out of small arrays. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline_util.h"
#include "testing.h"

static cls_context *ctx;
static char dir[4096];

static const char *path(const char *name)
{
    static char ring[8][4400];
    static unsigned next;
    char *b = ring[next++ % 8];
    snprintf(b, sizeof ring[0], "%s/%s", dir, name);
    return b;
}

static size_t es_of(cls_dtype t) { return t == CLS_F64 ? 8 : 4; }
static size_t bytes_of(const cls_array *x) { return x->batch * x->rows * x->cols * es_of(x->dtype); }

/* A trend along the rows that make_data adds, per row (0: none), and
 * values rounded down to multiples of `grain` (0: not; ties). */
static double ramp, grain;

/* Seeded data with NaN, +-Inf, a constant column and an all-missing column. */
static cls_array make_data(cls_dtype t, size_t b, size_t r, size_t c, uint64_t seed)
{
    cls_array x = {.data = NULL, .dtype = t, .batch = b, .rows = r, .cols = c};
    size_t n = b * r * c;
    x.data = malloc(n * es_of(t));
    assert_non_null(x.data);
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < n; i++) {
        size_t col = i % c;
        double v = rng_normal(&g) * 3.0 + 100.0 * (double)col + ramp * (double)(i / c);
        if (grain > 0) v = floor(v / grain) * grain;
        if (col == 1) v = 2.5;                         /* constant */
        if (c > 3 && col == 3) v = NAN;                 /* all missing */
        if (i % 97 == 5) v = NAN;
        if (i % 131 == 7) v = i % 2 ? INFINITY : -INFINITY;
        if (t == CLS_F64) ((double *)x.data)[i] = v;
        else ((float *)x.data)[i] = (float)v;
    }
    return x;
}

/* Writes x at byte `offset` of a new file (junk before it); returns the fd
 * opened read-only. */
static int write_at(const char *p, const cls_array *x, uint64_t offset)
{
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    char junk[256];
    memset(junk, 0x5a, sizeof junk);
    assert_true(offset <= sizeof junk);
    assert_int_equal(pwrite(fd, junk, offset, 0), (ssize_t)offset);
    assert_int_equal(pwrite(fd, x->data, bytes_of(x), (off_t)offset), (ssize_t)bytes_of(x));
    close(fd);
    fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    return fd;
}

static void *read_back(int fd, uint64_t offset, size_t n)
{
    void *b = malloc(n);
    assert_non_null(b);
    assert_int_equal(pread(fd, b, n, (off_t)offset), (ssize_t)n);
    return b;
}

static cls_array fa(int fd, uint64_t off, const cls_array *x, const char *name)
{
    cls_array a = {.where = CLS_IN_FILE, .fd = fd, .offset = off, .dtype = x->dtype, .batch = x->batch, .rows = x->rows, .cols = x->cols, .path = name};
    return a;
}

static void assert_same_stats(const cls_stats *a, const cls_stats *b, double tol)
{
    cls_stats_info ia, ib;
    assert_int_equal(cls_stats_describe(a, &ia), CLS_OK);
    assert_int_equal(cls_stats_describe(b, &ib), CLS_OK);
    assert_int_equal(ia.groups, ib.groups);
    assert_int_equal(ia.cols, ib.cols);
    assert_int_equal(ia.rows, ib.rows);
    assert_int_equal(ia.has_moments, ib.has_moments);
    for (size_t g = 0; g < ia.groups; g++)
        for (size_t c = 0; c < ia.cols; c++) {
            cls_column_stats x, y;
            test_column(a, g, c, &x);
            test_column(b, g, c, &y);
            assert_int_equal(x.count, y.count);
            assert_int_equal(x.missing, y.missing);
            assert_close(x.min, y.min, 0);
            assert_close(x.max, y.max, 0);
            assert_close(x.absmax, y.absmax, 0);
            assert_close(x.mean, y.mean, tol);
            assert_close(x.m2, y.m2, tol);
            /* exact quantiles are exact however the file was read */
            assert_close(x.median, y.median, 0);
            assert_close(x.q_lo, y.q_lo, 0);
            assert_close(x.q_hi, y.q_hi, 0);
        }
    assert_int_equal(ia.scaler, ib.scaler);
    assert_int_equal(ia.has_quantiles, ib.has_quantiles);
    assert_close(ia.qmin, ib.qmin, 0);
    assert_close(ia.qmax, ib.qmax, 0);
    assert_int_equal(ia.unit_variance, ib.unit_variance);
}

/* Elementwise: equal bits when tol = 0, else within tol of the column's
 * scale (as compare_on_column_scale: outputs in [0, 1] or a few units). */
static void assert_same_data(const void *got, const void *want, cls_dtype t, size_t n, double tol, const char *label)
{
    if (tol == 0) {
        if (memcmp(got, want, n * es_of(t)) == 0) return;
        for (size_t i = 0; i < n; i++)
            if (memcmp((const char *)got + i * es_of(t), (const char *)want + i * es_of(t), es_of(t))) {
                double a = t == CLS_F64 ? ((const double *)got)[i] : ((const float *)got)[i];
                double b = t == CLS_F64 ? ((const double *)want)[i] : ((const float *)want)[i];
                fail_msg("%s: element %zu is %.17g, in memory %.17g (not byte-identical)", label, i, a, b);
            }
    }
    for (size_t i = 0; i < n; i++) {
        double a = t == CLS_F64 ? ((const double *)got)[i] : ((const float *)got)[i];
        double b = t == CLS_F64 ? ((const double *)want)[i] : ((const float *)want)[i];
        assert_close(a, b, tol);
    }
}

/* ---- streaming equals in memory ---- */

/* fit_transform of `base` (scaler, scope, factors set here) streamed
 * (buffer of `buf` bytes) against in memory. */
static void fit_transform_case_p(const cls_pipeline *base, cls_dtype t, cls_scaler sc, cls_scope scope, size_t b,
                                 size_t r, size_t c, size_t buf, const cls_array *factors, double tol,
                                 const char *label)
{
    if (!suite_runs(t)) test_skip("no %s on this implementation", t == CLS_F64 ? "float64" : "float32");
    cls_array x = make_data(t, b, r, c, 42 + sc);
    cls_pipeline p = *base;
    p.scaler = sc;
    p.scope = scope;
    p.factors = factors;
    cls_array y = make_out(&x);
    cls_stats *sm = NULL, *ss = NULL;
    cls_status st0 = cls_fit_transform(ctx, &p, &x, &y, sc == CLS_NONE && factors ? NULL : &sm);
    if (st0 != CLS_OK) fail_msg("%s: in memory: %s", label, cls_last_error(ctx));

    const uint64_t off = 100;  /* not aligned to anything */
    int in = write_at(path("in.bin"), &x, off);
    int out = open(path("out.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(out >= 0);
    cls_array a = fa(in, off, &x, "in.bin"), o = fa(out, 36, &x, "out.bin");
    cls_stream_opts opts = {buf, 3, 2, 0};
    cls_status st = (a.stream = &opts, cls_fit_transform(ctx, &p, &a, &o, sc == CLS_NONE && factors ? NULL : &ss));
    if (st != CLS_OK) fail_msg("%s: %s: %s", label, cls_status_str(st), cls_last_error(ctx));
    void *got = read_back(out, 36, bytes_of(&x));
    assert_same_data(got, y.data, t, x.batch * x.rows * x.cols, tol, label);
    if (sm) assert_same_stats(ss, sm, tol);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_true(rep.slices_done > 0);
    free(got);
    close(in);
    close(out);
    cls_stats_destroy(sm);
    cls_stats_destroy(ss);
    free(x.data);
    free(y.data);
}

static void fit_transform_case(cls_dtype t, cls_scaler sc, cls_scope scope, size_t b, size_t r, size_t c,
                               size_t buf, const cls_array *factors, double tol, const char *label)
{
    cls_pipeline base = {0};
    fit_transform_case_p(&base, t, sc, scope, b, r, c, buf, factors, tol, label);
}

/* Whole matrices per chunk: one pass, the same bits as in memory. */
static void one_pass_minmax_f64_is_byte_identical(void **s)
{
    (void)s;
    fit_transform_case(CLS_F64, CLS_MINMAX, CLS_SCOPE_MATRIX, 9, 40, 7, 2 * 40 * 7 * 8 + 100, NULL, 0, "minmax f64");
}

static void one_pass_zscore_f32_is_byte_identical(void **s)
{
    (void)s;
    fit_transform_case(CLS_F32, CLS_ZSCORE, CLS_SCOPE_MATRIX, 9, 40, 7, 3 * 40 * 7 * 4, NULL, 0, "zscore f32");
}

static void one_pass_decimal_f64_is_byte_identical(void **s)
{
    (void)s;
    fit_transform_case(CLS_F64, CLS_DECIMAL, CLS_SCOPE_MATRIX, 5, 33, 5, 33 * 5 * 8, NULL, 0, "decimal f64");
}

/* A matrix larger than a buffer: statistics pass, then scaling pass. */
static void two_pass_matrix_scope_matches(void **s)
{
    (void)s;
    fit_transform_case(CLS_F64, CLS_ZSCORE, CLS_SCOPE_MATRIX, 3, 500, 6, 4096, NULL, 1e-12, "zscore f64 2 passes");
    fit_transform_case(CLS_F32, CLS_MINMAX, CLS_SCOPE_MATRIX, 3, 500, 6, 4096, NULL, 1e-6, "minmax f32 2 passes");
}

static void two_pass_batch_scope_matches(void **s)
{
    (void)s;
    fit_transform_case(CLS_F64, CLS_ZSCORE, CLS_SCOPE_BATCH, 6, 70, 5, 8192, NULL, 1e-12, "zscore batch f64");
    fit_transform_case(CLS_F32, CLS_MINMAX, CLS_SCOPE_BATCH, 6, 70, 5, 8192, NULL, 1e-6, "minmax batch f32");
}

/* Robust scaling of groups that span chunks: the quantiles take counting
 * passes over the file (they do not merge across chunks; merging them gave
 * NaN statistics and an all-NaN output once). The same bits as in memory. */
static void robust_groups_larger_than_a_buffer_are_exact(void **s)
{
    (void)s;
    cls_pipeline wide = {.qmin = 10, .qmax = 97.5, .unit_variance = 1};
    fit_transform_case_p(&wide, CLS_F32, CLS_ROBUST, CLS_SCOPE_BATCH, 5, 41, 6, 2048, NULL, 0, "robust batch f32");
}

/* More of the same: float64, matrix scope in row blocks, cls_fit
 * alone. */
static void robust_groups_larger_than_a_buffer_more_cases(void **s)
{
    (void)s;
    if (test_suite_is("oclgrind")) test_skip("the simulator runs the first case only (30 s for all)");
    cls_pipeline dflt = {.qmin = 25, .qmax = 75};
    cls_pipeline wide = {.qmin = 10, .qmax = 97.5, .unit_variance = 1};
    fit_transform_case_p(&dflt, CLS_F64, CLS_ROBUST, CLS_SCOPE_BATCH, 6, 70, 5, 8192, NULL, 0, "robust batch f64");
    fit_transform_case_p(&dflt, CLS_F32, CLS_ROBUST, CLS_SCOPE_MATRIX, 3, 300, 6, 4096, NULL, 0,
                         "robust matrix f32 row blocks");
    fit_transform_case_p(&wide, CLS_F64, CLS_ROBUST, CLS_SCOPE_MATRIX, 2, 257, 4, 1000, NULL, 0,
                         "robust matrix f64 row blocks");
    /* cls_fit alone, batch scope over many chunks */
    if (!suite_runs(CLS_F64)) test_skip("no float64 on this implementation");
    cls_array x = make_data(CLS_F64, 7, 33, 5, 77);
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_BATCH, .qmin = 5, .qmax = 60};
    cls_stats *sm = NULL, *ss = NULL;
    assert_int_equal(cls_fit(ctx, &p, &x, &sm), CLS_OK);
    int in = write_at(path("r.bin"), &x, 8);
    cls_array a = fa(in, 8, &x, "r.bin");
    cls_stream_opts opts = {33 * 5 * 8, 2, 1, 0};
    cls_status st = (a.stream = &opts, cls_fit(ctx, &p, &a, &ss));
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_same_stats(ss, sm, 0);
    close(in);
    cls_stats_destroy(sm);
    cls_stats_destroy(ss);
    free(x.data);
}

/* The reads of the file (the report's phases) of robust scaling whose
 * groups span chunks. Rows in random order: the first counting pass (it
 * also fits the extremes) finds every wanted rank inside the window its
 * group's first chunk gave (quantiles/window.h), then the pass that
 * writes: 2 (also with ties at a window's ends, counted there rather than
 * copied); a fit alone 1. A trend along the rows (the first chunk
 * holds the lowest values): the windows miss, the first pass's 16-bit
 * digits narrow the wanted buckets enough for one sweep to gather them:
 * 3. Where neither may copy out more than one value (a switch of the
 * tests), a counting pass of 8 bits each until the key is whole: float64
 * 1 + 6 + 1, float32 1 + 2 + 1. The same bits as in memory every way. */
static void robust_of_groups_larger_than_a_buffer_reads_the_file_at_most_three_times(void **s)
{
    (void)s;
    cls_pipeline dflt = {.qmin = 25, .qmax = 75};
    cls_report rep;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F32 : CLS_F64;
        if (!suite_runs(dt)) continue;
        int rest = dt == CLS_F64 ? 6 : 2;
        fit_transform_case_p(&dflt, dt, CLS_ROBUST, CLS_SCOPE_BATCH, 6, 70, 5, 8192, NULL, 0, "robust batch");
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        assert_int_equal(rep.phases, 2);
        fit_transform_case_p(&dflt, dt, CLS_ROBUST, CLS_SCOPE_MATRIX, 2, 300, 6, 4096, NULL, 0,
                             "robust matrix row blocks");
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        assert_int_equal(rep.phases, 2);
        grain = 2; /* ties: a few values each a fifth of a column */
        fit_transform_case_p(&dflt, dt, CLS_ROBUST, CLS_SCOPE_BATCH, 6, 70, 5, 8192, NULL, 0, "robust batch, ties");
        grain = 0;
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        assert_int_equal(rep.phases, 2);
        ramp = 0.5; /* (a first chunk of at most 350 rows of 840) */
        fit_transform_case_p(&dflt, dt, CLS_ROBUST, CLS_SCOPE_BATCH, 12, 70, 5, 8192, NULL, 0, "robust batch, trend");
        ramp = 0;
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        assert_int_equal(rep.phases, 3);
        cls_context_tuning(ctx)->gather_bytes = 8;
        fit_transform_case_p(&dflt, dt, CLS_ROBUST, CLS_SCOPE_BATCH, 6, 70, 5, 8192, NULL, 0,
                             "robust batch, gather of one value");
        cls_context_tuning(ctx)->gather_bytes = 0;
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        assert_int_equal(rep.phases, 1 + rest + 1);
    }
    /* a fit alone: the counting pass */
    cls_dtype dt = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = make_data(dt, 7, 33, 5, 78);
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_BATCH, .qmin = 5, .qmax = 60};
    cls_stats *sm = NULL, *ss = NULL;
    assert_int_equal(cls_fit(ctx, &p, &x, &sm), CLS_OK);
    int in = write_at(path("r2.bin"), &x, 8);
    cls_array a = fa(in, 8, &x, "r2.bin");
    /* (chunks of 99 rows: enough values to guess from) */
    cls_stream_opts opts = {3 * 33 * 5 * es_of(dt), 2, 1, 0};
    cls_status st = (a.stream = &opts, cls_fit(ctx, &p, &a, &ss));
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);
    assert_same_stats(ss, sm, 0);
    close(in);
    cls_stats_destroy(sm);
    cls_stats_destroy(ss);
    free(x.data);
}

/* Groups whose rows do not fit a buffer but whose blocks of columns do
 * (runs of 4 KiB and more of each row): every pipeline in one pass over
 * the file (the report's phases), the same bits as in memory; blocks of
 * 600 columns of 1500 (the last 300), matrix and batch scope, robust,
 * min-max, cleaning with its per-group outputs, and a transform with given
 * statistics. */
static void column_blocks_hold_whole_groups_in_one_pass(void **s)
{
    (void)s;
    if (test_suite_is("oclgrind")) test_skip("the simulator: blocks of 4 KiB runs take minutes there");
    cls_pipeline dflt = {.qmin = 25, .qmax = 75};
    size_t R = 70, C = 1500;
    fit_transform_case_p(&dflt, CLS_F64, CLS_ROBUST, CLS_SCOPE_MATRIX, 2, R, C, R * 8 * 600, NULL, 0,
                         "robust f64 column blocks");
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);
    fit_transform_case(CLS_F64, CLS_MINMAX, CLS_SCOPE_MATRIX, 2, R, C, R * 8 * 600, NULL, 0,
                       "minmax f64 column blocks");
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);
    /* batch scope: a block holds every matrix's rows of its columns */
    fit_transform_case_p(&dflt, CLS_F32, CLS_ROBUST, CLS_SCOPE_BATCH, 3, R, C, 3 * R * 4 * 1100, NULL, 0,
                         "robust f32 batch column blocks");
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);

    /* cleaning: the per-group outputs land at their columns */
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    size_t es = es_of(t), B = 2, ne = B * C;
    cls_array x = make_data(t, B, R, C, 91);
    uint64_t *wm = calloc(ne, 8), *gm = calloc(ne, 8), *wc = calloc(ne, 8), *gc = calloc(ne, 8);
    double *wf = calloc(ne, 8), *gf = calloc(ne, 8), *wl = calloc(ne, 8), *gl = calloc(ne, 8);
    unsigned wi = 0, gi = 0;
    cls_clean c = {.impute = CLS_IMPUTE_MEDIAN, .sigma = 2.5, .maxiters = -1, .missing_out = wm, .clipped_out = wc,
                   .fill_out = wf, .lower_out = wl, .iterations_out = &wi};
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX, .clean = &c};
    cls_array y = make_out(&x);
    cls_stats *sm = NULL, *ss = NULL;
    assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, &sm), CLS_OK);
    c.missing_out = gm;
    c.clipped_out = gc;
    c.fill_out = gf;
    c.lower_out = gl;
    c.iterations_out = &gi;
    int in = write_at(path("kin.bin"), &x, 24);
    int out = open(path("kout.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(out >= 0);
    cls_array a = fa(in, 24, &x, "kin.bin"), o = fa(out, 0, &x, "kout.bin");
    cls_stream_opts opts = {R * es * (4096 / es + 7), 3, 2, 0};
    cls_status st = (a.stream = &opts, cls_fit_transform(ctx, &p, &a, &o, &ss));
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);
    void *got = read_back(out, 0, bytes_of(&x));
    assert_same_data(got, y.data, t, B * R * C, 0, "cleaning in column blocks");
    free(got);
    for (size_t e = 0; e < ne; e++) {
        assert_int_equal(gm[e], wm[e]);
        assert_int_equal(gc[e], wc[e]);
        assert_close(gf[e], wf[e], 0);
        assert_close(gl[e], wl[e], 0);
    }
    assert_int_equal(gi, wi);
    assert_same_stats(ss, sm, 0);
    /* a transform with those statistics, in the same blocks */
    cls_pipeline q = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    cls_array z = make_out(&x);
    assert_int_equal(cls_transform(ctx, &q, sm, &x, &z), CLS_OK);
    st = (a.stream = &opts, cls_transform(ctx, &q, sm, &a, &o));
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    got = read_back(out, 0, bytes_of(&x));
    assert_same_data(got, z.data, t, B * R * C, 0, "transform in column blocks");
    free(got);
    close(in);
    close(out);
    cls_stats_destroy(sm);
    cls_stats_destroy(ss);
    free(wm), free(gm), free(wc), free(gc), free(wf), free(gf), free(wl), free(gl);
    free(x.data);
    free(y.data);
    free(z.data);
}

/* Discount alone, factors rows x cols, and fused with a scaler, factors
 * batch x rows x cols; row blocks of one matrix per chunk. */
static void discount_in_row_blocks_is_byte_identical(void **s)
{
    (void)s;
    cls_array f2 = make_data(CLS_F64, 1, 300, 4, 7), f3 = make_data(CLS_F64, 2, 300, 4, 8);
    fit_transform_case(CLS_F64, CLS_NONE, CLS_SCOPE_MATRIX, 2, 300, 4, 1024, &f2, 0, "discount 2-D factors");
    fit_transform_case(CLS_F64, CLS_MINMAX, CLS_SCOPE_MATRIX, 2, 300, 4, 300 * 4 * 8, &f3, 0, "minmax x 3-D factors");
    free(f2.data);
    free(f3.data);
}

/* Transform (and inverse) with given statistics, and the statistics pass. */
static void transform_and_fit_are_byte_identical(void **s)
{
    (void)s;
    cls_array x = make_data(CLS_F64, 4, 64, 6, 5);
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    cls_stats *sm = NULL, *ss = NULL;
    assert_int_equal(cls_fit(ctx, &p, &x, &sm), CLS_OK);
    int in = write_at(path("t.bin"), &x, 64);
    cls_array a = fa(in, 64, &x, "t.bin");
    cls_stream_opts opts = {64 * 6 * 8, 2, 1, 0};
    assert_int_equal((a.stream = &opts, cls_fit(ctx, &p, &a, &ss)), CLS_OK);
    assert_same_stats(ss, sm, 0);
    for (int inv = 0; inv < 2; inv++) {
        p.inverse = inv;
        cls_array y = make_out(&x);
        assert_int_equal(cls_transform(ctx, &p, sm, &x, &y), CLS_OK);
        int out = open(path("t-out.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
        cls_array o = fa(out, 0, &x, "t-out.bin");
        cls_status st = (a.stream = &opts, cls_transform(ctx, &p, ss, &a, &o));
        if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
        void *got = read_back(out, 0, bytes_of(&x));
        assert_same_data(got, y.data, CLS_F64, 4 * 64 * 6, 0, inv ? "inverse" : "transform");
        free(got);
        free(y.data);
        close(out);
    }
    close(in);
    cls_stats_destroy(sm);
    cls_stats_destroy(ss);
    free(x.data);
}

/* ---- .npy file to file ---- */

static size_t temps_in_dir(void)
{
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp\\.' || true", dir);
    FILE *f = popen(cmd, "r");
    size_t n = 0;
    if (f) {
        if (fscanf(f, "%zu", &n) != 1) n = 0;
        pclose(f);
    }
    return n;
}

static void stream_file_matches_in_memory(void **s)
{
    (void)s;
    cls_array x = make_data(CLS_F64, 5, 30, 4, 11);
    test_write_npy(path("x.npy"), &x);
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX, .lo = -1, .hi = 1, .clip = 1};
    cls_array y = make_out(&x);
    assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
    cls_stats *fitted = NULL;
    cls_stream_opts opts = {2 * 30 * 4 * 8, 2, 2, 0};
    cls_status st = cls_fit_transform(ctx, &p, &(cls_array){.where = CLS_IN_NPY, .path = path("x.npy"), .stream = &opts}, &(cls_array){.where = CLS_IN_NPY, .path = path("y.npy")}, &fitted);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_non_null(fitted);
    struct stat sb;
    assert_int_equal(stat(path("y.npy"), &sb), 0);
    int fd = open(path("y.npy"), O_RDONLY);
    void *got = read_back(fd, (uint64_t)sb.st_size - bytes_of(&x), bytes_of(&x));
    assert_same_data(got, y.data, CLS_F64, 5 * 30 * 4, 0, "stream_file");
    close(fd);
    free(got);
    /* apply with the fitted statistics, the recorded pipeline */
    st = cls_transform(ctx, NULL, fitted, &(cls_array){.where = CLS_IN_NPY, .path = path("x.npy")}, &(cls_array){.where = CLS_IN_NPY, .path = path("y2.npy")});
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(temps_in_dir(), 0);
    cls_stats_destroy(fitted);
    free(x.data);
    free(y.data);
}

/* ---- bad input ---- */

static void expect_error(cls_status st, cls_status want, const char *needle1, const char *needle2)
{
    if (st != want) fail_msg("status %s, expected %s: %s", cls_status_str(st), cls_status_str(want), cls_last_error(ctx));
    const char *m = cls_last_error(ctx);
    if (!strstr(m, needle1) || (needle2 && !strstr(m, needle2)))
        fail_msg("message \"%s\" lacks \"%s\"%s%s", m, needle1, needle2 ? " or " : "", needle2 ? needle2 : "");
}

/* A cleaning stage (median imputation, 3-sigma clipping) streams when each
 * matrix fits a buffer: the same bits as cls_fit_transform in memory, with
 * and without a scaler after it; when a group does not fit, the call is
 * CLS_E_UNSUPPORTED and writes nothing that counts. */
static void cleaning_streams_whole_groups_or_their_passes(void **s)
{
    (void)s;
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = make_data(t, 5, 40, 6, 77);
    cls_clean c = {.impute = CLS_IMPUTE_MEDIAN, .sigma = 3};
    cls_scaler scalers[2] = {CLS_NONE, CLS_ZSCORE};
    for (int k = 0; k < 2; k++) {
        cls_pipeline p = {.scaler = scalers[k], .scope = CLS_SCOPE_MATRIX, .clean = &c};
        cls_array y = make_out(&x);
        /* the cleaning's outputs, per matrix and column: in memory (w_) and
         * streamed (g_), whichever chunk a matrix is in */
        uint64_t w_miss[30], w_clip[30], g_miss[30], g_clip[30];
        double w_fill[30], g_fill[30], w_lo[30], w_hi[30], g_lo[30], g_hi[30];
        unsigned w_it = 0, g_it = 0;
        c.missing_out = w_miss;
        c.clipped_out = w_clip;
        c.fill_out = w_fill;
        c.iterations_out = &w_it;
        c.lower_out = w_lo;
        c.upper_out = w_hi;
        assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
        c.missing_out = g_miss;
        c.clipped_out = g_clip;
        c.fill_out = g_fill;
        c.iterations_out = &g_it;
        c.lower_out = g_lo;
        c.upper_out = g_hi;
        int in = write_at(path("cin.bin"), &x, 64);
        int out = open(path("cout.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
        assert_true(out >= 0);
        cls_array a = fa(in, 64, &x, "cin.bin"), o = fa(out, 0, &x, "cout.bin");
        cls_stream_opts opts = {2 * 40 * 6 * es_of(t), 3, 2, 0}; /* two matrices a chunk */
        cls_status st = (a.stream = &opts, cls_fit_transform(ctx, &p, &a, &o, NULL));
        if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
        void *got = read_back(out, 0, bytes_of(&x));
        assert_same_data(got, y.data, t, x.batch * x.rows * x.cols, 0, "cleaning streamed");
        free(got);
        for (size_t e = 0; e < 30; e++) {
            assert_int_equal(g_miss[e], w_miss[e]);
            assert_int_equal(g_clip[e], w_clip[e]);
            assert_close(g_fill[e], w_fill[e], 0);
            assert_close(g_lo[e], w_lo[e], 0);
            assert_close(g_hi[e], w_hi[e], 0);
        }
        assert_int_equal(g_it, w_it);
        /* a buffer smaller than a matrix: the cleaning stage's passes over
         * the file; the medians are exact, the z-score's moments are
         * merged over the chunks in another order */
        cls_stream_opts small = {40 * 6 * es_of(t) / 2, 3, 2, 0};
        if (!test_suite_is("oclgrind")) { /* tens of passes: 20 s in the simulator */
            memset(g_miss, 0xff, sizeof g_miss);
            memset(g_lo, 0, sizeof g_lo);
            st = (a.stream = &small, cls_fit_transform(ctx, &p, &a, &o, NULL));
            if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
            for (size_t e = 0; e < 30; e++) {
                assert_int_equal(g_miss[e], w_miss[e]);
                assert_int_equal(g_clip[e], w_clip[e]);
                assert_close(g_fill[e], w_fill[e], 0);
                /* the moments merged in another order: the bounds within rounding */
                assert_close(g_lo[e], w_lo[e], t == CLS_F64 ? 1e-12 : 1e-6);
                assert_close(g_hi[e], w_hi[e], t == CLS_F64 ? 1e-12 : 1e-6);
            }
            assert_int_equal(g_it, w_it);
            got = read_back(out, 0, bytes_of(&x));
            assert_same_data(got, y.data, t, x.batch * x.rows * x.cols, k ? (t == CLS_F64 ? 1e-12 : 1e-5) : 0,
                             "cleaning streamed in row blocks");
            free(got);
        }
        close(in);
        close(out);
        free(y.data);
    }
    c.missing_out = c.clipped_out = NULL;
    c.fill_out = NULL;
    c.iterations_out = NULL;
    free(x.data);
}

static void shorter_than_its_array_fails_before_work(void **s)
{
    (void)s;
    cls_array x = make_data(CLS_F32, 2, 10, 3, 1);
    int in = write_at(path("short.bin"), &x, 0);
    cls_array big = x;
    big.batch = 3;
    cls_array a = fa(in, 0, &big, "short.bin");
    cls_stats *st_out = NULL;
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX};
    expect_error(cls_fit(ctx, &p, &a, &st_out), CLS_E_IO, "short.bin", "ends at byte 360");
    assert_null(st_out);
    close(in);
    free(x.data);
}

/* ---- progress ---- */

typedef struct prog {
    uint64_t done, total, max_total;
    unsigned calls, passes, last_n;
    int      more, bad;
    uint64_t pass_bytes;  /* the told passes' bytes, summed */
    char     why[256];
} prog;

static void prog_fn(void *user, uint64_t done, uint64_t total)
{
    prog *g = user;
    if (!g->bad && (done > total || done < g->done)) {
        snprintf(g->why, sizeof g->why, "done %llu of %llu after %llu", (unsigned long long)done,
                 (unsigned long long)total, (unsigned long long)g->done);
        g->bad = 1;
    }
    g->done = done;
    g->total = total;
    if (total > g->max_total) g->max_total = total;
    g->calls++;
}

static void pass_fn(void *user, unsigned k, unsigned n, int more, uint64_t first, uint64_t bytes)
{
    prog *g = user;
    if (!g->bad && (k != g->passes + 1 || n < k || n < g->last_n || first != g->done || (g->passes && !g->more && more))) {
        snprintf(g->why, sizeof g->why, "pass %u/%u%s from %llu after pass %u/%u%s at %llu", k, n, more ? "+" : "",
                 (unsigned long long)first, g->passes, g->last_n, g->more ? "+" : "", (unsigned long long)g->done);
        g->bad = 1;
    }
    g->passes = k;
    g->last_n = n;
    g->more = more;
    g->pass_bytes += bytes;
}

/* Streams `p` over x with small chunks; the progress must count exactly
 * the passes that ran: the total never above the work done by the end,
 * done = total at the end, the passes told in order, the last one final. */
static unsigned progress_of(const cls_array *x, const cls_pipeline *p, size_t buf, const char *what)
{
    prog g;
    memset(&g, 0, sizeof g);
    cls_config cfg = {0};
    cfg.progress = prog_fn;
    cfg.pass = pass_fn;
    cfg.progress_user = &g;
    cls_context *c2 = NULL;
    assert_int_equal(cls_context_create(&cfg, &c2), CLS_OK);
    int in = write_at(path("pin.bin"), x, 0);
    int out = open(path("pout.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(out >= 0);
    cls_array a = fa(in, 0, x, "pin.bin"), o = fa(out, 0, x, "pout.bin");
    cls_stream_opts opts = {buf, 3, 2, 0};
    cls_status st = (a.stream = &opts, cls_fit_transform(c2, p, &a, &o, NULL));
    if (st != CLS_OK) fail_msg("%s: %s: %s", what, cls_status_str(st), cls_last_error(c2));
    cls_context_destroy(c2);
    close(in);
    close(out);
    if (g.bad) fail_msg("%s: %s", what, g.why);
    if (!g.calls || !g.passes) fail_msg("%s: no progress (%u calls, %u passes)", what, g.calls, g.passes);
    if (g.done != g.total || g.max_total > g.total)
        fail_msg("%s: ended at %llu of %llu, the total having been %llu", what, (unsigned long long)g.done,
                 (unsigned long long)g.total, (unsigned long long)g.max_total);
    if (g.more || g.last_n != g.passes || g.pass_bytes != g.total)
        fail_msg("%s: the last pass told %u/%u%s, passes of %llu bytes for a total of %llu", what, g.passes,
                 g.last_n, g.more ? "+" : "", (unsigned long long)g.pass_bytes, (unsigned long long)g.total);
    return g.passes;
}

static void progress_counts_the_passes_that_run(void **s)
{
    (void)s;
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = make_data(t, 4, 64, 6, 91);
    size_t matrix = x.rows * x.cols * es_of(t);
    /* whole matrices a chunk: one pass */
    cls_pipeline one = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX, .lo = 0, .hi = 1};
    assert_int_equal(progress_of(&x, &one, 2 * matrix, "minmax per matrix"), 1);
    /* groups across chunks (a quarter of a matrix each): a fit, then the transform */
    assert_int_equal(progress_of(&x, &one, matrix / 4, "minmax per matrix, split"), 2);
    cls_pipeline two = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH};
    assert_int_equal(progress_of(&x, &two, matrix, "zscore batch"), 2);
    /* the extremes, the counting passes the data need, the transform */
    cls_pipeline rob = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_BATCH, .qmin = 25, .qmax = 75};
    unsigned n = progress_of(&x, &rob, matrix / 4, "robust batch");
    if (n < 2) fail_msg("robust batch: %u passes", n);
    cls_clean c = {.impute = CLS_IMPUTE_MEDIAN, .sigma = 3, .maxiters = 5};
    cls_pipeline cl = {.scaler = CLS_NONE, .scope = CLS_SCOPE_BATCH, .clean = &c};
    n = progress_of(&x, &cl, matrix / 4, "sigma clip and median fill, batch");
    if (n < 3) fail_msg("clean batch: %u passes", n);
    free(x.data);
}

/* The progress callback runs on the computing thread after each chunk:
 * the tests change the input there, as another process could. */
typedef struct meddle {
    const char *path;
    int         what;   /* 0 truncate, 1 append, 2 overwrite a byte */
    uint64_t    at;
    int         done;
} meddle;

static void meddle_fn(void *user, uint64_t done, uint64_t total)
{
    meddle *m = user;
    (void)done;
    (void)total;
    if (m->done++) return;
    if (m->what == 0) assert_int_equal(truncate(m->path, (off_t)m->at), 0);
    else {
        int fd = open(m->path, O_WRONLY);
        assert_true(fd >= 0);
        char c = 1;
        struct stat sb;
        fstat(fd, &sb);
        assert_int_equal(pwrite(fd, &c, 1, m->what == 1 ? sb.st_size : (off_t)m->at), 1);
        /* the modification time one second on, as a later write shows it
         * on any clock's granularity (rather than waiting for a tick) */
        struct timespec t[2] = {{0, UTIME_OMIT}, sb.st_mtim};
        t[1].tv_sec += 1;
        assert_int_equal(futimens(fd, t), 0);
        close(fd);
    }
}

static void changed_while_read(int what, const char *needle1, const char *needle2)
{
    /* 16 chunks of one matrix, 2 buffers: when chunk 0 is done, chunk 3's
     * read has not started (it waits for chunk 1's write) */
    cls_array x = make_data(CLS_F64, 16, 8, 4, 3);
    const size_t mb = 8 * 4 * 8;
    test_write_npy(path("m.npy"), &x);
    struct stat sb;
    assert_int_equal(stat(path("m.npy"), &sb), 0);
    uint64_t hdr = (uint64_t)sb.st_size - bytes_of(&x);
    assert_int_equal(unlink(path("out.npy")) == 0 || errno == ENOENT, 1);
    FILE *f = fopen(path("out.npy"), "w");
    fputs("old", f);
    fclose(f);

    cls_config cfg = {0};
    meddle m = {path("m.npy"), what, hdr + 3 * mb, 0};
    cfg.progress = meddle_fn;
    cfg.progress_user = &m;
    cls_context *c2 = NULL;
    assert_int_equal(cls_context_create(&cfg, &c2), CLS_OK);
    cls_context *keep = ctx;
    ctx = c2;
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX};
    cls_stream_opts opts = {mb, 2, 1, 0};
    char want[64];
    snprintf(want, sizeof want, "%s", needle2 ? needle2 : "");
    if (what == 0) snprintf(want, sizeof want, "ends at byte %llu", (unsigned long long)(hdr + 3 * mb));
    expect_error(cls_fit_transform(ctx, &p, &(cls_array){.where = CLS_IN_NPY, .path = path("m.npy"), .stream = &opts}, &(cls_array){.where = CLS_IN_NPY, .path = path("out.npy")}, NULL), CLS_E_IO, needle1,
                 want[0] ? want : NULL);
    ctx = keep;
    cls_context_destroy(c2);
    assert_int_equal(stat(path("out.npy"), &sb), 0);
    assert_int_equal(sb.st_size, 3);  /* as it was */
    assert_int_equal(temps_in_dir(), 0);
    free(x.data);
}

static void input_truncated_while_read_names_the_offset(void **s)
{
    (void)s;
    changed_while_read(0, "m.npy", NULL);
}

static void input_growing_while_read_fails(void **s)
{
    (void)s;
    changed_while_read(1, "m.npy", "changed size while being read");
}

static void input_written_while_read_fails(void **s)
{
    (void)s;
    changed_while_read(2, "m.npy", "written to while being read");
}

/* A descriptor pread() cannot read: the error names it and the offset. */
static void read_error_names_the_offset(void **s)
{
    (void)s;
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    cls_array x = {.data = NULL, .dtype = CLS_F32, .batch = 1, .rows = 4, .cols = 4};
    cls_array a = {.where = CLS_IN_FILE, .fd = pfd[0], .offset = 4096, .dtype = CLS_F32, .batch = 1, .rows = 4, .cols = 4, .path = "the pipe"};
    cls_stats *out = NULL;
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX};
    (void)x;
    expect_error(cls_fit(ctx, &p, &a, &out), CLS_E_IO, "the pipe: read error at byte 4096", NULL);
    close(pfd[0]);
    close(pfd[1]);
}

/* A disk that is full: /dev/full answers every write with ENOSPC. */
static void full_disk_names_the_offset(void **s)
{
    (void)s;
    int full = open("/dev/full", O_WRONLY);
    if (full < 0) test_skip("no /dev/full here");
    cls_array x = make_data(CLS_F32, 3, 16, 4, 9);
    int in = write_at(path("f.bin"), &x, 0);
    cls_array a = fa(in, 0, &x, "f.bin"), o = fa(full, 128, &x, "/dev/full");
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX};
    cls_stream_opts opts = {16 * 4 * 4, 2, 1, 0};
    expect_error((a.stream = &opts, cls_fit_transform(ctx, &p, &a, &o, NULL)), CLS_E_IO,
                 "/dev/full: write error at byte 128", strerror(ENOSPC));
    close(in);
    close(full);
    free(x.data);
}

static void bad_arguments_fail_before_any_io(void **s)
{
    (void)s;
    cls_array x = {.data = NULL, .dtype = CLS_F32, .batch = 2, .rows = 3, .cols = 4};
    cls_array a = fa(-1, 0, &x, "a"), b = fa(0, 0, &x, "b");
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_MATRIX};
    cls_stats *out = NULL;
    assert_int_equal(cls_fit(ctx, &p, &a, &out), CLS_E_ARG);
    assert_int_equal(cls_fit(ctx, &p, NULL, &out), CLS_E_ARG);
    assert_int_equal(cls_fit(NULL, &p, &b, &out), CLS_E_ARG);
    b.cols = 0;
    assert_int_equal(cls_fit(ctx, &p, &b, &out), CLS_E_ARG);
    /* a scaler without statistics to transform with */
    cls_array y = make_data(CLS_F32, 2, 3, 4, 2);
    int in = write_at(path("arg.bin"), &y, 0);
    cls_array c = fa(in, 0, &y, "arg.bin"), d = fa(in, bytes_of(&y), &y, "arg.bin");
    assert_int_equal(cls_transform(ctx, &p, NULL, &c, &d), CLS_E_ARG);
    /* an npy file that is not one */
    expect_error(cls_fit_transform(ctx, &p, &(cls_array){.where = CLS_IN_NPY, .path = path("arg.bin")}, &(cls_array){.where = CLS_IN_NPY, .path = path("never.npy")}, NULL), CLS_E_FORMAT,
                 "arg.bin", NULL);
    struct stat sb;
    assert_int_equal(stat(path("never.npy"), &sb), -1);
    assert_int_equal(temps_in_dir(), 0);
    close(in);
    free(y.data);
}

static int setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "stream");
    ctx = test_context(NULL, 0, 0);
    return ctx ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cls_context_destroy(ctx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_pass_minmax_f64_is_byte_identical),
        cmocka_unit_test(one_pass_zscore_f32_is_byte_identical),
        cmocka_unit_test(one_pass_decimal_f64_is_byte_identical),
        cmocka_unit_test(two_pass_matrix_scope_matches),
        cmocka_unit_test(two_pass_batch_scope_matches),
        cmocka_unit_test(robust_groups_larger_than_a_buffer_are_exact),
        cmocka_unit_test(robust_groups_larger_than_a_buffer_more_cases),
        cmocka_unit_test(robust_of_groups_larger_than_a_buffer_reads_the_file_at_most_three_times),
        cmocka_unit_test(column_blocks_hold_whole_groups_in_one_pass),
        cmocka_unit_test(discount_in_row_blocks_is_byte_identical),
        cmocka_unit_test(transform_and_fit_are_byte_identical),
        cmocka_unit_test(stream_file_matches_in_memory),
        cmocka_unit_test(cleaning_streams_whole_groups_or_their_passes),
        cmocka_unit_test(progress_counts_the_passes_that_run),
        cmocka_unit_test(shorter_than_its_array_fails_before_work),
        cmocka_unit_test(input_truncated_while_read_names_the_offset),
        cmocka_unit_test(input_growing_while_read_fails),
        cmocka_unit_test(input_written_while_read_fails),
        cmocka_unit_test(read_error_names_the_offset),
        cmocka_unit_test(full_disk_names_the_offset),
        cmocka_unit_test(bad_arguments_fail_before_any_io),
    };
    return TEST_RUN("stream", tests, setup, teardown);
}
