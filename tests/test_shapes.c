/* Shapes at the edges of the planner, for every scaler x dtype x scope,
 * fitted and applied in one call against the float64 reference: single
 * elements, single rows and columns, primes, tall groups (more than
 * CLS_FUSED_ROWS rows: chunked statistics), wide rows, and groups larger than
 * a slice (forced small slices: column blocks in one pass, or two passes
 * with a host merge), widths around a work-item's column block. Each case
 * runs asking for the statistics and not asking (other kernels). The
 * report's phase count shows which path ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_util.h"

static const cls_scaler scalers[] = {CLS_MINMAX, CLS_ZSCORE, CLS_DECIMAL};
static const char *const scaler_names[] = {"minmax", "zscore", "decimal"};

/* What a shape's report must show, per scope (index: cls_scope). */
typedef struct expect {
    int phases[2];     /* 1 or 2; 0: not checked */
    size_t min_slices; /* the call was cut at least this much */
} expect;

static void check_report(cls_context *ctx, const expect *e, cls_scope scope, const char *label)
{
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    if (e->phases[scope] && rep.phases != e->phases[scope])
        fail_msg("%s: report says %d phase(s), expected %d (%zu slices)", label, rep.phases, e->phases[scope],
                 rep.slices);
    if (rep.slices < e->min_slices)
        fail_msg("%s: %zu slice(s), expected at least %zu", label, rep.slices, e->min_slices);
    assert_int_equal(rep.slices_done, rep.slices);
}

/* One case, fitted and applied twice: asking for the statistics (checked
 * too), and not asking (the kernels then skip them). */
static void check_case(cls_context *ctx, const cls_array *x, const cls_pipeline *p, const expect *e,
                       const char *label)
{
    size_t n = x->batch * x->rows * x->cols;
    double *want = malloc(n * sizeof *want);
    assert_non_null(want);
    ref_fit_transform(x, p, want, NULL);
    for (int ask = 1; ask >= 0; ask--) {
        cls_array y = make_out(x);
        cls_stats *s = NULL;
        cls_status st = cls_fit_transform(ctx, p, x, &y, ask ? &s : NULL);
        if (st != CLS_OK) print_error("%s: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
        assert_int_equal(st, CLS_OK);
        check_report(ctx, e, p->scope, label);
        size_t bad = ref_compare(&y, want, tol_for(x->dtype), ask ? label : "(no statistics asked)");
        ref_free(&y);
        if (bad) {
            free(want);
            cls_stats_destroy(s);
            fail_msg("%s%s: %zu wrong", label, ask ? "" : " (no statistics asked)", bad);
        }
        if (ask) {
            assert_non_null(s);
            check_stats(s, x, p->scope, p->scaler == CLS_ZSCORE, label);
            cls_stats_destroy(s);
        }
    }
    free(want);
}

/* Every scaler, dtype and scope of one shape on ctx; `every` > 1 runs only
 * every every-th of these 12 cases (large shapes on Oclgrind). */
static void run_shape_every(cls_context *ctx, size_t b, size_t r, size_t c, uint64_t seed, unsigned features,
                            const expect *e, int every)
{
    int k = 0;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        for (int sc = 0; sc < 3; sc++) {
            for (int scope = 0; scope < 2; scope++) {
                if (k++ % every || !suite_runs(dt)) continue;
                cls_array x = ref_make(dt, b, r, c, seed + (uint64_t)(t * 100 + sc * 10 + scope), features);
                cls_pipeline p = {0};
                p.scaler = scalers[sc];
                p.scope = scope ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX;
                char label[160];
                snprintf(label, sizeof label, "%zux%zux%zu %s %s %s", b, r, c, scaler_names[sc],
                         dt == CLS_F64 ? "f64" : "f32", scope ? "batch" : "matrix");
                check_case(ctx, &x, &p, e, label);
                ref_free(&x);
            }
        }
    }
}

static void run_shape(cls_context *ctx, size_t b, size_t r, size_t c, uint64_t seed, unsigned features,
                      const expect *e)
{
    run_shape_every(ctx, b, r, c, seed, features, e, 1);
}

static const expect one_pass = {{1, 1}, 1};

static void single_element(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 1, 1, 1, 1000, 0, &one_pass);
    run_shape(ctx, 1, 1, 1, 1010, REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
}

static void one_row_as_rows_by_cols(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 1, 1, 37, 1100, REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
}

static void one_column_as_rows_by_cols(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 1, 53, 1, 1200, REF_MISSING, &one_pass);
    cls_context_destroy(ctx);
}

/* batch x 1 x 1: every matrix is one value (matrix scope: each its own
 * constant group); batch scope sees one column of `batch` rows. */
static void one_column_as_batch_of_single_values(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 53, 1, 1, 1300, REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
}

static void batch_of_single_rows(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 41, 1, 7, 1400, REF_MISSING, &one_pass);
    cls_context_destroy(ctx);
}

static void prime_dimensions(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 7, 13, 17, 1500, REF_MISSING | REF_NEGATIVE, &one_pass);
    run_shape(ctx, 3, 11, 101, 1510, REF_CONSTANT | REF_ALL_MISSING | REF_MISSING, &one_pass);
    cls_context_destroy(ctx);
}

/* More than CLS_FUSED_ROWS = 4096 rows in one group: the statistics run in
 * row chunks merged on the device, still one pass. */
static void tall_skinny_group_uses_chunked_statistics(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape_every(ctx, 1, 10007, 3, 1600, REF_MISSING | REF_NEGATIVE, &one_pass,
                    test_suite_is("oclgrind") ? 2 : 1);
    cls_context_destroy(ctx);
}

/* float32 with mean 1e4 times the spread over chunks of 4096 rows: the
 * chunk merge must keep the shifted mean's precision. */
static void tall_skinny_offset_float32_keeps_precision(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    size_t rows = test_suite_is("oclgrind") ? 4500 : 20011;
    cls_array x = ref_make(CLS_F32, 1, rows, 3, 1650, REF_OFFSET | REF_NEGATIVE | REF_MISSING);
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    check_case(ctx, &x, &p, &one_pass, "offset zscore tall");
    ref_free(&x);
    cls_context_destroy(ctx);
}

/* Several tall groups (matrix scope): each group's chunks must stay its own,
 * also when a slice holds more than one group (the planner puts up to
 * batch / (2 x devices) groups in a slice: 16 matrices give 2 per slice on
 * up to 4 devices). */
static void several_tall_matrices(void **state)
{
    (void)state;
    /* a library that mixes the groups writes past its statistics buffers;
     * a heap so corrupted once hung the process: end it in time instead */
    alarm(240);
    cls_context *ctx = test_context(NULL, 0, 0);
    if (test_suite_is("oclgrind")) run_shape(ctx, 4, 4200, 1, 1700, REF_MISSING, &one_pass);
    else run_shape(ctx, 16, 4200, 2, 1700, REF_MISSING | REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
    alarm(0);
}

/* Batch scope over many short matrices: one group of batch x rows rows,
 * whose chunks cross matrix boundaries. */
static void batch_scope_over_many_rows(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    if (test_suite_is("oclgrind")) run_shape(ctx, 17, 257, 1, 1800, REF_MISSING, &one_pass);
    else run_shape(ctx, 40, 257, 3, 1800, REF_MISSING | REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
}

/* Widths around a work-item's column block: VEC = 8 columns per vector,
 * KV vectors per work-item (PoCL 16: 128 columns; Oclgrind 4: 32), and the
 * lanes of a last, partial vector. */
static void columns_around_work_item_blocks(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    int tiny = test_suite_is("oclgrind");
    const size_t widths[] = {7, 8, 9, 31, 32, 33, 127, 128, 129, 257};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        run_shape_every(ctx, 2, tiny ? 3 : 9, widths[i], 1850 + i, REF_MISSING | REF_NEGATIVE, &one_pass,
                        tiny && widths[i] > 33 ? 3 : 1);
    cls_context_destroy(ctx);
}

/* The largest group the fused kernel takes whole (4096 rows) across several
 * column blocks: each work-item walks 4096 rows three times, past llvmpipe's
 * silent loop limit unless the launch bounds it. */
static void group_of_4096_rows_across_column_blocks(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    if (test_suite_is("oclgrind")) run_shape_every(ctx, 1, 4096, 9, 1870, REF_MISSING, &one_pass, 4);
    else run_shape(ctx, 1, 4096, 150, 1870, REF_MISSING | REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
}

/* Slices of more than 1 MiB of output: PoCL's kernels stream their stores
 * past the cache there: the fused kernel (groups of 1000 and 2000 rows),
 * and the elementwise pass after chunked statistics (5000 rows). */
static void large_slices_with_streaming_stores(void **state)
{
    (void)state;
    if (!test_suite_is("pocl") && !test_suite_is("pocl1"))
        test_skip("PoCL only: the other implementations have no streaming stores");
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 2, 1000, 300, 1880, REF_MISSING | REF_NEGATIVE, &one_pass);
    run_shape(ctx, 1, 5000, 100, 1890, REF_MISSING | REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
}

static void short_wide(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 0);
    run_shape(ctx, 1, 3, 5003, 1900, REF_MISSING | REF_NEGATIVE, &one_pass);
    cls_context_destroy(ctx);
}

/* Groups of at most 4096 rows larger than a 4 KiB slice: cut into column
 * blocks, each block's statistics and scaling still one pass. */
static void groups_larger_than_a_slice_cut_into_column_blocks(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 4096);
    const expect e = {{1, 1}, 4};
    if (test_suite_is("oclgrind")) run_shape(ctx, 2, 100, 33, 2000, REF_MISSING, &e);
    else run_shape(ctx, 2, 100, 300, 2000, REF_MISSING | REF_NEGATIVE, &e);
    cls_context_destroy(ctx);
}

/* Groups of more than 4096 rows that do not fit a slice: partial statistics
 * per slice, merged on the host, then a second pass that scales. */
static void big_groups_run_two_phases_with_host_merge(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 4096);
    const expect both = {{2, 2}, 4};
    int tiny = test_suite_is("oclgrind");
    run_shape(ctx, 1, 4500, tiny ? 1 : 3, 2100, REF_MISSING | REF_NEGATIVE, &both);
    /* batch scope: 3 x 1400 = 4200 rows, two phases; matrix scope: 1400
     * rows per group, column blocks in one pass */
    const expect by_scope = {{1, 2}, 4};
    run_shape(ctx, 3, 1400, tiny ? 2 : 5, 2110, REF_MISSING, &by_scope);
    cls_context_destroy(ctx);
}

static void big_groups_two_phases_with_64k_slices(void **state)
{
    (void)state;
    if (test_suite_is("oclgrind")) test_skip("not on Oclgrind: 180,000 elements per case");
    cls_context *ctx = test_context(NULL, 0, 65536);
    const expect both = {{2, 2}, 4};
    run_shape(ctx, 1, 20011, 9, 2200, REF_MISSING | REF_NEGATIVE, &both);
    run_shape(ctx, 2, 12007, 5, 2210, REF_OFFSET | REF_MISSING, &both);
    cls_context_destroy(ctx);
}

/* Rows too wide for a slice in a two-phase group: the statistics run on
 * rectangles of a few rows x a column block. Thousands of slices: PoCL only
 * (rusticl takes ~40 s, Oclgrind far longer; they run the same kernels in
 * the smaller two-phase cases above). */
static void two_phases_with_row_and_column_tiles(void **state)
{
    (void)state;
    if (!test_suite_is("pocl") && !test_suite_is("pocl1")) test_skip("PoCL only: thousands of slices");
    cls_context *ctx = test_context(NULL, 0, 4096);
    const expect both = {{2, 2}, 100};
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        /* a row of 1040 float32 or 520 float64 is more than 4 KiB */
        size_t cols = dt == CLS_F64 ? 520 : 1040;
        cls_array x = ref_make(dt, 1, 4200, cols, 2300 + (uint64_t)t, REF_MISSING | REF_NEGATIVE);
        for (int sc = 0; sc < 3; sc++) {
            cls_pipeline p = {.scaler = scalers[sc], .scope = sc == 1 ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
            char label[96];
            snprintf(label, sizeof label, "tiles %s %s", scaler_names[sc], dt == CLS_F64 ? "f64" : "f32");
            check_case(ctx, &x, &p, &both, label);
        }
        ref_free(&x);
    }
    cls_context_destroy(ctx);
}

/* The discrete-device path on any device: packed uploads of column blocks
 * and of rectangles, and slices kept resident between the two phases. */
static void small_slices_through_pinned_staging(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, CLS_FORCE_STAGING, 4096);
    const expect blocks = {{1, 1}, 4}, two = {{2, 2}, 4};
    if (test_suite_is("oclgrind")) {
        run_shape(ctx, 2, 60, 40, 2400, REF_MISSING, &blocks);
        run_shape(ctx, 1, 4500, 1, 2410, REF_MISSING, &two);
    } else {
        run_shape(ctx, 2, 100, 300, 2400, REF_MISSING | REF_NEGATIVE, &blocks);
        run_shape(ctx, 1, 4500, 3, 2410, REF_MISSING | REF_NEGATIVE, &two);
    }
    cls_context_destroy(ctx);
}

/* Caller memory from cls_host_alloc on the staging path: slices go by DMA
 * straight from and to it (whole rows, or rectangles of column blocks),
 * with no staging copy. */
static void small_slices_from_pinned_host_memory(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, CLS_FORCE_STAGING, 4096);
    int tiny = test_suite_is("oclgrind");
    const size_t shapes[][3] = {{2, 60, tiny ? 20 : 300}, {1, 4500, tiny ? 1 : 3}};
    const expect e[2] = {{{1, 1}, 2}, {{2, 2}, 4}};
    for (size_t k = 0; k < 2; k++)
        for (int t = 0; t < 2; t++) {
            cls_dtype dt = t ? CLS_F64 : CLS_F32;
            if (!suite_runs(dt)) continue;
            cls_array x = ref_make(dt, shapes[k][0], shapes[k][1], shapes[k][2], 2500 + k * 10 + (uint64_t)t,
                                   REF_MISSING | REF_NEGATIVE);
            size_t bytes = x.batch * x.rows * x.cols * (dt == CLS_F64 ? 8 : 4);
            void *pinned = NULL;
            cls_status st = cls_host_alloc(ctx, bytes, &pinned);
            if (st != CLS_OK) print_error("cls_host_alloc: %s\n", cls_last_error(ctx));
            assert_int_equal(st, CLS_OK);
            memcpy(pinned, x.data, bytes);
            cls_array xp = x;
            xp.data = pinned;
            for (int sc = 0; sc < 3; sc++) {
                cls_pipeline p = {.scaler = scalers[sc], .scope = sc == 1 ? CLS_SCOPE_BATCH : CLS_SCOPE_MATRIX};
                char label[128];
                snprintf(label, sizeof label, "pinned %zux%zux%zu %s %s", x.batch, x.rows, x.cols, scaler_names[sc],
                         dt == CLS_F64 ? "f64" : "f32");
                check_case(ctx, &xp, &p, &e[k], label);
            }
            cls_host_free(ctx, pinned);
            ref_free(&x);
        }
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_element),
        cmocka_unit_test(one_row_as_rows_by_cols),
        cmocka_unit_test(one_column_as_rows_by_cols),
        cmocka_unit_test(one_column_as_batch_of_single_values),
        cmocka_unit_test(batch_of_single_rows),
        cmocka_unit_test(prime_dimensions),
        cmocka_unit_test(tall_skinny_group_uses_chunked_statistics),
        cmocka_unit_test(tall_skinny_offset_float32_keeps_precision),
        cmocka_unit_test(batch_scope_over_many_rows),
        cmocka_unit_test(columns_around_work_item_blocks),
        cmocka_unit_test(group_of_4096_rows_across_column_blocks),
        cmocka_unit_test(large_slices_with_streaming_stores),
        cmocka_unit_test(short_wide),
        cmocka_unit_test(groups_larger_than_a_slice_cut_into_column_blocks),
        cmocka_unit_test(big_groups_run_two_phases_with_host_merge),
        cmocka_unit_test(big_groups_two_phases_with_64k_slices),
        cmocka_unit_test(two_phases_with_row_and_column_tiles),
        cmocka_unit_test(small_slices_through_pinned_staging),
        cmocka_unit_test(small_slices_from_pinned_host_memory),
        /* last: on a library that mixes the groups of a slice it may also
         * corrupt the heap */
        cmocka_unit_test(several_tall_matrices),
    };
    return TEST_RUN("shapes", tests, NULL, NULL);
}
