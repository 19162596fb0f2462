/* The cleaning passes (clean_pass.h): units, buffers and launches of
 * cl/clean.cl's kernels. A unit is a run of whole statistics groups of at
 * most CLS_CUNIT_BYTES, or one part of a longer group; work-item (column,
 * chunk) walks at most CLS_CCHUNK rows. Partial moments are merged on the
 * host in float64 (Chan), under a lock: parts of one group may finish on
 * different devices at once.
 * Calls: passes.c (the units on the devices), program.c (the kernels). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clean/clean_pass.h"
#include "engine/passes.h"

#define CLS_CUNIT_BYTES ((uint64_t)32 << 20)
#define CLS_CCHUNK 512u

typedef struct cunits {
    uint64_t gpu;      /* whole groups per unit; 0: groups cut in parts */
    uint64_t prow;     /* rows per part (parts) */
    uint64_t ppg;      /* parts per group (parts) */
    size_t   n;        /* units */
} cunits;

typedef struct cunit {
    uint64_t g0, ng, row0, urows; /* groups [g0, g0 + ng), rows [row0, row0 + urows) of each */
    size_t   off;                 /* element offset of the unit's first row */
    size_t   elems;
} cunit;

static cunits plan(const cls_cview *v)
{
    cunits p = {0, 0, 0, 0};
    size_t es = v->dtype == CLS_F64 ? 8 : 4;
    uint64_t row = (uint64_t)v->C * es, group = v->Rg * row;
    if (group <= CLS_CUNIT_BYTES) {
        p.gpu = CLS_CUNIT_BYTES / (group ? group : 1);
        if (p.gpu < 1) p.gpu = 1;
        p.n = (size_t)((v->G + p.gpu - 1) / p.gpu);
    } else {
        p.prow = CLS_CUNIT_BYTES / row / CLS_CCHUNK * CLS_CCHUNK;
        if (p.prow < CLS_CCHUNK) p.prow = CLS_CCHUNK;
        p.ppg = (v->Rg + p.prow - 1) / p.prow;
        p.n = (size_t)(v->G * p.ppg);
    }
    return p;
}

static cunit unit_of(const cls_cview *v, const cunits *p, size_t u)
{
    cunit c;
    if (p->gpu) {
        c.g0 = u * p->gpu;
        c.ng = v->G - c.g0 < p->gpu ? v->G - c.g0 : p->gpu;
        c.row0 = 0;
        c.urows = v->Rg;
    } else {
        c.g0 = u / p->ppg;
        c.ng = 1;
        c.row0 = (u % p->ppg) * p->prow;
        c.urows = v->Rg - c.row0 < p->prow ? v->Rg - c.row0 : p->prow;
    }
    c.off = (size_t)((c.g0 * v->Rg + c.row0) * v->C);
    c.elems = (size_t)(c.ng * c.urows * v->C);
    return c;
}

static void release(cl_mem *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i]) clReleaseMemObject(m[i]);
}

/* n doubles from a as the data's dtype. */
static void *to_real(const double *a, size_t n, cls_dtype t)
{
    void *r = malloc((n ? n : 1) * (t == CLS_F64 ? 8 : 4));
    if (!r) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (t == CLS_F64) ((double *)r)[i] = a[i];
        else ((float *)r)[i] = (float)a[i];
    }
    return r;
}

/* The unit's input and output buffers (cls_pass_io): m[0] input, m[1]
 * output (NULL when not writing), read back by finish_out(). */
static cls_status io_buffers(cls_context *ctx, cls_dev *d, const cls_cview *v, const cunit *c, int write,
                             cl_mem m[2])
{
    size_t es = v->dtype == CLS_F64 ? 8 : 4;
    return cls_pass_io(ctx, d, v->x + c->off * es, write ? v->y + c->off * es : NULL, c->elems * es, &m[0], &m[1]);
}

static cls_status finish_out(cls_context *ctx, cls_dev *d, const cls_cview *v, const cunit *c, cl_mem out)
{
    size_t es = v->dtype == CLS_F64 ? 8 : 4;
    return cls_pass_output_back(ctx, d, out, v->y + c->off * es, c->elems * es);
}

/* Work-group size of the cleaning kernels: one column per work-item, so a
 * group of 64 neighbouring columns runs as vectors on a CPU (the engine's
 * CPU default, 4, suits its kernels that hold vectors per work-item). */
static size_t group_size(size_t local) { return local < 64 ? 64 : local; }

/* Work-groups for a kernel of one value per item over (C columns, rows),
 * of at most lim items: whole rows of a narrow table (C x lim / C), else
 * lim columns. One row per group left 56 of 64 items idle on 8 columns
 * and made a 2M-row table 2M groups: the fill pass took 80% of a mean
 * imputation and the whole call 2.4x scikit-learn's SimpleImputer. (Wider
 * tables: a divisor of C instead of rounding up to lim measured no
 * better, within noise, at 80 columns.) */
static void tiles(size_t C, size_t lim, size_t *lx, size_t *ly)
{
    *lx = lim;
    *ly = 1;
    if (C == 0) return;
    if (C <= lim) {
        *lx = C;
        *ly = lim / C;
    }
}

static void geometry(cls_kargs *a, const cls_cview *v, const cunit *c, uint64_t cpg)
{
    cls_karg_u32(a, v->C);
    cls_karg_u32(a, c->ng);
    cls_karg_u64(a, c->urows);
    cls_karg_u64(a, cpg);
    cls_karg_u32(a, CLS_CCHUNK);
}

/* ---- moments ---- */

typedef struct mstate {
    const cls_cview *v;
    cunits           p;
    unsigned         flags;
    double           sent;
    const double    *lo, *hi;
    cls_cmoments    *m;
    pthread_mutex_t  lock;
} mstate;

void cls_cmoments_fold(cls_cmoments *m, size_t e, uint64_t n, double mean, double m2, double mn, double mx)
{
    if (n == 0) return;
    uint64_t na = m->n[e];
    if (na == 0) {
        m->mean[e] = mean;
        m->m2[e] = m2;
        m->min[e] = mn;
        m->max[e] = mx;
    } else {
        double nt = (double)(na + n), d = mean - m->mean[e];
        m->mean[e] += d * (double)n / nt;
        m->m2[e] += m2 + d * d * (double)na * (double)n / nt;
        if (mn < m->min[e]) m->min[e] = mn;
        if (mx > m->max[e]) m->max[e] = mx;
    }
    m->n[e] = na + n;
}

static cls_status moments_unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    mstate *s = user;
    const cls_cview *v = s->v;
    cunit c = unit_of(v, &s->p, u);
    size_t C = v->C, es = v->dtype == CLS_F64 ? 8 : 4, ne = (size_t)c.ng * C, e0 = (size_t)c.g0 * C;
    uint64_t cpg = (c.urows + CLS_CCHUNK - 1) / CLS_CCHUNK, parts = c.ng * cpg;
    size_t np = (size_t)parts * C;
    /* the moments' planes in clean.cl's CACC: float64 where the device has it */
    size_t as = v->dtype == CLS_F64 || d->info.fp64 ? 8 : 4;
    int write = (s->flags & CLS_CF_WRITE) != 0;
    cl_mem m[7] = {0};
    void *pr = malloc(5 * np * as), *pc = malloc(3 * np * 4), *blo = NULL, *bhi = NULL;
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK};
    size_t local = 0;
    cls_status st = pr && pc ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK && s->lo) {
        blo = to_real(s->lo + e0, ne, v->dtype);
        bhi = to_real(s->hi + e0, ne, v->dtype);
        if (!blo || !bhi) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK) st = cls_kernel_get(ctx, d, CLS_K_CLEAN_MOMENTS, v->dtype, 0, &a.k, &local, NULL);
    if (st == CLS_OK) st = io_buffers(ctx, d, v, &c, write, m);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, blo ? ne * es : es, blo, &m[3]);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, bhi ? ne * es : es, bhi, &m[4]);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_WRITE_ONLY, 5 * np * as, NULL, &m[5]);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_WRITE_ONLY, 3 * np * 4, NULL, &m[6]);
    if (st == CLS_OK) {
        cls_karg_mem(&a, m[0]);
        cls_karg_mem(&a, write ? m[1] : m[0]);
        geometry(&a, v, &c, cpg);
        cls_karg_u32(&a, s->flags | (s->lo ? CLS_CF_BOUNDS : 0));
        cls_karg_real(&a, s->sent);
        cls_karg_mem(&a, m[3]);
        cls_karg_mem(&a, m[4]);
        cls_karg_mem(&a, m[5]);
        cls_karg_mem(&a, m[6]);
        cls_karg_u64(&a, np);
        size_t lx, ly;
        tiles(C, group_size(local), &lx, &ly);
        st = cls_pass_launch_tiles(&a, lx, ly, C, (size_t)parts);
    }
    if (st == CLS_OK && write) st = finish_out(ctx, d, v, &c, m[1]);
    if (st == CLS_OK) {
        cl_int e = clEnqueueReadBuffer(d->q[0], m[5], CL_TRUE, 0, 5 * np * as, pr, 0, NULL, NULL);
        if (e == CL_SUCCESS) e = clEnqueueReadBuffer(d->q[0], m[6], CL_TRUE, 0, 3 * np * 4, pc, 0, NULL, NULL);
        if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clEnqueueReadBuffer", e);
    }
    if (st == CLS_OK) {
        const uint32_t *cn = pc;
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < np; i++) {
            size_t j = i / C, col = i % C, e = e0 + (size_t)(j / cpg) * C + col;
            cls_cmoments_fold(s->m, e, cn[i], cls_pass_at(pr, i, as) + cls_pass_at(pr, np + i, as), cls_pass_at(pr, 2 * np + i, as),
                              cls_pass_at(pr, 3 * np + i, as), cls_pass_at(pr, 4 * np + i, as));
            s->m->below[e] += cn[np + i];
            s->m->above[e] += cn[2 * np + i];
        }
        pthread_mutex_unlock(&s->lock);
    }
    release(m, 7);
    free(pr);
    free(pc);
    free(blo);
    free(bhi);
    return st;
}

cls_status cls_clean_moments(cls_context *ctx, const cls_cview *v, unsigned flags, double sent, const double *lo,
                             const double *hi, cls_cmoments *m)
{
    size_t ne = (size_t)v->G * v->C;
    for (size_t e = 0; e < ne; e++) {
        m->n[e] = m->below[e] = m->above[e] = 0;
        m->mean[e] = m->m2[e] = m->min[e] = m->max[e] = NAN;
    }
    mstate s;
    memset(&s, 0, sizeof s);
    s.v = v;
    s.p = plan(v);
    s.flags = flags & (CLS_CF_SENT | CLS_CF_WRITE);
    s.sent = sent;
    s.lo = lo;
    s.hi = hi;
    s.m = m;
    pthread_mutex_init(&s.lock, NULL);
    cls_status st = cls_passes_run(ctx, v->dtype, s.p.n, moments_unit, &s);
    pthread_mutex_destroy(&s.lock);
    return st;
}

/* ---- apply ---- */

typedef struct astate {
    const cls_cview *v;
    cunits           p;
    unsigned         flags;
    double           sent, rlo, rhi;
    const double    *prm;
} astate;

/* The flags as the kernel is built with them: those that change nothing
 * in a combination dropped, so that equal passes share one build (a clamp
 * without bounds, the range clip without a scaler, what y would receive
 * where y is not written or written as read). */
static unsigned apply_flags(unsigned f)
{
    if (!(f & CLS_CF_BOUNDS)) f &= ~CLS_CF_CLAMP;
    if (!(f & CLS_CF_SCALE)) f &= ~CLS_CF_RCLIP;
    if (f & (CLS_CF_NOY | CLS_CF_KEEP)) f &= ~(CLS_CF_CLAMP | CLS_CF_FILL | CLS_CF_SCALE | CLS_CF_RCLIP);
    if (f & CLS_CF_NOY) f &= ~CLS_CF_KEEP;
    return f;
}

static cls_status apply_unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    astate *s = user;
    const cls_cview *v = s->v;
    cunit c = unit_of(v, &s->p, u);
    size_t C = v->C, es = v->dtype == CLS_F64 ? 8 : 4, ne = (size_t)c.ng * C, e0 = (size_t)c.g0 * C;
    size_t total = (size_t)v->G * C;
    cl_mem m[5] = {0}; /* x, y, -, params, mask */
    int wy = !(s->flags & CLS_CF_NOY), wm = (s->flags & CLS_CF_MASK) != 0;
    double *planes = malloc(7 * ne * sizeof *planes);
    void *prm = NULL;
    cls_kargs a = {ctx, d, NULL, 0, v->dtype, CLS_OK};
    size_t local = 0;
    cls_status st = planes ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    if (st == CLS_OK) {
        for (int p = 0; p < 7; p++) memcpy(planes + p * ne, s->prm + p * total + e0, ne * sizeof *planes);
        prm = to_real(planes, 7 * ne, v->dtype);
        if (!prm) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK && ctx->tune.clean_flags_runtime)
        st = cls_kernel_get(ctx, d, CLS_K_CLEAN_APPLY, v->dtype, 0, &a.k, &local, NULL);
    else if (st == CLS_OK)
        st = cls_kernel_get_cf(ctx, d, CLS_K_CLEAN_APPLY, v->dtype, 0, apply_flags(s->flags), &a.k, &local);
    if (st == CLS_OK) st = io_buffers(ctx, d, v, &c, wy, m);
    if (st == CLS_OK) st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, 7 * ne * es, prm, &m[3]);
    if (st == CLS_OK && wm) st = cls_pass_output(ctx, d, v->mask + c.off, c.elems, &m[4]);
    if (st == CLS_OK) {
        cls_karg_mem(&a, m[0]);
        cls_karg_mem(&a, wy ? m[1] : m[0]);
        cls_karg_mem(&a, wm ? m[4] : m[0]);
        cls_karg_u32(&a, v->C);
        cls_karg_u32(&a, c.ng);
        cls_karg_u64(&a, c.urows);
        cls_karg_u32(&a, s->flags);
        cls_karg_real(&a, s->sent);
        cls_karg_mem(&a, m[3]);
        cls_karg_u64(&a, ne);
        cls_karg_real(&a, s->rlo);
        cls_karg_real(&a, s->rhi);
        size_t lx, ly, wg = 0;
        tiles(C, group_size(local), &lx, &ly);
        /* a wide table on a CPU driver: several rows a group, as the
         * kernel's limit allows (up to 16): a group a row made 300,000
         * groups of 10^5 x 160 values, whose cost per group made this pass
         * several times a scaler's over the same values */
        if (ly == 1 && !cls_pass_gpu(d) &&
            clGetKernelWorkGroupInfo(a.k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS)
            while (ly < 16 && lx * ly * 2 <= wg) ly *= 2;
        /* the kernel reads its last row and column: none, no launch */
        if (C && c.ng && c.urows) st = cls_pass_launch_tiles(&a, lx, ly, C, (size_t)(c.ng * c.urows));
    }
    if (st == CLS_OK && wy) st = finish_out(ctx, d, v, &c, m[1]);
    if (st == CLS_OK && wm) st = cls_pass_output_back(ctx, d, m[4], v->mask + c.off, c.elems);
    release(m, 5);
    free(planes);
    free(prm);
    return st;
}

cls_status cls_clean_apply(cls_context *ctx, const cls_cview *v, unsigned flags, double sent, const double *prm,
                           double rlo, double rhi)
{
    astate s = {v, plan(v), flags, sent, rlo, rhi, prm};
    return cls_passes_run(ctx, v->dtype, s.p.n, apply_unit, &s);
}
