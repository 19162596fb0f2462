/* clscale._clscale.Stats: fitted statistics (a cls_stats), immutable once
 * made, so that a transform may read them with the GIL released while
 * other threads hold the same object. Merging makes a new one.
 *
 * Python sees: `info` (a dict of the description), `columns()` (numpy
 * arrays of groups x cols), `params(inverse)` (the affine map a transform
 * applies, from cls_stats_params), `merged(other)` (Chan), `save(path)`,
 * module-level load_stats(path), and pickling through
 * Stats.from_state(info, columns) (cls_stats_create, which checks every
 * column again: a pickle is not trusted). */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

PyObject *clsext_stats_wrap(cls_stats *s)
{
    clsext_stats *o = PyObject_New(clsext_stats, &clsext_stats_type);
    if (!o) {
        cls_stats_destroy(s);
        return NULL;
    }
    o->s = s;
    o->have_summary = 0;
    return (PyObject *)o;
}

const cls_stats *clsext_stats_of(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &clsext_stats_type) || !((clsext_stats *)obj)->s) {
        PyErr_Format(PyExc_ValueError, "stats must be a clscale Stats, not %.100s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return ((clsext_stats *)obj)->s;
}

static void stats_dealloc(clsext_stats *self)
{
    cls_stats_destroy(self->s);
    PyObject_Free(self);
}

static cls_stats_info info_of(const clsext_stats *self)
{
    cls_stats_info in;
    cls_stats_describe(self->s, &in);
    return in;
}

static PyObject *stats_info(clsext_stats *self, void *closure)
{
    (void)closure;
    cls_stats_info in = info_of(self);
    return Py_BuildValue("{s:i,s:i,s:d,s:d,s:O,s:s,s:n,s:n,s:K,s:O}", "scaler", (int)in.scaler, "scope",
                         (int)in.scope, "lo", in.lo, "hi", in.hi, "clip", in.clip ? Py_True : Py_False, "dtype",
                         in.dtype == CLS_F64 ? "float64" : "float32", "groups", (Py_ssize_t)in.groups, "cols",
                         (Py_ssize_t)in.cols, "rows", (unsigned long long)in.rows, "has_moments",
                         in.has_moments ? Py_True : Py_False);
}

/* ---- columns ---- */

static const char *const field_names[7] = {"count", "missing", "min", "max", "mean", "m2", "absmax"};

/* columns(fields=None): every field, or those named (a str or a sequence
 * of str): a caller wanting the counts alone (the empty columns of a
 * million-column fit) converts 8 MB, not 56. One pass over the table,
 * straight from its entries (not a checked copy of each). */
static PyObject *stats_columns(clsext_stats *self, PyObject *args)
{
    PyObject *want = Py_None;
    if (args && !PyArg_ParseTuple(args, "|O", &want)) return NULL;
    int on[7] = {1, 1, 1, 1, 1, 1, 1};
    if (want != Py_None) {
        PyObject *seq = PyUnicode_Check(want) ? PyTuple_Pack(1, want) : PySequence_Tuple(want);
        if (!seq) return NULL;
        memset(on, 0, sizeof on);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(seq); j++) {
            PyObject *it = PyTuple_GET_ITEM(seq, j);
            const char *name = PyUnicode_Check(it) ? PyUnicode_AsUTF8(it) : NULL;
            int f = 0;
            while (name && f < 7 && strcmp(name, field_names[f])) f++;
            if (!name || f == 7) {
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError, "columns(): unknown field %R", it);
                Py_DECREF(seq);
                return NULL;
            }
            on[f] = 1;
        }
        Py_DECREF(seq);
    }
    cls_stats_info in = info_of(self);
    npy_intp dims[2] = {(npy_intp)in.groups, (npy_intp)in.cols};
    size_t n = in.groups * in.cols;
    const cls_column_stats *c = cls_stats_columns(self->s);
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    void *out[7] = {NULL};
    for (int f = 0; f < 7; f++) {
        if (!on[f]) continue;
        PyObject *a = PyArray_SimpleNew(2, dims, f < 2 ? NPY_UINT64 : NPY_FLOAT64);
        if (!a || PyDict_SetItemString(d, field_names[f], a) < 0) {
            Py_XDECREF(a);
            Py_DECREF(d);
            return NULL;
        }
        out[f] = PyArray_DATA((PyArrayObject *)a);
        Py_DECREF(a); /* the dict holds it */
    }
    /* one pass over the table (its entries are 80 bytes: a pass per field
     * would read it seven times) */
    npy_uint64 *cnt = out[0], *mis = out[1];
    double *mn = out[2], *mx = out[3], *me = out[4], *m2 = out[5], *am = out[6];
    for (size_t i = 0; i < n; i++) {
        if (cnt) cnt[i] = c[i].count;
        if (mis) mis[i] = c[i].missing;
        if (mn) mn[i] = c[i].min;
        if (mx) mx[i] = c[i].max;
        if (me) me[i] = c[i].mean;
        if (m2) m2[i] = c[i].m2;
        if (am) am[i] = c[i].absmax;
    }
    return d;
}

/* The exact quantiles of a robust fit, groups x 3 x cols: median, q_lo,
 * q_hi (the layout of quantiles(ctx, x, [0.5, qmin, qmax])); NaN where the
 * fit computed none (has_quantiles 0). */
static PyObject *stats_quantiles(clsext_stats *self, PyObject *unused)
{
    (void)unused;
    cls_stats_info in = info_of(self);
    npy_intp dims[3] = {(npy_intp)in.groups, 3, (npy_intp)in.cols};
    PyObject *a = PyArray_SimpleNew(3, dims, NPY_FLOAT64);
    if (!a) return NULL;
    double *q = PyArray_DATA((PyArrayObject *)a);
    /* straight from the table, as columns() reads it: an accessor call per
     * column cost more than a robust fit's selection of one-row groups */
    const cls_column_stats *c = cls_stats_columns(self->s);
    for (size_t g = 0; g < in.groups; g++) {
        double *md = q + g * 3 * in.cols, *lo = md + in.cols, *hi = lo + in.cols;
        const cls_column_stats *cg = c + g * in.cols;
        for (size_t k = 0; k < in.cols; k++) {
            md[k] = in.has_quantiles ? cg[k].median : Py_NAN;
            lo[k] = in.has_quantiles ? cg[k].q_lo : Py_NAN;
            hi[k] = in.has_quantiles ? cg[k].q_hi : Py_NAN;
        }
    }
    return a;
}

static PyObject *stats_params(clsext_stats *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"inverse", NULL};
    int inverse = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p", kwlist, &inverse)) return NULL;
    cls_stats_info in = info_of(self);
    npy_intp dims[2] = {(npy_intp)in.groups, (npy_intp)in.cols};
    PyObject *a[3] = {NULL};
    for (int k = 0; k < 3; k++)
        if (!(a[k] = PyArray_SimpleNew(2, dims, NPY_FLOAT64))) goto fail;
    for (size_t g = 0, i = 0; g < in.groups; g++)
    for (size_t k = 0; k < in.cols; k++, i++) {
        cls_affine m;
        cls_stats_params(self->s, g, k, inverse, &m);
        ((double *)PyArray_DATA((PyArrayObject *)a[0]))[i] = m.shift;
        ((double *)PyArray_DATA((PyArrayObject *)a[1]))[i] = m.scale;
        ((double *)PyArray_DATA((PyArrayObject *)a[2]))[i] = m.offset;
    }
    return Py_BuildValue("(NNN)", a[0], a[1], a[2]);
fail:
    for (int k = 0; k < 3; k++) Py_XDECREF(a[k]);
    return NULL;
}

/* ---- from state ---- */

static int get_item(PyObject *d, const char *key, PyObject **out)
{
    *out = PyDict_GetItemString(d, key); /* borrowed */
    if (!*out) {
        PyErr_Format(PyExc_ValueError, "statistics state lacks \"%s\"", key);
        return -1;
    }
    return 0;
}

static int info_from_dict(PyObject *d, cls_stats_info *in)
{
    PyObject *v;
    memset(in, 0, sizeof *in);
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_ValueError, "statistics info must be a dict");
        return -1;
    }
    long scaler, scope;
    Py_ssize_t groups, cols;
    unsigned long long rows;
    if (get_item(d, "scaler", &v) < 0 || (scaler = PyLong_AsLong(v)) == -1) goto bad;
    if (get_item(d, "scope", &v) < 0 || (scope = PyLong_AsLong(v)) == -1) goto bad;
    if (get_item(d, "lo", &v) < 0 || ((in->lo = PyFloat_AsDouble(v)) == -1 && PyErr_Occurred())) goto bad;
    if (get_item(d, "hi", &v) < 0 || ((in->hi = PyFloat_AsDouble(v)) == -1 && PyErr_Occurred())) goto bad;
    if (get_item(d, "clip", &v) < 0 || (in->clip = PyObject_IsTrue(v)) < 0) goto bad;
    if (get_item(d, "has_moments", &v) < 0 || (in->has_moments = PyObject_IsTrue(v)) < 0) goto bad;
    if (get_item(d, "groups", &v) < 0 || (groups = PyLong_AsSsize_t(v)) == -1) goto bad;
    if (get_item(d, "cols", &v) < 0 || (cols = PyLong_AsSsize_t(v)) == -1) goto bad;
    if (get_item(d, "rows", &v) < 0 || ((rows = PyLong_AsUnsignedLongLong(v)) == (unsigned long long)-1 &&
                                        PyErr_Occurred()))
        goto bad;
    if (get_item(d, "dtype", &v) < 0) goto bad;
    const char *dt = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (!dt || (strcmp(dt, "float32") && strcmp(dt, "float64"))) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "statistics dtype must be \"float32\" or \"float64\"");
        return -1;
    }
    if (scaler < INT_MIN || scaler > INT_MAX || !cls_scaler_name((cls_scaler)scaler) || scope < CLS_SCOPE_MATRIX || scope > CLS_SCOPE_BATCH ||
        groups < 1 || cols < 1) {
        PyErr_SetString(PyExc_ValueError, "statistics info: unknown scaler or scope, or an empty shape");
        return -1;
    }
    in->scaler = (cls_scaler)scaler;
    in->scope = (cls_scope)scope;
    in->dtype = strcmp(dt, "float64") ? CLS_F32 : CLS_F64;
    in->groups = (size_t)groups;
    in->cols = (size_t)cols;
    in->rows = rows;
    return 0;
bad:
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "statistics info holds a value of the wrong type or range");
    }
    return -1;
}

static PyObject *stats_from_state(PyObject *cls, PyObject *args)
{
    (void)cls;
    PyObject *dinfo, *dcols;
    if (!PyArg_ParseTuple(args, "OO!", &dinfo, &PyDict_Type, &dcols)) return NULL;
    cls_stats_info in;
    if (info_from_dict(dinfo, &in) < 0) return NULL;
    if (in.groups > (size_t)PY_SSIZE_T_MAX / in.cols / sizeof(cls_column_stats)) return PyErr_NoMemory();
    size_t n = in.groups * in.cols;
    PyArrayObject *arr[7] = {NULL};
    cls_column_stats *cols = NULL;
    cls_stats *tmp = NULL;
    PyObject *res = NULL;
    for (int f = 0; f < 7; f++) {
        PyObject *v;
        if (get_item(dcols, field_names[f], &v) < 0) goto out;
        arr[f] = (PyArrayObject *)PyArray_FROMANY(v, f < 2 ? NPY_UINT64 : NPY_FLOAT64, 0, 2,
                                                  NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST);
        if (!arr[f]) goto out;
        if ((size_t)PyArray_SIZE(arr[f]) != n) {
            PyErr_Format(PyExc_ValueError, "statistics column \"%s\" holds %zd values, not groups x cols = %zu",
                         field_names[f], (Py_ssize_t)PyArray_SIZE(arr[f]), n);
            goto out;
        }
    }
    /* the entries gathered in an empty statistics object's table (the
     * library keeps such tables between calls: a fresh one of a million
     * columns took a page fault per 4 KiB, more than its conversion) */
    cls_status st0 = cls_stats_create(&in, NULL, &tmp);
    if (st0 != CLS_OK || !(cols = cls_stats_columns(tmp))) {
        if (st0 == CLS_E_ARG) PyErr_SetString(PyExc_ValueError, "statistics info: an unknown scaler, scope or dtype");
        else PyErr_NoMemory();
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        cols[i].count = ((npy_uint64 *)PyArray_DATA(arr[0]))[i];
        cols[i].missing = ((npy_uint64 *)PyArray_DATA(arr[1]))[i];
        cols[i].min = ((double *)PyArray_DATA(arr[2]))[i];
        cols[i].max = ((double *)PyArray_DATA(arr[3]))[i];
        cols[i].mean = ((double *)PyArray_DATA(arr[4]))[i];
        cols[i].m2 = ((double *)PyArray_DATA(arr[5]))[i];
        cols[i].absmax = ((double *)PyArray_DATA(arr[6]))[i];
    }
    cls_stats *s = NULL;
    cls_status st = cls_stats_create(&in, cols, &s);
    if (st == CLS_E_ARG)
        PyErr_SetString(PyExc_ValueError,
                        "inconsistent statistics (range, scope and groups, or a column with min > max, a "
                        "non-finite value, absmax below |min| or |max|, negative m2, or z-score without moments)");
    else if (st != CLS_OK)
        clsext_raise(st, "out of memory for the statistics");
    else
        res = clsext_stats_wrap(s);
out:
    cls_stats_destroy(tmp);
    for (int f = 0; f < 7; f++) Py_XDECREF(arr[f]);
    return res;
}

static PyObject *stats_reduce(clsext_stats *self, PyObject *unused)
{
    (void)unused;
    PyObject *from_state = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_state");
    PyObject *info = from_state ? stats_info(self, NULL) : NULL;
    PyObject *cols = info ? stats_columns(self, NULL) : NULL; /* every field */
    if (!cols) {
        Py_XDECREF(from_state);
        Py_XDECREF(info);
        return NULL;
    }
    return Py_BuildValue("(N(NN))", from_state, info, cols);
}

/* ---- summary ---- */

/* Counts over columns [from, to) of the flat order (group-major). */
typedef struct {
    const cls_stats *s;
    cls_stats_info in;
    size_t from, to;
    clsext_summary out;
} summary_part;

static void *summarize_part(void *arg)
{
    summary_part *p = arg;
    const double eps64 = 2.220446049250313e-16;
    const float eps32 = 1.1920929e-07f;
    clsext_summary *out = &p->out;
    memset(out, 0, sizeof *out);
    out->count_min = UINT64_MAX;
    const cls_column_stats *all = cls_stats_columns((cls_stats *)p->s);
    for (size_t i = p->from; i < p->to; i++) {
        cls_column_stats c = all[i];
        if (c.count < out->count_min) out->count_min = c.count;
        if (c.count > out->count_max) out->count_max = c.count;
        if (c.count == 0) {
            out->empty++;
            continue;
        }
        if (c.max == c.min) out->zero_range++;
        /* scikit-learn's MinMaxScaler: data_range_ in the data's dtype
         * below 10 eps is taken as 1 */
        else if (p->in.dtype == CLS_F32 ? (float)c.max - (float)c.min < 10 * eps32 : c.max - c.min < 10 * eps64)
            out->tiny_range++;
        if (p->in.has_moments && p->in.dtype == CLS_F32 &&
            ((!isfinite(c.m2) && isfinite(c.min) && isfinite(c.max)) ||
             (c.max > c.min && c.m2 < ldexp((double)c.count, -100)))) {
            /* the device's float32 sum of squares overflowed (values past
             * ~1e19) or is below count 2^-100 (deviations below ~1e-15,
             * squares below FLT_MIN) in a column that is not constant: the
             * Python layer takes these moments again in float64
             * (repair_moments); until then they are not near-constant */
            out->m2_redo++;
        } else if (p->in.has_moments) {
            /* scikit-learn's StandardScaler: _is_constant_feature */
            double nn = (double)c.count, var = c.m2 / nn, b = nn * c.mean * eps64;
            if (var <= nn * eps64 * var + b * b) {
                out->const_var++;
                if (c.m2 > 0) out->const_var_nonzero++;
            }
        }
    }
    return NULL;
}

/* One pass over the statistics, read at memory speed; from 65536 columns
 * (5 MB of entries: a float32 seed-A matrix's 98450 are 7.9 MB, read on
 * the path of every fit_transform) it is split over two threads. */
static void summarize(const cls_stats *s, clsext_summary *out)
{
    summary_part part[2];
    cls_stats_describe(s, &part[0].in);
    size_t n = part[0].in.groups * part[0].in.cols;
    part[0].s = s;
    part[0].from = 0;
    part[0].to = n;
    part[1] = part[0];
    pthread_t t;
    int split = n >= ((size_t)1 << 16);
    if (split) {
        part[0].to = part[1].from = n / 2;
        if (pthread_create(&t, NULL, summarize_part, &part[1]) != 0) {
            split = 0;
            part[0].to = n;
        }
    }
    summarize_part(&part[0]);
    *out = part[0].out;
    if (split) {
        pthread_join(t, NULL);
        const clsext_summary *b = &part[1].out;
        if (b->count_min < out->count_min) out->count_min = b->count_min;
        if (b->count_max > out->count_max) out->count_max = b->count_max;
        out->empty += b->empty;
        out->zero_range += b->zero_range;
        out->tiny_range += b->tiny_range;
        out->const_var += b->const_var;
        out->const_var_nonzero += b->const_var_nonzero;
        out->m2_redo += b->m2_redo;
    }
    out->columns = (Py_ssize_t)n;
    if (n == 0) out->count_min = 0;
}

static PyObject *stats_summary(clsext_stats *self, PyObject *unused)
{
    (void)unused;
    if (!self->have_summary) {
        clsext_summary sum;
        Py_BEGIN_ALLOW_THREADS
        summarize(self->s, &sum);
        Py_END_ALLOW_THREADS
        self->sum = sum;
        self->have_summary = 1;
    }
    const clsext_summary *m = &self->sum;
    return Py_BuildValue("{s:n,s:n,s:K,s:K,s:n,s:n,s:n,s:n,s:n}", "columns", m->columns, "empty", m->empty,
                         "count_min", (unsigned long long)m->count_min, "count_max",
                         (unsigned long long)m->count_max, "zero_range", m->zero_range, "tiny_range",
                         m->tiny_range, "const_var", m->const_var, "const_var_nonzero", m->const_var_nonzero,
                         "m2_redo", m->m2_redo);
}

/* ---- merge, files ---- */

static PyObject *stats_merged(clsext_stats *self, PyObject *other)
{
    const cls_stats *o = clsext_stats_of(other);
    if (!o) return NULL;
    cls_stats_info in = info_of(self);
    size_t n = in.groups * in.cols;
    cls_column_stats *cols = PyMem_Malloc(n * sizeof *cols);
    if (!cols) return PyErr_NoMemory();
    memcpy(cols, cls_stats_columns((cls_stats *)self->s), n * sizeof *cols);
    cls_stats *s = NULL;
    cls_status st = cls_stats_create(&in, cols, &s);
    PyMem_Free(cols);
    if (st != CLS_OK) return clsext_raise(st, "cannot copy the statistics");
    st = cls_stats_merge(s, o);
    if (st != CLS_OK) {
        cls_stats_destroy(s);
        return clsext_raise(st, "statistics to merge differ in scaler, scope, range, clip, dtype, groups or columns");
    }
    return clsext_stats_wrap(s);
}

static PyObject *stats_save(clsext_stats *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
    cls_status st;
    char msg[1024] = "";
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    st = cls_stats_save(self->s, p);
    if (st != CLS_OK) snprintf(msg, sizeof msg, "%s", cls_last_error(NULL)); /* thread-local: read on this thread */
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != CLS_OK) return clsext_raise(st, msg);
    Py_RETURN_NONE;
}

PyObject *clsext_stats_load(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
    cls_status st;
    cls_stats *s = NULL;
    char msg[1024] = "";
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    st = cls_stats_load(p, &s);
    if (st != CLS_OK) snprintf(msg, sizeof msg, "%s", cls_last_error(NULL));
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != CLS_OK) return clsext_raise(st, msg);
    return clsext_stats_wrap(s);
}

static PyObject *stats_repr(clsext_stats *self)
{
    cls_stats_info in = info_of(self);
    const char *name = cls_scaler_name(in.scaler); /* the library's table: every scaler it knows */
    return PyUnicode_FromFormat("<clscale Stats %s scope=%s %zu group(s) x %zu column(s), %llu rows, %s>",
                                name ? name : "unknown", in.scope == CLS_SCOPE_BATCH ? "batch" : "matrix", in.groups,
                                in.cols, (unsigned long long)in.rows, in.dtype == CLS_F64 ? "float64" : "float32");
}

static PyMethodDef stats_methods[] = {
    {"columns", (PyCFunction)stats_columns, METH_VARARGS,
     "columns(fields=None) -> dict of arrays (groups x cols): count, missing (uint64), min, max, mean, m2,\n"
     "absmax; or only the fields named (a str or a sequence of str)."},
    {"quantiles", (PyCFunction)stats_quantiles, METH_NOARGS,
     "quantiles() -> array (groups x 3 x cols): a robust fit's median, q_lo, q_hi (NaN when not computed)."},
    {"params", (PyCFunction)(void (*)(void))stats_params, METH_VARARGS | METH_KEYWORDS,
     "params(inverse=False) -> (shift, scale, offset): y = (x - shift) * scale + offset per group and column."},
    {"summary", (PyCFunction)stats_summary, METH_NOARGS,
     "summary() -> dict: counts over the columns (columns, empty, count_min, count_max, zero_range,\n"
     "tiny_range: 0 < max - min < 10 eps of the dtype, const_var: scikit-learn's near-constant variance,\n"
     "const_var_nonzero), computed once."},
    {"merged", (PyCFunction)stats_merged, METH_O, "merged(other) -> Stats: both fits' rows together (Chan)."},
    {"save", (PyCFunction)stats_save, METH_VARARGS, "save(path): writes the statistics file (atomic)."},
    {"from_state", (PyCFunction)stats_from_state, METH_VARARGS | METH_CLASS,
     "from_state(info, columns) -> Stats: rebuilds statistics from `info` and columns(), checking them."},
    {"__reduce__", (PyCFunction)stats_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stats_getset[] = {
    {"info", (getter)stats_info, NULL, "dict: scaler, scope, lo, hi, clip, dtype, groups, cols, rows, has_moments",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject clsext_stats_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "clscale._clscale.Stats",
    .tp_basicsize = sizeof(clsext_stats),
    .tp_dealloc = (destructor)stats_dealloc,
    .tp_repr = (reprfunc)stats_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Fitted statistics of the clscale library (immutable). Made by Context.fit,\n"
              "Context.fit_transform, load_stats or Stats.from_state.",
    .tp_methods = stats_methods,
    .tp_getset = stats_getset,
};
