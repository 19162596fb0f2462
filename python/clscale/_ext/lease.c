/* Lease: a kept block of output memory lent to the arrays of one output
 * (clscale/_output.py). It exports the block's first `nbytes` as a
 * writable buffer, so that numpy's arrays over it (np.frombuffer, and every
 * view of those) hold the lease; when the last of them goes, the lease's
 * deallocation hands the block back: its whole huge pages are given to the
 * kernel to reclaim if it needs memory (madvise(MADV_FREE): kept pages are
 * not zeroed again unless the kernel did take them, and a kept block costs
 * the system nothing it could not take back), then `on_release()` marks the
 * block free. The pool knows a block is free without counting references.
 * The pages are populated again when the block is next lent (populate). */
#include "ext.h" /* Python.h first: its feature macros declare madvise */

#include <stdint.h>
#include <sys/mman.h>

/* The unit of the kernel's transparent huge pages on x86-64 and arm64
 * (4 KiB base pages): advising only whole ones leaves them unsplit. */
#define HUGE_BYTES ((uintptr_t)2 << 20)

typedef struct {
    PyObject_HEAD
    PyObject *block;      /* the 1-D uint8 ndarray lent */
    PyObject *on_release; /* called once, when the lease goes */
    char *data;
    Py_ssize_t nbytes;
} lease_obj;

static void lazy_free(PyArrayObject *block)
{
#ifdef MADV_FREE
    uintptr_t p = (uintptr_t)PyArray_DATA(block), n = (uintptr_t)PyArray_NBYTES(block);
    uintptr_t lo = (p + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES, hi = (p + n) / HUGE_BYTES * HUGE_BYTES;
    /* advice: a kernel that refuses it keeps the pages as they are */
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_FREE);
#else
    (void)block;
#endif
}

static void lease_dealloc(lease_obj *self)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (self->block) lazy_free((PyArrayObject *)self->block);
    if (self->on_release) {
        PyObject *r = PyObject_CallNoArgs(self->on_release);
        if (!r) PyErr_WriteUnraisable(self->on_release);
        Py_XDECREF(r);
    }
    PyErr_Restore(type, value, tb);
    Py_XDECREF(self->block);
    Py_XDECREF(self->on_release);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int lease_getbuffer(lease_obj *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->nbytes, 0, flags);
}

static PyBufferProcs lease_buffer = {(getbufferproc)lease_getbuffer, NULL};

PyTypeObject clsext_lease_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "clscale._clscale.Lease",
    .tp_basicsize = sizeof(lease_obj),
    .tp_dealloc = (destructor)lease_dealloc,
    .tp_as_buffer = &lease_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A kept output block lent to arrays (lease(block, nbytes, on_release)).",
};

PyObject *clsext_lease(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *block, *on_release;
    Py_ssize_t nbytes;
    if (!PyArg_ParseTuple(args, "O!nO:lease", &PyArray_Type, &block, &nbytes, &on_release)) return NULL;
    PyArrayObject *a = (PyArrayObject *)block;
    if (PyArray_NDIM(a) != 1 || PyArray_TYPE(a) != NPY_UINT8 || !PyArray_IS_C_CONTIGUOUS(a) ||
        !PyArray_ISWRITEABLE(a)) {
        PyErr_SetString(PyExc_ValueError, "lease: the block must be a writeable, contiguous 1-D uint8 array");
        return NULL;
    }
    if (nbytes < 0 || nbytes > PyArray_NBYTES(a)) {
        PyErr_Format(PyExc_ValueError, "lease: %zd bytes of a block of %zd", nbytes, (Py_ssize_t)PyArray_NBYTES(a));
        return NULL;
    }
    if (!PyCallable_Check(on_release)) {
        PyErr_SetString(PyExc_TypeError, "lease: on_release must be callable");
        return NULL;
    }
    lease_obj *l = PyObject_New(lease_obj, &clsext_lease_type);
    if (!l) return NULL;
    Py_INCREF(block);
    Py_INCREF(on_release);
    l->block = block;
    l->on_release = on_release;
    l->data = PyArray_DATA(a);
    l->nbytes = nbytes;
    return (PyObject *)l;
}
