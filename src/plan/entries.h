/* The planner's entries for host arrays, which the front door
 * (src/api/front.c) and the layers above call: plan/pipeline.c's (api/entries.h
 * gathers them with the other layers' for the front door). */
#ifndef CLS_PLAN_ENTRIES_H
#define CLS_PLAN_ENTRIES_H

#include "clscale.h"

cls_status cls_host_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out);
/* The part of p's statistics that merges across chunks and processes
 * (count, missing, extremes, moments: all the scaler's descriptor needs but
 * the quantiles), described as p's scaler's without quantiles; the
 * quantiles follow over every part (cls_fit_quantiles_source; across
 * processes cls_fit_combine's counting passes). */
cls_status cls_host_fit_mergeable(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out);
/* What cls_host_fit_mergeable() of p gives for 0 rows of x's columns (and,
 * in CLS_SCOPE_MATRIX, x->batch matrices): empty columns, p's description. */
cls_status cls_host_fit_empty(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out);
cls_status cls_host_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                              cls_array *out);

/* A file's chunks (api/stream.c), its call checked at its door: the fit
 * (quantiles: with the exact quantiles, else what merges, as
 * cls_host_fit_mergeable) and the transform of cls_host_fit() and
 * cls_host_transform(), checking nothing again (p and, for a scaler, s
 * given). */
cls_status cls_chunk_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, int quantiles, cls_stats **out);
cls_status cls_chunk_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                               cls_array *out);

/* ---- across processes (plan/combined.c): p->combine set, fn and stats ----
 * Every process calls these with the same pipeline, dtype and columns and
 * any rows of its own (0 included: batch or rows 0, data NULL); each makes
 * the same calls of the hooks, so every process returns the same status.
 *
 * cls_fit_combine(): the steps of a fit after this process's own fit of
 * what merges (`local`, made by cls_host_fit_mergeable(), a file's fit or
 * cls_host_fit_empty(); `st` its outcome, local NULL on failure): the stats
 * hook merges the columns over every process (rows: their total), then,
 * where the scaler's descriptor needs them, the exact quantiles over every
 * process's rows `x` (host memory) by the count hook's counting passes.
 * Takes `local`; *out receives the statistics of all processes. */
cls_status cls_fit_combine(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_status st,
                           cls_stats *local, cls_stats **out);
/* cls_fit() of this process's host rows `x` across processes. */
cls_status cls_host_fit_combined(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out);
/* cls_fit_transform() without a cleaning stage across processes: the fit
 * above, then each process's transform of its own rows (in into out), its
 * outcome agreed through the stats hook. */
cls_status cls_host_fit_transform_across(cls_context *ctx, const cls_pipeline *p, const cls_array *in,
                                         cls_array *out, cls_stats **fitted);

#endif
