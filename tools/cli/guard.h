/* The tool's signal guard: the temporary files of a run are removed whatever
 * stops it (a failure, SIGINT, SIGTERM, SIGHUP, a SIGBUS from an input that
 * shrank while mapped), and nothing is left under a final name half-written.
 *
 * SIGINT, SIGTERM and SIGHUP are blocked in every thread (the library's and
 * the OpenCL driver's threads inherit the mask, so the guard starts before
 * the context exists) and taken by one thread with sigwaitinfo(), which
 * removes the registered temporaries and ends the process by the same
 * signal (a shell reports 130, 143, 129). A handler would not do for these:
 * LLVM, inside some OpenCL drivers, installs its own whenever it compiles.
 *
 * SIGBUS cannot wait for a thread: a handler checks that the faulting address
 * lies in a mapping the guard watches (an input file, the output), prints
 * which file changed, removes the temporaries and exits 1. A SIGBUS anywhere
 * else is a crash and stays one. SIGPIPE is ignored: a closed pipe is an
 * EPIPE write error, reported by whoever wrote. */
#ifndef CLS_CLI_GUARD_H
#define CLS_CLI_GUARD_H

#include <stddef.h>
#include <sys/types.h>

/* Starts the guard (idempotent). `tty`: stderr is a terminal, a progress bar
 * may need erasing before the process dies. Without a guard (no thread could
 * be started) a signal ends the process at once, leaving its temporary. */
void cli_guard_start(int tty);

/* Stops the thread and unblocks the signals; one that came meanwhile is
 * delivered then (the temporaries are gone by then). After
 * cli_guard_committed() the signals stay blocked to the end. */
void cli_guard_stop(void);

/* Called with the lock held once OUT is in place: from then on SIGINT,
 * SIGTERM and SIGHUP are too late and are ignored, so that an exit by a
 * signal always means that nothing was written, and exit 0 that all was. */
void cli_guard_committed(void);

/* Creates `path` with open(path, flags | O_CREAT | O_EXCL, mode) after
 * registering it for removal, both under the guard's lock, so that a signal
 * at any moment finds either no file or a registered one. Returns the
 * descriptor, or -1 with errno (EEXIST: someone else's name, not removed);
 * *slot receives the registration for cli_guard_forget(). */
int cli_guard_create(const char *path, int flags, mode_t mode, int *slot);

/* Registers a name that another function will create (the library's
 * statistics writer): call with the lock held around the creation. */
int cli_guard_add(const char *path);

/* Stops removing the file of `slot` (committed or removed); -1 is ignored. */
void cli_guard_forget(int slot);

/* Held across a commit (renames) and the writing of a registered file by
 * another function: a signal then waits, and finds the files either all
 * committed or all still temporary. */
void cli_guard_lock(void);
void cli_guard_unlock(void);

/* A mapping whose pages may vanish under the tool (a file another process
 * truncates): a SIGBUS inside it ends the run with "NAME: WHY" and exit 1.
 * `output`: the mapping is a temporary the tool writes (a disk that filled
 * up), else an input that changed. cli_guard_unwatch() before unmapping. */
void cli_guard_watch(const void *addr, size_t len, const char *name, int output);
void cli_guard_unwatch(const void *addr);

#endif
