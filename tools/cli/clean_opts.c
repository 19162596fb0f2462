/* The cleaning options (clean_opts.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean_opts.h"

const char cli_clean_usage[] =
    "  --impute S       fill missing values with the column's mean, median,\n"
    "                   most_frequent value (the smallest of ties), or constant:V\n"
    "                   (scikit-learn's SimpleImputer); an all-missing column stays missing\n"
    "  --missing-value V  values equal to V are missing too (NaN, +-Inf always are)\n"
    "  --sigma-clip K[,ITERS]  astropy's sigma_clip per column: values beyond K spreads\n"
    "                   from the centre are clipped, ITERS times (default 5; none:\n"
    "                   until nothing changes)\n"
    "  --sigma-lower K, --sigma-upper K  the bounds' own K (default: --sigma-clip's, 3)\n"
    "  --clip-center C  median (default) or mean\n"
    "  --clip-spread S  std (default) or mad_std\n"
    "  --clip-mode M    mask: clipped values become missing (default); clamp: they\n"
    "                   take the nearest bound\n"
    "  --detrend T      after the clipping, a trend along the rows of each column:\n"
    "                   savgol:W,P (scipy's savgol_filter, window W, polyorder P) or\n"
    "                   mean:W (uniform_filter1d); missing values ignored in a window\n"
    "  --flatten W,P[,N[,K]]  lightkurve's flatten: the savgol:W,P trend fitted N times\n"
    "                   (default 3), each fit without the values that a K-sigma clip\n"
    "                   (default 3; median, std, 5 iterations) of x - the last trend\n"
    "                   finds, then x / trend (--detrend-op to change); whole series\n"
    "  --detrend-op O   subtract (default), divide (lightkurve's flatten) or trend\n"
    "  --detrend-edge E interp (savgol's default), reflect (mean's default), mirror,\n"
    "                   nearest, wrap or constant:V (docs/guide/lightcurves.md)\n"
    "  --bin-smooth K,S after the trend, each value replaced by its bin of K rows'\n"
    "                   mean, median or boundary (the nearer of min and max)\n";

static const char *const names[] = {"impute", "missing-value", "sigma-clip", "sigma-lower", "sigma-upper",
                                    "clip-center", "clip-spread", "clip-mode", "detrend", "detrend-op",
                                    "detrend-edge", "bin-smooth", "bin", "flatten"};

int cli_clean_is_option(const char *name)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i])) return 1;
    return 0;
}

/* A whole string as a double. */
static int number(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return end != s && *end == '\0' && !errno ? 0 : -1;
}

static int positive(const char *name, const char *s, double *out, char *err, size_t len)
{
    if (number(s, out) == 0 && isfinite(*out) && *out > 0) return 0;
    snprintf(err, len, "--%s \"%s\": expected a finite number K > 0", name, s);
    return -1;
}

/* "W" or "W,P": whole numbers, W >= 1, P >= 0 */
static int window_spec(const char *s, unsigned *w, unsigned *p, int with_p)
{
    char *end;
    errno = 0;
    unsigned long a = strtoul(s, &end, 10), b = 0;
    if (end == s || errno || a < 1 || a > (1ul << 24) || *s == '-') return -1;
    if (with_p) {
        if (*end != ',') return -1;
        const char *t = end + 1;
        b = strtoul(t, &end, 10);
        if (end == t || errno || b > 8 || *t == '-') return -1;
    }
    if (*end != '\0') return -1;
    *w = (unsigned)a;
    *p = (unsigned)b;
    return 0;
}

/* --flatten W,P[,N[,K]] */
static int flatten_option(cli_clean *c, const char *v, char *err, size_t len)
{
    char buf[128], *part[4] = {0};
    int n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *t = buf; t && n < 4; n++) {
        part[n] = t;
        t = strchr(t, ',');
        if (t) *t++ = '\0';
    }
    char wp[2 * sizeof buf]; /* "W,P" from two parts of buf (gcc -O3 sizes each part as buf) */
    unsigned w = 0, p = 0;
    unsigned long it = 3;
    double sigma = 3;
    int bad = n < 2 || strlen(v) >= sizeof buf || strchr(v, ',') == NULL;
    if (!bad) {
        snprintf(wp, sizeof wp, "%s,%s", part[0], part[1]);
        bad = window_spec(wp, &w, &p, 1) != 0;
    }
    if (!bad && n > 2) {
        char *end;
        errno = 0;
        it = strtoul(part[2], &end, 10);
        bad = end == part[2] || *end || errno || it < 1 || it > 1000 || *part[2] == '-';
    }
    if (!bad && n > 3) bad = number(part[3], &sigma) != 0 || !isfinite(sigma) || !(sigma > 0);
    int commas = 0;
    for (const char *t = v; *t; t++) commas += *t == ',';
    bad = bad || commas > 3;
    if (bad) {
        snprintf(err, len, "--flatten \"%s\": expected W,P[,N[,K]]: window W >= 1, polyorder P 0 to 8 (< W), "
                           "N fits 1 to 1000 (default 3), K sigma > 0 (default 3)", v);
        return -1;
    }
    c->c.detrend = CLS_DETREND_SAVGOL;
    c->c.window = w;
    c->c.polyorder = p;
    c->c.flatten_niters = (unsigned)it;
    c->c.flatten_sigma = sigma;
    c->flatten = 1;
    return 0;
}

static int light_curve_option(cli_clean *c, const char *name, const char *v, char *err, size_t len)
{
    if ((!strcmp(name, "flatten") && c->c.detrend && !c->flatten) || (!strcmp(name, "detrend") && c->flatten)) {
        snprintf(err, len, "--flatten and --detrend: one or the other (--flatten fits a savgol trend)");
        return -1;
    }
    if (!strcmp(name, "flatten")) {
        if (flatten_option(c, v, err, len)) return -1;
    } else if (!strcmp(name, "detrend")) {
        int sg = !strncmp(v, "savgol:", 7), mean = !strncmp(v, "mean:", 5);
        unsigned w = 0, p = 0;
        if ((!sg && !mean) || window_spec(v + (sg ? 7 : 5), &w, &p, sg)) {
            snprintf(err, len, "--detrend \"%s\": expected savgol:W,P (window W >= 1, polyorder 0 to 8) or "
                               "mean:W", v);
            return -1;
        }
        c->c.detrend = sg ? CLS_DETREND_SAVGOL : CLS_DETREND_MEAN;
        c->c.window = w;
        c->c.polyorder = p;
    } else if (!strcmp(name, "detrend-op")) {
        if (!strcmp(v, "subtract")) c->c.detrend_op = CLS_DETREND_SUBTRACT;
        else if (!strcmp(v, "divide")) c->c.detrend_op = CLS_DETREND_DIVIDE;
        else if (!strcmp(v, "trend")) c->c.detrend_op = CLS_DETREND_TREND;
        else {
            snprintf(err, len, "--detrend-op \"%s\": expected subtract, divide or trend", v);
            return -1;
        }
        c->op_given = 1;
    } else if (!strcmp(name, "detrend-edge")) {
        static const char *const edges[] = {"", "reflect", "mirror", "nearest", "", "wrap", "interp"};
        c->c.edge = CLS_EDGE_DEFAULT;
        for (int e = 1; e <= CLS_EDGE_INTERP; e++)
            if (*edges[e] && !strcmp(v, edges[e])) c->c.edge = (cls_edge)e;
        if (!strncmp(v, "constant:", 9)) {
            if (number(v + 9, &c->c.cval) != 0 || !isfinite(c->c.cval)) {
                snprintf(err, len, "--detrend-edge \"%s\": the constant must be a finite number", v);
                return -1;
            }
            c->c.edge = CLS_EDGE_CONSTANT;
        }
        if (c->c.edge == CLS_EDGE_DEFAULT) {
            snprintf(err, len, "--detrend-edge \"%s\": expected interp, reflect, mirror, nearest, wrap or "
                               "constant:V", v);
            return -1;
        }
    } else {
        /* --bin-smooth K,S (the same shape) or --bin K,S (one row per bin) */
        int reduce = !strcmp(name, "bin");
        if (reduce ? c->c.bin_rows && !c->reduce : c->reduce) {
            snprintf(err, len, "--bin and --bin-smooth: one or the other (--bin reduces each bin to a row, "
                               "--bin-smooth keeps the rows)");
            return -1;
        }
        const char *comma = strchr(v, ',');
        unsigned k = 0, unused;
        char num[32];
        int stat = !comma                                  ? 0
                   : !strcmp(comma + 1, "mean")              ? CLS_BIN_MEAN
                   : !strcmp(comma + 1, "median")            ? CLS_BIN_MEDIAN
                   : !reduce && !strcmp(comma + 1, "boundary") ? CLS_BIN_BOUNDARY
                   : reduce && !strcmp(comma + 1, "sum")       ? CLS_BIN_SUM
                   : reduce && !strcmp(comma + 1, "count")     ? CLS_BIN_COUNT
                                                               : 0;
        if (comma && (size_t)(comma - v) < sizeof num) {
            memcpy(num, v, (size_t)(comma - v));
            num[comma - v] = '\0';
        } else {
            num[0] = '\0';
        }
        if (!stat || window_spec(num, &k, &unused, 0) || k > 60000) {
            snprintf(err, len, "--%s \"%s\": expected K,mean, K,median%s (K rows, 1 to 60000)", name, v,
                     reduce ? ", K,sum or K,count" : " or K,boundary");
            return -1;
        }
        c->reduce = reduce;
        c->c.bin_reduce = reduce;
        c->c.bin_rows = k;
        c->c.bin_stat = (cls_bin_stat)stat;
    }
    c->light_curve = 1;
    return 0;
}

int cli_clean_set(cli_clean *c, const char *name, const char *v, char *err, size_t len)
{
    if (!strncmp(name, "detrend", 7) || !strncmp(name, "bin", 3) || !strcmp(name, "flatten")) {
        c->any = 1;
        return light_curve_option(c, name, v, err, len);
    }
    c->any = 1;
    if (!strcmp(name, "impute")) {
        if (!strcmp(v, "mean")) c->c.impute = CLS_IMPUTE_MEAN;
        else if (!strcmp(v, "median")) c->c.impute = CLS_IMPUTE_MEDIAN;
        else if (!strcmp(v, "most_frequent")) c->c.impute = CLS_IMPUTE_MOST_FREQUENT;
        else if (!strncmp(v, "constant:", 9)) {
            if (number(v + 9, &c->c.fill_value) != 0 || !isfinite(c->c.fill_value)) {
                snprintf(err, len, "--impute \"%s\": the constant must be a finite number", v);
                return -1;
            }
            c->c.impute = CLS_IMPUTE_CONSTANT;
        } else {
            snprintf(err, len, "--impute \"%s\": expected mean, median, most_frequent or constant:V", v);
            return -1;
        }
    } else if (!strcmp(name, "missing-value")) {
        if (number(v, &c->c.missing_value) != 0 || isnan(c->c.missing_value)) {
            snprintf(err, len, "--missing-value \"%s\": expected a number that is not NaN (NaN is always missing)",
                     v);
            return -1;
        }
        c->c.has_missing_value = 1;
    } else if (!strcmp(name, "sigma-clip")) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", v);
        char *comma = strchr(buf, ',');
        if (comma) *comma = '\0';
        if (positive("sigma-clip", buf, &c->c.sigma, err, len)) return -1;
        c->c.maxiters = 5;
        if (comma) {
            const char *it = comma + 1;
            char *end;
            errno = 0;
            long n = strtol(it, &end, 10);
            if (!strcmp(it, "none")) c->c.maxiters = -1;
            else if (end != it && *end == '\0' && !errno && n >= 1 && n <= 1000000) c->c.maxiters = (int)n;
            else {
                snprintf(err, len, "--sigma-clip \"%s\": ITERS must be a whole number >= 1 or none", v);
                return -1;
            }
        }
        c->clip_given = 1;
    } else if (!strcmp(name, "sigma-lower")) {
        if (positive("sigma-lower", v, &c->c.sigma_lower, err, len)) return -1;
        c->clip_given = 1;
    } else if (!strcmp(name, "sigma-upper")) {
        if (positive("sigma-upper", v, &c->c.sigma_upper, err, len)) return -1;
        c->clip_given = 1;
    } else if (!strcmp(name, "clip-center")) {
        if (!strcmp(v, "median")) c->c.center = CLS_CENTER_MEDIAN;
        else if (!strcmp(v, "mean")) c->c.center = CLS_CENTER_MEAN;
        else {
            snprintf(err, len, "--clip-center \"%s\": expected median or mean", v);
            return -1;
        }
        c->clip_detail = 1;
    } else if (!strcmp(name, "clip-spread")) {
        if (!strcmp(v, "std")) c->c.spread = CLS_SPREAD_STD;
        else if (!strcmp(v, "mad_std")) c->c.spread = CLS_SPREAD_MAD_STD;
        else {
            snprintf(err, len, "--clip-spread \"%s\": expected std or mad_std", v);
            return -1;
        }
        c->clip_detail = 1;
    } else if (!strcmp(name, "clip-mode")) {
        if (!strcmp(v, "mask")) c->c.mode = CLS_CLIP_MASK;
        else if (!strcmp(v, "clamp")) c->c.mode = CLS_CLIP_CLAMP;
        else {
            snprintf(err, len, "--clip-mode \"%s\": expected mask or clamp", v);
            return -1;
        }
        c->clip_detail = 1;
    }
    return 0;
}

int cli_clean_finish(cli_clean *c, char *err, size_t len)
{
    if (c->clip_detail && !c->clip_given) {
        snprintf(err, len, "--clip-center, --clip-spread and --clip-mode need --sigma-clip (or --sigma-lower, "
                           "--sigma-upper)");
        return -1;
    }
    if ((c->op_given || c->c.edge) && !c->c.detrend) {
        snprintf(err, len, "--detrend-op and --detrend-edge need --detrend or --flatten");
        return -1;
    }
    /* lightkurve's flatten divides by its trend */
    if (c->flatten && !c->op_given) c->c.detrend_op = CLS_DETREND_DIVIDE;
    if (c->clip_given && c->c.sigma == 0) {
        /* astropy's default sigma for the side not given */
        c->c.sigma = 3;
        if (c->c.maxiters == 0) c->c.maxiters = 5;
    }
    return 0;
}
