/* Writing a file so that it is either absent, its old self, or complete:
 * the bytes go to a temporary file next to `path` (same file system), are
 * synced, and the temporary is renamed onto `path`, whose directory is
 * then synced; on a failure before the rename the temporary is removed.
 * Used for the kernel cache, statistics files and traces. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
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

int cls_write_atomic(const char *path, const void *const *parts, const size_t *lens, size_t nparts)
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
