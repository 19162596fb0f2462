/* The tool's signal guard and its list of temporary files; see guard.h.
 * Called by output.c and the commands; calls only libc and POSIX.
 *
 * The lists are fixed arrays, so that the SIGBUS handler can read them
 * without locks or allocation: an entry's text is written before its `used`
 * flag is set (release), and read only after the flag is seen (acquire). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"

enum { MAX_TEMPS = 8, MAX_WATCH = 8 };

static struct {
    char       path[PATH_MAX];
    atomic_int used;
} temps[MAX_TEMPS];

static struct {
    const char *lo;
    size_t      len;
    char        name[PATH_MAX];
    int         output;
    atomic_int  used;
} watched[MAX_WATCH];

static struct {
    pthread_mutex_t lock;  /* held while temporaries are created, removed or committed */
    sigset_t        set, old;
    pthread_t       thread;
    int             running;
    atomic_int      stopping;
    int             committed; /* OUT is in place: a signal now is too late to undo it */
    int             tty;   /* a progress bar may be on the screen */
} guard = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Async-signal-safe: unlink() and plain loads only. */
static void remove_temps(void)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (atomic_load_explicit(&temps[i].used, memory_order_acquire)) unlink(temps[i].path);
}

static void *guard_main(void *arg)
{
    (void)arg;
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&guard.set, &si);
        if (sig < 0) continue;
        /* cli_guard_stop()'s pthread_kill() (SI_USER or SI_TKILL, by glibc version) */
        if (atomic_load(&guard.stopping) && si.si_pid == getpid()) return NULL;
        pthread_mutex_lock(&guard.lock);  /* kept: nothing is committed after this */
        if (guard.committed) { /* the run is done: its exit status says so */
            pthread_mutex_unlock(&guard.lock);
            continue;
        }
        remove_temps();
        if (guard.tty) fputs("\r\033[K", stderr);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        _exit(128 + sig);
    }
}

static void say(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); }

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    const char *a = si->si_addr;
    for (int i = 0; i < MAX_WATCH; i++) {
        if (!atomic_load_explicit(&watched[i].used, memory_order_acquire)) continue;
        if (a < watched[i].lo || (size_t)(a - watched[i].lo) >= watched[i].len) continue;
        remove_temps();
        if (guard.tty) say("\r\033[K");
        say("clscale: ");
        say(watched[i].name);
        say(watched[i].output
                ? ": the disk filled up while the output was written (the file system could not "
                  "reserve its space in advance); nothing was written\n"
                : ": the file shrank while clscale was reading it (another program truncated or "
                  "rewrote it); nothing was written\n");
        _exit(1);
    }
    /* not a watched mapping: a real crash, which the default action reports */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
}

static void handle_sigbus(void)
{
    static int done;
    if (done) return;
    done = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

void cli_guard_start(int tty)
{
    if (guard.running) return;
    handle_sigbus();
    signal(SIGPIPE, SIG_IGN);

    sigemptyset(&guard.set);
    sigaddset(&guard.set, SIGINT);
    sigaddset(&guard.set, SIGTERM);
    sigaddset(&guard.set, SIGHUP);
    guard.tty = tty;
    atomic_store(&guard.stopping, 0);
    if (pthread_sigmask(SIG_BLOCK, &guard.set, &guard.old) != 0) return;
    if (pthread_create(&guard.thread, NULL, guard_main, NULL) != 0) {
        pthread_sigmask(SIG_SETMASK, &guard.old, NULL);
        return;  /* no guard: a signal may leave the temporary file */
    }
    guard.running = 1;
}

void cli_guard_stop(void)
{
    if (!guard.running) return;
    atomic_store(&guard.stopping, 1);
    pthread_kill(guard.thread, SIGTERM);
    pthread_join(guard.thread, NULL);
    guard.running = 0;
    /* after a commit the signals stay blocked until the process exits: one
     * that came late must not turn a written OUT into an exit 130 */
    if (!guard.committed) pthread_sigmask(SIG_SETMASK, &guard.old, NULL);
}

void cli_guard_committed(void) { guard.committed = 1; }

void cli_guard_lock(void) { pthread_mutex_lock(&guard.lock); }
void cli_guard_unlock(void) { pthread_mutex_unlock(&guard.lock); }

int cli_guard_add(const char *path)
{
    if (strlen(path) >= PATH_MAX) return -1;
    for (int i = 0; i < MAX_TEMPS; i++)
        if (!atomic_load(&temps[i].used)) {
            strcpy(temps[i].path, path);
            atomic_store_explicit(&temps[i].used, 1, memory_order_release);
            return i;
        }
    return -1;
}

void cli_guard_forget(int slot)
{
    if (slot >= 0 && slot < MAX_TEMPS) atomic_store(&temps[slot].used, 0);
}

int cli_guard_create(const char *path, int flags, mode_t mode, int *slot)
{
    cli_guard_lock();
    *slot = cli_guard_add(path);
    if (*slot < 0) {
        cli_guard_unlock();
        errno = ENAMETOOLONG;  /* or more temporaries than a run makes */
        return -1;
    }
    int fd = open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        cli_guard_forget(*slot);
        *slot = -1;
        errno = e;
    }
    cli_guard_unlock();
    return fd;
}

void cli_guard_watch(const void *addr, size_t len, const char *name, int output)
{
    handle_sigbus();
    for (int i = 0; i < MAX_WATCH; i++)
        if (!atomic_load(&watched[i].used)) {
            watched[i].lo = addr;
            watched[i].len = len;
            snprintf(watched[i].name, sizeof watched[i].name, "%s", name);
            watched[i].output = output;
            atomic_store_explicit(&watched[i].used, 1, memory_order_release);
            return;
        }
}

void cli_guard_unwatch(const void *addr)
{
    for (int i = 0; i < MAX_WATCH; i++)
        if (atomic_load(&watched[i].used) && watched[i].lo == addr) atomic_store(&watched[i].used, 0);
}
