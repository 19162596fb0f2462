/* The statistics object and its math.
 * Owns: cls_stats (allocation, description, per-column access, merge), Chan's
 * parallel merge of two columns, and the scaler params a fitted column gives
 * (cls_params_of), which the host passes to the apply kernel and which
 * cl/scale.cl's MAKE_PARAMS mirrors on the device. Pure C: no OpenCL call.
 * Files are stats_io.c's. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

cls_column_stats cls_column_empty(void)
{
    cls_column_stats c;
    c.count = 0;
    c.missing = 0;
    c.min = c.max = c.mean = c.m2 = c.absmax = NAN;
    return c;
}

cls_stats *cls_stats_new(const cls_stats_info *info)
{
    if (!info) return NULL;
    if (info->cols && info->groups > SIZE_MAX / info->cols) return NULL;
    size_t n = info->groups * info->cols;
    if (n > SIZE_MAX / sizeof(cls_column_stats)) return NULL;
    cls_stats *s = malloc(sizeof *s);
    if (!s) return NULL;
    /* One element at least, so that an empty shape is not mistaken for a
     * failed allocation. */
    s->col = malloc((n ? n : 1) * sizeof(cls_column_stats));
    if (!s->col) {
        free(s);
        return NULL;
    }
    s->info = *info;
    for (size_t i = 0; i < n; i++) s->col[i] = cls_column_empty();
    return s;
}

/* min/max that ignore NaN, the value of a side with no finite values. */
static double min_of(double a, double b) { return fmin(a, b); }
static double max_of(double a, double b) { return fmax(a, b); }

void cls_column_merge(cls_column_stats *into, const cls_column_stats *from, int moments)
{
    /* `from` may alias `into`. */
    cls_column_stats a = *into, b = *from;
    if (b.count == 0) {
        into->missing = a.missing + b.missing;
    } else if (a.count == 0) {
        *into = b;
        into->missing = a.missing + b.missing;
    } else {
        uint64_t n = a.count + b.count;
        double na = (double)a.count, nb = (double)b.count, dn = (double)n;
        double delta = b.mean - a.mean;
        into->count = n;
        into->missing = a.missing + b.missing;
        into->min = min_of(a.min, b.min);
        into->max = max_of(a.max, b.max);
        into->absmax = max_of(a.absmax, b.absmax);
        into->mean = a.mean + delta * (nb / dn);
        into->m2 = a.m2 + b.m2 + delta * delta * na * (nb / dn);
    }
    if (!moments) into->mean = into->m2 = NAN;
}

/* a / 10^j rounded once where 10^|j| is exact in double (up to 10^22),
 * then to the data's dtype: the value decimal scaling stores for a. (Below
 * 10^-22 a multiplication could overflow, so a division stands in.) */
static int stored_below_one(double a, int j, cls_dtype t)
{
    double q = j < 0 && j >= -22 ? a * pow(10.0, -j) : a / pow(10.0, j);
    return t == CLS_F32 ? (float)q < 1.0f : q < 1.0;
}

int cls_decimal_exponent_in(double a, cls_dtype t)
{
    if (!(a > 0) || !isfinite(a)) return 0;
    int j = (int)floor(log10(a)) + 1;
    /* log10 may be off by one around powers of ten, and a value just below
     * one may round up to it when stored: settle j by the stored value. */
    if (!stored_below_one(a, j, t)) j++;
    else if (stored_below_one(a, j - 1, t)) j--;
    /* 10^-j must be finite in the data's dtype: a column of subnormal
     * values only gets 10^38 (float) or 10^308 (double) at most */
    int jmin = t == CLS_F32 ? -FLT_MAX_10_EXP : -DBL_MAX_10_EXP;
    return j < jmin ? jmin : j;
}

int cls_decimal_exponent(double a) { return cls_decimal_exponent_in(a, CLS_F64); }

cls_params cls_params_of(const cls_column_stats *s, cls_scaler scaler, double lo, double hi, int inverse,
                         cls_dtype dtype)
{
    cls_params p = {0.0, 1.0, 0.0};
    if (!s || s->count == 0) return p;
    switch (scaler) {
    case CLS_MINMAX:
        if (!inverse) {
            p.shift = s->min;
            p.m = s->max > s->min ? (hi - lo) / (s->max - s->min) : 0.0;
            p.o = lo;
        } else {
            p.shift = lo;
            p.m = hi != lo ? (s->max - s->min) / (hi - lo) : 0.0;
            p.o = s->min;
        }
        break;
    case CLS_ZSCORE: {
        double sd = sqrt(s->m2 / (double)s->count);
        if (!inverse) {
            p.shift = s->mean;
            p.m = sd > 0 ? 1.0 / sd : 0.0;
        } else {
            p.m = sd;
            p.o = s->mean;
        }
        break;
    }
    case CLS_DECIMAL: {
        int j = cls_decimal_exponent_in(s->absmax, dtype);
        p.m = pow(10.0, inverse ? j : -j);
        break;
    }
    case CLS_NONE:
    default:
        break;
    }
    return p;
}

cls_status cls_stats_describe(const cls_stats *s, cls_stats_info *out)
{
    if (!s || !out) return CLS_E_ARG;
    *out = s->info;
    return CLS_OK;
}

cls_status cls_stats_column(const cls_stats *s, size_t group, size_t col, cls_column_stats *out)
{
    if (!s || !out || group >= s->info.groups || col >= s->info.cols) return CLS_E_ARG;
    *out = s->col[group * s->info.cols + col];
    return CLS_OK;
}

static int same_double(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

cls_status cls_stats_merge(cls_stats *into, const cls_stats *from)
{
    if (!into || !from) return CLS_E_ARG;
    const cls_stats_info *a = &into->info, *b = &from->info;
    if (a->scaler != b->scaler || a->scope != b->scope || !same_double(a->lo, b->lo) ||
        !same_double(a->hi, b->hi) || !a->clip != !b->clip || a->dtype != b->dtype ||
        a->groups != b->groups || a->cols != b->cols)
        return CLS_E_ARG;
    int moments = a->has_moments && b->has_moments;
    size_t n = a->groups * a->cols;
    for (size_t i = 0; i < n; i++) cls_column_merge(&into->col[i], &from->col[i], moments);
    into->info.rows = a->rows + b->rows;
    into->info.has_moments = moments;
    return CLS_OK;
}

cls_status cls_stats_create_empty(const cls_stats_info *info, cls_stats **out)
{
    if (!out) return CLS_E_ARG;
    *out = NULL;
    if (!info || info->cols == 0 || (unsigned)info->scaler > CLS_DECIMAL ||
        (unsigned)info->scope > CLS_SCOPE_BATCH || (unsigned)info->dtype > CLS_F64)
        return CLS_E_ARG;
    if (info->groups > SIZE_MAX / info->cols || info->groups * info->cols > SIZE_MAX / sizeof(cls_column_stats))
        return CLS_E_ARG;
    *out = cls_stats_new(info);
    return *out ? CLS_OK : CLS_E_NOMEM;
}

cls_column_stats *cls_stats_columns(cls_stats *s) { return s ? s->col : NULL; }

void cls_column_stats_merge(cls_column_stats *into, const cls_column_stats *from, int moments)
{
    if (into && from) cls_column_merge(into, from, moments);
}

void cls_stats_destroy(cls_stats *s)
{
    if (!s) return;
    free(s->col);
    free(s);
}
