/* The module clscale._clscale: its init and functions. The types live in
 * context.c and stats.c, array checks in arrays.c, files in files.c, the exception and numpy's
 * API table in errors.c (ext.h is the map). */
#include "ext.h"

#include <ctype.h>
#include <string.h>

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
    {"stream_file", (PyCFunction)(void (*)(void))clsext_stream_file, METH_VARARGS | METH_KEYWORDS,
     "stream_file(ctx, in_path, out_path, stats=None, *, scaler=NONE, scope=SCOPE_MATRIX, lo=0.0, hi=0.0, "
     "clip=False, inverse=False, factors=None, fitted=True, qmin=0.0, qmax=0.0, no_centering=False, "
     "no_scaling=False, unit_variance=False, clean=None, clean_shape=(0, 0), buffer_bytes=0) -> Stats or None: "
     "cls_fit_transform() of .npy paths, one .npy file to another through a fixed pool of buffers (fits when stats is None). "
     "clean=dict (clean()'s keywords) adds the cleaning stage ahead of the scaler and returns (Stats or None, "
     "missing, clipped, fill, iterations), the arrays clean_shape=(groups, cols) as clean() gives them."},
    {"stream_fit", (PyCFunction)(void (*)(void))clsext_stream_fit, METH_VARARGS | METH_KEYWORDS,
     "stream_fit(ctx, path, offset, dtype, (batch, rows, cols), *, scaler=NONE, scope=SCOPE_MATRIX, lo=0.0, "
     "hi=0.0, clip=False, qmin=0.0, qmax=0.0, no_centering=False, no_scaling=False, unit_variance=False, "
     "buffer_bytes=0) -> Stats: cls_fit() of a file of the array stored at byte `offset` of `path`."},
    {"buffer_context", clsext_buffer_context, METH_VARARGS,
     "buffer_context(cl_context, cl_device, cl_queue) -> capsule: a context on the caller's OpenCL objects."},
    {"buffer_call", (PyCFunction)(void (*)(void))clsext_buffer_call, METH_VARARGS | METH_KEYWORDS,
     "buffer_call(ctx, op, mem_in, off_in, mem_out, off_out, dtype, batch, rows, cols, *, scaler, scope, lo, hi,\n"
     "clip, inverse, stats): fit_transform (-> Stats) or transform (-> None) of cl_mem buffers."},
    {"merge_columns", clsext_merge_columns, METH_VARARGS,
     "merge_columns(a, b): b[i] = a[i] (+) b[i] for two equal tables of cls_column_stats in buffers\n"
     "(Chan's formulas, the operands ordered by their bytes so that the result does not depend on\n"
     "which side holds which). b must be writable."},
    {"clean", (PyCFunction)(void (*)(void))clsext_clean, METH_VARARGS | METH_KEYWORDS,
     "clean(ctx, x, out, mask=None, moments=False, counts=True, bounds=True, *, scope=0, impute=0, fill_value=0.0, missing_value=None, sigma=0.0, "
     "sigma_lower=0.0, sigma_upper=0.0, maxiters=0, center=0, spread=0, mode=0) -> (missing, clipped, fill, "
     "iterations, lower, upper, mean, m2): cls_fit_transform() with no scaler into out (which may be x, or None: nothing written "
     "but the mask and the per-column outputs), and into mask (bool or uint8, x's size) 1 where a value is "
     "missing or clipped; with moments, the mean and m2 of the values kept (else None); without counts,\n"
     "None for missing, clipped and fill, without bounds for lower and upper (not computed into arrays).\n"
     "combine=, combine_stats= (both or neither): several processes' cleaning (cls_combine): combine as "
     "quantiles', combine_stats(error, cols) merges the uint8 bytes of n cls_column_stats in place; a "
     "process without rows passes x of 0 rows, out None, scope SCOPE_BATCH."},
    {"bin_data", (PyCFunction)(void (*)(void))clsext_bin_data, METH_VARARGS | METH_KEYWORDS,
     "bin_data(ctx, x, out, *, scope=0, bin_rows, bin_stat, [the cleaning and trend keywords of clean]): "
     "cls_fit_transform() (bins reduced) into out (batch x ceil(rows / bin_rows) x cols): one row per bin."},
    {"describe", (PyCFunction)(void (*)(void))clsext_describe, METH_VARARGS | METH_KEYWORDS,
     "describe(ctx, x, *, scope=SCOPE_MATRIX, sigma=3.0) -> dict: cls_describe, each statistic a groups x cols "
     "array (count, missing, min, max, mean, std, 25%, 50%, 75%, outliers) and duplicate_rows per group."},
    {"populate", clsext_populate, METH_O,
     "populate(array) -> bool: maps and zeroes the pages wholly inside a new C-contiguous array before a device "
     "writes it (madvise MADV_POPULATE_WRITE; contents unchanged); False where the kernel cannot."},
    {"huge", clsext_huge, METH_O,
     "huge(array) -> bool: whether the whole huge pages inside a new C-contiguous array will be transparent huge "
     "pages (advised with madvise MADV_HUGEPAGE where the kernel gives them on advice); False: small pages."},
    {"lease", clsext_lease, METH_VARARGS,
     "lease(block, nbytes, on_release) -> Lease: the first nbytes of a kept 1-D uint8 block as a writable buffer "
     "(np.frombuffer); when the last array over it goes, the block's whole huge pages are left for the kernel "
     "to reclaim (madvise MADV_FREE) and on_release() is called."},
    {"inf_columns", clsext_inf_columns, METH_VARARGS,
     "inf_columns(x) -> bool array (groups, cols) or None: the columns of a batch x rows x cols array that hold "
     "+-Inf (None: none does), a scan on the host with the GIL released."},
    {"medians", (PyCFunction)(void (*)(void))clsext_medians, METH_VARARGS | METH_KEYWORDS,
     "medians(ctx, x, *, scope=SCOPE_MATRIX, combine=None) -> array: cls_medians (numpy's nanmedian, exact) "
     "per group, groups x cols; combine: as quantiles'."},
    {"quantiles", (PyCFunction)(void (*)(void))clsext_quantiles, METH_VARARGS | METH_KEYWORDS,
     "quantiles(ctx, x, q, *, scope=SCOPE_MATRIX, repeats=1, combine=None) -> (array, list of float): "
     "cls_quantiles (numpy's nanquantile, exact) per group, groups x len(q) x cols, each call timed in C. "
     "combine(error, counts): several processes' counts summed after each pass (cls_quantiles; "
     "x may then have no rows)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_clscale",
    "The compiled part of clscale: the C library's contexts and statistics over numpy arrays.\n"
    "Use the estimators of the package `clscale`; this layer accepts only C-contiguous\n"
    "float32/float64 arrays and raises ValueError for anything else.",
    -1, methods, NULL, NULL, NULL, NULL,
};

/* Whether scaler s fuses with a cleaning stage: the planner's rule for a
 * scaler (plan/route.c's cls_route_fuses) is that its descriptor needs no
 * exact quantiles, which the public API tells without a device:
 * cls_stats_create refuses statistics without quantiles for a scaler whose
 * descriptor needs them. (It leaves this thread's last error set then;
 * nothing reads it.) */
static int scaler_fuses(cls_scaler s)
{
    cls_stats_info info = {.scaler = s, .scope = CLS_SCOPE_MATRIX, .dtype = CLS_F64, .groups = 1, .cols = 1,
                           .has_moments = 1};
    cls_column_stats empty = {.count = 0};
    cls_stats *st = NULL;
    cls_status rc = cls_stats_create(&info, &empty, &st);
    cls_stats_destroy(st);
    return rc == CLS_OK;
}

/* The scalers, from the library's table (cls_scaler_name): each its tool
 * name in capitals (MINMAX, ZSCORE, ..., NONE) for its code, SCALERS,
 * {tool name: code}, and FUSES, the frozenset of the codes of the scalers
 * that fuse with a cleaning stage in its last pass (scaler_fuses). The
 * values of cls_scaler run from CLS_NONE up, with no gap, as far as the
 * table goes. */
static int add_scalers(PyObject *m)
{
    PyObject *all = PyDict_New();
    PyObject *fuse = PySet_New(NULL);
    if (!all || !fuse) {
        Py_XDECREF(all);
        Py_XDECREF(fuse);
        return -1;
    }
    for (int s = CLS_NONE;; s++) {
        const char *name = cls_scaler_name((cls_scaler)s);
        if (!name) break;
        char upper[32];
        size_t n = strlen(name);
        if (n >= sizeof upper) n = sizeof upper - 1;
        for (size_t i = 0; i < n; i++) upper[i] = (char)toupper((unsigned char)name[i]);
        upper[n] = '\0';
        PyObject *code = PyLong_FromLong(s);
        int bad = !code || PyDict_SetItemString(all, name, code) < 0 || PyModule_AddIntConstant(m, upper, s) < 0 ||
                  (s != CLS_NONE && scaler_fuses((cls_scaler)s) && PySet_Add(fuse, code) < 0);
        Py_XDECREF(code);
        if (bad) {
            Py_DECREF(all);
            Py_DECREF(fuse);
            return -1;
        }
    }
    PyObject *fuses = PyFrozenSet_New(fuse);
    Py_DECREF(fuse);
    if (!fuses || PyModule_AddObject(m, "FUSES", fuses) < 0) {
        Py_XDECREF(fuses);
        Py_DECREF(all);
        return -1;
    }
    if (PyModule_AddObject(m, "SCALERS", all) < 0) {
        Py_DECREF(all);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__clscale(void)
{
    if (clsext_numpy_init() < 0) return NULL;
    if (PyType_Ready(&clsext_context_type) < 0 || PyType_Ready(&clsext_stats_type) < 0 ||
        PyType_Ready(&clsext_lease_type) < 0)
        return NULL;
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
    if (add_scalers(m) < 0 || PyModule_AddIntConstant(m, "SCOPE_MATRIX", CLS_SCOPE_MATRIX) < 0 ||
        PyModule_AddIntConstant(m, "SCOPE_BATCH", CLS_SCOPE_BATCH) < 0 ||
        PyModule_AddIntConstant(m, "F32", CLS_F32) < 0 || PyModule_AddIntConstant(m, "F64", CLS_F64) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
