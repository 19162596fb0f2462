/* clscale-fit-bench: what a statistics-only pass costs beside the fused
 * pass. Times cls_fit, cls_transform with its statistics,
 * cls_fit_transform without and with the fitted statistics, in that order
 * within each round (so that a change in the machine's load hits all four),
 * on one array; prints the median of R rounds after one warm-up round and
 * the ratios of cls_fit to both fit_transforms. Each round also times
 * cls_fit cut in row tiles (the library's switch fit_tiles, testing.h, set
 * between calls), the fit before 2026-11-25.
 *
 * usage: clscale-fit-bench [--shape BxRxC] [--f32] [--scope matrix|batch]
 *        [--zscore] [--repeat R]
 * default: 9 x 60 x 98450 float64 (425 MB, half of seed-A), min-max, batch.
 * Devices: $CLSCALE_DEVICES (e.g. POCL_DEVICES=basic for one PoCL thread).
 * The data: column c uniform in [-(c%7+1)*10, (c%11+2)*25), as seed-A.
 * Built, not installed: it sets the library's switches (testing.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "affinity.h"
#include "bench_clock.h"
#include "clscale.h"
#include "testing.h"

static double hash01(uint64_t i)
{
    uint64_t z = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static void check(cls_context *ctx, cls_status st, const char *what)
{
    if (st == CLS_OK) return;
    fprintf(stderr, "clscale-fit-bench: %s: %s: %s\n", what, cls_status_str(st), cls_last_error(ctx));
    exit(1);
}

enum { FIT, TRANSFORM, FT, FT_STATS, FIT_TILES, NT };

int main(int argc, char **argv)
{
    cli_pocl_affinity_default();
    size_t B = 9, R = 60, C = 98450;
    int f32 = 0, repeat = 5;
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_BATCH};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (sscanf(argv[++i], "%zux%zux%zu", &B, &R, &C) != 3) B = 0;
        } else if (!strcmp(argv[i], "--f32")) f32 = 1;
        else if (!strcmp(argv[i], "--zscore")) p.scaler = CLS_ZSCORE;
        else if (!strcmp(argv[i], "--scope") && i + 1 < argc)
            p.scope = strcmp(argv[++i], "matrix") ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else B = 0;
    }
    if (!B || !R || !C || repeat < 1 || repeat > 1000) {
        fprintf(stderr, "usage: clscale-fit-bench [--shape BxRxC] [--f32] [--scope matrix|batch] [--zscore] "
                        "[--repeat R]\n");
        return 2;
    }
    size_t n = B * R * C, es = f32 ? 4 : 8;
    void *x = malloc(n * es), *y = malloc(n * es);
    if (!x || !y) {
        fprintf(stderr, "clscale-fit-bench: out of memory for %zu elements\n", n);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = i % C;
        double lo = -(double)(c % 7 + 1) * 10.0, hi = (double)(c % 11 + 2) * 25.0;
        double v = lo + (hi - lo) * hash01(i);
        if (f32) ((float *)x)[i] = (float)v;
        else ((double *)x)[i] = v;
    }
    memset(y, 0, n * es);
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(NULL, &ctx);
    if (st != CLS_OK) {
        fprintf(stderr, "clscale-fit-bench: %s\n", cls_status_str(st));
        return 1;
    }
    cls_array in = {.data = x, .dtype = f32 ? CLS_F32 : CLS_F64, .batch = B, .rows = R, .cols = C}, out = {.data = y, .dtype = in.dtype, .batch = B, .rows = R, .cols = C};
    double *t[NT];
    for (int j = 0; j < NT; j++) t[j] = calloc((size_t)repeat, sizeof(double));
    for (int it = -1; it < repeat; it++) {
        cls_stats *s = NULL, *s2 = NULL;
        double t0 = bench_now_s();
        check(ctx, cls_fit(ctx, &p, &in, &s), "cls_fit");
        double t1 = bench_now_s();
        check(ctx, cls_transform(ctx, &p, s, &in, &out), "cls_transform");
        double t2 = bench_now_s();
        check(ctx, cls_fit_transform(ctx, &p, &in, &out, NULL), "cls_fit_transform");
        double t3 = bench_now_s();
        check(ctx, cls_fit_transform(ctx, &p, &in, &out, &s2), "cls_fit_transform (fitted)");
        double t4 = bench_now_s();
        cls_stats_destroy(s);
        cls_stats_destroy(s2);
        cls_context_tuning(ctx)->fit_tiles = 1;
        check(ctx, cls_fit(ctx, &p, &in, &s), "cls_fit (row tiles)");
        double t5 = bench_now_s();
        cls_context_tuning(ctx)->fit_tiles = 0;
        cls_stats_destroy(s);
        if (it < 0) continue;
        t[FIT][it] = t1 - t0;
        t[TRANSFORM][it] = t2 - t1;
        t[FT][it] = t3 - t2;
        t[FT_STATS][it] = t4 - t3;
        t[FIT_TILES][it] = t5 - t4;
    }
    double m[NT];
    for (int j = 0; j < NT; j++) m[j] = bench_sorted_median(t[j], repeat);
    cls_device_info di;
    cls_device_get(ctx, 0, &di);
    printf("%zu x %zu x %zu %s (%.0f MB), %s, %s scope, %zu device(s), first %s, median of %d\n", B, R, C,
           f32 ? "float32" : "float64", (double)(n * es) / 1e6, p.scaler == CLS_ZSCORE ? "z-score" : "min-max",
           p.scope == CLS_SCOPE_BATCH ? "batch" : "matrix", cls_device_count(ctx), di.name, repeat);
    printf("  cls_fit %.4f s  cls_transform %.4f s  cls_fit_transform %.4f s (with fitted %.4f s)\n", m[FIT],
           m[TRANSFORM], m[FT], m[FT_STATS]);
    printf("  cls_fit in row tiles (switch fit_tiles) %.4f s\n", m[FIT_TILES]);
    printf("  cls_fit / cls_fit_transform: %.2f (with fitted: %.2f); row tiles / cls_fit_transform: %.2f\n",
           m[FIT] / m[FT], m[FIT] / m[FT_STATS], m[FIT_TILES] / m[FT]);
    for (int j = 0; j < NT; j++) free(t[j]);
    cls_context_destroy(ctx);
    free(x);
    free(y);
    return 0;
}
