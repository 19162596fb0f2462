/* `clscale bench --model LAYER`: the scheduler's promise on a modelled
 * discrete GPU. LAYER is the tests' bus layer (build/tests/libclsbus.so,
 * tests/bus_layer.c): loaded through OPENCL_LAYERS, it puts PoCL's pthread
 * device behind a modelled bus (its own defaults, or $CLSBUS) beside a
 * one-thread basic CPU device (POCL_DEVICES="basic pthread",
 * POCL_MAX_PTHREAD_COUNT=1: set whatever they were, the model is that). Each selected workload then runs
 * on the CPU device alone, the modelled GPU alone and both together, on
 * pageable (malloc) and pinned (cls_host_alloc) memory: calls alternate
 * between the three contexts round by round, medians of `repeats` after
 * three warm-up calls each, every row's last output checked against the
 * single-threaded reference. The promise: together within 5% of the better
 * alone. When $CLSBUS names a slowed device (`slow=`), the CPU device is
 * instead a pthread device whose kernels the layer slows
 * (POCL_DEVICES="pthread pthread", two PoCL threads, which the two devices
 * share), a machine where a team can beat both alone; the table then also
 * prints the model's ideal team, 1 / (1/cpu + 1/gpu). Owns the environment it sets (before the first OpenCL call), the
 * three contexts, and the table it prints (stdout; the one printer of the
 * bench besides cmd_bench.c and bench_report.c). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "cli.h"

/* Whether $CLSBUS slows the CPU device (bus_layer.c's `slow=`). */
static int slowed_cpu(void)
{
    const char *env = getenv("CLSBUS");
    return env && strstr(env, "slow=") != NULL;
}

static const char *model_layer;

/* The layer's model afresh before each workload (clsbus_configure): the
 * slowed device's fastest times are kept per kernel name, and another
 * workload's shapes give the same kernel other times per work-item. */
static void fresh_model(void)
{
    void *h = model_layer ? dlopen(model_layer, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (!h) return;
    int (*configure)(const char *) = (int (*)(const char *))dlsym(h, "clsbus_configure");
    if (configure) configure(getenv("CLSBUS"));
    dlclose(h);
}

int bench_model_env(const char *layer, char *why, size_t len)
{
    FILE *f = fopen(layer, "rb");
    if (!f) {
        snprintf(why, len, "--model %s: cannot open the bus layer (build/tests/libclsbus.so)", layer);
        return -1;
    }
    fclose(f);
    /* the ICD loader and PoCL read these once, at the first OpenCL call */
    setenv("OPENCL_LAYERS", layer, 1);
    model_layer = layer;
    /* the layer slows a pthread device only (PoCL's basic device deadlocks
     * on its gates); pthread devices share PoCL's threads, and with one the
     * modelled GPU's copies waited behind the CPU device's kernels */
    setenv("POCL_DEVICES", slowed_cpu() ? "pthread pthread" : "basic pthread", 1);
    setenv("POCL_MAX_PTHREAD_COUNT", slowed_cpu() ? "2" : "1", 1);
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *const selectors[3] = {"basic", "pthread", NULL};
static const char *const slowed_selectors[3] = {"0", "1", NULL};

int bench_model_run(const bench_workload *w, int repeats, bench_model_row rows[2])
{
    const char *const *sel = slowed_cpu() ? slowed_selectors : selectors;
    fresh_model();
    memset(rows, 0, 2 * sizeof *rows);
    wl_data d;
    if (bench_wl_alloc(&d, w, rows[0].why, sizeof rows[0].why) != 0) return -1;
    bench_ref_single(w, d.x, d.f, d.ys);
    size_t bytes = bench_elements(w) * (w->dtype == CLS_F64 ? sizeof(double) : sizeof(float));
    cls_context *ctx[3] = {NULL, NULL, NULL};
    void *px[3] = {NULL, NULL, NULL}, *py[3] = {NULL, NULL, NULL};
    double *t = calloc(3 * (size_t)repeats, sizeof *t);
    int rc = -1;
    char *why = rows[0].why;
    size_t wl = sizeof rows[0].why;
    if (!t) {
        snprintf(why, wl, "out of memory");
        goto out;
    }
    for (int c = 0; c < 3; c++) {
        cls_config cfg = {.devices = sel[c] ? sel[c] : "all"};
        cls_status st = cls_context_create(&cfg, &ctx[c]);
        if (st != CLS_OK) {
            snprintf(why, wl, "no context for \"%s\": %s: %s", cfg.devices, cls_status_str(st),
                     ctx[c] ? cls_last_error(ctx[c]) : "out of memory");
            goto out;
        }
        if (cls_host_alloc(ctx[c], bytes, &px[c]) != CLS_OK || cls_host_alloc(ctx[c], bytes, &py[c]) != CLS_OK) {
            snprintf(why, wl, "cls_host_alloc: %s", cls_last_error(ctx[c]));
            goto out;
        }
        memcpy(px[c], d.x, bytes);
    }
    for (int pinned = 0; pinned < 2; pinned++) {
        bench_model_row *row = &rows[pinned];
        row->pinned = pinned;
        for (int r = -3; r < repeats; r++) {
            /* the order changes round by round, through the six: a call
             * right after the modelled GPU's alone took 0.2-0.3 ms longer
             * on the 2-core VM whichever context made it, and "together"
             * always came right after it (seed-b at --size 0.25: 1.2-1.5x
             * the CPU device alone); turning 0-1-2 round keeps 0 after 2 */
            static const int order[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
            for (int k = 0; k < 3; k++) {
                int c = order[(r + 3) % 6][k];
                cls_array in = d.ax, out = d.ay;
                if (pinned) {
                    in.data = px[c];
                    out.data = py[c];
                }
                if (r == repeats - 1) memset(out.data, 0xff, bytes);
                double t0 = bench_now_s();
                cls_status st = d.p.scaler == CLS_NONE ? cls_transform(ctx[c], &d.p, NULL, &in, &out)
                                                       : cls_fit_transform(ctx[c], &d.p, &in, &out, NULL);
                double dt = bench_now_s() - t0;
                if (st != CLS_OK) {
                    snprintf(why, wl, "%s: %s", cls_status_str(st), cls_last_error(ctx[c]));
                    goto out;
                }
                if (r < 0) continue;
                t[c * repeats + r] = dt;
                if (r == repeats - 1) {
                    double err = bench_max_error(w, out.data, d.ys);
                    if (!(err <= bench_tolerance(w))) {
                        snprintf(why, wl, "wrong result on \"%s\": error %.3g", sel[c] ? sel[c] : "all",
                                 err);
                        goto out;
                    }
                }
            }
        }
        for (int c = 0; c < 3; c++) {
            qsort(t + c * repeats, (size_t)repeats, sizeof *t, cmp_d);
            row->t[c] = t[c * repeats + repeats / 2];
        }
        double best = row->t[0] < row->t[1] ? row->t[0] : row->t[1];
        row->ratio = row->t[2] / best;
    }
    rc = 0;
out:
    for (int c = 0; c < 3; c++) {
        if (ctx[c]) {
            cls_host_free(ctx[c], px[c]);
            cls_host_free(ctx[c], py[c]);
        }
        cls_context_destroy(ctx[c]);
    }
    free(t);
    bench_wl_free(&d);
    return rc;
}

/* --model: the comparison of every selected workload, printed as a table. */
int bench_model_main(const char *layer, unsigned want, double size, int repeats, int pageable_only)
{
    char why[512];
    if (bench_model_env(layer, why, sizeof why) != 0) {
        fprintf(stderr, "clscale: bench: %s\n", why);
        return EXIT_FAIL;
    }
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    const char *env = getenv("CLSBUS");
    int slow = slowed_cpu();
    printf("clscale %s bench --model: %s beside PoCL's pthread device behind "
           "a modelled bus (%s)\non %s, %u CPUs; medians of %d calls, calls of the three alternating\n\n",
           cls_version(),
           slow ? "a PoCL pthread device that the layer slows (two PoCL threads shared)"
                : "the CPU device (PoCL basic, 1 thread)",
           env && *env ? env : "the layer's defaults: the H100 machine's rates x 0.1", cpu, bench_cpus(), repeats);
    printf("%-14s %-9s %12s %12s %12s %8s  %s%s\n", "workload", "memory", "cpu alone", "gpu alone", "together",
           "ratio", slow ? "ideal  " : "", "promise (<= 1.05 of the better alone)");
    bench_workload ws[BENCH_MAX_WORKLOADS];
    size_t nw = bench_workloads(size, ws, BENCH_MAX_WORKLOADS);
    int failures = 0;
    for (size_t i = 0; i < nw; i++) {
        if (!((want >> i) & 1u)) continue;
        bench_model_row rows[2];
        bench_progress("%s on the modelled bus", ws[i].name);
        int r = bench_model_run(&ws[i], repeats, rows);
        bench_progress_clear();
        if (r != 0) {
            printf("%-14s FAILED: %s\n", ws[i].name, rows[0].why);
            failures++;
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (k == 1 && pageable_only) break;
            const bench_model_row *x = &rows[k];
            double best = x->t[0] < x->t[1] ? x->t[0] : x->t[1];
            char ideal[16] = "";
            if (slow) snprintf(ideal, sizeof ideal, "%5.3f  ", 1.0 / (1.0 / x->t[0] + 1.0 / x->t[1]) / best);
            printf("%-14s %-9s %9.2f ms %9.2f ms %9.2f ms %8.3f  %s%s\n", ws[i].name,
                   x->pinned ? "pinned" : "pageable", 1e3 * x->t[0], 1e3 * x->t[1], 1e3 * x->t[2], x->ratio, ideal,
                   x->ratio <= 1.05 ? "kept" : "NOT kept");
        }
        fflush(stdout);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) failures++;
    return failures ? EXIT_FAIL : EXIT_OK;
}

