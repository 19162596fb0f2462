/* Device workers, the shared slice cursor and failover (the rule a device
 * follows to take a slice, and the devices' rates, are admit.c's).
 *
 * Each participating device runs a worker thread that keeps up to one slice
 * in flight per in-order queue. Workers pull the next slice from the job;
 * a device takes a slice only if it would finish it no later than the other
 * devices would finish everything left without it (rates are measured
 * end to end, transfers included), so a slow device never holds up the
 * call. A device whose call fails is dropped for the rest of the call and
 * its unfinished slices go back to the cursor. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"

static uint64_t slice_bytes(const cls_job *job, const cls_slice *s)
{
    return (uint64_t)s->nrows * s->ncols * job->es * (cls_op_reads_only(s->op) ? 1 : 2);
}

/* The next slice for this device, or -1. Lock held. */
static int pull(cls_devrun *r)
{
    cls_job *job = r->job;
    if (job->unrecoverable) return -1;
    if (job->pending == 0) {
        r->found_none = 1;
        return -1;
    }
    int me = (int)r->dev->index, pick = -1, any = -1;
    for (size_t i = 0; i < job->nsl; i++) {
        const cls_slice *s = &job->sl[i];
        if (s->state != CLS_SL_PENDING) continue;
        if (s->home == me) {
            pick = (int)i;
            break;
        }
        int home_gone = s->home < 0 || job->runs[s->home].failed;
        if (home_gone && pick < 0) pick = (int)i;
        if (any < 0) any = (int)i;
    }
    if (pick < 0) pick = any; /* another device's resident slice: upload it again */
    if (pick < 0) return -1;
    cls_slice *s = &job->sl[pick];
    uint64_t b = slice_bytes(job, s);
    double now = cls_sched_now(job->ctx);
    /* Rates move while devices wait (a phase rate falls as time passes),
     * so two devices deciding at different moments could each find the
     * other better and both wait: the last worker not waiting takes the
     * slice when nothing is running, so some completion always comes
     * (next_slice(): a worker that declines counts itself waiting before
     * it lets the lock go). */
    if (s->home != me && !cls_may_take(r, b, now, &r->declined) && (job->running > 0 || job->idle + 1 < job->workers))
        return -1;
    s->state = CLS_SL_RUNNING;
    s->dev = me;
    job->pending--;
    job->running++;
    job->pending_bytes -= b;
    r->inflight_bytes += b;
    if (r->slices == 0 && r->t_first == 0) r->t_first = cls_now() - job->t0;
    s->t_take = now;
    cls_meter_take(&r->phase, now);
    return pick;
}

static void *worker(void *arg);

/* The bytes of the first pending slice, 0 when none is. Lock held. */
static uint64_t next_bytes(const cls_job *job)
{
    for (size_t i = 0; i < job->nsl; i++)
        if (job->sl[i].state == CLS_SL_PENDING) return slice_bytes(job, &job->sl[i]);
    return 0;
}

/* Would this device take the next slice now (its worker's own test)? */
static int would_take(cls_devrun *r)
{
    uint64_t b = next_bytes(r->job);
    return b > 0 && cls_may_take(r, b, cls_sched_now(r->job->ctx), &r->declined);
}

/* Starts the worker of each dormant device that would now take a slice, or
 * of every dormant device when `all` (a device failed: the others may be
 * needed to finish). A dormant device is one that declined the phase's
 * first slice: it gets no thread until it might work, so that a simulator
 * beside a CPU costs no thread and no wake-ups in every call. Lock held. */
static void wake_dormant(cls_job *job, int all)
{
    if (!job->dormant || job->unrecoverable) return;
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        if (!r->dormant || (!all && !would_take(r))) continue;
        r->dormant = 0;
        job->dormant--;
        if (pthread_create(&r->thread, NULL, worker, r) == 0) {
            r->started = 1;
            job->workers++;
        }
    }
}

static void complete(cls_devrun *r, size_t si, int fresh)
{
    cls_job *job = r->job;
    cls_context *ctx = job->ctx;
    cls_slice *s = &job->sl[si];
    uint64_t b = slice_bytes(job, s);
    pthread_mutex_lock(&job->lock);
    double now = cls_sched_now(ctx);
    s->state = CLS_SL_DONE;
    job->running--;
    job->done++;
    r->inflight_bytes -= b;
    r->slices++;
    r->bytes += b;
    cls_meter_done(&r->phase, b, now - s->t_take, now, fresh);
    r->t_last = cls_now() - job->t0;
    if (fresh) job->built = 1;
    job->bytes_done += b;
    if (ctx->cfg.progress)
        ctx->cfg.progress(ctx->cfg.progress_user, job->bytes_done,
                          job->bytes_total > job->bytes_done ? job->bytes_total : job->bytes_done);
    wake_dormant(job, 0);
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
}

/* Drops the device after a call on queue `failed_q` returned `st` (-1: no
 * particular queue). Its other slices in flight were fully enqueued before
 * the failure: they are finished normally where their commands completed.
 * What cannot finish is abandoned and goes back to the cursor, unless it may
 * have written caller memory (then the call cannot be completed safely). */
static void fail_device(cls_devrun *r, cls_status st, int failed_q)
{
    cls_job *job = r->job;
    cls_context *ctx = job->ctx;
    char label[512];
    cls_dev_label(r->dev, label, sizeof label);
    pthread_mutex_lock(&ctx->err_lock);
    /* truncation of a long build log is fine here */
    int w = strstr(ctx->err, label) ? snprintf(r->fail_msg, sizeof r->fail_msg, "%s", ctx->err)
                                    : snprintf(r->fail_msg, sizeof r->fail_msg, "%s: %s", label, ctx->err);
    if (w < 0) r->fail_msg[0] = '\0';
    pthread_mutex_unlock(&ctx->err_lock);
    r->fail_status = st;
    for (unsigned i = 0; i < r->ninf; i++) {
        unsigned q = r->order[i];
        cls_inflight *f = &r->inf[q];
        if (f->slice < 0) continue;
        size_t si = (size_t)f->slice;
        int fresh = f->fresh;
        if ((int)q != failed_q && f->done && cls_slice_finish(r, q) == CLS_OK) complete(r, si, fresh);
        else cls_slice_abandon(r, q);
    }
    pthread_mutex_lock(&job->lock);
    r->failed = 1;
    job->workers--;
    for (size_t i = 0; i < job->nsl; i++) {
        cls_slice *s = &job->sl[i];
        if (s->home == (int)r->dev->index) s->home = -1;
        if (s->state != CLS_SL_RUNNING || s->dev != (int)r->dev->index) continue;
        if (s->written) {
            job->unrecoverable = 1;
            continue;
        }
        s->state = CLS_SL_PENDING;
        s->dev = -1;
        job->pending++;
        job->running--;
        job->pending_bytes += slice_bytes(job, s);
    }
    r->ninf = 0;
    r->inflight_bytes = 0;
    int left = 0;
    for (size_t i = 0; i < job->nruns; i++) left |= cls_run_active(&job->runs[i]);
    if (!left) cls_team_call_in(job);
    wake_dormant(job, 1);
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
}

static unsigned free_queue(const cls_devrun *r)
{
    for (unsigned q = 0; q < r->dev->nq; q++)
        if (r->inf[q].slice < 0) return q;
    return 0;
}

/* The next slice for this device, or -1. With nothing in flight, the
 * worker waits (counted idle) for a completion, a failure elsewhere or the
 * end, and pulls again: -1 then means the phase is over. Lock held.
 *
 * Declining and starting to wait are one critical section. They were two:
 * a worker that declined because another worker was not idle unlocked
 * before counting itself idle, and in that gap the other worker declined
 * for the same reason; both then waited with slices pending and none
 * running, and no completion ever came to wake them (rates that fall while
 * devices wait let each find the other better, see pull()). Seen as a hang
 * of transform-pocl (two PoCL pthread devices) under ASan on a loaded
 * 2-core host; gdb showed both workers in this wait with pending 3,
 * running 0, idle 2 of 2 workers. */
static int next_slice(cls_devrun *r)
{
    cls_job *job = r->job;
    int si = pull(r);
    while (si < 0 && r->ninf == 0 && !job->unrecoverable && (job->pending > 0 || job->running > 0)) {
        job->idle++;
        pthread_cond_wait(&job->cond, &job->lock);
        job->idle--;
        si = pull(r);
    }
    return si;
}

static void *worker(void *arg)
{
    cls_devrun *r = arg;
    cls_job *job = r->job;
    cls_status st = CLS_OK;
    int prepared = 0;
    for (;;) {
        while (r->ninf < r->dev->nq) {
            pthread_mutex_lock(&job->lock);
            int si = next_slice(r);
            pthread_mutex_unlock(&job->lock);
            if (si < 0) break;
            if (!prepared) {
                /* buffers only for a device that takes work (a slow one
                 * declining everything costs no allocation); on failure
                 * the slice just pulled goes back with the device */
                st = cls_stage_prepare(job, r);
                if (st != CLS_OK) {
                    fail_device(r, st, -1);
                    return NULL;
                }
                prepared = 1;
            }
            unsigned q = free_queue(r);
            r->order[r->ninf++] = q;
            st = cls_slice_start(r, q, (size_t)si);
            if (st != CLS_OK) {
                fail_device(r, st, (int)q);
                return NULL;
            }
        }
        if (r->ninf == 0) break; /* next_slice() found the phase over */
        unsigned q = r->order[0];
        size_t si = (size_t)r->inf[q].slice;
        int fresh = r->inf[q].fresh;
        st = cls_slice_finish(r, q);
        if (st != CLS_OK) {
            fail_device(r, st, (int)q);
            return NULL;
        }
        memmove(r->order, r->order + 1, (r->ninf - 1) * sizeof r->order[0]);
        r->ninf--;
        complete(r, si, fresh);
    }
    return NULL;
}

/* Is this device's run resident data of the phase (phase 2 after 1)? */
static int has_home(const cls_job *job, const cls_devrun *r)
{
    for (size_t i = 0; i < job->nsl; i++)
        if (job->sl[i].home == (int)r->dev->index) return 1;
    return 0;
}

cls_status cls_run_phase(cls_job *job)
{
    cls_context *ctx = job->ctx;
    job->pending_bytes = 0;
    for (size_t i = 0; i < job->nsl; i++) job->pending_bytes += slice_bytes(job, &job->sl[i]);
    size_t alive = 0;
    cls_devrun *mine = NULL;
    double best = -1;
    for (size_t i = 0; i < job->nruns; i++) {
        cls_devrun *r = &job->runs[i];
        r->started = 0;
        r->dormant = 0;
        if (!r->participates || r->failed) continue;
        for (unsigned q = 0; q < CLS_MAX_QUEUES; q++) r->inf[q].slice = -1;
        r->ninf = 0;
        memset(&r->phase, 0, sizeof r->phase);
        alive++;
        /* the calling thread works for the fastest device known, the one
         * likely to do most of the work (never one in reserve) */
        double v = cls_known_speed(r);
        if (!r->reserve && (!mine || v > best)) {
            best = v;
            mine = r;
        }
    }
    double t_phase = cls_sched_now(ctx);
    job->idle = 0;
    job->dormant = 0;
    job->workers = 1;
    if (alive > 1) {
        pthread_mutex_lock(&job->lock);
        for (size_t i = 0; i < job->nruns; i++) {
            cls_devrun *r = &job->runs[i];
            if (!r->participates || r->failed || r == mine) continue;
            if (!has_home(job, r) && !would_take(r)) {
                r->dormant = 1;
                job->dormant++;
            } else if (pthread_create(&r->thread, NULL, worker, r) == 0) {
                r->started = 1;
                job->workers++;
            }
            /* a device without a thread takes no part */
        }
        pthread_mutex_unlock(&job->lock);
    }
    if (mine) worker(mine);
    /* a worker may start a dormant device's thread until its own end:
     * join until none is left */
    for (;;) {
        cls_devrun *j = NULL;
        pthread_mutex_lock(&job->lock);
        for (size_t i = 0; i < job->nruns && !j; i++)
            if (job->runs[i].started) j = &job->runs[i];
        if (j) j->started = 0;
        pthread_mutex_unlock(&job->lock);
        if (!j) break;
        pthread_join(j->thread, NULL);
    }
    t_phase = cls_sched_now(ctx) - t_phase;
    for (size_t i = 0; i < job->nruns; i++) cls_meter_fold(&job->runs[i]);
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].participates && job->runs[i].dev->probe_cost > 0) job->runs[i].dev->since_probe += t_phase;

    if (job->done == job->nsl) return CLS_OK;
    char msgs[CLS_ERR_LEN] = "";
    size_t used = 0;
    for (size_t i = 0; i < job->nruns && used < sizeof msgs; i++) {
        if (!job->runs[i].failed) continue;
        int w = snprintf(msgs + used, sizeof msgs - used, "\n  %s", job->runs[i].fail_msg);
        if (w > 0) used += (size_t)w;
    }
    size_t written = 0;
    for (size_t i = 0; i < job->nsl; i++) written += job->sl[i].state == CLS_SL_DONE;
    /* out of memory, or a kernel build, only when that is what stopped
     * every device */
    cls_status st = CLS_E_DEVICE;
    int any = 0;
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].failed) {
            cls_status f = job->runs[i].fail_status;
            int shared = f == CLS_E_NOMEM || f == CLS_E_BUILD;
            st = !any ? (shared ? f : CLS_E_DEVICE) : (st == f ? st : CLS_E_DEVICE);
            any = 1;
        }
    if (job->unrecoverable)
        return cls_fail(ctx, st,
                        "a device failed while writing a slice in place; %zu of %zu slices were written "
                        "whole, one may be partly written:%s", written, job->nsl, msgs);
    return cls_fail(ctx, st, "every device able to run the call failed; %zu of %zu slices were done:%s",
                    written, job->nsl, msgs);
}
