/* The data summary's device passes (src/api/describe.c drives them;
 * written once for REAL = float or double like scale.cl). */

#define F(name) CAT(name, SFX)

/* Outliers at k sigma: work-item (column, chunk of `chunk` rows) of one
 * group counts its finite values with |x - mean| > thr (thr = k * std,
 * both per entry e0 + column, in the data's precision) into
 * out[chunk * ncols + column]. Neighbouring work-items read neighbouring
 * columns; at most `chunk` iterations per work-item. */
#if CLS_KERNEL == CLS_KID_OUTLIERS
__kernel void F(outliers)(__global const REAL *x, uint ncols, ulong nrows, ulong ld, uint chunk, ulong e0,
                          __global const REAL *mean, __global const REAL *thr, __global uint *out)
{
    uint c = (uint)get_global_id(0);
    if (c >= ncols) return;
    ulong j = get_global_id(1);
    ulong r0 = j * chunk;
    if (r0 >= nrows) return;
    uint rows = (uint)min((ulong)chunk, nrows - r0);
    REAL m = mean[e0 + c], t = thr[e0 + c];
    __global const REAL *p = x + r0 * ld + c;
    uint n = 0;
    for (uint i = 0; i < rows; i++) {
        REAL v = p[i * ld];
        n += (isfinite(v) && fabs(v - m) > t) ? 1u : 0u;
    }
    out[j * ncols + c] = n;
}
#endif

/* Row hashes for the duplicate count: work-item (row, block of `block`
 * columns) hashes its block into out[row * nblocks + block]. Values are
 * hashed as their bits after making equal what pandas counts equal: every
 * NaN one NaN, -0 the same as +0. Reads a contiguous run of a row. */
#if CLS_KERNEL == CLS_KID_ROW_HASH
__kernel void F(row_hash)(__global const REAL *x, ulong nrows, ulong ncols, uint block, uint nblocks,
                          __global ulong *out)
{
    ulong r = get_global_id(0);
    uint b = (uint)get_global_id(1);
    if (r >= nrows || b >= nblocks) return;
    ulong c0 = (ulong)b * block;
    uint n = (uint)min((ulong)block, ncols - c0);
    __global const REAL *p = x + r * ncols + c0;
    ulong h = 0x9e3779b97f4a7c15UL ^ ((ulong)b * 0xbf58476d1ce4e5b9UL);
    for (uint i = 0; i < n; i++) {
        REAL v = p[i];
#if REAL_BYTES == 8
        ulong u = isnan(v) ? 0x7ff8000000000000UL : v == 0 ? 0UL : as_ulong(v);
#else
        ulong u = isnan(v) ? 0x7fc00000UL : v == 0 ? 0UL : (ulong)as_uint(v);
#endif
        h ^= u;
        h *= 0xff51afd7ed558ccdUL;
        h ^= h >> 29;
    }
    out[r * nblocks + b] = h;
}
#endif

#undef F
