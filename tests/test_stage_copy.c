/* The host copies of staging (src/engine/stage.c): a slice's copy is cut
 * into items of at most 1 MiB that the copy pool's threads share, whatever
 * its shape, and packing then unpacking gives back every byte. A slice of
 * one long row (seed-b-large's discount, merged into rows of 5 M columns
 * and cut into column blocks) had been one item, copied by one thread. No
 * OpenCL call is made. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "engine/job.h"
#include "util/pool.h"

static void check(uint64_t B, uint64_t R, size_t C, uint64_t row0, uint64_t nrows, size_t col0, size_t ncols)
{
    cls_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.pool = cls_pool_create(4);
    assert_non_null(ctx.pool);
    cls_job job;
    memset(&job, 0, sizeof job);
    job.ctx = &ctx;
    job.es = 8;
    job.B = B;
    job.R = R;
    job.C = C;
    cls_slice s;
    memset(&s, 0, sizeof s);
    s.row0 = row0;
    s.nrows = nrows;
    s.col0 = col0;
    s.ncols = ncols;
    size_t n = (size_t)(B * R) * C, m = (size_t)nrows * ncols;
    double *src = malloc(n * 8), *dst = malloc(n * 8), *slot = malloc(m * 8);
    assert_non_null(src);
    assert_non_null(dst);
    assert_non_null(slot);
    for (size_t i = 0; i < n; i++) {
        src[i] = (double)i + 0.5;
        dst[i] = -1;
    }
    cls_copy_plan p = cls_stage_copy_plan(&job, &s);
    size_t bytes = m * 8;
    /* no item above 1 MiB (plus a cache line of rounding), enough items for the threads */
    assert_true(p.piece * p.rows_per <= (1u << 20) + 64 || p.row_bytes * p.rows_per <= (1u << 20));
    assert_true(p.items >= bytes / ((1u << 20) + 64));
    cls_stage_pack(&job, &s, (const char *)src, slot);
    for (uint64_t r = 0; r < nrows; r++)
        for (size_t c = 0; c < ncols; c++)
            assert_true(slot[r * ncols + c] == src[(row0 + r) * C + col0 + c]);
    cls_stage_unpack(&job, &s, slot, (char *)dst);
    for (uint64_t r = 0; r < B * R; r++)
        for (size_t c = 0; c < C; c++) {
            int in = r >= row0 && r < row0 + nrows && c >= col0 && c < col0 + ncols;
            assert_true(dst[r * C + c] == (in ? src[r * C + c] : -1));
        }
    free(src);
    free(dst);
    free(slot);
    cls_pool_destroy(ctx.pool);
}

static void a_slice_of_one_long_row_is_shared_by_the_threads(void **state)
{
    (void)state;
    /* seed-b-large's shape, scaled: rows of 600000 columns, a column block
     * of 4.4 MiB of the second row */
    check(3, 1, 600000, 1, 1, 12345, 580000);
    cls_copy_plan p;
    cls_job job;
    memset(&job, 0, sizeof job);
    job.es = 8;
    job.C = 5000000;
    cls_slice s = {.row0 = 0, .nrows = 1, .col0 = 0, .ncols = 4194304};
    p = cls_stage_copy_plan(&job, &s);
    assert_true(p.items >= 32); /* 32 MiB: every thread of a 16-core host gets work */
}

static void long_strided_rows_are_cut_into_pieces(void **state)
{
    (void)state;
    check(1, 16, 400000, 2, 9, 1000, 200003); /* 1.5 MiB rows, 9 of them */
}

static void short_rows_go_in_blocks_and_whole_slices_in_chunks(void **state)
{
    (void)state;
    check(2, 300, 700, 17, 400, 5, 333);  /* strided, short rows */
    check(2, 300, 700, 100, 350, 0, 700); /* every column: one contiguous block */
    check(1, 1, 7, 0, 1, 2, 3);           /* tiny */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_slice_of_one_long_row_is_shared_by_the_threads),
        cmocka_unit_test(long_strided_rows_are_cut_into_pieces),
        cmocka_unit_test(short_rows_go_in_blocks_and_whole_slices_in_chunks),
    };
    return TEST_RUN("stage_copy", tests, NULL, NULL);
}
