/* Checksums and hashes: CRC-32 (IEEE, as zlib) for files, FNV-1a 64 for cache
 * keys. Small and table-driven; no dependency. */
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t cls_crc32(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&crc_once, crc_init);
    const unsigned char *p = data;
    crc = ~crc;
    while (len--) crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint64_t cls_fnv1a64(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len--) {
        h ^= *p++;
        h *= 0x100000001b3ull;
    }
    return h;
}
