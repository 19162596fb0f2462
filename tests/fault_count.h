/* tests/fault_count.c inside the fault layer: fault_layer.c's clInitLayer
 * calls this last, with its finished table, which it wraps with counting
 * hooks (`entries`: the table's size in bytes). */
#ifndef CLS_TEST_FAULT_COUNT_H
#define CLS_TEST_FAULT_COUNT_H

#include <stddef.h>

struct _cl_icd_dispatch;
void clsfault_count_install(struct _cl_icd_dispatch *layer, size_t entries);

#endif
