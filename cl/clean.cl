/* The cleaning kernels (src/clean/clean_pass.c drives them; written once
 * for REAL = float or double like scale.cl).
 *
 * Geometry of a unit: `ng` statistics groups of `urows` rows each (a whole
 * group each, or one part of one long group), `ncols` columns, rows
 * `ncols` apart. Work-item (c, j) owns column c of chunk j: part
 * j % cpg of group j / cpg, at most `chunk` rows (the host keeps chunks
 * short: llvmpipe stops loops past ~65k iterations). Per-column tables are
 * entry (group of the unit * ncols + column).
 *
 * Missing: not finite, or equal to the sentinel (CLS_CF_SENT). With
 * CLS_CF_BOUNDS, a value outside [blo, bhi] of its column is clipped. */

#define CLS_CF_SENT   1u   /* a value equal to `sent` is missing */
#define CLS_CF_BOUNDS 2u   /* values outside [blo, bhi] are clipped */
#define CLS_CF_WRITE  4u   /* moments: also write y = x, clipped values and the sentinel
                              NaN (NaN and +-Inf stay) */
#define CLS_CF_CLAMP  8u   /* apply: clipped values take the nearest bound (else missing) */
#define CLS_CF_FILL   16u  /* apply: missing values take fill */
#define CLS_CF_SCALE  32u  /* apply: then y = ((v - shi) - slo) * m + o on finite values */
#define CLS_CF_RCLIP  64u  /* apply: then clamp the scaled value into [rlo, rhi] */
#define CLS_CF_MASK   128u /* apply: mk = 1 where missing or clipped, else 0 */
#define CLS_CF_NOY    256u /* apply: y not written (the mask only) */
#define CLS_CF_KEEP   512u /* apply: y = x as read (the mask says what was clipped) */

#define F(name) CAT(name, SFX)
/* CACC: the moments' sums, float64 where the device has it (also for
 * float32 data: the clipping decisions and the mean fill then follow the
 * float64 reference, not the order of float32 roundings; NVIDIA's
 * contracted float32 sums had clipped a different set than the reference
 * on a ramp column) */
#if REAL_BYTES == 8
#define CACC double
#elif CLS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define CACC double
#else
#define CACC float
#endif
/* NaN as numpy writes it (0x7fc00000 / 0x7ff8...): PoCL's NAN is a float
 * with a full payload (0x7fffffff), so a clipped float32 value and a
 * float32 NaN passed through were different bytes */
#if REAL_BYTES == 8
#define CLS_QNAN as_double((ulong)0x7ff8000000000000UL)
#else
#define CLS_QNAN as_float(0x7fc00000u)
#endif

/* Rows [*r0, *r1) of the unit (relative to its first row) of chunk j. */
#define CHUNK_ROWS()                                                          \
    uint c = (uint)get_global_id(0);                                          \
    ulong j = get_global_id(1);                                               \
    if (c >= ncols || j >= (ulong)ng * cpg) return;                           \
    ulong gl = j / cpg, part = j % cpg;                                       \
    ulong r0 = gl * urows + part * chunk;                                     \
    ulong r1 = min(gl * urows + urows, r0 + chunk);                           \
    ulong e = gl * ncols + c

/* Moments of the values a column's chunk keeps (not missing, inside the
 * bounds): count, mean and m2 (from shifted sums), min and max; how many it
 * clips below and above. Entry j * ncols + c of planes `pstride` apart:
 * CACC K, mean - K, m2, min, max; uint count, below, above. */
#if CLS_KERNEL == CLS_KID_CLEAN_MOMENTS
__kernel void F(clean_moments)(__global const REAL *x, __global REAL *y, uint ncols, uint ng, ulong urows,
                               ulong cpg, uint chunk, uint flags, REAL sent,
                               __global const REAL *blo, __global const REAL *bhi,
                               __global CACC *pr, __global uint *pc, ulong pstride)
{
    CHUNK_ROWS();
    REAL lo = (flags & CLS_CF_BOUNDS) ? blo[e] : (REAL)-INFINITY;
    REAL hi = (flags & CLS_CF_BOUNDS) ? bhi[e] : (REAL)INFINITY;
    int sen = (flags & CLS_CF_SENT) != 0, wr = (flags & CLS_CF_WRITE) != 0;
    uint n = 0, below = 0, above = 0;
    /* sums of v - K, K the first value kept: the moments of data far from
     * zero keep the precision of its spread (float32 at 1e6). Selects, not
     * branches, so that the work-items of a group run as vectors. */
    REAL K = 0, mn = INFINITY, mx = -INFINITY;
    CACC s1 = 0, s2 = 0;
    for (ulong r = r0; r < r1; r++) {
        REAL v = x[r * ncols + c];
        int fin = isfinite(v);
        int miss = !fin || (sen && v == sent);
        int b = !miss && v < lo, a = !miss && v > hi;
        int keep = !miss && !b && !a;
        below += (uint)b;
        above += (uint)a;
        if (wr) y[r * ncols + c] = keep || !fin ? v : CLS_QNAN;
        K = (n == 0 && keep) ? v : K;
        CACC u = keep ? (CACC)v - (CACC)K : (CACC)0;
        n += (uint)keep;
        s1 += u;
        s2 += u * u;
        mn = keep ? fmin(mn, v) : mn;
        mx = keep ? fmax(mx, v) : mx;
    }
    CACC mean = n ? s1 / (CACC)n : (CACC)0;
    CACC m2 = fmax(s2 - s1 * mean, (CACC)0);
    ulong o = j * ncols + c;
    pr[o] = K;
    pr[pstride + o] = mean;
    pr[2 * pstride + o] = m2;
    pr[3 * pstride + o] = mn;
    pr[4 * pstride + o] = mx;
    pc[o] = n;
    pc[pstride + o] = below;
    pc[2 * pstride + o] = above;
}
#endif

/* The cleaning pass: missing and clipped values filled, clamped or made
 * NaN, then (CLS_CF_SCALE) the scaler's map on finite values. Planes of
 * `prm`, `pstride` apart, entry e: 0 lower bound, 1 upper bound, 2 fill,
 * 3 shift high, 4 shift low, 5 multiplier, 6 offset. A sentinel not filled
 * becomes NaN; NaN and +-Inf not filled stay what they were. CLS_CF_KEEP:
 * every value written as read (only the mask shows the cleaning).
 * Built with -DCLS_CF=flags (program.c, cls_kernel_get_cf) the flags are
 * constants: a combination's code holds only the planes it reads and the
 * stores it makes, no test of `flags` per value (which, with all seven
 * planes loaded, made this pass several times a scaler's over the same
 * values); without it, the same code reads `flags`. */
#if CLS_KERNEL == CLS_KID_CLEAN_APPLY
#ifdef CLS_CF
#define CF_ON(f) ((CLS_CF & (f)) != 0)
#else
#define CF_ON(f) ((flags & (f)) != 0)
#endif
__kernel void F(clean_apply)(__global const REAL *x, __global REAL *y, __global uchar *mk, uint ncols, uint ng,
                             ulong urows,
                             uint flags, REAL sent, __global const REAL *prm, ulong pstride, REAL rlo, REAL rhi)
{
    /* one value per work-item (c, row of the unit): no loop, so that a CPU
     * driver runs neighbouring columns as vectors */
    /* c a size_t, not truncated to a uint, and the group's planes a
     * pointer (no 64-bit division per value where the unit is one group,
     * a part of a long one): the parameters' loads stay consecutive in c,
     * where PoCL gathered each of the seven planes value by value and
     * divided per value */
    /* the launch rounds up to whole groups (of at most ncols columns,
     * apply_unit): the last group of columns moves back to end at column
     * ncols - 1, its items over the group before it storing nothing, and
     * the rows past the table read the last and store nothing. Columns
     * then stay consecutive in the work-items, their loads and stores
     * vectors (a column clamped to ncols - 1, or an early return, made
     * PoCL gather and scatter value by value) */
    size_t lx = get_local_size(0), g0 = get_group_id(0) * lx;
    size_t back = g0 + lx > ncols ? min(g0 + lx - ncols, g0) : 0;
    size_t c = get_global_id(0) - back;
    ulong r = get_global_id(1), nr = (ulong)ng * urows;
    int in = c >= g0 && c < ncols && r < nr;
    r = min(r, nr - 1);
    __global const REAL *p = prm + (ng > 1 ? r / urows * ncols : 0);
    int bnd = CF_ON(CLS_CF_BOUNDS), clm = bnd && CF_ON(CLS_CF_CLAMP), fil = CF_ON(CLS_CF_FILL);
    int scl = CF_ON(CLS_CF_SCALE), rcl = scl && CF_ON(CLS_CF_RCLIP);
    REAL lo = bnd ? p[c] : (REAL)0, hi = bnd ? p[pstride + c] : (REAL)0;
    REAL fill = fil ? p[2 * pstride + c] : (REAL)0;
    REAL shi = scl ? p[3 * pstride + c] : (REAL)0, slo = scl ? p[4 * pstride + c] : (REAL)0;
    REAL m = scl ? p[5 * pstride + c] : (REAL)1, o = scl ? p[6 * pstride + c] : (REAL)0;
    REAL v = x[r * ncols + c], v0 = v;
    int is_sent = CF_ON(CLS_CF_SENT) && v == sent;
    int miss = !isfinite(v) || is_sent;
    v = is_sent ? CLS_QNAN : v;
    /* outside the bounds as astropy tests it: NaN bounds clip nothing */
    int out = bnd && !miss && (v < lo || v > hi);
    if (CF_ON(CLS_CF_MASK) && in) mk[r * ncols + c] = (uchar)(miss || out);
    v = out ? (clm ? clamp(v, lo, hi) : CLS_QNAN) : v;
    miss = miss || (out && !clm);
    v = (miss && fil) ? fill : v;
    REAL t = ((v - shi) - slo) * m + o;
    t = rcl ? clamp(t, rlo, rhi) : t;
    if (!CF_ON(CLS_CF_NOY) && in) y[r * ncols + c] = CF_ON(CLS_CF_KEEP) ? v0 : (scl && isfinite(v)) ? t : v;
}
#undef CF_ON
#endif

#undef CHUNK_ROWS
#undef F
#undef CLS_CF_SENT
#undef CLS_CF_BOUNDS
#undef CLS_CF_WRITE
#undef CLS_CF_CLAMP
#undef CLS_CF_FILL
#undef CLS_CF_SCALE
#undef CLS_CF_RCLIP
#undef CLS_CF_MASK
#undef CLS_CF_NOY
#undef CLS_CF_KEEP
#undef CLS_QNAN
#undef CACC
