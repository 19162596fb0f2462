/* The argument checks of every call (pipeline.c, buffer.c, stream.c, the
 * cleaning stage): the context, array shapes and overlaps, the pipeline
 * against the data, the light curves' fields, the cleaning's options, the
 * statistics against the pipeline, and a file's fit-transform whole
 * against its plan of stages. Nothing here touches a device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/job.h"
#include "lightcurve/lightcurve.h"
#include "plan/route.h"

cls_status cls_check_shape(cls_context *ctx, const cls_array *a, const char *what)
{
    if (a->dtype != CLS_F32 && a->dtype != CLS_F64)
        return cls_fail(ctx, CLS_E_ARG, "%s: dtype %d is neither CLS_F32 nor CLS_F64", what, (int)a->dtype);
    if (a->batch == 0 || a->rows == 0 || a->cols == 0)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu has a zero dimension", what, a->batch,
                        a->rows, a->cols);
    /* no machine addresses more than 2^48 bytes; a larger shape is a bug in
     * the caller, not data */
    const size_t limit = (size_t)1 << 48;
    size_t es = a->dtype == CLS_F64 ? 8 : 4, n = a->batch;
    if (n > SIZE_MAX / a->rows || (n *= a->rows) > SIZE_MAX / a->cols || (n *= a->cols) > SIZE_MAX / es)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu overflows size_t", what, a->batch, a->rows,
                        a->cols);
    if (n > limit / es)
        return cls_fail(ctx, CLS_E_ARG, "%s: shape %zu x %zu x %zu is larger than any address space (2^48 bytes)",
                        what, a->batch, a->rows, a->cols);
    return CLS_OK;
}

cls_status cls_check_array(cls_context *ctx, const cls_array *a, const char *what)
{
    if (!a) return cls_fail(ctx, CLS_E_ARG, "%s is NULL", what);
    if (!a->data) return cls_fail(ctx, CLS_E_ARG, "%s: data is NULL", what);
    return cls_check_shape(ctx, a, what);
}

size_t cls_array_bytes(const cls_array *a)
{
    return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4);
}

static int overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const char *x = a, *y = b;
    return x < y + nb && y < x + na;
}

cls_status cls_check_io(cls_context *ctx, const cls_array *in, const cls_array *out)
{
    cls_status st = cls_check_array(ctx, in, "input");
    if (st == CLS_OK) st = cls_check_array(ctx, out, "output");
    if (st != CLS_OK) return st;
    if (in->dtype != out->dtype || in->batch != out->batch || in->rows != out->rows || in->cols != out->cols)
        return cls_fail(ctx, CLS_E_ARG, "output %zu x %zu x %zu %s differs from input %zu x %zu x %zu %s",
                        out->batch, out->rows, out->cols, out->dtype == CLS_F64 ? "float64" : "float32",
                        in->batch, in->rows, in->cols, in->dtype == CLS_F64 ? "float64" : "float32");
    if (in->data != out->data && overlap(in->data, cls_array_bytes(in), out->data, cls_array_bytes(out)))
        return cls_fail(ctx, CLS_E_ARG, "input and output overlap without being the same array");
    return CLS_OK;
}

cls_status cls_check_pipeline(cls_context *ctx, const cls_pipeline *p, const cls_array *x,
                              const cls_array *out)
{
    if (!p) return cls_fail(ctx, CLS_E_ARG, "pipeline is NULL");
    const cls_scaler_desc *d = cls_scaler_get(p->scaler);
    if (!d && p->scaler != CLS_NONE)
        return cls_fail(ctx, CLS_E_ARG, "pipeline: unknown scaler %d", (int)p->scaler);
    if ((unsigned)p->scope > CLS_SCOPE_BATCH)
        return cls_fail(ctx, CLS_E_ARG, "pipeline: unknown scope %d", (int)p->scope);
    if (d && d->ranged && !(p->lo == 0 && p->hi == 0)
        && (!isfinite(p->lo) || !isfinite(p->hi) || !(p->lo < p->hi)))
        return cls_fail(ctx, CLS_E_ARG, "pipeline: min-max range [%g, %g] must have lo < hi, both finite",
                        p->lo, p->hi);
    if (p->clip && !(d && d->ranged))
        return cls_fail(ctx, CLS_E_ARG, "pipeline: clip applies to the min-max scaler only");
    if (!(p->qmin == 0 && p->qmax == 0) &&
        !(p->qmin >= 0 && p->qmin <= p->qmax && p->qmax <= 100))
        return cls_fail(ctx, CLS_E_ARG, "pipeline: quantile range [%g, %g] must have 0 <= qmin <= qmax <= 100",
                        p->qmin, p->qmax);
    /* the descriptor says it (the route asks the same; asked here, a call's
     * pipeline does not come back into route.c) */
    if ((p->no_centering || p->no_scaling || p->unit_variance || p->qmin != 0 || p->qmax != 0) &&
        !(d && (d->needs & CLS_NEED_QUANTILES)))
        return cls_fail(ctx, CLS_E_ARG, "pipeline: the quantile range, no_centering, no_scaling and "
                        "unit_variance apply to the robust scaler only");
    const cls_array *f = p->factors;
    if (!f) return CLS_OK;
    cls_status st = cls_check_array(ctx, f, "factors");
    if (st != CLS_OK) return st;
    if (f->dtype != x->dtype)
        return cls_fail(ctx, CLS_E_ARG, "factors are %s but the data is %s",
                        f->dtype == CLS_F64 ? "float64" : "float32", x->dtype == CLS_F64 ? "float64" : "float32");
    if ((f->batch != 1 && f->batch != x->batch) || (f->rows != 1 && f->rows != x->rows)
        || (f->cols != 1 && f->cols != x->cols))
        return cls_fail(ctx, CLS_E_ARG,
                        "factors of shape %zu x %zu x %zu do not broadcast against data %zu x %zu x %zu "
                        "(each dimension must equal the data's or be 1)",
                        f->batch, f->rows, f->cols, x->batch, x->rows, x->cols);
    if (out && overlap(f->data, cls_array_bytes(f), out->data, cls_array_bytes(out)))
        return cls_fail(ctx, CLS_E_ARG, "factors overlap the output");
    return CLS_OK;
}

cls_status cls_check_curves(cls_context *ctx, const cls_clean *c, uint64_t Rg, int reduce)
{
    if ((unsigned)c->detrend > CLS_DETREND_SAVGOL)
        return cls_fail(ctx, CLS_E_ARG, "light curves: unknown detrend %d", (int)c->detrend);
    if ((unsigned)c->detrend_op > CLS_DETREND_TREND)
        return cls_fail(ctx, CLS_E_ARG, "light curves: unknown detrend_op %d", (int)c->detrend_op);
    if ((unsigned)c->edge > CLS_EDGE_INTERP)
        return cls_fail(ctx, CLS_E_ARG, "light curves: unknown edge mode %d", (int)c->edge);
    if ((unsigned)c->bin_stat > CLS_BIN_COUNT)
        return cls_fail(ctx, CLS_E_ARG, "light curves: unknown bin_stat %d", (int)c->bin_stat);
    if (c->detrend == CLS_DETREND_NONE) {
        if (c->window || c->polyorder || c->deriv || c->edge || c->origin || c->detrend_op || c->delta != 0 ||
            c->cval != 0)
            return cls_fail(ctx, CLS_E_ARG, "light curves: window, polyorder, deriv, delta, edge, cval, origin "
                            "and detrend_op need a detrend (CLS_DETREND_MEAN or CLS_DETREND_SAVGOL)");
    } else {
        if (c->window < 1 || c->window > CLS_LC_WMAX)
            return cls_fail(ctx, CLS_E_ARG, "light curves: window %u rows: must be 1 to %u", c->window,
                            CLS_LC_WMAX);
        if (!isfinite(c->cval)) return cls_fail(ctx, CLS_E_ARG, "light curves: cval %g is not finite", c->cval);
        if (c->detrend == CLS_DETREND_MEAN) {
            long h = (long)(c->window / 2), hi = (long)((c->window - 1) / 2);
            if (c->polyorder || c->deriv || c->delta != 0)
                return cls_fail(ctx, CLS_E_ARG, "light curves: polyorder, deriv and delta are for the "
                                "Savitzky-Golay trend");
            if (c->edge == CLS_EDGE_INTERP)
                return cls_fail(ctx, CLS_E_ARG, "light curves: the interp edge is for the Savitzky-Golay trend "
                                "(the moving average takes reflect, mirror, nearest, constant or wrap)");
            if (c->origin < -h || c->origin > hi)
                return cls_fail(ctx, CLS_E_ARG, "light curves: origin %d outside [%ld, %ld] for a window of %u",
                                c->origin, -h, hi, c->window);
        } else {
            if (c->polyorder >= c->window)
                return cls_fail(ctx, CLS_E_ARG, "light curves: polyorder %u must be less than the window %u",
                                c->polyorder, c->window);
            if (c->polyorder > CLS_LC_PMAX)
                return cls_fail(ctx, CLS_E_ARG, "light curves: polyorder %u: at most %d", c->polyorder,
                                CLS_LC_PMAX);
            if (c->origin) return cls_fail(ctx, CLS_E_ARG, "light curves: origin is for the moving average");
            if (!(c->delta >= 0) || !isfinite(c->delta))
                return cls_fail(ctx, CLS_E_ARG, "light curves: delta %g must be > 0 (0: 1)", c->delta);
            int interp = c->edge == CLS_EDGE_INTERP || c->edge == CLS_EDGE_DEFAULT;
            if (interp && c->window > Rg)
                return cls_fail(ctx, CLS_E_ARG, "light curves: the interp edge needs window (%u) <= rows (%llu) "
                                "(scipy's rule); take another edge mode", c->window, (unsigned long long)Rg);
            if (c->edge == CLS_EDGE_REFLECT)
                return cls_fail(ctx, CLS_E_ARG, "light curves: savgol_filter has no 'reflect' edge (mirror, "
                                "nearest, constant, wrap or interp)");
        }
    }
    if (c->flatten_niters || c->flatten_sigma != 0) {
        if (c->detrend == CLS_DETREND_NONE)
            return cls_fail(ctx, CLS_E_ARG, "light curves: flatten_niters and flatten_sigma need a detrend "
                            "(CLS_DETREND_SAVGOL as lightkurve's flatten, or CLS_DETREND_MEAN)");
        if (!(c->flatten_sigma >= 0) || !isfinite(c->flatten_sigma))
            return cls_fail(ctx, CLS_E_ARG, "light curves: flatten_sigma %g must be > 0 (0: 3)", c->flatten_sigma);
        if (c->deriv)
            return cls_fail(ctx, CLS_E_ARG, "light curves: flatten clips x - trend: the trend itself (deriv 0), "
                            "not its derivative %u", c->deriv);
    }
    if (c->bin_stat != CLS_BIN_NONE && !c->bin_rows)
        return cls_fail(ctx, CLS_E_ARG, "light curves: bin_stat needs bin_rows > 0");
    if (reduce) {
        if (!c->bin_rows)
            return cls_fail(ctx, CLS_E_ARG, "bins reduced: bin_rows must be > 0");
        if (c->bin_stat != CLS_BIN_MEAN && c->bin_stat != CLS_BIN_MEDIAN && c->bin_stat != CLS_BIN_SUM &&
            c->bin_stat != CLS_BIN_COUNT)
            return cls_fail(ctx, CLS_E_ARG, "bins reduced: bin_stat must be mean, median, sum or count "
                            "(the boundary smooths: cls_fit_transform)");
    } else if (c->bin_rows && c->bin_stat != CLS_BIN_MEAN && c->bin_stat != CLS_BIN_MEDIAN &&
               c->bin_stat != CLS_BIN_BOUNDARY) {
        return cls_fail(ctx, CLS_E_ARG, "light curves: smoothing by bins takes the mean, median or boundary "
                        "(sum and count reduce the bins to a row each)");
    }
    if (c->bin_rows > CLS_LC_LOOP_MAX)
        return cls_fail(ctx, CLS_E_ARG, "light curves: bins of %u rows: at most %u", c->bin_rows, CLS_LC_LOOP_MAX);
    return CLS_OK;
}

cls_status cls_check_clean_opts(cls_context *ctx, const cls_clean *c, int alone)
{
    if ((c->mask_out || c->mean_out || c->m2_out) && !alone)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: mask_out, mean_out and m2_out are for cleaning alone (no scaler, factors or fitted statistics) "
                        "(this call writes its cleaned values, whose NaN are the mask, and fits their statistics)");
    if (c->has_missing_value && isnan(c->missing_value))
        return cls_fail(ctx, CLS_E_ARG, "cleaning: missing_value is NaN (NaN is always missing; leave it unset)");
    if ((unsigned)c->impute > CLS_IMPUTE_CONSTANT)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: unknown imputation %d", (int)c->impute);
    if (c->impute == CLS_IMPUTE_CONSTANT && !isfinite(c->fill_value))
        return cls_fail(ctx, CLS_E_ARG, "cleaning: the constant fill value %g is not finite", c->fill_value);
    if (!(c->sigma >= 0) || !(c->sigma_lower >= 0) || !(c->sigma_upper >= 0) || !isfinite(c->sigma) ||
        !isfinite(c->sigma_lower) || !isfinite(c->sigma_upper))
        return cls_fail(ctx, CLS_E_ARG, "cleaning: sigma %g, sigma_lower %g, sigma_upper %g: each must be a "
                        "finite number >= 0", c->sigma, c->sigma_lower, c->sigma_upper);
    if (c->sigma > 0 || c->sigma_lower > 0 || c->sigma_upper > 0) {
        double slo = c->sigma_lower > 0 ? c->sigma_lower : c->sigma, shi = c->sigma_upper > 0 ? c->sigma_upper : c->sigma;
        if (!(slo > 0) || !(shi > 0))
            return cls_fail(ctx, CLS_E_ARG, "cleaning: sigma_lower %g and sigma_upper %g must be > 0 (set sigma "
                            "or both)", slo, shi);
        if ((unsigned)c->center > CLS_CENTER_MEAN || (unsigned)c->spread > CLS_SPREAD_MAD_STD ||
            (unsigned)c->mode > CLS_CLIP_KEEP)
            return cls_fail(ctx, CLS_E_ARG, "cleaning: unknown clip centre, spread or mode");
    }
    if (cls_lc_active(c) && !alone)
        return cls_fail(ctx, CLS_E_UNSUPPORTED, "light curves (detrend, bins) run on whole series: not in the "
                        "cleaning passes over a series larger than a stream buffer, nor with a combine hook "
                        "(cls_mpi_fit_transform runs them per matrix, each rank its whole matrices)");
    if (c->mode == CLS_CLIP_KEEP && !alone)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: CLS_CLIP_KEEP is for cleaning alone (it writes the "
                        "values as they were; this call scales or combines cleaned values)");
    if (c->mode == CLS_CLIP_KEEP && c->impute != CLS_IMPUTE_NONE)
        return cls_fail(ctx, CLS_E_ARG, "cleaning: CLS_CLIP_KEEP writes every value as it was read: no "
                        "imputation (impute must be CLS_IMPUTE_NONE)");
    return CLS_OK;
}

cls_status cls_check_file_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *shape,
                                        uint64_t Rg, int reduce, int clean_alone, int halo)
{
    cls_status st = cls_check_pipeline(ctx, p, shape, NULL);
    if (st == CLS_OK && p->inverse)
        st = cls_fail(ctx, CLS_E_ARG, "cls_fit_transform: inverse needs fitted statistics; use cls_transform");
    const cls_clean *c = p->clean;
    if (st != CLS_OK || !c) return st;
    if (cls_lc_active(c)) st = cls_check_curves(ctx, c, Rg, reduce);
    if (st == CLS_OK && reduce && c->mask_out)
        st = cls_fail(ctx, CLS_E_ARG, "bins reduced: no mask_out (the rows change; cls_fit_transform writes the "
                      "mask)");
    /* flatten's clip of x - trend takes its statistics over the whole
     * series, which a block and its halo do not hold */
    if (st == CLS_OK && halo && c->flatten_niters)
        st = cls_fail(ctx, CLS_E_UNSUPPORTED, "light curves: flatten (flatten_niters %u) clips x - trend with "
                      "statistics over the whole series, and a series of %llu rows x %zu columns%s is larger than "
                      "a stream buffer: give the stream larger buffers (cls_stream_opts's buffer_bytes, "
                      "$CLSCALE_STREAM_BUFFER), flatten per matrix, read the data into memory, or fit once (the "
                      "detrend without flatten_niters streams in blocks)",
                      c->flatten_niters, (unsigned long long)Rg, shape->cols,
                      p->scope == CLS_SCOPE_BATCH ? " (batch scope)" : "");
    cls_clean plain;
    if (st == CLS_OK) st = cls_check_clean_opts(ctx, cls_lc_strip(c, &plain), clean_alone);
    return st;
}

cls_status cls_check_fit_transform(cls_context *ctx, const cls_pipeline *rest, const cls_clean *curves,
                                   uint64_t Rg, const cls_array *in, const cls_array *out)
{
    cls_status st = curves ? cls_check_curves(ctx, curves, Rg, 0) : CLS_OK;
    if (st == CLS_OK) st = cls_check_io(ctx, in, out);
    if (st == CLS_OK) st = cls_check_pipeline(ctx, rest, in, out);
    return st;
}

cls_status cls_check_stats(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_array *in)
{
    if (p->scaler != CLS_NONE) {
        if (!s) return cls_fail(ctx, CLS_E_ARG, "cls_transform: the scaler needs fitted statistics (s is NULL)");
        size_t groups = p->scope == CLS_SCOPE_MATRIX ? in->batch : 1;
        if (s->info.scope != p->scope)
            return cls_fail(ctx, CLS_E_ARG, "statistics were fitted with scope %s, the pipeline asks for %s",
                            s->info.scope == CLS_SCOPE_MATRIX ? "matrix" : "batch",
                            p->scope == CLS_SCOPE_MATRIX ? "matrix" : "batch");
        if (s->info.cols != in->cols || s->info.groups != groups)
            return cls_fail(ctx, CLS_E_ARG,
                            "statistics of %zu group(s) x %zu columns do not fit data %zu x %zu x %zu (scope %s "
                            "needs %zu group(s) x %zu columns)",
                            s->info.groups, s->info.cols, in->batch, in->rows, in->cols,
                            p->scope == CLS_SCOPE_MATRIX ? "matrix" : "batch", groups, in->cols);
        const cls_scaler_desc *want = cls_scaler_get(p->scaler), *had = cls_scaler_get(s->info.scaler);
        if ((want->needs & CLS_NEED_QUANTILES) && !s->info.has_quantiles)
            return cls_fail(ctx, CLS_E_ARG,
                            "%s needs the median and a quantile range, but these statistics were fitted for %s "
                            "without them; fit with CLS_ROBUST",
                            want->name, had ? had->name : "no scaler");
        if ((want->needs & CLS_NEED_MOMENTS) && !s->info.has_moments)
            return cls_fail(ctx, CLS_E_ARG,
                            "%s needs means and variances, but these statistics were fitted for %s "
                            "(min/max only); fit with CLS_ZSCORE or CLS_NONE",
                            want->name, had ? had->name : "no scaler");
    }
    return CLS_OK;
}

