/*
 * core/keyhash.c: the canonical key text, key hash, key ordinal and row hash that
 * reconcile compares on both sides (the rules are in include/mcdc/keyhash.h).
 *
 * Pure functions over mcdc_value cells; SHA-256 from nettle. The key hash hashes the
 * UTF-16LE form of the text because SQL Server hashes an nvarchar's bytes, so a source
 * that computes it in T-SQL gets the same 7 bytes. Design:
 * docs/decisions/0015-reconcile-buckets-by-key-hash.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nettle/sha2.h>

#include "mcdc/error.h"
#include "mcdc/keyhash.h"
#include "mcdc/text.h"
#include "mcdc/time.h"

bool mcdc_keyhash_has_ordinal(const mcdc_column *col)
{
    switch (col->type) {
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
    case MCDC_TYPE_DATE:
        return true;
    default:
        return false;
    }
}

bool mcdc_keyhash_type_ok(const mcdc_column *col)
{
    return col->type != MCDC_TYPE_FLOAT && col->type != MCDC_TYPE_DOUBLE;
}

int mcdc_keyhash_ordinal(int64_t *out, const mcdc_column *col, const mcdc_value *v)
{
    if (!mcdc_keyhash_has_ordinal(col) || v->is_null)
        return mcdc_error_set(MCDC_EINVAL, "column %s: no ordinal for a %s value", col->name,
                              v->is_null ? "NULL" : "non-integer");
    *out = v->v.i;
    return 0;
}

int64_t mcdc_keyhash_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && (a < 0))
        q--;
    return q;
}

/* The text of one non-NULL key cell. */
static int cell_text(mcdc_buf *t, const mcdc_column *col, const mcdc_value *v)
{
    char tmp[64];
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN:
        return mcdc_buf_puts(t, v->v.b ? "1" : "0");
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
    case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ:
        return mcdc_buf_printf(t, "%" PRId64, v->v.i);
    case MCDC_TYPE_DECIMAL:
        return mcdc_buf_puts(t, mcdc_decimal_format(tmp, v->v.dec, col->scale));
    case MCDC_TYPE_STRING:
        return mcdc_buf_put(t, v->v.s.ptr, v->v.s.len);
    case MCDC_TYPE_BINARY: {
        int rc = mcdc_buf_puts(t, "0x");
        for (size_t i = 0; rc == 0 && i < v->v.s.len; i++)
            rc = mcdc_buf_printf(t, "%02X", (unsigned char)v->v.s.ptr[i]);
        return rc;
    }
    case MCDC_TYPE_DATE: {
        int64_t y;
        unsigned m, d;
        mcdc_civil_from_days(v->v.i, &y, &m, &d);
        return mcdc_buf_printf(t, "%04" PRId64 "-%02u-%02u", y, m, d);
    }
    default:
        return mcdc_error_set(MCDC_EUNSUPPORTED, "key column %s: a floating-point key has no canonical text",
                              col->name);
    }
}

int mcdc_keyhash_text(mcdc_buf *out, const mcdc_column *const *cols, const mcdc_value *const *vals,
                      size_t n)
{
    mcdc_buf t = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!mcdc_keyhash_type_ok(cols[i])) {
            rc = cell_text(&t, cols[i], vals[i]);
            break;
        }
        if (vals[i]->is_null) {
            rc = mcdc_buf_puts(out, "-;");
            continue;
        }
        mcdc_buf_clear(&t);
        if ((rc = cell_text(&t, cols[i], vals[i])) < 0)
            break;
        rc = mcdc_buf_printf(out, "%zu:", mcdc_text_utf16_units(t.ptr ? t.ptr : "", t.len));
        if (rc == 0 && t.len)
            rc = mcdc_buf_put(out, t.ptr, t.len);
        if (rc == 0)
            rc = mcdc_buf_putc(out, ';');
    }
    mcdc_buf_dispose(&t);
    return rc;
}

int mcdc_keyhash_of_text(int64_t *out, const char *text, size_t len)
{
    struct sha256_ctx c;
    sha256_init(&c);
    uint8_t u[256];
    size_t nu = 0;
    for (size_t i = 0; i < len;) {
        size_t used;
        if (mcdc_text_utf8_next(text + i, len - i, &used) < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "key text is not UTF-8 at byte %zu", i);
        if (nu + 4 > sizeof u) {
            sha256_update(&c, nu, u);
            nu = 0;
        }
        nu += mcdc_text_utf16le(u + nu, text + i, used);
        i += used;
    }
    if (nu)
        sha256_update(&c, nu, u);
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&c, sizeof d, d);
    int64_t h = 0;
    for (int i = 0; i < 7; i++)
        h = (h << 8) | d[i];
    *out = h;
    return 0;
}

int mcdc_keyhash_row(uint8_t out[MCDC_KEYHASH_ROW_LEN], mcdc_buf *scratch,
                     const mcdc_column *const *cols, const mcdc_value *const *vals, size_t n)
{
    struct sha256_ctx c;
    sha256_init(&c);
    for (size_t i = 0; i < n; i++) {
        mcdc_buf_clear(scratch);
        int rc = mcdc_value_to_json(scratch, cols[i], vals[i]);
        if (rc < 0)
            return rc;
        char pre[32];
        int np = snprintf(pre, sizeof pre, "%zu:", scratch->len);
        sha256_update(&c, (size_t)np, (const uint8_t *)pre);
        if (scratch->len)
            sha256_update(&c, scratch->len, (const uint8_t *)scratch->ptr);
        sha256_update(&c, 1, (const uint8_t *)";");
    }
    sha256_digest(&c, MCDC_KEYHASH_ROW_LEN, out);
    return 0;
}
