/* z-score: y = (x - mean) / std, population std (ddof 0); std 0 maps to 0
 * (scikit-learn's StandardScaler). Needs the moments, taken by Welford and
 * merged by Chan's formulas in the fused kernel's pass. */
#include <math.h>

#include "scalers/scaler.h"

static cls_params params(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t)
{
    (void)o;
    (void)t;
    cls_params p = {0.0, 1.0, 0.0};
    double sd = sqrt(s->m2 / (double)s->count);
    if (!inverse) {
        p.shift = s->mean;
        p.m = sd > 0 ? 1.0 / sd : 0.0;
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
