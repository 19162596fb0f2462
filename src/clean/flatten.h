/* lightkurve's flatten (cls_clean's flatten_niters): the trend refitted
 * without the outliers of x - trend, in the cleaning stage, which owns
 * both halves of it: the light curves' trend passes (lightcurve/) and the
 * sigma clip (clean.c's passes, handed in). */
#ifndef CLS_CLEAN_FLATTEN_H
#define CLS_CLEAN_FLATTEN_H

#include "internal.h"

/* Whether c flattens (a trend and flatten_niters >= 1). */
int cls_flatten_active(const cls_clean *c);

/* The sigma clip of the residuals (astropy's sigma_clip: sigma, median,
 * std, 5 iterations) of each column of each of G groups of Rg x C values
 * at r (only read): mask, a byte per value, 1 where missing or clipped.
 * The cleaning stage's (clean.c passes its own passes in, so that this
 * file calls nothing of clean.c's). */
typedef cls_status (*cls_flatten_clip)(cls_context *ctx, cls_dtype t, const void *r, uint64_t G, uint64_t Rg,
                                       size_t C, double sigma, uint8_t *mask);

/* The trend (c's detrend, fitted c->flatten_niters times, clip between
 * fits) and c's detrend_op of G groups of Rg x C values at x into y (same
 * shape; may be x), then c's smoothing by bins; without flatten_niters
 * lightcurve.c's cls_lc_run. c checked (plan/checks.c). */
cls_status cls_flatten_run(cls_context *ctx, const cls_clean *c, cls_flatten_clip clip, cls_dtype t, const void *x,
                           void *y, uint64_t G, uint64_t Rg, size_t C);

#endif
