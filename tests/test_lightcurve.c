/* Light curves (cls_clean's trend and bins, cls_fit_transform (bins reduced)) against plain C
 * in float64: the moving average (scipy.ndimage.uniform_filter1d) and the
 * Savitzky-Golay trend (scipy.signal.savgol_filter) written as their
 * definitions, a window's values gathered one by one with the edges
 * extended by repeated reflection, a least-squares fit per row; bins as
 * numpy would take them. NaN, +-Inf and the sentinel are ignored in each
 * window and written as they were. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static cls_context *ctx;

static int group_setup(void **state)
{
    (void)state;
    ctx = test_context(NULL, 0, 0);
    return ctx ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    cls_context_destroy(ctx);
    return 0;
}

static int runs(cls_dtype t) { return t == CLS_F32 || !test_suite_is("rusticl"); }
/* float32 data: float64 sums where the device has them, float sums on rusticl */
static double tol(cls_dtype t) { return t == CLS_F64 ? 1e-10 : test_suite_is("rusticl") ? 2e-4 : 2e-5; }

static double get(const cls_array *a, size_t i)
{
    return a->dtype == CLS_F64 ? ((const double *)a->data)[i] : (double)((const float *)a->data)[i];
}
static void put(cls_array *a, size_t i, double v)
{
    if (a->dtype == CLS_F64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

static cls_array make(cls_dtype t, size_t b, size_t r, size_t c)
{
    cls_array a = {.data = calloc(b * r * c + 1, 8), .dtype = t, .batch = b, .rows = r, .cols = c};
    return a;
}

/* A light curve: a slow trend, a transit, noise; column c at offset 10 c */
static cls_array curves(cls_dtype t, size_t b, size_t r, size_t c, uint64_t seed)
{
    cls_array a = make(t, b, r, c);
    rng g;
    rng_seed(&g, seed);
    for (size_t k = 0; k < b; k++)
        for (size_t i = 0; i < r; i++)
            for (size_t j = 0; j < c; j++) {
                double v = 10.0 * (double)j + 3 + sin((double)i * 0.05 + (double)k) +
                           (i % 37 < 3 ? -0.5 : 0) + 0.1 * rng_normal(&g);
                put(&a, (k * r + i) * c + j, v);
            }
    return a;
}

static int valid(double v, const cls_clean *o) { return isfinite(v) && !(o->has_missing_value && v == o->missing_value); }

/* extended row j of n by the edge mode, repeated until inside; -1: cval */
static long ext(long j, long n, cls_edge e)
{
    while (j < 0 || j >= n) {
        switch (e) {
        case CLS_EDGE_NEAREST: return j < 0 ? 0 : n - 1;
        case CLS_EDGE_WRAP: j = j < 0 ? j + n : j - n; break;
        case CLS_EDGE_REFLECT: j = j < 0 ? -1 - j : 2 * n - 1 - j; break;
        case CLS_EDGE_MIRROR:
            if (n == 1) return 0;
            j = j < 0 ? -j : 2 * n - 2 - j;
            break;
        default: return -1;
        }
    }
    return j;
}

/* Solves the q x q system m a = b (Gauss-Jordan, partial pivoting); 0 if singular */
static int solve(double m[10][10], double *b, int q)
{
    for (int k = 0; k < q; k++) {
        int p = k;
        for (int r = k + 1; r < q; r++)
            if (fabs(m[r][k]) > fabs(m[p][k])) p = r;
        if (fabs(m[p][k]) < 1e-12) return 0;
        for (int c = 0; c < q; c++) {
            double t = m[k][c];
            m[k][c] = m[p][c];
            m[p][c] = t;
        }
        double t = b[k];
        b[k] = b[p];
        b[p] = t;
        for (int r = 0; r < q; r++) {
            if (r == k) continue;
            double f = m[r][k] / m[k][k];
            for (int c = 0; c < q; c++) m[r][c] -= f * m[k][c];
            b[r] -= f * b[k];
        }
    }
    for (int k = 0; k < q; k++) b[k] /= m[k][k];
    return 1;
}

/* The trend at row i of the series s[0..n) (stride 1), as the options say. */
static double ref_trend(const double *s, long n, long i, const cls_clean *o)
{
    long w = (long)o->window;
    if (o->detrend == CLS_DETREND_MEAN) {
        cls_edge e = o->edge ? o->edge : CLS_EDGE_REFLECT;
        long a = i - w / 2 - o->origin;
        double sum = 0;
        long cnt = 0;
        for (long j = a; j < a + w; j++) {
            long k = ext(j, n, e);
            double v = k < 0 ? o->cval : s[k];
            if (valid(v, o)) {
                sum += v;
                cnt++;
            }
        }
        return cnt ? sum / (double)cnt : NAN;
    }
    cls_edge e = o->edge ? o->edge : CLS_EDGE_INTERP;
    long a = i - (w - 1) / 2;
    double pos = (double)i + (w % 2 ? 0 : 0.5); /* the evaluation point */
    if (e == CLS_EDGE_INTERP && i < w / 2) {
        a = 0;
        pos = (double)i;
    } else if (e == CLS_EDGE_INTERP && i >= n - w / 2) {
        a = n - w;
        pos = (double)i;
    }
    int q = (int)o->polyorder + 1;
    double m[10][10] = {{0}}, b[10] = {0};
    /* positions in half-windows: the normal equations of long windows and
     * high orders stay well conditioned in float64 */
    double hs = w > 2 ? (double)(w - 1) / 2 : 1;
    long cnt = 0;
    for (long j = a; j < a + w; j++) {
        long k = ext(j, n, e == CLS_EDGE_INTERP ? CLS_EDGE_CONSTANT : e);
        double v = k < 0 ? o->cval : s[k];
        if (!valid(v, o)) continue;
        cnt++;
        double t = ((double)j - pos) / hs;
        for (int r = 0; r < q; r++)
            for (int c = 0; c < q; c++) m[r][c] += pow(t, r + c);
        for (int r = 0; r < q; r++) b[r] += v * pow(t, r);
    }
    if ((int)o->deriv >= q) return 0;
    if (cnt < q || !solve(m, b, q)) return NAN;
    double f = 1;
    for (unsigned k = 2; k <= o->deriv; k++) f *= k;
    return b[o->deriv] * f / pow(hs * (o->delta > 0 ? o->delta : 1), (double)o->deriv);
}

/* The reference of cls_fit_transform with only light-curve fields set */
static void ref_lc(const cls_array *x, cls_scope scope, const cls_clean *o, double *want)
{
    size_t G = scope == CLS_SCOPE_BATCH ? 1 : x->batch, R = scope == CLS_SCOPE_BATCH ? x->batch * x->rows : x->rows;
    size_t C = x->cols;
    double *s = malloc(R * 8), *t = malloc(R * 8);
    for (size_t g = 0; g < G; g++)
        for (size_t c = 0; c < C; c++) {
            for (size_t i = 0; i < R; i++) s[i] = get(x, (g * R + i) * C + c);
            for (size_t i = 0; i < R; i++) {
                t[i] = s[i];
                /* the trend is written at every row, the rest keeps missing values */
                if ((!valid(s[i], o) && o->detrend_op != CLS_DETREND_TREND) || o->detrend == CLS_DETREND_NONE)
                    continue;
                double tr = ref_trend(s, (long)R, (long)i, o);
                t[i] = o->detrend_op == CLS_DETREND_TREND ? tr : o->detrend_op == CLS_DETREND_DIVIDE ? s[i] / tr
                                                                                                     : s[i] - tr;
            }
            for (size_t b0 = 0; o->bin_rows && b0 < R; b0 += o->bin_rows) {
                size_t b1 = b0 + o->bin_rows < R ? b0 + o->bin_rows : R, n = 0;
                double v[4096], sum = 0, mn = INFINITY, mx = -INFINITY;
                for (size_t i = b0; i < b1; i++)
                    if (valid(t[i], o)) {
                        v[n++] = t[i];
                        sum += t[i];
                        mn = fmin(mn, t[i]);
                        mx = fmax(mx, t[i]);
                    }
                /* the median by insertion sort */
                for (size_t i = 1; i < n; i++)
                    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
                        double tmp = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = tmp;
                    }
                double med = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
                for (size_t i = b0; i < b1; i++) {
                    if (!valid(t[i], o)) continue;
                    t[i] = o->bin_stat == CLS_BIN_MEAN     ? sum / (double)n
                           : o->bin_stat == CLS_BIN_MEDIAN ? med
                           : (t[i] - mn <= mx - t[i])      ? mn
                                                           : mx;
                }
            }
            /* the cleaning writes the sentinel as NaN (cls_clean) */
            for (size_t i = 0; i < R; i++)
                want[(g * R + i) * C + c] = o->has_missing_value && t[i] == o->missing_value ? NAN : t[i];
        }
    free(s);
    free(t);
}

static void run_check(const cls_array *x, cls_scope scope, const cls_clean *o, const char *what)
{
    size_t n = x->batch * x->rows * x->cols;
    cls_array y = make(x->dtype, x->batch, x->rows, x->cols);
    double *want = malloc(n * 8);
    ref_lc(x, scope, o, want);
    cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = o}, x, &y, NULL);
    if (st != CLS_OK) fail_msg("%s: %s: %s", what, cls_status_str(st), cls_last_error(ctx));
    /* relative to the column's scale: a trend subtracted leaves values
     * near 0 whose error is the trend's */
    for (size_t i = 0; i < n; i++) {
        double e = want[i], a = get(&y, i), sc = fmax(1, fabs(get(x, i)));
        if (x->dtype == CLS_F32) e = (double)(float)e;
        int ok = (isnan(e) && isnan(a)) || e == a || fabs(a - e) <= tol(x->dtype) * fmax(sc, fabs(e));
        if (!ok)
            fail_msg("%s (%s, window %u, polyorder %u, edge %d, op %d, bins %u/%d): value %zu (row %zu, col %zu): "
                     "got %.17g, want %.17g", what, x->dtype == CLS_F64 ? "f64" : "f32", o->window, o->polyorder,
                     (int)o->edge, (int)o->detrend_op, o->bin_rows, (int)o->bin_stat, i, i / x->cols % x->rows,
                     i % x->cols, a, e);
    }
    /* in place: the same values */
    cls_array z = make(x->dtype, x->batch, x->rows, x->cols);
    memcpy(z.data, x->data, n * (x->dtype == CLS_F64 ? 8 : 4));
    st = cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = o}, &z, &z, NULL);
    if (st != CLS_OK) fail_msg("%s in place: %s: %s", what, cls_status_str(st), cls_last_error(ctx));
    assert_memory_equal(z.data, y.data, n * (x->dtype == CLS_F64 ? 8 : 4));
    free(z.data);
    free(y.data);
    free(want);
}

static void moving_average_equals_reference_every_edge_and_window(void **state)
{
    (void)state;
    const unsigned windows[] = {1, 2, 5, 8, 31, 120};
    const cls_edge edges[] = {CLS_EDGE_DEFAULT, CLS_EDGE_REFLECT, CLS_EDGE_MIRROR, CLS_EDGE_NEAREST,
                              CLS_EDGE_CONSTANT, CLS_EDGE_WRAP};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = curves(t, 3, 50, 5, 11 + (uint64_t)ti);
        for (size_t wi = 0; wi < sizeof windows / sizeof *windows; wi++)
            for (size_t ei = 0; ei < sizeof edges / sizeof *edges; ei++) {
                cls_clean o = {0};
                o.detrend = CLS_DETREND_MEAN;
                o.detrend_op = (cls_detrend_op)((wi + ei) % 3);
                o.window = windows[wi];
                o.edge = edges[ei];
                o.cval = edges[ei] == CLS_EDGE_CONSTANT ? 2.5 : 0;
                o.origin = wi == 3 ? (ei % 2 ? -4 : 3) : 0;
                run_check(&x, CLS_SCOPE_MATRIX, &o, "moving average");
            }
        free(x.data);
    }
}

static void savgol_equals_reference_every_edge_and_window(void **state)
{
    (void)state;
    const unsigned wp[][3] = {{1, 0, 0}, {2, 1, 0}, {5, 2, 0}, {8, 3, 0}, {11, 2, 1}, {21, 4, 2}, {50, 2, 0}};
    const cls_edge edges[] = {CLS_EDGE_DEFAULT, CLS_EDGE_MIRROR, CLS_EDGE_NEAREST, CLS_EDGE_CONSTANT,
                              CLS_EDGE_WRAP, CLS_EDGE_INTERP};
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = curves(t, 2, 50, 3, 21 + (uint64_t)ti);
        for (size_t wi = 0; wi < sizeof wp / sizeof *wp; wi++)
            for (size_t ei = 0; ei < sizeof edges / sizeof *edges; ei++) {
                cls_clean o = {0};
                o.detrend = CLS_DETREND_SAVGOL;
                o.detrend_op = wp[wi][2] ? CLS_DETREND_TREND : (cls_detrend_op)((wi + ei) % 3);
                o.window = wp[wi][0];
                o.polyorder = wp[wi][1];
                o.deriv = wp[wi][2];
                o.delta = wp[wi][2] ? 0.5 : 0;
                o.edge = edges[ei];
                o.cval = edges[ei] == CLS_EDGE_CONSTANT ? -1.5 : 0;
                run_check(&x, CLS_SCOPE_MATRIX, &o, "savgol");
            }
        free(x.data);
    }
}

/* a window longer than the series (not interp: scipy refuses it there) */
static void windows_longer_than_the_series(void **state)
{
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = curves(t, 2, 7, 3, 5);
        for (int e = CLS_EDGE_REFLECT; e <= CLS_EDGE_WRAP; e++) {
            cls_clean o = {0};
            o.detrend = CLS_DETREND_MEAN;
            o.detrend_op = CLS_DETREND_TREND;
            o.window = 30;
            o.edge = (cls_edge)e;
            run_check(&x, CLS_SCOPE_MATRIX, &o, "long moving average");
            if (e == CLS_EDGE_REFLECT) continue;
            o.detrend = CLS_DETREND_SAVGOL;
            o.window = 17;
            o.polyorder = 2;
            run_check(&x, CLS_SCOPE_MATRIX, &o, "long savgol");
        }
        /* one row */
        cls_array one = curves(t, 3, 1, 2, 6);
        cls_clean o = {.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 1, .edge = CLS_EDGE_MIRROR,
                       .detrend_op = CLS_DETREND_TREND};
        run_check(&one, CLS_SCOPE_MATRIX, &o, "one row");
        free(one.data);
        free(x.data);
    }
}

static void missing_values_are_ignored_in_windows_and_kept(void **state)
{
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = curves(t, 2, 80, 4, 31);
        for (size_t i = 0; i < 80; i++) {
            if (i >= 20 && i < 31) put(&x, i * 4 + 0, NAN);           /* a gap longer than a window */
            if (i % 9 == 4) put(&x, (80 + i) * 4 + 1, -9999);          /* the sentinel */
            if (i == 3) put(&x, i * 4 + 2, INFINITY);
        }
        for (size_t i = 0; i < 80; i++) put(&x, i * 4 + 3, NAN);       /* a column with nothing */
        for (int k = 0; k < 6; k++) {
            cls_clean o = {0};
            o.has_missing_value = 1;
            o.missing_value = -9999;
            o.detrend = k < 3 ? CLS_DETREND_MEAN : CLS_DETREND_SAVGOL;
            o.window = k < 3 ? 9 : 7;
            o.polyorder = k < 3 ? 0 : 2;
            o.edge = k % 3 == 0 ? CLS_EDGE_DEFAULT : k % 3 == 1 ? CLS_EDGE_NEAREST : CLS_EDGE_WRAP;
            o.detrend_op = (cls_detrend_op)(k % 3);
            o.bin_rows = k % 2 ? 6 : 0;
            o.bin_stat = k % 2 ? (cls_bin_stat)(1 + k / 2 % 3) : CLS_BIN_NONE;
            run_check(&x, CLS_SCOPE_MATRIX, &o, "with gaps");
            run_check(&x, CLS_SCOPE_BATCH, &o, "with gaps, batch scope");
        }
        free(x.data);
    }
}

/* Savitzky-Golay windows with missing values one after the other (15 % of
 * the values scattered, a gap, the sentinel), long enough to span several
 * rows per work-item: the moments of the valid positions slide from row to
 * row (exact integers), or are counted afresh per window where their
 * integers could overflow (polyorder 3, a window of 451: 7 powers of 451
 * exceed a long); every edge mode, polyorders 1 to 3, 1 to 3 columns (the
 * CPUs' lane layouts). */
static void savgol_with_scattered_missing_values(void **state)
{
    (void)state;
    const unsigned wp[][2] = {{31, 2}, {101, 2}, {30, 1}, {31, 3}, {451, 3}};
    const cls_edge edges[] = {CLS_EDGE_INTERP, CLS_EDGE_MIRROR, CLS_EDGE_NEAREST, CLS_EDGE_CONSTANT, CLS_EDGE_WRAP};
    int small = test_suite_is("oclgrind");
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        for (size_t wi = 0; wi < sizeof wp / sizeof *wp; wi++) {
            if (small && wp[wi][0] > 31) continue;
            size_t R = small ? 150 : wp[wi][0] > 200 ? 1001 : 1203, C = 1 + wi % 3;
            cls_array x = curves(t, 2, R, C, 41 + wi);
            rng g;
            rng_seed(&g, 43 + wi);
            for (size_t i = 0; i < 2 * R * C; i++)
                if (rng_uniform(&g) < 0.15) put(&x, i, i % 5 ? NAN : -9999);
            /* a gap of 12 rows: every window keeps more than half its rows (a
             * fit through a few values at one end of a window, extrapolated to
             * its centre, is ill-conditioned: test_lightcurve.py's gap) */
            for (size_t i = R / 3; i < R / 3 + 12; i++) put(&x, i * C, NAN);
            for (size_t ei = 0; ei < sizeof edges / sizeof *edges; ei++) {
                cls_clean o = {0};
                o.has_missing_value = 1;
                o.missing_value = -9999;
                o.detrend = CLS_DETREND_SAVGOL;
                o.window = wp[wi][0];
                o.polyorder = wp[wi][1];
                o.edge = edges[ei];
                o.cval = edges[ei] == CLS_EDGE_CONSTANT ? 2.5 : 0;
                o.detrend_op = (cls_detrend_op)((wi + ei) % 3);
                run_check(&x, CLS_SCOPE_MATRIX, &o, "savgol, scattered missing values");
            }
            free(x.data);
        }
    }
}

/* Without float64 (rusticl) a window whose moments take no exact integers
 * and whose rows cost more loop trips than a work-item may run is refused,
 * naming the device, not computed wrong; with float64 it runs. */
static void float_sums_refuse_windows_past_the_loop_bound(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind")) test_skip("a window of 6001 rows: too slow under Oclgrind (PoCL runs it with float64)");
    cls_array x = curves(CLS_F32, 1, 300, 2, 61);
    put(&x, 200, NAN);
    cls_array y = make(CLS_F32, 1, 300, 2);
    cls_clean o = {.detrend = CLS_DETREND_SAVGOL, .window = 6001, .polyorder = 2, .edge = CLS_EDGE_NEAREST};
    cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &x, &y, NULL);
    if (test_suite_is("rusticl")) {
        assert_int_equal(st, CLS_E_UNSUPPORTED);
        assert_non_null(strstr(cls_last_error(ctx), "device"));
        assert_non_null(strstr(cls_last_error(ctx), "6001"));
    } else {
        assert_int_equal(st, CLS_OK);
    }
    free(x.data);
    free(y.data);
}

static void bins_smooth_by_mean_median_and_boundary(void **state)
{
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        cls_array x = curves(t, 3, 47, 6, 41);
        put(&x, 5 * 6 + 1, NAN);
        const unsigned ks[] = {1, 2, 10, 47, 100};
        for (size_t ki = 0; ki < 5; ki++)
            for (int m = CLS_BIN_MEAN; m <= CLS_BIN_BOUNDARY; m++) {
                cls_clean o = {.bin_rows = ks[ki], .bin_stat = (cls_bin_stat)m};
                run_check(&x, CLS_SCOPE_MATRIX, &o, "bins");
            }
        free(x.data);
    }
}

/* The median of a bin of up to 32 rows (a sorting network of 4, 8, 16 or
 * 32 values, cl/lightcurve.cl's lc_median_net; smoothed whole bins of 2 to
 * 16 rows by a network of their own length, lc_smooth_median, 17 one
 * past it) and of a longer one (a selection in scratch), every length
 * from 1 to 34, the last bin shorter: exactly numpy's median of the bin's
 * valid values (ties, NaN, Inf, a missing-value sentinel, a bin with none
 * valid), reduced and smoothed. */
static void median_of_bins_of_every_length_is_exact(void **state)
{
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        size_t B = 2, R = test_suite_is("oclgrind") ? 41 : 101, C = 3;
        cls_array x = make(t, B, R, C);
        rng g;
        rng_seed(&g, 61);
        for (size_t i = 0; i < B * R * C; i++) {
            double v = floor(rng_normal(&g) * 4) / 2; /* ties */
            size_t row = (i / C) % R, c = i % C;
            if (c == 1 && row % 7 == 2) v = NAN;
            if (c == 1 && row % 11 == 4) v = row % 2 ? INFINITY : -INFINITY;
            if (c == 2 && row >= 30 && row < 64) v = NAN; /* bins with nothing valid */
            put(&x, i, v);
        }
        for (unsigned k = 1; k <= 34; k++)
            for (int run = 2 * (k == 1); run < 4; run++) { /* (bins of 1 keep the shape: smoothing) */
                /* runs 0, 1 reduced, 2, 3 smoothed; 1 and 3 with 0.5 (a frequent value) as the
                 * sentinel, for the networks' lengths and one past (Oclgrind's time) */
                if ((run & 1) && k > 17) continue;
                int smooth = run >= 2;
                size_t nb = (R + k - 1) / k, orows = smooth ? R : nb;
                cls_array y = make(t, B, orows, C);
                cls_clean o = {.bin_rows = k, .bin_stat = CLS_BIN_MEDIAN, .has_missing_value = run & 1,
                               .missing_value = run & 1 ? 0.5 : 0};
                cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &x, &y, NULL);
                if (st != CLS_OK) fail_msg("bins of %u: %s", k, cls_last_error(ctx));
                for (size_t gi = 0; gi < B; gi++)
                    for (size_t b = 0; b < nb; b++)
                        for (size_t c = 0; c < C; c++) {
                            double v[64];
                            size_t n = 0;
                            for (size_t i = b * k; i < (b + 1) * k && i < R; i++) {
                                double a = get(&x, (gi * R + i) * C + c);
                                if (!valid(a, &o)) continue;
                                size_t j = n++;
                                for (; j > 0 && v[j - 1] > a; j--) v[j] = v[j - 1];
                                v[j] = a;
                            }
                            double e = !n ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
                            if (t == CLS_F32) e = (float)e;
                            for (size_t i = b * k; i < (b + 1) * k && i < R; i++) {
                                size_t at = smooth ? (gi * R + i) * C + c : (gi * nb + b) * C + c;
                                /* a missing value stays, the sentinel as NaN (the cleaning's rule) */
                                double a = get(&x, (gi * R + i) * C + c);
                                double want = smooth && !valid(a, &o) ? (isfinite(a) ? NAN : a) : e;
                                double got = get(&y, at);
                                if (!(got == want || (isnan(got) && isnan(want))))
                                    fail_msg("%s bins of %u, %s%s: group %zu bin %zu column %zu: %.17g, numpy's "
                                             "%.17g", t == CLS_F64 ? "float64" : "float32", k,
                                             smooth ? "smoothed" : "reduced", run & 1 ? " (sentinel 0.5)" : "", gi, b,
                                             c, got, want);
                                if (!smooth) break;
                            }
                        }
                free(y.data);
            }
        free(x.data);
    }
}

static void bins_reduce_to_one_row_each(void **state)
{
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F64 : CLS_F32;
        if (!runs(t)) continue;
        size_t B = 2, R = 23, C = 5;
        cls_array x = curves(t, B, R, C, 51);
        for (size_t i = 0; i < R; i++) put(&x, i * C + 2, i < 10 ? NAN : get(&x, i * C + 2));
        const unsigned ks[] = {1, 4, 10, 23, 40};
        for (size_t ki = 0; ki < 5; ki++)
            for (int m = CLS_BIN_MEAN; m <= CLS_BIN_COUNT; m++) {
                if (m == CLS_BIN_BOUNDARY) continue;
                unsigned k = ks[ki];
                size_t nb = (R + k - 1) / k;
                cls_array y = make(t, B, nb, C);
                cls_clean o = {.bin_rows = k, .bin_stat = (cls_bin_stat)m};
                cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &x, &y, NULL);
                if (st != CLS_OK) fail_msg("cls_fit_transform (bins reduced): %s: %s", cls_status_str(st), cls_last_error(ctx));
                for (size_t g = 0; g < B; g++)
                    for (size_t b = 0; b < nb; b++)
                        for (size_t c = 0; c < C; c++) {
                            double v[64], sum = 0;
                            size_t n = 0;
                            for (size_t i = b * k; i < (b + 1) * k && i < R; i++) {
                                double a = get(&x, (g * R + i) * C + c);
                                if (!isfinite(a)) continue;
                                v[n++] = a;
                                sum += a;
                            }
                            for (size_t i = 1; i < n; i++)
                                for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
                                    double tmp = v[j];
                                    v[j] = v[j - 1];
                                    v[j - 1] = tmp;
                                }
                            double e = m == CLS_BIN_COUNT ? (double)n
                                       : m == CLS_BIN_SUM ? sum
                                       : !n               ? NAN
                                       : m == CLS_BIN_MEAN ? sum / (double)n
                                                           : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
                            assert_close(get(&y, (g * nb + b) * C + c), e, tol(t));
                        }
                free(y.data);
            }
        free(x.data);
    }
}

/* cls_fit_transform (bins reduced) cleans and detrends into a copy first (in only read), and
 * in batch scope a group is every matrix's rows one after the other */
static void bins_reduce_after_cleaning_and_trend(void **state)
{
    (void)state;
    cls_dtype t = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    size_t B = 2, R = 30, C = 3, es = t == CLS_F64 ? 8 : 4;
    cls_array x = curves(t, B, R, C, 91);
    put(&x, 7 * C, 300);
    cls_array keep = make(t, B, R, C);
    memcpy(keep.data, x.data, B * R * C * es);
    for (int sc = 0; sc < 2; sc++) {
        cls_scope scope = sc ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
        size_t G = sc ? 1 : B, Rg = sc ? B * R : R, nb = (Rg + 3) / 4;
        cls_clean all = {.sigma = 3, .detrend = CLS_DETREND_MEAN, .window = 5, .bin_rows = 4,
                         .bin_stat = CLS_BIN_MEDIAN};
        cls_clean pre = all, bins = {.bin_rows = 4, .bin_stat = CLS_BIN_MEDIAN};
        pre.bin_rows = 0;
        pre.bin_stat = CLS_BIN_NONE;
        cls_array y = make(t, G, nb, C), z = make(t, G, nb, C), mid = make(t, B, R, C);
        assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &all}, &x, &y, NULL), CLS_OK);
        assert_memory_equal(x.data, keep.data, B * R * C * es);
        assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &pre}, &x, &mid, NULL), CLS_OK);
        assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = scope, .clean = &bins}, &mid, &z, NULL), CLS_OK);
        assert_memory_equal(y.data, z.data, G * nb * C * es);
        free(y.data);
        free(z.data);
        free(mid.data);
    }
    free(keep.data);
    free(x.data);
}

/* clipping first, then the trend: the same as the two calls one after the other */
static void clipping_then_trend_then_bins(void **state)
{
    (void)state;
    cls_dtype t = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    cls_array x = curves(t, 2, 60, 3, 61);
    put(&x, 10 * 3, 500);
    put(&x, 40 * 3 + 1, -400);
    size_t n = 2 * 60 * 3, es = t == CLS_F64 ? 8 : 4;
    cls_clean all = {.sigma = 3, .detrend = CLS_DETREND_SAVGOL, .window = 11, .polyorder = 2,
                     .detrend_op = CLS_DETREND_DIVIDE, .bin_rows = 5, .bin_stat = CLS_BIN_MEDIAN};
    cls_clean clip = {.sigma = 3}, rest = all;
    rest.sigma = 0;
    cls_array y = make(t, 2, 60, 3), z = make(t, 2, 60, 3);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &all}, &x, &y, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &clip}, &x, &z, NULL), CLS_OK);
    assert_true(isnan(get(&z, 10 * 3)));
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &rest}, &z, &z, NULL), CLS_OK);
    assert_memory_equal(y.data, z.data, n * es);
    free(x.data);
    free(y.data);
    free(z.data);
}

/* astropy's sigma_clip(r, sigma, maxiters=5) (median, std) of n values:
 * bounds from the values every earlier iteration kept, until one clips
 * nothing new; clipped (1) are the finite values outside the last bounds */
static void ref_sigma_clip(const double *r, size_t n, double sigma, unsigned char *clipped)
{
    unsigned char *kept = malloc(n + 1);
    double *v = malloc(n * 8 + 8), lo = -INFINITY, hi = INFINITY;
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) nk += kept[i] = isfinite(r[i]) != 0;
    for (int it = 0; it < 5 && nk; it++) {
        size_t m = 0;
        double sum = 0, ss = 0;
        for (size_t i = 0; i < n; i++)
            if (kept[i]) v[m++] = r[i];
        for (size_t i = 1; i < m; i++) /* insertion sort: the median */
            for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
                double t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
        double med = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
        for (size_t i = 0; i < m; i++) sum += v[i];
        for (size_t i = 0; i < m; i++) ss += (v[i] - sum / (double)m) * (v[i] - sum / (double)m);
        double sd = sqrt(ss / (double)m);
        lo = med - sigma * sd;
        hi = med + sigma * sd;
        size_t left = 0;
        for (size_t i = 0; i < n; i++) {
            if (kept[i] && (r[i] < lo || r[i] > hi)) kept[i] = 0;
            left += kept[i];
        }
        if (left == nk) break;
        nk = left;
    }
    for (size_t i = 0; i < n; i++) clipped[i] = isfinite(r[i]) && (r[i] < lo || r[i] > hi);
    free(kept);
    free(v);
}

/* lightkurve's flatten as cls_clean's flatten_niters describes it, per
 * column of each matrix in float64: the trend of the values kept, the
 * sigma clip of x - trend over the whole column, its clipped finite
 * residuals left out of the next fit, detrend_op with the last trend */
static void ref_flatten(const cls_array *x, const cls_clean *o, double *want)
{
    size_t G = x->batch, R = x->rows, C = x->cols;
    double *s = malloc(R * 8), *w = malloc(R * 8), *tr = malloc(R * 8), *res = malloc(R * 8);
    unsigned char *cl = malloc(R);
    unsigned fits = o->flatten_niters ? o->flatten_niters : 1;
    double sigma = o->flatten_sigma > 0 ? o->flatten_sigma : 3;
    for (size_t g = 0; g < G; g++)
        for (size_t c = 0; c < C; c++) {
            for (size_t i = 0; i < R; i++) w[i] = s[i] = get(x, (g * R + i) * C + c);
            for (unsigned it = 0; it < fits; it++) {
                for (size_t i = 0; i < R; i++) tr[i] = ref_trend(w, (long)R, (long)i, o);
                if (it + 1 == fits) break;
                for (size_t i = 0; i < R; i++) res[i] = valid(s[i], o) ? s[i] - tr[i] : NAN;
                ref_sigma_clip(res, R, sigma, cl);
                for (size_t i = 0; i < R; i++)
                    if (cl[i]) w[i] = NAN;
            }
            for (size_t i = 0; i < R; i++) {
                double v = s[i];
                want[(g * R + i) * C + c] = o->detrend_op == CLS_DETREND_TREND ? tr[i] : !valid(v, o) ? v
                                            : o->detrend_op == CLS_DETREND_DIVIDE ? v / tr[i] : v - tr[i];
            }
        }
    free(s);
    free(w);
    free(tr);
    free(res);
    free(cl);
}

static size_t const_col = SIZE_MAX, const_matrix = SIZE_MAX; /* flatten_check's constant column */

/* flatten as the library's calls one after the other: the trend
 * (detrend_op TREND), x - trend, its sigma clip's mask (CLS_CLIP_KEEP),
 * the finite residuals clipped turned NaN, then detrend_op in the data's
 * type. With float sums (rusticl) a float64 reference's clip may decide
 * a value near a bound the other way: these steps are its reference. */
static void steps_flatten(const cls_array *x, const cls_clean *o, double *want)
{
    size_t n = x->batch * x->rows * x->cols;
    cls_array w = make(x->dtype, x->batch, x->rows, x->cols), tr = make(x->dtype, x->batch, x->rows, x->cols);
    uint8_t *mask = malloc(n);
    memcpy(w.data, x->data, n * (x->dtype == CLS_F64 ? 8 : 4));
    cls_clean fit = *o;
    fit.detrend_op = CLS_DETREND_TREND;
    fit.flatten_niters = 0;
    fit.flatten_sigma = 0;
    unsigned fits = o->flatten_niters ? o->flatten_niters : 1;
    for (unsigned it = 0; it < fits; it++) {
        assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &fit}, &w, &tr, NULL), CLS_OK);
        if (it + 1 == fits) break;
        for (size_t i = 0; i < n; i++) {
            double v = get(x, i);
            put(&tr, i, valid(v, o) ? (x->dtype == CLS_F32 ? (double)((float)v - (float)get(&tr, i))
                                                           : v - get(&tr, i)) : NAN);
        }
        cls_clean clip = {.sigma = o->flatten_sigma > 0 ? o->flatten_sigma : 3, .maxiters = 5,
                          .mode = CLS_CLIP_KEEP, .mask_out = mask};
        assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &clip}, &tr, &tr, NULL), CLS_OK);
        for (size_t i = 0; i < n; i++)
            if (mask[i] && isfinite(get(&tr, i))) put(&w, i, NAN);
    }
    for (size_t i = 0; i < n; i++) {
        double v = get(x, i), m = get(&tr, i);
        double r = o->detrend_op == CLS_DETREND_TREND ? m : !valid(v, o) ? v
                   : o->detrend_op == CLS_DETREND_DIVIDE ? (x->dtype == CLS_F32 ? (double)((float)v / (float)m) : v / m)
                   : (x->dtype == CLS_F32 ? (double)((float)v - (float)m) : v - m);
        want[i] = r;
    }
    free(w.data);
    free(tr.data);
    free(mask);
}

static void flatten_check(const cls_array *x, const cls_clean *o, const char *what)
{
    size_t n = x->batch * x->rows * x->cols, es = x->dtype == CLS_F64 ? 8 : 4;
    cls_array y = make(x->dtype, x->batch, x->rows, x->cols);
    double *want = malloc(n * 8);
    int steps = x->dtype == CLS_F32 && test_suite_is("rusticl");
    if (steps) steps_flatten(x, o, want);
    else ref_flatten(x, o, want);
    cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.clean = o}, x, &y, NULL);
    if (st != CLS_OK) fail_msg("%s: %s: %s", what, cls_status_str(st), cls_last_error(ctx));
    for (size_t i = 0; steps && i < n; i++) {
        double e = want[i], a = get(&y, i);
        int near = o->flatten_niters == 0 && fabs(a - e) <= tol(x->dtype) * fmax(1, fabs(e));
        if (!((isnan(e) && isnan(a)) || e == a || near))
            fail_msg("%s (f32, window %u, polyorder %u, niters %u): value %zu: got %.17g, the steps %.17g", what,
                     o->window, o->polyorder, o->flatten_niters, i, a, e);
    }
    for (size_t i = 0; !steps && i < n; i++) {
        double e = want[i], a = get(&y, i), sc = fmax(1, fabs(get(x, i)));
        if (x->dtype == CLS_F32) e = (double)(float)e;
        /* a constant column's residuals are the fits' rounding, which a
         * clip's bounds (a std of ~1e-15) cut anywhere: its trend is the
         * constant, its flattened values 1, whatever was left out */
        if (i % x->cols == const_col && i / (x->cols * x->rows) == const_matrix) {
            double c = get(x, i), m = o->detrend_op == CLS_DETREND_TREND ? c
                                    : o->detrend_op == CLS_DETREND_DIVIDE ? 1 : 0;
            if (!(fabs(a - m) <= 1e-4 * fabs(c)))
                fail_msg("%s: constant %g: row %zu: got %.17g, want %g", what, c, i / x->cols % x->rows, a, m);
            continue;
        }
        double ft = x->dtype == CLS_F64 ? 1e-8 : 4 * tol(x->dtype);
        int ok = (isnan(e) && isnan(a)) || e == a || fabs(a - e) <= ft * fmax(sc, fabs(e));
        if (!ok)
            fail_msg("%s (%s, window %u, polyorder %u, edge %d, op %d, niters %u): value %zu (matrix %zu, row %zu, "
                     "col %zu): got %.17g, want %.17g", what, x->dtype == CLS_F64 ? "f64" : "f32", o->window,
                     o->polyorder, (int)o->edge, (int)o->detrend_op, o->flatten_niters, i,
                     i / (x->cols * x->rows), i / x->cols % x->rows, i % x->cols, a, e);
    }
    /* in place: the same bytes (a window whose outliers are left out
     * fits from fewer values: a float64 reference's solve agrees to ~1e-9) */
    cls_array z = make(x->dtype, x->batch, x->rows, x->cols);
    memcpy(z.data, x->data, n * es);
    st = cls_fit_transform(ctx, &(cls_pipeline){.clean = o}, &z, &z, NULL);
    if (st != CLS_OK) fail_msg("%s in place: %s: %s", what, cls_status_str(st), cls_last_error(ctx));
    assert_memory_equal(z.data, y.data, n * es);
    free(z.data);
    free(y.data);
    free(want);
}

/* lightkurve's flatten (flatten_niters): windows of 1, 2, even, odd and
 * longer than the series, gaps, outliers both ways, a constant curve, a
 * curve all missing, the sentinel; 0, 1 and 3 fits */
static void flatten_equals_its_algorithm(void **state)
{
    (void)state;
    const struct { cls_detrend d; unsigned w, p; cls_edge e; } fits[] = {
        {CLS_DETREND_SAVGOL, 1, 0, CLS_EDGE_DEFAULT}, {CLS_DETREND_SAVGOL, 2, 1, CLS_EDGE_DEFAULT},
        {CLS_DETREND_SAVGOL, 8, 2, CLS_EDGE_DEFAULT}, {CLS_DETREND_SAVGOL, 21, 2, CLS_EDGE_DEFAULT},
        {CLS_DETREND_SAVGOL, 13, 3, CLS_EDGE_MIRROR}, {CLS_DETREND_SAVGOL, 151, 2, CLS_EDGE_NEAREST},
        {CLS_DETREND_MEAN, 9, 0, CLS_EDGE_REFLECT},
    };
    int small = test_suite_is("oclgrind");
    size_t B = small ? 2 : 3, R = small ? 60 : 120, C = 3;
    for (int ti = 0; ti < 2; ti++) {
        cls_dtype t = ti ? CLS_F32 : CLS_F64;
        if (!runs(t)) continue;
        cls_array x = curves(t, B, R, C, 91 + (uint64_t)ti);
        put(&x, (0 * R + 30) * C + 0, 40);          /* a flare */
        for (size_t i = 50; i < 54; i++) put(&x, (1 * R + i) * C + 1, -20); /* a dip */
        for (size_t i = 10; i < 17; i++) put(&x, (0 * R + i) * C + 2, NAN); /* a gap */
        put(&x, (1 * R + 5) * C + 0, INFINITY);
        for (size_t i = 0; i < R; i++) put(&x, (1 * R + i) * C + 2, 7);     /* constant */
        const_col = 2;
        const_matrix = 1;
        for (size_t i = 0; i < R; i++) put(&x, ((B - 1) * R + i) * C + 0, NAN); /* all missing */
        for (size_t f = 0; f < sizeof fits / sizeof *fits; f++) {
            if (small && f != 3 && f != 0) continue;
            unsigned its[] = {0, 1, 3};
            for (size_t k = 0; k < 3; k++) {
                cls_clean o = {.detrend = fits[f].d, .window = fits[f].w, .polyorder = fits[f].p,
                               .edge = fits[f].e, .detrend_op = CLS_DETREND_DIVIDE, .flatten_niters = its[k]};
                if (its[k] == 0) o.detrend_op = CLS_DETREND_TREND; /* the kernels' own op: the trend alike */
                flatten_check(&x, &o, "flatten");
            }
            cls_clean o = {.detrend = fits[f].d, .window = fits[f].w, .polyorder = fits[f].p, .edge = fits[f].e,
                           .detrend_op = CLS_DETREND_SUBTRACT, .flatten_niters = 3, .flatten_sigma = 2.5};
            flatten_check(&x, &o, "flatten, subtract, sigma 2.5");
        }
        /* the sentinel is missing: out of the fits and the clips, as NaN is */
        put(&x, (0 * R + 40) * C + 1, -9999);
        cls_clean o = {.has_missing_value = 1, .missing_value = -9999, .detrend = CLS_DETREND_SAVGOL, .window = 21,
                       .polyorder = 2, .detrend_op = CLS_DETREND_DIVIDE, .flatten_niters = 3};
        cls_array y = make(t, B, R, C);
        cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &x, &y, NULL);
        if (st != CLS_OK) fail_msg("sentinel: %s: %s", cls_status_str(st), cls_last_error(ctx));
        assert_true(isnan(get(&y, (0 * R + 40) * C + 1))); /* the cleaning writes it as NaN */
        put(&x, (0 * R + 40) * C + 1, NAN);
        cls_array z = make(t, B, R, C);
        o.has_missing_value = 0;
        assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &x, &z, NULL), CLS_OK);
        /* (float32: the kernels' sentinel path may round a trend apart by an ulp) */
        for (size_t i = 0; i < B * R * C; i++) {
            double a = get(&y, i), b = get(&z, i);
            if (!((isnan(a) && isnan(b)) || a == b || fabs(a - b) <= tol(t) * fmax(1, fabs(b))))
                fail_msg("sentinel: value %zu: %.17g, as NaN %.17g", i, a, b);
        }
        free(y.data);
        free(z.data);
        free(x.data);
    }
}

/* the refits leave the outliers out: the flare's trend is that of the
 * curve without it; the clipping, trend and bins of one call are the
 * calls one after the other; a scaler after it */
static void flatten_leaves_outliers_out_and_composes(void **state)
{
    (void)state;
    cls_dtype t = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    size_t R = 200, C = 2, n = R * C, es = t == CLS_F64 ? 8 : 4;
    cls_array x = curves(t, 1, R, C, 131), base = curves(t, 1, R, C, 131);
    put(&x, 100 * C, get(&x, 100 * C) + 30);
    cls_clean o = {.detrend = CLS_DETREND_SAVGOL, .window = 31, .polyorder = 2,
                   .detrend_op = CLS_DETREND_TREND, .flatten_niters = 3};
    cls_array y = make(t, 1, R, C), z = make(t, 1, R, C), w = make(t, 1, R, C);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &x, &y, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &base, &z, NULL), CLS_OK);
    o.flatten_niters = 1;
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &o}, &x, &w, NULL), CLS_OK);
    /* one fit: pulled by the flare (30 x its weight); refitted: without it */
    /* (the values the first fit's pull made outliers stay out too, as
     * lightkurve's: the refit is nearer, not equal) */
    assert_true(fabs(get(&w, 100 * C) - get(&z, 100 * C)) > 1);
    assert_true(fabs(get(&y, 100 * C) - get(&z, 100 * C)) < 0.5 * fabs(get(&w, 100 * C) - get(&z, 100 * C)));
    /* clipping, flatten, bins of 5, min-max in one call = the steps one by one */
    cls_clean all = {.sigma = 4, .detrend = CLS_DETREND_SAVGOL, .window = 31, .polyorder = 2,
                     .detrend_op = CLS_DETREND_DIVIDE, .flatten_niters = 3, .bin_rows = 5, .bin_stat = CLS_BIN_MEAN};
    cls_clean clip = {.sigma = 4}, fl = all, bins = {.bin_rows = 5, .bin_stat = CLS_BIN_MEAN};
    fl.sigma = 0;
    fl.bin_rows = 0;
    fl.bin_stat = CLS_BIN_NONE;
    cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scaler = CLS_MINMAX, .clean = &all}, &x, &y, NULL);
    if (st != CLS_OK) fail_msg("clip, flatten, bins, min-max: %s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &clip}, &x, &z, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &fl}, &z, &z, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &bins}, &z, &z, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scaler = CLS_MINMAX}, &z, &z, NULL), CLS_OK);
    assert_memory_equal(y.data, z.data, n * es);
    /* bins reduced after it: a row per bin of the flattened values */
    cls_array r = make(t, 1, R / 5, C), q = make(t, 1, R / 5, C);
    cls_clean red = all, pre = fl;
    red.sigma = 0;
    red.bin_reduce = 1;
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &red}, &x, &r, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &pre}, &x, &w, NULL), CLS_OK);
    cls_clean rb = {.bin_rows = 5, .bin_stat = CLS_BIN_MEAN, .bin_reduce = 1};
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &rb}, &w, &q, NULL), CLS_OK);
    assert_memory_equal(r.data, q.data, R / 5 * C * es);
    free(r.data);
    free(q.data);
    free(x.data);
    free(base.data);
    free(y.data);
    free(z.data);
    free(w.data);
}

/* rusticl stops a loop past ~65 535 iterations: a column longer than that */
static void columns_longer_than_a_loop_limit(void **state)
{
    (void)state;
    size_t R = 70001;
    cls_array x = curves(CLS_F32, 1, R, 1, 71);
    cls_clean o = {.detrend = CLS_DETREND_MEAN, .window = 3, .detrend_op = CLS_DETREND_TREND};
    run_check(&x, CLS_SCOPE_MATRIX, &o, "long column, mean");
    cls_clean s = {.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 2, .detrend_op = CLS_DETREND_TREND};
    run_check(&x, CLS_SCOPE_MATRIX, &s, "long column, savgol");
    free(x.data);
}

/* one process alone: its own numbers are everyone's */
static cls_status count_hook(void *user, cls_status local, uint64_t *counts, size_t n)
{
    (void)user, (void)counts, (void)n;
    return local;
}
static cls_status stats_hook(void *user, cls_status local, cls_column_stats *cols, size_t n)
{
    (void)user, (void)cols, (void)n;
    return local;
}

/* cleaning, trend, bins, then min-max in one cls_fit_transform: the same
 * as cls_fit_transform, then cls_fit_transform of the result */
static void pipeline_runs_the_light_curves_before_the_scaler(void **state)
{
    (void)state;
    cls_dtype t = runs(CLS_F64) ? CLS_F64 : CLS_F32;
    size_t n = 2 * 40 * 3, es = t == CLS_F64 ? 8 : 4;
    cls_array x = curves(t, 2, 40, 3, 101), y = make(t, 2, 40, 3), z = make(t, 2, 40, 3);
    put(&x, 5 * 3, 900);
    cls_clean c = {.sigma = 3, .detrend = CLS_DETREND_SAVGOL, .window = 9, .polyorder = 2,
                   .detrend_op = CLS_DETREND_DIVIDE, .bin_rows = 4, .bin_stat = CLS_BIN_MEAN};
    cls_pipeline p = {.scaler = CLS_MINMAX, .clean = &c}, plain = {.scaler = CLS_MINMAX};
    cls_status st = cls_fit_transform(ctx, &p, &x, &y, NULL);
    if (st != CLS_OK) fail_msg("%s: %s", cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, &x, &z, NULL), CLS_OK);
    assert_int_equal(cls_fit_transform(ctx, &plain, &z, &z, NULL), CLS_OK);
    assert_memory_equal(y.data, z.data, n * es);
    free(x.data);
    free(y.data);
    free(z.data);
}

static void bad_arguments_leave_the_output_untouched(void **state)
{
    (void)state;
    cls_array x = curves(CLS_F32, 1, 20, 2, 81), y = make(CLS_F32, 1, 20, 2);
    for (size_t i = 0; i < 40; i++) put(&y, i, 42);
    const struct { cls_clean o; const char *what; } bad[] = {
        {{.detrend = CLS_DETREND_MEAN}, "window 0"},
        {{.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 5}, "polyorder >= window"},
        {{.detrend = CLS_DETREND_SAVGOL, .window = 21, .polyorder = 2}, "interp window > rows"},
        {{.detrend = CLS_DETREND_SAVGOL, .window = 11, .polyorder = 9}, "polyorder > 8"},
        {{.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 2, .edge = CLS_EDGE_REFLECT}, "reflect"},
        {{.detrend = CLS_DETREND_MEAN, .window = 5, .edge = CLS_EDGE_INTERP}, "interp for the mean"},
        {{.detrend = CLS_DETREND_MEAN, .window = 5, .origin = 3}, "origin"},
        {{.detrend = CLS_DETREND_MEAN, .window = 5, .cval = NAN}, "cval NaN"},
        {{.detrend = (cls_detrend)7, .window = 5}, "unknown detrend"},
        {{.window = 5}, "window without a detrend"},
        {{.bin_rows = 3}, "bins without a statistic"},
        {{.bin_stat = CLS_BIN_MEAN}, "a statistic without bins"},
        {{.bin_rows = 3, .bin_stat = CLS_BIN_SUM}, "sum smooths nothing"},
        {{.flatten_niters = 3}, "flatten without a trend"},
        {{.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 2, .flatten_niters = 3, .flatten_sigma = -1},
         "flatten_sigma < 0"},
        {{.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 2, .flatten_niters = 3, .flatten_sigma = NAN},
         "flatten_sigma NaN"},
        {{.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 2, .deriv = 1, .flatten_niters = 3},
         "flatten of a derivative"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &bad[i].o}, &x, &y, NULL);
        if (st != CLS_E_ARG) fail_msg("%s: %s, want CLS_E_ARG", bad[i].what, cls_status_str(st));
        assert_true(strlen(cls_last_error(ctx)) > 10);
        for (size_t k = 0; k < 40; k++) assert_true(get(&y, k) == 42);
    }
    /* cls_fit_transform (bins reduced): wrong shape, boundary */
    cls_clean b = {.bin_rows = 3, .bin_stat = CLS_BIN_MEAN};
    cls_array r = make(CLS_F32, 1, 6, 2);
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &b}, &x, &r, NULL), CLS_E_ARG); /* 7 rows wanted */
    b.bin_stat = CLS_BIN_BOUNDARY;
    r.rows = 7;
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.clean = &b}, &x, &r, NULL), CLS_E_ARG);
    /* a pipeline checks the light-curve fields before anything is written */
    cls_clean lc = {.detrend = CLS_DETREND_SAVGOL, .window = 5, .polyorder = 7};
    cls_pipeline p = {.scaler = CLS_MINMAX, .clean = &lc};
    assert_int_equal(cls_fit_transform(ctx, &p, &x, &y, NULL), CLS_E_ARG);
    for (size_t k = 0; k < 40; k++) assert_true(get(&y, k) == 42);
    /* and the scaler's options, though the light curves' are right */
    lc.polyorder = 2;
    cls_pipeline pr = {.scaler = CLS_ROBUST, .qmin = 80, .qmax = 20, .clean = &lc};
    assert_int_equal(cls_fit_transform(ctx, &pr, &x, &y, NULL), CLS_E_ARG);
    for (size_t k = 0; k < 40; k++) assert_true(get(&y, k) == 42);
    /* not yet across processes: said so, not ignored */
    lc.polyorder = 2;
    cls_combine cb = {count_hook, NULL, stats_hook};
    assert_int_equal(cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &lc, .combine = &cb}, &x, &y, NULL), CLS_E_UNSUPPORTED);
    assert_non_null(strstr(cls_last_error(ctx), "light curves"));
    for (size_t k = 0; k < 40; k++) assert_true(get(&y, k) == 42);
    free(r.data);
    free(x.data);
    free(y.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moving_average_equals_reference_every_edge_and_window),
        cmocka_unit_test(savgol_equals_reference_every_edge_and_window),
        cmocka_unit_test(windows_longer_than_the_series),
        cmocka_unit_test(missing_values_are_ignored_in_windows_and_kept),
        cmocka_unit_test(savgol_with_scattered_missing_values),
        cmocka_unit_test(float_sums_refuse_windows_past_the_loop_bound),
        cmocka_unit_test(bins_smooth_by_mean_median_and_boundary),
        cmocka_unit_test(median_of_bins_of_every_length_is_exact),
        cmocka_unit_test(bins_reduce_to_one_row_each),
        cmocka_unit_test(bins_reduce_after_cleaning_and_trend),
        cmocka_unit_test(clipping_then_trend_then_bins),
        cmocka_unit_test(flatten_equals_its_algorithm),
        cmocka_unit_test(flatten_leaves_outliers_out_and_composes),
        cmocka_unit_test(columns_longer_than_a_loop_limit),
        cmocka_unit_test(pipeline_runs_the_light_curves_before_the_scaler),
        cmocka_unit_test(bad_arguments_leave_the_output_untouched),
    };
    return TEST_RUN("lightcurve", tests, group_setup, group_teardown);
}
