/* clscale bench --file PATH: the files row (bench_files.c). */
#ifndef CLS_BENCH_FILES_H
#define CLS_BENCH_FILES_H

/* Times cp + sync, clscale and a numpy memmap loop on PATH, alternating,
 * `repeats` rounds; prints the table. Returns an exit status. */
int bench_files(const char *path, int repeats);

#endif
