/* Iterated k-sigma clipping of short columns in one kernel, shaped for
 * GPUs (src/clean/clip_fast.c picks it on GPU devices; cl/clip.cl's
 * kernel, shaped for CPU drivers, elsewhere). Same arguments, flags,
 * outputs and iteration logic as clip.cl (read its header first), but:
 *
 * - one column per work-item, in scalar REAL: a GPU vectorises across
 *   work-items, and clip.cl's explicit lanes gave it nothing;
 * - the column's rows in __local memory, not a private array (64 x double4
 *   = 2 KiB per work-item spilled out of the registers: 0.66 s for
 *   18 x 60 x 98450 on an H200, 24x a min-max pass). Column-major,
 *   w[i * LW + lid], so that the work-items of a group touch neighbouring
 *   banks; a work-item only ever touches its own column, so no barrier;
 * - loaded and written with coalesced reads and writes (row r of LW
 *   neighbouring columns per group and step).
 *
 * LW columns per work-group at most (the host launches LW, or fewer where
 * the kernel's work-group size is smaller: any local size <= LW is right):
 * QN * LW * REAL_BYTES = 16 KiB of local memory at most (64 float64 rows:
 * LW 32; else LW 64), within every device's CL_DEVICE_LOCAL_MEM_SIZE.
 *
 * Same results as clip.cl's kernel: counts, masks, fills and iterations
 * equal (the same sorting network, medians, binary searches and sums, in
 * the same order); the bounds and the sorted-sum moments within rounding
 * (a compiler may contract a * b + c differently in scalar and vector
 * code), and a column's result never depends on its neighbours' (in
 * clip.cl a done lane whose sums look cancelled may be summed afresh while
 * its neighbours iterate, changing only those moments' rounding).
 *
 * st is written in ACC (double where the device has it), not REAL: the
 * moments it hands on are exact in ACC; the host reads 8-byte entries
 * when the data is float64 or the device has cl_khr_fp64, else 4-byte. */

#if CLS_KERNEL == CLS_KID_CLIP32L || CLS_KERNEL == CLS_KID_CLIP64L
#if CLS_KERNEL == CLS_KID_CLIP32L
#define QN 32
#define QNAME clip32l
#else
#define QN 64
#define QNAME clip64l
#endif
/* columns per work-group (clip_fast.c mirrors it) */
#if QN * REAL_BYTES > 256
#define LW 32
#else
#define LW 64
#endif
#define F(name) CAT(name, SFX)
#define XF_SENT   1u
#define XF_MEAN   2u
#define XF_MAD    4u
#define XF_CLAMP  8u
#define XF_WRITE  16u
#define XF_MASK   32u /* write mk: 1 where missing or clipped */
#define XF_MOMENTS 64u /* the moments of the values kept are read: sum them in row order */
#define XF_FILL_SHIFT 8
#define XF_STAGE_SHIFT 12
#define XF_KEEP   2048u /* y = x as read: the mask says what was clipped */

#if CLS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ACC double
#define L_MAD_STD 1.482602218505602 /* clean_host.h's CLS_MAD_STD */
#else
#define ACC float
#define L_MAD_STD 1.482602218505602f
#endif
#if REAL_BYTES == 8
#define L_QNAN as_double((ulong)0x7ff8000000000000UL)
#else
#define L_QNAN as_float(0x7fc00000u)
#endif
/* row i of the work-item's column; L_IDX: an index into it, in [0, QN) */
#define W(i) wl[(uint)(i) * LW + lid]
#define L_IDX(i) clamp((int)(i), 0, QN - 1)
#define L_MIN(a, b) ((a) < (b) ? (a) : (b))
#define L_MAX(a, b) ((a) < (b) ? (b) : (a))

/* S1, S2 = the sums of (x - K0) and (x - K0)^2 over w[a, a + n), K0 the
 * range's median (clip.cl's X_SUMS, the terms in the same order) */
#define L_SUMS()                                                              \
    do {                                                                      \
        int e_ = a + n;                                                       \
        ACC k_ = n > 0 ? (ACC)W(L_IDX(a + ((n - 1) >> 1))) : (ACC)0;          \
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

/* pl, ph: how many of the n0 values kept at first (sorted) are below lr,
 * and how many are not above hr (binary searches): the values inside
 * [lr, hr] are w[pl, ph). */
#define L_RANKS(lr, hr, pl, ph)                                               \
    do {                                                                      \
        pl = 0;                                                               \
        ph = 0;                                                               \
        for (int s_ = QN / 2; s_ > 0; s_ >>= 1) {                             \
            pl += W(pl + s_ - 1) < (lr) ? s_ : 0;                             \
            ph += W(ph + s_ - 1) <= (hr) ? s_ : 0;                            \
        }                                                                     \
        pl += W(pl) < (lr);                                                   \
        ph += W(ph) <= (hr);                                                  \
        pl = min(pl, n0);                                                     \
        ph = min(ph, n0);                                                     \
    } while (0)

__kernel void F(QNAME)(__global const REAL *x, __global REAL *y, __global uchar *mk, uint ncols, uint rows, uint ngroups,
                       uint flags, REAL sent, __global const ACC *sig, int maxiters, REAL cfill,
                       __global ACC *st, __global uint *cn, ulong pstride)
{
    __local REAL wl[QN * LW];
    uint lid = (uint)get_local_id(0);
    uint c = (uint)get_global_id(0);
    uint g = (uint)get_global_id(1);
    if (c >= ncols || g >= ngroups) return;
    ulong e = (ulong)g * ncols + c;
    __global const REAL *p = x + (ulong)g * rows * ncols + c;
    int sen = (flags & XF_SENT) != 0;
    /* missing values become +Inf: after every finite value in the sort, and
     * never inside the bounds. Work-item lid reads row i of column c: the
     * group reads LW neighbouring values per row. */
    int n0 = 0, nlt = 0, nz = 0;
    for (uint i = 0; i < QN; i++) {
        REAL t = i < rows ? p[(ulong)i * ncols] : (REAL)INFINITY;
        int ok = isfinite(t) && !(sen && t == sent);
        t = ok ? t : (REAL)INFINITY;
        W(i) = t;
        n0 += ok;
        nlt += ok && t < (REAL)0;
        nz += ok && t == (REAL)0 && signbit(t);
    }
    uint stage = (flags >> XF_STAGE_SHIFT) & 3u;
    if (stage != 1) {
        /* Batcher's odd-even merge network, as clip.cl's. Unrolled
         * completely (compile-time offsets into local memory) except on
         * PoCL's CPU drivers (CLS_PREFETCH), which run this kernel only in
         * the tests: unrolled, the 64-row kernel's cold build took 16.7 s
         * there, with loops 2.6 s */
#if CLS_PREFETCH
        CLS_SORTNET_OEM_AT(REAL, W, QN, L_MIN, L_MAX, "unroll 1");
#else
        CLS_SORTNET_OEM_AT(REAL, W, QN, L_MIN, L_MAX, "unroll");
#endif
    }
    /* zeros back in key order (-0 first), as the counting kernels rank them */
    int nneg = nlt + nz;
    for (int i = 0; i < QN; i++)
        if (W(i) == (REAL)0) W(i) = i < nneg ? -(REAL)0 : (REAL)0;

    ACC slo = sig[0], shi = sig[1];
    ACC L = -INFINITY, H = INFINITY;
    /* the values kept are w[a, a + n); S1, S2 their sums around K0, less
     * those an iteration clips (clip.cl says why and when afresh) */
    int n = n0, a = 0;
    ACC K0 = 0, S1 = 0, S2 = 0;
    ACC FL = -INFINITY, FH = INFINITY; /* the last iteration's bounds (clip.cl) */
    int pre = stage == 0 || stage == 3;
    if (pre) L_SUMS();
    int act = stage == 0, it = 0;
    for (uint t = 0; t <= QN; t++) {
        if ((maxiters >= 0 && t >= (uint)maxiters) || !act) break;
        it++;
        /* the median of the range (numpy's: the mean of the middle two) */
        int has = n != 0;
        REAL m0 = W(L_IDX(a + ((n - 1) >> 1))), m1 = W(L_IDX(a + (n >> 1)));
        REAL med = (n & 1) != 0 ? m0 : (m0 + m1) / (REAL)2;
        med = has ? med : (REAL)NAN;
        ACC nA = (ACC)n;
        ACC cen = (flags & XF_MEAN) ? (has ? K0 + S1 / nA : (ACC)NAN) : (ACC)med;
        ACC spr;
        if (flags & XF_MAD) {
            /* median of |x - med| over the range: merge the two sides
             * (growing away from med) up to rank n / 2 */
            int r0 = (n - 1) >> 1, r1 = n >> 1, end = a + n, j = a;
            for (int i = a; i < end; i++) j += W(i) < med;
            int l = j - 1;
            REAL d0 = 0, d1 = 0;
            for (int k = 0; k <= QN / 2 && k <= r1; k++) {
                REAL dl = l >= a ? fabs(W(L_IDX(l)) - med) : (REAL)INFINITY;
                REAL dr = j < end ? fabs(W(L_IDX(j)) - med) : (REAL)INFINITY;
                int left = dl <= dr;
                REAL d = left ? dl : dr;
                l -= left;
                j += !left;
                d0 = k == r0 ? d : d0;
                d1 = k == r1 ? d : d1;
            }
            ACC odd = (ACC)d0, even = ((ACC)d0 + (ACC)d1) / (ACC)2;
            spr = ((n & 1) != 0 ? odd : even) * (ACC)L_MAD_STD;
            spr = has ? spr : (ACC)NAN;
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
        int pl, ph;
        L_RANKS(lr, hr, pl, ph);
        /* the values clipped: w[a, pl) below, w[ph, a + n) above */
        int live = ph > pl, lo = a, hi = a + n - 1;
        ACC R1 = 0, R2 = 0;
        for (int k = 0; k < QN; k++) {
            int ml = live && lo < pl, mh = live && hi >= ph;
            if (!(ml || mh)) break;
            ACC dl = (ACC)W(L_IDX(lo)) - K0, dh = (ACC)W(L_IDX(hi)) - K0;
            R1 += (ml ? dl : (ACC)0) + (mh ? dh : (ACC)0);
            R2 += (ml ? dl * dl : (ACC)0) + (mh ? dh * dh : (ACC)0);
            lo += ml;
            hi -= mh;
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
        if (redo) L_SUMS();
        act = n != before;
    }
    /* As astropy's (clip.cl says why): the values clipped in the end are
     * those outside the last bounds; NaN bounds clip nothing. */
    REAL lor = (REAL)FL, hir = (REAL)FH;
    {
        REAL lr = isnan(lor) ? (REAL)-INFINITY : lor, hr = isnan(hir) ? (REAL)INFINITY : hir;
        int pl, ph;
        L_RANKS(lr, hr, pl, ph);
        int nf = max(ph - pl, 0), moved = pl != a || nf != n;
        a = pl;
        n = nf;
        if (pre && moved) L_SUMS();
    }
    /* The moments of the values kept: summed in row order as the
     * multi-pass path sums them where someone reads them (no output: a
     * scaler follows; or mean imputation), else from the sorted sums. */
    uint fm = (flags >> XF_FILL_SHIFT) & 7u;
    int wr = (flags & XF_WRITE) != 0;
    int wm = (flags & XF_MASK) != 0;
    int sep = pre && ((flags & XF_MOMENTS) || fm == 1);
    /* (sums in ACC, as clean.cl's CACC) */
    REAL K = 0, mn = INFINITY, mx = -INFINITY;
    ACC s1 = 0, s2 = 0, rel = 0, m2 = 0;
    int nk = n;
    if (pre && !sep) {
        ACC nA = (ACC)n;
        int hasa = n != 0;
        K = (REAL)K0;
        rel = hasa ? S1 / nA : (ACC)0;
        m2 = hasa ? fmax(S2 - S1 * (S1 / nA), (ACC)0) : (ACC)0;
        mn = W(L_IDX(a));
        mx = W(L_IDX(a + n - 1));
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
    REAL fill = L_QNAN;
    if (fm == 4) {
        fill = cfill;
    } else if (fm == 1) {
        fill = has ? (REAL)((ACC)K + rel) : L_QNAN;
    } else if (fm == 2) {
        REAL m0 = W(L_IDX(a + ((n - 1) >> 1))), m1 = W(L_IDX(a + (n >> 1)));
        fill = has ? ((n & 1) != 0 ? m0 : (m0 + m1) / (REAL)2) : L_QNAN;
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
        ulong o = (ulong)g * rows * ncols + c;
        for (uint i = 0; i < rows; i++) {
            REAL t_ = p[(ulong)i * ncols], t0 = t_;
            int is_sent = sen && t_ == sent;
            int miss = !isfinite(t_) || is_sent;
            t_ = is_sent ? L_QNAN : t_;
            int out = !miss && (t_ < lor || t_ > hir);
            if (wm) mk[o + (ulong)i * ncols] = (uchar)(miss || out);
            t_ = out ? (clm ? clamp(t_, lor, hir) : L_QNAN) : t_;
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
#undef L_SUMS
#undef L_RANKS
#undef W
#undef L_IDX
#undef L_MIN
#undef L_MAX
#undef L_QNAN
#undef L_MAD_STD
#undef ACC
#undef XF_SENT
#undef XF_MEAN
#undef XF_MAD
#undef XF_CLAMP
#undef XF_WRITE
#undef XF_MASK
#undef XF_MOMENTS
#undef XF_FILL_SHIFT
#undef XF_STAGE_SHIFT
#undef XF_KEEP
#undef LW
#undef QN
#undef QNAME
#undef F
#endif
