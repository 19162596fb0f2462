/* The program binary cache: miss, hit, corrupted and truncated entries, and
 * the cache turned off. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "internal.h"

static int count_entries(const char *dir, char *first, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".bin")) {
            if (n == 0 && first) snprintf(first, len, "%s/%s", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

static cls_context *make(const char *dir, cls_status *st)
{
    cls_config cfg = {0};
    cfg.cache_dir = dir;
    cfg.devices = "0";
    cls_context *ctx = NULL;
    *st = cls_context_create(&cfg, &ctx);
    return ctx;
}

static int from_cache(const char *dir)
{
    cls_status st;
    cls_context *ctx = make(dir, &st);
    if (st != CLS_OK) print_error("%s\n", cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);
    int hit = ctx->devs[0].from_cache;
    cls_context_destroy(ctx);
    return hit;
}

static void miss_then_hit(void **state)
{
    (void)state;
    char dir[1024];
    test_tmpdir(dir, sizeof dir, "cache-hit");
    assert_int_equal(count_entries(dir, NULL, 0), 0);
    assert_false(from_cache(dir));
    assert_int_equal(count_entries(dir, NULL, 0), 1);
    assert_true(from_cache(dir));
    assert_int_equal(count_entries(dir, NULL, 0), 1);
}

static void corrupt_entry_is_rebuilt(void **state)
{
    (void)state;
    char dir[1024], entry[2048];
    test_tmpdir(dir, sizeof dir, "cache-corrupt");
    assert_false(from_cache(dir));
    assert_int_equal(count_entries(dir, entry, sizeof entry), 1);
    /* flip one byte in the middle of the payload */
    FILE *f = fopen(entry, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size / 2, SEEK_SET);
    int c = fgetc(f);
    fseek(f, size / 2, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
    assert_false(from_cache(dir));
    assert_true(from_cache(dir));
}

static void truncated_entry_is_rebuilt(void **state)
{
    (void)state;
    char dir[1024], entry[2048];
    test_tmpdir(dir, sizeof dir, "cache-trunc");
    assert_false(from_cache(dir));
    assert_int_equal(count_entries(dir, entry, sizeof entry), 1);
    struct stat sb;
    assert_int_equal(stat(entry, &sb), 0);
    assert_int_equal(truncate(entry, sb.st_size / 3), 0);
    assert_false(from_cache(dir));
    assert_true(from_cache(dir));
    /* a file that is not an entry at all */
    {
        FILE *f = fopen(entry, "wb");
        assert_non_null(f);
        fputs("not a cache entry", f);
        fclose(f);
    }
    assert_false(from_cache(dir));
    assert_true(from_cache(dir));
}

static void empty_dir_turns_the_cache_off(void **state)
{
    (void)state;
    assert_false(from_cache(""));
    assert_false(from_cache(""));
}

static void unwritable_cache_only_costs_time(void **state)
{
    (void)state;
    assert_false(from_cache("/proc/clscale-cannot-write-here"));
}

static void entries_round_trip_and_reject_other_keys(void **state)
{
    (void)state;
    char dir[1024];
    test_tmpdir(dir, sizeof dir, "cache-unit");
    unsigned char data[1000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 7 + 3);
    uint64_t key = cls_cache_key("dev", "drv", "src", 3, "-DVEC=8");
    assert_true(key != cls_cache_key("dev", "drv", "src", 3, "-DVEC=1"));
    assert_true(key != cls_cache_key("dev", "drv2", "src", 3, "-DVEC=8"));
    assert_true(key != cls_cache_key("dev2", "drv", "src", 3, "-DVEC=8"));
    assert_true(key != cls_cache_key("dev", "drv", "srx", 3, "-DVEC=8"));
    assert_int_equal(cls_cache_put(dir, key, data, sizeof data), 0);
    unsigned char *got;
    size_t len;
    assert_int_equal(cls_cache_get(dir, key, &got, &len), 0);
    assert_int_equal(len, sizeof data);
    assert_memory_equal(got, data, sizeof data);
    free(got);
    assert_int_equal(cls_cache_get(dir, key + 1, &got, &len), -1);
    /* an entry renamed to another key is not trusted */
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s/%016llx.bin", dir, (unsigned long long)key);
    snprintf(b, sizeof b, "%s/%016llx.bin", dir, (unsigned long long)(key + 1));
    assert_int_equal(rename(a, b), 0);
    assert_int_equal(cls_cache_get(dir, key + 1, &got, &len), -1);
    assert_int_equal(access(b, F_OK), -1); /* and removed */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(miss_then_hit),
        cmocka_unit_test(corrupt_entry_is_rebuilt),
        cmocka_unit_test(truncated_entry_is_rebuilt),
        cmocka_unit_test(empty_dir_turns_the_cache_off),
        cmocka_unit_test(unwritable_cache_only_costs_time),
        cmocka_unit_test(entries_round_trip_and_reject_other_keys),
    };
    return TEST_RUN("cache", tests, NULL, NULL);
}
