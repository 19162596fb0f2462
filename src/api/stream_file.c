/* cls_npy_run(): .npy files through the streaming calls: a fit, or one to another
 * (stream.c). Owns the files: reading and checking the input's header,
 * the output's temporary beside the destination, created once a
 * fit-transform passed its door (stream.c's cls_file_check_fit_transform:
 * a bad argument leaves nothing behind, not even a temporary) with its
 * header and size reserved (a full disk fails before any work), and the
 * commit: fsync, rename,
 * directory sync; on any failure the temporary is removed and the
 * destination left as it was. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "api/entries.h"
#include "plan/route.h"
#include "io/npy_format.h"
#include "io/sync_dir.h"

#define HEADER_READ 65536  /* numpy writes headers of 128 bytes; format 2.0 allows more */

/* Reads and checks the header of the .npy file open on fd. */
static cls_status read_header(cls_context *ctx, int fd, const char *path, cls_file_array *a, size_t *ndim,
                              size_t shape[3])
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) return cls_fail(ctx, CLS_E_IO, "%s: cannot stat: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) return cls_fail(ctx, CLS_E_IO, "%s: not a regular file", path);
    if (sb.st_size == 0) return cls_fail(ctx, CLS_E_FORMAT, "%s: empty file (0 bytes), not a .npy file", path);
    size_t len = (uint64_t)sb.st_size < HEADER_READ ? (size_t)sb.st_size : HEADER_READ;
    unsigned char *buf = malloc(len);
    if (!buf) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = n < 0 ? errno : 0;
            free(buf);
            return cls_fail(ctx, CLS_E_IO, "%s: read error at byte %zu: %s", path, got,
                            e ? strerror(e) : "end of file");
        }
        got += (size_t)n;
    }
    char why[WHY_LEN];
    size_t offset, bytes;
    cls_status st = cls_npy_parse_header(buf, len, &a->dtype, ndim, shape, &offset, why, sizeof why);
    free(buf);
    if (st == CLS_OK) st = cls_npy_check_data(a->dtype, *ndim, shape, offset, (uint64_t)sb.st_size, &bytes, why, sizeof why);
    if (st != CLS_OK) return cls_fail(ctx, st, "%s: %s", path, why);
    a->offset = offset;
    a->batch = *ndim == 3 ? shape[0] : 1;
    a->rows = *ndim == 3 ? shape[1] : *ndim == 2 ? shape[0] : 1;
    a->cols = shape[*ndim - 1];
    return CLS_OK;
}

/* Creates ".name.tmp.PID.N" beside `path`; the fd, or -1 with errno. */
static int create_temp(const char *path, char **tmp_out)
{
    static atomic_uint counter;
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0, base_len = strlen(path + dir_len);
    if (base_len > 200) base_len = 200;
    size_t cap = dir_len + base_len + 64;
    char *t = malloc(cap);
    if (!t) {
        errno = ENOMEM;
        return -1;
    }
    int fd = -1;
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        snprintf(t, cap, "%.*s.%.*s.tmp.%ld.%u", (int)dir_len, path, (int)base_len, path + dir_len, (long)getpid(),
                 atomic_fetch_add(&counter, 1));
        fd = open(t, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int e = errno;
        free(t);
        errno = e;
        return -1;
    }
    *tmp_out = t;
    return fd;
}

/* Header, size and reserved blocks of the output temporary. */
static cls_status prepare_out(cls_context *ctx, int fd, const char *path, cls_file_array *o, size_t ndim,
                              const size_t *shape)
{
    unsigned char hdr[512];
    size_t hlen = cls_npy_write_header(hdr, sizeof hdr, o->dtype, ndim, shape);
    if (hlen == 0) return cls_fail(ctx, CLS_E_ARG, "%s: shape too large for a .npy header", path);
    uint64_t total = hlen + (uint64_t)o->batch * o->rows * o->cols * (o->dtype == CLS_F64 ? 8 : 4);
    for (size_t at = 0; at < hlen;) {
        ssize_t n = pwrite(fd, hdr + at, hlen - at, (off_t)at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return cls_fail(ctx, CLS_E_IO, "%s: write error at byte %zu: %s", path, at, strerror(errno));
        at += (size_t)n;
    }
    if (ftruncate(fd, (off_t)total) != 0)
        return cls_fail(ctx, CLS_E_IO, "%s: cannot size to %llu bytes: %s", path, (unsigned long long)total,
                        strerror(errno));
    /* a full disk fails here, before any work */
    if (fallocate(fd, 0, 0, (off_t)total) != 0 && errno != EOPNOTSUPP && errno != ENOSYS)
        return cls_fail(ctx, CLS_E_IO, "%s: cannot reserve %llu bytes at byte 0: %s", path,
                        (unsigned long long)total, strerror(errno));
    o->offset = hlen;
    return CLS_OK;
}

cls_status cls_npy_open_input(cls_context *ctx, const char *path, cls_file_array *a)
{
    if (!path || !*path) return cls_fail(ctx, CLS_E_ARG, ".npy file: a path is empty");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cls_fail(ctx, CLS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    memset(a, 0, sizeof *a);
    a->fd = fd;
    a->name = path;
    size_t ndim, shape[3];
    cls_status st = read_header(ctx, fd, path, a, &ndim, shape);
    if (st != CLS_OK) {
        close(fd);
        a->fd = -1;
    }
    return st;
}

cls_status cls_npy_run(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_stats *s,
                       const char *in_path, const char *out_path, const cls_stream_opts *opts, cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    if (!in_path || !*in_path || (out_path && !*out_path))
        return cls_fail(ctx, CLS_E_ARG, ".npy file: a path is empty");
    if (out_path && out_path[strlen(out_path) - 1] == '/')
        return cls_fail(ctx, CLS_E_ARG, "%s: a folder, not a file name", out_path);
    int in = open(in_path, O_RDONLY | O_CLOEXEC);
    if (in < 0) return cls_fail(ctx, CLS_E_IO, "%s: cannot open: %s", in_path, strerror(errno));
    cls_file_array a = {.fd = in, .name = in_path}, o;
    size_t ndim, shape[3];
    cls_status st = read_header(ctx, in, in_path, &a, &ndim, shape);
    if (!out_path) {
        /* a fit alone */
        if (st == CLS_OK) st = cls_file_fit(ctx, p, r, &a, opts, fitted);
        close(in);
        return st;
    }
    struct stat si, so;
    if (st == CLS_OK && fstat(in, &si) == 0 && stat(out_path, &so) == 0 && si.st_dev == so.st_dev &&
        si.st_ino == so.st_ino)
        st = cls_fail(ctx, CLS_E_ARG, "%s and %s are the same file", in_path, out_path);
    if (st != CLS_OK) {
        close(in);
        return st;
    }
    o = a;
    o.fd = -1; /* created below, once the call is checked */
    o.name = out_path;
    size_t oshape[3] = {shape[0], shape[1], shape[2]};
    if (!s && r->bins_reduce && p->clean->bin_rows) {
        /* one row per bin of each statistics group, as many dimensions as the input */
        uint64_t Rg = p->scope == CLS_SCOPE_BATCH ? (uint64_t)a.batch * a.rows : a.rows;
        o.batch = p->scope == CLS_SCOPE_BATCH ? 1 : a.batch;
        o.rows = (size_t)((Rg + p->clean->bin_rows - 1) / p->clean->bin_rows);
        if (ndim == 3) {
            oshape[0] = o.batch;
            oshape[1] = o.rows;
        } else if (ndim == 2) {
            oshape[0] = o.rows;
        } /* a 1-D file is one row: one bin, its shape */
    }
    /* a fit-transform checked at its door, and its plan made, before the
     * output's temporary is created or written */
    cls_stages stages;
    if (!s) st = cls_file_check_fit_transform(ctx, p, r, &a, &o, opts, fitted != NULL, 0, &stages);
    if (st != CLS_OK) {
        close(in);
        return st;
    }
    char *tmp = NULL;
    int out = create_temp(out_path, &tmp);
    if (out < 0) {
        close(in);
        return cls_fail(ctx, CLS_E_IO, "%s: cannot create a temporary file beside it: %s", out_path, strerror(errno));
    }
    o.fd = out;
    st = prepare_out(ctx, out, out_path, &o, ndim, oshape);
    if (st == CLS_OK) {
        if (s) st = cls_file_transform(ctx, p, s, &a, &o, opts);
        else st = cls_file_run_fit_transform(ctx, p, &stages, &a, &o, opts, fitted);
    }
    if (st == CLS_OK && fsync(out) != 0)
        st = cls_fail(ctx, CLS_E_IO, "%s: writing the data failed (fsync): %s", out_path, strerror(errno));
    if (close(out) != 0 && st == CLS_OK)
        st = cls_fail(ctx, CLS_E_IO, "%s: writing the data failed (close): %s", out_path, strerror(errno));
    close(in);
    if (st == CLS_OK && rename(tmp, out_path) != 0)
        st = cls_fail(ctx, CLS_E_IO, "%s: cannot rename %s onto it: %s", out_path, tmp, strerror(errno));
    else if (st == CLS_OK) {
        int e = cls_sync_dir_of(out_path);
        if (e) st = cls_fail(ctx, CLS_E_IO, "%s: written, but syncing its folder failed: %s", out_path, strerror(e));
        free(tmp);
        tmp = NULL;
    }
    if (tmp) {
        unlink(tmp);
        free(tmp);
    }
    if (st != CLS_OK && fitted) {
        cls_stats_destroy(*fitted);
        *fitted = NULL;
    }
    return st;
}
