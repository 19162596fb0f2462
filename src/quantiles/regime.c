/* Regimes of exact selection and clipping by group length, and the sort
 * regime's scratch (regime.h). */
#include <stdlib.h>

#include "engine/passes.h"
#include "quantiles/regime.h"
#include "util/table.h"

uint64_t cls_sort_window_bytes(uint64_t rows, size_t es)
{
    /* two key arrays, then two tables of counters, 11-bit digits from
     * 16384 rows on, else 8-bit, none where every column is merge-sorted
     * (cl/sort.cl's S_WIN, S_MERGE_MAX) */
    uint64_t counters =
        rows <= CLS_SORT_MERGE_MAX ? 0 : (2 * (rows >= CLS_SORT_WIDE_MIN ? 2048 : 256) * 4 + es - 1) / es * es;
    return 2 * rows * es + counters;
}

/* The scratch one unit may hold: the budget shared by the devices, each
 * running one unit at a time (passes.c). */
static uint64_t unit_scratch(const cls_context *ctx)
{
    size_t budget = ctx->cfg.scratch_bytes ? ctx->cfg.scratch_bytes : CLS_SCRATCH_DEFAULT;
    size_t n = ctx->ndevs ? ctx->ndevs : 1;
    return budget / n;
}

size_t cls_count_budget(const cls_context *ctx, int streamed, int combined)
{
    if (!streamed || combined) return CLS_COUNT_MEM_BYTES;
    return ctx->cfg.scratch_bytes ? ctx->cfg.scratch_bytes : CLS_SCRATCH_DEFAULT;
}

int cls_count_wide_first(const cls_context *ctx, int streamed, int combined)
{
    (void)ctx;
    return streamed && !combined;
}

size_t cls_sort_columns(const cls_context *ctx, uint64_t rows, size_t es)
{
    uint64_t w = cls_sort_window_bytes(rows, es), most = unit_scratch(ctx) / w;
    /* a launch's windows stay in the caches when the columns are short
     * (the buffer is reused launch after launch), and enough windows for
     * every compute unit when they are long: four work-items each, a
     * work-item taking CLS_SORT_LANES columns (clipsort, qsortg's load);
     * fewer left one core busy and the others idle (8 columns of 10^5
     * rows were one work-item) */
    uint64_t cu = 1;
    for (size_t i = 0; i < ctx->ndevs; i++)
        if (ctx->devs[i].info.compute_units > cu) cu = ctx->devs[i].info.compute_units;
    uint64_t want = CLS_SORT_LAUNCH_BYTES / w;
    if (want < 4 * cu * CLS_SORT_LANES) want = 4 * cu * CLS_SORT_LANES;
    uint64_t n = want < most ? want : most;
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

cls_regime cls_regime_of(const cls_context *ctx, uint64_t rows, size_t es, uint64_t network_rows)
{
    if (ctx->count_regime) return CLS_REGIME_COUNT;
    if (rows <= network_rows) return CLS_REGIME_NETWORK;
    /* a work-item loops over its rows about 16 times (load, scatters,
     * sums, output) for each of up to CLS_SORT_LANES columns: within every
     * device's loop limit, counted as a total (llvmpipe stops long loops
     * silently, PITFALLS.md); counts and indices are 32-bit */
    if (rows > UINT32_MAX / 2) return CLS_REGIME_COUNT;
    for (size_t i = 0; i < ctx->ndevs; i++)
        if (ctx->devs[i].loop_limit && rows * 16 * CLS_SORT_LANES > ctx->devs[i].loop_limit)
            return CLS_REGIME_COUNT;
    return cls_sort_columns(ctx, rows, es) >= 1 ? CLS_REGIME_SORT : CLS_REGIME_COUNT;
}

struct cls_sort_scratch {
    cl_mem m;
    void  *host;  /* the kept host table under m, or NULL */
    size_t bytes;
};

cls_sort_scratch *cls_sort_scratch_new(const cls_context *ctx)
{
    return calloc(ctx->ndevs ? ctx->ndevs : 1, sizeof(cls_sort_scratch));
}

cls_status cls_sort_scratch_get(cls_context *ctx, cls_sort_scratch *per_dev, cls_dev *d, uint64_t rows, size_t es,
                                cl_mem *out)
{
    cls_sort_scratch *s = &per_dev[d - ctx->devs];
    cls_status st = CLS_OK;
    if (!s->m) {
        s->bytes = (size_t)(cls_sort_columns(ctx, rows, es) * cls_sort_window_bytes(rows, es));
        st = cls_pass_result_buffer(ctx, d, CL_MEM_READ_WRITE, s->bytes, &s->host, &s->m);
    }
    *out = s->m;
    return st;
}

void cls_sort_scratch_free(const cls_context *ctx, cls_sort_scratch *per_dev)
{
    for (size_t i = 0; per_dev && i < ctx->ndevs; i++) {
        if (per_dev[i].m) clReleaseMemObject(per_dev[i].m);
        cls_table_free(per_dev[i].host, per_dev[i].bytes);
    }
    free(per_dev);
}

size_t cls_sort_local(const cls_dev *d, size_t items)
{
    size_t cu = d->info.compute_units ? d->info.compute_units : 1, local = 8;
    while (local > 1 && items / local < 4 * cu) local /= 2;
    return local;
}
