/* clscale normalize | apply | discount --mpi: the entry point that
 * cmd_normalize.c calls after parsing, and what the files of the MPI mode
 * (mpi_run.c, mpi_out.c) share. Built only with the meson feature `mpi`. */
#ifndef CLS_CLI_MPI_CMD_H
#define CLS_CLI_MPI_CMD_H

#include <stddef.h>

#include "clscale.h"

enum { CLI_MPI_NORMALIZE = 1, CLI_MPI_APPLY = 2, CLI_MPI_DISCOUNT = 3 };

/* A parsed command line (cmd_normalize.c checked it). */
typedef struct cli_mpi_job {
    int          cmd;        /* CLI_MPI_* */
    const char  *name;       /* "normalize", "apply", "discount" */
    const char  *in, *out;
    const char  *devices;    /* NULL: $CLSCALE_DEVICES, else all */
    int          verbose;
    cls_pipeline p;          /* normalize: scaler, scope, range, clip */
    const char  *stats_out;  /* normalize */
    const char  *stats;      /* apply */
    int          inverse;    /* apply */
    const char  *factors;    /* discount */
    int          light_curve; /* a trend or bins: each rank takes whole matrices (a 2-D IN: one) */
    int          reduce;     /* clean --bin: OUT has ceil(rows / bin_rows) rows per matrix */
} cli_mpi_job;

/* Initialises MPI, runs the command on this rank's part of IN, finalises
 * MPI. Every rank returns the same exit status: 0, or 1 when any rank
 * failed (rank 0 prints the failing rank's message). */
int cli_mpi_run(const cli_mpi_job *job);

#ifdef CLS_CLI_MPI_INTERNAL
#include <mpi.h>

#include "io/npy.h"

/* The shared output: rank 0 creates the temporary beside OUT (header
 * written, file sized once); every rank writes its own byte range of the
 * data through a descriptor of it (the library's streaming calls). */
typedef struct mpi_out {
    cls_npy  npy;         /* rank 0: the created temporary */
    char     tmp[4096];   /* its path, on every rank */
    int      fd;          /* other ranks: the temporary, or -1 */
    uint64_t data_offset; /* where the array starts in the file, on every rank */
} mpi_out;

/* Collective. Rank 0 names the temporary and tells the others; every rank
 * calls named(user, tmp) (to register it for removal on a signal), then,
 * after a barrier, rank 0 creates it: a rank killed at any moment leaves
 * no temporary that a survivor does not know. The others open it when
 * they have `len` bytes of its data to write (len 0: nothing).
 * Returns this rank's status and message; the caller combines them
 * (cls_mpi_agree). */
cls_status mpi_out_open(MPI_Comm comm, const char *path, cls_dtype dtype, size_t ndim, const size_t *shape,
                        size_t len, void (*named)(void *user, const char *tmp), void *user, mpi_out *o, char *err,
                        size_t errlen);
/* The descriptor this rank writes its range through, or -1. */
int mpi_out_fd(const mpi_out *o);
/* Puts this rank's range on disk (fsync) and closes its descriptor (ranks
 * other than 0); rank 0's part is synced by mpi_out_commit(). */
cls_status mpi_out_flush(mpi_out *o, const char *path, char *err, size_t errlen);
/* Rank 0: syncs and renames the temporary onto OUT. */
cls_status mpi_out_commit(mpi_out *o, char *err, size_t errlen);
/* Any rank: releases what it holds; rank 0 removes the temporary. */
void mpi_out_discard(mpi_out *o);
#endif

#endif
