/* Bad arguments to cls_fit, cls_transform and cls_fit_transform: each is
 * refused with its documented status and a message that names the problem,
 * and loses nothing: input and output keep every bit, a statistics out
 * pointer comes back NULL, and the context still works. Also what
 * cls_last_report says after calls that succeed. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pipeline_util.h"

/* The group's context and data: x (3 x 20 x 5 float32), its output y (a
 * sentinel), copies of both to compare with, and statistics fitted on x. */
typedef struct fixture {
    cls_context *ctx;
    cls_array x, y, x0, y0;
    cls_stats *mm_matrix, *z_batch;
} fixture;

static fixture F;

static size_t bytes_of(const cls_array *a) { return a->batch * a->rows * a->cols * (a->dtype == CLS_F64 ? 8 : 4); }

static int group_setup(void **state)
{
    (void)state;
    cls_config cfg = {0};
    if (cls_context_create(&cfg, &F.ctx) != CLS_OK) return -1;
    F.x = ref_make(CLS_F32, 3, 20, 5, 7000, REF_MISSING | REF_NEGATIVE);
    F.y = make_out(&F.x);
    F.x0 = ref_copy(&F.x);
    F.y0 = ref_copy(&F.y);
    cls_pipeline mm = {.scaler = CLS_MINMAX}, z = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH};
    if (cls_fit(F.ctx, &mm, &F.x, &F.mm_matrix) != CLS_OK || cls_fit(F.ctx, &z, &F.x, &F.z_batch) != CLS_OK)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cls_stats_destroy(F.mm_matrix);
    cls_stats_destroy(F.z_batch);
    ref_free(&F.x);
    ref_free(&F.y);
    ref_free(&F.x0);
    ref_free(&F.y0);
    cls_context_destroy(F.ctx);
    return 0;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

/* Successful calls keep the last message, so each refusal is preceded by
 * one with a known message that the refusal must replace. */
#define PRIMER "31337"
static void prime(void)
{
    cls_pipeline p = {.scaler = (cls_scaler)31337};
    cls_stats *s = NULL;
    assert_int_equal(cls_fit(F.ctx, &p, &F.x, &s), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(F.ctx), PRIMER));
}

/* `st` is `want`, the message is new and names `word`, and the fixture's
 * arrays hold what they held. */
static void refused(cls_status st, cls_status want, const char *word, const char *what)
{
    const char *msg = cls_last_error(F.ctx);
    if (st != want)
        fail_msg("%s: %s, expected %s (message: %s)", what, cls_status_str(st), cls_status_str(want), msg);
    if (!msg || !*msg) fail_msg("%s: empty message", what);
    if (strstr(msg, PRIMER)) fail_msg("%s: the message was not replaced: %s", what, msg);
    if (!contains_nocase(msg, word)) fail_msg("%s: message \"%s\" does not name \"%s\"", what, msg, word);
    assert_memory_equal(F.x.data, F.x0.data, bytes_of(&F.x));
    assert_memory_equal(F.y.data, F.y0.data, bytes_of(&F.y));
}

/* The three calls with pipeline p, input in, output out, stats s (for
 * cls_transform); each must be refused alike. */
static void all_refuse(const cls_pipeline *p, const cls_array *in, cls_array *out, const cls_stats *s,
                       cls_status want, const char *word, const char *what)
{
    char label[160];
    cls_stats *got = (cls_stats *)&got; /* must come back NULL */
    prime();
    snprintf(label, sizeof label, "cls_fit: %s", what);
    refused(cls_fit(F.ctx, p, in, &got), want, word, label);
    assert_null(got);
    prime();
    snprintf(label, sizeof label, "cls_transform: %s", what);
    refused(cls_transform(F.ctx, p, s, in, out), want, word, label);
    got = (cls_stats *)&got;
    prime();
    snprintf(label, sizeof label, "cls_fit_transform: %s", what);
    refused(cls_fit_transform(F.ctx, p, in, out, &got), want, word, label);
    assert_null(got);
}

/* An array like x (same data) with another shape or dtype. */
static cls_array like_x(size_t b, size_t r, size_t c) { return (cls_array){.data = F.x.data, .dtype = F.x.dtype, .batch = b, .rows = r, .cols = c}; }

static void null_context_is_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_stats *s = (cls_stats *)&s;
    assert_int_equal(cls_fit(NULL, &p, &F.x, &s), CLS_E_ARG);
    assert_int_equal(cls_transform(NULL, &p, F.mm_matrix, &F.x, &F.y), CLS_E_ARG);
    assert_int_equal(cls_fit_transform(NULL, &p, &F.x, &F.y, NULL), CLS_E_ARG);
    assert_true(strlen(cls_last_error(NULL)) > 0);
    assert_int_equal(cls_last_report(NULL, &(cls_report){0}), CLS_E_ARG);
    assert_memory_equal(F.y.data, F.y0.data, bytes_of(&F.y));
}

static void null_pipeline_is_refused(void **state)
{
    (void)state;
    cls_stats *s = (cls_stats *)&s;
    prime();
    refused(cls_fit(F.ctx, NULL, &F.x, &s), CLS_E_ARG, "pipeline", "cls_fit");
    assert_null(s);
    prime();
    refused(cls_fit_transform(F.ctx, NULL, &F.x, &F.y, NULL), CLS_E_ARG, "pipeline", "cls_fit_transform");
    /* cls_transform takes p = NULL from the statistics; with neither: */
    prime();
    refused(cls_transform(F.ctx, NULL, NULL, &F.x, &F.y), CLS_E_ARG, "pipeline", "cls_transform");
}

static void null_arrays_are_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    all_refuse(&p, NULL, &F.y, F.mm_matrix, CLS_E_ARG, "input", "input NULL");
    prime();
    refused(cls_transform(F.ctx, &p, F.mm_matrix, &F.x, NULL), CLS_E_ARG, "output", "cls_transform: output NULL");
    prime();
    refused(cls_fit_transform(F.ctx, &p, &F.x, NULL, NULL), CLS_E_ARG, "output",
            "cls_fit_transform: output NULL");
    prime();
    refused(cls_fit(F.ctx, &p, &F.x, NULL), CLS_E_ARG, "out", "cls_fit: out NULL");
}

static void null_data_is_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    cls_array in = F.x, out = F.y;
    in.data = NULL;
    all_refuse(&p, &in, &F.y, F.mm_matrix, CLS_E_ARG, "data", "input data NULL");
    out.data = NULL;
    prime();
    refused(cls_fit_transform(F.ctx, &p, &F.x, &out, NULL), CLS_E_ARG, "data", "output data NULL");
}

static void zero_dimensions_are_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_array shapes[] = {like_x(0, 20, 5), like_x(3, 0, 5), like_x(3, 20, 0)};
    for (size_t i = 0; i < 3; i++) {
        cls_array out = shapes[i];
        out.data = F.y.data;
        all_refuse(&p, &shapes[i], &out, F.mm_matrix, CLS_E_ARG, "zero", "zero dimension");
    }
}

static void overflowing_shapes_are_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_array shapes[] = {like_x(1, SIZE_MAX / 2, 3), like_x(SIZE_MAX / 4, 4, 1), like_x(1, 1, SIZE_MAX / 4 + 1),
                          like_x(SIZE_MAX / 3, SIZE_MAX / 3, 2)};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        cls_array out = shapes[i];
        out.data = F.y.data;
        all_refuse(&p, &shapes[i], &out, F.mm_matrix, CLS_E_ARG, "overflow", "overflowing shape");
    }
}

/* Bytes of address space the process uses now. */
static uint64_t vm_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f) return 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* 2^20 x 2^20 x 2^20 float32 is 4 EiB: no size_t overflows, yet no machine
 * can address it (x86-64 and AArch64 user space: 2^47 to 2^56 bytes), so it
 * is a wrong shape, refused before any work. Run under an address-space
 * limit of 1 GiB more than now: a library that accepted it would plan 2^39
 * slices, and the limit turns that into a failed allocation instead of a
 * visit from the OOM killer. */
static void impossibly_large_shape_is_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_array in = like_x(1 << 20, 1 << 20, 1 << 20), out = in;
    out.data = F.y.data;
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
    lim = old;
    uint64_t now = vm_bytes();
    assert_true(now > 0);
    lim.rlim_cur = (rlim_t)(now + ((uint64_t)1 << 30));
    if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur) lim.rlim_cur = old.rlim_cur;
    assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
    cls_stats *s = NULL;
    cls_status st[3];
    prime();
    st[0] = cls_fit(F.ctx, &p, &in, &s);
    char msg0[512];
    snprintf(msg0, sizeof msg0, "%s", cls_last_error(F.ctx));
    st[1] = cls_fit_transform(F.ctx, &p, &in, &out, NULL);
    st[2] = cls_transform(F.ctx, &p, F.mm_matrix, &in, &out);
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    for (int i = 0; i < 3; i++)
        if (st[i] != CLS_E_ARG)
            fail_msg("call %d on a 2^20 x 2^20 x 2^20 float32 array: %s, expected CLS_E_ARG (%s)", i,
                     cls_status_str(st[i]), i ? cls_last_error(F.ctx) : msg0);
    refused(st[2], CLS_E_ARG, "1048576", "4 EiB shape");
    assert_null(s);
}

static void unknown_dtype_is_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_array in = F.x, out = F.y;
    in.dtype = out.dtype = (cls_dtype)7;
    all_refuse(&p, &in, &out, F.mm_matrix, CLS_E_ARG, "dtype", "dtype 7");
}

static void input_and_output_of_different_dtype_are_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_DECIMAL};
    /* the same bytes seen as half as many doubles */
    cls_array out = {.data = F.y.data, .dtype = CLS_F64, .batch = 3, .rows = 10, .cols = 5};
    cls_array out_same_count = {.data = F.y.data, .dtype = CLS_F64, .batch = 3, .rows = 20, .cols = 5}; /* would overflow y: must not be written */
    prime();
    refused(cls_fit_transform(F.ctx, &p, &F.x, &out, NULL), CLS_E_ARG, "differs", "f32 in, f64 out");
    prime();
    refused(cls_transform(F.ctx, &p, F.mm_matrix, &F.x, &out_same_count), CLS_E_ARG, "float64",
            "f32 in, f64 out of the same shape");
}

static void input_and_output_of_different_shape_are_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_array outs[] = {{.data = F.y.data, .dtype = CLS_F32, .batch = 3, .rows = 5, .cols = 20}, {.data = F.y.data, .dtype = CLS_F32, .batch = 1, .rows = 60, .cols = 5}, {.data = F.y.data, .dtype = CLS_F32, .batch = 3, .rows = 19, .cols = 5}};
    for (size_t i = 0; i < 3; i++) {
        prime();
        refused(cls_fit_transform(F.ctx, &p, &F.x, &outs[i], NULL), CLS_E_ARG, "differs", "shape mismatch");
        prime();
        refused(cls_transform(F.ctx, &p, F.mm_matrix, &F.x, &outs[i]), CLS_E_ARG, "differs", "shape mismatch");
    }
}

/* out starts one element into in: neither the same array nor apart. */
static void overlapping_input_and_output_are_refused(void **state)
{
    (void)state;
    cls_array big = ref_make(CLS_F32, 1, 101, 5, 7100, 0), big0 = ref_copy(&big);
    cls_array in = {.data = big.data, .dtype = CLS_F32, .batch = 1, .rows = 100, .cols = 5}, out = {.data = (float *)big.data + 1, .dtype = CLS_F32, .batch = 1, .rows = 100, .cols = 5};
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    cls_stats *s = NULL;
    assert_int_equal(cls_fit(F.ctx, &p, &in, &s), CLS_OK);
    prime();
    refused(cls_fit_transform(F.ctx, &p, &in, &out, NULL), CLS_E_ARG, "overlap", "cls_fit_transform overlap");
    assert_memory_equal(big.data, big0.data, bytes_of(&big));
    prime();
    refused(cls_transform(F.ctx, &p, s, &in, &out), CLS_E_ARG, "overlap", "cls_transform overlap");
    prime();
    refused(cls_transform(F.ctx, &p, s, &out, &in), CLS_E_ARG, "overlap", "cls_transform overlap behind");
    assert_memory_equal(big.data, big0.data, bytes_of(&big));
    cls_stats_destroy(s);
    ref_free(&big);
    ref_free(&big0);
}

static void unknown_scaler_or_scope_is_refused(void **state)
{
    (void)state;
    cls_pipeline bad_scaler = {.scaler = (cls_scaler)99};
    all_refuse(&bad_scaler, &F.x, &F.y, F.mm_matrix, CLS_E_ARG, "scaler", "scaler 99");
    cls_pipeline neg_scaler = {.scaler = (cls_scaler)-1};
    all_refuse(&neg_scaler, &F.x, &F.y, F.mm_matrix, CLS_E_ARG, "scaler", "scaler -1");
    cls_pipeline bad_scope = {.scaler = CLS_MINMAX, .scope = (cls_scope)2};
    all_refuse(&bad_scope, &F.x, &F.y, F.mm_matrix, CLS_E_ARG, "scope", "scope 2");
}

static void minmax_range_needs_lo_below_hi_both_finite(void **state)
{
    (void)state;
    const double ranges[][2] = {{1, 1}, {2, 1}, {-1, -1}, {NAN, 1}, {0, NAN}, {0, INFINITY}, {-INFINITY, 0}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        cls_pipeline p = {.scaler = CLS_MINMAX, .lo = ranges[i][0], .hi = ranges[i][1]};
        char what[64];
        snprintf(what, sizeof what, "range [%g, %g]", p.lo, p.hi);
        all_refuse(&p, &F.x, &F.y, F.mm_matrix, CLS_E_ARG, "range", what);
    }
}

static void clip_applies_to_minmax_only(void **state)
{
    (void)state;
    cls_pipeline z = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH, .clip = 1};
    all_refuse(&z, &F.x, &F.y, F.z_batch, CLS_E_ARG, "clip", "z-score clip");
    cls_pipeline d = {.scaler = CLS_DECIMAL, .clip = 1};
    all_refuse(&d, &F.x, &F.y, F.mm_matrix, CLS_E_ARG, "clip", "decimal clip");
}

static void inverse_cannot_be_fitted(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX, .inverse = 1};
    cls_stats *s = (cls_stats *)&s;
    prime();
    refused(cls_fit_transform(F.ctx, &p, &F.x, &F.y, &s), CLS_E_ARG, "inverse", "cls_fit_transform inverse");
    assert_null(s);
    s = (cls_stats *)&s;
    prime();
    refused(cls_fit(F.ctx, &p, &F.x, &s), CLS_E_ARG, "inverse", "cls_fit inverse");
    assert_null(s);
}

static void stats_of_another_scope_are_refused(void **state)
{
    (void)state;
    cls_pipeline batch = {.scaler = CLS_MINMAX, .scope = CLS_SCOPE_BATCH};
    prime();
    refused(cls_transform(F.ctx, &batch, F.mm_matrix, &F.x, &F.y), CLS_E_ARG, "scope", "matrix stats, batch p");
    cls_pipeline matrix = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    prime();
    refused(cls_transform(F.ctx, &matrix, F.z_batch, &F.x, &F.y), CLS_E_ARG, "scope", "batch stats, matrix p");
}

static void stats_of_other_columns_or_groups_are_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_MINMAX};
    /* the same bytes as 3 x 25 x 4: other columns */
    cls_array in = like_x(3, 25, 4), out = {.data = F.y.data, .dtype = CLS_F32, .batch = 3, .rows = 25, .cols = 4};
    prime();
    refused(cls_transform(F.ctx, &p, F.mm_matrix, &in, &out), CLS_E_ARG, "columns", "4 columns, stats of 5");
    /* 5 matrices of 12 rows: 5 groups, stats of 3 */
    in = like_x(5, 12, 5);
    out = (cls_array){.data = F.y.data, .dtype = CLS_F32, .batch = 5, .rows = 12, .cols = 5};
    prime();
    refused(cls_transform(F.ctx, &p, F.mm_matrix, &in, &out), CLS_E_ARG, "group", "5 groups, stats of 3");
}

static void zscore_needs_stats_with_moments(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_MATRIX};
    prime();
    refused(cls_transform(F.ctx, &p, F.mm_matrix, &F.x, &F.y), CLS_E_ARG, "min-max", "z-score with min-max stats");
    assert_true(contains_nocase(cls_last_error(F.ctx), "z-score"));
}

static void scaler_without_stats_is_refused(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_DECIMAL};
    prime();
    refused(cls_transform(F.ctx, &p, NULL, &F.x, &F.y), CLS_E_ARG, "statistics", "decimal without stats");
}

/* A context whose creation failed answers every call with CLS_E_ARG and
 * says why. */
static void failed_context_refuses_calls(void **state)
{
    (void)state;
    cls_config cfg = {.devices = "no-such-device-anywhere"};
    cls_context *bad = NULL;
    assert_int_equal(cls_context_create(&cfg, &bad), CLS_E_NO_DEVICE);
    assert_non_null(bad);
    assert_int_equal(cls_device_count(bad), 0);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_stats *s = (cls_stats *)&s;
    assert_int_equal(cls_fit(bad, &p, &F.x, &s), CLS_E_ARG);
    assert_true(strlen(cls_last_error(bad)) > 0);
    assert_int_equal(cls_fit_transform(bad, &p, &F.x, &F.y, NULL), CLS_E_ARG);
    assert_true(contains_nocase(cls_last_error(bad), "no-such-device-anywhere"));
    assert_int_equal(cls_transform(bad, &p, F.mm_matrix, &F.x, &F.y), CLS_E_ARG);
    assert_memory_equal(F.y.data, F.y0.data, bytes_of(&F.y));
    cls_context_destroy(bad);
}

/* After all the refusals above, the same context computes right answers. */
static void context_still_works_after_refusals(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH};
    cls_stats_destroy(check_fit_transform(F.ctx, &F.x, &p, "after refusals"));
    check_transform(F.ctx, &F.x, &p, F.z_batch, &F.x, "after refusals");
}

/* The report of the last call: every planned slice done, per-device slices
 * adding up, and the bytes read and written by each pass. */
static void check_report(cls_context *ctx, int phases, uint64_t bytes, const char *what)
{
    cls_report rep;
    assert_int_equal(cls_last_report(ctx, &rep), CLS_OK);
    if (rep.slices == 0 || rep.slices_done != rep.slices)
        fail_msg("%s: %zu of %zu slices done", what, rep.slices_done, rep.slices);
    assert_true(rep.bytes > 0);
    if (rep.bytes != bytes) fail_msg("%s: report says %llu bytes, expected %llu", what,
                                     (unsigned long long)rep.bytes, (unsigned long long)bytes);
    if (phases) assert_int_equal(rep.phases, phases);
    assert_int_equal(rep.ndevices, cls_device_count(ctx));
    assert_non_null(rep.devices);
    size_t sum = 0;
    uint64_t dbytes = 0;
    for (size_t i = 0; i < rep.ndevices; i++) {
        assert_int_equal(rep.devices[i].device, i);
        assert_null(rep.devices[i].failed);
        sum += rep.devices[i].slices;
        dbytes += rep.devices[i].bytes;
    }
    if (sum != rep.slices_done) fail_msg("%s: devices did %zu slices, report says %zu", what, sum, rep.slices_done);
    assert_int_equal(dbytes, rep.bytes);
    assert_true(rep.wall > 0);
}

static void report_after_success_accounts_for_every_slice(void **state)
{
    (void)state;
    cls_context *ctx = test_context(NULL, 0, 4096);
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        cls_array x = ref_make(dt, 4, 300, 7, 7200 + (uint64_t)t, REF_MISSING);
        uint64_t n = bytes_of(&x);
        cls_pipeline one = {.scaler = CLS_MINMAX};                            /* 300 rows: one pass */
        cls_pipeline two = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH}; /* 1200 rows x 7: ... */
        cls_array y = make_out(&x);
        cls_stats *s = NULL;
        assert_int_equal(cls_fit_transform(ctx, &one, &x, &y, &s), CLS_OK);
        check_report(ctx, 1, 2 * n, "fit_transform, one pass");
        assert_int_equal(cls_transform(ctx, &one, s, &x, &y), CLS_OK);
        check_report(ctx, 1, 2 * n, "transform");
        cls_stats_destroy(s);
        assert_int_equal(cls_fit(ctx, &two, &x, &s), CLS_OK);
        check_report(ctx, 1, n, "fit");
        cls_stats_destroy(s);
        ref_free(&x);
        ref_free(&y);

        /* more than 4096 rows in the group and more than a slice: two passes */
        x = ref_make(dt, 1, 5000, 3, 7300 + (uint64_t)t, REF_MISSING);
        y = make_out(&x);
        n = bytes_of(&x);
        assert_int_equal(cls_fit_transform(ctx, &two, &x, &y, NULL), CLS_OK);
        check_report(ctx, 2, 3 * n, "fit_transform, two passes");
        ref_free(&x);
        ref_free(&y);
    }
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_context_is_refused),
        cmocka_unit_test(null_pipeline_is_refused),
        cmocka_unit_test(null_arrays_are_refused),
        cmocka_unit_test(null_data_is_refused),
        cmocka_unit_test(zero_dimensions_are_refused),
        cmocka_unit_test(overflowing_shapes_are_refused),
        cmocka_unit_test(impossibly_large_shape_is_refused),
        cmocka_unit_test(unknown_dtype_is_refused),
        cmocka_unit_test(input_and_output_of_different_dtype_are_refused),
        cmocka_unit_test(input_and_output_of_different_shape_are_refused),
        cmocka_unit_test(overlapping_input_and_output_are_refused),
        cmocka_unit_test(unknown_scaler_or_scope_is_refused),
        cmocka_unit_test(minmax_range_needs_lo_below_hi_both_finite),
        cmocka_unit_test(clip_applies_to_minmax_only),
        cmocka_unit_test(inverse_cannot_be_fitted),
        cmocka_unit_test(stats_of_another_scope_are_refused),
        cmocka_unit_test(stats_of_other_columns_or_groups_are_refused),
        cmocka_unit_test(zscore_needs_stats_with_moments),
        cmocka_unit_test(scaler_without_stats_is_refused),
        cmocka_unit_test(failed_context_refuses_calls),
        cmocka_unit_test(context_still_works_after_refusals),
        cmocka_unit_test(report_after_success_accounts_for_every_slice),
    };
    return TEST_RUN("args", tests, group_setup, group_teardown);
}
