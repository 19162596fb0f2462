/* The bitonic sorting network shared by the short-column kernels
 * (quantile.cl's qsort32/qsort64, clip.cl). Type-generic: the macro is
 * defined once, before both REAL sections.
 *
 * CLS_SORTNET(T, w, QN) sorts the private array T w[QN] ascending (QN a
 * power of two, a compile-time constant). The loops unroll completely: no
 * branch and the same instructions for every work-item, so a CPU driver
 * runs the network across work-items in SIMD (minpd/maxpd). Equal values
 * (-0 and +0) may leave in either order. */
#ifndef CLS_SORTNET
#define CLS_SORTNET(T, w, QN)                                                 \
    _Pragma("unroll") for (uint s_ = 2; s_ <= (QN); s_ <<= 1)                 \
    _Pragma("unroll") for (uint j_ = s_ >> 1; j_ > 0; j_ >>= 1)               \
    _Pragma("unroll") for (uint i_ = 0; i_ < (QN); i_++) {                    \
        uint l_ = i_ ^ j_;                                                    \
        if (l_ > i_) {                                                        \
            T a_ = (w)[i_], b_ = (w)[l_];                                     \
            T mn_ = a_ < b_ ? a_ : b_, mx_ = a_ < b_ ? b_ : a_;               \
            (w)[i_] = (i_ & s_) ? mx_ : mn_;                                  \
            (w)[l_] = (i_ & s_) ? mn_ : mx_;                                  \
        }                                                                     \
    }
#endif
