/* The statistics object and its math.
 * Owns: cls_stats (allocation, description, per-column access, merge), Chan's
 * parallel merge of two columns. Pure C: no OpenCL call. The params a
 * fitted column gives are the scalers' (src/scalers/); files are
 * stats_io.c's. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/table.h"

cls_column_stats cls_column_empty(void)
{
    cls_column_stats c;
    c.count = 0;
    c.missing = 0;
    c.min = c.max = c.mean = c.m2 = c.absmax = NAN;
    c.median = c.q_lo = c.q_hi = NAN;
    return c;
}

cls_stats *cls_stats_alloc(const cls_stats_info *info)
{
    if (!info) return NULL;
    if (info->cols && info->groups > SIZE_MAX / info->cols) return NULL;
    size_t n = info->groups * info->cols;
    if (n > SIZE_MAX / sizeof(cls_column_stats)) return NULL;
    cls_stats *s = malloc(sizeof *s);
    if (!s) return NULL;
    /* One element at least, so that an empty shape is not mistaken for a
     * failed allocation. */
    s->col_bytes = (n ? n : 1) * sizeof(cls_column_stats);
    s->col = cls_table_alloc(s->col_bytes);
    if (!s->col) {
        free(s);
        return NULL;
    }
    s->info = *info;
    return s;
}

cls_stats *cls_stats_new(const cls_stats_info *info)
{
    cls_stats *s = cls_stats_alloc(info);
    if (!s) return NULL;
    size_t n = info->groups * info->cols;
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
        into->median = into->q_lo = into->q_hi = NAN; /* quantiles do not merge */
    }
    if (!moments) into->mean = into->m2 = NAN;
}

cls_status cls_stats_describe(const cls_stats *s, cls_stats_info *out)
{
    if (!s || !out) return CLS_E_ARG;
    *out = s->info;
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
    if (a->has_quantiles || b->has_quantiles) return CLS_E_UNSUPPORTED;
    int moments = a->has_moments && b->has_moments;
    size_t n = a->groups * a->cols;
    for (size_t i = 0; i < n; i++) cls_column_merge(&into->col[i], &from->col[i], moments);
    into->info.rows = a->rows + b->rows;
    into->info.has_moments = moments;
    return CLS_OK;
}

cls_column_stats *cls_stats_columns(cls_stats *s) { return s ? s->col : NULL; }

void cls_column_stats_merge(cls_column_stats *into, const cls_column_stats *from, int moments)
{
    if (into && from) cls_column_merge(into, from, moments);
}

void cls_stats_destroy(cls_stats *s)
{
    if (!s) return;
    cls_table_free(s->col, s->col_bytes); /* kept for the next call's tables (table.h) */
    free(s);
}
