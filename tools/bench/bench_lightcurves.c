/* `clscale bench --workload lightcurves`: a batch of light curves detrended
 * and binned along time, each call as a multiple of one min-max call on the
 * same data, measured in one run, beside plain C on one host core doing
 * what scipy does (a Savitzky-Golay trend as the convolution with its
 * window's weights, O(window) per value; a moving average as a running sum).
 * The data: float64, 2000 light curves (scaled by --size) x 4000 cadences x
 * 2 bands, time along the rows of each matrix: a slow sine, transits of 12
 * cadences every 997, normal noise (std 1). `python -m clscale.bench
 * --workload lightcurves` runs the same calls against scipy itself. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_options.h"
#include "bench_run.h"
#include "cli.h"
#include "clscale.h"

#define LC_ROWS 4000u
#define LC_COLS 2u
#define LC_W 101u  /* the window of both trends (lightkurve's default) */
#define LC_BIN 10u /* rows per bin */

enum { OP_MINMAX, OP_SAVGOL, OP_MEAN, OP_BIN_SMOOTH, OP_BIN_MEDIAN, OP_HOST_SAVGOL, OP_HOST_MEAN, NOPS };
static const char *const op_names[NOPS] = {"minmax",     "savgol",      "mean",     "bin-smooth",
                                           "bin-median", "host-savgol", "host-mean"};
/* what each device call is compared with (-1: none) */
static const int peer_of[NOPS] = {-1, OP_HOST_SAVGOL, OP_HOST_MEAN, -1, -1, -1, -1};

static void fill(double *x, size_t G)
{
    uint64_t s = bench_rng_state(20261128u);
    for (size_t g = 0; g < G; g++) {
        double ph[LC_COLS];
        for (unsigned c = 0; c < LC_COLS; c++) ph[c] = 6 * bench_uniform(&s);
        for (size_t t = 0; t < LC_ROWS; t++)
            for (unsigned c = 0; c < LC_COLS; c++) {
                double z = bench_normal(&s);
                x[(g * LC_ROWS + t) * LC_COLS + c] =
                    1000 + 20 * sin((double)t / 700 + ph[c]) + z - (t % 997 < 12 ? 30 : 0);
            }
    }
}

/* Plain C, one core: the trend subtracted per column. Savitzky-Golay of
 * polyorder 2 (or 3) on a window of 2m + 1: weights (3 (3m^2 + 3m - 1) -
 * 15 k^2) / ((2m - 1)(2m + 1)(2m + 3)), the nearest row beyond the ends
 * (the edges are not what is timed). */
static void host_savgol(const double *x, double *y, size_t G)
{
    const long m = LC_W / 2;
    double wt[LC_W];
    double den = (double)((2 * m - 1) * (2 * m + 1) * (2 * m + 3));
    for (long k = -m; k <= m; k++) wt[k + m] = (3.0 * (3 * m * m + 3 * m - 1) - 15.0 * (double)(k * k)) / den;
    for (size_t g = 0; g < G; g++) {
        const double *px = x + g * LC_ROWS * LC_COLS;
        double *py = y + g * LC_ROWS * LC_COLS;
        for (long t = 0; t < (long)LC_ROWS; t++) {
            double acc[LC_COLS] = {0};
            for (long k = -m; k <= m; k++) {
                long r = t + k < 0 ? 0 : t + k >= (long)LC_ROWS ? (long)LC_ROWS - 1 : t + k;
                for (unsigned c = 0; c < LC_COLS; c++) acc[c] += wt[k + m] * px[r * LC_COLS + c];
            }
            for (unsigned c = 0; c < LC_COLS; c++) py[t * LC_COLS + c] = px[t * LC_COLS + c] - acc[c];
        }
    }
}

static void host_mean(const double *x, double *y, size_t G)
{
    const long h = LC_W / 2;
    for (size_t g = 0; g < G; g++) {
        const double *px = x + g * LC_ROWS * LC_COLS;
        double *py = y + g * LC_ROWS * LC_COLS;
        for (unsigned c = 0; c < LC_COLS; c++) {
            double s = 0;
            for (long k = -h; k <= h; k++) s += px[(k < 0 ? 0 : k) * LC_COLS + c];
            for (long t = 0; t < (long)LC_ROWS; t++) {
                if (t) {
                    long o = t - 1 - h, i = t + h;
                    s += px[(i >= (long)LC_ROWS ? (long)LC_ROWS - 1 : i) * LC_COLS + c] -
                         px[(o < 0 ? 0 : o) * LC_COLS + c];
                }
                py[t * LC_COLS + c] = px[t * LC_COLS + c] - s / LC_W;
            }
        }
    }
}

static cls_status run_op(const bench_call *a)
{
    cls_clean c = {0};
    switch (a->op) {
    case OP_MINMAX:
        return bench_minmax_call(a);
    case OP_SAVGOL:
        c.detrend = CLS_DETREND_SAVGOL;
        c.window = LC_W;
        c.polyorder = 2;
        break;
    case OP_MEAN:
        c.detrend = CLS_DETREND_MEAN;
        c.window = LC_W;
        break;
    case OP_BIN_SMOOTH:
        c.bin_rows = LC_BIN;
        c.bin_stat = CLS_BIN_MEAN;
        break;
    case OP_BIN_MEDIAN:
        c.bin_rows = LC_BIN;
        c.bin_stat = CLS_BIN_MEDIAN;
        return cls_fit_transform(a->ctx, &(cls_pipeline){.clean = &c}, a->x, a->out2, NULL);
    case OP_HOST_SAVGOL:
        host_savgol(a->x->data, a->y->data, a->x->batch);
        return CLS_OK;
    default:
        host_mean(a->x->data, a->y->data, a->x->batch);
        return CLS_OK;
    }
    return cls_fit_transform(a->ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, a->x, a->y, NULL);
}

int bench_lightcurves(const options *o)
{
    cls_context *ctx;
    FILE *js;
    if (bench_calls_open(o, "lightcurves", &ctx, &js) != EXIT_OK) return EXIT_FAIL;
    size_t G = (size_t)llround(2000 * o->size);
    if (G < 1) G = 1;
    size_t n = G * LC_ROWS * LC_COLS, nb = G * ((LC_ROWS + LC_BIN - 1) / LC_BIN) * LC_COLS;
    cls_array x = {.data = malloc(n * 8), .dtype = CLS_F64, .batch = G, .rows = LC_ROWS, .cols = LC_COLS}, y = x,
              yb = {.data = malloc(nb * 8), .dtype = CLS_F64, .batch = G, .rows = (LC_ROWS + LC_BIN - 1) / LC_BIN, .cols = LC_COLS};
    y.data = malloc(n * 8);
    if (js)
        fprintf(js, ", \"shape\": [%zu, %u, %u], \"dtype\": \"float64\", \"window\": %u, \"polyorder\": 2, "
                    "\"bin_rows\": %u, \"repeats\": %d,\n \"rows\": [",
                G, LC_ROWS, LC_COLS, LC_W, LC_BIN, o->repeats);
    int rc = EXIT_OK;
    if (!x.data || !y.data || !yb.data) {
        fprintf(stderr, "clscale: bench: out of memory for %zu x %u x %u\n", G, LC_ROWS, LC_COLS);
        rc = EXIT_FAIL;
    }
    if (rc == EXIT_OK) {
        fill(x.data, G);
        printf("lightcurves: %zu x %u x %u float64 along the rows, window %u, bins of %u\n", G, LC_ROWS, LC_COLS,
               LC_W, LC_BIN);
        printf("%-12s %12s %10s %10s\n", "operation", "median ms", "x min-max", "speed-up");
    }
    double med[NOPS] = {0};
    /* the peers first: their plain C warms the caches alike for everyone */
    static const int order[NOPS] = {OP_HOST_SAVGOL, OP_HOST_MEAN, OP_MINMAX, OP_SAVGOL, OP_MEAN, OP_BIN_SMOOTH,
                                    OP_BIN_MEDIAN};
    int first = 1;
    for (int oi = 0; oi < NOPS && rc == EXIT_OK; oi++) {
        int op = order[oi];
        /* plain C on one core is slow: one warm-up and at most 3 calls */
        int reps = op >= OP_HOST_SAVGOL && o->repeats > 3 ? 3 : o->repeats;
        bench_call c = {ctx, op, &x, &y, &yb};
        if (bench_time_call(run_op, &c, reps, &med[op]) != CLS_OK) {
            fprintf(stderr, "clscale: bench: lightcurves %s: %s\n", op_names[op], cls_last_error(ctx));
            rc = EXIT_FAIL;
        }
        if (med[op] <= 0) med[op] = 1e-9; /* a clock too coarse for a tiny call */
    }
    /* the table in the operations' order, each device call beside its peer */
    for (int q = 0; q < NOPS && rc == EXIT_OK; q++) {
        int peer = peer_of[q];
        double sp = peer >= 0 ? med[peer] / med[q] : 0;
        if (sp > 0) printf("%-12s %12.2f %10.2f %9.2fx\n", op_names[q], med[q] * 1e3, med[q] / med[OP_MINMAX], sp);
        else printf("%-12s %12.2f %10.2f\n", op_names[q], med[q] * 1e3, med[q] / med[OP_MINMAX]);
        if (js) {
            fprintf(js, "%s\n  {\"op\": \"%s\", \"median_s\": %.6g, \"x_minmax\": %.4g", first ? "" : ",",
                    op_names[q], med[q], med[q] / med[OP_MINMAX]);
            if (sp > 0) fprintf(js, ", \"peer\": \"%s\", \"speedup\": %.4g", op_names[peer], sp);
            fputs("}", js);
            first = 0;
        }
    }
    free(x.data);
    free(y.data);
    free(yb.data);
    return bench_calls_close(o, ctx, js, rc);
}
