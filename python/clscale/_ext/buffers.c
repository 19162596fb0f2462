/* Data already on a device, for Python: a library context made on a
 * caller's cl_context, device and queue (pyopencl's, by their int_ptr),
 * and fit_transform / transform of arrays in cl_mem buffers
 * (cls_fit_transform, cls_transform on CLS_IN_BUFFER arrays). The handles are plain
 * integers (the pointers pyopencl gives); the pure-Python layer
 * (clscale/_device.py) takes them from pyopencl arrays, keeps the
 * pyopencl objects alive for the call, and holds a lock per context (a
 * cls_context serves one thread at a time). Calls block until the output
 * is written and run with the GIL released.
 *
 *   buffer_context(cl_context, cl_device, cl_queue) -> capsule
 *   buffer_call(capsule, op, mem_in, off_in, mem_out, off_out, dtype,
 *               batch, rows, cols, *, scaler, scope, lo, hi, clip,
 *               inverse, stats) -> Stats (fit_transform) or None */
#include <string.h>

#include "ext.h"

static const char capsule_name[] = "clscale.buffer_context";

static void capsule_free(PyObject *cap)
{
    cls_context *ctx = PyCapsule_GetPointer(cap, capsule_name);
    if (ctx) cls_context_destroy(ctx);
}

static int handle(PyObject *o, void **out)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (PyErr_Occurred()) return 0;
    *out = (void *)(uintptr_t)v;
    return 1;
}

PyObject *clsext_buffer_context(PyObject *self, PyObject *args)
{
    (void)self;
    void *cl = NULL, *dev = NULL, *q = NULL;
    if (!PyArg_ParseTuple(args, "O&O&O&", handle, &cl, handle, &dev, handle, &q)) return NULL;
    if (!cl || !dev || !q) {
        PyErr_SetString(PyExc_ValueError, "buffer_context: a NULL OpenCL handle");
        return NULL;
    }
    struct _cl_device_id *devs[1] = {dev};
    struct _cl_command_queue *queues[1] = {q};
    cls_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.cl_context = cl;
    cfg.cl_devices = devs;
    cfg.cl_ndevices = 1;
    cfg.cl_queues = queues;
    cls_context *ctx = NULL;
    cls_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cls_context_create(&cfg, &ctx);
    Py_END_ALLOW_THREADS
    if (st != CLS_OK) {
        PyObject *r = clsext_raise(st, ctx ? cls_last_error(ctx) : "out of memory");
        cls_context_destroy(ctx);
        return r;
    }
    PyObject *cap = PyCapsule_New(ctx, capsule_name, capsule_free);
    if (!cap) cls_context_destroy(ctx);
    return cap;
}

PyObject *clsext_buffer_call(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kwlist[] = {"ctx", "op", "mem_in", "off_in", "mem_out", "off_out", "dtype", "batch", "rows",
                             "cols", "scaler", "scope", "lo", "hi", "clip", "inverse", "stats", NULL};
    PyObject *cap, *stats = Py_None;
    const char *op, *dtype;
    void *min = NULL, *mout = NULL;
    Py_ssize_t oin, oout, batch, rows, cols;
    int scaler = CLS_NONE, scope = CLS_SCOPE_MATRIX, clip = 0, inverse = 0;
    double lo = 0, hi = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OsO&nO&nsnnn|$iiddppO", kwlist, &cap, &op, handle, &min, &oin,
                                     handle, &mout, &oout, &dtype, &batch, &rows, &cols, &scaler, &scope, &lo, &hi,
                                     &clip, &inverse, &stats))
        return NULL;
    cls_context *ctx = PyCapsule_GetPointer(cap, capsule_name);
    if (!ctx) return NULL;
    int fit = !strcmp(op, "fit_transform");
    if (!fit && strcmp(op, "transform")) {
        PyErr_Format(PyExc_ValueError, "unknown op \"%s\"", op);
        return NULL;
    }
    if (strcmp(dtype, "float32") && strcmp(dtype, "float64")) {
        PyErr_Format(PyExc_ValueError, "dtype must be float32 or float64, not %s", dtype);
        return NULL;
    }
    if (oin < 0 || oout < 0 || batch < 1 || rows < 1 || cols < 1) {
        PyErr_SetString(PyExc_ValueError, "offsets must be >= 0 and every dimension >= 1");
        return NULL;
    }
    if (!cls_scaler_name((cls_scaler)scaler) || scope < CLS_SCOPE_MATRIX || scope > CLS_SCOPE_BATCH) {
        PyErr_SetString(PyExc_ValueError, "unknown scaler or scope");
        return NULL;
    }
    const cls_stats *s = NULL;
    if (!fit) {
        if (stats == Py_None) {
            PyErr_SetString(PyExc_ValueError, "transform needs fitted statistics");
            return NULL;
        }
        if (!(s = clsext_stats_of(stats))) return NULL;
    }
    cls_array in = {.where = CLS_IN_BUFFER, .mem = min, .offset = (size_t)oin,
                    .dtype = dtype[5] == '6' ? CLS_F64 : CLS_F32, .batch = (size_t)batch, .rows = (size_t)rows,
                    .cols = (size_t)cols};
    cls_array out = in;
    out.mem = mout;
    out.offset = (size_t)oout;
    cls_pipeline p;
    memset(&p, 0, sizeof p);
    p.scaler = (cls_scaler)scaler;
    p.scope = (cls_scope)scope;
    p.lo = lo;
    p.hi = hi;
    p.clip = clip;
    p.inverse = inverse;
    cls_stats *fitted = NULL;
    cls_status st;
    Py_BEGIN_ALLOW_THREADS
    st = fit ? cls_fit_transform(ctx, &p, &in, &out, &fitted) : cls_transform(ctx, &p, s, &in, &out);
    Py_END_ALLOW_THREADS
    if (st != CLS_OK) return clsext_raise(st, cls_last_error(ctx));
    if (!fit) Py_RETURN_NONE;
    return clsext_stats_wrap(fitted);
}
