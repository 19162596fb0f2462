/* The cleaning tests' references (clean_ref.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_ref.h"

double cref_get(const cls_array *a, size_t i)
{
    return a->dtype == CLS_F64 ? ((const double *)a->data)[i] : (double)((const float *)a->data)[i];
}

static void put(cls_array *a, size_t i, double v)
{
    if (a->dtype == CLS_F64) ((double *)a->data)[i] = v;
    else ((float *)a->data)[i] = (float)v;
}

cls_array cref_make(cls_dtype t, size_t b, size_t r, size_t c, uint64_t seed)
{
    cls_array a = {.data = NULL, .dtype = t, .batch = b, .rows = r, .cols = c};
    size_t n = b * r * c;
    a.data = malloc(n * (t == CLS_F64 ? 8 : 4) + 8);
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < n; i++) {
        size_t col = i % c;
        double u = rng_uniform(&g), v;
        switch (col % 8) {
        case 0: v = rng_normal(&g) * 3 + 1; break;
        case 1: v = (double)(rng_next(&g) % 5) - 2; break;
        case 2: v = tan(3.14159265358979 * (u - 0.5)); break;
        case 3: v = u < 0.1 ? NAN : u < 0.15 ? INFINITY : u < 0.2 ? -INFINITY : rng_normal(&g); break;
        case 4: v = 7.25; break;
        case 5: v = NAN; break;
        case 6: v = 1e6 + rng_normal(&g) * 0.01; break;
        default: v = u < 0.3 ? NAN : rng_normal(&g) - 5; break;
        }
        put(&a, i, v);
    }
    return a;
}

cls_array cref_make_scales(cls_dtype t, size_t rows, size_t cols, uint64_t seed)
{
    cls_array x = cref_make(t, 2, rows, cols, seed);
    for (size_t b = 0; b < 2; b++)
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t i = (b * rows + r) * cols + c;
                double u = cref_get(&x, i), v;
                double k = (double)((r * 7 + c + b) % rows); /* the rows in a shuffled order */
                switch (c % 6) {
                case 0: v = k == 0 ? 1e12 : k == 1 ? -1e6 : k == 2 ? 1e3 : k == 3 ? -30 : sin(k + (double)c); break;
                case 1: v = k * k * k + (double)c; break;
                case 2: v = ldexp(1, (int)k % 40) * (c % 12 == 2 ? 1 : -1); break;
                case 3: v = k < (double)rows / 2 ? 5 : 5 + 1e-3 * k; break;
                case 4: v = isfinite(u) ? k * 0.5 - 3 : u; break;
                default: v = k == 0 ? 1e12 : u; break;
                }
                if (t == CLS_F64) ((double *)x.data)[i] = v;
                else ((float *)x.data)[i] = (float)v;
            }
    return x;
}

void cref_free(cls_array *a)
{
    free(a->data);
    a->data = NULL;
}

size_t cref_groups(const cls_array *a, cls_scope scope) { return scope == CLS_SCOPE_BATCH ? 1 : a->batch; }
size_t cref_group_rows(const cls_array *a, cls_scope scope)
{
    return scope == CLS_SCOPE_BATCH ? a->batch * a->rows : a->rows;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b ? 1 : 0;
}

size_t cref_column(const cls_array *a, cls_scope scope, size_t g, size_t c, double *out)
{
    size_t rows = cref_group_rows(a, scope), n = 0;
    for (size_t r = 0; r < rows; r++) {
        double v = cref_get(a, (g * rows + r) * a->cols + c);
        if (isfinite(v)) out[n++] = v;
    }
    qsort(out, n, sizeof *out, cmp);
    return n;
}

double cref_quantile(const double *v, size_t n, double q, cls_dtype t)
{
    if (n == 0) return NAN;
    double h = ((double)n - 1) * q;
    if (h >= (double)n - 1) return v[n - 1];
    size_t lo = (size_t)floor(h);
    double g = h - floor(h), a = v[lo], b = v[lo + 1];
    double d = t == CLS_F32 ? (double)((float)b - (float)a) : b - a;
    return g >= 0.5 ? b - d * (1 - g) : a + d * g;
}

double cref_median(const double *v, size_t n, cls_dtype t)
{
    if (n == 0) return NAN;
    if (n % 2) return v[n / 2];
    if (t == CLS_F32) return (double)(((float)v[n / 2 - 1] + (float)v[n / 2]) / 2.0f);
    return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* ---- astropy's sigma_clip(axis=0) and SimpleImputer, column by column ---- */

#define MAD_STD 1.482602218505602

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of n values (sorted here) as numpy's nanmedian in dtype t. */
static double median_of(double *v, size_t n, cls_dtype t)
{
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_d);
    return cref_median(v, n, t);
}

void cref_clean_column(const cls_array *x, cls_scope scope, size_t g, size_t c, const cls_clean *o, double *want,
                       uint64_t *missing, uint64_t *clipped)
{
    cls_dtype t = x->dtype;
    size_t R = cref_group_rows(x, scope), C = x->cols, base = g * R * C + c;
    double *v = malloc(R * sizeof *v), *buf = malloc(R * sizeof *buf);
    int *keep = malloc(R * sizeof *keep);
    size_t n0 = 0;
    for (size_t r = 0; r < R; r++) {
        v[r] = cref_get(x, base + r * C);
        keep[r] = isfinite(v[r]) && !(o->has_missing_value && v[r] == o->missing_value);
        n0 += (size_t)keep[r];
    }
    /* L, H: the bounds so far (each iteration keeps what every one before
     * kept); FL, FH: the last iteration's. As astropy's sigma_clip, the
     * values clipped in the end are those outside the last bounds: one
     * clipped by an earlier iteration comes back when inside them, and
     * NaN bounds (nothing left to compute them from) clip nothing. */
    double L = -INFINITY, H = INFINITY, FL = -INFINITY, FH = INFINITY;
    int clip = o->sigma > 0;
    double slo = o->sigma_lower > 0 ? o->sigma_lower : o->sigma, shi = o->sigma_upper > 0 ? o->sigma_upper : o->sigma;
    int maxit = o->maxiters == 0 ? 5 : o->maxiters;
    size_t n = n0;
    for (int it = 0; clip && (maxit < 0 || it < maxit); it++) {
        size_t k = 0;
        double sum = 0;
        for (size_t r = 0; r < R; r++)
            if (keep[r]) {
                buf[k++] = v[r];
                sum += v[r];
            }
        if (k == 0) {
            FL = FH = NAN;
            break;
        }
        double mean = sum / (double)k, m2 = 0;
        for (size_t i = 0; i < k; i++) m2 += (buf[i] - mean) * (buf[i] - mean);
        double med = median_of(buf, k, t);
        double cen = o->center == CLS_CENTER_MEAN ? mean : med, spr;
        if (o->spread == CLS_SPREAD_MAD_STD) {
            size_t j = 0;
            for (size_t r = 0; r < R; r++)
                if (keep[r]) /* on the device |x - median| is a value of the data's dtype */
                    buf[j++] = t == CLS_F32 ? (double)fabsf((float)v[r] - (float)med) : fabs(v[r] - med);
            spr = MAD_STD * median_of(buf, j, CLS_F64);
        } else {
            spr = sqrt(m2 / (double)k);
        }
        double lo = cen - spr * slo, hi = cen + spr * shi;
        if (t == CLS_F32) { /* bounds are values of the data's type */
            lo = (float)lo;
            hi = (float)hi;
        }
        FL = lo;
        FH = hi;
        if (lo > L) L = lo;
        if (hi < H) H = hi;
        size_t nn = 0;
        for (size_t r = 0; r < R; r++) {
            keep[r] = keep[r] && v[r] >= L && v[r] <= H;
            nn += (size_t)keep[r];
        }
        if (nn == n) break;
        n = nn;
    }
    for (size_t r = 0; r < R && clip; r++)
        keep[r] = isfinite(v[r]) && !(o->has_missing_value && v[r] == o->missing_value) && !(v[r] < FL) &&
                  !(v[r] > FH);
    size_t k = 0;
    double sum = 0;
    for (size_t r = 0; r < R; r++)
        if (keep[r]) {
            buf[k++] = v[r];
            sum += v[r];
        }
    double fill = NAN;
    if (o->impute == CLS_IMPUTE_MEAN && k) fill = t == CLS_F32 ? (double)(float)(sum / (double)k) : sum / (double)k;
    else if (o->impute == CLS_IMPUTE_MEDIAN) fill = median_of(buf, k, t);
    else if (o->impute == CLS_IMPUTE_MOST_FREQUENT && k) {
        qsort(buf, k, sizeof *buf, cmp_d);
        size_t best = 0;
        for (size_t i = 0; i < k;) {
            size_t j = i;
            while (j < k && buf[j] == buf[i]) j++;
            if (j - i > best) {
                best = j - i;
                fill = buf[i];
            }
            i = j;
        }
    } else if (o->impute == CLS_IMPUTE_CONSTANT) fill = o->fill_value;
    for (size_t r = 0; r < R; r++) {
        double y = v[r];
        int miss = !isfinite(y) || (o->has_missing_value && y == o->missing_value);
        if (miss && o->has_missing_value && y == o->missing_value) y = NAN;
        if (!miss && clip && (y < FL || y > FH)) {
            if (o->mode == CLS_CLIP_CLAMP) y = y < FL ? FL : FH;
            else {
                miss = 1;
                y = NAN;
            }
        }
        if (miss && o->impute != CLS_IMPUTE_NONE) y = fill;
        want[base + r * C] = y;
    }
    *missing = R - n0;
    *clipped = clip ? n0 - k : 0;
    free(v);
    free(buf);
    free(keep);
}
