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

#endif
