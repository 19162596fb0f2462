/* The planner's entries for host arrays, which the front door
 * (src/api/front.c) and the layers above call: plan/pipeline.c's (api/entries.h
 * gathers them with the other layers' for the front door). */
#ifndef CLS_PLAN_ENTRIES_H
#define CLS_PLAN_ENTRIES_H

#include "clscale.h"
#include "util/friend.h"

cls_status cls_host_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out);
/* The part of p's statistics that merges across chunks and processes
 * (count, missing, extremes, moments: all the scaler's descriptor needs but
 * the quantiles), described as p's scaler's without quantiles; the
 * quantiles follow over every part (cls_fit_quantiles_source; across MPI
 * ranks src/mpi/mpi_fit.c's). */
CLS_FRIEND cls_status cls_host_fit_mergeable(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out);
cls_status cls_host_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                              cls_array *out);

#endif
