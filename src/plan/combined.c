/* A fit across processes (a pipeline's combine hook, clscale.h's "Several
 * processes"): each process fits its own rows for what merges, the stats
 * hook merges the columns over every process, and where the scaler's
 * descriptor needs exact quantiles the count hook sums the counting passes
 * over every process's rows. The one place that orders these steps for
 * cls_fit() and cls_fit_transform() of host arrays and files (the front
 * door), the scaler after a cleaning stage (clean.c), and so for the MPI
 * layer, which only supplies the hooks. Calls the planner's fit
 * (pipeline.c), the scalers' table (whether the descriptor needs
 * quantiles) and the quantiles' cls_stats_fit_quantiles. */
#include <string.h>

#include "engine/job.h"
#include "plan/entries.h"
#include "scalers/scaler.h"

/* A copy of p for the calls of one process alone. */
static cls_pipeline alone(const cls_pipeline *p)
{
    cls_pipeline q = *p;
    q.combine = NULL;
    return q;
}

static int empty(const cls_array *x) { return !x->batch || !x->rows; }

cls_status cls_fit_combine(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_status st,
                           cls_stats *local, cls_stats **out)
{
    const cls_combine *cb = p->combine;
    if (st == CLS_OK && !cb->stats)
        st = cls_fail(ctx, CLS_E_ARG, "a fit across processes: the combine hook has no stats function");
    if (!cb->stats) {
        cls_stats_destroy(local);
        return cb->fn(cb->user, st, NULL, 0);
    }
    size_t n = st == CLS_OK ? local->info.groups * local->info.cols : 0;
    st = cb->stats(cb->user, st, st == CLS_OK ? local->col : NULL, n);
    /* every value is finite or missing: a column's counts are its rows */
    if (st == CLS_OK && n) local->info.rows = local->col[0].count + local->col[0].missing;
    /* its outcome is every process's (a failure, agreed through the count
     * hook, is not agreed again: that would name another process) */
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    if (st == CLS_OK && d && (d->needs & CLS_NEED_QUANTILES)) st = cls_stats_fit_quantiles(ctx, p, x, local);
    if (st != CLS_OK) {
        cls_stats_destroy(local);
        local = NULL;
    }
    if (out) *out = local;
    else cls_stats_destroy(local);
    return st;
}

/* The checks of a process with no rows, which fits nothing. */
static cls_status check_empty(cls_context *ctx, const cls_pipeline *p, const cls_array *x)
{
    cls_status st = cls_check_ctx(ctx);
    if (st != CLS_OK) return st;
    if (!x->cols) return cls_fail(ctx, CLS_E_ARG, "cls_fit: 0 columns (every process gives them, also with no rows)");
    if (x->dtype != CLS_F32 && x->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "cls_fit: dtype %d is neither CLS_F32 nor CLS_F64", (int)x->dtype);
    if (p->scope == CLS_SCOPE_MATRIX && x->batch && !x->rows)
        return cls_fail(ctx, CLS_E_ARG, "cls_fit: CLS_SCOPE_MATRIX: the matrices have 0 rows");
    cls_pipeline q = alone(p);
    q.factors = NULL; /* a fit reads none; their shape is the transform's */
    st = cls_check_pipeline(ctx, &q, x, NULL);
    if (st == CLS_OK && p->inverse) st = cls_fail(ctx, CLS_E_ARG, "cls_fit: an inverse pipeline cannot be fitted");
    if (st == CLS_OK && p->clean)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit: the pipeline has a cleaning stage; use cls_fit_transform");
    return st;
}

cls_status cls_host_fit_combined(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out)
{
    if (out) *out = NULL;
    cls_array none = {.dtype = CLS_F32};
    /* a hook without its stats function: refused before any pass */
    if (!p->combine->stats) return cls_fit_combine(ctx, p, x ? x : &none, CLS_OK, NULL, out);
    cls_stats *s = NULL;
    cls_pipeline q = alone(p);
    cls_status st = !out ? cls_fail(ctx, CLS_E_ARG, "cls_fit: out is NULL")
                    : !x ? cls_fail(ctx, CLS_E_ARG, "cls_fit: the input array is NULL")
                    : empty(x) ? check_empty(ctx, p, x)
                               : cls_host_fit_mergeable(ctx, &q, x, &s);
    if (st == CLS_OK && !s) st = cls_host_fit_empty(ctx, &q, x, &s);
    return cls_fit_combine(ctx, p, x ? x : &none, st, s, out);
}

cls_status cls_host_fit_transform_across(cls_context *ctx, const cls_pipeline *p, const cls_array *in,
                                         cls_array *out, cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    cls_stats *s = NULL;
    cls_status st = cls_host_fit_combined(ctx, p, in, &s);
    if (st != CLS_OK) return st; /* every process returns it */
    cls_pipeline q = alone(p);
    if (!empty(in)) st = out ? cls_host_transform(ctx, &q, s, in, out)
                             : cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: NULL output array");
    st = p->combine->stats(p->combine->user, st, NULL, 0);
    if (st == CLS_OK && fitted) *fitted = s;
    else cls_stats_destroy(s);
    return st;
}
