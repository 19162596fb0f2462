/* Module functions for the cleaning stage and exact quantiles: clean (the
 * estimators SimpleImputer and SigmaClip, through cls_fit_transform) and
 * quantiles (cls_quantiles, timed in C for the benchmark), medians
 * (cls_medians: clscale.nanmedian) and describe (cls_describe:
 * clscale.describe). Each runs on a
 * Context's cls_context with the GIL released (clsext_context_call). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ext.h"

/* ---- several processes' hooks ---- */

/* combine=: a Python callable that several processes (mpi4py ranks) pass
 * so that their counting passes add up (clscale.h's cls_combine). It is
 * called with the GIL after each pass as combine(error, counts): error None
 * or this process's failure ("STATUS: message"), counts None or a writable
 * uint64 array to sum in place over the processes; it returns normally
 * when every process succeeded and raises otherwise (on every process).
 * Its exception is kept and raised by quantiles(). */
typedef struct {
    PyObject    *fn, *stats_fn;  /* stats_fn: clean's combine_stats, or NULL */
    cls_context *ctx;
    int          raised;
    PyObject    *type, *value, *tb;
} py_combine;

static cls_status call_combine(void *user, cls_status local, uint64_t *counts, size_t n)
{
    py_combine *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *why = NULL, *arr = NULL, *r = NULL;
    if (local != CLS_OK) why = PyUnicode_FromFormat("%s: %s", cls_status_str(local), cls_last_error(c->ctx));
    else {
        why = Py_None;
        Py_INCREF(why);
    }
    if (local == CLS_OK && n) {
        npy_intp d = (npy_intp)n;
        arr = PyArray_SimpleNewFromData(1, &d, NPY_UINT64, counts);
    } else {
        arr = Py_None;
        Py_INCREF(arr);
    }
    if (why && arr) r = PyObject_CallFunctionObjArgs(c->fn, why, arr, NULL);
    cls_status st = CLS_OK;
    if (!r) {
        if (!c->raised) PyErr_Fetch(&c->type, &c->value, &c->tb);
        else PyErr_Clear();
        c->raised = 1;
        st = local != CLS_OK ? local : CLS_E_DEVICE;
    } else if (local != CLS_OK) {
        st = local;  /* a hook that did not raise on a failure: the failure stands */
    }
    Py_XDECREF(r);
    Py_XDECREF(arr);
    Py_XDECREF(why);
    PyGILState_Release(g);
    return st;
}

/* combine_stats=: the cleaning's second hook (cls_combine's stats), a
 * Python callable called with the GIL after each moments pass as
 * combine_stats(error, cols): error as combine's, cols None or a writable
 * uint8 array of the n cls_column_stats (80 bytes each: the layout of
 * clscale._mpi.COLUMN) to replace by their merge over the processes. */
static cls_status call_combine_stats(void *user, cls_status local, cls_column_stats *cols, size_t n)
{
    py_combine *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *why = NULL, *arr = NULL, *r = NULL;
    if (local != CLS_OK) why = PyUnicode_FromFormat("%s: %s", cls_status_str(local), cls_last_error(c->ctx));
    else why = Py_NewRef(Py_None);
    if (local == CLS_OK && n && cols) {
        npy_intp d = (npy_intp)(n * sizeof *cols);
        arr = PyArray_SimpleNewFromData(1, &d, NPY_UINT8, cols);
    } else {
        arr = Py_NewRef(Py_None);
    }
    if (why && arr) r = PyObject_CallFunctionObjArgs(c->stats_fn, why, arr, NULL);
    cls_status st = CLS_OK;
    if (!r) {
        if (!c->raised) PyErr_Fetch(&c->type, &c->value, &c->tb);
        else PyErr_Clear();
        c->raised = 1;
        st = local != CLS_OK ? local : CLS_E_DEVICE;
    } else if (local != CLS_OK) {
        st = local;
    }
    Py_XDECREF(r);
    Py_XDECREF(arr);
    Py_XDECREF(why);
    PyGILState_Release(g);
    return st;
}

/* 1 when obj is a float32/float64 array of 2 or 3 dimensions with no rows
 * (batch or rows 0) but columns: x gets its shape, data NULL. */
static int empty_part(PyObject *obj, cls_array *x)
{
    if (!PyArray_Check(obj)) return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    int nd = PyArray_NDIM(a), t = PyArray_TYPE(a);
    if ((nd != 2 && nd != 3) || (t != NPY_FLOAT32 && t != NPY_FLOAT64) || PyArray_SIZE(a) != 0) return 0;
    npy_intp *d = PyArray_DIMS(a);
    if (d[nd - 1] == 0) return 0;
    x->data = NULL;
    x->dtype = t == NPY_FLOAT64 ? CLS_F64 : CLS_F32;
    x->batch = nd == 3 ? (size_t)d[0] : 1;
    x->rows = (size_t)d[nd - 2];
    x->cols = (size_t)d[nd - 1];
    return 1;
}

/* ---- clean ---- */

typedef struct {
    cls_clean   c;
    cls_scope   scope;
    cls_array   x, y;
    py_combine *comb;
} clean_call;

static cls_status run_clean(cls_context *ctx, void *arg)
{
    clean_call *k = arg;
    /* a process without rows: out of the same empty shape (the library's rule) */
    cls_array *y = k->y.data || (k->comb && !k->x.data) ? &k->y : NULL;
    if (!k->comb) return cls_fit_transform(ctx, &(cls_pipeline){.scope = k->scope, .clean = &k->c}, &k->x, y, NULL);
    k->comb->ctx = ctx;
    cls_combine h = {call_combine, k->comb, call_combine_stats};
    return cls_fit_transform(ctx, &(cls_pipeline){.scope = k->scope, .clean = &k->c, .combine = &h}, &k->x, y, NULL);
}

/* clean's combine= and combine_stats= (both or neither) taken out of the
 * keywords, which then hold the cleaning options alone (a new dict). */
static PyObject *take_hooks(PyObject *kwds, py_combine *comb, int *set)
{
    *set = 0;
    if (!kwds) return NULL;
    PyObject *opts = PyDict_Copy(kwds);
    if (!opts) return NULL;
    PyObject *fn = PyDict_GetItemString(opts, "combine"), *sfn = PyDict_GetItemString(opts, "combine_stats");
    if ((fn && fn != Py_None) || (sfn && sfn != Py_None)) {
        if (!fn || !sfn || !PyCallable_Check(fn) || !PyCallable_Check(sfn)) {
            PyErr_SetString(PyExc_ValueError, "clean: combine and combine_stats must both be callables");
            Py_DECREF(opts);
            return NULL;
        }
        comb->fn = fn;  /* kept alive by kwds, the caller's */
        comb->stats_fn = sfn;
        *set = 1;
    }
    if ((fn && PyDict_DelItemString(opts, "combine") < 0) || (sfn && PyDict_DelItemString(opts, "combine_stats") < 0)) {
        Py_DECREF(opts);
        return NULL;
    }
    return opts;
}

/* mask: a writable C-contiguous bool or uint8 array of x's size (the
 * library writes 0 or 1, valid bools) */
static int mask_array(PyObject *obj, const cls_array *x, uint8_t **out)
{
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "mask must be a numpy array");
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int t = PyArray_TYPE(a);
    if ((t != NPY_BOOL && t != NPY_UINT8) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a)) {
        PyErr_SetString(PyExc_ValueError, "mask must be a writable C-contiguous bool or uint8 array");
        return -1;
    }
    if ((size_t)PyArray_SIZE(a) != x->batch * x->rows * x->cols) {
        PyErr_SetString(PyExc_ValueError, "mask must have as many elements as x");
        return -1;
    }
    *out = PyArray_DATA(a);
    return 0;
}

PyObject *clsext_clean(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    PyObject *ctx, *x, *out, *mask = Py_None;
    int moments = 0, counts = 1, bounds = 1;
    /* counts, bounds (after moments): the per-column missing, clipped and
     * fill arrays, and the bounds; a caller without use for them (sigma_clip
     * without return_bounds) passes False: None in their places, 40 MB
     * neither allocated nor written on a million columns */
    if (!PyArg_ParseTuple(args, "OOO|Oppp:clean", &ctx, &x, &out, &mask, &moments, &counts, &bounds)) return NULL;
    clean_call k;
    memset(&k, 0, sizeof k);
    py_combine comb;
    memset(&comb, 0, sizeof comb);
    int scope = CLS_SCOPE_MATRIX, hooks = 0;
    PyObject *opts = take_hooks(kwds, &comb, &hooks);
    if (kwds && !opts) return NULL;
    int bad = clsext_clean_options(opts, &k.c, &scope) < 0;
    Py_XDECREF(opts);
    if (bad) return NULL;
    k.scope = (cls_scope)scope;
    if (hooks) k.comb = &comb;
    /* out None: the mask and the per-column outputs alone; with the hooks
     * a process without rows (x empty, out None) still takes part */
    if (hooks && scope == CLS_SCOPE_BATCH && out == Py_None && mask == Py_None && empty_part(x, &k.x)) {
        /* no rows: counts nothing, writes nothing, still combines */
        k.y = k.x;
    } else if (clsext_data_array(x, "x", 0, &k.x) < 0) return NULL;
    if (mask != Py_None && mask_array(mask, &k.x, &k.c.mask_out) < 0) return NULL;
    if (out != Py_None && clsext_data_array(out, "out", 1, &k.y) < 0) return NULL;
    cls_clean *c = &k.c;
    npy_intp dims[2] = {scope == CLS_SCOPE_BATCH ? 1 : (npy_intp)k.x.batch, (npy_intp)k.x.cols};
    PyObject *am = counts ? PyArray_SimpleNew(2, dims, NPY_UINT64) : Py_NewRef(Py_None),
             *ac = counts ? PyArray_SimpleNew(2, dims, NPY_UINT64) : Py_NewRef(Py_None),
             *af = counts ? PyArray_SimpleNew(2, dims, NPY_FLOAT64) : Py_NewRef(Py_None),
             *alo = bounds ? PyArray_SimpleNew(2, dims, NPY_FLOAT64) : Py_NewRef(Py_None),
             *ahi = bounds ? PyArray_SimpleNew(2, dims, NPY_FLOAT64) : Py_NewRef(Py_None);
    /* the kept values' moments only when asked: the one-pass kernel then
     * sums them in an extra pass over the rows */
    PyObject *amean = moments ? PyArray_SimpleNew(2, dims, NPY_FLOAT64) : Py_NewRef(Py_None),
             *am2 = moments ? PyArray_SimpleNew(2, dims, NPY_FLOAT64) : Py_NewRef(Py_None);
    char *msg = malloc(CLSEXT_MSG_LEN);
    PyObject *res = NULL;
    if (!am || !ac || !af || !alo || !ahi || !amean || !am2 || !msg) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    if (counts) {
        c->missing_out = PyArray_DATA((PyArrayObject *)am);
        c->clipped_out = PyArray_DATA((PyArrayObject *)ac);
        c->fill_out = PyArray_DATA((PyArrayObject *)af);
    }
    if (bounds) {
        c->lower_out = PyArray_DATA((PyArrayObject *)alo);
        c->upper_out = PyArray_DATA((PyArrayObject *)ahi);
    }
    if (moments) {
        c->mean_out = PyArray_DATA((PyArrayObject *)amean);
        c->m2_out = PyArray_DATA((PyArrayObject *)am2);
    }
    unsigned iters = 0;
    c->iterations_out = &iters;
    cls_status st = CLS_OK;
    if (clsext_context_call(ctx, run_clean, &k, &st, msg) < 0) goto done;
    if (comb.raised) {
        PyErr_Restore(comb.type, comb.value, comb.tb);
        goto done;
    }
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        goto done;
    }
    res = Py_BuildValue("(OOOIOOOO)", am, ac, af, iters, alo, ahi, amean, am2);
done:
    Py_XDECREF(am);
    Py_XDECREF(ac);
    Py_XDECREF(af);
    Py_XDECREF(alo);
    Py_XDECREF(ahi);
    Py_XDECREF(amean);
    Py_XDECREF(am2);
    free(msg);
    return res;
}

/* ---- bin_data ---- */

static cls_status run_bin(cls_context *ctx, void *arg)
{
    clean_call *k = arg;
    return cls_fit_transform(ctx, &(cls_pipeline){.scope = k->scope, .clean = &k->c}, &k->x, &k->y, NULL);
}

PyObject *clsext_bin_data(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    PyObject *ctx, *x, *out;
    if (!PyArg_ParseTuple(args, "OOO:bin_data", &ctx, &x, &out)) return NULL;
    clean_call k;
    memset(&k, 0, sizeof k);
    int scope = CLS_SCOPE_MATRIX;
    if (clsext_clean_options(kwds, &k.c, &scope) < 0) return NULL;
    k.scope = (cls_scope)scope;
    k.c.bin_reduce = 1;
    if (clsext_data_array(x, "x", 0, &k.x) < 0 || clsext_data_array(out, "out", 1, &k.y) < 0) return NULL;
    char msg[CLSEXT_MSG_LEN];
    cls_status st = CLS_OK;
    if (clsext_context_call(ctx, run_bin, &k, &st, msg) < 0) return NULL;
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- quantiles ---- */

typedef struct {
    cls_array x;
    cls_scope scope;
    double q[8];
    size_t nq;
    double *out, *times;
    Py_ssize_t repeats;
    py_combine *comb;
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
        if (k->comb) {
            k->comb->ctx = ctx;
            cls_combine h = {call_combine, k->comb, NULL};
            st = cls_quantiles(ctx, &(cls_pipeline){.scope = k->scope, .combine = &h}, &k->x, k->q, k->nq, k->out);
        } else {
            st = cls_quantiles(ctx, &(cls_pipeline){.scope = k->scope}, &k->x, k->q, k->nq, k->out);
        }
        k->times[r] = now() - t0;
    }
    return st;
}

PyObject *clsext_quantiles(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "x", "q", "scope", "repeats", "combine", NULL};
    PyObject *ctx, *xo, *qo, *combine = Py_None;
    py_combine comb;
    memset(&comb, 0, sizeof comb);
    int scope = CLS_SCOPE_MATRIX;
    quantile_call k;
    memset(&k, 0, sizeof k);
    k.repeats = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|$inO", kwlist, &ctx, &xo, &qo, &scope, &k.repeats, &combine))
        return NULL;
    if (combine != Py_None) {
        if (!PyCallable_Check(combine) || k.repeats != 1) {
            PyErr_SetString(PyExc_ValueError, "quantiles: combine must be callable (and repeats 1)");
            return NULL;
        }
        comb.fn = combine;
        k.comb = &comb;
    }
    if (k.repeats < 1 || scope < CLS_SCOPE_MATRIX || scope > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "quantiles: repeats must be >= 1 and scope SCOPE_MATRIX or SCOPE_BATCH");
        return NULL;
    }
    k.scope = (cls_scope)scope;
    if (k.comb && empty_part(xo, &k.x)) {
        /* this process has no rows: it counts nothing and still combines */
    } else if (clsext_data_array(xo, "x", 0, &k.x) < 0) return NULL;
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
    if (comb.raised) {
        PyErr_Restore(comb.type, comb.value, comb.tb);
        goto done;
    }
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

/* ---- medians ---- */

/* The data of a per-group call (medians, describe) and its scope, checked. */
static int group_args(PyObject *xo, int scope, const char *fn, cls_array *x)
{
    if (scope != CLS_SCOPE_MATRIX && scope != CLS_SCOPE_BATCH) {
        PyErr_Format(PyExc_ValueError, "%s: scope must be SCOPE_MATRIX or SCOPE_BATCH", fn);
        return -1;
    }
    return clsext_data_array(xo, "x", 0, x);
}

typedef struct {
    cls_array   x;
    cls_scope   scope;
    double     *out;
    py_combine *comb;
} medians_call;

static cls_status run_medians(cls_context *ctx, void *arg)
{
    medians_call *k = arg;
    if (!k->comb) return cls_medians(ctx, &(cls_pipeline){.scope = k->scope}, &k->x, k->out);
    k->comb->ctx = ctx;
    cls_combine h = {call_combine, k->comb, NULL};
    return cls_medians(ctx, &(cls_pipeline){.scope = k->scope, .combine = &h}, &k->x, k->out);
}

/* combine=: as quantiles' (several processes' counts summed after each
 * pass; its exception is raised by medians()). */
PyObject *clsext_medians(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "x", "scope", "combine", NULL};
    PyObject *ctx, *xo, *combine = Py_None;
    int scope = CLS_SCOPE_MATRIX;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|i$O:medians", kwlist, &ctx, &xo, &scope, &combine))
        return NULL;
    medians_call k;
    memset(&k, 0, sizeof k);
    py_combine comb;
    memset(&comb, 0, sizeof comb);
    if (combine != Py_None) {
        if (!PyCallable_Check(combine)) {
            PyErr_SetString(PyExc_ValueError, "medians: combine must be callable");
            return NULL;
        }
        comb.fn = combine;
        k.comb = &comb;
    }
    if (k.comb && (scope == CLS_SCOPE_MATRIX || scope == CLS_SCOPE_BATCH) && empty_part(xo, &k.x)) {
        /* this process has no rows: it counts nothing and still combines */
    } else if (group_args(xo, scope, "medians", &k.x) < 0) return NULL;
    k.scope = (cls_scope)scope;
    npy_intp dims[2] = {scope == CLS_SCOPE_BATCH ? 1 : (npy_intp)k.x.batch, (npy_intp)k.x.cols};
    PyObject *out = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    char *msg = malloc(CLSEXT_MSG_LEN);
    cls_status st = CLS_OK;
    if (!out || !msg) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    k.out = PyArray_DATA((PyArrayObject *)out);
    if (clsext_context_call(ctx, run_medians, &k, &st, msg) < 0) goto fail;
    if (comb.raised) {
        PyErr_Restore(comb.type, comb.value, comb.tb);
        goto fail;
    }
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        goto fail;
    }
    free(msg);
    return out;
fail:
    Py_XDECREF(out);
    free(msg);
    return NULL;
}

/* ---- describe ---- */

typedef struct {
    cls_array    x;
    cls_scope    scope;
    double       sigma;
    cls_summary  out;   /* its arrays malloc'ed here, filled by the call */
} describe_call;

static cls_status run_describe(cls_context *ctx, void *arg)
{
    describe_call *k = arg;
    return cls_describe(ctx, &k->x, k->scope, k->sigma, &k->out);
}

/* One field of every column summary as a groups x cols array. */
static PyObject *summary_field(const cls_summary *s, size_t off, int is_count)
{
    npy_intp dims[2] = {(npy_intp)s->groups, (npy_intp)s->cols};
    PyObject *a = PyArray_SimpleNew(2, dims, is_count ? NPY_UINT64 : NPY_FLOAT64);
    if (!a) return NULL;
    char *dst = PyArray_DATA((PyArrayObject *)a);
    for (size_t e = 0; e < s->groups * s->cols; e++)
        memcpy(dst + e * 8, (const char *)&s->columns[e] + off, 8);
    return a;
}

PyObject *clsext_describe(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "x", "scope", "sigma", NULL};
    PyObject *ctx, *xo;
    int scope = CLS_SCOPE_MATRIX;
    double sigma = 3.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|id:describe", kwlist, &ctx, &xo, &scope, &sigma)) return NULL;
    describe_call k;
    memset(&k, 0, sizeof k);
    if (group_args(xo, scope, "describe", &k.x) < 0) return NULL;
    k.scope = (cls_scope)scope;
    k.sigma = sigma;
    size_t groups = k.scope == CLS_SCOPE_BATCH ? 1 : k.x.batch;
    k.out.columns = malloc(groups * k.x.cols * sizeof *k.out.columns);
    k.out.duplicate_rows = malloc(groups * sizeof *k.out.duplicate_rows);
    char *msg = malloc(CLSEXT_MSG_LEN);
    cls_status st = CLS_OK;
    PyObject *res = NULL;
    if (!msg || !k.out.columns || !k.out.duplicate_rows) {
        PyErr_NoMemory();
        goto done;
    }
    if (clsext_context_call(ctx, run_describe, &k, &st, msg) < 0) goto done;
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        goto done;
    }
    static const struct {
        const char *name;
        size_t      off;
        int         count;
    } fields[] = {
        {"count", offsetof(cls_column_summary, count), 1},     {"missing", offsetof(cls_column_summary, missing), 1},
        {"min", offsetof(cls_column_summary, min), 0},         {"max", offsetof(cls_column_summary, max), 0},
        {"mean", offsetof(cls_column_summary, mean), 0},       {"std", offsetof(cls_column_summary, std), 0},
        {"25%", offsetof(cls_column_summary, q25), 0},         {"50%", offsetof(cls_column_summary, median), 0},
        {"75%", offsetof(cls_column_summary, q75), 0},         {"outliers", offsetof(cls_column_summary, outliers), 1},
    };
    res = PyDict_New();
    for (size_t i = 0; res && i < sizeof fields / sizeof fields[0]; i++) {
        PyObject *a = summary_field(&k.out, fields[i].off, fields[i].count);
        if (!a || PyDict_SetItemString(res, fields[i].name, a) < 0) Py_CLEAR(res);
        Py_XDECREF(a);
    }
    if (res) {
        npy_intp g = (npy_intp)k.out.groups;
        PyObject *d = PyArray_SimpleNew(1, &g, NPY_UINT64);
        if (d) memcpy(PyArray_DATA((PyArrayObject *)d), k.out.duplicate_rows, (size_t)g * 8);
        if (!d || PyDict_SetItemString(res, "duplicate_rows", d) < 0) Py_CLEAR(res);
        Py_XDECREF(d);
    }
done:
    free(k.out.columns);
    free(k.out.duplicate_rows);
    free(msg);
    return res;
}
