/* Timing that every benchmark program shares (bench_clock.h). */
#include "bench_clock.h"

#include <stdlib.h>
#include <time.h>

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_double); }

double bench_sorted_median(double *v, int n)
{
    bench_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
