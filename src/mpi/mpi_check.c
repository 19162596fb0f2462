/* All or nothing across ranks: this file owns the collective that combines
 * the ranks' statuses (and checks that they passed the same arguments), the
 * message that names the failing rank (composed here, then handed to the
 * core's one error channel, cls_last_error()), and this thread's report.
 * Calls MPI and the core's cls_status_str() and cls_set_error(); nothing
 * else. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

static _Thread_local char err_buf[1536];
static _Thread_local cls_mpi_report report;

void mpi_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_buf, sizeof err_buf, fmt, ap);
    va_end(ap);
}

void mpi_clear_error(void) { err_buf[0] = '\0'; }

const char *mpi_error(void) { return err_buf; }

cls_status mpi_publish(cls_context *ctx, cls_status st)
{
    if (st == CLS_OK || !err_buf[0]) return st;
    return cls_set_error(ctx, st, err_buf);
}

cls_mpi_report *mpi_report(void) { return &report; }

cls_status cls_mpi_last_report(cls_mpi_report *out)
{
    if (!out) return CLS_E_ARG;
    *out = report;
    return CLS_OK;
}

cls_status mpi_fail_call(const char *call, int err)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", err);
    mpi_set_error("%s: %s", call, text);
    return CLS_E_DEVICE;
}

/* The failing rank's status and message, as MPI_Bcast carries them. */
typedef struct failure {
    int  status;
    char why[1024];
} failure;

cls_status mpi_check_all(MPI_Comm comm, mpi_check *c)
{
    int rank, size, e;
    if ((e = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS) return mpi_fail_call("MPI_Comm_rank", e);
    if ((e = MPI_Comm_size(comm, &size)) != MPI_SUCCESS) return mpi_fail_call("MPI_Comm_size", e);
    /* [0] lowest failing rank, [1] lowest rank with data, [2] lowest rank
     * without, each as size - rank (0: none); then key, -key pairs */
    int64_t v[3 + 2 * MPI_KEYS_MAX];
    int n = 3 + 2 * c->nkeys;
    v[0] = c->status != CLS_OK ? size - rank : 0;
    v[1] = c->has_data ? size - rank : 0;
    v[2] = c->has_data ? 0 : size - rank;
    for (int k = 0; k < c->nkeys; k++) {
        int votes = c->has_data || !c->key_only_with_data[k];
        v[3 + 2 * k] = votes ? c->key[k] : INT64_MIN;
        v[4 + 2 * k] = votes ? -c->key[k] : INT64_MIN;
    }
    e = MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MAX, comm);
    if (e != MPI_SUCCESS) return mpi_fail_call("MPI_Allreduce (statuses)", e);
    c->first_with_data = v[1] ? (int)(size - v[1]) : -1;
    c->first_without_data = v[2] ? (int)(size - v[2]) : -1;
    if (v[0]) {
        int bad = (int)(size - v[0]);
        failure f;
        memset(&f, 0, sizeof f);
        if (rank == bad) {
            f.status = (int)c->status;
            snprintf(f.why, sizeof f.why, "%s", c->why ? c->why : "");
        }
        e = MPI_Bcast(&f, (int)sizeof f, MPI_BYTE, bad, comm);
        if (e != MPI_SUCCESS) return mpi_fail_call("MPI_Bcast (the failing rank's message)", e);
        f.why[sizeof f.why - 1] = '\0';
        cls_status st = (cls_status)f.status;
        mpi_set_error("rank %d of %d: %s%s%s", bad, size, cls_status_str(st), f.why[0] ? ": " : "", f.why);
        return st;
    }
    for (int k = 0; k < c->nkeys; k++) {
        int64_t hi = v[3 + 2 * k], lo = -v[4 + 2 * k];
        if (hi == INT64_MIN) continue;  /* no rank voted */
        if (hi != lo) {
            mpi_set_error("the ranks pass different %s (from %lld to %lld)", c->key_name[k], (long long)lo,
                          (long long)hi);
            return CLS_E_ARG;
        }
    }
    return CLS_OK;
}

cls_status cls_mpi_agree(MPI_Comm comm, cls_status local, const char *why)
{
    char mine[sizeof err_buf];
    snprintf(mine, sizeof mine, "%s", why ? why : "");  /* why may be mpi_error() */
    mpi_clear_error();
    mpi_check c;
    memset(&c, 0, sizeof c);
    c.status = local;
    c.why = mine;
    return mpi_publish(NULL, mpi_check_all(comm, &c));
}
