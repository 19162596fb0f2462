/* Whether the other devices pay for themselves: whole calls compared.
 *
 * The scheduler (run.c) treats devices as independent: a device takes a
 * slice when it would finish it before the others finish everything. But
 * devices share the host: its memory (a GPU's DMA and a CPU device read
 * and write the same DRAM), its cores (a staging device's copy threads, a
 * PoCL basic device's thread) and the slice size (several devices cut the
 * work finer). A helper can then slow the lead device by more than it
 * adds. Seen on the H100 machine (seed-A): the 16-core CPU device alone
 * 16.4 ms, with the GPU 22.4 ms on pageable memory and 18.1 ms on pinned;
 * on the 2-core VM, a pthread device alone 66.5 ms, beside a staging basic
 * device on pinned memory 95.1 ms. No per-device rate shows it: each
 * device's rate is measured while the other slows it.
 *
 * So the context keeps, per kind of call, the throughput of recent calls
 * with every device ("team") and with each candidate device alone ("solo",
 * the others in reserve), and runs each call the way that was fastest
 * (alone only when more than 2% faster than the team). The first call
 * runs as a team; each candidate not tried yet runs the next call alone;
 * then the winner, trying the other ways in turns after `interval` calls,
 * an interval that doubles each time a try loses (up to MAX_INTERVAL) and
 * starts over when the winner changes, so a wrong choice, or a machine
 * that changes (another process on the GPU), is found again. When a team
 * is twice as fast, the tries cost under 1% of the time in the long run.
 * A device in reserve takes no slice and gets no thread unless the device
 * at work fails (run.c: failover).
 *
 * Candidates (candidate()): the device that did at least 60% of the last
 * team call (one that did less would have to run 1.7 times faster without
 * the others to win, and two equal devices would pay a slow call at every
 * try for nothing), and a zero-copy device beside a staging one, whatever
 * its share: there the team's rates cannot show that the CPU device alone
 * beats the team (H200 machine: it did 0-35% of team calls that took
 * 1.1-1.9x its own calls alone), and only calls alone can.
 *
 * A call's throughput is its bytes over its wall time (the release of its
 * device buffers included), kept only for calls that built no kernel,
 * probed no device and lost no device: those carry one-time costs. A team
 * call in which one device did everything (the helpers declined) counts
 * as that device's call alone. Each way's figure is the best of its last
 * KEEP calls (noise on a busy host only ever slows a call down).
 * Owns: the table of kinds (cls_context.team), the choice and the record. */
#include <string.h>

#include "job.h"

#define BASE_INTERVAL 4
#define MAX_INTERVAL 64
#define SOLO_MARGIN 1.02 /* helpers get the benefit of the doubt */
#define TRY_SHARE 0.6    /* a share of a team call below which a device is not tried alone (but see candidate()) */

/* Alone is the better way only when clearly faster: a team whose helpers
 * take little costs little, and it is where they can show that they have
 * become faster (a device re-probed, a busy moment over). */
static int solo_wins(double solo, double team) { return solo > team * SOLO_MARGIN; }

static unsigned log2_of(uint64_t v)
{
    unsigned n = 0;
    while (v > 1) {
        v >>= 1;
        n++;
    }
    return n;
}

static int staged_any(const cls_job *job)
{
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].participates && job->runs[i].staged) return 1;
    return 0;
}

/* Calls of one kind move alike: the same entry point and scaler, dtype,
 * pinned or not, and sizes within a factor of two (the data, a group). */
static uint64_t kind_of(const cls_job *job)
{
    uint64_t bytes = job->B * job->R * (uint64_t)job->C * job->es;
    uint64_t group = job->Rg * (uint64_t)job->C * job->es;
    unsigned entry = !job->y ? 1 : job->pcol || (job->scaler == 0) ? 2 : 3;
    uint64_t k = entry;
    k = k << 3 | (job->scaler & 7u);
    k = k << 1 | (job->f != NULL);
    k = k << 1 | (job->moments != 0);
    k = k << 1 | (job->dtype == CLS_F64);
    k = k << 1 | (unsigned)staged_any(job);
    k = k << 7 | log2_of(bytes);
    k = k << 7 | log2_of(group);
    return k + 1; /* 0: an unused entry */
}

static double best_of(const double *v, unsigned n)
{
    double b = 0;
    for (unsigned i = 0; i < n && i < CLS_TEAM_KEEP; i++)
        if (v[i] > b) b = v[i];
    return b;
}

static cls_team *find(cls_context *ctx, uint64_t key)
{
    cls_team *old = &ctx->team[0];
    for (size_t i = 0; i < CLS_TEAM_KINDS; i++) {
        cls_team *t = &ctx->team[i];
        if (t->key == key) return t;
        if (t->used < old->used) old = t;
    }
    memset(old, 0, sizeof *old);
    old->key = key;
    old->lead = -1;
    old->interval = BASE_INTERVAL;
    return old;
}

static const char reserve_note[] = "in reserve: recent calls like this one ran faster on another device alone";

static int usable(const cls_job *job, size_t d)
{
    return d < job->nruns && job->runs[d].participates && !job->runs[d].failed;
}

/* Whether device d may run a call of this kind alone: it did TRY_SHARE of
 * the last team call, or it is a zero-copy device beside a staging one
 * and not far slower than the fastest (CLS_PRIOR_MARGIN: a simulator is
 * never tried alone). The second case is the one whole calls exist for: a
 * GPU's DMA and the CPU device share the host's memory, each slows the
 * other, and in the team the CPU device can do little or nothing while
 * alone it is faster than the team (H200 machine, one bench run: seed-A on
 * pinned memory, the CPU device alone 15.3 ms, the team 17.8 ms with the
 * CPU device at 35%; the table 2.53 against 4.88 ms at 31%). */
static int candidate(const cls_job *job, const cls_team *t, size_t d)
{
    if (d >= CLS_TEAM_DEVS || !usable(job, d)) return 0;
    if (t->share[d] >= TRY_SHARE) return 1;
    const cls_devrun *r = &job->runs[d];
    if (!r->dev->zero_copy) return 0;
    int staging = 0;
    double fastest = 0;
    for (size_t i = 0; i < job->nruns; i++) {
        if (!usable(job, i)) continue;
        staging |= !job->runs[i].dev->zero_copy;
        double v = cls_known_speed(&job->runs[i]);
        if (v > fastest) fastest = v;
    }
    double mine = cls_known_speed(r);
    return staging && mine > 0 && mine * CLS_PRIOR_MARGIN >= fastest;
}

/* The candidate with the best calls alone, -1 when none has run alone. */
static int best_solo(const cls_job *job, const cls_team *t, double *bps)
{
    int best = -1;
    *bps = 0;
    for (size_t d = 0; d < CLS_TEAM_DEVS; d++) {
        if (!t->nsolo[d] || !candidate(job, t, d)) continue;
        double v = best_of(t->solo[d], t->nsolo[d]);
        if (v > *bps) {
            *bps = v;
            best = (int)d;
        }
    }
    return best;
}

/* The ways other than `winner` (-1: the team), in turns: returns the way
 * to try. */
static int next_other(const cls_job *job, cls_team *t, int winner)
{
    int ways[CLS_TEAM_DEVS + 1];
    unsigned n = 0;
    if (winner >= 0) ways[n++] = -1;
    for (size_t d = 0; d < CLS_TEAM_DEVS; d++)
        if ((int)d != winner && candidate(job, t, d)) ways[n++] = (int)d;
    if (n == 0) return winner;
    return ways[t->next_try++ % n];
}

/* The way the call runs: -1 (every device) or one device alone. */
static int choose(cls_job *job, cls_team *t)
{
    /* a team call first (one in which the helpers took nothing counts as
     * its lead's call alone) */
    int known = t->nteam > 0;
    for (size_t d = 0; d < CLS_TEAM_DEVS; d++) known |= t->nsolo[d] > 0;
    if (!known) return -1;
    for (size_t d = 0; d < CLS_TEAM_DEVS; d++)
        if (!t->nsolo[d] && candidate(job, t, d)) { /* a candidate not tried yet */
            job->trial = 1;
            return (int)d;
        }
    double solo_bps;
    int solo = best_solo(job, t, &solo_bps);
    int winner = solo >= 0 && solo_wins(solo_bps, best_of(t->team, t->nteam)) ? solo : -1;
    if (t->since >= t->interval) {
        int other = next_other(job, t, winner);
        if (other != winner) {
            job->trial = 1;
            t->since = 0;
            return other;
        }
    }
    t->since++;
    return winner;
}

void cls_team_choose(cls_job *job)
{
    cls_context *ctx = job->ctx;
    job->team = NULL;
    job->solo = -1;
    job->trial = 0;
    if (ctx->tune.no_team) return;
    size_t alive = 0;
    for (size_t i = 0; i < job->nruns; i++) alive += usable(job, i);
    if (alive < 2) return;
    cls_team *t = find(ctx, kind_of(job));
    t->used = ++ctx->team_clock;
    job->team = t;
    int solo = choose(job, t);
    if (solo < 0) return;
    job->solo = solo;
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        if ((int)i == solo || !r->participates) continue;
        r->reserve = 1;
        r->sat_out = reserve_note;
    }
}

void cls_team_call_in(cls_job *job)
{
    job->called_in = 1;
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        if (!r->reserve) continue;
        r->reserve = 0;
        r->sat_out = NULL;
    }
}

/* The way that wins now: -1 the team, else a device. */
static int winner_of(const cls_job *job, const cls_team *t)
{
    double solo_bps;
    int solo = best_solo(job, t, &solo_bps);
    return solo >= 0 && solo_wins(solo_bps, best_of(t->team, t->nteam)) ? solo : -1;
}

void cls_team_record(cls_job *job, double wall)
{
    cls_team *t = job->team;
    if (!t || job->built || job->probed || job->called_in || !(wall > 0)) return;
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].failed) return;
    double bps = (double)job->bytes_total / wall;
    int before = winner_of(job, t);
    int top = -1, working = 0;
    uint64_t most = 0, all = 0;
    for (size_t i = 0; i < job->nruns; i++) {
        all += job->runs[i].bytes;
        working += job->runs[i].bytes > 0;
        if (job->runs[i].bytes > most) {
            most = job->runs[i].bytes;
            top = (int)i;
        }
    }
    if (job->solo < 0) {
        for (size_t d = 0; d < CLS_TEAM_DEVS; d++)
            t->share[d] = d < job->nruns && all ? (double)job->runs[d].bytes / (double)all : 0;
        t->lead = top;
        t->lead_share = all ? (double)most / (double)all : 0;
    }
    /* a team call in which the helpers declined every slice ran as the one
     * device alone: its time is that device's, not the team's (counted as
     * the team's, such a call on the modelled bus, 44.6 ms, kept the team
     * the winner while the team calls that followed, the modelled GPU
     * taking slices, took 68-75 ms against 46 ms alone) */
    int solo = job->solo >= 0 ? job->solo : working == 1 ? top : -1;
    if (solo >= 0) {
        if (solo >= CLS_TEAM_DEVS) return;
        t->solo[solo][t->nsolo[solo]++ % CLS_TEAM_KEEP] = bps;
    } else {
        t->team[t->nteam++ % CLS_TEAM_KEEP] = bps;
    }
    /* the winner changed (a try won, or the winner's own calls slowed
     * down): the machine may be changing, look again soon; a try that
     * lost: look again later */
    int now = winner_of(job, t);
    if (now != before) {
        t->interval = BASE_INTERVAL;
        t->since = 0;
    } else if (job->trial) {
        t->interval = t->interval * 2 > MAX_INTERVAL ? MAX_INTERVAL : t->interval * 2;
    }
}
