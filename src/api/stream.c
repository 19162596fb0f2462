/* The streaming calls over arrays in files: cls_fit,
 * cls_transform, cls_fit_transform (cls_fit_transform is
 * stream_file.c). Owns: cutting the array into chunks that a buffer holds
 * (whole matrices where they fit, else row blocks of one matrix), the
 * choice of one pass or two, running the in-memory pipeline on each chunk
 * in its buffer (in place, every device taking part as in any call),
 * assembling the statistics, progress, the report, and the check that the
 * input did not change while it was read. Light curves (a trend, bins)
 * take chunks of whole series where a buffer holds them (whole matrices,
 * blocks of whole columns, the batch in batch scope; bins alone per
 * matrix, row blocks of whole bins), else blocks of a series with the
 * rows their windows read (halo rows; a cleaning ahead takes its read
 * passes over the ordinary chunks, its writing pass over the blocks; a
 * scaler of extremes after them fitted from the blocks as written); a
 * cleaning's mask goes chunk by chunk to its place (mask_put); bins
 * reduced write each chunk's rows at their own offsets. A cleaning
 * over groups larger than a chunk ahead of a scaler that does not fuse
 * with it takes two stages: the cleaning's passes write the output, then
 * the rest of the pipeline rewrites the output in place. Which of these
 * a fit-transform takes is the route's plan of stages (plan/route.h's
 * cls_stages), asked once at the call's door, where the call is checked
 * once (plan/checks.c's cls_check_file_fit_transform) before anything is
 * written; the run follows the plan, and the chunks, which this file
 * made, go through entries that check nothing again (cls_chunk_*).
 * cls_file_read
 * hands read-only passes to a caller that only reads (describe_stream.c).
 * The reads and writes are io/stream_io.c's; this file only hands it
 * buffers and chunk offsets. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/file_read.h"
#include "clean/clean_stream.h"
#include "lightcurve/lightcurve.h"
#include "quantiles/select.h"
#include "io/stream_io.h"
#include "engine/job.h"
#include "plan/route.h"

#define DEFAULT_BUFFER ((size_t)64 << 20)
#define DEFAULT_BUFFERS 4
#define DEFAULT_THREADS 4
#define IO_PART ((size_t)8 << 20)
/* The shortest run of a row a block of columns reads (column_blocks) */
#define CLS_STREAM_RUN_MIN ((size_t)4096)

/* Rows [r0, r0 + nr) and columns [c0, c0 + nc) of matrices [b0, b0 +
 * nb): whole matrices (r0 = 0, nr = R, nc = C), a row block of one (nb =
 * 1), or a block of columns of whole statistics groups (one matrix, or
 * every matrix in batch scope), its rows packed in the buffer. */
typedef struct chunk {
    size_t b0, nb, r0, nr, c0, nc;
    /* a block of series b0 (halo): its rows [wlo, whi) computed from the
     * rows [base, base + nr) the buffer holds (a wrap edge: rows before
     * the series' first and past its last too, the other end's) */
    int64_t base;
    uint64_t wlo, whi;
} chunk;

typedef enum pass_kind {
    PASS_FIT,    /* statistics only; nothing written */
    PASS_FUSED,  /* fit and transform each chunk (whole groups), or a discount */
    PASS_APPLY,  /* transform with known statistics */
    PASS_READ,   /* a caller's read-only pass (a counting or moments pass); nothing written */
    PASS_WRITE   /* a caller's pass that rewrites every chunk (cleaning's last pass) */
} pass_kind;

typedef struct sjob {
    cls_context *ctx;
    cls_pipeline p;             /* resolved (never NULL); factors whole */
    const cls_route *route;     /* the call's decisions (plan/route.h); NULL for a transform */
    const cls_file_array *in, *out;
    size_t es, B, R, C;
    uint64_t bytes;             /* of the array */
    chunk *ch;
    cls_sio_chunk *io;
    size_t n;
    size_t cap;                 /* the largest chunk, bytes: each buffer's size */
    size_t want;                /* the buffer size asked for */
    void **bufs;
    unsigned nbufs, threads;
    int drop;
    char in_name[64], out_name[64];
    const char *iname, *oname;
    cls_progress_fn progress;   /* the caller's, called by this file only */
    void *progress_user;
    uint64_t total, done;       /* bytes of all passes; of finished ones */
    struct stat st0;            /* the input at the start */
    cls_stats *acc;             /* the statistics being assembled */
    const cls_stats *use;       /* APPLY: the statistics to scale with */
    int want_stats;             /* FUSED: keep the chunks' statistics */
    cls_pass_fn pass;           /* the caller's, called by this file only */
    unsigned after;             /* passes certain to follow the next one to begin */
    uint64_t after_bytes;       /* their bytes */
    int open;                   /* passes whose number depends on the data may be added */
    int split_quantiles;        /* robust, groups larger than a chunk: the first counting
                                   pass also fits the extremes, the counting passes the
                                   quantiles */
    int fit_along;              /* READ: fit what merges from each chunk as well */
    cls_qchunk_fn qchunk;       /* READ: the caller's function for each chunk */
    cls_cchunk_fn wchunk;       /* WRITE: the same, rewriting the chunk */
    cls_fchunk_fn fchunk;       /* READ for cls_file_read: whole chunks instead of qchunk */
    void *qcu;
    /* the report, summed over the chunks' calls */
    size_t *slices;
    uint64_t *dbytes, rbytes;
    double *busy;
    size_t nslices, ndone;
    double t0;
    int passes;
    int saved;                  /* the caller's progress callback is set aside */
    /* bins reduced (cleaning alone whose bins write one row per bin): the
     * output has obins rows per statistics group; each chunk's rows go
     * to obuf, then to the start of its buffer, which writes them */
    int reduce;
    int tail;                   /* the cleaning's writing pass is not the last */
    int in_place;               /* out is in (the second stage of a cleaning that does not
                                   fuse): its data is ours to rewrite */
    uint64_t obins;
    unsigned bin_align;         /* bins alone per matrix: row blocks of a multiple of these rows
                                   (a bin never spans two blocks), else 0 */
    void *obuf;
    size_t ocap;
    int halo;                   /* light curves whose series a buffer does not hold: blocks of a
                                   series with the rows their windows read before and after */
    uint64_t Rs;                /* halo: the rows of a series (a matrix, or the batch) */
    const cls_clean *lc;        /* halo: the trend and bins (and the cleaning's options) */
    /* a cleaning ahead of halo blocks: its read passes take the chunks
     * above (each row once), its writing pass these blocks */
    chunk *hch;
    cls_sio_chunk *hio;
    size_t hn;
    size_t min_cap;             /* the buffers hold at least this (both plans' chunks) */
    void *scratch;              /* halo with a trend: the blocks' trend output (cap bytes) */
    uint8_t *mask;              /* the cleaning's mask_out (the caller's, a byte per value), or NULL */
    uint8_t *mchunk;            /* mask: a chunk's (cap / es bytes), put in place by mask_put */
    int gather;                 /* halo blocks: the scaler after them fitted from each block's
                                   rows as written (cls_route_trend_fits), into acc */
    cls_pipeline fitp;          /* gather: that scaler's pipeline (no cleaning, no factors) */
    const cls_stages *stages;   /* a fit-transform: the call's plan (plan/route.h), else NULL */
} sjob;

static const char *fa_name(const cls_file_array *a, char *buf, size_t len)
{
    if (a->name) return a->name;
    snprintf(buf, len, "file descriptor %d", a->fd);
    return buf;
}

/* need_fd 0: a .npy output not created yet (its shape alone) */
static cls_status check_file_array(cls_context *ctx, const cls_file_array *a, const char *what, int need_fd)
{
    if (!a) return cls_fail(ctx, CLS_E_ARG, "%s is NULL", what);
    if (need_fd && a->fd < 0) return cls_fail(ctx, CLS_E_ARG, "%s: file descriptor %d", what, a->fd);
    if (a->dtype != CLS_F32 && a->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "%s: dtype %d is neither CLS_F32 nor CLS_F64", what, (int)a->dtype);
    if (a->batch == 0 || a->rows == 0 || a->cols == 0)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu has a zero dimension", what, a->batch, a->rows,
                        a->cols);
    const uint64_t limit = (uint64_t)1 << 62;
    uint64_t n = a->batch, es = a->dtype == CLS_F64 ? 8 : 4;
    if (n > limit / a->rows || (n *= a->rows) > limit / a->cols || (n *= a->cols) > limit / es ||
        a->offset > limit - n * es)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu at offset %llu is too large", what, a->batch,
                        a->rows, a->cols, (unsigned long long)a->offset);
    return CLS_OK;
}

/* ---- chunks ---- */

static size_t buffer_default(void)
{
    const char *e = getenv("CLSCALE_STREAM_BUFFER");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end == 'k' || *end == 'K') v <<= 10;
        else if (*end == 'm' || *end == 'M') v <<= 20;
        if (v >= 4096) return (size_t)v;
    }
    return DEFAULT_BUFFER;
}

/* Whether blocks of columns of whole groups take the place of row blocks
 * when groups do not fit a buffer: each chunk then holds whole groups
 * (every pipeline one pass, every read of the file once), at the price of
 * reading each row in runs of a block's width. Not for a discount (its
 * factors by column and row), nor for several processes (their passes
 * count whole rows), nor where a run would be shorter than a page or a
 * block of one column would not fit. *w: the columns per block. */
static int column_blocks(const sjob *j, size_t want, int allowed, size_t *w)
{
    size_t grows = j->p.scope == CLS_SCOPE_BATCH ? j->B * j->R : j->R, gbytes = grows * j->es;
    int whole = j->p.scope == CLS_SCOPE_BATCH ? j->bytes <= want : j->R * j->C * j->es <= want;
    if (!allowed || whole || j->p.factors || j->C < 2 || gbytes > want) return 0;
    *w = want / gbytes; /* < C: a matrix (a batch) does not fit */
    return *w * j->es >= CLS_STREAM_RUN_MIN;
}

/* The bins (reduced) of chunk c's rows in each of its groups: a row
 * block's (it starts on a bin's first row) or a whole group's. */
static uint64_t chunk_bins(const sjob *j, const chunk *c)
{
    if (c->nr == j->R || !j->bin_align) return j->obins;
    return (c->nr + j->bin_align - 1) / j->bin_align;
}

/* Light curves (a trend, bins) over series a buffer does not hold: each
 * series in blocks of rows, a block holding, besides its own rows, those
 * its trend's windows read (the halo: cls_lc_halo), its own rows a
 * multiple of the bins' (a bin never spans two blocks). The halo rows
 * are read twice (once for each block beside them); the block's own rows
 * are written. A halo longer than a buffer's rows makes the buffer
 * larger: blocks of one bin (or one row) and their halo. */
static cls_status halo_chunks(sjob *j, size_t rows_per_buffer, size_t *np)
{
    uint64_t before = j->stages->halo_before, after = j->stages->halo_after;
    int wrap = j->stages->halo_wrap;
    int batch = j->p.scope == CLS_SCOPE_BATCH;
    uint64_t Rs = batch ? (uint64_t)j->B * j->R : j->R, NS = batch ? 1 : j->B;
    uint64_t k = rows_per_buffer > before + after ? rows_per_buffer - before - after : 1;
    unsigned bin = j->p.clean->bin_rows;
    if (bin) k = k < bin ? bin : k - k % bin;
    uint64_t per = (Rs + k - 1) / k;
    if (per > SIZE_MAX / NS / sizeof *j->ch) return cls_fail(j->ctx, CLS_E_ARG, "too many chunks");
    size_t n = (size_t)(per * NS);
    j->ch = calloc(n, sizeof *j->ch);
    if (!j->ch) return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        chunk *c = &j->ch[i];
        c->b0 = i / per;
        c->nb = 1;
        c->wlo = (i % per) * k;
        c->whi = Rs - c->wlo < k ? Rs : c->wlo + k;
        /* a wrap edge: the halo whole, past the ends too (wrap_ends) */
        c->base = wrap ? (int64_t)c->wlo - (int64_t)before : c->wlo > before ? (int64_t)(c->wlo - before) : 0;
        int64_t hi = wrap ? (int64_t)(c->whi + after) : (int64_t)(Rs - c->whi < after ? Rs : c->whi + after);
        c->nr = (size_t)(hi - c->base);
        c->nc = j->C;
    }
    j->Rs = Rs;
    *np = n;
    return CLS_OK;
}

static cls_status plan_rest(sjob *j, const cls_stream_opts *o, size_t n);

/* The rows of halo block c that lie in its series, [*lo, *hi): those read
 * into its buffer (the rest, a wrap edge's, wrap_ends fills). */
static void held_in_series(const sjob *j, const chunk *c, uint64_t *lo, uint64_t *hi)
{
    int64_t end = c->base + (int64_t)c->nr;
    *lo = c->base < 0 ? 0 : (uint64_t)c->base;
    *hi = end > (int64_t)j->Rs ? j->Rs : (uint64_t)end;
}

static size_t want_of(const cls_stream_opts *o) { return o && o->buffer_bytes ? o->buffer_bytes : buffer_default(); }

/* Whether plan() (blocks of columns allowed, no halo) cuts chunks that
 * each hold whole statistics groups: blocks of columns, or whole matrices
 * (in batch scope, the whole batch in one chunk). The fact of the chunks
 * that a fit-transform's plan of stages is made from, known before any
 * buffer is allocated. */
static int whole_planned(const sjob *j, size_t want)
{
    size_t w, row = j->C * j->es, mat = j->R * row, rwant = want < row ? row : want;
    if (column_blocks(j, want, 1, &w)) return 1;
    if (mat > rwant) return 0;
    return j->p.scope == CLS_SCOPE_MATRIX || rwant / mat >= j->B;
}

static cls_status plan(sjob *j, const cls_stream_opts *o, int cols_ok)
{
    size_t want = want_of(o);
    j->want = want;
    size_t row = j->C * j->es, mat = j->R * row;
    size_t rwant = want < row ? row : want; /* a row is the smallest chunk of rows */
    size_t n = 0, w = 0;
    if (j->halo) {
        cls_status st = halo_chunks(j, rwant / row, &n);
        if (st != CLS_OK) return st;
    } else if (column_blocks(j, want, cols_ok, &w)) {
        size_t per = (j->C + w - 1) / w, mats = j->p.scope == CLS_SCOPE_BATCH ? 1 : j->B;
        n = per * mats;
        j->ch = calloc(n, sizeof *j->ch);
        if (!j->ch) return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            chunk *c = &j->ch[i];
            c->b0 = j->p.scope == CLS_SCOPE_BATCH ? 0 : i / per;
            c->nb = j->p.scope == CLS_SCOPE_BATCH ? j->B : 1;
            c->nr = j->R;
            c->c0 = (i % per) * w;
            c->nc = j->C - c->c0 < w ? j->C - c->c0 : w;
        }
    } else if (mat <= rwant) {
        size_t k = rwant / mat;
        n = (j->B + k - 1) / k;
        j->ch = calloc(n, sizeof *j->ch);
        if (!j->ch) return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            j->ch[i].b0 = i * k;
            j->ch[i].nb = j->B - i * k < k ? j->B - i * k : k;
            j->ch[i].nr = j->R;
            j->ch[i].nc = j->C;
        }
    } else {
        size_t k = rwant / row;
        if (j->bin_align) k = k < j->bin_align ? j->bin_align : k - k % j->bin_align;
        size_t per = (j->R + k - 1) / k;
        if (per > SIZE_MAX / j->B) return cls_fail(j->ctx, CLS_E_ARG, "too many chunks");
        n = per * j->B;
        j->ch = calloc(n, sizeof *j->ch);
        if (!j->ch) return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            chunk *c = &j->ch[i];
            c->b0 = i / per;
            c->nb = 1;
            c->r0 = (i % per) * k;
            c->nr = j->R - c->r0 < k ? j->R - c->r0 : k;
            c->nc = j->C;
        }
    }
    return plan_rest(j, o, n);
}

/* The chunks' reads and writes, and the pool of buffers. */
static cls_status plan_rest(sjob *j, const cls_stream_opts *o, size_t n)
{
    size_t row = j->C * j->es;
    j->n = n;
    j->io = calloc(n, sizeof *j->io);
    if (!j->io) return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory");
    j->cap = 0;
    for (size_t i = 0; i < n; i++) {
        const chunk *c = &j->ch[i];
        if (j->halo) {
            /* the series' rows from base in; its rows [wlo, whi) (or their
             * bins) out */
            uint64_t s0 = (uint64_t)c->b0 * j->Rs, bin = j->p.clean->bin_rows, lo, hi;
            held_in_series(j, c, &lo, &hi);
            j->io[i].in_off = j->in->offset + (s0 + lo) * row;
            j->io[i].len = (size_t)(hi - lo) * row;
            if (j->reduce) {
                j->io[i].out_off = j->out->offset + ((uint64_t)c->b0 * j->obins + c->wlo / bin) * row;
                j->io[i].out_len = (size_t)((c->whi - c->wlo + bin - 1) / bin) * row;
                if (j->io[i].out_len > j->ocap) j->ocap = j->io[i].out_len;
            } else {
                j->io[i].out_off = j->out->offset + (s0 + c->wlo) * row;
                j->io[i].out_len = (size_t)(c->whi - c->wlo) * row;
            }
            if (c->nr * row > j->cap) j->cap = c->nr * row;
            continue;
        }
        uint64_t at = ((uint64_t)c->b0 * j->R + c->r0) * row + (uint64_t)c->c0 * j->es;
        j->io[i].in_off = j->in->offset + at;
        j->io[i].out_off = j->out ? j->out->offset + at : 0;
        j->io[i].len = c->nb * c->nr * c->nc * j->es;
        if (c->nc < j->C) {
            /* a run of the block's width in each row */
            j->io[i].seg = c->nc * j->es;
            j->io[i].stride = row;
        }
        if (j->io[i].len > j->cap) j->cap = j->io[i].len;
        if (j->reduce) {
            /* the chunk's groups (whole: reduce needs them) as obins rows
             * each, at their place in the output */
            size_t g0 = j->p.scope == CLS_SCOPE_BATCH ? 0 : c->b0, ng = j->p.scope == CLS_SCOPE_BATCH ? 1 : c->nb;
            uint64_t b0 = (j->bin_align ? c->r0 / j->bin_align : 0), nbins = chunk_bins(j, c);
            j->io[i].out_off = j->out->offset + (((uint64_t)g0 * j->obins + b0) * j->C + c->c0) * j->es;
            j->io[i].out_len = (size_t)(ng * nbins) * c->nc * j->es;
            if (c->nc < j->C) {
                j->io[i].out_seg = c->nc * j->es;
                j->io[i].out_stride = row;
            }
            if (j->io[i].out_len > j->ocap) j->ocap = j->io[i].out_len;
        }
    }
    if (j->reduce && !(j->obuf = malloc(j->ocap)))
        return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory for %zu bytes of bins", j->ocap);
    if (j->cap < j->min_cap) j->cap = j->min_cap;
    j->nbufs = o && o->buffers ? o->buffers : DEFAULT_BUFFERS;
    /* halo blocks: the trend's output of a block (a scratch as large as
     * a buffer, the same for every block) takes the place of one buffer
     * of the default pool, which keeps the peak memory of a default stream */
    int trend = j->halo && j->p.clean->detrend != CLS_DETREND_NONE;
    if (trend && !(o && o->buffers)) j->nbufs--;
    if (j->nbufs < 2) j->nbufs = 2;
    if (j->nbufs > n) j->nbufs = (unsigned)n;
    j->threads = o && o->io_threads ? o->io_threads : DEFAULT_THREADS;
    if (j->threads > 64) j->threads = 64;
    unsigned flags = o ? o->flags : 0;
    if (flags & CLS_STREAM_KEEP_CACHE) j->drop = 0;
    else if (flags & CLS_STREAM_DROP_CACHE) j->drop = 1;
    else {
        long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        j->drop = pages > 0 && psize > 0 && j->bytes > (uint64_t)pages * (uint64_t)psize / 8;
    }
    j->bufs = calloc(j->nbufs, sizeof *j->bufs);
    if (!j->bufs) return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory");
    for (unsigned i = 0; i < j->nbufs; i++) {
        cls_status st = cls_host_alloc(j->ctx, j->cap, &j->bufs[i]);
        if (st != CLS_OK) return st;
    }
    if (trend) return cls_host_alloc(j->ctx, j->cap, &j->scratch);
    return CLS_OK;
}

/* ---- one chunk ---- */

/* The factors that broadcast against chunk c, as an array of their own. */
static cls_array factor_window(const sjob *j, const chunk *c)
{
    const cls_array *f = j->p.factors;
    cls_array w = *f;
    size_t at = (f->batch == 1 ? 0 : c->b0) * f->rows * f->cols + (f->rows == 1 ? 0 : c->r0) * f->cols;
    w.data = (char *)f->data + at * j->es;
    w.batch = f->batch == 1 ? 1 : c->nb;
    w.rows = f->rows == 1 ? 1 : c->nr;
    return w;
}

/* Folds a chunk's statistics into the result (merging into an empty column
 * is exact, so whole groups come out as the in-memory call makes them). */
static cls_status accumulate(sjob *j, const chunk *c, const cls_stats *cs)
{
    if (!j->acc) {
        cls_stats_info info = cs->info;
        info.groups = j->p.scope == CLS_SCOPE_MATRIX ? j->B : 1;
        info.cols = j->C;
        info.rows = j->p.scope == CLS_SCOPE_MATRIX ? j->R : (uint64_t)j->B * j->R;
        if (!(j->acc = cls_stats_new(&info))) return cls_fail(j->ctx, CLS_E_NOMEM, "out of memory for statistics");
    }
    int moments = j->acc->info.has_moments;
    size_t g0 = j->p.scope == CLS_SCOPE_MATRIX ? c->b0 : 0;
    for (size_t g = 0; g < cs->info.groups; g++)
        for (size_t k = 0; k < c->nc; k++)
            cls_column_merge(&j->acc->col[(g0 + g) * j->C + c->c0 + k], &cs->col[g * c->nc + k], moments);
    return CLS_OK;
}

/* The statistics of chunk c's groups and columns, as cls_transform wants
 * them. */
static cls_stats *sub_stats(const sjob *j, const chunk *c)
{
    cls_stats_info info = j->use->info;
    size_t ng = j->p.scope == CLS_SCOPE_MATRIX ? c->nb : 1, g0 = j->p.scope == CLS_SCOPE_MATRIX ? c->b0 : 0;
    info.groups = ng;
    info.cols = c->nc;
    cls_stats *s = cls_stats_new(&info);
    for (size_t g = 0; s && g < ng; g++)
        memcpy(s->col + g * c->nc, j->use->col + (g0 + g) * j->C + c->c0, c->nc * sizeof *s->col);
    return s;
}

static void note_report(sjob *j)
{
    cls_report r;
    if (cls_last_report(j->ctx, &r) != CLS_OK) return;
    for (size_t i = 0; i < r.ndevices && i < j->ctx->ndevs; i++) {
        j->slices[i] += r.devices[i].slices;
        j->dbytes[i] += r.devices[i].bytes;
        j->busy[i] += r.devices[i].busy;
    }
    j->rbytes += r.bytes;
    j->nslices += r.slices;
    j->ndone += r.slices_done;
}

/* Rows [t0, t1) of series b of the input, each the series' row t mod Rs
 * (outside the series: a wrap edge's other end), into to. */
static cls_status read_wrapped(sjob *j, size_t b, int64_t t0, int64_t t1, char *to)
{
    size_t row = j->C * j->es;
    int64_t Rs = (int64_t)j->Rs;
    while (t0 < t1) {
        int64_t r = t0 % Rs;
        if (r < 0) r += Rs;
        int64_t run = t1 - t0 < Rs - r ? t1 - t0 : Rs - r;
        uint64_t at = j->in->offset + ((uint64_t)b * j->Rs + (uint64_t)r) * row;
        size_t len = (size_t)run * row, got = 0;
        while (got < len) {
            ssize_t n = pread(j->in->fd, to + got, len - got, (off_t)(at + got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                return cls_fail(j->ctx, CLS_E_IO, "%s: read error at byte %llu: %s", j->iname,
                                (unsigned long long)(at + got), n < 0 ? strerror(errno) : "end of file");
            got += (size_t)n;
        }
        to += len;
        t0 += run;
    }
    return CLS_OK;
}

/* A wrap edge's block at an end of its series: the rows read (those in
 * the series, at the buffer's start) moved to their place among the held
 * rows, and the rows before the series' first and past its last read from
 * its other end. A few windows' rows per end of a series, read where a
 * block needs them: no table of every series' ends. */
static cls_status wrap_ends(sjob *j, const chunk *c, char *buf)
{
    uint64_t lo, hi;
    held_in_series(j, c, &lo, &hi);
    int64_t end = c->base + (int64_t)c->nr;
    if (c->base >= 0 && end <= (int64_t)j->Rs) return CLS_OK;
    size_t row = j->C * j->es, pre = (size_t)((int64_t)lo - c->base);
    if (pre) memmove(buf + pre * row, buf, (size_t)(hi - lo) * row);
    cls_status st = CLS_OK;
    if (pre) st = read_wrapped(j, c->b0, c->base, (int64_t)lo, buf);
    if (st == CLS_OK && end > (int64_t)hi)
        st = read_wrapped(j, c->b0, (int64_t)hi, end, buf + (pre + (size_t)(hi - lo)) * row);
    return st;
}

/* Chunk c's mask (a byte per value, in the chunk's layout in its buffer)
 * to its values' place in the caller's mask_out. A halo block's own rows
 * only: its halo rows are other blocks' (and a wrap edge's, the other
 * end's), read, never written. */
static void mask_put(const sjob *j, const chunk *c, const uint8_t *m)
{
    size_t C = j->C;
    if (j->halo) {
        uint64_t s0 = (uint64_t)c->b0 * j->Rs;
        memcpy(j->mask + (s0 + c->wlo) * C, m + (uint64_t)((int64_t)c->wlo - c->base) * C,
               (size_t)(c->whi - c->wlo) * C);
        return;
    }
    for (size_t b = 0; b < c->nb; b++) {
        uint8_t *to = j->mask + ((uint64_t)(c->b0 + b) * j->R + c->r0) * C + c->c0;
        const uint8_t *from = m + b * c->nr * c->nc;
        if (c->nc == C) memcpy(to, from, c->nr * C);
        else
            for (size_t r = 0; r < c->nr; r++) memcpy(to + r * C, from + r * c->nc, c->nc);
    }
}

/* A block of a series with its halo rows: its rows (or their bins) to
 * the buffer's start, which its write takes. */
static cls_status halo_block(sjob *j, const chunk *c, void *buf)
{
    cls_lc_rows r = {c->base, c->nr, c->wlo, c->whi, j->scratch};
    cls_status st = cls_lc_run_rows(j->ctx, j->lc, j->in->dtype, buf, j->reduce ? j->obuf : buf, j->Rs, j->C, &r,
                                    j->reduce);
    if (st == CLS_OK && j->reduce) memcpy(buf, j->obuf, j->io[c - j->ch].out_len);
    if (st == CLS_OK) note_report(j);
    if (st == CLS_OK && j->gather) {
        /* the scaler's statistics from the block's own rows as they are
         * written (at the buffer's start): no pass of their own over OUT */
        cls_array y = {.data = buf, .dtype = j->in->dtype, .batch = 1, .rows = c->whi - c->wlo, .cols = j->C};
        cls_stats *cs = NULL;
        st = cls_chunk_fit(j->ctx, &j->fitp, &y, 1, &cs);
        if (st == CLS_OK) note_report(j);
        if (st == CLS_OK) st = accumulate(j, c, cs);
        cls_stats_destroy(cs);
    }
    return st;
}

static cls_status compute(sjob *j, pass_kind k, const chunk *c, void *buf)
{
    cls_context *ctx = j->ctx;
    cls_array x = {.data = buf, .dtype = j->in->dtype, .batch = c->nb, .rows = c->nr, .cols = c->nc}, f;
    cls_pipeline p = j->p;
    if (p.factors) {
        f = factor_window(j, c);
        p.factors = &f;
    }
    cls_stats *cs = NULL, *sub = NULL;
    cls_status st = CLS_OK;
    if (k == PASS_READ && j->fit_along) {
        /* the statistics that merge, from the chunk the first counting
         * pass reads anyway: no pass of their own */
        cls_pipeline q = p;
        q.factors = NULL;
        st = cls_chunk_fit(ctx, &q, &x, 0, &cs);
        if (st == CLS_OK) note_report(j);
        if (st == CLS_OK) st = accumulate(j, c, cs);
        cls_stats_destroy(cs);
        cs = NULL;
        if (st != CLS_OK) return st;
    }
    if (j->halo && (k == PASS_WRITE || k == PASS_FUSED)) {
        st = wrap_ends(j, c, buf);
        if (st != CLS_OK) return st;
    }
    if (k == PASS_WRITE && j->halo) {
        /* the cleaning's values of the block and its halo (every value
         * cleaned alone with its group's bounds and fills), then its trend */
        st = j->wchunk(j->qcu, p.scope == CLS_SCOPE_BATCH ? 0 : c->b0, c->nr, buf, j->mchunk);
        if (st == CLS_OK && j->mask) mask_put(j, c, j->mchunk);
        return st == CLS_OK ? halo_block(j, c, buf) : st;
    }
    if (k == PASS_READ || k == PASS_WRITE) {
        if (k == PASS_READ && j->fchunk) {
            /* the chunk whole: its groups, and its first row in them */
            int batch = p.scope == CLS_SCOPE_BATCH;
            uint64_t g0 = batch ? 0 : c->b0, ng = batch ? 1 : c->nb;
            uint64_t r0 = batch ? (uint64_t)c->b0 * j->R + c->r0 : c->r0, rows = batch ? (uint64_t)c->nb * c->nr : c->nr;
            return j->fchunk(j->qcu, g0, ng, r0, rows, buf);
        }
        /* the chunk's rows, per statistics group */
        size_t parts = p.scope == CLS_SCOPE_BATCH ? 1 : c->nb;
        uint64_t rows = p.scope == CLS_SCOPE_BATCH ? (uint64_t)c->nb * c->nr : c->nr;
        for (size_t b = 0; b < parts && st == CLS_OK; b++) {
            char *x = (char *)buf + b * c->nr * c->nc * j->es;
            uint8_t *m = j->mask && k == PASS_WRITE ? j->mchunk + b * c->nr * c->nc : NULL;
            uint64_t g = p.scope == CLS_SCOPE_BATCH ? 0 : c->b0 + b;
            st = k == PASS_READ ? j->qchunk(j->qcu, g, rows, x) : j->wchunk(j->qcu, g, rows, x, m);
        }
        if (st == CLS_OK && k == PASS_WRITE && j->mask) mask_put(j, c, j->mchunk);
        return st;
    }
    if (k == PASS_FIT || (k == PASS_FUSED && p.scaler == CLS_NONE && !p.clean)) {
        if (k == PASS_FIT || j->want_stats) {
            cls_pipeline q = p;
            q.factors = NULL;
            /* quantiles do not merge across chunks: they follow over the
             * whole file (fit_split_quantiles) */
            st = cls_chunk_fit(ctx, &q, &x, !j->split_quantiles, &cs);
            if (st == CLS_OK) note_report(j);
            if (st == CLS_OK) st = accumulate(j, c, cs);
        }
        if (st == CLS_OK && k == PASS_FUSED && p.factors) {
            st = cls_chunk_transform(ctx, &p, NULL, &x, &x);
            if (st == CLS_OK) note_report(j);
        }
    } else if (k == PASS_FUSED && j->halo) {
        st = halo_block(j, c, buf);
    } else if (k == PASS_FUSED) {
        /* a cleaning stage's outputs are per statistics group: this chunk's
         * groups start at matrix b0 (whole groups, or the one batch group);
         * the iterations are the most any chunk took */
        cls_clean cc;
        unsigned it = 0, *its = NULL;
        if (p.clean) {
            cc = *p.clean;
            /* (a block of columns holds one group: its entries are
             * consecutive from its first column's) */
            size_t off = (p.scope == CLS_SCOPE_MATRIX ? c->b0 * j->C : 0) + c->c0;
            if (cc.missing_out) cc.missing_out += off;
            if (cc.clipped_out) cc.clipped_out += off;
            if (cc.fill_out) cc.fill_out += off;
            if (cc.lower_out) cc.lower_out += off;
            if (cc.upper_out) cc.upper_out += off;
            if (cc.mask_out) cc.mask_out = j->mchunk;
            its = cc.iterations_out;
            if (its) cc.iterations_out = &it;
            p.clean = &cc;
        }
        if (j->reduce) {
            size_t ng = p.scope == CLS_SCOPE_BATCH ? 1 : c->nb, nbins = (size_t)chunk_bins(j, c);
            cls_array y = {.data = j->obuf, .dtype = x.dtype, .batch = ng, .rows = nbins, .cols = c->nc};
            st = cls_chunk_bin(ctx, j->route, p.clean, p.scope, &x, &y);
            if (st == CLS_OK) memcpy(buf, j->obuf, ng * nbins * c->nc * j->es);
        } else if (p.clean && p.scaler == CLS_NONE && !p.factors && !j->want_stats) {
            /* cleaning alone, as the in-memory call runs it (the planner's
             * CLS_ENTRY_HOST_CLEAN: a mask too); the call's route is this
             * cleaning's alone */
            st = cls_chunk_clean(ctx, j->route, p.clean, p.scope, &x, &x);
        } else {
            st = cls_chunk_fit_transform(ctx, &p, j->route, &x, &x, j->want_stats ? &cs : NULL);
        }
        if (st == CLS_OK && j->mask) mask_put(j, c, j->mchunk);
        if (st == CLS_OK && its && (c == j->ch || it > *its)) *its = it;
        if (st == CLS_OK) note_report(j);
        if (st == CLS_OK && cs) st = accumulate(j, c, cs);
    } else {
        const cls_stats *s = j->use;
        if (s && (p.scope == CLS_SCOPE_MATRIX || c->nc < j->C) && !(s = sub = sub_stats(j, c)))
            st = cls_fail(ctx, CLS_E_NOMEM, "out of memory for statistics");
        if (st == CLS_OK) st = cls_chunk_transform(ctx, &p, s, &x, &x);
        if (st == CLS_OK) note_report(j);
    }
    cls_stats_destroy(cs);
    cls_stats_destroy(sub);
    return st;
}

/* ---- passes ---- */

static void tell_progress(sjob *j, uint64_t done)
{
    if (j->progress) j->progress(j->progress_user, done < j->total ? done : j->total, j->total);
}

/* What follows the next pass to begin: `after` passes certain to run, of
 * `after_bytes` bytes, and (`open`) maybe more, as many as the data needs. */
static void next_passes(sjob *j, unsigned after, uint64_t after_bytes, int open)
{
    j->after = after;
    j->after_bytes = after_bytes;
    j->open = open;
}

/* A pass begins: the total is what has run, this pass and the passes
 * certain to follow (never one that may not run). */
static void begin_pass(sjob *j, uint64_t mine)
{
    j->total = j->done + mine + j->after_bytes;
    unsigned k = (unsigned)j->passes + 1;
    if (j->pass) j->pass(j->progress_user, k, k + j->after, j->open, j->done, mine);
}

static cls_status run_pass(sjob *j, pass_kind k)
{
    cls_context *ctx = j->ctx;
    uint64_t mine = k == PASS_FIT || k == PASS_READ ? j->bytes : 2 * j->bytes;
    begin_pass(j, mine);
    cls_sio_cfg cfg = {
        .in_fd = j->in->fd,
        .out_fd = k == PASS_FIT || k == PASS_READ ? -1 : j->out->fd,
        .in_name = j->iname,
        .out_name = j->oname,
        .bufs = j->bufs,
        .nbufs = j->nbufs,
        .chunks = j->io,
        .nchunks = j->n,
        .threads = j->threads,
        .part = IO_PART,
        .drop_cache = j->drop,
    };
    char err[512];
    cls_sio *s = cls_sio_start(&cfg, err, sizeof err);
    if (!s) return cls_fail(ctx, CLS_E_NOMEM, "streaming %s: %s", j->iname, err);
    cls_status st = CLS_OK;
    for (size_t i = 0; i < j->n && st == CLS_OK; i++) {
        void *buf;
        if (cls_sio_next(s, i, &buf, err, sizeof err) != 0) {
            st = cls_fail(ctx, CLS_E_IO, "%s", err);
            break;
        }
        st = compute(j, k, &j->ch[i], buf);
        if (st != CLS_OK) break;
        cls_sio_done(s, i);
        tell_progress(j, j->done + cls_sio_bytes(s));
    }
    if (cls_sio_finish(s, st == CLS_OK, err, sizeof err) != 0 && st == CLS_OK) st = cls_fail(ctx, CLS_E_IO, "%s", err);
    j->done += mine;
    j->passes++;
    if (st == CLS_OK) tell_progress(j, j->done);
    return st;
}

/* ---- exact quantiles of groups larger than a chunk ---- */

static cls_status count_pass(void *user, cls_qchunk_fn chunk, void *cu)
{
    sjob *j = user;
    j->qchunk = chunk;
    j->qcu = cu;
    cls_status st = run_pass(j, PASS_READ);
    j->fit_along = 0;  /* the first pass only */
    return st;
}

static cls_status visit_pass(void *user, cls_fchunk_fn chunk, void *cu)
{
    sjob *j = user;
    j->fchunk = chunk;
    j->qcu = cu;
    cls_status st = run_pass(j, PASS_READ);
    j->fchunk = NULL;
    return st;
}

static cls_status write_pass(void *user, cls_cchunk_fn chunk, void *cu)
{
    sjob *j = user;
    j->wchunk = chunk;
    j->qcu = cu;
    /* the last pass, or (tail) one that reads and writes out follows */
    next_passes(j, j->tail, j->tail ? 2 * j->bytes : 0, j->tail);
    if (!j->hch) return run_pass(j, PASS_WRITE);
    /* the halo blocks write: their chunks for this pass */
    struct chunk *ch = j->ch;
    cls_sio_chunk *io = j->io;
    size_t n = j->n;
    j->ch = j->hch;
    j->io = j->hio;
    j->n = j->hn;
    j->halo = 1;
    cls_status st = run_pass(j, PASS_WRITE);
    j->halo = 0;
    j->ch = ch;
    j->io = io;
    j->n = n;
    return st;
}

/* A cleaning stage over groups larger than a chunk: clean.c takes the
 * passes (moments, counting, the last writing one) over the file. Its
 * number of passes is known only at the end: the progress total grows by
 * a read as each read-only pass begins, the writing pass counted from the
 * start. */
static cls_status stream_clean(sjob *j, const cls_route *r, cls_stats **fitted, const cls_combine *cb)
{
    cls_array shape = {.data = NULL, .dtype = j->in->dtype, .batch = j->B, .rows = j->R, .cols = j->C};
    cls_csource src = {{count_pass, j}, write_pass};
    next_passes(j, 1, 2 * j->bytes, 1);
    return cb ? cls_clean_stream_combined(j->ctx, &j->p, r, &shape, &src, cb, fitted)
              : cls_clean_stream(j->ctx, &j->p, r, &shape, &src, fitted);
}

/* Robust scaling whose groups span chunks: each counting pass of the
 * exact selection (quantiles/select.c: one wide pass, then a sweep that
 * gathers the wanted buckets' values, or more counting passes where they
 * hold too many) reads the file once, the first also fitting what merges
 * (cls_host_fit_mergeable: count, extremes) from each chunk, and the
 * quantiles go into the statistics, equal to the in-memory fit's. */
static cls_status fit_split_quantiles(sjob *j)
{
    cls_qview v = {NULL, j->in->dtype, j->p.scope == CLS_SCOPE_BATCH ? 1 : j->B,
                   j->p.scope == CLS_SCOPE_BATCH ? (uint64_t)j->B * j->R : j->R, j->C};
    cls_qsource src = {count_pass, j};
    j->fit_along = 1;
    cls_status st = cls_fit_quantiles_source(j->ctx, &j->p, &v, &src, &j->acc);
    j->fit_along = 0;
    if (st == CLS_OK && !j->acc) st = cls_fail(j->ctx, CLS_E_IO, "%s: no pass over the data fitted it", j->iname);
    return st;
}

/* The input must be what it was when the call began: same size, not
 * modified (its data was read in pieces over the whole call). */
static cls_status check_unchanged(sjob *j)
{
    struct stat sb;
    if (j->in_place) return CLS_OK; /* written by this call: the stage before checked the input */
    if (fstat(j->in->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return CLS_OK;
    if (sb.st_size != j->st0.st_size)
        return cls_fail(j->ctx, CLS_E_IO, "%s: changed size while being read (%lld bytes, then %lld)", j->iname,
                        (long long)j->st0.st_size, (long long)sb.st_size);
    if (sb.st_mtim.tv_sec != j->st0.st_mtim.tv_sec || sb.st_mtim.tv_nsec != j->st0.st_mtim.tv_nsec)
        return cls_fail(j->ctx, CLS_E_IO, "%s: was written to while being read", j->iname);
    return CLS_OK;
}

/* p, or the pipeline s was fitted with (a transform given none). */
static void pipeline_of(const cls_pipeline *p, const cls_stats *s, cls_pipeline *q)
{
    if (p) {
        *q = *p;
        return;
    }
    memset(q, 0, sizeof *q);
    q->scaler = s->info.scaler;
    q->scope = s->info.scope;
    q->lo = s->info.lo;
    q->hi = s->info.hi;
    q->clip = s->info.clip;
}

/* The pipeline and the array's sizes (in checked). */
static void sjob_shape(sjob *j, const cls_pipeline *p, const cls_stats *s, const cls_file_array *in)
{
    pipeline_of(p, s, &j->p);
    j->es = in->dtype == CLS_F64 ? 8 : 4;
    j->B = in->batch;
    j->R = in->rows;
    j->C = in->cols;
    j->bytes = (uint64_t)j->B * j->R * j->C * j->es;
}

/* The arguments of a streamed call, checked once at its door before
 * any buffer or write: the context, the files' arrays (out_fd 0: a .npy
 * output not created yet), the output's shape (reduce: a row per bin),
 * the pipeline (p, or the one s was fitted with) against the data (a
 * fit-transform's with the rest of its checks: pipeline_too 0). */
static cls_status file_door(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_file_array *in,
                            const cls_file_array *out, int fit_only, int reduce, int out_fd, int pipeline_too)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    cls_status st = check_file_array(ctx, in, "input", 1);
    if (st == CLS_OK && !fit_only) st = check_file_array(ctx, out, "output", out_fd);
    if (st != CLS_OK) return st;
    if (reduce && p->clean->bin_rows) {
        uint64_t G = p->scope == CLS_SCOPE_BATCH ? 1 : in->batch;
        uint64_t Rg = p->scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
        uint64_t obins = (Rg + p->clean->bin_rows - 1) / p->clean->bin_rows;
        if (in->dtype != out->dtype || out->batch != G || out->rows != obins || out->cols != in->cols)
            return cls_fail(ctx, CLS_E_ARG, "bins reduced: the output must be %llu x %llu x %zu %s (one row per bin of "
                            "%u rows), not %zu x %zu x %zu %s", (unsigned long long)G, (unsigned long long)obins,
                            in->cols, in->dtype == CLS_F64 ? "float64" : "float32", p->clean->bin_rows, out->batch,
                            out->rows, out->cols, out->dtype == CLS_F64 ? "float64" : "float32");
    } else if (!fit_only && (in->dtype != out->dtype || in->batch != out->batch || in->rows != out->rows ||
                             in->cols != out->cols))
        return cls_fail(ctx, CLS_E_ARG, "output %zu x %zu x %zu %s differs from input %zu x %zu x %zu %s",
                        out->batch, out->rows, out->cols, out->dtype == CLS_F64 ? "float64" : "float32",
                        in->batch, in->rows, in->cols, in->dtype == CLS_F64 ? "float64" : "float32");
    if (!p && !s) return cls_fail(ctx, CLS_E_ARG, "no pipeline and no statistics to take it from");
    if (!pipeline_too) return CLS_OK;
    cls_pipeline q;
    pipeline_of(p, s, &q);
    cls_array shape = {.data = (void *)in, .dtype = in->dtype, .batch = in->batch, .rows = in->rows, .cols = in->cols};
    return cls_check_pipeline(ctx, &q, &shape, NULL);
}

/* A call's job over files (checked: its door ran; else it runs here
 * first). */
static cls_status sjob_init_as(sjob *j, cls_context *ctx, const cls_pipeline *p, const cls_stats *s,
                               const cls_file_array *in, const cls_file_array *out, int fit_only, int reduce,
                               int in_place, int checked)
{
    memset(j, 0, sizeof *j);
    j->in_place = in_place;
    j->ctx = ctx;
    j->in = in;
    j->out = out;
    j->t0 = cls_now();
    cls_status st = checked ? CLS_OK : file_door(ctx, p, s, in, out, fit_only, reduce, 1, 1);
    if (st != CLS_OK) return st;
    if (reduce && p->clean->bin_rows) {
        /* one row per bin of each statistics group */
        uint64_t Rg = p->scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
        j->reduce = 1;
        j->obins = (Rg + p->clean->bin_rows - 1) / p->clean->bin_rows;
    }
    j->iname = fa_name(in, j->in_name, sizeof j->in_name);
    j->oname = out ? fa_name(out, j->out_name, sizeof j->out_name) : "";
    sjob_shape(j, p, s, in);
    if (fstat(in->fd, &j->st0) != 0) return cls_fail(ctx, CLS_E_IO, "%s: cannot stat: %m", j->iname);
    /* (an output this call wrote and sized, in place: nothing to ask) */
    if (!in_place && S_ISREG(j->st0.st_mode) && (uint64_t)j->st0.st_size < in->offset + j->bytes)
        return cls_fail(ctx, CLS_E_IO, "%s: %lld bytes, but the array ends at byte %llu (truncated?)", j->iname,
                        (long long)j->st0.st_size, (unsigned long long)(in->offset + j->bytes));
    if (out && !fit_only && !in_place) {
        struct stat so;
        if (fstat(out->fd, &so) == 0 && so.st_dev == j->st0.st_dev && so.st_ino == j->st0.st_ino &&
            out->offset < in->offset + j->bytes && in->offset < out->offset + j->bytes)
            return cls_fail(ctx, CLS_E_ARG, "%s: the output overlaps the input in the same file", j->oname);
    }
    size_t nd = ctx->ndevs ? ctx->ndevs : 1;
    j->slices = calloc(nd, sizeof *j->slices);
    j->dbytes = calloc(nd, sizeof *j->dbytes);
    j->busy = calloc(nd, sizeof *j->busy);
    if (!j->slices || !j->dbytes || !j->busy) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    /* the chunks' calls must not report progress of their own */
    j->progress = ctx->cfg.progress;
    j->progress_user = ctx->cfg.progress_user;
    j->pass = ctx->cfg.pass;
    ctx->cfg.progress = NULL;
    ctx->cfg.pass = NULL;
    j->saved = 1;
    return CLS_OK;
}

static cls_status sjob_init(sjob *j, cls_context *ctx, const cls_pipeline *p, const cls_stats *s,
                            const cls_file_array *in, const cls_file_array *out, int fit_only)
{
    return sjob_init_as(j, ctx, p, s, in, out, fit_only, 0, 0, 0);
}

/* The report of the whole stream: the chunks' calls summed. */
static void report_stream(sjob *j)
{
    cls_context *ctx = j->ctx;
    cls_report *r = &ctx->report;
    for (size_t i = 0; i < r->ndevices && i < ctx->ndevs; i++) {
        cls_device_report *d = &ctx->rep_devs[i];
        if (j->slices[i]) d->sat_out = NULL;
        d->slices = j->slices[i];
        d->bytes = j->dbytes[i];
        d->busy = j->busy[i];
    }
    r->wall = cls_now() - j->t0;
    r->bytes = j->rbytes;
    r->slices = j->nslices;
    r->slices_done = j->ndone;
    r->phases = j->passes;
    r->nevents = 0;   /* the events of one chunk's call would mislead */
    ctx->nevents = 0;
}

static cls_status sjob_finish(sjob *j, cls_status st)
{
    cls_context *ctx = j->ctx;
    if (!ctx) return st;
    if (j->saved) {
        ctx->cfg.progress = j->progress;
        ctx->cfg.progress_user = j->progress_user;
        ctx->cfg.pass = j->pass;
    }
    if (j->passes && ctx->rep_devs) report_stream(j);
    for (unsigned i = 0; j->bufs && i < j->nbufs; i++)
        if (j->bufs[i]) cls_host_free(ctx, j->bufs[i]);
    if (j->scratch) cls_host_free(ctx, j->scratch);
    if (j->mchunk) cls_host_free(ctx, j->mchunk);
    free(j->bufs);
    free(j->ch);
    free(j->io);
    free(j->hch);
    free(j->hio);
    free(j->obuf);
    free(j->slices);
    free(j->dbytes);
    free(j->busy);
    return st;
}

/* The pool (and the halo blocks' scratch) given back: a second stage's
 * takes its place, never both. */
static void pool_free(sjob *j)
{
    for (unsigned i = 0; i < j->nbufs; i++) {
        if (j->bufs[i]) cls_host_free(j->ctx, j->bufs[i]);
        j->bufs[i] = NULL;
    }
    if (j->scratch) cls_host_free(j->ctx, j->scratch);
    j->scratch = NULL;
}

/* ---- the public calls ---- */

/* Halo blocks with a scaler after them (p whole, rest the scaler's
 * pipeline): whether the blocks fit it as they are written, the call's
 * route (trend_fits); bins reduced write no such rows. */
static void gather_plan(sjob *j, const cls_pipeline *rest)
{
    j->gather = j->stages->gather;
    j->fitp = *rest;
    j->fitp.clean = NULL;
    j->fitp.factors = NULL;
}

/* A mask asked for (mask_out, a byte per value of the caller's): each
 * chunk's goes to a buffer of the largest chunk's values, then to its
 * place (mask_put), as the chunk's values go to theirs. */
static cls_status mask_alloc(sjob *j)
{
    /* (bins reduced write none: refused at the call's door) */
    if (!j->p.clean || !j->p.clean->mask_out) return CLS_OK;
    void *m = NULL;
    cls_status st = cls_host_alloc(j->ctx, j->cap / j->es, &m);
    j->mchunk = m;
    if (st == CLS_OK) j->mask = j->p.clean->mask_out;
    return st;
}

/* Every chunk holds whole statistics groups. */
static int whole_groups(const sjob *j)
{
    /* (blocks of columns always hold whole groups) */
    return j->ch[0].nc < j->C || (j->p.scope == CLS_SCOPE_MATRIX ? j->ch[0].nr == j->R : j->n == 1);
}

/* The series go in blocks with halo rows: the chunks planned again. A
 * cleaning ahead of them keeps the chunks planned (its read passes) and
 * takes the blocks for its writing pass, the buffers holding either. */
static cls_status plan_halo(sjob *j, const cls_stream_opts *o)
{
    /* a cleaning ahead of the trend and bins: its statistics over whole
     * series come from the streamed cleaning's passes */
    int clean = j->stages->stage[0].kind == CLS_STAGE_CLEAN_HALO;
    for (unsigned i = 0; j->bufs && i < j->nbufs; i++)
        if (j->bufs[i]) cls_host_free(j->ctx, j->bufs[i]);
    free(j->bufs);
    free(j->obuf);
    j->bufs = NULL;
    j->obuf = NULL;
    j->ocap = 0;
    chunk *ch = j->ch;
    cls_sio_chunk *io = j->io;
    size_t n = j->n;
    j->min_cap = clean ? j->cap : 0;
    if (!clean) {
        free(ch);
        free(io);
    }
    j->ch = NULL;
    j->io = NULL;
    j->cap = 0;
    j->halo = 1;
    j->lc = j->p.clean;
    cls_status st = plan(j, o, 0);
    if (clean) {
        j->hch = j->ch;
        j->hio = j->io;
        j->hn = j->n;
        j->ch = ch;
        j->io = io;
        j->n = n;
        j->halo = 0;
        /* the pool no larger than the read passes' chunks (as plan_rest) */
        for (size_t i = n; j->bufs && i < j->nbufs; i++) {
            if (j->bufs[i]) cls_host_free(j->ctx, j->bufs[i]);
            j->bufs[i] = NULL;
        }
        if (n < j->nbufs) j->nbufs = (unsigned)n;
    }
    return st;
}

cls_status cls_file_fit(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_file_array *in,
                        const cls_stream_opts *opts, cls_stats **out)
{
    if (out) *out = NULL;
    sjob j;
    cls_status st = sjob_init(&j, ctx, p, NULL, in, NULL, 1);
    j.route = r;
    if (st == CLS_OK && !p) st = cls_fail(ctx, CLS_E_ARG, "cls_fit: pipeline is NULL");
    if (st == CLS_OK && !out) st = cls_fail(ctx, CLS_E_ARG, "cls_fit: out is NULL");
    if (st == CLS_OK && j.p.inverse) st = cls_fail(ctx, CLS_E_ARG, "cls_fit: an inverse pipeline cannot be fitted");
    if (st == CLS_OK && j.p.clean)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "cls_fit: a cleaning stage is streamed only by "
                      "cls_fit_transform");
    if (st == CLS_OK) st = plan(&j, opts, 1);
    if (st == CLS_OK) {
        j.split_quantiles = r->quantiles && !whole_groups(&j);
        /* a split robust fit: its counting passes (the first fitting the
         * rest), as many as the data need */
        next_passes(&j, 0, 0, j.split_quantiles);
        st = j.split_quantiles ? fit_split_quantiles(&j) : run_pass(&j, PASS_FIT);
    }
    if (st == CLS_OK) st = check_unchanged(&j);
    if (st == CLS_OK) {
        *out = j.acc;
        j.acc = NULL;
    }
    cls_stats_destroy(j.acc);
    return sjob_finish(&j, st);
}

cls_status cls_file_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s,
                                const cls_file_array *in, const cls_file_array *out, const cls_stream_opts *opts)
{
    sjob j;
    cls_status st = sjob_init(&j, ctx, p, s, in, out, 0);
    cls_array shape = {.data = (void *)in, .dtype = in ? in->dtype : CLS_F32, .batch = in ? in->batch : 0, .rows = in ? in->rows : 0, .cols = in ? in->cols : 0};
    if (st == CLS_OK && j.p.clean)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "cls_transform: a cleaning stage is streamed only by "
                      "cls_fit_transform");
    if (st == CLS_OK) st = cls_check_stats(ctx, &j.p, s, &shape);
    if (st == CLS_OK) st = plan(&j, opts, 1);
    if (st == CLS_OK) {
        next_passes(&j, 0, 0, 0);
        j.use = s;
        st = run_pass(&j, PASS_APPLY);
    }
    if (st == CLS_OK) st = check_unchanged(&j);
    return sjob_finish(&j, st);
}

/* The second stage of a fit-transform (o the first's job): the rest of
 * the pipeline (no cleaning stage) over `a` rewritten in place, as the
 * stage of the call's plan says: one pass over whole groups, a fit (and
 * the counting passes) then the pass that writes, or, with `known`
 * (statistics gathered as `a` was written: cls_route_trend_fits), that
 * pass alone. *fitted receives the statistics this stage fitted, if it
 * fitted any. */
static cls_status file_fit_transform_in_place(sjob *o, const cls_pipeline *p, const cls_stage *stage,
                                              const cls_file_array *a, const cls_stream_opts *opts,
                                              cls_stats **fitted, const cls_stats *known)
{
    sjob j;
    /* the call's door checked it all: a is out, checked and written */
    cls_status st = sjob_init_as(&j, o->ctx, p, NULL, a, a, 0, 0, 1, 1);
    j.route = &stage->route;
    j.stages = o->stages;
    /* its passes follow the first stage's in the progress the caller sees */
    j.progress = o->progress;
    j.progress_user = o->progress_user;
    j.pass = o->pass;
    j.done = o->done;
    j.passes = o->passes;
    if (st == CLS_OK) st = plan(&j, opts, 1);
    if (st == CLS_OK) {
        j.want_stats = fitted != NULL;
        if (stage->kind == CLS_STAGE_APPLY) {
            j.use = known;
            next_passes(&j, 0, 0, 0);
            st = run_pass(&j, PASS_APPLY);
        } else if (stage->kind == CLS_STAGE_CHUNKS) {
            next_passes(&j, 0, 0, 0);
            st = run_pass(&j, PASS_FUSED);
        } else {
            j.split_quantiles = stage->route.quantiles;
            next_passes(&j, 1, 2 * j.bytes, j.split_quantiles);
            st = j.split_quantiles ? fit_split_quantiles(&j) : run_pass(&j, PASS_FIT);
            if (st == CLS_OK) {
                j.use = j.acc;
                next_passes(&j, 0, 0, 0);
                st = run_pass(&j, PASS_APPLY);
            }
        }
    }
    if (st == CLS_OK && fitted && j.acc) {
        cls_stats_destroy(*fitted); /* gathered (known), fitted again here */
        *fitted = j.acc;
        j.acc = NULL;
    }
    cls_stats_destroy(j.acc);
    o->done = j.done;
    o->passes = j.passes;
    st = sjob_finish(&j, st);
    /* the report of the whole call: this stage's slices added to the first's */
    if (st == CLS_OK) note_report(o);
    return st;
}

cls_status cls_file_check_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                        const cls_file_array *in, const cls_file_array *out,
                                        const cls_stream_opts *opts, int want_fitted, int out_open,
                                        cls_stages *stages)
{
    int reduce = out && r->bins_reduce;
    cls_status st = file_door(ctx, p, NULL, in, out, 0, reduce, out_open, 0);
    if (st != CLS_OK) return st;
    /* the route's plan of the call's stages, from the chunks' geometry;
     * then every check of the call at once, against that plan */
    sjob g;
    memset(&g, 0, sizeof g);
    sjob_shape(&g, p, NULL, in);
    cls_route_stages(r, p, want_fitted, whole_planned(&g, want_of(opts)), stages);
    cls_array shape = {.data = (void *)in, .dtype = in->dtype, .batch = in->batch, .rows = in->rows, .cols = in->cols};
    uint64_t Rg = p->scope == CLS_SCOPE_BATCH ? (uint64_t)in->batch * in->rows : in->rows;
    return cls_check_file_fit_transform(ctx, p, &shape, Rg, reduce, stages->clean_alone, stages->halo);
}

cls_status cls_file_run_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_stages *stages,
                                      const cls_file_array *in, const cls_file_array *out,
                                      const cls_stream_opts *opts, cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    sjob j;
    const cls_stage *first = &stages->stage[0];
    int two = stages->n == 2;
    cls_status st = sjob_init_as(&j, ctx, p, NULL, in, out, 0, out && first->route.bins_reduce, 0, 1);
    j.route = &first->route;
    j.stages = stages;
    j.bin_align = stages->bin_align;
    if (st == CLS_OK) st = plan(&j, opts, 1);
    if (st == CLS_OK && stages->halo) st = plan_halo(&j, opts);
    if (st == CLS_OK) st = mask_alloc(&j);
    if (st == CLS_OK) {
        j.want_stats = fitted != NULL;
        /* the rest of the pipeline, a second stage's: over out in place */
        cls_pipeline rest = j.p;
        rest.clean = NULL;
        switch (first->kind) {
        case CLS_STAGE_CLEAN_HALO: {
            /* the cleaning's passes over the file (statistics over whole
             * series), its writing pass the halo blocks, each cleaned with
             * its halo then detrended */
            cls_clean cc;
            const cls_clean *plain = cls_lc_strip(j.p.clean, &cc);
            if (plain != &cc) cc = *plain;
            cls_pipeline all = j.p;
            j.p.clean = &cc;
            j.p.scaler = CLS_NONE;
            j.p.factors = NULL;
            j.want_stats = 0;
            j.tail = two;
            gather_plan(&j, &rest);
            st = stream_clean(&j, &first->route, NULL, NULL);
            j.p = all;
            break;
        }
        case CLS_STAGE_CLEAN:
            if (!two) {
                /* a group's values are not in memory together: the
                 * cleaning stage's passes over the file */
                st = stream_clean(&j, &first->route, fitted ? &j.acc : NULL, NULL);
                break;
            }
            /* a scaler (or factors, or statistics) that does not fuse with
             * the cleaning: the cleaning's passes write out, then the rest
             * of the pipeline runs over out in place, as the call in
             * memory runs it over its cleaned output */
            {
                cls_pipeline all = j.p;
                j.p.scaler = CLS_NONE;
                j.p.factors = NULL;
                j.tail = 1; /* at least one pass over out follows the cleaning's last */
                st = stream_clean(&j, &first->route, NULL, NULL);
                j.p = all;
            }
            break;
        case CLS_STAGE_CHUNKS:
            if (two) {
                /* the trend and bins in blocks write out, then the scaler
                 * over out in place, as the call in memory runs it over the
                 * detrended values */
                j.want_stats = 0;
                gather_plan(&j, &rest);
                next_passes(&j, 1, 2 * j.bytes, !j.gather);
            } else {
                next_passes(&j, 0, 0, 0);
            }
            st = run_pass(&j, PASS_FUSED);
            break;
        case CLS_STAGE_FIT_APPLY:
            j.split_quantiles = first->route.quantiles;
            /* the fit, the counting passes of a robust fit (as many as the
             * data need), the apply */
            next_passes(&j, 1, 2 * j.bytes, j.split_quantiles);
            st = j.split_quantiles ? fit_split_quantiles(&j) : run_pass(&j, PASS_FIT);
            if (st == CLS_OK) {
                j.use = j.acc;
                next_passes(&j, 0, 0, 0);
                st = run_pass(&j, PASS_APPLY);
            }
            break;
        case CLS_STAGE_APPLY: /* only a second stage's */
            break;
        }
        if (two) {
            /* the second stage's pool takes the place of this one's: never both */
            pool_free(&j);
            if (st == CLS_OK) st = check_unchanged(&j);
            if (st == CLS_OK)
                st = file_fit_transform_in_place(&j, &rest, &stages->stage[1], out, opts, fitted ? &j.acc : NULL,
                                                 j.gather ? j.acc : NULL);
        }
    }
    if (st == CLS_OK) st = check_unchanged(&j);
    if (st == CLS_OK && fitted) {
        *fitted = j.acc;
        j.acc = NULL;
    }
    cls_stats_destroy(j.acc);
    return sjob_finish(&j, st);
}

cls_status cls_file_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                  const cls_file_array *in, const cls_file_array *out, const cls_stream_opts *opts,
                                  cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    cls_stages stages;
    cls_status st = cls_file_check_fit_transform(ctx, p, r, in, out, opts, fitted != NULL, 1, &stages);
    return st == CLS_OK ? cls_file_run_fit_transform(ctx, p, &stages, in, out, opts, fitted) : st;
}

cls_status cls_file_fit_transform_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                           const cls_file_array *in, const cls_file_array *out,
                                           const cls_stream_opts *opts, const cls_combine *combine,
                                           cls_stats **fitted)
{
    if (!combine || !combine->fn) return cls_file_fit_transform(ctx, p, r, in, out, opts, fitted);
    if (fitted) *fitted = NULL;
    sjob j;
    cls_status st = sjob_init(&j, ctx, p, NULL, in, out, 0);
    j.route = r;
    if (st == CLS_OK && !p) st = cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: pipeline is NULL");
    if (st == CLS_OK && (!j.p.clean || j.p.inverse))
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: the pipeline needs a cleaning stage (and "
                      "cannot be inverse)");
    if (st == CLS_OK) st = plan(&j, opts, 0);
    if (st == CLS_OK) st = mask_alloc(&j);
    if (st != CLS_OK) {
        /* the other processes learn it before any pass */
        st = combine->stats ? combine->stats(combine->user, st, NULL, 0) : combine->fn(combine->user, st, NULL, 0);
        return sjob_finish(&j, st);
    }
    /* always the cleaning stage's passes: a chunk's own one-pass call
     * would decide on this process's rows alone */
    st = stream_clean(&j, r, fitted ? &j.acc : NULL, combine);
    if (st == CLS_OK) st = check_unchanged(&j);
    if (st == CLS_OK && fitted) {
        *fitted = j.acc;
        j.acc = NULL;
    }
    cls_stats_destroy(j.acc);
    return sjob_finish(&j, st);
}

cls_status cls_file_read(cls_context *ctx, const cls_file_array *in, cls_scope scope, const cls_stream_opts *opts,
                         cls_fread_body body, void *user)
{
    sjob j;
    cls_pipeline p = {.scaler = CLS_NONE, .scope = scope};
    cls_status st = sjob_init(&j, ctx, &p, NULL, in, NULL, 1);
    /* chunks of whole rows (never blocks of columns): a pass hands each
     * group's rows in their order */
    if (st == CLS_OK) st = plan(&j, opts, 0);
    if (st == CLS_OK) {
        cls_fread src = {visit_pass, &j, whole_groups(&j)};
        next_passes(&j, 0, 0, 1);
        st = body(user, &src);
    }
    if (st == CLS_OK) st = check_unchanged(&j);
    return sjob_finish(&j, st);
}
