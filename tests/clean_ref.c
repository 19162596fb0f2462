/* The cleaning tests' references (clean_ref.h). */
#include <math.h>
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
    cls_array a = {NULL, t, b, r, c};
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
