/* PoCL's worker threads pinned one per core, for the tool's own process. */
#ifndef CLI_AFFINITY_H
#define CLI_AFFINITY_H

/* Sets POCL_AFFINITY=1 in this process's environment unless it is set
 * already or the process may not run on every online core (see the file).
 * Call at the start of main(), before the first OpenCL call. */
void cli_pocl_affinity_default(void);

#endif
