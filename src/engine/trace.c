/* Traces of a CLS_PROFILE call: the events of the context's last report
 * written as a Chrome trace (JSON, for Perfetto and chrome://tracing) or as
 * an SVG timeline with one lane per (device, queue).
 * Owns: cls_trace_write. Reads ctx->report and the
 * devices' names, nothing else; makes no OpenCL call. A file is written under
 * a temporary name next to its path and renamed into place, so a failed
 * write leaves nothing half-written. Numbers are printed in the "C" locale
 * whatever the caller's locale is. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Tableau 10 hues: five that stay apart on screen and in print. */
static const struct { const char *label, *cat, *color; } kinds[CLS_EV_KINDS] = {
    [CLS_EV_STAGE_IN]  = {"stage in",  "stage_in",  "#9467bd"},
    [CLS_EV_UPLOAD]    = {"upload",    "upload",    "#1f77b4"},
    [CLS_EV_KERNEL]    = {"kernel",    "kernel",    "#2ca02c"},
    [CLS_EV_DOWNLOAD]  = {"download",  "download",  "#d62728"},
    [CLS_EV_STAGE_OUT] = {"stage out", "stage_out", "#ff7f0e"},
};

/* SVG layout, pixels. */
enum {
    SVG_W = 1200,
    PLOT_X0 = 290,           /* left of it: device names and lane labels */
    PLOT_X1 = SVG_W - 28,
    TOP = 74,                /* title and legend above the lanes */
    LANE_H = 26,
    DEV_GAP = 14,
    NAME_CHARS = 24,         /* of a device name beside its first lane */
};

/* A (device, queue) with at least one event: a JSON thread, an SVG lane. */
typedef struct lane {
    unsigned device, queue;
    size_t   rank;    /* among the lanes of its device */
    int      split;   /* its device stages: a host row above a device row */
    double   y;       /* top in the SVG */
} lane;

typedef struct trace {
    const cls_context *ctx;
    const cls_event   *ev;
    size_t             nev;
    lane              *lanes;     /* sorted by device, then queue */
    size_t             nlanes;
    size_t            *lane_of;   /* [event] -> lane */
    size_t            *order;     /* events grouped by lane, in input order */
    size_t            *first;     /* [lane] -> start in order; [nlanes] = nev */
} trace;

static int kind_ok(cls_event_kind k) { return (unsigned)k < CLS_EV_KINDS; }
static const char *kind_label(cls_event_kind k) { return kind_ok(k) ? kinds[k].label : "?"; }
static const char *kind_cat(cls_event_kind k) { return kind_ok(k) ? kinds[k].cat : "unknown"; }
static const char *kind_color(cls_event_kind k) { return kind_ok(k) ? kinds[k].color : "#7f7f7f"; }
static int is_host(cls_event_kind k) { return k == CLS_EV_STAGE_IN || k == CLS_EV_STAGE_OUT; }

static double t_of(double s) { return isfinite(s) && s > 0 ? s : 0; }
static double ev_start(const cls_event *e) { return t_of(e->start); }
static double ev_end(const cls_event *e) { return fmax(t_of(e->end), ev_start(e)); }
static double finite_or_0(double x) { return isfinite(x) ? x : 0; }

static const char *or_q(const char *s) { return s ? s : "?"; }
/* The index `clscale devices` prints for selected device d. */
static unsigned dev_global(const cls_context *ctx, unsigned d)
{
    return d < ctx->ndevs ? (unsigned)ctx->devs[d].info.index : d;
}

static const char *dev_name(const cls_context *ctx, unsigned d)
{
    return d < ctx->ndevs ? or_q(ctx->devs[d].info.name) : "?";
}
static const char *dev_platform(const cls_context *ctx, unsigned d)
{
    return d < ctx->ndevs ? or_q(ctx->devs[d].info.platform) : "?";
}

static int lane_cmp(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    return x->queue < y->queue ? -1 : x->queue > y->queue;
}

static void trace_free(trace *t)
{
    free(t->lanes);
    free(t->lane_of);
    free(t->order);
    free(t->first);
}

static cls_status trace_init(cls_context *ctx, trace *t)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->ev = ctx->report.events;
    t->nev = t->ev ? ctx->report.nevents : 0;
    if (t->nev == 0)
        return cls_fail(ctx, CLS_E_ARG, "no profiled call to trace: create the context with "
                                        "CLS_PROFILE and run a pipeline first");
    t->lanes = malloc(t->nev * sizeof *t->lanes);
    t->lane_of = malloc(t->nev * sizeof *t->lane_of);
    t->order = malloc(t->nev * sizeof *t->order);
    t->first = calloc(t->nev + 1, sizeof *t->first);
    if (!t->lanes || !t->lane_of || !t->order || !t->first) {
        trace_free(t);
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory laying out a trace of %zu events", t->nev);
    }
    for (size_t i = 0; i < t->nev; i++) t->lanes[i] = (lane){.device = t->ev[i].device, .queue = t->ev[i].queue};
    qsort(t->lanes, t->nev, sizeof *t->lanes, lane_cmp);
    for (size_t i = 0; i < t->nev; i++)
        if (t->nlanes == 0 || lane_cmp(&t->lanes[t->nlanes - 1], &t->lanes[i]) != 0)
            t->lanes[t->nlanes++] = t->lanes[i];
    /* Counting sort of the events by lane, stable. */
    for (size_t i = 0; i < t->nev; i++) {
        lane key = {.device = t->ev[i].device, .queue = t->ev[i].queue};
        const lane *l = bsearch(&key, t->lanes, t->nlanes, sizeof key, lane_cmp);
        t->lane_of[i] = (size_t)(l - t->lanes);
        t->first[t->lane_of[i] + 1]++;
    }
    for (size_t l = 0; l < t->nlanes; l++) t->first[l + 1] += t->first[l];
    size_t *fill = calloc(t->nlanes, sizeof *fill);
    if (!fill) {
        trace_free(t);
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory laying out a trace of %zu events", t->nev);
    }
    for (size_t i = 0; i < t->nev; i++) {
        size_t l = t->lane_of[i];
        t->order[t->first[l] + fill[l]++] = i;
    }
    free(fill);

    double y = TOP;
    for (size_t l = 0; l < t->nlanes; l++) {
        lane *ln = &t->lanes[l];
        int first = l == 0 || ln->device != ln[-1].device;
        if (first && l > 0) y += DEV_GAP;
        ln->rank = first ? 0 : ln[-1].rank + 1;
        ln->y = y;
        y += LANE_H;
        for (size_t j = t->first[l]; j < t->first[l + 1] && !ln->split; j++)
            ln->split = is_host(t->ev[t->order[j]].kind);
    }
    /* A device splits all its lanes or none, so that its lanes line up. */
    for (size_t l = t->nlanes; l-- > 1;)
        if (t->lanes[l].device == t->lanes[l - 1].device) t->lanes[l - 1].split |= t->lanes[l].split;
    for (size_t l = 1; l < t->nlanes; l++)
        if (t->lanes[l].device == t->lanes[l - 1].device) t->lanes[l].split = t->lanes[l - 1].split;
    return CLS_OK;
}

/* ---- text: UTF-8 in, JSON or XML out ---- */

/* The next code point of NUL-terminated UTF-8, or U+FFFD for a byte that
 * does not start a valid sequence (then only that byte is consumed). */
static unsigned long next_cp(const unsigned char **p)
{
    const unsigned char *s = *p;
    unsigned long cp, min;
    int n;
    if (s[0] < 0x80) { *p = s + 1; return s[0]; }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) { n = 1; cp = s[0] & 0x1f; min = 0x80; }
    else if (s[0] >= 0xe0 && s[0] <= 0xef) { n = 2; cp = s[0] & 0x0f; min = 0x800; }
    else if (s[0] >= 0xf0 && s[0] <= 0xf4) { n = 3; cp = s[0] & 0x07; min = 0x10000; }
    else { *p = s + 1; return 0xfffd; }
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xc0) != 0x80) { *p = s + 1; return 0xfffd; }
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) { *p = s + 1; return 0xfffd; }
    *p = s + n + 1;
    return cp;
}

static void put_utf8(FILE *f, unsigned long cp)
{
    if (cp < 0x80) fputc((int)cp, f);
    else if (cp < 0x800) fprintf(f, "%c%c", (int)(0xc0 | cp >> 6), (int)(0x80 | (cp & 0x3f)));
    else if (cp < 0x10000)
        fprintf(f, "%c%c%c", (int)(0xe0 | cp >> 12), (int)(0x80 | (cp >> 6 & 0x3f)), (int)(0x80 | (cp & 0x3f)));
    else
        fprintf(f, "%c%c%c%c", (int)(0xf0 | cp >> 18), (int)(0x80 | (cp >> 12 & 0x3f)),
                (int)(0x80 | (cp >> 6 & 0x3f)), (int)(0x80 | (cp & 0x3f)));
}

/* Writes `s` as a JSON string, quotes included. */
static void json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)or_q(s);
    fputc('"', f);
    while (*p) {
        unsigned long c = next_cp(&p);
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20) fprintf(f, "\\u%04lx", c);
            else put_utf8(f, c);
        }
    }
    fputc('"', f);
}

/* Writes `s` escaped for XML text or an attribute; characters XML 1.0 cannot
 * hold become U+FFFD, line breaks a space. At most `max` characters (0: all),
 * the last one an ellipsis when `s` is cut. */
static void xml_str(FILE *f, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)or_q(s);
    size_t len = 0;
    for (const unsigned char *q = p; *q; len++) next_cp(&q);
    for (size_t n = 0; *p; n++) {
        if (max && len > max && n + 1 == max) {
            fputs("\xe2\x80\xa6", f);
            return;
        }
        unsigned long c = next_cp(&p);
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\n': case '\r': case '\t': fputc(' ', f); break;
        default:
            put_utf8(f, c < 0x20 || c == 0xfffe || c == 0xffff ? 0xfffd : c);
        }
    }
}

/* ---- files ---- */

typedef void (*emit_fn)(FILE *f, const trace *t);

/* Renders into memory with the C locale's decimal point, then writes the
 * file atomically. */
static cls_status write_file(cls_context *ctx, const char *path, emit_fn emit, const trace *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return cls_fail(ctx, CLS_E_NOMEM, "out of memory writing %s", path);
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c ? uselocale(c) : (locale_t)0;
    emit(f, t);
    int bad = ferror(f);
    if (c) {
        uselocale(old);
        freelocale(c);
    }
    if (fclose(f) != 0 || bad) {
        free(buf);
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory writing %s", path);
    }
    const void *parts[1] = {buf};
    size_t lens[1] = {len};
    int err = cls_write_atomic(path, parts, lens, 1);
    free(buf);
    if (err) return cls_fail(ctx, CLS_E_IO, "cannot write %s: %s", path, strerror(err));
    return CLS_OK;
}

static cls_status write_trace(cls_context *ctx, const char *path, emit_fn emit)
{
    if (!ctx) return CLS_E_ARG;
    if (!path || !*path) return cls_fail(ctx, CLS_E_ARG, "trace: no path given");
    trace t;
    cls_status st = trace_init(ctx, &t);
    if (st != CLS_OK) return st;
    st = write_file(ctx, path, emit, &t);
    trace_free(&t);
    return st;
}

/* ---- Chrome trace event format ---- */

static void json_device_label(FILE *f, const cls_context *ctx, unsigned d)
{
    char head[64];
    snprintf(head, sizeof head, "device %u: ", dev_global(ctx, d));
    size_t len = strlen(head) + strlen(dev_name(ctx, d)) + strlen(dev_platform(ctx, d)) + 4;
    char *s = malloc(len);
    if (!s) { json_str(f, head); return; }
    snprintf(s, len, "%s%s (%s)", head, dev_name(ctx, d), dev_platform(ctx, d));
    json_str(f, s);
    free(s);
}

static void emit_json(FILE *f, const trace *t)
{
    const cls_context *ctx = t->ctx;
    const cls_report *r = &ctx->report;
    fputs("{\"displayTimeUnit\": \"ms\",\n\"traceEvents\": [\n", f);
    const char *sep = "";
    for (size_t l = 0; l < t->nlanes; l++) {
        unsigned d = t->lanes[l].device, q = t->lanes[l].queue;
        if (l == 0 || t->lanes[l - 1].device != d) {
            fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%llu,\"tid\":0,\"args\":{\"name\":",
                    sep, d + 1ull);
            json_device_label(f, ctx, d);
            fprintf(f, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%llu,\"tid\":0,"
                       "\"args\":{\"sort_index\":%u}}", d + 1ull, d);
            sep = ",\n";
        }
        fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%llu,\"tid\":%llu,"
                   "\"args\":{\"name\":\"queue %u\"}},\n"
                   "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%llu,\"tid\":%llu,"
                   "\"args\":{\"sort_index\":%u}}",
                sep, d + 1ull, q + 1ull, q, d + 1ull, q + 1ull, q);
    }
    for (size_t i = 0; i < t->nev; i++) {
        const cls_event *e = &t->ev[i];
        double ts = ev_start(e) * 1e6, dur = ev_end(e) * 1e6 - ts;
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
                e->device + 1ull, e->queue + 1ull, ts, dur > 0 ? dur : 0.0);
        json_str(f, e->kind == CLS_EV_KERNEL && e->name ? e->name : kind_label(e->kind));
        fprintf(f, ",\"cat\":\"%s\",\"args\":{\"slice\":%zu}}", kind_cat(e->kind), e->slice);
    }
    fprintf(f, "\n],\n\"otherData\": {\"library\":\"clscale %s\",\"wall_s\":%.9g,\"bytes\":%llu,"
               "\"slices\":%zu,\"slices_done\":%zu,\"phases\":%d,\"events\":%zu,\"devices\":[",
            CLS_VERSION_STRING, finite_or_0(r->wall), (unsigned long long)r->bytes, r->slices,
            r->slices_done, r->phases, t->nev);
    for (size_t i = 0; r->devices && i < r->ndevices; i++) {
        const cls_device_report *d = &r->devices[i];
        fprintf(f, "%s\n  {\"device\":%zu,\"name\":", i ? "," : "", d->device);
        json_str(f, dev_name(ctx, (unsigned)d->device));
        fprintf(f, ",\"slices\":%zu,\"bytes\":%llu,\"busy_s\":%.9g", d->slices,
                (unsigned long long)d->bytes, finite_or_0(d->busy));
        if (d->sat_out) { fputs(",\"sat_out\":", f); json_str(f, d->sat_out); }
        if (d->failed) { fputs(",\"failed\":", f); json_str(f, d->failed); }
        fputc('}', f);
    }
    fputs("]}}\n", f);
}

/* ---- SVG timeline ---- */

/* The smallest step of 1, 2 or 5 x 10^k ms that puts at most 10 ticks on
 * [0, span_ms]; as the steps grow by 2.5 at most, that is 5 ticks at least. */
static double tick_step(double span_ms)
{
    double base = pow(10, floor(log10(span_ms / 10)));
    static const double m[] = {1, 2, 5, 10, 20};
    for (int i = 0; i < 4; i++)
        if (span_ms / (m[i] * base) < 10 - 1e-9) return m[i] * base;
    return m[4] * base;
}

/* Milliseconds with three significant digits at most: "12.3". */
static void fmt_ms(char *buf, size_t len, double s)
{
    double ms = s * 1e3;
    snprintf(buf, len, "%.*f", ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 1 ? 2 : 3, ms);
}

static void fmt_bytes(char *buf, size_t len, uint64_t b)
{
    static const char *unit[] = {"B", "kB", "MB", "GB", "TB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1000 && u < 4) { v /= 1000; u++; }
    snprintf(buf, len, u ? "%.3g %s" : "%.0f %s", v, unit[u]);
}

static void svg_legend(FILE *f, int split)
{
    fprintf(f, "<g class=\"legend\" font-size=\"12\" fill=\"#333\">\n");
    double x = PLOT_X0;
    for (int k = 0; k < CLS_EV_KINDS; k++) {
        fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"41\" width=\"14\" height=\"12\" rx=\"2\" fill=\"%s\"/>"
                   "<text x=\"%.1f\" y=\"51.5\">%s</text>\n",
                kinds[k].cat, x, kinds[k].color, x + 19, kinds[k].label);
        x += 19 + 7.2 * (double)strlen(kinds[k].label) + 22;
    }
    if (split)
        fprintf(f, "<text x=\"%d\" y=\"51.5\" text-anchor=\"end\" fill=\"#777\" font-size=\"11\">"
                   "each lane: host copies above, device commands below</text>\n", PLOT_X1);
    fputs("</g>\n", f);
}

static void svg_lane(FILE *f, const trace *t, size_t l, double px_per_s)
{
    const lane *ln = &t->lanes[l];
    unsigned d = ln->device;
    double cy = ln->y + LANE_H / 2.0;
    fprintf(f, "<g class=\"lane\" data-device=\"%u\" data-queue=\"%u\">\n", d, ln->queue);
    /* The device's name beside its first lane, its platform beside the second. */
    if (ln->rank < 2) {
        fprintf(f, "<text x=\"14\" y=\"%.1f\" font-size=\"12\" %s><title>device %u: ", cy + 4,
                ln->rank ? "fill=\"#666\" font-style=\"italic\"" : "fill=\"#222\" font-weight=\"bold\"",
                dev_global(t->ctx, d));
        xml_str(f, dev_name(t->ctx, d), 0);
        fputs(" (", f);
        xml_str(f, dev_platform(t->ctx, d), 0);
        fputs(")</title>", f);
        xml_str(f, ln->rank ? dev_platform(t->ctx, d) : dev_name(t->ctx, d), NAME_CHARS);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" fill=\"#555\" text-anchor=\"end\">"
               "dev %u q %u</text>\n", PLOT_X0 - 10, cy + 4, dev_global(t->ctx, d), ln->queue);
    for (size_t j = t->first[l]; j < t->first[l + 1]; j++) {
        const cls_event *e = &t->ev[t->order[j]];
        double x = PLOT_X0 + ev_start(e) * px_per_s, w = (ev_end(e) - ev_start(e)) * px_per_s;
        double y = ln->y + 4, h = LANE_H - 8;
        if (ln->split) {
            y = is_host(e->kind) ? ln->y + 3 : ln->y + 11;
            h = is_host(e->kind) ? 7 : LANE_H - 14;
        }
        char a[32], b[32], dur[32];
        fmt_ms(a, sizeof a, ev_start(e));
        fmt_ms(b, sizeof b, ev_end(e));
        fmt_ms(dur, sizeof dur, ev_end(e) - ev_start(e));
        fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\">"
                   "<title>slice %zu, %s", kind_cat(e->kind), x, y, w < 0.5 ? 0.5 : w, h,
                kind_color(e->kind), e->slice, kind_label(e->kind));
        if (e->kind == CLS_EV_KERNEL && e->name) {
            fputc(' ', f);
            xml_str(f, e->name, 0);
        }
        fprintf(f, ": %s to %s ms (%s ms)</title></rect>\n", a, b, dur);
        /* Slice numbers on kernels that have room: which slice computes while
         * another one's copies run. */
        if (e->kind == CLS_EV_KERNEL && w >= 7.0 * (e->slice >= 100 ? 3 : e->slice >= 10 ? 2 : 1) + 6)
            fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"10\" fill=\"#fff\" text-anchor=\"middle\">"
                       "%zu</text>\n", x + w / 2, y + h / 2 + 3.5, e->slice);
    }
    fputs("</g>\n", f);
}

static void emit_svg(FILE *f, const trace *t)
{
    const cls_report *r = &t->ctx->report;
    double wall = finite_or_0(r->wall), end = wall;
    for (size_t i = 0; i < t->nev; i++) end = fmax(end, ev_end(&t->ev[i]));
    double axis_ms = fmax(end * 1e3, 1e-3), step = tick_step(axis_ms);
    int nticks = (int)floor(axis_ms / step + 1e-9);
    double px_per_s = (PLOT_X1 - PLOT_X0) / axis_ms * 1e3;
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    double bottom = t->lanes[t->nlanes - 1].y + LANE_H;
    int height = (int)bottom + 52, any_split = 0;
    size_t ndev = 0;
    for (size_t l = 0; l < t->nlanes; l++) {
        ndev += t->lanes[l].rank == 0;
        any_split |= t->lanes[l].split;
    }

    char wall_s[32], bytes_s[32];
    fmt_ms(wall_s, sizeof wall_s, wall);
    fmt_bytes(bytes_s, sizeof bytes_s, r->bytes);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
               "<title>clscale trace, %s ms wall</title>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
               "<text class=\"title\" x=\"14\" y=\"26\" font-size=\"17\" font-weight=\"bold\" fill=\"#222\">"
               "clscale trace<tspan dx=\"14\" font-weight=\"normal\" fill=\"#555\" font-size=\"14\">"
               "wall %s ms \xc2\xb7 %zu device%s \xc2\xb7 %zu queue%s \xc2\xb7 %zu slices \xc2\xb7 %s"
               "</tspan></text>\n",
            SVG_W, height, SVG_W, height, wall_s, wall_s, ndev, ndev == 1 ? "" : "s", t->nlanes,
            t->nlanes == 1 ? "" : "s", r->slices_done ? r->slices_done : r->slices, bytes_s);
    svg_legend(f, any_split);

    /* Backgrounds, then grid lines, then the lanes' events on top. */
    fputs("<g class=\"background\">\n", f);
    for (size_t l = 0; l < t->nlanes; l++) {
        const lane *ln = &t->lanes[l];
        if (ln->rank == 0)
            fprintf(f, "<line x1=\"8\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#9aa5b1\"/>\n", PLOT_X1,
                    ln->y - 0.5, ln->y - 0.5);
        fprintf(f, "<rect x=\"8\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", ln->y,
                PLOT_X1 - 8, LANE_H, ln->rank % 2 ? "#ffffff" : "#eef2f6");
    }
    for (int i = 0; i <= nticks; i++) {
        double x = PLOT_X0 + i * step / axis_ms * (PLOT_X1 - PLOT_X0);
        fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"%.1f\" stroke=\"#c9d1d9\" "
                   "stroke-width=\"0.8\"/>\n", x, x, TOP - 4, bottom + 4);
    }
    fputs("</g>\n", f);

    for (size_t l = 0; l < t->nlanes; l++) svg_lane(f, t, l, px_per_s);

    fprintf(f, "<g class=\"axis\" font-size=\"11\" fill=\"#444\">\n"
               "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
            PLOT_X0, PLOT_X1, bottom + 4, bottom + 4);
    for (int i = 0; i <= nticks; i++) {
        double x = PLOT_X0 + i * step / axis_ms * (PLOT_X1 - PLOT_X0);
        fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
                   "<text class=\"tick\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n",
                x, x, bottom + 4, bottom + 9, x, bottom + 22, decimals, i * step);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666\">"
               "time since the start of the call (ms)</text>\n</g>\n</svg>\n",
            (PLOT_X0 + PLOT_X1) / 2.0, bottom + 40);
}

cls_status cls_trace_write(cls_context *ctx, const char *path, cls_trace_format format)
{
    switch (format) {
    case CLS_TRACE_JSON: return write_trace(ctx, path, emit_json);
    case CLS_TRACE_SVG: return write_trace(ctx, path, emit_svg);
    }
    return cls_fail(ctx, CLS_E_ARG, "cls_trace_write: unknown format %d", (int)format);
}
