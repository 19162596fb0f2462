/* The on-disk cache of program binaries.
 * Owns: the key (device, driver, source, options), the entry format and its
 * atomic write. An entry is
 *   "CLSBIN1\n" | key (u64) | payload length (u64) | CRC-32 of payload (u32) | payload
 * in the host's byte order (a cache never leaves its machine). Anything that
 * does not match, truncated or corrupted, is removed and rebuilt, never used.
 * A build that misses takes the entry's lock (`.KEY.lock`, flock): processes
 * starting together on a cold cache (the ranks of an MPI job on one node)
 * build each program once, the others waiting and then reading the entry,
 * instead of every one compiling it at once on the same cores. The lock
 * files stay (removing one could let two holders in); the kernel frees a
 * lock whose holder died. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static const char magic[8] = {'C', 'L', 'S', 'B', 'I', 'N', '1', '\n'};
#define HEADER_LEN (8 + 8 + 8 + 4)
#define MAX_ENTRY (512u << 20)

uint64_t cls_cache_key(const char *device, const char *driver, const char *source,
                       size_t source_len, const char *options)
{
    uint64_t h = CLS_FNV_SEED;
    h = cls_fnv1a64(h, device, strlen(device) + 1);
    h = cls_fnv1a64(h, driver, strlen(driver) + 1);
    h = cls_fnv1a64(h, source, source_len);
    h = cls_fnv1a64(h, "|", 1);
    h = cls_fnv1a64(h, options, strlen(options) + 1);
    return h;
}

void cls_cache_default_dir(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg) snprintf(buf, len, "%s/clscale", xdg);
    else if (home && *home) snprintf(buf, len, "%s/.cache/clscale", home);
    else if (len) buf[0] = '\0';
}

static void entry_path(char *buf, size_t len, const char *dir, uint64_t key)
{
    snprintf(buf, len, "%s/%016llx.bin", dir, (unsigned long long)key);
}

int cls_cache_get(const char *dir, uint64_t key, unsigned char **bin, size_t *len)
{
    char path[4096];
    entry_path(path, sizeof path, dir, key);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char hdr[HEADER_LEN];
    unsigned char *buf = NULL;
    uint64_t k, n;
    uint32_t crc;
    if (fread(hdr, 1, sizeof hdr, f) != sizeof hdr) goto bad;
    memcpy(&k, hdr + 8, 8);
    memcpy(&n, hdr + 16, 8);
    memcpy(&crc, hdr + 24, 4);
    if (memcmp(hdr, magic, 8) != 0 || k != key || n == 0 || n > MAX_ENTRY) goto bad;
    buf = malloc((size_t)n);
    if (!buf) { fclose(f); return -1; }
    if (fread(buf, 1, (size_t)n, f) != n || fgetc(f) != EOF) goto bad;
    if (cls_crc32(0, buf, (size_t)n) != crc) goto bad;
    fclose(f);
    *bin = buf;
    *len = (size_t)n;
    return 0;
bad:
    free(buf);
    fclose(f);
    unlink(path);
    return -1;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char tmp[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, dir, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(tmp, 0755) == 0 || errno == EEXIST) ? 0 : -1;
}

int cls_cache_put(const char *dir, uint64_t key, const unsigned char *bin, size_t len)
{
    if (make_dirs(dir) != 0) return -1;
    char path[4096];
    entry_path(path, sizeof path, dir, key);
    unsigned char hdr[HEADER_LEN];
    uint64_t n = len;
    uint32_t crc = cls_crc32(0, bin, len);
    memcpy(hdr, magic, 8);
    memcpy(hdr + 8, &key, 8);
    memcpy(hdr + 16, &n, 8);
    memcpy(hdr + 24, &crc, 4);
    const void *parts[2] = {hdr, bin};
    size_t lens[2] = {sizeof hdr, len};
    return cls_write_atomic(path, parts, lens, 2) == 0 ? 0 : -1;
}

int cls_cache_lock(const char *dir, uint64_t key)
{
    if (make_dirs(dir) != 0) return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/.%016llx.lock", dir, (unsigned long long)key);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    return fd;
}

void cls_cache_unlock(int fd)
{
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}
