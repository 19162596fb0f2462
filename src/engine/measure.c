/* cls_device_measure(): the bandwidths that bound clscale on one device,
 * measured the way clpeak does: a copy kernel over device buffers (read +
 * write counted), and host<->device transfers from pinned memory
 * (CL_MEM_ALLOC_HOST_PTR, mapped) and from pageable malloc'ed memory. Best
 * of several repeats after a warm-up, timed with the host clock around
 * blocking commands. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

#define REPEATS 5

typedef struct probe {
    cls_context *ctx;
    cls_dev *d;
    cl_command_queue q;
    size_t bytes;
    cl_mem a, b, pinned, pinned2;
    void *pinned_ptr, *pinned2_ptr, *pageable;
} probe;

static void probe_free(probe *p)
{
    if (p->pinned_ptr) clEnqueueUnmapMemObject(p->q, p->pinned, p->pinned_ptr, 0, NULL, NULL);
    if (p->pinned2_ptr) clEnqueueUnmapMemObject(p->q, p->pinned2, p->pinned2_ptr, 0, NULL, NULL);
    if (p->pinned_ptr || p->pinned2_ptr) clFinish(p->q);
    if (p->pinned2) clReleaseMemObject(p->pinned2);
    if (p->a) clReleaseMemObject(p->a);
    if (p->b) clReleaseMemObject(p->b);
    if (p->pinned) clReleaseMemObject(p->pinned);
    free(p->pageable);
}

static cls_status copy_kernel(probe *p, double *gbs)
{
    cl_kernel k = p->d->k[0][CLS_K_COPY][CLS_F32];
    size_t local = p->d->local, global;
    cl_int e = cls_copy_args(p->d, p->a, p->b, p->bytes, &global);
    if (e != CL_SUCCESS) return cls_fail_cl(p->ctx, p->d, "clSetKernelArg(copy)", e);
    double best = 0;
    for (int i = 0; i <= REPEATS; i++) {
        double t = cls_now();
        CL_TRY(p->ctx, p->d, clEnqueueNDRangeKernel(p->q, k, 1, NULL, &global, &local, 0, NULL, NULL));
        CL_TRY(p->ctx, p->d, clFinish(p->q));
        t = cls_now() - t;
        double v = 2.0 * (double)p->bytes / t / 1e9;
        if (i > 0 && v > best) best = v; /* the first run warms up */
    }
    *gbs = best;
    return CLS_OK;
}

/* An upload into a from pinned memory on one queue while a download from b
 * into other pinned memory runs on another: what the bus carries both ways
 * at once (a PCIe link is full duplex, but a driver or the host's memory
 * may not keep both directions at full speed). */
static cls_status duplex(probe *p, double *gbs)
{
    cl_command_queue q2 = p->d->nq > 1 ? p->d->q[1] : p->q;
    double best = 0;
    for (int i = 0; i <= REPEATS; i++) {
        double t = cls_now();
        CL_TRY(p->ctx, p->d, clEnqueueWriteBuffer(p->q, p->a, CL_FALSE, 0, p->bytes, p->pinned_ptr, 0, NULL, NULL));
        CL_TRY(p->ctx, p->d, clEnqueueReadBuffer(q2, p->b, CL_FALSE, 0, p->bytes, p->pinned2_ptr, 0, NULL, NULL));
        CL_TRY(p->ctx, p->d, clFlush(p->q));
        CL_TRY(p->ctx, p->d, clFlush(q2));
        CL_TRY(p->ctx, p->d, clFinish(p->q));
        CL_TRY(p->ctx, p->d, clFinish(q2));
        t = cls_now() - t;
        double v = 2.0 * (double)p->bytes / t / 1e9;
        if (i > 0 && v > best) best = v;
    }
    *gbs = best;
    return CLS_OK;
}

static cls_status transfer(probe *p, void *host, int to_device, double *gbs)
{
    double best = 0;
    for (int i = 0; i <= REPEATS; i++) {
        double t = cls_now();
        if (to_device)
            CL_TRY(p->ctx, p->d, clEnqueueWriteBuffer(p->q, p->a, CL_TRUE, 0, p->bytes, host, 0, NULL, NULL));
        else
            CL_TRY(p->ctx, p->d, clEnqueueReadBuffer(p->q, p->a, CL_TRUE, 0, p->bytes, host, 0, NULL, NULL));
        t = cls_now() - t;
        double v = (double)p->bytes / t / 1e9;
        if (i > 0 && v > best) best = v;
    }
    *gbs = best;
    return CLS_OK;
}

/* ---- a quick estimate of a device's speed ---- */

/* One copy-kernel run of `bytes` (and, for a staging device, the upload
 * and download it would need), in seconds; < 0 on any error. */
static double prior_round(cls_dev *d, cl_command_queue q, cl_mem a, cl_mem b, void *host, size_t bytes)
{
    cl_kernel k = d->k[0][CLS_K_COPY][CLS_F32];
    size_t local = d->local, global;
    double t = cls_now();
    cl_int e = CL_SUCCESS;
    if (host) e = clEnqueueWriteBuffer(q, a, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = cls_copy_args(d, a, b, bytes, &global);
    if (e == CL_SUCCESS) e = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
    if (e == CL_SUCCESS && host) e = clEnqueueReadBuffer(q, b, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = clFinish(q);
    else clFinish(q); /* what was enqueued reads `host`, which the caller frees next */
    return e == CL_SUCCESS ? cls_now() - t : -1.0;
}

/* Two buffers (and a host copy for a staging device) of `bytes`. */
typedef struct prior_bufs { cl_mem a, b; void *host; size_t bytes; } prior_bufs;

static void prior_free(prior_bufs *p)
{
    if (p->a) clReleaseMemObject(p->a);
    if (p->b) clReleaseMemObject(p->b);
    free(p->host);
    memset(p, 0, sizeof *p);
}

static int prior_alloc(cls_dev *d, prior_bufs *p, size_t bytes)
{
    prior_free(p);
    cl_int e;
    p->bytes = bytes;
    p->a = clCreateBuffer(d->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e == CL_SUCCESS) p->b = clCreateBuffer(d->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) return -1;
    if (!d->zero_copy) {
        p->host = malloc(bytes);
        if (!p->host) return -1;
        memset(p->host, 0x3f, bytes);
    }
    return 0;
}

/* The copy kernel once untimed on 4 KiB (a first launch may compile), then
 * timed on 4 KiB and on sizes twice as large while the timed runs took
 * under 2 ms in all, up to 1 MiB: the best rate seen, in bytes read and
 * written per second, transfers included for a staging device. A simulator
 * stops after a size or two; a CPU or GPU reaches sizes where launch costs
 * fade. The figure only has to tell devices many times slower apart, so a
 * failure is not an error: the device then stays unknown (0).
 *
 * An untimed launch first, of the first timed size: a driver may compile
 * the kernel at its first launch (PoCL: hundreds of ms with a cold cache),
 * which would make a fast device look slower than a simulator. A launch of
 * one work-group instead was tried: the 4 KiB one after it was still slow
 * on PoCL (one of two equal devices then looked over 8x slower than the
 * other and took no slice).
 *
 * A busy host can stretch one round: a PoCL worker thread preempted for a
 * 4 ms scheduler tick makes a 4 KiB copy look 100x slow, spends the whole
 * budget at once and, alone, would stand for the device. So the first
 * timed size runs twice, and a later round that took over 2.5x the round
 * before it (twice the bytes) runs again while all rounds took under 10x
 * the budget; the faster of the two counts, against the budget too. */
double cls_prior_rounds(cls_prior_round round, void *user, size_t cap)
{
    enum { START = 4096, LIMIT = 1 << 20 };
    const double budget = 2e-3, wall_cap = 10 * budget;
    if (cap > LIMIT) cap = LIMIT;
    if (cap < START || round(user, START) < 0) return 0;
    double rate = 0, spent = 0, wall = 0, prev = 0;
    for (size_t bytes = START; bytes <= cap && spent < budget && wall < wall_cap; bytes *= 2) {
        double t = round(user, bytes);
        if (t >= 0) wall += t;
        if (t >= 0 && (prev == 0 || (t > 2.5 * prev && wall < wall_cap))) {
            double again = round(user, bytes);
            if (again >= 0) wall += again;
            t = again < 0 ? again : fmin(t, again);
        }
        if (t < 0) return 0;
        prev = t;
        spent += t;
        if (t > 0 && 2.0 * (double)bytes / t > rate) rate = 2.0 * (double)bytes / t;
    }
    return rate;
}

/* One device's rounds: buffers of 4 KiB, then of the cap once a round
 * needs more. */
typedef struct prior_dev { cls_dev *d; cl_command_queue q; prior_bufs p; size_t cap; } prior_dev;

static double prior_dev_round(void *user, size_t bytes)
{
    prior_dev *pd = user;
    if (bytes > pd->p.bytes && prior_alloc(pd->d, &pd->p, bytes > 4096 ? pd->cap : bytes) != 0) return -1.0;
    return prior_round(pd->d, pd->q, pd->p.a, pd->p.b, pd->p.host, bytes);
}

double cls_device_prior(cls_dev *d, unsigned qi)
{
    size_t cap = 1 << 20;
    if (cap > d->info.max_alloc_bytes) cap = (size_t)d->info.max_alloc_bytes & ~(size_t)63;
    prior_dev pd = {.d = d, .q = d->q[qi], .cap = cap};
    double rate = cls_prior_rounds(prior_dev_round, &pd, cap);
    prior_free(&pd.p);
    return rate;
}

cls_status cls_device_measure(cls_context *ctx, size_t i, size_t bytes, cls_device_limits *out)
{
    if (!ctx || !out) return CLS_E_ARG;
    if (!ctx->usable || i >= ctx->ndevs)
        return cls_fail(ctx, CLS_E_ARG, "cls_device_measure: no selected device %zu", i);
    memset(out, 0, sizeof *out);
    probe p = {.ctx = ctx, .d = &ctx->devs[i]};
    p.q = p.d->q[0];
    if (bytes == 0) {
        /* 64 MiB, or what a slow device (a simulator) copies in ~0.1 s */
        bytes = (size_t)64 << 20;
        double r = cls_device_prior(p.d, 0);
        if (r > 0 && r * 0.05 < (double)bytes) bytes = r * 0.05 < 65536.0 ? 65536 : (size_t)(r * 0.05);
    }
    uint64_t cap = p.d->info.max_alloc_bytes;
    if (cap > p.d->info.global_mem_bytes / 4) cap = p.d->info.global_mem_bytes / 4;
    if (bytes > cap) bytes = (size_t)cap;
    p.bytes = bytes & ~(size_t)63;
    if (p.bytes == 0) return cls_fail(ctx, CLS_E_ARG, "cls_device_measure: %zu bytes is too small", bytes);

    cl_int e;
    cls_status st = CLS_OK;
    p.a = clCreateBuffer(p.d->cl, CL_MEM_READ_WRITE, p.bytes, NULL, &e);
    if (e == CL_SUCCESS) p.b = clCreateBuffer(p.d->cl, CL_MEM_READ_WRITE, p.bytes, NULL, &e);
    if (e == CL_SUCCESS) p.pinned = clCreateBuffer(p.d->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, p.bytes, NULL, &e);
    if (e == CL_SUCCESS)
        p.pinned2 = clCreateBuffer(p.d->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, p.bytes, NULL, &e);
    if (e != CL_SUCCESS) st = cls_fail_cl(ctx, p.d, "clCreateBuffer", e);
    if (st == CLS_OK) {
        p.pinned_ptr = clEnqueueMapBuffer(p.q, p.pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, p.bytes, 0, NULL,
                                          NULL, &e);
        if (e == CL_SUCCESS)
            p.pinned2_ptr = clEnqueueMapBuffer(p.q, p.pinned2, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, p.bytes, 0,
                                               NULL, NULL, &e);
        if (e != CL_SUCCESS) st = cls_fail_cl(ctx, p.d, "clEnqueueMapBuffer", e);
    }
    if (st == CLS_OK) {
        p.pageable = malloc(p.bytes);
        if (!p.pageable) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory for %zu bytes", p.bytes);
        else {
            memset(p.pageable, 1, p.bytes);
            memset(p.pinned_ptr, 1, p.bytes);
            memset(p.pinned2_ptr, 1, p.bytes);
        }
    }
    if (st == CLS_OK) st = transfer(&p, p.pinned_ptr, 1, &out->h2d_pinned);
    if (st == CLS_OK) st = transfer(&p, p.pinned_ptr, 0, &out->d2h_pinned);
    if (st == CLS_OK) st = transfer(&p, p.pageable, 1, &out->h2d_pageable);
    if (st == CLS_OK) st = transfer(&p, p.pageable, 0, &out->d2h_pageable);
    if (st == CLS_OK) st = duplex(&p, &out->both_pinned);
    if (st == CLS_OK) st = copy_kernel(&p, &out->mem_copy);
    probe_free(&p);
    return st;
}
