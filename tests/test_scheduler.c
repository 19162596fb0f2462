/* The scheduler's first call (DESIGN.md, "Running a pipeline"): before a
 * device has finished a slice its speed is unknown, so the first
 * multi-device call of a context takes a prior of each device (a copy
 * kernel on growing sizes, src/measure.c). A device far slower by its prior
 * than another takes no slice unless it would still finish before the
 * others; devices of comparable priors each take a slice to be measured; a
 * prior spoilt by a busy moment is taken again once the calls since have
 * taken 100 times as long as that probe; one stalled probe round does not
 * spoil it. A device's first launch of a kernel (which a driver may spend
 * compiling it) counts neither in its prior nor in its rate. A device that
 * declines a phase's first slice gets no worker thread until it might take
 * one, or until another device fails, and the report says why it took no
 * slice: the rule that declined, or that the others had taken every slice.
 *
 * Suite pocl: two PoCL pthread devices; the fault layer (fault_layer.c)
 * makes the second one slow by delaying its kernel launches. The checks
 * are on the report (which device did how many slices) and the result,
 * never on times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault_ctl.h"
#include "pipeline_util.h"

/* 64 matrices of 500 x 64 float32 (8 MB), min-max per matrix: one phase per
 * call, slices of 1 MB. */
enum { B = 64, R = 500, C = 64 };
#define SLICE_BYTES ((size_t)1 << 20)
#define DELAY_US 20000 /* per kernel launch on the slow device */
#define MANY_SLICE_BYTES 65536 /* two_devices_many(): 128 slices per call */

static cls_array x;

static double test_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int setup(void **state)
{
    (void)state;
    /* the loader loads the layer with the first OpenCL call */
    cls_context_destroy(test_context(NULL, 0, 0));
    if (find_layer() != 0) return -1;
    x = ref_make(CLS_F32, B, R, C, 7100, REF_NEGATIVE);
    return x.data ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (fault.clear) fault.clear();
    ref_free(&x);
    return 0;
}

/* After each case, also a failed one: no rule spills into the next. */
static int clear_faults(void **state)
{
    (void)state;
    fault.clear();
    return 0;
}

/* One min-max call on a context; returns the slices device `i` did, after
 * checking the result against the reference. */
static size_t call(cls_context *ctx, size_t i, const char *label)
{
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_stats_destroy(check_fit_transform(ctx, &x, &p, label));
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);
    assert_true(rep.ndevices > i);
    print_message("# %s: device %zu did %zu of %zu slices\n", label, i, rep.devices[i].slices, rep.slices);
    if (!rep.devices[i].slices && rep.devices[i].sat_out) print_message("#   %s\n", rep.devices[i].sat_out);
    return rep.devices[i].slices;
}

/* Small slices (two_devices_many) leave the second worker time to start before the
 * first has taken everything, even under the sanitizers. */
/* With the switches t (NULL: the suite's) and, always, the per-slice rules
 * alone: no call runs on one device to compare (src/team.c; tests/test_team.c). */
static cls_context *two_devices_sliced_with(size_t slice_bytes, const cls_tuning *t, unsigned flags)
{
    cls_tuning tt = t ? *t : test_tune;
    tt.no_team = 1;
    cls_context *ctx = test_context_tuned(&tt, NULL, flags, slice_bytes);
    assert_int_equal(cls_device_count(ctx), 2);
    return ctx;
}

static cls_context *two_devices_sliced(size_t slice_bytes) { return two_devices_sliced_with(slice_bytes, NULL, 0); }
static cls_context *two_devices(void) { return two_devices_sliced(SLICE_BYTES); }
static cls_context *two_devices_many(void) { return two_devices_sliced(MANY_SLICE_BYTES); }

/* test_tune with no speed probes: an unmeasured device takes a slice */
static cls_tuning no_prior(void)
{
    cls_tuning t = test_tune;
    t.no_prior = 1;
    return t;
}

/* Device 1 slow: each of its kernel launches waits DELAY_US first. */
static void slow_device_1(void)
{
    assert_true(fault.add(FAULT_DELAY, "pthread", 1, NULL, 0, -1, DELAY_US) >= 0);
}

/* The last call's report says why device i took no slice. */
static void assert_declined_for_its_prior(cls_context *ctx, size_t i)
{
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    const char *why = rep.devices[i].sat_out;
    assert_non_null(why);
    print_message("# device %zu sat out: %s\n", i, why);
    assert_non_null(strstr(why, "declined: not measured yet; its probe read"));
    assert_null(rep.devices[i == 0].sat_out); /* the other did the work */
}

static void far_slower_device_takes_no_slice_in_its_first_calls(void **state)
{
    (void)state;
    cls_context *ctx = two_devices();
    slow_device_1();
    assert_int_equal(call(ctx, 1, "first call, device 1 slow"), 0);
    assert_declined_for_its_prior(ctx, 1);
    assert_int_equal(call(ctx, 1, "second call, device 1 slow"), 0);
    assert_declined_for_its_prior(ctx, 1);
    fault.clear();
    cls_context_destroy(ctx);
}

static void a_slow_first_launch_does_not_let_a_far_slower_device_in(void **state)
{
    (void)state;
    cls_context *ctx = two_devices_many();
    /* device 0's first launch of the scaling kernel takes 200 ms, as a
     * driver compiling it with a cold cache would; measured from the phase's
     * start it would look slow enough for device 1 (20 ms per launch, far
     * slower by its prior) to take slices */
    slow_device_1();
    assert_true(fault.add(FAULT_DELAY, "pthread", 0, "fit_apply", 0, 1, 200000) >= 0);
    assert_int_equal(call(ctx, 1, "device 0's first launch slow, device 1 slow"), 0);
    fault.clear();
    cls_context_destroy(ctx);
}

static void a_slow_first_probe_launch_does_not_spoil_the_prior(void **state)
{
    (void)state;
    /* the same for the speed probe's copy kernel: its first launch is not
     * timed. Staging devices (as discrete GPUs): on a zero-copy device the
     * check that memory is shared launches the copy kernel first. */
    cls_context *ctx = two_devices_sliced_with(MANY_SLICE_BYTES, NULL, CLS_FORCE_STAGING);
    slow_device_1();
    assert_true(fault.add(FAULT_DELAY, "pthread", 0, "copy", 0, 1, 200000) >= 0);
    assert_int_equal(call(ctx, 1, "device 0's first probe launch slow, device 1 slow"), 0);
    fault.clear();
    cls_context_destroy(ctx);
}

static void a_stalled_probe_round_does_not_spoil_the_prior(void **state)
{
    (void)state;
    /* device 0's first timed probe round stalls 25 ms, as a PoCL worker
     * preempted on a busy host does: taken alone, it would spend the
     * probe's 2 ms budget and read device 0 only 4x faster than device 1
     * (100 ms per launch here), close enough for device 1 to take a slice.
     * The round is run again and the faster one counts; device 1 is slowed
     * more than in the other cases so that a second stall of a few ms on a
     * loaded machine (seen with a busy loop beside the test) still leaves
     * it over 8x slower. */
    cls_context *ctx = two_devices_sliced_with(MANY_SLICE_BYTES, NULL, CLS_FORCE_STAGING);
    assert_true(fault.add(FAULT_DELAY, "pthread", 1, NULL, 0, -1, 5 * DELAY_US) >= 0);
    int stall = fault.add(FAULT_DELAY, "pthread", 0, "copy", 1, 1, 25000);
    assert_true(stall >= 0);
    assert_int_equal(call(ctx, 1, "device 0's first timed probe round stalled, device 1 slow"), 0);
    assert_int_equal(fault.injected(stall), 1);
    fault.clear();
    cls_context_destroy(ctx);
}

static void comparable_devices_both_take_part_in_the_first_call(void **state)
{
    (void)state;
    cls_context *ctx = two_devices_many();
    assert_true(call(ctx, 1, "first call, equal devices") > 0);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_true(rep.devices[0].slices > 0);
    cls_context_destroy(ctx);
}

static void a_prior_spoilt_by_a_busy_moment_is_taken_again(void **state)
{
    (void)state;
    cls_context *ctx = two_devices_many();
    /* the probe costs two delayed launches (one untimed), so it is taken
     * again after 100 times that of calls (~4 s); a shorter delay would
     * leave the slowed device within 8x of a device whose own probe a
     * loaded machine spoilt */
    slow_device_1();
    assert_int_equal(call(ctx, 1, "call 1, device 1 slow while probed"), 0);
    fault.clear();
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_array y = x;
    y.data = malloc((size_t)B * R * C * sizeof(float));
    assert_non_null(y.data);
    size_t calls = 1, slices = 0;
    cls_report rep;
    double t0 = test_now();
    while (slices == 0 && test_now() - t0 < 60) {
        assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_OK);
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        slices = rep.devices[1].slices;
        calls++;
    }
    free(y.data);
    print_message("# device 1 took part again in call %zu\n", calls);
    assert_true(slices > 0);
    assert_true(call(ctx, 1, "after the new probe") > 0);
    cls_context_destroy(ctx);
}

static void a_device_left_out_takes_over_when_the_other_fails(void **state)
{
    (void)state;
    cls_context *ctx = two_devices();
    /* device 1 is far slower: it declines the first slice and gets no
     * worker thread; device 0 then fails after two slices, and device 1
     * must be woken to finish the call */
    slow_device_1();
    assert_true(fault.add(FAULT_KERNEL, "pthread", 0, "fit_apply", 2, -1, 0) >= 0);
    assert_true(call(ctx, 1, "device 1 slow, device 0 failing after 2 slices") > 0);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_non_null(rep.devices[0].failed);
    assert_int_equal(rep.devices[0].slices, 2);
    fault.clear();
    cls_context_destroy(ctx);
}

static void no_probe_with_the_no_prior_switch(void **state)
{
    (void)state;
    /* no speed probes: an unmeasured device takes a slice whatever its speed */
    cls_tuning t = no_prior();
    cls_context *ctx = two_devices_sliced_with(MANY_SLICE_BYTES, &t, 0);
    slow_device_1();
    assert_true(call(ctx, 1, "no speed probes, device 1 slow") > 0);
    fault.clear();
    cls_context_destroy(ctx);
}

static void a_device_that_finds_every_slice_taken_says_so(void **state)
{
    (void)state;
    /* one slice for two devices, both unmeasured and unprobed (so both
     * would take it): one does, the other's worker finds none left, and
     * the report says that rather than nothing */
    cls_tuning t = no_prior();
    cls_context *ctx = two_devices_sliced_with((size_t)64 << 20, &t, 0);
    cls_array small = ref_make(CLS_F32, 1, 97, 5, 7300, REF_NEGATIVE);
    assert_non_null(small.data);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_stats_destroy(check_fit_transform(ctx, &small, &p, "one slice, two devices"));
    ref_free(&small);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.slices, 1);
    size_t idle = rep.devices[0].slices == 0 ? 0 : 1;
    assert_int_equal(rep.devices[idle].slices, 0);
    assert_int_equal(rep.devices[!idle].slices, 1);
    const char *why = rep.devices[idle].sat_out;
    assert_non_null(why);
    print_message("# device %zu sat out: %s\n", idle, why);
    assert_non_null(strstr(why, "took no slice: the other devices had taken every one"));
    assert_null(rep.devices[!idle].sat_out);
    cls_context_destroy(ctx);
}

int main(void)
{
    /* before the first OpenCL call: the ICD loader reads it once */
    const char *layer = getenv("CLS_FAULT_LAYER");
    if (layer) setenv("OPENCL_LAYERS", layer, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(far_slower_device_takes_no_slice_in_its_first_calls, clear_faults),
        cmocka_unit_test_teardown(a_slow_first_launch_does_not_let_a_far_slower_device_in, clear_faults),
        cmocka_unit_test_teardown(a_slow_first_probe_launch_does_not_spoil_the_prior, clear_faults),
        cmocka_unit_test_teardown(a_stalled_probe_round_does_not_spoil_the_prior, clear_faults),
        cmocka_unit_test_teardown(comparable_devices_both_take_part_in_the_first_call, clear_faults),
        cmocka_unit_test_teardown(a_prior_spoilt_by_a_busy_moment_is_taken_again, clear_faults),
        cmocka_unit_test_teardown(a_device_left_out_takes_over_when_the_other_fails, clear_faults),
        cmocka_unit_test_teardown(no_probe_with_the_no_prior_switch, clear_faults),
        cmocka_unit_test_teardown(a_device_that_finds_every_slice_taken_says_so, clear_faults),
    };
    return TEST_RUN("scheduler", tests, setup, teardown);
}
