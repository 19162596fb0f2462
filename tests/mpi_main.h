/* The entry point the MPI tests share: MPI_Init, the rank and the size,
 * one library context per rank for the whole group (small slices: a
 * single-process fit then merges many), the cmocka group, and every rank's
 * verdict combined so that all ranks exit alike. */
#ifndef CLS_TEST_MPI_MAIN_H
#define CLS_TEST_MPI_MAIN_H

#include "common.h"

/* Runs `tests` under `name` on every rank; *rank, *size and *ctx are set
 * before the first test. Returns main's exit status. */
int mpi_test_main(int *argc, char ***argv, const char *name, const struct CMUnitTest *tests, size_t n,
                  int *rank, int *size, cls_context **ctx);

#define MPI_TEST_MAIN(name, tests, rank, size, ctx) \
    mpi_test_main(&argc, &argv, (name), (tests), sizeof(tests) / sizeof((tests)[0]), (rank), (size), (ctx))

#endif
