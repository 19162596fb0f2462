/* Light curves along the rows (the time axis): the trend (moving average,
 * Savitzky-Golay) and the bins of each column of each statistics group, as
 * device passes over units of whole groups that every device able to run
 * the dtype pulls (engine/passes.h). The cleaning stage (clean/clean.c)
 * checks the options (plan/checks.c's cls_check_curves) before any pass,
 * then runs the trend and the smoothing here after its own passes;
 * cls_host_bin() reduces.
 * Calls: engine/passes.c, engine/program.c. */
#ifndef CLS_LIGHTCURVE_H
#define CLS_LIGHTCURVE_H

#include "internal.h"

/* cl/lightcurve.cl mirrors these */
#define CLS_LC_PMAX 8       /* Savitzky-Golay polyorder at most */
#define CLS_LC_WMAX (1u << 24) /* window at most: the kernels' sums count in uint */
#define CLS_LC_LOOP_MAX 60000u /* trip count per work-item (rusticl: ~65 535, PITFALLS.md): bins of
                                  at most this many rows (plan/checks.c's cls_check_curves) */

/* Whether c asks for a trend or bins (any light-curve field set). */
int cls_lc_active(const cls_clean *c);

/* c without its light curves: the cleaning's own passes ahead of them
 * (c itself when it has none, else *plain, made from it). */
const cls_clean *cls_lc_strip(const cls_clean *c, cls_clean *plain);

/* Whether c's bins reduce to a row each (cls_fit_transform of a cleaning
 * alone): asked for (bin_reduce), a sum or a count, or an output of another
 * shape than the input's (out_rows/out_batch; have_out 0: none given, as a
 * .npy output's shape comes from this answer). */
int cls_lc_reduces(const cls_clean *c, uint64_t in_batch, uint64_t in_rows, int have_out, uint64_t out_batch,
                   uint64_t out_rows);


/* The trend, then the smoothing by bins, of G groups of Rg x C values at
 * x into y (same shape; may be x). */
cls_status cls_lc_run(cls_context *ctx, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t G,
                      uint64_t Rg, size_t C);

/* A block of one series of Rg rows streamed with halo rows: x holds the
 * series' rows [base, base + held), y receives rows [wlo, whi) (y may be
 * x: the trend goes through a device buffer read back). The block's rows
 * come out as the whole series' call gives them: the kernels' chunks of
 * rows per work-item stay where they are in the series (their sums start
 * afresh there), the edges are the series' own. With a wrap edge x holds
 * the extended rows: base may be negative and base + held past Rg, row t
 * holding the series' row t mod Rg (the other end's, which its windows
 * read there); the kernels read each row where it is held. */
typedef struct cls_lc_rows {
    int64_t base;
    uint64_t held, wlo, whi;
    void *scratch; /* NULL, or host memory of the block's rows that the trend
                      may write (a device working on host memory: no driver buffer) */
} cls_lc_rows;

/* The halo of a block: the rows before wlo (*before) and after whi
 * (*after) that its trend reads; 0 without a trend. A wrap edge reads the
 * other end of the series: *wrap set (the halo rows before the series'
 * first row and past its last are then the other end's: cls_lc_rows).
 * A lookup whatever c's options (the route plans with it before the
 * call's checks refuse bad ones). */
void cls_lc_halo(const cls_clean *c, uint64_t *before, uint64_t *after, int *wrap);

/* cls_lc_run of one block (G = 1): the trend of rows [wlo, whi) into y,
 * then their smoothing by bins (wlo a multiple of bin_rows, whi too or
 * Rg), or, reduce, their bins into y (a row per bin; y not x then). */
cls_status cls_lc_run_rows(cls_context *ctx, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t Rg,
                           size_t C, const cls_lc_rows *r, int reduce);

/* One row per bin: y holds G x ceil(Rg / bin_rows) x C values. */
cls_status cls_lc_reduce(cls_context *ctx, const cls_clean *c, cls_dtype t, const void *x, void *y, uint64_t G,
                         uint64_t Rg, size_t C);

/* savgol.c: the weights g[0..p] of the window's sums S_j = sum x u^j, u =
 * (t - c) / s, c = (w - 1) / 2, s = max(c, 1), that give the least-squares
 * polynomial's derivative `deriv` at the centre of a full window, scaled by
 * g[p + 1] = 1 / (s delta)^deriv (included in g[0..p]). 0 if singular. */
int cls_savgol_weights(unsigned w, unsigned p, unsigned deriv, double delta, double *g);
/* The position scale s of a window of w rows. */
double cls_savgol_scale(unsigned w);

#endif
