/* clscale devices [--json]: every selected device with its global index,
 * and the ones context creation dropped with why (they sit out every
 * command: a broken driver on one device costs only that device). */
#include <string.h>

#include "cli.h"

static const char *type_name(unsigned t)
{
    static const char *names[] = {"other", "cpu", "gpu", "gpu+cpu", "accelerator", "accelerator+cpu",
                                  "accelerator+gpu", "accelerator+gpu+cpu"};
    return names[t & 7];
}

int cmd_devices(int argc, char **argv)
{
    int json = 0;
    const char *sel = NULL; /* $CLSCALE_DEVICES, else all, as every command */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc) sel = argv[++i];
        else if (!strcmp(argv[i], "--help")) {
            puts("usage: clscale devices [--json] [--devices SEL]");
            return EXIT_OK;
        } else if (!strcmp(argv[i], "--devices")) return cli_usage_error("devices", "--devices needs a value");
        else return cli_usage_error("devices", "unknown option \"%s\"", argv[i]);
    }
    int rc = cli_selector_check("devices", sel);
    if (rc) return rc;
    cls_context *ctx = cli_context("devices", sel, 0, &rc);
    if (!ctx) return rc;
    cls_report rep;
    cls_last_report(ctx, &rep);
    size_t n = cls_device_count(ctx), nd = rep.ndropped;
    if (json) puts("[");
    for (size_t i = 0; i < n; i++) {
        cls_device_info d;
        cls_device_get(ctx, i, &d);
        if (json) {
            printf("  {\"index\": %zu, \"name\": ", d.index);
            cli_json_string(stdout, d.name);
            printf(", \"vendor\": ");
            cli_json_string(stdout, d.vendor);
            printf(", \"platform\": ");
            cli_json_string(stdout, d.platform);
            printf(", \"version\": ");
            cli_json_string(stdout, d.version);
            printf(", \"driver\": ");
            cli_json_string(stdout, d.driver);
            printf(", \"type\": \"%s\", \"compute_units\": %u, \"global_mem_bytes\": %llu, "
                   "\"max_alloc_bytes\": %llu, \"fp64\": %s, \"host_unified\": %s, \"staging\": %s}%s\n",
                   type_name(d.type), d.compute_units, (unsigned long long)d.global_mem_bytes,
                   (unsigned long long)d.max_alloc_bytes, d.fp64 ? "true" : "false",
                   d.host_unified ? "true" : "false", d.staging ? "true" : "false", i + 1 < n + nd ? "," : "");
        } else {
            printf("%zu: %s | %s | %s | %u CU | %.1f GiB (max alloc %.1f GiB) | fp64 %s | %s\n", d.index,
                   d.name, d.platform, type_name(d.type), d.compute_units,
                   d.global_mem_bytes / 1073741824.0, d.max_alloc_bytes / 1073741824.0,
                   d.fp64 ? "yes" : "no", d.staging ? "staging" : "zero-copy");
        }
    }
    for (size_t i = 0; i < nd; i++) {
        cls_dropped_device x = rep.dropped[i];
        if (json) {
            printf("  {\"index\": %zu, \"name\": ", x.index);
            cli_json_string(stdout, x.name);
            printf(", \"platform\": ");
            cli_json_string(stdout, x.platform);
            printf(", \"dropped\": ");
            cli_json_string(stdout, x.why);
            printf("}%s\n", i + 1 < nd ? "," : "");
        } else {
            /* the first line of why (a build log follows on stderr) */
            printf("%zu: %s | %s | dropped: %.*s\n", x.index, x.name, x.platform, (int)strcspn(x.why, "\n"),
                   x.why);
        }
    }
    if (json) puts("]");
    const char *notes = cls_last_error(ctx);
    if (*notes) fprintf(stderr, "clscale: note: %s\n", notes);
    cls_context_destroy(ctx);
    return EXIT_OK;
}
