/* The float64 reference (see reference.h). Every loop walks the data in C
 * order and names b, r, c, so that it reads like the definitions in
 * DESIGN.md. Uses cmocka only to fail the test on misuse and to print. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "scalers/scaler.h"

static size_t elements(const cls_array *a) { return a->batch * a->rows * a->cols; }

static size_t elem_size(cls_dtype t) { return t == CLS_F64 ? sizeof(double) : sizeof(float); }

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) fail_msg("reference: out of memory (%zu x %zu bytes)", n, size);
    return p;
}

double ref_get(const cls_array *a, size_t i)
{
    if (a->dtype == CLS_F64) return ((const double *)a->data)[i];
    return (double)((const float *)a->data)[i];
}

static void set(cls_array *a, size_t i, double v)
{
    if (a->dtype == CLS_F64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

size_t ref_groups(const cls_array *x, cls_scope scope) { return scope == CLS_SCOPE_MATRIX ? x->batch : 1; }

static size_t group_of(cls_scope scope, size_t b) { return scope == CLS_SCOPE_MATRIX ? b : 0; }

/* ------------------------------------------------------------------------ */
/* Fit                                                                       */
/* ------------------------------------------------------------------------ */

void ref_fit(const cls_array *x, cls_scope scope, cls_column_stats *out)
{
    size_t cols = x->cols, n = ref_groups(x, scope) * cols;
    long double *sum = xcalloc(n, sizeof *sum);
    long double *dsum = xcalloc(n, sizeof *dsum);
    long double *dsq = xcalloc(n, sizeof *dsq);
    long double *mean = xcalloc(n, sizeof *mean);

    for (size_t k = 0; k < n; k++) {
        out[k].count = 0;
        out[k].missing = 0;
        out[k].min = INFINITY;
        out[k].max = -INFINITY;
        out[k].absmax = 0.0;
    }

    /* Pass 1: count, missing, min, max, absmax and the sum. */
    for (size_t b = 0; b < x->batch; b++)
        for (size_t r = 0; r < x->rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t k = group_of(scope, b) * cols + c;
                double v = ref_get(x, (b * x->rows + r) * cols + c);
                if (!isfinite(v)) {
                    out[k].missing++;
                    continue;
                }
                out[k].count++;
                if (v < out[k].min) out[k].min = v;
                if (v > out[k].max) out[k].max = v;
                if (fabs(v) > out[k].absmax) out[k].absmax = fabs(v);
                sum[k] += v;
            }
    for (size_t k = 0; k < n; k++)
        if (out[k].count) mean[k] = sum[k] / out[k].count;

    /* Pass 2: deviations from that mean. The sum of deviations corrects for
     * the rounding of the mean itself (the "corrected two-pass" algorithm). */
    for (size_t b = 0; b < x->batch; b++)
        for (size_t r = 0; r < x->rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t k = group_of(scope, b) * cols + c;
                double v = ref_get(x, (b * x->rows + r) * cols + c);
                if (!isfinite(v)) continue;
                long double d = (long double)v - mean[k];
                dsum[k] += d;
                dsq[k] += d * d;
            }

    for (size_t k = 0; k < n; k++) {
        if (out[k].count == 0) {
            out[k].min = out[k].max = out[k].mean = out[k].m2 = out[k].absmax = NAN;
            continue;
        }
        long double cnt = out[k].count;
        long double m2 = dsq[k] - dsum[k] * dsum[k] / cnt;
        out[k].mean = (double)(mean[k] + dsum[k] / cnt);
        out[k].m2 = m2 > 0 ? (double)m2 : 0.0;
    }
    free(sum);
    free(dsum);
    free(dsq);
    free(mean);
}

/* ------------------------------------------------------------------------ */
/* Transform                                                                 */
/* ------------------------------------------------------------------------ */

int ref_broadcast(const cls_array *x, const cls_array *factors, size_t strides[3])
{
    if (!x || !factors) return 0;
    size_t fdim[3] = {factors->batch, factors->rows, factors->cols};
    size_t xdim[3] = {x->batch, x->rows, x->cols};
    for (int d = 0; d < 3; d++)
        if (fdim[d] == 0 || (fdim[d] != 1 && fdim[d] != xdim[d])) return 0;
    /* C-order strides of the factors; a dimension of 1 repeats: stride 0. */
    size_t full[3] = {fdim[1] * fdim[2], fdim[2], 1};
    for (int d = 0; d < 3; d++) strides[d] = fdim[d] == 1 ? 0 : full[d];
    return 1;
}

/* absmax / 10^j in long double, rounded to the data's dtype: what decimal
 * scaling stores for the column's largest value. */
static int stored_below_one(double absmax, int j, cls_dtype dtype)
{
    long double q = (long double)absmax / powl(10.0L, j);
    return dtype == CLS_F32 ? (float)q < 1.0f : (double)q < 1.0;
}

/* 10^j in long double (10^309 included) with j the smallest integer such
 * that absmax / 10^j, stored in the data's dtype, is below 1 (so every
 * stored |y| < 1), but no less than -38 (float32) or -308 (float64): the
 * multiplier 10^-j must be finite in the dtype (a column of subnormal
 * values only). 1 for an all-zero column. */
static long double decimal_unit(double absmax, cls_dtype dtype)
{
    if (!(absmax > 0)) return 1.0L;
    int j = (int)floor(log10(absmax)) + 1;
    while (!stored_below_one(absmax, j, dtype)) j++;
    while (stored_below_one(absmax, j - 1, dtype)) j--;
    int jmin = dtype == CLS_F32 ? -38 : -308;
    if (j < jmin) j = jmin;
    return powl(10.0L, j);
}

/* One value through the scaler; lo and hi already defaulted. */
static double scale(double x, const cls_pipeline *p, const cls_column_stats *s, long double unit, double lo,
                    double hi)
{
    if (!isfinite(x) || p->scaler == CLS_NONE || s->count == 0) return x;
    switch (p->scaler) {
    case CLS_MINMAX:
        if (p->inverse) {
            if (s->max == s->min) return s->min;
            return (x - lo) / (hi - lo) * (s->max - s->min) + s->min;
        } else {
            double y = s->max == s->min ? lo : (x - s->min) / (s->max - s->min) * (hi - lo) + lo;
            if (p->clip) {
                double a = fmin(lo, hi), b = fmax(lo, hi);
                if (y < a) y = a;
                if (y > b) y = b;
            }
            return y;
        }
    case CLS_ZSCORE: /* unit = population standard deviation */
        if (p->inverse) return x * (double)unit + s->mean;
        return unit == 0 ? 0.0 : (x - s->mean) / (double)unit;
    case CLS_DECIMAL: /* unit = 10^j, which overflows double for j = 309 */
        return (double)(p->inverse ? x * unit : x / unit);
    case CLS_MAXABS: /* unit = max|x|, 1 below 10 epsilons of the dtype */
    case CLS_ROBUST: /* unit = the quantile range (1 below 10 DBL_EPSILON), over the ppf range */
        {
            double center = p->scaler == CLS_ROBUST && !p->no_centering ? s->median : 0.0;
            return (double)(p->inverse ? x * unit + center : (x - center) / unit);
        }
    case CLS_NONE:
        break;
    }
    return x;
}

void ref_transform(const cls_array *x, const cls_pipeline *p, const cls_column_stats *stats, double *out)
{
    size_t cols = x->cols, n = ref_groups(x, p->scope) * cols;
    size_t fs[3] = {0, 0, 0};
    if (p->scaler != CLS_NONE && !stats) fail_msg("ref_transform: scaler %d without statistics", (int)p->scaler);
    if (p->factors && !ref_broadcast(x, p->factors, fs))
        fail_msg("ref_transform: factors %zux%zux%zu do not broadcast against %zux%zux%zu", p->factors->batch,
                 p->factors->rows, p->factors->cols, x->batch, x->rows, x->cols);
    double lo = p->lo, hi = p->hi;
    if (lo == 0 && hi == 0) hi = 1;

    /* Per group and column: the standard deviation (z-score) or 10^j (decimal). */
    long double *unit = xcalloc(n, sizeof *unit);
    for (size_t k = 0; k < n && stats; k++) {
        if (p->scaler == CLS_ZSCORE) unit[k] = sqrt(stats[k].m2 / (double)stats[k].count);
        if (p->scaler == CLS_DECIMAL) unit[k] = decimal_unit(stats[k].absmax, x->dtype);
        if (p->scaler == CLS_MAXABS) {
            double a = stats[k].absmax, eps = x->dtype == CLS_F32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
            unit[k] = a >= 10 * eps ? a : 1.0;
        }
        if (p->scaler == CLS_ROBUST) {
            double sc = stats[k].q_hi - stats[k].q_lo;
            if (!(sc >= 10 * 2.220446049250313e-16) || p->no_scaling) sc = 1.0;
            if (p->unit_variance && !p->no_scaling) {
                double qa = p->qmin == 0 && p->qmax == 0 ? 25 : p->qmin, qb = p->qmin == 0 && p->qmax == 0 ? 75 : p->qmax;
                sc /= cls_norm_ppf(qb / 100) - cls_norm_ppf(qa / 100);
            }
            unit[k] = sc;
        }
    }

    for (size_t b = 0; b < x->batch; b++)
        for (size_t r = 0; r < x->rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t i = (b * x->rows + r) * cols + c;
                size_t k = group_of(p->scope, b) * cols + c;
                double y = ref_get(x, i);
                if (p->scaler != CLS_NONE) y = scale(y, p, &stats[k], unit[k], lo, hi);
                if (p->factors) y *= ref_get(p->factors, b * fs[0] + r * fs[1] + c * fs[2]);
                out[i] = y;
            }
    free(unit);
}

void ref_fit_transform(const cls_array *x, const cls_pipeline *p, double *out, cls_column_stats *stats_out)
{
    size_t n = ref_groups(x, p->scope) * x->cols;
    cls_column_stats *s = xcalloc(n, sizeof *s);
    ref_fit(x, p->scope, s);
    ref_transform(x, p, s, out);
    if (stats_out) memcpy(stats_out, s, n * sizeof *s);
    free(s);
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

static int close_enough(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * fmax(1.0, fabs(want)); /* false for a NaN got */
}

size_t ref_compare(const cls_array *y, const double *want, double tol, const char *label)
{
    size_t wrong = 0, n = elements(y);
    for (size_t i = 0; i < n; i++) {
        double got = ref_get(y, i);
        if (close_enough(got, want[i], tol)) continue;
        if (wrong < 5) {
            size_t c = i % y->cols, r = i / y->cols % y->rows, b = i / y->cols / y->rows;
            print_message("# %s: [%zu, %zu, %zu] got %.9g want %.17g\n", label, b, r, c, got, want[i]);
        }
        wrong++;
    }
    if (wrong > 5) print_message("# %s: %zu of %zu elements wrong (tolerance %.3g)\n", label, wrong, n, tol);
    return wrong;
}

size_t ref_compare_stats(const cls_column_stats *got, const cls_column_stats *want, size_t n, int has_moments,
                         double tol, const char *label)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        const cls_column_stats *g = &got[i], *w = &want[i];
        struct {
            const char *name;
            double got, want;
            int check;
        } f[] = {
            {"min", g->min, w->min, 1},         {"max", g->max, w->max, 1},
            {"absmax", g->absmax, w->absmax, 1}, {"mean", g->mean, w->mean, has_moments},
            {"m2", g->m2, w->m2, has_moments},
        };
        int bad = g->count != w->count || g->missing != w->missing;
        for (size_t j = 0; j < sizeof f / sizeof f[0]; j++)
            if (f[j].check && !close_enough(f[j].got, f[j].want, tol)) bad = 1;
        if (!bad) continue;
        if (wrong < 5) {
            if (g->count != w->count)
                print_message("# %s: [%zu] count got %llu want %llu\n", label, i, (unsigned long long)g->count,
                              (unsigned long long)w->count);
            if (g->missing != w->missing)
                print_message("# %s: [%zu] missing got %llu want %llu\n", label, i, (unsigned long long)g->missing,
                              (unsigned long long)w->missing);
            for (size_t j = 0; j < sizeof f / sizeof f[0]; j++)
                if (f[j].check && !close_enough(f[j].got, f[j].want, tol))
                    print_message("# %s: [%zu] %s got %.17g want %.17g\n", label, i, f[j].name, f[j].got, f[j].want);
        }
        wrong++;
    }
    if (wrong > 5) print_message("# %s: %zu of %zu entries wrong (tolerance %.3g)\n", label, wrong, n, tol);
    return wrong;
}

/* ------------------------------------------------------------------------ */
/* Test data                                                                 */
/* ------------------------------------------------------------------------ */

static cls_array alloc_array(cls_dtype dtype, size_t batch, size_t rows, size_t cols)
{
    cls_array a = {.data = NULL, .dtype = dtype, .batch = batch, .rows = rows, .cols = cols};
    a.data = xcalloc(elements(&a), elem_size(dtype));
    return a;
}

/* The distribution of column c: uniform in [lo, hi), or with REF_OFFSET
 * normal with mean `mean` and standard deviation `sd`. */
typedef struct column_law {
    double lo, hi, mean, sd;
} column_law;

static column_law law_of(size_t c, unsigned features)
{
    column_law l = {0, 0, 0, 0};
    if (features & REF_OFFSET) {
        l.sd = 0.5 + 1.5 * (double)((c * 7) % 11) / 10.0;
        l.mean = 1e4 * l.sd;
        if ((features & REF_NEGATIVE) && c % 2) l.mean = -l.mean;
    } else if (features & REF_NEGATIVE) {
        l.lo = -(double)(c % 13 + 1) * 3.7;
        l.hi = (double)(c % 13 + 2) * 11.3;
    } else {
        l.lo = (double)(c % 5) * 2.5 + 0.5;
        l.hi = l.lo + (double)(c % 7 + 1) * 3.7;
    }
    return l;
}

static double draw(rng *r, const column_law *l, unsigned features)
{
    if (features & REF_OFFSET) return l->mean + l->sd * rng_normal(r);
    return rng_range(r, l->lo, l->hi);
}

static double draw_missing(rng *r)
{
    static const double kinds[3] = {NAN, INFINITY, -INFINITY};
    return kinds[rng_next(r) % 3];
}

cls_array ref_make(cls_dtype dtype, size_t batch, size_t rows, size_t cols, uint64_t seed, unsigned features)
{
    cls_array a = alloc_array(dtype, batch, rows, cols);
    rng r;
    rng_seed(&r, seed);
    int all_missing = (features & REF_ALL_MISSING) && cols > 2;
    column_law l0 = law_of(0, features);
    /* On a 1/64 grid: exactly representable in float, so the column stays
     * constant after rounding and its mean is exact. */
    double constant = round(draw(&r, &l0, features) * 64.0) / 64.0;
    if (constant == 0) constant = 1.0;
    size_t placed = 0;

    for (size_t b = 0; b < batch; b++)
        for (size_t i = 0; i < rows; i++)
            for (size_t c = 0; c < cols; c++) {
                column_law l = law_of(c, features);
                double v = draw(&r, &l, features);
                if ((features & REF_CONSTANT) && c == 0) v = constant;
                if ((features & REF_MISSING) && rng_uniform(&r) < 0.03) {
                    v = draw_missing(&r);
                    placed++;
                }
                if (all_missing && c == cols - 1) v = draw_missing(&r);
                set(&a, (b * rows + i) * cols + c, v);
            }
    if ((features & REF_MISSING) && placed == 0) set(&a, (rows / 2) * cols + (cols > 1 ? 1 : 0), NAN);
    return a;
}

cls_array ref_make_factors(cls_dtype dtype, size_t batch, size_t rows, size_t cols, uint64_t seed)
{
    cls_array a = alloc_array(dtype, batch, rows, cols);
    rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < elements(&a); i++) set(&a, i, rng_range(&r, 0.5, 1.5));
    return a;
}

void ref_free(cls_array *a)
{
    free(a->data);
    a->data = NULL;
}

cls_array ref_copy(const cls_array *a)
{
    cls_array c = alloc_array(a->dtype, a->batch, a->rows, a->cols);
    memcpy(c.data, a->data, elements(a) * elem_size(a->dtype));
    return c;
}
