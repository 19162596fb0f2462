/* decimal scaling: y = x / 10^j, j the smallest integer with max |y| < 1 as
 * stored in the data's dtype. Needs max |x| (from the extremes); the fused
 * kernel finds j on the device (cl/scale.cl decimal_m), and this file's
 * cls_decimal_exponent_in agrees with it. */
#include <float.h>
#include <math.h>

#include "scalers/scaler.h"

/* a / 10^j rounded once where 10^|j| is exact in double (up to 10^22),
 * then to the data's dtype: the value decimal scaling stores for a. (Below
 * 10^-22 a multiplication could overflow, so a division stands in.) */
static int stored_below_one(double a, int j, cls_dtype t)
{
    double q = j < 0 && j >= -22 ? a * pow(10.0, -j) : a / pow(10.0, j);
    return t == CLS_F32 ? (float)q < 1.0f : q < 1.0;
}

int cls_decimal_exponent_in(double a, cls_dtype t)
{
    if (!(a > 0) || !isfinite(a)) return 0;
    int j = (int)floor(log10(a)) + 1;
    /* log10 may be off by one around powers of ten, and a value just below
     * one may round up to it when stored: settle j by the stored value. */
    if (!stored_below_one(a, j, t)) j++;
    else if (stored_below_one(a, j - 1, t)) j--;
    /* 10^-j must be finite in the data's dtype: a column of subnormal
     * values only gets 10^38 (float) or 10^308 (double) at most */
    int jmin = t == CLS_F32 ? -FLT_MAX_10_EXP : -DBL_MAX_10_EXP;
    return j < jmin ? jmin : j;
}

int cls_decimal_exponent(double a) { return cls_decimal_exponent_in(a, CLS_F64); }

static cls_params params(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t)
{
    (void)o;
    cls_params p = {0.0, 1.0, 0.0};
    int j = cls_decimal_exponent_in(s->absmax, t);
    p.m = pow(10.0, inverse ? j : -j);
    return p;
}

const cls_scaler_desc cls_scaler_decimal = {
    .name = "decimal scaling", .cli = "decimal", .python = "DecimalScaler",
    .file_code = 3, .needs = CLS_NEED_EXTREMES, .kernel = "CLS_KS_DECIMAL", .fused = 1,
    .params = params,
};
