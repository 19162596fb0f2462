/* `clscale bench` run as a subprocess ($CLS_TOOL) at a tiny --size: exit
 * statuses, the JSON file (jansson) with every workload, limit and run, the
 * trace (one track per queue used) and the SVG timeline (expat, one lane per
 * queue used), --workload, a single device, a wrong result reported as a
 * failure ($CLSCALE_BENCH_CORRUPT), usage errors and unwritable outputs. The full run happens once, in the group setup;
 * the tests read what it left. */
#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"


#define SIZE "0.02"

static char dir[4096];

/* ---- running the tool --------------------------------------------------- */

typedef tool_result result;

static int tool_argv(result *r, const char *const *args)
{
    return test_run_tool(dir, r, args);
}

#define tool(r, ...) tool_argv((r), (const char *const[]){__VA_ARGS__, NULL})

static void expect_status(const result *r, int want)
{
    if (r->status != want)
        fail_msg("exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s", r->status, want, r->out, r->err);
}

static json_t *load_json(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j) fail_msg("%s: not JSON: %s at line %d", path, e.text, e.line);
    return j;
}

/* ---- the full run, shared ---------------------------------------------- */

static result full;      /* bench at SIZE with --json, --trace, --timeline */
static char json_path[4200], trace_path[4200], svg_path[4200];

static int group_setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "bench_cli");
    snprintf(json_path, sizeof json_path, "%s/bench.json", dir);
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", dir);
    snprintf(svg_path, sizeof svg_path, "%s/timeline.svg", dir);
    /* numpy from Debian's interpreter (tools/setup.sh installs python3-numpy) */
    if (tool(&full, "bench", "--size", SIZE, "--repeats", "2", "--json", json_path, "--trace", trace_path,
             "--timeline", svg_path, "--numpy", "/usr/bin/python3") != 0) {
        fprintf(stderr, "cannot run $CLS_TOOL\n");
        return -1;
    }
    return 0;
}

static const char *const workload_names[] = {"seed-a", "seed-b", "seed-b-large", "table"};

static void full_run_exits_0_with_a_block_per_workload(void **state)
{
    (void)state;
    expect_status(&full, 0);
    for (size_t i = 0; i < 4; i++) {
        char head[64];
        snprintf(head, sizeof head, "\n%s: ", workload_names[i]);
        if (!strstr(full.out, head)) fail_msg("no block for %s in:\n%s", workload_names[i], full.out);
    }
    const char *rows[] = {"\nhost single ", "\nhost threads ", "\ndevice 0 alone ", "\nlimits ",
                          "\nmachine ",
                          "every result correct", "total "};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strstr(full.out, rows[i])) fail_msg("no \"%s\" in:\n%s", rows[i], full.out);
    if (test_suite_is("pocl")) assert_non_null(strstr(full.out, "\nall together "));   /* two devices */
    assert_null(strstr(full.out, "FAILED"));
    /* stderr is not a terminal: no progress line */
    assert_null(strstr(full.err, "repeat"));
}

static double num(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) fail_msg("\"%s\" is not a number", key);
    return json_number_value(v);
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s) fail_msg("\"%s\" is not a string", key);
    return s;
}

static void json_has_the_machine_and_every_limit(void **state)
{
    (void)state;
    json_t *j = load_json(json_path);
    assert_string_equal(str(j, "clscale_version"), cls_version());
    assert_true(strlen(str(j, "date")) >= 10);
    json_t *m = json_object_get(j, "machine");
    assert_true(strlen(str(m, "cpu_model")) > 0);
    assert_true(num(m, "cores") >= 1);
    json_t *devs = json_object_get(m, "devices");
    assert_true(json_array_size(devs) == (test_suite_is("pocl") ? 2 : json_array_size(devs)));
    assert_true(json_array_size(devs) >= 1);
    for (size_t i = 0; i < json_array_size(devs); i++) {
        json_t *d = json_array_get(devs, i);
        assert_true(strlen(str(d, "name")) > 0);
        assert_true(strlen(str(d, "driver")) > 0);
        assert_true(strlen(str(d, "platform")) > 0);
        assert_true(json_is_boolean(json_object_get(d, "fp64")));
        assert_true(json_is_boolean(json_object_get(d, "staging")));
    }
    json_t *lim = json_object_get(j, "limits"), *host = json_object_get(lim, "host");
    assert_true(num(host, "copy_gbs") > 0);
    assert_true(num(host, "triad_gbs") > 0);
    assert_true(num(host, "array_bytes") >= 256.0 * 1024 * 1024);
    /* start-up of a fresh process, cold then warm kernel caches */
    json_t *su = json_object_get(lim, "startup");
    assert_non_null(su);
    json_t *cold = json_object_get(su, "cold"), *warm = json_object_get(su, "warm");
    assert_true(num(cold, "create_s") > 0 && num(cold, "first_call_s") > 0 && num(cold, "run_s") > 0);
    assert_true(num(warm, "create_s") > 0 && num(warm, "first_call_s") > 0 && num(warm, "run_s") > 0);
    assert_true(num(warm, "create_s") < num(cold, "create_s")); /* the caches were used */
    /* three values printed with 6 decimals: rounding alone may reach 1.5e-6 */
    assert_close(num(warm, "beyond_run_s"),
                 num(warm, "create_s") + num(warm, "first_call_s") - num(warm, "run_s"), 2e-6);
    /* the warm figure is the median of several fresh processes */
    assert_true(num(su, "warm_runs") >= 3);
    assert_true(num(su, "warm_beyond_run_min_s") <= num(warm, "beyond_run_s") + 1e-6);
    assert_true(num(warm, "beyond_run_s") <= num(su, "warm_beyond_run_max_s") + 1e-6);
    json_t *drv = json_object_get(su, "drivers_s");
    assert_true(num(drv, "min") > 0 && num(drv, "min") <= num(drv, "median") && num(drv, "median") <= num(drv, "max"));
    json_t *ld = json_object_get(lim, "devices");
    assert_int_equal(json_array_size(ld), json_array_size(devs));
    const char *keys[] = {"mem_copy_gbs", "h2d_pinned_gbs", "d2h_pinned_gbs", "h2d_pageable_gbs",
                          "d2h_pageable_gbs"};
    for (size_t i = 0; i < json_array_size(ld); i++) {
        json_t *d = json_array_get(ld, i);
        assert_true(num(d, "index") == num(json_array_get(devs, i), "index"));
        assert_true(json_is_true(json_object_get(d, "measured")));
        for (size_t k = 0; k < 5; k++)
            if (!(num(d, keys[k]) > 0)) fail_msg("device %zu: %s is not positive", i, keys[k]);
    }
    json_decref(j);
}

/* The figures of one clscale or host run that succeeded. */
static void check_ok_run(const json_t *run, uint64_t bytes, double single, double threads, int repeats)
{
    const char *name = str(run, "name");
    if (!json_is_true(json_object_get(run, "correct")))
        fail_msg("%s: correct is not true: %s", name, json_dumps(run, 0));
    assert_string_equal(str(run, "status"), "ok");
    assert_true(num(run, "max_error") <= num(run, "tolerance"));
    assert_true((uint64_t)num(run, "bytes") == bytes);
    json_t *t = json_object_get(run, "times");
    json_t *reps = json_object_get(t, "repeats");
    assert_int_equal(json_array_size(reps), repeats);
    double med = num(t, "median"), lo = num(t, "min"), hi = num(t, "max");
    assert_true(lo > 0 && lo <= med && med <= hi);
    for (size_t i = 0; i < json_array_size(reps); i++) {
        double v = json_number_value(json_array_get(reps, i));
        assert_true(v >= lo && v <= hi);
    }
    assert_true(num(t, "warmup") > 0);
    assert_close(num(run, "gbs"), (double)bytes / med / 1e9, 1e-6);
    json_t *lim = json_object_get(run, "limit");
    assert_true(strlen(str(lim, "name")) > 0);
    assert_close(num(run, "fraction_of_limit"), num(run, "gbs") / num(lim, "gbs"), 1e-6);
    json_t *sp = json_object_get(run, "speedup");
    assert_close(num(sp, "vs_single"), single / med, 1e-6);
    assert_close(num(sp, "vs_threads"), threads / med, 1e-6);
}

static void json_has_every_workload_and_run_with_figures(void **state)
{
    (void)state;
    json_t *j = load_json(json_path);
    json_t *devs = json_object_get(json_object_get(j, "machine"), "devices");
    size_t ndev = json_array_size(devs);
    json_t *ws = json_object_get(j, "workloads");
    assert_int_equal(json_array_size(ws), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *w = json_array_get(ws, i);
        assert_string_equal(str(w, "name"), workload_names[i]);
        uint64_t bytes = (uint64_t)num(w, "bytes");
        assert_true(bytes > 0);
        json_t *runs = json_object_get(w, "runs");
        assert_int_equal(json_array_size(runs), 2 + ndev + (ndev > 1));
        assert_string_equal(str(json_array_get(runs, 0), "name"), "host single");
        assert_string_equal(str(json_array_get(runs, 1), "name"), "host threads");
        double single = num(json_object_get(json_array_get(runs, 0), "times"), "median");
        double threads = num(json_object_get(json_array_get(runs, 1), "times"), "median");
        /* the host-copy limit is STREAM copy measured in the workload's rounds */
        json_t *hc = json_object_get(w, "host_copy_gbs");
        assert_true(num(hc, "min") > 0 && num(hc, "min") <= num(hc, "median") && num(hc, "median") <= num(hc, "max"));
        /* beside it, a copy of the row's own input from cold caches (seed-b's
         * input fits STREAM's 256 MiB arrays at any size this test runs) */
        json_t *oc = json_object_get(w, "own_size_copy_gbs");
        if (i == 1) assert_true(json_is_object(oc));
        if (!json_is_null(oc)) {
            json_t *shape = json_object_get(w, "shape");
            double in = json_number_value(json_array_get(shape, 0)) * json_number_value(json_array_get(shape, 1)) *
                        json_number_value(json_array_get(shape, 2)) * (strcmp(str(w, "dtype"), "float64") ? 4 : 8);
            assert_true(num(oc, "bytes") > in - 8 && num(oc, "bytes") <= in);
            assert_true(num(oc, "min") > 0 && num(oc, "min") <= num(oc, "median") &&
                        num(oc, "median") <= num(oc, "max"));
        }
        json_t *hl = json_object_get(json_array_get(runs, 1), "limit");
        assert_close(num(hl, "gbs"), num(hc, "median") * (i == 3 ? (double)bytes / (1.5 * (double)bytes) : 1.0), 1e-4);
        for (size_t k = 0; k < json_array_size(runs); k++) {
            json_t *run = json_array_get(runs, k);
            check_ok_run(run, bytes, single, threads, 2);
            const char *kind = str(run, "kind");
            json_t *rd = json_object_get(run, "devices");
            if (k >= 2 && k < 2 + ndev) {
                char want[64];
                snprintf(want, sizeof want, "device %lld alone",
                         (long long)num(json_array_get(devs, k - 2), "index"));
                assert_string_equal(str(run, "name"), want);
                assert_string_equal(kind, "device");
                assert_int_equal(json_array_size(rd), 1);
            }
            if (k == 2 + ndev) {
                assert_string_equal(str(run, "name"), "all together");
                assert_int_equal(json_array_size(rd), ndev);
            }
            if (k < 2) continue;
            /* clscale runs: the per-device report of the median call */
            json_t *rep = json_object_get(run, "report");
            assert_true(num(rep, "slices") >= 1);
            json_t *parts = json_object_get(rep, "devices");
            assert_int_equal(json_array_size(parts), json_array_size(rd));
            double moved = 0, slices = 0;
            for (size_t p = 0; p < json_array_size(parts); p++) {
                json_t *part = json_array_get(parts, p);
                assert_true(json_is_null(json_object_get(part, "failed")));
                moved += num(part, "bytes");
                slices += num(part, "slices");
                const char *ph[] = {"busy_s", "upload_s", "kernel_s", "download_s", "staging_s"};
                for (size_t q = 0; q < 5; q++) assert_true(num(part, ph[q]) >= 0);
            }
            assert_true(slices >= 1);
            assert_true(moved > 0);
            assert_true(num(json_object_get(rep, "summed_event_s"), "kernel") > 0);
        }
    }
    assert_true(json_is_true(json_object_get(j, "all_correct")));
    assert_true(num(j, "total_wall_s") > 0);
    json_decref(j);
}

/* ---- trace and timeline ------------------------------------------------- */

typedef struct track { long long pid, tid; } track;

/* The (pid, tid) tracks of the trace that name a thread, each checked to be
 * named once and to hold events, and every event to be on a named track. */
static size_t trace_tracks(track *out, size_t cap)
{
    json_t *t = load_json(trace_path);
    json_t *ev = json_object_get(t, "traceEvents");
    assert_true(json_is_array(ev));
    size_t n = 0, nx = 0;
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!ph || strcmp(ph, "M") || !name || strcmp(name, "thread_name")) continue;
        track k = {json_integer_value(json_object_get(e, "pid")), json_integer_value(json_object_get(e, "tid"))};
        for (size_t j = 0; j < n; j++)
            if (out[j].pid == k.pid && out[j].tid == k.tid) fail_msg("track %lld/%lld named twice", k.pid, k.tid);
        assert_true(n < cap);
        out[n++] = k;
    }
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (!ph || strcmp(ph, "X")) continue;
        nx++;
        long long pid = json_integer_value(json_object_get(e, "pid")), tid = json_integer_value(json_object_get(e, "tid"));
        size_t j = 0;
        while (j < n && !(out[j].pid == pid && out[j].tid == tid)) j++;
        if (j == n) fail_msg("event on track %lld/%lld that has no thread_name", pid, tid);
    }
    assert_true(nx > 0);
    for (size_t j = 0; j < n; j++) {
        int used = 0;
        for (size_t i = 0; i < json_array_size(ev) && !used; i++) {
            json_t *e = json_array_get(ev, i);
            const char *ph = json_string_value(json_object_get(e, "ph"));
            used = ph && !strcmp(ph, "X") && json_integer_value(json_object_get(e, "pid")) == out[j].pid &&
                   json_integer_value(json_object_get(e, "tid")) == out[j].tid;
        }
        if (!used) fail_msg("track %lld/%lld has no event", out[j].pid, out[j].tid);
    }
    json_decref(t);
    return n;
}

static void trace_has_one_track_per_queue_used(void **state)
{
    (void)state;
    track tr[256];
    size_t n = trace_tracks(tr, 256);
    /* the bench's JSON says which call was traced and which queues it used */
    json_t *j = load_json(json_path);
    json_t *devs = json_object_get(json_object_get(j, "machine"), "devices");
    json_t *t = json_object_get(j, "trace");
    assert_string_equal(str(t, "workload"), "table");
    assert_string_equal(str(t, "run"), json_array_size(devs) > 1 ? "all together" : "device 0 alone");
    assert_int_equal((int)num(t, "repeat"), 2);
    json_t *qs = json_object_get(t, "queues");
    assert_int_equal(json_array_size(qs), n);
    for (size_t i = 0; i < n; i++) {
        /* the trace numbers devices among the selected ones, from 1 */
        assert_true(tr[i].pid >= 1 && (size_t)tr[i].pid <= json_array_size(devs));
        long long dev = (long long)num(json_array_get(devs, (size_t)tr[i].pid - 1), "index");
        int found = 0;
        for (size_t k = 0; k < json_array_size(qs); k++) {
            json_t *q = json_array_get(qs, k);
            found |= (long long)num(q, "device") == dev && (long long)num(q, "queue") == tr[i].tid - 1;
        }
        if (!found) fail_msg("track %lld/%lld is not a queue the traced call used", tr[i].pid, tr[i].tid);
    }
    json_decref(j);
}

typedef struct svg_state { size_t lanes; long long dq[256][2]; } svg_state;

static void XMLCALL svg_start(void *user, const XML_Char *el, const XML_Char **attr)
{
    svg_state *s = user;
    if (strcmp(el, "g")) return;
    const char *cls = NULL, *dev = NULL, *q = NULL;
    for (size_t i = 0; attr[i]; i += 2) {
        if (!strcmp(attr[i], "class")) cls = attr[i + 1];
        if (!strcmp(attr[i], "data-device")) dev = attr[i + 1];
        if (!strcmp(attr[i], "data-queue")) q = attr[i + 1];
    }
    if (!cls || strcmp(cls, "lane")) return;
    if (s->lanes < 256) {
        s->dq[s->lanes][0] = dev ? atoll(dev) : -1;
        s->dq[s->lanes][1] = q ? atoll(q) : -1;
    }
    s->lanes++;
}

static void XMLCALL svg_end(void *user, const XML_Char *el)
{
    (void)user;
    (void)el;
}

static void timeline_is_xml_with_one_lane_per_queue_used(void **state)
{
    (void)state;
    FILE *f = fopen(svg_path, "rb");
    assert_non_null(f);
    XML_Parser p = XML_ParserCreate(NULL);
    assert_non_null(p);
    svg_state s = {0};
    XML_SetUserData(p, &s);
    XML_SetElementHandler(p, svg_start, svg_end);
    char buf[65536];
    int done = 0;
    while (!done) {
        size_t n = fread(buf, 1, sizeof buf, f);
        done = n < sizeof buf;
        if (XML_Parse(p, buf, (int)n, done) == XML_STATUS_ERROR) {
            fclose(f);
            fail_msg("%s: line %lu: %s", svg_path, (unsigned long)XML_GetCurrentLineNumber(p),
                     XML_ErrorString(XML_GetErrorCode(p)));
        }
    }
    fclose(f);
    XML_ParserFree(p);
    track tr[256];
    size_t n = trace_tracks(tr, 256);
    assert_int_equal(s.lanes, n);
    for (size_t i = 0; i < s.lanes && i < 256; i++) {
        int found = 0;
        for (size_t k = 0; k < n; k++) found |= tr[k].pid - 1 == s.dq[i][0] && tr[k].tid - 1 == s.dq[i][1];
        if (!found) fail_msg("lane %lld/%lld is not a track of the trace", s.dq[i][0], s.dq[i][1]);
    }
}

/* ---- options ------------------------------------------------------------ */

static void workload_option_runs_only_that_one(void **state)
{
    (void)state;
    static result r;
    char path[4200];
    snprintf(path, sizeof path, "%s/seed-b.json", dir);
    assert_int_equal(tool(&r, "bench", "--workload", "seed-b", "--size", SIZE, "--repeats", "1", "--json", path), 0);
    expect_status(&r, 0);
    assert_non_null(strstr(r.out, "\nseed-b: "));
    assert_null(strstr(r.out, "\nseed-a: "));
    assert_null(strstr(r.out, "\ntable: "));
    json_t *j = load_json(path);
    json_t *ws = json_object_get(j, "workloads");
    assert_int_equal(json_array_size(ws), 1);
    assert_string_equal(str(json_array_get(ws, 0), "name"), "seed-b");
    json_decref(j);
}

/* The shape sweep, small: every operation at every length the size
 * reaches, each as a multiple of the min-max call of its shape (1 for
 * min-max itself), in the table and the JSON. */
static void shapes_sweep_has_every_operation_at_every_length(void **state)
{
    (void)state;
    static result r;
    char path[4200];
    snprintf(path, sizeof path, "%s/shapes.json", dir);
    assert_int_equal(tool(&r, "bench", "--workload", "shapes", "--size", "0.0005", "--repeats", "1", "--json", path), 0);
    expect_status(&r, 0);
    assert_non_null(strstr(r.out, "5000 x 1"));
    assert_null(strstr(r.out, "seed-a: "));
    json_t *j = load_json(path);
    json_t *rows = json_object_get(j, "rows");
    /* 8000 values: lengths 1, 60, 64, 65, 300, 1000, 5000; 8 operations each */
    assert_int_equal(json_array_size(rows), 7 * 8);
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *row = json_array_get(rows, i);
        double x = json_number_value(json_object_get(row, "x_minmax"));
        assert_true(json_number_value(json_object_get(row, "median_s")) > 0);
        if (i % 8 == 0) {
            assert_string_equal(str(row, "op"), "minmax");
            assert_true(x == 1.0);
        } else {
            assert_true(x > 0);
        }
    }
    json_decref(j);
}

/* The light-curve workload, small: every call as a multiple of the
 * min-max call (1 for min-max itself), the two trends beside their plain
 * C peers, in the table and the JSON; no other workload runs. */
static void lightcurves_workload_has_every_call_and_its_peer(void **state)
{
    (void)state;
    static result r;
    char path[4200];
    snprintf(path, sizeof path, "%s/lightcurves.json", dir);
    assert_int_equal(tool(&r, "bench", "--workload", "lightcurves", "--size", "0.005", "--repeats", "1", "--json",
                          path),
                     0);
    expect_status(&r, 0);
    assert_non_null(strstr(r.out, "lightcurves: 10 x 4000 x 2 float64"));
    assert_null(strstr(r.out, "seed-a: "));
    json_t *j = load_json(path);
    assert_string_equal(str(j, "workload"), "lightcurves");
    json_t *rows = json_object_get(j, "rows");
    static const char *const ops[] = {"minmax", "savgol", "mean", "bin-smooth", "bin-median", "host-savgol",
                                      "host-mean"};
    assert_int_equal(json_array_size(rows), 7);
    for (size_t i = 0; i < 7; i++) {
        json_t *row = json_array_get(rows, i);
        assert_string_equal(str(row, "op"), ops[i]);
        double x = json_number_value(json_object_get(row, "x_minmax"));
        assert_true(json_number_value(json_object_get(row, "median_s")) > 0);
        assert_true(i == 0 ? x == 1.0 : x > 0);
        assert_true((json_object_get(row, "speedup") != NULL) == (i == 1 || i == 2));
    }
    assert_string_equal(str(json_array_get(rows, 1), "peer"), "host-savgol");
    json_decref(j);
}

static void one_device_has_no_together_run_and_traces_itself(void **state)
{
    (void)state;
    static result r;
    char path[4200], tpath[4200];
    snprintf(path, sizeof path, "%s/one.json", dir);
    snprintf(tpath, sizeof tpath, "%s/one.trace.json", dir);
    assert_int_equal(tool(&r, "bench", "--devices", "0", "--workload", "table,seed-b", "--size", SIZE,
                          "--repeats", "1", "--json", path, "--trace", tpath),
                     0);
    expect_status(&r, 0);
    assert_null(strstr(r.out, "\nall together "));
    json_t *j = load_json(path);
    json_t *ws = json_object_get(j, "workloads");
    assert_int_equal(json_array_size(ws), 2);   /* run in the canonical order */
    assert_string_equal(str(json_array_get(ws, 0), "name"), "seed-b");
    assert_int_equal(json_array_size(json_object_get(json_array_get(ws, 0), "runs")), 3);
    json_t *t = json_object_get(j, "trace");
    assert_string_equal(str(t, "workload"), "table");
    assert_string_equal(str(t, "run"), "device 0 alone");
    json_decref(j);
    json_decref(load_json(tpath));
}

static void wrong_result_is_a_failure_not_a_time(void **state)
{
    (void)state;
    static result r;
    char path[4200];
    snprintf(path, sizeof path, "%s/wrong.json", dir);
    setenv("CLSCALE_BENCH_CORRUPT", "0", 1);
    int e = tool(&r, "bench", "--workload", "seed-b", "--size", SIZE, "--repeats", "1", "--json", path);
    unsetenv("CLSCALE_BENCH_CORRUPT");
    assert_int_equal(e, 0);
    expect_status(&r, 1);
    assert_non_null(strstr(r.out, "FAILED"));
    json_t *j = load_json(path);
    json_t *runs = json_object_get(json_array_get(json_object_get(j, "workloads"), 0), "runs");
    int seen = 0;
    for (size_t k = 0; k < json_array_size(runs); k++) {
        json_t *run = json_array_get(runs, k);
        if (strcmp(str(run, "name"), "device 0 alone")) {
            assert_true(json_is_true(json_object_get(run, "correct")));
            continue;
        }
        seen = 1;
        assert_true(json_is_false(json_object_get(run, "correct")));
        assert_string_equal(str(run, "status"), "failed");
        assert_true(json_is_null(json_object_get(run, "times")));
        assert_true(json_is_null(json_object_get(run, "gbs")));
        assert_non_null(strstr(str(run, "error"), "wrong result"));
    }
    assert_true(seen);
    assert_true(json_is_false(json_object_get(j, "all_correct")));
    json_decref(j);
}

static void bad_options_exit_2_before_any_work(void **state)
{
    (void)state;
    static const char *const bad[][4] = {
        {"--nosuch"},           {"--size"},          {"--size", "0"},          {"--size", "-1"},
        {"--size", "abc"},      {"--size", "nan"},   {"--repeats", "0"},       {"--repeats", "1.5"},
        {"--repeats", "101"},   {"--workload", "nosuch"}, {"--workload", "seed-a,"}, {"--json"},
        {"extra"},              {"--workload", ""},
    };
    static result r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[6] = {"bench"};
        size_t n = 1;
        for (size_t k = 0; k < 4 && bad[i][k]; k++) args[n++] = bad[i][k];
        args[n] = NULL;
        assert_int_equal(tool_argv(&r, args), 0);
        if (r.status != 2) fail_msg("bench %s %s: exit %d, expected 2\n%s", bad[i][0], bad[i][1] ? bad[i][1] : "",
                                    r.status, r.err);
        assert_string_equal(r.out, "");
        assert_non_null(strstr(r.err, "clscale: bench: "));
    }
}

static void unknown_device_exits_2(void **state)
{
    (void)state;
    static result r;
    assert_int_equal(tool(&r, "bench", "--devices", "nosuch", "--size", SIZE), 0);
    expect_status(&r, 2); /* a selector that matches nothing is a usage error */
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "CLS_E_NO_DEVICE"));
}

static void unwritable_output_fails_before_the_run(void **state)
{
    (void)state;
    static result r;
    char path[4200];
    snprintf(path, sizeof path, "%s/no/such/folder/t.svg", dir);
    assert_int_equal(tool(&r, "bench", "--size", SIZE, "--timeline", path), 0);
    expect_status(&r, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "--timeline"));
}

static void seed_a_has_a_resident_row_per_device(void **state)
{
    (void)state;
    expect_status(&full, 0);
    size_t n = test_suite_is("pocl") ? 2 : 1;
    for (size_t i = 0; i < n; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n  resident, device %zu (cl_mem", i);
        const char *at = strstr(full.out, row);
        if (!at) fail_msg("no \"%s\" in:\n%s", row + 1, full.out);
        double call = 0, kern = 0, ratio = 0;
        const char *c = strstr(at, "call "), *k = strstr(at, "kernel alone "), *x = strstr(at, ": ");
        assert_non_null(c);
        assert_non_null(k);
        x = strstr(k, ": ");
        assert_non_null(x);
        assert_int_equal(sscanf(c, "call %lf", &call), 1);
        assert_int_equal(sscanf(k, "kernel alone %lf", &kern), 1);
        assert_int_equal(sscanf(x, ": %lfx", &ratio), 1);
        /* the kernel is part of the call: a profile that lost it reads 0 */
        assert_true(call > 0 && kern > 0 && ratio > 0);
    }
}

static void json_has_the_resident_rows(void **state)
{
    (void)state;
    expect_status(&full, 0);
    json_t *j = load_json(json_path);
    json_t *seed_a = json_array_get(json_object_get(j, "workloads"), 0);
    assert_string_equal(str(seed_a, "name"), "seed-a");
    json_t *rows = json_object_get(seed_a, "resident");
    assert_true(json_is_array(rows));
    assert_int_equal(json_array_size(rows), test_suite_is("pocl") ? 2 : 1);
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *row = json_array_get(rows, i);
        assert_string_equal(str(row, "status"), "ok");
        assert_true(num(row, "call_s") > 0 && num(row, "kernel_s") > 0 && num(row, "call_over_kernel") > 0);
        assert_true(json_is_null(json_object_get(row, "why")));
    }
    /* only seed-a has them */
    assert_null(json_object_get(json_array_get(json_object_get(j, "workloads"), 1), "resident"));
    json_decref(j);
}

static void model_compares_every_workload_pageable_and_pinned(void **state)
{
    (void)state;
    static result r;
    const char *layer = getenv("CLS_BUS_LAYER");
    assert_non_null(layer);
    assert_int_equal(tool(&r, "bench", "--model", layer, "--size", SIZE, "--repeats", "1"), 0);
    expect_status(&r, 0);
    assert_non_null(strstr(r.out, "modelled bus"));
    for (size_t i = 0; i < 4; i++)
        for (int pinned = 0; pinned < 2; pinned++) {
            char row[64];
            snprintf(row, sizeof row, "\n%-14s %-9s ", workload_names[i], pinned ? "pinned" : "pageable");
            if (!strstr(r.out, row)) fail_msg("no \"%s\" row in:\n%s", row + 1, r.out);
        }
    assert_null(strstr(r.out, "FAILED"));
}

static void model_without_the_layer_fails_naming_it(void **state)
{
    (void)state;
    static result r;
    char path[4200];
    snprintf(path, sizeof path, "%s/no-such-layer.so", dir);
    assert_int_equal(tool(&r, "bench", "--model", path, "--size", SIZE), 0);
    expect_status(&r, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "no-such-layer.so"));
}

/* The first thing printed after the machine is one line per workload, the
 * run a plain call makes (every device together, or the one device) against
 * the host references; the limits, the workloads' rows and how the figures
 * are taken come after it, in that order. */
static void summary_comes_first_with_the_users_run_per_workload(void **state)
{
    (void)state;
    expect_status(&full, 0);
    const char *summary = strstr(full.out, "\nclscale, every selected device, against plain C");
    const char *limits = strstr(full.out, "\nlimits ");
    const char *first_block = strstr(full.out, "\nseed-a: ");
    const char *how = strstr(full.out, "\nhow ");
    if (!summary || !limits || !first_block || !how) fail_msg("a part is missing in:\n%s", full.out);
    if (!(summary < limits && limits < first_block && first_block < how))
        fail_msg("not summary, limits, workloads, how in:\n%s", full.out);
    const char *machine = strstr(full.out, "\nmachine ");
    assert_true(machine && machine < summary);

    json_t *j = load_json(json_path);
    json_t *ws = json_object_get(j, "workloads");
    const char *want = test_suite_is("pocl") ? "all together" : "device 0 alone";
    for (size_t i = 0; i < 4; i++) {
        char head[32];
        snprintf(head, sizeof head, "\n%-14s ", workload_names[i]);
        const char *line = strstr(summary, head);
        if (!line || line > limits) fail_msg("no summary line for %s in:\n%s", workload_names[i], full.out);
        double ms = 0, gbs = 0, vs1 = 0, vs2 = 0, vsn = 0;
        char unit[8] = "", what[64] = "";
        json_t *np = json_object_get(json_array_get(ws, i), "numpy");
        int has_numpy = json_is_string(json_object_get(np, "version"));
        /* "seed-a   12.9 ms   7.35   40% host copy   3.35x   1.11x   min-max ..." */
        assert_int_equal(sscanf(line + strlen(head), "%lf %7s %lf", &ms, unit, &gbs), 3);
        assert_string_equal(unit, "ms");
        const char *x1 = strstr(line, "x ");
        assert_non_null(x1);
        while (x1 > line && x1[-1] != ' ') x1--;
        if (has_numpy) assert_int_equal(sscanf(x1, "%lfx %lfx %lfx %63s", &vsn, &vs1, &vs2, what), 4);
        else assert_int_equal(sscanf(x1, "%lfx %lfx %63s", &vs1, &vs2, what), 3);
        /* the figures are the JSON's for the run a plain call makes */
        json_t *runs = json_object_get(json_array_get(ws, i), "runs"), *run = NULL;
        for (size_t k = 0; k < json_array_size(runs) && !run; k++)
            if (!strcmp(str(json_array_get(runs, k), "name"), want)) run = json_array_get(runs, k);
        if (!run) fail_msg("%s: no \"%s\" run in the JSON", workload_names[i], want);
        json_t *sp = json_object_get(run, "speedup");
        double med_ms = 1e3 * num(json_object_get(run, "times"), "median");
        assert_close(ms, med_ms, 0.006 * med_ms + 0.0006);
        assert_close(vs1, num(sp, "vs_single"), 0.006 * num(sp, "vs_single") + 0.006);
        assert_close(vs2, num(sp, "vs_threads"), 0.006 * num(sp, "vs_threads") + 0.006);
        /* vs numpy: numpy's median over the run's, from the same JSON */
        if (has_numpy) {
            double want_x = 1e3 * num(np, "median_s") / med_ms;
            assert_close(vsn, want_x, 0.006 * want_x + 0.006);
        }
    }
    json_decref(j);
}

/* The numpy column: every workload's JSON says numpy's median and version,
 * or why there is none; with Debian's interpreter (which has numpy here)
 * there is one. An interpreter that is not there leaves the column empty
 * and the run successful. */
static void numpy_column_from_the_named_interpreter(void **state)
{
    (void)state;
    expect_status(&full, 0);
    if (system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0)
        test_skip("/usr/bin/python3 has no numpy (tools/setup.sh installs python3-numpy)");
    json_t *j = load_json(json_path);
    json_t *ws = json_object_get(j, "workloads");
    for (size_t i = 0; i < json_array_size(ws); i++) {
        json_t *np = json_object_get(json_array_get(ws, i), "numpy");
        assert_non_null(np);
        assert_true(json_is_string(json_object_get(np, "version")));
        assert_true(num(np, "median_s") > 0);
        assert_true(json_is_null(json_object_get(np, "why_not")));
    }
    json_decref(j);
    assert_non_null(strstr(full.out, "vs numpy: numpy "));

    static result r;
    char path[4200];
    snprintf(path, sizeof path, "%s/no-numpy.json", dir);
    assert_int_equal(tool(&r, "bench", "--workload", "seed-b", "--size", SIZE, "--repeats", "1", "--json", path,
                          "--numpy", "/nonexistent/python3"),
                     0);
    expect_status(&r, 0);
    assert_non_null(strstr(r.out, "vs numpy: -, /nonexistent/python3: "));
    j = load_json(path);
    json_t *np = json_object_get(json_array_get(json_object_get(j, "workloads"), 0), "numpy");
    assert_true(json_is_null(json_object_get(np, "median_s")));
    assert_non_null(strstr(str(np, "why_not"), "/nonexistent/python3"));
    json_decref(j);
}

static void help_exits_0_and_says_what_is_traced(void **state)
{
    (void)state;
    static result r;
    assert_int_equal(tool(&r, "bench", "--help"), 0);
    expect_status(&r, 0);
    assert_non_null(strstr(r.out, "--trace"));
    assert_non_null(strstr(r.out, "last timed call"));
    assert_non_null(strstr(r.out, "--repeats"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_run_exits_0_with_a_block_per_workload),
        cmocka_unit_test(summary_comes_first_with_the_users_run_per_workload),
        cmocka_unit_test(numpy_column_from_the_named_interpreter),
        cmocka_unit_test(json_has_the_machine_and_every_limit),
        cmocka_unit_test(json_has_every_workload_and_run_with_figures),
        cmocka_unit_test(trace_has_one_track_per_queue_used),
        cmocka_unit_test(timeline_is_xml_with_one_lane_per_queue_used),
        cmocka_unit_test(workload_option_runs_only_that_one),
        cmocka_unit_test(shapes_sweep_has_every_operation_at_every_length),
        cmocka_unit_test(lightcurves_workload_has_every_call_and_its_peer),
        cmocka_unit_test(one_device_has_no_together_run_and_traces_itself),
        cmocka_unit_test(wrong_result_is_a_failure_not_a_time),
        cmocka_unit_test(bad_options_exit_2_before_any_work),
        cmocka_unit_test(unknown_device_exits_2),
        cmocka_unit_test(unwritable_output_fails_before_the_run),
        cmocka_unit_test(help_exits_0_and_says_what_is_traced),
        cmocka_unit_test(seed_a_has_a_resident_row_per_device),
        cmocka_unit_test(json_has_the_resident_rows),
        cmocka_unit_test(model_compares_every_workload_pageable_and_pinned),
        cmocka_unit_test(model_without_the_layer_fails_naming_it),
    };
    return TEST_RUN("bench_cli", tests, group_setup, NULL);
}
