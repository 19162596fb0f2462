/* The benchmark's one progress line on stderr, when it is a terminal. The
 * lowest file of the bench: the command (cmd_bench.c), the limits and the
 * rounds all call it; it calls only libc. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "bench_run.h"

static int progress_on;   /* stderr is a terminal */

void bench_progress_start(int quiet) { progress_on = !quiet && isatty(STDERR_FILENO) == 1; }

void bench_progress(const char *fmt, ...)
{
    if (!progress_on) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

void bench_progress_clear(void)
{
    if (progress_on) fputs("\r\033[K", stderr);
}
