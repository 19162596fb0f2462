/* Failover (DESIGN.md, "Running a pipeline"): a device that fails mid-call
 * is dropped for the rest of the call and its unfinished slices are redone
 * elsewhere; the output is never partial or wrong; an in-place call that
 * fails leaves every slice fully transformed or untouched and says how many
 * were written.
 *
 * Faults come from tests/fault_layer.c, an OpenCL API layer that the ICD
 * loader loads from OPENCL_LAYERS (set here before the first OpenCL call);
 * the tests arm it through the functions it exports, found with
 * dlopen(RTLD_NOLOAD) on the copy the loader mapped. Small slices
 * (SLICE_BYTES) make many slices so that a device fails part-way; where
 * the device under test must take part, the layer holds the other devices'
 * kernel launches until it has started and then slows them (the scheduler
 * may otherwise leave it nothing in a call of a few milliseconds).
 *
 * Suite pocl: two PoCL pthread devices (zero copy), the second one fails.
 * Suite all: Oclgrind fails (the staging path), PoCL and rusticl carry on;
 * each test has a fresh context, in which the simulator's rate is unknown
 * and, with the switch no_prior (testing.h), not estimated by a probe, so that it takes a
 * slice before it is measured as slow (test_scheduler.c tests the probe). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_ctl.h"
#include "internal.h" /* CLS_K_APPLY */
#include "pipeline_util.h"
#include "sched_given.h"

#define SLICE_BYTES 65536
#define SENTINEL (-12345.0) /* make_out() fills outputs with it */

/* ---- the fault layer (see tests/fault_layer.c) ---- */

/* ---- the suite's devices ---- */

static cls_context *ctx;
static cls_context *group_ctx;    /* suite all: the group's, while a test has its own */
static size_t ndev;
static size_t target;             /* selected-device index the layer fails */
static const char *target_match;  /* the layer's rule for it: name substring, ordinal */
static int target_nth;
static size_t pocl[2];            /* the two PoCL devices */

static int find_device(const char *name_part, size_t skip, size_t *out)
{
    for (size_t i = 0; i < ndev; i++) {
        cls_device_info info;
        if (cls_device_get(ctx, i, &info) != CLS_OK) return -1;
        if (!strcasestr(info.name, name_part)) continue;
        if (skip-- == 0) {
            *out = i;
            return 0;
        }
    }
    return -1;
}

/* A rule that fails `kind` calls on the suite's target device (kernels
 * whose name contains `kernel`, NULL: all) after `after` that pass, every
 * time from then on. */
static int arm(int kind, const char *kernel, long after)
{
    int r = fault.add(kind, target_match, target_nth, kernel, after, -1, 0);
    assert_true(r >= 0);
    return r;
}

/* Makes sure the target takes part: the other devices' first kernel
 * launches wait until the target has made a call, and each of their
 * launches is slowed (microseconds) so that the target keeps a share. */
static void target_goes_first(void)
{
    assert_true(fault.add(FAULT_HOLD, target_match, target_nth, NULL, 0, -1, 5000) >= 0);
    if (test_suite_is("all")) {
        assert_true(fault.add(FAULT_DELAY, "pthread", -1, NULL, 0, -1, 2000) >= 0);
        assert_true(fault.add(FAULT_DELAY, "llvmpipe", -1, NULL, 0, -1, 2000) >= 0);
    } else {
        assert_true(fault.add(FAULT_DELAY, "pthread", 0, NULL, 0, -1, 200) >= 0);
    }
}

/* "device 3 (pthread-…": how the library names device i in messages. */
static void device_label(size_t i, char *buf, size_t len)
{
    cls_device_info info;
    assert_int_equal(cls_device_get(ctx, i, &info), CLS_OK);
    snprintf(buf, len, "device %zu (%s", info.index, info.name);
}

/* A message of several lines as TAP comments: printable, lines cut at 300
 * characters (cmocka's print_message truncates at 1024), 20 lines at most. */
static void note(const char *label, const char *text)
{
    print_message("# %s:\n", label);
    for (int lines = 0; text && *text && lines < 20; lines++) {
        size_t n = strcspn(text, "\n");
        char line[301];
        size_t k = n < 300 ? n : 300;
        for (size_t i = 0; i < k; i++) line[i] = text[i] >= 32 && text[i] < 127 ? text[i] : '?';
        line[k] = '\0';
        print_message("#   %s%s\n", line, k < n ? "..." : "");
        text += n + (text[n] == '\n');
    }
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle)) {
        note("the message", hay ? hay : "(null)");
        print_message("# it does not contain \"%s\"\n", needle);
        fail();
    }
}

/* ---- data and the reference ---- */

static cls_pipeline zscore(cls_scope scope)
{
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = scope};
    return p;
}

/* The reference output of p fitted on x and applied to x. */
static double *reference_of(const cls_array *x, const cls_pipeline *p)
{
    size_t n = x->batch * x->rows * x->cols;
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    ref_fit_transform(x, p, want, NULL);
    return want;
}

static int close_to(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * fmax(1.0, fabs(want));
}

static void expect_equal(const cls_array *y, const double *want, const char *label)
{
    assert_int_equal(ref_compare(y, want, tol_for(y->dtype), label), 0);
}

/* Fitted statistics, computed before any fault is armed. */
static cls_stats *fit(const cls_array *x, const cls_pipeline *p)
{
    /* on the group's context where a test has its own, so that the test's
     * first call is the faulted one (a fit there could measure the
     * simulator as slow, and it would then take no slice) */
    cls_context *c = group_ctx ? group_ctx : ctx;
    cls_stats *s = NULL;
    cls_status st = cls_fit(c, p, x, &s);
    if (st != CLS_OK) note(cls_status_str(st), cls_last_error(c));
    assert_int_equal(st, CLS_OK);
    return s;
}

static void show_report(const char *label)
{
    cls_report rep;
    if (cls_last_report(ctx, &rep) != CLS_OK) return;
    print_message("# %s: %zu/%zu slices, %d phase(s):", label, rep.slices_done, rep.slices, rep.phases);
    for (size_t i = 0; i < rep.ndevices; i++)
        print_message(" [%zu: %zu%s]", i, rep.devices[i].slices, rep.devices[i].failed ? " failed" : "");
    print_message("\n");
}

static void expect_ok(cls_status st, const char *label)
{
    show_report(label);
    if (st != CLS_OK) {
        print_message("# %s: %s\n", label, cls_status_str(st));
        note("cls_last_error", cls_last_error(ctx));
    }
    assert_int_equal(st, CLS_OK);
}

/* ---- what the report must say ---- */

/* The call succeeded although device `failed` was dropped: every slice is
 * done, by the others except at most `max_by_failed` by it; no other device
 * failed; the dropped device's message (checked last) names it, the OpenCL
 * call and the error. */
static void expect_failover_report(size_t failed, const char *call, const char *error, size_t max_by_failed)
{
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.ndevices, ndev);
    assert_int_equal(rep.slices_done, rep.slices);
    size_t sum = 0;
    for (size_t i = 0; i < rep.ndevices; i++) {
        const cls_device_report *d = &rep.devices[i];
        sum += d->slices;
        if (i == failed) continue;
        if (d->failed) note("another device failed too", d->failed);
        assert_null(d->failed);
    }
    assert_int_equal(sum, rep.slices);
    const cls_device_report *d = &rep.devices[failed];
    if (d->slices > max_by_failed)
        print_message("# the failed device completed %zu slices, at most %zu expected\n", d->slices, max_by_failed);
    assert_true(d->slices <= max_by_failed);
    assert_non_null(d->failed);
    char label[512];
    device_label(failed, label, sizeof label);
    assert_contains(d->failed, label);
    assert_contains(d->failed, call);
    assert_contains(d->failed, error);
}

/* Out-of-place output of a failed call: what was written is right, the
 * rest still holds the sentinel. */
static void expect_sentinel_or_reference(const cls_array *y, const double *want, const char *label)
{
    size_t n = y->batch * y->rows * y->cols, bad = 0, written = 0;
    for (size_t i = 0; i < n; i++) {
        double v = ref_get(y, i);
        if (v == SENTINEL) continue;
        written++;
        if (close_to(v, want[i], tol_for(y->dtype))) continue;
        if (bad++ < 5) print_message("# %s: element %zu is %.9g, neither the reference %.9g nor untouched\n",
                                     label, i, v, want[i]);
    }
    print_message("# %s: %zu of %zu elements written before the call failed\n", label, written, n);
    assert_int_equal(bad, 0);
}

/* In-place transform of a 1 x rows x cols float32 array: slices are runs of
 * h = SLICE_BYTES / (cols * 4) whole rows (plan.c, tile()); the report's
 * slice count checks that assumption. Every slice must be fully the
 * reference or fully the input (an element may match both: NaN, say).
 * Returns the number of slices that were transformed. */
static size_t whole_or_untouched(const cls_array *y, const cls_array *x0, const double *want, size_t slices,
                                 const char *label)
{
    size_t h = SLICE_BYTES / (y->cols * 4);
    assert_int_equal(slices, (y->rows + h - 1) / h);
    size_t transformed = 0, bad = 0;
    for (size_t k = 0; k * h < y->rows; k++) {
        size_t i0 = k * h * y->cols, i1 = (k + 1) * h * y->cols, n = y->rows * y->cols;
        if (i1 > n) i1 = n;
        size_t as_ref = 0, as_input = 0, neither = 0;
        for (size_t i = i0; i < i1; i++) {
            double v = ref_get(y, i), x = ref_get(x0, i);
            int is_ref = close_to(v, want[i], tol_for(y->dtype));
            int is_in = (isnan(v) && isnan(x)) || v == x;
            if (is_ref && !is_in) as_ref++;
            else if (is_in && !is_ref) as_input++;
            else if (!is_ref) neither++;
        }
        if (neither || (as_ref && as_input)) {
            if (bad++ < 5)
                print_message("# %s: slice %zu (rows %zu..%zu) is mixed: %zu transformed, %zu untouched, "
                              "%zu neither\n", label, k, k * h, i1 / y->cols - 1, as_ref, as_input, neither);
        }
        transformed += as_ref > 0;
    }
    assert_int_equal(bad, 0);
    return transformed;
}

/* ---- fixtures ---- */

static void warm_up(void)
{
    /* the first call verifies zero copy and compiles each kernel: done
     * here, without faults, for every path the tests take */
    cls_array a = ref_make(CLS_F32, 40, 50, 16, 1, 0);
    cls_array b = ref_make(CLS_F32, 1, 20000, 8, 2, 0);
    cls_pipeline m = zscore(CLS_SCOPE_MATRIX), bt = zscore(CLS_SCOPE_BATCH);
    cls_array ya = make_out(&a), yb = make_out(&b);
    cls_stats *s = NULL;
    expect_ok(cls_fit_transform(ctx, &m, &a, &ya, &s), "warm-up fused");
    expect_ok(cls_transform(ctx, &m, s, &a, &ya), "warm-up apply");
    cls_stats_destroy(s);
    expect_ok(cls_fit_transform(ctx, &bt, &b, &yb, NULL), "warm-up two-phase");
    ref_free(&a);
    ref_free(&b);
    ref_free(&ya);
    ref_free(&yb);
}

/* On the two PoCL devices the scheduler decides on equal speeds given
 * (tests/sched_given.c), not on rates a loaded host measured: a device the
 * fault layer slows, or that a busy host starved in one call, is not left
 * out of the next for being slow, so that which devices take part is the
 * failover's doing alone. Suite all keeps measured speeds: the simulator
 * given a PoCL device's speed would take a third of every call. */
static cls_context *make_context(void)
{
    if (test_suite_is("all")) return test_context(NULL, 0, SLICE_BYTES);
    return given_context(NULL, NULL, 0, SLICE_BYTES);
}

static int group_setup(void **state)
{
    (void)state;
    given_reset(1e-3, 1.0, 10e9 / 1000);
    ctx = make_context();
    ndev = cls_device_count(ctx);
    if (find_layer() != 0) return -1;
    if (find_device("pthread", 0, &pocl[0]) || find_device("pthread", 1, &pocl[1])) {
        fprintf(stderr, "the failover tests need two PoCL pthread devices\n");
        return -1;
    }
    if (test_suite_is("all")) {
        /* the simulator, the one staging device */
        target_match = "oclgrind";
        target_nth = 0;
        if (find_device("oclgrind", 0, &target)) {
            fprintf(stderr, "suite all has no Oclgrind device\n");
            return -1;
        }
        return 0;
    }
    /* the second PoCL device, as the layer counts them (clGetDeviceIDs
     * order, which is also the library's) */
    target_match = "pthread";
    target_nth = 1;
    target = pocl[1];
    warm_up();
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cls_context_destroy(ctx);
    return 0;
}

static int disarm(void **state)
{
    (void)state;
    fault.clear();
    return 0;
}

/* A context of the test's own (same devices, same indices): suite all, and
 * the build tests (a fresh context has built no kernel but the copy). */

static int fresh_context(void **state)
{
    (void)state;
    group_ctx = ctx;
    ctx = make_context();
    return 0;
}

static int drop_context(void **state)
{
    fault.clear();
    cls_context_destroy(ctx);
    ctx = group_ctx;
    return disarm(state);
}

/* ---- one device fails, the call succeeds ---- */

/* Transform of x out of place (in place when `in_place`) with a fitted
 * z-score while the target fails `kind` calls after `after` pass: the call
 * succeeds, the output equals the reference, the report names the target,
 * `call` and `error`, and the others did the rest. */
static void transform_survives(const cls_array *x, int kind, long after, int in_place, const char *call,
                               const char *error, const char *label)
{
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    cls_stats *s = fit(x, &p);
    double *want = reference_of(x, &p);
    cls_array y = in_place ? ref_copy(x) : make_out(x);

    target_goes_first();
    int r = arm(kind, NULL, after);
    expect_ok(cls_transform(ctx, &p, s, in_place ? &y : x, &y), label);
    if (fault.injected(r) < 1) print_message("# %s: no fault was injected\n", label);
    assert_true(fault.injected(r) >= 1);
    expect_equal(&y, want, label);
    expect_failover_report(target, call, error, (size_t)after);

    cls_stats_destroy(s);
    free(want);
    ref_free(&y);
}

/* Suite pocl: 200 slices of 1024 rows. */
static const size_t ROWS = 200000, COLS = 16;

static void kernel_enqueue_failure_is_redone_on_the_other_device(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 10, REF_MISSING | REF_NEGATIVE);
    transform_survives(&x, FAULT_KERNEL, 5, 0, "clEnqueueNDRangeKernel", "CL_OUT_OF_RESOURCES",
                       "transform, kernel fault");
    ref_free(&x);
}

static void allocation_failure_is_redone_on_the_other_device(void **state)
{
    (void)state;
    /* zero copy: an input and an output buffer per out-of-place slice */
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 12, REF_MISSING | REF_NEGATIVE);
    transform_survives(&x, FAULT_BUFFER, 10, 0, "clCreateBuffer", "CL_MEM_OBJECT_ALLOCATION_FAILURE",
                       "transform, allocation fault");
    ref_free(&x);
}

static void device_lost_after_its_commands_ran_is_redone(void **state)
{
    (void)state;
    /* clWaitForEvents fails once the slice's commands have run */
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 13, REF_MISSING);
    transform_survives(&x, FAULT_WAIT, 5, 0, "clWaitForEvents", "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
                       "transform, wait fault");
    ref_free(&x);
}

static void negative_event_status_is_redone(void **state)
{
    (void)state;
    /* the slice's last command reports a negative execution status */
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 14, REF_MISSING);
    transform_survives(&x, FAULT_STATUS, 5, 0, "", "CL_DEVICE_NOT_AVAILABLE", "transform, event status fault");
    ref_free(&x);
}

static void kernel_failure_in_fused_fit_transform_is_redone(void **state)
{
    (void)state;
    /* 2000 matrices of 50 x 16, matrix scope: self-contained slices */
    cls_array x = ref_make(CLS_F32, 2000, 50, 16, 11, REF_MISSING | REF_OFFSET);
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    double *want = reference_of(&x, &p);
    cls_array y = make_out(&x);
    cls_stats *s = NULL;

    target_goes_first();
    int r = arm(FAULT_KERNEL, NULL, 3);
    expect_ok(cls_fit_transform(ctx, &p, &x, &y, &s), "fused fit_transform, kernel fault");
    assert_true(fault.injected(r) >= 1);
    expect_equal(&y, want, "fused fit_transform, kernel fault");
    check_stats(s, &x, p.scope, 1, "fused fit_transform, kernel fault");
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);
    expect_failover_report(target, "clEnqueueNDRangeKernel", "CL_OUT_OF_RESOURCES", 3);

    cls_stats_destroy(s);
    free(want);
    ref_free(&x);
    ref_free(&y);
}

static void failure_is_per_call_and_the_next_call_uses_both_devices(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 15, REF_NEGATIVE);
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    cls_stats *s = fit(&x, &p);
    double *want = reference_of(&x, &p);

    target_goes_first();
    int r = arm(FAULT_KERNEL, NULL, 2);
    for (int call = 0; call < 2; call++) {
        /* still broken: dropped again, so it was tried again */
        cls_array y = make_out(&x);
        long seen = fault.seen(r);
        expect_ok(cls_transform(ctx, &p, s, &x, &y), "transform, device broken");
        assert_true(fault.seen(r) > seen);
        expect_equal(&y, want, "transform, device broken");
        expect_failover_report(target, "clEnqueueNDRangeKernel", "CL_OUT_OF_RESOURCES", 2);
        ref_free(&y);
    }
    /* repaired; it goes first, so that the timing of a call of a few
     * milliseconds cannot leave it idle */
    fault.clear();
    target_goes_first();

    cls_array y = make_out(&x);
    expect_ok(cls_transform(ctx, &p, s, &x, &y), "transform, device repaired");
    expect_equal(&y, want, "transform, device repaired");
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.slices_done, rep.slices);
    for (size_t i = 0; i < rep.ndevices; i++) assert_null(rep.devices[i].failed);
    assert_true(rep.devices[pocl[0]].slices > 0);
    assert_true(rep.devices[pocl[1]].slices > 0);
    ref_free(&y);

    cls_stats_destroy(s);
    free(want);
    ref_free(&x);
}

/* ---- every device fails, the call fails ---- */

/* Both PoCL devices fail: the call fails, names both, and the out-of-place
 * output holds only right values or the untouched sentinel. */
static void both_devices_failing(int kind, const char *call)
{
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 16, REF_MISSING);
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    cls_stats *s = fit(&x, &p);
    double *want = reference_of(&x, &p);
    cls_array y = make_out(&x);

    int r0 = fault.add(kind, "pthread", 0, NULL, 4, -1, 0);
    int r1 = fault.add(kind, "pthread", 1, NULL, 4, -1, 0);
    assert_true(r0 >= 0 && r1 >= 0);
    cls_status st = cls_transform(ctx, &p, s, &x, &y);
    const char *msg = cls_last_error(ctx);
    print_message("# both devices failing at %s: %s\n", call, cls_status_str(st));
    note("cls_last_error", msg);
    assert_true(st == CLS_E_DEVICE || st == CLS_E_NOMEM);
    assert_true(fault.injected(r0) >= 1 && fault.injected(r1) >= 1);
    for (int k = 0; k < 2; k++) {
        char label[512];
        device_label(pocl[k], label, sizeof label);
        assert_contains(msg, label);
    }
    assert_contains(msg, call);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_true(rep.slices_done < rep.slices);
    assert_non_null(rep.devices[pocl[0]].failed);
    assert_non_null(rep.devices[pocl[1]].failed);
    expect_sentinel_or_reference(&y, want, call);

    cls_stats_destroy(s);
    free(want);
    ref_free(&x);
    ref_free(&y);
}

static void both_devices_failing_at_kernel_enqueue_fails_the_call(void **state)
{
    (void)state;
    both_devices_failing(FAULT_KERNEL, "clEnqueueNDRangeKernel");
}

static void both_devices_failing_allocation_fails_the_call(void **state)
{
    (void)state;
    both_devices_failing(FAULT_BUFFER, "clCreateBuffer");
}

/* ---- a kernel that fails to build ---- */

/* The build options that name the apply kernel's program (program.c). */
static const char *apply_program(void)
{
    static char opt[32];
    snprintf(opt, sizeof opt, "-DCLS_KERNEL=%d ", (int)CLS_K_APPLY);
    return opt;
}

/* Kernels are built the first time a call needs them (program.c), so a
 * build can fail mid-call. The test's own context (fresh_context) has
 * built only its copy kernels; the target's build of the apply kernel
 * fails (from its binary cache and from source): it drops out, the other
 * device carries the call, and the next call does not compile it there
 * again. */
static void build_failure_mid_call_is_carried_by_the_other_device(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 18, REF_MISSING | REF_NEGATIVE);
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    cls_stats *s = fit(&x, &p);
    double *want = reference_of(&x, &p);
    /* the other device waits up to 300 ms for the target's first launch,
     * which never comes: the target surely tries its build */
    assert_true(fault.add(FAULT_HOLD, target_match, target_nth, NULL, 0, -1, 300) >= 0);
    int r = fault.add(FAULT_BUILD, target_match, target_nth, apply_program(), 0, -1, 0);
    assert_true(r >= 0);
    for (int call = 0; call < 2; call++) {
        cls_array y = make_out(&x);
        long seen = fault.seen(r);
        expect_ok(cls_transform(ctx, &p, s, &x, &y), "transform, build fault");
        expect_equal(&y, want, "transform, build fault");
        if (call == 0) {
            assert_true(fault.injected(r) >= 1);
            expect_failover_report(target, "clBuildProgram", "CL_BUILD_PROGRAM_FAILURE", 0);
        } else {
            assert_int_equal(fault.seen(r), seen); /* not compiled again */
            cls_report rep;
            assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
            assert_int_equal(rep.devices[target].slices, 0);
            if (rep.devices[target].failed) assert_contains(rep.devices[target].failed, "not tried again");
        }
        ref_free(&y);
    }
    cls_stats_destroy(s);
    free(want);
    ref_free(&x);
}

/* Every device's build of the kernel fails: CLS_E_BUILD, both devices
 * named with the call, the output untouched. */
static void build_failure_on_every_device_fails_the_call(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, ROWS, COLS, 19, REF_MISSING);
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    cls_stats *s = fit(&x, &p);
    assert_true(fault.add(FAULT_BUILD, "pthread", -1, apply_program(), 0, -1, 0) >= 0);
    cls_array y = make_out(&x);
    cls_status st = cls_transform(ctx, &p, s, &x, &y);
    const char *msg = cls_last_error(ctx);
    note("cls_last_error", msg);
    assert_int_equal(st, CLS_E_BUILD);
    for (int k = 0; k < 2; k++) {
        char label[512];
        device_label(pocl[k], label, sizeof label);
        assert_contains(msg, label);
    }
    assert_contains(msg, "clBuildProgram");
    size_t n = x.batch * x.rows * x.cols;
    for (size_t i = 0; i < n; i++) assert_true(ref_get(&y, i) == SENTINEL);
    ref_free(&y);
    cls_stats_destroy(s);
    ref_free(&x);
}

/* ---- in place ---- */

/* In place, `kind` failing on the target (on both PoCL devices when
 * `both`): either success with every element right, or a failure whose
 * report counts the slices written, each slice whole or untouched. */
static void in_place_failure(int kind, int both, long after, const char *label)
{
    cls_array x0 = ref_make(CLS_F32, 1, ROWS, COLS, 17, REF_OFFSET | REF_MISSING);
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    cls_stats *s = fit(&x0, &p);
    double *want = reference_of(&x0, &p);
    cls_array x = ref_copy(&x0);

    if (both) assert_true(fault.add(kind, "pthread", 0, NULL, after, -1, 0) >= 0);
    else target_goes_first();
    arm(kind, NULL, after);
    cls_status st = cls_transform(ctx, &p, s, &x, &x);
    assert_true(fault.injected(-1) >= 1);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    print_message("# %s: %s, %zu of %zu slices done\n", label, cls_status_str(st), rep.slices_done, rep.slices);
    if (both) assert_int_not_equal(st, CLS_OK);
    if (st == CLS_OK) {
        expect_equal(&x, want, label);
        assert_int_equal(rep.slices_done, rep.slices);
    } else {
        note("cls_last_error", cls_last_error(ctx));
        assert_true(st == CLS_E_DEVICE || st == CLS_E_NOMEM);
        /* the message names the device that failed (either, when both may) */
        char dev[512], dev0[512];
        device_label(target, dev, sizeof dev);
        device_label(pocl[0], dev0, sizeof dev0);
        if (!both || !strstr(cls_last_error(ctx), dev0)) assert_contains(cls_last_error(ctx), dev);
        size_t transformed = whole_or_untouched(&x, &x0, want, rep.slices, label);
        print_message("# %s: %zu slices transformed in caller memory, the report says %zu\n", label, transformed,
                      rep.slices_done);
        /* exact: an enqueue or allocation that failed wrote nothing, and
         * what was in flight before it ran to its end */
        assert_int_equal(transformed, rep.slices_done);
    }

    cls_stats_destroy(s);
    free(want);
    ref_free(&x0);
    ref_free(&x);
}

static void in_place_kernel_failure_on_one_device(void **state)
{
    (void)state;
    in_place_failure(FAULT_KERNEL, 0, 5, "in place, one device, kernel fault");
}

static void in_place_allocation_failure_on_one_device(void **state)
{
    (void)state;
    /* in place: one buffer per slice */
    in_place_failure(FAULT_BUFFER, 0, 5, "in place, one device, allocation fault");
}

static void in_place_kernel_failure_on_both_devices(void **state)
{
    (void)state;
    in_place_failure(FAULT_KERNEL, 1, 5, "in place, both devices, kernel fault");
}

/* ---- two phases ---- */

/* 1 x rows x 8 float32, batch scope: a group larger than a slice, so
 * statistics per slice, a host merge, then scaling. The target's kernels
 * whose names contain `kernel` fail after `after`. */
static void two_phase_failure(size_t rows, const char *kernel, long after, const char *label)
{
    cls_array x = ref_make(CLS_F32, 1, rows, 8, 18, REF_MISSING | REF_OFFSET);
    cls_pipeline p = zscore(CLS_SCOPE_BATCH);
    double *want = reference_of(&x, &p);
    cls_array y = make_out(&x);
    cls_stats *s = NULL;

    target_goes_first();
    int r = arm(FAULT_KERNEL, kernel, after);
    expect_ok(cls_fit_transform(ctx, &p, &x, &y, &s), label);
    if (fault.injected(r) < 1) print_message("# %s: the target ran no %s kernel\n", label, kernel);
    assert_true(fault.injected(r) >= 1);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 2);
    expect_equal(&y, want, label);
    check_stats(s, &x, p.scope, 1, label);
    expect_failover_report(target, "clEnqueueNDRangeKernel", "CL_OUT_OF_RESOURCES", rep.slices);

    cls_stats_destroy(s);
    free(want);
    ref_free(&x);
    ref_free(&y);
}

static void two_phase_fit_transform_survives_a_failure_in_phase_1(void **state)
{
    (void)state;
    /* "stats_": stats_mv and stats_reduce, the first phase only */
    two_phase_failure(60000, "stats_", 3, "two-phase, fault in phase 1");
}

static void two_phase_fit_transform_survives_a_failure_in_phase_2(void **state)
{
    (void)state;
    /* "apply_f": the scaling kernel apply_f32, the second phase only */
    two_phase_failure(60000, "apply_f", 2, "two-phase, fault in phase 2");
}

/* ---- suite all: Oclgrind (staging) fails, the others carry on ---- */

/* 1 x 65536 x 8: 32 slices, of which the simulator runs one or two. */
static const size_t OCLGRIND_ROWS = 65536;

static void oclgrind_kernel_failure_is_redone_elsewhere(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, OCLGRIND_ROWS, 8, 20, REF_MISSING | REF_NEGATIVE);
    transform_survives(&x, FAULT_KERNEL, 0, 0, "clEnqueueNDRangeKernel", "CL_OUT_OF_RESOURCES",
                       "Oclgrind kernel fault");
    ref_free(&x);
}

static void oclgrind_lost_in_place_is_redone_elsewhere(void **state)
{
    (void)state;
    /* staging: the result reaches caller memory only after the wait, so a
     * device lost there wrote nothing and its slice can be redone */
    cls_array x = ref_make(CLS_F32, 1, OCLGRIND_ROWS, 8, 21, REF_OFFSET | REF_MISSING);
    transform_survives(&x, FAULT_WAIT, 0, 1, "clWaitForEvents", "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
                       "Oclgrind lost, in place");
    ref_free(&x);
}

static void oclgrind_allocation_failure_drops_it(void **state)
{
    (void)state;
    /* the context's first call allocates the simulator's staging slots,
     * before its worker takes any slice */
    cls_array x = ref_make(CLS_F32, 1, OCLGRIND_ROWS, 8, 22, REF_MISSING);
    cls_pipeline p = zscore(CLS_SCOPE_MATRIX);
    double *want = reference_of(&x, &p);
    cls_array y = make_out(&x);

    int r = arm(FAULT_BUFFER, NULL, 0);
    expect_ok(cls_fit_transform(ctx, &p, &x, &y, NULL), "Oclgrind allocation fault");
    assert_true(fault.injected(r) >= 1);
    expect_equal(&y, want, "Oclgrind allocation fault");
    expect_failover_report(target, "clCreateBuffer", "CL_MEM_OBJECT_ALLOCATION_FAILURE", 0);

    free(want);
    ref_free(&x);
    ref_free(&y);
}

static void oclgrind_failure_in_phase_2_with_resident_slices(void **state)
{
    (void)state;
    /* the simulator keeps its phase-1 slices resident for phase 2; when it
     * fails there, the others upload them again */
    two_phase_failure(40000, "apply_f", 0, "Oclgrind, two-phase, fault in phase 2");
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_true(rep.devices[target].slices >= 1);
}

int main(void)
{
    /* before the first OpenCL call: the ICD loader reads it once */
    const char *layer = getenv("CLS_FAULT_LAYER");
    if (layer) setenv("OPENCL_LAYERS", layer, 1);
    /* suite all: no speed probes, so that the simulator, unmeasured in a
     * fresh context, takes a slice (its probe would keep it out) */
    if (test_suite_is("all")) test_tune.no_prior = 1;

    const struct CMUnitTest pocl_tests[] = {
        cmocka_unit_test_teardown(kernel_enqueue_failure_is_redone_on_the_other_device, disarm),
        cmocka_unit_test_teardown(allocation_failure_is_redone_on_the_other_device, disarm),
        cmocka_unit_test_teardown(device_lost_after_its_commands_ran_is_redone, disarm),
        cmocka_unit_test_teardown(negative_event_status_is_redone, disarm),
        cmocka_unit_test_teardown(kernel_failure_in_fused_fit_transform_is_redone, disarm),
        cmocka_unit_test_teardown(failure_is_per_call_and_the_next_call_uses_both_devices, disarm),
        cmocka_unit_test_teardown(both_devices_failing_at_kernel_enqueue_fails_the_call, disarm),
        cmocka_unit_test_teardown(both_devices_failing_allocation_fails_the_call, disarm),
        cmocka_unit_test_setup_teardown(build_failure_mid_call_is_carried_by_the_other_device, fresh_context,
                                        drop_context),
        cmocka_unit_test_setup_teardown(build_failure_on_every_device_fails_the_call, fresh_context, drop_context),
        cmocka_unit_test_teardown(in_place_kernel_failure_on_one_device, disarm),
        cmocka_unit_test_teardown(in_place_allocation_failure_on_one_device, disarm),
        cmocka_unit_test_teardown(in_place_kernel_failure_on_both_devices, disarm),
        cmocka_unit_test_teardown(two_phase_fit_transform_survives_a_failure_in_phase_1, disarm),
        cmocka_unit_test_teardown(two_phase_fit_transform_survives_a_failure_in_phase_2, disarm),
    };
    const struct CMUnitTest all_tests[] = {
        cmocka_unit_test_setup_teardown(oclgrind_kernel_failure_is_redone_elsewhere, fresh_context, drop_context),
        cmocka_unit_test_setup_teardown(oclgrind_lost_in_place_is_redone_elsewhere, fresh_context, drop_context),
        cmocka_unit_test_setup_teardown(oclgrind_allocation_failure_drops_it, fresh_context, drop_context),
        cmocka_unit_test_setup_teardown(oclgrind_failure_in_phase_2_with_resident_slices, fresh_context,
                                        drop_context),
    };
    if (test_suite_is("all")) return TEST_RUN("failover-all", all_tests, group_setup, group_teardown);
    return TEST_RUN("failover", pocl_tests, group_setup, group_teardown);
}
