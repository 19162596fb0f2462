/* The clock every timing in the library reads: monotonic seconds. Lowest
 * level (util/): called by the engine's workers, probes and report. */
#include <time.h>

#include "internal.h"

double cls_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
