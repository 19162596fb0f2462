/* The counting passes' driver (passes.h): a shared cursor of units, one
 * worker per device, failover of a failed unit to the devices left. */
#include <stdlib.h>
#include <string.h>

#include "engine/passes.h"

typedef struct pass_state {
    cls_context    *ctx;
    cls_unit_fn     fn;
    void           *user;
    size_t          n, next;
    size_t         *retry;      /* units given back by a failed device */
    size_t          nretry;
    uint64_t       *tried;      /* per unit: devices it failed on (bit per device, 64 at most) */
    unsigned        workers;    /* not failed */
    cls_status      st;         /* CLS_OK, or the failure of a unit with no device left */
    pthread_mutex_t lock;
} pass_state;

typedef struct pass_worker {
    pass_state *s;
    cls_dev    *dev;
    pthread_t   thread;
} pass_worker;

/* The next unit for device bit `me`, or (size_t)-1 when none is left for it. */
static size_t take(pass_state *s, uint64_t me)
{
    for (size_t i = 0; i < s->nretry; i++)
        if (!(s->tried[s->retry[i]] & me)) {
            size_t u = s->retry[i];
            s->retry[i] = s->retry[--s->nretry];
            return u;
        }
    if (s->next < s->n) return s->next++;
    return (size_t)-1;
}

static void *worker(void *arg)
{
    pass_worker *w = arg;
    pass_state *s = w->s;
    uint64_t me = 1ull << (w->dev->index & 63);
    for (;;) {
        pthread_mutex_lock(&s->lock);
        size_t u = s->st == CLS_OK ? take(s, me) : (size_t)-1;
        pthread_mutex_unlock(&s->lock);
        if (u == (size_t)-1) break;
        cls_status st = s->fn(s->user, s->ctx, w->dev, u);
        if (st == CLS_OK) continue;
        pthread_mutex_lock(&s->lock);
        s->tried[u] |= me;
        s->workers--;
        if (s->workers == 0) s->st = st;
        else s->retry[s->nretry++] = u;
        pthread_mutex_unlock(&s->lock);
        break;
    }
    return NULL;
}

cls_status cls_passes_run(cls_context *ctx, cls_dtype t, size_t n, cls_unit_fn fn, void *user)
{
    if (n == 0) return CLS_OK;
    pass_state s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.fn = fn;
    s.user = user;
    s.n = n;
    s.retry = malloc(ctx->ndevs * sizeof *s.retry + 1);
    s.tried = calloc(n, sizeof *s.tried);
    pass_worker *w = calloc(ctx->ndevs + 1, sizeof *w);
    if (!s.retry || !s.tried || !w) {
        free(s.retry);
        free(s.tried);
        free(w);
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&s.lock, NULL);
    size_t nw = 0;
    for (size_t i = 0; i < ctx->ndevs; i++) {
        cls_dev *d = &ctx->devs[i];
        if (!d->alive || (t == CLS_F64 && !d->info.fp64)) continue;
        w[nw].s = &s;
        w[nw].dev = d;
        nw++;
    }
    s.workers = (unsigned)nw;
    cls_status st = CLS_OK;
    if (nw == 0) {
        st = cls_fail(ctx, CLS_E_UNSUPPORTED,
                      "float64 data needs a device with cl_khr_fp64 and none of the %zu selected has it "
                      "(rusticl on llvmpipe has no float64; convert the data to float32 or select PoCL)",
                      ctx->ndevs);
    } else if (nw == 1) {
        worker(&w[0]);
    } else {
        size_t started = 0;
        for (size_t i = 1; i < nw; i++)
            if (pthread_create(&w[i].thread, NULL, worker, &w[i]) == 0) started = i;
            else break;
        worker(&w[0]);
        for (size_t i = 1; i <= started; i++) pthread_join(w[i].thread, NULL);
        if (started + 1 < nw) {
            /* threads that never started leave their units to the others */
            pthread_mutex_lock(&s.lock);
            s.workers -= (unsigned)(nw - 1 - started);
            pthread_mutex_unlock(&s.lock);
        }
    }
    if (st == CLS_OK) st = s.st;
    if (st == CLS_OK && (s.next < s.n || s.nretry))
        st = cls_fail(ctx, CLS_E_DEVICE, "the devices failed before the work was done");
    pthread_mutex_destroy(&s.lock);
    free(s.retry);
    free(s.tried);
    free(w);
    return st;
}

cls_status cls_pass_input(cls_context *ctx, cls_dev *dev, const void *p, size_t bytes, cl_mem *out)
{
    cl_int e;
    cl_mem_flags fl = CL_MEM_READ_ONLY | (dev->zero_copy ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR);
    *out = clCreateBuffer(dev->cl, fl, bytes ? bytes : 1, (void *)p, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateBuffer(input)", e);
    return CLS_OK;
}

cls_status cls_pass_output(cls_context *ctx, cls_dev *dev, void *p, size_t bytes, cl_mem *out)
{
    if (!dev->zero_copy) return cls_pass_buffer(ctx, dev, CL_MEM_WRITE_ONLY, bytes, NULL, out);
    cl_int e;
    /* read-write: cls_pass_io() hands it out as the input too, in place */
    *out = clCreateBuffer(dev->cl, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes ? bytes : 1, p, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateBuffer(output)", e);
    return CLS_OK;
}

cls_status cls_pass_io(cls_context *ctx, cls_dev *dev, const void *x, void *y, size_t bytes, cl_mem *in,
                       cl_mem *out)
{
    if (y) {
        cls_status st = cls_pass_output(ctx, dev, y, bytes, out);
        if (st != CLS_OK) return st;
        if (y == x && dev->zero_copy) {
            *in = *out;
            clRetainMemObject(*in);
            return CLS_OK;
        }
    }
    return cls_pass_input(ctx, dev, x, bytes, in);
}

cls_status cls_pass_output_back(cls_context *ctx, cls_dev *dev, cl_mem m, void *p, size_t bytes)
{
    if (dev->zero_copy || !bytes) return CLS_OK;
    CL_TRY(ctx, dev, clEnqueueReadBuffer(dev->q[0], m, CL_TRUE, 0, bytes, p, 0, NULL, NULL));
    return CLS_OK;
}

cls_status cls_pass_buffer(cls_context *ctx, cls_dev *dev, cl_mem_flags flags, size_t bytes, const void *init,
                           cl_mem *out)
{
    cl_int e;
    if (init) flags |= CL_MEM_COPY_HOST_PTR;
    *out = clCreateBuffer(dev->cl, flags, bytes ? bytes : 1, (void *)init, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateBuffer", e);
    return CLS_OK;
}

cls_status cls_pass_map(cls_context *ctx, cls_dev *dev, cl_mem m, size_t bytes, void **out)
{
    cl_int e;
    *out = clEnqueueMapBuffer(dev->q[0], m, CL_TRUE, CL_MAP_READ, 0, bytes ? bytes : 1, 0, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        *out = NULL;
        return cls_fail_cl(ctx, dev, "clEnqueueMapBuffer", e);
    }
    return CLS_OK;
}

cls_status cls_pass_unmap(cls_context *ctx, cls_dev *dev, cl_mem m, void *p, cls_status st)
{
    if (!p) return st;
    cl_int e = clEnqueueUnmapMemObject(dev->q[0], m, p, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = clFinish(dev->q[0]);
    if (e != CL_SUCCESS && st == CLS_OK) st = cls_fail_cl(ctx, dev, "clEnqueueUnmapMemObject", e);
    return st;
}

static void karg(cls_kargs *a, size_t size, const void *v)
{
    if (a->st != CLS_OK) return;
    cl_int e = clSetKernelArg(a->k, a->i, size, v);
    if (e != CL_SUCCESS) a->st = cls_fail_cl(a->ctx, a->d, "clSetKernelArg", e);
    a->i++;
}

void cls_karg_mem(cls_kargs *a, cl_mem m) { karg(a, sizeof m, &m); }
void cls_karg_u32(cls_kargs *a, uint64_t v) { cl_uint x = (cl_uint)v; karg(a, sizeof x, &x); }
void cls_karg_u64(cls_kargs *a, uint64_t v) { cl_ulong x = v; karg(a, sizeof x, &x); }
void cls_karg_real(cls_kargs *a, double v)
{
    if (a->t == CLS_F64) karg(a, sizeof v, &v);
    else {
        float f = (float)v;
        karg(a, sizeof f, &f);
    }
}

cls_status cls_pass_launch_tiles(cls_kargs *a, size_t lx, size_t ly, size_t g0, size_t g1)
{
    if (a->st != CLS_OK) return a->st;
    if (!lx) lx = 1;
    if (!ly) ly = 1;
    if (!g1) g1 = 1;
    size_t gl[2] = {(g0 + lx - 1) / lx * lx, (g1 + ly - 1) / ly * ly}, lo[2] = {lx, ly};
    cl_command_queue q = a->d->q[0];
    CL_TRY(a->ctx, a->d, clEnqueueNDRangeKernel(q, a->k, 2, NULL, gl, lo, 0, NULL, NULL));
    CL_TRY(a->ctx, a->d, clFinish(q));
    return CLS_OK;
}

cls_status cls_pass_launch(cls_kargs *a, size_t local, size_t g0, size_t g1)
{
    return cls_pass_launch_tiles(a, local, 1, g0, g1);
}
