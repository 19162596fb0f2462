/* Start-up of clscale as a user meets it: a fresh process that creates a
 * context (loading the ICD loader, the drivers and the kernels) and runs one
 * seed-A call. The benchmark runs the hidden command `clscale __startup`
 * with private cache folders: first empty (cold: the kernels are compiled),
 * then warm (loaded from the caches) several times, of which the median
 * counts. The child fills and touches its arrays before its clock starts,
 * and times a second call as "the run itself": start-up is create + first
 * call - second call. `clscale __startup drivers` times what any OpenCL
 * program pays before clscale does anything (the ICD loader and every
 * installed driver: clGetPlatformIDs, each platform's clGetDeviceIDs, a
 * context of its devices and a queue on each). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "bench.h"
#include "bench_report.h"
#include "cli.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* clscale __startup drivers: prints the drivers' start in seconds. */
static int drivers_child(void)
{
    double t0 = now_s();
    cl_platform_id p[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, p, &np) != CL_SUCCESS) np = 0;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_device_id d[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 16, d, &nd) != CL_SUCCESS || nd == 0) continue;
        if (nd > 16) nd = 16;
        /* a context of the platform's devices and a queue on each: what a
         * driver does to make a device usable (a GPU driver's context is
         * most of its start) */
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p[i], 0};
        cl_int e;
        cl_context c = clCreateContext(props, nd, d, NULL, NULL, &e);
        if (e != CL_SUCCESS) continue;
        for (cl_uint j = 0; j < nd; j++) {
            /* the OpenCL 1.2 call, as the library makes: ocl-icd spins
             * for ever in clCreateCommandQueueWithProperties on a 1.2
             * platform (Oclgrind) */
            cl_command_queue q = clCreateCommandQueue(c, d[j], 0, &e);
            if (e == CL_SUCCESS) clReleaseCommandQueue(q);
        }
        clReleaseContext(c);
    }
    printf("%.9f 0 0\n", now_s() - t0);
    return EXIT_OK;
}

/* clscale __startup SIZE [SEL]: prints "create first steady" in seconds. */
int cmd_startup_child(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "drivers") == 0) return drivers_child();
    bench_workload w;
    double size = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(size > 0) || bench_workloads(size, &w, 1) != 1) return EXIT_FAIL; /* seed-a comes first */
    size_t n = bench_elements(&w);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) return EXIT_FAIL;
    bench_fill(&w, x, NULL, 1);
    memset(y, 0, n * sizeof *y);
    cls_config cfg = {0};
    cfg.devices = argc > 2 ? argv[2] : NULL;
    double t0 = now_s();
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    double t1 = now_s();
    cls_array in = {.data = x, .dtype = w.dtype, .batch = w.batch, .rows = w.rows, .cols = w.cols}, out = {.data = y, .dtype = w.dtype, .batch = w.batch, .rows = w.rows, .cols = w.cols};
    cls_pipeline p = bench_pipeline(&w, NULL);
    if (st == CLS_OK) st = cls_fit_transform(ctx, &p, &in, &out, NULL);
    double t2 = now_s();
    if (st == CLS_OK) st = cls_fit_transform(ctx, &p, &in, &out, NULL);
    double t3 = now_s();
    if (st == CLS_OK) printf("%.9f %.9f %.9f\n", t1 - t0, t2 - t1, t3 - t2);
    else printf("failed %s\n", cls_status_str(st));
    cls_context_destroy(ctx);
    free(x);
    free(y);
    return st == CLS_OK ? EXIT_OK : EXIT_FAIL;
}

/* Runs the child with both cache folders at `dir` (size 0: the drivers'
 * start); fills *out. */
static int run_child(const char *dir, double size, const char *devices, bench_startup_run *out)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        char kc[4200], pc[4200];
        snprintf(kc, sizeof kc, "%s/clscale", dir);
        snprintf(pc, sizeof pc, "%s/pocl", dir);
        setenv("CLSCALE_CACHE_DIR", kc, 1);
        setenv("POCL_CACHE_DIR", pc, 1);
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        char sz[32];
        if (size > 0) snprintf(sz, sizeof sz, "%.17g", size);
        else snprintf(sz, sizeof sz, "drivers");
        char *args[] = {"clscale", "__startup", sz, (char *)devices, NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(fds[1]);
    char buf[256] = "";
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof buf && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) != 0) {
        if (r < 0) {
            if (errno == EINTR) continue;
            break;
        }
        got += (size_t)r;
    }
    buf[got] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return sscanf(buf, "%lf %lf %lf", &out->create, &out->first, &out->steady) == 3 ? 0 : -1;
}

static double beyond(const bench_startup_run *r) { return r->create + r->first - r->steady; }

static int by_beyond(const void *a, const void *b)
{
    double x = beyond(a), y = beyond(b);
    return (x > y) - (x < y);
}

static int by_create(const void *a, const void *b)
{
    double x = ((const bench_startup_run *)a)->create, y = ((const bench_startup_run *)b)->create;
    return (x > y) - (x < y);
}

int bench_startup(double size, const char *devices, bench_startup_result *out)
{
    memset(out, 0, sizeof *out);
    char dir[] = "/tmp/clscale-startup-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    bench_startup_run warm[BENCH_WARM_STARTS], drv[BENCH_WARM_STARTS];
    int rc = run_child(dir, size, devices, &out->cold), nd = 0;
    /* warm and drivers' runs alternate, so that a drift falls on both */
    for (int i = 0; i < BENCH_WARM_STARTS && rc == 0; i++) {
        rc = run_child(dir, size, devices, &warm[out->nwarm]);
        if (rc == 0) out->nwarm++;
        if (run_child(dir, 0, devices, &drv[nd]) == 0) nd++;
    }
    if (out->nwarm > 0) {
        qsort(warm, (size_t)out->nwarm, sizeof *warm, by_beyond);
        out->warm = warm[(out->nwarm - 1) / 2];
        out->warm_min = beyond(&warm[0]);
        out->warm_max = beyond(&warm[out->nwarm - 1]);
    }
    if (nd > 0) {
        qsort(drv, (size_t)nd, sizeof *drv, by_create);
        out->drivers = drv[(nd - 1) / 2].create;
        out->drivers_min = drv[0].create;
        out->drivers_max = drv[nd - 1].create;
        out->ndrivers = nd;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) rc = rc ? rc : 0; /* a leftover temp folder is not a failure */
    out->ok = rc == 0;
    return rc;
}
