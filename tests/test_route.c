/* The route of a call (src/plan/route.c), read without a device: which
 * entry runs it, whether it cleans, fuses the scaler into the cleaning's
 * last pass or scales after it, takes counting passes for quantiles,
 * streams, combines, or is refused before any pass. */
#include <string.h>

#include "common.h"
#include "plan/route.h"
#include "scalers/scaler.h"

static cls_status sum(void *u, cls_status local, uint64_t *c, size_t n)
{
    (void)u;
    (void)c;
    (void)n;
    return local;
}

typedef struct {
    const char *what;
    cls_pipeline p;
    cls_where where;
    int want_fitted;
    size_t out_rows; /* 0: the input's */
    cls_entry entry;
    int cleans, fuses, after, quantiles, streams, combined;
    int fusable, clean_streams, bins_reduce;
} route_case;

static void every_case_takes_its_route(void **state)
{
    (void)state;
    static cls_clean clip = {.sigma = 3}, clamp = {.sigma = 3, .mode = CLS_CLIP_CLAMP},
                     impute = {.impute = CLS_IMPUTE_MEDIAN}, none = {0},
                     bins = {.bin_rows = 4, .bin_stat = CLS_BIN_MEAN}, sums = {.bin_rows = 4, .bin_stat = CLS_BIN_SUM},
                     asked = {.bin_rows = 4, .bin_stat = CLS_BIN_MEDIAN, .bin_reduce = 1},
                     trend = {.detrend = CLS_DETREND_MEAN, .window = 5};
    static cls_combine hook = {sum, NULL, NULL}, idle = {NULL, NULL, NULL};
    static double f = 2;
    static cls_array factors = {.data = &f, .dtype = CLS_F64, .batch = 1, .rows = 1, .cols = 1};
    const route_case cases[] = {
        {"scaler alone", {.scaler = CLS_MINMAX}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST, 0, 0, 0, 0, 0, 0, 1, 1, 0},
        {"robust: counting passes", {.scaler = CLS_ROBUST}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST, 0, 0, 0, 1, 0, 0, 0,
         0, 0},
        {"clip then min-max: fused", {.scaler = CLS_MINMAX, .clean = &clip}, CLS_IN_HOST, 1, 0, CLS_ENTRY_HOST,
         1, 1, 0, 0, 0, 0, 1, 1, 0},
        {"clip then robust: after", {.scaler = CLS_ROBUST, .clean = &clip}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST, 1,
         0, 1, 1, 0, 0, 0, 0, 0},
        {"clamp then z-score: after", {.scaler = CLS_ZSCORE, .clean = &clamp}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST, 1,
         0, 1, 0, 0, 0, 0, 0, 0},
        {"impute then discount: after", {.clean = &impute, .factors = &factors}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST,
         1, 0, 1, 0, 0, 0, 0, 0, 0},
        {"cleaning alone", {.clean = &clip}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST_CLEAN, 1, 0, 0, 0, 0, 0, 0, 1, 0},
        {"cleaning alone, statistics asked", {.clean = &clip}, CLS_IN_HOST, 1, 0, CLS_ENTRY_HOST, 1, 0, 1, 0, 0,
         0, 0, 0, 0},
        {"an empty cleaning stage", {.clean = &none}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST_CLEAN, 0, 0, 0, 0, 0, 0,
         0, 1, 0},
        {"a trend cleans", {.clean = &trend}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST_CLEAN, 1, 0, 0, 0, 0, 0, 0, 1, 0},
        {"bin means, same shape", {.clean = &bins}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST_CLEAN, 1, 0, 0, 0, 0, 0, 0, 1, 0},
        {"bin means, a row a bin", {.clean = &bins}, CLS_IN_HOST, 0, 3, CLS_ENTRY_HOST_BIN, 1, 0, 0, 0, 0, 0, 0, 1, 1},
        {"bin sums reduce", {.clean = &sums}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST_BIN, 1, 0, 0, 0, 0, 0, 0, 1, 1},
        {"bin medians asked to reduce", {.clean = &asked}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST_BIN, 1, 0, 0, 0, 0, 0,
         0, 1, 1},
        {"reduced bins, statistics asked", {.clean = &asked}, CLS_IN_HOST, 1, 0, CLS_ENTRY_HOST, 1, 0, 1, 0, 0, 0,
         0, 0, 0},
        {"combined cleaning", {.clean = &clip, .combine = &hook}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST_CLEAN, 1, 0, 0,
         0, 0, 1, 0, 1, 0},
        {"a hook without fn is none", {.scaler = CLS_MINMAX, .combine = &idle}, CLS_IN_HOST, 0, 0, CLS_ENTRY_HOST,
         0, 0, 0, 0, 0, 0, 1, 1, 0},
        {"buffers", {.scaler = CLS_ZSCORE}, CLS_IN_BUFFER, 0, 0, CLS_ENTRY_BUFFER, 0, 0, 0, 0, 0, 0, 1, 1, 0},
        {"buffers refuse a hook", {.scaler = CLS_ZSCORE, .combine = &hook}, CLS_IN_BUFFER, 0, 0, CLS_ENTRY_REFUSED,
         0, 0, 0, 0, 0, 1, 1, 1, 0},
        {"buffers refuse counting passes", {.scaler = CLS_ROBUST}, CLS_IN_BUFFER, 0, 0, CLS_ENTRY_REFUSED, 0, 0, 0,
         1, 0, 0, 0, 0, 0},
        {"buffers take max-abs", {.scaler = CLS_MAXABS}, CLS_IN_BUFFER, 0, 0, CLS_ENTRY_BUFFER, 0, 0, 0, 0, 0, 0,
         1, 1, 0},
        {"a file streams", {.scaler = CLS_ZSCORE, .clean = &clip}, CLS_IN_FILE, 0, 0, CLS_ENTRY_FILE, 1, 1, 0, 0, 1,
         0, 1, 1, 0},
        {"a file across processes", {.clean = &clip, .combine = &hook}, CLS_IN_FILE, 0, 0, CLS_ENTRY_FILE, 1, 0, 0,
         0, 1, 1, 0, 1, 0},
        {".npy", {.scaler = CLS_ROBUST}, CLS_IN_NPY, 0, 0, CLS_ENTRY_NPY, 0, 0, 0, 1, 1, 0, 0, 0, 0},
        {".npy refuses a hook", {.scaler = CLS_ROBUST, .combine = &hook}, CLS_IN_NPY, 0, 0, CLS_ENTRY_REFUSED, 0, 0,
         0, 1, 1, 1, 0, 0, 0},
        {"an unknown where", {.scaler = CLS_MINMAX}, (cls_where)9, 0, 0, CLS_ENTRY_REFUSED, 0, 0, 0, 0, 0, 0, 1, 1, 0},
        {"a file's bin sums reduce", {.clean = &sums}, CLS_IN_FILE, 0, 0, CLS_ENTRY_FILE, 1, 0, 0, 0, 1, 0, 0, 1, 1},
        {"a file's bin means, a row a bin", {.clean = &bins}, CLS_IN_FILE, 0, 3, CLS_ENTRY_FILE, 1, 0, 0, 0, 1, 0, 0,
         1, 1},
        {".npy bin means: no output shape given", {.clean = &bins}, CLS_IN_NPY, 0, 3, CLS_ENTRY_NPY, 1, 0, 0, 0, 1, 0,
         0, 1, 0},
        {".npy bin sums reduce", {.clean = &sums}, CLS_IN_NPY, 0, 0, CLS_ENTRY_NPY, 1, 0, 0, 0, 1, 0, 0, 1, 1},
        {"a file, clamp then z-score", {.scaler = CLS_ZSCORE, .clean = &clamp}, CLS_IN_FILE, 1, 0, CLS_ENTRY_FILE, 1,
         0, 1, 0, 1, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const route_case *c = &cases[i];
        cls_array in = {.dtype = CLS_F64, .batch = 1, .rows = 12, .cols = 3, .where = c->where};
        cls_array out = in;
        if (c->out_rows) out.rows = c->out_rows;
        cls_route r;
        cls_route_fit_transform(&c->p, &in, &out, c->want_fitted, NULL, &r);
        int ok = r.entry == c->entry && r.cleans == c->cleans && r.fuses == c->fuses && r.scaler_after == c->after &&
                 r.quantiles == c->quantiles && r.streams == c->streams && r.combined == c->combined &&
                 r.fusable == c->fusable && r.clean_streams == c->clean_streams && r.bins_reduce == c->bins_reduce &&
                 (r.entry == CLS_ENTRY_REFUSED) == (r.why != NULL);
        if (!ok)
            print_error("%s: entry %d cleans %d fuses %d after %d quantiles %d streams %d combined %d fusable %d "
                        "clean_streams %d bins_reduce %d\n", c->what, (int)r.entry, r.cleans, r.fuses,
                        r.scaler_after, r.quantiles, r.streams, r.combined, r.fusable, r.clean_streams,
                        r.bins_reduce);
        assert_true(ok);
    }
}

/* The route of cls_fit: statistics wanted, so never cleaning alone nor
 * bins reduced; what a fit cannot take is refused before any pass, with
 * what to do (a robust fit of buffers: fit host memory or a file) */
static void a_fit_takes_its_route(void **state)
{
    (void)state;
    static cls_combine hook = {sum, NULL, NULL};
    cls_clean clip = {.sigma = 3}, sums = {.bin_rows = 4, .bin_stat = CLS_BIN_SUM};
    cls_array x = {.dtype = CLS_F32, .batch = 2, .rows = 12, .cols = 3, .where = CLS_IN_HOST};
    cls_route r;
    cls_route_fit(&(cls_pipeline){.scaler = CLS_ROBUST}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_HOST);
    assert_true(r.quantiles);
    cls_route_fit(&(cls_pipeline){.clean = &clip}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_HOST);
    assert_false(r.clean_streams);
    cls_route_fit(&(cls_pipeline){.clean = &sums}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_HOST);
    assert_false(r.bins_reduce);
    cls_route_fit(&(cls_pipeline){.scaler = CLS_ROBUST, .combine = &hook}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_HOST);
    assert_true(r.combined && r.quantiles);
    x.where = CLS_IN_BUFFER;
    cls_route_fit(&(cls_pipeline){.scaler = CLS_ROBUST}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_REFUSED);
    assert_int_equal(r.refusal, CLS_E_UNSUPPORTED);
    assert_non_null(strstr(r.why, "exact quantiles"));
    assert_non_null(strstr(r.why, "cls_transform"));
    cls_route_fit(&(cls_pipeline){.scaler = CLS_MINMAX}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_BUFFER);
    cls_route_fit(&(cls_pipeline){.scaler = CLS_MINMAX, .combine = &hook}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_REFUSED);
    assert_true(r.combined);
    x.where = CLS_IN_FILE;
    cls_route_fit(&(cls_pipeline){.scaler = CLS_ROBUST, .combine = &hook}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_FILE);
    assert_true(r.combined && r.quantiles && r.streams);
    x.where = CLS_IN_NPY;
    cls_route_fit(&(cls_pipeline){.scaler = CLS_ZSCORE, .combine = &hook}, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_REFUSED);
    cls_route_fit(NULL, &x, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_NPY);
}

/* The routes a call's stages take when it splits into the cleaning alone
 * and the rest over its output: made from the call's, never asked again */
static void the_stages_of_a_split_call(void **state)
{
    (void)state;
    cls_clean clip = {.sigma = 3};
    cls_array in = {.dtype = CLS_F64, .batch = 1, .rows = 12, .cols = 3, .where = CLS_IN_FILE}, out = in;
    cls_route r, alone, rest;
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_ROBUST, .clean = &clip}, &in, &out, 1, NULL, &r);
    assert_true(r.scaler_after && r.quantiles && !r.clean_streams);
    cls_route_clean_alone(&r, &alone);
    assert_true(alone.cleans && alone.clean_streams && alone.streams);
    assert_false(alone.fuses || alone.fusable || alone.scaler_after || alone.quantiles);
    assert_int_equal(alone.entry, r.entry);
    cls_route_after_clean(&r, &rest);
    assert_true(rest.quantiles && rest.streams);
    assert_false(rest.cleans || rest.fuses || rest.scaler_after || rest.bins_reduce || rest.trend_fits);
    /* a trend streamed ahead of a scaler of extremes fits it from its
     * blocks; neither stage of the split call does */
    cls_clean trend = {.detrend = CLS_DETREND_MEAN, .window = 5};
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_MINMAX, .clean = &trend}, &in, &out, 1, NULL, &r);
    assert_true(r.trend_fits);
    cls_route_clean_alone(&r, &alone);
    cls_route_after_clean(&r, &rest);
    assert_false(alone.trend_fits || rest.trend_fits);
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_ZSCORE, .clean = &trend}, &in, &out, 1, NULL, &r);
    assert_false(r.trend_fits);
}

typedef struct {
    const char *what;
    cls_pipeline p;
    int want_fitted, whole;
    unsigned n;
    cls_stage_kind first, second;
    int halo, gather, clean_alone;
    unsigned bin_align;
} stages_case;

/* A file's fit-transform: its plan of stages, made once from the call's
 * route and whether the file's chunks hold whole groups; the stage routes
 * are the call's, its cleaning alone's or the rest's after it */
static void a_file_call_takes_its_stages(void **state)
{
    (void)state;
    static cls_clean clip = {.sigma = 3}, masked = {.sigma = 3, .mask_out = (uint8_t *)&clip},
                     trend = {.detrend = CLS_DETREND_MEAN, .window = 5},
                     wrap = {.detrend = CLS_DETREND_MEAN, .window = 5, .edge = CLS_EDGE_WRAP},
                     clip_trend = {.sigma = 3, .detrend = CLS_DETREND_SAVGOL, .window = 7, .polyorder = 2},
                     bins = {.bin_rows = 4, .bin_stat = CLS_BIN_MEAN}, none = {0};
    static double f = 2;
    static cls_array factors = {.data = &f, .dtype = CLS_F64, .batch = 1, .rows = 1, .cols = 1};
    const cls_stage_kind CH = CLS_STAGE_CHUNKS, FA = CLS_STAGE_FIT_APPLY, AP = CLS_STAGE_APPLY,
                         CL = CLS_STAGE_CLEAN, CH_HALO = CLS_STAGE_CLEAN_HALO;
    const stages_case cases[] = {
        {"min-max, whole groups", {.scaler = CLS_MINMAX}, 0, 1, 1, CH, CH, 0, 0, 0, 0},
        {"min-max, groups span chunks", {.scaler = CLS_MINMAX}, 0, 0, 1, FA, CH, 0, 0, 0, 0},
        {"robust, groups span chunks", {.scaler = CLS_ROBUST}, 1, 0, 1, FA, CH, 0, 0, 0, 0},
        {"a discount alone spans chunks", {.factors = &factors}, 0, 0, 1, CH, CH, 0, 0, 0, 0},
        {"clip then z-score, whole", {.scaler = CLS_ZSCORE, .clean = &clip}, 1, 1, 1, CH, CH, 0, 0, 0, 0},
        {"clip then z-score, spanning: fused", {.scaler = CLS_ZSCORE, .clean = &clip}, 1, 0, 1, CL, CH, 0, 0, 0, 0},
        {"clip alone, spanning", {.clean = &masked}, 0, 0, 1, CL, CH, 0, 0, 1, 0},
        {"clip then robust, spanning: two stages", {.scaler = CLS_ROBUST, .clean = &clip}, 0, 0, 2, CL, FA, 0, 0, 1,
         0},
        {"clip then robust, whole", {.scaler = CLS_ROBUST, .clean = &clip}, 0, 1, 1, CH, CH, 0, 0, 0, 0},
        {"clip, statistics asked, spanning", {.clean = &clip}, 1, 0, 2, CL, CH, 0, 0, 1, 0},
        {"an empty cleaning then robust", {.scaler = CLS_ROBUST, .clean = &none}, 0, 0, 2, CL, FA, 0, 0, 1, 0},
        {"a trend alone, spanning: halo", {.clean = &trend}, 0, 0, 1, CH, CH, 1, 0, 1, 0},
        {"a trend then min-max: gathered", {.scaler = CLS_MINMAX, .clean = &trend}, 1, 0, 2, CH, AP, 1, 1, 1, 0},
        {"a trend then z-score: fitted after", {.scaler = CLS_ZSCORE, .clean = &trend}, 0, 0, 2, CH, FA, 1, 0, 1, 0},
        {"a trend then min-max, whole", {.scaler = CLS_MINMAX, .clean = &trend}, 0, 1, 1, CH, CH, 0, 0, 0, 0},
        {"clip and trend alone: halo writes", {.clean = &clip_trend}, 0, 0, 1, CH_HALO, CH, 1, 0, 1, 0},
        {"clip and trend then robust", {.scaler = CLS_ROBUST, .clean = &clip_trend}, 0, 0, 2, CH_HALO, FA, 1, 0, 1,
         0},
        {"bins alone: whole bins", {.clean = &bins}, 0, 0, 1, CH, CH, 0, 0, 1, 4},
        {"bins in batch scope: halo", {.scope = CLS_SCOPE_BATCH, .clean = &bins}, 0, 0, 1, CH, CH, 1, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const stages_case *c = &cases[i];
        cls_array in = {.dtype = CLS_F64, .batch = 2, .rows = 12, .cols = 3, .where = CLS_IN_FILE}, out = in;
        cls_route r;
        cls_stages s;
        cls_route_fit_transform(&c->p, &in, &out, c->want_fitted, NULL, &r);
        assert_int_equal(r.entry, CLS_ENTRY_FILE);
        cls_route_stages(&r, &c->p, c->want_fitted, c->whole, &s);
        int ok = s.n == c->n && s.stage[0].kind == c->first && (s.n == 1 || s.stage[1].kind == c->second) &&
                 s.halo == c->halo && s.gather == c->gather && s.clean_alone == c->clean_alone &&
                 s.bin_align == c->bin_align && s.whole == c->whole;
        if (!ok)
            print_error("%s: n %u first %d second %d halo %d gather %d clean_alone %d bin_align %u\n", c->what, s.n,
                        (int)s.stage[0].kind, (int)s.stage[1].kind, s.halo, s.gather, s.clean_alone, s.bin_align);
        assert_true(ok);
        /* a first stage that cleans ahead of a second takes the cleaning's
         * route alone; a second, the rest's (no cleaning) */
        const cls_route *first = &s.stage[0].route;
        if (s.n == 2) {
            assert_false(s.stage[1].route.cleans || s.stage[1].route.clean_passes || s.stage[1].route.trend_fits);
            assert_int_equal(s.stage[1].route.quantiles, r.quantiles);
        }
        if (c->first == CL || c->first == CH_HALO) assert_true(first->clean_streams);
        if (s.n == 2 && (c->first == CL || c->first == CH_HALO)) assert_false(first->fusable || first->quantiles);
        if (c->first == CH || c->first == FA || (c->first == CL && s.n == 1))
            assert_true(first->entry == r.entry && first->cleans == r.cleans && first->fuses == r.fuses &&
                        first->fusable == r.fusable && first->quantiles == r.quantiles &&
                        first->scaler_after == r.scaler_after && first->trend_fits == r.trend_fits &&
                        first->bins_reduce == r.bins_reduce && first->impute_fused == r.impute_fused);
    }
    /* the halo rows the blocks read, from the trend's window; a wrap edge's
     * past the series' ends */
    cls_array in = {.dtype = CLS_F32, .batch = 1, .rows = 100, .cols = 2, .where = CLS_IN_FILE};
    cls_route r;
    cls_stages s;
    cls_pipeline p = {.clean = &trend};
    cls_route_fit_transform(&p, &in, &in, 0, NULL, &r);
    cls_route_stages(&r, &p, 0, 0, &s);
    assert_true(s.halo && !s.halo_wrap);
    assert_true(s.halo_before > 5);
    assert_int_equal(s.halo_after, 5);
    p.clean = &wrap;
    cls_route_fit_transform(&p, &in, &in, 0, NULL, &r);
    cls_route_stages(&r, &p, 0, 0, &s);
    assert_true(s.halo && s.halo_wrap);
}

/* The fusing rule the cleaning stage asks, scaler by scaler */
static void the_fusing_rule(void **state)
{
    (void)state;
    cls_clean clip = {.sigma = 3}, clamp = {.sigma = 3, .mode = CLS_CLIP_CLAMP};
    const cls_scaler fuse[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL, CLS_MAXABS};
    for (size_t i = 0; i < 4; i++) {
        assert_true(cls_route_fuses(&(cls_pipeline){.scaler = fuse[i], .clean = &clip}));
        assert_false(cls_route_fuses(&(cls_pipeline){.scaler = fuse[i], .clean = &clamp}));
        assert_false(cls_route_fuses(&(cls_pipeline){.scaler = fuse[i], .clean = &clip, .inverse = 1}));
    }
    assert_false(cls_route_fuses(&(cls_pipeline){.scaler = CLS_ROBUST, .clean = &clip}));
    assert_false(cls_route_fuses(&(cls_pipeline){.scaler = CLS_NONE, .clean = &clip}));
    assert_false(cls_route_fuses(NULL));
    /* clamping without clipping is no clamping */
    cls_clean idle_clamp = {.mode = CLS_CLIP_CLAMP, .impute = CLS_IMPUTE_MEAN};
    assert_true(cls_route_fuses(&(cls_pipeline){.scaler = CLS_MINMAX, .clean = &idle_clamp}));
    /* a cleaning stage streams over chunks ahead of a fusing scaler or alone */
    static double f = 2;
    static cls_array factors = {.data = &f, .dtype = CLS_F64, .batch = 1, .rows = 1, .cols = 1};
    assert_true(cls_route_clean_streams(&(cls_pipeline){.scaler = CLS_ZSCORE, .clean = &clip}, 1));
    assert_true(cls_route_clean_streams(&(cls_pipeline){.clean = &clip}, 0));
    assert_false(cls_route_clean_streams(&(cls_pipeline){.clean = &clip}, 1));
    assert_false(cls_route_clean_streams(&(cls_pipeline){.clean = &clip, .factors = &factors}, 0));
    assert_false(cls_route_clean_streams(&(cls_pipeline){.scaler = CLS_ROBUST, .clean = &clip}, 0));
    assert_false(cls_route_clean_streams(&(cls_pipeline){.scaler = CLS_MINMAX, .clean = &clamp}, 0));
}

/* Whether the cleaning stage's imputation takes the engine's one pass:
 * decided with the call's route, from the pipeline and the context's
 * switch; the cleaning stage alone (ahead of light curves, or of a scaler
 * over its output) takes the route's alone form */
static void imputation_takes_the_one_pass_where_the_route_says(void **state)
{
    (void)state;
    cls_clean mean = {.impute = CLS_IMPUTE_MEAN}, constant = {.impute = CLS_IMPUTE_CONSTANT, .fill_value = 2},
              sentinel = {.has_missing_value = 1, .missing_value = -9999},
              median = {.impute = CLS_IMPUTE_MEDIAN}, clip = {.sigma = 3, .impute = CLS_IMPUTE_MEAN},
              masked = {.impute = CLS_IMPUTE_MEAN, .mask_out = (uint8_t *)&mean},
              keep = {.has_missing_value = 1, .mode = CLS_CLIP_KEEP},
              trend = {.impute = CLS_IMPUTE_MEAN, .detrend = CLS_DETREND_MEAN, .window = 5},
              curves = {.detrend = CLS_DETREND_MEAN, .window = 5};
    const cls_scaler one_pass[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL, CLS_MAXABS, CLS_NONE};
    for (size_t i = 0; i < 5; i++) {
        assert_true(cls_route_impute_fuses(&(cls_pipeline){.scaler = one_pass[i], .clean = &mean}, NULL));
        assert_true(cls_route_impute_fuses(&(cls_pipeline){.scaler = one_pass[i], .clean = &constant}, NULL));
        assert_true(cls_route_impute_fuses(&(cls_pipeline){.scaler = one_pass[i], .clean = &sentinel}, NULL));
        assert_false(cls_route_impute_fuses(&(cls_pipeline){.scaler = one_pass[i], .clean = &median}, NULL));
        assert_false(cls_route_impute_fuses(&(cls_pipeline){.scaler = one_pass[i], .clean = &clip}, NULL));
        assert_false(cls_route_impute_fuses(&(cls_pipeline){.scaler = one_pass[i], .clean = &masked}, NULL));
    }
    assert_false(cls_route_impute_fuses(&(cls_pipeline){.scaler = CLS_ROBUST, .clean = &mean}, NULL));
    assert_false(cls_route_impute_fuses(&(cls_pipeline){.clean = &keep}, NULL));
    assert_false(cls_route_impute_fuses(&(cls_pipeline){.scaler = CLS_MINMAX, .clean = &mean, .inverse = 1}, NULL));
    assert_false(cls_route_impute_fuses(&(cls_pipeline){.scaler = CLS_MINMAX}, NULL));
    assert_false(cls_route_impute_fuses(NULL, NULL));
    /* the context's switch keeps the cleaning's own passes */
    cls_tuning unfused = {.impute_unfused = 1}, own = {0};
    assert_false(cls_route_impute_fuses(&(cls_pipeline){.scaler = CLS_ZSCORE, .clean = &mean}, &unfused));
    assert_true(cls_route_impute_fuses(&(cls_pipeline){.scaler = CLS_ZSCORE, .clean = &mean}, &own));

    /* the call's route: the rule for its scaler and for its cleaning alone */
    cls_array in = {.dtype = CLS_F32, .batch = 2, .rows = 12, .cols = 3, .where = CLS_IN_HOST}, out = in;
    cls_route r, alone, rest;
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_ZSCORE, .clean = &mean}, &in, &out, 1, NULL, &r);
    assert_true(r.clean_passes && r.impute_fused && r.impute_fused_alone);
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_ZSCORE, .clean = &mean}, &in, &out, 1, &unfused, &r);
    assert_true(r.clean_passes && r.cleans);
    assert_false(r.impute_fused || r.impute_fused_alone);
    /* robust after the imputation: the imputation alone takes the one pass */
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_ROBUST, .clean = &mean}, &in, &out, 0, NULL, &r);
    assert_true(r.scaler_after && r.impute_fused_alone);
    assert_false(r.impute_fused);
    cls_route_clean_alone(&r, &alone);
    assert_true(alone.impute_fused && alone.clean_passes);
    cls_route_after_clean(&r, &rest);
    assert_false(rest.impute_fused || rest.impute_fused_alone || rest.clean_passes);
    /* an inverse call: its cleaning alone would fuse, the call does not */
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_MINMAX, .clean = &mean, .inverse = 1}, &in, &out, 0,
                            NULL, &r);
    assert_true(r.impute_fused_alone);
    assert_false(r.impute_fused);
    /* no output (a fit, or cleaning alone writing only per-column outputs): no one pass writes */
    cls_route_fit(&(cls_pipeline){.scaler = CLS_ZSCORE, .clean = &mean}, &in, NULL, &r);
    assert_false(r.impute_fused || r.impute_fused_alone);
    cls_route_fit_transform(&(cls_pipeline){.clean = &mean}, &in, NULL, 0, NULL, &r);
    assert_int_equal(r.entry, CLS_ENTRY_HOST_CLEAN);
    assert_false(r.impute_fused || r.impute_fused_alone);
    /* light curves: their cleaning passes first where it asks for them */
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_MINMAX, .clean = &trend}, &in, &out, 0, NULL, &r);
    assert_true(r.cleans && r.clean_passes && r.impute_fused_alone);
    cls_route_fit_transform(&(cls_pipeline){.scaler = CLS_MINMAX, .clean = &curves}, &in, &out, 0, NULL, &r);
    assert_true(r.cleans);
    assert_false(r.clean_passes || r.impute_fused || r.impute_fused_alone);
    in.where = out.where = CLS_IN_FILE;
    cls_route_fit_transform(&(cls_pipeline){.clean = &sentinel}, &in, &out, 0, NULL, &r);
    assert_true(r.streams && r.impute_fused && r.impute_fused_alone);
}

/* clscale.h's CLS_SCALERS list is the table: each line's value finds its
 * descriptor, which names it back, in the list's order from 1 with no gap;
 * the names the tool and Python read are the descriptors'; nothing past
 * the list, and CLS_NONE none. */
static void the_scalers_list_is_the_table(void **state)
{
    (void)state;
#define CHECK(value, file)                                                       \
    do {                                                                         \
        const cls_scaler_desc *d_ = cls_scaler_get(value);                       \
        assert_non_null(d_);                                                     \
        assert_int_equal(cls_scaler_of(d_), value);                              \
        assert_string_equal(cls_scaler_name(value), d_->cli);                    \
        assert_int_equal(cls_scaler_kernel_code(value), (unsigned)(value));      \
        assert_int_equal((int)(value), ++n);                                     \
    } while (0);
    int n = 0;
    CLS_SCALERS(CHECK)
#undef CHECK
    assert_true(n >= 5);
    assert_null(cls_scaler_get((cls_scaler)(n + 1)));
    assert_null(cls_scaler_name((cls_scaler)(n + 1)));
    assert_null(cls_scaler_get(CLS_NONE));
    assert_int_equal(cls_scaler_of(NULL), CLS_NONE);
    assert_string_equal(cls_scaler_name(CLS_NONE), "none");
}

/* Whether bins reduce where the output's shape is not given (a .npy
 * output's comes from this answer) and where it is */
static void bins_reduce_when_asked_or_by_shape(void **state)
{
    (void)state;
    cls_clean mean = {.bin_rows = 4, .bin_stat = CLS_BIN_MEAN}, count = {.bin_rows = 4, .bin_stat = CLS_BIN_COUNT},
              asked = {.bin_rows = 4, .bin_stat = CLS_BIN_MEAN, .bin_reduce = 1}, trend = {.detrend = CLS_DETREND_MEAN,
                                                                                      .window = 3, .bin_reduce = 1};
    assert_false(cls_route_bins_reduce(&(cls_pipeline){.clean = &mean}, 0, 2, 12, 0, 0, 0));
    assert_true(cls_route_bins_reduce(&(cls_pipeline){.clean = &mean}, 0, 2, 12, 1, 2, 3));
    assert_false(cls_route_bins_reduce(&(cls_pipeline){.clean = &mean}, 0, 2, 12, 1, 2, 12));
    assert_true(cls_route_bins_reduce(&(cls_pipeline){.clean = &count}, 0, 2, 12, 0, 0, 0));
    assert_true(cls_route_bins_reduce(&(cls_pipeline){.clean = &asked}, 0, 2, 12, 0, 0, 0));
    /* not a cleaning alone: a scaler, statistics asked for */
    assert_false(cls_route_bins_reduce(&(cls_pipeline){.clean = &asked, .scaler = CLS_MINMAX}, 0, 2, 12, 0, 0, 0));
    assert_false(cls_route_bins_reduce(&(cls_pipeline){.clean = &asked}, 1, 2, 12, 0, 0, 0));
    /* no bins: nothing to reduce */
    assert_false(cls_route_bins_reduce(&(cls_pipeline){.clean = &trend}, 0, 2, 12, 0, 0, 0));
    assert_false(cls_route_bins_reduce(NULL, 0, 2, 12, 0, 0, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_case_takes_its_route),
                                       cmocka_unit_test(a_fit_takes_its_route),
                                       cmocka_unit_test(the_stages_of_a_split_call),
                                       cmocka_unit_test(a_file_call_takes_its_stages),
                                       cmocka_unit_test(the_fusing_rule),
                                       cmocka_unit_test(imputation_takes_the_one_pass_where_the_route_says),
                                       cmocka_unit_test(the_scalers_list_is_the_table),
                                       cmocka_unit_test(bins_reduce_when_asked_or_by_shape)};
    return TEST_RUN("route", tests, NULL, NULL);
}
