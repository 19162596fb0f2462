/* Imputation fused into the scaling (impute_fused.c); the route decides
 * (plan/route.h's impute_fused), clean.c sends it here. */
#ifndef CLS_IMPUTE_FUSED_H
#define CLS_IMPUTE_FUSED_H

#include "internal.h"

/* cls_host_fit_transform() of a pipeline the route sends this way
 * (cls_route_impute_fuses), its arrays and pipeline checked by the caller:
 * the same results, statistics and cleaning outputs as the cleaning
 * stage's passes (clean.c), in one pass of the engine. */
cls_status cls_impute_fused(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                            cls_stats **fitted);

#endif
