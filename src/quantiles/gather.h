/* The end of an exact selection on the host (gather.c): once the counting
 * passes of select.c have narrowed every wanted rank to a bucket (the
 * values whose key starts with a known prefix) and the buckets together
 * hold few values, one sweep over the data copies those values out and a
 * selection among them gives each wanted key exactly: one read of the data
 * in place of the remaining counting passes (up to 6 of 8 for float64). */
#ifndef CLS_GATHER_H
#define CLS_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include "clscale.h"

typedef struct cls_gather cls_gather;

/* What takes part, as cl/quantile.cl's q_take decides it: sentinel
 * (has_sent), bounds flo/fhi and centre cen (absdev) are per entry, in the
 * data's dtype (float or double arrays), each NULL when not used. */
typedef struct cls_gather_filter {
    int         has_sent;
    double      sent;
    const void *cen, *flo, *fhi;
} cls_gather_filter;

/* A gather of entries [e0, e0 + ne) (entry = group * C + column) of data of
 * dtype t with C columns; for each entry nk wanted ranks whose keys agree
 * with prefix[e * nk + t] above bit `shift` and fall in buckets of
 * bcount[e * nk + t] values (0 for an empty column). NULL: no memory. */
cls_gather *cls_gather_new(cls_dtype t, size_t C, size_t e0, size_t ne, size_t nk, const uint64_t *prefix,
                           const uint64_t *bcount, unsigned shift, const cls_gather_filter *f);
/* The values (bucket entries) the gather will hold. */
uint64_t cls_gather_size(const cls_gather *g);
/* One sweep over `rows` rows of group `grp` at x (rows x C values); its
 * entries' values are copied out, column blocks spread over `pool` (may be
 * NULL). Call for every row of every group of the gather's entries once. */
struct cls_pool;
void cls_gather_rows(cls_gather *g, struct cls_pool *pool, uint64_t grp, const char *x, uint64_t rows);
/* key[e * nk + t] = the key of rank resid[e * nk + t] within its bucket,
 * for the entries with values; 0 when every bucket held what its count
 * said, else -1 (the data changed between the passes). */
int cls_gather_pick(cls_gather *g, const uint64_t *resid, uint64_t *key);
void cls_gather_free(cls_gather *g);

/* Whether the value at p of entry e takes part under f (for data of dtype
 * t), as q_take decides it, and its key (stats/quantile.h's cls_key_of). */
int cls_gather_take(const cls_gather_filter *f, cls_dtype t, size_t e, const char *p, uint64_t *key);
/* a[lo..hi) reordered so that a[r[i]] holds its element of rank r[i], for
 * the nr ranks r (ascending, within [lo, hi)). */
void cls_gather_multiselect(uint64_t *a, uint64_t lo, uint64_t hi, const uint64_t *r, size_t nr);
/* The element of rank k (< n) of a[0..n), a reordered. */
uint64_t cls_gather_select(uint64_t *a, uint64_t n, uint64_t k);

#endif
