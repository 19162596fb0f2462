/* .npy files, see npy.h: the files. Maps an input read-only after checking
 * it (npy_format.c), and writes an output through a temporary file beside
 * the destination, mapped, renamed onto it only on commit. Calls only libc,
 * POSIX and npy_format.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fallocate(); meson defines it, the fuzz build does not */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy_format.h"
#include "out_target.h"
#include "sync_dir.h"


static void npy_reset(cls_npy *f)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

static void fill_shape(cls_npy *f, cls_dtype dt, size_t ndim, const size_t *shape)
{
    f->dtype = dt;
    f->ndim = ndim;
    for (size_t i = 0; i < 3; i++) f->shape[i] = i < ndim ? shape[i] : 0;
    f->batch = ndim == 3 ? shape[0] : 1;
    f->rows = ndim == 3 ? shape[1] : ndim == 2 ? shape[0] : 1;
    f->cols = shape[ndim - 1];
}

cls_status cls_npy_open(const char *path, cls_npy *out, char *err, size_t errlen)
{
    if (!out) return cls_npy_fail(err, errlen, CLS_E_ARG, "cls_npy_open: no output");
    npy_reset(out);
    if (!path) return cls_npy_fail(err, errlen, CLS_E_ARG, "cls_npy_open: no path");

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    cls_status st = CLS_OK;
    if (S_ISDIR(sb.st_mode)) st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: is a folder, not a .npy file", path);
    else if (!S_ISREG(sb.st_mode))
        st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: not a regular file (clscale maps its input; a pipe or "
                  "device cannot be mapped)", path);
    else if (sb.st_size == 0)
        st = cls_npy_fail(err, errlen, CLS_E_FORMAT, "%s: empty file (0 bytes), not a .npy file", path);
    else if ((uint64_t)sb.st_size > (uint64_t)PTRDIFF_MAX)
        st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: too large to map (%lld bytes)", path, (long long)sb.st_size);
    if (st != CLS_OK) {
        close(fd);
        return st;
    }
    size_t size = (size_t)sb.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        int e = errno;
        close(fd);
        return cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
    }
    /* The mapping keeps the file; the descriptor is no longer needed. */
    if (close(fd) != 0) {
        int e = errno;
        munmap(map, size);
        return cls_npy_fail(err, errlen, CLS_E_IO, "%s: close: %s", path, strerror(e));
    }

    char why[WHY_LEN];
    cls_dtype dt;
    size_t ndim, shape[3], offset, bytes;
    st = cls_npy_parse_header(map, size, &dt, &ndim, shape, &offset, why, sizeof why);
    if (st == CLS_OK) st = cls_npy_check_data(dt, ndim, shape, offset, size, &bytes, why, sizeof why);
    if (st == CLS_OK && !(out->path = strdup(path))) {
        st = CLS_E_NOMEM;
        snprintf(why, sizeof why, "out of memory");
    }
    if (st != CLS_OK) {
        munmap(map, size);
        return cls_npy_fail(err, errlen, st, "%s: %s", path, why);
    }
    fill_shape(out, dt, ndim, shape);
    out->data = (unsigned char *)map + offset;
    out->data_bytes = bytes;
    out->map = map;
    out->map_len = size;
    return CLS_OK;
}

char *cls_npy_temp_name(const char *path, unsigned n)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    size_t base_len = strlen(path + dir_len);
    if (base_len > CLS_NPY_TEMP_BASE_MAX) base_len = CLS_NPY_TEMP_BASE_MAX;
    size_t cap = dir_len + 1 + base_len + 48;
    char *t = malloc(cap);
    if (!t) return NULL;
    snprintf(t, cap, "%.*s.%.*s.tmp.%ld.%u", (int)dir_len, path, (int)base_len, path + dir_len,
             (long)getpid(), n);
    return t;
}

/* The header and size of a new array, checked; 0 bytes total on error. */
static cls_status plan_file(const char *path, cls_dtype dtype, size_t ndim, const size_t *shape,
                            unsigned char hdr[512], size_t *hlen, size_t *total, char *err, size_t errlen)
{
    if (dtype != CLS_F32 && dtype != CLS_F64 && dtype != CLS_NPY_BOOL)
        return cls_npy_fail(err, errlen, CLS_E_ARG, "%s: dtype must be float32, float64 or bool", path);
    if (ndim < 1 || ndim > 3 || !shape)
        return cls_npy_fail(err, errlen, CLS_E_ARG, "%s: %zu dimensions; clscale takes 1 to 3", path, ndim);
    char sh[128];
    cls_npy_shape_text(sh, sizeof sh, ndim, shape);
    for (size_t i = 0; i < ndim; i++)
        if (shape[i] == 0) return cls_npy_fail(err, errlen, CLS_E_ARG, "%s: empty array: shape %s", path, sh);
    *hlen = cls_npy_write_header(hdr, 512, dtype, ndim, shape);
    size_t bytes = cls_npy_data_size(dtype, ndim, shape, *hlen);
    uint64_t off_max = sizeof(off_t) >= 8 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX;
    if (*hlen == 0 || bytes == 0 || (uint64_t)(*hlen + bytes) > off_max)
        return cls_npy_fail(err, errlen, CLS_E_ARG, "%s: shape %s of %s is too large", path, sh, cls_npy_dtype_name(dtype));
    *total = *hlen + bytes;
    return CLS_OK;
}

cls_status cls_npy_create_fd(int fd, const char *path, const char *tmp, cls_dtype dtype, size_t ndim,
                             const size_t *shape, cls_npy *out, char *err, size_t errlen)
{
    unsigned char hdr[512];
    size_t hlen = 0, total = 0;
    void *map = MAP_FAILED;
    int e;
    cls_status st;
    if (!out) {
        st = cls_npy_fail(err, errlen, CLS_E_ARG, "cls_npy_create_fd: no output");
        goto fail;
    }
    npy_reset(out);
    if (!path || fd < 0) {
        st = cls_npy_fail(err, errlen, CLS_E_ARG, "cls_npy_create_fd: no path or descriptor");
        goto fail;
    }
    if ((st = plan_file(path, dtype, ndim, shape, hdr, &hlen, &total, err, errlen)) != CLS_OK) goto fail;
    const char *name = tmp ? tmp : path;
    if (ftruncate(fd, (off_t)total) != 0) {
        e = errno;
        st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot size %s to %zu bytes: %s", path, name, total, strerror(e));
        goto fail;
    }
    /* Reserve the blocks now: a full disk is an error here, not a SIGBUS
     * when the library writes into the mapping. A file system that cannot
     * reserve keeps the sparse file. */
    if (fallocate(fd, 0, 0, (off_t)total) != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
        e = errno;
        st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot reserve %zu bytes: %s", path, total, strerror(e));
        goto fail;
    }
    map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        e = errno;
        st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot map %zu bytes of %s: %s", path, total, name, strerror(e));
        goto fail;
    }
    if (!(out->path = strdup(path)) || (tmp && !(out->tmp_path = strdup(tmp)))) {
        st = cls_npy_fail(err, errlen, CLS_E_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    memcpy(map, hdr, hlen);
    fill_shape(out, dtype, ndim, shape);
    out->data = (unsigned char *)map + hlen;
    out->data_bytes = total - hlen;
    out->map = map;
    out->map_len = total;
    out->fd = fd;
    out->writable = 1;
    return CLS_OK;

fail:
    /* Undoing after a failure: the status already says what went wrong. */
    if (map != MAP_FAILED) munmap(map, total);
    if (fd >= 0) close(fd);
    if (tmp) unlink(tmp);
    if (out) {
        free(out->path);
        free(out->tmp_path);
        npy_reset(out);
    }
    return st;
}

cls_status cls_npy_create(const char *path, cls_dtype dtype, size_t ndim, const size_t *shape,
                          cls_npy *out, char *err, size_t errlen)
{
    static atomic_uint counter;
    if (!out) return cls_npy_fail(err, errlen, CLS_E_ARG, "cls_npy_create: no output");
    npy_reset(out);
    if (!path || !*path) return cls_npy_fail(err, errlen, CLS_E_ARG, "cls_npy_create: no path");
    size_t plen = strlen(path);
    if (path[plen - 1] == '/') return cls_npy_fail(err, errlen, CLS_E_ARG, "%s: a folder, not a file name", path);
    unsigned char hdr[512];
    size_t hlen, total;
    cls_status st = plan_file(path, dtype, ndim, shape, hdr, &hlen, &total, err, errlen);
    if (st != CLS_OK) return st;
    /* a symlink is written through to its file; a device or pipe cannot be
     * mapped (the tool streams into those itself) */
    char *real;
    int kind, e = cls_target_resolve(path, &real, &kind);
    if (e) return cls_npy_fail(err, errlen, e == ENOMEM ? CLS_E_NOMEM : CLS_E_IO, "%s: %s", path, cls_target_why(e));
    if (kind == CLS_TARGET_STREAM) {
        free(real);
        return cls_npy_fail(err, errlen, CLS_E_ARG, "%s: a device or pipe, not a file that can be mapped", path);
    }

    char *tmp = NULL;
    int fd = -1;
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        free(tmp);
        if (!(tmp = cls_npy_temp_name(real, atomic_fetch_add(&counter, 1)))) {
            free(real);
            return cls_npy_fail(err, errlen, CLS_E_NOMEM, "%s: out of memory", path);
        }
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        free(tmp);
        free(real);
        return st;
    }
    st = cls_npy_create_fd(fd, real, tmp, dtype, ndim, shape, out, err, errlen);
    free(tmp);
    free(real);
    return st;
}

cls_status cls_npy_sync(cls_npy *f, char *err, size_t errlen)
{
    if (!f || !f->writable || !f->map) return CLS_OK;
    const char *name = f->path ? f->path : "(npy)";
    if (msync(f->map, f->map_len, MS_SYNC) != 0)
        return cls_npy_fail(err, errlen, CLS_E_IO, "%s: writing the data failed (msync): %s", name, strerror(errno));
    if (fsync(f->fd) != 0)
        return cls_npy_fail(err, errlen, CLS_E_IO, "%s: writing the data failed (fsync): %s", name, strerror(errno));
    return CLS_OK;
}

cls_status cls_npy_close(cls_npy *f, int commit, char *err, size_t errlen)
{
    if (!f) return CLS_OK;
    cls_status st = CLS_OK;
    const char *name = f->path ? f->path : "(npy)";
    if (!f->writable) {
        if (f->map && munmap(f->map, f->map_len) != 0)
            st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: munmap: %s", name, strerror(errno));
    } else {
        if (!f->tmp_path) commit = 0; /* a scratch mapping (cls_npy_create_fd with no tmp): just released */
        if (commit && msync(f->map, f->map_len, MS_SYNC) != 0)
            st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: writing the data failed (msync): %s", name, strerror(errno));
        if (munmap(f->map, f->map_len) != 0 && st == CLS_OK)
            st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: munmap: %s", name, strerror(errno));
        if (commit && st == CLS_OK && fsync(f->fd) != 0)
            st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: writing the data failed (fsync): %s", name, strerror(errno));
        if (close(f->fd) != 0 && st == CLS_OK)
            st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: close: %s", name, strerror(errno));
        int renamed = 0;
        if (commit && st == CLS_OK) {
            if (rename(f->tmp_path, f->path) != 0)
                st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot rename %s onto it: %s", name, f->tmp_path,
                          strerror(errno));
            else renamed = 1;
        }
        int e = renamed ? cls_sync_dir_of(f->path) : 0;
        if (e != 0)
            st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: written, but syncing its directory failed: %s", name, strerror(e));
        if (!renamed && f->tmp_path && unlink(f->tmp_path) != 0 && st == CLS_OK)
            st = cls_npy_fail(err, errlen, CLS_E_IO, "%s: cannot remove %s: %s", name, f->tmp_path, strerror(errno));
    }
    free(f->path);
    free(f->tmp_path);
    npy_reset(f);
    return st;
}
