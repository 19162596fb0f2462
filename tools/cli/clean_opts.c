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
    "                   take the nearest bound\n";

static const char *const names[] = {"impute", "missing-value", "sigma-clip", "sigma-lower", "sigma-upper",
                                    "clip-center", "clip-spread", "clip-mode"};

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

int cli_clean_set(cli_clean *c, const char *name, const char *v, char *err, size_t len)
{
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
    if (c->clip_given && c->c.sigma == 0) {
        /* astropy's default sigma for the side not given */
        c->c.sigma = 3;
        if (c->c.maxiters == 0) c->c.maxiters = 5;
    }
    return 0;
}
