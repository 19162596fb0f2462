/* The host copy pool (see pool.h). Batches wait in a list; idle threads take
 * items from the oldest batch that has some left. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"

typedef struct batch {
    void (*fn)(void *, size_t);
    void *arg;
    size_t n, next, done;
    struct batch *link;
} batch;

struct cls_pool {
    pthread_mutex_t lock;
    pthread_cond_t work, finished;
    batch *head;
    pthread_t *threads;
    unsigned size, started;
    int quit;
};

cls_pool *cls_pool_create(unsigned nthreads)
{
    cls_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (nthreads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (unsigned)n : 1;
    }
    p->size = nthreads;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->finished, NULL);
    return p;
}

unsigned cls_pool_size(const cls_pool *p) { return p ? p->size : 1; }

/* Takes one item of some batch; returns 0 when none is left. Lock held. */
static int take(cls_pool *p, batch **b, size_t *i)
{
    for (batch *x = p->head; x; x = x->link) {
        if (x->next < x->n) {
            *b = x;
            *i = x->next++;
            return 1;
        }
    }
    return 0;
}

static void finish_item(cls_pool *p, batch *b)
{
    if (++b->done == b->n) pthread_cond_broadcast(&p->finished);
}

static void *worker(void *arg)
{
    cls_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        batch *b;
        size_t i;
        while (!p->quit && !take(p, &b, &i)) pthread_cond_wait(&p->work, &p->lock);
        if (p->quit) break;
        pthread_mutex_unlock(&p->lock);
        b->fn(b->arg, i);
        pthread_mutex_lock(&p->lock);
        finish_item(p, b);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Starts the threads once; the caller counts as one of `size`. */
static void start(cls_pool *p)
{
    if (p->threads || p->size <= 1) return;
    p->threads = calloc(p->size - 1, sizeof *p->threads);
    if (!p->threads) return;
    for (unsigned t = 0; t + 1 < p->size; t++) {
        if (pthread_create(&p->threads[t], NULL, worker, p) != 0) break;
        p->started++;
    }
}

void cls_pool_run(cls_pool *p, size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    if (n == 0) return;
    if (!p || n == 1) {
        for (size_t i = 0; i < n; i++) fn(arg, i);
        return;
    }
    batch b = {.fn = fn, .arg = arg, .n = n};
    pthread_mutex_lock(&p->lock);
    start(p);
    batch **tail = &p->head;
    while (*tail) tail = &(*tail)->link;
    *tail = &b;
    pthread_cond_broadcast(&p->work);
    while (b.next < b.n) {
        size_t i = b.next++;
        pthread_mutex_unlock(&p->lock);
        fn(arg, i);
        pthread_mutex_lock(&p->lock);
        finish_item(p, &b);
    }
    while (b.done < b.n) pthread_cond_wait(&p->finished, &p->lock);
    for (batch **x = &p->head; *x; x = &(*x)->link)
        if (*x == &b) {
            *x = b.link;
            break;
        }
    pthread_mutex_unlock(&p->lock);
}

void cls_pool_destroy(cls_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned t = 0; t < p->started; t++) pthread_join(p->threads[t], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->finished);
    free(p);
}
