/* clscale-mpi-bench: times cls_mpi_fit_transform() on seed-A (18 x 60 x 98450
 * float64, min-max) cut across the ranks of `mpirun -n N`, in batch scope
 * (one allreduce of 98450 column statistics, 5.5 MB) or matrix scope (whole
 * matrices per rank, no statistics move). Built with the meson feature `mpi`;
 * tools/bench/mpi_scaling.sh runs it over rank counts and against one
 * process on the same cores (--single: plain cls_fit_transform, no MPI call
 * in the timed region).
 *
 * Per rank: the call's time, its local fit, the check, the allreduce (which
 * includes waiting for the slowest rank's fit), the transform; then, after a
 * barrier, cls_mpi_stats_allreduce() of a table of the same size alone (its
 * check, the allreduce and a copy): what combining the statistics costs
 * when no rank waits for another. Values are the median of --repeat calls after one warm-up call
 * (kernels built, pages touched); the data is the same seeded values for any
 * rank count (a hash of the element's index), so the results are comparable.
 *
 * --quantiles times exact quantiles instead (the median and quartiles of
 * every column, batch scope): cls_mpi_quantiles() across the ranks (its
 * counting passes, each followed by one MPI_Allreduce of the per-column
 * histograms), or with --single one process's cls_quantiles(); the
 * "allreduce" columns are then the passes' collectives and their bytes.
 * --cols N narrows seed-A's 98450 columns (the histograms' bytes follow
 * the columns, not the rows).
 *
 * Output: one line per rank and a summary line on rank 0; --json F writes the
 * summary as JSON. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "bench_clock.h"
#include "clscale_mpi.h"

static int rank, size;

static double hash01(uint64_t i)
{
    uint64_t z = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

enum { T_CALL, T_FIT, T_CHECK, T_REDUCE, T_TRANSFORM, T_ALONE, NT };
static const char *tname[NT] = {"call", "fit", "check", "allreduce", "transform", "allreduce_alone"};

int main(int argc, char **argv)
{
    cli_pocl_affinity_default();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cls_scope scope = CLS_SCOPE_BATCH;
    int repeat = 5, single = 0, quant = 0;
    size_t C = 98450;
    double scale = 1.0;
    const char *json = NULL, *label = "";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scope") && i + 1 < argc) scope = strcmp(argv[++i], "matrix") ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "--single")) single = 1;
        else if (!strcmp(argv[i], "--quantiles")) quant = 1;
        else if (!strcmp(argv[i], "--cols") && i + 1 < argc) C = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
        else {
            if (rank == 0)
                fprintf(stderr, "usage: mpirun -n N clscale-mpi-bench [--scope batch|matrix] [--size X] "
                                "[--repeat R] [--single] [--quantiles] [--cols N] [--label TEXT] [--json F]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (repeat < 1) repeat = 1;
    if (single && size != 1) {
        if (rank == 0) fprintf(stderr, "clscale-mpi-bench: --single runs as one process\n");
        MPI_Finalize();
        return 2;
    }
    if (quant) scope = CLS_SCOPE_BATCH;
    if (!C) C = 1;
    size_t B = (size_t)fmax(1, round(18 * scale)), R = 60;
    size_t unit = scope == CLS_SCOPE_BATCH ? C : R * C, n = scope == CLS_SCOPE_BATCH ? B * R : B;
    size_t q = n / (size_t)size, extra = n % (size_t)size, k = (size_t)rank;
    size_t first = q * k + (k < extra ? k : extra), count = q + (k < extra);
    size_t elems = count * unit;
    double *x = aligned_alloc(4096, (elems * 8 + 4095) / 4096 * 4096 + 4096);
    double *y = aligned_alloc(4096, (elems * 8 + 4095) / 4096 * 4096 + 4096);
    if (!x || !y) {
        fprintf(stderr, "rank %d: out of memory for %zu elements\n", rank, elems);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* column c uniform in [-(c%7+1)*10, (c%11+2)*25), as bench.h's seed-a */
    for (size_t i = 0; i < elems; i++) {
        size_t g = first * unit + i, c = g % C;
        double lo = -(double)(c % 7 + 1) * 10.0, hi = (double)(c % 11 + 2) * 25.0;
        x[i] = lo + (hi - lo) * hash01(g);
    }
    memset(y, 0, elems * 8);

    cls_context *ctx = NULL;
    cls_status st = cls_context_create(NULL, &ctx);
    if (st != CLS_OK) {
        fprintf(stderr, "rank %d: %s: %s\n", rank, cls_status_str(st), ctx ? cls_last_error(ctx) : "");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    cls_device_info di;
    cls_device_get(ctx, 0, &di);
    cls_pipeline p = {.scaler = CLS_MINMAX, .scope = scope};
    cls_array in = {.data = x, .dtype = CLS_F64, .batch = scope == CLS_SCOPE_BATCH ? 1 : count, .rows = scope == CLS_SCOPE_BATCH ? count : R, .cols = C};
    if (!count) in.data = NULL;
    cls_array out = in;
    out.data = count ? y : NULL;

    double *t[NT];
    for (int j = 0; j < NT; j++) t[j] = calloc((size_t)repeat, sizeof(double));
    size_t stats_n = scope == CLS_SCOPE_BATCH && !quant ? C : 0;
    static const double qs[] = {0.5, 0.25, 0.75};
    double *qout = malloc(3 * C * sizeof *qout);
    uint64_t qbytes = 0;
    unsigned qpasses = 0;
    cls_column_stats *buf = calloc(C, sizeof *buf);
    for (int it = -1; it < repeat; it++) {  /* it -1: warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        cls_mpi_report rep;
        memset(&rep, 0, sizeof rep);
        if (quant && single) {
            st = cls_quantiles(ctx, &(cls_pipeline){.scope = CLS_SCOPE_BATCH}, &in, qs, 3, qout);
            rep.fit = MPI_Wtime() - t0;
        } else if (quant) {
            st = cls_mpi_quantiles(ctx, MPI_COMM_WORLD, &in, CLS_SCOPE_BATCH, qs, 3, qout);
            cls_mpi_last_report(&rep);
            rep.fit = rep.quantiles;
            rep.reduce = rep.quantile_reduce;
            qbytes = rep.quantile_bytes;
            qpasses = rep.quantile_passes;
        } else if (single) {
            st = cls_fit_transform(ctx, &p, &in, &out, NULL);
            rep.fit = MPI_Wtime() - t0;
        } else {
            st = cls_mpi_fit_transform(ctx, MPI_COMM_WORLD, &p, &in, &out, NULL);
            cls_mpi_last_report(&rep);
        }
        double call = MPI_Wtime() - t0;
        if (st != CLS_OK) {
            fprintf(stderr, "rank %d: %s: %s\n", rank, cls_status_str(st), cls_last_error(ctx));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* the combination alone, every rank ready: 5.5 MB of columns merged */
        double alone = 0;
        if (!single && stats_n) {
            for (size_t c = 0; c < C; c++) {
                buf[c].count = 60;
                buf[c].missing = 0;
                buf[c].min = -1 - hash01(c);
                buf[c].max = 1 + hash01(c + 7);
                buf[c].mean = hash01(c + 3) - 0.5;
                buf[c].m2 = 60 * hash01(c + 5);
                buf[c].absmax = buf[c].max;
            }
            cls_stats_info si = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_BATCH, .lo = 0, .hi = 1, .dtype = CLS_F64,
                                  .groups = 1, .cols = C, .rows = 60, .has_moments = 1};
            cls_stats *s = NULL, *merged = NULL;
            cls_stats_create(&si, NULL, &s);
            memcpy(cls_stats_columns(s), buf, C * sizeof *buf);
            MPI_Barrier(MPI_COMM_WORLD);
            double a0 = MPI_Wtime();
            st = cls_mpi_stats_allreduce(MPI_COMM_WORLD, s, &merged);
            alone = MPI_Wtime() - a0;
            if (st != CLS_OK) {
                fprintf(stderr, "rank %d: %s\n", rank, cls_last_error(NULL));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            cls_stats_destroy(s);
            cls_stats_destroy(merged);
        }
        if (it < 0) continue;
        t[T_CALL][it] = call;
        t[T_FIT][it] = rep.fit;
        t[T_CHECK][it] = rep.check;
        t[T_REDUCE][it] = rep.reduce;
        t[T_TRANSFORM][it] = rep.transform;
        t[T_ALONE][it] = alone;
    }
    double med[NT];
    for (int j = 0; j < NT; j++) med[j] = bench_sorted_median(t[j], repeat);
    double *all = rank == 0 ? malloc((size_t)size * NT * sizeof(double)) : NULL;
    MPI_Gather(med, NT, MPI_DOUBLE, all, NT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const char *sc = scope == CLS_SCOPE_BATCH ? "batch" : "matrix";
        double gb = (double)(B * R * C * 8) / 1e9;
        const char *what = quant ? (single ? "one process, cls_quantiles (median, quartiles)"
                                           : "cls_mpi_quantiles (median, quartiles)")
                                 : single ? "one process, cls_fit_transform" : "cls_mpi_fit_transform";
        printf("seed-a %s scope, %zu x %zu x %zu float64 (%.2f GB), %s, %d rank%s, device %s, median of %d%s%s\n",
               sc, B, R, C, gb, what, size,
               size == 1 ? "" : "s", di.name, repeat, *label ? ", " : "", label);
        double call = 0, reduce = 0, alone = 0;
        for (int r = 0; r < size; r++) {
            const double *v = all + r * NT;
            printf("  rank %d: call %.4f s  fit %.4f  check %.5f  allreduce %.5f  transform %.4f  allreduce alone %.5f\n",
                   r, v[T_CALL], v[T_FIT], v[T_CHECK], v[T_REDUCE], v[T_TRANSFORM], v[T_ALONE]);
            call = fmax(call, v[T_CALL]);
            reduce = fmax(reduce, v[T_REDUCE]);
            alone = fmax(alone, v[T_ALONE]);
        }
        double bytes = quant ? (double)qbytes : (double)stats_n * sizeof(cls_column_stats);
        if (quant)
            printf("  quantiles: %u passes, each followed by a status check and the counts summed (allreduce or pairs); "
                   "%.2f MB of counts per rank per call\n", qpasses, bytes / 1e6);
        if (quant)
            printf("  slowest rank: call %.4f s; the passes' collectives (%.2f MB of counts from this rank): "
                   "%.5f s (%.1f%% of the call, waiting for the slowest rank's passes included)\n",
                   call, bytes / 1e6, reduce, 100 * reduce / call);
        else
            printf("  slowest rank: call %.4f s, %.2f GB/s of data (read + write); allreduce of %.2f MB: %.5f s in "
                   "the call (%.1f%% of it, waiting for the slowest fit included), %.5f s alone (%.1f%%)\n",
                   call, 2 * gb / call, bytes / 1e6, reduce, 100 * reduce / call, alone, 100 * alone / call);
        if (json) {
            FILE *f = fopen(json, "w");
            if (f) {
                fprintf(f, "{\"workload\": \"seed-a%s\", \"cols\": %zu, \"scope\": \"%s\", \"ranks\": %d, \"single\": %d, "
                           "\"label\": \"%s\", \"device\": \"%s\", \"gb\": %.4f, \"allreduce_bytes\": %.0f, "
                           "\"repeat\": %d, \"slowest_call_s\": %.6f, \"allreduce_in_call_s\": %.6f, "
                           "\"allreduce_alone_s\": %.6f, \"ranks_detail\": [",
                        quant ? " quantiles" : "", C, sc, size, single, label, di.name, gb, bytes, repeat, call,
                        reduce, alone);
                for (int r = 0; r < size; r++) {
                    fprintf(f, "%s{", r ? ", " : "");
                    for (int j = 0; j < NT; j++) fprintf(f, "%s\"%s_s\": %.6f", j ? ", " : "", tname[j], all[r * NT + j]);
                    fputc('}', f);
                }
                fputs("]}\n", f);
                fclose(f);
            }
        }
    }
    free(all);
    for (int j = 0; j < NT; j++) free(t[j]);
    free(buf);
    free(qout);
    cls_context_destroy(ctx);
    free(x);
    free(y);
    MPI_Finalize();
    return 0;
}
