/* The sort regime's windows sorted by every work-item at once (regime.h's
 * cls_wsort; the kernel and its phases: cl/sort.cl's wsort). */
#include "engine/passes.h"
#include "quantiles/regime.h"

/* cl/sort.cl's WS_TILE_MAX: the local array of a tile */
#define WS_TILE_MAX 1024u

int cls_sort_parallel(const cls_context *ctx, const cls_dev *d)
{
    if (ctx->sort_parallel) return ctx->sort_parallel > 0;
    return cls_pass_gpu(d);
}

static void args(cls_kargs *a, const cls_wsort_args *w, uint32_t phase, uint64_t width, int src_b)
{
    a->i = 0;
    cls_karg_mem(a, w->x);
    cls_karg_u64(a, w->xoff);
    cls_karg_u32(a, w->ncols);
    cls_karg_u32(a, w->rows);
    cls_karg_u64(a, w->ld);
    cls_karg_u64(a, w->gstride);
    cls_karg_u64(a, w->e0);
    cls_karg_u32(a, w->qflags);
    cls_karg_real(a, w->sent);
    cls_karg_mem(a, w->cen);
    cls_karg_mem(a, w->flo);
    cls_karg_mem(a, w->fhi);
    cls_karg_mem(a, w->scr);
    cls_karg_mem(a, w->cnt);
    cls_karg_u64(a, w->cnt_off);
    cls_karg_u64(a, w->n_e);
    cls_karg_u32(a, phase);
    cls_karg_u32(a, width);
    cls_karg_u32(a, (uint32_t)src_b);
}

cls_status cls_wsort(cls_context *ctx, cls_dev *d, cls_dtype t, const cls_wsort_args *w)
{
    if (w->n_e == 0 || w->rows == 0) return CLS_OK;
    cls_kargs a = {ctx, d, NULL, 0, t, CLS_OK};
    size_t local = 0, wg = 0;
    cls_status st = cls_kernel_get(ctx, d, CLS_K_WSORT, t, 0, &a.k, &local, NULL);
    if (st != CLS_OK) return st;
    cl_int e = clGetKernelWorkGroupInfo(a.k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, d, "clGetKernelWorkGroupInfo", e);
    /* a work-group of a power of two items, up to 256, each taking up to
     * four keys of a tile: the smallest power of two that holds the rows,
     * at most WS_TILE_MAX */
    size_t L = 1;
    while (L * 2 <= wg && L * 2 <= 256) L *= 2;
    uint64_t T = 1;
    while (T < w->rows && T < 4 * L && T < WS_TILE_MAX) T *= 2;
    size_t L0 = L < T ? L : (size_t)T;
    unsigned levels = 0;
    for (uint64_t r = T; r < w->rows; r *= 2) levels++;
    /* the last merge writes a: phase 0 starts in b after an odd number */
    int src_b = levels & 1;
    uint64_t tpe = (w->rows + T - 1) / T;
    args(&a, w, 0, T, src_b);
    st = cls_pass_launch(&a, L0, (size_t)(w->n_e * tpe * L0), 1);
    for (uint64_t r = T; st == CLS_OK && r < w->rows; r *= 2) {
        args(&a, w, 1, r, src_b);
        st = cls_pass_launch(&a, L, (size_t)(w->n_e * w->rows), 1);
        src_b = !src_b;
    }
    if (st == CLS_OK) {
        args(&a, w, 2, 0, 0);
        st = cls_pass_launch(&a, L, (size_t)w->n_e, 1);
    }
    return st;
}
