/* lightkurve's flatten (cls_clean's flatten_niters): the trend refitted
 * without the outliers of x - trend, in the cleaning stage, which owns
 * both halves of it: the light curves' trend passes (lightcurve/) and the
 * sigma clip (clean.c's passes). */
#ifndef CLS_CLEAN_FLATTEN_H
#define CLS_CLEAN_FLATTEN_H

#include "internal.h"

/* Whether c flattens (a trend and flatten_niters >= 1). */
int cls_flatten_active(const cls_clean *c);

/* The trend (c's detrend, fitted c->flatten_niters times) and c's
 * detrend_op of G groups of Rg x C values at x into y (same shape; may be
 * x), then c's smoothing by bins. c checked (plan/checks.c). */
cls_status cls_flatten_run(cls_context *ctx, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t G,
                           uint64_t Rg, size_t C);

/* clean.c: astropy's sigma_clip (sigma, median, std, 5 iterations) of
 * each column of each of G groups of Rg x C values at r: mask, a byte per
 * value, 1 where missing or clipped. r is only read. */
cls_status cls_clean_clip_mask(cls_context *ctx, cls_dtype t, const void *r, uint64_t G, uint64_t Rg, size_t C,
                               double sigma, uint8_t *mask);

#endif
