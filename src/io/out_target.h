/* Where an output named by the user really goes, before anything is written:
 * the atomic writers (temporary + rename) must never rename over a symlink,
 * a device or a pipe. Shared, like sync_dir.h, by the library's atomic files
 * (atomic_file.c: statistics, traces, the kernel cache) and the tool's .npy
 * outputs (npy_file.c, tools/cli/output.c).
 *
 *   a regular file or a new name   -> FILE: written atomically at that path
 *   a symlink (even a dangling one) -> the file it names, resolved hop by hop
 *   a character device or a FIFO    -> STREAM: opened and written through
 *                                      (/dev/null, /dev/stdout, a named pipe);
 *                                      never renamed over
 *   a folder                         -> EISDIR
 *   a socket or a block device       -> ENOTSUP: refused, never written
 *
 * /dev/stdout and /proc/self/fd/N are "magic" links whose text need not be a
 * path ("pipe:[123]"): the kind is decided on what the path leads to
 * (stat), and only a regular file is resolved further by its links' text,
 * which must then lead to the same file. */
#ifndef CLS_OUT_TARGET_H
#define CLS_OUT_TARGET_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CLS_TARGET_FILE = 0, CLS_TARGET_STREAM = 1 };

/* cls_target_resolve() : what `path` leads to (above). On success *real is a
 * malloc'd path (the file a symlink names, or `path` itself) and *kind is
 * CLS_TARGET_FILE or CLS_TARGET_STREAM.
 * @return 0, or an errno: EISDIR, ENOTSUP (socket, block device), ELOOP,
 *         ENAMETOOLONG, ENOMEM, or the errno of a failed lstat() other than
 *         ENOENT (a missing name is a new file; its folder is the writer's
 *         problem). */
static inline int cls_target_resolve(const char *path, char **real, int *kind)
{
    *real = NULL;
    *kind = CLS_TARGET_FILE;
    if (!path || !*path) return EINVAL;
    struct stat sb;
    int followed = stat(path, &sb) == 0;
    if (followed) {
        if (S_ISDIR(sb.st_mode)) return EISDIR;
        if (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode)) {
            *kind = CLS_TARGET_STREAM;
            return (*real = strdup(path)) ? 0 : ENOMEM;
        }
        if (!S_ISREG(sb.st_mode)) return ENOTSUP;
    }
    char *cur = strdup(path);
    if (!cur) return ENOMEM;
    for (int hops = 0;; hops++) {
        struct stat lb;
        if (lstat(cur, &lb) != 0) {
            if (errno == ENOENT && !followed) break; /* a new name (or a dangling link's) */
            int e = errno == ENOENT ? ELOOP : errno;
            free(cur);
            return e;
        }
        if (!S_ISLNK(lb.st_mode)) break;
        if (hops >= 40) {
            free(cur);
            return ELOOP;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0 || (size_t)n >= sizeof link - 1) {
            int e = n < 0 ? errno : ENAMETOOLONG;
            free(cur);
            return e;
        }
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        char *next = malloc(dir + (size_t)n + 1);
        if (!next) {
            free(cur);
            return ENOMEM;
        }
        memcpy(next, cur, dir);
        memcpy(next + dir, link, (size_t)n + 1);
        free(cur);
        cur = next;
    }
    if (followed) { /* the links' text must lead where stat() went */
        struct stat rb;
        if (stat(cur, &rb) != 0 || rb.st_dev != sb.st_dev || rb.st_ino != sb.st_ino) {
            free(cur);
            return ELOOP;
        }
    }
    *real = cur;
    return 0;
}

/* The words for a cls_target_resolve() errno, after the path. */
static inline const char *cls_target_why(int e)
{
    switch (e) {
    case EISDIR: return "is a folder, not a file";
    case ENOTSUP: return "is a socket or a block device; clscale writes only files, pipes and character devices";
    case ELOOP: return "is a symlink that cannot be followed to a file (a loop, or too many links)";
    default: return strerror(e);
    }
}

#endif
