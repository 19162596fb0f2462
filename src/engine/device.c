/* Platforms and devices: discovery through the ICD loader, the selector, and
 * what a device is (its info and the tuning the kernels get).
 * A platform without devices is skipped (Clover always answers
 * CL_DEVICE_NOT_FOUND). No platform at all names the packages to install. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define INSTALL_HELP                                                                   \
    "Install one: on Debian/Ubuntu `apt-get install pocl-opencl-icd` for the CPU, "    \
    "`mesa-opencl-icd` (rusticl, set RUSTICL_ENABLE=llvmpipe or a GPU driver), "       \
    "`nvidia-opencl-icd` for NVIDIA GPUs, `intel-opencl-icd` for Intel GPUs; "         \
    "drivers are listed in /etc/OpenCL/vendors (or $OCL_ICD_VENDORS)."
#define NO_PLATFORM_HELP "no OpenCL platform found: the ICD loader (ocl-icd) found no driver.\n" INSTALL_HELP

/* PoCL 3.1 reports no device at all when it cannot create its kernel cache
 * folder ($POCL_CACHE_DIR, else $XDG_CACHE_HOME/pocl, else ~/.cache/pocl):
 * the usual cause when HOME is not writable (a service user, a container).
 * Writes the reason into `why` and returns 1 when that folder (or the
 * nearest existing folder above it) cannot be written. */
static int pocl_cache_unwritable(char *why, size_t len)
{
    char dir[4096];
    const char *env = getenv("POCL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    else if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/pocl", xdg);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache/pocl", home);
    else {
        snprintf(why, len, "HOME is not set");
        return 1;
    }
    char probe[4096];
    snprintf(probe, sizeof probe, "%s", dir);
    for (;;) {
        if (access(probe, F_OK) == 0) {
            if (access(probe, W_OK | X_OK) == 0) return 0;
            if (strcmp(probe, dir)) snprintf(why, len, "folder %.1500s (%.1500s cannot be written: %s)", dir, probe, strerror(errno));
            else snprintf(why, len, "folder %.1500s (it cannot be written: %s)", dir, strerror(errno));
            return 1;
        }
        char *slash = strrchr(probe, '/');
        if (!slash) return 0;
        if (slash == probe) slash[1] = '\0';
        else *slash = '\0';
    }
}

static void info_str(cl_platform_id p, cl_platform_info what, char *buf, size_t len)
{
    buf[0] = '\0';
    if (clGetPlatformInfo(p, what, len, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
    buf[len - 1] = '\0';
}

static cls_status devices_find(cls_context *ctx, cls_found **out, size_t *n);

/* One discovery at a time in a process: PoCL 3.1 initialises its devices on
 * the first query, and threads making their first contexts at once crashed
 * in clGetDeviceInfo (4 threads, PoCL the only driver: a SIGSEGV in 4 runs
 * of 6, CLS_E_NO_DEVICE in the others; tests/test_first_contexts.c).
 * Discovery is short next to building the programs. */
cls_status cls_devices_find(cls_context *ctx, cls_found **out, size_t *n)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    cls_status st = devices_find(ctx, out, n);
    pthread_mutex_unlock(&lock);
    return st;
}

static cls_status devices_find(cls_context *ctx, cls_found **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && np == 0))
        return cls_fail(ctx, CLS_E_NO_DEVICE, NO_PLATFORM_HELP);
    if (e != CL_SUCCESS) return cls_fail_cl(ctx, NULL, "clGetPlatformIDs", e);
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats) return cls_fail(ctx, CLS_E_NOMEM, "out of memory listing platforms");
    e = clGetPlatformIDs(np, plats, NULL);
    if (e != CL_SUCCESS) {
        free(plats);
        return cls_fail_cl(ctx, NULL, "clGetPlatformIDs", e);
    }
    cls_found *all = NULL;
    size_t count = 0;
    cls_status st = CLS_OK;
    int pocl = 0; /* a PoCL platform is among them */
    for (cl_uint i = 0; i < np && st == CLS_OK; i++) {
        char pname[256];
        info_str(plats[i], CL_PLATFORM_NAME, pname, sizeof pname);
        pocl |= strstr(pname, "Portable Computing Language") != NULL;
        cl_uint nd = 0;
        e = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (e == CL_DEVICE_NOT_FOUND || (e == CL_SUCCESS && nd == 0)) continue;
        if (e != CL_SUCCESS) continue; /* a broken platform must not hide the others */
        cl_device_id *ids = calloc(nd, sizeof *ids);
        cls_found *grown = realloc(all, (count + nd) * sizeof *all);
        if (!ids || !grown) {
            free(ids);
            if (grown) all = grown;
            st = cls_fail(ctx, CLS_E_NOMEM, "out of memory listing devices");
            break;
        }
        all = grown;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, nd, ids, NULL) != CL_SUCCESS) {
            free(ids);
            continue;
        }
        for (cl_uint d = 0; d < nd; d++) {
            cls_found *f = &all[count++];
            memset(f, 0, sizeof *f);
            f->platform = plats[i];
            f->id = ids[d];
            info_str(plats[i], CL_PLATFORM_NAME, f->platform_name, sizeof f->platform_name);
            info_str(plats[i], CL_PLATFORM_VENDOR, f->platform_vendor, sizeof f->platform_vendor);
            info_str(plats[i], CL_PLATFORM_VERSION, f->platform_version, sizeof f->platform_version);
            if (clGetDeviceInfo(ids[d], CL_DEVICE_NAME, sizeof f->name, f->name, NULL) != CL_SUCCESS)
                snprintf(f->name, sizeof f->name, "?");
            f->name[sizeof f->name - 1] = '\0';
            if (clGetDeviceInfo(ids[d], CL_DEVICE_TYPE, sizeof f->type, &f->type, NULL) != CL_SUCCESS)
                f->type = 0;
        }
        free(ids);
    }
    free(plats);
    if (st != CLS_OK) {
        free(all);
        return st;
    }
    if (count == 0) {
        free(all);
        char why[4200];
        if (pocl && pocl_cache_unwritable(why, sizeof why))
            return cls_fail(ctx, CLS_E_NO_DEVICE,
                            "PoCL is installed but reports no device: it cannot create its kernel cache "
                            "%s. Set POCL_CACHE_DIR to a writable folder (or HOME to a writable home).",
                            why);
        return cls_fail(ctx, CLS_E_NO_DEVICE,
                        "OpenCL platforms were found but none has a device (rusticl needs "
                        "RUSTICL_ENABLE=llvmpipe or a supported GPU; Clover has none; PoCL needs a "
                        "writable kernel cache).\n" INSTALL_HELP);
    }
    *out = all;
    *n = count;
    return CLS_OK;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0) return 0;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

/* Lists the devices that exist, one per line, into buf. */
static void list_devices(const cls_found *all, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "\n  %zu: %s (%s)", i, all[i].name, all[i].platform_name);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* ---- why a term naming a known driver matched nothing ---- */

#define SYSTEM_VENDORS "/etc/OpenCL/vendors"

/* Whether an .icd file (one library name a line) names a library whose
 * name contains `lib`. */
static int icd_file_names(const char *path, const char *lib)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[1024];
    int hit = 0;
    while (!hit && fgets(line, sizeof line, f)) hit = contains_nocase(line, lib);
    fclose(f);
    return hit;
}

/* The first .icd file of folder `dir` that names `lib`, into path; 1 when
 * there is one. */
static int icd_in_folder(const char *dir, const char *lib, char *path, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int hit = 0;
    for (struct dirent *e; !hit && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".icd")) continue;
        snprintf(path, len, "%s/%s", dir, e->d_name);
        hit = icd_file_names(path, lib);
    }
    closedir(d);
    return hit;
}

/* Whether the ICD loader (ocl-icd) loads a library whose name contains
 * `lib`: $OCL_ICD_VENDORS (a folder of .icd files, one .icd file, or a
 * library name) when set, else the system's folder. */
static int icd_in_use(const char *lib)
{
    const char *v = getenv("OCL_ICD_VENDORS");
    char path[4200];
    if (!v || !*v) return icd_in_folder(SYSTEM_VENDORS, lib, path, sizeof path);
    struct stat sb;
    if (stat(v, &sb) == 0 && S_ISDIR(sb.st_mode)) return icd_in_folder(v, lib, path, sizeof path);
    size_t n = strlen(v);
    if (n > 4 && !strcmp(v + n - 4, ".icd")) return icd_file_names(v, lib);
    return contains_nocase(v, lib);
}

/* Whether selector term `t` names `driver` ("rusticl" or a part of it of
 * four letters or more, or a longer word holding it). */
static int term_names(const char *t, const char *driver)
{
    return contains_nocase(t, driver) || (strlen(t) >= 4 && contains_nocase(driver, t));
}

/* Why term `t`, which matched no device, found none, when the reason is
 * known, and how to enable it: rusticl installed but disabled (no
 * RUSTICL_ENABLE) or left out by $OCL_ICD_VENDORS; Oclgrind installed but
 * not registered with the ICD loader. Writes "" when nothing is known. */
static void disabled_driver_hint(const char *t, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *vendors = getenv("OCL_ICD_VENDORS");
    int custom = vendors && *vendors;
    char sys[4200];
    if (term_names(t, "rusticl")) {
        const char *en = getenv("RUSTICL_ENABLE");
        int enabled = en && *en;
        if (icd_in_use("rusticl")) {
            if (!enabled)
                snprintf(buf, len, "rusticl (Mesa) is installed but offers no device until it is enabled: set "
                         "RUSTICL_ENABLE=llvmpipe (the CPU, float32 only), or the name of a GPU driver it "
                         "supports (radeonsi, iris)");
            else if (!contains_nocase(en, "llvmpipe"))
                snprintf(buf, len, "rusticl is registered but RUSTICL_ENABLE=%.256s gives it no device here; "
                         "RUSTICL_ENABLE=llvmpipe runs it on the CPU (float32 only)", en);
        } else if (custom && icd_in_folder(SYSTEM_VENDORS, "rusticl", sys, sizeof sys)) {
            snprintf(buf, len, "rusticl (Mesa) is installed (%.512s) but OCL_ICD_VENDORS=%.512s leaves it out: add "
                     "that file to the drivers OCL_ICD_VENDORS names, or unset it%s", sys, vendors,
                     enabled ? "" : "; rusticl also needs RUSTICL_ENABLE=llvmpipe (the CPU, float32 only)");
        }
    } else if (term_names(t, "oclgrind")) {
        static const char *const libs[] = {"/usr/lib/oclgrind/liboclgrind-rt-icd.so",
                                           "/usr/lib/x86_64-linux-gnu/liboclgrind-rt-icd.so",
                                           "/usr/lib/aarch64-linux-gnu/liboclgrind-rt-icd.so",
                                           "/usr/lib64/liboclgrind-rt-icd.so", "/usr/lib/liboclgrind-rt-icd.so",
                                           "/usr/local/lib/liboclgrind-rt-icd.so"};
        const char *lib = NULL;
        for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !lib; i++)
            if (access(libs[i], R_OK) == 0) lib = libs[i];
        if (lib && !icd_in_use("oclgrind"))
            snprintf(buf, len, "Oclgrind is installed (%s) but not registered as an OpenCL driver. Register it "
                     "in a folder of your own, beside the other drivers: mkdir -p ~/oclgrind-icd && cp %s/*.icd "
                     "~/oclgrind-icd/ && echo %s > ~/oclgrind-icd/oclgrind.icd, then set "
                     "OCL_ICD_VENDORS=~/oclgrind-icd%s; or, as root, echo %s > %s/oclgrind.icd",
                     lib, SYSTEM_VENDORS, lib, custom ? " (instead of the drivers it names now)" : "", lib,
                     SYSTEM_VENDORS);
    }
}

/* Trims spaces around a term in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

/* A device of that one kind. A device claiming several (Oclgrind says it
 * is a CPU, a GPU and an accelerator at once) is a simulator: `gpu` on a
 * machine with an NVIDIA card and Oclgrind installed means the card; the
 * simulator is chosen by `all`, its index or its name. */
static int of_kind(const cls_found *f, cl_device_type kind)
{
    cl_device_type kinds = f->type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR);
    return kinds == kind;
}

cls_status cls_devices_select(cls_context *ctx, const cls_found *all, size_t n,
                              const char *selector, unsigned char *chosen)
{
    memset(chosen, 0, n);
    char *copy = strdup(selector ? selector : "all");
    if (!copy) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    cls_status st = CLS_OK;
    int terms = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *t = trim(tok);
        if (!*t) continue;
        terms++;
        int hit = 0;
        for (size_t i = 0; i < n; i++) {
            const cls_found *f = &all[i];
            int m;
            if (!strcasecmp(t, "all")) m = 1;
            else if (!strcasecmp(t, "gpu")) m = of_kind(f, CL_DEVICE_TYPE_GPU);
            else if (!strcasecmp(t, "cpu")) m = of_kind(f, CL_DEVICE_TYPE_CPU);
            else if (!strcasecmp(t, "accelerator")) m = of_kind(f, CL_DEVICE_TYPE_ACCELERATOR);
            else if (all_digits(t)) m = strtoull(t, NULL, 10) == i;
            else m = contains_nocase(f->platform_name, t) || contains_nocase(f->platform_vendor, t)
                     || contains_nocase(f->platform_version, t) || contains_nocase(f->name, t);
            if (m) {
                chosen[i] = 1;
                hit = 1;
            }
        }
        if (!hit) {
            char list[4096], hint[2048];
            list_devices(all, n, list, sizeof list);
            disabled_driver_hint(t, hint, sizeof hint);
            st = cls_fail(ctx, CLS_E_NO_DEVICE,
                          "device selector \"%s\": term \"%s\" matches no device; the devices "
                          "are:%s\n(a term is all, gpu, cpu, accelerator, an index, or part of "
                          "a platform or device name)%s%s", selector, t, list, *hint ? "\n" : "", hint);
            break;
        }
    }
    if (st == CLS_OK && terms == 0) memset(chosen, 1, n);
    free(copy);
    return st;
}

/* Appends a device string to the strings block; returns its offset. */
static size_t add_str(char **block, size_t *used, const char *s)
{
    size_t n = strlen(s) + 1;
    char *b = realloc(*block, *used + n);
    if (!b) return (size_t)-1;
    memcpy(b + *used, s, n);
    *block = b;
    *used += n;
    return *used - n;
}

cls_status cls_device_describe(cls_context *ctx, cls_dev *dev, const cls_found *f, size_t global_index)
{
    char name[256], vendor[256], version[256], driver[256];
    cl_uint cu = 0, nvf = 0;
    cl_ulong gmem = 0, maxalloc = 0;
    cl_device_fp_config fp64 = 0;
    cl_bool unified = CL_FALSE;
    cl_device_id id = f->id;
    /* what messages name it by until it is described (f outlives them) */
    dev->info.index = global_index;
    dev->info.name = f->name;
    dev->info.platform = f->platform_name;
    dev->info.driver = "";
    CL_TRY(ctx, dev, clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof name, name, NULL));
    CL_TRY(ctx, dev, clGetDeviceInfo(id, CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL));
    CL_TRY(ctx, dev, clGetDeviceInfo(id, CL_DEVICE_VERSION, sizeof version, version, NULL));
    CL_TRY(ctx, dev, clGetDeviceInfo(id, CL_DRIVER_VERSION, sizeof driver, driver, NULL));
    CL_TRY(ctx, dev, clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL));
    if (clGetDeviceInfo(id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof nvf, &nvf, NULL) != CL_SUCCESS) nvf = 0;
    CL_TRY(ctx, dev, clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gmem, &gmem, NULL));
    CL_TRY(ctx, dev, clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxalloc, &maxalloc, NULL));
    if (clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) != CL_SUCCESS) fp64 = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) != CL_SUCCESS)
        unified = CL_FALSE;
    cl_ulong cache = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL) != CL_SUCCESS) cache = 0;
    dev->cache_bytes = (size_t)cache;
    name[sizeof name - 1] = vendor[sizeof vendor - 1] = '\0';
    version[sizeof version - 1] = driver[sizeof driver - 1] = '\0';

    size_t used = 0, o[6];
    char *block = NULL;
    const char *strs[6] = {name, vendor, f->platform_name, f->platform_vendor, version, driver};
    for (int i = 0; i < 6; i++) {
        o[i] = add_str(&block, &used, strs[i]);
        if (o[i] == (size_t)-1) {
            free(block);
            return cls_fail(ctx, CLS_E_NOMEM, "out of memory describing a device");
        }
    }
    dev->strings = block;
    cls_device_info *in = &dev->info;
    in->index = global_index;
    in->name = block + o[0];
    in->vendor = block + o[1];
    in->platform = block + o[2];
    in->platform_vendor = block + o[3];
    in->version = block + o[4];
    in->driver = block + o[5];
    in->type = ((f->type & CL_DEVICE_TYPE_CPU) ? CLS_DEVICE_CPU : 0)
               | ((f->type & CL_DEVICE_TYPE_GPU) ? CLS_DEVICE_GPU : 0)
               | ((f->type & CL_DEVICE_TYPE_ACCELERATOR) ? CLS_DEVICE_ACCELERATOR : 0);
    in->compute_units = cu;
    in->global_mem_bytes = gmem;
    in->max_alloc_bytes = maxalloc;
    in->fp64 = fp64 != 0;
    in->host_unified = unified == CL_TRUE;
    dev->platform = f->platform;
    dev->id = id;
    dev->zero_copy = in->host_unified && !(ctx->flags & CLS_FORCE_STAGING);
    in->staging = !dev->zero_copy;

    /* A CPU walks contiguous row segments of explicit vectors fastest: a
     * work-item owns 24 vectors of 8 columns (PoCL's implicit vectoriser does
     * far worse on strided columns; docs/PERFORMANCE.md, "Column kernels
     * on CPU devices"). A GPU wants one column per work-item so
     * that neighbours read neighbouring addresses. PoCL compiles with clang
     * for the host CPU, so its kernels may prefetch and stream stores past
     * the cache. llvmpipe (rusticl) silently stops loops after ~65535
     * iterations (PITFALLS.md): the launches there bound rows x vectors. */
    int cpu_like = (in->type & CLS_DEVICE_CPU) && !(in->type & CLS_DEVICE_GPU);
    int pocl = strstr(f->platform_name, "Portable Computing Language") != NULL;
    dev->vec = cpu_like ? 8 : 1;
    dev->kv = cpu_like ? 24 : 1;
    dev->local = cpu_like ? 4 : 128;
    dev->nt = pocl && cpu_like;
    /* the short-column kernels (clip.cl, quantile.cl's qsort) hold a column
     * per vector lane: a work-item takes 8 columns of doubles (a row of
     * them one 64-byte line, which clip.cl streams past the cache) where
     * the CPU's vectors hold at least 8 floats (AVX2: two registers a row;
     * docs/PERFORMANCE.md, "Short columns in vector lanes"), else 4 */
    dev->xw64 = cpu_like && nvf >= 8 ? 8 : 4;
    /* PoCL's CPU drivers run kernels on a CL_MEM_USE_HOST_PTR buffer's own
     * host memory, whatever its alignment (the tests write unaligned views
     * in place). Other CPU runtimes may shadow memory that is not aligned
     * to their liking (Intel's does) and copy it back only at a map: they
     * keep mapping outputs and uploading params. */
    dev->in_place = pocl && cpu_like;
    dev->loop_limit = strstr(f->platform_name, "rusticl") ? 16384 : 0;
    const cls_tuning *t = &ctx->tune; /* tests' and experiments' shapes (testing.h) */
    unsigned v = t->vec;
    if (v == 1 || v == 2 || v == 4 || v == 8 || v == 16) dev->vec = v;
    if (t->kv >= 1 && t->kv <= 64) dev->kv = t->kv;
    if (t->local > 0) dev->local = t->local;
    if (t->lanes == 4 || t->lanes == 8) dev->xw64 = t->lanes;
    return CLS_OK;
}

size_t cls_device_count(const cls_context *ctx)
{
    return (ctx && ctx->usable) ? ctx->ndevs : 0;
}

cls_status cls_device_get(const cls_context *ctx, size_t i, cls_device_info *out)
{
    if (!ctx || !out || !ctx->usable || i >= ctx->ndevs) return CLS_E_ARG;
    *out = ctx->devs[i].info;
    return CLS_OK;
}
