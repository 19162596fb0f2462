/* What the files of `clscale bench` share, private to them: cmd_bench.c
 * owns the options, the order of the run and the progress line;
 * bench_rounds.c times and checks the rows, round by round; bench_limits.c
 * measures the limits and sets each row against them. What they gather is
 * in bench_report.h, whose file prints it. */
#ifndef CLS_BENCH_RUN_H
#define CLS_BENCH_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "bench_clock.h"
#include "bench_report.h"
#include "clscale.h"

/* Fixed, so that every run and every machine times the same numbers. */
#define BENCH_SEED 20261122u

/* ---- bench_progress.c --------------------------------------------------- */

/* Decides once whether to draw: stderr is a terminal and not --quiet. */
void bench_progress_start(int quiet);
/* Redraws the one progress line on stderr (only when it is a terminal). */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Wipes the progress line, before anything else is printed. */
void bench_progress_clear(void);

/* ---- bench_rounds.c ----------------------------------------------------- */

/* bench_now_s(), bench_sorted_median(): bench_clock.h */

/* One workload's data. */
typedef struct wl_data {
    bench_workload w;
    void          *x, *f, *y, *ys, *yt;   /* input, factors, clscale out, references' outs */
    cls_array      ax, af, ay;
    cls_pipeline   p;
} wl_data;

/* Allocates d's arrays for w and fills them with seeded data; -1 with the
 * reason in err when they cannot be had. */
int bench_wl_alloc(wl_data *d, const bench_workload *w, char *err, size_t errlen);
/* Frees d's arrays. */
void bench_wl_free(wl_data *d);

/* One call's report, its strings copied (the report lives until the next call). */
typedef struct snapshot {
    int        phases;
    size_t     slices, nparts;
    bench_part parts[BENCH_MAX_DEVICES];
} snapshot;

/* Memory the rounds use besides the workload's:
 * - a buffer read before each timed call, so that every row's data has left
 *   the caches and the call starts from memory, as STREAM (the limit) does,
 *   whatever the row before it left there (a workload the size of the
 *   last-level cache would otherwise run faster after a row that read its
 *   input);
 * - STREAM copy's arrays, for a pass in every round: the host-copy limit is
 *   measured beside the calls it bounds (this VM's memory speed drifts by
 *   2x over minutes).
 * A part that could not be allocated is left out (length 0). */
typedef struct round_mem {
    unsigned char *evict;
    size_t         evict_len;
    double        *stream_a, *stream_c;
    size_t         stream_n;
} round_mem;

/* Allocates and touches the eviction buffer and STREAM copy's arrays. */
void bench_round_mem_open(round_mem *m, size_t evict_bytes, size_t stream_bytes);
/* Frees what bench_round_mem_open() allocated. */
void bench_round_mem_close(round_mem *m);

/* One configuration being timed. The configurations of a workload run in
 * rounds, each round one call of each (round 0 the warm-up), so that a drift
 * in the machine's speed (another tenant, the clock, the page cache) falls
 * on all of them alike and their ratios stay fair. */
typedef struct runner {
    bench_run   *run;
    cls_context *ctx;       /* NULL: a host reference */
    int          corrupt;   /* the tests' proof that a wrong result is caught */
    snapshot    *snaps;     /* the report of each timed call */
    snapshot     last;      /* the warm-up's, or the failed call's */
    int          timed;     /* the timed repeat (1-based) of ctx's last call when it completed, else 0 */
    int          live;      /* still running: not failed, not sat out */
    void        *px, *py;   /* pinned rows: input and output from cls_host_alloc(ctx) */
} runner;

/* Gives a pinned row its input (a copy of the workload's) and output in
 * memory from cls_host_alloc(); marks the row failed when that fails. */
void bench_runner_pin(runner *u, const wl_data *d);
/* Frees what bench_runner_pin() allocated. */
void bench_runner_unpin(runner *u);

/* Times and checks the n runners' calls over a warm-up and `repeats` rounds,
 * with STREAM copy in each round; fills their runs and res's copy figures. */
void bench_run_rounds(runner *u, size_t n, wl_data *d, const round_mem *mem, int repeats, bench_result *res);

/* ---- bench_numpy.c ------------------------------------------------------ */
/* Times numpy's code for w in a child `python` (NULL: not asked for):
 * a warm-up and `repeats` calls, each after reading evict_bytes; *out says
 * the median or why there is none. */
void bench_numpy_time(const char *python, const bench_workload *w, int repeats, size_t evict_bytes,
                      bench_numpy *out);

/* ---- bench_limits.c ----------------------------------------------------- */

/* The machine's last-level caches in bytes, 0 when unknown. */
size_t bench_llc_bytes(void);
/* Measures the host's STREAM bandwidth and each device's limits into m. */
void bench_measure_limits(bench_machine *m, cls_context *ctx);
/* Sets each of r's runs against its limit and the host references. */
void bench_derive(const bench_machine *m, bench_result *r);

/* ---- bench_resident.c --------------------------------------------------- */

/* Seed-A's fit+transform of cl_mem buffers already on one device against
 * the fused kernel's own time there (bench_resident_row: bench_report.h). */

/* Runs the row for device `global` (`clscale devices` index) on workload w
 * over `repeats` rounds after a warm-up; 0, or -1 with row->why. */
int bench_resident(size_t global, const bench_workload *w, int repeats, bench_resident_row *row);

/* ---- bench_model.c ------------------------------------------------------ */

/* One memory kind of a workload on the modelled bus: medians of the CPU
 * device alone [0], the modelled GPU alone [1], both together [2]. */
typedef struct bench_model_row {
    int    pinned;
    double t[3];
    double ratio;           /* together / the better alone */
    char   why[512];
} bench_model_row;

/* Sets the environment for the bus layer at `layer` (before any OpenCL
 * call); -1 with why when the file cannot be opened. */
int bench_model_env(const char *layer, char *why, size_t len);
/* Runs workload w on the modelled bus, pageable (rows[0]) and pinned
 * (rows[1]); 0, or -1 with rows[0].why. */
int bench_model_run(const bench_workload *w, int repeats, bench_model_row rows[2]);
/* `clscale bench --model LAYER`: sets the environment, runs the workloads
 * whose bit is set in `want` at `size` and prints the table; the exit
 * status (EXIT_OK, EXIT_FAIL). */
int bench_model_main(const char *layer, unsigned want, double size, int repeats, int pageable_only);
/* --workload shapes (bench_shapes.c): the shape sweep, its table on stdout
 * and, with --json, its rows; an exit status. */
struct options;
int bench_shapes(const struct options *o);
/* --workload lightcurves (bench_lightcurves.c): trends and bins of a batch
 * of light curves, its table on stdout and, with --json, its rows; an exit
 * status. */
int bench_lightcurves(const struct options *o);

/* ---- bench_calls.c: what the two above share ---------------------------- */

/* A context on o's devices and, with --json, the result file begun with
 * its tool, version, `workload` and machine ("cpu", "devices"), for the
 * caller's members and its "rows" array to follow. EXIT_OK, or EXIT_FAIL
 * with the reason on stderr and nothing left open. */
int bench_calls_open(const struct options *o, const char *workload, cls_context **ctx, FILE **js);
/* Ends the "rows" array and the file (when js), closes it and destroys
 * ctx; rc, or EXIT_FAIL when the file could not be written. */
int bench_calls_close(const struct options *o, cls_context *ctx, FILE *js, int rc);
/* One call of a workload: operation `op` (the workload's own numbering)
 * of x into y, with a second output where the operation has one (shapes'
 * quantiles: double *; light curves' bins: cls_array *). */
typedef struct bench_call {
    cls_context     *ctx;
    int              op;
    const cls_array *x;
    cls_array       *y;
    void            *out2;
} bench_call;
/* The unit both workloads count in: one min-max call (per matrix) of c->x
 * into c->y. */
cls_status bench_minmax_call(const bench_call *c);
/* Times run(c) after one warm-up call, `repeats` times: the median in
 * *median_s; the first status that is not CLS_OK, and no median. */
cls_status bench_time_call(cls_status (*run)(const bench_call *c), const bench_call *c, int repeats,
                           double *median_s);
/* Seeded numbers: a state for `seed`, then xorshift64's uniform in [0, 1)
 * and a standard normal (Box-Muller over two uniforms). */
uint64_t bench_rng_state(uint64_t seed);
double bench_uniform(uint64_t *s);
double bench_normal(uint64_t *s);

#endif
