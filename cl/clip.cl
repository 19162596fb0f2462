/* Iterated k-sigma clipping of short columns in one kernel
 * (src/engine/clip_fast.c drives it; written once for REAL = float or
 * double like clean.cl).
 *
 * Work-item (column c, group g of the unit) owns one column of a
 * statistics group of `rows` <= QN rows: it loads the column once into
 * private memory (v, in row order), sorts a copy (w, cl/sortnet.cl), and
 * clips in registers. The values kept are always the sorted values inside
 * the bounds [L, H], a contiguous range w[a, a + n), so the median is the
 * middle of the range and the MAD the median of a merge of its two sides.
 * The moments (count, mean, m2, min, max) are summed in row order with
 * the same shifted sums and the same float64 host arithmetic as
 * clean.cl's clean_moments + clean.c: with float64 arithmetic available
 * (ACC = double) every iteration's bounds, hence every mask, equal the
 * multi-pass path's bit for bit. Without cl_khr_fp64 (rusticl) ACC is
 * float and the centre and spread carry float32 rounding.
 *
 * Then, with CLS_XF_WRITE, it writes the column once: clipped values NaN
 * or clamped to the final bounds, missing ones (NaN, +-Inf, the sentinel)
 * filled or left (a sentinel not filled becomes NaN), as clean_apply does.
 *
 * Outputs, entry e = g * ncols + c of planes `pstride` apart:
 * st: 0 shift K, 1 mean - K (the mean is their float64 sum), 2 m2,
 *     3 min, 4 max, 5 lower bound, 6 upper bound, 7 fill value;
 * cn: 0 values not missing, 1 values kept, 2 iterations run. */

#define CLS_XF_SENT   1u   /* a value equal to `sent` is missing */
#define CLS_XF_MEAN   2u   /* centre: mean (else median) */
#define CLS_XF_MAD    4u   /* spread: mad_std (else std) */
#define CLS_XF_CLAMP  8u   /* clipped values take the nearest bound (else NaN) */
#define CLS_XF_WRITE  16u  /* write y */
#define CLS_XF_FILL_SHIFT 8 /* bits 8..10: 0 none, 1 mean, 2 median, 3 most frequent, 4 constant */

#if CLS_KERNEL == CLS_KID_CLIP32 || CLS_KERNEL == CLS_KID_CLIP64 || CLS_KERNEL == CLS_KID_CLIP128
#if CLS_FP64
#if REAL_BYTES == 4
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define ACC double
#else
#define ACC float
#endif
#if CLS_KERNEL == CLS_KID_CLIP32
#define QN 32
#define QNAME clip32
#elif CLS_KERNEL == CLS_KID_CLIP64
#define QN 64
#define QNAME clip64
#else
#define QN 128
#define QNAME clip128
#endif
#define F(name) CAT(name, SFX)

/* The moments of the values of v[0, rows) inside [lo, hi] (missing ones
 * are +Inf in v and never inside): clean_moments' arithmetic exactly. */
#define CLIP_MOMENTS(lo, hi)                                                  \
    do {                                                                      \
        n = 0; a = 0;                                                         \
        K = 0; s1 = 0; s2 = 0; mn = INFINITY; mx = -INFINITY;                 \
        for (uint i = 0; i < rows; i++) {                                     \
            REAL x = v[i];                                                    \
            int fin = x != (REAL)INFINITY;                                    \
            int keep = fin && x >= (lo) && x <= (hi);                         \
            a += (uint)(fin && x < (lo));                                     \
            K = (n == 0 && keep) ? x : K;                                     \
            REAL u = keep ? x - K : (REAL)0;                                  \
            n += (uint)keep;                                                  \
            s1 += u;                                                          \
            s2 += u * u;                                                      \
            mn = keep ? fmin(mn, x) : mn;                                     \
            mx = keep ? fmax(mx, x) : mx;                                     \
        }                                                                     \
        rel = n ? s1 / (REAL)n : (REAL)0;                                     \
        m2 = fmax(s2 - s1 * rel, (REAL)0);                                    \
    } while (0)

__kernel void F(QNAME)(__global const REAL *x, __global REAL *y, uint ncols, uint rows, uint ngroups,
                       uint flags, REAL sent, __global const ACC *sig, int maxiters, REAL cfill,
                       __global REAL *st, __global uint *cn, ulong pstride)
{
    uint c = (uint)get_global_id(0);
    uint g = (uint)get_global_id(1);
    if (c >= ncols || g >= ngroups) return;
    ulong e = (ulong)g * ncols + c;
    __global const REAL *p = x + (ulong)g * rows * ncols + c;
    int sen = (flags & CLS_XF_SENT) != 0;
    /* missing values become +Inf: after every finite value in the sort, and
     * never inside the bounds */
    REAL v[QN], w[QN];
    uint n0 = 0, nlt = 0, nz = 0;
#pragma unroll
    for (uint i = 0; i < QN; i++) {
        REAL t = i < rows ? p[(ulong)i * ncols] : (REAL)INFINITY;
        int ok = isfinite(t) && !(sen && t == sent);
        t = ok ? t : (REAL)INFINITY;
        v[i] = t;
        w[i] = t;
        n0 += (uint)ok;
        nlt += (uint)(ok && t < 0);
        nz += (uint)(ok && t == 0 && signbit(t));
    }
    CLS_SORTNET(REAL, w, QN);
    /* zeros back in key order (-0 first), as the counting kernels rank them */
#pragma unroll
    for (uint i = 0; i < QN; i++) w[i] = w[i] == 0 ? (i < nlt + nz ? -(REAL)0 : (REAL)0) : w[i];

    ACC slo = sig[0], shi = sig[1];
    ACC L = -INFINITY, H = INFINITY;
    uint n, a;
    REAL K, s1, s2, mn, mx, rel, m2;
    CLIP_MOMENTS((REAL)-INFINITY, (REAL)INFINITY);
    uint it = 0;
    for (;;) {
        if (maxiters >= 0 && it >= (uint)maxiters) break;
        if (it > QN) break; /* unreachable: each iteration but the last drops a value */
        it++;
        /* the median of the range (numpy's: the mean of the middle two) */
        REAL med = (REAL)NAN;
        if (n) {
            REAL m0 = w[a + (n - 1) / 2], m1 = w[a + n / 2];
            med = (n & 1) ? m0 : (m0 + m1) / (REAL)2;
        }
        ACC cen;
        if (flags & CLS_XF_MEAN) cen = n ? (ACC)K + (ACC)rel : (ACC)NAN;
        else cen = (ACC)med;
        ACC spr = (ACC)NAN;
        if ((flags & CLS_XF_MAD) && n) {
            /* median of |x - med| over the range: the distances grow away
             * from med on both sides; merge the sides up to rank n / 2 */
            uint r0 = (n - 1) / 2, r1 = n / 2, j = a;
            while (j < a + n && w[j] < med) j++;
            int l = (int)j - 1;
            REAL d0 = 0, d1 = 0;
            for (uint k = 0; k <= r1; k++) {
                REAL dl = l >= (int)a ? fabs(w[l] - med) : (REAL)INFINITY;
                REAL dr = j < a + n ? fabs(w[j] - med) : (REAL)INFINITY;
                int left = dl <= dr;
                REAL d = left ? dl : dr;
                l -= left ? 1 : 0;
                j += left ? 0u : 1u;
                d0 = k == r0 ? d : d0;
                d1 = d;
            }
            spr = ((n & 1) ? (ACC)d0 : ((ACC)d0 + (ACC)d1) / (ACC)2) * (ACC)1.482602218505602;
        } else if (n) {
            spr = sqrt((ACC)m2 / (ACC)n);
        }
        {
            /* as the host computes them (no fused multiply-add) */
#pragma OPENCL FP_CONTRACT OFF
            ACC lo = cen - spr * slo, hi = cen + spr * shi;
            if (lo > L) L = lo;
            if (hi < H) H = hi;
        }
        uint before = n;
        CLIP_MOMENTS((REAL)L, (REAL)H);
        if (n == before) break;
    }
    REAL lor = (REAL)L, hir = (REAL)H;

    /* the fill value over the kept values */
    uint fm = (flags >> CLS_XF_FILL_SHIFT) & 7u;
    REAL fill = (REAL)NAN;
    if (fm == 4) {
        fill = cfill;
    } else if (n && fm == 1) {
        fill = (REAL)((ACC)K + (ACC)rel);
    } else if (n && fm == 2) {
        REAL m0 = w[a + (n - 1) / 2], m1 = w[a + n / 2];
        fill = (n & 1) ? m0 : (m0 + m1) / (REAL)2;
    } else if (n && fm == 3) {
        /* the longest run of equal values, the smallest of ties */
        uint run = 0, best = 0;
        REAL prev = (REAL)NAN;
        for (uint i = a; i < a + n; i++) {
            run = w[i] == prev ? run + 1 : 1u;
            prev = w[i];
            fill = run > best ? w[i] : fill;
            best = run > best ? run : best;
        }
    }

    if (flags & CLS_XF_WRITE) {
        int clm = (flags & CLS_XF_CLAMP) != 0, fil = fm != 0;
        __global REAL *q = y + (ulong)g * rows * ncols + c;
        for (uint i = 0; i < rows; i++) {
            REAL t = p[(ulong)i * ncols];
            int is_sent = sen && t == sent;
            int miss = !isfinite(t) || is_sent;
            t = is_sent ? (REAL)NAN : t;
            int out = !miss && !(t >= lor && t <= hir);
            t = out ? (clm ? clamp(t, lor, hir) : (REAL)NAN) : t;
            miss = miss || (out && !clm);
            q[(ulong)i * ncols] = (miss && fil) ? fill : t;
        }
    }

    st[e] = K;
    st[pstride + e] = rel;
    st[2 * pstride + e] = m2;
    st[3 * pstride + e] = mn;
    st[4 * pstride + e] = mx;
    st[5 * pstride + e] = lor;
    st[6 * pstride + e] = hir;
    st[7 * pstride + e] = fill;
    cn[e] = n0;
    cn[pstride + e] = n;
    cn[2 * pstride + e] = it;
}
#undef CLIP_MOMENTS
#undef ACC
#undef QN
#undef QNAME
#undef F
#endif

#undef CLS_XF_SENT
#undef CLS_XF_MEAN
#undef CLS_XF_MAD
#undef CLS_XF_CLAMP
#undef CLS_XF_WRITE
#undef CLS_XF_FILL_SHIFT
