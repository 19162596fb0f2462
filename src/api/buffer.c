/* The public calls on data already on a device: cls_fit,
 * cls_transform, cls_fit_transform. Owns their argument
 * checks, made before anything is enqueued: the buffers (valid, of the
 * device's OpenCL context, large enough for shape and offset, an output
 * that may be written and does not overlap the input unless it is the
 * input), the wait list (events of that context) and the device index.
 * Then the calls are those of host arrays (pipeline.c) with the data in
 * the buffers (resident.c runs them). */
#include <string.h>

#include "engine/job.h"
#include "api/entries.h"

/* The root buffer of `m` and the offset of m's first byte in it. */
static cl_int root_of(cl_mem m, cl_mem *root, size_t *off)
{
    *root = m;
    *off = 0;
    for (int depth = 0; depth < 4; depth++) {
        cl_mem parent = NULL;
        size_t o = 0;
        cl_int e = clGetMemObjectInfo(*root, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL);
        if (e != CL_SUCCESS) return e;
        if (!parent) return CL_SUCCESS;
        e = clGetMemObjectInfo(*root, CL_MEM_OFFSET, sizeof o, &o, NULL);
        if (e != CL_SUCCESS) return e;
        *off += o;
        *root = parent;
    }
    return CL_SUCCESS;
}

static size_t elem_size(cls_dtype t) { return t == CLS_F64 ? 8 : 4; }

/* Checks buffer `b` for device d; its shape as an array (data NULL) into *a. */
static cls_status check_buffer(cls_context *ctx, const cls_dev *d, const cls_buffer *b, const char *what,
                               int output, cls_array *a)
{
    if (!b) return cls_fail(ctx, CLS_E_ARG, "%s is NULL", what);
    if (!b->mem) return cls_fail(ctx, CLS_E_ARG, "%s: mem is NULL", what);
    *a = (cls_array){.data = NULL, .dtype = b->dtype, .batch = b->batch, .rows = b->rows, .cols = b->cols};
    cls_status st = cls_check_shape(ctx, a, what);
    if (st != CLS_OK) return st;
    size_t es = elem_size(b->dtype);
    if (b->offset % es)
        return cls_fail(ctx, CLS_E_ARG, "%s: offset %zu is not a multiple of the element size (%zu bytes)", what,
                        b->offset, es);
    cl_context mc = NULL;
    cl_uint refs = 0;
    size_t size = 0;
    cl_mem_flags flags = 0;
    cl_int e = clGetMemObjectInfo(b->mem, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    if (e == CL_SUCCESS) e = clGetMemObjectInfo(b->mem, CL_MEM_CONTEXT, sizeof mc, &mc, NULL);
    if (e == CL_SUCCESS) e = clGetMemObjectInfo(b->mem, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (e == CL_SUCCESS) e = clGetMemObjectInfo(b->mem, CL_MEM_FLAGS, sizeof flags, &flags, NULL);
    if (e != CL_SUCCESS || refs == 0)
        return cls_fail(ctx, CLS_E_ARG, "%s: mem is not a valid cl_mem (released?): clGetMemObjectInfo: %s", what,
                        e != CL_SUCCESS ? cls_cl_error_name(e) : "reference count 0");
    if (mc != d->cl)
        return cls_fail(ctx, CLS_E_ARG, "%s: mem belongs to another OpenCL context than device %zu's (%s)", what,
                        d->index, d->info.name);
    size_t bytes = b->batch * b->rows * b->cols * es; /* cls_check_shape ruled out overflow */
    if (b->offset > size || bytes > size - b->offset)
        return cls_fail(ctx, CLS_E_ARG,
                        "%s: %zu x %zu x %zu %s (%zu bytes) at offset %zu does not fit the buffer's %zu bytes", what,
                        b->batch, b->rows, b->cols, b->dtype == CLS_F64 ? "float64" : "float32", bytes, b->offset,
                        size);
    if (output && (flags & CL_MEM_READ_ONLY))
        return cls_fail(ctx, CLS_E_ARG, "%s: mem is read-only (CL_MEM_READ_ONLY) and cannot take the output", what);
    if (!output && (flags & CL_MEM_WRITE_ONLY))
        return cls_fail(ctx, CLS_E_ARG, "%s: mem is write-only (CL_MEM_WRITE_ONLY) and cannot be read", what);
    return CLS_OK;
}

/* The device, the wait list, and the resident description of the call. */
static cls_status check_sync(cls_context *ctx, const cls_sync *y, cls_resident *res)
{
    memset(res, 0, sizeof *res);
    res->sync = y;
    res->device = y ? y->device : 0;
    if (res->device >= ctx->ndevs)
        return cls_fail(ctx, CLS_E_ARG, "cls_sync.device = %zu: the context has %zu device(s)", res->device,
                        ctx->ndevs);
    if (!y) return CLS_OK;
    if (y->nwait && !y->wait) return cls_fail(ctx, CLS_E_ARG, "cls_sync.nwait = %u but wait is NULL", y->nwait);
    for (unsigned i = 0; i < y->nwait; i++) {
        cl_context ec = NULL;
        cl_int e = y->wait[i] ? clGetEventInfo(y->wait[i], CL_EVENT_CONTEXT, sizeof ec, &ec, NULL) : CL_INVALID_EVENT;
        if (e != CL_SUCCESS)
            return cls_fail(ctx, CLS_E_ARG, "cls_sync.wait[%u] is not a valid event: %s", i, cls_cl_error_name(e));
        if (ec != ctx->devs[res->device].cl)
            return cls_fail(ctx, CLS_E_ARG, "cls_sync.wait[%u] belongs to another OpenCL context", i);
    }
    return CLS_OK;
}

/* Input and output: the same array (in place), or apart. */
static cls_status check_pair(cls_context *ctx, const cls_buffer *in, const cls_array *ia, const cls_buffer *out,
                             const cls_array *oa)
{
    if (ia->dtype != oa->dtype || ia->batch != oa->batch || ia->rows != oa->rows || ia->cols != oa->cols)
        return cls_fail(ctx, CLS_E_ARG, "output %zu x %zu x %zu %s differs from input %zu x %zu x %zu %s",
                        oa->batch, oa->rows, oa->cols, oa->dtype == CLS_F64 ? "float64" : "float32", ia->batch,
                        ia->rows, ia->cols, ia->dtype == CLS_F64 ? "float64" : "float32");
    if (in->mem == out->mem && in->offset == out->offset) return CLS_OK;
    cl_mem ri, ro;
    size_t oi, oo;
    if (root_of(in->mem, &ri, &oi) != CL_SUCCESS || root_of(out->mem, &ro, &oo) != CL_SUCCESS) return CLS_OK;
    size_t n = ia->batch * ia->rows * ia->cols * elem_size(ia->dtype);
    size_t a = oi + in->offset, b = oo + out->offset;
    if (ri == ro && a < b + n && b < a + n)
        return cls_fail(ctx, CLS_E_ARG, "input and output overlap in one buffer without being the same array");
    return CLS_OK;
}

static cls_status start(cls_context *ctx, const cls_sync *sync, cls_resident *res)
{
    if (sync && sync->done) *sync->done = NULL;
    cls_status st = cls_check_ctx(ctx);
    if (st == CLS_OK) st = check_sync(ctx, sync, res);
    return st;
}

cls_status cls_buf_fit(cls_context *ctx, const cls_pipeline *p, const cls_buffer *x, const cls_sync *sync,
                          cls_stats **out)
{
    cls_resident res;
    cls_status st = start(ctx, sync, &res);
    if (st != CLS_OK) return st;
    if (!out) return cls_fail(ctx, CLS_E_ARG, "cls_fit: out is NULL");
    *out = NULL;
    cls_array xa;
    st = check_buffer(ctx, &ctx->devs[res.device], x, "input", 0, &xa);
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, &xa, NULL);
    if (st == CLS_OK && p->clean)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "buffer calls take no cleaning stage (clean arrays in host memory)");
    if (st == CLS_OK && p->inverse)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit: an inverse pipeline cannot be fitted");
    if (st != CLS_OK) return st;
    res.in = x->mem;
    res.in_off = x->offset / elem_size(x->dtype);
    return cls_do_fit(ctx, p, &xa, &res, out);
}

cls_status cls_buf_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_buffer *in,
                                const cls_buffer *out, const cls_sync *sync)
{
    cls_resident res;
    cls_status st = start(ctx, sync, &res);
    if (st != CLS_OK) return st;
    cls_pipeline recorded;
    if (!p) {
        if (!s) return cls_fail(ctx, CLS_E_ARG, "cls_transform: no pipeline and no statistics to take it from");
        memset(&recorded, 0, sizeof recorded);
        recorded.scaler = s->info.scaler;
        recorded.scope = s->info.scope;
        recorded.lo = s->info.lo;
        recorded.hi = s->info.hi;
        recorded.clip = s->info.clip;
        p = &recorded;
    }
    const cls_dev *d = &ctx->devs[res.device];
    cls_array ia, oa;
    st = check_buffer(ctx, d, in, "input", 0, &ia);
    if (st == CLS_OK) st = check_buffer(ctx, d, out, "output", 1, &oa);
    if (st == CLS_OK) st = check_pair(ctx, in, &ia, out, &oa);
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, &ia, NULL);
    if (st == CLS_OK && p->clean)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "buffer calls take no cleaning stage (clean arrays in host memory)");
    if (st == CLS_OK) st = cls_check_stats(ctx, p, s, &ia);
    if (st != CLS_OK) return st;
    res.in = in->mem;
    res.in_off = in->offset / elem_size(in->dtype);
    res.out = out->mem;
    res.out_off = out->offset / elem_size(out->dtype);
    return cls_do_transform(ctx, p, s, &ia, &oa, &res);
}

cls_status cls_buf_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_buffer *in,
                                    const cls_buffer *out, cls_stats **fitted, const cls_sync *sync)
{
    cls_resident res;
    cls_status st = start(ctx, sync, &res);
    if (st != CLS_OK) return st;
    if (fitted) *fitted = NULL;
    const cls_dev *d = &ctx->devs[res.device];
    cls_array ia, oa;
    st = check_buffer(ctx, d, in, "input", 0, &ia);
    if (st == CLS_OK) st = check_buffer(ctx, d, out, "output", 1, &oa);
    if (st == CLS_OK) st = check_pair(ctx, in, &ia, out, &oa);
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, &ia, NULL);
    if (st == CLS_OK && p->clean)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "buffer calls take no cleaning stage (clean arrays in host memory)");
    if (st == CLS_OK && p->inverse)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: inverse needs fitted statistics; use "
                      "cls_transform");
    if (st != CLS_OK) return st;
    res.in = in->mem;
    res.in_off = in->offset / elem_size(in->dtype);
    res.out = out->mem;
    res.out_off = out->offset / elem_size(out->dtype);
    return cls_do_fit_transform(ctx, p, &ia, &oa, &res, fitted);
}
