/*
 * delta/dv.c: deletion vectors (PROTOCOL "Deletion Vectors"): locating and decoding the
 * set of deleted row indexes of a data file.
 *
 * Storage types: 'i' inline (the bitmap itself, Z85-encoded in pathOrInlineDv), 'u' a file
 * <table>/<prefix>/deletion_vector_<uuid>.bin where the last 20 characters of
 * pathOrInlineDv are the Z85 form of the UUID's 16 bytes and the rest is the prefix, 'p'
 * an absolute path. A DV file:
 *
 *   offset   size          meaning
 *   0        1             format version, 1
 *   off      4 (BE)        dataSize = sizeInBytes
 *   off+4    dataSize      the bitmap (below)
 *   +dataSize 4 (BE)       CRC-32 of the bitmap
 *
 * Bitmap ("RoaringBitmapArray"), portable 64-bit format, little-endian:
 *   u32 magic 1681511377, u64 number of buckets, then per bucket a u32 key (the high 32
 *   bits) and a standard 32-bit RoaringBitmap (RoaringFormatSpec): cookie 12346 + u32
 *   container count, or 12347 | (count-1) << 16 followed by run flags; per container a
 *   u16 key and u16 cardinality-1; u32 offsets (always without runs, with runs when there
 *   are at least 4 containers); then array (u16 values), bitmap (8 KiB) or run (u16
 *   count, then start/length-1 pairs) containers.
 * Or the native framing (PROTOCOL's inline example): u32 BE magic 1681511376, u32 BE
 *   count, then per bitmap i (high bits i) a u32 BE length and a standard bitmap.
 * Hand-worked example: the bitmap {5} is 3a300000 01000000 0000 0000 10000000 0500
 *   (cookie 12346, 1 container, key 0 card 1, offset 16, value 5) inside
 *   d1d33964 0100000000000000 00000000 (magic, 1 bucket, key 0).
 * Every size comes from the input and is checked against the bytes that remain; the
 * decoded cardinality must equal the descriptor's.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "delta/internal.h"
#include "mcdc/storage.h"

#define DV_MAGIC 1681511377u        /* portable, little-endian framing */
#define DV_MAGIC_NATIVE 1681511376u /* native, big-endian framing */
#define MAX_DV_BYTES ((size_t)256 << 20)

static const char z85_chars[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/* Decode Z85 text of @p n characters (a multiple of 5) into out (n/5*4 bytes). */
static int z85_decode(uint8_t *out, const char *s, size_t n)
{
    static int8_t rev[256];
    static bool init;
    if (!init) {
        memset(rev, -1, sizeof rev);
        for (int i = 0; i < 85; i++)
            rev[(unsigned char)z85_chars[i]] = (int8_t)i;
        init = true;
    }
    if (n % 5)
        return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: Z85 text of %zu characters is not "
                              "a multiple of 5", n);
    for (size_t i = 0; i < n; i += 5) {
        uint64_t v = 0;
        for (int k = 0; k < 5; k++) {
            int d = rev[(unsigned char)s[i + k]];
            if (d < 0)
                return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: '%c' is not a Z85 "
                                      "character", s[i + k]);
            v = v * 85 + (uint64_t)d;
        }
        if (v > 0xFFFFFFFFu)
            return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: Z85 group out of range");
        out[i / 5 * 4 + 0] = (uint8_t)(v >> 24);
        out[i / 5 * 4 + 1] = (uint8_t)(v >> 16);
        out[i / 5 * 4 + 2] = (uint8_t)(v >> 8);
        out[i / 5 * 4 + 3] = (uint8_t)v;
    }
    return 0;
}

typedef struct cur {
    const uint8_t *p, *end;
} cur;

static bool take(cur *c, size_t n, const uint8_t **out)
{
    if ((size_t)(c->end - c->p) < n)
        return false;
    *out = c->p;
    c->p += n;
    return true;
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

typedef struct rows {
    uint64_t *v;
    size_t    n, cap, max; /* max: the descriptor's cardinality bounds the output */
} rows;

static int push(rows *r, uint64_t x)
{
    if (r->n >= r->max)
        return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: more rows than its cardinality %zu",
                              r->max);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        uint64_t *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return mcdc_error_set(MCDC_ENOMEM, "deletion vector: out of memory");
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = x;
    return 0;
}

#define BAD() mcdc_error_set(MCDC_ECORRUPT, "deletion vector: bitmap truncated or malformed")

/* One standard 32-bit roaring bitmap; values get @p high << 32. */
static int roaring32(cur *c, uint64_t high, rows *out)
{
    const uint8_t *p;
    if (!take(c, 4, &p))
        return BAD();
    uint32_t cookie = le32(p);
    uint32_t n;
    const uint8_t *run_flags = NULL;
    bool has_offsets;
    if ((cookie & 0xFFFF) == 12347) {
        n = (cookie >> 16) + 1;
        if (!take(c, (n + 7) / 8, &run_flags))
            return BAD();
        has_offsets = n >= 4;
    } else if (cookie == 12346) {
        if (!take(c, 4, &p))
            return BAD();
        n = le32(p);
        has_offsets = true;
    } else {
        return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: bad roaring cookie %u", cookie);
    }
    if (n > 65536)
        return BAD();
    const uint8_t *hdr;
    if (!take(c, (size_t)n * 4, &hdr))
        return BAD();
    if (has_offsets && !take(c, (size_t)n * 4, &p))
        return BAD();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t key = le16(hdr + 4 * i);
        uint32_t card = (uint32_t)le16(hdr + 4 * i + 2) + 1;
        uint64_t base = high << 32 | key << 16;
        int rc = 0;
        if (run_flags && (run_flags[i / 8] >> (i % 8) & 1)) {
            if (!take(c, 2, &p))
                return BAD();
            uint16_t nr = le16(p);
            const uint8_t *runs;
            if (!take(c, (size_t)nr * 4, &runs))
                return BAD();
            for (uint16_t k = 0; k < nr && rc == 0; k++) {
                uint32_t start = le16(runs + 4 * k), len = (uint32_t)le16(runs + 4 * k + 2) + 1;
                if (start + len > 65536)
                    return BAD();
                for (uint32_t x = 0; x < len && rc == 0; x++)
                    rc = push(out, base + start + x);
            }
        } else if (card > 4096) {
            const uint8_t *bits;
            if (!take(c, 8192, &bits))
                return BAD();
            for (uint32_t x = 0; x < 65536 && rc == 0; x++)
                if (bits[x / 8] >> (x % 8) & 1)
                    rc = push(out, base + x);
        } else {
            const uint8_t *vals;
            if (!take(c, (size_t)card * 2, &vals))
                return BAD();
            for (uint32_t k = 0; k < card && rc == 0; k++)
                rc = push(out, base + le16(vals + 2 * k));
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_bitmap(rows *out, const uint8_t *data, size_t len)
{
    cur c = { data, data + len };
    const uint8_t *p;
    if (!take(&c, 4, &p))
        return BAD();
    if (le32(p) == DV_MAGIC) {
        if (!take(&c, 8, &p))
            return BAD();
        uint64_t buckets = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
        if (buckets > len)
            return BAD();
        for (uint64_t b = 0; b < buckets; b++) {
            if (!take(&c, 4, &p))
                return BAD();
            int rc = roaring32(&c, le32(p), out);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    if (be32(p) == DV_MAGIC_NATIVE) {
        /* native framing, big-endian: u32 count, then per bitmap (high key = its index) a
         * u32 length and a standard roaring bitmap of that many bytes */
        if (!take(&c, 4, &p))
            return BAD();
        uint32_t n = be32(p);
        if (n > len)
            return BAD();
        for (uint32_t i = 0; i < n; i++) {
            if (!take(&c, 4, &p))
                return BAD();
            uint32_t blen = be32(p);
            if (blen > (size_t)(c.end - c.p))
                return BAD();
            cur sub = { c.p, c.p + blen };
            int rc = roaring32(&sub, i, out);
            if (rc < 0)
                return rc;
            c.p += blen;
        }
        return 0;
    }
    return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: bad magic number");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

char *mcdc_delta__dv_path(const char *table, const mcdc_delta_dv *dv)
{
    const char *s = dv->path_or_inline_dv;
    if (dv->storage_type == 'p') { /* an absolute path as a URI (PROTOCOL.md) */
        char *dec = mcdc_delta__uri_decode(s);
        if (!dec)
            return NULL;
        const char *p = dec;
        if (strncmp(p, "file:", 5) == 0) {
            p += 5;
            while (p[0] == '/' && p[1] == '/')
                p++;
        }
        char *res = strdup(p);
        free(dec);
        return res;
    }
    size_t n = strlen(s);
    if (dv->storage_type != 'u' || n < 20)
        return NULL;
    uint8_t u[16];
    if (z85_decode(u, s + n - 20, 20) < 0)
        return NULL;
    char name[128];
    snprintf(name, sizeof name,
             "deletion_vector_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x.bin",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
    char dir[1024];
    snprintf(dir, sizeof dir, "%.*s", (int)(n - 20), s);
    char *base = n > 20 ? mcdc_delta__join(table, dir) : strdup(table);
    char *res = base ? mcdc_delta__join(base, name) : NULL;
    free(base);
    return res;
}

int mcdc_delta__dv_load(uint64_t **out, size_t *n_out, const char *table, const mcdc_delta_dv *dv)
{
    *out = NULL;
    *n_out = 0;
    if (dv->cardinality < 0 || dv->size_in_bytes < 12 || (size_t)dv->size_in_bytes > MAX_DV_BYTES)
        return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: bad size %d or cardinality %lld",
                              (int)dv->size_in_bytes, (long long)dv->cardinality);
    rows r = { NULL, 0, 0, (size_t)dv->cardinality };
    uint8_t *bytes = NULL;
    const uint8_t *bitmap = NULL;
    mcdc_buf file = MCDC_BUF_INIT(MAX_DV_BYTES);
    char *path = NULL;
    int rc = 0;
    if (dv->storage_type == 'i') {
        size_t n = strlen(dv->path_or_inline_dv);
        bytes = malloc(n / 5 * 4 + 4);
        if (!bytes)
            return mcdc_error_set(MCDC_ENOMEM, "deletion vector: out of memory");
        rc = z85_decode(bytes, dv->path_or_inline_dv, n);
        if (rc == 0 && n / 5 * 4 < (size_t)dv->size_in_bytes)
            rc = mcdc_error_set(MCDC_ECORRUPT, "deletion vector: inline data shorter than "
                                "sizeInBytes %d", (int)dv->size_in_bytes);
        bitmap = bytes;
    } else if (dv->storage_type == 'u' || dv->storage_type == 'p') {
        path = mcdc_delta__dv_path(table, dv);
        if (!path)
            return mcdc_error_set(MCDC_ECORRUPT, "deletion vector: bad location '%s'",
                                  dv->path_or_inline_dv);
        rc = mcdc_storage_read(&file, NULL, path);
        size_t off = dv->offset >= 0 ? (size_t)dv->offset : 1;
        if (rc == 0 && (file.len < 1 || (uint8_t)file.ptr[0] != 1))
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: not a deletion vector file (version byte)", path);
        if (rc == 0 && (off + 8 > file.len || (size_t)dv->size_in_bytes > file.len - off - 8))
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: deletion vector at byte %zu overruns the file",
                                path, off);
        if (rc == 0) {
            const uint8_t *p = (const uint8_t *)file.ptr + off;
            if (be32(p) != (uint32_t)dv->size_in_bytes)
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: deletion vector at byte %zu has size %u, "
                                    "the log says %d", path, off, be32(p), (int)dv->size_in_bytes);
            bitmap = p + 4;
            uint32_t crc = (uint32_t)crc32(0L, bitmap, (uInt)dv->size_in_bytes);
            if (rc == 0 && crc != be32(bitmap + dv->size_in_bytes))
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: deletion vector at byte %zu fails its "
                                    "CRC-32", path, off);
        }
    } else {
        rc = mcdc_error_set(MCDC_ECORRUPT, "deletion vector: unknown storage type '%c'",
                            dv->storage_type);
    }
    if (rc == 0)
        rc = decode_bitmap(&r, bitmap, (size_t)dv->size_in_bytes);
    if (rc == 0 && r.n != (size_t)dv->cardinality)
        rc = mcdc_error_set(MCDC_ECORRUPT, "deletion vector: %zu rows, the log says %lld", r.n,
                            (long long)dv->cardinality);
    if (rc < 0 && path && !strstr(mcdc_error_last()->message, path))
        mcdc_error_prefix("%s", path);
    free(bytes);
    free(path);
    mcdc_buf_dispose(&file);
    if (rc < 0) {
        free(r.v);
        return rc;
    }
    if (r.n > 1)
        qsort(r.v, r.n, sizeof *r.v, cmp_u64);
    *out = r.v;
    *n_out = r.n;
    return 0;
}
