/* cls_fit_transform and cls_fit_transform (cleaning across
 * processes through the cls_combine hook, both its functions) tested
 * without MPI: three participants are threads, each with its own context
 * and its own rows of one array (uneven, one with none); the counts' hook
 * sums, the stats hook merges the participants' columns in participant
 * order behind barriers (every participant computes the same merge, so
 * the same bits). Every participant must end with one cls_fit_transform() call's counts and fills over the whole array
 * and, for its rows, its output: byte for byte with a median centre,
 * mad_std and a median fill, within 1e-12 with the mean and std. A failure
 * of one participant's arguments reaches the others. PoCL and rusticl (not
 * Oclgrind: three contexts from three threads, see quantiles_combined). */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"

enum { P = 3, CMAX = 64 };

typedef struct meet {
    pthread_barrier_t bar;
    pthread_mutex_t   lock;
    uint64_t         *sum;
    size_t            cap;
    cls_column_stats  cols[P][CMAX];
    int               failed;
    cls_status        status;  /* a failing participant's */
} meet;

typedef struct part {
    meet        *m;
    int          id;
    cls_context *ctx;
    cls_array    x, y;
    cls_clean    c;
    cls_pipeline p;      /* scaler set: cls_fit_transform */
    cls_stats   *fitted;
    cls_status   st;
    uint64_t     missing[CMAX], clipped[CMAX];
    double       fill[CMAX];
    unsigned     iters;
} part;

/* Both hooks: everyone's outcome, then (counts) the sum or (columns) the
 * merge in participant order. */
static void meet_init(meet *m)
{
    memset(m, 0, sizeof *m);
    pthread_barrier_init(&m->bar, NULL, P);
    pthread_mutex_init(&m->lock, NULL);
    m->cap = 1u << 16;
    m->sum = calloc(m->cap, sizeof *m->sum);
}

static void meet_free(meet *m)
{
    pthread_barrier_destroy(&m->bar);
    pthread_mutex_destroy(&m->lock);
    free(m->sum);
}

static cls_status meet_hook(part *me, cls_status local, uint64_t *counts, cls_column_stats *cols, size_t n)
{
    meet *m = me->m;
    pthread_barrier_wait(&m->bar);
    pthread_mutex_lock(&m->lock);
    if (local != CLS_OK || n > (cols ? (size_t)CMAX : m->cap)) m->failed = 1;
    if (local != CLS_OK) m->status = local;
    if (counts && local == CLS_OK)
        for (size_t i = 0; i < n && n <= m->cap; i++) m->sum[i] += counts[i];
    if (cols && local == CLS_OK && n <= CMAX) memcpy(m->cols[me->id], cols, n * sizeof *cols);
    pthread_mutex_unlock(&m->lock);
    pthread_barrier_wait(&m->bar);
    int ok = !m->failed;
    cls_status all = m->status ? m->status : CLS_E_DEVICE;
    if (ok && counts) memcpy(counts, m->sum, n * sizeof *counts);
    if (ok && cols)
        for (size_t e = 0; e < n; e++) {
            cls_column_stats t = m->cols[0][e];
            for (int i = 1; i < P; i++) cls_column_stats_merge(&t, &m->cols[i][e], 1);
            cols[e] = t;
        }
    if (pthread_barrier_wait(&m->bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
        memset(m->sum, 0, m->cap * sizeof *m->sum);
        m->failed = 0;
        m->status = CLS_OK;
    }
    pthread_barrier_wait(&m->bar);
    return ok ? CLS_OK : all;
}

static cls_status count_hook(void *user, cls_status local, uint64_t *counts, size_t n)
{
    return meet_hook(user, local, counts, NULL, n);
}

static cls_status stats_hook(void *user, cls_status local, cls_column_stats *cols, size_t n)
{
    return meet_hook(user, local, NULL, cols, n);
}

/* Streamed participants (cls_fit_transform): rows in a
 * file of their own, chunks of 16 rows; one with no rows calls the
 * in-memory combined call. */
static int streamed;
static char dir[4096];

static cls_status run_streamed(part *k, const cls_combine *h)
{
    size_t es = k->x.dtype == CLS_F64 ? 8 : 4, bytes = k->x.rows * k->x.cols * es;
    char pin[4200], pout[4200];
    snprintf(pin, sizeof pin, "%s/in-%d.bin", dir, k->id);
    snprintf(pout, sizeof pout, "%s/out-%d.bin", dir, k->id);
    FILE *f = fopen(pin, "wb");
    if (!f || fwrite(k->x.data, 1, bytes, f) != bytes) return CLS_E_IO;
    fclose(f);
    int in = open(pin, O_RDONLY), out = open(pout, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) return CLS_E_IO;
    cls_array a = {.where = CLS_IN_FILE, .fd = in, .offset = 0, .dtype = k->x.dtype, .batch = 1, .rows = k->x.rows, .cols = k->x.cols, .path = "in"}, o = a;
    o.fd = out;
    o.path = "out";
    cls_stream_opts opts = {16 * k->x.cols * es, 2, 1, 0};
    k->p.clean = &k->c;
    k->p.combine = h;
    a.stream = &opts;
    cls_status st = cls_fit_transform(k->ctx, &k->p, &a, &o, k->p.scaler != CLS_NONE ? &k->fitted : NULL);
    k->p.combine = NULL; /* the hook lives on the caller's stack */
    if (st == CLS_OK && pread(out, k->y.data, bytes, 0) != (ssize_t)bytes) st = CLS_E_IO;
    close(in);
    close(out);
    return st;
}

static void *run(void *arg)
{
    part *k = arg;
    cls_combine h = {count_hook, k, stats_hook};
    k->c.missing_out = k->missing;
    k->c.clipped_out = k->clipped;
    k->c.fill_out = k->fill;
    k->c.iterations_out = &k->iters;
    if (streamed && k->x.rows) {
        k->st = run_streamed(k, &h);
    } else if (k->p.scaler != CLS_NONE) {
        k->p.clean = &k->c;
        k->p.combine = &h;
        k->st = cls_fit_transform(k->ctx, &k->p, &k->x, &k->y, &k->fitted);
        k->p.combine = NULL;
    } else {
        k->st = cls_fit_transform(k->ctx, &(cls_pipeline){.scope = CLS_SCOPE_BATCH, .clean = &k->c, .combine = &h}, &k->x, &k->y, NULL);
    }
    return NULL;
}

static cls_context *ctxs[P];

/* Rows [0, R) cut at 2/7 and 2/7 (participant 1 has none) and the rest. */
static void rows_of(const cls_array *whole, void *ybase, int i, cls_array *x, cls_array *y)
{
    size_t R = whole->rows, cut[P + 1] = {0, R * 2 / 7, R * 2 / 7, R};
    size_t es = whole->dtype == CLS_F64 ? 8 : 4;
    *x = *whole;
    x->rows = cut[i + 1] - cut[i];
    x->data = x->rows ? (char *)whole->data + cut[i] * whole->cols * es : NULL;
    *y = *x;
    y->data = x->rows ? (char *)ybase + cut[i] * whole->cols * es : NULL;
}

static int within(double a, double b, int exact, double tol)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (exact) return memcmp(&a, &b, sizeof a) == 0;
    return fabs(a - b) <= tol * fmax(1, fmax(fabs(a), fabs(b)));
}


static int f64_ok(void) { return !test_suite_is("rusticl"); }

static double at(const void *p, size_t i, cls_dtype t)
{
    return t == CLS_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void combined_case(const char *name, cls_dtype t, size_t R, size_t C, const cls_clean *opts, cls_scaler s,
                          int exact)
{
    assert_true(C <= CMAX);
    cls_array whole = cref_make(t, 1, R, C, 31 + R);
    size_t es = t == CLS_F64 ? 8 : 4;
    void *want = malloc(R * C * es), *got = malloc(R * C * es);
    part one;
    memset(&one, 0, sizeof one);
    one.c = *opts;
    one.c.missing_out = one.missing;
    one.c.clipped_out = one.clipped;
    one.c.fill_out = one.fill;
    one.c.iterations_out = &one.iters;
    cls_array w = {.data = want, .dtype = t, .batch = 1, .rows = R, .cols = C};
    cls_pipeline p;
    memset(&p, 0, sizeof p);
    p.scaler = s;
    p.scope = CLS_SCOPE_BATCH;
    p.clean = &one.c;
    cls_status st = s != CLS_NONE ? cls_fit_transform(ctxs[0], &p, &whole, &w, &one.fitted)
                                  : cls_fit_transform(ctxs[0], &(cls_pipeline){.scope = CLS_SCOPE_BATCH, .clean = &one.c}, &whole, &w, NULL);
    if (st != CLS_OK) fail_msg("%s: one call: %s", name, cls_last_error(ctxs[0]));
    meet m;
    meet_init(&m);
    part k[P];
    memset(k, 0, sizeof k);
    pthread_t th[P];
    for (int i = 0; i < P; i++) {
        k[i].m = &m;
        k[i].id = i;
        k[i].ctx = ctxs[i];
        k[i].c = *opts;
        k[i].p = p;
        rows_of(&whole, got, i, &k[i].x, &k[i].y);
        if (i) assert_int_equal(pthread_create(&th[i], NULL, run, &k[i]), 0);
    }
    run(&k[0]);
    for (int i = 1; i < P; i++) pthread_join(th[i], NULL);
    /* float32 data: the devices sum each part's moments in float32, so a
     * mean depends on where the rows are cut, to about 1e-7 relative */
    double ftol = t == CLS_F32 ? 1e-5 : 1e-12;
    for (int i = 0; i < P; i++) {
        if (k[i].st != CLS_OK) fail_msg("%s: participant %d: %s", name, i, cls_last_error(ctxs[i]));
        if (k[i].iters != one.iters) fail_msg("%s: %u iterations, one call %u", name, k[i].iters, one.iters);
        for (size_t c = 0; c < C; c++) {
            if (k[i].missing[c] != one.missing[c] || k[i].clipped[c] != one.clipped[c])
                fail_msg("%s: participant %d column %zu: missing %llu clipped %llu, one call %llu %llu", name, i, c,
                         (unsigned long long)k[i].missing[c], (unsigned long long)k[i].clipped[c],
                         (unsigned long long)one.missing[c], (unsigned long long)one.clipped[c]);
            if (!within(k[i].fill[c], one.fill[c], exact || opts->impute != CLS_IMPUTE_MEAN, ftol))
                fail_msg("%s: participant %d column %zu: fill %.17g, one call %.17g", name, i, c, k[i].fill[c],
                         one.fill[c]);
        }
        if (s != CLS_NONE) {
            cls_stats_info a, e;
            assert_int_equal(cls_stats_describe(k[i].fitted, &a), CLS_OK);
            assert_int_equal(cls_stats_describe(one.fitted, &e), CLS_OK);
            assert_true(a.rows == e.rows);
            for (size_t c = 0; c < C; c++) {
                cls_column_stats u, v;
                test_column(k[i].fitted, 0, c, &u);
                test_column(one.fitted, 0, c, &v);
                /* streamed, m2 merges chunks of 16 rows: column 6 (1e6 plus a
                 * spread of 0.01) keeps 5e-10 of it */
                if (u.count != v.count || u.missing != v.missing || !within(u.mean, v.mean, 0, ftol) ||
                    !within(u.m2, v.m2, 0, streamed ? 1e-8 : ftol))
                    fail_msg("%s: participant %d column %zu: fitted count %llu mean %.17g m2 %.17g, one call %llu "
                             "%.17g %.17g", name, i, c, (unsigned long long)u.count, u.mean, u.m2,
                             (unsigned long long)v.count, v.mean, v.m2);
            }
            cls_stats_destroy(k[i].fitted);
        }
    }
    /* z-scores of column 6 (1e6 + small values) carry the mean's rounding
     * (1e-16 of 1e6) divided by a spread near 1: about 1e-10, not 1e-12 */
    double tol = t == CLS_F32 ? 1e-5 : 1e-8;
    for (size_t i = 0; i < R * C; i++)
        if (!within(at(got, i, t), at(want, i, t), exact, tol))
            fail_msg("%s: value %zu (column %zu): %.17g, one call %.17g", name, i, i % C, at(got, i, t),
                     at(want, i, t));
    cls_stats_destroy(one.fitted);
    meet_free(&m);
    free(want);
    free(got);
    free(whole.data);
}

static void three_participants_equal_one_call(void **state)
{
    (void)state;
    cls_clean c;
    memset(&c, 0, sizeof c);
    c.sigma = 2.5;
    c.spread = CLS_SPREAD_MAD_STD;
    c.impute = CLS_IMPUTE_MEDIAN;
    if (f64_ok()) combined_case("median/mad_std, median fill, f64", CLS_F64, 203, 8, &c, CLS_NONE, 1);
    combined_case("median/mad_std, median fill, f32", CLS_F32, 41, 8, &c, CLS_NONE, 1);
    c.spread = CLS_SPREAD_STD;
    c.center = CLS_CENTER_MEAN;
    c.maxiters = -1;
    c.impute = CLS_IMPUTE_MEAN;
    if (f64_ok()) combined_case("mean/std, mean fill, z-score fused, f64", CLS_F64, 203, 8, &c, CLS_ZSCORE, 0);
    combined_case("mean/std, mean fill, z-score fused, f32", CLS_F32, 150, 8, &c, CLS_ZSCORE, 0);
}

/* The same with the participants' rows in files, streamed in chunks of 16
 * rows through the cleaning's passes (cls_fit_transform). */
static void streamed_participants_equal_one_call(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "clean-combined");
    streamed = 1;
    cls_clean c;
    memset(&c, 0, sizeof c);
    c.sigma = 2.5;
    c.spread = CLS_SPREAD_MAD_STD;
    c.impute = CLS_IMPUTE_MEDIAN;
    if (f64_ok()) combined_case("streamed median/mad_std, median fill, f64", CLS_F64, 203, 8, &c, CLS_NONE, 1);
    combined_case("streamed median/mad_std, median fill, f32", CLS_F32, 41, 8, &c, CLS_NONE, 1);
    c.spread = CLS_SPREAD_STD;
    c.center = CLS_CENTER_MEAN;
    c.maxiters = -1;
    c.impute = CLS_IMPUTE_MEAN;
    if (f64_ok()) combined_case("streamed mean/std, mean fill, z-score, f64", CLS_F64, 203, 8, &c, CLS_ZSCORE, 0);
    streamed = 0;
}

/* One participant's bad arguments (a NaN sentinel) reach the others. */
static void a_bad_argument_reaches_every_participant(void **state)
{
    (void)state;
    cls_array whole = cref_make(CLS_F32, 1, 60, 4, 9);
    void *out = malloc(60 * 4 * 8);
    meet m;
    meet_init(&m);
    part k[P];
    memset(k, 0, sizeof k);
    pthread_t th[P];
    for (int i = 0; i < P; i++) {
        k[i].m = &m;
        k[i].id = i;
        k[i].ctx = ctxs[i];
        k[i].c.sigma = 3;
        k[i].c.impute = CLS_IMPUTE_MEDIAN;
        if (i == 2) {
            k[i].c.has_missing_value = 1;
            k[i].c.missing_value = NAN;
        }
        rows_of(&whole, out, i, &k[i].x, &k[i].y);
        if (i) assert_int_equal(pthread_create(&th[i], NULL, run, &k[i]), 0);
    }
    run(&k[0]);
    for (int i = 1; i < P; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < P; i++) assert_int_equal(k[i].st, CLS_E_ARG);
    meet_free(&m);
    free(out);
    free(whole.data);
}

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < P; i++) ctxs[i] = test_context(NULL, 0, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < P; i++) cls_context_destroy(ctxs[i]);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(three_participants_equal_one_call),
        cmocka_unit_test(streamed_participants_equal_one_call),
        cmocka_unit_test(a_bad_argument_reaches_every_participant),
    };
    return TEST_RUN("clean_combined", tests, setup, teardown);
}
