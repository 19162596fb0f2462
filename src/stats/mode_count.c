/* The most frequent value over passes in a fixed budget (mode_count.h).
 * The budget holds `cap` slots (a key and its count) and a cut's scratch
 * per block of columns; each pass shares the slots among the entries
 * still going, a power-of-two table each of at most `q` slots (at least
 * CLS_MODE_Q_MIN), linear probing. A table starts small and doubles while
 * it fills past 3/4, so that memory follows the distinct values (a column
 * of a few thousand takes a few pages, not its share); full at its share,
 * it is cut. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "stats/clean_host.h"
#include "stats/mode_count.h"
#include "util/pool.h"

#define CLS_MODE_Q_MIN 64u
#define OPEN UINT64_MAX /* no upper bound: no finite value's key is this */

typedef struct slot {
    uint64_t key, n; /* n 0: empty */
} slot;

struct cls_mode_count {
    cls_dtype     t;
    size_t        C, ne;
    int           has_sent;
    double        sent;
    const double *lo, *hi;
    uint64_t     *klo, *khi, *best, *best_n;
    uint8_t      *done;
    int32_t      *reg;     /* entry -> its table this pass, or -1 */
    size_t        ntab;    /* tables this pass: */
    size_t       *owner;   /* table -> entry */
    uint64_t     *used;    /* its keys */
    slot        **tab;     /* its slots */
    size_t       *size;    /* their count (a power of two <= q) */
    unsigned     *bits;    /* log2 of size */
    slot        **tmp;     /* per block of columns: a cut's scratch (q slots), made at its first cut */
    size_t        cap, q;  /* slots in all, most per table this pass (powers of two) */
    size_t        need;    /* the most a table needs: an entry's values at 3/4 full */
    unsigned      blocks;  /* column blocks counted at once (threads) */
    atomic_int    failed;  /* a table or scratch could not be had */
};

cls_mode_count *cls_mode_count_new(cls_dtype t, size_t C, size_t ne, uint64_t rows, size_t budget, int has_sent,
                                   double sent, const double *lo, const double *hi, unsigned threads)
{
    if (budget < CLS_MODE_COUNT_MIN_BYTES || !C) return NULL;
    cls_mode_count *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    atomic_init(&m->failed, 0);
    m->blocks = threads > 1 ? threads : 1;
    if (m->blocks > C) m->blocks = (unsigned)C;
    m->t = t;
    m->C = C;
    m->ne = ne;
    m->has_sent = has_sent;
    m->sent = sent;
    m->lo = lo;
    m->hi = hi;
    /* the slots and the blocks' cut scratch (q each, together at most cap)
     * within the budget */
    m->cap = 1;
    while (m->cap * 2 * 2 * sizeof(slot) <= budget) m->cap *= 2;
    if (m->cap / m->blocks < CLS_MODE_Q_MIN) m->blocks = 1;
    /* no table larger than an entry's values take at 3/4 full */
    size_t need = CLS_MODE_Q_MIN;
    while (need < m->cap && (uint64_t)need / 4 * 3 <= rows) need *= 2;
    m->need = need;
    size_t n = ne ? ne : 1;
    m->klo = calloc(n, sizeof *m->klo);
    m->khi = malloc(n * sizeof *m->khi);
    m->best = calloc(n, sizeof *m->best);
    m->best_n = calloc(n, sizeof *m->best_n);
    m->done = calloc(n, 1);
    m->reg = malloc(n * sizeof *m->reg);
    m->tmp = calloc(m->blocks, sizeof *m->tmp);
    if (!m->klo || !m->khi || !m->best || !m->best_n || !m->done || !m->reg || !m->tmp) {
        cls_mode_count_free(m);
        return NULL;
    }
    for (size_t e = 0; e < ne; e++) m->khi[e] = OPEN;
    return m;
}

static void tables_free(cls_mode_count *m)
{
    for (size_t r = 0; m->tab && r < m->ntab; r++) free(m->tab[r]);
    for (unsigned i = 0; m->tmp && i < m->blocks; i++) {
        free(m->tmp[i]);
        m->tmp[i] = NULL;
    }
    free(m->tab);
    free(m->size);
    free(m->bits);
    free(m->owner);
    free(m->used);
    m->tab = NULL;
    m->size = NULL;
    m->bits = NULL;
    m->owner = NULL;
    m->used = NULL;
    m->ntab = 0;
}

/* Table r anew with n slots (a power of two); 0: no memory. */
static int table_new(cls_mode_count *m, size_t r, size_t n)
{
    slot *t = calloc(n, sizeof *t);
    if (!t) return 0;
    unsigned b = 0;
    for (size_t k = n; k > 1; k >>= 1) b++;
    m->tab[r] = t;
    m->size[r] = n;
    m->bits[r] = b;
    m->used[r] = 0;
    return 1;
}

int cls_mode_count_begin(cls_mode_count *m)
{
    if (atomic_load(&m->failed)) return -1;
    size_t going = 0;
    for (size_t e = 0; e < m->ne; e++) {
        m->reg[e] = -1;
        going += !m->done[e];
    }
    tables_free(m);
    if (!going) return 0;
    /* the slots shared by the entries going, as many as take a table of
     * CLS_MODE_Q_MIN at once; a block's cut scratch (q) out of the same
     * budget */
    size_t q = m->cap / m->blocks;
    if (q > m->need) q = m->need;
    while (q > CLS_MODE_Q_MIN && q * going > m->cap) q /= 2;
    size_t ntab = m->cap / q;
    if (ntab > going) ntab = going;
    m->q = q;
    m->tab = calloc(ntab, sizeof *m->tab);
    m->size = malloc(ntab * sizeof *m->size);
    m->bits = malloc(ntab * sizeof *m->bits);
    m->owner = malloc(ntab * sizeof *m->owner);
    m->used = malloc(ntab * sizeof *m->used);
    if (!m->tab || !m->size || !m->bits || !m->owner || !m->used) return -1;
    m->ntab = ntab;
    size_t first = q < 4 * CLS_MODE_Q_MIN ? q : 4 * CLS_MODE_Q_MIN, r = 0;
    for (size_t e = 0; e < m->ne && r < ntab; e++)
        if (!m->done[e]) {
            if (!table_new(m, r, first)) return -1;
            m->owner[r] = e;
            m->reg[e] = (int32_t)r++;
        }
    return 1;
}

static size_t home(const cls_mode_count *m, size_t r, uint64_t k)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - m->bits[r]));
}

/* a[0..n) reordered so that a[k] holds the element of rank k by key (keys
 * distinct, in hash order: the middle element is a fair pivot) */
static void nth(slot *a, size_t n, size_t k)
{
    size_t l = 0, r = n;
    while (r - l > 1) {
        size_t pi = l + (r - l) / 2, at = l;
        slot s = a[pi];
        a[pi] = a[r - 1];
        a[r - 1] = s;
        uint64_t p = s.key;
        for (size_t i = l; i < r - 1; i++)
            if (a[i].key < p) {
                s = a[i];
                a[i] = a[at];
                a[at++] = s;
            }
        s = a[at];
        a[at] = a[r - 1];
        a[r - 1] = s;
        if (k == at) return;
        if (k < at) r = at;
        else l = at + 1;
    }
}

/* A key not in table s, its probe starting at h. */
static void put(slot *s, size_t mask, size_t h, uint64_t k, uint64_t n)
{
    while (s[h].n) h = (h + 1) & mask;
    s[h].key = k;
    s[h].n = n;
}

/* Table r past 3/4 full and below its share: twice the slots. 0: no
 * memory (the caller cuts instead). */
static int grow(cls_mode_count *m, size_t r)
{
    slot *old = m->tab[r];
    size_t n = m->size[r];
    uint64_t used = m->used[r];
    if (!table_new(m, r, 2 * n)) return 0;
    size_t mask = m->size[r] - 1;
    for (size_t i = 0; i < n; i++)
        if (old[i].n) put(m->tab[r], mask, home(m, r, old[i].key), old[i].key, old[i].n);
    m->used[r] = used;
    free(old);
    return 1;
}

/* Table r is full: its entry's range ends at the median key it holds,
 * the keys at and above it forgotten. t: scratch of the table's size. */
static void cut(cls_mode_count *m, size_t r, slot *t)
{
    slot *s = m->tab[r];
    size_t n = 0, size = m->size[r], mask = size - 1;
    for (size_t i = 0; i < size; i++)
        if (s[i].n) t[n++] = s[i];
    size_t keep = n / 2;
    nth(t, n, keep);
    m->khi[m->owner[r]] = t[keep].key;
    memset(s, 0, size * sizeof *s);
    for (size_t i = 0; i < keep; i++) put(s, mask, home(m, r, t[i].key), t[i].key, t[i].n);
    m->used[r] = keep;
}

/* One value of entry e (table r) counted; blk: the caller's block of
 * columns (whose cut scratch it may use). */
static void count(cls_mode_count *m, size_t r, size_t e, uint64_t k, unsigned blk)
{
    if (k < m->klo[e] || k >= m->khi[e]) return;
    slot *s = m->tab[r];
    size_t mask = m->size[r] - 1, h = home(m, r, k);
    for (;;) {
        if (!s[h].n) break;
        if (s[h].key == k) {
            s[h].n++;
            return;
        }
        h = (h + 1) & mask;
    }
    if (m->used[r] + 1 > m->size[r] / 4 * 3) {
        if (!(m->size[r] < m->q && grow(m, r))) {
            if (!m->tmp[blk]) m->tmp[blk] = malloc(m->q * sizeof(slot));
            if (!m->tmp[blk]) {
                atomic_store(&m->failed, 1);
                return;
            }
            cut(m, r, m->tmp[blk]);
            if (k >= m->khi[e]) return;
        }
        s = m->tab[r];
        mask = m->size[r] - 1;
        h = home(m, r, k);
    }
    put(s, mask, h, k, 1);
    m->used[r]++;
}

/* Columns [c0, c1) of a chunk (block blk): their tables are theirs alone.
 * Values go in batches whose slots are prefetched first: a table of tens
 * of thousands of slots a column misses the caches at nearly every value,
 * and the misses of a batch then overlap. */
#define BATCH 16
static void rows_cols(cls_mode_count *m, uint64_t g, const char *x, uint64_t rows, size_t c0, size_t c1,
                      unsigned blk)
{
    size_t C = m->C, e0 = (size_t)g * C, nb = 0;
    size_t be[BATCH];
    uint64_t bk[BATCH];
    int32_t br[BATCH];
    for (uint64_t i = 0; i < rows; i++)
        for (size_t c = c0; c < c1; c++) {
            size_t e = e0 + c;
            int32_t r = m->reg[e];
            if (r < 0) continue;
            size_t at = (size_t)i * C + c;
            double v = m->t == CLS_F64 ? ((const double *)x)[at] : (double)((const float *)x)[at];
            if (!isfinite(v) || (m->has_sent && v == m->sent)) continue;
            if (m->lo) {
                double bl = m->t == CLS_F32 ? (double)(float)m->lo[e] : m->lo[e];
                double bh = m->t == CLS_F32 ? (double)(float)m->hi[e] : m->hi[e];
                if (v < bl || v > bh) continue;
            }
            uint64_t k = cls_mode_key(v);
            if (k < m->klo[e] || k >= m->khi[e]) continue;
            __builtin_prefetch(m->tab[r] + home(m, (size_t)r, k));
            be[nb] = e;
            bk[nb] = k;
            br[nb++] = r;
            if (nb == BATCH) {
                for (size_t j = 0; j < nb; j++) count(m, (size_t)br[j], be[j], bk[j], blk);
                nb = 0;
            }
        }
    for (size_t j = 0; j < nb; j++) count(m, (size_t)br[j], be[j], bk[j], blk);
}

typedef struct rows_arg {
    cls_mode_count *m;
    uint64_t        g, rows;
    const char     *x;
} rows_arg;

static void rows_item(void *arg, size_t i)
{
    rows_arg *a = arg;
    cls_mode_count *m = a->m;
    size_t c0 = i * m->C / m->blocks, c1 = (i + 1) * m->C / m->blocks;
    rows_cols(m, a->g, a->x, a->rows, c0, c1, (unsigned)i);
}

void cls_mode_count_rows(cls_mode_count *m, struct cls_pool *pool, uint64_t g, const char *x, uint64_t rows)
{
    rows_arg a = {m, g, rows, x};
    if (pool && m->blocks > 1) cls_pool_run(pool, m->blocks, rows_item, &a);
    else rows_cols(m, g, x, rows, 0, m->C, 0);
}

void cls_mode_count_end(cls_mode_count *m)
{
    for (size_t r = 0; r < m->ntab; r++) {
        size_t e = m->owner[r];
        const slot *s = m->tab[r];
        uint64_t bk = 0, bn = 0;
        for (size_t i = 0; i < m->size[r]; i++)
            if (s[i].n > bn || (s[i].n && s[i].n == bn && s[i].key < bk)) {
                bn = s[i].n;
                bk = s[i].key;
            }
        /* strictly more: the earlier ranges' keys are smaller (ties keep them) */
        if (bn > m->best_n[e]) {
            m->best_n[e] = bn;
            m->best[e] = bk;
        }
        if (m->khi[e] == OPEN) m->done[e] = 1;
        else {
            m->klo[e] = m->khi[e];
            m->khi[e] = OPEN;
        }
    }
}

void cls_mode_count_result(const cls_mode_count *m, double *fill)
{
    for (size_t e = 0; e < m->ne; e++) fill[e] = m->best_n[e] ? cls_mode_value(m->best[e]) : NAN;
}

void cls_mode_count_free(cls_mode_count *m)
{
    if (!m) return;
    tables_free(m);
    free(m->klo);
    free(m->khi);
    free(m->best);
    free(m->best_n);
    free(m->done);
    free(m->reg);
    free(m->tmp);
    free(m);
}
