/* The tool's inputs, see input.h. Calls the .npy files and the guard.
 *
 * Why a SIGBUS handler and not a copy: inputs stay mapped (an array larger
 * than memory streams from the page cache) and are read by threads the tool
 * does not own (the OpenCL driver's, which read host memory in place), so a
 * sigsetjmp-guarded copy would cover only the tool's own reads and cost a
 * full copy; pread() would need the whole array in memory. The guard's
 * handler instead recognises a fault inside a watched mapping, whichever
 * thread took it, and ends the run cleanly (guard.c). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "guard.h"
#include "input.h"

int cli_input_open(const char *path, cls_npy *f, int need2d)
{
    char err[1024];
    if (cls_npy_open(path, f, err, sizeof err) != CLS_OK) return cli_error(EXIT_FAIL, "%s", err);
    if (need2d && f->ndim < 2) {
        size_t n = f->shape[0];
        cls_npy_close(f, 0, NULL, 0);
        return cli_error(EXIT_FAIL, "%s: 1 dimension (shape (%zu,)); clscale takes 2-D rows x cols "
                         "or 3-D batch x rows x cols", path, n);
    }
    cli_guard_watch(f->map, f->map_len, path, 0);
    return 0;
}

int cli_factors_as(cls_npy *f, cls_dtype dtype, const char *path)
{
    if (f->dtype == dtype) return 0;
    size_t n = f->batch * f->rows * f->cols, size = dtype == CLS_F64 ? sizeof(double) : sizeof(float);
    void *buf = malloc(n * size);
    if (!buf) return cli_error(EXIT_FAIL, "%s: out of memory converting %zu factors", path, n);
    if (dtype == CLS_F64) {
        const float *s = f->data;
        double *d = buf;
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        const double *s = f->data;
        float *d = buf;
        for (size_t i = 0; i < n; i++)
            d[i] = fabs(s[i]) > FLT_MAX && isfinite(s[i]) ? (float)copysign(INFINITY, s[i]) : (float)s[i];
    }
    cls_npy keep = *f;
    cli_guard_unwatch(f->map);
    cls_npy_close(f, 0, NULL, 0);
    *f = keep;
    f->path = NULL;
    f->map = NULL;
    f->map_len = 0;
    f->data = buf;
    f->data_bytes = n * size;
    f->dtype = dtype;
    return 0;
}

void cli_input_close(cls_npy *f)
{
    if (f->map) cli_guard_unwatch(f->map);
    else if (f->data) { /* converted factors */
        free(f->data);
        memset(f, 0, sizeof *f);
        f->fd = -1;
        return;
    }
    cls_npy_close(f, 0, NULL, 0);
}
