/* min-max: y = (x - min) / (max - min) * (hi - lo) + lo (scikit-learn's
 * MinMaxScaler); a constant column maps to lo. Needs the extremes, which
 * the fused kernel takes in the same pass as the scaling. */
#include "scalers/scaler.h"

static cls_params params(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t)
{
    (void)t;
    cls_params p = {0.0, 1.0, 0.0};
    if (!inverse) {
        p.shift = s->min;
        p.m = s->max > s->min ? (o->hi - o->lo) / (s->max - s->min) : 0.0;
        p.o = o->lo;
    } else {
        p.shift = o->lo;
        p.m = o->hi != o->lo ? (s->max - s->min) / (o->hi - o->lo) : 0.0;
        p.o = s->min;
    }
    return p;
}

const cls_scaler_desc cls_scaler_minmax = {
    .name = "min-max", .cli = "minmax", .python = "MinMaxScaler",
    .file_code = 1, .needs = CLS_NEED_EXTREMES, .kernel = "CLS_KS_MINMAX", .fused = 1, .ranged = 1,
    .params = params,
};
