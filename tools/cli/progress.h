/* A progress bar for long runs of the clscale tool:
 *
 *     [##############                ]  45%  1.23/2.72 GB  1.21 GB/s  0:12 left
 *     pass 2/3  [#########           ]  45%  1.23/2.72 GB  1.21 GB/s  0:40 left
 *     pass 3/4+  [#########          ]  45%  1.23/2.72 GB  1.21 GB/s  0:40+ left
 *
 * (the pass's own percentage, how far it is through the input file, its
 * rate through the file, and the time left of the passes known to come),
 * drawn on stderr only when stderr is a terminal and the run has lasted more
 * than CLI_PROGRESS_DELAY seconds, redrawn at most every
 * CLI_PROGRESS_INTERVAL seconds (and at 100%), and wiped when the run ends,
 * so that a short or piped run prints nothing. A run of several passes
 * over the file (robust scaling or cleaning of groups larger than a
 * buffer, a fit then a transform) shows "pass k/n"; "+" says that more
 * passes may follow, as many as the data need (counting passes, clipping
 * iterations), so that n and the time left are at least what is shown.
 * The library tells the passes of a streaming call (cls_config.pass); a
 * call that does not, and reports each of its jobs from 0 again, gets
 * "pass k" counted here from the restarts. */
#ifndef CLS_CLI_PROGRESS_H
#define CLS_CLI_PROGRESS_H

#include <stdint.h>

#define CLI_PROGRESS_DELAY 0.3
#define CLI_PROGRESS_INTERVAL 0.1

typedef struct cli_progress {
    int      enabled;    /* stderr is a terminal */
    int      drawn;      /* a bar is on the screen */
    double   t0, last;   /* monotonic seconds: start, last redraw */
    double   delay;      /* CLI_PROGRESS_DELAY, or $CLSCALE_PROGRESS_DELAY (tests) */
    uint64_t file_bytes; /* the input array's bytes: what a pass goes through */
    /* the pass being run */
    int      told;       /* the library tells the passes (cli_progress_pass) */
    unsigned k, n;       /* pass k of n (n 0: not known) */
    int      more;       /* more passes may follow */
    uint64_t first, bytes; /* the pass runs `done` from first to first + bytes */
    double   t_pass;     /* when it began */
    uint64_t last_done, last_total; /* the last update (to see a call restart from 0) */
    unsigned drawn_k;    /* what the screen shows: pass, done */
    uint64_t drawn_done;
} cli_progress;

/* cli_progress_start() : starts the clock and decides whether to draw;
 * `file_bytes` is the input array's size (0: show the pass's bytes). */
void cli_progress_start(cli_progress *p, uint64_t file_bytes);

/* cli_progress_update() : a cls_progress_fn; `user` is the cli_progress.
 * The library calls it from a worker thread, never two at once. */
void cli_progress_update(void *user, uint64_t done, uint64_t total);

/* cli_progress_pass() : a cls_pass_fn; `user` is the cli_progress. */
void cli_progress_pass(void *user, unsigned k, unsigned n, int more, uint64_t first, uint64_t bytes);

/* cli_progress_end() : wipes the bar if one was drawn. Call it after the
 * library call has returned, before printing anything else to stderr. */
void cli_progress_end(cli_progress *p);

#endif
