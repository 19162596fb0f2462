/* Makes a rename durable: after renaming a file into place, the directory
 * holding it is synced too, or a crash may leave the old name (POSIX syncs
 * a file's data with fsync(), not the directory entry that names it).
 * Shared by the library's atomic files and the tool's .npy outputs. */
#ifndef CLS_SYNC_DIR_H
#define CLS_SYNC_DIR_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 0, or the errno of a failed open or fsync of the directory of `path`.
 * File systems that cannot sync a directory (EINVAL, ENOTSUP) count as
 * success: there is nothing more to do there. */
static inline int cls_sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return ENOMEM;
    int err = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) err = errno;
    else {
        if (fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP) err = errno;
        close(fd);
    }
    free(dir);
    return err;
}

#endif
