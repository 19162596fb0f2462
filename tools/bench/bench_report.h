/* The results of `clscale bench` as its run gathers them (cmd_bench.c,
 * bench_rounds.c, bench_limits.c), and their two renderings, owned by
 * bench_report.c: the table on the terminal and the JSON file.
 * bench_report.c only formats; it runs nothing and calls no OpenCL. */
#ifndef CLS_BENCH_REPORT_H
#define CLS_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "clscale.h"

enum { BENCH_MAX_DEVICES = 32, BENCH_MAX_REPEATS = 100, BENCH_MAX_WORKLOADS = 8 };

/* A selected device and what it allows. */
typedef struct bench_device {
    cls_device_info   info;      /* strings owned by the context that listed it */
    cls_device_limits lim;       /* valid when lim_ok */
    int               lim_ok;
    char              lim_error[256];
} bench_device;

/* The machine, the options and the limits measured at the start. */
/* One fresh process: context creation, the first seed-A call, a second one
 * (the run itself); seconds. */
typedef struct bench_startup_run { double create, first, steady; } bench_startup_run;
enum { BENCH_WARM_STARTS = 5 };
typedef struct bench_startup_result {
    int               ok;
    bench_startup_run cold;   /* empty kernel caches */
    bench_startup_run warm;   /* warm caches: the run of median start-up */
    int               nwarm;
    double            warm_min, warm_max;   /* start-up (create + first - steady) over the warm runs */
    /* the drivers' own start in a fresh process (the ICD loader, every
     * platform's devices): median, min, max seconds; 0 when not measured */
    double            drivers, drivers_min, drivers_max;
    int               ndrivers;
} bench_startup_result;

/* bench_startup.c: runs `clscale __startup` with empty caches, then
 * BENCH_WARM_STARTS times warm, and the drivers' start as many times. */
int bench_startup(double size, const char *devices, bench_startup_result *out);

typedef struct bench_machine {
    char          cpu[256];
    unsigned      cores;
    char          date[32];        /* ISO 8601, UTC */
    const char   *version;         /* cls_version() */
    double        size;
    int           repeats;
    const char   *selector;        /* NULL: default */
    uint64_t      seed;
    double        host_copy, host_triad;   /* GB/s, 0 when unmeasured */
    size_t        stream_bytes;    /* per array */
    unsigned      stream_threads;
    size_t        ndev;
    bench_device  dev[BENCH_MAX_DEVICES];
    bench_startup_result startup;  /* ok = 0: not measured */
} bench_machine;

typedef enum bench_run_kind { RUN_HOST_SINGLE, RUN_HOST_THREADS, RUN_DEVICE, RUN_TOGETHER } bench_run_kind;
typedef enum bench_run_status { RUN_OK, RUN_SAT_OUT, RUN_FAILED } bench_run_status;

/* One device's part of a clscale call (cls_device_report, strings copied). */
typedef struct bench_part {
    size_t   index;                /* global index */
    char     sat_out[256];         /* "" when it took part */
    char     failed[256];          /* "" unless it was dropped mid-call */
    size_t   slices;
    uint64_t bytes;
    double   busy, upload, kernel, download, staging;
} bench_part;

typedef struct bench_run {
    bench_run_kind   kind;
    int              pinned;       /* caller memory from cls_host_alloc() (staging devices' rows) */
    char             name[48];     /* "host single", "device 1 alone", "all together, pinned" */
    size_t           ndev;         /* devices asked to take part (global indices) */
    size_t           dev[BENCH_MAX_DEVICES];
    bench_run_status status;
    char             why[768];     /* sat out: why; failed: what went wrong */
    int              nrep;         /* timed repeats done (all of them when RUN_OK) */
    double           warmup;       /* seconds */
    double           t[BENCH_MAX_REPEATS];
    double           median, min, max;
    double           max_error;    /* worst over the checked calls (vs host single) */
    double           gbs;          /* bytes / median */
    const char      *limit_name;   /* NULL when the limit is unknown */
    double           limit_gbs, frac;
    double           vs_single, vs_threads;   /* 0 when unknown */
    /* clscale runs: the report of the timed repeat whose time is the median */
    int              has_report;
    int              report_repeat;   /* 0-based among the timed repeats */
    int              phases;
    size_t           slices;
    double           upload, kernel, download, staging;   /* summed over devices */
    size_t           nparts;
    bench_part       parts[BENCH_MAX_DEVICES];
} bench_run;

/* Seed-A's fit+transform of cl_mem buffers already on one device against
 * the fused kernel's own time there. */
typedef struct bench_resident_row {
    size_t   device;        /* global index */
    double   call;          /* median wall seconds of the blocking buffer call */
    double   kernel;        /* median summed kernel seconds (profiled) */
    double   error;         /* against the single-threaded reference */
    uint64_t bytes;         /* read once and written once */
    int      status;        /* 0 measured, 1 sat out (why), 2 failed (why) */
    char     why[512];      /* when it could not run */
} bench_resident_row;

/* numpy's time on a workload (bench_numpy.c): ok, or why not. */
typedef struct bench_numpy {
    int    ok;
    double median;          /* s */
    char   version[32];
    char   why[160];
} bench_numpy;

typedef struct bench_result {
    bench_workload w;
    uint64_t       bytes;          /* bench_bytes() */
    double         tolerance;
    char           error[256];     /* "" unless the workload could not run at all */
    /* STREAM copy measured in the workload's own rounds (the limit of its
     * host-copy rows): median, min, max GB/s; 0 when not measured */
    double         host_copy, host_copy_min, host_copy_max;
    /* A host copy of the row's input size (own_copy_bytes into as many)
     * from cold caches, in the same rounds; 0 when the input is larger than
     * STREAM's arrays */
    double         own_copy, own_copy_min, own_copy_max;
    uint64_t       own_copy_bytes;
    size_t         nruns;
    bench_run      runs[4 + 2 * BENCH_MAX_DEVICES];
    size_t         nresident;      /* seed-a's resident rows (cmd_bench.c) */
    bench_numpy    numpy;          /* what a numpy user's code takes, after the rounds */
    bench_resident_row resident[BENCH_MAX_DEVICES];
} bench_result;

/* What --trace and --timeline show: the last timed call of one run. */
typedef struct bench_trace {
    int         written;
    char        workload[32];
    char        run[48];
    int         repeat, repeats;
    size_t      nlanes;
    size_t      lane[256][2];     /* (global device index, queue) with events */
    const char *json_path, *svg_path;   /* NULL: not asked for, or failed */
} bench_trace;

/* The table's parts, in the order printed: the title (version, machine,
 * devices); the summary a user reads first, one line per workload (the run
 * a plain call makes: every selected device together, or the one device,
 * against the host references); the limits and start-up measured; each
 * workload's block; how the figures are taken. */
void bench_print_title(FILE *f, const bench_machine *m);
void bench_print_summary(FILE *f, const bench_machine *m, const bench_result *r, size_t nr);
void bench_print_limits(FILE *f, const bench_machine *m);
void bench_print_how(FILE *f, const bench_machine *m);
/* One resident row ("  resident, device N ...": measured, sat out or failed). */
void bench_print_resident(FILE *f, const bench_resident_row *row);
/* One workload's block: its rows, then its resident rows. */
void bench_print_result(FILE *f, const bench_machine *m, const bench_result *r);
/* The closing lines: what was traced, the total wall time, the verdict. */
void bench_print_footer(FILE *f, const bench_trace *t, double total_s, int failures, int unwritten);

/* Writes everything as JSON to `path`; returns 0, or -1 with errno set. */
int bench_write_json(const char *path, const bench_machine *m, const bench_result *r, size_t nr,
                     const bench_trace *t, double total_s);

/* Names shared by the table and the JSON file (bench_report.c). */
const char *bench_type_name(unsigned device_type);
const char *bench_dtype_name(cls_dtype t);

#endif
