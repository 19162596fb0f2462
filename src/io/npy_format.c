/* .npy files, see npy.h: the format. The header's parser and writer and the
 * check of the data's size, shared by reading and writing (npy_file.c).
 * Calls only libc (no OpenCL, no library internals), so that the fuzz target
 * builds from this file alone.
 *
 * The format (numpy/lib/format.py): "\x93NUMPY", major, minor, the header's
 * length (u16 for 1.0, u32 for 2.0 and 3.0, little-endian), then a Python
 * dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a final '\n' so that the data starts aligned. The
 * dict is parsed by hand: a tiny grammar, every byte bounds-checked. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fallocate(); meson defines it, the fuzz build does not */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy_format.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "'<f4' and '<f8' data is used in place: little-endian hosts only"
#endif

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define ALIGN 64          /* numpy's ARRAY_ALIGN: where written data starts */
#define GROWTH_DIGITS 21  /* numpy's GROWTH_AXIS_MAX_DIGITS: spare header room */

cls_status cls_npy_fail(char *err, size_t errlen, cls_status s, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return s;
}

static size_t elem_size(cls_dtype dt) { return dt == CLS_F64 ? 8 : dt == CLS_NPY_BOOL ? 1 : 4; }
const char *cls_npy_dtype_name(cls_dtype dt)
{
    return dt == CLS_F64 ? "float64" : dt == CLS_NPY_BOOL ? "bool" : "float32";
}

/* "(5,)", "(2, 3)": the shape as Python prints it. */
void cls_npy_shape_text(char *buf, size_t len, size_t ndim, const size_t *shape)
{
    int n = snprintf(buf, len, "(");
    for (size_t i = 0; i < ndim && n >= 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, i ? ", %zu" : "%zu", shape[i]);
    if (n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, ndim == 1 ? ",)" : ")");
}

/* Bytes of the data of `shape` (no dimension 0), 0 when they (with `offset`
 * bytes before them) would not fit in a ptrdiff_t: mmap and off_t could not
 * take them. */
size_t cls_npy_data_size(cls_dtype dt, size_t ndim, const size_t *shape, size_t offset)
{
    size_t n = elem_size(dt), total;
    for (size_t i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n)) return 0;
    if (__builtin_add_overflow(n, offset, &total) || total > (size_t)PTRDIFF_MAX) return 0;
    return n;
}

/* ---- the header's dict ---- */

typedef struct lex {
    const unsigned char *p, *end, *start;
    char *err;
    size_t errlen;
} lex;

#define STR_CAP 64
typedef struct str {
    char s[STR_CAP];
    size_t len;
    int clipped; /* longer than STR_CAP - 1 bytes: s holds its start */
} str;

static int at(const lex *l, char c) { return l->p < l->end && *l->p == (unsigned char)c; }

/* Python's whitespace between tokens inside brackets. */
static void skip_ws(lex *l)
{
    while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r' ||
                             *l->p == '\f' || *l->p == '\v'))
        l->p++;
}

static cls_status syntax(lex *l, const char *expected)
{
    char found[32];
    if (l->p >= l->end) snprintf(found, sizeof found, "the end of the header");
    else if (*l->p >= 0x20 && *l->p < 0x7f) snprintf(found, sizeof found, "'%c'", *l->p);
    else snprintf(found, sizeof found, "byte 0x%02x", *l->p);
    return cls_npy_fail(l->err, l->errlen, CLS_E_FORMAT,
                "header is not a valid Python dict: expected %s at byte %zu, found %s", expected,
                (size_t)(l->p - l->start), found);
}

/* The string for a message: non-printable bytes as \xNN (a message is one
 * line), "..." when clipped. */
static void printable(const str *s, char *buf, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < s->len && n + 5 < len; i++) {
        unsigned char c = (unsigned char)s->s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') buf[n++] = (char)c;
        else n += (size_t)snprintf(buf + n, len - n, "\\x%02x", c);
    }
    if (s->clipped && n + 4 < len) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
}

static int str_is(const str *s, const char *lit)
{
    size_t n = strlen(lit);
    return !s->clipped && s->len == n && memcmp(s->s, lit, n) == 0;
}

/* A quoted string, ' or ". A backslash takes the next byte as it is (no
 * valid header needs escapes; this only keeps the parser in step). */
static cls_status parse_string(lex *l, str *out)
{
    if (!at(l, '\'') && !at(l, '"')) return syntax(l, "a quoted string");
    unsigned char q = *l->p++;
    out->len = 0;
    out->clipped = 0;
    for (;;) {
        if (l->p >= l->end || *l->p == '\n') return syntax(l, "the string's closing quote");
        unsigned char c = *l->p++;
        if (c == q) break;
        if (c == '\\') {
            if (l->p >= l->end) return syntax(l, "a character after '\\'");
            c = *l->p++;
        }
        if (out->len < STR_CAP - 1) out->s[out->len++] = (char)c;
        else out->clipped = 1;
    }
    out->s[out->len] = '\0';
    return CLS_OK;
}

static cls_status parse_bool(lex *l, int *v)
{
    const unsigned char *b = l->p;
    while (l->p < l->end && ((*l->p >= 'a' && *l->p <= 'z') || (*l->p >= 'A' && *l->p <= 'Z') ||
                             (*l->p >= '0' && *l->p <= '9') || *l->p == '_'))
        l->p++;
    size_t n = (size_t)(l->p - b);
    if (n == 4 && !memcmp(b, "True", 4)) *v = 1;
    else if (n == 5 && !memcmp(b, "False", 5)) *v = 0;
    else {
        l->p = b;
        return syntax(l, "True or False for 'fortran_order'");
    }
    return CLS_OK;
}

static cls_status parse_dim(lex *l, size_t *v)
{
    if (at(l, '-')) return cls_npy_fail(l->err, l->errlen, CLS_E_FORMAT, "shape has a negative dimension");
    if (l->p >= l->end || *l->p < '0' || *l->p > '9') return syntax(l, "a dimension (a number)");
    size_t x = 0;
    while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (size_t)(*l->p - '0'), &x))
            return cls_npy_fail(l->err, l->errlen, CLS_E_FORMAT,
                        "shape has a dimension too large for this machine (over %zu)", (size_t)SIZE_MAX);
        l->p++;
    }
    if (at(l, 'L') || at(l, 'l')) l->p++; /* Python 2's long, as numpy on Python 2 wrote it */
    *v = x;
    return CLS_OK;
}

/* A tuple of dimensions: (), (3,), (2, 3), (2, 3,). Counts every dimension,
 * keeps the first three. A lone (3) (not a tuple in Python) is taken as (3,). */
static cls_status parse_shape(lex *l, size_t shape[3], size_t *ndim)
{
    if (!at(l, '(')) return syntax(l, "a tuple such as (3,) or (2, 3) for 'shape'");
    l->p++;
    skip_ws(l);
    size_t n = 0;
    if (!at(l, ')')) {
        for (;;) {
            size_t v = 0;
            cls_status st = parse_dim(l, &v);
            if (st != CLS_OK) return st;
            if (n < 3) shape[n] = v;
            n++;
            skip_ws(l);
            if (at(l, ',')) {
                l->p++;
                skip_ws(l);
                if (at(l, ')')) break;
            } else if (at(l, ')')) {
                break;
            } else {
                return syntax(l, "',' or ')' in the shape");
            }
        }
    }
    l->p++; /* the ')' */
    *ndim = n;
    return CLS_OK;
}

typedef struct header_dict {
    int has_descr, has_fortran, has_shape;
    str descr;
    int descr_structured; /* a list: a structured dtype */
    int fortran;
    size_t ndim, shape[3];
} header_dict;

static cls_status duplicate(lex *l, const char *key)
{
    return cls_npy_fail(l->err, l->errlen, CLS_E_FORMAT, "header has the key '%s' twice", key);
}

static cls_status parse_dict(lex *l, header_dict *d)
{
    cls_status st;
    skip_ws(l);
    if (!at(l, '{')) return syntax(l, "'{'");
    l->p++;
    skip_ws(l);
    while (!at(l, '}')) {
        str key;
        if ((st = parse_string(l, &key)) != CLS_OK) return st;
        skip_ws(l);
        if (!at(l, ':')) return syntax(l, "':' after a key");
        l->p++;
        skip_ws(l);
        if (str_is(&key, "descr")) {
            if (d->has_descr++) return duplicate(l, "descr");
            if (at(l, '[')) {
                d->descr_structured = 1;
                return CLS_OK; /* rejected by the caller, nothing more to read */
            }
            if ((st = parse_string(l, &d->descr)) != CLS_OK) return st;
        } else if (str_is(&key, "fortran_order")) {
            if (d->has_fortran++) return duplicate(l, "fortran_order");
            if ((st = parse_bool(l, &d->fortran)) != CLS_OK) return st;
        } else if (str_is(&key, "shape")) {
            if (d->has_shape++) return duplicate(l, "shape");
            if ((st = parse_shape(l, d->shape, &d->ndim)) != CLS_OK) return st;
        } else {
            char k[4 * STR_CAP + 8];
            printable(&key, k, sizeof k);
            return cls_npy_fail(l->err, l->errlen, CLS_E_FORMAT,
                        "header has an unknown key '%s' (a .npy header holds 'descr', "
                        "'fortran_order' and 'shape')", k);
        }
        skip_ws(l);
        if (at(l, ',')) {
            l->p++;
            skip_ws(l);
        } else if (!at(l, '}')) {
            return syntax(l, "',' or '}'");
        }
    }
    l->p++; /* the '}' */
    skip_ws(l);
    if (l->p < l->end) return syntax(l, "only spaces after the dict's closing '}'");
    return CLS_OK;
}

/* "int32", "float16", ... for a dtype string numpy might write, "" if unknown. */
static void dtype_words(const str *s, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *p = s->s;
    if (s->clipped || s->len < 2) return;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=') p++;
    char kind = *p++;
    char *end;
    long bytes = strtol(p, &end, 10);
    if (end == p || *end || bytes <= 0 || bytes > 64) return;
    const char *name = kind == 'f' ? "float" : kind == 'i' ? "int" : kind == 'u' ? "uint"
                     : kind == 'c' ? "complex" : NULL;
    if (kind == 'b' && bytes == 1) snprintf(buf, len, " (bool)");
    else if (name) snprintf(buf, len, " (%s%ld)", name, bytes * 8);
}

static cls_status check_descr(const header_dict *d, cls_dtype *dtype, char *err, size_t errlen)
{
    if (d->descr_structured)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "dtype is a structured (record) type; clscale reads '<f4' or '<f8'");
    if (str_is(&d->descr, "<f4")) *dtype = CLS_F32;
    else if (str_is(&d->descr, "<f8")) *dtype = CLS_F64;
    else {
        char s[4 * STR_CAP + 8], words[32];
        printable(&d->descr, s, sizeof s);
        const char *rest = d->descr.s + (d->descr.len && strchr("<>=|", d->descr.s[0]) ? 1 : 0);
        int float_48 = !d->descr.clipped && (!strcmp(rest, "f4") || !strcmp(rest, "f8")) &&
                       strlen(d->descr.s) == d->descr.len;
        if (float_48 && d->descr.s[0] == '>')
            return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                        "dtype '%s' is big-endian; clscale reads little-endian '<f4' or '<f8' "
                        "(convert with a.astype('<%s'))", s, rest);
        if (float_48)
            return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                        "dtype '%s' does not say its byte order; clscale reads little-endian "
                        "'<f4' or '<f8'", s);
        dtype_words(&d->descr, words, sizeof words);
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "dtype '%s'%s is not float32 or float64 (convert with a.astype(np.float32))",
                    s, words);
    }
    return CLS_OK;
}

cls_status cls_npy_parse_header(const void *buf, size_t len, cls_dtype *dtype, size_t *ndim,
                                size_t shape[3], size_t *data_offset, char *err, size_t errlen)
{
    const unsigned char *b = buf;
    if (!b && len) return cls_npy_fail(err, errlen, CLS_E_ARG, "no buffer");
    if (len == 0) return cls_npy_fail(err, errlen, CLS_E_FORMAT, "empty file (0 bytes), not a .npy file");
    if (len < MAGIC_LEN || memcmp(b, MAGIC, MAGIC_LEN) != 0) {
        if (len < MAGIC_LEN && memcmp(b, MAGIC, len) == 0)
            return cls_npy_fail(err, errlen, CLS_E_FORMAT, "truncated header: the file ends after %zu bytes", len);
        return cls_npy_fail(err, errlen, CLS_E_FORMAT, "not a .npy file (no \\x93NUMPY magic at its start)");
    }
    if (len < MAGIC_LEN + 2)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT, "truncated header: the file ends after %zu bytes", len);
    unsigned major = b[6], minor = b[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    ".npy format version %u.%u is not supported (clscale reads 1.0, 2.0 and 3.0)",
                    major, minor);
    size_t prefix = major == 1 ? 10 : 12;
    if (len < prefix)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT, "truncated header: the file ends after %zu bytes", len);
    uint64_t hlen = (uint64_t)b[8] | (uint64_t)b[9] << 8;
    if (major > 1) hlen |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
    if (hlen > len - prefix)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "truncated header: its length field says %llu bytes, only %zu follow",
                    (unsigned long long)hlen, len - prefix);
    size_t offset = prefix + (size_t)hlen;

    header_dict d;
    memset(&d, 0, sizeof d);
    lex l = {b + prefix, b + offset, b, err, errlen};
    cls_status st = parse_dict(&l, &d);
    if (st != CLS_OK) return st;
    cls_dtype dt;
    if (d.descr_structured) return check_descr(&d, &dt, err, errlen);
    if (!d.has_descr) return cls_npy_fail(err, errlen, CLS_E_FORMAT, "header has no 'descr' (the dtype)");
    if (!d.has_fortran) return cls_npy_fail(err, errlen, CLS_E_FORMAT, "header has no 'fortran_order'");
    if (!d.has_shape) return cls_npy_fail(err, errlen, CLS_E_FORMAT, "header has no 'shape'");

    if ((st = check_descr(&d, &dt, err, errlen)) != CLS_OK) return st;
    if (d.fortran)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "Fortran order is not supported (save with np.ascontiguousarray)");
    if (d.ndim == 0)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT, "0 dimensions (a scalar); clscale takes 1 to 3 "
                                                       "(data 2-D or 3-D, factors 1-D to 3-D)");
    if (d.ndim > 3)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT, "%zu dimensions; clscale takes 1 to 3 "
                                                       "(data 2-D or 3-D, factors 1-D to 3-D)", d.ndim);
    char sh[128];
    cls_npy_shape_text(sh, sizeof sh, d.ndim, d.shape);
    for (size_t i = 0; i < d.ndim; i++)
        if (d.shape[i] == 0) return cls_npy_fail(err, errlen, CLS_E_FORMAT, "empty array: shape %s", sh);
    if (cls_npy_data_size(dt, d.ndim, d.shape, offset) == 0)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT, "shape %s of %s is too large: its data exceeds %zu bytes",
                    sh, cls_npy_dtype_name(dt), (size_t)PTRDIFF_MAX);
    if (offset % elem_size(dt) != 0)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "the data starts at byte %zu, not a multiple of %zu (numpy aligns it to 64)",
                    offset, elem_size(dt));

    *dtype = dt;
    *ndim = d.ndim;
    for (size_t i = 0; i < 3; i++) shape[i] = i < d.ndim ? d.shape[i] : 0;
    *data_offset = offset;
    return CLS_OK;
}

cls_status cls_npy_check_data(cls_dtype dtype, size_t ndim, const size_t shape[3],
                              size_t data_offset, uint64_t file_size, size_t *data_bytes,
                              char *err, size_t errlen)
{
    if ((dtype != CLS_F32 && dtype != CLS_F64) || ndim < 1 || ndim > 3 || !shape || !data_bytes)
        return cls_npy_fail(err, errlen, CLS_E_ARG, "not a shape cls_npy_parse_header() returns");
    for (size_t i = 0; i < ndim; i++)
        if (shape[i] == 0) return cls_npy_fail(err, errlen, CLS_E_ARG, "not a shape cls_npy_parse_header() returns");
    char sh[128];
    cls_npy_shape_text(sh, sizeof sh, ndim, shape);
    size_t bytes = cls_npy_data_size(dtype, ndim, shape, data_offset);
    if (bytes == 0)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT, "shape %s of %s is too large: its data exceeds %zu bytes",
                    sh, cls_npy_dtype_name(dtype), (size_t)PTRDIFF_MAX);
    if (file_size < data_offset)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "truncated header: the file has %llu bytes, the header says the data starts at %zu",
                    (unsigned long long)file_size, data_offset);
    uint64_t found = file_size - data_offset;
    if (found < bytes)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "truncated: expected %zu bytes of data (shape %s of %s), found %llu", bytes, sh,
                    cls_npy_dtype_name(dtype), (unsigned long long)found);
    if (found > bytes)
        return cls_npy_fail(err, errlen, CLS_E_FORMAT,
                    "%llu bytes of trailing data after the %zu of the array (shape %s of %s)",
                    (unsigned long long)(found - bytes), bytes, sh, cls_npy_dtype_name(dtype));
    *data_bytes = bytes;
    return CLS_OK;
}

/* The numpy 1.0 header, as numpy >= 1.24 writes it: sorted keys, spare
 * spaces for the first dimension to grow, padded so that the data starts at a
 * multiple of ALIGN (by 1 to ALIGN spaces, as numpy does). Returns its length. */
size_t cls_npy_write_header(unsigned char *buf, size_t cap, cls_dtype dt, size_t ndim, const size_t *shape)
{
    char sh[128], dict[256];
    cls_npy_shape_text(sh, sizeof sh, ndim, shape);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     dt == CLS_F64 ? "<f8" : dt == CLS_NPY_BOOL ? "|b1" : "<f4", sh);
    int digits = snprintf(NULL, 0, "%zu", shape[0]);
    if (n < 0 || (size_t)n >= sizeof dict || digits < 0) return 0;
    size_t body = (size_t)n + (digits < GROWTH_DIGITS ? (size_t)(GROWTH_DIGITS - digits) : 0);
    size_t pad = ALIGN - (MAGIC_LEN + 4 + body + 1) % ALIGN;
    size_t hlen = body + pad + 1, total = MAGIC_LEN + 4 + hlen;
    if (total > cap || hlen > 0xffff) return 0;
    memcpy(buf, MAGIC, MAGIC_LEN);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', hlen - 1 - (size_t)n);
    buf[total - 1] = '\n';
    return total;
}
