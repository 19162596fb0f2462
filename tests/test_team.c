/* Whether a call runs on every device or on its lead device alone
 * (src/team.c): the context compares whole calls of one kind, since devices
 * that share the host's memory and cores can slow each other by more than
 * a helper adds, which no per-device rate shows.
 *
 * On jobs made up in memory (no OpenCL call; every suite, alone in noicd): the choice after
 * calls of given throughputs, the tries of the losing way at a growing
 * interval, the 2% margin that favours the team, no try alone for a lead
 * that did under 60% of a team call, calls with one-time costs
 * left out, kinds kept apart, a reserve that shapes no slice and takes none
 * until it is called in, and beside a staging GPU at GPU/CPU speed ratios
 * of 0.1 to 10, the fastest of the ways compared runs the calls (the
 * scheduler's side of test_bus's model, on given call times). On the suite's devices (pocl, basic, all): the call
 * that tries the lead alone is right and names the devices in reserve; and
 * (pocl) when the lead fails in such a call, a device in reserve finishes
 * it. The scheduler reads given speeds there (sched_given.h), the first
 * PoCL device 1000 times faster than the others, so that it does every
 * slice of a team call and is tried alone whatever the host's load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_ctl.h"
#include "engine/job.h"
#include "pipeline_util.h"
#include "sched_given.h"

#define MIB ((uint64_t)1 << 20)

/* ---- made-up jobs ---- */

typedef struct fake {
    cls_context ctx;
    cls_dev     dev[3];
    cls_devrun  run[3];
    cls_job     job;
} fake;

/* A context of n zero-copy devices (device 2, when there, staging). */
static fake *make(size_t n)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) {
        cls_dev *v = &f->dev[i];
        v->index = i;
        v->zero_copy = i < 2;
        v->nq = 3;
        v->rate[0] = v->rate[1] = 10e9;
        v->info.max_alloc_bytes = 4096 * MIB;
        v->info.global_mem_bytes = 16384 * MIB;
    }
    f->job.nruns = n;
    return f;
}

/* Resets the job for a new call of 18 x 60 x 98450 doubles (seed-A's
 * shape, a fit_transform), `dtype` F64 unless told. */
static cls_job *new_call(fake *f, cls_dtype dtype, uint64_t batch)
{
    size_t n = f->job.nruns;
    free(f->job.sl);
    free(f->job.sstats);
    memset(&f->job, 0, sizeof f->job);
    memset(f->run, 0, sizeof f->run);
    cls_job *j = &f->job;
    j->ctx = &f->ctx;
    j->runs = f->run;
    j->nruns = n;
    j->dtype = dtype;
    j->es = dtype == CLS_F64 ? 8 : 4;
    j->B = batch;
    j->R = 60;
    j->C = 98450;
    j->Rg = 60;
    j->G = batch;
    j->y = (char *)f; /* out of place: any non-NULL pointer */
    j->scaler = 1;
    j->bytes_total = 2 * batch * 60 * 98450 * j->es;
    for (size_t i = 0; i < n; i++) {
        f->run[i].dev = &f->dev[i];
        f->run[i].job = j;
        f->run[i].participates = 1;
    }
    cls_team_choose(j);
    return j;
}

/* Ends the call as if it took `seconds`, the work split by `share0` (the
 * rest on device 1) in a team call, all of it on the lead when alone. */
static void end_call(fake *f, double seconds, double share0)
{
    cls_job *j = &f->job;
    if (j->solo >= 0) {
        f->run[j->solo].bytes = j->bytes_total;
    } else {
        f->run[0].bytes = (uint64_t)((double)j->bytes_total * share0);
        f->run[1].bytes = j->bytes_total - f->run[0].bytes;
    }
    cls_team_record(j, seconds);
}

static void release(fake *f)
{
    free(f->job.sl);
    free(f->job.sstats);
    free(f);
}

/* Runs `calls` calls whose team takes `team_s` and whose lead alone takes
 * `solo_s`; returns how many ran alone, and the longest run of calls the
 * losing way was not tried in. */
static size_t simulate(fake *f, size_t calls, double team_s, double solo_s, size_t *longest_gap)
{
    size_t solo = 0, gap = 0, longest = 0;
    int team_wins = team_s * 1.02 <= solo_s;
    for (size_t c = 0; c < calls; c++) {
        cls_job *j = new_call(f, CLS_F64, 18);
        int alone = j->solo >= 0;
        solo += alone;
        if (alone == team_wins) {
            if (gap > longest) longest = gap;
            gap = 0;
        } else {
            gap++;
        }
        end_call(f, alone ? solo_s : team_s, 0.7);
    }
    if (longest_gap) *longest_gap = longest;
    return solo;
}

static void a_team_slower_than_its_lead_alone_hands_the_calls_to_the_lead(void **state)
{
    (void)state;
    fake *f = make(2);
    /* the first comparable call runs as a team, the next one alone on the
     * device that did most of the first */
    cls_job *j = new_call(f, CLS_F64, 18);
    assert_int_equal(j->solo, -1);
    end_call(f, 0.0224, 0.3); /* device 1 did 70% */
    j = new_call(f, CLS_F64, 18);
    assert_int_equal(j->solo, 1);
    assert_true(f->run[0].reserve);
    assert_false(f->run[1].reserve);
    assert_non_null(strstr(f->run[0].sat_out, "in reserve"));
    assert_null(f->run[1].sat_out);
    assert_false(cls_may_take(&f->run[0], MIB, 1.0, NULL)); /* a reserve takes nothing */
    end_call(f, 0.0164, 0);
    /* from then on alone, the team tried again ever more rarely */
    size_t gap = 0;
    size_t solo = simulate(f, 400, 0.0224, 0.0164, &gap);
    print_message("# team slower: %zu of 400 calls alone, the team not tried for %zu calls at most\n", solo, gap);
    assert_true(solo >= 400 - 12); /* 5 tries while the interval grows, then one per 65 calls */
    assert_true(gap >= 32 && gap <= 64);
    release(f);
}

static void a_team_faster_than_its_lead_alone_keeps_every_device(void **state)
{
    (void)state;
    fake *f = make(2);
    size_t gap = 0;
    size_t solo = simulate(f, 400, 0.010, 0.020, &gap);
    print_message("# team faster: %zu of 400 calls alone, at most %zu calls between tries\n", solo, gap);
    assert_true(solo >= 1 && solo <= 12); /* the first try, then ever more rarely */
    assert_true(gap >= 32 && gap <= 64);
    release(f);
}

static void a_team_within_two_percent_of_the_lead_alone_stays_a_team(void **state)
{
    (void)state;
    fake *f = make(2);
    size_t solo = simulate(f, 200, 0.01015, 0.0100, NULL); /* alone 1.5% faster */
    assert_true(solo <= 8);
    release(f);
    f = make(2);
    solo = simulate(f, 200, 0.0103, 0.0100, NULL); /* alone 3% faster */
    assert_true(solo >= 200 - 8);
    release(f);
}

/* A lead that did under 60% of a team call is not tried alone: two equal
 * devices pay no slow call for nothing. One that did more is. */
static void an_even_team_is_not_tried_alone(void **state)
{
    (void)state;
    fake *f = make(2);
    for (int c = 0; c < 200; c++) {
        assert_int_equal(new_call(f, CLS_F64, 18)->solo, -1);
        end_call(f, 0.010, 0.52);
    }
    /* the other device slows down (another process on it): the lead now
     * does 80%, and is tried alone in the next call */
    new_call(f, CLS_F64, 18);
    end_call(f, 0.012, 0.8);
    assert_int_equal(new_call(f, CLS_F64, 18)->solo, 0);
    end_call(f, 0.009, 0);
    release(f);
}

/* A team that was faster becomes slower (another process took the GPU):
 * the lead alone takes over within one try's interval, and back. */
static void a_change_of_the_machine_is_found_again(void **state)
{
    (void)state;
    fake *f = make(2);
    simulate(f, 300, 0.010, 0.020, NULL);
    size_t solo = simulate(f, 80, 0.040, 0.020, NULL);
    print_message("# the team became slower: %zu of the next 80 calls alone\n", solo);
    assert_true(solo >= 80 - 12); /* its team figures age out in 4 calls */
    solo = simulate(f, 80, 0.010, 0.020, NULL);
    print_message("# and faster again: %zu of the next 80 calls alone\n", solo);
    assert_true(solo <= 64 + 4);
    release(f);
}

static void calls_with_one_time_costs_are_not_kept(void **state)
{
    (void)state;
    fake *f = make(2);
    for (int cost = 0; cost < 5; cost++) {
        cls_job *j = new_call(f, CLS_F64, 18);
        assert_int_equal(j->solo, -1); /* nothing kept yet: a team */
        j->built = cost == 0;
        j->probed = cost == 1;
        f->run[1].failed = cost == 2;
        j->called_in = cost == 3;
        if (cost == 4) {
            end_call(f, 0, 0.7); /* no time measured */
            continue;
        }
        end_call(f, 0.01, 0.7);
    }
    cls_job *j = new_call(f, CLS_F64, 18);
    assert_int_equal(j->solo, -1);
    end_call(f, 0.01, 0.7);
    assert_int_equal(new_call(f, CLS_F64, 18)->solo, 0); /* kept: now the lead alone is tried */
    release(f);
}

static void kinds_are_kept_apart(void **state)
{
    (void)state;
    fake *f = make(2);
    new_call(f, CLS_F64, 18);
    end_call(f, 0.01, 0.7);
    assert_int_equal(new_call(f, CLS_F32, 18)->solo, -1); /* float32: a kind of its own */
    end_call(f, 0.01, 0.7);
    assert_int_equal(new_call(f, CLS_F64, 2)->solo, -1); /* 9x smaller */
    end_call(f, 0.01, 0.7);
    assert_int_equal(new_call(f, CLS_F64, 18)->solo, 0); /* the first kind's try */
    end_call(f, 0.01, 0);
    /* more kinds than the table holds: the least recently used goes */
    for (uint64_t b = 1; b <= CLS_TEAM_KINDS; b++) {
        new_call(f, CLS_F64, (uint64_t)1 << (b + 5));
        end_call(f, 0.01, 0.7);
    }
    assert_int_equal(new_call(f, CLS_F64, 18)->solo, -1); /* forgotten: a team first */
    end_call(f, 0.01, 0.7);
    release(f);
}

static void the_lead_is_the_device_that_did_most(void **state)
{
    (void)state;
    fake *f = make(2);
    new_call(f, CLS_F64, 18);
    end_call(f, 0.02, 0.8);
    assert_int_equal(new_call(f, CLS_F64, 18)->solo, 0);
    end_call(f, 0.01, 0);
    /* alone wins; the team is tried again after 4 calls, and there device 1
     * does most: its own figures alone are taken next */
    for (int c = 0; c < 4; c++) {
        assert_int_equal(new_call(f, CLS_F64, 18)->solo, 0);
        end_call(f, 0.01, 0);
    }
    assert_int_equal(new_call(f, CLS_F64, 18)->solo, -1);
    end_call(f, 0.02, 0.2);
    assert_int_equal(new_call(f, CLS_F64, 18)->solo, 1);
    end_call(f, 0.03, 0);
    release(f);
}

/* A CPU device (zero-copy) beside a GPU (staging) that does most of the
 * team calls: the CPU device is tried alone all the same, and runs the
 * calls when it is faster alone (the H200 machine's seed-A on pinned
 * memory, one bench run: CPU alone 15.3 ms, GPU alone 18.2, the team 17.8
 * with the CPU device at 35%). A zero-copy simulator 800x slower than the
 * GPU is never tried alone. */
static void a_cpu_device_beside_a_gpu_is_tried_alone_whatever_its_share(void **state)
{
    (void)state;
    fake *f = make(2);
    f->dev[1].zero_copy = 0;
    size_t on[3] = {0, 0, 0}; /* team, CPU alone, GPU alone */
    for (int c = 0; c < 100; c++) {
        cls_job *j = new_call(f, CLS_F64, 18);
        double t = j->solo == 0 ? 0.0153 : j->solo == 1 ? 0.0182 : 0.0178;
        on[j->solo + 1]++;
        end_call(f, t, 0.35);
    }
    print_message("# 100 calls: %zu as a team, %zu on the CPU device alone, %zu on the GPU alone\n", on[0], on[1],
                  on[2]);
    assert_true(on[1] >= 85);
    assert_true(on[2] >= 1); /* it did 65% of a team call: tried too */
    release(f);

    f = make(2);
    f->dev[1].zero_copy = 0;
    f->dev[0].rate[0] = f->dev[0].rate[1] = 10e9 / 800; /* a simulator */
    for (int c = 0; c < 50; c++) {
        cls_job *j = new_call(f, CLS_F64, 18);
        assert_int_not_equal(j->solo, 0);
        end_call(f, j->solo == 1 ? 0.010 : 0.011, 0.01);
    }
    release(f);
}

/* test_bus's modelled GPU, on whole calls: a CPU device (zero-copy) beside
 * a staging GPU, each call's time given by the way it runs (the CPU device
 * alone, the GPU alone, both), the work of a team call shared by speed.
 * Over GPU/CPU ratios of 0.1 to 10 (the bus model's workloads, pageable and
 * pinned, a CPU device at full speed or slowed, span about 0.2 to 10) and a
 * team at the ideal 1 / (1/cpu + 1/gpu), that with a 30% cost, or slower
 * than both (the two slowing each other on the host's memory): once the
 * tries have settled (calls 200 to 400), all but 8 calls run the fastest
 * way among those the context compares, the calls alone only when 2%
 * faster than the team.
 *
 * As the code is (team.c, candidate()): the GPU alone is compared only
 * when it did 60% of a team call, here when it is 1.5x faster than the CPU
 * device. Between 1x and 1.5x, with a team slower than both, the calls run
 * on the CPU device alone although the GPU alone is faster (at 1.25x: 1.25
 * times the better device alone). And a try of a way far slower than the
 * winner costs that call: about one call in 64 once settled, so a way 12x
 * slower than the winner adds about 15% to the average of the calls. */
typedef struct way_count { size_t on[3], settled[3]; } way_count;

static double mean_call(double t_cpu, double t_gpu, double t_team, way_count *w)
{
    fake *f = make(2);
    f->dev[1].zero_copy = 0;
    double share0 = t_gpu / (t_cpu + t_gpu), sum = 0;
    memset(w, 0, sizeof *w);
    for (int c = 0; c < 400; c++) {
        cls_job *j = new_call(f, CLS_F64, 18);
        double t = j->solo == 0 ? t_cpu : j->solo == 1 ? t_gpu : t_team;
        w->on[j->solo + 1]++;
        if (c >= 200) w->settled[j->solo + 1]++;
        sum += t;
        end_call(f, t, share0);
    }
    release(f);
    return sum / 400;
}

static void the_fastest_compared_way_runs_the_calls_beside_a_modelled_gpu(void **state)
{
    (void)state;
    static const double gpu_over_cpu[] = {0.1, 0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0, 10.0};
    static const double team_cost[] = {1.0, 1.3, 0}; /* 0: 1.2x the slower device alone */
    size_t bad = 0;
    for (size_t g = 0; g < sizeof gpu_over_cpu / sizeof *gpu_over_cpu; g++)
        for (size_t k = 0; k < sizeof team_cost / sizeof *team_cost; k++) {
            double t_cpu = 0.010, t_gpu = t_cpu * gpu_over_cpu[g];
            double ideal = 1.0 / (1.0 / t_cpu + 1.0 / t_gpu);
            double t_team = team_cost[k] > 0 ? ideal * team_cost[k] : 1.2 * fmax(t_cpu, t_gpu);
            /* the ways compared: the team, the CPU device alone, and the
             * GPU alone when it did 60% of a team call */
            int gpu_compared = t_cpu / (t_cpu + t_gpu) >= 0.6;
            double solo = gpu_compared ? fmin(t_cpu, t_gpu) : t_cpu;
            int want = solo * 1.02 < t_team ? (gpu_compared && t_gpu < t_cpu ? 2 : 1) : 0; /* team, cpu, gpu */
            way_count w;
            double mean = mean_call(t_cpu, t_gpu, t_team, &w);
            double best = fmin(fmin(t_cpu, t_gpu), t_team);
            int ok = w.settled[want] >= 200 - 8;
            print_message("# gpu/cpu %.2f, team %.2f of the better alone: calls team %zu, cpu %zu, gpu %zu (settled: "
                          "%zu, %zu, %zu), mean %.3f of the fastest way%s\n",
                          gpu_over_cpu[g], t_team / fmin(t_cpu, t_gpu), w.on[0], w.on[1], w.on[2], w.settled[0],
                          w.settled[1], w.settled[2], mean / best, ok ? "" : "  <- not the fastest compared way");
            bad += !ok;
        }
    assert_int_equal(bad, 0);
}

static void one_device_or_cls_team_0_has_nothing_to_choose(void **state)
{
    (void)state;
    fake *f = make(2);
    /* one participant (the other has no float64, say): nothing to compare */
    f->job.ctx = &f->ctx;
    f->job.runs = f->run;
    for (size_t i = 0; i < 2; i++) {
        f->run[i].dev = &f->dev[i];
        f->run[i].job = &f->job;
    }
    f->run[0].participates = 1;
    cls_team_choose(&f->job);
    assert_null(f->job.team);
    assert_int_equal(f->job.solo, -1);
    assert_false(f->run[1].reserve);
    release(f);

    f = make(2);
    f->ctx.tune.no_team = 1;
    for (int c = 0; c < 5; c++) {
        cls_job *j = new_call(f, CLS_F64, 18);
        assert_null(j->team);
        assert_int_equal(j->solo, -1);
        end_call(f, 0.05, 0.9);
    }
    release(f);
}

/* A device in reserve (a staging device beside a CPU) neither cuts the
 * slices finer nor takes one, until the lead fails and it is called in. */
static void a_reserve_shapes_no_slice_and_takes_none_until_called_in(void **state)
{
    (void)state;
    fake *f = make(3);
    cls_job *j = new_call(f, CLS_F64, 18);
    assert_int_equal(j->solo, -1);
    f->run[0].bytes = j->bytes_total - MIB;
    f->run[1].bytes = MIB;
    cls_team_record(j, 0.02);
    j = new_call(f, CLS_F64, 18);
    assert_int_equal(j->solo, 0);
    assert_true(f->run[1].reserve && f->run[2].reserve);
    /* one zero-copy device's worth of work: 32 MiB slices, as alone */
    assert_int_equal(cls_plan_slice_bytes(j), 32 * MIB);
    assert_int_equal(cls_plan(j, CLS_OP_FUSED, cls_plan_slice_bytes(j)), CLS_OK);
    j->pending_bytes = j->bytes_total;
    uint64_t b = 2 * j->sl[0].nrows * j->sl[0].ncols * j->es;
    assert_false(cls_may_take(&f->run[1], b, 1.0, NULL));
    assert_false(cls_may_take(&f->run[2], b, 1.0, NULL));
    assert_true(cls_may_take(&f->run[0], b, 1.0, NULL));
    /* the lead fails: the reserves take part, and the call is not kept */
    f->run[0].failed = 1;
    cls_team_call_in(j);
    for (int i = 1; i < 3; i++) {
        assert_false(f->run[i].reserve);
        assert_null(f->run[i].sat_out);
    }
    assert_true(cls_may_take(&f->run[1], b, 1.0, NULL) || cls_may_take(&f->run[2], b, 1.0, NULL));
    unsigned kept = j->team->nsolo[0];
    f->run[0].failed = 0; /* only called_in keeps it out now */
    cls_team_record(j, 0.01);
    assert_int_equal(j->team->nsolo[0], kept);
    release(f);
}

/* A team call in which the helpers declined every slice ran as its lead
 * alone, and counts as such: on the modelled bus (docs/DISCRETE.md) one
 * such call of 44.6 ms, counted as the team's, kept the team the winner
 * while the team calls that followed, the modelled GPU taking slices, took
 * 68-75 ms against 46 ms alone. */
static void a_team_call_whose_helpers_took_nothing_counts_alone(void **state)
{
    (void)state;
    fake *f = make(2);
    cls_job *j = new_call(f, CLS_F64, 18);
    assert_int_equal(j->solo, -1);
    end_call(f, 0.0446, 1.0); /* device 1 declined everything */
    assert_int_equal(j->team->nteam, 0);
    assert_int_equal(j->team->nsolo[0], 1);
    /* then the lead alone takes 46 ms, a team that really is one 70 ms */
    size_t team_calls = 0;
    for (int c = 0; c < 12; c++) {
        j = new_call(f, CLS_F64, 18);
        team_calls += j->solo < 0;
        end_call(f, j->solo < 0 ? 0.070 : 0.046, 0.8);
    }
    /* the tries of the team only: at calls 5 and 13 (interval 4, then 8) */
    if (team_calls > 2) fail_msg("%zu of 12 calls ran as the slower team", team_calls);
    release(f);
}

/* ---- on the suite's devices ---- */

/* Calls of one kind until one runs alone (the call after the first that
 * could be compared), each checked against the reference; returns the
 * lead's index, and fails the test when no call ran alone in 12. */
static size_t until_alone(cls_context *ctx, const cls_array *x, const cls_pipeline *p)
{
    for (int c = 0; c < 12; c++) {
        char label[64];
        snprintf(label, sizeof label, "call %d", c + 1);
        cls_stats_destroy(check_fit_transform(ctx, x, p, label));
        cls_report rep;
        assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
        size_t working = 0, reserve = 0, lead = 0;
        for (size_t i = 0; i < rep.ndevices; i++) {
            if (rep.devices[i].slices) {
                working++;
                lead = i;
            }
            if (rep.devices[i].sat_out && strstr(rep.devices[i].sat_out, "in reserve")) {
                assert_int_equal(rep.devices[i].slices, 0);
                reserve++;
            }
        }
        if (reserve) {
            print_message("# %s ran on device %zu alone, %zu in reserve\n", label, lead, reserve);
            assert_int_equal(working, 1);
            return lead;
        }
    }
    fail_msg("no call ran on its lead device alone in 12 calls");
    return 0;
}

/* A context on the suite's devices whose scheduler reads given speeds
 * (sched_given.h): the first PoCL device 1000 times faster than every
 * other, so that it does every slice of a team call and is tried alone
 * whatever the host's load; two equal devices never are
 * (an_even_team_is_not_tried_alone). A probe counts a second on the given
 * clock, so that no device is probed again in the calls here (a call that
 * probes is not kept). The index of the fast device in *lead. */
static cls_context *one_fast_device(size_t *lead)
{
    given_reset(1e-3, 1.0, 10e9 / 1000);
    cls_context *ctx = given_context(NULL, NULL, 0, 65536);
    size_t n = cls_device_count(ctx);
    assert_true(n >= 2 && n <= GIVEN_DEVS);
    for (*lead = 0; *lead < n; ++*lead) {
        cls_device_info info;
        assert_int_equal(cls_device_get(ctx, *lead, &info), CLS_OK);
        if (strstr(info.platform, "Portable Computing Language")) break;
    }
    assert_true(*lead < n);
    given_speed(*lead, 10e9);
    return ctx;
}

static void a_call_on_the_lead_alone_is_right_and_names_the_reserves(void **state)
{
    (void)state;
    size_t fast;
    cls_context *ctx = one_fast_device(&fast);
    cls_dtype t = suite_runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = ref_make(CLS_F32, 24, 300, 37, 41, REF_MISSING | REF_CONSTANT | REF_NEGATIVE);
    if (t == CLS_F64) {
        ref_free(&x);
        x = ref_make(CLS_F64, 24, 300, 37, 41, REF_MISSING | REF_CONSTANT | REF_NEGATIVE);
    }
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    assert_int_equal(until_alone(ctx, &x, &p), fast);
    ref_free(&x);
    cls_context_destroy(ctx);
}

/* Suite pocl: the call that runs on the lead alone loses the lead after
 * its first slice; a device in reserve finishes it, and the result is
 * right. The fault layer names devices by their order among the pthread
 * devices, which is the library's. */
static void the_reserve_finishes_a_call_whose_lead_fails(void **state)
{
    (void)state;
    assert_int_equal(find_layer(), 0);
    size_t fast;
    cls_context *ctx = one_fast_device(&fast);
    assert_int_equal(cls_device_count(ctx), 2);
    assert_int_equal(fast, 0);
    cls_array x = ref_make(CLS_F32, 64, 500, 64, 43, REF_MISSING | REF_NEGATIVE);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    size_t lead = until_alone(ctx, &x, &p);
    assert_int_equal(lead, 0); /* device 1 is the slow one */
    /* the next call runs alone too: the lead alone wins (src/team.c) and
     * no try of the team is due yet */
    const cls_team *kind = NULL;
    for (size_t i = 0; i < CLS_TEAM_KINDS; i++)
        if (ctx->team[i].key && ctx->team[i].used == ctx->team_clock) kind = &ctx->team[i];
    assert_non_null(kind);
    assert_true(kind->nsolo[lead] > 0 && kind->nteam == 0 && kind->since < kind->interval);
    int rule = fault.add(FAULT_KERNEL, "pthread", (int)lead, NULL, 1, -1, 0);
    assert_true(rule >= 0);
    cls_stats_destroy(check_fit_transform(ctx, &x, &p, "the lead fails"));
    assert_true(fault.injected(rule) >= 1);
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    print_message("# lead %zu failed after %zu slices, device 1 did %zu\n", lead, rep.devices[lead].slices,
                  rep.devices[1].slices);
    assert_non_null(rep.devices[lead].failed);
    assert_null(rep.devices[1].sat_out);
    assert_true(rep.devices[1].slices > 0);
    assert_int_equal(rep.slices_done, rep.slices);
    fault.clear();
    ref_free(&x);
    cls_context_destroy(ctx);
}

int main(void)
{
    /* before the first OpenCL call: the ICD loader reads it once */
    const char *layer = getenv("CLS_FAULT_LAYER");
    if (layer && !test_suite_is("noicd")) setenv("OPENCL_LAYERS", layer, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_team_slower_than_its_lead_alone_hands_the_calls_to_the_lead),
        cmocka_unit_test(a_team_faster_than_its_lead_alone_keeps_every_device),
        cmocka_unit_test(a_team_within_two_percent_of_the_lead_alone_stays_a_team),
        cmocka_unit_test(an_even_team_is_not_tried_alone),
        cmocka_unit_test(a_cpu_device_beside_a_gpu_is_tried_alone_whatever_its_share),
        cmocka_unit_test(the_fastest_compared_way_runs_the_calls_beside_a_modelled_gpu),
        cmocka_unit_test(a_change_of_the_machine_is_found_again),
        cmocka_unit_test(calls_with_one_time_costs_are_not_kept),
        cmocka_unit_test(kinds_are_kept_apart),
        cmocka_unit_test(the_lead_is_the_device_that_did_most),
        cmocka_unit_test(one_device_or_cls_team_0_has_nothing_to_choose),
        cmocka_unit_test(a_reserve_shapes_no_slice_and_takes_none_until_called_in),
        cmocka_unit_test(a_team_call_whose_helpers_took_nothing_counts_alone),
        cmocka_unit_test(a_call_on_the_lead_alone_is_right_and_names_the_reserves),
        cmocka_unit_test(the_reserve_finishes_a_call_whose_lead_fails),
    };
    /* made-up jobs everywhere (all but the last two); the suite's devices
     * where it has several; the fault layer on the two pthread devices */
    size_t all = sizeof tests / sizeof *tests;
    size_t n = test_suite_is("noicd") ? all - 2 : test_suite_is("pocl") ? all : all - 1;
    return test_run("team", tests, n, NULL, NULL);
}
