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
 * faults, four times the call's work), or is one that cls_table_free kept
 * (no fault at all). Free with cls_table_free(p, bytes) (free() is right
 * too, only slower for the next call). NULL: no memory. */
void *cls_table_alloc(size_t bytes);

/* Frees a table of cls_table_alloc(bytes). A table of several MiB is kept
 * for the next call's tables instead (at most CLS_TABLE_KEEP_BYTES in all,
 * the oldest freed first beyond): even on huge pages the kernel zeroes
 * every fresh page, which was a third of a fit_transform of 1 x 10^6
 * float64 with its statistics, and a call of the cleaning stage takes 14
 * such tables. p NULL: nothing. */
void cls_table_free(void *p, size_t bytes);

/* Tables are kept only while a context lives (cls_context_create holds,
 * cls_context_destroy trims): statistics freed after the last context is
 * gone go straight back to the system, so nothing stays reachable. */
void cls_table_hold(void);
/* The tables kept, freed, and one hold let go (cls_context_destroy). */
void cls_table_trim(void);

/* The bytes of tables kept and how many (tests). */
size_t cls_table_kept(size_t *count);

#define CLS_TABLE_KEEP_BYTES ((size_t)256 << 20)

#endif
