/* Streaming I/O, see stream_io.h: buffers cycling through read, compute
 * and write, requests served in order by a few threads. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream_io.h"

typedef enum { REQ_READ, REQ_WRITE, REQ_DROP } req_kind;

typedef struct req {
    req_kind kind;
    unsigned slot;
    uint64_t off;   /* file offset */
    size_t   len;
    char    *buf;
    size_t   chunk; /* REQ_DROP: the chunk whose output to drop */
} req;

typedef enum { SLOT_IDLE, SLOT_READING, SLOT_READY, SLOT_COMPUTING, SLOT_WRITING } slot_state;

typedef struct slot {
    slot_state state;
    size_t     chunk;     /* the chunk it holds or is reading or writing */
    size_t     pending;   /* requests of that chunk not finished */
    int        dropped;   /* the last chunk it wrote was dropped from the cache (or nothing to drop) */
    size_t     written;   /* that chunk */
} slot;

struct cls_sio {
    cls_sio_cfg     cfg;
    pthread_mutex_t lock;
    pthread_cond_t  work, done;
    req            *q;       /* ring of requests */
    size_t          qcap, qhead, qlen;
    slot           *slots;
    pthread_t      *threads;
    unsigned        nthreads;
    int             stop;    /* threads exit when the queue is empty */
    int             failed;  /* an error is kept; later requests are skipped */
    char            msg[512];
    uint64_t        bytes;
    size_t          writing; /* slots with a write in flight */
};

static void fail_locked(cls_sio *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_locked(cls_sio *s, const char *fmt, ...)
{
    if (s->failed) return;
    s->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    pthread_cond_broadcast(&s->done);
}

static void push_locked(cls_sio *s, req r)
{
    /* the ring is sized for every request that can be pending at once */
    s->q[(s->qhead + s->qlen) % s->qcap] = r;
    s->qlen++;
    pthread_cond_signal(&s->work);
}

/* Queues chunk `c`'s requests of `kind` for slot k (lock held). */
static void queue_chunk(cls_sio *s, unsigned k, size_t c, req_kind kind)
{
    cls_sio_chunk view = cls_sio_out_view(&s->cfg.chunks[c]);
    const cls_sio_chunk *ch = kind == REQ_READ ? &s->cfg.chunks[c] : &view;
    slot *sl = &s->slots[k];
    sl->chunk = c;
    sl->state = kind == REQ_READ ? SLOT_READING : SLOT_WRITING;
    sl->pending = 0;
    uint64_t base = kind == REQ_READ ? ch->in_off : ch->out_off;
    size_t seg = ch->seg ? ch->seg : ch->len;
    for (size_t s0 = 0, i = 0; s0 < ch->len; s0 += seg, i++)
        for (size_t at = 0; at < seg; at += s->cfg.part) {
            size_t n = seg - at < s->cfg.part ? seg - at : s->cfg.part;
            req r = {kind, k, base + i * ch->stride + at, n, (char *)s->cfg.bufs[k] + s0 + at, 0};
            push_locked(s, r);
            sl->pending++;
        }
}

/* The requests chunk ch takes. */
static size_t requests_of(const cls_sio_chunk *ch, size_t part)
{
    size_t seg = ch->seg ? ch->seg : ch->len;
    return seg ? ch->len / seg * ((seg + part - 1) / part) : 0;
}

void cls_sio_drop_range(int fd, uint64_t off, uint64_t len, int written)
{
    if (written)
        (void)sync_file_range(fd, (off64_t)off, (off64_t)len,
                              SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    (void)posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}

cls_sio_chunk cls_sio_out_view(const cls_sio_chunk *ch)
{
    cls_sio_chunk v = *ch;
    if (ch->out_len) {
        v.len = ch->out_len;
        v.seg = ch->out_seg;
        v.stride = ch->out_stride;
    }
    return v;
}

void cls_sio_drop_chunk(int fd, const cls_sio_chunk *ch, uint64_t base, int written)
{
    if (!ch->seg) {
        cls_sio_drop_range(fd, base, ch->len, written);
        return;
    }
    for (size_t s0 = 0, i = 0; s0 < ch->len; s0 += ch->seg, i++)
        cls_sio_drop_range(fd, base + i * ch->stride, ch->seg, written);
}

/* Does one request; 0, or -1 with the failure described (lock not held). */
static int serve(cls_sio *s, const req *r, char *why, size_t whylen)
{
    const cls_sio_cfg *c = &s->cfg;
    if (r->kind == REQ_DROP) {
        cls_sio_chunk ch = cls_sio_out_view(&c->chunks[r->chunk]);
        cls_sio_drop_chunk(c->out_fd, &ch, ch.out_off, 1);
        return 0;
    }
    size_t done = 0;
    while (done < r->len) {
        ssize_t n = r->kind == REQ_READ ? pread(c->in_fd, r->buf + done, r->len - done, (off_t)(r->off + done))
                                        : pwrite(c->out_fd, r->buf + done, r->len - done, (off_t)(r->off + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            snprintf(why, whylen, "%s: %s error at byte %llu: %s", r->kind == REQ_READ ? c->in_name : c->out_name,
                     r->kind == REQ_READ ? "read" : "write", (unsigned long long)(r->off + done), strerror(e));
            return -1;
        }
        if (n == 0) {
            /* pread: end of file; pwrite of 0 bytes: the file system gave up */
            if (r->kind == REQ_READ)
                snprintf(why, whylen, "%s: ends at byte %llu, but the array goes on to byte %llu "
                         "(truncated while being read?)", c->in_name, (unsigned long long)(r->off + done),
                         (unsigned long long)(r->off + r->len));
            else
                snprintf(why, whylen, "%s: write error at byte %llu: nothing written", c->out_name,
                         (unsigned long long)(r->off + done));
            return -1;
        }
        done += (size_t)n;
    }
    /* start write-back now; the final fsync then finds little left */
    if (r->kind == REQ_WRITE) (void)sync_file_range(c->out_fd, (off64_t)r->off, (off64_t)r->len, SYNC_FILE_RANGE_WRITE);
    return 0;
}

/* Slot k's buffer is free: it reads the next chunk that is its (lock held). */
static void recycle(cls_sio *s, unsigned k)
{
    slot *sl = &s->slots[k];
    size_t next = sl->chunk + s->cfg.nbufs;
    if (!s->failed && next < s->cfg.nchunks) queue_chunk(s, k, next, REQ_READ);
    else sl->state = SLOT_IDLE;
    pthread_cond_broadcast(&s->done);
}

/* Slot k's chunk finished its reads or writes (lock held). */
static void slot_finished(cls_sio *s, unsigned k)
{
    slot *sl = &s->slots[k];
    if (sl->state == SLOT_READING) {
        sl->state = SLOT_READY;
        pthread_cond_broadcast(&s->done);
        return;
    }
    s->writing--;
    if (s->cfg.drop_cache) {
        /* the chunk this buffer wrote before: its write-back has had a
         * whole round of the buffers to finish */
        if (!sl->dropped) {
            const cls_sio_chunk *old = &s->cfg.chunks[sl->written];
            req r = {REQ_DROP, k, old->out_off, old->len, NULL, sl->written};
            push_locked(s, r);
        }
        sl->dropped = 0;
        sl->written = sl->chunk;
    }
    recycle(s, k);
}

static void *io_main(void *arg)
{
    cls_sio *s = arg;
    char why[512];
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->qlen && !s->stop) pthread_cond_wait(&s->work, &s->lock);
        if (!s->qlen) break;
        req r = s->q[s->qhead];
        s->qhead = (s->qhead + 1) % s->qcap;
        s->qlen--;
        int skip = s->failed && r.kind != REQ_DROP;
        pthread_mutex_unlock(&s->lock);
        int rc = skip ? 0 : serve(s, &r, why, sizeof why);
        pthread_mutex_lock(&s->lock);
        if (rc != 0) fail_locked(s, "%s", why);
        if (r.kind == REQ_DROP) continue;
        if (!skip && rc == 0) s->bytes += r.len;
        if (--s->slots[r.slot].pending == 0) slot_finished(s, r.slot);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void sio_free(cls_sio *s)
{
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    free(s->q);
    free(s->slots);
    free(s->threads);
    free(s);
}

static void stop_threads(cls_sio *s)
{
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->lock);
    for (unsigned i = 0; i < s->nthreads; i++) pthread_join(s->threads[i], NULL);
    s->nthreads = 0;
}

cls_sio *cls_sio_start(const cls_sio_cfg *cfg, char *err, size_t errlen)
{
    cls_sio *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    if (s->cfg.part == 0) s->cfg.part = (size_t)8 << 20;
    if (s->cfg.threads == 0) s->cfg.threads = 1;
    size_t parts = 0;
    for (size_t i = 0; i < cfg->nchunks; i++) {
        cls_sio_chunk w = cls_sio_out_view(&cfg->chunks[i]);
        size_t n = requests_of(&cfg->chunks[i], s->cfg.part), m = requests_of(&w, s->cfg.part);
        if (n > parts) parts = n;
        if (m > parts) parts = m;
    }
    s->qcap = (size_t)cfg->nbufs * (parts + 2) + 1;
    s->q = malloc(s->qcap * sizeof *s->q);
    s->slots = calloc(cfg->nbufs, sizeof *s->slots);
    s->threads = calloc(s->cfg.threads, sizeof *s->threads);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    if (!s->q || !s->slots || !s->threads) {
        snprintf(err, errlen, "out of memory");
        sio_free(s);
        return NULL;
    }
    for (unsigned k = 0; k < cfg->nbufs; k++) s->slots[k].dropped = 1;
    if (s->cfg.in_fd >= 0 && s->cfg.drop_cache) (void)posix_fadvise(s->cfg.in_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    pthread_mutex_lock(&s->lock);
    for (unsigned k = 0; k < cfg->nbufs && k < cfg->nchunks; k++) queue_chunk(s, k, k, REQ_READ);
    pthread_mutex_unlock(&s->lock);
    for (unsigned i = 0; i < s->cfg.threads; i++) {
        if (pthread_create(&s->threads[i], NULL, io_main, s) != 0) {
            if (i == 0) {
                snprintf(err, errlen, "cannot start an I/O thread");
                sio_free(s);
                return NULL;
            }
            break;  /* fewer threads: fewer requests in flight, still correct */
        }
        s->nthreads++;
    }
    return s;
}

int cls_sio_next(cls_sio *s, size_t i, void **buf, char *err, size_t errlen)
{
    unsigned k = (unsigned)(i % s->cfg.nbufs);
    slot *sl = &s->slots[k];
    pthread_mutex_lock(&s->lock);
    while (!s->failed && !(sl->chunk == i && sl->state == SLOT_READY)) pthread_cond_wait(&s->done, &s->lock);
    int rc = 0;
    if (s->failed) {
        snprintf(err, errlen, "%s", s->msg);
        rc = -1;
    } else {
        sl->state = SLOT_COMPUTING;
        *buf = s->cfg.bufs[k];
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void cls_sio_done(cls_sio *s, size_t i)
{
    unsigned k = (unsigned)(i % s->cfg.nbufs);
    const cls_sio_chunk *ch = &s->cfg.chunks[i];
    /* the input of a computed chunk is not read again (in this pass) */
    if (s->cfg.drop_cache) cls_sio_drop_chunk(s->cfg.in_fd, ch, ch->in_off, 0);
    pthread_mutex_lock(&s->lock);
    if (s->cfg.out_fd >= 0 && !s->failed) {
        queue_chunk(s, k, i, REQ_WRITE);
        s->writing++;
    } else {
        recycle(s, k);  /* nothing to write */
    }
    pthread_mutex_unlock(&s->lock);
}

uint64_t cls_sio_bytes(cls_sio *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t b = s->bytes;
    pthread_mutex_unlock(&s->lock);
    return b;
}

int cls_sio_finish(cls_sio *s, int ok, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->lock);
    if (!ok) s->failed = s->failed ? s->failed : 2;  /* skip what is queued; keep any I/O message */
    while (s->writing) pthread_cond_wait(&s->done, &s->lock);
    /* the chunks written last: waited for and dropped here */
    if (ok && !s->failed && s->cfg.out_fd >= 0 && s->cfg.drop_cache)
        for (unsigned k = 0; k < s->cfg.nbufs; k++)
            if (!s->slots[k].dropped) {
                const cls_sio_chunk *old = &s->cfg.chunks[s->slots[k].written];
                req r = {REQ_DROP, k, old->out_off, old->len, NULL, s->slots[k].written};
                push_locked(s, r);
                s->slots[k].dropped = 1;
            }
    pthread_mutex_unlock(&s->lock);
    stop_threads(s);
    int rc = 0;
    if (s->failed == 1) {
        snprintf(err, errlen, "%s", s->msg);
        rc = -1;
    }
    sio_free(s);
    return rc;
}
