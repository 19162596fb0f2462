/* The scaler's params for the elementwise pass (APPLY slices): y = ((x -
 * shi) - slo) * m + o per group and column, four planes in the data's
 * dtype, made from the fitted statistics.
 * Owns: when they are made. A slice's params are computed as the slice is
 * enqueued when slices share few entries (matrix scope of several
 * matrices: a slice of rows spans one or two groups), so that no table
 * of all of them is written and read again (a serial pass before the
 * run). When slices share many (batch scope, or one matrix cut into
 * slices of rows: every slice needs the same row of params), the table
 * is made once, before the run, and slices copy their part (docs/PERFORMANCE.md, "Params"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

/* Slices that would compute at least this many times the table's entries
 * between them take the table instead: four slices of rows of one matrix
 * (60 rows x 266,666 columns) each spanned every column, and made every
 * column's params four times on a host thread the kernels needed; slices
 * of a batch of matrices span one or two each (seed-A's make each entry
 * two to four times, cheaper than a table of 1.8 M entries written before
 * the run and read back from memory). */
#define CLS_PARAMS_SHARED 4

unsigned cls_params_planes(const cls_job *job) { return job->imp_on ? 5 : 4; }

/* The fifth plane: the fill `v` as the scaler maps it (clipped like the
 * values), NaN for no fill. */
static double scaled_fill(const cls_job *job, const cls_params *pr, double v)
{
    if (!isfinite(v)) return NAN;
    double t = (v - pr->shift) * pr->m + pr->o;
    if (job->clip) t = t < job->lo ? job->lo : t > job->hi ? job->hi : t;
    return t;
}

/* Entry i of the four planes `n` long at dst: the params of column stats c
 * (the fifth, with imputation: the scaled fill of table entry `e`).
 * float32 splits the shift into a high and a low part, so that x - hi - lo
 * keeps the mean's precision where it matters. */
static void put(const cls_job *job, const cls_column_stats *c, size_t e, void *dst, size_t n, size_t i)
{
    cls_params pr = cls_params_with(c, job->pscaler, &job->popts, job->pinverse, job->dtype);
    double sf = job->imp_on ? scaled_fill(job, &pr, job->ifill ? job->ifill[e] : NAN) : 0;
    if (job->dtype == CLS_F64) {
        double *p = dst;
        p[i] = pr.shift;
        p[n + i] = 0;
        p[2 * n + i] = pr.m;
        p[3 * n + i] = pr.o;
        if (job->imp_on) p[4 * n + i] = sf;
    } else {
        float *p = dst;
        float shi = (float)pr.shift;
        p[i] = shi;
        p[n + i] = (float)(pr.shift - (double)shi);
        p[2 * n + i] = (float)pr.m;
        p[3 * n + i] = (float)pr.o;
        if (job->imp_on) p[4 * n + i] = (float)sf;
    }
}

cls_status cls_params_prepare(cls_job *job)
{
    free(job->ptab);
    job->ptab = NULL;
    if (!job->pcol) return CLS_OK;
    uint64_t table = job->G * job->C, used = 0;
    for (size_t i = 0; i < job->nsl; i++) used += job->sl[i].ngroups * job->sl[i].ncols;
    /* a resident call (job->res) takes the table always: its slices follow
     * each other on one queue without the host between them */
    if (used < CLS_PARAMS_SHARED * table && !job->res) return CLS_OK;
    unsigned planes = cls_params_planes(job);
    job->ptab = malloc(planes * (size_t)table * job->es);
    if (!job->ptab) return cls_fail(job->ctx, CLS_E_NOMEM, "out of memory for params (%zu bytes)",
                                    planes * (size_t)table * job->es);
    for (size_t i = 0; i < table; i++) put(job, &job->pcol[i], i, job->ptab, (size_t)table, i);
    return CLS_OK;
}

void cls_params_pack(const cls_job *job, const cls_slice *s, void *dst)
{
    size_t n = (size_t)s->ngroups * s->ncols, es = job->es;
    size_t table = (size_t)(job->G * job->C);
    for (uint64_t g = 0; g < s->ngroups; g++) {
        size_t from = (size_t)(s->group0 + g) * job->C + s->col0, at = (size_t)g * s->ncols;
        if (job->ptab) {
            for (unsigned p = 0; p < cls_params_planes(job); p++)
                memcpy((char *)dst + (p * n + at) * es, (const char *)job->ptab + (p * table + from) * es,
                       s->ncols * es);
        } else {
            for (size_t c = 0; c < s->ncols; c++) put(job, &job->pcol[from + c], from + c, dst, n, at + c);
        }
    }
}

void cls_params_free(cls_job *job)
{
    free(job->ptab);
    job->ptab = NULL;
}
