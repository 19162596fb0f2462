/* Devices and contexts at work at the same time: two devices of one context
 * launching the same kernels at once, and two contexts used from two threads
 * at once, on fresh shapes every call (so that every launch has another
 * grid), each result against the float64 reference.
 *
 * Suite "basic" runs on POCL_DEVICES="basic basic": PoCL 3.1 runs a basic
 * device's kernels on the thread that flushes its queue, and its cache of
 * loaded kernels loses count when two threads run the same program's
 * kernel at different grid widths (it aborted the process within seconds
 * before each live basic device got its own build slot, build_slot.c).
 * Suite "pocl" runs the same cases on two pthread devices. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/job.h" /* the devices' kernels */
#include "pipeline_util.h"
#include "sched_given.h"

/* One call on a fresh random shape, checked without cmocka's assertions (a
 * worker thread may not fail the test): returns the count of wrong values,
 * or SIZE_MAX when the call failed (its message goes to `err`). */
static size_t one_call(cls_context *ctx, rng *g, uint64_t seed, char *err, size_t errlen)
{
    static const cls_scaler scalers[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL, CLS_NONE};
    cls_dtype dt = (rng_next(g) & 1) && suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    size_t b = 1 + rng_next(g) % 4, r = 100 + rng_next(g) % 1500, c = 1 + rng_next(g) % 300;
    cls_array x = ref_make(dt, b, r, c, seed, (rng_next(g) & 1) ? REF_MISSING | REF_NEGATIVE : 0);
    cls_array y = make_out(&x);
    cls_pipeline p = {0};
    p.scaler = scalers[rng_next(g) % 4];
    p.scope = (rng_next(g) & 1) ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
    size_t wrong = SIZE_MAX;
    cls_status st = cls_fit_transform(ctx, &p, &x, &y, NULL);
    if (st == CLS_OK) {
        double *want = malloc(b * r * c * sizeof *want);
        if (want) {
            ref_fit_transform(&x, &p, want, NULL);
            wrong = ref_compare(&y, want, tol_for(dt), "concurrent call");
            free(want);
        }
    } else {
        snprintf(err, errlen, "%s: %s", cls_status_str(st), cls_last_error(ctx));
    }
    ref_free(&x);
    ref_free(&y);
    return wrong;
}

/* Small slices, so that every call has several for each device. */
#define SLICE_BYTES (16 * 1024)

static void two_devices_launch_at_once_on_fresh_shapes(void **state)
{
    (void)state;
    /* equal speeds given (tests/sched_given.c): which device takes part
     * is not decided on how fast a loaded host ran a probe */
    given_reset(1e-3, 1.0, 10e9 / 1000);
    cls_context *ctx = given_context(NULL, NULL, 0, SLICE_BYTES);
    assert_int_equal(cls_device_count(ctx), 2);
    rng g;
    rng_seed(&g, 7100);
    size_t both = 0;
    for (int i = 0; i < 150; i++) {
        char err[CLS_ERR_LEN] = "";
        size_t wrong = one_call(ctx, &g, 7100 + (uint64_t)i, err, sizeof err);
        if (wrong == SIZE_MAX) fail_msg("call %d: %s", i, err);
        assert_int_equal(wrong, 0);
        cls_report rep;
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        assert_int_equal(rep.ndevices, 2);
        both += rep.devices[0].slices > 0 && rep.devices[1].slices > 0;
    }
    /* How many calls both devices shared is the host's doing, not the
     * library's (a worker thread that gets no core until the calling
     * thread's device has taken every slice; a quarter of the calls, no
     * scaler, copy on the host): asserted only that the calls were shared
     * at all. Two devices surely at work at once, whatever the load, are
     * the launch tests above (a thread for each). */
    print_message("# both devices took slices in %zu of 150 calls\n", both);
    assert_true(both > 0);
    cls_context_destroy(ctx);
}

typedef struct worker {
    const char *devices;
    uint64_t seed;
    int calls;
    size_t wrong;        /* values, over all calls */
    int failed;          /* calls that returned an error */
    char err[CLS_ERR_LEN];
    pthread_t thread;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    cls_config cfg = {0};
    cfg.devices = w->devices;
    cfg.slice_bytes = SLICE_BYTES;
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) {
        snprintf(w->err, sizeof w->err, "cls_context_create: %s", cls_last_error(ctx));
        w->failed = 1;
        cls_context_destroy(ctx);
        return NULL;
    }
    rng g;
    rng_seed(&g, w->seed);
    for (int i = 0; i < w->calls; i++) {
        size_t wrong = one_call(ctx, &g, w->seed + (uint64_t)i, w->err, sizeof w->err);
        if (wrong == SIZE_MAX) w->failed++;
        else w->wrong += wrong;
    }
    cls_context_destroy(ctx);
    return NULL;
}

/* Two threads, each with its own context, calling at the same time. */
static void run_two_threads(const char *devices_a, const char *devices_b)
{
    worker w[2] = {{.devices = devices_a, .seed = 7300, .calls = 80},
                   {.devices = devices_b, .seed = 7400, .calls = 80}};
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(w[i].thread, NULL);
    for (int i = 0; i < 2; i++) {
        if (w[i].failed) print_error("thread %d (devices %s): %d failed calls; last: %s\n", i,
                                     w[i].devices ? w[i].devices : "all", w[i].failed, w[i].err);
        assert_int_equal(w[i].failed, 0);
        assert_int_equal(w[i].wrong, 0);
    }
}

static void two_contexts_on_one_device_from_two_threads(void **state)
{
    (void)state;
    run_two_threads("0", "0");
}

static void two_contexts_on_all_devices_from_two_threads(void **state)
{
    (void)state;
    run_two_threads(NULL, NULL);
}

/* Device d of the context launches its own copy kernel (the program
 * the context built for it) on its own queue `count` times, at a fresh
 * global size each time: what two devices' slices of different widths do,
 * thousands of times more often. A count, not a time: the same work
 * however loaded the host is. */
typedef struct launcher {
    cls_context *ctx;
    cls_dev *d;
    unsigned q; /* the queue it launches on, and the program copy of that queue */
    long count;
    long launches;
    cl_int err;
    const char *call;
    pthread_t thread;
} launcher;

static void *launch_loop(void *arg)
{
    launcher *l = arg;
    cls_dev *d = l->d;
    const size_t n = 1 << 18;
    cl_int e = CL_SUCCESS;
    cl_mem a = NULL, b = NULL;
    /* a kernel object of this thread's own (kernel arguments are not
     * thread-safe), from the program that the library launches on queue q */
    cl_kernel shared = NULL, k = NULL;
    if (cls_kernel_get(l->ctx, d, CLS_K_COPY, CLS_F32, l->q, &shared, NULL, NULL) != CLS_OK) {
        l->err = CL_INVALID_PROGRAM;
        l->call = "cls_kernel_get";
        return NULL;
    }
    cl_program prog = NULL;
    e = clGetKernelInfo(shared, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL);
    if (e == CL_SUCCESS) k = clCreateKernel(prog, "copy_f32", &e);
    if (e == CL_SUCCESS) a = clCreateBuffer(d->cl, CL_MEM_READ_WRITE, n * 4, NULL, &e);
    if (e == CL_SUCCESS) b = clCreateBuffer(d->cl, CL_MEM_READ_WRITE, n * 4, NULL, &e);
    if (e != CL_SUCCESS) {
        l->err = e;
        l->call = "clCreateKernel or clCreateBuffer";
        goto out;
    }
    rng g;
    rng_seed(&g, 7500 + 16 * d->index + l->q);
    while (l->launches < l->count) {
        cl_ulong count = 1 + rng_next(&g) % n;
        size_t local = d->local, global = ((count + d->vec - 1) / d->vec + local - 1) / local * local;
        e = clSetKernelArg(k, 0, sizeof a, &a);
        if (e == CL_SUCCESS) e = clSetKernelArg(k, 1, sizeof b, &b);
        if (e == CL_SUCCESS) e = clSetKernelArg(k, 2, sizeof count, &count);
        if (e == CL_SUCCESS) e = clEnqueueNDRangeKernel(d->q[l->q], k, 1, NULL, &global, &local, 0, NULL, NULL);
        if (e == CL_SUCCESS) e = clFinish(d->q[l->q]);
        if (e != CL_SUCCESS) {
            l->err = e;
            l->call = "launch";
            break;
        }
        l->launches++;
    }
out:
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    if (k) clReleaseKernel(k);
    return NULL;
}

/* Before build slots this aborted the process within seconds on two basic
 * devices (PoCL's assertion); two pthread devices never did. */
static void two_devices_run_one_kernel_at_random_widths(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    assert_int_equal(cls_device_count(ctx), 2);
    launcher l[2];
    memset(l, 0, sizeof l);
    for (int i = 0; i < 2; i++) {
        l[i].ctx = ctx;
        l[i].d = &ctx->devs[i];
        l[i].count = 20000;
        assert_int_equal(pthread_create(&l[i].thread, NULL, launch_loop, &l[i]), 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(l[i].thread, NULL);
    for (int i = 0; i < 2; i++) {
        if (l[i].err) print_error("device %d: %s: %s\n", i, l[i].call, cls_cl_error_name(l[i].err));
        assert_int_equal(l[i].err, CL_SUCCESS);
        assert_int_equal(l[i].launches, l[i].count);
    }
    cls_context_destroy(ctx);
}

/* Every queue of every device launches the same kernel at random widths at
 * once, as a device's slices do on its queues: PoCL 5.0's threaded CPU
 * driver runs several queues' commands at once and stopped the process on
 * its assertion (the bench on a 16-core host, 2026-11-24) before each
 * queue got a program of its own there (build_slot.c). */
static void every_queue_runs_one_kernel_at_random_widths(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t n = 0;
    launcher l[2 * CLS_MAX_QUEUES];
    memset(l, 0, sizeof l);
    for (size_t i = 0; i < ctx->ndevs && i < 2; i++)
        for (unsigned q = 0; q < ctx->devs[i].nq; q++) {
            l[n].ctx = ctx;
            l[n].d = &ctx->devs[i];
            l[n].q = q;
            l[n].count = 5000;
            assert_int_equal(pthread_create(&l[n].thread, NULL, launch_loop, &l[n]), 0);
            n++;
        }
    for (size_t i = 0; i < n; i++) pthread_join(l[i].thread, NULL);
    for (size_t i = 0; i < n; i++) {
        if (l[i].err) print_error("device %zu, queue %u: %s: %s\n", l[i].d->index, l[i].q, l[i].call,
                                  cls_cl_error_name(l[i].err));
        assert_int_equal(l[i].err, CL_SUCCESS);
        assert_int_equal(l[i].launches, l[i].count);
    }
    cls_context_destroy(ctx);
}

/* Build options of the devices of a context, [i] for device i. */
static void options_of(cls_context *ctx, char opts[][CLS_OPTIONS_LEN])
{
    for (size_t i = 0; i < ctx->ndevs; i++)
        cls_program_options(&ctx->devs[i], CLS_K_COPY, CLS_F32, 0, opts[i], CLS_OPTIONS_LEN);
}

/* Two live basic devices never share a build (PoCL's kernel cache is keyed
 * by the program's hash, which covers the options); a slot is given back
 * when its context goes, so one context at a time always builds the same
 * program and its binary cache entry stays warm. pthread devices keep one
 * build for all. */
static void live_programs_of_basic_devices_differ(void **state)
{
    (void)state;
    int basic = test_suite_is("basic");
    char o[2][CLS_OPTIONS_LEN], o_a[1][CLS_OPTIONS_LEN], o_b[1][CLS_OPTIONS_LEN], o_c[1][CLS_OPTIONS_LEN];
    cls_context *ctx = test_context(NULL, 0, 0);
    options_of(ctx, o);
    if (basic) assert_string_not_equal(o[0], o[1]);
    else assert_string_equal(o[0], o[1]);
    cls_context_destroy(ctx);

    cls_context *a = test_context("0", 0, 0), *b = test_context("0", 0, 0);
    options_of(a, o_a);
    options_of(b, o_b);
    if (basic) assert_string_not_equal(o_a[0], o_b[0]);
    else assert_string_equal(o_a[0], o_b[0]);
    cls_context_destroy(a);
    cls_context *c = test_context("0", 0, 0);
    options_of(c, o_c);
    assert_string_equal(o_c[0], o_a[0]); /* a's slot, given back */
    cls_context_destroy(b);
    cls_context_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(live_programs_of_basic_devices_differ),
        cmocka_unit_test(two_devices_run_one_kernel_at_random_widths),
        cmocka_unit_test(every_queue_runs_one_kernel_at_random_widths),
        cmocka_unit_test(two_devices_launch_at_once_on_fresh_shapes),
        cmocka_unit_test(two_contexts_on_one_device_from_two_threads),
        cmocka_unit_test(two_contexts_on_all_devices_from_two_threads),
    };
    return TEST_RUN("concurrency", tests, NULL, NULL);
}
