/* `clscale bench`'s options: the help text, parsing and checks of each
 * value, and which devices run alone (bench_options.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_options.h"
#include "bench_run.h"
#include "cli.h"
#include "io/out_target.h"

static const char help[] =
    "usage: clscale bench [--workload NAME] [--size X] [--devices SEL] [--repeats N] [--alone LIST]\n"
    "                     [--memory both|pageable] [--json F] [--trace F.json] [--timeline F.svg]\n"
    "                     [--model LAYER] [--numpy PYTHON|none] [--rows N] [--quiet]\n"
    "\n"
    "Times clscale on seeded workloads against plain C on the host, on each selected\n"
    "device alone and on all of them together, next to the limits measured in the\n"
    "same run: host memory bandwidth (STREAM copy and triad, all cores) and each\n"
    "device's memory and host<->device bandwidth, pinned and pageable (as clpeak).\n"
    "\n"
    "  --workload NAME   seed-a, seed-b, seed-b-large, table; repeatable or a comma\n"
    "                    list (default: all four, run in that order); or shapes: robust\n"
    "                    scaling, quantiles, median imputation and sigma clipping at group\n"
    "                    lengths 1 to 10^7, each as a multiple of one min-max call (run\n"
    "                    alone; python -m clscale.bench --workload shapes adds the peers); or\n"
    "                    lightcurves: Savitzky-Golay and moving-average trends (window 101)\n"
    "                    and bins of 10 rows of 2000 x 4000 x 2 float64 along the rows, as\n"
    "                    multiples of one min-max call, beside plain C on one core\n"
    "  --size X          scale each workload's first dimension by X (default 1);\n"
    "                    the limits are measured at full size whatever X is\n"
    "  --devices SEL     the devices to benchmark (default: all; see clscale --help)\n"
    "  --repeats N       timed calls after one warm-up, 1 to 100 (default 5)\n"
    "  --alone LIST      the devices (indices, or none) that also run alone (default: all);\n"
    "                    e.g. leave out a simulator that would take hours alone\n"
    "  --memory M        both (default): a staging device (a discrete GPU) alone and all\n"
    "                    devices together also run on pinned memory from cls_host_alloc();\n"
    "                    pageable: only on malloc'ed memory\n"
    "  --json F          every figure, the machine and the limits, as JSON\n"
    "  --trace F.json    Chrome trace (opens in Perfetto) of the last timed call of\n"
    "                    the all-devices run of the last workload run, or of the\n"
    "                    device's run when only one device is selected (its pinned\n"
    "                    run when it has one)\n"
    "  --timeline F.svg  the same call as an SVG timeline, one lane per queue\n"
    "  --file PATH       only the files row: a .npy file scaled file to file (min-max per\n"
    "                    matrix) by cp + sync, clscale and a numpy memmap loop, alternating,\n"
    "                    --repeats rounds (default 1), each from a cold input; the output\n"
    "                    goes beside PATH, so its disk needs room for one more copy\n"
    "  --model LAYER     instead of the table: the scheduler's comparison on a modelled\n"
    "                    discrete GPU. LAYER is the tests' bus layer (build/tests/libclsbus.so);\n"
    "                    PoCL's pthread device goes behind the modelled bus ($CLSBUS sets the\n"
    "                    model) beside a one-thread basic CPU device; each workload runs on\n"
    "                    each alone and both together, pageable and pinned\n"
    "  --numpy PYTHON    the interpreter whose numpy times each workload's numpy code after\n"
    "                    its rounds (default python3; none: no numpy column)\n"
    "  --rows N          shapes: only the groups of N rows (one of the sweep's lengths)\n"
    "  --quiet           no progress line (one is drawn on a terminal)\n"
    "  --help            this text\n"
    "\n"
    "The table opens with one line per workload: the call as a program makes it (every\n"
    "selected device together), its time, GB/s, share of the limit, and how many times\n"
    "faster it is than plain C on one core and on all cores and than numpy, measured in\n"
    "the same run.\n"
    "The limits, each workload's rows (each device alone, pinned memory) and how the\n"
    "figures are taken follow.\n\n"
    "Times are wall clock around each call (what the caller waits for), out of\n"
    "place on pageable caller memory (malloc): the median of N calls after a\n"
    "warm-up, with their range. The rows' calls alternate (one call of each row\n"
    "per round), so that a drift in the machine's speed falls on all rows alike,\n"
    "and each call starts with its data out of the caches, as STREAM does.\n"
    "GB/s counts every input byte read once and every output byte written once.\n"
    "With seed-a, a resident row follows for each device that runs alone: the same call\n"
    "on cl_mem buffers already on that device (cls_fit_transform), against the\n"
    "fused kernel's own time there (profiled), medians of alternating calls.\n"
    "Every result is checked against the single-threaded reference before its\n"
    "time counts. Exit status: 0 all correct, 1 a run failed or was wrong, 2 usage\n"
    "error.\n";



/* Whether device `index` gets a run of its own (--alone). */
int bench_wants_alone(const options *o, size_t index)
{
    if (!o->alone) return 1;
    const char *p = o->alone;
    while (*p) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end != p && v == index) return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int select_workloads(options *o, const char *list)
{
    bench_workload all[BENCH_MAX_WORKLOADS];
    size_t n = bench_workloads(1.0, all, BENCH_MAX_WORKLOADS);
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 11 && !strncmp(p, "lightcurves", 11)) {
            /* light curves' trends and bins (bench_lightcurves.c), run on their own */
            o->lightcurves = 1;
            if (!p[len]) return 0;
            p += len + 1;
            continue;
        }
        if (len == 6 && !strncmp(p, "shapes", 6)) {
            /* the shape sweep (bench_shapes.c), run on its own */
            o->shapes = 1;
            if (!p[len]) return 0;
            p += len + 1;
            continue;
        }
        size_t i = 0;
        while (i < n && !(strlen(all[i].name) == len && !strncmp(all[i].name, p, len))) i++;
        if (i == n) {
            fprintf(stderr, "clscale: bench: unknown workload \"%.*s\"; the workloads are", (int)len, p);
            for (size_t k = 0; k < n; k++) fprintf(stderr, "%s %s", k ? "," : "", all[k].name);
            fputc('\n', stderr);
            cli_usage_hint("bench");
            return -1;
        }
        o->want |= 1u << i;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

/* Returns 0 to run, 1 after --help, -1 after a usage error (printed). */
int bench_parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->size = 1.0;
    o->repeats = 5;
    o->numpy = "python3";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            return 1;
        }
        if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        static const char *const valued[] = {"--workload", "--size", "--devices", "--repeats",
                                             "--json", "--trace", "--timeline", "--alone",
                                             "--memory", "--file", "--model", "--numpy", "--rows"};
        const char *name = NULL, *v = NULL;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !name; k++) {
            size_t l = strlen(valued[k]);
            if (!strncmp(a, valued[k], l) && (a[l] == '\0' || a[l] == '=')) {
                name = valued[k];
                if (a[l] == '=') v = a + l + 1;
                else if (i + 1 < argc) v = argv[++i];
            }
        }
        if (!name) {
            cli_usage_error("bench", "unknown option \"%s\"", a);
            return -1;
        }
        if (!v || !*v) {
            cli_usage_error("bench", "%s needs a value", name);
            return -1;
        }
        char *end = NULL;
        if (!strcmp(name, "--workload")) {
            if (select_workloads(o, v) != 0) return -1;
        } else if (!strcmp(name, "--size")) {
            errno = 0;
            o->size = strtod(v, &end);
            if (errno || *end || !(o->size > 0.0 && o->size <= 1000.0)) {
                cli_usage_error("bench", "--size wants a number above 0 and at most 1000, not \"%s\"", v);
                return -1;
            }
        } else if (!strcmp(name, "--repeats")) {
            errno = 0;
            long r = strtol(v, &end, 10);
            if (errno || *end || r < 1 || r > BENCH_MAX_REPEATS) {
                cli_usage_error("bench", "--repeats wants a whole number from 1 to %d, not \"%s\"",
                          BENCH_MAX_REPEATS, v);
                return -1;
            }
            o->repeats = (int)r;
            o->repeats_set = 1;
        } else if (!strcmp(name, "--numpy")) {
            o->numpy = strcmp(v, "none") ? v : NULL;
        } else if (!strcmp(name, "--alone")) {
            if (!strcmp(v, "none")) v = "";
            for (const char *c = v; *c; c++)
                if (!(*c >= '0' && *c <= '9') && *c != ',') {
                    cli_usage_error("bench", "--alone wants device indices such as 0,2, not \"%s\"", v);
                    return -1;
                }
            o->alone = v;
        } else if (!strcmp(name, "--memory")) {
            if (strcmp(v, "both") && strcmp(v, "pageable")) {
                cli_usage_error("bench", "--memory wants both or pageable, not \"%s\"", v);
                return -1;
            }
            o->pageable_only = !strcmp(v, "pageable");
        } else if (!strcmp(name, "--devices")) {
            if (cli_selector_check("bench", v)) return -1;
            o->devices = v;
        }
        else if (!strcmp(name, "--rows")) {
            errno = 0;
            unsigned long long r = strtoull(v, &end, 10);
            if (errno || *end || r < 1) {
                cli_usage_error("bench", "--rows wants a whole number of rows above 0, not \"%s\"", v);
                return -1;
            }
            o->rows = r;
        }
        else if (!strcmp(name, "--file")) o->file = v;
        else if (!strcmp(name, "--model")) o->model = v;
        else if (!strcmp(name, "--json")) o->json = v;
        else if (!strcmp(name, "--trace")) o->trace = v;
        else o->timeline = v;
    }
    if (!o->want && !o->shapes && !o->lightcurves) o->want = ~0u;
    return 0;
}

