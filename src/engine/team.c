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
 * with every device ("team") and with the lead device alone ("solo": the
 * device that moved the most bytes in the last team call, the others in
 * reserve), and runs each call the way that was faster (alone only when
 * more than 2% faster). The first call that can be compared runs as a
 * team; the next, alone; then the winner, trying the other way again
 * after `interval` calls, an interval that doubles each time the other way
 * loses again (up to MAX_INTERVAL) and starts over when the winner
 * changes, so a wrong choice, or a machine that changes (another process
 * on the GPU), is found again. When a team is twice as fast, the tries
 * cost under 1% of the time in the long run. A device in reserve takes no
 * slice and gets no thread unless the lead fails (run.c: failover).
 *
 * A lead that did less than 60% of a team call is not tried alone: it
 * would have to run 1.7 times faster without the others to win, and two
 * equal devices would pay a slow call at every try for nothing.
 *
 * A call's throughput is its bytes over its wall time, kept only for calls
 * that built no kernel, probed no device and lost no device: those carry
 * one-time costs. Each way's figure is the best of its last KEEP calls
 * (noise on a busy host only ever slows a call down).
 * Owns: the table of kinds (cls_context.team), the choice and the record. */
#include <string.h>

#include "job.h"

#define BASE_INTERVAL 4
#define MAX_INTERVAL 64
#define SOLO_MARGIN 1.02 /* helpers get the benefit of the doubt */
#define TRY_SHARE 0.6    /* the lead's share of a team call below which it is not tried alone */

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

void cls_team_choose(cls_job *job)
{
    cls_context *ctx = job->ctx;
    job->team = NULL;
    job->solo = -1;
    if (ctx->no_team) return;
    size_t alive = 0;
    for (size_t i = 0; i < job->nruns; i++) alive += job->runs[i].participates && !job->runs[i].failed;
    if (alive < 2) return;
    cls_team *t = find(ctx, kind_of(job));
    t->used = ++ctx->team_clock;
    job->team = t;
    int lead_ok = t->lead >= 0 && (size_t)t->lead < job->nruns && job->runs[t->lead].participates;
    /* a lead that did under TRY_SHARE of a team call would have to run
     * more than 1.02 / TRY_SHARE = 1.7 times faster alone than beside
     * the others to win: not worth a slow call to find out (two equal
     * devices would otherwise pay a try every few calls) */
    int worth_a_try = t->lead_share >= TRY_SHARE;
    int solo;
    job->trial = 0;
    if (t->nteam == 0 || !lead_ok) {
        solo = 0;
    } else if (t->nsolo == 0) {
        solo = worth_a_try;
    } else {
        int winner = solo_wins(best_of(t->solo, t->nsolo), best_of(t->team, t->nteam));
        if (t->since >= t->interval && (winner || worth_a_try)) {
            solo = !winner;
            job->trial = 1;
            t->since = 0;
        } else {
            solo = winner;
            t->since++;
        }
    }
    if (!solo) return;
    job->solo = t->lead;
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        if ((int)i == t->lead || !r->participates) continue;
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

void cls_team_record(cls_job *job, double wall)
{
    cls_team *t = job->team;
    if (!t || job->built || job->probed || job->called_in || !(wall > 0)) return;
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].failed) return;
    double bps = (double)job->bytes_total / wall;
    double before_solo = best_of(t->solo, t->nsolo), before_team = best_of(t->team, t->nteam);
    if (job->solo >= 0) {
        t->solo[t->nsolo++ % CLS_TEAM_KEEP] = bps;
    } else {
        int top = -1;
        uint64_t most = 0, all = 0;
        for (size_t i = 0; i < job->nruns; i++) {
            all += job->runs[i].bytes;
            if (job->runs[i].bytes > most) {
                most = job->runs[i].bytes;
                top = (int)i;
            }
        }
        if (top != t->lead) { /* another device leads now: its solo figures are to be taken */
            t->lead = top;
            t->nsolo = 0;
            memset(t->solo, 0, sizeof t->solo);
        }
        t->lead_share = all ? (double)most / (double)all : 0;
        t->team[t->nteam++ % CLS_TEAM_KEEP] = bps;
    }
    /* the winner changed (a try won, or the winner's own calls slowed
     * down): the machine may be changing, look again soon; a try that
     * lost: look again later */
    int now_solo = solo_wins(best_of(t->solo, t->nsolo), best_of(t->team, t->nteam));
    if (t->nsolo && before_solo > 0 && before_team > 0 && now_solo != solo_wins(before_solo, before_team)) {
        t->interval = BASE_INTERVAL;
        t->since = 0;
    } else if (job->trial) {
        t->interval = t->interval * 2 > MAX_INTERVAL ? MAX_INTERVAL : t->interval * 2;
    }
}
