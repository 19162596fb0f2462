/* The cleaning options that `clscale clean` and `clscale normalize` share:
 * parsed into a cls_clean, checked, with usage errors that name the option. */
#ifndef CLS_CLI_CLEAN_OPTS_H
#define CLS_CLI_CLEAN_OPTS_H

#include <stddef.h>

#include "clscale.h"

typedef struct cli_clean {
    cls_clean c;
    int       any;        /* a cleaning option was given */
    int       clip_given; /* --sigma-clip, --sigma-lower or --sigma-upper */
    int       clip_detail; /* --clip-center, --clip-spread or --clip-mode */
    int       light_curve; /* --detrend, --bin-smooth, --bin (not streamed, not under --mpi) */
    int       reduce;     /* --bin: cls_fit_transform (bins reduced), one row per bin (clean only) */
    int       flatten;    /* --flatten: a savgol trend refitted between clips, divided by */
    int       op_given;   /* --detrend-op */
} cli_clean;

/* The usage text of the options, for --help. */
extern const char cli_clean_usage[];

/* Whether `name` (without "--") is a cleaning option; all take a value. */
int cli_clean_is_option(const char *name);

/* Sets option `name` to `v`. @return 0, or -1 with a message in err that
 * names the option. */
int cli_clean_set(cli_clean *c, const char *name, const char *v, char *err, size_t len);

/* Checks the options together (after all were set); resolves defaults.
 * @return 0, or -1 with a message in err. */
int cli_clean_finish(cli_clean *c, char *err, size_t len);

#endif
