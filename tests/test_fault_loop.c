/* A failure at every OpenCL call the library makes, on each device in
 * turn, during context creation and during calls (issue 26, part 1).
 *
 * The fault layer counts the calls charged to a device (tests/fault_count.c).
 * A healthy run counts them; then, for every k, a run fails call k of that
 * device (once) and must end one of two ways:
 *   - success, with a result identical (bit for bit) to the healthy run's,
 *     and for creation, every device still there or dropped with a note
 *     that names it and the failed call;
 *   - a clean failure: a status and a message naming a device; out of
 *     place, every output element either right or untouched; in place,
 *     every slice fully transformed or untouched.
 * Either way the input is unchanged (out of place) and every OpenCL
 * object the run created is released once its context is destroyed (the
 * layer's create/release counts balance).
 *
 * A device lost halfway through a kernel (the layer runs half of it, then
 * fails every wait on that device) really half-writes a slice: out of
 * place the other device redoes it; in place the call fails with at most
 * that slice partly written, and says so.
 * Also cls_quantiles (a host output: each entry right or untouched on a
 * failure; it fails the call rather than redo a failed device's units),
 * the cleaning (sigma clipping and median imputation), a Savitzky-Golay
 * trend, cls_describe and the streaming calls (.npy files in and out,
 * in one pass and in two: the output the healthy file or the old one),
 * each the same way,
 * cls_fit_transform on the caller's cl_context, queue and buffers
 * (with an event out: each output element right or untouched, the input
 * buffer unchanged, no reference kept to the caller's objects),
 * and the tool: `clscale normalize` over an existing file, each call of
 * a device after creation failed in its process, leaves the healthy
 * output or the old file, byte for byte, and no OpenCL object live at
 * exit. Objects are counted by every kind of creation and retain.
 *
 * Suite pocl: two PoCL pthread devices; small shapes so that a run takes
 * tens of milliseconds (a few hundred runs in all). Which device makes
 * which calls is the test's choice, never the threads' race: in a call,
 * the faulted device is given every slice (create_split: given speeds)
 * or is alone on its context. Its count of calls may still vary a little
 * (k runs to the largest count seen). The faults must fire: on each
 * device, at least half as many faulted runs as it made calls when
 * healthy, and in calls, at a kernel enqueue among them. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "fault_ctl.h"
#include "io/npy.h"
#include "pipeline_util.h"
#include "sched_given.h"

#define SLICE_BYTES 4096
#define SENTINEL (-12345.0) /* make_out() fills outputs with it */
#define MAX_K 1000          /* a bound on the calls of one device in one run */

static const char *const DEVICE = "pthread"; /* the layer's name for the suite's devices, ordinals 0 and 1 */

/* ---- helpers ---- */

static long live_objects(void) { return fault_count.created(OBJ_ALL) - fault_count.released(OBJ_ALL); }

static void expect_balanced(long before, const char *label)
{
    long now = live_objects();
    if (now != before) {
        print_message("# %s: %ld OpenCL objects left (", label, now - before);
        static const char *const names[] = {"mem", "queue", "program", "kernel", "event", "context"};
        for (int t = 0; t < OBJ_TYPES; t++)
            print_message("%s %ld%s", names[t], fault_count.created(t) - fault_count.released(t),
                          t + 1 < OBJ_TYPES ? ", " : ")\n");
    }
    assert_int_equal(now, before);
}

static void print_lines(const char *label, const char *text)
{
    print_message("# %s:\n", label);
    for (int lines = 0; text && *text && lines < 12; lines++) {
        size_t n = strcspn(text, "\n");
        print_message("#   %.*s\n", (int)(n < 300 ? n : 300), text);
        text += n + (text[n] == '\n');
    }
}

static cls_status create(cls_context **ctx)
{
    cls_config cfg = {0};
    cfg.slice_bytes = SLICE_BYTES;
    return cls_context_create(&cfg, ctx);
}

/* A context of the suite's device `nth` alone (the layer's ordinal is the
 * selector's index: one platform, both devices named alike). */
static cls_status create_alone(cls_context **ctx, int nth)
{
    cls_config cfg = {0};
    cfg.slice_bytes = SLICE_BYTES;
    cfg.devices = nth ? "1" : "0";
    *ctx = NULL;
    return cls_context_create(&cfg, ctx);
}

/* Given speeds (sched_given.h), both devices priced: device `nth`
 * 1000 times faster than the other. The scheduler then gives `nth` every
 * slice of every call, on the calling thread, and the other declines them
 * for its prior (no worker thread, no OpenCL call) until `nth` fails, when
 * it is woken to finish the call (test_scheduler:
 * a_device_left_out_takes_over_when_the_other_fails). Which device makes
 * which calls is thus the test's choice, not the threads' race: on equal
 * devices pulling slices, a fast thread could take every slice of a call
 * (a healthy run on a loaded host once left one device none). The given
 * priors stand in for the speed probes, so a probe makes no OpenCL call
 * here. */
#define FAST 10e9 /* bytes/s */
#define SLOW (FAST / 1000)
static cls_context *create_split(int nth)
{
    given_reset(1e-3, 1e-3, FAST);
    given_speed((size_t)!nth, SLOW);
    cls_tuning t = test_tune;
    t.no_prior = 0; /* the given priors, so that the slow device declines from the first slice */
    cls_context *ctx = given_context(&t, NULL, 0, SLICE_BYTES);
    assert_int_equal(cls_device_count(ctx), 2);
    return ctx;
}

/* After a healthy call on create_split(nth): nth did every slice. */
static void expect_split(cls_context *ctx, int nth, const char *label)
{
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    if (rep.devices[!nth].slices)
        print_message("# %s: device %d took %zu of %zu slices\n", label, !nth, rep.devices[!nth].slices, rep.slices);
    assert_int_equal(rep.devices[!nth].slices, 0);
    assert_true(rep.devices[nth].slices > 0);
}

static int same_bits(const cls_array *a, const cls_array *b)
{
    size_t n = a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4);
    return memcmp(a->data, b->data, n) == 0;
}

/* ---- creation ---- */

/* A small call on a context that creation left with some devices: right. */
static void context_works(cls_context *ctx, const char *label)
{
    cls_array x = ref_make(CLS_F32, 3, 40, 12, 5, REF_MISSING);
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    cls_stats *s = check_fit_transform(ctx, &x, &p, label);
    cls_stats_destroy(s);
    ref_free(&x);
}


/* The devices creation dropped, as the context's report lists them. */
static size_t dropped_count(const cls_context *ctx)
{
    cls_report rep;
    return cls_last_report(ctx, &rep) == CLS_OK ? rep.ndropped : 0;
}

static cls_status dropped_get(const cls_context *ctx, size_t i, cls_dropped_device *out)
{
    cls_report rep;
    *out = (cls_dropped_device){0};
    if (cls_last_report(ctx, &rep) != CLS_OK || i >= rep.ndropped) return CLS_E_ARG;
    *out = rep.dropped[i];
    return CLS_OK;
}

static void creation_survives_a_failure_at_every_call(void **state)
{
    (void)state;
    size_t runs = 0, dropped = 0, kept_both = 0, failed = 0;
    for (int nth = 0; nth < 2; nth++) {
        size_t runs_before = runs;
        long healthy;
        /* the healthy count */
        long before = live_objects();
        int r = fault_count.add(DEVICE, nth, NULL, -1, 0, 0);
        cls_context *ctx = NULL;
        assert_int_equal(create(&ctx), CLS_OK);
        healthy = fault_count.seen(r);
        cls_context_destroy(ctx);
        fault_count.clear();
        expect_balanced(before, "healthy creation");
        print_message("# device %d: %ld calls at creation\n", nth, healthy);
        assert_true(healthy > 5);

        long longest = healthy;
        for (long k = 0; k < longest; k++) {
            char label[160];
            before = live_objects();
            r = fault_count.add(DEVICE, nth, NULL, k, 1, 0);
            ctx = NULL;
            cls_status st = create(&ctx);
            long injected = fault_count.injected(r), seen = fault_count.seen(r);
            const char *call = fault_count.failed_call(r);
            fault_count.clear();
            if (seen > longest) longest = seen;
            if (!injected) {
                cls_context_destroy(ctx);
                expect_balanced(before, "creation past the last call");
                continue;
            }
            runs++;
            snprintf(label, sizeof label, "creation, device %d, call %ld (%s)", nth, k, call);
            if (st == CLS_OK) {
                size_t n = cls_device_count(ctx), nd = dropped_count(ctx);
                assert_int_equal(n + nd, 2);
                assert_true(n >= 1);
                if (nd == 1) {
                    dropped++;
                    cls_dropped_device x;
                    assert_int_equal(dropped_get(ctx, 0, &x), CLS_OK);
                    if (!strstr(x.why, call)) print_lines(label, x.why);
                    assert_non_null(strstr(x.why, call));
                    assert_non_null(strstr(cls_last_error(ctx), "dropped at creation"));
                    cls_report rep;
                    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
                    assert_int_equal(rep.ndropped, 1);
                } else {
                    kept_both++;
                }
                context_works(ctx, label);
            } else {
                /* only a call charged to both devices (their shared OpenCL
                 * context) may take both down: the message names each */
                failed++;
                print_lines(label, cls_last_error(ctx));
                assert_int_equal(dropped_count(ctx), 2);
                for (size_t i = 0; i < 2; i++) {
                    cls_dropped_device x;
                    assert_int_equal(dropped_get(ctx, i, &x), CLS_OK);
                    char want[64];
                    snprintf(want, sizeof want, "device %zu (", x.index);
                    assert_non_null(strstr(cls_last_error(ctx), want));
                }
                assert_string_equal(call, "clCreateContext");
            }
            cls_context_destroy(ctx);
            expect_balanced(before, label);
        }
        /* a layer that never fires would pass every check above */
        print_message("# creation, device %d: %zu runs with a failure\n", nth, runs - runs_before);
        assert_true(runs - runs_before > 0);
        assert_true(2 * (long)(runs - runs_before) >= healthy);
    }
    print_message("# creation: %zu runs with a failure: %zu dropped the device, %zu kept both, %zu failed\n", runs,
                  dropped, kept_both, failed);
    assert_true(dropped > 0);
}

/* The case: one device's first kernel enqueue (in the zero-copy
 * check) fails with CL_OUT_OF_RESOURCES. That device is dropped, the
 * other works; with both failing, creation fails naming both. */
static void zero_copy_check_failure_drops_only_that_device(void **state)
{
    (void)state;
    long before = live_objects();
    int r = fault_count.add(DEVICE, 1, "clEnqueueNDRangeKernel", 0, -1, 0);
    cls_context *ctx = NULL;
    assert_int_equal(create(&ctx), CLS_OK);
    assert_true(fault_count.injected(r) >= 1);
    fault_count.clear();
    assert_int_equal(cls_device_count(ctx), 1);
    assert_int_equal(dropped_count(ctx), 1);
    cls_dropped_device x;
    assert_int_equal(dropped_get(ctx, 0, &x), CLS_OK);
    print_lines("dropped", x.why);
    assert_non_null(strstr(x.why, "zero-copy check"));
    assert_non_null(strstr(x.why, "clEnqueueNDRangeKernel: CL_OUT_OF_RESOURCES"));
    assert_int_equal(x.status, CLS_E_NOMEM);
    assert_int_not_equal(dropped_get(ctx, 1, &x), CLS_OK);
    context_works(ctx, "the device left");
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.ndevices, 1);
    assert_int_equal(rep.ndropped, 1);
    cls_context_destroy(ctx);
    expect_balanced(before, "one device dropped");

    r = fault_count.add(DEVICE, -1, "clEnqueueNDRangeKernel", 0, -1, 0);
    cls_status st = create(&ctx);
    fault_count.clear();
    print_lines(cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_E_NOMEM);
    assert_int_equal(cls_device_count(ctx), 0);
    assert_int_equal(dropped_count(ctx), 2);
    assert_non_null(strstr(cls_last_error(ctx), "no selected device could be used"));
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(dropped_get(ctx, i, &x), CLS_OK);
        char want[64];
        snprintf(want, sizeof want, "device %zu (", x.index);
        assert_non_null(strstr(cls_last_error(ctx), want));
    }
    cls_context_destroy(ctx);
    expect_balanced(before, "both devices dropped");
}

/* The same through the tool, armed by CLSFAULT_COUNT in its environment:
 * `clscale devices` lists the dropped device with why, in text and JSON,
 * and exits 0; with both failing it exits 1 naming both. */
static void tool_lists_a_dropped_device_and_why(void **state)
{
    (void)state;
    char dir[4096];
    test_tmpdir(dir, sizeof dir, "fault-loop-tool");
    static tool_result res;
    setenv("CLSFAULT_COUNT", "pthread:1:clEnqueueNDRangeKernel:0:-1", 1);
    const char *text[] = {"devices", NULL}, *json[] = {"devices", "--json", NULL};
    assert_int_equal(test_run_tool(dir, &res, text), 0);
    print_lines("clscale devices", res.out);
    assert_int_equal(res.status, 0);
    assert_non_null(strstr(res.out, "0: pthread"));
    assert_non_null(strstr(res.out, "| dropped: the zero-copy check: clEnqueueNDRangeKernel: CL_OUT_OF_RESOURCES"));
    assert_non_null(strstr(res.err, "dropped at creation"));
    assert_int_equal(test_run_tool(dir, &res, json), 0);
    assert_int_equal(res.status, 0);
    assert_non_null(strstr(res.out, "\"dropped\": \"the zero-copy check: clEnqueueNDRangeKernel"));
    setenv("CLSFAULT_COUNT", "pthread:-1:clEnqueueNDRangeKernel:0:-1", 1);
    assert_int_equal(test_run_tool(dir, &res, text), 0);
    unsetenv("CLSFAULT_COUNT");
    print_lines("clscale devices, both failing", res.err);
    assert_int_equal(res.status, 1);
    assert_non_null(strstr(res.err, "device 0 ("));
    assert_non_null(strstr(res.err, "device 1 ("));
}

/* ---- calls ---- */

typedef struct call_case {
    const char *name;
    cls_dtype dtype;
    size_t batch, rows, cols;
    cls_pipeline p;
    int fit;        /* fit_transform (else transform with stats fitted beforehand) */
    int in_place;
    int factors;    /* a discount by factors of shape cols */
} call_case;

typedef struct call_data {
    cls_array x, y, f;
    cls_stats *s;      /* for transform */
} call_data;

static void data_make(const call_case *c, call_data *d)
{
    memset(d, 0, sizeof *d);
    d->x = ref_make(c->dtype, c->batch, c->rows, c->cols, 41, REF_MISSING | REF_NEGATIVE);
    d->y = c->in_place ? ref_copy(&d->x) : make_out(&d->x);
    if (c->factors) d->f = ref_make_factors(c->dtype, 1, 1, c->cols, 42);
}

static void data_free(call_data *d)
{
    ref_free(&d->x);
    ref_free(&d->y);
    if (d->f.data) ref_free(&d->f);
    cls_stats_destroy(d->s);
}

static cls_status run_case(cls_context *ctx, const call_case *c, call_data *d)
{
    cls_pipeline p = c->p;
    if (c->factors) p.factors = &d->f;
    cls_array *in = c->in_place ? &d->y : &d->x;
    if (c->fit) return cls_fit_transform(ctx, &p, in, &d->y, NULL);
    return cls_transform(ctx, &p, d->s, in, &d->y);
}

/* Slices of an in-place transform of 1 x rows x cols (plan.c tiles runs of
 * SLICE_BYTES of whole rows): each fully the healthy result or the input. */
static void whole_or_untouched(const cls_array *y, const cls_array *x0, const cls_array *good, const char *label)
{
    size_t es = y->dtype == CLS_F64 ? 8 : 4, row = y->cols * es, h = SLICE_BYTES / row;
    if (h == 0) h = 1;
    size_t rows = y->batch * y->rows, bad = 0;
    for (size_t r0 = 0; r0 < rows; r0 += h) {
        size_t r1 = r0 + h < rows ? r0 + h : rows;
        size_t off = r0 * row, len = (r1 - r0) * row;
        const char *py = (const char *)y->data + off;
        int as_good = memcmp(py, (const char *)good->data + off, len) == 0;
        int as_input = memcmp(py, (const char *)x0->data + off, len) == 0;
        if (!as_good && !as_input && bad++ < 3)
            print_message("# %s: rows %zu..%zu are neither transformed nor untouched\n", label, r0, r1 - 1);
    }
    assert_int_equal(bad, 0);
}

/* Out of place: every element the healthy result or the sentinel. */
static void right_or_untouched(const cls_array *y, const cls_array *good, const char *label)
{
    size_t n = y->batch * y->rows * y->cols, bad = 0;
    for (size_t i = 0; i < n; i++) {
        double v = ref_get(y, i), g = ref_get(good, i);
        if (v == SENTINEL || v == g || (isnan(v) && isnan(g))) continue;
        if (bad++ < 3) print_message("# %s: element %zu is %.9g, neither %.9g nor untouched\n", label, i, v, g);
    }
    assert_int_equal(bad, 0);
}

/* The distinct OpenCL calls that a device's faulted runs failed. */
typedef struct call_kinds {
    const char *name[64];
    size_t n;
} call_kinds;

static void kinds_add(call_kinds *k, const char *call)
{
    if (!call) return;
    for (size_t i = 0; i < k->n; i++)
        if (!strcmp(k->name[i], call)) return;
    if (k->n < sizeof k->name / sizeof k->name[0]) k->name[k->n++] = call;
}

static void call_survives_a_failure_at_every_call(const call_case *c)
{
    /* the healthy result; the input as made, before any call
     * could write it (the healthy run's input is no reference: a library
     * that writes its input would write every run's the same way) */
    call_data d;
    data_make(c, &d);
    cls_array x0 = ref_copy(&d.x);
    size_t xbytes = d.x.batch * d.x.rows * d.x.cols * (c->dtype == CLS_F64 ? 8 : 4);
    cls_context *ctx = create_split(0);
    if (!c->fit) assert_int_equal(cls_fit(ctx, &c->p, &d.x, &d.s), CLS_OK);
    assert_int_equal(run_case(ctx, c, &d), CLS_OK);
    cls_context_destroy(ctx);
    if (!c->in_place) assert_memory_equal(d.x.data, x0.data, xbytes);
    cls_array good = ref_copy(&d.y);
    {
        double *want = malloc(d.x.batch * d.x.rows * d.x.cols * sizeof *want);
        assert_non_null(want);
        cls_pipeline p = c->p;
        if (c->factors) p.factors = &d.f;
        ref_fit_transform(&x0, &p, want, NULL);
        assert_int_equal(ref_compare(&good, want, tol_for(c->dtype), c->name), 0);
        free(want);
    }

    size_t runs = 0, ok = 0, failed = 0;
    for (int nth = 0; nth < 2; nth++) {
        /* the calls of device nth when it does every slice (create_split),
         * and its result: the same bits whichever device runs */
        call_data h;
        data_make(c, &h);
        ctx = create_split(nth);
        if (!c->fit) assert_int_equal(cls_fit(ctx, &c->p, &h.x, &h.s), CLS_OK);
        int rh = fault_count.add(DEVICE, nth, NULL, -1, 0, 0), ro = fault_count.add(DEVICE, !nth, NULL, -1, 0, 0);
        assert_int_equal(run_case(ctx, c, &h), CLS_OK);
        long healthy = fault_count.seen(rh), other = fault_count.seen(ro);
        fault_count.clear();
        expect_split(ctx, nth, c->name);
        cls_context_destroy(ctx);
        print_message("# %s: healthy, device %d made %ld calls, device %d %ld\n", c->name, nth, healthy, !nth,
                      other);
        /* (a buffer made on the calling thread before it used device
         * nth's queue is charged to the other device: fault_layer.c) */
        assert_true(healthy > 0);
        assert_true(same_bits(&h.y, &good));
        data_free(&h);
        call_kinds kinds = {0};
        size_t runs_before = runs;
        /* to the longest run seen: the device may make more calls in one
         * run than in another (it took more slices) */
        long longest = healthy;
        for (long k = 0; k < longest && k < MAX_K; k++) {
            char label[200];
            long before = live_objects();
            call_data e;
            data_make(c, &e);
            ctx = create_split(nth);
            if (!c->fit) assert_int_equal(cls_fit(ctx, &c->p, &e.x, &e.s), CLS_OK);
            int r = fault_count.add(DEVICE, nth, NULL, k, 1, 0);
            cls_status st = run_case(ctx, c, &e);
            long injected = fault_count.injected(r), seen = fault_count.seen(r);
            const char *call = fault_count.failed_call(r);
            fault_count.clear();
            if (seen > longest) longest = seen;
            snprintf(label, sizeof label, "%s, device %d, call %ld (%s)", c->name, nth, k, call ? call : "-");
            runs += injected > 0;
            if (injected > 0) kinds_add(&kinds, call);
            if (st == CLS_OK) {
                ok += injected > 0;
                if (!same_bits(&e.y, &good)) {
                    print_message("# %s: succeeded with another result\n", label);
                    right_or_untouched(&e.y, &good, label);
                    fail();
                }
            } else {
                failed++;
                const char *msg = cls_last_error(ctx);
                /* out of place, the other device can always redo the work */
                if (!c->in_place) print_message("# %s: failed out of place\n", label);
                assert_true(c->in_place);
                print_message("# %s: %s\n", label, cls_status_str(st));
                print_lines("cls_last_error", msg);
                assert_true(injected > 0);
                assert_non_null(strstr(msg, "device "));
                if (c->in_place) whole_or_untouched(&e.y, &e.x, &good, label);
                else right_or_untouched(&e.y, &good, label);
            }
            /* the input is only read, whatever happened */
            if (!c->in_place) assert_memory_equal(e.x.data, x0.data, xbytes);
            cls_context_destroy(ctx);
            data_free(&e);
            expect_balanced(before, label);
        }
        /* the faults fired: a layer that never fails a call would pass
         * every check above */
        print_message("# %s, device %d: %zu runs with a failure, at %zu kinds of call:", c->name, nth,
                      runs - runs_before, kinds.n);
        for (size_t i = 0; i < kinds.n; i++) print_message(" %s", kinds.name[i]);
        print_message("\n");
        assert_true(runs - runs_before > 0);
        /* most of its calls: a device's count varies a little from run to run */
        assert_true(2 * (long)(runs - runs_before) >= healthy);
    }
    /* a kernel launch failed: the first launch of the device at work (one
     * rule over both devices: it fires in any call that runs a kernel) */
    {
        long before = live_objects();
        call_data e;
        data_make(c, &e);
        ctx = create_split(0);
        if (!c->fit) assert_int_equal(cls_fit(ctx, &c->p, &e.x, &e.s), CLS_OK);
        int r = fault_count.add(DEVICE, -1, "clEnqueueNDRangeKernel", 0, 1, 0);
        cls_status st = run_case(ctx, c, &e);
        long injected = fault_count.injected(r);
        fault_count.clear();
        char label[200];
        snprintf(label, sizeof label, "%s, the first kernel launch", c->name);
        assert_true(injected > 0);
        if (st == CLS_OK) {
            if (!same_bits(&e.y, &good)) {
                print_message("# %s: succeeded with another result\n", label);
                right_or_untouched(&e.y, &good, label);
                fail();
            }
        } else {
            if (!c->in_place) print_message("# %s: failed out of place\n", label);
            assert_true(c->in_place);
            whole_or_untouched(&e.y, &e.x, &good, label);
        }
        if (!c->in_place) assert_memory_equal(e.x.data, x0.data, xbytes);
        cls_context_destroy(ctx);
        data_free(&e);
        expect_balanced(before, label);
    }
    print_message("# %s: %zu runs with a failure: %zu succeeded, %zu failed cleanly\n", c->name, runs, ok, failed);
    ref_free(&good);
    ref_free(&x0);
    data_free(&d);
}

static void fused_fit_transform_survives_a_failure_at_every_call(void **state)
{
    (void)state;
    /* matrix scope: self-contained slices, stats and scaling in one
     * kernel */
    call_case c = {"fused fit_transform", CLS_F32, 4, 30, 12, {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX}, 1, 0,
                   0};
    call_survives_a_failure_at_every_call(&c);
}

static void two_phase_fit_transform_survives_a_failure_at_every_call(void **state)
{
    (void)state;
    /* batch scope over more rows than a slice: partial stats, host merge,
     * then scaling and a discount, float64 */
    call_case c = {"two-phase fit_transform + discount", CLS_F64, 1, 120, 6,
                   {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_BATCH}, 1, 0, 1};
    call_survives_a_failure_at_every_call(&c);
}

static void in_place_transform_survives_a_failure_at_every_call(void **state)
{
    (void)state;
    call_case c = {"in-place transform", CLS_F32, 1, 256, 8, {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX}, 0, 1,
                   0};
    call_survives_a_failure_at_every_call(&c);
}

/* ---- a device lost halfway through a kernel ---- */

/* The rows of an in-place 1 x rows x cols transform (slices of
 * SLICE_BYTES of whole rows, as whole_or_untouched) that are neither the
 * healthy result nor the input: 0, or the rows of one slice. */
static size_t partial_slices(const cls_array *y, const cls_array *x0, const cls_array *good)
{
    size_t es = y->dtype == CLS_F64 ? 8 : 4, row = y->cols * es, h = SLICE_BYTES / row;
    if (h == 0) h = 1;
    size_t rows = y->batch * y->rows, n = 0;
    for (size_t r0 = 0; r0 < rows; r0 += h) {
        size_t r1 = r0 + h < rows ? r0 + h : rows, off = r0 * row, len = (r1 - r0) * row;
        const char *py = (const char *)y->data + off;
        n += memcmp(py, (const char *)good->data + off, len) && memcmp(py, (const char *)x0->data + off, len);
    }
    return n;
}

/* Each kernel launch of each device in turn runs half its work-groups and
 * the device's next wait fails (FAULT_HALF_KERNEL): the slice it was
 * writing is really half-written. Out of place the other device redoes
 * it: the healthy result. In place (run.c): the call fails, every slice
 * is whole or untouched but at most one, and when one is partly written
 * the message says so. Objects balance either way. */
static void a_device_lost_halfway_through_a_kernel(void **state)
{
    (void)state;
    for (int in_place = 0; in_place < 2; in_place++) {
        call_case c = {in_place ? "half kernel, in place" : "half kernel, out of place", CLS_F32, 1, 64, 512,
                       {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX}, 0, in_place, 0};
        /* each device's launches when it does every slice (create_split) */
        long healthy[2];
        cls_array good = {0};
        for (int nth = 0; nth < 2; nth++) {
            call_data h;
            data_make(&c, &h);
            cls_context *ctx = create_split(nth);
            assert_int_equal(cls_fit(ctx, &c.p, &h.x, &h.s), CLS_OK);
            int rh = fault_count.add(DEVICE, nth, "clEnqueueNDRangeKernel", -1, 0, 0);
            assert_int_equal(run_case(ctx, &c, &h), CLS_OK);
            healthy[nth] = fault_count.seen(rh);
            fault_count.clear();
            expect_split(ctx, nth, c.name);
            cls_context_destroy(ctx);
            assert_true(healthy[nth] > 0);
            if (nth == 0) good = ref_copy(&h.y);
            else assert_true(same_bits(&h.y, &good));
            data_free(&h);
        }
        size_t runs = 0, ok = 0, failed = 0, partial = 0;
        for (int nth = 0; nth < 2; nth++) {
            size_t runs_before = runs, partial_before = partial;
            long longest = healthy[nth];
            for (long k = 0; k < longest && k < MAX_K; k++) {
                char label[200];
                long before = live_objects();
                call_data e;
                data_make(&c, &e);
                cls_context *ctx = create_split(nth);
                assert_int_equal(cls_fit(ctx, &c.p, &e.x, &e.s), CLS_OK);
                int r = fault_count.add(DEVICE, nth, "clEnqueueNDRangeKernel", k, 1, FAULT_HALF_KERNEL);
                cls_status st = run_case(ctx, &c, &e);
                long injected = fault_count.injected(r), seen = fault_count.seen(r);
                fault_count.clear();
                if (seen > longest) longest = seen;
                snprintf(label, sizeof label, "%s, device %d, launch %ld", c.name, nth, k);
                runs += injected > 0;
                if (st == CLS_OK) {
                    ok += injected > 0;
                    if (!same_bits(&e.y, &good)) print_message("# %s: succeeded with another result\n", label);
                    assert_true(same_bits(&e.y, &good));
                } else {
                    failed++;
                    const char *msg = cls_last_error(ctx);
                    if (!c.in_place) print_lines(label, msg);
                    assert_true(c.in_place);
                    size_t n = partial_slices(&e.y, &e.x, &good);
                    partial += n > 0;
                    if (n > 1 || (n && !strstr(msg, "partly written"))) print_lines(label, msg);
                    assert_true(n <= 1);
                    if (n) assert_non_null(strstr(msg, "partly written"));
                }
                cls_context_destroy(ctx);
                data_free(&e);
                expect_balanced(before, label);
            }
            /* every launch of the device at work was cut short once (the
             * device runs them all); in place, each shows a half slice */
            print_message("# %s, device %d: %zu of %ld launches cut short\n", c.name, nth, runs - runs_before,
                          healthy[nth]);
            assert_true(2 * (long)(runs - runs_before) >= healthy[nth]);
            if (c.in_place) assert_true(partial > partial_before);
        }
        print_message("# %s: %zu runs with a half kernel: %zu succeeded, %zu failed (%zu with a slice partly "
                      "written)\n",
                      c.name, runs, ok, failed, partial);
        ref_free(&good);
    }
}

/* ---- quantiles: a host output of another shape ---- */

static const double QS[] = {0.0, 0.25, 0.5, 0.9, 1.0};
#define NQS (sizeof QS / sizeof QS[0])

/* cls_quantiles over groups longer than the sorting networks (the sort
 * regime's units, which both devices pull), a failure at every call of
 * each device: a success gives the healthy result bit for bit; a failure
 * leaves every output entry right or untouched; objects balance. */
/* ---- the other paths: cleaning, light curves, describe ---- */

/* One call of a path into `out` (nout doubles) on ctx. */
typedef cls_status (*path_call)(cls_context *ctx, const cls_array *x, double *out, size_t nout);

static cls_status clean_call(cls_context *ctx, const cls_array *x, double *out, size_t nout)
{
    (void)nout;
    cls_clean c = {.sigma = 2.5, .impute = CLS_IMPUTE_MEDIAN};
    cls_array y = *x;
    y.data = out;
    return cls_fit_transform(ctx, &(cls_pipeline){.clean = &c}, x, &y, NULL);
}

static cls_status trend_call(cls_context *ctx, const cls_array *x, double *out, size_t nout)
{
    (void)nout;
    cls_clean c = {.detrend = CLS_DETREND_SAVGOL, .window = 11, .polyorder = 2};
    cls_array y = *x;
    y.data = out;
    return cls_fit_transform(ctx, &(cls_pipeline){.clean = &c}, x, &y, NULL);
}

/* The summary's column records, as doubles (their fields are 8 bytes each). */
static cls_status describe_call(cls_context *ctx, const cls_array *x, double *out, size_t nout)
{
    assert_int_equal(nout * sizeof *out, x->batch * x->cols * sizeof(cls_column_summary));
    cls_summary s = {.columns = (cls_column_summary *)out};
    return cls_describe(ctx, x, CLS_SCOPE_MATRIX, 3, &s);
}

/* Where a path's runs go (path_survives). */
enum {
    PATH_ALONE, /* each device on a context of its own */
    PATH_SPLIT, /* both devices, the faulted one given every slice (create_split) */
    PATH_UNITS  /* the counting passes (engine/passes.c: a shared cursor of units that
                   no speed orders): device 1 alone, then device 0 beside device 1,
                   where the share each device pulls is the threads' race */
};

/* One run of `fn` with call k of device nth failed, on a context made for
 * `mode`: a success gives the healthy result bit for bit; a failure leaves
 * every output element right or untouched; the input is unchanged; objects
 * balance. Returns whether the fault fired; counts into ok and failed. */
static int path_run(const char *name, path_call fn, const cls_array *x, const double *x0, const double *good,
                    double *out, size_t nout, int mode, int nth, long k, long *seen_out, size_t *ok, size_t *failed)
{
    char label[160];
    size_t nx = x->batch * x->rows * x->cols;
    long before = live_objects();
    for (size_t i = 0; i < nout; i++) out[i] = SENTINEL;
    cls_context *ctx = NULL;
    if (mode == PATH_ALONE) assert_int_equal(create_alone(&ctx, nth), CLS_OK);
    else ctx = create_split(nth);
    int r = fault_count.add(DEVICE, nth, NULL, k, 1, 0);
    cls_status st = fn(ctx, x, out, nout);
    long injected = fault_count.injected(r);
    *seen_out = fault_count.seen(r);
    const char *call = fault_count.failed_call(r);
    fault_count.clear();
    snprintf(label, sizeof label, "%s, device %d%s, call %ld (%s)", name, nth, mode == PATH_ALONE ? " alone" : "", k,
             call ? call : "-");
    size_t bad = 0;
    if (st == CLS_OK) {
        *ok += injected > 0;
        bad = memcmp(out, good, nout * sizeof *out) != 0;
        if (bad) print_message("# %s: succeeded with another result\n", label);
    } else {
        ++*failed;
        assert_true(injected > 0);
        if (*failed <= 2) print_lines(label, cls_last_error(ctx));
        for (size_t i = 0; i < nout; i++)
            if (out[i] != SENTINEL && memcmp(&out[i], &good[i], 8) != 0 && bad++ < 3)
                print_message("# %s: element %zu is %.17g, neither %.17g nor untouched\n", label, i, out[i],
                              good[i]);
    }
    assert_int_equal(bad, 0);
    assert_memory_equal(x->data, x0, nx * sizeof *x0);
    cls_context_destroy(ctx);
    expect_balanced(before, label);
    return injected > 0;
}

/* A path's call with a failure at every call of each device in turn, as
 * quantiles_survive_a_failure_at_every_call does (path_run's checks). The
 * faulted device makes every call of the path (PATH_ALONE, PATH_SPLIT),
 * and most of them must have failed once (its count varies a little from
 * run to run). PATH_UNITS counts on device 1 alone, then fails each call
 * of device 0 beside device 1, for the passes' failover of a failed unit,
 * where how many calls device 0 makes is the threads' race: each run must
 * still end as path_run says, whichever way the units fell (one device
 * each way: the two are the same PoCL device, and describe's ~300 calls
 * a run make a second pass each way the suite's longest part). */
static void path_survives(const char *name, path_call fn, const cls_array *x, size_t nout, int mode)
{
    double *good = malloc(nout * sizeof *good), *out = malloc(nout * sizeof *out);
    size_t nx = x->batch * x->rows * x->cols;
    double *x0 = malloc(nx * sizeof *x0);
    assert_non_null(good);
    assert_non_null(out);
    assert_non_null(x0);
    memcpy(x0, x->data, nx * sizeof *x0);
    cls_context *ctx = create_split(0);
    cls_status st = fn(ctx, x, good, nout);
    if (st != CLS_OK) print_lines(name, cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    cls_context_destroy(ctx);
    int counted = mode == PATH_SPLIT ? PATH_SPLIT : PATH_ALONE; /* the runs whose faults must fire */
    long healthy[2] = {0, 0};
    int first = mode == PATH_UNITS ? 1 : 0;
    for (int nth = first; nth < 2; nth++) {
        /* the device's calls when it makes them all, and its result: the
         * same as the other's */
        for (size_t i = 0; i < nout; i++) out[i] = SENTINEL;
        if (counted == PATH_ALONE) assert_int_equal(create_alone(&ctx, nth), CLS_OK);
        else ctx = create_split(nth);
        int r = fault_count.add(DEVICE, nth, NULL, -1, 0, 0);
        assert_int_equal(fn(ctx, x, out, nout), CLS_OK);
        healthy[nth] = fault_count.seen(r);
        fault_count.clear();
        cls_context_destroy(ctx);
        assert_memory_equal(out, good, nout * sizeof *out);
        print_message("# %s, device %d%s: %ld calls\n", name, nth, counted == PATH_ALONE ? " alone" : "", healthy[nth]);
        assert_true(healthy[nth] >= 8);
    }
    size_t runs = 0, ok = 0, failed = 0;
    for (int nth = first; nth < 2; nth++) {
        size_t runs_before = runs;
        long longest = healthy[nth], seen;
        for (long k = 0; k < longest && k < MAX_K; k++) {
            runs += (size_t)path_run(name, fn, x, x0, good, out, nout, counted, nth, k, &seen, &ok, &failed);
            if (seen > longest) longest = seen;
        }
        print_message("# %s, device %d: %zu runs with a failure\n", name, nth, runs - runs_before);
        assert_true(2 * (long)(runs - runs_before) >= healthy[nth]);
    }
    print_message("# %s: %zu runs with a failure: %zu succeeded, %zu failed cleanly\n", name, runs, ok, failed);
    if (mode == PATH_UNITS) {
        size_t both = 0;
        ok = failed = 0;
        for (long k = 0; k < healthy[1]; k++) {
            long seen;
            both += (size_t)path_run(name, fn, x, x0, good, out, nout, PATH_UNITS, 0, k, &seen, &ok, &failed);
        }
        print_message("# %s, device 0 beside device 1: %zu runs with a failure: %zu succeeded, %zu failed cleanly\n", name, both,
                      ok, failed);
    }
    free(good);
    free(out);
    free(x0);
}

static cls_status quantiles_call(cls_context *ctx, const cls_array *x, double *out, size_t nout)
{
    assert_int_equal(nout, x->batch * NQS * x->cols);
    return cls_quantiles(ctx, NULL, x, QS, NQS, out);
}

static void quantiles_survive_a_failure_at_every_call(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F64, 2, 300, 7, 43, REF_MISSING | REF_NEGATIVE);
    path_survives("quantiles", quantiles_call, &x, x.batch * NQS * x.cols, PATH_ALONE);
    ref_free(&x);
}

static void cleaning_trends_and_describe_survive_a_failure_at_every_call(void **state)
{
    (void)state;
    /* groups longer than the networks (the sort regime's units) with missing values */
    cls_array x = ref_make(CLS_F64, 2, 300, 5, 47, REF_MISSING | REF_NEGATIVE);
    size_t n = x.batch * x.rows * x.cols;
    path_survives("cleaning", clean_call, &x, n, PATH_UNITS);
    path_survives("savgol trend", trend_call, &x, n, PATH_UNITS);
    path_survives("describe", describe_call, &x, x.batch * x.cols * sizeof(cls_column_summary) / sizeof(double), PATH_UNITS);
    ref_free(&x);
}

/* ---- data already on a device: the caller's buffers ---- */

/* cls_fit_transform out of place on the caller's cl_context, queue
 * and buffers (one device: a failure fails the call), an event out so that
 * the marker and the retained event are on the path; each call of the
 * device failed in turn, the context made afresh each run. A success
 * gives the healthy bytes; a failure leaves every output element right or
 * untouched; the input buffer is never written; and once the context is
 * destroyed and the event released, the library holds no object and no
 * reference to the caller's context or queue. */
static void caller_buffers_right_or_untouched_at_every_call(void **state)
{
    (void)state;
    cl_platform_id plats[16];
    cl_uint np = 0;
    assert_int_equal(clGetPlatformIDs(16, plats, &np), CL_SUCCESS);
    cl_platform_id plat = NULL;
    cl_device_id dev = NULL;
    for (cl_uint i = 0; i < np && i < 16 && !dev; i++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || nd == 0) dev = NULL;
        else plat = plats[i];
    }
    assert_non_null(dev);
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    cl_context cl = clCreateContext(props, 1, &dev, NULL, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(cl, dev, 0, &e);
    assert_int_equal(e, CL_SUCCESS);

    cls_array x = ref_make(CLS_F32, 2, 30, 64, 45, REF_MISSING | REF_NEGATIVE);
    size_t n = x.batch * x.rows * x.cols, bytes = n * 4;
    cl_mem min = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, x.data, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_mem mout = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cls_array y = make_out(&x), good = make_out(&x), back = make_out(&x);
    cls_array bin = {.where = CLS_IN_BUFFER, .mem = min, .offset = 0, .dtype = x.dtype, .batch = x.batch, .rows = x.rows, .cols = x.cols};
    cls_array bout = bin;
    bout.mem = mout;
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    cls_config cfg = {0};
    cfg.cl_context = cl;
    cfg.cl_devices = &dev;
    cfg.cl_ndevices = 1;
    cfg.cl_queues = &q;

    size_t runs = 0, ok = 0, failed = 0;
    long healthy = -1, longest = 1;
    for (long k = -1; k < longest && k < MAX_K; k++) {
        char label[160];
        /* the sentinel in the output, the input as it was */
        assert_int_equal(clEnqueueWriteBuffer(q, mout, CL_TRUE, 0, bytes, y.data, 0, NULL, NULL), CL_SUCCESS);
        long before = live_objects();
        cls_context *ctx = NULL;
        assert_int_equal(cls_context_create(&cfg, &ctx), CLS_OK);
        int r = fault_count.add(DEVICE, 0, NULL, k, k < 0 ? 0 : 1, 0);
        cl_event done = NULL;
        cls_sync sync = {.done = &done};
        cls_status st = (bin.sync = &sync, cls_fit_transform(ctx, &p, &bin, &bout, NULL));
        long injected = fault_count.injected(r), seen = fault_count.seen(r);
        const char *call = fault_count.failed_call(r);
        fault_count.clear();
        if (done) {
            clWaitForEvents(1, &done);
            clReleaseEvent(done);
        }
        snprintf(label, sizeof label, "caller's buffers, call %ld (%s)", k, call ? call : "-");
        if (k < 0) {
            /* the healthy count and bytes */
            assert_int_equal(st, CLS_OK);
            healthy = longest = seen;
            assert_true(healthy > 0);
            assert_int_equal(clEnqueueReadBuffer(q, mout, CL_TRUE, 0, bytes, good.data, 0, NULL, NULL), CL_SUCCESS);
            double *want = malloc(n * sizeof *want);
            assert_non_null(want);
            ref_fit_transform(&x, &p, want, NULL);
            assert_int_equal(ref_compare(&good, want, tol_for(x.dtype), label), 0);
            free(want);
        } else {
            if (seen > longest) longest = seen;
            runs += injected > 0;
            assert_int_equal(clEnqueueReadBuffer(q, mout, CL_TRUE, 0, bytes, back.data, 0, NULL, NULL), CL_SUCCESS);
            if (st == CLS_OK) {
                ok += injected > 0;
                if (!same_bits(&back, &good)) print_message("# %s: succeeded with another result\n", label);
                assert_true(same_bits(&back, &good));
            } else {
                failed++;
                assert_true(injected > 0);
                if (failed <= 3) print_lines(label, cls_last_error(ctx));
                right_or_untouched(&back, &good, label);
            }
        }
        /* the input buffer is only read */
        assert_int_equal(clEnqueueReadBuffer(q, min, CL_TRUE, 0, bytes, back.data, 0, NULL, NULL), CL_SUCCESS);
        assert_memory_equal(back.data, x.data, bytes);
        cls_context_destroy(ctx);
        expect_balanced(before, label);
    }
    print_message("# caller's buffers: %ld calls healthy; %zu runs with a failure: %zu succeeded, %zu failed cleanly\n",
                  healthy, runs, ok, failed);
    assert_true(2 * (long)runs >= healthy);
    assert_true(failed > 0);
    clReleaseMemObject(min);
    clReleaseMemObject(mout);
    clReleaseCommandQueue(q);
    clReleaseContext(cl);
    ref_free(&x);
    ref_free(&y);
    ref_free(&good);
    ref_free(&back);
}

/* ---- the tool: its output file ---- */

static void write_input(const char *path, const cls_array *x)
{
    size_t shape[3] = {x->batch, x->rows, x->cols};
    cls_npy f;
    char err[1024];
    if (cls_npy_create(path, x->dtype, 3, shape, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    memcpy(f.data, x->data, f.data_bytes);
    if (cls_npy_close(&f, 1, err, sizeof err) != CLS_OK) fail_msg("%s", err);
}

/* The whole file at `path` (malloc'ed, *n its size), or NULL. */
static char *slurp_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = b ? fread(b, 1, len > 0 ? (size_t)len : 0, f) : 0;
    fclose(f);
    return b;
}

static void put_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* Files in `dir` other than the ones the test keeps there. */
static int stray_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) {
            print_message("# left behind: %s\n", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

/* Objects other than programs and kernels: those are built when a device
 * first runs a kernel, in whichever call that is (the scheduler's choice
 * of the moment), and released with the context. */
static long live_between_calls(void)
{
    long n = 0;
    for (int t = 0; t < OBJ_TYPES; t++)
        if (t != OBJ_PROGRAM && t != OBJ_KERNEL) n += fault_count.created(t) - fault_count.released(t);
    return n;
}

/* MANY_CALLS healthy calls of a path on a context of one device: no
 * buffer, queue, event or context more after each than after the first,
 * every object released with the context; the result the first call's
 * each time. One device, so that what it keeps across calls (pinned
 * buffers, programs) is made in the first call: on two, the second
 * device's may come in any call, as the threads' race decides. */
#define MANY_CALLS 20
static void many_calls_balance(const char *name, path_call fn, const cls_array *x, size_t nout)
{
    double *first = malloc(nout * sizeof *first), *out = malloc(nout * sizeof *out);
    assert_non_null(first);
    assert_non_null(out);
    long before = live_objects();
    cls_context *ctx = NULL;
    assert_int_equal(create_alone(&ctx, 1), CLS_OK);
    assert_int_equal(fn(ctx, x, first, nout), CLS_OK);
    long warm = live_between_calls();
    for (int i = 1; i < MANY_CALLS; i++) {
        cls_status st = fn(ctx, x, out, nout);
        if (st != CLS_OK) print_lines(name, cls_last_error(ctx));
        assert_int_equal(st, CLS_OK);
        assert_memory_equal(out, first, nout * sizeof *out);
        long now = live_between_calls();
        if (now != warm) {
            print_message("# %s: %ld objects more after call %d than after the first:", name, now - warm, i);
            for (int t = 0; t < OBJ_TYPES; t++)
                print_message(" %ld", fault_count.created(t) - fault_count.released(t));
            print_message("\n");
        }
        assert_int_equal(now, warm);
    }
    cls_context_destroy(ctx);
    expect_balanced(before, name);
    print_message("# %s: %d calls on one context, objects flat and released\n", name, MANY_CALLS);
    free(first);
    free(out);
}

/* ---- streaming: .npy files in and out through the buffer pool ---- */

static char stream_dir[4096];
static size_t stream_buffer; /* bytes per buffer of the pool */
static const char old_out[] = "an older file a streaming call must leave alone on failure";

/* cls_fit_transform of one .npy file into another (z-score, matrix scope),
 * through a pool of small buffers; the output's data copied into `out` on
 * success. A failure must leave the old output file byte for byte and no
 * temporary beside it; the input file is unchanged either way. */
static cls_status stream_call(cls_context *ctx, const cls_array *x, double *out, size_t nout)
{
    char in[4200], outp[4200];
    snprintf(in, sizeof in, "%s/in.npy", stream_dir);
    snprintf(outp, sizeof outp, "%s/out.npy", stream_dir);
    write_input(in, x);
    put_file(outp, old_out, sizeof old_out);
    cls_stream_opts opts = {.buffer_bytes = stream_buffer, .buffers = 2, .io_threads = 2};
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    cls_status st = cls_fit_transform(ctx, &p, &(cls_array){.where = CLS_IN_NPY, .path = in, .stream = &opts},
                                      &(cls_array){.where = CLS_IN_NPY, .path = outp}, NULL);
    size_t n = 0;
    char *now = slurp_file(outp, &n);
    assert_non_null(now);
    if (st == CLS_OK) {
        cls_npy f;
        char err[1024];
        if (cls_npy_open(outp, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
        assert_int_equal(f.data_bytes, nout * sizeof *out);
        memcpy(out, f.data, f.data_bytes);
        cls_npy_close(&f, 0, err, sizeof err);
    } else {
        if (n != sizeof old_out || memcmp(now, old_out, n)) print_message("# streaming: the old output changed\n");
        assert_true(n == sizeof old_out && !memcmp(now, old_out, n));
    }
    free(now);
    assert_int_equal(stray_files(stream_dir), 0);
    /* the input file is only read */
    cls_npy f;
    char err[1024];
    if (cls_npy_open(in, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    assert_memory_equal(f.data, x->data, x->batch * x->rows * x->cols * (x->dtype == CLS_F64 ? 8 : 4));
    cls_npy_close(&f, 0, err, sizeof err);
    return st;
}

/* The streaming path (issue 45): files in and out, a failure at every call
 * of each device in turn, in one pass (each matrix fits a buffer) and in
 * two (a statistics pass, then the pass that writes); each run's objects
 * balance once its context is destroyed, its output is the healthy file
 * or the old one. */
static void streaming_survives_a_failure_at_every_call(void **state)
{
    (void)state;
    test_tmpdir(stream_dir, sizeof stream_dir, "fault-loop-stream");
    cls_array x = ref_make(CLS_F64, 2, 120, 5, 49, REF_MISSING | REF_NEGATIVE);
    size_t n = x.batch * x.rows * x.cols;
    stream_buffer = 4096;
    many_calls_balance("streaming", stream_call, &x, n);
    stream_buffer = 8192; /* a matrix is 4800 bytes: one pass */
    path_survives("streaming, one pass", stream_call, &x, n, PATH_SPLIT);
    stream_buffer = 4096; /* rows of 40 bytes, a matrix in two buffers and more: two passes */
    path_survives("streaming, two passes", stream_call, &x, n, PATH_SPLIT);
    ref_free(&x);
}

/* `clscale normalize IN OUT` over an existing OUT, a failure at every call
 * of device 0 after the context is made, in the tool's process on device
 * 0 alone (armed by CLSFAULT_COUNT, counted back through
 * CLSFAULT_COUNT_OUT): OUT is afterwards either the healthy run's
 * file byte for byte (exit 0) or the old file byte for byte (exit 1), no
 * temporary is left, and the process released every OpenCL object it
 * made before it exited. */
static void tool_output_is_whole_or_unchanged_at_every_call(void **state)
{
    (void)state;
    char dir[4096], in[4200], out[4200], counts[4200], rule[128];
    test_tmpdir(dir, sizeof dir, "fault-loop-tool-out");
    snprintf(in, sizeof in, "%s/in.npy", dir);
    snprintf(out, sizeof out, "%s/out.npy", dir);
    snprintf(counts, sizeof counts, "%s/.counts", dir);
    cls_array x = ref_make(CLS_F32, 3, 40, 12, 44, REF_MISSING | REF_NEGATIVE);
    write_input(in, &x);
    ref_free(&x);
    static tool_result res;
    const char *args[] = {"normalize", "--method", "zscore", in, out, NULL};
    static const char old[] = "an older file the tool must leave alone on failure";
    setenv("CLSFAULT_COUNT_OUT", counts, 1);
    /* device 0 alone, so that it makes every call of each run: on both,
     * which one takes the call's slice is the threads' race, and the runs
     * whose fault fires would be as many as that race left device 0 */
    setenv("CLSCALE_DEVICES", "0", 1);

    /* the healthy file and count */
    setenv("CLSFAULT_COUNT", "pthread:0::-1:0", 1);
    assert_int_equal(test_run_tool(dir, &res, args), 0);
    assert_int_equal(res.status, 0);
    size_t ngood = 0, nc = 0;
    char *good = slurp_file(out, &ngood);
    assert_non_null(good);
    char *c = slurp_file(counts, &nc);
    assert_non_null(c);
    long healthy = 0, injected = 0, live = 0;
    char call[64];
    assert_int_equal(sscanf(c, "%ld %ld %63s %ld", &healthy, &injected, call, &live), 4);
    free(c);
    print_message("# tool: healthy, %ld calls on device 0, %ld objects live at exit\n", healthy, live);
    assert_true(healthy > 5);
    assert_int_equal(live, 0);

    /* the calls of creation alone (`clscale devices` makes the context and
     * lists it): creation_survives_a_failure_at_every_call covers those */
    const char *list[] = {"devices", NULL};
    assert_int_equal(test_run_tool(dir, &res, list), 0);
    assert_int_equal(res.status, 0);
    c = slurp_file(counts, &nc);
    assert_non_null(c);
    long creation = 0;
    assert_int_equal(sscanf(c, "%ld %ld %63s %ld", &creation, &injected, call, &live), 4);
    free(c);
    print_message("# tool: %ld of them at creation\n", creation);
    assert_true(creation > 0 && creation < healthy);

    size_t runs = 0, ok = 0, failed = 0;
    long longest = healthy;
    for (long k = creation; k < longest && k < MAX_K; k++) {
        char label[160];
        put_file(out, old, sizeof old);
        remove(counts);
        snprintf(rule, sizeof rule, "pthread:0::%ld:1", k);
        setenv("CLSFAULT_COUNT", rule, 1);
        assert_int_equal(test_run_tool(dir, &res, args), 0);
        c = slurp_file(counts, &nc);
        if (!c) print_lines("no counts; stderr", res.err);
        assert_non_null(c);
        long seen = 0;
        assert_int_equal(sscanf(c, "%ld %ld %63s %ld", &seen, &injected, call, &live), 4);
        free(c);
        if (seen > longest) longest = seen;
        snprintf(label, sizeof label, "tool, call %ld (%s), exit %d", k, call, res.status);
        runs += injected > 0;
        size_t n = 0;
        char *now = slurp_file(out, &n);
        assert_non_null(now);
        if (res.status == 0) {
            ok += injected > 0;
            if (n != ngood || memcmp(now, good, n)) print_message("# %s: another output\n", label);
            assert_true(n == ngood && !memcmp(now, good, n));
        } else {
            failed++;
            print_lines(label, res.err);
            assert_true(injected > 0);
            assert_int_equal(res.status, 1);
            if (n != sizeof old || memcmp(now, old, n)) print_message("# %s: the old output changed\n", label);
            assert_true(n == sizeof old && !memcmp(now, old, n));
        }
        free(now);
        assert_int_equal(stray_files(dir), 0);
        if (live != 0) print_message("# %s: %ld OpenCL objects live at exit\n", label, live);
        assert_int_equal(live, 0);
    }
    unsetenv("CLSFAULT_COUNT");
    unsetenv("CLSFAULT_COUNT_OUT");
    unsetenv("CLSCALE_DEVICES");
    print_message("# tool: %zu runs with a failure: %zu wrote the whole output, %zu failed leaving the old one\n", runs,
                  ok, failed);
    assert_true(2 * (long)runs >= healthy - creation);
    free(good);
}

static int group_setup(void **state)
{
    (void)state;
    /* the loader maps the layer at the first OpenCL call */
    cls_context *ctx = NULL;
    cls_status st = create(&ctx);
    cls_context_destroy(ctx);
    if (st != CLS_OK) return -1;
    if (find_layer() != 0 || find_count_layer() != 0) return -1;
    return 0;
}

int main(void)
{
    const char *layer = getenv("CLS_FAULT_LAYER");
    if (layer) setenv("OPENCL_LAYERS", layer, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero_copy_check_failure_drops_only_that_device),
        cmocka_unit_test(tool_lists_a_dropped_device_and_why),
        cmocka_unit_test(creation_survives_a_failure_at_every_call),
        cmocka_unit_test(fused_fit_transform_survives_a_failure_at_every_call),
        cmocka_unit_test(two_phase_fit_transform_survives_a_failure_at_every_call),
        cmocka_unit_test(in_place_transform_survives_a_failure_at_every_call),
        cmocka_unit_test(a_device_lost_halfway_through_a_kernel),
        cmocka_unit_test(quantiles_survive_a_failure_at_every_call),
        cmocka_unit_test(cleaning_trends_and_describe_survive_a_failure_at_every_call),
        cmocka_unit_test(caller_buffers_right_or_untouched_at_every_call),
        cmocka_unit_test(streaming_survives_a_failure_at_every_call),
        cmocka_unit_test(tool_output_is_whole_or_unchanged_at_every_call),
    };
    return TEST_RUN("fault-loop", tests, group_setup, NULL);
}
