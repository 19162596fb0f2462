/* How a call is cut into slices (src/plan.c), and whether a device not yet
 * measured takes one (src/run.c, cls_may_take), on devices made up in
 * memory: no OpenCL call is made. Small jobs of whole matrices are spread so that
 * each device that will take work gets a couple of slices; one zero-copy
 * device's worth of work is not cut (a second launch only costs); a device
 * far slower than another (a simulator beside a CPU) does not make the
 * slices smaller; every row of every matrix is in exactly one slice. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "engine/job.h"

#define MIB ((uint64_t)1 << 20)

typedef struct fake {
    cls_context ctx;
    cls_dev     dev[4];
    cls_devrun  run[4];
    cls_job     job;
} fake;

/* kind: 'z' a zero-copy CPU, 's' a staging (discrete) device; rate and
 * prior in bytes/s (0: unknown) */
typedef struct fake_dev { char kind; double rate, prior; } fake_dev;

/* A discount-like job of `b` matrices of r x c float64 (APPLY slices). */
static fake *make(const fake_dev *d, size_t n, uint64_t b, uint64_t r, size_t c)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) {
        cls_dev *v = &f->dev[i];
        v->index = i;
        v->zero_copy = d[i].kind == 'z';
        v->nq = 3;
        v->rate[0] = v->rate[1] = d[i].rate;
        v->prior = d[i].prior;
        v->info.max_alloc_bytes = 4096 * MIB;
        v->info.global_mem_bytes = 16384 * MIB;
        f->run[i].dev = v;
        f->run[i].job = &f->job;
        f->run[i].participates = 1;
    }
    cls_job *j = &f->job;
    j->ctx = &f->ctx;
    j->runs = f->run;
    j->nruns = n;
    j->B = b;
    j->R = r;
    j->C = c;
    j->es = sizeof(double);
    j->Rg = r;
    j->G = b;
    return f;
}

static void release(fake *f)
{
    free(f->job.sl);
    free(f->job.sstats);
    free(f);
}

/* Plans APPLY slices and checks that they cover every row once. */
static size_t plan(fake *f)
{
    cls_job *j = &f->job;
    assert_int_equal(cls_plan(j, CLS_OP_APPLY, cls_plan_slice_bytes(j)), CLS_OK);
    uint64_t next = 0;
    for (size_t i = 0; i < j->nsl; i++) {
        const cls_slice *s = &j->sl[i];
        assert_int_equal(s->col0, 0);
        assert_int_equal(s->ncols, j->C);
        assert_true(s->row0 == next);
        next += s->nrows;
    }
    assert_true(next == j->B * j->R);
    return j->nsl;
}

/* The slices of 25 matrices of 4000 x 5 float64 (4 MB, under one 8 MiB
 * slice) on devices d[0..n). */
static size_t small_job(const fake_dev *d, size_t n)
{
    fake *f = make(d, n, 25, 4000, 5);
    size_t k = plan(f);
    release(f);
    return k;
}

static void one_cpu_does_not_cut_a_small_job(void **state)
{
    (void)state;
    const fake_dev d[] = {{'z', 0, 0}};
    assert_int_equal(small_job(d, 1), 1);
}

static void one_staging_device_gets_two_slices_to_overlap(void **state)
{
    (void)state;
    const fake_dev d[] = {{'s', 0, 0}};
    assert_int_equal(small_job(d, 1), 2);
}

static void two_comparable_devices_get_two_slices_each(void **state)
{
    (void)state;
    const fake_dev d[] = {{'z', 10e9, 0}, {'z', 0, 8e9}};
    assert_int_equal(small_job(d, 2), 4);
    /* unknown speeds count as fast */
    const fake_dev u[] = {{'z', 0, 0}, {'z', 0, 0}};
    assert_int_equal(small_job(u, 2), 4);
}

static void a_far_slower_device_does_not_shrink_the_slices(void **state)
{
    (void)state;
    /* a CPU at 30 GB/s and a simulator at 6 MB/s: one device's worth */
    const fake_dev d[] = {{'z', 30e9, 0}, {'z', 0, 6e6}};
    assert_int_equal(small_job(d, 2), 1);
    /* the same simulator as a staging device (Oclgrind): it takes no
     * work, so the CPU keeps its one slice and its 32 MiB slices */
    const fake_dev s[] = {{'z', 30e9, 5e9}, {'s', 0, 6e6}};
    assert_int_equal(small_job(s, 2), 1);
    fake *f = make(s, 2, 100, 4000, 5);
    assert_int_equal(plan(f), 1);
    assert_int_equal(cls_plan_slice_bytes(&f->job), 32 * MIB);
    /* nor does its small memory cap them (Oclgrind: 128 MiB, whose share
     * per slot would be 12.8 MiB) */
    f->dev[1].info.global_mem_bytes = f->dev[1].info.max_alloc_bytes = 128 * MIB;
    assert_int_equal(cls_plan_slice_bytes(&f->job), 32 * MIB);
    /* a device of that memory whose speed is not known to be far below
     * does cap them: it may take any slice */
    f->dev[1].prior = 0;
    assert_true(cls_plan_slice_bytes(&f->job) <= 128 * MIB / 10);
    release(f);
}

static void large_jobs_are_cut_by_the_slice_size(void **state)
{
    (void)state;
    /* 100 matrices of 4000 x 5 float64 (16 MB) on two CPUs: 8 MiB slices at
     * most, so that they balance */
    fake_dev d2[] = {{'z', 0, 0}, {'z', 0, 0}};
    fake *f = make(d2, 2, 100, 4000, 5);
    size_t n = plan(f);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) assert_true(f->job.sl[i].nrows * 5 * sizeof(double) <= 8 * MIB);
    release(f);
    /* one CPU has nothing to balance: 32 MiB slices, so 16 MB is one slice
     * and 51 MB two */
    fake_dev d[] = {{'z', 0, 0}};
    f = make(d, 1, 100, 4000, 5);
    assert_int_equal(plan(f), 1);
    release(f);
    f = make(d, 1, 320, 4000, 5);
    n = plan(f);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) assert_true(f->job.sl[i].nrows * 5 * sizeof(double) <= 32 * MIB);
    release(f);
    /* odd counts: slices differ by one matrix at most */
    fake_dev three[] = {{'z', 0, 0}, {'z', 0, 0}, {'z', 0, 0}};
    f = make(three, 3, 7, 3, 5);
    n = plan(f);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++) assert_true(f->job.sl[i].nrows == (i == 0 ? 6u : 3u));
    release(f);
    fake_dev two[] = {{'z', 0, 0}, {'z', 0, 0}};
    f = make(two, 2, 25, 4000, 5);
    n = plan(f);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) assert_true(f->job.sl[i].nrows == (i == 0 ? 7u : 6u) * 4000);
    release(f);
}


/* A device not measured yet, deciding on its first slice of a 1.6 GB job
 * while the other has taken nothing yet. */
static int second_takes(const fake_dev *d, cls_decline *why)
{
    fake *f = make(d, 2, 10000, 4000, 5);
    plan(f);
    f->job.pending_bytes = 2 * f->job.B * f->job.R * f->job.C * f->job.es;
    int take = cls_may_take(&f->run[1], 2 * f->job.sl[0].nrows * f->job.C * f->job.es, 1.0, why);
    release(f);
    return take;
}

static int unmeasured_takes(const fake_dev *d) { return second_takes(d, NULL); }

static void a_prior_is_compared_with_the_others_priors(void **state)
{
    (void)state;
    /* identical CPUs: device 0 measured at 30 GB/s on whole slices, its
     * probe read 5 GB/s; device 1's probe, on a busy host, 2 GB/s: 15x
     * below the rate but within 8x of the other probe, so it takes part */
    const fake_dev busy[] = {{'z', 30e9, 5e9}, {'z', 0, 2e9}};
    assert_true(unmeasured_takes(busy));
    /* a simulator's probe, 800x below: it declines */
    const fake_dev sim[] = {{'z', 30e9, 5e9}, {'z', 0, 6e6}};
    assert_false(unmeasured_takes(sim));
    /* no prior to compare with: the rate is the reference */
    const fake_dev norate[] = {{'z', 30e9, 0}, {'z', 0, 2e9}};
    assert_false(unmeasured_takes(norate));
}

/* A rate far below an identical device's is forgotten (measured again);
 * within the margin, or beside a different device, it stays. */
static void a_rate_far_below_an_identical_device_is_forgotten(void **state)
{
    (void)state;
    const fake_dev d[] = {{'z', 1e9, 5e9}, {'z', 1e7, 5e9}, {'z', 2e8, 5e9}, {'z', 1e6, 5e9}};
    fake *f = make(d, 4, 1, 100, 10);
    const char *names[] = {"cpu-a", "cpu-a", "cpu-a", "gpu-b"};
    for (int i = 0; i < 4; i++) {
        f->dev[i].info.name = names[i];
        f->dev[i].info.platform = "p";
        f->dev[i].info.driver = "1";
        f->dev[i].info.compute_units = 2;
    }
    cls_run_forget(&f->job);
    assert_true(f->dev[0].rate[0] == 1e9);
    assert_true(f->dev[1].rate[0] == 0);   /* 100x below device 0, the same kind */
    assert_true(f->dev[2].rate[0] == 2e8); /* 5x: within the margin */
    assert_true(f->dev[3].rate[0] == 1e6); /* 1000x below, but another kind */
    assert_true(f->dev[1].prior == 5e9); /* its prior stays: compared with the others' */
    release(f);
}

/* A staging device working from pageable memory beside a zero-copy CPU:
 * device 1 (the GPU, 48 GB/s end to end) would finish its share sooner
 * than the CPU (113 GB/s) finishes everything, so the finish-time rule
 * alone gives it slices. Once its copy threads have shown M bytes/s of
 * host memory traffic, it stays out while the CPU moves M / 2 or more
 * (each of its bytes costs the host three), and takes part below that,
 * or when the caller's memory is pinned (no copies). */
static int gpu_takes_why(double cpu_rate, double host_copy_bw, int staged, cls_decline *why)
{
    const fake_dev d[] = {{'z', cpu_rate, 0}, {'s', 48e9, 0}};
    fake *f = make(d, 2, 10000, 4000, 5);
    plan(f);
    f->job.pending_bytes = 2 * f->job.B * f->job.R * f->job.C * f->job.es;
    f->job.host_copy_bw = host_copy_bw;
    f->run[1].staged = staged;
    int take = cls_may_take(&f->run[1], 2 * f->job.sl[0].nrows * f->job.C * f->job.es, 1.0, why);
    release(f);
    return take;
}

static int gpu_takes(double cpu_rate, double host_copy_bw, int staged)
{
    return gpu_takes_why(cpu_rate, host_copy_bw, staged, NULL);
}

static void a_staging_device_stays_out_while_host_memory_binds(void **state)
{
    (void)state;
    assert_true(gpu_takes(113e9, 0, 1));      /* no copy timed yet */
    assert_false(gpu_takes(113e9, 134e9, 1)); /* the H100 host: the CPU moves 84% of M */
    assert_false(gpu_takes(67e9, 134e9, 1));  /* exactly half */
    assert_true(gpu_takes(20e9, 134e9, 1));   /* a CPU device of a few cores */
    assert_true(gpu_takes(113e9, 134e9, 0));  /* pinned caller memory: DMA only */
}

/* A decline says which rule kept the device out and the figures it
 * compared (the report's sat_out for a device that took no slice); a slice
 * taken leaves `why` alone. */
static void a_decline_says_why(void **state)
{
    (void)state;
    cls_decline why = {.why = CLS_DECLINE_NONE};
    const fake_dev sim[] = {{'z', 30e9, 5e9}, {'z', 0, 6e6}};
    assert_false(second_takes(sim, &why));
    assert_int_equal(why.why, CLS_DECLINE_PRIOR);
    assert_true(why.mine == 6e6 && why.other == 5e9);
    assert_int_equal(why.other_dev, 0);
    assert_true(why.other_probed);

    why = (cls_decline){.why = CLS_DECLINE_NONE};
    const fake_dev slow[] = {{'z', 30e9, 0}, {'z', 1e8, 0}}; /* measured, 300x slower */
    assert_false(second_takes(slow, &why));
    assert_int_equal(why.why, CLS_DECLINE_SLOWER);
    assert_true(why.mine == 1e8 && why.other == 30e9);
    assert_true(why.t_me > why.t_all && why.t_all > 0);

    why = (cls_decline){.why = CLS_DECLINE_NONE};
    assert_false(gpu_takes_why(113e9, 134e9, 1, &why));
    assert_int_equal(why.why, CLS_DECLINE_HOST_BOUND);
    assert_true(why.mine == 134e9 && why.other == 113e9);

    why = (cls_decline){.why = CLS_DECLINE_NONE};
    const fake_dev alike[] = {{'z', 30e9, 0}, {'z', 25e9, 0}};
    assert_true(second_takes(alike, &why));
    assert_int_equal(why.why, CLS_DECLINE_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_cpu_does_not_cut_a_small_job),
        cmocka_unit_test(one_staging_device_gets_two_slices_to_overlap),
        cmocka_unit_test(two_comparable_devices_get_two_slices_each),
        cmocka_unit_test(a_far_slower_device_does_not_shrink_the_slices),
        cmocka_unit_test(large_jobs_are_cut_by_the_slice_size),
        cmocka_unit_test(a_prior_is_compared_with_the_others_priors),
        cmocka_unit_test(a_rate_far_below_an_identical_device_is_forgotten),
        cmocka_unit_test(a_staging_device_stays_out_while_host_memory_binds),
        cmocka_unit_test(a_decline_says_why),
    };
    return TEST_RUN("plan", tests, NULL, NULL);
}
