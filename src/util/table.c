/* See table.h. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/table.h"

#define HUGE_PAGE ((size_t)2 << 20)
#define KEEP_MAX 32

/* The tables kept, oldest first: whole huge pages each (their size
 * rounded as allocated). */
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept { void *p; size_t n; } kept[KEEP_MAX];
static size_t nkept, kept_bytes;
static long holders; /* live contexts: with none, a table freed is freed */

static int large(size_t bytes) { return bytes >= 2 * HUGE_PAGE && bytes <= SIZE_MAX - HUGE_PAGE; }
static size_t rounded(size_t bytes) { return (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE; }

static void drop(size_t i)
{
    kept_bytes -= kept[i].n;
    memmove(&kept[i], &kept[i + 1], (nkept - i - 1) * sizeof kept[0]);
    nkept--;
}

/* The smallest table kept that holds n bytes and is at most twice as
 * large (a large one is not tied up by a small table), taken out. */
static void *take(size_t n)
{
    pthread_mutex_lock(&keep_lock);
    size_t best = nkept;
    for (size_t i = 0; i < nkept; i++)
        if (kept[i].n >= n && kept[i].n / 2 <= n && (best == nkept || kept[i].n < kept[best].n)) best = i;
    void *p = NULL;
    if (best < nkept) {
        p = kept[best].p;
        drop(best);
    }
    pthread_mutex_unlock(&keep_lock);
    return p;
}

void *cls_table_alloc(size_t bytes)
{
    if (bytes < 2 * HUGE_PAGE) return malloc(bytes ? bytes : 1);
    if (!large(bytes)) return NULL;
    size_t n = rounded(bytes);
    void *p = take(n);
    if (p) return p;
    p = aligned_alloc(HUGE_PAGE, n);
    if (!p) return NULL;
#ifdef MADV_HUGEPAGE
    /* advice only: a kernel without it leaves the pages small */
    (void)madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

void cls_table_free(void *p, size_t bytes)
{
    if (!p) return;
    if (!large(bytes) || rounded(bytes) > CLS_TABLE_KEEP_BYTES) {
        free(p);
        return;
    }
    size_t n = rounded(bytes);
    void *out[KEEP_MAX + 1];
    size_t nout = 0;
    pthread_mutex_lock(&keep_lock);
    if (holders <= 0) {
        pthread_mutex_unlock(&keep_lock);
        free(p);
        return;
    }
    while (nkept && (nkept == KEEP_MAX || kept_bytes + n > CLS_TABLE_KEEP_BYTES)) {
        out[nout++] = kept[0].p;
        drop(0);
    }
    kept[nkept].p = p;
    kept[nkept].n = n;
    nkept++;
    kept_bytes += n;
    pthread_mutex_unlock(&keep_lock);
    for (size_t i = 0; i < nout; i++) free(out[i]); /* munmap: outside the lock */
}

void cls_table_hold(void)
{
    pthread_mutex_lock(&keep_lock);
    holders++;
    pthread_mutex_unlock(&keep_lock);
}

void cls_table_trim(void)
{
    void *out[KEEP_MAX];
    pthread_mutex_lock(&keep_lock);
    if (holders > 0) holders--;
    size_t nout = nkept;
    for (size_t i = 0; i < nkept; i++) out[i] = kept[i].p;
    nkept = 0;
    kept_bytes = 0;
    pthread_mutex_unlock(&keep_lock);
    for (size_t i = 0; i < nout; i++) free(out[i]);
}

size_t cls_table_kept(size_t *count)
{
    pthread_mutex_lock(&keep_lock);
    size_t b = kept_bytes;
    if (count) *count = nkept;
    pthread_mutex_unlock(&keep_lock);
    return b;
}
