/* What the clscale tool's commands share. */
#ifndef CLS_CLI_H
#define CLS_CLI_H

#include <stdio.h>

#include "clscale.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

int cmd_devices(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_normalize(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_discount(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_startup_child(int argc, char **argv); /* hidden: clscale __startup, for bench */

/* Prints "clscale: " + message to stderr; returns `code`. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A usage error of command `cmd`: "clscale: CMD: message", then the line
 * every usage error ends with, "Try 'clscale CMD --help'.". @return 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The closing line of a usage error of `cmd` (what cli_usage_error() ends with). */
void cli_usage_hint(const char *cmd);

/* Creates a context for --devices SEL (NULL: $CLSCALE_DEVICES, else all);
 * on failure prints the library's message, sets *rc (see
 * cli_context_failed()) and returns NULL. */
cls_context *cli_context(const char *cmd, const char *devices, unsigned flags, int *rc);

/* Prints why cls_context_create() failed with `st` (destroying `ctx`) and
 * returns the exit status: 2 when the selector in force (`devices`, else
 * $CLSCALE_DEVICES) matched no device of a machine that has some, else 1. */
int cli_context_failed(const char *cmd, const char *devices, cls_status st, cls_context *ctx);

/* --devices SEL that names nothing ("" or ","): prints a usage error for
 * `cmd` and returns 2; else 0. NULL (not given) is fine. */
int cli_selector_check(const char *cmd, const char *sel);

/* `v` (bytes, or bytes per second with unit "B/s") in the decimal unit
 * that fits it, three significant digits: "512 B", "33.7 kB", "1.20 GB/s".
 * @return buf. */
const char *cli_si(char *buf, size_t len, double v, const char *unit);

/* What cli_si() writes `v` in: @return the divisor (1, 1e3, 1e6, ...), with
 * its prefix ("", "k", "M", ...) and the decimals to print. */
double cli_si_fit(double v, const char **prefix, int *decimals);

/* Seconds in the unit that fits them: "1.23 s", "337 ms", "0.0412 ms". @return buf. */
const char *cli_seconds(char *buf, size_t len, double s);

/* Writes s as a JSON string literal (quotes included). */
void cli_json_string(FILE *f, const char *s);

/* The scalers' names from the library's table, "minmax|zscore|...", for
 * usage lines (static; the first call makes it). */
const char *cli_methods(void);
/* The scaler named `name` (not "none"): 0, or -1 when none has that name. */
int cli_scaler_parse(const char *name, cls_scaler *out);

/* The options a scaler takes, as the library's table says: a range and
 * clipping (--range, --clip: min-max), the quantile options
 * (--quantile-range, --no-centering, --no-scaling, --unit-variance: a
 * scaler fitted on exact quantiles, robust). */
enum { CLI_TAKES_RANGE = 1u, CLI_TAKES_QUANTILES = 2u };
unsigned cli_scaler_takes(cls_scaler s);
/* The names of the scalers that take `what` (a CLI_TAKES_ value),
 * "minmax", or "minmax or NAME" (static; the first call makes each). */
const char *cli_scalers_taking(unsigned what);

#endif
