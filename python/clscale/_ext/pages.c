/* populate: the page tables of a new output array made before a device
 * writes it (clscale/_output.py) where they are small pages. A kernel that
 * writes fresh memory takes a page fault on each page it reaches first, in
 * the middle of its work and from every worker thread; with 4 KiB pages
 * madvise(MADV_POPULATE_WRITE) maps and zeroes the same pages in one call,
 * which costs less than those faults. With huge pages the faults are few
 * and the threads' own are cheaper (huge, below).
 * The array's contents are unchanged (populating never writes data). */
#include "ext.h" /* Python.h first: its feature macros declare madvise */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* arg as a C-contiguous, writeable array, or NULL with the error set
 * (fn names the call) */
static PyArrayObject *writeable_array(const char *fn, PyObject *arg)
{
    if (!PyArray_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a numpy.ndarray, got %s", fn, Py_TYPE(arg)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)arg;
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s: the array must be C-contiguous and writeable", fn);
        return NULL;
    }
    return a;
}

PyObject *clsext_populate(PyObject *self, PyObject *arg)
{
    (void)self;
    PyArrayObject *a = writeable_array("populate", arg);
    if (!a) return NULL;
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

/* huge: whether a new output's pages will be huge pages, advising them
 * (madvise(MADV_HUGEPAGE) on the whole huge pages inside the array) where
 * the kernel gives them only on advice. Such an output is left for the
 * device's worker threads to fault in as they write it, rather than
 * populated first: a fault there maps and zeroes 2 MiB at once, a few
 * hundred of them for the largest outputs, shared out over the threads
 * that do the writing, where populate zeroes the whole output on the
 * calling thread alone while the device's threads wait. With 4 KiB pages
 * (transparent huge pages off) the faults would be one per 4 KiB, and
 * populate is the cheaper way. */
#define HUGE_BYTES ((uintptr_t)2 << 20)

/* The kernel's transparent huge page setting: 2 always, 1 on advice
 * (madvise), 0 never or unknown; read once. */
static int thp_mode(void)
{
    static int mode = -1;
    if (mode < 0) {
        int m = 0;
        char buf[128] = {0};
        FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = '\0';
            fclose(f);
            if (strstr(buf, "[always]")) m = 2;
            else if (strstr(buf, "[madvise]")) m = 1;
        }
        mode = m; /* huge() runs with the GIL held */
    }
    return mode;
}

PyObject *clsext_huge(PyObject *self, PyObject *arg)
{
    (void)self;
    PyArrayObject *a = writeable_array("huge", arg);
    if (!a) return NULL;
    uintptr_t p = (uintptr_t)PyArray_DATA(a), n = (uintptr_t)PyArray_NBYTES(a);
    uintptr_t lo = (p + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES, hi = (p + n) / HUGE_BYTES * HUGE_BYTES;
    int mode = thp_mode(), done = 0;
    if (hi > lo && mode == 2) done = 1;
#ifdef MADV_HUGEPAGE
    /* advice: a kernel that refuses it leaves the pages small */
    else if (hi > lo && mode == 1) done = madvise((void *)lo, hi - lo, MADV_HUGEPAGE) == 0;
#endif
    return PyBool_FromLong(done);
}
