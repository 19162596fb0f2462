/* Shared by every kernel of clscale. program.c assembles the source as
 *   common.cl and sortnet.cl, then scale.cl, lanes.cl, quantile.cl, sort.cl, clip_sort.cl, clean.cl,
 *   describe.cl, clip.cl, clip_local.cl and lightcurve.cl with
 *   REAL=float, then
 *   the same with REAL=double,
 * and builds one program per kernel and dtype, the first time a call needs
 * it, with -DCLS_KERNEL=<CLS_KID_*> -DCLS_REAL_BYTES=<4|8> -DVEC=<vector
 * width> -DKV=<vectors per work-item at most> -DCLS_FP64=<0|1> -DCLS_NT=<0|1>
 * -DCLS_PREFETCH=<0|1>: a program holds the one kernel, so that a device
 * loads (and, with a cold cache, compiles) only what its calls use.
 *
 * The numbers below mirror src/internal.h (enum cls_kernel_id, CLS_KF_*).
 * The scalers' codes CLS_KS_MINMAX, ... and CLS_KS_IDENT (no scaler: the
 * identity map of imputation alone) come from the scaler table
 * (src/scalers/table.c) as -D options of every build. */

/* clang (PoCL, rusticl, Oclgrind) warns that 8-wide double vectors passed
 * to helper functions change the ABI without AVX-512; PoCL compiles with
 * -Dinline= and prints the count of such warnings on stderr. The ABI is
 * internal to one program: nothing to warn about. NVIDIA's compiler (a
 * clang without that group) warned of the unknown group instead and printed
 * "1 warning generated." on stderr for every build (its build log, read on
 * the H200 machine, 2026-11-26): unknown groups are ignored first. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#pragma clang diagnostic ignored "-Wpsabi"
#endif

#define CLS_KID_FIT_APPLY_MM 0
#define CLS_KID_FIT_APPLY_MV 1
#define CLS_KID_STATS_MM     2
#define CLS_KID_STATS_MV     3
#define CLS_KID_STATS_REDUCE 4
#define CLS_KID_APPLY        5
#define CLS_KID_DISCOUNT     6
#define CLS_KID_COPY         7
#define CLS_KID_QSELECT_SMALL 8
#define CLS_KID_QHIST        9
#define CLS_KID_QHIST_REDUCE 10
#define CLS_KID_CLEAN_MOMENTS 11
#define CLS_KID_CLEAN_APPLY  12
#define CLS_KID_QSORT32      13
#define CLS_KID_QSORT64      14
#define CLS_KID_OUTLIERS     15
#define CLS_KID_ROW_HASH     16
#define CLS_KID_CLIP32       17
#define CLS_KID_CLIP64       18
#define CLS_KID_CLIP32L      19
#define CLS_KID_CLIP64L      20
#define CLS_KID_QSORT32G     21
#define CLS_KID_QSORT64G     22
#define CLS_KID_QSORT128     23
#define CLS_KID_QSORTG       24
#define CLS_KID_CLIPSORT     25
#define CLS_KID_WSORT        26
#define CLS_KID_MOVAVG       27
#define CLS_KID_SAVGOL       28
#define CLS_KID_BIN_SMOOTH   29
#define CLS_KID_BIN_REDUCE   30
#define CLS_KID_SAVGOL3      31
#define CLS_KID_SAVGOL3V     32
#ifndef CLS_KERNEL
#define CLS_KERNEL (-1)
#endif

#define CLS_KF_PARAMS       1u
#define CLS_KF_FACTORS      2u
#define CLS_KF_CLIP         4u
#define CLS_KF_WRITE_PARAMS 8u
#define CLS_KF_NT           16u

/* Filters of the counting kernels (quantile.cl, clean.cl). */
#define CLS_QF_SENTINEL 1u  /* a value equal to `sent` is missing */
#define CLS_QF_ABSDEV   2u  /* count |x - cen[column]| instead of x */
#define CLS_QF_BOUNDS   4u  /* values x outside [flo, fhi] of their column take no part */

/* Statistics planes: one REAL buffer of 5 planes and one uint buffer of 2,
 * each plane `sstride` long, entry (group or chunk) * ncols + column.
 * K is a shift (a value of the column); REL the mean of x - K, so that the
 * mean K + REL keeps the precision of the spread, not of the offset. */
#define ST_K   0
#define ST_REL 1
#define ST_M2  2
#define ST_MIN 3
#define ST_MAX 4
#define CN_COUNT 0
#define CN_MISS  1

/* Params planes: y = ((x - SHI) - SLO) * M + O, four planes `pstride` long. */
#define P_SHI 0
#define P_SLO 1
#define P_M   2
#define P_O   3
#define P_FILL 4  /* imputation (-DCLS_IMPUTE=1): the scaled fill of a missing value */

#ifndef VEC
#define VEC 1
#endif
#ifndef KV
#define KV 1
#endif
#ifndef CLS_NT
#define CLS_NT 0
#endif
#ifndef CLS_IMPUTE
#define CLS_IMPUTE 0  /* 1: the *_imp build of a scale.cl kernel (a sentinel, a fill) */
#endif
#ifndef CLS_PREFETCH
#define CLS_PREFETCH 0
#endif
#define CLS_PF_ROWS 4   /* rows prefetched ahead */
/* The statistics of narrow rows prefetch this far ahead: the hardware
 * prefetcher alone left them slower (docs/PERFORMANCE.md, "Column kernels
 * on CPU devices"). */
#define CLS_PF_BYTES 8192
/* A column block this narrow (bytes of its row segment) takes its min/max
 * in blocks of 16 rows, vector by vector, all of them in L1; a wider one
 * walks its rows once, its vectors' chains independent of each other. */
#define CLS_NARROW_BYTES 256

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if VEC == 1
#define ALL_TRUE(c) (c)
#else
#define ALL_TRUE(c) all(c)
#endif
