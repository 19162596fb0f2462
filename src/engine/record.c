/* What a slice leaves behind for the report, recorded by the slice code
 * (slice.c) as it finishes a slice: the host copy rate its staging showed
 * (read by the scheduler's host-memory rule, run.c) and, with CLS_PROFILE,
 * its OpenCL event times (turned into the report by report.c). Called from
 * slice.c; calls nothing of the engine above it. */
#include <stdlib.h>

#include "job.h"

void cls_run_note_copy(cls_job *job, uint64_t bytes, double seconds)
{
    if (!(seconds > 0) || bytes < (1u << 20)) return; /* too short to say anything */
    double bw = 2.0 * (double)bytes / seconds;       /* each byte read and written */
    pthread_mutex_lock(&job->lock);
    if (bw > job->host_copy_bw) job->host_copy_bw = bw;
    pthread_mutex_unlock(&job->lock);
}


static void push_raw(cls_job *job, const cls_rawev *ev)
{
    if (job->nraw == job->capraw) {
        size_t cap = job->capraw ? 2 * job->capraw : 256;
        cls_rawev *n = realloc(job->raw, cap * sizeof *n);
        if (!n) return; /* timings are best effort; the result is not affected */
        job->raw = n;
        job->capraw = cap;
    }
    job->raw[job->nraw++] = *ev;
}

void cls_record_events(cls_devrun *r, unsigned q, double so0, double so1)
{
    cls_job *job = r->job;
    cls_inflight *f = &r->inf[q];
    double stage = (f->stage_in1 - f->stage_in0) + (so1 - so0);
    int profile = (job->ctx->flags & CLS_PROFILE) != 0;
    pthread_mutex_lock(&job->lock);
    r->stage += stage;
    if (!profile) {
        pthread_mutex_unlock(&job->lock);
        return;
    }
    cls_rawev e = {0};
    e.ev.device = (unsigned)r->dev->index;
    e.ev.queue = q;
    e.ev.slice = (size_t)f->slice;
    if (f->stage_in1 > 0) {
        e.ev.kind = CLS_EV_STAGE_IN;
        e.ev.start = f->stage_in0 - job->t0;
        e.ev.end = f->stage_in1 - job->t0;
        push_raw(job, &e);
    }
    for (int i = 0; i < f->nev; i++) {
        cl_ulong qd = 0, st = 0, en = 0;
        if (clGetEventProfilingInfo(f->ev[i], CL_PROFILING_COMMAND_QUEUED, sizeof qd, &qd, NULL) != CL_SUCCESS
            || clGetEventProfilingInfo(f->ev[i], CL_PROFILING_COMMAND_START, sizeof st, &st, NULL) != CL_SUCCESS
            || clGetEventProfilingInfo(f->ev[i], CL_PROFILING_COMMAND_END, sizeof en, &en, NULL) != CL_SUCCESS)
            continue;
        if (st == 0 || en < st) continue; /* some drivers leave timestamps at 0 */
        cls_rawev d = e;
        d.device_clock = 1;
        d.ev.kind = f->kind[i];
        d.ev.name = f->name[i];
        d.ev.start = (double)st * 1e-9;
        d.ev.end = (double)en * 1e-9;
        d.queued = (double)qd * 1e-9;
        d.t_enq = f->t_enq[i];
        push_raw(job, &d);
    }
    if (so1 > 0) {
        e.ev.kind = CLS_EV_STAGE_OUT;
        e.ev.start = so0 - job->t0;
        e.ev.end = so1 - job->t0;
        push_raw(job, &e);
    }
    pthread_mutex_unlock(&job->lock);
}
