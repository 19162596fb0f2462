/* Light curves along the rows (src/lightcurve/ drives them; written once for
 * REAL = float or double like scale.cl): a moving-average or Savitzky-Golay
 * trend of each column, and smoothing or reducing by bins of rows.
 *
 * Layout: a unit holds `ngroups` groups of `nrows` x `ncols` row-major
 * values; work-item dimension 0 is (group, column), so that neighbouring
 * work-items read neighbouring columns (coalesced on GPUs, one cache line
 * for several work-items on CPUs); dimension 1 is a chunk of rows (or a
 * bin), so that a work-item's loops stay bounded (rusticl's llvmpipe stops
 * a loop silently past about 65 535 iterations) and a long column still
 * spreads over many work-items.
 *
 * Sums are taken in ACC: double where the device has cl_khr_fp64 (float32
 * data too, as scipy computes in float64), else float with a compensation
 * term (rusticl). */

#define F(name) CAT(name, SFX)

#if CLS_KERNEL == CLS_KID_MOVAVG || CLS_KERNEL == CLS_KID_SAVGOL || CLS_KERNEL == CLS_KID_BIN_SMOOTH || \
    CLS_KERNEL == CLS_KID_BIN_REDUCE || CLS_KERNEL == CLS_KID_SAVGOL3 || CLS_KERNEL == CLS_KID_SAVGOL3V
#if CLS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ACC double
#else
#define ACC float
#endif

/* mirrors src/lightcurve/lightcurve.h */
#define LC_EDGE_REFLECT  1
#define LC_EDGE_MIRROR   2
#define LC_EDGE_NEAREST  3
#define LC_EDGE_CONSTANT 4
#define LC_EDGE_WRAP     5
#define LC_EDGE_INTERP   6
/* a streamed block of a series with a wrap edge (src/lightcurve): the host
 * holds the rows its windows read before the series' first row and past
 * its last (the other end's) where they are, so a row is read in place */
#define LC_EDGE_HELD     7
#define LC_OP_SUBTRACT   0
#define LC_OP_DIVIDE     1
#define LC_OP_TREND      2
#define LC_F_SENT        1u
#define LC_BIN_MEAN      1
#define LC_BIN_MEDIAN    2
#define LC_BIN_BOUNDARY  3
#define LC_BIN_SUM       4
#define LC_BIN_COUNT     5

static inline int F(lc_valid)(REAL v, uint flags, REAL sent)
{
    return isfinite(v) && !((flags & LC_F_SENT) && v == sent);
}

#define LC_CONST LONG_MIN /* lc_map: the constant (cval) */

/* The index of extended row j in a series of n rows, or LC_CONST for the
 * constant beyond the ends (a held block's rows may be negative). The extensions repeat with their period, as
 * scipy.ndimage's do for windows longer than the series. */
static inline long F(lc_map)(long j, long n, int mode)
{
    if (j >= 0 && j < n) return j;
    long p, r;
    switch (mode) {
    case LC_EDGE_HELD:
        return j;
    case LC_EDGE_NEAREST:
        return j < 0 ? 0 : n - 1;
    case LC_EDGE_WRAP:
        r = j % n;
        return r < 0 ? r + n : r;
    case LC_EDGE_REFLECT: /* d c b a | a b c d | d c b a */
        p = 2 * n;
        r = j % p;
        if (r < 0) r += p;
        return r < n ? r : p - 1 - r;
    case LC_EDGE_MIRROR: /* d c b | a b c d | c b a */
        if (n == 1) return 0;
        p = 2 * n - 2;
        r = j % p;
        if (r < 0) r += p;
        return r < n ? r : p - r;
    default:
        return LC_CONST;
    }
}

/* The trend's effect on a valid value. */
static inline REAL F(lc_out)(REAL v, ACC trend, int op)
{
    if (op == LC_OP_TREND) return (REAL)trend;
    if (op == LC_OP_DIVIDE) return (REAL)((ACC)v / trend);
    return (REAL)((ACC)v - trend);
}
#endif

/* Moving average (scipy.ndimage.uniform_filter1d): row i's trend is the
 * mean of the valid values of extended rows [i + start, i + start + w);
 * a constant edge's cval counts as a value. A running sum: each row adds
 * the entering value and removes the leaving one, O(rows) per column
 * whatever the window; each chunk starts its sum afresh, which bounds the
 * drift of the running sum. */
#if CLS_KERNEL == CLS_KID_MOVAVG
/* adds a to the running sum: plain in double (a chunk's drift is far
 * below its rounding), Neumaier's compensation in float (rusticl) */
#if CLS_FP64
#define LC_ADD(a) (sum += (a))
#else
#define LC_ADD(a)                                                          \
    do {                                                                   \
        ACC a_ = (a), s_ = sum + a_;                                       \
        comp += fabs(sum) >= fabs(a_) ? (sum - s_) + a_ : (a_ - s_) + sum; \
        sum = s_;                                                          \
    } while (0)
#endif
__kernel void F(movavg)(__global const REAL *x, __global REAL *y, uint ncols, ulong nrows, uint ngroups,
                        uint chunk, uint w, long start, int mode, REAL cval, int op, uint flags, REAL sent,
                        long base, ulong wlo, ulong whi)
{
    ulong gc = get_global_id(0);
    if (gc >= (ulong)ngroups * ncols) return;
    ulong g = gc / ncols, c = gc % ncols;
    ulong i0 = (get_global_id(1) + wlo / chunk) * (ulong)chunk;
    if (i0 >= whi) return;
    ulong i1 = min(i0 + chunk, whi);
    /* x holds the series' rows from base on, y its rows from wlo on */
    __global const REAL *px = x + g * nrows * ncols + c - base * ncols;
    __global REAL *py = y + g * nrows * ncols + c - wlo * ncols;
    long n = (long)nrows;
    ACC sum = 0, comp = 0;
    uint cnt = 0;
    for (long t = (long)i0 + start; t < (long)i0 + start + (long)w; t++) {
        long k = F(lc_map)(t, n, mode);
        REAL v = k == LC_CONST ? cval : px[k * ncols];
        int ok = F(lc_valid)(v, flags, sent);
        LC_ADD(ok ? (ACC)v : (ACC)0);
        cnt += ok;
    }
    for (ulong i = i0; i < i1; i++) {
        if (i > i0) {
            /* inside the series (most rows) no edge mapping; no branch on
             * validity: a missing value adds 0 */
            long tout = (long)i - 1 + start, tin = tout + (long)w;
            REAL vo, vi;
            if (tout >= 0 && tin < n) {
                vo = px[tout * ncols];
                vi = px[tin * ncols];
            } else {
                long ko = F(lc_map)(tout, n, mode), ki = F(lc_map)(tin, n, mode);
                vo = ko == LC_CONST ? cval : px[ko * ncols];
                vi = ki == LC_CONST ? cval : px[ki * ncols];
            }
            int oko = F(lc_valid)(vo, flags, sent), oki = F(lc_valid)(vi, flags, sent);
            LC_ADD((oki ? (ACC)vi : (ACC)0) - (oko ? (ACC)vo : (ACC)0));
            cnt = cnt + oki - oko;
        }
        REAL v = px[i * ncols];
        if (!F(lc_valid)(v, flags, sent) && op != LC_OP_TREND) {
            if (i >= wlo) py[i * ncols] = v; /* missing stays missing; the trend is written at every row */
            continue;
        }
        ACC trend = cnt ? (sum + comp) / (ACC)cnt : (ACC)NAN;
        if (i >= wlo) py[i * ncols] = F(lc_out)(v, trend, op);
    }
}
#undef LC_ADD
#endif

/* Savitzky-Golay (scipy.signal.savgol_filter): row i's trend is the value
 * (or derivative) at row i + off of the least-squares polynomial of order
 * p through the valid values of extended rows [ws, ws + w), ws = i + start
 * (start = -((w - 1) / 2)), evaluated at the window's centre (row i, or
 * i + 1/2 for an even w, as scipy); interp: the first and last w rows for
 * the first and last w / 2 outputs, evaluated at row i itself. Positions are u = (t - c) / s within the window, c = (w - 1) / 2 its
 * centre, s = max(c, 1): the normal equations then stay well conditioned.
 *
 * Sliding: the window's sums S_j = sum x u^j move by one row with the
 * binomial re-expansion of (u - 1/s)^j (O(p^2) per row, whatever w). A
 * full window at its centre (the common case) takes the precomputed
 * weights g (host, float64): trend = sum g_j S_j, scipy's convolution in
 * another order. A window with missing values or an interp edge solves its
 * own normal equations from the moments of its valid positions, which
 * slide as the sums do (lc_moments). g[p + 1] is the derivative's scale
 * 1 / (s delta)^deriv; then the shift's table T (q x q, q = p + 1) and the
 * powers uo, ui (q each) of the leaving and entering rows' positions; then
 * the moments' table (lc_moments: LC_TAB(q)). */
#if CLS_KERNEL == CLS_KID_SAVGOL || CLS_KERNEL == CLS_KID_SAVGOL3 || CLS_KERNEL == CLS_KID_SAVGOL3V
#define LC_PMAX 8 /* polyorder at most (src/lightcurve/lightcurve.h) */
#define LC_TAB(q) ((q) + 1 + (q) * (q) + 2 * (q)) /* the moments' table in g (lightcurve.c) */
#if CLS_FP64
#define LC_TINY 1e-12 /* a pivot below this times the count is a singular fit */
#else
#define LC_TINY 1e-6f
#endif

/* Solves the (q x q) symmetric system m a = b in place (Gaussian
 * elimination, partial pivoting); 0 when singular. */
static int F(lc_solve)(ACC m[LC_PMAX + 1][LC_PMAX + 1], ACC b[LC_PMAX + 1], int q)
{
    for (int k = 0; k < q; k++) {
        int piv = k;
        for (int r = k + 1; r < q; r++)
            if (fabs(m[r][k]) > fabs(m[piv][k])) piv = r;
        if (!(fabs(m[piv][k]) > LC_TINY * fabs(m[0][0]))) return 0;
        if (piv != k) {
            for (int cc = 0; cc < q; cc++) {
                ACC t = m[k][cc];
                m[k][cc] = m[piv][cc];
                m[piv][cc] = t;
            }
            ACC t = b[k];
            b[k] = b[piv];
            b[piv] = t;
        }
        for (int r = k + 1; r < q; r++) {
            ACC f = m[r][k] / m[k][k];
            for (int cc = k; cc < q; cc++) m[r][cc] -= f * m[k][cc];
            b[r] -= f * b[k];
        }
    }
    for (int k = q - 1; k >= 0; k--) {
        ACC s = b[k];
        for (int cc = k + 1; cc < q; cc++) s -= m[k][cc] * b[cc];
        b[k] = s / m[k][k];
    }
    return 1;
}

/* The moments mom[k] = sum u^k, k < 2q - 1, of the valid positions of
 * the window [ws, ws + w) of a column. They are counted as integers, M_k =
 * sum v^k of v = 2t - (w - 1) (= 2u / d: an integer), exactly in a long
 * where the host found that no sum can overflow (tab[0] = 1), so that one
 * row on they slide exactly: the leaving position v = -(w - 1) out, the
 * shift v - 2 (M_k' = sum_m C(k, m) (-2)^(k - m) M_m, the host's integers
 * tab[1 + k (2q - 1) + m]), the entering v = w - 1 in. They slide from the
 * window before (*mcur), or from a full window's (the host's, in three
 * exact parts) after one (fullws: the last window the caller found full),
 * so that a column counts them afresh (O(w q)) at most once per chunk of
 * rows: a stretch of windows with missing values costs O(q^2) per row,
 * however many values are missing and wherever they are, and the moments
 * are the same bits whichever way they came. Without the integers (long
 * windows of high orders) each window counts its moments afresh. */
static void F(lc_moments)(__global const REAL *px, uint ncols, long n, int mode, REAL cval, uint flags, REAL sent,
                          long ws, uint w, int q, ACC cen, ACC d, __global const ACC *tab, long fullws, long *M,
                          ACC *mom, long *mcur)
{
    int nk = 2 * q - 1;
    if (*mcur == ws) return;
    if (!(tab[0] > 0)) {
        for (int k = 0; k < nk; k++) mom[k] = 0;
        for (uint t = 0; t < w; t++) {
            long k = F(lc_map)(ws + (long)t, n, mode);
            REAL vv = k == LC_CONST ? cval : px[k * ncols];
            if (!F(lc_valid)(vv, flags, sent)) continue;
            ACC u = ((ACC)t - cen) * d, pw = 1;
            for (int k2 = 0; k2 < nk; k2++, pw *= u) mom[k2] += pw;
        }
        *mcur = ws;
        return;
    }
    if (fullws != LONG_MIN && ws == fullws + 1) {
        __global const ACC *full = tab + 1 + nk * nk;
        for (int k = 0; k < nk; k++) M[k] = (long)full[3 * k] + (long)full[3 * k + 1] + (long)full[3 * k + 2];
        *mcur = fullws;
    }
    long hw2 = (long)w - 1;
    if (*mcur != LONG_MIN && ws == *mcur + 1) {
        long to = *mcur, ti = to + (long)w;
        long ko = F(lc_map)(to, n, mode), ki = F(lc_map)(ti, n, mode);
        REAL vo = ko == LC_CONST ? cval : px[ko * ncols], vi = ki == LC_CONST ? cval : px[ki * ncols];
        long xo = F(lc_valid)(vo, flags, sent), xi = F(lc_valid)(vi, flags, sent);
        long pa[2 * LC_PMAX + 1];
        pa[0] = 1;
        for (int k = 1; k < nk; k++) pa[k] = pa[k - 1] * hw2;
        for (int j = nk - 1; j >= 0; j--) {
            long acc = xi * pa[j];
            for (int m = 0; m <= j; m++) acc += (long)tab[1 + j * nk + m] * (M[m] - xo * (m & 1 ? -pa[m] : pa[m]));
            M[j] = acc;
        }
    } else {
        for (int k = 0; k < nk; k++) M[k] = 0;
        for (uint t = 0; t < w; t++) {
            long k = F(lc_map)(ws + (long)t, n, mode);
            REAL vv = k == LC_CONST ? cval : px[k * ncols];
            if (!F(lc_valid)(vv, flags, sent)) continue;
            long v = 2 * (long)t - hw2, pw = 1;
            M[0]++;
            for (int k2 = 1; k2 < nk; k2++) {
                pw *= v;
                M[k2] += pw;
            }
        }
    }
    ACC h = d / 2, hk = 1;
    for (int k = 0; k < nk; k++, hk *= h) mom[k] = (ACC)M[k] * hk;
    *mcur = ws;
}

/* The polynomial's coefficients a[0..q) of a window from its moments
 * (lc_moments) and the sums S of x - K, NaN when singular or with fewer
 * than q valid values. */
static void F(lc_fit)(const ACC *mom, int q, const ACC *S, uint cnt, ACC *a)
{
    ACC M[LC_PMAX + 1][LC_PMAX + 1];
    for (int r = 0; r < q; r++) {
        a[r] = S[r];
        for (int k2 = 0; k2 < q; k2++) M[r][k2] = mom[r + k2];
    }
    if (cnt < (uint)q || !F(lc_solve)(M, a, q))
        for (int r = 0; r < q; r++) a[r] = (ACC)NAN;
}

/* The derivative `deriv` of sum a_k u^k at u = ue, scaled, plus K0. */
static ACC F(lc_eval)(const ACC *a, int q, uint deriv, ACC ue, ACC fac, ACC K0)
{
    ACC pw = 1, trend = 0;
    for (int k = (int)deriv; k < q; k++) {
        ACC f = 1;
        for (int m = k - (int)deriv + 1; m <= k; m++) f *= (ACC)m;
        trend += a[k] * f * pw;
        pw *= ue;
    }
    return trend * fac + K0;
}

#if CLS_KERNEL != CLS_KID_SAVGOL3V
__kernel void F(savgol)(__global const REAL *x, __global REAL *y, uint ncols, ulong nrows, uint ngroups,
                        uint chunk, uint w, uint p, uint deriv, long start, int mode, REAL cval, int op,
                        uint flags, REAL sent, __global const ACC *g, long base, ulong wlo, ulong whi)
{
    ulong gc = get_global_id(0);
    if (gc >= (ulong)ngroups * ncols) return;
    ulong gi = gc / ncols, c = gc % ncols;
    ulong i0 = (get_global_id(1) + wlo / chunk) * (ulong)chunk;
    if (i0 >= whi) return;
    ulong i1 = min(i0 + chunk, whi);
    /* x holds the series' rows from base on, y its rows from wlo on */
    __global const REAL *px = x + gi * nrows * ncols + c - base * ncols;
    __global REAL *py = y + gi * nrows * ncols + c - wlo * ncols;
    long n = (long)nrows, hw = (long)(w / 2);
#if CLS_KERNEL == CLS_KID_SAVGOL3
    /* polyorder 2 (lightkurve's and most callers'): the loops over the
     * sums unroll and the sums stay in registers (3x faster on PoCL) */
    const int q = 3;
    (void)p;
#else
    int q = (int)p + 1;
#endif
    ACC cen = (ACC)(w - 1) / 2, sc = cen > 1 ? cen : 1, d = 1 / sc, fac = g[q];
    /* the host's tables in private memory (registers once q is known) */
    ACC gw[LC_PMAX + 1], T[(LC_PMAX + 1) * (LC_PMAX + 1)], uo[LC_PMAX + 1], ui[LC_PMAX + 1];
    for (int j = 0; j < q; j++) {
        gw[j] = g[j];
        uo[j] = g[q + 1 + q * q + j];
        ui[j] = g[q + 1 + q * q + q + j];
        for (int m = 0; m < q; m++) T[j * q + m] = g[q + 1 + j * q + m];
    }
    ACC S[LC_PMAX + 1], a[LC_PMAX + 1];
    /* the sums are of x - K, K a value of the column: the trend's offset
     * then costs no precision (float sums on rusticl lost 2e-4 of it) */
    REAL k0 = px[i0 * ncols];
    ACC K = F(lc_valid)(k0, flags, sent) ? (ACC)k0 : 0, K0 = deriv ? 0 : K;
    uint cnt = 0;
    long cur = LONG_MIN, coef = LONG_MIN, mcur = LONG_MIN, fullws = LONG_MIN, M[2 * LC_PMAX + 1];
    ACC mom[2 * LC_PMAX + 1];
    for (ulong i = i0; i < i1; i++) {
        long ws = (long)i + start, li = (long)i;
        int edge = 0;
        if (mode == LC_EDGE_INTERP && (li < hw || li >= n - hw)) {
            ws = li < hw ? 0 : n - (long)w;
            edge = 1;
        }
        if (ws != cur) {
            if (cur != LONG_MIN && ws == cur + 1) {
                /* the leaving row (at u = -c/s) out, the shift, the
                 * entering row (at u = c/s) in, at once: S_j' = sum_m
                 * T_jm (S_m - xo uo_m) + xi ui_j, T_jm = C(j, m) (-1/s)^(j-m)
                 * (the host's table), from the top so that each S_m is read
                 * before it changes; a missing value counts as 0 */
                long to = cur, ti = cur + (long)w;
                REAL vo, vi;
                if (to >= 0 && ti < n) {
                    vo = px[to * ncols];
                    vi = px[ti * ncols];
                } else {
                    long ko = F(lc_map)(to, n, mode), ki = F(lc_map)(ti, n, mode);
                    vo = ko == LC_CONST ? cval : px[ko * ncols];
                    vi = ki == LC_CONST ? cval : px[ki * ncols];
                }
                int oko = F(lc_valid)(vo, flags, sent), oki = F(lc_valid)(vi, flags, sent);
                ACC xo = oko ? (ACC)vo - K : 0, xi = oki ? (ACC)vi - K : 0;
                for (int j = q - 1; j >= 0; j--) {
                    ACC acc = xi * ui[j];
                    for (int m = 0; m <= j; m++) acc += T[j * q + m] * (S[m] - xo * uo[m]);
                    S[j] = acc;
                }
                cnt = cnt + oki - oko;
            } else {
                for (int j = 0; j < q; j++) S[j] = 0;
                cnt = 0;
                for (uint t = 0; t < w; t++) {
                    long k = F(lc_map)(ws + (long)t, n, mode);
                    REAL v = k == LC_CONST ? cval : px[k * ncols];
                    if (!F(lc_valid)(v, flags, sent)) continue;
                    ACC u = ((ACC)t - cen) * d, pw = (ACC)v - K;
                    for (int j = 0; j < q; j++, pw *= u) S[j] += pw;
                    cnt++;
                }
            }
            cur = ws;
        }
        int full = !edge && cnt == w;
        if (cnt == w) fullws = ws;
        /* the moments follow every window with missing values, this row's
         * own missing or not, so that they slide through a stretch of them */
        if (!full)
            F(lc_moments)(px, ncols, n, mode, cval, flags, sent, ws, w, q, cen, d, g + LC_TAB(q), fullws, M, mom,
                          &mcur);
        REAL v = px[i * ncols];
        if (!F(lc_valid)(v, flags, sent) && op != LC_OP_TREND) {
            if (i >= wlo) py[i * ncols] = v;
            continue;
        }
        ACC trend;
        if (full) {
            trend = 0;
            for (int j = 0; j < q; j++) trend += gw[j] * S[j];
            trend += K0;
        } else {
            if (coef != ws) {
                F(lc_fit)(mom, q, S, cnt, a);
                coef = ws;
            }
            /* at the window's centre (half a row after the row in an even
             * window, as the full windows' weights), the row itself at an
             * interp edge */
            trend = F(lc_eval)(a, q, deriv, edge ? ((ACC)(li - ws) - cen) * d : 0, fac, K0);
        }
        if (i >= wlo) py[i * ncols] = F(lc_out)(v, trend, op);
    }
}
#endif

#if CLS_KERNEL == CLS_KID_SAVGOL3V
/* CLS_K_SAVGOL3 on CPUs: a work-item takes 8 columns (of one group or of
 * neighbouring groups) in the lanes of vectors. Their rows, windows and
 * edges are alike, so the slide and the full windows' weights run on the
 * vectors (PoCL does not vectorise a kernel whose work-items each loop
 * over rows); a row where a lane's window is not full, or an edge, takes
 * each lane alone (lc_fit), as the scalar kernel does.
 * p == 0 (a Savitzky-Golay of polyorder 0 takes CLS_K_SAVGOL): the moving
 * average (CLS_K_MOVAVG's semantics) on float64 CPUs, the mean of the
 * valid values of the window: g[0] = 1 / w and the other weights 0.
 * The interior rows (the leaving and entering rows inside the series, no
 * interp edge: all but about w rows of a column) are the fast path: each
 * lane's values gathered at its offset into vectors, validity as vector
 * masks, no per-lane branch; one read of the entering, leaving and current
 * rows (the last two in cache) and one write per value. */
#define LV 8 /* lanes: lightcurve.c's LC_LANES */
#define VACC CAT(ACC, 8)
#define VREAL CAT(REAL, 8)
#define VCONV CAT(convert_, VACC)
#if CLS_FP64
#define VMASK long8 /* what a comparison of VACC gives */
#else
#define VMASK int8
#endif
/* a row of the 8 lanes: one vload8 where they are 8 neighbouring
 * columns of a group (lay 8), 4 vload2 or 2 vload4 where 4 or 2 groups
 * hold them (lay 2, 4: columns 2 or 4), else one value per lane */
#define GATHER(p, r) VCONV((VREAL)((p)[o.s0 + (r)], (p)[o.s1 + (r)], (p)[o.s2 + (r)], (p)[o.s3 + (r)], \
                                   (p)[o.s4 + (r)], (p)[o.s5 + (r)], (p)[o.s6 + (r)], (p)[o.s7 + (r)]))
#define LOADV(p, r)                                                                                        \
    (lay == 8   ? VCONV(vload8(0, (p) + o.s0 + (r)))                                                     \
     : lay == 2 ? VCONV((VREAL)(vload2(0, (p) + o.s0 + (r)), vload2(0, (p) + o.s2 + (r)),                 \
                                vload2(0, (p) + o.s4 + (r)), vload2(0, (p) + o.s6 + (r))))                \
     : lay == 4 ? VCONV((VREAL)(vload4(0, (p) + o.s0 + (r)), vload4(0, (p) + o.s4 + (r))))               \
                : GATHER(p, r))
#define LANE(v, l) ((l) == 0 ? (v).s0 : (l) == 1 ? (v).s1 : (l) == 2 ? (v).s2 : (l) == 3 ? (v).s3 : \
                    (l) == 4 ? (v).s4 : (l) == 5 ? (v).s5 : (l) == 6 ? (v).s6 : (v).s7)
__kernel void F(savgol3v)(__global const REAL *x, __global REAL *y, uint ncols, ulong nrows, uint ngroups,
                          uint chunk, uint w, uint p, uint deriv, long start, int mode, REAL cval, int op,
                          uint flags, REAL sent, __global const ACC *g, long base, ulong wlo, ulong whi)
{
    const int q = 3;
    int mean = p == 0;
    ulong total = (ulong)ngroups * ncols, gc0 = get_global_id(0) * LV;
    if (gc0 >= total) return;
    /* x holds the series' rows from base on, y its rows from wlo on */
    x -= base * ncols;
    y -= wlo * ncols;
    ulong i0 = (get_global_id(1) + wlo / chunk) * (ulong)chunk;
    if (i0 >= whi) return;
    ulong i1 = min(i0 + chunk, whi);
    /* each lane's column offset; a lane past the end repeats the last
     * column (the same values written twice by this work-item) */
    ulong of[LV];
    for (int l = 0; l < LV; l++) {
        ulong gc = gc0 + (ulong)l < total ? gc0 + (ulong)l : total - 1;
        of[l] = (gc / ncols) * nrows * ncols + gc % ncols;
    }
    ulong8 o = vload8(0, of);
    int lay = gc0 + LV > total ? 0 : ncols % 8 == 0 ? 8 : ncols == 2 || ncols == 4 ? (int)ncols : 0;
    long n = (long)nrows, hw = (long)(w / 2);
    ACC cen = (ACC)(w - 1) / 2, sc = cen > 1 ? cen : 1, d = 1 / sc, fac = g[q];
    ACC gw0 = g[0], gw1 = g[1], gw2 = g[2];
    ACC T10 = g[q + 1 + 3], T20 = g[q + 1 + 6], T21 = g[q + 1 + 7];
    ACC uo1 = g[q + 1 + 9 + 1], uo2 = g[q + 1 + 9 + 2], ui1 = g[q + 1 + 12 + 1], ui2 = g[q + 1 + 12 + 2];
    int sentf = (flags & LC_F_SENT) != 0;
    VACC vsent = (VACC)(ACC)sent;
    /* the sums are of x - K, K a value of each column (lane) */
    VACC K = GATHER(x, i0 * ncols);
    VMASK okK = isfinite(K) & (sentf ? K != vsent : (VMASK)(-1));
    K = select((VACC)0, K, okK);
    VACC K0 = deriv ? (VACC)0 : K;
    VACC S0 = 0, S1 = 0, S2 = 0;
    VMASK cnt = 0;
    /* allws: the last window full in every lane (no per-lane pass then) */
    long cur = LONG_MIN, coef[LV], mcur[LV], fullws[LV], allws = LONG_MIN, M[LV][5];
    ACC a[LV][3], mom[LV][5];
    for (int l = 0; l < LV; l++) coef[l] = mcur[l] = fullws[l] = LONG_MIN;
    /* Windows with missing values on the vectors where the moments' integers
     * are exact in a double (the host's tab[0] = 2): VM0..VM4 = sum v^k of
     * the valid positions v = 2t - (w - 1) of window mws, per lane, slid
     * with the sums on the rows that need them (lc_moments' rule, its shift
     * written out: C(k, m) (-2)^(k - m)), from a full window's (the host's
     * vf) after one, else counted afresh; the normal equations solved by
     * LDL^T (they are symmetric positive definite: no pivoting). */
    __global const ACC *tab = g + LC_TAB(q);
    int dexact = !mean && tab[0] > 1;
    long mws = LONG_MIN;
    ACC aw = (ACC)(w - 1), aw2 = aw * aw, aw3 = aw2 * aw, aw4 = aw2 * aw2;
    ACC vf[5];
    for (int k = 0; k < 5; k++) vf[k] = tab[1 + 25 + 3 * k] + tab[1 + 25 + 3 * k + 1] + tab[1 + 25 + 3 * k + 2];
    VACC VM0 = 0, VM1 = 0, VM2 = 0, VM3 = 0, VM4 = 0;
    for (ulong i = i0; i < i1; i++) {
        long ws = (long)i + start, li = (long)i;
        int edge = 0;
        if (mode == LC_EDGE_INTERP && (li < hw || li >= n - hw)) {
            ws = li < hw ? 0 : n - (long)w;
            edge = 1;
        }
        if (ws != cur) {
            long to = cur, ti = cur + (long)w;
            VACC vo, vi;
            if (cur != LONG_MIN && ws == cur + 1 && to >= 0 && ti < n) {
                vo = LOADV(x, (ulong)to * ncols);
                vi = LOADV(x, (ulong)ti * ncols);
            } else if (cur != LONG_MIN && ws == cur + 1) {
                long ko = F(lc_map)(to, n, mode), ki = F(lc_map)(ti, n, mode);
                vo = ko == LC_CONST ? (VACC)(ACC)cval : GATHER(x, ko * (long)ncols);
                vi = ki == LC_CONST ? (VACC)(ACC)cval : GATHER(x, ki * (long)ncols);
            } else {
                /* a window afresh */
                S0 = S1 = S2 = 0;
                cnt = 0;
                for (uint t = 0; t < w; t++) {
                    long k = F(lc_map)(ws + (long)t, n, mode);
                    VACC v = k == LC_CONST ? (VACC)(ACC)cval : GATHER(x, k * (long)ncols);
                    VMASK ok = isfinite(v) & (sentf ? v != vsent : (VMASK)(-1));
                    v = select((VACC)0, v - K, ok);
                    ACC u = ((ACC)t - cen) * d;
                    S0 += v;
                    S1 += v * u;
                    S2 += v * (u * u);
                    cnt -= ok; /* a true comparison is -1 */
                }
                cur = ws;
                vo = vi = 0;
            }
            if (cur != ws) {
                VMASK oko = isfinite(vo) & (sentf ? vo != vsent : (VMASK)(-1));
                VMASK oki = isfinite(vi) & (sentf ? vi != vsent : (VMASK)(-1));
                VACC xo = select((VACC)0, vo - K, oko), xi = select((VACC)0, vi - K, oki);
                /* S_j' = sum_m T_jm (S_m - xo uo_m) + xi ui_j (uo_0 = ui_0 = 1, T_jj = 1) */
                VACC a0 = S0 - xo;
                if (!mean) {
                    VACC a1 = S1 - xo * uo1, a2 = S2 - xo * uo2;
                    S2 = T20 * a0 + T21 * a1 + a2 + xi * ui2;
                    S1 = T10 * a0 + a1 + xi * ui1;
                }
                S0 = a0 + xi;
                cnt = cnt - oki + oko;
                if (dexact && !all(cnt == (VMASK)(long)w) && (mws == cur || allws == cur)) {
                    if (mws != cur) {
                        VM0 = vf[0], VM1 = vf[1], VM2 = vf[2], VM3 = vf[3], VM4 = vf[4];
                    }
                    VACC fo = select((VACC)0, (VACC)1, oko), fi = select((VACC)0, (VACC)1, oki);
                    VACC D0 = VM0 - fo, D1 = VM1 + fo * aw, D2 = VM2 - fo * aw2, D3 = VM3 + fo * aw3,
                         D4 = VM4 - fo * aw4;
                    VM0 = D0 + fi;
                    VM1 = D1 - 2 * D0 + fi * aw;
                    VM2 = D2 - 4 * D1 + 4 * D0 + fi * aw2;
                    VM3 = D3 - 6 * D2 + 12 * D1 - 8 * D0 + fi * aw3;
                    VM4 = D4 - 8 * D3 + 24 * D2 - 32 * D1 + 16 * D0 + fi * aw4;
                    mws = ws;
                }
                cur = ws;
            }
        }
        VACC v = LOADV(x, i * ncols);
        VMASK keep = isfinite(v) & (sentf ? v != vsent : (VMASK)(-1));
        int allfull = all(cnt == (VMASK)(long)w);
        if (allfull) allws = ws;
        if ((!edge && allfull) || mean || dexact) {
            /* every lane's window full: the outputs on the vector too, a
             * missing value written as it was (but the trend) */
            VACC full = gw0 * S0 + K0;
            if (!mean) full += gw1 * S1 + gw2 * S2;
            if (edge || !allfull) {
                /* a lane whose window is full keeps the weights' value, in
                 * the same arithmetic as on a row where all are: a lane's
                 * value does not depend on the columns beside it */
                VMASK wfull = (cnt == (VMASK)(long)w) & (VMASK)(edge ? 0 : -1);
                VACC fit;
                if (mean) {
                    fit = select((VACC)(ACC)NAN, S0 / VCONV(cnt) + K, cnt > (VMASK)0);
                } else {
                    if (mws != ws) {
                        VM0 = VM1 = VM2 = VM3 = VM4 = 0;
                        for (uint t = 0; t < w; t++) {
                            long k = F(lc_map)(ws + (long)t, n, mode);
                            VACC vv = k == LC_CONST ? (VACC)(ACC)cval : GATHER(x, k * (long)ncols);
                            VMASK ok = isfinite(vv) & (sentf ? vv != vsent : (VMASK)(-1));
                            ACC u = 2 * (ACC)t - aw, u2 = u * u;
                            VACC f = select((VACC)0, (VACC)1, ok);
                            VM0 += f;
                            VM1 += f * u;
                            VM2 += f * u2;
                            VM3 += f * (u2 * u);
                            VM4 += f * (u2 * u2);
                        }
                        mws = ws;
                    }
                    ACC h = d / 2, h2 = h * h;
                    VACC m0 = VM0, m1 = VM1 * h, m2 = VM2 * h2, m3 = VM3 * (h2 * h), m4 = VM4 * (h2 * h2);
                    /* LDL^T of [m0 m1 m2; m1 m2 m3; m2 m3 m4], then a = M^-1 S */
                    VACC l1 = m1 / m0, l2 = m2 / m0, d1 = m2 - l1 * m1;
                    VACC l3 = (m3 - l2 * m1) / d1, d2 = m4 - l2 * m2 - l3 * l3 * d1;
                    VACC y1 = S1 - l1 * S0, y2 = S2 - l2 * S0 - l3 * y1;
                    VACC a2 = y2 / d2, a1 = y1 / d1 - l3 * a2, a0 = S0 / m0 - l1 * a1 - l2 * a2;
                    ACC ue = edge ? ((ACC)(li - ws) - cen) * d : 0;
                    fit = deriv == 0 ? a0 + ue * (a1 + ue * a2) : deriv == 1 ? a1 + 2 * ue * a2
                        : deriv == 2 ? 2 * a2 : (VACC)0;
                    fit = fit * fac + K0;
                    VMASK ok = cnt >= (VMASK)q & d1 > (VACC)LC_TINY * m0 & d2 > (VACC)LC_TINY * m0;
                    fit = select((VACC)(ACC)NAN, fit, ok);
                }
                full = select(fit, full, wfull);
            }
            VACC out = op == LC_OP_TREND ? full : op == LC_OP_DIVIDE ? v / full : v - full;
            if (op != LC_OP_TREND) out = select(v, out, keep);
            VREAL r = CAT(convert_, VREAL)(out);
            ulong ri = i * ncols;
            if (i < wlo) {
                /* a halo row: computed for the rows after it, written by another block */
            } else if (lay == 8) {
                vstore8(r, 0, y + o.s0 + ri);
            } else if (lay == 2) {
                vstore2(r.s01, 0, y + o.s0 + ri);
                vstore2(r.s23, 0, y + o.s2 + ri);
                vstore2(r.s45, 0, y + o.s4 + ri);
                vstore2(r.s67, 0, y + o.s6 + ri);
            } else if (lay == 4) {
                vstore4(r.s0123, 0, y + o.s0 + ri);
                vstore4(r.s4567, 0, y + o.s4 + ri);
            } else {
                y[o.s0 + ri] = r.s0;
                y[o.s1 + ri] = r.s1;
                y[o.s2 + ri] = r.s2;
                y[o.s3 + ri] = r.s3;
                y[o.s4 + ri] = r.s4;
                y[o.s5 + ri] = r.s5;
                y[o.s6 + ri] = r.s6;
                y[o.s7 + ri] = r.s7;
            }
            continue;
        }
        for (int l = 0; l < LV; l++) {
            __global const REAL *pxl = x + of[l];
            __global REAL *pyl = y + of[l];
            int cn = (int)LANE(cnt, l), full = !edge && cn == (int)w;
            if (cn == (int)w) fullws[l] = ws;
            /* a lane's moments follow its windows with missing values
             * (lc_moments), its own missing rows too */
            if (!full && !mean)
                F(lc_moments)(pxl, ncols, n, mode, cval, flags, sent, ws, w, q, cen, d, g + LC_TAB(q),
                              max(fullws[l], allws), M[l], mom[l], &mcur[l]);
            REAL vl = pxl[i * ncols];
            if (!F(lc_valid)(vl, flags, sent) && op != LC_OP_TREND) {
                if (i >= wlo) pyl[i * ncols] = vl;
                continue;
            }
            ACC Kl = LANE(K, l), trend;
            if (full) {
                /* a full window: the vector branch's arithmetic, in its
                 * order, so that a lane's value does not depend on the
                 * columns beside it (a call over other groups, a streamed
                 * chunk, another rank gives the same bits) */
                trend = gw0 * LANE(S0, l) + (deriv ? 0 : Kl);
                if (!mean) trend += gw1 * LANE(S1, l) + gw2 * LANE(S2, l);
            } else if (mean) {
                trend = cn > 0 ? LANE(S0, l) / (ACC)cn + Kl : (ACC)NAN;
            } else {
                if (coef[l] != ws) {
                    ACC Sl[3] = {LANE(S0, l), LANE(S1, l), LANE(S2, l)};
                    F(lc_fit)(mom[l], q, Sl, (uint)cn, a[l]);
                    coef[l] = ws;
                }
                trend = F(lc_eval)(a[l], q, deriv, edge ? ((ACC)(li - ws) - cen) * d : 0, fac, deriv ? 0 : Kl);
            }
            if (i >= wlo) pyl[i * ncols] = F(lc_out)(vl, trend, op);
        }
    }
}
#undef LV
#undef VACC
#undef VREAL
#undef VCONV
#undef VMASK
#undef GATHER
#undef LOADV
#undef LANE
#endif
#undef LC_PMAX
#undef LC_TAB
#undef LC_TINY
#endif

/* Smoothing by bins: work-item (group and column, bin) replaces each valid
 * value of its `k` rows by the bin's mean, median or nearest boundary
 * (min or max; the min on a tie) of its valid values; missing values
 * stay. In place is safe: a work-item reads its bin before writing it. The median selects
 * in `tmp` (the unit's shape, the bin's own rows: no two work-items
 * share a place).
 * Reducing: out[(group * nbins + bin) * ncols + column] is the bin's
 * mean, median, sum or count of valid values (NaN for the mean and the
 * median of a bin with none). */
#if CLS_KERNEL == CLS_KID_BIN_SMOOTH || CLS_KERNEL == CLS_KID_BIN_REDUCE
/* The k-th smallest (0-based) of a[0], a[st], ... (n >= 1 finite values),
 * by quickselect in place (Hoare's partition, the middle as pivot): after
 * each partition [lo, j] <= pivot <= [i, hi], and between them all equal
 * the pivot. */
static REAL F(lc_select)(__global REAL *a, ulong st, long n, long k)
{
    long lo = 0, hi = n - 1;
    while (hi > lo) {
        REAL piv = a[(ulong)(lo + (hi - lo) / 2) * st];
        long i = lo, j = hi;
        do {
            while (a[(ulong)i * st] < piv) i++;
            while (piv < a[(ulong)j * st]) j--;
            if (i <= j) {
                REAL t = a[(ulong)i * st];
                a[(ulong)i * st] = a[(ulong)j * st];
                a[(ulong)j * st] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return a[(ulong)k * st];
}

#define LC_SMALL 32 /* bins up to this many rows take their median in private memory (lightcurve.c) */
#define LC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LC_MAX(a, b) ((a) < (b) ? (b) : (a))

/* The median (numpy's: the mean of the middle two of an even count; NaN
 * for none) of the valid values of rows [r0, r1) (at most N) of column
 * pointer px: loaded into a private array of N, the missing ones as +Inf
 * (no valid value is infinite), sorted by Batcher's network of the
 * smallest power of two that holds the bin (the same for every work-item:
 * no divergence), the middle ones read by constant indices (a private
 * array indexed at run time PoCL keeps out of registers). Two of them, N
 * = 16 and 32: bins up to 16 rows in an array of 32 took 1.4-2x the time
 * of one of 16 on PoCL (the loads and reads over all N). */
#define LC_MEDIAN_NET(NAME, N)                                                                   \
    static ACC F(NAME)(__global const REAL *px, ulong st, ulong r0, ulong r1, uint flags, REAL sent) \
    {                                                                                            \
        REAL w[N];                                                                               \
        uint k = (uint)(r1 - r0), qb = k <= 4 ? 4 : k <= 8 ? 8 : k <= 16 ? 16 : (N), cnt = 0;     \
        _Pragma("unroll") for (uint i = 0; i < (N); i++)                                          \
        {                                                                                        \
            REAL v = i < k ? px[(r0 + i) * st] : (REAL)INFINITY;                                 \
            int ok = i < k && F(lc_valid)(v, flags, sent);                                        \
            w[i] = ok ? v : (REAL)INFINITY;                                                      \
            cnt += ok;                                                                           \
        }                                                                                        \
        if (!cnt) return (ACC)NAN;                                                               \
        CLS_SORTNET_OEM_UPTO(REAL, w, qb, (N), LC_MIN, LC_MAX)                                   \
        uint m2 = cnt / 2, m1 = cnt & 1 ? m2 : m2 - 1;                                           \
        REAL lo = 0, hi = 0;                                                                     \
        _Pragma("unroll") for (uint i = 0; i < (N); i++)                                          \
        {                                                                                        \
            lo = i == m1 ? w[i] : lo;                                                            \
            hi = i == m2 ? w[i] : hi;                                                            \
        }                                                                                        \
        return ((ACC)lo + (ACC)hi) / 2;                                                          \
    }
LC_MEDIAN_NET(lc_median_net16, 16)
LC_MEDIAN_NET(lc_median_net32, LC_SMALL)
#undef LC_MEDIAN_NET
#if CLS_KERNEL == CLS_KID_BIN_SMOOTH
/* Smoothing by the median, a whole bin of exactly K rows (2 to 16; a
 * function for each K, a constant when it is built): Batcher's network of
 * QN (the power of two that holds K) without the compare-exchanges that
 * reach row K or past it (with +Inf there, as lc_median_net pads, they
 * would never move a value): 1 to 63 of them, 29 for bins of 10 where
 * lc_median_net16 takes 63, and no padding loaded or read. The missing
 * values sort last as +Inf, so the median is numpy's of the valid ones (a
 * bin with none: NaN), and each valid value of the bin is replaced by it
 * from the values loaded: one read and one write of the bin. In one
 * profile of bins of 10 on PoCL the kernel took 1030 samples, 1410 with
 * lc_median_net16. The stores stay behind the test of py (never NULL
 * here): stored unconditionally, PoCL's build took 1950 samples. The bins
 * reduced keep lc_median_net16: these networks took them 1180 samples
 * against 1010. */
#define LC_OEM_FIRST(T, w, QN, K, MIN, MAX)                                                       \
    _Pragma("unroll") for (uint p_ = 1; p_ < (QN); p_ <<= 1)                                    \
    _Pragma("unroll") for (uint k_ = p_; k_ >= 1; k_ >>= 1)                                     \
    _Pragma("unroll") for (uint j_ = k_ % p_; j_ + k_ <= (QN) - 1; j_ += 2 * k_)                \
    _Pragma("unroll") for (uint i_ = 0; i_ < k_ && i_ + j_ + k_ < (QN); i_++) {                 \
        uint l_ = i_ + j_, h_ = l_ + k_;                                                        \
        if (h_ < (K) && l_ / (2 * p_) == h_ / (2 * p_)) {                                       \
            T a_ = (w)[l_], b_ = (w)[h_];                                                       \
            (w)[l_] = MIN(a_, b_);                                                              \
            (w)[h_] = MAX(a_, b_);                                                              \
        }                                                                                       \
    }
/* isfinite() as a float compare (no move to an integer register per value) */
#define LC_OK(a) (fabs(a) < (REAL)INFINITY && !((flags & LC_F_SENT) && (a) == sent))
#define LC_MEDIAN_K(K, QN)                                                                        \
    static inline __attribute__((always_inline)) ACC F(lc_median_k##K)(__global const REAL *px, __global REAL *py, \
                                                                       ulong st, ulong r0, uint flags, REAL sent) \
    {                                                                                           \
        REAL v[K], w[K];                                                                        \
        uint cnt = 0;                                                                           \
        _Pragma("unroll") for (uint i = 0; i < (K); i++)                                        \
        {                                                                                       \
            REAL a = px[(r0 + i) * st];                                                         \
            int ok = LC_OK(a);                                                                  \
            v[i] = a;                                                                           \
            w[i] = ok ? a : (REAL)INFINITY;                                                     \
            cnt += ok;                                                                          \
        }                                                                                       \
        LC_OEM_FIRST(REAL, w, QN, K, LC_MIN, LC_MAX)                                            \
        uint m2 = cnt / 2, m1 = cnt & 1 ? m2 : m2 - 1;                                          \
        REAL lo = 0, hi = 0;                                                                    \
        _Pragma("unroll") for (uint i = 0; i < (K); i++)                                        \
        {                                                                                       \
            lo = i == m1 ? w[i] : lo;                                                           \
            hi = i == m2 ? w[i] : hi;                                                           \
        }                                                                                       \
        ACC s = cnt ? ((ACC)lo + (ACC)hi) / 2 : (ACC)NAN;                                       \
        if (py) {                                                                               \
            REAL sr = (REAL)s;                                                                  \
            _Pragma("unroll") for (uint i = 0; i < (K); i++)                                    \
                py[(r0 + i) * st] = LC_OK(v[i]) ? sr : v[i];                                    \
        }                                                                                       \
        return s;                                                                               \
    }
LC_MEDIAN_K(2, 2)
LC_MEDIAN_K(3, 4)
LC_MEDIAN_K(4, 4)
LC_MEDIAN_K(5, 8)
LC_MEDIAN_K(6, 8)
LC_MEDIAN_K(7, 8)
LC_MEDIAN_K(8, 8)
LC_MEDIAN_K(9, 16)
LC_MEDIAN_K(10, 16)
LC_MEDIAN_K(11, 16)
LC_MEDIAN_K(12, 16)
LC_MEDIAN_K(13, 16)
LC_MEDIAN_K(14, 16)
LC_MEDIAN_K(15, 16)
LC_MEDIAN_K(16, 16)
#undef LC_MEDIAN_K
#undef LC_OEM_FIRST
#undef LC_OK
#define LC_EXACT_MAX 16 /* whole bins up to this many rows: lc_median_exact */
/* The median of the whole bin of k rows (2 to LC_EXACT_MAX) at row r0 by
 * its own network (the same k for every bin of a call but the last) */
static ACC F(lc_median_exact)(__global const REAL *px, __global REAL *py, ulong st, ulong r0, uint k, uint flags,
                              REAL sent)
{
    switch (k) {
    case 2: return F(lc_median_k2)(px, py, st, r0, flags, sent);
    case 3: return F(lc_median_k3)(px, py, st, r0, flags, sent);
    case 4: return F(lc_median_k4)(px, py, st, r0, flags, sent);
    case 5: return F(lc_median_k5)(px, py, st, r0, flags, sent);
    case 6: return F(lc_median_k6)(px, py, st, r0, flags, sent);
    case 7: return F(lc_median_k7)(px, py, st, r0, flags, sent);
    case 8: return F(lc_median_k8)(px, py, st, r0, flags, sent);
    case 9: return F(lc_median_k9)(px, py, st, r0, flags, sent);
    case 10: return F(lc_median_k10)(px, py, st, r0, flags, sent);
    case 11: return F(lc_median_k11)(px, py, st, r0, flags, sent);
    case 12: return F(lc_median_k12)(px, py, st, r0, flags, sent);
    case 13: return F(lc_median_k13)(px, py, st, r0, flags, sent);
    case 14: return F(lc_median_k14)(px, py, st, r0, flags, sent);
    case 15: return F(lc_median_k15)(px, py, st, r0, flags, sent);
    default: return F(lc_median_k16)(px, py, st, r0, flags, sent);
    }
}
#endif
/* The statistic of the valid values of rows [r0, r1) of column pointer px */
static ACC F(lc_bin_stat)(__global const REAL *px, __global REAL *pt, ulong st, ulong r0, ulong r1, int method,
                          uint flags, REAL sent)
{
    /* the median of a short bin by a sorting network, one read of the bin;
     * longer bins select in scratch */
    if (method == LC_BIN_MEDIAN && r1 - r0 <= 16) return F(lc_median_net16)(px, st, r0, r1, flags, sent);
    if (method == LC_BIN_MEDIAN && r1 - r0 <= LC_SMALL) return F(lc_median_net32)(px, st, r0, r1, flags, sent);
    ACC sum = 0, comp = 0;
    uint cnt = 0;
    for (ulong r = r0; r < r1; r++) {
        REAL v = px[r * st];
        if (!F(lc_valid)(v, flags, sent)) continue;
        if (method == LC_BIN_MEDIAN) pt[(ulong)cnt * st] = v;
        ACC a = (ACC)v, s = sum + a;
        comp += fabs(sum) >= fabs(a) ? (sum - s) + a : (a - s) + sum;
        sum = s;
        cnt++;
    }
    if (method == LC_BIN_COUNT) return (ACC)cnt;
    if (method == LC_BIN_SUM) return sum + comp;
    if (!cnt) return (ACC)NAN;
    if (method == LC_BIN_MEAN) return (sum + comp) / (ACC)cnt;
    /* median: numpy's, the mean of the middle two of an even count; after
     * the selection of the upper one, the lower is the largest below it */
    ACC hi = (ACC)F(lc_select)(pt, st, (long)cnt, (long)(cnt / 2));
    if (cnt & 1) return hi;
    REAL lo = pt[0];
    for (uint r = 1; r < cnt / 2; r++) lo = fmax(lo, pt[(ulong)r * st]);
    return ((ACC)lo + hi) / 2;
}
#endif

#if CLS_KERNEL == CLS_KID_BIN_SMOOTH
/* work-item (group and column, nbw bins from bin id1 * nbw): several
 * short bins per work-item, so that a CPU's work-groups are not mostly
 * overhead */
__kernel void F(bin_smooth)(__global const REAL *x, __global REAL *y, __global REAL *tmp, uint ncols,
                            ulong nrows, uint ngroups, uint k, uint nbw, int method, uint flags, REAL sent)
{
    ulong gc = get_global_id(0);
    if (gc >= (ulong)ngroups * ncols) return;
    ulong gi = gc / ncols, c = gc % ncols;
    ulong base = gi * nrows * ncols + c;
    __global const REAL *px = x + base;
    __global REAL *py = y + base;
    for (ulong r0 = get_global_id(1) * (ulong)nbw * k, e = min(r0 + (ulong)nbw * k, nrows); r0 < e; r0 += k) {
        ulong r1 = min(r0 + k, nrows);
        if (method == LC_BIN_MEDIAN && r1 - r0 == (ulong)k && k >= 2 && k <= LC_EXACT_MAX) {
            /* read once, the median written back from the values loaded */
            F(lc_median_exact)(px, py, ncols, r0, k, flags, sent);
            continue;
        }
        REAL mn = INFINITY, mx = -INFINITY, s = 0;
        if (method == LC_BIN_BOUNDARY) {
            for (ulong r = r0; r < r1; r++) {
                REAL v = px[r * ncols];
                if (!F(lc_valid)(v, flags, sent)) continue;
                mn = fmin(mn, v);
                mx = fmax(mx, v);
            }
        } else {
            s = (REAL)F(lc_bin_stat)(px, tmp + base + r0 * ncols, ncols, r0, r1, method, flags, sent);
        }
        /* x may be y: each row read before it is written */
        for (ulong r = r0; r < r1; r++) {
            REAL v = px[r * ncols];
            if (F(lc_valid)(v, flags, sent)) v = method == LC_BIN_BOUNDARY ? ((v - mn) <= (mx - v) ? mn : mx) : s;
            py[r * ncols] = v;
        }
    }
}
#endif

#if CLS_KERNEL == CLS_KID_BIN_REDUCE
__kernel void F(bin_reduce)(__global const REAL *x, __global REAL *tmp, __global REAL *out, uint ncols,
                            ulong nrows, uint ngroups, uint k, uint nbw, int method, uint flags, REAL sent)
{
    ulong gc = get_global_id(0);
    if (gc >= (ulong)ngroups * ncols) return;
    ulong gi = gc / ncols, c = gc % ncols;
    ulong nbins = (nrows + k - 1) / k, base = gi * nrows * ncols + c;
    for (ulong b = get_global_id(1) * (ulong)nbw, e = min(b + nbw, nbins); b < e; b++) {
        ulong r0 = b * (ulong)k, r1 = min(r0 + k, nrows);
        REAL s = (REAL)F(lc_bin_stat)(x + base, tmp + base + r0 * ncols, ncols, r0, r1, method, flags, sent);
        out[(gi * nbins + b) * ncols + c] = s;
    }
}
#endif
