/* The engine's model of one call: a job, its slices, and per device the
 * worker's state. Shared by plan.c (cutting), slice.c (running one slice on
 * one queue), stage.c (device and pinned buffers), run.c (workers, cursor,
 * failover) and pipeline.c (the public calls).
 *
 * The data is always seen as a (B * R) x C row-major matrix; statistics
 * group g is rows [g * Rg, (g + 1) * Rg). Matrix scope: Rg = R; batch scope:
 * Rg = B * R. A discount alone may re-view the array (rows merged into
 * columns) so that rows are long. */
#ifndef CLS_JOB_H
#define CLS_JOB_H

#include "internal.h"

#define CLS_FUSED_ROWS 4096  /* group rows up to which one work-item reads its columns twice */
#define CLS_CHUNK_ROWS 4096  /* rows per work-item in the statistics kernels */
/* Rows per work-item of a fit alone (FIT): a CPU work-item's rows are a
 * page or more apart in a wide group, and a work-item over all of a tall
 * group's rows read slower than chunks of 512 merged on the device
 * (probably the pages one work-item walks outgrow the TLB: not measured;
 * docs/PERFORMANCE.md, "Statistics"). */
#define CLS_FIT_CHUNK_ROWS 512
#define CLS_MAX_EVENTS 12    /* timed commands per slice */
#define CLS_PRM_PLANES 5     /* params planes at most: shift high, low, multiplier, offset, scaled fill */

typedef enum cls_op {
    CLS_OP_FUSED,  /* whole groups, or all rows of a column block of one: stats + scaling */
    CLS_OP_STATS,  /* statistics of rows of one group (phase 1 of two) */
    CLS_OP_APPLY,  /* scaling with host params and/or discount */
    CLS_OP_FIT     /* whole groups, or all rows of a column block of one: statistics only */
} cls_op;

/* The slice reads its data and writes none (statistics only). */
static inline int cls_op_reads_only(cls_op op) { return op == CLS_OP_STATS || op == CLS_OP_FIT; }
/* Its statistics entries are one per group and column it touches (FUSED,
 * FIT), not one per column (STATS: rows of one group). */
static inline int cls_op_per_group(cls_op op) { return op == CLS_OP_FUSED || op == CLS_OP_FIT; }

typedef enum cls_slice_state { CLS_SL_PENDING, CLS_SL_RUNNING, CLS_SL_DONE } cls_slice_state;

typedef struct cls_slice {
    cls_op   op;
    uint64_t row0, nrows;     /* rows of the view */
    size_t   col0, ncols;
    uint64_t group0, ngroups; /* groups touched; FUSED: whole groups unless ncols < C */
    size_t   stats_at;        /* first entry in job->sstats (FUSED, STATS, FIT) */
    uint64_t flo, fhi;        /* factor elements [flo, fhi) the slice reads */
    cls_slice_state state;
    int      dev;             /* device running or that ran it, -1 */
    int      home;            /* device holding it resident, -1 */
    double   t_take;          /* when its device took it, host seconds */
    int      written;         /* caller memory may hold part of its output */
    cl_mem   resident;        /* the slice's data kept on `home` between phases */
} cls_slice;

struct cls_devrun;

/* What a device has shown in one phase of a call, for its rate (admit.c):
 * bytes over the time from its first take to its last completion, the
 * pipeline's fill included (what a call of this size really costs it).
 * From a later completion on only when the start was not the device's
 * speed: a slice that built a kernel (program.c), or a first slice several
 * times longer than every later one (PoCL compiling a kernel variant for a
 * new grid shape at its first launch: up to seconds with a cold cache).
 * Counting from the first completion in every case, as before, read a GPU
 * whose three queues finish their slices together at 90 GB/s where its
 * calls moved 16-37 (H200, seed-b). */
typedef struct cls_meter {
    double   t0;         /* its first take, host seconds; 0: none yet */
    double   t1;         /* the completion counted from, when the start is not */
    double   t_last;     /* its last completion */
    uint64_t bytes;      /* completed */
    uint64_t bytes1;     /* completed by t1 */
    double   dur1;       /* its first slice, take to completion */
    double   rest;       /* the longest of its later slices */
    unsigned done;       /* slices completed */
    int      fresh;      /* a slice built a kernel: count from the last such one */
    int      fresh_last; /* its last completion built one: no rate */
} cls_meter;

/* A call on data already on a device (cls_*_buffer, resident.c): the
 * caller's buffers, offsets in elements, the device that runs it and how
 * the call joins the caller's commands. */
typedef struct cls_resident {
    cl_mem         in, out;      /* out NULL: a fit */
    uint64_t       in_off, out_off;
    size_t         device;       /* among the context's devices */
    const cls_sync *sync;        /* NULL: no wait list, no event out */
    int            waited;       /* the wait list is enqueued */
    cl_event       last;         /* the last command of a slice let go unwaited, or NULL */
} cls_resident;

/* A timed command before its clock is aligned to the host's. */
typedef struct cls_rawev {
    cls_event ev;
    int       device_clock;   /* start/end/queued are device seconds */
    double    queued, t_enq;
} cls_rawev;

typedef struct cls_job {
    cls_context *ctx;
    cls_dtype    dtype;
    size_t       es;
    const char  *x;
    char        *y;
    int          inplace;
    uint64_t     B, R;        /* matrices and rows per matrix of the view */
    size_t       C;           /* columns of the view (= row stride) */
    uint64_t     Rg, G;       /* rows per group, groups */

    unsigned     scaler;      /* the kernels' scaler code (cls_scaler_kernel_code), 0: none */
    int          moments;     /* statistics need mean and m2 */
    int          no_stats;    /* FUSED: nobody wants the statistics; skip them */
    int          clip;
    double       lo, hi;
    const cls_column_stats *pcol; /* APPLY with a scaler: the G * C columns' statistics */
    cls_scaler   pscaler;     /* the scaler their params are for (params.c) */
    cls_scaler_opts popts;    /* its options */
    int          pinverse;
    void        *ptab;        /* all params, made once when slices share them; NULL */

    /* imputation fused into the scaling (impute_fused.c): the *_imp kernels,
     * a fifth params plane (the scaled fill) */
    int          imp_on;
    unsigned     imp;         /* 0: a sentinel alone, 1: mean, 2: a constant */
    double       sent;        /* NaN: no sentinel */
    double       fillc;       /* imp 2 */
    const double *ifill;      /* APPLY with host params: each group and column's fill (G * C) */
    double      *fill_direct; /* only with sdirect: each column's fill (G * C), and its
                                 statistics made the imputed column's, as the slice
                                 that covers it finishes; NULL: not there */
    uint64_t    *miss_direct; /* with fill_direct: missing counts (G * C) or NULL */

    const char  *f;           /* factors (NULL: none) in the data's dtype */
    uint64_t     fsb, fsr, fsc, felems;

    cls_slice   *sl;
    size_t       nsl;
    cls_column_stats *sstats; /* per-slice statistics entries */
    size_t       nsstats;
    cls_column_stats *sdirect; /* FIT: the result's G x C columns, each written by
                                  the one slice that covers it (no sstats, no merge) */
    size_t       max_elems;   /* largest slice, elements of data */
    size_t       max_part;    /* largest partial-stats table (chunks * ncols) */
    size_t       max_out;     /* largest stats output (groups * ncols) */
    size_t       max_prm;     /* largest params table for one slice (entries) */
    uint64_t     max_span;    /* largest factor window (elements) */
    uint64_t     sum_span;    /* the factor windows of all slices (elements) */
    int          phase;       /* 1 or 2 */
    int          phases;
    size_t       slices_all, done_all;  /* over both phases, for the report */

    pthread_mutex_t lock;
    pthread_cond_t  cond;
    size_t       pending, running, done;
    uint64_t     pending_bytes;
    int          unrecoverable;   /* a failed slice may have half-written caller memory */
    int          workers;         /* workers of this phase not dropped */
    int          idle;            /* of those, waiting with nothing in flight */
    int          dormant;         /* devices of this phase with no worker yet */
    uint64_t     bytes_total, bytes_done;
    double       t0;              /* host seconds at the start of the call */
    double       host_copy_bw;    /* the context's, raised by this call's staging copies */
    cls_team    *team;            /* the kind of call (team.c), NULL: nothing to choose */
    int          solo;            /* the device that runs the call alone, -1: every device */
    int          trial;           /* this call tries the way that lost lately */
    int          built;           /* a slice built a kernel (one-time cost) */
    int          probed;          /* devices' priors were taken (one-time cost) */
    int          called_in;       /* reserves were called in (the lead failed) */

    cls_resident *res;            /* data on a device (resident.c); NULL: host arrays */
    struct cls_devrun *runs;      /* one per context device */
    size_t       nruns;
    cls_rawev   *raw;             /* CLS_PROFILE */
    size_t       nraw, capraw;
} cls_job;

/* One slice in flight on one queue. */
typedef struct cls_inflight {
    int         slice;            /* -1: the queue is free */
    cl_event    done;             /* completes the slice */
    cl_event    ev[CLS_MAX_EVENTS];
    cls_event_kind kind[CLS_MAX_EVENTS];
    const char *name[CLS_MAX_EVENTS];
    double      t_enq[CLS_MAX_EVENTS];  /* host time just before each enqueue */
    int         nev;
    double      stage_in0, stage_in1;    /* host staging copy times */
    cl_mem      xb, yb, fb;       /* per-slice buffers (zero copy, factor window) */
    void       *ymap;             /* mapped output, unmapped at finish */
    int         direct_out;       /* downloaded straight into caller memory */
    int         fresh;            /* its start built a kernel: a one-time cost, not the device's speed */
    uint64_t    bytes;
} cls_inflight;

/* Why a device last declined a slice (run.c), for the report of a call in
 * which it took none. */
typedef enum cls_decline_why {
    CLS_DECLINE_NONE,
    CLS_DECLINE_HOST_BOUND,   /* staging from pageable memory while host memory binds */
    CLS_DECLINE_PRIOR,        /* unmeasured, its probe far below another device's speed */
    CLS_DECLINE_SLOWER        /* the others would finish everything before its slice */
} cls_decline_why;

typedef struct cls_decline {
    cls_decline_why why;
    double mine, other;      /* bytes/s: its speed, and the figure it lost to */
    size_t other_dev;        /* for PRIOR: the device whose speed that was */
    int    other_probed;     /* for PRIOR: that speed is its probe (else its measured rate) */
    double t_me, t_all;      /* for SLOWER: seconds for its slice, for all the others' work */
} cls_decline;

typedef struct cls_devrun {
    cls_job    *job;
    cls_dev    *dev;
    int         participates;
    const char *sat_out;
    int         failed;
    cls_status  fail_status;
    char        fail_msg[CLS_REPORT_MSG];
    cls_inflight inf[CLS_MAX_QUEUES];
    unsigned    order[CLS_MAX_QUEUES]; /* queues in the order their slices started */
    unsigned    ninf;
    cl_mem      factors;          /* whole factor array on the device, or NULL */
    cl_mem      ptab;             /* the job's shared params table on the device, or NULL */
    uint64_t    resident_bytes, resident_budget;
    size_t      slices;
    uint64_t    bytes;
    uint64_t    inflight_bytes;
    cls_meter   phase;            /* this phase's takes and completions (its rate) */
    uint64_t    rate_bytes;       /* the call's counted bytes and seconds, phases that ended */
    double      rate_secs;        /*   (cls_meter_fold; the rate kept after the call) */
    double      t_first, t_last;  /* seconds from t0 */
    double      up, kern, down, stage;
    pthread_t   thread;
    int         started;          /* a thread runs its worker, not joined yet */
    int         dormant;          /* declined the phase's first slice: no thread until it might take one */
    int         staged;           /* staging device, caller memory not pinned: host threads copy */
    int         reserve;          /* takes no slice unless the devices at work fail (team.c) */
    cls_decline declined;         /* its last decline in this call (report: read only if it took no slice) */
    int         found_none;       /* its worker asked for a slice when none was left */
} cls_devrun;

/* Takes part in the call now: not failed, not in reserve. */
static inline int cls_run_active(const cls_devrun *r) { return r->participates && !r->failed && !r->reserve; }


/* ---- plan.c ---- */
/* Cuts the job into slices for phase `op` (FUSED, STATS or APPLY), no larger
 * than `slice_bytes` where the shape allows. */
cls_status cls_plan(cls_job *job, cls_op op, size_t slice_bytes);
/* The slice size that suits every participating device. */
size_t cls_plan_slice_bytes(const cls_job *job);
/* Turns the finished STATS slices into APPLY slices over the same
 * rectangles (phase 2), keeping those resident on a device there. */
void cls_plan_reuse_for_apply(cls_job *job);

/* ---- params.c ---- */
/* After the APPLY slices are planned: makes the table of every group's
 * params when slices share entries; otherwise slices make their own. */
cls_status cls_params_prepare(cls_job *job);
/* Slice s's params, four planes of ngroups * ncols entries, into dst. */
void cls_params_pack(const cls_job *job, const cls_slice *s, void *dst);
void cls_params_free(cls_job *job);
/* Planes of a params table: 4, or 5 with imputation (the scaled fill). */
unsigned cls_params_planes(const cls_job *job);

/* ---- dropped.c: devices context creation drops ---- */
/* Marks d dropped for a failure of `stage` with status st; the message is
 * the one this thread's last cls_fail() set. The first mark stays. */
void cls_drop_mark(cls_dev *d, cls_status st, const char *stage);
/* Moves a marked device's name and failure into the context's list. */
cls_status cls_drop_record(cls_context *ctx, cls_dev *d);
/* After the list is complete: one note per dropped device in the
 * context's message; with no device left, the failure naming each. */
cls_status cls_drop_report(cls_context *ctx);
void cls_drops_free(cls_context *ctx);

/* ---- stage.c ---- */
/* Makes the device's per-queue buffers big enough for the job. */
cls_status cls_stage_prepare(cls_job *job, cls_devrun *r);
/* Checks once per device that host-unified memory is really written in
 * place; a device that keeps shadow copies falls back to staging. */
cls_status cls_zero_copy_verify(cls_context *ctx);
/* The same check for one device (context creation runs it, after the
 * device's first build): CLS_OK, or the failure of its OpenCL calls. */
cls_status cls_zero_copy_check(cls_context *ctx, cls_dev *d);
/* Releases a device's per-queue buffers (context destruction). */
void cls_stage_release(cls_dev *dev);
/* Host copies between caller memory and a packed slot, on the copy pool. */
typedef struct cls_copy_plan {
    size_t rows;       /* rows of the copy (1 when the slice is contiguous in caller memory) */
    size_t row_bytes;  /* bytes of each */
    size_t rows_per;   /* rows per item (short rows), else 1 */
    size_t pieces;     /* items per row (long rows), else 1 */
    size_t piece;      /* bytes per piece */
    size_t items;      /* items the pool's threads share */
} cls_copy_plan;
/* How a slice's copy is cut into items (at most 1 MiB each). */
cls_copy_plan cls_stage_copy_plan(const cls_job *job, const cls_slice *s);
void cls_stage_pack(cls_job *job, const cls_slice *s, const char *src, void *slot);
void cls_stage_unpack(cls_job *job, const cls_slice *s, const void *slot, char *dst);

/* ---- slice_compute.c ---- */
/* Room for the next command's event of a slice in flight, with its kind
 * and the host time; NULL when the slice has no room left. */
cl_event *cls_slice_event(cls_inflight *f, cls_event_kind kind, const char *name);
/* Enqueues slice s's kernels (statistics, apply, discount or fused) on
 * queue q over x (input at byte xoff) into y (at yoff), rows ld elements
 * apart, with the parameter uploads they need. */
cls_status cls_slice_compute(cls_devrun *r, unsigned q, cls_slice *s, cl_mem x, uint64_t xoff, cl_mem y,
                             uint64_t yoff, uint64_t ld);
/* Enqueues the download of the statistics slice s's kernels left. */
cls_status cls_slice_stats_download(cls_devrun *r, unsigned q, const cls_slice *s);

/* ---- slice.c ---- */
/* Enqueues slice si on queue q: zero copy, staging, or on the caller's
 * buffers (job->res). */
cls_status cls_slice_start(cls_devrun *r, unsigned q, size_t si);
/* Lets go of a slice enqueued on the caller's buffers without waiting for
 * it (a resident call that needs nothing back on the host): its events
 * are released, the last one kept in *last (which it replaces). */
void cls_slice_detach(cls_devrun *r, unsigned q, cl_event *last);
cls_status cls_slice_finish(cls_devrun *r, unsigned q);
/* Releases what a slice in flight holds after a failure (no waiting on errors). */
void cls_slice_abandon(cls_devrun *r, unsigned q);

/* The rate a device has shown in earlier calls on memory like this call's
 * (pageable staged or not, cls_dev.rate); 0: none yet. */
static inline double cls_run_rate(const cls_devrun *r) { return r->dev->rate[r->staged != 0]; }
static inline void cls_run_set_rate(cls_devrun *r, double v) { r->dev->rate[r->staged != 0] = v; }

/* The speed a device is known by before this call: its measured rate,
 * else its prior; 0 when neither is known. */
static inline double cls_known_speed(const cls_devrun *r)
{
    double v = cls_run_rate(r);
    return v > 0 ? v : r->dev->prior;
}

/* A device not measured yet whose prior is this many times below the
 * fastest other device's takes a slice only with this margin (run.c): the
 * prior times a copy kernel, and the scaling kernels cost more instructions
 * per byte (several times more on a simulator). The margin never applies to
 * the soonest device, which always takes: otherwise devices could all
 * decline. The plan leaves such a device out of the slice size (plan.c). */
#define CLS_PRIOR_MARGIN 8.0

/* ---- context.c: whether a call may run on ctx (every entry asks first) ---- */
cls_status cls_check_ctx(cls_context *ctx);

/* ---- plan/checks.c: every call's argument checks ---- */
/* an array given by the caller: data, dtype, shape */
cls_status cls_check_array(cls_context *ctx, const cls_array *a, const char *what);
/* in and out as arrays, and out either in itself or apart from it */
cls_status cls_check_io(cls_context *ctx, const cls_array *in, const cls_array *out);
size_t cls_array_bytes(const cls_array *a);
/* dtype and shape of `a` (not its data) */
cls_status cls_check_shape(cls_context *ctx, const cls_array *a, const char *what);
/* The pipeline is valid for data shaped like `x` (its data unused); its
 * factors do not overlap `out` (NULL: not checked). */
cls_status cls_check_pipeline(cls_context *ctx, const cls_pipeline *p, const cls_array *x, const cls_array *out);
/* c's light-curve fields against groups of Rg rows; reduce: for
 * cls_host_bin() (bins required, a reducing statistic), else for a
 * cleaning stage that keeps the rows (a smoothing statistic). */
cls_status cls_check_curves(cls_context *ctx, const cls_clean *c, uint64_t Rg, int reduce);
/* The one check of a fit-transform of host arrays, before any pass
 * writes: the light-curve fields of `curves` (NULL: none; a cleaning
 * stage's, clean/clean.c) against groups of Rg rows, in and out as arrays,
 * and `rest` (the pipeline without its cleaning stage) against them; the
 * passes after it check nothing again. */
cls_status cls_check_fit_transform(cls_context *ctx, const cls_pipeline *rest, const cls_clean *curves,
                                   uint64_t Rg, const cls_array *in, const cls_array *out);
/* A cleaning stage's options but its light curves (cls_check_curves):
 * as a cleaning alone's (`alone`: no scaler, factors or statistics after
 * it; a mask, moments or values kept as read allowed) or not. */
cls_status cls_check_clean_opts(cls_context *ctx, const cls_clean *c, int alone);
/* The one check of a file's fit-transform (api/stream.c's door, before
 * anything is written), against its plan of stages: p against data
 * shaped like `shape`, not inverse, its light curves against groups of Rg
 * rows (reduce: bins reduced to a row each, which write no mask), its
 * cleaning's options as the plan's first stage takes them (clean_alone:
 * cls_stages's), and no flatten where the plan cuts series into halo
 * blocks (halo: cls_stages's). */
cls_status cls_check_file_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *shape,
                                        uint64_t Rg, int reduce, int clean_alone, int halo);
/* The statistics `s` suit `p` (not NULL) and data shaped like `in`. */
cls_status cls_check_stats(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in);

/* ---- fit_quantiles.c ---- */
/* Adds the robust scaler's median and quantile range to `s`, fitted on x. */
cls_status cls_fit_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats *s);
/* The robust fit of x by selection alone, with no statistics pass: each
 * column's count, missing, min, max and absmax (the extremes are ranks 0
 * and n - 1 of the same selection), median and quantile range into s
 * (made by the caller for x's groups and columns, its columns unwritten:
 * every one is written). */
cls_status cls_fit_by_selection(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats *s);
/* The same over groups streamed in chunks (quantiles/select.h's source; v
 * describes the groups, v->x unused): stream.c, for groups larger than a
 * buffer. *s is read after the source's passes, so its first pass may
 * make it. */
struct cls_qview;
struct cls_qsource;
cls_status cls_fit_quantiles_source(cls_context *ctx, const cls_pipeline *p, const struct cls_qview *v,
                                    const struct cls_qsource *src, cls_stats *const *s);

/* ---- pipeline.c: the calls shared with the buffer calls (buffer.c) ---- */
/* The calls after their checks; `res` NULL: host arrays, else the data is
 * in res's buffers (in and out then only give the shape and dtype). */
cls_status cls_do_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_resident *res,
                      cls_stats **out);
cls_status cls_do_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in,
                            cls_array *out, cls_resident *res);
cls_status cls_do_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                                cls_resident *res, cls_stats **fitted);

/* Imputation fused into the scaling (impute_fused.c calls it): missing
 * values (NaN, +-Inf, the sentinel) skipped by the statistics, the
 * scaler's params made from the imputed column's statistics, missing
 * values written as the scaled fill; *fitted holds the imputed columns'
 * statistics. */
typedef struct cls_imp_opts {
    unsigned  imp;          /* 0: a sentinel alone, 1: mean, 2: a constant */
    int       has_sent;
    double    sent, fillc;
    uint64_t *missing_out;  /* per group and column, or NULL */
    double   *fill_out;     /* the same */
} cls_imp_opts;
cls_status cls_do_fit_transform_imp(cls_context *ctx, const cls_pipeline *p, const cls_imp_opts *imp,
                                    const cls_array *in, cls_array *out, cls_stats **fitted);

/* ---- resident.c ---- */
/* Runs the current phase of a resident call on its device (in place of
 * cls_run_phase). */
cls_status cls_resident_phase(cls_job *job);
/* A resident call whose pipeline is the identity: a device copy. */
cls_status cls_resident_copy(cls_job *job, size_t bytes);
/* Before a call: waits for resident work still running on the devices'
 * queues (cls_dev.resident_busy), but for `keep` (-1: none), whose queue
 * orders the new call's commands after it. */
void cls_resident_settle(cls_context *ctx, long keep);
/* Ends a resident call: its event out, or a wait for its commands. */
cls_status cls_resident_end(cls_job *job, cls_status st);

/* ---- team.c ---- */
/* Before planning a call with several devices: runs it on the lead device
 * alone, the others in reserve, when recent calls of its kind were faster
 * so (or to find out whether they are). The switch no_team: never. */
void cls_team_choose(cls_job *job);
/* After a call that succeeded: keeps its throughput for the way it ran. */
void cls_team_record(cls_job *job, double wall);
/* The lead failed: the reserves take part (lock held). */
void cls_team_call_in(cls_job *job);

/* ---- program.c (beside the kernels it launches) ---- */
/* Sets the float32 copy kernel's arguments for b = a over `bytes`; its
 * global size (for a launch with dev->local) into *global. Used by the
 * probes (measure.c) and the zero-copy checks (stage.c). */
cl_int cls_copy_args(cls_dev *d, cl_mem a, cl_mem b, size_t bytes, size_t *global);

/* ---- measure.c ---- */
/* A quick estimate of the device's speed (bytes/s) on queue q, for the
 * scheduler's first call; 0 when it could not be taken. */
double cls_device_prior(cls_dev *d, unsigned q);
/* The estimate from its rounds: round(user, bytes) runs the copy kernel
 * once over `bytes` and returns the seconds it took (< 0: failed); sizes
 * from 4 KiB up to `cap` bytes (the rule is at the definition). */
typedef double (*cls_prior_round)(void *user, size_t bytes);
double cls_prior_rounds(cls_prior_round round, void *user, size_t cap);

/* ---- run.c ---- */
/* Forgets a measured rate more than CLS_PRIOR_MARGIN below an identical
 * device's (same model, platform, driver): it says more about one-time
 * costs in the calls that measured it (a driver compiling a kernel variant
 * at its first launch, as PoCL does per local size and grid shape: up to
 * seconds with a cold cache) than about the device. The device is then
 * measured again like a new one; otherwise a device that declines slices
 * for its low rate would never be measured again. */
/* A take and a completion (`took` seconds after its take) on a meter; the
 * rate it shows at `now` (0: none yet, fewer than two completions, or not
 * the device's speed); its counted bytes and seconds, one completion
 * enough, added to the call's (at the end of a phase). */
void cls_meter_take(cls_meter *m, double now);
void cls_meter_done(cls_meter *m, uint64_t bytes, double took, double now, int fresh);
double cls_meter_rate(const cls_meter *m, double now);
void cls_meter_fold(cls_devrun *r);
void cls_run_forget(cls_job *job);
/* Forgets as above, then takes the speed priors of the devices not measured
 * yet, when several devices take part (before planning: the plan spreads
 * by speed). */
void cls_run_priors(cls_job *job);
/* The scheduler's clock: the tests' (cls_tuning.sched) or cls_now(). */
double cls_sched_now(const cls_context *ctx);
/* Whether device run r would take a slice of `bytes` now (lock held; the
 * rule is at its definition). When it would not and `why` is not NULL,
 * *why says why. */
int cls_may_take(const cls_devrun *r, uint64_t bytes, double now, cls_decline *why);
/* Runs the current phase's slices on every participating device. */
cls_status cls_run_phase(cls_job *job);

/* ---- report.c ---- */
/* Fills the context's report (and events) from the job, after the call. */
cls_status cls_report_finish(cls_job *job, double wall);

/* ---- record.c: what a finished slice leaves for the scheduler and report ---- */
/* Keeps a finished slice's timings (slice.c calls it). */
void cls_record_events(cls_devrun *r, unsigned q, double stage_out0, double stage_out1);
/* A staging copy of `bytes` between caller and pinned memory took
 * `seconds`: raises the job's figure of host memory traffic. */
void cls_run_note_copy(cls_job *job, uint64_t bytes, double seconds);

#endif
