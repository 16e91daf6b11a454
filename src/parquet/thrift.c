/*
 * parquet/thrift.c: Thrift compact protocol writer and bounded reader.
 *
 * The writer never fails half-way in a way the caller must unwind: the first error is
 * kept in w->rc and every later call does nothing. The reader checks every length
 * against the end of its range before touching a byte, refuses varints longer than 10
 * bytes, values out of their type's range, list counts larger than the bytes left, and
 * nesting deeper than MCDC_THRIFT_MAX_DEPTH. Wire format and a worked example: thrift.h.
 */
#include "parquet/thrift.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- writer */

void mcdc_thrift__writer_init(mcdc_thrift_writer *w, mcdc_buf *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

int mcdc_thrift__writer_rc(const mcdc_thrift_writer *w)
{
    return w->rc;
}

static void put(mcdc_thrift_writer *w, const void *p, size_t n)
{
    if (w->rc == 0)
        w->rc = mcdc_buf_put(w->out, p, n);
}

static void put_byte(mcdc_thrift_writer *w, uint8_t b)
{
    put(w, &b, 1);
}

void mcdc_thrift__write_varint(mcdc_thrift_writer *w, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    put(w, tmp, n);
}

static uint64_t zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

void mcdc_thrift__write_i32(mcdc_thrift_writer *w, int32_t v)
{
    mcdc_thrift__write_varint(w, zigzag64(v));
}

void mcdc_thrift__write_i64(mcdc_thrift_writer *w, int64_t v)
{
    mcdc_thrift__write_varint(w, zigzag64(v));
}

void mcdc_thrift__write_binary(mcdc_thrift_writer *w, const void *p, size_t len)
{
    mcdc_thrift__write_varint(w, len);
    if (len)
        put(w, p, len);
}

void mcdc_thrift__write_bool(mcdc_thrift_writer *w, bool v)
{
    put_byte(w, v ? MCDC_THRIFT_BOOL_TRUE : MCDC_THRIFT_BOOL_FALSE);
}

void mcdc_thrift__struct_begin(mcdc_thrift_writer *w)
{
    if (w->depth >= MCDC_THRIFT_MAX_DEPTH) {
        if (w->rc == 0)
            w->rc = mcdc_error_set(MCDC_EINVAL, "thrift: structs nested deeper than %d",
                                   MCDC_THRIFT_MAX_DEPTH);
        return;
    }
    w->last_id[w->depth++] = 0;
}

void mcdc_thrift__struct_end(mcdc_thrift_writer *w)
{
    put_byte(w, MCDC_THRIFT_STOP);
    if (w->depth > 0)
        w->depth--;
}

void mcdc_thrift__field(mcdc_thrift_writer *w, int16_t id, int type)
{
    int16_t *last = w->depth > 0 ? &w->last_id[w->depth - 1] : NULL;
    int delta = last ? id - *last : 0;
    if (delta > 0 && delta <= 15) {
        put_byte(w, (uint8_t)((delta << 4) | type));
    } else {
        put_byte(w, (uint8_t)type);
        mcdc_thrift__write_i32(w, id);
    }
    if (last)
        *last = id;
}

void mcdc_thrift__list_begin(mcdc_thrift_writer *w, int elem_type, size_t n)
{
    if (n < 15) {
        put_byte(w, (uint8_t)((n << 4) | (size_t)elem_type));
    } else {
        put_byte(w, (uint8_t)(0xF0 | elem_type));
        mcdc_thrift__write_varint(w, n);
    }
}

void mcdc_thrift__field_bool(mcdc_thrift_writer *w, int16_t id, bool v)
{
    mcdc_thrift__field(w, id, v ? MCDC_THRIFT_BOOL_TRUE : MCDC_THRIFT_BOOL_FALSE);
}

void mcdc_thrift__field_i8(mcdc_thrift_writer *w, int16_t id, int8_t v)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_I8);
    put_byte(w, (uint8_t)v);
}

void mcdc_thrift__field_i16(mcdc_thrift_writer *w, int16_t id, int16_t v)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_I16);
    mcdc_thrift__write_i32(w, v);
}

void mcdc_thrift__field_i32(mcdc_thrift_writer *w, int16_t id, int32_t v)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_I32);
    mcdc_thrift__write_i32(w, v);
}

void mcdc_thrift__field_i64(mcdc_thrift_writer *w, int16_t id, int64_t v)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_I64);
    mcdc_thrift__write_i64(w, v);
}

void mcdc_thrift__field_double(mcdc_thrift_writer *w, int16_t id, double v)
{
    uint64_t bits;
    uint8_t b[8];
    memcpy(&bits, &v, 8);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(bits >> (8 * i));
    mcdc_thrift__field(w, id, MCDC_THRIFT_DOUBLE);
    put(w, b, 8);
}

void mcdc_thrift__field_binary(mcdc_thrift_writer *w, int16_t id, const void *p, size_t len)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_BINARY);
    mcdc_thrift__write_binary(w, p, len);
}

void mcdc_thrift__field_string(mcdc_thrift_writer *w, int16_t id, const char *s)
{
    mcdc_thrift__field_binary(w, id, s, strlen(s));
}

void mcdc_thrift__field_empty_struct(mcdc_thrift_writer *w, int16_t id)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_STRUCT);
    put_byte(w, MCDC_THRIFT_STOP);
}

/* ---------------------------------------------------------------- reader */

void mcdc_thrift__reader_init(mcdc_thrift_reader *r, const void *p, size_t len,
                              uint64_t base_off, const char *what)
{
    memset(r, 0, sizeof *r);
    r->start = r->pos = p;
    r->end = r->start + len;
    r->base_off = base_off;
    r->what = what ? what : "thrift";
}

uint64_t mcdc_thrift__reader_offset(const mcdc_thrift_reader *r)
{
    return r->base_off + (uint64_t)(r->pos - r->start);
}

int mcdc_thrift__corrupt(const mcdc_thrift_reader *r, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return mcdc_error_set(MCDC_ECORRUPT, "%s at byte %" PRIu64 ": %s", r->what,
                          mcdc_thrift__reader_offset(r), why);
}

static int need(mcdc_thrift_reader *r, size_t n, const char *what)
{
    if ((size_t)(r->end - r->pos) < n)
        return mcdc_thrift__corrupt(r, "%s of %zu bytes runs past the end (%zu left)", what, n,
                                    (size_t)(r->end - r->pos));
    return 0;
}

int mcdc_thrift__read_varint(mcdc_thrift_reader *r, uint64_t *v)
{
    uint64_t x = 0;
    *v = 0; /* defined on every path, failures included */
    for (int shift = 0, i = 0; i < 10; i++, shift += 7) {
        if (r->pos >= r->end)
            return mcdc_thrift__corrupt(r, "varint runs past the end");
        uint8_t b = *r->pos++;
        if (i == 9 && b > 1)
            return mcdc_thrift__corrupt(r, "varint overflows 64 bits");
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return mcdc_thrift__corrupt(r, "varint longer than 10 bytes");
}

static int read_zigzag(mcdc_thrift_reader *r, int64_t *v, int64_t lo, int64_t hi, const char *what)
{
    const uint8_t *at = r->pos;
    uint64_t u;
    *v = 0;
    int rc = mcdc_thrift__read_varint(r, &u);
    if (rc < 0)
        return rc;
    int64_t x = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    if (x < lo || x > hi) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "%s value %" PRId64 " out of range", what, x);
    }
    *v = x;
    return 0;
}

int mcdc_thrift__read_i8(mcdc_thrift_reader *r, int8_t *v)
{
    *v = 0;
    int rc = need(r, 1, "i8");
    if (rc < 0)
        return rc;
    *v = (int8_t)*r->pos++;
    return 0;
}

int mcdc_thrift__read_i16(mcdc_thrift_reader *r, int16_t *v)
{
    int64_t x = 0;
    int rc = read_zigzag(r, &x, INT16_MIN, INT16_MAX, "i16");
    *v = (int16_t)x; /* 0 on failure */
    return rc;
}

int mcdc_thrift__read_i32(mcdc_thrift_reader *r, int32_t *v)
{
    int64_t x = 0;
    int rc = read_zigzag(r, &x, INT32_MIN, INT32_MAX, "i32");
    *v = (int32_t)x; /* 0 on failure */
    return rc;
}

int mcdc_thrift__read_i64(mcdc_thrift_reader *r, int64_t *v)
{
    return read_zigzag(r, v, INT64_MIN, INT64_MAX, "i64");
}

int mcdc_thrift__read_double(mcdc_thrift_reader *r, double *v)
{
    *v = 0;
    int rc = need(r, 8, "double");
    if (rc < 0)
        return rc;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++)
        bits |= (uint64_t)r->pos[i] << (8 * i);
    r->pos += 8;
    memcpy(v, &bits, 8);
    return 0;
}

int mcdc_thrift__read_binary(mcdc_thrift_reader *r, const uint8_t **p, size_t *len)
{
    const uint8_t *at = r->pos;
    uint64_t n;
    *p = NULL;
    *len = 0;
    int rc = mcdc_thrift__read_varint(r, &n);
    if (rc < 0)
        return rc;
    if (n > (uint64_t)(r->end - r->pos)) {
        size_t left = (size_t)(r->end - r->pos);
        r->pos = at;
        return mcdc_thrift__corrupt(r, "binary of %" PRIu64 " bytes runs past the end (%zu left)",
                                    n, left);
    }
    *p = r->pos;
    *len = (size_t)n;
    r->pos += n;
    return 0;
}

int mcdc_thrift__read_bool(mcdc_thrift_reader *r, int type, bool in_list, bool *v)
{
    if (type != MCDC_THRIFT_BOOL_TRUE && type != MCDC_THRIFT_BOOL_FALSE)
        return mcdc_thrift__corrupt(r, "expected a bool, found wire type %d", type);
    if (!in_list) {
        *v = r->bool_value;
        return 0;
    }
    int rc = need(r, 1, "bool");
    if (rc < 0)
        return rc;
    *v = *r->pos++ == MCDC_THRIFT_BOOL_TRUE;
    return 0;
}


int mcdc_thrift__read_struct_begin(mcdc_thrift_reader *r)
{
    if (r->depth >= MCDC_THRIFT_MAX_DEPTH)
        return mcdc_thrift__corrupt(r, "nesting deeper than %d", MCDC_THRIFT_MAX_DEPTH);
    r->last_id[r->depth++] = 0;
    return 0;
}

void mcdc_thrift__read_struct_end(mcdc_thrift_reader *r)
{
    if (r->depth > 0)
        r->depth--;
}

int mcdc_thrift__read_field(mcdc_thrift_reader *r, int16_t *id, int *type)
{
    int rc = need(r, 1, "field header");
    if (rc < 0)
        return rc;
    uint8_t b = *r->pos;
    int t = b & 0x0F;
    if (t == MCDC_THRIFT_STOP) {
        if (b != 0)
            return mcdc_thrift__corrupt(r, "bad field header 0x%02X", b);
        r->pos++;
        *type = MCDC_THRIFT_STOP;
        *id = 0;
        return 0;
    }
    if (t > MCDC_THRIFT_UUID)
        return mcdc_thrift__corrupt(r, "unknown wire type %d", t);
    r->pos++;
    int16_t *last = r->depth > 0 ? &r->last_id[r->depth - 1] : NULL;
    int delta = b >> 4;
    int16_t fid;
    if (delta) {
        int32_t x = (last ? *last : 0) + delta;
        if (x > INT16_MAX)
            return mcdc_thrift__corrupt(r, "field id past %d", INT16_MAX);
        fid = (int16_t)x;
    } else if ((rc = mcdc_thrift__read_i16(r, &fid)) < 0) {
        return rc;
    }
    if (last)
        *last = fid;
    r->bool_value = t == MCDC_THRIFT_BOOL_TRUE;
    *id = fid;
    *type = t;
    return 0;
}

int mcdc_thrift__read_list_begin(mcdc_thrift_reader *r, int *elem_type, uint32_t *n)
{
    int rc = need(r, 1, "list header");
    if (rc < 0)
        return rc;
    const uint8_t *at = r->pos;
    uint8_t b = *r->pos++;
    uint64_t count = b >> 4;
    int t = b & 0x0F;
    if (count == 15 && (rc = mcdc_thrift__read_varint(r, &count)) < 0)
        return rc;
    if (t == MCDC_THRIFT_STOP || t > MCDC_THRIFT_UUID) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "list of unknown element type %d", t);
    }
    if (count > (uint64_t)(r->end - r->pos) || count > UINT32_MAX) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "list of %" PRIu64 " elements cannot fit in %zu bytes",
                                    count, (size_t)(r->end - at));
    }
    if (r->depth >= MCDC_THRIFT_MAX_DEPTH) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "nesting deeper than %d", MCDC_THRIFT_MAX_DEPTH);
    }
    r->last_id[r->depth++] = 0;
    *elem_type = t;
    *n = (uint32_t)count;
    return 0;
}

void mcdc_thrift__read_list_end(mcdc_thrift_reader *r)
{
    if (r->depth > 0)
        r->depth--;
}

int mcdc_thrift__skip(mcdc_thrift_reader *r, int type, bool in_list)
{
    int rc = 0;
    uint64_t u;
    switch (type) {
    case MCDC_THRIFT_BOOL_TRUE:
    case MCDC_THRIFT_BOOL_FALSE:
        if (!in_list)
            return 0; /* a bool field carries its value in the header */
        if ((rc = need(r, 1, "bool")) < 0)
            return rc;
        r->pos++;
        return 0;
    case MCDC_THRIFT_I8:
        if ((rc = need(r, 1, "i8")) < 0)
            return rc;
        r->pos++;
        return 0;
    case MCDC_THRIFT_I16:
    case MCDC_THRIFT_I32:
    case MCDC_THRIFT_I64:
        return mcdc_thrift__read_varint(r, &u);
    case MCDC_THRIFT_DOUBLE:
        if ((rc = need(r, 8, "double")) < 0)
            return rc;
        r->pos += 8;
        return 0;
    case MCDC_THRIFT_UUID:
        if ((rc = need(r, 16, "uuid")) < 0)
            return rc;
        r->pos += 16;
        return 0;
    case MCDC_THRIFT_BINARY: {
        const uint8_t *p;
        size_t len;
        return mcdc_thrift__read_binary(r, &p, &len);
    }
    case MCDC_THRIFT_LIST:
    case MCDC_THRIFT_SET: {
        int et;
        uint32_t n;
        if ((rc = mcdc_thrift__read_list_begin(r, &et, &n)) < 0)
            return rc;
        for (uint32_t i = 0; i < n && rc == 0; i++)
            rc = mcdc_thrift__skip(r, et, true);
        mcdc_thrift__read_list_end(r);
        return rc;
    }
    case MCDC_THRIFT_MAP: {
        const uint8_t *at = r->pos;
        if ((rc = mcdc_thrift__read_varint(r, &u)) < 0)
            return rc;
        if (u == 0)
            return 0;
        if ((rc = need(r, 1, "map types")) < 0)
            return rc;
        int kt = *r->pos >> 4, vt = *r->pos & 0x0F;
        r->pos++;
        if (kt == 0 || kt > MCDC_THRIFT_UUID || vt == 0 || vt > MCDC_THRIFT_UUID ||
            u > (uint64_t)(r->end - r->pos)) {
            r->pos = at;
            return mcdc_thrift__corrupt(r, "malformed map header");
        }
        if (r->depth >= MCDC_THRIFT_MAX_DEPTH)
            return mcdc_thrift__corrupt(r, "nesting deeper than %d", MCDC_THRIFT_MAX_DEPTH);
        r->depth++;
        for (uint64_t i = 0; i < u && rc == 0; i++) {
            rc = mcdc_thrift__skip(r, kt, true);
            if (rc == 0)
                rc = mcdc_thrift__skip(r, vt, true);
        }
        r->depth--;
        return rc;
    }
    case MCDC_THRIFT_STRUCT: {
        if ((rc = mcdc_thrift__read_struct_begin(r)) < 0)
            return rc;
        for (;;) {
            int16_t id;
            int t;
            if ((rc = mcdc_thrift__read_field(r, &id, &t)) < 0)
                break;
            if (t == MCDC_THRIFT_STOP)
                break;
            if ((rc = mcdc_thrift__skip(r, t, false)) < 0)
                break;
        }
        mcdc_thrift__read_struct_end(r);
        return rc;
    }
    default:
        return mcdc_thrift__corrupt(r, "cannot skip wire type %d", type);
    }
}
