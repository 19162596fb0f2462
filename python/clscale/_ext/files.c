/* Module functions for .npy files larger than memory: stream_file (one
 * .npy file to another through cls_fit_transform() / cls_transform() on
 * CLS_IN_NPY arrays: fit and transform, with
 * a cleaning stage or not, transform with given statistics, discount) and
 * stream_fit (the statistics of an array stored in a file,
 * cls_fit() of a CLS_IN_FILE array). The data never passes through Python or numpy; the
 * library's fixed pool of buffers bounds the memory whatever the file's
 * size. The cleaning options are parsed by clean_opts.c, as for clean(). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ext.h"

/* The pipeline keywords both functions take. */
typedef struct {
    int scaler, scope, clip, inverse;
    double lo, hi;
    double qmin, qmax; /* robust */
    int no_centering, no_scaling, unit_variance;
    Py_ssize_t buffer_bytes; /* cls_stream_opts.buffer_bytes; 0: the library's default */
} pipe_args;

#define PIPE_ARGS_INIT {CLS_NONE, CLS_SCOPE_MATRIX, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

static int pipeline_of(const pipe_args *a, cls_pipeline *p)
{
    if (!cls_scaler_name((cls_scaler)a->scaler) || a->scope < CLS_SCOPE_MATRIX ||
        a->scope > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "unknown scaler or scope");
        return -1;
    }
    if (!(a->qmin >= 0 && a->qmin <= a->qmax && a->qmax <= 100) || a->buffer_bytes < 0) {
        PyErr_SetString(PyExc_ValueError, "qmin, qmax must satisfy 0 <= qmin <= qmax <= 100; buffer_bytes >= 0");
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->scaler = (cls_scaler)a->scaler;
    p->scope = (cls_scope)a->scope;
    p->lo = a->lo;
    p->hi = a->hi;
    p->clip = a->clip;
    p->inverse = a->inverse;
    p->qmin = a->qmin;
    p->qmax = a->qmax;
    p->no_centering = a->no_centering;
    p->no_scaling = a->no_scaling;
    p->unit_variance = a->unit_variance;
    return 0;
}

typedef struct {
    const cls_pipeline *p;
    const cls_stats *s;
    const char *in, *out;
    cls_array file;
    cls_stats *fitted;
    int want_fitted;
    const cls_stream_opts *opts;
} file_call;

static cls_status run_stream_file(cls_context *ctx, void *arg)
{
    file_call *c = arg;
    cls_array in = {.where = CLS_IN_NPY, .path = c->in, .stream = c->opts};
    cls_array out = {.where = CLS_IN_NPY, .path = c->out};
    if (c->s) return cls_transform(ctx, c->p, c->s, &in, &out);
    return cls_fit_transform(ctx, c->p, &in, &out, c->want_fitted ? &c->fitted : NULL);
}

static cls_status run_stream_fit(cls_context *ctx, void *arg)
{
    file_call *c = arg;
    c->file.stream = c->opts;
    return cls_fit(ctx, c->p, &c->file, &c->fitted);
}

/* Runs `fn` on the Context and turns the outcome into a Stats, None or an
 * exception. */
static PyObject *finish(PyObject *ctx, cls_status (*fn)(cls_context *, void *), file_call *c)
{
    char *msg = malloc(CLSEXT_MSG_LEN);
    if (!msg) return PyErr_NoMemory();
    cls_status st = CLS_OK;
    if (clsext_context_call(ctx, fn, c, &st, msg) < 0) {
        free(msg);
        return NULL;
    }
    if (st != CLS_OK) {
        cls_stats_destroy(c->fitted);
        clsext_raise(st, msg);
        free(msg);
        return NULL;
    }
    free(msg);
    if (!c->fitted) Py_RETURN_NONE;
    return clsext_stats_wrap(c->fitted);
}

/* The cleaning stage's outputs (cls_clean's *_out), groups x cols each,
 * filled before the call so that nothing uninitialised reaches Python. */
typedef struct {
    PyObject *missing, *clipped, *fill;
    unsigned  iterations;
} clean_outs;

static int clean_outs_make(clean_outs *o, cls_clean *c, Py_ssize_t groups, Py_ssize_t cols)
{
    if (groups < 1 || cols < 1) {
        PyErr_SetString(PyExc_ValueError, "clean= needs clean_shape=(groups, cols), each at least 1");
        return -1;
    }
    npy_intp dims[2] = {groups, cols};
    o->missing = PyArray_ZEROS(2, dims, NPY_UINT64, 0);
    o->clipped = PyArray_ZEROS(2, dims, NPY_UINT64, 0);
    o->fill = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    if (!o->missing || !o->clipped || !o->fill) return -1;
    double *f = PyArray_DATA((PyArrayObject *)o->fill);
    for (npy_intp i = 0; i < groups * cols; i++) f[i] = Py_NAN;
    c->missing_out = PyArray_DATA((PyArrayObject *)o->missing);
    c->clipped_out = PyArray_DATA((PyArrayObject *)o->clipped);
    c->fill_out = f;
    c->iterations_out = &o->iterations;
    return 0;
}

PyObject *clsext_stream_file(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "in_path", "out_path", "stats", "scaler", "scope", "lo", "hi", "clip",
                             "inverse", "factors", "fitted", "qmin", "qmax", "no_centering", "no_scaling",
                             "unit_variance", "clean", "clean_shape", "buffer_bytes", NULL};
    PyObject *ctx, *in = NULL, *out = NULL, *stats = Py_None, *factors = Py_None, *clean = Py_None;
    pipe_args a = PIPE_ARGS_INIT;
    Py_ssize_t groups = 0, cols = 0;
    int want = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO&O&|O$iiddppOpddpppO(nn)n", kwlist, &ctx,
                                     PyUnicode_FSConverter, &in, PyUnicode_FSConverter, &out, &stats, &a.scaler,
                                     &a.scope, &a.lo, &a.hi, &a.clip, &a.inverse, &factors, &want, &a.qmin,
                                     &a.qmax, &a.no_centering, &a.no_scaling, &a.unit_variance, &clean, &groups,
                                     &cols, &a.buffer_bytes)) {
        Py_XDECREF(in);
        Py_XDECREF(out);
        return NULL;
    }
    PyObject *res = NULL;
    cls_pipeline p;
    cls_array f;
    cls_clean cl;
    clean_outs co;
    memset(&co, 0, sizeof co);
    cls_stream_opts opts;
    memset(&opts, 0, sizeof opts);
    file_call c;
    memset(&c, 0, sizeof c);
    if (pipeline_of(&a, &p) < 0) goto done;
    if (stats != Py_None && !(c.s = clsext_stats_of(stats))) goto done;
    if (clean != Py_None) {
        /* the keywords clean() takes (their scope is the pipeline's) */
        if (c.s || factors != Py_None || a.inverse) {
            PyErr_SetString(PyExc_ValueError, "a cleaning stage (clean=) is streamed only by a fit and transform");
            goto done;
        }
        if (clsext_clean_options(clean, &cl, NULL) < 0 || clean_outs_make(&co, &cl, groups, cols) < 0) goto done;
        p.clean = &cl;
    }
    if (factors != Py_None) {
        /* the factors' own dtype: the library refuses one that is not the file's */
        if (!PyArray_Check(factors)) {
            PyErr_SetString(PyExc_ValueError, "factors must be a numpy array");
            goto done;
        }
        int t = PyArray_TYPE((PyArrayObject *)factors);
        if (t != NPY_FLOAT32 && t != NPY_FLOAT64) {
            PyErr_SetString(PyExc_ValueError, "factors must be float32 or float64");
            goto done;
        }
        if (clsext_factors_array(factors, t == NPY_FLOAT32 ? CLS_F32 : CLS_F64, &f) < 0) goto done;
        p.factors = &f;
    }
    opts.buffer_bytes = (size_t)a.buffer_bytes;
    c.opts = a.buffer_bytes ? &opts : NULL;
    c.p = &p;
    c.in = PyBytes_AS_STRING(in);
    c.out = PyBytes_AS_STRING(out);
    c.want_fitted = want && c.s == NULL;
    res = finish(ctx, run_stream_file, &c);
    if (res && clean != Py_None) {
        PyObject *t = Py_BuildValue("(NOOOI)", res, co.missing, co.clipped, co.fill, co.iterations);
        res = t;
    }
done:
    Py_XDECREF(co.missing);
    Py_XDECREF(co.clipped);
    Py_XDECREF(co.fill);
    Py_DECREF(in);
    Py_DECREF(out);
    return res;
}

PyObject *clsext_stream_fit(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "path", "offset", "dtype", "shape", "scaler", "scope", "lo", "hi", "clip",
                             "qmin", "qmax", "no_centering", "no_scaling", "unit_variance", "buffer_bytes", NULL};
    PyObject *ctx, *path = NULL;
    unsigned long long offset = 0;
    int dtype = 0;
    Py_ssize_t batch = 0, rows = 0, cols = 0;
    pipe_args a = PIPE_ARGS_INIT;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO&Ki(nnn)|$iiddpddpppn", kwlist, &ctx, PyUnicode_FSConverter,
                                     &path, &offset, &dtype, &batch, &rows, &cols, &a.scaler, &a.scope, &a.lo,
                                     &a.hi, &a.clip, &a.qmin, &a.qmax, &a.no_centering, &a.no_scaling,
                                     &a.unit_variance, &a.buffer_bytes))
        return NULL;
    PyObject *res = NULL;
    cls_pipeline p;
    cls_stream_opts opts;
    memset(&opts, 0, sizeof opts);
    file_call c;
    memset(&c, 0, sizeof c);
    int fd = -1;
    if (pipeline_of(&a, &p) < 0) goto done;
    if (dtype != CLS_F32 && dtype != CLS_F64) {
        PyErr_SetString(PyExc_ValueError, "dtype must be F32 or F64");
        goto done;
    }
    if (batch < 1 || rows < 1 || cols < 1) {
        PyErr_SetString(PyExc_ValueError, "shape must be (batch, rows, cols), each at least 1");
        goto done;
    }
    fd = open(PyBytes_AS_STRING(path), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
        goto done;
    }
    cls_array fa = {.where = CLS_IN_FILE, .fd = fd, .offset = offset, .dtype = (cls_dtype)dtype, .batch = (size_t)batch, .rows = (size_t)rows, .cols = (size_t)cols, .path = PyBytes_AS_STRING(path)};
    c.file = fa;
    c.p = &p;
    opts.buffer_bytes = (size_t)a.buffer_bytes;
    c.opts = a.buffer_bytes ? &opts : NULL;
    res = finish(ctx, run_stream_fit, &c);
done:
    if (fd >= 0) close(fd);
    Py_DECREF(path);
    return res;
}
