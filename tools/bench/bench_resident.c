/* The resident row of `clscale bench`: seed-A's fit+transform of cl_mem
 * buffers that already live on one device (cls_fit_transform on a
 * context made on the bench's own cl_context), against the fused kernel's
 * own time on that device in the same run.
 *   - the call's time: wall clock around a blocking call (no event out) of
 *     a context without profiling (nor a profiling queue), input and output buffers written once
 *     before the rounds, out of place;
 *   - the kernel's own time: the summed kernel event seconds of the same
 *     call on a second context (CLS_PROFILE, on a profiling queue of its
 *     own) on the same cl_context;
 *   - the calls of both contexts alternate round by round; medians of
 *     `repeats` after a warm-up;
 *   - the output is read back after the rounds and checked against the
 *     single-threaded reference.
 * Owns nothing beyond the call; cmd_bench.c prints what it returns. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The cl_device_id with `clscale devices` index `global` (platforms in the
 * ICD's order, devices in each). */
static cl_device_id device_of(size_t global, cl_platform_id *plat)
{
    cl_uint np = 0;
    cl_platform_id ps[32];
    if (clGetPlatformIDs(32, ps, &np) != CL_SUCCESS) return NULL;
    size_t at = 0;
    for (cl_uint i = 0; i < np && i < 32; i++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        if (global < at + nd) {
            cl_device_id *ids = calloc(nd, sizeof *ids);
            cl_device_id id = NULL;
            if (ids && clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, nd, ids, NULL) == CL_SUCCESS) id = ids[global - at];
            free(ids);
            *plat = ps[i];
            return id;
        }
        at += nd;
    }
    return NULL;
}

int bench_resident(size_t global, const bench_workload *w, int repeats, bench_resident_row *row)
{
    memset(row, 0, sizeof *row);
    row->device = global;
    wl_data d;
    if (bench_wl_alloc(&d, w, row->why, sizeof row->why) != 0) return -1;
    bench_ref_single(w, d.x, d.f, d.ys);
    size_t bytes = bench_elements(w) * (w->dtype == CLS_F64 ? sizeof(double) : sizeof(float));
    cl_platform_id plat = NULL;
    cl_device_id dev = device_of(global, &plat);
    cl_context cl = NULL;
    cl_command_queue q = NULL, qp = NULL;
    cl_mem bx = NULL, by = NULL;
    cls_context *ctx[2] = {NULL, NULL};
    double *t = calloc(2 * (size_t)repeats, sizeof *t);
    int rc = -1;
    cl_int e = CL_SUCCESS;
    if (!t) {
        snprintf(row->why, sizeof row->why, "out of memory");
        goto out;
    }
    if (!dev) {
        snprintf(row->why, sizeof row->why, "device %zu not found among the platforms", global);
        goto out;
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    cl = clCreateContext(props, 1, &dev, NULL, NULL, &e);
    if (e == CL_SUCCESS) q = clCreateCommandQueue(cl, dev, 0, &e);
    /* the kernel's own time needs a queue with profiling */
    if (e == CL_SUCCESS) qp = clCreateCommandQueue(cl, dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e == CL_SUCCESS) bx = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e == CL_SUCCESS) by = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e == CL_SUCCESS) e = clEnqueueWriteBuffer(q, bx, CL_TRUE, 0, bytes, d.x, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        snprintf(row->why, sizeof row->why, "OpenCL set-up of the caller's side failed (%d)", (int)e);
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        cls_config cfg = {.cl_context = cl, .cl_devices = &dev, .cl_ndevices = 1, .cl_queues = k ? &qp : &q,
                          .flags = k ? CLS_PROFILE : 0};
        cls_status st = cls_context_create(&cfg, &ctx[k]);
        if (st != CLS_OK) {
            snprintf(row->why, sizeof row->why, "cls_context_create on the cl_context: %s: %s", cls_status_str(st),
                     ctx[k] ? cls_last_error(ctx[k]) : "out of memory");
            goto out;
        }
    }
    cls_array in = {.where = CLS_IN_BUFFER, .mem = bx, .dtype = w->dtype, .batch = w->batch, .rows = w->rows, .cols = w->cols};
    cls_array outb = in;
    outb.mem = by;
    for (int r = -1; r < repeats; r++) {
        for (int k = 0; k < 2; k++) {
            double t0 = bench_now_s();
            cls_status st = (in.sync = NULL, cls_fit_transform(ctx[k], &d.p, &in, &outb, NULL));
            double dt = bench_now_s() - t0;
            if (st != CLS_OK) {
                snprintf(row->why, sizeof row->why, "cls_fit_transform: %s: %s", cls_status_str(st),
                         cls_last_error(ctx[k]));
                goto out;
            }
            if (r < 0) continue;
            if (k == 0) {
                t[r] = dt;
                continue;
            }
            cls_report rep;
            double kern = 0;
            if (cls_last_report(ctx[k], &rep) == CLS_OK)
                for (size_t i = 0; i < rep.ndevices; i++) kern += rep.devices[i].kernel;
            t[repeats + r] = kern;
        }
    }
    memset(d.y, 0xff, bytes);
    e = clEnqueueReadBuffer(q, by, CL_TRUE, 0, bytes, d.y, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        snprintf(row->why, sizeof row->why, "reading the output back failed (%d)", (int)e);
        goto out;
    }
    row->error = bench_max_error(w, d.y, d.ys);
    if (!(row->error <= bench_tolerance(w))) {
        snprintf(row->why, sizeof row->why, "wrong result: error %.3g above %.3g", row->error, bench_tolerance(w));
        goto out;
    }
    qsort(t, (size_t)repeats, sizeof *t, cmp_d);
    qsort(t + repeats, (size_t)repeats, sizeof *t, cmp_d);
    row->call = t[repeats / 2];
    row->kernel = t[repeats + repeats / 2];
    row->bytes = 2 * (uint64_t)bytes;
    rc = 0;
out:
    for (int k = 0; k < 2; k++) cls_context_destroy(ctx[k]);
    if (bx) clReleaseMemObject(bx);
    if (by) clReleaseMemObject(by);
    if (q) clReleaseCommandQueue(q);
    if (qp) clReleaseCommandQueue(qp);
    if (cl) clReleaseContext(cl);
    free(t);
    bench_wl_free(&d);
    return rc;
}
