/* Exact selection's entries for host arrays, which the front door
 * (src/api/front.c) and the data summary call: quantiles/select.c's (api/entries.h
 * gathers them with the other layers' for the front door). */
#ifndef CLS_QUANTILES_ENTRIES_H
#define CLS_QUANTILES_ENTRIES_H

#include "clscale.h"

cls_status cls_host_quantiles(cls_context *ctx, const cls_array *x, cls_scope scope, const double *q, size_t nq,
                              double *out);
cls_status cls_host_quantiles_combined(cls_context *ctx, const cls_array *x, cls_scope scope, const double *q,
                                       size_t nq, const cls_combine *combine, double *out);
cls_status cls_host_medians(cls_context *ctx, const cls_array *x, cls_scope scope, double *out);
cls_status cls_host_medians_combined(cls_context *ctx, const cls_array *x, cls_scope scope,
                                     const cls_combine *combine, double *out);

#endif
