/* See stream_run.h. Calls only the library and libc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream_run.h"

int cli_stream_wanted(const cls_npy *in)
{
    const char *e = getenv("CLSCALE_STREAM");
    if (e && !strcmp(e, "1")) return 1;
    if (e && !strcmp(e, "0")) return 0;
    (void)in;
    return 1;  /* measured as fast as the mapped path in memory: docs/STREAMING.md */
}

cls_status cli_stream_run(cls_context *ctx, const cls_pipeline *p, const cls_stats *stats, cls_stats **fitted,
                          const char *in_path, const cls_npy *in, const cls_npy *out, char *err, size_t errlen)
{
    *err = '\0';
    int fd = open(in_path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", in_path, strerror(errno));
        if (fd >= 0) close(fd);
        return CLS_E_IO;
    }
    if ((uint64_t)sb.st_size != (uint64_t)in->map_len) {
        snprintf(err, errlen, "%s: changed size while being read (%zu bytes, then %lld)", in_path, in->map_len,
                 (long long)sb.st_size);
        close(fd);
        return CLS_E_IO;
    }
    cls_array a = {.where = CLS_IN_FILE, .fd = fd, .offset = (uint64_t)((const char *)in->data - (const char *)in->map), .dtype = in->dtype, .batch = in->batch, .rows = in->rows, .cols = in->cols, .path = in_path};
    cls_array o = {.where = CLS_IN_FILE, .fd = out->fd, .offset = (uint64_t)((const char *)out->data - (const char *)out->map), .dtype = out->dtype, .batch = out->batch, .rows = out->rows, .cols = out->cols, .path = out->path};
    cls_status st = stats ? cls_transform(ctx, p, stats, &a, &o)
                          : cls_fit_transform(ctx, p, &a, &o, fitted);
    close(fd);
    return st;
}
