/* `clscale bench --json` (bench_report.h): every figure of the run, the
 * machine and its limits as one JSON document, written all or nothing.
 * Formats what the run measured; computes nothing but unit conversions. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_report.h"
#include "cli.h"
#include "io/out_target.h"

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
    if (s && *s) cli_json_string(f, s);
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
    cli_json_string(f, m->cpu);
    fprintf(f, ", \"cores\": %u, \"devices\": [", m->cores);
    for (size_t i = 0; i < m->ndev; i++) {
        const cls_device_info *d = &m->dev[i].info;
        fprintf(f, "%s\n    {\"index\": %zu, \"name\": ", i ? "," : "", d->index);
        cli_json_string(f, d->name);
        fputs(", \"vendor\": ", f);
        cli_json_string(f, d->vendor);
        fputs(", \"platform\": ", f);
        cli_json_string(f, d->platform);
        fputs(", \"version\": ", f);
        cli_json_string(f, d->version);
        fputs(", \"driver\": ", f);
        cli_json_string(f, d->driver);
        fprintf(f, ", \"type\": \"%s\", \"compute_units\": %u, \"global_mem_bytes\": %llu, "
                   "\"fp64\": %s, \"host_unified\": %s, \"staging\": %s}",
                bench_type_name(d->type), d->compute_units, (unsigned long long)d->global_mem_bytes,
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
    cli_json_string(f, run->name);
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
            cli_json_string(f, run->limit_name);
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
    cli_json_string(f, w->name);
    fputs(", \"description\": ", f);
    cli_json_string(f, w->description);
    fprintf(f, ", \"dtype\": \"%s\", \"shape\": [%zu, %zu, %zu], \"factors_shape\": ", bench_dtype_name(w->dtype),
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
    /* numpy's median after the rounds, or why there is none */
    fputs(",\n      \"numpy\": ", f);
    if (r->numpy.ok) {
        fputs("{\"version\": ", f);
        cli_json_string(f, r->numpy.version);
        fputs(", \"median_s\": ", f);
        jnum(f, r->numpy.median);
        fputs(", \"why_not\": null}", f);
    } else {
        fputs("{\"version\": null, \"median_s\": null, \"why_not\": ", f);
        cli_json_string(f, r->numpy.why);
        fputc('}', f);
    }
    fputs(",\n      \"runs\": [", f);
    for (size_t i = 0; i < r->nruns; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_run(f, r, &r->runs[i]);
    }
    fputs("]", f);
    /* seed-a's calls on cl_mem buffers already on each device */
    if (r->nresident) {
        fputs(",\n      \"resident\": [", f);
        for (size_t i = 0; i < r->nresident; i++) {
            const bench_resident_row *x = &r->resident[i];
            static const char *const st[] = {"ok", "sat out", "failed"};
            fprintf(f, "%s\n        {\"device\": %zu, \"status\": \"%s\", \"call_s\": ", i ? "," : "", x->device,
                    st[x->status]);
            jpos(f, x->call);
            fputs(", \"kernel_s\": ", f);
            jpos(f, x->kernel);
            fputs(", \"call_over_kernel\": ", f);
            if (x->status == 0 && x->kernel > 0) jnum(f, x->call / x->kernel);
            else fputs("null", f);
            fputs(", \"why\": ", f);
            jstr_or_null(f, x->why);
            fputs("}", f);
        }
        fputs("]", f);
    }
    fputs("}", f);
}

static void json_trace(FILE *f, const bench_trace *t)
{
    fputs("  \"trace\": ", f);
    if (!t->written) {
        fputs("null,\n", f);
        return;
    }
    fputs("{\"workload\": ", f);
    cli_json_string(f, t->workload);
    fputs(", \"run\": ", f);
    cli_json_string(f, t->run);
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
    cli_json_string(f, m->version);
    fputs(", \"date\": ", f);
    cli_json_string(f, m->date);
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
