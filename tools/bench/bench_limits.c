/* The limits of `clscale bench` (bench_run.h): the host's memory bandwidth
 * (STREAM copy and triad, on arrays sized by the last-level caches) and each
 * device's, measured at the start of the run, and what they make of each
 * row: the bound it is set against, its GB/s, its fraction of the bound and
 * its speed-ups over the host references. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_run.h"

#define STREAM_MIN_BYTES ((size_t)256 << 20)
#define STREAM_REPEATS 10

/* ---- measured at the start ---------------------------------------------- */

/* The last-level caches of the machine, summed over their instances (a
 * cache shared by several CPUs counted once), from sysfs; sysconf's figure
 * as a fallback (in virtual machines it may be the whole socket's). */
size_t bench_llc_bytes(void)
{
    char seen[64][128];
    size_t nseen = 0, total = 0;
    int best_level = 0;
    for (int cpu = 0, missing = 0; cpu < 4096 && missing < 64; cpu++) {
        int found = 0;
        for (int idx = 0; idx < 16; idx++) {
            char path[128], buf[128], shared[128];
            int level = 0;
            unsigned long kb = 0;
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
            FILE *f = fopen(path, "r");
            if (!f) break;
            found = 1;
            if (fscanf(f, "%d", &level) != 1) level = 0;
            fclose(f);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
            if (!(f = fopen(path, "r"))) continue;
            if (!fgets(buf, sizeof buf, f) || sscanf(buf, "%luK", &kb) != 1) kb = 0;
            fclose(f);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
            if (!(f = fopen(path, "r"))) continue;
            if (!fgets(shared, sizeof shared, f)) shared[0] = 0;
            fclose(f);
            if (level < best_level || kb == 0) continue;
            if (level > best_level) {
                best_level = level;
                nseen = 0;
                total = 0;
            }
            size_t k = 0;
            while (k < nseen && strcmp(seen[k], shared)) k++;
            if (k < nseen) continue;
            if (nseen < 64) memcpy(seen[nseen++], shared, sizeof shared);
            total += (size_t)kb << 10;
        }
        missing = found ? 0 : missing + 1;
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (total == 0) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) total = (size_t)l3;
    }
#endif
    return total;
}

/* STREAM's rule: each array at least 4 times the last-level caches. */
static size_t stream_bytes(void)
{
    size_t b = STREAM_MIN_BYTES, llc = bench_llc_bytes();
    if (llc <= SIZE_MAX / 4 && 4 * llc > b) b = 4 * llc;
    return b;
}

void bench_measure_limits(bench_machine *m, cls_context *ctx)
{
    m->stream_bytes = stream_bytes();
    m->stream_threads = bench_cpus();
    bench_progress("limits: host memory, STREAM copy");
    m->host_copy = bench_stream_copy(m->stream_bytes, 0, STREAM_REPEATS);
    bench_progress("limits: host memory, STREAM triad");
    m->host_triad = bench_stream_triad(m->stream_bytes, 0, STREAM_REPEATS);
    for (size_t i = 0; i < m->ndev; i++) {
        bench_device *d = &m->dev[i];
        bench_progress("limits: device %zu", d->info.index);
        cls_status st = cls_device_measure(ctx, i, 0, &d->lim);
        d->lim_ok = st == CLS_OK;
        if (!d->lim_ok)
            snprintf(d->lim_error, sizeof d->lim_error, "%s: %s", cls_status_str(st), cls_last_error(ctx));
    }
}

/* ---- each row against them ---------------------------------------------- */

/* The bandwidth one device alone can reach on workload `w`, or 0 when unknown;
 * `pinned`: the caller's memory comes from cls_host_alloc(). */
static double device_limit(double host_copy, const bench_device *d, const bench_workload *w, int pinned,
                           const char **name)
{
    if (!d->info.staging) {
        /* zero copy: the device reads the input and writes the output in host
         * memory, once each, as STREAM copy does */
        *name = "host copy";
        return host_copy;
    }
    /* Staging: every input byte crosses host->device, every output byte comes
     * back. The bus is full duplex and clscale keeps uploads and downloads of
     * different slices in flight at once, so the floor is the slowest of
     * each direction alone and both at once (measured: GPU.md saw 71-85 GB/s
     * both ways against 55 each on PCIe 5): max(in / h2d, out / d2h,
     * (in + out) / both). */
    *name = "bus, pinned";
    if (!d->lim_ok || !(d->lim.h2d_pinned > 0) || !(d->lim.d2h_pinned > 0)) return 0;
    double out = (double)bench_elements(w) * (w->dtype == CLS_F64 ? 8.0 : 4.0);
    double in = (double)bench_bytes(w) - out;
    double t = fmax(in / (d->lim.h2d_pinned * 1e9), out / (d->lim.d2h_pinned * 1e9));
    if (d->lim.both_pinned > 0) t = fmax(t, (in + out) / (d->lim.both_pinned * 1e9));
    double bus = t > 0 ? (double)bench_bytes(w) / t / 1e9 : 0;
    /* Caller memory is read and written in host memory once more by the DMA
     * engine; pageable memory also goes through the copy threads, which read
     * and write every byte: twice the traffic of a zero-copy device. */
    double host = pinned ? host_copy : host_copy / 2;
    if (bus > 0 && host > 0 && host < bus) {
        *name = pinned ? "host copy" : "host copy, staged";
        return host;
    }
    return bus;
}

static const bench_device *device_by_index(const bench_machine *m, size_t index)
{
    for (size_t i = 0; i < m->ndev; i++)
        if (m->dev[i].info.index == index) return &m->dev[i];
    return NULL;
}

static void set_limit(const bench_machine *m, const bench_result *r, bench_run *run)
{
    const char *name = "host copy";
    double lim = 0, host_copy = r->host_copy > 0 ? r->host_copy : m->host_copy;
    if (run->kind == RUN_HOST_SINGLE || run->kind == RUN_HOST_THREADS) {
        lim = host_copy;
    } else if (run->kind == RUN_DEVICE) {
        lim = device_limit(host_copy, device_by_index(m, run->dev[0]), &r->w, run->pinned, &name);
    } else {
        /* together: the devices that can take part add up, but they all read
         * and write the same host memory, which caps the sum */
        int known = 1, n = 0;
        for (size_t i = 0; i < run->ndev; i++) {
            const bench_device *d = device_by_index(m, run->dev[i]);
            if (r->w.dtype == CLS_F64 && !d->info.fp64) continue;
            double l = device_limit(host_copy, d, &r->w, run->pinned, &name);
            if (!(l > 0)) known = 0;
            lim += l;
            n++;
        }
        if (!known) lim = 0;
        if (n > 1) name = "devices' sum";
        if (lim > 0 && host_copy > 0 && host_copy <= lim) {
            lim = host_copy;
            name = "host copy";
        }
    }
    /* A statistics group larger than the caches takes two passes (the
     * statistics, then the scaling): the input is read twice, so the floor
     * is (2 in + out) / bandwidth. Device runs report their passes; the host
     * references make two on the table (whole-batch z-score). */
    int passes = run->kind == RUN_HOST_SINGLE || run->kind == RUN_HOST_THREADS
                     ? (r->w.kind == BENCH_ZSCORE_BATCH ? 2 : 1)
                     : (run->phases == 2 ? 2 : 1);
    if (lim > 0 && passes == 2) {
        double out = (double)bench_elements(&r->w) * (r->w.dtype == CLS_F64 ? 8.0 : 4.0);
        double in = (double)r->bytes - out;
        lim *= (double)r->bytes / ((double)r->bytes + in);
        static const char *const two[][2] = {{"host copy", "host copy, 2 passes"},
                                             {"host copy, staged", "host copy, staged, 2 passes"},
                                             {"bus, pinned", "bus, pinned, 2 passes"},
                                             {"devices' sum", "devices' sum, 2 passes"}};
        for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
            if (!strcmp(name, two[i][0])) name = two[i][1];
    }
    if (lim > 0) {
        run->limit_name = name;
        run->limit_gbs = lim;
    }
}

void bench_derive(const bench_machine *m, bench_result *r)
{
    double ts = 0, tt = 0;
    for (size_t i = 0; i < r->nruns; i++) {
        const bench_run *run = &r->runs[i];
        if (run->status != RUN_OK) continue;
        if (run->kind == RUN_HOST_SINGLE) ts = run->median;
        if (run->kind == RUN_HOST_THREADS) tt = run->median;
    }
    for (size_t i = 0; i < r->nruns; i++) {
        bench_run *run = &r->runs[i];
        set_limit(m, r, run);
        if (run->status != RUN_OK || !(run->median > 0)) continue;
        run->gbs = (double)r->bytes / run->median / 1e9;
        if (run->limit_gbs > 0) run->frac = run->gbs / run->limit_gbs;
        if (ts > 0) run->vs_single = ts / run->median;
        if (tt > 0) run->vs_threads = tt / run->median;
    }
}
