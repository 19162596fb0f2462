/* The statistics' collectives: the MPI datatype of one cls_column_stats, the
 * user-defined operation that merges two of them with Chan's formulas, the
 * allreduce of a table of columns, the stats hook (clscale.h's cls_combine:
 * the core calls it after a fit's pass and a cleaning's moments passes),
 * cls_mpi_stats_allreduce() and cls_mpi_stats_gather().
 * Calls MPI, the core's public statistics API and mpi_check.c. */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

_Static_assert(offsetof(cls_column_stats, missing) == offsetof(cls_column_stats, count) + 8 &&
                   offsetof(cls_column_stats, absmax) == offsetof(cls_column_stats, min) + 4 * 8 &&
                   offsetof(cls_column_stats, q_hi) == offsetof(cls_column_stats, min) + 7 * 8 &&
                   sizeof(cls_column_stats) == 80,
               "cls_column_stats: two uint64_t then eight doubles, no padding");

/* Two uint64_t (count, missing) then eight doubles (min, max, mean, m2,
 * absmax, median, q_lo, q_hi; the quantiles do not merge and travel as NaN): a struct type rather than bytes, so that MPI may convert between
 * nodes of different byte orders. */
static int column_type(MPI_Datatype *out)
{
    int len[2] = {2, 8};
    MPI_Aint at[2] = {(MPI_Aint)offsetof(cls_column_stats, count), (MPI_Aint)offsetof(cls_column_stats, min)};
    MPI_Datatype types[2] = {MPI_UINT64_T, MPI_DOUBLE};
    MPI_Datatype t;
    int e = MPI_Type_create_struct(2, len, at, types, &t);
    if (e != MPI_SUCCESS) return e;
    e = MPI_Type_create_resized(t, 0, (MPI_Aint)sizeof(cls_column_stats), out);
    MPI_Type_free(&t);
    if (e != MPI_SUCCESS) return e;
    e = MPI_Type_commit(out);
    if (e != MPI_SUCCESS) MPI_Type_free(out);
    return e;
}

/* inout[i] = in[i] (+) inout[i]. Chan's merge is commutative in exact
 * arithmetic but not in the last bit of mean and m2 (a.mean + delta * nb/n
 * against b.mean - delta * na/n): the two operands are put in one order by
 * their bytes, so that a (+) b and b (+) a give the same bits and two ranks
 * that combine the same partial results in opposite roles agree. mean and
 * m2 are merged always: a fit without moments has them NaN, and NaN stays. */
static void merge_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const cls_column_stats *a = in;
    cls_column_stats *b = inout;
    for (int i = 0; i < *len; i++) {
        if (memcmp(&a[i], &b[i], sizeof a[i]) < 0) {
            cls_column_stats t = a[i];
            cls_column_stats_merge(&t, &b[i], 1);
            b[i] = t;
        } else {
            cls_column_stats_merge(&b[i], &a[i], 1);
        }
    }
}

/* A single allreduce unless the table has more than INT_MAX / 2 entries
 * (the count is an int): then one per chunk. */
int mpi_allreduce_columns(MPI_Comm comm, cls_column_stats *col, size_t n)
{
    MPI_Datatype t;
    MPI_Op op;
    int e = column_type(&t);
    if (e != MPI_SUCCESS) return e;
    e = MPI_Op_create(merge_op, 1, &op);
    if (e != MPI_SUCCESS) {
        MPI_Type_free(&t);
        return e;
    }
    const size_t chunk = INT_MAX / 2;
    size_t at = 0;
    do {
        size_t k = n - at < chunk ? n - at : chunk;
        e = MPI_Allreduce(MPI_IN_PLACE, col + at, (int)k, t, op, comm);
        at += k;
    } while (e == MPI_SUCCESS && at < n);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    return e;
}

cls_status mpi_merge_stats(void *user, cls_status local, cls_column_stats *cols, size_t n)
{
    mpi_combine_state *c = user;
    double t = MPI_Wtime();
    if (!n) {
        c->work_from = c->last_out;
        c->work_to = t;
    }
    const char *why = c->why ? c->why : c->ctx ? cls_last_error(c->ctx) : NULL;
    cls_status st = cls_mpi_agree(c->comm, local, local != CLS_OK ? why : NULL);
    int size = 1;
    if (st == CLS_OK && n && MPI_Comm_size(c->comm, &size) == MPI_SUCCESS && size > 1) {
        int e = mpi_allreduce_columns(c->comm, cols, n);
        if (e != MPI_SUCCESS) st = mpi_fail_call("MPI_Allreduce (statistics)", e);
        /* every rank's collective fails or none: still, agree */
        st = cls_mpi_agree(c->comm, st, st == CLS_OK ? NULL : mpi_error());
        c->bytes += (uint64_t)n * sizeof *cols;
    }
    c->stats_passes += n != 0;
    c->last_out = MPI_Wtime();
    /* a merge of columns, or an agreement alone (no statistics move) */
    if (n) {
        c->reduce += c->last_out - t;
        c->quantiles_from = c->last_out;
    } else {
        c->agree += c->last_out - t;
    }
    return st;
}

cls_status mpi_combine(MPI_Comm comm, cls_column_stats *table, const cls_stats_info *info, cls_stats **out)
{
    size_t n = info->groups * info->cols;
    cls_mpi_report *r = mpi_report();
    double t = MPI_Wtime();
    int e = mpi_allreduce_columns(comm, table, n);
    r->reduce = MPI_Wtime() - t;
    r->reduce_bytes = (uint64_t)n * sizeof *table;
    if (e != MPI_SUCCESS) return mpi_fail_call("MPI_Allreduce (statistics)", e);
    cls_stats_info all = *info;
    /* every value is finite or missing: a column's counts are its rows */
    all.rows = n ? table[0].count + table[0].missing : 0;
    cls_status st = cls_stats_create(&all, NULL, out);
    if (st == CLS_OK) memcpy(cls_stats_columns(*out), table, n * sizeof *table);
    else mpi_set_error("out of memory for the combined statistics");
    return st;
}

static cls_status stats_allreduce(MPI_Comm comm, const cls_stats *local, cls_stats **out)
{
    if (out) *out = NULL;
    cls_stats_info info;
    memset(&info, 0, sizeof info);
    mpi_check c;
    memset(&c, 0, sizeof c);
    c.has_data = 1;
    cls_column_stats *table = NULL;
    if (!out) {
        c.status = CLS_E_ARG;
        c.why = "cls_mpi_stats_allreduce: out is NULL";
    } else if (cls_stats_describe(local, &info) != CLS_OK) {
        c.status = CLS_E_ARG;
        c.why = "cls_mpi_stats_allreduce: local is NULL";
    } else if (!(table = malloc((info.groups ? info.groups * info.cols : 1) * sizeof *table))) {
        c.status = CLS_E_NOMEM;
        c.why = "out of memory for a copy of the statistics";
    }
    const char *names[] = {"scalers", "scopes", "dtypes", "columns", "groups", "moments"};
    int64_t keys[] = {info.scaler, info.scope, info.dtype, (int64_t)info.cols, (int64_t)info.groups,
                      info.has_moments};
    c.nkeys = 6;
    for (int k = 0; k < c.nkeys; k++) {
        c.key[k] = keys[k];
        c.key_name[k] = names[k];
    }
    cls_status st = mpi_check_all(comm, &c);
    if (st == CLS_OK) {
        memcpy(table, cls_stats_columns((cls_stats *)local), info.groups * info.cols * sizeof *table);
        st = mpi_combine(comm, table, &info, out);
        st = cls_mpi_agree(comm, st, mpi_error());
        if (st != CLS_OK) {
            cls_stats_destroy(*out);
            *out = NULL;
        }
    }
    free(table);
    return st;
}

cls_status cls_mpi_stats_allreduce(MPI_Comm comm, const cls_stats *local, cls_stats **out)
{
    mpi_clear_error();
    return mpi_publish(NULL, stats_allreduce(comm, local, out));
}

static cls_status stats_gather(MPI_Comm comm, int root, const cls_stats *local, cls_stats **out)
{
    if (out) *out = NULL;
    int rank, size, e;
    if ((e = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS) return mpi_fail_call("MPI_Comm_rank", e);
    if ((e = MPI_Comm_size(comm, &size)) != MPI_SUCCESS) return mpi_fail_call("MPI_Comm_size", e);
    cls_stats_info info;
    memset(&info, 0, sizeof info);
    mpi_check c;
    memset(&c, 0, sizeof c);
    c.has_data = 1;
    if (!out || root < 0 || root >= size) {
        c.status = CLS_E_ARG;
        c.why = "cls_mpi_stats_gather: out is NULL or root is not a rank";
    } else if (cls_stats_describe(local, &info) != CLS_OK) {
        c.status = CLS_E_ARG;
        c.why = "cls_mpi_stats_gather: local is NULL";
    } else if (info.groups * info.cols > INT_MAX) {
        c.status = CLS_E_ARG;
        c.why = "cls_mpi_stats_gather: more than INT_MAX columns on one rank";
    }
    const char *names[] = {"scaler", "scope", "dtype", "columns", "moments"};
    int64_t keys[] = {info.scaler, info.scope, info.dtype, (int64_t)info.cols, info.has_moments};
    c.nkeys = 5;
    for (int k = 0; k < c.nkeys; k++) {
        c.key[k] = keys[k];
        c.key_name[k] = names[k];
    }
    cls_status st = mpi_check_all(comm, &c);
    if (st != CLS_OK) return st;

    if (info.scope == CLS_SCOPE_BATCH) {
        /* the same on every rank after cls_mpi_fit(): root copies its own */
        if (rank != root) return CLS_OK;
        st = cls_stats_create(&info, NULL, out);
        if (st == CLS_OK)
            memcpy(cls_stats_columns(*out), cls_stats_columns((cls_stats *)local),
                   info.groups * info.cols * sizeof(cls_column_stats));
        if (st != CLS_OK) mpi_set_error("cls_mpi_stats_gather: out of memory on rank %d", rank);
        return st;
    }

    int mine = (int)(info.groups * info.cols);
    int *counts = NULL, *displs = NULL;
    cls_stats *all = NULL;
    cls_status local_st = CLS_OK;
    const char *why = NULL;
    if (rank == root) {
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
        if (!counts || !displs) local_st = CLS_E_NOMEM;
    }
    e = MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, root, comm);
    if (e != MPI_SUCCESS) {
        free(counts);
        free(displs);
        return mpi_fail_call("MPI_Gather (group counts)", e);
    }
    if (rank == root && local_st == CLS_OK) {
        long long total = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += counts[r];
        }
        if (total > INT_MAX) {
            local_st = CLS_E_ARG;
            why = "cls_mpi_stats_gather: more than INT_MAX columns in all";
        } else {
            info.groups = (size_t)total / info.cols;
            local_st = cls_stats_create(&info, NULL, &all);
        }
    }
    /* root's outcome decides whether the others send */
    st = cls_mpi_agree(comm, local_st, why);
    if (st == CLS_OK) {
        MPI_Datatype t;
        e = column_type(&t);
        if (e == MPI_SUCCESS) {
            e = MPI_Gatherv(cls_stats_columns((cls_stats *)local), mine, t, cls_stats_columns(all), counts,
                            displs, t, root, comm);
            MPI_Type_free(&t);
        }
        if (e != MPI_SUCCESS) st = mpi_fail_call("MPI_Gatherv (statistics)", e);
    }
    free(counts);
    free(displs);
    if (st == CLS_OK && rank == root) *out = all;
    else cls_stats_destroy(all);
    return st;
}

cls_status cls_mpi_stats_gather(MPI_Comm comm, int root, const cls_stats *local, cls_stats **out)
{
    mpi_clear_error();
    return mpi_publish(NULL, stats_gather(comm, root, local, out));
}
