/* What the workloads timed call by call (bench_shapes.c,
 * bench_lightcurves.c) share: their context and result file, their seeded
 * random numbers and the timing of one call. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "bench_options.h"
#include "bench_run.h"
#include "cli.h"
#include "clscale.h"

uint64_t bench_rng_state(uint64_t seed) { return seed * 0x9e3779b97f4a7c15ull + 1; }

double bench_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) * 0x1p-53;
}

double bench_normal(uint64_t *s)
{
    double u = bench_uniform(s), v = bench_uniform(s);
    return sqrt(-2.0 * log(u > 0 ? u : 0x1p-53)) * cos(6.283185307179586 * v);
}

cls_status bench_minmax_call(const bench_call *c)
{
    cls_pipeline p = {0};
    p.scaler = CLS_MINMAX;
    return cls_fit_transform(c->ctx, &p, c->x, c->y, NULL);
}

cls_status bench_time_call(cls_status (*run)(const bench_call *c), const bench_call *c, int repeats,
                           double *median_s)
{
    double ts[BENCH_MAX_REPEATS];
    int k = 0;
    if (repeats > BENCH_MAX_REPEATS) repeats = BENCH_MAX_REPEATS;
    for (int r = -1; r < repeats; r++) {
        double t0 = bench_now_s();
        cls_status st = run(c);
        double t = bench_now_s() - t0;
        if (st != CLS_OK) return st;
        if (r >= 0) ts[k++] = t;
    }
    *median_s = bench_sorted_median(ts, k);
    return CLS_OK;
}

/* The "cpu" and "devices" members: a result file says its machine. */
static void json_machine(FILE *js, cls_context *ctx)
{
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    fputs("\"cpu\": ", js);
    cli_json_string(js, cpu);
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

int bench_calls_open(const options *o, const char *workload, cls_context **ctx, FILE **js)
{
    cls_config cfg = {0};
    cfg.devices = o->devices;
    *ctx = NULL;
    *js = NULL;
    if (cls_context_create(&cfg, ctx) != CLS_OK) {
        fprintf(stderr, "clscale: bench: %s\n", cls_last_error(*ctx));
        cls_context_destroy(*ctx);
        *ctx = NULL;
        return EXIT_FAIL;
    }
    if (!o->json) return EXIT_OK;
    if (!(*js = fopen(o->json, "w"))) {
        fprintf(stderr, "clscale: bench: cannot write %s\n", o->json);
        cls_context_destroy(*ctx);
        *ctx = NULL;
        return EXIT_FAIL;
    }
    fprintf(*js, "{\"tool\": \"clscale bench\", \"clscale_version\": \"%s\", \"workload\": \"%s\", ", cls_version(),
            workload);
    json_machine(*js, *ctx);
    return EXIT_OK;
}

int bench_calls_close(const options *o, cls_context *ctx, FILE *js, int rc)
{
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
