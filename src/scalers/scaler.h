/* The scalers' one seam. Each scaler is one descriptor in a file of its own
 * (minmax.c, zscore.c, decimal.c, robust.c, maxabs.c) and one line of
 * clscale.h's CLS_SCALERS list, which makes both its cls_scaler value and
 * its entry of the table (table.c): its names, the statistics it needs, how
 * its params come from them (forward and inverse), its code in the stats
 * file and its name in the kernels. The planner, the params, the stats file,
 * the tool, Python and MPI ask the table; none of them switches on a scaler.
 * A new scaler: its descriptor file, its line in CLS_SCALERS and, when
 * fused, its branch of MAKE_PARAMS in cl/scale.cl.
 * Pure C, no OpenCL: callable from stats/ and engine/ alike. */
#ifndef CLS_SCALER_H
#define CLS_SCALER_H

#include "clscale.h"

/* What a fit must compute for a scaler (cls_scaler_desc.needs). */
#define CLS_NEED_EXTREMES  1u  /* min, max, absmax: one pass, Chan-mergeable */
#define CLS_NEED_MOMENTS   2u  /* mean, m2: one pass, Chan-mergeable */
#define CLS_NEED_QUANTILES 4u  /* median and the quantile range: counting passes
                                  (stats/quantile.c), not mergeable */

/* Params of the scaler for one column, in double: y = (x - shift) * m + o,
 * then clamp to [lo, hi] when clipping. Inverse params undo the forward ones.
 * A column with count 0 gets shift 0, m 1, o 0 (its values are all missing). */
typedef struct cls_params { double shift, m, o; } cls_params;

/* What a pipeline (or a stats file) says beyond the scaler. */
typedef struct cls_scaler_opts {
    double lo, hi;            /* min-max range, resolved ([0, 1] for 0, 0) */
    int    center, scale;     /* robust: with_centering, with_scaling */
    int    unit_variance;     /* robust */
    double qmin, qmax;        /* robust: quantile range, percent */
} cls_scaler_opts;

typedef struct cls_scaler_desc {
    const char *name;       /* in messages: "min-max" */
    const char *cli;        /* clscale normalize --method */
    const char *python;     /* the Python estimator */
    uint32_t    file_code;  /* in the stats file (docs/FORMAT.md) */
    unsigned    needs;      /* CLS_NEED_* */
    const char *kernel;     /* the name of its code in the kernels ("CLS_KS_MINMAX"): a
                               define of every kernel build, whose value the table
                               gives (cls_scaler_kernel_code); cl/scale.cl's
                               MAKE_PARAMS branches on it when fused */
    int         fused;      /* the fused kernel makes its params on the device
                               (cl/scale.cl MAKE_PARAMS); else params come from
                               the host after a fit of their own */
    int         ranged;     /* takes a range and clip (min-max) */
    cls_params (*params)(const cls_column_stats *s, const cls_scaler_opts *o, int inverse, cls_dtype t);
} cls_scaler_desc;

/* The descriptor of `s`, or NULL for CLS_NONE and values outside the enum. */
const cls_scaler_desc *cls_scaler_get(cls_scaler s);
/* The value of a descriptor of the table (CLS_NONE for NULL). */
cls_scaler cls_scaler_of(const cls_scaler_desc *d);
/* CLS_NONE or a scaler of the table (a value a pipeline or a stats file
 * may hold). */
int cls_scaler_known(cls_scaler s);
/* By stats-file code, or NULL. */
const cls_scaler_desc *cls_scaler_by_code(uint32_t code);

/* The code the kernels take for `s` (its position in the table, from 1), or
 * CLS_KS_IDENT's (after the table's) for CLS_NONE: the identity map of
 * imputation alone; 0 for values outside the enum. */
unsigned cls_scaler_kernel_code(cls_scaler s);
/* The build options that define every code by its name,
 * " -DCLS_KS_MINMAX=1 ... -DCLS_KS_IDENT=6" (program.c). */
const char *cls_scaler_kernel_defines(void);

/* cls_params_with(): the descriptor's params, or the identity for CLS_NONE,
 * an unknown scaler or an empty column (count 0).
 * cls_params_of(): the same with only a min-max range [lo, hi] as options. */
cls_params cls_params_with(const cls_column_stats *s, cls_scaler scaler, const cls_scaler_opts *o, int inverse,
                           cls_dtype dtype);
cls_params cls_params_of(const cls_column_stats *s, cls_scaler scaler, double lo, double hi, int inverse,
                         cls_dtype dtype);

/* The options a pipeline gives, defaults resolved. */
cls_scaler_opts cls_scaler_opts_of(const cls_pipeline *p);
/* The options recorded in fitted statistics. */
cls_scaler_opts cls_scaler_opts_info(const cls_stats_info *info);

/* The decimal exponent j of a column with max |x| = absmax (0 for 0): the
 * smallest integer with absmax / 10^j, stored in `dtype`, below 1 (0.01f
 * gives -1: 0.01f * 100 rounds to 1.0f), and no less than -38 (float32)
 * or -308 (float64), so that 10^-j is finite in `dtype`.
 * cls_decimal_exponent: float64. */
int cls_decimal_exponent_in(double absmax, cls_dtype dtype);
int cls_decimal_exponent(double absmax);

/* The inverse of the standard normal CDF (scipy.stats.norm.ppf), to full
 * double precision, for RobustScaler's unit_variance. */
double cls_norm_ppf(double p);

#endif
