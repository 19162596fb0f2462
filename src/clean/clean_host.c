/* Host arithmetic of the cleaning stage (clean_host.h). */
#include <math.h>
#include <stdlib.h>

#include "clean/clean_host.h"
#include "internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cls_most_frequent(const void *x, cls_dtype t, size_t ld, uint64_t rows, int has_sent, double sent,
                         double *scratch)
{
    size_t n = 0;
    for (uint64_t r = 0; r < rows; r++) {
        double v = t == CLS_F64 ? ((const double *)x)[r * ld] : (double)((const float *)x)[r * ld];
        if (!isfinite(v) || (has_sent && v == sent)) continue;
        scratch[n++] = v;
    }
    if (n == 0) return NAN;
    qsort(scratch, n, sizeof *scratch, cmp_double);
    double best = scratch[0];
    size_t best_run = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && scratch[j] == scratch[i]) j++;
        if (j - i > best_run) { /* strictly more: the smallest of ties stays */
            best_run = j - i;
            best = scratch[i];
        }
        i = j;
    }
    return best;
}

void cls_column_add_constant(cls_column_stats *c, uint64_t k, double v)
{
    if (k == 0) return;
    cls_column_stats add = cls_column_empty();
    add.count = k;
    add.min = add.max = add.mean = v;
    add.m2 = 0;
    add.absmax = fabs(v);
    cls_column_merge(c, &add, 1);
}

void cls_impute_columns(cls_column_stats *col, size_t n, uint64_t rows, unsigned imp, double c, cls_dtype t,
                        double *fill, uint64_t *missing)
{
    for (size_t e = 0; e < n; e++) {
        cls_column_stats *s = &col[e];
        uint64_t k = rows - s->count;
        double v = NAN;
        if (imp == 1 && s->count) v = t == CLS_F32 ? (double)(float)s->mean : s->mean;
        else if (imp == 2) v = c;
        if (missing) missing[e] = k;
        fill[e] = v;
        s->missing = k;
        if (isfinite(v)) {
            cls_column_add_constant(s, k, v);
            s->missing = 0;
        }
    }
}
