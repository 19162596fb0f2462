/* The fault layer's counting hooks (tests/fault_count.c has the rules and
 * the counters): one hook per counted OpenCL call, charged to its device
 * and counted before it goes on to the fault layer's own hook and the
 * driver; retains and releases of every kind counted as objects; and
 * clsfault_count_install(), which puts the hooks into the layer's table. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl_layer.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_count.h"

#include "fault_count_int.h"

struct _cl_icd_dispatch fc_inner; /* the table before these hooks: the fault layer's, then the driver's */

/* ---- hooks ---- */

#define FAIL_NULL(e)                \
    do {                            \
        if (errcode) *errcode = (e); \
        return NULL;                \
    } while (0)

static cl_int CL_API_CALL h_GetDeviceInfo(cl_device_id d, cl_device_info w, size_t n, void *v, size_t *r)
{
    charge c;
    fc_charge_one(&c, d);
    cl_int e = fc_count(&c, "clGetDeviceInfo");
    return e != CL_SUCCESS ? e : fc_inner.clGetDeviceInfo(d, w, n, v, r);
}

static cl_context CL_API_CALL h_CreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *ids,
                                              void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                              void *user, cl_int *errcode)
{
    charge c;
    fc_charge_list(&c, n, ids);
    cl_int e = fc_count(&c, "clCreateContext");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_context x = fc_inner.clCreateContext(props, n, ids, notify, user, errcode);
    fc_made(OBJ_CONTEXT, x);
    return x;
}

static cl_command_queue CL_API_CALL h_CreateCommandQueue(cl_context ctx, cl_device_id d,
                                                         cl_command_queue_properties props, cl_int *errcode)
{
    charge c;
    fc_charge_one(&c, d);
    cl_int e = fc_count(&c, "clCreateCommandQueue");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_command_queue x = fc_inner.clCreateCommandQueue(ctx, d, props, errcode);
    fc_made(OBJ_QUEUE, x);
    return x;
}

static cl_mem CL_API_CALL h_CreateBuffer(cl_context ctx, cl_mem_flags fl, size_t size, void *host, cl_int *errcode)
{
    charge c;
    fc_charge_context(&c, ctx);
    cl_int e = fc_count(&c, "clCreateBuffer");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_mem x = fc_inner.clCreateBuffer(ctx, fl, size, host, errcode);
    fc_made(OBJ_MEM, x);
    return x;
}

static cl_program CL_API_CALL h_CreateProgramWithSource(cl_context ctx, cl_uint n, const char **src,
                                                        const size_t *len, cl_int *errcode)
{
    charge c;
    fc_charge_context(&c, ctx);
    cl_int e = fc_count(&c, "clCreateProgramWithSource");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_program x = fc_inner.clCreateProgramWithSource(ctx, n, src, len, errcode);
    fc_made(OBJ_PROGRAM, x);
    return x;
}

static cl_program CL_API_CALL h_CreateProgramWithBinary(cl_context ctx, cl_uint n, const cl_device_id *ids,
                                                        const size_t *len, const unsigned char **bin,
                                                        cl_int *status, cl_int *errcode)
{
    charge c;
    fc_charge_list(&c, n, ids);
    cl_int e = fc_count(&c, "clCreateProgramWithBinary");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_program x = fc_inner.clCreateProgramWithBinary(ctx, n, ids, len, bin, status, errcode);
    fc_made(OBJ_PROGRAM, x);
    return x;
}

static cl_int CL_API_CALL h_BuildProgram(cl_program p, cl_uint n, const cl_device_id *ids, const char *opts,
                                         void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    charge c;
    fc_charge_list(&c, n, ids);
    cl_int e = fc_count(&c, "clBuildProgram");
    return e != CL_SUCCESS ? e : fc_inner.clBuildProgram(p, n, ids, opts, notify, user);
}

static cl_int CL_API_CALL h_GetProgramInfo(cl_program p, cl_program_info w, size_t n, void *v, size_t *r)
{
    charge c;
    fc_charge_program(&c, p);
    cl_int e = fc_count(&c, "clGetProgramInfo");
    return e != CL_SUCCESS ? e : fc_inner.clGetProgramInfo(p, w, n, v, r);
}

static cl_int CL_API_CALL h_GetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info w, size_t n,
                                                void *v, size_t *r)
{
    charge c;
    fc_charge_one(&c, d);
    cl_int e = fc_count(&c, "clGetProgramBuildInfo");
    return e != CL_SUCCESS ? e : fc_inner.clGetProgramBuildInfo(p, d, w, n, v, r);
}

static cl_kernel CL_API_CALL h_CreateKernel(cl_program p, const char *name, cl_int *errcode)
{
    charge c;
    fc_charge_program(&c, p);
    cl_int e = fc_count(&c, "clCreateKernel");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_kernel x = fc_inner.clCreateKernel(p, name, errcode);
    fc_made(OBJ_KERNEL, x);
    return x;
}

static cl_int CL_API_CALL h_SetKernelArg(cl_kernel k, cl_uint i, size_t n, const void *v)
{
    charge c;
    fc_charge_kernel(&c, k);
    cl_int e = fc_count(&c, "clSetKernelArg");
    return e != CL_SUCCESS ? e : fc_inner.clSetKernelArg(k, i, n, v);
}

static cl_int CL_API_CALL h_GetKernelWorkGroupInfo(cl_kernel k, cl_device_id d, cl_kernel_work_group_info w,
                                                   size_t n, void *v, size_t *r)
{
    charge c;
    fc_charge_one(&c, d);
    cl_int e = fc_count(&c, "clGetKernelWorkGroupInfo");
    return e != CL_SUCCESS ? e : fc_inner.clGetKernelWorkGroupInfo(k, d, w, n, v, r);
}

/* Enqueues: fail before enqueuing; count the event made. */
#define ENQUEUE_PROLOGUE(q, name)             \
    charge c;                                 \
    fc_charge_queue(&c, (q));                    \
    cl_int e = fc_count(&c, name);               \
    if (e != CL_SUCCESS) return plain(e)

/* The error a rule gave, as a call other than a kernel launch returns it. */
static cl_int plain(cl_int e) { return e == CLSFAULT_HALF_KERNEL ? CL_OUT_OF_RESOURCES : e; }

/* After a half kernel its device is lost: every later wait charged to it
 * fails (after waiting), until the rules are cleared. */
static cl_int half_wait(const charge *c)
{
    cl_device_id d = atomic_load(&fc_half_pending);
    if (!d) return CL_SUCCESS;
    for (int i = 0; i < c->n; i++)
        if (c->d[i] == d) return CL_OUT_OF_RESOURCES;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL h_EnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                                                 const size_t *global, const size_t *local, cl_uint nw,
                                                 const cl_event *w, cl_event *ev)
{
    charge c;
    fc_charge_queue(&c, q);
    cl_int e = fc_count(&c, "clEnqueueNDRangeKernel");
    if (e == CLSFAULT_HALF_KERNEL && dim >= 1 && c.n == 1) {
        /* the first half of the work-groups along the dimension that has
         * most of them (at least one) */
        size_t g[3] = {global[0], dim > 1 ? global[1] : 1, dim > 2 ? global[2] : 1}, most = 0, at = 0;
        for (cl_uint i = 0; i < dim && i < 3; i++) {
            size_t l = local ? local[i] : 1, groups = (g[i] + l - 1) / l;
            if (groups > most) most = groups, at = i;
        }
        size_t l = local ? local[at] : 1;
        const size_t *lp = local;
        g[at] = (most > 1 ? most / 2 : 1) * l;
        if (g[at] > global[at]) g[at] = global[at];
        if (most == 1) {
            /* one work-group: half its work-items, the driver's local size */
            for (cl_uint i = 0; i < dim && i < 3; i++)
                if (global[i] > global[at]) at = i;
            g[at] = global[at] > 1 ? global[at] / 2 : 1;
            lp = NULL;
        }
        e = fc_inner.clEnqueueNDRangeKernel(q, k, dim, off, g, lp, nw, w, ev);
        if (e == CL_SUCCESS) {
            if (ev) fc_made(OBJ_EVENT, *ev);
            atomic_store(&fc_half_pending, c.d[0]);
        }
        return e;
    }
    if (e != CL_SUCCESS) return plain(e);
    e = fc_inner.clEnqueueNDRangeKernel(q, k, dim, off, global, local, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n,
                                               const void *p, cl_uint nw, const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueWriteBuffer");
    e = fc_inner.clEnqueueWriteBuffer(q, m, b, off, n, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    if (e == CL_SUCCESS && b) e = half_wait(&c); /* a blocking transfer waits */
    return e;
}

static cl_int CL_API_CALL h_EnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n, void *p,
                                              cl_uint nw, const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueReadBuffer");
    e = fc_inner.clEnqueueReadBuffer(q, m, b, off, n, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    if (e == CL_SUCCESS && b) e = half_wait(&c); /* a blocking transfer waits */
    return e;
}

static cl_int CL_API_CALL h_EnqueueWriteBufferRect(cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo,
                                                   const size_t *ho, const size_t *reg, size_t brp, size_t bsp,
                                                   size_t hrp, size_t hsp, const void *p, cl_uint nw,
                                                   const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueWriteBufferRect");
    e = fc_inner.clEnqueueWriteBufferRect(q, m, b, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    if (e == CL_SUCCESS && b) e = half_wait(&c); /* a blocking transfer waits */
    return e;
}

static cl_int CL_API_CALL h_EnqueueReadBufferRect(cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo,
                                                  const size_t *ho, const size_t *reg, size_t brp, size_t bsp,
                                                  size_t hrp, size_t hsp, void *p, cl_uint nw, const cl_event *w,
                                                  cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueReadBufferRect");
    e = fc_inner.clEnqueueReadBufferRect(q, m, b, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    if (e == CL_SUCCESS && b) e = half_wait(&c); /* a blocking transfer waits */
    return e;
}

static void *CL_API_CALL h_EnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags fl, size_t off,
                                            size_t n, cl_uint nw, const cl_event *w, cl_event *ev, cl_int *errcode)
{
    charge c;
    fc_charge_queue(&c, q);
    cl_int e = fc_count(&c, "clEnqueueMapBuffer");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_int e2 = CL_SUCCESS;
    void *p = fc_inner.clEnqueueMapBuffer(q, m, b, fl, off, n, nw, w, ev, &e2);
    if (e2 == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    if (e2 == CL_SUCCESS && b) {
        /* a blocking map waits: after a half kernel it fails (the mapping
         * is undone, as a driver that failed it would not have made it) */
        cl_int h = half_wait(&c);
        if (h != CL_SUCCESS) {
            fc_inner.clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL);
            fc_inner.clFinish(q);
            if (errcode) *errcode = h;
            return NULL;
        }
    }
    if (errcode) *errcode = e2;
    return p;
}

static cl_int CL_API_CALL h_EnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint nw,
                                                  const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueUnmapMemObject");
    e = fc_inner.clEnqueueUnmapMemObject(q, m, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t so, size_t dof,
                                              size_t n, cl_uint nw, const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueCopyBuffer");
    e = fc_inner.clEnqueueCopyBuffer(q, src, dst, so, dof, n, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nw, const cl_event *w,
                                                      cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueMarkerWithWaitList");
    e = fc_inner.clEnqueueMarkerWithWaitList(q, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueBarrierWithWaitList(cl_command_queue q, cl_uint nw, const cl_event *w,
                                                       cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueBarrierWithWaitList");
    e = fc_inner.clEnqueueBarrierWithWaitList(q, nw, w, ev);
    if (e == CL_SUCCESS && ev) fc_made(OBJ_EVENT, *ev);
    return e;
}

static cl_event CL_API_CALL h_CreateUserEvent(cl_context ctx, cl_int *errcode)
{
    charge c;
    fc_charge_context(&c, ctx);
    cl_int e = fc_count(&c, "clCreateUserEvent");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_event x = fc_inner.clCreateUserEvent(ctx, errcode);
    fc_made(OBJ_EVENT, x);
    return x;
}

static cl_command_queue CL_API_CALL h_CreateCommandQueueWithProperties(cl_context ctx, cl_device_id d,
                                                                       const cl_queue_properties *props,
                                                                       cl_int *errcode)
{
    charge c;
    fc_charge_one(&c, d);
    cl_int e = fc_count(&c, "clCreateCommandQueueWithProperties");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_command_queue x = fc_inner.clCreateCommandQueueWithProperties(ctx, d, props, errcode);
    fc_made(OBJ_QUEUE, x);
    return x;
}

static cl_int CL_API_CALL h_Flush(cl_command_queue q)
{
    ENQUEUE_PROLOGUE(q, "clFlush");
    return fc_inner.clFlush(q);
}

/* Waits: the work runs to its end, then the error (see the top). */
static cl_int CL_API_CALL h_Finish(cl_command_queue q)
{
    charge c;
    fc_charge_queue(&c, q);
    cl_int e = fc_count(&c, "clFinish");
    cl_int r = fc_inner.clFinish(q);
    if (e == CL_SUCCESS && r == CL_SUCCESS) e = half_wait(&c);
    return e != CL_SUCCESS ? plain(e) : r;
}

static cl_int CL_API_CALL h_WaitForEvents(cl_uint n, const cl_event *list)
{
    charge c = {.n = 0};
    if (n && list) fc_charge_event(&c, list[0]);
    cl_int e = fc_count(&c, "clWaitForEvents");
    cl_int r = fc_inner.clWaitForEvents(n, list);
    if (e == CL_SUCCESS && r == CL_SUCCESS) e = half_wait(&c);
    return e != CL_SUCCESS ? plain(e) : r;
}

static cl_int CL_API_CALL h_GetEventInfo(cl_event ev, cl_event_info w, size_t n, void *v, size_t *r)
{
    charge c;
    fc_charge_event(&c, ev);
    cl_int e = fc_count(&c, "clGetEventInfo");
    if (e == CL_SUCCESS && w == CL_EVENT_COMMAND_EXECUTION_STATUS) {
        /* a status read that finds the command complete counts as a wait */
        cl_int st = CL_QUEUED;
        if (fc_inner.clGetEventInfo(ev, w, sizeof st, &st, NULL) == CL_SUCCESS && st == CL_COMPLETE)
            e = half_wait(&c);
    }
    return e != CL_SUCCESS ? plain(e) : fc_inner.clGetEventInfo(ev, w, n, v, r);
}

static cl_int CL_API_CALL h_GetEventProfilingInfo(cl_event ev, cl_profiling_info w, size_t n, void *v, size_t *r)
{
    charge c;
    fc_charge_event(&c, ev);
    cl_int e = fc_count(&c, "clGetEventProfilingInfo");
    return e != CL_SUCCESS ? e : fc_inner.clGetEventProfilingInfo(ev, w, n, v, r);
}

/* Retains and releases: counted as objects (a retain as a creation),
 * never failed, so that every reference the library takes must be given
 * back, whatever the kind of object. */
#define RETAIN(fn, T, type)                                           \
    static cl_int CL_API_CALL h_##fn(T x)                             \
    {                                                                 \
        cl_int e = fc_inner.cl##fn(x);                                \
        if (e == CL_SUCCESS) atomic_fetch_add(&fc_created[type], 1); \
        return e;                                                     \
    }
RETAIN(RetainMemObject, cl_mem, OBJ_MEM)
RETAIN(RetainCommandQueue, cl_command_queue, OBJ_QUEUE)
RETAIN(RetainProgram, cl_program, OBJ_PROGRAM)
RETAIN(RetainKernel, cl_kernel, OBJ_KERNEL)
RETAIN(RetainEvent, cl_event, OBJ_EVENT)
RETAIN(RetainContext, cl_context, OBJ_CONTEXT)
#undef RETAIN

#define RELEASE(fn, T, type)                                   \
    static cl_int CL_API_CALL h_##fn(T x)                      \
    {                                                          \
        cl_int e = fc_inner.cl##fn(x);                            \
        if (e == CL_SUCCESS) atomic_fetch_add(&fc_released[type], 1); \
        return e;                                              \
    }
RELEASE(ReleaseMemObject, cl_mem, OBJ_MEM)
RELEASE(ReleaseCommandQueue, cl_command_queue, OBJ_QUEUE)
RELEASE(ReleaseProgram, cl_program, OBJ_PROGRAM)
RELEASE(ReleaseKernel, cl_kernel, OBJ_KERNEL)
RELEASE(ReleaseEvent, cl_event, OBJ_EVENT)
RELEASE(ReleaseContext, cl_context, OBJ_CONTEXT)
#undef RELEASE

EXPORT long clsfault_count_seen(int i);
EXPORT long clsfault_count_injected(int i);
EXPORT const char *clsfault_count_failed_call(int i);
EXPORT long clsfault_objects_created(int type);
EXPORT long clsfault_objects_released(int type);

/* CLSFAULT_COUNT_OUT=FILE: at exit, the process's rule 0 and object counts
 * written to FILE as "seen injected call live", for a test that armed the
 * rule in a process it cannot reach (the tool): live is the objects
 * created (or retained) and not released at exit. A FILE ending in '/' is
 * a folder where each process writes a file named by its pid (the ranks
 * of an mpirun). */
static void report_at_exit(void)
{
    const char *path = getenv("CLSFAULT_COUNT_OUT");
    char each[4200];
    size_t n = path ? strlen(path) : 0;
    if (n && path[n - 1] == '/') {
        snprintf(each, sizeof each, "%s%ld", path, (long)getpid());
        path = each;
    }
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) return;
    const char *call = clsfault_count_failed_call(0);
    fprintf(f, "%ld %ld %s %ld\n", clsfault_count_seen(0), clsfault_count_injected(0), call ? call : "-",
            clsfault_objects_created(-1) - clsfault_objects_released(-1));
    fclose(f);
}

void clsfault_count_install(struct _cl_icd_dispatch *layer, size_t entries)
{
    memset(&fc_inner, 0, sizeof fc_inner);
    memcpy(&fc_inner, layer, (entries < sizeof fc_inner ? entries : sizeof fc_inner));
#define HOOK(fn) if (fc_inner.cl##fn) layer->cl##fn = h_##fn
    HOOK(GetDeviceInfo); HOOK(CreateContext); HOOK(CreateCommandQueue); HOOK(CreateBuffer);
    HOOK(CreateProgramWithSource); HOOK(CreateProgramWithBinary); HOOK(BuildProgram); HOOK(GetProgramInfo);
    HOOK(GetProgramBuildInfo); HOOK(CreateKernel); HOOK(SetKernelArg); HOOK(GetKernelWorkGroupInfo);
    HOOK(EnqueueNDRangeKernel); HOOK(EnqueueWriteBuffer); HOOK(EnqueueReadBuffer); HOOK(EnqueueWriteBufferRect);
    HOOK(EnqueueReadBufferRect); HOOK(EnqueueMapBuffer); HOOK(EnqueueUnmapMemObject); HOOK(Flush); HOOK(Finish);
    HOOK(WaitForEvents); HOOK(GetEventInfo); HOOK(GetEventProfilingInfo); HOOK(RetainMemObject);
    HOOK(EnqueueCopyBuffer); HOOK(EnqueueMarkerWithWaitList); HOOK(EnqueueBarrierWithWaitList);
    HOOK(CreateUserEvent); HOOK(CreateCommandQueueWithProperties); HOOK(RetainCommandQueue);
    HOOK(RetainProgram); HOOK(RetainKernel); HOOK(RetainEvent); HOOK(RetainContext);
    HOOK(ReleaseMemObject); HOOK(ReleaseCommandQueue); HOOK(ReleaseProgram); HOOK(ReleaseKernel);
    HOOK(ReleaseEvent); HOOK(ReleaseContext);
#undef HOOK
    /* CLSFAULT_COUNT=device:nth:call:k:times arms one rule from the start,
     * for a process the test cannot reach (the tool) */
    const char *env = getenv("CLSFAULT_COUNT");
    char dev[128] = "", call[64] = "";
    int nth = 0;
    long k = 0, times = -1;
    if (env && sscanf(env, "%127[^:]:%d:%63[^:]:%ld:%ld", dev, &nth, call, &k, &times) == 5)
        clsfault_count_add(dev, nth, call, k, times, 0);
    else if (env && sscanf(env, "%127[^:]:%d::%ld:%ld", dev, &nth, &k, &times) == 4)
        clsfault_count_add(dev, nth, NULL, k, times, 0);
    if (getenv("CLSFAULT_COUNT_OUT")) atexit(report_at_exit);
}

