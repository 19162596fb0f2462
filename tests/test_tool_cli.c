/* The tool's small defects of issue 29 part 5, each fixed and kept fixed:
 * an overflowing --range, discount across dtypes, bench --alone with a
 * device that is not there, `devices` and $CLSCALE_DEVICES, empty and
 * unmatched selectors (exit 2; no driver at all stays exit 1), a top-level
 * help that lists every option, one wording for dimension errors, and
 * PoCL's unwritable kernel cache named as the cause. Issue 42: every
 * command that can run long takes --quiet, clean with nothing to clean is
 * a usage error, and every usage error ends with the same hint line.
 * Issue 43: clean --flatten is the library's flatten. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline_util.h"
#include "tool_util.h"

static int group_setup(void **state)
{
    tu_setup(state);
    tu_write_random(tu_file("in.npy"), 50, 6, 31);
    return 0;
}

static void usage_exit(const char *const *args, const char *what)
{
    int st = tu_run(NULL, args);
    if (st != 2 || (what && !strstr(tu_stderr(), what)))
        fail_msg("%s %s ...: status %d, expected 2 naming \"%s\"; stderr:\n%s", args[0], args[1] ? args[1] : "", st,
                 what ? what : "", tu_stderr());
}

static void a_range_whose_width_overflows_is_a_usage_error(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *out = tu_file("out.npy");
    unlink(out);
    usage_exit((const char *const[]){"normalize", "--method", "minmax", "--range", "-1e308,1e308", in, out, NULL},
               "--range");
    usage_exit((const char *const[]){"normalize", "--method", "minmax", "--range", "-9e307,9e307", in, out, NULL},
               "--range");
    /* float32 data: the width must be a float32 too */
    usage_exit((const char *const[]){"normalize", "--method", "minmax", "--range", "-2e38,2e38", in, out, NULL},
               "float32");
    assert_false(tu_exists(out));
    /* wide but finite is fine */
    tu_expect(TU_RUN("normalize", "--method", "minmax", "--range", "-1e38,1e38", in, out), 0);
    cls_npy y;
    char err[1024];
    if (cls_npy_open(out, &y, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    for (size_t i = 0; i < y.data_bytes / sizeof(float); i++) {
        float v = ((float *)y.data)[i];
        if (!(fabs(v) <= 1.00001e38)) fail_msg("value %zu is %g, outside the range", i, (double)v);
    }
    cls_npy_close(&y, 0, NULL, 0);
}

/* discount of `data` by `factors` of the other dtype: factors converted to
 * the data's dtype, as numpy's astype, then multiplied in it. */
/* --range, --clip and the quantile options are usage errors for a method
 * that does not take them, and accepted by one that does: the scalers'
 * table says which (through the library's public API), every method of
 * the table checked, with the messages naming the methods that take them */
static void the_option_checks_of_each_method_follow_the_table(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *out = tu_file("out.npy");
    const char *name;
    int ranged = 0, quantiled = 0;
    for (int s = CLS_MINMAX; (name = cls_scaler_name((cls_scaler)s)); s++) {
        /* the options' groups and a scaler of each kind are what the table says */
        int range = !strcmp(name, "minmax"), quant = !strcmp(name, "robust");
        ranged += range;
        quantiled += quant;
        const char *r[] = {"normalize", "--quiet", "--method", name, "--range", "0,2", in, out, NULL};
        const char *c[] = {"normalize", "--quiet", "--method", name, "--clip", in, out, NULL};
        const char *q[] = {"normalize", "--quiet", "--method", name, "--quantile-range", "10,90", in, out, NULL};
        const char *u[] = {"normalize", "--quiet", "--method", name, "--unit-variance", in, out, NULL};
        if (range) {
            tu_expect(tu_run(NULL, r), 0);
            tu_expect(tu_run(NULL, c), 0);
        } else {
            usage_exit(r, "--range and --clip apply to --method minmax only");
            usage_exit(c, "--range and --clip apply to --method minmax only");
        }
        if (quant) {
            tu_expect(tu_run(NULL, q), 0);
            tu_expect(tu_run(NULL, u), 0);
        } else {
            usage_exit(q, "apply to --method robust only");
            usage_exit(u, "--quantile-range, --no-centering, --no-scaling and --unit-variance apply to --method "
                          "robust only");
        }
    }
    assert_int_equal(ranged, 1);
    assert_int_equal(quantiled, 1);
    /* min-max without --range: [0, 1] */
    tu_expect(TU_RUN("normalize", "--quiet", "--method", "minmax", in, out), 0);
    cls_npy f;
    char err[1024];
    if (cls_npy_open(out, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < f.batch * f.rows * f.cols; i++) {
        double v = f.dtype == CLS_F64 ? ((double *)f.data)[i] : ((float *)f.data)[i];
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    cls_npy_close(&f, 0, NULL, 0);
    if (!(lo == 0 && hi == 1)) fail_msg("minmax without --range: values in [%g, %g], expected [0, 1]", lo, hi);
}

static void discount_across(cls_dtype data, cls_dtype factors)
{
    cls_array x = ref_make(data, 1, 40, 5, 71 + data, REF_NEGATIVE);
    cls_array f = ref_make_factors(factors, 1, 1, 5, 72 + factors);
    tu_write_array(tu_file("x.npy"), &x, 2);
    size_t shape[1] = {5};
    cls_npy fn;
    char err[1024];
    if (cls_npy_create(tu_file("fac.npy"), factors, 1, shape, &fn, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    memcpy(fn.data, f.data, fn.data_bytes);
    assert_int_equal(cls_npy_close(&fn, 1, err, sizeof err), CLS_OK);
    tu_expect(TU_RUN("discount", "--factors", tu_file("fac.npy"), tu_file("x.npy"), tu_file("y.npy")), 0);
    cls_npy y;
    if (cls_npy_open(tu_file("y.npy"), &y, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    assert_int_equal(y.dtype, data);
    for (size_t i = 0; i < 40 * 5; i++) {
        double fv = ref_get(&f, i % 5);
        if (data == CLS_F32) fv = (float)fv;
        double want = ref_get(&x, i) * fv;
        double got = data == CLS_F32 ? ((float *)y.data)[i] : ((double *)y.data)[i];
        assert_close(got, want, tol_for(data));
    }
    cls_npy_close(&y, 0, NULL, 0);
    ref_free(&x);
    ref_free(&f);
}

static void discount_converts_factors_to_the_data_dtype(void **state)
{
    (void)state;
    discount_across(CLS_F32, CLS_F64);
    discount_across(CLS_F64, CLS_F32);
}

static void bench_alone_with_a_device_not_there_is_a_usage_error(void **state)
{
    (void)state;
    usage_exit((const char *const[]){"bench", "--workload", "seed-b", "--size", "0.01", "--repeats", "1", "--alone",
                                     "0,97", NULL},
               "97");
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void devices_honours_clscale_devices(void **state)
{
    (void)state;
    tu_expect(TU_RUN("devices"), 0);
    char all[65536];
    size_t n;
    unsigned char *b = tu_read(tu_file(".out"), &n);
    snprintf(all, sizeof all, "%.*s", (int)n, (const char *)b);
    free(b);
    assert_true(lines(all) >= 2); /* the pocl suite has two devices */
    static const char *one[] = {"CLSCALE_DEVICES=1", NULL};
    tu_opts o = {one, 0, -1, -1};
    tu_expect(tu_run(&o, (const char *const[]){"devices", NULL}), 0);
    b = tu_read(tu_file(".out"), &n);
    char got[4096];
    snprintf(got, sizeof got, "%.*s", (int)n, (const char *)b);
    free(b);
    assert_int_equal(lines(got), 1);
    assert_int_equal(strncmp(got, "1: ", 3), 0);
    static const char *none[] = {"CLSCALE_DEVICES=nosuch", NULL};
    o.env = none;
    tu_expect(tu_run(&o, (const char *const[]){"devices", NULL}), 2);
}

static void empty_and_unmatched_selectors_exit_2(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *out = tu_file("out.npy");
    const char *sels[] = {"", ",", " , ", "nosuch"};
    for (size_t i = 0; i < 4; i++) {
        usage_exit((const char *const[]){"normalize", "--method", "minmax", "--devices", sels[i], in, out, NULL},
                   NULL);
        usage_exit((const char *const[]){"devices", "--devices", sels[i], NULL}, NULL);
        usage_exit((const char *const[]){"bench", "--devices", sels[i], "--size", "0.01", NULL}, NULL);
    }
    /* no driver at all is not the user's typing: exit 1, whatever the selector */
    char empty[4500], env1[4600];
    snprintf(empty, sizeof empty, "%s/no-vendors", tu_dir);
    mkdir(empty, 0777);
    snprintf(env1, sizeof env1, "OCL_ICD_VENDORS=%s", empty);
    const char *env[] = {env1, NULL};
    tu_opts o = {env, 0, -1, -1};
    tu_expect(tu_run(&o, (const char *const[]){"devices", "--devices", "0", NULL}), 1);
    assert_non_null(strstr(tu_stderr(), "no OpenCL platform"));
}

static void the_top_level_help_lists_every_option(void **state)
{
    (void)state;
    tu_expect(TU_RUN("--help"), 0);
    size_t n;
    unsigned char *b = tu_read(tu_file(".out"), &n);
    char *top = calloc(1, n + 1);
    memcpy(top, b, n);
    free(b);
    const char *cmds[] = {"devices", "describe", "normalize", "apply", "discount", "bench"};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        assert_non_null(strstr(top, cmds[c]));
        tu_expect(TU_RUN(cmds[c], "--help"), 0);
        b = tu_read(tu_file(".out"), &n);
        char *h = calloc(1, n + 1);
        memcpy(h, b, n);
        free(b);
        for (char *p = strstr(h, "--"); p; p = strstr(p + 2, "--")) {
            size_t len = 2;
            while ((p[len] >= 'a' && p[len] <= 'z') || p[len] == '-') len++;
            if (len <= 3) continue;
            char opt[64];
            snprintf(opt, sizeof opt, "%.*s", (int)len, p);
            /* whole option names only: "--stats" must not pass as part of "--stats-out" */
            int found = 0;
            for (char *q = strstr(top, opt); q && !found; q = strstr(q + 1, opt))
                found = !((q[len] >= 'a' && q[len] <= 'z') || q[len] == '-');
            if (!found) fail_msg("`clscale --help` does not list %s of `clscale %s --help`", opt, cmds[c]);
        }
        free(h);
    }
    free(top);
}

static void dimension_errors_use_one_wording(void **state)
{
    (void)state;
    const char *one = tu_file("one.npy"), *four = tu_file("four.npy"), *in = tu_file("in.npy");
    static const char h1[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }";
    static const char h4[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 6), }";
    const char *hs[] = {h1, h4}, *paths[] = {one, four};
    for (int i = 0; i < 2; i++) {
        unsigned char buf[128 + 24];
        memset(buf, ' ', 128);
        memcpy(buf, hs[i], i ? sizeof h4 - 1 : sizeof h1 - 1);
        buf[127] = '\n';
        memset(buf + 128, 0x3f, 24);
        tu_write_bytes(paths[i], buf, sizeof buf);
    }
    const char *const *cases[] = {
        (const char *const[]){"normalize", "--method", "minmax", one, tu_file("o.npy"), NULL},
        (const char *const[]){"normalize", "--method", "minmax", four, tu_file("o.npy"), NULL},
        (const char *const[]){"discount", "--factors", four, in, tu_file("o.npy"), NULL},
    };
    for (size_t i = 0; i < 3; i++) {
        int st = tu_run(NULL, cases[i]);
        const char *e = tu_stderr();
        if (st != 1 || !strstr(e, " dimension") || !strstr(e, "clscale takes"))
            fail_msg("case %zu: status %d; stderr:\n%s", i, st, e);
    }
}

static void an_unwritable_pocl_cache_is_named_as_the_cause(void **state)
{
    (void)state;
    if (geteuid() != 0) { /* runs as nobody: needs root to switch */
        test_skip("not root: cannot run as nobody");
    }
    static const char *env[] = {"HOME=/nonexistent", "POCL_CACHE_DIR", "XDG_CACHE_HOME", NULL};
    tu_opts o = {env, 1, -1, -1};
    int st = tu_run(&o, (const char *const[]){"devices", NULL});
    const char *e = tu_stderr();
    if (st == 0) test_skip("this PoCL needs no cache to list its devices");
    assert_int_equal(st, 1);
    assert_non_null(strstr(e, "kernel cache"));
    assert_non_null(strstr(e, "POCL_CACHE_DIR"));
    assert_null(strstr(e, "no OpenCL platform found"));
}

/* The last line of the last run's stderr. */
static const char *last_line(void)
{
    static char line[1024];
    const char *e = tu_stderr();
    size_t n = strlen(e);
    while (n && e[n - 1] == '\n') n--;
    size_t b = n;
    while (b && e[b - 1] != '\n') b--;
    snprintf(line, sizeof line, "%.*s", (int)(n - b), e + b);
    return line;
}

static void every_long_command_takes_quiet(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *out = tu_file("q.npy");
    tu_expect(TU_RUN("normalize", "--quiet", "--method", "zscore", in, out), 0);
    tu_expect(TU_RUN("clean", "--quiet", "--impute", "mean", in, out), 0);
    tu_expect(TU_RUN("apply", "--quiet", "--stats", tu_file("nosuch.stats"), in, out), 1); /* past the options */
    tu_expect(TU_RUN("describe", "--quiet", in), 0);
    /* bench: --quiet is taken, the next unknown option is the one refused */
    usage_exit((const char *const[]){"bench", "--quiet", "--bogus", NULL}, "--bogus");
    assert_null(strstr(tu_stderr(), "\"--quiet\""));
    const char *cmds[] = {"normalize", "clean", "apply", "discount", "describe", "bench"};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        tu_expect(TU_RUN(cmds[c], "--help"), 0);
        size_t n;
        unsigned char *b = tu_read(tu_file(".out"), &n);
        char *h = calloc(1, n + 1);
        memcpy(h, b, n);
        free(b);
        if (!strstr(h, "--quiet")) fail_msg("`clscale %s --help` does not document --quiet", cmds[c]);
        free(h);
    }
}

static void clean_with_nothing_to_clean_is_a_usage_error(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *out = tu_file("nothing.npy");
    unlink(out);
    usage_exit((const char *const[]){"clean", in, out, NULL}, "--impute");
    const char *e = tu_stderr();
    assert_non_null(strstr(e, "--sigma-clip"));
    assert_non_null(strstr(e, "--missing-value"));
    assert_false(tu_exists(out));
    usage_exit((const char *const[]){"clean", "--scope", "batch", "--quiet", in, out, NULL}, "--impute");
    assert_false(tu_exists(out));
    /* --missing-value alone cleans: V becomes NaN */
    tu_expect(TU_RUN("clean", "--missing-value", "0", in, out), 0);
}

/* clean --flatten W,P[,N[,K]]: the library's flatten (flatten_niters N,
 * flatten_sigma K, divided by the trend), byte for byte, with bins after
 * it; its usage errors name the option */
static void clean_flatten_is_the_librarys_flatten(void **state)
{
    (void)state;
    size_t B = 3, R = 120, C = 2, n = B * R * C;
    cls_array x = {.data = malloc(n * 8), .dtype = CLS_F64, .batch = B, .rows = R, .cols = C};
    double *v = x.data;
    for (size_t i = 0; i < n; i++)
        v[i] = 20 + (double)(i % C) + sin((double)(i / C % R) / 15.0) + 0.3 * (double)((i * 7919) % 101) / 101;
    v[(0 * R + 40) * C + 1] += 1.5; /* a flare */
    v[(2 * R + 70) * C] = NAN;    /* a gap */
    const char *in = tu_file("lc.npy"), *out = tu_file("flat.npy");
    tu_write_array(in, &x, 3);
    cls_context *ctx = test_context(NULL, 0, 0);
    assert_non_null(ctx);
    const struct { const char *spec, *bins; cls_clean c; } cases[] = {
        {"21,2", NULL, {.detrend = CLS_DETREND_SAVGOL, .window = 21, .polyorder = 2, .flatten_niters = 3,
                        .flatten_sigma = 3, .detrend_op = CLS_DETREND_DIVIDE}},
        {"21,2,1", NULL, {.detrend = CLS_DETREND_SAVGOL, .window = 21, .polyorder = 2, .flatten_niters = 1,
                          .flatten_sigma = 3, .detrend_op = CLS_DETREND_DIVIDE}},
        {"15,3,4,2.5", "5,median", {.detrend = CLS_DETREND_SAVGOL, .window = 15, .polyorder = 3, .flatten_niters = 4,
                                    .flatten_sigma = 2.5, .detrend_op = CLS_DETREND_DIVIDE, .bin_rows = 5,
                                    .bin_stat = CLS_BIN_MEDIAN}},
    };
    cls_array y = x;
    y.data = malloc(n * 8);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        unlink(out);
        if (cases[k].bins)
            tu_expect(TU_RUN("clean", "--flatten", cases[k].spec, "--bin-smooth", cases[k].bins, "--quiet", in, out), 0);
        else
            tu_expect(TU_RUN("clean", "--flatten", cases[k].spec, "--quiet", in, out), 0);
        cls_status st = cls_fit_transform(ctx, &(cls_pipeline){.clean = &cases[k].c}, &x, &y, NULL);
        if (st != CLS_OK) fail_msg("%s: %s", cases[k].spec, cls_last_error(ctx));
        size_t len = 0;
        unsigned char *f = tu_read(out, &len);
        assert_non_null(f);
        assert_true(len > n * 8);
        if (memcmp(f + len - n * 8, y.data, n * 8)) fail_msg("--flatten %s: not the library's bytes", cases[k].spec);
        free(f);
        /* the flare left out of the trend: its flattened value stands out */
        if (k == 0) assert_true(((double *)y.data)[(0 * R + 40) * C + 1] > 1.05);
    }
    const char *bad[] = {"21", "21,2,0", "21,2,3,0", "21,2,3,-1", "21,2,3,3,1", "21,21", "x,2", "21,2,x", "0,0"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        usage_exit((const char *const[]){"clean", "--flatten", bad[k], in, out, NULL}, "--flatten");
    usage_exit((const char *const[]){"clean", "--flatten", "21,2", "--detrend", "mean:3", in, out, NULL},
               "one or the other");
    usage_exit((const char *const[]){"clean", "--detrend-op", "divide", in, out, NULL}, "--flatten");
    /* interp needs the window within the rows: the library's error, OUT not written */
    unlink(out);
    assert_int_equal(TU_RUN("clean", "--flatten", "121,2", "--quiet", in, out), 1);
    assert_non_null(strstr(tu_stderr(), "window"));
    assert_false(tu_exists(out));
    cls_context_destroy(ctx);
    free(x.data);
    free(y.data);
}

static void every_usage_error_ends_with_the_help_hint(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *out = tu_file("o.npy");
    const char *const *cases[] = {
        (const char *const[]){"describe", "--bogus", in, NULL},
        (const char *const[]){"describe", NULL},
        (const char *const[]){"describe", "--sigma", "-1", in, NULL},
        (const char *const[]){"describe", "--sigma", NULL},
        (const char *const[]){"describe", in, in, NULL},
        (const char *const[]){"describe", "--devices", "nosuch", in, NULL},
        (const char *const[]){"describe", "--devices", ",", in, NULL},
        (const char *const[]){"devices", "--bogus", NULL},
        (const char *const[]){"devices", "--devices", "nosuch", NULL},
        (const char *const[]){"bench", "--bogus", NULL},
        (const char *const[]){"bench", "--size", "0", NULL},
        (const char *const[]){"bench", "--workload", "nosuch", NULL},
        (const char *const[]){"normalize", "--bogus", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", "--devices", "nosuch", in, out, NULL},
        (const char *const[]){"clean", in, out, NULL},
        (const char *const[]){"apply", in, out, NULL},
        (const char *const[]){"discount", in, out, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = tu_run(NULL, cases[i]);
        char want[128];
        snprintf(want, sizeof want, "Try 'clscale %s --help'.", cases[i][0]);
        if (st != 2 || strcmp(last_line(), want))
            fail_msg("case %zu (%s %s): status %d, last line \"%s\", expected 2 and \"%s\"; stderr:\n%s", i,
                     cases[i][0], cases[i][1] ? cases[i][1] : "", st, last_line(), want, tu_stderr());
        /* exactly once */
        const char *e = tu_stderr();
        if (strstr(e, "Try ") != strstr(e, want) || strstr(strstr(e, want) + 1, "Try "))
            fail_msg("case %zu: the hint is not printed once; stderr:\n%s", i, e);
    }
}

/* The number before `unit` (the first one after `from`), with its SI
 * prefix: 1 <= number < 1000 unless it is in the unit's base ("512 B"). */
static void expect_fitting(const char *text, const char *unit)
{
    const char *u = strstr(text, unit);
    if (!u) fail_msg("no \"%s\" in: %s", unit, text);
    const char *p = u;
    int prefixed = p > text && strchr("kMGTPE", p[-1]) != NULL;
    if (prefixed) p--;
    if (p <= text || p[-1] != ' ') fail_msg("no space before the unit of \"%s\" in: %s", unit, text);
    p--;
    while (p > text && (p[-1] == '.' || (p[-1] >= '0' && p[-1] <= '9'))) p--;
    double v = strtod(p, NULL);
    if (!(v < 1000) || (prefixed && !(v >= 1)))
        fail_msg("\"%.*s\": not the unit that fits; in: %s", (int)(u - p + strlen(unit)), p, text);
}

static void verbose_uses_units_that_fit(void **state)
{
    (void)state;
    const char *in = tu_file("in.npy"), *out = tu_file("v.npy");
    /* 50 x 6 float32: 1.2 kB each way; a rate far below 1 GB/s */
    tu_expect(TU_RUN("normalize", "--verbose", "--method", "minmax", in, out), 0);
    const char *e = tu_stderr();
    if (strstr(e, "0.0")) fail_msg("a figure with leading zeros: %s", e);
    expect_fitting(e, "B/s");
    expect_fitting(e, "B read");
    if (!strstr(e, " ms, ") && !strstr(e, " s, ")) fail_msg("no time in ms or s: %s", e);
    assert_non_null(strstr(e, "2.40 kB read and written"));
    assert_non_null(strstr(e, ", 1 pass\n"));
    tu_expect(TU_RUN("discount", "--verbose", "--factors", in, in, out), 0);
    expect_fitting(tu_stderr(), "B/s");
}

/* A vendors folder in tu_dir holding PoCL and, when `extra` is not NULL, a
 * second .icd line; returns "OCL_ICD_VENDORS=..." (static). */
static const char *vendors_with(const char *extra)
{
    static char env[4600];
    char dir[4400], path[4500];
    snprintf(dir, sizeof dir, "%s/vendors-%s", tu_dir, extra ? "extra" : "pocl");
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/pocl.icd", dir);
    tu_write_bytes(path, "libpocl.so.2\n", 13);
    if (extra) {
        snprintf(path, sizeof path, "%s/extra.icd", dir);
        tu_write_bytes(path, extra, strlen(extra));
    }
    snprintf(env, sizeof env, "OCL_ICD_VENDORS=%s", dir);
    return env;
}

static int rusticl_installed(void)
{
    return access("/etc/OpenCL/vendors/rusticl.icd", R_OK) == 0;
}

static void selectors_naming_a_disabled_driver_say_how_to_enable_it(void **state)
{
    (void)state;
    int ran = 0;
    if (rusticl_installed()) {
        /* registered, RUSTICL_ENABLE unset: no device */
        const char *env[] = {vendors_with("libRusticlOpenCL.so.1\n"), "RUSTICL_ENABLE", NULL};
        tu_opts o = {env, 0, -1, -1};
        tu_expect(tu_run(&o, (const char *const[]){"devices", "--devices", "rusticl", NULL}), 2);
        assert_non_null(strstr(tu_stderr(), "RUSTICL_ENABLE=llvmpipe"));
        assert_non_null(strstr(tu_stderr(), "matches no device"));
        assert_string_equal(last_line(), "Try 'clscale devices --help'.");
        /* installed, but $OCL_ICD_VENDORS leaves it out */
        const char *env2[] = {vendors_with(NULL), "RUSTICL_ENABLE", NULL};
        o.env = env2;
        tu_expect(tu_run(&o, (const char *const[]){"normalize", "--method", "minmax", "--devices", "rusticl",
                                                   tu_file("in.npy"), tu_file("r.npy"), NULL}),
                  2);
        assert_non_null(strstr(tu_stderr(), "/etc/OpenCL/vendors/rusticl.icd"));
        assert_non_null(strstr(tu_stderr(), "OCL_ICD_VENDORS"));
        assert_non_null(strstr(tu_stderr(), "RUSTICL_ENABLE=llvmpipe"));
        ran++;
    }
    const char *oclgrind = "/usr/lib/oclgrind/liboclgrind-rt-icd.so";
    if (access(oclgrind, R_OK) == 0) {
        const char *env[] = {vendors_with(NULL), NULL};
        tu_opts o = {env, 0, -1, -1};
        tu_expect(tu_run(&o, (const char *const[]){"describe", "--devices", "oclgrind", tu_file("in.npy"), NULL}),
                  2);
        const char *e = tu_stderr();
        assert_non_null(strstr(e, "not registered"));
        assert_non_null(strstr(e, oclgrind));
        assert_non_null(strstr(e, "OCL_ICD_VENDORS="));
        assert_non_null(strstr(e, "oclgrind.icd"));
        ran++;
    }
    /* a term that names no known driver gets no such hint */
    const char *env[] = {vendors_with(NULL), NULL};
    tu_opts o = {env, 0, -1, -1};
    tu_expect(tu_run(&o, (const char *const[]){"devices", "--devices", "nosuch", NULL}), 2);
    assert_null(strstr(tu_stderr(), "RUSTICL_ENABLE"));
    assert_null(strstr(tu_stderr(), "registered"));
    if (!ran) test_skip("neither rusticl's .icd nor Oclgrind is installed here");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_range_whose_width_overflows_is_a_usage_error),
        cmocka_unit_test(the_option_checks_of_each_method_follow_the_table),
        cmocka_unit_test(discount_converts_factors_to_the_data_dtype),
        cmocka_unit_test(bench_alone_with_a_device_not_there_is_a_usage_error),
        cmocka_unit_test(devices_honours_clscale_devices),
        cmocka_unit_test(empty_and_unmatched_selectors_exit_2),
        cmocka_unit_test(the_top_level_help_lists_every_option),
        cmocka_unit_test(dimension_errors_use_one_wording),
        cmocka_unit_test(an_unwritable_pocl_cache_is_named_as_the_cause),
        cmocka_unit_test(every_long_command_takes_quiet),
        cmocka_unit_test(clean_with_nothing_to_clean_is_a_usage_error),
        cmocka_unit_test(clean_flatten_is_the_librarys_flatten),
        cmocka_unit_test(every_usage_error_ends_with_the_help_hint),
        cmocka_unit_test(verbose_uses_units_that_fit),
        cmocka_unit_test(selectors_naming_a_disabled_driver_say_how_to_enable_it),
    };
    return TEST_RUN("tool_cli", tests, group_setup, tu_teardown);
}
