/* The I/O side of streaming (docs/STREAMING.md): a fixed set of buffers
 * cycles through read -> compute -> write while a few I/O threads keep
 * several requests in flight, reading ahead of the computing thread and
 * writing behind it. Knows nothing of arrays or devices; the engine's
 * stream.c cuts the work into chunks and computes them.
 *
 * Chunk i always lives in buffer i % nbufs. When its write (or, for a pass
 * that writes nothing, its release) completes, the same buffer is read with
 * chunk i + nbufs at once, by the I/O thread that saw it complete.
 *
 * Mechanism (measured, docs/STREAMING.md): buffered pread/pwrite on threads,
 * requests of `part` bytes; each written part is handed to write-back at
 * once (sync_file_range WRITE) so that the final fsync finds little left,
 * and with `drop_cache` the pages of finished chunks are dropped
 * (POSIX_FADV_DONTNEED, after waiting for their write-back) so that a file
 * larger than memory does not push everything else out of the page cache.
 *
 * Errors: the first one is kept as one line naming the file and the byte
 * offset ("in.npy: read error at byte 1048704: Input/output error"); later
 * requests are skipped. Calls only libc and POSIX. */
#ifndef CLS_STREAM_IO_H
#define CLS_STREAM_IO_H

#include <stddef.h>
#include <stdint.h>

/* A chunk is `len` bytes of its buffer: one run of the file, or (seg
 * not 0) len / seg runs of seg bytes, `stride` bytes apart in the file
 * (a block of columns of a matrix stored by rows), packed in the buffer. */
typedef struct cls_sio_chunk {
    uint64_t in_off;    /* byte offset in the input file */
    uint64_t out_off;   /* byte offset in the output file (unused without one) */
    size_t   len;       /* bytes, at most the buffers' size */
    size_t   seg;       /* 0: contiguous; else bytes per run (len a multiple) */
    uint64_t stride;    /* bytes from one run's start to the next's in the files */
    /* What is written, from the buffer's start, when it differs from what
     * was read (a pass that writes fewer rows than it reads: bins reduced):
     * out_len bytes (0: len, seg and stride as read), in runs of out_seg
     * bytes (0: one run) out_stride bytes apart in the output file. */
    size_t   out_len, out_seg;
    uint64_t out_stride;
} cls_sio_chunk;

typedef struct cls_sio_cfg {
    int          in_fd, out_fd;     /* out_fd -1: nothing is written (a statistics pass) */
    const char  *in_name, *out_name;
    void *const *bufs;              /* nbufs buffers, each >= the largest chunk, page-aligned */
    unsigned     nbufs;
    const cls_sio_chunk *chunks;    /* in order */
    size_t       nchunks;
    unsigned     threads;           /* I/O threads (requests in flight) */
    size_t       part;              /* bytes per request */
    int          drop_cache;        /* drop finished pages of both files from the page cache */
} cls_sio_cfg;

typedef struct cls_sio cls_sio;

/* cls_sio_start() : starts the threads and the reads of the first nbufs
 * chunks. The configuration (and what it points to) must outlive the sio.
 * @return the sio, or NULL with a message in err (out of memory, threads). */
cls_sio *cls_sio_start(const cls_sio_cfg *cfg, char *err, size_t errlen);

/* cls_sio_next() : waits until chunk i (the one after the last chunk
 * handed out) is read, and gives its buffer.
 * @return 0, or -1 with the first error of any request in err. */
int cls_sio_next(cls_sio *s, size_t i, void **buf, char *err, size_t errlen);

/* cls_sio_done() : chunk i is computed (in its buffer, in place): writes it
 * when there is an output, then reuses the buffer for chunk i + nbufs. */
void cls_sio_done(cls_sio *s, size_t i);

/* Bytes read and written so far (for progress). */
uint64_t cls_sio_bytes(cls_sio *s);

/* cls_sio_finish() : waits for every write, stops the threads and frees
 * the sio. With `ok` = 0 (the caller failed) pending requests are dropped.
 * Does not fsync. @return 0, or -1 with the first error in err. */
int cls_sio_finish(cls_sio *s, int ok, char *err, size_t errlen);

/* Drops [off, off + len) of fd from the page cache after waiting for its
 * write-back (written files) or at once (read files). Best effort. */
void cls_sio_drop_range(int fd, uint64_t off, uint64_t len, int written);
/* The same for each run of chunk ch, from file offset `base` (its in_off
 * or out_off; the runs as read: cls_sio_out_view() gives those written). */
void cls_sio_drop_chunk(int fd, const cls_sio_chunk *ch, uint64_t base, int written);
/* Chunk ch as it is written: its out_len, out_seg and out_stride as len,
 * seg and stride when out_len is set, else ch itself. */
cls_sio_chunk cls_sio_out_view(const cls_sio_chunk *ch);

#endif /* CLS_STREAM_IO_H */
