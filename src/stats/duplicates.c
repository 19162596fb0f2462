/* Exact duplicate rows (duplicates.h): rows sorted by hash, then every run
 * of equal hashes split into its distinct rows by exact comparison. A run
 * holds one distinct row but for a collision, so the cost is one
 * comparison per duplicate. */
#include <math.h>
#include <stdlib.h>

#include "stats/duplicates.h"

typedef struct hrow {
    uint64_t hash, row;
} hrow;

static int by_hash(const void *x, const void *y)
{
    const hrow *a = x, *b = y;
    if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

int cls_rows_equal(const void *a, const void *b, size_t cols, cls_dtype t)
{
    for (size_t i = 0; i < cols; i++) {
        double u, v;
        if (t == CLS_F64) {
            u = ((const double *)a)[i];
            v = ((const double *)b)[i];
        } else {
            u = ((const float *)a)[i];
            v = ((const float *)b)[i];
        }
        if (!(u == v || (isnan(u) && isnan(v)))) return 0;
    }
    return 1;
}

cls_status cls_count_duplicate_rows(const void *data, cls_dtype t, uint64_t nrows, size_t cols,
                                    const uint64_t *hash, uint64_t *out)
{
    size_t es = t == CLS_F64 ? 8 : 4;
    hrow *h = malloc((size_t)(nrows ? nrows : 1) * sizeof *h);
    uint64_t *reps = malloc((size_t)(nrows ? nrows : 1) * sizeof *reps);
    if (!h || !reps) {
        free(h);
        free(reps);
        return CLS_E_NOMEM;
    }
    for (uint64_t r = 0; r < nrows; r++) {
        h[r].hash = hash[r];
        h[r].row = r;
    }
    qsort(h, (size_t)nrows, sizeof *h, by_hash);
    uint64_t dup = 0;
    for (uint64_t i = 0; i < nrows;) {
        uint64_t j = i + 1;
        while (j < nrows && h[j].hash == h[i].hash) j++;
        /* rows i..j share a hash; in row order, each either equals a
           distinct row seen before it (a duplicate) or is a new one */
        size_t nrep = 0;
        for (uint64_t k = i; k < j; k++) {
            const char *row = (const char *)data + (size_t)h[k].row * cols * es;
            int seen = 0;
            for (size_t m = 0; m < nrep && !seen; m++)
                seen = cls_rows_equal((const char *)data + (size_t)reps[m] * cols * es, row, cols, t);
            if (seen) dup++;
            else reps[nrep++] = h[k].row;
        }
        i = j;
    }
    free(h);
    free(reps);
    *out = dup;
    return CLS_OK;
}
