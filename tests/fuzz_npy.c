/* libFuzzer target for the .npy header parser (src/npy.c): any bytes are a
 * file. A header that parses must describe what clscale takes (float32 or
 * float64, 1 to 3 non-zero dimensions, a size that fits), and the data-size
 * check must accept exactly the file size the header implies. A rejection
 * must say why in one line. Violations trap. Each input is also tried as
 * (the end of) the dict of a 1.0 header, so that the fuzzer reaches the dict
 * parser and the size checks without a seed corpus.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *       tests/fuzz_npy.c src/npy.c -o /tmp/fuzz_npy && /tmp/fuzz_npy -max_total_time=20 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static void check_message(const char *err, size_t cap)
{
    size_t n = strnlen(err, cap);
    CHECK(n > 0 && n < cap);
    CHECK(!memchr(err, '\n', n));
}

static void one_file(const uint8_t *data, size_t size)
{
    char err[256];
    cls_dtype dt = CLS_F32;
    size_t ndim = 0, shape[3] = {0, 0, 0}, off = 0, bytes = 0;
    memset(err, 'x', sizeof err);
    cls_status st = cls_npy_parse_header(data, size, &dt, &ndim, shape, &off, err, sizeof err);
    if (st != CLS_OK) {
        CHECK(st == CLS_E_FORMAT);
        check_message(err, sizeof err);
        return;
    }
    size_t esize = dt == CLS_F64 ? 8 : dt == CLS_F32 ? 4 : 0;
    CHECK(esize != 0);
    CHECK(ndim >= 1 && ndim <= 3);
    CHECK(off >= 10 && off <= size && off % esize == 0);
    size_t want = esize, end;
    for (size_t i = 0; i < 3; i++) {
        if (i < ndim) CHECK(shape[i] >= 1 && !__builtin_mul_overflow(want, shape[i], &want));
        else CHECK(shape[i] == 0);
    }
    CHECK(!__builtin_add_overflow(want, off, &end) && end <= (size_t)PTRDIFF_MAX);

    /* The file as given, one byte short of the header's size, one byte over. */
    st = cls_npy_check_data(dt, ndim, shape, off, size, &bytes, err, sizeof err);
    if (size == end) {
        CHECK(st == CLS_OK && bytes == want);
    } else {
        CHECK(st == CLS_E_FORMAT);
        check_message(err, sizeof err);
    }
    CHECK(cls_npy_check_data(dt, ndim, shape, off, (uint64_t)end - 1, &bytes, err, sizeof err) ==
          CLS_E_FORMAT);
    CHECK(cls_npy_check_data(dt, ndim, shape, off, (uint64_t)end + 1, &bytes, err, sizeof err) ==
          CLS_E_FORMAT);
    CHECK(cls_npy_check_data(dt, ndim, shape, off, end, &bytes, err, sizeof err) == CLS_OK && bytes == want);
}

/* The input after `lead` as the header of a 1.0 file. */
static void as_header(const char *lead, const uint8_t *data, size_t size)
{
    size_t n = strlen(lead), hlen = n + size;
    if (hlen > 0xffff) return;
    uint8_t *file = malloc(10 + hlen);
    if (!file) return;
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    file[8] = (uint8_t)(hlen & 0xff);
    file[9] = (uint8_t)(hlen >> 8);
    memcpy(file + 10, lead, n);
    if (size) memcpy(file + 10 + n, data, size);
    one_file(file, 10 + hlen);
    free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte picks how much of a valid header comes before the
     * rest: none, or everything but the shape or the dtype. */
    static const char *const leads[] = {
        "",
        "{'descr': '<f8', 'fortran_order': False, 'shape': ",
        "{'shape': (2, 3), 'fortran_order': False, 'descr': ",
    };
    one_file(data, size);
    if (size > 0) as_header(leads[data[0] % 3], data + 1, size - 1);
    return 0;
}
