/* Switches for tests, benchmarks and experiments: the engine's choices
 * forced one way, to compare paths or to reach one on a machine that would
 * not take it. Not part of the public API (include/clscale.h) and never read
 * from the environment: tests and the tools built beside them (tools/bench)
 * include this header and link the static library.
 *
 * A context takes its switches when it is created, from the process's
 * default (cls_tuning_default); cls_context_tuning() changes one context's
 * between calls. The zero value of every field is the engine's own choice,
 * what a user gets. */
#ifndef CLS_TESTING_H
#define CLS_TESTING_H

#include "clscale.h"

/* What the scheduler reads as time and speed, given rather than measured,
 * so that a test decides its choices from given speeds and sizes whatever
 * the machine's load: the clock of its slices' takes and completions, of
 * its phases and of a probe's cost (run.c, admit.c); a device's prior in
 * place of its probe (measure.c); the rate a device shows in place of the
 * one measured (admit.c's meters and the rate a call keeps). Each NULL
 * field is the engine's own: the monotonic clock, the probe, the measured
 * rate. Devices are named by their index in the context. The functions are
 * called from the context's worker threads, under the call's lock except a
 * phase's first and last reading of the clock. */
typedef struct cls_sched_source {
    double (*now)(void *user);                               /* seconds */
    double (*prior)(void *user, size_t device);              /* bytes/s, 0: unknown */
    double (*rate)(void *user, size_t device, double shown); /* bytes/s, for shown > 0 */
    void   *user;
} cls_sched_source;

typedef struct cls_tuning {
    /* kernels' shapes per device (device.c), read at creation; 0: the device's */
    unsigned    vec;           /* 1, 2, 4, 8 or 16: vector width of the scaling kernels */
    unsigned    kv;            /* 1..64: vectors per work-item */
    unsigned    local;         /* work-group size */
    unsigned    lanes;         /* 4 or 8: float64 columns per work-item of the short-column
                                  kernels (clip.cl, quantile.cl's qsort) */
    unsigned    copy_threads;  /* host copy threads (util/pool.c), read at creation; 0: the
                                  online CPUs */
    const char *force_staging; /* a device selector (as cls_config.devices): those devices
                                  take the discrete path, read at creation (the string is
                                  copied); NULL: none. CLS_FORCE_STAGING: every device */
    int         no_prior;      /* no speed probes: an unmeasured device takes a slice (admit.c) */
    int         no_team;       /* every call runs on every device (team.c) */
    int         impute_unfused; /* imputation ahead of a scaler takes the cleaning stage's
                                   own passes, not impute_fused.c's one pass: the call's
                                   route reads it (plan/route.c), for comparisons */
    int         qsort_column;  /* short columns' order statistics (select.c): 1 a column per
                                  work-item (qsort32g/64g, qselect_small) on every device, -1
                                  in lanes (qsort32/64/128); 0 by device type */
    int         no_gather;     /* exact selection keeps every counting pass on the devices
                                  rather than finishing on the host (select.c) */
    size_t      gather_bytes;  /* a streamed selection's gather copies out at most this many
                                  bytes of values, else it takes another counting pass
                                  (select.c); 0: CLS_GATHER_STREAM_BYTES */
    int         clean_flags_runtime; /* the cleaning's last pass (clean.cl's clean_apply) built
                                        without its flags fixed: the kernel a device falls back to
                                        past CLS_KVARIANTS combinations (program.c) */
    int         fit_tiles;     /* cls_fit cut in row tiles rather than whole groups (pipeline.c) */
    size_t      hash_part_rows; /* cls_describe of a file whose groups span chunks: rows
                                   whose hashes one part of the duplicate-row table holds
                                   (describe_stream.c); 0: HASH_BUDGET's */
    unsigned    clip_stage;    /* 1..3: the one-pass clipping kernel cut short after a stage,
                                  results wrong; only in a build configured with
                                  -Dbench_stages=true (clip_fast.c), ignored elsewhere */
    const cls_sched_source *sched; /* the scheduler's time and speeds (above); NULL: measured.
                                      The struct must outlive the contexts that use it */
} cls_tuning;

/* The switches contexts created after this call start with (NULL: none),
 * a copy; the string force_staging points to must outlive the creations
 * that copy it (each context keeps a copy of its own). */
void cls_tuning_default(const cls_tuning *t);

/* This context's switches, to change between calls (those read at creation
 * have no effect then). NULL for a NULL context. */
cls_tuning *cls_context_tuning(cls_context *ctx);

#endif
