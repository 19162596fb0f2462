/* clscale._clscale.merge_columns: Chan's merge of two tables of
 * cls_column_stats held in Python buffers, for the Python package's
 * distributed fits (python/clscale/_mpi.py: the operation of an mpi4py
 * Allreduce; _dask.py merges whole Stats instead).
 *
 * The table is the library's own layout (two uint64_t, eight doubles, 80
 * bytes per column, native byte order): the numpy structured dtype
 * clscale._mpi.COLUMN describes it. Each pair of entries is merged by
 * cls_column_stats_merge after putting the two operands in one order by
 * their bytes, as libclscale_mpi's MPI operation does (src/mpi/mpi_reduce.c):
 * a (+) b and b (+) a then give the same bits, so that two ranks combining
 * the same partial results in opposite roles agree to the bit. */
#include <string.h>

#include "ext.h"

_Static_assert(sizeof(cls_column_stats) == 80, "cls_column_stats: two uint64_t then eight doubles");

/* One table argument as a contiguous buffer of whole columns. */
static int columns_of(PyObject *obj, Py_buffer *view, int writable, const char *what)
{
    if (PyObject_GetBuffer(obj, view, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->len % (Py_ssize_t)sizeof(cls_column_stats)) {
        PyErr_Format(PyExc_ValueError, "merge_columns: %s holds %zd bytes, not a whole number of %zu-byte columns",
                     what, view->len, sizeof(cls_column_stats));
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

PyObject *clsext_merge_columns(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *a_obj, *b_obj;
    if (!PyArg_ParseTuple(args, "OO", &a_obj, &b_obj)) return NULL;
    Py_buffer a, b;
    if (columns_of(a_obj, &a, 0, "the first table") < 0) return NULL;
    if (columns_of(b_obj, &b, 1, "the second table") < 0) {
        PyBuffer_Release(&a);
        return NULL;
    }
    if (a.len != b.len) {
        PyErr_Format(PyExc_ValueError, "merge_columns: tables of %zd and %zd bytes", a.len, b.len);
        PyBuffer_Release(&a);
        PyBuffer_Release(&b);
        return NULL;
    }
    size_t n = (size_t)a.len / sizeof(cls_column_stats);
    const unsigned char *ap = a.buf;
    unsigned char *bp = b.buf;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        /* buffers from MPI need not be aligned for the struct: copy */
        cls_column_stats x, y;
        memcpy(&x, ap + i * sizeof x, sizeof x);
        memcpy(&y, bp + i * sizeof y, sizeof y);
        if (memcmp(&x, &y, sizeof x) < 0) {
            cls_column_stats_merge(&x, &y, 1);
            memcpy(bp + i * sizeof x, &x, sizeof x);
        } else {
            cls_column_stats_merge(&y, &x, 1);
            memcpy(bp + i * sizeof y, &y, sizeof y);
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}
