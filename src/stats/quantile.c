/* numpy's quantile and median arithmetic (quantile.h). Mirrors numpy 1.24's
 * lib/function_base.py (_quantile, _lerp, the "linear" method) and
 * nanfunctions.py (nanmedian); learned from, not copied. */
#include <math.h>
#include <string.h>

#include "stats/quantile.h"

void cls_median_ranks(uint64_t n, uint64_t *lo, uint64_t *hi)
{
    *lo = (n - 1) / 2;
    *hi = n / 2;
}

double cls_median_of(double a, double b, uint64_t n, cls_dtype dt)
{
    if (n % 2) return a;
    if (dt == CLS_F32) return (double)(((float)a + (float)b) / 2.0f);
    return (a + b) / 2.0;
}

uint64_t cls_key_of(double v, cls_dtype dt)
{
    if (dt == CLS_F32) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return (u >> 31) ? (uint32_t)~u : (u | 0x80000000u);
    }
    uint64_t u;
    memcpy(&u, &v, 8);
    return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

double cls_value_of_key(uint64_t k, cls_dtype dt)
{
    if (dt == CLS_F32) {
        uint32_t u = (uint32_t)k;
        u = (u >> 31) ? (u & 0x7fffffffu) : ~u;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    uint64_t u = (k >> 63) ? (k & 0x7fffffffffffffffull) : ~k;
    double v;
    memcpy(&v, &u, 8);
    return v;
}
