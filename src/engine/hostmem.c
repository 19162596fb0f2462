/* cls_host_alloc(): page-aligned host memory that discrete devices reach by
 * DMA. Pinned memory comes from a CL_MEM_ALLOC_HOST_PTR buffer of the
 * platform context of the first staging device, mapped once and kept mapped
 * (NVIDIA's driver moves such memory at full bus speed). Without a staging
 * device it is plain page-aligned memory, which host-unified devices use in
 * place. */
#include <stdlib.h>

#include "internal.h"

static cls_dev *first_staging(cls_context *ctx)
{
    for (size_t i = 0; i < ctx->ndevs; i++)
        if (!ctx->devs[i].zero_copy) return &ctx->devs[i];
    return NULL;
}

cls_status cls_host_alloc(cls_context *ctx, size_t bytes, void **out)
{
    if (!ctx || !out || bytes == 0) return ctx ? cls_fail(ctx, CLS_E_ARG, "cls_host_alloc: bytes = 0 or out = NULL") : CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "cls_host_alloc: the context failed to initialise");
    *out = NULL;
    cls_hostmem *h = calloc(1, sizeof *h);
    if (!h) return cls_fail(ctx, CLS_E_NOMEM, "cls_host_alloc: out of memory");
    cls_dev *d = first_staging(ctx);
    if (d) {
        cl_int e;
        h->buf = clCreateBuffer(d->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &e);
        if (e != CL_SUCCESS) {
            free(h);
            return cls_fail_cl(ctx, d, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", e);
        }
        h->ptr = clEnqueueMapBuffer(d->q[0], h->buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                    NULL, NULL, &e);
        if (e != CL_SUCCESS) {
            clReleaseMemObject(h->buf);
            free(h);
            return cls_fail_cl(ctx, d, "clEnqueueMapBuffer", e);
        }
        h->q = d->q[0];
        h->cl = d->cl;
    } else if (posix_memalign(&h->ptr, 4096, bytes) != 0) {
        free(h);
        return cls_fail(ctx, CLS_E_NOMEM, "cls_host_alloc: out of memory for %zu bytes", bytes);
    }
    h->bytes = bytes;
    h->next = ctx->hostmem;
    ctx->hostmem = h;
    *out = h->ptr;
    return CLS_OK;
}

static void release(cls_hostmem *h)
{
    if (h->buf) {
        cl_event ev = NULL;
        if (clEnqueueUnmapMemObject(h->q, h->buf, h->ptr, 0, NULL, &ev) == CL_SUCCESS && ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        clReleaseMemObject(h->buf);
    } else {
        free(h->ptr);
    }
    free(h);
}

void cls_host_free(cls_context *ctx, void *p)
{
    if (!ctx || !p) return;
    for (cls_hostmem **x = &ctx->hostmem; *x; x = &(*x)->next) {
        if ((*x)->ptr == p) {
            cls_hostmem *h = *x;
            *x = h->next;
            release(h);
            return;
        }
    }
}

void cls_hostmem_release_all(cls_context *ctx)
{
    while (ctx->hostmem) {
        cls_hostmem *h = ctx->hostmem;
        ctx->hostmem = h->next;
        release(h);
    }
}

int cls_hostmem_pinned(const cls_context *ctx, const void *p, size_t len, cl_context cl)
{
    const char *c = p;
    for (const cls_hostmem *h = ctx->hostmem; h; h = h->next) {
        const char *b = h->ptr;
        if (h->buf && h->cl == cl && c >= b && c + len <= b + h->bytes) return 1;
    }
    return 0;
}
