/* The cleaning stage's entries for host arrays, which the front
 * door (src/api/front.c) calls: clean/clean.c's (api/entries.h
 * gathers them with the other layers' for the front door). */
#ifndef CLS_CLEAN_ENTRIES_H
#define CLS_CLEAN_ENTRIES_H

#include "clscale.h"
#include "plan/route.h"

/* r: the call's route (plan/route.h), whose decisions (fusing) they act on */
cls_status cls_host_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *in,
                                  cls_array *out, cls_stats **fitted);
cls_status cls_host_fit_transform_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                           const cls_array *in, cls_array *out, const cls_combine *combine,
                                           cls_stats **fitted);
/* The cleaning alone (no scaler, factors or statistics after it), and its
 * bins reduced to a row each: r is the call's route, whose cleaning is
 * this stage alone (the front door's CLS_ENTRY_HOST_CLEAN and
 * CLS_ENTRY_HOST_BIN, a file's chunks of such a call). */
cls_status cls_host_clean(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                          const cls_array *in, cls_array *out);
cls_status cls_host_clean_combined(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                                   const cls_array *in, cls_array *out, const cls_combine *combine);
cls_status cls_host_bin(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                        const cls_array *in, cls_array *out);

/* ---- a file's chunks (api/stream.c) ----
 * The file's call is checked once at its door (plan/checks.c's cls_check_file_fit_transform) against its plan of stages
 * (plan/route.h's cls_stages); its chunks, which the library made, go
 * through these entries, which check nothing again: each is the entry
 * above without its checks. */

cls_status cls_chunk_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *in,
                                   cls_array *out, cls_stats **fitted);
cls_status cls_chunk_clean(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                           const cls_array *in, cls_array *out);
cls_status cls_chunk_bin(cls_context *ctx, const cls_route *r, const cls_clean *c, cls_scope scope,
                         const cls_array *in, cls_array *out);

#endif
