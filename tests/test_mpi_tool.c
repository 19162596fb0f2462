/* clscale normalize | apply | discount --mpi: runs `mpirun -n N clscale ...`
 * (N = 1 to 4, one PoCL basic device per rank) and compares OUT, and the
 * statistics file, with what one process writes: byte for byte where the
 * arithmetic is the same (extremes, discounts, apply), within 1e-12 (float64)
 * or 1e-5 (float32) where the order of sums differs; uneven splits, ranks
 * with no rows; one rank failing (no device, a device failing mid-run) makes
 * every rank exit 1, names the rank, and leaves no OUT and no temporary; one
 * rank killed (SIGKILL) mid-run ends the job the same way through mpirun. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "io/npy.h"

extern char **environ;

static char dir[4096];

static void path_of(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

static void write_npy(const char *name, cls_dtype t, size_t ndim, const size_t *shape, const void *data)
{
    char p[4200], err[512];
    path_of(p, sizeof p, name);
    cls_npy f;
    if (cls_npy_create(p, t, ndim, shape, &f, err, sizeof err) != CLS_OK) fail_msg("%s", err);
    memcpy(f.data, data, f.data_bytes);
    if (cls_npy_close(&f, 1, err, sizeof err) != CLS_OK) fail_msg("%s", err);
}

/* Seeded values with NaN and Inf among them, never 0 on purpose. */
static void make_input(const char *name, cls_dtype t, size_t ndim, const size_t *shape, uint64_t seed)
{
    size_t n = 1;
    for (size_t i = 0; i < ndim; i++) n *= shape[i];
    size_t C = shape[ndim - 1];
    double *v = malloc(n * sizeof *v);
    float *f = malloc(n * sizeof *f);
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < n; i++) {
        v[i] = (i % C) % 3 == 0 ? 5 + 3 * rng_normal(&g) : (i % C) % 3 == 1 ? rng_range(&g, -40, -2) : 7.25;
        if (i % 17 == 4) v[i] = NAN;
        if (i % 29 == 11) v[i] = -INFINITY;
        f[i] = (float)v[i];
    }
    write_npy(name, t, ndim, shape, t == CLS_F64 ? (void *)v : (void *)f);
    free(v);
    free(f);
}

static void spawn(tool_result *r, const char *const *argv)
{
    char outp[4200], errp[4200];
    path_of(outp, sizeof outp, ".stdout");
    path_of(errp, sizeof errp, ".stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) fail_msg("cannot start %s: %s", argv[0], strerror(e));
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
    FILE *f = fopen(errp, "r");
    size_t n = f ? fread(r->err, 1, sizeof r->err - 1, f) : 0;
    r->err[n] = '\0';
    if (f) fclose(f);
}

/* mpirun -n N clscale ARGS; with `bad` >= 0, rank `bad` runs under
 * `env SETTINGS...` (an MPMD launch: the harness, not clscale, picks it). */
/* Where each rank writes its exit status when the ranks run to their own
 * end (run_mpi's `statuses`), or NULL: mpirun's default, which kills the
 * other ranks once one exits with an error, so that a rank's exit (and the
 * fault layer's counts written at it) may never come. */
static const char *rank_statuses;

static void run_mpi(tool_result *r, int n, int bad, const char *const *settings, const char *const *args)
{
    const char *argv[128];
    size_t k = 0;
    const char *tool = getenv("CLS_TOOL");
    /* --timeout: ranks left waiting in a collective fail the test, not hang it */
    static const char *const head[] = {"mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                                       "--timeout", "120"};
    static char counts[3][16], script[4400];
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) argv[k++] = head[i];
    size_t first = k;
    if (rank_statuses) {
        argv[k++] = "--mca";
        argv[k++] = "orte_abort_on_non_zero_status";
        argv[k++] = "0";
        snprintf(script, sizeof script, "\"$0\" \"$@\"; s=$?; echo $s > %s/$OMPI_COMM_WORLD_RANK; exit $s",
                 rank_statuses);
        first = k;
    }
    int parts[3] = {bad < 0 ? n : bad, bad < 0 ? 0 : 1, bad < 0 ? 0 : n - bad - 1};
    for (int p = 0; p < 3; p++) {
        if (!parts[p]) continue;
        if (k > first) argv[k++] = ":";
        snprintf(counts[p], sizeof counts[p], "%d", parts[p]);
        argv[k++] = "-n";
        argv[k++] = counts[p];
        if (p == 1) {
            argv[k++] = "env";
            for (size_t i = 0; settings[i]; i++) argv[k++] = settings[i];
        }
        if (rank_statuses) {
            argv[k++] = "sh";
            argv[k++] = "-c";
            argv[k++] = script;
        }
        argv[k++] = tool;
        for (size_t i = 0; args[i]; i++) argv[k++] = args[i];
    }
    argv[k] = NULL;
    spawn(r, argv);
}

static void run_single(tool_result *r, const char *const *args)
{
    const char *argv[64];
    size_t k = 0;
    argv[k++] = getenv("CLS_TOOL");
    for (size_t i = 0; args[i]; i++) argv[k++] = args[i];
    argv[k] = NULL;
    spawn(r, argv);
}

static void expect_ok(const tool_result *r, const char *what)
{
    if (r->status != 0) fail_msg("%s: exit status %d\n%s", what, r->status, r->err);
}

static void *slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    if (!f) fail_msg("%s: %s", p, strerror(errno));
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *b = malloc(*len ? *len : 1);
    if (fread(b, 1, *len, f) != *len) fail_msg("%s: short read", p);
    fclose(f);
    return b;
}

/* tol 0: the files are equal byte for byte; else the arrays to tol relative. */
static void compare_npy(const char *got, const char *want, double tol)
{
    size_t la, lb;
    char *a = slurp(got, &la), *b = slurp(want, &lb);
    if (tol == 0) {
        if (la != lb || memcmp(a, b, la)) fail_msg("%s differs from %s (%zu and %zu bytes)", got, want, la, lb);
    } else {
        cls_npy x, y;
        char err[512];
        assert_int_equal(cls_npy_open(got, &x, err, sizeof err), CLS_OK);
        assert_int_equal(cls_npy_open(want, &y, err, sizeof err), CLS_OK);
        assert_true(x.data_bytes == y.data_bytes && x.dtype == y.dtype);
        size_t n = x.data_bytes / (x.dtype == CLS_F64 ? 8 : 4);
        for (size_t i = 0; i < n; i++) {
            double u = x.dtype == CLS_F64 ? ((double *)x.data)[i] : ((float *)x.data)[i];
            double v = y.dtype == CLS_F64 ? ((double *)y.data)[i] : ((float *)y.data)[i];
            assert_close(u, v, tol);
        }
        cls_npy_close(&x, 0, NULL, 0);
        cls_npy_close(&y, 0, NULL, 0);
    }
    free(a);
    free(b);
}

static void compare_stats(const char *got, const char *want, double tol)
{
    cls_stats *a = NULL, *b = NULL;
    if (cls_stats_load(got, &a) != CLS_OK) fail_msg("%s", cls_last_error(NULL));
    if (cls_stats_load(want, &b) != CLS_OK) fail_msg("%s", cls_last_error(NULL));
    cls_stats_info x, y;
    cls_stats_describe(a, &x);
    cls_stats_describe(b, &y);
    assert_int_equal(x.scaler, y.scaler);
    assert_int_equal(x.scope, y.scope);
    assert_true(x.groups == y.groups && x.cols == y.cols && x.rows == y.rows);
    for (size_t g = 0; g < x.groups; g++)
        for (size_t c = 0; c < x.cols; c++) {
            cls_column_stats u, v;
            test_column(a, g, c, &u);
            test_column(b, g, c, &v);
            assert_true(u.count == v.count && u.missing == v.missing);
            assert_close(u.min, v.min, 0);
            assert_close(u.max, v.max, 0);
            assert_close(u.absmax, v.absmax, 0);
            assert_close(u.mean, v.mean, tol);
            assert_close(u.m2, v.m2, tol);
            /* exact quantiles (robust; NaN in both otherwise) */
            assert_close(u.median, v.median, 0);
            assert_close(u.q_lo, v.q_lo, 0);
            assert_close(u.q_hi, v.q_hi, 0);
        }
    cls_stats_destroy(a);
    cls_stats_destroy(b);
}

/* The files in the scratch folder whose names contain `part`. */
static int files_with(const char *part)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, part)) n++;
    if (d) closedir(d);
    return n;
}

/* `cmd OPTS IN OUT` on one process and on each rank count; STATS: with
 * --stats-out. */
static void same_as_one_process(const char *const *opts, const char *in, const int *ranks, double tol, int stats)
{
    char inp[4200], ref[4200], sref[4200];
    path_of(inp, sizeof inp, in);
    path_of(ref, sizeof ref, "ref.npy");
    path_of(sref, sizeof sref, "ref.stats");
    const char *args[32];
    size_t k = 0;
    for (; opts[k]; k++) args[k] = opts[k];
    size_t base = k;
    if (stats) {
        args[k++] = "--stats-out";
        args[k++] = sref;
    }
    args[k++] = inp;
    args[k++] = ref;
    args[k] = NULL;
    tool_result r;
    run_single(&r, args);
    expect_ok(&r, "one process");
    for (const int *n = ranks; *n; n++) {
        char out[4200], sout[4200];
        snprintf(out, sizeof out, "%s/out-%d.npy", dir, *n);
        snprintf(sout, sizeof sout, "%s/out-%d.stats", dir, *n);
        k = base;
        args[k++] = "--mpi";
        if (stats) {
            args[k++] = "--stats-out";
            args[k++] = sout;
        }
        args[k++] = inp;
        args[k++] = out;
        args[k] = NULL;
        run_mpi(&r, *n, -1, NULL, args);
        expect_ok(&r, opts[0]);
        compare_npy(out, ref, tol);
        if (stats) compare_stats(sout, sref, tol ? tol : 1e-12);
    }
    assert_int_equal(files_with(".tmp"), 0);
}

static const int one_to_four[] = {1, 2, 3, 4, 0};

static void normalize_batch_minmax_same_bytes(void **state)
{
    (void)state;
    size_t shape[3] = {3, 7, 5};
    make_input("a.npy", CLS_F64, 3, shape, 1);
    const char *opts[] = {"normalize", "--method", "minmax", "--scope", "batch", "--range", "-1,2", NULL};
    same_as_one_process(opts, "a.npy", one_to_four, 0, 1);
}

static void normalize_batch_zscore_close(void **state)
{
    (void)state;
    size_t shape[3] = {2, 9, 4};
    make_input("b.npy", CLS_F64, 3, shape, 2);
    const char *opts[] = {"normalize", "--method", "zscore", "--scope", "batch", NULL};
    static const int ranks[] = {3, 4, 0};
    same_as_one_process(opts, "b.npy", ranks, 1e-12, 1);
}

/* 3-D, scope matrix: whole matrices per rank (5 over 2 and 4 ranks), the
 * statistics gathered on rank 0 in file order. */
static void normalize_matrix_scope(void **state)
{
    (void)state;
    size_t shape[3] = {5, 6, 4};
    make_input("m.npy", CLS_F64, 3, shape, 3);
    const char *opts[] = {"normalize", "--method", "zscore", NULL};
    static const int ranks[] = {2, 4, 0};
    same_as_one_process(opts, "m.npy", ranks, 1e-12, 1);
}

/* 2-D, 3 rows over 4 ranks: one rank has none; the statistics say scope
 * matrix, as one process writes them. float32 made in one pass (one
 * process) or two (ranks): the project's float32 tolerance. */
static void normalize_2d_with_an_empty_rank(void **state)
{
    (void)state;
    size_t shape[2] = {3, 6};
    make_input("t.npy", CLS_F32, 2, shape, 4);
    const char *opts[] = {"normalize", "--method", "zscore", NULL};
    static const int ranks[] = {4, 0};
    same_as_one_process(opts, "t.npy", ranks, 1e-5, 1);
    const char *mm[] = {"normalize", "--method", "minmax", NULL};
    same_as_one_process(mm, "t.npy", ranks, 1e-5, 0);
}

/* Robust scaling: exact quantiles across ranks (their counting passes
 * summed by MPI_Allreduce), so outputs and statistics equal one process's
 * byte for byte: rows split (150 rows: one process takes radix passes as
 * the ranks do; 3 rows over 4 ranks, float32: one process sorts them in one
 * pass, and a rank is empty), and whole matrices per rank. */
static void normalize_robust_same_bytes(void **state)
{
    (void)state;
    size_t shape[3] = {3, 50, 5}, t2[2] = {3, 6}, m3[3] = {5, 6, 4};
    make_input("r.npy", CLS_F64, 3, shape, 11);
    make_input("rt.npy", CLS_F32, 2, t2, 12);
    make_input("rm.npy", CLS_F64, 3, m3, 13);
    const char *batch[] = {"normalize", "--method", "robust", "--scope", "batch", "--quantile-range", "10,90", NULL};
    const char *plain[] = {"normalize", "--method", "robust", NULL};
    static const int two_four[] = {2, 4, 0}, four[] = {4, 0}, three[] = {3, 0};
    same_as_one_process(batch, "r.npy", two_four, 0, 1);
    same_as_one_process(plain, "rt.npy", four, 0, 1);
    same_as_one_process(plain, "rm.npy", three, 0, 1);
}

/* A cleaning stage across ranks: clean --mpi (sentinel, median clip with
 * mad_std, median fill: every decision exact, so the same bytes) and
 * normalize --mpi with cleaning options (mean clip, mean fill, z-score
 * fused: within 1e-12), 40 rows split over 2 and 3 ranks. The sentinel
 * 7.25 is every value of columns 2 and 5 (all missing); NaN and -Inf among
 * the others. */
static void clean_and_normalize_clean_across_ranks(void **state)
{
    (void)state;
    size_t shape[3] = {2, 20, 6};
    make_input("c.npy", CLS_F64, 3, shape, 21);
    const char *clean[] = {"clean", "--scope", "batch", "--missing-value", "7.25", "--sigma-clip", "2.5",
                           "--clip-spread", "mad_std", "--impute", "median", NULL};
    const char *norm[] = {"normalize", "--method", "zscore", "--scope", "batch", "--sigma-clip", "2",
                          "--clip-center", "mean", "--impute", "mean", NULL};
    static const int two_three[] = {2, 3, 0};
    same_as_one_process(clean, "c.npy", two_three, 0, 0);
    same_as_one_process(norm, "c.npy", two_three, 1e-12, 1);
    /* each rank's part in several chunks of the stream (4 KiB): the
     * cleaning's passes over them, the moments merged over chunks and ranks */
    size_t tall[3] = {2, 200, 6};
    make_input("ct.npy", CLS_F64, 3, tall, 22);
    setenv("CLSCALE_STREAM_BUFFER", "4k", 1);
    same_as_one_process(clean, "ct.npy", two_three, 0, 0);
    same_as_one_process(norm, "ct.npy", two_three, 1e-12, 1);
    unsetenv("CLSCALE_STREAM_BUFFER");
    /* most_frequent: a usage error before MPI starts */
    const char *mf[] = {"clean", "--impute", "most_frequent", "--mpi", "x.npy", "y.npy", NULL};
    tool_result r;
    run_single(&r, mf);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "most_frequent"));
}

/* Light curves under --mpi: each rank its whole matrices (7 over 1 to 4
 * ranks; a 2-D IN's one matrix on rank 0, the others idle), a trend and
 * bins per matrix with no exchange: the same bytes as one process, the
 * bins reduced too (OUT one row per bin of 4 of the 37 rows), a scaler
 * after the trend with its statistics. --scope batch (the batch's rows one
 * series) is a usage error naming why. */
static void light_curves_per_matrix_same_bytes(void **state)
{
    (void)state;
    size_t shape[3] = {7, 37, 3}, flat[2] = {41, 2};
    make_input("lc.npy", CLS_F64, 3, shape, 31);
    make_input("lc2.npy", CLS_F32, 2, flat, 32);
    const char *smooth[] = {"clean", "--detrend", "savgol:9,2", "--detrend-edge", "mirror", "--bin-smooth", "4,median",
                            NULL};
    const char *reduce[] = {"clean", "--detrend", "mean:7", "--detrend-edge", "wrap", "--bin", "4,mean", NULL};
    const char *sums[] = {"clean", "--sigma-clip", "3", "--bin", "5,sum", NULL};
    const char *norm[] = {"normalize", "--method", "minmax", "--detrend", "mean:5", "--detrend-op", "divide", NULL};
    same_as_one_process(smooth, "lc.npy", one_to_four, 0, 0);
    same_as_one_process(reduce, "lc.npy", one_to_four, 0, 0);
    same_as_one_process(norm, "lc.npy", one_to_four, 0, 1);
    /* lightkurve's flatten: each rank's whole matrices, clipped over each */
    const char *flat_cmd[] = {"clean", "--flatten", "9,2,3,2.5", "--bin-smooth", "4,mean", NULL};
    same_as_one_process(flat_cmd, "lc.npy", one_to_four, 0, 0);
    static const int two_three[] = {2, 3, 0};
    same_as_one_process(sums, "lc2.npy", two_three, 0, 0);
    same_as_one_process(reduce, "lc2.npy", two_three, 0, 0);
    const char *batch[] = {"clean", "--detrend", "mean:5", "--scope", "batch", "--mpi", "x.npy", "y.npy", NULL};
    tool_result r;
    run_single(&r, batch);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "per matrix") || !strstr(r.err, "--scope batch")) fail_msg("no reason given: %s", r.err);
}

static void apply_and_inverse_same_bytes(void **state)
{
    (void)state;
    size_t shape[3] = {3, 7, 5};
    make_input("a.npy", CLS_F64, 3, shape, 1);
    char s[4200], sm[4200], a[4200], m[4200], o[4200];
    path_of(s, sizeof s, "batch.stats");
    path_of(sm, sizeof sm, "matrix.stats");
    path_of(a, sizeof a, "a.npy");
    path_of(m, sizeof m, "m.npy");
    path_of(o, sizeof o, "fit.npy");
    tool_result r;
    const char *fit[] = {"normalize", "--method", "zscore", "--scope", "batch", "--stats-out", s, a, o, NULL};
    run_single(&r, fit);
    expect_ok(&r, "fit");
    const char *apply[] = {"apply", "--stats", s, NULL};
    const char *inverse[] = {"apply", "--stats", s, "--inverse", NULL};
    static const int ranks[] = {3, 0};
    same_as_one_process(apply, "a.npy", ranks, 0, 0);
    same_as_one_process(inverse, "a.npy", ranks, 0, 0);
    /* statistics per matrix: each rank takes its matrices' */
    size_t ms[3] = {5, 6, 4};
    make_input("m.npy", CLS_F64, 3, ms, 3);
    const char *fitm[] = {"normalize", "--method", "minmax", "--stats-out", sm, m, o, NULL};
    run_single(&r, fitm);
    expect_ok(&r, "fit per matrix");
    const char *applym[] = {"apply", "--stats", sm, NULL};
    same_as_one_process(applym, "m.npy", ranks, 0, 0);
}

/* Factors varying by matrix or by row: a rank's rows cross matrices. */
static void discount_same_bytes(void **state)
{
    (void)state;
    size_t shape[3] = {3, 7, 5}, fb[3] = {3, 1, 5}, fr[2] = {7, 5};
    make_input("a.npy", CLS_F64, 3, shape, 1);
    make_input("fb.npy", CLS_F64, 3, fb, 8);
    make_input("fr.npy", CLS_F64, 2, fr, 9);
    char f1[4200], f2[4200];
    path_of(f1, sizeof f1, "fb.npy");
    path_of(f2, sizeof f2, "fr.npy");
    const char *d1[] = {"discount", "--factors", f1, NULL};
    const char *d2[] = {"discount", "--factors", f2, NULL};
    static const int four[] = {4, 0}, three[] = {3, 0};
    same_as_one_process(d1, "a.npy", four, 0, 0);
    same_as_one_process(d2, "a.npy", three, 0, 0);
}

/* One rank fails; OUT keeps what it held, no temporary is left. */
static void one_rank_failing_with(const char *const *settings, int bad, const char *why,
                                  const char *const *method)
{
    size_t shape[3] = {3, 7, 5};
    make_input("a.npy", CLS_F64, 3, shape, 1);
    char in[4200], out[4200], st[4200];
    path_of(in, sizeof in, "a.npy");
    path_of(out, sizeof out, "old.npy");
    path_of(st, sizeof st, "old.stats");
    FILE *f = fopen(out, "w");
    fputs("what was there before", f);
    fclose(f);
    const char *args[] = {"normalize", "--mpi", method[0], method[1], "--scope", "batch", "--stats-out", st,
                          in, out, NULL};
    tool_result r;
    run_mpi(&r, 3, bad, settings, args);
    char name[32];
    snprintf(name, sizeof name, "rank %d of 3", bad);
    if (r.status != 1 || !strstr(r.err, name) || !strstr(r.err, why))
        fail_msg("exit status %d (expected 1), expected \"%s\" and \"%s\" in:\n%s", r.status, name, why, r.err);
    size_t len;
    char *old = slurp(out, &len);
    assert_true(len == strlen("what was there before") && !memcmp(old, "what was there before", len));
    free(old);
    assert_int_equal(access(st, F_OK), -1);
    assert_int_equal(files_with(".tmp"), 0);
}

static void one_rank_failing(const char *const *settings, int bad, const char *why)
{
    const char *const minmax[] = {"--method", "minmax", NULL};
    one_rank_failing_with(settings, bad, why, minmax);
}

static void a_rank_without_device_fails_all(void **state)
{
    (void)state;
    const char *const settings[] = {"CLSCALE_DEVICES=no-such-device", NULL};
    one_rank_failing(settings, 1, "no-such-device");
}

/* The quantiles' counting passes fail on one rank (its device is dropped
 * mid-pass, none is left): every rank fails, OUT and --stats-out untouched. */
static void a_rank_failing_in_the_quantile_passes_fails_all(void **state)
{
    (void)state;
    char layer[4200];
    snprintf(layer, sizeof layer, "OPENCL_LAYERS=%s", getenv("CLS_FAULT_LAYER"));
    const char *const settings[] = {layer, "CLSFAULT_RULE=1,basic,0,qhist,0,-1", NULL};
    const char *const robust[] = {"--method", "robust", NULL};
    one_rank_failing_with(settings, 1, "clEnqueueNDRangeKernel", robust);
}

static void a_device_failing_mid_run_fails_all(void **state)
{
    (void)state;
    char layer[4200];
    snprintf(layer, sizeof layer, "OPENCL_LAYERS=%s", getenv("CLS_FAULT_LAYER"));
    /* the statistics kernels on the rank's one device fail (after its
     * context, the output and the library's own checks are made): it is
     * dropped mid-call, and no device is left to redo its slices */
    const char *const settings[] = {layer, "CLSFAULT_RULE=1,basic,0,stats,0,-1", NULL};
    one_rank_failing(settings, 2, "every device able to run the call failed");
}

/* ---- every OpenCL object released, on every rank ---- */

/* The count files the processes wrote (CLSFAULT_COUNT_OUT=folder/): how
 * many; each one's objects live at exit must be 0; `seen` and `injected`
 * summed. mpirun writes one too: its hwloc looks at the OpenCL devices. */
static int rank_counts(const char *folder, long *seen, long *injected, const char *what)
{
    DIR *d = opendir(folder);
    assert_non_null(d);
    int n = 0;
    *seen = *injected = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4600];
        snprintf(p, sizeof p, "%s/%s", folder, e->d_name);
        FILE *f = fopen(p, "r");
        assert_non_null(f);
        long s = 0, i = 0, live = -1;
        char call[64];
        int got = fscanf(f, "%ld %ld %63s %ld", &s, &i, call, &live);
        fclose(f);
        unlink(p);
        assert_int_equal(got, 4);
        if (live != 0) fail_msg("%s: process %s left %ld OpenCL objects live at exit", what, e->d_name, live);
        *seen += s;
        *injected += i;
        n++;
    }
    closedir(d);
    return n;
}

/* The n ranks' exit statuses written by run_mpi's `rank_statuses` script:
 * every rank wrote one, and the same (one rank failing fails them all). */
static int rank_exits(const char *folder, int n)
{
    int common = 0; /* rank 0's status, which every other rank's must equal */
    for (int i = 0; i < n; i++) {
        char p[4600];
        snprintf(p, sizeof p, "%s/%d", folder, i);
        FILE *f = fopen(p, "r");
        if (!f) fail_msg("rank %d of %d wrote no exit status", i, n);
        int st = -1;
        int got = fscanf(f, "%d", &st);
        fclose(f);
        unlink(p);
        assert_int_equal(got, 1);
        if (i && st != common) fail_msg("rank %d exited %d, rank 0 %d", i, st, common);
        if (i == 0) common = st;
    }
    return common;
}

/* Every rank of `clscale normalize --mpi` releases every OpenCL object it
 * made (the fault layer counts them in each process and writes them at
 * exit): healthy, in the moments' and in the quantiles' passes, with a rank
 * that has no rows; and when one rank's device fails at its first kernel
 * launch or at a call halfway through its run, which fails every rank. */
static void every_rank_releases_every_object(void **state)
{
    (void)state;
    size_t shape[2] = {3, 6};
    make_input("c.npy", CLS_F64, 2, shape, 9);
    char in[4200], out[4200], folder[4200], counts[4300], layer[4200], statuses[4200];
    path_of(in, sizeof in, "c.npy");
    path_of(out, sizeof out, "c-out.npy");
    path_of(folder, sizeof folder, "counts");
    mkdir(folder, 0755);
    /* every rank runs to its own exit, which writes its counts */
    path_of(statuses, sizeof statuses, "statuses");
    mkdir(statuses, 0755);
    rank_statuses = statuses;
    snprintf(counts, sizeof counts, "%s/", folder);
    snprintf(layer, sizeof layer, "OPENCL_LAYERS=%s", getenv("CLS_FAULT_LAYER"));
    setenv("OPENCL_LAYERS", getenv("CLS_FAULT_LAYER"), 1);
    setenv("CLSFAULT_COUNT_OUT", counts, 1);
    setenv("CLSFAULT_COUNT", "basic:0::-1:0", 1); /* counts the calls */
    static const char *const methods[] = {"zscore", "robust"};
    tool_result r;
    long healthy = 0;
    for (int m = 0; m < 2; m++) {
        const char *args[] = {"normalize", "--mpi", "--method", methods[m], "--scope", "batch", in, out, NULL};
        long seen, injected;
        /* four ranks over three rows: one has none */
        run_mpi(&r, 4, -1, NULL, args);
        r.status = rank_exits(statuses, 4);
        expect_ok(&r, methods[m]);
        /* a count from each rank, and from mpirun's own process where its
         * device discovery loads OpenCL */
        int procs = rank_counts(folder, &seen, &injected, methods[m]);
        assert_true(procs == 4 || procs == 5);
        print_message("# %s, 4 ranks: %ld calls, every object released\n", methods[m], seen);
        assert_true(seen > 0);
        /* one rank's device failing, at its first kernel launch and at a
         * call halfway through the healthy run: every rank fails, and
         * every rank, the failing one too, released every object */
        run_mpi(&r, 3, -1, NULL, args);
        r.status = rank_exits(statuses, 3);
        expect_ok(&r, methods[m]);
        assert_int_equal(rank_counts(folder, &seen, &injected, methods[m]), procs - 1);
        healthy = seen / 3;
        size_t ngood;
        char *good = slurp(out, &ngood);
        char rule[2][64];
        snprintf(rule[0], sizeof rule[0], "CLSFAULT_COUNT=basic:0:clEnqueueNDRangeKernel:0:-1");
        snprintf(rule[1], sizeof rule[1], "CLSFAULT_COUNT=basic:0::%ld:1", healthy / 2);
        for (int f = 0; f < 2; f++) {
            const char *const settings[] = {rule[f], NULL};
            run_mpi(&r, 3, 1, settings, args);
            r.status = rank_exits(statuses, 3);
            char what[160];
            snprintf(what, sizeof what, "%s, %s on rank 1", methods[m], rule[f]);
            /* the first launch surely fails the rank's one device; the call
             * halfway may be one the run survives (OUT then the same bytes) */
            if (r.status != 1 && (f == 0 || r.status != 0))
                fail_msg("%s: exit status %d, expected 1:\n%s", what, r.status, r.err);
            assert_int_equal(rank_counts(folder, &seen, &injected, what), procs - 1);
            print_message("# %s: exit %d on every rank, every object released\n", what, r.status);
            assert_true(injected > 0);
            size_t n;
            char *now = slurp(out, &n);
            assert_true(n == ngood && !memcmp(now, good, n)); /* OUT as it was, or the same */
            free(now);
        }
        free(good);
    }
    unsetenv("OPENCL_LAYERS");
    unsetenv("CLSFAULT_COUNT_OUT");
    unsetenv("CLSFAULT_COUNT");
    rank_statuses = NULL;
    rmdir(statuses);
    assert_int_equal(files_with(".tmp"), 0);
}

/* Where OUT and --stats-out go is checked under --mpi as without it (issue
 * 29): rank 0 decides, every rank exits 2, the message comes once, and
 * nothing is read, computed or written: IN (or the statistics) unchanged,
 * no temporary. OUT a device or pipe is refused too (the ranks share OUT
 * as a file). Three ranks, so that ranks other than 0 take the verdict. */
static void out_targets_are_refused_as_without_mpi(void **state)
{
    (void)state;
    size_t shape[2] = {40, 6};
    make_input("t.npy", CLS_F32, 2, shape, 29);
    char in[4200], link_in[4200], missing[4200], st[4200], o[4200];
    const char *folder = dir; /* the test's own folder */
    path_of(in, sizeof in, "t.npy");
    path_of(link_in, sizeof link_in, "t-link.npy");
    path_of(missing, sizeof missing, "no-such-folder/out.npy");
    path_of(st, sizeof st, "t.stats");
    path_of(o, sizeof o, "t-out.npy");
    unlink(link_in);
    if (symlink("t.npy", link_in) != 0) fail_msg("symlink: %s", strerror(errno));
    size_t in_len;
    char *before = slurp(in, &in_len);
    tool_result r;
    const char *norm[] = {"normalize", "--method", "minmax", "--stats-out", st, in, o, NULL};
    run_single(&r, norm);
    expect_ok(&r, "the statistics for apply");
    size_t st_len;
    char *st_before = slurp(st, &st_len);
    unlink(o);
    struct {
        const char *args[12];
        const char *named, *why;
    } cases[] = {
        {{"normalize", "--mpi", "--method", "minmax", in, folder, NULL}, folder, "folder"},
        {{"normalize", "--mpi", "--method", "minmax", in, missing, NULL}, missing, "No such file"},
        {{"normalize", "--mpi", "--method", "minmax", in, link_in, NULL}, link_in, "same file"},
        {{"normalize", "--mpi", "--method", "minmax", "--stats-out", in, in, o, NULL}, in, "same file"},
        {{"apply", "--mpi", "--stats", st, in, st, NULL}, st, "same file"},
        {{"normalize", "--mpi", "--method", "minmax", in, "/dev/null", NULL}, "/dev/null", "device or pipe"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_mpi(&r, 3, -1, NULL, cases[i].args);
        const char *m = strstr(r.err, cases[i].why);
        if (r.status != 2 || !m || !strstr(r.err, cases[i].named) || !strstr(r.err, "--help"))
            fail_msg("case %zu: exit status %d (expected 2, naming %s: %s):\n%s", i, r.status, cases[i].named,
                     cases[i].why, r.err);
        if (strstr(m + 1, cases[i].why)) fail_msg("case %zu: the message came more than once:\n%s", i, r.err);
    }
    size_t len;
    char *after = slurp(in, &len);
    assert_true(len == in_len && !memcmp(after, before, len));
    free(after);
    after = slurp(st, &len);
    assert_true(len == st_len && !memcmp(after, st_before, len));
    free(after);
    free(before);
    free(st_before);
    assert_int_equal(access(o, F_OK), -1);
    assert_int_equal(files_with(".tmp"), 0);
}

/* A rank killed (SIGKILL) mid-run: the victim sleeps 3 s in each statistics
 * kernel launch (the fault layer's delay), and a child of the test kills it once
 * rank 0 has made OUT's temporary. Open MPI's mpirun then ends the other
 * ranks (SIGTERM) and names the dead rank; their signal guard removes the
 * temporary (every rank registers it, so rank 0's death too leaves none),
 * OUT keeps what it held, no statistics file appears, and mpirun exits
 * non-zero. */
static void killed_rank(int victim)
{
    size_t shape[3] = {3, 7, 5};
    make_input("k.npy", CLS_F64, 3, shape, 2);
    char in[4200], out[4200], st[4200], pidf[4200], layer[4200], script[4400];
    path_of(in, sizeof in, "k.npy");
    path_of(out, sizeof out, "killed.npy");
    path_of(st, sizeof st, "killed.stats");
    path_of(pidf, sizeof pidf, "victim.pid");
    unlink(pidf);
    FILE *f = fopen(out, "w");
    fputs("what was there before", f);
    fclose(f);
    snprintf(layer, sizeof layer, "OPENCL_LAYERS=%s", getenv("CLS_FAULT_LAYER"));
    snprintf(script, sizeof script, "echo $$ > '%s'; exec \"$0\" \"$@\"", pidf);
    const char *const settings[] = {layer, "CLSFAULT_RULE=5,basic,0,stats,0,-1,3000000", "sh", "-c", script, NULL};
    pid_t killer = fork();
    assert_true(killer >= 0);
    if (killer == 0) {
        for (int i = 0; i < 12000; i++) { /* 120 s at most */
            long pid = 0;
            FILE *p = fopen(pidf, "r");
            if (p) {
                if (fscanf(p, "%ld", &pid) != 1) pid = 0;
                fclose(p);
            }
            if (pid > 0 && files_with(".killed.npy.tmp") > 0) _exit(kill((pid_t)pid, SIGKILL) == 0 ? 0 : 2);
            usleep(10000);
        }
        _exit(1);
    }
    const char *args[] = {"normalize", "--mpi", "--method", "zscore", "--scope", "batch", "--stats-out", st,
                          in, out, NULL};
    tool_result r;
    run_mpi(&r, 3, victim, settings, args);
    int ws;
    while (waitpid(killer, &ws, 0) < 0)
        if (errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) fail_msg("the killer did not kill rank %d (status %d)", victim, ws);
    char name[32];
    snprintf(name, sizeof name, "rank %d ", victim);
    if (r.status == 0 || !strstr(r.err, name) || !strstr(r.err, "signal 9"))
        fail_msg("exit status %d (expected non-zero), expected mpirun to name rank %d and signal 9 in:\n%s",
                 r.status, victim, r.err);
    size_t len;
    char *old = slurp(out, &len);
    assert_true(len == strlen("what was there before") && !memcmp(old, "what was there before", len));
    free(old);
    assert_int_equal(access(st, F_OK), -1);
    if (files_with(".tmp")) fail_msg("a temporary was left in %s; mpirun said:\n%s", dir, r.err);
}

static void a_rank_killed_mid_run_leaves_no_output(void **state)
{
    (void)state;
    killed_rank(1);
    killed_rank(0);  /* the rank that created the temporary */
}

static int setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "mpi-tool");
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(normalize_batch_minmax_same_bytes),
        cmocka_unit_test(normalize_batch_zscore_close),
        cmocka_unit_test(normalize_matrix_scope),
        cmocka_unit_test(light_curves_per_matrix_same_bytes),
        cmocka_unit_test(normalize_2d_with_an_empty_rank),
        cmocka_unit_test(normalize_robust_same_bytes),
        cmocka_unit_test(clean_and_normalize_clean_across_ranks),
        cmocka_unit_test(apply_and_inverse_same_bytes),
        cmocka_unit_test(discount_same_bytes),
        cmocka_unit_test(a_rank_without_device_fails_all),
        cmocka_unit_test(a_device_failing_mid_run_fails_all),
        cmocka_unit_test(a_rank_failing_in_the_quantile_passes_fails_all),
        cmocka_unit_test(every_rank_releases_every_object),
        cmocka_unit_test(out_targets_are_refused_as_without_mpi),
        cmocka_unit_test(a_rank_killed_mid_run_leaves_no_output),
    };
    return TEST_RUN("mpi-tool", tests, setup, NULL);
}
