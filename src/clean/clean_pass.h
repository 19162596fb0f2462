/* The cleaning passes on the devices (clean_pass.c): one pass over the data
 * that counts the moments of the values each column keeps (and may write
 * the data with clipped and missing values made NaN), and the pass that
 * writes the cleaned (and possibly scaled) data. Both run over units of
 * whole statistics groups, or parts of one long group, that every device
 * able to run the dtype pulls (passes.c). */
#ifndef CLS_CLEAN_PASS_H
#define CLS_CLEAN_PASS_H

#include "internal.h"

/* Flags of the passes (cl/clean.cl mirrors them). */
#define CLS_CF_SENT   1u
#define CLS_CF_BOUNDS 2u
#define CLS_CF_WRITE  4u
#define CLS_CF_CLAMP  8u
#define CLS_CF_FILL   16u
#define CLS_CF_SCALE  32u
#define CLS_CF_RCLIP  64u
#define CLS_CF_MASK   128u
#define CLS_CF_NOY    256u
#define CLS_CF_KEEP   512u

/* The data as statistics groups: group g is rows [g * Rg, (g + 1) * Rg) of
 * a (G * Rg) x C row-major matrix at x; y, when not NULL, is where a pass
 * writes (same shape; may be x); mask, when not NULL, a byte per value
 * (same layout) that the writing pass sets to 1 where the value is
 * missing or clipped, else 0 (cls_clean.mask_out). */
typedef struct cls_cview {
    const char *x;
    char       *y;
    cls_dtype   dtype;
    uint64_t    G, Rg;
    size_t      C;
    uint8_t    *mask;
} cls_cview;

/* Per entry (group * C + column), float64: what the moments pass found. */
typedef struct cls_cmoments {
    uint64_t *n, *below, *above;
    double   *mean, *m2, *min, *max;
} cls_cmoments;

/* cls_clean_moments(): the moments of every column's kept values (not
 * missing; inside [lo[e], hi[e]] when lo is not NULL), merged with Chan's
 * formulas in float64. With CLS_CF_WRITE in flags, y receives x with every
 * finite value not kept (clipped, the sentinel) made NaN. `m`'s arrays hold G * C entries; they are
 * overwritten. */
cls_status cls_clean_moments(cls_context *ctx, const cls_cview *v, unsigned flags, double sent, const double *lo,
                             const double *hi, cls_cmoments *m);

/* Folds a part's (n, mean, m2, min, max) into entry e of m (Chan's
 * formulas; an empty entry takes the part as it is). below and above are
 * the caller's. */
void cls_cmoments_fold(cls_cmoments *m, size_t e, uint64_t n, double mean, double m2, double mn, double mx);

/* cls_clean_apply(): y = the cleaned x (not with CLS_CF_NOY), and with
 * CLS_CF_MASK the mask (v->mask). prm holds 7 planes of G * C
 * doubles (lower bound, upper bound, fill, shift high, shift low,
 * multiplier, offset; cl/clean.cl); rlo, rhi the min-max clamp range. */
cls_status cls_clean_apply(cls_context *ctx, const cls_cview *v, unsigned flags, double sent, const double *prm,
                           double rlo, double rhi);

#endif
