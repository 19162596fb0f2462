/* One slice's commands on the device, whatever brought its data there
 * (slice.c: zero copy, staging, the caller's buffers): kernel arguments, the
 * statistics, apply, discount and fused kernels with their parameter
 * uploads, and the download of the statistics the kernels leave. Every
 * command is enqueued without blocking, its event recorded in the slice's
 * in-flight state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

static size_t roundup(size_t a, size_t b) { return (a + b - 1) / b * b; }

typedef struct kargs {
    cls_context *ctx;
    cls_dev *d;
    cl_kernel k;
    size_t local;   /* the kernel's work-group size */
    cl_uint i;
    cls_status st;
} kargs;

static void arg(kargs *a, size_t size, const void *v)
{
    if (a->st != CLS_OK) return;
    cl_int e = clSetKernelArg(a->k, a->i, size, v);
    if (e != CL_SUCCESS) a->st = cls_fail_cl(a->ctx, a->d, "clSetKernelArg", e);
    a->i++;
}
static void arg_mem(kargs *a, cl_mem m) { arg(a, sizeof m, &m); }
static void arg_u32(kargs *a, uint64_t v) { cl_uint x = (cl_uint)v; arg(a, sizeof x, &x); }
static void arg_u64(kargs *a, uint64_t v) { cl_ulong x = v; arg(a, sizeof x, &x); }
static void arg_i64(kargs *a, int64_t v) { cl_long x = v; arg(a, sizeof x, &x); }
static void arg_real(kargs *a, cls_dtype t, double v)
{
    if (t == CLS_F64) {
        cl_double x = v;
        arg(a, sizeof x, &x);
    } else {
        cl_float x = (cl_float)v;
        arg(a, sizeof x, &x);
    }
}

/* The imputing build of a scale.cl kernel when the job imputes (with the
 * sentinel's compare only when there is one). The first build always
 * fills (scale.cl's scale_imp relies on it): a sentinel alone, no fill,
 * takes the second. */
static int kid_of(const cls_job *job, int kernel)
{
    if (!job->imp_on) return kernel;
    return kernel + (isnan(job->sent) && job->imp ? CLS_K_IMP_OFFSET : CLS_K_IMPS_OFFSET);
}

/* The trailing arguments of the imputing builds: sentinel, kind, constant. */
static void arg_imp(kargs *a, const cls_job *job)
{
    if (!job->imp_on) return;
    arg_real(a, job->dtype, job->sent);
    arg_u32(a, job->imp);
    arg_real(a, job->dtype, job->fillc);
}

static kargs args_for(cls_devrun *r, unsigned q, int kernel)
{
    kargs a = {.ctx = r->job->ctx, .d = r->dev, .st = CLS_OK};
    /* built here the first time (program.c); a failed build fails the
     * slice like any OpenCL call, and the device drops out of the call */
    int built = 0;
    a.st = cls_kernel_get(a.ctx, a.d, kernel, r->job->dtype, q, &a.k, &a.local, &built);
    if (built) r->inf[q].fresh = 1;
    return a;
}

/* Room for the next command's event, with its kind and the host time. */
cl_event *cls_slice_event(cls_inflight *f, cls_event_kind kind, const char *name)
{
    if (f->nev == CLS_MAX_EVENTS) return NULL;
    f->kind[f->nev] = kind;
    f->name[f->nev] = name;
    f->t_enq[f->nev] = cls_now();
    return &f->ev[f->nev++];
}

static cls_status launch(cls_devrun *r, unsigned q, kargs *a, cls_inflight *f, const char *name,
                         size_t gx, size_t gy)
{
    if (a->st != CLS_OK) return a->st;
    cls_dev *d = r->dev;
    size_t local = a->local;
    size_t global[2] = {roundup(gx ? gx : 1, local), gy ? gy : 1};
    size_t lws[2] = {local, 1};
    CL_TRY(r->job->ctx, d, clEnqueueNDRangeKernel(d->q[q], a->k, 2, NULL, global, lws, 0, NULL,
                                                  cls_slice_event(f, CLS_EV_KERNEL, name)));
    return CLS_OK;
}

/* Vectors per work-item for a launch whose work-items each walk `rows`
 * rows (times `passes`), within the driver's loop limit. */
static unsigned kk_for(const cls_devrun *r, uint64_t rows, unsigned passes)
{
    unsigned kk = r->dev->kv;
    if (r->dev->loop_limit) {
        uint64_t fit = r->dev->loop_limit / (rows * passes + 1);
        if (fit < kk) kk = fit ? (unsigned)fit : 1;
    }
    return kk;
}

static size_t items(const cls_devrun *r, size_t ncols, unsigned kk)
{
    size_t per = (size_t)r->dev->vec * kk;
    return (ncols + per - 1) / per;
}

/* Non-temporal stores for outputs larger than caches are worth keeping. */
static unsigned nt_flag(const cls_devrun *r, const cls_slice *s)
{
    return r->dev->nt && (uint64_t)s->nrows * s->ncols * r->job->es >= ((uint64_t)1 << 20) ? CLS_KF_NT : 0;
}

/* The factor arguments: the device's whole array, a window, or none (a
 * dummy buffer that the kernel never reads). */
typedef struct fbind { cl_mem m; int64_t off; } fbind;

static cls_status bind_window(cls_devrun *r, unsigned q, const cls_slice *s, cls_inflight *f, fbind *out)
{
    cls_job *job = r->job;
    cls_dev *d = r->dev;
    out->m = d->slot[q].prm;
    out->off = 0;
    if (!job->f) return CLS_OK;
    if (r->factors) {
        out->m = r->factors;
        return CLS_OK;
    }
    size_t bytes = (size_t)(s->fhi - s->flo) * job->es;
    const char *src = job->f + s->flo * job->es;
    cl_int e;
    if (d->zero_copy) {
        f->fb = clCreateBuffer(d->cl, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes, (void *)src, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(job->ctx, d, "clCreateBuffer(factor window)", e);
        out->m = f->fb;
    } else {
        CL_TRY(job->ctx, d, clEnqueueWriteBuffer(d->q[q], d->slot[q].fwin, CL_FALSE, 0, bytes, src, 0, NULL,
                                                  cls_slice_event(f, CLS_EV_UPLOAD, "factors")));
        out->m = d->slot[q].fwin;
    }
    out->off = -(int64_t)s->flo;
    return CLS_OK;
}

static unsigned flags_of(const cls_job *job)
{
    unsigned fl = 0;
    if (job->scaler) fl |= CLS_KF_PARAMS;
    if (job->clip) fl |= CLS_KF_CLIP;
    if (job->f) fl |= CLS_KF_FACTORS;
    return fl;
}

/* Statistics of rows [0, nrows) of the slice's columns in chunks of
 * `chunk` rows into st_part, then merged per column into st_out (with
 * params when `params`). */
static cls_status enqueue_stats(cls_devrun *r, unsigned q, const cls_slice *s, cl_mem x, uint64_t xoff,
                                uint64_t ld, uint64_t nrows, uint64_t chunk, int params)
{
    cls_job *job = r->job;
    cls_slot *sl = &r->dev->slot[q];
    cls_inflight *f = &r->inf[q];
    size_t chunks = (size_t)((nrows + chunk - 1) / chunk);
    uint64_t pstride = (uint64_t)chunks * s->ncols;
    int kid = kid_of(job, job->moments ? CLS_K_STATS_MV : CLS_K_STATS_MM);
    unsigned kk = kk_for(r, chunk, 2);
    kargs a = args_for(r, q, kid);
    arg_mem(&a, x);
    arg_u64(&a, xoff);
    arg_u32(&a, s->ncols);
    arg_u64(&a, nrows);
    arg_u64(&a, ld);
    arg_u32(&a, chunk);
    arg_u32(&a, kk);
    arg_mem(&a, sl->st_part);
    arg_mem(&a, sl->cn_part);
    arg_u64(&a, pstride);
    arg_imp(&a, job);
    cls_status st = launch(r, q, &a, f, cls_kernel_names[kid], items(r, s->ncols, kk), chunks);
    if (st != CLS_OK) return st;

    kargs b = args_for(r, q, kid_of(job, CLS_K_STATS_REDUCE));
    arg_mem(&b, sl->st_part);
    arg_mem(&b, sl->cn_part);
    arg_u64(&b, pstride);
    arg_u32(&b, chunks);
    arg_u32(&b, s->ncols);
    arg_u32(&b, job->moments);
    arg_mem(&b, sl->st_out);
    arg_mem(&b, sl->cn_out);
    arg_u64(&b, s->ncols);
    arg_u64(&b, 0);
    /* the imputing build clips the scaled fill like the values */
    arg_u32(&b, (params ? CLS_KF_WRITE_PARAMS : 0) | (job->imp_on && job->clip ? CLS_KF_CLIP : 0));
    arg_u32(&b, job->scaler);
    arg_real(&b, job->dtype, job->lo);
    arg_real(&b, job->dtype, job->hi);
    arg_mem(&b, sl->prm);
    arg_u64(&b, s->ncols);
    arg_imp(&b, job);
    if (b.st != CLS_OK) return b.st;
    cls_dev *d = r->dev;
    size_t global = roundup(s->ncols, b.local), local = b.local;
    CL_TRY(job->ctx, d, clEnqueueNDRangeKernel(d->q[q], b.k, 1, NULL, &global, &local, 0, NULL,
                                               cls_slice_event(f, CLS_EV_KERNEL, "stats_reduce")));
    return CLS_OK;
}

/* Statistics only, of whole groups or of all rows of a column block of one
 * (plan.c's FIT cut), into st_out entry g * ncols + c: the statistics
 * kernel with one chunk per group, each work-item reading its column block
 * of a group once, so the data is read at memory speed and no merge of row
 * ranges follows, on the device or the host. A group taller than a chunk
 * (CLS_FIT_CHUNK_ROWS; one group per slice) goes through the chunks and
 * their reduce. */
static cls_status enqueue_fit(cls_devrun *r, unsigned q, const cls_slice *s, cl_mem x, uint64_t xoff, uint64_t ld)
{
    cls_job *job = r->job;
    if (job->Rg > CLS_FIT_CHUNK_ROWS) return enqueue_stats(r, q, s, x, xoff, ld, s->nrows, CLS_FIT_CHUNK_ROWS, 0);
    cls_slot *sl = &r->dev->slot[q];
    int kid = job->moments ? CLS_K_STATS_MV : CLS_K_STATS_MM;
    unsigned kk = kk_for(r, job->Rg, 2);
    kargs a = args_for(r, q, kid);
    arg_mem(&a, x);
    arg_u64(&a, xoff);
    arg_u32(&a, s->ncols);
    arg_u64(&a, s->nrows);
    arg_u64(&a, ld);
    arg_u32(&a, job->Rg);
    arg_u32(&a, kk);
    arg_mem(&a, sl->st_out);
    arg_mem(&a, sl->cn_out);
    arg_u64(&a, s->ngroups * s->ncols);
    return launch(r, q, &a, &r->inf[q], cls_kernel_names[kid], items(r, s->ncols, kk), (size_t)s->ngroups);
}

/* The elementwise kernel over the slice, params from `prm` entry
 * (group - g0) * pld + pcol0 + c, planes `pstride` apart. */
static cls_status enqueue_apply_kernel(cls_devrun *r, unsigned q, const cls_slice *s, cl_mem x, uint64_t xoff,
                                       cl_mem y, uint64_t yoff, uint64_t ld, cl_mem prm, uint64_t pstride,
                                       uint64_t pld, uint64_t pcol0, uint64_t g0, const fbind *fb,
                                       unsigned flags)
{
    cls_job *job = r->job;
    /* A CPU work-item takes about 2048 vectors (launch overhead per item is
     * that of a function call); a narrow block gets more rows. A GPU wants
     * many short work-items. */
    unsigned kk = kk_for(r, 64, 1);
    uint64_t width = (s->ncols + r->dev->vec - 1) / r->dev->vec;
    uint64_t per = width < kk ? width : kk;
    uint64_t rpi = 16;
    if (r->dev->vec > 1) {
        rpi = 2048 / (per ? per : 1);
        if (rpi < 64) rpi = 64;
        if (rpi > 4096) rpi = 4096;
        if (r->dev->loop_limit && rpi * kk > r->dev->loop_limit) rpi = r->dev->loop_limit / kk;
    }
    kargs a = args_for(r, q, kid_of(job, CLS_K_APPLY));
    arg_mem(&a, x);
    arg_u64(&a, xoff);
    arg_mem(&a, y);
    arg_u64(&a, yoff);
    arg_u32(&a, s->ncols);
    arg_u64(&a, s->nrows);
    arg_u64(&a, ld);
    arg_u32(&a, rpi);
    arg_u32(&a, kk);
    arg_u32(&a, flags | nt_flag(r, s));
    arg_real(&a, job->dtype, job->lo);
    arg_real(&a, job->dtype, job->hi);
    arg_mem(&a, prm);
    arg_u64(&a, pstride);
    arg_u64(&a, pld);
    arg_u64(&a, pcol0);
    arg_u64(&a, s->row0);
    arg_u64(&a, job->Rg);
    arg_u64(&a, g0);
    arg_mem(&a, fb->m);
    arg_i64(&a, fb->off);
    arg_u64(&a, job->fsb);
    arg_u64(&a, job->fsr);
    arg_u64(&a, job->fsc);
    arg_u64(&a, job->R);
    arg_u64(&a, s->col0);
    arg_imp(&a, job);
    return launch(r, q, &a, &r->inf[q], "apply", items(r, s->ncols, kk), (size_t)((s->nrows + rpi - 1) / rpi));
}

/* The factor arguments of the discount and fused kernels, in their order:
 * f, foff, fsb, fsr, fsc, then the slice's first row, R and first column. */
static void arg_factors(kargs *a, const cls_job *job, const cls_slice *s, const fbind *fb)
{
    arg_mem(a, fb->m);
    arg_i64(a, fb->off);
    arg_u64(a, job->fsb);
    arg_u64(a, job->fsr);
    arg_u64(a, job->fsc);
    arg_u64(a, s->row0);
    arg_u64(a, job->R);
    arg_u64(a, s->col0);
}

/* Rows at least this many vectors wide take the discount kernel when the
 * discount is all there is: one contiguous run per work-item. */
#define CLS_DISCOUNT_MIN_VECTORS 64
/* Vectors per work-item there on a CPU: 16 KB of float64, the size at which
 * the runs stopped getting faster on PoCL (docs/PERFORMANCE.md, "The
 * discount"). */
#define CLS_DISCOUNT_RUN 256

static int use_discount(const cls_devrun *r, const cls_slice *s)
{
    return !r->job->scaler && r->job->f && s->ncols >= (size_t)CLS_DISCOUNT_MIN_VECTORS * r->dev->vec;
}

static cls_status enqueue_discount(cls_devrun *r, unsigned q, const cls_slice *s, cl_mem x, uint64_t xoff,
                                   cl_mem y, uint64_t yoff, uint64_t ld, const fbind *fb)
{
    cls_job *job = r->job;
    unsigned kk = r->dev->vec > 1 ? CLS_DISCOUNT_RUN : 1;
    if (r->dev->loop_limit && kk > r->dev->loop_limit) kk = r->dev->loop_limit;
    kargs a = args_for(r, q, CLS_K_DISCOUNT);
    arg_mem(&a, x);
    arg_u64(&a, xoff);
    arg_mem(&a, y);
    arg_u64(&a, yoff);
    arg_u32(&a, s->ncols);
    arg_u64(&a, ld);
    arg_u32(&a, kk);
    arg_u32(&a, nt_flag(r, s));
    arg_factors(&a, job, s, fb);
    return launch(r, q, &a, &r->inf[q], "discount", items(r, s->ncols, kk), (size_t)s->nrows);
}

static cls_status enqueue_fused(cls_devrun *r, unsigned q, const cls_slice *s, cl_mem x, uint64_t xoff,
                                cl_mem y, uint64_t yoff, uint64_t ld, const fbind *fb)
{
    cls_job *job = r->job;
    cls_slot *sl = &r->dev->slot[q];
    if (job->Rg > CLS_FUSED_ROWS) {
        /* too many rows for one work-item: chunked statistics, params on the
         * device, then the elementwise pass; still one queue, no host trip */
        cls_status st = enqueue_stats(r, q, s, x, xoff, ld, s->nrows, CLS_CHUNK_ROWS, 1);
        if (st != CLS_OK) return st;
        return enqueue_apply_kernel(r, q, s, x, xoff, y, yoff, ld, sl->prm, s->ncols, s->ncols, 0, s->group0,
                                    fb, flags_of(job));
    }
    int kid = kid_of(job, job->moments ? CLS_K_FIT_APPLY_MV : CLS_K_FIT_APPLY_MM);
    unsigned kk = kk_for(r, job->Rg, 3);
    kargs a = args_for(r, q, kid);
    arg_mem(&a, x);
    arg_u64(&a, xoff);
    arg_mem(&a, y);
    arg_u64(&a, yoff);
    arg_u32(&a, s->ncols);
    arg_u32(&a, job->Rg);
    arg_u64(&a, ld);
    arg_u64(&a, job->Rg * ld);
    arg_u32(&a, kk);
    arg_u32(&a, job->scaler);
    arg_u32(&a, flags_of(job) | nt_flag(r, s));
    arg_real(&a, job->dtype, job->lo);
    arg_real(&a, job->dtype, job->hi);
    arg_factors(&a, job, s, fb);
    arg_mem(&a, job->no_stats ? NULL : sl->st_out); /* NULL: the kernel skips them */
    arg_mem(&a, job->no_stats ? NULL : sl->cn_out);
    arg_u64(&a, s->ngroups * s->ncols);
    arg_imp(&a, job);
    return launch(r, q, &a, &r->inf[q], cls_kernel_names[kid], items(r, s->ncols, kk), (size_t)s->ngroups);
}

/* Params of the groups and columns the slice touches (params.c), packed
 * where the kernel reads them (a mapped buffer, stage.c), else uploaded. */
static cls_status upload_params(cls_devrun *r, unsigned q, const cls_slice *s)
{
    cls_job *job = r->job;
    cls_dev *d = r->dev;
    cls_slot *sl = &d->slot[q];
    size_t n = (size_t)s->ngroups * s->ncols;
    cls_params_pack(job, s, sl->prm_host);
    if (sl->prm_mapped) return CLS_OK;
    CL_TRY(job->ctx, d, clEnqueueWriteBuffer(d->q[q], sl->prm, job->res ? CL_TRUE : CL_FALSE, 0, cls_params_planes(job) * n * job->es,
                                              sl->prm_host, 0, NULL,
                                              cls_slice_event(&r->inf[q], CLS_EV_UPLOAD, "params")));
    return CLS_OK;
}

cls_status cls_slice_compute(cls_devrun *r, unsigned q, cls_slice *s, cl_mem x, uint64_t xoff, cl_mem y,
                             uint64_t yoff, uint64_t ld)
{
    cls_job *job = r->job;
    fbind fb;
    cls_status st = CLS_OK;
    if (!cls_op_reads_only(s->op)) st = bind_window(r, q, s, &r->inf[q], &fb);
    if (st != CLS_OK) return st;
    switch (s->op) {
    case CLS_OP_FUSED:
        return enqueue_fused(r, q, s, x, xoff, y, yoff, ld, &fb);
    case CLS_OP_STATS:
        return enqueue_stats(r, q, s, x, xoff, ld, s->nrows, CLS_CHUNK_ROWS, 0);
    case CLS_OP_FIT:
        return enqueue_fit(r, q, s, x, xoff, ld);
    case CLS_OP_APPLY:
        if (use_discount(r, s)) return enqueue_discount(r, q, s, x, xoff, y, yoff, ld, &fb);
        if (job->pcol && r->ptab) /* the call's table, bound once (stage.c) */
            return enqueue_apply_kernel(r, q, s, x, xoff, y, yoff, ld, r->ptab, job->G * job->C, job->C, s->col0,
                                        0, &fb, flags_of(job));
        if (job->pcol) {
            st = upload_params(r, q, s);
            if (st != CLS_OK) return st;
        }
        return enqueue_apply_kernel(r, q, s, x, xoff, y, yoff, ld, r->dev->slot[q].prm,
                                    (uint64_t)s->ngroups * s->ncols, s->ncols, 0, s->group0, &fb, flags_of(job));
    }
    return CLS_OK;
}

cls_status cls_slice_stats_download(cls_devrun *r, unsigned q, const cls_slice *s)
{
    if (s->op == CLS_OP_APPLY || (s->op == CLS_OP_FUSED && r->job->no_stats)) return CLS_OK;
    cls_job *job = r->job;
    cls_dev *d = r->dev;
    cls_slot *sl = &d->slot[q];
    size_t n = cls_op_per_group(s->op) ? (size_t)s->ngroups * s->ncols : s->ncols;
    /* planes K, REL, M2, MIN, MAX; without moments only MIN and MAX are defined */
    size_t p0 = job->moments ? 0 : 3, off = p0 * n * job->es;
    CL_TRY(job->ctx, d, clEnqueueReadBuffer(d->q[q], sl->st_out, CL_FALSE, off, (5 - p0) * n * job->es,
                                             (char *)sl->st_host + off, 0, NULL,
                                             cls_slice_event(&r->inf[q], CLS_EV_DOWNLOAD, "stats")));
    CL_TRY(job->ctx, d, clEnqueueReadBuffer(d->q[q], sl->cn_out, CL_FALSE, 0, 2 * n * sizeof(cl_uint),
                                             sl->cn_host, 0, NULL, cls_slice_event(&r->inf[q], CLS_EV_DOWNLOAD,
                                                                              "counts")));
    return CLS_OK;
}

