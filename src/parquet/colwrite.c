/*
 * parquet/colwrite.c: one leaf column of the writer: values to pages to a column chunk.
 *
 * Invariants:
 * (W1) The open page holds n_levels entries; its present values are either all in idx
 *      (dictionary indices, while dict_on) or all in values (PLAIN), never split.
 * (W2) Every entry of the dictionary was counted in chunk_stats when it was added, so
 *      dictionary hits need no statistics work; PLAIN values update stats one by one.
 * (W3) Statistics are true bounds over the present values of the chunk: integers and
 *      decimals by signed value, strings and binary by unsigned bytes, floats with NaN
 *      left out (a NaN-only column has no min/max) and zeros widened to -0.0 / +0.0.
 * (W4) Without repetition, def[] holds the definition levels of the first def_known
 *      entries only; the entries after them are all present (max_def), and are filled
 *      in when a null arrives or the page is flushed.
 * (W5) values holds MCDC_PQ_VALUES_GAP unused bytes before the page's PLAIN values, so
 *      a page's levels can be put in front of them and compressed without copying the
 *      values (levels longer than the gap are copied with the values as before).
 * Page body (v1): [rep levels, u32 length + hybrid][def levels, u32 length + hybrid]
 * [values: PLAIN, or one byte bit width + hybrid dictionary indices]. Format tables:
 * format.h and levels.h.
 */
#include "parquet/colwrite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "parquet/codec.h"
#include "parquet/levels.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Parquet writer stores numbers with memcpy and needs a little-endian host"
#endif

/* ---------------------------------------------------------------- types */

/* How a present value becomes PLAIN bytes and statistics (mcdc_pq_column.kind). */
enum {
    K_BOOL, K_I32, K_I32_DEC, K_I64, K_I64_DEC, K_FLOAT, K_DOUBLE, K_FLBA, K_BYTES
};

/* Fewest bytes holding a two's-complement decimal of precision p. */
static int decimal_bytes(int p)
{
    mcdc_int128 max = 1;
    for (int i = 0; i < p; i++)
        max *= 10;
    max -= 1;
    for (int n = 1; n < 16; n++)
        if (max < (mcdc_int128)1 << (8 * n - 1))
            return n;
    return 16;
}

static mcdc_int128 pow10_128(int p)
{
    mcdc_int128 x = 1;
    for (int i = 0; i < p; i++)
        x *= 10;
    return x;
}

int mcdc_pq__column_init(mcdc_pq_column *c, const mcdc_column *type, const char *const *path,
                         size_t n_path, int max_def, int max_rep, const mcdc_pq_write_config *cfg)
{
    memset(c, 0, sizeof *c);
    c->type = *type;
    c->type.name = NULL;
    c->max_def = max_def;
    c->max_rep = max_rep;
    c->level_bits = mcdc_rle__bit_width((uint64_t)max_def) + mcdc_rle__bit_width((uint64_t)max_rep);
    c->cfg = cfg;
    switch (type->type) {
    case MCDC_TYPE_BOOLEAN:
        c->physical = MCDC_PQ_BOOLEAN; c->value_width = 1; c->kind = K_BOOL; break;
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_DATE:
        c->physical = MCDC_PQ_INT32; c->value_width = 4; c->kind = K_I32;
        c->check = MCDC_PQ_CHECK_RANGE;
        c->check_lo = type->type == MCDC_TYPE_BYTE ? INT8_MIN
                      : type->type == MCDC_TYPE_SHORT ? INT16_MIN : INT32_MIN;
        c->check_hi = type->type == MCDC_TYPE_BYTE ? INT8_MAX
                      : type->type == MCDC_TYPE_SHORT ? INT16_MAX : INT32_MAX;
        break;
    case MCDC_TYPE_LONG: case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ:
        c->physical = MCDC_PQ_INT64; c->value_width = 8; c->kind = K_I64; break;
    case MCDC_TYPE_FLOAT: c->physical = MCDC_PQ_FLOAT; c->value_width = 4; c->kind = K_FLOAT; break;
    case MCDC_TYPE_DOUBLE: c->physical = MCDC_PQ_DOUBLE; c->value_width = 8; c->kind = K_DOUBLE; break;
    case MCDC_TYPE_STRING: case MCDC_TYPE_BINARY:
        c->physical = MCDC_PQ_BYTE_ARRAY; c->kind = K_BYTES; c->check = MCDC_PQ_CHECK_BYTES; break;
    case MCDC_TYPE_DECIMAL:
        if (type->precision < 1 || type->precision > 38 || type->scale < 0 ||
            type->scale > type->precision)
            return mcdc_error_set(MCDC_EINVAL, "decimal(%d,%d) is not a valid decimal type",
                                  type->precision, type->scale);
        if (type->precision <= 9) {
            c->physical = MCDC_PQ_INT32; c->value_width = 4; c->kind = K_I32_DEC;
        } else if (type->precision <= 18) {
            c->physical = MCDC_PQ_INT64; c->value_width = 8; c->kind = K_I64_DEC;
        } else {
            c->physical = MCDC_PQ_FIXED_LEN_BYTE_ARRAY; c->kind = K_FLBA;
            c->type_length = c->value_width = decimal_bytes(type->precision);
        }
        c->check = MCDC_PQ_CHECK_DECIMAL;
        c->check_dec = pow10_128(type->precision);
        break;
    default:
        return mcdc_error_set(MCDC_EINVAL, "column type %d is not a known type", (int)type->type);
    }
    /* Fixed widths: the page estimate of n entries is at most n * level_bits / 8 for the
     * levels plus n * max(value_width, 4) + 1 for the values (PLAIN, or indices of at
     * most 32 bits), so below the n where that reaches page_bytes the page is not full. */
    if (c->physical != MCDC_PQ_BYTE_ARRAY) {
        size_t per = (size_t)c->level_bits + 8 * (size_t)(c->value_width > 4 ? c->value_width : 4);
        size_t by_bytes = (8 * cfg->page_bytes - 8) / per;
        by_bytes = by_bytes > 0 ? by_bytes - 1 : 0;
        c->page_sure_below = by_bytes < cfg->page_max_values ? by_bytes : cfg->page_max_values;
    }
    c->path = calloc(n_path ? n_path : 1, sizeof *c->path);
    if (!c->path)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    c->n_path = n_path;
    for (size_t i = 0; i < n_path; i++)
        if (!(c->path[i] = strdup(path[i])))
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    size_t page_cap = cfg->page_bytes * 4 + 65536;
    c->values = (mcdc_buf)MCDC_BUF_INIT(page_cap + ((size_t)1 << 31));
    c->pages = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 40);
    c->body = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 40);
    c->comp = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 40);
    c->chunk_stats.bmin = c->chunk_stats.bmax = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 31);
    c->file_stats.bmin = c->file_stats.bmax = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 31);
    if (mcdc_buf_grow(&c->values, MCDC_PQ_VALUES_GAP) < 0)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    c->values.len = MCDC_PQ_VALUES_GAP;
    c->values.ptr[c->values.len] = 0;
    c->dict_on = cfg->dictionary && c->physical != MCDC_PQ_BOOLEAN;
    mcdc_pq__dict_init(&c->dict, (size_t)c->value_width * (c->physical != MCDC_PQ_BYTE_ARRAY),
                       cfg->dictionary_max_bytes);
    return 0;
}

void mcdc_pq__column_dispose(mcdc_pq_column *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->path && i < c->n_path; i++)
        free(c->path[i]);
    free(c->path);
    free(c->def);
    free(c->rep);
    free(c->idx);
    mcdc_buf_dispose(&c->values);
    mcdc_pq__dict_dispose(&c->dict);
    mcdc_buf_dispose(&c->pages);
    mcdc_buf_dispose(&c->body);
    mcdc_buf_dispose(&c->comp);
    mcdc_buf_dispose(&c->chunk_stats.bmin);
    mcdc_buf_dispose(&c->chunk_stats.bmax);
    mcdc_buf_dispose(&c->file_stats.bmin);
    mcdc_buf_dispose(&c->file_stats.bmax);
    memset(c, 0, sizeof *c);
}

void mcdc_pq__column_schema_element(const mcdc_pq_column *c, const char *name, bool nullable,
                                    mcdc_pq_schema_element *e)
{
    memset(e, 0, sizeof *e);
    e->name = (char *)name;
    e->has_type = true;
    e->type = c->physical;
    e->has_repetition = true;
    e->repetition = nullable ? MCDC_PQ_OPTIONAL : MCDC_PQ_REQUIRED;
    mcdc_pq_logical_type *lt = &e->logical;
    switch (c->type.type) {
    case MCDC_TYPE_BYTE:
    case MCDC_TYPE_SHORT:
        e->has_converted = true;
        e->converted_type = c->type.type == MCDC_TYPE_BYTE ? MCDC_PQ_CT_INT_8 : MCDC_PQ_CT_INT_16;
        lt->kind = MCDC_PQ_LT_INTEGER;
        lt->int_bit_width = c->type.type == MCDC_TYPE_BYTE ? 8 : 16;
        lt->int_signed = true;
        break;
    case MCDC_TYPE_DATE:
        e->has_converted = true;
        e->converted_type = MCDC_PQ_CT_DATE;
        lt->kind = MCDC_PQ_LT_DATE;
        break;
    case MCDC_TYPE_STRING:
        e->has_converted = true;
        e->converted_type = MCDC_PQ_CT_UTF8;
        lt->kind = MCDC_PQ_LT_STRING;
        break;
    case MCDC_TYPE_TIMESTAMP:
        e->has_converted = true;
        e->converted_type = MCDC_PQ_CT_TIMESTAMP_MICROS;
        /* fall through */
    case MCDC_TYPE_TIMESTAMP_NTZ:
        lt->kind = MCDC_PQ_LT_TIMESTAMP;
        lt->is_adjusted_utc = c->type.type == MCDC_TYPE_TIMESTAMP;
        lt->unit = MCDC_PQ_UNIT_MICROS;
        break;
    case MCDC_TYPE_DECIMAL:
        e->has_converted = true;
        e->converted_type = MCDC_PQ_CT_DECIMAL;
        e->has_scale = e->has_precision = true;
        e->scale = c->type.scale;
        e->precision = c->type.precision;
        lt->kind = MCDC_PQ_LT_DECIMAL;
        lt->dec_scale = c->type.scale;
        lt->dec_precision = c->type.precision;
        if (c->type_length) {
            e->has_type_length = true;
            e->type_length = c->type_length;
        }
        break;
    default:
        break;
    }
}

int mcdc_pq__value_check(const mcdc_column *type, const mcdc_value *v, const char *what)
{
    int64_t lo = 0, hi = 0;
    switch (type->type) {
    case MCDC_TYPE_BYTE: lo = INT8_MIN; hi = INT8_MAX; break;
    case MCDC_TYPE_SHORT: lo = INT16_MIN; hi = INT16_MAX; break;
    case MCDC_TYPE_INT: case MCDC_TYPE_DATE: lo = INT32_MIN; hi = INT32_MAX; break;
    case MCDC_TYPE_DECIMAL: {
        mcdc_int128 lim = pow10_128(type->precision);
        if (v->v.dec >= lim || v->v.dec <= -lim) {
            char buf[48];
            return mcdc_error_set(MCDC_EINVAL, "%s: %s has more than %d digits for decimal(%d,%d)",
                                  what, mcdc_decimal_format(buf, v->v.dec, type->scale),
                                  type->precision, type->precision, type->scale);
        }
        return 0;
    }
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        if (v->v.s.len > (size_t)INT32_MAX - 1024)
            return mcdc_error_set(MCDC_EINVAL, "%s: a value of %zu bytes is over 2 GiB", what,
                                  v->v.s.len);
        return 0;
    default:
        return 0;
    }
    if (v->v.i < lo || v->v.i > hi)
        return mcdc_error_set(MCDC_EINVAL, "%s: %lld is out of range for %s", what,
                              (long long)v->v.i,
                              type->type == MCDC_TYPE_BYTE ? "byte" : type->type == MCDC_TYPE_SHORT
                              ? "short" : type->type == MCDC_TYPE_DATE ? "date" : "integer");
    return 0;
}

/* PLAIN bytes of a value (byte arrays: without the length prefix). */
static inline const uint8_t *plain_bytes(const mcdc_pq_column *c, const mcdc_value *v,
                                         uint8_t tmp[16], size_t *len)
{
    switch (c->kind) {
    case K_BOOL:
        tmp[0] = v->v.b ? 1 : 0;
        *len = 1;
        return tmp;
    case K_I32: {
        int32_t x = (int32_t)v->v.i;
        memcpy(tmp, &x, 4);
        *len = 4;
        return tmp;
    }
    case K_I32_DEC: {
        int32_t x = (int32_t)v->v.dec;
        memcpy(tmp, &x, 4);
        *len = 4;
        return tmp;
    }
    case K_I64:
        memcpy(tmp, &v->v.i, 8);
        *len = 8;
        return tmp;
    case K_I64_DEC: {
        int64_t x = (int64_t)v->v.dec;
        memcpy(tmp, &x, 8);
        *len = 8;
        return tmp;
    }
    case K_FLOAT:
        memcpy(tmp, &v->v.f, 4);
        *len = 4;
        return tmp;
    case K_DOUBLE:
        memcpy(tmp, &v->v.d, 8);
        *len = 8;
        return tmp;
    case K_FLBA: {
        unsigned __int128 u = (unsigned __int128)v->v.dec;
        for (int i = c->type_length - 1; i >= 0; i--, u >>= 8)
            tmp[i] = (uint8_t)u;
        *len = (size_t)c->type_length;
        return tmp;
    }
    default:
        *len = v->v.s.len;
        return (const uint8_t *)v->v.s.ptr;
    }
}

/* ---------------------------------------------------------------- statistics */

static inline uint64_t load_be64(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return __builtin_bswap64(x);
}

/* Unsigned byte order, shorter first on a common prefix; words compared big-endian. */
static inline int bytes_cmp(const void *av, size_t alen, const void *bv, size_t blen)
{
    const uint8_t *a = av, *b = bv;
    size_t n = alen < blen ? alen : blen;
    if (n >= 8) {
        /* Words before the last one are equal when it is reached, so the last word may
         * overlap them. */
        for (size_t i = 0;; i += 8) {
            if (i + 8 > n)
                i = n - 8;
            uint64_t x = load_be64(a + i), y = load_be64(b + i);
            if (x != y)
                return x < y ? -1 : 1;
            if (i + 8 == n)
                break;
        }
    } else {
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i])
                return a[i] < b[i] ? -1 : 1;
    }
    return (alen > blen) - (alen < blen);
}

static int set_buf(mcdc_buf *b, const void *p, size_t n)
{
    mcdc_buf_clear(b);
    return mcdc_buf_put(b, p, n);
}

static int stats_add(const mcdc_pq_column *c, mcdc_pq_stats *s, const mcdc_value *v)
{
    switch (c->type.type) {
    case MCDC_TYPE_BOOLEAN: {
        int64_t x = v->v.b ? 1 : 0;
        if (!s->has || x < s->imin) s->imin = x;
        if (!s->has || x > s->imax) s->imax = x;
        break;
    }
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE: {
        double x = c->type.type == MCDC_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        if (isnan(x))
            return 0;
        if (!s->has || x < s->dmin) s->dmin = x;
        if (!s->has || x > s->dmax) s->dmax = x;
        break;
    }
    case MCDC_TYPE_DECIMAL:
        if (!s->has || v->v.dec < s->decmin) s->decmin = v->v.dec;
        if (!s->has || v->v.dec > s->decmax) s->decmax = v->v.dec;
        break;
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: {
        int rc;
        if (!s->has || bytes_cmp(v->v.s.ptr, v->v.s.len, s->bmin.ptr, s->bmin.len) < 0)
            if ((rc = set_buf(&s->bmin, v->v.s.ptr, v->v.s.len)) < 0)
                return rc;
        if (!s->has || bytes_cmp(v->v.s.ptr, v->v.s.len, s->bmax.ptr, s->bmax.len) > 0)
            if ((rc = set_buf(&s->bmax, v->v.s.ptr, v->v.s.len)) < 0)
                return rc;
        break;
    }
    default:
        if (!s->has || v->v.i < s->imin) s->imin = v->v.i;
        if (!s->has || v->v.i > s->imax) s->imax = v->v.i;
        break;
    }
    s->has = true;
    return 0;
}

/* stats_add of a present value to the chunk statistics, integers, decimals and strings
 * without the general dispatch. */
static inline __attribute__((always_inline)) int stats_value(mcdc_pq_column *c,
                                                              const mcdc_value *v)
{
    mcdc_pq_stats *s = &c->chunk_stats;
    switch (c->kind) {
    case K_I32:
    case K_I64: {
        int64_t x = v->v.i;
        if (!s->has) {
            s->imin = s->imax = x;
            s->has = true;
        } else if (x < s->imin) {
            s->imin = x;
        } else if (x > s->imax) {
            s->imax = x;
        }
        return 0;
    }
    case K_I32_DEC:
    case K_I64_DEC:
    case K_FLBA: {
        mcdc_int128 x = v->v.dec;
        if (!s->has) {
            s->decmin = s->decmax = x;
            s->has = true;
        } else if (x < s->decmin) {
            s->decmin = x;
        } else if (x > s->decmax) {
            s->decmax = x;
        }
        return 0;
    }
    case K_BYTES:
        if (s->has) {
            /* min <= max, so a value below min cannot be above max */
            if (bytes_cmp(v->v.s.ptr, v->v.s.len, s->bmin.ptr, s->bmin.len) < 0)
                return set_buf(&s->bmin, v->v.s.ptr, v->v.s.len);
            if (bytes_cmp(v->v.s.ptr, v->v.s.len, s->bmax.ptr, s->bmax.len) > 0)
                return set_buf(&s->bmax, v->v.s.ptr, v->v.s.len);
            return 0;
        }
        /* fall through */
    default:
        return stats_add(c, s, v);
    }
}

/* The min and max of stats @p s as mcdc values (strings borrowed from s). */
static void stats_values(const mcdc_pq_column *c, const mcdc_pq_stats *s, mcdc_value *min,
                         mcdc_value *max)
{
    memset(min, 0, sizeof *min);
    memset(max, 0, sizeof *max);
    switch (c->type.type) {
    case MCDC_TYPE_BOOLEAN: min->v.b = s->imin; max->v.b = s->imax; break;
    case MCDC_TYPE_FLOAT: min->v.f = (float)s->dmin; max->v.f = (float)s->dmax; break;
    case MCDC_TYPE_DOUBLE: min->v.d = s->dmin; max->v.d = s->dmax; break;
    case MCDC_TYPE_DECIMAL: min->v.dec = s->decmin; max->v.dec = s->decmax; break;
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        min->v.s.ptr = s->bmin.ptr ? s->bmin.ptr : "";
        min->v.s.len = s->bmin.len;
        max->v.s.ptr = s->bmax.ptr ? s->bmax.ptr : "";
        max->v.s.len = s->bmax.len;
        break;
    default: min->v.i = s->imin; max->v.i = s->imax; break;
    }
}

static int stats_merge(const mcdc_pq_column *c, mcdc_pq_stats *into, const mcdc_pq_stats *from)
{
    into->null_count += from->null_count;
    if (!from->has)
        return 0;
    mcdc_value lo, hi;
    stats_values(c, from, &lo, &hi);
    int rc = stats_add(c, into, &lo);
    return rc < 0 ? rc : stats_add(c, into, &hi);
}

static void stats_reset(mcdc_pq_stats *s)
{
    mcdc_buf bmin = s->bmin, bmax = s->bmax;
    mcdc_buf_clear(&bmin);
    mcdc_buf_clear(&bmax);
    memset(s, 0, sizeof *s);
    s->bmin = bmin;
    s->bmax = bmax;
}

static mcdc_pq_bytes dup_bytes(const void *p, size_t n)
{
    mcdc_pq_bytes b = { malloc(n ? n : 1), n, true };
    if (b.ptr && n)
        memcpy(b.ptr, p, n);
    return b;
}

/* Thrift Statistics of a chunk. */
static int stats_to_thrift(const mcdc_pq_column *c, const mcdc_pq_stats *s, mcdc_pq_statistics *t)
{
    memset(t, 0, sizeof *t);
    t->has_null_count = true;
    t->null_count = s->null_count;
    if (!s->has)
        return 0;
    mcdc_value lo, hi;
    stats_values(c, s, &lo, &hi);
    if (c->physical == MCDC_PQ_FLOAT || c->physical == MCDC_PQ_DOUBLE) {
        /* Zeros widen to both signs so -0.0 and +0.0 values are inside the bounds. */
        if (c->physical == MCDC_PQ_FLOAT) {
            if (lo.v.f == 0) lo.v.f = -0.0f;
            if (hi.v.f == 0) hi.v.f = +0.0f;
        } else {
            if (lo.v.d == 0) lo.v.d = -0.0;
            if (hi.v.d == 0) hi.v.d = +0.0;
        }
    }
    uint8_t a[16], b[16];
    size_t alen, blen;
    const uint8_t *pa = plain_bytes(c, &lo, a, &alen), *pb = plain_bytes(c, &hi, b, &blen);
    t->min_value = dup_bytes(pa, alen);
    t->max_value = dup_bytes(pb, blen);
    bool signed_order = c->physical != MCDC_PQ_BYTE_ARRAY &&
                        c->physical != MCDC_PQ_FIXED_LEN_BYTE_ARRAY;
    if (signed_order) {
        t->min = dup_bytes(pa, alen);
        t->max = dup_bytes(pb, blen);
    }
    if (!t->min_value.ptr || !t->max_value.ptr || (signed_order && (!t->min.ptr || !t->max.ptr))) {
        mcdc_pq__statistics_dispose(t);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    t->has_is_min_value_exact = t->has_is_max_value_exact = true;
    t->is_min_value_exact = t->is_max_value_exact = true;
    return 0;
}

int mcdc_pq__column_file_stats(const mcdc_pq_column *c, int64_t *null_count, bool *has,
                               mcdc_value *min, mcdc_value *max)
{
    const mcdc_pq_stats *s = &c->file_stats;
    *null_count = s->null_count;
    *has = s->has;
    stats_values(c, s, min, max);
    if (!s->has) {
        memset(min, 0, sizeof *min);
        memset(max, 0, sizeof *max);
        min->is_null = max->is_null = true;
        return 0;
    }
    if (c->physical == MCDC_PQ_BYTE_ARRAY) {
        char *a = malloc(min->v.s.len + 1), *b = malloc(max->v.s.len + 1);
        if (!a || !b) {
            free(a);
            free(b);
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        }
        memcpy(a, min->v.s.ptr, min->v.s.len);
        memcpy(b, max->v.s.ptr, max->v.s.len);
        a[min->v.s.len] = b[max->v.s.len] = 0;
        min->v.s.ptr = a;
        max->v.s.ptr = b;
    }
    return 0;
}

/* ---------------------------------------------------------------- entries */

/* Room for the level entry at n_levels. */
static int grow_levels(mcdc_pq_column *c)
{
    size_t ncap = c->levels_cap ? c->levels_cap * 2 : 1024;
    while (ncap <= c->n_levels)
        ncap *= 2;
    if (c->max_def > 0) {
        uint16_t *p = realloc(c->def, ncap * sizeof *p);
        if (!p)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory for levels");
        c->def = p;
    }
    if (c->max_rep > 0) {
        uint16_t *p = realloc(c->rep, ncap * sizeof *p);
        if (!p)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory for levels");
        c->rep = p;
    }
    c->levels_cap = ncap;
    return 0;
}

/* Distinct values at the start of a chunk after which the dictionary is left (unique
 * keys, timestamps, amounts): the flush's size test would almost always leave it too. */
#define DICT_PROBE 2048

/* Leave the dictionary: the open page's indices become PLAIN values (W1). */
static int dictionary_fallback(mcdc_pq_column *c)
{
    c->dict_on = false;
    for (size_t i = 0; i < c->n_idx; i++) {
        size_t len;
        const uint8_t *p = mcdc_pq__dict_value(&c->dict, c->idx[i], &len);
        int rc;
        if (c->physical == MCDC_PQ_BYTE_ARRAY) {
            uint32_t l = (uint32_t)len;
            if ((rc = mcdc_buf_put(&c->values, &l, 4)) < 0)
                return rc;
        }
        if ((rc = mcdc_buf_put(&c->values, p, len)) < 0)
            return rc;
    }
    c->n_idx = 0;
    return 0;
}

/* Fill in the implied definition levels of the open page up to n_levels (W4). */
static int fill_def(mcdc_pq_column *c)
{
    int rc;
    if (c->n_levels >= c->levels_cap && (rc = grow_levels(c)) < 0)
        return rc;
    for (size_t i = c->def_known; i < c->n_levels; i++)
        c->def[i] = (uint16_t)c->max_def;
    c->def_known = c->n_levels;
    return 0;
}

static int grow_idx(mcdc_pq_column *c)
{
    size_t ncap = c->idx_cap ? c->idx_cap * 2 : 1024;
    uint32_t *ni = realloc(c->idx, ncap * sizeof *ni);
    if (!ni)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory for dictionary indices");
    c->idx = ni;
    c->idx_cap = ncap;
    return 0;
}

/* A present value into the open page: its dictionary index, or its PLAIN bytes. */
static __attribute__((noinline)) int add_value(mcdc_pq_column *c, const mcdc_value *v)
{
    int rc;
    uint8_t tmp[16];
    size_t len;
    const uint8_t *p = plain_bytes(c, v, tmp, &len);
    size_t prefix = c->kind == K_BYTES ? 4 : 0;
    if (c->dict_on) {
        uint32_t index;
        bool is_new = false;
        if (!mcdc_pq__dict_last(&c->dict, p, len, &index) &&
            !mcdc_pq__dict_find_fixed(&c->dict, p, len, &index)) {
            rc = mcdc_pq__dict_put(&c->dict, p, len, &index, &is_new);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                if ((rc = dictionary_fallback(c)) < 0)
                    return rc;
                goto plain;
            }
            if (is_new && (rc = stats_value(c, v)) < 0)
                return rc;
        }
        if (c->n_idx == c->idx_cap && (rc = grow_idx(c)) < 0)
            return rc;
        c->idx[c->n_idx++] = index;
        c->page_raw_bytes += prefix + len;
        c->n_values++;
        c->n_levels++;
        /* The chunk's first page has had only distinct values so far (the dictionary
         * holds exactly its entries): leave the dictionary now rather than at the flush. */
        if (is_new && c->n_idx == DICT_PROBE && c->dict.n == DICT_PROBE && c->n_dict_pages == 0)
            return dictionary_fallback(c);
        return 0;
    }
plain:
    if (c->values.len + prefix + len >= c->values.cap &&
        (rc = mcdc_buf_grow(&c->values, prefix + len)) < 0)
        return rc;
    uint8_t *dst = (uint8_t *)c->values.ptr + c->values.len;
    if (prefix) {
        uint32_t l = (uint32_t)len;
        memcpy(dst, &l, 4);
        if (len)
            memcpy(dst + 4, p, len);
    } else if (len == 8) {
        memcpy(dst, p, 8);
    } else if (len == 4) {
        memcpy(dst, p, 4);
    } else {
        memcpy(dst, p, len);
    }
    c->values.len += prefix + len;
    c->values.ptr[c->values.len] = 0;
    if ((rc = stats_value(c, v)) < 0)
        return rc;
    c->n_values++;
    c->n_levels++;
    return 0;
}

/* An entry with repetition, or a null: levels kept in def[] and rep[] (W4). */
static __attribute__((noinline)) int add_entry_levels(mcdc_pq_column *c, int rep, int def,
                                                     const mcdc_value *v)
{
    int rc;
    if (c->max_rep > 0) {
        if (c->n_levels == c->levels_cap && (rc = grow_levels(c)) < 0)
            return rc;
        /* counted by n_levels only once the entry is complete */
        c->rep[c->n_levels] = (uint16_t)rep;
        if (c->max_def > 0)
            c->def[c->n_levels] = (uint16_t)def;
    } else {
        if ((rc = fill_def(c)) < 0)
            return rc;
        c->def[c->n_levels] = (uint16_t)def;
    }
    if (def >= c->max_def) {
        if ((rc = add_value(c, v)) < 0)
            return rc;
    } else {
        c->chunk_stats.null_count++;
        c->n_levels++;
    }
    c->def_known = c->n_levels;
    return 0;
}

int mcdc_pq__column_add(mcdc_pq_column *c, int rep, int def, const mcdc_value *v)
{
    if (c->max_rep > 0 || def < c->max_def)
        return add_entry_levels(c, rep, def, v);
    /* PLAIN integers and decimals with room in the page (unique keys, timestamps,
     * amounts): what add_value does, without its calls. */
    if (!c->dict_on && c->values.len + 8 < c->values.cap) {
        mcdc_pq_stats *s = &c->chunk_stats;
        uint8_t *dst = (uint8_t *)c->values.ptr + c->values.len;
        switch (c->kind) {
        case K_I32:
        case K_I64: {
            int64_t x = v->v.i;
            if (c->kind == K_I64) {
                memcpy(dst, &x, 8);
            } else {
                int32_t y = (int32_t)x;
                memcpy(dst, &y, 4);
            }
            if (!s->has) {
                s->imin = s->imax = x;
                s->has = true;
            } else if (x < s->imin) {
                s->imin = x;
            } else if (x > s->imax) {
                s->imax = x;
            }
            break;
        }
        case K_I32_DEC:
        case K_I64_DEC: {
            mcdc_int128 x = v->v.dec;
            if (c->kind == K_I64_DEC) {
                int64_t y = (int64_t)x;
                memcpy(dst, &y, 8);
            } else {
                int32_t y = (int32_t)x;
                memcpy(dst, &y, 4);
            }
            if (!s->has) {
                s->decmin = s->decmax = x;
                s->has = true;
            } else if (x < s->decmin) {
                s->decmin = x;
            } else if (x > s->decmax) {
                s->decmax = x;
            }
            break;
        }
        default:
            return add_value(c, v);
        }
        c->values.len += (size_t)c->value_width;
        c->values.ptr[c->values.len] = 0;
        c->n_values++;
        c->n_levels++;
        return 0;
    }
    return add_value(c, v);
}

int mcdc_pq__column_add_flat(mcdc_pq_column *c, const mcdc_value *v, size_t stride, size_t n,
                             bool *full)
{
    for (size_t r = 0; r < n; r++, v += stride) {
        int rc;
        if (r && mcdc_pq__column_page_full(c) && (rc = mcdc_pq__column_flush_page(c)) < 0)
            return rc;
        if ((rc = mcdc_pq__column_add(c, 0, v->is_null ? 0 : c->max_def, v)) < 0)
            return rc;
    }
    if (mcdc_pq__column_page_full(c))
        *full = true;
    return 0;
}

static inline int width_of(uint32_t max)
{
    return max ? 32 - __builtin_clz(max) : 1;
}

/* Header + compressed body appended to @p out; sizes returned for the chunk totals. */
static int emit_page(mcdc_pq_column *c, mcdc_buf *out, mcdc_pq_page_header *h, const void *body,
                     size_t body_len, size_t *hdr_len)
{
    mcdc_buf_clear(&c->comp);
    int rc;
    if (c->cfg->codec == MCDC_PQ_CODEC_ZSTD && c->cfg->zstd_cctx && body_len <= INT32_MAX) {
        /* The same bytes as mcdc_codec__compress, without a context set up per page. */
        size_t bound = ZSTD_compressBound(body_len);
        if ((rc = mcdc_buf_grow(&c->comp, bound)) < 0)
            return rc;
        size_t n = ZSTD_compressCCtx(c->cfg->zstd_cctx, c->comp.ptr, bound, body, body_len,
                                     c->cfg->codec_level ? c->cfg->codec_level : 3);
        if (ZSTD_isError(n))
            return mcdc_error_set(MCDC_ERROR, "ZSTD: %s", ZSTD_getErrorName(n));
        c->comp.len = n;
        c->comp.ptr[n] = 0;
    } else if ((rc = mcdc_codec__compress(&c->comp, c->cfg->codec, c->cfg->codec_level,
                                          body, body_len)) < 0) {
        return rc;
    }
    if (body_len > INT32_MAX || c->comp.len > INT32_MAX)
        return mcdc_error_set(MCDC_EINVAL, "a page of %zu bytes is over 2 GiB", body_len);
    h->uncompressed_page_size = (int32_t)body_len;
    h->compressed_page_size = (int32_t)c->comp.len;
    if (c->cfg->page_crc) {
        h->has_crc = true;
        h->crc = (int32_t)crc32(0, (const Bytef *)c->comp.ptr, (uInt)c->comp.len);
    }
    size_t before = out->len;
    if ((rc = mcdc_pq__write_page_header(out, h)) < 0)
        return rc;
    *hdr_len = out->len - before;
    return mcdc_buf_put(out, c->comp.ptr, c->comp.len);
}

int mcdc_pq__column_flush_page(mcdc_pq_column *c)
{
    if (c->n_levels == 0)
        return 0;
    mcdc_buf *b = &c->body;
    mcdc_buf_clear(b);
    int rc = 0;
    if (c->max_rep > 0 && (rc = mcdc_rle__encode_u16(b, c->rep, c->n_levels,
                                                     mcdc_rle__bit_width((uint64_t)c->max_rep), true)) < 0)
        return rc;
    if (c->max_def > 0) {
        int dw = mcdc_rle__bit_width((uint64_t)c->max_def);
        if (c->def_known == 0) /* no nulls on the page (W4) */
            rc = mcdc_rle__encode_repeat(b, (uint32_t)c->max_def, c->n_levels, dw, true);
        else if ((rc = fill_def(c)) == 0)
            rc = mcdc_rle__encode_u16(b, c->def, c->n_levels, dw, true);
        if (rc < 0)
            return rc;
    }
    /* The first page of a chunk decides whether the dictionary pays: when indices plus
     * dictionary take as much room as PLAIN values would, leave it (as parquet-mr does).
     * A first page that starts with DICT_PROBE distinct values left it already. */
    if (c->dict_on && c->n_idx > 0 && c->n_dict_pages == 0 &&
        c->n_idx * (size_t)width_of(c->dict.n - 1) / 8 + c->dict.plain.len >= c->page_raw_bytes &&
        (rc = dictionary_fallback(c)) < 0)
        return rc;
    bool dict_page = c->dict_on && c->n_idx > 0;
    const uint8_t *page = NULL; /* the page body: b, or levels and values in values */
    size_t page_len = 0;
    if (dict_page) {
        int w = mcdc_rle__bit_width(c->dict.n - 1);
        if (w == 0)
            w = 1;
        uint8_t wb = (uint8_t)w;
        if ((rc = mcdc_buf_put(b, &wb, 1)) < 0 ||
            (rc = mcdc_rle__encode_u32(b, c->idx, c->n_idx, w, false)) < 0)
            return rc;
    } else if (c->physical == MCDC_PQ_BOOLEAN) {
        size_t n = c->values.len - MCDC_PQ_VALUES_GAP, nbytes = (n + 7) / 8;
        const uint8_t *v = (const uint8_t *)c->values.ptr + MCDC_PQ_VALUES_GAP;
        if ((rc = mcdc_buf_grow(b, nbytes)) < 0)
            return rc;
        uint8_t *p = (uint8_t *)b->ptr + b->len;
        memset(p, 0, nbytes);
        for (size_t i = 0; i < n; i++)
            p[i / 8] |= (uint8_t)((v[i] & 1) << (i % 8));
        b->len += nbytes;
    } else if (b->len <= MCDC_PQ_VALUES_GAP) {
        /* the levels go into the gap in front of the values (W5) */
        uint8_t *p = (uint8_t *)c->values.ptr + MCDC_PQ_VALUES_GAP - b->len;
        if (b->len)
            memcpy(p, b->ptr, b->len);
        page = p;
        page_len = c->values.len - MCDC_PQ_VALUES_GAP + b->len;
    } else if ((rc = mcdc_buf_put(b, c->values.ptr + MCDC_PQ_VALUES_GAP,
                                  c->values.len - MCDC_PQ_VALUES_GAP)) < 0) {
        return rc;
    }
    if (!page) {
        page = (const uint8_t *)b->ptr;
        page_len = b->len;
    }
    if (c->n_levels > INT32_MAX)
        return mcdc_error_set(MCDC_EINVAL, "a page of %zu entries is too many", c->n_levels);
    mcdc_pq_page_header h = { .type = MCDC_PQ_PAGE_DATA, .has_data_page_header = true };
    h.data_page_header.num_values = (int32_t)c->n_levels;
    h.data_page_header.encoding = dict_page ? MCDC_PQ_ENC_RLE_DICTIONARY : MCDC_PQ_ENC_PLAIN;
    h.data_page_header.definition_level_encoding = MCDC_PQ_ENC_RLE;
    h.data_page_header.repetition_level_encoding = MCDC_PQ_ENC_RLE;
    size_t hdr_len;
    if ((rc = emit_page(c, &c->pages, &h, page, page_len, &hdr_len)) < 0)
        return rc;
    c->chunk_uncompressed += (int64_t)(hdr_len + page_len);
    c->chunk_levels += (int64_t)c->n_levels;
    if (dict_page)
        c->n_dict_pages++;
    else
        c->n_plain_pages++;
    c->n_levels = c->def_known = c->n_idx = c->n_values = c->page_raw_bytes = 0;
    c->values.len = MCDC_PQ_VALUES_GAP;
    c->values.ptr[c->values.len] = 0;
    return 0;
}

int mcdc_pq__column_write_chunk(mcdc_pq_column *c, uint64_t offset, mcdc_pq_sink_fn sink,
                                void *payload, mcdc_pq_column_chunk *out, uint64_t *written)
{
    int rc = mcdc_pq__column_flush_page(c);
    if (rc < 0)
        return rc;
    memset(out, 0, sizeof *out);
    mcdc_pq_column_meta *m = &out->meta_data;
    uint64_t start = offset;
    int64_t uncompressed = c->chunk_uncompressed, compressed = (int64_t)c->pages.len;
    if (c->n_dict_pages > 0) {
        mcdc_pq_page_header h = { .type = MCDC_PQ_PAGE_DICTIONARY, .has_dictionary_page_header = true };
        h.dictionary_page_header.num_values = (int32_t)c->dict.n;
        h.dictionary_page_header.encoding = MCDC_PQ_ENC_PLAIN;
        mcdc_buf_clear(&c->body);
        size_t hdr_len;
        if ((rc = emit_page(c, &c->body, &h, c->dict.plain.ptr, c->dict.plain.len, &hdr_len)) < 0)
            return rc;
        if ((rc = sink(payload, c->body.ptr, c->body.len)) < 0)
            return rc;
        m->has_dictionary_page_offset = true;
        m->dictionary_page_offset = (int64_t)offset;
        uncompressed += (int64_t)(hdr_len + c->dict.plain.len);
        compressed += (int64_t)c->body.len;
        offset += c->body.len;
    }
    m->data_page_offset = (int64_t)offset;
    if (c->pages.len && (rc = sink(payload, c->pages.ptr, c->pages.len)) < 0)
        return rc;
    offset += c->pages.len;
    *written = offset - start;

    out->file_offset = (int64_t)start;
    out->has_meta_data = true;
    m->type = c->physical;
    m->codec = c->cfg->codec;
    m->num_values = c->chunk_levels;
    m->total_uncompressed_size = uncompressed;
    m->total_compressed_size = compressed;
    m->encodings = calloc(3, sizeof *m->encodings);
    m->path = calloc(c->n_path ? c->n_path : 1, sizeof *m->path);
    m->encoding_stats = calloc(3, sizeof *m->encoding_stats);
    if (!m->encodings || !m->path || !m->encoding_stats)
        goto nomem;
    m->n_path = c->n_path;
    for (size_t i = 0; i < c->n_path; i++)
        if (!(m->path[i] = strdup(c->path[i])))
            goto nomem;
    if (c->n_dict_pages || c->n_plain_pages)
        m->encodings[m->n_encodings++] = MCDC_PQ_ENC_PLAIN;
    m->encodings[m->n_encodings++] = MCDC_PQ_ENC_RLE;
    if (c->n_dict_pages)
        m->encodings[m->n_encodings++] = MCDC_PQ_ENC_RLE_DICTIONARY;
    if (c->n_dict_pages) {
        m->encoding_stats[m->n_encoding_stats++] =
            (mcdc_pq_encoding_stats){ MCDC_PQ_PAGE_DICTIONARY, MCDC_PQ_ENC_PLAIN, 1 };
        m->encoding_stats[m->n_encoding_stats++] =
            (mcdc_pq_encoding_stats){ MCDC_PQ_PAGE_DATA, MCDC_PQ_ENC_RLE_DICTIONARY, c->n_dict_pages };
    }
    if (c->n_plain_pages)
        m->encoding_stats[m->n_encoding_stats++] =
            (mcdc_pq_encoding_stats){ MCDC_PQ_PAGE_DATA, MCDC_PQ_ENC_PLAIN, c->n_plain_pages };
    m->has_statistics = true;
    if ((rc = stats_to_thrift(c, &c->chunk_stats, &m->statistics)) < 0)
        goto fail;
    if ((rc = stats_merge(c, &c->file_stats, &c->chunk_stats)) < 0)
        goto fail;

    /* Reset the chunk; a new row group starts with a fresh dictionary. */
    stats_reset(&c->chunk_stats);
    mcdc_buf_clear(&c->pages);
    c->chunk_levels = c->chunk_uncompressed = 0;
    c->n_dict_pages = c->n_plain_pages = 0;
    mcdc_pq__dict_reset(&c->dict);
    c->dict_on = c->cfg->dictionary && c->physical != MCDC_PQ_BOOLEAN;
    return 0;
nomem:
    rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
fail:
    mcdc_pq__column_meta_dispose(m);
    return rc;
}
