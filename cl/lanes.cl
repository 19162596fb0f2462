/* Explicit lanes for the kernels whose work-item owns a block of XW
 * neighbouring columns of short statistics groups (clip.cl's one-pass
 * clipping, quantile.cl's qsort32 / 64 / 128): XW = 4 doubles or 8 floats,
 * one AVX2 register. A CPU driver does not vectorise a kernel whose loops
 * run a data-dependent number of times, nor one that indexes a private
 * array at run time, so these kernels do it themselves: row i of the
 * block is one vector load, and the sorting networks (cl/sortnet.cl) run
 * on vectors. Written once for REAL = float or double (each REAL section
 * of the assembled source includes it again; it first drops the previous
 * section's definitions).
 *
 * Lane types: RV values, IV their masks and counts (signed, the width of
 * REAL; IS its scalar), UV unsigned 32-bit counts, AV the accumulator (float64 where the
 * device has it, also for float32 data), AIV its masks. */

#undef XW
#undef RV
#undef IV
#undef IS
#undef UV
#undef AV
#undef AIV
#undef ACC
#undef TO_UV
#undef TO_RV
#undef TO_IV
#undef TO_AV
#undef TO_AIV
#undef TO_RV_A
#undef X_VLOAD
#undef X_VSTORE
#undef X_GATHER_T
#undef X_G1
#undef X_GATHER
#undef X_GATHER_A
#undef X_IDX
#undef X_MIN
#undef X_MAX
#undef X_QNAN

#if CLS_KERNEL == CLS_KID_CLIP32 || CLS_KERNEL == CLS_KID_CLIP64 || CLS_KERNEL == CLS_KID_QSORT32 || \
    CLS_KERNEL == CLS_KID_QSORT64 || CLS_KERNEL == CLS_KID_QSORT128
/* XW: program.c's -DCLS_XW64 lanes of doubles (4, or 8 where the device's
 * native vectors hold 8: AVX-512), twice as many floats */
#ifndef CLS_XW64
#define CLS_XW64 4
#endif
#if REAL_BYTES == 8
#define XW CLS_XW64
#define RV CAT(double, XW)
#define IV CAT(long, XW)
#define IS long
#define AV CAT(double, XW)
#define AIV CAT(long, XW)
#define ACC double
#define TO_RV CAT(convert_double, XW)
#define TO_IV CAT(convert_long, XW)
#define TO_AV CAT(convert_double, XW)
#define TO_AIV CAT(convert_long, XW)
#define TO_RV_A CAT(convert_double, XW)
#else
#if CLS_XW64 == 8
#define XW 16
#else
#define XW 8
#endif
#define RV CAT(float, XW)
#define IV CAT(int, XW)
#define IS int
#define TO_RV CAT(convert_float, XW)
#define TO_IV CAT(convert_int, XW)
#if CLS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define AV CAT(double, XW)
#define AIV CAT(long, XW)
#define ACC double
#define TO_AV CAT(convert_double, XW)
#define TO_AIV CAT(convert_long, XW)
#else
#define AV CAT(float, XW)
#define AIV CAT(int, XW)
#define ACC float
#define TO_AV CAT(convert_float, XW)
#define TO_AIV CAT(convert_int, XW)
#endif
#define TO_RV_A CAT(convert_float, XW)
#endif
#define UV CAT(uint, XW)
#define TO_UV CAT(convert_uint, XW)
#define X_VLOAD CAT(vload, XW)
#define X_VSTORE CAT(vstore, XW)
/* lane k of vector i[k] of the private array w of vectors (V of T) */
#define X_G1(T, w, i, k) (((const T *)(w))[(i).s##k * XW + 0x##k])
#if XW == 4
#define X_GATHER_T(V, T, w, i) ((V)(X_G1(T, w, i, 0), X_G1(T, w, i, 1), X_G1(T, w, i, 2), X_G1(T, w, i, 3)))
#elif XW == 8
#define X_GATHER_T(V, T, w, i)                                                \
    ((V)(X_G1(T, w, i, 0), X_G1(T, w, i, 1), X_G1(T, w, i, 2), X_G1(T, w, i, 3), \
         X_G1(T, w, i, 4), X_G1(T, w, i, 5), X_G1(T, w, i, 6), X_G1(T, w, i, 7)))
#else
#define X_GATHER_T(V, T, w, i)                                                \
    ((V)(X_G1(T, w, i, 0), X_G1(T, w, i, 1), X_G1(T, w, i, 2), X_G1(T, w, i, 3), \
         X_G1(T, w, i, 4), X_G1(T, w, i, 5), X_G1(T, w, i, 6), X_G1(T, w, i, 7), \
         X_G1(T, w, i, 8), X_G1(T, w, i, 9), X_G1(T, w, i, a), X_G1(T, w, i, b), \
         X_G1(T, w, i, c), X_G1(T, w, i, d), X_G1(T, w, i, e), X_G1(T, w, i, f)))
#endif
/* lane k of vector i of a private array of vectors, per lane */
#define X_GATHER(w, i) X_GATHER_T(RV, REAL, w, i)
#define X_GATHER_A(w, i) X_GATHER_T(AV, ACC, w, i)

/* an index into a private array of QN vectors: in [0, QN) */
#define X_IDX(i) select(select((i), (IV)(QN - 1), (i) > (IV)(QN - 1)), (IV)0, (i) < (IV)0)
#define X_MIN(a, b) select((b), (a), (a) < (b))
#define X_MAX(a, b) select((a), (b), (a) < (b))
/* The quiet NaN numpy and the multi-pass kernels write (0x7ff8... /
 * 0x7fc00000): PoCL's vector (RV)NAN widened a float NaN with a full
 * payload (0x7fffffffe0000000), the same value but other bytes than one
 * process's multi-pass output or a rank's (mpi-tool compares bytes). */
#if REAL_BYTES == 8
#define X_QNAN ((RV)as_double((ulong)0x7ff8000000000000UL))
#else
#define X_QNAN ((RV)as_float(0x7fc00000u))
#endif

/* A row of the block: lanes past the last column read `dflt`. */
RV CAT(x_load, SFX)(__global const REAL *p, uint nl, REAL dflt)
{
    if (nl >= XW) return X_VLOAD(0, p);
    REAL t[XW];
    for (uint k = 0; k < XW; k++) t[k] = k < nl ? p[k] : dflt;
    return X_VLOAD(0, t);
}

/* With nt (a large output, a CPU driver that takes non-temporal stores):
 * a full row of the block that fills a 64-byte line exactly, streamed past
 * the cache (no read for ownership). Never part of a line: a neighbour
 * writes the rest of it much later. */
void CAT(x_store, SFX)(RV v, __global REAL *p, uint nl, int nt)
{
#if CLS_NT && XW * REAL_BYTES == 64
    if (nt && nl >= XW && (ulong)p % 64 == 0) {
        __builtin_nontemporal_store(v, (__global RV *)p);
        return;
    }
#else
    (void)nt;
#endif
    if (nl >= XW) {
        X_VSTORE(v, 0, p);
        return;
    }
    REAL t[XW];
    X_VSTORE(v, 0, t);
    for (uint k = 0; k < nl; k++) p[k] = t[k];
}

/* the same for the accumulator's lanes (ACC: float64 where the device has it) */
void CAT(x_store_a, SFX)(AV v, __global ACC *p, uint nl)
{
    if (nl >= XW) {
        CAT(vstore, XW)(v, 0, p);
        return;
    }
    ACC t[XW];
    CAT(vstore, XW)(v, 0, t);
    for (uint k = 0; k < nl; k++) p[k] = t[k];
}

/* a row of a byte mask: 1 in the lanes of m set (a lane mask, -1 or 0) */
void CAT(x_store_m, SFX)(IV m, __global uchar *p, uint nl)
{
    CAT(uchar, XW) b = CAT(convert_uchar, XW)(m & (IV)1);
    if (nl >= XW) {
        CAT(vstore, XW)(b, 0, p);
        return;
    }
    uchar t[XW];
    CAT(vstore, XW)(b, 0, t);
    for (uint k = 0; k < nl; k++) p[k] = t[k];
}

void CAT(x_store_u, SFX)(UV v, __global uint *p, uint nl)
{
    uint t[XW];
    CAT(vstore, XW)(v, 0, t);
    for (uint k = 0; k < XW && k < nl; k++) p[k] = t[k];
}
#endif
