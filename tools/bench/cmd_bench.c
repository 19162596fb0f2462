/* clscale bench: times clscale on the seeded workloads of bench.h against
 * the host references, on each selected device alone and on all of them
 * together, next to the limits measured in the same run.
 *
 * Owns the options, the order of the run and the progress line;
 * bench_limits.c measures the limits and sets each row against them,
 * bench_rounds.c times and checks the rows (bench_run.h), bench_host.c
 * supplies the workloads, references and STREAM, bench_report.c prints and
 * writes JSON; bench_resident.c times the resident rows; bench_model.c is
 * --model (its own table, printed there).
 * How a figure is taken (STREAM and clpeak are the models):
 *   - a warm-up call, then --repeats timed calls; median and min-max of the
 *     wall clock around each call (what the caller waits for);
 *   - every call's output is poisoned (all bits set: NaN) before the call
 *     and compared with the single-threaded reference after it, so a call
 *     that skipped part of its output cannot pass; a wrong result is a
 *     failure, never a time;
 *   - clscale reads and writes pageable memory from malloc, out of place,
 *     as a caller's numpy arrays would be.
 * Prints only from here and bench_report.c; stderr carries one progress
 * line, redrawn in place, and only when it is a terminal.
 * For the tests only: $CLSCALE_BENCH_CORRUPT=N spoils one element of device
 * N's output after each of its calls alone, to prove the check catches it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_files.h"
#include "bench_run.h"
#include "cli.h"
#include "io/out_target.h"

#include "bench_options.h"

/* ---- the run ------------------------------------------------------------ */

typedef struct bench_state {
    options        o;
    bench_machine *m;
    cls_context   *all;                       /* every selected device */
    cls_context   *alone[BENCH_MAX_DEVICES];  /* one per device; == all when only one */
    char           alone_error[BENCH_MAX_DEVICES][512];
    bench_trace    trace;                     /* what --trace and --timeline hold */
    long           corrupt;                   /* $CLSCALE_BENCH_CORRUPT: a device whose results
                                                 are spoiled after each call, for the tests; -1 */
    int            failures;                  /* runs that failed or were wrong, workloads that could not run */
    int            unwritten;                 /* output files not written */
    round_mem      mem;                       /* eviction buffer, STREAM arrays */
} bench_state;

/* Writes --trace and --timeline from `ctx`, whose last call is the last timed
 * call of `run` (a later qualifying run overwrites them). */
static void write_traces(bench_state *s, cls_context *ctx, const bench_workload *w, const bench_run *run,
                         int repeat)
{
    if (!s->o.trace && !s->o.timeline) return;
    bench_trace *t = &s->trace;
    cls_status st;
    if (s->o.trace && (st = cls_trace_write(ctx, s->o.trace, CLS_TRACE_JSON)) != CLS_OK) {
        bench_progress_clear();
        cli_error(EXIT_FAIL, "bench: --trace %s: %s: %s", s->o.trace, cls_status_str(st), cls_last_error(ctx));
        s->unwritten++;
        s->o.trace = NULL;
    }
    if (s->o.timeline && (st = cls_trace_write(ctx, s->o.timeline, CLS_TRACE_SVG)) != CLS_OK) {
        bench_progress_clear();
        cli_error(EXIT_FAIL, "bench: --timeline %s: %s: %s", s->o.timeline, cls_status_str(st),
                  cls_last_error(ctx));
        s->unwritten++;
        s->o.timeline = NULL;
    }
    t->written = 1;
    t->json_path = s->o.trace;
    t->svg_path = s->o.timeline;
    snprintf(t->workload, sizeof t->workload, "%s", w->name);
    snprintf(t->run, sizeof t->run, "%s", run->name);
    t->repeat = repeat;
    t->repeats = s->o.repeats;
    t->nlanes = 0;
    cls_report rep;
    if (cls_last_report(ctx, &rep) != CLS_OK) return;
    for (size_t i = 0; i < rep.nevents; i++) {
        cls_device_info info;
        size_t dev = cls_device_get(ctx, rep.events[i].device, &info) == CLS_OK ? info.index : rep.events[i].device;
        size_t q = rep.events[i].queue, k = 0;
        while (k < t->nlanes && !(t->lane[k][0] == dev && t->lane[k][1] == q)) k++;
        if (k == t->nlanes && k < sizeof t->lane / sizeof t->lane[0]) {
            t->lane[k][0] = dev;
            t->lane[k][1] = q;
            t->nlanes++;
        }
    }
}

/* A copy of row `like` (a staging device alone, or all together) whose
 * caller memory comes from cls_host_alloc() of the same context. */
static void add_pinned_row(bench_result *r, runner *u, size_t *nu, const bench_run *like, cls_context *ctx)
{
    char name[sizeof like->name];
    memcpy(name, like->name, sizeof name);
    bench_run *run = &r->runs[r->nruns++];
    *run = *like;
    run->pinned = 1;
    snprintf(run->name, sizeof run->name, "%.36s, pinned", name);
    u[(*nu)++] = (runner){.run = run, .ctx = ctx, .live = 1};
}

static void run_workload(bench_state *s, const bench_workload *w, bench_result *r)
{
    bench_machine *m = s->m;
    int repeats = s->o.repeats;
    memset(r, 0, sizeof *r);
    r->w = *w;
    r->bytes = bench_bytes(w);
    r->tolerance = bench_tolerance(w);
    bench_progress("%s: generating %.0f MB of seeded data", w->name, (double)r->bytes / 1e6);
    wl_data d;
    if (bench_wl_alloc(&d, w, r->error, sizeof r->error) != 0) {
        s->failures++;
        return;
    }
    runner u[4 + 2 * BENCH_MAX_DEVICES];
    size_t nu = 0;
    memset(u, 0, sizeof u);

    bench_run *run = &r->runs[r->nruns++];
    run->kind = RUN_HOST_SINGLE;
    snprintf(run->name, sizeof run->name, "host single");
    u[nu++] = (runner){.run = run, .live = 1};
    run = &r->runs[r->nruns++];
    run->kind = RUN_HOST_THREADS;
    snprintf(run->name, sizeof run->name, "host threads");
    u[nu++] = (runner){.run = run, .live = 1};

    for (size_t i = 0; i < m->ndev; i++) {
        const cls_device_info *info = &m->dev[i].info;
        if (m->ndev > 1 && !bench_wants_alone(&s->o, info->index)) continue;
        run = &r->runs[r->nruns++];
        run->kind = RUN_DEVICE;
        run->ndev = 1;
        run->dev[0] = info->index;
        snprintf(run->name, sizeof run->name, "device %zu alone", info->index);
        if (w->dtype == CLS_F64 && !info->fp64) {
            run->status = RUN_SAT_OUT;
            snprintf(run->why, sizeof run->why, "no cl_khr_fp64 (float64 data)");
        } else if (!s->alone[i]) {
            run->status = RUN_FAILED;
            snprintf(run->why, sizeof run->why, "%s", s->alone_error[i]);
        } else {
            u[nu++] = (runner){.run = run, .ctx = s->alone[i], .corrupt = (long)info->index == s->corrupt, .live = 1};
            /* a staging device again, on the pinned memory cls_host_alloc()
             * gives: DMA, no copy threads (what the bus allows) */
            if (info->staging && !s->o.pageable_only) add_pinned_row(r, u, &nu, run, s->alone[i]);
        }
    }
    if (m->ndev > 1) {
        run = &r->runs[r->nruns++];
        run->kind = RUN_TOGETHER;
        run->ndev = m->ndev;
        for (size_t i = 0; i < m->ndev; i++) run->dev[i] = m->dev[i].info.index;
        snprintf(run->name, sizeof run->name, "all together");
        u[nu++] = (runner){.run = run, .ctx = s->all, .live = 1};
        int staging = 0;
        for (size_t i = 0; i < m->ndev; i++) staging |= m->dev[i].info.staging;
        if (staging && !s->o.pageable_only) add_pinned_row(r, u, &nu, run, s->all);
    }
    for (size_t i = 0; i < nu; i++)
        if (u[i].run->pinned) bench_runner_pin(&u[i], &d);
    for (size_t i = 0; i < nu; i++) {
        if (!u[i].ctx) continue;
        u[i].snaps = malloc((size_t)repeats * sizeof *u[i].snaps);
        if (!u[i].snaps) {
            u[i].run->status = RUN_FAILED;
            snprintf(u[i].run->why, sizeof u[i].run->why, "out of memory for the run's reports");
            u[i].live = 0;
        }
    }
    bench_run_rounds(u, nu, &d, &s->mem, repeats, r);

    /* the traces: the device's run when only one is selected, else all
     * together, which is the last call of the last round */
    const runner *traced = &u[nu - 1];
    if (traced->ctx && traced->timed && (m->ndev == 1 || traced->run->kind == RUN_TOGETHER))
        write_traces(s, traced->ctx, w, traced->run, traced->timed);
    for (size_t i = 0; i < nu; i++) {
        free(u[i].snaps);
        bench_runner_unpin(&u[i]);
    }
    bench_wl_free(&d);
    for (size_t i = 0; i < r->nruns; i++) s->failures += r->runs[i].status == RUN_FAILED;
    bench_derive(m, r);
}

static int describe_machine(bench_state *s)
{
    bench_machine *m = s->m;
    bench_cpu_model(m->cpu, sizeof m->cpu);
    m->cores = bench_cpus();
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    m->version = cls_version();
    m->size = s->o.size;
    m->repeats = s->o.repeats;
    m->selector = s->o.devices;
    m->seed = BENCH_SEED;
    m->ndev = cls_device_count(s->all);
    if (m->ndev > BENCH_MAX_DEVICES)
        return cli_error(EXIT_FAIL, "bench: %zu devices selected; select at most %d (--devices)", m->ndev,
                         BENCH_MAX_DEVICES);
    for (size_t i = 0; i < m->ndev; i++)
        if (cls_device_get(s->all, i, &m->dev[i].info) != CLS_OK)
            return cli_error(EXIT_FAIL, "bench: cannot describe device %zu: %s", i, cls_last_error(s->all));
    return EXIT_OK;
}

static void open_alone(bench_state *s)
{
    const bench_machine *m = s->m;
    if (m->ndev == 1) {
        s->alone[0] = s->all;
        return;
    }
    for (size_t i = 0; i < m->ndev; i++) {
        if (!bench_wants_alone(&s->o, m->dev[i].info.index)) continue;
        char sel[32];
        snprintf(sel, sizeof sel, "%zu", m->dev[i].info.index);
        cls_config cfg = {.devices = sel, .flags = CLS_PROFILE};
        bench_progress("opening device %zu", m->dev[i].info.index);
        cls_status st = cls_context_create(&cfg, &s->alone[i]);
        if (st != CLS_OK) {
            snprintf(s->alone_error[i], sizeof s->alone_error[i], "no context for device %s alone: %s: %s", sel,
                     cls_status_str(st), s->alone[i] ? cls_last_error(s->alone[i]) : "out of memory");
            cls_context_destroy(s->alone[i]);
            s->alone[i] = NULL;
        }
    }
}

/* --alone names devices that take part: an index that is not one of them
 * is a usage error (it would silently get no row). */
static int check_alone(const options *o, const bench_machine *m)
{
    if (!o->alone) return EXIT_OK;
    for (const char *p = o->alone; *p;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p) { /* an empty term: ",," */
            p++;
            continue;
        }
        size_t i = 0;
        while (i < m->ndev && m->dev[i].info.index != v) i++;
        if (i == m->ndev) {
            cli_usage_error("bench", "--alone %s: device %lu is not one of the selected devices (see "
                      "clscale devices)", o->alone, v);
            return EXIT_USAGE;
        }
        p = *end ? end + 1 : end;
    }
    return EXIT_OK;
}

/* An output whose folder cannot be written fails now, not after the run;
 * a device or pipe (/dev/null) is written into, its folder does not matter. */
static int check_outputs(const options *o)
{
    const char *paths[] = {o->json, o->trace, o->timeline}, *flags[] = {"--json", "--trace", "--timeline"};
    for (size_t i = 0; i < 3; i++) {
        if (!paths[i]) continue;
        char *real;
        int kind, e = cls_target_resolve(paths[i], &real, &kind);
        if (e) {
            cli_usage_error("bench", "%s %s: %s", flags[i], paths[i], cls_target_why(e));
            return EXIT_USAGE;
        }
        free(real);
        if (kind == CLS_TARGET_STREAM) continue;
        const char *slash = strrchr(paths[i], '/');
        char folder[4096];
        if (!slash) snprintf(folder, sizeof folder, ".");
        else if (slash == paths[i]) snprintf(folder, sizeof folder, "/");
        else snprintf(folder, sizeof folder, "%.*s", (int)(slash - paths[i]), paths[i]);
        if (access(folder, W_OK | X_OK) != 0)
            return cli_error(EXIT_FAIL, "bench: %s %s: cannot write in %s: %s", flags[i], paths[i], folder,
                             strerror(errno));
    }
    return 0;
}

/* Seed-A on cl_mem buffers already on each device that runs alone, into r. */
static void resident_rows(bench_state *s, const bench_workload *w, bench_result *r)
{
    for (size_t i = 0; i < s->m->ndev && r->nresident < BENCH_MAX_DEVICES; i++) {
        const cls_device_info *info = &s->m->dev[i].info;
        if (s->m->ndev > 1 && !bench_wants_alone(&s->o, info->index)) continue;
        if (w->dtype == CLS_F64 && !info->fp64) continue;
        bench_resident_row *row = &r->resident[r->nresident++];
        uint64_t bytes = (uint64_t)bench_elements(w) * (w->dtype == CLS_F64 ? 8 : 4);
        if (bytes > info->max_alloc_bytes || 2 * bytes > info->global_mem_bytes) {
            memset(row, 0, sizeof *row);
            row->device = info->index;
            row->status = 1;
            snprintf(row->why, sizeof row->why,
                     "two buffers of %.0f MB do not fit it (largest buffer %.0f MB, memory %.0f MB)",
                     (double)bytes / 1e6, (double)info->max_alloc_bytes / 1e6, (double)info->global_mem_bytes / 1e6);
            continue;
        }
        bench_progress("%s: resident on device %zu", w->name, info->index);
        int rc = bench_resident(info->index, w, s->o.repeats, row);
        bench_progress_clear();
        if (rc != 0) {
            row->status = 2;
            s->failures++;
        }
    }
}

int cmd_bench(int argc, char **argv)
{
    double t_start = bench_now_s();
    bench_state s;
    memset(&s, 0, sizeof s);
    int pr = bench_parse_options(argc, argv, &s.o);
    if (pr != 0) return pr > 0 ? EXIT_OK : EXIT_USAGE;
    if (s.o.file) return bench_files(s.o.file, s.o.repeats_set ? s.o.repeats : 1);
    bench_progress_start(s.o.quiet);
    if (s.o.model) return bench_model_main(s.o.model, s.o.want, s.o.size, s.o.repeats, s.o.pageable_only);
    if (s.o.shapes) {
        int rc = bench_shapes(&s.o);
        if (rc != EXIT_OK || (!s.o.want && !s.o.lightcurves)) return rc;
    }
    if (s.o.lightcurves) {
        int rc = bench_lightcurves(&s.o);
        if (rc != EXIT_OK || !s.o.want) return rc;
    }
    const char *corrupt = getenv("CLSCALE_BENCH_CORRUPT");
    s.corrupt = corrupt && *corrupt ? strtol(corrupt, NULL, 10) : -1;

    bench_workload ws[BENCH_MAX_WORKLOADS];
    size_t nw = bench_workloads(s.o.size, ws, BENCH_MAX_WORKLOADS);
    size_t nsel = 0;
    for (size_t i = 0; i < nw; i++) nsel += (s.o.want >> i) & 1u;

    bench_result *results = calloc(nsel, sizeof *results);
    s.m = calloc(1, sizeof *s.m);
    if (!results || !s.m) {
        free(results);
        free(s.m);
        return cli_error(EXIT_FAIL, "bench: out of memory");
    }
    int rc = EXIT_FAIL;
    if ((rc = check_outputs(&s.o)) != 0) goto out;
    rc = EXIT_FAIL;
    bench_progress("opening the devices");
    s.all = cli_context("bench", s.o.devices, CLS_PROFILE, &rc);
    if (!s.all) {
        if (rc == EXIT_OK) rc = EXIT_FAIL;
        goto out;
    }
    rc = EXIT_FAIL;
    const char *notes = cls_last_error(s.all);
    if (*notes) {
        bench_progress_clear();
        fprintf(stderr, "clscale: note: %s\n", notes);
    }
    if (describe_machine(&s) != EXIT_OK) goto out;
    if ((rc = check_alone(&s.o, s.m)) != EXIT_OK) goto out;
    rc = EXIT_FAIL;
    if (s.o.want & 1u) { /* seed-a */
        bench_progress("start-up: a fresh process, with empty and then warm kernel caches");
        bench_startup(s.o.size, s.o.devices, &s.m->startup);
    }
    open_alone(&s);
    bench_measure_limits(s.m, s.all);
    /* eviction: twice the last-level caches, 64 MiB at least */
    size_t evict_bytes = 2 * bench_llc_bytes();
    if (evict_bytes < ((size_t)64 << 20)) evict_bytes = (size_t)64 << 20;
    bench_round_mem_open(&s.mem, evict_bytes, s.m->stream_bytes);
    bench_progress_clear();

    size_t nr = 0;
    for (size_t i = 0; i < nw; i++) {
        if (!((s.o.want >> i) & 1u)) continue;
        run_workload(&s, &ws[i], &results[nr]);
        if (i == 0) resident_rows(&s, &ws[i], &results[nr]);
        if (!results[nr].error[0]) {
            if (s.o.numpy) bench_progress("%s: numpy", ws[i].name);
            bench_numpy_time(s.o.numpy, &ws[i], s.o.repeats, evict_bytes, &results[nr].numpy);
        }
        bench_progress_clear();
        nr++;
    }
    /* printed once every workload ran, so that what a user reads first
     * (one line per workload) comes first and the detail after it */
    bench_print_title(stdout, s.m);
    bench_print_summary(stdout, s.m, results, nr);
    bench_print_limits(stdout, s.m);
    for (size_t i = 0; i < nr; i++) bench_print_result(stdout, s.m, &results[i]);
    bench_print_how(stdout, s.m);
    if ((s.o.trace || s.o.timeline) && !s.trace.written) {
        cli_error(EXIT_FAIL, "bench: no %s run reached its timed calls: no --trace or --timeline written",
                  s.m->ndev > 1 ? "all-devices" : "device");
        s.unwritten += (s.o.trace != NULL) + (s.o.timeline != NULL);
    }
    double total = bench_now_s() - t_start;
    if (s.o.json && bench_write_json(s.o.json, s.m, results, nr, &s.trace, total) != 0) {
        cli_error(EXIT_FAIL, "bench: --json %s: %s", s.o.json, strerror(errno));
        s.unwritten++;
    }
    bench_print_footer(stdout, &s.trace, total, s.failures, s.unwritten);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(EXIT_FAIL, "bench: writing the table: %s", strerror(errno));
        s.unwritten++;
    }
    rc = s.failures || s.unwritten ? EXIT_FAIL : EXIT_OK;
out:
    bench_progress_clear();
    if (s.m) {
        for (size_t i = 0; i < s.m->ndev && i < BENCH_MAX_DEVICES; i++)
            if (s.alone[i] && s.alone[i] != s.all) cls_context_destroy(s.alone[i]);
    }
    cls_context_destroy(s.all);
    bench_round_mem_close(&s.mem);
    free(results);
    free(s.m);
    return rc;
}
