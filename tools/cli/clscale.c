/* clscale: the command-line tool. Dispatches to one file per command. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: clscale COMMAND [OPTIONS]\n"
    "\n"
    "Feature scaling and discounting of large float arrays on every OpenCL device\n"
    "at once.\n"
    "\n"
    "commands:\n"
    "  devices [--json]                    list the OpenCL devices and their indices\n"
    "  normalize --method minmax|zscore|decimal [--range LO,HI] [--clip]\n"
    "            [--scope matrix|batch] [--stats-out S] [--devices SEL] IN.npy OUT.npy\n"
    "  apply     --stats S [--inverse] [--devices SEL] IN.npy OUT.npy\n"
    "  discount  --factors F.npy [--devices SEL] IN.npy OUT.npy\n"
    "  bench     [--workload NAME] [--size X] [--devices SEL] [--json F]\n"
    "            [--trace F.json] [--timeline F.svg]\n"
    "\n"
    "  --help, --version\n"
    "\n"
    "Device selector SEL (also $CLSCALE_DEVICES): all, gpu, cpu, indices as\n"
    "`clscale devices` prints them (0,2), or part of a platform or device name\n"
    "(pocl, nvidia, rusticl, oclgrind); several joined by commas.\n"
    "Exit status: 0 success, 1 failure, 2 usage error.\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("clscale %s\n", cls_version());
        return EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"devices", cmd_devices},     {"normalize", cmd_normalize}, {"apply", cmd_apply},
        {"discount", cmd_discount},   {"bench", cmd_bench},         {"__startup", cmd_startup_child},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmd, cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "clscale: unknown command \"%s\"\n\n%s", cmd, usage);
    return EXIT_USAGE;
}
