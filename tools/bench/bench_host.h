/* What the benchmark's host-side files share (bench_threads.c defines the
 * team; the others use it). Private to tools/bench/. */
#ifndef BENCH_HOST_H
#define BENCH_HOST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "bench.h"

/* W: the vectorised chunk. BLOCK_MAX: most columns per cache block (the
 * per-thread statistics live on the stack). */
enum { W = 8, BLOCK_MAX = 1024, MAX_THREADS = 1024 };

/* The dtype switches below are resolved at compile time: every caller passes
 * a constant, and these are always inlined. */
#define BH_INLINE static inline __attribute__((always_inline))

BH_INLINE double ld(const void *p, cls_dtype t, size_t i)
{
    return t == CLS_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

BH_INLINE void st(void *p, cls_dtype t, size_t i, double v)
{
    if (t == CLS_F64) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
}

static inline size_t dtype_size(cls_dtype t) { return t == CLS_F64 ? sizeof(double) : sizeof(float); }

/* A team: the caller (id 0) and up to want - 1 threads made for one call.
 * Members wait at a gate until the team's final size is known, so a failed
 * pthread_create only makes the team smaller. */
typedef struct team team;
typedef void (*team_fn)(team *t, unsigned id, void *arg);

struct team {
    unsigned n;                 /* members that work, the caller included */
    pthread_barrier_t barrier;  /* initialised when n > 1 */
    atomic_int go, sync_failed;
    team_fn fn;
    void *arg;
};

/* All members meet here; only the STREAM measurement needs it. */
void team_sync(team *t);
/* Runs fn on a team of at most `want` members (0: one per CPU) and returns
 * its size; with `sync_ok` (may be NULL) says whether every team_sync()
 * worked. */
unsigned team_run(unsigned want, team_fn fn, void *arg, int *sync_ok);
/* [lo, hi) of n items for member id of a team of k. */
void share(size_t n, unsigned id, unsigned k, size_t *lo, size_t *hi);
/* threads, or one per CPU when 0, at most MAX_THREADS. */
unsigned resolve_threads(unsigned threads);

#endif /* BENCH_HOST_H */
