/* Resources that run out (issue 26 part 3): a full disk (an 8 MiB tmpfs,
 * root only), a read-only folder (a read-only mount as root, a folder
 * without write permission as nobody), a folder that vanishes during the
 * run: each a clear error naming the path, no output, and the old OUT and
 * --stats-out files untouched (a folder found unwritable before any work is
 * refused, exit 2; a disk that fills or a folder that vanishes during the
 * run is exit 1); device memory limited by
 * POCL_MEMORY_LIMIT=1: slices shrink under the devices' 256 MiB allocation
 * limit and the call succeeds. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool_util.h"

static const char old_out[] = "an old OUT that a failed run leaves as it was";
static const char old_stats[] = "old statistics that a failed run leaves as they were";
static char mnt[4400];
static int mounted;

static int group_setup(void **state)
{
    tu_setup(state);
    tu_write_random(tu_file("in.npy"), 45000, 50, 901); /* 9 MB: more than the tmpfs */
    tu_write_random(tu_file("small.npy"), 10000, 50, 902); /* 2 MB */
    return TU_RUN("normalize", "--method", "minmax", tu_file("small.npy"), tu_file("warm.npy")) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    if (mounted) umount(mnt);
    mounted = 0;
    return tu_teardown(state);
}

/* An 8 MiB tmpfs at tu_dir/small-disk (root only; else the test skips). */
static int mount_small(const char *opts)
{
    snprintf(mnt, sizeof mnt, "%s/small-disk", tu_dir);
    mkdir(mnt, 0777);
    if (mounted) umount(mnt);
    mounted = 0;
    if (geteuid() != 0 || mount("tmpfs", mnt, "tmpfs", 0, opts) != 0) {
        print_message("# cannot mount a tmpfs here (%s)\n", geteuid() ? "not root" : strerror(errno));
        return -1;
    }
    mounted = 1;
    return 0;
}

static const char *in_mnt(const char *name)
{
    static char b[4][4500];
    static unsigned next;
    char *p = b[next++ % 4];
    snprintf(p, sizeof b[0], "%s/%s", mnt, name);
    return p;
}

/* The failed run's message names `path`, the exit is 1, and nothing new is
 * in `dir`. */
static void ended_naming(int st, int want, const char *path, const char *why)
{
    if (st != want || !strstr(tu_stderr(), path) || (why && !strstr(tu_stderr(), why)))
        fail_msg("status %d, expected %d naming %s (%s); stderr:\n%s", st, want, path, why ? why : "", tu_stderr());
}

/* A failure during the run: exit 1. */
static void failed_naming(int st, const char *path, const char *why) { ended_naming(st, 1, path, why); }

/* Refused before any work (an OUT that cannot be written): exit 2. */
static void refused_naming(int st, const char *path, const char *why) { ended_naming(st, 2, path, why); }

static void a_full_disk_is_an_error_naming_out(void **state)
{
    (void)state;
    if (mount_small("size=8m")) test_skip("no tmpfs of 8 MiB (root only)");
    const char *out = in_mnt("out.npy");
    tu_write_bytes(out, old_out, sizeof old_out);
    failed_naming(TU_RUN("normalize", "--method", "minmax", tu_file("in.npy"), out), out, "No space");
    assert_true(tu_same_bytes(out, old_out, sizeof old_out));
    assert_int_equal(tu_temp_files(mnt), 0);
}

/* OUT fits, the statistics do not: OUT is not committed either. */
static void a_disk_full_at_the_side_file_leaves_both_old_files(void **state)
{
    (void)state;
    if (mount_small("size=8m")) test_skip("no tmpfs of 8 MiB (root only)");
    const char *out = in_mnt("out.npy"), *stats = in_mnt("s.stats");
    tu_write_bytes(out, old_out, sizeof old_out);
    tu_write_bytes(stats, old_stats, sizeof old_stats);
    struct stat in;
    assert_int_equal(stat(tu_file("small.npy"), &in), 0);
    struct statvfs v;
    assert_int_equal(statvfs(mnt, &v), 0);
    unsigned long long page = v.f_bsize, free_bytes = (unsigned long long)v.f_bavail * page;
    unsigned long long need = ((unsigned long long)in.st_size + page - 1) / page * page;
    assert_true(free_bytes > need);
    /* fill all but OUT's own pages */
    size_t fill = (size_t)(free_bytes - need);
    char *zeros = calloc(1, fill);
    assert_non_null(zeros);
    memset(zeros, 1, fill);
    tu_write_bytes(in_mnt("filler"), zeros, fill);
    free(zeros);
    int st = TU_RUN("normalize", "--method", "minmax", "--stats-out", stats, tu_file("small.npy"), out);
    failed_naming(st, stats, "No space");
    assert_true(tu_same_bytes(out, old_out, sizeof old_out));
    assert_true(tu_same_bytes(stats, old_stats, sizeof old_stats));
    assert_int_equal(tu_temp_files(mnt), 0);
    unlink(in_mnt("filler"));
}

static void a_read_only_folder_is_an_error_before_any_work(void **state)
{
    (void)state;
    if (mount_small("size=8m")) test_skip("no tmpfs of 8 MiB (root only)");
    const char *out = in_mnt("out.npy");
    tu_write_bytes(out, old_out, sizeof old_out);
    assert_int_equal(mount("tmpfs", mnt, "tmpfs", MS_REMOUNT | MS_RDONLY, "size=8m"), 0);
    refused_naming(TU_RUN("normalize", "--method", "minmax", tu_file("in.npy"), out), mnt, "Read-only");
    assert_true(tu_same_bytes(out, old_out, sizeof old_out));
    assert_int_equal(mount("tmpfs", mnt, "tmpfs", MS_REMOUNT, "size=8m"), 0);
}

static void an_unwritable_folder_is_an_error_for_a_user(void **state)
{
    (void)state;
    if (geteuid() != 0) { /* runs as nobody: needs root to switch */
        test_skip("not root: cannot run as nobody");
    }
    const char *locked = tu_file("locked");
    mkdir(locked, 0755); /* root's: nobody may not write in it */
    chmod(locked, 0755);
    char out[4500];
    snprintf(out, sizeof out, "%s/out.npy", locked);
    tu_opts o = {tu_nobody_env(), 1, -1, -1};
    int st = tu_run(&o, (const char *const[]){"normalize", "--method", "minmax", tu_file("small.npy"), out, NULL});
    refused_naming(st, locked, "Permission denied");
    assert_false(tu_exists(out));
    /* --stats-out there too, with OUT writable: refused, the same way */
    st = tu_run(&o, (const char *const[]){"normalize", "--method", "minmax", "--stats-out", out, tu_file("small.npy"),
                                          tu_file("o-nobody.npy"), NULL});
    refused_naming(st, locked, "Permission denied");
    assert_false(tu_exists(tu_file("o-nobody.npy")));
}

static int temp_in(const char *dir)
{
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' 2>/dev/null | grep -q '\\.tmp\\.'", dir);
    return system(cmd) == 0;
}

static void a_folder_that_vanishes_is_an_error_and_stats_stay_old(void **state)
{
    (void)state;
    const char *dir = tu_file("vanishing"), *stats = tu_file("v.stats");
    mkdir(dir, 0777);
    char out[4500];
    snprintf(out, sizeof out, "%s/out.npy", dir);
    tu_write_bytes(stats, old_stats, sizeof old_stats);
    /* removed while the tool stands at its first kernel launch (the fault
     * layer's gate), its temporary there */
    const char *fifo = tu_gate_make("gate");
    tu_opts o = {tu_gate_env(fifo), 0, -1, -1};
    pid_t pid = tu_spawn(&o, (const char *const[]){"normalize", "--method", "minmax", "--stats-out", stats,
                                                   tu_file("in.npy"), out, NULL});
    int gate = tu_gate_reached(fifo, pid);
    if (gate < 0) fail_msg("the tool ended before its first kernel launch; stderr:\n%s", tu_stderr());
    assert_true(temp_in(dir));
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    tu_gate_open(gate);
    failed_naming(tu_wait(pid, 120), out, NULL);
    assert_true(tu_same_bytes(stats, old_stats, sizeof old_stats));
    assert_int_equal(tu_temp_files(NULL), 0);
}

/* In a child process, where POCL_MEMORY_LIMIT=1 is set before PoCL starts:
 * 308 MB of float32 with slices asked for 1 GiB. Returns the failures. */
static int memory_limited_run(void)
{
    setenv("POCL_MEMORY_LIMIT", "1", 1);
    const size_t rows = 1100000, cols = 70, n = rows * cols;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) return 100;
    rng r;
    rng_seed(&r, 903);
    for (size_t i = 0; i < n; i++) x[i] = (float)rng_range(&r, -50.0, 50.0 + (double)(i % cols));
    cls_config cfg = {0};
    cfg.devices = "pocl";
    cfg.slice_bytes = (size_t)1 << 30;
    cls_context *ctx = NULL;
    if (cls_context_create(&cfg, &ctx) != CLS_OK) {
        fprintf(stderr, "context: %s\n", cls_last_error(ctx));
        return 101;
    }
    cls_device_info d;
    if (cls_device_get(ctx, 0, &d) != CLS_OK || d.max_alloc_bytes > ((uint64_t)256 << 20)) {
        fprintf(stderr, "POCL_MEMORY_LIMIT=1 did not limit allocations (%llu)\n", (unsigned long long)d.max_alloc_bytes);
        return 102;
    }
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = 0, .hi = 1};
    cls_array in = {.data = x, .dtype = CLS_F32, .batch = 1, .rows = rows, .cols = cols}, out = {.data = y, .dtype = CLS_F32, .batch = 1, .rows = rows, .cols = cols};
    cls_status st = cls_fit_transform(ctx, &p, &in, &out, NULL);
    if (st != CLS_OK) {
        fprintf(stderr, "fit_transform: %s: %s\n", cls_status_str(st), cls_last_error(ctx));
        return 103;
    }
    cls_report rep;
    size_t slices = 0;
    if (cls_last_report(ctx, &rep) == CLS_OK)
        for (size_t i = 0; i < rep.ndevices; i++) slices += rep.devices[i].slices;
    int bad = slices < 2 ? 104 : 0; /* 308 MB cannot be one slice under 256 MiB */
    double lo[70], hi[70];
    for (size_t c = 0; c < cols; c++) lo[c] = hi[c] = x[c];
    for (size_t i = 0; i < n; i++) {
        size_t c = i % cols;
        if (x[i] < lo[c]) lo[c] = x[i];
        if (x[i] > hi[c]) hi[c] = x[i];
    }
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = i % cols;
        double want = ((double)x[i] - lo[c]) / (hi[c] - lo[c]);
        if (!(fabs(y[i] - want) <= 1e-5)) wrong++;
    }
    if (wrong) {
        fprintf(stderr, "%zu of %zu values differ from the reference\n", wrong, n);
        bad = 105;
    }
    cls_context_destroy(ctx);
    free(x);
    free(y);
    return bad;
}

static void pocl_memory_limit_shrinks_slices(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(memory_limited_run());
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_full_disk_is_an_error_naming_out),
        cmocka_unit_test(a_disk_full_at_the_side_file_leaves_both_old_files),
        cmocka_unit_test(a_read_only_folder_is_an_error_before_any_work),
        cmocka_unit_test(an_unwritable_folder_is_an_error_for_a_user),
        cmocka_unit_test(a_folder_that_vanishes_is_an_error_and_stats_stay_old),
        cmocka_unit_test(pocl_memory_limit_shrinks_slices),
    };
    return TEST_RUN("tool_resources", tests, group_setup, group_teardown);
}
