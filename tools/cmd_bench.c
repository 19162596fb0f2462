/* clscale bench: times clscale on the seeded workloads of bench.h against
 * the host references, on each selected device alone and on all of them
 * together, next to the limits measured in the same run.
 *
 * Owns the options and the order of the run; bench_host.c supplies the
 * workloads, references and STREAM, bench_report.c prints and writes JSON.
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
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_report.h"
#include "cli.h"

#define BENCH_SEED 20261122u
#define STREAM_MIN_BYTES ((size_t)256 << 20)
#define STREAM_REPEATS 10

static const char help[] =
    "usage: clscale bench [--workload NAME] [--size X] [--devices SEL] [--repeats N] [--alone LIST]\n"
    "                     [--json F] [--trace F.json] [--timeline F.svg]\n"
    "\n"
    "Times clscale on seeded workloads against plain C on the host, on each selected\n"
    "device alone and on all of them together, next to the limits measured in the\n"
    "same run: host memory bandwidth (STREAM copy and triad, all cores) and each\n"
    "device's memory and host<->device bandwidth, pinned and pageable (as clpeak).\n"
    "\n"
    "  --workload NAME   seed-a, seed-b, seed-b-large, table; repeatable or a comma\n"
    "                    list (default: all four, run in that order)\n"
    "  --size X          scale each workload's first dimension by X (default 1);\n"
    "                    the limits are measured at full size whatever X is\n"
    "  --devices SEL     the devices to benchmark (default: all; see clscale --help)\n"
    "  --repeats N       timed calls after one warm-up, 1 to 100 (default 5)\n"
    "  --alone LIST      the devices (indices, or none) that also run alone (default: all);\n"
    "                    e.g. leave out a simulator that would take hours alone\n"
    "  --json F          every figure, the machine and the limits, as JSON\n"
    "  --trace F.json    Chrome trace (opens in Perfetto) of the last timed call of\n"
    "                    the all-devices run of the last workload run, or of the\n"
    "                    device's run when only one device is selected\n"
    "  --timeline F.svg  the same call as an SVG timeline, one lane per queue\n"
    "  --help            this text\n"
    "\n"
    "Times are wall clock around each call (what the caller waits for), out of\n"
    "place on pageable caller memory (malloc): the median of N calls after a\n"
    "warm-up, with their range. The rows' calls alternate (one call of each row\n"
    "per round), so that a drift in the machine's speed falls on all rows alike,\n"
    "and each call starts with its data out of the caches, as STREAM does.\n"
    "GB/s counts every input byte read once and every output byte written once.\n"
    "Every result is checked against the single-threaded reference before its\n"
    "time counts. Exit status: 0 all correct, 1 a run failed or was wrong, 2 usage\n"
    "error.\n";

/* ---- options ------------------------------------------------------------ */

typedef struct options {
    unsigned    want;        /* bit i: workload i of bench_workloads() */
    double      size;
    int         repeats;
    const char *devices, *json, *trace, *timeline;
    const char *alone;       /* global indices that get an "alone" row; NULL: all */
} options;

/* Whether device `index` gets a run of its own (--alone). */
static int wants_alone(const options *o, size_t index)
{
    if (!o->alone) return 1;
    const char *p = o->alone;
    while (*p) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end != p && v == index) return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int select_workloads(options *o, const char *list)
{
    bench_workload all[BENCH_MAX_WORKLOADS];
    size_t n = bench_workloads(1.0, all, BENCH_MAX_WORKLOADS);
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < n && !(strlen(all[i].name) == len && !strncmp(all[i].name, p, len))) i++;
        if (i == n) {
            fprintf(stderr, "clscale: bench: unknown workload \"%.*s\"; the workloads are", (int)len, p);
            for (size_t k = 0; k < n; k++) fprintf(stderr, "%s %s", k ? "," : "", all[k].name);
            fputc('\n', stderr);
            return -1;
        }
        o->want |= 1u << i;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

/* Returns 0 to run, 1 after --help, -1 after a usage error (printed). */
static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->size = 1.0;
    o->repeats = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            return 1;
        }
        static const char *const valued[] = {"--workload", "--size", "--devices", "--repeats",
                                             "--json", "--trace", "--timeline", "--alone"};
        const char *name = NULL, *v = NULL;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !name; k++) {
            size_t l = strlen(valued[k]);
            if (!strncmp(a, valued[k], l) && (a[l] == '\0' || a[l] == '=')) {
                name = valued[k];
                if (a[l] == '=') v = a + l + 1;
                else if (i + 1 < argc) v = argv[++i];
            }
        }
        if (!name) {
            cli_error(EXIT_USAGE, "bench: unknown option \"%s\" (see clscale bench --help)", a);
            return -1;
        }
        if (!v || !*v) {
            cli_error(EXIT_USAGE, "bench: %s needs a value", name);
            return -1;
        }
        char *end = NULL;
        if (!strcmp(name, "--workload")) {
            if (select_workloads(o, v) != 0) return -1;
        } else if (!strcmp(name, "--size")) {
            errno = 0;
            o->size = strtod(v, &end);
            if (errno || *end || !(o->size > 0.0 && o->size <= 1000.0)) {
                cli_error(EXIT_USAGE, "bench: --size wants a number above 0 and at most 1000, not \"%s\"", v);
                return -1;
            }
        } else if (!strcmp(name, "--repeats")) {
            errno = 0;
            long r = strtol(v, &end, 10);
            if (errno || *end || r < 1 || r > BENCH_MAX_REPEATS) {
                cli_error(EXIT_USAGE, "bench: --repeats wants a whole number from 1 to %d, not \"%s\"",
                          BENCH_MAX_REPEATS, v);
                return -1;
            }
            o->repeats = (int)r;
        } else if (!strcmp(name, "--alone")) {
            if (!strcmp(v, "none")) v = "";
            for (const char *c = v; *c; c++)
                if (!(*c >= '0' && *c <= '9') && *c != ',') {
                    cli_error(EXIT_USAGE, "bench: --alone wants device indices such as 0,2, not \"%s\"", v);
                    return -1;
                }
            o->alone = v;
        } else if (!strcmp(name, "--devices")) o->devices = v;
        else if (!strcmp(name, "--json")) o->json = v;
        else if (!strcmp(name, "--trace")) o->trace = v;
        else o->timeline = v;
    }
    if (!o->want) o->want = ~0u;
    return 0;
}

/* ---- progress ----------------------------------------------------------- */

static int progress_on;   /* stderr is a terminal */

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
    if (!progress_on) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

static void progress_clear(void)
{
    if (progress_on) fputs("\r\033[K", stderr);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- poisoning and checking, over all cores ------------------------------ */

/* Both passes read or write every byte of an output: on one core they would
 * take longer than the calls they check. */
enum { PAR_MAX = 64 };

typedef struct par_task {
    const bench_workload *w;
    char                 *y;
    const char           *ref;   /* NULL: poison y */
    size_t                lo, hi, es;
    double                err;
} par_task;

static void *par_main(void *arg)
{
    par_task *t = arg;
    if (!t->ref) {
        memset(t->y + t->lo * t->es, 0xff, (t->hi - t->lo) * t->es);   /* NaN in float and double */
    } else if (t->hi > t->lo) {
        /* bench_max_error() compares elements; a flat view of this range */
        bench_workload part = *t->w;
        part.batch = 1;
        part.rows = t->hi - t->lo;
        part.cols = 1;
        t->err = bench_max_error(&part, t->y + t->lo * t->es, t->ref + t->lo * t->es);
    }
    return NULL;
}

/* Poisons y (ref NULL) or returns the largest error of y against ref. */
static double par_pass(const bench_workload *w, void *y, const void *ref)
{
    size_t n = bench_elements(w), es = w->dtype == CLS_F64 ? sizeof(double) : sizeof(float);
    unsigned k = bench_cpus();
    if (k < 1) k = 1;
    if (k > PAR_MAX) k = PAR_MAX;
    if (n < ((size_t)1 << 16)) k = 1;
    par_task t[PAR_MAX];
    pthread_t th[PAR_MAX];
    int started[PAR_MAX] = {0};
    for (unsigned i = 0; i < k; i++)
        t[i] = (par_task){.w = w, .y = y, .ref = ref, .es = es, .lo = n / k * i, .hi = i + 1 == k ? n : n / k * (i + 1)};
    for (unsigned i = 1; i < k; i++) started[i] = pthread_create(&th[i], NULL, par_main, &t[i]) == 0;
    par_main(&t[0]);
    double err = t[0].err;
    for (unsigned i = 1; i < k; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else par_main(&t[i]);   /* no thread: this one does it */
        if (!(t[i].err <= err)) err = t[i].err;
    }
    return err;
}

/* ---- one workload's data ------------------------------------------------ */

typedef struct wl_data {
    bench_workload w;
    void          *x, *f, *y, *ys, *yt;   /* input, factors, clscale out, references' outs */
    cls_array      ax, af, ay;
    cls_pipeline   p;
} wl_data;

static void wl_free(wl_data *d)
{
    free(d->x);
    free(d->f);
    free(d->y);
    free(d->ys);
    free(d->yt);
    memset(d, 0, sizeof *d);
}

static int wl_alloc(wl_data *d, const bench_workload *w, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->w = *w;
    size_t es = w->dtype == CLS_F64 ? sizeof(double) : sizeof(float);
    size_t n = bench_elements(w), nf = w->frows * w->fcols;
    if (n == 0 || n > SIZE_MAX / es / 4) {
        snprintf(err, errlen, "%zu elements are too many for this machine's address space", n);
        return -1;
    }
    d->x = malloc(n * es);
    d->y = malloc(n * es);
    d->ys = malloc(n * es);
    d->yt = malloc(n * es);
    if (nf) d->f = malloc(nf * es);
    if (!d->x || !d->y || !d->ys || !d->yt || (nf && !d->f)) {
        snprintf(err, errlen, "out of memory for 4 arrays of %.0f MB%s", (double)(n * es) / 1e6,
                 nf ? " and the factors" : "");
        wl_free(d);
        return -1;
    }
    bench_fill(w, d->x, d->f, BENCH_SEED);
    d->ax = (cls_array){.data = d->x, .dtype = w->dtype, .batch = w->batch, .rows = w->rows, .cols = w->cols};
    d->ay = d->ax;
    d->ay.data = d->y;
    d->af = (cls_array){.data = d->f, .dtype = w->dtype, .batch = 1, .rows = w->frows, .cols = w->fcols};
    d->p = bench_pipeline(w, nf ? &d->af : NULL);
    return 0;
}

/* ---- timing ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of the timed repeats; returns the repeat whose time
 * is the (lower) median, whose report stands for the run. */
/* Sorts v[0..n) and returns its median (n > 0). */
static double sorted_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int summarise(bench_run *run)
{
    double s[BENCH_MAX_REPEATS];
    int n = run->nrep;
    memcpy(s, run->t, (size_t)n * sizeof *s);
    run->median = sorted_median(s, n);
    run->min = s[0];
    run->max = s[n - 1];
    for (int i = 0; i < n; i++)
        if (run->t[i] == s[(n - 1) / 2]) return i;
    return 0;
}

static void repeat_label(char *buf, size_t len, int r, int repeats)
{
    if (r == 0) snprintf(buf, len, "warm-up");
    else snprintf(buf, len, "repeat %d/%d", r, repeats);
}

/* One call's report, its strings copied (the report lives until the next call). */
typedef struct snapshot {
    int        phases;
    size_t     slices, nparts;
    bench_part parts[BENCH_MAX_DEVICES];
} snapshot;

static void snap(cls_context *ctx, snapshot *s)
{
    memset(s, 0, sizeof *s);
    cls_report rep;
    if (cls_last_report(ctx, &rep) != CLS_OK) return;
    s->phases = rep.phases;
    s->slices = rep.slices;
    for (size_t i = 0; i < rep.ndevices && s->nparts < BENCH_MAX_DEVICES; i++) {
        const cls_device_report *dr = &rep.devices[i];
        bench_part *p = &s->parts[s->nparts++];
        cls_device_info info;
        p->index = cls_device_get(ctx, dr->device, &info) == CLS_OK ? info.index : dr->device;
        if (dr->sat_out) snprintf(p->sat_out, sizeof p->sat_out, "%s", dr->sat_out);
        if (dr->failed) snprintf(p->failed, sizeof p->failed, "%s", dr->failed);
        p->slices = dr->slices;
        p->bytes = dr->bytes;
        p->busy = dr->busy;
        p->upload = dr->upload;
        p->kernel = dr->kernel;
        p->download = dr->download;
        p->staging = dr->staging;
    }
}

static void take_snapshot(bench_run *run, const snapshot *s)
{
    run->has_report = 1;
    run->phases = s->phases;
    run->slices = s->slices;
    run->nparts = s->nparts;
    memcpy(run->parts, s->parts, s->nparts * sizeof *s->parts);
    run->upload = run->kernel = run->download = run->staging = 0;
    for (size_t i = 0; i < s->nparts; i++) {
        run->upload += s->parts[i].upload;
        run->kernel += s->parts[i].kernel;
        run->download += s->parts[i].download;
        run->staging += s->parts[i].staging;
    }
}

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

static void round_mem_open(round_mem *m, size_t evict_bytes, size_t stream_bytes)
{
    memset(m, 0, sizeof *m);
    m->evict = malloc(evict_bytes);
    if (m->evict) {
        memset(m->evict, 1, evict_bytes); /* its pages must exist */
        m->evict_len = evict_bytes;
    }
    size_t n = stream_bytes / sizeof(double);
    m->stream_a = malloc(n * sizeof(double));
    m->stream_c = malloc(n * sizeof(double));
    if (m->stream_a && m->stream_c) {
        for (size_t i = 0; i < n; i++) m->stream_a[i] = 1.0;
        memset(m->stream_c, 0, n * sizeof(double));
        m->stream_n = n;
    }
}

static void round_mem_close(round_mem *m)
{
    free(m->evict);
    free(m->stream_a);
    free(m->stream_c);
    memset(m, 0, sizeof *m);
}

static void evict(const round_mem *m)
{
    volatile unsigned char sink = 0;
    unsigned char acc = 0;
    for (size_t i = 0; i < m->evict_len; i += 64) acc ^= m->evict[i];
    sink = acc;
    (void)sink;
}

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
} runner;

static void run_failed(runner *u, const char *rl, double err, double tol)
{
    u->run->status = RUN_FAILED;
    snprintf(u->run->why, sizeof u->run->why, "wrong result in the %s: max error %.3g > tolerance %.3g", rl, err,
             tol);
    u->live = 0;
}

static void host_call(runner *u, wl_data *d, const round_mem *mem, int r, const char *rl)
{
    bench_run *run = u->run;
    int threads = run->kind == RUN_HOST_THREADS;
    void *out = threads ? d->yt : d->ys;
    double tol = bench_tolerance(&d->w);
    par_pass(&d->w, out, NULL);
    evict(mem);
    double t0 = now_s();
    if (threads) bench_ref_threads(&d->w, d->x, d->f, out, 0);
    else bench_ref_single(&d->w, d->x, d->f, out);
    double dt = now_s() - t0;
    /* the single-threaded output is the reference itself */
    double err = threads ? par_pass(&d->w, out, d->ys) : 0.0;
    if (!(err <= run->max_error)) run->max_error = err;
    if (!(err <= tol)) {
        run_failed(u, rl, err, tol);
        return;
    }
    if (r == 0) run->warmup = dt;
    else run->t[run->nrep++] = dt;
}

static void clscale_call(runner *u, wl_data *d, const round_mem *mem, int r, const char *rl)
{
    bench_run *run = u->run;
    double tol = bench_tolerance(&d->w);
    snapshot *sn = r ? &u->snaps[r - 1] : &u->last;
    par_pass(&d->w, d->y, NULL);
    evict(mem);
    double t0 = now_s();
    cls_status st = d->p.scaler != CLS_NONE ? cls_fit_transform(u->ctx, &d->p, &d->ax, &d->ay, NULL)
                                            : cls_transform(u->ctx, &d->p, NULL, &d->ax, &d->ay);
    double dt = now_s() - t0;
    snap(u->ctx, sn);
    u->timed = st == CLS_OK ? r : 0;
    if (st == CLS_E_UNSUPPORTED) {
        run->status = RUN_SAT_OUT;
        snprintf(run->why, sizeof run->why, "%s", cls_last_error(u->ctx));
        take_snapshot(run, sn);
        u->live = 0;
        return;
    }
    if (st != CLS_OK) {
        run->status = RUN_FAILED;
        snprintf(run->why, sizeof run->why, "%s in the %s: %s", cls_status_str(st), rl, cls_last_error(u->ctx));
        take_snapshot(run, sn);
        u->live = 0;
        return;
    }
    if (u->corrupt) {
        size_t mid = bench_elements(&d->w) / 2;
        if (d->w.dtype == CLS_F64) ((double *)d->y)[mid] += 1.0;
        else ((float *)d->y)[mid] += 1.0f;
    }
    double err = par_pass(&d->w, d->y, d->ys);
    if (!(err <= run->max_error)) run->max_error = err;
    if (!(err <= tol)) {
        run_failed(u, rl, err, tol);
        take_snapshot(run, sn);
        return;
    }
    if (r == 0) run->warmup = dt;
    else run->t[run->nrep++] = dt;
}

/* Runs the configurations' calls in rounds. The host single reference runs
 * first in each round: its output is what every other call is checked
 * against. */
static void run_rounds(runner *u, size_t n, wl_data *d, const round_mem *mem, int repeats, bench_result *res)
{
    double copy[BENCH_MAX_REPEATS], own[BENCH_MAX_REPEATS];
    int ncopy = 0, nown = 0;
    /* A copy of the row's own input size, from cold caches, where STREAM's
     * arrays hold it: a call of a millisecond does not get the bandwidth a
     * 256 MiB STREAM pass measures when this VM's memory is in its fast
     * state. Shown beside the limit, not as the limit. */
    size_t own_n = (size_t)(bench_elements(&d->w) * (d->w.dtype == CLS_F64 ? 8 : 4) / sizeof(double));
    if (own_n >= mem->stream_n) own_n = 0;
    for (int r = 0; r <= repeats; r++) {
        char rl[32];
        repeat_label(rl, sizeof rl, r, repeats);
        if (r > 0 && mem->stream_n) {
            progress("%s: STREAM copy, %s", d->w.name, rl);
            double g = bench_stream_copy_pass(mem->stream_c, mem->stream_a, mem->stream_n, 0);
            if (g > 0) copy[ncopy++] = g;
            if (own_n) {
                evict(mem);
                g = bench_stream_copy_pass(mem->stream_c, mem->stream_a, own_n, 0);
                if (g > 0) own[nown++] = g;
            }
        }
        for (size_t i = 0; i < n; i++) {
            if (!u[i].live) continue;
            progress("%s: %s, %s", d->w.name, u[i].run->name, rl);
            if (u[i].ctx) clscale_call(&u[i], d, mem, r, rl);
            else host_call(&u[i], d, mem, r, rl);
        }
    }
    if (ncopy > 0) {
        res->host_copy = sorted_median(copy, ncopy);
        res->host_copy_min = copy[0];
        res->host_copy_max = copy[ncopy - 1];
    }
    if (nown > 0) {
        res->own_copy = sorted_median(own, nown);
        res->own_copy_min = own[0];
        res->own_copy_max = own[nown - 1];
        res->own_copy_bytes = (uint64_t)own_n * sizeof(double);
    }
    for (size_t i = 0; i < n; i++) {
        bench_run *run = u[i].run;
        if (run->status != RUN_OK) continue;
        int rep = summarise(run);
        if (u[i].ctx) {
            run->report_repeat = rep;
            take_snapshot(run, &u[i].snaps[rep]);
        }
    }
}

/* ---- limits ------------------------------------------------------------- */

/* The last-level caches of the machine, summed over their instances (a
 * cache shared by several CPUs counted once), from sysfs; sysconf's figure
 * as a fallback (in virtual machines it may be the whole socket's). */
static size_t llc_bytes(void)
{
    char seen[64][128];
    size_t nseen = 0, total = 0;
    int best_level = 0;
    for (int cpu = 0, missing = 0; cpu < 4096 && missing < 64; cpu++) {
        int found = 0;
        for (int idx = 0; idx < 16; idx++) {
            char path[128], buf[128], shared[128];
            int level = 0;
            unsigned long kb = 0;
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
            FILE *f = fopen(path, "r");
            if (!f) break;
            found = 1;
            if (fscanf(f, "%d", &level) != 1) level = 0;
            fclose(f);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
            if (!(f = fopen(path, "r"))) continue;
            if (!fgets(buf, sizeof buf, f) || sscanf(buf, "%luK", &kb) != 1) kb = 0;
            fclose(f);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
            if (!(f = fopen(path, "r"))) continue;
            if (!fgets(shared, sizeof shared, f)) shared[0] = 0;
            fclose(f);
            if (level < best_level || kb == 0) continue;
            if (level > best_level) {
                best_level = level;
                nseen = 0;
                total = 0;
            }
            size_t k = 0;
            while (k < nseen && strcmp(seen[k], shared)) k++;
            if (k < nseen) continue;
            if (nseen < 64) memcpy(seen[nseen++], shared, sizeof shared);
            total += (size_t)kb << 10;
        }
        missing = found ? 0 : missing + 1;
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (total == 0) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) total = (size_t)l3;
    }
#endif
    return total;
}

/* STREAM's rule: each array at least 4 times the last-level caches. */
static size_t stream_bytes(void)
{
    size_t b = STREAM_MIN_BYTES, llc = llc_bytes();
    if (llc <= SIZE_MAX / 4 && 4 * llc > b) b = 4 * llc;
    return b;
}

static void measure_limits(bench_machine *m, cls_context *ctx)
{
    m->stream_bytes = stream_bytes();
    m->stream_threads = bench_cpus();
    progress("limits: host memory, STREAM copy");
    m->host_copy = bench_stream_copy(m->stream_bytes, 0, STREAM_REPEATS);
    progress("limits: host memory, STREAM triad");
    m->host_triad = bench_stream_triad(m->stream_bytes, 0, STREAM_REPEATS);
    for (size_t i = 0; i < m->ndev; i++) {
        bench_device *d = &m->dev[i];
        progress("limits: device %zu", d->info.index);
        cls_status st = cls_device_measure(ctx, i, 0, &d->lim);
        d->lim_ok = st == CLS_OK;
        if (!d->lim_ok)
            snprintf(d->lim_error, sizeof d->lim_error, "%s: %s", cls_status_str(st), cls_last_error(ctx));
    }
}

/* The bandwidth one device alone can reach on workload `w`, or 0 when unknown. */
static double device_limit(double host_copy, const bench_device *d, const bench_workload *w, const char **name)
{
    if (!d->info.staging) {
        /* zero copy: the device reads the input and writes the output in host
         * memory, once each, as STREAM copy does */
        *name = "host copy";
        return host_copy;
    }
    /* Staging: every input byte crosses host->device, every output byte comes
     * back. The bus is full duplex and clscale keeps uploads and downloads of
     * different slices in flight at once, so the floor is the slower
     * direction alone: max(in / h2d, out / d2h). min(h2d, d2h) would be beaten
     * by any run that overlaps both directions (a limit must not be beaten);
     * the sum of the directions would be beaten by no one. Each direction is
     * measured alone, so where both at once run slower (GPU.md: 71-85 GB/s
     * both ways against 55 each on PCIe 5) a run at ~75% of this is at the bus. */
    *name = "bus, pinned";
    if (!d->lim_ok || !(d->lim.h2d_pinned > 0) || !(d->lim.d2h_pinned > 0)) return 0;
    double out = (double)bench_elements(w) * (w->dtype == CLS_F64 ? 8.0 : 4.0);
    double in = (double)bench_bytes(w) - out;
    double t = fmax(in / (d->lim.h2d_pinned * 1e9), out / (d->lim.d2h_pinned * 1e9));
    double bus = t > 0 ? (double)bench_bytes(w) / t / 1e9 : 0;
    /* the caller's pageable data is still read and written in host memory */
    if (bus > 0 && host_copy > 0 && host_copy < bus) {
        *name = "host copy";
        return host_copy;
    }
    return bus;
}

static const bench_device *device_by_index(const bench_machine *m, size_t index)
{
    for (size_t i = 0; i < m->ndev; i++)
        if (m->dev[i].info.index == index) return &m->dev[i];
    return NULL;
}

static void set_limit(const bench_machine *m, const bench_result *r, bench_run *run)
{
    const char *name = "host copy";
    double lim = 0, host_copy = r->host_copy > 0 ? r->host_copy : m->host_copy;
    if (run->kind == RUN_HOST_SINGLE || run->kind == RUN_HOST_THREADS) {
        lim = host_copy;
    } else if (run->kind == RUN_DEVICE) {
        lim = device_limit(host_copy, device_by_index(m, run->dev[0]), &r->w, &name);
    } else {
        /* together: the devices that can take part add up, but they all read
         * and write the same host memory, which caps the sum */
        int known = 1, n = 0;
        for (size_t i = 0; i < run->ndev; i++) {
            const bench_device *d = device_by_index(m, run->dev[i]);
            if (r->w.dtype == CLS_F64 && !d->info.fp64) continue;
            double l = device_limit(host_copy, d, &r->w, &name);
            if (!(l > 0)) known = 0;
            lim += l;
            n++;
        }
        if (!known) lim = 0;
        if (n > 1) name = "devices' sum";
        if (lim > 0 && host_copy > 0 && host_copy <= lim) {
            lim = host_copy;
            name = "host copy";
        }
    }
    /* A statistics group larger than the caches takes two passes (the
     * statistics, then the scaling): the input is read twice, so the floor
     * is (2 in + out) / bandwidth. Device runs report their passes; the host
     * references make two on the table (whole-batch z-score). */
    int passes = run->kind == RUN_HOST_SINGLE || run->kind == RUN_HOST_THREADS
                     ? (r->w.kind == BENCH_ZSCORE_BATCH ? 2 : 1)
                     : (run->phases == 2 ? 2 : 1);
    if (lim > 0 && passes == 2) {
        double out = (double)bench_elements(&r->w) * (r->w.dtype == CLS_F64 ? 8.0 : 4.0);
        double in = (double)r->bytes - out;
        lim *= (double)r->bytes / ((double)r->bytes + in);
        static const char *const two[][2] = {{"host copy", "host copy, 2 passes"},
                                             {"bus, pinned", "bus, pinned, 2 passes"},
                                             {"devices' sum", "devices' sum, 2 passes"}};
        for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
            if (!strcmp(name, two[i][0])) name = two[i][1];
    }
    if (lim > 0) {
        run->limit_name = name;
        run->limit_gbs = lim;
    }
}

static void derive(const bench_machine *m, bench_result *r)
{
    double ts = 0, tt = 0;
    for (size_t i = 0; i < r->nruns; i++) {
        const bench_run *run = &r->runs[i];
        if (run->status != RUN_OK) continue;
        if (run->kind == RUN_HOST_SINGLE) ts = run->median;
        if (run->kind == RUN_HOST_THREADS) tt = run->median;
    }
    for (size_t i = 0; i < r->nruns; i++) {
        bench_run *run = &r->runs[i];
        set_limit(m, r, run);
        if (run->status != RUN_OK || !(run->median > 0)) continue;
        run->gbs = (double)r->bytes / run->median / 1e9;
        if (run->limit_gbs > 0) run->frac = run->gbs / run->limit_gbs;
        if (ts > 0) run->vs_single = ts / run->median;
        if (tt > 0) run->vs_threads = tt / run->median;
    }
}

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
    if (s->o.trace && (st = cls_trace_write_json(ctx, s->o.trace)) != CLS_OK) {
        progress_clear();
        cli_error(EXIT_FAIL, "bench: --trace %s: %s: %s", s->o.trace, cls_status_str(st), cls_last_error(ctx));
        s->unwritten++;
        s->o.trace = NULL;
    }
    if (s->o.timeline && (st = cls_trace_write_svg(ctx, s->o.timeline)) != CLS_OK) {
        progress_clear();
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

static void run_workload(bench_state *s, const bench_workload *w, bench_result *r)
{
    bench_machine *m = s->m;
    int repeats = s->o.repeats;
    memset(r, 0, sizeof *r);
    r->w = *w;
    r->bytes = bench_bytes(w);
    r->tolerance = bench_tolerance(w);
    progress("%s: generating %.0f MB of seeded data", w->name, (double)r->bytes / 1e6);
    wl_data d;
    if (wl_alloc(&d, w, r->error, sizeof r->error) != 0) {
        s->failures++;
        return;
    }
    runner u[3 + BENCH_MAX_DEVICES];
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
        if (m->ndev > 1 && !wants_alone(&s->o, info->index)) continue;
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
        }
    }
    if (m->ndev > 1) {
        run = &r->runs[r->nruns++];
        run->kind = RUN_TOGETHER;
        run->ndev = m->ndev;
        for (size_t i = 0; i < m->ndev; i++) run->dev[i] = m->dev[i].info.index;
        snprintf(run->name, sizeof run->name, "all together");
        u[nu++] = (runner){.run = run, .ctx = s->all, .live = 1};
    }
    for (size_t i = 0; i < nu; i++) {
        if (!u[i].ctx) continue;
        u[i].snaps = malloc((size_t)repeats * sizeof *u[i].snaps);
        if (!u[i].snaps) {
            u[i].run->status = RUN_FAILED;
            snprintf(u[i].run->why, sizeof u[i].run->why, "out of memory for the run's reports");
            u[i].live = 0;
        }
    }
    run_rounds(u, nu, &d, &s->mem, repeats, r);

    /* the traces: the device's run when only one is selected, else all
     * together, which is the last call of the last round */
    const runner *traced = &u[nu - 1];
    if (traced->ctx && traced->timed && (m->ndev == 1 || traced->run->kind == RUN_TOGETHER))
        write_traces(s, traced->ctx, w, traced->run, traced->timed);
    for (size_t i = 0; i < nu; i++) free(u[i].snaps);
    wl_free(&d);
    for (size_t i = 0; i < r->nruns; i++) s->failures += r->runs[i].status == RUN_FAILED;
    derive(m, r);
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
        if (!wants_alone(&s->o, m->dev[i].info.index)) continue;
        char sel[32];
        snprintf(sel, sizeof sel, "%zu", m->dev[i].info.index);
        cls_config cfg = {.devices = sel, .flags = CLS_PROFILE};
        progress("opening device %zu", m->dev[i].info.index);
        cls_status st = cls_context_create(&cfg, &s->alone[i]);
        if (st != CLS_OK) {
            snprintf(s->alone_error[i], sizeof s->alone_error[i], "no context for device %s alone: %s: %s", sel,
                     cls_status_str(st), s->alone[i] ? cls_last_error(s->alone[i]) : "out of memory");
            cls_context_destroy(s->alone[i]);
            s->alone[i] = NULL;
        }
    }
}

/* An output whose folder cannot be written fails now, not after the run. */
static int check_outputs(const options *o)
{
    const char *paths[] = {o->json, o->trace, o->timeline}, *flags[] = {"--json", "--trace", "--timeline"};
    for (size_t i = 0; i < 3; i++) {
        if (!paths[i]) continue;
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

int cmd_bench(int argc, char **argv)
{
    double t_start = now_s();
    bench_state s;
    memset(&s, 0, sizeof s);
    int pr = parse_options(argc, argv, &s.o);
    if (pr != 0) return pr > 0 ? EXIT_OK : EXIT_USAGE;
    progress_on = isatty(STDERR_FILENO) == 1;
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
    if (check_outputs(&s.o) != 0) goto out;
    progress("opening the devices");
    s.all = cli_context(s.o.devices, CLS_PROFILE);
    if (!s.all) goto out;
    const char *notes = cls_last_error(s.all);
    if (*notes) {
        progress_clear();
        fprintf(stderr, "clscale: note: %s\n", notes);
    }
    if (describe_machine(&s) != EXIT_OK) goto out;
    if (s.o.want & 1u) { /* seed-a */
        progress("start-up: a fresh process, with empty and then warm kernel caches");
        bench_startup(s.o.size, s.o.devices, &s.m->startup);
    }
    open_alone(&s);
    measure_limits(s.m, s.all);
    /* eviction: twice the last-level caches, 64 MiB at least */
    size_t evict_bytes = 2 * llc_bytes();
    if (evict_bytes < ((size_t)64 << 20)) evict_bytes = (size_t)64 << 20;
    round_mem_open(&s.mem, evict_bytes, s.m->stream_bytes);
    progress_clear();
    bench_print_header(stdout, s.m);
    fflush(stdout);

    size_t nr = 0;
    for (size_t i = 0; i < nw; i++) {
        if (!((s.o.want >> i) & 1u)) continue;
        run_workload(&s, &ws[i], &results[nr]);
        progress_clear();
        bench_print_result(stdout, s.m, &results[nr]);
        fflush(stdout);
        nr++;
    }
    if ((s.o.trace || s.o.timeline) && !s.trace.written) {
        cli_error(EXIT_FAIL, "bench: no %s run reached its timed calls: no --trace or --timeline written",
                  s.m->ndev > 1 ? "all-devices" : "device");
        s.unwritten += (s.o.trace != NULL) + (s.o.timeline != NULL);
    }
    double total = now_s() - t_start;
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
    progress_clear();
    if (s.m) {
        for (size_t i = 0; i < s.m->ndev && i < BENCH_MAX_DEVICES; i++)
            if (s.alone[i] && s.alone[i] != s.all) cls_context_destroy(s.alone[i]);
    }
    cls_context_destroy(s.all);
    round_mem_close(&s.mem);
    free(results);
    free(s.m);
    return rc;
}
