/* The engine's entry points, one per kind of data, that the front door
 * (src/api/front.c) chooses between: host arrays, cl_mem buffers on the
 * caller's context, arrays in files, .npy files. Their arguments and
 * failures are the public calls' (include/clscale.h), which check what
 * they add (the data's kind, a combine hook) and pass the rest on. The
 * fits take the call's route (plan/route.h, decided once by the front
 * door), whose decisions they act on. */
#ifndef CLS_API_ENTRIES_H
#define CLS_API_ENTRIES_H

#include "clscale.h"
#include "clean/entries.h"
#include "plan/entries.h"
#include "quantiles/entries.h"

/* A host array's kinds, as the engine's buffer and file paths take them. */
typedef struct cls_buffer {
    struct _cl_mem *mem;
    size_t          offset;
    cls_dtype       dtype;
    size_t          batch, rows, cols;
} cls_buffer;

typedef struct cls_file_array {
    int         fd;
    uint64_t    offset;
    cls_dtype   dtype;
    size_t      batch, rows, cols;
    const char *name; /* for messages; NULL: "file descriptor N" */
} cls_file_array;

/* host memory: the planner's (plan/entries.h), the cleaning stage's
 * (clean/entries.h) and exact selection's (quantiles/entries.h) */
/* cls_describe (scope, sigma > 0 and out checked): describe.c in memory,
 * describe_stream.c for CLS_IN_FILE and CLS_IN_NPY */
cls_status cls_host_describe(cls_context *ctx, const cls_array *x, cls_scope scope, double sigma, cls_summary *out);
cls_status cls_file_describe(cls_context *ctx, const cls_array *x, cls_scope scope, double sigma, cls_summary *out);

/* cl_mem buffers: buffer.c */
cls_status cls_buf_fit(cls_context *ctx, const cls_pipeline *p, const cls_buffer *x, const cls_sync *sync,
                       cls_stats **out);
cls_status cls_buf_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_buffer *in,
                             const cls_buffer *out, const cls_sync *sync);
cls_status cls_buf_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_buffer *in,
                                 const cls_buffer *out, cls_stats **fitted, const cls_sync *sync);

/* arrays in files: stream.c; .npy files: stream_file.c (out_path NULL:
 * a fit alone; s given: a transform, r unused and may be NULL) */
cls_status cls_file_fit(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_file_array *in,
                        const cls_stream_opts *opts, cls_stats **out);
cls_status cls_file_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s, const cls_file_array *in,
                              const cls_file_array *out, const cls_stream_opts *opts);
cls_status cls_file_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                  const cls_file_array *in, const cls_file_array *out, const cls_stream_opts *opts,
                                  cls_stats **fitted);
/* cls_file_fit_transform() in its two steps, which a .npy call takes
 * apart to create its output between them (stream_file.c): the door,
 * which checks every argument once (the files' arrays, out_open 0: an
 * output not created yet, its shape alone; the pipeline; the cleaning
 * stage's options and light curves) and asks the route once for the
 * call's plan of stages (*stages, plan/route.h's cls_route_stages), before
 * anything is written; then the run of that plan, which checks nothing
 * again (the chunks go through the cls_chunk_* entries). */
cls_status cls_file_check_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                        const cls_file_array *in, const cls_file_array *out,
                                        const cls_stream_opts *opts, int want_fitted, int out_open,
                                        cls_stages *stages);
cls_status cls_file_run_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_stages *stages,
                                      const cls_file_array *in, const cls_file_array *out,
                                      const cls_stream_opts *opts, cls_stats **fitted);
cls_status cls_file_fit_transform_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                           const cls_file_array *in, const cls_file_array *out,
                                           const cls_stream_opts *opts, const cls_combine *combine,
                                           cls_stats **fitted);
/* cls_fit() of a file's array across processes, and cls_fit_transform()
 * without a cleaning stage: that fit, then each process's own transform
 * (api/fit_combined.c). */
cls_status cls_file_fit_combined(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_array *x,
                                 cls_stats **out);
cls_status cls_file_fit_transform_across(cls_context *ctx, const cls_pipeline *p, const cls_route *r,
                                         const cls_array *in, const cls_array *out, cls_stats **fitted);
/* Opens the .npy file at path and reads its header into *a (fd open
 * read-only: the caller closes it). */
cls_status cls_npy_open_input(cls_context *ctx, const char *path, cls_file_array *a);
cls_status cls_npy_run(cls_context *ctx, const cls_pipeline *p, const cls_route *r, const cls_stats *s,
                       const char *in_path, const char *out_path, const cls_stream_opts *opts, cls_stats **fitted);

#endif
