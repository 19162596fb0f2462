/* Runtime build of the embedded OpenCL sources, one program per device.
 * Owns: the assembled source text, the -D options per device, the build from
 * the binary cache or from source, and the kernel objects. Calls cache.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernels.h"

const char *const cls_kernel_names[CLS_K_COUNT] = {
    [CLS_K_FIT_APPLY_MM] = "fit_apply_mm",
    [CLS_K_FIT_APPLY_MV] = "fit_apply_mv",
    [CLS_K_STATS_MM] = "stats_mm",
    [CLS_K_STATS_MV] = "stats_mv",
    [CLS_K_STATS_REDUCE] = "stats_reduce",
    [CLS_K_APPLY] = "apply",
    [CLS_K_DISCOUNT] = "discount",
    [CLS_K_COPY] = "copy",
};

static char *source;
static size_t source_len;
static pthread_once_t source_once = PTHREAD_ONCE_INIT;

static void assemble(void)
{
    static const char f32[] = "\n#define REAL float\n#define REAL_BYTES 4\n#define SFX _f32\n";
    static const char f64[] = "\n#undef REAL\n#undef REAL_BYTES\n#undef SFX\n#if CLS_FP64\n"
                              "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                              "#define REAL double\n#define REAL_BYTES 8\n#define SFX _f64\n";
    static const char end[] = "\n#endif\n";
    size_t n = strlen(cls_src_common) + strlen(f32) + 2 * strlen(cls_src_scale) + strlen(f64)
               + strlen(end) + 1;
    source = malloc(n);
    if (!source) return;
    snprintf(source, n, "%s%s%s%s%s%s", cls_src_common, f32, cls_src_scale, f64, cls_src_scale, end);
    source_len = strlen(source);
}

const char *cls_program_source(size_t *len)
{
    pthread_once(&source_once, assemble);
    if (len) *len = source_len;
    return source;
}

void cls_program_options(const cls_dev *dev, char *buf, size_t len)
{
    int n = snprintf(buf, len, "-cl-std=CL1.2 -DVEC=%u -DKV=%u -DCLS_FP64=%d -DCLS_NT=%d -DCLS_PREFETCH=%d",
                     dev->vec, dev->kv, dev->info.fp64 ? 1 : 0, dev->nt, dev->nt);
    if (dev->build_slot > 0 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " -DCLS_BUILD_SLOT=%d", dev->build_slot);
}

/* Keeps the build log of `prog` for `dev` (NUL-terminated, trimmed). */
static void keep_log(cls_dev *dev, cl_program prog)
{
    size_t n = 0;
    if (clGetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return;
    char *log = malloc(n + 1);
    if (!log) return;
    if (clGetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
        free(log);
        return;
    }
    log[n] = '\0';
    while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\0' || log[n - 1] == ' ')) log[--n] = '\0';
    free(dev->build_log);
    dev->build_log = log;
}

static cl_program from_binary(cls_dev *dev, const unsigned char *bin, size_t len, const char *opts)
{
    cl_int e, st;
    cl_program p = clCreateProgramWithBinary(dev->cl, 1, &dev->id, &len, &bin, &st, &e);
    if (e != CL_SUCCESS || st != CL_SUCCESS) {
        if (p) clReleaseProgram(p);
        return NULL;
    }
    if (clBuildProgram(p, 1, &dev->id, opts, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(p);
        return NULL;
    }
    return p;
}

static void save_binary(cls_dev *dev, cl_program p, const char *dir, uint64_t key)
{
    size_t len = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || !len)
        return;
    unsigned char *bin = malloc(len);
    if (!bin) return;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS)
        cls_cache_put(dir, key, bin, len);
    free(bin);
    (void)dev;
}

static cls_status make_kernels(cls_context *ctx, cls_dev *dev)
{
    for (int k = 0; k < CLS_K_COUNT; k++) {
        for (int t = 0; t < 2; t++) {
            if (t == CLS_F64 && !dev->info.fp64) continue;
            char name[64];
            snprintf(name, sizeof name, "%s_%s", cls_kernel_names[k], t == CLS_F64 ? "f64" : "f32");
            cl_int e;
            dev->k[k][t] = clCreateKernel(dev->program, name, &e);
            if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateKernel", e);
            size_t wg = 0;
            CL_TRY(ctx, dev, clGetKernelWorkGroupInfo(dev->k[k][t], dev->id, CL_KERNEL_WORK_GROUP_SIZE,
                                                      sizeof wg, &wg, NULL));
            while (wg && dev->local > wg) dev->local /= 2;
        }
    }
    if (dev->local == 0) dev->local = 1;
    return CLS_OK;
}

cls_status cls_program_build(cls_context *ctx, cls_dev *dev)
{
    size_t len;
    const char *src = cls_program_source(&len);
    if (!src) return cls_fail(ctx, CLS_E_NOMEM, "out of memory assembling the kernel source");
    char opts[256];
    cls_program_options(dev, opts, sizeof opts);

    const char *dir = ctx->cache_dir;
    uint64_t key = 0;
    if (dir && *dir) {
        char drv[512];
        snprintf(drv, sizeof drv, "%s|%s|%s", dev->info.platform, dev->info.version, dev->info.driver);
        key = cls_cache_key(dev->info.name, drv, src, len, opts);
        unsigned char *bin;
        size_t blen;
        if (cls_cache_get(dir, key, &bin, &blen) == 0) {
            dev->program = from_binary(dev, bin, blen, opts);
            dev->from_cache = dev->program != NULL;
            free(bin);
        }
    }
    if (!dev->program) {
        cl_int e;
        dev->program = clCreateProgramWithSource(dev->cl, 1, &src, &len, &e);
        if (e != CL_SUCCESS) return cls_fail_cl(ctx, dev, "clCreateProgramWithSource", e);
        e = clBuildProgram(dev->program, 1, &dev->id, opts, NULL, NULL);
        if (e != CL_SUCCESS) {
            keep_log(dev, dev->program);
            char label[512];
            cls_dev_label(dev, label, sizeof label);
            return cls_fail(ctx, CLS_E_BUILD, "%s: clBuildProgram: %s (%d); build log:\n%s", label,
                            cls_cl_error_name(e), (int)e, dev->build_log ? dev->build_log : "(empty)");
        }
        if (dir && *dir) save_binary(dev, dev->program, dir, key);
    }
    return make_kernels(ctx, dev);
}

void cls_program_release(cls_dev *dev)
{
    for (int k = 0; k < CLS_K_COUNT; k++)
        for (int t = 0; t < 2; t++)
            if (dev->k[k][t]) {
                clReleaseKernel(dev->k[k][t]);
                dev->k[k][t] = NULL;
            }
    if (dev->program) clReleaseProgram(dev->program);
    dev->program = NULL;
    free(dev->build_log);
    dev->build_log = NULL;
}
