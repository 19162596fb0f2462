/* k-sigma clipping of short groups in one pass (clip_fast.h): units of
 * whole statistics groups that every device able to run the dtype pulls.
 * A GPU runs cl/clip_local.cl's kernel (a column per work-item, its rows
 * in local memory), any other device cl/clip.cl's (a block of 4 or 8
 * columns per work-item in the lanes of vectors, in private memory).
 * Each unit owns its entries of the result tables, so no lock.
 * Calls: passes.c (the units on the devices), program.c (the kernels). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clean/clip_fast.h"
#include "engine/passes.h"
#include "quantiles/regime.h"
#include "util/table.h"

/* Bytes of data per unit: units small enough for several devices to share
 * seed-A's 18 matrices; a group larger than CLS_XGROUP_MAX takes the
 * multi-pass path (its buffer would be one allocation). */
#define CLS_XUNIT_BYTES ((uint64_t)16 << 20)
#define CLS_XGROUP_MAX ((uint64_t)128 << 20)

#define CLS_XF_SENT  1u
#define CLS_XF_MEAN  2u
#define CLS_XF_MAD   4u
#define CLS_XF_CLAMP 8u
#define CLS_XF_WRITE 16u
#define CLS_XF_MASK  32u
#define CLS_XF_MOMENTS 64u
#define CLS_XF_NT 128u
#define CLS_XF_FILL_SHIFT 8
#define CLS_XF_STAGE_SHIFT 12
#define CLS_XF_KEEP 2048u
#define CLS_XF_SORTED 16384u /* clip_sort.cl: windows sorted by cls_wsort */

/* Work-groups of the launches over sorted windows: a GPU's (regime.c's
 * cls_sort_parallel), whose groups want a few warps */
static size_t pre_local(const cls_kargs *a)
{
    size_t want = a->d->info.type & CLS_DEVICE_GPU ? 128 : 8, wg = 0;
    if (clGetKernelWorkGroupInfo(a->k, a->d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS)
        while (wg && want > wg) want /= 2;
    return want;
}

typedef struct xstate {
    const cls_cview     *v;
    const cls_clip_opts *o;
    uint64_t             gpu; /* groups per unit */
    size_t               n;   /* units */
    uint64_t            *n0;
    cls_cmoments        *m;
    double              *L, *H, *fill;
    unsigned            *iters_of; /* per unit */
    cls_sort_scratch    *scr;      /* the sort regime's scratch (cls_sort_scratch_new) */
} xstate;

/* clip_local.cl's local memory (QN * LW * REAL_BYTES at most) */
#define CLS_XLOCAL_BYTES 16384

/* Whether d runs clip_local.cl's kernel: on a GPU (a device claiming to
 * be a CPU too, a simulator, is not one) with the local memory it takes
 * (OpenCL promises 32 KiB; an embedded profile may have less), or wherever
 * a test forces it. */
static int local_kernel(const cls_context *ctx, const cls_dev *d)
{
    if (ctx->clip_local) return ctx->clip_local > 0;
    if (!cls_pass_gpu(d)) return 0;
    cl_ulong lm = 0;
    return clGetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) == CL_SUCCESS &&
           lm >= CLS_XLOCAL_BYTES;
}

/* clip_local.cl's columns per work-group (its LW): 16 KiB of local memory */
static size_t local_width(size_t rows_max, size_t es) { return rows_max * es > 256 ? 32 : 64; }

int cls_clip_fast_fits(const cls_context *ctx, const cls_cview *v, int median_only)
{
    size_t es = v->dtype == CLS_F64 ? 8 : 4;
    cls_regime r = v->Rg >= 1 ? cls_regime_of(ctx, v->Rg, es, CLS_CLIP_FAST_ROWS) : CLS_REGIME_COUNT;
    /* a median fill alone, past the networks: select.c's selection among
     * the unsorted keys (the robust scaler's) reads them about twice where
     * a whole sort passes over them 4-8 times */
    if (median_only && r == CLS_REGIME_SORT) return 0;
    return v->Rg >= 1 && r != CLS_REGIME_COUNT &&
           v->C <= UINT32_MAX && v->G <= UINT32_MAX && v->Rg * v->C * es <= CLS_XGROUP_MAX;
}

/* The sort regime's launches (cl/clip_sort.cl): the unit's entries in
 * runs of as many columns as the device's scratch holds, one window each
 * (the queue is in order and each launch waits), CLS_SORT_LANES entries a
 * work-item. a's arguments up to the scratch are set. */
static cls_status sort_launches(cls_kargs *a, cls_sort_scratch *scr, size_t ne, uint64_t rows, size_t es,
                                const cls_wsort_args *pre)
{
    size_t w = cls_sort_columns(a->ctx, rows, es);
    cl_mem sb = NULL;
    cls_status st = a->st == CLS_OK ? cls_sort_scratch_get(a->ctx, scr, a->d, rows, es, &sb) : a->st;
    if (w > ne) w = ne;
    size_t local = cls_sort_local(a->d, (w + CLS_SORT_LANES - 1) / CLS_SORT_LANES);
    cl_uint base = a->i;
    for (size_t e0 = 0; st == CLS_OK && e0 < ne; e0 += w) {
        size_t n = ne - e0 < w ? ne - e0 : w;
        if (pre) {
            /* the windows sorted first by every work-item (XF_SORTED) */
            cls_wsort_args wa = *pre;
            wa.scr = sb;
            wa.e0 = e0;
            wa.cnt_off = e0;
            wa.n_e = n;
            st = cls_wsort(a->ctx, a->d, a->t, &wa);
            if (st != CLS_OK) break;
        }
        a->i = base;
        cls_karg_mem(a, sb);
        cls_karg_u64(a, e0);
        cls_karg_u64(a, n);
        if (!pre) {
            st = cls_pass_launch(a, local, (n + CLS_SORT_LANES - 1) / CLS_SORT_LANES, 1);
            continue;
        }
        /* sorted windows: an entry a work-item */
        st = cls_pass_launch(a, pre_local(a), n, 1);
    }
    return st;
}

static void release(cl_mem *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i]) clReleaseMemObject(m[i]);
}

/* A unit's results into the tables (entry e0 on, ne of them): one loop
 * per accumulator type, the planes' type and the fill's choice out of it
 * (a million columns' entries are the host's work per column). Returns
 * the most iterations run. */
#define XRESULTS(NAME, T)                                                                                 \
    static unsigned NAME(xstate *s, const void *stp, const void *cnp, size_t e0, size_t ne)              \
    {                                                                                                     \
        const cls_clip_opts *o = s->o;                                                                    \
        const uint32_t *cn = cnp;                                                                         \
        const T *p = stp;                                                                                 \
        const T *pk = p, *pr = p + ne, *pm2 = p + 2 * ne, *pmn = p + 3 * ne, *pmx = p + 4 * ne;           \
        const T *pl = p + 5 * ne, *ph = p + 6 * ne, *pf = p + 7 * ne;                                     \
        double cfill = o->fill == CLS_XFILL_CONSTANT ? o->fill_value : NAN;                               \
        int dev_fill = o->fill != CLS_XFILL_CONSTANT && o->fill != CLS_XFILL_NONE;                        \
        uint64_t *n0 = s->n0 + e0, *nk = s->m->n + e0;                                                    \
        double *mean = s->m->mean + e0, *m2 = s->m->m2 + e0, *mn = s->m->min + e0, *mx = s->m->max + e0;  \
        double *L = s->L + e0, *H = s->H + e0, *fill = s->fill + e0;                                      \
        unsigned it = 0;                                                                                  \
        if (o->unread) {                                                                                  \
            for (size_t i = 0; i < ne; i++)                                                               \
                if (cn[2 * ne + i] > it) it = cn[2 * ne + i];                                             \
            return it;                                                                                    \
        }                                                                                                 \
        for (size_t i = 0; i < ne; i++) {                                                                 \
            uint64_t n = cn[ne + i];                                                                      \
            n0[i] = cn[i];                                                                                \
            nk[i] = n;                                                                                    \
            /* the moments as clean_pass.c folds one chunk: NaN when empty */                             \
            mean[i] = n ? (double)pk[i] + (double)pr[i] : NAN;                                            \
            m2[i] = n ? (double)pm2[i] : NAN;                                                             \
            mn[i] = n ? (double)pmn[i] : NAN;                                                             \
            mx[i] = n ? (double)pmx[i] : NAN;                                                             \
            L[i] = (double)pl[i];                                                                         \
            H[i] = (double)ph[i];                                                                         \
            fill[i] = dev_fill ? (double)pf[i] : cfill;                                                   \
            if (cn[2 * ne + i] > it) it = cn[2 * ne + i];                                                 \
        }                                                                                                 \
        return it;                                                                                        \
    }
XRESULTS(results_f64, double)
XRESULTS(results_f32, float)
#undef XRESULTS

static cls_status unit_run(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    xstate *s = user;
    const cls_cview *v = s->v;
    const cls_clip_opts *o = s->o;
    uint64_t g0 = u * s->gpu, ng = v->G - g0 < s->gpu ? v->G - g0 : s->gpu;
    size_t C = v->C, es = v->dtype == CLS_F64 ? 8 : 4, ne = (size_t)ng * C, e0 = (size_t)g0 * C;
    size_t off = (size_t)(g0 * v->Rg) * C, bytes = (size_t)(ng * v->Rg) * C * es;
    const char *xp = v->x + off * es;
    char *yp = o->write ? v->y + off * es : NULL;
    int sorted = cls_regime_of(ctx, v->Rg, es, CLS_CLIP_FAST_ROWS) == CLS_REGIME_SORT;
    int loc = !sorted && local_kernel(ctx, d);
    int par = sorted && cls_sort_parallel(ctx, d);
    int k = sorted ? CLS_K_CLIPSORT
            : loc  ? (v->Rg <= 32 ? CLS_K_CLIP32L : CLS_K_CLIP64L)
                   : (v->Rg <= 32 ? CLS_K_CLIP32 : CLS_K_CLIP64);
    /* st's planes in the kernels' ACC: float64 where the device has it */
    size_t as = v->dtype == CLS_F64 || d->info.fp64 ? 8 : 4;
    cl_mem m[6] = {0}; /* input (in place: a second reference to the output), output, sigmas, st, cn, mask */
    void *stp = NULL, *cnp = NULL; /* st and cn, mapped */
    void *sth = NULL, *cnh = NULL; /* their host tables, if any (cls_pass_result_buffer) */
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK};
    size_t local = 0;
    cls_status st = cls_kernel_get(ctx, d, k, v->dtype, 0, &a.k, &local, NULL);
    /* buffers: the host memory itself on a zero-copy device (one buffer in
     * place), else a copy in and a device buffer read back */
    if (st == CLS_OK) st = cls_pass_io(ctx, d, xp, yp, bytes, &m[0], &m[1]);
    if (st == CLS_OK && v->mask) st = cls_pass_output(ctx, d, v->mask + off, bytes / es, &m[5]);
    if (st == CLS_OK) {
        /* the sigmas in the kernel's accumulator type: double where the
         * device has it (clip.cl's ACC) */
        double sd[2] = {o->slo, o->shi};
        float sf[2] = {(float)o->slo, (float)o->shi};
        st = d->info.fp64 ? cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, sizeof sd, sd, &m[2])
                          : cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, sizeof sf, sf, &m[2]);
    }
    /* cn read too over sorted windows: the counts cls_wsort leaves there */
    cl_mem_flags out_fl = par ? CL_MEM_READ_WRITE : CL_MEM_WRITE_ONLY;
    if (st == CLS_OK) st = cls_pass_result_buffer(ctx, d, CL_MEM_WRITE_ONLY, 8 * ne * as, &sth, &m[3]);
    if (st == CLS_OK) st = cls_pass_result_buffer(ctx, d, out_fl, 3 * ne * 4, &cnh, &m[4]);
    /* clip.cl: XW columns per work-item */
    size_t xw = loc ? 1 : (v->dtype == CLS_F64 ? 1 : 2) * (size_t)d->xw64;
    unsigned lead = 0;
    int nt = 0;
    if (!loc && !sorted && o->write && d->nt && d->in_place && xw * es == 64 && bytes >= ((size_t)1 << 20)) {
        /* a large output written in place in host memory by a CPU driver
         * that takes non-temporal stores, a block's row a whole line: where
         * every row starts a line at the same column, the first block ends
         * there, and the others stream whole lines past the cache (no read
         * for ownership; docs/PERFORMANCE.md, "Short columns in vector
         * lanes") */
        nt = 1;
        uintptr_t mis = (uintptr_t)yp % 64;
        if ((C * es) % 64 == 0 && mis % es == 0 && mis) lead = (unsigned)((64 - mis) / es);
        if (lead >= C) lead = 0;
    }
    if (st == CLS_OK) {
        unsigned fl = (o->has_sent ? CLS_XF_SENT : 0) | (o->center_mean ? CLS_XF_MEAN : 0) |
                      (o->mad ? CLS_XF_MAD : 0) | (o->clamp ? CLS_XF_CLAMP : 0) | (o->write ? CLS_XF_WRITE : 0) |
                      (v->mask ? CLS_XF_MASK : 0) | (o->moments ? CLS_XF_MOMENTS : 0) | (nt ? CLS_XF_NT : 0) |
                      (o->keep ? CLS_XF_KEEP : 0) | ((unsigned)o->fill << CLS_XF_FILL_SHIFT) |
                      (par ? CLS_XF_SORTED : 0);
#if CLS_BENCH_STAGES
        /* a bench build only (meson -Dbench_stages=true, for
         * tools/bench/clip_astropy.py --stages): run the kernel's first
         * stages alone, 1 load and store, 2 also the sort, 3 also the sums
         * (no iteration); results wrong (testing.h's clip_stage) */
        if (ctx->tune.clip_stage >= 1 && ctx->tune.clip_stage <= 3) fl |= ctx->tune.clip_stage << CLS_XF_STAGE_SHIFT;
#endif
        cls_karg_mem(&a, m[0]);
        cls_karg_mem(&a, o->write ? m[1] : m[0]);
        cls_karg_mem(&a, v->mask ? m[5] : m[0]);
        cls_karg_u32(&a, C);
        cls_karg_u32(&a, v->Rg);
        cls_karg_u32(&a, ng);
        cls_karg_u32(&a, fl);
        cls_karg_real(&a, o->has_sent ? o->sent : 0);
        cls_karg_mem(&a, m[2]);
        cls_karg_u32(&a, (uint32_t)(o->maxiters < 0 ? -1 : o->maxiters));
        cls_karg_real(&a, o->fill == CLS_XFILL_CONSTANT ? o->fill_value : 0);
        cls_karg_mem(&a, m[3]);
        cls_karg_mem(&a, m[4]);
        cls_karg_u64(&a, ne);
        if (!loc && !sorted) cls_karg_u32(&a, lead);
        /* clip.cl: a work-item clips XW columns in the lanes of its vectors
         * (the kernel vectorises itself), so small work-groups.
         * clip_local.cl: a column per work-item, LW of them per group (its
         * local array's width; fewer are right too) */
        size_t wg = 0, want = loc ? local_width(v->Rg <= 32 ? 32 : 64, es) : 8;
        if (a.st == CLS_OK &&
            clGetKernelWorkGroupInfo(a.k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS)
            while (wg && want > wg) want /= 2;
        size_t blocks = lead ? 1 + (C - lead + xw - 1) / xw : (C + xw - 1) / xw;
        /* the filter of the sort (q_take): the sentinel alone; m[0] stands
         * for the bounds it does not read */
        cls_wsort_args pre = {m[0], m[0], m[0], m[0], NULL, m[4], 0, C, v->Rg * C, 0, 0, 0,
                              (uint32_t)C, (uint32_t)v->Rg, o->has_sent ? CLS_QF_SENTINEL : 0,
                              o->has_sent ? o->sent : 0};
        st = sorted ? sort_launches(&a, s->scr, ne, v->Rg, es, par ? &pre : NULL)
                    : cls_pass_launch(&a, want, blocks, (size_t)ng);
    }
    if (st == CLS_OK && o->write) st = cls_pass_output_back(ctx, d, m[1], yp, bytes);
    if (st == CLS_OK && v->mask) st = cls_pass_output_back(ctx, d, m[5], v->mask + off, bytes / es);
    /* the statistics mapped, not read into fresh host memory (on a CPU
     * device no copy at all) */
    if (st == CLS_OK) st = cls_pass_map(ctx, d, m[3], 8 * ne * as, &stp);
    if (st == CLS_OK) st = cls_pass_map(ctx, d, m[4], 3 * ne * 4, &cnp);
    if (st == CLS_OK) {
        unsigned it = as == 8 ? results_f64(s, stp, cnp, e0, ne) : results_f32(s, stp, cnp, e0, ne);
        s->iters_of[u] = it;
    }
    st = cls_pass_unmap(ctx, d, m[3], stp, st);
    st = cls_pass_unmap(ctx, d, m[4], cnp, st);
    release(m, 6);
    cls_table_free(sth, 8 * ne * as);
    cls_table_free(cnh, 3 * ne * 4);
    return st;
}

cls_status cls_clip_fast(cls_context *ctx, const cls_cview *v, const cls_clip_opts *o, uint64_t *n0,
                         cls_cmoments *m, double *L, double *H, double *fill, unsigned *iters)
{
    size_t es = v->dtype == CLS_F64 ? 8 : 4;
    uint64_t group = v->Rg * v->C * es;
    xstate s;
    memset(&s, 0, sizeof s);
    s.v = v;
    s.o = o;
    s.gpu = CLS_XUNIT_BYTES / (group ? group : 1);
    if (s.gpu < 1) s.gpu = 1;
    s.n = (size_t)((v->G + s.gpu - 1) / s.gpu);
    s.n0 = n0;
    s.m = m;
    s.L = L;
    s.H = H;
    s.fill = fill;
    s.iters_of = calloc(s.n ? s.n : 1, sizeof *s.iters_of);
    s.scr = cls_sort_scratch_new(ctx);
    if (!s.iters_of || !s.scr) {
        free(s.iters_of);
        cls_sort_scratch_free(ctx, s.scr);
        return cls_fail(ctx, CLS_E_NOMEM, "cleaning: out of memory");
    }
    cls_status st = cls_passes_run(ctx, v->dtype, s.n, unit_run, &s);
    if (st == CLS_OK) {
        unsigned it = 0;
        for (size_t u = 0; u < s.n; u++)
            if (s.iters_of[u] > it) it = s.iters_of[u];
        *iters = it;
    }
    cls_sort_scratch_free(ctx, s.scr);
    free(s.iters_of);
    return st;
}
