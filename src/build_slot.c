/* Build slots: keeping PoCL 3.x's `basic` CPU devices from sharing kernels.
 *
 * A basic device runs a kernel on the thread that flushes its queue, and
 * PoCL keeps the work-group functions it has loaded in one cache for the
 * whole process, keyed by the program's hash and the local size. An entry
 * is found for a launch by those and the grid's width, but released by
 * the first entry with the same hash and local size: when two threads run
 * the same program's kernel at once at different grid widths, each can
 * release the other's entry, and PoCL stops the process
 * (`pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0'`). Two
 * basic devices of one context do exactly that (their programs are alike,
 * so their hashes are), and so do two contexts on one basic device used
 * from two threads. PoCL 3.1's pthread devices were not seen to do it
 * (tests/test_concurrency.c). Newer PoCL names its basic driver
 * cpu-minimal; it was not available here to check, and is not covered.
 *
 * The hash covers the build options: every live basic device of a kind
 * holds a slot, the smallest free one, and a slot above 0 adds
 * -DCLS_BUILD_SLOT=n to the options (program.c), so that no two programs
 * that may run at once are alike. A slot is given back when its context
 * goes; one context at a time always builds slot 0's program, so its
 * binary cache entry stays warm. Owns the process-wide table of slots. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct held { uint64_t kind; unsigned slot; } held;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static held *table;
static size_t nheld, cap;

static int needs_slot(const cls_dev *dev)
{
    return strstr(dev->info.platform, "Portable Computing Language") != NULL
           && strncmp(dev->info.name, "basic", 5) == 0;
}

static uint64_t kind_of(const cls_dev *dev)
{
    uint64_t h = CLS_FNV_SEED;
    const char *parts[3] = {dev->info.platform, dev->info.name, dev->info.driver};
    for (int i = 0; i < 3; i++) h = cls_fnv1a64(h, parts[i], strlen(parts[i]) + 1);
    return h;
}

static int taken(uint64_t kind, unsigned slot)
{
    for (size_t i = 0; i < nheld; i++)
        if (table[i].kind == kind && table[i].slot == slot) return 1;
    return 0;
}

cls_status cls_build_slot_take(cls_context *ctx, cls_dev *dev)
{
    dev->build_slot = -1;
    if (!needs_slot(dev)) return CLS_OK;
    uint64_t kind = kind_of(dev);
    pthread_mutex_lock(&lock);
    if (nheld == cap) {
        size_t ncap = cap ? 2 * cap : 8;
        held *t = realloc(table, ncap * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&lock);
            return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
        }
        table = t;
        cap = ncap;
    }
    unsigned slot = 0;
    while (taken(kind, slot)) slot++;
    table[nheld].kind = kind;
    table[nheld].slot = slot;
    nheld++;
    pthread_mutex_unlock(&lock);
    dev->build_slot = (int)slot;
    return CLS_OK;
}

void cls_build_slot_give(cls_dev *dev)
{
    if (dev->build_slot < 0) return;
    uint64_t kind = kind_of(dev);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nheld; i++)
        if (table[i].kind == kind && table[i].slot == (unsigned)dev->build_slot) {
            table[i] = table[--nheld];
            break;
        }
    if (nheld == 0) { /* nothing left behind at exit */
        free(table);
        table = NULL;
        cap = 0;
    }
    pthread_mutex_unlock(&lock);
    dev->build_slot = -1;
}
