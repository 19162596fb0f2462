/* z-score: y = (x - mean) / std, population std (ddof 0); std 0 maps to 0
 * (scikit-learn's StandardScaler). Needs the moments, taken by Welford and
 * merged by Chan's formulas in the fused kernel's pass.
 *
 * The params are the fused kernel's (cl/scale.cl MAKE_PARAMS) bit for bit,
 * so that a fused fit and transform equals a fit then a transform: the
 * shift is the mean (split in two for float32 by params.c, as the kernel
 * splits it), and the multiplier 1 / sqrt(m2 / n) is taken in the data's
 * dtype (float32 division and square root, correctly rounded on both
 * sides) where m2 is in the kernel's float range (at least count 2^-100,
 * at most FLT_MAX), else in double. An infinite m2 leaves the column as it
 * is, as the kernel does. (The kernel also leaves a float32 column that is
 * not constant and whose m2 is below count 2^-100 as it is; the Python
 * layer takes such float32 moments again in float64, and redoes those
 * columns.) */
#include <float.h>
#include <math.h>

#include "scalers/scaler.h"

static cls_params params(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t)
{
    (void)o;
    cls_params p = {0.0, 1.0, 0.0};
    double sd = sqrt(s->m2 / (double)s->count);
    if (!(s->m2 < INFINITY)) return p;
    /* float32 in the kernel's range (its ZS_KEEP): its float arithmetic */
    if (!inverse) {
        p.shift = s->mean;
        if (t == CLS_F32 && s->m2 <= FLT_MAX && s->m2 >= ldexp((double)s->count, -100)) {
            float sdf = sqrtf((float)s->m2 / (float)s->count);
            p.m = sdf > 0 ? (double)(1.0f / sdf) : 0.0;
        } else {
            p.m = sd > 0 ? 1.0 / sd : 0.0;
        }
    } else {
        p.m = sd;
        p.o = s->mean;
    }
    return p;
}

const cls_scaler_desc cls_scaler_zscore = {
    .id = CLS_ZSCORE, .name = "z-score", .cli = "zscore", .python = "StandardScaler",
    .file_code = 2, .needs = CLS_NEED_EXTREMES | CLS_NEED_MOMENTS, .kernel = 2, .fused = 1,
    .params = params,
};
