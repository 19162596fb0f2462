/* clscale-clean-bench: the cleaning stage's speed rows, measured in one
 * run so that their ratios hold on a noisy machine (rows take turns, each
 * repeated; the median is reported):
 *   scale         z-score fit-transform alone
 *   impute+scale  mean imputation fused with the z-score (one cls_fit_transform:
 *                 the engine's one pass, clean/impute_fused.c)
 *   clean.c path  the same call on the cleaning stage's own passes (a second
 *                 context with the switch impute_unfused, testing.h)
 *   impute, scale cls_fit_transform, then a z-score fit-transform (two calls)
 *   minmax        min-max fit-transform alone
 *   impute+minmax mean imputation fused with min-max
 *   clip          3-sigma clipping to convergence (median, std), masked
 *   quantiles     median and quartiles (cls_quantiles: 25, 50, 75 %, exact)
 * Data: batch x rows x cols float64 (default seed-A's shape, 18 x 60 x
 * 98450), normal values with 5% NaN, statistics per matrix; or, with
 * --raw FILE, the batch x rows x cols float64 values of FILE (native byte
 * order, no header: numpy's tofile), so that a peer in another process
 * (astropy, on a machine where clscale's Python package does not load)
 * times the same data.
 *   clscale-clean-bench [BATCH ROWS COLS [REPEATS [--raw FILE]]] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "affinity.h"
#include "bench_clock.h"
#include "clscale.h"
#include "testing.h"

int main(int argc, char **argv)
{
    cli_pocl_affinity_default();
    size_t B = argc > 3 ? strtoul(argv[1], NULL, 10) : 18, R = argc > 3 ? strtoul(argv[2], NULL, 10) : 60,
           C = argc > 3 ? strtoul(argv[3], NULL, 10) : 98450;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    const char *raw = argc == 7 && strcmp(argv[5], "--raw") == 0 ? argv[6] : NULL;
    if (!B || !R || !C || reps < 1 || reps > 100 || (argc > 5 && !raw)) {
        fprintf(stderr, "usage: clscale-clean-bench [BATCH ROWS COLS [REPEATS [--raw FILE]]]\n");
        return 2;
    }
    size_t n = B * R * C;
    cls_context *ctx = NULL, *old = NULL;
    if (cls_context_create(NULL, &ctx) != CLS_OK) {
        fprintf(stderr, "clscale-clean-bench: %s\n", cls_last_error(ctx));
        cls_context_destroy(ctx);
        return 1;
    }
    if (cls_context_create(NULL, &old) != CLS_OK) {
        fprintf(stderr, "clscale-clean-bench: %s\n", cls_last_error(old));
        cls_context_destroy(old);
        cls_context_destroy(ctx);
        return 1;
    }
    cls_context_tuning(old)->impute_unfused = 1;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    double *qout = malloc(B * 3 * C * sizeof *qout);
    if (!x || !y || !z || !qout) return 1;
    uint64_t s = 12345;
    if (raw) {
        FILE *f = fopen(raw, "rb");
        size_t got = f ? fread(x, sizeof *x, n, f) : 0;
        int extra = f && fgetc(f) != EOF;
        if (f) fclose(f);
        if (got != n || extra) {
            fprintf(stderr, "clscale-clean-bench: %s: not %zu float64 values\n", raw, n);
            return 1;
        }
    }
    for (size_t i = 0; i < n && !raw; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) / 9007199254740992.0;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) / 9007199254740992.0;
        x[i] = u < 0.05 ? NAN : sqrt(-2 * log(v + 1e-300)) * cos(6.283185307179586 * u) * 2 + 10;
    }
    cls_array in = {.data = x, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C}, out = {.data = y, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C}, mid = {.data = z, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
    cls_clean impute = {.impute = CLS_IMPUTE_MEAN};
    cls_clean clip = {.sigma = 3, .maxiters = -1};
    cls_pipeline scale = {.scaler = CLS_ZSCORE}, fused = {.scaler = CLS_ZSCORE, .clean = &impute};
    cls_pipeline mm = {.scaler = CLS_MINMAX}, mm_fused = {.scaler = CLS_MINMAX, .clean = &impute};
    enum { ROWS = 8 };
    const char *names[ROWS] = {"scale (z-score)", "impute+scale fused", "impute+scale clean.c",
                               "impute, then scale", "min-max", "impute+min-max fused", "3-sigma clip",
                               "median and quartiles"};
    static const double qs[3] = {0.25, 0.5, 0.75};
    double t[ROWS][100];
    for (int r = -1; r < reps; r++) /* r = -1 warms up (kernel builds) */
        for (int k = 0; k < ROWS; k++) {
            int row = (k + (r > 0 ? r : 0)) % ROWS; /* rows take turns in different orders */
            double t0 = bench_now_s();
            cls_status st = CLS_OK;
            if (row == 0) st = cls_fit_transform(ctx, &scale, &in, &out, NULL);
            else if (row == 1) st = cls_fit_transform(ctx, &fused, &in, &out, NULL);
            else if (row == 2) st = cls_fit_transform(old, &fused, &in, &out, NULL);
            else if (row == 3) {
                st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &impute}, &in, &mid, NULL);
                if (st == CLS_OK) st = cls_fit_transform(ctx, &scale, &mid, &out, NULL);
            } else if (row == 4) st = cls_fit_transform(ctx, &mm, &in, &out, NULL);
            else if (row == 5) st = cls_fit_transform(ctx, &mm_fused, &in, &out, NULL);
            else if (row == 6) st = cls_fit_transform(ctx, &(cls_pipeline){.scope = CLS_SCOPE_MATRIX, .clean = &clip}, &in, &out, NULL);
            else st = cls_quantiles(ctx, NULL, &in, qs, 3, qout);
            if (st != CLS_OK) {
                fprintf(stderr, "clscale-clean-bench: %s: %s\n", cls_status_str(st),
                        cls_last_error(row == 2 ? old : ctx));
                return 1;
            }
            if (r >= 0) t[row][r] = bench_now_s() - t0;
        }
    printf("clean bench: %zu x %zu x %zu float64 (%.0f MB%s%s), %zu device(s), median of %d\n", B, R, C,
           (double)n * 8 / 1e6, raw ? " from " : "", raw ? raw : "", cls_device_count(ctx), reps);
    double med[ROWS];
    for (int k = 0; k < ROWS; k++) {
        bench_sort(t[k], reps);
        med[k] = t[k][reps / 2];
        /* the min-max rows, clipping and quantiles against min-max alone */
        int mm_base = k == 5 || k == 6 || k == 7;
        double base = mm_base ? med[4] : med[0];
        printf("  %-22s %8.4f s  %5.2fx %s alone\n", names[k], med[k], med[k] / base,
               mm_base ? "min-max" : "z-score");
    }
    free(x);
    free(y);
    free(z);
    free(qout);
    cls_context_destroy(old);
    cls_context_destroy(ctx);
    return 0;
}
