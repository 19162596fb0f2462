/* Statistics from values, and the map they give: cls_stats_create and
 * cls_stats_params, the two public entry points bindings use to keep fitted
 * statistics outside the library (the Python package pickles them, restates
 * them under another pipeline before a merge, and shows the fitted params
 * as scikit-learn's attributes).
 * Owns: the checks a column must pass before it is trusted (a transform
 * would otherwise turn garbage statistics into garbage output silently).
 * Calls: stats.c for the object and the scalers' params. Pure C: no OpenCL
 * call; failures leave a message for cls_last_error(NULL). */
#include <math.h>
#include <stdint.h>

#include "internal.h"
#include "scalers/scaler.h"

static int column_ok(const cls_column_stats *c, int moments)
{
    if (c->count == 0) return 1;
    if (!isfinite(c->min) || !isfinite(c->max) || !(c->min <= c->max)) return 0;
    if (!isfinite(c->absmax) || c->absmax < fabs(c->min) || c->absmax < fabs(c->max)) return 0;
    if (moments && (!isfinite(c->mean) || !isfinite(c->m2) || c->m2 < 0)) return 0;
    return 1;
}

/* cols NULL: every column empty; groups may be 0 (a process holding no
 * matrix) */
static cls_status empty(const cls_stats_info *info, cls_stats **out)
{
    if (info->cols == 0 || info->groups > SIZE_MAX / info->cols ||
        info->groups * info->cols > SIZE_MAX / sizeof(cls_column_stats))
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: %zu groups of %zu columns", info->groups, info->cols);
    *out = cls_stats_new(info);
    return *out ? CLS_OK : cls_fail_thread(CLS_E_NOMEM, "cls_stats_create: out of memory");
}

cls_status cls_stats_create(const cls_stats_info *info, const cls_column_stats *cols, cls_stats **out)
{
    if (out) *out = NULL;
    if (!info || !out) return cls_fail_thread(CLS_E_ARG, "cls_stats_create: a NULL argument");
    if (!cls_scaler_known(info->scaler) || (unsigned)info->scope > CLS_SCOPE_BATCH ||
        (unsigned)info->dtype > CLS_F64)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: an unknown scaler, scope or dtype");
    if (!cols) return empty(info, out);
    if (info->groups == 0 || info->cols == 0)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: %zu groups of %zu columns", info->groups, info->cols);
    if (info->scope == CLS_SCOPE_BATCH && info->groups != 1)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: scope batch with %zu groups", info->groups);
    if (!isfinite(info->lo) || !isfinite(info->hi))
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: lo or hi is not finite");
    /* what the scaler's params are made from must be there */
    const cls_scaler_desc *d = cls_scaler_get(info->scaler);
    unsigned needs = d ? d->needs : 0;
    if (d && d->ranged && !(info->lo == 0 && info->hi == 0) && !(info->lo < info->hi))
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: the range [%g, %g] is empty", info->lo, info->hi);
    if ((needs & CLS_NEED_MOMENTS) && !info->has_moments)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: %s needs moments", cls_scaler_name(info->scaler));
    if ((needs & CLS_NEED_QUANTILES) && !info->has_quantiles)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_create: %s needs quantiles", cls_scaler_name(info->scaler));
    if (info->groups > SIZE_MAX / info->cols) return cls_fail_thread(CLS_E_ARG, "cls_stats_create: too many columns");
    size_t n = info->groups * info->cols;
    int moments = info->has_moments != 0;
    for (size_t i = 0; i < n; i++) {
        if (!column_ok(&cols[i], moments) ||
            (info->has_quantiles && cols[i].count &&
             (!isfinite(cols[i].median) || !isfinite(cols[i].q_lo) || !isfinite(cols[i].q_hi))))
            return cls_fail_thread(CLS_E_ARG, "cls_stats_create: column %zu of group %zu is not consistent",
                                   i % info->cols, i / info->cols);
    }

    cls_stats_info in = *info;
    in.clip = info->clip != 0;
    in.has_moments = moments;
    /* every entry written below: not made empty first (a million
     * columns' table is 80 MB) */
    cls_stats *s = cls_stats_alloc(&in);
    if (!s) return cls_fail_thread(CLS_E_NOMEM, "cls_stats_create: out of memory");
    for (size_t i = 0; i < n; i++) {
        cls_column_stats c = cols[i];
        if (c.count == 0) {
            uint64_t missing = c.missing;
            c = cls_column_empty();
            c.missing = missing;
        } else if (!moments) {
            c.mean = c.m2 = NAN;
        }
        s->col[i] = c;
    }
    *out = s;
    return CLS_OK;
}

cls_status cls_stats_params(const cls_stats *s, size_t group, size_t col, int inverse, cls_affine *out)
{
    if (!s || !out || group >= s->info.groups || col >= s->info.cols) return CLS_E_ARG;
    /* every option the statistics recorded (the range; the robust
     * scaler's centring, scaling and unit variance, which a range alone
     * left off: a robust map read back as the identity) */
    cls_scaler_opts o = cls_scaler_opts_info(&s->info);
    cls_params p = cls_params_with(&s->col[group * s->info.cols + col], s->info.scaler, &o, inverse, s->info.dtype);
    out->shift = p.shift;
    out->scale = p.m;
    out->offset = p.o;
    return CLS_OK;
}
