/* What the tool's commands share: messages, a context for --devices, JSON
 * strings. Called by every command (cli/ and bench/); calls only the library. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("clscale: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

void cli_usage_hint(const char *cmd) { fprintf(stderr, "Try 'clscale %s --help'.\n", cmd); }

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "clscale: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    cli_usage_hint(cmd);
    return EXIT_USAGE;
}

int cli_selector_check(const char *cmd, const char *sel)
{
    if (!sel) return 0;
    for (const char *c = sel; *c; c++)
        if (*c != ',' && *c != ' ' && *c != '\t') return 0;
    cli_error(EXIT_USAGE, "%s: --devices \"%s\" names no device (all, gpu, cpu, indices such as 0,2, or part "
              "of a name)", cmd, sel);
    cli_usage_hint(cmd);
    return EXIT_USAGE;
}

/* Whether a context of every device can be made: then a selector that made
 * context creation fail with CLS_E_NO_DEVICE matched nothing (a usage
 * error), rather than the machine having no device at all. */
static int devices_exist(void)
{
    cls_config cfg = {0};
    cfg.devices = "all";
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    cls_context_destroy(ctx);
    return st == CLS_OK;
}

int cli_context_failed(const char *cmd, const char *devices, cls_status st, cls_context *ctx)
{
    cli_error(EXIT_FAIL, "%s: %s", cls_status_str(st), ctx ? cls_last_error(ctx) : "out of memory");
    const char *env = getenv("CLSCALE_DEVICES");
    int selected = (devices && *devices) || (!devices && env && *env);
    cls_context_destroy(ctx);
    if (st != CLS_E_NO_DEVICE || !selected || !devices_exist()) return EXIT_FAIL;
    /* a selector that matched nothing is a usage error, and ends as one */
    cli_usage_hint(cmd);
    return EXIT_USAGE;
}

cls_context *cli_context(const char *cmd, const char *devices, unsigned flags, int *rc)
{
    cls_config cfg = {0};
    cfg.devices = devices;
    cfg.flags = flags;
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) {
        *rc = cli_context_failed(cmd, devices, st, ctx);
        return NULL;
    }
    *rc = EXIT_OK;
    return ctx;
}

double cli_si_fit(double v, const char **prefix, int *decimals)
{
    static const char *const names[] = {"", "k", "M", "G", "T", "P", "E"};
    size_t k = 0;
    double d = 1;
    if (!(v >= 0)) v = 0;
    while (v / d >= 999.5 && k + 1 < sizeof names / sizeof names[0]) {
        d *= 1000;
        k++;
    }
    /* whole bytes as they are; three significant digits past them */
    double x = v / d;
    *prefix = names[k];
    *decimals = k == 0 ? 0 : x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
    return d;
}

const char *cli_si(char *buf, size_t len, double v, const char *unit)
{
    const char *prefix;
    int decimals;
    double d = cli_si_fit(v, &prefix, &decimals);
    snprintf(buf, len, "%.*f %s%s", decimals, v > 0 ? v / d : 0.0, prefix, unit);
    return buf;
}

const char *cli_seconds(char *buf, size_t len, double s)
{
    if (!(s >= 0)) s = 0;
    if (s >= 0.9995) snprintf(buf, len, "%.3g s", s);
    else snprintf(buf, len, "%.3g ms", s * 1e3);
    return buf;
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

int cli_scaler_parse(const char *name, cls_scaler *out)
{
    const char *n;
    for (int s = CLS_MINMAX; (n = cls_scaler_name((cls_scaler)s)); s++)
        if (!strcmp(n, name)) {
            *out = (cls_scaler)s;
            return 0;
        }
    return -1;
}

/* Whether the library builds statistics of scaler s with the range [lo,
 * hi] and, or not, exact quantiles: cls_stats_create() refuses an empty
 * range to a scaler that takes one and statistics without quantiles to a
 * scaler whose fit needs them (the descriptor's own fields, read through
 * the public API; it leaves this thread's last error set then, which
 * nothing reads). */
static int stats_made(cls_scaler s, double lo, double hi, int quantiles)
{
    cls_stats_info info = {.scaler = s, .scope = CLS_SCOPE_MATRIX, .dtype = CLS_F64, .groups = 1, .cols = 1,
                           .lo = lo, .hi = hi, .has_moments = 1, .has_quantiles = quantiles};
    cls_column_stats empty = {.count = 0};
    cls_stats *st = NULL;
    cls_status rc = cls_stats_create(&info, &empty, &st);
    cls_stats_destroy(st);
    return rc == CLS_OK;
}

unsigned cli_scaler_takes(cls_scaler s)
{
    unsigned t = 0;
    if (!stats_made(s, 1, 0, 1)) t |= CLI_TAKES_RANGE;
    if (!stats_made(s, 0, 0, 0)) t |= CLI_TAKES_QUANTILES;
    return t;
}

const char *cli_scalers_taking(unsigned what)
{
    static char lists[CLI_TAKES_QUANTILES + 1][128];
    char *list = lists[what & CLI_TAKES_QUANTILES ? CLI_TAKES_QUANTILES : CLI_TAKES_RANGE];
    if (!list[0]) {
        size_t n = 0;
        const char *name;
        for (int s = CLS_MINMAX; (name = cls_scaler_name((cls_scaler)s)) && n < 128; s++)
            if (cli_scaler_takes((cls_scaler)s) & what)
                n += (size_t)snprintf(list + n, 128 - n, "%s%s", n ? " or " : "", name);
    }
    return list;
}

const char *cli_methods(void)
{
    static char list[256];
    if (!list[0]) {
        /* every scaler's name, "minmax|zscore|..." */
        size_t n = 0;
        const char *name;
        for (int s = CLS_MINMAX; (name = cls_scaler_name((cls_scaler)s)) && n < sizeof list; s++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", s > CLS_MINMAX ? "|" : "", name);
    }
    return list;
}
