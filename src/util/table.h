/* Host tables of per-column entries (statistics, cleaning work arrays):
 * one entry per column, so a table of a wide array's million columns is
 * tens of MiB, written once per call. */
#ifndef CLS_TABLE_H
#define CLS_TABLE_H

#include <stddef.h>

/* malloc(bytes), except that a table of several MiB is placed on whole
 * transparent huge pages where the kernel offers them (madvise mode,
 * Debian's default): its first writes then take one fault per 2 MiB, not
 * per 4 KiB page (a million columns' statistics, 80 MB, cost 40 ms of
 * faults, four times the call's work). Free with free(). NULL: no memory. */
void *cls_table_alloc(size_t bytes);

#endif
