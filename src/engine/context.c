/* The context: configuration (with the tests' and experiments' switches of
 * testing.h, never the environment beyond CLSCALE_DEVICES and
 * CLSCALE_CACHE_DIR), the selected devices with their OpenCL
 * contexts (one per platform) and queues, and the first kernel build of
 * each (program.c builds the others when calls need them) with the
 * zero-copy check that needs it, done in parallel per distinct device
 * (identical devices share one build through the binary cache, unless
 * build_slot.c keeps their programs apart). A device that fails at any
 * step is dropped and the others go on (dropped.c); creation fails only
 * when none is left. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "job.h"
#include "util/pool.h"
#include "util/table.h"

/* testing.h's switches for the contexts created next */
static cls_tuning default_tune;
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;

void cls_tuning_default(const cls_tuning *t)
{
    pthread_mutex_lock(&default_lock);
    if (t) default_tune = *t;
    else memset(&default_tune, 0, sizeof default_tune);
    pthread_mutex_unlock(&default_lock);
}

cls_tuning *cls_context_tuning(cls_context *ctx) { return ctx ? &ctx->tune : NULL; }

static cls_status read_config(cls_context *ctx, const cls_config *cfg)
{
    cls_config def = {0};
    if (!cfg) cfg = &def;
    ctx->cfg = *cfg;
    const char *sel = cfg->devices;
    if (!sel) sel = getenv("CLSCALE_DEVICES");
    if (!sel || !*sel) sel = "all";
    ctx->selector = strdup(sel);
    const char *env_cache = getenv("CLSCALE_CACHE_DIR");
    if (cfg->cache_dir) {
        ctx->cache_dir = strdup(cfg->cache_dir);
    } else if (env_cache) {
        ctx->cache_dir = strdup(env_cache);
    } else {
        char dir[4096];
        cls_cache_default_dir(dir, sizeof dir);
        ctx->cache_dir = strdup(dir);
    }
    if (!ctx->selector || !ctx->cache_dir) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    ctx->cfg.devices = ctx->selector;
    ctx->cfg.cache_dir = ctx->cache_dir;
    if (cfg->queues > CLS_MAX_QUEUES)
        return cls_fail(ctx, CLS_E_ARG, "cls_config.queues = %u: at most %d queues per device",
                        cfg->queues, CLS_MAX_QUEUES);
    ctx->flags = cfg->flags;
    pthread_mutex_lock(&default_lock);
    ctx->tune = default_tune;
    pthread_mutex_unlock(&default_lock);
    if (ctx->tune.force_staging && !(ctx->force_staging = strdup(ctx->tune.force_staging)))
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    ctx->tune.force_staging = ctx->force_staging;
    return CLS_OK;
}

/* One OpenCL context per platform, holding that platform's selected devices,
 * so that pinned host memory of one context serves all its devices. A
 * platform whose context cannot be made loses its devices. */
static cls_status make_cl_contexts(cls_context *ctx)
{
    ctx->cls = calloc(ctx->ndevs ? ctx->ndevs : 1, sizeof *ctx->cls);
    if (!ctx->cls) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    cl_device_id *ids = calloc(ctx->ndevs ? ctx->ndevs : 1, sizeof *ids);
    if (!ids) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    for (size_t i = 0; i < ctx->ndevs; i++) {
        if (ctx->devs[i].cl || ctx->devs[i].drop_st != CLS_OK) continue;
        cl_platform_id p = ctx->devs[i].platform;
        size_t n = 0;
        for (size_t j = i; j < ctx->ndevs; j++)
            if (ctx->devs[j].platform == p) ids[n++] = ctx->devs[j].id;
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
        cl_int e;
        cl_context c = clCreateContext(props, (cl_uint)n, ids, NULL, NULL, &e);
        if (e != CL_SUCCESS) {
            cls_status st = cls_fail_cl(ctx, &ctx->devs[i], "clCreateContext", e);
            for (size_t j = i; j < ctx->ndevs; j++)
                if (ctx->devs[j].platform == p) cls_drop_mark(&ctx->devs[j], st, "creating its OpenCL context");
            continue;
        }
        ctx->cls[ctx->ncls++] = c;
        for (size_t j = i; j < ctx->ndevs; j++)
            if (ctx->devs[j].platform == p) ctx->devs[j].cl = c;
    }
    free(ids);
    return CLS_OK;
}

static cls_status make_queues(cls_context *ctx, cls_dev *dev)
{
    dev->nq = ctx->cfg.queues ? ctx->cfg.queues : CLS_DEFAULT_QUEUES;
    dev->profiling = (ctx->flags & CLS_PROFILE) != 0;
    cl_command_queue_properties props = dev->profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
    for (unsigned i = 0; i < dev->nq; i++) {
        cl_int e;
        dev->q[i] = clCreateCommandQueue(dev->cl, dev->id, props, &e);
        if (e != CL_SUCCESS) {
            dev->q[i] = NULL;
            return cls_fail_cl(ctx, dev, "clCreateCommandQueue", e);
        }
    }
    return CLS_OK;
}

/* What a dropped device holds, released. */
static void release_dev(cls_dev *d)
{
    cls_stage_release(d);
    for (unsigned q = 0; q < d->nq; q++)
        if (d->q[q]) clReleaseCommandQueue(d->q[q]);
    cls_program_release(d);
    cls_build_slot_give(d);
    free(d->strings);
    free(d->drop_why);
}

/* Builds run on one thread per distinct (platform, device name, driver); a
 * group's devices build one after another, the later ones from the cache. */
typedef struct build_group {
    cls_context *ctx;
    size_t first;
    pthread_t thread;
    int started;
} build_group;

static int same_kind(const cls_dev *a, const cls_dev *b)
{
    return a->platform == b->platform && !strcmp(a->info.name, b->info.name)
           && !strcmp(a->info.driver, b->info.driver);
}

static void *build_thread(void *arg)
{
    build_group *g = arg;
    cls_context *ctx = g->ctx;
    for (size_t i = g->first; i < ctx->ndevs; i++) {
        cls_dev *d = &ctx->devs[i];
        if (i != g->first && !same_kind(d, &ctx->devs[g->first])) continue;
        if (d->drop_st != CLS_OK) continue;
        cls_status st = cls_program_build(ctx, d);
        if (st != CLS_OK) {
            cls_drop_mark(d, st, "building its first kernel");
            continue;
        }
        /* the one-off check of zero copy, here so that a device failing it
         * sits out for good like one that fails to build */
        if (d->zero_copy && !d->zc_checked) st = cls_zero_copy_check(ctx, d);
        if (st != CLS_OK) cls_drop_mark(d, st, "the zero-copy check");
        else d->alive = 1;
    }
    return NULL;
}

static cls_status build_all(cls_context *ctx)
{
    build_group *groups = calloc(ctx->ndevs, sizeof *groups);
    if (!groups) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    size_t ng = 0;
    for (size_t i = 0; i < ctx->ndevs; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = same_kind(&ctx->devs[i], &ctx->devs[j]);
        if (seen) continue;
        groups[ng].ctx = ctx;
        groups[ng].first = i;
        ng++;
    }
    for (size_t g = 0; g < ng; g++)
        groups[g].started = ng > 1 && pthread_create(&groups[g].thread, NULL, build_thread, &groups[g]) == 0;
    for (size_t g = 0; g < ng; g++) {
        if (groups[g].started) pthread_join(groups[g].thread, NULL);
        else build_thread(&groups[g]);
    }
    free(groups);

    return CLS_OK;
}

/* Keeps the devices that came through, in order; records and releases
 * the others. */
static cls_status keep_alive(cls_context *ctx)
{
    size_t kept = 0;
    cls_status st = CLS_OK;
    for (size_t i = 0; i < ctx->ndevs; i++) {
        cls_dev *d = &ctx->devs[i];
        if (d->alive) {
            if (kept != i) ctx->devs[kept] = *d;
            ctx->devs[kept].index = kept;
            kept++;
            continue;
        }
        cls_status r = cls_drop_record(ctx, d);
        if (st == CLS_OK) st = r;
        release_dev(d);
    }
    ctx->ndevs = kept;
    ctx->klock = calloc(kept ? kept : 1, sizeof *ctx->klock);
    if (!ctx->klock) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    for (size_t i = 0; i < kept; i++) pthread_mutex_init(&ctx->klock[i], NULL);
    return st;
}

cls_status cls_context_create(const cls_config *cfg, cls_context **out)
{
    if (!out) return cls_fail_thread(CLS_E_ARG, "cls_context_create: out is NULL");
    cls_context *ctx = calloc(1, sizeof *ctx);
    *out = ctx;
    if (!ctx) return cls_fail_thread(CLS_E_NOMEM, "cls_context_create: out of memory for the context");
    pthread_mutex_init(&ctx->err_lock, NULL);
    cls_table_hold(); /* let go in cls_context_destroy */

    cls_found *all = NULL;
    unsigned char *chosen = NULL, *staged = NULL;
    size_t n = 0;
    cls_status st = read_config(ctx, cfg);
    if (st == CLS_OK && ctx->cfg.cl_context) {
        /* the caller's context, devices and queues: no discovery (foreign.c) */
        st = cls_foreign_adopt(ctx, cfg);
        /* the same build, zero-copy check, drops and kernel locks as the
         * devices clscale found itself (a caller's device can fail too) */
        if (st == CLS_OK) st = build_all(ctx);
        if (st == CLS_OK) st = keep_alive(ctx);
        if (st == CLS_OK) st = cls_drop_report(ctx);
        if (st == CLS_OK && !(ctx->pool = cls_pool_create(ctx->tune.copy_threads)))
            st = cls_fail(ctx, CLS_E_NOMEM, "cannot start the host copy threads");
        ctx->usable = st == CLS_OK;
        return st;
    }
    if (st == CLS_OK) st = cls_devices_find(ctx, &all, &n);
    if (st == CLS_OK) {
        chosen = calloc(n, 1);
        st = chosen ? cls_devices_select(ctx, all, n, ctx->selector, chosen)
                    : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK) {
        ctx->devs = calloc(n, sizeof *ctx->devs);
        if (!ctx->devs) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK && ctx->force_staging) {
        staged = calloc(n, 1);
        st = staged ? cls_devices_select(ctx, all, n, ctx->force_staging, staged)
                    : cls_fail(ctx, CLS_E_NOMEM, "out of memory");
        if (st != CLS_OK) cls_note(ctx, " (in the switch force_staging)");
    }
    for (size_t i = 0; i < n && st == CLS_OK; i++) {
        if (!chosen[i]) continue;
        cls_dev *d = &ctx->devs[ctx->ndevs];
        d->index = ctx->ndevs;
        d->build_slot = -1;
        cls_status ds = cls_device_describe(ctx, d, &all[i], i);
        if (ds == CLS_OK && staged && staged[i]) {
            d->zero_copy = 0;
            d->info.staging = 1;
        }
        if (ds == CLS_OK) ds = cls_build_slot_take(ctx, d);
        if (ds != CLS_OK) {
            /* its strings are all[i]'s until described: record it now */
            cls_drop_mark(d, ds, "describing it");
            st = cls_drop_record(ctx, d);
            release_dev(d);
            memset(d, 0, sizeof *d);
            continue;
        }
        ctx->ndevs++;
    }
    if (st == CLS_OK) st = make_cl_contexts(ctx);
    for (size_t i = 0; i < ctx->ndevs && st == CLS_OK; i++) {
        cls_dev *d = &ctx->devs[i];
        if (d->drop_st != CLS_OK) continue;
        cls_status qs = make_queues(ctx, d);
        if (qs != CLS_OK) cls_drop_mark(d, qs, "creating its queues");
    }
    if (st == CLS_OK) st = build_all(ctx);
    if (st == CLS_OK) st = keep_alive(ctx);
    if (st == CLS_OK) st = cls_drop_report(ctx);
    if (st == CLS_OK) {
        ctx->pool = cls_pool_create(ctx->tune.copy_threads);
        if (!ctx->pool) st = cls_fail(ctx, CLS_E_NOMEM, "cannot start the host copy threads");
    }
    free(all);
    free(chosen);
    free(staged);
    if (st == CLS_OK) ctx->usable = 1;
    return st;
}

void cls_context_destroy(cls_context *ctx)
{
    if (!ctx) return;
    cls_hostmem_release_all(ctx);
    for (size_t i = 0; i < ctx->ndevs; i++) release_dev(&ctx->devs[i]);
    for (size_t i = 0; i < ctx->ncls; i++) clReleaseContext(ctx->cls[i]);
    if (ctx->klock) {
        for (size_t i = 0; i < ctx->ndevs; i++) pthread_mutex_destroy(&ctx->klock[i]);
        free(ctx->klock);
    }
    cls_pool_destroy(ctx->pool);
    free(ctx->cls);
    free(ctx->devs);
    free(ctx->selector);
    free(ctx->force_staging);
    free(ctx->cache_dir);
    free(ctx->rep_devs);
    free(ctx->rep_msgs);
    free(ctx->events);
    cls_drops_free(ctx);
    pthread_mutex_destroy(&ctx->err_lock);
    free(ctx);
    cls_table_trim(); /* the per-column tables kept for the next call (table.h) */
}

/* Whether a call may run on ctx: every entry (the planner, the quantiles,
 * the buffers) asks it first, so it lives with the context. */
cls_status cls_check_ctx(cls_context *ctx)
{
    if (!ctx) return CLS_E_ARG;
    if (!ctx->usable) return cls_fail(ctx, CLS_E_ARG, "the context failed to initialise: %s", ctx->err);
    return CLS_OK;
}
