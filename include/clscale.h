/*
 * clscale: feature scaling and discounting of large float arrays on every
 * OpenCL device of a machine at once.
 *
 * Five calls do the work:
 *
 *   cls_context_create()  finds the OpenCL devices the selector names,
 *                         builds the kernels for them and keeps them ready;
 *   cls_fit_transform()   runs a pipeline (cls_pipeline: cleaning, a scaler,
 *                         a discount, their scope, a hook for several
 *                         processes) over a cls_array, which says where the
 *                         data lives: host memory, a cl_mem buffer, a file,
 *                         a .npy path; every selected device pulls slices
 *                         from a shared cursor (cls_fit() and
 *                         cls_transform() split it in two);
 *   cls_quantiles()       exact quantiles (cls_medians(), cls_describe());
 *   cls_last_error()      why a call failed: the one error channel;
 *   cls_context_destroy() releases it all.
 *
 * Around them: cls_stats holds what a fit learned, per statistics group
 * and column; it merges (streaming, MPI), saves and loads. cls_last_report()
 * says which device did what and how long it took; with CLS_PROFILE, every
 * upload, kernel and download is timed and can be written as a Chrome
 * trace or an SVG timeline.
 *
 * Every function returns a cls_status (or a value that cannot fail). On
 * failure, cls_last_error(ctx) holds a message that names the device and the
 * OpenCL call. The library never prints, never aborts and never leaves the
 * caller's output half-written on bad input.
 *
 * Threads: a context may be used by one thread at a time; use one context per
 * thread for parallel callers. Internally a call runs one worker thread per
 * device plus a pool of host copy threads. Functions without a context
 * (cls_version, cls_status_str, the cls_stats_* functions on distinct
 * objects) may be called from any thread.
 *
 * Ownership: what a function creates (a context, statistics, host memory) the
 * caller destroys with the matching function (cls_context_destroy,
 * cls_stats_destroy, cls_host_free). Pointers the library returns into its
 * own objects (device strings, reports, error messages) stay valid until the
 * object is destroyed or, for reports and messages, until the next call on
 * the same context. Arrays passed in are only read, except `out`; the library
 * keeps no pointer to them after a call returns.
 *
 * Build against it with pkg-config (`pkg-config --cflags --libs clscale`) or,
 * from a meson project, `dependency('clscale')`.
 */
#ifndef CLSCALE_H
#define CLSCALE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OpenCL's handle types, declared as <CL/cl.h> declares them (cl_context is
 * struct _cl_context *), so that this header needs no OpenCL headers. */
struct _cl_context;
struct _cl_device_id;
struct _cl_command_queue;
struct _cl_mem;
struct _cl_event;

/* Symbols the shared library exports. */
#if defined(CLS_BUILD) && defined(__GNUC__)
#define CLS_API __attribute__((visibility("default")))
#else
#define CLS_API
#endif

#define CLS_VERSION_MAJOR 0
#define CLS_VERSION_MINOR 1
#define CLS_VERSION_PATCH 0
#define CLS_VERSION_STRING "0.1.0"
#define CLS_VERSION_NUMBER (CLS_VERSION_MAJOR * 10000 + CLS_VERSION_MINOR * 100 + CLS_VERSION_PATCH)

/* cls_version() : the version of the linked library, "MAJOR.MINOR.PATCH", a
 * static string, to compare with CLS_VERSION_STRING, the version of the
 * header a program was compiled with. Callable at any time from any thread. */
CLS_API const char *cls_version(void);

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum cls_status {
    CLS_OK = 0,
    CLS_E_ARG,          /* an argument is invalid (NULL, zero or overflowing shape, ...) */
    CLS_E_NOMEM,        /* host or device memory ran out */
    CLS_E_NO_DEVICE,    /* no OpenCL platform, or the selector matched nothing */
    CLS_E_UNSUPPORTED,  /* no selected device can do it (float64 without cl_khr_fp64) */
    CLS_E_BUILD,        /* the kernels failed to build on every device */
    CLS_E_DEVICE,       /* an OpenCL call failed on every device able to run it */
    CLS_E_IO,           /* a file could not be read or written */
    CLS_E_FORMAT        /* a file is not in the expected format */
} cls_status;

/* cls_status_str() : "CLS_E_NO_DEVICE: no OpenCL device matched", a static
 * string; never NULL, also for values outside the enum. */
CLS_API const char *cls_status_str(cls_status s);

/* ------------------------------------------------------------------------ */
/* Context and devices                                                       */
/* ------------------------------------------------------------------------ */

typedef struct cls_context cls_context;

/* cls_config.flags */
#define CLS_PROFILE        (1u << 0) /* time every slice's commands with OpenCL events */
#define CLS_FORCE_STAGING  (1u << 1) /* use the discrete (pinned staging) path on every device
                                        (for tests and measurements) */

/* Called after each slice completes, from a library thread, never two at once.
 * `done` <= `total` are bytes of the call's work. */
typedef void (*cls_progress_fn)(void *user, uint64_t done, uint64_t total);

/* Called by the streaming calls (cls_stream_*) as each pass over the file
 * begins, before that pass's progress calls, from the thread that calls
 * progress, with cls_config.progress_user: pass `k` (from 1) of `n` passes
 * known so far (n >= k). `more` is 1 while passes whose number depends on
 * the data may still be added (the counting passes of exact quantiles,
 * clipping iterations), 0 when n is the count. The pass runs the progress
 * callback's `done` from `first` to first + `bytes` (its own bytes: read,
 * plus written when it writes). */
typedef void (*cls_pass_fn)(void *user, unsigned k, unsigned n, int more, uint64_t first, uint64_t bytes);

typedef struct cls_config {
    const char *devices;     /* selector, see below; NULL: $CLSCALE_DEVICES, else "all" */
    unsigned    queues;      /* in-order queues (slices in flight) per device; 0: default (3) */
    size_t      slice_bytes; /* target slice size; 0: automatic per device */
    const char *cache_dir;   /* kernel binary cache; NULL: $CLSCALE_CACHE_DIR, else
                                $XDG_CACHE_HOME/clscale or ~/.cache/clscale; "": none */
    unsigned    flags;       /* CLS_PROFILE, CLS_FORCE_STAGING */
    cls_progress_fn progress;      /* NULL: none */
    void           *progress_user;
    /* Caller-given OpenCL objects (see "Data already on a device" below).
     * All zero: clscale finds the devices the selector names, as above. */
    struct _cl_context             *cl_context;  /* the caller's context; NULL: none */
    struct _cl_device_id *const    *cl_devices;  /* devices of cl_context to use; NULL: all of its devices */
    size_t                          cl_ndevices; /* entries of cl_devices (0 with cl_devices NULL) */
    struct _cl_command_queue *const *cl_queues;  /* NULL, or one in-order queue per device of
                                                    cl_devices (in its order): clscale then runs
                                                    on that queue alone for that device */
    size_t      scratch_bytes; /* device scratch of exact selection and clipping (groups sorted
                                  once), shared by the devices; 0: 256 MiB. Longer groups than
                                  it holds take counting passes instead (docs/ENGINE.md). Over
                                  a streamed file it also bounds their host histograms and a
                                  most_frequent's counting tables; a budget that cannot hold
                                  one column's is CLS_E_NOMEM */
    cls_pass_fn pass;          /* NULL: none; see cls_pass_fn */
} cls_config;

/* Device selector (cls_config.devices or $CLSCALE_DEVICES): comma-separated
 * terms, each one of
 *   all | gpu | cpu | accelerator       by device type (a device claiming several
 *                                       types, a simulator, matches none of them)
 *   N                                   the global index `clscale devices` prints
 *   text                                a case-insensitive substring of the platform's
 *                                       name, vendor or version, or the device's name
 *                                       ("pocl", "nvidia", "rusticl", "oclgrind")
 * A device matched by several terms is taken once. A term that matches nothing
 * fails with CLS_E_NO_DEVICE and a message listing the devices that exist;
 * when the term names a driver that is installed but off, the message also
 * says why and how to enable it (rusticl without RUSTICL_ENABLE, or left
 * out by $OCL_ICD_VENDORS; Oclgrind not registered with the ICD loader).
 * The library prints nothing: the text is cls_last_error()'s. */

/* cls_device_info.type bits */
#define CLS_DEVICE_CPU         (1u << 0)
#define CLS_DEVICE_GPU         (1u << 1)
#define CLS_DEVICE_ACCELERATOR (1u << 2)

typedef struct cls_device_info {
    size_t      index;            /* global index, as `clscale devices` lists it */
    const char *name;             /* strings live as long as the context */
    const char *vendor;
    const char *platform;         /* platform name */
    const char *platform_vendor;
    const char *version;          /* CL_DEVICE_VERSION */
    const char *driver;           /* CL_DRIVER_VERSION */
    unsigned    type;             /* CLS_DEVICE_* bits; a simulator may set several */
    unsigned    compute_units;
    uint64_t    global_mem_bytes;
    uint64_t    max_alloc_bytes;
    int         fp64;             /* cl_khr_fp64: runs float64 work */
    int         host_unified;     /* device reads host memory in place (zero copy) */
    int         staging;          /* 1: data goes through pinned staging buffers */
} cls_device_info;

/* cls_context_create() : finds the devices `cfg` selects (cfg may be NULL for
 * defaults), creates their OpenCL contexts and queues, builds the kernels
 * (from the binary cache when it holds them) and checks once that a device
 * claiming host-unified memory really is zero copy. A device that fails at
 * any of these steps is dropped, not fatal: cls_last_report()'s `dropped` and
 * cls_last_error() say which and why (a build log included), and the
 * context runs on the others. Creation fails only when no selected device
 * remains; the message then names each device and its failure.
 * With cfg->cl_context set it creates no OpenCL context: it uses the
 * caller's, with the devices cfg->cl_devices names (all of the context's
 * when NULL; the selector and CLSCALE_DEVICES are then ignored) and, when
 * cfg->cl_queues is given, the caller's queues (in-order ones). clscale
 * retains the context and queues it keeps and releases them at
 * cls_context_destroy(); it never releases more than it retained. A device
 * not in the context, a queue of another context or device, or an
 * out-of-order queue: CLS_E_ARG with a message. The caller's devices are
 * built and checked like the others (the zero-copy check runs a 256-byte
 * kernel on the device's first queue, the caller's when given, and waits
 * for that queue with clFinish); one that fails is dropped the same way.
 * It reads CLSCALE_DEVICES and CLSCALE_CACHE_DIR (above) and never changes
 * the process's environment: PoCL's CPU workers run pinned one per core only
 * when the caller sets POCL_AFFINITY=1 before the first OpenCL call (the
 * clscale tool does; docs/DEVICES.md says when it helps).
 * @return CLS_OK, or CLS_E_NO_DEVICE, CLS_E_BUILD, CLS_E_NOMEM, CLS_E_DEVICE,
 *         CLS_E_ARG. In both cases *out is set to a context (destroy it);
 *         after a failure it only answers cls_last_error(). *out is NULL only
 *         when even that could not be allocated. */
CLS_API cls_status cls_context_create(const cls_config *cfg, cls_context **out);

/* cls_context_destroy() : releases everything the context created (OpenCL
 * objects, threads, memory from cls_host_alloc not yet freed); NULL is a
 * no-op. No call on `ctx` may be running. */
CLS_API void cls_context_destroy(cls_context *ctx);

/* cls_last_error() : the one error channel. With a context: why the last
 * call on `ctx` failed, or notes it left (a device dropped at creation).
 * With NULL: why the last call without a context (cls_stats_save(),
 * cls_stats_load(), cls_stats_create(), a cls_context_create() that could
 * not allocate a context) failed in this thread. "" when there is nothing
 * to say; never NULL. */
CLS_API const char *cls_last_error(const cls_context *ctx);

/* cls_set_error() : for layers built on this API (clscale_mpi.h, a binding)
 * that fail in steps of their own: records `message` (copied; NULL or ""
 * clears) as why the last call on `ctx` failed, so that cls_last_error(ctx)
 * returns it; with ctx NULL, this thread's message, cls_last_error(NULL).
 * @return s, so that a layer returns cls_set_error(ctx, s, why).
 * Threads: as the context's calls; with NULL, any thread. */
CLS_API cls_status cls_set_error(cls_context *ctx, cls_status s, const char *message);

/* cls_device_count() : the number of selected devices (0 for a failed context
 * or NULL). */
CLS_API size_t cls_device_count(const cls_context *ctx);

/* cls_device_get() : describes selected device `i` (0 <= i < count). The
 * strings in *out belong to the context and live as long as it does.
 * @return CLS_OK, or CLS_E_ARG (NULL, i out of range). */
CLS_API cls_status cls_device_get(const cls_context *ctx, size_t i, cls_device_info *out);

/* A device the selector chose but context creation dropped; the context's
 * report (cls_last_report()) lists them. */
typedef struct cls_dropped_device {
    size_t      index;            /* global index, as `clscale devices` lists it */
    const char *name;             /* strings live as long as the context */
    const char *platform;
    const char *why;              /* the failure: "device 1 (...): clCreateCommandQueue:
                                     CL_OUT_OF_RESOURCES (-5)", or the build's error */
    cls_status  status;           /* the failure as a status */
} cls_dropped_device;


/* ------------------------------------------------------------------------ */
/* Arrays and pipelines                                                      */
/* ------------------------------------------------------------------------ */

typedef enum cls_dtype { CLS_F32, CLS_F64 } cls_dtype;

/* Where an array lives. Every call takes its data as a cls_array: host
 * memory (the default, zero), a cl_mem buffer on the caller's context, an
 * array at an offset of an open file, or a .npy file by its path. */
typedef enum cls_where {
    CLS_IN_HOST,   /* `data` */
    CLS_IN_BUFFER, /* `mem` at `offset` bytes, on the device sync->device ("Data already on a device") */
    CLS_IN_FILE,   /* the file open on `fd`, from `offset` bytes; `path` names it in messages ("Streaming") */
    CLS_IN_NPY     /* the .npy file at `path`; an input's dtype and shape come from its header */
} cls_where;

/* How a call on buffers fits into the caller's own OpenCL work. */
typedef struct cls_sync {
    struct _cl_event *const *wait;   /* the call's first command waits for these (may be NULL) */
    unsigned          nwait;
    struct _cl_event **done;         /* NULL: the call returns when its work has completed;
                                        else *done receives an event (release it with
                                        clReleaseEvent) that completes when the output is
                                        written, and the call may return before that */
    size_t            device;        /* the device that runs it, among the context's (0: the first) */
} cls_sync;

/* cls_stream_opts.flags */
#define CLS_STREAM_KEEP_CACHE (1u << 0) /* never drop pages from the page cache */
#define CLS_STREAM_DROP_CACHE (1u << 1) /* always drop them (default: for files larger
                                           than 1/8 of physical memory) */

/* How files stream ("Streaming"); NULL or zeros give the defaults, which
 * measured best here. */
typedef struct cls_stream_opts {
    size_t   buffer_bytes;  /* bytes per buffer; 0: $CLSCALE_STREAM_BUFFER (bytes, or with
                               a k or M suffix; 4096 at least) or 64 MiB (raised to one
                               row when a row is larger) */
    unsigned buffers;       /* buffers in the pool; 0: 4 (at least 2) */
    unsigned io_threads;    /* I/O requests in flight; 0: 4 */
    unsigned flags;         /* CLS_STREAM_* */
} cls_stream_opts;

/* C-contiguous data of shape batch x rows x cols (a 2-D array has batch = 1).
 * Columns are features, rows are samples. An input array is only read.
 * `where` says which of the fields below hold it; the others are ignored.
 * A call's input and output live in the same kind of place (an output .npy
 * takes the input's dtype and shape; its batch, rows and cols are ignored).
 *
 *   cls_array x = {.data = p, .dtype = CLS_F32, .batch = 1, .rows = n, .cols = 8};
 *   cls_array f = {.where = CLS_IN_NPY, .path = "big.npy"};
 *   cls_array b = {.where = CLS_IN_BUFFER, .mem = buf, .dtype = CLS_F32,
 *                  .batch = 1, .rows = n, .cols = 8, .sync = &sync};
 */
typedef struct cls_array {
    void     *data;                 /* CLS_IN_HOST */
    cls_dtype dtype;
    size_t    batch, rows, cols;
    cls_where where;                /* 0: CLS_IN_HOST */
    struct _cl_mem *mem;            /* CLS_IN_BUFFER: a buffer of the context's cl_context (a
                                       sub-buffer is fine); neither retained nor released */
    uint64_t  offset;               /* CLS_IN_BUFFER, CLS_IN_FILE: bytes into mem or the file (a
                                       multiple of the element size for a buffer) */
    int       fd;                   /* CLS_IN_FILE: pread() for an input, pwrite() for an output;
                                       never closed, moved or synced */
    const char *path;               /* CLS_IN_NPY: the file; CLS_IN_FILE: its name in messages
                                       (NULL: "file descriptor N") */
    const cls_sync *sync;           /* CLS_IN_BUFFER, the input's: wait list, event, device; NULL:
                                       device 0, no wait list, the call blocks */
    const cls_stream_opts *stream;  /* CLS_IN_FILE, CLS_IN_NPY, the input's: the buffer pool; NULL:
                                       the defaults */
} cls_array;

/* The scalers, one line each (formulas at cls_pipeline below): the line
 * CLS_SCALER(CLS_X, x) makes the value CLS_X, after the line above it, and
 * names the library's descriptor of it (src/scalers/x.c); the library's
 * table and its build read this list. CLS_NONE, 0, is no scaler. */
#define CLS_SCALERS(CLS_SCALER)         \
    CLS_SCALER(CLS_MINMAX, minmax)      \
    CLS_SCALER(CLS_ZSCORE, zscore)      \
    CLS_SCALER(CLS_DECIMAL, decimal)    \
    CLS_SCALER(CLS_ROBUST, robust)      \
    CLS_SCALER(CLS_MAXABS, maxabs)      \
    /* a new scaler: its line above this one */
#define CLS_SCALER_VALUE_(value, file) value,
typedef enum cls_scaler { CLS_NONE, CLS_SCALERS(CLS_SCALER_VALUE_) } cls_scaler;
#undef CLS_SCALER_VALUE_

/* cls_scaler_name() : the scaler's name as `clscale normalize --method` and the
 * stats file's users know it ("minmax", "zscore", ...; "none" for CLS_NONE), a
 * static string; NULL for a value outside the enum, so that a loop from
 * CLS_MINMAX up to the first NULL lists (or looks up) every scaler. */
CLS_API const char *cls_scaler_name(cls_scaler s);

/* Statistics groups: CLS_SCOPE_MATRIX, each of the `batch` matrices has its
 * own per-column statistics; CLS_SCOPE_BATCH, all batch x rows rows share them. */
typedef enum cls_scope { CLS_SCOPE_MATRIX, CLS_SCOPE_BATCH } cls_scope;

/* ---- Cleaning, ahead of the scaler ---------------------------------------
 * Missing values are NaN, +-Inf and, when has_missing_value, values equal
 * to missing_value (a catalogue's -9999). Outliers: astropy's sigma_clip
 * along the rows of each column of each statistics group: the centre
 * (median or mean) and spread (std, ddof 0, or mad_std = 1.482602218505602
 * x the median absolute deviation) of the values every earlier iteration
 * kept give the bounds [centre - sigma_lower x spread, centre + sigma_upper
 * x spread], until an iteration clips nothing or maxiters iterations ran;
 * as astropy's, the values clipped in the end are those outside the last
 * bounds (one clipped early comes back inside them; NaN bounds, after a
 * column was clipped whole, clip nothing). Clipped values become missing
 * (CLS_CLIP_MASK) or take the nearest final bound (CLS_CLIP_CLAMP); with
 * CLS_CLIP_KEEP (cleaning with no scaler, no imputation) every value is
 * written as it was read, missing ones and the sentinel too: astropy's
 * masked array, whose data is a copy of the input and mask_out the mask
 * (one pass over the data writes both; in place, nothing is written).
 * Imputation (scikit-learn's SimpleImputer) then fills every missing value
 * with its column's mean, median or most frequent value (the smallest of
 * ties) over the values kept, or a constant. A column with no value kept
 * stays missing (scikit-learn would drop it) unless the constant fills it.
 * Missing values not filled are written as NaN (a sentinel too); NaN and
 * +-Inf stay what they were.
 * A zero-initialised cls_clean does nothing. The pointers at the end are
 * optional outputs that the caller allocates: groups x cols entries
 * [group * cols + col], and mask_out, a byte per value. */
typedef enum cls_impute {
    CLS_IMPUTE_NONE, CLS_IMPUTE_MEAN, CLS_IMPUTE_MEDIAN, CLS_IMPUTE_MOST_FREQUENT, CLS_IMPUTE_CONSTANT
} cls_impute;
typedef enum cls_clip_center { CLS_CENTER_MEDIAN, CLS_CENTER_MEAN } cls_clip_center;
typedef enum cls_clip_spread { CLS_SPREAD_STD, CLS_SPREAD_MAD_STD } cls_clip_spread;
typedef enum cls_clip_mode { CLS_CLIP_MASK, CLS_CLIP_CLAMP, CLS_CLIP_KEEP } cls_clip_mode;

/* Light curves: a trend along the rows of each column (the time axis),
 * missing values (NaN, +-Inf, the sentinel) ignored in each window and
 * written as they were:
 *   CLS_DETREND_MEAN    the mean of the valid values of the window of
 *                       `window` rows that starts `window / 2 + origin`
 *                       rows before the row (scipy.ndimage.uniform_filter1d)
 *   CLS_DETREND_SAVGOL  the least-squares polynomial of order `polyorder`
 *                       through the window's valid values, at the window's
 *                       centre (scipy.signal.savgol_filter; NaN with fewer
 *                       than polyorder + 1 valid values)
 * equal to scipy's on finite data (float64 sums where the device has
 * cl_khr_fp64; float32 sums with compensation elsewhere, ~1e-5 relative).
 * Edges as scipy's modes: reflect (d c b a | a b c d, ndimage's 'reflect'),
 * mirror (d c b | a b c d, ndimage's 'mirror' = savgol_filter's 'mirror'),
 * nearest, constant (cval, a value like any), wrap, and interp
 * (Savitzky-Golay only: the polynomial of the first and last window rows
 * for the first and last window / 2 rows; window <= rows). Smoothing by
 * bins of bin_rows rows follows the trend; the last bin of a group may be
 * shorter; a bin with no valid value gives NaN (count: 0). A light-curve
 * field set without what it needs (a window without a trend, a statistic
 * without bins) is CLS_E_ARG. In cls_fit_transform()'s cleaning stage
 * they run after the cleaning, then the scaler over the result (passes of
 * their own, not fused). Over a file whose series is larger than a stream
 * buffer they run in blocks with halo rows (a mask too). With a combine
 * hook they are CLS_E_UNSUPPORTED: a trend needs whole series, so
 * cls_mpi_fit_transform runs them per matrix, each rank its whole
 * matrices. */
typedef enum cls_detrend { CLS_DETREND_NONE, CLS_DETREND_MEAN, CLS_DETREND_SAVGOL } cls_detrend;
typedef enum cls_detrend_op { CLS_DETREND_SUBTRACT, CLS_DETREND_DIVIDE, CLS_DETREND_TREND } cls_detrend_op;
typedef enum cls_edge {
    CLS_EDGE_DEFAULT, CLS_EDGE_REFLECT, CLS_EDGE_MIRROR, CLS_EDGE_NEAREST, CLS_EDGE_CONSTANT, CLS_EDGE_WRAP,
    CLS_EDGE_INTERP
} cls_edge;
typedef enum cls_bin_stat {
    CLS_BIN_NONE, CLS_BIN_MEAN, CLS_BIN_MEDIAN, CLS_BIN_BOUNDARY, CLS_BIN_SUM, CLS_BIN_COUNT
} cls_bin_stat;

typedef struct cls_clean {
    int             has_missing_value; /* values equal to missing_value are missing */
    double          missing_value;     /* not NaN */
    cls_impute      impute;
    double          fill_value;        /* CLS_IMPUTE_CONSTANT; finite */
    double          sigma;             /* > 0 clips; 0: no clipping */
    double          sigma_lower, sigma_upper; /* 0: sigma; else > 0 */
    int             maxiters;          /* 0: astropy's default 5; < 0: until nothing changes */
    cls_clip_center center;            /* astropy's cenfunc, default median */
    cls_clip_spread spread;            /* astropy's stdfunc, default std */
    cls_clip_mode   mode;
    uint64_t       *missing_out;       /* NULL, or: missing values found (before clipping) */
    uint64_t       *clipped_out;       /* NULL, or: values clipped */
    double         *fill_out;          /* NULL, or: the fill value (NaN: none) */
    unsigned       *iterations_out;    /* NULL, or: clipping iterations run */
    double         *lower_out, *upper_out; /* NULL, or: the last iteration's bounds (astropy's
                                              return_bounds; the data's type, as numpy's);
                                              NaN where nothing was left to compute them
                                              from; -Inf and +Inf without clipping */
    /* only when the pipeline cleans with no scaler, factors or statistics asked for: */
    uint8_t        *mask_out;          /* NULL, or: one byte per value of the input, in its
                                          layout: 1 where the value is missing or clipped
                                          (astropy's sigma_clip mask), else 0 */
    double         *mean_out, *m2_out; /* NULL, or: the mean of the values kept and the sum
                                          of their squared deviations from it (a std of
                                          ddof d is sqrt(m2 / (kept - d)), kept = rows -
                                          missing - clipped); NaN where none is kept */
    /* Light curves (cls_fit_transform(), whose bins may reduce the rows: above), after the
     * cleaning above, along the rows of each column of each statistics
     * group (the time axis; docs/guide/lightcurves.md): */
    cls_detrend     detrend;           /* the trend: none, moving average, Savitzky-Golay */
    cls_detrend_op  detrend_op;        /* subtract it (default), divide by it, or write it
                                          (CLS_DETREND_TREND: at every row, missing ones too) */
    unsigned        window;            /* the trend's window in rows, >= 1 (may exceed the rows
                                          but for CLS_EDGE_INTERP) */
    unsigned        polyorder;         /* Savitzky-Golay: < window, at most 8 */
    unsigned        deriv;             /* Savitzky-Golay: the derivative (scipy's deriv) */
    double          delta;             /* Savitzky-Golay: the rows' spacing for deriv; 0: 1 */
    cls_edge        edge;              /* beyond the ends; CLS_EDGE_DEFAULT: scipy's default
                                          (interp for Savitzky-Golay, reflect for the mean) */
    double          cval;              /* CLS_EDGE_CONSTANT's value; finite */
    int             origin;            /* moving average: scipy.ndimage's origin, in
                                          [-(window / 2), (window - 1) / 2] */
    unsigned        bin_rows;          /* bins of this many rows (from each group's first);
                                          0: none */
    cls_bin_stat    bin_stat;          /* each valid value replaced by its bin's mean, median
                                          or nearest boundary; or, reduced (below), one row
                                          per bin: its mean, median, sum or count of valid
                                          values */
    int             bin_reduce;        /* 1: one row per bin (below); a sum or a count
                                          always reduces */
    /* lightkurve's flatten (an iterated trend): the trend fitted flatten_niters
     * times, each fit after the first leaving out the values that astropy's
     * sigma_clip (flatten_sigma, median centre, std, 5 iterations) clips in
     * x - the previous trend over the whole series (the values left out
     * only grow; a value whose residual is missing stays in); then
     * detrend_op with the last trend, in the data's type as numpy's x /
     * trend (the trend written first, in the data's type), the bins after
     * it. Needs a trend and
     * deriv 0. The clip's statistics are over whole series: a file whose
     * series is larger than a stream buffer is CLS_E_UNSUPPORTED (per
     * matrix, matrices that fit a buffer stream; or give a larger buffer,
     * or the data in memory). */
    unsigned        flatten_niters;    /* the fits (1: one, no clipping); 0: no flatten */
    double          flatten_sigma;     /* the clip's sigma, > 0; 0: 3 (lightkurve's default) */
} cls_clean;

/* Bins reduced to one row each: cls_fit_transform() of a pipeline that
 * cleans alone (CLS_NONE, no factors, `fitted` NULL) with bin_reduce set,
 * a bin_stat of CLS_BIN_SUM or CLS_BIN_COUNT, or a host or file `out` of
 * another shape than `in`: ceil(rows / bin_rows) rows per statistics group
 * (batch x that x cols in CLS_SCOPE_MATRIX, 1 x that x cols in
 * CLS_SCOPE_BATCH), in's dtype; a .npy output is written in that shape
 * (as many dimensions as the input's). The data is cleaned and detrended
 * first into a copy (`in` is only read); each value of out is its bin's
 * statistic (lightkurve's bin, astropy's aggregate_downsample on evenly
 * sampled rows). CLS_E_ARG also
 * for bin_rows 0, CLS_BIN_BOUNDARY, mask_out, or out of the wrong shape. */

/* ---- Several processes ----------------------------------------------------
 * Exact quantiles and cleaning over the rows of several processes (MPI
 * ranks, the workers of a cluster), with no approximation: each process
 * counts its own rows on its own devices, and the pipeline's `combine`
 * hooks, which the caller supplies, sum the counts of every process after
 * each counting pass and merge the moments after each moments pass, so
 * that every process takes the decisions of one process over all the rows
 * and ends with the same exact values. The library knows nothing of how
 * the counts travel (clscale_mpi.h sums them with MPI_Allreduce).
 *
 * cls_count_combine_fn : called after each counting pass with this
 * process's outcome so far (`local`: CLS_OK, or why it failed, the message
 * in cls_last_error()) and its `n` counts (uint64, `counts` NULL when n is 0
 * or local failed). On CLS_OK the hook replaces every counts[i] with the sum
 * of counts[i] over all processes (the order of the entries is the
 * library's; every process passes the same n at the same call) and returns
 * CLS_OK only when every process passed CLS_OK; otherwise it returns a
 * failure (the same on every process, e.g. the first failing process's
 * status) and the call returns that status. The hook is called from the
 * calling thread, at least once per call (a call that fails its argument
 * checks still calls it once with that failure, so that no process is left
 * waiting), the same number of times on every process up to the first
 * failure: 4 (float32) or 8 (float64) times per wave of columns, waves
 * depending only on cols, the groups and the number of quantiles. */
typedef cls_status (*cls_count_combine_fn)(void *user, cls_status local, uint64_t *counts, size_t n);

/* cls_stats_combine_fn : the second hook, for fits and cleaning across
 * processes: called after a fit's pass and each cleaning moments pass with
 * this process's outcome `local` and its `n` columns (groups x cols, entry
 * [group * cols + col]; count = the values kept, missing = this process's
 * rows - count, min, max, absmax, mean, m2 of the kept values, mean and m2
 * NaN where a fit takes no moments; median, q_lo, q_hi NaN). On CLS_OK the hook
 * replaces every column by the merge of that column over all processes
 * (cls_column_stats_merge() with moments, in an order that gives every
 * process the same bits) and returns CLS_OK only when every process passed
 * CLS_OK; otherwise the same failure on every process, as the count hook.
 * It is also called with cols NULL and n 0: once with a failure found
 * before the first pass, and once at the end of a call, with the outcome
 * of the last pass, so that every process returns the same status. */
typedef struct cls_column_stats cls_column_stats;
typedef cls_status (*cls_stats_combine_fn)(void *user, cls_status local, cls_column_stats *cols, size_t n);
typedef struct cls_combine {
    cls_count_combine_fn fn;
    void                *user;  /* passed to fn and stats as it is */
    cls_stats_combine_fn stats; /* NULL, or: merges column statistics (cleaning) */
} cls_combine;

/* A pipeline: an optional cleaning stage, an optional scaler, then an optional discount product, fused in
 * one pass over the data. Non-finite values (NaN, +-Inf) are missing: ignored
 * by the fit, passed through unchanged by the scaler, counted.
 *   min-max  y = (x - min) / (max - min) * (hi - lo) + lo; clip clamps into
 *            [lo, hi]; a constant column maps to lo. lo = hi = 0 means [0, 1].
 *   z-score  y = (x - mean) / std, population std (ddof 0); std 0 maps to 0.
 *   decimal  y = x / 10^j, j the smallest integer with max|y| < 1 (j may be
 *            negative; 0 for an all-zero column; at least -38 in float32,
 *            -308 in float64, so that 10^-j is finite).
 *   robust   scikit-learn's RobustScaler: y = (x - median) / (q_hi - q_lo),
 *            q_lo, q_hi the quantiles qmin, qmax (percent, numpy's
 *            nanpercentile, exact: cls_quantiles); a range below 10 * DBL_EPSILON
 *            scales by 1; unit_variance divides the range by
 *            norm.ppf(qmax / 100) - norm.ppf(qmin / 100); no_centering and
 *            no_scaling drop either part. The fit takes its own counting
 *            passes before the scaling pass.
 *   max-abs  scikit-learn's MaxAbsScaler: y = x / max|x|; a max|x| below
 *            10 * epsilon of the dtype scales by 1.
 *   discount y *= factors, factors broadcast against batch x rows x cols with
 *            numpy's rules (shapes cols, rows x cols, batch x rows x cols,
 *            1 x rows x 1, ...), in the data's dtype.
 * `inverse` undoes a fitted scaler (then the discount, if any, is applied to
 * the result). */
typedef struct cls_pipeline {
    cls_scaler       scaler;
    cls_scope        scope;
    double           lo, hi;
    int              clip;
    int              inverse;
    const cls_array *factors;   /* discount; NULL: none */
    /* robust scaler; zero: scikit-learn's defaults */
    double           qmin, qmax;    /* quantile range in percent, 0 <= qmin <= qmax <= 100;
                                       0, 0: 25, 75 */
    int              no_centering;  /* RobustScaler(with_centering=False) */
    int              no_scaling;    /* RobustScaler(with_scaling=False) */
    int              unit_variance; /* RobustScaler(unit_variance=True) */
    /* cleaning ahead of the scaler; NULL: none. cls_fit_transform() cleans,
     * then fits the scaler on the cleaned data; min-max, z-score, decimal
     * and max-abs take the statistics of the cleaned data from the cleaning
     * passes and scale in the cleaning's last pass (fused); robust scaling,
     * clamping and a discount clean first, then fit and scale the result.
     * cls_fit() and cls_transform() do not clean (CLS_E_ARG). The stats
     * file does not record the cleaning.
     * Cleaning alone is cls_fit_transform() with CLS_NONE, no factors and
     * `fitted` NULL: one pass counts the missing values and the moments of
     * the rest; each clipping iteration is one pass (plus the counting
     * passes of cls_quantiles for a median or mad_std); a median
     * imputation takes those counting passes once; one pass writes the
     * result. most_frequent is found on the host (a sort per column of its
     * kept values). In place with CLS_CLIP_CLAMP, a copy of the input is
     * kept on the host for the duration of the call. `out` may then be
     * NULL (host arrays): only the mask and the per-column outputs are
     * written. Failures: CLS_E_ARG also for a NaN missing_value, a constant
     * that is not finite, a sigma below 0, sigma_lower or sigma_upper
     * resolving to 0 while clipping, an unknown enum, light-curve fields
     * that do not fit together or with the rows, out NULL with a trend or
     * bins. */
    const cls_clean *clean;
    /* several processes ("Several processes" above); NULL or fn NULL: this
     * process alone. Each process passes its own rows of the same groups
     * (CLS_SCOPE_BATCH: any rows, 0 included, data then NULL;
     * CLS_SCOPE_MATRIX: rows of each of the same `batch` matrices), the
     * same dtype, cols, scope and options.
     *   cls_quantiles(), cls_medians(): every process receives the
     *     quantiles of all processes' rows, bit for bit those of one call
     *     over them in any order (the radix passes, whatever the groups'
     *     length).
     *   cls_fit() (host arrays, files; both hooks set): each process fits
     *     its own rows for what merges (counts, extremes, moments), the
     *     stats hook merges them, and the robust scaler's quantiles follow
     *     in counting passes over every process's rows; every process
     *     receives the statistics of all rows (info.rows their total):
     *     counts, extremes and quantiles bit for bit one process's, means
     *     and variances merged in another order (float64 about 1e-15
     *     relative).
     *   cls_fit_transform() without a cleaning stage: that fit, then each
     *     process transforms its own rows; its outcome is agreed through
     *     the stats hook, so every process returns the same status.
     *   cls_fit_transform() with a cleaning stage (host arrays, or files
     *     streamed by the cleaning stage's passes whatever the buffer size;
     *     both hooks set): cleans each process's rows with the decisions of
     *     one process over all of them; the optional outputs of the
     *     cleaning (missing, clipped, fill, iterations) are those of all
     *     processes. Counts, bounds and fills from medians are exact;
     *     means and variances are merged in another order (float64 about
     *     1e-15 relative, float32 about 1e-7). A scaler fuses into the last
     *     pass when it follows from the cleaned moments (min-max, z-score,
     *     decimal, max-abs; no factors, CLS_CLIP_MASK), and `fitted` then
     *     receives the statistics of all processes' cleaned rows; in host
     *     memory another scaler (robust, factors, clamping) is fitted
     *     across the processes on the cleaned rows and applied to them, as
     *     one process runs it; streamed, it is CLS_E_UNSUPPORTED (before any
     *     pass, on every process), and so is most_frequent imputation.
     *   cls_transform(), buffers, .npy paths: CLS_E_UNSUPPORTED (a
     *     transform is each process's own: call it without the hook). */
    const cls_combine *combine;
} cls_pipeline;

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

typedef struct cls_stats cls_stats;

/* One column of one statistics group. Moments over the finite values. */
struct cls_column_stats {
    uint64_t count;     /* finite values */
    uint64_t missing;   /* NaN and +-Inf */
    double   min, max;  /* NaN when count = 0 */
    double   mean, m2;  /* m2: sum of squared deviations from the mean; NaN when
                           the fit did not compute moments (see has_moments) */
    double   absmax;    /* max |x|, NaN when count = 0 */
    double   median;    /* exact: numpy's nanquantile(0.5) (float64 data: nanmedian, bit
                           for bit; float32: the middle two's mean in float64, not
                           rounded to float32); NaN unless has_quantiles */
    double   q_lo, q_hi; /* the quantiles qmin, qmax of cls_stats_info (nanpercentile);
                           NaN unless has_quantiles */
};

typedef struct cls_stats_info {
    cls_scaler scaler;      /* the pipeline that fitted the statistics */
    cls_scope  scope;
    double     lo, hi;
    int        clip;
    cls_dtype  dtype;       /* of the data that was fitted */
    size_t     groups;      /* batch for CLS_SCOPE_MATRIX, 1 for CLS_SCOPE_BATCH */
    size_t     cols;
    uint64_t   rows;        /* rows seen per group (finite or not) */
    int        has_moments; /* mean and m2 were computed (z-score, or no scaler) */
    int        has_quantiles; /* median, q_lo, q_hi were computed (robust) */
    double     qmin, qmax;  /* robust: the quantile range, percent */
    int        no_centering, no_scaling, unit_variance; /* robust */
} cls_stats_info;

/* cls_stats_describe() : the shape of `s` and the pipeline that fitted it;
 * the columns themselves are cls_stats_columns()'s table (below).
 * @return CLS_OK, or CLS_E_ARG (NULL). */
CLS_API cls_status cls_stats_describe(const cls_stats *s, cls_stats_info *out);

/* cls_fit() : computes the statistics the pipeline's scaler needs, on the
 * devices. CLS_NONE computes all of them (a "describe"). `x` is only read.
 * With p->combine: over the rows of several processes ("Several processes").
 * @return CLS_OK and *out (free with cls_stats_destroy()); or CLS_E_ARG (NULL,
 *         zero or overflowing shape, bad pipeline), CLS_E_UNSUPPORTED (float64
 *         with no fp64 device), CLS_E_NOMEM, CLS_E_DEVICE (every device able
 *         to run it failed); *out is then NULL. */
CLS_API cls_status cls_fit(cls_context *ctx, const cls_pipeline *p, const cls_array *x, cls_stats **out);

/* cls_transform() : applies `p` with statistics `s` to `in`, writing `out`
 * (which may be `in`: in place). p = NULL means the pipeline recorded in `s`.
 * The scope and columns of `s` must fit `in`; a scaler other than CLS_NONE
 * needs `s` (s may be NULL for a discount alone).
 * If a device fails mid-call its slices are redone on the others; if none is
 * left the call fails, and an in-place call's report says how many slices
 * were written whole; a slice a device was writing in place when it was
 * lost may be partly written, and the message names it.
 * @return CLS_OK; CLS_E_ARG (shapes, dtypes or columns that do not match `s`,
 *         factors that do not broadcast, an `out` that overlaps `in` without
 *         being it), CLS_E_UNSUPPORTED, CLS_E_NOMEM or CLS_E_DEVICE. On a
 *         failure other than CLS_E_DEVICE mid-call, `out` is untouched. */
CLS_API cls_status cls_transform(cls_context *ctx, const cls_pipeline *p, const cls_stats *s,
                         const cls_array *in, cls_array *out);

/* cls_fit_transform() : fits the pipeline's scaler on `in`, then writes the
 * transformed data to `out` (which may be `in`). When each statistics group
 * (or a column block of it) fits a slice, stats and scaling run in one pass
 * on one device with no host round trip; otherwise partial statistics are
 * merged on the host between two passes. `fitted`, when not NULL, receives
 * the statistics (free with cls_stats_destroy()).
 * @return as cls_fit() and cls_transform(); on failure *fitted is NULL. */
CLS_API cls_status cls_fit_transform(cls_context *ctx, const cls_pipeline *p, const cls_array *in,
                             cls_array *out, cls_stats **fitted);

/* cls_stats_merge() : folds `from` into `into` (Chan's parallel formula), as
 * if `into` had been fitted on both arrays' rows. Both must have the same
 * scaler, scope, groups and columns. Exact when either is empty.
 * Quantiles do not merge this way: statistics with has_quantiles give
 * CLS_E_UNSUPPORTED (fit the whole data; cls_quantiles counts over data
 * larger than a device).
 * @return CLS_OK, CLS_E_UNSUPPORTED, or CLS_E_ARG (NULL, shapes or pipelines
 *         that differ: `into` is then unchanged). */
CLS_API cls_status cls_stats_merge(cls_stats *into, const cls_stats *from);

/* cls_stats_save() / cls_stats_load() : a small binary file (docs/FORMAT.md)
 * that records the fitting pipeline too. A malformed, truncated or corrupted
 * file is CLS_E_FORMAT; an unreadable one CLS_E_IO. These functions do not
 * take a context: cls_last_error(NULL) returns the message of the last
 * failure in this thread. */
CLS_API cls_status cls_stats_save(const cls_stats *s, const char *path);
CLS_API cls_status cls_stats_load(const char *path, cls_stats **out);

/* cls_stats_destroy() : frees `s`; NULL is a no-op. */
CLS_API void cls_stats_destroy(cls_stats *s);

/* Assembling statistics that were combined elsewhere (MPI ranks, chunks of a
 * Dask array): the optional MPI part (clscale_mpi.h) is built on these two
 * and cls_stats_create() with cols NULL (below), which makes empty ones to
 * merge into.
 *
 * cls_stats_columns() : the columns of `s`, groups x cols, entry
 * [group * cols + col], owned by `s` and valid until cls_stats_destroy().
 * Writing through the pointer changes the statistics: the caller keeps them
 * what a fit would have computed. NULL when s is NULL. */
CLS_API cls_column_stats *cls_stats_columns(cls_stats *s);

/* cls_column_stats_merge() : folds column `from` into `into` with Chan's
 * parallel formulas, as if `into` had seen both sets of values: counts and
 * missing add, min, max and absmax combine, mean and m2 combine when
 * `moments` is non-zero (else they become NaN). Merging with an empty column
 * is exact; otherwise the result may differ from a merge in the other order
 * in the last bit of mean and m2. `from` may alias `into`. Thread-safe. */
CLS_API void cls_column_stats_merge(cls_column_stats *into, const cls_column_stats *from, int moments);

/* ---- Statistics from values, and the affine map they give ----------------
 * For bindings (the Python package) and applications that keep fitted
 * statistics themselves: rebuild a cls_stats from its description and
 * columns (after unpickling, or to restate statistics under another
 * pipeline before a merge), and read the exact map a transform applies.
 * Both are pure host code: no context, no OpenCL call, safe from any thread
 * on distinct objects (and on one object when only reading it). */

/* cls_stats_create() : a new statistics object with the description `info`
 * and the `info->groups * info->cols` columns `cols`, entry
 * [group * cols + column] (the order of cls_stats_columns()).
 * Columns are checked, not trusted: a column with count 0 is stored empty
 * (every value NaN, its missing count kept); a column with count > 0 needs
 * finite min <= max and a finite absmax >= max(|min|, |max|), and, when
 * info->has_moments, a finite mean and a finite m2 >= 0, and, when
 * info->has_quantiles, a finite median, q_lo and q_hi. Without
 * has_moments, mean and m2 are stored NaN. With cols NULL every column
 * is empty (count 0, missing 0, the rest NaN; info->rows kept as given)
 * and info->groups may be 0 (a process that holds no matrix).
 * @return CLS_OK and *out (free with cls_stats_destroy()); CLS_E_ARG when an
 *         argument is NULL, info has an unknown scaler, scope or dtype,
 *         groups or cols is 0, scope batch has groups != 1, lo or hi is not
 *         finite, an empty range (lo >= hi, but for 0, 0: the default) for a
 *         scaler that takes one (min-max), a z-score without moments, a
 *         scaler fitted on exact quantiles (robust) without them, or a
 *         column fails the checks above; CLS_E_NOMEM. *out is NULL on
 *         failure; cls_last_error(NULL) says why. These refusals follow the
 *         scalers' table, so a binding or a tool learns from them which
 *         scalers take a range (and clip) and which the quantile options
 *         (qmin, qmax, no_centering, no_scaling, unit_variance). */
CLS_API cls_status cls_stats_create(const cls_stats_info *info, const cls_column_stats *cols,
                                    cls_stats **out);

/* The map y = (x - shift) * scale + offset of one column; a transform then
 * clamps y into [lo, hi] when the pipeline clips (forward min-max only). */
typedef struct cls_affine {
    double shift, scale, offset;
} cls_affine;

/* cls_stats_params() : the map that cls_transform() applies to column `col`
 * of statistics group `group` with `s`'s recorded scaler and range, in
 * float64 (a float32 transform rounds these values; decimal scaling picks
 * its exponent for s's recorded dtype). `inverse` gives the map that undoes
 * it. An empty column (count 0), and every column of CLS_NONE, give the
 * identity (0, 1, 0). min-max: shift min, scale (hi - lo) / (max - min), 0
 * for a constant column, offset lo. z-score: shift mean, scale 1 / std
 * (population std; 0 when std is 0), offset 0. decimal: shift 0, scale
 * 10^-j, offset 0.
 * @return CLS_OK, or CLS_E_ARG for a NULL argument or an index out of range. */
CLS_API cls_status cls_stats_params(const cls_stats *s, size_t group, size_t col, int inverse, cls_affine *out);

/* ------------------------------------------------------------------------ */
/* Data already on a device                                                  */
/* ------------------------------------------------------------------------ */

/* Applications with their own OpenCL code keep their arrays in cl_mem
 * buffers. A context made on their cl_context (cls_config.cl_context) runs
 * the same pipelines on such buffers (cls_array with CLS_IN_BUFFER), on one
 * device, with no host round trip: the data never leaves the device, only
 * the statistics (a few bytes per column) come back when a fit asks for
 * them.
 *
 *   cl_context ctx = ...; cl_device_id dev = ...; cl_command_queue q = ...;
 *   cls_config cfg = {.cl_context = ctx, .cl_devices = &dev, .cl_ndevices = 1,
 *                     .cl_queues = &q};
 *   cls_context *c;
 *   cls_context_create(&cfg, &c);
 *   cl_event done;
 *   cls_sync sync = {.wait = &written, .nwait = 1, .done = &done};
 *   cls_array x = {.where = CLS_IN_BUFFER, .mem = buf, .dtype = CLS_F32,
 *                  .batch = 1, .rows = n, .cols = 8, .sync = &sync};
 *   cls_pipeline p = {.scaler = CLS_ZSCORE};
 *   cls_fit_transform(c, &p, &x, &x, NULL);   (in place)
 *   ... enqueue the caller's next kernel waiting on `done`, release it ...
 *
 * cls_fit() blocks until the statistics are on the host (sync->done, when
 * set, receives a complete event). cls_transform() writes `out`, which may
 * be `in` (same mem and offset: in place) or any buffer of the context that
 * does not overlap it. cls_fit_transform(): when every statistics group
 * fits one pass and `fitted` is NULL, nothing waits on the host: with
 * sync->done set, the call returns once its commands are enqueued (the
 * buffers must then stay alive until *done completes). Discount factors
 * (cls_pipeline.factors) stay host arrays: they are copied to the device
 * during the call. The input's sync is the call's; the output's is not
 * read. Failures: a buffer that is not a valid cl_mem (released), belongs
 * to another context, is too small for its shape and offset, an output
 * that is read-only or overlaps the input, a context not made on a
 * cl_context, or a device index out of range: CLS_E_ARG, and nothing was
 * enqueued. On a failure after enqueuing, *done is NULL. The context's
 * queue for that device is used; one thread at a time. */

/* ------------------------------------------------------------------------ */
/* Exact quantiles                                                           */
/* ------------------------------------------------------------------------ */

/* cls_quantiles() : exact quantiles of every column of `x` (host memory)
 * over each statistics group of p->scope (p NULL: CLS_SCOPE_MATRIX; p's
 * combine: over several processes; its other fields are not used), found on the devices by counting (never a
 * sort of the data on the host, never an estimate): numpy's
 * nanquantile(method="linear") over the column's finite values (NaN and
 * +-Inf are missing; a column with none gives NaN). For float64 data the
 * result is numpy's bit for bit; for float32 it is numpy's for a list of
 * quantiles (the two neighbouring values subtracted in float32, the
 * interpolation in float64). -0.0 sorts before +0.0.
 * `q` holds nq fractions in [0, 1] (1 <= nq <= 8); `out` receives
 * groups x nq x cols doubles, entry [(group * nq + j) * cols + col], groups
 * = batch for CLS_SCOPE_MATRIX, 1 for CLS_SCOPE_BATCH. Data larger than a
 * device is read in units of rows and columns, in 1 pass for groups of at
 * most 128 rows, else 4 (float32) or 8 (float64) passes.
 * @return CLS_OK, CLS_E_ARG (a NULL pointer, a zero shape, q outside
 *         [0, 1], a pipeline with a cleaning stage), CLS_E_UNSUPPORTED
 *         (float64 and no fp64 device, data not in host memory), a failure
 *         a combine hook returned, or a device status; cls_last_error(ctx)
 *         says more. */
CLS_API cls_status cls_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x, const double *q,
                                 size_t nq, double *out);

/* cls_medians() : numpy's nanmedian of every column of `x` over each
 * statistics group of p->scope (as cls_quantiles() takes p), exact, by the counting of cls_quantiles():
 * the middle finite value, or for an even count the mean of the middle two
 * in the data's dtype (numpy's arithmetic: (a + b) / 2, bit for bit; for
 * float32 rounded to float32, where cls_quantiles() at 0.5 interpolates in
 * float64). NaN and +-Inf are missing; a column with no finite value gives
 * NaN. `out` receives groups x cols doubles, entry [group * cols + col].
 * @return as cls_quantiles(). */
CLS_API cls_status cls_medians(cls_context *ctx, const cls_pipeline *p, const cls_array *x, double *out);





/* cls_stats_fit_quantiles() : the robust scaler's exact statistics (each
 * column's median, q_lo and q_hi, as cls_fit() of `p` computes them) over
 * the rows of every process that calls it with the same p->combine hook
 * (NULL: this process's `x` alone), written into the statistics `s` (whose
 * other fields are left as they are) and has_quantiles, qmin, qmax,
 * no_centering, no_scaling and unit_variance of its description set from
 * `p`. `s` must describe the groups (info.groups: batch in
 * CLS_SCOPE_MATRIX, 1 in CLS_SCOPE_BATCH), cols and dtype of `x`; x may
 * hold 0 rows as cls_quantiles() with a combine hook. With combine, this is the
 * step that makes distributed robust statistics exact: combine the other
 * fields (count, missing, min, max, absmax) by cls_column_stats_merge()
 * across the processes, then call this.
 * @return CLS_OK; CLS_E_ARG (NULL, p's scaler not CLS_ROBUST, s that does
 *         not describe x), or as cls_quantiles(); the quantiles of
 *         `s` are then unspecified. Threads: as cls_quantiles(). */
CLS_API cls_status cls_stats_fit_quantiles(cls_context *ctx, const cls_pipeline *p, const cls_array *x,
                                           cls_stats *s);

/* ------------------------------------------------------------------------ */
/* A data summary                                                            */
/* ------------------------------------------------------------------------ */

/* One column of one statistics group, over its finite values (NaN and
 * +-Inf are missing). min, max, mean, std, median, q25, q75 are NaN when
 * count is 0. */
typedef struct cls_column_summary {
    uint64_t count;      /* finite values */
    uint64_t missing;    /* NaN and +-Inf */
    double   min, max;
    double   mean, std;  /* population std (ddof 0), as numpy's nanstd */
    double   median;     /* numpy's nanmedian, exact (cls_quantiles) */
    double   q25, q75;   /* numpy's nanpercentile 25 and 75, exact */
    uint64_t outliers;   /* finite values with |x - mean| > sigma * std, computed in
                            the data's dtype (mean and sigma * std rounded to it) */
} cls_column_summary;

/* The summary of an array: groups x cols columns, entry [group * cols + col],
 * and per group the duplicate rows. The caller owns it and its two arrays:
 * groups is the array's batch (CLS_SCOPE_MATRIX) or 1 (CLS_SCOPE_BATCH). */
typedef struct cls_summary {
    cls_column_summary *columns;         /* in: the caller's groups x cols entries */
    uint64_t           *duplicate_rows;  /* in: the caller's groups entries, or NULL to
                                            skip the hashing pass; out: rows equal to an
                                            earlier row of the group, as pandas'
                                            DataFrame.duplicated().sum() counts them
                                            (NaN equal to NaN, -0.0 to 0.0) */
    /* out: */
    cls_dtype           dtype;
    cls_scope           scope;
    size_t              groups;
    uint64_t            rows;            /* rows per group */
    size_t              cols;
    double              sigma;           /* the k of the outlier count */
} cls_summary;

/* cls_describe() : a summary of every column of `x` over each statistics
 * group of `scope` (count, missing, min, max, mean, std, median, quartiles,
 * outliers at `sigma` standard deviations) and the number of duplicate rows
 * of each group, all found on the devices: a moments pass (cls_fit), the
 * quantiles' passes (cls_quantiles), a pass that counts outliers and one
 * that hashes every row; rows whose hashes are equal are then compared
 * exactly on the host, so the duplicate count is exact. `x` is only read.
 * `x` may be in host memory or in a file (CLS_IN_FILE, CLS_IN_NPY: read in
 * chunks through the streaming pool, "Streaming" below; the in-memory
 * call's summary, bit for bit where each group fits a buffer, else means
 * and stds up to the rounding of their merge over the chunks).
 * sigma: > 0 and finite; 0 means 3. `out->columns` (and
 * `out->duplicate_rows` unless NULL) are the caller's arrays, sized as
 * cls_summary says: nothing is allocated for the caller, nothing to free.
 * @return CLS_OK and *out filled; or CLS_E_ARG (NULL, zero shape, sigma < 0
 *         or not finite, out->columns NULL), CLS_E_UNSUPPORTED (float64 and
 *         no fp64 device; data on a device, CLS_IN_BUFFER), CLS_E_NOMEM,
 *         a file's CLS_E_IO or CLS_E_FORMAT, or a device status; *out and
 *         its arrays are then untouched. cls_last_error(ctx) says more.
 * A context may be used by one thread at a time. */
CLS_API cls_status cls_describe(cls_context *ctx, const cls_array *x, cls_scope scope, double sigma,
                                cls_summary *out);

/* ------------------------------------------------------------------------ */
/* Reports, traces                                                           */
/* ------------------------------------------------------------------------ */

typedef enum cls_event_kind {
    CLS_EV_STAGE_IN,   /* host copy, caller memory -> pinned slot */
    CLS_EV_UPLOAD,     /* host -> device */
    CLS_EV_KERNEL,     /* any kernel */
    CLS_EV_DOWNLOAD,   /* device -> host */
    CLS_EV_STAGE_OUT,  /* host copy, pinned slot -> caller memory */
    CLS_EV_KINDS
} cls_event_kind;

/* One timed command of a CLS_PROFILE call. Times in seconds from the start
 * of the call, device clocks aligned to the host clock. */
typedef struct cls_event {
    unsigned       device;   /* index among the selected devices */
    unsigned       queue;    /* in-order queue of that device */
    size_t         slice;
    cls_event_kind kind;
    const char    *name;     /* kernel name, or NULL */
    double         start, end;
} cls_event;

typedef struct cls_device_report {
    size_t      device;      /* index among the selected devices */
    const char *sat_out;     /* NULL, or why it took no slice: a capability it lacks
                                ("no cl_khr_fp64"), in reserve, "declined: ..." with
                                the speeds the scheduler compared, or "took no slice:"
                                the others had taken them all when its worker asked */
    const char *failed;      /* NULL, or the error that dropped it mid-call */
    size_t      slices;      /* slices it completed */
    uint64_t    bytes;       /* bytes of data it read and wrote (both phases) */
    double      busy;        /* seconds from its first slice to its last */
    double      upload, kernel, download, staging;  /* summed event seconds (CLS_PROFILE) */
} cls_device_report;

typedef struct cls_report {
    double   wall;           /* seconds the call took */
    uint64_t bytes;          /* bytes of data read and written, all devices */
    size_t   slices;         /* slices planned (both phases) */
    size_t   slices_done;
    int      phases;         /* 1: self-contained slices; 2: stats, host merge, scaling;
                                a streamed file: its passes over the file, each a read */
    size_t   ndevices;
    const cls_device_report *devices;   /* owned by the context, valid until its next call */
    size_t   nevents;
    const cls_event *events;            /* CLS_PROFILE only */
    size_t   ndropped;       /* devices dropped when the context was created (they
                                took no part), also on a context whose creation
                                failed: every selected device that got as far as
                                being described */
    const cls_dropped_device *dropped;  /* ndropped entries, owned by the context, valid
                                           as long as it is */
} cls_report;

/* cls_last_report() : what the last pipeline call did, also after a failure.
 * The arrays in *out belong to the context and stay valid until its next
 * pipeline call. @return CLS_OK (an empty report before the first call), or
 *         CLS_E_ARG (NULL). */
CLS_API cls_status cls_last_report(const cls_context *ctx, cls_report *out);

typedef enum cls_trace_format {
    CLS_TRACE_JSON, /* a Chrome trace (opens in Perfetto or chrome://tracing), a track per queue */
    CLS_TRACE_SVG   /* an SVG timeline, a lane per queue */
} cls_trace_format;

/* cls_trace_write() : the last CLS_PROFILE call's events as `format`,
 * written atomically (a temporary renamed into place).
 * @return CLS_OK, CLS_E_ARG (no profiled call, an unknown format), CLS_E_IO
 *         (cannot write). */
CLS_API cls_status cls_trace_write(cls_context *ctx, const char *path, cls_trace_format format);

/* ------------------------------------------------------------------------ */
/* Host memory, measurements                                                 */
/* ------------------------------------------------------------------------ */

/* cls_host_alloc() : page-aligned host memory, pinned where a selected device
 * is discrete, so that it moves by DMA with no staging copy. Free with
 * cls_host_free() on the same context, before destroying it (a context
 * frees what is left when destroyed). cls_host_free(ctx, NULL) is a no-op.
 * @return CLS_OK and *out, or CLS_E_ARG (bytes 0), CLS_E_NOMEM. */
CLS_API cls_status cls_host_alloc(cls_context *ctx, size_t bytes, void **out);
CLS_API void       cls_host_free(cls_context *ctx, void *p);

/* Bandwidths of one device, measured the way clpeak does (GB/s = 1e9 bytes/s). */
typedef struct cls_device_limits {
    double mem_copy;        /* copy kernel, read + write bytes counted */
    double h2d_pinned, d2h_pinned;
    double h2d_pageable, d2h_pageable;
    double both_pinned;     /* an upload and a download at once on two queues,
                               pinned: bytes of both directions per second */
} cls_device_limits;

/* cls_device_measure() : measures selected device `i` with buffers of `bytes`
 * (0: 64 MiB, bounded by the device), best of a few repeats. Takes a
 * second or so; meant for benchmarks, not needed before a pipeline call.
 * @return CLS_OK, CLS_E_ARG, CLS_E_NOMEM or CLS_E_DEVICE. */
CLS_API cls_status cls_device_measure(cls_context *ctx, size_t i, size_t bytes, cls_device_limits *out);

/* ------------------------------------------------------------------------ */
/* Streaming: arrays in files, larger than memory                            */
/* ------------------------------------------------------------------------ */

/* The same pipelines over arrays that live in files (cls_array with
 * CLS_IN_FILE: an open descriptor and an offset; CLS_IN_NPY: a .npy file's
 * path), read and written in
 * chunks through a fixed pool of buffers (from cls_host_alloc(): pinned
 * where a selected device is discrete): reading ahead, computing on every
 * device and writing behind overlap, several I/O requests in flight, and
 * memory stays bounded by the pool whatever the file's size. With files
 * larger than a fraction of memory, pages of finished chunks are dropped
 * from the page cache so that the file does not push everything else out.
 * docs/STREAMING.md says how, and what was measured.
 *
 * Passes: min-max, z-score and decimal need a group's statistics before
 * scaling it. When each statistics group (a matrix for CLS_SCOPE_MATRIX, the
 * whole array for CLS_SCOPE_BATCH) fits one buffer, fitting and scaling take
 * one pass: the file is read once and written once. Otherwise a statistics
 * pass reads the group first, then a second pass reads and writes it: one
 * more read of the file. Robust scaling of groups larger than a buffer
 * then reads the file once more per counting pass of its exact quantiles
 * (4 for float32, 8 for float64; a fit too). A transform with
 * given statistics, and a discount, is always one pass. A pipeline with a
 * cleaning stage (cls_pipeline.clean) streams through
 * cls_fit_transform() only: in one pass when every statistics group
 * fits one buffer; otherwise by the cleaning stage's own passes over the
 * file (a moments pass, per clipping iteration the medians' counting
 * passes and a moments pass, a median fill's counting passes, then the
 * pass that writes; decisions from counts and medians equal the in-memory
 * call's, means agree up to the rounding of their merge); a scaler that
 * does not fuse with the cleaning (robust, discount factors, clamped
 * clipping ahead of a scaler) then takes its own passes over the output,
 * rewriting it in place. most_frequent imputation there is
 * CLS_E_UNSUPPORTED, before any pass. The other calls refuse a cleaning
 * stage (CLS_E_UNSUPPORTED). cls_describe() of a file reads it through
 * the same pool (docs/guide/files.md says how many times).
 *
 * Progress: the context's cls_config.progress is called after each chunk,
 * from the calling thread, with the bytes read and written so far over the
 * call's total: the passes begun and those certain to follow (a two-pass
 * call counts both), never a pass that may not run, so that the total grows
 * as each pass whose number depends on the data begins, and `done` equals
 * `total` at the end. cls_config.pass is called as each pass begins. The report
 * (cls_last_report()) sums the chunks' calls; it keeps no events.
 *
 * Threads: like every call, one thread per context; the call starts a few
 * I/O threads of its own and joins them before it returns.
 *
 * Results equal the in-memory calls': byte for byte when the statistics are
 * found in one pass, and up to the rounding of the merged means and
 * variances (Chan's formula over the chunks) when they take two.
 *
 * Files: an input at an offset of an open file must be at least offset +
 * its bytes long; growing, shrinking or being written while the call reads
 * it is an error (CLS_E_IO, naming the file and the byte offset, as for a
 * failed or short read or write: a full disk is "write error at byte N: No
 * space left on device"). A CLS_IN_FILE output holds part of the result
 * after a failure, and its byte range must not overlap the input's in the
 * same file. A .npy input (little-endian float32 or float64, C order, 1 to
 * 3 dimensions; a 1-D file is one row) is only read; a .npy output is
 * written to a temporary file beside its path, synced and renamed onto it
 * only when everything succeeded: on any failure the path is left as it
 * was. It must not name the input. CLS_E_FORMAT: not such a .npy file. */





#ifdef __cplusplus
}
#endif
#endif /* CLSCALE_H */
