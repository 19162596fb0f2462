/* The benchmark's host side: workloads, host references and host limits.
 * bench_host.c owns everything declared here; the run of `clscale bench`
 * (bench_run.h) drives it. */
#ifndef CLS_BENCH_H
#define CLS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "clscale.h"

typedef enum bench_kind {
    BENCH_MINMAX_MATRIX,   /* seed-a: min-max per matrix, float64 */
    BENCH_DISCOUNT,        /* seed-b, seed-b-large: y = x * factors[rows x cols], float64 */
    BENCH_ZSCORE_BATCH     /* table: z-score over the whole batch, float32 */
} bench_kind;

typedef struct bench_workload {
    const char *name;          /* "seed-a", "seed-b", "seed-b-large", "table" */
    const char *description;   /* one line for the table */
    bench_kind  kind;
    cls_dtype   dtype;
    size_t      batch, rows, cols;      /* of x (after --size scaling) */
    size_t      frows, fcols;           /* factors shape (BENCH_DISCOUNT), else 0 */
} bench_workload;

/* The workloads at scale `size` (1.0: the users' shapes; the first dimension
 * that is not 1 among batch/rows is scaled, at least 1). Returns the count;
 * fills out[0..count). */
size_t bench_workloads(double size, bench_workload *out, size_t cap);

/* Elements of x, and bytes that must move: every input byte read once and
 * every output byte written once (factors counted once). */
size_t bench_elements(const bench_workload *w);
uint64_t bench_bytes(const bench_workload *w);

/* Fills x (and factors, when the workload has them) with seeded data: the
 * same numbers on every machine for the same workload. Values are finite
 * (no NaN): the benchmark measures speed, the tests measure semantics. */
void bench_fill(const bench_workload *w, void *x, void *factors, uint64_t seed);

/* The pipeline that clscale runs for the workload (factors from `f`). */
cls_pipeline bench_pipeline(const bench_workload *w, const cls_array *f);

/* Host references: the same transform in plain single-threaded C, and in
 * well-written C over `threads` threads (0: all online CPUs). Out of place. */
void bench_ref_single(const bench_workload *w, const void *x, const void *factors, void *y);
void bench_ref_threads(const bench_workload *w, const void *x, const void *factors, void *y,
                       unsigned threads);

/* Largest |a - b| / max(1, |b|) over the elements (NaN equal to NaN);
 * returns +Inf when a NaN meets a number. */
double bench_max_error(const bench_workload *w, const void *a, const void *b);
/* Tolerance a correct result must meet for the workload's dtype. */
double bench_tolerance(const bench_workload *w);

/* STREAM-style host memory bandwidth over `threads` threads (0: all), GB/s
 * with 1e9 bytes, best of `repeats`, on arrays of `bytes` each:
 * copy counts read + write bytes; triad (a = b + s * c) counts 3 arrays. */
double bench_stream_copy(size_t bytes, unsigned threads, int repeats);
double bench_stream_triad(size_t bytes, unsigned threads, int repeats);
/* One timed STREAM copy pass a -> c over n doubles whose pages exist (the
 * caller touched them), on `threads` (0: every CPU): GB/s, 0 on failure. */
double bench_stream_copy_pass(double *c, const double *a, size_t n, unsigned threads);

/* The CPU model string ("AMD EPYC ...") and online CPUs. */
void bench_cpu_model(char *buf, size_t len);
unsigned bench_cpus(void);

#endif
