/* Groups longer than the sorting networks take (the "sort" regime,
 * src/engine/regime.h): each work-item sorts one column's keys once, in
 * its own window of a global scratch buffer, and everything after that
 * (order statistics, every clipping iteration: cl/clip_sort.cl) is an
 * index, a binary search or a run of the sorted values.
 *
 * The sort is an LSD radix sort of the keys (quantile.cl's key_of: value
 * order, -0 before +0) with 8-bit digits. The load notes which bits vary
 * between the keys (the AND and OR of all of them): a digit position that
 * does not vary (the sign and exponent bits of most data) costs nothing;
 * each other one is a count, a prefix sum of 256 and one scatter over the
 * window (in cache). Work per value: at most KEY_BITS / 8 scatters,
 * whatever the group's length, and no work-group barrier (the same code
 * on CPU drivers, where a work-item is a loop iteration, and on
 * simulators).
 *
 * A work-item's window (S_WIN keys): keys a[rows], keys b[rows], then 256
 * counters. The host sizes the buffer for the work-items of one launch
 * and launches again over the next entries (src/engine/clip_fast.c,
 * select.c): the scratch is bounded by the context's budget, not by the
 * number of groups. */

#define S_DIGITS (KEY_BITS / 8)
/* a window's length in keys: two arrays and the counters (a uint each) */
#define S_WIN(rows) (2 * (ulong)(rows) + (256 * 4 + sizeof(UKEY) - 1) / sizeof(UKEY))

inline REAL F(value_of_key)(UKEY k)
{
#if REAL_BYTES == 8
    return as_double((k >> 63) ? (k & 0x7fffffffffffffffUL) : ~k);
#else
    return as_float((k >> 31) ? (k & 0x7fffffffU) : ~k);
#endif
}

/* Sorts a[0, n), whose keys' bits vary only where `vary` (the XOR of
 * their AND and OR) is set, with b as the other array and h as 256
 * counters; returns 0 when the sorted keys are in a, 1 when in b. A short
 * run by insertion (fewer moves than a pass). */
inline int F(sort_keys)(__global UKEY *a, __global UKEY *b, __global uint *h, uint n, UKEY vary)
{
    if (n <= 24) {
        for (uint i = 1; i < n; i++) {
            UKEY k = a[i];
            uint j = i;
            while (j > 0 && a[j - 1] > k) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = k;
        }
        return 0;
    }
    int in_b = 0;
    for (uint d = 0; d < S_DIGITS; d++) {
        uint sh = 8 * d;
        if (((vary >> sh) & 255) == 0) continue;
        __global UKEY *src = in_b ? b : a, *dst = in_b ? a : b;
        for (uint i = 0; i < 256; i++) h[i] = 0;
        for (uint i = 0; i < n; i++) h[(uint)((src[i] >> sh) & 255)]++;
        uint s = 0;
        for (uint i = 0; i < 256; i++) {
            uint t = h[i];
            h[i] = s;
            s += t;
        }
        for (uint i = 0; i < n; i++) {
            UKEY k = src[i];
            dst[h[(uint)((k >> sh) & 255)]++] = k;
        }
        in_b = !in_b;
    }
    return in_b;
}

#if CLS_KERNEL == CLS_KID_QSORTG
/* Order statistics of columns of any length (quantile.cl's qsort kernels'
 * arguments and outputs, the filter included), in two launches over the
 * same scratch: phase 0 sorts entry e0 + i's kept values (as q_take sees
 * them) into window i and writes its count; the host then makes each
 * entry's nk ranks from its count (rank[i * nk + j], no table by count:
 * the ranks take nk uints per entry however long the groups), and phase 1
 * picks them (NaN past the count). Work-item i: entry e0 + i (group
 * e / ncols, column e % ncols); n_e entries in this launch. */
__kernel void F(qsortg)(__global const REAL *x, ulong xoff, uint ncols, uint rows, ulong ld,
                        ulong gstride, ulong e0, Q_FILTER_ARGS,
                        __global const uint *rank, uint nk,
                        __global uint *cnt, __global REAL *val, __global UKEY *scr, ulong n_e, uint phase)
{
    ulong i = get_global_id(0);
    if (i >= n_e) return;
    ulong e = e0 + i;
    ulong g = e / ncols;
    uint c = (uint)(e % ncols);
    __global UKEY *a = scr + i * S_WIN(rows), *b = a + rows;
    __global uint *h = (__global uint *)(b + rows);
    if (phase == 0) {
        __global const REAL *p = x + xoff + g * gstride + c;
        Q_FILTER_LOAD(e);
        uint n = 0;
        UKEY kand = ~(UKEY)0, kor = 0;
        for (uint r = 0; r < rows; r++) {
            REAL v = 0;
            if (F(q_take)(p[r * ld], qflags, sent, cc, lo, hi, &v) && !isnan(v)) {
                UKEY k = F(key_of)(v);
                a[n++] = k;
                kand &= k;
                kor |= k;
            }
        }
        /* the sorted keys back in a */
        if (F(sort_keys)(a, b, h, n, kand ^ kor))
            for (uint r = 0; r < n; r++) a[r] = b[r];
        cnt[i] = n;
    } else {
        uint n = cnt[i];
        for (uint j = 0; j < nk; j++) {
            uint r = rank[i * nk + j];
            val[i * nk + j] = n && r < n ? F(value_of_key)(a[r]) : (REAL)NAN;
        }
    }
}
#endif
