/*
 * core/value.c: schemas, type names, exact decimals and the text encodings of values
 * (jsonl, csv, text) that every command prints rows with (architecture §7).
 *
 * Guarantees: decimals are formatted and parsed exactly (128-bit integers, never a
 * double); parsing refuses rather than rounds; JSON strings are escaped per RFC 8259.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/time.h"
#include "mcdc/value.h"

mcdc_schema *mcdc_schema_new(void)
{
    return calloc(1, sizeof(mcdc_schema));
}

int mcdc_schema_add(mcdc_schema *s, const char *name, mcdc_type_id type, int precision, int scale,
                    bool nullable)
{
    mcdc_column *cols;
    if (type == MCDC_TYPE_DECIMAL && (precision < 1 || precision > 38 || scale < 0 || scale > precision))
        return mcdc_error_set(MCDC_EINVAL, "column %s: bad decimal(%d,%d): precision must be 1 to 38 and scale 0 to precision",
                              name, precision, scale);
    if (mcdc_schema_find(s, name) >= 0)
        return mcdc_error_set(MCDC_EINVAL, "column %s appears twice", name);
    cols = realloc(s->cols, (s->n_cols + 1) * sizeof *cols);
    if (!cols)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory adding column %s", name);
    s->cols = cols;
    mcdc_column *c = &s->cols[s->n_cols];
    memset(c, 0, sizeof *c);
    c->name = strdup(name);
    if (!c->name)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory adding column %s", name);
    c->type = type;
    c->precision = type == MCDC_TYPE_DECIMAL ? precision : 0;
    c->scale = type == MCDC_TYPE_DECIMAL ? scale : 0;
    c->nullable = nullable;
    s->n_cols++;
    return 0;
}

mcdc_schema *mcdc_schema_copy(const mcdc_schema *s)
{
    mcdc_schema *c = mcdc_schema_new();
    if (!c)
        return NULL;
    for (size_t i = 0; i < s->n_cols; i++) {
        const mcdc_column *col = &s->cols[i];
        if (mcdc_schema_add(c, col->name, col->type, col->precision, col->scale, col->nullable) < 0) {
            mcdc_schema_free(c);
            return NULL;
        }
    }
    return c;
}

int mcdc_schema_find(const mcdc_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n_cols; i++)
        if (!strcasecmp(s->cols[i].name, name))
            return (int)i;
    return -1;
}

void mcdc_schema_free(mcdc_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_cols; i++)
        free(s->cols[i].name);
    free(s->cols);
    free(s);
}

static const char *const type_names[] = {
    [MCDC_TYPE_BOOLEAN] = "boolean", [MCDC_TYPE_BYTE] = "byte",     [MCDC_TYPE_SHORT] = "short",
    [MCDC_TYPE_INT] = "integer",     [MCDC_TYPE_LONG] = "long",     [MCDC_TYPE_FLOAT] = "float",
    [MCDC_TYPE_DOUBLE] = "double",   [MCDC_TYPE_DECIMAL] = "decimal", [MCDC_TYPE_STRING] = "string",
    [MCDC_TYPE_BINARY] = "binary",   [MCDC_TYPE_DATE] = "date",     [MCDC_TYPE_TIMESTAMP] = "timestamp",
    [MCDC_TYPE_TIMESTAMP_NTZ] = "timestamp_ntz",
};

char *mcdc_type_name(char *out, size_t cap, const mcdc_column *col)
{
    if (col->type == MCDC_TYPE_DECIMAL)
        snprintf(out, cap, "decimal(%d,%d)", col->precision, col->scale);
    else if (col->type >= MCDC_TYPE_BOOLEAN && col->type <= MCDC_TYPE_TIMESTAMP_NTZ)
        snprintf(out, cap, "%s", type_names[col->type]);
    else
        snprintf(out, cap, "unknown");
    return out;
}

int mcdc_type_parse(mcdc_column *col, const char *name)
{
    int p, s, end = -1;
    for (int t = MCDC_TYPE_BOOLEAN; t <= MCDC_TYPE_TIMESTAMP_NTZ; t++) {
        if (t != MCDC_TYPE_DECIMAL && !strcmp(name, type_names[t])) {
            col->type = (mcdc_type_id)t;
            col->precision = col->scale = 0;
            return 0;
        }
    }
    if (sscanf(name, "decimal(%d,%d)%n", &p, &s, &end) == 2 && end > 0 && name[end] == '\0' &&
        p >= 1 && p <= 38 && s >= 0 && s <= p) {
        col->type = MCDC_TYPE_DECIMAL;
        col->precision = p;
        col->scale = s;
        return 0;
    }
    if (!strcmp(name, "decimal")) { /* Spark's default */
        col->type = MCDC_TYPE_DECIMAL;
        col->precision = 10;
        col->scale = 0;
        return 0;
    }
    return mcdc_error_set(MCDC_EUNSUPPORTED, "type '%s' is not supported", name);
}

char *mcdc_decimal_format(char out[48], mcdc_int128 unscaled, int scale)
{
    char digits[48];
    int n = 0;
    bool neg = unscaled < 0;
    unsigned __int128 u = neg ? (unsigned __int128)0 - (unsigned __int128)unscaled : (unsigned __int128)unscaled;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (n <= scale)
        digits[n++] = '0';
    int k = 0;
    if (neg)
        out[k++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        if (i == scale - 1)
            out[k++] = '.';
        out[k++] = digits[i];
    }
    out[k] = '\0';
    return out;
}

int mcdc_decimal_parse(mcdc_int128 *out, const char *s, size_t len, int precision, int scale)
{
    size_t i = 0;
    bool neg = false;
    int n_int = 0, n_frac = 0;
    mcdc_int128 v = 0;
    if (precision < 1 || precision > 38 || scale < 0 || scale > precision)
        return mcdc_error_set(MCDC_EINVAL, "bad decimal(%d,%d): precision must be 1 to 38 and scale 0 to precision",
                              precision, scale);
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    size_t start = i;
    while (i < len && isdigit((unsigned char)s[i])) {
        if (n_int > 0 || s[i] != '0')
            n_int++;
        if (n_int <= 38)
            v = v * 10 + (s[i] - '0');
        i++;
    }
    bool had_int = i > start;
    /* Too many integer digits: still check the syntax, but stop accumulating so that v
     * (at most precision <= 38 digits otherwise) can never overflow. */
    bool too_big = n_int > precision - scale;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && isdigit((unsigned char)s[i])) {
            if (n_frac >= scale) {
                if (s[i] != '0')
                    return mcdc_error_set(MCDC_EINVAL, "decimal '%.*s' has more than %d fraction digits",
                                          (int)len, s, scale);
            } else {
                if (!too_big)
                    v = v * 10 + (s[i] - '0');
                n_frac++;
            }
            i++;
        }
        if (!had_int && n_frac == 0 && (i == start + 1))
            goto bad;
    } else if (!had_int) {
        goto bad;
    }
    if (i != len)
        goto bad;
    for (; n_frac < scale && !too_big; n_frac++)
        v *= 10;
    if (too_big)
        return mcdc_error_set(MCDC_EINVAL, "decimal '%.*s' does not fit decimal(%d,%d)", (int)len, s, precision, scale);
    *out = neg ? -v : v;
    return 0;
bad:
    return mcdc_error_set(MCDC_EINVAL, "bad decimal '%.*s'", (int)len, s);
}

int mcdc_json_quote(mcdc_buf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    int rc = mcdc_buf_grow(out, len + 2);
    if (rc < 0)
        return rc;
    mcdc_buf_putc(out, '"');
    for (size_t i = 0; i < len; i++) {
        size_t run = i; /* bytes that stand as they are go out in one piece */
        while (run < len && (unsigned char)s[run] >= 0x20 && s[run] != '"' && s[run] != '\\')
            run++;
        if (run > i && (rc = mcdc_buf_put(out, s + i, run - i)) < 0)
            return rc;
        if ((i = run) == len)
            break;
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            rc = mcdc_buf_put(out, e, 2);
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            if (c == '\n') rc = mcdc_buf_put(out, "\\n", 2);
            else if (c == '\r') rc = mcdc_buf_put(out, "\\r", 2);
            else if (c == '\t') rc = mcdc_buf_put(out, "\\t", 2);
            else rc = mcdc_buf_put(out, e, 6);
        }
        if (rc < 0)
            return rc;
    }
    return mcdc_buf_putc(out, '"');
}

static int put_hex(mcdc_buf *out, const char *p, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = mcdc_buf_puts(out, "0x");
    for (size_t i = 0; rc == 0 && i < len; i++) {
        char h[2] = {hex[(unsigned char)p[i] >> 4], hex[(unsigned char)p[i] & 15]};
        rc = mcdc_buf_put(out, h, 2);
    }
    return rc;
}

/* Scalars as text without quotes: shared by the three encodings. Returns 1 when the value
 * is a bare JSON number (no quotes needed), 0 otherwise, <0 on error. */
static int scalar_text(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v)
{
    char tmp[64];
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN:
        return mcdc_buf_puts(out, v->v.b ? "true" : "false") < 0 ? -1 : 1;
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
        return mcdc_buf_printf(out, "%lld", (long long)v->v.i) < 0 ? -1 : 1;
    case MCDC_TYPE_FLOAT: case MCDC_TYPE_DOUBLE: {
        double d = col->type == MCDC_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        if (isnan(d)) return mcdc_buf_puts(out, "NaN") < 0 ? -1 : 0;
        if (isinf(d)) return mcdc_buf_puts(out, d > 0 ? "Infinity" : "-Infinity") < 0 ? -1 : 0;
        if (col->type == MCDC_TYPE_FLOAT)
            snprintf(tmp, sizeof tmp, "%.9g", d);
        else
            snprintf(tmp, sizeof tmp, "%.17g", d);
        /* shortest text that reads back to the same value */
        for (int prec = 1; prec <= 17; prec++) {
            char t2[64];
            snprintf(t2, sizeof t2, "%.*g", prec, d);
            if (col->type == MCDC_TYPE_FLOAT ? strtof(t2, NULL) == (float)d : strtod(t2, NULL) == d) {
                memcpy(tmp, t2, sizeof t2);
                break;
            }
        }
        return mcdc_buf_puts(out, tmp) < 0 ? -1 : 1;
    }
    case MCDC_TYPE_DECIMAL:
        return mcdc_buf_puts(out, mcdc_decimal_format(tmp, v->v.dec, col->scale)) < 0 ? -1 : 0;
    case MCDC_TYPE_DATE: {
        int64_t y;
        unsigned m, d;
        mcdc_civil_from_days(v->v.i, &y, &m, &d);
        return mcdc_buf_printf(out, "%04lld-%02u-%02u", (long long)y, m, d) < 0 ? -1 : 0;
    }
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ:
        return mcdc_buf_puts(out, mcdc_time_format(tmp, v->v.i, 6, col->type == MCDC_TYPE_TIMESTAMP)) < 0 ? -1 : 0;
    case MCDC_TYPE_BINARY:
        return put_hex(out, v->v.s.ptr, v->v.s.len) < 0 ? -1 : 0;
    case MCDC_TYPE_STRING:
        return mcdc_buf_put(out, v->v.s.ptr, v->v.s.len) < 0 ? -1 : 0;
    }
    return mcdc_error_set(MCDC_EINVAL, "column %s: unknown type %d", col->name, (int)col->type);
}

int mcdc_value_to_json(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v)
{
    if (v->is_null)
        return mcdc_buf_puts(out, "null");
    if (col->type == MCDC_TYPE_STRING)
        return mcdc_json_quote(out, v->v.s.ptr, v->v.s.len);
    mcdc_buf tmp = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int rc = scalar_text(&tmp, col, v);
    if (rc == 1)
        rc = mcdc_buf_put(out, tmp.ptr, tmp.len);
    else if (rc == 0)
        rc = mcdc_json_quote(out, tmp.ptr, tmp.len);
    mcdc_buf_dispose(&tmp);
    return rc < 0 ? mcdc_error_last()->code ? mcdc_error_last()->code : MCDC_ERROR : 0;
}

int mcdc_value_to_csv(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v)
{
    if (v->is_null)
        return 0;
    mcdc_buf tmp = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int rc = scalar_text(&tmp, col, v);
    if (rc >= 0) {
        bool quote = tmp.len == 0 && col->type == MCDC_TYPE_STRING; /* "" tells empty from NULL */
        for (size_t i = 0; i < tmp.len && !quote; i++)
            quote = tmp.ptr[i] == ',' || tmp.ptr[i] == '"' || tmp.ptr[i] == '\n' || tmp.ptr[i] == '\r';
        if (!quote) {
            rc = tmp.len ? mcdc_buf_put(out, tmp.ptr, tmp.len) : 0;
        } else {
            rc = mcdc_buf_putc(out, '"');
            for (size_t i = 0; rc == 0 && i < tmp.len; i++)
                rc = tmp.ptr[i] == '"' ? mcdc_buf_put(out, "\"\"", 2) : mcdc_buf_putc(out, tmp.ptr[i]);
            if (rc == 0)
                rc = mcdc_buf_putc(out, '"');
        }
    }
    mcdc_buf_dispose(&tmp);
    return rc < 0 ? MCDC_ERROR : 0;
}

int mcdc_value_to_text(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v)
{
    if (v->is_null)
        return mcdc_buf_puts(out, "NULL");
    return scalar_text(out, col, v) < 0 ? MCDC_ERROR : 0;
}
