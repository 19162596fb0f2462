/* Read-only passes over an array in a file (stream.c), for the calls that
 * only read it (cls_describe over a file: describe_stream.c). */
#ifndef CLS_FILE_READ_H
#define CLS_FILE_READ_H

#include "api/entries.h"
#include "internal.h"

/* One chunk of a pass: `ng` statistics groups from group g0, each `rows`
 * rows x C values from row r0 of its group, one group after another at x
 * (valid during the call only). ng > 1 only with whole groups (r0 = 0,
 * rows = the group's rows). */
typedef cls_status (*cls_fchunk_fn)(void *cu, uint64_t g0, uint64_t ng, uint64_t r0, uint64_t rows,
                                    const char *x);

/* each(user, fn, cu) reads the whole array once, calling fn for every
 * chunk in the order of the file (a group's rows in their order), and
 * returns the first failure. whole: every chunk holds whole groups. */
typedef struct cls_fread {
    cls_status (*each)(void *user, cls_fchunk_fn fn, void *cu);
    void *user;
    int   whole;
} cls_fread;

/* cls_file_read(): body(user, src) with the passes over `in` (groups of
 * `scope`) through the stream's bounded pool (opts as cls_stream_opts);
 * then the check that the input did not change while it was read.
 * Progress and the report as the other streaming calls'. */
typedef cls_status (*cls_fread_body)(void *user, const cls_fread *src);
cls_status cls_file_read(cls_context *ctx, const cls_file_array *in, cls_scope scope, const cls_stream_opts *opts,
                         cls_fread_body body, void *user);

#endif
