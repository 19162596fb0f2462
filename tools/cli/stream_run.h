/* The tool's file-to-file path through the library's streaming calls
 * (cls_stream_*), for normalize, apply and discount: the reads, the
 * devices' work and the writes overlap in a bounded pool of buffers,
 * instead of the devices faulting the mapped input in and leaving the
 * mapped output to write-back (docs/STREAMING.md). */
#ifndef CLS_CLI_STREAM_RUN_H
#define CLS_CLI_STREAM_RUN_H

#include "clscale.h"
#include "io/npy.h"

/* Whether to stream IN: $CLSCALE_STREAM=1 always, =0 never, otherwise
 * (auto) the choice docs/STREAMING.md measured. */
int cli_stream_wanted(const cls_npy *in);

/* Runs the pipeline from the file IN (opened and checked as `in`) into
 * `out` (created by cls_npy_create(), committed by the caller): fits and
 * transforms when `stats` is NULL (`fitted` may receive the statistics),
 * else transforms with them (p NULL: the recorded pipeline).
 * @return the library's status; its message is `err` when not empty (the
 *         input could not be opened again), else cls_last_error(ctx). */
cls_status cli_stream_run(cls_context *ctx, const cls_pipeline *p, const cls_stats *stats, cls_stats **fitted,
                          const char *in_path, const cls_npy *in, const cls_npy *out, char *err, size_t errlen);

#endif
