/* Exact quantiles across MPI ranks (cls_mpi_quantiles, robust scaling in
 * cls_mpi_fit / cls_mpi_fit_transform / cls_mpi_fit_transform): run
 * by meson under `mpirun -n 1..4`. Every rank makes the same seeded array,
 * takes its part by a split (even, uneven, all on the last rank, rank 0
 * empty), and compares the combined result byte for byte with one process's
 * cls_quantiles / cls_fit + cls_transform of the whole array on the same
 * rank; and checks that every rank holds the same bits. Columns: spread
 * values, NaN and Inf among them, constant, all missing, ties (a few
 * integers), -0.0 and +0.0 mixed, a mean 1e4 times the spread.
 *
 * Each test makes all of its collective calls before its first assertion,
 * so that a failing rank never leaves the others waiting. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clscale_mpi.h"
#include "mpi_internal.h" /* cls_mpi_counts_force */
#include "mpi_main.h"

static cls_context *ctx;
static int rank, size;

enum split { EVEN, UNEVEN, ALL_ON_LAST, FIRST_EMPTY, NSPLITS };
static const char *split_name[] = {"even", "uneven", "all on the last rank", "rank 0 empty"};

/* This rank's [first, first + count) of n units under split s. */
static void split_of(int s, size_t n, size_t *first, size_t *count)
{
    static const size_t w[] = {1, 3, 2, 5};
    size_t k = (size_t)rank, m = (size_t)size, lo = 0, hi = 0, total = 0, before = 0;
    switch (s) {
    case EVEN: lo = n * k / m; hi = n * (k + 1) / m; break;
    case UNEVEN:
        for (size_t r = 0; r < m; r++) {
            if (r < k) before += w[r % 4];
            total += w[r % 4];
        }
        lo = n * before / total;
        hi = n * (before + w[k % 4]) / total;
        break;
    case ALL_ON_LAST: lo = k + 1 == m ? 0 : n; hi = n; break;
    default:
        lo = k == 0 ? 0 : m == 1 ? 0 : n * (k - 1) / (m - 1);
        hi = k == 0 ? (m == 1 ? n : 0) : n * k / (m - 1);
    }
    *first = lo;
    *count = hi - lo;
}

static void *make(cls_dtype t, size_t n, size_t C, uint64_t seed)
{
    void *p = malloc(n * (t == CLS_F64 ? 8 : 4));
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < n; i++) {
        size_t c = i % C, row = i / C;
        double v;
        switch (c % 7) {
        case 0: v = 5 + 3 * rng_normal(&g); break;
        case 1: v = row % 7 == 3 ? NAN : row % 11 == 5 ? (row % 2 ? INFINITY : -INFINITY) : rng_range(&g, -8, 9); break;
        case 2: v = 2.5; break;
        case 3: v = NAN; break;
        case 4: v = floor(rng_range(&g, 0, 4)); break;            /* ties */
        case 5: v = row % 3 == 0 ? -0.0 : row % 3 == 1 ? 0.0 : rng_range(&g, -1, 1); break;
        default: v = 1e4 + rng_normal(&g); break;
        }
        if (t == CLS_F64) ((double *)p)[i] = v;
        else ((float *)p)[i] = (float)v;
    }
    return p;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* 1 when every rank passed the same bytes (collective). */
static int same_on_every_rank(const void *p, size_t n)
{
    uint64_t h = p ? hash_bytes(p, n) : 0, lo = h, hi = h;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

static cls_array rows_of(void *x, cls_dtype t, size_t first, size_t count, size_t C)
{
    cls_array a = {.data = count ? (char *)x + first * C * (t == CLS_F64 ? 8 : 4) : NULL, .dtype = t, .batch = 1, .rows = count, .cols = C};
    return a;
}

static void assert_same_doubles(const double *a, const double *e, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &e[i], sizeof a[i]) != 0)
            fail_msg("%s, entry %zu: %.17g, one process gave %.17g", what, i, a[i], e[i]);
}

/* B x R rows cut across ranks by every split: quantiles equal one
 * process's cls_quantiles byte for byte. R * B <= 128 makes one process
 * take its one-pass sort, more its radix passes: both must agree. */
static void quantiles_case(cls_dtype t, size_t B, size_t R, size_t C)
{
    const double q[] = {0.0, 0.1, 0.25, 0.5, 0.75, 0.999, 1.0};
    size_t nq = sizeof q / sizeof q[0], n = B * R;
    void *x = make(t, n * C, C, 7 + n + (uint64_t)t);
    double *single = malloc(nq * C * sizeof *single), *got[NSPLITS];
    cls_array whole = {.data = x, .dtype = t, .batch = B, .rows = R, .cols = C};
    cls_status sst = cls_quantiles(ctx, &(cls_pipeline){.scope = CLS_SCOPE_BATCH}, &whole, q, nq, single), st[NSPLITS];
    int same[NSPLITS];
    char why[NSPLITS][512];
    for (int s = 0; s < NSPLITS; s++) {
        size_t first, count;
        split_of(s, n, &first, &count);
        cls_array mine = rows_of(x, t, first, count, C);
        got[s] = malloc(nq * C * sizeof *got[s]);
        st[s] = cls_mpi_quantiles(ctx, MPI_COMM_WORLD, &mine, CLS_SCOPE_BATCH, q, nq, got[s]);
        snprintf(why[s], sizeof why[s], "%s", cls_last_error(ctx));
        same[s] = same_on_every_rank(got[s], nq * C * sizeof *got[s]);
    }
    if (sst != CLS_OK) fail_msg("cls_quantiles: %s", cls_last_error(ctx));
    for (int s = 0; s < NSPLITS; s++) {
        if (st[s] != CLS_OK) fail_msg("split %s: %s: %s", split_name[s], cls_status_str(st[s]), why[s]);
        char what[128];
        snprintf(what, sizeof what, "%s, %zu rows, split %s", t == CLS_F64 ? "float64" : "float32", n, split_name[s]);
        assert_same_doubles(got[s], single, nq * C, what);
        if (!same[s]) fail_msg("%s: the ranks hold different bits", what);
        free(got[s]);
    }
    free(single);
    free(x);
}

static void quantiles_batch_equal_one_process_f64(void **state)
{
    (void)state;
    quantiles_case(CLS_F64, 3, 67, 7);  /* 201 rows: radix passes on one process */
    quantiles_case(CLS_F64, 1, 50, 7);  /* 50 rows: a sorting network on one process */
    /* the counts as a dense MPI_Allreduce rather than the pairs these small
     * columns take by default (rank 0's setting decides for all) */
    cls_mpi_counts_force(MPI_COUNTS_DENSE);
    quantiles_case(CLS_F64, 3, 67, 7);
    cls_mpi_counts_force(MPI_COUNTS_AUTO);
}

static void quantiles_batch_equal_one_process_f32(void **state)
{
    (void)state;
    quantiles_case(CLS_F32, 2, 150, 7);
    quantiles_case(CLS_F32, 1, 9, 7);
}

/* Matrix scope: each rank's whole matrices, nothing combined. */
static void quantiles_matrix_scope_per_rank(void **state)
{
    (void)state;
    const double q[] = {0.5, 0.25, 0.75};
    size_t B = 5, R = 31, C = 7, nq = 3;
    void *x = make(CLS_F64, B * R * C, C, 5);
    double *single = malloc(B * nq * C * sizeof *single), *got = malloc(B * nq * C * sizeof *got);
    cls_array whole = {.data = x, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
    cls_status sst = cls_quantiles(ctx, NULL, &whole, q, nq, single);
    size_t first, count;
    split_of(UNEVEN, B, &first, &count);
    cls_array mine = {.data = count ? (char *)x + first * R * C * 8 : NULL, .dtype = CLS_F64, .batch = count, .rows = R, .cols = C};
    cls_status st = cls_mpi_quantiles(ctx, MPI_COMM_WORLD, &mine, CLS_SCOPE_MATRIX, q, nq, got);
    assert_int_equal(sst, CLS_OK);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_same_doubles(got, single + first * nq * C, count * nq * C, "matrix scope");
    free(single);
    free(got);
    free(x);
}

static void assert_same_stats(cls_stats *got, cls_stats *want, const char *what)
{
    cls_stats_info a, e;
    assert_int_equal(cls_stats_describe(got, &a), CLS_OK);
    assert_int_equal(cls_stats_describe(want, &e), CLS_OK);
    if (a.scaler != e.scaler || a.scope != e.scope || a.dtype != e.dtype || a.groups != e.groups ||
        a.cols != e.cols || a.rows != e.rows || a.has_moments != e.has_moments || a.has_quantiles != e.has_quantiles ||
        a.qmin != e.qmin || a.qmax != e.qmax || a.unit_variance != e.unit_variance)
        fail_msg("%s: the description differs from one process's", what);
    for (size_t g = 0; g < a.groups; g++)
        for (size_t c = 0; c < a.cols; c++) {
            cls_column_stats x, y;
            test_column(got, g, c, &x);
            test_column(want, g, c, &y);
            /* every field: exact (mean and m2 NaN in both: no moments) */
            if (memcmp(&x, &y, sizeof x) != 0)
                fail_msg("%s, column %zu: count %llu median %.17g q %.17g %.17g min %.17g, one process: count %llu "
                         "median %.17g q %.17g %.17g min %.17g",
                         what, c, (unsigned long long)x.count, x.median, x.q_lo, x.q_hi, x.min,
                         (unsigned long long)y.count, y.median, y.q_lo, y.q_hi, y.min);
        }
}

/* Robust scaling, rows split: the fitted statistics and the output equal
 * one process's cls_fit + cls_transform byte for byte. */
static void robust_case(cls_dtype t, size_t n, size_t C, double qmin, double qmax, int unit_variance)
{
    size_t es = t == CLS_F64 ? 8 : 4;
    void *x = make(t, n * C, C, 17 + n), *two = malloc(n * C * es), *got = malloc(n * C * es);
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_BATCH, .qmin = qmin, .qmax = qmax,
                      .unit_variance = unit_variance};
    cls_array whole = {.data = x, .dtype = t, .batch = 1, .rows = n, .cols = C}, ref = {.data = two, .dtype = t, .batch = 1, .rows = n, .cols = C};
    cls_stats *single = NULL, *fitted[NSPLITS] = {NULL}, *fit_only[NSPLITS] = {NULL};
    cls_status sst = cls_fit(ctx, &p, &whole, &single);
    if (sst == CLS_OK) sst = cls_transform(ctx, &p, single, &whole, &ref);
    cls_status st[NSPLITS], fst[NSPLITS];
    int same[NSPLITS];
    char why[NSPLITS][512];
    size_t first[NSPLITS], count[NSPLITS];
    memset(got, 0x7f, n * C * es);
    for (int s = 0; s < NSPLITS; s++) {
        split_of(s, n, &first[s], &count[s]);
        cls_array in = rows_of(x, t, first[s], count[s], C), out = rows_of(got, t, first[s], count[s], C);
        fst[s] = cls_mpi_fit(ctx, MPI_COMM_WORLD, &p, &in, &fit_only[s]);
        st[s] = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &out, &fitted[s]);
        snprintf(why[s], sizeof why[s], "%s", cls_last_error(ctx));
        cls_column_stats *cols = fitted[s] ? cls_stats_columns(fitted[s]) : NULL;
        same[s] = same_on_every_rank(cols, C * sizeof *cols);
        /* this split's output, checked now (the next split overwrites) */
        if (st[s] == CLS_OK && count[s] && memcmp((char *)got + first[s] * C * es, (char *)two + first[s] * C * es,
                                                  count[s] * C * es) != 0)
            st[s] = (cls_status)-1;
    }
    if (sst != CLS_OK) fail_msg("one process: %s", cls_last_error(ctx));
    for (int s = 0; s < NSPLITS; s++) {
        char what[160];
        snprintf(what, sizeof what, "robust %s, %zu rows, q %g..%g, split %s", t == CLS_F64 ? "float64" : "float32",
                 n, qmin, qmax, split_name[s]);
        if (fst[s] != CLS_OK) fail_msg("%s: cls_mpi_fit: %s", what, cls_status_str(fst[s]));
        if (st[s] == (cls_status)-1) fail_msg("%s: the output differs from one process's", what);
        if (st[s] != CLS_OK) fail_msg("%s: %s: %s", what, cls_status_str(st[s]), why[s]);
        assert_same_stats(fitted[s], single, what);
        assert_same_stats(fit_only[s], single, what);
        if (!same[s]) fail_msg("%s: the ranks hold different bits", what);
        cls_stats_destroy(fitted[s]);
        cls_stats_destroy(fit_only[s]);
    }
    cls_stats_destroy(single);
    free(x);
    free(two);
    free(got);
}

static void robust_batch_equals_one_process(void **state)
{
    (void)state;
    robust_case(CLS_F64, 211, 7, 0, 0, 0);
    robust_case(CLS_F32, 211, 7, 10, 90, 1);
    robust_case(CLS_F64, 40, 7, 5, 95, 0);
    cls_mpi_counts_force(MPI_COUNTS_DENSE);
    robust_case(CLS_F32, 97, 7, 25, 75, 0);
    cls_mpi_counts_force(MPI_COUNTS_AUTO);
}

/* Per matrix: each rank's whole matrices, the same bytes as one process. */
static void robust_matrix_scope_per_rank(void **state)
{
    (void)state;
    size_t B = 4, R = 37, C = 7, n = B * R * C;
    float *x = make(CLS_F32, n, C, 23), *two = malloc(n * 4), *got = malloc(n * 4);
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_MATRIX};
    cls_array whole = {.data = x, .dtype = CLS_F32, .batch = B, .rows = R, .cols = C}, ref = {.data = two, .dtype = CLS_F32, .batch = B, .rows = R, .cols = C};
    cls_stats *single = NULL;
    cls_status sst = cls_fit(ctx, &p, &whole, &single);
    if (sst == CLS_OK) sst = cls_transform(ctx, &p, single, &whole, &ref);
    size_t first, count;
    split_of(FIRST_EMPTY, B, &first, &count);
    cls_array in = {.data = count ? x + first * R * C : NULL, .dtype = CLS_F32, .batch = count, .rows = R, .cols = C}, out = in;
    out.data = count ? got + first * R * C : NULL;
    cls_status st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &out, NULL);
    assert_int_equal(sst, CLS_OK);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    if (count && memcmp(got + first * R * C, two + first * R * C, count * R * C * 4) != 0)
        fail_msg("matrix scope: the output differs from one process's");
    cls_stats_destroy(single);
    free(x);
    free(two);
    free(got);
}

/* The streaming call (the tool's path): each rank's rows of a file. */
static void robust_stream_of_files(void **state)
{
    (void)state;
    size_t n = 173, C = 7, es = 8, off = 128;
    double *x = make(CLS_F64, n * C, C, 31), *two = malloc(n * C * es), *got = malloc(n * C * es);
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_BATCH};
    cls_array whole = {.data = x, .dtype = CLS_F64, .batch = 1, .rows = n, .cols = C}, ref = {.data = two, .dtype = CLS_F64, .batch = 1, .rows = n, .cols = C};
    cls_stats *single = NULL;
    cls_status sst = cls_fit(ctx, &p, &whole, &single);
    if (sst == CLS_OK) sst = cls_transform(ctx, &p, single, &whole, &ref);
    char dir[4096], in_path[4200], out_path[4200];
    test_tmpdir(dir, sizeof dir, "mpi-quantiles");
    snprintf(in_path, sizeof in_path, "%s/in.%d", dir, rank);
    snprintf(out_path, sizeof out_path, "%s/out.%d", dir, rank);
    int fd = open(in_path, O_RDWR | O_CREAT | O_TRUNC, 0600), ofd = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int wrote = fd >= 0 && ofd >= 0 && pwrite(fd, x, n * C * es, (off_t)off) == (ssize_t)(n * C * es) &&
                ftruncate(ofd, (off_t)(off + n * C * es)) == 0;
    size_t first, count;
    split_of(FIRST_EMPTY, n, &first, &count);
    cls_array in = {.where = CLS_IN_FILE, .fd = fd, .offset = off + first * C * es, .dtype = CLS_F64, .batch = 1, .rows = count, .cols = C, .path = in_path}, out = in;
    out.fd = ofd;
    out.path = out_path;
    cls_stats *fitted = NULL;
    cls_status st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &out, &fitted);
    int read_back = pread(ofd, got, n * C * es, (off_t)off) == (ssize_t)(n * C * es);
    close(fd);
    close(ofd);
    unlink(in_path);
    unlink(out_path);
    assert_int_equal(sst, CLS_OK);
    assert_true(wrote && read_back);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_same_stats(fitted, single, "streamed robust");
    if (count && memcmp(got + first * C, two + first * C, count * C * es) != 0)
        fail_msg("streamed robust: the output differs from one process's");
    cls_stats_destroy(fitted);
    cls_stats_destroy(single);
    free(x);
    free(two);
    free(got);
}

/* One rank failing in the counting passes (its context has no device),
 * or ranks passing different q: every rank fails, none waits. */
static void a_failing_or_disagreeing_rank_fails_every_rank(void **state)
{
    (void)state;
    size_t n = 150, C = 3;
    double q[] = {0.5}, q2[] = {rank == size - 1 ? 0.6 : 0.5};
    void *x = make(CLS_F64, n * C, C, 3);
    double *out = malloc(C * sizeof *out);
    size_t first, count;
    split_of(EVEN, n, &first, &count);
    cls_array mine = rows_of(x, CLS_F64, first, count, C);
    int last = size - 1;
    cls_context *broken = NULL;
    if (rank == last) {
        cls_config cfg = {0};
        cfg.devices = "no-such-device";
        cls_context_create(&cfg, &broken);
    }
    cls_status st1 = cls_mpi_quantiles(rank == last ? broken : ctx, MPI_COMM_WORLD, &mine, CLS_SCOPE_BATCH, q, 1, out);
    char e1[1536];
    snprintf(e1, sizeof e1, "%s", cls_last_error(rank == last ? broken : ctx));
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_BATCH};
    cls_stats *s2 = NULL;
    cls_status st2 = cls_mpi_fit(rank == last ? broken : ctx, MPI_COMM_WORLD, &p, &mine, &s2);
    char e2[1536];
    snprintf(e2, sizeof e2, "%s", cls_last_error(rank == last ? broken : ctx));
    cls_context_destroy(broken);
    cls_status st3 = cls_mpi_quantiles(ctx, MPI_COMM_WORLD, &mine, CLS_SCOPE_BATCH, q2, 1, out);
    char e3[1536];
    snprintf(e3, sizeof e3, "%s", cls_last_error(ctx));
    cls_pipeline r = p;
    r.qmax = rank == last ? 80 : 75;
    r.qmin = 25;
    cls_stats *s4 = NULL;
    cls_status st4 = cls_mpi_fit(ctx, MPI_COMM_WORLD, &r, &mine, &s4);
    char e4[1536];
    snprintf(e4, sizeof e4, "%s", cls_last_error(ctx));

    char name[64];
    snprintf(name, sizeof name, "rank %d of %d", last, size);
    assert_int_equal(st1, CLS_E_ARG);
    if (!strstr(e1, name) || !strstr(e1, "no-such-device")) fail_msg("%s", e1);
    assert_int_equal(st2, CLS_E_ARG);
    if (!strstr(e2, name)) fail_msg("%s", e2);
    assert_null(s2);
    if (size > 1) {
        assert_int_equal(st3, CLS_E_ARG);
        if (!strstr(e3, "different quantiles")) fail_msg("%s", e3);
        assert_int_equal(st4, CLS_E_ARG);
        if (!strstr(e4, "quantile ranges")) fail_msg("%s", e4);
        assert_null(s4);
    } else {
        assert_int_equal(st3, CLS_OK);
        assert_int_equal(st4, CLS_OK);
        cls_stats_destroy(s4);
    }
    free(out);
    free(x);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantiles_batch_equal_one_process_f64),
        cmocka_unit_test(quantiles_batch_equal_one_process_f32),
        cmocka_unit_test(quantiles_matrix_scope_per_rank),
        cmocka_unit_test(robust_batch_equals_one_process),
        cmocka_unit_test(robust_matrix_scope_per_rank),
        cmocka_unit_test(robust_stream_of_files),
        cmocka_unit_test(a_failing_or_disagreeing_rank_fails_every_rank),
    };
    return MPI_TEST_MAIN("mpi-quantiles", tests, &rank, &size, &ctx);
}
