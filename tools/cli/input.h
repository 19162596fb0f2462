/* The tool's input .npy files: opened (mapped) with their shape checked in
 * one wording, watched by the guard so that a file truncated by another
 * program while mapped is a clear error rather than a SIGBUS, and factors
 * converted to the data's dtype. */
#ifndef CLS_CLI_INPUT_H
#define CLS_CLI_INPUT_H

#include "io/npy.h"

/* Opens `path`; a data array (need2d) must be 2-D or 3-D.
 * @return 0, or 1 after printing one line naming the file. */
int cli_input_open(const char *path, cls_npy *f, int need2d);

/* Converts factors `f` (from file `path`) to `dtype` when they differ, as
 * numpy's astype does (float64 beyond float32's range becomes +-inf); the
 * file's mapping is released then. @return 0, or 1 after printing why. */
int cli_factors_as(cls_npy *f, cls_dtype dtype, const char *path);

/* Releases what cli_input_open() or cli_factors_as() made; no-op on a zeroed f. */
void cli_input_close(cls_npy *f);

#endif
