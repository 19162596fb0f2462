/* One slice on one in-order queue: buffers, uploads, kernels, downloads, and
 * its completion (staging out, statistics, timings).
 *
 * Zero copy (host-unified devices): CL_MEM_USE_HOST_PTR buffers over the
 * slice's span of caller memory, kernels with the caller's row stride, and a
 * map of the output so that its contents are defined on the host.
 * Staging (discrete devices): the slice is packed into the queue's pinned
 * slot by the copy pool (or sent by DMA straight from caller memory that
 * cls_host_alloc pinned), uploaded, computed in place on the device with a
 * packed row stride, downloaded and unpacked. Everything is enqueued without
 * blocking; the slice's last command is its completion event. The
 * kernels themselves are enqueued by slice_compute.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/clean_host.h"
#include "util/pool.h"
#include "job.h"

/* First and one-past-last element of the slice in the row-major view. */
static void span(const cls_job *job, const cls_slice *s, size_t *e0, size_t *e1)
{
    *e0 = (size_t)s->row0 * job->C + s->col0;
    *e1 = (size_t)(s->row0 + s->nrows - 1) * job->C + s->col0 + s->ncols;
}

static cls_status start_zero_copy(cls_devrun *r, unsigned q, cls_slice *s)
{
    cls_job *job = r->job;
    cls_dev *d = r->dev;
    cls_inflight *f = &r->inf[q];
    size_t e0, e1;
    span(job, s, &e0, &e1);
    size_t bytes = (e1 - e0) * job->es;
    int writes = !cls_op_reads_only(s->op);
    cl_int e;
    cl_mem_flags xf = CL_MEM_USE_HOST_PTR | (job->inplace && writes ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY);
    f->xb = clCreateBuffer(d->cl, xf, bytes, (void *)(job->x + e0 * job->es), &e);
    if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(CL_MEM_USE_HOST_PTR)", e);
    if (writes) {
        if (job->inplace) {
            f->yb = f->xb;
            clRetainMemObject(f->yb);
        } else {
            f->yb = clCreateBuffer(d->cl, CL_MEM_WRITE_ONLY | CL_MEM_USE_HOST_PTR, bytes, job->y + e0 * job->es, &e);
            if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(CL_MEM_USE_HOST_PTR)", e);
        }
    }
    cls_status st = cls_slice_compute(r, q, s, f->xb, 0, f->yb ? f->yb : f->xb, 0, job->C);
    if (st != CLS_OK) return st;
    if (job->inplace && writes) s->written = 1;
    st = cls_slice_stats_download(r, q, s);
    if (st != CLS_OK) return st;
    /* On PoCL's CPU drivers the buffer is the caller's memory itself
     * (device.c), coherent with the host: the output is there once the
     * kernel completes, and a map and unmap would only add two commands to
     * the call's critical path (docs/PERFORMANCE.md, "Host memory and
     * maps"). Other devices map, as the specification
     * asks, to see the results of a CL_MEM_USE_HOST_PTR buffer. */
    if (writes && !d->in_place) {
        f->ymap = clEnqueueMapBuffer(d->q[q], f->yb, CL_FALSE, CL_MAP_READ, 0, bytes, 0, NULL,
                                     cls_slice_event(f, CLS_EV_DOWNLOAD, "map"), &e);
        if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clEnqueueMapBuffer", e);
    }
    return CLS_OK;
}

/* Host rectangle of the slice for clEnqueue{Read,Write}BufferRect. */
static void rect(const cls_job *job, const cls_slice *s, size_t host_origin[3], size_t region[3])
{
    host_origin[0] = s->col0 * job->es;
    host_origin[1] = (size_t)s->row0;
    host_origin[2] = 0;
    region[0] = s->ncols * job->es;
    region[1] = (size_t)s->nrows;
    region[2] = 1;
}

static cls_status start_staging(cls_devrun *r, unsigned q, cls_slice *s)
{
    cls_job *job = r->job;
    cls_context *ctx = job->ctx;
    cls_dev *d = r->dev;
    cls_slot *sl = &d->slot[q];
    cls_inflight *f = &r->inf[q];
    size_t es = job->es;
    size_t bytes = (size_t)s->nrows * s->ncols * es;
    size_t e0, e1;
    span(job, s, &e0, &e1);
    int contiguous = s->ncols == job->C;
    size_t zero[3] = {0, 0, 0}, horg[3], region[3];
    rect(job, s, horg, region);
    cl_int e;

    cl_mem buf = sl->data;
    int have_data = 0;
    if (job->phase == 2 && s->resident && s->home == (int)d->index) {
        buf = s->resident;
        have_data = 1;
    } else if (job->phase == 1 && job->phases == 2 && r->resident_bytes + bytes <= r->resident_budget) {
        cl_mem m = clCreateBuffer(d->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
        if (e == CL_SUCCESS) {
            buf = f->xb = m; /* becomes the slice's resident copy when it completes */
        }
    }
    if (!have_data) {
        if (cls_hostmem_pinned(ctx, job->x + e0 * es, (e1 - e0) * es, d->cl)) {
            if (contiguous)
                CL_TRY(ctx, d, clEnqueueWriteBuffer(d->q[q], buf, CL_FALSE, 0, bytes, job->x + e0 * es, 0, NULL,
                                                     cls_slice_event(f, CLS_EV_UPLOAD, "upload")));
            else
                CL_TRY(ctx, d, clEnqueueWriteBufferRect(d->q[q], buf, CL_FALSE, zero, horg, region,
                                                         s->ncols * es, 0, job->C * es, 0, job->x, 0, NULL,
                                                         cls_slice_event(f, CLS_EV_UPLOAD, "upload")));
        } else {
            f->stage_in0 = cls_now();
            cls_stage_pack(job, s, job->x, sl->host);
            f->stage_in1 = cls_now();
            cls_run_note_copy(job, bytes, f->stage_in1 - f->stage_in0);
            CL_TRY(ctx, d, clEnqueueWriteBuffer(d->q[q], buf, CL_FALSE, 0, bytes, sl->host, 0, NULL,
                                                 cls_slice_event(f, CLS_EV_UPLOAD, "upload")));
        }
    }
    cls_status st = cls_slice_compute(r, q, s, buf, 0, buf, 0, s->ncols);
    if (st != CLS_OK) return st;
    st = cls_slice_stats_download(r, q, s);
    if (st != CLS_OK) return st;
    if (cls_op_reads_only(s->op)) return CLS_OK;
    if (cls_hostmem_pinned(ctx, job->y + e0 * es, (e1 - e0) * es, d->cl)) {
        f->direct_out = 1;
        if (job->inplace) s->written = 1;
        if (contiguous)
            CL_TRY(ctx, d, clEnqueueReadBuffer(d->q[q], buf, CL_FALSE, 0, bytes, job->y + e0 * es, 0, NULL,
                                                cls_slice_event(f, CLS_EV_DOWNLOAD, "download")));
        else
            CL_TRY(ctx, d, clEnqueueReadBufferRect(d->q[q], buf, CL_FALSE, zero, horg, region, s->ncols * es, 0,
                                                    job->C * es, 0, job->y, 0, NULL,
                                                    cls_slice_event(f, CLS_EV_DOWNLOAD, "download")));
    } else {
        CL_TRY(ctx, d, clEnqueueReadBuffer(d->q[q], buf, CL_FALSE, 0, bytes, sl->host, 0, NULL,
                                            cls_slice_event(f, CLS_EV_DOWNLOAD, "download")));
    }
    return CLS_OK;
}

/* On the caller's buffers (job->res): the kernels read and write them in
 * place at the slice's offset, with the array's row stride; only the
 * statistics come back when asked for. */
static cls_status start_resident(cls_devrun *r, unsigned q, cls_slice *s)
{
    cls_job *job = r->job;
    const cls_resident *res = job->res;
    uint64_t e0 = s->row0 * job->C + s->col0;
    cl_mem y = res->out ? res->out : res->in;
    uint64_t yoff = res->out ? res->out_off : res->in_off;
    cls_status st = cls_slice_compute(r, q, s, res->in, res->in_off + e0, y, yoff + e0, job->C);
    if (st == CLS_OK && !cls_op_reads_only(s->op) && job->inplace) s->written = 1;
    if (st == CLS_OK) st = cls_slice_stats_download(r, q, s);
    return st;
}

cls_status cls_slice_start(cls_devrun *r, unsigned q, size_t si)
{
    cls_inflight *f = &r->inf[q];
    cls_slice *s = &r->job->sl[si];
    memset(f, 0, sizeof *f);
    f->slice = (int)si;
    f->bytes = (uint64_t)s->nrows * s->ncols * r->job->es * (cls_op_reads_only(s->op) ? 1 : 2);
    cls_status st = r->job->res        ? start_resident(r, q, s)
                    : r->dev->zero_copy ? start_zero_copy(r, q, s)
                                        : start_staging(r, q, s);
    if (st == CLS_OK && f->nev == 0) st = cls_fail(r->job->ctx, CLS_E_DEVICE, "internal: slice with no command");
    if (st == CLS_OK) {
        f->done = f->ev[f->nev - 1];
        cl_int e = clFlush(r->dev->q[q]);
        if (e != CL_SUCCESS) st = cls_fail_cl(r->job->ctx, r->dev, "clFlush", e);
    }
    return st;
}

/* Device statistics of the slice (planes K, REL, M2, MIN, MAX and counts,
 * in the data's dtype) into the job's double entries. One loop per group
 * of the slice over its columns, the dtype's branch out of it and each
 * entry written whole: on wide data with tiny groups this is the call's
 * host work per column (a million columns of one row: 80 MB of entries;
 * a division and a per-field dtype test per entry cost more than the
 * kernel). */
#define CONVERT_ROW(T)                                                                                         \
    do {                                                                                                       \
        const T *pk = (const T *)sl->st_host + i0, *pr = pk + n, *pm2 = pr + n, *pmn = pm2 + n, *pmx = pmn + n;   \
        for (size_t k = k0; k < k1; k++) {                                                                     \
            cls_column_stats c = empty;                                                                        \
            c.count = cn[i0 + k];                                                                              \
            c.missing = cn[n + i0 + k];                                                                        \
            if (c.count) {                                                                                     \
                double lo = (double)pmn[k], hi = (double)pmx[k];                                               \
                c.min = lo;                                                                                    \
                c.max = hi;                                                                                    \
                c.absmax = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);                                          \
                if (moments) {                                                                                 \
                    c.mean = (double)pk[k] + (double)pr[k];                                                    \
                    c.m2 = (double)pm2[k];                                                                     \
                }                                                                                              \
            }                                                                                                  \
            out[k] = c;                                                                                        \
        }                                                                                                      \
    } while (0)

/* Columns [k0, k1) of one group of the slice. */
static void convert_part(cls_devrun *r, unsigned q, const cls_slice *s, size_t g, size_t k0, size_t k1)
{
    cls_job *job = r->job;
    cls_slot *sl = &r->dev->slot[q];
    size_t nc = s->ncols, ng = cls_op_per_group(s->op) ? (size_t)s->ngroups : 1, n = ng * nc;
    const cl_uint *cn = sl->cn_host;
    const cls_column_stats empty = cls_column_empty();
    int moments = job->moments; /* else the planes MIN and MAX alone were downloaded */
    size_t i0 = g * nc;
    /* FIT: straight into the result (the slice's group g, its columns) */
    size_t e0 = (s->group0 + g) * job->C + s->col0;
    cls_column_stats *out = job->sdirect ? &job->sdirect[e0] : &job->sstats[s->stats_at + i0];
    if (job->dtype == CLS_F64) CONVERT_ROW(double);
    else CONVERT_ROW(float);
    /* fused imputation: the imputed column's statistics while the
     * entry is in the cache, on this device's thread (a pass over
     * every column's entry after the run took 4.6 ms of a 20 ms call,
     * 18 x 60 x 20000 float64 per matrix) */
    if (job->fill_direct)
        for (size_t k = k0; k < k1; k++)
            job->fill_direct[e0 + k] =
                cls_impute_column(&out[k], job->Rg, job->imp, job->fillc, job->dtype,
                                  job->miss_direct ? &job->miss_direct[e0 + k] : NULL);
}

/* A piece of the conversion for the copy pool: CONVERT_PIECE columns of
 * one group. Below CONVERT_PIECE * 2 entries the device's thread converts
 * alone; above, the pool's threads share the pieces: on wide data the
 * conversion is the call's serial host work after its kernel (98450
 * columns: 7.9 MB of entries written while the devices' threads wait). */
#define CONVERT_PIECE ((size_t)1 << 14)

typedef struct {
    cls_devrun *r;
    unsigned q;
    const cls_slice *s;
    size_t pieces; /* per group */
} convert_work;

static void convert_item(void *arg, size_t i)
{
    const convert_work *w = arg;
    size_t g = i / w->pieces, k0 = i % w->pieces * CONVERT_PIECE, k1 = k0 + CONVERT_PIECE;
    if (k1 > w->s->ncols) k1 = w->s->ncols;
    convert_part(w->r, w->q, w->s, g, k0, k1);
}

static void convert_stats(cls_devrun *r, unsigned q, const cls_slice *s)
{
    size_t nc = s->ncols, ng = cls_op_per_group(s->op) ? (size_t)s->ngroups : 1;
    struct cls_pool *pool = r->job->ctx->pool;
    if (pool && ng * nc >= 2 * CONVERT_PIECE) {
        convert_work w = {r, q, s, (nc + CONVERT_PIECE - 1) / CONVERT_PIECE};
        cls_pool_run(pool, ng * w.pieces, convert_item, &w);
        return;
    }
    for (size_t g = 0; g < ng; g++) convert_part(r, q, s, g, 0, nc);
}
#undef CONVERT_ROW

static void release_objects(cls_inflight *f)
{
    for (int i = 0; i < f->nev; i++)
        if (f->ev[i]) clReleaseEvent(f->ev[i]);
    f->nev = 0;
    f->done = NULL;
    if (f->xb) clReleaseMemObject(f->xb);
    if (f->yb) clReleaseMemObject(f->yb);
    if (f->fb) clReleaseMemObject(f->fb);
    f->xb = f->yb = f->fb = NULL;
    f->slice = -1;
}

cls_status cls_slice_finish(cls_devrun *r, unsigned q)
{
    cls_job *job = r->job;
    cls_dev *d = r->dev;
    cls_inflight *f = &r->inf[q];
    cls_slice *s = &job->sl[f->slice];
    cl_int e = clWaitForEvents(1, &f->done);
    if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clWaitForEvents", e);
    cl_int status;
    e = clGetEventInfo(f->done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clGetEventInfo", e);
    if (status < 0) return cls_fail_cl(job->ctx, d, "slice command", status);

    double so0 = 0, so1 = 0;
    if (f->ymap) {
        CL_TRY(job->ctx, d, clEnqueueUnmapMemObject(d->q[q], f->yb, f->ymap, 0, NULL, NULL));
        f->ymap = NULL;
    } else if (!d->zero_copy && !job->res && !cls_op_reads_only(s->op) && !f->direct_out) {
        so0 = cls_now();
        cls_stage_unpack(job, s, d->slot[q].host, job->y);
        so1 = cls_now();
        cls_run_note_copy(job, (uint64_t)s->nrows * s->ncols * job->es, so1 - so0);
    }
    if (cls_op_reads_only(s->op) || (s->op == CLS_OP_FUSED && !job->no_stats)) convert_stats(r, q, s);
    if (!d->zero_copy && f->xb && job->phase == 1) {
        /* the staged copy stays on the device for phase 2 */
        s->resident = f->xb;
        s->home = (int)d->index;
        r->resident_bytes += (uint64_t)s->nrows * s->ncols * job->es;
        f->xb = NULL;
    }
    cls_record_events(r, q, so0, so1);
    release_objects(f);
    return CLS_OK;
}

void cls_slice_detach(cls_devrun *r, unsigned q, cl_event *last)
{
    cls_inflight *f = &r->inf[q];
    if (f->done) {
        clRetainEvent(f->done);
        if (*last) clReleaseEvent(*last);
        *last = f->done;
    }
    cls_record_events(r, q, 0, 0);
    release_objects(f);
}

void cls_slice_abandon(cls_devrun *r, unsigned q)
{
    cls_inflight *f = &r->inf[q];
    if (f->slice < 0) return;
    clFinish(r->dev->q[q]);
    if (f->ymap && f->yb) {
        clEnqueueUnmapMemObject(r->dev->q[q], f->yb, f->ymap, 0, NULL, NULL);
        clFinish(r->dev->q[q]);
    }
    f->ymap = NULL;
    release_objects(f);
}
