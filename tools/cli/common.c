/* What the tool's commands share: messages, a context for --devices, JSON
 * strings. Called by every command (cli/ and bench/); calls only the library. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("clscale: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

cls_context *cli_context(const char *devices, unsigned flags)
{
    cls_config cfg = {0};
    cfg.devices = devices;
    cfg.flags = flags;
    cls_context *ctx = NULL;
    cls_status st = cls_context_create(&cfg, &ctx);
    if (st != CLS_OK) {
        cli_error(EXIT_FAIL, "%s\n%s", cls_status_str(st), cls_last_error(ctx));
        cls_context_destroy(ctx);
        return NULL;
    }
    return ctx;
}

void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}
