/* The front door (src/api/front.c): one call per operation whatever the
 * data's place. A .npy file and an open file give the statistics and bytes
 * of the same data in memory; input and output of different kinds, an
 * unknown kind, quantiles of data not in memory, a robust fit of buffers
 * and a combine hook where none applies are refused with a message, and the hook still hears of it
 * once; bins reduce to a row each when the output has their shape. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

enum { B = 2, R = 37, C = 5, N = B * R * C };

static cls_context *ctx;
static double x[N], want[N], got[N];
static char dir[512];

static int setup(void **state)
{
    (void)state;
    rng r;
    rng_seed(&r, 4242);
    for (size_t i = 0; i < N; i++) x[i] = rng_normal(&r) * 10 + (double)(i % C);
    x[3] = NAN;
    ctx = test_context(NULL, 0, 0);
    test_tmpdir(dir, sizeof dir, "front");
    return ctx ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cls_context_destroy(ctx);
    return 0;
}

static cls_array host(double *d) { return (cls_array){.data = d, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C}; }

static void same_stats(const cls_stats *a, const cls_stats *b)
{
    for (size_t g = 0; g < B; g++)
        for (size_t c = 0; c < C; c++) {
            cls_column_stats p, q;
            assert_int_equal(test_column(a, g, c, &p), CLS_OK);
            assert_int_equal(test_column(b, g, c, &q), CLS_OK);
            assert_int_equal(p.count, q.count);
            assert_true(p.min == q.min && p.max == q.max);
        }
}

static void npy_and_file_match_memory(void **state)
{
    (void)state;
    char in_path[600], out_path[600];
    snprintf(in_path, sizeof in_path, "%s/x.npy", dir);
    snprintf(out_path, sizeof out_path, "%s/y.npy", dir);
    cls_array xa = host(x);
    test_write_npy(in_path, &xa);
    cls_pipeline p = {.scaler = CLS_MINMAX};
    cls_array in = host(x), out = host(want);
    cls_stats *mem = NULL, *npy = NULL, *fil = NULL;
    assert_int_equal(cls_fit_transform(ctx, &p, &in, &out, &mem), CLS_OK);

    cls_array ni = {.where = CLS_IN_NPY, .path = in_path}, no = {.where = CLS_IN_NPY, .path = out_path};
    assert_int_equal(cls_fit(ctx, &p, &ni, &npy), CLS_OK);
    same_stats(mem, npy);
    assert_int_equal(cls_fit_transform(ctx, &p, &ni, &no, NULL), CLS_OK);
    int fd = open(out_path, O_RDONLY);
    assert_true(fd >= 0);
    off_t end = lseek(fd, 0, SEEK_END);
    assert_int_equal(pread(fd, got, sizeof got, end - (off_t)sizeof got), (ssize_t)sizeof got);
    close(fd);
    assert_memory_equal(got, want, sizeof got);

    /* the same bytes at an offset of an open file */
    fd = open(in_path, O_RDONLY);
    assert_true(fd >= 0);
    end = lseek(fd, 0, SEEK_END);
    cls_array fi = {.where = CLS_IN_FILE, .fd = fd, .offset = (uint64_t)(end - (off_t)sizeof x), .dtype = CLS_F64,
                    .batch = B, .rows = R, .cols = C, .path = "x.npy"};
    assert_int_equal(cls_fit(ctx, &p, &fi, &fil), CLS_OK);
    close(fd);
    same_stats(mem, fil);
    cls_stats_destroy(mem);
    cls_stats_destroy(npy);
    cls_stats_destroy(fil);
}

static int heard;
static cls_status count_hook(void *user, cls_status local, uint64_t *counts, size_t n)
{
    (void)user;
    (void)counts;
    (void)n;
    heard++;
    return local;
}

static void refusals_name_the_reason(void **state)
{
    (void)state;
    cls_pipeline p = {.scaler = CLS_ZSCORE};
    cls_array in = host(x), out = host(got);
    memcpy(got, x, sizeof got);
    cls_array f = out;
    f.where = CLS_IN_FILE;
    assert_int_equal(cls_fit_transform(ctx, &p, &in, &f, NULL), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(ctx), "different kinds of place"));
    cls_array odd = in;
    odd.where = (cls_where)9;
    assert_int_equal(cls_transform(ctx, &p, NULL, &odd, &out), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(ctx), "unknown where"));
    cls_array npy = {.where = CLS_IN_NPY};
    cls_stats *s = (cls_stats *)&s;
    assert_int_equal(cls_fit(ctx, &p, &npy, &s), CLS_E_ARG);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(ctx), "without a path"));
    double q = 0.5, qo[C * B];
    cls_array b = {.where = CLS_IN_BUFFER, .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
    assert_int_equal(cls_quantiles(ctx, NULL, &b, &q, 1, qo), CLS_E_UNSUPPORTED);
    assert_non_null(strstr(cls_last_error(ctx), "host memory"));
    cls_clean c = {.sigma = 3};
    assert_int_equal(cls_quantiles(ctx, &(cls_pipeline){.clean = &c}, &in, &q, 1, qo), CLS_E_ARG);
    /* a robust fit of buffers: the exact quantiles' counting passes read
     * host memory or files; refused before the buffers are touched, with
     * what to do */
    cls_pipeline robust = {.scaler = CLS_ROBUST};
    assert_int_equal(cls_fit(ctx, &robust, &b, &s), CLS_E_UNSUPPORTED);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(ctx), "cls_fit: the scaler needs exact quantiles"));
    assert_non_null(strstr(cls_last_error(ctx), "then cls_transform the buffers"));
    cls_array bo = b;
    s = (cls_stats *)&s;
    assert_int_equal(cls_fit_transform(ctx, &robust, &b, &bo, &s), CLS_E_UNSUPPORTED);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(ctx), "cls_fit_transform: the scaler needs exact quantiles"));

    /* a hook where the call cannot combine hears of the failure once; a fit
     * across processes needs the stats function too */
    cls_combine h = {count_hook, NULL, NULL};
    p.combine = &h;
    heard = 0;
    assert_int_equal(cls_fit(ctx, &p, &in, &s), CLS_E_ARG);
    assert_int_equal(heard, 1);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(ctx), "stats function"));
    heard = 0;
    assert_int_equal(cls_transform(ctx, &p, NULL, &in, &out), CLS_E_UNSUPPORTED);
    assert_int_equal(heard, 1);
    heard = 0;
    s = (cls_stats *)&s;
    assert_int_equal(cls_fit(ctx, &p, &b, &s), CLS_E_UNSUPPORTED);
    assert_int_equal(heard, 1);
    assert_null(s);
    assert_non_null(strstr(cls_last_error(ctx), "no combine hook on buffers"));
    heard = 0;
    assert_int_equal(cls_medians(ctx, &p, &b, qo), CLS_E_UNSUPPORTED);
    assert_int_equal(heard, 1);
    assert_memory_equal(got, x, sizeof got); /* nothing written */
    assert_int_equal(cls_fit(NULL, &p, &in, &s), CLS_E_ARG);
    assert_non_null(strstr(cls_last_error(NULL), "NULL context"));
}

/* A .npy fit-transform is checked whole at its door before its output's
 * temporary is created: a bad cleaning option or light-curve field is
 * named even where that temporary cannot be made (a folder that does not
 * exist), and a good call there fails on the temporary, after its checks */
static void a_npy_call_is_checked_before_its_output_is_made(void **state)
{
    (void)state;
    char in_path[600], out_path[600];
    snprintf(in_path, sizeof in_path, "%s/x.npy", dir);
    snprintf(out_path, sizeof out_path, "%s/no-such-folder/y.npy", dir);
    cls_array xa = host(x);
    test_write_npy(in_path, &xa);
    cls_array ni = {.where = CLS_IN_NPY, .path = in_path}, no = {.where = CLS_IN_NPY, .path = out_path};
    cls_clean bad_sigma = {.sigma = -1}, bad_window = {.detrend = CLS_DETREND_MEAN, .window = 0},
              keep = {.sigma = 3, .mode = CLS_CLIP_KEEP}, ok = {.sigma = 3};
    struct {
        cls_pipeline p;
        const char *names;
    } bad[] = {
        {{.scaler = CLS_ZSCORE, .clean = &bad_sigma}, "sigma"},
        {{.scaler = CLS_ROBUST, .clean = &bad_sigma}, "sigma"},
        {{.clean = &bad_window}, "window"},
        {{.scaler = CLS_MINMAX, .clean = &bad_window}, "window"},
        {{.scaler = CLS_MINMAX, .clean = &keep}, "CLS_CLIP_KEEP"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cls_status st = cls_fit_transform(ctx, &bad[i].p, &ni, &no, NULL);
        if (st != CLS_E_ARG || !strstr(cls_last_error(ctx), bad[i].names))
            fail_msg("case %zu: status %d, not CLS_E_ARG naming %s: %s", i, (int)st, bad[i].names,
                     cls_last_error(ctx));
    }
    cls_pipeline good = {.scaler = CLS_ZSCORE, .clean = &ok};
    assert_int_equal(cls_fit_transform(ctx, &good, &ni, &no, NULL), CLS_E_IO);
    assert_non_null(strstr(cls_last_error(ctx), "temporary"));
}

/* bins of 10 rows: the output's shape picks a value per row or a row per bin */
static void bins_reduce_by_the_output_shape(void **state)
{
    (void)state;
    enum { NB = (R + 9) / 10 };
    cls_clean c = {.bin_rows = 10, .bin_stat = CLS_BIN_MEAN};
    cls_pipeline p = {.clean = &c};
    cls_array in = host(x), same = host(got);
    assert_int_equal(cls_fit_transform(ctx, &p, &in, &same, NULL), CLS_OK);
    double red[B * NB * C];
    cls_array rows = {.data = red, .dtype = CLS_F64, .batch = B, .rows = NB, .cols = C};
    assert_int_equal(cls_fit_transform(ctx, &p, &in, &rows, NULL), CLS_OK);
    for (size_t g = 0; g < B; g++)
        for (size_t k = 0; k < NB; k++)
            for (size_t col = 0; col < C; col++) {
                double sum = 0;
                size_t n = 0;
                for (size_t r = k * 10; r < R && r < k * 10 + 10; r++) {
                    double v = x[(g * R + r) * C + col];
                    if (isfinite(v)) sum += v, n++;
                }
                double m = red[(g * NB + k) * C + col];
                assert_close(m, sum / (double)n, 1e-12);
                /* each row of the bin holds the same mean in the other form */
                size_t r0 = k * 10 + (g == 0 && col == 3 && k == 0 ? 1 : 0);
                assert_close(got[(g * R + r0) * C + col], m, 1e-12);
            }
    c.bin_stat = CLS_BIN_BOUNDARY;
    assert_int_equal(cls_fit_transform(ctx, &p, &in, &rows, NULL), CLS_E_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(npy_and_file_match_memory),
                                       cmocka_unit_test(refusals_name_the_reason),
                                       cmocka_unit_test(a_npy_call_is_checked_before_its_output_is_made),
                                       cmocka_unit_test(bins_reduce_by_the_output_shape)};
    return TEST_RUN("front", tests, setup, teardown);
}
