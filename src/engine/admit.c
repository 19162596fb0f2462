/* Which device takes a slice, and what a device is known by: its rate in
 * this phase or in earlier calls, its prior, whether the host's memory
 * bounds it, and the rule cls_may_take() applies (job.h); forgetting rates
 * measured over a compile, and the speed priors (cls_run_forget,
 * cls_run_priors). Called by run.c's workers and pipeline.c's planning. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

/* The scheduler's inputs, from the tests' source where one is given
 * (testing.h, cls_sched_source), else measured. */
double cls_sched_now(const cls_context *ctx)
{
    const cls_sched_source *src = ctx->tune.sched;
    return src && src->now ? src->now(src->user) : cls_now();
}

/* A rate v > 0 that device run r's meter shows, as the scheduler reads it. */
static double shown(const cls_devrun *r, double v)
{
    /* a meter may stand alone, with no call (tests/test_meter.c) */
    const cls_sched_source *src = r->job && r->job->ctx ? r->job->ctx->tune.sched : NULL;
    if (!(v > 0) || !src || !src->rate) return v;
    return src->rate(src->user, r->dev->index, v);
}

/* Bytes per second this device has shown: in this phase, else in earlier
 * calls; 0 when nothing is known yet. The phase's figure counts from the
 * device's first completion on: a first slice carries one-time costs (a
 * driver compiling the kernel at its first launch, PoCL: up to seconds
 * with a cold cache) that would make a fast device look slower than a
 * simulator. */
static double rate_of(const cls_devrun *r, double now)
{
    double v = shown(r, cls_meter_rate(&r->phase, now));
    return v > 0 ? v : cls_run_rate(r);
}

/* A first slice this many times longer than every later one carried a
 * one-time cost (cls_meter). */
#define SLOW_FIRST 3.0

void cls_meter_take(cls_meter *m, double now)
{
    if (!(m->t0 > 0)) m->t0 = now;
}

void cls_meter_done(cls_meter *m, uint64_t bytes, double took, double now, int fresh)
{
    m->done++;
    m->bytes += bytes;
    m->t_last = now;
    if (m->done == 1) m->dur1 = took;
    else if (took > m->rest) m->rest = took;
    if (m->done == 1 || fresh) {
        m->t1 = now;
        m->bytes1 = m->bytes;
    }
    if (fresh) m->fresh = 1;
    m->fresh_last = fresh;
}

/* The bytes and seconds a meter counts at `now` once `least` slices are
 * done; 0 when it shows no rate. */
static int meter_span(const cls_meter *m, double now, unsigned least, double *bytes, double *secs)
{
    if (m->done < least || !m->done || m->fresh_last) return 0;
    if (m->fresh || (m->done >= 2 && m->dur1 > SLOW_FIRST * m->rest)) {
        if (m->bytes <= m->bytes1 || !(now > m->t1)) return 0;
        *bytes = (double)(m->bytes - m->bytes1);
        *secs = now - m->t1;
        return 1;
    }
    if (!(now > m->t0)) return 0;
    *bytes = (double)m->bytes;
    *secs = now - m->t0;
    return 1;
}

/* Within a call, from the second completion on: one slice cannot tell a
 * first launch's one-time cost (the fault layer's delay in test_scheduler,
 * a driver's compile) from the device's speed, and a rate read low so
 * early let a far slower device take a slice. */
double cls_meter_rate(const cls_meter *m, double now)
{
    double b, s;
    return meter_span(m, now, 2, &b, &s) ? b / s : 0;
}

void cls_meter_fold(cls_devrun *r)
{
    double b, s;
    if (meter_span(&r->phase, r->phase.t_last, 1, &b, &s)) {
        double v = shown(r, b / s);
        r->rate_bytes += (uint64_t)b;
        r->rate_secs += v > 0 ? b / v : s;
    }
    memset(&r->phase, 0, sizeof r->phase);
}

/* What another device is worth while deciding: its measured rate, else its
 * prior (cls_device_prior), else 0 (not counted). */
static double rate_or_prior(const cls_devrun *r, double now)
{
    double v = rate_of(r, now);
    return v > 0 ? v : r->dev->prior;
}

/* Whether a staging device working from pageable memory should stay out
 * because the host's memory is the bottleneck. Every byte it takes costs
 * three bytes of host memory traffic (its copy threads read and write it,
 * the DMA engine reads or writes it once more) where a zero-copy device
 * costs one, and its copy threads take cores from a CPU device. With M the
 * host traffic the copy threads have shown, and Z what the zero-copy
 * devices move now, moving work to it gains at most (M - Z) / 3: nothing
 * worth the cores once Z reaches M / 2. Seen on a 16-core host beside an
 * H100 (seed-A, pageable): the CPU device alone 15.0 ms, both 19.8 ms with
 * the GPU taking 5% of the slices. Until a copy has been timed (M = 0) a
 * staging device takes its slices as any other, which times one. */
static int host_bound(const cls_devrun *r, double now, cls_decline *why)
{
    const cls_job *job = r->job;
    if (!r->staged || !(job->host_copy_bw > 0)) return 0;
    double z = 0;
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *o = &job->runs[i];
        if (o == r || !cls_run_active(o) || !o->dev->zero_copy) continue;
        double ro = rate_of(o, now);
        if (ro > 0) z += ro;
    }
    if (z < job->host_copy_bw / 2) return 0;
    if (why) *why = (cls_decline){.why = CLS_DECLINE_HOST_BOUND, .mine = job->host_copy_bw, .other = z};
    return 1;
}

/* A device declines a slice only when (1) another device would finish that
 * same slice sooner, counting what each has in flight, and (2) the other
 * devices together would finish all the remaining work before this device
 * finished the slice. The device that would finish it soonest never
 * declines, so some device always takes every slice. A device not yet
 * measured takes one slice at a time, and none when its prior says that it
 * is far slower than another and that the others would finish everything
 * long before it finished one. */
int cls_may_take(const cls_devrun *r, uint64_t bytes, double now, cls_decline *why)
{
    const cls_job *job = r->job;
    if (r->reserve || host_bound(r, now, why)) return 0;
    double mine = rate_of(r, now);
    int measured = mine > 0;
    if (!measured) {
        if (r->ninf) return 0; /* one slice at a time until measured */
        mine = r->dev->prior;
        if (mine <= 0) return 1;
    }
    double t_me = (double)(r->inflight_bytes + bytes) / mine;
    double others = 0, fastest = 0, fastest_prior = 0;
    size_t fastest_dev = 0, fastest_prior_dev = 0;
    uint64_t others_inflight = 0;
    int better = 0;
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *o = &job->runs[i];
        if (o == r || !cls_run_active(o)) continue;
        if (o->dev->prior > fastest_prior) {
            fastest_prior = o->dev->prior;
            fastest_prior_dev = o->dev->index;
        }
        double ro = rate_or_prior(o, now);
        if (ro <= 0) continue;
        if (ro > fastest) {
            fastest = ro;
            fastest_dev = o->dev->index;
        }
        others += ro;
        others_inflight += o->inflight_bytes;
        double t_o = (double)(o->inflight_bytes + bytes) / ro;
        if (t_o < t_me || (t_o == t_me && o->dev->index < r->dev->index)) better = 1;
    }
    /* unmeasured: within CLS_PRIOR_MARGIN of the fastest other device, take a
     * slice to be measured; far slower, only with the margin below. A prior
     * is compared with the others' priors where they have one: a probe's
     * small copies read far below a rate measured on whole slices, so a
     * prior taken on a busy host could fall 8x below an identical device's
     * rate and keep it out of every call (seen under ASan with two tests
     * running at once). */
    int by_prior = fastest_prior > 0;
    double ref = by_prior ? fastest_prior : fastest;
    double margin = 1.0;
    if (!measured) {
        if (mine * CLS_PRIOR_MARGIN >= ref) return 1;
        margin = CLS_PRIOR_MARGIN;
    }
    if (!better) return 1;
    double their_all = (double)(job->pending_bytes + others_inflight) / others;
    if (margin * t_me <= their_all) return 1;
    if (why) {
        if (!measured)
            *why = (cls_decline){.why = CLS_DECLINE_PRIOR, .mine = mine, .other = ref,
                                 .other_dev = by_prior ? fastest_prior_dev : fastest_dev,
                                 .other_probed = by_prior};
        else
            *why = (cls_decline){.why = CLS_DECLINE_SLOWER, .mine = mine, .other = others,
                                 .t_me = t_me, .t_all = their_all};
    }
    return 0;
}

static int same_str(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The same device model on the same driver. */
static int same_kind(const cls_dev *a, const cls_dev *b)
{
    return same_str(a->info.name, b->info.name) && same_str(a->info.platform, b->info.platform)
           && same_str(a->info.driver, b->info.driver) && a->info.compute_units == b->info.compute_units
           && a->zero_copy == b->zero_copy;
}

void cls_run_forget(cls_job *job)
{
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        cls_dev *d = r->dev;
        if (!r->participates || r->failed || cls_run_rate(r) <= 0) continue;
        for (size_t j = 0; j < job->nruns; j++) {
            const cls_devrun *o = &job->runs[j];
            if (j == i || !o->participates || o->failed || !same_kind(d, o->dev)) continue;
            if (cls_run_rate(r) * CLS_PRIOR_MARGIN < cls_run_rate(o)) {
                cls_run_set_rate(r, 0);
                break;
            }
        }
    }
}

/* Priors for the devices that have not finished a slice yet, one device
 * at a time before any worker starts, so that no probe waits behind
 * another device's work (PoCL's devices share one thread pool). A device
 * still unmeasured is probed again once the phases run since its last
 * probe add up to REPROBE times what that probe cost, an interval that
 * doubles with each probe: a prior spoilt by a busy moment does not keep a
 * device out for good, and probing a simulator costs at most 1/REPROBE of
 * the time spent in calls at first, and ever less. Only calls with several
 * devices need priors. */
#define REPROBE 100.0

static double prior_of(const cls_job *job, cls_dev *d)
{
    const cls_sched_source *src = job->ctx->tune.sched;
    return src && src->prior ? src->prior(src->user, d->index) : cls_device_prior(d, 0);
}

void cls_run_priors(cls_job *job)
{
    cls_run_forget(job);
    if (job->ctx->tune.no_prior) return;
    size_t alive = 0;
    for (size_t i = 0; i < job->nruns; i++) alive += cls_run_active(&job->runs[i]);
    if (alive < 2) return;
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        cls_dev *d = r->dev;
        if (!cls_run_active(r) || cls_run_rate(r) > 0) continue;
        if (d->probe_cost > 0 && d->since_probe < REPROBE * d->probe_cost * d->probe_backoff) continue;
        job->probed = 1;
        double t = cls_sched_now(job->ctx);
        d->prior = prior_of(job, d);
        d->probe_cost = fmax(cls_sched_now(job->ctx) - t, 1e-6);
        d->since_probe = 0;
        d->probe_backoff = d->probe_backoff ? fmin(2 * d->probe_backoff, 1024) : 1;
    }
    /* A device probed just now far below an identical one (two PoCL devices
     * on one CPU) is probed once more: a 2 ms probe on a busy host can read
     * several times low, and that alone could keep one of two equal devices
     * out of its calls. A device that is slow stays slow on the second
     * probe. */
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        cls_dev *d = r->dev;
        if (!cls_run_active(r) || cls_run_rate(r) > 0 || d->since_probe != 0) continue;
        for (size_t j = 0; j < job->nruns; j++) {
            const cls_devrun *o = &job->runs[j];
            if (j == i || !cls_run_active(o) || !same_kind(d, o->dev)) continue;
            if (d->prior * CLS_PRIOR_MARGIN < o->dev->prior) {
                double again = prior_of(job, d);
                if (again > d->prior) d->prior = again;
                break;
            }
        }
    }
}

