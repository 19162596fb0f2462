/* cls_fit alone against the float64 reference, through each of its cuts
 * (pipeline.c fit_by_groups): whole groups, several per slice; all rows of
 * column blocks of a group; a group taller than one work-item's chunk
 * (partial statistics merged on the device); and the row tiles of a group
 * too tall for column blocks of a page (merged on the host). Counts,
 * missing, min and max exact; mean and m2 as check_stats holds them
 * (float32 with a mean 1e4 times its spread included). */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline_util.h"

/* Fits x with min-max (extremes) and z-score (moments) in both scopes on a
 * context with slices of `slice_bytes` (0: automatic) and compares. */
static void fit_all(size_t b, size_t r, size_t c, unsigned features, size_t slice_bytes, uint64_t seed)
{
    cls_context *ctx = test_context(NULL, 0, slice_bytes);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        cls_array x = ref_make(dt, b, r, c, seed + (uint64_t)t, features);
        for (int sc = 0; sc < 2; sc++) {
            for (int scope = 0; scope < 2; scope++) {
                cls_pipeline p = {0};
                p.scaler = sc ? CLS_ZSCORE : CLS_MINMAX;
                p.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
                char label[160];
                snprintf(label, sizeof label, "%zux%zux%zu %s %s %s slices %zu features %#x", b, r, c,
                         dt == CLS_F64 ? "f64" : "f32", sc ? "zscore" : "minmax", scope ? "batch" : "matrix",
                         slice_bytes, features);
                cls_stats *s = NULL;
                cls_status st = cls_fit(ctx, &p, &x, &s);
                if (st != CLS_OK) print_error("%s: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
                assert_int_equal(st, CLS_OK);
                check_stats(s, &x, p.scope, sc, label);
                cls_stats_destroy(s);
            }
        }
        ref_free(&x);
    }
    cls_context_destroy(ctx);
}

static int small_only(void) { return test_suite_is("oclgrind"); }

static void shapes_of_one(void **state)
{
    (void)state;
    fit_all(1, 1, 1, 0, 0, 11);
    fit_all(1, 7, 1, REF_NEGATIVE, 0, 12);
    fit_all(5, 1, 3, 0, 0, 13);
}

/* many small groups in one slice: dimension 1 of the launch is the group */
static void several_groups_per_slice(void **state)
{
    (void)state;
    fit_all(9, 5, 37, REF_MISSING | REF_CONSTANT | REF_ALL_MISSING, 0, 21);
    fit_all(13, 3, 200, REF_MISSING | REF_NEGATIVE, 0, 22);
}

/* 64 KiB slices: a matrix of 12 x 1500 (144 KB float64) is cut into column
 * blocks of all its rows; the batch's 36 rows, whose column blocks of a
 * page would not fit, go by row tiles and the host merge */
static void column_blocks_and_row_tiles(void **state)
{
    (void)state;
    if (small_only()) {
        fit_all(2, 12, 700, REF_MISSING | REF_ALL_MISSING, 16384, 31);
        return;
    }
    fit_all(3, 12, 1500, REF_MISSING | REF_CONSTANT | REF_ALL_MISSING, 65536, 31);
    fit_all(3, 12, 1501, REF_OFFSET | REF_NEGATIVE, 65536, 32);
}

/* a group taller than a work-item's chunk (512 rows): partial statistics
 * per chunk, merged on the device, in whole-group slices */
static void group_taller_than_a_chunk(void **state)
{
    (void)state;
    if (small_only()) {
        fit_all(1, 1100, 3, REF_MISSING, 0, 41);
        return;
    }
    fit_all(3, 1500, 9, REF_MISSING | REF_ALL_MISSING, 0, 41);
    fit_all(2, 4500, 5, REF_OFFSET, 0, 42);
}

/* float32 offset columns (mean 1e4 x spread) through every cut */
static void float32_offset_through_every_cut(void **state)
{
    (void)state;
    size_t cols = small_only() ? 300 : 1500;
    fit_all(4, 6, cols, REF_OFFSET | REF_MISSING, 0, 51);
    fit_all(3, 12, cols, REF_OFFSET, small_only() ? 16384 : 65536, 52);
}

/* wide groups: from 32768 entries the conversion of a slice's device
 * statistics is shared out in pieces of 16384 columns (engine/slice.c) */
static void wide_groups_convert_in_pieces(void **state)
{
    (void)state;
    if (small_only()) {
        fit_all(1, 1, 33000, REF_MISSING | REF_ALL_MISSING, 0, 61);
        return;
    }
    fit_all(2, 3, 40000, REF_MISSING | REF_CONSTANT | REF_ALL_MISSING, 0, 61);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_of_one),
        cmocka_unit_test(several_groups_per_slice),
        cmocka_unit_test(column_blocks_and_row_tiles),
        cmocka_unit_test(group_taller_than_a_chunk),
        cmocka_unit_test(float32_offset_through_every_cut),
        cmocka_unit_test(wide_groups_convert_in_pieces),
    };
    return TEST_RUN("fit", tests, NULL, NULL);
}
