/* The host's end of an exact selection (gather.h): the values of the
 * buckets that the counting passes settled on, copied out in one sweep,
 * then one quickselect per wanted rank. Pure host code; what takes part is
 * decided as cl/quantile.cl's q_take decides it, in the data's dtype, so
 * the counts of the passes and the values copied here agree exactly.
 * Calls: stats/quantile.c (keys), util/pool.c. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "quantiles/gather.h"
#include "stats/quantile.h"
#include "util/pool.h"

#define BLOCK 64  /* columns per work item of a sweep */

struct cls_gather {
    cls_dtype t;
    size_t    C, e0, ne, nk, es;
    unsigned  shift;
    cls_gather_filter f;
    uint8_t  *nslot;    /* ne: distinct buckets of the entry */
    uint8_t  *slot_of;  /* ne * nk: the bucket of each wanted rank */
    uint64_t *pre;      /* ne * nk: slot u's key >> shift */
    uint64_t *cnt;      /* ne * nk: its values, as the passes counted them */
    uint64_t *off;      /* ne * nk: where they start in keys */
    uint64_t *cur;      /* ne * nk: copied so far */
    uint64_t *keys;
    uint64_t  total;
    atomic_int overflow;
};

void cls_gather_free(cls_gather *g)
{
    if (!g) return;
    free(g->nslot);
    free(g->slot_of);
    free(g->pre);
    free(g->cnt);
    free(g->off);
    free(g->cur);
    free(g->keys);
    free(g);
}

cls_gather *cls_gather_new(cls_dtype t, size_t C, size_t e0, size_t ne, size_t nk, const uint64_t *prefix,
                           const uint64_t *bcount, unsigned shift, const cls_gather_filter *f)
{
    cls_gather *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->t = t;
    g->C = C;
    g->e0 = e0;
    g->ne = ne;
    g->nk = nk;
    g->es = t == CLS_F64 ? 8 : 4;
    g->shift = shift;
    g->f = *f;
    atomic_init(&g->overflow, 0);
    size_t n = (ne ? ne : 1) * nk;
    g->nslot = calloc(ne ? ne : 1, 1);
    g->slot_of = calloc(n, 1);
    g->pre = calloc(n, sizeof *g->pre);
    g->cnt = calloc(n, sizeof *g->cnt);
    g->off = calloc(n, sizeof *g->off);
    g->cur = calloc(n, sizeof *g->cur);
    if (!g->nslot || !g->slot_of || !g->pre || !g->cnt || !g->off || !g->cur) {
        cls_gather_free(g);
        return NULL;
    }
    for (size_t e = 0; e < ne; e++) {
        const uint64_t *p = prefix + e * nk, *b = bcount + e * nk;
        if (!b[0]) continue; /* an empty column: nothing wanted */
        for (size_t k = 0; k < nk; k++) {
            uint64_t want = p[k] >> shift;
            size_t u = 0;
            while (u < g->nslot[e] && g->pre[e * nk + u] != want) u++;
            if (u == g->nslot[e]) {
                g->pre[e * nk + u] = want;
                g->cnt[e * nk + u] = b[k];
                g->off[e * nk + u] = g->total;
                g->total += b[k];
                g->nslot[e]++;
            }
            g->slot_of[e * nk + k] = (uint8_t)u;
        }
    }
    return g;
}

uint64_t cls_gather_size(const cls_gather *g) { return g->total; }

int cls_gather_take(const cls_gather_filter *f, cls_dtype t, size_t eg, const char *p, uint64_t *key)
{
    if (t == CLS_F64) {
        double x;
        memcpy(&x, p, 8);
        if (!isfinite(x) || (f->has_sent && x == f->sent)) return 0;
        if (f->flo && (x < ((const double *)f->flo)[eg] || x > ((const double *)f->fhi)[eg])) return 0;
        double v = f->cen ? fabs(x - ((const double *)f->cen)[eg]) : x;
        *key = cls_key_of(v, CLS_F64);
        return 1;
    }
    float x;
    memcpy(&x, p, 4);
    if (!isfinite(x) || (f->has_sent && x == (float)f->sent)) return 0;
    if (f->flo && (x < ((const float *)f->flo)[eg] || x > ((const float *)f->fhi)[eg])) return 0;
    float v = f->cen ? fabsf(x - ((const float *)f->cen)[eg]) : x;
    *key = cls_key_of((double)v, CLS_F32);
    return 1;
}

/* Whether the value at p (entry eg of the filter) takes part, and its key. */
static int take(const cls_gather *g, size_t eg, const char *p, uint64_t *key)
{
    return cls_gather_take(&g->f, g->t, eg, p, key);
}

typedef struct sweep {
    cls_gather *g;
    uint64_t    grp, rows;
    const char *x;
    size_t      ca, cb;  /* the group's columns among the gather's entries */
} sweep;

static void sweep_item(void *arg, size_t i)
{
    sweep *w = arg;
    cls_gather *g = w->g;
    size_t c0 = w->ca + i * BLOCK, c1 = c0 + BLOCK < w->cb ? c0 + BLOCK : w->cb, nk = g->nk;
    size_t row = g->C * g->es;
    int over = 0;
    for (uint64_t r = 0; r < w->rows; r++) {
        const char *xr = w->x + (size_t)r * row;
        for (size_t c = c0; c < c1; c++) {
            size_t eg = (size_t)w->grp * g->C + c, e = eg - g->e0;
            uint64_t key;
            if (!g->nslot[e] || !take(g, eg, xr + c * g->es, &key)) continue;
            uint64_t k = key >> g->shift;
            for (size_t u = 0; u < g->nslot[e]; u++) {
                size_t s = e * nk + u;
                if (g->pre[s] != k) continue;
                uint64_t at = g->cur[s]++;
                if (at < g->cnt[s]) g->keys[g->off[s] + at] = key;
                else over = 1;
                break;
            }
        }
    }
    if (over) atomic_store(&g->overflow, 1);
}

void cls_gather_rows(cls_gather *g, struct cls_pool *pool, uint64_t grp, const char *x, uint64_t rows)
{
    if (!g->keys && !(g->keys = malloc((g->total ? g->total : 1) * sizeof *g->keys))) {
        atomic_store(&g->overflow, 2);
        return;
    }
    size_t ga = (size_t)grp * g->C, gb = ga + g->C;
    size_t a = ga > g->e0 ? ga : g->e0, b = gb < g->e0 + g->ne ? gb : g->e0 + g->ne;
    if (a >= b || !rows) return;
    sweep w = {g, grp, rows, x, a - ga, b - ga};
    size_t items = (w.cb - w.ca + BLOCK - 1) / BLOCK;
    if (pool && items > 1) cls_pool_run(pool, items, sweep_item, &w);
    else
        for (size_t i = 0; i < items; i++) sweep_item(&w, i);
}

/* a[lo..hi) reordered so that a[r[i]] holds the element of rank r[i]
 * for each of the nr ranks r (ascending, within [lo, hi)): one three-way
 * partition serves every rank on its side (a dozen quickselects of a
 * million keys each cost a third of a second). */
void cls_gather_multiselect(uint64_t *a, uint64_t lo, uint64_t hi, const uint64_t *r, size_t nr)
{
    while (nr && hi - lo > 1) {
        uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
        uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        uint64_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            uint64_t v = a[i];
            if (v < piv) {
                a[i++] = a[lt];
                a[lt++] = v;
            } else if (v > piv) {
                a[i] = a[--gt];
                a[gt] = v;
            } else {
                i++;
            }
        }
        size_t nl = 0, nm;
        while (nl < nr && r[nl] < lt) nl++;
        for (nm = nl; nm < nr && r[nm] < gt; nm++) {}
        cls_gather_multiselect(a, lo, lt, r, nl);
        r += nm;
        nr -= nm;
        lo = gt;
    }
}

uint64_t cls_gather_select(uint64_t *a, uint64_t n, uint64_t k)
{
    cls_gather_multiselect(a, 0, n, &k, 1);
    return a[k];
}

int cls_gather_pick(cls_gather *g, const uint64_t *resid, uint64_t *key)
{
    if (atomic_load(&g->overflow) || !g->keys) return -1;
    size_t nk = g->nk;
    for (size_t e = 0; e < g->ne; e++)
        for (size_t u = 0; u < g->nslot[e]; u++)
            if (g->cur[e * nk + u] != g->cnt[e * nk + u]) return -1;
    for (size_t e = 0; e < g->ne; e++) {
        if (!g->nslot[e]) continue;
        for (size_t k = 0; k < nk; k++) {
            size_t s = e * nk + g->slot_of[e * nk + k];
            uint64_t r = resid[e * nk + k];
            if (r >= g->cnt[s]) return -1;
            key[e * nk + k] = cls_gather_select(g->keys + g->off[s], g->cnt[s], r);
        }
    }
    return 0;
}
