/* A pool of host threads for staging copies (one thread cannot keep up with
 * a PCIe 5 bus). Several callers may run batches at once; a caller always
 * works on its own batch too, so a batch finishes even when every pool
 * thread is busy elsewhere. Threads start on first use. */
#ifndef CLS_POOL_H
#define CLS_POOL_H

#include <stddef.h>

typedef struct cls_pool cls_pool;

/* nthreads 0: the online CPUs. NULL: no memory. */
cls_pool *cls_pool_create(unsigned nthreads);
void cls_pool_destroy(cls_pool *p);
unsigned cls_pool_size(const cls_pool *p);

/* Calls fn(arg, i) for every i in [0, n), spread over the pool's threads and
 * the caller; returns when all calls have returned. */
void cls_pool_run(cls_pool *p, size_t n, void (*fn)(void *arg, size_t i), void *arg);

#endif
