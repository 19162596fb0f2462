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

#endif
