/* The one error channel's writers (util/error.c): a call's message, read
 * back by cls_last_error(). */
#ifndef CLS_UTIL_FAIL_H
#define CLS_UTIL_FAIL_H

#include "clscale.h"

#if defined(__GNUC__)
#define CLS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLS_PRINTF(f, a)
#endif

/* Sets the context's message (printf-style) and returns `s`; the calling
 * thread's too (cls_thread_error). NULL ctx: only returns `s`. */
cls_status cls_fail(cls_context *ctx, cls_status s, const char *fmt, ...) CLS_PRINTF(3, 4);
/* The message of a call without a context (cls_last_error(NULL)); returns s. */
cls_status cls_fail_thread(cls_status s, const char *fmt, ...) CLS_PRINTF(2, 3);

#endif
