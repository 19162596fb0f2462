/* Where the tool's output goes, and what it never touches (issue 29):
 * /dev/null, /dev/stdout and FIFOs are streamed into and stay what they are;
 * a symlink is written through to its file; a folder, a socket, a terminal
 * or any input (by path, symlink or hard link) is refused with exit 2 before
 * any work; --stats-out commits only with OUT; an existing OUT keeps its
 * permissions; temporaries of dead runs are removed, those of live ones
 * kept. Streams are compared byte for byte with the same run written to a
 * regular file (whose values test_tool.c checks against the reference). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h" /* cls_write_atomic: statistics, traces, the kernel cache */
#include "tool_util.h"

static unsigned char *want;  /* normalize --method minmax of in.npy, as a file */
static size_t want_len;

static int group_setup(void **state)
{
    tu_setup(state);
    tu_write_random(tu_file("in.npy"), 300, 7, 4242);
    if (TU_RUN("normalize", "--method", "minmax", tu_file("in.npy"), tu_file("want.npy")) != 0) return -1;
    want = tu_read(tu_file("want.npy"), &want_len);
    return want && want_len > 128 ? 0 : -1;
}

static int group_teardown(void **state)
{
    free(want);
    return tu_teardown(state);
}

#define NORMALIZE(out) "normalize", "--method", "minmax", tu_file("in.npy"), (out)

/* ---- devices and pipes ---------------------------------------------------- */

static void dev_null_as(int nobody)
{
    struct stat before, after;
    assert_int_equal(stat("/dev/null", &before), 0);
    tu_opts o = {nobody ? tu_nobody_env() : NULL, nobody, -1, -1};
    tu_expect(tu_run(&o, (const char *const[]){NORMALIZE("/dev/null"), NULL}), 0);
    assert_int_equal(stat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_int_equal(after.st_rdev, before.st_rdev);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(tu_temp_files("/dev"), 0);
}

static void dev_null_is_written_into_not_replaced(void **state)
{
    (void)state;
    dev_null_as(0);
}

static void dev_null_works_for_an_unprivileged_user(void **state)
{
    (void)state;
    if (geteuid() != 0) { /* runs as nobody: needs root to switch */
        test_skip("not root: cannot run as nobody");
    }
    dev_null_as(1);
}

static void dev_stdout_to_a_regular_file_gets_the_array(void **state)
{
    (void)state;
    int fd = open(tu_file("redirected.npy"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    tu_opts o = {NULL, 0, fd, -1};
    tu_expect(tu_run(&o, (const char *const[]){NORMALIZE("/dev/stdout"), NULL}), 0);
    close(fd);
    assert_true(tu_same_bytes(tu_file("redirected.npy"), want, want_len));
    assert_int_equal(tu_temp_files(NULL), 0);
}

typedef struct reader {
    int fd;
    unsigned char *buf;
    size_t len, cap;
} reader;

static void *read_all(void *arg)
{
    reader *r = arg;
    for (;;) {
        if (r->len == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 65536;
            r->buf = realloc(r->buf, r->cap);
            if (!r->buf) return NULL;
        }
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return NULL;
        r->len += (size_t)n;
    }
}

static void dev_stdout_into_a_pipe_streams_the_array(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    reader r = {p[0], NULL, 0, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_all, &r), 0);
    tu_opts o = {NULL, 0, p[1], p[0]};
    pid_t pid = tu_spawn(&o, (const char *const[]){NORMALIZE("/dev/stdout"), NULL});
    close(p[1]);
    tu_expect(tu_wait(pid, 120), 0);
    pthread_join(t, NULL);
    close(p[0]);
    assert_int_equal(r.len, want_len);
    assert_memory_equal(r.buf, want, want_len);
    free(r.buf);
}

static void a_fifo_is_written_through_and_stays_a_fifo(void **state)
{
    (void)state;
    const char *fifo = tu_file("fifo.npy");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0666), 0);
    pid_t pid = tu_spawn(NULL, (const char *const[]){NORMALIZE(fifo), NULL});
    int fd = open(fifo, O_RDONLY); /* blocks until the tool opens it to write */
    assert_true(fd >= 0);
    reader r = {fd, NULL, 0, 0};
    read_all(&r);
    close(fd);
    tu_expect(tu_wait(pid, 120), 0);
    assert_int_equal(r.len, want_len);
    assert_memory_equal(r.buf, want, want_len);
    free(r.buf);
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_int_equal(tu_temp_files(NULL), 0);
}

static void dev_full_fails_naming_it(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0) test_skip("no writable /dev/full here");
    tu_expect(TU_RUN(NORMALIZE("/dev/full")), 1);
    assert_non_null(strstr(tu_stderr(), "/dev/full"));
    assert_non_null(strstr(tu_stderr(), "No space"));
}

/* ---- symlinks ------------------------------------------------------------- */

static void a_symlink_is_written_through_to_its_file(void **state)
{
    (void)state;
    mkdir(tu_file("sub"), 0777);
    const char *link = tu_file("link.npy"), *target = tu_file("sub/target.npy");
    unlink(link);
    unlink(target);
    assert_int_equal(symlink("sub/target.npy", link), 0); /* relative, dangling */
    for (int round = 0; round < 2; round++) {            /* then the target exists */
        tu_expect(TU_RUN(NORMALIZE(link)), 0);
        struct stat sb;
        assert_int_equal(lstat(link, &sb), 0);
        assert_true(S_ISLNK(sb.st_mode));
        assert_true(tu_same_bytes(target, want, want_len));
    }
    assert_int_equal(tu_temp_files(NULL), 0);
    assert_int_equal(tu_temp_files(tu_file("sub")), 0);
}

/* ---- refused before any work ---------------------------------------------- */

/* The run exits 2 with a usage error naming `what`, and `keep` (n bytes)
 * is unchanged. */
static void refused(const char *const *args, const char *what, const char *keep)
{
    size_t n;
    unsigned char *before = keep ? tu_read(keep, &n) : NULL;
    int st = tu_run(NULL, args);
    if (st != 2 || !strstr(tu_stderr(), what) || !strstr(tu_stderr(), "--help"))
        fail_msg("%s %s ...: status %d (expected 2, naming \"%s\"); stderr:\n%s", args[0], args[1], st, what,
                 tu_stderr());
    if (keep) {
        assert_true(tu_same_bytes(keep, before, n));
        free(before);
    }
    assert_int_equal(tu_temp_files(NULL), 0);
}

static void out_equal_to_an_input_is_refused(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy");
    unlink(tu_file("in-link.npy"));
    unlink(tu_file("in-hard.npy"));
    assert_int_equal(symlink("in.npy", tu_file("in-link.npy")), 0);
    assert_int_equal(link(in, tu_file("in-hard.npy")), 0);
    char dotted[4400];
    snprintf(dotted, sizeof dotted, "%s/./in.npy", tu_dir);
    const char *outs[] = {in, tu_file("in-link.npy"), tu_file("in-hard.npy"), dotted};
    for (size_t i = 0; i < 4; i++)
        refused((const char *const[]){"normalize", "--method", "zscore", in, outs[i], NULL}, "same file", in);

    /* apply's statistics and discount's factors are inputs too */
    const char *s = tu_file("s.stats"), *f = tu_file("f.npy");
    tu_expect(TU_RUN("normalize", "--method", "minmax", "--stats-out", s, in, tu_file("o.npy")), 0);
    tu_write_random(f, 1, 7, 99);
    refused((const char *const[]){"apply", "--stats", s, in, s, NULL}, "same file", s);
    refused((const char *const[]){"discount", "--factors", f, in, f, NULL}, "same file", f);
    /* --stats-out may be neither an input nor OUT */
    refused((const char *const[]){"normalize", "--method", "minmax", "--stats-out", in, in, tu_file("o.npy"), NULL},
            "same file", in);
    refused((const char *const[]){"normalize", "--method", "minmax", "--stats-out", tu_file("o.npy"), in,
                                  tu_file("o.npy"), NULL},
            "same file", tu_file("o.npy"));
}

static void a_folder_socket_or_terminal_is_refused(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy");
    mkdir(tu_file("adir"), 0777);
    refused((const char *const[]){NORMALIZE(tu_file("adir")), NULL}, "folder", NULL);
    refused((const char *const[]){NORMALIZE(tu_file("new/")), NULL}, "folder", NULL);
    /* a socket cannot be written as a file */
    const char *sock = tu_file("sock");
    unlink(sock);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) < sizeof a.sun_path) {
        strcpy(a.sun_path, sock);
        assert_int_equal(bind(sfd, (struct sockaddr *)&a, sizeof a), 0);
        refused((const char *const[]){NORMALIZE(sock), NULL}, "socket", NULL);
    }
    close(sfd);
    /* a terminal would get binary data */
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0) {
        char pts[256];
        snprintf(pts, sizeof pts, "%s", ptsname(m));
        refused((const char *const[]){NORMALIZE(pts), NULL}, "terminal", NULL);
    }
    if (m >= 0) close(m);
    struct stat sb;
    assert_int_equal(stat(in, &sb), 0);
}

/* The refusals come before anything is read or computed: with IN missing
 * (which would be exit 1 once read), each still exits 2 naming OUT. And the
 * devices never start: $CLSCALE_DEVICES names none that exists, which would
 * also be exit 2 but name the selector, not OUT. */
static void refusals_come_before_reading_or_computing(void **state)
{
    (void)state;
    const char *missing = tu_file("no-such-in.npy"), *dir = tu_file("adir2");
    mkdir(dir, 0777);
    char in_missing_folder[4500];
    snprintf(in_missing_folder, sizeof in_missing_folder, "%s/out.npy", tu_file("no-such-folder"));
    tu_opts o = {(const char *const[]){"CLSCALE_DEVICES=nosuchdevice", NULL}, 0, -1, -1};
    const char *outs[] = {dir, in_missing_folder, missing};
    const char *why[] = {"folder", "no-such-folder", "same file"};
    for (size_t i = 0; i < 3; i++) {
        int st = tu_run(&o, (const char *const[]){"normalize", "--method", "minmax", missing, outs[i], NULL});
        if (st != 2 || !strstr(tu_stderr(), outs[i] == missing ? missing : outs[i]) || !strstr(tu_stderr(), why[i]) ||
            strstr(tu_stderr(), "nosuchdevice"))
            fail_msg("OUT %s: status %d, expected 2 naming it (%s) before IN or the devices; stderr:\n%s", outs[i],
                     st, why[i], tu_stderr());
    }
    assert_int_equal(tu_temp_files(NULL), 0);
}

/* ---- side files, permissions, stale temporaries ------------------------------ */

static void stats_out_through_a_symlink_and_into_dev_null(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *link = tu_file("s-link"), *target = tu_file("s-target.stats");
    unlink(link);
    unlink(target);
    assert_int_equal(symlink("s-target.stats", link), 0);
    tu_expect(TU_RUN("normalize", "--method", "minmax", "--stats-out", link, in, tu_file("o1.npy")), 0);
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(stat(target, &sb), 0);
    assert_true(sb.st_size > 0);
    /* a whole statistics file (its CRC is checked when it is read) */
    tu_expect(TU_RUN("apply", "--stats", link, in, tu_file("o2.npy")), 0);
    tu_expect(TU_RUN("normalize", "--method", "minmax", "--stats-out", "/dev/null", in, tu_file("o3.npy")), 0);
    assert_int_equal(stat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_int_equal(tu_temp_files(NULL), 0);
}

static void an_existing_out_keeps_its_permissions(void **state)
{
    (void)state;
    const char *out = tu_file("private.npy");
    tu_write_bytes(out, "old", 3);
    assert_int_equal(chmod(out, 0600), 0);
    tu_expect(TU_RUN(NORMALIZE(out)), 0);
    struct stat sb;
    assert_int_equal(stat(out, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0600);
    assert_true(tu_same_bytes(out, want, want_len));
}

static void temporaries_of_dead_runs_are_removed_of_live_ones_kept(void **state)
{
    (void)state;
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char stale[4400], live[4400], other[4400];
    snprintf(stale, sizeof stale, "%s/.out-s.npy.tmp.%ld.0", tu_dir, (long)dead);
    snprintf(live, sizeof live, "%s/.out-s.npy.tmp.%ld.3", tu_dir, (long)getpid());
    snprintf(other, sizeof other, "%s/.other.npy.tmp.%ld.0", tu_dir, (long)dead);
    tu_write_bytes(stale, "stale", 5);
    tu_write_bytes(live, "live", 4);
    tu_write_bytes(other, "other", 5);
    tu_expect(TU_RUN(NORMALIZE(tu_file("out-s.npy"))), 0);
    assert_false(tu_exists(stale));
    assert_true(tu_exists(live));   /* its process (this test) is alive */
    assert_true(tu_exists(other));  /* not a temporary of this OUT */
    assert_true(tu_same_bytes(tu_file("out-s.npy"), want, want_len));
    unlink(live);
    unlink(other);
    /* --stats-out's temporaries (the same naming) too */
    char stale_stats[4400];
    snprintf(stale_stats, sizeof stale_stats, "%s/.s-s.stats.tmp.%ld.1", tu_dir, (long)dead);
    tu_write_bytes(stale_stats, "stale", 5);
    tu_expect(TU_RUN("normalize", "--method", "minmax", "--stats-out", tu_file("s-s.stats"), tu_file("in.npy"),
                     tu_file("out-s.npy")),
              0);
    assert_false(tu_exists(stale_stats));
    assert_true(tu_exists(tu_file("s-s.stats")));
}

/* The library's own atomic writer (cls_stats_save, the traces bench
 * writes, the kernel cache) follows the same rules: as root it would have
 * renamed a temporary over /dev/null. */
static void the_librarys_atomic_writer_never_renames_over_a_device(void **state)
{
    (void)state;
    static const char text[] = "twelve bytes";
    const void *parts[] = {text};
    size_t lens[] = {sizeof text - 1};
    struct stat before, after;
    assert_int_equal(stat("/dev/null", &before), 0);
    assert_int_equal(cls_write_atomic("/dev/null", parts, lens, 1), 0);
    assert_int_equal(stat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_int_equal(after.st_ino, before.st_ino);
    /* a symlink: its file is written, the link stays */
    const char *link = tu_file("w-link"), *target = tu_file("w-target");
    unlink(link);
    unlink(target);
    assert_int_equal(symlink("w-target", link), 0);
    assert_int_equal(cls_write_atomic(link, parts, lens, 1), 0);
    assert_int_equal(lstat(link, &after), 0);
    assert_true(S_ISLNK(after.st_mode));
    assert_true(tu_same_bytes(target, text, sizeof text - 1));
    /* a FIFO: written through */
    const char *fifo = tu_file("w-fifo");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0666), 0);
    int fd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so that the writer's open does not block */
    assert_true(fd >= 0);
    assert_int_equal(cls_write_atomic(fifo, parts, lens, 1), 0);
    char got[32] = {0};
    assert_int_equal(read(fd, got, sizeof got), (ssize_t)(sizeof text - 1));
    assert_string_equal(got, text);
    close(fd);
    assert_int_equal(lstat(fifo, &after), 0);
    assert_true(S_ISFIFO(after.st_mode));
    /* a folder and a socket: refused */
    mkdir(tu_file("w-dir"), 0777);
    assert_int_equal(cls_write_atomic(tu_file("w-dir"), parts, lens, 1), EISDIR);
    const char *sock = tu_file("w-sock");
    unlink(sock);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) < sizeof a.sun_path) {
        strcpy(a.sun_path, sock);
        assert_int_equal(bind(sfd, (struct sockaddr *)&a, sizeof a), 0);
        assert_int_equal(cls_write_atomic(sock, parts, lens, 1), ENOTSUP);
    }
    close(sfd);
    assert_int_equal(tu_temp_files(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dev_null_is_written_into_not_replaced),
        cmocka_unit_test(dev_null_works_for_an_unprivileged_user),
        cmocka_unit_test(dev_stdout_to_a_regular_file_gets_the_array),
        cmocka_unit_test(dev_stdout_into_a_pipe_streams_the_array),
        cmocka_unit_test(a_fifo_is_written_through_and_stays_a_fifo),
        cmocka_unit_test(dev_full_fails_naming_it),
        cmocka_unit_test(a_symlink_is_written_through_to_its_file),
        cmocka_unit_test(out_equal_to_an_input_is_refused),
        cmocka_unit_test(a_folder_socket_or_terminal_is_refused),
        cmocka_unit_test(refusals_come_before_reading_or_computing),
        cmocka_unit_test(stats_out_through_a_symlink_and_into_dev_null),
        cmocka_unit_test(an_existing_out_keeps_its_permissions),
        cmocka_unit_test(temporaries_of_dead_runs_are_removed_of_live_ones_kept),
        cmocka_unit_test(the_librarys_atomic_writer_never_renames_over_a_device),
    };
    return TEST_RUN("tool_targets", tests, group_setup, group_teardown);
}
