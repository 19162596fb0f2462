/* .npy files (src/npy.c): round trips, numpy's exact header bytes, the header
 * variants other writers produce, every way a file can be wrong (each with a
 * message naming the file and the problem), and the temporary-file protocol
 * of written files. Needs no OpenCL device. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "io/npy.h"
#include "io/sync_dir.h"

#define ERR_LEN 1024

/* numpy 2.4's np.save(f, np.zeros((2, 3), '<f4')) header: 128 bytes. */
static const char numpy_2x3_f4[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    "                                                          \n";

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot write %s", path);
    if (len) assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The whole file, malloc'ed; *len its size. */
static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    unsigned char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* A .npy file of format `major`.0 whose header is `dict`, padded with spaces
 * and a '\n' so that the data starts at a multiple of `align`, followed by
 * `data_len` bytes of `data` (NULL: a 0x3f pattern). */
static void write_npy(const char *path, int major, const char *dict, size_t align, const void *data,
                      size_t data_len)
{
    size_t prefix = major == 1 ? 10 : 12, dlen = strlen(dict);
    size_t off = (prefix + dlen + 1 + align - 1) / align * align;
    size_t hlen = off - prefix;
    unsigned char *buf = malloc(off + data_len + 1);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++) buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(buf + prefix, dict, dlen);
    memset(buf + prefix + dlen, ' ', hlen - dlen - 1);
    buf[off - 1] = '\n';
    if (data) memcpy(buf + off, data, data_len);
    else memset(buf + off, 0x3f, data_len);
    write_file(path, buf, off + data_len);
    free(buf);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void assert_contains(const char *msg, const char *needle)
{
    if (!strstr(msg, needle)) fail_msg("message \"%s\" does not contain \"%s\"", msg, needle);
}

/* Opens `path`, expects `want` with a one-line message naming the file and
 * containing `needle`, and nothing to close. */
static void expect_open_error(const char *path, cls_status want, const char *needle)
{
    cls_npy f;
    char err[ERR_LEN] = "";
    cls_status st = cls_npy_open(path, &f, err, sizeof err);
    if (st != want) fail_msg("%s: got %s (%s), expected %s", path, cls_status_str(st), err, cls_status_str(want));
    assert_contains(err, path);
    assert_contains(err, needle);
    assert_null(strchr(err, '\n'));
    assert_null(f.map);
    assert_int_equal(cls_npy_close(&f, 0, err, sizeof err), CLS_OK);
}

/* A file `name` in a fresh folder, made from `dict` as write_npy() does with
 * 64-byte alignment; expects CLS_E_FORMAT and `needle`. */
static void expect_bad_dict(const char *name, const char *dict, size_t data_len, const char *needle)
{
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-bad");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_npy(path, 1, dict, 64, NULL, data_len);
    expect_open_error(path, CLS_E_FORMAT, needle);
}

/* ---- round trips ---- */

static void round_trip(cls_dtype dt, size_t ndim, const size_t *shape, uint64_t seed)
{
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-rt");
    snprintf(path, sizeof path, "%s/a.npy", dir);
    size_t n = 1;
    for (size_t i = 0; i < ndim; i++) n *= shape[i];

    cls_npy w;
    cls_status st = cls_npy_create(path, dt, ndim, shape, &w, err, sizeof err);
    if (st != CLS_OK) fail_msg("%s", err);
    assert_int_equal(w.data_bytes, n * (dt == CLS_F64 ? 8 : 4));
    rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        double v = rng_normal(&r) * 1000.0 + 0.5;
        if (dt == CLS_F64) ((double *)w.data)[i] = v;
        else ((float *)w.data)[i] = (float)v;
    }
    void *expected = malloc(w.data_bytes);
    assert_non_null(expected);
    memcpy(expected, w.data, w.data_bytes);
    assert_int_equal(cls_npy_close(&w, 1, err, sizeof err), CLS_OK);

    cls_npy f;
    st = cls_npy_open(path, &f, err, sizeof err);
    if (st != CLS_OK) fail_msg("%s", err);
    assert_int_equal(f.dtype, dt);
    assert_int_equal(f.ndim, ndim);
    for (size_t i = 0; i < ndim; i++) assert_int_equal(f.shape[i], shape[i]);
    assert_int_equal(f.batch, ndim == 3 ? shape[0] : 1);
    assert_int_equal(f.rows, ndim == 3 ? shape[1] : ndim == 2 ? shape[0] : 1);
    assert_int_equal(f.cols, shape[ndim - 1]);
    assert_int_equal(f.data_bytes, n * (dt == CLS_F64 ? 8 : 4));
    assert_memory_equal(f.data, expected, f.data_bytes);
    assert_int_equal(cls_npy_close(&f, 0, err, sizeof err), CLS_OK);
    free(expected);
    assert_int_equal(count_files(dir), 1);
}

static void round_trip_1d_float32(void **state)
{
    (void)state;
    round_trip(CLS_F32, 1, (size_t[]){1000}, 1);
}

static void round_trip_2d_float32(void **state)
{
    (void)state;
    round_trip(CLS_F32, 2, (size_t[]){37, 11}, 2);
}

static void round_trip_3d_float32(void **state)
{
    (void)state;
    round_trip(CLS_F32, 3, (size_t[]){3, 17, 5}, 3);
}

static void round_trip_1d_float64(void **state)
{
    (void)state;
    round_trip(CLS_F64, 1, (size_t[]){999}, 4);
}

static void round_trip_2d_float64(void **state)
{
    (void)state;
    round_trip(CLS_F64, 2, (size_t[]){1, 300}, 5);
}

static void round_trip_3d_float64(void **state)
{
    (void)state;
    round_trip(CLS_F64, 3, (size_t[]){4, 1, 9}, 6);
}

/* ---- headers ---- */

static void created_header_is_the_one_numpy_writes(void **state)
{
    (void)state;
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-hdr");
    snprintf(path, sizeof path, "%s/a.npy", dir);
    cls_npy w;
    assert_int_equal(cls_npy_create(path, CLS_F32, 2, (size_t[]){2, 3}, &w, err, sizeof err), CLS_OK);
    for (int i = 0; i < 6; i++) ((float *)w.data)[i] = (float)i + 0.25f;
    assert_int_equal(cls_npy_close(&w, 1, err, sizeof err), CLS_OK);
    size_t len;
    unsigned char *got = read_file(path, &len);
    assert_int_equal(sizeof numpy_2x3_f4 - 1, 128);
    assert_int_equal(len, 128 + 6 * 4);
    assert_memory_equal(got, numpy_2x3_f4, 128);
    free(got);
}

static void created_data_starts_at_a_multiple_of_64(void **state)
{
    (void)state;
    static const size_t shapes[][4] = {{1, 1}, {1, 123456}, {2, 3, 1}, {3, 1, 1, 1}, {3, 2, 70000, 3}};
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-align");
    snprintf(path, sizeof path, "%s/a.npy", dir);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        cls_npy w;
        assert_int_equal(cls_npy_create(path, CLS_F64, shapes[i][0], shapes[i] + 1, &w, err, sizeof err), CLS_OK);
        assert_int_equal(((char *)w.data - (char *)w.map) % 64, 0);
        assert_int_equal(cls_npy_close(&w, 0, err, sizeof err), CLS_OK);
    }
}

static void reads_a_file_numpy_wrote(void **state)
{
    (void)state;
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-numpy");
    snprintf(path, sizeof path, "%s/a.npy", dir);
    const float v[6] = {1.5f, -2.25f, 3.0f, 0.125f, 1e30f, -7.0f};
    unsigned char buf[128 + sizeof v];
    memcpy(buf, numpy_2x3_f4, 128);
    memcpy(buf + 128, v, sizeof v);
    write_file(path, buf, sizeof buf);
    cls_npy f;
    assert_int_equal(cls_npy_open(path, &f, err, sizeof err), CLS_OK);
    assert_int_equal(f.dtype, CLS_F32);
    assert_int_equal(f.rows, 2);
    assert_int_equal(f.cols, 3);
    assert_memory_equal(f.data, v, sizeof v);
    assert_int_equal(cls_npy_close(&f, 0, err, sizeof err), CLS_OK);
}

/* Writes `dict` (format `major`.0, data aligned to `align`) with 2 x 3 float64
 * values and expects to read them back as shape (2, 3). */
static void expect_reads(int major, const char *dict, size_t align)
{
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-read");
    snprintf(path, sizeof path, "%s/a.npy", dir);
    const double v[6] = {1.0, -2.5, 3.25, 4e100, -5e-100, 6.0};
    write_npy(path, major, dict, align, v, sizeof v);
    cls_npy f;
    cls_status st = cls_npy_open(path, &f, err, sizeof err);
    if (st != CLS_OK) fail_msg("%s", err);
    assert_int_equal(f.dtype, CLS_F64);
    assert_int_equal(f.ndim, 2);
    assert_int_equal(f.shape[0], 2);
    assert_int_equal(f.shape[1], 3);
    assert_memory_equal(f.data, v, sizeof v);
    assert_int_equal(cls_npy_close(&f, 0, err, sizeof err), CLS_OK);
}

static void reads_format_2_0(void **state)
{
    (void)state;
    expect_reads(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 64);
}

static void reads_format_3_0(void **state)
{
    (void)state;
    expect_reads(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 64);
}

static void reads_data_aligned_to_16_as_old_numpy_wrote(void **state)
{
    (void)state;
    expect_reads(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 16);
}

static void reads_keys_in_any_order(void **state)
{
    (void)state;
    expect_reads(1, "{'shape': (2, 3), 'descr': '<f8', 'fortran_order': False}", 64);
}

static void reads_double_quotes(void **state)
{
    (void)state;
    expect_reads(1, "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2, 3)}", 64);
}

static void reads_dict_without_trailing_comma(void **state)
{
    (void)state;
    expect_reads(1, "{'descr':'<f8','fortran_order':False,'shape':(2,3)}", 64);
}

static void reads_extra_whitespace_and_trailing_commas(void **state)
{
    (void)state;
    expect_reads(1, "  {  'fortran_order' :\tFalse ,'descr'  : '<f8',  'shape':( 2 , 3 , ) ,  }  ", 64);
}

static void parse_header_message_starts_with_the_problem(void **state)
{
    (void)state;
    char err[ERR_LEN] = "";
    cls_dtype dt;
    size_t ndim, shape[3], off;
    const char dict[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
    char h[128] = "\x93NUMPY\x01\x00";
    h[8] = (char)(sizeof dict - 1);
    memcpy(h + 10, dict, sizeof dict - 1);
    assert_int_equal(cls_npy_parse_header(h, 10 + sizeof dict - 1, &dt, &ndim, shape, &off, err, sizeof err),
                     CLS_E_FORMAT);
    assert_int_equal(strncmp(err, "dtype '<i4'", 11), 0);
}

/* ---- bad files ---- */

static void rejects_truncated_data(void **state)
{
    (void)state;
    expect_bad_dict("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
                    "truncated: expected 24 bytes of data (shape (2, 3) of float32), found 20");
}

static void rejects_trailing_data(void **state)
{
    (void)state;
    expect_bad_dict("long.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28,
                    "4 bytes of trailing data");
}

static void rejects_truncated_header(void **state)
{
    (void)state;
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-bad");
    snprintf(path, sizeof path, "%s/cut.npy", dir);
    write_file(path, numpy_2x3_f4, 40);
    expect_open_error(path, CLS_E_FORMAT, "truncated header");
}

static void rejects_header_length_past_end_of_file(void **state)
{
    (void)state;
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-bad");
    snprintf(path, sizeof path, "%s/hlen.npy", dir);
    unsigned char buf[128 + 24] = {0};
    memcpy(buf, numpy_2x3_f4, 128);
    buf[8] = 0xe8; /* 1000 */
    buf[9] = 0x03;
    write_file(path, buf, sizeof buf);
    expect_open_error(path, CLS_E_FORMAT, "truncated header: its length field says 1000 bytes");
}

static void rejects_wrong_magic(void **state)
{
    (void)state;
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-bad");
    snprintf(path, sizeof path, "%s/magic.npy", dir);
    unsigned char buf[128 + 24] = {0};
    memcpy(buf, numpy_2x3_f4, 128);
    buf[5] = 'Z';
    write_file(path, buf, sizeof buf);
    expect_open_error(path, CLS_E_FORMAT, "not a .npy file (no \\x93NUMPY magic");
}

static void rejects_a_text_file(void **state)
{
    (void)state;
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-bad");
    snprintf(path, sizeof path, "%s/data.csv", dir);
    write_file(path, "a,b\n1.5,2\n3,4\n", 14);
    expect_open_error(path, CLS_E_FORMAT, "not a .npy file");
}

static void rejects_an_empty_file(void **state)
{
    (void)state;
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-bad");
    snprintf(path, sizeof path, "%s/empty.npy", dir);
    write_file(path, "", 0);
    expect_open_error(path, CLS_E_FORMAT, "empty file");
}

static void rejects_unknown_format_version(void **state)
{
    (void)state;
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-bad");
    snprintf(path, sizeof path, "%s/v4.npy", dir);
    unsigned char buf[128 + 24] = {0};
    memcpy(buf, numpy_2x3_f4, 128);
    buf[6] = 4;
    write_file(path, buf, sizeof buf);
    expect_open_error(path, CLS_E_FORMAT, "format version 4.0 is not supported");
}

static void rejects_big_endian_float64(void **state)
{
    (void)state;
    expect_bad_dict("be.npy", "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", 48,
                    "dtype '>f8' is big-endian; clscale reads little-endian '<f4' or '<f8'");
}

static void rejects_int32(void **state)
{
    (void)state;
    expect_bad_dict("int.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 24,
                    "dtype '<i4' (int32) is not float32 or float64");
}

static void rejects_float16(void **state)
{
    (void)state;
    expect_bad_dict("half.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", 12,
                    "dtype '<f2' (float16) is not float32 or float64");
}

static void rejects_bool(void **state)
{
    (void)state;
    expect_bad_dict("bool.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }", 6,
                    "dtype '|b1' (bool) is not float32 or float64");
}

static void rejects_structured_dtype(void **state)
{
    (void)state;
    expect_bad_dict("rec.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8,
                    "structured");
}

static void rejects_fortran_order(void **state)
{
    (void)state;
    expect_bad_dict("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24,
                    "Fortran order is not supported (save with np.ascontiguousarray)");
}

static void rejects_4_dimensions(void **state)
{
    (void)state;
    expect_bad_dict("4d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3, 4), }", 96,
                    "4 dimensions; clscale takes 1 to 3");
}

static void rejects_0_dimensions(void **state)
{
    (void)state;
    expect_bad_dict("0d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4,
                    "0 dimensions");
}

static void rejects_a_zero_dimension(void **state)
{
    (void)state;
    expect_bad_dict("empty.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", 0,
                    "empty array: shape (3, 0)");
}

static void rejects_a_shape_whose_size_overflows(void **state)
{
    (void)state;
    expect_bad_dict("huge.npy",
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 16), }", 8,
                    "shape (4611686018427387904, 16) of float64 is too large");
}

static void rejects_a_dimension_past_size_max(void **state)
{
    (void)state;
    expect_bad_dict("huge.npy",
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 8,
                    "dimension too large");
}

static void rejects_a_negative_dimension(void **state)
{
    (void)state;
    expect_bad_dict("neg.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 4,
                    "negative dimension");
}

static void rejects_an_unknown_key(void **state)
{
    (void)state;
    expect_bad_dict("key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4,
                    "unknown key 'x'");
}

static void rejects_a_missing_key(void **state)
{
    (void)state;
    expect_bad_dict("key.npy", "{'descr': '<f4', 'fortran_order': False}", 4, "header has no 'shape'");
}

static void rejects_a_malformed_dict(void **state)
{
    (void)state;
    expect_bad_dict("syntax.npy", "{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
                    "expected ':' after a key at byte 19");
}

static void missing_file_is_an_io_error(void **state)
{
    (void)state;
    char dir[1024], path[1200];
    test_tmpdir(dir, sizeof dir, "npy-missing");
    snprintf(path, sizeof path, "%s/nothing.npy", dir);
    expect_open_error(path, CLS_E_IO, "No such file or directory");
}

static void a_folder_is_an_io_error(void **state)
{
    (void)state;
    char dir[1024];
    test_tmpdir(dir, sizeof dir, "npy-folder");
    expect_open_error(dir, CLS_E_IO, "is a folder");
}

/* ---- written files ---- */

static void discard_leaves_no_temp_file_and_destination_unchanged(void **state)
{
    (void)state;
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-discard");
    snprintf(path, sizeof path, "%s/out.npy", dir);
    write_file(path, "previous contents", 17);
    cls_npy w;
    assert_int_equal(cls_npy_create(path, CLS_F32, 1, (size_t[]){100}, &w, err, sizeof err), CLS_OK);
    assert_int_equal(count_files(dir), 2);
    for (int i = 0; i < 100; i++) ((float *)w.data)[i] = 1.0f + (float)i;
    assert_int_equal(cls_npy_close(&w, 0, err, sizeof err), CLS_OK);
    assert_int_equal(count_files(dir), 1);
    size_t len;
    unsigned char *got = read_file(path, &len);
    assert_int_equal(len, 17);
    assert_memory_equal(got, "previous contents", 17);
    free(got);
}

static void commit_replaces_the_destination(void **state)
{
    (void)state;
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-commit");
    snprintf(path, sizeof path, "%s/out.npy", dir);
    write_file(path, "previous contents", 17);
    cls_npy w;
    assert_int_equal(cls_npy_create(path, CLS_F64, 2, (size_t[]){3, 4}, &w, err, sizeof err), CLS_OK);
    for (int i = 0; i < 12; i++) ((double *)w.data)[i] = -0.5 * i - 1.0;
    assert_int_equal(cls_npy_close(&w, 1, err, sizeof err), CLS_OK);
    assert_int_equal(count_files(dir), 1);
    cls_npy f;
    assert_int_equal(cls_npy_open(path, &f, err, sizeof err), CLS_OK);
    assert_int_equal(f.rows, 3);
    assert_int_equal(f.cols, 4);
    assert_close(((double *)f.data)[11], -6.5, 0.0);
    assert_int_equal(cls_npy_close(&f, 0, err, sizeof err), CLS_OK);
}

static void create_in_a_missing_folder_is_an_io_error(void **state)
{
    (void)state;
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-nofolder");
    snprintf(path, sizeof path, "%s/no/such/out.npy", dir);
    cls_npy w;
    assert_int_equal(cls_npy_create(path, CLS_F32, 1, (size_t[]){4}, &w, err, sizeof err), CLS_E_IO);
    assert_contains(err, path);
    assert_contains(err, "No such file or directory");
    assert_null(w.map);
    assert_int_equal(cls_npy_close(&w, 1, err, sizeof err), CLS_OK);
    assert_int_equal(count_files(dir), 0);
}

static void create_rejects_shapes_clscale_cannot_write(void **state)
{
    (void)state;
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-badshape");
    snprintf(path, sizeof path, "%s/out.npy", dir);
    cls_npy w;
    assert_int_equal(cls_npy_create(path, CLS_F32, 2, (size_t[]){4, 0}, &w, err, sizeof err), CLS_E_ARG);
    assert_contains(err, "empty array");
    assert_int_equal(cls_npy_create(path, CLS_F32, 4, (size_t[]){1, 1, 1, 1}, &w, err, sizeof err), CLS_E_ARG);
    assert_contains(err, "4 dimensions");
    assert_int_equal(cls_npy_create(path, CLS_F64, 2, (size_t[]){(size_t)1 << 62, 16}, &w, err, sizeof err),
                     CLS_E_ARG);
    assert_contains(err, "too large");
    assert_int_equal(count_files(dir), 0);
}

static void closing_twice_is_harmless(void **state)
{
    (void)state;
    char dir[1024], path[1200], err[ERR_LEN] = "";
    test_tmpdir(dir, sizeof dir, "npy-twice");
    snprintf(path, sizeof path, "%s/out.npy", dir);
    cls_npy w;
    assert_int_equal(cls_npy_create(path, CLS_F32, 1, (size_t[]){2}, &w, err, sizeof err), CLS_OK);
    ((float *)w.data)[0] = ((float *)w.data)[1] = 3.0f;
    assert_int_equal(cls_npy_close(&w, 1, err, sizeof err), CLS_OK);
    assert_int_equal(cls_npy_close(&w, 1, err, sizeof err), CLS_OK);
    assert_int_equal(count_files(dir), 1);
    cls_npy zero = {0};
    assert_int_equal(cls_npy_close(&zero, 0, err, sizeof err), CLS_OK);
}

/* The directory of a committed file is synced after the rename: its own
 * directory, the current one for a bare name, the root for "/name"; a
 * directory that does not exist is an error, not a silent success. */
static void the_directory_of_a_path_is_synced(void **state)
{
    (void)state;
    char dir[400], path[512];
    test_tmpdir(dir, sizeof dir, "npy-sync");
    snprintf(path, sizeof path, "%s/sync-me.npy", dir);
    assert_int_equal(cls_sync_dir_of(path), 0);
    assert_int_equal(cls_sync_dir_of("bare-name.npy"), 0);
    assert_int_equal(cls_sync_dir_of("/top-level.npy"), 0);
    snprintf(path, sizeof path, "%s/no-such-dir/x.npy", dir);
    assert_int_equal(cls_sync_dir_of(path), ENOENT);
    snprintf(path, sizeof path, "%s/sync-file", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    char inside[600];
    snprintf(inside, sizeof inside, "%s/x.npy", path);
    assert_int_equal(cls_sync_dir_of(inside), ENOTDIR);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_directory_of_a_path_is_synced),
        cmocka_unit_test(round_trip_1d_float32),
        cmocka_unit_test(round_trip_2d_float32),
        cmocka_unit_test(round_trip_3d_float32),
        cmocka_unit_test(round_trip_1d_float64),
        cmocka_unit_test(round_trip_2d_float64),
        cmocka_unit_test(round_trip_3d_float64),
        cmocka_unit_test(created_header_is_the_one_numpy_writes),
        cmocka_unit_test(created_data_starts_at_a_multiple_of_64),
        cmocka_unit_test(reads_a_file_numpy_wrote),
        cmocka_unit_test(reads_format_2_0),
        cmocka_unit_test(reads_format_3_0),
        cmocka_unit_test(reads_data_aligned_to_16_as_old_numpy_wrote),
        cmocka_unit_test(reads_keys_in_any_order),
        cmocka_unit_test(reads_double_quotes),
        cmocka_unit_test(reads_dict_without_trailing_comma),
        cmocka_unit_test(reads_extra_whitespace_and_trailing_commas),
        cmocka_unit_test(parse_header_message_starts_with_the_problem),
        cmocka_unit_test(rejects_truncated_data),
        cmocka_unit_test(rejects_trailing_data),
        cmocka_unit_test(rejects_truncated_header),
        cmocka_unit_test(rejects_header_length_past_end_of_file),
        cmocka_unit_test(rejects_wrong_magic),
        cmocka_unit_test(rejects_a_text_file),
        cmocka_unit_test(rejects_an_empty_file),
        cmocka_unit_test(rejects_unknown_format_version),
        cmocka_unit_test(rejects_big_endian_float64),
        cmocka_unit_test(rejects_int32),
        cmocka_unit_test(rejects_float16),
        cmocka_unit_test(rejects_bool),
        cmocka_unit_test(rejects_structured_dtype),
        cmocka_unit_test(rejects_fortran_order),
        cmocka_unit_test(rejects_4_dimensions),
        cmocka_unit_test(rejects_0_dimensions),
        cmocka_unit_test(rejects_a_zero_dimension),
        cmocka_unit_test(rejects_a_shape_whose_size_overflows),
        cmocka_unit_test(rejects_a_dimension_past_size_max),
        cmocka_unit_test(rejects_a_negative_dimension),
        cmocka_unit_test(rejects_an_unknown_key),
        cmocka_unit_test(rejects_a_missing_key),
        cmocka_unit_test(rejects_a_malformed_dict),
        cmocka_unit_test(missing_file_is_an_io_error),
        cmocka_unit_test(a_folder_is_an_io_error),
        cmocka_unit_test(discard_leaves_no_temp_file_and_destination_unchanged),
        cmocka_unit_test(commit_replaces_the_destination),
        cmocka_unit_test(create_in_a_missing_folder_is_an_io_error),
        cmocka_unit_test(create_rejects_shapes_clscale_cannot_write),
        cmocka_unit_test(closing_twice_is_harmless),
    };
    return TEST_RUN("npy", tests, NULL, NULL);
}
