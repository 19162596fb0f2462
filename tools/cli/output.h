/* The tool's outputs (OUT, and side files such as --stats-out): where they
 * go, checked before any work, and written all or nothing. See
 * docs/guide/tool-safety.md for what a user sees.
 *
 *   cli_output_prepare()  before any work: resolve the name (a symlink is
 *                         written through to its file; a character device,
 *                         FIFO or stdout is streamed into, never replaced),
 *                         refuse a folder, a socket, a terminal or an input
 *                         (exit 2) and a folder that cannot be written
 *                         (exit 1), remove temporaries that killed runs left
 *   cli_output_begin()    the temporary (registered with the guard before it
 *                         exists) or scratch file the library fills, mapped
 *   cli_output_save_stats() a side file, written to its own temporary
 *   cli_output_commit()   OUT first, then the side file: renames (or the
 *                         stream's bytes) under the guard's lock
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
    const char *opt;      /* "--stats-out", or NULL for OUT */
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
 *         or block device, a terminal, an input or the other output), 1 (the
 *         folder is missing or not writable, a stream cannot be opened). */
int cli_output_prepare(cli_output *o, const char *cmd, const char *opt, const char *arg,
                       const char *const *inputs, size_t ninputs, const cli_output *other);

/* cli_output_begin() : the array the library writes OUT into, mapped in *y.
 * @return 0, or 1 after printing why (no space, ...); nothing is left then. */
int cli_output_begin(cli_output *o, cls_dtype dtype, size_t ndim, const size_t *shape, cls_npy *y);

/* cli_output_save_stats() : writes `stats` to the side file's temporary.
 * @return 0, or 1 after printing why. */
int cli_output_save_stats(cli_output *s, const cls_stats *stats);

/* cli_output_commit() : OUT (from *y), then the side file `side` (may be
 * NULL). A failure of OUT leaves both old files as they were; a failure of
 * the side file after OUT was renamed is reported as such.
 * @return 0, or 1 after printing why. */
int cli_output_commit(cli_output *o, cls_npy *y, cli_output *side);

/* cli_output_discard() : removes the temporaries, closes the stream; `y`
 * may be NULL. Safe on a zeroed or already committed output. */
void cli_output_discard(cli_output *o, cls_npy *y);

#endif
