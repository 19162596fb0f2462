/* cls_fit() of an array in a file across processes (a pipeline's combine
 * hook): each process's part streamed through the buffer pool for what
 * merges (cls_file_fit), or, where the scaler's descriptor needs exact
 * quantiles, mapped read-only so that the counting passes read it in place
 * as often as they need; the steps across processes are the planner's
 * (plan/combined.c); cls_fit_transform() without a cleaning stage is that
 * fit and each process's own transform. Calls stream.c and the planner. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "api/entries.h"
#include "engine/job.h"
#include "plan/route.h"

/* Maps x's bytes read-only: *y the same array in host memory, *base and
 * *len for munmap. */
static cls_status map_part(cls_context *ctx, const cls_array *x, cls_array *y, void **base, size_t *len)
{
    *y = *x;
    y->where = CLS_IN_HOST;
    y->data = NULL;
    size_t bytes = cls_array_bytes(x);
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t at = pg > 0 ? x->offset / (uint64_t)pg * (uint64_t)pg : x->offset;
    size_t pre = (size_t)(x->offset - at);
    void *m = mmap(NULL, bytes + pre, PROT_READ, MAP_SHARED, x->fd, (off_t)at);
    if (m == MAP_FAILED) {
        char fd[32];
        snprintf(fd, sizeof fd, "file descriptor %d", x->fd);
        return cls_fail(ctx, CLS_E_IO, "mmap of %s (%zu bytes at offset %llu) for the counting passes failed",
                        x->path ? x->path : fd, bytes, (unsigned long long)x->offset);
    }
    *base = m;
    *len = bytes + pre;
    y->data = (char *)m + pre;
    return CLS_OK;
}

cls_status cls_file_fit_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *x,
                                 cls_stats **out)
{
    if (out) *out = NULL;
    cls_array shape = *x;
    shape.where = CLS_IN_HOST;
    shape.data = NULL;
    if (!x->batch || !x->rows || !p->combine->stats) return cls_host_fit_combined(ctx, p, &shape, out);
    if (r->quantiles) {
        cls_array y;
        void *base = NULL;
        size_t len = 0;
        cls_status st = map_part(ctx, x, &y, &base, &len);
        if (st != CLS_OK) return cls_fit_combine(ctx, p, &shape, st, NULL, out);
        st = cls_host_fit_combined(ctx, p, &y, out);
        munmap(base, len);
        return st;
    }
    cls_pipeline q = *p;
    q.combine = NULL;
    cls_file_array f = {.fd = x->fd, .offset = x->offset, .dtype = x->dtype, .batch = x->batch, .rows = x->rows,
                        .cols = x->cols, .name = x->path};
    cls_stats *s = NULL;
    cls_status st = out ? cls_file_fit(ctx, &q, r, &f, x->stream, &s) : cls_fail(ctx, CLS_E_ARG, "cls_fit: out is NULL");
    return cls_fit_combine(ctx, p, &shape, st, s, out);
}

cls_status cls_file_fit_transform_across(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                         const cls_array *in, const cls_array *out, cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    cls_stats *s = NULL;
    cls_status st = cls_file_fit_combined(ctx, p, r, in, &s);
    if (st != CLS_OK) return st; /* every process returns it */
    if (in->batch && in->rows) {
        cls_pipeline q = *p;
        q.combine = NULL;
        cls_file_array a = {.fd = in->fd, .offset = in->offset, .dtype = in->dtype, .batch = in->batch,
                            .rows = in->rows, .cols = in->cols, .name = in->path};
        cls_file_array b = {.fd = out->fd, .offset = out->offset, .dtype = out->dtype, .batch = out->batch,
                            .rows = out->rows, .cols = out->cols, .name = out->path};
        st = cls_file_transform(ctx, &q, s, &a, &b, in->stream);
    }
    st = p->combine->stats(p->combine->user, st, NULL, 0);
    if (st == CLS_OK && fitted) *fitted = s;
    else cls_stats_destroy(s);
    return st;
}
