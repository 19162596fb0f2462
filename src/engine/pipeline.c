/* The public pipeline calls: cls_fit, cls_transform, cls_fit_transform.
 * Owns: argument checks (nothing is touched before they pass), which devices
 * take part (float64 needs cl_khr_fp64), the choice between one pass of
 * self-contained slices and two passes with a host merge between them, the
 * scaler's params on the host, and the assembly of the statistics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/select.h"
#include "job.h"
#include "stats/quantile.h"
#include "util/pool.h"

/* ---- argument checks ---- */

cls_status cls_check_shape(cls_context *ctx, const cls_array *a, const char *what)
{
    if (a->dtype != CLS_F32 && a->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "%s: dtype %d is neither CLS_F32 nor CLS_F64", what, (int)a->dtype);
    if (a->batch == 0 || a->rows == 0 || a->cols == 0)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu has a zero dimension", what, a->batch,
                        a->rows, a->cols);
    /* no machine addresses more than 2^48 bytes; a larger shape is a bug in
     * the caller, not data */
    const size_t limit = (size_t)1 << 48;
    size_t es = a->dtype == CLS_F64 ? 8 : 4, n = a->batch;
    if (n > SIZE_MAX / a->rows || (n *= a->rows) > SIZE_MAX / a->cols || (n *= a->cols) > SIZE_MAX / es)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu overflows size_t", what, a->batch, a->rows,
                        a->cols);
    if (n > limit / es)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu is larger than any address space (2^48 bytes)",
                        what, a->batch, a->rows, a->cols);
    return CLS_OK;
}

static cls_status check_array(cls_context *ctx, const cls_array *a, const char *what)
{
    if (!a) return cls_fail(ctx, CLS_E_ARG, "%s is NULL", what);
    if (!a->data) return cls_fail(ctx, CLS_E_ARG, "%s: data is NULL", what);
    return cls_check_shape(ctx, a, what);
}

static size_t bytes_of(const cls_array *a)
{
    return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4);
}

static int overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const char *x = a, *y = b;
    return x < y + nb && y < x + na;
}

static cls_status check_io(cls_context *ctx, const cls_array *in, const cls_array *out)
{
    cls_status st = check_array(ctx, in, "input");
    if (st == CLS_OK) st = check_array(ctx, out, "output");
    if (st != CLS_OK) return st;
    if (in->dtype != out->dtype || in->batch != out->batch || in->rows != out->rows || in->cols != out->cols)
        return cls_fail(ctx, CLS_E_ARG, "output %zu x %zu x %zu %s differs from input %zu x %zu x %zu %s",
                        out->batch, out->rows, out->cols, out->dtype == CLS_F64 ? "float64" : "float32",
                        in->batch, in->rows, in->cols, in->dtype == CLS_F64 ? "float64" : "float32");
    if (in->data != out->data && overlap(in->data, bytes_of(in), out->data, bytes_of(out)))
        return cls_fail(ctx, CLS_E_ARG, "input and output overlap without being the same array");
    return CLS_OK;
}

cls_status cls_check_pipeline(cls_context *ctx, const cls_pipeline *p, const cls_array *x,
                              const cls_array *out)
{
    if (!p) return cls_fail(ctx, CLS_E_ARG, "pipeline is NULL");
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    if (!d && p->scaler != CLS_NONE)
        return cls_fail(ctx, CLS_E_ARG, "pipeline: unknown scaler %d", (int)p->scaler);
    if ((unsigned)p->scope > CLS_SCOPE_BATCH)
        return cls_fail(ctx, CLS_E_ARG, "pipeline: unknown scope %d", (int)p->scope);
    if (d && d->ranged && !(p->lo == 0 && p->hi == 0)
        && (!isfinite(p->lo) || !isfinite(p->hi) || !(p->lo < p->hi)))
        return cls_fail(ctx, CLS_E_ARG, "pipeline: min-max range [%g, %g] must have lo < hi, both finite",
                        p->lo, p->hi);
    if (p->clip && !(d && d->ranged))
        return cls_fail(ctx, CLS_E_ARG, "pipeline: clip applies to the min-max scaler only");
    if (!(p->qmin == 0 && p->qmax == 0) &&
        !(p->qmin >= 0 && p->qmin <= p->qmax && p->qmax <= 100))
        return cls_fail(ctx, CLS_E_ARG, "pipeline: quantile range [%g, %g] must have 0 <= qmin <= qmax <= 100",
                        p->qmin, p->qmax);
    if ((p->no_centering || p->no_scaling || p->unit_variance || p->qmin != 0 || p->qmax != 0) &&
        p->scaler != CLS_ROBUST)
        return cls_fail(ctx, CLS_E_ARG, "pipeline: the quantile range, no_centering, no_scaling and "
                        "unit_variance apply to the robust scaler only");
    const cls_array *f = p->factors;
    if (!f) return CLS_OK;
    cls_status st = check_array(ctx, f, "factors");
    if (st != CLS_OK) return st;
    if (f->dtype != x->dtype)
        return cls_fail(ctx, CLS_E_ARG, "factors are %s but the data is %s",
                        f->dtype == CLS_F64 ? "float64" : "float32", x->dtype == CLS_F64 ? "float64" : "float32");
    if ((f->batch != 1 && f->batch != x->batch) || (f->rows != 1 && f->rows != x->rows)
        || (f->cols != 1 && f->cols != x->cols))
        return cls_fail(ctx, CLS_E_ARG,
                        "factors of shape %zu x %zu x %zu do not broadcast against data %zu x %zu x %zu "
                        "(each dimension must equal the data's or be 1)",
                        f->batch, f->rows, f->cols, x->batch, x->rows, x->cols);
    if (out && overlap(f->data, bytes_of(f), out->data, bytes_of(out)))
        return cls_fail(ctx, CLS_E_ARG, "factors overlap the output");
    return CLS_OK;
}

cls_status cls_check_ctx(cls_context *ctx)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    return CLS_OK;
}

static unsigned scaler_code(cls_scaler s)
{
    const cls_scaler_desc *d = cls_scaler_get(s);
    return d ? d->kernel : 0;
}

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

static void job_free(cls_job *job)
{
    for (size_t i = 0; i < job->nsl; i++)
        if (job->sl[i].resident) clReleaseMemObject(job->sl[i].resident);
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].factors) clReleaseMemObject(job->runs[i].factors);
    for (size_t i = 0; i < job->nruns; i++)
        if (job->runs[i].ptab) clReleaseMemObject(job->runs[i].ptab); /* before the table it may use */
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
    double wall = cls_now() - job->t0;
    if (st == CLS_OK) cls_team_record(job, wall);
    cls_status rs = cls_report_finish(job, wall);
    if (st == CLS_OK && rs != CLS_OK) st = cls_fail(job->ctx, rs, "out of memory assembling the report");
    job_free(job);
    return st;
}

/* The job's per-slice statistics merged, in slice order, into a new object. */
static cls_status collect_stats(cls_job *job, const cls_pipeline *p, cls_stats **out)
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
    cls_stats *s = cls_stats_new(&info);
    if (!s) return cls_fail(job->ctx, CLS_E_NOMEM, "out of memory for statistics");
    for (size_t i = 0; i < job->nsl; i++) {
        const cls_slice *sl = &job->sl[i];
        uint64_t groups = sl->op == CLS_OP_FUSED ? sl->ngroups : 1;
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
 * before the run (for seed-A's shape, 57 MB and 28 ms, serial, on a fresh
 * allocation; docs/PERFORMANCE.md, 19). */
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

/* The robust scaler's median and quantile range, by counting passes on the
 * devices (engine/select.c): six ranks per column, the two middle ones and
 * the two around each end of the range. */
static void robust_ranks(void *user, uint64_t n, uint64_t *r)
{
    const cls_scaler_opts *o = user;
    double g;
    cls_median_ranks(n, &r[0], &r[1]);
    cls_quantile_ranks(o->qmin / 100.0, n, &r[2], &r[3], &g);
    cls_quantile_ranks(o->qmax / 100.0, n, &r[4], &r[5], &g);
}

static double quantile_of(const double *v, uint64_t n, double q, cls_dtype t)
{
    uint64_t lo, hi;
    double g;
    cls_quantile_ranks(q, n, &lo, &hi, &g);
    return lo == hi ? v[0] : cls_quantile_lerp(v[0], v[1], g, t);
}

static cls_status fit_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats *s)
{
    cls_scaler_opts o = cls_scaler_opts_of(p);
    cls_qview v = {x->data, x->dtype, p->scope == CLS_SCOPE_BATCH ? 1 : x->batch,
                   p->scope == CLS_SCOPE_BATCH ? (uint64_t)x->batch * x->rows : x->rows, x->cols};
    size_t n = (size_t)v.G * v.C;
    uint64_t *cnt = malloc(n * sizeof *cnt);
    double *vals = malloc(n * 6 * sizeof *vals);
    cls_status st = cnt && vals ? CLS_OK : cls_fail(ctx, CLS_E_NOMEM, "out of memory for quantiles");
    if (st == CLS_OK) st = cls_select(ctx, &v, NULL, 6, robust_ranks, &o, cnt, vals);
    for (size_t e = 0; st == CLS_OK && e < n; e++) {
        cls_column_stats *c = &s->col[e];
        const double *pv = vals + e * 6;
        if (!cnt[e]) continue;
        c->median = cls_median_of(pv[0], pv[1], cnt[e], x->dtype);
        c->q_lo = quantile_of(pv + 2, cnt[e], o.qmin / 100.0, x->dtype);
        c->q_hi = quantile_of(pv + 4, cnt[e], o.qmax / 100.0, x->dtype);
    }
    if (st == CLS_OK) {
        s->info.has_quantiles = 1;
        s->info.qmin = o.qmin;
        s->info.qmax = o.qmax;
        s->info.no_centering = !o.center;
        s->info.no_scaling = !o.scale;
        s->info.unit_variance = o.unit_variance;
    }
    free(cnt);
    free(vals);
    return st;
}

/* The largest slice of a resident call: the data is on the device already,
 * so slices only cut kernel launches (and the statistics of one). */
static size_t slice_bytes_for(const cls_job *job)
{
    if (!job->res) return cls_plan_slice_bytes(job);
    size_t sb = job->ctx->cfg.slice_bytes;
    return sb ? sb : (size_t)1 << 40;
}

cls_status cls_do_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_resident *res,
                      cls_stats **out)
{
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
    st = run(&job, CLS_OP_STATS, slice_bytes_for(&job));
    if (st == CLS_OK) st = collect_stats(&job, p, out);
    st = finish(&job, st);
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    if (st == CLS_OK && d && (d->needs & CLS_NEED_QUANTILES)) {
        st = fit_quantiles(ctx, p, x, *out);
        if (st != CLS_OK) {
            cls_stats_destroy(*out);
            *out = NULL;
        }
    }
    return st;
}

cls_status cls_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out)
{
    cls_status st = cls_check_ctx(ctx);
    if (st != CLS_OK) return st;
    if (!out) return cls_fail(ctx, CLS_E_ARG, "cls_fit: out is NULL");
    *out = NULL;
    st = check_array(ctx, x, "input");
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, x, NULL);
    if (st == CLS_OK && p->inverse) st = cls_fail(ctx, CLS_E_ARG, "cls_fit: an inverse pipeline cannot be fitted");
    if (st == CLS_OK && p->clean)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit: the pipeline has a cleaning stage; use cls_fit_transform");
    if (st != CLS_OK) return st;
    return cls_do_fit(ctx, p, x, NULL, out);
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
        job.scaler = scaler_code(p->scaler);
        job.clip = p->clip && !p->inverse;
        job.lo = lo;
        job.hi = hi;
        use_params(&job, s, p->scaler, p->inverse);
    }
    cls_team_choose(&job);
    if (st == CLS_OK) st = run(&job, CLS_OP_APPLY, slice_bytes_for(&job));
    return finish(&job, st);
}

cls_status cls_check_stats(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in)
{
    if (p->scaler != CLS_NONE) {
        if (!s) return cls_fail(ctx, CLS_E_ARG, "cls_transform: the scaler needs fitted statistics (s is NULL)");
        size_t groups = p->scope == CLS_SCOPE_MATRIX ? in->batch : 1;
        if (s->info.scope != p->scope)
            return cls_fail(ctx, CLS_E_ARG, "statistics were fitted with scope %s, the pipeline asks for %s",
                            s->info.scope == CLS_SCOPE_MATRIX ? "matrix" : "batch",
                            p->scope == CLS_SCOPE_MATRIX ? "matrix" : "batch");
        if (s->info.cols != in->cols || s->info.groups != groups)
            return cls_fail(ctx, CLS_E_ARG,
                            "statistics of %zu group(s) x %zu columns do not fit data %zu x %zu x %zu (scope %s "
                            "needs %zu group(s) x %zu columns)",
                            s->info.groups, s->info.cols, in->batch, in->rows, in->cols,
                            p->scope == CLS_SCOPE_MATRIX ? "matrix" : "batch", groups, in->cols);
        const cls_scaler_desc *want = cls_scaler_get(p->scaler), *had = cls_scaler_get(s->info.scaler);
        if ((want->needs & CLS_NEED_QUANTILES) && !s->info.has_quantiles)
            return cls_fail(ctx, CLS_E_ARG,
                            "%s needs the median and a quantile range, but these statistics were fitted for %s "
                            "without them; fit with CLS_ROBUST",
                            want->name, had ? had->name : "no scaler");
        if ((want->needs & CLS_NEED_MOMENTS) && !s->info.has_moments)
            return cls_fail(ctx, CLS_E_ARG,
                            "%s needs means and variances, but these statistics were fitted for %s "
                            "(min/max only); fit with CLS_ZSCORE or CLS_NONE",
                            want->name, had ? had->name : "no scaler");
    }
    return CLS_OK;
}

cls_status cls_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
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
    st = check_io(ctx, in, out);
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, in, out);
    if (st != CLS_OK) return st;
    st = cls_check_stats(ctx, p, s, in);
    if (st != CLS_OK) return st;
    return cls_do_transform(ctx, p, s, in, out, NULL);
}

/* cls_fit_transform() without its cleaning stage (engine/clean.c runs that
 * and then calls this). */
cls_status cls_fit_transform_plain(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                                   cls_stats **fitted)
{
    cls_status st = cls_check_ctx(ctx);
    if (st != CLS_OK) return st;
    if (fitted) *fitted = NULL;
    st = check_io(ctx, in, out);
    if (st == CLS_OK) st = cls_check_pipeline(ctx, p, in, out);
    if (st == CLS_OK && p->inverse)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: inverse needs fitted statistics; use cls_transform");
    if (st != CLS_OK) return st;
    return cls_do_fit_transform(ctx, p, in, out, NULL, fitted);
}

cls_status cls_do_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                                cls_resident *res, cls_stats **fitted)
{
    cls_status st;
    if (p->scaler == CLS_NONE) {
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
    if (!d->fused) {
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
    job.scaler = scaler_code(p->scaler);
    job.moments = needs_moments(p->scaler);
    job.clip = p->clip;
    range_of(p, &job.lo, &job.hi);
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
        job.no_stats = fitted == NULL;
        st = run(&job, CLS_OP_FUSED, sb);
        if (st == CLS_OK && fitted) st = collect_stats(&job, p, &s);
    } else {
        job.phases = 2;
        job.bytes_total = 3 * (uint64_t)bytes_of(in);
        st = run(&job, CLS_OP_STATS, sb);
        if (st == CLS_OK) st = collect_stats(&job, p, &s);
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
    if (st == CLS_OK && fitted) *fitted = s;
    else cls_stats_destroy(s);
    return finish(&job, st);
}
