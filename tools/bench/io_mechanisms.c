/* io_mechanisms: copies one file into another through fixed buffers by each
 * of the mechanisms the streaming path could use, so that docs/STREAMING.md
 * chooses by measurement, not by belief. Not part of the tool; built beside
 * it (tools/meson.build) and run by hand:
 *
 *   io_mechanisms IN OUT [BLOCK_MIB [INFLIGHT]]
 *
 * Before each mechanism the input is dropped from the page cache
 * (fdatasync + POSIX_FADV_DONTNEED on that file only, nothing else of the
 * machine's cache), and each ends with fsync of the output, so that every
 * figure is "cold input to durable output", like cp + sync. Mechanisms:
 *   buffered   pread/pwrite on INFLIGHT threads; each written block is
 *              started (sync_file_range WRITE) and, INFLIGHT blocks later,
 *              waited for and dropped from the cache with the input block
 *   direct     the same threads with O_DIRECT on both files
 *   uring      io_uring (liburing), O_DIRECT, INFLIGHT blocks in flight,
 *              each read's completion submits its write
 *   mmap       the input mapped, memcpy into a mapped output, msync (what the
 *              tool did before streaming)
 * Prints one line per mechanism: seconds, MB/s of file, CPU seconds. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *in_path, *out_path;
static size_t block;
static unsigned inflight;
static off_t size;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void evict(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

typedef struct shared {
    int in, out, drop;
    atomic_ulong next;
} shared;

static void *copier(void *arg)
{
    shared *s = arg;
    void *buf;
    if (posix_memalign(&buf, 4096, block)) die("posix_memalign");
    for (;;) {
        unsigned long k = atomic_fetch_add(&s->next, 1);
        off_t off = (off_t)k * (off_t)block;
        if (off >= size) break;
        size_t len = size - off < (off_t)block ? (size_t)(size - off) : block;
        for (size_t d = 0; d < len;) {
            ssize_t r = pread(s->in, (char *)buf + d, len - d, off + d);
            if (r <= 0) die("pread");
            d += r;
        }
        for (size_t d = 0; d < len;) {
            ssize_t w = pwrite(s->out, (char *)buf + d, len - d, off + d);
            if (w <= 0) die("pwrite");
            d += w;
        }
        if (s->drop) {
            sync_file_range(s->out, off, len, SYNC_FILE_RANGE_WRITE);
            off_t old = off - (off_t)inflight * 2 * (off_t)block;
            if (old >= 0) {
                sync_file_range(s->out, old, block,
                                SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
                posix_fadvise(s->out, old, block, POSIX_FADV_DONTNEED);
                posix_fadvise(s->in, old, block, POSIX_FADV_DONTNEED);
            }
        }
    }
    free(buf);
    return NULL;
}

static void run_threads(int direct)
{
    shared s = {.drop = !direct};
    s.in = open(in_path, O_RDONLY | (direct ? O_DIRECT : 0));
    s.out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
    if (s.in < 0 || s.out < 0) die("open");
    if (!direct) posix_fadvise(s.in, 0, 0, POSIX_FADV_SEQUENTIAL);
    pthread_t t[64];
    for (unsigned i = 0; i < inflight; i++) pthread_create(&t[i], NULL, copier, &s);
    for (unsigned i = 0; i < inflight; i++) pthread_join(t[i], NULL);
    if (fsync(s.out)) die("fsync");
    close(s.in);
    close(s.out);
}

static void run_uring(void)
{
    int in = open(in_path, O_RDONLY | O_DIRECT), out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
    if (in < 0 || out < 0) die("open");
    struct io_uring ring;
    if (io_uring_queue_init(2 * inflight, &ring, 0)) die("io_uring_queue_init");
    char **buf = calloc(inflight, sizeof *buf);
    off_t next = 0;
    unsigned busy = 0;
    for (unsigned i = 0; i < inflight; i++) {
        if (posix_memalign((void **)&buf[i], 4096, block)) die("posix_memalign");
        if (next >= size) continue;
        size_t len = size - next < (off_t)block ? (size_t)(size - next) : block;
        struct io_uring_sqe *q = io_uring_get_sqe(&ring);
        io_uring_prep_read(q, in, buf[i], len, next);
        io_uring_sqe_set_data64(q, ((uint64_t)next << 8) | (i << 1));
        next += len;
        busy++;
    }
    io_uring_submit(&ring);
    while (busy) {
        struct io_uring_cqe *c;
        if (io_uring_wait_cqe(&ring, &c)) die("io_uring_wait_cqe");
        uint64_t d = io_uring_cqe_get_data64(c);
        int res = c->res;
        io_uring_cqe_seen(&ring, c);
        if (res <= 0) {
            errno = -res;
            die("io_uring op");
        }
        unsigned i = (d >> 1) & 127;
        off_t off = (off_t)(d >> 8);
        struct io_uring_sqe *q = io_uring_get_sqe(&ring);
        if (!(d & 1)) { /* read done: write it (short reads only at the end) */
            io_uring_prep_write(q, out, buf[i], (unsigned)res, off);
            io_uring_sqe_set_data64(q, d | 1);
        } else if (next < size) {
            size_t len = size - next < (off_t)block ? (size_t)(size - next) : block;
            io_uring_prep_read(q, in, buf[i], len, next);
            io_uring_sqe_set_data64(q, ((uint64_t)next << 8) | (i << 1));
            next += len;
        } else busy--;
        io_uring_submit(&ring);
    }
    io_uring_queue_exit(&ring);
    if (fsync(out)) die("fsync");
    close(in);
    close(out);
}

static void run_mmap(void)
{
    int in = open(in_path, O_RDONLY), out = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || ftruncate(out, size)) die("open");
    void *a = mmap(NULL, size, PROT_READ, MAP_SHARED, in, 0), *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, out, 0);
    if (a == MAP_FAILED || b == MAP_FAILED) die("mmap");
    memcpy(b, a, size);
    if (msync(b, size, MS_SYNC) || fsync(out)) die("msync");
    munmap(a, size);
    munmap(b, size);
    close(in);
    close(out);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: io_mechanisms IN OUT [BLOCK_MIB [INFLIGHT [MECH,...]]]\n");
        return 2;
    }
    in_path = argv[1];
    out_path = argv[2];
    block = (argc > 3 ? strtoul(argv[3], NULL, 10) : 8) << 20;
    inflight = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 4;
    const char *which = argc > 5 ? argv[5] : "buffered,direct,uring,mmap";
    if (inflight < 1 || inflight > 64) inflight = 4;
    struct stat sb;
    if (stat(in_path, &sb)) die(in_path);
    size = sb.st_size & ~(off_t)4095; /* O_DIRECT: whole 4 KiB blocks */
    static const char *names[] = {"buffered", "direct", "uring", "mmap"};
    for (int m = 0; m < 4; m++) {
        if (!strstr(which, names[m])) continue;
        unlink(out_path);
        evict(in_path);
        double t0 = now(), c0 = cpu();
        if (m == 0) run_threads(0);
        else if (m == 1) run_threads(1);
        else if (m == 2) run_uring();
        else run_mmap();
        double t = now() - t0;
        printf("%-9s block %zu MiB, %u in flight: %.2f s, %.0f MB/s, cpu %.2f s\n", names[m], block >> 20, inflight,
               t, size / t / 1e6, cpu() - c0);
        fflush(stdout);
        evict(out_path);
    }
    unlink(out_path);
    return 0;
}
