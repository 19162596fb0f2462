/* The per-column tables' allocator (src/util/table.c): a large table freed
 * with cls_table_free is kept and handed to the next table of about its
 * size (no fresh pages for the kernel to zero: on 1 x 10^6 columns that
 * was a third of a fit_transform), within a bound on the bytes kept; a
 * small table or one far smaller than a kept one is not served from it;
 * cls_table_trim (cls_context_destroy) frees them all. No OpenCL. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "util/table.h"

#define MIB ((size_t)1 << 20)

static void a_freed_table_serves_the_next_of_its_size(void **state)
{
    (void)state;
    cls_table_hold(); /* as a live context does */
    char *a = cls_table_alloc(80 * MIB);
    assert_non_null(a);
    memset(a, 1, 80 * MIB);
    cls_table_free(a, 80 * MIB);
    size_t n = 0;
    assert_true(cls_table_kept(&n) == 80 * MIB && n == 1);
    char *b = cls_table_alloc(79 * MIB + 5);
    assert_ptr_equal(a, b); /* taken back: nothing kept now */
    assert_true(cls_table_kept(&n) == 0 && n == 0);
    cls_table_free(b, 79 * MIB + 5);
    /* less than half of it: a fresh table, the large one stays kept */
    char *c = cls_table_alloc(8 * MIB);
    assert_non_null(c);
    assert_ptr_not_equal(c, b);
    assert_true(cls_table_kept(&n) == 80 * MIB && n == 1);
    cls_table_free(c, 8 * MIB);
    assert_true(cls_table_kept(&n) == 88 * MIB && n == 2);
    /* the smallest that fits is the one given */
    char *d = cls_table_alloc(7 * MIB);
    assert_ptr_equal(d, c);
    cls_table_free(d, 7 * MIB);
    cls_table_trim();
    assert_true(cls_table_kept(&n) == 0 && n == 0);
}

static void small_tables_are_malloc_and_never_kept(void **state)
{
    (void)state;
    cls_table_trim();
    void *a = cls_table_alloc(1000);
    assert_non_null(a);
    cls_table_free(a, 1000);
    cls_table_free(NULL, 80 * MIB);
    size_t n = 0;
    assert_true(cls_table_kept(&n) == 0 && n == 0);
}

static void the_bytes_kept_are_bounded_oldest_out_first(void **state)
{
    (void)state;
    cls_table_hold();
    size_t each = 40 * MIB, k = CLS_TABLE_KEEP_BYTES / each + 2;
    void **t = calloc(k, sizeof *t);
    assert_non_null(t);
    for (size_t i = 0; i < k; i++) assert_non_null(t[i] = cls_table_alloc(each));
    for (size_t i = 0; i < k; i++) cls_table_free(t[i], each);
    size_t n = 0;
    assert_true(cls_table_kept(&n) <= CLS_TABLE_KEEP_BYTES);
    assert_true(n == CLS_TABLE_KEEP_BYTES / each);
    /* the newest are those kept: the last one freed comes back */
    void *again = cls_table_alloc(each);
    int newest = 0;
    for (size_t i = k - n; i < k; i++) newest |= again == t[i];
    assert_true(newest);
    cls_table_free(again, each);
    /* larger than the bound: freed at once */
    void *huge = cls_table_alloc(CLS_TABLE_KEEP_BYTES + MIB);
    assert_non_null(huge);
    size_t before = cls_table_kept(NULL);
    cls_table_free(huge, CLS_TABLE_KEEP_BYTES + MIB);
    assert_true(cls_table_kept(NULL) == before);
    cls_table_trim();
    free(t);
}

/* With no context alive, a table freed goes back to the system: nothing
 * stays reachable after the last context (statistics outlive it). */
static void without_a_context_nothing_is_kept(void **state)
{
    (void)state;
    void *a = cls_table_alloc(80 * MIB);
    assert_non_null(a);
    cls_table_free(a, 80 * MIB);
    size_t n = 1;
    assert_true(cls_table_kept(&n) == 0 && n == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_freed_table_serves_the_next_of_its_size),
        cmocka_unit_test(small_tables_are_malloc_and_never_kept),
        cmocka_unit_test(the_bytes_kept_are_bounded_oldest_out_first),
        cmocka_unit_test(without_a_context_nothing_is_kept),
    };
    return test_run("table", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}
