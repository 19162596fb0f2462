/* Call counting for the fault layer (tests/fault_layer.c): every OpenCL
 * call the library makes, charged to a device and counted, a failure
 * injected at call k of a chosen device, and the objects the library
 * creates and releases, counted by type.
 *
 * Built into the same layer module with fault_count_hooks.c (the hooks);
 * fault_layer.c's clInitLayer calls clsfault_count_install() last, which wraps the table's entries: a
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
 * on) fail with `error`, k < 0 only counts; `error` CLSFAULT_HALF_KERNEL
 * (fault_count_int.h) half-runs a kernel instead. An enqueue that fails enqueues
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

#include "fault_count_int.h"


/* ---- objects ---- */

atomic_long fc_created[OBJ_TYPES], fc_released[OBJ_TYPES];

void fc_made(int type, const void *obj)
{
    if (obj) atomic_fetch_add(&fc_created[type], 1);
}

_Atomic(cl_device_id) fc_half_pending;

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
    if (fc_inner.clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS) return 0;
    return contains_ci(name, sub);
}

static int compute_match(const count_rule *r, cl_device_id d)
{
    for (int depth = 0; depth < 8; depth++) {
        cl_device_id parent = NULL;
        if (fc_inner.clGetDeviceInfo(d, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) != CL_SUCCESS
            || !parent)
            break;
        d = parent;
    }
    if (!name_contains(d, r->device)) return 0;
    if (r->nth < 0) return 1;
    cl_platform_id p = NULL;
    if (fc_inner.clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS) return 0;
    cl_device_id ids[64];
    cl_uint n = 0;
    if (fc_inner.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, ids, &n) != CL_SUCCESS) return 0;
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

void fc_charge_one(charge *c, cl_device_id d)
{
    c->n = 0;
    if (d) {
        c->d[0] = d;
        c->n = 1;
        last_device = d;
    }
}

void fc_charge_list(charge *c, cl_uint n, const cl_device_id *ids)
{
    c->n = 0;
    for (cl_uint i = 0; ids && i < n && c->n < 8; i++) c->d[c->n++] = ids[i];
    if (c->n == 1) last_device = c->d[0];
}

/* Charge to this thread's last device if listed, else to all listed. */
void fc_charge_among(charge *c, cl_uint n, const cl_device_id *ids)
{
    for (cl_uint i = 0; ids && i < n; i++)
        if (ids[i] == last_device) {
            fc_charge_one(c, last_device);
            return;
        }
    fc_charge_list(c, n, ids);
}

void fc_charge_context(charge *c, cl_context ctx)
{
    cl_device_id ids[64];
    size_t size = 0;
    c->n = 0;
    if (!atomic_load(&armed) || !ctx || fc_inner.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof ids, ids, &size) != CL_SUCCESS) return;
    fc_charge_among(c, (cl_uint)(size / sizeof ids[0]), ids);
}

void fc_charge_program(charge *c, cl_program p)
{
    cl_context ctx = NULL;
    c->n = 0;
    if (atomic_load(&armed) && p && fc_inner.clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx, NULL) == CL_SUCCESS)
        fc_charge_context(c, ctx);
}

void fc_charge_kernel(charge *c, cl_kernel k)
{
    cl_program p = NULL;
    c->n = 0;
    if (atomic_load(&armed) && k && fc_inner.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof p, &p, NULL) == CL_SUCCESS) fc_charge_program(c, p);
}

void fc_charge_queue(charge *c, cl_command_queue q)
{
    cl_device_id d = NULL;
    if (atomic_load(&armed) && q) fc_inner.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL);
    fc_charge_one(c, d);
}

void fc_charge_event(charge *c, cl_event ev)
{
    cl_command_queue q = NULL;
    c->n = 0;
    if (atomic_load(&armed) && ev && fc_inner.clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS && q)
        fc_charge_queue(c, q);
}

/* Counts the call for every rule whose device it is charged to; the
 * error to return, or CL_SUCCESS to let it through. */
cl_int fc_count(const charge *c, const char *call)
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
            err = r->error == CLSFAULT_HALF_KERNEL && strcmp(call, "clEnqueueNDRangeKernel") ? CL_OUT_OF_RESOURCES
                                                                                          : r->error;
            r->injected++;
            if (!r->failed_call) r->failed_call = call;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
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
    atomic_store(&fc_half_pending, NULL);
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
        if (type < 0 || type == t) n += atomic_load(&fc_created[t]);
    return n;
}

EXPORT long clsfault_objects_released(int type)
{
    long n = 0;
    for (int t = 0; t < OBJ_TYPES; t++)
        if (type < 0 || type == t) n += atomic_load(&fc_released[t]);
    return n;
}
