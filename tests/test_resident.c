/* Data already on a device: a context on the caller's cl_context, devices
 * and queue (cls_config.cl_context), and fit/transform of arrays in cl_mem
 * buffers (cls_*_buffer), compared with the float64 reference; the wait
 * list in and the event out; bad input (a device not in the context, a
 * buffer too small, of another context, released, a read-only output)
 * refused with CLS_E_ARG and nothing written; every retain of the
 * caller's objects released (counted by the fault layer). Runs on PoCL,
 * rusticl (float32) and Oclgrind (small arrays). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "fault_ctl.h"
#include "pipeline_util.h"
#include "reference.h"

typedef struct fixture {
    cl_platform_id plat;
    cl_device_id dev;
    cl_context cl;
    cl_command_queue q;
    cls_context *ctx;
    int fp64;
} fixture;

static fixture fx;

/* Oclgrind runs about 20 us per element: its arrays stay small. */
static size_t scale(size_t n) { return test_suite_is("oclgrind") ? (n + 7) / 8 : n; }

static int group_setup(void **state)
{
    (void)state;
    cl_uint np = 0;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0) return -1;
    cl_platform_id plats[16];
    if (clGetPlatformIDs(np < 16 ? np : 16, plats, NULL) != CL_SUCCESS) return -1;
    for (cl_uint i = 0; i < np && i < 16 && !fx.dev; i++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &fx.dev, &nd) != CL_SUCCESS || nd == 0) fx.dev = NULL;
        else fx.plat = plats[i];
    }
    if (!fx.dev) return -1;
    /* the loader has mapped the layer at the first OpenCL call */
    if (find_layer() != 0 || find_count_layer() != 0) return -1;
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)fx.plat, 0};
    fx.cl = clCreateContext(props, 1, &fx.dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) return -1;
    fx.q = clCreateCommandQueue(fx.cl, fx.dev, 0, &e);
    if (e != CL_SUCCESS) return -1;
    cl_device_fp_config fp = 0;
    if (clGetDeviceInfo(fx.dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) != CL_SUCCESS) fp = 0;
    fx.fp64 = fp != 0;
    cls_config cfg = {0};
    cfg.cl_context = fx.cl;
    cfg.cl_devices = &fx.dev;
    cfg.cl_ndevices = 1;
    cfg.cl_queues = &fx.q;
    cls_status st = cls_context_create(&cfg, &fx.ctx);
    if (st != CLS_OK) {
        fprintf(stderr, "cls_context_create on the caller's context: %s\n", cls_last_error(fx.ctx));
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cls_context_destroy(fx.ctx);
    if (fx.q) clReleaseCommandQueue(fx.q);
    if (fx.cl) clReleaseContext(fx.cl);
    return 0;
}

static size_t nbytes(const cls_array *a) { return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4); }

/* A device buffer of `pad` bytes, then a's data, then `pad` bytes more. */
static cl_mem upload(const cls_array *a, size_t pad)
{
    cl_int e;
    cl_mem m = clCreateBuffer(fx.cl, CL_MEM_READ_WRITE, nbytes(a) + 2 * pad, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    char *fill = malloc(pad ? pad : 1);
    assert_non_null(fill);
    memset(fill, 0x7f, pad ? pad : 1);
    if (pad) {
        assert_int_equal(clEnqueueWriteBuffer(fx.q, m, CL_TRUE, 0, pad, fill, 0, NULL, NULL), CL_SUCCESS);
        assert_int_equal(clEnqueueWriteBuffer(fx.q, m, CL_TRUE, pad + nbytes(a), pad, fill, 0, NULL, NULL),
                         CL_SUCCESS);
    }
    free(fill);
    assert_int_equal(clEnqueueWriteBuffer(fx.q, m, CL_TRUE, pad, nbytes(a), a->data, 0, NULL, NULL), CL_SUCCESS);
    return m;
}

/* Reads the array at `pad` back into a host copy of a's shape. */
static cls_array download(cl_mem m, const cls_array *a, size_t pad)
{
    cls_array y = make_out(a);
    assert_int_equal(clEnqueueReadBuffer(fx.q, m, CL_TRUE, pad, nbytes(a), y.data, 0, NULL, NULL), CL_SUCCESS);
    return y;
}

static cls_array buffer_of(cl_mem m, size_t offset, const cls_array *a)
{
    cls_array b = {.where = CLS_IN_BUFFER, .mem = m, .offset = offset, .dtype = a->dtype, .batch = a->batch, .rows = a->rows,
                    .cols = a->cols};
    return b;
}

static void expect(const cls_array *y, const double *want, const char *label)
{
    assert_int_equal(ref_compare(y, want, tol_for(y->dtype), label), 0);
}

static int runs(cls_dtype t) { return t == CLS_F32 || fx.fp64; }

/* fit_transform in place at an offset, then out of place; stats returned. */
static void fit_transform_one(cls_dtype t, size_t b, size_t r, size_t c, cls_scaler scaler, cls_scope scope,
                              unsigned features, const char *label)
{
    if (!runs(t)) return;
    cls_array x = ref_make(t, b, r, c, 0xb0f + b * 31 + r * 7 + c, features);
    cls_pipeline p = {.scaler = scaler, .scope = scope};
    size_t n = b * r * c;
    double *want = malloc(n * sizeof *want);
    size_t groups = ref_groups(&x, scope);
    cls_column_stats *ws = calloc(groups * c, sizeof *ws);
    assert_non_null(want);
    assert_non_null(ws);
    ref_fit_transform(&x, &p, want, ws);
    size_t pad = 256;

    /* in place, with statistics */
    cl_mem m = upload(&x, pad);
    cls_array xb = buffer_of(m, pad, &x);
    cls_stats *s = NULL;
    cls_status st = (xb.sync = NULL, cls_fit_transform(fx.ctx, &p, &xb, &xb, &s));
    if (st != CLS_OK) print_error("%s: %s\n", label, cls_last_error(fx.ctx));
    assert_int_equal(st, CLS_OK);
    cls_array y = download(m, &x, pad);
    expect(&y, want, label);
    check_stats(s, &x, scope, scaler == CLS_ZSCORE, label);
    /* the bytes around the array are untouched */
    unsigned char edge[256];
    assert_int_equal(clEnqueueReadBuffer(fx.q, m, CL_TRUE, 0, pad, edge, 0, NULL, NULL), CL_SUCCESS);
    for (size_t i = 0; i < pad; i++) assert_int_equal(edge[i], 0x7f);
    assert_int_equal(clEnqueueReadBuffer(fx.q, m, CL_TRUE, pad + nbytes(&x), pad, edge, 0, NULL, NULL), CL_SUCCESS);
    for (size_t i = 0; i < pad; i++) assert_int_equal(edge[i], 0x7f);
    ref_free(&y);

    /* out of place, then the transform of the input with those statistics */
    clReleaseMemObject(m);
    m = upload(&x, 0);
    cl_int e;
    cl_mem o = clCreateBuffer(fx.cl, CL_MEM_READ_WRITE, nbytes(&x), NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cls_array ib = buffer_of(m, 0, &x), ob = buffer_of(o, 0, &x);
    assert_int_equal((ib.sync = NULL, cls_fit_transform(fx.ctx, &p, &ib, &ob, NULL)), CLS_OK);
    y = download(o, &x, 0);
    expect(&y, want, label);
    ref_free(&y);
    cls_array x2 = download(m, &x, 0); /* the input stays as it was */
    assert_memory_equal(x2.data, x.data, nbytes(&x));
    ref_free(&x2);
    clReleaseMemObject(o);
    o = clCreateBuffer(fx.cl, CL_MEM_READ_WRITE, nbytes(&x), NULL, &e);
    ob = buffer_of(o, 0, &x);
    assert_int_equal((ib.sync = NULL, cls_transform(fx.ctx, NULL, s, &ib, &ob)), CLS_OK);
    y = download(o, &x, 0);
    expect(&y, want, label);
    ref_free(&y);

    /* cls_fit gives the same statistics */
    cls_stats *s2 = NULL;
    assert_int_equal((ib.sync = NULL, cls_fit(fx.ctx, &p, &ib, &s2)), CLS_OK);
    check_stats(s2, &x, scope, scaler == CLS_ZSCORE, label);
    cls_stats_destroy(s2);
    cls_stats_destroy(s);
    clReleaseMemObject(m);
    clReleaseMemObject(o);
    free(want);
    free(ws);
    ref_free(&x);
}

static void minmax_per_matrix_matches_the_reference(void **state)
{
    (void)state;
    fit_transform_one(CLS_F32, 3, 60, scale(301), CLS_MINMAX, CLS_SCOPE_MATRIX, REF_MISSING | REF_CONSTANT, "mm f32");
    fit_transform_one(CLS_F64, 2, 17, scale(99), CLS_MINMAX, CLS_SCOPE_MATRIX, REF_MISSING | REF_ALL_MISSING,
                      "mm f64");
    fit_transform_one(CLS_F32, 1, 1, 1, CLS_MINMAX, CLS_SCOPE_MATRIX, 0, "mm 1x1x1");
}

static void zscore_of_a_tall_table_matches_the_reference(void **state)
{
    (void)state;
    /* more rows than one work-item walks: chunked statistics, then the
     * scaling, both on the device */
    fit_transform_one(CLS_F32, 1, scale(9000), 5, CLS_ZSCORE, CLS_SCOPE_BATCH, REF_OFFSET | REF_MISSING, "z f32");
    fit_transform_one(CLS_F64, 3, scale(3000), 3, CLS_ZSCORE, CLS_SCOPE_BATCH, REF_NEGATIVE, "z f64 batch");
}

static void decimal_and_discount_match_the_reference(void **state)
{
    (void)state;
    fit_transform_one(CLS_F32, 2, 40, 37, CLS_DECIMAL, CLS_SCOPE_MATRIX, REF_NEGATIVE, "decimal");
    cls_dtype types[2] = {CLS_F32, CLS_F64};
    for (int k = 0; k < 2; k++) {
        cls_dtype t = types[k];
        if (!runs(t)) continue;
        cls_array x = ref_make(t, 4, 50, scale(41), 77 + k, REF_MISSING);
        cls_array f = ref_make_factors(t, 1, 50, scale(41), 78);
        cls_pipeline p = {.scaler = CLS_NONE, .factors = &f};
        size_t n = x.batch * x.rows * x.cols;
        double *want = malloc(n * sizeof *want);
        assert_non_null(want);
        ref_transform(&x, &p, NULL, want);
        cl_mem m = upload(&x, 64);
        cls_array b = buffer_of(m, 64, &x);
        assert_int_equal((b.sync = NULL, cls_transform(fx.ctx, &p, NULL, &b, &b)), CLS_OK);
        cls_array y = download(m, &x, 64);
        expect(&y, want, "discount");
        ref_free(&y);
        clReleaseMemObject(m);
        ref_free(&f);
        ref_free(&x);
        free(want);
    }
}

/* The call waits for the caller's event and hands back one that completes
 * with its output: nothing runs before a user event is set. */
static void a_wait_list_in_and_an_event_out_chain_the_call(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 2, 30, scale(200), 4242, REF_MISSING);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    size_t n = x.batch * x.rows * x.cols;
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    ref_fit_transform(&x, &p, want, NULL);
    cl_mem m = upload(&x, 0);
    cls_array b = buffer_of(m, 0, &x);
    cl_int e;
    cl_event gate = clCreateUserEvent(fx.cl, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_event done = NULL;
    cls_sync sync = {.wait = &gate, .nwait = 1, .done = &done};
    /* Oclgrind runs a queue's commands on the thread that flushes it: a
     * gate still closed there would wait for this very thread */
    int sync_driver = test_suite_is("oclgrind");
    if (sync_driver) assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal((b.sync = &sync, cls_fit_transform(fx.ctx, &p, &b, &b, NULL)), CLS_OK);
    assert_non_null(done);
    cl_int status = CL_COMPLETE;
    assert_int_equal(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL),
                     CL_SUCCESS);
    if (!sync_driver) {
        assert_true(status > CL_COMPLETE); /* queued or submitted: waits for the gate */
        assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    }
    /* the caller's own command chained after clscale's */
    cls_array y = make_out(&x);
    assert_int_equal(clEnqueueReadBuffer(fx.q, m, CL_TRUE, 0, nbytes(&x), y.data, 1, &done, NULL), CL_SUCCESS);
    expect(&y, want, "chained");
    assert_int_equal(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL),
                     CL_SUCCESS);
    assert_int_equal(status, CL_COMPLETE);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    /* a second call chained on the first's event without the host between */
    cl_event d1 = NULL, d2 = NULL;
    cls_sync s1 = {.done = &d1};
    cls_pipeline disc = {.scaler = CLS_NONE};
    cls_array f = ref_make_factors(CLS_F32, 1, 1, x.cols, 9);
    disc.factors = &f;
    assert_int_equal((b.sync = &s1, cls_transform(fx.ctx, &disc, NULL, &b, &b)), CLS_OK);
    cls_sync s2 = {.wait = &d1, .nwait = 1, .done = &d2};
    assert_int_equal((b.sync = &s2, cls_transform(fx.ctx, &disc, NULL, &b, &b)), CLS_OK);
    assert_int_equal(clWaitForEvents(1, &d2), CL_SUCCESS);
    ref_free(&y);
    y = download(m, &x, 0);
    for (size_t i = 0; i < n; i++) {
        size_t col = i % x.cols;
        double fv = ref_get(&f, col);
        assert_close(ref_get(&y, i), want[i] * fv * fv, 1e-5);
    }
    clReleaseEvent(d1);
    clReleaseEvent(d2);
    ref_free(&f);
    ref_free(&y);
    clReleaseMemObject(m);
    ref_free(&x);
    free(want);
}

static cl_uint refcount_ctx(cl_context c)
{
    cl_uint n = 0;
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

static cl_uint refcount_q(cl_command_queue q)
{
    cl_uint n = 0;
    assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

static cl_uint refcount_mem(cl_mem m)
{
    cl_uint n = 0;
    assert_int_equal(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

/* The library's retains and releases, counted by the fault layer's
 * counting (tests/fault_count.c) as the calls are made: exact on every
 * driver, unlike a driver's reference count, which PoCL, rusticl and
 * Oclgrind lower on threads of their own some time after a command
 * completes. */
typedef struct counts {
    long made[OBJ_TYPES], gone[OBJ_TYPES];
} counts;

static counts counted(void)
{
    counts c;
    for (int t = 0; t < OBJ_TYPES; t++) {
        c.made[t] = fault_count.created(t);
        c.gone[t] = fault_count.released(t);
    }
    return c;
}

/* Every object made or retained since `before` released as often. */
static void expect_balanced(const counts *before, const char *what)
{
    static const char *const names[OBJ_TYPES] = {"buffers", "queues", "programs", "kernels", "events",
                                                 "contexts"};
    counts now = counted();
    for (int t = 0; t < OBJ_TYPES; t++) {
        long made = now.made[t] - before->made[t], gone = now.gone[t] - before->gone[t];
        if (made != gone) fail_msg("%s: %s made or retained %ld, released %ld", what, names[t], made, gone);
    }
}

/* A context made and destroyed on the caller's objects, with calls in
 * between, retains each of them (context, queue, buffer) no more often
 * than it releases it, and every object of its own is released. */
static void the_callers_objects_keep_their_references(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, 20, 33, 5, 0);
    cl_mem m = upload(&x, 0);
    counts before = counted();
    cls_config cfg = {.cl_context = fx.cl, .cl_devices = &fx.dev, .cl_ndevices = 1, .cl_queues = &fx.q};
    cls_context *ctx = NULL;
    assert_int_equal(cls_context_create(&cfg, &ctx), CLS_OK);
    assert_int_equal(cls_device_count(ctx), 1);
    cls_array b = buffer_of(m, 0, &x);
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    cl_event done = NULL;
    cls_sync sync = {.done = &done};
    assert_int_equal((b.sync = &sync, cls_fit_transform(ctx, &p, &b, &b, NULL)), CLS_OK);
    assert_int_equal(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done); /* the caller's, made by the library */
    cls_context_destroy(ctx);
    expect_balanced(&before, "a context on the caller's queue, a call with an event out");
    /* without queues or a device list: its own queues on every device */
    before = counted();
    cls_config all = {.cl_context = fx.cl};
    assert_int_equal(cls_context_create(&all, &ctx), CLS_OK);
    assert_int_equal(cls_device_count(ctx), 1);
    assert_int_equal((b.sync = NULL, cls_fit_transform(ctx, &p, &b, &b, NULL)), CLS_OK);
    cls_context_destroy(ctx);
    expect_balanced(&before, "a context with queues of its own");
    /* still the caller's: usable */
    cl_event mark = NULL;
    assert_int_equal(clEnqueueMarkerWithWaitList(fx.q, 0, NULL, &mark), CL_SUCCESS);
    assert_int_equal(clWaitForEvents(1, &mark), CL_SUCCESS);
    clReleaseEvent(mark);
    assert_true(refcount_mem(m) >= 1);
    clReleaseMemObject(m);
    assert_int_equal(clFinish(fx.q), CL_SUCCESS);
    ref_free(&x);
}

static void expect_arg(cls_status st, const char *needle)
{
    if (st != CLS_E_ARG || !strstr(cls_last_error(fx.ctx), needle))
        print_error("status %s, message \"%s\", wanted CLS_E_ARG with \"%s\"\n", cls_status_str(st),
                    cls_last_error(fx.ctx), needle);
    assert_int_equal(st, CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(fx.ctx), needle));
}

/* Bad buffers are refused before anything is enqueued: the output keeps
 * its bytes, *done stays NULL. */
static void bad_buffers_are_refused_and_nothing_is_written(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 2, 10, 16, 11, 0);
    cl_mem m = upload(&x, 0);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cl_event done = (cl_event)&done;
    cls_sync sync = {.done = &done};

    /* too small for the shape, or for the offset */
    cls_array b = buffer_of(m, 0, &x);
    b.rows = 11;
    expect_arg((b.sync = &sync, cls_fit_transform(fx.ctx, &p, &b, &b, NULL)), "does not fit");
    assert_null(done);
    b = buffer_of(m, 4, &x);
    expect_arg((b.sync = &sync, cls_fit_transform(fx.ctx, &p, &b, &b, NULL)), "does not fit");
    b = buffer_of(m, 2, &x);
    expect_arg((b.sync = NULL, cls_fit_transform(fx.ctx, &p, &b, &b, NULL)), "multiple of the element size");

    /* from another context */
    cl_int e;
    cl_context other = clCreateContext(NULL, 1, &fx.dev, NULL, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, nbytes(&x), NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cls_array in = buffer_of(m, 0, &x), fo = buffer_of(foreign, 0, &x);
    expect_arg((fo.sync = NULL, cls_transform(fx.ctx, &p, NULL, &fo, &in)), "another OpenCL context");
    cls_stats *s = NULL;
    expect_arg((fo.sync = NULL, cls_fit(fx.ctx, &p, &fo, &s)), "another OpenCL context");
    assert_null(s);
    expect_arg((in.sync = NULL, cls_fit_transform(fx.ctx, &p, &in, &fo, NULL)), "another OpenCL context");
    /* a wait list event of another context */
    cl_event alien = clCreateUserEvent(other, &e);
    assert_int_equal(e, CL_SUCCESS);
    cls_sync bad_wait = {.wait = &alien, .nwait = 1};
    expect_arg((in.sync = &bad_wait, cls_fit_transform(fx.ctx, &p, &in, &in, NULL)), "another OpenCL context");
    clSetUserEventStatus(alien, CL_COMPLETE);
    clReleaseEvent(alien);
    clReleaseMemObject(foreign);
    clReleaseContext(other);

    /* a read-only output; overlapping input and output */
    cl_mem ro = clCreateBuffer(fx.cl, CL_MEM_READ_ONLY, nbytes(&x), NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cls_array rb = buffer_of(ro, 0, &x);
    expect_arg((in.sync = NULL, cls_fit_transform(fx.ctx, &p, &in, &rb, NULL)), "read-only");
    clReleaseMemObject(ro);
    cl_mem big = clCreateBuffer(fx.cl, CL_MEM_READ_WRITE, 2 * nbytes(&x), NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cls_array b0 = buffer_of(big, 0, &x), b1 = buffer_of(big, 64, &x);
    expect_arg((b0.sync = NULL, cls_fit_transform(fx.ctx, &p, &b0, &b1, NULL)), "overlap");
    clReleaseMemObject(big);

    /* a device index the context does not have; NULL mem */
    cls_sync far = {.device = 5};
    expect_arg((in.sync = &far, cls_fit_transform(fx.ctx, &p, &in, &in, NULL)), "device");
    cls_array nul = buffer_of(NULL, 0, &x);
    expect_arg((nul.sync = NULL, cls_fit_transform(fx.ctx, &p, &nul, &nul, NULL)), "mem is NULL");

    /* nothing was written by any of the refused calls */
    cls_array y = download(m, &x, 0);
    assert_memory_equal(y.data, x.data, nbytes(&x));
    ref_free(&y);
    clReleaseMemObject(m);
    ref_free(&x);
}

/* A context on a cl_context given a device that is not in it, or a queue
 * of another device or context, fails with CLS_E_ARG. */
static void foreign_objects_that_do_not_fit_are_refused(void **state)
{
    (void)state;
    cl_uint nd = 0;
    cl_device_id devs[8];
    assert_int_equal(clGetDeviceIDs(fx.plat, CL_DEVICE_TYPE_ALL, 8, devs, &nd), CL_SUCCESS);
    cl_int e;
    cls_context *ctx = NULL;
    cls_status st;
    if (nd >= 2) {
        /* the fixture's context holds device 0 only */
        cls_config cfg = {.cl_context = fx.cl, .cl_devices = &devs[1], .cl_ndevices = 1};
        st = cls_context_create(&cfg, &ctx);
        assert_int_equal(st, CLS_E_ARG);
        assert_non_null(strstr(cls_last_error(ctx), "is not a device of cls_config.cl_context"));
        cls_context_destroy(ctx);
    }
    /* a queue of another context */
    cl_context other = clCreateContext(NULL, 1, &fx.dev, NULL, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_command_queue oq = clCreateCommandQueue(other, fx.dev, 0, &e);
    assert_int_equal(e, CL_SUCCESS);
    /* counted on a context no command ever ran on: the fixture's count
     * falls as PoCL's thread frees the earlier tests' commands */
    cl_context home = clCreateContext(NULL, 1, &fx.dev, NULL, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_uint c0 = refcount_ctx(home);
    cls_config cfg = {.cl_context = home, .cl_devices = &fx.dev, .cl_ndevices = 1, .cl_queues = &oq};
    st = cls_context_create(&cfg, &ctx);
    assert_int_equal(st, CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(ctx), "another OpenCL context"));
    cls_context_destroy(ctx);
    assert_int_equal(refcount_ctx(home), c0);
    clReleaseContext(home);
    assert_int_equal(refcount_q(oq), 1);
    /* a device list said to be empty */
    cls_config empty = {.cl_context = fx.cl, .cl_devices = &fx.dev, .cl_ndevices = 0};
    assert_int_equal(cls_context_create(&empty, &ctx), CLS_E_ARG);
    cls_context_destroy(ctx);
    clReleaseCommandQueue(oq);
    clReleaseContext(other);
    /* a context of clscale's own making takes no buffer of the caller's */
    cls_context *own = test_context(NULL, 0, 0);
    cls_array x = ref_make(CLS_F32, 1, 4, 4, 3, 0);
    cl_mem m = upload(&x, 0);
    cls_array b = buffer_of(m, 0, &x);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    st = (b.sync = NULL, cls_fit_transform(own, &p, &b, &b, NULL));
    assert_int_equal(st, CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(own), "another OpenCL context"));
    cls_context_destroy(own);
    clReleaseMemObject(m);
    ref_free(&x);
}

int main(void)
{
    /* the fault layer's object counting, before the first OpenCL call */
    const char *layer = getenv("CLS_FAULT_LAYER");
    if (layer) setenv("OPENCL_LAYERS", layer, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(minmax_per_matrix_matches_the_reference),
        cmocka_unit_test(zscore_of_a_tall_table_matches_the_reference),
        cmocka_unit_test(decimal_and_discount_match_the_reference),
        cmocka_unit_test(a_wait_list_in_and_an_event_out_chain_the_call),
        cmocka_unit_test(the_callers_objects_keep_their_references),
        cmocka_unit_test(bad_buffers_are_refused_and_nothing_is_written),
        cmocka_unit_test(foreign_objects_that_do_not_fit_are_refused),
    };
    return TEST_RUN("resident", tests, group_setup, group_teardown);
}
