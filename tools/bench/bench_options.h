/* `clscale bench`'s command line (bench_options.c), read by cmd_bench.c. */
#ifndef BENCH_OPTIONS_H
#define BENCH_OPTIONS_H

#include <stddef.h>

typedef struct options {
    unsigned    want;        /* bit i: workload i of bench_workloads() */
    double      size;
    int         repeats;
    const char *devices, *json, *trace, *timeline;
    const char *alone;       /* global indices that get an "alone" row; NULL: all */
    int         pageable_only; /* --memory pageable: no pinned rows */
    const char *file;        /* --file: only the files row */
    int         repeats_set;
    const char *model;       /* --model: the bus layer's path */
    int         quiet;       /* --quiet: no progress line */
    const char *numpy;       /* --numpy: the interpreter for the numpy column; NULL: none */
    int         shapes;      /* --workload shapes: the shape sweep (bench_shapes.c) */
    int         lightcurves; /* --workload lightcurves: bench_lightcurves.c */
    unsigned long long rows; /* --rows: the shape sweep at this group length alone; 0: all */
} options;

/* Reads argv into *o (defaults first). 0: run; 1: --help was printed;
 * -1: a usage error was printed. */
int bench_parse_options(int argc, char **argv, options *o);
/* Whether device `index` gets a run of its own (--alone). */
int bench_wants_alone(const options *o, size_t index);

#endif
