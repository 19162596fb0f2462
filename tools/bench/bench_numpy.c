/* numpy on the benchmark's workloads: what a scientist runs today, timed
 * in the same run as clscale's calls. A child Python process (the
 * interpreter --numpy names, python3 by default) builds arrays of the
 * workload's shape and dtype and times the code a numpy user writes for
 * it, with the rounds' rules: a warm-up call, then `repeats` calls, each
 * after a read of twice the last-level caches, the median reported. The
 * values are random (finite, as bench_fill's): numpy's time does not
 * depend on them. The child runs after the workload's rounds, never beside
 * them, so the two do not share the machine's memory bandwidth. No numpy
 * (or no interpreter) leaves the column empty and says why. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"

extern char **environ;

/* argv: kind batch rows cols frows fcols dtype repeats evict_bytes. Prints
 * "numpy VERSION MEDIAN_S" on success, "no REASON" when numpy is missing. */
static const char script[] =
    "import sys, time\n"
    "try:\n"
    "    import numpy as np\n"
    "except ImportError as e:\n"
    "    print('no', 'numpy is not installed for', sys.executable); sys.exit(0)\n"
    "kind = sys.argv[1]\n"
    "b, r, c, fr, fc = (int(v) for v in sys.argv[2:7])\n"
    "dt = np.float64 if sys.argv[7] == 'float64' else np.float32\n"
    "repeats, evict = int(sys.argv[8]), int(sys.argv[9])\n"
    "rng = np.random.default_rng(20261122)\n"
    "x = rng.random((b, r, c), dtype=dt) * 100 - 50\n"
    "y = np.empty_like(x)\n"
    "f = rng.random((fr, fc), dtype=dt) if fr else None\n"
    "junk = np.ones(max(evict // 8, 1))\n"
    "def minmax_matrix():\n"
    "    for i in range(b):\n"
    "        mn = x[i].min(0); mx = x[i].max(0)\n"
    "        y[i] = (x[i] - mn) / (mx - mn)\n"
    "def discount():\n"
    "    np.multiply(x, f, out=y)\n"
    "def zscore_batch():\n"
    "    t = x.reshape(-1, c)\n"
    "    y.reshape(-1, c)[:] = (t - t.mean(0)) / t.std(0)\n"
    "run = {'minmax': minmax_matrix, 'discount': discount, 'zscore': zscore_batch}[kind]\n"
    "run()\n"
    "ts = []\n"
    "for _ in range(repeats):\n"
    "    junk.sum()\n"
    "    t0 = time.perf_counter(); run(); ts.append(time.perf_counter() - t0)\n"
    "ts.sort()\n"
    "n = len(ts)\n"
    "print('numpy', np.__version__, ts[n // 2] if n % 2 else (ts[n // 2 - 1] + ts[n // 2]) / 2)\n";

static const char *kind_name(bench_kind k)
{
    switch (k) {
    case BENCH_MINMAX_MATRIX: return "minmax";
    case BENCH_DISCOUNT: return "discount";
    case BENCH_ZSCORE_BATCH: return "zscore";
    }
    return "?";
}

/* Reads the child's one line of output into buf; the child's status in
 * *wstatus. -1 with why when it could not be started. */
static int run_child(const char *python, char *const argv[], char *buf, size_t len, int *wstatus, char *why,
                     size_t whylen)
{
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    pid_t pid;
    int err = posix_spawnp(&pid, python, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (err != 0) {
        close(fd[0]);
        snprintf(why, whylen, "%s: %s", python, strerror(err));
        return -1;
    }
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd[0], buf + n, len - 1 - n);
        if (k > 0 && (n += (size_t)k) < len - 1) continue;
        if (k < 0 && errno == EINTR) continue;
        break;
    }
    buf[n] = '\0';
    close(fd[0]);
    while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR) {
    }
    return 0;
}

void bench_numpy_time(const char *python, const bench_workload *w, int repeats, size_t evict_bytes,
                      bench_numpy *out)
{
    memset(out, 0, sizeof out[0]);
    if (!python) {
        snprintf(out->why, sizeof out->why, "not asked for (--numpy none)");
        return;
    }
    char a[8][32];
    snprintf(a[0], sizeof a[0], "%zu", w->batch);
    snprintf(a[1], sizeof a[1], "%zu", w->rows);
    snprintf(a[2], sizeof a[2], "%zu", w->cols);
    snprintf(a[3], sizeof a[3], "%zu", w->frows);
    snprintf(a[4], sizeof a[4], "%zu", w->fcols);
    snprintf(a[5], sizeof a[5], "%s", w->dtype == CLS_F64 ? "float64" : "float32");
    snprintf(a[6], sizeof a[6], "%d", repeats);
    snprintf(a[7], sizeof a[7], "%zu", evict_bytes);
    char *argv[] = {(char *)python, "-c", (char *)script, (char *)kind_name(w->kind), a[0], a[1], a[2], a[3],
                    a[4], a[5], a[6], a[7], NULL};
    char line[256];
    int ws = 0;
    if (run_child(python, argv, line, sizeof line, &ws, out->why, sizeof out->why) != 0) return;
    char version[32];
    double median;
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        snprintf(out->why, sizeof out->why, "%s ended with %s %d", python, WIFEXITED(ws) ? "status" : "signal",
                 WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
    } else if (strncmp(line, "no ", 3) == 0) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(out->why, sizeof out->why, "%.150s", line + 3);
    } else if (sscanf(line, "numpy %31s %lf", version, &median) == 2 && median > 0) {
        out->ok = 1;
        out->median = median;
        snprintf(out->version, sizeof out->version, "%s", version);
    } else {
        snprintf(out->why, sizeof out->why, "%s printed no time", python);
    }
}
