/* Runtime build of the embedded OpenCL sources: one program per device,
 * kernel and dtype, each built the first time it is needed.
 * Owns: the assembled source text, the -D options per program, the build
 * from the binary cache or from source, and the kernel objects. Calls
 * cache.c.
 *
 * Why a program per kernel: PoCL parses a cached program's whole LLVM
 * bitcode when it loads it (18 ms for all sixteen kernels, 2-5 ms for
 * one), and compiles every kernel of a program to machine code when its
 * binary is asked for (most of a cold context's 11-12 s). A context now
 * builds the float32 copy kernel only (the zero-copy check, speed probes
 * and cls_device_measure use it, and it proves the device compiles); a
 * call builds the kernels it launches, on the worker of their device.
 * A build that fails is remembered: the device drops out of calls that
 * need that kernel (the others carry them, run.c) without compiling again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sort_shape.h"
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
    [CLS_K_QSELECT_SMALL] = "qselect_small",
    [CLS_K_QHIST] = "qhist",
    [CLS_K_QHIST_REDUCE] = "qhist_reduce",
    [CLS_K_CLEAN_MOMENTS] = "clean_moments",
    [CLS_K_CLEAN_APPLY] = "clean_apply",
    [CLS_K_QSORT32] = "qsort32",
    [CLS_K_QSORT64] = "qsort64",
    [CLS_K_OUTLIERS] = "outliers",
    [CLS_K_ROW_HASH] = "row_hash",
    [CLS_K_CLIP32] = "clip32",
    [CLS_K_CLIP64] = "clip64",
    [CLS_K_CLIP32L] = "clip32l",
    [CLS_K_CLIP64L] = "clip64l",
    [CLS_K_QSORT32G] = "qsort32g",
    [CLS_K_QSORT64G] = "qsort64g",
    [CLS_K_QSORT128] = "qsort128",
    [CLS_K_QSORTG] = "qsortg",
    [CLS_K_CLIPSORT] = "clipsort",
    [CLS_K_WSORT] = "wsort",
    [CLS_K_MOVAVG] = "movavg",
    [CLS_K_SAVGOL] = "savgol",
    [CLS_K_BIN_SMOOTH] = "bin_smooth",
    [CLS_K_BIN_REDUCE] = "bin_reduce",
    [CLS_K_SAVGOL3] = "savgol",
    [CLS_K_SAVGOL3V] = "savgol3v",
    /* the same functions, built with -DCLS_IMPUTE=1, then 2 */
    [CLS_K_FIT_APPLY_MM_IMP] = "fit_apply_mm",
    [CLS_K_FIT_APPLY_MV_IMP] = "fit_apply_mv",
    [CLS_K_STATS_MM_IMP] = "stats_mm",
    [CLS_K_STATS_MV_IMP] = "stats_mv",
    [CLS_K_STATS_REDUCE_IMP] = "stats_reduce",
    [CLS_K_APPLY_IMP] = "apply",
    [CLS_K_FIT_APPLY_MM_IMPS] = "fit_apply_mm",
    [CLS_K_FIT_APPLY_MV_IMPS] = "fit_apply_mv",
    [CLS_K_STATS_MM_IMPS] = "stats_mm",
    [CLS_K_STATS_MV_IMPS] = "stats_mv",
    [CLS_K_STATS_REDUCE_IMPS] = "stats_reduce",
    [CLS_K_APPLY_IMPS] = "apply",
};

static char *source;
static size_t source_len;
static pthread_once_t source_once = PTHREAD_ONCE_INIT;

static void assemble(void)
{
    static const char f32[] = "\n#if CLS_REAL_BYTES == 4\n#define REAL float\n#define REAL_BYTES 4\n"
                              "#define SFX _f32\n";
    static const char f64[] = "\n#elif CLS_REAL_BYTES == 8 && CLS_FP64\n"
                              "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                              "#define REAL double\n#define REAL_BYTES 8\n#define SFX _f64\n";
    static const char end[] = "\n#endif\n";
    /* each REAL section: lanes.cl after scale.cl (whose RV() it would
     * clash with), before quantile.cl and clip.cl, which use it;
     * quantile.cl, sort.cl and clip_sort.cl in a row (the last undefines
     * the keys and filter the first defines) */
    const char *part[] = {cls_src_scale, cls_src_lanes, cls_src_quantile, cls_src_sort, cls_src_clip_sort,
                          cls_src_clean, cls_src_describe, cls_src_clip, cls_src_clip_local, cls_src_lightcurve};
    size_t np = sizeof part / sizeof *part, body = 0;
    for (size_t i = 0; i < np; i++) body += strlen(part[i]);
    size_t n = strlen(cls_src_common) + strlen(cls_src_sortnet) + strlen(f32) + 2 * body + strlen(f64) +
               strlen(end) + 1;
    source = malloc(n);
    if (!source) return;
    char *o = source;
    o = stpcpy(o, cls_src_common);
    o = stpcpy(o, cls_src_sortnet);
    o = stpcpy(o, f32);
    for (size_t i = 0; i < np; i++) o = stpcpy(o, part[i]);
    o = stpcpy(o, f64);
    for (size_t i = 0; i < np; i++) o = stpcpy(o, part[i]);
    stpcpy(o, end);
    source_len = strlen(source);
}

const char *cls_program_source(size_t *len)
{
    pthread_once(&source_once, assemble);
    if (len) *len = source_len;
    return source;
}

void cls_program_options(const cls_dev *dev, int kernel, cls_dtype t, unsigned copy, char *buf, size_t len)
{
    cls_program_options_cf(dev, kernel, t, copy, -1, buf, len);
}

void cls_program_options_cf(const cls_dev *dev, int kernel, cls_dtype t, unsigned copy, long cf, char *buf,
                            size_t len)
{
    /* a slot's copies are numbered after the slots below it (build_slot.c) */
    long slot = (long)(dev->build_slot > 0 ? dev->build_slot : 0) * CLS_MAX_QUEUES + copy;
    int n = snprintf(buf, len,
                     "-cl-std=CL1.2 -DCLS_KERNEL=%d -DCLS_REAL_BYTES=%d -DVEC=%u -DKV=%u -DCLS_FP64=%d "
                     "-DCLS_NT=%d -DCLS_PREFETCH=%d -DCLS_XW64=%u -DCLS_SORT_MERGE_MAX=%d -DCLS_SORT_WIDE_MIN=%d -DCLS_SORT_LANE_MAX=%d",
                     cls_kernel_base(kernel), t == CLS_F64 ? 8 : 4, dev->vec, dev->kv, dev->info.fp64 ? 1 : 0,
                     dev->nt, dev->nt, dev->xw64, CLS_SORT_MERGE_MAX, CLS_SORT_WIDE_MIN,
                     CLS_SORT_LANE_MAX);
    /* the scalers' codes, by name (src/scalers/table.c) */
    if (n > 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, "%s", cls_scaler_kernel_defines());
    if (cls_kernel_imputes(kernel) && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " -DCLS_IMPUTE=%d", cls_kernel_imputes(kernel));
    /* Oclgrind 21.10 runs two instructions of optimised LLVM IR wrongly
     * (tests/repro/oclgrind_opt.c shows both without clscale): a zext of
     * a vector of i1 gives 255 for true (clip.cl's count of values below
     * the median, `j -= mask`, so its MAD came out +Inf: test_clip_fast),
     * and a trunc to an odd width (i3) keeps the bits above it
     * (clip_sort.cl's fill choice, `(flags >> 8) & 7`, next to its flag
     * at bit 14: a median fill NaN, test_regimes). Our IR is right there
     * (PoCL and rusticl run it right); unoptimised builds contain neither
     * instruction, and a simulator's speed is not the point of running
     * there. No other kernel's optimised IR holds a vector zext of i1 or
     * a trunc to an odd width but clip_local.cl's: its fill field (a trunc
     * to i3) sees bit 11 (CLS_XF_KEEP) only without a fill, and its stage
     * field (bits 12-13, a trunc to i2) no flag above it; a flag at bit 14
     * or above would need it unoptimised there too */
    int base = cls_kernel_base(kernel);
    if ((base == CLS_K_CLIP32 || base == CLS_K_CLIP64 || base == CLS_K_CLIPSORT) && dev->info.platform &&
        strstr(dev->info.platform, "Oclgrind") && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " -cl-opt-disable");
    if (cf >= 0 && n > 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " -DCLS_CF=%ldu", cf);
    if (slot > 0 && n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " -DCLS_BUILD_SLOT=%ld", slot);
}

/* The build log of `prog` for `dev` (malloc'ed, trimmed), or NULL. */
static char *log_of(const cls_dev *dev, cl_program prog)
{
    size_t n = 0;
    if (clGetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return NULL;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    if (clGetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
        free(log);
        return NULL;
    }
    log[n] = '\0';
    while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\0' || log[n - 1] == ' ')) log[--n] = '\0';
    return log;
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

static void save_binary(cl_program p, const char *dir, uint64_t key)
{
    size_t len = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || !len)
        return;
    unsigned char *bin = malloc(len);
    if (!bin) return;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS)
        cls_cache_put(dir, key, bin, len);
    free(bin);
}

/* Builds (or loads from the binary cache) copy `c` of kernel k of dtype t
 * (with -DCLS_CF=cf where cf >= 0) for dev and creates its kernel object
 * and work-group size. */
static cls_status build(cls_context *ctx, cls_dev *dev, unsigned c, int k, cls_dtype t, long cf, cl_program *pout,
                        cl_kernel *kout, size_t *lout, cl_int *build_error)
{
    size_t len;
    const char *src = cls_program_source(&len);
    if (!src) return cls_fail(ctx, CLS_E_NOMEM, "out of memory assembling the kernel source");
    char opts[CLS_OPTIONS_LEN], label[512], name[64];
    cls_program_options_cf(dev, k, t, c, cf, opts, sizeof opts);
    snprintf(name, sizeof name, "%s_%s", cls_kernel_names[k], t == CLS_F64 ? "f64" : "f32");
    cls_dev_label(dev, label, sizeof label);

    cl_program prog = NULL;
    const char *dir = ctx->cache_dir;
    uint64_t key = 0;
    int cached = 0;
    if (dir && *dir) {
        char drv[512];
        snprintf(drv, sizeof drv, "%s|%s|%s", dev->info.platform, dev->info.version, dev->info.driver);
        key = cls_cache_key(dev->info.name, drv, src, len, opts);
        unsigned char *bin;
        size_t blen;
        if (cls_cache_get(dir, key, &bin, &blen) == 0) {
            prog = from_binary(dev, bin, blen, opts);
            cached = prog != NULL;
            free(bin);
        }
    }
    /* a miss: one builder at a time (cache.c), which may find the entry
     * another has just saved */
    int lock = !prog && dir && *dir ? cls_cache_lock(dir, key) : -1;
    if (lock >= 0) {
        unsigned char *bin;
        size_t blen;
        if (cls_cache_get(dir, key, &bin, &blen) == 0) {
            prog = from_binary(dev, bin, blen, opts);
            cached = prog != NULL;
            free(bin);
        }
    }
    if (!prog) {
        cl_int e;
        prog = clCreateProgramWithSource(dev->cl, 1, &src, &len, &e);
        if (e != CL_SUCCESS) {
            cls_cache_unlock(lock);
            return cls_fail_cl(ctx, dev, "clCreateProgramWithSource", e);
        }
        e = clBuildProgram(prog, 1, &dev->id, opts, NULL, NULL);
        if (e != CL_SUCCESS) {
            cls_cache_unlock(lock);
            *build_error = e;
            char *log = log_of(dev, prog);
            clReleaseProgram(prog);
            cls_status st = cls_fail(ctx, CLS_E_BUILD, "%s: clBuildProgram(%s): %s (%d); build log:\n%s", label,
                                     name, cls_cl_error_name(e), (int)e, log ? log : "(empty)");
            free(dev->build_log);
            dev->build_log = log;
            return st;
        }
        if (dir && *dir) save_binary(prog, dir, key);
    }
    cls_cache_unlock(lock);
    cl_int e;
    cl_kernel kern = clCreateKernel(prog, name, &e);
    if (e != CL_SUCCESS) {
        clReleaseProgram(prog);
        return cls_fail_cl(ctx, dev, "clCreateKernel", e);
    }
    size_t wg = 0, local = dev->local;
    e = clGetKernelWorkGroupInfo(kern, dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (e != CL_SUCCESS) {
        clReleaseKernel(kern);
        clReleaseProgram(prog);
        return cls_fail_cl(ctx, dev, "clGetKernelWorkGroupInfo", e);
    }
    while (wg && local > wg) local /= 2;
    *pout = prog;
    *kout = kern;
    *lout = local ? local : 1;
    if (k == CLS_K_COPY && t == CLS_F32 && cf < 0) dev->from_cache = cached;
    return CLS_OK;
}

cls_status cls_program_build(cls_context *ctx, cls_dev *dev)
{
    cl_int e = CL_SUCCESS;
    cls_status st = build(ctx, dev, 0, CLS_K_COPY, CLS_F32, -1, &dev->prog[0][CLS_K_COPY][CLS_F32],
                          &dev->k[0][CLS_K_COPY][CLS_F32], &dev->klocal[CLS_K_COPY][CLS_F32], &e);
    if (st == CLS_OK) dev->local = dev->klocal[CLS_K_COPY][CLS_F32];
    return st;
}

cls_status cls_kernel_get(cls_context *ctx, cls_dev *dev, int k, cls_dtype t, unsigned q, cl_kernel *out,
                          size_t *local, int *built)
{
    unsigned c = cls_build_copy(dev, q);
    if (built) *built = 0;
    if (t == CLS_F64 && !dev->info.fp64) {
        char label[512];
        cls_dev_label(dev, label, sizeof label);
        return cls_fail(ctx, CLS_E_UNSUPPORTED, "%s: no cl_khr_fp64 for %s_f64", label, cls_kernel_names[k]);
    }
    pthread_mutex_lock(&ctx->klock[dev->index]);
    cls_status st = CLS_OK;
    if (dev->kfail[k][t] != CL_SUCCESS) {
        char label[512];
        cls_dev_label(dev, label, sizeof label);
        st = cls_fail(ctx, CLS_E_BUILD, "%s: clBuildProgram(%s_%s): %s (%d) in an earlier call, not tried again",
                      label, cls_kernel_names[k], t == CLS_F64 ? "f64" : "f32",
                      cls_cl_error_name(dev->kfail[k][t]), (int)dev->kfail[k][t]);
    } else if (!dev->k[c][k][t]) {
        cl_int e = CL_SUCCESS;
        st = build(ctx, dev, c, k, t, -1, &dev->prog[c][k][t], &dev->k[c][k][t], &dev->klocal[k][t], &e);
        if (st == CLS_E_BUILD) dev->kfail[k][t] = e; /* memory may come back; a compiler will not */
        if (built) *built = st == CLS_OK;
    }
    if (st == CLS_OK) {
        *out = dev->k[c][k][t];
        if (local) *local = dev->klocal[k][t];
    }
    pthread_mutex_unlock(&ctx->klock[dev->index]);
    return st;
}

cls_status cls_kernel_get_cf(cls_context *ctx, cls_dev *dev, int k, cls_dtype t, unsigned q, unsigned cf,
                             cl_kernel *out, size_t *local)
{
    unsigned c = cls_build_copy(dev, q);
    if (t == CLS_F64 && !dev->info.fp64) return cls_kernel_get(ctx, dev, k, t, q, out, local, NULL);
    pthread_mutex_lock(&ctx->klock[dev->index]);
    cls_kvariant *v = NULL;
    for (unsigned i = 0; i < CLS_KVARIANTS && !v; i++) {
        cls_kvariant *w = &dev->kvar[t][i];
        if (!w->used) {
            w->used = 1;
            w->k = k;
            w->cf = cf;
        }
        if (w->k == k && w->cf == cf) v = w;
    }
    cls_status st = CLS_OK;
    /* a variant that did not build, or a table full: the kernel that reads
     * its flags at run time (the same results) */
    if (v && v->fail == CL_SUCCESS && !v->kern[c]) {
        cl_int e = CL_SUCCESS;
        st = build(ctx, dev, c, k, t, (long)cf, &v->prog[c], &v->kern[c], &v->local, &e);
        if (st == CLS_E_BUILD) v->fail = e;
    }
    int have = st == CLS_OK && v && v->kern[c];
    if (have) {
        *out = v->kern[c];
        if (local) *local = v->local;
    }
    pthread_mutex_unlock(&ctx->klock[dev->index]);
    if (st != CLS_OK && st != CLS_E_BUILD) return st;
    return have ? CLS_OK : cls_kernel_get(ctx, dev, k, t, q, out, local, NULL);
}

void cls_program_release(cls_dev *dev)
{
    for (int t = 0; t < 2; t++)
        for (unsigned i = 0; i < CLS_KVARIANTS; i++) {
            cls_kvariant *v = &dev->kvar[t][i];
            for (unsigned c = 0; c < CLS_MAX_QUEUES; c++) {
                if (v->kern[c]) clReleaseKernel(v->kern[c]);
                if (v->prog[c]) clReleaseProgram(v->prog[c]);
            }
            memset(v, 0, sizeof *v);
        }
    for (unsigned c = 0; c < CLS_MAX_QUEUES; c++)
        for (int k = 0; k < CLS_K_COUNT; k++)
            for (int t = 0; t < 2; t++) {
                if (dev->k[c][k][t]) clReleaseKernel(dev->k[c][k][t]);
                if (dev->prog[c][k][t]) clReleaseProgram(dev->prog[c][k][t]);
                dev->k[c][k][t] = NULL;
                dev->prog[c][k][t] = NULL;
            }
    free(dev->build_log);
    dev->build_log = NULL;
}

cl_int cls_copy_args(cls_dev *d, cl_mem a, cl_mem b, size_t bytes, size_t *global)
{
    cl_kernel k = d->k[0][CLS_K_COPY][CLS_F32];
    cl_ulong n = bytes / 4;
    size_t items = (size_t)((n + d->vec - 1) / d->vec);
    *global = (items + d->local - 1) / d->local * d->local;
    cl_int e = clSetKernelArg(k, 0, sizeof a, &a);
    if (e == CL_SUCCESS) e = clSetKernelArg(k, 1, sizeof b, &b);
    if (e == CL_SUCCESS) e = clSetKernelArg(k, 2, sizeof n, &n);
    return e;
}
