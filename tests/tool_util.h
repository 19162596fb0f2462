/* What the tests of the tool's safety share (test_tool_targets.c,
 * test_tool_signals.c, test_tool_resources.c, test_tool_cli.c): running
 * $CLS_TOOL in the background, as another user, with a chosen stdout or
 * extra environment; files and the temporaries a run may leave. */
#ifndef CLS_TOOL_UTIL_H
#define CLS_TOOL_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "common.h"
#include "io/npy.h"

extern char tu_dir[4096];   /* the test's scratch folder (tu_setup) */

/* Makes tu_dir fresh under $CLS_TEST_TMP; for a group setup. tu_teardown()
 * removes it. */
int tu_setup(void **state);
int tu_teardown(void **state);

/* tu_dir/NAME; a ring of buffers, so several may be alive at once. */
const char *tu_file(const char *name);

typedef struct tu_opts {
    const char *const *env;   /* NAME=VALUE to set, NAME to unset; NULL-terminated */
    int   as_nobody;          /* run as the user nobody (needs root) */
    int   stdout_fd;          /* the child's stdout; -1: the file tu_dir/.out */
    int   close_fd;           /* closed in the child (a pipe's other end); -1 */
} tu_opts;

/* Starts $CLS_TOOL ARGS (NULL-terminated) in the background; stderr goes
 * to tu_dir/.err. @return the pid (the test fails when it cannot start). */
pid_t tu_spawn(const tu_opts *o, const char *const *args);

/* Waits for `pid`, at most `timeout_s` (then kills it and fails the test).
 * @return the exit status, or -SIGNAL when a signal ended it. */
int tu_wait(pid_t pid, double timeout_s);

/* Runs to the end: tu_spawn() + tu_wait(120 s). */
int tu_run(const tu_opts *o, const char *const *args);
#define TU_RUN(...) tu_run(NULL, (const char *const[]){__VA_ARGS__, NULL})

/* The last run's stderr (tu_dir/.err), NUL-terminated, static buffer. */
const char *tu_stderr(void);

/* Fails with the stderr when `status` is not `want`. */
#define tu_expect(status, want)                                                                       \
    do {                                                                                              \
        int s_ = (status);                                                                            \
        if (s_ != (want)) fail_msg("exit status %d, expected %d; stderr:\n%s", s_, (want), tu_stderr()); \
    } while (0)

double tu_now(void);
int tu_exists(const char *path);

/* Writes x as a .npy of `ndim` dimensions (2 or 3). */
void tu_write_array(const char *path, const cls_array *x, size_t ndim);

/* A float32 file of rows x cols with values from `seed` (no reference needed). */
void tu_write_random(const char *path, size_t rows, size_t cols, uint64_t seed);

/* The whole file, malloc'd; *n its size. NULL when it cannot be read. */
unsigned char *tu_read(const char *path, size_t *n);
void tu_write_bytes(const char *path, const void *b, size_t n);

/* Whether `path` holds exactly `b` (n bytes). */
int tu_same_bytes(const char *path, const void *b, size_t n);

/* Files named like the tool's temporaries (".tmp") in `dir` (NULL: tu_dir);
 * prints each. */
size_t tu_temp_files(const char *dir);

/* The fault layer's gate (CLSFAULT_GATE, tests/fault_layer.c): a FIFO at
 * which a tool started with tu_gate_env() stands still at its first kernel
 * launch. tu_gate_make() makes the FIFO tu_dir/NAME and returns its path;
 * tu_gate_env() the settings for tu_opts.env; tu_gate_reached() waits
 * until process pid stands at the gate (then returns the FIFO's write end)
 * or has ended (-1); tu_gate_open() lets it go on. */
const char *tu_gate_make(const char *name);
/* Is a temporary (NAME.tmp.*) in tu_dir? */
int tu_temp_present(void);
const char *const *tu_gate_env(const char *fifo);
int tu_gate_reached(const char *fifo, pid_t pid);
void tu_gate_open(int fd);

/* A folder and caches the user nobody can write (for tu_opts.as_nobody). */
const char *const *tu_nobody_env(void);

#endif
