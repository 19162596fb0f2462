/* See route.h. Pure decisions: no context, no OpenCL call; of a context,
 * only the switches (testing.h) the caller gives. */
#include <string.h>

#include "plan/route.h"
#include "lightcurve/lightcurve.h"
#include "scalers/scaler.h"

static int clips(const cls_clean *c) { return c->sigma > 0 || c->sigma_lower > 0 || c->sigma_upper > 0; }

int cls_route_clean_passes(const cls_clean *c)
{
    return c && (c->has_missing_value || c->impute != CLS_IMPUTE_NONE || c->sigma != 0 || c->sigma_lower != 0 ||
                 c->sigma_upper != 0 || c->mask_out || c->mean_out || c->m2_out);
}

int cls_route_cleans(const cls_clean *c) { return cls_route_clean_passes(c) || cls_lc_active(c); }

int cls_route_impute_fuses(const cls_pipeline *p, const cls_tuning *tune)
{
    const cls_clean *c = p ? p->clean : NULL;
    if (!c || (tune && tune->impute_unfused) || p->inverse) return 0;
    /* the mask, the kept values' moments and values written as read come
     * from the cleaning passes */
    if (c->mask_out || c->mean_out || c->m2_out || c->mode == CLS_CLIP_KEEP) return 0;
    if (c->sigma != 0 || c->sigma_lower != 0 || c->sigma_upper != 0) return 0;
    if (c->impute != CLS_IMPUTE_MEAN && c->impute != CLS_IMPUTE_CONSTANT &&
        !(c->impute == CLS_IMPUTE_NONE && c->has_missing_value))
        return 0;
    if (p->scaler == CLS_NONE) return 1; /* imputation alone: the identity map */
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    return d && d->fused && !(d->needs & CLS_NEED_QUANTILES);
}

int cls_route_fuses(const cls_pipeline *p)
{
    if (!p) return 0;
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    int clamps = p->clean && clips(p->clean) && p->clean->mode == CLS_CLIP_CLAMP;
    return d && !(d->needs & CLS_NEED_QUANTILES) && !p->factors && !clamps && !p->inverse;
}

int cls_route_clean_streams(const cls_pipeline *p, int want_fitted)
{
    return cls_route_fuses(p) || (p && p->scaler == CLS_NONE && !p->factors && !want_fitted);
}

int cls_route_trend_fits(const cls_pipeline *p)
{
    const cls_scaler_desc *d = p ? cls_scaler_get(p->scaler) : NULL;
    return d && d->needs == CLS_NEED_EXTREMES && !p->factors && !p->inverse && p->clean && cls_lc_active(p->clean);
}

int cls_route_quantiles(const cls_pipeline *p)
{
    const cls_scaler_desc *d = p ? cls_scaler_get(p->scaler) : NULL;
    return d && (d->needs & CLS_NEED_QUANTILES);
}

int cls_route_bins_reduce(const cls_pipeline *p, int want_fitted, uint64_t in_batch, uint64_t in_rows, int have_out,
                          uint64_t out_batch, uint64_t out_rows)
{
    if (!p || !p->clean || p->scaler != CLS_NONE || p->factors || p->inverse || want_fitted) return 0;
    return cls_lc_reduces(p->clean, in_batch, in_rows, have_out, out_batch, out_rows);
}

static void refuse(cls_route *r, cls_status st, const char *why)
{
    r->entry = CLS_ENTRY_REFUSED;
    r->refusal = st;
    r->why = why;
}

void cls_route_fit_transform(const cls_pipeline *p, const cls_array *in, const cls_array *out, int want_fitted,
                             const cls_tuning *tune, cls_route *r)
{
    memset(r, 0, sizeof *r);
    r->combined = p && p->combine && p->combine->fn;
    r->cleans = p && cls_route_cleans(p->clean);
    r->clean_passes = p && cls_route_clean_passes(p->clean);
    /* the one pass writes the output: none without one (a fit) */
    if (out && r->clean_passes) {
        cls_pipeline alone = {.scaler = CLS_NONE, .scope = p->scope, .clean = p->clean};
        r->impute_fused = cls_route_impute_fuses(p, tune);
        r->impute_fused_alone = cls_route_impute_fuses(&alone, tune);
    }
    r->quantiles = cls_route_quantiles(p);
    r->fusable = cls_route_fuses(p);
    r->fuses = r->cleans && r->fusable;
    r->clean_streams = cls_route_clean_streams(p, want_fitted);
    r->trend_fits = cls_route_trend_fits(p);
    /* a .npy output's shape follows from this answer: none given */
    int have_out = out != NULL && in->where != CLS_IN_NPY;
    r->bins_reduce = !r->combined && cls_route_bins_reduce(p, want_fitted, in->batch, in->rows, have_out,
                                                           have_out ? out->batch : 0, have_out ? out->rows : 0);
    r->scaler_after = r->cleans && !r->fuses && (p->scaler != CLS_NONE || p->factors || want_fitted);
    /* cleaning alone: no scaler, factors or statistics asked for */
    int alone = p && p->clean && p->scaler == CLS_NONE && !p->factors && !p->inverse && !want_fitted;
    switch (in->where) {
    case CLS_IN_BUFFER:
        if (r->combined) refuse(r, CLS_E_UNSUPPORTED, "no combine hook on buffers");
        /* the exact quantiles' counting passes read host memory */
        else if (r->quantiles)
            refuse(r, CLS_E_UNSUPPORTED, "the scaler needs exact quantiles, whose counting passes read host "
                   "memory or files, not buffers: fit the data from host memory or a file, then cls_transform "
                   "the buffers with those statistics");
        else r->entry = CLS_ENTRY_BUFFER;
        return;
    case CLS_IN_FILE:
        r->streams = 1;
        r->entry = CLS_ENTRY_FILE;
        return;
    case CLS_IN_NPY:
        r->streams = 1;
        if (r->combined) refuse(r, CLS_E_UNSUPPORTED, "no combine hook on .npy paths (open them: CLS_IN_FILE)");
        else r->entry = CLS_ENTRY_NPY;
        return;
    case CLS_IN_HOST:
        if (r->bins_reduce) r->entry = CLS_ENTRY_HOST_BIN;
        else if (alone) r->entry = CLS_ENTRY_HOST_CLEAN;
        else r->entry = CLS_ENTRY_HOST;
        return;
    }
    refuse(r, CLS_E_ARG, "unknown where");
}

void cls_route_fit(const cls_pipeline *p, const cls_array *x, const cls_tuning *tune, cls_route *r)
{
    /* statistics wanted: never cleaning alone nor bins reduced */
    cls_route_fit_transform(p, x, NULL, 1, tune, r);
}

void cls_route_clean_alone(const cls_route *r, cls_route *alone)
{
    *alone = *r;
    alone->fusable = alone->fuses = alone->scaler_after = alone->quantiles = alone->trend_fits = 0;
    alone->impute_fused = r->impute_fused_alone;
    /* no scaler, factors or statistics: cls_route_clean_streams's second case */
    alone->clean_streams = 1;
}

void cls_route_after_clean(const cls_route *r, cls_route *rest)
{
    *rest = *r;
    rest->cleans = rest->fuses = rest->scaler_after = rest->bins_reduce = rest->trend_fits = 0;
    rest->clean_passes = rest->impute_fused = rest->impute_fused_alone = 0;
}

int cls_route_bins_alone(const cls_pipeline *p)
{
    const cls_clean *c = p ? p->clean : NULL;
    if (!c || p->scope != CLS_SCOPE_MATRIX || p->scaler != CLS_NONE || p->factors || !c->bin_rows ||
        c->bin_stat == CLS_BIN_NONE)
        return 0;
    /* nothing of the cleaning (its passes need whole groups) nor a trend */
    return !c->has_missing_value && c->impute == CLS_IMPUTE_NONE && c->sigma == 0 && c->sigma_lower == 0 &&
           c->sigma_upper == 0 && !c->missing_out && !c->clipped_out && !c->fill_out && !c->iterations_out &&
           !c->lower_out && !c->upper_out && !c->mask_out && !c->mean_out && !c->m2_out &&
           c->detrend == CLS_DETREND_NONE && !c->window && !c->polyorder && !c->deriv && c->delta == 0 &&
           !c->edge && c->cval == 0 && !c->origin && !c->detrend_op;
}

void cls_route_stages(const cls_route *r, const cls_pipeline *p, int want_fitted, int whole, cls_stages *s)
{
    memset(s, 0, sizeof *s);
    const cls_clean *c = p->clean;
    /* a scaler, factors or statistics after the cleaning */
    int after = p->scaler != CLS_NONE || p->factors || want_fitted;
    s->whole = whole;
    s->bin_align = cls_route_bins_alone(p) ? c->bin_rows : 0;
    s->halo = c && cls_lc_active(c) && !whole && !s->bin_align;
    if (s->halo) cls_lc_halo(c, &s->halo_before, &s->halo_after, &s->halo_wrap);
    /* one pass over chunks that each hold what their call needs */
    int one = s->halo || whole || s->bin_align;
    s->n = 1;
    s->stage[0].route = *r;
    /* the blocks' light curves take none of the cleaning's passes: its
     * options are a cleaning alone's, as are those of a first stage that
     * cleans alone */
    s->clean_alone = !after || s->halo;
    if (s->halo && r->clean_passes) {
        /* the cleaning's read passes over the chunks, its writing pass
         * over the blocks; the rest over the output */
        s->stage[0].kind = CLS_STAGE_CLEAN_HALO;
        cls_route_clean_alone(r, &s->stage[0].route);
        s->n = after ? 2 : 1;
    } else if (s->halo) {
        /* the trend and bins in blocks write the output; the scaler over it */
        s->stage[0].kind = CLS_STAGE_CHUNKS;
        s->n = after ? 2 : 1;
    } else if (c && !one && !r->fusable && after) {
        /* a group's values not in memory together, a scaler that does not
         * fuse: the cleaning's passes write the output, the rest over it */
        s->stage[0].kind = CLS_STAGE_CLEAN;
        cls_route_clean_alone(r, &s->stage[0].route);
        s->clean_alone = 1;
        s->n = 2;
    } else if (c && !one) {
        s->stage[0].kind = CLS_STAGE_CLEAN;
    } else if (p->scaler == CLS_NONE || one) {
        s->stage[0].kind = CLS_STAGE_CHUNKS;
    } else {
        s->stage[0].kind = CLS_STAGE_FIT_APPLY;
    }
    if (s->n == 2) {
        /* bins reduced write no rows a scaler could fit */
        s->gather = s->halo && r->trend_fits && !r->bins_reduce;
        cls_route_after_clean(r, &s->stage[1].route);
        s->stage[1].kind = s->gather && !whole                  ? CLS_STAGE_APPLY
                           : whole || p->scaler == CLS_NONE ? CLS_STAGE_CHUNKS
                                                              : CLS_STAGE_FIT_APPLY;
    }
}
