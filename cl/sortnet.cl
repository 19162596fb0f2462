/* The sorting networks shared by the short-column kernels: bitonic
 * (CLS_SORTNET, CLS_SORTNET_BY: quantile.cl's qsort32/qsort64) and
 * Batcher's odd-even merge (CLS_SORTNET_OEM_BY: clip.cl). Type-generic:
 * the macros are defined once, before both REAL sections.
 *
 * CLS_SORTNET(T, w, QN) sorts the private array T w[QN] ascending (QN a
 * power of two, a compile-time constant); CLS_SORTNET_BY takes the min and
 * max of two T (vectors need select(): Oclgrind 21.10 gets ?: with a
 * vector condition wrong). The loops unroll completely: no
 * branch and the same instructions for every work-item, so a CPU driver
 * runs the network across work-items in SIMD (minpd/maxpd). Equal values
 * (-0 and +0) may leave in either order. */
#ifndef CLS_SORTNET
#define CLS_SN_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CLS_SN_MAX(a, b) ((a) < (b) ? (b) : (a))
#define CLS_SORTNET(T, w, QN) CLS_SORTNET_BY(T, w, QN, CLS_SN_MIN, CLS_SN_MAX)
#define CLS_SORTNET_BY(T, w, QN, MIN, MAX)                                    \
    _Pragma("unroll") for (uint s_ = 2; s_ <= (QN); s_ <<= 1)                 \
    _Pragma("unroll") for (uint j_ = s_ >> 1; j_ > 0; j_ >>= 1)               \
    _Pragma("unroll") for (uint i_ = 0; i_ < (QN); i_++) {                    \
        uint l_ = i_ ^ j_;                                                    \
        if (l_ > i_) {                                                        \
            T a_ = (w)[i_], b_ = (w)[l_];                                     \
            T mn_ = MIN(a_, b_), mx_ = MAX(a_, b_);                           \
            (w)[i_] = (i_ & s_) ? mx_ : mn_;                                  \
            (w)[l_] = (i_ & s_) ? mn_ : mx_;                                  \
        }                                                                     \
    }
/* CLS_SORTNET_OEM_BY: the same contract with Batcher's odd-even merge
 * sort (543 compare-exchanges for 64 values instead of 672, 191 for 32
 * instead of 240), every exchange putting the minimum first; fewer
 * exchanges show directly in clip.cl's instruction-bound clipping
 * (docs/guide/cleaning-speed.md, "Sorting networks"). */
#define CLS_SORTNET_OEM_BY(T, w, QN, MIN, MAX)                                \
    _Pragma("unroll") for (uint p_ = 1; p_ < (QN); p_ <<= 1)                  \
    _Pragma("unroll") for (uint k_ = p_; k_ >= 1; k_ >>= 1)                   \
    _Pragma("unroll") for (uint j_ = k_ % p_; j_ + k_ <= (QN) - 1; j_ += 2 * k_) \
    _Pragma("unroll") for (uint i_ = 0; i_ < k_ && i_ + j_ + k_ < (QN); i_++) { \
        uint l_ = i_ + j_, h_ = l_ + k_;                                      \
        if (l_ / (2 * p_) == h_ / (2 * p_)) {                                 \
            T a_ = (w)[l_], b_ = (w)[h_];                                     \
            (w)[l_] = MIN(a_, b_);                                            \
            (w)[h_] = MAX(a_, b_);                                            \
        }                                                                     \
    }
/* CLS_SORTNET_OEM_UPTO: CLS_SORTNET_OEM_BY of the first QB values alone
 * (QB a power of two, the values past it already sorted: +Inf fill), by
 * the smallest network of 4, 8, 16 or QN that holds them: wide data with
 * groups of a row or a few would pay QN's network per column. */
#define CLS_SORTNET_OEM_UPTO(T, w, QB, QN, MIN, MAX)                          \
    if ((QB) <= 1) {                                                          \
    } else if ((QB) <= 4) {                                                   \
        CLS_SORTNET_OEM_BY(T, w, 4, MIN, MAX);                                \
    } else if ((QB) <= 8) {                                                   \
        CLS_SORTNET_OEM_BY(T, w, 8, MIN, MAX);                                \
    } else if ((QB) <= 16) {                                                  \
        CLS_SORTNET_OEM_BY(T, w, 16, MIN, MAX);                               \
    } else {                                                                  \
        CLS_SORTNET_OEM_BY(T, w, QN, MIN, MAX);                               \
    }
/* CLS_SORTNET_OEM_FROM: the network's merges from runs of 2^LP0 sorted
 * values on (the stages that CLS_SORTNET_OEM_BY on each run of 2^LP0 has
 * done), in loops, not unrolled, the exchanges' indices computed at run
 * time with shifts. qsort128 sorts its halves unrolled, then merges them
 * so: unrolled whole, PoCL took 37 s to compile it cold; in loops whole,
 * it sorted 1.7x slower (a division per exchange: 6x). */
#define CLS_SORTNET_OEM_FROM(T, w, QN, LP0, MIN, MAX)                         \
    for (uint lp_ = (LP0); (1u << lp_) < (QN); lp_++)                         \
        for (uint k_ = 1u << lp_; k_ >= 1; k_ >>= 1)                          \
            for (uint j_ = k_ & ((1u << lp_) - 1); j_ + k_ <= (QN) - 1; j_ += 2 * k_) \
                for (uint i_ = 0; i_ < k_ && i_ + j_ + k_ < (QN); i_++) {     \
                    uint l_ = i_ + j_, h_ = l_ + k_;                          \
                    if ((l_ >> (lp_ + 1)) == (h_ >> (lp_ + 1))) {             \
                        T a_ = (w)[l_], b_ = (w)[h_];                         \
                        (w)[l_] = MIN(a_, b_);                                \
                        (w)[h_] = MAX(a_, b_);                                \
                    }                                                         \
                }
/* CLS_SORTNET_OEM_AT: the same network on values reached through AT(i),
 * an lvalue macro (clip_local.cl: a column in local memory, w[i * LW +
 * lid]), the same exchanges in the same order as CLS_SORTNET_OEM_BY; its
 * loops unrolled as the pragma U says ("unroll": completely; "unroll 1":
 * not at all, the exchanges' indices computed at run time). */
#define CLS_SORTNET_OEM_AT(T, AT, QN, MIN, MAX, U)                            \
    _Pragma(U) for (uint p_ = 1; p_ < (QN); p_ <<= 1)                         \
    _Pragma(U) for (uint k_ = p_; k_ >= 1; k_ >>= 1)                          \
    _Pragma(U) for (uint j_ = k_ % p_; j_ + k_ <= (QN) - 1; j_ += 2 * k_)     \
    _Pragma(U) for (uint i_ = 0; i_ < k_ && i_ + j_ + k_ < (QN); i_++) {      \
        uint l_ = i_ + j_, h_ = l_ + k_;                                      \
        if (l_ / (2 * p_) == h_ / (2 * p_)) {                                 \
            T a_ = AT(l_), b_ = AT(h_);                                       \
            AT(l_) = MIN(a_, b_);                                             \
            AT(h_) = MAX(a_, b_);                                             \
        }                                                                     \
    }
#endif
