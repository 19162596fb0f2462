/* Groups longer than the sorting networks take (the "sort" regime,
 * src/quantiles/regime.h): each work-item sorts one column's keys once, in
 * its own window of a global scratch buffer, and everything after that
 * (order statistics, every clipping iteration: cl/clip_sort.cl) is an
 * index, a binary search or a run of the sorted values. Order statistics
 * alone on a CPU driver skip the sort: qsortg's q_select finds the few
 * wanted ranks among the unsorted keys.
 *
 * The sort is an LSD radix sort of the keys (quantile.cl's key_of: value
 * order, -0 before +0), with 8-bit digits, or 11-bit ones from
 * S_WIDE_MIN keys on (fewer passes where 2048 counters per pass cost
 * little beside the keys). The load notes which bits vary between the
 * keys (the AND and OR of all of them): a digit that does not vary (the
 * sign and exponent bits of most data) costs nothing; each other one is a
 * prefix sum and one scatter over the window (in cache), which also counts
 * the next digit, so the keys are read once per pass. Short runs (at most
 * S_MERGE_MAX keys) are merge-sorted instead: the counters' fixed cost per
 * pass outweighs the keys there. Work per value: at most KEY_BITS / 8
 * passes whatever the group's length, and no work-group barrier (the same
 * code on CPU drivers, where a work-item is a loop iteration, and on
 * simulators).
 *
 * A work-item's window (S_WIN keys): keys a[rows], keys b[rows], then two
 * tables of counters, one per digit value. The host sizes the buffer for the work-items
 * of one launch and launches again over the next entries
 * (src/clean/clip_fast.c, select.c): the scratch is bounded by the
 * context's budget, not by the number of groups. */

#if CLS_KERNEL == CLS_KID_QSORTG || CLS_KERNEL == CLS_KID_CLIPSORT || CLS_KERNEL == CLS_KID_WSORT
/* 11-bit digits from this many rows on, else 8-bit (the host's
 * CLS_SORT_WIDE_MIN, src/quantiles/regime.h, passed as -D, as is
 * CLS_SORT_MERGE_MAX: one definition for the windows both sides size) */
#define S_WIDE_MIN CLS_SORT_WIDE_MIN
/* a window's length in keys: two arrays and two tables of counters (a
 * uint each, 2^digit bits; none where every column is merge-sorted);
 * regime.c's cls_sort_window_bytes says the same */
#define S_WIN(rows)                                                           \
    (2 * (ulong)(rows) +                                                      \
     ((rows) <= S_MERGE_MAX ? 0 : (2 * ((rows) >= S_WIDE_MIN ? 2048 : 256) * 4 + sizeof(UKEY) - 1) / sizeof(UKEY)))

inline REAL F(value_of_key)(UKEY k)
{
#if REAL_BYTES == 8
    return as_double((k >> 63) ? (k & 0x7fffffffffffffffUL) : ~k);
#else
    return as_float((k >> 31) ? (k & 0x7fffffffU) : ~k);
#endif
}

/* Runs of S_RUN keys sorted by a network (the last, short one by
 * insertion), then merged pairwise (a to b and back, without branches on
 * the keys): fewer moves than the radix
 * passes below S_MERGE_MAX keys, whose 256 counters per digit cost each
 * column the same however short. Returns 0 when the sorted keys are in a,
 * 1 when in b. */
#define S_RUN 8
/* a[lo, hi) sorted by insertion (a short run) */
inline void F(sort_insert)(__global UKEY *a, uint lo, uint hi)
{
    for (uint i = lo + 1; i < hi; i++) {
        UKEY k = a[i];
        uint j = i;
        while (j > lo && a[j - 1] > k) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = k;
    }
}
#define S_MERGE_MAX CLS_SORT_MERGE_MAX
inline int F(sort_merge)(__global UKEY *a, __global UKEY *b, uint n)
{
    /* whole runs by Batcher's network (cl/sortnet.cl) on registers: no
     * branch on the keys, where insertion mispredicted half its compares */
    uint whole = n / S_RUN * S_RUN;
    for (uint r = 0; r < whole; r += S_RUN) {
        UKEY w[S_RUN];
        for (uint i = 0; i < S_RUN; i++) w[i] = a[r + i];
        CLS_SORTNET_OEM_BY(UKEY, w, S_RUN, min, max);
        for (uint i = 0; i < S_RUN; i++) a[r + i] = w[i];
    }
    F(sort_insert)(a, whole, n);
    int in_b = 0;
    for (uint w = S_RUN; w < n; w *= 2) {
        __global UKEY *src = in_b ? b : a, *dst = in_b ? a : b;
        for (uint lo = 0; lo < n; lo += 2 * w) {
            uint i = lo, ie = min(n, lo + w), j = ie, je = min(n, lo + 2 * w), k = lo;
            while (i < ie && j < je) {
                UKEY x = src[i], y = src[j];
                int t = y < x;
                dst[k++] = t ? y : x;
                i += !t;
                j += t;
            }
            while (i < ie) dst[k++] = src[i++];
            while (j < je) dst[k++] = src[j++];
        }
        in_b = !in_b;
    }
    return in_b;
}

/* LSD radix passes over the digits at shifts sh[p0, p1) of a[0, n)
 * (b the other array, h two tables of nb counters, digits `mask` wide);
 * returns 0 when the result is in a, 1 when in b. Each scatter counts the
 * next digit, so the keys are read once per pass. */
inline int F(sort_radix)(__global UKEY *a, __global UKEY *b, __global uint *h, uint n, const uint *sh, uint p0,
                         uint p1, uint nb, uint mask)
{
    if (p0 >= p1) return 0;
    __global uint *c = h, *cn = h + nb;
    for (uint i = 0; i < nb; i++) c[i] = 0;
    for (uint i = 0; i < n; i++) c[(uint)((a[i] >> sh[p0]) & mask)]++;
    int in_b = 0;
    for (uint p = p0; p < p1; p++) {
        __global UKEY *src = in_b ? b : a, *dst = in_b ? a : b;
        uint s = 0;
        for (uint i = 0; i < nb; i++) {
            uint t = c[i];
            c[i] = s;
            s += t;
        }
        uint d = sh[p];
        if (p + 1 < p1) {
            /* scatter this digit, count the next */
            uint dn = sh[p + 1];
            for (uint i = 0; i < nb; i++) cn[i] = 0;
            for (uint i = 0; i < n; i++) {
                UKEY k = src[i];
                dst[c[(uint)((k >> d) & mask)]++] = k;
                cn[(uint)((k >> dn) & mask)]++;
            }
            __global uint *t = c;
            c = cn;
            cn = t;
        } else {
            for (uint i = 0; i < n; i++) {
                UKEY k = src[i];
                dst[c[(uint)((k >> d) & mask)]++] = k;
            }
        }
        in_b = !in_b;
    }
    return in_b;
}

/* The high digits a sort takes before it settles the runs of keys equal
 * on them (float64: 4 of up to 8; 2 for at most S_TWO_MAX keys) */
#define S_HIGH 4
#define S_TWO_MAX 1024
/* with 11-bit digits (S_WIDE_MIN keys or more) three high digits, 33 bits,
 * below S_WIDE_HIGH_MAX keys: a fourth pass over a window past the caches
 * (1.6 MB for 10^5 doubles) found runs that three had already made single
 * keys; at 10^7 keys three left runs long enough to cost more than it */
#define S_HIGH_WIDE 3
#define S_WIDE_HIGH_MAX (1u << 20)
/* Sorts a[0, n), whose keys' bits vary only where `vary` (the XOR of
 * their AND and OR) is set, with b as the other array and h as two tables
 * of counters (S_WIN's for `rows`); returns 0 when the sorted keys are in
 * a, 1 when in b.
 *
 * Keys with more varying digits than it takes (float64 data, whose low
 * mantissa bits vary) are sorted by their highest varying digits first,
 * S_HIGH of them, or two for at most S_TWO_MAX keys; keys equal on those
 * (runs, mostly of one key: 32 bits below the highest varying one tell
 * most values apart, and 16 bits, about four of them the exponent's, most
 * of a thousand; three 11-bit digits from S_WIDE_MIN keys on) are then
 * sorted by the rest, a short run by insertion, a long one by the
 * remaining radix passes. The worst case (every key in
 * one run) costs what the full passes cost. Four digits at 300 keys spent
 * a third of the sort on passes whose runs were already single keys. */
inline int F(sort_keys)(__global UKEY *a, __global UKEY *b, __global uint *h, uint n, uint rows, UKEY vary)
{
    if (n <= S_MERGE_MAX) return F(sort_merge)(a, b, n);
    /* the digit's width by the group's rows (the window's counters), not n */
    uint bits = rows >= S_WIDE_MIN ? 11 : 8, nb = 1u << bits, mask = nb - 1;
    /* the digits that vary, lowest first, aligned to the highest varying
     * bit (the lowest one at bit 0 may overlap the next: LSD passes over
     * overlapping digits still sort): digits at fixed multiples of the
     * width spent high digits on bits that never vary (float32 data of
     * exponents 1-9 took 11 varying bits in two 8-bit digits, not 16, and
     * left runs a quadratic insertion then sorted) */
    uint sh[8], np = 0;
    if (vary == 0) return 0;
    /* float64 keys in 11-bit digits keep the fixed grid (from 66 down):
     * aligned to the top, their first digit is the exponent alone, a few
     * values for most data, and columns of 10^5 to 10^7 doubles ran 3-5%
     * slower */
#if KEY_BITS == 64
    int top = bits == 11 ? 66 : KEY_BITS - (int)clz(vary);
#else
    int top = KEY_BITS - (int)clz(vary);
#endif
    for (int s = top; s > 0 && np < 8;) {
        s = s > (int)bits ? s - (int)bits : 0;
        if ((vary >> s) & mask) sh[np++] = (uint)s;
    }
    for (uint i = 0; i < np / 2; i++) {
        uint t = sh[i];
        sh[i] = sh[np - 1 - i];
        sh[np - 1 - i] = t;
    }
    uint hd = n <= S_TWO_MAX ? 2 : bits == 11 && n < S_WIDE_HIGH_MAX ? S_HIGH_WIDE : S_HIGH;
    if (np <= hd) return F(sort_radix)(a, b, h, n, sh, 0, np, nb, mask);
    uint cut = np - hd, lsh = sh[cut];
    int in_b = F(sort_radix)(a, b, h, n, sh, cut, np, nb, mask);
    __global UKEY *src = in_b ? b : a, *oth = in_b ? a : b;
    for (uint i = 0; i < n;) {
        UKEY hi = src[i] >> lsh;
        uint j = i + 1;
        while (j < n && (src[j] >> lsh) == hi) j++;
        uint len = j - i;
        if (len > 32) {
            if (F(sort_radix)(src + i, oth + i, h, len, sh, 0, cut, nb, mask))
                for (uint r = i; r < j; r++) src[r] = oth[r];
        } else {
            F(sort_insert)(src, i, j);
        }
        i = j;
    }
    return in_b;
}

#endif

#if CLS_KERNEL == CLS_KID_QSORTG
/* The keys of ranks rank[0, nk) (each < n) of a[0, n), unsorted, into
 * out[] (b the other array, h two tables of nb counters, as sort_keys
 * takes them), exactly, without sorting them all: MSD radix selection.
 * Each level splits a range that holds a wanted rank by the digit at its
 * highest varying bit (a histogram, then only the buckets that hold a
 * wanted rank copied to the other array at the places a counting sort
 * would give them, so ranks stay absolute); a range of at most
 * Q_SEL_SMALL keys, or after Q_SEL_LEVELS levels, is sorted (sort_keys)
 * and indexed. Ranges of different targets are equal or
 * disjoint, so a range moved from one array to the other never overwrites
 * another target's keys. Constant ranges (ties) stop at once. Work: about
 * two reads of the keys (the first level), then the few buckets. */
#define Q_SEL_LEVELS 6
#define Q_SEL_SMALL 16
inline void F(q_select)(__global UKEY *a, __global UKEY *b, __global uint *h, uint n, uint rows,
                        const uint *rk, uint nk, int has_vary0, UKEY vary0, UKEY *out)
{
    /* digits by the range's length: the window's (11 bits from S_WIDE_MIN
     * rows on) past 2048 keys, 8 bits past 256, else 6, as a level costs
     * about 3 * 2^digit counter updates besides its keys; a range of more
     * than Q_SEL_SMALL keys splits again rather than being sorted (sorting
     * the final ranges of 30-250 keys was most of the selection's work at
     * 1000 rows; a 6-bit level over them costs less) */
    uint wbits = rows >= S_WIDE_MIN ? 11 : 8;
    /* (a window of at most S_MERGE_MAX rows has no counters: its keys,
     * never more, are sorted at once) */
    uint small = rows > S_MERGE_MAX ? Q_SEL_SMALL : S_MERGE_MAX;
    /* moved[t]: the level (from 1) at which target t last moved; a target
     * moves at most once a level, with every target of its range, so that
     * at each level the ranges are equal or disjoint and all in one array.
     * (Moved twice, it would leave the targets it shared a range with in
     * the other array over the same places, whose next move would then
     * write over its keys.) */
    uint lo[16], hi[16], in_b[16], fin[16], moved[16];
    for (uint t = 0; t < nk; t++) {
        lo[t] = 0;
        hi[t] = n;
        in_b[t] = 0;
        fin[t] = n <= small;
        moved[t] = 0;
    }
    for (uint level = 0; level < Q_SEL_LEVELS; level++) {
        uint any = 0;
        for (uint t = 0; t < nk; t++) {
            if (fin[t] || moved[t] == level + 1) continue;
            any = 1;
            uint l = lo[t], e = hi[t], ib = in_b[t];
            __global UKEY *src = ib ? b : a, *dst = ib ? a : b;
            UKEY kand = ~(UKEY)0, kor = 0;
            /* the whole column (the first range): its varying bits noted
             * by the load (has_vary0), not read again; only there, as a
             * digit wider than a range's own would leave it whole, and
             * the targets of one range must always move together */
            int whole = has_vary0 && l == 0 && e == n && !ib;
            for (uint i = whole ? e : l; i < e; i++) {
                UKEY k = src[i];
                kand &= k;
                kor |= k;
            }
            UKEY vary = whole ? vary0 : kand ^ kor;
            if (vary == 0) {
                /* every key of the range is the same: the targets in it are found */
                for (uint u = 0; u < nk; u++)
                    if (!fin[u] && lo[u] == l && hi[u] == e && in_b[u] == ib) fin[u] = 1;
                continue;
            }
            /* the digit: the `bits` bits from the highest varying one
             * down (the bits above it are the same in the whole range), as
             * the top of the key shifted left by lz (no clamp of a shift
             * below 0: Oclgrind lacks the saturating subtraction LLVM
             * makes of one) */
            uint bits = e - l > 2048 ? wbits : e - l > 256 ? 8 : 6, nb = 1u << bits;
            __global uint *c = h, *want = h + nb;
            uint lz = (uint)clz(vary), sh = KEY_BITS - bits;
            for (uint i = 0; i < nb; i++) {
                c[i] = 0;
                want[i] = 0;
            }
            for (uint i = l; i < e; i++) c[(uint)((src[i] << lz) >> sh)]++;
            uint s = l;
            for (uint i = 0; i < nb; i++) {
                uint x = c[i];
                c[i] = s;
                s += x;
            }
            /* the targets in this range: their buckets, wanted; every one
             * of them, those before t too (a target moved with an earlier
             * one this level shares its range): a target left in the
             * range would read it after another range's keys were moved
             * into it (quartiles off by two ranks at 5000 rows) */
            uint nwant = 0;
            for (uint u = 0; u < nk; u++) {
                if (fin[u] || lo[u] != l || hi[u] != e || in_b[u] != ib) continue;
                uint r = rk[u], lb = 0, ub = nb;
                while (ub - lb > 1) { /* the last bucket starting at or before r */
                    uint m = (lb + ub) >> 1;
                    if (c[m] <= r) lb = m;
                    else ub = m;
                }
                lo[u] = c[lb];
                hi[u] = lb + 1 < nb ? c[lb + 1] : e;
                nwant += want[lb] ? 0 : hi[u] - lo[u];
                want[lb] = 1;
                in_b[u] = !ib;
                moved[u] = level + 1;
                fin[u] = hi[u] - lo[u] <= small;
            }
            /* where the wanted buckets hold a good part of the keys
             * (8-bit digits of short columns) without a branch on the
             * keys, which would mispredict for each of a random few: an
             * unwanted key is written back where it was, a range no target
             * reads again; where they hold few (11-bit digits), a branch
             * that seldom goes the other way, and no line of a range too
             * large for the caches written back */
            if (nwant >= (e - l) / 16) {
                for (uint i = l; i < e; i++) {
                    UKEY k = src[i];
                    uint d = (uint)((k << lz) >> sh), w = want[d], p = c[d];
                    *(w ? dst + p : src + i) = k;
                    c[d] = p + w;
                }
            } else {
                for (uint i = l; i < e; i++) {
                    UKEY k = src[i];
                    uint d = (uint)((k << lz) >> sh);
                    if (want[d]) dst[c[d]++] = k;
                }
            }
        }
        if (!any) break;
    }
    /* each final range sorted once, then indexed */
    for (uint t = 0; t < nk; t++) {
        uint l = lo[t], e = hi[t], ib = in_b[t], done = 0;
        for (uint u = 0; u < t; u++)
            if (lo[u] == l && hi[u] == e && fin[u] == 2 + ib) done = 1;
        if (!done && fin[t] != 2 + ib) {
            __global UKEY *src = ib ? b : a, *oth = ib ? a : b;
            UKEY kand = ~(UKEY)0, kor = 0;
            for (uint i = l; i < e; i++) {
                kand &= src[i];
                kor |= src[i];
            }
            if (F(sort_keys)(src + l, oth + l, h, e - l, rows, kand ^ kor))
                for (uint i = l; i < e; i++) src[i] = oth[i];
        }
        /* sorted in place in its own array: later targets of the same range skip the sort */
        for (uint u = t; u < nk; u++)
            if (lo[u] == l && hi[u] == e && in_b[u] == ib) fin[u] = 2 + ib;
        out[t] = (ib ? b : a)[rk[t]];
    }
}
#undef Q_SEL_LEVELS
#undef Q_SEL_SMALL

/* Phase 0's load: work-item entries e0 + b0 to e0 + b0 + nl - 1 (nl <= 8)
 * into windows b0 to b0 + nl - 1, their counts into n[], the bits that
 * vary among each one's keys into its counters' place. The rows of a
 * group are ld apart (a page or more), so the hardware's prefetchers do
 * not follow them: on PoCL (CLS_PREFETCH) the rows Q_AHEAD on are
 * prefetched, as clip.cl's X_PREFETCH. */
#define Q_AHEAD 32
#if REAL_BYTES == 8
#define VR8 double8
#define VK8 ulong8
#define VS8 long8
#define QS8 long
#define Q_SIGN 0x8000000000000000UL
#else
#define VR8 float8
#define VK8 uint8
#define VS8 int8
#define QS8 int
#define Q_SIGN 0x80000000U
#endif
inline void F(q_load8)(__global const REAL *x, ulong xoff, uint ncols, uint rows, ulong ld, ulong gstride,
                       ulong e0, Q_FILTER_ARGS, __global UKEY *scr, ulong b0, uint nl, uint *n)
{
    ulong off[8];
    REAL fc[8], fl[8], fh[8];
    UKEY kand[8], kor[8];
    for (uint k = 0; k < 8; k++) {
        ulong e = e0 + b0 + min(k, nl - 1);
        off[k] = xoff + (e / ncols) * gstride + e % ncols;
        Q_FILTER_LOAD(e);
        fc[k] = cc;
        fl[k] = lo;
        fh[k] = hi;
        n[k] = 0;
        kand[k] = ~(UKEY)0;
        kor[k] = 0;
    }
    /* eight neighbours of one row (the common case): the row one vector
     * load, the filter and the keys lane by lane at once, each key
     * written at its window's count, which grows only where the value is
     * kept (no branch on the values) */
    if (nl == 8 && off[7] == off[0] + 7) {
        /* no subscripts of vectors (an extension of clang's): the lanes
         * go through private arrays, as cl/lanes.cl's do */
        VR8 vc = CAT(vload, 8)(0, fc), vl = CAT(vload, 8)(0, fl), vh = CAT(vload, 8)(0, fh);
        VK8 va = (VK8)~(UKEY)0, vo = (VK8)0;
        __global UKEY *wb = scr + b0 * S_WIN(rows);
        ulong win = S_WIN(rows);
        uint c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        __global const REAL *p = x + off[0];
        for (uint r = 0; r < rows; r++) {
#if CLS_PREFETCH
            if (r + Q_AHEAD < rows) {
                /* both ends: a row's eight values may straddle two lines */
                __builtin_prefetch(p + (ulong)(r + Q_AHEAD) * ld);
                __builtin_prefetch(p + (ulong)(r + Q_AHEAD) * ld + 7);
            }
#endif
            VR8 v = CAT(vload, 8)(0, p + (ulong)r * ld);
            VS8 ok = isfinite(v);
            if (qflags) {
                ok &= (qflags & CLS_QF_SENTINEL) ? v != (VR8)sent : (VS8)-1;
                ok &= (qflags & CLS_QF_BOUNDS) ? !(v < vl) & !(v > vh) : (VS8)-1;
                v = (qflags & CLS_QF_ABSDEV) ? fabs(v - vc) : v;
                ok &= !isnan(v);
            }
            VK8 u = CAT(as_, VK8)(v);
            VK8 key = select(u | (VK8)Q_SIGN, ~u, CAT(as_, VS8)(u) < (VS8)0);
            va &= select((VK8)~(UKEY)0, key, ok);
            vo |= select((VK8)0, key, ok);
            UKEY kk[8];
            CAT(vstore, 8)(key, 0, kk);
            QS8 oo[8];
            CAT(vstore, 8)(ok & (VS8)1, 0, oo);
#pragma unroll
            for (uint k = 0; k < 8; k++) {
                wb[k * win + c[k]] = kk[k];
                c[k] += (uint)oo[k];
            }
        }
        UKEY ka[8], ko[8];
        CAT(vstore, 8)(va, 0, ka);
        CAT(vstore, 8)(vo, 0, ko);
        for (uint k = 0; k < 8; k++) {
            n[k] = c[k];
            kand[k] = ka[k];
            kor[k] = ko[k];
        }
    } else
    for (uint r = 0; r < rows; r++) {
#if CLS_PREFETCH
        /* rows within a few lines of each other (a narrow table, a single
         * column) are one stream the hardware follows */
        if (ld >= 64 && r + Q_AHEAD < rows) {
            __builtin_prefetch(x + off[0] + (ulong)(r + Q_AHEAD) * ld);
            __builtin_prefetch(x + off[nl - 1] + (ulong)(r + Q_AHEAD) * ld);
        }
#endif
        for (uint k = 0; k < nl; k++) {
            REAL v = 0;
            if (F(q_take)(x[off[k] + r * ld], qflags, sent, fc[k], fl[k], fh[k], &v) && !isnan(v)) {
                UKEY key = F(key_of)(v);
                scr[(b0 + k) * S_WIN(rows) + n[k]++] = key;
                kand[k] &= key;
                kor[k] |= key;
            }
        }
    }
    for (uint k = 0; k < nl; k++) {
        /* the bits that vary, for q_select, in the counters' place (a
         * window has counters past S_MERGE_MAX rows) */
        __global UKEY *h = scr + (b0 + k) * S_WIN(rows) + 2 * (ulong)rows;
        if (rows > S_MERGE_MAX) h[0] = kand[k] ^ kor[k];
    }
}
/* Groups of up to S_LANE_MAX rows, eight neighbouring columns (the common
 * case of phase 3): each wanted rank of all eight columns at once, one
 * column per lane of eight-wide vectors, by counting passes over the
 * columns' values kept in the window region (8 * S_WIN(rows) values hold
 * np rows of eight). A rank's value lies in [lo, hi], two of the column's
 * values (first its minimum and maximum) with cl values below lo and ch at
 * or below hi; a pass counts the values below a pivot q in (lo, hi]
 * (interpolated by rank) and notes the
 * largest value below it and the smallest at or above it: a count of r or
 * r + 1 gives the value of rank r, any other count moves lo up or hi down
 * to a value of the column. No branch and no load depends on a value
 * (q_select's radix levels mispredicted, re-zeroed their counters at
 * every level and scattered column by column); each pass is a compare, a
 * count and a min and max per wanted rank for eight columns. A block
 * whose ranks are not all found in S_LPASS passes (values spread over
 * many orders of magnitude) is selected by q_select after all.
 * Values, not keys: a missing value is +Inf, above every finite one; -0
 * and +0 compare equal, and nlt and nz give a zero its sign (as
 * quantile.cl's qsort). Returns 0 when the block is done. */
#define S_LANE_MAX CLS_SORT_LANE_MAX
#define S_LPASS 16
#define S_LSAMP 32
#define L_MIN(a, b) select((b), (a), (a) < (b))
#define L_MAX(a, b) select((a), (b), (a) < (b))
inline int F(q_lanes8)(__global const REAL *p, uint rows, ulong ld, Q_FILTER_ARGS, ulong e,
                       __global REAL *w, __global const uint *rank, uint nk, __global uint *cnt,
                       __global REAL *val)
{
    VR8 vc = (qflags & CLS_QF_ABSDEV) ? vload8(0, cen + e) : (VR8)0;
    VR8 vl = (qflags & CLS_QF_BOUNDS) ? vload8(0, flo + e) : (VR8)0;
    VR8 vh = (qflags & CLS_QF_BOUNDS) ? vload8(0, fhi + e) : (VR8)0;
    VS8 n = 0, nlt = 0, nz = 0;
    VR8 vmin = (VR8)INFINITY, vmax = (VR8)-INFINITY;
    for (uint r = 0; r < rows; r++) {
        VR8 v = vload8(0, p + (ulong)r * ld);
#if CLS_PREFETCH
        if (r + 32 < rows) {
            __builtin_prefetch(p + (ulong)(r + 32) * ld);
            __builtin_prefetch(p + (ulong)(r + 32) * ld + 7);
        }
#endif
        VS8 ok = isfinite(v);
        if (qflags) {
            ok &= (qflags & CLS_QF_SENTINEL) ? v != (VR8)sent : (VS8)-1;
            ok &= (qflags & CLS_QF_BOUNDS) ? !(v < vl) & !(v > vh) : (VS8)-1;
            v = (qflags & CLS_QF_ABSDEV) ? fabs(v - vc) : v;
            ok &= !isnan(v);
        }
        v = select((VR8)INFINITY, v, ok);
        n -= ok;
        nlt -= ok & (v < (VR8)0);
        nz -= ok & (v == (VR8)0) & signbit(v);
        vmin = L_MIN(vmin, v);
        vmax = L_MAX(vmax, select((VR8)-INFINITY, v, ok));
        vstore8(v, r, w);
    }
    QS8 na[8], la[8], za[8];
    vstore8(n, 0, na);
    vstore8(nlt, 0, la);
    vstore8(nz, 0, za);
    /* the ranks wanted, lane by lane; past the count (or none) NaN */
    VS8 rk[16], cl[16], ch[16], done[16], rb[16];
    VR8 lo[16], hi[16], ans[16], ansb[16];
    for (uint t = 0; t < nk; t++) {
        QS8 ra[8];
        for (uint k = 0; k < 8; k++) ra[k] = (QS8)rank[(ulong)na[k] * nk + t];
        rk[t] = vload8(0, ra);
        cl[t] = 0;
        ch[t] = n;
        lo[t] = vmin;
        hi[t] = vmax;
        VS8 ok = (n > (VS8)0) & (rk[t] < n);
        ans[t] = select((VR8)NAN, vmin, ok);
        done[t] = ~ok | (vmin == vmax);
    }
    /* a rank whose next target is the same rank or the next one in every
     * lane (an interpolated quantile's two values, taken by the same
     * columns) is searched once for both: a count of r + 1 below the pivot
     * gives rank r (the largest below) and r + 1 (the smallest at or
     * above). pair: those ranks, whose second target is then skipped. */
    uint pair = 0;
    for (uint t = 0; t < nk; t++) {
        rb[t] = rk[t];
        ansb[t] = ans[t];
        if (t + 1 < nk && !(t > 0 && ((pair >> (t - 1)) & 1u))) {
            VS8 d = rk[t + 1] - rk[t];
            VS8 okb = (n > (VS8)0) & (rk[t + 1] < n), oka = (n > (VS8)0) & (rk[t] < n);
            if (all(((d == (VS8)0) | (d == (VS8)1)) & (oka == okb))) {
                pair |= 1u << t;
                rb[t] = rk[t + 1];
            }
        }
    }
    /* the first pivots from a sorted sample of S_LSAMP rows spread over
     * the group: nearer than an interpolation between the extremes, which
     * a few outliers pull away */
    REAL sm[S_LSAMP * 8];
    {
        VR8 sv[S_LSAMP];
        for (uint i = 0; i < S_LSAMP; i++) sv[i] = vload8((2 * i + 1) * rows / (2 * S_LSAMP), w);
        CLS_SORTNET_OEM_BY(VR8, sv, S_LSAMP, L_MIN, L_MAX);
        for (uint i = 0; i < S_LSAMP; i++) vstore8(sv[i], i, sm);
    }
    /* at most 96 passes over the rows by all searches together, as
     * regime.c's loop budget (16 per row for each of eight columns)
     * assumes of a work-item: rusticl stops longer loops silently */
    uint ns = 0;
    for (uint t = 0; t < nk; t++) ns += !(t > 0 && ((pair >> (t - 1)) & 1u));
    uint npass = min((uint)S_LPASS, 96u / max(ns, 1u));
    for (uint pass = 0; pass < npass; pass++) {
        VR8 q[16], mn[16], mx[16];
        VS8 c[16];
        uint act = 0;
        for (uint t = 0; t < nk; t++) {
            if (t > 0 && ((pair >> (t - 1)) & 1u)) continue;
            if (!any(~done[t])) continue;
            act |= 1u << t;
            /* the pivot: where rank r would fall if the values between lo
             * and hi were even, in (lo, hi] (a convex combination: no
             * overflow however far apart); from the seventh pass every
             * other one halves [lo, hi] instead, as interpolation crawls
             * on values spread unevenly (on normal data it took 6-7
             * passes for a column's quartiles, the midpoint every third
             * pass 6-8) */
            VR8 f = pass >= 6 && pass % 2 ? (VR8)0.5
                                  : (CAT(convert_, VR8)(rk[t] - cl[t]) + select((VR8)1, (VR8)0.5, rb[t] == rk[t])) /
                                        CAT(convert_, VR8)(max(ch[t] - cl[t], (VS8)1));
            VR8 g = lo[t] * ((VR8)1 - f) + hi[t] * f;
            if (pass == 0) {
                QS8 ra[8];
                REAL ga[8];
                vstore8(rk[t], 0, ra);
                for (uint k = 0; k < 8; k++)
                    ga[k] = sm[min((uint)((2 * (ulong)ra[k] + 1) * S_LSAMP / (2 * rows)), (uint)(S_LSAMP - 1)) * 8 + k];
                g = vload8(0, ga);
            }
            q[t] = L_MIN(L_MAX(g, nextafter(lo[t], (VR8)INFINITY)), hi[t]);
        }
        if (!act) break;
        /* a target at a time, its counters in registers, two rows a
         * step in two sets (each row's min and max wait on the last) */
        for (uint t = 0; t < nk; t++) {
            if (!(act & (1u << t))) continue;
            VR8 qt = q[t], mn0 = (VR8)INFINITY, mn1 = (VR8)INFINITY, mx0 = (VR8)-INFINITY,
                mx1 = (VR8)-INFINITY;
            VS8 c0 = 0, c1 = 0;
            uint r = 0;
            for (; r + 1 < rows; r += 2) {
                VR8 v0 = vload8(r, w), v1 = vload8(r + 1, w);
                VS8 l0 = v0 < qt, l1 = v1 < qt;
                c0 -= l0;
                c1 -= l1;
                mn0 = L_MIN(mn0, select(v0, (VR8)INFINITY, l0));
                mn1 = L_MIN(mn1, select(v1, (VR8)INFINITY, l1));
                mx0 = L_MAX(mx0, select((VR8)-INFINITY, v0, l0));
                mx1 = L_MAX(mx1, select((VR8)-INFINITY, v1, l1));
            }
            if (r < rows) {
                VR8 v0 = vload8(r, w);
                VS8 l0 = v0 < qt;
                c0 -= l0;
                mn0 = L_MIN(mn0, select(v0, (VR8)INFINITY, l0));
                mx0 = L_MAX(mx0, select((VR8)-INFINITY, v0, l0));
            }
            c[t] = c0 + c1;
            mn[t] = L_MIN(mn0, mn1);
            mx[t] = L_MAX(mx0, mx1);
        }
        for (uint t = 0; t < nk; t++) {
            if (!(act & (1u << t))) continue;
            VS8 up = c[t] <= rk[t], live = ~done[t];
            /* c <= r: the value is at or above q, so at least mn */
            lo[t] = select(lo[t], mn[t], live & up);
            cl[t] = select(cl[t], c[t], live & up);
            /* c > r: below q, so at most mx */
            hi[t] = select(hi[t], mx[t], live & ~up);
            ch[t] = select(ch[t], c[t], live & ~up);
            /* c == r + 1: rank r the largest below q, and r + 1 the
             * smallest at or above it (before lo == hi, which hi = mx
             * may have just made: rank r + 1 is above it); c == r (one
             * rank wanted): the smallest at or above q; lo == hi: every
             * rank left */
            VS8 at_hi = live & (c[t] == rk[t] + (VS8)1);
            VS8 at_lo = live & ~at_hi & (((c[t] == rk[t]) & (rb[t] == rk[t])) | (lo[t] == hi[t]));
            ans[t] = select(select(ans[t], lo[t], at_lo), mx[t], at_hi);
            ansb[t] = select(select(ansb[t], lo[t], at_lo), select(mx[t], mn[t], rb[t] != rk[t]), at_hi);
            done[t] |= at_lo | at_hi;
        }
    }
    for (uint t = 0; t + 1 < nk; t++)
        if ((pair >> t) & 1u) {
            ans[t + 1] = ansb[t];
            done[t + 1] = done[t];
        }
    for (uint t = 0; t < nk; t++)
        if (any(~done[t])) return 1;
    for (uint t = 0; t < nk; t++) {
        REAL a[8];
        vstore8(ans[t], 0, a);
        QS8 ra[8];
        vstore8(rk[t], 0, ra);
        for (uint k = 0; k < 8; k++) {
            REAL v = a[k];
            if (v == 0) v = ra[k] < la[k] + za[k] ? -(REAL)0 : (REAL)0;
            val[k * nk + t] = v;
        }
    }
    for (uint k = 0; k < 8; k++) cnt[k] = (uint)na[k];
    return 0;
}
#undef S_LPASS
#undef S_LSAMP
#undef L_MIN
#undef L_MAX
#undef Q_AHEAD
#undef VR8
#undef VK8
#undef VS8
#undef QS8
#undef Q_SIGN

/* Window i's n keys' values of ranks rk[0, nk) (NaN past n) into
 * val[vi * nk + j] (q_select among the unsorted keys). */
inline void F(q_pick)(__global UKEY *scr, ulong i, uint rows, uint n, __global const uint *rank, uint nk,
                      __global REAL *val, ulong vi)
{
    __global UKEY *a = scr + i * S_WIN(rows), *b = a + rows;
    __global uint *h = (__global uint *)(b + rows);
    uint rk[16], m = 0, slot[16];
    UKEY got[16];
    /* the ranks within the count (the others are NaN) */
    for (uint j = 0; j < nk; j++) {
        uint r = rank[j];
        slot[j] = n && r < n ? m : 16;
        if (n && r < n) rk[m++] = r;
    }
    int hv = rows > S_MERGE_MAX;
    if (m) F(q_select)(a, b, h, n, rows, rk, m, hv, hv ? ((__global UKEY *)h)[0] : 0, got);
    for (uint j = 0; j < nk; j++) val[vi * nk + j] = slot[j] < 16 ? F(value_of_key)(got[slot[j]]) : (REAL)NAN;
}

/* Order statistics of columns of any length (quantile.cl's qsort kernels'
 * arguments and outputs, the filter included). Three ways through:
 *  - a CPU driver, groups whose ranks fit a table by count (the host's
 *    choice): phase 3, one launch (eight neighbours of one row of at most
 *    S_LANE_MAX rows: q_lanes8, the block's ranks in vector lanes; else,
 *    or where the lanes give up): work-item i loads entries e0 + 8i to
 *    e0 + 8i + 7 into their windows (q_load8), then selects each one's
 *    ranks rank[n * nk + j] (n its count, as the short columns' kernels
 *    take them) while its windows are still in the core's caches. The
 *    two launches below, with the host making the ranks in between, read
 *    every window back from memory and waited for the host twice per
 *    launch of a few thousand columns.
 *  - a CPU driver, longer groups: phase 0 loads (q_load8) and writes the
 *    counts; the host makes each entry's nk ranks from its count
 *    (rank[i * nk + j]: nk uints per entry however long the groups);
 *    phase 2 selects them (q_pick).
 *  - a GPU: wsort sorts the windows with every work-item and counts
 *    them; phase 1 picks the ranks from the sorted keys.
 * NaN past the count. Phases 0 and 3: work-item i takes entries e0 + 8i
 * to e0 + 8i + 7 (group e / ncols, column e % ncols), loaded a row of them
 * at a time (neighbours in memory); phases 1 and 2: work-item i entry
 * e0 + i. n_e entries in this launch. A work-item per column sorting its
 * keys spent 5-8 passes over them for 6 values. */
__kernel void F(qsortg)(__global const REAL *x, ulong xoff, uint ncols, uint rows, ulong ld,
                        ulong gstride, ulong e0, Q_FILTER_ARGS,
                        __global const uint *rank, uint nk,
                        __global uint *cnt, __global REAL *val, __global UKEY *scr, ulong n_e, uint phase)
{
    if (phase == 0 || phase == 3) {
        ulong b0 = get_global_id(0) * 8;
        if (b0 >= n_e) return;
        uint nl = (uint)min((ulong)8, n_e - b0), n[8];
        ulong e = e0 + b0;
        if (phase == 3 && nl == 8 && rows > S_MERGE_MAX && rows <= S_LANE_MAX && e % ncols + 8 <= ncols) {
            /* eight neighbours of one group (q_lanes8) */
            if (!F(q_lanes8)(x + xoff + (e / ncols) * gstride + e % ncols, rows, ld, qflags, sent, cen + e,
                             flo + e, fhi + e, 0, (__global REAL *)(scr + b0 * S_WIN(rows)), rank, nk, cnt + b0,
                             val + b0 * nk))
                return;
        }
        F(q_load8)(x, xoff, ncols, rows, ld, gstride, e0, qflags, sent, cen, flo, fhi, scr, b0, nl, n);
        for (uint k = 0; k < nl; k++) {
            cnt[b0 + k] = n[k];
            if (phase == 3) F(q_pick)(scr, b0 + k, rows, n[k], rank + (ulong)n[k] * nk, nk, val, b0 + k);
        }
    } else if (phase == 2) {
        ulong i = get_global_id(0);
        if (i >= n_e) return;
        F(q_pick)(scr, i, rows, cnt[i], rank + i * nk, nk, val, i);
    } else {
        ulong i = get_global_id(0);
        if (i >= n_e) return;
        __global UKEY *a = scr + i * S_WIN(rows);
        uint n = cnt[i];
        for (uint j = 0; j < nk; j++) {
            uint r = rank[i * nk + j];
            val[i * nk + j] = n && r < n ? F(value_of_key)(a[r]) : (REAL)NAN;
        }
    }
}
#endif

#if CLS_KERNEL == CLS_KID_WSORT
/* The windows of the sort regime sorted by every work-item at once (for
 * GPUs, src/quantiles/regime.c's cls_sort_parallel): a work-item per column
 * leaves a GPU nearly idle where a table has a few hundred columns (and
 * takes one thread for a single tall one), so here every value has its
 * own work-item whatever the shape. Three phases, launched by the host
 * (src/quantiles/wsort.c) over the n_e windows from entry e0 on:
 *  0  a work-group per tile of `width` rows (a power of 2) of one entry:
 *     the kept values' keys (qsortg's filter: q_take, NaN dropped), the
 *     others WS_NONE (sorting last), sorted in local memory by a bitonic
 *     network, written to the window's a (src_b: b) at the tile's rows;
 *  1  a work-item per value: merges sorted runs of `width` pairwise into
 *     the other array, each value placed by a binary search of its
 *     partner run (values of the left run before equal ones of the right);
 *     the host doubles the width until one run holds the column;
 *  2  a work-item per entry: its count of kept values (the keys before
 *     the first WS_NONE) into cnt[cnt_off + i].
 * The host starts phase 0 in the array that makes the last merge land in
 * a, where qsortg's phase 1 and clipsort (XF_SORTED) read the keys.
 * Work per value: log2(tile)^2 / 2 compares, then one search per merge. */
#define WS_TILE_MAX 1024
#define WS_NONE (~(UKEY)0)

/* the first of w[0, n) not below k, or above it */
inline uint F(ws_lower)(__global const UKEY *w, uint n, UKEY k)
{
    uint lo = 0, hi = n;
    while (lo < hi) {
        uint m = (lo + hi) >> 1;
        if (w[m] < k) lo = m + 1;
        else hi = m;
    }
    return lo;
}
inline uint F(ws_upper)(__global const UKEY *w, uint n, UKEY k)
{
    uint lo = 0, hi = n;
    while (lo < hi) {
        uint m = (lo + hi) >> 1;
        if (w[m] <= k) lo = m + 1;
        else hi = m;
    }
    return lo;
}

__kernel void F(wsort)(__global const REAL *x, ulong xoff, uint ncols, uint rows, ulong ld, ulong gstride,
                       ulong e0, Q_FILTER_ARGS, __global UKEY *scr, __global uint *cnt, ulong cnt_off,
                       ulong n_e, uint phase, uint width, uint src_b)
{
    __local UKEY t[WS_TILE_MAX];
    ulong win = S_WIN(rows);
    if (phase == 0) {
        /* every item of the group reaches the barriers: no early return */
        uint L = (uint)get_local_size(0), lid = (uint)get_local_id(0), T = width;
        uint tpe = (rows + T - 1) / T;
        ulong g = get_group_id(0), i = g / tpe;
        uint r0 = (uint)(g % tpe) * T;
        uint nr = i < n_e ? min(T, rows - r0) : 0;
        ulong e = e0 + min(i, n_e - 1);
        ulong off = xoff + (e / ncols) * gstride + e % ncols;
        Q_FILTER_LOAD(e);
        for (uint j = lid; j < T; j += L) {
            UKEY k = WS_NONE;
            REAL v = 0;
            if (j < nr && F(q_take)(x[off + (ulong)(r0 + j) * ld], qflags, sent, cc, lo, hi, &v) && !isnan(v))
                k = F(key_of)(v);
            t[j] = k;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = 2; s <= T; s <<= 1)
            for (uint h = s >> 1; h > 0; h >>= 1) {
                for (uint p = lid; p < T / 2; p += L) {
                    uint a = 2 * p - (p & (h - 1)), b = a + h;
                    UKEY u = t[a], w = t[b];
                    if ((u > w) == ((a & s) == 0)) {
                        t[a] = w;
                        t[b] = u;
                    }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        __global UKEY *dst = scr + i * win + (src_b ? rows : 0) + r0;
        for (uint j = lid; j < nr; j += L) dst[j] = t[j];
    } else if (phase == 1) {
        ulong gid = get_global_id(0);
        if (gid >= n_e * rows) return;
        ulong i = gid / rows;
        uint j = (uint)(gid % rows), w = width, rs = j / w * w;
        __global const UKEY *src = scr + i * win + (src_b ? rows : 0);
        __global UKEY *dst = scr + i * win + (src_b ? 0 : rows);
        UKEY k = src[j];
        if (((j / w) & 1) == 0) {
            uint ps = rs + w;
            dst[ps >= rows ? j : j + F(ws_lower)(src + ps, min(w, rows - ps), k)] = k;
        } else {
            uint ps = rs - w;
            dst[ps + (j - rs) + F(ws_upper)(src + ps, w, k)] = k;
        }
    } else {
        ulong i = get_global_id(0);
        if (i >= n_e) return;
        cnt[cnt_off + i] = F(ws_lower)(scr + i * win, rows, WS_NONE);
    }
}
#undef WS_TILE_MAX
#undef WS_NONE
#endif
