/* Statuses, OpenCL error names and the context's human message.
 * Owns: cls_version, cls_status_str, cls_last_error, cls_set_error and the helpers that every
 * other file uses to fail with a message naming the device and the call. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *cls_version(void) { return CLS_VERSION_STRING; }

const char *cls_status_str(cls_status s)
{
    switch (s) {
    case CLS_OK:            return "CLS_OK: success";
    case CLS_E_ARG:         return "CLS_E_ARG: invalid argument";
    case CLS_E_NOMEM:       return "CLS_E_NOMEM: out of memory";
    case CLS_E_NO_DEVICE:   return "CLS_E_NO_DEVICE: no OpenCL device matched";
    case CLS_E_UNSUPPORTED: return "CLS_E_UNSUPPORTED: no selected device supports this";
    case CLS_E_BUILD:       return "CLS_E_BUILD: kernel build failed";
    case CLS_E_DEVICE:      return "CLS_E_DEVICE: OpenCL device error";
    case CLS_E_IO:          return "CLS_E_IO: input/output error";
    case CLS_E_FORMAT:      return "CLS_E_FORMAT: malformed file";
    }
    return "CLS_E_?: unknown status";
}

const char *cls_cl_error_name(cl_int e)
{
#define E(x) case x: return #x
    switch (e) {
    E(CL_SUCCESS); E(CL_DEVICE_NOT_FOUND); E(CL_DEVICE_NOT_AVAILABLE);
    E(CL_COMPILER_NOT_AVAILABLE); E(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    E(CL_OUT_OF_RESOURCES); E(CL_OUT_OF_HOST_MEMORY); E(CL_PROFILING_INFO_NOT_AVAILABLE);
    E(CL_MEM_COPY_OVERLAP); E(CL_IMAGE_FORMAT_MISMATCH); E(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    E(CL_BUILD_PROGRAM_FAILURE); E(CL_MAP_FAILURE); E(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST); E(CL_COMPILE_PROGRAM_FAILURE);
    E(CL_LINKER_NOT_AVAILABLE); E(CL_LINK_PROGRAM_FAILURE); E(CL_DEVICE_PARTITION_FAILED);
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE); E(CL_INVALID_VALUE); E(CL_INVALID_DEVICE_TYPE);
    E(CL_INVALID_PLATFORM); E(CL_INVALID_DEVICE); E(CL_INVALID_CONTEXT);
    E(CL_INVALID_QUEUE_PROPERTIES); E(CL_INVALID_COMMAND_QUEUE); E(CL_INVALID_HOST_PTR);
    E(CL_INVALID_MEM_OBJECT); E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR); E(CL_INVALID_IMAGE_SIZE);
    E(CL_INVALID_SAMPLER); E(CL_INVALID_BINARY); E(CL_INVALID_BUILD_OPTIONS);
    E(CL_INVALID_PROGRAM); E(CL_INVALID_PROGRAM_EXECUTABLE); E(CL_INVALID_KERNEL_NAME);
    E(CL_INVALID_KERNEL_DEFINITION); E(CL_INVALID_KERNEL); E(CL_INVALID_ARG_INDEX);
    E(CL_INVALID_ARG_VALUE); E(CL_INVALID_ARG_SIZE); E(CL_INVALID_KERNEL_ARGS);
    E(CL_INVALID_WORK_DIMENSION); E(CL_INVALID_WORK_GROUP_SIZE); E(CL_INVALID_WORK_ITEM_SIZE);
    E(CL_INVALID_GLOBAL_OFFSET); E(CL_INVALID_EVENT_WAIT_LIST); E(CL_INVALID_EVENT);
    E(CL_INVALID_OPERATION); E(CL_INVALID_GL_OBJECT); E(CL_INVALID_BUFFER_SIZE);
    E(CL_INVALID_MIP_LEVEL); E(CL_INVALID_GLOBAL_WORK_SIZE); E(CL_INVALID_PROPERTY);
    E(CL_INVALID_IMAGE_DESCRIPTOR); E(CL_INVALID_COMPILER_OPTIONS); E(CL_INVALID_LINKER_OPTIONS);
    E(CL_INVALID_DEVICE_PARTITION_COUNT);
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    }
#undef E
    return "CL_UNKNOWN_ERROR";
}

cls_status cls_status_of_cl(cl_int e)
{
    switch (e) {
    case CL_OUT_OF_HOST_MEMORY:
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_INVALID_BUFFER_SIZE:
        return CLS_E_NOMEM;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILER_NOT_AVAILABLE:
    case CL_INVALID_BINARY:
        return CLS_E_BUILD;
    default:
        return CLS_E_DEVICE;
    }
}

void cls_dev_label(const cls_dev *dev, char *buf, size_t len)
{
    if (!dev) { snprintf(buf, len, "OpenCL"); return; }
    const char *drv = dev->info.driver ? dev->info.driver : "";
    snprintf(buf, len, "device %zu (%s, %s%s%s)", dev->info.index, dev->info.name,
             dev->info.platform, *drv ? " " : "", drv);
}

/* The last message this thread set: threads that fail at once (the
 * builds of context creation) each keep their own. */
static _Thread_local char thread_err[CLS_ERR_LEN];

static void set_message(cls_context *ctx, const char *fmt, va_list ap)
{
    /* formatted aside first: a message may quote the context's own
     * ("the context failed to initialise: %s", ctx->err), and vsnprintf
     * into the buffer it reads from is undefined (valgrind: overlap) */
    char msg[CLS_ERR_LEN];
    pthread_mutex_lock(&ctx->err_lock);
    vsnprintf(msg, sizeof msg, fmt, ap);
    memcpy(ctx->err, msg, sizeof ctx->err < sizeof msg ? sizeof ctx->err : sizeof msg);
    ctx->err[sizeof ctx->err - 1] = '\0';
    snprintf(thread_err, sizeof thread_err, "%s", ctx->err);
    pthread_mutex_unlock(&ctx->err_lock);
}

const char *cls_thread_error(void) { return thread_err; }

cls_status cls_fail_thread(cls_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(thread_err, sizeof thread_err, fmt, ap);
    va_end(ap);
    return s;
}

cls_status cls_fail(cls_context *ctx, cls_status s, const char *fmt, ...)
{
    if (!ctx) return s;
    va_list ap;
    va_start(ap, fmt);
    set_message(ctx, fmt, ap);
    va_end(ap);
    return s;
}

void cls_note(cls_context *ctx, const char *fmt, ...)
{
    if (!ctx) return;
    pthread_mutex_lock(&ctx->err_lock);
    size_t used = strlen(ctx->err);
    if (used && used + 2 < sizeof ctx->err) {
        ctx->err[used++] = '\n';
        ctx->err[used] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    if (used < sizeof ctx->err) vsnprintf(ctx->err + used, sizeof ctx->err - used, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&ctx->err_lock);
}

cls_status cls_fail_cl(cls_context *ctx, const cls_dev *dev, const char *call, cl_int e)
{
    char label[512], name[128];
    cls_dev_label(dev, label, sizeof label);
    /* "clEnqueueNDRangeKernel(q, k, ...)" -> "clEnqueueNDRangeKernel" */
    size_t n = strcspn(call, "(");
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, call, n);
    name[n] = '\0';
    return cls_fail(ctx, cls_status_of_cl(e), "%s: %s: %s (%d)", label, name,
                    cls_cl_error_name(e), (int)e);
}

cls_status cls_set_error(cls_context *ctx, cls_status s, const char *message)
{
    if (!message) message = "";
    return ctx ? cls_fail(ctx, s, "%s", message) : cls_fail_thread(s, "%s", message);
}

const char *cls_last_error(const cls_context *ctx)
{
    return ctx ? ctx->err : thread_err;
}
