/* The scaling kernels, written once for REAL = float or double (program.c
 * defines REAL and SFX before this text and appends it once per dtype).
 *
 * Geometry shared by all kernels: a slice is a block of `ncols` columns and
 * some rows of a row-major array whose rows are `ld` elements apart.
 * Work-item i owns a column block of up to kk vectors of VEC columns,
 * c = i * VEC * kk (kk <= KV, chosen per launch by the host), and walks its
 * rows with the vectors innermost, so that each row segment it reads is
 * contiguous (VEC * kk elements). On a GPU VEC = KV = 1: one column per
 * work-item, neighbours reading neighbouring addresses. The last block of a
 * row may be short: vector k then holds `lanes` < VEC valid columns, the
 * other lanes NaN, never stored.
 *
 * CLS_PREFETCH (PoCL on a CPU): rows a few ahead are prefetched, because
 * rows far apart defeat the hardware prefetcher. CLS_NT: large outputs are
 * written with non-temporal stores (no read for ownership), in 16-byte
 * pieces because rows are only 16-byte aligned.
 *
 * Loops per work-item stay below a few ten thousand iterations in total
 * (llvmpipe stops longer loops silently; the host bounds rows * kk).
 *
 * Missing values (NaN, +-Inf) are skipped by the statistics and pass through
 * the scaler unchanged; the discount multiplies every value. */

#if VEC == 1
#define REALV REAL
#else
#define REALV CAT(REAL, VEC)
#endif
#define F(name) CAT(name, SFX)
#define RV(x) ((REALV)(x))
#if REAL_BYTES == 8               /* elements per 16-byte piece */
#define NTW 2
#else
#define NTW 4
#endif
#define NTT CAT(REAL, NTW)

/* VEC columns at p, of which only the first n are read (n >= 1). */
inline REALV F(load_cols)(__global const REAL *p, uint n)
{
#if VEC == 1
    return *p;
#else
    if (n >= VEC) return CAT(vload, VEC)(0, p);
    REALV v = RV(NAN);
#define LL(k) if (n > 0x##k) v.s##k = p[0x##k];
    LL(0) LL(1)
#if VEC > 2
    LL(2) LL(3)
#endif
#if VEC > 4
    LL(4) LL(5) LL(6) LL(7)
#endif
#if VEC > 8
    LL(8) LL(9) LL(A) LL(B) LL(C) LL(D) LL(E) LL(F)
#endif
#undef LL
    return v;
#endif
}

/* Imputation (-DCLS_IMPUTE=1 or 2, the *_imp kernels; docs/impute-fused.md):
 * with 2, the data loads see a value equal to the sentinel `sent` as NaN
 * (1: there is none, and no compare), so that the statistics
 * skip it like any missing value; the scaling writes a missing value as the
 * column's scaled fill `sf` (imp != 0) or as it loaded (imp 0: a sentinel
 * alone becomes NaN, +-Inf stay). SENT_P / SENT_A thread `sent` through the
 * helpers; without CLS_IMPUTE they are empty and the kernels unchanged. */
#if CLS_IMPUTE == 2
#define SENT_P , REAL sent
#define SENT_A , sent
#define LOADV(p, n) F(load_miss)((p), (n), sent)
#define IMP_ARGS , REAL sent, uint imp, REAL fillc
#elif CLS_IMPUTE
#define SENT_P
#define SENT_A
#define LOADV(p, n) F(load_cols)((p), (n))
#define IMP_ARGS , REAL sent, uint imp, REAL fillc
#else
#define SENT_P
#define SENT_A
#define LOADV(p, n) F(load_cols)((p), (n))
#define IMP_ARGS
#endif

#if CLS_IMPUTE == 2
inline REALV F(load_miss)(__global const REAL *p, uint n, REAL sent)
{
    REALV v = F(load_cols)(p, n);
    return v == RV(sent) ? RV(NAN) : v;
}
#endif

inline void F(store_cols)(REALV v, __global REAL *p, uint n)
{
#if VEC == 1
    *p = v;
#else
    if (n >= VEC) { CAT(vstore, VEC)(v, 0, p); return; }
#define SL(k) if (n > 0x##k) p[0x##k] = v.s##k;
    SL(0) SL(1)
#if VEC > 2
    SL(2) SL(3)
#endif
#if VEC > 4
    SL(4) SL(5) SL(6) SL(7)
#endif
#if VEC > 8
    SL(8) SL(9) SL(A) SL(B) SL(C) SL(D) SL(E) SL(F)
#endif
#undef SL
#endif
}

/* Non-temporal stores of a full vector at p not 16-byte aligned: at 8
 * (mod 16) an 8-byte piece (movnti), 16-byte pieces, an 8-byte piece; 8
 * floats at 4 or 12 (mod 16) in 4-, 8- and 16-byte pieces. Returns 0
 * where it has no pieces for the address (the caller stores plainly). */
#if CLS_NT && VEC >= 4
#define NT4(x, at) __builtin_nontemporal_store(as_uint(x), (__global uint *)(p + 0x##at));
#define NT8(x, at) __builtin_nontemporal_store(as_ulong(x), (__global ulong *)(p + 0x##at));
inline int F(store_out_odd)(REALV v, __global REAL *p, uint a16)
{
#if REAL_BYTES == 8
#define NT16(a, b) __builtin_nontemporal_store(v.s##a##b, (__global double2 *)(p + 0x##a));
    if (a16 != 8) return 0;
    NT8(v.s0, 0) NT16(1, 2)
#if VEC == 4
    NT8(v.s3, 3)
#elif VEC == 8
    NT16(3, 4) NT16(5, 6) NT8(v.s7, 7)
#else
    NT16(3, 4) NT16(5, 6) NT16(7, 8) NT16(9, A) NT16(B, C) NT16(D, E) NT8(v.sF, F)
#endif
#else
#define NT16(a, b, c, d) __builtin_nontemporal_store(v.s##a##b##c##d, (__global float4 *)(p + 0x##a));
    if (a16 == 8) {
        NT8(v.s01, 0)
#if VEC == 4
        NT8(v.s23, 2)
#elif VEC == 8
        NT16(2, 3, 4, 5) NT8(v.s67, 6)
#else
        NT16(2, 3, 4, 5) NT16(6, 7, 8, 9) NT16(A, B, C, D) NT8(v.sEF, E)
#endif
        return 1;
    }
#if VEC == 8
    /* rows of an odd number of floats */
    if (a16 == 4) {
        NT4(v.s0, 0) NT8(v.s12, 1) NT16(3, 4, 5, 6) NT4(v.s7, 7)
        return 1;
    }
    if (a16 == 12) {
        NT4(v.s0, 0) NT16(1, 2, 3, 4) NT8(v.s56, 5) NT4(v.s7, 7)
        return 1;
    }
#endif
    return 0;
#endif
#undef NT16
    return 1;
}
#undef NT8
#undef NT4
#endif

/* A full vector with non-temporal stores when `nt`, in the widest pieces
 * the address allows (rows of odd lengths are only 16-byte aligned; a row
 * of an odd number of float pairs or of doubles starts every other row 8
 * bytes past 16, one of an odd number of floats at any multiple of 4:
 * store_out_odd), taken straight from the register. */
inline void F(store_out)(REALV v, __global REAL *p, uint n, int nt)
{
#if CLS_NT && VEC >= 4
    if (nt && n >= VEC) {
        ulong a = (ulong)p;
        if (a % 16) {
            if (F(store_out_odd)(v, p, (uint)(a % 16))) return;
            F(store_cols)(v, p, n);
            return;
        }
#if VEC * REAL_BYTES >= 64
        if (a % 64 == 0) {
            __builtin_nontemporal_store(v, (__global REALV *)p);
            return;
        }
#endif
#if VEC * REAL_BYTES >= 32
        if (a % 32 == 0) {
#if REAL_BYTES == 8
#define NT32(a_, b_, c_, d_) __builtin_nontemporal_store(v.s##a_##b_##c_##d_, (__global double4 *)(p + 0x##a_));
            NT32(0, 1, 2, 3)
#if VEC >= 8
            NT32(4, 5, 6, 7)
#endif
#if VEC >= 16
            NT32(8, 9, A, B) NT32(C, D, E, F)
#endif
#undef NT32
#else
#if VEC == 8
            __builtin_nontemporal_store(v, (__global float8 *)p);
#else
            __builtin_nontemporal_store(v.lo, (__global float8 *)p);
            __builtin_nontemporal_store(v.hi, (__global float8 *)(p + 8));
#endif
#endif
            return;
        }
#endif
#if REAL_BYTES == 8
#define NTP(a, b) __builtin_nontemporal_store(v.s##a##b, (__global NTT *)(p + 0x##a));
        NTP(0, 1) NTP(2, 3)
#if VEC >= 8
        NTP(4, 5) NTP(6, 7)
#endif
#if VEC >= 16
        NTP(8, 9) NTP(A, B) NTP(C, D) NTP(E, F)
#endif
#undef NTP
#else
#if VEC == 4
        __builtin_nontemporal_store(v, (__global NTT *)p);
#else
#define NTP(a, b, c, d) __builtin_nontemporal_store(v.s##a##b##c##d, (__global NTT *)(p + 0x##a));
        NTP(0, 1, 2, 3) NTP(4, 5, 6, 7)
#if VEC >= 16
        NTP(8, 9, A, B) NTP(C, D, E, F)
#endif
#undef NTP
#endif
#endif
        return;
    }
#endif
    (void)nt;
    F(store_cols)(v, p, n);
}

/* Counts are small whole numbers kept in REAL lanes; stored as uint. */
inline void F(store_counts)(REALV v, __global uint *p, uint n)
{
#if VEC == 1
    *p = (uint)v;
#else
#define SC(k) if (n > 0x##k) p[0x##k] = (uint)v.s##k;
    SC(0) SC(1)
#if VEC > 2
    SC(2) SC(3)
#endif
#if VEC > 4
    SC(4) SC(5) SC(6) SC(7)
#endif
#if VEC > 8
    SC(8) SC(9) SC(A) SC(B) SC(C) SC(D) SC(E) SC(F)
#endif
#undef SC
#endif
}

/* The row segment at p (nk vectors), a few rows ahead. */
inline void F(prefetch_row)(__global const REAL *p, uint nk)
{
#if CLS_PREFETCH
    for (uint k = 0; k < nk; k++) __builtin_prefetch(p + k * VEC);
#else
    (void)p;
    (void)nk;
#endif
}

/* Factors of VEC columns: contiguous (fsc = 1) or one broadcast value (0). */
inline REALV F(load_factors)(__global const REAL *p, ulong fsc, uint n)
{
    return fsc ? F(load_cols)(p, n) : RV(*p);
}

/* 10^|j| as an unevaluated sum *hi + *lo, |lo| <= ulp(hi) / 2, built with
 * error-free products (fma), so that comparisons with powers of ten are
 * exact in the data's own precision (float32 devices have no fp64); +Inf
 * (lo 0) past the largest REAL. The loop walks towards j instead of taking
 * |j|: Oclgrind cannot run the llvm.abs intrinsic that an absolute value
 * compiles to. */
inline void F(pow10_exact)(int j, REAL *hi, REAL *lo)
{
    REAL h = 1, l = 0;
    int step = j > 0 ? 1 : -1;
    for (int i = 0; i != j; i += step) {
        REAL p = h * (REAL)10;
        if (isinf(p)) { /* the error term would be Inf - Inf */
            h = p;
            l = 0;
            break;
        }
        REAL e = fma(h, (REAL)10, -p) + l * (REAL)10;
        h = p + e;
        l = e - (h - p);
    }
    *hi = h;
    *lo = l;
}

/* a / 10^j rounded once to REAL: the value decimal scaling stores for a. */
inline REAL F(div_pow10)(REAL a, int j)
{
    REAL hi, lo;
    F(pow10_exact)(j, &hi, &lo);
    if (j < 0) {
        REAL p = a * hi;
        return p + (fma(a, hi, -p) + a * lo);
    }
    REAL d = a / hi;
    return d - d * (lo / hi); /* lo = 0 while 10^j is exact */
}

#if REAL_BYTES == 8
#define MAX_10_EXP DBL_MAX_10_EXP
#define EPS_REAL DBL_EPSILON
#else
#define MAX_10_EXP FLT_MAX_10_EXP
#define EPS_REAL FLT_EPSILON
#endif

/* Decimal scaling's factor 10^-j for a column with max |x| = a: j is the
 * smallest integer with a / 10^j, as stored, below 1 (0.01f gives -1:
 * 0.01f * 100 rounds to 1.0f), and at least -MAX_10_EXP, so that 10^-j
 * is finite (a column of subnormal values only is scaled by 10^38 in
 * float, 10^308 in double). Past the largest REAL (a float column above
 * 1e38) 10^-j is subnormal: 1 / 10^(j - 1), then divided by 10. The
 * host's cls_decimal_exponent_in and cls_params_of agree. */
inline REAL F(decimal_m)(REAL a)
{
    if (!(a > (REAL)0) || !isfinite(a)) return (REAL)1;
    int j = (int)floor(log10(a)) + 1;
    if (F(div_pow10)(a, j) >= (REAL)1) j++;
    else if (F(div_pow10)(a, j - 1) < (REAL)1) j--;
    j = max(j, -MAX_10_EXP);
    REAL hi, lo;
    F(pow10_exact)(j, &hi, &lo);
    if (j < 0) return hi;
    if (!isinf(hi)) return (REAL)1 / hi;
    F(pow10_exact)(j - 1, &hi, &lo);
    return (REAL)1 / hi / (REAL)10;
}

/* The same for each lane of a vector. */
inline REALV F(decimal_mv)(REALV a)
{
#if VEC == 1
    return F(decimal_m)(a);
#else
    REAL la[VEC];
    CAT(vstore, VEC)(a, 0, la);
    for (int i = 0; i < VEC; i++) la[i] = F(decimal_m)(la[i]);
    return CAT(vload, VEC)(0, la);
#endif
}

/* z-score's low part of the shift: the mean's rounding error in float
 * (params.c splits float32 shifts in two), none in double. */
#if REAL_BYTES == 8
#define ZS_LOW(e) 0
#else
#define ZS_LOW(e) (e)
#endif

/* The scaler's params from the statistics, for T = REAL or REALV lanes
 * (DECM: decimal_m or decimal_mv to match). */
#define MAKE_PARAMS(T, DECM, scaler, n, K, rel, m2, mn, mx, lo, hi, shi, slo, m, o) \
    do {                                                                      \
        if ((scaler) == CLS_KS_MINMAX) {                                      \
            T range_ = (mx) - (mn);                                           \
            shi = (mn); slo = (T)(0);                                         \
            m = range_ > (T)(0) ? ((T)(hi) - (T)(lo)) / range_ : (T)(0);      \
            o = (T)(lo);                                                      \
        } else if ((scaler) == CLS_KS_ZSCORE) {                               \
            /* the host's params (src/scalers/zscore.c) bit for bit, so that  \
             * a fused fit_transform equals fit then transform: the mean     \
             * K + rel rounded, and in float its rounding error (TwoSum, the \
             * low part the host splits off). An infinite sum of squares      \
             * (float values past ~1e19) leaves the column as it is; a std    \
             * of 0 in a column that is not constant (float squares below     \
             * FLT_MIN) only centres it: both keep the values, which the      \
             * Python layer takes back to redo their moments in float64 */    \
            T mu_ = (K) + (rel);                                              \
            T bb_ = mu_ - (K);                                                \
            T lo_ = (T)(ZS_LOW(((K) - (mu_ - bb_)) + ((rel) - bb_)));         \
            T sd_ = sqrt((m2) / fmax((n), (T)(1)));                           \
            shi = (m2) < (T)(INFINITY) ? mu_ : (T)(0);                        \
            slo = (m2) < (T)(INFINITY) ? lo_ : (T)(0);                        \
            m = (m2) < (T)(INFINITY)                                          \
                    ? (sd_ > (T)(0) ? (T)(1) / sd_ : ((mx) > (mn) ? (T)(1) : (T)(0))) \
                    : (T)(1);                                                 \
            o = (T)(0);                                                       \
        } else if ((scaler) == CLS_KS_IDENT) {                                \
            /* + -0.0 keeps every value's bits, -0.0 too */                   \
            shi = (T)(0); slo = (T)(0); m = (T)(1); o = (T)(-0.0);            \
        } else if ((scaler) == CLS_KS_MAXABS) {                               \
            T a_ = fmax(fabs(mn), fabs(mx));                                  \
            shi = (T)(0); slo = (T)(0);                                       \
            m = a_ >= (T)(10 * EPS_REAL) ? (T)(1) / a_ : (T)(1);              \
            o = (T)(0);                                                       \
        } else {                                                              \
            shi = (T)(0); slo = (T)(0);                                       \
            m = DECM(fmax(fabs(mn), fabs(mx)));                               \
            o = (T)(0);                                                       \
        }                                                                     \
    } while (0)

/* The scaler on values known to be finite. */
inline REALV F(scale_finite)(REALV v, REALV shi, REALV slo, REALV m, REALV o, uint flags,
                             REAL lo, REAL hi)
{
    REALV t = ((v - shi) - slo) * m + o;
    return (flags & CLS_KF_CLIP) ? clamp(t, lo, hi) : t;
}

inline REALV F(scale)(REALV v, REALV shi, REALV slo, REALV m, REALV o, uint flags,
                      REAL lo, REAL hi)
{
    REALV t = ((v - shi) - slo) * m + o;
    if (flags & CLS_KF_CLIP) t = clamp(t, lo, hi);
    return isfinite(v) ? t : v;
}

#if CLS_IMPUTE
/* F(scale), a missing value written as the scaled fill sf (imp != 0). */
inline REALV F(scale_imp)(REALV v, REALV shi, REALV slo, REALV m, REALV o, uint flags,
                          REAL lo, REAL hi, REALV sf, uint imp)
{
    REALV t = ((v - shi) - slo) * m + o;
    if (flags & CLS_KF_CLIP) t = clamp(t, lo, hi);
#if CLS_IMPUTE == 1
    /* a fill always (slice_compute.c's kid_of sends a sentinel alone to
     * the other build): one select a value */
    (void)imp;
    return isfinite(v) ? t : sf;
#else
    return isfinite(v) ? t : (imp ? sf : v);
#endif
}

/* The statistics of the imputed column from those of the values kept
 * (cnt of them, miss missing): miss copies of the fill merged by Chan's
 * formulas (their mean the fill, their m2 0), the fill being the mean of
 * the values kept rounded to REAL (imp 1; NaN when none is kept: nothing
 * is added) or fillc (imp 2). With the mean, d_ is only the fill's
 * rounding: count grows, mean and m2 stay but for it, as scikit-learn's
 * imputed float32 column has them. The fill goes to `fill`. */
#define IMPUTE_STATS(T, imp, fillc, cnt, miss, K, rel, m2, mn, mx, fill)           \
    do {                                                                      \
        fill = (imp) == 1 ? ((cnt) > (T)(0) ? (K) + (rel) : (T)(NAN))         \
                          : (imp) == 2 ? (T)(fillc) : (T)(NAN);               \
        if (imp) {                                                            \
            T k_ = isfinite(fill) ? (miss) : (T)(0);                          \
            T n_ = (cnt) + k_;                                                \
            T w_ = k_ / fmax(n_, (T)(1));                                     \
            T d_ = k_ > (T)(0) ? ((fill) - (K)) - (rel) : (T)(0);             \
            rel += d_ * w_;                                                   \
            m2 += d_ * d_ * (cnt) * w_;                                       \
            mn = k_ > (T)(0) ? fmin(mn, fill) : (mn);                         \
            mx = k_ > (T)(0) ? fmax(mx, fill) : (mx);                         \
            cnt = n_;                                                         \
        }                                                                     \
    } while (0)

/* The scaled fill (NaN stays NaN: clamp would make it lo). */
#define SCALED_FILL(T, fill, shi, slo, m, o, flags, lo, hi, sf)                     \
    do {                                                                      \
        T t_ = (((fill) - (shi)) - (slo)) * (m) + (o);                        \
        if ((flags) & CLS_KF_CLIP) t_ = clamp(t_, (T)(lo), (T)(hi));          \
        sf = isfinite(fill) ? t_ : (T)(NAN);                                  \
    } while (0)
#endif

/* The pieces of the kernels below that imputation changes (empty, or the
 * plain scaler, without CLS_IMPUTE). */
#if CLS_IMPUTE
#define IMP_DECL REALV sf[KV], fl_
#define IMP_STATS(k) IMPUTE_STATS(REALV, imp, fillc, cnt[k], miss[k], K[k], rel[k], m2[k], mn[k], mx[k], fl_)
#define IMP_FILL(k) SCALED_FILL(REALV, fl_, shi[k], slo[k], m[k], o[k], flags, lo, hi, sf[k])
#define SCALE_MISS(v, k) F(scale_imp)(v, shi[k], slo[k], m[k], o[k], flags, lo, hi, sf[k], imp)
#else
#define IMP_DECL (void)0
#define IMP_STATS(k) (void)0
#define IMP_FILL(k) (void)0
#define SCALE_MISS(v, k) F(scale)(v, shi[k], slo[k], m[k], o[k], flags, lo, hi)
#endif

/* Lanes of vector k of a block starting at column c. */
#define LANES(k) min((uint)VEC, ncols - c - (k) * VEC)

/* The block of work-item i: first column c, vectors nk; returns early when
 * the work-item has no columns. */
#define BLOCK()                                                               \
    uint c = (uint)get_global_id(0) * VEC * kk;                               \
    if (c >= ncols) return;                                                   \
    uint nk = min(kk, (ncols - c + VEC - 1) / VEC)

/* First finite value of each column, 0 where a column has none: the shift K
 * that keeps Welford's mean accurate when the mean is far from zero. */
inline REALV F(first_finite)(__global const REAL *p, ulong ld, uint rows, uint n SENT_P)
{
    REALV K = RV(0), found = RV(0);
    for (uint r = 0; r < rows; r++) {
        REALV v = LOADV(p + r * ld, n);
        K = (found == RV(0) && isfinite(v)) ? v : K;
        found = isfinite(v) ? RV(1) : found;
        if (ALL_TRUE(found != RV(0))) break;
    }
    return K;
}

/* Writes one entry of the statistics planes. */
inline void F(store_stats)(__global REAL *st, __global uint *cn, ulong sstride, ulong idx,
                           uint n, REALV cnt, REALV miss, REALV K, REALV rel, REALV m2,
                           REALV mn, REALV mx)
{
    F(store_cols)(K, st + ST_K * sstride + idx, n);
    F(store_cols)(rel, st + ST_REL * sstride + idx, n);
    F(store_cols)(m2, st + ST_M2 * sstride + idx, n);
    F(store_cols)(mn, st + ST_MIN * sstride + idx, n);
    F(store_cols)(mx, st + ST_MAX * sstride + idx, n);
    F(store_counts)(cnt, cn + CN_COUNT * sstride + idx, n);
    F(store_counts)(miss, cn + CN_MISS * sstride + idx, n);
}

/* The same without the moments' planes (K, REL, M2), which min/max
 * statistics leave undefined: nobody reads them (stats_reduce and the host
 * take them only with moments). */
inline void F(store_extremes)(__global REAL *st, __global uint *cn, ulong sstride, ulong idx, uint n,
                              REALV cnt, REALV miss, REALV mn, REALV mx)
{
    F(store_cols)(mn, st + ST_MIN * sstride + idx, n);
    F(store_cols)(mx, st + ST_MAX * sstride + idx, n);
    F(store_counts)(cnt, cn + CN_COUNT * sstride + idx, n);
    F(store_counts)(miss, cn + CN_MISS * sstride + idx, n);
}

#define MINMAX(v, mn, mx, miss)                                              \
    do {                                                                     \
        miss += isfinite(v) ? RV(0) : RV(1);                                 \
        mn = isfinite(v) ? fmin(mn, (v)) : mn;                               \
        mx = isfinite(v) ? fmax(mx, (v)) : mx;                               \
    } while (0)

#define CLS_MOMENT_BLOCK 16  /* rows whose mean and m2 are taken two-pass */
#define UNROLL _Pragma("unroll")
#define NO_UNROLL

/* One vector's rows [r0, r1) merged into its running statistics, assuming
 * every value is finite, and checking it afterwards: a NaN or an infinity
 * makes the block's sum non-finite (so does an overflow, rarely), and then
 * nothing is merged and 0 is returned, for the careful path to redo the
 * block. Without the per-value tests, and with two accumulators per
 * quantity, the loops are short dependency chains: a narrow column block
 * (one vector per row) runs at memory speed instead of on the latency of
 * its min/max/sum chains. A whole block of full vectors takes a copy of the
 * loops with constant trip counts and loads, unrolled, that walks a pointer:
 * the general loops spend more instructions on the row address and the lane
 * count than on the statistics. */
/* The first pass over rows [0, NR) of one vector, shared by the clean
 * blocks: min and max, and the sum of v - SHIFT(v) (the moments' shift K,
 * or v itself: 0 for a finite value, NaN otherwise), each in two
 * accumulators. Declares q, i, s0/s1, lo0/lo1, hi0/hi1. */
#define CLEAN_PASS1(LOAD, NR, UNR, SHIFT)                                           \
    REALV s0 = RV(0), s1 = RV(0);                                                   \
    REALV lo0 = RV(INFINITY), lo1 = RV(INFINITY);                                   \
    REALV hi0 = RV(-INFINITY), hi1 = RV(-INFINITY);                                 \
    __global const REAL *q = p;                                                     \
    uint i = 0;                                                                     \
    UNR for (; i + 1 < (NR); i += 2, q += 2 * ld) {                                \
        REALV a = LOAD(q), b = LOAD(q + ld);                                        \
        PREFETCH_AHEAD(q);                                                          \
        s0 += a - SHIFT(a);                                                         \
        s1 += b - SHIFT(b);                                                         \
        lo0 = a < lo0 ? a : lo0;                                                    \
        lo1 = b < lo1 ? b : lo1;                                                    \
        hi0 = a > hi0 ? a : hi0;                                                    \
        hi1 = b > hi1 ? b : hi1;                                                    \
    }                                                                               \
    if (i < (NR)) {                                                                 \
        REALV a = LOAD(q);                                                          \
        s0 += a - SHIFT(a);                                                         \
        lo0 = a < lo0 ? a : lo0;                                                    \
        hi0 = a > hi0 ? a : hi0;                                                    \
    }
#define SHIFT_K(v) K
#define SHIFT_SELF(v) (v)

#define CLEAN_BLOCK_BODY(LOAD, NR, UNR)                                             \
    do {                                                                            \
        CLEAN_PASS1(LOAD, NR, UNR, SHIFT_K)                                         \
        REALV sum = s0 + s1;                                                        \
        if (!F(all_finite)(sum, n)) return 0;                                       \
        REAL nb = (REAL)(NR);                                                       \
        REALV mb = sum / nb;                                                        \
        REALV q0 = RV(0), q1 = RV(0);                                               \
        q = p;                                                                      \
        i = 0;                                                                      \
        UNR for (; i + 1 < (NR); i += 2, q += 2 * ld) {                            \
            REALV a = (LOAD(q) - K) - mb, b = (LOAD(q + ld) - K) - mb;              \
            q0 += a * a;                                                            \
            q1 += b * b;                                                            \
        }                                                                           \
        if (i < (NR)) {                                                             \
            REALV a = (LOAD(q) - K) - mb;                                           \
            q0 += a * a;                                                            \
        }                                                                           \
        REALV N = *cnt + nb;                                                        \
        REALV delta = mb - *rel;                                                    \
        REALV w = nb / N;                                                           \
        *rel += delta * w;                                                          \
        *m2 += (q0 + q1) + delta * delta * *cnt * w;                                \
        *cnt = N;                                                                   \
        REALV lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1;              \
        *mn = lo < *mn ? lo : *mn;                                                  \
        *mx = hi > *mx ? hi : *mx;                                                  \
        return 1;                                                                   \
    } while (0)

/* Whether the first n lanes of v are finite (lanes past n hold NaN). */
inline int F(all_finite)(REALV v, uint n)
{
#if VEC == 1
    (void)n;
    return isfinite(v);
#else
    if (n >= VEC) return ALL_TRUE(isfinite(v));
    REAL ls[VEC];
    CAT(vstore, VEC)(v, 0, ls);
    for (uint i = 0; i < n; i++)
        if (!isfinite(ls[i])) return 0;
    return 1;
#endif
}

#define LOAD_N(q) LOADV(q, n)
#if CLS_PREFETCH
#define PREFETCH_AHEAD(q)                                                           \
    do {                                                                            \
        __builtin_prefetch((q) + pfd * ld);                                         \
        __builtin_prefetch((q) + (pfd + 1) * ld);                                   \
    } while (0)
#else
#define PREFETCH_AHEAD(q) (void)pfd
#endif
#define LOAD_FULL(q) LOADV(q, VEC)

/* pfd: rows to prefetch ahead (PoCL on a CPU; see CLS_PF_BYTES). */
inline int F(clean_block)(__global const REAL *p, ulong ld, ulong pfd, uint r0, uint r1, uint n,
                          REALV K, REALV *cnt, REALV *rel, REALV *m2, REALV *mn, REALV *mx SENT_P)
{
    p += r0 * ld;
    if (n >= VEC && r1 - r0 == CLS_MOMENT_BLOCK)
        CLEAN_BLOCK_BODY(LOAD_FULL, CLS_MOMENT_BLOCK, UNROLL);
    CLEAN_BLOCK_BODY(LOAD_N, r1 - r0, NO_UNROLL);
}

/* The min/max-only counterpart of CLEAN_BLOCK_BODY: rows [0, NR) of one
 * vector, two accumulators each, no per-value test; the sum of a - a is 0
 * for finite values and NaN otherwise, so a block holding a NaN or an
 * infinity returns 0 (nothing merged) for the careful path to redo. Without it, a
 * narrow block ran on the latency of its min/max chain, slower than the
 * z-score's more work (docs/PERFORMANCE.md, "Statistics"). */
/* Imputing builds: the min/max statistics also sum x - K, for a mean fill
 * without the moments' second pass (the block's test for a value that is
 * not finite comes with that sum: the same count of operations). */
#if CLS_IMPUTE
#define MM_SHIFT SHIFT_K
#define MM_SUM_P , REALV K, REALV *sum
#define MM_SUM_A(k) , K[k], &msum[k]
#define MM_SUM_STORE *sum += s0 + s1
#define MM_SUM_DECL REALV msum[KV]
#define MM_SUM_INIT(k) msum[k] = RV(0)
/* The careful loop's value (a block holding a missing value): a missing
 * value counted, then taken as K, the column's first finite value, which
 * changes neither its min nor its max and adds 0 to the sum: one select
 * shared by the three instead of one each. A column with no finite value
 * (K 0) gets its empty extremes back in MM_SUM_END. */
#define MM_CAREFUL(k, v)                                                      \
    do {                                                                      \
        REALV f_ = isfinite(v) ? (v) : K[k];                                  \
        miss[k] += isfinite(v) ? RV(0) : RV(1);                               \
        mn[k] = fmin(mn[k], f_);                                              \
        mx[k] = fmax(mx[k], f_);                                              \
        msum[k] += f_ - K[k];                                                 \
    } while (0)
#define MM_SUM_END(k)                                                         \
    do {                                                                      \
        rel[k] = msum[k] / fmax(cnt[k], RV(1));                               \
        mn[k] = cnt[k] > RV(0) ? mn[k] : RV(INFINITY);                        \
        mx[k] = cnt[k] > RV(0) ? mx[k] : RV(-INFINITY);                       \
    } while (0)
#else
#define MM_SHIFT SHIFT_SELF
#define MM_SUM_P
#define MM_SUM_A(k)
#define MM_SUM_STORE (void)0
#define MM_SUM_DECL (void)0
#define MM_SUM_INIT(k) (void)0
#define MM_CAREFUL(k, v) MINMAX(v, mn[k], mx[k], miss[k])
#define MM_SUM_END(k) (void)0
#endif

#define CLEAN_MINMAX_BODY(LOAD, NR, UNR)                                            \
    do {                                                                            \
        CLEAN_PASS1(LOAD, NR, UNR, MM_SHIFT)                                        \
        if (!F(all_finite)(s0 + s1, n)) return 0;                                   \
        MM_SUM_STORE;                                                               \
        REALV lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1;              \
        *mn = lo < *mn ? lo : *mn;                                                  \
        *mx = hi > *mx ? hi : *mx;                                                  \
        return 1;                                                                   \
    } while (0)

inline int F(clean_minmax)(__global const REAL *p, ulong ld, ulong pfd, uint r0, uint r1, uint n, REALV *mn,
                           REALV *mx SENT_P MM_SUM_P)
{
    p += r0 * ld;
    if (n >= VEC && r1 - r0 == CLS_MOMENT_BLOCK)
        CLEAN_MINMAX_BODY(LOAD_FULL, CLS_MOMENT_BLOCK, UNROLL);
    CLEAN_MINMAX_BODY(LOAD_N, r1 - r0, NO_UNROLL);
}

/* Statistics of `rows` rows of the block at px into the lane arrays.
 * Min/max (and the missing count) always; with `moments` also the count,
 * mean and m2 of x - K (K, the first finite value, keeps the mean's
 * precision when it is far from zero): Chan's method over blocks of
 * CLS_MOMENT_BLOCK rows, each block's mean and m2 computed two-pass while it
 * is in L1. A block costs two divisions per lane, not one per value, and
 * its sums carry no long dependency chain.
 * NK vectors, vector k with LN(k) lanes: a full block passes compile-time
 * constants (KV, VEC, UNROLL) so that the compiler unrolls the vector loop
 * and keeps the lane arrays in registers. */
#define BLOCK_STATS(px, rows, moments, NK, LN, UNR)                               \
    do {                                                                          \
        for (uint k = 0; k < (NK); k++) {                                         \
            cnt[k] = miss[k] = rel[k] = m2[k] = RV(0);                            \
            mn[k] = RV(INFINITY);                                                 \
            mx[k] = RV(-INFINITY);                                                \
            K[k] = (moments) || CLS_IMPUTE ? F(first_finite)(px + k * VEC, ld, rows, LN(k) SENT_A) : RV(0); \
        }                                                                         \
        ulong pfd = max((ulong)CLS_PF_ROWS, CLS_PF_BYTES / (ld * sizeof(REAL)));         \
        if (!(moments)) {                                                         \
            MM_SUM_DECL;                                                          \
            for (uint k = 0; k < (NK); k++) MM_SUM_INIT(k);                       \
            if ((NK) * VEC * sizeof(REAL) <= CLS_NARROW_BYTES) {                  \
                for (uint r0 = 0; r0 < rows; r0 += CLS_MOMENT_BLOCK) {            \
                    uint r1 = min(rows, r0 + CLS_MOMENT_BLOCK);                   \
                    for (uint k = 0; k < (NK); k++) {                             \
                        if (F(clean_minmax)(px + k * VEC, ld, pfd, r0, r1, LN(k), &mn[k], &mx[k] SENT_A MM_SUM_A(k))) \
                            continue;                                             \
                        for (uint r = r0; r < r1; r++) {                          \
                            REALV v = LOADV(px + r * ld + k * VEC, LN(k));    \
                            MM_CAREFUL(k, v);                                     \
                        }                                                         \
                    }                                                             \
                }                                                                 \
            } else {                                                              \
                for (uint r = 0; r < rows; r++) {                                 \
                    if (r + CLS_PF_ROWS < rows) F(prefetch_row)(px + (r + CLS_PF_ROWS) * ld, (NK)); \
                    UNR for (uint k = 0; k < (NK); k++) {                         \
                        REALV v = LOADV(px + r * ld + k * VEC, LN(k));         \
                        MM_CAREFUL(k, v);                                         \
                    }                                                             \
                }                                                                 \
            }                                                                     \
            for (uint k = 0; k < (NK); k++) {                                     \
                cnt[k] = RV((REAL)rows) - miss[k];                                \
                MM_SUM_END(k);                                                    \
            }                                                                     \
        } else {                                                                  \
            for (uint r0 = 0; r0 < rows; r0 += CLS_MOMENT_BLOCK) {                \
                uint r1 = min(rows, r0 + CLS_MOMENT_BLOCK);                       \
                for (uint k = 0; k < (NK); k++) {                                 \
                    if (F(clean_block)(px + k * VEC, ld, pfd, r0, r1, LN(k), K[k], &cnt[k], \
                                       &rel[k], &m2[k], &mn[k], &mx[k] SENT_A))    \
                        continue;                                                 \
                    REALV cb = RV(0), sum = RV(0), q = RV(0);                     \
                    for (uint r = r0; r < r1; r++) {                              \
                        REALV v = LOADV(px + r * ld + k * VEC, LN(k));         \
                        cb += isfinite(v) ? RV(1) : RV(0);                        \
                        sum += isfinite(v) ? v - K[k] : RV(0);                    \
                        MINMAX(v, mn[k], mx[k], miss[k]);                         \
                    }                                                             \
                    REALV mb = sum / fmax(cb, RV(1));                             \
                    for (uint r = r0; r < r1; r++) {                              \
                        REALV v = LOADV(px + r * ld + k * VEC, LN(k));         \
                        REALV d = (v - K[k]) - mb;                                \
                        q += isfinite(v) ? d * d : RV(0);                         \
                    }                                                             \
                    REALV N = cnt[k] + cb;                                        \
                    REALV delta = mb - rel[k];                                    \
                    REALV w = cb / fmax(N, RV(1));                                \
                    rel[k] += delta * w;                                          \
                    m2[k] += q + delta * delta * cnt[k] * w;                      \
                    cnt[k] = N;                                                   \
                }                                                                 \
            }                                                                     \
        }                                                                         \
    } while (0)

#define FULL_LANES(k) ((uint)VEC)

/* Whether the block is full: kk == KV vectors, all of VEC lanes. */
#define FULL_BLOCK() (kk == KV && ncols - c >= VEC * KV)

/* Fused statistics and scaling: one work-item reads its column block of a
 * whole statistics group twice (the second time from cache), computing the
 * statistics (Welford when `moments`, else min/max), then writing the
 * scaled values. Dimension 1 is the group within the slice. Row r of group
 * g is global row frow0 + g * rows + r, which picks its factors. `st`/`cn`
 * may be NULL (nobody wants the statistics). */
#define FIT_APPLY_BODY(moments, NK, LN, UNR)                                          \
    do {                                                                              \
        REALV cnt[KV], miss[KV], K[KV], rel[KV], m2[KV], mn[KV], mx[KV];              \
        BLOCK_STATS(px, rows, moments, NK, LN, UNR);                                  \
        REALV shi[KV], slo[KV], m[KV], o[KV];                                         \
        IMP_DECL;                                                                     \
        for (uint k = 0; k < (NK); k++) {                                             \
            if (st && (moments))                                                      \
                F(store_stats)(st, cn, sstride, g * ncols + c + k * VEC, LN(k), cnt[k], \
                               miss[k], K[k], rel[k], m2[k], mn[k], mx[k]);           \
            else if (st) /* min/max: nobody reads the moments' planes */              \
                F(store_extremes)(st, cn, sstride, g * ncols + c + k * VEC, LN(k), cnt[k], \
                                  miss[k], mn[k], mx[k]);                             \
            IMP_STATS(k);                                                             \
            MAKE_PARAMS(REALV, F(decimal_mv), scaler, cnt[k], K[k], rel[k], m2[k], mn[k], mx[k], \
                    lo, hi, shi[k], slo[k], m[k], o[k]);                              \
            IMP_FILL(k);                                                              \
        }                                                                             \
        /* without missing values the scaling needs no per-value test */          \
        int clean = 1;                                                                \
        for (uint k = 0; k < (NK); k++) clean &= ALL_TRUE(miss[k] == RV(0));          \
        ulong gr_ = frow0 + g * (ulong)rows;                                          \
        ulong b_ = gr_ / R, rr_ = gr_ % R;                                            \
        for (uint r = 0; r < rows; r++) {                                             \
            /* this block is in cache now: fetch the next work-item's rows */         \
            F(prefetch_row)(px + r * ld + VEC * (NK), (NK));                          \
            __global const REAL *fr = f + foff + (long)(b_ * fsb + rr_ * fsr + (col0 + c) * fsc); \
            UNR for (uint k = 0; k < (NK); k++) {                                     \
                REALV v = LOADV(px + r * ld + k * VEC, LN(k));                        \
                REALV out = clean ? F(scale_finite)(v, shi[k], slo[k], m[k], o[k], flags, lo, hi) \
                                  : SCALE_MISS(v, k);                                 \
                if (flags & CLS_KF_FACTORS)                                           \
                    out *= F(load_factors)(fr + k * VEC * fsc, fsc, LN(k));           \
                F(store_out)(out, py + r * ld + k * VEC, LN(k), nt);                  \
            }                                                                         \
            if (++rr_ == R) { rr_ = 0; b_++; }                                        \
        }                                                                             \
    } while (0)

#define FIT_APPLY(moments)                                                            \
    BLOCK();                                                                          \
    ulong g = get_global_id(1);                                                       \
    __global const REAL *px = x + xoff + g * gstride + c;                             \
    __global REAL *py = y + yoff + g * gstride + c;                                   \
    int nt = (flags & CLS_KF_NT) && ((ulong)py % sizeof(REAL)) == 0;                   \
    if (FULL_BLOCK()) FIT_APPLY_BODY(moments, KV, FULL_LANES, UNROLL);                \
    else FIT_APPLY_BODY(moments, nk, LANES, NO_UNROLL);

#define FIT_APPLY_ARGS                                                                        \
    __global const REAL *x, ulong xoff, __global REAL *y, ulong yoff, uint ncols, uint rows, \
    ulong ld, ulong gstride, uint kk, uint scaler, uint flags, REAL lo, REAL hi,             \
    __global const REAL *f, long foff, ulong fsb, ulong fsr, ulong fsc, ulong frow0,         \
    ulong R, ulong col0, __global REAL *st, __global uint *cn, ulong sstride IMP_ARGS

/* min-max or decimal: min/max statistics */
#if CLS_KERNEL == CLS_KID_FIT_APPLY_MM
__kernel void F(fit_apply_mm)(FIT_APPLY_ARGS)
{
    FIT_APPLY(0)
}
#endif


/* z-score: Welford on x - K per lane */
#if CLS_KERNEL == CLS_KID_FIT_APPLY_MV
__kernel void F(fit_apply_mv)(FIT_APPLY_ARGS)
{
    FIT_APPLY(1)
}
#endif


/* Partial statistics of row chunks: work-item (i, j) covers rows
 * [j * chunk, (j + 1) * chunk) of its block and writes entry j * ncols + c. */
#define STATS_ARGS                                                                       \
    __global const REAL *x, ulong xoff, uint ncols, ulong nrows, ulong ld, uint chunk,  \
    uint kk, __global REAL *st, __global uint *cn, ulong sstride IMP_ARGS

#define STATS(moments)                                                                   \
    BLOCK();                                                                             \
    ulong j = get_global_id(1);                                                          \
    ulong r0 = j * chunk;                                                                \
    uint rows = (uint)min((ulong)chunk, nrows - r0);                                     \
    __global const REAL *px = x + xoff + r0 * ld + c;                                    \
    REALV cnt[KV], miss[KV], K[KV], rel[KV], m2[KV], mn[KV], mx[KV];                     \
    if (FULL_BLOCK()) BLOCK_STATS(px, rows, moments, KV, FULL_LANES, UNROLL);           \
    else BLOCK_STATS(px, rows, moments, nk, LANES, NO_UNROLL);                           \
    for (uint k = 0; k < nk; k++) {                                                      \
        if (moments)                                                                     \
            F(store_stats)(st, cn, sstride, j * ncols + c + k * VEC, LANES(k), cnt[k], miss[k], \
                           K[k], rel[k], m2[k], mn[k], mx[k]);                            \
        else                                                                             \
            F(store_extremes)(st, cn, sstride, j * ncols + c + k * VEC, LANES(k), cnt[k], miss[k], \
                              mn[k], mx[k]);                                             \
    }

#if CLS_KERNEL == CLS_KID_STATS_MM
__kernel void F(stats_mm)(STATS_ARGS)
{
    STATS(0)
}
#endif


#if CLS_KERNEL == CLS_KID_STATS_MV
__kernel void F(stats_mv)(STATS_ARGS)
{
    STATS(1)
}
#endif


/* Merges `nchunks` partial entries per column (Chan's formula, moving each
 * chunk's mean to the first chunk's shift K) into entry `out_base + c` of
 * the output planes; with CLS_KF_WRITE_PARAMS also writes the scaler's
 * params for the column. One work-item per column. */
#if CLS_KERNEL == CLS_KID_STATS_REDUCE
__kernel void F(stats_reduce)(__global const REAL *st, __global const uint *cn, ulong sstride,
                              uint nchunks, uint ncols, uint moments,
                              __global REAL *sto, __global uint *cno, ulong osstride,
                              ulong out_base, uint flags, uint scaler, REAL lo, REAL hi,
                              __global REAL *prm, ulong pstride IMP_ARGS)
{
    uint c = (uint)get_global_id(0);
    if (c >= ncols) return;
    REAL cnt = 0, K = 0, rel = 0, m2 = 0, mn = INFINITY, mx = -INFINITY;
    uint miss = 0, total = 0;
    for (uint k = 0; k < nchunks; k++) {
        ulong i = (ulong)k * ncols + c;
        uint nb = cn[CN_COUNT * sstride + i];
        miss += cn[CN_MISS * sstride + i];
        if (nb == 0) continue;
        mn = fmin(mn, st[ST_MIN * sstride + i]);
        mx = fmax(mx, st[ST_MAX * sstride + i]);
        if (moments) {
            REAL Kb = st[ST_K * sstride + i], relb = st[ST_REL * sstride + i];
            REAL m2b = st[ST_M2 * sstride + i];
            if (total == 0) {
                K = Kb; rel = relb; m2 = m2b;
            } else {
                REAL na = (REAL)total, nbr = (REAL)nb, N = na + nbr;
                REAL delta = (relb + (Kb - K)) - rel;
                rel += delta * (nbr / N);
                m2 += m2b + delta * delta * (na * nbr / N);
            }
        }
        total += nb;
    }
    cnt = (REAL)total;
    ulong o_i = out_base + c;
    sto[ST_K * osstride + o_i] = K;
    sto[ST_REL * osstride + o_i] = rel;
    sto[ST_M2 * osstride + o_i] = m2;
    sto[ST_MIN * osstride + o_i] = mn;
    sto[ST_MAX * osstride + o_i] = mx;
    cno[CN_COUNT * osstride + o_i] = total;
    cno[CN_MISS * osstride + o_i] = miss;
    if (flags & CLS_KF_WRITE_PARAMS) {
        REAL shi, slo, m, o;
#if CLS_IMPUTE
        REAL fl, sf, rmiss = (REAL)miss;
        IMPUTE_STATS(REAL, imp, fillc, cnt, rmiss, K, rel, m2, mn, mx, fl);
#endif
        MAKE_PARAMS(REAL, F(decimal_m), scaler, cnt, K, rel, m2, mn, mx, lo, hi, shi, slo, m, o);
#if CLS_IMPUTE
        SCALED_FILL(REAL, fl, shi, slo, m, o, flags, lo, hi, sf);
        prm[P_FILL * pstride + c] = sf;
#endif
        prm[P_SHI * pstride + c] = shi;
        prm[P_SLO * pstride + c] = slo;
        prm[P_M * pstride + c] = m;
        prm[P_O * pstride + c] = o;
    }
}
#endif


/* Params of the block's vectors for statistics group `grp`. */
#define LOAD_PARAMS(NK, LN)                                                           \
    do {                                                                              \
        ulong pi = (grp - g0) * pld + pcol0 + c;                                      \
        for (uint k = 0; k < (NK); k++) {                                             \
            shi[k] = F(load_cols)(prm + P_SHI * pstride + pi + k * VEC, LN(k));       \
            slo[k] = F(load_cols)(prm + P_SLO * pstride + pi + k * VEC, LN(k));       \
            m[k] = F(load_cols)(prm + P_M * pstride + pi + k * VEC, LN(k));           \
            o[k] = F(load_cols)(prm + P_O * pstride + pi + k * VEC, LN(k));           \
            LOAD_FILL(sf[k], pi + k * VEC, LN(k));                                    \
        }                                                                             \
    } while (0)

#define APPLY_BODY(NK, LN)                                                            \
    do {                                                                              \
        ulong gr = grow0 + r0;                                                        \
        ulong grp = gr / Rg, grp_row = gr % Rg;                                       \
        ulong b = gr / R, rr = gr % R;                                                \
        REALV shi[KV], slo[KV], m[KV], o[KV];                                         \
        IMP_DECL;                                                                     \
        if (flags & CLS_KF_PARAMS) LOAD_PARAMS(NK, LN);                               \
        for (uint r = 0; r < rows; r++) {                                             \
            if (r + CLS_PF_ROWS < rows) F(prefetch_row)(px + (r + CLS_PF_ROWS) * ld, (NK)); \
            __global const REAL *fr = f + foff + (long)(b * fsb + rr * fsr + (col0 + c) * fsc); \
            for (uint k = 0; k < (NK); k++) {                                         \
                REALV v = LOADV(px + r * ld + k * VEC, LN(k));                        \
                REALV out = (flags & CLS_KF_PARAMS) ? SCALE_MISS(v, k) : v;           \
                if (flags & CLS_KF_FACTORS)                                           \
                    out *= F(load_factors)(fr + k * VEC * fsc, fsc, LN(k));           \
                F(store_out)(out, py + r * ld + k * VEC, LN(k), nt);                  \
            }                                                                         \
            if (++rr == R) { rr = 0; b++; }                                           \
            if (++grp_row == Rg && r + 1 < rows) {                                    \
                grp_row = 0;                                                          \
                grp++;                                                                \
                if (flags & CLS_KF_PARAMS) LOAD_PARAMS(NK, LN);                       \
            }                                                                         \
        }                                                                             \
    } while (0)

/* The elementwise loop over `run` rows of one vector (xr, yr, fr at its
 * first row), out = EXPR(v, fr). */
#define APPLY_RUN(LN, EXPR)                                                           \
    for (uint i = 0; i < run; i++) {                                                  \
        if (pf) F(prefetch_row)(xr + (i + CLS_PF_ROWS) * ld, 1);                      \
        REALV v = LOADV(xr + i * ld, LN);                                             \
        F(store_out)(EXPR, yr + i * ld, LN, nt);                                      \
        fr += fsr;                                                                    \
    }

#if CLS_IMPUTE
#define SCALED(v) (isfinite(v) ? (((v) - shi) - slo) * m + o : (imp ? sfv : (v)))
#define LOAD_FILL(dst, at, n) dst = F(load_cols)(prm + P_FILL * pstride + (at), (n))
#define APPLY_ONE_IMP , sfv, imp
#else
#define SCALED(v) (((v) - shi) - slo) * m + o
#define LOAD_FILL(dst, at, n) (void)0
#define APPLY_ONE_IMP
#endif
#define FACTOR(fr) F(load_factors)(fr, fsc, VEC)

/* Vector k of a block that is not full: its rows in runs that share one
 * statistics group (params) and one matrix (factor rows), each run a tight
 * loop with the params in registers. Full vectors without clipping, whose
 * multipliers are all positive, need no per-value test: a NaN or an
 * infinity stays what it is through ((v - shi) - slo) * m + o. */
#define APPLY_VECTOR(k)                                                               \
    do {                                                                              \
        uint n = LANES(k);                                                            \
        ulong gr = grow0 + r0;                                                        \
        ulong grp = gr / Rg, grp_row = gr % Rg;                                       \
        ulong b = gr / R, rr = gr % R;                                                \
        for (uint r = 0; r < rows;) {                                                 \
            uint run = rows - r;                                                      \
            if (Rg - grp_row < run) run = (uint)(Rg - grp_row);                       \
            if ((flags & CLS_KF_FACTORS) && R - rr < run) run = (uint)(R - rr);       \
            REALV shi = RV(0), slo = RV(0), m = RV(1), o = RV(0), sfv = RV(NAN);      \
            (void)sfv;                                                                \
            if (flags & CLS_KF_PARAMS) {                                              \
                ulong pi = (grp - g0) * pld + pcol0 + c + (k) * VEC;                  \
                shi = F(load_cols)(prm + P_SHI * pstride + pi, n);                    \
                slo = F(load_cols)(prm + P_SLO * pstride + pi, n);                    \
                m = F(load_cols)(prm + P_M * pstride + pi, n);                        \
                o = F(load_cols)(prm + P_O * pstride + pi, n);                        \
                LOAD_FILL(sfv, pi, n);                                                \
            }                                                                         \
            __global const REAL *xr = px + r * ld + (k) * VEC;                        \
            __global REAL *yr = py + r * ld + (k) * VEC;                              \
            __global const REAL *fr = f + foff + (long)(b * fsb + rr * fsr + (col0 + c + (k) * VEC) * fsc); \
            int plain = n >= VEC && !(flags & CLS_KF_CLIP) && ALL_TRUE(m > RV(0));   \
            if (plain && !(flags & CLS_KF_FACTORS)) {                                 \
                if (flags & CLS_KF_PARAMS) { APPLY_RUN(VEC, SCALED(v)) }              \
                else { APPLY_RUN(VEC, v) }                                            \
            } else if (plain && (flags & CLS_KF_PARAMS)) {                            \
                APPLY_RUN(VEC, (SCALED(v)) * FACTOR(fr))                              \
            } else if (plain) {                                                       \
                APPLY_RUN(VEC, v * FACTOR(fr))                                        \
            } else {                                                                  \
                APPLY_RUN(n, F(apply_one)(v, fr, shi, slo, m, o, flags, lo, hi, fsc, n APPLY_ONE_IMP)) \
            }                                                                         \
            r += run;                                                                 \
            if ((grp_row += run) == Rg) { grp_row = 0; grp++; }                       \
            rr += run;                                                                \
            if (rr >= R) { b += rr / R; rr %= R; }                                    \
        }                                                                             \
    } while (0)

/* One value of the general elementwise path. */
inline REALV F(apply_one)(REALV v, __global const REAL *fr, REALV shi, REALV slo, REALV m, REALV o,
                          uint flags, REAL lo, REAL hi, ulong fsc, uint n
#if CLS_IMPUTE
                          , REALV sf, uint imp
#endif
                          )
{
#if CLS_IMPUTE
    REALV out = (flags & CLS_KF_PARAMS) ? F(scale_imp)(v, shi, slo, m, o, flags, lo, hi, sf, imp) : v;
#else
    REALV out = (flags & CLS_KF_PARAMS) ? F(scale)(v, shi, slo, m, o, flags, lo, hi) : v;
#endif
    if (flags & CLS_KF_FACTORS) out *= F(load_factors)(fr, fsc, n);
    return out;
}

/* Elementwise pass: scale by per-column params (CLS_KF_PARAMS), then discount
 * (CLS_KF_FACTORS). Work-item (i, j) covers rows [j * rpi, (j + 1) * rpi)
 * of its block. Slice row r is global row grow0 + r, of statistics group
 * (grow0 + r) / Rg, whose params are entry (group - g0) * pld + pcol0 + c;
 * and of matrix (grow0 + r) / R, row (grow0 + r) % R for the factors, whose
 * element is foff + b * fsb + row * fsr + (col0 + c) * fsc (foff < 0 for a
 * window). A full block walks its rows once with every vector in registers;
 * any other block takes its vectors one at a time (APPLY_VECTOR). */
#if CLS_KERNEL == CLS_KID_APPLY
__kernel void F(apply)(__global const REAL *x, ulong xoff, __global REAL *y, ulong yoff,
                       uint ncols, ulong nrows, ulong ld, uint rpi, uint kk,
                       uint flags, REAL lo, REAL hi,
                       __global const REAL *prm, ulong pstride, ulong pld, ulong pcol0,
                       ulong grow0, ulong Rg, ulong g0,
                       __global const REAL *f, long foff, ulong fsb, ulong fsr, ulong fsc,
                       ulong R, ulong col0 IMP_ARGS)
{
    BLOCK();
    ulong r0 = get_global_id(1) * (ulong)rpi;
    if (r0 >= nrows) return;
    uint rows = (uint)min((ulong)rpi, nrows - r0);
    __global const REAL *px = x + xoff + r0 * ld + c;
    __global REAL *py = y + yoff + r0 * ld + c;
    int nt = (flags & CLS_KF_NT) && ((ulong)py % sizeof(REAL)) == 0;
    if (FULL_BLOCK()) {
        APPLY_BODY(KV, FULL_LANES);
    } else {
        /* rows far apart defeat the hardware prefetcher */
        int pf = CLS_PREFETCH && ld * sizeof(REAL) > 256;
        for (uint k = 0; k < nk; k++) APPLY_VECTOR(k);
    }
}
#endif


/* Discount alone over rows long enough to stream: work-item (i, j) takes
 * vectors [i * kk, (i + 1) * kk) of slice row j, one contiguous run, so
 * that each core reads and writes whole pages in order (walking a column
 * block down the rows, as `apply` does to keep params in registers, is
 * slower even with prefetching; docs/PERFORMANCE.md, "The discount").
 * Slice row r is global row grow0 + r: matrix (grow0 + r) / R, row
 * (grow0 + r) % R, whose factors start at foff + b * fsb + row * fsr + col0
 * * fsc. A GPU (VEC = 1, kk = 1) gets one value per work-item, neighbours
 * on neighbouring addresses. */
#if CLS_KERNEL == CLS_KID_DISCOUNT
__kernel void F(discount)(__global const REAL *x, ulong xoff, __global REAL *y, ulong yoff,
                          uint ncols, ulong ld, uint kk, uint flags,
                          __global const REAL *f, long foff, ulong fsb, ulong fsr, ulong fsc,
                          ulong grow0, ulong R, ulong col0)
{
    uint c = (uint)get_global_id(0) * VEC * kk;
    if (c >= ncols) return;
    ulong r = get_global_id(1), gr = grow0 + r;
    __global const REAL *px = x + xoff + r * ld + c;
    __global REAL *py = y + yoff + r * ld + c;
    __global const REAL *fr = f + foff + (long)((gr / R) * fsb + (gr % R) * fsr + (col0 + c) * fsc);
    int nt = (flags & CLS_KF_NT) && ((ulong)py % 16) == 0;
    uint left = ncols - c;
    uint full = min(kk, left / VEC);
    for (uint k = 0; k < full; k++)
        F(store_out)(F(load_cols)(px + k * VEC, VEC) * F(load_factors)(fr + k * VEC * fsc, fsc, VEC),
                     py + k * VEC, VEC, nt);
    if (full < kk && full * VEC < left) {
        uint n = left - full * VEC;
        REALV v = F(load_cols)(px + full * VEC, n) * F(load_factors)(fr + full * VEC * fsc, fsc, n);
        F(store_cols)(v, py + full * VEC, n);
    }
}
#endif


/* y[i] = x[i] for i < count: the bandwidth probe and build self-test. */
#if CLS_KERNEL == CLS_KID_COPY
__kernel void F(copy)(__global const REAL *x, __global REAL *y, ulong count)
{
    ulong i = get_global_id(0) * VEC;
    if (i >= count) return;
    uint n = (uint)min((ulong)VEC, count - i);
    F(store_cols)(F(load_cols)(x + i, n), y + i, n);
}
#endif


#undef MAX_10_EXP
#undef EPS_REAL
#undef REALV
#undef F
#undef RV
#undef NTW
#undef NTT
#undef MAKE_PARAMS
#undef ZS_LOW
#undef MINMAX
#undef LANES
#undef BLOCK
#undef BLOCK_STATS
#undef FIT_APPLY
#undef FIT_APPLY_ARGS
#undef STATS
#undef STATS_ARGS
#undef LOAD_PARAMS
#undef FIT_APPLY_BODY
#undef APPLY_BODY
#undef APPLY_RUN
#undef APPLY_VECTOR
#undef SCALED
#undef FACTOR
#undef FULL_LANES
#undef UNROLL
#undef CLEAN_BLOCK_BODY
#undef CLEAN_MINMAX_BODY
#undef CLEAN_PASS1
#undef SHIFT_K
#undef SHIFT_SELF
#undef LOAD_N
#undef LOADV
#undef SENT_P
#undef SENT_A
#undef IMP_ARGS
#undef IMP_DECL
#undef IMP_STATS
#undef IMP_FILL
#undef SCALE_MISS
#undef LOAD_FILL
#undef APPLY_ONE_IMP
#undef IMPUTE_STATS
#undef MM_SHIFT
#undef MM_SUM_P
#undef MM_SUM_A
#undef MM_SUM_STORE
#undef MM_SUM_DECL
#undef MM_SUM_INIT
#undef MM_CAREFUL
#undef MM_SUM_END
#undef SCALED_FILL
#undef LOAD_FULL
#undef PREFETCH_AHEAD
#undef NO_UNROLL
#undef FULL_BLOCK
