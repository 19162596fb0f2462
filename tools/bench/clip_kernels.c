/* clscale-clip-kernels: the one-pass clipping's two kernels on the same
 * devices in one run, rows taking turns, median of the repeats:
 *   min-max       a min-max fit-transform (the pass the clipping is held to)
 *   clip.cl       3-sigma clipping to convergence (median, std), masked,
 *                 clip.cl's kernel on every device (ctx->clip_local = -1)
 *   clip_local.cl the same with clip_local.cl's kernel (ctx->clip_local = 1)
 *   clip auto     the same, each device's own choice (GPU: clip_local.cl)
 * and whether the two kernels' outputs are equal byte for byte. The first
 * call of each row (kernel builds included) is shown apart. Data as
 * clscale-clean-bench's: normal values with 5% NaN, per matrix. Devices:
 * CLSCALE_DEVICES as for any call (e.g. gpu, cpu).
 * --stages (last): also where the kernel's time goes, rows of the clipping
 * (each device's own kernel) cut short by the switch clip_stage (testing.h):
 * 1 load the columns and write them, 2 also sort them, 3 also the sums (no
 * iteration). Only in a build configured with -Dbench_stages=true (its
 * results are wrong: never a build for use); other builds say so.
 *   clscale-clip-kernels [BATCH ROWS COLS [REPEATS [f32]]] [--stages]
 * Built, not installed: it sets the library's test hooks (internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "affinity.h"
#include "bench_clock.h"
#include "internal.h"

int main(int argc, char **argv)
{
    cli_pocl_affinity_default();
    int stages = argc > 1 && strcmp(argv[argc - 1], "--stages") == 0;
    if (stages) argc--;
    size_t B = argc > 3 ? strtoul(argv[1], NULL, 10) : 18, R = argc > 3 ? strtoul(argv[2], NULL, 10) : 60,
           C = argc > 3 ? strtoul(argv[3], NULL, 10) : 98450;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    int f32 = argc > 5 && strcmp(argv[5], "f32") == 0;
    if (!B || !R || R > 64 || !C || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: clscale-clip-kernels [BATCH ROWS(<=64) COLS [REPEATS [f32]]] [--stages]\n");
        return 2;
    }
    size_t n = B * R * C, es = f32 ? 4 : 8;
    cls_context *ctx = NULL;
    if (cls_context_create(NULL, &ctx) != CLS_OK) {
        fprintf(stderr, "clscale-clip-kernels: %s\n", cls_last_error(ctx));
        cls_context_destroy(ctx);
        return 1;
    }
    char *x = malloc(n * es), *y = malloc(n * es), *z = malloc(n * es);
    if (!x || !y || !z) return 1;
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) / 9007199254740992.0;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) / 9007199254740992.0;
        double w = u < 0.05 ? NAN : sqrt(-2 * log(v + 1e-300)) * cos(6.283185307179586 * u) * 2 + 10;
        if (f32) ((float *)x)[i] = (float)w;
        else ((double *)x)[i] = w;
    }
    cls_dtype t = f32 ? CLS_F32 : CLS_F64;
    cls_array in = {.data = x, .dtype = t, .batch = B, .rows = R, .cols = C}, out = {.data = y, .dtype = t, .batch = B, .rows = R, .cols = C}, out2 = {.data = z, .dtype = t, .batch = B, .rows = R, .cols = C};
    cls_clean clip = {.sigma = 3, .maxiters = -1};
    cls_pipeline mm = {.scaler = CLS_MINMAX};
    enum { MAX_ROWS = 7 };
    const char *names[MAX_ROWS] = {"min-max", "clip, clip.cl", "clip, clip_local.cl", "clip, auto",
                                   "stage 1: load, store", "stage 2: + sort", "stage 3: + sums"};
    const int hook[MAX_ROWS] = {0, -1, 1, 0, 0, 0, 0};
    const unsigned stage[MAX_ROWS] = {0, 0, 0, 0, 1, 2, 3};
    const int ROWS = stages ? 7 : 4;
    if (stages) {
        /* a build without -Dbench_stages ignores the switch: stage 1 would
         * be the whole clipping */
        ctx->tune.clip_stage = 1;
        cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &clip}, &in, &out, NULL);
        ctx->tune.clip_stage = 0;
        if (st == CLS_OK) st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &clip}, &in, &out2, NULL);
        if (st == CLS_OK && memcmp(y, z, n * es) == 0) {
            fprintf(stderr, "clscale-clip-kernels --stages: this build ignores the stages; "
                            "meson configure BUILD -Dbench_stages=true (a bench build only)\n");
            return 2;
        }
    }
    double tm[MAX_ROWS][100], first[MAX_ROWS];
    for (int r = -1; r < reps; r++) /* r = -1 warms up (kernel builds) */
        for (int k = 0; k < ROWS; k++) {
            int row = (k + (r > 0 ? r : 0)) % ROWS; /* rows take turns in different orders */
            ctx->clip_local = hook[row];
            ctx->tune.clip_stage = stage[row];
            double t0 = bench_now_s();
            cls_status st = row == 0 ? cls_fit_transform(ctx, &mm, &in, &out, NULL)
                                     : cls_fit_transform(ctx, &(cls_pipeline){.clean = &clip}, &in, row == 2 ? &out2 : &out, NULL);
            double t1 = bench_now_s();
            ctx->clip_local = 0;
            ctx->tune.clip_stage = 0;
            if (st != CLS_OK) {
                fprintf(stderr, "clscale-clip-kernels: %s: %s\n", cls_status_str(st), cls_last_error(ctx));
                return 1;
            }
            if (r >= 0) tm[row][r] = t1 - t0;
            else first[row] = t1 - t0;
        }
    /* the two kernels' outputs, once more each */
    size_t diff = 0;
    ctx->clip_local = -1;
    cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &clip}, &in, &out, NULL);
    ctx->clip_local = 1;
    if (st == CLS_OK) st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &clip}, &in, &out2, NULL);
    ctx->clip_local = 0;
    if (st != CLS_OK) {
        fprintf(stderr, "clscale-clip-kernels: %s: %s\n", cls_status_str(st), cls_last_error(ctx));
        return 1;
    }
    for (size_t i = 0; i < n; i++) diff += memcmp(y + i * es, z + i * es, es) != 0;
    printf("clip kernels: %zu x %zu x %zu %s (%.0f MB), median of %d; devices:", B, R, C, f32 ? "float32" : "float64",
           (double)(n * es) / 1e6, reps);
    for (size_t i = 0; i < cls_device_count(ctx); i++) {
        cls_device_info d;
        if (cls_device_get(ctx, i, &d) == CLS_OK) printf(" [%s]", d.name);
    }
    printf("\n");
    for (int k = 0; k < ROWS; k++) {
        bench_sort(tm[k], reps);
        printf("  %-20s %8.4f s  %6.2fx min-max  (min %.4f, max %.4f; first call %.3f s)\n", names[k],
               tm[k][reps / 2], tm[k][reps / 2] / tm[0][reps / 2], tm[k][0], tm[k][reps - 1], first[k]);
    }
    printf("  outputs of the two kernels: %zu of %zu values differ\n", diff, n);
    free(x);
    free(y);
    free(z);
    cls_context_destroy(ctx);
    return diff != 0;
}
