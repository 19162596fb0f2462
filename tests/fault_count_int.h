/* What the two halves of the fault layer's call counting share:
 * tests/fault_count.c (rules, charging, counters, the test's controls) and
 * tests/fault_count_hooks.c (the OpenCL hooks and their installation). */
#ifndef CLS_FAULT_COUNT_INT_H
#define CLS_FAULT_COUNT_INT_H

#include <CL/cl_layer.h>
#include <stdatomic.h>

#include "fault_count.h"

#define EXPORT __attribute__((visibility("default")))

/* The table before the hooks: the fault layer's, then the driver's. */
extern struct _cl_icd_dispatch fc_inner;

/* Objects created (and retained) and released, by type. */
enum { OBJ_MEM, OBJ_QUEUE, OBJ_PROGRAM, OBJ_KERNEL, OBJ_EVENT, OBJ_CONTEXT, OBJ_TYPES };
extern atomic_long fc_created[OBJ_TYPES], fc_released[OBJ_TYPES];
void fc_made(int type, const void *obj);

/* The devices a call is charged to (none while no rule is armed: the
 * lookups cost driver calls that timing tests would feel). */
typedef struct charge {
    cl_device_id d[8];
    int n;
} charge;

void fc_charge_one(charge *c, cl_device_id d);
void fc_charge_list(charge *c, cl_uint n, const cl_device_id *ids);
void fc_charge_among(charge *c, cl_uint n, const cl_device_id *ids);
void fc_charge_context(charge *c, cl_context ctx);
void fc_charge_program(charge *c, cl_program p);
void fc_charge_kernel(charge *c, cl_kernel k);
void fc_charge_queue(charge *c, cl_command_queue q);
void fc_charge_event(charge *c, cl_event ev);

/* Counts the call for every rule whose device it is charged to; the
 * error to return, or CL_SUCCESS to let it through. */
cl_int fc_count(const charge *c, const char *call);

/* A rule's `error` that, on clEnqueueNDRangeKernel, runs the kernel over
 * the first half of its work-groups (or of its work-items, when it has one
 * work-group) and succeeds; from then on every wait charged to that device
 * (clFinish, clWaitForEvents, a completed clGetEventInfo status, a blocking
 * transfer or map) fails with CL_OUT_OF_RESOURCES after it waited: a device
 * lost halfway through a kernel, whose output is left partly written. On
 * other calls it is CL_OUT_OF_RESOURCES. */
#define CLSFAULT_HALF_KERNEL 1
/* The device lost by a half kernel (NULL: none). */
extern _Atomic(cl_device_id) fc_half_pending;

/* A count rule (tests/fault_count.c's top comment); its number or -1. */
EXPORT int clsfault_count_add(const char *device, int nth, const char *call, long k, long times, int error);

#endif
