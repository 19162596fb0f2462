/* CLS_FRIEND marks the few functions of libclscale that the MPI part
 * (src/mpi/, libclscale_mpi: a library of its own so that the core keeps
 * no MPI dependency) calls beyond clscale.h, so that it asks the planner's
 * one rule and reports in the one error channel instead of keeping copies:
 * exported from the shared library, as glibc's GLIBC_PRIVATE symbols are,
 * declared in no installed header and no part of the API; the MPI library
 * of the same build is their only caller outside the core. */
#ifndef CLS_UTIL_FRIEND_H
#define CLS_UTIL_FRIEND_H

#if defined(CLS_BUILD) && defined(__GNUC__)
#define CLS_FRIEND __attribute__((visibility("default")))
#else
#define CLS_FRIEND
#endif

#endif
