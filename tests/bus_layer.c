/* An OpenCL API layer (cl_loader_layers) that puts one chosen device
 * behind a modelled bus, so that a PoCL CPU device behaves like a discrete
 * GPU: the scheduler's promises and the staging path can then be tested on
 * a machine without one. Loaded by the ICD loader through
 * OPENCL_LAYERS=/path/libclsbus.so (a separate layer from the fault layer,
 * tests/fault_layer.c; both may be loaded, colon-separated).
 *
 * The modelled device:
 *   - reports CL_DEVICE_HOST_UNIFIED_MEMORY = false, so clscale stages its
 *     data through pinned slots as for a discrete GPU;
 *   - host<->device transfers (clEnqueue{Read,Write}Buffer[Rect], and maps
 *     of its buffers that are not host memory) complete no earlier than the
 *     bus would let them: latency + bytes / rate, the rate being pinned or
 *     pageable by whether the host memory lies in a mapped
 *     CL_MEM_ALLOC_HOST_PTR buffer, each direction a link of its own that
 *     transfers queue for in the order they become ready; while both
 *     directions are busy they share `both` bytes/s (a PCIe link is full
 *     duplex, but the H100 machine measured 96 GB/s both ways against 54
 *     each way);
 *   - kernels optionally take `kernel` times their own time (>= 1).
 * Optionally a second device, `slow`, stays host-unified (no bus) but runs
 * its kernels `slow_kernel` times slower, one after another: a CPU device
 * slower than this host's memory, as on a machine with few cores per
 * memory channel, where a team can beat both devices alone. The gate
 * sleeps, so the slowed device leaves its core to the other one (what a
 * team needs to win, and what two real devices on two cores of this host
 * cannot show: each alone already takes what the memory gives). Its
 * kernel takes `slow_kernel` times its work-items over the fastest rate
 * per work-item seen for that kernel (not its own real time, which the
 * other device's threads stretch when they share the cores: that factor
 * would multiply the contention too, and a team's slices, of other sizes
 * than a device's alone, would be judged on contended runs only), and no
 * less than its real time. Real
 * times come from the event's profiling (the layer turns it on for that
 * device's queues): PoCL delivers event callbacks on a thread of its own,
 * late enough that a kernel's start read from them came out near its end.
 * The modelled device must be a PoCL pthread device: PoCL 3.1's basic
 * device deadlocks when a user event is set from another thread while a
 * command waits for it (seen here: clSetUserEventStatus never returns).
 * POCL_DEVICES="basic pthread" gives a one-thread CPU device beside it.
 *
 * The real command still runs (the data must arrive); the modelled time is
 * a gate after it: an in-order queue gets a marker when the command is
 * ready (its predecessors done), the command, and a marker waiting for a
 * user event that a timer thread completes at the modelled end. The
 * caller's event is that last marker. The model holds when the real copy
 * is faster than the modelled bus; the defaults are set well below this
 * machine's memory speed for that.
 *
 * Configuration: the environment variable CLSBUS, read at the first call,
 * or clsbus_configure() at run time: comma-separated key=value,
 *   device=NAME    substring of the device's name (default "pthread")
 *   nth=N          the Nth such device of its platform (default 0)
 *   h2d_pinned=G, d2h_pinned=G, h2d_pageable=G, d2h_pageable=G, both=G
 *                  GB/s (1e9 bytes/s)
 *   latency_us=U   per transfer (default 10)
 *   kernel=F       kernel time factor (default 1)
 *   slow=NAME      substring of the slowed device's name (default: none)
 *   slow_nth=N     the Nth such device of its platform (default 0)
 *   slow_kernel=F  its kernels' time factor (default 1)
 *   scale=S        multiplies the default rates (default 0.1)
 * The default rates are the H100 machine's (docs/results/bench-h100.json: pinned
 * 54.4 / 54.6 GB/s, pageable 7.96 / 10.8, both ways 95.7) times `scale`:
 * 0.1 makes 5.4 GB/s each way pinned, well under what this machine's
 * memory copies (24-26 GB/s; a host copy thread 8-12).
 *
 * Exported for tests and the bench: clsbus_loaded(), clsbus_configure(),
 * clsbus_get() (the model in force) and clsbus_totals() (bytes and modelled
 * link time so far). */
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
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* The model in force (GB/s, seconds); mirrored in tests/bus_ctl.h. */
typedef struct clsbus_model {
    char   device[64];
    int    nth;
    double h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, both;
    double latency;
    double kernel;
    char   slow[64];
    int    slow_nth;
    double slow_kernel;
} clsbus_model;

typedef struct clsbus_totals {
    double h2d_bytes, d2h_bytes;       /* moved over the modelled bus */
    double pinned_bytes, pageable_bytes;
    double h2d_busy, d2h_busy;         /* modelled seconds each link was busy */
    long   transfers, kernels;
} clsbus_totals;

static struct _cl_icd_dispatch layer;
static const struct _cl_icd_dispatch *next;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static clsbus_model model;
static int configured;
static clsbus_totals totals;
static double link_free[2];        /* host seconds at which each direction is free (0: h2d, 1: d2h) */
static cl_device_id modelled = NULL;  /* the device once found */
static cl_device_id slowed = NULL;    /* the slowed device once found */
static double slow_free;              /* host seconds at which the slowed device's modelled kernels are done */

/* The slowed device's shortest real time per work-item, per kernel. */
#define MAX_KERNELS 256
static struct { char name[64]; double best; } kernels[MAX_KERNELS];
static int nkernels;

/* Lock held. The fastest real time of n work-items of `name` seen so
 * far, this run of `secs` included. */
static double shortest(const char *name, size_t n, double secs)
{
    double per = secs / (double)(n ? n : 1);
    for (int i = 0; i < nkernels; i++)
        if (!strcmp(kernels[i].name, name)) {
            if (per < kernels[i].best) kernels[i].best = per;
            return kernels[i].best * (double)(n ? n : 1);
        }
    if (nkernels < MAX_KERNELS) {
        snprintf(kernels[nkernels].name, sizeof kernels[nkernels].name, "%s", name);
        kernels[nkernels].best = per;
        nkernels++;
    }
    return secs;
}

/* ---- time ---- */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- configuration ---- */

static void defaults(clsbus_model *m, double scale)
{
    memset(m, 0, sizeof *m);
    snprintf(m->device, sizeof m->device, "pthread");
    m->nth = 0;
    m->h2d_pinned = 54.4 * scale;
    m->d2h_pinned = 54.6 * scale;
    m->h2d_pageable = 7.96 * scale;
    m->d2h_pageable = 10.8 * scale;
    m->both = 95.7 * scale;
    m->latency = 10e-6;
    m->kernel = 1.0;
    m->slow_kernel = 1.0;
}

/* Parses a spec into *m; returns 0, or -1 on an unknown key. */
static int parse(const char *spec, clsbus_model *m)
{
    double scale = 0.1;
    const char *s = spec ? strstr(spec, "scale=") : NULL;
    if (s) scale = atof(s + 6);
    defaults(m, scale > 0 ? scale : 0.1);
    if (!spec) return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        if (!strcmp(k, "device")) snprintf(m->device, sizeof m->device, "%s", v);
        else if (!strcmp(k, "nth")) m->nth = atoi(v);
        else if (!strcmp(k, "h2d_pinned")) m->h2d_pinned = atof(v);
        else if (!strcmp(k, "d2h_pinned")) m->d2h_pinned = atof(v);
        else if (!strcmp(k, "h2d_pageable")) m->h2d_pageable = atof(v);
        else if (!strcmp(k, "d2h_pageable")) m->d2h_pageable = atof(v);
        else if (!strcmp(k, "both")) m->both = atof(v);
        else if (!strcmp(k, "latency_us")) m->latency = atof(v) * 1e-6;
        else if (!strcmp(k, "kernel")) m->kernel = atof(v) < 1 ? 1 : atof(v);
        else if (!strcmp(k, "slow")) snprintf(m->slow, sizeof m->slow, "%s", v);
        else if (!strcmp(k, "slow_nth")) m->slow_nth = atoi(v);
        else if (!strcmp(k, "slow_kernel")) m->slow_kernel = atof(v) < 1 ? 1 : atof(v);
        else if (strcmp(k, "scale") != 0) return -1;
    }
    return 0;
}

/* Lock held. */
static void ensure_configured(void)
{
    if (configured) return;
    if (parse(getenv("CLSBUS"), &model) != 0) parse(NULL, &model);
    configured = 1;
}

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

static int named(cl_device_id d, const char *sub)
{
    char name[256] = "";
    if (next->clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS) return 0;
    return contains_ci(name, sub);
}

/* The nth device of d's platform whose name contains `want`, or NULL. */
static cl_device_id nth_named(cl_device_id d, const char *want, int nth)
{
    cl_platform_id p = NULL;
    if (next->clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS) return NULL;
    cl_device_id ids[64];
    cl_uint n = 0;
    if (next->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, ids, &n) != CL_SUCCESS) return NULL;
    int ord = 0;
    for (cl_uint i = 0; i < n && i < 64; i++) {
        if (!named(ids[i], want)) continue;
        if (ord++ == nth) return ids[i];
    }
    return NULL;
}

/* Whether d is the device that `which` names (the modelled one, or the
 * slowed one when `slow`), found once and kept in *cache. */
static int is_device(cl_device_id d, int slow, cl_device_id *cache)
{
    if (!d) return 0;
    pthread_mutex_lock(&lock);
    ensure_configured();
    cl_device_id m = *cache;
    char want[64];
    int nth = slow ? model.slow_nth : model.nth;
    snprintf(want, sizeof want, "%s", slow ? model.slow : model.device);
    pthread_mutex_unlock(&lock);
    if (m) return m == d;
    if (!want[0] || !named(d, want)) return 0;
    cl_device_id found = nth_named(d, want, nth);
    if (!found) return 0;
    pthread_mutex_lock(&lock);
    *cache = found;
    pthread_mutex_unlock(&lock);
    return found == d;
}

static int is_modelled(cl_device_id d) { return is_device(d, 0, &modelled); }
static int is_slowed(cl_device_id d) { return is_device(d, 1, &slowed); }

static cl_device_id device_of_queue(cl_command_queue q)
{
    cl_device_id d = NULL;
    if (!q || next->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL) != CL_SUCCESS) return NULL;
    return d;
}

/* ---- pinned host memory: mapped CL_MEM_ALLOC_HOST_PTR buffers ---- */

#define MAX_PINNED 256
static struct { const char *p; size_t n; } pinned[MAX_PINNED];
static int npinned;

static int is_pinned(const void *p, size_t n)
{
    const char *c = p;
    int hit = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < npinned && !hit; i++) hit = c >= pinned[i].p && c + n <= pinned[i].p + pinned[i].n;
    pthread_mutex_unlock(&lock);
    return hit;
}

static void pinned_add(const void *p, size_t n)
{
    pthread_mutex_lock(&lock);
    if (npinned < MAX_PINNED) {
        pinned[npinned].p = p;
        pinned[npinned].n = n;
        npinned++;
    }
    pthread_mutex_unlock(&lock);
}

static int pinned_remove(const void *p)
{
    int hit = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < npinned; i++)
        if (pinned[i].p == p) {
            pinned[i] = pinned[--npinned];
            hit = 1;
            break;
        }
    pthread_mutex_unlock(&lock);
    return hit;
}

static int host_memory_buffer(cl_mem m)
{
    cl_mem_flags f = 0;
    if (next->clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof f, &f, NULL) != CL_SUCCESS) return 0;
    return (f & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_USE_HOST_PTR)) != 0;
}

/* ---- the timer: completes user events at their modelled times ---- */

#define MAX_TIMERS 4096
static struct { double at; cl_event ev; } timers[MAX_TIMERS];
static int ntimers;
static pthread_t timer_thread;
static int timer_started;

static void *timer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (ntimers == 0) pthread_cond_wait(&wake, &lock);
        int first = 0;
        for (int i = 1; i < ntimers; i++)
            if (timers[i].at < timers[first].at) first = i;
        double t = now(), at = timers[first].at;
        if (at > t) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            double wait = at - t;
            ts.tv_sec += (time_t)wait;
            ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&wake, &lock, &ts);
            continue;
        }
        cl_event ev = timers[first].ev;
        timers[first] = timers[--ntimers];
        pthread_mutex_unlock(&lock);
        next->clSetUserEventStatus(ev, CL_COMPLETE);
        next->clReleaseEvent(ev);
        pthread_mutex_lock(&lock);
    }
    return NULL;
}

/* Lock held. Completes `ev` at host time `at` (takes its reference). */
static void schedule(cl_event ev, double at)
{
    if (!timer_started) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        timer_started = pthread_create(&timer_thread, &a, timer_main, NULL) == 0;
        pthread_attr_destroy(&a);
    }
    if (ntimers == MAX_TIMERS || !timer_started) { /* no room: no delay rather than a hang */
        pthread_mutex_unlock(&lock);
        next->clSetUserEventStatus(ev, CL_COMPLETE);
        next->clReleaseEvent(ev);
        pthread_mutex_lock(&lock);
        return;
    }
    timers[ntimers].at = at;
    timers[ntimers].ev = ev;
    ntimers++;
    pthread_cond_broadcast(&wake);
}

/* ---- gates ---- */

enum { H2D = 0, D2H = 1, KERNEL = 2 };

typedef struct gate {
    int kind;
    size_t bytes;
    int pinned;
    double ready;        /* KERNEL: when the kernel could start */
    double factor;       /* KERNEL: its time factor */
    int serial;          /* KERNEL: the slowed device's (one at a time) */
    char name[64];       /* serial: the kernel's name and global size */
    size_t n;
    cl_event user;       /* completed at the modelled end */
} gate;

/* When the command's predecessors are done: a transfer takes its link. */
static void CL_CALLBACK on_ready(cl_event ev, cl_int status, void *arg)
{
    next->clReleaseEvent(ev); /* held for this callback: PoCL drops the callbacks of a released event */
    gate *g = arg;
    double t = now();
    pthread_mutex_lock(&lock);
    if (g->kind == KERNEL) {
        g->ready = t;
        pthread_mutex_unlock(&lock);
        return;
    }
    if (status < 0) { /* the queue failed: let the gate go */
        schedule(g->user, t);
        pthread_mutex_unlock(&lock);
        free(g);
        return;
    }
    int d = g->kind, o = 1 - d;
    double rate = d == H2D ? (g->pinned ? model.h2d_pinned : model.h2d_pageable)
                           : (g->pinned ? model.d2h_pinned : model.d2h_pageable);
    double start = link_free[d] > t ? link_free[d] : t;
    /* both directions busy: they share `both` */
    if (link_free[o] > start && model.both > 0 && rate > model.both / 2) rate = model.both / 2;
    double secs = model.latency + (double)g->bytes / (rate * 1e9);
    double end = start + secs;
    link_free[d] = end;
    if (d == H2D) {
        totals.h2d_bytes += (double)g->bytes;
        totals.h2d_busy += secs;
    } else {
        totals.d2h_bytes += (double)g->bytes;
        totals.d2h_busy += secs;
    }
    if (g->pinned) totals.pinned_bytes += (double)g->bytes;
    else totals.pageable_bytes += (double)g->bytes;
    totals.transfers++;
    schedule(g->user, end);
    pthread_mutex_unlock(&lock);
    free(g);
}

/* A kernel has run: it ends `factor` times its own time after it could
 * start. The slowed device's kernels also wait for each other: its real
 * kernel ran from when it could start or its previous kernel really ended
 * (one PoCL thread runs them in turn), and its modelled one from when it
 * could start or the previous modelled one ended. */
static void CL_CALLBACK on_kernel_done(cl_event ev, cl_int status, void *arg)
{
    (void)status;
    gate *g = arg;
    double t = now();
    pthread_mutex_lock(&lock);
    double ready = g->ready > 0 && g->ready <= t ? g->ready : t;
    totals.kernels++;
    double end = ready + (t - ready) * g->factor;
    if (g->serial) {
        cl_ulong t0 = 0, t1 = 0;
        double real = t - ready;
        if (next->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS
            && next->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS
            && t1 >= t0)
            real = 1e-9 * (double)(t1 - t0);
        double start = slow_free > ready ? slow_free : ready;
        end = start + shortest(g->name, g->n, real) * g->factor;
        if (end < t) end = t;
        slow_free = end;
    }
    schedule(g->user, end);
    pthread_mutex_unlock(&lock);
    next->clReleaseEvent(ev);
    free(g);
}

/* Before the real command: a marker (ready) and a gate. Returns the gate,
 * or NULL when they could not be made (the command then runs unmodelled). */
static gate *gate_open(cl_command_queue q, int kind, size_t bytes, int is_pinned, cl_uint nwait,
                       const cl_event *wait, cl_event *ready)
{
    cl_context c = NULL;
    if (next->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL) != CL_SUCCESS) return NULL;
    gate *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    cl_int e;
    g->user = next->clCreateUserEvent(c, &e);
    if (e != CL_SUCCESS) {
        free(g);
        return NULL;
    }
    g->kind = kind;
    g->bytes = bytes;
    g->pinned = is_pinned;
    /* no wait list: a marker with one waits for those events only, not for
     * the commands before it (PoCL); the caller's list goes to the command */
    (void)nwait;
    (void)wait;
    if (next->clEnqueueMarkerWithWaitList(q, 0, NULL, ready) != CL_SUCCESS) {
        next->clSetUserEventStatus(g->user, CL_COMPLETE);
        next->clReleaseEvent(g->user);
        free(g);
        return NULL;
    }
    return g;
}

/* After the real command `cmd`: the closing marker that waits for the
 * gate, given to the caller as its event; blocks when asked to. */
static cl_int gate_close(cl_command_queue q, gate *g, cl_event ready, cl_event cmd, cl_bool block,
                         cl_event *out)
{
    cl_event user = g->user, done = NULL;
    next->clRetainEvent(user); /* the timer's reference, released when it fires */
    cl_int e;
    if (g->kind == KERNEL) {
        /* the first callback records the start (the marker completes
         * before the kernel on an in-order queue), the second frees g */
        next->clRetainEvent(ready);
        next->clRetainEvent(cmd);
        e = next->clSetEventCallback(ready, CL_COMPLETE, on_ready, g);
        if (e == CL_SUCCESS) e = next->clSetEventCallback(cmd, CL_COMPLETE, on_kernel_done, g);
    } else {
        next->clRetainEvent(ready);
        e = next->clSetEventCallback(ready, CL_COMPLETE, on_ready, g);
    }
    if (e != CL_SUCCESS) { /* no callback: open the gate now */
        next->clSetUserEventStatus(user, CL_COMPLETE);
        next->clReleaseEvent(user);
        free(g);
    }
    cl_event both[2] = {user, cmd};
    cl_int m = next->clEnqueueBarrierWithWaitList(q, cmd ? 2 : 1, both, &done);
    next->clReleaseEvent(user); /* the gate's own reference */
    next->clReleaseEvent(ready);
    if (cmd) next->clReleaseEvent(cmd);
    if (m != CL_SUCCESS) return m;
    next->clFlush(q);
    if (block) m = next->clWaitForEvents(1, &done);
    if (out) *out = done;
    else next->clReleaseEvent(done);
    return m;
}

/* ---- intercepted calls ---- */

static cl_int CL_API_CALL hook_clGetDeviceInfo(cl_device_id d, cl_device_info what, size_t size, void *value,
                                               size_t *size_ret)
{
    cl_int e = next->clGetDeviceInfo(d, what, size, value, size_ret);
    if (e == CL_SUCCESS && what == CL_DEVICE_HOST_UNIFIED_MEMORY && value && size >= sizeof(cl_bool)
        && is_modelled(d))
        *(cl_bool *)value = CL_FALSE;
    return e;
}

static cl_int transfer(cl_command_queue q, int dir, size_t bytes, const void *host, cl_bool block, cl_uint nwait,
                       const cl_event *wait, cl_event *ev, cl_int (*real)(void *), void *args, cl_event *real_ev)
{
    cl_event ready = NULL;
    gate *g = gate_open(q, dir, bytes, is_pinned(host, bytes), nwait, wait, &ready);
    if (!g) return real(args);
    cl_int e = real(args);
    if (e != CL_SUCCESS) { /* nothing enqueued: open the gate, return the error */
        next->clSetUserEventStatus(g->user, CL_COMPLETE);
        next->clReleaseEvent(g->user);
        next->clReleaseEvent(ready);
        free(g);
        return e;
    }
    return gate_close(q, g, ready, *real_ev, block, ev);
}

typedef struct rw_args {
    cl_command_queue q;
    cl_mem m;
    size_t off, n;
    const void *cp;
    void *p;
    cl_event ev;
    int read;
    cl_uint nwait;
    const cl_event *wait;
} rw_args;

static cl_int real_rw(void *a)
{
    rw_args *r = a;
    if (r->read)
        return next->clEnqueueReadBuffer(r->q, r->m, CL_FALSE, r->off, r->n, r->p, r->nwait, r->wait, &r->ev);
    return next->clEnqueueWriteBuffer(r->q, r->m, CL_FALSE, r->off, r->n, r->cp, r->nwait, r->wait, &r->ev);
}

static cl_int CL_API_CALL hook_clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off,
                                                    size_t n, const void *p, cl_uint nwait, const cl_event *wait,
                                                    cl_event *ev)
{
    if (!is_modelled(device_of_queue(q))) return next->clEnqueueWriteBuffer(q, m, block, off, n, p, nwait, wait, ev);
    rw_args a = {.q = q, .m = m, .off = off, .n = n, .cp = p, .nwait = nwait, .wait = wait};
    return transfer(q, H2D, n, p, block, nwait, wait, ev, real_rw, &a, &a.ev);
}

static cl_int CL_API_CALL hook_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off,
                                                   size_t n, void *p, cl_uint nwait, const cl_event *wait,
                                                   cl_event *ev)
{
    if (!is_modelled(device_of_queue(q))) return next->clEnqueueReadBuffer(q, m, block, off, n, p, nwait, wait, ev);
    rw_args a = {.q = q, .m = m, .off = off, .n = n, .p = p, .read = 1, .nwait = nwait, .wait = wait};
    return transfer(q, D2H, n, p, block, nwait, wait, ev, real_rw, &a, &a.ev);
}

typedef struct rect_args {
    cl_command_queue q;
    cl_mem m;
    const size_t *bo, *ho, *reg;
    size_t brp, bsp, hrp, hsp;
    const void *cp;
    void *p;
    cl_event ev;
    int read;
    cl_uint nwait;
    const cl_event *wait;
} rect_args;

static cl_int real_rect(void *a)
{
    rect_args *r = a;
    if (r->read)
        return next->clEnqueueReadBufferRect(r->q, r->m, CL_FALSE, r->bo, r->ho, r->reg, r->brp, r->bsp, r->hrp,
                                             r->hsp, r->p, r->nwait, r->wait, &r->ev);
    return next->clEnqueueWriteBufferRect(r->q, r->m, CL_FALSE, r->bo, r->ho, r->reg, r->brp, r->bsp, r->hrp, r->hsp,
                                          r->cp, r->nwait, r->wait, &r->ev);
}

static size_t rect_bytes(const size_t *reg) { return reg ? reg[0] * reg[1] * reg[2] : 0; }

static cl_int CL_API_CALL hook_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem m, cl_bool block,
                                                        const size_t *bo, const size_t *ho, const size_t *reg,
                                                        size_t brp, size_t bsp, size_t hrp, size_t hsp, const void *p,
                                                        cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (!is_modelled(device_of_queue(q)))
        return next->clEnqueueWriteBufferRect(q, m, block, bo, ho, reg, brp, bsp, hrp, hsp, p, nwait, wait, ev);
    rect_args a = {.q = q, .m = m, .bo = bo, .ho = ho, .reg = reg, .brp = brp, .bsp = bsp, .hrp = hrp, .hsp = hsp,
                   .cp = p, .nwait = nwait, .wait = wait};
    return transfer(q, H2D, rect_bytes(reg), p, block, nwait, wait, ev, real_rect, &a, &a.ev);
}

static cl_int CL_API_CALL hook_clEnqueueReadBufferRect(cl_command_queue q, cl_mem m, cl_bool block,
                                                       const size_t *bo, const size_t *ho, const size_t *reg,
                                                       size_t brp, size_t bsp, size_t hrp, size_t hsp, void *p,
                                                       cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (!is_modelled(device_of_queue(q)))
        return next->clEnqueueReadBufferRect(q, m, block, bo, ho, reg, brp, bsp, hrp, hsp, p, nwait, wait, ev);
    rect_args a = {.q = q, .m = m, .bo = bo, .ho = ho, .reg = reg, .brp = brp, .bsp = bsp, .hrp = hrp, .hsp = hsp,
                   .p = p, .read = 1, .nwait = nwait, .wait = wait};
    return transfer(q, D2H, rect_bytes(reg), p, block, nwait, wait, ev, real_rect, &a, &a.ev);
}

/* Maps: a buffer in host memory (CL_MEM_ALLOC_HOST_PTR, USE_HOST_PTR) is
 * pinned memory, mapped for free, and its mapping is remembered; a device
 * buffer's map moves its bytes down the bus (unmaps are not modelled: the
 * library maps device buffers only to read them). */
static void *CL_API_CALL hook_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block, cl_map_flags fl,
                                                 size_t off, size_t n, cl_uint nwait, const cl_event *wait,
                                                 cl_event *ev, cl_int *errcode)
{
    int mod = is_modelled(device_of_queue(q));
    if (!mod || host_memory_buffer(m)) {
        void *p = next->clEnqueueMapBuffer(q, m, block, fl, off, n, nwait, wait, ev, errcode);
        if (p && host_memory_buffer(m)) pinned_add(p, n);
        return p;
    }
    cl_event ready = NULL, real = NULL;
    gate *g = gate_open(q, D2H, n, 1, nwait, wait, &ready);
    if (!g) return next->clEnqueueMapBuffer(q, m, block, fl, off, n, nwait, wait, ev, errcode);
    cl_int e;
    void *p = next->clEnqueueMapBuffer(q, m, CL_FALSE, fl, off, n, nwait, wait, &real, &e);
    if (e != CL_SUCCESS) {
        next->clSetUserEventStatus(g->user, CL_COMPLETE);
        next->clReleaseEvent(g->user);
        next->clReleaseEvent(ready);
        free(g);
        if (errcode) *errcode = e;
        return NULL;
    }
    e = gate_close(q, g, ready, real, block, ev);
    if (errcode) *errcode = e;
    return p;
}

static cl_int CL_API_CALL hook_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint nwait,
                                                       const cl_event *wait, cl_event *ev)
{
    pinned_remove(p);
    return next->clEnqueueUnmapMemObject(q, m, p, nwait, wait, ev);
}

static cl_int CL_API_CALL hook_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                                                      const size_t *global, const size_t *local, cl_uint nwait,
                                                      const cl_event *wait, cl_event *ev)
{
    pthread_mutex_lock(&lock);
    ensure_configured();
    double kernel = model.kernel, slow = model.slow_kernel;
    pthread_mutex_unlock(&lock);
    cl_device_id d = device_of_queue(q);
    int serial = slow > 1.0 && is_slowed(d);
    double factor = serial ? slow : is_modelled(d) ? kernel : 1.0;
    if (factor <= 1.0) return next->clEnqueueNDRangeKernel(q, k, dim, off, global, local, nwait, wait, ev);
    cl_event ready = NULL, real = NULL;
    gate *g = gate_open(q, KERNEL, 0, 0, nwait, wait, &ready);
    if (!g) return next->clEnqueueNDRangeKernel(q, k, dim, off, global, local, nwait, wait, ev);
    g->factor = factor;
    g->serial = serial;
    if (serial && next->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof g->name - 1, g->name, NULL) != CL_SUCCESS)
        g->name[0] = '\0';
    g->n = 1;
    for (cl_uint i = 0; i < dim && global; i++) g->n *= global[i];
    cl_int e = next->clEnqueueNDRangeKernel(q, k, dim, off, global, local, nwait, wait, &real);
    if (e != CL_SUCCESS) {
        next->clSetUserEventStatus(g->user, CL_COMPLETE);
        next->clReleaseEvent(g->user);
        next->clReleaseEvent(ready);
        free(g);
        return e;
    }
    return gate_close(q, g, ready, real, CL_FALSE, ev);
}

/* The slowed device's queues are made with profiling (its kernels' real
 * times, on_kernel_done()). */
static cl_command_queue CL_API_CALL hook_clCreateCommandQueue(cl_context c, cl_device_id d,
                                                              cl_command_queue_properties props, cl_int *e)
{
    if (is_slowed(d)) props |= CL_QUEUE_PROFILING_ENABLE;
    return next->clCreateCommandQueue(c, d, props, e);
}

/* ---- layer entry points ---- */

EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void *value,
                                                       size_t *size_ret)
{
    static const char layer_name[] = "clscale bus model";
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

EXPORT CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch *target,
                                                    cl_uint *num_entries_ret,
                                                    const struct _cl_icd_dispatch **layer_dispatch)
{
    const size_t mine = sizeof layer / sizeof(void (*)(void));
    if (!target || !num_entries_ret || !layer_dispatch) return CL_INVALID_VALUE;
    size_t need = 0;
#define NEED(f) if (offsetof(struct _cl_icd_dispatch, f) > need) need = offsetof(struct _cl_icd_dispatch, f)
    NEED(clEnqueueMarkerWithWaitList); NEED(clCreateUserEvent); NEED(clSetUserEventStatus);
    NEED(clSetEventCallback); NEED(clEnqueueReadBufferRect); NEED(clEnqueueWriteBufferRect);
#undef NEED
    if ((size_t)num_entries * sizeof(void (*)(void)) <= need) return CL_INVALID_VALUE;
    memset(&layer, 0, sizeof layer);
    memcpy(&layer, target, (num_entries < mine ? num_entries : mine) * sizeof(void (*)(void)));
    next = target;
    layer.clGetDeviceInfo = hook_clGetDeviceInfo;
    layer.clEnqueueWriteBuffer = hook_clEnqueueWriteBuffer;
    layer.clEnqueueReadBuffer = hook_clEnqueueReadBuffer;
    layer.clEnqueueWriteBufferRect = hook_clEnqueueWriteBufferRect;
    layer.clEnqueueReadBufferRect = hook_clEnqueueReadBufferRect;
    layer.clEnqueueMapBuffer = hook_clEnqueueMapBuffer;
    layer.clEnqueueUnmapMemObject = hook_clEnqueueUnmapMemObject;
    layer.clEnqueueNDRangeKernel = hook_clEnqueueNDRangeKernel;
    layer.clCreateCommandQueue = hook_clCreateCommandQueue;
    *num_entries_ret = (cl_uint)mine;
    *layer_dispatch = &layer;
    return CL_SUCCESS;
}

/* ---- control ---- */

EXPORT int clsbus_loaded(void) { return next != NULL; }

/* Replaces the model (NULL: the defaults) and zeroes the totals; 0, or -1
 * for a spec it cannot read (the model is then unchanged). */
EXPORT int clsbus_configure(const char *spec)
{
    clsbus_model m;
    if (parse(spec, &m) != 0) return -1;
    pthread_mutex_lock(&lock);
    model = m;
    configured = 1;
    modelled = NULL;
    slowed = NULL;
    slow_free = 0;
    nkernels = 0;
    memset(&totals, 0, sizeof totals);
    pthread_mutex_unlock(&lock);
    return 0;
}

EXPORT void clsbus_get(clsbus_model *out)
{
    pthread_mutex_lock(&lock);
    ensure_configured();
    *out = model;
    pthread_mutex_unlock(&lock);
}

EXPORT void clsbus_totals_get(clsbus_totals *out, int reset)
{
    pthread_mutex_lock(&lock);
    *out = totals;
    if (reset) memset(&totals, 0, sizeof totals);
    pthread_mutex_unlock(&lock);
}
