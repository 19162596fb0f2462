/* The users' three workloads (tools/bench.h), each run on every device alone
 * and on all devices together, against the float64 reference:
 *   (a) min-max per matrix of 18 x 60 x 98450 float64;
 *   (b) discount of 100 x 4000 x 5 float64 by factors 4000 x 5;
 *   (c) z-score over the whole batch of one 2,000,000 x 8 float32 table,
 *       cut across devices.
 * Full sizes on PoCL; elsewhere smaller shapes of the same structure
 * (rusticl is ~10x slower and has no float64, Oclgrind ~20 us per element).
 * The data comes from bench_fill(), the pipeline from bench_pipeline(); the
 * reference is tests/reference.c with the pipeline written out here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "pipeline_util.h"

static int full_size(void) { return test_suite_is("pocl") || test_suite_is("pocl1"); }

/* The workload `name` at full size, reshaped for the smaller suites. */
static bench_workload workload(const char *name)
{
    bench_workload all[8];
    size_t n = bench_workloads(1.0, all, 8);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i].name, name) != 0) continue;
        bench_workload w = all[i];
        if (full_size()) return w;
        int tiny = test_suite_is("oclgrind");
        switch (w.kind) {
        case BENCH_MINMAX_MATRIX:
            w.batch = tiny ? 2 : 3;
            w.cols = tiny ? 83 : 257;
            break;
        case BENCH_DISCOUNT:
            w.batch = tiny ? 2 : 4;
            break;
        case BENCH_ZSCORE_BATCH:
            w.rows = tiny ? 5000 : test_suite_is("rusticl") ? 200000 : 20000;
            break;
        }
        return w;
    }
    fail_msg("no workload %s", name);
    return all[0];
}

/* What the workload means, written out (bench_pipeline must agree). */
static cls_pipeline meaning(const bench_workload *w, const cls_array *f)
{
    cls_pipeline p = {0};
    if (w->kind == BENCH_MINMAX_MATRIX) p.scaler = CLS_MINMAX;
    if (w->kind == BENCH_DISCOUNT) p.factors = f;
    if (w->kind == BENCH_ZSCORE_BATCH) {
        p.scaler = CLS_ZSCORE;
        p.scope = CLS_SCOPE_BATCH;
    }
    return p;
}

typedef struct prepared {
    bench_workload w;
    cls_array x, f;            /* f.data NULL: no factors */
    double *want;
    cls_column_stats *stats;   /* reference statistics, or NULL */
    size_t slice_bytes;
} prepared;

static prepared prepare(const char *name, uint64_t seed)
{
    prepared P;
    memset(&P, 0, sizeof P);
    P.w = workload(name);
    size_t es = P.w.dtype == CLS_F64 ? 8 : 4, n = bench_elements(&P.w);
    P.x = (cls_array){.data = malloc(n * es), .dtype = P.w.dtype, .batch = P.w.batch, .rows = P.w.rows, .cols = P.w.cols};
    assert_non_null(P.x.data);
    if (P.w.kind == BENCH_DISCOUNT) {
        P.f = (cls_array){.data = malloc(P.w.frows * P.w.fcols * es), .dtype = P.w.dtype, .batch = 1, .rows = P.w.frows, .cols = P.w.fcols};
        assert_non_null(P.f.data);
    }
    bench_fill(&P.w, P.x.data, P.f.data, seed);
    P.want = malloc(n * sizeof *P.want);
    assert_non_null(P.want);
    cls_pipeline p = meaning(&P.w, &P.f);
    if (p.scaler != CLS_NONE) {
        P.stats = calloc(ref_groups(&P.x, p.scope) * P.x.cols, sizeof *P.stats);
        assert_non_null(P.stats);
    }
    ref_fit_transform(&P.x, &p, P.want, P.stats);
    /* the scaled-down table is cut into slices all the same, as the full
     * one is by its size: two passes, across devices */
    if (P.w.kind == BENCH_ZSCORE_BATCH && !full_size()) {
        P.slice_bytes = n * es / 16;
        if (P.slice_bytes < 4096) P.slice_bytes = 4096;
    }
    return P;
}

static void release(prepared *P)
{
    free(P->x.data);
    free(P->f.data);
    free(P->want);
    free(P->stats);
}

/* Runs the workload on ctx and checks the output, the statistics and the
 * report. Returns how many devices completed slices (0: sat out). */
static size_t run_on(cls_context *ctx, const prepared *P, const char *label)
{
    cls_pipeline p = bench_pipeline(&P->w, P->f.data ? &P->f : NULL);
    int fp64 = 0;
    for (size_t i = 0; i < cls_device_count(ctx); i++) {
        cls_device_info info;
        assert_int_equal(cls_device_get(ctx, i, &info), CLS_OK);
        fp64 |= info.fp64;
    }
    cls_array y = make_out(&P->x);
    cls_stats *s = NULL;
    cls_status st = p.scaler == CLS_NONE ? cls_transform(ctx, &p, NULL, &P->x, &y)
                                         : cls_fit_transform(ctx, &p, &P->x, &y, &s);
    if (P->w.dtype == CLS_F64 && !fp64) {
        /* float64 on a device without cl_khr_fp64: refused, said why */
        if (st != CLS_E_UNSUPPORTED) fail_msg("%s: %s, expected CLS_E_UNSUPPORTED", label, cls_status_str(st));
        assert_non_null(strstr(cls_last_error(ctx), "fp64"));
        ref_free(&y);
        return 0;
    }
    if (st != CLS_OK) print_error("%s: %s: %s\n", label, cls_status_str(st), cls_last_error(ctx));
    assert_int_equal(st, CLS_OK);

    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    assert_int_equal(rep.slices_done, rep.slices);
    assert_true(rep.bytes > 0);
    size_t sum = 0, used = 0;
    for (size_t i = 0; i < rep.ndevices; i++) {
        sum += rep.devices[i].slices;
        used += rep.devices[i].slices > 0;
        assert_null(rep.devices[i].failed);
        /* float64: the devices without cl_khr_fp64 sit out, and say so */
        cls_device_info info;
        assert_int_equal(cls_device_get(ctx, i, &info), CLS_OK);
        if (P->w.dtype == CLS_F64 && !info.fp64) assert_non_null(rep.devices[i].sat_out);
    }
    assert_int_equal(sum, rep.slices_done);
    print_message("# %s: %zu slices, %d phase(s), %zu device(s) took part, %.3f s\n", label, rep.slices, rep.phases,
                  used, rep.wall);

    size_t bad = ref_compare(&y, P->want, tol_for(P->w.dtype), label);
    ref_free(&y);
    assert_int_equal(bad, 0);
    if (s) {
        cls_stats_info info;
        assert_int_equal(cls_stats_describe(s, &info), CLS_OK);
        size_t n = info.groups * info.cols;
        assert_int_equal(n, ref_groups(&P->x, p.scope) * P->x.cols);
        cls_column_stats *got = malloc(n * sizeof *got);
        assert_non_null(got);
        for (size_t g = 0; g < info.groups; g++)
            for (size_t c = 0; c < info.cols; c++)
                assert_int_equal(test_column(s, g, c, &got[g * info.cols + c]), CLS_OK);
        bad = ref_compare_stats(got, P->stats, n, info.has_moments, P->w.dtype == CLS_F64 ? 1e-9 : 1e-4, label);
        free(got);
        cls_stats_destroy(s);
        assert_int_equal(bad, 0);
    }
    return used;
}

/* Every device of the suite alone (selected by its global index), then
 * all of them together. Returns the devices that took part together. */
static size_t each_device_and_all(const prepared *P)
{
    cls_context *all = test_context(NULL, 0, P->slice_bytes);
    size_t n = cls_device_count(all);
    assert_true(n >= 1);
    for (size_t i = 0; i < n; i++) {
        cls_device_info info;
        assert_int_equal(cls_device_get(all, i, &info), CLS_OK);
        char sel[32], label[256];
        snprintf(sel, sizeof sel, "%zu", info.index);
        snprintf(label, sizeof label, "%s %zux%zux%zu on device %s (%s)", P->w.name, P->w.batch, P->w.rows,
                 P->w.cols, sel, info.name);
        cls_context *one = test_context(sel, 0, P->slice_bytes);
        assert_int_equal(cls_device_count(one), 1);
        run_on(one, P, label);
        cls_context_destroy(one);
    }
    char label[256];
    snprintf(label, sizeof label, "%s %zux%zux%zu on all %zu devices", P->w.name, P->w.batch, P->w.rows, P->w.cols,
             n);
    size_t used = run_on(all, P, label);
    cls_context_destroy(all);
    return used;
}

static void minmax_18x60x98450_f64_per_matrix_each_device_and_all(void **state)
{
    (void)state;
    prepared P = prepare("seed-a", 6000);
    each_device_and_all(&P);
    release(&P);
}

static void discount_100x4000x5_by_4000x5_f64_each_device_and_all(void **state)
{
    (void)state;
    prepared P = prepare("seed-b", 6100);
    each_device_and_all(&P);
    release(&P);
}

static void zscore_table_2000000x8_f32_over_batch_cut_across_devices(void **state)
{
    (void)state;
    prepared P = prepare("table", 6200);
    size_t used = each_device_and_all(&P);
    /* two identical devices: the table's slices go to both */
    if (test_suite_is("pocl")) assert_int_equal(used, 2);
    release(&P);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(minmax_18x60x98450_f64_per_matrix_each_device_and_all),
        cmocka_unit_test(discount_100x4000x5_by_4000x5_f64_each_device_and_all),
        cmocka_unit_test(zscore_table_2000000x8_f32_over_batch_cut_across_devices),
    };
    return TEST_RUN("workloads", tests, NULL, NULL);
}
