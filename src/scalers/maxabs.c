/* max-abs: scikit-learn's MaxAbsScaler, y = x / max|x|; a max|x| below 10
 * epsilons of the data's dtype scales by 1 (_handle_zeros_in_scale on an
 * array of that dtype). Needs the extremes only, so the fused kernel makes
 * its params on the device (cl/scale.cl MAKE_PARAMS, CLS_KS_MAXABS). */
#include <float.h>

#include "scalers/scaler.h"

static cls_params params(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t)
{
    (void)o;
    cls_params p = {0.0, 1.0, 0.0};
    double a = s->absmax, eps = t == CLS_F32 ? FLT_EPSILON : DBL_EPSILON;
    if (!(a >= 10 * eps)) a = 1.0;
    p.m = inverse ? a : 1.0 / a;
    return p;
}

const cls_scaler_desc cls_scaler_maxabs = {
    .name = "max-abs scaling", .cli = "maxabs", .python = "MaxAbsScaler",
    .file_code = 5, .needs = CLS_NEED_EXTREMES, .kernel = "CLS_KS_MAXABS", .fused = 1,
    .params = params,
};
