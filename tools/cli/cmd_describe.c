/* clscale describe IN.npy [--json] [--sigma K] [--scope matrix|batch]
 * [--devices SEL]: a summary of every column (cls_describe) as an aligned
 * table on a terminal or as JSON (jansson), and the duplicate rows. The
 * whole output is made before any of it is printed: a failure prints
 * nothing on stdout. The file is streamed (cls_describe of a .npy path),
 * or, with CLSCALE_STREAM=0, described through its mapping. */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cli.h's json_string (a printer, cli/common.c) and jansson's (a
 * constructor) share a name, and the tool's own symbol wins at link time:
 * this file builds strings with json_stringn, never json_string. */
#define json_string cli_json_string_unused
#include "cli.h"
#include "input.h"
#include "stream_run.h"
#undef json_string

#include <jansson.h>

static const char usage[] =
    "usage: clscale describe [--json] [--sigma K] [--scope matrix|batch] [--devices SEL] [--quiet]\n"
    "                        IN.npy\n"
    "\n"
    "Per column of IN (2-D rows x cols, or 3-D batch x rows x cols): count, missing\n"
    "(NaN, +-Inf), min, max, mean, std (ddof 0), 25%, 50% (median), 75% (numpy's\n"
    "nanpercentile, exact) and outliers (|x - mean| > K * std); per statistics\n"
    "group the duplicate rows, counted as pandas' DataFrame.duplicated().sum().\n"
    "\n"
    "  --json           JSON on stdout instead of the table (NaN is null)\n"
    "  --sigma K        the outliers' K, a number above 0 (default 3)\n"
    "  --scope S        matrix: one summary per matrix of a 3-D IN (default);\n"
    "                   batch: all batch x rows rows together\n"
    "  --devices SEL    the OpenCL devices (see clscale --help)\n"
    "  --quiet          no progress bar (describe draws none; taken as the other\n"
    "                   commands take it, so that one set of options fits all)\n";

static json_t *jstr(const char *s) { return json_stringn(s, strlen(s)); }
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static char *as_json(const char *path, const cls_npy *f, const cls_summary *s)
{
    json_t *root = json_object(), *groups = json_array(), *shape = json_array();
    uint64_t dup = 0;
    for (size_t i = 0; i < f->ndim; i++) json_array_append_new(shape, json_integer((json_int_t)f->shape[i]));
    for (size_t g = 0; g < s->groups; g++) {
        json_t *grp = json_object(), *cols = json_array();
        dup += s->duplicate_rows[g];
        json_object_set_new(grp, "group", json_integer((json_int_t)g));
        json_object_set_new(grp, "rows", json_integer((json_int_t)s->rows));
        json_object_set_new(grp, "duplicate_rows", json_integer((json_int_t)s->duplicate_rows[g]));
        for (size_t c = 0; c < s->cols; c++) {
            const cls_column_summary *k = &s->columns[g * s->cols + c];
            json_t *o = json_object();
            json_object_set_new(o, "column", json_integer((json_int_t)c));
            json_object_set_new(o, "count", json_integer((json_int_t)k->count));
            json_object_set_new(o, "missing", json_integer((json_int_t)k->missing));
            json_object_set_new(o, "min", num(k->min));
            json_object_set_new(o, "max", num(k->max));
            json_object_set_new(o, "mean", num(k->mean));
            json_object_set_new(o, "std", num(k->std));
            json_object_set_new(o, "25%", num(k->q25));
            json_object_set_new(o, "50%", num(k->median));
            json_object_set_new(o, "75%", num(k->q75));
            json_object_set_new(o, "outliers", json_integer((json_int_t)k->outliers));
            json_array_append_new(cols, o);
        }
        json_object_set_new(grp, "columns", cols);
        json_array_append_new(groups, grp);
    }
    json_object_set_new(root, "file", jstr(path));
    json_object_set_new(root, "dtype", jstr(s->dtype == CLS_F64 ? "float64" : "float32"));
    json_object_set_new(root, "shape", shape);
    json_object_set_new(root, "scope", jstr(s->scope == CLS_SCOPE_BATCH ? "batch" : "matrix"));
    json_object_set_new(root, "sigma", json_real(s->sigma));
    json_object_set_new(root, "duplicate_rows", json_integer((json_int_t)dup));
    json_object_set_new(root, "groups", groups);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    return text;
}

/* Appends printf output to a growing buffer; returns -1 when out of memory. */
typedef struct buf {
    char  *p;
    size_t len, cap;
} buf;

static int put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return -1;
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return 0;
        }
        size_t cap = (b->cap ? b->cap * 2 : 1 << 16) + (size_t)n;
        char *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
}

static int fmt_num(buf *b, double v) { return isfinite(v) || isinf(v) ? put(b, " %13.6g", v) : put(b, " %13s", "nan"); }

static char *as_table(const char *path, const cls_npy *f, const cls_summary *s)
{
    buf b = {NULL, 0, 0};
    int bad = put(&b, "%s: %s, shape (", path, s->dtype == CLS_F64 ? "float64" : "float32");
    for (size_t i = 0; i < f->ndim; i++) bad |= put(&b, "%s%zu", i ? ", " : "", f->shape[i]);
    uint64_t dup = 0;
    for (size_t g = 0; g < s->groups; g++) dup += s->duplicate_rows[g];
    bad |= put(&b, "), scope %s, outliers at %g sigma, %llu duplicate rows\n",
               s->scope == CLS_SCOPE_BATCH ? "batch" : "matrix", s->sigma, (unsigned long long)dup);
    for (size_t g = 0; g < s->groups && !bad; g++) {
        if (s->groups > 1)
            bad |= put(&b, "\nmatrix %zu: %llu rows, %llu duplicate rows\n", g, (unsigned long long)s->rows,
                       (unsigned long long)s->duplicate_rows[g]);
        bad |= put(&b, "%8s %12s %12s %13s %13s %13s %13s %13s %13s %13s %12s\n", "column", "count", "missing", "min",
                   "max", "mean", "std", "25%", "50%", "75%", "outliers");
        for (size_t c = 0; c < s->cols && !bad; c++) {
            const cls_column_summary *k = &s->columns[g * s->cols + c];
            bad |= put(&b, "%8zu %12llu %12llu", c, (unsigned long long)k->count, (unsigned long long)k->missing);
            const double v[7] = {k->min, k->max, k->mean, k->std, k->q25, k->median, k->q75};
            for (int i = 0; i < 7; i++) bad |= fmt_num(&b, v[i]);
            bad |= put(&b, " %12llu\n", (unsigned long long)k->outliers);
        }
    }
    if (bad) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

int cmd_describe(int argc, char **argv)
{
    int json = 0;
    double sigma = 3;
    cls_scope scope = CLS_SCOPE_MATRIX;
    const char *sel = NULL, *in = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return EXIT_OK;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--quiet")) {
            /* nothing to hide: describe draws no progress bar */
        } else if (!strcmp(a, "--sigma") || !strcmp(a, "--scope") || !strcmp(a, "--devices")) {
            if (i + 1 >= argc) return cli_usage_error("describe", "%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--sigma")) {
                char *end;
                errno = 0;
                sigma = strtod(v, &end);
                if (end == v || *end || errno || !isfinite(sigma) || sigma <= 0)
                    return cli_usage_error("describe", "--sigma \"%s\": K must be a finite number above 0", v);
            } else if (!strcmp(a, "--scope")) {
                if (!strcmp(v, "matrix")) scope = CLS_SCOPE_MATRIX;
                else if (!strcmp(v, "batch")) scope = CLS_SCOPE_BATCH;
                else return cli_usage_error("describe", "--scope \"%s\": matrix or batch", v);
            } else {
                sel = v;
            }
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("describe", "unknown option \"%s\"", a);
        } else if (!in) {
            in = a;
        } else {
            return cli_usage_error("describe", "one input file, not \"%s\" too", a);
        }
    }
    if (!in) return cli_usage_error("describe", "no input file (usage: clscale describe [OPTIONS] IN.npy)");
    int rc = cli_selector_check("describe", sel);
    if (rc) return rc;
    cls_npy f;
    memset(&f, 0, sizeof f);
    if (cli_input_open(in, &f, 1)) return EXIT_FAIL;
    cls_context *ctx = cli_context("describe", sel, 0, &rc);
    if (!ctx) {
        cli_input_close(&f);
        return rc;
    }
    cls_array x = {.data = f.data, .dtype = f.dtype, .batch = f.batch, .rows = f.rows, .cols = f.cols};
    /* the file read through the library's bounded pool, not the mapping
     * (whose pages would count in the RSS, growing with the file) */
    if (cli_stream_wanted(&f)) x = (cls_array){.where = CLS_IN_NPY, .path = in, .dtype = f.dtype, .batch = f.batch,
                                               .rows = f.rows, .cols = f.cols};
    size_t groups = scope == CLS_SCOPE_BATCH ? 1 : x.batch;
    cls_summary sum = {.columns = calloc(groups * x.cols, sizeof *sum.columns),
                       .duplicate_rows = calloc(groups, sizeof *sum.duplicate_rows)};
    const cls_summary *s = &sum;
    cls_status st = !sum.columns || !sum.duplicate_rows ? CLS_E_NOMEM : cls_describe(ctx, &x, scope, sigma, &sum);
    if (st == CLS_E_NOMEM && (!sum.columns || !sum.duplicate_rows)) {
        rc = cli_error(EXIT_FAIL, "describe: out of memory");
    } else if (st != CLS_OK) {
        rc = cli_error(EXIT_FAIL, "describe: %s: %s", in, cls_last_error(ctx));
    } else {
        char *text = json ? as_json(in, &f, s) : as_table(in, &f, s);
        if (!text) rc = cli_error(EXIT_FAIL, "describe: out of memory");
        else {
            fputs(text, stdout);
            if (json) fputc('\n', stdout);
            free(text);
            rc = EXIT_OK;
        }
    }
    free(sum.columns);
    free(sum.duplicate_rows);
    cls_context_destroy(ctx);
    cli_input_close(&f);
    return rc;
}
