/* clscale: the command-line tool. Dispatches to one file per command. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "cli.h"

/* usage_head, the scalers' names (cli_methods), usage_tail */
static const char usage_head[] =
    "usage: clscale COMMAND [OPTIONS]\n"
    "\n"
    "Feature scaling and discounting of large float arrays on every OpenCL device\n"
    "at once.\n"
    "\n"
    "commands (each has --help):\n"
    "  devices   [--json] [--devices SEL]    list the OpenCL devices and their indices\n"
    "  describe  [--json] [--sigma K] [--scope matrix|batch] [--devices SEL] IN.npy\n"
    "            per column count, missing, min, max, mean, std, quartiles,\n"
    "            outliers; duplicate rows\n"
    "  normalize --method ";
static const char usage_tail[] =
    " [--range LO,HI] [--clip]\n"
    "            [--quantile-range QMIN,QMAX] [--no-centering] [--no-scaling]\n"
    "            [--unit-variance] [cleaning options of clean]\n"
    "            [--scope matrix|batch] [--stats-out S] [--devices SEL] [--verbose]\n"
    "            IN.npy OUT.npy\n"
    "  clean     [--impute mean|median|most_frequent|constant:V] [--missing-value V]\n"
    "            [--sigma-clip K[,ITERS]] [--sigma-lower K] [--sigma-upper K]\n"
    "            [--clip-center median|mean] [--clip-spread std|mad_std]\n"
    "            [--clip-mode mask|clamp] [--detrend savgol:W,P|mean:W]\n"
    "            [--flatten W,P[,N[,K]]] [--detrend-op subtract|divide|trend]\n"
    "            [--detrend-edge E]\n"
    "            [--bin-smooth K,S | --bin K,S] [--scope matrix|batch]\n"
    "            [--devices SEL] [--verbose] IN.npy OUT.npy\n"
    "            outliers, missing values, light curves' trends and bins\n"
    "  apply     --stats S [--inverse] [--devices SEL] [--verbose] IN.npy OUT.npy\n"
    "  discount  --factors F.npy [--devices SEL] [--verbose] IN.npy OUT.npy\n"
    "            (normalize, clean, apply, discount: --mpi under mpirun, one output\n"
    "            from all ranks)\n"
    "  bench     [--workload NAME] [--size X] [--devices SEL] [--repeats N]\n"
    "            [--alone LIST] [--memory both|pageable] [--json F] [--trace F.json]\n"
    "            [--timeline F.svg] [--file PATH] [--model LAYER] [--numpy PYTHON]\n"
    "            [--rows N]\n"
    "\n"
    "  --quiet   (every command but devices) no progress bar, which is drawn on\n"
    "            a terminal for long runs\n"
    "  --help, --version\n"
    "\n"
    "Device selector SEL (also $CLSCALE_DEVICES): all, gpu, cpu, indices as\n"
    "`clscale devices` prints them (0,2), or part of a platform or device name\n"
    "(pocl, nvidia, rusticl, oclgrind); several joined by commas. rusticl offers\n"
    "no device without RUSTICL_ENABLE=llvmpipe, Oclgrind none until registered\n"
    "(an .icd file): a selector naming either then says how to enable it.\n"
    "OUT is written all or nothing (a temporary beside it, renamed at the end);\n"
    "a symlink is written through, a device or pipe (/dev/null, /dev/stdout, a\n"
    "FIFO) streamed into; OUT may not be a folder or one of the inputs.\n"
    "Exit status: 0 success, 1 failure, 2 usage error, 130/143 after SIGINT/SIGTERM\n"
    "(nothing written).\n";

/* Everything the command printed reaches stdout, or the exit says it did
 * not; a reader that went away (`| head`) is an EPIPE exit 1, not SIGPIPE. */
static int flush_stdout(int rc)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    if (errno != EPIPE) cli_error(EXIT_FAIL, "writing to stdout: %s", strerror(errno));
    return rc ? rc : EXIT_FAIL;
}

static void print_usage(FILE *f) { fprintf(f, "%s%s%s", usage_head, cli_methods(), usage_tail); }

int main(int argc, char **argv)
{
    cli_pocl_affinity_default(); /* before the first OpenCL call */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_usage(stdout);
        return flush_stdout(EXIT_OK);
    }
    if (!strcmp(cmd, "--version")) {
        printf("clscale %s\n", cls_version());
        return flush_stdout(EXIT_OK);
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"devices", cmd_devices},     {"describe", cmd_describe},   {"normalize", cmd_normalize},
        {"clean", cmd_clean},         {"apply", cmd_apply},
        {"discount", cmd_discount},   {"bench", cmd_bench},         {"__startup", cmd_startup_child},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmd, cmds[i].name)) return flush_stdout(cmds[i].fn(argc - 1, argv + 1));
    fprintf(stderr, "clscale: unknown command \"%s\"\n\n", cmd);
    print_usage(stderr);
    return EXIT_USAGE;
}
