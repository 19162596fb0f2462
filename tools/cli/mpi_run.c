/* clscale normalize | apply | discount --mpi, run by every rank of
 * `mpirun -n N clscale ...` over the same IN on a file system the ranks
 * share.
 *
 * Who does what: the rows of IN (batch x rows, flattened) are cut into N
 * contiguous ranges, one per rank, when the statistics are over all rows
 * (--scope batch, or a 2-D IN, whose one matrix has the same statistics
 * either way) or for a discount; otherwise (--scope matrix, 3-D) each rank
 * takes a contiguous range of whole matrices and needs no communication to
 * fit. Light curves (a trend, bins) always take whole matrices, a 2-D IN's
 * one matrix on rank 0 (a window spans a matrix's rows); with --bin, OUT
 * has one row per bin and each rank writes its matrices' bins. Ranges
 * differ by one row (matrix) at most; a rank may get none.
 *
 * All or nothing: after each step (inputs opened and alike on every rank,
 * output created, data computed, data on disk, renamed) the ranks combine
 * their statuses (cls_mpi_agree); on any failure every rank exits 1, rank 0
 * removes the temporary, and rank 0 prints the failing rank's message. OUT
 * appears, by one rename on rank 0, only after every rank's range is on
 * disk.
 *
 * Data moves through the library's streaming calls (cls_stream_*,
 * cls_mpi_fit_transform): each rank reads its range of IN with
 * pread and writes its range of the temporary with pwrite through a fixed
 * pool of buffers, so a rank's part may be larger than its node's memory.
 * A rank killed by a signal ends the job through mpirun, which names
 * the rank and ends the others with SIGTERM: every rank registers the
 * temporary with the tool's signal guard (guard.h), so the first survivor to
 * take the signal removes it; OUT does not appear. (Only when every rank is
 * killed at once, SIGKILL to the whole job, may the hidden temporary stay.)
 *
 * Where OUT and --stats-out go is checked first, by rank 0 with the checks
 * of a run without --mpi (output.c), and every rank exits with its verdict.
 *
 * Calls the library (clscale.h, clscale_mpi.h), the .npy files (npy.h),
 * mpi_out.c, output.c's checks and cli.h's helpers. */
#define CLS_CLI_MPI_INTERNAL
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clscale_mpi.h"
#include "guard.h"
#include "mpi_cmd.h"
#include "output.h"

typedef struct rank_state {
    const cli_mpi_job *j;
    MPI_Comm     comm;
    int          rank, size;
    cls_npy      in, fac;
    int          in_fd;      /* IN, read by the streaming calls */
    uint64_t     in_off;     /* where IN's array starts in the file */
    cls_stats   *stats;      /* apply: loaded; normalize: fitted */
    cls_context *ctx;
    mpi_out      out;
    int          by_rows;    /* ranges of rows (else of matrices) */
    size_t       first, count, unit;  /* this rank's range, in rows or matrices; elements per row or matrix */
    size_t       orows, ounit;        /* OUT's rows per matrix and elements per row or matrix (bins reduced:
                                         fewer than IN's) */
    size_t       es;         /* bytes per element */
    int          guard_slot; /* the temporary's registration with the signal guard, or -1 */
    char         err[1536];
} rank_state;

/* Prints the combined failure once, on rank 0: the message (the failed
 * call's cls_last_error(): the context's, or NULL's for a call without
 * one) names the failing rank (mpirun forwards every rank's stderr, so one
 * line is enough). */
static void report_failure(const rank_state *r, const char *why)
{
    if (r->rank == 0) cli_error(EXIT_FAIL, "%s --mpi: %s", r->j->name, why);
}

/* Combines this rank's outcome of a step with the others': 0 when every
 * rank succeeded, else 1 on every rank. */
static int step(rank_state *r, cls_status st, const char *why)
{
    if (cls_mpi_agree(r->comm, st, st == CLS_OK ? NULL : why) == CLS_OK) return 0;
    report_failure(r, cls_last_error(NULL));
    return 1;
}

static cls_status failf(rank_state *r, cls_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cls_status failf(rank_state *r, cls_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    return st;
}

static cls_status open_npy(rank_state *r, const char *path, cls_npy *f, int need2d)
{
    cls_status st = cls_npy_open(path, f, r->err, sizeof r->err);
    if (st == CLS_OK && need2d && f->ndim < 2)
        st = failf(r, CLS_E_FORMAT, "%s: 1 dimension (shape (%zu,)); clscale takes 2-D rows x cols or 3-D "
                   "batch x rows x cols", path, f->shape[0]);
    return st;
}

/* Step 1, local: IN, factors or statistics, and the context. */
static cls_status open_inputs(rank_state *r)
{
    const cli_mpi_job *j = r->j;
    cls_status st = open_npy(r, j->in, &r->in, 1);
    if (st == CLS_OK) {
        r->in_off = (uint64_t)((const char *)r->in.data - (const char *)r->in.map);
        r->in_fd = open(j->in, O_RDONLY | O_CLOEXEC);
        if (r->in_fd < 0) st = failf(r, CLS_E_IO, "%s: cannot open: %s", j->in, strerror(errno));
    }
    if (st == CLS_OK && j->cmd == CLI_MPI_DISCOUNT) st = open_npy(r, j->factors, &r->fac, 0);
    if (st == CLS_OK && j->cmd == CLI_MPI_APPLY && (st = cls_stats_load(j->stats, &r->stats)) != CLS_OK)
        failf(r, st, "%s", cls_last_error(NULL));
    return st;
}

/* Every rank must see the same IN: rank 0's shape against this rank's. */
static cls_status same_input(rank_state *r)
{
    uint64_t mine[5] = {(uint64_t)r->in.dtype, r->in.ndim, r->in.shape[0], r->in.shape[1], r->in.shape[2]};
    uint64_t root[5];
    memcpy(root, mine, sizeof root);
    if (MPI_Bcast(root, 5, MPI_UINT64_T, 0, r->comm) != MPI_SUCCESS)
        return failf(r, CLS_E_IO, "MPI_Bcast of IN's shape failed");
    if (memcmp(root, mine, sizeof mine))
        return failf(r, CLS_E_FORMAT, "%s is not the file rank 0 read (its dtype or shape differs): put IN on a "
                     "file system that every rank shares", r->j->in);
    cls_config cfg = {0};
    cfg.devices = r->j->devices;
    cls_status st = cls_context_create(&cfg, &r->ctx);
    if (st != CLS_OK) failf(r, st, "%s", r->ctx ? cls_last_error(r->ctx) : "out of memory");
    return st;
}

/* [first, first + count) of n things for this rank: the first n % size
 * ranks take one more. */
static void share(rank_state *r, size_t n)
{
    size_t q = n / (size_t)r->size, extra = n % (size_t)r->size, k = (size_t)r->rank;
    r->first = q * k + (k < extra ? k : extra);
    r->count = q + (k < extra);
}

static void plan(rank_state *r)
{
    const cls_npy *in = &r->in;
    cls_scope scope = r->j->p.scope;
    if (r->j->cmd == CLI_MPI_APPLY) {
        cls_stats_info si;
        cls_stats_describe(r->stats, &si);
        scope = si.scope;
    }
    /* light curves: whole matrices (their series), a 2-D IN's one to rank 0 */
    r->by_rows = !r->j->light_curve && (r->j->cmd == CLI_MPI_DISCOUNT || scope == CLS_SCOPE_BATCH || in->batch == 1);
    r->es = in->dtype == CLS_F64 ? 8 : 4;
    r->unit = r->by_rows ? in->cols : in->rows * in->cols;
    r->orows = in->rows;
    if (r->j->reduce && r->j->p.clean && r->j->p.clean->bin_rows)
        r->orows = (in->rows + r->j->p.clean->bin_rows - 1) / r->j->p.clean->bin_rows;
    r->ounit = r->by_rows ? in->cols : r->orows * in->cols;
    share(r, r->by_rows ? in->batch * in->rows : in->batch);
}

/* This rank's part of IN or OUT: the array that starts `base` bytes into
 * the file `fd`, from this rank's first row or matrix; rows 0 or matrices 0
 * when it has none. */
static cls_array part(const rank_state *r, int fd, uint64_t base, const char *name, int out)
{
    size_t unit = out ? r->ounit : r->unit;
    cls_array a = {.where = CLS_IN_FILE, .fd = fd, .offset = base + r->first * unit * r->es, .dtype = r->in.dtype, .batch = 0, .rows = 0, .cols = r->in.cols, .path = name};
    if (r->by_rows) {
        a.batch = 1;
        a.rows = r->count;
    } else {
        a.batch = r->count;
        a.rows = out ? r->orows : r->in.rows;
    }
    return a;
}

static cls_status local_fail(rank_state *r, cls_status st)
{
    if (st != CLS_OK) failf(r, st, "%s", cls_last_error(r->ctx));
    return st;
}

/* A cleaning stage over rows (batch scope): this rank's rows of IN (its
 * map) cleaned across the ranks into a buffer of its rows of OUT, then
 * written at their offset: a rank's part must fit in its memory. */
static int clean_rows(rank_state *r, const cls_pipeline *p, cls_array *y, cls_stats **fitted)
{
    size_t bytes = r->count * r->unit * r->es;
    char *buf = bytes ? malloc(bytes) : NULL;
    cls_status st = bytes && !buf ? failf(r, CLS_E_NOMEM, "out of memory for this rank's %zu bytes of OUT (a "
                                          "cleaning stage under --mpi holds a rank's rows in memory)", bytes)
                                  : CLS_OK;
    if (step(r, st, r->err)) {
        free(buf);
        return 1;
    }
    cls_array x = {.data = bytes ? (char *)r->in.data + r->first * r->unit * r->es : NULL, .dtype = r->in.dtype, .batch = 1, .rows = r->count, .cols = r->in.cols};
    cls_array out = x;
    out.data = buf;
    if (cls_mpi_fit_transform(r->ctx, r->comm, p, &x, &out, fitted) != CLS_OK) {
        free(buf);
        report_failure(r, cls_last_error(r->ctx));
        return 1;
    }
    for (size_t at = 0; st == CLS_OK && at < bytes;) {
        ssize_t k = pwrite(y->fd, buf + at, bytes - at, (off_t)(y->offset + at));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) st = failf(r, CLS_E_IO, "%s: write of %zu bytes at offset %llu failed: %s", r->j->out,
                               bytes - at, (unsigned long long)(y->offset + at), k < 0 ? strerror(errno) : "no space");
        else at += (size_t)k;
    }
    free(buf);
    return step(r, st, r->err);
}

/* normalize: fit across ranks, transform locally, statistics onto rank 0. */
static int do_normalize(rank_state *r, const cls_array *x, cls_array *y)
{
    cls_pipeline p = r->j->p;
    if (r->by_rows) p.scope = CLS_SCOPE_BATCH;  /* also for a 2-D IN: the same statistics */
    cls_stats *fitted = NULL;
    cls_status st = cls_mpi_fit_transform(r->ctx, r->comm, &p, x, y, r->j->stats_out ? &fitted : NULL);
    if (st == CLS_E_UNSUPPORTED && p.clean && r->by_rows) {
        /* a cleaning stage the library does not stream across ranks (it
         * says so on every rank before any pass): the rows in memory */
        if (clean_rows(r, &p, y, r->j->stats_out ? &fitted : NULL)) return 1;
    } else if (st != CLS_OK) {
        report_failure(r, cls_last_error(r->ctx));
        return 1;
    }
    if (!r->j->stats_out) return 0;
    cls_stats *all = NULL;
    st = cls_mpi_stats_gather(r->comm, 0, fitted, &all);
    cls_stats_destroy(fitted);
    if (st != CLS_OK) {
        report_failure(r, cls_last_error(NULL));
        return 1;
    }
    if (r->rank == 0 && r->j->p.scope == CLS_SCOPE_MATRIX && r->by_rows) {
        /* a 2-D IN fitted as one batch: record the scope the user asked for */
        cls_stats_info si;
        cls_stats_describe(all, &si);
        si.scope = CLS_SCOPE_MATRIX;
        cls_stats *m = NULL;
        if (cls_stats_create(&si, NULL, &m) == CLS_OK)
            memcpy(cls_stats_columns(m), cls_stats_columns(all), si.groups * si.cols * sizeof(cls_column_stats));
        cls_stats_destroy(all);
        all = m;  /* NULL when out of memory: saving fails below */
    }
    r->stats = all;
    return 0;
}

/* apply: each rank transforms its part with the statistics of its groups. */
static cls_status do_apply(rank_state *r, const cls_array *x, cls_array *y)
{
    cls_stats_info si;
    cls_stats_describe(r->stats, &si);
    cls_pipeline p, *pp = NULL;
    if (r->j->inverse) {
        memset(&p, 0, sizeof p);
        p.scaler = si.scaler;
        p.scope = si.scope;
        p.lo = si.lo;
        p.hi = si.hi;
        p.clip = si.clip;
        p.inverse = 1;
        pp = &p;
    }
    if (!r->count) return CLS_OK;
    if (r->by_rows) return local_fail(r, cls_transform(r->ctx, pp, r->stats, x, y));
    if (si.groups != r->in.batch || si.cols != r->in.cols)
        return failf(r, CLS_E_ARG, "statistics of %zu group(s) x %zu columns do not fit %s (%zu matrices x %zu "
                     "columns, scope matrix)", si.groups, si.cols, r->j->in, r->in.batch, r->in.cols);
    si.groups = r->count;
    cls_stats *mine = NULL;
    cls_status st = cls_stats_create(&si, NULL, &mine);
    if (st != CLS_OK) return failf(r, st, "out of memory for statistics");
    memcpy(cls_stats_columns(mine), cls_stats_columns(r->stats) + r->first * si.cols,
           r->count * si.cols * sizeof(cls_column_stats));
    st = local_fail(r, cls_transform(r->ctx, pp, mine, x, y));
    cls_stats_destroy(mine);
    return st;
}

/* discount: this rank's rows in pieces that the factors cover with one
 * contiguous view each: a run of whole matrices, or rows of one matrix. */
static cls_status do_discount(rank_state *r)
{
    const cls_npy *in = &r->in, *f = &r->fac;
    size_t B = in->batch, R = in->rows, C = in->cols;
    if ((f->batch != 1 && f->batch != B) || (f->rows != 1 && f->rows != R) || (f->cols != 1 && f->cols != C))
        return failf(r, CLS_E_ARG, "factors of shape %zu x %zu x %zu do not broadcast against data %zu x %zu x "
                     "%zu (each dimension must equal the data's or be 1)", f->batch, f->rows, f->cols, B, R, C);
    size_t fes = f->dtype == CLS_F64 ? 8 : 4;
    size_t row = r->first, end = r->first + r->count;
    int whole = f->batch == 1 && f->rows == 1;  /* the factors do not vary by row: one piece */
    while (row < end) {
        size_t b = row / R, i = row % R, nb = 1, k;
        cls_array x = {.where = CLS_IN_FILE, .fd = r->in_fd, .offset = r->in_off + row * C * r->es, .dtype = in->dtype, .batch = 1, .rows = 0, .cols = C, .path = r->j->in};
        cls_array fv = {.data = f->data, .dtype = f->dtype, .batch = 1, .rows = 1, .cols = f->cols};
        size_t foff = f->batch > 1 ? b * f->rows * f->cols : 0;
        if (whole) {
            k = end - row;
            x.rows = k;
        } else if (i == 0 && end - row >= R) {
            nb = (end - row) / R;
            k = nb * R;
            x.batch = nb;
            x.rows = R;
            fv.batch = f->batch > 1 ? nb : 1;
            fv.rows = f->rows;
        } else {
            k = (end - row < R - i) ? end - row : R - i;
            x.rows = k;
            if (f->rows > 1) {
                foff += i * f->cols;
                fv.rows = k;
            }
        }
        fv.data = (char *)f->data + foff * fes;
        cls_array y = x;
        y.fd = mpi_out_fd(&r->out);
        y.offset = r->out.data_offset + row * C * r->es;
        y.path = r->j->out;
        cls_pipeline p = {0};
        p.factors = &fv;
        cls_status st = local_fail(r, cls_fit_transform(r->ctx, &p, &x, &y, NULL));
        if (st != CLS_OK) return st;
        row += k;
    }
    return CLS_OK;
}

/* --verbose: one line per rank on rank 0. */
static void summary(const rank_state *r, double seconds)
{
    cls_mpi_report rep;
    memset(&rep, 0, sizeof rep);
    if (r->j->cmd == CLI_MPI_NORMALIZE) cls_mpi_last_report(&rep);
    enum { N = 11 };
    double mine[N] = {(double)r->first, (double)r->count, seconds, rep.fit, rep.check, rep.reduce,
                      (double)rep.reduce_bytes, rep.transform, rep.clean, rep.clean_reduce, (double)rep.clean_passes};
    double *all = r->rank == 0 ? malloc((size_t)r->size * sizeof mine) : NULL;
    MPI_Gather(mine, N, MPI_DOUBLE, all, N, MPI_DOUBLE, 0, r->comm);
    if (!all) return;
    const char *what = r->by_rows ? "rows" : "matrices";
    for (int k = 0; k < r->size; k++) {
        const double *v = all + N * k;
        fprintf(stderr, "clscale: %s --mpi: rank %d of %d: %s [%.0f, %.0f), %.3f s", r->j->name, k, r->size,
                what, v[0], v[0] + v[1], v[2]);
        if (r->j->cmd == CLI_MPI_NORMALIZE && v[10] > 0)
            fprintf(stderr, " (cleaning %.3f s, of it hooks' collectives %.4f s, %.0f moments passes merged)", v[8],
                    v[9], v[10]);
        /* no fit nor transform of their own: the scaler ran in the cleaning's last pass, or there is none */
        int scaled_apart = !(v[10] > 0 && v[3] == 0 && v[7] == 0);
        char red[32];
        if (r->j->cmd == CLI_MPI_NORMALIZE && scaled_apart)
            fprintf(stderr, " (fit %.3f s, checks %.4f s, allreduce %.4f s of %s, transform %.3f s)",
                    v[3], v[4], v[5], cli_si(red, sizeof red, v[6], "B"), v[7]);
        fputc('\n', stderr);
    }
    free(all);
}

/* Every rank (the temporary is on a folder they share) registers rank 0's
 * temporary with its signal guard before rank 0 creates it (mpi_out_open),
 * so that whichever rank survives a dead one removes it when mpirun ends
 * the job. */
static void guard_temporary(void *user, const char *tmp)
{
    rank_state *r = user;
    cli_guard_lock();
    r->guard_slot = cli_guard_add(tmp);  /* -1 (a path too long): not removed on a signal */
    cli_guard_unlock();
}

static int run_rank(rank_state *r)
{
    const cli_mpi_job *j = r->j;
    if (step(r, open_inputs(r), r->err)) return EXIT_FAIL;
    if (step(r, same_input(r), r->err)) return EXIT_FAIL;
    plan(r);
    size_t oshape[3] = {r->in.shape[0], r->in.shape[1], r->in.shape[2]};
    oshape[r->in.ndim == 3 ? 1 : 0] = r->orows;
    cls_status opened = mpi_out_open(r->comm, j->out, r->in.dtype, r->in.ndim, oshape,
                                     r->count * r->ounit * r->es, guard_temporary, r, &r->out, r->err,
                                     sizeof r->err);
    if (step(r, opened, r->err)) return EXIT_FAIL;

    double t0 = MPI_Wtime();
    cls_array x = part(r, r->in_fd, r->in_off, j->in, 0);
    cls_array y = part(r, mpi_out_fd(&r->out), r->out.data_offset, j->out, 1);
    if (j->cmd == CLI_MPI_NORMALIZE) {
        if (do_normalize(r, &x, &y)) return EXIT_FAIL;
    } else if (step(r, j->cmd == CLI_MPI_APPLY ? do_apply(r, &x, &y) : do_discount(r), r->err)) {
        return EXIT_FAIL;
    }
    if (step(r, mpi_out_flush(&r->out, j->out, r->err, sizeof r->err), r->err)) return EXIT_FAIL;
    double seconds = MPI_Wtime() - t0;

    /* rank 0 alone: the statistics, then the one rename */
    cls_status st = CLS_OK;
    if (r->rank == 0 && j->stats_out) {
        if (!r->stats) st = failf(r, CLS_E_NOMEM, "out of memory for the statistics");
        else if ((st = cls_stats_save(r->stats, j->stats_out)) != CLS_OK) failf(r, st, "%s", cls_last_error(NULL));
    }
    if (r->rank == 0 && st == CLS_OK) {
        cli_guard_lock();
        st = mpi_out_commit(&r->out, r->err, sizeof r->err);
        if (st == CLS_OK) cli_guard_forget(r->guard_slot);  /* renamed: nothing left to remove */
        cli_guard_unlock();
    }
    if (step(r, st, r->err)) return EXIT_FAIL;
    if (j->verbose) summary(r, seconds);
    return EXIT_OK;
}

/* Rank 0's checks of OUT and --stats-out, those of a run without --mpi
 * (output.c: a folder, a socket, an input, a folder that is missing or not
 * writable: exit 2), plus one of its own: the ranks share OUT through a
 * mapping, so OUT must be a file, not a device or pipe. @return 0 or the
 * exit status, after printing why. */
static int check_targets(const cli_mpi_job *j)
{
    const char *const inputs[] = {j->in, j->stats, j->factors};
    cli_output o, so;
    memset(&so, 0, sizeof so);
    int rc = cli_output_check(&o, j->name, NULL, j->out, inputs, 3, NULL);
    if (!rc && o.stream)
        rc = cli_output_refuse(&o, "is a device or pipe; under --mpi the ranks write OUT as a file they share "
                                   "(run without --mpi to stream into it)");
    if (!rc && j->stats_out) rc = cli_output_check(&so, j->name, "--stats-out", j->stats_out, inputs, 3, &o);
    cli_output_discard(&so, NULL);
    cli_output_discard(&o, NULL);
    return rc;
}

/* Every rank's exit status for the targets: rank 0 decides. */
static int agree_on_targets(const rank_state *r)
{
    int rc = r->rank == 0 ? check_targets(r->j) : 0;
    if (MPI_Bcast(&rc, 1, MPI_INT, 0, r->comm) != MPI_SUCCESS)
        return cli_error(EXIT_FAIL, "%s --mpi: MPI_Bcast of rank 0's check of OUT failed", r->j->name);
    return rc;
}

int cli_mpi_run(const cli_mpi_job *job)
{
    int provided;
    /* before MPI starts its threads, so that they inherit the blocked
     * SIGTERM: mpirun's SIGTERM reaches the guard's thread */
    cli_guard_start(0);
    /* only this thread calls MPI; the library's threads never do */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return cli_error(EXIT_FAIL, "%s --mpi: MPI_Init_thread failed", job->name);
    rank_state r;
    memset(&r, 0, sizeof r);
    r.j = job;
    r.comm = MPI_COMM_WORLD;
    r.out.fd = -1;
    r.in_fd = -1;
    r.guard_slot = -1;
    MPI_Comm_rank(r.comm, &r.rank);
    MPI_Comm_size(r.comm, &r.size);
    /* before anything is read or computed, as without --mpi */
    int rc = agree_on_targets(&r);
    if (rc) {
        MPI_Finalize();
        return rc;
    }
    rc = run_rank(&r);
    mpi_out_discard(&r.out);  /* after a commit: nothing left to remove */
    cls_context_destroy(r.ctx);
    cls_stats_destroy(r.stats);
    cls_npy_close(&r.fac, 0, NULL, 0);
    cls_npy_close(&r.in, 0, NULL, 0);
    if (r.in_fd >= 0) close(r.in_fd);
    MPI_Finalize();
    cli_guard_stop();
    return rc;
}
