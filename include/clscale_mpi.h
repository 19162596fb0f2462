/*
 * clscale_mpi: the same calls across the ranks of an MPI communicator.
 *
 * Each rank runs an ordinary clscale context on the OpenCL devices of its
 * own node, over its own part of the data; the ranks combine their
 * statistics with one MPI_Allreduce, so that every rank holds what a single
 * process would have fitted on the whole array, and then transform their own
 * part locally. clscale adds no scheduler of its own: start the ranks with
 * mpirun (or the cluster's launcher) as for any MPI program.
 *
 * Who owns what:
 *   CLS_SCOPE_BATCH   statistics over all rows: each rank passes any number
 *                     of rows (0 included) of the same columns, in any split;
 *                     the fit combines them (one MPI_Allreduce of
 *                     groups x cols cls_column_stats, 80 bytes each).
 *   CLS_SCOPE_MATRIX  statistics per matrix: each rank passes whole matrices
 *                     (0 included) and fits them alone; no statistics move,
 *                     only the ranks' statuses. cls_mpi_stats_gather()
 *                     collects every rank's matrices on one rank (to save
 *                     them in one file).
 *
 * Results: min, max, absmax, count and missing are exact, so they equal a
 * single-process fit bit for bit, and so are the robust scaler's median and
 * quantile range (below); mean and m2 are merged with Chan's
 * formulas in a different order than one process merges its slices, so they
 * agree to about 1e-15 relative in float64 (the tests hold them to 1e-12).
 * The reduction operation is commutative bit for bit (it orders its two
 * operands the same way whichever side holds them), so every rank holds the
 * same bits with Open MPI's reduction algorithms (tested for 1 to 4 ranks).
 *
 * All or nothing: every function here is collective over `comm` (every rank
 * must call it, in the same order). When one rank fails (a bad argument, no
 * device, a device lost mid-call, no memory), every rank returns that rank's
 * status, and the core's one error channel, cls_last_error(ctx) (for the
 * calls without a context cls_last_error(NULL), this thread's), says on
 * every rank which rank failed and why:
 * "rank 2 of 4: CLS_E_DEVICE: device 0 (...): clEnqueueNDRangeKernel: ...".
 * No rank is left waiting in a collective. A rank that dies (a signal) is
 * MPI's to handle: Open MPI's mpirun then ends every rank.
 *
 * Why a library of its own (libclscale_mpi, with the meson feature `mpi`):
 * the core library (libclscale) must keep no MPI dependency, since most of
 * its users never start MPI and an MPI library is tied to one MPI
 * implementation. This part is a thin layer over the core's public API
 * alone: the combine hooks of a cls_pipeline (clscale.h, "Several
 * processes") run MPI's collectives, and the core's own calls (cls_fit,
 * cls_fit_transform, cls_quantiles) decide every pass, what fuses, what
 * streams and what takes counting passes, and call the hooks between
 * them; failures reach cls_last_error() through cls_set_error(). It links
 * to libclscale and to MPI and is built only where MPI is found.
 *
 * Threads: call these functions from the thread that initialised MPI (or with
 * MPI_THREAD_SERIALIZED or better), one call at a time per communicator, as
 * with any MPI collective. A context is used as with the core API.
 *
 * Exact quantiles (robust scaling, cls_mpi_quantiles) do not merge by
 * Chan's formulas: in CLS_SCOPE_BATCH the ranks run the core's counting
 * passes together, one MPI_Allreduce(MPI_SUM) of the per-column histograms
 * after each pass (clscale.h's cls_combine hook), so they are exact and
 * equal one process's bit for bit.
 *
 * A cleaning stage (cls_mpi_fit_transform, CLS_SCOPE_BATCH) runs across
 * the ranks through the same hook: each moments pass's column statistics
 * merged by the Chan allreduce, the medians (clip centre, mad_std, median
 * imputation) by the summed counting passes, so every rank takes the same
 * clipping decisions and fills as one process over all rows (counts,
 * medians and the bounds and fills they give bit for bit; means and stds
 * to about 1e-15 relative). most_frequent imputation is CLS_E_UNSUPPORTED
 * (it needs the values, not counts), never approximated.
 */
#ifndef CLSCALE_MPI_H
#define CLSCALE_MPI_H

#include <mpi.h>

#include "clscale.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cls_mpi_fit() : fits `p` on each rank's `local_x` and, in CLS_SCOPE_BATCH,
 * combines the ranks' statistics so that every rank's *out holds the
 * statistics of all ranks' rows (info.rows is their total). In
 * CLS_SCOPE_MATRIX each rank's *out holds its own matrices only
 * (info.groups = local_x->batch).
 * `local_x` may hold no data: batch or rows 0 (data may then be NULL), cols
 * and dtype still given. At least one rank must hold data; every rank must
 * pass the same pipeline (scaler, scope, range, clip; qmin, qmax and the
 * robust flags), dtype and cols. CLS_ROBUST in CLS_SCOPE_BATCH runs the
 * exact quantiles' counting passes across the ranks (cls_mpi_quantiles());
 * its statistics equal one process's cls_fit() bit for bit. A pipeline
 * with a cleaning stage is CLS_E_UNSUPPORTED here in CLS_SCOPE_BATCH (a
 * cleaning stage writes data: cls_mpi_fit_transform() runs it).
 * @return CLS_OK and *out on every rank (free with cls_stats_destroy()), or
 *         on every rank the status of the lowest failing rank and *out NULL;
 *         cls_last_error(ctx) says which rank and why. CLS_E_ARG also when the
 *         ranks disagree on the pipeline, dtype or cols, or no rank has
 *         data; CLS_E_DEVICE when an MPI call fails. */
CLS_API cls_status cls_mpi_fit(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p,
                               const cls_array *local_x, cls_stats **out);

/* cls_mpi_fit_transform() : cls_mpi_fit() on `in`, then cls_transform() of
 * each rank's `in` into its `out` (which may be `in`) with the combined
 * statistics. A cleaning stage (p->clean) in CLS_SCOPE_BATCH cleans every
 * rank's rows as one process would clean all of them
 * (cls_fit_transform() with a combine hook of clscale.h with MPI hooks), the scaler
 * fused into the cleaning's last pass where cls_fit_transform() fuses it,
 * else fitted across the ranks on the cleaned rows; every rank passes the
 * same cleaning options; most_frequent is CLS_E_UNSUPPORTED. In CLS_SCOPE_MATRIX the fit and the transform run as one
 * cls_fit_transform() per rank (one pass over the data where it fits). A
 * rank with no data transforms nothing. `fitted`, when not NULL, receives
 * the statistics as cls_mpi_fit() gives them; pass it on every rank or on
 * none (CLS_E_ARG otherwise). Without it, CLS_SCOPE_MATRIX collects no
 * statistics at all (for seed-A's 18 x 98450 columns they are 142 MB).
 * @return as cls_mpi_fit(): CLS_OK on every rank, or the lowest failing
 *         rank's status on every rank. After a failure in the transform,
 *         other ranks' `out` may hold their results: the caller discards
 *         them (the clscale tool renames its output only after success). */
CLS_API cls_status cls_mpi_fit_transform(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p,
                                         const cls_array *in, cls_array *out, cls_stats **fitted);

/* cls_mpi_fit_transform() of arrays stored in files (cls_array with
 * CLS_IN_FILE, clscale.h's streaming): each rank
 * streams its own `in` through the library's fixed pool of buffers and
 * writes its `out` (typically its own byte range of one shared file, or
 * its own file), so a rank's part may be larger than its memory. In
 * CLS_SCOPE_BATCH each rank reads its part twice (its statistics, then the
 * transform with the combined ones); in CLS_SCOPE_MATRIX once or twice as
 * cls_fit_transform() of a file. A rank with no data passes batch or rows 0.
 * The same rules and results as cls_mpi_fit_transform(), up to the
 * rounding of means and variances merged over the stream's chunks. A
 * cleaning stage in CLS_SCOPE_BATCH streams too, by the cleaning stage's
 * passes over each rank's part with the hooks between them
 * (cls_fit_transform() with a combine hook), ahead of a scaler that fuses
 * with it (min-max, z-score, decimal, max-abs) or none; another such
 * pipeline is CLS_E_UNSUPPORTED on every rank before any pass (clean
 * arrays in memory with cls_mpi_fit_transform(), as the clscale tool then
 * does).
 * @return as cls_mpi_fit_transform(); an I/O failure is CLS_E_IO on every
 *         rank with the failing rank's file and offset in cls_last_error(ctx). */


/* cls_mpi_quantiles() : exact quantiles of every column across the ranks,
 * bit for bit those of one cls_quantiles() over all ranks' rows (numpy's
 * nanquantile, "linear"). CLS_SCOPE_BATCH: each rank passes any rows of the
 * same columns (0 included: batch or rows 0, data NULL); the counting
 * passes run on each rank's devices over its own rows and, after each
 * pass, one MPI_Allreduce(MPI_SUM) of the uint64 counts (cls_combine in
 * clscale.h) gives every rank the same histograms, so every rank narrows to
 * the same bucket and ends with the same exact values; `out` is nq x cols
 * on every rank. CLS_SCOPE_MATRIX: each rank passes whole matrices (0
 * included) and gets its own matrices' quantiles (batch x nq x cols), with
 * no counts moving. Every rank passes the same dtype, cols, scope and q.
 * Cost (batch): 4 (float32) or 8 (float64) counting passes over each
 * rank's rows; after each, one small allreduce of the ranks' outcomes and
 * one MPI_Allgather of their numbers of non-zero counts, then the counts:
 * densely (one MPI_Allreduce of 2048 * nq * cols bytes; the first pass
 * 2048 * cols) or, when fewer bytes, as 16-byte (index, count) pairs of the
 * non-zero ones (one MPI_Allgatherv; after the first pass most buckets are
 * empty). See cls_mpi_last_report().
 * @return as cls_mpi_fit(): CLS_OK on every rank, or the lowest failing
 *         rank's status on every rank (out then undefined); CLS_E_ARG also
 *         when the ranks disagree or no rank holds data. */
CLS_API cls_status cls_mpi_quantiles(cls_context *ctx, MPI_Comm comm, const cls_array *local_x, cls_scope scope,
                                     const double *q, size_t nq, double *out);

/* cls_mpi_agree() : combines the ranks' own outcomes: every rank passes its
 * `local` status and, when it failed, `why` (may be NULL). Collective.
 * @return CLS_OK on every rank when every rank passed CLS_OK; otherwise, on
 *         every rank, the status of the lowest failing rank, and
 *         this thread's cls_last_error(NULL) is "rank R of N: STATUS: why".
 *         CLS_E_DEVICE when an MPI call fails. */
CLS_API cls_status cls_mpi_agree(MPI_Comm comm, cls_status local, const char *why);

/* cls_mpi_stats_allreduce() : every rank's *out receives the statistics of
 * all ranks' `local` merged group by group with Chan's formulas, as if each
 * group had seen every rank's rows of it (info.rows: their total): the
 * combination step of cls_mpi_fit(), for statistics a rank accumulated
 * itself (cls_fit() over chunks merged with cls_stats_merge(), a file).
 * Every rank's `local` must describe the same pipeline, groups and cols.
 * One small allreduce checks that, one MPI_Allreduce merges.
 * @return as cls_mpi_agree(); *out (free with cls_stats_destroy()) only
 *         with CLS_OK. */
CLS_API cls_status cls_mpi_stats_allreduce(MPI_Comm comm, const cls_stats *local, cls_stats **out);

/* cls_mpi_stats_gather() : on rank `root`, *out receives the matrices of
 * every rank's CLS_SCOPE_MATRIX statistics `local` in rank order (groups =
 * the sum of the ranks' groups); other ranks get *out = NULL. Statistics of
 * CLS_SCOPE_BATCH are already the same on every rank: root gets a copy.
 * Every rank's `local` must describe the same pipeline and cols (a rank with
 * no matrices passes the 0-group statistics cls_mpi_fit() gave it).
 * @return as cls_mpi_agree(). */
CLS_API cls_status cls_mpi_stats_gather(MPI_Comm comm, int root, const cls_stats *local, cls_stats **out);

/* What the last cls_mpi_fit(), cls_mpi_fit_transform() or
 * cls_mpi_stats_allreduce() of this thread did on this rank, in seconds
 * (MPI_Wtime); fields a call does not have stay 0. */
typedef struct cls_mpi_report {
    double   fit;             /* the local fit (CLS_SCOPE_MATRIX: fused fit + transform), the
                                 collectives not counted */
    double   check;           /* the small allreduce that checks statuses and arguments */
    double   reduce;          /* the allreduce of the statistics (0 in CLS_SCOPE_MATRIX) */
    uint64_t reduce_bytes;    /* bytes of statistics each rank contributed to it */
    double   transform;       /* the local transform (cls_mpi_fit_transform, CLS_SCOPE_BATCH
                                 without a cleaning stage) */
    double   total;           /* the whole call */
    /* exact quantiles across ranks (robust scaling in CLS_SCOPE_BATCH,
     * cls_mpi_quantiles): their counting passes, the collectives of those
     * passes (included in `quantiles`), the bytes of counts this rank
     * contributed to them, and the number of passes */
    double   quantiles;
    double   quantile_reduce;
    uint64_t quantile_bytes;
    unsigned quantile_passes;
    /* a cleaning stage across ranks (cls_mpi_fit_transform, batch scope):
     * the whole cleaning (fused with the scaler where it fuses), the
     * collectives of its hooks (included), the bytes of moments (80 per
     * column and pass) and counts this rank contributed, and the number
     * of moments passes merged */
    double   clean;
    double   clean_reduce;
    uint64_t clean_bytes;
    unsigned clean_passes;
} cls_mpi_report;

/* cls_mpi_last_report() : copies this thread's report of the last call.
 * @return CLS_OK, or CLS_E_ARG when out is NULL. */
CLS_API cls_status cls_mpi_last_report(cls_mpi_report *out);


#ifdef __cplusplus
}
#endif
#endif /* CLSCALE_MPI_H */
