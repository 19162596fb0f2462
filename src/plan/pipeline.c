/* The public pipeline calls: cls_fit, cls_transform, cls_fit_transform.
 * Owns: the order of the checks (checks.c; nothing is touched before they
 * pass), which devices
 * take part (float64 needs cl_khr_fp64), the choice between one pass of
 * self-contained slices and two passes with a host merge between them, the
 * scaler's params on the host, and the assembly of the statistics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/clean_host.h"
#include "engine/job.h"
#include "plan/entries.h"
#include "util/pool.h"

static size_t bytes_of(const cls_array *a) { return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4); }

/* The fit computes mean and m2 (also for CLS_NONE: a describe). */
static int needs_moments(cls_scaler s)
{
    const cls_scaler_desc *d = cls_scaler_get(s);
    return d ? (d->needs & CLS_NEED_MOMENTS) != 0 : s == CLS_NONE;
}

static int is_ranged(cls_scaler s)
{
    const cls_scaler_desc *d = cls_scaler_get(s);
    return d && d->ranged;
}

static void range_of(const cls_pipeline *p, double *lo, double *hi)
{
    *lo = p->lo;
    *hi = p->hi;
    if (*lo == 0 && *hi == 0) *hi = 1;
}

/* ---- jobs ---- */

/* `in` and `out` give the shape and dtype; with `res` (a resident call)
 * their data is NULL and the data is in res's buffers. */
static cls_status job_init(cls_job *job, cls_context *ctx, const cls_array *in, cls_array *out,
                           cls_resident *res)
{
    memset(job, 0, sizeof *job);
    job->ctx = ctx;
    job->res = res;
    job->dtype = in->dtype;
    job->es = in->dtype == CLS_F64 ? 8 : 4;
    job->x = in->data;
    job->y = out ? out->data : NULL;
    job->inplace = res ? res->out && res->out == res->in && res->out_off == res->in_off
                       : out && out->data == in->data;
    job->B = in->batch;
    job->R = in->rows;
    job->C = in->cols;
    job->Rg = in->rows;
    job->G = in->batch;
    job->t0 = cls_now();
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->cond, NULL);
    memset(&ctx->report, 0, sizeof ctx->report);
    ctx->nevents = 0;

    cls_resident_settle(ctx, res ? (long)res->device : -1);
    cls_status st = cls_zero_copy_verify(ctx);
    if (st != CLS_OK) return st;
    job->runs = calloc(ctx->ndevs, sizeof *job->runs);
    if (!job->runs) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    job->nruns = ctx->ndevs;
    size_t n = 0;
    for (size_t i = 0; i < ctx->ndevs; i++) {
        cls_devrun *r = &job->runs[i];
        r->job = job;
        r->dev = &ctx->devs[i];
        if (res && i != res->device) {
            r->sat_out = "the call's data is on another device";
            continue;
        }
        if (job->dtype == CLS_F64 && !r->dev->info.fp64) {
            r->sat_out = "no cl_khr_fp64 (float64 data)";
            continue;
        }
        r->participates = 1;
        /* host threads copy its slices unless the caller's memory is pinned
         * in its context (cls_host_alloc) */
        if (!r->dev->zero_copy && !res)
            r->staged = !cls_hostmem_pinned(ctx, in->data, bytes_of(in), r->dev->cl)
                        || (out && !cls_hostmem_pinned(ctx, out->data, bytes_of(out), r->dev->cl));
        n++;
    }
    job->host_copy_bw = ctx->host_copy_bw;
    if (n == 0 && res)
        return cls_fail(ctx, CLS_E_UNSUPPORTED, "float64 data needs a device with cl_khr_fp64 and the buffer's "
                        "device %zu (%s) has none", res->device, ctx->devs[res->device].info.name);
    if (n == 0)
        return cls_fail(ctx, CLS_E_UNSUPPORTED,
                        "float64 data needs a device with cl_khr_fp64 and none of the %zu selected has it "
                        "(rusticl on llvmpipe has no float64; convert the data to float32 or select PoCL)",
                        ctx->ndevs);
    return CLS_OK;
}

/* The call's device buffers released: part of what the caller waits for
 * (a staging device's copy of the discount factors, 40 MB for
 * seed-b-large, took 2.4-2.6 ms to release on the 2-core VM), so before
 * the call's wall time is read. */
static void job_release_buffers(cls_job *job)
{
    for (size_t i = 0; i < job->nsl; i++)
        if (job->sl[i].resident) {
            clReleaseMemObject(job->sl[i].resident);
            job->sl[i].resident = NULL;
        }
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].factors) {
            clReleaseMemObject(job->runs[i].factors);
            job->runs[i].factors = NULL;
        }
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].ptab) { /* before the table it may use */
            clReleaseMemObject(job->runs[i].ptab);
            job->runs[i].ptab = NULL;
        }
}

static void job_free(cls_job *job)
{
    job_release_buffers(job);
    free(job->sl);
    free(job->sstats);
    free(job->runs);
    free(job->raw);
    cls_params_free(job);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->cond);
}

static void set_factors(cls_job *job, const cls_array *f)
{
    if (!f) return;
    job->f = f->data;
    job->fsb = f->batch == 1 ? 0 : f->rows * f->cols;
    job->fsr = f->rows == 1 ? 0 : f->cols;
    job->fsc = f->cols == 1 ? 0 : 1;
    job->felems = f->batch * f->rows * f->cols;
}

/* A discount alone is elementwise: merge rows into columns (and matrices
 * into one row) where the factors' strides allow, so that rows are long. */
static void merge_dims(cls_job *job)
{
    if (!job->f) return;
    if ((job->fsc == 1 && job->fsr == job->C) || (job->fsc == 0 && job->fsr == 0)) {
        job->C *= (size_t)job->R;
        job->R = 1;
        job->fsr = 0;
    }
    if (job->R == 1 && ((job->fsc == 1 && job->fsb == job->C) || (job->fsc == 0 && job->fsb == 0))) {
        job->C *= (size_t)job->B;
        job->B = 1;
        job->fsb = 0;
    }
    job->Rg = job->R;
    job->G = job->B;
}

static cls_status run(cls_job *job, cls_op op, size_t sb)
{
    cls_run_priors(job);
    cls_status st = cls_plan(job, op, sb);
    if (st == CLS_OK && op == CLS_OP_APPLY) st = cls_params_prepare(job);
    if (st != CLS_OK) return st;
    job->phase = 1;
    st = job->res ? cls_resident_phase(job) : cls_run_phase(job);
    job->slices_all += job->nsl;
    job->done_all += job->done;
    return st;
}

static cls_status finish(cls_job *job, cls_status st)
{
    if (job->res) st = cls_resident_end(job, st);
    job_release_buffers(job);
    double wall = cls_now() - job->t0;
    if (st == CLS_OK) cls_team_record(job, wall);
    cls_status rs = cls_report_finish(job, wall);
    if (st == CLS_OK && rs != CLS_OK) st = cls_fail(job->ctx, rs, "out of memory assembling the report");
    job_free(job);
    return st;
}

/* An empty statistics object for the job's groups and columns (`undefined`:
 * its columns left for the caller to write, every one). */
static cls_status new_stats(cls_job *job, const cls_pipeline *p, int undefined, cls_stats **out)
{
    cls_stats_info info = {0};
    info.scaler = p->scaler;
    info.scope = p->scope;
    range_of(p, &info.lo, &info.hi);
    if (!is_ranged(p->scaler)) info.lo = info.hi = 0;
    info.clip = p->clip;
    info.dtype = job->dtype;
    info.groups = (size_t)job->G;
    info.cols = job->C;
    info.rows = job->Rg;
    info.has_moments = job->moments;
    *out = undefined ? cls_stats_alloc(&info) : cls_stats_new(&info);
    return *out ? CLS_OK : cls_fail(job->ctx, CLS_E_NOMEM, "out of memory for statistics");
}

/* The job's per-slice statistics merged, in slice order, into a new object. */
static cls_status collect_stats(cls_job *job, const cls_pipeline *p, cls_stats **out)
{
    cls_stats *s;
    cls_status st = new_stats(job, p, 0, &s);
    if (st != CLS_OK) return st;
    for (size_t i = 0; i < job->nsl; i++) {
        const cls_slice *sl = &job->sl[i];
        uint64_t groups = cls_op_per_group(sl->op) ? sl->ngroups : 1;
        for (uint64_t g = 0; g < groups; g++)
            for (size_t c = 0; c < sl->ncols; c++)
                cls_column_merge(&s->col[(sl->group0 + g) * job->C + sl->col0 + c],
                                 &job->sstats[sl->stats_at + g * sl->ncols + c], job->moments);
    }
    *out = s;
    return CLS_OK;
}

/* The scaler's params come from these statistics, computed per slice as
 * it is enqueued (slice.c): no table of every group and column is built
 * before the run (a serial pass writing a fresh allocation as large as the
 * statistics; docs/PERFORMANCE.md, "Params"). */
static void use_params(cls_job *job, const cls_stats *s, cls_scaler scaler, int inverse)
{
    job->pcol = s->col;
    job->pscaler = scaler;
    job->pinverse = inverse;
    job->popts = cls_scaler_opts_info(&s->info);
    job->popts.lo = job->lo;
    job->popts.hi = job->hi;
}

/* The largest slice that stays in the cache of every participating
 * zero-copy device with all its queues busy; 0 when none says. */
static size_t cache_slice_bytes(const cls_job *job)
{
    size_t cap = 0;
    for (size_t i = 0; i < job->nruns; i++) {
        const cls_devrun *r = &job->runs[i];
        if (!cls_run_active(r) || !r->dev->zero_copy || !r->dev->cache_bytes) continue;
        size_t c = r->dev->cache_bytes / (2 * (size_t)r->dev->nq);
        if (!cap || c < cap) cap = c;
    }
    return cap;
}

/* Whole statistics groups fit a slice (or one work-item's column): one pass. */
static int one_pass(const cls_job *job, size_t sb)
{
    if (job->Rg <= CLS_FUSED_ROWS) return 1;
    uint64_t block = job->C < 64 ? job->C : 64;
    return job->Rg * block * job->es <= sb;
}

/* The fit reads whole groups, or all rows of column blocks whose row
 * segments are a page at least (FIT: each column's statistics from one
 * slice, written straight into the result), rather than row ranges of all
 * columns (STATS), whose partial statistics per slice and column a merge
 * must combine: a tall group of wide rows cut into row tiles leaves as many
 * partial entries per column as tiles, whose download and merge cost as
 * much as reading the data (docs/PERFORMANCE.md, "Statistics").
 * The switch fit_tiles (for experiments, testing.h) keeps the row tiles. */
static int fit_by_groups(const cls_job *job, size_t sb)
{
    if (!job->G || !job->Rg || !job->C) return 0; /* nothing to read: no slice at all */
    if (job->ctx->tune.fit_tiles) return 0;
    return job->Rg * job->C * job->es <= sb || job->Rg * (uint64_t)4096 <= sb;
}

/* The largest slice of a resident call: the data is on the device already,
 * so slices only cut kernel launches (and the statistics of one). */
static size_t slice_bytes_for(const cls_job *job)
{
    if (!job->res) return cls_plan_slice_bytes(job);
    size_t sb = job->ctx->cfg.slice_bytes;
    return sb ? sb : (size_t)1 << 40;
}

/* A scaler that needs order statistics and no moments (robust) on host
 * data of one process is fitted by the selection alone: its count and
 * extremes are ranks of the same launch (fit_quantiles.c), so the data is
 * read once, not by a statistics pass and then by the selection. */
static int fits_by_selection(const cls_pipeline *p, const cls_resident *res, int quantiles)
{
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    return quantiles && !res && !(p->combine && p->combine->fn) && d && (d->needs & CLS_NEED_QUANTILES) &&
           !(d->needs & CLS_NEED_MOMENTS);
}

static cls_status fit_by_selection(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out)
{
    cls_stats_info info = {0};
    info.scaler = p->scaler;
    info.scope = p->scope;
    info.clip = p->clip;
    info.dtype = x->dtype;
    info.groups = p->scope == CLS_SCOPE_BATCH ? 1 : x->batch;
    info.cols = x->cols;
    info.rows = p->scope == CLS_SCOPE_BATCH ? (uint64_t)x->batch * x->rows : x->rows;
    if (is_ranged(p->scaler)) range_of(p, &info.lo, &info.hi);
    memset(&ctx->report, 0, sizeof ctx->report);
    ctx->nevents = 0;
    cls_stats *s = cls_stats_alloc(&info); /* every column written by the selection */
    if (!s) return cls_fail(ctx, CLS_E_NOMEM, "out of memory for statistics");
    cls_status st = cls_fit_by_selection(ctx, p, x, s);
    if (st == CLS_OK) *out = s;
    else cls_stats_destroy(s);
    return st;
}

/* The fit of p's statistics: one pass for what merges (count, missing,
 * extremes, moments, as the scaler's descriptor needs), then, where the
 * descriptor needs them and `quantiles`, the counting passes of the exact
 * quantiles. */
static cls_status fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_resident *res, int quantiles,
                      cls_stats **out)
{
    if (fits_by_selection(p, res, quantiles)) return fit_by_selection(ctx, p, x, out);
    cls_job job;
    cls_status st = job_init(&job, ctx, x, NULL, res);
    if (st != CLS_OK) return finish(&job, st);
    if (p->scope == CLS_SCOPE_BATCH) {
        job.Rg = job.B * job.R;
        job.G = 1;
    }
    job.moments = needs_moments(p->scaler);
    job.phases = 1;
    job.bytes_total = bytes_of(x);
    cls_team_choose(&job);
    size_t sb = slice_bytes_for(&job);
    if (fit_by_groups(&job, sb)) {
        cls_stats *s = NULL;
        st = new_stats(&job, p, 1, &s);
        if (st == CLS_OK) {
            job.sdirect = cls_stats_columns(s);
            st = run(&job, CLS_OP_FIT, sb);
        }
        if (st == CLS_OK) *out = s;
        else cls_stats_destroy(s);
    } else {
        st = run(&job, CLS_OP_STATS, sb);
        if (st == CLS_OK) st = collect_stats(&job, p, out);
    }
    st = finish(&job, st);
    if (st != CLS_OK && *out) { /* the report's assembly failed */
        cls_stats_destroy(*out);
        *out = NULL;
    }
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    if (st == CLS_OK && quantiles && d && (d->needs & CLS_NEED_QUANTILES)) {
        st = cls_fit_quantiles(ctx, p, x, *out);
        if (st != CLS_OK) {
            cls_stats_destroy(*out);
            *out = NULL;
        }
    }
    return st;
}

cls_status cls_do_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_resident *res,
                      cls_stats **out)
{
    return fit(ctx, p, x, res, 1, out);
}

static cls_status host_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, int quantiles,
                           cls_stats **out)
{
    cls_status st = cls_check_ctx(ctx);
    if (st != CLS_OK) return st;
    if (!out) return cls_fail(ctx, CLS_E_ARG, "cls_fit: out is NULL");
    *out = NULL;
    st = cls_check_array(ctx, x, "input");
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, x, NULL);
    if (st == CLS_OK && p->inverse) st = cls_fail(ctx, CLS_E_ARG, "cls_fit: an inverse pipeline cannot be fitted");
    if (st == CLS_OK && p->clean)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit: the pipeline has a cleaning stage; use cls_fit_transform");
    if (st != CLS_OK) return st;
    return fit(ctx, p, x, NULL, quantiles, out);
}

cls_status cls_host_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out)
{
    return host_fit(ctx, p, x, 1, out);
}

cls_status cls_host_fit_mergeable(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out)
{
    return host_fit(ctx, p, x, 0, out);
}

cls_status cls_chunk_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, int quantiles, cls_stats **out)
{
    *out = NULL;
    return fit(ctx, p, x, NULL, quantiles, out);
}

cls_status cls_host_fit_empty(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out)
{
    cls_job job;
    memset(&job, 0, sizeof job);
    job.ctx = ctx;
    job.dtype = x->dtype;
    job.C = x->cols;
    job.G = p->scope == CLS_SCOPE_BATCH ? 1 : x->batch;
    job.Rg = p->scope == CLS_SCOPE_BATCH ? 0 : x->rows;
    job.moments = needs_moments(p->scaler);
    return new_stats(&job, p, 0, out);
}

static void identity_copy(void *arg, size_t i)
{
    void **a = arg;
    size_t n = *(size_t *)a[2], chunk = 1u << 22;
    size_t off = i * chunk, len = n - off < chunk ? n - off : chunk;
    memcpy((char *)a[1] + off, (const char *)a[0] + off, len);
}

cls_status cls_do_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s,
                            const cls_array *in, cls_array *out, cls_resident *res)
{
    if (p->scaler == CLS_NONE && !p->factors && res) {
        cls_job job;
        cls_status st = job_init(&job, ctx, in, out, res);
        if (st == CLS_OK) st = cls_resident_copy(&job, bytes_of(in));
        return finish(&job, st);
    }
    if (p->scaler == CLS_NONE && !p->factors) {
        /* the identity: a host copy; the report lists every device, idle */
        cls_job idle;
        memset(&idle, 0, sizeof idle);
        idle.ctx = ctx;
        idle.t0 = cls_now();
        size_t n = bytes_of(in);
        if (out->data != in->data) {
            void *a[3] = {in->data, out->data, &n};
            cls_pool_run(ctx->pool, (n + (1u << 22) - 1) >> 22, identity_copy, a);
        }
        cls_status rs = cls_report_finish(&idle, cls_now() - idle.t0);
        return rs == CLS_OK ? CLS_OK : cls_fail(ctx, rs, "out of memory assembling the report");
    }
    cls_job job;
    cls_status st = job_init(&job, ctx, in, out, res);
    if (st != CLS_OK) return finish(&job, st);
    set_factors(&job, p->factors);
    job.phases = 1;
    job.bytes_total = 2 * (uint64_t)bytes_of(in);
    if (p->scaler == CLS_NONE) {
        merge_dims(&job);
    } else {
        if (p->scope == CLS_SCOPE_BATCH) {
            job.Rg = job.B * job.R;
            job.G = 1;
        }
        double lo, hi;
        range_of(p, &lo, &hi);
        if (s->info.scaler == p->scaler && is_ranged(p->scaler) && p->lo == 0 && p->hi == 0) {
            lo = s->info.lo;
            hi = s->info.hi;
        }
        job.scaler = cls_scaler_get(p->scaler) ? cls_scaler_kernel_code(p->scaler) : 0;
        job.clip = p->clip && !p->inverse;
        job.lo = lo;
        job.hi = hi;
        use_params(&job, s, p->scaler, p->inverse);
    }
    cls_team_choose(&job);
    if (st == CLS_OK) st = run(&job, CLS_OP_APPLY, slice_bytes_for(&job));
    return finish(&job, st);
}

cls_status cls_host_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                         cls_array *out)
{
    cls_status st = cls_check_ctx(ctx);
    if (st != CLS_OK) return st;
    cls_pipeline recorded;
    if (p && p->clean)
        return cls_fail(ctx, CLS_E_ARG, "cls_transform: the pipeline has a cleaning stage; use cls_fit_transform");
    if (!p) {
        if (!s) return cls_fail(ctx, CLS_E_ARG, "cls_transform: no pipeline and no statistics to take it from");
        memset(&recorded, 0, sizeof recorded);
        recorded.scaler = s->info.scaler;
        recorded.scope = s->info.scope;
        recorded.lo = s->info.lo;
        recorded.hi = s->info.hi;
        recorded.clip = s->info.clip;
        p = &recorded;
    }
    st = cls_check_io(ctx, in, out);
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, in, out);
    if (st != CLS_OK) return st;
    st = cls_check_stats(ctx, p, s, in);
    if (st != CLS_OK) return st;
    return cls_do_transform(ctx, p, s, in, out, NULL);
}

cls_status cls_chunk_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                               cls_array *out)
{
    return cls_do_transform(ctx, p, s, in, out, NULL);
}

/* cls_host_fit_transform() without its cleaning stage (clean/clean.c runs that
 * and then calls this). */
cls_status cls_fit_transform_plain(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                                   cls_stats **fitted)
{
    cls_status st = cls_check_ctx(ctx);
    if (st != CLS_OK) return st;
    if (fitted) *fitted = NULL;
    st = cls_check_fit_transform(ctx, p, NULL, 0, in, out);
    if (st == CLS_OK && p->inverse)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: inverse needs fitted statistics; use cls_transform");
    if (st != CLS_OK) return st;
    return cls_do_fit_transform(ctx, p, in, out, NULL, fitted);
}

static cls_status fit_transform_with(cls_context *ctx, const cls_pipeline *p, const cls_imp_opts *imp,
                                     const cls_array *in, cls_array *out, cls_resident *res, cls_stats **fitted);

/* The table of a fused imputation's fills, one per group and column. */
static cls_status fills_new(cls_job *job, double **fill)
{
    size_t n = (size_t)job->G * job->C;
    *fill = malloc((n ? n : 1) * sizeof **fill);
    return *fill ? CLS_OK : cls_fail(job->ctx, CLS_E_NOMEM, "out of memory for %zu fill values", n);
}

cls_status cls_do_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                                cls_resident *res, cls_stats **fitted)
{
    return fit_transform_with(ctx, p, NULL, in, out, res, fitted);
}

cls_status cls_do_fit_transform_imp(cls_context *ctx, const cls_pipeline *p, const cls_imp_opts *imp,
                                    const cls_array *in, cls_array *out, cls_stats **fitted)
{
    return fit_transform_with(ctx, p, imp, in, out, NULL, fitted);
}

/* `imp` (impute_fused.c) comes only with a scaler that fuses, or none
 * (imputation alone: the identity map, the kernels' CLS_KS_IDENT). */
static cls_status fit_transform_with(cls_context *ctx, const cls_pipeline *p, const cls_imp_opts *imp,
                                     const cls_array *in, cls_array *out, cls_resident *res, cls_stats **fitted)
{
    cls_status st;
    if (p->scaler == CLS_NONE && !imp) {
        /* nothing to fit for the transform; a caller asking for statistics
         * gets all of them from a pass of its own */
        cls_stats *s = NULL;
        if (fitted) {
            st = cls_do_fit(ctx, p, in, res, &s);
            if (st != CLS_OK) return st;
        }
        st = cls_do_transform(ctx, p, s, in, out, res);
        if (st == CLS_OK && fitted) *fitted = s;
        else cls_stats_destroy(s);
        return st;
    }

    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    if (d && !d->fused) {
        /* statistics the fused kernel cannot take (quantiles): a fit of
         * their own, then the scaling pass with the host's params */
        cls_stats *s = NULL;
        st = cls_do_fit(ctx, p, in, res, &s);
        if (st == CLS_OK) st = cls_do_transform(ctx, p, s, in, out, res);
        if (st == CLS_OK && fitted) *fitted = s;
        else cls_stats_destroy(s);
        return st;
    }

    cls_job job;
    st = job_init(&job, ctx, in, out, res);
    if (st != CLS_OK) return finish(&job, st);
    set_factors(&job, p->factors);
    if (p->scope == CLS_SCOPE_BATCH) {
        job.Rg = job.B * job.R;
        job.G = 1;
    }
    /* imputation alone: the identity map after the fill */
    job.scaler = cls_scaler_kernel_code(p->scaler); /* CLS_NONE: the identity's */
    job.moments = p->scaler != CLS_NONE && needs_moments(p->scaler);
    job.clip = p->clip;
    range_of(p, &job.lo, &job.hi);
    /* imputation: the statistics are wanted for the caller's outputs too,
     * with the moments (the statistics the cleaning stage returns); a mean
     * fill needs the mean, which the min/max kernel of one pass sums
     * itself (the chunked statistics do not) */
    int want = fitted != NULL;
    double *fill = NULL;
    if (imp) {
        job.imp_on = 1;
        job.imp = imp->imp;
        job.sent = imp->has_sent ? imp->sent : NAN;
        job.fillc = imp->fillc;
        want = want || imp->missing_out || imp->fill_out;
        if (want || (imp->imp == 1 && job.Rg > CLS_FUSED_ROWS)) job.moments = 1;
    }
    cls_team_choose(&job);
    size_t sb = slice_bytes_for(&job);
    cls_stats *s = NULL;
    if (one_pass(&job, sb)) {
        /* Groups too tall for one work-item are read twice in one slice
         * (statistics, then scaling): on a CPU the slice must stay in its
         * cache for the second read not to go to memory again. */
        if (job.Rg > CLS_FUSED_ROWS && !job.res) {
            size_t cap = cache_slice_bytes(&job);
            uint64_t min_block = job.Rg * (job.C < 64 ? job.C : 64) * job.es;
            if (cap && cap < sb && cap >= min_block) sb = cap;
        }
        job.phases = 1;
        job.bytes_total = 2 * (uint64_t)bytes_of(in);
        job.no_stats = !want;
        /* whole groups per slice: each column's statistics come from one
         * slice, written straight into the result (as the fit's), not into
         * per-slice entries merged after the run: asking for them cost
         * 1.66-1.70x the call without (z-score per matrix, 18 x 60 x 20000
         * and seed-A's shape: a second table, its page faults and a merge
         * per column) */
        if (want) {
            st = new_stats(&job, p, 1, &s);
            if (st == CLS_OK) job.sdirect = cls_stats_columns(s);
        }
        /* imputation: each column's fill and imputed statistics made as
         * its slice finishes (slice.c) */
        if (st == CLS_OK && want && imp) st = fills_new(&job, &fill);
        job.fill_direct = fill;
        job.miss_direct = imp ? imp->missing_out : NULL;
        if (st == CLS_OK) st = run(&job, CLS_OP_FUSED, sb);
    } else {
        job.phases = 2;
        job.bytes_total = 3 * (uint64_t)bytes_of(in);
        st = run(&job, CLS_OP_STATS, sb);
        if (st == CLS_OK) st = collect_stats(&job, p, &s);
        /* imputation: the fills, and s made the imputed columns'
         * statistics, which give the params */
        if (st == CLS_OK && imp) st = fills_new(&job, &fill);
        if (st == CLS_OK && imp) {
            cls_impute_columns(s->col, (size_t)job.G * job.C, job.Rg, imp->imp, imp->fillc, job.dtype, fill,
                               imp->missing_out);
            job.ifill = fill;
        }
        if (st == CLS_OK) {
            use_params(&job, s, p->scaler, 0);
            cls_plan_reuse_for_apply(&job);
            st = cls_params_prepare(&job);
        }
        if (st == CLS_OK) {
            job.phase = 2;
            st = job.res ? cls_resident_phase(&job) : cls_run_phase(&job);
            job.slices_all += job.nsl;
            job.done_all += job.done;
        }
    }
    if (st == CLS_OK && fill && imp->fill_out) memcpy(imp->fill_out, fill, (size_t)job.G * job.C * sizeof *fill);
    if (st == CLS_OK && fitted) *fitted = s;
    else cls_stats_destroy(s);
    st = finish(&job, st);
    free(fill);
    return st;
}
