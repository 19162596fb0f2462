/* Iterated k-sigma clipping of short columns in one kernel
 * (src/clean/clip_fast.c drives it; written once for REAL = float or
 * double like clean.cl).
 *
 * Work-item (block b of XW neighbouring columns, group g of the unit)
 * owns XW columns of a statistics group of `rows` <= QN rows, one per
 * lane of explicit vectors (cl/lanes.cl: XW = 4 doubles or 8 floats, one
 * AVX2 register). It loads
 * the columns once into private memory (w), sorts them (cl/sortnet.cl's
 * odd-even merge network, on vectors) and clips there. The values kept
 * are always the sorted values inside the bounds [L, H], a contiguous
 * range w[a, a + n) per lane, so the median is the middle of the range,
 * the MAD the median of a merge of its two sides, and the std comes from
 * S1, S2 (sums of x - K0 and its square over the range, K0 a median, in
 * ACC), from which an iteration subtracts the values it clips (the new
 * range: two binary searches). Where the subtraction would cancel, or the
 * range drifted away from K0, the lane sums its range afresh; without
 * cl_khr_fp64 (rusticl: ACC = float) every iteration does. The bounds
 * thus agree with the multi-pass path's within rounding (not bit for bit).
 * The moments handed on (count, mean, m2, min, max) are, where read (no
 * output written: a scaler follows; or mean imputation), summed in row
 * order with clean.cl's clean_moments arithmetic in one more pass: the
 * multi-pass path's bit for bit when the masks agree; else taken from S1,
 * S2 and the range (clean.c reads only the count then).
 * A lane's column that stopped changing is done; the work-item loops
 * until all of its lanes are (at most QN + 1 times: each iteration but
 * the last drops a value).
 *
 * Then, with CLS_XF_WRITE, it writes the columns once (a large output's
 * whole 64-byte rows of a block streamed past the cache, CLS_XF_NT): clipped values NaN
 * or clamped to the final bounds, missing ones (NaN, +-Inf, the sentinel)
 * filled or left (a sentinel not filled becomes NaN), as clean_apply does;
 * with CLS_XF_MASK, a byte per value into mk: 1 where missing or clipped
 * (astropy's mask).
 *
 * Outputs, entry e = g * ncols + column of planes `pstride` apart:
 * st (ACC: float64 where the device has it, also for float32 data):
 *     0 shift K, 1 mean - K (the mean is their float64 sum), 2 m2, 3 min,
 *     4 max, 5 lower bound, 6 upper bound (values of the data's type,
 *     as numpy's bounds are for astropy), 7 fill value;
 * cn: 0 values not missing, 1 values kept, 2 iterations run. */

#define CLS_XF_SENT   1u   /* a value equal to `sent` is missing */
#define CLS_XF_MEAN   2u   /* centre: mean (else median) */
#define CLS_XF_MAD    4u   /* spread: mad_std (else std) */
#define CLS_XF_CLAMP  8u   /* clipped values take the nearest bound (else NaN) */
#define CLS_XF_WRITE  16u  /* write y */
#define CLS_XF_MASK   32u  /* write mk: 1 where missing or clipped */
#define CLS_XF_MOMENTS 64u /* the moments of the values kept are read: sum them in row order */
#define CLS_XF_NT     128u /* a large output: stream full lines past the cache */
#define CLS_XF_FILL_SHIFT 8 /* bits 8..10: 0 none, 1 mean, 2 median, 3 most frequent, 4 constant */
/* bits 12..13, for clip_fast.c's switch clip_stage (benches only): 1 load
 * and store only, 2 also the sort, 3 also the sums and the moments (no
 * iteration), 0 everything */
#define CLS_XF_STAGE_SHIFT 12
/* bit 11: y = x as read (astropy's masked data), the mask says what was
 * clipped (at bit 14 it broke Oclgrind 21.10's optimised runs, whose
 * trunc to i3 of the fill field kept it: tests/repro/oclgrind_opt.c) */
#define CLS_XF_KEEP   2048u

#if CLS_KERNEL == CLS_KID_CLIP32 || CLS_KERNEL == CLS_KID_CLIP64
#if CLS_KERNEL == CLS_KID_CLIP32
#define QN 32
#define QNAME clip32
#else
#define QN 64
#define QNAME clip64
#endif
#define F(name) CAT(name, SFX)

#if CLS_FP64
#define X_MAD_STD 1.482602218505602 /* clean_host.h's CLS_MAD_STD */
#else
#define X_MAD_STD 1.482602218505602f
#endif

/* In the last pass over a work-item's rows (in cache), the same row of the
 * work-items after it (2 * XW values on: 64 bytes with 4 lanes of doubles,
 * 128 with 8; on the Zen 5 VM 64 bytes with 8 lanes, the very next
 * work-item's line, ran as slowly as no prefetch, 1.3x, and 256 to 1024
 * as fast as 128, 2026-11-26): their first loads then hit the cache
 * instead of waiting on memory a row at a time (scale.cl's fit_apply does
 * the same). Only on the host CPU's drivers (program.c: CLS_PREFETCH). */
#if CLS_PREFETCH
#define X_PREFETCH(i) __builtin_prefetch(p + (ulong)(i) * ncols + 2 * XW)
#else
#define X_PREFETCH(i) ((void)0)
#endif

/* The moments (nk, K, s1, s2, mn, mx) of the values inside [lor, hir],
 * one row t (as loaded from x) at a time: clean_moments' arithmetic in
 * row order (sums in ACC, as its CACC), lane by lane, so that the
 * statistics handed on equal the multi-pass path's bit for bit.
 * CLIP_MOMENTS_END: rel, m2. */
#define CLIP_MOMENTS_ADD(t)                                                   \
    do {                                                                      \
        RV xv = (t);                                                          \
        IV keep = isfinite(xv) & (sen ? xv != (RV)sent : (IV)-1) & !(xv < lor) & !(xv > hir); \
        K = select(K, xv, keep & (nk == 0));                                  \
        AV u = select((AV)0, TO_AV(xv) - TO_AV(K), TO_AIV(keep));            \
        nk -= keep;                                                           \
        s1 += u;                                                              \
        s2 += u * u;                                                          \
        mn = select(mn, fmin(mn, xv), keep);                                  \
        mx = select(mx, fmax(mx, xv), keep);                                  \
    } while (0)
#define CLIP_MOMENTS_END()                                                    \
    do {                                                                      \
        rel = select((AV)0, s1 / TO_AV(nk), TO_AIV(nk != 0));                 \
        m2 = fmax(s2 - s1 * rel, (AV)0);                                      \
    } while (0)
/* One row of the output: clipped values NaN or clamped, missing ones
 * filled or left (a sentinel not filled becomes NaN), as clean_apply, or
 * (kp) every value as read; of the mask, 1 where missing or clipped. */
#define CLIP_WRITE(t0, i)                                                     \
    do {                                                                      \
        RV r_ = (t0), t_ = r_;                                                \
        IV is_sent = sen ? t_ == (RV)sent : (IV)0;                            \
        IV miss = !isfinite(t_) | is_sent;                                    \
        t_ = select(t_, X_QNAN, is_sent);                                     \
        IV out = ~miss & ((t_ < lor) | (t_ > hir));                           \
        if (wm) F(x_store_m)(miss | out, mk + o + (ulong)(i) * ncols, nl);     \
        t_ = select(t_, clm ? clamp(t_, lor, hir) : X_QNAN, out);             \
        miss |= clm ? (IV)0 : out;                                            \
        if (wr) F(x_store)(kp ? r_ : select(t_, fill, miss & fil), y + o + (ulong)(i) * ncols, nl, nt); \
    } while (0)

/* S1, S2 = the sums of (x - K0) and (x - K0)^2 over w[a, a + n), summed
 * afresh for the lanes of `redo`, with K0 the range's median (the range
 * lies in w's first `rows`: the loops over the values stop there). */
#define X_SUMS(redo)                                                          \
    do {                                                                      \
        IV r_ = (redo), e_ = a + n;                                           \
        AIV ra_ = TO_AIV(r_);                                                 \
        AV k_ = TO_AV(select((RV)0, X_GATHER(w, X_IDX(a + ((n - 1) >> 1))), n > 0)); \
        AV f1_ = 0, f2_ = 0;                                                  \
        for (int i = 0; i < (int)rows; i++) {                                 \
            AIV in_ = TO_AIV(((IV)i >= a) & ((IV)i < e_));                    \
            AV d_ = TO_AV(w[i]) - k_;                                         \
            f1_ = select(f1_, f1_ + d_, in_);                                 \
            f2_ = select(f2_, f2_ + d_ * d_, in_);                            \
        }                                                                     \
        K0 = select(K0, k_, ra_);                                             \
        S1 = select(S1, f1_, ra_);                                            \
        S2 = select(S2, f2_, ra_);                                            \
    } while (0)

/* pl, ph: how many of the n0 values kept at first (w's first n0, sorted)
 * are below lr, and how many are not above hr (binary searches over w's
 * first qb, a power of two >= rows, the rest +Inf): the values inside
 * [lr, hr] are w[pl, ph). */
#define X_RANKS(lr, hr, pl, ph)                                               \
    do {                                                                      \
        pl = 0;                                                               \
        ph = 0;                                                               \
        _Pragma("unroll")                                                     \
        for (uint s_ = QN / 2; s_ > 0; s_ >>= 1) {                            \
            if (s_ >= qb) continue;                                           \
            pl += select((IV)0, (IV)s_, X_GATHER(w, pl + (IV)(s_ - 1)) < (lr)); \
            ph += select((IV)0, (IV)s_, X_GATHER(w, ph + (IV)(s_ - 1)) <= (hr)); \
        }                                                                     \
        pl -= X_GATHER(w, pl) < (lr);                                         \
        ph -= X_GATHER(w, ph) <= (hr);                                        \
        pl = min(pl, n0);                                                     \
        ph = min(ph, n0);                                                     \
    } while (0)

__kernel void F(QNAME)(__global const REAL *x, __global REAL *y, __global uchar *mk, uint ncols, uint rows, uint ngroups,
                       uint flags, REAL sent, __global const ACC *sig, int maxiters, REAL cfill,
                       __global ACC *st, __global uint *cn, ulong pstride, uint lead)
{
    /* lead (0 to XW - 1): the first block holds the columns before the
     * first whose rows start a 64-byte line (clip_fast.c sets it where
     * every row starts a line at the same column), so that the others
     * write whole lines */
    uint b = (uint)get_global_id(0);
    uint c0 = lead == 0 ? b * XW : b == 0 ? 0 : lead + (b - 1) * XW;
    uint g = (uint)get_global_id(1);
    if (c0 >= ncols || g >= ngroups) return;
    /* lanes with a column: XW, or fewer in the first (lead) or last block */
    uint nl = lead != 0 && b == 0 ? lead : ncols - c0;
    ulong e = (ulong)g * ncols + c0;
    __global const REAL *p = x + (ulong)g * rows * ncols + c0;
    int sen = (flags & CLS_XF_SENT) != 0;
    /* missing values become +Inf: after every finite value in the sort, and
     * never inside the bounds */
    RV w[QN];
    IV n0 = 0, zero = 0;
    for (uint i = 0; i < rows; i++) {
        RV t = F(x_load)(p + (ulong)i * ncols, nl, (REAL)INFINITY);
        IV ok = isfinite(t) & (sen ? t != (RV)sent : (IV)-1);
        t = select((RV)INFINITY, t, ok);
        w[i] = t;
        n0 -= ok;
        zero |= t == (RV)0;
    }
    for (uint i = rows; i < QN; i++) w[i] = (RV)INFINITY;
    /* qb: the power of two >= rows that the network sorts and the searches
     * search (w past rows is +Inf, sorted already): wide data with groups
     * of a row or a few paid QN's network and loops per column, 8x the
     * work of a min-max call */
    uint qb = 1;
    while (qb < rows) qb <<= 1;
    uint stage = (flags >> CLS_XF_STAGE_SHIFT) & 3u;
    /* Batcher's odd-even merge network: fewer exchanges than the bitonic
     * one (docs/guide/cleaning-speed.md, "Sorting networks") */
    if (stage != 1) {
        CLS_SORTNET_OEM_UPTO(RV, w, qb, QN, X_MIN, X_MAX)
    }
    /* zeros back in key order (-0 first), as the counting kernels rank
     * them (the network leaves -0 and +0 in either order); only where a
     * lane has a zero, so the loads count nothing else */
    if (any(zero)) {
        IV nneg = 0;
        for (uint i = 0; i < QN; i++) nneg -= (w[i] < (RV)0) | ((w[i] == (RV)0) & signbit(w[i]));
#pragma unroll
        for (uint i = 0; i < QN; i++)
            w[i] = select(w[i], select((RV)0, -(RV)0, (IV)i < nneg), w[i] == (RV)0);
    }

    AV slo = (AV)sig[0], shi = (AV)sig[1];
    AV L = (AV)-INFINITY, H = (AV)INFINITY;
    /* The values kept are w[a, a + n). Their sums S1, S2 of (x - K0) and
     * (x - K0)^2 (K0 a median) are summed once over the sorted values;
     * an iteration subtracts those of the values it clips (a few, at the
     * ends of the range: O(moves) instead of a pass over the rows). A lane
     * whose clipped values outweigh those kept (S2) more than 8 times sums
     * its new range afresh around its new median instead, as does a lane
     * whose range moved away from K0 (S1^2 / n near S2), so that neither
     * the subtraction nor m2 = S2 - S1^2 / n loses more than a few units
     * of rounding. */
    IV n = n0, a = 0;
    AV K0 = 0, S1 = 0, S2 = 0;
    /* the last iteration's bounds of each lane (the final mask's, as astropy's) */
    AV FL = (AV)-INFINITY, FH = (AV)INFINITY;
    /* the profile's stages (the switch clip_stage): 1 and 2 neither sum nor
     * clip, 3 sums but does not clip */
    int pre = stage == 0 || stage == 3;
    if (pre) X_SUMS((IV)-1);
    IV act = (IV)-1, it = 0;
    if (stage != 0) act = 0;
    for (uint t = 0; t <= QN; t++) {
        if ((maxiters >= 0 && t >= (uint)maxiters) || !any(act)) break;
        it -= act;
        /* the median of the range (numpy's: the mean of the middle two) */
        IV has = n != 0;
        IV i0 = X_IDX(a + ((n - 1) >> 1));
        IV i1 = X_IDX(a + (n >> 1));
        RV m0 = X_GATHER(w, i0), m1 = X_GATHER(w, i1);
        RV med = select((m0 + m1) / (RV)2, m0, (n & 1) != 0);
        med = select((RV)NAN, med, has);
        AIV hasa = TO_AIV(has);
        AV nA = TO_AV(n);
        AV cen = (flags & CLS_XF_MEAN) ? select((AV)NAN, K0 + S1 / nA, hasa) : TO_AV(med);
        AV spr;
        if (flags & CLS_XF_MAD) {
            /* median of |x - med| over the range: the distances grow away
             * from med on both sides; merge the sides up to rank n / 2 */
            IV r0 = (n - 1) >> 1, r1 = n >> 1, end = a + n, j = a;
            for (uint i = 0; i < rows; i++) j -= ((IV)i >= a) & ((IV)i < end) & (w[i] < med);
            IV l = j - 1;
            RV d0 = 0, d1 = 0;
            for (uint k = 0; k <= rows / 2; k++) {
                RV dl = select((RV)INFINITY, fabs(X_GATHER(w, X_IDX(l)) - med), l >= a);
                RV dr = select((RV)INFINITY, fabs(X_GATHER(w, X_IDX(j)) - med), j < end);
                IV left = dl <= dr;
                RV d = select(dr, dl, left);
                l += left;
                j -= ~left;
                d0 = select(d0, d, (IV)k == r0);
                d1 = select(d1, d, (IV)k == r1);
            }
            AV odd = TO_AV(d0), even = (TO_AV(d0) + TO_AV(d1)) / (AV)2;
            spr = select(even, odd, TO_AIV((n & 1) != 0)) * (AV)X_MAD_STD;
            spr = select((AV)NAN, spr, hasa);
        } else {
            spr = select((AV)NAN, sqrt(fmax(S2 - S1 * (S1 / nA), (AV)0) / nA), hasa);
        }
        {
            AV lo = cen - spr * slo, hi = cen + spr * shi;
            AIV upd = TO_AIV(act);
            L = select(L, lo, upd & (lo > L));
            H = select(H, hi, upd & (hi < H));
            FL = select(FL, lo, upd);
            FH = select(FH, hi, upd);
        }
        /* the new range: the ranks of the bounds in w (binary searches) */
        RV lr = TO_RV_A(L), hr = TO_RV_A(H);
        IV pl, ph;
        X_RANKS(lr, hr, pl, ph);
        /* the values clipped: w[a, pl) below, w[ph, a + n) above */
        IV live = ph > pl, lo = a, hi = a + n - 1;
        AV R1 = 0, R2 = 0;
        for (uint k = 0; k < QN; k++) {
            IV ml = live & (lo < pl), mh = live & (hi >= ph);
            if (!any(ml | mh)) break;
            AV dl = TO_AV(X_GATHER(w, X_IDX(lo))) - K0, dh = TO_AV(X_GATHER(w, X_IDX(hi))) - K0;
            AIV aml = TO_AIV(ml), amh = TO_AIV(mh);
            R1 += select((AV)0, dl, aml) + select((AV)0, dh, amh);
            R2 += select((AV)0, dl * dl, aml) + select((AV)0, dh * dh, amh);
            lo -= ml;
            hi += mh;
        }
        IV before = n;
        a = pl;
        n = max(ph - pl, (IV)0);
        S1 -= R1;
        S2 -= R2;
        AIV none = TO_AIV(n == 0);
        S1 = select(S1, (AV)0, none);
        S2 = select(S2, (AV)0, none);
        /* afresh where the subtraction or m2 = S2 - S1^2 / n would cancel
         * (S2 more than 10 m2: the range moved far from K0) */
        nA = TO_AV(n);
#if CLS_FP64
        IV redo = live & TO_IV((R2 > (AV)8 * S2) | (S1 * S1 > (AV)0.9 * nA * S2));
#else
        /* float32 sums (rusticl): afresh every iteration, the subtraction
         * lost too much (the reference's tolerance, 1e-6, was missed) */
        IV redo = live;
#endif
        if (any(redo)) X_SUMS(redo);
        act &= n != before;
    }
    /* As astropy's sigma_clip: the values clipped in the end are those
     * outside the last iteration's bounds. A value an earlier iteration
     * clipped comes back when inside them (the range can widen: a mean
     * centre moves once the outliers are gone), and NaN bounds (nothing
     * left to compute them from) clip nothing. The range again by binary
     * searches; its sums afresh where it moved. */
    RV lor = TO_RV_A(FL), hir = TO_RV_A(FH);
    {
        RV lr = select(lor, (RV)-INFINITY, isnan(lor)), hr = select(hir, (RV)INFINITY, isnan(hir));
        IV pl, ph;
        X_RANKS(lr, hr, pl, ph);
        IV nf = max(ph - pl, (IV)0);
        IV moved = (pl != a) | (nf != n);
        a = pl;
        n = nf;
        if (pre && any(moved)) X_SUMS(moved);
    }
    /* The moments of the values kept. Where someone reads them
     * (CLS_XF_MOMENTS: a scaler follows, or cls_clean's mean_out; or the
     * fill value is their mean),
     * summed in row order as the multi-pass path sums them, in a pass of
     * their own (the work-item's rows are still in the cache): equal bit
     * for bit. Else (clean.c then reads only the count) from the sorted
     * sums, within rounding. */
    uint fm = (flags >> CLS_XF_FILL_SHIFT) & 7u;
    int wr = (flags & CLS_XF_WRITE) != 0;
    int wm = (flags & CLS_XF_MASK) != 0;
    int sep = pre && ((flags & CLS_XF_MOMENTS) || fm == 1);
    RV K = 0, mn = INFINITY, mx = -INFINITY;
    AV s1 = 0, s2 = 0, rel = 0, m2 = 0;
    IV nk = n;
    if (pre && !sep) {
        AV nA = TO_AV(n);
        AIV hasa = TO_AIV(n != 0);
        K = TO_RV_A(K0);
        rel = select((AV)0, S1 / nA, hasa);
        m2 = select((AV)0, fmax(S2 - S1 * (S1 / nA), (AV)0), hasa);
        mn = X_GATHER(w, X_IDX(a));
        mx = X_GATHER(w, X_IDX(a + n - 1));
    }
    if (sep) {
        nk = 0;
        for (uint i = 0; i < rows; i++) {
            if (!wr) X_PREFETCH(i);
            CLIP_MOMENTS_ADD(F(x_load)(p + (ulong)i * ncols, nl, (REAL)INFINITY));
        }
        CLIP_MOMENTS_END();
    }
    IV has = n != 0;

    /* the fill value over the kept values */
    RV fill = X_QNAN;
    if (fm == 4) {
        fill = (RV)cfill;
    } else if (fm == 1) {
        fill = select(X_QNAN, TO_RV_A(TO_AV(K) + rel), has);
    } else if (fm == 2) {
        IV i0 = X_IDX(a + ((n - 1) >> 1));
        IV i1 = X_IDX(a + (n >> 1));
        RV m0 = X_GATHER(w, i0), m1 = X_GATHER(w, i1);
        fill = select(X_QNAN, select((m0 + m1) / (RV)2, m0, (n & 1) != 0), has);
    } else if (fm == 3) {
        /* the longest run of equal values, the smallest of ties */
        IV run = 0, best = 0, end = a + n;
        for (uint i = 0; i < rows; i++) {
            IV in = ((IV)i >= a) & ((IV)i < end);
            IV same = i > 0 ? (w[i] == w[i > 0 ? i - 1 : 0]) & ((IV)i > a) : (IV)0;
            run = select((IV)0, select((IV)1, run + 1, same), in);
            IV better = in & (run > best);
            fill = select(fill, w[i], better);
            best = select(best, run, better);
        }
    }

    if (wr || wm) {
        int clm = (flags & CLS_XF_CLAMP) != 0, nt = (flags & CLS_XF_NT) != 0, kp = (flags & CLS_XF_KEEP) != 0;
        IV fil = fm != 0 ? (IV)-1 : (IV)0;
        ulong o = (ulong)g * rows * ncols + c0;
        for (uint i = 0; i < rows; i++) {
            X_PREFETCH(i);
            CLIP_WRITE(F(x_load)(p + (ulong)i * ncols, nl, (REAL)0), i);
        }
    }

    F(x_store_a)(TO_AV(K), st + e, nl);
    F(x_store_a)(rel, st + pstride + e, nl);
    F(x_store_a)(m2, st + 2 * pstride + e, nl);
    F(x_store_a)(TO_AV(mn), st + 3 * pstride + e, nl);
    F(x_store_a)(TO_AV(mx), st + 4 * pstride + e, nl);
    F(x_store_a)(TO_AV(lor), st + 5 * pstride + e, nl);
    F(x_store_a)(TO_AV(hir), st + 6 * pstride + e, nl);
    F(x_store_a)(TO_AV(fill), st + 7 * pstride + e, nl);
    F(x_store_u)(TO_UV(n0), cn + e, nl);
    F(x_store_u)(TO_UV(nk), cn + pstride + e, nl);
    F(x_store_u)(TO_UV(it), cn + 2 * pstride + e, nl);
}
#undef CLIP_MOMENTS_ADD
#undef CLIP_MOMENTS_END
#undef CLIP_WRITE
#undef X_PREFETCH
#undef X_SUMS
#undef X_RANKS
#undef X_MAD_STD
#undef QN
#undef QNAME
#undef F
#endif

#undef CLS_XF_SENT
#undef CLS_XF_MEAN
#undef CLS_XF_MAD
#undef CLS_XF_CLAMP
#undef CLS_XF_WRITE
#undef CLS_XF_MASK
#undef CLS_XF_MOMENTS
#undef CLS_XF_NT
#undef CLS_XF_FILL_SHIFT
#undef CLS_XF_STAGE_SHIFT
#undef CLS_XF_KEEP
