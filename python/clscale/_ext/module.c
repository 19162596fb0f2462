/* The module clscale._clscale: its init and functions. The types live in
 * context.c and stats.c, array checks in arrays.c, the exception and numpy's
 * API table in errors.c (ext.h is the map). */
#include "ext.h"

static PyObject *version(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyUnicode_FromString(cls_version());
}

static PyMethodDef methods[] = {
    {"version", version, METH_NOARGS, "version() -> str: the linked library's version."},
    {"load_stats", clsext_stats_load, METH_VARARGS,
     "load_stats(path) -> Stats: reads a statistics file (`clscale normalize --stats-out`)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_clscale",
    "The compiled part of clscale: the C library's contexts and statistics over numpy arrays.\n"
    "Use the estimators of the package `clscale`; this layer accepts only C-contiguous\n"
    "float32/float64 arrays and raises ValueError for anything else.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__clscale(void)
{
    if (clsext_numpy_init() < 0) return NULL;
    if (PyType_Ready(&clsext_context_type) < 0 || PyType_Ready(&clsext_stats_type) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    clsext_error = PyErr_NewExceptionWithDoc(
        "clscale.ClscaleError",
        "A device, driver, file or memory failure of the clscale library. str() is the\n"
        "library's message (cls_last_error); `status` names the cls_status\n"
        "(\"CLS_E_DEVICE\", \"CLS_E_IO\", ...) and `code` is its number.",
        PyExc_RuntimeError, NULL);
    if (!clsext_error) goto fail;
    Py_INCREF(clsext_error);
    if (PyModule_AddObject(m, "ClscaleError", clsext_error) < 0) {
        Py_DECREF(clsext_error);
        goto fail;
    }
    Py_INCREF(&clsext_context_type);
    if (PyModule_AddObject(m, "Context", (PyObject *)&clsext_context_type) < 0) {
        Py_DECREF(&clsext_context_type);
        goto fail;
    }
    Py_INCREF(&clsext_stats_type);
    if (PyModule_AddObject(m, "Stats", (PyObject *)&clsext_stats_type) < 0) {
        Py_DECREF(&clsext_stats_type);
        goto fail;
    }
    if (PyModule_AddIntConstant(m, "NONE", CLS_NONE) < 0 || PyModule_AddIntConstant(m, "MINMAX", CLS_MINMAX) < 0 ||
        PyModule_AddIntConstant(m, "ZSCORE", CLS_ZSCORE) < 0 ||
        PyModule_AddIntConstant(m, "DECIMAL", CLS_DECIMAL) < 0 ||
        PyModule_AddIntConstant(m, "SCOPE_MATRIX", CLS_SCOPE_MATRIX) < 0 ||
        PyModule_AddIntConstant(m, "SCOPE_BATCH", CLS_SCOPE_BATCH) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
