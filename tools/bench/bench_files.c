/* clscale bench --file PATH: the files row. Times, alternating in one run,
 * three ways of scaling the .npy file PATH (min-max per matrix) into a
 * file beside it, each a child process started from a cold input:
 *   cp + sync      `cp PATH OUT && sync OUT`: what the disk allows
 *   clscale        `clscale normalize --quiet --method minmax PATH OUT`
 *                  (streaming: docs/STREAMING.md), output fsynced
 *   numpy          a memory-mapped loop (/usr/bin/python3): np.load with
 *                  mmap_mode="r", per matrix min, max and scaling into an
 *                  open_memmap output, flush and fsync
 * Before each run the input is dropped from the page cache (fdatasync and
 * POSIX_FADV_DONTNEED on that file only) and the last output is removed.
 * Peak RSS comes from wait4() of each child. Prints the table, the ratios
 * against the goals (clscale <= 1.25x cp + sync, <= 0.75x numpy) and
 * whether the file was larger than the machine's memory. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_files.h"
#include "cli.h"

extern char **environ;

static const char numpy_loop[] =
    "import os, sys, numpy as np\n"
    "x = np.load(sys.argv[1], mmap_mode='r')\n"
    "y = np.lib.format.open_memmap(sys.argv[2], mode='w+', dtype=x.dtype, shape=x.shape)\n"
    "xs = x.reshape((1,) + x.shape) if x.ndim == 2 else x\n"
    "ys = y.reshape((1,) + y.shape) if y.ndim == 2 else y\n"
    "for b in range(xs.shape[0]):\n"
    "    m = xs[b]\n"
    "    mn = m.min(0); mx = m.max(0)\n"
    "    ys[b] = (m - mn) / (mx - mn)\n"
    "y.flush()\n"
    "fd = os.open(sys.argv[2], os.O_RDONLY); os.fsync(fd); os.close(fd)\n";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void evict(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fdatasync(fd);
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

/* Runs argv; seconds, exit status and peak RSS (bytes). -1 if it could not start. */
static int run_child(char *const argv[], double *secs, int *status, uint64_t *rss)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now_s();
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) return -1;
    int ws;
    struct rusage ru;
    while (wait4(pid, &ws, 0, &ru) < 0)
        if (errno != EINTR) return -1;
    *secs = now_s() - t0;
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    *rss = (uint64_t)ru.ru_maxrss * 1024;
    return 0;
}

enum { WAY_CP, WAY_CLSCALE, WAY_NUMPY, WAYS };
static const char *const way_name[WAYS] = {"cp + sync", "clscale", "numpy memmap"};

int bench_files(const char *path, int repeats)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return cli_error(EXIT_FAIL, "bench: --file %s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) return cli_error(EXIT_FAIL, "bench: --file %s: not a regular file", path);
    char out[4200], self[4096];
    snprintf(out, sizeof out, "%s.bench-out.npy", path);
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) return cli_error(EXIT_FAIL, "bench: cannot find the clscale executable");
    self[sl] = '\0';
    int have_numpy = access("/usr/bin/python3", X_OK) == 0 &&
                     system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;

    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    double ram = (double)pages * (double)psize;
    printf("files: %s, %.2f GB; memory %.1f GB: %s\n", path, sb.st_size / 1e9, ram / 1e9,
           (double)sb.st_size > ram ? "the file is larger than memory"
                                    : "the file fits in memory (ran in cache as far as writes go; reads start cold)");
    printf("each run: input dropped from the page cache first; output beside it, fsynced; runs alternate\n\n");
    printf("%-5s %12s %12s %12s\n", "run", way_name[0], way_name[1], way_name[2]);
    char *cp_argv[] = {"/bin/sh", "-c", "cp -- \"$1\" \"$2\" && sync -- \"$2\"", "sh", (char *)path, out, NULL};
    char *cl_argv[] = {self, "normalize", "--quiet", "--method", "minmax", (char *)path, out, NULL};
    char *np_argv[] = {"/usr/bin/python3", "-c", (char *)numpy_loop, (char *)path, out, NULL};
    char *const *argvs[WAYS] = {cp_argv, cl_argv, np_argv};
    double best[WAYS] = {0};
    uint64_t rss[WAYS] = {0};
    int failed = 0;
    for (int r = 0; r < repeats && !failed; r++) {
        double t[WAYS] = {0};
        for (int w = 0; w < WAYS; w++) {
            if (w == WAY_NUMPY && !have_numpy) continue;
            unlink(out);
            evict(path);
            int st = -1;
            uint64_t m = 0;
            if (run_child(argvs[w], &t[w], &st, &m) != 0 || st != 0) {
                cli_error(EXIT_FAIL, "bench: %s failed (exit status %d)", way_name[w], st);
                failed = 1;
                break;
            }
            evict(out);
            if (m > rss[w]) rss[w] = m;
            if (!best[w] || t[w] < best[w]) best[w] = t[w];
        }
        printf("%-5d %11.2fs %11.2fs ", r + 1, t[0], t[1]);
        if (have_numpy) printf("%11.2fs\n", t[2]);
        else printf("%12s\n", "(no numpy)");
        fflush(stdout);
    }
    unlink(out);
    if (failed) return EXIT_FAIL;
    double gb = sb.st_size / 1e9;
    printf("\nbest: cp + sync %.2f s (%.2f GB/s of file), clscale %.2f s (%.2f GB/s)", best[0], gb / best[0],
           best[1], gb / best[1]);
    if (have_numpy) printf(", numpy %.2f s (%.2f GB/s)", best[2], gb / best[2]);
    printf("\nclscale / (cp + sync) = %.2fx (goal <= 1.25x)", best[1] / best[0]);
    if (have_numpy) printf(", clscale / numpy = %.2fx (goal <= 0.75x)", best[1] / best[2]);
    printf("\npeak RSS: clscale %.0f MB (its buffer pool: 4 x 64 MiB = 268 MB)", rss[1] / 1e6);
    if (have_numpy) printf(", numpy %.0f MB", rss[2] / 1e6);
    printf("\n");
    return EXIT_OK;
}
