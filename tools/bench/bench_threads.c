/* The benchmark's host threads (bench_host.h): a team made per call, the
 * caller included; a thread that cannot be created only makes the team
 * smaller. Calls only libc and pthreads. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_host.h"

/* ---- threads ------------------------------------------------------------ */

typedef struct member { team *t; unsigned id; pthread_t th; } member;

static void *member_main(void *p)
{
    member *m = p;
    while (!atomic_load_explicit(&m->t->go, memory_order_acquire)) sched_yield();
    if (m->id < m->t->n) m->t->fn(m->t, m->id, m->t->arg);
    return NULL;
}

/* All members meet here; only the STREAM measurement needs it. */
void team_sync(team *t)
{
    if (t->n < 2) return;
    int e = pthread_barrier_wait(&t->barrier);
    if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD) atomic_store(&t->sync_failed, 1);
}

unsigned bench_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

unsigned resolve_threads(unsigned threads)
{
    if (threads == 0) return bench_cpus();
    return threads > MAX_THREADS ? MAX_THREADS : threads;
}

/* Runs fn on a team of at most `want` members and returns its size; with
 * `sync_ok` (may be NULL) says whether every team_sync() worked. */
unsigned team_run(unsigned want, team_fn fn, void *arg, int *sync_ok)
{
    team t;
    memset(&t, 0, sizeof t);
    t.fn = fn;
    t.arg = arg;
    atomic_init(&t.go, 0);
    atomic_init(&t.sync_failed, 0);
    member *m = want > 1 ? calloc(want - 1, sizeof *m) : NULL;
    unsigned made = 0;
    if (m)
        for (; made < want - 1; made++) {
            m[made].t = &t;
            m[made].id = made + 1;
            if (pthread_create(&m[made].th, NULL, member_main, &m[made]) != 0) break;
        }
    t.n = made + 1;
    if (t.n > 1 && pthread_barrier_init(&t.barrier, NULL, t.n) != 0) t.n = 1;  /* the made ones leave */
    atomic_store_explicit(&t.go, 1, memory_order_release);
    fn(&t, 0, arg);
    int joined = 1;
    for (unsigned i = 0; i < made; i++)
        if (pthread_join(m[i].th, NULL) != 0) joined = 0;
    /* A thread that could not be joined may still read t and m: keep them. */
    if (!joined) {
        if (sync_ok) *sync_ok = 0;
        return t.n;
    }
    if (t.n > 1 && pthread_barrier_destroy(&t.barrier) != 0) joined = 0;
    free(m);
    if (sync_ok) *sync_ok = !atomic_load(&t.sync_failed) && joined;
    return t.n;
}

/* [lo, hi) of n items for member id of a team of k. */
void share(size_t n, unsigned id, unsigned k, size_t *lo, size_t *hi)
{
    size_t q = n / k, r = n % k;
    *lo = id * q + (id < r ? id : r);
    *hi = *lo + q + (id < r);
}
