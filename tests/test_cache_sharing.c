/* One kernel cache folder shared (issue 26, part 5): processes that fill a
 * cold cache at the same time, entries corrupted while other processes
 * read them, and a cache folder they may not write. Every process's
 * results must be right; entries are written atomically (a temporary
 * renamed into place), a corrupt one is rebuilt, an unwritable folder
 * only costs time.
 *
 * The processes are this program run again as a child (`child DIR MODE`),
 * spawned with no OpenCL state of the parent (fork after a driver started
 * its threads is not safe). A child runs pipelines that need every kind of
 * kernel, float32 and float64, on the suite's two devices, each against the
 * float64 reference, and exits 0 when all were right.
 * Two contexts of one process at once: tests/test_concurrency.c. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h" /* cls_cache_get / cls_cache_put */
#include "pipeline_util.h"

extern char **environ;

/* ---- the child ---- */

typedef struct job_spec {
    cls_dtype dtype;
    size_t batch, rows, cols;
    cls_scaler scaler;
    cls_scope scope;
    int factors;
} job_spec;

/* With 16 KiB slices, a column of 20000 float32 rows (80 KB) is a group
 * larger than a slice: two phases. */
static const job_spec jobs[] = {
    {CLS_F32, 3, 40, 17, CLS_MINMAX, CLS_SCOPE_MATRIX, 0},   /* fit_apply_mm */
    {CLS_F32, 3, 40, 17, CLS_ZSCORE, CLS_SCOPE_MATRIX, 0},   /* fit_apply_mv */
    {CLS_F32, 1, 20000, 3, CLS_ZSCORE, CLS_SCOPE_BATCH, 0},  /* stats_mv, stats_reduce, apply */
    {CLS_F32, 1, 20000, 3, CLS_MINMAX, CLS_SCOPE_BATCH, 0},  /* stats_mm */
    {CLS_F32, 1, 500, 33, CLS_NONE, CLS_SCOPE_MATRIX, 1},    /* discount */
    {CLS_F64, 2, 50, 9, CLS_DECIMAL, CLS_SCOPE_MATRIX, 0},   /* fit_apply_mm f64 */
    {CLS_F64, 1, 10000, 2, CLS_ZSCORE, CLS_SCOPE_BATCH, 1},  /* stats_mv f64, apply f64 with factors */
};

static int child(const char *dir, const char *mode)
{
    char pocl_dir[] = "/tmp/clscale-nobody-XXXXXX";
    int own_pocl_dir = 0;
    if (strstr(mode, "nobody") && geteuid() == 0) {
        /* the folder's mode binds only a process that is not root; PoCL
         * compiles in a folder of its own (the parent's is root's), a copy
         * of the parent's so that its machine code stays warm */
        if (!mkdtemp(pocl_dir)) {
            perror("mkdtemp");
            return 3;
        }
        const char *src = getenv("POCL_CACHE_DIR");
        char cmd[8300];
        snprintf(cmd, sizeof cmd, "cp -r '%s'/. '%s' 2>/dev/null; chown -R 65534:65534 '%s'",
                 src ? src : "/nonexistent", pocl_dir, pocl_dir);
        if (system(cmd) != 0) {
            fprintf(stderr, "child: cannot prepare %s\n", pocl_dir);
            return 3;
        }
        own_pocl_dir = 1;
        setenv("POCL_CACHE_DIR", pocl_dir, 1);
        if (setgid(65534) != 0 || setuid(65534) != 0) {
            perror("setuid(nobody)");
            return 3;
        }
    }
    cls_config cfg = {0};
    cfg.cache_dir = dir;
    cfg.slice_bytes = 16 * 1024;
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) {
        fprintf(stderr, "child: cls_context_create: %s\n%s\n", cls_status_str(st), cls_last_error(ctx));
        cls_context_destroy(ctx);
        return 1;
    }
    int wrong = 0;
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        const job_spec *j = &jobs[i];
        if (strstr(mode, "f32") && j->dtype != CLS_F32) continue;
        cls_array x = ref_make(j->dtype, j->batch, j->rows, j->cols, 300 + i, REF_MISSING | REF_NEGATIVE);
        cls_array f = {0};
        cls_pipeline p = {.scaler = j->scaler, .scope = j->scope};
        if (j->factors) {
            f = ref_make_factors(j->dtype, 1, 1, j->cols, 400 + i);
            p.factors = &f;
        }
        cls_array y = make_out(&x);
        size_t n = j->batch * j->rows * j->cols;
        double *want = malloc(n * sizeof *want);
        st = cls_fit_transform(ctx, &p, &x, &y, NULL);
        if (st != CLS_OK) {
            fprintf(stderr, "child: job %zu: %s\n%s\n", i, cls_status_str(st), cls_last_error(ctx));
            wrong++;
        } else if (want) {
            ref_fit_transform(&x, &p, want, NULL);
            if (ref_compare(&y, want, tol_for(j->dtype), "child") != 0) {
                fprintf(stderr, "child: job %zu: wrong result\n", i);
                wrong++;
            }
        }
        free(want);
        ref_free(&x);
        ref_free(&y);
        if (f.data) ref_free(&f);
    }
    cls_context_destroy(ctx);
    if (own_pocl_dir) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", pocl_dir);
        if (system(cmd) != 0) fprintf(stderr, "child: could not remove %s\n", pocl_dir);
    }
    return wrong ? 2 : 0;
}

/* ---- the parent ---- */

static pid_t spawn_child(const char *dir, const char *mode)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    char *argv[] = {self, "child", (char *)dir, (char *)mode, NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, self, NULL, NULL, argv, environ), 0);
    return pid;
}

static int wait_child(pid_t pid)
{
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Entries of the folder: valid ones counted; any other file (a temporary
 * left behind, a corrupt entry) fails the test when `strict`. */
static int check_entries(const char *dir, int strict)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int valid = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        unsigned long long key = 0;
        char tail[8] = "";
        int ok = sscanf(e->d_name, "%16llx%7s", &key, tail) == 2 && !strcmp(tail, ".bin");
        unsigned char *bin = NULL;
        size_t len = 0;
        if (ok) ok = cls_cache_get(dir, key, &bin, &len) == 0;
        free(bin);
        if (!ok && strict) print_message("# %s/%s is not a valid entry\n", dir, e->d_name);
        if (!ok && strict) fail();
        valid += ok;
    }
    closedir(d);
    return valid;
}

/* Programs the processes built from source (clCreateProgramWithSource,
 * counted in each child by the fault layer, CLSFAULT_COUNT_OUT=folder/):
 * the sum over the count files in `folder`, which are removed. */
static long builds_from_source(const char *folder)
{
    DIR *d = opendir(folder);
    assert_non_null(d);
    long sum = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", folder, e->d_name);
        FILE *f = fopen(p, "r");
        assert_non_null(f);
        long seen = 0;
        assert_int_equal(fscanf(f, "%ld", &seen), 1);
        fclose(f);
        unlink(p);
        sum += seen;
    }
    closedir(d);
    return sum;
}

/* Two processes at once on a cold cache: right results, only valid
 * entries, and each program built from source once between them (a build
 * that misses holds the entry's lock, src/engine/cache.c; the other waits
 * and reads the entry). A third process, on the warm cache, builds none. */
static void two_processes_fill_one_cold_cache_at_once(void **state)
{
    (void)state;
    char dir[4096], folder[4200], out[4300];
    test_tmpdir(dir, sizeof dir, "cache-two");
    test_tmpdir(folder, sizeof folder, "cache-two-counts");
    snprintf(out, sizeof out, "%s/", folder);
    setenv("OPENCL_LAYERS", getenv("CLS_FAULT_LAYER"), 1);
    setenv("CLSFAULT_COUNT", "pthread:-1:clCreateProgramWithSource:-1:0", 1);
    setenv("CLSFAULT_COUNT_OUT", out, 1);
    pid_t a = spawn_child(dir, "all"), b = spawn_child(dir, "all");
    assert_int_equal(wait_child(a), 0);
    assert_int_equal(wait_child(b), 0);
    int n = check_entries(dir, 1);
    long built = builds_from_source(folder);
    print_message("# %d entries, all valid, no temporary left; %ld programs built from source\n", n, built);
    assert_true(n >= 8); /* the copy kernel and at least seven the jobs need */
    assert_int_equal(built, n);
    /* and a third process from the warm cache */
    assert_int_equal(wait_child(spawn_child(dir, "all")), 0);
    assert_int_equal(check_entries(dir, 1), n);
    assert_int_equal(builds_from_source(folder), 0);
    unsetenv("OPENCL_LAYERS");
    unsetenv("CLSFAULT_COUNT");
    unsetenv("CLSFAULT_COUNT_OUT");
}

/* Corrupts entry `path` one of several ways. */
static void corrupt(const char *dir, const char *name, unsigned how)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    if (stat(path, &sb) != 0) return;
    FILE *f;
    switch (how % 5) {
    case 0: /* one byte flipped in the payload */
        if ((f = fopen(path, "r+b"))) {
            fseek(f, sb.st_size / 2, SEEK_SET);
            int c = fgetc(f);
            fseek(f, sb.st_size / 2, SEEK_SET);
            fputc(c ^ 0x5a, f);
            fclose(f);
        }
        break;
    case 1: /* truncated */
        if (truncate(path, sb.st_size / 3) != 0) break;
        break;
    case 2: /* empty */
        if (truncate(path, 0) != 0) break;
        break;
    case 3: /* not an entry */
        if ((f = fopen(path, "wb"))) {
            fputs("garbage", f);
            fclose(f);
        }
        break;
    default: { /* a well-formed entry (its CRC right) whose binary no driver takes */
        unsigned long long key = 0;
        if (sscanf(name, "%16llx", &key) == 1) {
            unsigned char junk[4096];
            for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 31 + how);
            cls_cache_put(dir, key, junk, sizeof junk);
        }
    }
    }
}

static void corrupt_all(const char *dir, unsigned round)
{
    DIR *d = opendir(dir);
    if (!d) return;
    unsigned i = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".bin")) corrupt(dir, e->d_name, round + i++);
    }
    closedir(d);
}

static void entries_corrupted_while_processes_read_them_are_rebuilt(void **state)
{
    (void)state;
    char dir[4096];
    test_tmpdir(dir, sizeof dir, "cache-corrupt-live");
    assert_int_equal(wait_child(spawn_child(dir, "all")), 0);
    int n = check_entries(dir, 1);
    corrupt_all(dir, 0);
    assert_int_equal(check_entries(dir, 0), n / 5); /* only the well-formed junk still parses */
    pid_t a = spawn_child(dir, "all"), b = spawn_child(dir, "all");
    /* keep corrupting while they run */
    int done_a = 0, done_b = 0, ra = -1, rb = -1;
    for (unsigned round = 1; !(done_a && done_b); round++) {
        corrupt_all(dir, round);
        usleep(20000);
        int ws;
        if (!done_a && waitpid(a, &ws, WNOHANG) == a) {
            done_a = 1;
            ra = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        }
        if (!done_b && waitpid(b, &ws, WNOHANG) == b) {
            done_b = 1;
            rb = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        }
    }
    assert_int_equal(ra, 0);
    assert_int_equal(rb, 0);
    /* once nobody corrupts it, a process repairs what it needs */
    assert_int_equal(wait_child(spawn_child(dir, "all")), 0);
    assert_int_equal(wait_child(spawn_child(dir, "all")), 0);
    print_message("# %d valid entries after the repair (of %d)\n", check_entries(dir, 0), n);
}

/* The folder listing: names, sizes and times, to compare before and after. */
static void listing(const char *dir, char *buf, size_t len)
{
    buf[0] = '\0';
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t used = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[8192];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) != 0) continue;
        int w = snprintf(buf + used, len - used, "%s %lld %lld.%09ld\n", e->d_name, (long long)sb.st_size,
                         (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
        if (w < 0 || (size_t)w >= len - used) break;
        used += (size_t)w;
    }
    closedir(d);
}

static void read_only_cache_is_used_and_left_alone(void **state)
{
    (void)state;
    char dir[4096], before[16384], after[16384];
    test_tmpdir(dir, sizeof dir, "cache-ro");
    /* float32 kernels cached; the float64 ones will miss and cannot be saved */
    assert_int_equal(wait_child(spawn_child(dir, "f32")), 0);
    int n = check_entries(dir, 1);
    assert_true(n > 0);
    char cmd[12800];
    snprintf(cmd, sizeof cmd, "chmod 0444 '%s'/* && chmod 0555 '%s'", dir, dir);
    assert_int_equal(system(cmd), 0);
    listing(dir, before, sizeof before);
    assert_int_equal(wait_child(spawn_child(dir, "all nobody")), 0);
    listing(dir, after, sizeof after);
    assert_string_equal(before, after);
    /* a folder that cannot even be made */
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/sub/kcache", dir);
    assert_int_equal(wait_child(spawn_child(sub, "f32 nobody")), 0);
    listing(dir, after, sizeof after);
    assert_string_equal(before, after);
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "child")) return child(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_processes_fill_one_cold_cache_at_once),
        cmocka_unit_test(entries_corrupted_while_processes_read_them_are_rebuilt),
        cmocka_unit_test(read_only_cache_is_used_and_left_alone),
    };
    return TEST_RUN("cache-sharing", tests, NULL, NULL);
}
