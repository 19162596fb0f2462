/* A small driver for the counting passes of the cleaning and quantile code:
 * units of work pulled by every device able to run the dtype, one worker
 * thread per device, a unit that fails on a device redone on another. The
 * scaling pipeline has its own richer scheduler (run.c); the counting
 * passes need only a fair pull and failover, and a unit that completes
 * synchronously (its results merged by the caller's function under its own
 * lock). */
#ifndef CLS_PASSES_H
#define CLS_PASSES_H

#include "internal.h"

/* Runs unit `unit` on device `dev` (its queue 0): enqueue, wait, merge.
 * Returns CLS_OK, or a status with the context's message set. Called from
 * one thread per device; calls for different devices run at once. */
typedef cls_status (*cls_unit_fn)(void *user, cls_context *ctx, cls_dev *dev, size_t unit);

/* Runs units [0, n) on every live device of ctx able to run dtype t (float64
 * needs cl_khr_fp64). A device whose unit fails takes no more; its unit goes
 * to another device. Fails with the last error when a unit failed on every
 * device, CLS_E_UNSUPPORTED when no device can run t. */
cls_status cls_passes_run(cls_context *ctx, cls_dtype t, size_t n, cls_unit_fn fn, void *user);

/* A read-only buffer over host memory [p, p + bytes) for dev: the memory
 * itself where the device reads host memory in place, else a copy. */
cls_status cls_pass_input(cls_context *ctx, cls_dev *dev, const void *p, size_t bytes, cl_mem *out);
/* A buffer a kernel writes that ends in host memory [p, p + bytes): the
 * memory itself where the device shares host memory, else a device buffer
 * that cls_pass_output_back() reads into p (blocking; nothing to do on a
 * device that shares host memory). */
cls_status cls_pass_output(cls_context *ctx, cls_dev *dev, void *p, size_t bytes, cl_mem *out);
cls_status cls_pass_output_back(cls_context *ctx, cls_dev *dev, cl_mem m, void *p, size_t bytes);
/* A unit's data buffers: *in over x (cls_pass_input) and, when y is not
 * NULL, *out over y (cls_pass_output); on a device that shares host memory
 * writing in place (y == x), one buffer: *in a second reference to *out,
 * released like any. */
cls_status cls_pass_io(cls_context *ctx, cls_dev *dev, const void *x, void *y, size_t bytes, cl_mem *in,
                       cl_mem *out);
/* A device buffer of `bytes` (at least 1), initialised from `init` when not NULL. */
cls_status cls_pass_buffer(cls_context *ctx, cls_dev *dev, cl_mem_flags flags, size_t bytes, const void *init,
                           cl_mem *out);

/* A buffer for a unit's results of `bytes` (written by the kernel, read
 * back through cls_pass_map): on a device that works on host memory, a
 * table of at least CLS_PASS_HOST_MIN bytes lies over a host table
 * (util/table.h, kept between calls: *host, free it with cls_table_free
 * after the buffer's release); else, and smaller, the driver's (*host
 * NULL). A fresh driver buffer of a million columns' results took a page
 * fault per 4 KiB at every call, more time than the kernel on 1 x 10^6
 * float64. */
#define CLS_PASS_HOST_MIN ((size_t)4 << 20)
cls_status cls_pass_result_buffer(cls_context *ctx, cls_dev *d, cl_mem_flags fl, size_t bytes, void **host,
                                  cl_mem *out);

/* The results of a unit, mapped for reading on dev's queue 0 (blocking):
 * on a device that shares host memory no copy, else one. *out is NULL
 * until mapped; cls_pass_unmap() undoes it (a NULL p: nothing) and waits,
 * keeping `st` when it is already a failure. */
cls_status cls_pass_map(cls_context *ctx, cls_dev *dev, cl_mem m, size_t bytes, void **out);
cls_status cls_pass_unmap(cls_context *ctx, cls_dev *dev, cl_mem m, void *p, cls_status st);

/* Element i of a results table of elements `es` bytes wide (8: double,
 * 4: float), as a double. */
static inline double cls_pass_at(const void *p, size_t i, size_t es)
{
    return es == 8 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* Whether d is a GPU proper (a device claiming to be a CPU too, a
 * simulator, is not): the short-column kernels take their GPU shape there,
 * a column per work-item, instead of a block of columns in vector lanes. */
static inline int cls_pass_gpu(const cls_dev *d)
{
    return (d->info.type & CLS_DEVICE_GPU) && !(d->info.type & CLS_DEVICE_CPU);
}

/* Kernel arguments in order, the first failure kept. */
typedef struct cls_kargs {
    cls_context *ctx;
    cls_dev     *d;
    cl_kernel    k;
    cl_uint      i;
    cls_dtype    t;
    cls_status   st;
} cls_kargs;
void cls_karg_mem(cls_kargs *a, cl_mem m);
void cls_karg_u32(cls_kargs *a, uint64_t v);
void cls_karg_u64(cls_kargs *a, uint64_t v);
void cls_karg_real(cls_kargs *a, double v);

/* Launches a's kernel over global[0] x global[1] (rounded up to the
 * kernel's work-group size in dimension 0) on dev's queue 0 and waits. */
cls_status cls_pass_launch(cls_kargs *a, size_t local, size_t g0, size_t g1);
/* The same with work-groups of lx x ly items, both dimensions rounded up
 * (the kernel ignores items past g0 x g1): for kernels of one value per
 * item over (columns, rows), where a group one row high leaves most of its
 * items idle on narrow data. */
cls_status cls_pass_launch_tiles(cls_kargs *a, size_t lx, size_t ly, size_t g0, size_t g1);

#endif
