/* See mpi_main.h. */
#include <mpi.h>

#include "mpi_main.h"

static cls_context **the_ctx;

static int setup(void **state)
{
    (void)state;
    *the_ctx = test_context(NULL, 0, 2048);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cls_context_destroy(*the_ctx);
    *the_ctx = NULL;
    return 0;
}

int mpi_test_main(int *argc, char ***argv, const char *name, const struct CMUnitTest *tests, size_t n,
                  int *rank, int *size, cls_context **ctx)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    the_ctx = ctx;
    int failed = test_run(name, tests, n, setup, teardown);
    /* every rank's verdict decides the exit status of each */
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
