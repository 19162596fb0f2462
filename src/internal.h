/* What the files of src/ share. Nothing here is public: the tool and the
 * tests that include it link the static library. */
#ifndef CLS_INTERNAL_H
#define CLS_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "clscale.h"
#include "scalers/scaler.h"
#include "testing.h"
#include "util/fail.h"

#define CLS_MAX_QUEUES 8
#define CLS_DEFAULT_QUEUES 3
#define CLS_ERR_LEN 8192
#define CLS_REPORT_MSG 1024   /* a device's failure message in the report */

/* ---- error.c: statuses, OpenCL error names, the context's message ---- */

const char *cls_cl_error_name(cl_int e);
struct cls_dev;
/* cls_fail(), cls_fail_thread(): util/fail.h */
/* "device 1 (pthread-..., PoCL 3.1): clEnqueueNDRangeKernel: CL_OUT_OF_RESOURCES" */
cls_status cls_fail_cl(cls_context *ctx, const struct cls_dev *dev, const char *call, cl_int e);
/* The status an OpenCL error code stands for (CL_OUT_OF_*: CLS_E_NOMEM, ...). */
cls_status cls_status_of_cl(cl_int e);
/* Formats "device N (name, platform)" into buf. */
void cls_dev_label(const struct cls_dev *dev, char *buf, size_t len);

/* Run `call` (a cl_int expression); on failure return its status from the
 * enclosing function, with the message naming `dev` and the call. */
#define CL_TRY(ctx, dev, call)                                                \
    do {                                                                      \
        cl_int e_ = (call);                                                   \
        if (e_ != CL_SUCCESS) return cls_fail_cl((ctx), (dev), #call, e_);    \
    } while (0)

/* ---- atomic_file.c ---- */

/* Writes the parts to `path` through a synced temporary file renamed into
 * place (nothing half-written is ever visible); a symlink is written through
 * to its file, a character device or FIFO straight into (io/out_target.h);
 * returns 0 or an errno (EISDIR for a folder, ENOTSUP for a socket). */
int cls_write_atomic(const char *path, const void *const *parts, const size_t *lens, size_t nparts);

/* ---- util/clock.c ---- */

/* Monotonic seconds: every timing of the library. */
double cls_now(void);

/* ---- hash.c ---- */

uint32_t cls_crc32(uint32_t crc, const void *data, size_t len);
uint64_t cls_fnv1a64(uint64_t h, const void *data, size_t len);
#define CLS_FNV_SEED 0xcbf29ce484222325ull

/* ---- program.c: kernels built per device ---- */

enum cls_kernel_id {
    CLS_K_FIT_APPLY_MM,   /* fused: min/max stats, then scale (min-max, decimal) */
    CLS_K_FIT_APPLY_MV,   /* fused: min/max/mean/m2 stats, then scale (z-score) */
    CLS_K_STATS_MM,       /* partial stats of row chunks */
    CLS_K_STATS_MV,
    CLS_K_STATS_REDUCE,   /* merge the chunks of a slice, optionally make params */
    CLS_K_APPLY,          /* elementwise: scale by params, then discount */
    CLS_K_DISCOUNT,       /* discount alone, a contiguous run of a long row per work-item */
    CLS_K_COPY,           /* bandwidth probe and self-test */
    CLS_K_QSELECT_SMALL,  /* order statistics of short columns by counting (quantile.cl) */
    CLS_K_QHIST,          /* one radix pass's digit histograms (quantile.cl) */
    CLS_K_QHIST_REDUCE,   /* sums the chunks' histograms */
    CLS_K_CLEAN_MOMENTS,  /* count, mean, m2, min, max of the values a filter keeps (clean.cl) */
    CLS_K_CLEAN_APPLY,    /* impute, clip, scale: the cleaning pass (clean.cl) */
    CLS_K_QSORT32,        /* order statistics of columns of <= 32 rows by a sorting network on lanes of 4
                           * or 8 columns (quantile.cl) */
    CLS_K_QSORT64,        /* the same, <= 64 rows */
    CLS_K_OUTLIERS,       /* per column: values with |x - mean| > k * std (describe.cl) */
    CLS_K_ROW_HASH,       /* a hash of each row's block of columns (describe.cl) */
    CLS_K_CLIP32,         /* k-sigma clipping of columns of <= 32 rows in private memory (clip.cl) */
    CLS_K_CLIP64,         /* the same, <= 64 rows */
    CLS_K_CLIP32L,        /* the same for GPUs: a column per work-item, in local memory (clip_local.cl) */
    CLS_K_CLIP64L,
    CLS_K_QSORT32G,       /* CLS_K_QSORT32 for GPUs: a column per work-item (quantile.cl) */
    CLS_K_QSORT64G,
    CLS_K_QSORT128,       /* CLS_K_QSORT32's lanes for <= 128 rows (GPUs: CLS_K_QSELECT_SMALL) */
    CLS_K_QSORTG,         /* order statistics of longer columns, each sorted once in scratch (sort.cl) */
    CLS_K_CLIPSORT,       /* k-sigma clipping of longer columns, each sorted once in scratch (clip_sort.cl) */
    CLS_K_WSORT,          /* the same scratch windows sorted by every work-item at once: GPUs (sort.cl) */
    CLS_K_MOVAVG,         /* moving-average trend along the rows (lightcurve.cl) */
    CLS_K_SAVGOL,         /* Savitzky-Golay trend along the rows (lightcurve.cl) */
    CLS_K_BIN_SMOOTH,     /* smoothing by bins of rows (lightcurve.cl) */
    CLS_K_BIN_REDUCE,     /* one row per bin of rows (lightcurve.cl) */
    CLS_K_SAVGOL3,        /* CLS_K_SAVGOL for polyorder 2, its loops unrolled */
    CLS_K_SAVGOL3V,       /* CLS_K_SAVGOL3 for CPUs: LC_LANES columns per work-item in vector lanes */
    /* the first six again, built with -DCLS_IMPUTE=1 (a fill;
     * clean/impute_fused.c), then with -DCLS_IMPUTE=2 (a fill and a
     * sentinel: a compare per value that the first set saves), each in the
     * same order */
    CLS_K_FIT_APPLY_MM_IMP,
    CLS_K_FIT_APPLY_MV_IMP,
    CLS_K_STATS_MM_IMP,
    CLS_K_STATS_MV_IMP,
    CLS_K_STATS_REDUCE_IMP,
    CLS_K_APPLY_IMP,
    CLS_K_FIT_APPLY_MM_IMPS,
    CLS_K_FIT_APPLY_MV_IMPS,
    CLS_K_STATS_MM_IMPS,
    CLS_K_STATS_MV_IMPS,
    CLS_K_STATS_REDUCE_IMPS,
    CLS_K_APPLY_IMPS,
    CLS_K_COUNT
};
extern const char *const cls_kernel_names[CLS_K_COUNT];
/* The kernel whose source an id builds, and its -DCLS_IMPUTE (0, 1, 2). */
#define CLS_K_IMP_OFFSET (CLS_K_FIT_APPLY_MM_IMP - CLS_K_FIT_APPLY_MM)
#define CLS_K_IMPS_OFFSET (CLS_K_FIT_APPLY_MM_IMPS - CLS_K_FIT_APPLY_MM)
#define cls_kernel_imputes(k) \
    ((k) >= CLS_K_FIT_APPLY_MM_IMPS ? 2 : (k) >= CLS_K_FIT_APPLY_MM_IMP ? 1 : 0)
#define cls_kernel_base(k) \
    ((k) - (cls_kernel_imputes(k) == 2 ? CLS_K_IMPS_OFFSET : cls_kernel_imputes(k) ? CLS_K_IMP_OFFSET : 0))

/* Kernel argument flags (cl/common.cl mirrors them). */
#define CLS_KF_PARAMS   1u  /* apply the scaler's params */
#define CLS_KF_FACTORS  2u  /* multiply by the discount factors */
#define CLS_KF_CLIP     4u  /* clamp the scaled value into [lo, hi] */
#define CLS_KF_WRITE_PARAMS 8u  /* reduce: also write the params */
#define CLS_KF_NT       16u  /* non-temporal stores for large outputs */

/* Scaler codes passed to kernels: the table's (src/scalers/table.c,
 * cls_scaler_kernel_code), defined in every build by their names. */

/* Filters of the counting kernels (cl/common.cl mirrors them). */
#define CLS_QF_SENTINEL 1u
#define CLS_QF_ABSDEV   2u
#define CLS_QF_BOUNDS   4u

/* Builds what a context needs of `dev` (from the cache when possible): the
 * float32 copy kernel, which also proves that the device compiles. On
 * failure the device's build log is in dev->build_log. */
cls_status cls_program_build(cls_context *ctx, struct cls_dev *dev);
/* Kernel k of dtype t for dev, as queue q launches it (cls_build_copy),
 * built the first time it is asked for (on
 * the caller's thread; one lock per device), with the work-group size to
 * launch it with; *built = 1 when this call built it (`local` and `built`
 * may be NULL). A failed build is not tried again in this context:
 * CLS_E_BUILD, with the log in the message. */
cls_status cls_kernel_get(cls_context *ctx, struct cls_dev *dev, int k, cls_dtype t, unsigned q, cl_kernel *out,
                          size_t *local, int *built);
/* cls_kernel_get() of kernel k built with -DCLS_CF=cf (a kernel that
 * reads CLS_CF instead of its flags argument; clean_apply): one build per
 * combination a device meets, up to CLS_KVARIANTS, past which (or where
 * that build fails) the kernel that reads its flags at run time. */
cls_status cls_kernel_get_cf(cls_context *ctx, struct cls_dev *dev, int k, cls_dtype t, unsigned q, unsigned cf,
                             cl_kernel *out, size_t *local);
void cls_program_release(struct cls_dev *dev);
/* The full OpenCL C source and the build options of one kernel's program. */
const char *cls_program_source(size_t *len);
#define CLS_OPTIONS_LEN 640 /* room for cls_program_options() */
void cls_program_options(const struct cls_dev *dev, int kernel, cls_dtype t, unsigned copy, char *buf, size_t len);
/* The same with -DCLS_CF=cf where cf >= 0 (cls_kernel_get_cf). */
void cls_program_options_cf(const struct cls_dev *dev, int kernel, cls_dtype t, unsigned copy, long cf, char *buf,
                            size_t len);

/* ---- cache.c: program binaries on disk ---- */

/* Key of an entry: device name, driver version, source hash and options. */
uint64_t cls_cache_key(const char *device, const char *driver, const char *source,
                       size_t source_len, const char *options);
/* Reads the binary for `key`; returns 0 and a malloc'ed buffer, or -1 when
 * absent, unreadable or corrupt (a corrupt entry is removed). */
int cls_cache_get(const char *dir, uint64_t key, unsigned char **bin, size_t *len);
/* Writes atomically (temp file + rename); returns 0, or -1 (ignored by callers:
 * a cache that cannot be written only costs time). */
int cls_cache_put(const char *dir, uint64_t key, const unsigned char *bin, size_t len);
/* Waits until no other process or thread builds `key` (a lock file beside
 * the entries, `.KEY.lock`), then holds it: a build that misses the cache
 * takes it, looks again (another may have saved the entry meanwhile), and
 * builds only if still missing. Returns a descriptor for cls_cache_unlock(),
 * or -1 when the folder cannot hold the lock (read-only: build without). */
int cls_cache_lock(const char *dir, uint64_t key);
void cls_cache_unlock(int fd);
/* The default cache folder into buf ("" when no home is known). */
void cls_cache_default_dir(char *buf, size_t len);

/* ---- device.c ---- */

/* Per-queue buffers of a device, kept across calls and grown on demand
 * (stage.c). Capacities in bytes. */
typedef struct cls_slot {
    cl_mem  data;                 /* a staged slice on the device */
    size_t  data_cap;
    cl_mem  pinned;               /* pinned host memory, mapped at `host` */
    void   *host;
    size_t  host_cap;
    cl_mem  st_part, cn_part;     /* partial statistics of row chunks */
    size_t  part_cap;             /* entries */
    cl_mem  st_out, cn_out;       /* statistics of the slice */
    void   *st_host, *cn_host;    /* their host copies */
    size_t  out_cap;              /* entries */
    cl_mem  prm;                  /* params */
    void   *prm_host;             /* their host copy, or prm mapped (prm_mapped) */
    int     prm_mapped;           /* written in place: no upload (cls_dev.mapped_params) */
    size_t  prm_cap;              /* entries */
    cl_mem  fwin;                 /* a factor window */
    size_t  fwin_cap;
} cls_slot;

/* A kernel built with its flags fixed at build time (-DCLS_CF=cf): the
 * branches and parameter loads a combination does not need leave the
 * compiled code (program.c, cls_kernel_get_cf). */
#define CLS_KVARIANTS 16
typedef struct cls_kvariant {
    int        used, k;
    unsigned   cf;
    cl_program prog[CLS_MAX_QUEUES];
    cl_kernel  kern[CLS_MAX_QUEUES];
    size_t     local;
    cl_int     fail; /* clBuildProgram's error: not tried again */
} cls_kvariant;

typedef struct cls_dev {
    size_t          index;      /* among the selected devices */
    cls_device_info info;       /* its strings point into `strings` */
    char           *strings;
    cl_platform_id  platform;
    cl_device_id    id;
    cl_context      cl;         /* shared by the selected devices of one platform */
    cl_command_queue q[CLS_MAX_QUEUES];
    unsigned        nq;
    /* [copy][kernel][dtype], NULL until built (program.c); one copy, or one
     * per queue where the driver needs it (build_slot.c: per_queue) */
    cl_program      prog[CLS_MAX_QUEUES][CLS_K_COUNT][2];
    cl_kernel       k[CLS_MAX_QUEUES][CLS_K_COUNT][2];
    size_t          klocal[CLS_K_COUNT][2]; /* work-group size of each kernel */
    cl_int          kfail[CLS_K_COUNT][2];  /* clBuildProgram's error: failed, not tried again */
    cls_kvariant    kvar[2][CLS_KVARIANTS];  /* [dtype]: built with fixed flags, first come */
    char           *build_log;  /* of the last build that failed */
    int             alive;      /* built and usable */
    int             from_cache; /* the copy kernel's program came from the binary cache */
    unsigned        vec;        /* vector width of the kernels */
    unsigned        kv;         /* vectors per work-item at most (a column block) */
    unsigned        xw64;       /* lanes of doubles in cl/lanes.cl's kernels: 4, or 8 where the
                                   native vectors hold 16 floats (AVX-512); floats twice */
    int             nt;         /* compiler takes non-temporal stores and prefetches */
    unsigned        loop_limit; /* iterations per work-item the driver runs (0: any) */
    size_t          local;      /* work-group size wanted (kernels may need less: klocal) */
    int             profiling;  /* queues were created with profiling */
    int             zero_copy;  /* host-unified and not forced to stage */
    int             in_place;   /* a CL_MEM_USE_HOST_PTR buffer is its host memory, always
                                   (PoCL's CPU drivers; device.c) */
    int             mapped_params; /* in_place, and a mapped CL_MEM_ALLOC_HOST_PTR buffer is what
                                      its kernels read (checked with zero copy, stage.c) */
    double          rate[2];    /* measured end-to-end bytes/s, 0: unknown; [1] when it stages
                                   pageable caller memory (its host threads copy every byte),
                                   [0] otherwise: a GPU's two differ 2-6x (H200: seed-b 16 GB/s
                                   pageable, 37 pinned), and one figure for both had it judged
                                   from its pinned calls in pageable ones */
    double          prior;      /* cls_device_prior(), 0: not taken or unknown */
    double          probe_cost; /* seconds the last prior took, 0: none taken */
    double          since_probe; /* seconds of phases since, while unmeasured */
    double          probe_backoff; /* the interval's factor, doubling per probe */
    int             zc_checked; /* zero copy was verified (or refuted) */
    cls_slot        slot[CLS_MAX_QUEUES];
    cl_mem          pass_pinned; /* the counting passes' staging (passes.c): pinned host memory, */
    void           *pass_host;   /* mapped at pass_host, two halves of pass_cap / 2 bytes */
    size_t          pass_cap;
    size_t          cache_bytes; /* CL_DEVICE_GLOBAL_MEM_CACHE_SIZE */
    int             build_slot; /* build_slot.c: held slot (> 0 changes the options), -1 none */
    cl_event        resident_busy; /* the last command of a resident call that returned before it
                                      completed (resident.c): a later call waits for it, since
                                      it may still read the queue's slot buffers */
    int             per_queue;  /* build_slot.c: each queue launches programs of its own */
    char           *drop_why;   /* context.c: why creation drops it (malloc'ed), NULL: kept */
    cls_status      drop_st;
} cls_dev;

/* One entry of the ICD's device list (selection and error messages). */
typedef struct cls_found {
    cl_platform_id platform;
    cl_device_id   id;
    char platform_name[256], platform_vendor[256], platform_version[256];
    char name[256];
    cl_device_type type;
} cls_found;

/* Lists every device of every platform (platforms without devices skipped).
 * Returns CLS_OK with a malloc'ed array, CLS_E_NO_DEVICE with a message
 * naming the packages to install, or another status. */
cls_status cls_devices_find(cls_context *ctx, cls_found **out, size_t *n);

/* ---- build_slot.c: PoCL's CPU devices never run one program's kernel twice at once ---- */

/* Gives `dev` (described) the smallest build slot no other live device of
 * its kind holds, when its driver needs one; else sets build_slot to -1.
 * Sets per_queue where the driver runs the commands of several queues at
 * once (PoCL 4 and later). */
cls_status cls_build_slot_take(cls_context *ctx, cls_dev *dev);

/* The program copy that queue `q` of `dev` launches (0 unless per_queue). */
unsigned cls_build_copy(const cls_dev *dev, unsigned q);
void cls_build_slot_give(cls_dev *dev);

/* Applies a selector; `chosen[i]` = 1 for devices taken. */
cls_status cls_devices_select(cls_context *ctx, const cls_found *all, size_t n,
                              const char *selector, unsigned char *chosen);
/* Fills dev->info and tuning from the device's properties. */
cls_status cls_device_describe(cls_context *ctx, cls_dev *dev, const cls_found *f, size_t global_index);

/* ---- foreign.c: a context on the caller's cl_context ---- */

/* Describes the devices of cfg->cl_context (those cfg->cl_devices names),
 * retains the context and the caller's queues (cfg->cl_queues) or creates
 * queues; fills ctx->devs, ctx->cls. CLS_E_ARG when the objects do not fit
 * together. What it retained is released by cls_context_destroy. */
cls_status cls_foreign_adopt(cls_context *ctx, const cls_config *cfg);

/* ---- context.c ---- */

struct cls_job;
struct cls_pool;

/* team.c: per kind of call, recent throughputs with every device and with
 * each device that may run alone, alone */
#define CLS_TEAM_KINDS 16
#define CLS_TEAM_KEEP 4
#define CLS_TEAM_DEVS 8 /* devices of a context that can run a call alone (the first 8) */
typedef struct cls_team {
    uint64_t key;                 /* the kind of call, 0: unused */
    uint64_t used;                /* cls_context.team_clock at its last call */
    int      lead;                /* the device that moved the most in the last team call kept, -1 */
    double   lead_share;          /* its share of that call's bytes */
    double   share[CLS_TEAM_DEVS]; /* every device's share of that call's bytes */
    double   solo[CLS_TEAM_DEVS][CLS_TEAM_KEEP]; /* bytes/s of recent calls on a device alone */
    double   team[CLS_TEAM_KEEP];  /* and with every device */
    unsigned nsolo[CLS_TEAM_DEVS], nteam; /* calls kept so far (ring position) */
    unsigned since;               /* calls the winning way since another was tried */
    unsigned interval;            /* calls between tries of the losing ways */
    unsigned next_try;            /* turns among the losing ways */
} cls_team;

struct cls_context {
    cls_config      cfg;         /* strings below are owned copies */
    char           *selector;
    char           *cache_dir;
    char           *force_staging; /* tune.force_staging's copy, or NULL */
    unsigned        flags;
    cls_tuning      tune;        /* tests' and experiments' switches (testing.h) */
    int             clip_local;  /* tests only (test_clip_fast.c): 1 the one-pass clipping runs
                                    clip_local.cl's kernel on every device (Oclgrind's too),
                                    -1 clip.cl's; 0 by device type (clip_fast.c) */
    int             count_regime; /* tests only (set directly): every group takes the counting
                                     passes (quantiles/regime.c), to compare the regimes */
    int             sort_parallel; /* tests only (set directly): 1 the sort regime's windows
                                      sorted by cl/sort.cl's wsort on every device, -1 on none,
                                      0 as regime.c decides */
    cls_team        team[CLS_TEAM_KINDS];
    uint64_t        team_clock;
    cls_dev        *devs;
    size_t          ndevs;
    cls_dropped_device *drops;   /* selected devices creation dropped */
    size_t          ndrops;
    pthread_mutex_t *klock;      /* per device: its kernels' lazy builds */
    cl_context     *cls;         /* one per platform in use */
    size_t          ncls;
    char            err[CLS_ERR_LEN];
    pthread_mutex_t err_lock;    /* workers may fail at once */
    int             usable;      /* creation succeeded */
    struct cls_pool *pool;       /* host copy threads */
    struct cls_hostmem *hostmem; /* cls_host_alloc list */
    double          host_copy_bw; /* host memory traffic (read + written bytes/s) that the copy
                                     threads have shown staging slices, 0: not seen (run.c) */
    /* last call's report */
    cls_device_report *rep_devs;
    char           *rep_msgs;    /* rep_devs[i].failed, CLS_REPORT_MSG each */
    cls_event      *events;
    size_t          nevents, cap_events;
    cls_report      report;
};

/* The message the calling thread's last cls_fail() set, "" if none: what one of several threads failing at once
 * failed with. */
const char *cls_thread_error(void);
/* Appends a note to the context's message without changing a status. */
void cls_note(cls_context *ctx, const char *fmt, ...) CLS_PRINTF(2, 3);


/* ---- hostmem.c: cls_host_alloc ---- */

typedef struct cls_hostmem {
    void              *ptr;
    size_t             bytes;
    cl_mem             buf;     /* NULL: plain page-aligned memory */
    cl_command_queue   q;       /* the queue that mapped it */
    cl_context         cl;
    struct cls_hostmem *next;
} cls_hostmem;

void cls_hostmem_release_all(cls_context *ctx);
/* 1 when [p, p + len) lies in pinned memory of OpenCL context `cl`. */
int cls_hostmem_pinned(const cls_context *ctx, const void *p, size_t len, cl_context cl);

/* ---- stats.c: the statistics object ---- */

struct cls_stats {
    cls_stats_info    info;
    cls_column_stats *col;     /* info.groups * info.cols, entry [group * cols + column] */
    size_t            col_bytes; /* col's allocation (cls_table_alloc), for cls_table_free */
};

/* A statistics object with every column empty (count 0, missing 0, every
 * moment NaN); NULL when out of memory or the shape overflows. */
cls_stats *cls_stats_new(const cls_stats_info *info);
/* The same with the columns left undefined: for a caller that writes every
 * one (the engine's FIT slices; 71 MB for seed-A per matrix). */
cls_stats *cls_stats_alloc(const cls_stats_info *info);
/* The empty column (count 0, missing 0, all values NaN). */
cls_column_stats cls_column_empty(void);
/* Chan's parallel merge of `from` into `into`: counts and missing add,
 * min/max/absmax combine, mean/m2 combine when `moments` (else stay NaN).
 * Merging with an empty column is exact. */
void cls_column_merge(cls_column_stats *into, const cls_column_stats *from, int moments);

/* ---- pipeline.c ---- */

/* cls_host_fit_transform() without its cleaning stage: clean/clean.c cleans
 * first, then calls this on the cleaned data. */
cls_status cls_fit_transform_plain(cls_context *ctx, const cls_pipeline *p, const cls_array *in, cls_array *out,
                                   cls_stats **fitted);

#endif /* CLS_INTERNAL_H */
