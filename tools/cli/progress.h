/* A progress bar for long runs of the clscale tool:
 *
 *     [##############                ] 45%  12.3/27.2 GB  1.21 GB/s  0:12 left
 *
 * (bytes read and written so far of the run's total, the rate since the
 * start, and the time left at that rate),
 * drawn on stderr only when stderr is a terminal and the run has lasted more
 * than CLI_PROGRESS_DELAY seconds, redrawn at most every
 * CLI_PROGRESS_INTERVAL seconds, and wiped when the run ends, so that a
 * short or piped run prints nothing. */
#ifndef CLS_CLI_PROGRESS_H
#define CLS_CLI_PROGRESS_H

#include <stdint.h>

#define CLI_PROGRESS_DELAY 0.3
#define CLI_PROGRESS_INTERVAL 0.1

typedef struct cli_progress {
    int    enabled;    /* stderr is a terminal */
    int    drawn;      /* a bar is on the screen */
    double t0, last;   /* monotonic seconds: start, last redraw */
    double delay;      /* CLI_PROGRESS_DELAY, or $CLSCALE_PROGRESS_DELAY (tests) */
} cli_progress;

/* cli_progress_start() : starts the clock and decides whether to draw. */
void cli_progress_start(cli_progress *p);

/* cli_progress_update() : a cls_progress_fn; `user` is the cli_progress.
 * The library calls it from a worker thread, never two at once. */
void cli_progress_update(void *user, uint64_t done, uint64_t total);

/* cli_progress_end() : wipes the bar if one was drawn. Call it after the
 * library call has returned, before printing anything else to stderr. */
void cli_progress_end(cli_progress *p);

#endif
