/* Timing that every benchmark program shares: `clscale bench` and the
 * programs of their own (clean_bench.c, clip_kernels.c, fit_bench.c,
 * mpi_bench.c). bench_clock.c. */
#ifndef CLS_BENCH_CLOCK_H
#define CLS_BENCH_CLOCK_H

/* Monotonic seconds. */
double bench_now_s(void);
/* Sorts v[0..n) in ascending order. */
void bench_sort(double *v, int n);
/* Sorts v[0..n) and returns its median (n > 0). */
double bench_sorted_median(double *v, int n);

#endif
