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
 * sentinel (has_sent), not outside [flo[e], fhi[e]] when flo is not NULL
 * (x < flo or x > fhi: NaN bounds exclude nothing, as a sigma clip's),
 * taken as |x - cen[e]| when cen is not NULL; e = g * C + column. */
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
/* Groups of up to this many rows take their ranks from a table by count
 * ((rows + 1) * nk uints, at most 4 MiB) and, in the sort regime on a CPU
 * driver, one launch that loads and selects (cl/sort.cl's qsortg phase
 * 3); longer ones two launches, the host making each entry's ranks in
 * between. */
#define CLS_SELECT_TABLE_MAX 65536
cls_status cls_select(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                      void *user, uint64_t *count, double *vals);
/* cls_select_combined(): cls_select over the rows of several processes,
 * `comb` summing each pass's counts across them (clscale.h's cls_combine):
 * every group takes the radix passes, whatever its length; comb->fn is
 * called after every pass, and once with any failure before the first. */
cls_status cls_select_combined(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk,
                               cls_rank_fn rank, void *user, const cls_combine *comb, uint64_t *count, double *vals);

/* cls_select_small(): cls_select for groups of at most CLS_QSMALL rows
 * (CLS_E_ARG otherwise), handing each unit's results to `take` as the
 * devices return them instead of filling arrays: n entries from e0 on,
 * count[i] values taking part in entry e0 + i and vals[i * nk + j] (of the
 * data's dtype; NaN where the rank is past the count) the value of rank j.
 * take runs on the devices' workers, concurrently for disjoint entries,
 * and must not fail; the buffers are valid during the call only. */
typedef void (*cls_qtake_fn)(void *user, size_t e0, size_t n, const uint32_t *count, const void *vals);
cls_status cls_select_small(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                            void *user, cls_qtake_fn take, void *take_user);

/* Data that is not in memory at once (a file streamed in chunks). Before
 * each counting pass the selection calls each(user, chunk, cu), which must
 * call chunk(cu, g, rows, x) for every block of rows of the data, in any
 * order, each block `rows` x C values of group g at x (valid during that
 * call only), every row of every group exactly once per pass, and return
 * the first failure (chunk's or its own). The same rows each pass. */
typedef cls_status (*cls_qchunk_fn)(void *cu, uint64_t g, uint64_t rows, const char *x);
typedef struct cls_qsource {
    cls_status (*each)(void *user, cls_qchunk_fn chunk, void *cu);
    void *user;
} cls_qsource;
/* cls_select_source(): cls_select_combined (comb may be NULL) over the data
 * `src` gives (v->x is not read; v describes the groups): every group
 * takes the radix passes, each pass a call of src->each (4 for float32, 8
 * for float64, per wave of columns: one wave unless the histograms of
 * every column pass the context's scratch budget, regime.h's
 * cls_count_budget; CLS_E_NOMEM where it cannot hold one column's). */
cls_status cls_select_source(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                             void *user, const cls_combine *comb, const cls_qsource *src, uint64_t *count,
                             double *vals);

/* cls_select_put(): every entry's count and nk order statistics (as
 * doubles) handed to put(put_user, e, n, pv), in any order: short groups of
 * one process (no comb, no src) straight from each unit's results
 * (cls_select_small), everything else through count and value tables
 * (cls_select_combined, or cls_select_source with src). put must not fail;
 * on short groups it runs on the devices' workers, concurrently for
 * disjoint entries. nk <= 16. */
typedef void (*cls_qput_fn)(void *user, size_t e, uint64_t n, const double *pv);
cls_status cls_select_put(cls_context *ctx, const cls_qview *v, const cls_qfilter *f, size_t nk, cls_rank_fn rank,
                          void *user, const cls_combine *comb, const cls_qsource *src, cls_qput_fn put,
                          void *put_user);

/* The ranks of the median (the middle two; a cls_rank_fn, user unused). */
void cls_select_median_ranks(void *user, uint64_t n, uint64_t *ranks);

/* Where cls_select_median_put (a cls_qput_fn with those ranks) puts each
 * entry's median: numpy's, of the middle two values in dtype, at out[e];
 * NaN for an empty entry. */
typedef struct cls_median_out {
    cls_dtype dtype;
    double   *out;
} cls_median_out;
void cls_select_median_put(void *user, size_t e, uint64_t n, const double *pv);

#endif
