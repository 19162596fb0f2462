/* The first counting pass's guess, checked exactly (window.h). Pure host
 * code over the chunks the pass reads anyway: what takes part and its key
 * are gather.c's (cl/quantile.cl's q_take), so the counts agree with the
 * devices' exactly and a rank outside its window is always seen.
 * Calls: gather.c, util/pool.c. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "quantiles/window.h"
#include "util/pool.h"

#define BLOCK 64       /* columns per work item */
#define MIN_SAMPLE 64  /* kept values of a column in its group's first chunk to guess from */
/* The rows of the first chunk a guess reads at most (every k-th row of a
 * longer chunk): 8 MiB of keys at a time */
#define MAX_SAMPLE ((uint64_t)1 << 20)
/* Entries past which the windows' tables (one slot per wanted rank) are
 * not made: groups of a few columns are the case (wider groups stream in
 * blocks of whole columns). */
#define MAX_ENTRIES ((uint64_t)1 << 16)

typedef struct slot {
    uint64_t  lo, hi;    /* the window: keys lo..hi */
    uint64_t  below;     /* values seen with a key under lo */
    uint64_t  at_lo, at_hi; /* values with key lo, with key hi (> lo): counted, not copied
                               (a constant column, ties at the ends) */
    uint64_t  n, room;   /* keys strictly inside copied, their room */
    uint64_t *keys;
} slot;

struct cls_window {
    cls_dtype t;
    size_t    es, C, nk;
    uint64_t  G, Rg, cap;
    atomic_uint_fast64_t expect; /* the copies the windows set so far should take, by their samples */
    cls_rank_fn rank;
    void     *user;
    cls_gather_filter f;
    uint8_t  *seen;      /* G: the group's windows are set */
    uint8_t  *nslot;     /* G * C: windows of the entry (0: none, it cannot be picked) */
    uint64_t *seen_n;    /* G * C: the entry's values seen (the pass's count, checked) */
    uint8_t  *slot_of;   /* G * C * nk */
    slot     *slots;     /* G * C * nk */
    atomic_uint_fast64_t used;
    atomic_int failed;
};

cls_window *cls_window_new(cls_dtype t, uint64_t G, uint64_t Rg, size_t C, size_t nk, cls_rank_fn rank, void *user,
                           const cls_gather_filter *f, uint64_t cap)
{
    uint64_t ne = G * C;
    if (!ne || ne > MAX_ENTRIES || nk == 0 || nk > 16) return NULL;
    cls_window *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->t = t;
    w->es = t == CLS_F64 ? 8 : 4;
    w->C = C;
    w->nk = nk;
    w->G = G;
    w->Rg = Rg;
    w->cap = cap;
    atomic_init(&w->expect, 0);
    w->rank = rank;
    w->user = user;
    w->f = *f;
    atomic_init(&w->used, 0);
    atomic_init(&w->failed, 0);
    w->seen = calloc((size_t)G, 1);
    w->nslot = calloc((size_t)ne, 1);
    w->seen_n = calloc((size_t)ne, sizeof *w->seen_n);
    w->slot_of = calloc((size_t)ne * nk, 1);
    w->slots = calloc((size_t)ne * nk, sizeof *w->slots);
    if (!w->seen || !w->nslot || !w->seen_n || !w->slot_of || !w->slots) {
        cls_window_free(w);
        return NULL;
    }
    return w;
}

void cls_window_free(cls_window *w)
{
    if (!w) return;
    if (w->slots)
        for (uint64_t i = 0; i < w->G * w->C * w->nk; i++) free(w->slots[i].keys);
    free(w->seen);
    free(w->nslot);
    free(w->seen_n);
    free(w->slot_of);
    free(w->slots);
    free(w);
}

/* Entry e's windows from its column's values in its group's first chunk
 * (every step-th row of a long one): for each wanted rank the sample's
 * ranks d either side of the same fraction, d = 3 sqrt(m) + 8 of its m
 * values (a chunk in random order puts a rank's value outside by 6
 * standard deviations of the sample's quantile), ranges that overlap
 * merged, each window the keys at its two ends. */
static void set_windows(cls_window *w, size_t e, const char *col, uint64_t rows, size_t stride)
{
    if (!rows) return;
    uint64_t step = (rows + MAX_SAMPLE - 1) / MAX_SAMPLE, ns = (rows + step - 1) / step;
    uint64_t *k = malloc((ns ? ns : 1) * sizeof *k), m = 0;
    if (!k) {
        atomic_store(&w->failed, 1);
        return;
    }
    for (uint64_t r = 0; r < rows; r += step)
        if (cls_gather_take(&w->f, w->t, e, col + (size_t)r * stride, &k[m])) m++;
    if (m < MIN_SAMPLE) {
        free(k);
        return; /* no windows: picked only if the column has no values at all */
    }
    uint64_t rk[16], d = (uint64_t)(3.0 * sqrt((double)m)) + 8, ra[16], rb[16];
    w->rank(w->user, m, rk);
    size_t nk = w->nk, order[16];
    for (size_t t = 0; t < nk; t++) {
        ra[t] = rk[t] > d ? rk[t] - d : 0;
        rb[t] = rk[t] + d < m ? rk[t] + d : m - 1;
        order[t] = t;
    }
    /* by their low ends, then merged where they meet */
    for (size_t i = 1; i < nk; i++)
        for (size_t j = i; j > 0 && ra[order[j]] < ra[order[j - 1]]; j--) {
            size_t x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    uint64_t ua[16], ub[16], pos[32], span = 0;
    size_t u = 0;
    for (size_t i = 0; i < nk; i++) {
        size_t t = order[i];
        if (u && ra[t] <= ub[u - 1]) {
            if (rb[t] > ub[u - 1]) ub[u - 1] = rb[t];
        } else {
            ua[u] = ra[t];
            ub[u] = rb[t];
            u++;
        }
        w->slot_of[e * nk + t] = (uint8_t)(u - 1);
    }
    size_t np = 0;
    for (size_t i = 0; i < u; i++) {
        span += ub[i] - ua[i] + 1;
        pos[np++] = ua[i];
        if (ub[i] != ua[i]) pos[np++] = ub[i];
    }
    cls_gather_multiselect(k, 0, m, pos, np);
    slot *s = w->slots + e * nk;
    for (size_t i = 0; i < u; i++) {
        s[i].lo = k[ua[i]];
        s[i].hi = k[ub[i]];
    }
    free(k);
    w->nslot[e] = (uint8_t)u;
    /* windows that would copy more than the bound, by the sample: not
     * tried (no memory spent on copies that would be thrown away) */
    uint64_t want = (uint64_t)((double)span / (double)m * (double)w->Rg);
    if (atomic_fetch_add(&w->expect, want) + want > w->cap) atomic_store(&w->failed, 1);
}

static void keep(cls_window *w, slot *s, uint64_t key)
{
    if (s->n == s->room) {
        uint64_t room = s->room ? 2 * s->room : 1024;
        /* (rooms: at most twice what they hold) */
        if (atomic_fetch_add(&w->used, room - s->room) + (room - s->room) > 2 * w->cap) {
            atomic_store(&w->failed, 1);
            return;
        }
        uint64_t *nk = realloc(s->keys, room * sizeof *nk);
        if (!nk) {
            atomic_store(&w->failed, 1);
            return;
        }
        s->keys = nk;
        s->room = room;
    }
    s->keys[s->n++] = key;
}

typedef struct wrows {
    cls_window *w;
    uint64_t    grp, rows;
    const char *x;
    int         first;
} wrows;

static void rows_item(void *arg, size_t i)
{
    wrows *a = arg;
    cls_window *w = a->w;
    size_t c0 = i * BLOCK, c1 = c0 + BLOCK < w->C ? c0 + BLOCK : w->C, row = w->C * w->es, nk = w->nk;
    size_t e0 = (size_t)a->grp * w->C;
    if (a->first)
        for (size_t c = c0; c < c1; c++) set_windows(w, e0 + c, a->x + c * w->es, a->rows, row);
    for (uint64_t r = 0; r < a->rows && !atomic_load(&w->failed); r++) {
        const char *xr = a->x + (size_t)r * row;
        for (size_t c = c0; c < c1; c++) {
            size_t e = e0 + c;
            uint64_t key;
            if (!w->nslot[e] || !cls_gather_take(&w->f, w->t, e, xr + c * w->es, &key)) continue;
            w->seen_n[e]++;
            slot *s = w->slots + e * nk;
            for (size_t u = 0; u < w->nslot[e]; u++) {
                if (key < s[u].lo) s[u].below++;
                else if (key == s[u].lo) s[u].at_lo++;
                else if (key < s[u].hi) keep(w, &s[u], key);
                else if (key == s[u].hi) s[u].at_hi++;
            }
        }
    }
}

void cls_window_rows(cls_window *w, struct cls_pool *pool, uint64_t grp, const char *x, uint64_t rows)
{
    if (grp >= w->G || !rows || atomic_load(&w->failed)) return;
    wrows a = {w, grp, rows, x, !w->seen[grp]};
    w->seen[grp] = 1;
    size_t items = (w->C + BLOCK - 1) / BLOCK;
    if (pool && items > 1) cls_pool_run(pool, items, rows_item, &a);
    else
        for (size_t i = 0; i < items; i++) rows_item(&a, i);
}

int cls_window_pick(cls_window *w, const uint64_t *count, uint64_t *key)
{
    if (atomic_load(&w->failed)) return -1;
    size_t nk = w->nk;
    uint64_t rk[16];
    for (uint64_t e = 0; e < w->G * w->C; e++) {
        if (!count[e]) continue;
        /* (the host's filter and the devices' agree on every value: a
         * count that differs is data changed between reads) */
        if (!w->nslot[e] || w->seen_n[e] != count[e]) return -1;
        w->rank(w->user, count[e], rk);
        for (size_t t = 0; t < nk; t++) {
            slot *s = w->slots + e * nk + w->slot_of[e * nk + t];
            if (rk[t] < s->below || rk[t] - s->below >= s->at_lo + s->n + s->at_hi) return -1;
        }
    }
    for (uint64_t e = 0; e < w->G * w->C; e++) {
        if (!count[e]) continue;
        w->rank(w->user, count[e], rk);
        for (size_t t = 0; t < nk; t++) {
            slot *s = w->slots + e * nk + w->slot_of[e * nk + t];
            uint64_t j = rk[t] - s->below;
            key[e * nk + t] = j < s->at_lo             ? s->lo
                              : j < s->at_lo + s->n    ? cls_gather_select(s->keys, s->n, j - s->at_lo)
                                                       : s->hi;
        }
    }
    return 0;
}
