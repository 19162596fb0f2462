/* The benchmark's workloads (bench.h): their shapes and sizes, their seeded
 * data, the check of a result against a reference, and the CPU's name.
 * Calls only libc and libm. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "bench_host.h"

/* ---- workloads ---------------------------------------------------------- */

static const bench_workload workloads[] = {
    {"seed-a", "min-max scaling of 18 arrays of 60 x 98450 float64", BENCH_MINMAX_MATRIX, CLS_F64,
     18, 60, 98450, 0, 0},
    {"seed-b", "discount 100 x 4000 x 5 float64 by factors 4000 x 5", BENCH_DISCOUNT, CLS_F64,
     100, 4000, 5, 4000, 5},
    {"seed-b-large", "discount 20 x 1000000 x 5 float64 by factors 1000000 x 5", BENCH_DISCOUNT,
     CLS_F64, 20, 1000000, 5, 1000000, 5},
    {"table", "z-score of a 2000000 x 8 float32 table over the whole batch", BENCH_ZSCORE_BATCH,
     CLS_F32, 1, 2000000, 8, 0, 0},
};
enum { NWORKLOADS = sizeof workloads / sizeof workloads[0] };

static size_t scale_dim(size_t n, double size)
{
    double v = round((double)n * size);
    if (!(v >= 1.0)) return 1;               /* NaN and negative sizes too */
    if (v > 0x1p52) return (size_t)0x1p52;
    return (size_t)v;
}

/* Returns how many were written: min(cap, the number of workloads). */
size_t bench_workloads(double size, bench_workload *out, size_t cap)
{
    size_t n = 0;
    for (; n < NWORKLOADS && n < cap && out; n++) {
        bench_workload w = workloads[n];
        if (w.batch != 1) {
            w.batch = scale_dim(w.batch, size);
        } else {
            int factors_follow = w.frows == w.rows && w.frows != 0;
            w.rows = scale_dim(w.rows, size);
            if (factors_follow) w.frows = w.rows;
        }
        out[n] = w;
    }
    return n;
}

size_t bench_elements(const bench_workload *w)
{
    return w ? w->batch * w->rows * w->cols : 0;
}

uint64_t bench_bytes(const bench_workload *w)
{
    if (!w) return 0;
    uint64_t es = dtype_size(w->dtype);
    uint64_t b = 2 * (uint64_t)bench_elements(w) * es;
    if (w->kind == BENCH_DISCOUNT) b += (uint64_t)w->frows * w->fcols * es;
    return b;
}

cls_pipeline bench_pipeline(const bench_workload *w, const cls_array *f)
{
    cls_pipeline p;
    memset(&p, 0, sizeof p);
    p.scaler = CLS_NONE;
    p.scope = CLS_SCOPE_MATRIX;
    p.lo = 0.0;
    p.hi = 1.0;
    if (!w) return p;
    switch (w->kind) {
    case BENCH_MINMAX_MATRIX: p.scaler = CLS_MINMAX; break;
    case BENCH_DISCOUNT: p.factors = f; break;
    case BENCH_ZSCORE_BATCH: p.scaler = CLS_ZSCORE; p.scope = CLS_SCOPE_BATCH; break;
    }
    return p;
}

/* ---- seeded data -------------------------------------------------------- */

/* xoshiro256** seeded by splitmix64. Uniforms carry 32 bits, so that every
 * product below (a small integer or dyadic scale times a uniform) is exact:
 * fused multiply-add or not, every machine computes the same numbers. */
typedef struct xrng { uint64_t s[4]; } xrng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void xrng_seed(xrng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xrng_next(xrng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static double u32(uint32_t k) { return (double)k * 0x1p-32; }   /* [0, 1) */

void bench_fill(const bench_workload *w, void *x, void *factors, uint64_t seed)
{
    if (!w || !x) return;
    xrng r;
    xrng_seed(&r, seed);
    size_t rows = w->batch * w->rows, cols = w->cols;
    if (w->kind == BENCH_ZSCORE_BATCH) {
        /* Irwin-Hall of 12 uniforms: mean 6, variance 1, close to normal. */
        for (size_t i = 0, e = 0; i < rows; i++)
            for (size_t c = 0; c < cols; c++, e++) {
                double z = -6.0;
                for (int k = 0; k < 6; k++) {
                    uint64_t b = xrng_next(&r);
                    z += u32((uint32_t)(b >> 32)) + u32((uint32_t)b);
                }
                st(x, w->dtype, e, 100.0 + 10.0 * (double)c + (1.0 + (double)c / 4.0) * z);
            }
    } else {
        /* Column c uniform in [-(c%7+1)*10, (c%11+2)*25): scales differ. */
        for (size_t i = 0, e = 0; i < rows; i++)
            for (size_t c = 0; c < cols; c++, e++) {
                double lo = -(double)(c % 7 + 1) * 10.0, hi = (double)(c % 11 + 2) * 25.0;
                st(x, w->dtype, e, lo + (hi - lo) * u32((uint32_t)(xrng_next(&r) >> 32)));
            }
    }
    if (w->kind == BENCH_DISCOUNT && factors) {
        xrng_seed(&r, seed ^ 0xfac7025fac7025ull);   /* independent of x's size */
        for (size_t i = 0; i < w->frows * w->fcols; i++)
            st(factors, w->dtype, i, 0.5 + u32((uint32_t)(xrng_next(&r) >> 32)));
    }
}

/* ---- checking ----------------------------------------------------------- */

double bench_max_error(const bench_workload *w, const void *a, const void *b)
{
    if (!w || !a || !b) return INFINITY;
    double worst = 0.0;
    size_t n = bench_elements(w);
    for (size_t i = 0; i < n; i++) {
        double u = w->dtype == CLS_F64 ? ((const double *)a)[i] : ((const float *)a)[i];
        double v = w->dtype == CLS_F64 ? ((const double *)b)[i] : ((const float *)b)[i];
        if (isnan(u) || isnan(v)) {
            if (isnan(u) && isnan(v)) continue;
            return INFINITY;
        }
        if (u == v) continue;
        if (isinf(u) || isinf(v)) return INFINITY;
        double e = fabs(u - v) / fmax(1.0, fabs(v));
        if (e > worst) worst = e;
    }
    return worst;
}

double bench_tolerance(const bench_workload *w)
{
    return w && w->dtype == CLS_F32 ? 2e-5 : 1e-9;
}

/* ---- the machine -------------------------------------------------------- */

void bench_cpu_model(char *buf, size_t len)
{
    if (!buf || len == 0) return;
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        char *v = strchr(line, ':');
        if (!v) continue;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        size_t e = strlen(v);
        while (e > 0 && (v[e - 1] == '\n' || v[e - 1] == ' ' || v[e - 1] == '\r')) v[--e] = '\0';
        if (e > 0) snprintf(buf, len, "%s", v);
        break;
    }
    fclose(f);
}
