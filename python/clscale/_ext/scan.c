/* inf_columns: which columns of a batch x rows x cols array hold +-Inf.
 * numpy's quantiles and medians rank +-Inf where the library skips them,
 * so clscale.nanquantile and nanmedian hand such columns to numpy
 * (_functions.py). A plain loop over the rows in memory order, the GIL
 * released, so that it runs in a thread beside the devices: one read of
 * the data (numpy's isinf and any over slices took twice as long on
 * seed-A, 0.1 s, and made two temporaries per slice). */
#include <math.h>
#include <string.h>

#include "ext.h"

/* scan_f64, scan_f32: whether x holds +-Inf; hit[b * cols + c] set for
 * each column c of matrix b that does */
#define SCAN(NAME, T, ABS)                                                            \
    static int NAME(const T *restrict x, size_t batch, size_t rows, size_t cols, npy_bool *restrict hit) \
    {                                                                                 \
        int any = 0;                                                                  \
        for (size_t b = 0; b < batch; b++) {                                          \
            npy_bool *h = hit + b * cols;                                             \
            for (size_t r = 0; r < rows; r++) {                                       \
                const T *row = x + (b * rows + r) * cols;                             \
                unsigned char seen = 0;                                               \
                size_t c = 0;                                                         \
                /* blocks of 8: -O2 vectorises blocks of a known size */              \
                for (; c + 8 <= cols; c += 8)                                         \
                    for (size_t k = 0; k < 8; k++) {                                  \
                        unsigned char inf = ABS(row[c + k]) == INFINITY;              \
                        h[c + k] |= inf;                                              \
                        seen |= inf;                                                  \
                    }                                                                 \
                for (; c < cols; c++) {                                               \
                    unsigned char inf = ABS(row[c]) == INFINITY;                      \
                    h[c] |= inf;                                                      \
                    seen |= inf;                                                      \
                }                                                                     \
                any |= seen;                                                          \
            }                                                                         \
        }                                                                             \
        return any;                                                                   \
    }
SCAN(scan_f64, double, fabs)
SCAN(scan_f32, float, fabsf)
#undef SCAN

PyObject *clsext_inf_columns(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x;
    if (!PyArg_ParseTuple(args, "O:inf_columns", &x)) return NULL;
    cls_array a;
    if (clsext_data_array(x, "x", 0, &a) < 0) return NULL;
    npy_intp dims[2] = {(npy_intp)a.batch, (npy_intp)a.cols};
    PyObject *hit = PyArray_ZEROS(2, dims, NPY_BOOL, 0);
    if (!hit) return NULL;
    npy_bool *h = PyArray_DATA((PyArrayObject *)hit);
    int any;
    Py_BEGIN_ALLOW_THREADS
    any = a.dtype == CLS_F64 ? scan_f64(a.data, a.batch, a.rows, a.cols, h)
                             : scan_f32(a.data, a.batch, a.rows, a.cols, h);
    Py_END_ALLOW_THREADS
    if (any) return hit;
    Py_DECREF(hit);
    Py_RETURN_NONE;
}
