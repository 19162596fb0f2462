/* Imputation fused into the scaling (impute_fused.c); clean.c routes. */
#ifndef CLS_IMPUTE_FUSED_H
#define CLS_IMPUTE_FUSED_H

#include "internal.h"

/* Whether the pipeline's cleaning stage (checked valid by the caller) and
 * scaler take the fused path: imputation by the mean or a constant, or a
 * sentinel alone, no clipping, a scaler of one-pass statistics (min-max,
 * z-score, decimal, max-abs) or none, not inverse, and not the switch
 * impute_unfused (testing.h). */
int cls_impute_fusable(const cls_context *ctx, const cls_pipeline *p);

/* cls_host_fit_transform() of such a pipeline: the same results, statistics and
 * cleaning outputs as the cleaning stage's passes (clean.c), in one pass of
 * the engine. */
cls_status cls_impute_fused(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                            cls_stats **fitted);

#endif
