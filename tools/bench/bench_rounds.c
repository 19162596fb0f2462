/* The rows of `clscale bench` timed round by round (bench_run.h): one
 * workload's data, the calls of the host references and of clscale, each
 * output poisoned before its call and checked against the single-threaded
 * reference after it, the memory the rounds use to start every call from
 * cold caches and to measure STREAM copy beside the calls, and each row's
 * median and range. Prints only the progress line (through cmd_bench.c). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_run.h"

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

void bench_wl_free(wl_data *d)
{
    free(d->x);
    free(d->f);
    free(d->y);
    free(d->ys);
    free(d->yt);
    memset(d, 0, sizeof *d);
}

int bench_wl_alloc(wl_data *d, const bench_workload *w, char *err, size_t errlen)
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
        bench_wl_free(d);
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

void bench_runner_pin(runner *u, const wl_data *d)
{
    size_t bytes = bench_elements(&d->w) * (d->w.dtype == CLS_F64 ? sizeof(double) : sizeof(float));
    cls_status st = cls_host_alloc(u->ctx, bytes, &u->px);
    if (st == CLS_OK) st = cls_host_alloc(u->ctx, bytes, &u->py);
    if (st != CLS_OK) {
        u->run->status = RUN_FAILED;
        snprintf(u->run->why, sizeof u->run->why, "cls_host_alloc: %s: %s", cls_status_str(st),
                 cls_last_error(u->ctx));
        u->live = 0;
        bench_runner_unpin(u);
        return;
    }
    memcpy(u->px, d->x, bytes);
}

void bench_runner_unpin(runner *u)
{
    if (u->px) cls_host_free(u->ctx, u->px);
    if (u->py) cls_host_free(u->ctx, u->py);
    u->px = u->py = NULL;
}

/* ---- timing ------------------------------------------------------------- */

/* Median, min and max of the timed repeats; returns the repeat whose time
 * is the (lower) median, whose report stands for the run. */
static int summarise(bench_run *run)
{
    double s[BENCH_MAX_REPEATS];
    int n = run->nrep;
    memcpy(s, run->t, (size_t)n * sizeof *s);
    run->median = bench_sorted_median(s, n);
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

/* ---- the rounds' memory ------------------------------------------------- */

void bench_round_mem_open(round_mem *m, size_t evict_bytes, size_t stream_bytes)
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

void bench_round_mem_close(round_mem *m)
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

/* ---- the calls, round by round ------------------------------------------ */

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
    double t0 = bench_now_s();
    if (threads) bench_ref_threads(&d->w, d->x, d->f, out, 0);
    else bench_ref_single(&d->w, d->x, d->f, out);
    double dt = bench_now_s() - t0;
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
    cls_array ax = d->ax, ay = d->ay;
    if (u->px) {
        ax.data = u->px;
        ay.data = u->py;
    }
    void *y = ay.data;
    par_pass(&d->w, y, NULL);
    evict(mem);
    double t0 = bench_now_s();
    cls_status st = d->p.scaler != CLS_NONE ? cls_fit_transform(u->ctx, &d->p, &ax, &ay, NULL)
                                            : cls_transform(u->ctx, &d->p, NULL, &ax, &ay);
    double dt = bench_now_s() - t0;
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
        if (d->w.dtype == CLS_F64) ((double *)y)[mid] += 1.0;
        else ((float *)y)[mid] += 1.0f;
    }
    double err = par_pass(&d->w, y, d->ys);
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
void bench_run_rounds(runner *u, size_t n, wl_data *d, const round_mem *mem, int repeats, bench_result *res)
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
            bench_progress("%s: STREAM copy, %s", d->w.name, rl);
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
            bench_progress("%s: %s, %s", d->w.name, u[i].run->name, rl);
            if (u[i].ctx) clscale_call(&u[i], d, mem, r, rl);
            else host_call(&u[i], d, mem, r, rl);
        }
    }
    if (ncopy > 0) {
        res->host_copy = bench_sorted_median(copy, ncopy);
        res->host_copy_min = copy[0];
        res->host_copy_max = copy[ncopy - 1];
    }
    if (nown > 0) {
        res->own_copy = bench_sorted_median(own, nown);
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
