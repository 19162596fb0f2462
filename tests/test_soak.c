/* Soak (issue 26, part 4): many library calls of mixed shapes, dtypes and
 * pipelines in one process, every result against the float64 reference,
 * and what the process holds over time:
 *   - resident memory (RSS) at the end within 5% of the RSS after warm-up
 *     (the end of the first context's life past the first quarter of the
 *     calls, or the quarter's end with one context: every kernel built,
 *     every buffer grown, PoCL's caches filled), measured after
 *     malloc_trim(0) so that
 *     free pages glibc keeps do not count (the RSS as it is is printed
 *     too), and the bytes malloc'ed and not freed within 1%;
 *   - open file descriptors the same at the end as after warm-up;
 *   - inputs: every case's input array, read by thousands of calls, is
 *     unchanged at the end;
 *   - OpenCL objects: the fault layer counts what the library creates and
 *     releases; back to the count before the first context after each
 *     context is destroyed (one is made afresh every CLS_SOAK_CONTEXT_EVERY
 *     calls), and, but for the context's programs and kernels (its kernel
 *     cache, filled whenever the scheduler first sends a kernel to a
 *     device), no more inside a context at the end than after warm-up;
 *   - call times: one fixed call, timed every tenth call; its median in
 *     the last quarter of the run over the second quarter is printed
 *     (asserted within CLS_SOAK_MAX_DRIFT only where set: tools/soak.sh;
 *     a shared machine's noise is no defect of the library).
 * CLS_SOAK_CALLS sets the number of calls: meson's short run makes 400
 * (a few seconds); tools/soak.sh runs 10 000 and records the figures in
 * docs/RELIABILITY.md, and a short run under valgrind memcheck
 * (CLS_SOAK_CHECK_RSS=0: the RSS is then valgrind's). */
#include <dirent.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault_ctl.h"
#include "pipeline_util.h"

#define SLICE_BYTES (16 * 1024)

/* ---- what the process holds ---- */

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the one opendir holds */
}

static long live_objects(void) { return fault_count.created(OBJ_ALL) - fault_count.released(OBJ_ALL); }

/* The objects a context holds between calls but for its programs and
 * kernels: those are its kernel cache, built the first time the scheduler
 * sends a kernel to a device, in whichever call that is (a choice of the
 * moment under load), bounded by the kernels there are, and released with
 * the context (checked at every context's end). A call that keeps a
 * buffer, event or queue shows here. */
static long live_between_calls(void)
{
    long n = 0;
    for (int t = 0; t < OBJ_TYPES; t++)
        if (t != OBJ_PROGRAM && t != OBJ_KERNEL) n += fault_count.created(t) - fault_count.released(t);
    return n;
}
static long base_between_calls;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* ---- the calls ---- */

enum kind { FIT_TRANSFORM, TRANSFORM_IN_PLACE, INVERSE, FIT_ONLY, STATS_FILE, HOST_ALLOC };

typedef struct soak_case {
    const char *name;
    enum kind kind;
    cls_dtype dtype;
    size_t batch, rows, cols;
    cls_pipeline p;
    unsigned features;
    int factors;        /* 1: factors of shape cols; 2: rows x cols */
    /* made once: */
    cls_array x, y, f;
    cls_array x0;       /* a copy of x: the library only reads its input */
    double *want;       /* the reference output */
    cls_stats *fitted;  /* for transforms */
} soak_case;

/* name, kind, dtype, shape, data features, factors, then the pipeline's fields */
#define CASE(n, k, t, b, r, c, feat, fac, ...)                                                              \
    {.name = (n), .kind = (k), .dtype = (t), .batch = (b), .rows = (r), .cols = (c), .features = (feat), \
     .factors = (fac), .p = {__VA_ARGS__}}
static soak_case cases[] = {
    CASE("minmax f32 matrix", FIT_TRANSFORM, CLS_F32, 3, 50, 17, REF_MISSING, 0, .scaler = CLS_MINMAX),
    CASE("zscore f64 batch two-phase", FIT_TRANSFORM, CLS_F64, 1, 3000, 5, REF_OFFSET | REF_MISSING, 0,
         .scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH),
    CASE("decimal f32 in place", TRANSFORM_IN_PLACE, CLS_F32, 2, 300, 9, REF_NEGATIVE, 0, .scaler = CLS_DECIMAL),
    CASE("discount f32", FIT_TRANSFORM, CLS_F32, 1, 700, 31, 0, 1, .scaler = CLS_NONE),
    CASE("zscore + discount f64", FIT_TRANSFORM, CLS_F64, 2, 100, 33, REF_MISSING, 2, .scaler = CLS_ZSCORE),
    CASE("minmax fit of one row", FIT_ONLY, CLS_F32, 1, 1, 7, 0, 0, .scaler = CLS_MINMAX),
    CASE("minmax inverse f32", INVERSE, CLS_F32, 4, 64, 12, REF_NEGATIVE, 0, .scaler = CLS_MINMAX, .lo = -1, .hi = 1),
    CASE("minmax clip f32 batch", FIT_TRANSFORM, CLS_F32, 5, 40, 8, REF_CONSTANT | REF_ALL_MISSING, 0,
         .scaler = CLS_MINMAX, .scope = CLS_SCOPE_BATCH, .lo = 2, .hi = 3, .clip = 1),
    CASE("stats file round trip", STATS_FILE, CLS_F64, 3, 20, 6, REF_MISSING, 0, .scaler = CLS_ZSCORE),
    CASE("zscore into cls_host_alloc memory", HOST_ALLOC, CLS_F32, 1, 2000, 16, REF_OFFSET, 0, .scaler = CLS_ZSCORE),
};
#define NCASES (sizeof cases / sizeof cases[0])
#define TIMED 1 /* the case timed for drift: a two-phase call of a few milliseconds */

static char stats_path[4200];

static void case_prepare(soak_case *c, uint64_t seed)
{
    c->x = ref_make(c->dtype, c->batch, c->rows, c->cols, seed, c->features);
    c->y = make_out(&c->x);
    c->x0 = ref_copy(&c->x);
    if (c->factors == 1) c->f = ref_make_factors(c->dtype, 1, 1, c->cols, seed + 1);
    if (c->factors == 2) c->f = ref_make_factors(c->dtype, 1, c->rows, c->cols, seed + 1);
    if (c->factors) c->p.factors = &c->f;
    size_t n = c->batch * c->rows * c->cols;
    c->want = malloc(n * sizeof *c->want);
    assert_non_null(c->want);
    if (c->kind == INVERSE) {
        /* x scaled by the fitted scaler, then inverted: x again */
        for (size_t i = 0; i < n; i++) c->want[i] = ref_get(&c->x, i);
    } else {
        ref_fit_transform(&c->x, &c->p, c->want, NULL);
    }
}

static void case_free(soak_case *c)
{
    size_t bytes = c->batch * c->rows * c->cols * (c->dtype == CLS_F64 ? 8 : 4);
    if (memcmp(c->x.data, c->x0.data, bytes) != 0) print_message("# %s: the input changed\n", c->name);
    assert_memory_equal(c->x.data, c->x0.data, bytes);
    ref_free(&c->x0);
    ref_free(&c->x);
    ref_free(&c->y);
    if (c->f.data) ref_free(&c->f);
    free(c->want);
    cls_stats_destroy(c->fitted);
    c->fitted = NULL;
}

static void expect(cls_context *ctx, cls_status st, const char *what, const soak_case *c)
{
    if (st != CLS_OK) print_error("%s (%s): %s: %s\n", what, c->name, cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
}

/* One call of case c on ctx, its result checked. */
static void case_run(cls_context *ctx, soak_case *c)
{
    size_t n = c->batch * c->rows * c->cols, es = c->dtype == CLS_F64 ? 8 : 4;
    size_t bad = 0;
    cls_stats *s = NULL;
    switch (c->kind) {
    case FIT_TRANSFORM:
        expect(ctx, cls_fit_transform(ctx, &c->p, &c->x, &c->y, NULL), "cls_fit_transform", c);
        bad = ref_compare(&c->y, c->want, tol_for(c->dtype), c->name);
        break;
    case TRANSFORM_IN_PLACE:
        if (!c->fitted) expect(ctx, cls_fit(ctx, &c->p, &c->x, &c->fitted), "cls_fit", c);
        memcpy(c->y.data, c->x.data, n * es);
        expect(ctx, cls_transform(ctx, &c->p, c->fitted, &c->y, &c->y), "cls_transform in place", c);
        bad = ref_compare(&c->y, c->want, tol_for(c->dtype), c->name);
        break;
    case INVERSE: {
        if (!c->fitted) expect(ctx, cls_fit(ctx, &c->p, &c->x, &c->fitted), "cls_fit", c);
        cls_pipeline inv = c->p;
        inv.inverse = 1;
        expect(ctx, cls_transform(ctx, &c->p, c->fitted, &c->x, &c->y), "cls_transform", c);
        expect(ctx, cls_transform(ctx, &inv, c->fitted, &c->y, &c->y), "cls_transform inverse", c);
        bad = compare_on_column_scale(&c->y, c->want, &c->x, 1e-5, c->name);
        break;
    }
    case FIT_ONLY:
        expect(ctx, cls_fit(ctx, &c->p, &c->x, &s), "cls_fit", c);
        check_stats(s, &c->x, c->p.scope, 0, c->name);
        break;
    case STATS_FILE: {
        cls_stats *loaded = NULL, *twice = NULL;
        expect(ctx, cls_fit(ctx, &c->p, &c->x, &s), "cls_fit", c);
        assert_int_equal(cls_stats_save(s, stats_path), CLS_OK);
        assert_int_equal(cls_stats_load(stats_path, &loaded), CLS_OK);
        expect(ctx, cls_transform(ctx, &c->p, loaded, &c->x, &c->y), "cls_transform with loaded stats", c);
        bad = ref_compare(&c->y, c->want, tol_for(c->dtype), c->name);
        /* merging the same data twice leaves min and max as they were */
        expect(ctx, cls_fit(ctx, &c->p, &c->x, &twice), "cls_fit", c);
        assert_int_equal(cls_stats_merge(twice, loaded), CLS_OK);
        cls_stats_destroy(loaded);
        cls_stats_destroy(twice);
        break;
    }
    case HOST_ALLOC: {
        void *out = NULL;
        expect(ctx, cls_host_alloc(ctx, n * es, &out), "cls_host_alloc", c);
        cls_array y = c->y;
        y.data = out;
        expect(ctx, cls_fit_transform(ctx, &c->p, &c->x, &y, NULL), "cls_fit_transform into pinned memory", c);
        bad = ref_compare(&y, c->want, tol_for(c->dtype), c->name);
        cls_host_free(ctx, out);
        break;
    }
    }
    cls_stats_destroy(s);
    assert_int_equal(bad, 0);
}

/* ---- the soak ---- */

typedef struct sample {
    long call, rss_raw, rss, heap, fds, live; /* RSS as it is, and after malloc_trim(0); heap: KiB
                                                 malloc'ed and not freed (all arenas) */
    double timed_ms;   /* median of the timed case in this window */
} sample;

/* What the process holds now (call, timed_ms: the caller's). */
static void measure(sample *sm, long base_live)
{
    struct mallinfo2 mi = mallinfo2();
    sm->heap = (long)((mi.uordblks + mi.hblkhd) / 1024);
    sm->rss_raw = rss_kib();
    malloc_trim(0); /* free pages back to the system: what is left is held */
    sm->rss = rss_kib();
    sm->fds = open_fds();
    (void)base_live;
    sm->live = live_between_calls() - base_between_calls;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static cls_context *new_context(void)
{
    cls_context *ctx = test_context(NULL, 0, SLICE_BYTES);
    return ctx;
}

static void mixed_calls_hold_memory_descriptors_and_objects_flat(void **state)
{
    (void)state;
    long calls = env_long("CLS_SOAK_CALLS", 400);
    long every = env_long("CLS_SOAK_CONTEXT_EVERY", 200);
    double max_drift = getenv("CLS_SOAK_MAX_DRIFT") ? atof(getenv("CLS_SOAK_MAX_DRIFT")) : 0;
    char dir[4096];
    test_tmpdir(dir, sizeof dir, "soak");
    snprintf(stats_path, sizeof stats_path, "%s/stats.bin", dir);
    for (size_t i = 0; i < NCASES; i++) case_prepare(&cases[i], 900 + i);

    enum { WINDOWS = 20 };
    sample samples[WINDOWS + 2];
    size_t nsamples = 0;
    long window = calls / WINDOWS > 0 ? calls / WINDOWS : 1;
    double *times = malloc((size_t)(window + NCASES) * sizeof *times);
    /* every timed call: its time, for the quarters compared at the end */
    size_t nall = (size_t)(calls / (long)NCASES + 2), nt = 0;
    double *all = malloc(nall * sizeof *all);
    long *at = malloc(nall * sizeof *at);
    assert_non_null(times);
    assert_non_null(all);
    assert_non_null(at);
    size_t ntimes = 0;

    long base_live = live_objects();
    base_between_calls = live_between_calls();
    sample warm = {0};
    long max_live_after_warm = 0;
    rng g;
    rng_seed(&g, 4242);
    cls_context *ctx = new_context();
    double t_start = now();
    for (long i = 0; i < calls; i++) {
        if (i > 0 && i % every == 0) {
            /* warm-up: the end of the first context's life past the first
             * quarter. With two devices, which device first runs a kernel
             * (and so builds it: a program and a kernel object, 1.5 MB of
             * PoCL's heap) is the scheduler's choice of the moment: under
             * CI's load a context built its last kernel after call 100 of
             * 200 (2026-11-26: 55 objects and 88.3 MB at call 100, 57 and
             * 92.9 MB from call 120 on), so a point inside a context's life
             * is no measure of what it holds at the end */
            if (!warm.rss && i >= calls / 4) measure(&warm, base_live);
            for (size_t k = 0; k < NCASES; k++) {
                cls_stats_destroy(cases[k].fitted);
                cases[k].fitted = NULL;
            }
            cls_context_destroy(ctx);
            if (live_objects() != base_live)
                print_message("# call %ld: %ld OpenCL objects outlived their context\n", i, live_objects() - base_live);
            assert_int_equal(live_objects(), base_live);
            ctx = new_context();
        }
        /* every case once per round, in a random order, the timed one first */
        size_t k = TIMED;
        if (i % NCASES != 0) {
            k = (size_t)(rng_next(&g) % (NCASES - 1));
            k += k >= TIMED;
        }
        double t = now();
        case_run(ctx, &cases[k]);
        if (k == TIMED) {
            times[ntimes++] = 1e3 * (now() - t);
            if (nt < nall) {
                all[nt] = times[ntimes - 1];
                at[nt++] = i;
            }
        }
        if ((i + 1) % window == 0 || i + 1 == calls) {
            sample *sm = &samples[nsamples < WINDOWS + 1 ? nsamples++ : WINDOWS + 1];
            sm->call = i + 1;
            measure(sm, base_live);
            sm->timed_ms = median(times, ntimes);
            ntimes = 0;
            /* one context for the whole run: the first quarter's end */
            if (every >= calls && i + 1 >= calls / 4 && !warm.rss) warm = *sm;
            else if (warm.rss && sm->live > max_live_after_warm) max_live_after_warm = sm->live;
        }
    }
    double wall = now() - t_start;
    sample *last = &samples[nsamples - 1];
    print_message("# %ld calls in %.1f s; per twentieth: call, RSS KiB (as is, after malloc_trim), heap in use KiB, "
                  "fds, live OpenCL objects but programs and kernels, timed call ms\n", calls, wall);
    for (size_t i = 0; i < nsamples; i++)
        print_message("#   %6ld %8ld %8ld %8ld %4ld %5ld %8.3f\n", samples[i].call, samples[i].rss_raw, samples[i].rss,
                      samples[i].heap, samples[i].fds, samples[i].live, samples[i].timed_ms);
    /* the timed call's median in the second quarter against the last */
    double *q2 = malloc((nt + 1) * sizeof *q2), *q4 = malloc((nt + 1) * sizeof *q4);
    assert_non_null(q2);
    assert_non_null(q4);
    size_t n2 = 0, n4 = 0;
    for (size_t i = 0; i < nt; i++) {
        if (at[i] >= calls / 4 && at[i] < calls / 2) q2[n2++] = all[i];
        if (at[i] >= calls - calls / 4) q4[n4++] = all[i];
    }
    double m2 = median(q2, n2), m4 = median(q4, n4), drift = m2 > 0 ? m4 / m2 : 0;
    print_message("# RSS after malloc_trim end/warm %.4f (%ld / %ld KiB), heap in use end/warm %.5f (%ld / %ld KiB), "
                  "fds %ld -> %ld, live objects after warm-up at most %ld (warm %ld), timed call median %.3f ms in "
                  "the 2nd quarter, %.3f ms in the 4th (ratio %.3f)\n",
                  (double)last->rss / (double)warm.rss, last->rss, warm.rss, (double)last->heap / (double)warm.heap,
                  last->heap, warm.heap, warm.fds, last->fds, max_live_after_warm, warm.live, m2, m4, drift);
    free(q2);
    free(q4);
    free(all);
    free(at);

    cls_context_destroy(ctx);
    for (size_t i = 0; i < NCASES; i++) case_free(&cases[i]);
    free(times);
    assert_int_equal(live_objects(), base_live);
    /* a short run has no warm-up to speak of; under valgrind RSS is valgrind's */
    const char *check_rss = getenv("CLS_SOAK_CHECK_RSS");
    /* AddressSanitizer keeps freed memory in quarantine (RSS grows) and
     * reports no heap in use: its RSS says nothing about ours */
    int asan = 0;
#if defined(__SANITIZE_ADDRESS__)
    asan = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    asan = 1;
#endif
#endif
    if (calls >= 200 && !asan && !(check_rss && !strcmp(check_rss, "0"))) {
        assert_true(last->rss <= warm.rss + warm.rss / 20);
        assert_true(last->heap <= warm.heap + warm.heap / 100);
    }
    assert_true(max_live_after_warm <= warm.live);
    assert_int_equal(last->fds, warm.fds);
    if (max_drift > 0) assert_true(drift <= max_drift);
}

static int group_setup(void **state)
{
    (void)state;
    cls_context *ctx = new_context(); /* the loader maps the layer at the first OpenCL call */
    cls_context_destroy(ctx);
    return find_layer() == 0 && find_count_layer() == 0 ? 0 : -1;
}

int main(void)
{
    const char *layer = getenv("CLS_FAULT_LAYER");
    if (layer) setenv("OPENCL_LAYERS", layer, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mixed_calls_hold_memory_descriptors_and_objects_flat),
    };
    return TEST_RUN("soak", tests, group_setup, NULL);
}
