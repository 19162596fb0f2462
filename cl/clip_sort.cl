/* Iterated k-sigma clipping of groups of any length in one kernel, sorted
 * once (the "sort" regime, src/engine/regime.h; clip_fast.c drives it).
 * The arguments, flags, outputs and iteration logic are clip_local.cl's
 * (read clip.cl's header first); what differs:
 *
 * - a work-item clips one entry (group e / ncols, column e % ncols) of
 *   the n_e from e0 on, its column's kept values sorted once into its
 *   window of `scr` (cl/sort.cl): no bound on the rows but the scratch;
 * - every iteration is O(log n): the median an index, the bounds' ranks
 *   binary searches, the std the sums S1, S2 less the values clipped at
 *   the ends of the range (afresh over the range where that would cancel,
 *   as clip.cl), and the MAD the k-th smallest distance of two sorted
 *   runs (the values below and above the median, growing away from it),
 *   found by bisection instead of a merge;
 * - the data is read three times at most (the load, the moments where
 *   read, the output), the sorted keys stay in the window.
 *
 * Iterations stop when a range stops changing (at most n + 1: each but
 * the last drops a value), or at maxiters. */

#if CLS_KERNEL == CLS_KID_CLIPSORT
#define XF_SENT   1u
#define XF_MEAN   2u
#define XF_MAD    4u
#define XF_CLAMP  8u
#define XF_WRITE  16u
#define XF_MASK   32u
#define XF_MOMENTS 64u
#define XF_FILL_SHIFT 8
#define XF_KEEP   2048u

#if CLS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ACC double
#define S_MAD_STD 1.482602218505602 /* clean_host.h's CLS_MAD_STD */
#else
#define ACC float
#define S_MAD_STD 1.482602218505602f
#endif
#if REAL_BYTES == 8
#define S_QNAN as_double((ulong)0x7ff8000000000000UL)
#else
#define S_QNAN as_float(0x7fc00000u)
#endif
/* value i of the sorted column, i in [0, n0) */
#define W(i) F(value_of_key)(w[(i)])

/* S1, S2 = the sums of (x - K0) and (x - K0)^2 over w[a, a + n), K0 the
 * range's median (clip.cl's X_SUMS) */
#define S_SUMS()                                                              \
    do {                                                                      \
        int e_ = a + n;                                                       \
        ACC k_ = n > 0 ? (ACC)W(a + ((n - 1) >> 1)) : (ACC)0;                 \
        ACC f1_ = 0, f2_ = 0;                                                 \
        for (int i_ = a; i_ < e_; i_++) {                                     \
            ACC d_ = (ACC)W(i_) - k_;                                         \
            f1_ = f1_ + d_;                                                   \
            f2_ = f2_ + d_ * d_;                                              \
        }                                                                     \
        K0 = k_;                                                              \
        S1 = f1_;                                                             \
        S2 = f2_;                                                             \
    } while (0)

/* how many of the sorted w[0, n) are below v (lower) or not above it */
inline int F(s_lower)(__global const UKEY *w, int n, REAL v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int m = (lo + hi) >> 1;
        if (W(m) < v) lo = m + 1;
        else hi = m;
    }
    return lo;
}
inline int F(s_upper)(__global const UKEY *w, int n, REAL v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int m = (lo + hi) >> 1;
        if (W(m) <= v) lo = m + 1;
        else hi = m;
    }
    return lo;
}

/* The distances to med of the range w[a, end), split at j (w[a, j) below
 * med): left run A[i] = med - w[j - 1 - i] (na = j - a), right run
 * B[i] = w[j + i] - med (nb = end - j), both ascending as fabs(x - med)
 * computes them. Returns the k-th smallest (0-based) of the two. */
#define S_DA(i) fabs(W(j - 1 - (i)) - med)
#define S_DB(i) fabs(W(j + (i)) - med)
inline REAL F(s_kth_dist)(__global const UKEY *w, int a, int j, int end, REAL med, int k)
{
    int na = j - a, nb = end - j;
    /* i values from A and k + 1 - i from B make the k + 1 smallest */
    int lo = max(0, k + 1 - nb), hi = min(k + 1, na);
    while (lo < hi) {
        int i = (lo + hi) >> 1;
        /* too few from A when A[i] < B[k - i] */
        if (S_DA(i) < S_DB(k - i)) lo = i + 1;
        else hi = i;
    }
    int i = lo;
    REAL fa = i > 0 ? S_DA(i - 1) : -(REAL)INFINITY;
    REAL fb = k + 1 - i > 0 ? S_DB(k - i) : -(REAL)INFINITY;
    return fa > fb ? fa : fb;
}
#undef S_DA
#undef S_DB

__kernel void F(clipsort)(__global const REAL *x, __global REAL *y, __global uchar *mk, uint ncols, uint rows,
                          uint ngroups, uint flags, REAL sent, __global const ACC *sig, int maxiters, REAL cfill,
                          __global ACC *st, __global uint *cn, ulong pstride, __global UKEY *scr, ulong e0,
                          ulong n_e)
{
    ulong wi = get_global_id(0);
    if (wi >= n_e) return;
    ulong e = e0 + wi;
    ulong g = e / ncols;
    uint c = (uint)(e % ncols);
    if (g >= ngroups) return;
    __global const REAL *p = x + g * rows * ncols + c;
    __global UKEY *ka = scr + wi * S_WIN(rows), *kb = ka + rows;
    __global uint *h = (__global uint *)(kb + rows);
    int sen = (flags & XF_SENT) != 0;
    /* the kept values' keys, sorted once */
    int n0 = 0;
    UKEY kand = ~(UKEY)0, kor = 0;
    for (uint i = 0; i < rows; i++) {
        REAL t = p[(ulong)i * ncols];
        if (isfinite(t) && !(sen && t == sent)) {
            UKEY k = F(key_of)(t);
            ka[n0++] = k;
            kand &= k;
            kor |= k;
        }
    }
    __global const UKEY *w = F(sort_keys)(ka, kb, h, (uint)n0, rows, kand ^ kor) ? kb : ka;

    ACC slo = sig[0], shi = sig[1];
    ACC L = -INFINITY, H = INFINITY;
    /* the values kept are w[a, a + n); S1, S2 their sums around K0, less
     * those an iteration clips (clip.cl says why and when afresh) */
    int n = n0, a = 0;
    ACC K0 = 0, S1 = 0, S2 = 0;
    ACC FL = -INFINITY, FH = INFINITY; /* the last iteration's bounds (clip.cl) */
    S_SUMS();
    int act = 1, it = 0;
    for (int t = 0; t <= n0; t++) {
        if ((maxiters >= 0 && t >= maxiters) || !act) break;
        it++;
        /* the median of the range (numpy's: the mean of the middle two) */
        int has = n != 0;
        REAL m0 = has ? W(a + ((n - 1) >> 1)) : 0, m1 = has ? W(a + (n >> 1)) : 0;
        REAL med = (n & 1) != 0 ? m0 : (m0 + m1) / (REAL)2;
        med = has ? med : (REAL)NAN;
        ACC nA = (ACC)n;
        ACC cen = (flags & XF_MEAN) ? (has ? K0 + S1 / nA : (ACC)NAN) : (ACC)med;
        ACC spr;
        if (flags & XF_MAD) {
            spr = (ACC)NAN;
            if (has) {
                /* median of |x - med| over the range */
                int end = a + n, j = a + F(s_lower)(w + a, n, med) ;
                REAL d0 = F(s_kth_dist)(w, a, j, end, med, (n - 1) >> 1);
                REAL d1 = (n & 1) != 0 ? d0 : F(s_kth_dist)(w, a, j, end, med, n >> 1);
                ACC odd = (ACC)d0, even = ((ACC)d0 + (ACC)d1) / (ACC)2;
                spr = ((n & 1) != 0 ? odd : even) * (ACC)S_MAD_STD;
            }
        } else {
            spr = has ? sqrt(fmax(S2 - S1 * (S1 / nA), (ACC)0) / nA) : (ACC)NAN;
        }
        {
            ACC lo = cen - spr * slo, hi = cen + spr * shi;
            L = lo > L ? lo : L;
            H = hi < H ? hi : H;
            FL = lo;
            FH = hi;
        }
        /* the new range: the ranks of the bounds in w (binary searches) */
        REAL lr = (REAL)L, hr = (REAL)H;
        int pl = F(s_lower)(w, n0, lr), ph = F(s_upper)(w, n0, hr);
        /* the values clipped: w[a, pl) below, w[ph, a + n) above */
        int live = ph > pl;
        ACC R1 = 0, R2 = 0;
        if (live) {
            for (int i = a; i < pl; i++) {
                ACC d = (ACC)W(i) - K0;
                R1 += d;
                R2 += d * d;
            }
            for (int i = a + n - 1; i >= ph; i--) {
                ACC d = (ACC)W(i) - K0;
                R1 += d;
                R2 += d * d;
            }
        }
        int before = n;
        a = pl;
        n = max(ph - pl, 0);
        S1 -= R1;
        S2 -= R2;
        S1 = n == 0 ? (ACC)0 : S1;
        S2 = n == 0 ? (ACC)0 : S2;
        nA = (ACC)n;
#if CLS_FP64
        int redo = live && ((R2 > (ACC)8 * S2) || (S1 * S1 > (ACC)0.9 * nA * S2));
#else
        int redo = live; /* float32 sums: afresh every iteration (clip.cl) */
#endif
        if (redo) S_SUMS();
        act = n != before;
    }
    /* As astropy's (clip.cl says why): the values clipped in the end are
     * those outside the last bounds; NaN bounds clip nothing. */
    REAL lor = (REAL)FL, hir = (REAL)FH;
    {
        REAL lr = isnan(lor) ? (REAL)-INFINITY : lor, hr = isnan(hir) ? (REAL)INFINITY : hir;
        int pl = F(s_lower)(w, n0, lr), ph = F(s_upper)(w, n0, hr);
        int nf = max(ph - pl, 0), moved = pl != a || nf != n;
        a = pl;
        n = nf;
        if (moved) S_SUMS();
    }
    /* The moments of the values kept: summed in row order as the
     * multi-pass path sums them where someone reads them (no output: a
     * scaler follows; or mean imputation), else from the sorted sums. */
    uint fm = (flags >> XF_FILL_SHIFT) & 7u;
    int wr = (flags & XF_WRITE) != 0;
    int wm = (flags & XF_MASK) != 0;
    int sep = (flags & XF_MOMENTS) || fm == 1;
    REAL K = 0, mn = INFINITY, mx = -INFINITY;
    ACC s1 = 0, s2 = 0, rel = 0, m2 = 0;
    int nk = n;
    if (!sep && n != 0) {
        ACC nA = (ACC)n;
        K = (REAL)K0;
        rel = S1 / nA;
        m2 = fmax(S2 - S1 * (S1 / nA), (ACC)0);
        mn = W(a);
        mx = W(a + n - 1);
    }
    if (sep) {
        nk = 0;
        for (uint i = 0; i < rows; i++) {
            REAL xv = p[(ulong)i * ncols];
            int keep = isfinite(xv) && !(sen && xv == sent) && !(xv < lor) && !(xv > hir);
            K = keep && nk == 0 ? xv : K;
            ACC u = keep ? (ACC)xv - (ACC)K : (ACC)0;
            nk += keep;
            s1 += u;
            s2 += u * u;
            mn = keep ? fmin(mn, xv) : mn;
            mx = keep ? fmax(mx, xv) : mx;
        }
        rel = nk != 0 ? s1 / (ACC)nk : (ACC)0;
        m2 = fmax(s2 - s1 * rel, (ACC)0);
    }
    int has = n != 0;

    /* the fill value over the kept values */
    REAL fill = S_QNAN;
    if (fm == 4) {
        fill = cfill;
    } else if (fm == 1) {
        fill = has ? (REAL)((ACC)K + rel) : S_QNAN;
    } else if (fm == 2) {
        if (has) {
            REAL m0 = W(a + ((n - 1) >> 1)), m1 = W(a + (n >> 1));
            fill = (n & 1) != 0 ? m0 : (m0 + m1) / (REAL)2;
        }
    } else if (fm == 3) {
        /* the longest run of equal values, the smallest of ties */
        int run = 0, best = 0, end = a + n;
        for (int i = a; i < end; i++) {
            int same = i > a && W(i) == W(i - 1);
            run = same ? run + 1 : 1;
            if (run > best) {
                fill = W(i);
                best = run;
            }
        }
    }

    if (wr || wm) {
        /* clipped values NaN or clamped, missing ones filled or left (a
         * sentinel not filled becomes NaN), as clean_apply; the mask 1
         * where missing or clipped */
        int clm = (flags & XF_CLAMP) != 0, fil = fm != 0, kp = (flags & XF_KEEP) != 0;
        ulong o = g * rows * ncols + c;
        for (uint i = 0; i < rows; i++) {
            REAL t_ = p[(ulong)i * ncols], t0 = t_;
            int is_sent = sen && t_ == sent;
            int miss = !isfinite(t_) || is_sent;
            t_ = is_sent ? S_QNAN : t_;
            int out = !miss && (t_ < lor || t_ > hir);
            if (wm) mk[o + (ulong)i * ncols] = (uchar)(miss || out);
            t_ = out ? (clm ? clamp(t_, lor, hir) : S_QNAN) : t_;
            miss = miss || (!clm && out);
            if (wr) y[o + (ulong)i * ncols] = kp ? t0 : miss && fil ? fill : t_;
        }
    }

    st[e] = (ACC)K;
    st[pstride + e] = (ACC)rel;
    st[2 * pstride + e] = (ACC)m2;
    st[3 * pstride + e] = (ACC)mn;
    st[4 * pstride + e] = (ACC)mx;
    st[5 * pstride + e] = (ACC)lor;
    st[6 * pstride + e] = (ACC)hir;
    st[7 * pstride + e] = (ACC)fill;
    cn[e] = (uint)n0;
    cn[pstride + e] = (uint)nk;
    cn[2 * pstride + e] = (uint)it;
}
#undef S_SUMS
#undef W
#undef S_QNAN
#undef S_MAD_STD
#undef ACC
#undef XF_SENT
#undef XF_MEAN
#undef XF_MAD
#undef XF_CLAMP
#undef XF_WRITE
#undef XF_MASK
#undef XF_MOMENTS
#undef XF_FILL_SHIFT
#undef XF_KEEP
#endif

#undef S_WIN
#undef S_WIDE_MIN
#undef S_RUN
#undef S_MERGE_MAX
#undef UKEY
#undef KEY_BITS
#undef F
#undef Q_FILTER_ARGS
#undef Q_FILTER_LOAD
