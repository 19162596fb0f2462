/* Module functions for the cleaning stage and exact quantiles: clean (the
 * estimators SimpleImputer and SigmaClip, through cls_clean_data) and
 * quantiles (cls_quantiles, timed in C for the benchmark). Each runs on a
 * Context's cls_context with the GIL released (clsext_context_call). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ext.h"

/* ---- clean ---- */

typedef struct {
    cls_clean c;
    cls_scope scope;
    cls_array x, y;
} clean_call;

static cls_status run_clean(cls_context *ctx, void *arg)
{
    clean_call *k = arg;
    return cls_clean_data(ctx, &k->c, k->scope, &k->x, &k->y);
}

PyObject *clsext_clean(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "x", "out", "scope", "impute", "fill_value", "missing_value", "sigma",
                             "sigma_lower", "sigma_upper", "maxiters", "center", "spread", "mode", NULL};
    PyObject *ctx, *x, *out, *mv = Py_None;
    int scope = CLS_SCOPE_MATRIX, impute = 0, maxiters = 0, center = 0, spread = 0, mode = 0;
    double fill = 0, sigma = 0, sl = 0, su = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|$iidOdddiiii", kwlist, &ctx, &x, &out, &scope, &impute, &fill,
                                     &mv, &sigma, &sl, &su, &maxiters, &center, &spread, &mode))
        return NULL;
    if (scope < CLS_SCOPE_MATRIX || scope > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "unknown scope");
        return NULL;
    }
    clean_call k;
    memset(&k, 0, sizeof k);
    k.scope = (cls_scope)scope;
    if (clsext_data_array(x, "x", 0, &k.x) < 0 || clsext_data_array(out, "out", 1, &k.y) < 0) return NULL;
    cls_clean *c = &k.c;
    if (mv != Py_None) {
        c->has_missing_value = 1;
        c->missing_value = PyFloat_AsDouble(mv);
        if (c->missing_value == -1.0 && PyErr_Occurred()) return NULL;
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
    npy_intp dims[2] = {scope == CLS_SCOPE_BATCH ? 1 : (npy_intp)k.x.batch, (npy_intp)k.x.cols};
    PyObject *am = PyArray_SimpleNew(2, dims, NPY_UINT64), *ac = PyArray_SimpleNew(2, dims, NPY_UINT64),
             *af = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    char *msg = malloc(CLSEXT_MSG_LEN);
    PyObject *res = NULL;
    if (!am || !ac || !af || !msg) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    c->missing_out = PyArray_DATA((PyArrayObject *)am);
    c->clipped_out = PyArray_DATA((PyArrayObject *)ac);
    c->fill_out = PyArray_DATA((PyArrayObject *)af);
    unsigned iters = 0;
    c->iterations_out = &iters;
    cls_status st = CLS_OK;
    if (clsext_context_call(ctx, run_clean, &k, &st, msg) < 0) goto done;
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        goto done;
    }
    res = Py_BuildValue("(OOOI)", am, ac, af, iters);
done:
    Py_XDECREF(am);
    Py_XDECREF(ac);
    Py_XDECREF(af);
    free(msg);
    return res;
}

/* ---- quantiles ---- */

typedef struct {
    cls_array x;
    cls_scope scope;
    double q[8];
    size_t nq;
    double *out, *times;
    Py_ssize_t repeats;
} quantile_call;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static cls_status run_quantiles(cls_context *ctx, void *arg)
{
    quantile_call *k = arg;
    cls_status st = CLS_OK;
    for (Py_ssize_t r = 0; r < k->repeats && st == CLS_OK; r++) {
        double t0 = now();
        st = cls_quantiles(ctx, &k->x, k->scope, k->q, k->nq, k->out);
        k->times[r] = now() - t0;
    }
    return st;
}

PyObject *clsext_quantiles(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "x", "q", "scope", "repeats", NULL};
    PyObject *ctx, *xo, *qo;
    int scope = CLS_SCOPE_MATRIX;
    quantile_call k;
    memset(&k, 0, sizeof k);
    k.repeats = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|$in", kwlist, &ctx, &xo, &qo, &scope, &k.repeats))
        return NULL;
    if (k.repeats < 1 || scope < CLS_SCOPE_MATRIX || scope > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "quantiles: repeats must be >= 1 and scope SCOPE_MATRIX or SCOPE_BATCH");
        return NULL;
    }
    k.scope = (cls_scope)scope;
    if (clsext_data_array(xo, "x", 0, &k.x) < 0) return NULL;
    PyObject *seq = PySequence_Fast(qo, "quantiles: q must be a sequence of floats");
    if (!seq) return NULL;
    Py_ssize_t nq = PySequence_Fast_GET_SIZE(seq);
    if (nq < 1 || nq > 8) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "quantiles: 1 to 8 quantiles per call");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nq; i++) k.q[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (PyErr_Occurred()) return NULL;
    k.nq = (size_t)nq;
    npy_intp dims[3] = {scope == CLS_SCOPE_BATCH ? 1 : (npy_intp)k.x.batch, nq, (npy_intp)k.x.cols};
    PyObject *out = PyArray_SimpleNew(3, dims, NPY_FLOAT64), *res = NULL, *list = NULL;
    k.times = PyMem_Calloc((size_t)k.repeats, sizeof *k.times);
    char *msg = malloc(CLSEXT_MSG_LEN);
    if (!out || !k.times || !msg) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    k.out = PyArray_DATA((PyArrayObject *)out);
    cls_status st = CLS_OK;
    if (clsext_context_call(ctx, run_quantiles, &k, &st, msg) < 0) goto done;
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        goto done;
    }
    list = PyList_New(k.repeats);
    for (Py_ssize_t i = 0; list && i < k.repeats; i++) {
        PyObject *f = PyFloat_FromDouble(k.times[i]);
        if (!f) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, f);
    }
    if (list) res = Py_BuildValue("(OO)", out, list);
done:
    Py_XDECREF(list);
    Py_XDECREF(out);
    PyMem_Free(k.times);
    free(msg);
    return res;
}
