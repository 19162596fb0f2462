/* Imputation fused into the scaling. A cleaning stage that imputes by the
 * mean or a constant, or only names a sentinel, with no clipping, ahead of
 * a scaler whose statistics take one pass (min-max, z-score, decimal,
 * max-abs) or alone (no scaler: the identity map, CLS_KS_IDENT; also
 * cls_fit_transform's), runs through the engine's own path (pipeline.c): one pass per
 * slice that reads a column block, counts the statistics of the values
 * kept, makes the scaler's params from the imputed column's statistics on
 * the device and writes every value scaled, a missing one as the scaled
 * fill; two phases with host params when a group is larger than a slice.
 * The *_imp builds of the scale.cl kernels do it (docs/impute-fused.md).
 * Which cleaning stages go this way is the route's (plan/route.c's
 * cls_route_impute_fuses, decided once per call); the cleaning stage
 * (clean.c) checked the call and sends here what the route says.
 * Owns: the cleaning stage's outputs of this way (cls_clean's missing_out,
 * fill_out, clipped_out, iterations_out, lower_out, upper_out).
 * Calls: pipeline.c. */
#include <math.h>
#include <string.h>

#include "clean/impute_fused.h"
#include "engine/job.h"

cls_status cls_impute_fused(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                            cls_stats **fitted)
{
    const cls_clean *c = p->clean;
    cls_pipeline plain = *p;
    plain.clean = NULL;
    cls_imp_opts o;
    memset(&o, 0, sizeof o);
    o.imp = c->impute == CLS_IMPUTE_MEAN ? 1 : c->impute == CLS_IMPUTE_CONSTANT ? 2 : 0;
    o.has_sent = c->has_missing_value != 0;
    o.sent = c->missing_value;
    o.fillc = o.imp == 2 ? c->fill_value : 0;
    o.missing_out = c->missing_out;
    o.fill_out = c->fill_out;
    cls_status st = cls_do_fit_transform_imp(ctx, &plain, &o, in, out, fitted);
    if (st != CLS_OK) return st;
    if (c->clipped_out) {
        size_t n = (p->scope == CLS_SCOPE_BATCH ? 1 : in->batch) * in->cols;
        memset(c->clipped_out, 0, n * sizeof *c->clipped_out);
    }
    if (c->iterations_out) *c->iterations_out = 0;
    size_t nb = (p->scope == CLS_SCOPE_BATCH ? 1 : in->batch) * in->cols;
    for (size_t e = 0; e < nb; e++) {
        if (c->lower_out) c->lower_out[e] = -INFINITY;
        if (c->upper_out) c->upper_out[e] = INFINITY;
    }
    return CLS_OK;
}
