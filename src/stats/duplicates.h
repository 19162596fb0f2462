/* Exact duplicate-row counting on the host, from row hashes the devices
 * computed (api/describe.c). Pure C. */
#ifndef CLS_DUPLICATES_H
#define CLS_DUPLICATES_H

#include <stddef.h>
#include <stdint.h>

#include "clscale.h"

/* Rows i and j (each `cols` values of dtype t) are equal as pandas'
 * duplicated() sees them: value by value equal, NaN equal to NaN, -0.0 to
 * 0.0. Returns 1 when equal. */
int cls_rows_equal(const void *a, const void *b, size_t cols, cls_dtype t);

/* The number of rows among `nrows` rows (row r at data + r * cols values)
 * equal to an earlier one (pandas' DataFrame.duplicated().sum()), given
 * hash[r] for every row, equal for equal rows. Rows with equal hashes are
 * compared exactly, so a collision never miscounts.
 * @return CLS_OK, or CLS_E_NOMEM (then *out is unchanged). */
cls_status cls_count_duplicate_rows(const void *data, cls_dtype t, uint64_t nrows, size_t cols,
                                    const uint64_t *hash, uint64_t *out);

#endif
