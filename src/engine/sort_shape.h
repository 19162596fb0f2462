/* The shape of cl/sort.cl's sort, which the exact selection's regimes
 * (quantiles/regime.h) plan with and every kernel build is given
 * (program.c): here, below both, so that the engine reads no header of
 * the layers above it. */
#ifndef CLS_ENGINE_SORT_SHAPE_H
#define CLS_ENGINE_SORT_SHAPE_H

/* cl/sort.cl: runs of at most this many keys are merge-sorted (their
 * windows hold no counters); 11-bit digits from CLS_SORT_WIDE_MIN rows on.
 * program.c passes both to the kernels. */
#define CLS_SORT_MERGE_MAX 96
#define CLS_SORT_WIDE_MIN 16384
/* cl/sort.cl: groups of CLS_SORT_MERGE_MAX + 1 to this many rows whose
 * eight neighbouring columns are one launch's work-item are sorted in
 * vector lanes (q_lanes8) rather than selected column by column. */
#define CLS_SORT_LANE_MAX 512

#endif
