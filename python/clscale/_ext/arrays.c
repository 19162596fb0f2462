/* numpy arrays -> cls_array views: the only door by which Python data
 * reaches the library. A view points into the array's own buffer (no copy);
 * the caller keeps a reference to the array for as long as the view is
 * used. Anything the library could misread is refused here with a
 * ValueError, before any work. */
#include "ext.h"

size_t clsext_bytes(const cls_array *a)
{
    return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? sizeof(double) : sizeof(float));
}

int clsext_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const char *pa = a, *pb = b;
    return na && nb && pa < pb + nb && pb < pa + na;
}

/* The checks every array passes: ndarray, float32/float64 native, C order,
 * aligned, no empty dimension. Sets *dtype. */
static int check_common(PyObject *obj, const char *what, cls_dtype *dtype, PyArrayObject **arr)
{
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_ValueError, "%s must be a numpy.ndarray, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int t = PyArray_TYPE(a);
    if ((t != NPY_FLOAT32 && t != NPY_FLOAT64) || !PyArray_ISNOTSWAPPED(a)) {
        PyErr_Format(PyExc_ValueError, "%s must be float32 or float64 in native byte order", what);
        return -1;
    }
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a)) {
        PyErr_Format(PyExc_ValueError, "%s must be C-contiguous and aligned", what);
        return -1;
    }
    for (int i = 0; i < PyArray_NDIM(a); i++)
        if (PyArray_DIM(a, i) < 1) {
            PyErr_Format(PyExc_ValueError, "%s has an empty dimension (shape axis %d is 0)", what, i);
            return -1;
        }
    *dtype = t == NPY_FLOAT64 ? CLS_F64 : CLS_F32;
    *arr = a;
    return 0;
}

int clsext_data_array(PyObject *obj, const char *what, int writable, cls_array *out)
{
    PyArrayObject *a;
    cls_dtype dt;
    if (check_common(obj, what, &dt, &a) < 0) return -1;
    int nd = PyArray_NDIM(a);
    if (nd != 2 && nd != 3) {
        PyErr_Format(PyExc_ValueError, "%s must be 2-D (rows x cols) or 3-D (batch x rows x cols), not %d-D",
                     what, nd);
        return -1;
    }
    if (writable && !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s is read-only", what);
        return -1;
    }
    npy_intp *d = PyArray_DIMS(a);
    out->data = PyArray_DATA(a);
    out->dtype = dt;
    out->batch = nd == 3 ? (size_t)d[0] : 1;
    out->rows = (size_t)d[nd - 2];
    out->cols = (size_t)d[nd - 1];
    return 0;
}

int clsext_factors_array(PyObject *obj, cls_dtype dtype, cls_array *out)
{
    PyArrayObject *a;
    cls_dtype dt;
    if (check_common(obj, "factors", &dt, &a) < 0) return -1;
    int nd = PyArray_NDIM(a);
    if (nd > 3) {
        PyErr_Format(PyExc_ValueError, "factors must have at most 3 dimensions, not %d", nd);
        return -1;
    }
    if (dt != dtype) {
        PyErr_Format(PyExc_ValueError, "factors are %s but the data is %s", dt == CLS_F64 ? "float64" : "float32",
                     dtype == CLS_F64 ? "float64" : "float32");
        return -1;
    }
    size_t dim[3] = {1, 1, 1};
    for (int i = 0; i < nd; i++) dim[3 - nd + i] = (size_t)PyArray_DIM(a, i);
    out->data = PyArray_DATA(a);
    out->dtype = dt;
    out->batch = dim[0];
    out->rows = dim[1];
    out->cols = dim[2];
    return 0;
}
