/* Threads that make the process's first contexts at once: each gets a
 * working context. PoCL 3.1 initialises its devices on the first query; with
 * PoCL the only driver, four threads calling cls_context_create at once
 * crashed in clGetDeviceInfo (SIGSEGV in 4 runs of 6, CLS_E_NO_DEVICE in the
 * others) until the library's discovery took one thread at a time
 * (src/engine/device.c). Dask's threads fitting chunks hit it from Python.
 * The race is a matter of timing: the test repeats it in fresh processes. */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common.h"

extern char **environ;

enum { THREADS = 4, PROCESSES = 5 };

static void *make(void *arg)
{
    cls_status *st = arg;
    cls_config cfg = {0};
    cls_context *ctx = NULL;
    *st = cls_context_create(&cfg, &ctx);
    cls_context_destroy(ctx);
    return NULL;
}

/* The child: THREADS first contexts at once; exit 0 when all were made. */
static int child(void)
{
    pthread_t t[THREADS];
    cls_status st[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, make, &st[i])) return 3;
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (st[i] != CLS_OK) {
            fprintf(stderr, "thread %d: %s\n", i, cls_status_str(st[i]));
            bad = 1;
        }
    }
    return bad;
}

static char self[4096];

static void first_contexts_at_once(void **state)
{
    (void)state;
    for (int p = 0; p < PROCESSES; p++) {
        char *argv[] = {self, "--child", NULL};
        pid_t pid;
        int e = posix_spawn(&pid, self, NULL, NULL, argv, environ);
        if (e) fail_msg("cannot start %s: %s", self, strerror(e));
        int ws;
        if (waitpid(pid, &ws, 0) < 0) fail_msg("waitpid failed");
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
            fail_msg("process %d: %s %d", p, WIFSIGNALED(ws) ? "killed by signal" : "exit status",
                     WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child")) return child();  /* the environment is the parent's */
    snprintf(self, sizeof self, "%s", argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_contexts_at_once),
    };
    return TEST_RUN("first-contexts", tests, NULL, NULL);
}
