/* The tool's outputs, see output.h. Calls the guard (guard.c), the .npy
 * files (src/io/npy_file.c), the target resolver (src/io/out_target.h) and
 * the library's statistics writer. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "guard.h"
#include "io/out_target.h"
#include "io/sync_dir.h"
#include "output.h"

/* "OUT" or "--stats-out", and the name, for the start of a message. */
static void label(const cli_output *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", o->opt ? o->opt : "", o->opt ? " " : "");
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s", o->arg);
}

static int usage(const cli_output *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage(const cli_output *o, const char *fmt, ...)
{
    char msg[1024], who[PATH_MAX + 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    label(o, who, sizeof who);
    cli_error(EXIT_USAGE, "%s: %s: %s", o->cmd, who, msg);
    fprintf(stderr, "Try 'clscale %s --help'.\n", o->cmd);
    return EXIT_USAGE;
}

/* The folder of `path` ("." when it has none), malloc'd. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
}

/* `path` with its folder made absolute (its last part may not exist yet),
 * so that two spellings of one new name compare equal; malloc'd or NULL. */
static char *canonical(const char *path)
{
    char *dir = folder_of(path), *abs = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!abs) return NULL;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    size_t n = strlen(abs) + strlen(base) + 2;
    char *c = malloc(n);
    if (c) snprintf(c, n, "%s/%s", abs, base);
    free(abs);
    return c;
}

/* Whether `a` (resolved to `real`) and `b` are one file: the same inode, or
 * the same name once resolved. */
static int same_file(const char *a, const char *real, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *rb = NULL;
    int kind, same = 0;
    if (cls_target_resolve(b, &rb, &kind) == 0) {
        char *ca = canonical(real), *cb = canonical(rb);
        same = ca && cb && !strcmp(ca, cb);
        free(ca);
        free(cb);
    }
    free(rb);
    return same;
}

/* Removes `.NAME.tmp.PID.N...` files beside `path` whose process is gone:
 * what SIGKILL, a crash or a power cut left of an earlier run. A PID that
 * exists (possibly reused by another program, or another user's run) keeps
 * its file: such a file is only ever ignored. */
static void remove_stale(const char *path)
{
    char *dir = folder_of(path);
    if (!dir) return;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char prefix[CLS_NPY_TEMP_BASE_MAX + 8];
    size_t blen = strlen(base);
    if (blen > CLS_NPY_TEMP_BASE_MAX) blen = CLS_NPY_TEMP_BASE_MAX;
    snprintf(prefix, sizeof prefix, ".%.*s.tmp.", (int)blen, base);
    size_t plen = strlen(prefix);
    DIR *d = opendir(dir);
    free(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, plen)) continue;
        char *end;
        errno = 0;
        long pid = strtol(e->d_name + plen, &end, 10);
        if (errno || end == e->d_name + plen || *end != '.' || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* Opens a stream target; its (dev, ino) may be our own stdout, which may
 * be a socket that cannot be opened by name. */
static int open_stream(const char *real)
{
    struct stat st, out;
    if (stat(real, &st) == 0 && fstat(STDOUT_FILENO, &out) == 0 && st.st_dev == out.st_dev &&
        st.st_ino == out.st_ino)
        return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    return open(real, O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

/* cli_output_prepare() and cli_output_check(): `open_stream_now` opens a
 * stream target (the check alone must not: opening a FIFO and closing it
 * again would hand its reader an end of file). */
static int prepare(cli_output *o, const char *cmd, const char *opt, const char *arg, const char *const *inputs,
                   size_t ninputs, const cli_output *other, int open_stream_now)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->opt = opt;
    o->arg = arg;
    o->sink = -1;
    o->slot = -1;
    size_t alen = strlen(arg);
    if (alen == 0) return usage(o, "an empty name");
    if (arg[alen - 1] == '/') return usage(o, "is a folder, not a file name");
    int kind, e = cls_target_resolve(arg, &o->path, &kind);
    /* a name that cannot be written (a folder, a socket, a loop, a path
     * through a file or an unreadable folder) is the command line's fault */
    if (e == ENOMEM) return cli_error(EXIT_FAIL, "%s: out of memory", cmd);
    if (e) return usage(o, "%s", cls_target_why(e));
    o->stream = kind == CLS_TARGET_STREAM;
    for (size_t i = 0; i < ninputs; i++)
        if (inputs[i] && same_file(arg, o->path, inputs[i]))
            return usage(o, "is the same file as the input %s; clscale never writes over its inputs", inputs[i]);
    if (other && other->arg && !other->stream && !o->stream && same_file(arg, o->path, other->arg))
        return usage(o, "is the same file as %s%s%s", other->opt ? other->opt : "OUT ", other->opt ? " " : "",
                     other->arg);
    if (o->stream && !open_stream_now) return 0;
    if (o->stream) {
        o->sink = open_stream(o->path);
        if (o->sink < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
            return usage(o, "cannot open it for writing: %s", strerror(errno));
        if (o->sink < 0) return cli_error(EXIT_FAIL, "%s: %s: cannot open for writing: %s", cmd, arg, strerror(errno));
        if (isatty(o->sink)) return usage(o, "is a terminal; redirect the .npy data to a file or a pipe");
        return 0;
    }
    char *dir = folder_of(o->path);
    if (!dir) return cli_error(EXIT_FAIL, "%s: out of memory", cmd);
    struct stat ds;
    int bad = stat(dir, &ds) != 0 ? errno : !S_ISDIR(ds.st_mode) ? ENOTDIR : access(dir, W_OK | X_OK) != 0 ? errno : 0;
    if (bad) { /* missing, not a folder, not writable (permissions, a read-only mount) */
        int rc = usage(o, "cannot write into its folder %s: %s", dir, strerror(bad));
        free(dir);
        return rc;
    }
    free(dir);
    struct stat cur;
    if (stat(o->path, &cur) == 0) {
        o->keep_mode = 1;
        o->mode = cur.st_mode & 07777;
    }
    remove_stale(o->path);
    return 0;
}

int cli_output_prepare(cli_output *o, const char *cmd, const char *opt, const char *arg,
                       const char *const *inputs, size_t ninputs, const cli_output *other)
{
    return prepare(o, cmd, opt, arg, inputs, ninputs, other, 1);
}

int cli_output_check(cli_output *o, const char *cmd, const char *opt, const char *arg,
                     const char *const *inputs, size_t ninputs, const cli_output *other)
{
    return prepare(o, cmd, opt, arg, inputs, ninputs, other, 0);
}

int cli_output_refuse(const cli_output *o, const char *why)
{
    return usage(o, "%s", why);
}

/* A scratch file for a stream's bytes: unnamed in $TMPDIR (nothing to leave
 * behind whatever happens), else in memory. */
static int scratch_fd(void)
{
    const char *t = getenv("TMPDIR");
    int fd = open(t && *t ? t : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) fd = memfd_create("clscale-out", MFD_CLOEXEC);
    return fd;
}

int cli_output_begin(cli_output *o, cls_dtype dtype, size_t ndim, const size_t *shape, cls_npy *y)
{
    static atomic_uint seq;
    char err[1024];
    if (o->stream) {
        int fd = scratch_fd();
        if (fd < 0) return cli_error(EXIT_FAIL, "%s: no scratch file for the stream: %s", o->arg, strerror(errno));
        if (cls_npy_create_fd(fd, o->arg, NULL, dtype, ndim, shape, y, err, sizeof err) != CLS_OK)
            return cli_error(EXIT_FAIL, "%s (scratch space in $TMPDIR or /tmp)", err);
        cli_guard_watch(y->map, y->map_len, "the scratch file in $TMPDIR", 1);
        return 0;
    }
    int fd = -1;
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        free(o->tmp);
        if (!(o->tmp = cls_npy_temp_name(o->path, atomic_fetch_add(&seq, 1))))
            return cli_error(EXIT_FAIL, "%s: out of memory", o->arg);
        fd = cli_guard_create(o->tmp, O_RDWR, 0666, &o->slot);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int rc = cli_error(EXIT_FAIL, "%s: cannot create %s: %s", o->arg, o->tmp, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return rc;
    }
    if (o->keep_mode) (void)fchmod(fd, o->mode);
    cls_status st = cls_npy_create_fd(fd, o->path, o->tmp, dtype, ndim, shape, y, err, sizeof err);
    if (st != CLS_OK) { /* the temporary is gone already */
        cli_guard_forget(o->slot);
        o->slot = -1;
        free(o->tmp);
        o->tmp = NULL;
        return cli_error(EXIT_FAIL, "%s", err);
    }
    cli_guard_watch(y->map, y->map_len, o->arg, 1);
    return 0;
}

int cli_output_save_stats(cli_output *s, const cls_stats *stats)
{
    static atomic_uint seq;
    cli_guard_lock();
    int rc = 0;
    for (int tries = 0; tries < 100; tries++) {
        free(s->tmp);
        if (s->stream) {
            const char *t = getenv("TMPDIR");
            char name[PATH_MAX];
            snprintf(name, sizeof name, "%s/.clscale-stats.tmp.%ld.%u", t && *t ? t : "/tmp", (long)getpid(),
                     atomic_fetch_add(&seq, 1));
            s->tmp = strdup(name);
        } else s->tmp = cls_npy_temp_name(s->path, atomic_fetch_add(&seq, 1));
        if (!s->tmp) {
            rc = cli_error(EXIT_FAIL, "%s: out of memory", s->arg);
            break;
        }
        if (access(s->tmp, F_OK) == 0) continue;
        s->slot = cli_guard_add(s->tmp);
        if (cls_stats_save(stats, s->tmp) != CLS_OK) {
            rc = cli_error(EXIT_FAIL, "%s %s: %s", s->opt, s->arg, cls_last_error(NULL));
            unlink(s->tmp);
        } else if (s->keep_mode) (void)chmod(s->tmp, s->mode);
        break;
    }
    if (rc) {
        cli_guard_forget(s->slot);
        s->slot = -1;
        free(s->tmp);
        s->tmp = NULL;
    }
    cli_guard_unlock();
    return rc;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A side file's scratch copy into its stream. */
static int copy_into(int sink, const char *from)
{
    int fd = open(from, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            rc = -1;
        } else rc = write_all(sink, buf, (size_t)n);
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

static int commit_side(cli_output *s)
{
    int rc = 0;
    if (s->stream) {
        if (copy_into(s->sink, s->tmp) != 0)
            rc = cli_error(EXIT_FAIL, "%s: %s: cannot write: %s (OUT was written)", s->opt, s->arg, strerror(errno));
        unlink(s->tmp);
    } else if (rename(s->tmp, s->path) != 0) {
        rc = cli_error(EXIT_FAIL, "%s %s: cannot rename %s onto it: %s (OUT was written)", s->opt, s->arg, s->tmp,
                       strerror(errno));
        unlink(s->tmp);
    } else if ((rc = cls_sync_dir_of(s->path)) != 0)
        rc = cli_error(EXIT_FAIL, "%s %s: written, but syncing its folder failed: %s", s->opt, s->arg, strerror(rc));
    cli_guard_forget(s->slot);
    s->slot = -1;
    free(s->tmp);
    s->tmp = NULL;
    return rc;
}

/* The mask after OUT: its data is on disk already (cli_output_commit). */
static int commit_mask(cli_output *m, cls_npy *mask)
{
    char err[1024];
    int rc = 0;
    cli_guard_unwatch(mask->map);
    if (m->stream) {
        if (write_all(m->sink, mask->map, mask->map_len) != 0)
            rc = cli_error(EXIT_FAIL, "%s: %s: cannot write: %s (OUT was written)", m->opt, m->arg, strerror(errno));
        cls_npy_close(mask, 0, NULL, 0);
    } else if (cls_npy_close(mask, 1, err, sizeof err) != CLS_OK) {
        rc = cli_error(EXIT_FAIL, "%s %s (OUT was written)", m->opt, err);
    }
    cli_guard_forget(m->slot);
    m->slot = -1;
    free(m->tmp);
    m->tmp = NULL;
    return rc;
}

int cli_output_commit(cli_output *o, cls_npy *y, cli_output *side, cli_output *m, cls_npy *mask)
{
    char err[1024];
    int rc = 0;
    /* both files' data on disk before either is renamed: a full disk or an
     * I/O error leaves OUT and the mask as they were */
    if (mask && mask->map && !m->stream && cls_npy_sync(mask, err, sizeof err) != CLS_OK) {
        cli_output_discard(m, mask);
        return cli_error(EXIT_FAIL, "%s %s", m->opt, err);
    }
    if (mask && mask->map && !o->stream && cls_npy_sync(y, err, sizeof err) != CLS_OK) {
        cli_output_discard(m, mask);
        return cli_error(EXIT_FAIL, "%s", err);
    }
    cli_guard_unwatch(y->map);
    if (o->stream) {
        /* Not under the lock: a reader that stalls must not make the run
         * deaf to Ctrl-C. A signal mid-stream ends the run (exit 130/143) and
         * the reader sees a truncated array; its exit status says so. */
        if (write_all(o->sink, y->map, y->map_len) != 0)
            rc = cli_error(EXIT_FAIL, "%s: cannot write: %s", o->arg, strerror(errno));
        cls_npy_close(y, 0, NULL, 0);
        cli_guard_lock();
        if (rc == 0) cli_guard_committed();
    } else {
        cli_guard_lock();
        if (cls_npy_close(y, 1, err, sizeof err) != CLS_OK) rc = cli_error(EXIT_FAIL, "%s", err);
        else cli_guard_committed();
        cli_guard_forget(o->slot);
        o->slot = -1;
        free(o->tmp);
        o->tmp = NULL;
    }
    if (mask && mask->map) {
        if (rc == 0) rc = commit_mask(m, mask);
        else cli_output_discard(m, mask);
    }
    if (side && side->tmp) {
        if (rc == 0) rc = commit_side(side);
        else cli_output_discard(side, NULL);
    }
    cli_guard_unlock();
    return rc;
}

void cli_output_discard(cli_output *o, cls_npy *y)
{
    if (!o->arg) return;
    if (y && y->map) {
        cli_guard_unwatch(y->map);
        cls_npy_close(y, 0, NULL, 0);
    }
    if (o->tmp) unlink(o->tmp);
    cli_guard_forget(o->slot);
    o->slot = -1;
    free(o->tmp);
    o->tmp = NULL;
    if (o->sink >= 0) close(o->sink);
    o->sink = -1;
    free(o->path);
    o->path = NULL;
}
