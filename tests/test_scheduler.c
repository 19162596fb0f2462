/* The scheduler's first calls (DESIGN.md, "Running a pipeline"): before a
 * device has finished a slice its speed is unknown, so the first
 * multi-device call of a context takes a prior of each device (a copy
 * kernel on growing sizes, src/engine/measure.c). A device far slower by
 * its prior than another takes no slice unless it would still finish
 * before the others; devices of comparable priors each take a slice to be
 * measured; a prior spoilt by a busy moment is taken again once the calls
 * since have taken 100 times as long as that probe; one stalled probe
 * round does not spoil it. A device's first launch of a kernel (which a
 * driver may spend compiling it) counts neither in its prior nor in its
 * rate. A device that declines a phase's first slice gets no worker thread
 * until it might take one, or until another device fails, and the report
 * says why it took no slice: the rule that declined, or that the others
 * had taken every slice.
 *
 * Every decision is tested as a function of given speeds, times and
 * sizes, never of how fast something ran here:
 *   - made up in memory (every suite, alone in noicd): the prior from
 *     given round times (cls_prior_rounds), a device's rate from given
 *     take and completion times and the admission it decides
 *     (cls_meter_*, cls_may_take), the new probe after given phase times
 *     (cls_run_priors);
 *   - on two PoCL pthread devices (pocl), whole calls whose clock, priors
 *     and rates are the test's (cls_tuning.sched, src/testing.h): the
 *     clock moves only when a slice completes (the progress callback) or a
 *     device is probed, so the calls decide the same under any load;
 *   - and one case on the real clock, with the second device slowed by the
 *     fault layer, asserting only what holds under any load: results
 *     right, every slice done once by one device, and a device that took
 *     none says why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/job.h"
#include "fault_ctl.h"
#include "pipeline_util.h"
#include "sched_given.h"

/* 64 matrices of 500 x 64 float32 (8 MB), min-max per matrix: one phase per
 * call, slices of 1 MB. */
enum { B = 64, R = 500, C = 64 };
#define SLICE_BYTES ((size_t)1 << 20)
#define MANY_SLICE_BYTES 65536 /* 128 slices per call */
#define DELAY_US 20000         /* per kernel launch on the slow device (the real-clock case) */
#define FAST 10e9              /* given speeds, bytes/s */
#define SLOW (FAST / 1000)

static cls_array x;

/* ---- the prior's rounds, on given times ---- */

/* A device whose copy of b bytes takes `launch` + 2b / `bw` seconds; the
 * untimed first launch takes `first` instead, and round `stall_at` (0:
 * none; counted from 1, the untimed launch included) takes `stall` more. */
typedef struct model {
    double launch, bw, first, stall;
    unsigned stall_at, rounds;
} model;

static double model_t(const model *m, size_t bytes) { return m->launch + 2.0 * (double)bytes / m->bw; }

static double model_round(void *user, size_t bytes)
{
    model *m = user;
    m->rounds++;
    if (m->rounds == 1 && m->first > 0) return m->first;
    return model_t(m, bytes) + (m->rounds == m->stall_at ? m->stall : 0);
}

static double prior_of(model m) { return cls_prior_rounds(model_round, &m, (size_t)1 << 20); }

/* The same device with no stall: 4 KiB to 1 MiB fit the 2 ms budget, and
 * the best rate is the 1 MiB round's. */
static const model plain = {.launch = 10e-6, .bw = 10e9};

static void a_slow_first_probe_launch_does_not_spoil_the_prior(void **state)
{
    (void)state;
    double want = 2.0 * 1048576 / model_t(&plain, 1048576);
    assert_close(prior_of(plain), want, 1e-12);
    /* its first launch takes 200 ms (a driver compiling the copy kernel):
     * untimed, the prior is the same */
    model m = plain;
    m.first = 0.2;
    assert_close(prior_of(m), want, 1e-12);
}

static void a_stalled_probe_round_does_not_spoil_the_prior(void **state)
{
    (void)state;
    /* the first timed round (4 KiB) stalls 25 ms, as a PoCL worker
     * preempted on a busy host does: it runs again and the faster counts
     * (alone it would read 8 KiB in 25 ms, 0.33 MB/s); the stall spent the
     * wall-clock cap, so 4 KiB is the last size */
    model m = plain;
    m.stall_at = 2;
    m.stall = 25e-3;
    double got = prior_of(m);
    print_message("# first timed round stalled: %.3g GB/s (unstalled 4 KiB: %.3g)\n", got / 1e9,
                  2.0 * 4096 / model_t(&plain, 4096) / 1e9);
    assert_close(got, 2.0 * 4096 / model_t(&plain, 4096), 1e-12);
    /* a later round (64 KiB, the 7th) stalls 3 ms: it took over 2.5x the
     * round before, runs again, and the sizes go on to 1 MiB (counted,
     * its 3 ms would have spent the budget at 32 KiB's rate) */
    m = plain;
    m.stall_at = 7;
    m.stall = 3e-3;
    assert_close(prior_of(m), 2.0 * 1048576 / model_t(&plain, 1048576), 1e-12);
}

/* ---- admission on given take and completion times ---- */

typedef struct fake {
    cls_context ctx;
    cls_dev     dev[2];
    cls_devrun  run[2];
    cls_job     job;
} fake;

/* Two zero-copy devices of given priors, none measured, `pending` bytes
 * to go. */
static fake *make(double prior0, double prior1, uint64_t pending)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    double prior[2] = {prior0, prior1};
    for (size_t i = 0; i < 2; i++) {
        f->dev[i].index = i;
        f->dev[i].zero_copy = 1;
        f->dev[i].nq = 3;
        f->dev[i].prior = prior[i];
        f->run[i].dev = &f->dev[i];
        f->run[i].job = &f->job;
        f->run[i].participates = 1;
    }
    f->job.ctx = &f->ctx;
    f->job.runs = f->run;
    f->job.nruns = 2;
    f->job.pending_bytes = pending;
    return f;
}

#define MB 1e6
#define SLICE (2 * (uint64_t)MB) /* a 1 MB slice read and written */

/* Device 0 has done three slices one after another, the first taking
 * `first` seconds and the others `rest`; 125 slices are left. Whether
 * device 1, whose prior is 1000x below device 0's, takes the next. */
static int far_slower_takes_after(double first, double rest)
{
    fake *f = make(2e9, 2e6, 125 * SLICE);
    cls_meter *m = &f->run[0].phase;
    double t = 1.0;
    for (int i = 0; i < 3; i++) {
        cls_meter_take(m, t);
        double took = i == 0 ? first : rest;
        t += took;
        cls_meter_done(m, SLICE, took, t, 0);
    }
    cls_decline why = {.why = CLS_DECLINE_NONE};
    int take = cls_may_take(&f->run[1], SLICE, t, &why);
    if (!take) assert_int_equal(why.why, CLS_DECLINE_PRIOR);
    free(f);
    return take;
}

static void a_slow_first_launch_does_not_let_a_far_slower_device_in(void **state)
{
    (void)state;
    /* device 0's first slice takes 200 ms (a driver compiling the scaling
     * kernel at its first launch), the next 1 ms each: its rate counts
     * from its first completion, 2 GB/s, and the others finish the 125
     * slices left in 0.125 s against device 1's 1 s for one slice */
    assert_false(far_slower_takes_after(0.2, 1e-3));
    /* had every slice of device 0 taken as long (a device that slow), the
     * 125 slices would take it 8.4 s, over 8 times device 1's one slice:
     * device 1 takes one */
    assert_true(far_slower_takes_after(0.2 / 2.97, 0.2 / 2.97));
}

/* ---- the new probe after given phase times ---- */

/* Device 0 fast, device 1 at speed1 (both priors and rates), 1 ms per
 * slice completed, `probe_cost` per probe (sched_given.h). */
static void give(double speed1, double probe_cost)
{
    given_reset(1e-3, probe_cost, FAST);
    given_speed(1, speed1);
}

static void a_prior_is_taken_again_after_100_times_its_cost_of_calls(void **state)
{
    (void)state;
    fake *f = make(0, 0, 0);
    give(SLOW, 1e-3);
    f->ctx.tune.sched = given_source();
    f->dev[0].rate[0] = 5e9; /* device 0 measured: never probed */
    cls_run_priors(&f->job);
    assert_int_equal(given_probes(0), 0);
    assert_int_equal(given_probes(1), 1);
    assert_true(f->dev[1].prior == SLOW);
    assert_close(f->dev[1].probe_cost, 1e-3, 1e-9);
    /* phases of calls since (run.c adds them): under 100 probes' time, no
     * new probe; past it, one; then the interval doubles */
    static const struct { double since; unsigned probes; } steps[] = {
        {0.099, 1}, {0.101, 2}, {0.199, 2}, {0.201, 3}, {0.399, 3}, {0.401, 4}};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        f->dev[1].since_probe = steps[i].since;
        cls_run_priors(&f->job);
        assert_int_equal(given_probes(1), steps[i].probes);
    }
    /* measured meanwhile: no probe, whatever the time */
    f->dev[1].rate[0] = 1e9;
    f->dev[1].since_probe = 1e6;
    cls_run_priors(&f->job);
    assert_int_equal(given_probes(1), 4);
    free(f);
}

/* ---- whole calls on two PoCL devices ---- */

static int setup(void **state)
{
    (void)state;
    if (test_suite_is("noicd")) return 0;
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
    if (fault.clear) fault.clear();
    return 0;
}

/* Two devices, the per-slice rules alone (no call runs on one device to
 * compare: src/engine/team.c, tests/test_team.c), the scheduler's time and
 * speeds given (sched_given.h) or measured, probes unless `no_prior`. */
static cls_context *two_devices(size_t slice_bytes, int given, int no_prior)
{
    cls_tuning t = test_tune;
    t.no_team = 1;
    t.no_prior = no_prior;
    cls_context *ctx = given ? given_context(&t, NULL, 0, slice_bytes) : test_context_tuned(&t, NULL, 0, slice_bytes);
    assert_int_equal(cls_device_count(ctx), 2);
    return ctx;
}

/* One min-max call on a context, its result checked; returns its report. */
static cls_report call(cls_context *ctx, const char *label)
{
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_stats_destroy(check_fit_transform(ctx, &x, &p, label));
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.phases, 1);
    assert_int_equal(rep.ndevices, 2);
    print_message("# %s: device 1 did %zu of %zu slices%s%s\n", label, rep.devices[1].slices, rep.slices,
                  rep.devices[1].sat_out ? "; " : "", rep.devices[1].sat_out ? rep.devices[1].sat_out : "");
    return rep;
}

/* Every slice done once, by one device or the other. */
static void every_slice_once(const cls_report *rep)
{
    assert_int_equal(rep->slices_done, rep->slices);
    assert_int_equal(rep->devices[0].slices + rep->devices[1].slices, rep->slices);
}

/* Device 1 declined for its prior and took nothing; device 0 did it all. */
static void declined_for_its_prior(const cls_report *rep)
{
    every_slice_once(rep);
    assert_int_equal(rep->devices[1].slices, 0);
    const char *why = rep->devices[1].sat_out;
    assert_non_null(why);
    assert_non_null(strstr(why, "declined: not measured yet; its probe read"));
    assert_null(rep->devices[0].sat_out);
}

/* Device 1 was not kept out by a rule: it took a slice, or its worker found
 * every slice taken (whether its thread ran before device 0 had taken them
 * all is the host's scheduling, not the library's). */
static void not_declined(const cls_report *rep)
{
    every_slice_once(rep);
    if (rep->devices[1].slices) return;
    assert_non_null(rep->devices[1].sat_out);
    assert_non_null(strstr(rep->devices[1].sat_out, "the other devices had taken every one"));
}

static void far_slower_device_takes_no_slice_in_its_first_calls(void **state)
{
    (void)state;
    give(SLOW, 1e-3);
    cls_context *ctx = two_devices(SLICE_BYTES, 1, 0);
    cls_report rep = call(ctx, "first call, device 1 1000x slower");
    declined_for_its_prior(&rep);
    rep = call(ctx, "second call");
    declined_for_its_prior(&rep);
    /* probed once each, device 1 once more for being far below its twin */
    assert_int_equal(given_probes(0), 1);
    assert_int_equal(given_probes(1), 2);
    cls_context_destroy(ctx);
}

static void comparable_devices_both_take_part_in_the_first_call(void **state)
{
    (void)state;
    give(FAST / 2, 1e-3);
    cls_context *ctx = two_devices(MANY_SLICE_BYTES, 1, 0);
    cls_report rep = call(ctx, "first call, device 1 half as fast");
    not_declined(&rep);
    assert_true(rep.devices[0].slices > 0);
    assert_int_equal(given_probes(1), 1); /* within 8x of its twin: one probe */
    cls_context_destroy(ctx);
}

static void a_prior_spoilt_by_a_busy_moment_is_taken_again(void **state)
{
    (void)state;
    /* device 1's probe reads it 1000x slow (a busy moment), then it is
     * as fast as device 0: the calls decline it until their phases add up
     * to 100 times its probe's 4.9 ms (not a multiple of a phase's length),
     * counted on the given clock (1 ms per slice completed), and then it is
     * probed again and takes part */
    give(SLOW, 4.9e-3);
    cls_context *ctx = two_devices(MANY_SLICE_BYTES, 1, 0);
    cls_report rep = call(ctx, "call 1, device 1 slow while probed");
    declined_for_its_prior(&rep);
    assert_int_equal(given_probes(1), 2);
    given_speed(1, FAST);
    /* the call after those whose phases since the probe reach 0.49 s */
    size_t again = 1;
    while ((double)again * (double)rep.slices * given_tick() < 100 * given_probe_cost()) again++;
    again++;
    print_message("# %zu slices per call: device 1 probed again in call %zu\n", rep.slices, again);
    for (size_t c = 2; c < again; c++) {
        char label[64];
        snprintf(label, sizeof label, "call %zu", c);
        rep = call(ctx, label);
        declined_for_its_prior(&rep);
        assert_int_equal(given_probes(1), 2);
    }
    rep = call(ctx, "the call that probes device 1 again");
    assert_int_equal(given_probes(1), 3);
    not_declined(&rep);
    cls_context_destroy(ctx);
}

static void a_device_left_out_takes_over_when_the_other_fails(void **state)
{
    (void)state;
    /* device 1 is far slower: it declines the first slice and gets no
     * worker thread; device 0 then fails after two slices, and device 1
     * must be woken to finish the call */
    give(SLOW, 1e-3);
    cls_context *ctx = two_devices(SLICE_BYTES, 1, 0);
    assert_true(fault.add(FAULT_KERNEL, "pthread", 0, "fit_apply", 2, -1, 0) >= 0);
    cls_report rep = call(ctx, "device 1 slow, device 0 failing after 2 slices");
    assert_non_null(rep.devices[0].failed);
    assert_int_equal(rep.devices[0].slices, 2);
    assert_int_equal(rep.devices[1].slices, rep.slices - 2);
    assert_int_equal(rep.slices_done, rep.slices);
    fault.clear();
    cls_context_destroy(ctx);
}

static void no_probe_with_the_no_prior_switch(void **state)
{
    (void)state;
    /* no speed probes: an unmeasured device takes a slice whatever its
     * speed (and is then measured: 1000x slower, it declines the rest) */
    give(SLOW, 1e-3);
    cls_context *ctx = two_devices(MANY_SLICE_BYTES, 1, 1);
    cls_report rep = call(ctx, "no speed probes, device 1 slow");
    assert_int_equal(given_probes(0) + given_probes(1), 0);
    every_slice_once(&rep);
    if (!rep.devices[1].slices) not_declined(&rep);
    cls_context_destroy(ctx);
}

static void a_device_that_finds_every_slice_taken_says_so(void **state)
{
    (void)state;
    /* one slice for two devices, both unmeasured and unprobed (so both
     * would take it): one does, the other's worker finds none left, and
     * the report says that rather than nothing */
    cls_context *ctx = two_devices((size_t)64 << 20, 0, 1);
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

static void on_the_real_clock_every_slice_is_done_once_and_right(void **state)
{
    (void)state;
    /* measured priors and rates, device 1 slowed by the fault layer: what
     * the scheduler decides depends on the host's load, so only what holds
     * under any load is checked, over the first calls (probes, tries) and
     * later ones */
    cls_context *ctx = two_devices(MANY_SLICE_BYTES, 0, 0);
    assert_true(fault.add(FAULT_DELAY, "pthread", 1, NULL, 0, -1, DELAY_US) >= 0);
    for (int c = 0; c < 4; c++) {
        char label[64];
        snprintf(label, sizeof label, "real clock, call %d", c + 1);
        cls_report rep = call(ctx, label);
        every_slice_once(&rep);
        for (size_t d = 0; d < 2; d++) {
            assert_null(rep.devices[d].failed);
            if (!rep.devices[d].slices) assert_non_null(rep.devices[d].sat_out);
        }
    }
    fault.clear();
    cls_context_destroy(ctx);
}

int main(void)
{
    /* before the first OpenCL call: the ICD loader reads it once */
    const char *layer = getenv("CLS_FAULT_LAYER");
    if (layer && !test_suite_is("noicd")) setenv("OPENCL_LAYERS", layer, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_slow_first_probe_launch_does_not_spoil_the_prior),
        cmocka_unit_test(a_stalled_probe_round_does_not_spoil_the_prior),
        cmocka_unit_test(a_slow_first_launch_does_not_let_a_far_slower_device_in),
        cmocka_unit_test(a_prior_is_taken_again_after_100_times_its_cost_of_calls),
        cmocka_unit_test_teardown(far_slower_device_takes_no_slice_in_its_first_calls, clear_faults),
        cmocka_unit_test_teardown(comparable_devices_both_take_part_in_the_first_call, clear_faults),
        cmocka_unit_test_teardown(a_prior_spoilt_by_a_busy_moment_is_taken_again, clear_faults),
        cmocka_unit_test_teardown(a_device_left_out_takes_over_when_the_other_fails, clear_faults),
        cmocka_unit_test_teardown(no_probe_with_the_no_prior_switch, clear_faults),
        cmocka_unit_test_teardown(a_device_that_finds_every_slice_taken_says_so, clear_faults),
        cmocka_unit_test_teardown(on_the_real_clock_every_slice_is_done_once_and_right, clear_faults),
    };
    /* made up in memory everywhere; whole calls on the two pthread devices */
    size_t n = test_suite_is("noicd") ? 4 : sizeof tests / sizeof *tests;
    return test_run("scheduler", tests, n, setup, teardown);
}
