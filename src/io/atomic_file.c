/* Writing a file so that it is either absent, its old self, or complete:
 * the bytes go to a temporary file next to `path` (same file system), are
 * synced, and the temporary is renamed onto `path`, whose directory is
 * then synced; on a failure before the rename the temporary is removed.
 * Used for the kernel cache, statistics files and traces.
 *
 * `path` is first resolved (out_target.h): a symlink is written through to
 * the file it names (the link stays a link), and a character device or FIFO
 * (/dev/null, /dev/stdout, a pipe) is written into directly, never renamed
 * over: as root, the rename would have replaced /dev/null itself. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "out_target.h"
#include "sync_dir.h"

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A device or pipe: the bytes go straight in (nothing to rename, nothing
 * that fsync could make durable). */
static int write_stream(const char *path, const void *const *parts, const size_t *lens, size_t nparts)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno;
    int err = 0;
    for (size_t i = 0; i < nparts && !err; i++)
        if (write_all(fd, parts[i], lens[i]) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    return err;
}

static int write_file(const char *path, const void *const *parts, const size_t *lens, size_t nparts);

int cls_write_atomic(const char *path, const void *const *parts, const size_t *lens, size_t nparts)
{
    char *real;
    int kind, err = cls_target_resolve(path, &real, &kind);
    if (err) return err;
    err = kind == CLS_TARGET_STREAM ? write_stream(real, parts, lens, nparts) : write_file(real, parts, lens, nparts);
    free(real);
    return err;
}

static int write_file(const char *path, const void *const *parts, const size_t *lens, size_t nparts)
{
    static atomic_uint seq;
    size_t tlen = strlen(path) + 48;
    char *tmp = malloc(tlen);
    if (!tmp) return ENOMEM;
    int fd = -1, err = 0;
    for (int tries = 0; fd < 0 && tries < 16; tries++) {
        snprintf(tmp, tlen, "%s.%ld.%u.tmp", path, (long)getpid(), atomic_fetch_add(&seq, 1));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        err = errno;
        free(tmp);
        return err;
    }
    for (size_t i = 0; i < nparts && !err; i++)
        if (write_all(fd, parts[i], lens[i]) != 0) err = errno;
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) unlink(tmp);
    else err = cls_sync_dir_of(path);
    free(tmp);
    return err;
}
