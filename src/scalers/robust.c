/* robust: scikit-learn's RobustScaler. y = (x - median) / scale, scale =
 * q_hi - q_lo (the quantile range's ends, numpy's nanpercentile), set to 1
 * below 10 * DBL_EPSILON as _handle_zeros_in_scale does (the float64 range
 * of a float32 column too: nanpercentile of a list returns float64), then
 * divided by norm.ppf(qmax/100) - norm.ppf(qmin/100) with unit_variance.
 * Needs the quantiles: counting passes (quantiles/select.c) before the
 * scaling pass; never fused. */
#include <float.h>
#include <math.h>

#include "scalers/scaler.h"

static double scale_of(const cls_column_stats *s, const cls_scaler_opts *o)
{
    double sc = s->q_hi - s->q_lo;
    if (!(sc >= 10 * DBL_EPSILON)) sc = 1.0;
    if (o->unit_variance) sc /= cls_norm_ppf(o->qmax / 100.0) - cls_norm_ppf(o->qmin / 100.0);
    return sc;
}

static cls_params params(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t)
{
    (void)t;
    cls_params p = {0.0, 1.0, 0.0};
    double center = o->center ? s->median : 0.0, sc = o->scale ? scale_of(s, o) : 1.0;
    if (!inverse) {
        p.shift = center;
        p.m = 1.0 / sc;
    } else {
        p.m = sc;
        p.o = center;
    }
    return p;
}

const cls_scaler_desc cls_scaler_robust = {
    .name = "robust scaling", .cli = "robust", .python = "RobustScaler",
    .file_code = 4, .needs = CLS_NEED_EXTREMES | CLS_NEED_QUANTILES, .kernel = "CLS_KS_ROBUST", .fused = 0,
    .params = params,
};

/* Acklam's rational approximation (relative error 1.15e-9), then one step
 * of Halley's method on erfc, which brings it to full double precision. */
double cls_norm_ppf(double p)
{
    if (!(p > 0 && p < 1)) return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    double x, q, r;
    if (p < 0.02425) {
        q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
        q = sqrt(-2 * log(1 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        q = p - 0.5;
        r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
    double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}
