/* The output file of `clscale ... --mpi`: one temporary beside OUT that rank
 * 0 creates (numpy header written, file sized once, cls_npy_create) and
 * that every rank fills in its own disjoint byte range through a descriptor
 * (the library's streaming calls write with pwrite); rank 0 renames it onto OUT only after every rank said its range
 * is on disk (mpi_run.c combines the statuses), or removes it.
 * Calls MPI, the .npy writer (src/io/npy.c) and POSIX. */
#define CLS_CLI_MPI_INTERNAL
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/out_target.h"
#include "mpi_cmd.h"

static cls_status fail(char *err, size_t errlen, cls_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static cls_status fail(char *err, size_t errlen, cls_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

/* What rank 0 tells the others: the temporary's name (before it exists),
 * then whether it was created and where its array starts. */
typedef struct named_msg {
    int  ok;
    char tmp[4096];
} named_msg;

typedef struct created {
    int      ok;
    uint64_t data_offset;  /* where the array starts in the file */
} created;

/* Rank 0: where OUT really goes (a symlink's file) and a temporary's name
 * beside it. */
static cls_status name_temporary(const char *path, char **real, named_msg *m, char *err, size_t errlen)
{
    static unsigned seq;
    int kind = 0, e = cls_target_resolve(path, real, &kind);
    if (e != 0) return fail(err, errlen, e == ENOMEM ? CLS_E_NOMEM : CLS_E_IO, "%s: %s", path, cls_target_why(e));
    if (kind != CLS_TARGET_FILE)
        return fail(err, errlen, CLS_E_ARG, "%s: a device or pipe cannot receive --mpi output (run without --mpi "
                    "to stream into it)", path);
    char *t = cls_npy_temp_name(*real, seq++);
    if (!t) return fail(err, errlen, CLS_E_NOMEM, "%s: out of memory", path);
    if (strlen(t) >= sizeof m->tmp) {
        free(t);
        return fail(err, errlen, CLS_E_ARG, "%s: the path is too long", path);
    }
    snprintf(m->tmp, sizeof m->tmp, "%s", t);
    free(t);
    m->ok = 1;
    return CLS_OK;
}

cls_status mpi_out_open(MPI_Comm comm, const char *path, cls_dtype dtype, size_t ndim, const size_t *shape,
                        size_t len, void (*named)(void *user, const char *tmp), void *user, mpi_out *o, char *err,
                        size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    int rank;
    MPI_Comm_rank(comm, &rank);
    named_msg m;
    memset(&m, 0, sizeof m);
    char *real = NULL;
    cls_status st = rank == 0 ? name_temporary(path, &real, &m, err, errlen) : CLS_OK;
    int e = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, comm);
    if (e != MPI_SUCCESS) {
        free(real);
        return fail(err, errlen, CLS_E_IO, "%s: MPI_Bcast of the temporary's name failed", path);
    }
    /* every rank knows the name before the file exists */
    if (m.ok) named(user, m.tmp);
    e = MPI_Barrier(comm);
    created c;
    memset(&c, 0, sizeof c);
    if (rank == 0 && st == CLS_OK && e != MPI_SUCCESS)
        st = fail(err, errlen, CLS_E_IO, "%s: MPI_Barrier before creating the temporary failed", path);
    if (rank == 0 && st == CLS_OK) {
        int fd = open(m.tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) st = fail(err, errlen, CLS_E_IO, "%s: cannot create %s: %s", path, m.tmp, strerror(errno));
        else st = cls_npy_create_fd(fd, real, m.tmp, dtype, ndim, shape, &o->npy, err, errlen);
        if (st == CLS_OK) {
            c.ok = 1;
            /* the mapping starts at the file's first byte (npy.h) */
            c.data_offset = (uint64_t)((char *)o->npy.data - (char *)o->npy.map);
        }
    }
    free(real);
    e = MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, comm);
    if (e != MPI_SUCCESS) return fail(err, errlen, CLS_E_IO, "%s: MPI_Bcast of the temporary's state failed", path);
    if (c.ok) snprintf(o->tmp, sizeof o->tmp, "%s", m.tmp);
    o->data_offset = c.data_offset;
    if (rank == 0 || !c.ok || len == 0) return st;  /* rank 0's failure is rank 0's to report */

    o->fd = open(o->tmp, O_RDWR | O_CLOEXEC);
    if (o->fd < 0)
        return fail(err, errlen, CLS_E_IO, "%s: cannot open the temporary %s that rank 0 created: %s "
                    "(is the folder on a file system every rank shares?)", path, o->tmp, strerror(errno));
    return CLS_OK;
}

int mpi_out_fd(const mpi_out *o)
{
    return o->npy.map ? o->npy.fd : o->fd;
}

cls_status mpi_out_flush(mpi_out *o, const char *path, char *err, size_t errlen)
{
    cls_status st = CLS_OK;
    if (o->fd >= 0) {
        if (fsync(o->fd) != 0)
            st = fail(err, errlen, CLS_E_IO, "%s: fsync of %s: %s", path, o->tmp, strerror(errno));
        if (close(o->fd) != 0 && st == CLS_OK)
            st = fail(err, errlen, CLS_E_IO, "%s: close of %s: %s", path, o->tmp, strerror(errno));
        o->fd = -1;
    }
    return st;
}

cls_status mpi_out_commit(mpi_out *o, char *err, size_t errlen)
{
    return cls_npy_close(&o->npy, 1, err, errlen);
}

void mpi_out_discard(mpi_out *o)
{
    if (o->fd >= 0) close(o->fd);
    o->fd = -1;
    cls_npy_close(&o->npy, 0, NULL, 0);  /* rank 0: removes the temporary */
}
