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
#undef X_GATHER
#undef X_GATHER_A
#undef X_IDX
#undef X_MIN
#undef X_MAX
#undef X_QNAN

#if CLS_KERNEL == CLS_KID_CLIP32 || CLS_KERNEL == CLS_KID_CLIP64 || CLS_KERNEL == CLS_KID_QSORT32 || \
    CLS_KERNEL == CLS_KID_QSORT64 || CLS_KERNEL == CLS_KID_QSORT128
#if REAL_BYTES == 8
#define XW 4
#define RV double4
#define IV long4
#define IS long
#define UV uint4
#define AV double4
#define AIV long4
#define ACC double
#define TO_UV convert_uint4
#define TO_RV convert_double4
#define TO_IV convert_long4
#define TO_AV convert_double4
#define TO_AIV convert_long4
#define TO_RV_A convert_double4
#define X_VLOAD vload4
#define X_VSTORE vstore4
#define X_GATHER_T(V, T, w, i)                                                \
    ((V)(((const T *)(w))[(i).s0 * 4], ((const T *)(w))[(i).s1 * 4 + 1],         \
         ((const T *)(w))[(i).s2 * 4 + 2], ((const T *)(w))[(i).s3 * 4 + 3]))
#else
#define XW 8
#define RV float8
#define IV int8
#define IS int
#define UV uint8
#define TO_UV convert_uint8
#define TO_RV convert_float8
#define TO_IV convert_int8
#define X_VLOAD vload8
#define X_VSTORE vstore8
#define X_GATHER_T(V, T, w, i)                                                \
    ((V)(((const T *)(w))[(i).s0 * 8], ((const T *)(w))[(i).s1 * 8 + 1],         \
         ((const T *)(w))[(i).s2 * 8 + 2], ((const T *)(w))[(i).s3 * 8 + 3],      \
         ((const T *)(w))[(i).s4 * 8 + 4], ((const T *)(w))[(i).s5 * 8 + 5],      \
         ((const T *)(w))[(i).s6 * 8 + 6], ((const T *)(w))[(i).s7 * 8 + 7]))
#if CLS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define AV double8
#define AIV long8
#define ACC double
#define TO_AV convert_double8
#define TO_AIV convert_long8
#else
#define AV float8
#define AIV int8
#define ACC float
#define TO_AV convert_float8
#define TO_AIV convert_int8
#endif
#define TO_RV_A convert_float8
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

void CAT(x_store, SFX)(RV v, __global REAL *p, uint nl)
{
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

void CAT(x_store_u, SFX)(UV v, __global uint *p, uint nl)
{
    uint t[XW];
    CAT(vstore, XW)(v, 0, t);
    for (uint k = 0; k < XW && k < nl; k++) p[k] = t[k];
}
#endif
