/* The most frequent value of columns whose values do not fit in memory at
 * once (a file streamed in chunks), exactly, in a fixed budget
 * (mode_count.c). Each entry (group * C + column) counts its distinct
 * values in a hash table of its own slice of the budget, over a range of
 * keys [lo, hi) that starts open (every value). When an entry's table
 * fills, hi drops to the median key of the values it holds and those at or
 * above it are forgotten: every value inside the final range was counted
 * from the start of the pass, so its count is exact. After the pass each
 * entry keeps its most frequent value so far (the smallest of ties: ranges
 * go up the keys), and an entry whose range was cut takes another pass
 * from where it ended, with the table slices of the entries still going.
 * Values as clean_host.h's cls_most_frequent_cols takes them: not finite,
 * the sentinel and values outside per-entry bounds skipped; -0.0 counts as
 * +0.0. */
#ifndef CLS_MODE_COUNT_H
#define CLS_MODE_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "clscale.h"

typedef struct cls_mode_count cls_mode_count;

/* The least budget that counts: one entry's smallest table. */
#define CLS_MODE_COUNT_MIN_BYTES ((size_t)4096)

/* Counting for entries [0, ne) of data of dtype t with C columns (ne a
 * multiple of C: every column of ne / C groups), `rows` values per entry,
 * within `budget` bytes (>= CLS_MODE_COUNT_MIN_BYTES; less where the
 * values need less). lo, hi: per-entry bounds (NULL: none); read during
 * the passes. `threads`: the column blocks counted at once (a pool's
 * size). NULL: no memory. */
cls_mode_count *cls_mode_count_new(cls_dtype t, size_t C, size_t ne, uint64_t rows, size_t budget, int has_sent,
                                   double sent, const double *lo, const double *hi, unsigned threads);
/* Begins a pass (the entries still going, as many as the budget's tables
 * hold at once). Returns 0 when every entry is done. */
int cls_mode_count_begin(cls_mode_count *m);
/* `rows` rows of group g at x (rows x C values), in a pass; every row of
 * every group once a pass, in any order. Blocks of columns spread over
 * pool (may be NULL). */
struct cls_pool;
void cls_mode_count_rows(cls_mode_count *m, struct cls_pool *pool, uint64_t g, const char *x, uint64_t rows);
/* Ends a pass. */
void cls_mode_count_end(cls_mode_count *m);
/* Once cls_mode_count_begin returned 0: fill[e] the most frequent value of
 * entry e, NaN where no value takes part. */
void cls_mode_count_result(const cls_mode_count *m, double *fill);
void cls_mode_count_free(cls_mode_count *m);

#endif
