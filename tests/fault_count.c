/* Call counting for the fault layer (tests/fault_layer.c): every OpenCL
 * call the library makes, charged to a device and counted, a failure
 * injected at call k of a chosen device, and the objects the library
 * creates and releases, counted by type.
 *
 * Built into the same layer module; fault_layer.c's clInitLayer calls
 * clsfault_count_install() last, which wraps the table's entries: a
 * counted call goes here first, then to the fault layer's own hook (if
 * any), then to the driver. Queries made here go straight to the driver.
 *
 * Which device a call is charged to:
 *   - calls on a device, queue or event: that device;
 *   - calls on a context, program or kernel (clCreateBuffer, ...): the
 *     device of the last call this thread made on a device or queue, when
 *     it belongs to that context (a worker thread serves one device);
 *     otherwise every device of the context (a rule for any of them fails
 *     it);
 *   - clCreateContext, clCreateProgramWithBinary, clBuildProgram: every
 *     device listed.
 * Platform queries (clGetPlatformIDs, clGetPlatformInfo, clGetDeviceIDs)
 * and releases are not counted as calls (a release cannot be refused).
 *
 * A count rule (clsfault_count_add) names a device as the fault layer's
 * rules do (a substring of its name and its ordinal among the devices of
 * its platform that contain it), optionally the calls (a substring of the
 * function's name), and counts the calls charged to it; call
 * number `k` (0-based) and the `times - 1` after it (times -1: all from k
 * on) fail with `error`, k < 0 only counts. An enqueue that fails enqueues
 * nothing; clFinish and clWaitForEvents first wait, then fail (a device
 * lost after its work ran: nothing of it still runs when the caller frees
 * its memory); a create call returns NULL. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl_layer.h>
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_count.h"

#define EXPORT __attribute__((visibility("default")))

static struct _cl_icd_dispatch inner; /* the table before these hooks: the fault layer's, then the driver's */

/* ---- objects ---- */

enum { OBJ_MEM, OBJ_QUEUE, OBJ_PROGRAM, OBJ_KERNEL, OBJ_EVENT, OBJ_CONTEXT, OBJ_TYPES };
static atomic_long created[OBJ_TYPES], released[OBJ_TYPES];

static void made(int type, const void *obj)
{
    if (obj) atomic_fetch_add(&created[type], 1);
}

/* ---- rules ---- */

#define MAX_COUNT_RULES 4
#define MAX_SEEN_DEVICES 16

typedef struct count_rule {
    char device[128];
    int nth;
    char call[64];      /* only calls whose name contains it ("": all) */
    long k, times;
    cl_int error;
    long seen, injected;
    const char *failed_call;              /* the first call it failed */
    cl_device_id ids[MAX_SEEN_DEVICES];   /* devices already looked at, and whether they match */
    int match[MAX_SEEN_DEVICES];
    int nids;
} count_rule;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static count_rule rules[MAX_COUNT_RULES];
static int nrules;
static atomic_int armed;
static _Thread_local cl_device_id last_device;

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

static int name_contains(cl_device_id d, const char *sub)
{
    char name[256] = "";
    if (inner.clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS) return 0;
    return contains_ci(name, sub);
}

static int compute_match(const count_rule *r, cl_device_id d)
{
    for (int depth = 0; depth < 8; depth++) {
        cl_device_id parent = NULL;
        if (inner.clGetDeviceInfo(d, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) != CL_SUCCESS
            || !parent)
            break;
        d = parent;
    }
    if (!name_contains(d, r->device)) return 0;
    if (r->nth < 0) return 1;
    cl_platform_id p = NULL;
    if (inner.clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS) return 0;
    cl_device_id ids[64];
    cl_uint n = 0;
    if (inner.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, ids, &n) != CL_SUCCESS) return 0;
    int ord = 0;
    for (cl_uint i = 0; i < n && i < 64; i++) {
        if (!name_contains(ids[i], r->device)) continue;
        if (ids[i] == d) return ord == r->nth;
        ord++;
    }
    return 0;
}

/* Lock held. */
static int rule_matches(count_rule *r, cl_device_id d)
{
    for (int i = 0; i < r->nids; i++)
        if (r->ids[i] == d) return r->match[i];
    int m = compute_match(r, d);
    if (r->nids < MAX_SEEN_DEVICES) {
        r->ids[r->nids] = d;
        r->match[r->nids++] = m;
    }
    return m;
}

/* The devices a call is charged to (none while no rule is armed: the
 * lookups cost driver calls that timing tests would feel). */
typedef struct charge {
    cl_device_id d[8];
    int n;
} charge;

static void charge_one(charge *c, cl_device_id d)
{
    c->n = 0;
    if (d) {
        c->d[0] = d;
        c->n = 1;
        last_device = d;
    }
}

static void charge_list(charge *c, cl_uint n, const cl_device_id *ids)
{
    c->n = 0;
    for (cl_uint i = 0; ids && i < n && c->n < 8; i++) c->d[c->n++] = ids[i];
    if (c->n == 1) last_device = c->d[0];
}

/* Charge to this thread's last device if listed, else to all listed. */
static void charge_among(charge *c, cl_uint n, const cl_device_id *ids)
{
    for (cl_uint i = 0; ids && i < n; i++)
        if (ids[i] == last_device) {
            charge_one(c, last_device);
            return;
        }
    charge_list(c, n, ids);
}

static void charge_context(charge *c, cl_context ctx)
{
    cl_device_id ids[64];
    size_t size = 0;
    c->n = 0;
    if (!atomic_load(&armed) || !ctx || inner.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof ids, ids, &size) != CL_SUCCESS) return;
    charge_among(c, (cl_uint)(size / sizeof ids[0]), ids);
}

static void charge_program(charge *c, cl_program p)
{
    cl_context ctx = NULL;
    c->n = 0;
    if (atomic_load(&armed) && p && inner.clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx, NULL) == CL_SUCCESS)
        charge_context(c, ctx);
}

static void charge_kernel(charge *c, cl_kernel k)
{
    cl_program p = NULL;
    c->n = 0;
    if (atomic_load(&armed) && k && inner.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof p, &p, NULL) == CL_SUCCESS) charge_program(c, p);
}

static void charge_queue(charge *c, cl_command_queue q)
{
    cl_device_id d = NULL;
    if (atomic_load(&armed) && q) inner.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL);
    charge_one(c, d);
}

static void charge_event(charge *c, cl_event ev)
{
    cl_command_queue q = NULL;
    c->n = 0;
    if (atomic_load(&armed) && ev && inner.clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS && q)
        charge_queue(c, q);
}

/* Counts the call for every rule whose device it is charged to; the
 * error to return, or CL_SUCCESS to let it through. */
static cl_int count(const charge *c, const char *call)
{
    if (!atomic_load(&armed) || c->n == 0) return CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nrules; i++) {
        count_rule *r = &rules[i];
        if (r->call[0] && !strstr(call, r->call)) continue;
        int hit = 0;
        for (int j = 0; j < c->n && !hit; j++) hit = rule_matches(r, c->d[j]);
        if (!hit) continue;
        long n = r->seen++;
        if (r->k >= 0 && n >= r->k && (r->times < 0 || n < r->k + r->times) && err == CL_SUCCESS) {
            err = r->error;
            r->injected++;
            if (!r->failed_call) r->failed_call = call;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

/* ---- hooks ---- */

#define FAIL_NULL(e)                \
    do {                            \
        if (errcode) *errcode = (e); \
        return NULL;                \
    } while (0)

static cl_int CL_API_CALL h_GetDeviceInfo(cl_device_id d, cl_device_info w, size_t n, void *v, size_t *r)
{
    charge c;
    charge_one(&c, d);
    cl_int e = count(&c, "clGetDeviceInfo");
    return e != CL_SUCCESS ? e : inner.clGetDeviceInfo(d, w, n, v, r);
}

static cl_context CL_API_CALL h_CreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *ids,
                                              void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                              void *user, cl_int *errcode)
{
    charge c;
    charge_list(&c, n, ids);
    cl_int e = count(&c, "clCreateContext");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_context x = inner.clCreateContext(props, n, ids, notify, user, errcode);
    made(OBJ_CONTEXT, x);
    return x;
}

static cl_command_queue CL_API_CALL h_CreateCommandQueue(cl_context ctx, cl_device_id d,
                                                         cl_command_queue_properties props, cl_int *errcode)
{
    charge c;
    charge_one(&c, d);
    cl_int e = count(&c, "clCreateCommandQueue");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_command_queue x = inner.clCreateCommandQueue(ctx, d, props, errcode);
    made(OBJ_QUEUE, x);
    return x;
}

static cl_mem CL_API_CALL h_CreateBuffer(cl_context ctx, cl_mem_flags fl, size_t size, void *host, cl_int *errcode)
{
    charge c;
    charge_context(&c, ctx);
    cl_int e = count(&c, "clCreateBuffer");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_mem x = inner.clCreateBuffer(ctx, fl, size, host, errcode);
    made(OBJ_MEM, x);
    return x;
}

static cl_program CL_API_CALL h_CreateProgramWithSource(cl_context ctx, cl_uint n, const char **src,
                                                        const size_t *len, cl_int *errcode)
{
    charge c;
    charge_context(&c, ctx);
    cl_int e = count(&c, "clCreateProgramWithSource");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_program x = inner.clCreateProgramWithSource(ctx, n, src, len, errcode);
    made(OBJ_PROGRAM, x);
    return x;
}

static cl_program CL_API_CALL h_CreateProgramWithBinary(cl_context ctx, cl_uint n, const cl_device_id *ids,
                                                        const size_t *len, const unsigned char **bin,
                                                        cl_int *status, cl_int *errcode)
{
    charge c;
    charge_list(&c, n, ids);
    cl_int e = count(&c, "clCreateProgramWithBinary");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_program x = inner.clCreateProgramWithBinary(ctx, n, ids, len, bin, status, errcode);
    made(OBJ_PROGRAM, x);
    return x;
}

static cl_int CL_API_CALL h_BuildProgram(cl_program p, cl_uint n, const cl_device_id *ids, const char *opts,
                                         void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    charge c;
    charge_list(&c, n, ids);
    cl_int e = count(&c, "clBuildProgram");
    return e != CL_SUCCESS ? e : inner.clBuildProgram(p, n, ids, opts, notify, user);
}

static cl_int CL_API_CALL h_GetProgramInfo(cl_program p, cl_program_info w, size_t n, void *v, size_t *r)
{
    charge c;
    charge_program(&c, p);
    cl_int e = count(&c, "clGetProgramInfo");
    return e != CL_SUCCESS ? e : inner.clGetProgramInfo(p, w, n, v, r);
}

static cl_int CL_API_CALL h_GetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info w, size_t n,
                                                void *v, size_t *r)
{
    charge c;
    charge_one(&c, d);
    cl_int e = count(&c, "clGetProgramBuildInfo");
    return e != CL_SUCCESS ? e : inner.clGetProgramBuildInfo(p, d, w, n, v, r);
}

static cl_kernel CL_API_CALL h_CreateKernel(cl_program p, const char *name, cl_int *errcode)
{
    charge c;
    charge_program(&c, p);
    cl_int e = count(&c, "clCreateKernel");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_kernel x = inner.clCreateKernel(p, name, errcode);
    made(OBJ_KERNEL, x);
    return x;
}

static cl_int CL_API_CALL h_SetKernelArg(cl_kernel k, cl_uint i, size_t n, const void *v)
{
    charge c;
    charge_kernel(&c, k);
    cl_int e = count(&c, "clSetKernelArg");
    return e != CL_SUCCESS ? e : inner.clSetKernelArg(k, i, n, v);
}

static cl_int CL_API_CALL h_GetKernelWorkGroupInfo(cl_kernel k, cl_device_id d, cl_kernel_work_group_info w,
                                                   size_t n, void *v, size_t *r)
{
    charge c;
    charge_one(&c, d);
    cl_int e = count(&c, "clGetKernelWorkGroupInfo");
    return e != CL_SUCCESS ? e : inner.clGetKernelWorkGroupInfo(k, d, w, n, v, r);
}

/* Enqueues: fail before enqueuing; count the event made. */
#define ENQUEUE_PROLOGUE(q, name)             \
    charge c;                                 \
    charge_queue(&c, (q));                    \
    cl_int e = count(&c, name);               \
    if (e != CL_SUCCESS) return e

static cl_int CL_API_CALL h_EnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                                                 const size_t *global, const size_t *local, cl_uint nw,
                                                 const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueNDRangeKernel");
    e = inner.clEnqueueNDRangeKernel(q, k, dim, off, global, local, nw, w, ev);
    if (e == CL_SUCCESS && ev) made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n,
                                               const void *p, cl_uint nw, const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueWriteBuffer");
    e = inner.clEnqueueWriteBuffer(q, m, b, off, n, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t n, void *p,
                                              cl_uint nw, const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueReadBuffer");
    e = inner.clEnqueueReadBuffer(q, m, b, off, n, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueWriteBufferRect(cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo,
                                                   const size_t *ho, const size_t *reg, size_t brp, size_t bsp,
                                                   size_t hrp, size_t hsp, const void *p, cl_uint nw,
                                                   const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueWriteBufferRect");
    e = inner.clEnqueueWriteBufferRect(q, m, b, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_EnqueueReadBufferRect(cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo,
                                                  const size_t *ho, const size_t *reg, size_t brp, size_t bsp,
                                                  size_t hrp, size_t hsp, void *p, cl_uint nw, const cl_event *w,
                                                  cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueReadBufferRect");
    e = inner.clEnqueueReadBufferRect(q, m, b, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) made(OBJ_EVENT, *ev);
    return e;
}

static void *CL_API_CALL h_EnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags fl, size_t off,
                                            size_t n, cl_uint nw, const cl_event *w, cl_event *ev, cl_int *errcode)
{
    charge c;
    charge_queue(&c, q);
    cl_int e = count(&c, "clEnqueueMapBuffer");
    if (e != CL_SUCCESS) FAIL_NULL(e);
    cl_int e2 = CL_SUCCESS;
    void *p = inner.clEnqueueMapBuffer(q, m, b, fl, off, n, nw, w, ev, &e2);
    if (errcode) *errcode = e2;
    if (e2 == CL_SUCCESS && ev) made(OBJ_EVENT, *ev);
    return p;
}

static cl_int CL_API_CALL h_EnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint nw,
                                                  const cl_event *w, cl_event *ev)
{
    ENQUEUE_PROLOGUE(q, "clEnqueueUnmapMemObject");
    e = inner.clEnqueueUnmapMemObject(q, m, p, nw, w, ev);
    if (e == CL_SUCCESS && ev) made(OBJ_EVENT, *ev);
    return e;
}

static cl_int CL_API_CALL h_Flush(cl_command_queue q)
{
    ENQUEUE_PROLOGUE(q, "clFlush");
    return inner.clFlush(q);
}

/* Waits: the work runs to its end, then the error (see the top). */
static cl_int CL_API_CALL h_Finish(cl_command_queue q)
{
    charge c;
    charge_queue(&c, q);
    cl_int e = count(&c, "clFinish");
    cl_int r = inner.clFinish(q);
    return e != CL_SUCCESS ? e : r;
}

static cl_int CL_API_CALL h_WaitForEvents(cl_uint n, const cl_event *list)
{
    charge c = {.n = 0};
    if (n && list) charge_event(&c, list[0]);
    cl_int e = count(&c, "clWaitForEvents");
    cl_int r = inner.clWaitForEvents(n, list);
    return e != CL_SUCCESS ? e : r;
}

static cl_int CL_API_CALL h_GetEventInfo(cl_event ev, cl_event_info w, size_t n, void *v, size_t *r)
{
    charge c;
    charge_event(&c, ev);
    cl_int e = count(&c, "clGetEventInfo");
    return e != CL_SUCCESS ? e : inner.clGetEventInfo(ev, w, n, v, r);
}

static cl_int CL_API_CALL h_GetEventProfilingInfo(cl_event ev, cl_profiling_info w, size_t n, void *v, size_t *r)
{
    charge c;
    charge_event(&c, ev);
    cl_int e = count(&c, "clGetEventProfilingInfo");
    return e != CL_SUCCESS ? e : inner.clGetEventProfilingInfo(ev, w, n, v, r);
}

/* Retains and releases: counted as objects, never failed. */
static cl_int CL_API_CALL h_RetainMemObject(cl_mem m)
{
    cl_int e = inner.clRetainMemObject(m);
    if (e == CL_SUCCESS) atomic_fetch_add(&created[OBJ_MEM], 1);
    return e;
}

#define RELEASE(fn, T, type)                                   \
    static cl_int CL_API_CALL h_##fn(T x)                      \
    {                                                          \
        cl_int e = inner.cl##fn(x);                            \
        if (e == CL_SUCCESS) atomic_fetch_add(&released[type], 1); \
        return e;                                              \
    }
RELEASE(ReleaseMemObject, cl_mem, OBJ_MEM)
RELEASE(ReleaseCommandQueue, cl_command_queue, OBJ_QUEUE)
RELEASE(ReleaseProgram, cl_program, OBJ_PROGRAM)
RELEASE(ReleaseKernel, cl_kernel, OBJ_KERNEL)
RELEASE(ReleaseEvent, cl_event, OBJ_EVENT)
RELEASE(ReleaseContext, cl_context, OBJ_CONTEXT)
#undef RELEASE

EXPORT int clsfault_count_add(const char *device, int nth, const char *call, long k, long times, int error);

void clsfault_count_install(struct _cl_icd_dispatch *layer, size_t entries)
{
    memset(&inner, 0, sizeof inner);
    memcpy(&inner, layer, (entries < sizeof inner ? entries : sizeof inner));
#define HOOK(fn) if (inner.cl##fn) layer->cl##fn = h_##fn
    HOOK(GetDeviceInfo); HOOK(CreateContext); HOOK(CreateCommandQueue); HOOK(CreateBuffer);
    HOOK(CreateProgramWithSource); HOOK(CreateProgramWithBinary); HOOK(BuildProgram); HOOK(GetProgramInfo);
    HOOK(GetProgramBuildInfo); HOOK(CreateKernel); HOOK(SetKernelArg); HOOK(GetKernelWorkGroupInfo);
    HOOK(EnqueueNDRangeKernel); HOOK(EnqueueWriteBuffer); HOOK(EnqueueReadBuffer); HOOK(EnqueueWriteBufferRect);
    HOOK(EnqueueReadBufferRect); HOOK(EnqueueMapBuffer); HOOK(EnqueueUnmapMemObject); HOOK(Flush); HOOK(Finish);
    HOOK(WaitForEvents); HOOK(GetEventInfo); HOOK(GetEventProfilingInfo); HOOK(RetainMemObject);
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
}

/* ---- control, for the test (tests/fault_ctl.h) ---- */

/* A count rule (see the top), on the calls whose name contains `call`
 * (NULL: all); returns its number, or -1 (table full). */
EXPORT int clsfault_count_add(const char *device, int nth, const char *call, long k, long times, int error)
{
    if (!device) return -1;
    pthread_mutex_lock(&lock);
    int i = nrules < MAX_COUNT_RULES ? nrules++ : -1;
    if (i >= 0) {
        count_rule *r = &rules[i];
        memset(r, 0, sizeof *r);
        snprintf(r->device, sizeof r->device, "%s", device);
        r->nth = nth;
        snprintf(r->call, sizeof r->call, "%s", call ? call : "");
        r->k = k;
        r->times = times;
        r->error = error ? error : CL_OUT_OF_RESOURCES;
        atomic_store(&armed, 1);
    }
    pthread_mutex_unlock(&lock);
    return i;
}

EXPORT void clsfault_count_clear(void)
{
    pthread_mutex_lock(&lock);
    nrules = 0;
    atomic_store(&armed, 0);
    pthread_mutex_unlock(&lock);
}

/* Calls rule i saw; failures it injected; the first call it failed (NULL: none). */
EXPORT long clsfault_count_seen(int i)
{
    pthread_mutex_lock(&lock);
    long n = i >= 0 && i < nrules ? rules[i].seen : 0;
    pthread_mutex_unlock(&lock);
    return n;
}

EXPORT long clsfault_count_injected(int i)
{
    pthread_mutex_lock(&lock);
    long n = i >= 0 && i < nrules ? rules[i].injected : 0;
    pthread_mutex_unlock(&lock);
    return n;
}

EXPORT const char *clsfault_count_failed_call(int i)
{
    pthread_mutex_lock(&lock);
    const char *s = i >= 0 && i < nrules ? rules[i].failed_call : NULL;
    pthread_mutex_unlock(&lock);
    return s;
}

/* Objects of a type (0 mem, 1 queue, 2 program, 3 kernel, 4 event,
 * 5 context; -1 all) created (and retained) so far, and released. */
EXPORT long clsfault_objects_created(int type)
{
    long n = 0;
    for (int t = 0; t < OBJ_TYPES; t++)
        if (type < 0 || type == t) n += atomic_load(&created[t]);
    return n;
}

EXPORT long clsfault_objects_released(int type)
{
    long n = 0;
    for (int t = 0; t < OBJ_TYPES; t++)
        if (type < 0 || type == t) n += atomic_load(&released[t]);
    return n;
}
