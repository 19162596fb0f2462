/* See fault_ctl.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_ctl.h"

fault_ctl fault;

int find_layer(void)
{
    const char *path = getenv("CLS_FAULT_LAYER");
    if (!path) {
        fprintf(stderr, "CLS_FAULT_LAYER is not set: run through meson test\n");
        return -1;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        fprintf(stderr, "the ICD loader did not load the fault layer %s (OPENCL_LAYERS): %s\n", path, dlerror());
        return -1;
    }
    void *sym[5] = {dlsym(h, "clsfault_loaded"), dlsym(h, "clsfault_add"), dlsym(h, "clsfault_clear"),
                    dlsym(h, "clsfault_injected"), dlsym(h, "clsfault_seen")};
    for (int i = 0; i < 5; i++)
        if (!sym[i]) {
            fprintf(stderr, "fault layer %s lacks a control function: %s\n", path, dlerror());
            return -1;
        }
    /* POSIX lets a data pointer from dlsym hold a function's address */
    memcpy(&fault.loaded, &sym[0], sizeof sym[0]);
    memcpy(&fault.add, &sym[1], sizeof sym[1]);
    memcpy(&fault.clear, &sym[2], sizeof sym[2]);
    memcpy(&fault.injected, &sym[3], sizeof sym[3]);
    memcpy(&fault.seen, &sym[4], sizeof sym[4]);
    if (!fault.loaded()) {
        fprintf(stderr, "the fault layer is mapped but the loader never initialised it\n");
        return -1;
    }
    return 0;
}

/* ---- call counting ---- */

fault_count_ctl fault_count;

int find_count_layer(void)
{
    const char *path = getenv("CLS_FAULT_LAYER");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (!h) {
        fprintf(stderr, "the fault layer is not loaded (CLS_FAULT_LAYER, OPENCL_LAYERS)\n");
        return -1;
    }
    static const char *const names[] = {"clsfault_count_add", "clsfault_count_clear", "clsfault_count_seen",
                                        "clsfault_count_injected", "clsfault_count_failed_call",
                                        "clsfault_objects_created", "clsfault_objects_released"};
    void *sym[7];
    for (int i = 0; i < 7; i++)
        if (!(sym[i] = dlsym(h, names[i]))) {
            fprintf(stderr, "fault layer %s lacks %s\n", path, names[i]);
            return -1;
        }
    memcpy(&fault_count.add, &sym[0], sizeof sym[0]);
    memcpy(&fault_count.clear, &sym[1], sizeof sym[1]);
    memcpy(&fault_count.seen, &sym[2], sizeof sym[2]);
    memcpy(&fault_count.injected, &sym[3], sizeof sym[3]);
    memcpy(&fault_count.failed_call, &sym[4], sizeof sym[4]);
    memcpy(&fault_count.created, &sym[5], sizeof sym[5]);
    memcpy(&fault_count.released, &sym[6], sizeof sym[6]);
    return 0;
}
