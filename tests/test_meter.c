/* What a device's rate is taken from (src/engine/admit.c, cls_meter), on
 * takes and completions made up in memory: no OpenCL call is made.
 *   - slices finishing together on several queues (a GPU's small call)
 *     count from the first take, not from the first completion, which
 *     read such a GPU several times faster than its calls (H200, seed-b:
 *     90 GB/s where its calls moved 16-37);
 *   - a first slice far longer than the later ones (PoCL compiling a
 *     kernel variant at its first launch) and a slice that built a kernel
 *     are left out;
 *   - a phase whose last completion built a kernel shows no rate, and a
 *     device's rate is kept per kind of memory (pageable staged or not). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "engine/job.h"

#define MB 1e6

/* A device run of a device with nothing measured, on pageable-or-not memory. */
static void blank_run(cls_dev *d, cls_devrun *r)
{
    memset(d, 0, sizeof *d);
    memset(r, 0, sizeof *r);
    r->dev = d;
}

/* Three 10 MB slices taken at t = 1 s on three queues, done 1.0, 1.01 and
 * 1.02 ms later: 30 MB in 1.02 ms, about 29 GB/s, not 20 MB in 0.02 ms. */
static void slices_done_together_count_from_the_first_take(void **state)
{
    (void)state;
    cls_meter m = {0};
    for (int i = 0; i < 3; i++) cls_meter_take(&m, 1.0);
    cls_meter_done(&m, 10 * MB, 1.00e-3, 1.0 + 1.00e-3, 0);
    cls_meter_done(&m, 10 * MB, 1.01e-3, 1.0 + 1.01e-3, 0);
    cls_meter_done(&m, 10 * MB, 1.02e-3, 1.0 + 1.02e-3, 0);
    double v = cls_meter_rate(&m, m.t_last);
    assert_close(v, 30 * MB / 1.02e-3, 1e-9);
    assert_true(v < 40e9); /* the old count: 1000 GB/s */
    /* within a call one completion is not a rate yet (a first launch's
     * cost cannot be told from the speed); at the call's end it counts */
    cls_dev d;
    cls_devrun r;
    blank_run(&d, &r);
    cls_meter_take(&r.phase, 2.0);
    cls_meter_done(&r.phase, 8 * MB, 1e-3, 2.001, 0);
    assert_true(cls_meter_rate(&r.phase, r.phase.t_last) == 0);
    cls_meter_fold(&r);
    assert_close((double)r.rate_bytes / r.rate_secs, 8e9, 1e-9);
    /* none yet: no rate */
    cls_meter none = {0};
    cls_meter_take(&none, 3.0);
    assert_true(cls_meter_rate(&none, 3.5) == 0);
}

/* A first slice of 2 s (a compile) then three of 4 ms: 3 x 32 MB over the
 * 12 ms after the first completion, 8 GB/s; not 128 MB over 2.012 s. */
static void a_first_slice_far_longer_than_the_rest_is_left_out(void **state)
{
    (void)state;
    cls_meter m = {0};
    double t = 10.0;
    cls_meter_take(&m, t);
    cls_meter_done(&m, 32 * MB, 2.0, t + 2.0, 0);
    t += 2.0;
    for (int i = 0; i < 3; i++) {
        cls_meter_take(&m, t);
        cls_meter_done(&m, 32 * MB, 4e-3, t + 4e-3, 0);
        t += 4e-3;
    }
    assert_close(cls_meter_rate(&m, m.t_last), 96 * MB / 12e-3, 1e-9);
    /* a first slice only twice as long is the device's own pipeline fill */
    cls_meter f = {0};
    t = 20.0;
    cls_meter_take(&f, t);
    cls_meter_done(&f, 32 * MB, 8e-3, t + 8e-3, 0);
    t += 8e-3;
    cls_meter_take(&f, t);
    cls_meter_done(&f, 32 * MB, 4e-3, t + 4e-3, 0);
    assert_close(cls_meter_rate(&f, f.t_last), 64 * MB / 12e-3, 1e-9);
}

/* A slice that built a kernel: count from its completion; when it was the
 * last, no rate at all. */
static void a_slice_that_built_a_kernel_is_left_out(void **state)
{
    (void)state;
    cls_meter m = {0};
    cls_meter_take(&m, 1.0);
    cls_meter_done(&m, 32 * MB, 5e-3, 1.005, 0);
    cls_meter_take(&m, 1.005);
    cls_meter_done(&m, 32 * MB, 0.5, 1.505, 1); /* built: 0.5 s */
    assert_true(cls_meter_rate(&m, m.t_last) == 0);
    cls_meter_take(&m, 1.505);
    cls_meter_done(&m, 32 * MB, 4e-3, 1.509, 0);
    assert_close(cls_meter_rate(&m, m.t_last), 32 * MB / 4e-3, 1e-9);
    /* the call's rate leaves it out too; a call whose last slice built one
     * counts nothing */
    cls_dev d;
    cls_devrun r;
    blank_run(&d, &r);
    r.phase = m;
    cls_meter_fold(&r);
    assert_close((double)r.rate_bytes / r.rate_secs, 32 * MB / 4e-3, 1e-9);
    cls_meter_take(&r.phase, 2.0);
    cls_meter_done(&r.phase, 32 * MB, 0.5, 2.5, 1);
    cls_meter_fold(&r);
    assert_close((double)r.rate_bytes / r.rate_secs, 32 * MB / 4e-3, 1e-9);
}

/* The call's rate is the phases' counted bytes over their counted seconds,
 * kept for the kind of memory of the call. */
static void phases_fold_into_the_rate_of_the_memory_kind(void **state)
{
    (void)state;
    cls_dev d;
    cls_devrun r;
    blank_run(&d, &r);
    cls_meter_take(&r.phase, 1.0);
    cls_meter_done(&r.phase, 10 * MB, 1e-3, 1.001, 0);
    cls_meter_fold(&r);
    assert_int_equal(r.phase.done, 0); /* a fresh phase */
    cls_meter_take(&r.phase, 5.0);     /* seconds later: the gap is not counted */
    cls_meter_done(&r.phase, 30 * MB, 2e-3, 5.002, 0);
    cls_meter_fold(&r);
    assert_close((double)r.rate_bytes / r.rate_secs, 40 * MB / 3e-3, 1e-9);
    r.staged = 1;
    cls_run_set_rate(&r, 16e9);
    r.staged = 0;
    cls_run_set_rate(&r, 37e9);
    assert_true(d.rate[1] == 16e9 && d.rate[0] == 37e9);
    assert_true(cls_run_rate(&r) == 37e9);
    r.staged = 1;
    assert_true(cls_known_speed(&r) == 16e9);
    d.rate[1] = 0;
    d.prior = 3e9;
    assert_true(cls_known_speed(&r) == 3e9); /* unmeasured on this memory: the prior */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slices_done_together_count_from_the_first_take),
        cmocka_unit_test(a_first_slice_far_longer_than_the_rest_is_left_out),
        cmocka_unit_test(a_slice_that_built_a_kernel_is_left_out),
        cmocka_unit_test(phases_fold_into_the_rate_of_the_memory_kind),
    };
    return test_run("meter", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}
