/* Iterated k-sigma clipping of groups of any length in one kernel, sorted
 * once (the "sort" regime, src/quantiles/regime.h; clip_fast.c drives it).
 * The arguments, flags, outputs and iteration logic are clip_local.cl's
 * (read clip.cl's header first); what differs:
 *
 * - a work-item clips one entry (group e / ncols, column e % ncols) of
 *   the n_e from e0 on, its column's kept values sorted once into its
 *   window of `scr` (cl/sort.cl; a block of eight neighbouring columns
 *   of at most S_NET rows by a network in vector lanes, s_net_sort): no
 *   bound on the rows but the scratch;
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
/* the windows hold the kept values' keys sorted and cn[e] their count
 * (sort.cl's wsort ran first: GPUs) */
#define XF_SORTED 16384u

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
 * range's median (clip.cl's X_SUMS), in four interleaved partial sums: one
 * chain of dependent additions waited on the adder's latency at every
 * value, and these runs are the kernel's only long loops after the sort */
#define S_SUMS()                                                              \
    do {                                                                      \
        int e_ = a + n, i_ = a;                                               \
        ACC k_ = n > 0 ? (ACC)SW(a + ((n - 1) >> 1)) : (ACC)0;                \
        ACC f1a_ = 0, f1b_ = 0, f1c_ = 0, f1d_ = 0;                           \
        ACC f2a_ = 0, f2b_ = 0, f2c_ = 0, f2d_ = 0;                           \
        for (; i_ + 4 <= e_; i_ += 4) {                                       \
            ACC da_ = (ACC)W(i_) - k_, db_ = (ACC)W(i_ + 1) - k_;             \
            ACC dc_ = (ACC)W(i_ + 2) - k_, dd_ = (ACC)W(i_ + 3) - k_;         \
            f1a_ += da_;                                                      \
            f1b_ += db_;                                                      \
            f1c_ += dc_;                                                      \
            f1d_ += dd_;                                                      \
            f2a_ += da_ * da_;                                                \
            f2b_ += db_ * db_;                                                \
            f2c_ += dc_ * dc_;                                                \
            f2d_ += dd_ * dd_;                                                \
        }                                                                     \
        for (; i_ < e_; i_++) {                                               \
            ACC d_ = (ACC)W(i_) - k_;                                         \
            f1a_ += d_;                                                       \
            f2a_ += d_ * d_;                                                  \
        }                                                                     \
        K0 = k_;                                                              \
        S1 = (f1a_ + f1b_) + (f1c_ + f1d_);                                   \
        S2 = (f2a_ + f2b_) + (f2c_ + f2d_);                                   \
    } while (0)

/* Buckets sorted when first read (a CPU driver's columns, not presorted
 * and past the network): one MSD pass scatters a column's keys by their
 * highest varying digit (8 or 11 bits, the window's counters), and a
 * bucket is sorted only when an iteration reads an order statistic in it
 * or compares with a value whose key falls in it. A clip reads the few
 * buckets of its medians and bounds: sorting them all cost the kernel
 * more than everything else. Sums over runs of ranks need no order.
 *
 * h[d] (the first table of counters) is the end of bucket d, its top bit
 * set once the bucket is sorted; o is the other key array, scratch of
 * the bucket's merge sort. */
#define S_DONE 0x80000000u
/* s_lin's buckets (a wide window's counters) and its sample's keys */
#define S_LIN_NB 2048
#define S_LIN_SAMPLE 1024
inline void F(s_bucket)(__global UKEY *w, __global UKEY *o, __global uint *h, uint d)
{
    uint e = h[d];
    if (e & S_DONE) return;
    uint s = d ? h[d - 1] & ~S_DONE : 0;
    /* insertion mispredicted about a branch a key past a few keys */
    if (e - s <= 8) F(sort_insert)(w, s, e);
    else if (F(sort_merge)(w + s, o + s, e - s))
        for (uint r = s; r < e; r++) w[r] = o[r];
    h[d] = e | S_DONE;
}
/* the bucket holding rank i (< the keys' count) sorted */
inline void F(s_rank)(__global UKEY *w, __global UKEY *o, __global uint *h, uint nb, uint i)
{
    uint lo = 0, hi = nb - 1;
    while (lo < hi) {
        uint m = (lo + hi) >> 1;
        if ((h[m] & ~S_DONE) > i) hi = m;
        else lo = m + 1;
    }
    F(s_bucket)(w, o, h, lo);
}
/* The bucket of key k: keys whose bits from t2 up are P's split by the
 * digit below t2 (nb values), those below P in bucket 0, above in the
 * last (a clip's tails: few keys), so buckets stay in key order. */
inline uint F(s_lin_digit)(REAL v, uint nb, REAL lo, REAL sc)
{
    REAL t = (v - lo) * sc;
    return t > (REAL)0 ? (t < (REAL)(nb - 1) ? (uint)t : nb - 1) : 0;
}
inline uint F(s_digit)(UKEY k, uint nb, uint t2, UKEY P, REAL lo, REAL sc)
{
    if (sc > (REAL)0) return F(s_lin_digit)(F(value_of_key)(k), nb, lo, sc);
    uint bits = 31 - (uint)clz(nb), sh = t2 > bits ? t2 - bits : 0;
    UKEY hk = t2 >= KEY_BITS ? 0 : k >> t2;
    return hk < P ? 0 : hk > P ? nb - 1 : (uint)((k >> sh) & (nb - 1));
}
/* the buckets where a search for v compares with values equal to it
 * sorted: v's key's, and for a zero the other zero's (-0 and +0 are
 * neighbouring keys, equal values) */
inline void F(s_value)(__global UKEY *w, __global UKEY *o, __global uint *h, uint nb, uint t2, UKEY P, REAL lo,
                       REAL sc, REAL v)
{
    if (isnan(v)) return;
    F(s_bucket)(w, o, h, F(s_digit)(F(key_of)(v), nb, t2, P, lo, sc));
    if (v == (REAL)0) F(s_bucket)(w, o, h, F(s_digit)(F(key_of)(-v), nb, t2, P, lo, sc));
}
/* Scatters a[0, n) into b by bucket (s_digit) and leaves h[d] the end of
 * bucket d. The digit starts below the highest varying bit (`top`); where
 * a bucket would hold more than max(S_MERGE_MAX, n / 8) keys (most keys
 * share the high bits: distant outliers, values on both sides of a power
 * of two) the digit moves down into that bucket, its keys' prefix P, a
 * count per level; after S_LEVELS levels, or with no bits left (ties),
 * 0: the column is sorted whole. *t2p, *Pp: the last level's. Only
 * below S_WIDE_MIN rows: in longer columns the tails below and above the
 * prefix held a sixth of the keys (normal data across a power of two),
 * and a failed partition's count passes over a window past the caches
 * cost more than the radix passes it would have spared. */
#define S_LEVELS 3
/* Fewer keys are sorted whole: at 300 the partition's count and scatter
 * (a compare per key for the prefix) cost what sort_keys' two radix
 * passes do, and the buckets' sorts came on top. */
#define S_LAZY_MIN 512
inline int F(s_part)(__global UKEY *a, __global UKEY *b, __global uint *h, uint n, uint nb, uint top, uint *t2p,
                     UKEY *Pp)
{
    uint bits = 31 - (uint)clz(nb), t2 = top;
    UKEY P = 0;
    if (top < KEY_BITS) P = a[0] >> top;
    for (uint lev = 0;; lev++) {
        for (uint i = 0; i < nb; i++) h[i] = 0;
        for (uint i = 0; i < n; i++) h[F(s_digit)(a[i], nb, t2, P, 0, 0)]++;
        /* the starts of the buckets, and the largest */
        uint most = 0, dm = 0, s = 0;
        for (uint i = 0; i < nb; i++) {
            uint t = h[i];
            h[i] = s;
            s += t;
            dm = t > most ? i : dm;
            most = max(most, t);
        }
        if (most <= max((uint)S_MERGE_MAX, n / 8)) break;
        uint sh = t2 > bits ? t2 - bits : 0;
        /* a tail this large (below or above the prefix) has no digit to
         * split it by */
        if (sh == 0 || lev + 1 >= S_LEVELS || (lev > 0 && (dm == 0 || dm == nb - 1))) return 0;
        P = (P << (t2 - sh)) | (UKEY)dm;
        t2 = sh;
    }
    for (uint i = 0; i < n; i++) {
        UKEY k = a[i];
        b[h[F(s_digit)(k, nb, t2, P, 0, 0)]++] = k;
    }
    *t2p = t2;
    *Pp = P;
    return 1;
}

/* Buckets by value for columns of S_WIDE_MIN rows or more (the wide
 * windows' S_LIN_NB counters): where s_part's digits of high bits left a
 * sixth of a long column in one tail (normal data across a power of two),
 * here bucket d holds the values v with floor((v - lo) * sc) = d (below
 * 0 in the first, past the last in the last: monotone, so the buckets
 * stay in value order), lo and sc from a sorted sample of S_LIN_SAMPLE
 * keys: its central 97 % spread over the middle half of the buckets, so
 * far outliers (which set the range of moments or extremes) fall in the
 * end buckets and the crowded middle takes many narrow ones. One count
 * and one scatter of a into b replace the radix passes of a whole sort;
 * clip_run then sorts the few buckets it reads (a median's, a bound's).
 * Returns 0 (nothing moved) where the sample's range is empty or not
 * finite (ties, huge values): the column is sorted whole. */
inline int F(s_lin)(__global UKEY *a, __global UKEY *b, __global uint *h, uint n, REAL *lop, REAL *scp)
{
    uint m = min(n, (uint)S_LIN_SAMPLE), nb = S_LIN_NB;
    /* the sample in b (two runs of m: the merge sort's scratch), whose
     * keys the scatter overwrites */
    for (uint i = 0; i < m; i++) b[i] = a[(uint)((ulong)i * n / m)];
    __global UKEY *sm = F(sort_merge)(b, b + m, m) ? b + m : b;
    REAL qlo = F(value_of_key)(sm[m / 64]), qhi = F(value_of_key)(sm[m - 1 - m / 64]);
    REAL wd = qhi - qlo, lo = qlo - wd / (REAL)2, sc = (REAL)nb / (wd * (REAL)2);
    if (!(wd > (REAL)0) || !isfinite(lo) || !isfinite(sc) || !(sc > (REAL)0)) return 0;
    for (uint i = 0; i < nb; i++) h[i] = 0;
    for (uint i = 0; i < n; i++) h[F(s_lin_digit)(F(value_of_key)(a[i]), nb, lo, sc)]++;
    uint s = 0;
    for (uint i = 0; i < nb; i++) {
        uint t = h[i];
        h[i] = s;
        s += t;
    }
    for (uint i = 0; i < n; i++) {
        UKEY k = a[i];
        b[h[F(s_lin_digit)(F(value_of_key)(k), nb, lo, sc)]++] = k;
    }
    *lop = lo;
    *scp = sc;
    return 1;
}
/* value i of w after its bucket is sorted (lz: buckets in use) */
#define SW(i) (lz ? F(s_rank)(w, o, h, nb, (uint)(i)) : (void)0, W(i))
#define SV(v)                                                                 \
    do {                                                                      \
        if (lz) F(s_value)(w, o, h, nb, t2, P, blo, bsc, (v));                \
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
 * B[i] = w[j + i] - med (nr = end - j), both ascending as fabs(x - med)
 * computes them. Returns the k-th smallest (0-based) of the two. */
#define S_DA(i) fabs(SW(j - 1 - (i)) - med)
#define S_DB(i) fabs(SW(j + (i)) - med)
inline REAL F(s_kth_dist)(__global UKEY *w, __global UKEY *o, __global uint *h, uint nb, int lz, int a, int j,
                          int end, REAL med, int k)
{
    int na = j - a, nr = end - j;
    /* i values from A and k + 1 - i from B make the k + 1 smallest */
    int lo = max(0, k + 1 - nr), hi = min(k + 1, na);
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

/* Clips one column whose n0 kept values w[0, n0) are sorted: the last
 * iteration's bounds (*lor, *hir, as astropy's: NaN bounds clip nothing),
 * the final kept run w[*a, *a + *n), its sums *S1, *S2 around *K0, and
 * the iterations run. */
inline void F(clip_run)(__global UKEY *w, __global UKEY *o, __global uint *h, uint nb, int lz, uint t2,
                        UKEY P, REAL blo, REAL bsc, int n0, uint flags, ACC slo, ACC shi, int maxiters, REAL *lor, REAL *hir,
                        int *ap, int *np, ACC *K0p, ACC *S1p, ACC *S2p, int *itp)
{
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
        REAL m0 = has ? SW(a + ((n - 1) >> 1)) : 0, m1 = has ? SW(a + (n >> 1)) : 0;
        REAL med = (n & 1) != 0 ? m0 : (m0 + m1) / (REAL)2;
        med = has ? med : (REAL)NAN;
        ACC nA = (ACC)n;
        ACC cen = (flags & XF_MEAN) ? (has ? K0 + S1 / nA : (ACC)NAN) : (ACC)med;
        ACC spr;
        if (flags & XF_MAD) {
            spr = (ACC)NAN;
            if (has) {
                /* median of |x - med| over the range */
                SV(med);
                int end = a + n, j = a + F(s_lower)(w + a, n, med);
                REAL d0 = F(s_kth_dist)(w, o, h, nb, lz, a, j, end, med, (n - 1) >> 1);
                REAL d1 = (n & 1) != 0 ? d0 : F(s_kth_dist)(w, o, h, nb, lz, a, j, end, med, n >> 1);
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
        SV(lr);
        SV(hr);
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
    REAL lo_ = (REAL)FL, hi_ = (REAL)FH;
    {
        REAL lr = isnan(lo_) ? (REAL)-INFINITY : lo_, hr = isnan(hi_) ? (REAL)INFINITY : hi_;
        SV(lr);
        SV(hr);
        int pl = F(s_lower)(w, n0, lr), ph = F(s_upper)(w, n0, hr);
        int nf = max(ph - pl, 0), moved = pl != a || nf != n;
        a = pl;
        n = nf;
        if (moved) S_SUMS();
    }
    *lor = lo_;
    *hir = hi_;
    *ap = a;
    *np = n;
    *K0p = K0;
    *S1p = S1;
    *S2p = S2;
    *itp = it;
}

/* A work-item clips S_XB consecutive entries (its lanes): it loads and
 * writes them a row at a time, the lanes' values neighbours in memory (a
 * 64-byte line for 8 doubles) where one column per work-item read a line
 * per value; in between it sorts and clips lane after lane, each in its
 * own window. */
#define S_XB 8
/* a row of a block as a vector (S_XB lanes) */
#if REAL_BYTES == 8
#define S_RV double8
#define S_IV long8
#define S_IV_SCALAR long
#define S_UV ulong8
#define S_AS_UV as_ulong8
#define S_SIGN 0x8000000000000000UL
#else
#define S_RV float8
#define S_IV int8
#define S_IV_SCALAR int
#define S_UV uint8
#define S_AS_UV as_uint8
#define S_SIGN 0x80000000U
#endif
#define S_VLOAD vload8
#define S_VSTORE vstore8
/* Rows a page or more apart are streams the hardware's prefetchers do
 * not follow (sort.cl's q_load8 says so; the loads waited on memory):
 * the loads prefetch S_AHEAD rows ahead, both ends of a block's row, and
 * the output pass the same row of the work-item after next (128 bytes on,
 * as clip.cl's X_PREFETCH), whose load then starts in the cache. Only on
 * the host CPU's drivers (program.c: CLS_PREFETCH). */
#define S_AHEAD 32
#if CLS_PREFETCH
#define S_PF_LOAD(p, i, rows, ncols)                                          \
    do {                                                                      \
        if ((i) + S_AHEAD < (rows)) {                                         \
            __builtin_prefetch((p) + (ulong)((i) + S_AHEAD) * (ncols));       \
            __builtin_prefetch((p) + (ulong)((i) + S_AHEAD) * (ncols) + S_XB - 1); \
        }                                                                     \
    } while (0)
#define S_PF_NEXT(p) __builtin_prefetch((p) + 128 / REAL_BYTES)
#else
#define S_PF_LOAD(p, i, rows, ncols) ((void)0)
#define S_PF_NEXT(p) ((void)0)
#endif
/* Blocks of columns of at most S_NET rows are sorted in the lanes of
 * vectors by a network (quantile.cl's qsort128's: each half unrolled,
 * their merge in loops), all eight columns at once, as values (minpd /
 * maxpd), where sort.cl's per-column merge sort of 65-96 keys took over
 * half of the kernel's time. */
#define S_NET 128
#define S_NMIN(a, b) select((b), (a), (a) < (b))
#define S_NMAX(a, b) select((a), (b), (a) < (b))
/* Loads a block's rows (the values kept; +Inf in the others and past the
 * rows), sorts each lane by the network and writes lane k's kept values'
 * keys, in key order (-0 before +0: the network leaves equal values in
 * either order), to kw[k * wn, + n0[k]). */
inline void F(s_net_sort)(__global const REAL *x, ulong o0, uint ncols, uint rows, int sen, REAL sent,
                          __global UKEY *kw, ulong wn, int *n0)
{
    S_RV w[S_NET];
    S_IV nk = (S_IV)(0), nneg = (S_IV)(0);
    for (uint i = 0; i < S_NET; i++) {
        S_PF_LOAD(x + o0, i, rows, ncols);
        S_RV t = i < rows ? S_VLOAD(0, x + o0 + (ulong)i * ncols) : (S_RV)(INFINITY);
        S_IV ok = isfinite(t) & (sen ? (t != (S_RV)(sent)) : (S_IV)(-1));
        t = select((S_RV)(INFINITY), t, ok);
        w[i] = t;
        nk -= ok;
        nneg -= ok & ((t < (S_RV)(0)) | ((t == (S_RV)(0)) & signbit(t)));
    }
#pragma unroll 1
    for (uint h = 0; h < 2; h++) {
        S_RV *hw = w + h * (S_NET / 2);
        CLS_SORTNET_OEM_BY(S_RV, hw, S_NET / 2, S_NMIN, S_NMAX);
    }
    CLS_SORTNET_OEM_FROM(S_RV, w, S_NET, 6, S_NMIN, S_NMAX);
    S_IV_SCALAR nv[S_XB];
    S_VSTORE(nk, 0, nv);
    int most = 0;
    for (uint k = 0; k < S_XB; k++) {
        n0[k] = (int)nv[k];
        most = max(most, n0[k]);
    }
    for (uint i = 0; i < (uint)most; i++) {
        S_RV t = w[i];
        S_UV u = S_AS_UV(t), key = select(u | (S_UV)(S_SIGN), ~u, u);
        /* a zero: -0 at ranks below the negative values' count, else +0 */
        S_UV zk = select((S_UV)(S_SIGN), (S_UV)(~S_SIGN), (S_IV)((S_IV_SCALAR)i) < nneg);
        key = select(key, zk, t == (S_RV)(0));
        UKEY kk[S_XB];
        S_VSTORE(key, 0, kk);
        for (uint k = 0; k < S_XB; k++) kw[k * wn + i] = kk[k];
    }
}
__kernel void F(clipsort)(__global const REAL *x, __global REAL *y, __global uchar *mk, uint ncols, uint rows,
                          uint ngroups, uint flags, REAL sent, __global const ACC *sig, int maxiters, REAL cfill,
                          __global ACC *st, __global uint *cn, ulong pstride, __global UKEY *scr, ulong e0,
                          ulong n_e)
{
    /* presorted windows (a GPU): an entry a work-item, its load done */
    uint xb = (flags & XF_SORTED) ? 1 : S_XB;
    ulong b0 = get_global_id(0) * xb;
    if (b0 >= n_e) return;
    uint nl = (uint)min((ulong)xb, n_e - b0);
    int sen = (flags & XF_SENT) != 0;
    /* each lane's column: group e / ncols, column e % ncols */
    ulong off[S_XB];
    for (uint k = 0; k < S_XB; k++) {
        ulong e = e0 + b0 + min(k, nl - 1);
        off[k] = (e / ncols) * rows * ncols + e % ncols;
    }
    /* the kept values' keys, a row of the lanes at a time */
    int n0[S_XB];
    UKEY kand[S_XB], kor[S_XB];
    for (uint k = 0; k < S_XB; k++) {
        n0[k] = 0;
        kand[k] = ~(UKEY)0;
        kor[k] = 0;
    }
    int pre = (flags & XF_SORTED) != 0;
    for (uint k = 0; pre && k < nl; k++) n0[k] = (int)cn[e0 + b0 + k];
    /* a whole block of lanes neighbours in one row: loaded and written as
     * vectors, the keys stored without a branch (each at its lane's count,
     * which grows only for a value kept) */
    int vec = nl == S_XB && (e0 + b0) % ncols + S_XB <= ncols;
    int net = !pre && vec && rows <= S_NET;
    if (net) F(s_net_sort)(x, off[0], ncols, rows, sen, sent, scr + b0 * S_WIN(rows), S_WIN(rows), n0);
    if (!pre && vec && !net) {
        ulong wn = S_WIN(rows);
        __global UKEY *kw = scr + b0 * wn;
        S_UV vand = (S_UV)(~(UKEY)0), vor = (S_UV)(0);
        for (uint i = 0; i < rows; i++) {
            S_PF_LOAD(x + off[0], i, rows, ncols);
            S_RV t = S_VLOAD(0, x + off[0] + (ulong)i * ncols);
            S_IV ok = isfinite(t) & (sen ? (t != (S_RV)(sent)) : (S_IV)(-1));
            S_UV u = S_AS_UV(t), key = select(u | (S_UV)(S_SIGN), ~u, u);
            vand &= select((S_UV)(~(UKEY)0), key, ok);
            vor |= select((S_UV)(0), key, ok);
            UKEY kk[S_XB];
            S_IV_SCALAR okk[S_XB];
            S_VSTORE(key, 0, kk);
            S_VSTORE(ok, 0, okk);
            for (uint k = 0; k < S_XB; k++) {
                kw[k * wn + n0[k]] = kk[k];
                n0[k] += (int)(okk[k] & 1);
            }
        }
        S_VSTORE(vand, 0, kand);
        S_VSTORE(vor, 0, kor);
    }
    for (uint i = 0; !pre && !vec && i < rows; i++)
        for (uint k = 0; k < nl; k++) {
            REAL t = x[off[k] + (ulong)i * ncols];
            if (isfinite(t) && !(sen && t == sent)) {
                UKEY key = F(key_of)(t);
                __global UKEY *ka = scr + (b0 + k) * S_WIN(rows);
                ka[n0[k]++] = key;
                kand[k] &= key;
                kor[k] |= key;
            }
        }
    uint fm = (flags >> XF_FILL_SHIFT) & 7u;
    int wr = (flags & XF_WRITE) != 0;
    int wm = (flags & XF_MASK) != 0;
    int sep = (flags & XF_MOMENTS) || fm == 1;
    ACC slo = sig[0], shi = sig[1];
    REAL lor[S_XB], hir[S_XB], fill[S_XB], K[S_XB], mn[S_XB], mx[S_XB];
    ACC rel[S_XB], m2[S_XB];
    int nk[S_XB], it[S_XB];
    for (uint k = 0; k < nl; k++) {
        __global UKEY *ka = scr + (b0 + k) * S_WIN(rows), *kb = ka + rows;
        __global uint *h = (__global uint *)(kb + rows);
        /* a CPU driver's long column partitioned by its highest varying
         * digit, its buckets sorted as read (s_part); a most-frequent fill
         * reads every value in order: sorted whole */
        UKEY vary = kand[k] ^ kor[k], P = 0;
        uint nb = rows >= S_WIDE_MIN ? S_LIN_NB : 256, t2 = 0;
        REAL blo = 0, bsc = 0;
        int lz = !pre && !net && fm != 3 && n0[k] > S_LAZY_MIN &&
                 (rows < S_WIDE_MIN ? F(s_part)(ka, kb, h, (uint)n0[k], nb, KEY_BITS - (uint)clz(vary), &t2, &P)
                                    : F(s_lin)(ka, kb, h, (uint)n0[k], &blo, &bsc));
        __global UKEY *w = lz || (!pre && !net && F(sort_keys)(ka, kb, h, (uint)n0[k], rows, vary)) ? kb : ka;
        __global UKEY *o = w == kb ? ka : kb;
        int a, n;
        ACC K0, S1, S2;
        F(clip_run)(w, o, h, nb, lz, t2, P, blo, bsc, n0[k], flags, slo, shi, maxiters, &lor[k], &hir[k], &a, &n, &K0,
                    &S1, &S2, &it[k]);
        /* the moments of the values kept from the sorted sums, unless
         * someone reads them (summed in row order below) */
        K[k] = 0;
        mn[k] = INFINITY;
        mx[k] = -INFINITY;
        rel[k] = 0;
        m2[k] = 0;
        nk[k] = n;
        if (!sep && n != 0) {
            ACC nA = (ACC)n;
            K[k] = (REAL)K0;
            rel[k] = S1 / nA;
            m2[k] = fmax(S2 - S1 * (S1 / nA), (ACC)0);
            mn[k] = SW(a);
            mx[k] = SW(a + n - 1);
        }
        /* the fill value over the kept values (a mean fill below) */
        REAL f = S_QNAN;
        if (fm == 4) {
            f = cfill;
        } else if (fm == 2) {
            if (n != 0) {
                REAL m0 = SW(a + ((n - 1) >> 1)), m1 = SW(a + (n >> 1));
                f = (n & 1) != 0 ? m0 : (m0 + m1) / (REAL)2;
            }
        } else if (fm == 3) {
            /* the longest run of equal values, the smallest of ties */
            int run = 0, best = 0, end = a + n;
            for (int i = a; i < end; i++) {
                int same = i > a && W(i) == W(i - 1);
                run = same ? run + 1 : 1;
                if (run > best) {
                    f = W(i);
                    best = run;
                }
            }
        }
        fill[k] = f;
    }
    if (sep) {
        /* The moments of the values kept, summed in row order as the
         * multi-pass path sums them (clean.cl's arithmetic) */
        ACC s1[S_XB], s2[S_XB];
        for (uint k = 0; k < S_XB; k++) {
            s1[k] = 0;
            s2[k] = 0;
            nk[k] = 0;
        }
        for (uint i = 0; i < rows; i++)
            for (uint k = 0; k < nl; k++) {
                REAL xv = x[off[k] + (ulong)i * ncols];
                int keep = isfinite(xv) && !(sen && xv == sent) && !(xv < lor[k]) && !(xv > hir[k]);
                K[k] = keep && nk[k] == 0 ? xv : K[k];
                ACC u = keep ? (ACC)xv - (ACC)K[k] : (ACC)0;
                nk[k] += keep;
                s1[k] += u;
                s2[k] += u * u;
                mn[k] = keep ? fmin(mn[k], xv) : mn[k];
                mx[k] = keep ? fmax(mx[k], xv) : mx[k];
            }
        for (uint k = 0; k < nl; k++) {
            rel[k] = nk[k] != 0 ? s1[k] / (ACC)nk[k] : (ACC)0;
            m2[k] = fmax(s2[k] - s1[k] * rel[k], (ACC)0);
            if (fm == 1) fill[k] = nk[k] != 0 ? (REAL)((ACC)K[k] + rel[k]) : S_QNAN;
        }
    }
    if (wr || wm) {
        /* clipped values NaN or clamped, missing ones filled or left (a
         * sentinel not filled becomes NaN), as clean_apply; the mask 1
         * where missing or clipped */
        int clm = (flags & XF_CLAMP) != 0, fil = fm != 0, kp = (flags & XF_KEEP) != 0;
        if (vec) {
            /* the same, a row of the block as one vector */
            S_RV lo8 = S_VLOAD(0, lor), hi8 = S_VLOAD(0, hir), fl8 = S_VLOAD(0, fill);
            S_IV clv = (S_IV)(clm ? -1 : 0), filv = (S_IV)(fil ? -1 : 0);
            for (uint i = 0; i < rows; i++) {
                ulong o = off[0] + (ulong)i * ncols;
                S_PF_NEXT(x + o);
                S_RV t = S_VLOAD(0, x + o);
                S_IV isen = sen ? (t == (S_RV)(sent)) : (S_IV)(0);
                S_IV miss = !isfinite(t) | isen;
                S_RV u = select(t, (S_RV)(S_QNAN), isen);
                S_IV out = ~miss & ((u < lo8) | (u > hi8));
                if (wm) vstore8(convert_uchar8((miss | out) & (S_IV)(1)), 0, mk + o);
                u = select(u, clm ? clamp(u, lo8, hi8) : (S_RV)(S_QNAN), out);
                miss |= ~clv & out;
                if (wr) S_VSTORE(kp ? t : select(u, fl8, miss & filv), 0, y + o);
            }
        }
        for (uint i = 0; !vec && i < rows; i++)
            for (uint k = 0; k < nl; k++) {
                ulong o = off[k] + (ulong)i * ncols;
                REAL t_ = x[o], t0 = t_;
                int is_sent = sen && t_ == sent;
                int miss = !isfinite(t_) || is_sent;
                t_ = is_sent ? S_QNAN : t_;
                int out = !miss && (t_ < lor[k] || t_ > hir[k]);
                if (wm) mk[o] = (uchar)(miss || out);
                t_ = out ? (clm ? clamp(t_, lor[k], hir[k]) : S_QNAN) : t_;
                miss = miss || (!clm && out);
                if (wr) y[o] = kp ? t0 : miss && fil ? fill[k] : t_;
            }
    }
    for (uint k = 0; k < nl; k++) {
        ulong e = b0 + k + e0;
        st[e] = (ACC)K[k];
        st[pstride + e] = (ACC)rel[k];
        st[2 * pstride + e] = (ACC)m2[k];
        st[3 * pstride + e] = (ACC)mn[k];
        st[4 * pstride + e] = (ACC)mx[k];
        st[5 * pstride + e] = (ACC)lor[k];
        st[6 * pstride + e] = (ACC)hir[k];
        st[7 * pstride + e] = (ACC)fill[k];
        cn[e] = (uint)n0[k];
        cn[pstride + e] = (uint)nk[k];
        cn[2 * pstride + e] = (uint)it[k];
    }
}
#undef S_XB
#undef S_RV
#undef S_IV
#undef S_IV_SCALAR
#undef S_UV
#undef S_AS_UV
#undef S_SIGN
#undef S_VLOAD
#undef S_VSTORE
#undef S_NET
#undef S_AHEAD
#undef S_PF_LOAD
#undef S_PF_NEXT
#undef S_NMIN
#undef S_NMAX
#undef S_SUMS
#undef SW
#undef SV
#undef S_DONE
#undef S_LEVELS
#undef S_LAZY_MIN
#undef S_LIN_NB
#undef S_LIN_SAMPLE
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
#undef XF_SORTED
#endif

#undef S_WIN
#undef S_WIDE_MIN
#undef S_RUN
#undef S_MERGE_MAX
#undef S_HIGH
#undef S_TWO_MAX
#undef UKEY
#undef KEY_BITS
#undef F
#undef Q_FILTER_ARGS
#undef Q_FILTER_LOAD
