/* Exact order statistics per column by counting (stats/quantile.c drives
 * them; written once for REAL = float or double like scale.cl).
 *
 * A value takes part when it is finite, differs from the sentinel (when
 * `has_sent`) and is not outside [flo[col], fhi[col]] (the bounds of a
 * sigma clip's remaining values); it is counted as itself, or as
 * |x - cen[col]| (`absdev`, for the MAD). Columns are `ld` apart in each
 * row; entry e of a per-column table is (group * ncols + column).
 *
 * Keys: the order-preserving unsigned image of a value's bits (negative:
 * all bits flipped; else the sign bit set), so that sorting keys sorts
 * values, -0 before +0. */

#define F(name) CAT(name, SFX)

#if REAL_BYTES == 8
#define UKEY ulong
#define KEY_BITS 64
inline UKEY F(key_of)(REAL v)
{
    ulong u = as_ulong(v);
    return (u >> 63) ? ~u : (u | 0x8000000000000000UL);
}
#else
#define UKEY uint
#define KEY_BITS 32
inline UKEY F(key_of)(REAL v)
{
    uint u = as_uint(v);
    return (u >> 31) ? ~u : (u | 0x80000000U);
}
#endif

/* The value of one element as the counting sees it, and whether it takes
 * part. The bounds test x itself, as clean.cl's moments pass does (NaN
 * bounds clip nothing), before the optional |x - cen|. */
inline int F(q_take)(REAL x, uint qflags, REAL sent, REAL cen, REAL flo, REAL fhi, REAL *out)
{
    if (!isfinite(x) || ((qflags & CLS_QF_SENTINEL) && x == sent)) return 0;
    if ((qflags & CLS_QF_BOUNDS) && (x < flo || x > fhi)) return 0;
    *out = (qflags & CLS_QF_ABSDEV) ? fabs(x - cen) : x;
    return 1;
}

#define Q_FILTER_ARGS uint qflags, REAL sent, __global const REAL *cen, \
                      __global const REAL *flo, __global const REAL *fhi
/* The filter's per-column values of entry e. */
#define Q_FILTER_LOAD(e)                                                      \
    REAL cc = (qflags & CLS_QF_ABSDEV) ? cen[e] : (REAL)0;                    \
    REAL lo = (qflags & CLS_QF_BOUNDS) ? flo[e] : (REAL)0;                    \
    REAL hi = (qflags & CLS_QF_BOUNDS) ? fhi[e] : (REAL)0

/* Short columns (a group of at most 128 rows): work-item (column, group of
 * the slice) loads its column's keys into private memory (a missing value
 * or one the filter drops becomes SKEY_MISS, which sorts last) and finds
 * the order statistics there. rank[n * nk + j] is the j-th rank wanted when
 * the column has n values (the host fills it for every n up to `rows`).
 * Writes the count n and nk values per column (NaN where n = 0 or the rank
 * is past n). Neighbouring work-items read neighbouring columns: every load
 * is a contiguous row segment, and the data is read once.
 * - qsort32 / qsort64 (rows <= 32 / 64; every device but a GPU): a
 *   work-item owns XW neighbouring columns, one per lane of explicit
 *   vectors (cl/lanes.cl), as clip.cl does: each row is one vector load,
 *   and Batcher's odd-even merge network (cl/sortnet.cl) sorts all lanes
 *   at once. PoCL did not run the one-column form below across work-items
 *   in SIMD (docs/guide/cleaning-speed.md, "Exact quantiles").
 * - qsort32g / qsort64g (the same on GPUs: a column per work-item): a
 *   bitonic network over QN values, unrolled at compile time.
 * - qselect_small (rows <= 128): each key's rank by counting the keys below
 *   and equal to it in private memory, rows^2 compares (at most 16384
 *   iterations per work-item: under rusticl's loop limit).
 * Signed keys: the value's bits with every bit but the sign flipped for
 * negatives, so that signed order is value order (-0 before +0). */
#if REAL_BYTES == 8
#define SKEY long
#define SKEY_MISS 0x7fffffffffffffffL
inline SKEY F(skey_of)(REAL v)
{
    long u = as_long(v);
    return u ^ ((u >> 63) & 0x7fffffffffffffffL);
}
inline REAL F(value_of_skey)(SKEY k) { return as_double(k ^ ((k >> 63) & 0x7fffffffffffffffL)); }
#else
#define SKEY int
#define SKEY_MISS 0x7fffffff
inline SKEY F(skey_of)(REAL v)
{
    int u = as_int(v);
    return u ^ ((u >> 31) & 0x7fffffff);
}
inline REAL F(value_of_skey)(SKEY k) { return as_float(k ^ ((k >> 31) & 0x7fffffff)); }
#endif

#if CLS_KERNEL == CLS_KID_QSORT32 || CLS_KERNEL == CLS_KID_QSORT64 || CLS_KERNEL == CLS_KID_QSORT128
#if CLS_KERNEL == CLS_KID_QSORT32
#define QN 32
#define QNAME qsort32
#elif CLS_KERNEL == CLS_KID_QSORT64
#define QN 64
#define QNAME qsort64
#else
#define QN 128
#define QNAME qsort128
#endif
/* Lane k's rank j for n values: rank[n * nk + j], gathered per lane. */
inline IV F(q_rank_of)(__global const uint *rank, IV n, uint nk, uint j)
{
    IS nv[XW], r[XW];
    CAT(vstore, XW)(n, 0, nv);
    for (uint k = 0; k < XW; k++) r[k] = (IS)rank[(ulong)nv[k] * nk + j];
    return CAT(vload, XW)(0, r);
}

__kernel void F(QNAME)(__global const REAL *x, ulong xoff, uint ncols, uint rows, ulong ld,
                       ulong gstride, ulong e0, Q_FILTER_ARGS,
                       __global const uint *rank, uint nk,
                       __global uint *cnt, __global REAL *val)
{
    uint c0 = (uint)get_global_id(0) * XW;
    if (c0 >= ncols) return;
    uint nl = ncols - c0; /* lanes with a column: XW, or fewer in the last block */
    ulong g = get_global_id(1);
    ulong e = e0 + g * ncols + c0;
    __global const REAL *p = x + xoff + g * gstride + c0;
    /* the filter's per-column values */
    int sen = (qflags & CLS_QF_SENTINEL) != 0, bnd = (qflags & CLS_QF_BOUNDS) != 0,
        dev = (qflags & CLS_QF_ABSDEV) != 0;
    RV cc = dev ? F(x_load)(cen + e, nl, 0) : (RV)0;
    RV lo = bnd ? F(x_load)(flo + e, nl, 0) : (RV)0;
    RV hi = bnd ? F(x_load)(fhi + e, nl, 0) : (RV)0;
    /* Values (minpd / maxpd sort twice as fast as integer keys on AVX2): a
     * value that takes no part is +Inf, after every finite one. Equal
     * values leave -0 and +0 in either order: nlt and nz put them back in
     * key order (-0 first) when a zero is picked. */
    RV w[QN];
    IV n = 0, nlt = 0, nz = 0;
#if QN <= 64
    /* qb: the power of two >= rows, the values the network below sorts;
     * past it +Inf, stored alone (no filter to run on them) */
    uint qb = 1;
    while (qb < rows) qb <<= 1;
    for (uint i = qb; i < QN; i++) w[i] = (RV)INFINITY;
#else
    uint qb = QN;
#endif
    for (uint i = 0; i < qb; i++) {
        RV t = i < rows ? F(x_load)(p + (ulong)i * ld, nl, (REAL)INFINITY) : (RV)INFINITY;
#if CLS_PREFETCH
        /* the same row of the work-item eight blocks on (8 * XW values):
         * the rows are a group's height apart, each a stream of its own.
         * Two blocks on (clip.cl's 2 * XW), the lines arrived too late:
         * the load still waited on them, the hottest instruction of the
         * kernel at 60 rows */
        if (i < rows) __builtin_prefetch(p + (ulong)i * ld + 8 * XW);
#endif
        IV ok = isfinite(t);
        if (qflags) {
            /* q_take's filter, lane by lane */
            ok &= sen ? t != (RV)sent : (IV)-1;
            ok &= bnd ? !(t < lo) & !(t > hi) : (IV)-1;
            t = dev ? fabs(t - cc) : t;
            ok &= !isnan(t);
        }
        t = select((RV)INFINITY, t, ok);
        w[i] = t;
        n -= ok;
        nlt -= ok & (t < (RV)0);
        nz -= ok & (t == (RV)0) & signbit(t);
    }
#if QN > 64
    /* each half by the unrolled network (compiled once: a loop over the
     * halves), then their merge in loops (cl/sortnet.cl). A second half
     * of at most 16 values (groups of 65-80 rows) takes the network of
     * its values alone, the rest of it being +Inf: its 64-value network
     * was a third of the kernel's exchanges at 65 rows, for one value */
    uint h2 = rows - QN / 2;
#pragma unroll 1
    for (uint h = 0; h < (h2 > 16 ? 2u : 1u); h++) {
        RV *hw = w + h * (QN / 2);
        CLS_SORTNET_OEM_BY(RV, hw, QN / 2, X_MIN, X_MAX);
    }
    if (h2 <= 16) {
        RV *hw = w + QN / 2;
        CLS_SORTNET_OEM_UPTO(RV, hw, h2, 16, X_MIN, X_MAX)
    }
    CLS_SORTNET_OEM_FROM(RV, w, QN, 6, X_MIN, X_MAX);
#else
    /* the first qb values alone (w past rows is +Inf, sorted already):
     * wide data with groups of a row or a few paid QN's network and
     * filter per column (clip.cl sorts the same way) */
    CLS_SORTNET_OEM_UPTO(RV, w, qb, QN, X_MIN, X_MAX)
#endif
    F(x_store_u)(TO_UV(n), cnt + e, nl);
    IV nneg = nlt + nz;
    for (uint j = 0; j < nk; j++) {
        IV r = F(q_rank_of)(rank, n, nk, j);
        RV v = X_GATHER(w, X_IDX(r));
        v = select(v, select((RV)0, -(RV)0, r < nneg), v == (RV)0);
        v = select(X_QNAN, v, (n != 0) & (r < n));
        REAL t[XW];
        X_VSTORE(v, 0, t);
        for (uint k = 0; k < XW && k < nl; k++) val[(e + k) * nk + j] = t[k];
    }
}
#undef QN
#undef QNAME
#endif

#if CLS_KERNEL == CLS_KID_QSORT32G || CLS_KERNEL == CLS_KID_QSORT64G || CLS_KERNEL == CLS_KID_QSELECT_SMALL
#if CLS_KERNEL == CLS_KID_QSORT32G
#define QN 32
#define QNAME qsort32g
#elif CLS_KERNEL == CLS_KID_QSORT64G
#define QN 64
#define QNAME qsort64g
#else
#define QN 128
#define QNAME qselect_small
#endif
__kernel void F(QNAME)(__global const REAL *x, ulong xoff, uint ncols, uint rows, ulong ld,
                       ulong gstride, ulong e0, Q_FILTER_ARGS,
                       __global const uint *rank, uint nk,
                       __global uint *cnt, __global REAL *val)
{
    uint c = (uint)get_global_id(0);
    if (c >= ncols) return;
    ulong g = get_global_id(1);
    ulong e = e0 + g * ncols + c;
    __global const REAL *p = x + xoff + g * gstride + c;
    Q_FILTER_LOAD(e);
    uint n = 0;
#if QN < 128
    /* the network sorts values (minpd and maxpd: twice the speed of integer
     * keys on AVX2); a missing value is +Inf, after every finite one. Equal
     * values leave -0 and +0 in either order: nlt and nz put them back in
     * key order (-0 first) when a zero is picked. */
    REAL w[QN];
    uint nlt = 0, nz = 0;
    if (qflags == 0) {
        /* the common case, NaN and +-Inf missing: nothing else to test */
#pragma unroll
        for (uint i = 0; i < QN; i++) {
            REAL v = i < rows ? p[i * ld] : (REAL)INFINITY;
            int t = isfinite(v);
            w[i] = t ? v : (REAL)INFINITY;
            n += t ? 1u : 0u;
            nlt += (t && v < 0) ? 1u : 0u;
            nz += (t && v == 0 && signbit(v)) ? 1u : 0u;
        }
    } else {
#pragma unroll
        for (uint i = 0; i < QN; i++) {
            REAL v = 0;
            int t = i < rows && F(q_take)(p[i * ld], qflags, sent, cc, lo, hi, &v) && !isnan(v);
            w[i] = t ? v : (REAL)INFINITY;
            n += t ? 1u : 0u;
            nlt += (t && v < 0) ? 1u : 0u;
            nz += (t && v == 0 && signbit(v)) ? 1u : 0u;
        }
    }
    /* bitonic sort, ascending (cl/sortnet.cl) */
    CLS_SORTNET(REAL, w, QN);
    cnt[e] = n;
    __global const uint *rk = rank + (ulong)n * nk;
    for (uint j = 0; j < nk; j++) {
        uint r = rk[j];
        REAL v = (REAL)NAN;
        if (n && r < n) {
            v = w[r];
            if (v == 0) v = r < nlt + nz ? -(REAL)0 : (REAL)0;
        }
        val[e * nk + j] = v;
    }
#else
    SKEY k[QN];
    for (uint i = 0; i < rows; i++) {
        REAL v = 0;
        int t = F(q_take)(p[i * ld], qflags, sent, cc, lo, hi, &v);
        k[i] = t ? F(skey_of)(v) : SKEY_MISS;
        n += t ? 1u : 0u;
    }
    cnt[e] = n;
    for (uint j = 0; j < nk; j++) val[e * nk + j] = NAN;
    if (n == 0) return;
    __global const uint *rk = rank + (ulong)n * nk;
    for (uint i = 0; i < rows; i++) {
        SKEY ki = k[i];
        if (ki == SKEY_MISS) continue;
        uint below = 0, equal = 0;
        for (uint j = 0; j < rows; j++) {
            below += k[j] < ki ? 1u : 0u;
            equal += k[j] == ki ? 1u : 0u;
        }
        for (uint j = 0; j < nk; j++) {
            uint r = rk[j];
            if (r >= below && r < below + equal) val[e * nk + j] = F(value_of_skey)(ki);
        }
    }
#endif
}
#undef QN
#undef QNAME
#endif
#undef SKEY
#undef SKEY_MISS

/* One radix pass: work-item (column, chunk of `chunk` rows) of one group
 * counts the 2^bits values of key bits [shift, shift + bits) among its
 * values whose higher bits equal prefix[e * nk + t]'s, for each target
 * t < nk, into hist[((chunk * ncols + c) * nk + t) * 2^bits + digit], a
 * region it alone writes (8-bit digits), or into the column's one
 * histogram hist[(c * nk + t) * 2^bits + digit] (wider). Target slots
 * with prefix mask 0 (the first pass) take every value. */
#if CLS_KERNEL == CLS_KID_QHIST
__kernel void F(qhist)(__global const REAL *x, ulong xoff, uint ncols, ulong nrows, ulong ld, uint chunk,
                       ulong e0, Q_FILTER_ARGS, __global const UKEY *prefix, uint nk, uint shift,
                       uint bits, __global uint *hist)
{
    uint c = (uint)get_global_id(0);
    if (c >= ncols) return;
    ulong j = get_global_id(1);
    ulong r0 = j * chunk;
    if (r0 >= nrows) return;
    uint rows = (uint)min((ulong)chunk, nrows - r0);
    ulong e = e0 + c;
    /* digits of `bits` bits. Wider than 8 (a streamed first pass), the
     * chunks of a column share one histogram, counted atomically and
     * zeroed by the host: one region per chunk would be 2^16 counters to
     * zero and sum for each 16384 values */
    uint nb = 1u << bits;
    int wide = bits > 8;
    __global uint *h = hist + (wide ? c : j * ncols + c) * nk * nb;
    if (!wide)
        for (uint i = 0; i < nk * nb; i++) h[i] = 0;
    __global const REAL *p = x + xoff + r0 * ld + c;
    Q_FILTER_LOAD(e);
    uint hs = shift + bits;
    for (uint i = 0; i < rows; i++) {
        REAL v;
        if (!F(q_take)(p[i * ld], qflags, sent, cc, lo, hi, &v)) continue;
        UKEY k = F(key_of)(v);
        uint d = (uint)((k >> shift) & (nb - 1));
        for (uint t = 0; t < nk; t++) {
            UKEY pf = prefix[e * nk + t];
            if (hs >= KEY_BITS || ((k ^ pf) >> hs) == 0) {
                if (wide) atomic_inc(&h[t * nb + d]);
                else h[t * nb + d]++;
            }
        }
    }
}
#endif

/* Sums the chunks' histograms: one work-item per (column, target, digit). */
#if CLS_KERNEL == CLS_KID_QHIST_REDUCE
__kernel void F(qhist_reduce)(__global const uint *hist, uint nchunks, ulong per_chunk, __global uint *out)
{
    ulong i = get_global_id(0);
    if (i >= per_chunk) return;
    uint s = 0;
    for (uint j = 0; j < nchunks; j++) s += hist[j * per_chunk + i];
    out[i] = s;
}
#endif

/* UKEY, KEY_BITS, F and the filter stay defined for sort.cl and
 * clip_sort.cl, which come next (program.c) and undefine them. */
