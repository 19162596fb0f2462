/* The one place that decides how exact order statistics and k-sigma
 * clipping are computed for a statistics group of `rows` values per
 * column (docs/ENGINE.md, "Exact statistics at every shape"):
 *
 *   CLS_REGIME_NETWORK  rows <= the sorting networks' length (clipping 64,
 *                       order statistics 128): each column sorted in
 *                       registers or local memory, one pass;
 *   CLS_REGIME_SORT     longer groups whose one-column window (cl/sort.cl:
 *                       two key arrays and the digit counters) fits the
 *                       scratch a unit may hold: each column sorted once
 *                       in scratch, one pass, every iteration O(log n);
 *   CLS_REGIME_COUNT    anything else (and several processes, streamed
 *                       files): counting passes over the data, histograms
 *                       of a fixed size per column.
 *
 * The scratch of the sort regime is the context's budget
 * (cls_config.scratch_bytes, default CLS_SCRATCH_DEFAULT) shared by the
 * devices that run units at once; a launch takes as many columns as its
 * share holds, so the scratch depends on the budget, not on the number of
 * groups or columns. */
#ifndef CLS_REGIME_H
#define CLS_REGIME_H

#include "internal.h"
#include "engine/sort_shape.h"

typedef enum cls_regime { CLS_REGIME_NETWORK, CLS_REGIME_SORT, CLS_REGIME_COUNT } cls_regime;

#define CLS_SCRATCH_DEFAULT ((size_t)256 << 20)
/* The scratch one launch of the sort regime aims at: a few MiB, reused by
 * the next launch, so its pages stay mapped and mostly cached. */
#define CLS_SORT_LAUNCH_BYTES ((uint64_t)8 << 20)
/* The columns a work-item of cl/clip_sort.cl takes (its S_XB). */
#define CLS_SORT_LANES 8
/* CLS_SORT_MERGE_MAX, CLS_SORT_WIDE_MIN: engine/sort_shape.h */

/* The regime of groups of `rows` values (es bytes each) on ctx's devices,
 * where the networks take up to network_rows (the counting passes for
 * every length where a test set ctx->count_regime). */
cls_regime cls_regime_of(const cls_context *ctx, uint64_t rows, size_t es, uint64_t network_rows);

/* The host memory of the counting passes' histograms (select.c), per
 * wave of columns: the context's scratch budget (cls_config.scratch_bytes,
 * the sort regime's) for data streamed from a file by one process, whose
 * every wave reads the file 4-8 times; in memory and across processes a
 * fixed CLS_COUNT_MEM_BYTES (a wave there is a pass over memory; across
 * processes every one must take the same waves, whatever its
 * configuration; and a budget too small for any window is how the tests
 * send groups of every length to the counting passes). */
#define CLS_COUNT_MEM_BYTES ((size_t)64 << 20)
size_t cls_count_budget(const cls_context *ctx, int streamed, int combined);

/* Whether the counting passes count a first digit of up to 16 bits and
 * keep sampled windows of each wanted rank (window.h), so that one pass
 * and a gather end most selections: where each pass is a read of a file
 * by one process (streamed, not combined: across processes no host holds
 * every value for a gather). In memory a pass is cheap and 8-bit digits
 * keep the histograms in cache. */
int cls_count_wide_first(const cls_context *ctx, int streamed, int combined);

/* Bytes of one column's window in cl/sort.cl (S_WIN). */
uint64_t cls_sort_window_bytes(uint64_t rows, size_t es);

/* Columns one launch of a sort-regime kernel takes (>= 1 in the sort regime). */
size_t cls_sort_columns(const cls_context *ctx, uint64_t rows, size_t es);

/* The sort regime's scratch over a call: one buffer per device (an array
 * of ctx->ndevs, from cls_sort_scratch_new), made by the device's first
 * unit with cls_sort_columns windows, reused by its later units and
 * launches (a device runs one unit at a time), released by
 * cls_sort_scratch_free. *out: device d's buffer. On a device that works
 * on host memory the buffer lies over a host table kept between calls
 * (cls_pass_result_buffer): a fresh buffer of a launch's windows (tens of
 * MiB for columns of 10^5 rows) took a page fault per 4 KiB every call. */
typedef struct cls_sort_scratch cls_sort_scratch;
cls_sort_scratch *cls_sort_scratch_new(const cls_context *ctx);
cls_status cls_sort_scratch_get(cls_context *ctx, cls_sort_scratch *per_dev, cls_dev *d, uint64_t rows, size_t es,
                                cl_mem *out);
void cls_sort_scratch_free(const cls_context *ctx, cls_sort_scratch *per_dev);

/* Whether device d sorts the sort regime's windows with every work-item
 * at once (cl/sort.cl's wsort: tiles in local memory, then merges, a
 * work-item per value) before the per-column kernels read them sorted,
 * rather than a work-item sorting its columns alone: on a GPU proper,
 * whose thousands of lanes a work-item per column leaves idle on a table
 * of a few hundred columns (or a tests' choice, ctx->sort_parallel). A
 * CPU driver runs a work-item per column at its best: the column stays
 * in one core's caches. */
int cls_sort_parallel(const cls_context *ctx, const cls_dev *d);

/* Sorts windows [0, n_e) of scr: entry e0 + i's kept values (the filter
 * of quantile.cl's q_take: qflags, sent, cen/flo/fhi) of x, laid out as
 * qsortg reads it, into window i's first array, their count into
 * cnt[cnt_off + i] (cl/sort.cl's wsort, launched on d's queue 0, waited
 * for). cen, flo and fhi are buffers of the data's type (any, where
 * qflags does not read them). */
typedef struct cls_wsort_args {
    cl_mem   x, cen, flo, fhi, scr, cnt;
    uint64_t xoff, ld, gstride, e0, cnt_off, n_e;
    uint32_t ncols, rows, qflags;
    double   sent;
} cls_wsort_args;
cls_status cls_wsort(cls_context *ctx, cls_dev *d, cls_dtype t, const cls_wsort_args *w);

/* The work-group size of a launch of `items` work-items on d: at most 8,
 * and groups enough for every compute unit (PoCL runs a group on one
 * thread; a tall table has a handful of columns). */
size_t cls_sort_local(const cls_dev *d, size_t items);

#endif
