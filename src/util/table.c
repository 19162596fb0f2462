/* See table.h. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/table.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *cls_table_alloc(size_t bytes)
{
    if (bytes < 2 * HUGE_PAGE) return malloc(bytes ? bytes : 1);
    if (bytes > SIZE_MAX - HUGE_PAGE) return NULL;
    size_t n = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, n);
    if (!p) return NULL;
#ifdef MADV_HUGEPAGE
    /* advice only: a kernel without it leaves the pages small */
    (void)madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}
