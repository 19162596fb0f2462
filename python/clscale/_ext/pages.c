/* populate: the page tables of a new output array made before a device
 * writes it (clscale/_output.py). A kernel that writes fresh memory takes
 * a page fault on each page it reaches first, in the middle of its work
 * and from every worker thread; madvise(MADV_POPULATE_WRITE) maps and
 * zeroes the same pages in one call, which costs less than those faults.
 * The array's contents are unchanged (populating never writes data). */
#include "ext.h" /* Python.h first: its feature macros declare madvise */

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

PyObject *clsext_populate(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyArray_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "populate: expected a numpy.ndarray, got %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)arg;
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a)) {
        PyErr_SetString(PyExc_ValueError, "populate: the array must be C-contiguous and writeable");
        return NULL;
    }
    int done = 0;
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t p = (uintptr_t)PyArray_DATA(a), n = (uintptr_t)PyArray_NBYTES(a);
    if (page > 0) {
        /* the whole pages inside the array: the partial ones at its ends
         * may belong to the allocator's bookkeeping */
        uintptr_t lo = (p + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
        uintptr_t hi = (p + n) / (uintptr_t)page * (uintptr_t)page;
        if (hi > lo) {
            int r;
            Py_BEGIN_ALLOW_THREADS
            r = madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
            Py_END_ALLOW_THREADS
            /* kernels before Linux 5.14 answer EINVAL: the pages are then
             * faulted by the first writer, as without this call */
            done = r == 0;
        }
    }
#endif
    return PyBool_FromLong(done);
}
