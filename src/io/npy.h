/* NumPy .npy files: the clscale tool's input and output, and the tests'
 * fixtures. Not part of the library's API.
 *
 * Reading maps the whole file (an array larger than RAM streams from disk as
 * the devices read it); writing maps a temporary file beside the destination
 * that the library fills in place, renamed onto the destination only when the
 * caller commits, so that a failed run never leaves a half-written file.
 *
 * Every function returns CLS_OK or a status and writes one line into `err`
 * (which may be NULL): what is wrong, in the user's words, after the file's
 * name. Nothing prints, nothing aborts. */
#ifndef CLS_NPY_H
#define CLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "clscale.h"

/* A created file of numpy bools ('|b1', a byte 0 or 1 per value: the
 * tool's --mask-out); never read, not a dtype of the library's arrays. */
#define CLS_NPY_BOOL ((cls_dtype)2)

typedef struct cls_npy {
    cls_dtype dtype;      /* CLS_F32 for '<f4', CLS_F64 for '<f8', CLS_NPY_BOOL (created only) */
    size_t    ndim;       /* 1, 2 or 3 */
    size_t    shape[3];   /* the file's shape, shape[0..ndim) */
    size_t    batch, rows, cols;  /* as clscale sees it: (n) -> 1 x 1 x n,
                                     (r, c) -> 1 x r x c, 3-D as is */
    void     *data;       /* the array's first element (inside the mapping) */
    size_t    data_bytes;
    /* private */
    void  *map;
    size_t map_len;
    int    fd;            /* open while writable, -1 otherwise */
    int    writable;
    char  *path;
    char  *tmp_path;      /* the temporary file a created array lives in */
} cls_npy;

/* cls_npy_parse_header() : reads the header at the start of `buf` (`len`
 * bytes, the whole file or at least its header): format 1.0, 2.0 or 3.0, dtype
 * '<f4' or '<f8', C order, 1 to 3 dimensions, none of them 0, and a shape
 * whose data (with the header) fits in a ptrdiff_t. The data must start at a
 * multiple of the element size (numpy aligns it to 16 or 64).
 * `*data_offset` receives where the data starts; unused shape[] entries are 0.
 * @return CLS_OK, or CLS_E_FORMAT with a message that starts with the problem
 *         ("dtype '>f8' is big-endian; ..."). */
cls_status cls_npy_parse_header(const void *buf, size_t len, cls_dtype *dtype, size_t *ndim,
                                size_t shape[3], size_t *data_offset, char *err, size_t errlen);

/* cls_npy_check_data() : checks that a file of `file_size` bytes whose header
 * (parsed by cls_npy_parse_header()) ends at `data_offset` holds exactly the
 * array's data after it: no less ("truncated: ..."), no more ("N bytes of
 * trailing data ..."). `*data_bytes` receives the data's size.
 * @return CLS_OK, or CLS_E_FORMAT with a message that starts with the problem. */
cls_status cls_npy_check_data(cls_dtype dtype, size_t ndim, const size_t shape[3],
                              size_t data_offset, uint64_t file_size, size_t *data_bytes,
                              char *err, size_t errlen);

/* cls_npy_open() : maps `path` read-only after checking its header and size
 * as above. Close with cls_npy_close(f, 0, ...).
 * @return CLS_OK, CLS_E_IO (cannot open, stat or map: the message has
 *         strerror), or CLS_E_FORMAT. On failure *out holds nothing to close. */
cls_status cls_npy_open(const char *path, cls_npy *out, char *err, size_t errlen);

/* cls_npy_create() : makes a temporary file `.<name>.tmp.<pid>.<n>` in the
 * folder of `path`, sized for an array of `dtype` (CLS_NPY_BOOL too) and
 * `shape` (ndim 1 to 3, every dimension >= 1) with a numpy 1.0 header (data
 * 64-aligned), and maps it read-write: out->data is where the array goes. `path` itself is untouched
 * until cls_npy_close(f, 1, ...). A symlink `path` is resolved first
 * (out_target.h): the temporary goes beside the file it names and replaces
 * that file, the link stays. A device or pipe cannot be mapped: CLS_E_ARG.
 * @return CLS_OK, CLS_E_ARG (bad dtype or shape), CLS_E_NOMEM, or CLS_E_IO
 *         (the folder does not exist or is not writable, no space, ...).
 *         On failure no temporary file is left and *out holds nothing to close. */
cls_status cls_npy_create(const char *path, cls_dtype dtype, size_t ndim, const size_t *shape,
                          cls_npy *out, char *err, size_t errlen);

/* cls_npy_create_fd() : as cls_npy_create(), in a file the caller created:
 * `fd` (read-write, empty) is the temporary `tmp` that cls_npy_close(f, 1)
 * renames onto `path` (already resolved by the caller). With `tmp` NULL the
 * file is scratch (an O_TMPFILE or memfd whose bytes the caller copies
 * somewhere itself): cls_npy_close() then only releases it. For callers that
 * must know the temporary's name before it exists (the tool registers it for
 * removal on a signal first). Takes `fd` whatever the result: on failure it
 * is closed and `tmp` removed.
 * @return as cls_npy_create(). */
cls_status cls_npy_create_fd(int fd, const char *path, const char *tmp, cls_dtype dtype, size_t ndim,
                             const size_t *shape, cls_npy *out, char *err, size_t errlen);

/* cls_npy_temp_name() : "DIR/.NAME.tmp.PID.N", the temporary beside `path`
 * that cls_npy_create() uses (NAME cut to CLS_NPY_TEMP_BASE_MAX bytes); a
 * malloc'd string, NULL when out of memory. The tool removes such files of
 * processes that no longer exist (tools/cli/output.c). */
#define CLS_NPY_TEMP_BASE_MAX 200
char *cls_npy_temp_name(const char *path, unsigned n);

/* cls_npy_sync() : writes a created file's mapping to disk (msync, fsync)
 * without renaming it: a caller committing two files checks that both are
 * on disk before renaming either. No-op for an opened file.
 * @return CLS_OK, or CLS_E_IO naming the file and the failed call. */
cls_status cls_npy_sync(cls_npy *f, char *err, size_t errlen);

/* cls_npy_close() : releases `f`. For a created file, `commit` = 1 writes the
 * mapping to disk (msync, fsync) and renames the temporary file onto the
 * destination in one step; `commit` = 0 removes the temporary file and leaves
 * the destination as it was. A commit that fails also removes the temporary
 * file. For an opened file `commit` is ignored. Afterwards *f holds nothing,
 * whatever the result; closing it again is a no-op.
 * @return CLS_OK, or CLS_E_IO naming the file and the failed call. */
cls_status cls_npy_close(cls_npy *f, int commit, char *err, size_t errlen);

#endif /* CLS_NPY_H */
