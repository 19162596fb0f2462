/* The robust scaler's statistics beyond min/max/moments: each column's
 * median and quantile range, exact, by the selection of
 * quantiles/select.c (cls_select_put). Called by pipeline.c: for host
 * arrays of one process in place of the fit's statistics pass
 * (cls_fit_by_selection: the counts and extremes from the same
 * selection), else after it; and as cls_stats_fit_quantiles() by callers
 * that combine several processes' counts (clscale_mpi). */
#include <math.h>
#include <stdlib.h>

#include "engine/passes.h"
#include "quantiles/select.h"
#include "engine/job.h"
#include "stats/quantile.h"

/* The robust scaler's median and quantile range, by counting passes on the
 * devices (quantiles/select.c): six ranks per column, the two middle ones and
 * the two around each end of the range. */
static void robust_ranks(void *user, uint64_t n, uint64_t *r)
{
    const cls_scaler_opts *o = user;
    double g;
    cls_median_ranks(n, &r[0], &r[1]);
    cls_quantile_ranks(o->qmin / 100.0, n, &r[2], &r[3], &g);
    cls_quantile_ranks(o->qmax / 100.0, n, &r[4], &r[5], &g);
}

/* Where a column's six order statistics go (cls_select_put's consumer).
 * wt: numpy's weight of the upper value of quantile j (the median, qmin,
 * qmax) for each count n up to wt_max, wt[n * 3 + j], -1 where no value
 * is interpolated, made once per call (robust_weights), or NULL: the
 * columns of a wide table share a handful of counts, and working the
 * ranks out for each of them cost a tenth of a robust fit of groups of
 * 60 rows. */
typedef struct robust_put {
    cls_scaler_opts  o;
    cls_dtype        dt;
    cls_stats *const *s;  /* (a source's first pass may make it) */
    double          *wt;
    uint64_t         wt_max;
} robust_put;

/* Quantile j (q) of a column of n values from its two order statistics v. */
static inline double quantile_of(const robust_put *r, const double *v, uint64_t n, size_t j, double q)
{
    double g;
    if (r->wt && n <= r->wt_max) {
        g = r->wt[n * 3 + j];
    } else {
        uint64_t lo, hi;
        cls_quantile_ranks(q, n, &lo, &hi, &g);
        if (lo == hi) g = -1;
    }
    return g < 0 ? v[0] : cls_quantile_lerp(v[0], v[1], g, r->dt);
}

/* The weights table of r for groups of `rows` values in `entries` columns
 * where it costs less than the columns' own arithmetic (at most
 * CLS_SELECT_TABLE_MAX rows, and fewer than the columns); a failed malloc
 * only costs its speed. */
static void robust_weights(robust_put *r, uint64_t rows, uint64_t entries)
{
    if (rows > CLS_SELECT_TABLE_MAX || rows >= entries) return;
    r->wt = malloc((size_t)(rows + 1) * 3 * sizeof *r->wt);
    if (!r->wt) return;
    r->wt_max = rows;
    const double q[3] = {0.5, r->o.qmin / 100.0, r->o.qmax / 100.0};
    for (uint64_t n = 1; n <= rows; n++)
        for (size_t j = 0; j < 3; j++) {
            uint64_t lo, hi;
            cls_quantile_ranks(q[j], n, &lo, &hi, &r->wt[n * 3 + j]);
            if (lo == hi) r->wt[n * 3 + j] = -1;
        }
}

static void robust_set(void *user, size_t e, uint64_t n, const double *pv)
{
    const robust_put *r = user;
    cls_column_stats *c = &(*r->s)->col[e];
    if (!n) return;
    /* the centre as the 0.5 quantile (cls_quantiles' arithmetic, in
     * float64), not numpy's nanmedian in the data's dtype: for float32 data
     * far from zero the mean of the middle two rounded to float32 moves the
     * centre by up to half a unit of the data's last place (5e-4 of a unit
     * spread at 1e4), which the scaled values would carry; so the file
     * path, the tool and the in-memory Python RobustScaler (which takes
     * cls_host_quantiles(0.5)) agree, within the float64 reference */
    c->median = quantile_of(r, pv, n, 0, 0.5);
    c->q_lo = quantile_of(r, pv + 2, n, 1, r->o.qmin / 100.0);
    c->q_hi = quantile_of(r, pv + 4, n, 2, r->o.qmax / 100.0);
}

static void set_info(cls_stats *s, const cls_scaler_opts *o)
{
    s->info.has_quantiles = 1;
    s->info.qmin = o->qmin;
    s->info.qmax = o->qmax;
    s->info.no_centering = !o->center;
    s->info.no_scaling = !o->scale;
    s->info.unit_variance = o->unit_variance;
}

/* The quantiles of the groups v describes (v->x, this process's rows, or
 * every process's with comb; or src's chunks) into *sp, whose description
 * has been checked against them (with src, *sp may be made by its passes:
 * it is read once they are over). */
static cls_status quantiles_into(cls_context *ctx, const cls_pipeline *p, const cls_qview *v, const cls_combine *comb,
                                 const cls_qsource *src, cls_stats *const *sp)
{
    cls_scaler_opts o = cls_scaler_opts_of(p);
    robust_put r = {o, v->dtype, sp, NULL, 0};
    /* (across processes the counts are summed: none is bounded by v->Rg) */
    if (!comb && !src) robust_weights(&r, v->Rg, v->G * v->C);
    cls_status st = cls_select_put(ctx, v, NULL, 6, robust_ranks, &o, comb, src, robust_set, &r);
    free(r.wt);
    if (st == CLS_OK && !*sp) st = cls_fail(ctx, CLS_E_ARG, "robust quantiles: no statistics to put them in");
    if (st == CLS_OK) set_info(*sp, &o);
    return st;
}

/* The robust ranks, then the extremes: a fit by selection alone takes
 * its count, min and max from the same launch as its quantiles. */
static void robust_ranks_extremes(void *user, uint64_t n, uint64_t *r)
{
    robust_ranks(user, n, r);
    r[6] = 0;
    r[7] = n - 1;
}

/* Every field of entry e (the selection puts each entry once, into a
 * table left unwritten: a million columns' 80 MB made empty first cost
 * more than the selection of one-row groups). */
static void robust_set_all(void *user, size_t e, uint64_t n, const double *pv)
{
    const robust_put *r = user;
    cls_column_stats *c = &(*r->s)->col[e];
    *c = cls_column_empty();
    c->count = n;
    c->missing = (*r->s)->info.rows - n;
    if (!n) return;
    if (n == 1) /* every quantile is the value: no ranks to make */
        c->median = c->q_lo = c->q_hi = pv[6];
    else
        robust_set(user, e, n, pv);
    c->min = pv[6];
    c->max = pv[7];
    c->absmax = fabs(pv[6]) > fabs(pv[7]) ? fabs(pv[6]) : fabs(pv[7]);
}

cls_status cls_fit_by_selection(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats *s)
{
    cls_qview v = {x->data, x->dtype, p->scope == CLS_SCOPE_BATCH ? 1 : x->batch,
                   p->scope == CLS_SCOPE_BATCH ? (uint64_t)x->batch * x->rows : x->rows, x->cols};
    cls_scaler_opts o = cls_scaler_opts_of(p);
    robust_put r = {o, v.dtype, &s, NULL, 0};
    robust_weights(&r, v.Rg, v.G * v.C);
    cls_status st = cls_select_put(ctx, &v, NULL, 8, robust_ranks_extremes, &o, NULL, NULL, robust_set_all, &r);
    free(r.wt);
    if (st == CLS_OK) set_info(s, &o);
    return st;
}

static cls_status fit_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x, const cls_combine *comb,
                                cls_stats *s)
{
    cls_qview v = {x->data, x->dtype, p->scope == CLS_SCOPE_BATCH ? 1 : x->batch,
                   p->scope == CLS_SCOPE_BATCH ? (uint64_t)x->batch * x->rows : x->rows, x->cols};
    return quantiles_into(ctx, p, &v, comb, NULL, &s);
}

cls_status cls_fit_quantiles_source(cls_context *ctx, const cls_pipeline *p, const cls_qview *v,
                                    const cls_qsource *src, cls_stats *const *s)
{
    return quantiles_into(ctx, p, v, NULL, src, s);
}

cls_status cls_fit_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats *s)
{
    return fit_quantiles(ctx, p, x, NULL, s);
}

static cls_status check_fill(cls_context *ctx, const cls_pipeline *p, const cls_array *x, int combined,
                             const cls_stats *s)
{
    cls_status st = cls_check_ctx(ctx);
    if (st != CLS_OK) return st;
    if (!p || !x || !s) return cls_fail(ctx, CLS_E_ARG, "cls_stats_fit_quantiles: NULL argument");
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    if (!d || !(d->needs & CLS_NEED_QUANTILES))
        return cls_fail(ctx, CLS_E_ARG,
                        "cls_stats_fit_quantiles: the pipeline's scaler takes no quantiles (robust scaling does)");
    if (x->dtype != CLS_F32 && x->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "cls_stats_fit_quantiles: dtype %d is neither CLS_F32 nor CLS_F64",
                        (int)x->dtype);
    if ((unsigned)p->scope > CLS_SCOPE_BATCH)
        return cls_fail(ctx, CLS_E_ARG, "cls_stats_fit_quantiles: unknown scope %d", (int)p->scope);
    int empty = !x->batch || !x->rows;
    if (!x->cols || (empty && !(combined && (x->batch || p->scope == CLS_SCOPE_BATCH))))
        return cls_fail(ctx, CLS_E_ARG, "cls_stats_fit_quantiles: shape %zu x %zu x %zu has a zero dimension",
                        x->batch, x->rows, x->cols);
    if (!x->data && !empty) return cls_fail(ctx, CLS_E_ARG, "cls_stats_fit_quantiles: x->data is NULL");
    if (!(p->qmin >= 0 && p->qmin <= p->qmax && p->qmax <= 100))
        return cls_fail(ctx, CLS_E_ARG, "cls_stats_fit_quantiles: quantile range %g, %g is not within [0, 100]",
                        p->qmin, p->qmax);
    size_t groups = p->scope == CLS_SCOPE_BATCH ? 1 : x->batch;
    if (s->info.groups != groups || s->info.cols != x->cols || s->info.dtype != x->dtype ||
        s->info.scope != p->scope)
        return cls_fail(ctx, CLS_E_ARG,
                        "cls_stats_fit_quantiles: the statistics (%zu groups x %zu columns) do not describe x "
                        "(%zu groups x %zu columns, its dtype and scope)",
                        s->info.groups, s->info.cols, groups, x->cols);
    return CLS_OK;
}

cls_status cls_stats_fit_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats *s)
{
    const cls_combine *combine = p && p->combine && p->combine->fn ? p->combine : NULL;
    cls_status st = check_fill(ctx, p, x, combine != NULL, s);
    if (st != CLS_OK) return combine ? combine->fn(combine->user, st, NULL, 0) : st;
    return fit_quantiles(ctx, p, x, combine, s);
}
