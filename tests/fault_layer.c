/* An OpenCL API layer (cl_loader_layers) that injects faults into one chosen
 * device, for the failover tests. Loaded by the ICD loader through
 * OPENCL_LAYERS=/path/libclsfault.so; it forwards every call to the next
 * dispatch table and, while a rule is armed, makes the matching calls fail:
 *
 *   CLSFAULT_KERNEL  clEnqueueNDRangeKernel returns the error (default
 *                    CL_OUT_OF_RESOURCES) and enqueues nothing;
 *   CLSFAULT_BUFFER  clCreateBuffer returns NULL with the error (default
 *                    CL_MEM_OBJECT_ALLOCATION_FAILURE);
 *   CLSFAULT_WAIT    clWaitForEvents waits for the commands, then returns the
 *                    error (default CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST):
 *                    a device lost after doing the work;
 *   CLSFAULT_STATUS  clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS) of a
 *                    complete command reports the error (default
 *                    CL_DEVICE_NOT_AVAILABLE) as the command's status;
 *   CLSFAULT_DELAY   clEnqueueNDRangeKernel (of the rule's kernels) sleeps `error` microseconds (default
 *                    1000) first: a slow device, so that the scheduler gives
 *                    the device under test its share of slices;
 *   CLSFAULT_BUILD   clBuildProgram of a program for the device returns the
 *                    error (default CL_BUILD_PROGRAM_FAILURE); the rule's
 *                    kernel field matches a substring of the build options
 *                    (clscale builds one kernel per program: "-DCLS_KERNEL=5 ");
 *   CLSFAULT_HOLD    the rule names the device that goes first: kernel
 *                    launches on every other device wait until it has
 *                    launched a kernel, or `error` milliseconds (default 5000)
 *                    passed; the thread that armed the rule (the test's, which
 *                    runs the library's one-off checks) is never held. The
 *                    device under test then surely takes a slice, however the
 *                    threads are scheduled.
 *
 * The test controls it at run time through the functions exported below
 * (clsfault_*), which it finds with dlopen(path, RTLD_NOLOAD) + dlsym on the
 * copy the loader already mapped; environment variables would be read once.
 * A test that cannot call into the process (a rank of `mpirun clscale ...`)
 * arms one rule at load instead: CLSFAULT_RULE="KIND,DEVICE,NTH,KERNEL,AFTER,TIMES[,ERROR]"
 * (as for clsfault_add(); KERNEL "*" for all; without ERROR the kind's default).
 *
 * CLSFAULT_GATE=FIFO (set in such a process's environment) stops every
 * kernel launch of the process until the test lets it go: the first
 * launch opens the named FIFO for reading, which blocks until the test
 * opens it for writing (so the test knows the process is there: before its
 * first kernel, its output's temporary made, its input's first chunk read),
 * then reads until the test writes a byte or closes it. A condition, not a
 * time: the test does what it must to a process standing still.
 *
 * A rule matches a device by a case-insensitive substring of its name and
 * its ordinal among the devices of its platform whose names contain that
 * substring, in clGetDeviceIDs order (sub-devices count as their root): two
 * PoCL pthread devices are ("pthread", 0) and ("pthread", 1). Queue and event
 * calls find their device through the queue. clCreateBuffer names only a
 * context; with several devices in it, the call is charged to the device
 * whose queue this thread used last (a worker thread serves one device), and
 * a thread that has used no queue of that context yet is never failed.
 *
 * A rule lets `after` matching calls through, then fails the next `times`
 * (-1: all of them): a dropped device stays broken, as real ones do.
 *
 * tests/fault_count.c, built into the same module, counts every OpenCL
 * call per device and the objects created and released, and fails call k
 * of a chosen device (clsfault_count_*). */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl_layer.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault_count.h"

#define EXPORT __attribute__((visibility("default")))

enum {
    CLSFAULT_KERNEL = 1,
    CLSFAULT_BUFFER = 2,
    CLSFAULT_WAIT = 3,
    CLSFAULT_STATUS = 4,
    CLSFAULT_DELAY = 5,
    CLSFAULT_HOLD = 6,
    CLSFAULT_BUILD = 7
};

#define MAX_RULES 8

typedef struct rule {
    int kind;
    char device[128];
    int nth;            /* -1: every matching device */
    char kernel[64];    /* only kernels whose name (CLSFAULT_BUILD: build options) contains it ("" all) */
    long after, times;
    cl_int error;       /* CLSFAULT_DELAY: microseconds; CLSFAULT_HOLD: milliseconds */
    long seen;          /* matching calls */
    long injected;      /* of which failed */
    int released;       /* CLSFAULT_HOLD: the device went first */
    struct timespec deadline;   /* CLSFAULT_HOLD, CLOCK_REALTIME for the wait */
    pthread_t controller;       /* CLSFAULT_HOLD: never held */
} rule;

static struct _cl_icd_dispatch layer;
static const struct _cl_icd_dispatch *next;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t released = PTHREAD_COND_INITIALIZER;
static rule rules[MAX_RULES];
static int nrules;
static atomic_uint armed; /* bit per kind with a rule: the fast path reads only this */

static _Thread_local cl_device_id last_device; /* of the last queue this thread used */

/* ---- which device ---- */

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

static cl_device_id root_of(cl_device_id d)
{
    for (int depth = 0; d && depth < 8; depth++) {
        cl_device_id parent = NULL;
        if (next->clGetDeviceInfo(d, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) != CL_SUCCESS
            || !parent)
            break;
        d = parent;
    }
    return d;
}

static int name_matches(cl_device_id d, const char *sub)
{
    char name[256] = "";
    if (next->clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS) return 0;
    return contains_ci(name, sub);
}

/* Whether device d is the one rule r names. Lock held. */
static int device_matches(const rule *r, cl_device_id d)
{
    if (!d) return 0;
    d = root_of(d);
    if (!name_matches(d, r->device)) return 0;
    if (r->nth < 0) return 1;
    cl_platform_id p = NULL;
    if (next->clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS) return 0;
    cl_device_id ids[64];
    cl_uint n = 0;
    if (next->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, ids, &n) != CL_SUCCESS) return 0;
    int ord = 0;
    for (cl_uint i = 0; i < n && i < 64; i++) {
        if (!name_matches(ids[i], r->device)) continue;
        if (ids[i] == d) return ord == r->nth;
        ord++;
    }
    return 0;
}

static cl_device_id device_of_queue(cl_command_queue q)
{
    cl_device_id d = NULL;
    if (!q || next->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL) != CL_SUCCESS) return NULL;
    return d;
}

static cl_device_id device_of_event(cl_event ev)
{
    cl_command_queue q = NULL;
    if (!ev || next->clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS) return NULL;
    return device_of_queue(q); /* NULL for a user event */
}

/* The device a clCreateBuffer on context c is for, or NULL when unknown. */
static cl_device_id device_of_context(cl_context c)
{
    cl_device_id ids[64];
    size_t size = 0;
    if (next->clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof ids, ids, &size) != CL_SUCCESS) return NULL;
    size_t n = size / sizeof ids[0];
    if (n == 1) return ids[0];
    for (size_t i = 0; i < n; i++)
        if (ids[i] == last_device) return last_device;
    return NULL;
}

static int kernel_matches(const rule *r, cl_kernel k)
{
    if (!r->kernel[0]) return 1;
    char name[128] = "";
    if (next->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS) return 0;
    return strstr(name, r->kernel) != NULL;
}

/* The error to inject for a call of `kind` on device d (kernel k, or build
 * options `opts`, to match the rule's kernel field), or CL_SUCCESS to let
 * it through; for CLSFAULT_DELAY the microseconds to wait. Counts the call. */
static cl_int decide(int kind, cl_device_id d, cl_kernel k, const char *opts)
{
    if (!(atomic_load(&armed) & (1u << kind)) || !d) return CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nrules && err == CL_SUCCESS; i++) {
        rule *r = &rules[i];
        if (r->kind != kind || !device_matches(r, d) || (k && !kernel_matches(r, k))) continue;
        if (kind == CLSFAULT_BUILD && r->kernel[0] && (!opts || !strstr(opts, r->kernel))) continue;
        long n = r->seen++;
        if (n >= r->after && (r->times < 0 || n < r->after + r->times)) {
            r->injected++;
            err = r->error;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

/* CLSFAULT_HOLD: device d is about to launch a kernel. Releases the rules
 * waiting for d, and waits for those waiting for another device. A rule
 * that times out counts as released. */
static void hold(cl_device_id d)
{
    if (!(atomic_load(&armed) & (1u << CLSFAULT_HOLD)) || !d) return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nrules; i++) {
        rule *r = &rules[i];
        if (r->kind == CLSFAULT_HOLD && !r->released && device_matches(r, d)) {
            r->released = 1;
            pthread_cond_broadcast(&released);
        }
    }
    int counted = 0;
    for (;;) {
        /* the table may change while this waits: look again each time */
        rule *w = NULL;
        for (int i = 0; i < nrules && !w; i++) {
            rule *r = &rules[i];
            if (r->kind == CLSFAULT_HOLD && !r->released && !pthread_equal(r->controller, pthread_self())
                && !device_matches(r, d))
                w = r;
        }
        if (!w) break;
        if (!counted) {
            w->injected++;
            counted = 1;
        }
        if (pthread_cond_timedwait(&released, &lock, &w->deadline) == ETIMEDOUT) w->released = 1;
    }
    pthread_mutex_unlock(&lock);
}

/* CLSFAULT_GATE (see the top): the first launch waits at the FIFO, the
 * others for the first. */
static const char *gate_path;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_open = PTHREAD_COND_INITIALIZER;
static int gate_state; /* 0 closed, 1 a launch at the FIFO, 2 open */

static void gate(void)
{
    if (!gate_path) return;
    pthread_mutex_lock(&gate_lock);
    if (gate_state == 0) {
        gate_state = 1;
        pthread_mutex_unlock(&gate_lock);
        int fd = open(gate_path, O_RDONLY);
        if (fd >= 0) {
            char c;
            while (read(fd, &c, 1) < 0 && errno == EINTR) {}
            close(fd);
        }
        pthread_mutex_lock(&gate_lock);
        gate_state = 2;
        pthread_cond_broadcast(&gate_open);
    }
    while (gate_state != 2) pthread_cond_wait(&gate_open, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static void note_queue(cl_command_queue q)
{
    cl_device_id d = device_of_queue(q);
    if (d) last_device = d;
}

/* ---- intercepted calls ---- */

static cl_int CL_API_CALL hook_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                                      const size_t *off, const size_t *global,
                                                      const size_t *local, cl_uint nwait, const cl_event *wait,
                                                      cl_event *ev)
{
    note_queue(q);
    gate();
    hold(last_device);
    cl_int us = decide(CLSFAULT_DELAY, last_device, k, NULL);
    if (us > 0) {
        struct timespec t = {us / 1000000, (long)(us % 1000000) * 1000};
        nanosleep(&t, NULL);
    }
    cl_int e = decide(CLSFAULT_KERNEL, last_device, k, NULL);
    if (e != CL_SUCCESS) return e;
    return next->clEnqueueNDRangeKernel(q, k, dim, off, global, local, nwait, wait, ev);
}

static cl_mem CL_API_CALL hook_clCreateBuffer(cl_context c, cl_mem_flags flags, size_t size, void *host,
                                              cl_int *errcode)
{
    if (atomic_load(&armed) & (1u << CLSFAULT_BUFFER)) {
        cl_int e = decide(CLSFAULT_BUFFER, device_of_context(c), NULL, NULL);
        if (e != CL_SUCCESS) {
            if (errcode) *errcode = e;
            return NULL;
        }
    }
    return next->clCreateBuffer(c, flags, size, host, errcode);
}

static cl_int CL_API_CALL hook_clWaitForEvents(cl_uint n, const cl_event *list)
{
    cl_int e = next->clWaitForEvents(n, list);
    if (e != CL_SUCCESS || !(atomic_load(&armed) & (1u << CLSFAULT_WAIT))) return e;
    for (cl_uint i = 0; i < n; i++) {
        cl_int f = decide(CLSFAULT_WAIT, device_of_event(list[i]), NULL, NULL);
        if (f != CL_SUCCESS) return f;
    }
    return CL_SUCCESS;
}

static cl_int CL_API_CALL hook_clGetEventInfo(cl_event ev, cl_event_info what, size_t size, void *value,
                                              size_t *size_ret)
{
    cl_int e = next->clGetEventInfo(ev, what, size, value, size_ret);
    if (e != CL_SUCCESS || what != CL_EVENT_COMMAND_EXECUTION_STATUS || !value || size < sizeof(cl_int)
        || *(cl_int *)value != CL_COMPLETE || !(atomic_load(&armed) & (1u << CLSFAULT_STATUS)))
        return e;
    cl_int f = decide(CLSFAULT_STATUS, device_of_event(ev), NULL, NULL);
    if (f != CL_SUCCESS) *(cl_int *)value = f;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL hook_clBuildProgram(cl_program p, cl_uint ndev, const cl_device_id *devs,
                                              const char *opts, void(CL_CALLBACK *notify)(cl_program, void *),
                                              void *user)
{
    if ((atomic_load(&armed) & (1u << CLSFAULT_BUILD)) && ndev >= 1 && devs) {
        cl_int e = decide(CLSFAULT_BUILD, devs[0], NULL, opts);
        if (e != CL_SUCCESS) return e;
    }
    return next->clBuildProgram(p, ndev, devs, opts, notify, user);
}

/* Calls that only tell which device this thread works for. */
static cl_int CL_API_CALL hook_clFlush(cl_command_queue q)
{
    note_queue(q);
    return next->clFlush(q);
}

static cl_int CL_API_CALL hook_clFinish(cl_command_queue q)
{
    note_queue(q);
    return next->clFinish(q);
}

static cl_int CL_API_CALL hook_clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off,
                                                    size_t n, const void *p, cl_uint nwait, const cl_event *wait,
                                                    cl_event *ev)
{
    note_queue(q);
    return next->clEnqueueWriteBuffer(q, m, block, off, n, p, nwait, wait, ev);
}

static cl_int CL_API_CALL hook_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off,
                                                   size_t n, void *p, cl_uint nwait, const cl_event *wait,
                                                   cl_event *ev)
{
    note_queue(q);
    return next->clEnqueueReadBuffer(q, m, block, off, n, p, nwait, wait, ev);
}

static void *CL_API_CALL hook_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block, cl_map_flags fl,
                                                 size_t off, size_t n, cl_uint nwait, const cl_event *wait,
                                                 cl_event *ev, cl_int *errcode)
{
    note_queue(q);
    return next->clEnqueueMapBuffer(q, m, block, fl, off, n, nwait, wait, ev, errcode);
}

/* ---- layer entry points ---- */

EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void *value,
                                                       size_t *size_ret)
{
    static const char layer_name[] = "clscale fault injection";
    const void *src;
    size_t n;
    cl_layer_api_version v = CL_LAYER_API_VERSION_100;
    switch (name) {
    case CL_LAYER_API_VERSION:
        src = &v;
        n = sizeof v;
        break;
    case CL_LAYER_NAME:
        src = layer_name;
        n = sizeof layer_name;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (value) {
        if (size < n) return CL_INVALID_VALUE;
        memcpy(value, src, n);
    }
    if (size_ret) *size_ret = n;
    return CL_SUCCESS;
}

EXPORT int clsfault_add(int kind, const char *device, int nth, const char *kernel, long after, long times,
                        int error);

/* CLSFAULT_RULE, for processes the test does not control (see the top). */
static void arm_from_env(void)
{
    gate_path = getenv("CLSFAULT_GATE");
    if (gate_path && !*gate_path) gate_path = NULL;
    const char *e = getenv("CLSFAULT_RULE");
    int kind, nth;
    long after, times;
    int error = 0;
    char device[128], kernel[64];
    if (e && sscanf(e, "%d,%127[^,],%d,%63[^,],%ld,%ld,%d", &kind, device, &nth, kernel, &after, &times, &error) >= 6)
        clsfault_add(kind, device, nth, strcmp(kernel, "*") ? kernel : NULL, after, times, error);
}

EXPORT CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch *target,
                                                    cl_uint *num_entries_ret,
                                                    const struct _cl_icd_dispatch **layer_dispatch)
{
    const size_t mine = sizeof layer / sizeof(void (*)(void));
    if (!target || !num_entries_ret || !layer_dispatch) return CL_INVALID_VALUE;
    /* the table must reach every entry hooked below (all OpenCL 1.0) */
    size_t need = 0;
#define NEED(f) if (offsetof(struct _cl_icd_dispatch, f) > need) need = offsetof(struct _cl_icd_dispatch, f)
    NEED(clEnqueueNDRangeKernel); NEED(clCreateBuffer); NEED(clWaitForEvents); NEED(clGetEventInfo);
    NEED(clFlush); NEED(clFinish); NEED(clEnqueueWriteBuffer); NEED(clEnqueueReadBuffer);
    NEED(clEnqueueMapBuffer); NEED(clGetDeviceInfo); NEED(clGetDeviceIDs); NEED(clGetContextInfo);
    NEED(clGetCommandQueueInfo); NEED(clGetKernelInfo); NEED(clBuildProgram);
#undef NEED
    if ((size_t)num_entries * sizeof(void (*)(void)) <= need) return CL_INVALID_VALUE;
    memset(&layer, 0, sizeof layer);
    memcpy(&layer, target, (num_entries < mine ? num_entries : mine) * sizeof(void (*)(void)));
    next = target;
    layer.clEnqueueNDRangeKernel = hook_clEnqueueNDRangeKernel;
    layer.clCreateBuffer = hook_clCreateBuffer;
    layer.clWaitForEvents = hook_clWaitForEvents;
    layer.clGetEventInfo = hook_clGetEventInfo;
    layer.clFlush = hook_clFlush;
    layer.clFinish = hook_clFinish;
    layer.clEnqueueWriteBuffer = hook_clEnqueueWriteBuffer;
    layer.clEnqueueReadBuffer = hook_clEnqueueReadBuffer;
    layer.clEnqueueMapBuffer = hook_clEnqueueMapBuffer;
    layer.clBuildProgram = hook_clBuildProgram;
    arm_from_env();
    /* call counting and injection at call k (fault_count.c), around all of the above */
    clsfault_count_install(&layer, sizeof layer);
    *num_entries_ret = (cl_uint)mine;
    *layer_dispatch = &layer;
    return CL_SUCCESS;
}

/* ---- control, for the test ---- */

static cl_int default_error(int kind)
{
    switch (kind) {
    case CLSFAULT_KERNEL: return CL_OUT_OF_RESOURCES;
    case CLSFAULT_BUFFER: return CL_MEM_OBJECT_ALLOCATION_FAILURE;
    case CLSFAULT_WAIT: return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    case CLSFAULT_DELAY: return 1000;
    case CLSFAULT_HOLD: return 5000;
    case CLSFAULT_BUILD: return CL_BUILD_PROGRAM_FAILURE;
    default: return CL_DEVICE_NOT_AVAILABLE;
    }
}

/* Whether the loader initialised the layer (the test checks it is live). */
EXPORT int clsfault_loaded(void) { return next != NULL; }

/* Arms a rule of `kind` (CLSFAULT_*) for the device whose name contains
 * `device` and that is the `nth` such device of its platform (-1: every such
 * device). `kernel` (CLSFAULT_KERNEL; NULL: all) keeps only kernels whose
 * function name contains it. The first `after` matching calls pass, the
 * next `times` (-1: all) fail with `error` (0: the kind's default; for
 * CLSFAULT_DELAY microseconds, for CLSFAULT_HOLD milliseconds).
 * Returns the rule's number, or -1 (bad kind, table full). */
EXPORT int clsfault_add(int kind, const char *device, int nth, const char *kernel, long after, long times,
                        int error)
{
    if (kind < CLSFAULT_KERNEL || kind > CLSFAULT_BUILD || !device) return -1;
    pthread_mutex_lock(&lock);
    int i = nrules < MAX_RULES ? nrules++ : -1;
    if (i >= 0) {
        rule *r = &rules[i];
        memset(r, 0, sizeof *r);
        r->kind = kind;
        strncpy(r->device, device, sizeof r->device - 1);
        r->nth = nth;
        if (kernel) strncpy(r->kernel, kernel, sizeof r->kernel - 1);
        r->after = after;
        r->times = times;
        r->error = error ? error : default_error(kind);
        if (kind == CLSFAULT_HOLD) {
            r->controller = pthread_self();
            clock_gettime(CLOCK_REALTIME, &r->deadline);
            r->deadline.tv_sec += r->error / 1000;
            r->deadline.tv_nsec += (long)(r->error % 1000) * 1000000;
            if (r->deadline.tv_nsec >= 1000000000) {
                r->deadline.tv_sec++;
                r->deadline.tv_nsec -= 1000000000;
            }
        }
        atomic_fetch_or(&armed, 1u << kind);
    }
    pthread_mutex_unlock(&lock);
    return i;
}

/* Disarms every rule. */
EXPORT void clsfault_clear(void)
{
    pthread_mutex_lock(&lock);
    nrules = 0;
    atomic_store(&armed, 0u);
    pthread_cond_broadcast(&released);
    pthread_mutex_unlock(&lock);
}

/* Failures injected (delays, holds made) by rule i; -1: failures of all rules. */
EXPORT long clsfault_injected(int i)
{
    long n = 0;
    pthread_mutex_lock(&lock);
    for (int j = 0; j < nrules; j++)
        if (i == j || (i < 0 && (rules[j].kind < CLSFAULT_DELAY || rules[j].kind == CLSFAULT_BUILD)))
            n += rules[j].injected;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Matching calls rule i saw, failed or not. */
EXPORT long clsfault_seen(int i)
{
    long n = 0;
    pthread_mutex_lock(&lock);
    if (i >= 0 && i < nrules) n = rules[i].seen;
    pthread_mutex_unlock(&lock);
    return n;
}
