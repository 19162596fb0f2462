/* A cleaning stage across MPI ranks (cls_mpi_fit_transform with p->clean
 * in CLS_SCOPE_BATCH): run by meson under `mpirun -n 1..3`. Every rank
 * makes the same seeded array, cleans (and scales) the whole of it alone
 * with cls_fit_transform, then takes its rows by a split (uneven, all on
 * the last rank, rank 0 empty) and runs cls_mpi_fit_transform: the counts
 * (missing, clipped, iterations) must be equal, the fills and every output
 * value byte for byte where no mean or std is involved (median centre and
 * mad_std spread, median and constant fills, no scaler), else within 1e-12
 * relative (float64). Columns: spread values with outliers, NaN and a
 * sentinel among values, constant, all NaN, all the sentinel, a mean 1e4
 * times the spread.
 *
 * Each test makes all of its collective calls before its first assertion,
 * so that a failing rank never leaves the others waiting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clscale_mpi.h"
#include "mpi_main.h"

static cls_context *ctx;
static int rank, size;

enum { C = 6 };
#define SENT (-999.0)

enum split { UNEVEN, ALL_ON_LAST, FIRST_EMPTY, NSPLITS };
static const char *split_name[] = {"uneven", "all on the last rank", "rank 0 empty"};

static void split_of(int s, size_t n, size_t *first, size_t *count)
{
    static const size_t w[] = {1, 3, 2, 5};
    size_t k = (size_t)rank, m = (size_t)size, lo = 0, hi = 0, total = 0, before = 0;
    switch (s) {
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

static void *make(cls_dtype t, size_t rows, uint64_t seed)
{
    void *p = malloc(rows * C * (t == CLS_F64 ? 8 : 4));
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < rows * C; i++) {
        size_t c = i % C, row = i / C;
        double v;
        switch (c) {
        case 0: v = row % 13 == 0 ? 60 + row % 5 : 5 + 3 * rng_normal(&g); break;
        case 1: v = row % 7 == 3 ? NAN : row % 5 == 1 ? SENT : rng_range(&g, -8, 9); break;
        case 2: v = 2.5; break;
        case 3: v = NAN; break;
        case 4: v = SENT; break;
        default: v = row % 17 == 0 ? -1e3 : 1e4 + rng_normal(&g); break;
        }
        if (t == CLS_F64) ((double *)p)[i] = v;
        else ((float *)p)[i] = (float)v;
    }
    return p;
}

/* What one cleaning gave. */
typedef struct result {
    cls_status st;
    char       why[512];
    uint64_t   missing[C], clipped[C];
    double     fill[C];
    unsigned   iters;
    cls_stats *fitted;
} result;

static void wire(cls_clean *c, result *r)
{
    c->missing_out = r->missing;
    c->clipped_out = r->clipped;
    c->fill_out = r->fill;
    c->iterations_out = &r->iters;
}

static int close_enough(double a, double b, int exact)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (exact) return memcmp(&a, &b, sizeof a) == 0;
    return fabs(a - b) <= 1e-12 * fmax(1, fmax(fabs(a), fabs(b)));
}

static double at(const void *p, size_t i, cls_dtype t)
{
    return t == CLS_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* One case: the pipeline `p0` (its clean the options) over `rows` rows of
 * dtype t; `exact`: every output and fill must be byte-identical. */
static void clean_case(const char *name, cls_dtype t, size_t rows, const cls_pipeline *p0, int exact)
{
    size_t es = t == CLS_F64 ? 8 : 4;
    void *x = make(t, rows, 11 + rows + (uint64_t)t);
    void *single = malloc(rows * C * es), *mine = malloc(rows * C * es);
    cls_pipeline p = *p0;
    cls_clean cl = *p0->clean;
    p.clean = &cl;
    result one, got[NSPLITS];
    memset(&one, 0, sizeof one);
    memset(got, 0, sizeof got);
    int want_stats = p.scaler != CLS_NONE;
    wire(&cl, &one);
    cls_array whole = {.data = x, .dtype = t, .batch = 1, .rows = rows, .cols = C}, out = {.data = single, .dtype = t, .batch = 1, .rows = rows, .cols = C};
    one.st = cls_fit_transform(ctx, &p, &whole, &out, want_stats ? &one.fitted : NULL);
    snprintf(one.why, sizeof one.why, "%s", cls_last_error(ctx));
    size_t first[NSPLITS], count[NSPLITS];
    int bad_rows[NSPLITS];
    for (int s = 0; s < NSPLITS; s++) {
        split_of(s, rows, &first[s], &count[s]);
        wire(&cl, &got[s]);
        cls_array in = {.data = count[s] ? (char *)x + first[s] * C * es : NULL, .dtype = t, .batch = 1, .rows = count[s], .cols = C};
        cls_array o = {.data = count[s] ? mine : NULL, .dtype = t, .batch = 1, .rows = count[s], .cols = C};
        got[s].st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &o, want_stats ? &got[s].fitted : NULL);
        snprintf(got[s].why, sizeof got[s].why, "%s", cls_last_error(ctx));
        bad_rows[s] = -1;
        for (size_t i = 0; got[s].st == CLS_OK && one.st == CLS_OK && i < count[s] * C && bad_rows[s] < 0; i++) {
            double a = at(mine, i, t), b = at(single, first[s] * C + i, t);
            if (!close_enough(a, b, exact)) bad_rows[s] = (int)i;
        }
    }
    /* every collective call is done */
    if (one.st != CLS_OK) fail_msg("%s: one process: %s", name, one.why);
    for (int s = 0; s < NSPLITS; s++) {
        result *r = &got[s];
        if (r->st != CLS_OK) fail_msg("%s, split %s: %s: %s", name, split_name[s], cls_status_str(r->st), r->why);
        if (r->iters != one.iters)
            fail_msg("%s, split %s: %u iterations, one process %u", name, split_name[s], r->iters, one.iters);
        for (size_t c = 0; c < C; c++) {
            if (r->missing[c] != one.missing[c] || r->clipped[c] != one.clipped[c])
                fail_msg("%s, split %s, column %zu: missing %llu clipped %llu, one process %llu %llu", name,
                         split_name[s], c, (unsigned long long)r->missing[c], (unsigned long long)r->clipped[c],
                         (unsigned long long)one.missing[c], (unsigned long long)one.clipped[c]);
            int fill_exact = exact || cl.impute != CLS_IMPUTE_MEAN;
            if (!close_enough(r->fill[c], one.fill[c], fill_exact))
                fail_msg("%s, split %s, column %zu: fill %.17g, one process %.17g", name, split_name[s], c,
                         r->fill[c], one.fill[c]);
        }
        if (bad_rows[s] >= 0) {
            size_t i = (size_t)bad_rows[s];
            fail_msg("%s, split %s: value %zu (column %zu): %.17g, one process %.17g", name, split_name[s], i, i % C,
                     at(mine, i, t), at(single, first[s] * C + i, t));
        }
        if (want_stats) {
            cls_stats_info a, e;
            assert_int_equal(cls_stats_describe(r->fitted, &a), CLS_OK);
            assert_int_equal(cls_stats_describe(one.fitted, &e), CLS_OK);
            assert_true(a.rows == e.rows && a.groups == e.groups && a.scaler == e.scaler);
            for (size_t c = 0; c < C; c++) {
                cls_column_stats u, v;
                test_column(r->fitted, 0, c, &u);
                test_column(one.fitted, 0, c, &v);
                /* min and max are exact unless a bound from a std clamped them */
                if (u.count != v.count || u.missing != v.missing || !close_enough(u.min, v.min, exact) ||
                    !close_enough(u.max, v.max, exact) || !close_enough(u.mean, v.mean, 0) ||
                    !close_enough(u.m2, v.m2, 0))
                    fail_msg("%s, split %s, column %zu: fitted count %llu missing %llu min %.17g max %.17g mean "
                             "%.17g m2 %.17g, one process %llu %llu %.17g %.17g %.17g %.17g", name, split_name[s], c,
                             (unsigned long long)u.count, (unsigned long long)u.missing, u.min, u.max, u.mean, u.m2,
                             (unsigned long long)v.count, (unsigned long long)v.missing, v.min, v.max, v.mean, v.m2);
            }
        }
        cls_stats_destroy(r->fitted);
    }
    cls_stats_destroy(one.fitted);
    free(x);
    free(single);
    free(mine);
}

static cls_clean base(void)
{
    cls_clean c;
    memset(&c, 0, sizeof c);
    c.has_missing_value = 1;
    c.missing_value = SENT;
    return c;
}

static cls_pipeline pipe_of(const cls_clean *c, cls_scaler s)
{
    cls_pipeline p;
    memset(&p, 0, sizeof p);
    p.scaler = s;
    p.scope = CLS_SCOPE_BATCH;
    p.clean = c;
    return p;
}

/* median centre, std spread, median fill, no scaler: cleaned only */
static void median_clip_median_fill(void **state)
{
    (void)state;
    cls_clean c = base();
    c.sigma = 2.5;
    c.impute = CLS_IMPUTE_MEDIAN;
    cls_pipeline p = pipe_of(&c, CLS_NONE);
    clean_case("median/std, median fill, f64", CLS_F64, 301, &p, 0);
    /* mad_std: every bound exact, hence every value */
    c.spread = CLS_SPREAD_MAD_STD;
    c.maxiters = -1;
    clean_case("median/mad_std, median fill, f64", CLS_F64, 301, &p, 1);
    clean_case("median/mad_std, median fill, f32, 40 rows", CLS_F32, 40, &p, 1);
}

/* mean centre until nothing changes, mean fill, z-score fused */
static void mean_clip_mean_fill_zscore(void **state)
{
    (void)state;
    cls_clean c = base();
    c.sigma = 2;
    c.center = CLS_CENTER_MEAN;
    c.maxiters = -1;
    c.impute = CLS_IMPUTE_MEAN;
    cls_pipeline p = pipe_of(&c, CLS_ZSCORE);
    clean_case("mean/std, mean fill, z-score, f64", CLS_F64, 301, &p, 0);
}

/* constant fill, min-max with clipping fused; clamping then robust scaling
 * (cleaned first, then fitted across the ranks) */
static void constant_fill_minmax_and_clamp_robust(void **state)
{
    (void)state;
    cls_clean c = base();
    c.sigma = 3;
    c.spread = CLS_SPREAD_MAD_STD;
    c.impute = CLS_IMPUTE_CONSTANT;
    c.fill_value = 7;
    cls_pipeline p = pipe_of(&c, CLS_MINMAX);
    p.clip = 1;
    clean_case("median/mad_std, constant fill, min-max, f64", CLS_F64, 301, &p, 0);
    cls_clean d = base();
    d.sigma = 2.5;
    d.mode = CLS_CLIP_CLAMP;
    d.impute = CLS_IMPUTE_MEDIAN;
    cls_pipeline q = pipe_of(&d, CLS_ROBUST);
    q.qmin = 25;
    q.qmax = 75;
    clean_case("clamp, median fill, robust, f64", CLS_F64, 301, &q, 0);
}

/* most_frequent needs the values: refused on every rank */
static void most_frequent_refused_everywhere(void **state)
{
    (void)state;
    cls_clean c = base();
    c.impute = CLS_IMPUTE_MOST_FREQUENT;
    cls_pipeline p = pipe_of(&c, CLS_NONE);
    void *x = make(CLS_F64, 20, 3);
    size_t first, count;
    split_of(UNEVEN, 20, &first, &count);
    cls_array in = {.data = count ? (char *)x + first * C * 8 : NULL, .dtype = CLS_F64, .batch = 1, .rows = count, .cols = C};
    cls_status st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &in, NULL);
    char why[512];
    snprintf(why, sizeof why, "%s", cls_last_error(ctx));
    free(x);
    assert_int_equal(st, CLS_E_UNSUPPORTED);
    assert_non_null(strstr(why, "most_frequent"));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_clip_median_fill),
        cmocka_unit_test(mean_clip_mean_fill_zscore),
        cmocka_unit_test(constant_fill_minmax_and_clamp_robust),
        cmocka_unit_test(most_frequent_refused_everywhere),
    };
    return MPI_TEST_MAIN("mpi-clean", tests, &rank, &size, &ctx);
}
