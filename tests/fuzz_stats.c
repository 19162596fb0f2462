/* libFuzzer target for cls_stats_load: every input is written to a file and
 * loaded; whatever comes back is freed. A crash, a sanitizer report or a leak
 * is a bug; a status of CLS_E_FORMAT is the expected answer to junk.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *       tests/fuzz_stats.c src/stats.c src/stats_io.c src/hash.c -lm -lpthread -o /tmp/fuzz_stats
 *   /tmp/fuzz_stats -max_total_time=60 CORPUS_DIR
 *
 * Seed the corpus with a few files cls_stats_save wrote, so that the fuzzer
 * gets past the magic and the checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static char path[64];

static void remove_file(void) { unlink(path); }

static void load(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    cls_stats *s = NULL;
    cls_status st = cls_stats_load(path, &s);
    if ((st == CLS_OK) != (s != NULL)) abort();
    if (st != CLS_OK && !cls_last_error(NULL)[0]) abort();
    if (s) {
        cls_stats_info in;
        cls_stats_describe(s, &in);
        volatile cls_column_stats c = cls_stats_columns(s)[(in.groups - 1) * in.cols + in.cols - 1];
        (void)c;
        cls_stats_destroy(s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/fuzz_stats.%ld", (long)getpid());
        atexit(remove_file);
    }
    load(data, size);
    /* The same bytes with a valid checksum, so that mutations get past it
     * into the header's values. */
    if (size >= 4) {
        uint8_t *copy = malloc(size);
        if (!copy) return 0;
        memcpy(copy, data, size);
        uint32_t crc = cls_crc32(0, copy, size - 4);
        for (int i = 0; i < 4; i++) copy[size - 4 + i] = (uint8_t)(crc >> (8 * i));
        load(copy, size);
        free(copy);
    }
    return 0;
}
