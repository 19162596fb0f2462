/* most_frequent imputation of statistics groups larger than a stream
 * buffer (clean.c's modes_stream, stats/mode_count.c): counting passes
 * over the file in the context's scratch budget, the in-memory call's
 * bytes and a plain-C mode (the smallest of ties, -0.0 as +0.0), with the
 * default budget and with one so small that every column's range is cut
 * and takes several passes; and a clear error where the budget cannot
 * hold one column's working set (the mode's table, the counting passes'
 * histograms). float32 everywhere, float64 where the suite has it. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static char dir[4096];

enum { NCOLS = 7 };

static int group_setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "mode_stream");
    return 0;
}

static cls_context *budget_context(size_t scratch)
{
    cls_config cfg = {0};
    cfg.scratch_bytes = scratch;
    cls_context *ctx = NULL;
    if (cls_context_create(&cfg, &ctx) != CLS_OK) fail_msg("cls_context_create: %s", cls_last_error(ctx));
    return ctx;
}

static size_t es_of(cls_dtype t) { return t == CLS_F64 ? 8 : 4; }
static size_t bytes_of(const cls_array *x) { return x->batch * x->rows * x->cols * es_of(x->dtype); }

static double at(const cls_array *x, size_t i)
{
    return x->dtype == CLS_F64 ? ((const double *)x->data)[i] : ((const float *)x->data)[i];
}

/* Columns: small integers with ties and the sentinel -999; two values
 * equally often (the smaller wins); all missing; a constant with -Inf; a
 * single finite value; every value distinct (the smallest wins); signed
 * zeros most often (+0.0). */
static cls_array data(cls_dtype t, size_t b, size_t r, uint64_t seed)
{
    cls_array a = {.data = malloc(b * r * NCOLS * es_of(t)), .dtype = t, .batch = b, .rows = r, .cols = NCOLS};
    assert_non_null(a.data);
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < b * r * NCOLS; i++) {
        size_t col = i % NCOLS, row = i / NCOLS % r;
        double v = 0;
        switch (col) {
        case 0: v = rng_uniform(&g) < 0.05 ? NAN : rng_uniform(&g) < 0.03 ? -999 : floor(rng_range(&g, 0, 20)); break;
        case 1: v = row % 2 ? 2.5 : -1.0; break;
        case 2: v = row % 3 ? NAN : INFINITY; break;
        case 3: v = row % 11 == 4 ? -INFINITY : 3.0; break;
        case 4: v = row == r / 2 ? 7.25 : NAN; break;
        case 5: v = rng_normal(&g) * 4 + (double)row * 1e-3; break;
        default: v = row % 3 == 0 ? 1.0 : row % 2 ? -0.0 : 0.0; break;
        }
        if (t == CLS_F64) ((double *)a.data)[i] = v;
        else ((float *)a.data)[i] = (float)v;
    }
    return a;
}

static int file_of(const char *name, const cls_array *x)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    if (x) assert_int_equal(pwrite(fd, x->data, bytes_of(x), 0), (ssize_t)bytes_of(x));
    return fd;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The mode of column c of group g (scope matrix: a matrix), plain C:
 * sorted, the first longest run; NaN when nothing is left. */
static double ref_mode(const cls_array *x, size_t g, size_t c, int sent, double sv)
{
    size_t R = x->rows, n = 0;
    double *v = malloc(R * sizeof *v);
    assert_non_null(v);
    for (size_t r = 0; r < R; r++) {
        double a = at(x, (g * R + r) * NCOLS + c);
        if (isfinite(a) && !(sent && a == sv)) v[n++] = a == 0 ? 0.0 : a;
    }
    qsort(v, n, sizeof *v, cmp_double);
    double best = NAN;
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j] == v[i]) j++;
        if (j - i > run) {
            run = j - i;
            best = v[i];
        }
        i = j;
    }
    free(v);
    return best;
}

static int same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* x imputed in memory and streamed through `buffer`-byte chunks by ctx:
 * the same bytes, each fill the plain-C mode. */
static void one_case(cls_context *ctx, const cls_array *x, const cls_clean *c, size_t buffer, int check_ref)
{
    cls_pipeline p = {.scaler = CLS_NONE, .scope = CLS_SCOPE_MATRIX, .clean = c};
    cls_array y = *x;
    y.data = malloc(bytes_of(x));
    assert_non_null(y.data);
    if (cls_fit_transform(ctx, &p, x, &y, NULL) != CLS_OK) fail_msg("in memory: %s", cls_last_error(ctx));
    int fi = file_of("in.bin", x), fo = file_of("out.bin", NULL);
    assert_int_equal(ftruncate(fo, (off_t)bytes_of(x)), 0);
    cls_stream_opts o = {.buffer_bytes = buffer, .buffers = 3};
    cls_array a = {.where = CLS_IN_FILE, .fd = fi, .dtype = x->dtype, .batch = x->batch, .rows = x->rows,
                   .cols = x->cols, .path = "in.bin", .stream = &o};
    cls_array b = a;
    b.fd = fo;
    b.path = "out.bin";
    b.stream = NULL;
    uint64_t missing[4 * NCOLS];
    double fill[4 * NCOLS];
    cls_clean cs = *c;
    cs.missing_out = missing;
    cs.fill_out = fill;
    p.clean = &cs;
    if (cls_fit_transform(ctx, &p, &a, &b, NULL) != CLS_OK) fail_msg("streamed: %s", cls_last_error(ctx));
    void *out = malloc(bytes_of(x));
    assert_non_null(out);
    assert_int_equal(pread(fo, out, bytes_of(x), 0), (ssize_t)bytes_of(x));
    if (memcmp(out, y.data, bytes_of(x))) {
        cls_array s = *x;
        s.data = out;
        for (size_t i = 0; i < x->batch * x->rows * x->cols; i++)
            if (!same_bits(at(&s, i), at(&y, i)))
                fail_msg("value %zu (column %zu): streamed %.17g, in memory %.17g", i, i % NCOLS, at(&s, i),
                         at(&y, i));
    }
    for (size_t g = 0; check_ref && g < x->batch; g++)
        for (size_t col = 0; col < NCOLS; col++) {
            double want = ref_mode(x, g, col, c->has_missing_value, c->missing_value);
            double got = fill[g * NCOLS + col];
            if (!same_bits(got, want))
                fail_msg("group %zu column %zu: fill %.17g, the plain-C mode %.17g", g, col, got, want);
        }
    free(out);
    close(fi);
    close(fo);
    free(y.data);
}

static void most_frequent_streamed_is_the_call_in_memory(void **state)
{
    (void)state;
    int small = test_suite_is("oclgrind");
    /* the default budget (every column in one pass), and 4 KiB: 128 slots,
     * 64 a column, every column cut and counted over several passes */
    size_t budgets[] = {0, 4096};
    for (int bi = 0; bi < 2; bi++) {
        cls_context *ctx = budget_context(budgets[bi]);
        for (int ti = 0; ti < 2; ti++) {
            cls_dtype t = ti ? CLS_F64 : CLS_F32;
            if (t == CLS_F64 && test_suite_is("rusticl")) continue;
            size_t R = small ? 150 : 1500;
            cls_array x = data(t, 2, R, 5 + ti);
            cls_clean mf = {.impute = CLS_IMPUTE_MOST_FREQUENT, .has_missing_value = 1, .missing_value = -999};
            /* a matrix over 37 rows of a chunk: every group spans chunks */
            one_case(ctx, &x, &mf, 37 * NCOLS * es_of(t), 1);
            /* the values a clip keeps (bounds from the counting passes) */
            cls_clean clip = {.impute = CLS_IMPUTE_MOST_FREQUENT, .sigma = 2.5};
            one_case(ctx, &x, &clip, 41 * NCOLS * es_of(t), 0);
            free(x.data);
        }
        cls_context_destroy(ctx);
    }
}

/* A budget below one column's working set: the mode's smallest table
 * (4 KiB) or the counting passes' histograms of a median (2 ranks x 256
 * counts x 8 bytes), a clear error naming the budget. */
static void a_budget_too_small_for_one_column_is_an_error(void **state)
{
    (void)state;
    cls_context *ctx = budget_context(1000);
    cls_array x = data(CLS_F32, 1, 300, 9);
    int fi = file_of("in.bin", &x), fo = file_of("out.bin", NULL);
    assert_int_equal(ftruncate(fo, (off_t)bytes_of(&x)), 0);
    cls_stream_opts o = {.buffer_bytes = 37 * NCOLS * 4, .buffers = 3};
    cls_array a = {.where = CLS_IN_FILE, .fd = fi, .dtype = x.dtype, .batch = 1, .rows = x.rows, .cols = NCOLS,
                   .path = "in.bin", .stream = &o};
    cls_array b = a;
    b.fd = fo;
    b.path = "out.bin";
    b.stream = NULL;
    cls_impute how[] = {CLS_IMPUTE_MOST_FREQUENT, CLS_IMPUTE_MEDIAN};
    for (int k = 0; k < 2; k++) {
        cls_clean c = {.impute = how[k]};
        cls_pipeline p = {.scaler = CLS_NONE, .scope = CLS_SCOPE_MATRIX, .clean = &c};
        assert_int_equal(cls_fit_transform(ctx, &p, &a, &b, NULL), CLS_E_NOMEM);
        if (!strstr(cls_last_error(ctx), "scratch_bytes = 1000"))
            fail_msg("the error does not name the budget: %s", cls_last_error(ctx));
    }
    /* in memory the counting passes' histograms take a fixed 64 MiB
     * (regime.h's cls_count_budget): the same budget is no error there */
    double q[1] = {0.5}, out[NCOLS];
    cls_pipeline mp = {.scope = CLS_SCOPE_MATRIX};
    if (cls_quantiles(ctx, &mp, &x, q, 1, out) != CLS_OK) fail_msg("in memory: %s", cls_last_error(ctx));
    close(fi);
    close(fo);
    free(x.data);
    cls_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(most_frequent_streamed_is_the_call_in_memory),
        cmocka_unit_test(a_budget_too_small_for_one_column_is_an_error),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
