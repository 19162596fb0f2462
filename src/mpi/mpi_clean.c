/* A cleaning stage across ranks (cls_mpi_fit_transform in CLS_SCOPE_BATCH):
 * the hook that merges each moments pass's column statistics with
 * MPI_Allreduce (clscale.h's cls_combine, its stats function), beside the
 * counts' hook of mpi_quantiles.c, and the run: the core's
 * cls_fit_transform() with a combine hook where the scaler fuses with the cleaning,
 * else cls_fit_transform() with a combine hook (mpi_fit.c then fits and transforms the
 * cleaned rows as any others).
 * Calls MPI, the core's public API and its route (plan/route.h),
 * mpi_check.c, mpi_reduce.c and mpi_quantiles.c. */
#include <string.h>

#include "mpi_internal.h"

/* The stats hook: the ranks' outcomes first (one small allreduce; after a
 * failure every rank returns the failing rank's status), then the columns
 * merged by the commutative Chan operation of mpi_reduce.c. */
static cls_status merge_stats(void *user, cls_status local, cls_column_stats *cols, size_t n)
{
    mpi_combine_state *c = user;
    double t = MPI_Wtime();
    const char *why = c->why ? c->why : c->ctx ? cls_last_error(c->ctx) : NULL;
    cls_status st = cls_mpi_agree(c->comm, local, local != CLS_OK ? why : NULL);
    int size = 1;
    if (st == CLS_OK && n && MPI_Comm_size(c->comm, &size) == MPI_SUCCESS && size > 1) {
        int e = mpi_allreduce_columns(c->comm, cols, n);
        if (e != MPI_SUCCESS) st = mpi_fail_call("MPI_Allreduce (the cleaning's moments)", e);
        /* every rank's collective fails or none: still, agree */
        st = cls_mpi_agree(c->comm, st, st == CLS_OK ? NULL : mpi_error());
        c->bytes += (uint64_t)n * sizeof *cols;
    }
    c->stats_passes += n != 0;
    c->reduce += MPI_Wtime() - t;
    return st;
}

/* The core's one rule (plan/route.h), which its cleaning stage follows. */
int mpi_clean_fuses(const cls_pipeline *p) { return cls_route_fuses(p); }

/* The core's rule too (plan/route.h): a fusing scaler, or none. */
int mpi_clean_streams(const cls_pipeline *p) { return cls_route_clean_streams(p, 0); }

int cls_mpi_clean_streams(const cls_pipeline *p)
{
    return !p || !p->clean || (p->clean->impute != CLS_IMPUTE_MOST_FREQUENT && mpi_clean_streams(p));
}

/* The cleaning's times and collectives into the rank's report. */
static void record(double t0, const mpi_combine_state *c)
{
    cls_mpi_report *r = mpi_report();
    r->clean = MPI_Wtime() - t0;
    r->clean_reduce = c->reduce;
    r->clean_bytes = c->bytes;
    r->clean_passes = c->stats_passes;
}

cls_status mpi_clean_run_files(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p, const cls_array *fin,
                               const cls_array *fout, int has_data, cls_stats **fitted)
{
    if (!has_data) { /* no rows: every hook call alike, without a file */
        cls_array x = {.data = NULL, .dtype = fin->dtype, .batch = 0, .rows = 0, .cols = fin->cols};
        return mpi_clean_run(ctx, comm, p, &x, NULL, 0, fitted);
    }
    mpi_combine_state c;
    cls_combine hook;
    mpi_combine_init(&c, comm, ctx, &hook);
    hook.stats = merge_stats;
    double t = MPI_Wtime();
    cls_pipeline pc = *p;
    pc.combine = &hook;
    cls_status st = cls_fit_transform(ctx, &pc, fin, (cls_array *)fout, mpi_clean_fuses(p) ? fitted : NULL);
    record(t, &c);
    return st;
}

cls_status mpi_clean_run(cls_context *ctx, MPI_Comm comm, const cls_pipeline *p, const cls_array *in, cls_array *out,
                         int has_data, cls_stats **fitted)
{
    mpi_combine_state c;
    cls_combine hook;
    mpi_combine_init(&c, comm, ctx, &hook);
    hook.stats = merge_stats;
    /* a rank without data passes its columns with no rows (out may be NULL) */
    cls_array x = {.data = has_data ? in->data : NULL, .dtype = in->dtype, .batch = has_data ? in->batch : 0, .rows = has_data ? in->rows : 0, .cols = in->cols};
    cls_array y = x;
    if (has_data) y.data = out->data;
    double t = MPI_Wtime();
    cls_pipeline pc = *p;
    pc.combine = &hook;
    cls_status st = mpi_clean_fuses(p) ? cls_fit_transform(ctx, &pc, &x, &y, fitted)
                                       : cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_BATCH,
                                                                                 .clean = p->clean, .combine = &hook},
                                                           &x, &y, NULL);
    record(t, &c);
    return st;
}
