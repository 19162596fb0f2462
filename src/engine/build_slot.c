/* Build slots: keeping PoCL's CPU devices from running one program's
 * kernel twice at once.
 *
 * PoCL keeps the work-group functions it has loaded in one cache for the
 * whole process, keyed by the program's hash and the local size. An entry
 * is found for a launch by those and the grid's width, but released by
 * the first entry with the same hash and local size: when two launches of
 * the same program's kernel run at once at different grid widths, each can
 * release the other's entry, and PoCL stops the process
 * (`pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0'`).
 *
 * - PoCL 3's `basic` devices run a kernel on the thread that flushes its
 *   queue: two basic devices of one context do it (their programs are
 *   alike, so their hashes are), and so do two contexts on one basic
 *   device used from two threads. PoCL 3.1's pthread devices were not seen
 *   to do it (tests/test_concurrency.c).
 * - PoCL 4 and later (devices named cpu-..., cpu-minimal-...) look grid
 *   widths up the same way in their threaded driver too, which runs the
 *   commands of several queues at once: one device's three queues stopped
 *   a process on PoCL 5.0 (a 16-core host beside an H100, 2026-11-24).
 *
 * The hash covers the build options: every live device of such a kind
 * holds a slot, the smallest free one, and on PoCL 4 and later each queue
 * launches programs of its own (per_queue). Program copy c of slot s
 * builds with -DCLS_BUILD_SLOT=s * CLS_MAX_QUEUES + c when that is above 0
 * (program.c), so that no two programs that may run at once are alike. A
 * slot is given back when its context goes; one context at a time always
 * builds slot 0's programs, so their binary cache entries stay warm.
 * Owns the process-wide table of slots. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct held { uint64_t kind; unsigned slot; } held;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static held *table;
static size_t nheld, cap;

static int pocl(const cls_dev *dev)
{
    return strstr(dev->info.platform, "Portable Computing Language") != NULL;
}

/* PoCL 3's basic devices, and every CPU device of PoCL 4 and later (all
 * named cpu-...); PoCL 3's pthread devices are named pthread-... */
static int needs_slot(const cls_dev *dev)
{
    return pocl(dev) && (strncmp(dev->info.name, "basic", 5) == 0 || strncmp(dev->info.name, "cpu", 3) == 0);
}

static int needs_per_queue(const cls_dev *dev) { return pocl(dev) && strncmp(dev->info.name, "cpu", 3) == 0; }

unsigned cls_build_copy(const cls_dev *dev, unsigned q) { return dev->per_queue ? q : 0; }

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
    dev->per_queue = needs_per_queue(dev);
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
