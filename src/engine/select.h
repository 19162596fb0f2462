/* Exact order statistics per column on the devices (select.c). */
#ifndef CLS_SELECT_H
#define CLS_SELECT_H

#include "internal.h"

/* The data as statistics groups: group g is rows [g * Rg, (g + 1) * Rg) of
 * a (G * Rg) x C row-major matrix of dtype `dtype` at x. */
typedef struct cls_qview {
    const char *x;
    cls_dtype   dtype;
    uint64_t    G, Rg;
    size_t      C;
} cls_qview;

/* Which values take part, and as what: finite ones, not equal to the
 * sentinel (has_sent), taken as |x - cen[e]| when cen is not NULL, inside
 * [flo[e], fhi[e]] when flo is not NULL; e = g * C + column. */
typedef struct cls_qfilter {
    int           has_sent;
    double        sent;
    const double *cen;
    const double *flo, *fhi;
} cls_qfilter;

/* The nk ranks (each < n) wanted of a column with n >= 1 values. */
typedef void (*cls_rank_fn)(void *user, uint64_t n, uint64_t *ranks);

/* cls_select(): for every group and column, count[e] = n, the values that
 * take part, and vals[e * nk + j] = the value of rank ranks[j] (as `rank`
 * gives them for n) among them, exactly (NaN when n = 0). Columns of at
 * most CLS_QSMALL rows take one pass that sorts each column in private
 * memory; longer ones radix passes of 8 bits over the order-preserving integer image of the values (4 for
 * float32, 8 for float64), each with exact counts, over units of rows and
 * columns that every device pulls. The data is only read. nk <= 16. */
#define CLS_QSMALL 128
cls_status cls_select(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                      void *user, uint64_t *count, double *vals);
/* cls_select_combined(): cls_select over the rows of several processes,
 * `comb` summing each pass's counts across them (clscale.h's cls_combine):
 * every group takes the radix passes, whatever its length; comb->fn is
 * called after every pass, and once with any failure before the first. */
cls_status cls_select_combined(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk,
                               cls_rank_fn rank, void *user, const cls_combine *comb, uint64_t *count, double *vals);

#endif
