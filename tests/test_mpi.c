/* cls_mpi_*: run by meson under `mpirun -n 1..4` (one PoCL basic device per
 * rank). Every rank makes the same seeded array, takes its part of it by a
 * split (even, uneven, everything on one rank, rank 0 empty), and checks the
 * combined result against a single-process fit of the whole array on the
 * same rank: counts and extremes equal, mean and m2 to 1e-12 relative; and
 * that every rank holds the same bits.
 *
 * Each test makes all of its collective calls before its first assertion, so
 * that a failing rank never leaves the others waiting in a collective. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "clscale_mpi.h"
#include "fault_ctl.h"
#include "mpi_main.h"

static cls_context *ctx;  /* small slices: the single-process fit merges many */
static int rank, size;

enum split { EVEN, UNEVEN, ALL_ON_LAST, FIRST_EMPTY, NSPLITS };
static const char *split_name[] = {"even", "uneven", "all on the last rank", "rank 0 empty"};

/* This rank's [first, first + count) of n under split s. */
static void split_of(int s, size_t n, size_t *first, size_t *count)
{
    size_t lo = 0, hi = 0, k = (size_t)rank, m = (size_t)size;
    switch (s) {
    case EVEN:
        lo = n * k / m;
        hi = n * (k + 1) / m;
        break;
    case UNEVEN: { /* weights 1, 3, 2, 5, ...: a rank of weight w takes w parts */
        static const size_t w[] = {1, 3, 2, 5, 4, 1, 2, 3};
        size_t total = 0, before = 0;
        for (size_t r = 0; r < m; r++) {
            if (r < k) before += w[r % 8];
            total += w[r % 8];
        }
        lo = n * before / total;
        hi = n * (before + w[k % 8]) / total;
        break;
    }
    case ALL_ON_LAST:
        lo = k + 1 == m ? 0 : n;
        hi = n;
        break;
    case FIRST_EMPTY:
        lo = k == 0 ? 0 : m == 1 ? 0 : n * (k - 1) / (m - 1);
        hi = k == 0 ? (m == 1 ? n : 0) : n * k / (m - 1);
        break;
    }
    *first = lo;
    *count = hi - lo;
}

/* Columns of every kind: spread values, NaN and Inf among them, constant,
 * all missing, a mean 1e4 times the spread, all negative. */
static void *make(cls_dtype t, size_t B, size_t R, size_t C, uint64_t seed)
{
    size_t n = B * R * C;
    void *p = malloc(n * (t == CLS_F64 ? 8 : 4));
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < n; i++) {
        size_t c = i % C, row = i / C;
        double v;
        switch (c % 6) {
        case 0: v = 5 + 3 * rng_normal(&g); break;
        case 1: v = row % 7 == 3 ? NAN : row % 11 == 5 ? (row % 2 ? INFINITY : -INFINITY) : rng_range(&g, -8, 9); break;
        case 2: v = 2.5; break;
        case 3: v = NAN; break;
        case 4: v = 1e4 + rng_normal(&g); break;
        default: v = rng_range(&g, -100, -1); break;
        }
        if (t == CLS_F64) ((double *)p)[i] = v;
        else ((float *)p)[i] = (float)v;
    }
    return p;
}

static uint64_t hash_columns(cls_stats *s)
{
    cls_stats_info si;
    cls_stats_describe(s, &si);
    const unsigned char *b = (const unsigned char *)cls_stats_columns(s);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < si.groups * si.cols * sizeof(cls_column_stats); i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* 1 when every rank's statistics have the same bits (collective). */
static int same_on_every_rank(cls_stats *s)
{
    uint64_t h = s ? hash_columns(s) : 0, lo = h, hi = h;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

static void assert_same_bits(double a, double e, const char *what, size_t g, size_t c)
{
    if (!(a == e || (isnan(a) && isnan(e)))) fail_msg("%s of group %zu column %zu: %.17g, expected %.17g", what, g, c, a, e);
}

/* |a - e| <= tol |e| (NaN equals NaN); m2 of a constant column is 0 in both. */
static void assert_rel(double a, double e, double tol, const char *what, size_t g, size_t c)
{
    if (isnan(e) ? !isnan(a) : fabs(a - e) > tol * fabs(e))
        fail_msg("%s of group %zu column %zu: %.17g, expected %.17g (relative tolerance %g)", what, g, c, a, e, tol);
}

/* How far two correct summation orders may part on a column: 1e-12, plus
 * the rounding of the values themselves where the mean is k times the
 * spread (1e4 +- 1 in float64 is only known to 1.8e-12, so deviations from
 * the mean, and m2 and z-scores made of them, to about k * eps). */
static double column_tol(double tol, const cls_column_stats *c)
{
    if (tol == 0 || c->count == 0 || !(c->m2 > 0)) return tol;
    double k = fabs(c->mean) / sqrt(c->m2 / (double)c->count);
    return tol + 8 * DBL_EPSILON * k;
}

/* `got` groups [g0, g0 + groups of got) against `want`. */
static void assert_stats(cls_stats *got, cls_stats *want, size_t g0, double tol)
{
    cls_stats_info a, e;
    assert_int_equal(cls_stats_describe(got, &a), CLS_OK);
    assert_int_equal(cls_stats_describe(want, &e), CLS_OK);
    assert_int_equal(a.cols, e.cols);
    assert_int_equal(a.scope, e.scope);
    assert_int_equal(a.scaler, e.scaler);
    assert_int_equal(a.dtype, e.dtype);
    assert_int_equal(a.has_moments, e.has_moments);
    assert_true(a.rows == e.rows);
    assert_true(g0 + a.groups <= e.groups);
    for (size_t g = 0; g < a.groups; g++)
        for (size_t c = 0; c < a.cols; c++) {
            cls_column_stats x, y;
            assert_int_equal(test_column(got, g, c, &x), CLS_OK);
            assert_int_equal(test_column(want, g0 + g, c, &y), CLS_OK);
            if (x.count != y.count || x.missing != y.missing)
                fail_msg("group %zu column %zu: count %llu missing %llu, expected %llu and %llu", g, c,
                         (unsigned long long)x.count, (unsigned long long)x.missing, (unsigned long long)y.count,
                         (unsigned long long)y.missing);
            assert_same_bits(x.min, y.min, "min", g, c);
            assert_same_bits(x.max, y.max, "max", g, c);
            assert_same_bits(x.absmax, y.absmax, "absmax", g, c);
            /* a mean near 0 is known to a fraction of the spread, not of itself */
            double sd = y.count ? sqrt(y.m2 / (double)y.count) : 0;
            assert_rel(x.mean, y.mean, tol * (fabs(y.mean) > sd || !(sd > 0) ? 1 : sd / fabs(y.mean)), "mean", g, c);
            assert_rel(x.m2, y.m2, column_tol(tol, &y), "m2", g, c);
        }
}

static cls_array view(void *base, cls_dtype t, size_t first, size_t count, size_t unit, size_t batch, size_t rows,
                      size_t cols)
{
    size_t es = t == CLS_F64 ? 8 : 4;
    cls_array a = {.data = count ? (char *)base + first * unit * es : NULL, .dtype = t, .batch = batch, .rows = rows, .cols = cols};
    return a;
}

/* Batch scope: rows of B x R cut across ranks by every split. */
static void batch_case(cls_dtype t, cls_scaler scaler, size_t B, size_t R, size_t C, double tol)
{
    void *x = make(t, B, R, C, 42 + C);
    cls_pipeline p = {.scaler = scaler, .scope = CLS_SCOPE_BATCH};
    cls_array whole = {.data = x, .dtype = t, .batch = B, .rows = R, .cols = C};
    cls_stats *single = NULL, *got[NSPLITS] = {NULL};
    cls_status st[NSPLITS], sst = cls_fit(ctx, &p, &whole, &single);
    int same[NSPLITS];
    char why[NSPLITS][512];
    for (int s = 0; s < NSPLITS; s++) {
        size_t first, count;
        split_of(s, B * R, &first, &count);
        cls_array mine = view(x, t, first, count, C, 1, count, C);
        st[s] = cls_mpi_fit(ctx, MPI_COMM_WORLD, &p, &mine, &got[s]);
        snprintf(why[s], sizeof why[s], "%s", cls_last_error(ctx));
        same[s] = same_on_every_rank(got[s]);
    }
    assert_int_equal(sst, CLS_OK);
    for (int s = 0; s < NSPLITS; s++) {
        if (st[s] != CLS_OK) fail_msg("split %s: %s: %s", split_name[s], cls_status_str(st[s]), why[s]);
        assert_stats(got[s], single, 0, tol);
        if (!same[s]) fail_msg("split %s: the ranks hold different bits", split_name[s]);
        cls_stats_destroy(got[s]);
    }
    cls_stats_destroy(single);
    free(x);
}

static void batch_f64_all_statistics(void **state)
{
    (void)state;
    batch_case(CLS_F64, CLS_NONE, 3, 37, 13, 1e-12);
}

static void batch_f64_zscore_single_matrix(void **state)
{
    (void)state;
    batch_case(CLS_F64, CLS_ZSCORE, 1, 101, 7, 1e-12);
}

static void batch_f32_minmax(void **state)
{
    (void)state;
    batch_case(CLS_F32, CLS_MINMAX, 4, 9, 11, 0);
}

/* ~1.7 MB of statistics per rank: Open MPI's large-message allreduce
 * (segmented ring) still gives every rank the same bits. */
static void batch_wide_table_same_bits(void **state)
{
    (void)state;
    batch_case(CLS_F64, CLS_NONE, 1, 6, 30001, 1e-12);
}

/* Statistics a rank fitted itself (in two chunks, merged), combined by
 * cls_mpi_stats_allreduce: what cls_mpi_fit gives, bit for bit in the exact
 * fields. */
static void stats_allreduce_of_own_fits(void **state)
{
    (void)state;
    size_t B = 2, R = 31, C = 9;
    void *x = make(CLS_F64, B, R, C, 11);
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH};
    cls_array whole = {.data = x, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
    cls_stats *single = NULL, *a = NULL, *b = NULL, *merged = NULL;
    cls_status sst = cls_fit(ctx, &p, &whole, &single);
    size_t first, count;
    split_of(EVEN, B * R, &first, &count);
    /* every rank has rows here (62 rows, at most 4 ranks): two chunks */
    size_t h = count / 2;
    cls_array c1 = view(x, CLS_F64, first, h ? h : count, C, 1, h ? h : count, C);
    cls_array c2 = view(x, CLS_F64, first + h, count - h, C, 1, count - h, C);
    cls_status s1 = cls_fit(ctx, &p, &c1, &a);
    cls_status s2 = h ? cls_fit(ctx, &p, &c2, &b) : CLS_OK;
    cls_status s3 = s1 == CLS_OK && s2 == CLS_OK && b ? cls_stats_merge(a, b) : s1;
    cls_status st = cls_mpi_stats_allreduce(MPI_COMM_WORLD, a, &merged);
    int same = same_on_every_rank(merged);
    assert_int_equal(sst, CLS_OK);
    assert_int_equal(s1, CLS_OK);
    assert_int_equal(s2, CLS_OK);
    assert_int_equal(s3, CLS_OK);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(NULL));
    assert_stats(merged, single, 0, 1e-12);
    assert_true(same);
    cls_stats_destroy(single);
    cls_stats_destroy(a);
    cls_stats_destroy(b);
    cls_stats_destroy(merged);
    free(x);
}

/* Matrix scope: whole matrices per rank, fitted alone, gathered on root. */
static void matrix_fit_local_and_gathered(void **state)
{
    (void)state;
    size_t B = 5, R = 23, C = 7;
    void *x = make(CLS_F64, B, R, C, 7);
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    cls_array whole = {.data = x, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
    cls_stats *single = NULL, *got[NSPLITS] = {NULL}, *all[NSPLITS] = {NULL};
    cls_status sst = cls_fit(ctx, &p, &whole, &single), st[NSPLITS], gst[NSPLITS];
    size_t first[NSPLITS], count[NSPLITS];
    for (int s = 0; s < NSPLITS; s++) {
        split_of(s, B, &first[s], &count[s]);
        cls_array mine = view(x, CLS_F64, first[s], count[s], R * C, count[s], R, C);
        st[s] = cls_mpi_fit(ctx, MPI_COMM_WORLD, &p, &mine, &got[s]);
        gst[s] = cls_mpi_stats_gather(MPI_COMM_WORLD, 0, got[s], &all[s]);
    }
    assert_int_equal(sst, CLS_OK);
    for (int s = 0; s < NSPLITS; s++) {
        assert_int_equal(st[s], CLS_OK);
        assert_int_equal(gst[s], CLS_OK);
        cls_stats_info si;
        cls_stats_describe(got[s], &si);
        assert_true(si.groups == count[s]);
        if (count[s]) assert_stats(got[s], single, first[s], 1e-12);
        if (rank == 0) assert_stats(all[s], single, 0, 1e-12);
        else assert_null(all[s]);
        cls_stats_destroy(got[s]);
        cls_stats_destroy(all[s]);
    }
    cls_stats_destroy(single);
    free(x);
}

/* cls_mpi_fit_transform against one process on the whole array:
 * - min-max and decimal equal cls_fit + cls_transform byte for byte (the
 *   same arithmetic: params made on the host from exact extremes), z-score
 *   to column_tol() (its mean and m2 are merged in another order);
 * - all of them close to cls_fit_transform, whose one-pass kernel makes the
 *   params on the device in the data's dtype: in float32 they may differ in
 *   the last bits, so 1e-5 there (the project's float32 tolerance). */
static void transform_case(cls_scaler scaler, cls_scope scope, cls_dtype t)
{
    size_t B = 3, R = 29, C = 12, es = t == CLS_F64 ? 8 : 4, n = B * R * C;
    void *x = make(t, B, R, C, 99), *fused = malloc(n * es), *two = malloc(n * es), *got = malloc(n * es);
    memset(got, 0x7f, n * es);
    cls_pipeline p = {.scaler = scaler, .scope = scope}, all = {.scaler = CLS_NONE, .scope = scope};
    cls_array whole = {.data = x, .dtype = t, .batch = B, .rows = R, .cols = C}, ref1 = {.data = fused, .dtype = t, .batch = B, .rows = R, .cols = C}, ref2 = {.data = two, .dtype = t, .batch = B, .rows = R, .cols = C};
    cls_stats *fitted = NULL, *moments = NULL;
    cls_status st1 = cls_fit_transform(ctx, &p, &whole, &ref1, NULL);
    cls_status st2 = cls_fit(ctx, &p, &whole, &fitted);
    if (st2 == CLS_OK) st2 = cls_transform(ctx, &p, fitted, &whole, &ref2);
    cls_status st3 = cls_fit(ctx, &all, &whole, &moments);
    size_t first, count, unit = scope == CLS_SCOPE_BATCH ? C : R * C;
    split_of(UNEVEN, scope == CLS_SCOPE_BATCH ? B * R : B, &first, &count);
    cls_array in = scope == CLS_SCOPE_BATCH ? view(x, t, first, count, unit, 1, count, C)
                                            : view(x, t, first, count, unit, count, R, C);
    cls_array out = in;
    out.data = count ? (char *)got + first * unit * es : NULL;
    cls_status st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &out, NULL);
    assert_int_equal(st1, CLS_OK);
    assert_int_equal(st2, CLS_OK);
    assert_int_equal(st3, CLS_OK);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    for (size_t i = first * unit; i < (first + count) * unit; i++) {
        double a = t == CLS_F64 ? ((double *)got)[i] : ((float *)got)[i];
        double e1 = t == CLS_F64 ? ((double *)fused)[i] : ((float *)fused)[i];
        double e2 = t == CLS_F64 ? ((double *)two)[i] : ((float *)two)[i];
        cls_column_stats c;
        test_column(moments, scope == CLS_SCOPE_BATCH ? 0 : i / (R * C), i % C, &c);
        double tol = t == CLS_F32 ? 1e-5 : column_tol(1e-12, &c);
        if (scaler != CLS_ZSCORE && memcmp((char *)got + i * es, (char *)two + i * es, es) != 0)
            fail_msg("element %zu: %.17g, cls_fit + cls_transform gave %.17g", i, a, e2);
        if (scaler == CLS_ZSCORE && (isnan(e2) ? !isnan(a) : fabs(a - e2) > tol * fmax(1, fabs(e2))))
            fail_msg("element %zu: %.17g, cls_fit + cls_transform gave %.17g (tolerance %g)", i, a, e2, tol);
        if (isnan(e1) ? !isnan(a) : fabs(a - e1) > tol * fmax(1, fabs(e1)))
            fail_msg("element %zu: %.17g, cls_fit_transform gave %.17g (tolerance %g)", i, a, e1, tol);
    }
    cls_stats_destroy(fitted);
    cls_stats_destroy(moments);
    free(x);
    free(fused);
    free(two);
    free(got);
}

static void fit_transform_minmax_batch(void **state)
{
    (void)state;
    transform_case(CLS_MINMAX, CLS_SCOPE_BATCH, CLS_F64);
    transform_case(CLS_MINMAX, CLS_SCOPE_BATCH, CLS_F32);
}

static void fit_transform_zscore_batch(void **state)
{
    (void)state;
    transform_case(CLS_ZSCORE, CLS_SCOPE_BATCH, CLS_F64);
    transform_case(CLS_ZSCORE, CLS_SCOPE_BATCH, CLS_F32);
}

static void fit_transform_matrix(void **state)
{
    (void)state;
    transform_case(CLS_MINMAX, CLS_SCOPE_MATRIX, CLS_F64);
    transform_case(CLS_DECIMAL, CLS_SCOPE_MATRIX, CLS_F32);
    transform_case(CLS_ZSCORE, CLS_SCOPE_MATRIX, CLS_F64);
}

/* max-abs: its statistic (max |x|) merges exactly, so the ranks write the
 * same bytes as one process */
static void fit_transform_maxabs(void **state)
{
    (void)state;
    transform_case(CLS_MAXABS, CLS_SCOPE_BATCH, CLS_F64);
    transform_case(CLS_MAXABS, CLS_SCOPE_BATCH, CLS_F32);
    transform_case(CLS_MAXABS, CLS_SCOPE_MATRIX, CLS_F64);
}

/* cls_mpi_fit_transform: each rank streams its range of a file
 * (its own copy, at a header-like offset) into its range of an output file,
 * through 4 KiB buffers so that every range takes many chunks; the result
 * equals cls_fit + cls_transform of the whole array in one process (bit for
 * bit for min-max and decimal, 1e-12 relative for z-score, whose means merge
 * over chunks). Every split, rank 0 empty included. */
static void stream_case(cls_scaler scaler, cls_scope scope, int split)
{
    cls_dtype t = CLS_F64;
    size_t B = 3, R = 41, C = 7, es = 8, n = B * R * C, off = 128;
    double *x = make(t, B, R, C, 123 + (uint64_t)scaler), *two = malloc(n * es), *got = malloc(n * es);
    cls_pipeline p = {.scaler = scaler, .scope = scope};
    cls_array whole = {.data = x, .dtype = t, .batch = B, .rows = R, .cols = C}, ref = {.data = two, .dtype = t, .batch = B, .rows = R, .cols = C};
    cls_stats *fitted = NULL, *moments = NULL;
    cls_pipeline none = {.scope = scope};
    cls_status st0 = cls_fit(ctx, &p, &whole, &fitted);
    if (st0 == CLS_OK) st0 = cls_transform(ctx, &p, fitted, &whole, &ref);
    if (st0 == CLS_OK) st0 = cls_fit(ctx, &none, &whole, &moments);
    char dir[4096], in_path[4200], out_path[4200];
    test_tmpdir(dir, sizeof dir, "mpi-stream");
    snprintf(in_path, sizeof in_path, "%s/in.%d", dir, rank);
    snprintf(out_path, sizeof out_path, "%s/out.%d", dir, rank);
    int fd = open(in_path, O_RDWR | O_CREAT | O_TRUNC, 0600), ofd = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int wrote = fd >= 0 && ofd >= 0 && pwrite(fd, x, n * es, (off_t)off) == (ssize_t)(n * es) &&
                ftruncate(ofd, (off_t)(off + n * es)) == 0;
    size_t first, count, unit = scope == CLS_SCOPE_BATCH ? C : R * C;
    split_of(split, scope == CLS_SCOPE_BATCH ? B * R : B, &first, &count);
    cls_array in = {.where = CLS_IN_FILE, .fd = fd, .offset = off + first * unit * es, .dtype = t, .batch = scope == CLS_SCOPE_BATCH ? 1 : count, .rows = scope == CLS_SCOPE_BATCH ? count : R, .cols = C, .path = in_path};
    cls_array out = in;
    out.fd = ofd;
    out.path = out_path;
    setenv("CLSCALE_STREAM_BUFFER", "4096", 1);
    cls_status st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &out, NULL);
    unsetenv("CLSCALE_STREAM_BUFFER");
    int read_back = pread(ofd, got, n * es, (off_t)off) == (ssize_t)(n * es);
    close(fd);
    close(ofd);
    unlink(in_path);
    unlink(out_path);
    assert_int_equal(st0, CLS_OK);
    assert_true(wrote && read_back);
    if (st != CLS_OK) fail_msg("%s split: %s: %s", split_name[split], cls_status_str(st), cls_last_error(ctx));
    for (size_t i = first * unit; i < (first + count) * unit; i++) {
        cls_column_stats c;
        test_column(moments, scope == CLS_SCOPE_BATCH ? 0 : i / (R * C), i % C, &c);
        double a = got[i], e = two[i], tol = scaler == CLS_ZSCORE ? column_tol(1e-12, &c) : 0;
        if (isnan(e) ? !isnan(a) : fabs(a - e) > tol * fmax(1, fabs(e)))
            fail_msg("%s split, element %zu: %.17g, cls_fit + cls_transform gave %.17g", split_name[split], i, a, e);
    }
    cls_stats_destroy(fitted);
    cls_stats_destroy(moments);
    free(x);
    free(two);
    free(got);
}

static void stream_fit_transform_of_files(void **state)
{
    (void)state;
    for (int s = 0; s < NSPLITS; s++) {
        stream_case(CLS_MINMAX, CLS_SCOPE_BATCH, s);
        stream_case(CLS_ZSCORE, CLS_SCOPE_BATCH, s);
        stream_case(CLS_DECIMAL, CLS_SCOPE_MATRIX, s);
        stream_case(CLS_ZSCORE, CLS_SCOPE_MATRIX, s);
    }
}

/* A failure on one rank: every rank returns its status and names it. */
static void expect_rank_failure(cls_status st, const char *why, cls_status want, int bad, const char *what)
{
    char name[64];
    snprintf(name, sizeof name, "rank %d of %d", bad, size);
    if (st != want || !strstr(why, name) || (what && !strstr(why, what)))
        fail_msg("got %s \"%s\", expected %s naming %s%s%s", cls_status_str(st), why, cls_status_str(want),
                 name, what ? " and " : "", what ? what : "");
}

static void one_rank_failing_fails_every_rank(void **state)
{
    (void)state;
    size_t R = 8, C = 5;
    void *x = make(CLS_F64, 1, R, C, 3);
    size_t first, count;
    split_of(EVEN, R, &first, &count);
    cls_array mine = view(x, CLS_F64, first, count, C, 1, count, C);
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_BATCH}, bad = p;
    bad.inverse = 1;
    int last = size - 1;
    cls_stats *s1 = NULL, *s2 = NULL, *s3 = NULL;
    /* an argument only the last rank gets wrong */
    cls_status st1 = cls_mpi_fit(ctx, MPI_COMM_WORLD, rank == last ? &bad : &p, &mine, &s1);
    char e1[1536];
    snprintf(e1, sizeof e1, "%s", cls_last_error(ctx));
    /* the last rank's context failed (no device matched): its fit fails */
    cls_context *broken = NULL;
    if (rank == last) {
        cls_config cfg = {0};
        cfg.devices = "no-such-device";
        cls_context_create(&cfg, &broken);
    }
    cls_status st2 = cls_mpi_fit(rank == last ? broken : ctx, MPI_COMM_WORLD, &p, &mine, &s2);
    char e2[1536];
    snprintf(e2, sizeof e2, "%s", cls_last_error(rank == last ? broken : ctx));
    cls_context_destroy(broken);
    /* a scaler whose statistics do not merge by Chan's formulas */
    cls_pipeline q = p;
    q.scaler = (cls_scaler)77;
    cls_status st3 = cls_mpi_fit(ctx, MPI_COMM_WORLD, &q, &mine, &s3);
    char e3[1536];
    snprintf(e3, sizeof e3, "%s", cls_last_error(ctx));
    cls_status st4 = cls_mpi_agree(MPI_COMM_WORLD, rank == last ? CLS_E_IO : CLS_OK, "disk full");

    expect_rank_failure(st4, cls_last_error(NULL), CLS_E_IO, last, "disk full");
    assert_null(s1);
    assert_null(s2);
    assert_null(s3);
    assert_int_equal(st1, CLS_E_ARG);
    if (!strstr(e1, "inverse")) fail_msg("%s", e1);
    assert_int_equal(st2, CLS_E_ARG);
    if (!strstr(e2, "no-such-device")) fail_msg("%s", e2);
    assert_int_equal(st3, CLS_E_UNSUPPORTED);
    if (!strstr(e3, "rank 0 of")) fail_msg("%s", e3);
    free(x);
}

/* ---- every OpenCL object released (the fault layer counts them) ---- */

/* Objects other than programs and kernels: a device builds those the
 * first time it runs a kernel, and releases them with the context. */
static long live_between_calls(void)
{
    long n = 0;
    for (int t = 0; t < OBJ_TYPES; t++)
        if (t != OBJ_PROGRAM && t != OBJ_KERNEL) n += fault_count.created(t) - fault_count.released(t);
    return n;
}

static long live_objects(void) { return fault_count.created(OBJ_ALL) - fault_count.released(OBJ_ALL); }

#define MPI_CALLS 12

/* cls_mpi_fit_transform (z-score, batch scope; the moments and then the
 * quantiles of robust scaling across ranks) on a context of each rank's
 * own: MPI_CALLS calls leave no buffer, queue, event or context more on any
 * rank than the first did; the last rank's device failing at its first
 * kernel launch fails the call on every rank, and the next call, healthy,
 * works; once the context is destroyed every rank has released every
 * object it made. */
static void objects_flat_over_calls_and_released_after_a_fault(void **state)
{
    (void)state;
    int layer = find_layer() == 0 && find_count_layer() == 0;
    size_t R = 40, C = 6, first, count;
    void *x = make(CLS_F64, 1, R, C, 17), *y = malloc(R * C * 8);
    split_of(UNEVEN, R, &first, &count);
    cls_array in = view(x, CLS_F64, first, count, C, 1, count, C), out = in;
    out.data = count ? (char *)y + first * C * 8 : NULL;
    int last = size - 1;
    long before = layer ? live_objects() : 0, warm[2] = {0, 0}, worst[2] = {0, 0};
    cls_status st[2][MPI_CALLS], fault_st[2] = {CLS_OK, CLS_OK}, after_st[2] = {CLS_OK, CLS_OK};
    long injected[2] = {0, 0};
    cls_context *c = NULL;
    cls_status cst = cls_context_create(NULL, &c);
    /* every rank makes every collective call, whatever happened before */
    for (int m = 0; m < 2; m++) {
        cls_pipeline p = {.scaler = m ? CLS_ROBUST : CLS_ZSCORE, .scope = CLS_SCOPE_BATCH};
        for (int i = 0; i < MPI_CALLS; i++) {
            st[m][i] = cls_mpi_fit_transform(c, MPI_COMM_WORLD, &p, &in, &out, NULL);
            long now = layer ? live_between_calls() : 0;
            if (i == 0 && m == 0) warm[m] = now;
            if (i == 0 && m == 1) warm[m] = now;
            if (now - warm[m] > worst[m]) worst[m] = now - warm[m];
        }
        int r = layer && rank == last ? fault_count.add("basic", 0, "clEnqueueNDRangeKernel", 0, -1, 0) : -1;
        fault_st[m] = cls_mpi_fit_transform(c, MPI_COMM_WORLD, &p, &in, &out, NULL);
        if (r >= 0) injected[m] = fault_count.injected(r);
        if (layer) fault_count.clear();
        after_st[m] = cls_mpi_fit_transform(c, MPI_COMM_WORLD, &p, &in, &out, NULL);
    }
    cls_context_destroy(c);
    long after = layer ? live_objects() : 0;

    assert_true(layer);
    assert_int_equal(cst, CLS_OK);
    for (int m = 0; m < 2; m++) {
        const char *name = m ? "robust" : "zscore";
        for (int i = 0; i < MPI_CALLS; i++)
            if (st[m][i] != CLS_OK) fail_msg("%s call %d: %s", name, i, cls_status_str(st[m][i]));
        if (worst[m]) fail_msg("%s: %ld objects more after a call than after the first", name, worst[m]);
        if (rank == last) assert_true(injected[m] > 0);
        if (fault_st[m] == CLS_OK) fail_msg("%s: the call with rank %d's device failing succeeded", name, last);
        if (after_st[m] != CLS_OK) fail_msg("%s: the call after the failure: %s", name, cls_status_str(after_st[m]));
    }
    if (after != before) fail_msg("rank %d: %ld OpenCL objects left after the context was destroyed", rank, after - before);
    free(x);
    free(y);
}

/* Light curves (a trend, bins) per matrix: each rank its whole matrices,
 * no exchange, the bytes of one process on the whole array, the bins
 * reduced too; in batch scope (the batch's rows one series) refused on
 * every rank, saying why. */
static void light_curves_per_matrix_same_bytes(void **state)
{
    (void)state;
    const size_t B = 7, R = 37, C = 6, OR = 10, es = 8;
    void *x = make(CLS_F64, B, R, C, 77), *want = malloc(B * R * C * es), *got = malloc(B * R * C * es);
    cls_clean sm = {.sigma = 3, .detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2, .edge = CLS_EDGE_MIRROR,
                    .bin_rows = 4, .bin_stat = CLS_BIN_MEDIAN};
    cls_clean red = {.detrend = CLS_DETREND_MEAN, .window = 7, .edge = CLS_EDGE_WRAP, .bin_rows = 4,
                     .bin_stat = CLS_BIN_MEAN};
    for (int k = 0; k < 2; k++) {
        cls_pipeline p = {.scope = CLS_SCOPE_MATRIX, .clean = k ? &red : &sm};
        size_t orows = k ? OR : R;
        cls_array whole = {.data = x, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
        cls_array ref = {.data = want, .dtype = CLS_F64, .batch = B, .rows = orows, .cols = C};
        assert_int_equal(cls_fit_transform(ctx, &p, &whole, &ref, NULL), CLS_OK);
        static const int splits[] = {EVEN, UNEVEN, FIRST_EMPTY};
        for (size_t sp = 0; sp < 3; sp++) {
            size_t first, count;
            split_of(splits[sp], B, &first, &count);
            cls_array in = view(x, CLS_F64, first, count, R * C, count, R, C);
            cls_array out = view(got, CLS_F64, first, count, orows * C, count, orows, C);
            cls_status st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &out, NULL);
            if (st != CLS_OK) fail_msg("%s split: %s", split_name[splits[sp]], cls_last_error(ctx));
            if (count && memcmp(out.data, (char *)want + first * orows * C * es, count * orows * C * es))
                fail_msg("%s split, %s: matrices [%zu, %zu) differ from one process's", split_name[splits[sp]],
                         k ? "bins reduced" : "trend and smoothed bins", first, first + count);
        }
    }
    size_t first, count;
    split_of(EVEN, B * R, &first, &count);
    cls_array rows = view(x, CLS_F64, first, count, C, 1, count, C), out = view(got, CLS_F64, first, count, C, 1, count, C);
    cls_pipeline pb = {.scope = CLS_SCOPE_BATCH, .clean = &sm};
    assert_int_equal(cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &pb, &rows, &out, NULL), CLS_E_UNSUPPORTED);
    if (!strstr(cls_last_error(ctx), "per matrix")) fail_msg("no reason: %s", cls_last_error(ctx));
    free(x);
    free(want);
    free(got);
}

static void ranks_that_disagree_or_hold_nothing_fail(void **state)
{
    (void)state;
    size_t R = 6, C = 4;
    void *x = make(CLS_F64, 1, R, C + 1, 5);
    size_t first, count;
    split_of(EVEN, R, &first, &count);
    /* the last rank reads one column more */
    size_t cols = size > 1 && rank == size - 1 ? C + 1 : C;
    cls_array mine = view(x, CLS_F64, first, count, cols, 1, count, cols);
    cls_array none = {.data = NULL, .dtype = CLS_F64, .batch = 1, .rows = 0, .cols = C};
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH};
    cls_stats *s1 = NULL, *s2 = NULL;
    cls_status st1 = cls_mpi_fit(ctx, MPI_COMM_WORLD, &p, &mine, &s1);
    char e1[1536];
    snprintf(e1, sizeof e1, "%s", cls_last_error(ctx));
    cls_status st2 = cls_mpi_fit(ctx, MPI_COMM_WORLD, &p, &none, &s2);
    char e2[1536];
    snprintf(e2, sizeof e2, "%s", cls_last_error(ctx));

    if (size > 1) {
        assert_int_equal(st1, CLS_E_ARG);
        if (!strstr(e1, "different columns (from 4 to 5)")) fail_msg("%s", e1);
        assert_null(s1);
    } else {
        assert_int_equal(st1, CLS_OK);
        cls_stats_destroy(s1);
    }
    assert_int_equal(st2, CLS_E_ARG);
    if (!strstr(e2, "no rank holds data")) fail_msg("%s", e2);
    free(x);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batch_f64_all_statistics),
        cmocka_unit_test(batch_f64_zscore_single_matrix),
        cmocka_unit_test(batch_f32_minmax),
        cmocka_unit_test(batch_wide_table_same_bits),
        cmocka_unit_test(stats_allreduce_of_own_fits),
        cmocka_unit_test(matrix_fit_local_and_gathered),
        cmocka_unit_test(fit_transform_minmax_batch),
        cmocka_unit_test(fit_transform_zscore_batch),
        cmocka_unit_test(fit_transform_matrix),
        cmocka_unit_test(fit_transform_maxabs),
        cmocka_unit_test(stream_fit_transform_of_files),
        cmocka_unit_test(light_curves_per_matrix_same_bytes),
        cmocka_unit_test(one_rank_failing_fails_every_rank),
        cmocka_unit_test(objects_flat_over_calls_and_released_after_a_fault),
        cmocka_unit_test(ranks_that_disagree_or_hold_nothing_fail),
    };
    return MPI_TEST_MAIN("mpi", tests, &rank, &size, &ctx);
}
