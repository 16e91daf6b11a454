/*
 * delta/dv_write.c: writing deletion vectors (PROTOCOL "Deletion Vector Format"), the
 * inverse of dv.c's reader, whose comment draws the format.
 *
 * One call writes one new file <table>/deletion_vector_<uuid>.bin holding any number of
 * vectors back to back after the version byte (1): per vector a u32 BE size, the bitmap
 * and a u32 BE CRC-32 of the bitmap; a descriptor's offset is the position of its size
 * field, its pathOrInlineDv the Z85 text of the UUID's 16 bytes (storage 'u', no
 * prefix). The bitmap is the portable RoaringBitmapArray: magic, u64 bucket count, per
 * bucket (high 32 bits) its key and a standard 32-bit roaring bitmap without run
 * containers (cookie 12346, container count, keys and cardinalities, offsets, then array
 * containers of up to 4,096 values or 8 KiB bitsets). Every engine that reads deletion
 * vectors reads this form.
 *
 * Guarantees: the file is created under a fresh name, never replaced, and durable before
 * the call returns (a commit naming it may follow); a crash before that commit leaves an
 * unreferenced file that vacuum removes. Row indexes must be ascending and distinct.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "delta/internal.h"
#include "mcdc/storage.h"

#define DV_MAGIC 1681511377u

static const char z85_chars[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/* Z85 text of @p n bytes (a multiple of 4) into out (n/4*5 characters and a NUL). */
static void z85_encode(char *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = (uint32_t)p[i] << 24 | (uint32_t)p[i + 1] << 16 | (uint32_t)p[i + 2] << 8 |
                     p[i + 3];
        for (int k = 4; k >= 0; k--) {
            out[i / 4 * 5 + (size_t)k] = z85_chars[v % 85];
            v /= 85;
        }
    }
    out[n / 4 * 5] = 0;
}

static int put_le16(mcdc_buf *b, uint16_t v)
{
    uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
    return mcdc_buf_put(b, x, 2);
}

static int put_le32(mcdc_buf *b, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    return mcdc_buf_put(b, x, 4);
}

static int put_be32(mcdc_buf *b, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
    return mcdc_buf_put(b, x, 4);
}

static void set_le32(mcdc_buf *b, size_t at, uint32_t v)
{
    uint8_t *p = (uint8_t *)b->ptr + at;
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* One standard 32-bit roaring bitmap of the low 32 bits of rows[0..n) (one bucket). */
static int put_roaring32(mcdc_buf *b, const uint64_t *rows, size_t n)
{
    size_t start = b->len;
    /* containers: runs of equal bits 16..31 */
    size_t n_cont = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || (uint32_t)rows[i] >> 16 != (uint32_t)rows[i - 1] >> 16)
            n_cont++;
    int rc = put_le32(b, 12346);
    if (rc == 0)
        rc = put_le32(b, (uint32_t)n_cont);
    for (size_t i = 0; rc == 0 && i < n;) {
        uint16_t key = (uint16_t)((uint32_t)rows[i] >> 16);
        size_t j = i;
        while (j < n && (uint16_t)((uint32_t)rows[j] >> 16) == key)
            j++;
        if ((rc = put_le16(b, key)) == 0)
            rc = put_le16(b, (uint16_t)(j - i - 1));
        i = j;
    }
    size_t offsets = b->len;
    for (size_t k = 0; rc == 0 && k < n_cont; k++)
        rc = put_le32(b, 0); /* filled in below */
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < n; k++) {
        uint16_t key = (uint16_t)((uint32_t)rows[i] >> 16);
        size_t j = i;
        while (j < n && (uint16_t)((uint32_t)rows[j] >> 16) == key)
            j++;
        set_le32(b, offsets + 4 * k, (uint32_t)(b->len - start));
        if (j - i > 4096) {
            uint8_t bits[8192];
            memset(bits, 0, sizeof bits);
            for (size_t x = i; x < j; x++) {
                uint16_t v = (uint16_t)rows[x];
                bits[v / 8] |= (uint8_t)(1u << (v % 8));
            }
            rc = mcdc_buf_put(b, bits, sizeof bits);
        } else {
            for (size_t x = i; rc == 0 && x < j; x++)
                rc = put_le16(b, (uint16_t)rows[x]);
        }
        i = j;
    }
    return rc;
}

int mcdc_delta__dv_bitmap(mcdc_buf *b, const uint64_t *rows, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (rows[i] <= rows[i - 1])
            return mcdc_error_set(MCDC_EINVAL, "deletion vector: row indexes must be ascending "
                                  "and distinct (%llu after %llu)", (unsigned long long)rows[i],
                                  (unsigned long long)rows[i - 1]);
    size_t n_buckets = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || rows[i] >> 32 != rows[i - 1] >> 32)
            n_buckets++;
    int rc = put_le32(b, DV_MAGIC);
    if (rc == 0)
        rc = put_le32(b, (uint32_t)n_buckets);
    if (rc == 0)
        rc = put_le32(b, (uint32_t)((uint64_t)n_buckets >> 32));
    for (size_t i = 0; rc == 0 && i < n;) {
        uint32_t high = (uint32_t)(rows[i] >> 32);
        size_t j = i;
        while (j < n && (uint32_t)(rows[j] >> 32) == high)
            j++;
        if ((rc = put_le32(b, high)) == 0)
            rc = put_roaring32(b, rows + i, j - i);
        i = j;
    }
    return rc;
}

int mcdc_delta_dv_write(const char *table, const uint64_t *const *rows, const size_t *n_rows,
                        size_t n, mcdc_delta_dv *out)
{
    MCDC_ASSERT_ARG(table && out && (n == 0 || (rows && n_rows)));
    memset(out, 0, n * sizeof *out);
    if (n == 0)
        return 0;
    mcdc_buf b = MCDC_BUF_INIT((size_t)1 << 31);
    uint8_t version = 1;
    int rc = mcdc_buf_put(&b, &version, 1);
    int32_t *offset = calloc(n, sizeof *offset), *size = calloc(n, sizeof *size);
    if (rc == 0 && (!offset || !size))
        rc = mcdc_error_set(MCDC_ENOMEM, "deletion vector: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t at = b.len;
        if (at > INT32_MAX - 8)
            rc = mcdc_error_set(MCDC_EINVAL, "deletion vector file past 2 GiB");
        if (rc == 0)
            rc = put_be32(&b, 0); /* the size, once known */
        if (rc == 0)
            rc = mcdc_delta__dv_bitmap(&b, rows[i], n_rows[i]);
        if (rc < 0)
            break;
        size_t len = b.len - at - 4;
        uint8_t *p = (uint8_t *)b.ptr + at;
        p[0] = (uint8_t)(len >> 24);
        p[1] = (uint8_t)(len >> 16);
        p[2] = (uint8_t)(len >> 8);
        p[3] = (uint8_t)len;
        rc = put_be32(&b, (uint32_t)crc32(0L, p + 4, (uInt)len));
        offset[i] = (int32_t)at;
        size[i] = (int32_t)len;
    }
    /* a fresh UUID names the file; its 16 bytes from the text form */
    char uuid[37], z85[21];
    uint8_t u[16];
    if (rc == 0) {
        mcdc_delta_uuid(uuid);
        for (size_t i = 0, k = 0; uuid[i] && k < 16; i++) {
            if (uuid[i] == '-')
                continue;
            unsigned hi = (unsigned)(uuid[i] <= '9' ? uuid[i] - '0' : (uuid[i] | 0x20) - 'a' + 10);
            unsigned lo = (unsigned)(uuid[i + 1] <= '9' ? uuid[i + 1] - '0'
                                                       : (uuid[i + 1] | 0x20) - 'a' + 10);
            u[k++] = (uint8_t)(hi << 4 | lo);
            i++;
        }
        z85_encode(z85, u, 16);
        mcdc_delta_dv probe = { 'u', z85, -1, 0, 0 };
        char *path = mcdc_delta__dv_path(table, &probe);
        rc = path ? mcdc_storage_create(path, b.ptr, b.len)
                  : mcdc_error_set(MCDC_ENOMEM, "deletion vector: out of memory");
        free(path);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        out[i].storage_type = 'u';
        out[i].path_or_inline_dv = strdup(z85);
        out[i].offset = offset[i];
        out[i].size_in_bytes = size[i];
        out[i].cardinality = (int64_t)n_rows[i];
        if (!out[i].path_or_inline_dv)
            rc = mcdc_error_set(MCDC_ENOMEM, "deletion vector: out of memory");
    }
    if (rc < 0)
        for (size_t i = 0; i < n; i++)
            mcdc_delta_dv_clear(&out[i]);
    free(offset);
    free(size);
    mcdc_buf_dispose(&b);
    return rc;
}

int mcdc_delta_dv_read(uint64_t **out, size_t *n_out, const char *table, const mcdc_delta_dv *dv)
{
    MCDC_ASSERT_ARG(out && n_out && table && dv);
    return mcdc_delta__dv_load(out, n_out, table, dv);
}

void mcdc_delta_dv_clear(mcdc_delta_dv *dv)
{
    if (!dv)
        return;
    free(dv->path_or_inline_dv);
    memset(dv, 0, sizeof *dv);
}
