/* A guess checked exactly (window.c): during the first counting pass over
 * data that comes in chunks (a streamed file), the first chunk of each
 * group gives, per column and wanted rank, a window of keys around the
 * chunk's own value of that rank's fraction (Floyd and Rivest's
 * sampling); every chunk's values below each window are counted and those
 * inside copied out. After the pass the counts say, exactly, whether each
 * wanted rank fell inside its window; if every one did, a selection among
 * the copied values gives its key, and the data need no further pass. A
 * window missed (rows in an order that the first chunk does not sample
 * fairly: a trend along the rows) or more values than `cap` inside: the
 * caller's counting passes carry on, having lost nothing. */
#ifndef CLS_WINDOW_H
#define CLS_WINDOW_H

#include "quantiles/gather.h"
#include "quantiles/select.h"

typedef struct cls_window cls_window;
struct cls_pool;

/* Windows for G groups of Rg rows x C columns of dtype t, nk ranks per
 * column given by rank(user, n, ranks); what takes part as gather.h's
 * filter decides (its arrays per entry); at most cap values copied out in
 * all (windows whose samples say they would copy more are given up at
 * once). NULL: no memory, or more entries than windows are kept for. */
cls_window *cls_window_new(cls_dtype t, uint64_t G, uint64_t Rg, size_t C, size_t nk, cls_rank_fn rank, void *user,
                           const cls_gather_filter *f, uint64_t cap);
/* `rows` rows of group grp at x (rows x C values), each row of each group
 * once, a group's rows in any order; its first call for a group sets that
 * group's windows. Column blocks spread over pool (may be NULL). */
void cls_window_rows(cls_window *w, struct cls_pool *pool, uint64_t grp, const char *x, uint64_t rows);
/* After every row was seen: count[e] the values taking part in entry e (as
 * the counting pass found them). 0 and key[e * nk + t] the key of every
 * wanted rank of every entry with values; -1 when any fell outside its
 * window (or the copies passed cap). */
int cls_window_pick(cls_window *w, const uint64_t *count, uint64_t *key);
void cls_window_free(cls_window *w);

#endif
