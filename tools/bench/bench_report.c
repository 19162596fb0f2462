/* The renderings of `clscale bench` (bench_report.h): the table on the
 * terminal and the JSON file. Formats what the run measured and derived
 * (cmd_bench.c, bench_rounds.c, bench_limits.c); computes nothing but unit
 * conversions. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_report.h"
#include "cli.h"
#include "io/out_target.h"

/* ---- the table ---------------------------------------------------------- */

enum { NAME_W = 23, INDENT = NAME_W + 2 };

static const char *type_name(unsigned t)
{
    if (t & CLS_DEVICE_GPU) return "gpu";
    if (t & CLS_DEVICE_ACCELERATOR) return "accelerator";
    if (t & CLS_DEVICE_CPU) return "cpu";
    return "other";
}

static const char *dtype_name(cls_dtype t) { return t == CLS_F64 ? "float64" : "float32"; }

/* Milliseconds with about four significant digits. */
static void fmt_ms(char *buf, size_t len, double s)
{
    double ms = s * 1e3;
    if (!isfinite(ms)) snprintf(buf, len, "-");
    else if (ms == 0) snprintf(buf, len, "0");
    else if (ms < 1) snprintf(buf, len, "%.3f", ms);
    else if (ms < 10) snprintf(buf, len, "%.2f", ms);
    else if (ms < 1000) snprintf(buf, len, "%.1f", ms);
    else snprintf(buf, len, "%.0f", ms);
}

static void fmt_gbs(char *buf, size_t len, double v)
{
    if (!(v > 0) || !isfinite(v)) snprintf(buf, len, "-");
    else snprintf(buf, len, v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v);
}

static void fmt_x(char *buf, size_t len, double v)
{
    if (!(v > 0) || !isfinite(v)) snprintf(buf, len, "-");
    else if (v < 0.1) snprintf(buf, len, "%.2gx", v);
    else snprintf(buf, len, v < 10 ? "%.2fx" : v < 100 ? "%.1fx" : "%.0fx", v);
}

/* A message that may hold several lines, continued under the first. */
static void print_indented(FILE *f, const char *msg, int indent)
{
    for (const char *p = msg; *p; p++) {
        fputc(*p, f);
        if (*p == '\n' && p[1]) fprintf(f, "%*s", indent, "");
    }
    fputc('\n', f);
}

void bench_print_header(FILE *f, const bench_machine *m)
{
    fprintf(f, "clscale %s bench, %s, seed %llu, size %g\n", m->version, m->date, (unsigned long long)m->seed,
            m->size);
    fprintf(f, "machine   %s, %u cores\n", m->cpu, m->cores);
    for (size_t i = 0; i < m->ndev; i++) {
        const cls_device_info *d = &m->dev[i].info;
        fprintf(f, "device %-3zu%s | %s, driver %s | %s, %u CU, %.1f GiB, %s, %s\n", d->index, d->name,
                d->platform, d->driver, type_name(d->type), d->compute_units,
                (double)d->global_mem_bytes / 1073741824.0, d->fp64 ? "fp64" : "no fp64",
                d->staging ? "pinned staging" : "zero-copy");
    }
    char c[16], t[16];
    fmt_gbs(c, sizeof c, m->host_copy);
    fmt_gbs(t, sizeof t, m->host_triad);
    fprintf(f, "limits    host memory, STREAM on %u threads, %zu MiB arrays: copy %s GB/s, triad %s GB/s\n",
            m->stream_threads, m->stream_bytes >> 20, c, t);
    for (size_t i = 0; i < m->ndev; i++) {
        const bench_device *d = &m->dev[i];
        if (!d->lim_ok) {
            fprintf(f, "          device %zu: not measured: ", d->info.index);
            print_indented(f, d->lim_error, 10);
            continue;
        }
        char mc[16], hp[16], hq[16], dp[16], dq[16], bp[16];
        fmt_gbs(mc, sizeof mc, d->lim.mem_copy);
        fmt_gbs(hp, sizeof hp, d->lim.h2d_pinned);
        fmt_gbs(hq, sizeof hq, d->lim.h2d_pageable);
        fmt_gbs(dp, sizeof dp, d->lim.d2h_pinned);
        fmt_gbs(dq, sizeof dq, d->lim.d2h_pageable);
        fmt_gbs(bp, sizeof bp, d->lim.both_pinned);
        fprintf(f, "          device %zu: memory copy %s | host->device pinned %s, pageable %s | "
                   "device->host pinned %s, pageable %s | both ways at once, pinned %s GB/s\n",
                d->info.index, mc, hp, hq, dp, dq, bp);
    }
    if (m->startup.ok) {
        const bench_startup_run *c = &m->startup.cold, *w = &m->startup.warm;
        fprintf(f, "start-up  a fresh process: context, first seed-A call, then a second call (the run itself)\n"
                   "          cold caches: context %.0f ms, first call %.0f ms, run %.0f ms: %.0f ms beyond the run\n"
                   "          warm caches: context %.0f ms, first call %.0f ms, run %.0f ms: %.0f ms beyond the run\n"
                   "                       (median of %d fresh processes, %.0f-%.0f ms)\n",
                c->create * 1e3, c->first * 1e3, c->steady * 1e3, (c->create + c->first - c->steady) * 1e3,
                w->create * 1e3, w->first * 1e3, w->steady * 1e3, (w->create + w->first - w->steady) * 1e3,
                m->startup.nwarm, m->startup.warm_min * 1e3, m->startup.warm_max * 1e3);
        if (m->startup.drivers > 0)
            fprintf(f, "          of which the OpenCL drivers' own start (any OpenCL program pays it: the ICD loader,\n"
                       "          every platform's devices, a context and a queue on each): %.0f ms (median of %d,\n"
                       "          %.0f-%.0f ms)\n",
                    m->startup.drivers * 1e3, m->startup.ndrivers, m->startup.drivers_min * 1e3,
                    m->startup.drivers_max * 1e3);
    }
    fprintf(f,
            "how       wall clock around each call (what the caller waits for), out of place on pageable\n"
            "          caller memory (malloc), or on memory from cls_host_alloc() in the \"pinned\" rows\n"
            "          (staging devices); median of %d calls after a warm-up, and their range. The\n"
            "          rows' calls alternate (one call of each row per round), so a drift in the machine's\n"
            "          speed falls on all rows alike; each call starts with its data out of the caches (a\n"
            "          read of twice the last-level cache first), as STREAM does. Every result is checked\n"
            "          against the single-threaded reference before its time counts.\n"
            "          GB/s: every input byte read once, every output byte written once, over the median.\n"
            "          of limit: of the bandwidth that binds the row: host copy (host and zero-copy devices),\n"
            "          bus, pinned (staging devices: each direction alone and both at once, unless host\n"
            "          copy is lower), host copy, staged (staging devices on pageable memory: host threads\n"
            "          copy every byte, so half the host copy bandwidth), devices' sum (all together,\n"
            "          capped by host copy). \"2 passes\": a statistics group larger than the\n"
            "          caches is read twice (statistics, then scaling), so that limit counts 2 in + out.\n"
            "          vs single, vs threads: the host reference's median over the row's median.\n"
            "          upload .. staging: OpenCL event ms of the median call, summed over devices and\n"
            "          queues; they overlap, so they may add up to more than the wall time.\n",
            m->repeats);
    fprintf(f, "GB/s are 1e9 bytes per second; GiB and MiB are powers of 2.\n");
}

static void print_row(FILE *f, const bench_run *run)
{
    fprintf(f, "%-*s", NAME_W, run->name);
    if (run->status == RUN_SAT_OUT) {
        fputs("  sat out: ", f);
        print_indented(f, run->why, INDENT);
        return;
    }
    if (run->status == RUN_FAILED) {
        fputs("  FAILED: ", f);
        print_indented(f, run->why, INDENT);
        return;
    }
    char med[16], lo[16], hi[16], range[40], gbs[16], pct[32], vs1[16], vs2[16];
    fmt_ms(med, sizeof med, run->median);
    fmt_ms(lo, sizeof lo, run->min);
    fmt_ms(hi, sizeof hi, run->max);
    snprintf(range, sizeof range, "%s-%s", lo, hi);
    fmt_gbs(gbs, sizeof gbs, run->gbs);
    if (run->limit_name && run->frac > 0 && run->frac < 0.01)
        snprintf(pct, sizeof pct, " <1%% %s", run->limit_name);
    else if (run->limit_name && run->frac > 0)
        snprintf(pct, sizeof pct, "%3.0f%% %s%s", run->frac * 100, run->limit_name, run->frac > 1 ? "*" : "");
    else snprintf(pct, sizeof pct, "   - %s", run->limit_name ? run->limit_name : "unknown");
    fmt_x(vs1, sizeof vs1, run->vs_single);
    fmt_x(vs2, sizeof vs2, run->vs_threads);
    fprintf(f, "%10s %17s %7s  %-23s %9s %10s", med, range, gbs, pct, vs1, vs2);
    if (run->has_report) {
        char u[16], k[16], d[16], s[16];
        fmt_ms(u, sizeof u, run->upload);
        fmt_ms(k, sizeof k, run->kernel);
        fmt_ms(d, sizeof d, run->download);
        fmt_ms(s, sizeof s, run->staging);
        fprintf(f, " %8s %8s %8s %8s", u, k, d, s);
    }
    fputc('\n', f);
}

/* Under a clscale row: how the work was split, who sat out or was dropped. */
static void print_parts(FILE *f, const bench_run *run)
{
    if (!run->has_report) return;
    uint64_t total = 0;
    for (size_t i = 0; i < run->nparts; i++) total += run->parts[i].bytes;
    if (run->kind == RUN_TOGETHER && run->status == RUN_OK && total > 0) {
        fprintf(f, "%*ssplit:", INDENT, "");
        const char *sep = " ";
        for (size_t i = 0; i < run->nparts; i++) {
            const bench_part *p = &run->parts[i];
            if (p->sat_out[0]) continue;
            fprintf(f, "%sdevice %zu %.0f%% (%zu slice%s)", sep, p->index,
                    100.0 * (double)p->bytes / (double)total, p->slices, p->slices == 1 ? "" : "s");
            sep = ", ";
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < run->nparts; i++) {
        const bench_part *p = &run->parts[i];
        if (p->sat_out[0] && run->kind == RUN_TOGETHER)
            fprintf(f, "%*sdevice %zu sat out: %s\n", INDENT, "", p->index, p->sat_out);
        if (p->failed[0]) {
            fprintf(f, "%*sdevice %zu was dropped mid-call (its slices redone elsewhere): ", INDENT, "", p->index);
            print_indented(f, p->failed, INDENT + 2);
        }
    }
}

void bench_print_result(FILE *f, const bench_machine *m, const bench_result *r)
{
    (void)m;
    fprintf(f, "\n%s: %s, %.1f MB moved\n", r->w.name, r->w.description, (double)r->bytes / 1e6);
    if (r->error[0]) {
        fprintf(f, "  FAILED: %s\n", r->error);
        return;
    }
    if (r->host_copy > 0)
        fprintf(f, "host copy limit: STREAM copy in these rounds, %.1f GB/s (%.1f-%.1f)\n", r->host_copy,
                r->host_copy_min, r->host_copy_max);
    if (r->own_copy > 0)
        fprintf(f, "                 a copy of its own %.0f MB from cold caches: %.1f GB/s (%.1f-%.1f)\n",
                (double)r->own_copy_bytes / 1e6, r->own_copy, r->own_copy_min, r->own_copy_max);
    fprintf(f, "%-*s%10s %17s %7s  %-23s %9s %10s %8s %8s %8s %8s\n", NAME_W, "", "median ms", "min-max ms",
            "GB/s", "of limit", "vs single", "vs threads", "upload", "kernel", "download", "staging");
    int above = 0;
    for (size_t i = 0; i < r->nruns; i++) {
        print_row(f, &r->runs[i]);
        print_parts(f, &r->runs[i]);
        above |= r->runs[i].status == RUN_OK && r->runs[i].frac > 1;
    }
    if (above)
        fprintf(f, "* above the limit: STREAM counts the bytes it reads and writes, but its stores first read\n"
                   "  each line they write (write-allocate); clscale's streaming stores do not, so it can move\n"
                   "  more useful bytes per second.\n");
}

void bench_print_footer(FILE *f, const bench_trace *t, double total_s, int failures, int unwritten)
{
    if (t->written && (t->json_path || t->svg_path))
        fprintf(f, "\ntrace     %s, %s, repeat %d/%d: %s%s%s\n", t->workload, t->run, t->repeat, t->repeats,
                t->json_path ? t->json_path : "", t->json_path && t->svg_path ? ", " : "",
                t->svg_path ? t->svg_path : "");
    fprintf(f, "\ntotal %.1f s (limits, data generation and checks included); ", total_s);
    if (failures) fprintf(f, "%d FAILED", failures);
    else fputs("every result correct", f);
    if (unwritten) fprintf(f, "; %d output file%s not written", unwritten, unwritten == 1 ? "" : "s");
    fputc('\n', f);
}

/* ---- JSON --------------------------------------------------------------- */

static void jnum(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}

/* A number that is 0 when unknown: null then. */
static void jpos(FILE *f, double v)
{
    if (v > 0) jnum(f, v);
    else fputs("null", f);
}

static void jstr_or_null(FILE *f, const char *s)
{
    if (s && *s) json_string(f, s);
    else fputs("null", f);
}

static const char *kind_name(bench_run_kind k)
{
    switch (k) {
    case RUN_HOST_SINGLE: return "host-single";
    case RUN_HOST_THREADS: return "host-threads";
    case RUN_DEVICE: return "device";
    case RUN_TOGETHER: return "together";
    }
    return "?";
}

static const char *status_name(bench_run_status s)
{
    return s == RUN_OK ? "ok" : s == RUN_SAT_OUT ? "sat_out" : "failed";
}

static void json_machine(FILE *f, const bench_machine *m)
{
    fputs("  \"machine\": {\"cpu_model\": ", f);
    json_string(f, m->cpu);
    fprintf(f, ", \"cores\": %u, \"devices\": [", m->cores);
    for (size_t i = 0; i < m->ndev; i++) {
        const cls_device_info *d = &m->dev[i].info;
        fprintf(f, "%s\n    {\"index\": %zu, \"name\": ", i ? "," : "", d->index);
        json_string(f, d->name);
        fputs(", \"vendor\": ", f);
        json_string(f, d->vendor);
        fputs(", \"platform\": ", f);
        json_string(f, d->platform);
        fputs(", \"version\": ", f);
        json_string(f, d->version);
        fputs(", \"driver\": ", f);
        json_string(f, d->driver);
        fprintf(f, ", \"type\": \"%s\", \"compute_units\": %u, \"global_mem_bytes\": %llu, "
                   "\"fp64\": %s, \"host_unified\": %s, \"staging\": %s}",
                type_name(d->type), d->compute_units, (unsigned long long)d->global_mem_bytes,
                d->fp64 ? "true" : "false", d->host_unified ? "true" : "false", d->staging ? "true" : "false");
    }
    fputs("]},\n", f);
}

static void json_limits(FILE *f, const bench_machine *m)
{
    fprintf(f, "  \"limits\": {\n    \"host\": {\"method\": \"STREAM\", \"threads\": %u, \"array_bytes\": %zu, "
               "\"copy_gbs\": ",
            m->stream_threads, m->stream_bytes);
    jpos(f, m->host_copy);
    fputs(", \"triad_gbs\": ", f);
    jpos(f, m->host_triad);
    fputs("},\n", f);
    if (m->startup.ok) {
        const bench_startup_run *r[2] = {&m->startup.cold, &m->startup.warm};
        fputs("    \"startup\": {\"what\": \"fresh process: context creation, first seed-A call, second call\"", f);
        for (int i = 0; i < 2; i++)
            fprintf(f, ", \"%s\": {\"create_s\": %.6f, \"first_call_s\": %.6f, \"run_s\": %.6f, "
                       "\"beyond_run_s\": %.6f}",
                    i ? "warm" : "cold", r[i]->create, r[i]->first, r[i]->steady,
                    r[i]->create + r[i]->first - r[i]->steady);
        fprintf(f, ", \"warm_runs\": %d, \"warm_beyond_run_min_s\": %.6f, \"warm_beyond_run_max_s\": %.6f",
                m->startup.nwarm, m->startup.warm_min, m->startup.warm_max);
        fputs(", \"drivers_s\": ", f);
        if (m->startup.drivers > 0)
            fprintf(f, "{\"median\": %.6f, \"min\": %.6f, \"max\": %.6f}", m->startup.drivers,
                    m->startup.drivers_min, m->startup.drivers_max);
        else
            fputs("null", f);
        fputs("},\n", f);
    }
    fputs("    \"devices\": [", f);
    for (size_t i = 0; i < m->ndev; i++) {
        const bench_device *d = &m->dev[i];
        fprintf(f, "%s\n      {\"index\": %zu, \"measured\": %s, \"error\": ", i ? "," : "", d->info.index,
                d->lim_ok ? "true" : "false");
        jstr_or_null(f, d->lim_ok ? NULL : d->lim_error);
        const double v[] = {d->lim.mem_copy,     d->lim.h2d_pinned,   d->lim.d2h_pinned,
                            d->lim.h2d_pageable, d->lim.d2h_pageable, d->lim.both_pinned};
        const char *k[] = {"mem_copy_gbs",     "h2d_pinned_gbs",   "d2h_pinned_gbs",
                           "h2d_pageable_gbs", "d2h_pageable_gbs", "both_pinned_gbs"};
        for (size_t j = 0; j < 6; j++) {
            fprintf(f, ", \"%s\": ", k[j]);
            if (d->lim_ok) jpos(f, v[j]);
            else fputs("null", f);
        }
        fputc('}', f);
    }
    fputs("]},\n", f);
}

static void json_run(FILE *f, const bench_result *r, const bench_run *run)
{
    fputs("        {\"name\": ", f);
    json_string(f, run->name);
    fprintf(f, ", \"kind\": \"%s\", \"pinned\": %s, \"devices\": [", kind_name(run->kind),
            run->pinned ? "true" : "false");
    for (size_t i = 0; i < run->ndev; i++) fprintf(f, "%s%zu", i ? ", " : "", run->dev[i]);
    fprintf(f, "], \"status\": \"%s\", \"correct\": ", status_name(run->status));
    if (run->status == RUN_SAT_OUT) fputs("null", f);
    else fputs(run->status == RUN_OK ? "true" : "false", f);
    fputs(", \"sat_out\": ", f);
    jstr_or_null(f, run->status == RUN_SAT_OUT ? run->why : NULL);
    fputs(", \"error\": ", f);
    jstr_or_null(f, run->status == RUN_FAILED ? run->why : NULL);
    fputs(", \"max_error\": ", f);
    jnum(f, run->max_error);
    fputs(", \"tolerance\": ", f);
    jnum(f, r->tolerance);
    fprintf(f, ",\n         \"bytes\": %llu, \"times\": ", (unsigned long long)r->bytes);
    if (run->status != RUN_OK) {
        /* a wrong or failed run has no times: they are not accepted */
        fputs("null, \"gbs\": null, \"limit\": null, \"fraction_of_limit\": null, \"speedup\": null", f);
    } else {
        fputs("{\"unit\": \"s\", \"warmup\": ", f);
        jnum(f, run->warmup);
        fputs(", \"repeats\": [", f);
        for (int i = 0; i < run->nrep; i++) {
            if (i) fputs(", ", f);
            jnum(f, run->t[i]);
        }
        fputs("], \"median\": ", f);
        jnum(f, run->median);
        fputs(", \"min\": ", f);
        jnum(f, run->min);
        fputs(", \"max\": ", f);
        jnum(f, run->max);
        fputs("},\n         \"gbs\": ", f);
        jpos(f, run->gbs);
        fputs(", \"limit\": ", f);
        if (run->limit_name) {
            fputs("{\"name\": ", f);
            json_string(f, run->limit_name);
            fputs(", \"gbs\": ", f);
            jpos(f, run->limit_gbs);
            fputc('}', f);
        } else fputs("null", f);
        fputs(", \"fraction_of_limit\": ", f);
        jpos(f, run->frac);
        fputs(", \"speedup\": {\"vs_single\": ", f);
        jpos(f, run->vs_single);
        fputs(", \"vs_threads\": ", f);
        jpos(f, run->vs_threads);
        fputc('}', f);
    }
    fputs(",\n         \"report\": ", f);
    if (!run->has_report) {
        fputs("null}", f);
        return;
    }
    fputs("{\"of_repeat\": ", f);
    if (run->status == RUN_OK) fprintf(f, "%d", run->report_repeat + 1);
    else fputs("null", f);
    fprintf(f, ", \"phases\": %d, \"slices\": %zu, \"summed_event_s\": {\"upload\": ", run->phases, run->slices);
    jnum(f, run->upload);
    fputs(", \"kernel\": ", f);
    jnum(f, run->kernel);
    fputs(", \"download\": ", f);
    jnum(f, run->download);
    fputs(", \"staging\": ", f);
    jnum(f, run->staging);
    fputs("},\n          \"devices\": [", f);
    for (size_t i = 0; i < run->nparts; i++) {
        const bench_part *p = &run->parts[i];
        fprintf(f, "%s\n            {\"index\": %zu, \"sat_out\": ", i ? "," : "", p->index);
        jstr_or_null(f, p->sat_out);
        fputs(", \"failed\": ", f);
        jstr_or_null(f, p->failed);
        fprintf(f, ", \"slices\": %zu, \"bytes\": %llu, \"busy_s\": ", p->slices, (unsigned long long)p->bytes);
        jnum(f, p->busy);
        fputs(", \"upload_s\": ", f);
        jnum(f, p->upload);
        fputs(", \"kernel_s\": ", f);
        jnum(f, p->kernel);
        fputs(", \"download_s\": ", f);
        jnum(f, p->download);
        fputs(", \"staging_s\": ", f);
        jnum(f, p->staging);
        fputc('}', f);
    }
    fputs("]}}", f);
}

static void json_result(FILE *f, const bench_result *r)
{
    const bench_workload *w = &r->w;
    fputs("    {\"name\": ", f);
    json_string(f, w->name);
    fputs(", \"description\": ", f);
    json_string(f, w->description);
    fprintf(f, ", \"dtype\": \"%s\", \"shape\": [%zu, %zu, %zu], \"factors_shape\": ", dtype_name(w->dtype),
            w->batch, w->rows, w->cols);
    if (w->frows) fprintf(f, "[%zu, %zu]", w->frows, w->fcols);
    else fputs("null", f);
    fprintf(f, ", \"bytes\": %llu, \"tolerance\": ", (unsigned long long)r->bytes);
    jnum(f, r->tolerance);
    fputs(", \"host_copy_gbs\": ", f);
    if (r->host_copy > 0)
        fprintf(f, "{\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}", r->host_copy, r->host_copy_min,
                r->host_copy_max);
    else
        fputs("null", f);
    fputs(", \"own_size_copy_gbs\": ", f);
    if (r->own_copy > 0)
        fprintf(f, "{\"bytes\": %llu, \"median\": %.6g, \"min\": %.6g, \"max\": %.6g}",
                (unsigned long long)r->own_copy_bytes, r->own_copy, r->own_copy_min, r->own_copy_max);
    else
        fputs("null", f);
    fputs(", \"error\": ", f);
    jstr_or_null(f, r->error);
    fputs(",\n      \"runs\": [", f);
    for (size_t i = 0; i < r->nruns; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_run(f, r, &r->runs[i]);
    }
    fputs("]}", f);
}

static void json_trace(FILE *f, const bench_trace *t)
{
    fputs("  \"trace\": ", f);
    if (!t->written) {
        fputs("null,\n", f);
        return;
    }
    fputs("{\"workload\": ", f);
    json_string(f, t->workload);
    fputs(", \"run\": ", f);
    json_string(f, t->run);
    fprintf(f, ", \"repeat\": %d, \"json\": ", t->repeat);
    jstr_or_null(f, t->json_path);
    fputs(", \"svg\": ", f);
    jstr_or_null(f, t->svg_path);
    fputs(", \"queues\": [", f);
    for (size_t i = 0; i < t->nlanes; i++)
        fprintf(f, "%s{\"device\": %zu, \"queue\": %zu}", i ? ", " : "", t->lane[i][0], t->lane[i][1]);
    fputs("]},\n", f);
}

int bench_write_json(const char *path, const bench_machine *m, const bench_result *r, size_t nr,
                     const bench_trace *t, double total_s)
{
    /* written beside its path and renamed into place: never half a file;
     * a symlink's file is written so, a device or pipe (/dev/null, a FIFO)
     * straight into, never renamed over (io/out_target.h) */
    char *real;
    int kind, e = cls_target_resolve(path, &real, &kind);
    if (e) {
        errno = e;
        return -1;
    }
    size_t len = strlen(real) + 32;
    char *tmp = kind == CLS_TARGET_STREAM ? NULL : malloc(len);
    if (tmp) snprintf(tmp, len, "%s.%ld.tmp", real, (long)getpid());
    FILE *f = kind == CLS_TARGET_STREAM ? fopen(real, "w") : tmp ? fopen(tmp, "w") : NULL;
    if (!f) {
        e = errno;
        free(tmp);
        free(real);
        errno = e;
        return -1;
    }
    int correct = 1;
    for (size_t i = 0; i < nr; i++) {
        if (r[i].error[0]) correct = 0;
        for (size_t j = 0; j < r[i].nruns; j++) correct &= r[i].runs[j].status != RUN_FAILED;
    }
    fputs("{\n  \"tool\": \"clscale bench\", \"clscale_version\": ", f);
    json_string(f, m->version);
    fputs(", \"date\": ", f);
    json_string(f, m->date);
    fprintf(f, ",\n  \"options\": {\"size\": ");
    jnum(f, m->size);
    fprintf(f, ", \"repeats\": %d, \"devices\": ", m->repeats);
    jstr_or_null(f, m->selector);
    fprintf(f, ", \"seed\": %llu},\n", (unsigned long long)m->seed);
    fputs("  \"method\": {\"time\": \"wall clock around each call, out of place; median of the repeats after one "
          "warm-up, the rows' calls alternating round by round, each call's data out of the caches first\", \"memory\": \"pageable caller memory (malloc)\", \"bytes\": \"every input byte read once, "
          "every output byte written once\", \"gbs\": \"1e9 bytes per second over the median time\", "
          "\"reference\": \"host single (plain C, one thread); every result checked against it\", "
          "\"phases\": \"OpenCL event seconds of the median repeat, summed over devices and queues\"},\n",
          f);
    json_machine(f, m);
    json_limits(f, m);
    fputs("  \"workloads\": [\n", f);
    for (size_t i = 0; i < nr; i++) {
        if (i) fputs(",\n", f);
        json_result(f, &r[i]);
    }
    fputs("\n  ],\n", f);
    json_trace(f, t);
    fputs("  \"total_wall_s\": ", f);
    jnum(f, total_s);
    fprintf(f, ", \"all_correct\": %s\n}\n", correct ? "true" : "false");
    int bad = ferror(f);
    e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad && tmp && rename(tmp, real) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        if (tmp) unlink(tmp);
        errno = e ? e : EIO;
    }
    free(tmp);
    free(real);
    return bad ? -1 : 0;
}
