/* The tool's outputs (OUT, and side files such as --stats-out): where they
 * go, checked before any work, and written all or nothing. See
 * docs/guide/tool-safety.md for what a user sees.
 *
 *   cli_output_prepare()  before any work: resolve the name (a symlink is
 *                         written through to its file; a character device,
 *                         FIFO or stdout is streamed into, never replaced),
 *                         refuse a folder, a socket, a terminal, an input
 *                         or a name in a folder that is missing or cannot
 *                         be written (exit 2), remove temporaries that
 *                         killed runs left
 *   cli_output_begin()    the temporary (registered with the guard before it
 *                         exists) or scratch file the library fills, mapped
 *   cli_output_save_stats() a side file, written to its own temporary
 *   cli_output_commit()   OUT first, then the mask, then the side file:
 *                         renames (or the stream's bytes) under the guard's
 *                         lock
 *   cli_output_discard()  removes whatever a failed run made
 *
 * Needs cli_guard_start() before cli_output_begin(). */
#ifndef CLS_CLI_OUTPUT_H
#define CLS_CLI_OUTPUT_H

#include <sys/types.h>

#include "clscale.h"
#include "io/npy.h"

typedef struct cli_output {
    const char *cmd;      /* the command, for messages */
    const char *opt;      /* "--stats-out", "--mask-out", or NULL for OUT */
    const char *arg;      /* the name as given */
    char       *path;     /* a file: where it lands (arg, or the file its symlink names) */
    int         stream;   /* written through sink (a device, FIFO or stdout) */
    int         sink;     /* the open stream, or -1 */
    char       *tmp;      /* the temporary (or a stream's scratch copy) while it exists */
    int         slot;     /* its registration with the guard, or -1 */
    int         keep_mode;
    mode_t      mode;     /* an existing file's permissions, given to the new one */
} cli_output;

/* cli_output_prepare() : checks the output `arg` of command `cmd` (`opt`:
 * the option that names it, NULL for OUT) against the `ninputs` `inputs`
 * (NULL entries are skipped) and `other` (another output of the run, or NULL):
 * none may be the same file by path, symlink or hard link. Opens a stream.
 * @return 0, or the exit status after printing why: 2 (a folder, a socket
 *         or block device, a terminal, an input or the other output, a
 *         folder that is missing or not writable, a stream this user may
 *         not open), 1 (out of memory, a stream that fails to open). */
int cli_output_prepare(cli_output *o, const char *cmd, const char *opt, const char *arg,
                       const char *const *inputs, size_t ninputs, const cli_output *other);

/* cli_output_check() : cli_output_prepare()'s checks and messages, with
 * the same exit statuses, but a stream target is only recognised
 * (o->stream), not opened: what rank 0 of `--mpi` decides for every rank
 * (tools/cli/mpi_run.c). Release `o` with cli_output_discard(). */
int cli_output_check(cli_output *o, const char *cmd, const char *opt, const char *arg,
                     const char *const *inputs, size_t ninputs, const cli_output *other);

/* cli_output_refuse() : prints a usage error about `o` ("CMD: NAME: WHY"
 * and the hint to --help). @return 2. */
int cli_output_refuse(const cli_output *o, const char *why);

/* cli_output_begin() : the array the library writes OUT into, mapped in *y.
 * @return 0, or 1 after printing why (no space, ...); nothing is left then. */
int cli_output_begin(cli_output *o, cls_dtype dtype, size_t ndim, const size_t *shape, cls_npy *y);

/* cli_output_save_stats() : writes `stats` to the side file's temporary.
 * @return 0, or 1 after printing why. */
int cli_output_save_stats(cli_output *s, const cls_stats *stats);

/* cli_output_commit() : OUT (from *y), then the mask `m` (from *mask,
 * made by cli_output_begin(); both may be NULL), then the side file `side`
 * (may be NULL). With a mask, both files' data are written to disk first;
 * the renames follow under the guard's lock (no signal between them). A
 * failure of OUT (or of writing either to disk) leaves every old file as it
 * was; a failure of a later one after OUT was renamed is reported as such.
 * @return 0, or 1 after printing why. */
int cli_output_commit(cli_output *o, cls_npy *y, cli_output *side, cli_output *m, cls_npy *mask);

/* cli_output_discard() : removes the temporaries, closes the stream; `y`
 * may be NULL. Safe on a zeroed or already committed output. */
void cli_output_discard(cli_output *o, cls_npy *y);

#endif
