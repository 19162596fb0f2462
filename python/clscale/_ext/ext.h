/* What the files of the extension module clscale._clscale share.
 *
 * The extension is a thin layer over include/clscale.h: it checks numpy
 * arrays and turns them into cls_array views (no copy), runs the library
 * with the GIL released, and turns statuses into Python exceptions that
 * carry cls_last_error(). Every conversion of foreign input (lists, other
 * dtypes, Fortran order) is the pure-Python layer's; here anything but a
 * C-contiguous, aligned, native float32/float64 array is a ValueError, so
 * that no input can reach the library in a shape it does not expect.
 *
 *   module.c   module init, ClscaleError, statuses -> exceptions, version
 *   arrays.c   numpy arrays -> cls_array, shape and overlap checks
 *   context.c  Context: devices, fit, transform, fit_transform, timed calls
 *   buffers.c  data already on a device: contexts on a caller's cl_context,
 *              calls on cl_mem buffers (pyopencl arrays, clscale/_device.py)
 *   stats.c    Stats: fitted statistics as numpy arrays, params, merge,
 *              save/load, pickling
 *   cleaning.c clean, quantiles: the cleaning stage, exact quantiles
 *   clean_opts.c  the cleaning options of clean() and fit_transform(clean=)
 *   scan.c     inf_columns: the columns numpy ranks +-Inf in (the functions)
 *   pages.c    populate, huge: how the pages of a new output get mapped before a device writes it
 *   lease.c    Lease: a kept output block lent to arrays, handed back when they go
 *   files.c    stream_file, stream_fit: .npy files larger than memory,
 *              file to file (cls_fit_transform on CLS_IN_NPY arrays)

 *   merge.c    merge_columns: Chan's merge of raw column tables (MPI) */
#ifndef CLSCALE_PY_EXT_H
#define CLSCALE_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL clscale_ARRAY_API
#ifndef CLSCALE_EXT_MAIN
#define NO_IMPORT_ARRAY
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "clscale.h"

/* ---- errors.c ---- */

/* Imports numpy's C API; -1 with an exception set on failure. */
int clsext_numpy_init(void);

extern PyObject *clsext_error;   /* clscale.ClscaleError (RuntimeError) */

/* Raises the exception for `st` with `msg` (ValueError for CLS_E_ARG,
 * MemoryError-like ClscaleError for the rest) and returns NULL. The
 * exception's args are (message,); its attributes `status` (the
 * cls_status name) and `code` (the number) say which. */
PyObject *clsext_raise(cls_status st, const char *msg);

/* ---- arrays.c ---- */

/* A data array the library may read (and, with `writable`, write): numpy
 * ndarray, float32 or float64 in native byte order, C-contiguous, aligned,
 * 2-D (rows x cols: batch 1) or 3-D (batch x rows x cols), every dimension
 * at least 1. On failure raises ValueError naming `what` and returns -1. */
int clsext_data_array(PyObject *obj, const char *what, int writable, cls_array *out);

/* Factors for a discount: ndarray of the data's dtype, C-contiguous,
 * aligned, 0-D to 3-D (leading dimensions of 1 added), finite. */
int clsext_factors_array(PyObject *obj, cls_dtype dtype, cls_array *out);

/* 1 when [a, a + na) and [b, b + nb) share a byte. */
int clsext_overlap(const void *a, size_t na, const void *b, size_t nb);
size_t clsext_bytes(const cls_array *a);

/* ---- buffers.c ---- */

/* buffer_context(cl_context, cl_device, cl_queue) -> capsule */
PyObject *clsext_buffer_context(PyObject *self, PyObject *args);
/* buffer_call(capsule, op, mem_in, off_in, mem_out, off_out, dtype, batch, rows, cols, **pipeline) */
PyObject *clsext_buffer_call(PyObject *self, PyObject *args, PyObject *kwds);

/* ---- context.c ---- */

extern PyTypeObject clsext_context_type;

/* The size of the buffer a failed call's message is copied into. */
#define CLSEXT_MSG_LEN 4096

/* Runs fn(ctx, arg) on the Context `obj`'s cls_context, under its lock with
 * the GIL released. Returns 0 with *st set (and, when it is not CLS_OK, the
 * message in msg, CLSEXT_MSG_LEN bytes), or -1 with an exception when obj
 * is not a usable Context (closed, another process's, another type). */
int clsext_context_call(PyObject *obj, cls_status (*fn)(cls_context *, void *), void *arg, cls_status *st,
                        char *msg);

/* ---- stats.c ---- */

/* What the Python layer asks of every fitted column, counted in one pass
 * (Stats.summary()), so that it touches no per-column array on the common
 * path: a fit of seed-A's shape has 1.8 million columns. */
typedef struct {
    Py_ssize_t columns, empty;           /* count == 0 */
    uint64_t count_min, count_max;       /* over the columns */
    Py_ssize_t zero_range;               /* count > 0, max == min */
    Py_ssize_t tiny_range;               /* 0 < max - min < 10 eps(dtype), in dtype */
    Py_ssize_t const_var;                /* scikit-learn's near-constant test on the variance */
    Py_ssize_t const_var_nonzero;        /* ... of those, m2 > 0 */
    Py_ssize_t m2_redo;                  /* float32 moments out of float's range: m2 not
                                            finite (min and max finite), or below
                                            count 2^-100 with max > min */
} clsext_summary;

typedef struct {
    PyObject_HEAD
    cls_stats *s;   /* never NULL once constructed; never changed after */
    int have_summary;
    clsext_summary sum;
} clsext_stats;

extern PyTypeObject clsext_stats_type;

/* A new Stats owning `s` (destroyed on failure). */
PyObject *clsext_stats_wrap(cls_stats *s);
/* The cls_stats of a Stats, or NULL with TypeError set. */
const cls_stats *clsext_stats_of(PyObject *obj);

/* The module-level functions stats.c defines. */
PyObject *clsext_stats_load(PyObject *self, PyObject *args);

/* ---- cleaning.c ---- */

/* The module-level functions cleaning.c defines: clean (cls_fit_transform),
 * quantiles (cls_quantiles, timed), medians (cls_medians) and describe
 * (cls_describe). */
PyObject *clsext_clean(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *clsext_bin_data(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *clsext_quantiles(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *clsext_medians(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *clsext_describe(PyObject *self, PyObject *args, PyObject *kwds);

/* ---- scan.c ---- */

/* inf_columns(x) -> bool array (batch, cols), or None when no value of x
 * is +-Inf. */
PyObject *clsext_inf_columns(PyObject *self, PyObject *args);

/* ---- pages.c ---- */

/* populate(array) -> bool: the array's whole pages mapped and zeroed
 * (MADV_POPULATE_WRITE; its data unchanged); False where the kernel does
 * not do it. */
PyObject *clsext_populate(PyObject *self, PyObject *arg);

/* huge(array) -> bool: whether the array's whole huge pages will be
 * transparent huge pages (advised with MADV_HUGEPAGE where the kernel
 * wants advice): then the device's threads fault them in as they write. */
PyObject *clsext_huge(PyObject *self, PyObject *arg);

/* ---- lease.c ---- */

extern PyTypeObject clsext_lease_type;

/* lease(block, nbytes, on_release) -> Lease: the first nbytes of `block`
 * (a writeable contiguous 1-D uint8 array) as a writable buffer; when the
 * lease goes (the last array over it), the block's whole huge pages are
 * given to the kernel to reclaim if it must (MADV_FREE) and on_release()
 * is called. */
PyObject *clsext_lease(PyObject *self, PyObject *args);

/* ---- clean_opts.c ---- */

/* Fills *c (zeroed first; output pointers NULL) and *scope (may be NULL)
 * from the dict `kwds` (NULL: no option) of cleaning keywords: scope,
 * impute, fill_value, missing_value (None or a number), sigma,
 * sigma_lower, sigma_upper, maxiters, center, spread, mode. 0, or -1 with
 * an exception set. */
int clsext_clean_options(PyObject *kwds, cls_clean *c, int *scope);

/* ---- files.c ---- */

/* The module-level functions files.c defines. */
PyObject *clsext_stream_file(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *clsext_stream_fit(PyObject *self, PyObject *args, PyObject *kwds);

/* ---- merge.c ---- */

/* merge_columns(a, b): b[i] = a[i] (+) b[i] over two buffers of
 * cls_column_stats of the same length (b writable). */
PyObject *clsext_merge_columns(PyObject *self, PyObject *args);

#endif
