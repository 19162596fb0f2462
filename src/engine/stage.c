/* Device and pinned buffers of the engine, and host staging copies.
 * Owns: the per-queue slots of each device (grown on demand and kept across
 * calls), the factor array's binding per device for one call, the check
 * that a "host-unified" device really writes host memory in place, and the
 * parallel copies between caller memory and pinned slots. */
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "util/pool.h"

static void release_mem(cl_mem *m)
{
    if (*m) clReleaseMemObject(*m);
    *m = NULL;
}

static cls_status grow(cls_context *ctx, cls_dev *d, cl_mem *m, size_t *cap, size_t need, cl_mem_flags fl)
{
    if (need == 0) need = 64;
    if (*m && *cap >= need) return CLS_OK;
    release_mem(m);
    cl_int e;
    *m = clCreateBuffer(d->cl, fl, need, NULL, &e);
    if (e != CL_SUCCESS) {
        *cap = 0;
        return cls_fail_cl(ctx, d, "clCreateBuffer", e);
    }
    *cap = need;
    return CLS_OK;
}

static cls_status grow_host(cls_context *ctx, void **p, size_t need)
{
    void *n = realloc(*p, need ? need : 64);
    if (!n) return cls_fail(ctx, CLS_E_NOMEM, "out of host memory for %zu bytes", need);
    *p = n;
    return CLS_OK;
}

static void unmap_pinned(cls_dev *d, cls_slot *s, unsigned q)
{
    if (s->pinned && s->host) {
        cl_event ev = NULL;
        if (clEnqueueUnmapMemObject(d->q[q], s->pinned, s->host, 0, NULL, &ev) == CL_SUCCESS && ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
    }
    s->host = NULL;
    release_mem(&s->pinned);
    s->host_cap = 0;
}

/* Pinned, persistently mapped host memory: CL_MEM_ALLOC_HOST_PTR + map. */
static cls_status grow_pinned(cls_context *ctx, cls_dev *d, unsigned q, size_t need)
{
    cls_slot *s = &d->slot[q];
    if (s->pinned && s->host_cap >= need) return CLS_OK;
    unmap_pinned(d, s, q);
    cl_int e;
    s->pinned = clCreateBuffer(d->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, need, NULL, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, d, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", e);
    s->host = clEnqueueMapBuffer(d->q[q], s->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, need, 0,
                                 NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        s->host = NULL;
        release_mem(&s->pinned);
        return cls_fail_cl(ctx, d, "clEnqueueMapBuffer", e);
    }
    s->host_cap = need;
    return CLS_OK;
}

/* Unmaps and releases a params buffer mapped by grow_mapped_params. */
static void unmap_params(cls_dev *d, cls_slot *s, unsigned q)
{
    if (s->prm_mapped && s->prm && s->prm_host) {
        cl_event ev = NULL;
        if (clEnqueueUnmapMemObject(d->q[q], s->prm, s->prm_host, 0, NULL, &ev) == CL_SUCCESS && ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        s->prm_host = NULL;
    }
    s->prm_mapped = 0;
    release_mem(&s->prm);
    s->prm_cap = 0;
}

/* Params that a device whose mapped buffers are its own memory reads where
 * the host packed them: CL_MEM_ALLOC_HOST_PTR, mapped once, no upload (a
 * transform's params are not packed and then copied again;
 * docs/PERFORMANCE.md, "Params"). The buffer owns the memory, so no
 * released buffer can outlive it. */
static cls_status grow_mapped_params(cls_context *ctx, cls_dev *d, unsigned q, size_t bytes)
{
    cls_slot *s = &d->slot[q];
    if (s->prm_mapped) unmap_params(d, s, q);
    else {
        release_mem(&s->prm);
        free(s->prm_host);
        s->prm_host = NULL;
    }
    cl_int e;
    s->prm = clCreateBuffer(d->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, d, "clCreateBuffer(params)", e);
    s->prm_host = clEnqueueMapBuffer(d->q[q], s->prm, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        s->prm_host = NULL;
        release_mem(&s->prm);
        return cls_fail_cl(ctx, d, "clEnqueueMapBuffer(params)", e);
    }
    s->prm_mapped = 1;
    return CLS_OK;
}

void cls_stage_release(cls_dev *d)
{
    if (d->resident_busy) { /* a resident call's commands may still use the slots */
        clWaitForEvents(1, &d->resident_busy);
        clReleaseEvent(d->resident_busy);
        d->resident_busy = NULL;
    }
    if (d->pass_pinned) {
        cl_event ev = NULL;
        if (d->pass_host &&
            clEnqueueUnmapMemObject(d->q[0], d->pass_pinned, d->pass_host, 0, NULL, &ev) == CL_SUCCESS && ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        clReleaseMemObject(d->pass_pinned);
        d->pass_pinned = NULL;
        d->pass_host = NULL;
        d->pass_cap = 0;
    }
    for (unsigned q = 0; q < CLS_MAX_QUEUES; q++) {
        cls_slot *s = &d->slot[q];
        if (q < d->nq) {
            unmap_pinned(d, s, q);
            unmap_params(d, s, q);
        }
        release_mem(&s->data);
        release_mem(&s->st_part);
        release_mem(&s->cn_part);
        release_mem(&s->st_out);
        release_mem(&s->cn_out);
        release_mem(&s->prm);
        release_mem(&s->fwin);
        free(s->st_host);
        free(s->cn_host);
        if (!s->prm_mapped) free(s->prm_host);
        memset(s, 0, sizeof *s);
    }
}

/* Whether what the host writes into a mapped CL_MEM_ALLOC_HOST_PTR buffer
 * is what a kernel then reads, with the buffer still mapped: a copy kernel
 * reads one, twice, with new values written between the launches. */
static cls_status check_mapped_params(cls_context *ctx, cls_dev *d)
{
    enum { N = 64 };
    float out[N];
    cl_int e;
    cl_mem a = clCreateBuffer(d->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, sizeof out, NULL, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, d, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", e);
    cl_mem b = clCreateBuffer(d->cl, CL_MEM_WRITE_ONLY, sizeof out, NULL, &e);
    if (e != CL_SUCCESS) {
        clReleaseMemObject(a);
        return cls_fail_cl(ctx, d, "clCreateBuffer", e);
    }
    const char *call = "clEnqueueMapBuffer";
    float *m = clEnqueueMapBuffer(d->q[0], a, CL_TRUE, CL_MAP_WRITE, 0, sizeof out, 0, NULL, NULL, &e);
    if (e != CL_SUCCESS) m = NULL;
    size_t global, local = d->local;
    int same = e == CL_SUCCESS;
    for (int round = 0; round < 2 && same && e == CL_SUCCESS; round++) {
        for (int i = 0; i < N; i++) m[i] = (float)(i * 7 + round * 1000 + 3);
        call = "clSetKernelArg";
        e = cls_copy_args(d, a, b, sizeof out, &global);
        if (e == CL_SUCCESS) {
            call = "clEnqueueNDRangeKernel";
            e = clEnqueueNDRangeKernel(d->q[0], d->k[0][CLS_K_COPY][CLS_F32], 1, NULL, &global, &local, 0, NULL,
                                       NULL);
        }
        if (e == CL_SUCCESS) {
            call = "clEnqueueReadBuffer";
            e = clEnqueueReadBuffer(d->q[0], b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
        }
        if (e == CL_SUCCESS) same = memcmp(m, out, sizeof out) == 0;
    }
    cls_status st = e == CL_SUCCESS ? CLS_OK : cls_fail_cl(ctx, d, call, e);
    if (st != CLS_OK) clFinish(d->q[0]); /* nothing of it runs on once its buffers go */
    if (m) {
        clEnqueueUnmapMemObject(d->q[0], a, m, 0, NULL, NULL);
        clFinish(d->q[0]);
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    d->mapped_params = st == CLS_OK && same;
    return st;
}

/* A device claiming host-unified memory may still keep a shadow copy that
 * reaches host memory only when mapped (overlapping slices would then
 * overwrite each other). Check once: a kernel writes a CL_MEM_USE_HOST_PTR
 * buffer, and the host reads its memory without mapping. */
cls_status cls_zero_copy_check(cls_context *ctx, cls_dev *d)
{
    enum { N = 64 };
    float src[N], dst[N];
    for (int i = 0; i < N; i++) {
        src[i] = (float)(i * 3 + 1);
        dst[i] = -1.0f;
    }
    cl_int e;
    cls_status st = CLS_OK;
    cl_mem a = clCreateBuffer(d->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof src, src, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, d, "clCreateBuffer", e);
    cl_mem b = clCreateBuffer(d->cl, CL_MEM_WRITE_ONLY | CL_MEM_USE_HOST_PTR, sizeof dst, dst, &e);
    if (e != CL_SUCCESS) {
        clReleaseMemObject(a);
        return cls_fail_cl(ctx, d, "clCreateBuffer(CL_MEM_USE_HOST_PTR)", e);
    }
    size_t global, local = d->local;
    const char *call = "clSetKernelArg";
    e = cls_copy_args(d, a, b, sizeof src, &global);
    if (e == CL_SUCCESS) {
        call = "clEnqueueNDRangeKernel";
        e = clEnqueueNDRangeKernel(d->q[0], d->k[0][CLS_K_COPY][CLS_F32], 1, NULL, &global, &local, 0, NULL, NULL);
    }
    if (e == CL_SUCCESS) {
        call = "clFinish";
        e = clFinish(d->q[0]);
    }
    if (e != CL_SUCCESS) {
        st = cls_fail_cl(ctx, d, call, e);
        clFinish(d->q[0]); /* nothing of it may write dst (this stack frame) once it returns */
    } else if (memcmp(src, dst, sizeof src) != 0) d->zero_copy = 0;
    /* map and unmap before release, as the specification asks */
    void *m = clEnqueueMapBuffer(d->q[0], b, CL_TRUE, CL_MAP_READ, 0, sizeof dst, 0, NULL, NULL, &e);
    if (e == CL_SUCCESS) {
        clEnqueueUnmapMemObject(d->q[0], b, m, 0, NULL, NULL);
        clFinish(d->q[0]);
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    if (st == CLS_OK && d->zero_copy && d->in_place) st = check_mapped_params(ctx, d);
    d->info.staging = !d->zero_copy;
    d->zc_checked = 1;
    return st;
}

cls_status cls_zero_copy_verify(cls_context *ctx)
{
    for (size_t i = 0; i < ctx->ndevs; i++) {
        cls_dev *d = &ctx->devs[i];
        if (d->zero_copy && !d->zc_checked) {
            cls_status st = cls_zero_copy_check(ctx, d);
            if (st != CLS_OK) return st;
        }
    }
    return CLS_OK;
}

/* A device that another one taking part in the call is known to be faster
 * than: it will likely take a minority of the slices. */
static int helper(const cls_job *job, const cls_devrun *r)
{
    double mine = cls_known_speed(r);
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *o = &job->runs[i];
        if (o != r && cls_run_active(o) && cls_known_speed(o) > mine) return 1;
    }
    return 0;
}

/* Binds the factor array for the call: the whole array on the device (staged
 * once, or in place for zero copy) when it fits, else per-slice windows.
 * A staging device takes windows also as a helper, and where the slices'
 * windows barely overlap (all of them together under 1.25 times the array:
 * factors as large as the data): the whole array is one blocking upload
 * before the device's first slice, paid in full by a helper that then
 * takes one slice of ten, at a rate that would keep it out of every later
 * call (docs/DISCRETE.md, "Factors on a staging device"), where windows
 * go up with the slices that use them, overlapped with other slices'
 * kernels. Factors that many slices share (seed-b's one matrix of factors
 * for 400) still go up once for the device that leads. */
static cls_status bind_factors(cls_job *job, cls_devrun *r)
{
    cls_dev *d = r->dev;
    uint64_t bytes = job->felems * job->es;
    cl_int e;
    if (d->zero_copy) {
        if (bytes > d->info.max_alloc_bytes) return CLS_OK;
        r->factors = clCreateBuffer(d->cl, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes, (void *)job->f, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(factors)", e);
        return CLS_OK;
    }
    if (bytes > d->info.max_alloc_bytes || bytes > d->info.global_mem_bytes / 4) return CLS_OK;
    if (helper(job, r) || job->sum_span < job->felems + job->felems / 4) return CLS_OK;
    r->factors = clCreateBuffer(d->cl, CL_MEM_READ_ONLY, bytes, NULL, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(factors)", e);
    CL_TRY(job->ctx, d, clEnqueueWriteBuffer(d->q[0], r->factors, CL_TRUE, 0, bytes, job->f, 0, NULL, NULL));
    r->resident_bytes += bytes;
    return CLS_OK;
}

/* Binds the job's shared params table (params.c makes one when slices
 * share entries: batch scope) on the device for the call, so that slices
 * index it instead of packing and uploading their part each (seed-A's
 * batch transform packed half the table 36 times, 57 MB; a GPU would
 * have taken it over the bus as often). A zero-copy device reads the host
 * table in place (read-only, so even a runtime that shadows host memory
 * reads it right); another gets one upload. A table the device cannot
 * hold stays per slice (r->ptab NULL). */
static cls_status bind_params(cls_job *job, cls_devrun *r)
{
    cls_dev *d = r->dev;
    if (r->ptab) return CLS_OK; /* a job makes its table once (pipeline.c) */
    uint64_t bytes = (uint64_t)cls_params_planes(job) * job->G * job->C * job->es;
    if (bytes > d->info.max_alloc_bytes || (!d->zero_copy && bytes > d->info.global_mem_bytes / 8)) return CLS_OK;
    cl_int e;
    if (job->res) {
        /* a resident call may return before its kernels read the table,
         * which the job frees: the buffer takes a copy */
        r->ptab = clCreateBuffer(d->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)bytes, job->ptab, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(params table)", e);
    } else if (d->zero_copy) {
        r->ptab = clCreateBuffer(d->cl, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, (size_t)bytes, job->ptab, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(params table)", e);
    } else {
        r->ptab = clCreateBuffer(d->cl, CL_MEM_READ_ONLY, (size_t)bytes, NULL, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(params table)", e);
        CL_TRY(job->ctx, d,
               clEnqueueWriteBuffer(d->q[0], r->ptab, CL_TRUE, 0, (size_t)bytes, job->ptab, 0, NULL, NULL));
        r->resident_bytes += bytes;
    }
    return CLS_OK;
}

cls_status cls_stage_prepare(cls_job *job, cls_devrun *r)
{
    cls_context *ctx = job->ctx;
    cls_dev *d = r->dev;
    size_t es = job->es;
    cls_status st = CLS_OK;
    r->resident_budget = d->info.global_mem_bytes / 2;
    if (job->f && !r->factors) {
        st = bind_factors(job, r);
        if (st != CLS_OK) return st;
    }
    if (job->ptab) {
        st = bind_params(job, r);
        if (st != CLS_OK) return st;
    }
    /* Statistics and params tables are sized for doubles whatever the dtype,
     * so that capacities count entries. */
    for (unsigned q = 0; q < d->nq && st == CLS_OK; q++) {
        cls_slot *s = &d->slot[q];
        size_t cap;
        if (job->max_part > s->part_cap) {
            cap = 0;
            st = grow(ctx, d, &s->st_part, &cap, job->max_part * 5 * 8, CL_MEM_READ_WRITE);
            cap = 0;
            if (st == CLS_OK)
                st = grow(ctx, d, &s->cn_part, &cap, job->max_part * 2 * sizeof(cl_uint), CL_MEM_READ_WRITE);
            s->part_cap = st == CLS_OK ? job->max_part : 0;
        }
        if (st == CLS_OK && job->max_out > s->out_cap) {
            cap = 0;
            st = grow(ctx, d, &s->st_out, &cap, job->max_out * 5 * 8, CL_MEM_READ_WRITE);
            cap = 0;
            if (st == CLS_OK)
                st = grow(ctx, d, &s->cn_out, &cap, job->max_out * 2 * sizeof(cl_uint), CL_MEM_READ_WRITE);
            if (st == CLS_OK) st = grow_host(ctx, &s->st_host, job->max_out * 5 * 8);
            if (st == CLS_OK) st = grow_host(ctx, &s->cn_host, job->max_out * 2 * sizeof(cl_uint));
            s->out_cap = st == CLS_OK ? job->max_out : 0;
        }
        if (st == CLS_OK && job->max_prm > s->prm_cap) {
            cap = 0;
            if (d->mapped_params && d->zero_copy) {
                st = grow_mapped_params(ctx, d, q, job->max_prm * CLS_PRM_PLANES * 8);
            } else {
                st = grow(ctx, d, &s->prm, &cap, job->max_prm * CLS_PRM_PLANES * 8, CL_MEM_READ_WRITE);
                if (st == CLS_OK) st = grow_host(ctx, &s->prm_host, job->max_prm * CLS_PRM_PLANES * 8);
            }
            s->prm_cap = st == CLS_OK ? job->max_prm : 0;
        }
        if (st == CLS_OK && !d->zero_copy && !job->res) {
            size_t bytes = job->max_elems * es;
            st = grow(ctx, d, &s->data, &s->data_cap, bytes, CL_MEM_READ_WRITE);
            if (st == CLS_OK) st = grow_pinned(ctx, d, q, bytes);
        }
        if (st == CLS_OK && job->f && !r->factors && !d->zero_copy && !job->res)
            st = grow(ctx, d, &s->fwin, &s->fwin_cap, job->max_span * es, CL_MEM_READ_ONLY);
    }
    return st;
}

/* ---- host copies ---- */

/* A slice's host copy is cut into items of at most COPY_CHUNK bytes that
 * the pool's threads share: whole blocks of rows when rows are short, and
 * pieces of a row when a row is longer than that. One thread cannot keep
 * up with a bus: the items had been whole rows, so a slice of one long row
 * (seed-b-large's discount: a row of 5 M columns merged from its rows and
 * columns, cut into 32 MiB column blocks; docs/DISCRETE.md, "Staging")
 * was copied by one thread at one core's memcpy speed, where slices of
 * whole rows spread over every thread. A slice of one
 * row, or of every column, is contiguous in caller memory: one block. */

typedef struct copy_task {
    const cls_job *job;
    const cls_slice *s;
    const char *src;
    char *dst;
    int pack;           /* caller -> slot */
    cls_copy_plan p;
} copy_task;

#define COPY_CHUNK ((size_t)1 << 20)

cls_copy_plan cls_stage_copy_plan(const cls_job *job, const cls_slice *s)
{
    cls_copy_plan p;
    size_t es = job->es;
    int contiguous = s->ncols == job->C || s->nrows == 1;
    p.rows = contiguous ? 1 : (size_t)s->nrows;
    p.row_bytes = contiguous ? (size_t)s->nrows * s->ncols * es : s->ncols * es;
    if (p.row_bytes >= COPY_CHUNK) {
        p.pieces = (p.row_bytes + COPY_CHUNK - 1) / COPY_CHUNK;
        p.piece = (p.row_bytes + p.pieces - 1) / p.pieces;
        p.piece = (p.piece + 63) & ~(size_t)63; /* whole cache lines */
        p.pieces = (p.row_bytes + p.piece - 1) / p.piece;
        p.rows_per = 1;
        p.items = p.rows * p.pieces;
    } else {
        p.pieces = 1;
        p.piece = p.row_bytes;
        p.rows_per = COPY_CHUNK / p.row_bytes;
        p.items = (p.rows + p.rows_per - 1) / p.rows_per;
    }
    return p;
}

static void copy_item(void *arg, size_t i)
{
    copy_task *t = arg;
    const cls_job *job = t->job;
    const cls_slice *s = t->s;
    const cls_copy_plan *p = &t->p;
    size_t es = job->es;
    size_t r0 = (i / p->pieces) * p->rows_per, r1 = r0 + p->rows_per;
    if (r1 > p->rows) r1 = p->rows;
    size_t b0 = (i % p->pieces) * p->piece, n = p->row_bytes - b0 < p->piece ? p->row_bytes - b0 : p->piece;
    for (size_t r = r0; r < r1; r++) {
        /* row r of the copy: in the slot r * row_bytes, in caller memory at
         * the slice's row r (the whole block when contiguous) */
        size_t caller = ((size_t)(s->row0 + (p->rows == 1 ? 0 : r)) * job->C + s->col0) * es + b0;
        size_t slot = r * p->row_bytes + b0;
        if (t->pack) memcpy(t->dst + slot, t->src + caller, n);
        else memcpy(t->dst + caller, t->src + slot, n);
    }
}

static void copy_run(cls_job *job, const cls_slice *s, const char *src, char *dst, int pack)
{
    copy_task t = {.job = job, .s = s, .src = src, .dst = dst, .pack = pack, .p = cls_stage_copy_plan(job, s)};
    cls_pool_run(job->ctx->pool, t.p.items, copy_item, &t);
}

void cls_stage_pack(cls_job *job, const cls_slice *s, const char *src, void *slot)
{
    copy_run(job, s, src, slot, 1);
}

void cls_stage_unpack(cls_job *job, const cls_slice *s, const void *slot, char *dst)
{
    copy_run(job, s, slot, dst, 0);
}
