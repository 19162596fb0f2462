/* Helpers every test file shares: cmocka, a seeded generator, close-enough
 * comparisons that print both values, and the context fixture. */
#ifndef CLS_TEST_COMMON_H
#define CLS_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clscale.h"

/* The implementation the test runs on, from $CLS_TEST_SUITE: "pocl" (two
 * pthread devices), "pocl1", "basic" (two PoCL basic devices, one thread
 * each), "rusticl", "oclgrind", "all" (three platforms). */
const char *test_suite(void);
int test_suite_is(const char *name);

/* xoshiro256** seeded by splitmix64: the same numbers on every machine. */
typedef struct rng { uint64_t s[4]; } rng;
void rng_seed(rng *r, uint64_t seed);
uint64_t rng_next(rng *r);
double rng_uniform(rng *r);             /* [0, 1) */
double rng_range(rng *r, double lo, double hi);
double rng_normal(rng *r);

/* |actual - expected| <= tol * max(1, |expected|); NaN equals NaN, an
 * infinity equals itself. Prints both and the tolerance on failure. */
#define assert_close(actual, expected, tol) \
    test_assert_close((double)(actual), (double)(expected), (tol), #actual, __FILE__, __LINE__)
void test_assert_close(double a, double e, double tol, const char *what, const char *file, int line);

/* Creates a context for `devices` (NULL: all) with the test cache; fails
 * the test on error, printing cls_last_error(). */
cls_context *test_context(const char *devices, unsigned flags, size_t slice_bytes);

#if CLS_TEST_INTERNAL /* tests linked with the static library (not the MPI ones) */
#include "testing.h"
/* The suite's switches (src/testing.h), every context's default in the
 * test process, set before the tests run: Oclgrind's kernel shapes, and
 * $CLS_TEST_LANES (4 or 8, the short-column kernels' lanes). A test's main()
 * may add its own before TEST_RUN. */
extern cls_tuning test_tune;
/* test_context() made with the switches `t` (start from a copy of
 * test_tune); later contexts get test_tune again. */
cls_context *test_context_tuned(const cls_tuning *t, const char *devices, unsigned flags, size_t slice_bytes);
#endif

/* A scratch folder under the build directory, made fresh. */
void test_tmpdir(char *buf, size_t len, const char *name);

/* AddressSanitizer keeps freed memory in quarantine, and its shadow
 * memory counts in RSS: there RSS says nothing about the library's. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_UNDER_ASAN 1
#endif
#endif
#ifndef TEST_UNDER_ASAN
#define TEST_UNDER_ASAN 0
#endif

/* Resets this process's peak resident memory to its current RSS (Linux's
 * /proc/self/clear_refs) and returns that RSS in KiB; skips the running
 * test where it cannot. test_peak_rss_kb(): the peak since, in KiB. */
long test_peak_rss_reset(void);
long test_peak_rss_kb(void);

/* Writes host array x (3-D, little-endian) to a .npy file at path p. */
void test_write_npy(const char *p, const cls_array *x);

/* Runs $CLS_TOOL (the built clscale) with `args` (NULL-terminated), its
 * stdout and stderr captured through files in `dir`. Returns 0, or -1 when
 * it could not be started (no assertion: usable from a group setup). */
typedef struct tool_result {
    int  status;        /* exit status; -signal if killed */
    char out[65536];    /* stdout */
    char err[16384];    /* stderr */
    long maxrss_kb;     /* the tool's peak resident memory (wait4) */
} tool_result;
int test_run_tool(const char *dir, tool_result *r, const char *const *args);

/* Reports the running test as skipped, saying why (printf format): for a
 * test that cannot run here. Never return early as a pass: meson and
 * .ci/run count skips, and CI fails on one it does not expect. */
void test_note_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define test_skip(...)                  \
    do {                                \
        test_note_skip(__VA_ARGS__);    \
        skip();                         \
    } while (0)

/* Column `col` of group `group` of `s`: the entry of cls_stats_columns()'s
 * table, its shape from cls_stats_describe(). CLS_E_ARG for a NULL
 * argument or an index out of range (*out then zero). */
static inline cls_status test_column(const cls_stats *s, size_t group, size_t col, cls_column_stats *out)
{
    cls_stats_info info;
    if (!out) return CLS_E_ARG;
    *out = (cls_column_stats){0};
    if (cls_stats_describe(s, &info) != CLS_OK || group >= info.groups || col >= info.cols) return CLS_E_ARG;
    *out = cls_stats_columns((cls_stats *)s)[group * info.cols + col];
    return CLS_OK;
}

/* Runs the group; with Oclgrind, also fails when its log holds any report.
 * A skipped test is an "ok ... # SKIP" line in TAP (see common.c). */
int test_run(const char *name, const struct CMUnitTest *tests, size_t n,
             CMFixtureFunction setup, CMFixtureFunction teardown);
#define TEST_RUN(name, tests, setup, teardown) \
    test_run(name, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

#endif
