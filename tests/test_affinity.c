/* POCL_AFFINITY: the library never sets it (nor anything else in its
 * caller's environment); the tool (tools/cli/affinity.c, called first in
 * main) pins PoCL's worker threads unless the user chose, and never where
 * pinning would move them out of the process's CPU mask. PoCL reads the
 * variable once per process, so each case runs in a child. */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "affinity.h"
#include "common.h"

/* Threads of this process other than the caller that are bound to one CPU. */
static int pinned_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == self) continue;
        cpu_set_t m;
        CPU_ZERO(&m);
        if (sched_getaffinity(tid, sizeof m, &m) == 0 && CPU_COUNT(&m) == 1) n++;
    }
    closedir(d);
    return n;
}

/* A context and one small call, so that PoCL has started its workers. */
static int run_one_call(void)
{
    cls_context *ctx = NULL;
    if (cls_context_create(NULL, &ctx) != CLS_OK) {
        fprintf(stderr, "%s\n", ctx ? cls_last_error(ctx) : "no context");
        cls_context_destroy(ctx);
        return -1;
    }
    float x[64], y[64], f[64];
    for (int i = 0; i < 64; i++) {
        x[i] = (float)i + 0.5f;
        f[i] = 2.0f;
    }
    cls_array ax = {.data = x, .dtype = CLS_F32, .batch = 1, .rows = 8, .cols = 8};
    cls_array ay = ax, af = ax;
    ay.data = y;
    af.data = f;
    cls_pipeline p = {.scaler = CLS_NONE, .factors = &af};
    cls_status st = cls_transform(ctx, &p, NULL, &ax, &ay);
    if (st != CLS_OK) fprintf(stderr, "%s\n", cls_last_error(ctx));
    cls_context_destroy(ctx);
    return st == CLS_OK && y[63] == 2.0f * x[63] ? 0 : -1;
}

/* Runs fn in a child process; its exit status must be 0. */
static void in_child(int (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(fn() == 0 ? 0 : 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static int child_library_alone(void)
{
    unsetenv("POCL_AFFINITY");
    if (run_one_call() != 0) return 1;
    if (getenv("POCL_AFFINITY")) {
        fprintf(stderr, "the library set POCL_AFFINITY=%s\n", getenv("POCL_AFFINITY"));
        return 1;
    }
    return 0;
}

static int child_default(void)
{
    unsetenv("POCL_AFFINITY");
    cli_pocl_affinity_default();
    if (run_one_call() != 0) return 1;
    const char *v = getenv("POCL_AFFINITY");
    if (!v || strcmp(v, "1") != 0) {
        fprintf(stderr, "POCL_AFFINITY = %s, expected 1\n", v ? v : "(unset)");
        return 1;
    }
    /* PoCL did pin its workers (on a machine with more than one core) */
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1 && pinned_threads() < 1) {
        fprintf(stderr, "no thread is bound to one CPU\n");
        return 1;
    }
    return 0;
}

static int child_caller_chose(void)
{
    setenv("POCL_AFFINITY", "0", 1);
    cli_pocl_affinity_default();
    if (run_one_call() != 0) return 1;
    const char *v = getenv("POCL_AFFINITY");
    if (!v || strcmp(v, "0") != 0) return 1;
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1 && pinned_threads() != 0) {
        fprintf(stderr, "%d threads bound to one CPU with POCL_AFFINITY=0\n", pinned_threads());
        return 1;
    }
    return 0;
}

static int child_restricted(void)
{
    unsetenv("POCL_AFFINITY");
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return 1;
    cli_pocl_affinity_default();
    if (run_one_call() != 0) return 1;
    if (getenv("POCL_AFFINITY")) {
        fprintf(stderr, "POCL_AFFINITY set although the process may run on one CPU only\n");
        return 1;
    }
    return 0;
}

static void the_library_leaves_the_environment_alone(void **state)
{
    (void)state;
    in_child(child_library_alone);
}

static void the_tool_pins_by_default(void **state)
{
    (void)state;
    in_child(child_default);
}

static void the_tool_keeps_the_users_choice(void **state)
{
    (void)state;
    in_child(child_caller_chose);
}

static void the_tool_leaves_a_cpu_mask_alone(void **state)
{
    (void)state;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) test_skip("one CPU online");
    in_child(child_restricted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_library_leaves_the_environment_alone),
        cmocka_unit_test(the_tool_pins_by_default),
        cmocka_unit_test(the_tool_keeps_the_users_choice),
        cmocka_unit_test(the_tool_leaves_a_cpu_mask_alone),
    };
    return TEST_RUN("affinity", tests, NULL, NULL);
}
