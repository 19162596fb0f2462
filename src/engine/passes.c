/* The counting passes' driver (passes.h): a shared cursor of units, one
 * worker per device, failover of a failed unit to the devices left. */
#include <stdlib.h>
#include <string.h>

#include "engine/passes.h"
#include "util/table.h"
#include "util/pool.h"

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

/* ---- transfers of a device that does not share host memory ----
 * Through pinned memory of the device's own (pass_pinned, kept across
 * calls), two halves in turn: the pool's threads copy one half while the
 * device moves the other. The driver's own path from pageable memory
 * (clCreateBuffer's CL_MEM_COPY_HOST_PTR, a map of a device buffer) runs
 * at a fraction of the bus on a discrete GPU (../GPU.md: 6.5 against 54
 * GB/s on the H200 machine), and a map pins fresh host memory each time.
 * Small transfers go straight. */
#define PASS_HALF ((size_t)8 << 20)
#define PASS_DIRECT ((size_t)256 << 10)
#define PASS_PIECE ((size_t)1 << 20)

static cls_status pass_staging(cls_context *ctx, cls_dev *d)
{
    if (d->pass_pinned) return CLS_OK;
    cl_int e;
    d->pass_pinned = clCreateBuffer(d->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, 2 * PASS_HALF, NULL, &e);
    if (e != CL_SUCCESS) {
        d->pass_pinned = NULL;
        return cls_fail_cl(ctx, d, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", e);
    }
    d->pass_host = clEnqueueMapBuffer(d->q[0], d->pass_pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                      2 * PASS_HALF, 0, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        d->pass_host = NULL;
        clReleaseMemObject(d->pass_pinned);
        d->pass_pinned = NULL;
        return cls_fail_cl(ctx, d, "clEnqueueMapBuffer", e);
    }
    d->pass_cap = 2 * PASS_HALF;
    return CLS_OK;
}

typedef struct pass_copy {
    char       *dst;
    const char *src;
    size_t      n;
} pass_copy;

static void copy_piece(void *arg, size_t i)
{
    pass_copy *c = arg;
    size_t o = i * PASS_PIECE, n = c->n - o < PASS_PIECE ? c->n - o : PASS_PIECE;
    memcpy(c->dst + o, c->src + o, n);
}

static void copy_all(cls_context *ctx, void *dst, const void *src, size_t n)
{
    pass_copy c = {dst, src, n};
    cls_pool_run(ctx->pool, (n + PASS_PIECE - 1) / PASS_PIECE, copy_piece, &c);
}

static cls_status wait_release(cls_context *ctx, cls_dev *d, cl_event *ev, cls_status st)
{
    if (!*ev) return st;
    cl_int e = clWaitForEvents(1, ev);
    clReleaseEvent(*ev);
    *ev = NULL;
    if (e != CL_SUCCESS && st == CLS_OK) st = cls_fail_cl(ctx, d, "clWaitForEvents", e);
    return st;
}

/* Host [p, p + bytes) into m at offset 0, blocking. */
static cls_status pass_write(cls_context *ctx, cls_dev *d, cl_mem m, const void *p, size_t bytes)
{
    if (bytes <= PASS_DIRECT) {
        CL_TRY(ctx, d, clEnqueueWriteBuffer(d->q[0], m, CL_TRUE, 0, bytes, p, 0, NULL, NULL));
        return CLS_OK;
    }
    cls_status st = pass_staging(ctx, d);
    cl_event ev[2] = {NULL, NULL};
    for (size_t o = 0, i = 0; st == CLS_OK && o < bytes; o += PASS_HALF, i ^= 1) {
        size_t n = bytes - o < PASS_HALF ? bytes - o : PASS_HALF;
        char *h = (char *)d->pass_host + i * PASS_HALF;
        st = wait_release(ctx, d, &ev[i], st);
        if (st != CLS_OK) break;
        copy_all(ctx, h, (const char *)p + o, n);
        cl_int e = clEnqueueWriteBuffer(d->q[0], m, CL_FALSE, o, n, h, 0, NULL, &ev[i]);
        if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clEnqueueWriteBuffer", e);
    }
    st = wait_release(ctx, d, &ev[0], st);
    return wait_release(ctx, d, &ev[1], st);
}

/* m [0, bytes) into host memory p, blocking. */
static cls_status pass_read(cls_context *ctx, cls_dev *d, cl_mem m, void *p, size_t bytes)
{
    if (bytes <= PASS_DIRECT) {
        CL_TRY(ctx, d, clEnqueueReadBuffer(d->q[0], m, CL_TRUE, 0, bytes, p, 0, NULL, NULL));
        return CLS_OK;
    }
    cls_status st = pass_staging(ctx, d);
    cl_event ev[2] = {NULL, NULL};
    size_t prev = 0, prev_n = 0;
    int have = 0;
    /* read half i while the pool copies out the half read before */
    for (size_t o = 0, i = 0; st == CLS_OK && o < bytes; o += PASS_HALF, i ^= 1) {
        size_t n = bytes - o < PASS_HALF ? bytes - o : PASS_HALF;
        cl_int e = clEnqueueReadBuffer(d->q[0], m, CL_FALSE, o, n, (char *)d->pass_host + i * PASS_HALF, 0, NULL,
                                       &ev[i]);
        if (e != CL_SUCCESS) {
            st = cls_fail_cl(ctx, d, "clEnqueueReadBuffer", e);
            break;
        }
        if (have) {
            st = wait_release(ctx, d, &ev[i ^ 1], st);
            if (st == CLS_OK) copy_all(ctx, (char *)p + prev, (char *)d->pass_host + (i ^ 1) * PASS_HALF, prev_n);
        }
        prev = o;
        prev_n = n;
        have = 1;
    }
    if (st == CLS_OK && have) {
        size_t last = (prev / PASS_HALF) & 1;
        st = wait_release(ctx, d, &ev[last], st);
        if (st == CLS_OK) copy_all(ctx, (char *)p + prev, (char *)d->pass_host + last * PASS_HALF, prev_n);
    }
    st = wait_release(ctx, d, &ev[0], st);
    return wait_release(ctx, d, &ev[1], st);
}

cls_status cls_pass_input(cls_context *ctx, cls_dev *dev, const void *p, size_t bytes, cl_mem *out)
{
    cl_int e;
    if (dev->zero_copy) {
        *out = clCreateBuffer(dev->cl, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes ? bytes : 1, (void *)p, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateBuffer(input)", e);
        return CLS_OK;
    }
    *out = clCreateBuffer(dev->cl, CL_MEM_READ_ONLY, bytes ? bytes : 1, NULL, &e);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateBuffer(input)", e);
    cls_status st = bytes ? pass_write(ctx, dev, *out, p, bytes) : CLS_OK;
    if (st != CLS_OK) {
        clReleaseMemObject(*out);
        *out = NULL;
    }
    return st;
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
    return pass_read(ctx, dev, m, p, bytes);
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

cls_status cls_pass_result_buffer(cls_context *ctx, cls_dev *d, cl_mem_flags fl, size_t bytes, void **host,
                                  cl_mem *out)
{
    *host = NULL;
    if (!d->zero_copy || bytes < CLS_PASS_HOST_MIN) return cls_pass_buffer(ctx, d, fl, bytes, NULL, out);
    if (!(*host = cls_table_alloc(bytes))) return cls_fail(ctx, CLS_E_NOMEM, "out of host memory for %zu bytes", bytes);
    cl_int e;
    *out = clCreateBuffer(d->cl, fl | CL_MEM_USE_HOST_PTR, bytes, *host, &e);
    if (e != CL_SUCCESS) {
        cls_table_free(*host, bytes);
        *host = NULL;
        *out = NULL;
        return cls_fail_cl(ctx, d, "clCreateBuffer", e);
    }
    return CLS_OK;
}

cls_status cls_pass_map(cls_context *ctx, cls_dev *dev, cl_mem m, size_t bytes, void **out)
{
    if (!dev->zero_copy) {
        /* a copy in host memory of our own (cls_pass_unmap frees it) */
        *out = malloc(bytes ? bytes : 1);
        if (!*out) return cls_fail(ctx, CLS_E_NOMEM, "out of host memory for %zu bytes", bytes);
        cls_status st = bytes ? pass_read(ctx, dev, m, *out, bytes) : CLS_OK;
        if (st != CLS_OK) {
            free(*out);
            *out = NULL;
        }
        return st;
    }
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
    if (!dev->zero_copy) {
        free(p);
        return st;
    }
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
