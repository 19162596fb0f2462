/* STREAM copy and triad on the host's threads (bench.h): the limit the
 * benchmark's rows are measured against. Calls only libc and the team. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "bench_host.h"

/* ---- STREAM ------------------------------------------------------------- */

typedef struct stream_job {
    double *a, *b, *c;
    size_t n;
    int triad, repeats;
    int touched;    /* the arrays' pages exist already: no first touch */
    double best;
} stream_job;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Plain loops, as STREAM has them, with ordinary stores like the references.
 * Compilers turn the copy loop into memcpy(), whose non-temporal stores
 * measure something else: that is turned off for it. */
#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(no_builtin)
#define PLAIN_LOOP __attribute__((noinline, no_builtin("memcpy")))
#endif
#elif defined(__GNUC__)
#define PLAIN_LOOP __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
#endif
#ifndef PLAIN_LOOP
#define PLAIN_LOOP __attribute__((noinline))
#endif

static PLAIN_LOOP void stream_copy_run(double *restrict c, const double *restrict a, size_t n)
{
    size_t i = 0;
    for (; i + W <= n; i += W) {
#pragma GCC unroll 8
        for (int k = 0; k < W; k++) c[i + k] = a[i + k];
    }
    for (; i < n; i++) c[i] = a[i];
}

static PLAIN_LOOP void stream_triad_run(double *restrict a, const double *restrict b,
                                        const double *restrict c, double s, size_t n)
{
    size_t i = 0;
    for (; i + W <= n; i += W) {
#pragma GCC unroll 8
        for (int k = 0; k < W; k++) a[i + k] = b[i + k] + s * c[i + k];
    }
    for (; i < n; i++) a[i] = b[i] + s * c[i];
}

static void stream_worker(team *t, unsigned id, void *arg)
{
    stream_job *j = arg;
    size_t lo, hi;
    share(j->n, id, t->n, &lo, &hi);
    /* First touch by the member that uses the chunk: its pages land on its node. */
    for (size_t i = lo; i < hi && !j->touched; i++) {
        j->a[i] = 1.0;
        j->b[i] = 2.0;
        j->c[i] = 0.0;
    }
    for (int rep = 0; rep < j->repeats; rep++) {
        double t0 = 0.0;
        team_sync(t);
        if (id == 0) t0 = now_s();
        if (j->triad) stream_triad_run(j->a + lo, j->b + lo, j->c + lo, 3.0, hi - lo);
        else stream_copy_run(j->c + lo, j->a + lo, hi - lo);
        team_sync(t);
        if (id == 0) {
            double dt = now_s() - t0;
            if (dt < j->best) j->best = dt;
        }
    }
}

static double stream(size_t bytes, unsigned threads, int repeats, int triad)
{
    size_t n = bytes / sizeof(double);
    if (n == 0) n = 1;
    stream_job j = {.n = n, .triad = triad, .repeats = repeats < 1 ? 1 : repeats, .best = INFINITY};
    j.a = malloc(n * sizeof(double));
    j.b = malloc(n * sizeof(double));
    j.c = malloc(n * sizeof(double));
    double gbs = 0.0;
    if (j.a && j.b && j.c) {
        int ok = 1;
        team_run(resolve_threads(threads), stream_worker, &j, &ok);
        double moved = (double)n * sizeof(double) * (triad ? 3.0 : 2.0);
        if (ok && j.best > 0.0 && isfinite(j.best)) gbs = moved / j.best / 1e9;
    }
    free(j.a);
    free(j.b);
    free(j.c);
    return gbs;   /* 0: no memory or no measurement */
}

double bench_stream_copy(size_t bytes, unsigned threads, int repeats)
{
    return stream(bytes, threads, repeats, 0);
}

double bench_stream_triad(size_t bytes, unsigned threads, int repeats)
{
    return stream(bytes, threads, repeats, 1);
}

double bench_stream_copy_pass(double *c, const double *a, size_t n, unsigned threads)
{
    stream_job j = {.a = (double *)a, .b = c, .c = c, .n = n, .repeats = 1, .touched = 1, .best = INFINITY};
    int ok = 1;
    team_run(resolve_threads(threads), stream_worker, &j, &ok);
    if (!ok || !(j.best > 0.0) || !isfinite(j.best)) return 0.0;
    return (double)n * sizeof(double) * 2.0 / j.best / 1e9;
}
