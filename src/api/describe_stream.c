/* cls_describe over an array in a file (CLS_IN_FILE, CLS_IN_NPY), read
 * through the stream's bounded pool (file_read.h), never mapped: memory
 * stays the pool's plus a bounded table of row hashes, whatever the
 * file's size.
 * - Chunks of whole statistics groups (each group fits a buffer): the
 *   in-memory cls_describe of each chunk, one read of the file; the same
 *   results as the call in memory.
 * - Groups larger than a buffer: a moments pass (each chunk's moments
 *   merged into its groups' with Chan's formulas, in file order), the
 *   exact selection's counting passes (cls_select_source: the quartiles
 *   bit for bit), a pass counting the outliers against the merged mean and
 *   std. Duplicate rows: each row's hash (the same kernel as in memory,
 *   the group mixed in) kept when it falls in the pass's part of the hash
 *   space, parts sized so that one part's table stays within
 *   HASH_BUDGET; every pass above collects one part (the moments pass,
 *   each counting pass, the outlier pass), further parts take a pass
 *   each. Rows of equal hashes are read back (pread) and compared
 *   exactly, so a collision never miscounts.
 * Calls: stream.c (cls_file_read), stream_file.c (.npy header), describe.c, select.c,
 * pipeline (fit). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/describe.h"
#include "api/file_read.h"
#include "stats/duplicates.h"

/* One part's table of (hash, row), 16 bytes an entry, sorted in place */
#define HASH_BUDGET ((size_t)16 << 20)
/* rows hashed at a time */
#define HASH_SLICE 65536u

typedef struct hent {
    uint64_t key, row; /* row: of the whole array, in the file's order */
} hent;

typedef struct sdesc {
    cls_context          *ctx;
    const cls_file_array *in;
    cls_dtype             t;
    size_t                es, C;
    uint64_t              G, Rg;
    double                sigma;
    cls_summary          *s;        /* built aside: the caller's only on success */
    int                   dup;      /* duplicate rows asked for */
    cls_column_stats     *acc;      /* G x C moments */
    double               *mean, *thr;
    uint64_t             *outl;
    /* the duplicate rows */
    unsigned              parts, part; /* the hash space's parts; the one collected now */
    int                   collecting;  /* this pass collects part `part` */
    size_t                per;      /* rows a part holds, expected */
    uint64_t             *h;        /* HASH_SLICE row hashes */
    hent                 *tab;      /* the part's (hash, row) */
    size_t                n, cap;
    char                 *rowbuf, *reps;
    uint64_t             *rep_row;
    size_t                rcap;
    /* the selection's source over chunks */
    const cls_fread      *src;
    cls_qchunk_fn         qfn;
    void                 *qcu;
} sdesc;

/* ---- chunks of whole groups: the in-memory call ---- */

static cls_status whole_chunk(void *cu, uint64_t g0, uint64_t ng, uint64_t r0, uint64_t rows, const char *x)
{
    sdesc *d = cu;
    (void)r0;
    cls_array a = {.data = (void *)x, .dtype = d->t, .batch = (size_t)ng, .rows = (size_t)rows, .cols = d->C};
    cls_summary sub = {.columns = d->s->columns + g0 * d->C, .duplicate_rows = d->dup ? d->s->duplicate_rows + g0 : NULL};
    return cls_host_describe(d->ctx, &a, CLS_SCOPE_MATRIX, d->sigma, &sub);
}

/* ---- groups larger than a buffer ---- */

static uint64_t mix(uint64_t h, uint64_t g)
{
    /* the group in the key: equal rows of different groups are not duplicates */
    uint64_t k = h ^ (g + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static cls_status keep(sdesc *d, uint64_t g0, uint64_t rows, uint64_t r0, uint64_t i, uint64_t h);

/* The chunk's rows whose key falls in the part being collected, hashed
 * HASH_SLICE rows at a time (the hashes of a whole chunk would be memory
 * beside the pool's). */
static cls_status collect(sdesc *d, uint64_t g0, uint64_t ng, uint64_t r0, uint64_t rows, const char *x)
{
    uint64_t n = ng * rows;
    if (!d->h && !(d->h = malloc(HASH_SLICE * sizeof *d->h)))
        return cls_fail(d->ctx, CLS_E_NOMEM, "describe: out of memory for %u row hashes", HASH_SLICE);
    cls_status st = CLS_OK;
    for (uint64_t i0 = 0; st == CLS_OK && i0 < n; i0 += HASH_SLICE) {
        uint64_t m = n - i0 < HASH_SLICE ? n - i0 : HASH_SLICE;
        cls_qview v = {x + i0 * d->C * d->es, d->t, 1, m, d->C};
        st = cls_describe_hashes(d->ctx, &v, d->h);
        for (uint64_t k = 0; st == CLS_OK && k < m; k++)
            st = keep(d, g0, rows, r0, i0 + k, d->h[k]);
    }
    return st;
}

/* Row i of the chunk (hash h) into the part's table when its key is the part's. */
static cls_status keep(sdesc *d, uint64_t g0, uint64_t rows, uint64_t r0, uint64_t i, uint64_t h)
{
    {
        uint64_t g = g0 + i / rows, key = mix(h, g);
        if (key % d->parts != d->part) return CLS_OK;
        if (d->n == d->cap) {
            /* a part's expected size and a margin first (its keys are
             * spread evenly), then a quarter more at a time */
            size_t cap = d->cap ? d->cap + d->cap / 4 : d->per + d->per / 8 + 4096;
            hent *t = realloc(d->tab, cap * sizeof *t);
            if (!t) return cls_fail(d->ctx, CLS_E_NOMEM, "describe: out of memory for %zu row hashes", cap);
            d->tab = t;
            d->cap = cap;
        }
        d->tab[d->n++] = (hent){key, g * d->Rg + r0 + i % rows};
    }
    return CLS_OK;
}

static int before(const hent *x, const hent *y) { return x->key < y->key || (x->key == y->key && x->row < y->row); }

static void sift(hent *a, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && before(&a[c], &a[c + 1])) c++;
        if (!before(&a[i], &a[c])) return;
        hent t = a[i];
        a[i] = a[c];
        a[c] = t;
        i = c;
    }
}

/* A heapsort by (key, row): in place, where qsort would take as much
 * memory again as the table for a while. */
static void sort_table(hent *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) sift(a, i, n);
    for (size_t k = n; k-- > 1;) {
        hent t = a[0];
        a[0] = a[k];
        a[k] = t;
        sift(a, 0, k);
    }
}

static cls_status read_row(sdesc *d, uint64_t row, char *to)
{
    size_t len = d->C * d->es, got = 0;
    uint64_t at = d->in->offset + row * len;
    while (got < len) {
        ssize_t r = pread(d->in->fd, to + got, len - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return cls_fail(d->ctx, CLS_E_IO, "%s: read error at byte %llu: %s", d->in->name ? d->in->name : "input",
                            (unsigned long long)(at + got), r < 0 ? strerror(errno) : "end of file");
        got += (size_t)r;
    }
    return CLS_OK;
}

/* The part's duplicates: each run of equal keys split into its distinct
 * rows by exact comparison of the rows read back; every other row of the
 * run is a duplicate of its group. */
static cls_status settle_part(sdesc *d)
{
    size_t len = d->C * d->es;
    cls_status st = CLS_OK;
    sort_table(d->tab, d->n);
    for (size_t i = 0; i < d->n && st == CLS_OK;) {
        size_t j = i + 1;
        while (j < d->n && d->tab[j].key == d->tab[i].key) j++;
        size_t nrep = 0;
        for (size_t k = i; j - i > 1 && k < j && st == CLS_OK; k++) {
            uint64_t row = d->tab[k].row, g = row / d->Rg;
            st = read_row(d, row, d->rowbuf);
            int seen = 0;
            for (size_t m = 0; st == CLS_OK && m < nrep && !seen; m++)
                seen = d->rep_row[m] / d->Rg == g && cls_rows_equal(d->reps + m * len, d->rowbuf, d->C, d->t);
            if (st != CLS_OK) break;
            if (seen) {
                d->s->duplicate_rows[g]++;
                continue;
            }
            if (nrep == d->rcap) {
                size_t cap = d->rcap ? d->rcap * 2 : 8;
                char *r = realloc(d->reps, cap * len);
                if (r) d->reps = r;
                uint64_t *rr = r ? realloc(d->rep_row, cap * sizeof *rr) : NULL;
                if (rr) d->rep_row = rr;
                if (!r || !rr) return cls_fail(d->ctx, CLS_E_NOMEM, "describe: out of memory");
                d->rcap = cap;
            }
            memcpy(d->reps + nrep * len, d->rowbuf, len);
            d->rep_row[nrep++] = row;
        }
        i = j;
    }
    d->n = 0;
    d->part++;
    return st;
}

static cls_status moments_chunk(void *cu, uint64_t g0, uint64_t ng, uint64_t r0, uint64_t rows, const char *x)
{
    sdesc *d = cu;
    cls_array a = {.data = (void *)x, .dtype = d->t, .batch = (size_t)ng, .rows = (size_t)rows, .cols = d->C};
    cls_pipeline p = {.scaler = CLS_NONE, .scope = CLS_SCOPE_MATRIX};
    cls_stats *cs = NULL;
    cls_status st = cls_host_fit(d->ctx, &p, &a, &cs);
    if (st != CLS_OK) return st;
    const cls_column_stats *col = cls_stats_columns(cs);
    for (size_t e = 0; e < ng * d->C; e++) cls_column_merge(&d->acc[g0 * d->C + e], &col[e], 1);
    cls_stats_destroy(cs);
    if (d->collecting) st = collect(d, g0, ng, r0, rows, x);
    return st;
}

static cls_status outliers_chunk(void *cu, uint64_t g0, uint64_t ng, uint64_t r0, uint64_t rows, const char *x)
{
    sdesc *d = cu;
    cls_qview v = {x, d->t, ng, rows, d->C};
    size_t e0 = g0 * d->C;
    cls_status st = cls_describe_outliers(d->ctx, &v, d->mean + e0, d->thr + e0, d->outl + e0);
    if (st == CLS_OK && d->collecting) st = collect(d, g0, ng, r0, rows, x);
    return st;
}

static cls_status hash_chunk(void *cu, uint64_t g0, uint64_t ng, uint64_t r0, uint64_t rows, const char *x)
{
    return collect(cu, g0, ng, r0, rows, x);
}

/* cls_select_source's passes: each chunk cut into its groups */
static cls_status split_chunk(void *cu, uint64_t g0, uint64_t ng, uint64_t r0, uint64_t rows, const char *x)
{
    sdesc *d = cu;
    (void)r0;
    cls_status st = CLS_OK;
    for (uint64_t k = 0; k < ng && st == CLS_OK; k++) st = d->qfn(d->qcu, g0 + k, rows, x + k * rows * d->C * d->es);
    if (st == CLS_OK && d->collecting) st = collect(d, g0, ng, r0, rows, x);
    return st;
}

/* A pass of `fn` over the file; with the duplicate rows asked for and
 * parts left, it collects the next part, settled at its end. */
static cls_status pass(sdesc *d, cls_fchunk_fn fn)
{
    d->collecting = d->dup && d->part < d->parts;
    cls_status st = d->src->each(d->src->user, fn, d);
    if (st == CLS_OK && d->collecting) st = settle_part(d);
    d->collecting = 0;
    return st;
}

/* Each counting pass of the selection (every one reads the whole file)
 * collects a part too. */
static cls_status select_each(void *user, cls_qchunk_fn chunk, void *cu)
{
    sdesc *d = user;
    d->qfn = chunk;
    d->qcu = cu;
    return pass(d, split_chunk);
}

static cls_status split(sdesc *d)
{
    size_t n = (size_t)(d->G * d->C);
    uint64_t *cnt = malloc(n * sizeof *cnt);
    double *vals = malloc(n * 6 * sizeof *vals);
    d->acc = calloc(n, sizeof *d->acc);
    d->mean = malloc(n * sizeof *d->mean);
    d->thr = malloc(n * sizeof *d->thr);
    d->outl = calloc(n, sizeof *d->outl);
    d->rowbuf = malloc(d->C * d->es);
    cls_status st = cnt && vals && d->acc && d->mean && d->thr && d->outl && d->rowbuf
                        ? CLS_OK
                        : cls_fail(d->ctx, CLS_E_NOMEM, "describe: out of memory for %zu columns", n);
    if (st == CLS_OK) st = pass(d, moments_chunk);
    for (size_t e = 0; st == CLS_OK && e < n; e++)
        cls_describe_moments(&d->s->columns[e], &d->acc[e], d->sigma, &d->mean[e], &d->thr[e]);
    cls_qview v = {NULL, d->t, d->G, d->Rg, d->C};
    cls_qsource qs = {select_each, d};
    if (st == CLS_OK) st = cls_select_source(d->ctx, &v, NULL, 6, cls_describe_ranks, NULL, NULL, &qs, cnt, vals);
    for (size_t e = 0; st == CLS_OK && e < n; e++) cls_describe_quartiles(&d->s->columns[e], cnt[e], vals + e * 6, d->t);
    if (st == CLS_OK) st = pass(d, outliers_chunk);
    for (size_t e = 0; st == CLS_OK && e < n; e++) d->s->columns[e].outliers = d->outl[e];
    while (st == CLS_OK && d->dup && d->part < d->parts) st = pass(d, hash_chunk);
    free(cnt);
    free(vals);
    return st;
}

static cls_status body(void *user, const cls_fread *src)
{
    sdesc *d = user;
    d->src = src;
    return src->whole ? src->each(src->user, whole_chunk, d) : split(d);
}

cls_status cls_file_describe(cls_context *ctx, const cls_array *x, cls_scope scope, double sigma, cls_summary *out)
{
    cls_file_array f;
    cls_status st = CLS_OK;
    if (x->where == CLS_IN_NPY) {
        st = cls_npy_open_input(ctx, x->path, &f);
        if (st != CLS_OK) return st;
    } else {
        f = (cls_file_array){.fd = x->fd, .offset = x->offset, .dtype = x->dtype, .batch = x->batch,
                             .rows = x->rows, .cols = x->cols, .name = x->path};
    }
    sdesc d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    d.in = &f;
    d.t = f.dtype;
    d.es = f.dtype == CLS_F64 ? 8 : 4;
    d.C = f.cols;
    d.G = scope == CLS_SCOPE_BATCH ? 1 : f.batch;
    d.Rg = scope == CLS_SCOPE_BATCH ? (uint64_t)f.batch * f.rows : f.rows;
    d.sigma = sigma;
    d.dup = out->duplicate_rows != NULL;
    uint64_t per = ctx->tune.hash_part_rows ? ctx->tune.hash_part_rows : HASH_BUDGET / sizeof(hent);
    uint64_t total = d.G * d.Rg;
    d.parts = (unsigned)((total + per - 1) / per);
    if (!d.parts) d.parts = 1;
    d.per = (size_t)((total + d.parts - 1) / d.parts);
    cls_summary s = {.dtype = f.dtype, .scope = scope, .groups = (size_t)d.G, .rows = d.Rg, .cols = f.cols,
                     .sigma = sigma};
    s.columns = calloc(d.G * d.C + 1, sizeof *s.columns);
    s.duplicate_rows = calloc(d.G + 1, sizeof *s.duplicate_rows);
    d.s = &s;
    if (!s.columns || !s.duplicate_rows) st = cls_fail(ctx, CLS_E_NOMEM, "describe: out of memory");
    /* (the file's checks, shape and dtype, are the stream's) */
    if (st == CLS_OK) st = cls_file_read(ctx, &f, scope, x->stream, body, &d);
    if (st == CLS_OK) cls_summary_put(out, &s);
    if (x->where == CLS_IN_NPY) close(f.fd);
    free(s.columns);
    free(s.duplicate_rows);
    free(d.acc);
    free(d.mean);
    free(d.thr);
    free(d.outl);
    free(d.h);
    free(d.tab);
    free(d.rowbuf);
    free(d.reps);
    free(d.rep_row);
    return st;
}
