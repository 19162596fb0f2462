/* The cleaning options as Python passes them (the keywords of
 * SimpleImputer._opts() and SigmaClip._opts()) turned into a cls_clean:
 * one parser for clean() (cleaning.c) and for Context.fit_transform(...,
 * clean=) (context.c), which runs the cleaning fused into the scaler. */
#include <string.h>

#include "ext.h"

int clsext_clean_options(PyObject *kwds, cls_clean *c, int *scope)
{
    static char *kwlist[] = {"scope", "impute", "fill_value", "missing_value", "sigma", "sigma_lower",
                             "sigma_upper", "maxiters", "center", "spread", "mode",
                             /* light curves (cls_fit_transform, cls_fit_transform (bins reduced)) */
                             "detrend", "detrend_op", "window", "polyorder", "deriv", "delta", "edge", "cval",
                             "origin", "bin_rows", "bin_stat", "flatten_niters", "flatten_sigma", NULL};
    PyObject *mv = Py_None, *none = PyTuple_New(0);
    int sc = CLS_SCOPE_MATRIX, impute = 0, maxiters = 0, center = 0, spread = 0, mode = 0;
    double fill = 0, sigma = 0, sl = 0, su = 0;
    int detrend = 0, op = 0, edge = 0, origin = 0, bin_stat = 0;
    unsigned window = 0, polyorder = 0, deriv = 0, bin_rows = 0;
    double delta = 0, cval = 0, fsigma = 0;
    unsigned fniters = 0;
    if (!none) return -1;
    if (kwds && !PyDict_Check(kwds)) {
        Py_DECREF(none);
        PyErr_SetString(PyExc_TypeError, "the cleaning options must be a dict");
        return -1;
    }
    int ok = PyArg_ParseTupleAndKeywords(none, kwds, "|$iidOdddiiiiiiIIIdidiIiId", kwlist, &sc, &impute, &fill, &mv,
                                         &sigma, &sl, &su, &maxiters, &center, &spread, &mode, &detrend, &op,
                                         &window, &polyorder, &deriv, &delta, &edge, &cval, &origin, &bin_rows,
                                         &bin_stat, &fniters, &fsigma);
    Py_DECREF(none);
    if (!ok) return -1;
    if (sc < CLS_SCOPE_MATRIX || sc > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "unknown scope");
        return -1;
    }
    memset(c, 0, sizeof *c);
    if (mv != Py_None) {
        c->has_missing_value = 1;
        c->missing_value = PyFloat_AsDouble(mv);
        if (c->missing_value == -1.0 && PyErr_Occurred()) return -1;
    }
    c->impute = (cls_impute)impute;
    c->fill_value = fill;
    c->sigma = sigma;
    c->sigma_lower = sl;
    c->sigma_upper = su;
    c->maxiters = maxiters;
    c->center = (cls_clip_center)center;
    c->spread = (cls_clip_spread)spread;
    c->mode = (cls_clip_mode)mode;
    c->detrend = (cls_detrend)detrend;
    c->detrend_op = (cls_detrend_op)op;
    c->window = window;
    c->polyorder = polyorder;
    c->deriv = deriv;
    c->delta = delta;
    c->edge = (cls_edge)edge;
    c->cval = cval;
    c->origin = origin;
    c->bin_rows = bin_rows;
    c->bin_stat = (cls_bin_stat)bin_stat;
    c->flatten_niters = fniters;
    c->flatten_sigma = fsigma;
    if (scope) *scope = sc;
    return 0;
}
