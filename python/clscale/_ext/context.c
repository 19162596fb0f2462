/* clscale._clscale.Context: one cls_context, its devices and the pipeline
 * calls (fit, transform, fit_transform, and the same calls timed from C for
 * the benchmark).
 *
 * Every library call runs with the GIL released. A cls_context may be used
 * by one thread at a time, so each Context holds a lock that a call takes
 * after releasing the GIL (two threads on one Context queue up; the Python
 * layer keeps a pool so that concurrent callers get distinct contexts). The
 * arrays a call uses are kept alive by the call's own arguments. A Context
 * inherited through fork() is never destroyed in the child (the OpenCL
 * objects and threads belong to the parent): it is dropped unused. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ext.h"

typedef struct {
    PyObject_HEAD
    cls_context *ctx;
    PyThread_type_lock lock;
    pid_t pid;          /* the process that created ctx */
    PyObject *selector; /* the devices selector given, or None */
} clsext_context;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The message of a failed call, copied while the context is still ours. */
#define MSG_LEN CLSEXT_MSG_LEN
static void copy_error(const cls_context *ctx, char *buf)
{
    const char *e = cls_last_error(ctx);
    strncpy(buf, e ? e : "", MSG_LEN - 1);
    buf[MSG_LEN - 1] = '\0';
}

/* Takes the context's lock (waiting with the GIL released) and returns the
 * cls_context, or NULL with an exception (and the lock not held) when the
 * Context is closed or belongs to the parent of a fork. self->ctx is only
 * read or changed under the lock. */
static cls_context *lock_ctx(clsext_context *self)
{
    if (self->pid != getpid()) {
        PyErr_SetString(clsext_error, "this Context was created by another process (before a fork); make a new one");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
    if (!self->ctx) {
        PyThread_release_lock(self->lock);
        PyErr_SetString(PyExc_ValueError, "this Context is closed");
        return NULL;
    }
    return self->ctx;
}

/* ---- life ---- */

static int context_init(clsext_context *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"devices", "queues", "slice_bytes", "cache_dir", "profile", NULL};
    PyObject *devices = Py_None;
    const char *cache_dir = NULL;
    unsigned int queues = 0;
    Py_ssize_t slice_bytes = 0;
    int profile = 0;
    if (self->ctx) {
        PyErr_SetString(PyExc_ValueError, "Context is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OInzp", kwlist, &devices, &queues, &slice_bytes, &cache_dir,
                                     &profile))
        return -1;
    if (devices != Py_None && !PyUnicode_Check(devices)) {
        PyErr_SetString(PyExc_ValueError, "devices must be a selector string (\"all\", \"cpu\", \"0,2\", \"pocl\") or None");
        return -1;
    }
    if (slice_bytes < 0) {
        PyErr_SetString(PyExc_ValueError, "slice_bytes must be >= 0");
        return -1;
    }
    const char *sel = devices == Py_None ? NULL : PyUnicode_AsUTF8(devices);
    if (devices != Py_None && !sel) return -1;
    if (!self->lock) self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        PyErr_NoMemory();
        return -1;
    }
    cls_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = sel;
    cfg.queues = queues;
    cfg.slice_bytes = (size_t)slice_bytes;
    cfg.cache_dir = cache_dir;
    cfg.flags = profile ? CLS_PROFILE : 0;
    cls_context *ctx = NULL;
    cls_status st;
    char *msg = malloc(MSG_LEN);
    if (!msg) {
        PyErr_NoMemory();
        return -1;
    }
    msg[0] = '\0';
    Py_BEGIN_ALLOW_THREADS
    st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) {
        if (ctx) copy_error(ctx, msg);
        cls_context_destroy(ctx);
        ctx = NULL;
    }
    Py_END_ALLOW_THREADS
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        free(msg);
        return -1;
    }
    free(msg);
    self->ctx = ctx;
    self->pid = getpid();
    Py_INCREF(devices);
    Py_XSETREF(self->selector, devices);
    return 0;
}

static void context_release(clsext_context *self)
{
    if (!self->lock) return;
    if (self->pid != getpid()) { /* a fork's copy: the parent's objects are not ours to release */
        self->ctx = NULL;
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    cls_context *ctx = self->ctx;
    self->ctx = NULL;
    cls_context_destroy(ctx);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
}

static void context_dealloc(clsext_context *self)
{
    context_release(self);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_XDECREF(self->selector);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *context_close(clsext_context *self, PyObject *unused)
{
    (void)unused;
    context_release(self);
    Py_RETURN_NONE;
}

/* ---- devices ---- */

static PyObject *device_dict(const cls_device_info *d)
{
    PyObject *types = PyList_New(0);
    if (!types) return NULL;
    static const struct { unsigned bit; const char *name; } tn[] = {
        {CLS_DEVICE_CPU, "cpu"}, {CLS_DEVICE_GPU, "gpu"}, {CLS_DEVICE_ACCELERATOR, "accelerator"}};
    for (size_t i = 0; i < 3; i++) {
        if (!(d->type & tn[i].bit)) continue;
        PyObject *s = PyUnicode_FromString(tn[i].name);
        if (!s || PyList_Append(types, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(types);
            return NULL;
        }
        Py_DECREF(s);
    }
    return Py_BuildValue("{s:n,s:s,s:s,s:s,s:s,s:s,s:s,s:N,s:I,s:K,s:K,s:O,s:O,s:O}", "index", (Py_ssize_t)d->index,
                         "name", d->name, "vendor", d->vendor, "platform", d->platform, "platform_vendor",
                         d->platform_vendor, "version", d->version, "driver", d->driver, "type", types,
                         "compute_units", d->compute_units, "global_mem_bytes",
                         (unsigned long long)d->global_mem_bytes, "max_alloc_bytes",
                         (unsigned long long)d->max_alloc_bytes, "fp64", d->fp64 ? Py_True : Py_False,
                         "host_unified", d->host_unified ? Py_True : Py_False, "staging",
                         d->staging ? Py_True : Py_False);
}

static PyObject *context_devices(clsext_context *self, PyObject *unused)
{
    (void)unused;
    cls_context *ctx = lock_ctx(self);
    if (!ctx) return NULL;
    size_t n = cls_device_count(ctx);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        cls_device_info d;
        cls_status st = cls_device_get(ctx, i, &d);
        PyObject *dd = st == CLS_OK ? device_dict(&d) : clsext_raise(st, cls_last_error(ctx));
        if (!dd) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, dd);
    }
    PyThread_release_lock(self->lock);
    return list;
}

/* ---- pipeline calls ---- */

enum op { OP_FIT, OP_TRANSFORM, OP_FIT_TRANSFORM };

typedef struct call {
    enum op op;
    cls_array x, out, factors;
    cls_pipeline p;
    const cls_stats *stats;
    Py_ssize_t repeats;
    cls_clean clean;             /* fit_transform(clean=...): p.clean points here */
    PyObject *fill, *missing;    /* its outputs (groups x cols arrays); NULL without */
} call;

static void release_call(call *c)
{
    Py_CLEAR(c->fill);
    Py_CLEAR(c->missing);
}

/* With clean= (fit_transform only): the cleaning stage ahead of the scaler,
 * fused by the library where it can, and the arrays its per-column fill
 * values and missing counts are written to. */
static int parse_clean(PyObject *clean, call *c)
{
    if (c->op != OP_FIT_TRANSFORM) {
        PyErr_SetString(PyExc_ValueError, "only fit_transform takes a cleaning stage (clean=)");
        return -1;
    }
    if (clsext_clean_options(clean, &c->clean, NULL) < 0) return -1;
    npy_intp dims[2] = {c->p.scope == CLS_SCOPE_BATCH ? 1 : (npy_intp)c->x.batch, (npy_intp)c->x.cols};
    c->fill = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    c->missing = PyArray_SimpleNew(2, dims, NPY_UINT64);
    if (!c->fill || !c->missing) {
        release_call(c);
        return -1;
    }
    c->clean.fill_out = PyArray_DATA((PyArrayObject *)c->fill);
    c->clean.missing_out = PyArray_DATA((PyArrayObject *)c->missing);
    c->p.clean = &c->clean;
    return 0;
}

/* Parses (x, out=None, stats=None, *, scaler, scope, lo, hi, clip, inverse,
 * factors, repeats, clean, qmin, qmax) for `op`; out is required but for a fit. clean
 * (a dict of cleaning options, fit_transform only) also admits the max-abs
 * scaler. On success the caller releases the call (release_call). */
static int parse_call(enum op op, PyObject *args, PyObject *kwds, call *c)
{
    static char *kwlist[] = {"x", "out", "stats", "scaler", "scope", "lo", "hi", "clip", "inverse", "factors",
                             "repeats", "clean", "qmin", "qmax", NULL};
    PyObject *x, *out = Py_None, *stats = Py_None, *factors = Py_None, *clean = Py_None;
    int scaler = CLS_NONE, scope = CLS_SCOPE_MATRIX, clip = 0, inverse = 0;
    double lo = 0, hi = 0, qmin = 0, qmax = 0;
    memset(c, 0, sizeof *c);
    c->op = op;
    c->repeats = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO$iiddppOnOdd", kwlist, &x, &out, &stats, &scaler, &scope, &lo,
                                     &hi, &clip, &inverse, &factors, &c->repeats, &clean, &qmin, &qmax))
        return -1;
    if (!(qmin >= 0 && qmin <= qmax && qmax <= 100)) {
        PyErr_SetString(PyExc_ValueError, "qmin, qmax must satisfy 0 <= qmin <= qmax <= 100");
        return -1;
    }
    /* the library's table says which scalers exist (NULL: none of them) */
    if (!cls_scaler_name((cls_scaler)scaler) || scope < CLS_SCOPE_MATRIX || scope > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "unknown scaler or scope");
        return -1;
    }
    if (c->repeats < 1) {
        PyErr_SetString(PyExc_ValueError, "repeats must be >= 1");
        return -1;
    }
    if (clsext_data_array(x, "x", 0, &c->x) < 0) return -1;
    if (op == OP_FIT) {
        if (out != Py_None || stats != Py_None || factors != Py_None || inverse) {
            PyErr_SetString(PyExc_ValueError, "fit takes no out, stats, factors or inverse");
            return -1;
        }
    } else if (clsext_data_array(out, "out", 1, &c->out) < 0) {
        return -1;
    }
    if (stats != Py_None) {
        if (op != OP_TRANSFORM) {
            PyErr_SetString(PyExc_ValueError, "only transform takes fitted statistics");
            return -1;
        }
        if (!(c->stats = clsext_stats_of(stats))) return -1;
    }
    if (factors != Py_None) {
        if (op == OP_FIT) {
            PyErr_SetString(PyExc_ValueError, "fit takes no factors");
            return -1;
        }
        if (clsext_factors_array(factors, c->x.dtype, &c->factors) < 0) return -1;
        c->p.factors = &c->factors;
    }
    c->p.scaler = (cls_scaler)scaler;
    c->p.scope = (cls_scope)scope;
    c->p.lo = lo;
    c->p.hi = hi;
    c->p.clip = clip;
    c->p.inverse = inverse;
    c->p.qmin = qmin;
    c->p.qmax = qmax;
    if (clean != Py_None && parse_clean(clean, c) < 0) return -1;
    return 0;
}

/* Runs the call `repeats` times with the GIL released; `times` (repeats
 * long, or NULL) gets each call's seconds. Returns the fitted statistics as
 * a Stats (fit, fit_transform), None (transform), or NULL with an exception. */
static PyObject *run_call(clsext_context *self, call *c, double *times)
{
    if (self->pid != getpid()) {
        PyErr_SetString(clsext_error, "this Context was created by another process (before a fork); make a new one");
        return NULL;
    }
    cls_stats *fitted = NULL;
    cls_status st = CLS_OK;
    char *msg = malloc(MSG_LEN);
    if (!msg) return PyErr_NoMemory();
    msg[0] = '\0';
    int closed = 0;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    cls_context *ctx = self->ctx;
    closed = ctx == NULL;
    for (Py_ssize_t r = 0; !closed && r < c->repeats && st == CLS_OK; r++) {
        cls_stats_destroy(fitted);
        fitted = NULL;
        double t0 = now();
        switch (c->op) {
        case OP_FIT: st = cls_fit(ctx, &c->p, &c->x, &fitted); break;
        case OP_TRANSFORM: st = cls_transform(ctx, &c->p, c->stats, &c->x, &c->out); break;
        case OP_FIT_TRANSFORM: st = cls_fit_transform(ctx, &c->p, &c->x, &c->out, &fitted); break;
        }
        if (times) times[r] = now() - t0;
    }
    if (st != CLS_OK) {
        copy_error(ctx, msg);
        cls_stats_destroy(fitted);
        fitted = NULL;
    }
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    if (closed) {
        free(msg);
        PyErr_SetString(PyExc_ValueError, "this Context is closed");
        return NULL;
    }
    if (st != CLS_OK) {
        clsext_raise(st, msg);
        free(msg);
        return NULL;
    }
    free(msg);
    if (c->op == OP_TRANSFORM) Py_RETURN_NONE;
    PyObject *s = clsext_stats_wrap(fitted);
    if (!s || !c->fill) return s;
    PyObject *res = Py_BuildValue("(NOO)", s, c->fill, c->missing);
    return res;
}

static PyObject *context_fit(clsext_context *self, PyObject *args, PyObject *kwds)
{
    call c;
    if (parse_call(OP_FIT, args, kwds, &c) < 0) return NULL;
    c.repeats = 1;
    return run_call(self, &c, NULL);
}

static PyObject *context_transform(clsext_context *self, PyObject *args, PyObject *kwds)
{
    call c;
    if (parse_call(OP_TRANSFORM, args, kwds, &c) < 0) return NULL;
    c.repeats = 1;
    return run_call(self, &c, NULL);
}

static PyObject *context_fit_transform(clsext_context *self, PyObject *args, PyObject *kwds)
{
    call c;
    if (parse_call(OP_FIT_TRANSFORM, args, kwds, &c) < 0) return NULL;
    c.repeats = 1;
    PyObject *res = run_call(self, &c, NULL);
    release_call(&c);
    return res;
}

/* timed(op, x, ...): the same call `repeats` times, each timed in C around
 * the library call alone; returns the list of seconds. */
static PyObject *context_timed(clsext_context *self, PyObject *args, PyObject *kwds)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_ValueError, "timed(op, x, ...): op is \"fit\", \"transform\" or \"fit_transform\"");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
    if (!name) return NULL;
    enum op op;
    if (!strcmp(name, "fit")) op = OP_FIT;
    else if (!strcmp(name, "transform")) op = OP_TRANSFORM;
    else if (!strcmp(name, "fit_transform")) op = OP_FIT_TRANSFORM;
    else {
        PyErr_Format(PyExc_ValueError, "unknown op \"%s\"", name);
        return NULL;
    }
    PyObject *rest = PyTuple_GetSlice(args, 1, n);
    if (!rest) return NULL;
    call c;
    int bad = parse_call(op, rest, kwds, &c);
    Py_DECREF(rest);
    if (bad < 0) return NULL;
    double *times = PyMem_Calloc((size_t)c.repeats, sizeof *times);
    if (!times) {
        release_call(&c);
        return PyErr_NoMemory();
    }
    PyObject *res = run_call(self, &c, times);
    release_call(&c);
    if (!res) {
        PyMem_Free(times);
        return NULL;
    }
    Py_DECREF(res);
    PyObject *list = PyList_New(c.repeats);
    for (Py_ssize_t i = 0; list && i < c.repeats; i++) {
        PyObject *f = PyFloat_FromDouble(times[i]);
        if (!f) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, f);
    }
    PyMem_Free(times);
    return list;
}

/* ---- calls of other files (files.c) ---- */

int clsext_context_call(PyObject *obj, cls_status (*fn)(cls_context *, void *), void *arg, cls_status *st,
                        char *msg)
{
    if (!PyObject_TypeCheck(obj, &clsext_context_type)) {
        PyErr_SetString(PyExc_TypeError, "expected a clscale._clscale.Context");
        return -1;
    }
    clsext_context *self = (clsext_context *)obj;
    if (self->pid != getpid()) {
        PyErr_SetString(clsext_error, "this Context was created by another process (before a fork); make a new one");
        return -1;
    }
    int closed = 0;
    msg[0] = '\0';
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    cls_context *ctx = self->ctx;
    closed = ctx == NULL;
    if (!closed) {
        *st = fn(ctx, arg);
        if (*st != CLS_OK) copy_error(ctx, msg);
    }
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    if (closed) {
        PyErr_SetString(PyExc_ValueError, "this Context is closed");
        return -1;
    }
    return 0;
}

/* ---- report ---- */

static PyObject *opt_str(const char *s)
{
    if (!s) Py_RETURN_NONE;
    return PyUnicode_FromString(s);
}

static PyObject *context_last_report(clsext_context *self, PyObject *unused)
{
    (void)unused;
    cls_context *ctx = lock_ctx(self);
    if (!ctx) return NULL;
    cls_report r;
    cls_status st = cls_last_report(ctx, &r);
    PyObject *devs = st == CLS_OK ? PyList_New((Py_ssize_t)r.ndevices) : clsext_raise(st, cls_last_error(ctx));
    for (size_t i = 0; devs && i < r.ndevices; i++) {
        const cls_device_report *d = &r.devices[i];
        PyObject *dd = Py_BuildValue("{s:n,s:N,s:N,s:n,s:K,s:d}", "device", (Py_ssize_t)d->device, "sat_out",
                                     opt_str(d->sat_out), "failed", opt_str(d->failed), "slices",
                                     (Py_ssize_t)d->slices, "bytes", (unsigned long long)d->bytes, "busy_s",
                                     d->busy);
        if (!dd) Py_CLEAR(devs);
        else PyList_SET_ITEM(devs, (Py_ssize_t)i, dd);
    }
    PyObject *res = NULL;
    if (devs)
        res = Py_BuildValue("{s:d,s:K,s:n,s:n,s:i,s:N}", "wall_s", r.wall, "bytes", (unsigned long long)r.bytes,
                            "slices", (Py_ssize_t)r.slices, "slices_done", (Py_ssize_t)r.slices_done, "phases",
                            r.phases, "devices", devs);
    PyThread_release_lock(self->lock);
    return res;
}

static PyObject *context_last_error(clsext_context *self, PyObject *unused)
{
    (void)unused;
    cls_context *ctx = lock_ctx(self);
    if (!ctx) return NULL;
    PyObject *s = PyUnicode_FromString(cls_last_error(ctx));
    PyThread_release_lock(self->lock);
    return s;
}

static PyObject *context_repr(clsext_context *self)
{
    return PyUnicode_FromFormat("<clscale Context devices=%R>", self->selector ? self->selector : Py_None);
}

#define CALL_DOC(name, what)                                                                                      \
    name "(x, out=None, stats=None, *, scaler=NONE, scope=SCOPE_MATRIX, lo=0.0, hi=0.0, clip=False, "            \
         "inverse=False, factors=None, qmin=0.0, qmax=0.0 (robust: 0, 0 is 25, 75)) -- " what

static PyMethodDef context_methods[] = {
    {"devices", (PyCFunction)context_devices, METH_NOARGS, "devices() -> list of dict: the selected devices."},
    {"fit", (PyCFunction)(void (*)(void))context_fit, METH_VARARGS | METH_KEYWORDS,
     CALL_DOC("fit", "cls_fit(); returns a Stats.")},
    {"transform", (PyCFunction)(void (*)(void))context_transform, METH_VARARGS | METH_KEYWORDS,
     CALL_DOC("transform", "cls_transform() into out (which may be x).")},
    {"fit_transform", (PyCFunction)(void (*)(void))context_fit_transform, METH_VARARGS | METH_KEYWORDS,
     CALL_DOC("fit_transform", "cls_fit_transform() into out; returns a Stats. clean=dict (SimpleImputer's "
              "cleaning options, as clean() takes them; the scaler may then be MAXABS): the cleaning stage ahead "
              "of the scaler (cls_pipeline.clean), and returns (Stats, fill, missing), fill and missing "
              "(groups x cols) the imputer's fill values and the missing values found.")},
    {"timed", (PyCFunction)(void (*)(void))context_timed, METH_VARARGS | METH_KEYWORDS,
     "timed(op, x, ..., repeats=1) -> list of float: the call op (\"fit\", \"transform\", \"fit_transform\") "
     "`repeats` times, each timed in C around the library call alone."},
    {"last_report", (PyCFunction)context_last_report, METH_NOARGS,
     "last_report() -> dict: cls_last_report() of the last call (wall, bytes, slices, devices)."},
    {"last_error", (PyCFunction)context_last_error, METH_NOARGS, "last_error() -> str: cls_last_error()."},
    {"close", (PyCFunction)context_close, METH_NOARGS, "close(): releases the devices now."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject clsext_context_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "clscale._clscale.Context",
    .tp_basicsize = sizeof(clsext_context),
    .tp_dealloc = (destructor)context_dealloc,
    .tp_repr = (reprfunc)context_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Context(devices=None, queues=0, slice_bytes=0, cache_dir=None, profile=False)\n\n"
              "A clscale context: the OpenCL devices `devices` selects (None: $CLSCALE_DEVICES, else all),\n"
              "kernels built. Calls from several threads queue up on one Context; use one per thread\n"
              "for parallel calls.",
    .tp_methods = context_methods,
    .tp_init = (initproc)context_init,
    .tp_new = PyType_GenericNew,
};
