/* Host allocation failure (issue 26 part 3): every allocation the library
 * makes during cls_context_create() and cls_fit_transform() is made to fail
 * in turn (the 1st, then the 2nd, ... until a run makes no more); each run
 * either succeeds with the right result (a failure the library survives) or
 * returns CLS_E_NOMEM, and after cls_context_destroy() the library holds no
 * allocation it did not hold before: nothing leaked.
 *
 * How: this executable defines malloc and its kin, over glibc's
 * __libc_malloc; an allocation counts as the library's when its caller's
 * address lies in this executable's code (the library is linked in
 * statically; the OpenCL driver and libc are shared objects, and are never
 * made to fail). Not under AddressSanitizer, whose allocator this would
 * replace: the test skips there. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#if defined(__SANITIZE_ADDRESS__)
#define NOMEM_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOMEM_SKIP 1
#endif
#endif

#ifndef NOMEM_SKIP

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern char __executable_start[], etext[];

/* The live allocations the library made: an open-addressing set. */
enum { SET = 1 << 16 };
static void *live[SET];
static size_t nlive;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long countdown;  /* fail the allocation that brings it to 0; <= 0: off */
static int armed, injected;

static size_t slot_of(void *p) { return ((uintptr_t)p >> 4) * 2654435761u % SET; }

static void remember(void *p)
{
    size_t i = slot_of(p);
    while (live[i] && live[i] != (void *)1) i = (i + 1) % SET;
    live[i] = p;
    nlive++;
}

static void forget(void *p)
{
    for (size_t i = slot_of(p), n = 0; live[i] && n < SET; i = (i + 1) % SET, n++)
        if (live[i] == p) {
            live[i] = (void *)1; /* a tombstone */
            nlive--;
            return;
        }
}

static int ours(const void *caller)
{
    return (const char *)caller >= __executable_start && (const char *)caller < etext;
}

/* Whether this allocation (by `caller`) fails. */
static int fails(const void *caller)
{
    if (!ours(caller)) return 0;
    pthread_mutex_lock(&lock);
    int f = armed && countdown > 0 && --countdown == 0;
    if (f) injected = 1;
    pthread_mutex_unlock(&lock);
    return f;
}

static void *track(void *p, const void *caller)
{
    if (p && ours(caller)) {
        pthread_mutex_lock(&lock);
        remember(p);
        pthread_mutex_unlock(&lock);
    }
    return p;
}

void *malloc(size_t n)
{
    const void *c = __builtin_return_address(0);
    return fails(c) ? NULL : track(__libc_malloc(n), c);
}

void *calloc(size_t a, size_t b)
{
    const void *c = __builtin_return_address(0);
    return fails(c) ? NULL : track(__libc_calloc(a, b), c);
}

void *realloc(void *p, size_t n)
{
    const void *c = __builtin_return_address(0);
    if (fails(c)) return NULL;
    void *q = __libc_realloc(p, n);
    if (q || n == 0) {
        pthread_mutex_lock(&lock);
        if (p) forget(p);
        pthread_mutex_unlock(&lock);
    }
    return track(q, c);
}

void free(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&lock);
    forget(p);
    pthread_mutex_unlock(&lock);
    __libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    const void *c = __builtin_return_address(0);
    if (fails(c)) return 12; /* ENOMEM */
    void *p = __libc_memalign(align, n);
    if (!p) return 12;
    *out = track(p, c);
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    const void *c = __builtin_return_address(0);
    return fails(c) ? NULL : track(__libc_memalign(align, n), c);
}

char *strdup(const char *s)
{
    const void *c = __builtin_return_address(0);
    size_t n = strlen(s) + 1;
    char *d = fails(c) ? NULL : track(__libc_malloc(n), c);
    if (d) memcpy(d, s, n);
    return d;
}

char *strndup(const char *s, size_t max)
{
    const void *c = __builtin_return_address(0);
    size_t n = strnlen(s, max);
    char *d = fails(c) ? NULL : track(__libc_malloc(n + 1), c);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static size_t live_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = nlive;
    pthread_mutex_unlock(&lock);
    return n;
}

enum { ROWS = 64, COLS = 9 };

/* One create + fit_transform + destroy with the k-th allocation failing
 * (k = 0: none). Returns the status; *hit: an allocation was made to fail. */
static cls_status one_run(long k, const float *x, int *hit)
{
    static float y[ROWS * COLS];
    pthread_mutex_lock(&lock);
    countdown = k;
    injected = 0;
    armed = 1;
    pthread_mutex_unlock(&lock);
    cls_config cfg = {0};
    cfg.cache_dir = getenv("CLSCALE_CACHE_DIR");
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st == CLS_OK) {
        cls_pipeline p = {.scaler = CLS_MINMAX, .lo = 0, .hi = 1};
        cls_array in = {.data = (void *)x, .dtype = CLS_F32, .batch = 1, .rows = ROWS, .cols = COLS}, out = {.data = y, .dtype = CLS_F32, .batch = 1, .rows = ROWS, .cols = COLS};
        memset(y, 0, sizeof y);
        st = cls_fit_transform(ctx, &p, &in, &out, NULL);
        if (st == CLS_OK) /* survived: the result must still be right */
            for (size_t c = 0; c < COLS; c++) {
                float lo = x[c], hi = x[c];
                for (size_t r = 0; r < ROWS; r++) {
                    if (x[r * COLS + c] < lo) lo = x[r * COLS + c];
                    if (x[r * COLS + c] > hi) hi = x[r * COLS + c];
                }
                for (size_t r = 0; r < ROWS; r++)
                    assert_close(y[r * COLS + c], ((double)x[r * COLS + c] - lo) / ((double)hi - lo), 1e-5);
            }
    }
    cls_context_destroy(ctx);
    pthread_mutex_lock(&lock);
    armed = 0;
    *hit = injected;
    pthread_mutex_unlock(&lock);
    return st;
}

static void every_failed_allocation_is_nomem_and_leaks_nothing(void **state)
{
    (void)state;
    float x[ROWS * COLS];
    rng r;
    rng_seed(&r, 4711);
    for (size_t i = 0; i < ROWS * COLS; i++) x[i] = (float)rng_range(&r, -3.0, 7.0 + (double)(i % COLS));
    int hit;
    /* a first run warms what the library keeps for the process (none
     * expected) and the kernel caches */
    assert_int_equal(one_run(0, x, &hit), CLS_OK);
    size_t base = live_count();
    long k = 1, nomem = 0, survived = 0;
    for (;; k++) {
        cls_status st = one_run(k, x, &hit);
        if (!hit) {
            assert_int_equal(st, CLS_OK);
            break;
        }
        if (st == CLS_E_NOMEM) nomem++;
        else if (st == CLS_OK) survived++;
        else fail_msg("allocation %ld failed: %s, expected CLS_E_NOMEM", k, cls_status_str(st));
        size_t now = live_count();
        if (now != base) fail_msg("allocation %ld failed: %zu allocations leaked", k, now - base);
        if (k > 5000) fail_msg("more than 5000 allocations in one small call");
    }
    print_message("# %ld allocations of the library tried: %ld gave CLS_E_NOMEM, %ld were survived\n", k - 1,
                  nomem, survived);
    assert_true(k > 10); /* the hook did see the library's allocations */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_failed_allocation_is_nomem_and_leaks_nothing),
    };
    return TEST_RUN("nomem", tests, NULL, NULL);
}

#else
int main(void)
{
    puts("1..0 # SKIP under AddressSanitizer (this test replaces malloc)");
    return 0;
}
#endif
