/* lightkurve's flatten: the trend fitted flatten_niters times, each fit
 * after the first without the values whose residual x - trend the
 * previous clip found outliers, then detrend_op with the last trend.
 * Owns the order of the passes and the arrays between them: the trend
 * (a host table, the residual written over it in place between fits), the
 * clip's mask, and the values kept (y itself, or a table when y is x).
 * Each fit and each clip is a device pass over every group on every
 * device (lightcurve.c's, clean.c's); the element-wise steps between them
 * run on the host's threads. niters - 1 clips: the outliers the last fit
 * would show are never fitted again. The detrend_op is applied in the
 * data's type to the trend in the data's type (as numpy's x / trend, for
 * every niters, 1 too), where the trend kernels' own op (flatten_niters 0)
 * takes their sums' precision.
 * Calls: lightcurve.c (the trend, the bins), the clip it is handed
 * (clean.c's), util/pool.h, util/table.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clean/flatten.h"
#include "lightcurve/lightcurve.h"
#include "util/pool.h"
#include "util/table.h"

#define PIECE ((size_t)1 << 16) /* values per host step */

enum { RESID, LEAVE_OUT, APPLY };

typedef struct fstep {
    int         what;
    cls_dtype   t;
    const void *x;
    void       *tr, *work, *y;
    const uint8_t *mask;
    int         first;      /* LEAVE_OUT: work starts as a copy of x */
    int         op;         /* APPLY: cls_detrend_op */
    int         has_sent;
    double      sent;
    size_t      n;
} fstep;

/* One piece of a step in the data's type: missing values (non-finite, the
 * sentinel) have no residual (NaN) and keep their value in the output. */
#define STEP(REAL, NAME)                                                                                            \
    static void NAME(const fstep *s, size_t lo, size_t hi)                                                          \
    {                                                                                                               \
        const REAL *x = s->x;                                                                                       \
        REAL *tr = s->tr, *w = s->work, *y = s->y, sent = (REAL)s->sent;                                            \
        for (size_t k = lo; k < hi; k++) {                                                                          \
            REAL v = x[k];                                                                                          \
            int miss = !isfinite(v) || (s->has_sent && v == sent);                                                  \
            if (s->what == RESID) {                                                                                 \
                tr[k] = miss ? (REAL)NAN : (REAL)(v - tr[k]);                                                       \
            } else if (s->what == LEAVE_OUT) {                                                                      \
                if (s->first) w[k] = v;                                                                             \
                if (s->mask[k] && isfinite(tr[k])) w[k] = (REAL)NAN;                                                \
            } else {                                                                                                \
                REAL m = tr[k];                                                                                     \
                y[k] = s->op == CLS_DETREND_TREND ? m : miss ? v                                                    \
                     : s->op == CLS_DETREND_DIVIDE ? (REAL)(v / m) : (REAL)(v - m);                                 \
            }                                                                                                       \
        }                                                                                                           \
    }
STEP(float, step_f32)
STEP(double, step_f64)
#undef STEP

static void piece(void *arg, size_t i)
{
    const fstep *s = arg;
    size_t lo = i * PIECE, hi = s->n - lo < PIECE ? s->n : lo + PIECE;
    if (s->t == CLS_F64) step_f64(s, lo, hi);
    else step_f32(s, lo, hi);
}

static void step(cls_context *ctx, fstep *s, int what)
{
    s->what = what;
    cls_pool_run(ctx->pool, (s->n + PIECE - 1) / PIECE, piece, s);
}

int cls_flatten_active(const cls_clean *c) { return c && c->detrend != CLS_DETREND_NONE && c->flatten_niters; }

cls_status cls_flatten_run(cls_context *ctx, const cls_clean *c, cls_flatten_clip clip, cls_dtype t, const void *x,
                           void *y, uint64_t G, uint64_t Rg, size_t C)
{
    /* the fits write the trend itself; the bins come after the last */
    cls_clean fit = *c, bins = *c;
    fit.detrend_op = CLS_DETREND_TREND;
    fit.bin_rows = 0;
    fit.bin_stat = CLS_BIN_NONE;
    fit.bin_reduce = 0;
    fit.flatten_niters = 0;
    fit.flatten_sigma = 0;
    if (!cls_flatten_active(c)) return cls_lc_run(ctx, c, t, x, y, G, Rg, C);
    size_t es = t == CLS_F64 ? 8 : 4, n = (size_t)(G * Rg) * C, bytes = n * es;
    double sigma = c->flatten_sigma > 0 ? c->flatten_sigma : 3;
    fstep s = {.t = t, .x = x, .y = y, .has_sent = c->has_missing_value, .sent = c->missing_value, .n = n,
               .op = (int)c->detrend_op, .first = 1};
    s.tr = cls_table_alloc(bytes);
    uint8_t *mask = malloc(n ? n : 1);
    /* the values kept: y, unless y is x (whose values the residuals and
     * the output read to the end) */
    int own_work = x == y;
    s.work = own_work ? cls_table_alloc(bytes) : y;
    s.mask = mask;
    cls_status st = CLS_OK;
    if (!s.tr || !mask || !s.work)
        st = cls_fail(ctx, CLS_E_NOMEM, "light curves: flatten: out of memory for its %zu-byte trend and "
                      "%zu-byte mask", bytes, n);
    const void *src = x; /* the first fit reads the flux itself (its missing values left out) */
    for (unsigned it = 0; st == CLS_OK; it++) {
        st = cls_lc_run(ctx, &fit, t, src, s.tr, G, Rg, C);
        if (st != CLS_OK || it + 1 == c->flatten_niters) break;
        step(ctx, &s, RESID);
        st = clip(ctx, t, s.tr, G, Rg, C, sigma, mask);
        if (st != CLS_OK) break;
        /* the finite residuals clipped leave the fit: the values kept only shrink */
        step(ctx, &s, LEAVE_OUT);
        s.first = 0;
        src = s.work;
        /* with the sentinel the kept values keep it (the fits leave it out) */
    }
    if (st == CLS_OK) step(ctx, &s, APPLY);
    if (st == CLS_OK && c->bin_rows) {
        bins.detrend = CLS_DETREND_NONE;
        bins.detrend_op = CLS_DETREND_SUBTRACT;
        bins.window = bins.polyorder = bins.deriv = 0;
        bins.delta = bins.cval = 0;
        bins.edge = CLS_EDGE_DEFAULT;
        bins.origin = 0;
        bins.flatten_niters = 0;
        bins.flatten_sigma = 0;
        st = cls_lc_run(ctx, &bins, t, y, y, G, Rg, C);
    }
    if (own_work) cls_table_free(s.work, bytes);
    cls_table_free(s.tr, bytes);
    free(mask);
    return st;
}
