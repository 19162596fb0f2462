/* See common.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

const char *test_suite(void)
{
    const char *s = getenv("CLS_TEST_SUITE");
    return s ? s : "pocl";
}

int test_suite_is(const char *name) { return strcmp(test_suite(), name) == 0; }

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(rng *r) { return (rng_next(r) >> 11) * 0x1.0p-53; }
double rng_range(rng *r, double lo, double hi) { return lo + (hi - lo) * rng_uniform(r); }

double rng_normal(rng *r)
{
    double u = rng_uniform(r), v = rng_uniform(r);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void test_assert_close(double a, double e, double tol, const char *what, const char *file, int line)
{
    int ok;
    if (isnan(e)) ok = isnan(a);
    else if (isinf(e)) ok = a == e;
    else ok = fabs(a - e) <= tol * fmax(1.0, fabs(e));
    if (!ok) {
        print_error("%s = %.17g, expected %.17g (difference %.3g, tolerance %.3g relative)\n", what, a, e,
                    fabs(a - e), tol);
        _fail(file, line);
    }
}

#if CLS_TEST_INTERNAL
cls_tuning test_tune;

cls_context *test_context_tuned(const cls_tuning *t, const char *devices, unsigned flags, size_t slice_bytes)
{
    cls_tuning_default(t);
    cls_context *ctx = test_context(devices, flags, slice_bytes);
    cls_tuning_default(&test_tune);
    return ctx;
}
#endif

cls_context *test_context(const char *devices, unsigned flags, size_t slice_bytes)
{
    cls_config cfg = {0};
    cfg.devices = devices;
    cfg.flags = flags;
    cfg.slice_bytes = slice_bytes;
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) {
        print_error("cls_context_create: %s\n%s\n", cls_status_str(st), cls_last_error(ctx));
        cls_context_destroy(ctx);
        fail();
    }
    return ctx;
}

void test_tmpdir(char *buf, size_t len, const char *name)
{
    const char *base = getenv("CLS_TEST_TMP");
    if (!base) base = "/tmp";
    snprintf(buf, len, "%s/%s-%s-%ld", base, name, test_suite(), (long)getpid());
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
    if (system(cmd) != 0) fail_msg("cannot make %s", buf);
}

static int oclgrind_log_clean(void)
{
    const char *log = getenv("OCLGRIND_LOG");
    if (!log) return 1;
    FILE *f = fopen(log, "r");
    if (!f) return 1;
    char buf[4096];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (total == 0) fprintf(stderr, "Oclgrind reported errors (%s):\n", log);
        fwrite(buf, 1, n, stderr);
        total += n;
    }
    fclose(f);
    return total == 0;
}

/* Writes a vendors folder holding one .icd file per library. */
static void make_vendors(const char *dir, const char *const *libs, size_t n)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot make %s\n", dir);
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%zu.icd", dir, i);
        FILE *f = fopen(path, "w");
        if (!f) {
            perror(path);
            exit(1);
        }
        fprintf(f, "%s\n", libs[i]);
        fclose(f);
    }
    setenv("OCL_ICD_VENDORS", dir, 1);
}

#define POCL_LIB "libpocl.so.2"
#define RUSTICL_LIB "libRusticlOpenCL.so.1"
#define CLOVER_LIB "libMesaOpenCL.so.1"
#define OCLGRIND_LIB "/usr/lib/oclgrind/liboclgrind-rt-icd.so"

/* The environment of the suite, set before the first OpenCL call (the ICD
 * loader reads it once), and the suite's switches. An environment already
 * pinned by the caller (a sanitizer run) is kept. */
static void setup_env(void)
{
    const char *suite = test_suite();
#if CLS_TEST_INTERNAL
    /* the CPU kernels' column blocks under Oclgrind's bounds checks (the
     * "all" suite runs Oclgrind with its own GPU-style defaults) */
    if (!strcmp(suite, "oclgrind")) {
        if (!test_tune.vec) test_tune.vec = 8;
        if (!test_tune.kv) test_tune.kv = 4;
    }
    const char *lanes = getenv("CLS_TEST_LANES");
    if (lanes && *lanes) test_tune.lanes = (unsigned)atoi(lanes);
    cls_tuning_default(&test_tune);
#endif
    const char *base = getenv("CLS_TEST_TMP");
    if (!base) base = "/tmp";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/vendors-%s-%ld", base, suite, (long)getpid());
    if (getenv("CLS_TEST_KEEP_ICD")) return;
    if (!strcmp(suite, "pocl") || !strcmp(suite, "pocl1") || !strcmp(suite, "basic")) {
        const char *libs[] = {POCL_LIB};
        make_vendors(dir, libs, 1);
        setenv("POCL_DEVICES",
               !strcmp(suite, "pocl") ? "pthread pthread" : !strcmp(suite, "basic") ? "basic basic" : "pthread", 0);
    } else if (!strcmp(suite, "rusticl")) {
        const char *libs[] = {RUSTICL_LIB};
        make_vendors(dir, libs, 1);
        setenv("RUSTICL_ENABLE", "llvmpipe", 1);
    } else if (!strcmp(suite, "oclgrind")) {
        const char *libs[] = {OCLGRIND_LIB};
        make_vendors(dir, libs, 1);
    } else if (!strcmp(suite, "all")) {
        /* Clover has no device here: it proves an empty platform is skipped. */
        const char *libs[] = {OCLGRIND_LIB, POCL_LIB, RUSTICL_LIB, CLOVER_LIB};
        make_vendors(dir, libs, 4);
        setenv("POCL_DEVICES", "pthread pthread", 1);
        setenv("RUSTICL_ENABLE", "llvmpipe", 1);
    } else if (!strcmp(suite, "noicd")) {
        make_vendors(dir, NULL, 0);
    }
    if (!strcmp(suite, "oclgrind") || !strcmp(suite, "all")) {
        char log[4200];
        snprintf(log, sizeof log, "%s/oclgrind-%ld.log", base, (long)getpid());
        setenv("OCLGRIND_LOG", log, 1);
        setenv("OCLGRIND_CHECK_API", "1", 1);
        setenv("OCLGRIND_DATA_RACES", "1", 1);
        /* not OCLGRIND_UNINITIALIZED: Oclgrind 21.10's plugin stops at the
         * `freeze` instruction that LLVM emits for our kernels (fatal error
         * "Unsupported instruction: freeze"), so it cannot run them */
    }
}

void test_note_skip(const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    print_message("# skipped: %s\n", why);
}

static int run_group(const char *name, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                     CMFixtureFunction teardown)
{
    const char *log = getenv("OCLGRIND_LOG");
    if (log) unlink(log);
    /* CLS_TEST_FILTER=pattern runs only the matching tests (cmocka's * and ?) */
    if (getenv("CLS_TEST_FILTER")) cmocka_set_test_filter(getenv("CLS_TEST_FILTER"));
    int failed = _cmocka_run_group_tests(name, tests, n, setup, teardown);
    if (!oclgrind_log_clean()) failed++;
    return failed;
}

/* cmocka 1.1.5 prints a skipped test as "not ok N # SKIP name", and meson's
 * TAP parser takes a SKIP directive only on an "ok" line: a skip would read
 * as a failure. With TAP output asked for, the tests run in a child process
 * whose stdout passes through here, those lines turned into "ok N # SKIP
 * name"; a program whose every test skips is then a SKIP for meson. (Not
 * under MPI: no fork after MPI_Init; MPI tests use cmocka's plain output.) */
static int tap_output(void)
{
    const char *o = getenv("CMOCKA_MESSAGE_OUTPUT");
    return o && !strcasecmp(o, "TAP");
}

int test_run(const char *name, const struct CMUnitTest *tests, size_t n,
             CMFixtureFunction setup, CMFixtureFunction teardown)
{
    setup_env();
    int fd[2];
    if (!tap_output() || pipe(fd) != 0) return run_group(name, tests, n, setup, teardown);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return run_group(name, tests, n, setup, teardown);
    }
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDOUT_FILENO) < 0) _exit(1);
        close(fd[1]);
        setvbuf(stdout, NULL, _IOLBF, 0); /* lines out before a crash */
        int failed = run_group(name, tests, n, setup, teardown);
        fflush(stdout);
        exit(failed ? 1 : 0); /* exit, not _exit: atexit handlers (LeakSanitizer) as before */
    }
    close(fd[1]);
    FILE *in = fdopen(fd[0], "r");
    if (!in) {
        close(fd[0]);
        kill(pid, SIGKILL);
    }
    char *line = NULL;
    size_t cap = 0;
    while (in && getline(&line, &cap, in) >= 0) {
        if (!strncmp(line, "not ok ", 7) && strstr(line, " # SKIP"))
            fputs(line + 4, stdout);
        else
            fputs(line, stdout);
        fflush(stdout);
    }
    free(line);
    if (in) fclose(in);
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return 1;
    if (WIFSIGNALED(ws)) { /* die the same way, as the tests' process did */
        fprintf(stderr, "%s: the tests' process died of signal %d\n", name, WTERMSIG(ws));
        signal(WTERMSIG(ws), SIG_DFL);
        raise(WTERMSIG(ws));
        return 1;
    }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
}

extern char **environ;

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

int test_run_tool(const char *dir, tool_result *r, const char *const *args)
{
    const char *exe = getenv("CLS_TOOL");
    if (!exe) return -1;
    const char *argv[64];
    size_t n = 0;
    argv[n++] = exe;
    for (; args[n - 1] && n < 63; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    char outp[4200], errp[4200];
    snprintf(outp, sizeof outp, "%s/.stdout", dir);
    snprintf(errp, sizeof errp, "%s/.stderr", dir);
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa)) return -1;
    int bad = posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC, 0644)
              || posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int e = bad ? -1 : posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) return -1;
    int ws;
    struct rusage ru;
    while (wait4(pid, &ws, 0, &ru) < 0)
        if (errno != EINTR) return -1;
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
    r->maxrss_kb = ru.ru_maxrss;
    slurp(outp, r->out, sizeof r->out);
    slurp(errp, r->err, sizeof r->err);
    return 0;
}

void test_write_npy(const char *p, const cls_array *x)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, %zu, %zu), }",
                     x->dtype == CLS_F64 ? "<f8" : "<f4", x->batch, x->rows, x->cols);
    size_t hl = 10 + (size_t)n + 1, pad = (64 - hl % 64) % 64;
    size_t bytes = x->batch * x->rows * x->cols * (x->dtype == CLS_F64 ? 8 : 4);
    unsigned char hdr[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    uint16_t len = (uint16_t)(n + 1 + pad);
    hdr[8] = (unsigned char)(len & 0xff);
    hdr[9] = (unsigned char)(len >> 8);
    memcpy(hdr + 10, dict, (size_t)n);
    memset(hdr + 10 + n, ' ', pad);
    hdr[hl + pad - 1] = '\n';
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(hdr, 1, hl + pad, f), hl + pad);
    assert_int_equal(fwrite(x->data, 1, bytes, f), bytes);
    assert_int_equal(fclose(f), 0);
}

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n)) v = atol(line + n);
    fclose(f);
    return v;
}

long test_peak_rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f || fputs("5", f) < 0 || fclose(f) != 0) test_skip("cannot reset the peak RSS (/proc/self/clear_refs)");
    long now = status_kb("VmRSS:");
    if (now < 0 || status_kb("VmHWM:") > now + 1024) test_skip("the peak RSS was not reset");
    return now;
}

long test_peak_rss_kb(void) { return status_kb("VmHWM:"); }
