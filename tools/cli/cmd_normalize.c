/* clscale normalize | clean | apply | discount: one .npy file in, one out.
 *
 * The input is mapped read-only (cls_npy_open), the output is a temporary
 * file beside OUT, mapped writable, that the library fills in place; it is
 * renamed onto OUT only after everything else succeeded, and removed on any
 * failure (or SIGINT/SIGTERM/SIGHUP), so OUT is either the whole new result
 * or exactly what it was before. Where OUT really goes (a symlink's file, a
 * device or pipe streamed into), the checks before any work, the side file
 * --stats-out and the signals are output.c's and guard.c's.
 *
 * Exit status: 0 success, 1 bad file or runtime failure (one line naming the
 * file, or the library's status and message), 2 usage error (one line plus a
 * hint to use --help). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clean_opts.h"
#include "cli.h"
#include "guard.h"
#include "input.h"
#include "io/npy.h"
#include "output.h"
#ifdef CLS_HAVE_MPI
#include "mpi_cmd.h"
#endif
#include "progress.h"
#include "stream_run.h"

enum { CMD_NORMALIZE = 1u, CMD_APPLY = 2u, CMD_DISCOUNT = 4u, CMD_CLEAN = 8u };

/* usage_normalize_head, the scalers' names (cli_methods), usage_normalize_tail */
static const char usage_normalize_head[] = "usage: clscale normalize --method ";
static const char usage_normalize_tail[] =
    " [--range LO,HI] [--clip]\n"
    "                         [--quantile-range QMIN,QMAX] [--no-centering] [--no-scaling]\n"
    "                         [--unit-variance] [cleaning options, as clean's]\n"
    "                         [--scope matrix|batch] [--stats-out S] [--devices SEL]\n"
    "                         [--verbose] [--quiet] IN.npy OUT.npy\n"
    "\n"
    "Fits a scaler to the columns of IN (2-D rows x cols or 3-D batch x rows x cols,\n"
    "float32 or float64) and writes the scaled array to OUT. With cleaning options\n"
    "(see `clscale clean --help`: --impute, --missing-value, --sigma-clip,\n"
    "--sigma-lower, --sigma-upper, --clip-center, --clip-spread, --clip-mode), IN is\n"
    "cleaned first and the scaler fitted on the cleaned data.\n"
    "\n"
    "  --method M       minmax: (x - min) / (max - min) into [LO, HI] (default 0,1)\n"
    "                   zscore: (x - mean) / std; decimal: x / 10^j\n"
    "                   robust: (x - median) / (q[QMAX] - q[QMIN]), exact quantiles\n"
    "                   (scikit-learn's RobustScaler); maxabs: x / max|x|\n"
    "  --range LO,HI    min-max output range, LO < HI\n"
    "  --clip           min-max: clamp the output into [LO, HI]\n"
    "  --quantile-range QMIN,QMAX  robust: percentiles, 0 <= QMIN <= QMAX <= 100\n"
    "                   (default 25,75)\n"
    "  --no-centering, --no-scaling, --unit-variance  robust: as scikit-learn's\n"
    "                   with_centering=False, with_scaling=False, unit_variance=True\n"
    "  --scope S        matrix: statistics per matrix of a 3-D IN (default);\n"
    "                   batch: over all its matrices\n"
    "  --stats-out S    save the fitted statistics for `clscale apply`\n"
    "  --devices SEL    OpenCL devices (see `clscale --help`)\n"
    "  --verbose        print a summary line to stderr\n"
    "  --mpi            under mpirun: each rank does its part (docs/guide/mpi.md)\n"
    "  --quiet          no progress bar (one is drawn on a terminal for long runs)\n"
    "\n"
    "NaN and +-Inf are missing values: ignored by the fit, written unchanged.\n";

static const char usage_clean_head[] =
    "usage: clscale clean [--impute mean|median|most_frequent|constant:V] [--missing-value V]\n"
    "                     [--sigma-clip K[,ITERS]] [--sigma-lower K] [--sigma-upper K]\n"
    "                     [--clip-center median|mean] [--clip-spread std|mad_std]\n"
    "                     [--clip-mode mask|clamp] [--detrend savgol:W,P|mean:W]\n"
    "                     [--flatten W,P[,N[,K]]] [--detrend-op subtract|divide|trend]\n"
    "                     [--detrend-edge E] [--bin-smooth K,mean|median|boundary]\n"
    "                     [--bin K,mean|median|sum|count]\n"
    "                     [--mask-out MASK.npy] [--scope matrix|batch] [--devices SEL]\n"
    "                     [--verbose] [--quiet] [--mpi] IN.npy OUT.npy\n"
    "\n"
    "Cleans the columns of IN (per matrix of a 3-D IN, or over all with --scope\n"
    "batch) on the devices: outliers clipped as astropy's sigma_clip does, then\n"
    "missing values (NaN, +-Inf, --missing-value V, clipped values) filled as\n"
    "scikit-learn's SimpleImputer does. Missing values not filled are written as NaN.\n"
    "Then, with --detrend (or --flatten) and --bin-smooth, light curves along the\n"
    "rows: a trend removed and bins smoothed (docs/guide/lightcurves.md). At least\n"
    "one of --impute, --missing-value, --sigma-clip, --sigma-lower, --sigma-upper,\n"
    "--detrend, --flatten, --bin-smooth or --bin is needed (without one there is\n"
    "nothing to clean).\n"
    "\n";
static const char usage_clean_tail[] =
    "  --bin K,S        instead of --bin-smooth: each bin of K rows reduced to one row,\n"
    "                   its mean, median, sum or count of valid values (lightkurve's\n"
    "                   bin); OUT has ceil(rows / K) rows (of the whole batch's rows with\n"
    "                   --scope batch: 1 x that x cols)\n"
    "  --mask-out MASK.npy  also write the cleaning's mask: a bool array of IN's\n"
    "                   shape, True where a value was missing (NaN, +-Inf, the\n"
    "                   --missing-value) or clipped (astropy's sigma_clip mask);\n"
    "                   written with OUT, both or neither; not with --bin or --mpi\n"
    "  --scope S        matrix (default) or batch\n"
    "  --devices SEL    OpenCL devices (see `clscale --help`)\n"
    "  --verbose        print the missing and clipped counts per column to stderr\n"
    "                   (under --mpi: a summary line per rank)\n"
    "  --mpi            under mpirun: each rank cleans its rows, all ranks deciding\n"
    "                   together (docs/guide/mpi.md); not with most_frequent\n"
    "  --quiet          no progress bar (one is drawn on a terminal for long runs)\n";

static const char usage_apply[] =
    "usage: clscale apply --stats S [--inverse] [--devices SEL] [--verbose] [--quiet] IN.npy OUT.npy\n"
    "\n"
    "Scales IN with statistics saved by `clscale normalize --stats-out S`, with the\n"
    "method, range, clip and scope recorded in S.\n"
    "\n"
    "  --stats S        the statistics file\n"
    "  --inverse        undo the scaling instead\n"
    "  --devices SEL    OpenCL devices (see `clscale --help`)\n"
    "  --verbose        print a summary line to stderr\n"
    "  --mpi            under mpirun: each rank does its part (docs/guide/mpi.md)\n"
    "  --quiet          no progress bar (one is drawn on a terminal for long runs)\n";

static const char usage_discount[] =
    "usage: clscale discount --factors F.npy [--devices SEL] [--verbose] [--quiet] IN.npy OUT.npy\n"
    "\n"
    "Multiplies IN by factors F that broadcast against it with numpy's rules\n"
    "(shape cols, rows x cols, batch x rows x cols, ...), in IN's dtype: factors\n"
    "of the other dtype are converted first, as numpy's astype does.\n"
    "\n"
    "  --factors F.npy  the factors, 1-D to 3-D\n"
    "  --devices SEL    OpenCL devices (see `clscale --help`)\n"
    "  --verbose        print a summary line to stderr\n"
    "  --mpi            under mpirun: each rank does its part (docs/guide/mpi.md)\n"
    "  --quiet          no progress bar (one is drawn on a terminal for long runs)\n";

typedef struct args {
    unsigned    cmd;
    const char *name;  /* argv[0] */
    const char *in, *out;
    const char *devices;
    int         verbose;
    int         quiet;   /* no progress bar */
    cls_pipeline p;    /* normalize */
    int         has_method, has_range, has_qrange;
    const char *stats_out;
    const char *mask_out; /* clean */
    const char *stats; /* apply */
    int         inverse;
    const char *factors; /* discount */
    int         mpi;     /* --mpi: tools/cli/mpi_run.c runs it */
    cli_clean   cl;      /* clean, normalize */
} args;

typedef struct option {
    const char *name;
    int         value;  /* takes an argument */
    unsigned    cmds;
} option;

static const option options[] = {
    {"method", 1, CMD_NORMALIZE},   {"range", 1, CMD_NORMALIZE},
    {"clip", 0, CMD_NORMALIZE},     {"scope", 1, CMD_NORMALIZE | CMD_CLEAN},
    {"impute", 1, CMD_NORMALIZE | CMD_CLEAN}, {"missing-value", 1, CMD_NORMALIZE | CMD_CLEAN},
    {"sigma-clip", 1, CMD_NORMALIZE | CMD_CLEAN}, {"sigma-lower", 1, CMD_NORMALIZE | CMD_CLEAN},
    {"sigma-upper", 1, CMD_NORMALIZE | CMD_CLEAN}, {"clip-center", 1, CMD_NORMALIZE | CMD_CLEAN},
    {"clip-spread", 1, CMD_NORMALIZE | CMD_CLEAN}, {"clip-mode", 1, CMD_NORMALIZE | CMD_CLEAN},
    /* light curves (under --mpi per matrix) */
    {"detrend", 1, CMD_NORMALIZE | CMD_CLEAN}, {"detrend-op", 1, CMD_NORMALIZE | CMD_CLEAN},
    {"detrend-edge", 1, CMD_NORMALIZE | CMD_CLEAN}, {"bin-smooth", 1, CMD_NORMALIZE | CMD_CLEAN},
    {"bin", 1, CMD_CLEAN}, {"flatten", 1, CMD_NORMALIZE | CMD_CLEAN},
    {"stats-out", 1, CMD_NORMALIZE}, {"stats", 1, CMD_APPLY}, {"mask-out", 1, CMD_CLEAN},
    {"quantile-range", 1, CMD_NORMALIZE}, {"no-centering", 0, CMD_NORMALIZE},
    {"no-scaling", 0, CMD_NORMALIZE}, {"unit-variance", 0, CMD_NORMALIZE},
    {"inverse", 0, CMD_APPLY},      {"factors", 1, CMD_DISCOUNT},
    {"devices", 1, CMD_NORMALIZE | CMD_APPLY | CMD_DISCOUNT | CMD_CLEAN},
    {"verbose", 0, CMD_NORMALIZE | CMD_APPLY | CMD_DISCOUNT | CMD_CLEAN},
    {"mpi", 0, CMD_NORMALIZE | CMD_APPLY | CMD_DISCOUNT | CMD_CLEAN},
    {"quiet", 0, CMD_NORMALIZE | CMD_APPLY | CMD_DISCOUNT | CMD_CLEAN},
};

static int usage_error(const args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const args *a, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cli_usage_error(a->name, "%s", msg);
}

/* "LO,HI": two finite numbers, LO < HI, whose width HI - LO is finite too
 * (-1e308,1e308 would scale every value to inf). */
static int parse_range(const char *s, double *lo, double *hi)
{
    char *end;
    errno = 0;
    *lo = strtod(s, &end);
    if (end == s || *end != ',' || errno) return -1;
    const char *t = end + 1;
    *hi = strtod(t, &end);
    if (end == t || *end != '\0' || errno) return -1;
    return isfinite(*lo) && isfinite(*hi) && *lo < *hi && isfinite(*hi - *lo) ? 0 : -1;
}

/* Sets one option of `a`; returns 0 or a usage error's exit status. */
static int set_option(args *a, const char *name, const char *v)
{
    if (cli_clean_is_option(name)) {
        char err[256];
        if (cli_clean_set(&a->cl, name, v, err, sizeof err)) return usage_error(a, "%s", err);
    } else if (!strcmp(name, "method")) {
        if (cli_scaler_parse(v, &a->p.scaler) != 0)
            return usage_error(a, "unknown method \"%s\" (%s)", v, cli_methods());
        a->has_method = 1;
    } else if (!strcmp(name, "range")) {
        if (parse_range(v, &a->p.lo, &a->p.hi) != 0)
            return usage_error(a, "--range \"%s\": expected LO,HI, two finite numbers with LO < HI and a "
                               "finite width HI - LO", v);
        a->has_range = 1;
    } else if (!strcmp(name, "quantile-range")) {
        double qa, qb;
        char *end;
        errno = 0;
        qa = strtod(v, &end);
        int ok = end != v && *end == ',' && !errno;
        const char *t = end + 1;
        if (ok) {
            qb = strtod(t, &end);
            ok = end != t && *end == '\0' && !errno && qa >= 0 && qa <= qb && qb <= 100;
        }
        if (!ok)
            return usage_error(a, "--quantile-range \"%s\": expected QMIN,QMAX, percentiles with "
                               "0 <= QMIN <= QMAX <= 100", v);
        a->p.qmin = qa;
        a->p.qmax = qb;
        a->has_qrange = 1;
    } else if (!strcmp(name, "no-centering")) a->p.no_centering = 1;
    else if (!strcmp(name, "no-scaling")) a->p.no_scaling = 1;
    else if (!strcmp(name, "unit-variance")) a->p.unit_variance = 1;
    else if (!strcmp(name, "clip")) a->p.clip = 1;
    else if (!strcmp(name, "scope")) {
        if (!strcmp(v, "matrix")) a->p.scope = CLS_SCOPE_MATRIX;
        else if (!strcmp(v, "batch")) a->p.scope = CLS_SCOPE_BATCH;
        else return usage_error(a, "unknown scope \"%s\" (matrix or batch)", v);
    } else if (!strcmp(name, "stats-out")) a->stats_out = v;
    else if (!strcmp(name, "mask-out")) a->mask_out = v;
    else if (!strcmp(name, "stats")) a->stats = v;
    else if (!strcmp(name, "inverse")) a->inverse = 1;
    else if (!strcmp(name, "factors")) a->factors = v;
    else if (!strcmp(name, "devices")) {
        if (cli_selector_check(a->name, v)) return EXIT_USAGE;
        a->devices = v;
    }
    else if (!strcmp(name, "verbose")) a->verbose = 1;
    else if (!strcmp(name, "mpi")) a->mpi = 1;
    else if (!strcmp(name, "quiet")) a->quiet = 1;
    return 0;
}

static int is_help(const char *s) { return !strcmp(s, "--help") || !strcmp(s, "-h"); }

/* Fills `a` from argv; returns -1 to go on, or an exit status. */
static int parse(args *a, int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (is_help(argv[i])) {
            fputs(usage, stdout);
            return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
        }
    const char *files[3];
    int nfiles = 0, only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (only_files || s[0] != '-' || s[1] == '\0') {
            if (nfiles < 3) files[nfiles] = s;
            nfiles++;
            continue;
        }
        if (!strcmp(s, "--")) {
            only_files = 1;
            continue;
        }
        if (s[1] != '-') return usage_error(a, "unknown option \"%s\"", s);
        const char *name = s + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const option *o = NULL;
        for (size_t k = 0; k < sizeof options / sizeof options[0]; k++)
            if ((options[k].cmds & a->cmd) && strlen(options[k].name) == len &&
                !strncmp(options[k].name, name, len))
                o = &options[k];
        if (!o) return usage_error(a, "unknown option \"%.*s\"", (int)(len + 2), s);
        const char *v = NULL;
        if (o->value) {
            if (eq) v = eq + 1;
            else if (i + 1 < argc) v = argv[++i];
            else return usage_error(a, "--%s needs a value", o->name);
        } else if (eq) return usage_error(a, "--%s takes no value", o->name);
        int rc = set_option(a, o->name, v);
        if (rc) return rc;
    }
    if (nfiles != 2) return usage_error(a, "expected IN.npy OUT.npy, got %d file%s", nfiles, nfiles == 1 ? "" : "s");
    a->in = files[0];
    a->out = files[1];
    if (a->cmd == CMD_NORMALIZE) {
        if (!a->has_method) return usage_error(a, "--method is required");
        /* which scalers take which options: the library's table */
        unsigned takes = cli_scaler_takes(a->p.scaler);
        if (!(takes & CLI_TAKES_RANGE) && (a->has_range || a->p.clip))
            return usage_error(a, "--range and --clip apply to --method %s only",
                               cli_scalers_taking(CLI_TAKES_RANGE));
        if (!(takes & CLI_TAKES_QUANTILES) &&
            (a->has_qrange || a->p.no_centering || a->p.no_scaling || a->p.unit_variance))
            return usage_error(a, "--quantile-range, --no-centering, --no-scaling and --unit-variance apply "
                               "to --method %s only", cli_scalers_taking(CLI_TAKES_QUANTILES));
        if (a->has_qrange && a->p.qmin == 0 && a->p.qmax == 0)
            return usage_error(a, "--quantile-range 0,0: QMIN < QMAX needed for a range of zero width at 0");
        if (!a->has_range && (takes & CLI_TAKES_RANGE)) {
            a->p.lo = 0;
            a->p.hi = 1;
        }
    }
    /* clean with no cleaning option would copy IN to OUT: surely not what
     * was meant */
    if (a->cmd == CMD_CLEAN && !a->cl.any)
        return usage_error(a, "nothing to clean: give --impute, --missing-value, --sigma-clip, --sigma-lower, "
                           "--sigma-upper, --detrend, --flatten, --bin-smooth or --bin");
    if (a->cmd & (CMD_NORMALIZE | CMD_CLEAN)) {
        char err[256];
        if (cli_clean_finish(&a->cl, err, sizeof err)) return usage_error(a, "%s", err);
        if (a->cl.any && a->mpi && a->cl.c.impute == CLS_IMPUTE_MOST_FREQUENT)
            return usage_error(a, "--impute most_frequent does not run under --mpi (it needs every value of a "
                               "column in one process); use mean, median or constant");
        if (a->cl.light_curve && a->mpi && a->p.scope == CLS_SCOPE_BATCH)
            return usage_error(a, "--detrend, --flatten, --bin-smooth and --bin under --mpi run per matrix (each "
                               "rank its whole matrices): not with --scope batch, whose rows are one series that "
                               "the ranks would cut");
        if (a->cl.any && (a->cmd == CMD_NORMALIZE || a->mpi)) a->p.clean = &a->cl.c;
        /* the mask has the input's shape: one byte per value read */
        if (a->mask_out && a->cl.reduce)
            return usage_error(a, "--mask-out with --bin: the bins change the rows, the mask has IN's shape "
                               "(use --bin-smooth, or clean first with --mask-out, then bin)");
        if (a->mask_out && a->mpi)
            return usage_error(a, "--mask-out does not run under --mpi; clean in one process to write the mask");
    }
    if (a->cmd == CMD_APPLY && !a->stats) return usage_error(a, "--stats S is required");
    if (a->cmd == CMD_DISCOUNT && !a->factors) return usage_error(a, "--factors F.npy is required");
    return -1;
}

static void shape_text(char *buf, size_t len, const cls_npy *f)
{
    if (f->ndim == 3) snprintf(buf, len, "%zux%zux%zu", f->shape[0], f->shape[1], f->shape[2]);
    else snprintf(buf, len, "%zux%zu", f->shape[0], f->shape[1]);
}

/* One line: shape, dtype, each device's slices, the time, the bytes read
 * and written and their rate, in units that fit them. */
static void summary(const args *a, cls_context *ctx, const cls_npy *in)
{
    cls_report r;
    if (cls_last_report(ctx, &r) != CLS_OK) return;
    char sh[96], devs[1024] = "";
    shape_text(sh, sizeof sh, in);
    size_t n = 0;
    for (size_t i = 0; i < r.ndevices; i++) {
        const cls_device_report *d = &r.devices[i];
        cls_device_info info;
        if (cls_device_get(ctx, d->device, &info) != CLS_OK) continue;
        char one[256];
        if (d->sat_out) snprintf(one, sizeof one, "%zu %s: sat out (%s)", info.index, info.name, d->sat_out);
        else snprintf(one, sizeof one, "%zu %s: %zu slice%s%s%s", info.index, info.name, d->slices,
                      d->slices == 1 ? "" : "s", d->failed ? ", failed: " : "", d->failed ? d->failed : "");
        size_t used = strlen(devs);
        snprintf(devs + used, sizeof devs - used, "%s%s", i ? "; " : "", one);
        n++;
    }
    char secs[32], size[32], rate[32];
    /* (a streamed call's phases are its passes over the input, each a
     * read of it) */
    fprintf(stderr, "clscale: %s %s %s: %zu device%s [%s], %s, %s read and written, %s, %d pass%s\n", a->name, sh,
            in->dtype == CLS_F64 ? "float64" : "float32", n, n == 1 ? "" : "s", devs,
            cli_seconds(secs, sizeof secs, r.wall), cli_si(size, sizeof size, (double)r.bytes, "B"),
            cli_si(rate, sizeof rate, r.wall > 0 ? (double)r.bytes / r.wall : 0.0, "B/s"), r.phases,
            r.phases == 1 ? "" : "es");
    const char *notes = cls_last_error(ctx);
    if (*notes) fprintf(stderr, "clscale: note: %s\n", notes);
}

/* clean --verbose: the totals, then per column (and group) the missing and
 * clipped counts. */
static void counts(size_t cols, size_t groups, const uint64_t *missing, const uint64_t *clipped)
{
    uint64_t tm = 0, tc = 0;
    for (size_t e = 0; e < cols * groups; e++) {
        tm += missing[e];
        tc += clipped[e];
    }
    fprintf(stderr, "clscale: clean: %llu missing, %llu clipped\n", (unsigned long long)tm, (unsigned long long)tc);
    for (size_t e = 0; e < cols * groups; e++)
        fprintf(stderr, "clscale: clean: group %zu column %zu: %llu missing, %llu clipped\n", e / cols, e % cols,
                (unsigned long long)missing[e], (unsigned long long)clipped[e]);
}

/* Opens an input; data arrays (need2d) must be 2-D or 3-D. 0 or exit status. */
static int open_input(const char *path, cls_npy *f, int need2d)
{
    return cli_input_open(path, f, need2d);
}

/* What the library's callbacks reach: the bar, and the mapped mask of
 * --mask-out with how far the input was when its pages were last let go. */
typedef struct run_progress {
    cli_progress   bar;
    const cls_npy *mask;
    uint64_t       released;
} run_progress;

/* The mask's pages are let go every MASK_RELEASE bytes of input: the
 * library writes them through the mapping, whose written pages would
 * otherwise stay in the tool's RSS (a byte per value: an eighth of a
 * float64 file) while OUT and IN stream through bounded buffers. */
#define MASK_RELEASE (16u << 20)

/* The library's progress callback: takes SIGBUS back should a driver have
 * installed a handler of its own during the call (guard.h), then draws.
 * A shared file mapping's dirty pages stay in the page cache when they
 * leave the process (MADV_DONTNEED), so a value written later in the same
 * page faults it back with what was written. */
static void on_progress(void *user, uint64_t done, uint64_t total)
{
    run_progress *r = user;
    cli_guard_reclaim();
    if (r->mask && (done < r->released || done - r->released >= MASK_RELEASE)) {
        (void)madvise(r->mask->map, r->mask->map_len, MADV_DONTNEED);
        r->released = done;
    }
    cli_progress_update(&r->bar, done, total);
}

static void on_pass(void *user, unsigned k, unsigned n, int more, uint64_t first, uint64_t bytes)
{
    cli_progress_pass(&((run_progress *)user)->bar, k, n, more, first, bytes);
}

static cls_array array_of(const cls_npy *f)
{
    cls_array x = {.data = f->data, .dtype = f->dtype, .batch = f->batch, .rows = f->rows, .cols = f->cols};
    return x;
}

static int run(args *a)
{
    cls_npy in = {0}, fac = {0}, out = {0};
    cls_stats *stats = NULL;
    cls_context *ctx = NULL;
    cls_array factors;
    cli_output o = {0}, so = {0}, mo = {0};
    cls_npy mask = {0};
    run_progress prog = {0}; /* draws nothing until cli_progress_start() */
    char err[1024];
    uint64_t *missing = NULL, *clipped = NULL; /* clean --verbose */
    /* before any work: where OUT and --stats-out go, and that they are
     * none of the inputs */
    const char *const inputs[] = {a->in, a->stats, a->factors};
    int rc = cli_output_prepare(&o, a->name, NULL, a->out, inputs, 3, NULL);
    if (!rc && a->stats_out) rc = cli_output_prepare(&so, a->name, "--stats-out", a->stats_out, inputs, 3, &o);
    if (!rc && a->mask_out) rc = cli_output_prepare(&mo, a->name, "--mask-out", a->mask_out, inputs, 3, &o);
    if (rc) goto done;
    if ((rc = open_input(a->in, &in, 1))) goto done;
    if (a->has_range && in.dtype == CLS_F32 && !(a->p.hi - a->p.lo <= FLT_MAX)) {
        rc = usage_error(a, "--range %g,%g: its width does not fit in float32, the dtype of %s", a->p.lo, a->p.hi,
                         a->in);
        goto done;
    }
    if (a->cmd == CMD_DISCOUNT) {
        if ((rc = open_input(a->factors, &fac, 0))) goto done;
        if ((rc = cli_factors_as(&fac, in.dtype, a->factors))) goto done;
        factors = array_of(&fac);
        a->p.factors = &factors;
    }
    if (a->cmd == CMD_APPLY) {
        if (cls_stats_load(a->stats, &stats) != CLS_OK) {
            rc = cli_error(EXIT_FAIL, "%s", cls_last_error(NULL));
            goto done;
        }
        if (a->inverse) {
            cls_stats_info si;
            if (cls_stats_describe(stats, &si) != CLS_OK) {
                rc = cli_error(EXIT_FAIL, "%s: cannot describe the statistics", a->stats);
                goto done;
            }
            a->p.scaler = si.scaler;
            a->p.scope = si.scope;
            a->p.lo = si.lo;
            a->p.hi = si.hi;
            a->p.clip = si.clip;
            a->p.inverse = 1;
        }
    }

    cli_guard_start(isatty(STDERR_FILENO) == 1);
    /* clean --bin: OUT has one row per bin of each statistics group (a
     * matrix, or the whole batch with --scope batch), cls_fit_transform (bins reduced)'s shape */
    int reduce = a->cmd == CMD_CLEAN && a->cl.reduce;
    size_t oshape[3] = {in.shape[0], in.shape[1], in.ndim == 3 ? in.shape[2] : 0};
    if (reduce) {
        size_t rows = in.ndim == 3 ? in.shape[1] : in.shape[0], k = a->cl.c.bin_rows;
        if (in.ndim == 3 && a->p.scope == CLS_SCOPE_BATCH) {
            oshape[0] = 1;
            rows *= in.shape[0];
        }
        oshape[in.ndim == 3 ? 1 : 0] = rows / k + (rows % k != 0);
    }
    /* before the devices start: an OUT that cannot be written fails fast */
    if ((rc = cli_output_begin(&o, in.dtype, in.ndim, reduce ? oshape : in.shape, &out))) goto done;
    if (a->mask_out) {
        if ((rc = cli_output_begin(&mo, CLS_NPY_BOOL, in.ndim, in.shape, &mask))) goto done;
        a->cl.c.mask_out = mask.data;
        prog.mask = &mask;
    }

    cls_config cfg = {0};
    cfg.devices = a->devices;
    cfg.progress = on_progress;
    cfg.progress_user = &prog;
    cfg.pass = on_pass;
    cls_status st = cls_context_create(&cfg, &ctx);
    /* the drivers are loaded now, and LLVM inside them took SIGBUS over */
    cli_guard_reclaim();
    if (st != CLS_OK) {
        rc = cli_context_failed(a->name, a->devices, st, ctx); /* destroys ctx */
        ctx = NULL;
        goto done;
    }

    cls_array x = array_of(&in), y = array_of(&out);
    size_t ngroups = a->p.scope == CLS_SCOPE_BATCH ? 1 : in.batch, ncounts = ngroups * in.cols;
    if (a->cmd == CMD_CLEAN && a->verbose) {
        missing = calloc(ncounts ? ncounts : 1, sizeof *missing);
        clipped = calloc(ncounts ? ncounts : 1, sizeof *clipped);
        if (!missing || !clipped) {
            rc = cli_error(EXIT_FAIL, "out of memory");
            goto done;
        }
        a->cl.c.missing_out = missing;
        a->cl.c.clipped_out = clipped;
    }
    cli_progress_start(&prog.bar, (uint64_t)in.data_bytes);
    if (a->quiet) prog.bar.enabled = 0;
    const cls_pipeline *pp = a->cmd == CMD_APPLY && !a->inverse ? NULL : &a->p;
    cls_stats **fit = a->cmd == CMD_NORMALIZE && a->stats_out ? &stats : NULL;
    err[0] = '\0';
    /* streaming (stream_run.c), else the mapped arrays: only where the
     * library refuses a pipeline before any pass (CLS_E_UNSUPPORTED: a
     * cleaning stage it cannot stream, docs/guide/files.md). clean
     * --verbose streams too: the streamed cleaning fills the same per-column
     * counts as the call in memory. */
    cls_pipeline cp = a->p;
    if (a->cmd == CMD_CLEAN) {
        cp.scaler = CLS_NONE;
        cp.clean = &a->cl.c;
        pp = &cp;
    }
    int streamed = 0;
    if (cli_stream_wanted(&in)) {
        int fits = a->cmd == CMD_NORMALIZE || a->cmd == CMD_CLEAN;
        st = cli_stream_run(ctx, pp, fits ? NULL : stats, fit, a->in, &in, &out, err, sizeof err);
        streamed = !(st == CLS_E_UNSUPPORTED && pp && pp->clean);
        if (!streamed) err[0] = '\0';
    }
    if (streamed) {
        /* done */
    } else if (reduce) {
        st = cls_fit_transform(ctx, &(cls_pipeline){.scope = a->p.scope, .clean = &a->cl.c}, &x, &y, NULL);
    } else if (a->cmd == CMD_CLEAN) {
        st = cls_fit_transform(ctx, &(cls_pipeline){.scope = a->p.scope, .clean = &a->cl.c}, &x, &y, NULL);
    } else if (a->cmd == CMD_NORMALIZE) {
        st = cls_fit_transform(ctx, &a->p, &x, &y, fit);
    } else {
        st = cls_transform(ctx, pp, stats, &x, &y);
    }
    cli_progress_end(&prog.bar);
    if (st != CLS_OK) {
        rc = err[0] ? cli_error(EXIT_FAIL, "%s", err)
                    : cli_error(EXIT_FAIL, "%s: %s", cls_status_str(st), cls_last_error(ctx));
        goto done;
    }
    if (a->stats_out && (rc = cli_output_save_stats(&so, stats))) goto done;
    if ((rc = cli_output_commit(&o, &out, a->stats_out ? &so : NULL, &mo, a->mask_out ? &mask : NULL))) goto done;
    if (a->verbose && a->cmd != CMD_CLEAN) summary(a, ctx, &in);
    if (a->verbose && a->cmd == CMD_CLEAN) counts(in.cols, ngroups, missing, clipped);
    rc = EXIT_OK;

done:
    cli_output_discard(&o, &out);
    cli_output_discard(&so, NULL);
    cli_output_discard(&mo, &mask);
    cls_context_destroy(ctx);
    cli_guard_stop();
    cls_stats_destroy(stats);
    cli_input_close(&fac);
    cli_input_close(&in);
    free(missing);
    free(clipped);
    return rc;
}

/* --mpi: every rank of mpirun runs its part (tools/cli/mpi_run.c). */
static int run_mpi(const args *a)
{
#ifdef CLS_HAVE_MPI
    cli_mpi_job j = {0};
    /* clean --mpi: a pipeline of the cleaning alone (scaler none) */
    j.cmd = a->cmd == CMD_NORMALIZE || a->cmd == CMD_CLEAN ? CLI_MPI_NORMALIZE
            : a->cmd == CMD_APPLY                         ? CLI_MPI_APPLY
                                                          : CLI_MPI_DISCOUNT;
    j.name = a->name;
    j.in = a->in;
    j.out = a->out;
    j.devices = a->devices;
    j.verbose = a->verbose;
    j.p = a->p;
    j.stats_out = a->stats_out;
    j.stats = a->stats;
    j.inverse = a->inverse;
    j.factors = a->factors;
    j.light_curve = a->cl.light_curve;
    j.reduce = a->cmd == CMD_CLEAN && a->cl.reduce;
    return cli_mpi_run(&j);
#else
    return usage_error(a, "--mpi: this clscale was built without MPI (meson setup -Dmpi=enabled)");
#endif
}

static int command(unsigned cmd, const char *usage, int argc, char **argv)
{
    args a;
    memset(&a, 0, sizeof a);
    a.cmd = cmd;
    a.name = argv[0];
    int rc = parse(&a, argc, argv, usage);
    return rc >= 0 ? rc : a.mpi ? run_mpi(&a) : run(&a);
}

int cmd_normalize(int argc, char **argv)
{
    static char usage[4096];
    snprintf(usage, sizeof usage, "%s%s%s", usage_normalize_head, cli_methods(), usage_normalize_tail);
    return command(CMD_NORMALIZE, usage, argc, argv);
}
int cmd_clean(int argc, char **argv)
{
    static char usage[4096];
    snprintf(usage, sizeof usage, "%s%s%s", usage_clean_head, cli_clean_usage, usage_clean_tail);
    return command(CMD_CLEAN, usage, argc, argv);
}
int cmd_apply(int argc, char **argv) { return command(CMD_APPLY, usage_apply, argc, argv); }
int cmd_discount(int argc, char **argv) { return command(CMD_DISCOUNT, usage_discount, argc, argv); }
