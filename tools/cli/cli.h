/* What the clscale tool's commands share. */
#ifndef CLS_CLI_H
#define CLS_CLI_H

#include <stdio.h>

#include "clscale.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

int cmd_devices(int argc, char **argv);
int cmd_normalize(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_discount(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_startup_child(int argc, char **argv); /* hidden: clscale __startup, for bench */

/* Prints "clscale: " + message to stderr; returns `code`. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Creates a context for --devices SEL (NULL: default); on failure prints the
 * library's message and returns NULL. */
cls_context *cli_context(const char *devices, unsigned flags);

/* Writes s as a JSON string literal (quotes included). */
void json_string(FILE *f, const char *s);

#endif
