/* z-score: y = (x - mean) / std, population std (ddof 0); std 0 maps to 0
 * (scikit-learn's StandardScaler). Needs the moments, taken by Welford and
 * merged by Chan's formulas in the fused kernel's pass.
 *
 * The params are the fused kernel's (cl/scale.cl MAKE_PARAMS) bit for bit,
 * so that a fused fit and transform equals a fit then a transform: the
 * shift is the mean (split in two for float32 by params.c, as the kernel
 * splits it), and the multiplier 1 / sqrt(m2 / n) is taken in the data's
 * dtype (float32 division and square root, correctly rounded on both
 * sides) where m2 is a float32 value (as the device's statistics of
 * float32 data are), else in double (float32 moments taken again in
 * float64, merged ones). An infinite m2 (float32 values past ~1e19) leaves
 * the column as it is, and a std of 0 in a column that is not constant
 * (float32 squares below FLT_MIN) only centres it, as the kernel does:
 * the Python layer takes such float32 moments again in float64 from the
 * values these maps keep. */
#include <float.h>
#include <math.h>

#include "scalers/scaler.h"

static cls_params params(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t)
{
    (void)o;
    cls_params p = {0.0, 1.0, 0.0};
    double sd = sqrt(s->m2 / (double)s->count);
    if (!(s->m2 < INFINITY)) return p;
    double flat = s->max > s->min ? 1.0 : 0.0; /* the multiplier of a std of 0 */
    if (!inverse) {
        p.shift = s->mean;
        if (t == CLS_F32 && s->m2 <= FLT_MAX && (double)(float)s->m2 == s->m2) {
            float sdf = sqrtf((float)s->m2 / (float)s->count);
            p.m = sdf > 0 ? (double)(1.0f / sdf) : flat;
        } else {
            p.m = sd > 0 ? 1.0 / sd : flat;
        }
    } else {
        p.m = sd;
        p.o = s->mean;
    }
    return p;
}

const cls_scaler_desc cls_scaler_zscore = {
    .name = "z-score", .cli = "zscore", .python = "StandardScaler",
    .file_code = 2, .needs = CLS_NEED_EXTREMES | CLS_NEED_MOMENTS, .kernel = "CLS_KS_ZSCORE", .fused = 1,
    .params = params,
};
