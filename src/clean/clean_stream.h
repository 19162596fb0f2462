/* A cleaning stage over data that is not in memory at once: stream.c
 * hands clean.c the chunks of a file, pass after pass, and clean.c takes
 * the same decisions as in memory (the moments merged over the chunks,
 * the medians by counting passes over them), then writes every chunk in
 * one last pass. */
#ifndef CLS_CLEAN_STREAM_H
#define CLS_CLEAN_STREAM_H

#include "plan/route.h"
#include "quantiles/select.h"

/* A chunk of a writing pass: `rows` x C values of group g at x, which the
 * function rewrites in place; the source then writes them out. mask: NULL,
 * or a byte per value of the chunk (its layout) that the function sets as
 * cls_clean.mask_out, for the source to put where the chunk's values are
 * (a mask asked for: the cleaning's own mask_out is the caller's whole). */
typedef cls_status (*cls_cchunk_fn)(void *cu, uint64_t g, uint64_t rows, char *x, uint8_t *mask);

/* The data: read.each is a read-only pass over every chunk (select.h);
 * write(read.user, fn, cu) the same over a pass whose chunks are written
 * back after fn. */
typedef struct cls_csource {
    cls_qsource read;
    cls_status (*write)(void *user, cls_cchunk_fn fn, void *cu);
} cls_csource;

/* cls_clean_stream(): cls_host_fit_transform() of p (a cleaning stage; a scaler
 * that fuses with it, or none: r, the call's route, says which, by its
 * `fusable` and `clean_streams`) over
 * data shaped like `shape` (its data unused) that src gives: a moments
 * pass, per clipping iteration the medians' counting passes and a moments
 * pass, the fills, then the writing pass. `fitted` as cls_host_fit_transform().
 * most_frequent imputation: counting passes of its own (clean.c's
 * modes_stream) in the scratch budget.
 * @return as cls_host_fit_transform(), or CLS_E_UNSUPPORTED (before any pass)
 *         for a pipeline whose scaler does not fuse (exact quantiles,
 *         discount factors, clamped clipping ahead of a scaler). */
cls_status cls_clean_stream(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *shape,
                            const cls_csource *src, cls_stats **fitted);
/* The same across processes (cls_fit_transform): the hooks
 * of `cb` (both set) after every pass, as cls_host_fit_transform_combined() (a
 * fusing scaler) or cls_host_clean_combined() (none) call them; a failure
 * before the first pass goes through them too. most_frequent is refused
 * (CLS_E_UNSUPPORTED). */
cls_status cls_clean_stream_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                     const cls_array *shape, const cls_csource *src, const cls_combine *cb,
                                     cls_stats **fitted);

#endif
