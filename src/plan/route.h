/* Which way a call goes, decided in one place: from the pipeline, where the
 * data lives and whether statistics are asked for, which engine entry runs
 * it (entries.h), whether a cleaning stage runs, whether the scaler's map
 * comes from the cleaned moments in the cleaning's last pass (fused) or
 * the scaler runs after it over the cleaned data, whether exact quantiles
 * take counting passes first, whether the data streams through the buffer
 * pool, whether bins reduce to a row each, and what is refused before any
 * pass. The front door (src/api) computes it once per public call and
 * passes it down: the entries, the cleaning stage (clean.c) and the
 * streamed paths act on its fields and never ask the rules again; a
 * file's fit-transform asks once more, for its plan of stages
 * (cls_route_stages), once the file's shape is known. Tests read both
 * without a device (tests/test_route.c). */
#ifndef CLS_PLAN_ROUTE_H
#define CLS_PLAN_ROUTE_H

#include "clscale.h"
#include "testing.h"

typedef enum cls_entry {
    CLS_ENTRY_REFUSED,    /* why says so; nothing runs */
    CLS_ENTRY_HOST,       /* cls_host_fit_transform / _combined */
    CLS_ENTRY_HOST_CLEAN, /* cleaning alone: cls_host_clean / _combined */
    CLS_ENTRY_HOST_BIN,   /* bins reduced to a row each: cls_host_bin */
    CLS_ENTRY_BUFFER,     /* cls_buf_fit_transform */
    CLS_ENTRY_FILE,       /* cls_file_fit_transform / _combined */
    CLS_ENTRY_NPY         /* cls_npy_run */
} cls_entry;

typedef struct cls_route {
    cls_entry   entry;
    cls_status  refusal;        /* CLS_ENTRY_REFUSED: the status, `why` the message */
    const char *why;
    int         combined;       /* a combine hook takes part */
    int         cleans;         /* a cleaning stage runs */
    int         fuses;          /* the scaler's map from the cleaned moments, in the cleaning's last pass */
    int         scaler_after;   /* the scaler runs after the cleaning, over its output */
    int         quantiles;      /* the scaler needs exact quantiles: counting passes before it scales */
    int         streams;        /* read in chunks through the buffer pool (files) */
    int         fusable;        /* cls_route_fuses's answer whether or not a stage cleans (`fuses` is it
                                 * where one does): what the streamed paths act on */
    int         clean_streams;  /* a cleaning stage may stream over a file's chunks (cls_route_clean_streams) */
    int         bins_reduce;    /* one row written per bin (cls_route_bins_reduce; a .npy output shaped by it) */
    int         trend_fits;     /* streamed trend blocks fit the scaler after them as they are written
                                 * (cls_route_trend_fits) */
    int         clean_passes;   /* the cleaning's own passes run (missing values, imputation, clipping,
                                 * a mask or moments asked for), not only light curves */
    int         impute_fused;   /* the cleaning stage's imputation (or sentinel) takes the engine's one
                                 * pass ahead of the call's scaler (cls_route_impute_fuses; an output
                                 * written: clean/impute_fused.c runs it) */
    int         impute_fused_alone; /* the same for the cleaning stage alone, no scaler after it (what
                                     * it is in cls_route_clean_alone's route: the cleaning ahead of
                                     * light curves, or of a scaler over its output) */
} cls_route;

/* The plan of a file's fit-transform: the stages it runs, each with its
 * route and how its passes go, decided once per call (cls_route_stages)
 * from the call's route and how the file's chunks fall (whether each
 * holds whole statistics groups). The stream (api/stream.c) checks the
 * call against it at the door and runs it; it asks no rule again. */
typedef enum cls_stage_kind {
    CLS_STAGE_CHUNKS,     /* one pass: each chunk (whole groups, whole bins, a halo block) an in-memory
                           * call of the stage's route */
    CLS_STAGE_FIT_APPLY,  /* a fit over the chunks (and the counting passes where quantiles), then the
                           * pass that applies it */
    CLS_STAGE_APPLY,      /* the pass that applies statistics gathered as the stage before wrote */
    CLS_STAGE_CLEAN,      /* the cleaning stage's passes over the file (clean.c's cls_clean_stream) */
    CLS_STAGE_CLEAN_HALO  /* the same, its writing pass over halo blocks, each then detrended */
} cls_stage_kind;

typedef struct cls_stage {
    cls_stage_kind kind;
    cls_route      route;       /* this stage's: the call's, its cleaning alone, or the rest after it */
} cls_stage;

typedef struct cls_stages {
    unsigned  n;                /* 1, or 2: the rest of the pipeline over the output in place */
    cls_stage stage[2];
    int       whole;            /* each chunk holds whole statistics groups */
    int       halo;             /* light curves in blocks of a series with halo rows */
    uint64_t  halo_before, halo_after;  /* the rows a block's windows read beyond its own */
    int       halo_wrap;        /* a wrap edge: rows past a series' ends from its other end */
    unsigned  bin_align;        /* bins alone per matrix: row blocks of whole bins (these rows), else 0 */
    int       gather;           /* the halo blocks fit the scaler after them as they write
                                 * (cls_route_trend_fits): the second stage applies alone */
    int       clean_alone;      /* the cleaning's options are checked as a cleaning alone's (a mask,
                                 * moments or values kept as read allowed): no scaler, factors or
                                 * statistics after it, or a first stage that cleans alone */
} cls_stages;

/* The route of cls_fit_transform(p, in, out, fitted?) on a context whose
 * switches are `tune` (testing.h; NULL: the engine's own choices); in
 * must not be NULL. */
void cls_route_fit_transform(const cls_pipeline *p, const cls_array *in, const cls_array *out, int want_fitted,
                             const cls_tuning *tune, cls_route *r);

/* The route of cls_fit(p, x): no output, statistics wanted; a cleaning
 * stage is the entries' to refuse (they name the call). x must not be
 * NULL. */
void cls_route_fit(const cls_pipeline *p, const cls_array *x, const cls_tuning *tune, cls_route *r);

/* The route of the cleaning stage alone inside a call routed r (its
 * scaler, factors and statistics after it, over its output): no fusing,
 * no quantiles, streams over a file's chunks. */
void cls_route_clean_alone(const cls_route *r, cls_route *alone);

/* The route of the rest of a call routed r after its cleaning stage wrote
 * its output (the scaler, factors and statistics over it, in place): no
 * cleaning stage, the same scaler's decisions. */
void cls_route_after_clean(const cls_route *r, cls_route *rest);

/* The stages of a file's fit-transform routed r (CLS_ENTRY_FILE or
 * CLS_ENTRY_NPY, not combined) with statistics asked for or not, given
 * whether the chunks of the file hold whole statistics groups (`whole`,
 * the chunks' geometry: api/stream.c): streamed in one pass, a fit then
 * an apply, the cleaning's passes, halo blocks, and a second stage (the
 * scaler, factors or statistics over the output) where the first cannot
 * fit them. Made before the call's checks (which check against it):
 * the halo rows' lookup (cls_lc_halo) reads any options. */
void cls_route_stages(const cls_route *r, const cls_pipeline *p, int want_fitted, int whole, cls_stages *s);

/* Whether p's light curves are bins alone per matrix (no cleaning, no
 * trend, no scaler or factors): each bin its own rows, so row blocks that
 * start on a bin's first row need nothing from their neighbours. */
int cls_route_bins_alone(const cls_pipeline *p);

/* The rules the routes are made of (the calls above use them; a test reads
 * them one by one). */

/* Whether p's scaler takes its map from the moments of the cleaned values
 * in the cleaning's last pass (its descriptor needs no quantiles; no
 * factors, no clamped clipping; not inverse). */
int cls_route_fuses(const cls_pipeline *p);

/* Whether p's cleaning stage streams over the chunks of a file (the
 * cleaning's passes, clean/clean.c's cls_clean_stream; across processes
 * too): its scaler fuses into the last pass (cls_route_fuses), or p
 * cleans alone (no scaler, no factors, no statistics asked for). */
int cls_route_clean_streams(const cls_pipeline *p, int want_fitted);

/* Whether a call of p writes one row per bin: p cleans alone (no scaler,
 * factors, inverse or statistics asked for) and its bins reduce
 * (cls_lc_reduces: have_out 0 where the output's shape is not given, a
 * .npy output's). */
int cls_route_bins_reduce(const cls_pipeline *p, int want_fitted, uint64_t in_batch, uint64_t in_rows, int have_out,
                          uint64_t out_batch, uint64_t out_rows);

/* Whether p's scaler takes counting passes for exact quantiles (its
 * descriptor needs them): what a fit cannot merge across chunks or
 * processes, and what takes the quantile range and the robust options. */
int cls_route_quantiles(const cls_pipeline *p);

/* Whether the scaler after a trend streamed in blocks with halo rows
 * takes its statistics from the blocks as they are written (each block's
 * own rows, after its trend and bins), so that no pass over the written
 * data fits it: a scaler of extremes alone (min-max, max-abs, decimal:
 * minima and maxima merge exactly, the statistics are those a pass would
 * fit), no factors, not inverse. The one rule: the stream asks it. */
int cls_route_trend_fits(const cls_pipeline *p);

/* Whether p cleans: its cleaning stage asks for anything (light curves
 * included). */
int cls_route_cleans(const cls_clean *c);

/* Whether c asks for the cleaning's own passes (cls_route_cleans but for
 * the light curves, which run after them). */
int cls_route_clean_passes(const cls_clean *c);

/* Whether p's cleaning stage runs through the engine's one pass
 * (clean/impute_fused.c: the *_imp builds of cl/scale.cl) rather than the
 * cleaning's own passes: imputation by the mean or a constant, or a
 * sentinel alone; no clipping, no mask, moments or values kept as read
 * asked for; a scaler whose descriptor makes its params in the fused
 * kernel and needs no quantiles, or none (the identity map); not inverse;
 * and not the switch impute_unfused of `tune` (NULL: none), which keeps
 * the cleaning's passes for comparisons. */
int cls_route_impute_fuses(const cls_pipeline *p, const cls_tuning *tune);

#endif
