/* What the two halves of the .npy code share (npy_format.c defines them,
 * npy_file.c uses them). Private to src/io/. */
#ifndef CLS_NPY_FORMAT_H
#define CLS_NPY_FORMAT_H

#include "npy.h"

#if defined(__GNUC__)
#define NPY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NPY_PRINTF(f, a)
#endif

#define WHY_LEN 1024 /* a message before the file name is put in front */

/* Formats the message into err (when not NULL) and returns `s`. */
cls_status cls_npy_fail(char *err, size_t errlen, cls_status s, const char *fmt, ...) NPY_PRINTF(4, 5);
/* "(2, 3)": the shape as numpy prints it, into buf. */
void cls_npy_shape_text(char *buf, size_t len, size_t ndim, const size_t *shape);
/* "float32" or "float64". */
const char *cls_npy_dtype_name(cls_dtype dt);
/* The bytes of an array of `dt` and `shape` after a header of `offset`
 * bytes; 0 when that overflows. */
size_t cls_npy_data_size(cls_dtype dt, size_t ndim, const size_t *shape, size_t offset);
/* Writes a numpy 1.0 header for `dt` and `shape` into buf (cap bytes);
 * returns its length (the data's offset), 0 when it does not fit. */
size_t cls_npy_write_header(unsigned char *buf, size_t cap, cls_dtype dt, size_t ndim, const size_t *shape);

#endif /* CLS_NPY_FORMAT_H */
