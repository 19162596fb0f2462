/* See tool_util.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool_util.h"

char tu_dir[4096];

int tu_setup(void **state)
{
    (void)state;
    test_tmpdir(tu_dir, sizeof tu_dir, program_invocation_short_name);
    chmod(tu_dir, 0777); /* the runs as nobody write here too */
    return 0;
}

int tu_teardown(void **state)
{
    (void)state;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_dir); /* megabytes of inputs, per process */
    return system(cmd) == 0 ? 0 : -1;
}

const char *tu_file(const char *name)
{
    static char ring[16][4400];
    static unsigned next;
    char *b = ring[next++ % 16];
    snprintf(b, sizeof ring[0], "%s/%s", tu_dir, name);
    return b;
}

double tu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int tu_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

extern char **environ;

pid_t tu_spawn(const tu_opts *o, const char *const *args)
{
    static const tu_opts none = {NULL, 0, -1, -1};
    if (!o) o = &none;
    const char *exe = getenv("CLS_TOOL");
    if (!exe) fail_msg("$CLS_TOOL is not set");
    const char *argv[64];
    size_t n = 0;
    argv[n++] = exe;
    for (; args[n - 1] && n < 63; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    char outp[4200], errp[4200];
    snprintf(outp, sizeof outp, "%s/.out", tu_dir);
    snprintf(errp, sizeof errp, "%s/.err", tu_dir);
    unlink(errp);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        int err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        int out = o->stdout_fd >= 0 ? o->stdout_fd : open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (err < 0 || out < 0) _exit(126);
        dup2(out, 1);
        dup2(err, 2);
        if (o->close_fd >= 0) close(o->close_fd);
        for (const char *const *e = o->env; e && *e; e++) /* NAME=VALUE, or NAME: unset */
            if (strchr(*e, '=')) putenv((char *)*e);
            else unsetenv(*e);
        /* the test process may block signals; the tool starts clean */
        sigset_t none_set;
        sigemptyset(&none_set);
        sigprocmask(SIG_SETMASK, &none_set, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (o->as_nobody && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(125);
        execve(exe, (char *const *)argv, environ);
        _exit(127);
    }
    return pid;
}

int tu_wait(pid_t pid, double timeout_s)
{
    double end = tu_now() + timeout_s;
    int ws;
    for (;;) {
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
        if (tu_now() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &ws, 0);
            fail_msg("the tool ran past %.1f s; stderr:\n%s", timeout_s, tu_stderr());
        }
        usleep(1000);
    }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
}

int tu_run(const tu_opts *o, const char *const *args) { return tu_wait(tu_spawn(o, args), 120.0); }

const char *tu_stderr(void)
{
    static char buf[16384];
    buf[0] = '\0';
    char errp[4200];
    snprintf(errp, sizeof errp, "%s/.err", tu_dir);
    FILE *f = fopen(errp, "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

void tu_write_array(const char *path, const cls_array *x, size_t ndim)
{
    size_t shape[3] = {x->batch, x->rows, x->cols};
    const size_t *sh = ndim == 3 ? shape : shape + 1;
    cls_npy f;
    char err[1024];
    if (cls_npy_create(path, x->dtype, ndim, sh, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    memcpy(f.data, x->data, f.data_bytes);
    if (cls_npy_close(&f, 1, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    chmod(path, 0644);
}

void tu_write_random(const char *path, size_t rows, size_t cols, uint64_t seed)
{
    size_t shape[2] = {rows, cols};
    cls_npy f;
    char err[1024];
    if (cls_npy_create(path, CLS_F32, 2, shape, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    rng r;
    rng_seed(&r, seed);
    float *v = f.data;
    for (size_t i = 0; i < rows * cols; i++) v[i] = (float)rng_range(&r, -100.0, 100.0);
    if (cls_npy_close(&f, 1, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    chmod(path, 0644);
}

unsigned char *tu_read(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *b = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            unsigned char *g = realloc(b, cap);
            if (!g) {
                free(b);
                fclose(f);
                return NULL;
            }
            b = g;
        }
        got = fread(b + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    *n = len;
    return b;
}

void tu_write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("%s: %s", path, strerror(errno));
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    chmod(path, 0644);
}

int tu_same_bytes(const char *path, const void *b, size_t n)
{
    size_t len;
    unsigned char *got = tu_read(path, &len);
    int same = got && len == n && !memcmp(got, b, n);
    free(got);
    return same;
}

size_t tu_temp_files(const char *dir)
{
    if (!dir) dir = tu_dir;
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp")) {
            print_error("temporary file: %s/%s\n", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

int tu_temp_present(void)
{
    DIR *d = opendir(tu_dir);
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) && !found) found = strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return found;
}

const char *const *tu_nobody_env(void)
{
    static char pocl[4500], kc[4500];
    static const char *env[4];
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/nobody-cache", tu_dir);
    mkdir(dir, 0777);
    chmod(dir, 0777);
    snprintf(pocl, sizeof pocl, "POCL_CACHE_DIR=%s/pocl", dir);
    snprintf(kc, sizeof kc, "CLSCALE_CACHE_DIR=%s/kc", dir);
    env[0] = pocl;
    env[1] = kc;
    env[2] = "HOME=/nonexistent";
    env[3] = NULL;
    return env;
}

const char *tu_gate_make(const char *name)
{
    const char *fifo = tu_file(name);
    unlink(fifo);
    if (mkfifo(fifo, 0600) != 0) fail_msg("mkfifo %s: %s", fifo, strerror(errno));
    return fifo;
}

const char *const *tu_gate_env(const char *fifo)
{
    static char layer[4500], gate[4500];
    static const char *env[3];
    const char *l = getenv("CLS_FAULT_LAYER");
    if (!l) fail_msg("$CLS_FAULT_LAYER is not set");
    snprintf(layer, sizeof layer, "OPENCL_LAYERS=%s", l);
    snprintf(gate, sizeof gate, "CLSFAULT_GATE=%s", fifo);
    env[0] = layer;
    env[1] = gate;
    env[2] = NULL;
    return env;
}

int tu_gate_reached(const char *fifo, pid_t pid)
{
    /* a non-blocking open for writing succeeds once a reader is in open():
     * the tool at the gate (polled, so that a tool that ends first is seen) */
    for (;;) {
        int fd = open(fifo, O_WRONLY | O_NONBLOCK);
        if (fd >= 0) return fd;
        if (errno != ENXIO && errno != EINTR) fail_msg("open %s: %s", fifo, strerror(errno));
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) return -1;
        usleep(1000);
    }
}

void tu_gate_open(int fd)
{
    (void)!write(fd, "g", 1);
    close(fd);
}
