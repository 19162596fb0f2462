/* The lowest file of the extension: numpy's C API table (imported once by
 * clsext_numpy_init()), the ClscaleError exception and the mapping of a
 * cls_status to a Python exception. Every other file calls it; it calls only
 * Python, numpy and the library. */
#define CLSCALE_EXT_MAIN
#include "ext.h"

int clsext_numpy_init(void)
{
    import_array1(-1);
    return 0;
}

PyObject *clsext_error;

PyObject *clsext_raise(cls_status st, const char *msg)
{
    const char *name = cls_status_str(st);
    /* "CLS_E_IO: ..." : the name is the part before the colon */
    size_t n = 0;
    while (name[n] && name[n] != ':') n++;
    PyObject *type = st == CLS_E_ARG ? PyExc_ValueError : clsext_error;
    PyObject *exc = PyObject_CallFunction(type, "s", msg && *msg ? msg : name);
    if (!exc) return NULL;
    PyObject *sname = PyUnicode_FromStringAndSize(name, (Py_ssize_t)n);
    PyObject *code = PyLong_FromLong((long)st);
    if (!sname || !code || PyObject_SetAttrString(exc, "status", sname) < 0 ||
        PyObject_SetAttrString(exc, "code", code) < 0) {
        Py_XDECREF(sname);
        Py_XDECREF(code);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(sname);
    Py_DECREF(code);
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
    return NULL;
}
