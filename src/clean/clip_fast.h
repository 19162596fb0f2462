/* Iterated k-sigma clipping of short statistics groups in one pass
 * (clip_fast.c, cl/clip.cl): each column is loaded once into private
 * memory, sorted, clipped to convergence there and, when asked, written
 * once. Groups of more rows take clean.c's passes. */
#ifndef CLS_CLIP_FAST_H
#define CLS_CLIP_FAST_H

#include "clean/clean_pass.h"

/* The most rows of a statistics group the one-pass kernel takes. A
 * 128-row variant was written and removed unused: its cold build with
 * PoCL took minutes, and the kernels test builds every kernel. */
#define CLS_CLIP_FAST_ROWS 64

/* Fill strategies (cl/clip.cl mirrors the numbers). */
enum { CLS_XFILL_NONE, CLS_XFILL_MEAN, CLS_XFILL_MEDIAN, CLS_XFILL_MODE, CLS_XFILL_CONSTANT };

typedef struct cls_clip_opts {
    int    has_sent;
    double sent;
    double slo, shi;       /* sigma_lower, sigma_upper (> 0) */
    int    maxiters;       /* < 0: until nothing changes */
    int    center_mean;    /* else the median */
    int    mad;            /* spread mad_std, else std */
    int    clamp;          /* clipped values take the bounds, else NaN */
    int    keep;           /* every value written as read (the mask shows the clipping) */
    int    fill;           /* CLS_XFILL_* */
    double fill_value;     /* CLS_XFILL_CONSTANT */
    int    write;          /* write the cleaned data to v->y */
    int    moments;        /* the moments of the values kept are read (a scaler follows,
                              mean_out): summed in row order, the multi-pass path's bit for
                              bit; else from the sorted sums, within rounding */
    int    unread;         /* no per-column table is read after the call (no scaler
                              follows, no per-column output asked for): only the
                              iterations are taken from the results (sigma_clip of a
                              million columns wrote nine 8 MB tables for nothing) */
} cls_clip_opts;

/* Whether the one-pass kernel takes groups of v's shape on ctx's devices;
 * median_only: the pass would only find a median fill (no clipping, no
 * most frequent value), which it does only for groups the sorting
 * networks take (regime.h): longer ones are selected (select.c), not
 * sorted whole. */
int cls_clip_fast_fits(const cls_context *ctx, const cls_cview *v, int median_only);

/* cls_clip_fast(): clips every column of every group of v as clean.c's
 * passes do and, with o->write, writes the cleaned column (y may be x).
 * Per entry e = group * C + column: n0[e] the values not missing; m the
 * moments of the values kept (below, above untouched): the multi-pass
 * path's bit for bit without o->write or with mean imputation, else (only
 * m->n is read then) from sums over the sorted values, within rounding; L[e], H[e] the
 * final bounds (as the data's dtype rounds them); fill[e] the fill value
 * (NaN for none or an empty column; the constant as given). *iters: the
 * most iterations a column ran. */
cls_status cls_clip_fast(cls_context *ctx, const cls_cview *v, const cls_clip_opts *o, uint64_t *n0,
                         cls_cmoments *m, double *L, double *H, double *fill, unsigned *iters);

#endif
