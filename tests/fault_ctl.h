/* Control of tests/fault_layer.c from a test: the layer is loaded by the
 * ICD loader (OPENCL_LAYERS, set from CLS_FAULT_LAYER before the first
 * OpenCL call) and exports clsfault_* functions, found here with
 * dlopen(RTLD_NOLOAD) + dlsym on the copy the loader mapped. */
#ifndef CLS_TEST_FAULT_CTL_H
#define CLS_TEST_FAULT_CTL_H

enum { FAULT_KERNEL = 1, FAULT_BUFFER = 2, FAULT_WAIT = 3, FAULT_STATUS = 4, FAULT_DELAY = 5, FAULT_HOLD = 6,
       FAULT_BUILD = 7 /* `kernel` matches the build options */ };

typedef struct fault_ctl {
    int (*loaded)(void);
    /* a rule on the nth device whose name contains `device` (-1: all of
     * them), for kernels whose name contains `kernel` (NULL: all): `after`
     * calls pass, the next `times` (-1: all) fail with `error` (0: the
     * kind's default; microseconds for FAULT_DELAY); returns its number */
    int (*add)(int kind, const char *device, int nth, const char *kernel, long after, long times, int error);
    void (*clear)(void);
    long (*injected)(int rule);
    long (*seen)(int rule);
} fault_ctl;

extern fault_ctl fault;

/* Finds the layer's functions; 0, or -1 with a message on stderr. */
int find_layer(void);

/* ---- call counting (tests/fault_count.c) ---- */

enum { FAULT_HALF_KERNEL = 1 }; /* CLSFAULT_HALF_KERNEL in tests/fault_count_int.h */

enum { OBJ_ALL = -1, OBJ_MEM = 0, OBJ_QUEUE, OBJ_PROGRAM, OBJ_KERNEL, OBJ_EVENT, OBJ_CONTEXT, OBJ_TYPES };

typedef struct fault_count_ctl {
    /* counts the calls charged to the nth device whose name contains
     * `device` (calls whose function name contains `call`; NULL: all);
     * calls k .. k + times - 1 (times -1: all from k) fail with `error`
     * (0: CL_OUT_OF_RESOURCES; FAULT_HALF_KERNEL: a kernel launch runs
     * half its work-groups, then the device's next wait fails); k < 0
     * only counts */
    int (*add)(const char *device, int nth, const char *call, long k, long times, int error);
    void (*clear)(void);
    long (*seen)(int rule);
    long (*injected)(int rule);
    const char *(*failed_call)(int rule);      /* the first call it failed, or NULL */
    long (*created)(int type);                 /* OBJ_*: created or retained so far */
    long (*released)(int type);
} fault_count_ctl;

extern fault_count_ctl fault_count;

/* Finds the counting functions (after find_layer); 0, or -1 with a message. */
int find_count_layer(void);

#endif
