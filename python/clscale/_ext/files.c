/* Module functions for .npy files larger than memory: stream_file (one
 * .npy file to another through cls_stream_file(): fit and transform,
 * transform with given statistics, discount) and stream_fit (the
 * statistics of an array stored in a file, cls_stream_fit()). The data
 * never passes through Python or numpy; the library's fixed pool of
 * buffers bounds the memory whatever the file's size. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ext.h"

/* The pipeline keywords both functions take. */
typedef struct {
    int scaler, scope, clip, inverse;
    double lo, hi;
} pipe_args;

static int pipeline_of(const pipe_args *a, cls_pipeline *p)
{
    if (a->scaler < CLS_NONE || a->scaler > CLS_DECIMAL || a->scope < CLS_SCOPE_MATRIX ||
        a->scope > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "unknown scaler or scope");
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->scaler = (cls_scaler)a->scaler;
    p->scope = (cls_scope)a->scope;
    p->lo = a->lo;
    p->hi = a->hi;
    p->clip = a->clip;
    p->inverse = a->inverse;
    return 0;
}

typedef struct {
    const cls_pipeline *p;
    const cls_stats *s;
    const char *in, *out;
    cls_file_array file;
    cls_stats *fitted;
    int want_fitted;
} file_call;

static cls_status run_stream_file(cls_context *ctx, void *arg)
{
    file_call *c = arg;
    return cls_stream_file(ctx, c->p, c->s, c->in, c->out, NULL, c->want_fitted ? &c->fitted : NULL);
}

static cls_status run_stream_fit(cls_context *ctx, void *arg)
{
    file_call *c = arg;
    return cls_stream_fit(ctx, c->p, &c->file, NULL, &c->fitted);
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

PyObject *clsext_stream_file(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "in_path", "out_path", "stats", "scaler", "scope", "lo",
                             "hi", "clip", "inverse", "factors", "fitted", NULL};
    PyObject *ctx, *in = NULL, *out = NULL, *stats = Py_None, *factors = Py_None;
    pipe_args a = {CLS_NONE, CLS_SCOPE_MATRIX, 0, 0, 0, 0};
    int want = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO&O&|O$iiddppOp", kwlist, &ctx, PyUnicode_FSConverter, &in,
                                     PyUnicode_FSConverter, &out, &stats, &a.scaler, &a.scope, &a.lo, &a.hi,
                                     &a.clip, &a.inverse, &factors, &want)) {
        Py_XDECREF(in);
        Py_XDECREF(out);
        return NULL;
    }
    PyObject *res = NULL;
    cls_pipeline p;
    cls_array f;
    file_call c;
    memset(&c, 0, sizeof c);
    if (pipeline_of(&a, &p) < 0) goto done;
    if (stats != Py_None && !(c.s = clsext_stats_of(stats))) goto done;
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
    c.p = &p;
    c.in = PyBytes_AS_STRING(in);
    c.out = PyBytes_AS_STRING(out);
    c.want_fitted = want && c.s == NULL;
    res = finish(ctx, run_stream_file, &c);
done:
    Py_DECREF(in);
    Py_DECREF(out);
    return res;
}

PyObject *clsext_stream_fit(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "path", "offset", "dtype", "shape", "scaler", "scope", "lo", "hi", "clip",
                             NULL};
    PyObject *ctx, *path = NULL;
    unsigned long long offset = 0;
    int dtype = 0;
    Py_ssize_t batch = 0, rows = 0, cols = 0;
    pipe_args a = {CLS_NONE, CLS_SCOPE_MATRIX, 0, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO&Ki(nnn)|$iiddp", kwlist, &ctx, PyUnicode_FSConverter, &path,
                                     &offset, &dtype, &batch, &rows, &cols, &a.scaler, &a.scope, &a.lo, &a.hi,
                                     &a.clip))
        return NULL;
    PyObject *res = NULL;
    cls_pipeline p;
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
    cls_file_array fa = {fd, offset, (cls_dtype)dtype, (size_t)batch, (size_t)rows, (size_t)cols,
                         PyBytes_AS_STRING(path)};
    c.file = fa;
    c.p = &p;
    res = finish(ctx, run_stream_fit, &c);
done:
    if (fd >= 0) close(fd);
    Py_DECREF(path);
    return res;
}
