/* Exact quantiles across ranks: the count hook (clscale.h's cls_combine)
 * that sums each counting pass's histograms with MPI_Allreduce after the
 * ranks agreed that every one of them counted (the core calls it in
 * cls_quantiles, and in a fit or cleaning that takes counting passes), the
 * setting up of both hooks, and cls_mpi_quantiles().
 * Calls MPI, the core's public API, mpi_check.c and mpi_reduce.c. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* How the counts travel (mpi_internal.h), rank 0's setting deciding for all. */
static int counts_mode = MPI_COUNTS_AUTO;

void cls_mpi_counts_force(int mode) { counts_mode = mode; }

/* The counts summed densely: MPI_Allreduce in pieces of at most INT_MAX. */
static int sum_dense(MPI_Comm comm, uint64_t *counts, size_t n)
{
    const size_t chunk = INT_MAX;
    int e = MPI_SUCCESS;
    for (size_t at = 0; e == MPI_SUCCESS && at < n; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        e = MPI_Allreduce(MPI_IN_PLACE, counts + at, (int)k, MPI_UINT64_T, MPI_SUM, comm);
    }
    return e;
}

/* The counts summed sparsely: after the first pass most of a column's 256
 * buckets are empty (only the values that share a wanted value's leading
 * bits are counted), so each rank sends its non-zero (index, count) pairs
 * (one MPI_Allgatherv) and every rank adds every rank's pairs, in rank
 * order, into zeroed counts: integer sums, the same on every rank. */
static int sum_sparse(MPI_Comm comm, uint64_t *counts, size_t n, const uint64_t *nnz, int size, uint64_t *sent)
{
    int rank, e = MPI_Comm_rank(comm, &rank);
    if (e != MPI_SUCCESS) return e;
    int *cnt = malloc((size_t)size * sizeof *cnt), *at = malloc((size_t)size * sizeof *at);
    size_t total = 0;
    for (int r = 0; r < size; r++) total += nnz[r];
    uint64_t *mine = malloc((nnz[rank] ? nnz[rank] : 1) * 2 * sizeof *mine);
    uint64_t *all = malloc((total ? total : 1) * 2 * sizeof *all);
    if (!cnt || !at || !mine || !all) {
        free(cnt);
        free(at);
        free(mine);
        free(all);
        return MPI_ERR_NO_MEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (counts[i]) {
            mine[2 * k] = i;
            mine[2 * k + 1] = counts[i];
            k++;
        }
    size_t off = 0;
    for (int r = 0; r < size; r++) {
        cnt[r] = (int)(2 * nnz[r]);
        at[r] = (int)off;
        off += 2 * nnz[r];
    }
    e = MPI_Allgatherv(mine, (int)(2 * k), MPI_UINT64_T, all, cnt, at, MPI_UINT64_T, comm);
    if (e == MPI_SUCCESS) {
        memset(counts, 0, n * sizeof *counts);
        for (size_t j = 0; j < total; j++) counts[all[2 * j]] += all[2 * j + 1];
        *sent = k * 2 * sizeof *mine;
    }
    free(cnt);
    free(at);
    free(mine);
    free(all);
    return e;
}

/* The hook: first the ranks' outcomes (one small allreduce; after a failure
 * every rank returns the failing rank's status), then every rank's number
 * of non-zero counts (one MPI_Allgather), which decides for all ranks alike
 * whether the counts travel densely (MPI_Allreduce, 8 bytes an entry) or
 * as pairs (16 bytes a non-zero entry), whichever moves fewer bytes. */
static cls_status sum_counts(void *user, cls_status local, uint64_t *counts, size_t n)
{
    mpi_combine_state *c = user;
    double t = MPI_Wtime();
    const char *why = c->why ? c->why : c->ctx ? cls_last_error(c->ctx) : NULL;
    cls_status st = cls_mpi_agree(c->comm, local, local != CLS_OK ? why : NULL);
    c->passes++;
    int size = 1;
    if (st == CLS_OK && n && MPI_Comm_size(c->comm, &size) == MPI_SUCCESS && size == 1) {
        /* one rank: its counts are the sum */
    } else if (st == CLS_OK && n) {
        int e = MPI_Comm_size(c->comm, &size);
        uint64_t mine[2] = {0, (uint64_t)counts_mode}, *info = malloc((size_t)size * 2 * sizeof *info);
        for (size_t i = 0; i < n; i++) mine[0] += counts[i] != 0;
        if (!info) e = MPI_ERR_NO_MEM;
        if (e == MPI_SUCCESS) e = MPI_Allgather(mine, 2, MPI_UINT64_T, info, 2, MPI_UINT64_T, c->comm);
        uint64_t total = 0, sent = (uint64_t)n * sizeof *counts;
        for (int r = 0; e == MPI_SUCCESS && r < size; r++) total += info[2 * r];
        int mode = e == MPI_SUCCESS ? (int)info[1] : MPI_COUNTS_DENSE;  /* rank 0's */
        /* pairs take 16 bytes; every rank receives all of them */
        int sparse = e == MPI_SUCCESS && 2 * total <= INT_MAX &&
                     (mode == MPI_COUNTS_SPARSE || (mode == MPI_COUNTS_AUTO && total * 16 < (uint64_t)n * 8));
        for (int r = 0; sparse && e == MPI_SUCCESS && r < size; r++) info[r] = info[2 * r];
        if (e == MPI_SUCCESS)
            e = sparse ? sum_sparse(c->comm, counts, n, info, size, &sent) : sum_dense(c->comm, counts, n);
        free(info);
        if (e != MPI_SUCCESS)
            st = e == MPI_ERR_NO_MEM ? CLS_E_NOMEM
                                     : mpi_fail_call("MPI_Allgather / MPI_Allgatherv / MPI_Allreduce (quantile counts)", e);
        if (st == CLS_E_NOMEM) mpi_set_error("out of memory for the quantiles' counts");
        /* every rank's collective fails or none: still, agree */
        st = cls_mpi_agree(c->comm, st, st == CLS_OK ? NULL : mpi_error());
        c->quantile_bytes += sent;
        c->sparse_passes += sparse;
    }
    c->last_out = MPI_Wtime();
    c->quantile_reduce += c->last_out - t;
    return st;
}

void mpi_combine_init(mpi_combine_state *c, MPI_Comm comm, cls_context *ctx, cls_combine *hook)
{
    memset(c, 0, sizeof *c);
    c->comm = comm;
    c->ctx = ctx;
    hook->fn = sum_counts;
    hook->user = c;
    hook->stats = mpi_merge_stats;
}

static cls_status quantiles(cls_context *ctx, MPI_Comm comm, const cls_array *local_x, cls_scope scope,
                            const double *q, size_t nq, double *out)
{
    cls_mpi_report *r = mpi_report();
    memset(r, 0, sizeof *r);
    double t0 = MPI_Wtime();
    const cls_array *x = local_x;
    mpi_check k;
    memset(&k, 0, sizeof k);
    k.status = CLS_E_ARG;
    if (!ctx) k.why = "ctx is NULL";
    else if (!x) k.why = "the local array is NULL";
    else if (!x->cols) k.why = "the local array has 0 columns (every rank gives the columns, also with no rows)";
    else if (x->dtype != CLS_F32 && x->dtype != CLS_F64) k.why = "the local array's dtype is neither CLS_F32 nor CLS_F64";
    else if (scope != CLS_SCOPE_MATRIX && scope != CLS_SCOPE_BATCH) k.why = "unknown scope";
    else if (nq == 0 || nq > 8 || !q) k.why = "1 to 8 quantiles per call (q not NULL)";
    else if (!out && x->batch && x->rows) k.why = "out is NULL";
    else if (x->batch && x->rows && !x->data) k.why = "the local array's data is NULL";
    else if (scope == CLS_SCOPE_MATRIX && x->batch && !x->rows) k.why = "CLS_SCOPE_MATRIX: the local matrices have 0 rows";
    else k.status = CLS_OK;
    int ok = k.status == CLS_OK;
    k.has_data = ok && x->batch && x->rows;
    const char *names[] = {"scopes", "dtypes", "columns", "numbers of quantiles"};
    int64_t keys[] = {ok ? scope : 0, ok ? x->dtype : 0, ok ? (int64_t)x->cols : 0, ok ? (int64_t)nq : 0};
    for (int i = 0; i < 4; i++) {
        k.key[k.nkeys] = keys[i];
        k.key_name[k.nkeys++] = names[i];
    }
    for (size_t j = 0; j < 8; j++) {
        double v = ok && j < nq ? q[j] : 0;
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        k.key[k.nkeys] = (int64_t)(b >> 32);
        k.key_name[k.nkeys++] = "quantiles q";
        k.key[k.nkeys] = (int64_t)(b & 0xffffffffu);
        k.key_name[k.nkeys++] = "quantiles q";
    }
    double t = MPI_Wtime();
    cls_status st = mpi_check_all(comm, &k);
    r->check = MPI_Wtime() - t;
    if (st == CLS_OK && k.first_with_data < 0) {
        mpi_set_error("no rank holds data (every rank passed 0 rows)");
        st = CLS_E_ARG;
    }
    if (st != CLS_OK) {
        r->total = MPI_Wtime() - t0;
        return st;
    }
    t = MPI_Wtime();
    if (scope == CLS_SCOPE_MATRIX) {
        /* whole matrices per rank: each rank's own, nothing to combine */
        cls_status ls = x->batch ? cls_quantiles(ctx, &(cls_pipeline){.scope = scope}, x, q, nq, out) : CLS_OK;
        st = cls_mpi_agree(comm, ls, ls != CLS_OK ? cls_last_error(ctx) : NULL);
        r->fit = MPI_Wtime() - t;
    } else {
        mpi_combine_state c;
        cls_combine hook;
        mpi_combine_init(&c, comm, ctx, &hook);
        st = cls_quantiles(ctx, &(cls_pipeline){.scope = scope, .combine = &hook}, x, q, nq, out);
        r->quantiles = MPI_Wtime() - t;
        r->quantile_reduce = c.quantile_reduce;
        r->quantile_bytes = c.quantile_bytes;
        r->quantile_passes = c.passes;
    }
    r->total = MPI_Wtime() - t0;
    return st;
}

cls_status cls_mpi_quantiles(cls_context *ctx, MPI_Comm comm, const cls_array *local_x, cls_scope scope,
                             const double *q, size_t nq, double *out)
{
    mpi_clear_error();
    return mpi_publish(ctx, quantiles(ctx, comm, local_x, scope, q, nq, out));
}
