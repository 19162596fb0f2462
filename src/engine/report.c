/* The report of the last call (cls_last_report): per device the slices,
 * bytes and times it took, why a device that took none sat out, and the
 * profiled events as times from the call's start. Filled once a call has
 * finished (pipeline.c) from what the workers (run.c) and the slices
 * (record.c) left in the job. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

/* A device that declined nothing and took no slice: its worker found none
 * left, as in a call of fewer slices than devices, or when its thread got
 * no core until the others had taken everything (a busy host). */
static const char none_left_note[] =
    "took no slice: the other devices had taken every one before its worker asked for one";

/* Why a device that took no slice declined them, into buf. */
static void decline_note(const cls_decline *d, char *buf, size_t len)
{
    switch (d->why) {
    case CLS_DECLINE_HOST_BOUND:
        snprintf(buf, len,
                 "declined: it stages pageable memory and host memory binds (zero-copy devices move %.3g GB/s,"
                 " its copies have shown %.3g GB/s of host traffic)",
                 d->other / 1e9, d->mine / 1e9);
        break;
    case CLS_DECLINE_PRIOR:
        snprintf(buf, len,
                 "declined: not measured yet; its probe read %.3g GB/s, over %.0fx below device %zu's %s %.3g GB/s",
                 d->mine / 1e9, CLS_PRIOR_MARGIN, d->other_dev, d->other_probed ? "probe," : "measured",
                 d->other / 1e9);
        break;
    case CLS_DECLINE_SLOWER:
        snprintf(buf, len,
                 "declined: at %.3g GB/s a slice would take it %.3g ms; the others (%.3g GB/s) would finish"
                 " everything in %.3g ms",
                 d->mine / 1e9, d->t_me * 1e3, d->other / 1e9, d->t_all * 1e3);
        break;
    default:
        buf[0] = 0;
    }
}

cls_status cls_report_finish(cls_job *job, double wall)
{
    cls_context *ctx = job->ctx;
    size_t n = ctx->ndevs;
    cls_device_report *rd = realloc(ctx->rep_devs, (n ? n : 1) * sizeof *rd);
    if (!rd) return CLS_E_NOMEM;
    ctx->rep_devs = rd;
    /* a failure message per device, then a decline note per device */
    char *msgs = realloc(ctx->rep_msgs, 2 * (n ? n : 1) * CLS_REPORT_MSG);
    if (!msgs) return CLS_E_NOMEM;
    ctx->rep_msgs = msgs;
    memset(rd, 0, n * sizeof *rd);
    for (size_t i = 0; i < n; i++) rd[i].device = i;
    if (job->host_copy_bw > ctx->host_copy_bw) ctx->host_copy_bw = job->host_copy_bw;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n && i < job->nruns; i++) {
        const cls_devrun *r = &job->runs[i];
        rd[i].sat_out = r->sat_out;
        if (!r->sat_out && !r->failed && r->participates && r->slices == 0) {
            if (r->declined.why != CLS_DECLINE_NONE) {
                char *note = msgs + (n + i) * CLS_REPORT_MSG;
                decline_note(&r->declined, note, CLS_REPORT_MSG);
                rd[i].sat_out = note;
            } else if (r->found_none) {
                rd[i].sat_out = none_left_note;
            }
        }
        if (r->failed) {
            snprintf(msgs + i * CLS_REPORT_MSG, CLS_REPORT_MSG, "%s", r->fail_msg);
            rd[i].failed = msgs + i * CLS_REPORT_MSG;
        } else {
            rd[i].failed = NULL;
        }
        rd[i].slices = r->slices;
        rd[i].bytes = r->bytes;
        rd[i].busy = r->slices ? r->t_last - r->t_first : 0;
        rd[i].staging = r->stage;
        bytes += r->bytes;
        /* the phases' counted bytes over their counted seconds (cls_meter):
         * a phase whose last slice on the device built a kernel counts
         * nothing, not even when nothing else is known: a rate taken over
         * a compile (PoCL: seconds with a cold cache) would keep the device
         * out of later calls for good (seen: a 16-core CPU device beside an
         * H100 took no slice in any call of a context whose first call
         * compiled its kernel, 73 ms against 18 ms alone); unmeasured, it
         * takes a slice in the next call and is measured there. Kept per
         * kind of memory (cls_dev.rate). */
        if (r->rate_bytes && r->rate_secs > 0)
            cls_run_set_rate(&job->runs[i], (double)r->rate_bytes / r->rate_secs);
        else if (r->slices && cls_run_rate(r) <= 0)
            /* it worked, but only over a compile: its prior is taken again
             * in the next call, not kept (a prior spoilt by a busy moment
             * kept a device that had just done a call's slices out of the
             * next, test_scheduler under load) */
            job->runs[i].dev->probe_cost = 0;
    }

    /* device clocks onto the host's: host = device + offset, with the offset
     * the latest lower bound given by enqueue times */
    double *off = calloc(n ? n : 1, sizeof *off);
    int *known = calloc(n ? n : 1, sizeof *known);
    cls_event *ev = job->nraw ? malloc(job->nraw * sizeof *ev) : NULL;
    if ((!off || !known) || (job->nraw && !ev)) {
        free(off);
        free(known);
        free(ev);
        return CLS_E_NOMEM;
    }
    for (size_t i = 0; i < job->nraw; i++) {
        const cls_rawev *e = &job->raw[i];
        if (!e->device_clock || e->ev.device >= n) continue;
        double o = e->t_enq - e->queued;
        if (!known[e->ev.device] || o > off[e->ev.device]) off[e->ev.device] = o;
        known[e->ev.device] = 1;
    }
    for (size_t i = 0; i < job->nraw; i++) {
        cls_event e = job->raw[i].ev;
        if (job->raw[i].device_clock) {
            e.start += off[e.device] - job->t0;
            e.end += off[e.device] - job->t0;
            double dt = e.end - e.start;
            if (e.device < n) {
                if (e.kind == CLS_EV_UPLOAD) rd[e.device].upload += dt;
                else if (e.kind == CLS_EV_KERNEL) rd[e.device].kernel += dt;
                else if (e.kind == CLS_EV_DOWNLOAD) rd[e.device].download += dt;
            }
        }
        ev[i] = e;
    }
    free(off);
    free(known);
    free(ctx->events);
    ctx->events = ev;
    ctx->nevents = job->nraw;

    cls_report *rep = &ctx->report;
    rep->wall = wall;
    rep->bytes = bytes;
    rep->slices = job->slices_all;
    rep->slices_done = job->done_all;
    rep->phases = job->phases;
    rep->ndevices = n;
    rep->devices = rd;
    rep->nevents = ctx->nevents;
    rep->events = ctx->events;
    return CLS_OK;
}

cls_status cls_last_report(const cls_context *ctx, cls_report *out)
{
    if (!ctx || !out) return CLS_E_ARG;
    *out = ctx->report;
    out->ndropped = ctx->ndrops;
    out->dropped = ctx->drops;
    return CLS_OK;
}
