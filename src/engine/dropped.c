/* Devices that context creation drops.
 * A selected device that fails at any step of creation (describing it,
 * its OpenCL context, its queues, its first kernel build, the zero-copy
 * check) sits out for the life of the context instead of failing it, as
 * a device that fails mid-call sits out the rest of that call (run.c).
 * Owns: the per-device mark (cls_dev.drop_why), the context's list of
 * dropped devices (the report's `dropped`), the notes in cls_last_error, and the
 * message when no device is left. Called by context.c only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

/* "device 1 (pthread-..., ...): clFinish: ..." -> "clFinish: ..." when the
 * message starts with the label of the device it is about. */
static const char *without_label(const char *msg, const char *label)
{
    size_t n = strlen(label);
    if (strncmp(msg, label, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ') return msg + n + 2;
    return msg;
}

static char *format_why(const char *stage, const char *msg, const char *label)
{
    msg = without_label(msg && *msg ? msg : "(no message)", label);
    size_t len = strlen(stage) + strlen(msg) + 3;
    char *why = malloc(len);
    if (why) snprintf(why, len, "%s: %s", stage, msg);
    return why;
}

void cls_drop_mark(cls_dev *d, cls_status st, const char *stage)
{
    if (d->drop_st != CLS_OK) return; /* the first failure is the one to tell */
    char label[512];
    cls_dev_label(d, label, sizeof label);
    d->drop_st = st != CLS_OK ? st : CLS_E_DEVICE;
    d->drop_why = format_why(stage, cls_thread_error(), label);
}

static cls_status add(cls_context *ctx, size_t index, const char *name, const char *platform, const char *why,
                      cls_status st)
{
    cls_dropped_device *grown = realloc(ctx->drops, (ctx->ndrops + 1) * sizeof *grown);
    if (!grown) return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    ctx->drops = grown;
    char *n = strdup(name ? name : "?"), *p = strdup(platform ? platform : "?");
    char *w = strdup(why ? why : "(out of memory for the message)");
    if (!n || !p || !w) {
        free(n);
        free(p);
        free(w);
        return cls_fail(ctx, CLS_E_NOMEM, "out of memory");
    }
    ctx->drops[ctx->ndrops] = (cls_dropped_device){.index = index, .name = n, .platform = p, .why = w, .status = st};
    ctx->ndrops++;
    return CLS_OK;
}

cls_status cls_drop_record(cls_context *ctx, cls_dev *d)
{
    cls_status r = add(ctx, d->info.index, d->info.name, d->info.platform, d->drop_why, d->drop_st);
    free(d->drop_why);
    d->drop_why = NULL;
    return r;
}

/* One line per dropped device into ctx->err; with none left, the failure. */
cls_status cls_drop_report(cls_context *ctx)
{
    pthread_mutex_lock(&ctx->err_lock);
    ctx->err[0] = '\0';
    pthread_mutex_unlock(&ctx->err_lock);
    int builds = 1;
    for (size_t i = 0; i < ctx->ndrops; i++) builds &= ctx->drops[i].status == CLS_E_BUILD;
    if (ctx->ndevs == 0 && ctx->ndrops > 0) {
        cls_fail(ctx, builds ? CLS_E_BUILD : ctx->drops[0].status, "%s",
                 builds ? "the kernels failed to build on every selected device:"
                        : "no selected device could be used:");
    }
    for (size_t i = 0; i < ctx->ndrops; i++) {
        const cls_dropped_device *x = &ctx->drops[i];
        cls_note(ctx, "%sdevice %zu (%s, %s): dropped at creation: %s", ctx->ndevs ? "" : "  ", x->index, x->name,
                 x->platform, x->why);
    }
    if (ctx->ndevs > 0) return CLS_OK;
    if (ctx->ndrops == 0) return cls_fail(ctx, CLS_E_NO_DEVICE, "no device was selected");
    if (builds) return CLS_E_BUILD;
    cls_status st = ctx->drops[0].status;
    for (size_t i = 1; i < ctx->ndrops; i++)
        if (ctx->drops[i].status != st) st = CLS_E_DEVICE;
    return st;
}

void cls_drops_free(cls_context *ctx)
{
    for (size_t i = 0; i < ctx->ndrops; i++) {
        /* the strings are this file's strdup()s, const only to the caller */
        free((char *)ctx->drops[i].name);
        free((char *)ctx->drops[i].platform);
        free((char *)ctx->drops[i].why);
    }
    free(ctx->drops);
    ctx->drops = NULL;
    ctx->ndrops = 0;
}
