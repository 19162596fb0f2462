/* Calls on data already on a device (cls_fit and the others,
 * buffer.c): the phases of a job whose slices read and write the caller's
 * cl_mem in place on one device, through its first queue, with no host
 * copy of the data. The slices are the usual ones (plan.c) cut only by
 * kernel launch, and run by the usual slice code (slice.c: start_resident).
 *
 * Nothing waits on the host unless something must come back to it: a
 * slice whose statistics the call returns, params packed per slice into a
 * host copy that the next slice reuses, or CLS_PROFILE (event times exist
 * once commands complete). Otherwise slices follow each other on the
 * in-order queue and the call returns with an event (cls_sync.done) that
 * completes with its last command; that event is kept as the device's
 * resident_busy, which later calls wait for before touching the queue's
 * host-side buffers (cls_resident_settle).
 * Owns: the wait list in, the event out, the factors' device copy.
 * Called by pipeline.c; calls slice.c and stage.c. */
#include <stdio.h>
#include <string.h>

#include "job.h"

void cls_resident_settle(cls_context *ctx, long keep)
{
    for (size_t i = 0; i < ctx->ndevs; i++) {
        cls_dev *d = &ctx->devs[i];
        if (!d->resident_busy || (long)i == keep) continue;
        clWaitForEvents(1, &d->resident_busy);
        clReleaseEvent(d->resident_busy);
        d->resident_busy = NULL;
    }
}

/* The caller's wait list, once per call, ahead of its first command. */
static cls_status wait_list(cls_job *job, cls_dev *d)
{
    cls_resident *res = job->res;
    if (res->waited) return CLS_OK;
    res->waited = 1;
    const cls_sync *y = res->sync;
    if (!y || !y->nwait) return CLS_OK;
    CL_TRY(job->ctx, d, clEnqueueBarrierWithWaitList(d->q[0], y->nwait, (const cl_event *)y->wait, NULL));
    return CLS_OK;
}

/* Whether the host must wait for slice s before the next one is enqueued. */
static int needs_host(const cls_job *job, const cls_devrun *r, const cls_slice *s)
{
    if (cls_op_reads_only(s->op) || (s->op == CLS_OP_FUSED && !job->no_stats)) return 1;
    if (s->op == CLS_OP_APPLY && job->pcol && !r->ptab) return 1;
    return (job->ctx->flags & CLS_PROFILE) != 0;
}

/* The report's view of a slice enqueued (or completed) on r. */
static void count(cls_job *job, cls_devrun *r, cls_slice *s)
{
    uint64_t b = (uint64_t)s->nrows * s->ncols * job->es * (cls_op_reads_only(s->op) ? 1 : 2);
    s->state = CLS_SL_DONE;
    job->done++;
    job->pending--;
    r->slices++;
    r->bytes += b;
    job->bytes_done += b;
    r->t_last = cls_now() - job->t0;
}

cls_status cls_resident_phase(cls_job *job)
{
    cls_resident *res = job->res;
    cls_context *ctx = job->ctx;
    cls_devrun *r = &job->runs[res->device];
    cls_dev *d = r->dev;
    if (job->f && !r->factors) {
        /* a copy on the device: the call may return before its kernels
         * read them, and the caller's host array may go */
        size_t bytes = (size_t)job->felems * job->es;
        if (bytes > d->info.max_alloc_bytes)
            return cls_fail(ctx, CLS_E_UNSUPPORTED,
                            "discount factors of %zu bytes exceed device %zu's largest buffer (%llu bytes); a "
                            "buffer call needs them in one", bytes, res->device,
                            (unsigned long long)d->info.max_alloc_bytes);
        cl_int e;
        r->factors = clCreateBuffer(d->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)job->f, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(ctx, d, "clCreateBuffer(factors)", e);
    }
    cls_status st = cls_stage_prepare(job, r);
    if (st == CLS_OK && job->pcol && !r->ptab) cls_resident_settle(ctx, -1); /* the host packs params */
    if (st == CLS_OK) st = wait_list(job, d);
    if (st != CLS_OK) return st;
    for (unsigned q = 0; q < CLS_MAX_QUEUES; q++) r->inf[q].slice = -1;
    r->t_first = cls_now() - job->t0;
    for (size_t i = 0; i < job->nsl && st == CLS_OK; i++) {
        cls_slice *s = &job->sl[i];
        s->state = CLS_SL_RUNNING;
        s->dev = (int)d->index;
        st = cls_slice_start(r, 0, i);
        if (st == CLS_OK && needs_host(job, r, s)) st = cls_slice_finish(r, 0);
        else if (st == CLS_OK) cls_slice_detach(r, 0, &res->last);
        if (st != CLS_OK) {
            cls_slice_abandon(r, 0);
            r->failed = 1;
            r->fail_status = st;
            int w = snprintf(r->fail_msg, sizeof r->fail_msg, "%s", ctx->err); /* truncation is fine */
            if (w < 0) r->fail_msg[0] = '\0';
            break;
        }
        count(job, r, s);
    }
    return st;
}

cls_status cls_resident_copy(cls_job *job, size_t bytes)
{
    cls_resident *res = job->res;
    cls_dev *d = &job->ctx->devs[res->device];
    cls_status st = wait_list(job, d);
    if (st != CLS_OK || !res->out || (res->out == res->in && res->out_off == res->in_off)) return st;
    CL_TRY(job->ctx, d, clEnqueueCopyBuffer(d->q[0], res->in, res->out, res->in_off * job->es,
                                            res->out_off * job->es, bytes, 0, NULL, &res->last));
    return CLS_OK;
}

cls_status cls_resident_end(cls_job *job, cls_status st)
{
    cls_resident *res = job->res;
    cls_context *ctx = job->ctx;
    const cls_sync *y = res->sync;
    if (y && y->done) *y->done = NULL;
    cls_dev *d = res->device < ctx->ndevs ? &ctx->devs[res->device] : NULL;
    if (d && st == CLS_OK && !res->waited) st = wait_list(job, d); /* a call that enqueued nothing */
    if (d && st == CLS_OK && y && y->done) {
        cl_event ev = NULL;
        cl_int e = clEnqueueMarkerWithWaitList(d->q[0], 0, NULL, &ev);
        if (e == CL_SUCCESS) e = clFlush(d->q[0]);
        if (e != CL_SUCCESS) {
            if (ev) clReleaseEvent(ev);
            st = cls_fail_cl(ctx, d, "clEnqueueMarkerWithWaitList", e);
        } else {
            *y->done = ev;
            if (d->resident_busy) clReleaseEvent(d->resident_busy);
            clRetainEvent(ev);
            d->resident_busy = ev;
        }
    }
    if (d && (st != CLS_OK || !y || !y->done)) {
        /* nothing the call enqueued may outlive it: on failure, and when
         * the caller asked for no event */
        cl_int e = clFinish(d->q[0]);
        if (e != CL_SUCCESS && st == CLS_OK) st = cls_fail_cl(ctx, d, "clFinish", e);
    }
    if (res->last) {
        cl_int status = CL_COMPLETE;
        if (st == CLS_OK && !(y && y->done)
            && clGetEventInfo(res->last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) == CL_SUCCESS
            && status < 0)
            st = cls_fail_cl(ctx, d, "resident slice", status);
        clReleaseEvent(res->last);
        res->last = NULL;
    }
    return st;
}
