/* The renderings of `clscale bench` (bench_report.h): the table on the
 * terminal (the JSON file is bench_json.c's). Formats what the run measured and derived
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

const char *bench_type_name(unsigned t)
{
    if (t & CLS_DEVICE_GPU) return "gpu";
    if (t & CLS_DEVICE_ACCELERATOR) return "accelerator";
    if (t & CLS_DEVICE_CPU) return "cpu";
    return "other";
}

const char *bench_dtype_name(cls_dtype t) { return t == CLS_F64 ? "float64" : "float32"; }

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

void bench_print_title(FILE *f, const bench_machine *m)
{
    fprintf(f, "clscale %s bench, %s, seed %llu, size %g\n", m->version, m->date, (unsigned long long)m->seed,
            m->size);
    fprintf(f, "machine   %s, %u cores\n", m->cpu, m->cores);
    for (size_t i = 0; i < m->ndev; i++) {
        const cls_device_info *d = &m->dev[i].info;
        fprintf(f, "device %-3zu%s | %s, driver %s | %s, %u CU, %.1f GiB, %s, %s\n", d->index, d->name,
                d->platform, d->driver, bench_type_name(d->type), d->compute_units,
                (double)d->global_mem_bytes / 1073741824.0, d->fp64 ? "fp64" : "no fp64",
                d->staging ? "pinned staging" : "zero-copy");
    }
}

void bench_print_limits(FILE *f, const bench_machine *m)
{
    fputc('\n', f);
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
}

void bench_print_how(FILE *f, const bench_machine *m)
{
    fputc('\n', f);
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

/* The run a user gets from a plain call: every selected device together on
 * malloc'ed memory, or the one device; NULL when there is none. */
static const bench_run *user_run(const bench_result *r)
{
    const bench_run *alone = NULL;
    size_t nalone = 0;
    for (size_t i = 0; i < r->nruns; i++) {
        const bench_run *run = &r->runs[i];
        if (run->pinned) continue;
        if (run->kind == RUN_TOGETHER) return run;
        if (run->kind == RUN_DEVICE) {
            alone = alone ? alone : run;
            nalone++;
        }
    }
    return nalone == 1 ? alone : NULL;
}

void bench_print_summary(FILE *f, const bench_machine *m, const bench_result *r, size_t nr)
{
    fprintf(f, "\nclscale, every selected device, against plain C on this machine's CPU in the same rounds\n"
               "and numpy after them\n");
    fprintf(f, "%-14s %10s %7s  %-23s %9s %11s %12s  %s\n", "workload", "time", "GB/s", "of the limit", "vs numpy",
            "vs one core", "vs all cores", "what");
    int above = 0;
    for (size_t i = 0; i < nr; i++) {
        const bench_result *w = &r[i];
        const bench_run *run = w->error[0] ? NULL : user_run(w);
        fprintf(f, "%-14s ", w->w.name);
        if (w->error[0] || !run || run->status != RUN_OK) {
            fprintf(f, "%-10s %s\n", run && run->status == RUN_SAT_OUT ? "sat out" : "FAILED",
                    w->error[0] ? w->error : "(the rows below say why)");
            continue;
        }
        char med[16], time[24], gbs[16], pct[32], vs1[16], vs2[16], vsn[16];
        fmt_ms(med, sizeof med, run->median);
        snprintf(time, sizeof time, "%s ms", med);
        fmt_gbs(gbs, sizeof gbs, run->gbs);
        if (run->limit_name && run->frac > 0)
            snprintf(pct, sizeof pct, "%3.0f%% %s%s", run->frac * 100, run->limit_name, run->frac > 1 ? "*" : "");
        else snprintf(pct, sizeof pct, "   -");
        above |= run->frac > 1;
        fmt_x(vs1, sizeof vs1, run->vs_single);
        fmt_x(vs2, sizeof vs2, run->vs_threads);
        fmt_x(vsn, sizeof vsn, w->numpy.ok ? w->numpy.median / run->median : 0);
        fprintf(f, "%10s %7s  %-23s %9s %11s %12s  %s\n", time, gbs, pct, vsn, vs1, vs2, w->w.description);
    }
    /* which numpy, or why there is no column: once, from the first workload that says */
    for (size_t i = 0; i < nr; i++) {
        const bench_numpy *np = &r[i].numpy;
        if (np->ok) {
            fprintf(f, "vs numpy: numpy %s running a numpy user's code for the workload (min, max and the\n"
                       "formula per matrix; x * factors; mean and std over the batch) in a child process\n",
                    np->version);
            break;
        }
        if (np->why[0] && !r[i].error[0]) {
            fprintf(f, "vs numpy: -, %s\n", np->why);
            break;
        }
    }
    fprintf(f, "time: median of %d calls, wall clock, data out of the caches; every result checked against\n"
               "the C reference first. Each workload's rows, the limits and how they are measured follow.\n",
            m->repeats);
    if (above) fprintf(f, "* above the limit: STREAM's stores also read each line they write; clscale's do not.\n");
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
    for (size_t i = 0; i < r->nresident; i++) bench_print_resident(f, &r->resident[i]);
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

void bench_print_resident(FILE *f, const bench_resident_row *row)
{
    if (row->status == 1) fprintf(f, "  resident, device %zu: sat out: %s\n", row->device, row->why);
    else if (row->status == 2) fprintf(f, "  resident, device %zu: FAILED: %s\n", row->device, row->why);
    else
        fprintf(f, "  resident, device %zu (cl_mem in and out, no host copy): call %.3f ms (%.1f GB/s), fused "
                "kernel alone %.3f ms: %.2fx the kernel (goal 1.25x)\n",
                row->device, 1e3 * row->call, (double)row->bytes / row->call / 1e9, 1e3 * row->kernel,
                row->kernel > 0 ? row->call / row->kernel : 0.0);
}

