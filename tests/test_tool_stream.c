/* The tool's streaming path (tools/cli/stream_run.c), run as a subprocess:
 * its output equals the mapped path's byte for byte (normalize, apply,
 * discount, chunks of a few KiB), the progress bar on a terminal shows
 * bytes, rate and time left and --quiet turns it off, runs of several
 * passes show each pass and never overstate the work, and bad input (an
 * input truncated while read, a full disk) fails with exit 1 and a message
 * naming the file, leaving no output and the input untouched. clean
 * --mask-out streams its mask whole, both files or neither. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static char dir[4096];
static tool_result R;

static const char *file(const char *name)
{
    static char ring[16][4400];
    static unsigned next;
    char *b = ring[next++ % 16];
    snprintf(b, sizeof ring[0], "%s/%s", dir, name);
    return b;
}

static int tool_argv(const char *const *args)
{
    if (test_run_tool(dir, &R, args) != 0) fail_msg("cannot run $CLS_TOOL (%s)", getenv("CLS_TOOL"));
    return R.status;
}
#define tool(...) tool_argv((const char *const[]){__VA_ARGS__, NULL})
#define expect_status(want)                                                                    \
    do {                                                                                       \
        if (R.status != (want)) {                                                              \
            print_error("exit status %d, expected %d; stderr:\n%s\n", R.status, (want), R.err); \
            fail();                                                                            \
        }                                                                                      \
    } while (0)

/* A float64 .npy of shape b x r x c, seeded, with NaN and Inf. */
static void write_npy(const char *path, size_t b, size_t r, size_t c, uint64_t seed)
{
    char dict[200];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, %zu, %zu), }", b,
                     r, c);
    size_t hl = 10 + (size_t)n + 1, pad = (64 - hl % 64) % 64;
    unsigned char hdr[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    hdr[8] = (unsigned char)((n + 1 + pad) & 0xff);
    hdr[9] = (unsigned char)((n + 1 + pad) >> 8);
    memcpy(hdr + 10, dict, (size_t)n);
    memset(hdr + 10 + n, ' ', pad);
    hdr[hl + pad - 1] = '\n';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(hdr, 1, hl + pad, f), hl + pad);
    rng g;
    rng_seed(&g, seed);
    for (size_t i = 0; i < b * r * c; i++) {
        double v = rng_normal(&g) * 4.0 + (double)(i % c);
        if (i % 89 == 3) v = NAN;
        if (i % 211 == 9) v = INFINITY;
        assert_int_equal(fwrite(&v, sizeof v, 1, f), 1);
    }
    assert_int_equal(fclose(f), 0);
}

/* The whole file in a malloc'ed buffer. */
static char *slurp_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void assert_same_files(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp_file(a, &na), *y = slurp_file(b, &nb);
    assert_non_null(x);
    assert_non_null(y);
    if (na != nb || memcmp(x, y, na)) fail_msg("%s and %s differ", a, b);
    free(x);
    free(y);
}

/* Two float64 .npy files of the same header whose values agree within tol
 * (relative, NaN equal to NaN). */
static void assert_close_files(const char *a, const char *b, double tol)
{
    size_t na, nb;
    char *x = slurp_file(a, &na), *y = slurp_file(b, &nb);
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(na, nb);
    size_t off = 10 + (size_t)(unsigned char)x[8] + 256 * (size_t)(unsigned char)x[9];
    assert_true(off <= na && memcmp(x, y, off) == 0);
    for (size_t i = off; i + 8 <= na; i += 8) {
        double u, v;
        memcpy(&u, x + i, 8);
        memcpy(&v, y + i, 8);
        assert_close(u, v, tol);
    }
    free(x);
    free(y);
}

static size_t temps_in(const char *d)
{
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp\\.' || true", d);
    FILE *f = popen(cmd, "r");
    size_t n = 0;
    if (f) {
        if (fscanf(f, "%zu", &n) != 1) n = 0;
        pclose(f);
    }
    return n;
}

/* Runs ARGS with streaming on (small chunks) and off; the outputs match
 * (within tol when it is not 0). */
static void close_both_ways(const char *const *args_stream, const char *const *args_map, const char *out_s,
                            const char *out_m, double tol)
{
    setenv("CLSCALE_STREAM", "0", 1);
    tool_argv(args_map);
    expect_status(0);
    setenv("CLSCALE_STREAM", "1", 1);
    setenv("CLSCALE_STREAM_BUFFER", "4k", 1);
    tool_argv(args_stream);
    unsetenv("CLSCALE_STREAM_BUFFER");
    unsetenv("CLSCALE_STREAM");
    expect_status(0);
    if (tol == 0) assert_same_files(out_s, out_m);
    else assert_close_files(out_s, out_m, tol);
}

static void same_both_ways(const char *const *args_stream, const char *const *args_map, const char *out_s,
                           const char *out_m)
{
    close_both_ways(args_stream, args_map, out_s, out_m, 0);
}

static void normalize_apply_discount_stream_like_mapped(void **s)
{
    (void)s;
    write_npy(file("x.npy"), 6, 40, 5, 1);
    write_npy(file("f.npy"), 1, 40, 5, 2);
    /* whole matrices per chunk (1600 B a matrix), then row blocks, 2 passes */
    const char *m1[] = {"normalize", "--method", "zscore", "--stats-out", file("s.bin"), file("x.npy"),
                        file("m.npy"), NULL};
    const char *s1[] = {"normalize", "--method", "zscore", "--stats-out", file("s2.bin"), file("x.npy"),
                        file("n.npy"), NULL};
    same_both_ways(s1, m1, file("n.npy"), file("m.npy"));
    assert_same_files(file("s.bin"), file("s2.bin"));
    const char *m2[] = {"apply", "--stats", file("s.bin"), "--inverse", file("m.npy"), file("am.npy"), NULL};
    const char *s2[] = {"apply", "--stats", file("s.bin"), "--inverse", file("m.npy"), file("an.npy"), NULL};
    same_both_ways(s2, m2, file("an.npy"), file("am.npy"));
    const char *m3[] = {"discount", "--factors", file("f.npy"), file("x.npy"), file("dm.npy"), NULL};
    const char *s3[] = {"discount", "--factors", file("f.npy"), file("x.npy"), file("dn.npy"), NULL};
    same_both_ways(s3, m3, file("dn.npy"), file("dm.npy"));
    /* robust scaling of a group over 4 KiB (the batch): exact quantiles by
     * counting passes over the file, the same bytes and statistics (this
     * wrote NaN everywhere once) */
    const char *m4[] = {"normalize", "--method", "robust", "--scope", "batch", "--quantile-range", "10,90",
                        "--stats-out", file("rs.bin"), file("x.npy"), file("rm.npy"), NULL};
    const char *s4[] = {"normalize", "--method", "robust", "--scope", "batch", "--quantile-range", "10,90",
                        "--stats-out", file("rs2.bin"), file("x.npy"), file("rn.npy"), NULL};
    same_both_ways(s4, m4, file("rn.npy"), file("rm.npy"));
    assert_same_files(file("rs.bin"), file("rs2.bin"));
    assert_int_equal(temps_in(dir), 0);
}

/* clean and normalize with cleaning options stream like the mapped path:
 * whole matrices in a 4 KiB chunk (1600 B each) in one pass; --scope batch
 * (a group over 4 KiB) by the cleaning stage's passes over the file: the
 * same bytes where the decisions come from counts and medians, within
 * rounding where a mean is summed in another order; most_frequent by its
 * own counting passes over the file, the same bytes. */
static void cleaning_streams_like_mapped(void **s)
{
    (void)s;
    write_npy(file("c.npy"), 6, 40, 5, 3);
    const char *m1[] = {"clean", "--impute", "median", "--sigma-clip", "3", file("c.npy"), file("cm.npy"), NULL};
    const char *s1[] = {"clean", "--impute", "median", "--sigma-clip", "3", file("c.npy"), file("cn.npy"), NULL};
    same_both_ways(s1, m1, file("cn.npy"), file("cm.npy"));
    const char *m2[] = {"normalize", "--method", "minmax", "--impute", "mean", "--scope", "batch", file("c.npy"),
                        file("bm.npy"), NULL};
    const char *s2[] = {"normalize", "--method", "minmax", "--impute", "mean", "--scope", "batch", file("c.npy"),
                        file("bn.npy"), NULL};
    close_both_ways(s2, m2, file("bn.npy"), file("bm.npy"), 1e-14);
    const char *m3[] = {"clean", "--scope", "batch", "--sigma-clip", "2.5,10", "--clip-spread", "mad_std",
                        "--impute", "median", file("c.npy"), file("mm.npy"), NULL};
    const char *s3[] = {"clean", "--scope", "batch", "--sigma-clip", "2.5,10", "--clip-spread", "mad_std",
                        "--impute", "median", file("c.npy"), file("mn.npy"), NULL};
    same_both_ways(s3, m3, file("mn.npy"), file("mm.npy"));
    const char *m4[] = {"normalize", "--method", "zscore", "--scope", "batch", "--sigma-clip", "2", "--clip-center",
                        "mean", "--impute", "constant:0.5", file("c.npy"), file("zm.npy"), NULL};
    const char *s4[] = {"normalize", "--method", "zscore", "--scope", "batch", "--sigma-clip", "2", "--clip-center",
                        "mean", "--impute", "constant:0.5", file("c.npy"), file("zn.npy"), NULL};
    close_both_ways(s4, m4, file("zn.npy"), file("zm.npy"), 1e-12);
    const char *m5[] = {"clean", "--scope", "batch", "--sigma-clip", "3", "--impute", "most_frequent", file("c.npy"),
                        file("fm.npy"), NULL};
    const char *s5[] = {"clean", "--scope", "batch", "--sigma-clip", "3", "--impute", "most_frequent", file("c.npy"),
                        file("fn.npy"), NULL};
    same_both_ways(s5, m5, file("fn.npy"), file("fm.npy"));
    assert_int_equal(temps_in(dir), 0);
}

/* clean --verbose streams: its per-column missing and clipped counts and
 * its output are the mapped path's, in one pass (whole matrices a chunk)
 * and over groups larger than a chunk (--scope batch). */
static void clean_verbose_streams_like_mapped(void **s)
{
    (void)s;
    write_npy(file("v.npy"), 6, 40, 5, 4);
    const char *scopes[] = {"matrix", "batch"};
    for (int k = 0; k < 2; k++) {
        const char *m[] = {"clean", "--verbose", "--scope", scopes[k], "--sigma-clip", "2", "--impute", "median",
                           file("v.npy"), file("vm.npy"), NULL};
        const char *n[] = {"clean", "--verbose", "--scope", scopes[k], "--sigma-clip", "2", "--impute", "median",
                           file("v.npy"), file("vn.npy"), NULL};
        setenv("CLSCALE_STREAM", "0", 1);
        tool_argv(m);
        expect_status(0);
        char mapped[sizeof R.err];
        memcpy(mapped, R.err, sizeof mapped);
        setenv("CLSCALE_STREAM", "1", 1);
        setenv("CLSCALE_STREAM_BUFFER", "4k", 1);
        tool_argv(n);
        unsetenv("CLSCALE_STREAM_BUFFER");
        unsetenv("CLSCALE_STREAM");
        expect_status(0);
        if (strcmp(R.err, mapped)) fail_msg("--scope %s: streamed counts\n%s\nmapped\n%s", scopes[k], R.err, mapped);
        assert_non_null(strstr(R.err, "clipped"));
        assert_same_files(file("vn.npy"), file("vm.npy"));
    }
}

/* Lines of a describe --json output but the means and stds (merged
 * over chunks when a group spans them). */
static void without_moments(char *text)
{
    char *w = text;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        int moment = strstr(line, "\"mean\"") && strstr(line, "\"mean\"") < line + len;
        moment |= strstr(line, "\"std\"") && strstr(line, "\"std\"") < line + len;
        if (!moment) {
            memmove(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = '\0';
}

/* describe streams the file: the mapped path's summary, the same text
 * where each chunk holds whole matrices, and but for the means and stds
 * where a group spans chunks (--scope batch). */
static void describe_streams_like_mapped(void **s)
{
    (void)s;
    write_npy(file("w.npy"), 6, 40, 5, 6);
    const char *scopes[] = {"matrix", "batch"};
    for (int k = 0; k < 2; k++) {
        const char *a[] = {"describe", "--json", "--scope", scopes[k], file("w.npy"), NULL};
        setenv("CLSCALE_STREAM", "0", 1);
        tool_argv(a);
        expect_status(0);
        char *mapped = strdup(R.out);
        assert_non_null(mapped);
        setenv("CLSCALE_STREAM", "1", 1);
        setenv("CLSCALE_STREAM_BUFFER", "4k", 1);
        tool_argv(a);
        unsetenv("CLSCALE_STREAM_BUFFER");
        unsetenv("CLSCALE_STREAM");
        expect_status(0);
        if (k == 1) {
            without_moments(mapped);
            without_moments(R.out);
        }
        if (strcmp(R.out, mapped)) fail_msg("--scope %s: streamed\n%s\nmapped\n%s", scopes[k], R.out, mapped);
        free(mapped);
    }
}

/* A 96 MB file, 24 times the tool's pool (4 buffers of 1 MiB), one
 * group of 64 columns: clean --verbose, describe, robust scaling after
 * clipping and alone, a clamp, a trend (its series, the matrix, in blocks
 * with halo rows), most_frequent imputation each stream it, their peak RSS above the same
 * command's on a 2 MB file by the library's bounded scratch, well under
 * the file (mapped, the input's pages alone would add all of it). */
static void peak_rss_of_every_operation_is_the_pool_not_the_file(void **s)
{
    (void)s;
    if (TEST_UNDER_ASAN) test_skip("AddressSanitizer's quarantine and shadow memory are in the RSS");
    /* rows of 64 columns: describe's duplicate-row table (16 bytes a row,
     * bounded at 16 MiB) stays small beside the file */
    write_npy(file("tiny.npy"), 1, 4000, 64, 8);   /* 2 MB: its group spans chunks too */
    write_npy(file("large.npy"), 1, 187500, 64, 9); /* 96 MB */
    /* the library's scratch, bounded whatever the file: the selection's
     * gather or windows (16 MiB), describe's duplicate-row table, the
     * engine's state */
    const long bound = 40000; /* KB */
    const char *const ops[][12] = {
        {"clean", "--verbose", "--sigma-clip", "3,2", "--impute", "median", "IN", "OUT", NULL},
        {"describe", "IN", NULL},
        {"normalize", "--method", "robust", "--sigma-clip", "3,2", "IN", "OUT", NULL},
        /* the wide first counting pass's histograms and the windows' copies */
        {"normalize", "--method", "robust", "--scope", "batch", "IN", "OUT", NULL},
        {"clean", "--impute", "median", "--clip-mode", "clamp", "--sigma-clip", "3,2", "IN", "OUT", NULL},
        {"clean", "--sigma-clip", "3", "--detrend", "savgol:101,2", "--bin", "10,median", "IN", "OUT", NULL},
        {"normalize", "--method", "minmax", "--detrend", "mean:101", "IN", "OUT", NULL},
        /* the most frequent values' counting tables (64 MiB at most), a
         * pass per cut of each column's key range (values all distinct) */
        {"clean", "--impute", "most_frequent", "IN", "OUT", NULL},
    };
    setenv("CLSCALE_STREAM_BUFFER", "1M", 1);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        /* the large file first, untimed: the kernels it takes built and
         * cached (a cold build's compiler is in the RSS) */
        long rss[3];
        for (int run = 0; run < 3; run++) {
            int big = run != 1;
            const char *argv[12];
            size_t i = 0;
            for (; ops[k][i]; i++)
                argv[i] = !strcmp(ops[k][i], "IN")    ? file(big ? "large.npy" : "tiny.npy")
                          : !strcmp(ops[k][i], "OUT") ? file("rss-out.npy")
                                                      : ops[k][i];
            argv[i] = NULL;
            tool_argv(argv);
            expect_status(0);
            rss[run] = R.maxrss_kb;
        }
        if (rss[2] - rss[1] > bound)
            fail_msg("%s %s: peak RSS %ld KB on the 96 MB file, %ld KB on a 2 MB one", ops[k][0], ops[k][1], rss[2],
                     rss[1]);
    }
    unsetenv("CLSCALE_STREAM_BUFFER");
    unlink(file("large.npy"));
    unlink(file("rss-out.npy"));
}

/* Robust scaling of a group larger than a buffer (1,000,000 x 8 float64
 * in buffers of 8 MiB): --verbose counts the passes over the input, 2
 * (the counting pass that also fits the extremes and keeps each wanted
 * rank's window, then the pass that writes), as min-max's (its fit, then
 * the pass that writes). */
static void robust_of_a_tall_group_reads_the_input_twice(void **s)
{
    (void)s;
    write_npy(file("tall.npy"), 1, 1000000, 8, 9);
    setenv("CLSCALE_STREAM_BUFFER", "8M", 1);
    const char *const methods[] = {"robust", "minmax"};
    for (int k = 0; k < 2; k++) {
        const char *const argv[] = {"normalize", "--method", methods[k], "--verbose", file("tall.npy"),
                                    file("tall-out.npy"), NULL};
        tool_argv(argv);
        expect_status(0);
        if (!strstr(R.err, ", 2 passes\n")) fail_msg("%s: %s", methods[k], R.err);
    }
    unsetenv("CLSCALE_STREAM_BUFFER");
    unlink(file("tall.npy"));
    unlink(file("tall-out.npy"));
}

/* Light curves stream whole matrices (1600 B each in a 4 KiB chunk): the
 * trend, smoothed bins, bins reduced (OUT one row per bin of 4: the
 * stream writes 10 rows a matrix), a scaler after the trend. Bins alone
 * stream a matrix of 300 rows in row blocks of whole bins; a trend over a
 * series larger than a chunk (the batch in batch scope, a matrix of 300
 * rows) in blocks with halo rows, a wrap edge's blocks at the ends
 * holding the other end's rows: the same bytes every way. */
static void light_curves_stream_like_mapped(void **s)
{
    (void)s;
    write_npy(file("l.npy"), 6, 40, 5, 5);
    write_npy(file("long.npy"), 2, 300, 5, 6);
    const char *cases[][8] = {
        {"clean", "--detrend", "savgol:9,2", "--bin-smooth", "4,median", NULL},
        {"clean", "--detrend", "mean:7", "--detrend-edge", "wrap", "--bin", "4,mean", NULL},
        {"clean", "--sigma-clip", "3", "--bin", "4,count", NULL},
        {"clean", "--bin", "3,sum", "--scope", "batch", NULL},
        {"clean", "--bin", "7,median", NULL},
        {"normalize", "--method", "minmax", "--detrend", "mean:5", "--detrend-op", "divide", NULL},
        {"clean", "--sigma-clip", "3", "--detrend", "savgol:21,2", "--scope", "batch", NULL},
        {"clean", "--detrend", "savgol:9,2", "--detrend-edge", "mirror", "--bin", "5,median", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int f = 0; f < 2; f++) {
            const char *a[16], *b[16];
            size_t n = 0;
            for (; cases[k][n]; n++) a[n] = b[n] = cases[k][n];
            a[n] = b[n] = f ? file("long.npy") : file("l.npy");
            a[n + 1] = file("ln.npy");
            b[n + 1] = file("lm.npy");
            a[n + 2] = b[n + 2] = NULL;
            same_both_ways(a, b, file("ln.npy"), file("lm.npy"));
        }
    assert_int_equal(temps_in(dir), 0);
}

/* ---- progress ---- */

/* Runs the tool on a pseudo-terminal; its screen output into buf. */
static int run_on_tty(const char *const *args, char *buf, size_t len)
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid < 0) return -1;
    if (pid == 0) {
        const char *argv[32];
        size_t n = 0;
        argv[n++] = getenv("CLS_TOOL");
        for (; args[n - 1] && n < 31; n++) argv[n] = args[n - 1];
        argv[n] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    size_t got = 0;
    for (;;) {
        ssize_t r = read(master, buf + got, len - 1 - got);
        if (r <= 0) break;  /* EIO once the child has closed the terminal */
        got += (size_t)r;
        if (got == len - 1) got = 0;
    }
    buf[got] = '\0';
    close(master);
    int ws;
    waitpid(pid, &ws, 0);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void progress_on_a_terminal_shows_bytes_rate_and_time_left(void **s)
{
    (void)s;
    write_npy(file("p.npy"), 64, 32, 16, 3);  /* 256 KiB, 16 chunks of 16 KiB */
    setenv("CLSCALE_PROGRESS_DELAY", "0", 1);
    setenv("CLSCALE_STREAM_BUFFER", "16k", 1);
    static char screen[65536];
    const char *args[] = {"normalize", "--method", "minmax", file("p.npy"), file("po.npy"), NULL};
    assert_int_equal(run_on_tty(args, screen, sizeof screen), 0);
    if (!(strstr(screen, " kB") || strstr(screen, " MB")) || !strstr(screen, "B/s") || !strstr(screen, "%"))
        fail_msg("no progress bar with bytes and rate on the terminal: \"%s\"", screen);
    if (!strstr(screen, "left") && !strstr(screen, "100%"))
        fail_msg("no time left on the terminal: \"%s\"", screen);
    const char *quiet[] = {"normalize", "--quiet", "--method", "minmax", file("p.npy"), file("po.npy"), NULL};
    assert_int_equal(run_on_tty(quiet, screen, sizeof screen), 0);
    if (strstr(screen, "B/s")) fail_msg("--quiet drew a bar: \"%s\"", screen);
    /* not a terminal: nothing */
    tool("normalize", "--method", "minmax", file("p.npy"), file("po.npy"));
    expect_status(0);
    assert_string_equal(R.err, "");
    unsetenv("CLSCALE_PROGRESS_DELAY");
    unsetenv("CLSCALE_STREAM_BUFFER");
}

/* The frames of a progress bar on `screen` (redraws split at '\r'): each
 * "pass k/n[+]" has k <= n, n never falls, a "+" only before the last
 * pass; each amount is "X/Y kB" of the input file (262 kB: read once per
 * pass, not the bytes read and written), X <= Y; the percentage never
 * passes 100, and the last frame is 100% of the last pass, k = n, no "+".
 * @return the last pass's number (1 without "pass"). */
static unsigned check_frames(const char *screen, const char *what)
{
    char *copy = strdup(screen), *save = NULL;
    unsigned last_k = 0, last_n = 0, frames = 0;
    int last_pct = -1, last_plus = 0;
    for (char *f = strtok_r(copy, "\r", &save); f; f = strtok_r(NULL, "\r", &save)) {
        char *pc = strchr(f, '%');
        if (!pc || !strchr(f, '[')) continue;
        frames++;
        unsigned k = 1, n = 1;
        int plus = 0;
        const char *ps = strstr(f, "pass ");
        if (ps) {
            if (sscanf(ps, "pass %u/%u", &k, &n) != 2) fail_msg("%s: no \"pass k/n\" in \"%s\"", what, f);
            const char *after = strchr(ps, '/') + 1;
            while (*after >= '0' && *after <= '9') after++;
            plus = *after == '+';
        }
        if (k > n) fail_msg("%s: pass %u of %u: \"%s\"", what, k, n, f);
        if (n < last_n) fail_msg("%s: the passes fell from %u to %u: \"%s\"", what, last_n, n, f);
        const char *q = pc - 1;
        while (q > f && q[-1] >= '0' && q[-1] <= '9') q--;
        int pct = atoi(q);
        if (pct < 0 || pct > 100) fail_msg("%s: %d%%: \"%s\"", what, pct, f);
        double x, y;
        char unit[8];
        const char *am = pc + 1;
        while (*am == ' ') am++;
        if (sscanf(am, "%lf/%lf %7s", &x, &y, unit) != 3 || strcmp(unit, "kB") || fabs(y - 262) > 0.5 ||
            x > y + 1e-9)
            fail_msg("%s: the amount is not \"X/262 kB\" of the file: \"%s\"", what, f);
        last_k = k;
        last_n = n;
        last_pct = pct;
        last_plus = plus;
    }
    free(copy);
    if (!frames) fail_msg("%s: no progress bar: \"%s\"", what, screen);
    if (last_pct != 100 || last_k != last_n || last_plus)
        fail_msg("%s: the bar ended at pass %u/%u%s %d%%, not at 100%% of the last pass: \"%s\"", what, last_k,
                 last_n, last_plus ? "+" : "", last_pct, screen);
    return last_k;
}

static void progress_of_several_passes_counts_them_and_ends_at_100(void **s)
{
    (void)s;
    write_npy(file("p.npy"), 64, 32, 16, 3);  /* 262 kB of float64 */
    setenv("CLSCALE_PROGRESS_DELAY", "0", 1);
    setenv("CLSCALE_STREAM_BUFFER", "16k", 1);
    static char screen[1 << 18];
    /* one pass: the file's size, not twice it */
    const char *one[] = {"normalize", "--method", "minmax", file("p.npy"), file("po.npy"), NULL};
    assert_int_equal(run_on_tty(one, screen, sizeof screen), 0);
    assert_int_equal(check_frames(screen, "minmax"), 1);
    if (strstr(screen, "pass")) fail_msg("one pass shown as passes: \"%s\"", screen);
    /* a fit, then the transform: two passes known from the start */
    const char *two[] = {"normalize", "--method", "zscore", "--scope", "batch", file("p.npy"), file("po.npy"), NULL};
    assert_int_equal(run_on_tty(two, screen, sizeof screen), 0);
    assert_int_equal(check_frames(screen, "zscore batch"), 2);
    /* robust over a group larger than a buffer: the counting pass that
     * also fits the extremes (more may follow: "+"), here enough, then
     * the transform */
    const char *rob[] = {"normalize", "--method", "robust", "--scope", "batch", file("p.npy"), file("po.npy"), NULL};
    assert_int_equal(run_on_tty(rob, screen, sizeof screen), 0);
    if (check_frames(screen, "robust batch") != 2 || !strstr(screen, "pass 1/2+"))
        fail_msg("robust batch: not an open pass, then the transform: \"%s\"", screen);
    /* sigma clipping, then a median fill: passes until nothing changes */
    const char *cl[] = {"clean", "--sigma-clip", "3", "--impute", "median", "--scope", "batch", file("p.npy"),
                        file("po.npy"), NULL};
    assert_int_equal(run_on_tty(cl, screen, sizeof screen), 0);
    if (check_frames(screen, "clean batch") < 3) fail_msg("clean batch: fewer than 3 passes: \"%s\"", screen);
    const char *quiet[] = {"clean", "--quiet", "--sigma-clip", "3", "--scope", "batch", file("p.npy"),
                           file("po.npy"), NULL};
    assert_int_equal(run_on_tty(quiet, screen, sizeof screen), 0);
    if (strchr(screen, '%')) fail_msg("clean --quiet drew a bar: \"%s\"", screen);
    unsetenv("CLSCALE_PROGRESS_DELAY");
    unsetenv("CLSCALE_STREAM_BUFFER");
}

/* ---- bad input ---- */

/* The input truncated while the tool stands at the fault layer's gate
 * (CLSFAULT_GATE, tests/fault_layer.c): its first kernel launch waits at a
 * FIFO until this thread, whose open of the FIFO returns only once the
 * tool is there, has truncated the file. `finished` (set after the tool
 * ended) lets the thread go when the tool never came to the gate. */
typedef struct truncator {
    const char *in, *fifo;
    off_t       to;
    int         done;
    atomic_int  finished;
} truncator;

static void *truncate_at_the_gate(void *arg)
{
    truncator *t = arg;
    int fd = open(t->fifo, O_WRONLY);
    if (fd < 0) return NULL;
    if (!atomic_load(&t->finished) && truncate(t->in, t->to) == 0) t->done = 1;
    (void)!write(fd, "g", 1);
    close(fd);
    return NULL;
}

static void input_truncated_while_read_fails_leaving_nothing(void **s)
{
    (void)s;
    write_npy(file("t.npy"), 256, 64, 16, 4);  /* 2 MiB */
    struct stat sb;
    assert_int_equal(stat(file("t.npy"), &sb), 0);
    FILE *f = fopen(file("t-out.npy"), "w");
    fputs("old", f);
    fclose(f);
    const char *fifo = file("gate");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    truncator t = {file("t.npy"), fifo, sb.st_size / 2, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, truncate_at_the_gate, &t), 0);
    setenv("CLSCALE_STREAM_BUFFER", "16k", 1);
    setenv("OPENCL_LAYERS", getenv("CLS_FAULT_LAYER"), 1);
    setenv("CLSFAULT_GATE", fifo, 1);
    tool("normalize", "--method", "minmax", file("t.npy"), file("t-out.npy"));
    unsetenv("CLSFAULT_GATE");
    unsetenv("OPENCL_LAYERS");
    unsetenv("CLSCALE_STREAM_BUFFER");
    atomic_store(&t.finished, 1);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* lets a thread still in open() go */
    pthread_join(th, NULL);
    if (rd >= 0) close(rd);
    unlink(fifo);
    if (!t.done) fail_msg("the tool never came to its first kernel launch; stderr:\n%s", R.err);
    expect_status(1);
    if (!strstr(R.err, "t.npy") || (!strstr(R.err, "at byte") && !strstr(R.err, "changed size")))
        fail_msg("message does not name the file and where: %s", R.err);
    size_t n;
    char *old = slurp_file(file("t-out.npy"), &n);
    assert_int_equal(n, 3);
    free(old);
    assert_int_equal(temps_in(dir), 0);
}

/* A small tmpfs (root only; skipped elsewhere) as the output's disk. */
static void full_disk_fails_leaving_nothing(void **s)
{
    (void)s;
    const char *mnt = file("small");
    mkdir(mnt, 0755);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m") != 0) test_skip("cannot mount a tmpfs here (root only): %s", strerror(errno));
    write_npy(file("big.npy"), 32, 64, 64, 5);  /* 1 MiB + header: does not fit */
    size_t n0, n1;
    char *before = slurp_file(file("big.npy"), &n0);
    char out[4400];
    snprintf(out, sizeof out, "%s/out.npy", mnt);
    FILE *f = fopen(out, "w");
    fputs("old", f);
    fclose(f);
    tool("normalize", "--method", "minmax", file("big.npy"), out);
    int status = R.status;
    char err[16384];
    snprintf(err, sizeof err, "%s", R.err);
    char *old = slurp_file(out, &n1);
    size_t temps = temps_in(mnt);
    umount(mnt);
    assert_int_equal(status, 1);
    if (!strstr(err, "out.npy") || !strstr(err, strerror(ENOSPC))) fail_msg("message: %s", err);
    assert_int_equal(n1, 3);
    assert_memory_equal(old, "old", 3);
    assert_int_equal(temps, 0);
    char *after = slurp_file(file("big.npy"), &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    free(old);
}

/* The mask of a bool .npy written by the tool: its bytes after the header
 * (format 1.0, '|b1'); NULL when it is not one. */
static unsigned char *mask_bytes(const char *path, size_t want, char **whole)
{
    size_t n;
    *whole = slurp_file(path, &n);
    if (!*whole || n < 10) return NULL;
    size_t hl = 10 + ((size_t)(unsigned char)(*whole)[8] | (size_t)(unsigned char)(*whole)[9] << 8);
    if (hl > n || n - hl != want || !memmem(*whole, hl, "'|b1'", 5)) return NULL;
    return (unsigned char *)*whole + hl;
}

/* clean --mask-out over a 96 MB file streamed through 1 MiB buffers: the
 * library writes the mask (12 MB) through the tool's mapping while the
 * tool lets its pages go every 16 MiB of input (so that they do not pile
 * up in its RSS); a page let go and written again keeps what was written
 * (a shared file mapping): its bytes are the NaN and Inf of OUT (clipping
 * alone: what it masks becomes NaN, +-Inf stay). */
static void mask_out_of_a_file_of_many_buffers_is_whole(void **s)
{
    (void)s;
    const size_t r = 187500, c = 64;
    write_npy(file("mlarge.npy"), 1, r, c, 11);
    setenv("CLSCALE_STREAM_BUFFER", "1M", 1);
    tool("clean", "--sigma-clip", "3", "--mask-out", file("mmask.npy"), file("mlarge.npy"), file("mout.npy"));
    unsetenv("CLSCALE_STREAM_BUFFER");
    expect_status(0);
    char *whole;
    unsigned char *m = mask_bytes(file("mmask.npy"), r * c, &whole);
    if (!m) fail_msg("mask file is not a bool .npy of %zu values", r * c);
    size_t n;
    char *o = slurp_file(file("mout.npy"), &n);
    assert_true(n >= r * c * 8);
    const double *y = (const double *)(o + n - r * c * 8);
    size_t masked = 0, bad = 0;
    for (size_t i = 0; i < r * c; i++) {
        masked += m[i];
        bad += m[i] != !isfinite(y[i]);
    }
    if (bad || masked == 0) fail_msg("%zu mask bytes differ from OUT's NaN and Inf (%zu masked)", bad, masked);
    free(o);
    free(whole);
    unlink(file("mlarge.npy"));
    unlink(file("mout.npy"));
    unlink(file("mmask.npy"));
}

/* A mask that does not fit its disk (OUT fits on its own): exit 1 naming
 * the mask, and neither file written, the old ones as they were. */
static void full_disk_for_the_mask_leaves_neither(void **s)
{
    (void)s;
    const char *mnt = file("small-mask");
    mkdir(mnt, 0755);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0) test_skip("cannot mount a tmpfs here (root only): %s", strerror(errno));
    write_npy(file("mbig.npy"), 1, 1024, 128, 5); /* 1 MiB; its mask 128 KiB: does not fit */
    char mask[4400];
    snprintf(mask, sizeof mask, "%s/mask.npy", mnt);
    FILE *f = fopen(mask, "w");
    fputs("old", f);
    fclose(f);
    f = fopen(file("mold.npy"), "w");
    fputs("old", f);
    fclose(f);
    tool("clean", "--sigma-clip", "3", "--mask-out", mask, file("mbig.npy"), file("mold.npy"));
    int status = R.status;
    char err[16384];
    snprintf(err, sizeof err, "%s", R.err);
    size_t n1, n2;
    char *old_mask = slurp_file(mask, &n1);
    size_t temps = temps_in(mnt);
    umount(mnt);
    char *old_out = slurp_file(file("mold.npy"), &n2);
    assert_int_equal(status, 1);
    if (!strstr(err, "mask.npy") || !strstr(err, strerror(ENOSPC))) fail_msg("message: %s", err);
    assert_int_equal(n1, 3);
    assert_memory_equal(old_mask, "old", 3);
    assert_int_equal(n2, 3);
    assert_memory_equal(old_out, "old", 3);
    assert_int_equal(temps, 0);
    assert_int_equal(temps_in(dir), 0);
    free(old_mask);
    free(old_out);
    unlink(file("mbig.npy"));
    unlink(file("mold.npy"));
}

static int setup(void **state)
{
    (void)state;
    test_tmpdir(dir, sizeof dir, "tool-stream");
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(normalize_apply_discount_stream_like_mapped),
        cmocka_unit_test(cleaning_streams_like_mapped),
        cmocka_unit_test(light_curves_stream_like_mapped),
        cmocka_unit_test(clean_verbose_streams_like_mapped),
        cmocka_unit_test(describe_streams_like_mapped),
        cmocka_unit_test(peak_rss_of_every_operation_is_the_pool_not_the_file),
        cmocka_unit_test(robust_of_a_tall_group_reads_the_input_twice),
        cmocka_unit_test(progress_on_a_terminal_shows_bytes_rate_and_time_left),
        cmocka_unit_test(progress_of_several_passes_counts_them_and_ends_at_100),
        cmocka_unit_test(input_truncated_while_read_fails_leaving_nothing),
        cmocka_unit_test(full_disk_fails_leaving_nothing),
        cmocka_unit_test(mask_out_of_a_file_of_many_buffers_is_whole),
        cmocka_unit_test(full_disk_for_the_mask_leaves_neither),
    };
    return TEST_RUN("tool_stream", tests, setup, NULL);
}
