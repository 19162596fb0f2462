/* The front door: cls_fit, cls_transform, cls_fit_transform, cls_quantiles,
 * cls_medians, cls_describe and cls_stats_fit_quantiles take data wherever it lives (a
 * cls_array's `where`) and a pipeline that may span processes (its
 * `combine`), and hand each call to the engine's entry point for that kind
 * of data (api/entries.h).
 * Owns: the checks of what the public calls add (the data's kind, input and
 * output of one kind, a combine hook where none can apply); the route of
 * each fit (plan/route.c's decisions: the entry point, fusing, counting
 * passes, streaming), made here once per call and passed down to the entry
 * and the stages that act on it. The engine's calls check the rest. */
#include <math.h>

#include "internal.h"
#include "api/entries.h"
#include "plan/route.h"

static cls_buffer buffer_of(const cls_array *a)
{
    return (cls_buffer){.mem = a->mem, .offset = (size_t)a->offset, .dtype = a->dtype, .batch = a->batch,
                        .rows = a->rows, .cols = a->cols};
}

static cls_file_array file_of(const cls_array *a)
{
    return (cls_file_array){.fd = a->fd, .offset = a->offset, .dtype = a->dtype, .batch = a->batch,
                            .rows = a->rows, .cols = a->cols, .name = a->path};
}

static int combined(const cls_pipeline *p) { return p && p->combine && p->combine->fn; }

/* The common checks; CLS_OK when the call may go on. */
static cls_status door(cls_context *ctx, const char *fn, const cls_array *in, const cls_array *out)
{
    if (!ctx) return cls_fail_thread(CLS_E_ARG, "%s: NULL context", fn);
    if (!in) return cls_fail(ctx, CLS_E_ARG, "%s: the input array is NULL", fn);
    if ((unsigned)in->where > CLS_IN_NPY) return cls_fail(ctx, CLS_E_ARG, "%s: unknown where %d", fn, (int)in->where);
    if (out && out->where != in->where)
        return cls_fail(ctx, CLS_E_ARG, "%s: the input and the output live in different kinds of place (where %d "
                        "and %d)", fn, (int)in->where, (int)out->where);
    if (in->where == CLS_IN_NPY && (!in->path || (out && !out->path)))
        return cls_fail(ctx, CLS_E_ARG, "%s: a .npy array without a path", fn);
    return CLS_OK;
}

/* The route's refusal: every process is told. */
static cls_status refuse_route(cls_context *ctx, const cls_pipeline *p, const char *fn, const cls_route *r)
{
    cls_status st = cls_fail(ctx, r->refusal, "%s: %s", fn, r->why);
    if (r->combined) return p->combine->stats ? p->combine->stats(p->combine->user, st, NULL, 0)
                                              : p->combine->fn(p->combine->user, st, NULL, 0);
    return st;
}

/* A combine hook where the call cannot combine: every process is told. */
static cls_status refuse_combine(cls_context *ctx, const cls_pipeline *p, const char *fn)
{
    cls_status st = cls_fail(ctx, CLS_E_UNSUPPORTED, "%s: no combine hook here (a fit takes it on host arrays "
                             "and files; a transform is each process's own)", fn);
    const cls_combine *cb = p->combine;
    return cb->stats ? cb->stats(cb->user, st, NULL, 0) : cb->fn(cb->user, st, NULL, 0);
}

cls_status cls_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out)
{
    if (out) *out = NULL;
    cls_status st = door(ctx, "cls_fit", x, NULL);
    if (st != CLS_OK) return st;
    cls_route r;
    cls_route_fit(p, x, &ctx->tune, &r);
    switch (r.entry) {
    case CLS_ENTRY_BUFFER: {
        cls_buffer b = buffer_of(x);
        return cls_buf_fit(ctx, p, &b, x->sync, out);
    }
    case CLS_ENTRY_FILE: {
        /* across processes: the planner's steps */
        if (r.combined) return cls_file_fit_combined(ctx, p, &r, x, out);
        cls_file_array f = file_of(x);
        return cls_file_fit(ctx, p, &r, &f, x->stream, out);
    }
    case CLS_ENTRY_NPY: return cls_npy_run(ctx, p, &r, NULL, x->path, NULL, x->stream, out);
    case CLS_ENTRY_HOST:
    case CLS_ENTRY_HOST_CLEAN:
    case CLS_ENTRY_HOST_BIN:
        return r.combined ? cls_host_fit_combined(ctx, p, x, out) : cls_host_fit(ctx, p, x, out);
    case CLS_ENTRY_REFUSED: break;
    }
    return refuse_route(ctx, p, "cls_fit", &r);
}

cls_status cls_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                         cls_array *out)
{
    cls_status st = door(ctx, "cls_transform", in, out);
    if (st != CLS_OK) return st;
    if (combined(p)) return refuse_combine(ctx, p, "cls_transform");
    if (!out && in->where != CLS_IN_HOST) return cls_fail(ctx, CLS_E_ARG, "cls_transform: NULL output array");
    switch (in->where) {
    case CLS_IN_BUFFER: {
        cls_buffer a = buffer_of(in), b = buffer_of(out);
        return cls_buf_transform(ctx, p, s, &a, &b, in->sync);
    }
    case CLS_IN_FILE: {
        cls_file_array a = file_of(in), b = file_of(out);
        return cls_file_transform(ctx, p, s, &a, &b, in->stream);
    }
    case CLS_IN_NPY:
        if (!s) return cls_fail(ctx, CLS_E_ARG, "cls_transform: no statistics");
        return cls_npy_run(ctx, p, NULL, s, in->path, out->path, in->stream, NULL);
    default: return cls_host_transform(ctx, p, s, in, out);
    }
}

cls_status cls_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                             cls_stats **fitted)
{
    if (fitted) *fitted = NULL;
    cls_status st = door(ctx, "cls_fit_transform", in, out);
    if (st != CLS_OK) {
        /* every process learns of a failure before its first pass */
        if (combined(p) && ctx) return refuse_combine(ctx, p, "cls_fit_transform");
        return st;
    }
    cls_route r;
    cls_route_fit_transform(p, in, out, fitted != NULL, &ctx->tune, &r);
    if (!out && r.entry != CLS_ENTRY_HOST_CLEAN)
        return cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: NULL output array");
    switch (r.entry) {
    case CLS_ENTRY_BUFFER: {
        cls_buffer a = buffer_of(in), b = buffer_of(out);
        return cls_buf_fit_transform(ctx, p, &a, &b, fitted, in->sync);
    }
    case CLS_ENTRY_FILE: {
        cls_file_array a = file_of(in), b = file_of(out);
        if (r.combined && !r.cleans) return cls_file_fit_transform_across(ctx, p, &r, in, out, fitted);
        if (r.combined) return cls_file_fit_transform_combined(ctx, p, &r, &a, &b, in->stream, p->combine, fitted);
        return cls_file_fit_transform(ctx, p, &r, &a, &b, in->stream, fitted);
    }
    case CLS_ENTRY_NPY: return cls_npy_run(ctx, p, &r, NULL, in->path, out->path, in->stream, fitted);
    case CLS_ENTRY_HOST_BIN: return cls_host_bin(ctx, &r, p->clean, p->scope, in, out);
    case CLS_ENTRY_HOST_CLEAN:
        return r.combined ? cls_host_clean_combined(ctx, &r, p->clean, p->scope, in, out, p->combine)
                          : cls_host_clean(ctx, &r, p->clean, p->scope, in, out);
    case CLS_ENTRY_HOST:
        /* the route said whether it cleans: the cleaning stage only when it does */
        if (r.combined) return r.cleans ? cls_host_fit_transform_combined(ctx, p, &r, in, out, p->combine, fitted)
                                        : cls_host_fit_transform_across(ctx, p, in, out, fitted);
        return r.cleans ? cls_host_fit_transform(ctx, p, &r, in, out, fitted)
                        : cls_fit_transform_plain(ctx, p, in, out, fitted);
    case CLS_ENTRY_REFUSED: break;
    }
    return refuse_route(ctx, p, "cls_fit_transform", &r);
}

/* quantiles and medians: host arrays, scope and combine from p */
static cls_status select_door(cls_context *ctx, const char *fn, const cls_pipeline *p, const cls_array *x)
{
    cls_status st = CLS_OK;
    if (!ctx) st = cls_fail_thread(CLS_E_ARG, "%s: NULL context", fn);
    else if (p && p->clean)
        st = cls_fail(ctx, CLS_E_ARG, "%s: the pipeline has a cleaning stage (clean first with cls_fit_transform)", fn);
    else if (x && x->where != CLS_IN_HOST)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "%s: the data must be in host memory (where %d)", fn, (int)x->where);
    if (st != CLS_OK && combined(p)) return p->combine->fn(p->combine->user, st, NULL, 0);
    return st;
}

cls_status cls_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x, const double *q, size_t nq,
                         double *out)
{
    cls_status st = select_door(ctx, "cls_quantiles", p, x);
    if (st != CLS_OK) return st;
    cls_scope scope = p ? p->scope : CLS_SCOPE_MATRIX;
    if (combined(p)) return cls_host_quantiles_combined(ctx, x, scope, q, nq, p->combine, out);
    return cls_host_quantiles(ctx, x, scope, q, nq, out);
}

cls_status cls_medians(cls_context *ctx, const cls_pipeline *p, const cls_array *x, double *out)
{
    cls_status st = select_door(ctx, "cls_medians", p, x);
    if (st != CLS_OK) return st;
    cls_scope scope = p ? p->scope : CLS_SCOPE_MATRIX;
    if (combined(p)) return cls_host_medians_combined(ctx, x, scope, p->combine, out);
    return cls_host_medians(ctx, x, scope, out);
}

cls_status cls_describe(cls_context *ctx, const cls_array *x, cls_scope scope, double sigma, cls_summary *out)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    if (!x || !out || !out->columns) return cls_fail(ctx, CLS_E_ARG, "cls_describe: NULL argument");
    if ((unsigned)scope > CLS_SCOPE_BATCH) return cls_fail(ctx, CLS_E_ARG, "cls_describe: unknown scope %d", (int)scope);
    if (sigma == 0) sigma = 3;
    if (!(sigma > 0) || !(sigma < INFINITY))
        return cls_fail(ctx, CLS_E_ARG, "cls_describe: sigma %g must be a finite number above 0", sigma);
    switch (x->where) {
    case CLS_IN_HOST: return cls_host_describe(ctx, x, scope, sigma, out);
    case CLS_IN_FILE:
    case CLS_IN_NPY:
        if (x->where == CLS_IN_NPY && !x->path) return cls_fail(ctx, CLS_E_ARG, "cls_describe: a .npy array without a path");
        return cls_file_describe(ctx, x, scope, sigma, out);
    default:
        return cls_fail(ctx, CLS_E_UNSUPPORTED, "cls_describe: the data must be in host memory or in a file (where %d)",
                        (int)x->where);
    }
}
