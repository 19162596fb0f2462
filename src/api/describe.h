/* The parts of cls_describe that describe.c (in memory) and
 * describe_stream.c (a file, through the stream's pool) share. */
#ifndef CLS_DESCRIBE_H
#define CLS_DESCRIBE_H

#include "quantiles/select.h"

/* outliers[e] += the values of entry e (g * C + column) of v with
 * |x - mean[e]| > thr[e], compared on the devices in the data's dtype. */
cls_status cls_describe_outliers(cls_context *ctx, const cls_qview *v, const double *mean, const double *thr,
                                 uint64_t *outliers);
/* hash[r] for each of v's G * Rg rows: equal for rows that pandas'
 * duplicated() takes as equal. */
cls_status cls_describe_hashes(cls_context *ctx, const cls_qview *v, uint64_t *hash);
/* The ranks of q25, the median and q75 (low and high each: 6). */
void cls_describe_ranks(void *user, uint64_t n, uint64_t *ranks);
/* c's quartiles from those 6 values of n (NaN when n = 0). */
void cls_describe_quartiles(cls_column_summary *c, uint64_t n, const double *pv, cls_dtype t);
/* c's count, missing, min, max, mean, std from cs; *mean and *thr (sigma
 * times the std) for the outliers. */
void cls_describe_moments(cls_column_summary *c, const cls_column_stats *cs, double sigma, double *mean, double *thr);
/* Copies a finished summary into the caller's arrays and fields. */
void cls_summary_put(cls_summary *out, const cls_summary *s);


#endif
