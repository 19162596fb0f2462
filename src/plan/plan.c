/* Cutting a job into slices.
 * Owns: the slice size that fits every participating device, and the cuts:
 * FUSED and FIT (whole groups, or all rows of a column block of one group),
 * STATS (row ranges of one group) and APPLY (whole matrices, or a rectangle
 * inside one matrix, so that a slice's factor window never exceeds it). */
#include <stdlib.h>
#include <string.h>

#include "engine/job.h"

#define MIB ((size_t)1 << 20)

/* A rectangle of h rows x w columns of an rows x cols block that fits sb:
 * whole rows when a row fits, else narrow column blocks of a few rows. */
static void tile(uint64_t rows, size_t cols, size_t es, size_t sb, uint64_t *h, size_t *w)
{
    if ((uint64_t)cols * es <= sb) {
        *w = cols;
        uint64_t n = sb / ((uint64_t)cols * es);
        *h = n < rows ? n : rows;
    } else {
        *h = rows < 16 ? rows : 16;
        size_t ww = sb / (es * (size_t)*h);
        if (ww >= 64) ww -= ww % 64;
        *w = ww ? ww : 1;
    }
}

/* A device's speed for planning: its prior when every device taking part
 * has one (probes are alike; a rate measured on whole slices reads several
 * times higher than a probe's small copies), else its rate, else its prior;
 * 0 when unknown. */
static double plan_speed(const cls_job *job, const cls_devrun *r)
{
    int all_priors = 1;
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *o = &job->runs[i];
        if (cls_run_active(o) && !(o->dev->prior > 0)) all_priors = 0;
    }
    return all_priors ? r->dev->prior : cls_known_speed(r);
}

static double fastest_speed(const cls_job *job)
{
    double fastest = 0;
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *r = &job->runs[i];
        if (!cls_run_active(r)) continue;
        double v = plan_speed(job, r);
        if (v > fastest) fastest = v;
    }
    return fastest;
}

/* A participant that will decline work: known to be far slower than the
 * fastest (a simulator beside a CPU). Its slice size and its transfers do
 * not shape the plan. */
static int negligible(const cls_job *job, const cls_devrun *r, double fastest)
{
    if (r->reserve) return 1;
    double v = plan_speed(job, r);
    return v > 0 && v * CLS_PRIOR_MARGIN < fastest;
}

/* How many devices' worth of work the participants can take: the sum of
 * their speeds over the fastest's (a device with no speed known counts as
 * fast as the fastest). Two devices alike count 2; a simulator next to a
 * CPU counts about nothing, so it does not make every slice smaller for
 * work that it will not take. */
static double participating(const cls_job *job)
{
    double fastest = fastest_speed(job), sum = 0;
    size_t unknown = 0, n = 0;
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *r = &job->runs[i];
        if (!cls_run_active(r)) continue;
        n++;
        double v = plan_speed(job, r);
        if (!(v > 0)) {
            unknown++;
            continue;
        }
        sum += v;
    }
    if (n == 0) return 1;
    if (fastest <= 0) return (double)n;
    return (double)unknown + sum / fastest;
}

typedef struct builder {
    cls_job *job;
    size_t cap;
} builder;

static cls_status add(builder *b, cls_op op, uint64_t row0, uint64_t nrows, size_t col0, size_t ncols)
{
    cls_job *job = b->job;
    if (job->nsl == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        cls_slice *n = realloc(job->sl, cap * sizeof *n);
        if (!n) return cls_fail(job->ctx, CLS_E_NOMEM, "out of memory planning slices");
        job->sl = n;
        b->cap = cap;
    }
    cls_slice *s = &job->sl[job->nsl++];
    memset(s, 0, sizeof *s);
    s->op = op;
    s->row0 = row0;
    s->nrows = nrows;
    s->col0 = col0;
    s->ncols = ncols;
    s->group0 = row0 / job->Rg;
    s->ngroups = (row0 + nrows - 1) / job->Rg - s->group0 + 1;
    s->dev = -1;
    s->home = -1;
    s->state = CLS_SL_PENDING;

    size_t elems = (size_t)nrows * ncols;
    if (elems > job->max_elems) job->max_elems = elems;
    if (cls_op_reads_only(op) || (op == CLS_OP_FUSED && !job->no_stats)) {
        size_t out = cls_op_per_group(op) ? (size_t)s->ngroups * ncols : ncols;
        s->stats_at = job->nsstats;
        if (!job->sdirect) job->nsstats += out; /* FIT writes the result itself */
        if (out > job->max_out) job->max_out = out;
    }
    if (op == CLS_OP_STATS || op == CLS_OP_FUSED || op == CLS_OP_FIT) {
        uint64_t rows_per_group = cls_op_per_group(op) ? job->Rg : nrows;
        if (op == CLS_OP_STATS || rows_per_group > (op == CLS_OP_FIT ? CLS_FIT_CHUNK_ROWS : CLS_FUSED_ROWS)) {
            uint64_t chunk = op == CLS_OP_FIT ? CLS_FIT_CHUNK_ROWS : CLS_CHUNK_ROWS;
            size_t chunks = (size_t)((rows_per_group + chunk - 1) / chunk);
            if (chunks * ncols > job->max_part) job->max_part = chunks * ncols;
            if (op == CLS_OP_FUSED && ncols > job->max_prm) job->max_prm = ncols;
            if (ncols > job->max_out) job->max_out = ncols; /* the reduce writes them */
        }
    } else if (job->pcol) {
        size_t prm = (size_t)s->ngroups * ncols;
        if (prm > job->max_prm) job->max_prm = prm;
    }
    if (job->f) {
        uint64_t b0 = row0 / job->R, b1 = (row0 + nrows - 1) / job->R;
        uint64_t rmin = b1 > b0 ? 0 : row0 % job->R;
        uint64_t rmax = b1 > b0 ? job->R - 1 : (row0 + nrows - 1) % job->R;
        s->flo = b0 * job->fsb + rmin * job->fsr + col0 * job->fsc;
        s->fhi = b1 * job->fsb + rmax * job->fsr + (col0 + ncols - 1) * job->fsc + 1;
        if (s->fhi - s->flo > job->max_span) job->max_span = s->fhi - s->flo;
        job->sum_span += s->fhi - s->flo;
    }
    return CLS_OK;
}

/* Every participating device that will take work reads and writes the
 * caller's memory in place (no transfers to overlap with kernels)? */
static int all_zero_copy(const cls_job *job)
{
    double fastest = fastest_speed(job);
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *r = &job->runs[i];
        if (cls_run_active(r) && !r->dev->zero_copy && !negligible(job, r, fastest)) return 0;
    }
    return 1;
}

size_t cls_plan_slice_bytes(const cls_job *job)
{
    size_t sb = job->ctx->cfg.slice_bytes;
    size_t cap = SIZE_MAX;
    size_t target = SIZE_MAX;
    int alone = all_zero_copy(job) && participating(job) < 1.5;
    double fastest = fastest_speed(job);
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *r = &job->runs[i];
        if (!r->participates) continue;
        const cls_dev *d = r->dev;
        /* CPUs: large enough to hide the launch (tens of µs), small enough to
         * balance devices; one CPU's worth of work has nothing to balance,
         * and fewer launches (docs/PERFORMANCE.md, "Slices"). Discrete: a few ms
         * of bus time per copy. */
        size_t t = !d->zero_copy || alone ? 32 * MIB : 8 * MIB;
        /* a device that will decline work shapes neither the size nor the
         * cap: Oclgrind's 128 MiB had held PoCL's slices to 13 MiB and made
         * the table 10% slower beside it. Should it have to take over for
         * a failed device, a slice too large for it fails the call with its
         * allocation error (run.c). */
        if (negligible(job, r, fastest)) continue;
        if (t < target) target = t;
        uint64_t c = d->info.max_alloc_bytes;
        if (!d->zero_copy) {
            /* a slot per queue, plus room for statistics and factors */
            uint64_t share = d->info.global_mem_bytes / (2 * (uint64_t)d->nq + 4);
            if (share < c) c = share;
        }
        if (c < cap) cap = (size_t)c;
    }
    if (sb == 0) sb = target;
    if (sb > cap) sb = cap;
    if (sb < 4096) sb = 4096;
    return sb;
}

/* Whole units (groups or matrices of `rows` rows, all columns), at most k
 * per slice, spread so that every device gets a couple of slices (to
 * balance devices, and on a staging device to overlap one slice's copies
 * with another's kernel), in slices whose sizes differ by one unit at most.
 * One zero-copy device's worth of work is not cut: a second launch only
 * costs. */
static cls_status whole_units(builder *b, cls_op op, uint64_t units, uint64_t rows, uint64_t k)
{
    double devs = participating(b->job);
    double want = (devs < 1.5 && all_zero_copy(b->job) ? 1 : 2 * devs) + 0.5; /* slices, rounded */
    uint64_t nsl = want < (double)units ? (uint64_t)want : units;
    if (nsl < 1) nsl = 1;
    if (k < 1) k = 1;
    uint64_t need = units / k + (units % k != 0); /* no slice above k units */
    if (nsl < need) nsl = need;
    uint64_t q = units / nsl, extra = units % nsl; /* the first `extra` slices get q + 1 */
    cls_status st = CLS_OK;
    for (uint64_t i = 0; i < nsl && st == CLS_OK; i++) {
        uint64_t u0 = i * q + (i < extra ? i : extra);
        st = add(b, op, u0 * rows, (q + (i < extra)) * rows, 0, b->job->C);
    }
    return st;
}

/* Whole groups per slice, or column blocks of each group (FUSED or FIT;
 * `tall`: the rows above which a group goes through the chunked
 * statistics, which take one group per slice). */
static cls_status plan_groups(builder *b, cls_op op, size_t sb, uint64_t tall)
{
    cls_job *job = b->job;
    uint64_t gbytes = job->Rg * job->C * job->es;
    cls_status st = CLS_OK;
    if (gbytes <= sb) return whole_units(b, op, job->G, job->Rg, job->Rg > tall ? 1 : sb / gbytes);
    size_t w = (size_t)(sb / (job->Rg * job->es));
    if (w >= 64) w -= w % 64;
    if (w == 0) w = 1;
    for (uint64_t g = 0; g < job->G && st == CLS_OK; g++)
        for (size_t c = 0; c < job->C && st == CLS_OK; c += w)
            st = add(b, op, g * job->Rg, job->Rg, c, job->C - c < w ? job->C - c : w);
    return st;
}

/* Row ranges (or narrow rectangles) inside each group. */
static cls_status plan_stats(builder *b, size_t sb)
{
    cls_job *job = b->job;
    uint64_t h;
    size_t w;
    tile(job->Rg, job->C, job->es, sb, &h, &w);
    cls_status st = CLS_OK;
    for (uint64_t g = 0; g < job->G && st == CLS_OK; g++)
        for (uint64_t r = 0; r < job->Rg && st == CLS_OK; r += h)
            for (size_t c = 0; c < job->C && st == CLS_OK; c += w)
                st = add(b, CLS_OP_STATS, g * job->Rg + r, job->Rg - r < h ? job->Rg - r : h, c,
                         job->C - c < w ? job->C - c : w);
    return st;
}

/* Whole matrices per slice, or rectangles inside one matrix. */
static cls_status plan_apply(builder *b, size_t sb)
{
    cls_job *job = b->job;
    uint64_t mbytes = job->R * job->C * job->es;
    cls_status st = CLS_OK;
    if (mbytes <= sb) return whole_units(b, CLS_OP_APPLY, job->B, job->R, sb / mbytes);
    uint64_t h;
    size_t w;
    tile(job->R, job->C, job->es, sb, &h, &w);
    for (uint64_t m = 0; m < job->B && st == CLS_OK; m++)
        for (uint64_t r = 0; r < job->R && st == CLS_OK; r += h)
            for (size_t c = 0; c < job->C && st == CLS_OK; c += w)
                st = add(b, CLS_OP_APPLY, m * job->R + r, job->R - r < h ? job->R - r : h, c,
                         job->C - c < w ? job->C - c : w);
    return st;
}

cls_status cls_plan(cls_job *job, cls_op op, size_t sb)
{
    free(job->sl);
    free(job->sstats);
    job->sl = NULL;
    job->sstats = NULL;
    job->nsl = job->nsstats = 0;
    job->max_elems = job->max_part = job->max_out = job->max_prm = 0;
    job->max_span = job->sum_span = 0;
    builder b = {.job = job};
    cls_status st = op == CLS_OP_FUSED ? plan_groups(&b, op, sb, CLS_FUSED_ROWS)
                    : op == CLS_OP_FIT   ? plan_groups(&b, op, sb, CLS_FIT_CHUNK_ROWS)
                    : op == CLS_OP_STATS ? plan_stats(&b, sb)
                                         : plan_apply(&b, sb);
    if (st != CLS_OK) return st;
    if (job->nsstats) {
        job->sstats = malloc(job->nsstats * sizeof *job->sstats);
        if (!job->sstats) return cls_fail(job->ctx, CLS_E_NOMEM, "out of memory for statistics");
    }
    job->pending = job->nsl;
    job->running = job->done = 0;
    return CLS_OK;
}

void cls_plan_reuse_for_apply(cls_job *job)
{
    job->max_prm = 0;
    for (size_t i = 0; i < job->nsl; i++) {
        cls_slice *s = &job->sl[i];
        s->op = CLS_OP_APPLY;
        s->state = CLS_SL_PENDING;
        s->dev = -1;
        s->written = 0;
        size_t prm = (size_t)s->ngroups * s->ncols;
        if (prm > job->max_prm) job->max_prm = prm;
    }
    job->pending = job->nsl;
    job->running = job->done = 0;
}
