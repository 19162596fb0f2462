/* See progress.h. The callback runs while the library holds its job lock,
 * so it does no more than a clock read unless a redraw is due. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"

#define BAR_WIDTH 30

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p)
{
    memset(p, 0, sizeof *p);
    p->enabled = isatty(STDERR_FILENO) == 1;
    p->t0 = now();
    /* for the tests: a bar from the first update ("0") */
    const char *d = getenv("CLSCALE_PROGRESS_DELAY");
    p->delay = d && *d ? atof(d) : CLI_PROGRESS_DELAY;
}

void cli_progress_update(void *user, uint64_t done, uint64_t total)
{
    cli_progress *p = user;
    if (!p || !p->enabled || total == 0) return;
    double t = now(), elapsed = t - p->t0;
    if (elapsed < p->delay || (p->drawn && t - p->last < CLI_PROGRESS_INTERVAL)) return;
    p->last = t;
    if (done > total) done = total;
    double frac = (double)done / (double)total;
    int fill = (int)(frac * BAR_WIDTH);
    char bar[BAR_WIDTH + 1];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, ' ', (size_t)(BAR_WIDTH - fill));
    bar[BAR_WIDTH] = '\0';
    double rate = (double)done / elapsed;
    char left[32] = "";
    if (rate > 0 && done < total) {
        double secs = (double)(total - done) / rate;
        if (secs < 3600) snprintf(left, sizeof left, "  %d:%02d left", (int)secs / 60, (int)secs % 60);
        else snprintf(left, sizeof left, "  %dh%02d left", (int)(secs / 3600), (int)secs % 3600 / 60);
    }
    /* done in the unit that fits total: "12.3/27.2 GB", "300/850 kB" */
    char amount[64], speed[32];
    const char *prefix;
    int dec;
    double d = cli_si_fit((double)total, &prefix, &dec);
    snprintf(amount, sizeof amount, "%.*f/%.*f %sB", dec, (double)done / d, dec, (double)total / d, prefix);
    /* \r and erase-to-end-of-line: each redraw replaces the last. */
    fprintf(stderr, "\r[%s] %3d%%  %s  %s%s\033[K", bar, (int)(frac * 100.0), amount,
            cli_si(speed, sizeof speed, rate, "B/s"), left);
    fflush(stderr);
    p->drawn = 1;
}

void cli_progress_end(cli_progress *p)
{
    if (!p->drawn) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->drawn = 0;
}
