/* `clscale bench --workload shapes`: exact statistics and cleaning at every
 * group length, each operation as a multiple of one min-max call on the
 * same data, measured in one run. The data: float64, normal (mean 10, std
 * 2) with 1 % NaN and 0.1 % values x 50, rows x cols with the statistics
 * per column (a group is a column of `rows` values), rows from 1 to 10^7
 * and as many columns as make 16 M values (scaled by --size, at most 10^6
 * columns). The peers (numpy, scikit-learn, astropy) are Python's: `python
 * -m clscale.bench --workload shapes` runs this sweep beside them. */
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

static const uint64_t lengths[] = {1, 60, 64, 65, 300, 1000, 5000, 100000, 10000000};

enum { OP_MINMAX, OP_ROBUST, OP_QUANTILES, OP_IMPUTE, OP_CLIP5, OP_CLIPCONV, OP_CLIPMEAN, OP_CLIPMAD, NOPS };
static const char *const op_names[NOPS] = {"minmax",  "robust",    "quantiles", "impute",
                                           "clip-5", "clip-conv", "clip-mean", "clip-mad"};

static void fill(double *x, size_t n, uint64_t seed)
{
    uint64_t s = bench_rng_state(seed);
    for (size_t i = 0; i < n; i++) {
        double z = bench_normal(&s);
        double w = bench_uniform(&s);
        x[i] = w < 0.01 ? NAN : w < 0.011 ? 50.0 * (10.0 + 2.0 * z) : 10.0 + 2.0 * z;
    }
}

static cls_status run_op(const bench_call *a)
{
    static const double q[3] = {0.25, 0.5, 0.75};
    cls_pipeline p = {0};
    cls_clean c = {0};
    switch (a->op) {
    case OP_MINMAX:
        return bench_minmax_call(a);
    case OP_ROBUST:
        p.scaler = CLS_ROBUST;
        p.qmin = 25;
        p.qmax = 75;
        return cls_fit_transform(a->ctx, &p, a->x, a->y, NULL);
    case OP_QUANTILES:
        return cls_quantiles(a->ctx, NULL, a->x, q, 3, a->out2);
    case OP_IMPUTE:
        c.impute = CLS_IMPUTE_MEDIAN;
        break;
    case OP_CLIP5:
        c.sigma = 3;
        c.maxiters = 5;
        break;
    case OP_CLIPCONV:
        c.sigma = 3;
        c.maxiters = -1;
        break;
    case OP_CLIPMEAN:
        c.sigma = 3;
        c.maxiters = -1;
        c.center = CLS_CENTER_MEAN;
        break;
    default:
        c.sigma = 3;
        c.maxiters = -1;
        c.spread = CLS_SPREAD_MAD_STD;
        break;
    }
    return cls_fit_transform(a->ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, a->x, a->y, NULL);
}

int bench_shapes(const options *o)
{
    cls_context *ctx;
    FILE *js;
    if (bench_calls_open(o, "shapes", &ctx, &js) != EXIT_OK) return EXIT_FAIL;
    uint64_t total = (uint64_t)(16e6 * o->size);
    if (total < 1) total = 1;
    if (js)
        fprintf(js, ", \"values_per_shape\": %llu, \"repeats\": %d,\n \"rows\": [", (unsigned long long)total,
                o->repeats);
    printf("%-18s %-10s %12s %10s\n", "rows x cols", "operation", "median ms", "x min-max");
    int first = 1, rc = EXIT_OK;
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0] && rc == EXIT_OK; li++) {
        uint64_t R = lengths[li];
        if (R > total) break;
        if (o->rows && R != o->rows) continue;
        uint64_t C = total / R > 1000000 ? 1000000 : total / R;
        size_t n = (size_t)(R * C);
        cls_array x = {.data = malloc(n * 8), .dtype = CLS_F64, .batch = 1, .rows = (size_t)R, .cols = (size_t)C}, y = x;
        y.data = malloc(n * 8);
        double *qo = malloc(3 * C * sizeof *qo);
        if (!x.data || !y.data || !qo) {
            fprintf(stderr, "clscale: bench: out of memory for %llu x %llu\n", (unsigned long long)R,
                    (unsigned long long)C);
            rc = EXIT_FAIL;
        }
        if (rc == EXIT_OK) fill(x.data, n, R);
        double base = 0;
        for (int op = 0; op < NOPS && rc == EXIT_OK; op++) {
            bench_call c = {ctx, op, &x, &y, qo};
            double med;
            if (bench_time_call(run_op, &c, o->repeats, &med) != CLS_OK) {
                fprintf(stderr, "clscale: bench: %s of %llu x %llu: %s\n", op_names[op], (unsigned long long)R,
                        (unsigned long long)C, cls_last_error(ctx));
                rc = EXIT_FAIL;
                continue;
            }
            if (op == OP_MINMAX) base = med;
            char shape[40];
            snprintf(shape, sizeof shape, "%llu x %llu", (unsigned long long)R, (unsigned long long)C);
            printf("%-18s %-10s %12.2f %10.2f\n", shape, op_names[op], med * 1e3, med / base);
            fflush(stdout);
            if (js) {
                fprintf(js, "%s\n  {\"rows\": %llu, \"cols\": %llu, \"op\": \"%s\", \"median_s\": %.6g, "
                            "\"x_minmax\": %.4g}",
                        first ? "" : ",", (unsigned long long)R, (unsigned long long)C, op_names[op], med,
                        med / base);
                first = 0;
            }
        }
        free(x.data);
        free(y.data);
        free(qo);
    }
    return bench_calls_close(o, ctx, js, rc);
}
