/* cls_quantiles, cls_medians and cls_stats_fit_quantiles (the cls_combine hook
 * through which several processes find exact quantiles together, which the
 * MPI part implements with MPI_Allreduce) tested without MPI: three
 * participants are threads, each with its own context and its own rows of
 * one array (uneven, one with none), and the hook sums their counts behind
 * barriers. Every participant must get one cls_quantiles() call's bytes
 * over the whole array (cls_medians()'s, cls_fit()'s robust statistics); a failure of
 * one participant, even of its arguments, must reach the others through the
 * hook, with no one left waiting. PoCL and rusticl (not Oclgrind: see
 * tests/meson.build). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"

enum { P = 3 };

/* The participants' meeting point: counts summed behind barriers. */
typedef struct meet {
    pthread_barrier_t bar;
    pthread_mutex_t   lock;
    uint64_t         *sum;
    size_t            n, cap;
    int               failed, mismatch;
    /* the stats hook's: each participant's columns, merged in their order */
    const cls_column_stats *tab[P];
    cls_column_stats *merged;
} meet;

typedef struct part {
    meet       *m;
    cls_context *ctx;
    cls_array   x;       /* this participant's rows */
    const double *q;
    size_t      nq;
    double     *out;
    cls_status  st;
    unsigned    calls;   /* of the hook */
    cls_stats  *s;       /* robust: filled by cls_stats_fit_quantiles */
    cls_pipeline p;
    int         id;
} part;

static cls_status sum_hook(void *user, cls_status local, uint64_t *counts, size_t n)
{
    part *me = user;
    meet *m = me->m;
    me->calls++;
    pthread_barrier_wait(&m->bar);
    pthread_mutex_lock(&m->lock);
    if (local != CLS_OK) m->failed = 1;
    else if (m->n == (size_t)-1) m->n = n;
    else if (m->n != n) m->mismatch = 1;
    pthread_mutex_unlock(&m->lock);
    pthread_barrier_wait(&m->bar);
    int ok = !m->failed && !m->mismatch && m->n <= m->cap;
    if (ok && counts) {
        pthread_mutex_lock(&m->lock);
        for (size_t i = 0; i < n; i++) m->sum[i] += counts[i];
        pthread_mutex_unlock(&m->lock);
    }
    pthread_barrier_wait(&m->bar);
    if (ok && counts) memcpy(counts, m->sum, n * sizeof *counts);
    /* everyone has copied: one participant resets for the next pass */
    if (pthread_barrier_wait(&m->bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
        memset(m->sum, 0, m->cap * sizeof *m->sum);
        m->n = (size_t)-1;
        m->failed = m->mismatch = 0;
    }
    pthread_barrier_wait(&m->bar);
    if (!ok) return local != CLS_OK ? local : CLS_E_DEVICE;
    return CLS_OK;
}

/* The stats hook: every participant's columns merged with moments, in
 * participant order (the same bits for all), written back to each. */
static cls_status stats_hook(void *user, cls_status local, cls_column_stats *cols, size_t n)
{
    part *me = user;
    meet *m = me->m;
    me->calls++;
    pthread_barrier_wait(&m->bar);
    pthread_mutex_lock(&m->lock);
    if (local != CLS_OK) m->failed = 1;
    else if (m->n == (size_t)-1) m->n = n;
    else if (m->n != n) m->mismatch = 1;
    m->tab[me->id] = cols;
    pthread_mutex_unlock(&m->lock);
    pthread_barrier_wait(&m->bar);
    int ok = !m->failed && !m->mismatch && n <= 64;
    if (ok && n && pthread_barrier_wait(&m->bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
        memcpy(m->merged, m->tab[0], n * sizeof *cols);
        for (int i = 1; i < P; i++)
            for (size_t j = 0; j < n; j++) cls_column_stats_merge(&m->merged[j], &m->tab[i][j], 1);
    }
    if (ok && n) {
        pthread_barrier_wait(&m->bar);
        memcpy(cols, m->merged, n * sizeof *cols);
    }
    if (pthread_barrier_wait(&m->bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
        m->n = (size_t)-1;
        m->failed = m->mismatch = 0;
    }
    pthread_barrier_wait(&m->bar);
    if (!ok) return local != CLS_OK ? local : CLS_E_DEVICE;
    return CLS_OK;
}

static void *run_fit(void *arg)
{
    part *k = arg;
    cls_combine h = {sum_hook, k, stats_hook};
    cls_pipeline p = k->p;
    p.combine = &h;
    k->st = cls_fit(k->ctx, &p, &k->x, &k->s);
    return NULL;
}

static void *run_quantiles(void *arg)
{
    part *k = arg;
    cls_combine h = {sum_hook, k, NULL};
    k->st = cls_quantiles(k->ctx, &(cls_pipeline){.scope = CLS_SCOPE_BATCH, .combine = &h}, &k->x, k->q, k->nq, k->out);
    return NULL;
}

static void *run_medians(void *arg)
{
    part *k = arg;
    cls_combine h = {sum_hook, k, NULL};
    k->st = cls_medians(k->ctx, &(cls_pipeline){.scope = CLS_SCOPE_BATCH, .combine = &h}, &k->x, k->out);
    return NULL;
}

static void *run_robust(void *arg)
{
    part *k = arg;
    cls_combine h = {sum_hook, k, NULL};
    cls_pipeline p = k->p;
    p.combine = &h;
    k->st = cls_stats_fit_quantiles(k->ctx, &p, &k->x, k->s);
    return NULL;
}

static cls_context *ctxs[P];

static void meet_init(meet *m)
{
    memset(m, 0, sizeof *m);
    pthread_barrier_init(&m->bar, NULL, P);
    pthread_mutex_init(&m->lock, NULL);
    m->cap = 1u << 18;  /* counts of one pass: more than these tests need */
    m->sum = calloc(m->cap, sizeof *m->sum);
    m->merged = calloc(64, sizeof *m->merged);
    m->n = (size_t)-1;
}

static void meet_free(meet *m)
{
    pthread_barrier_destroy(&m->bar);
    pthread_mutex_destroy(&m->lock);
    free(m->sum);
    free(m->merged);
}

/* Rows [0, R) cut at 2/7 and 2/7 (participant 1 has none) and the rest. */
static void rows_of(const cls_array *whole, int i, cls_array *out)
{
    size_t R = whole->rows, cut[P + 1] = {0, R * 2 / 7, R * 2 / 7, R};
    size_t es = whole->dtype == CLS_F64 ? 8 : 4;
    *out = *whole;
    out->rows = cut[i + 1] - cut[i];
    out->data = out->rows ? (char *)whole->data + cut[i] * whole->cols * es : NULL;
}

static void spawn(void *(*fn)(void *), part *k)
{
    pthread_t t[P];
    for (int i = 1; i < P; i++) assert_int_equal(pthread_create(&t[i], NULL, fn, &k[i]), 0);
    fn(&k[0]);
    for (int i = 1; i < P; i++) pthread_join(t[i], NULL);
}

/* medians: cls_medians (numpy's (a + b) / 2 in the dtype), else cls_quantiles */
static void combined_case(cls_dtype t, size_t R, size_t C, uint64_t seed, int medians)
{
    static const double q[] = {0.0, 0.1, 0.5, 0.75, 0.999, 1.0};
    size_t nq = medians ? 1 : sizeof q / sizeof q[0];
    cls_array whole = cref_make(t, 1, R, C, seed);
    double *want = malloc(nq * C * sizeof *want);
    cls_pipeline one = {.scope = CLS_SCOPE_BATCH};
    cls_status st = medians ? cls_medians(ctxs[0], &one, &whole, want) : cls_quantiles(ctxs[0], &one, &whole, q, nq, want);
    if (st != CLS_OK) fail_msg("one call: %s", cls_last_error(ctxs[0]));
    meet m;
    meet_init(&m);
    part k[P];
    memset(k, 0, sizeof k);
    for (int i = 0; i < P; i++) {
        k[i].m = &m;
        k[i].ctx = ctxs[i];
        rows_of(&whole, i, &k[i].x);
        k[i].q = q;
        k[i].nq = nq;
        k[i].out = malloc(nq * C * sizeof *k[i].out);
    }
    spawn(medians ? run_medians : run_quantiles, k);
    assert_false(m.mismatch);
    for (int i = 0; i < P; i++) {
        if (k[i].st != CLS_OK) fail_msg("participant %d: %s: %s", i, cls_status_str(k[i].st), cls_last_error(ctxs[i]));
        assert_int_equal(k[i].calls, t == CLS_F64 ? 8 : 4);
        for (size_t e = 0; e < nq * C; e++)
            if (memcmp(&k[i].out[e], &want[e], sizeof want[e]) != 0)
                fail_msg("%s %zu rows, participant %d, entry %zu: %.17g, one call gave %.17g",
                         t == CLS_F64 ? "f64" : "f32", R, i, e, k[i].out[e], want[e]);
        free(k[i].out);
    }
    meet_free(&m);
    free(want);
    free(whole.data);
}

static int f64_ok(void) { return !test_suite_is("rusticl"); }

static void three_participants_equal_one_call(void **state)
{
    (void)state;
    combined_case(CLS_F32, 301, 9, 5, 0);  /* one call: radix passes */
    combined_case(CLS_F32, 40, 9, 6, 0);   /* one call: a sorting network */
    if (f64_ok()) combined_case(CLS_F64, 203, 9, 7, 0);
}

/* numpy's nanmedian over the participants: the middle two from the summed
 * counts, their mean in the dtype (float32: not the quantile at 0.5) */
static void three_participants_medians_equal_one_call(void **state)
{
    (void)state;
    combined_case(CLS_F32, 301, 9, 5, 1);
    combined_case(CLS_F32, 40, 9, 6, 1);
    if (f64_ok()) combined_case(CLS_F64, 204, 9, 7, 1);
}

static void robust_statistics_equal_one_fit(void **state)
{
    (void)state;
    cls_dtype t = f64_ok() ? CLS_F64 : CLS_F32;
    size_t R = 157, C = 9;
    cls_array whole = cref_make(t, 1, R, C, 8);
    cls_pipeline p = {.scaler = CLS_ROBUST, .scope = CLS_SCOPE_BATCH, .qmin = 10, .qmax = 80};
    cls_stats *want = NULL;
    if (cls_fit(ctxs[0], &p, &whole, &want) != CLS_OK) fail_msg("cls_fit: %s", cls_last_error(ctxs[0]));
    cls_stats_info info;
    cls_stats_describe(want, &info);
    info.has_quantiles = 0;
    meet m;
    meet_init(&m);
    part k[P];
    memset(k, 0, sizeof k);
    for (int i = 0; i < P; i++) {
        k[i].m = &m;
        k[i].ctx = ctxs[i];
        k[i].p = p;
        rows_of(&whole, i, &k[i].x);
        assert_int_equal(cls_stats_create(&info, NULL, &k[i].s), CLS_OK);
    }
    spawn(run_robust, k);
    for (int i = 0; i < P; i++) {
        if (k[i].st != CLS_OK) fail_msg("participant %d: %s: %s", i, cls_status_str(k[i].st), cls_last_error(ctxs[i]));
        cls_stats_info got;
        cls_stats_describe(k[i].s, &got);
        assert_true(got.has_quantiles && got.qmin == 10 && got.qmax == 80);
        for (size_t c = 0; c < C; c++) {
            cls_column_stats a, e;
            test_column(k[i].s, 0, c, &a);
            test_column(want, 0, c, &e);
            if (memcmp(&a.median, &e.median, 8) || memcmp(&a.q_lo, &e.q_lo, 8) || memcmp(&a.q_hi, &e.q_hi, 8))
                fail_msg("participant %d column %zu: median %.17g q %.17g %.17g, one fit: %.17g %.17g %.17g", i, c,
                         a.median, a.q_lo, a.q_hi, e.median, e.q_lo, e.q_hi);
        }
        cls_stats_destroy(k[i].s);
    }
    meet_free(&m);
    cls_stats_destroy(want);
    free(whole.data);
}

/* cls_fit() with both hooks over three participants' rows (one with none)
 * equals one cls_fit() over all of them: counts, extremes and the robust
 * scaler's quantiles bit for bit, means and variances up to the order of
 * their merge; every participant holds the same statistics. */
static void fit_across_participants_equals_one_fit(void **state)
{
    (void)state;
    cls_dtype t = f64_ok() ? CLS_F64 : CLS_F32;
    size_t R = 157, C = 9;
    cls_array whole = cref_make(t, 1, R, C, 9);
    const cls_scaler scalers[] = {CLS_ZSCORE, CLS_ROBUST, CLS_MINMAX};
    for (size_t w = 0; w < sizeof scalers / sizeof *scalers; w++) {
        cls_pipeline p = {.scaler = scalers[w], .scope = CLS_SCOPE_BATCH, .qmin = scalers[w] == CLS_ROBUST ? 10 : 0,
                          .qmax = scalers[w] == CLS_ROBUST ? 80 : 0};
        cls_stats *want = NULL;
        if (cls_fit(ctxs[0], &p, &whole, &want) != CLS_OK) fail_msg("cls_fit: %s", cls_last_error(ctxs[0]));
        cls_stats_info wi;
        cls_stats_describe(want, &wi);
        meet m;
        meet_init(&m);
        part k[P];
        memset(k, 0, sizeof k);
        for (int i = 0; i < P; i++) {
            k[i].m = &m;
            k[i].ctx = ctxs[i];
            k[i].p = p;
            k[i].id = i;
            rows_of(&whole, i, &k[i].x);
        }
        spawn(run_fit, k);
        double tol = t == CLS_F64 ? 1e-12 : 1e-5;
        for (int i = 0; i < P; i++) {
            if (k[i].st != CLS_OK)
                fail_msg("%s, participant %d: %s: %s", cls_scaler_name(p.scaler), i, cls_status_str(k[i].st),
                         cls_last_error(ctxs[i]));
            cls_stats_info gi;
            cls_stats_describe(k[i].s, &gi);
            assert_int_equal(gi.rows, wi.rows);
            assert_int_equal(gi.has_moments, wi.has_moments);
            assert_int_equal(gi.has_quantiles, wi.has_quantiles);
            for (size_t c = 0; c < C; c++) {
                cls_column_stats a, e;
                test_column(k[i].s, 0, c, &a);
                test_column(want, 0, c, &e);
                assert_int_equal(a.count, e.count);
                assert_int_equal(a.missing, e.missing);
                if (memcmp(&a.min, &e.min, 8) || memcmp(&a.max, &e.max, 8) || memcmp(&a.absmax, &e.absmax, 8))
                    fail_msg("%s column %zu: extremes differ from one fit's", cls_scaler_name(p.scaler), c);
                if (wi.has_quantiles &&
                    (memcmp(&a.median, &e.median, 8) || memcmp(&a.q_lo, &e.q_lo, 8) || memcmp(&a.q_hi, &e.q_hi, 8)))
                    fail_msg("robust column %zu: quantiles differ from one fit's", c);
                if (wi.has_moments) {
                    assert_close(a.mean, e.mean, tol * (1 + fabs(e.mean)));
                    assert_close(a.m2, e.m2, tol * (1 + fabs(e.m2)));
                }
                cls_column_stats b;
                test_column(k[0].s, 0, c, &b);
                if (memcmp(&a, &b, sizeof a)) fail_msg("participants 0 and %d hold different statistics", i);
            }
        }
        for (int i = 0; i < P; i++) cls_stats_destroy(k[i].s);
        meet_free(&m);
        cls_stats_destroy(want);
    }
    free(whole.data);
}

/* Participant 2 passes q = 1.5: its argument check fails, and it still
 * calls the hook once, so the others stop after their first pass. */
static void a_bad_argument_reaches_every_participant(void **state)
{
    (void)state;
    static const double good[] = {0.5}, bad[] = {1.5};
    cls_array whole = cref_make(CLS_F32, 1, 150, 4, 9);
    meet m;
    meet_init(&m);
    part k[P];
    memset(k, 0, sizeof k);
    for (int i = 0; i < P; i++) {
        k[i].m = &m;
        k[i].ctx = ctxs[i];
        rows_of(&whole, i, &k[i].x);
        k[i].q = i == 2 ? bad : good;
        k[i].nq = 1;
        k[i].out = malloc(4 * sizeof *k[i].out);
    }
    spawn(run_quantiles, k);
    for (int i = 0; i < P; i++) {
        assert_int_equal(k[i].calls, 1);
        assert_int_not_equal(k[i].st, CLS_OK);
        free(k[i].out);
    }
    assert_int_equal(k[2].st, CLS_E_ARG);
    if (!strstr(cls_last_error(ctxs[2]), "outside [0, 1]")) fail_msg("%s", cls_last_error(ctxs[2]));
    meet_free(&m);
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
        cmocka_unit_test(three_participants_medians_equal_one_call),
        cmocka_unit_test(robust_statistics_equal_one_fit),
        cmocka_unit_test(fit_across_participants_equals_one_fit),
        cmocka_unit_test(a_bad_argument_reaches_every_participant),
    };
    return TEST_RUN("quantiles_combined", tests, setup, teardown);
}
