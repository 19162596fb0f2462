/* The clscale tool's normalize, apply and discount commands, run as a
 * subprocess ($CLS_TOOL) on .npy files: results against the float64
 * reference, exit statuses, one-line errors that name the file, and an OUT
 * that a failed run leaves as it was (no temporary file left either).
 * Arrays stay under 1e4 elements so that the suite also runs on Oclgrind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"
#include "pipeline_util.h"


static char dir[4096];

/* ------------------------------------------------------------------------ */
/* Running the tool                                                          */
/* ------------------------------------------------------------------------ */

static tool_result R;

/* Runs `clscale ARGS...` (NULL-terminated) into R. */
static int tool_argv(const char *const *args)
{
    if (test_run_tool(dir, &R, args) != 0) fail_msg("cannot run $CLS_TOOL (%s)", getenv("CLS_TOOL"));
    return R.status;
}

#define tool(...) tool_argv((const char *const[]){__VA_ARGS__, NULL})

/* Fails with the tool's stderr when its exit status is not `want`. */
#define expect_status(want)                                                                    \
    do {                                                                                       \
        if (R.status != (want)) {                                                              \
            print_error("exit status %d, expected %d; stderr:\n%s\n", R.status, (want), R.err); \
            fail();                                                                            \
        }                                                                                      \
    } while (0)

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

/* A path in the test folder; a ring of buffers, so several may be alive. */
static const char *file(const char *name)
{
    static char ring[16][4400];
    static unsigned next;
    char *b = ring[next++ % 16];
    snprintf(b, sizeof ring[0], "%s/%s", dir, name);
    return b;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Writes x as a .npy file of `ndim` dimensions (1: cols; 2: rows x cols; 3). */
static void write_array(const char *path, const cls_array *x, size_t ndim)
{
    size_t shape[3];
    if (ndim == 3) {
        shape[0] = x->batch;
        shape[1] = x->rows;
        shape[2] = x->cols;
    } else if (ndim == 2) {
        assert_int_equal(x->batch, 1);
        shape[0] = x->rows;
        shape[1] = x->cols;
    } else {
        assert_int_equal(x->batch * x->rows, 1);
        shape[0] = x->cols;
    }
    cls_npy f;
    char err[1024];
    if (cls_npy_create(path, x->dtype, ndim, shape, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    memcpy(f.data, x->data, f.data_bytes);
    if (cls_npy_close(&f, 1, err, sizeof err) != CLS_OK) fail_msg("%s", err);
}

/* Checks the tool's output file: x's shape (in `ndim` dimensions) and dtype,
 * values equal to `want` within the dtype's tolerance. */
static void check_output(const char *path, const cls_array *x, size_t ndim, const double *want, const char *label)
{
    cls_npy f;
    char err[1024];
    if (cls_npy_open(path, &f, err, sizeof err) != CLS_OK) fail_msg("%s: %s", label, err);
    assert_int_equal(f.dtype, x->dtype);
    assert_int_equal(f.ndim, ndim);
    assert_int_equal(f.batch, x->batch);
    assert_int_equal(f.rows, x->rows);
    assert_int_equal(f.cols, x->cols);
    cls_array y = {.data = f.data, .dtype = f.dtype, .batch = f.batch, .rows = f.rows, .cols = f.cols};
    size_t bad = ref_compare(&y, want, tol_for(x->dtype), label);
    cls_npy_close(&f, 0, NULL, 0);
    assert_int_equal(bad, 0);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *b = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            b = realloc(b, cap);
            assert_non_null(b);
        }
        got = fread(b + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    *n = len;
    return b;
}

/* A hand-made .npy file: version 1.0 header holding `dict`, padded to 64
 * bytes, then `data_bytes` bytes of 0x3f (any float pattern). */
static void write_npy_by_hand(const char *path, const char *dict, size_t data_bytes)
{
    size_t dl = strlen(dict), hl = 10 + dl + 1;
    size_t total_header = (hl + 63) / 64 * 64;
    unsigned char *b = malloc(total_header + data_bytes);
    assert_non_null(b);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    size_t len = total_header - 10;
    b[8] = (unsigned char)(len & 0xff);
    b[9] = (unsigned char)(len >> 8);
    memcpy(b + 10, dict, dl);
    memset(b + 10 + dl, ' ', total_header - 10 - dl - 1);
    b[total_header - 1] = '\n';
    memset(b + total_header, 0x3f, data_bytes);
    write_bytes(path, b, total_header + data_bytes);
    free(b);
}

/* No temporary file of a failed run is left in the test folder. */
static void assert_no_temp_files(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp")) {
            print_error("temporary file left behind: %s/%s\n", dir, e->d_name);
            closedir(d);
            fail();
        }
    closedir(d);
}

/* ------------------------------------------------------------------------ */
/* Fixture                                                                   */
/* ------------------------------------------------------------------------ */

static int group_setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "tool");
    return 0;
}

static const char *const method_names[] = {"", "minmax", "zscore", "decimal"};

static size_t count(const cls_array *x) { return x->batch * x->rows * x->cols; }

/* normalize --method M on 2-D and 3-D files of both dtypes vs the reference. */
static void normalize_matches_reference(cls_scaler scaler)
{
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (size_t ndim = 2; ndim <= 3; ndim++) {
            cls_array x = ref_make(dt, ndim == 3 ? 3 : 1, 64, 9, 1000 + 10 * scaler + 2 * t + ndim,
                                   REF_MISSING | REF_NEGATIVE | REF_CONSTANT);
            write_array(file("in.npy"), &x, ndim);
            tool("normalize", "--method", method_names[scaler], file("in.npy"), file("out.npy"));
            expect_status(0);
            assert_string_equal(R.err, "");
            assert_string_equal(R.out, "");
            cls_pipeline p = {.scaler = scaler, .lo = 0, .hi = 1};
            double *want = malloc(count(&x) * sizeof *want);
            assert_non_null(want);
            ref_fit_transform(&x, &p, want, NULL);
            char label[96];
            snprintf(label, sizeof label, "%s %zu-D %s", method_names[scaler], ndim, t ? "f64" : "f32");
            check_output(file("out.npy"), &x, ndim, want, label);
            free(want);
            ref_free(&x);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */

static void normalize_minmax_matches_reference(void **state)
{
    (void)state;
    normalize_matches_reference(CLS_MINMAX);
}

static void normalize_zscore_matches_reference(void **state)
{
    (void)state;
    normalize_matches_reference(CLS_ZSCORE);
}

static void normalize_decimal_matches_reference(void **state)
{
    (void)state;
    normalize_matches_reference(CLS_DECIMAL);
}

static void normalize_minmax_range_maps_into_lo_hi(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 2, 50, 7, 2000, REF_NEGATIVE);
    write_array(file("in.npy"), &x, 3);
    tool("normalize", "--method", "minmax", "--range", "-2,3", file("in.npy"), file("out.npy"));
    expect_status(0);
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = -2, .hi = 3};
    double *want = malloc(count(&x) * sizeof *want);
    assert_non_null(want);
    ref_fit_transform(&x, &p, want, NULL);
    check_output(file("out.npy"), &x, 3, want, "range -2,3");
    free(want);
    ref_free(&x);
}

/* Clip only shows on data outside the fitted range: fit on A, apply to B. */
static void normalize_clip_is_recorded_and_clamps_apply(void **state)
{
    (void)state;
    cls_array a = ref_make(CLS_F64, 1, 60, 5, 2100, REF_NEGATIVE);
    cls_array b = ref_make(CLS_F64, 1, 60, 5, 2101, REF_NEGATIVE);
    for (size_t i = 0; i < count(&b); i++) ((double *)b.data)[i] *= 3.0;
    write_array(file("a.npy"), &a, 2);
    write_array(file("b.npy"), &b, 2);
    tool("normalize", "--method", "minmax", "--range=-1,1", "--clip", "--stats-out", file("s.stats"),
         file("a.npy"), file("a-out.npy"));
    expect_status(0);
    tool("apply", "--stats", file("s.stats"), file("b.npy"), file("b-out.npy"));
    expect_status(0);
    cls_pipeline p = {.scaler = CLS_MINMAX, .lo = -1, .hi = 1, .clip = 1};
    cls_column_stats st[5];
    ref_fit(&a, CLS_SCOPE_MATRIX, st);
    double want[300];
    ref_transform(&b, &p, st, want);
    size_t clamped = 0;
    for (size_t i = 0; i < count(&b); i++) clamped += want[i] == -1.0 || want[i] == 1.0;
    assert_true(clamped > 10);
    check_output(file("b-out.npy"), &b, 2, want, "clip on apply");
    ref_free(&a);
    ref_free(&b);
}

static void normalize_scope_batch_shares_statistics(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        cls_array x = ref_make(dt, 4, 30, 6, 2200 + t, REF_MISSING);
        write_array(file("in.npy"), &x, 3);
        tool("normalize", "--method", "zscore", "--scope", "batch", file("in.npy"), file("out.npy"));
        expect_status(0);
        cls_pipeline p = {.scaler = CLS_ZSCORE, .scope = CLS_SCOPE_BATCH};
        double *want = malloc(count(&x) * sizeof *want);
        assert_non_null(want);
        ref_fit_transform(&x, &p, want, NULL);
        check_output(file("out.npy"), &x, 3, want, "zscore batch");
        free(want);
        ref_free(&x);
    }
}

static void apply_uses_the_statistics_of_the_first_file(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        cls_array a = ref_make(dt, 2, 40, 8, 2300 + t, REF_MISSING | REF_NEGATIVE);
        cls_array b = ref_make(dt, 2, 25, 8, 2310 + t, REF_MISSING | REF_NEGATIVE);
        write_array(file("a.npy"), &a, 3);
        write_array(file("b.npy"), &b, 3);
        tool("normalize", "--method", "zscore", "--stats-out", file("s.stats"), file("a.npy"), file("a-out.npy"));
        expect_status(0);
        tool("apply", "--stats", file("s.stats"), file("b.npy"), file("b-out.npy"));
        expect_status(0);
        assert_string_equal(R.err, "");
        cls_pipeline p = {.scaler = CLS_ZSCORE};
        cls_column_stats st[16];
        ref_fit(&a, CLS_SCOPE_MATRIX, st);
        double *want = malloc(count(&b) * sizeof *want);
        assert_non_null(want);
        ref_transform(&b, &p, st, want);
        check_output(file("b-out.npy"), &b, 3, want, "apply zscore");
        free(want);
        ref_free(&a);
        ref_free(&b);
    }
}

static void apply_inverse_undoes_normalize(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        for (int m = 1; m <= 3; m++) {
            cls_array x = ref_make(dt, 1, 70, 6, 2400 + 10 * t + m, REF_MISSING | REF_NEGATIVE);
            write_array(file("in.npy"), &x, 2);
            tool("normalize", "--method", method_names[m], "--stats-out", file("s.stats"), file("in.npy"),
                 file("scaled.npy"));
            expect_status(0);
            tool("apply", "--stats", file("s.stats"), "--inverse", file("scaled.npy"), file("back.npy"));
            expect_status(0);
            double *want = malloc(count(&x) * sizeof *want);
            assert_non_null(want);
            for (size_t i = 0; i < count(&x); i++) want[i] = ref_get(&x, i);
            char label[64];
            snprintf(label, sizeof label, "inverse %s %s", method_names[m], t ? "f64" : "f32");
            check_output(file("back.npy"), &x, 2, want, label);
            free(want);
            ref_free(&x);
        }
    }
}

static void discount(size_t fdims, uint64_t seed)
{
    for (int t = 0; t < 2; t++) {
        cls_dtype dt = t ? CLS_F64 : CLS_F32;
        if (!suite_runs(dt)) continue;
        cls_array x = ref_make(dt, 3, 20, 5, seed + t, REF_MISSING);
        cls_array f = ref_make_factors(dt, 1, fdims == 1 ? 1 : 20, 5, seed + 5 + t);
        write_array(file("in.npy"), &x, 3);
        write_array(file("f.npy"), &f, fdims);
        tool("discount", "--factors", file("f.npy"), file("in.npy"), file("out.npy"));
        expect_status(0);
        assert_string_equal(R.err, "");
        cls_pipeline p = {.scaler = CLS_NONE, .factors = &f};
        double *want = malloc(count(&x) * sizeof *want);
        assert_non_null(want);
        ref_transform(&x, &p, NULL, want);
        check_output(file("out.npy"), &x, 3, want, fdims == 1 ? "discount 1-D" : "discount 2-D");
        free(want);
        ref_free(&f);
        ref_free(&x);
    }
}

static void discount_with_1d_factors(void **state)
{
    (void)state;
    discount(1, 2500);
}

static void discount_with_2d_factors(void **state)
{
    (void)state;
    discount(2, 2600);
}

/* ------------------------------------------------------------------------ */
/* Output only when asked                                                    */
/* ------------------------------------------------------------------------ */

static void verbose_prints_one_summary_line(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 2, 30, 4, 2700, 0);
    write_array(file("in.npy"), &x, 3);
    tool("normalize", "--verbose", "--method", "minmax", file("in.npy"), file("out.npy"));
    expect_status(0);
    assert_string_equal(R.out, "");
    assert_int_equal(count_lines(R.err), 1);
    assert_non_null(strstr(R.err, "2x30x4"));
    assert_non_null(strstr(R.err, "slice"));
    assert_non_null(strstr(R.err, "B/s")); /* in the unit that fits: kB/s for 1 kB */
    ref_free(&x);
}

/* ------------------------------------------------------------------------ */
/* Bad files                                                                 */
/* ------------------------------------------------------------------------ */

/* `cmd` (the tool's arguments, with BAD where the bad file goes, and OUT)
 * fails with status 1 and one line that says `what` and names `bad` (unless
 * `named` is 0); OUT is not created, and an existing OUT is left byte for
 * byte. */
static void check_failure(const char *const *cmd, const char *bad, const char *what, int named)
{
    const char *out = file("out.npy");
    const char *args[16];
    size_t n = 0;
    for (; cmd[n]; n++) args[n] = !strcmp(cmd[n], "BAD") ? bad : !strcmp(cmd[n], "OUT") ? out : cmd[n];
    args[n] = NULL;
    for (int existing = 0; existing < 2; existing++) {
        unlink(out);
        static const char before[] = "the previous OUT, not an npy file at all";
        if (existing) write_bytes(out, before, sizeof before);
        tool_argv(args);
        expect_status(1);
        if (count_lines(R.err) != 1 || (named && !strstr(R.err, bad)) || !strstr(R.err, what)) {
            print_error("expected one line naming %s and saying \"%s\", got:\n%s", bad, what, R.err);
            fail();
        }
        assert_int_equal(strncmp(R.err, "clscale: ", 9), 0);
        if (existing) {
            size_t len;
            unsigned char *b = read_bytes(out, &len);
            assert_int_equal(len, sizeof before);
            assert_memory_equal(b, before, len);
            free(b);
        } else {
            assert_false(exists(out));
        }
        assert_no_temp_files();
    }
}

static void check_bad_file(const char *const *cmd, const char *bad, const char *what)
{
    check_failure(cmd, bad, what, 1);
}

#define NORMALIZE_BAD ((const char *const[]){"normalize", "--method", "minmax", "BAD", "OUT", NULL})

static void bad_input_truncated(void **state)
{
    (void)state;
    const char *bad = file("truncated.npy");
    write_npy_by_hand(bad, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", 20);
    check_bad_file(NORMALIZE_BAD, bad, "truncated");
}

static void bad_input_wrong_dtype(void **state)
{
    (void)state;
    const char *bad = file("int32.npy");
    write_npy_by_hand(bad, "{'descr': '<i4', 'fortran_order': False, 'shape': (4, 3), }", 48);
    check_bad_file(NORMALIZE_BAD, bad, "<i4");
}

static void bad_input_fortran_order(void **state)
{
    (void)state;
    const char *bad = file("fortran.npy");
    write_npy_by_hand(bad, "{'descr': '<f8', 'fortran_order': True, 'shape': (4, 3), }", 96);
    check_bad_file(NORMALIZE_BAD, bad, "ortran");
}

static void bad_input_big_endian(void **state)
{
    (void)state;
    const char *bad = file("big.npy");
    write_npy_by_hand(bad, "{'descr': '>f8', 'fortran_order': False, 'shape': (4, 3), }", 96);
    check_bad_file(NORMALIZE_BAD, bad, "big-endian");
}

static void bad_input_four_dimensions(void **state)
{
    (void)state;
    const char *bad = file("4d.npy");
    write_npy_by_hand(bad, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2, 2), }", 64);
    check_bad_file(NORMALIZE_BAD, bad, "4 dimensions");
}

static void bad_input_one_dimension(void **state)
{
    (void)state;
    const char *bad = file("1d.npy");
    write_npy_by_hand(bad, "{'descr': '<f4', 'fortran_order': False, 'shape': (12,), }", 48);
    check_bad_file(NORMALIZE_BAD, bad, "1 dimension (shape (12,))");
    check_bad_file((const char *const[]){"discount", "--factors", bad, "BAD", "OUT", NULL}, bad, "1 dimension");
}

static void bad_input_not_npy(void **state)
{
    (void)state;
    const char *bad = file("data.csv");
    static const char text[] = "a,b,c\n1,2,3\n4,5,6\n";
    write_bytes(bad, text, sizeof text - 1);
    check_bad_file(NORMALIZE_BAD, bad, "not a .npy file");
    const char *empty = file("empty.npy");
    write_bytes(empty, "", 0);
    check_bad_file(NORMALIZE_BAD, empty, "empty");
}

static void bad_input_missing(void **state)
{
    (void)state;
    const char *bad = file("no-such-file.npy");
    check_bad_file(NORMALIZE_BAD, bad, "No such file");
}

static void bad_factors_file(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, 10, 3, 2800, 0);
    const char *in = file("good.npy");
    write_array(in, &x, 2);
    ref_free(&x);
    const char *bad = file("factors.npy");
    write_npy_by_hand(bad, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", 12);
    check_bad_file((const char *const[]){"discount", "--factors", "BAD", in, "OUT", NULL}, bad, "big-endian");
    check_bad_file((const char *const[]){"discount", "--factors", "BAD", in, "OUT", NULL}, file("none.npy"),
                   "No such file");
}

static void bad_stats_file(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, 10, 3, 2900, 0);
    const char *in = file("good.npy");
    write_array(in, &x, 2);
    ref_free(&x);
    const char *bad = file("bad.stats");
    static const char junk[] = "this is not a statistics file\n";
    write_bytes(bad, junk, sizeof junk - 1);
    check_bad_file((const char *const[]){"apply", "--stats", "BAD", in, "OUT", NULL}, bad, "stats");
    check_bad_file((const char *const[]){"apply", "--stats", "BAD", in, "OUT", NULL}, file("none.stats"), "none.stats");
}

/* A runtime failure of the library (factors that do not broadcast) is
 * status 1 too, with the library's message, and leaves OUT alone. */
static void factors_that_do_not_broadcast_fail(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, 10, 3, 3000, 0);
    cls_array f = ref_make_factors(CLS_F32, 1, 1, 4, 3001);
    write_array(file("good.npy"), &x, 2);
    write_array(file("f4.npy"), &f, 1);
    ref_free(&x);
    ref_free(&f);
    check_failure((const char *const[]){"discount", "--factors", "BAD", file("good.npy"), "OUT", NULL},
                  file("f4.npy"), "CLS_E_ARG", 0);
}

/* Refused before any work, as a usage error (issue 29): the error names
 * OUT and the folder, then the hint to --help. */
static void out_in_a_missing_folder_fails_naming_it(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, 10, 3, 3050, 0);
    write_array(file("good.npy"), &x, 2);
    ref_free(&x);
    const char *out = file("no-such-folder/out.npy");
    tool("normalize", "--method", "minmax", file("good.npy"), out);
    expect_status(2);
    assert_int_equal(count_lines(R.err), 2);
    assert_non_null(strstr(R.err, out));
    assert_non_null(strstr(R.err, "No such file or directory"));
}

/* ------------------------------------------------------------------------ */
/* Usage                                                                     */
/* ------------------------------------------------------------------------ */

static void usage_errors_exit_2(void **state)
{
    (void)state;
    cls_array x = ref_make(CLS_F32, 1, 10, 3, 3100, 0);
    const char *in = file("good.npy"), *out = file("out.npy");
    write_array(in, &x, 2);
    ref_free(&x);
    unlink(out);
    const char *const *cases[] = {
        (const char *const[]){"normalize", "--method", "minmax", "--bogus", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", "-x", in, out, NULL},
        (const char *const[]){"normalize", in, out, "--method", NULL},
        (const char *const[]){"normalize", in, out, NULL},
        (const char *const[]){"normalize", "--method", "bogus", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", "--range", "5,1", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", "--range", "a,b", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", "--range", "1", in, out, NULL},
        (const char *const[]){"normalize", "--method", "zscore", "--range", "0,2", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", "--scope", "row", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", "--clip=yes", in, out, NULL},
        (const char *const[]){"normalize", "--method", "minmax", in, NULL},
        (const char *const[]){"normalize", "--method", "minmax", in, out, file("third.npy"), NULL},
        (const char *const[]){"normalize", "--method", "minmax", in, in, NULL},
        (const char *const[]){"apply", in, out, NULL},
        (const char *const[]){"apply", "--stats", file("s.stats"), "--method", "minmax", in, out, NULL},
        (const char *const[]){"discount", in, out, NULL},
        (const char *const[]){"discount", "--factors", in, "--inverse", in, out, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tool_argv(cases[i]);
        if (R.status != 2 || count_lines(R.err) != 2 || strncmp(R.err, "clscale: ", 9) ||
            !strstr(R.err, "--help")) {
            print_error("case %zu (%s %s ...): status %d, stderr:\n%s", i, cases[i][0], cases[i][1], R.status,
                        R.err);
            fail();
        }
        assert_false(exists(out));
    }
    size_t len;
    unsigned char *b = read_bytes(in, &len);
    assert_true(len > 128);
    free(b);
}

static void unknown_device_lists_the_devices(void **state)
{
    (void)state;
    tool("devices");
    expect_status(0);
    char names[8][256];
    size_t n = 0;
    for (char *line = strtok(R.out, "\n"); line && n < 8; line = strtok(NULL, "\n")) {
        char *colon = strstr(line, ": "), *bar = strstr(line, " | ");
        if (!colon || !bar || bar < colon) continue;
        snprintf(names[n++], sizeof names[0], "%.*s", (int)(bar - colon - 2), colon + 2);
    }
    assert_true(n > 0);
    cls_array x = ref_make(CLS_F32, 1, 10, 3, 3200, 0);
    write_array(file("good.npy"), &x, 2);
    ref_free(&x);
    unlink(file("out.npy"));
    tool("normalize", "--method", "minmax", "--devices", "nosuch", file("good.npy"), file("out.npy"));
    expect_status(2); /* a selector that matches nothing is a usage error */
    assert_non_null(strstr(R.err, "nosuch"));
    for (size_t i = 0; i < n; i++)
        if (!strstr(R.err, names[i])) fail_msg("device \"%s\" is not listed in:\n%s", names[i], R.err);
    assert_false(exists(file("out.npy")));
    assert_no_temp_files();
}

static void help_and_version_exit_0(void **state)
{
    (void)state;
    tool("--help");
    expect_status(0);
    assert_non_null(strstr(R.out, "normalize"));
    tool("--version");
    expect_status(0);
    assert_non_null(strstr(R.out, CLS_VERSION_STRING));
    static const char *const cmds[] = {"normalize", "apply", "discount"};
    for (size_t i = 0; i < 3; i++) {
        tool(cmds[i], "--help");
        expect_status(0);
        assert_int_equal(strncmp(R.out, "usage: clscale ", 15), 0);
        assert_non_null(strstr(R.out, cmds[i]));
        assert_string_equal(R.err, "");
    }
}

/* The bench's measure of the drivers' own start (a context and a queue on
 * every device of every platform) ends, on the suite's devices too: on
 * Oclgrind, an OpenCL 1.2 platform, the 2.0 queue call spun for ever
 * inside the ICD loader and hung `clscale bench`. */
static void the_drivers_start_up_child_finishes(void **state)
{
    (void)state;
    tool("__startup", "drivers");
    expect_status(0);
    double t = -1, a = -1, b = -1;
    assert_int_equal(sscanf(R.out, "%lf %lf %lf", &t, &a, &b), 3);
    assert_true(t > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(normalize_minmax_matches_reference),
        cmocka_unit_test(normalize_zscore_matches_reference),
        cmocka_unit_test(normalize_decimal_matches_reference),
        cmocka_unit_test(normalize_minmax_range_maps_into_lo_hi),
        cmocka_unit_test(normalize_clip_is_recorded_and_clamps_apply),
        cmocka_unit_test(normalize_scope_batch_shares_statistics),
        cmocka_unit_test(apply_uses_the_statistics_of_the_first_file),
        cmocka_unit_test(apply_inverse_undoes_normalize),
        cmocka_unit_test(discount_with_1d_factors),
        cmocka_unit_test(discount_with_2d_factors),
        cmocka_unit_test(verbose_prints_one_summary_line),
        cmocka_unit_test(bad_input_truncated),
        cmocka_unit_test(bad_input_wrong_dtype),
        cmocka_unit_test(bad_input_fortran_order),
        cmocka_unit_test(bad_input_big_endian),
        cmocka_unit_test(bad_input_four_dimensions),
        cmocka_unit_test(bad_input_one_dimension),
        cmocka_unit_test(bad_input_not_npy),
        cmocka_unit_test(bad_input_missing),
        cmocka_unit_test(bad_factors_file),
        cmocka_unit_test(bad_stats_file),
        cmocka_unit_test(factors_that_do_not_broadcast_fail),
        cmocka_unit_test(out_in_a_missing_folder_fails_naming_it),
        cmocka_unit_test(usage_errors_exit_2),
        cmocka_unit_test(unknown_device_lists_the_devices),
        cmocka_unit_test(help_and_version_exit_0),
        cmocka_unit_test(the_drivers_start_up_child_finishes),
    };
    return TEST_RUN("tool", tests, group_setup, NULL);
}
