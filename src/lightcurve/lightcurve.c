/* Light curves: the device passes of cl/lightcurve.cl over units of whole statistics groups,
 * or over one block of a streamed series (its halo rows around it).
 * Owns: the units (a range of groups: a window never crosses a group, so a
 * unit needs no halo), the rows per work-item and the halo they imply,
 * the buffers of a unit.
 * Calls: engine/passes.c (units pulled by every device, failover),
 * engine/program.c (kernels), savgol.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/passes.h"
#include "lightcurve/lightcurve.h"
#include "util/table.h"

#define UNIT_BYTES (16u << 20) /* a unit's data at most, but for one group larger than this */
#define LOOP_MAX CLS_LC_LOOP_MAX

/* cl/lightcurve.cl mirrors these */
enum { LC_OP_SUBTRACT, LC_OP_DIVIDE, LC_OP_TREND };
#define LC_EDGE_HELD 7 /* a wrap edge's block holding the other end's rows (cls_lc_rows) */
#define SAVGOL(k) ((k) == CLS_K_SAVGOL || (k) == CLS_K_SAVGOL3)
#define LC_F_SENT 1u
#define LC_Q (CLS_LC_PMAX + 1)
#define LC_LANES 8 /* columns per work-item of CLS_K_SAVGOL3V (cl/lightcurve.cl's LV) */
/* llvmpipe runs 8 work-items in a vector, and a loop taken by some of
 * them and not others costs every one its trips: a row's work counts 8
 * times in a work-item's loop bound (float_chunk) */
#define LC_SIMD 8
/* g's length for q = polyorder + 1: weights and scale, the sums' shift and
 * powers, the moments' (2q - 1 powers) shift and powers (cl/lightcurve.cl) */
#define LC_GN(q) ((q) + 1 + (q) * (q) + 2 * (q) + 1 + (2 * (q) - 1) * (2 * (q) + 2))
#define LC_GLEN LC_GN(LC_Q)

int cls_lc_active(const cls_clean *c)
{
    /* any field set counts, so that one set alone is refused, not ignored */
    return c && (c->detrend != CLS_DETREND_NONE || c->bin_rows || c->bin_stat != CLS_BIN_NONE || c->window ||
                 c->polyorder || c->deriv || c->delta != 0 || c->edge || c->cval != 0 || c->origin ||
                 c->detrend_op || c->flatten_niters || c->flatten_sigma != 0);
}

const cls_clean *cls_lc_strip(const cls_clean *c, cls_clean *plain)
{
    if (!cls_lc_active(c)) return c;
    *plain = *c;
    plain->detrend = CLS_DETREND_NONE;
    plain->detrend_op = CLS_DETREND_SUBTRACT;
    plain->window = plain->polyorder = plain->deriv = plain->bin_rows = 0;
    plain->delta = plain->cval = 0;
    plain->edge = CLS_EDGE_DEFAULT;
    plain->origin = 0;
    plain->bin_stat = CLS_BIN_NONE;
    plain->bin_reduce = 0;
    plain->flatten_niters = 0;
    plain->flatten_sigma = 0;
    return plain;
}

int cls_lc_reduces(const cls_clean *c, uint64_t in_batch, uint64_t in_rows, int have_out, uint64_t out_batch,
                   uint64_t out_rows)
{
    if (!c || c->bin_stat == CLS_BIN_NONE) return 0;
    if (c->bin_reduce || c->bin_stat == CLS_BIN_SUM || c->bin_stat == CLS_BIN_COUNT) return 1;
    return have_out && (out_rows != in_rows || out_batch != in_batch);
}

typedef struct lcjob {
    const cls_clean *c;
    int         kind;     /* CLS_K_MOVAVG, CLS_K_SAVGOL, CLS_K_BIN_SMOOTH, CLS_K_BIN_REDUCE */
    cls_dtype   t;
    size_t      es;
    const char *x;
    char       *y;
    uint64_t    G, Rg, gpu; /* groups, rows per group, groups per unit */
    size_t      C;
    uint32_t    chunk;      /* rows per work-item (trends) */
    uint32_t    chunk_lanes; /* the moving average in CLS_K_SAVGOL3V's lanes (CPUs) */
    uint32_t    chunk_by_fp64[2]; /* Savitzky-Golay: by the device's sums, float [0] or double [1] */
    int         float_unfit; /* Savitzky-Golay: no chunk of float sums keeps within LOOP_MAX */
    int64_t     start;      /* the window's first row relative to the row */
    int         edge;
    double      g[LC_GLEN];  /* Savitzky-Golay: weights, scale, shift tables, powers (cl/lightcurve.cl) */
    uint64_t    nbins;
    const cls_lc_rows *rows; /* a trend of one streamed block (G = 1), else NULL */
} lcjob;

static void release(cl_mem *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i]) clReleaseMemObject(m[i]);
}

static cls_status unit(void *user, cls_context *ctx, cls_dev *d, size_t u)
{
    lcjob *j = user;
    const cls_clean *c = j->c;
    uint64_t g0 = u * j->gpu, ng = j->G - g0 < j->gpu ? j->G - g0 : j->gpu;
    size_t vals = (size_t)(ng * j->Rg) * j->C, bytes = vals * j->es, off = (size_t)(g0 * j->Rg) * j->C * j->es;
    const cls_lc_rows *r = j->rows;
    /* the rows held and written: the whole groups, or a block's */
    int64_t base = r ? r->base : 0;
    uint64_t wlo = r ? r->wlo : 0, whi = r ? r->whi : j->Rg;
    if (r) {
        off = 0;
        bytes = (size_t)r->held * j->C * j->es;
    }
    const char *x = j->x + off;
    char *y = j->y + off;
    cls_kargs a = {ctx, d, NULL, 0, j->t, CLS_OK};
    size_t local = 0;
    cl_mem m[4] = {0};
    int back = 0; /* out is a device buffer read back after the input is released */
    unsigned fl = c->has_missing_value ? LC_F_SENT : 0;
    /* CPUs with float64 take polyorder 2 and the moving average (its sums
     * of float32 need CLS_K_MOVAVG's compensation) LC_LANES columns at a
     * time in vector lanes; without float64 (rusticl) a column per
     * work-item keeps a row's loop trips within LOOP_MAX (float_chunk) */
    int lanes = !cls_pass_gpu(d) && d->info.fp64 && (j->kind == CLS_K_SAVGOL3 || j->kind == CLS_K_MOVAVG);
    int kind = lanes ? CLS_K_SAVGOL3V : j->kind;
    if (SAVGOL(j->kind) && !d->info.fp64 && j->float_unfit) {
        /* its units go to a device with float64, if any (cls_passes_run) */
        char lab[256];
        cls_dev_label(d, lab, sizeof lab);
        return cls_fail(ctx, CLS_E_UNSUPPORTED, "%s: light curves: a Savitzky-Golay window of %u rows, polyorder "
                        "%u, takes more loop trips per row than a work-item may (%u) with float sums (no float64)",
                        lab, c->window, c->polyorder, LOOP_MAX);
    }
    cls_status st = cls_kernel_get(ctx, d, kind, j->t, 0, &a.k, &local, NULL);
    if (st != CLS_OK) return st;
    size_t ybytes = r ? (size_t)(whi - wlo) * j->C * j->es : bytes;
    void *host = NULL; /* the results' host table (back) */
    if (r) {
        /* a block: its halo rows in, its own rows out (y may be x). On
         * host memory the caller's scratch, the same for every block: a
         * fresh buffer of a block's size each time, kept or not, either
         * stayed resident beside the pool or took a page fault per 4 KiB */
        back = 1;
        st = cls_pass_input(ctx, d, x, bytes, &m[0]);
        if (st == CLS_OK && d->zero_copy && r->scratch) {
            cl_int e;
            m[1] = clCreateBuffer(d->cl, CL_MEM_WRITE_ONLY | CL_MEM_USE_HOST_PTR, ybytes, r->scratch, &e);
            if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clCreateBuffer(output)", e);
        } else if (st == CLS_OK) {
            st = cls_pass_buffer(ctx, d, CL_MEM_WRITE_ONLY, ybytes, NULL, &m[1]);
        }
    } else if (j->kind == CLS_K_BIN_REDUCE) {
        ybytes = (size_t)(ng * j->nbins) * j->C * j->es;
        y = j->y + (size_t)(g0 * j->nbins) * j->C * j->es;
        st = cls_pass_input(ctx, d, x, bytes, &m[0]);
        if (st == CLS_OK) st = cls_pass_output(ctx, d, y, ybytes, &m[1]);
    } else if ((j->kind == CLS_K_MOVAVG || SAVGOL(j->kind)) && x == y && d->zero_copy) {
        /* a window reads rows that other work-items write: never in place */
        back = 1;
        st = cls_pass_input(ctx, d, x, bytes, &m[0]);
        /* a host table, kept between calls, rather than the driver's
         * buffer: a stream's chunks freed and took the driver's 16 MiB
         * buffers from the C library's heap, which kept them resident
         * (its mmap threshold rises to a freed mapping's size) */
        if (st == CLS_OK) st = cls_pass_result_buffer(ctx, d, CL_MEM_WRITE_ONLY, bytes, &host, &m[1]);
    } else {
        st = cls_pass_io(ctx, d, x, y, bytes, &m[0], &m[1]);
    }
    /* scratch for the medians of bins longer than cl/lightcurve.cl's LC_SMALL */
    int median = (j->kind == CLS_K_BIN_SMOOTH || j->kind == CLS_K_BIN_REDUCE) && c->bin_stat == CLS_BIN_MEDIAN &&
                 c->bin_rows > 32;
    if (st == CLS_OK && (j->kind == CLS_K_BIN_SMOOTH || j->kind == CLS_K_BIN_REDUCE))
        st = cls_pass_buffer(ctx, d, CL_MEM_READ_WRITE, median ? bytes : 1, NULL, &m[2]);
    if (st == CLS_OK && (SAVGOL(j->kind) || lanes)) {
        /* the weights in the kernel's sums' type: double where the device has it */
        unsigned q = kind == CLS_K_SAVGOL3V ? 3 : c->polyorder + 1;
        q = LC_GN(q);
        float gf[LC_GLEN];
        for (unsigned i = 0; i < q; i++) gf[i] = (float)j->g[i];
        st = cls_pass_buffer(ctx, d, CL_MEM_READ_ONLY, q * (d->info.fp64 ? 8 : 4),
                             d->info.fp64 ? (const void *)j->g : (const void *)gf, &m[3]);
    }
    uint64_t cols = ng * j->C;
    uint32_t chunk = SAVGOL(j->kind) ? j->chunk_by_fp64[d->info.fp64 ? 1 : 0] : lanes ? j->chunk_lanes : j->chunk;
    if (st == CLS_OK) {
        cls_karg_mem(&a, m[0]);
        if (j->kind == CLS_K_BIN_REDUCE) { /* (x, tmp, out, ...) */
            cls_karg_mem(&a, m[2]);
            cls_karg_mem(&a, m[1]);
        } else { /* (x, y, ...), the smoothing (x, y, tmp, ...) */
            cls_karg_mem(&a, m[1]);
            if (m[2]) cls_karg_mem(&a, m[2]);
        }
        cls_karg_u32(&a, j->C);
        cls_karg_u64(&a, j->Rg);
        cls_karg_u32(&a, ng);
        if (j->kind == CLS_K_BIN_SMOOTH || j->kind == CLS_K_BIN_REDUCE) {
            /* bins per work-item, within the loop bound: on CPUs a few
             * thousand rows each (a column's bins of a light curve in one
             * work-item, read in order: PoCL took 0.75-0.8x the time of
             * work-items of 256 rows, and the bins' smoothing then came
             * within 1.1x of a min-max call), but enough work-items for
             * every compute unit; a few hundred rows on GPUs (many
             * work-items) and for the medians selected in scratch (their
             * loops' trips depend on the data) */
            uint32_t per = cls_pass_gpu(d) || median ? 256 : 4096;
            uint32_t nbw = c->bin_rows >= per ? 1 : per / c->bin_rows;
            uint64_t nbins = (j->Rg + c->bin_rows - 1) / c->bin_rows;
            while (nbw > 1 && cols * ((nbins + nbw - 1) / nbw) < 16 * (uint64_t)d->info.compute_units) nbw /= 2;
            cls_karg_u32(&a, c->bin_rows);
            cls_karg_u32(&a, nbw);
            cl_int method = (cl_int)c->bin_stat;
            if (a.st == CLS_OK) {
                cl_int e = clSetKernelArg(a.k, a.i++, sizeof method, &method);
                if (e != CL_SUCCESS) a.st = cls_fail_cl(ctx, d, "clSetKernelArg", e);
            }
            cls_karg_u32(&a, fl);
            cls_karg_real(&a, c->has_missing_value ? c->missing_value : 0);
            st = cls_pass_launch(&a, local, (size_t)cols, (size_t)((nbins + nbw - 1) / nbw));
        } else {
            cl_long start = j->start;
            cl_int mode = r && j->edge == CLS_EDGE_WRAP ? LC_EDGE_HELD : j->edge, op = (cl_int)c->detrend_op;
            cls_karg_u32(&a, chunk);
            cls_karg_u32(&a, c->window);
            if (kind == CLS_K_SAVGOL3V || SAVGOL(j->kind)) {
                /* polyorder 0 tells CLS_K_SAVGOL3V the moving average */
                cls_karg_u32(&a, j->kind == CLS_K_MOVAVG ? 0 : c->polyorder);
                cls_karg_u32(&a, c->deriv);
            }
            const void *v[2] = {&start, &mode};
            size_t sz[2] = {sizeof start, sizeof mode};
            for (int i = 0; i < 2 && a.st == CLS_OK; i++) {
                cl_int e = clSetKernelArg(a.k, a.i++, sz[i], v[i]);
                if (e != CL_SUCCESS) a.st = cls_fail_cl(ctx, d, "clSetKernelArg", e);
            }
            cls_karg_real(&a, c->cval);
            if (a.st == CLS_OK) {
                cl_int e = clSetKernelArg(a.k, a.i++, sizeof op, &op);
                if (e != CL_SUCCESS) a.st = cls_fail_cl(ctx, d, "clSetKernelArg", e);
            }
            cls_karg_u32(&a, fl);
            cls_karg_real(&a, c->has_missing_value ? c->missing_value : 0);
            if (SAVGOL(j->kind) || lanes) cls_karg_mem(&a, m[3]);
            cl_long kb = (cl_long)base;
            if (a.st == CLS_OK) {
                cl_int e = clSetKernelArg(a.k, a.i++, sizeof kb, &kb);
                if (e != CL_SUCCESS) a.st = cls_fail_cl(ctx, d, "clSetKernelArg", e);
            }
            cls_karg_u64(&a, wlo);
            cls_karg_u64(&a, whi);
            size_t items = kind == CLS_K_SAVGOL3V ? (size_t)((cols + LC_LANES - 1) / LC_LANES) : (size_t)cols;
            /* the chunks of rows [wlo, whi): the kernel counts from wlo's */
            st = cls_pass_launch(&a, local, items, (size_t)((whi + chunk - 1) / chunk - wlo / chunk));
        }
    }
    if (back) {
        clReleaseMemObject(m[0]);
        m[0] = NULL;
        if (st == CLS_OK && (host || (r && d->zero_copy && r->scratch))) {
            void *p = NULL;
            st = cls_pass_map(ctx, d, m[1], ybytes, &p);
            if (st == CLS_OK) memcpy(y, p, ybytes);
            st = cls_pass_unmap(ctx, d, m[1], p, st);
        } else if (st == CLS_OK) {
            cl_int e = clEnqueueReadBuffer(d->q[0], m[1], CL_TRUE, 0, ybytes, y, 0, NULL, NULL);
            if (e != CL_SUCCESS) st = cls_fail_cl(ctx, d, "clEnqueueReadBuffer", e);
        }
    } else if (st == CLS_OK) {
        st = cls_pass_output_back(ctx, d, m[1], y, ybytes);
    }
    release(m, 4);
    cls_table_free(host, ybytes);
    return st;
}

static cls_status run(cls_context *ctx, lcjob *j)
{
    uint64_t gbytes = j->Rg * j->C * j->es;
    j->gpu = gbytes >= UNIT_BYTES ? 1 : UNIT_BYTES / gbytes;
    if (j->gpu > j->G) j->gpu = j->G;
    /* dimension 0 of a launch counts (group, column) in a size_t and the
     * kernels in ulong: one unit's values fit a size_t by check_arrays */
    size_t units = (size_t)((j->G + j->gpu - 1) / j->gpu);
    return cls_passes_run(ctx, j->t, units, unit, j);
}

static void job_init(lcjob *j, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t G, uint64_t Rg,
                     size_t C)
{
    memset(j, 0, sizeof *j);
    j->c = c;
    j->t = t;
    j->es = t == CLS_F64 ? 8 : 4;
    j->x = x;
    j->y = y;
    j->G = G;
    j->Rg = Rg;
    j->C = C;
}

/* The shift by one row of n power sums S_j = sum x u^j, u = (t - c) / s:
 * T_jm = C(j, m) (-1/s)^(j - m) at tab (n x n), then the leaving and
 * entering rows' u^m at u = -c/s and c/s (n each). */
static void shift_table(double *tab, unsigned n, unsigned w, double s)
{
    double *T = tab, *uo = T + n * n, *ui = uo + n, cs = ((w - 1) / 2.0) / s;
    for (unsigned r = 0; r < n; r++) {
        double bin = 1; /* C(r, m) */
        for (unsigned m = 0; m < n; m++) {
            T[r * n + m] = m <= r ? bin * pow(-1.0 / s, (double)(r - m)) : 0;
            if (m < r) bin = bin * (double)(r - m) / (double)(m + 1);
        }
        uo[r] = pow(-cs, (double)r);
        ui[r] = pow(cs, (double)r);
    }
}

/* cl/lightcurve.cl's lc_moments: the integer moments M_k = sum v^k, k < n,
 * of the valid positions v = 2t - (w - 1) of a window slide exactly in a
 * long where no sum can overflow: |M_k| <= w (w - 1)^k, and a slide's
 * partial sums stay below w (w + 1)^k + (w - 1)^k. tab[0] says whether
 * (1 or 0; 2: within a double's integers too); then the shift v - 2 of the
 * sums: C(k, m) (-2)^(k - m) (n x n; integers below 2^24, exact in a
 * float); then the moments of a full window, each as three parts exact in
 * a float (bits 40 and up, 20 to 39, 0 to 19), that a window after a full
 * one slides from. Returns whether exact in a long. */
static int moments_table(double *tab, unsigned n, unsigned w)
{
    double bits = (n - 1) * log2(w + 1.0) + log2((double)w) + 1;
    int exact = bits < 62;
    tab[0] = bits < 52 ? 2 : exact ? 1 : 0; /* 2: CLS_K_SAVGOL3V's vectors of doubles */
    for (unsigned k = 0; k < n; k++) {
        double bin = 1; /* C(k, m) */
        for (unsigned m = 0; m < n; m++) {
            tab[1 + k * n + m] = m <= k ? bin * pow(-2.0, (double)(k - m)) : 0;
            if (m < k) bin = bin * (double)(k - m) / (double)(m + 1);
        }
    }
    double *full = tab + 1 + n * n;
    for (unsigned k = 0; k < n; k++) {
        int64_t sum = 0; /* odd k: 0, the window being symmetric */
        for (unsigned t = 0; exact && k % 2 == 0 && t < w; t++) {
            int64_t v = 2 * (int64_t)t - (int64_t)(w - 1), pw = 1;
            for (unsigned e = 0; e < k; e++) pw *= v;
            sum += pw;
        }
        full[3 * k] = (double)((sum >> 40) << 40);
        full[3 * k + 1] = (double)(((sum >> 20) & 0xFFFFF) << 20);
        full[3 * k + 2] = (double)(sum & 0xFFFFF);
    }
    return exact;
}

/* The rows per work-item of the Savitzky-Golay trend with float sums (a
 * column per work-item: unit()) that keep its loop trips, all loops
 * together, within LOOP_MAX (rusticl's llvmpipe stops them silently past
 * ~65 535: PITFALLS.md; the devices without float64 here): the window's
 * sums counted once (w), and on a row whose window misses values the
 * moments (slid: O(n^2), n = 2q - 1; counted afresh, w n, once per chunk,
 * or every row without exact moments), the solve (q^3) and the
 * evaluation. Below 1: no chunk keeps within the bound. */
static double float_chunk(unsigned w, unsigned q, int exact)
{
    double n = 2.0 * q - 1, fit = n * (n + 1) / 2 + 2 * n + (double)q * q * q + 2.0 * q * q + q + 16;
    if (exact) return (LOOP_MAX - w - w * (n + 1)) / (LC_SIMD * (n + 1 + fit));
    return (LOOP_MAX - w) / (LC_SIMD * (w * (n + 1) + fit));
}

/* The trend's kernel, edge, window start and rows per work-item in j. */
static cls_status trend_setup(cls_context *ctx, lcjob *j_, const cls_clean *c)
{
    lcjob j = *j_;
    {
        unsigned w = c->window;
        if (c->detrend == CLS_DETREND_MEAN) {
            j.kind = CLS_K_MOVAVG;
            j.edge = c->edge == CLS_EDGE_DEFAULT ? CLS_EDGE_REFLECT : (int)c->edge;
            j.start = -(int64_t)(w / 2) - c->origin;
            /* each chunk starts its sum afresh (w reads): chunks of a few
             * windows keep that a small part of the work */
            uint64_t ch = 4 * (uint64_t)w;
            j.chunk = (uint32_t)(ch < 256 ? 256 : ch > 16384 ? 16384 : ch);
            /* CLS_K_SAVGOL3V's table for the mean (polyorder 0 there):
             * weight 1 / w, derivative scale 1, the other sums kept 0 */
            j.g[0] = 1.0 / w;
            j.g[3] = 1;
            for (unsigned r = 0; r < 3; r++) j.g[4 + r * 3 + r] = 1;
            j.g[4 + 9] = j.g[4 + 12] = 1;
        } else {
            j.kind = c->polyorder == 2 ? CLS_K_SAVGOL3 : CLS_K_SAVGOL;
            j.edge = c->edge == CLS_EDGE_DEFAULT ? CLS_EDGE_INTERP : (int)c->edge;
            j.start = -(int64_t)((w - 1) / 2);
            /* each chunk starts its sums afresh, which bounds the rounding
             * the sliding sums gather: k slides multiply an error of S_0
             * by about (k / s)^p in S_p (the shift's binomial terms), so
             * a chunk is s A^(1/p) rows at most, A = 1e3 with float64
             * sums (errors ~1e-13), 10 with float sums (~1e-6) */
            double s = cls_savgol_scale(w);
            if (!cls_savgol_weights(w, c->polyorder, c->deriv, c->delta, j.g))
                return !ctx ? CLS_E_ARG
                            : cls_fail(ctx, CLS_E_ARG, "light curves: the Savitzky-Golay fit of window %u, "
                                       "polyorder %u is singular", w, c->polyorder);
            /* the shift by one row of the sums S_j = sum x u^j */
            unsigned q = c->polyorder + 1;
            shift_table(j.g + q + 1, q, w, s);
            int exact = moments_table(j.g + q + 1 + q * q + 2 * q, 2 * q - 1, w);
            double fl = float_chunk(w, q, exact);
            for (int f = 0; f < 2; f++) {
                double ch = c->polyorder ? s * pow(f ? 1e3 : 10, 1.0 / c->polyorder) : 4096;
                ch = ch < 1 ? 1 : ch > 4096 ? 4096 : ch;
                if (w < LOOP_MAX && ch + w > LOOP_MAX) ch = LOOP_MAX - w;
                if (!f && ch > fl) ch = fl;
                j.chunk_by_fp64[f] = (uint32_t)(ch < 1 ? 1 : ch);
            }
            j.float_unfit = fl < 1;
        }
        if (j.kind == CLS_K_MOVAVG) {
            /* in the lanes (CPUs: few work-items suffice, 8 columns each)
             * chunks of 16 windows: a chunk's first window, read afresh,
             * then costs 6 % more reads rather than 25 % */
            uint64_t cl = 16 * (uint64_t)w;
            j.chunk_lanes = (uint32_t)(cl < 1024 ? 1024 : cl > 16384 ? 16384 : cl);
            if (w < LOOP_MAX && j.chunk + w > LOOP_MAX) j.chunk = LOOP_MAX - w;
            if (w < LOOP_MAX && j.chunk_lanes + w > LOOP_MAX) j.chunk_lanes = LOOP_MAX - w;
        }
    }
    *j_ = j;
    return CLS_OK;
}

cls_status cls_lc_run(cls_context *ctx, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t G,
                      uint64_t Rg, size_t C)
{
    lcjob j;
    cls_status st = CLS_OK;
    if (c->detrend != CLS_DETREND_NONE) {
        job_init(&j, c, t, x, y, G, Rg, C);
        st = trend_setup(ctx, &j, c);
        if (st == CLS_OK) st = run(ctx, &j);
        x = y; /* the bins smooth the detrended values in place */
    }
    if (st == CLS_OK && c->bin_rows) {
        job_init(&j, c, t, x, y, G, Rg, C);
        j.kind = CLS_K_BIN_SMOOTH;
        st = run(ctx, &j);
    }
    return st;
}

cls_status cls_lc_reduce(cls_context *ctx, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t G,
                         uint64_t Rg, size_t C)
{
    lcjob j;
    job_init(&j, c, t, x, y, G, Rg, C);
    j.kind = CLS_K_BIN_REDUCE;
    j.nbins = (Rg + c->bin_rows - 1) / c->bin_rows;
    return run(ctx, &j);
}

void cls_lc_halo(const cls_clean *c, uint64_t *before, uint64_t *after, int *wrap)
{
    *before = *after = 0;
    *wrap = 0;
    if (!c || c->detrend == CLS_DETREND_NONE) return;
    lcjob j;
    job_init(&j, c, CLS_F64, NULL, NULL, 1, 0, 0);
    /* (a singular fit, or options the call's checks refuse, which the
     * route may ask about first: the chunks then are the widest any
     * kernel takes, and no fit reads them) */
    uint64_t ch = 16384;
    int fits = c->detrend == CLS_DETREND_MEAN ||
               (c->detrend == CLS_DETREND_SAVGOL && c->polyorder <= CLS_LC_PMAX && c->polyorder < c->window);
    if (fits && c->window >= 1 && c->window <= CLS_LC_WMAX && trend_setup(NULL, &j, c) == CLS_OK) {
        ch = j.chunk > j.chunk_lanes ? j.chunk : j.chunk_lanes;
        for (int f = 0; f < 2; f++)
            if (j.chunk_by_fp64[f] > ch) ch = j.chunk_by_fp64[f];
    }
    /* a work-item starts its sums at its chunk's first row, up to a chunk
     * before the block, and reads a window from there; a window reaches
     * at most w rows either side of its row (the moving average's origin
     * included) */
    *before = ch + c->window;
    *after = c->window;
    *wrap = c->edge == CLS_EDGE_WRAP;
}

cls_status cls_lc_run_rows(cls_context *ctx, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t Rg,
                           size_t C, const cls_lc_rows *r, int reduce)
{
    lcjob j;
    cls_status st = CLS_OK;
    size_t es = t == CLS_F64 ? 8 : 4;
    uint64_t n = r->whi - r->wlo;
    /* the block's own rows in x, or (a trend) in the trend's output */
    const char *src = (const char *)x + (size_t)((int64_t)r->wlo - r->base) * C * es;
    void *tr = reduce ? (void *)x : y; /* (reduce: the buffer, its rows read already) */
    if (c->detrend != CLS_DETREND_NONE) {
        job_init(&j, c, t, x, tr, 1, Rg, C);
        j.rows = r;
        st = trend_setup(ctx, &j, c);
        if (st == CLS_OK) st = run(ctx, &j);
        src = tr;
    }
    if (st != CLS_OK || !c->bin_rows) return st;
    if (reduce) return cls_lc_reduce(ctx, c, t, src, y, 1, n, C);
    job_init(&j, c, t, src, y, 1, n, C);
    j.kind = CLS_K_BIN_SMOOTH;
    return run(ctx, &j);
}
