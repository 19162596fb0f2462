/* Statistics files: cls_stats_save, cls_stats_load (messages: cls_last_error(NULL)).
 * Owns: the on-disk format (docs/FORMAT.md is its specification; change both
 * together), its little-endian encoding whatever the host, the atomic write
 * and the checks a load makes before it trusts anything the file says.
 * Calls: stats.c for the object, hash.c for the CRC-32. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define MAGIC "CLSSTATS"
#define VERSION 2u
#define HEADER_LEN_V1 72u  /* magic .. rows */
#define COLUMN_LEN_V1 56u  /* count, missing, min, max, mean, m2, absmax */
#define HEADER_LEN 96u     /* v2: + has_quantiles, robust flags, qmin, qmax */
#define COLUMN_LEN 80u     /* v2: + median, q_lo, q_hi */
#define CRC_LEN 4u

/* ---- little-endian encoding ---- */

static unsigned char *put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static unsigned char *put_f64(unsigned char *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return put_u64(p, u);
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static double get_f64(const unsigned char *p)
{
    uint64_t u = get_u64(p);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* ---- save ---- */

cls_status cls_stats_save(const cls_stats *s, const char *path)
{
    if (!s || !path || !*path || !s->col)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_save: %s", !path || !*path ? "no path" : "no statistics");
    const cls_stats_info *in = &s->info;
    const cls_scaler_desc *d = cls_scaler_get(in->scaler);
    if ((!d && in->scaler != CLS_NONE) || (unsigned)in->scope > CLS_SCOPE_BATCH ||
        (unsigned)in->dtype > CLS_F64)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_save: %s: invalid scaler, scope or dtype", path);
    size_t n = in->groups * in->cols;  /* cls_stats_new checked the product */
    if (n > (SIZE_MAX - HEADER_LEN - CRC_LEN) / COLUMN_LEN)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_save: %s: too many columns", path);
    size_t len = HEADER_LEN + n * COLUMN_LEN + CRC_LEN;
    unsigned char *buf = malloc(len);
    if (!buf) return cls_fail_thread(CLS_E_NOMEM, "cannot save %s: out of memory (%zu bytes)", path, len);

    unsigned char *p = buf;
    memcpy(p, MAGIC, 8);
    p += 8;
    p = put_u32(p, VERSION);
    p = put_u32(p, d ? d->file_code : 0u);
    p = put_u32(p, (uint32_t)in->scope);
    p = put_u32(p, in->clip ? 1u : 0u);
    p = put_f64(p, in->lo);
    p = put_f64(p, in->hi);
    p = put_u32(p, (uint32_t)in->dtype);
    p = put_u32(p, in->has_moments ? 1u : 0u);
    p = put_u64(p, (uint64_t)in->groups);
    p = put_u64(p, (uint64_t)in->cols);
    p = put_u64(p, in->rows);
    p = put_u32(p, in->has_quantiles ? 1u : 0u);
    p = put_u32(p, (in->no_centering ? 1u : 0u) | (in->no_scaling ? 2u : 0u) | (in->unit_variance ? 4u : 0u));
    p = put_f64(p, in->qmin);
    p = put_f64(p, in->qmax);
    for (size_t i = 0; i < n; i++) p = put_u64(p, s->col[i].count);
    for (size_t i = 0; i < n; i++) p = put_u64(p, s->col[i].missing);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].min);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].max);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].mean);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].m2);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].absmax);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].median);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].q_lo);
    for (size_t i = 0; i < n; i++) p = put_f64(p, s->col[i].q_hi);
    put_u32(p, cls_crc32(0, buf, len - CRC_LEN));

    /* a reader sees the old file or the new one; a failed save leaves nothing */
    const void *parts[1] = {buf};
    size_t lens[1] = {len};
    int e = cls_write_atomic(path, parts, lens, 1);
    free(buf);
    if (e) return cls_fail_thread(e == ENOMEM ? CLS_E_NOMEM : CLS_E_IO, "cannot save %s: %s", path, strerror(e));
    return CLS_OK;
}

/* ---- load ---- */

/* Reads up to `want` bytes; returns how many (short only at end of file or
 * on an error, which ferror tells). */
static size_t read_upto(FILE *f, unsigned char *p, size_t want)
{
    size_t got = 0;
    while (got < want) {
        size_t r = fread(p + got, 1, want - got, f);
        if (r == 0) break;
        got += r;
    }
    return got;
}

static cls_status load_file(FILE *f, const char *path, cls_stats **out)
{
    unsigned char hdr[HEADER_LEN];
    size_t got = read_upto(f, hdr, HEADER_LEN_V1);
    if (ferror(f)) return cls_fail_thread(CLS_E_IO, "cannot read %s: %s", path, strerror(errno));
    if (got == 0) return cls_fail_thread(CLS_E_FORMAT, "%s: empty file, not a clscale stats file", path);
    if (memcmp(hdr, MAGIC, got < 8 ? got : 8) != 0)
        return cls_fail_thread(CLS_E_FORMAT, "%s: not a clscale stats file", path);
    if (got < 12) return cls_fail_thread(CLS_E_FORMAT, "%s: truncated (%zu bytes)", path, got);
    uint32_t version = get_u32(hdr + 8);
    if (version > VERSION)
        return cls_fail_thread(CLS_E_FORMAT, "%s: format version %u; this clscale reads version %u", path,
                    (unsigned)version, VERSION);
    if (version == 0) return cls_fail_thread(CLS_E_FORMAT, "%s: invalid format version 0", path);
    /* version 1 files (no quantiles) still load */
    const size_t header_len = version == 1 ? HEADER_LEN_V1 : HEADER_LEN;
    const size_t column_len = version == 1 ? COLUMN_LEN_V1 : COLUMN_LEN;
    if (got == HEADER_LEN_V1 && header_len > got) got += read_upto(f, hdr + got, header_len - got);
    if (ferror(f)) return cls_fail_thread(CLS_E_IO, "cannot read %s: %s", path, strerror(errno));
    if (got < header_len) return cls_fail_thread(CLS_E_FORMAT, "%s: truncated (%zu bytes)", path, got);

    /* The shape decides the length; check it, overflow included, before any
     * allocation, and allocate only as the bytes actually arrive. */
    uint64_t groups = get_u64(hdr + 48), cols = get_u64(hdr + 56);
    if (groups == 0 || cols == 0)
        return cls_fail_thread(CLS_E_FORMAT, "%s: empty shape (%llu groups x %llu columns)", path,
                    (unsigned long long)groups, (unsigned long long)cols);
    uint64_t limit = (SIZE_MAX < UINT64_MAX ? (uint64_t)SIZE_MAX : UINT64_MAX);
    limit = (limit - header_len - CRC_LEN - 1) / column_len;
    if (groups > limit / cols)
        return cls_fail_thread(CLS_E_FORMAT, "%s: impossible shape (%llu groups x %llu columns)", path,
                    (unsigned long long)groups, (unsigned long long)cols);
    size_t n = (size_t)(groups * cols);
    size_t total = header_len + n * column_len + CRC_LEN;

    size_t cap = total + 1 < 65536 ? total + 1 : 65536, len = header_len;
    unsigned char *buf = malloc(cap);
    if (!buf) return cls_fail_thread(CLS_E_NOMEM, "cannot load %s: out of memory", path);
    memcpy(buf, hdr, header_len);
    cls_status st = CLS_OK;
    for (;;) {
        /* One byte past the expected end tells trailing data apart. */
        size_t r = read_upto(f, buf + len, cap - len);
        len += r;
        if (ferror(f)) {
            st = cls_fail_thread(CLS_E_IO, "cannot read %s: %s", path, strerror(errno));
            goto out;
        }
        if (len < cap || cap == total + 1) break;
        size_t ncap = cap > (total + 1) / 2 ? total + 1 : cap * 2;
        unsigned char *nb = realloc(buf, ncap);
        if (!nb) {
            st = cls_fail_thread(CLS_E_NOMEM, "cannot load %s: out of memory", path);
            goto out;
        }
        buf = nb;
        cap = ncap;
    }
    if (len < total) {
        st = cls_fail_thread(CLS_E_FORMAT, "%s: truncated (%zu bytes, %llu groups x %llu columns need %zu)", path,
                  len, (unsigned long long)groups, (unsigned long long)cols, total);
        goto out;
    }
    if (len > total) {
        st = cls_fail_thread(CLS_E_FORMAT, "%s: trailing bytes after the %zu of the statistics", path, total);
        goto out;
    }
    if (cls_crc32(0, buf, total - CRC_LEN) != get_u32(buf + total - CRC_LEN)) {
        st = cls_fail_thread(CLS_E_FORMAT, "%s: corrupted: checksum mismatch", path);
        goto out;
    }

    cls_stats_info info;
    memset(&info, 0, sizeof info);
    uint32_t scaler = get_u32(buf + 12), scope = get_u32(buf + 16), clip = get_u32(buf + 20);
    uint32_t dtype = get_u32(buf + 40), moments = get_u32(buf + 44);
    uint32_t quantiles = version == 1 ? 0 : get_u32(buf + 72), rflags = version == 1 ? 0 : get_u32(buf + 76);
    if (quantiles > 1 || rflags > 7) {
        st = cls_fail_thread(CLS_E_FORMAT, "%s: invalid header (has_quantiles %u, robust flags %u)", path,
                     (unsigned)quantiles, (unsigned)rflags);
        goto out;
    }
    const cls_scaler_desc *d = cls_scaler_by_code(scaler);
    if ((scaler && !d) || scope > CLS_SCOPE_BATCH || clip > 1 || dtype > CLS_F64 || moments > 1) {
        st = cls_fail_thread(CLS_E_FORMAT, "%s: invalid header (scaler %u, scope %u, clip %u, dtype %u, moments %u)",
                  path, (unsigned)scaler, (unsigned)scope, (unsigned)clip, (unsigned)dtype, (unsigned)moments);
        goto out;
    }
    if (scope == CLS_SCOPE_BATCH && groups != 1) {
        st = cls_fail_thread(CLS_E_FORMAT, "%s: batch scope with %llu groups (must be 1)", path,
                  (unsigned long long)groups);
        goto out;
    }
    info.scaler = cls_scaler_of(d);
    info.scope = (cls_scope)scope;
    info.clip = (int)clip;
    info.lo = get_f64(buf + 24);
    info.hi = get_f64(buf + 32);
    info.dtype = (cls_dtype)dtype;
    info.has_moments = (int)moments;
    info.groups = (size_t)groups;
    info.cols = (size_t)cols;
    info.rows = get_u64(buf + 64);
    info.has_quantiles = (int)quantiles;
    info.no_centering = (rflags & 1u) != 0;
    info.no_scaling = (rflags & 2u) != 0;
    info.unit_variance = (rflags & 4u) != 0;
    info.qmin = version == 1 ? 0 : get_f64(buf + 80);
    info.qmax = version == 1 ? 0 : get_f64(buf + 88);

    cls_stats *s = cls_stats_new(&info);
    if (!s) {
        st = cls_fail_thread(CLS_E_NOMEM, "cannot load %s: out of memory", path);
        goto out;
    }
    const unsigned char *p = buf + header_len;
    for (size_t i = 0; i < n; i++, p += 8) s->col[i].count = get_u64(p);
    for (size_t i = 0; i < n; i++, p += 8) s->col[i].missing = get_u64(p);
    for (size_t i = 0; i < n; i++, p += 8) s->col[i].min = get_f64(p);
    for (size_t i = 0; i < n; i++, p += 8) s->col[i].max = get_f64(p);
    for (size_t i = 0; i < n; i++, p += 8) s->col[i].mean = get_f64(p);
    for (size_t i = 0; i < n; i++, p += 8) s->col[i].m2 = get_f64(p);
    for (size_t i = 0; i < n; i++, p += 8) s->col[i].absmax = get_f64(p);
    if (version >= 2) {
        for (size_t i = 0; i < n; i++, p += 8) s->col[i].median = get_f64(p);
        for (size_t i = 0; i < n; i++, p += 8) s->col[i].q_lo = get_f64(p);
        for (size_t i = 0; i < n; i++, p += 8) s->col[i].q_hi = get_f64(p);
    }
    *out = s;
out:
    free(buf);
    return st;
}

cls_status cls_stats_load(const char *path, cls_stats **out)
{
    if (out) *out = NULL;
    if (!path || !*path || !out)
        return cls_fail_thread(CLS_E_ARG, "cls_stats_load: %s", !out ? "no output pointer" : "no path");
    FILE *f = fopen(path, "rb");
    if (!f) return cls_fail_thread(CLS_E_IO, "cannot open %s: %s", path, strerror(errno));
    cls_status st = load_file(f, path, out);
    fclose(f);
    return st;
}
