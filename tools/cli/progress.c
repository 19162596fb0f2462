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
#define BAR_WIDTH_PASSES 20 /* room for "pass k/n" on 80 columns */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, uint64_t file_bytes)
{
    memset(p, 0, sizeof *p);
    p->enabled = isatty(STDERR_FILENO) == 1;
    p->t0 = p->t_pass = now();
    p->file_bytes = file_bytes;
    /* for the tests: a bar from the first update ("0") */
    const char *d = getenv("CLSCALE_PROGRESS_DELAY");
    p->delay = d && *d ? atof(d) : CLI_PROGRESS_DELAY;
}

void cli_progress_pass(void *user, unsigned k, unsigned n, int more, uint64_t first, uint64_t bytes)
{
    cli_progress *p = user;
    if (!p) return;
    p->told = 1;
    p->k = k;
    p->n = n;
    p->more = more;
    p->first = first;
    p->bytes = bytes;
    p->t_pass = now();
}

/* A call that tells no passes: each of its jobs reports from 0 again (a
 * fit, then a transform); a restart, or a new total, is a new pass. */
static void count_restarts(cli_progress *p, uint64_t done, uint64_t total, double t)
{
    if (p->k == 0) {
        p->k = 1;
    } else if (done < p->last_done || total != p->last_total) {
        p->k++;
        p->t_pass = t;
    }
    p->more = p->k > 1; /* after one restart, others may come */
    p->first = 0;
    p->bytes = total;
}

static void clock_text(char *buf, size_t len, double secs, int plus)
{
    const char *m = plus ? "+" : "";
    if (secs < 3600) snprintf(buf, len, "  %d:%02d%s left", (int)secs / 60, (int)secs % 60, m);
    else snprintf(buf, len, "  %dh%02d%s left", (int)(secs / 3600), (int)secs % 3600 / 60, m);
}

void cli_progress_update(void *user, uint64_t done, uint64_t total)
{
    cli_progress *p = user;
    if (!p || !p->enabled || total == 0) return;
    double t = now(), elapsed = t - p->t0;
    if (done > total) done = total;
    if (!p->told) count_restarts(p, done, total, t);
    p->last_done = done;
    p->last_total = total;
    uint64_t in_pass = done > p->first ? done - p->first : 0;
    if (in_pass > p->bytes) in_pass = p->bytes;
    /* the end of each pass is always drawn: the last ends the bar at 100% */
    int end = in_pass == p->bytes;
    if (end && p->drawn && p->drawn_k == p->k && p->drawn_done == done) return; /* on the screen already */
    if (elapsed < p->delay || (p->drawn && !end && t - p->last < CLI_PROGRESS_INTERVAL)) return;
    p->last = t;
    p->drawn_k = p->k;
    p->drawn_done = done;
    double frac = p->bytes ? (double)in_pass / (double)p->bytes : 1.0;
    int passes = p->k > 1 || p->n > 1 || p->more;
    int width = passes ? BAR_WIDTH_PASSES : BAR_WIDTH;
    int fill = (int)(frac * width);
    char bar[BAR_WIDTH + 1];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, ' ', (size_t)(width - fill));
    bar[width] = '\0';
    char head[48] = "";
    if (passes) {
        if (p->n) snprintf(head, sizeof head, "pass %u/%u%s  ", p->k, p->n, p->more ? "+" : "");
        else snprintf(head, sizeof head, "pass %u  ", p->k);
    }
    /* how far the pass is through the file, in the unit that fits the file */
    double whole = p->file_bytes ? (double)p->file_bytes : (double)p->bytes, pos = frac * whole;
    const char *prefix;
    int dec;
    double d = cli_si_fit(whole, &prefix, &dec);
    char amount[64], speed[32], left[40] = "";
    snprintf(amount, sizeof amount, "%.*f/%.*f %sB", dec, pos / d, dec, whole / d, prefix);
    double tp = t - p->t_pass;
    char r[32];
    if (tp > 1e-3) snprintf(speed, sizeof speed, "  %s", cli_si(r, sizeof r, pos / tp, "B/s"));
    else speed[0] = '\0'; /* a pass that has only just begun has no rate yet */
    /* the time left of the passes known to come, at the rate of the run so
     * far ("+": more may follow) */
    uint64_t moved = p->told ? done : in_pass;
    double span = p->told ? elapsed : tp, rate = span > 0 ? (double)moved / span : 0;
    if (rate > 0 && done < total) clock_text(left, sizeof left, (double)(total - done) / rate, p->more);
    /* \r and erase-to-end-of-line: each redraw replaces the last. */
    fprintf(stderr, "\r%s[%s] %3d%%  %s%s%s\033[K", head, bar, (int)(frac * 100.0), amount, speed, left);
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
