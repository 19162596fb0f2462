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

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; }

static void fill(double *x, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        double u = uniform(&s), v = uniform(&s);
        double z = sqrt(-2.0 * log(u > 0 ? u : 0x1p-53)) * cos(6.283185307179586 * v);
        double w = uniform(&s);
        x[i] = w < 0.01 ? NAN : w < 0.011 ? 50.0 * (10.0 + 2.0 * z) : 10.0 + 2.0 * z;
    }
}

static cls_status run_op(cls_context *ctx, int op, const cls_array *x, cls_array *y, double *q_out)
{
    static const double q[3] = {0.25, 0.5, 0.75};
    cls_pipeline p = {0};
    cls_clean c = {0};
    switch (op) {
    case OP_MINMAX:
        p.scaler = CLS_MINMAX;
        return cls_fit_transform(ctx, &p, x, y, NULL);
    case OP_ROBUST:
        p.scaler = CLS_ROBUST;
        p.qmin = 25;
        p.qmax = 75;
        return cls_fit_transform(ctx, &p, x, y, NULL);
    case OP_QUANTILES:
        return cls_quantiles(ctx, NULL, x, q, 3, q_out);
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
    return cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &c}, x, y, NULL);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median_s(double *ts, int k)
{
    qsort(ts, (size_t)k, sizeof *ts, cmp_d);
    return k % 2 ? ts[k / 2] : (ts[k / 2 - 1] + ts[k / 2]) / 2;
}

void bench_json_machine(FILE *js, cls_context *ctx)
{
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    fputs("\"cpu\": ", js);
    cli_json_string(js, cpu);
    /* the devices the run used: a result file says its machine */
    fputs(", \"devices\": [", js);
    for (size_t i = 0; i < cls_device_count(ctx); i++) {
        cls_device_info di;
        if (cls_device_get(ctx, i, &di) != CLS_OK) continue;
        fputs(i ? ", {\"name\": " : "{\"name\": ", js);
        cli_json_string(js, di.name);
        fputs(", \"platform\": ", js);
        cli_json_string(js, di.platform);
        fputs(", \"driver\": ", js);
        cli_json_string(js, di.driver);
        fputs("}", js);
    }
    fputs("]", js);
}

int bench_shapes(const options *o)
{
    cls_config cfg = {0};
    cfg.devices = o->devices;
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) {
        fprintf(stderr, "clscale: bench: %s\n", cls_last_error(ctx));
        cls_context_destroy(ctx);
        return EXIT_FAIL;
    }
    uint64_t total = (uint64_t)(16e6 * o->size);
    if (total < 1) total = 1;
    FILE *js = NULL;
    if (o->json && !(js = fopen(o->json, "w"))) {
        fprintf(stderr, "clscale: bench: cannot write %s\n", o->json);
        cls_context_destroy(ctx);
        return EXIT_FAIL;
    }
    if (js) {
        fprintf(js, "{\"tool\": \"clscale bench\", \"clscale_version\": \"%s\", \"workload\": \"shapes\", ",
                cls_version());
        bench_json_machine(js, ctx);
        fprintf(js, ", \"values_per_shape\": %llu, \"repeats\": %d,\n \"rows\": [", (unsigned long long)total,
                o->repeats);
    }
    printf("%-18s %-10s %12s %10s\n", "rows x cols", "operation", "median ms", "x min-max");
    int first = 1, rc = EXIT_OK;
    double ts[BENCH_MAX_REPEATS];
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0] && rc == EXIT_OK; li++) {
        uint64_t R = lengths[li];
        if (R > total) break;
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
            int k = 0;
            for (int r = -1; r < o->repeats && rc == EXIT_OK; r++) {
                double t0 = bench_now_s();
                st = run_op(ctx, op, &x, &y, qo);
                double t = bench_now_s() - t0;
                if (st != CLS_OK) {
                    fprintf(stderr, "clscale: bench: %s of %llu x %llu: %s\n", op_names[op], (unsigned long long)R,
                            (unsigned long long)C, cls_last_error(ctx));
                    rc = EXIT_FAIL;
                } else if (r >= 0) {
                    ts[k++] = t;
                }
            }
            if (rc != EXIT_OK) break;
            double med = bench_median_s(ts, k);
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
    if (js) {
        fputs("\n]}\n", js);
        if (fclose(js) != 0 && rc == EXIT_OK) {
            fprintf(stderr, "clscale: bench: cannot write %s\n", o->json);
            rc = EXIT_FAIL;
        }
    }
    cls_context_destroy(ctx);
    return rc;
}
