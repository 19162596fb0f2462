/* Traces: the Chrome trace JSON and the SVG timeline of synthetic events put
 * into a context's report by hand (no pipeline runs here). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <expat.h>
#include <jansson.h>

#include "common.h"
#include "internal.h"

/* ---- synthetic reports ---- */

/* Makes `ev` (malloc'ed, n events) the context's last call. */
static void set_report(cls_context *ctx, cls_event *ev, size_t n, double wall)
{
    free(ctx->events);
    free(ctx->rep_devs);
    ctx->events = ev;
    ctx->nevents = ctx->cap_events = n;
    ctx->rep_devs = calloc(ctx->ndevs, sizeof *ctx->rep_devs);
    assert_non_null(ctx->rep_devs);
    size_t slices = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind != CLS_EV_KERNEL) continue;
        slices++;
        if (ev[i].device < ctx->ndevs) ctx->rep_devs[ev[i].device].slices++;
    }
    for (size_t d = 0; d < ctx->ndevs; d++) {
        ctx->rep_devs[d].device = d;
        ctx->rep_devs[d].bytes = ctx->rep_devs[d].slices * 8000000ull;
    }
    ctx->report = (cls_report){.wall = wall, .bytes = slices * 8000000ull, .slices = slices,
                               .slices_done = slices, .phases = 1, .ndevices = ctx->ndevs,
                               .devices = ctx->rep_devs, .nevents = n, .events = ev};
}

static void clear_report(cls_context *ctx) { set_report(ctx, NULL, 0, 0); }

static const char *const kernel_names[] = {"fit_apply_mm", "apply"};

/* A small run: device 0 uses queues 0 and 2, device 1 (or 0 again when only
 * one device exists) queue 1 only; 3 lanes. Slice s takes 1 ms from s ms on. */
static size_t small_run(cls_context *ctx, int staging)
{
    unsigned d1 = ctx->ndevs > 1 ? 1 : 0;
    const struct { unsigned d, q; } use[] = {{0, 0}, {0, 2}, {d1, 1}};
    size_t nk = staging ? 5 : 3, n = 6 * nk;
    cls_event *ev = calloc(n, sizeof *ev);
    assert_non_null(ev);
    for (size_t s = 0; s < 6; s++)
        for (size_t k = 0; k < nk; k++) {
            cls_event *e = &ev[s * nk + k];
            e->device = use[s % 3].d;
            e->queue = use[s % 3].q;
            e->slice = s;
            e->kind = (cls_event_kind)(staging ? k : k + 1);
            e->name = e->kind == CLS_EV_KERNEL ? kernel_names[s % 2] : NULL;
            e->start = 1e-3 * (double)s + 2e-4 * (double)k;
            e->end = e->start + 1.5e-4;
        }
    set_report(ctx, ev, n, 7e-3);
    return 3;
}

/* A realistic run: 2 devices x 3 queues, 12 slices each; a slice is staged
 * in by one of 4 host threads, uploaded, computed and downloaded in its
 * queue's order, sharing the device's copy engines and compute units with
 * the other queues, then staged out. Device 1 computes more slowly. */
static void realistic_run(cls_context *ctx)
{
    enum { DEVS = 2, QUEUES = 3, SLICES = 12, HOST = 4 };
    cls_event *ev = calloc(DEVS * SLICES * 5, sizeof *ev);
    assert_non_null(ev);
    double host[HOST] = {0}, h2d[DEVS] = {0}, comp[DEVS] = {0}, d2h[DEVS] = {0};
    double qfree[DEVS][QUEUES] = {{0}}, slot[DEVS][QUEUES] = {{0}};
    rng r;
    rng_seed(&r, 42);
    size_t n = 0;
    for (size_t s = 0; s < SLICES; s++)
        for (unsigned d = 0; d < DEVS; d++) {
            unsigned q = (unsigned)(s % QUEUES);
            double speed = d ? 1.6 : 1.0, j = rng_range(&r, 0.85, 1.15);
            int h = 0;
            for (int i = 1; i < HOST; i++)
                if (host[i] < host[h]) h = i;
            double t0 = fmax(host[h], slot[d][q]), t1 = t0 + 0.35e-3 * j;
            host[h] = t1;
            double u0 = fmax(fmax(t1, qfree[d][q]), h2d[d]), u1 = u0 + 0.5e-3 * j;
            h2d[d] = slot[d][q] = u1;
            double k0 = fmax(u1, comp[d]), k1 = k0 + 0.9e-3 * speed * j;
            comp[d] = k1;
            double w0 = fmax(k1, d2h[d]), w1 = w0 + 0.45e-3 * j;
            d2h[d] = qfree[d][q] = w1;
            h = 0;
            for (int i = 1; i < HOST; i++)
                if (host[i] < host[h]) h = i;
            double o0 = fmax(w1, host[h]), o1 = o0 + 0.3e-3 * j;
            host[h] = o1;
            const double span[5][2] = {{t0, t1}, {u0, u1}, {k0, k1}, {w0, w1}, {o0, o1}};
            for (int k = 0; k < 5; k++)
                ev[n++] = (cls_event){.device = d % (unsigned)ctx->ndevs, .queue = q,
                                      .slice = s * DEVS + d, .kind = (cls_event_kind)k,
                                      .name = k == CLS_EV_KERNEL ? "fit_apply_mm" : NULL,
                                      .start = span[k][0], .end = span[k][1]};
        }
    double end = 0;
    for (size_t i = 0; i < n; i++) end = fmax(end, ev[i].end);
    set_report(ctx, ev, n, end + 0.15e-3);
}

/* ---- fixture and helpers ---- */

typedef struct fixture {
    cls_context *ctx;
    char dir[4096];
} fixture;

static int group_setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    fx->ctx = test_context(NULL, 0, 0);
    test_tmpdir(fx->dir, sizeof fx->dir, "trace");
    *state = fx;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *fx = *state;
    cls_context_destroy(fx->ctx);
    free(fx);
    return 0;
}

static const char *path_in(const fixture *fx, const char *name)
{
    static char buf[4200];
    snprintf(buf, sizeof buf, "%s/%s", fx->dir, name);
    return buf;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

/* Distinct (device, queue) pairs among the report's events. */
static size_t lanes_used(const cls_context *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < ctx->nevents; i++) {
        size_t j = 0;
        while (j < i && (ctx->events[j].device != ctx->events[i].device ||
                         ctx->events[j].queue != ctx->events[i].queue))
            j++;
        n += j == i;
    }
    return n;
}

static int lane_used(const cls_context *ctx, unsigned d, unsigned q)
{
    for (size_t i = 0; i < ctx->nevents; i++)
        if (ctx->events[i].device == d && ctx->events[i].queue == q) return 1;
    return 0;
}

static const char *const cats[CLS_EV_KINDS] = {"stage_in", "upload", "kernel", "download", "stage_out"};

/* ---- JSON ---- */

static json_t *load_json(const char *path)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) fail_msg("%s:%d: %s", path, err.line, err.text);
    return root;
}

static const char *meta_name(json_t *e)
{
    return json_string_value(json_object_get(json_object_get(e, "args"), "name"));
}

static void json_tracks_and_times_match_the_events(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    small_run(ctx, 1);
    const char *path = path_in(fx, "small.json");
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_JSON), CLS_OK);
    json_t *root = load_json(path);
    assert_string_equal(json_string_value(json_object_get(root, "displayTimeUnit")), "ms");
    json_t *evs = json_object_get(root, "traceEvents");
    assert_true(json_is_array(evs));

    size_t nthreads = 0, nx = 0, matched[64] = {0};
    assert_true(ctx->nevents <= 64);
    unsigned seen_tracks[16][2];
    size_t ntracks = 0;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        assert_non_null(ph);
        long long pid = json_integer_value(json_object_get(e, "pid"));
        long long tid = json_integer_value(json_object_get(e, "tid"));
        const char *name = json_string_value(json_object_get(e, "name"));
        assert_non_null(name);
        if (!strcmp(ph, "M") && !strcmp(name, "thread_name")) {
            assert_true(lane_used(ctx, (unsigned)(pid - 1), (unsigned)(tid - 1)));
            char want[32];
            snprintf(want, sizeof want, "queue %lld", tid - 1);
            assert_string_equal(meta_name(e), want);
            nthreads++;
        } else if (!strcmp(ph, "M") && !strcmp(name, "process_name")) {
            char want[32];
            snprintf(want, sizeof want, "device %lld: ", pid - 1);
            assert_memory_equal(meta_name(e), want, strlen(want));
        } else if (!strcmp(ph, "X")) {
            nx++;
            size_t t = 0;
            while (t < ntracks && (seen_tracks[t][0] != pid || seen_tracks[t][1] != tid)) t++;
            if (t == ntracks) {
                assert_true(ntracks < 16);
                seen_tracks[ntracks][0] = (unsigned)pid;
                seen_tracks[ntracks++][1] = (unsigned)tid;
            }
            double ts = json_number_value(json_object_get(e, "ts"));
            double dur = json_number_value(json_object_get(e, "dur"));
            assert_true(ts >= 0 && dur >= 0);
            const char *cat = json_string_value(json_object_get(e, "cat"));
            json_int_t slice = json_integer_value(json_object_get(json_object_get(e, "args"), "slice"));
            size_t k = 0;
            for (; k < ctx->nevents; k++) {
                const cls_event *x = &ctx->events[k];
                if (x->device + 1 == pid && x->queue + 1 == tid && (json_int_t)x->slice == slice &&
                    !strcmp(cats[x->kind], cat))
                    break;
            }
            assert_true(k < ctx->nevents);
            assert_int_equal(matched[k]++, 0);
            const cls_event *x = &ctx->events[k];
            assert_close(ts, x->start * 1e6, 1e-6);
            assert_close(dur, (x->end - x->start) * 1e6, 1e-6);
            static const char *const label[] = {"stage in", "upload", NULL, "download", "stage out"};
            assert_string_equal(name, x->kind == CLS_EV_KERNEL ? x->name : label[x->kind]);
        }
    }
    assert_int_equal(nthreads, lanes_used(ctx));
    assert_int_equal(ntracks, lanes_used(ctx));
    assert_int_equal(nx, ctx->nevents);

    json_t *other = json_object_get(root, "otherData");
    assert_close(json_number_value(json_object_get(other, "wall_s")), 7e-3, 1e-9);
    assert_int_equal(json_integer_value(json_object_get(other, "slices")), 6);
    assert_int_equal(json_integer_value(json_object_get(other, "bytes")), 6 * 8000000);
    json_decref(root);
}

static void json_escapes_device_names(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    const char *name = ctx->devs[0].info.name, *platform = ctx->devs[0].info.platform;
    ctx->devs[0].info.name = "say \"hi\" C:\\dev\nline\ttab\x01 caf\xc3\xa9";
    ctx->devs[0].info.platform = "</script> & 'x'";
    small_run(ctx, 0);
    const char *path = path_in(fx, "escape.json");
    cls_status st = cls_trace_write(ctx, path, CLS_TRACE_JSON);
    ctx->devs[0].info.name = name;
    ctx->devs[0].info.platform = platform;
    assert_int_equal(st, CLS_OK);
    json_t *root = load_json(path);
    size_t i, found = 0;
    json_t *e;
    json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
        if (json_integer_value(json_object_get(e, "pid")) != 1 ||
            strcmp(json_string_value(json_object_get(e, "name")), "process_name"))
            continue;
        assert_string_equal(meta_name(e), "device 0: say \"hi\" C:\\dev\nline\ttab\x01 caf\xc3\xa9 "
                                          "(</script> & 'x')");
        found++;
    }
    assert_int_equal(found, 1);
    json_decref(root);
}

static void invalid_utf8_in_a_name_still_makes_valid_files(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    const char *name = ctx->devs[0].info.name;
    ctx->devs[0].info.name = "bad \xff\xc3( \xed\xa0\x80 end";
    small_run(ctx, 1);
    cls_status sj = cls_trace_write(ctx, path_in(fx, "utf8.json"), CLS_TRACE_JSON);
    cls_status ss = cls_trace_write(ctx, path_in(fx, "utf8.svg"), CLS_TRACE_SVG);
    ctx->devs[0].info.name = name;
    assert_int_equal(sj, CLS_OK);
    assert_int_equal(ss, CLS_OK);
    json_decref(load_json(path_in(fx, "utf8.json")));
    char *svg = slurp(path_in(fx, "utf8.svg"), NULL);
    XML_Parser p = XML_ParserCreate(NULL);
    assert_int_equal(XML_Parse(p, svg, (int)strlen(svg), 1), XML_STATUS_OK);
    XML_ParserFree(p);
    free(svg);
}

/* ---- SVG ---- */

typedef struct svg_seen {
    size_t lanes, events, ticks, legend_rects, short_rects;
    unsigned lane_dq[64][2];
    char legend_fill[CLS_EV_KINDS][16];
    int in_legend, in_lane, in_text, in_title, in_tick;
    char tick_text[32];
    char text[8192];          /* text outside <title>, concatenated */
    double tick[16];
    int bad_fill;             /* an event's fill differs from its kind's legend */
} svg_seen;

static const char *attr(const XML_Char **a, const char *name)
{
    for (; a[0]; a += 2)
        if (!strcmp(a[0], name)) return a[1];
    return NULL;
}

static int cat_index(const char *c)
{
    for (int k = 0; c && k < CLS_EV_KINDS; k++)
        if (!strcmp(cats[k], c)) return k;
    return -1;
}

static void XMLCALL svg_start(void *user, const XML_Char *el, const XML_Char **a)
{
    svg_seen *s = user;
    const char *cls = attr(a, "class");
    if (!strcmp(el, "g") && cls && !strcmp(cls, "legend")) s->in_legend = 1;
    if (!strcmp(el, "g") && cls && !strcmp(cls, "lane")) {
        s->in_lane = 1;
        if (s->lanes < 64) {
            s->lane_dq[s->lanes][0] = (unsigned)atoi(attr(a, "data-device"));
            s->lane_dq[s->lanes][1] = (unsigned)atoi(attr(a, "data-queue"));
        }
        s->lanes++;
    }
    if (!strcmp(el, "rect") && cat_index(cls) >= 0) {
        int k = cat_index(cls);
        const char *fill = attr(a, "fill");
        assert_non_null(fill);
        if (s->in_legend) {
            snprintf(s->legend_fill[k], sizeof s->legend_fill[k], "%s", fill);
            s->legend_rects++;
        } else if (s->in_lane) {
            s->events++;
            if (strcmp(fill, s->legend_fill[k])) s->bad_fill = 1;
            double w = atof(attr(a, "width"));
            if (w < 0.5) s->bad_fill = 2;
            if (w < 1) s->short_rects++;
        }
    }
    if (!strcmp(el, "text")) {
        s->in_text = 1;
        if (cls && !strcmp(cls, "tick")) {
            s->in_tick = 1;
            s->tick_text[0] = '\0';
        }
    }
    if (!strcmp(el, "title")) s->in_title = 1;
}

static void XMLCALL svg_end(void *user, const XML_Char *el)
{
    svg_seen *s = user;
    if (!strcmp(el, "g")) s->in_legend = s->in_lane = 0;
    if (!strcmp(el, "text")) {
        if (s->in_tick && s->ticks < 16) s->tick[s->ticks] = strtod(s->tick_text, NULL);
        s->ticks += s->in_tick;
        s->in_text = s->in_tick = 0;
        strncat(s->text, "|", sizeof s->text - strlen(s->text) - 1);
    }
    if (!strcmp(el, "title")) s->in_title = 0;
}

static void XMLCALL svg_chars(void *user, const XML_Char *c, int len)
{
    svg_seen *s = user;
    if (s->in_tick && strlen(s->tick_text) + (size_t)len < sizeof s->tick_text)
        strncat(s->tick_text, c, (size_t)len);
    if (!s->in_text || s->in_title) return;
    size_t used = strlen(s->text);
    if (used + (size_t)len + 1 < sizeof s->text) {
        memcpy(s->text + used, c, (size_t)len);
        s->text[used + (size_t)len] = '\0';
    }
}

/* Parses the SVG at `path` with expat; fails the test when it is not
 * well-formed. */
static void parse_svg(const char *path, svg_seen *s)
{
    memset(s, 0, sizeof *s);
    size_t len;
    char *svg = slurp(path, &len);
    XML_Parser p = XML_ParserCreate("UTF-8");
    XML_SetUserData(p, s);
    XML_SetElementHandler(p, svg_start, svg_end);
    XML_SetCharacterDataHandler(p, svg_chars);
    if (XML_Parse(p, svg, (int)len, 1) != XML_STATUS_OK)
        fail_msg("%s:%lu: %s", path, (unsigned long)XML_GetCurrentLineNumber(p),
                 XML_ErrorString(XML_GetErrorCode(p)));
    XML_ParserFree(p);
    free(svg);
}

/* The tick labels are 0, s, 2s, ... with s = 1, 2 or 5 x 10^k, 5 to 10 of them. */
static void check_ticks(const svg_seen *s)
{
    assert_in_range(s->ticks, 5, 10);
    assert_true(s->tick[0] == 0);
    double step = s->tick[1] - s->tick[0];
    for (size_t i = 1; i < s->ticks; i++) assert_close(s->tick[i] - s->tick[i - 1], step, 1e-6);
    double mant = step / pow(10, floor(log10(step) + 1e-9));
    if (fabs(mant - 1) > 1e-6 && fabs(mant - 2) > 1e-6 && fabs(mant - 5) > 1e-6)
        fail_msg("tick step %g is not 1, 2 or 5 x 10^k", step);
}

static void svg_has_a_lane_per_queue_used_and_a_legend(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    small_run(ctx, 1);
    /* One event far shorter than a pixel. */
    ctx->events[3].end = ctx->events[3].start + 1e-9;
    const char *path = path_in(fx, "small.svg");
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_SVG), CLS_OK);
    svg_seen s;
    parse_svg(path, &s);
    assert_int_equal(s.lanes, lanes_used(ctx));
    for (size_t i = 0; i < s.lanes; i++) {
        assert_true(lane_used(ctx, s.lane_dq[i][0], s.lane_dq[i][1]));
        for (size_t j = 0; j < i; j++)
            assert_false(s.lane_dq[i][0] == s.lane_dq[j][0] && s.lane_dq[i][1] == s.lane_dq[j][1]);
    }
    assert_int_equal(s.legend_rects, CLS_EV_KINDS);
    for (int a = 0; a < CLS_EV_KINDS; a++) {
        assert_int_equal(s.legend_fill[a][0], '#');
        for (int b = 0; b < a; b++) assert_string_not_equal(s.legend_fill[a], s.legend_fill[b]);
    }
    assert_int_equal(s.events, ctx->nevents);
    assert_int_equal(s.bad_fill, 0);
    assert_true(s.short_rects >= 1);
    check_ticks(&s);
    assert_non_null(strstr(s.text, "wall 7.00 ms"));
    assert_non_null(strstr(s.text, "dev 0 q 2"));
}

static void svg_escapes_device_names(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    const char *name = ctx->devs[0].info.name;
    ctx->devs[0].info.name = "A<&>\"B' dev";
    small_run(ctx, 0);
    const char *path = path_in(fx, "escape.svg");
    cls_status st = cls_trace_write(ctx, path, CLS_TRACE_SVG);
    ctx->devs[0].info.name = name;
    assert_int_equal(st, CLS_OK);
    svg_seen s;
    parse_svg(path, &s);
    assert_non_null(strstr(s.text, "A<&>\"B' dev"));
    char *raw = slurp(path, NULL);
    assert_null(strstr(raw, "A<&>"));
    free(raw);
}

static void svg_ticks_are_round_at_any_scale(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    const double walls[] = {3e-6, 7.3e-5, 1e-3, 2.5e-3, 0.0131, 0.99, 4.2, 1234.5};
    for (size_t w = 0; w < sizeof walls / sizeof walls[0]; w++) {
        cls_event *ev = calloc(1, sizeof *ev);
        assert_non_null(ev);
        *ev = (cls_event){.kind = CLS_EV_KERNEL, .name = "k", .start = walls[w] / 4, .end = walls[w] / 2};
        set_report(ctx, ev, 1, walls[w]);
        const char *path = path_in(fx, "ticks.svg");
        assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_SVG), CLS_OK);
        svg_seen s;
        parse_svg(path, &s);
        check_ticks(&s);
    }
}

/* Writes the example a person looks at; also to $CLS_TRACE_EXAMPLE when set. */
static void svg_of_a_realistic_run(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    realistic_run(ctx);
    const char *paths[] = {path_in(fx, "example.svg"), getenv("CLS_TRACE_EXAMPLE")};
    char first[4200];
    snprintf(first, sizeof first, "%s", paths[0]);
    paths[0] = first;
    for (int i = 0; i < 2; i++) {
        if (!paths[i]) continue;
        assert_int_equal(cls_trace_write(ctx, paths[i], CLS_TRACE_SVG), CLS_OK);
        svg_seen s;
        parse_svg(paths[i], &s);
        assert_int_equal(s.lanes, lanes_used(ctx));
        assert_int_equal(s.events, ctx->nevents);
    }
    const char *json = getenv("CLS_TRACE_EXAMPLE_JSON");
    if (json) assert_int_equal(cls_trace_write(ctx, json, CLS_TRACE_JSON), CLS_OK);
}

/* ---- errors ---- */

static size_t entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void no_profiled_call_is_an_argument_error(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    clear_report(ctx);
    const char *path = path_in(fx, "none.json");
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_JSON), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(ctx), "CLS_PROFILE"));
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_SVG), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(ctx), "no profiled call"));
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
    assert_int_equal(cls_trace_write(NULL, path, CLS_TRACE_JSON), CLS_E_ARG);
    assert_int_equal(cls_trace_write(NULL, path, CLS_TRACE_SVG), CLS_E_ARG);
    small_run(ctx, 0);
    assert_int_equal(cls_trace_write(ctx, NULL, CLS_TRACE_JSON), CLS_E_ARG);
    assert_int_equal(cls_trace_write(ctx, NULL, CLS_TRACE_SVG), CLS_E_ARG);
    assert_int_equal(cls_trace_write(ctx, path, (cls_trace_format)7), CLS_E_ARG);
}

static void unwritable_path_is_an_io_error_and_leaves_nothing(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    small_run(ctx, 1);
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/io", fx->dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/missing/trace.json", dir);
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_JSON), CLS_E_IO);
    assert_non_null(strstr(cls_last_error(ctx), path));
    assert_non_null(strstr(cls_last_error(ctx), "No such file"));
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_SVG), CLS_E_IO);
    assert_int_equal(entries(dir), 0);
    /* A folder where the file should be: the temp file is written, the
     * rename fails, and the temp file is removed. */
    snprintf(path, sizeof path, "%s/taken", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_SVG), CLS_E_IO);
    assert_int_equal(entries(dir), 1);
    assert_int_equal(entries(path), 0);
}

static void rewriting_replaces_the_file(void **state)
{
    fixture *fx = *state;
    cls_context *ctx = fx->ctx;
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/rewrite", fx->dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/t.json", dir);
    realistic_run(ctx);
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_JSON), CLS_OK);
    size_t big;
    free(slurp(path, &big));
    small_run(ctx, 0);
    assert_int_equal(cls_trace_write(ctx, path, CLS_TRACE_JSON), CLS_OK);
    size_t small;
    free(slurp(path, &small));
    assert_true(small < big);
    json_decref(load_json(path));
    assert_int_equal(entries(dir), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_tracks_and_times_match_the_events),
        cmocka_unit_test(json_escapes_device_names),
        cmocka_unit_test(invalid_utf8_in_a_name_still_makes_valid_files),
        cmocka_unit_test(svg_has_a_lane_per_queue_used_and_a_legend),
        cmocka_unit_test(svg_escapes_device_names),
        cmocka_unit_test(svg_ticks_are_round_at_any_scale),
        cmocka_unit_test(svg_of_a_realistic_run),
        cmocka_unit_test(no_profiled_call_is_an_argument_error),
        cmocka_unit_test(unwritable_path_is_an_io_error_and_leaves_nothing),
        cmocka_unit_test(rewriting_replaces_the_file),
    };
    return TEST_RUN("trace", tests, group_setup, group_teardown);
}
