/* A context on the caller's OpenCL objects (cls_config.cl_context): the
 * devices and, optionally, the queues of an application that runs its own
 * OpenCL code. Owns: checking that the objects fit together (devices of
 * that context, queues of those devices, in order), describing the devices
 * as discovery would (device.c), and the references clscale holds: it
 * retains the context and the queues it keeps, and context.c's destroy
 * releases exactly those. Nothing the caller made is released beyond that.
 * Called by context.c only; calls device.c and build_slot.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t len)
{
    if (clGetPlatformInfo(p, what, len, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
    buf[len - 1] = '\0';
}

/* The index `clscale devices` would give the device (platforms in the ICD's
 * order, devices in each); the device's position in the caller's list when
 * it is not a root device found that way. */
static size_t global_index(cl_device_id id, size_t fallback)
{
    cl_uint np = 0;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0) return fallback;
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats || clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) {
        free(plats);
        return fallback;
    }
    size_t at = 0, found = fallback;
    for (cl_uint i = 0; i < np && found == fallback; i++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id *ids = calloc(nd, sizeof *ids);
        if (ids && clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, nd, ids, NULL) == CL_SUCCESS)
            for (cl_uint d = 0; d < nd && found == fallback; d++)
                if (ids[d] == id) found = at + d;
        at += nd;
        free(ids);
    }
    free(plats);
    return found;
}

/* What discovery would have found about one device. */
static cls_status found_of(cls_context *ctx, cl_device_id id, cls_found *f)
{
    memset(f, 0, sizeof *f);
    f->id = id;
    cl_int e = clGetDeviceInfo(id, CL_DEVICE_PLATFORM, sizeof f->platform, &f->platform, NULL);
    if (e != CL_SUCCESS) return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_devices: not a valid device (%s)",
                                         cls_cl_error_name(e));
    platform_str(f->platform, CL_PLATFORM_NAME, f->platform_name, sizeof f->platform_name);
    platform_str(f->platform, CL_PLATFORM_VENDOR, f->platform_vendor, sizeof f->platform_vendor);
    platform_str(f->platform, CL_PLATFORM_VERSION, f->platform_version, sizeof f->platform_version);
    if (clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof f->name, f->name, NULL) != CL_SUCCESS)
        snprintf(f->name, sizeof f->name, "?");
    f->name[sizeof f->name - 1] = '\0';
    if (clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof f->type, &f->type, NULL) != CL_SUCCESS) f->type = 0;
    return CLS_OK;
}

/* The caller's queue for `dev`, checked and retained. */
static cls_status adopt_queue(cls_context *ctx, cls_dev *dev, cl_command_queue q, size_t i)
{
    cl_context qc = NULL;
    cl_device_id qd = NULL;
    cl_command_queue_properties props = 0;
    if (!q) return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_queues[%zu] is NULL", i);
    cl_int e = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL);
    if (e == CL_SUCCESS) e = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL);
    if (e == CL_SUCCESS) e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (e != CL_SUCCESS)
        return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_queues[%zu] is not a valid command queue (%s)", i,
                        cls_cl_error_name(e));
    if (qc != dev->cl)
        return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_queues[%zu] belongs to another OpenCL context", i);
    if (qd != dev->id)
        return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_queues[%zu] is not a queue of device %zu (%s)", i, i,
                        dev->info.name);
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_queues[%zu] is out of order; clscale needs an in-order "
                        "queue (its slices' commands follow each other)", i);
    CL_TRY(ctx, dev, clRetainCommandQueue(q));
    dev->q[0] = q;
    dev->nq = 1;
    dev->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
    return CLS_OK;
}

static cls_status own_queues(cls_context *ctx, cls_dev *dev)
{
    unsigned nq = ctx->cfg.queues ? ctx->cfg.queues : CLS_DEFAULT_QUEUES;
    dev->profiling = (ctx->flags & CLS_PROFILE) != 0;
    cl_command_queue_properties props = dev->profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
    for (unsigned i = 0; i < nq; i++) {
        cl_int e;
        dev->q[i] = clCreateCommandQueue(dev->cl, dev->id, props, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateCommandQueue", e);
        dev->nq = i + 1;
    }
    return CLS_OK;
}

cls_status cls_foreign_adopt(cls_context *ctx, const cls_config *cfg)
{
    cl_context c = cfg->cl_context;
    size_t size = 0;
    cl_int e = clGetContextInfo(c, CL_CONTEXT_DEVICES, 0, NULL, &size);
    if (e != CL_SUCCESS || size == 0)
        return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_context is not a valid OpenCL context (%s)",
                        cls_cl_error_name(e));
    size_t nin = size / sizeof(cl_device_id);
    cl_device_id *in = malloc(size);
    if (!in) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    e = clGetContextInfo(c, CL_CONTEXT_DEVICES, size, in, NULL);
    if (e != CL_SUCCESS) {
        free(in);
        return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_context: clGetContextInfo: %s", cls_cl_error_name(e));
    }
    if (cfg->cl_devices && cfg->cl_ndevices == 0) {
        free(in);
        return cls_fail(ctx, CLS_E_ARG, "cls_config.cl_devices is set but cl_ndevices is 0");
    }
    size_t n = cfg->cl_devices ? cfg->cl_ndevices : nin;
    cls_status st = CLS_OK;
    for (size_t i = 0; i < n && cfg->cl_devices && st == CLS_OK; i++) {
        int member = 0;
        for (size_t j = 0; j < nin && !member; j++) member = in[j] == (cl_device_id)cfg->cl_devices[i];
        char name[256] = "?";
        if (!member) {
            if (!cfg->cl_devices[i]
                || clGetDeviceInfo(cfg->cl_devices[i], CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS)
                snprintf(name, sizeof name, "not a valid device");
            name[sizeof name - 1] = '\0';
            st = cls_fail(ctx, CLS_E_ARG,
                          "cls_config.cl_devices[%zu] (%s) is not a device of cls_config.cl_context "
                          "(which has %zu device(s))", i, name, nin);
        }
        for (size_t j = 0; j < i && st == CLS_OK; j++)
            if (cfg->cl_devices[j] == cfg->cl_devices[i])
                st = cls_fail(ctx, CLS_E_ARG, "cls_config.cl_devices[%zu] repeats cl_devices[%zu]", i, j);
    }
    if (st == CLS_OK) {
        ctx->devs = calloc(n, sizeof *ctx->devs);
        ctx->cls = calloc(1, sizeof *ctx->cls);
        if (!ctx->devs || !ctx->cls) st = cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    if (st == CLS_OK) {
        e = clRetainContext(c);
        if (e != CL_SUCCESS) st = cls_fail(ctx, CLS_E_ARG, "clRetainContext(cls_config.cl_context): %s",
                                           cls_cl_error_name(e));
        else ctx->cls[ctx->ncls++] = c;
    }
    for (size_t i = 0; i < n && st == CLS_OK; i++) {
        cl_device_id id = cfg->cl_devices ? (cl_device_id)cfg->cl_devices[i] : in[i];
        cls_found f;
        st = found_of(ctx, id, &f);
        if (st != CLS_OK) break;
        cls_dev *d = &ctx->devs[ctx->ndevs];
        d->index = ctx->ndevs;
        st = cls_device_describe(ctx, d, &f, global_index(id, i));
        if (st != CLS_OK) break;
        d->cl = c;
        ctx->ndevs++;
        st = cls_build_slot_take(ctx, d);
        if (st == CLS_OK)
            st = cfg->cl_queues ? adopt_queue(ctx, d, (cl_command_queue)cfg->cl_queues[i], i) : own_queues(ctx, d);
    }
    free(in);
    /* the caller's arrays are read here only */
    ctx->cfg.cl_devices = NULL;
    ctx->cfg.cl_queues = NULL;
    ctx->cfg.cl_ndevices = 0;
    return st;
}
