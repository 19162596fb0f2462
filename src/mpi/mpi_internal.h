/* What the files of the MPI part share (src/mpi/). They use the core's
 * public API (clscale.h) and MPI, nothing else of the core: the core
 * decides a call's passes and calls the combine hooks set up here between
 * them; failures reach the core's one error channel through
 * cls_set_error(). Nothing in the core includes this. */
#ifndef CLS_MPI_INTERNAL_H
#define CLS_MPI_INTERNAL_H

#include <stdint.h>

#include "clscale_mpi.h"

/* ---- mpi_check.c: statuses, messages, reports ---- */

/* This thread's message, composed here and carried between ranks, and
 * report (cls_mpi_last_report). mpi_publish(): a public call's failure
 * `st` with that message into the core's one channel, cls_last_error()
 * (ctx's, or the thread's for NULL: the calls without a context); returns
 * st. Without a message (a core call failed alone) ctx keeps its own. */
void mpi_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mpi_clear_error(void);
const char *mpi_error(void);
cls_status mpi_publish(cls_context *ctx, cls_status st);
cls_mpi_report *mpi_report(void);

/* Values that every rank must pass alike, checked in the same small
 * allreduce as the statuses: each key travels as itself and negated under
 * MPI_MAX, so that one collective gives both its largest and its smallest. */
enum { MPI_KEYS_MAX = 48 };
typedef struct mpi_check {
    /* in */
    cls_status  status;     /* this rank's outcome */
    const char *why;        /* its message when it failed */
    int         has_data;
    int         nkeys;
    int64_t     key[MPI_KEYS_MAX];
    const char *key_name[MPI_KEYS_MAX];
    int         key_only_with_data[MPI_KEYS_MAX]; /* ranks without data do not vote */
    /* out */
    int first_with_data;    /* lowest rank that has data, -1: none */
    int first_without_data; /* lowest rank without data, -1: none */
} mpi_check;

/* The collective: one MPI_Allreduce (MPI_MAX over int64) of the statuses,
 * data flags and keys, then, only after a failure, one MPI_Bcast of the
 * lowest failing rank's status and message.
 * @return CLS_OK on every rank, or the same failure on every rank with
 *         mpi_error() set: the failing rank's status, CLS_E_ARG for keys
 *         that differ between ranks, CLS_E_DEVICE for a failed MPI call. */
cls_status mpi_check_all(MPI_Comm comm, mpi_check *c);

/* Sets the message for a failed MPI call and returns CLS_E_DEVICE. */
cls_status mpi_fail_call(const char *call, int err);

/* ---- mpi_reduce.c: the statistics' collectives ---- */

/* One allreduce of `n` columns, in place, merged with Chan's formulas by a
 * commutative user operation. Returns MPI_SUCCESS or the MPI error. */
int mpi_allreduce_columns(MPI_Comm comm, cls_column_stats *col, size_t n);

/* The stats hook (clscale.h's cls_stats_combine_fn; user: an
 * mpi_combine_state): the ranks' outcomes agreed in one small allreduce,
 * then the columns merged by the commutative Chan operation. */
cls_status mpi_merge_stats(void *user, cls_status local, cls_column_stats *cols, size_t n);

/* Merges every rank's `table` (info->groups x info->cols, overwritten) with
 * mpi_allreduce_columns() into a new *out described by `info`, its rows the
 * ranks' total; records the allreduce's time and bytes in the report. */
cls_status mpi_combine(MPI_Comm comm, cls_column_stats *table, const cls_stats_info *info, cls_stats **out);

/* ---- mpi_quantiles.c: exact quantiles across ranks ---- */

/* How each counting pass's counts travel between ranks: by size (the
 * default: dense, or the non-zero ones as pairs when fewer bytes), or one
 * way forced, for tests and measurements (tests/test_mpi_quantiles.c links
 * the static library to reach it). Rank 0's setting decides for every rank.
 * Not thread-safe against calls running at the same time. */
enum { MPI_COUNTS_AUTO, MPI_COUNTS_DENSE, MPI_COUNTS_SPARSE };
void cls_mpi_counts_force(int mode);

/* The state of the combine hooks of one call. */
typedef struct mpi_combine_state {
    MPI_Comm     comm;
    cls_context *ctx;       /* for this rank's message after a failure */
    const char  *why;       /* that message when it is not the context's */
    double       reduce;    /* seconds in the stats hook's merges of columns */
    double       agree;     /* seconds in its calls without columns (agreements alone) */
    uint64_t     bytes;     /* columns this rank contributed to them */
    unsigned     stats_passes;  /* calls of the stats hook with columns */
    double       quantiles_from; /* MPI_Wtime() at the end of the last merge of columns */
    double       quantile_reduce; /* seconds in the count hook's collectives */
    uint64_t     quantile_bytes;  /* counts this rank contributed */
    unsigned     passes;    /* calls of the count hook */
    unsigned     sparse_passes; /* of them, passes whose counts travelled as pairs */
    double       last_out;  /* MPI_Wtime() as the last hook call returned */
    double       work_from, work_to; /* the local work between the last collective with
                                        data and the stats hook's closing agreement (a
                                        transform) */
} mpi_combine_state;

/* Sets up `c` and the clscale.h hooks that point at it: the count hook
 * (mpi_quantiles.c) and the stats hook (mpi_merge_stats). */
void mpi_combine_init(mpi_combine_state *c, MPI_Comm comm, cls_context *ctx, cls_combine *hook);

#endif
