/* The cleaning kernels (src/engine/clean_pass.c drives them; written once
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

#define F(name) CAT(name, SFX)

inline int F(c_missing)(REAL v, uint flags, REAL sent)
{
    return !isfinite(v) || ((flags & CLS_CF_SENT) && v == sent);
}

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
 * bounds): Welford's count, mean and m2, min and max; also how many it
 * clips below and above. Entry j * ncols + c of planes `pstride` apart:
 * REAL K, mean - K, m2, min, max; uint count, below, above. */
#if CLS_KERNEL == CLS_KID_CLEAN_MOMENTS
__kernel void F(clean_moments)(__global const REAL *x, __global REAL *y, uint ncols, uint ng, ulong urows,
                               ulong cpg, uint chunk, uint flags, REAL sent,
                               __global const REAL *blo, __global const REAL *bhi,
                               __global REAL *pr, __global uint *pc, ulong pstride)
{
    CHUNK_ROWS();
    REAL lo = (flags & CLS_CF_BOUNDS) ? blo[e] : (REAL)0;
    REAL hi = (flags & CLS_CF_BOUNDS) ? bhi[e] : (REAL)0;
    uint n = 0, below = 0, above = 0;
    /* Welford on v - K, K the first value kept: the mean of data far from
     * zero keeps the precision of its spread (float32 at 1e6) */
    REAL K = 0, mean = 0, m2 = 0, mn = INFINITY, mx = -INFINITY;
    for (ulong r = r0; r < r1; r++) {
        REAL v = x[r * ncols + c];
        int keep = !F(c_missing)(v, flags, sent);
        if (keep && (flags & CLS_CF_BOUNDS)) {
            if (v < lo) { below++; keep = 0; }
            else if (v > hi) { above++; keep = 0; }
        }
        if (flags & CLS_CF_WRITE) y[r * ncols + c] = keep || !isfinite(v) ? v : (REAL)NAN;
        if (!keep) continue;
        if (n == 0) K = v;
        n++;
        REAL u = v - K, d = u - mean;
        mean += d / (REAL)n;
        m2 += d * (u - mean);
        mn = fmin(mn, v);
        mx = fmax(mx, v);
    }
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
 * becomes NaN; NaN and +-Inf not filled stay what they were. */
#if CLS_KERNEL == CLS_KID_CLEAN_APPLY
__kernel void F(clean_apply)(__global const REAL *x, __global REAL *y, uint ncols, uint ng, ulong urows,
                             ulong cpg, uint chunk, uint flags, REAL sent, __global const REAL *prm,
                             ulong pstride, REAL rlo, REAL rhi)
{
    CHUNK_ROWS();
    REAL lo = prm[e], hi = prm[pstride + e], fill = prm[2 * pstride + e];
    REAL shi = prm[3 * pstride + e], slo = prm[4 * pstride + e];
    REAL m = prm[5 * pstride + e], o = prm[6 * pstride + e];
    for (ulong r = r0; r < r1; r++) {
        REAL v = x[r * ncols + c];
        int miss = F(c_missing)(v, flags, sent);
        if (miss && (flags & CLS_CF_SENT) && v == sent) v = (REAL)NAN;
        if (!miss && (flags & CLS_CF_BOUNDS) && !(v >= lo && v <= hi)) {
            if (flags & CLS_CF_CLAMP) v = clamp(v, lo, hi);
            else { miss = 1; v = (REAL)NAN; }
        }
        if (miss && (flags & CLS_CF_FILL)) v = fill;
        if ((flags & CLS_CF_SCALE) && isfinite(v)) {
            v = ((v - shi) - slo) * m + o;
            if (flags & CLS_CF_RCLIP) v = clamp(v, rlo, rhi);
        }
        y[r * ncols + c] = v;
    }
}
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
