/* PoCL's worker threads, one per core, pinned by default in the tool's own
 * process (and the benchmarks built beside it). The library never changes
 * its caller's environment: an application that wants the same sets
 * POCL_AFFINITY=1 itself (docs/DEVICES.md).
 *
 * Unpinned, Linux may wake both of PoCL's pthread workers onto one core
 * (the other still looks idle while the first wakes) and then keep them
 * there, because tasks that have just run are too cache-hot to migrate. A
 * caller whose own thread was busy just before a call triggers it most:
 * then each worker waits a scheduler slice to run (docs/PERFORMANCE.md,
 * "PoCL's workers").
 * POCL_AFFINITY=1 pins worker i to core i.
 *
 * PoCL reads the variable when it starts, at the process's first platform
 * query, so main() sets it before anything else, and only where pinning
 * cannot go against the user:
 *   - the user did not set POCL_AFFINITY (POCL_AFFINITY=0 opts out);
 *   - the process may run on every online core: PoCL pins by core number,
 *     which would move its threads out of a `taskset` mask.
 * Drivers other than PoCL's pthread device ignore it. */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "affinity.h"

void cli_pocl_affinity_default(void)
{
    if (getenv("POCL_AFFINITY")) return;
#ifdef CPU_COUNT
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1 || CPU_COUNT(&mask) != online) return;
    setenv("POCL_AFFINITY", "1", 0);
#endif
}
