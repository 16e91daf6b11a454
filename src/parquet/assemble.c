/*
 * parquet/assemble.c: physical values into cells, and level/value entries into rows.
 *
 * Cells: each leaf's physical value becomes an mcdc_value of the type its schema node
 * was given (reader.c decides the mapping; the conversions are here: INT96, unsigned
 * integers, FLOAT16, byte-array decimals, times, nanosecond timestamps, UUIDs).
 *
 * Rows: record assembly from repetition and definition levels (Dremel). A field's value
 * is read by looking at the current entry of the first leaf under it: a definition level
 * below the field's own means null (optional) or empty (repeated), and then every leaf
 * under it holds exactly one entry for that absence; a repetition level equal to a
 * repeated field's own continues its list. Leaves that disagree are corrupt. LIST and MAP
 * groups follow the backward-compatibility rules of LogicalTypes.md (reader.c classifies
 * them). Recursion depth is bounded by the schema depth (R2).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/error.h"
#include "mcdc/time.h"
#include "parquet/reader_int.h"

/* ---- cells ---------------------------------------------------------------------------- */

static float half_to_float(uint16_t h)
{
    int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float v;
    if (exp == 0)
        v = ldexpf((float)mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexpf((float)(mant | 0x400), exp - 25);
    return sign ? -v : v;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static void format_time_of_day(char *out, size_t cap, int64_t v, int64_t per_sec, int digits)
{
    const char *sign = "";
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        sign = "-";
        u = 0 - u;
    }
    uint64_t secs = u / (uint64_t)per_sec, frac = u % (uint64_t)per_sec;
    snprintf(out, cap, "%s%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ".%0*" PRIu64, sign, secs / 3600,
             secs / 60 % 60, secs % 60, digits, frac);
}

int pqr_leaf_value(const pqr_node *leaf, const mcdc_pqdec_val *pv, mcdc_value *out, char *tmp,
                   size_t tmp_cap)
{
    out->is_null = false;
    switch (leaf->conv) {
    case PQR_CONV_PLAIN:
        switch (leaf->col.type) {
        case MCDC_TYPE_BOOLEAN: out->v.b = pv->b; break;
        case MCDC_TYPE_BYTE:
        case MCDC_TYPE_SHORT:
        case MCDC_TYPE_INT: out->v.i = pv->i32; break;
        case MCDC_TYPE_LONG: out->v.i = pv->i64; break;
        case MCDC_TYPE_FLOAT: out->v.f = pv->f; break;
        case MCDC_TYPE_DOUBLE: out->v.d = pv->d; break;
        default:
            out->v.s.ptr = (const char *)pv->ba.ptr;
            out->v.s.len = pv->ba.len;
            break;
        }
        return 0;
    case PQR_CONV_UINT32: out->v.i = (int64_t)(uint32_t)pv->i32; return 0;
    case PQR_CONV_UINT64: out->v.dec = (mcdc_int128)(uint64_t)pv->i64; return 0;
    case PQR_CONV_DATE: out->v.i = pv->i32; return 0;
    case PQR_CONV_TS_MILLIS:
        if (__builtin_mul_overflow(pv->i64, (int64_t)1000, &out->v.i))
            return mcdc_error_set(MCDC_ECORRUPT, "timestamp of %" PRId64 " ms is out of range",
                                  pv->i64);
        return 0;
    case PQR_CONV_TS_MICROS: out->v.i = pv->i64; return 0;
    case PQR_CONV_TS_NANOS: {
        int64_t secs = floor_div(pv->i64, 1000000000);
        int64_t frac = pv->i64 - secs * 1000000000;
        char base[MCDC_TIME_STRLEN];
        mcdc_time_format(base, secs * 1000000, 0, false);
        snprintf(tmp, tmp_cap, "%s.%09" PRId64 "%s", base, frac, leaf->ts_utc ? "Z" : "");
        out->v.s.ptr = tmp;
        out->v.s.len = strlen(tmp);
        return 0;
    }
    case PQR_CONV_INT96: {
        /* (nanoseconds of day i64, Julian day i32), both signed, combined as Spark does:
         * (day - 2440588) * 86400e6 + nanos / 1000 in wrapping 64-bit arithmetic, which
         * reads back what Spark wrote for instants beyond the nanosecond range */
        const uint8_t *p = pv->ba.ptr;
        uint64_t nanos = 0;
        for (int i = 7; i >= 0; i--)
            nanos = nanos << 8 | p[i];
        int32_t jd = (int32_t)((uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 |
                               (uint32_t)p[11] << 24);
        int64_t us = (int64_t)nanos / 1000; /* truncates toward zero, as Java's division */
        uint64_t days = (uint64_t)((int64_t)jd - 2440588);
        out->v.i = (int64_t)(days * 86400000000ULL + (uint64_t)us);
        return 0;
    }
    case PQR_CONV_TIME_MILLIS:
        format_time_of_day(tmp, tmp_cap, pv->i32, 1000, 3);
        goto text;
    case PQR_CONV_TIME_MICROS:
        format_time_of_day(tmp, tmp_cap, pv->i64, 1000000, 6);
        goto text;
    case PQR_CONV_TIME_NANOS:
        format_time_of_day(tmp, tmp_cap, pv->i64, 1000000000, 9);
        goto text;
    case PQR_CONV_DEC_INT:
        out->v.dec = leaf->ptype == MCDC_PQ_INT32 ? (mcdc_int128)pv->i32 : (mcdc_int128)pv->i64;
        return 0;
    case PQR_CONV_DEC_BYTES: {
        const uint8_t *p = pv->ba.ptr;
        size_t len = pv->ba.len;
        if (len == 0) {
            out->v.dec = 0;
            return 0;
        }
        /* drop leading sign-extension bytes beyond 16 */
        while (len > 16 && (p[0] == 0x00 || p[0] == 0xFF) && ((p[0] ^ p[1]) & 0x80) == 0) {
            p++;
            len--;
        }
        if (len > 16)
            return mcdc_error_set(MCDC_ECORRUPT, "decimal of %zu bytes does not fit 128 bits",
                                  (size_t)pv->ba.len);
        unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
        for (size_t i = 0; i < len; i++)
            u = u << 8 | p[i];
        out->v.dec = (mcdc_int128)u;
        return 0;
    }
    case PQR_CONV_FLOAT16: {
        uint16_t h = (uint16_t)(pv->ba.ptr[0] | pv->ba.ptr[1] << 8);
        out->v.f = half_to_float(h);
        return 0;
    }
    case PQR_CONV_UUID: {
        static const char hex[] = "0123456789abcdef";
        size_t k = 0;
        for (int i = 0; i < 16 && k + 3 < tmp_cap; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10)
                tmp[k++] = '-';
            tmp[k++] = hex[pv->ba.ptr[i] >> 4];
            tmp[k++] = hex[pv->ba.ptr[i] & 15];
        }
        tmp[k] = 0;
        goto text;
    }
    }
    return mcdc_error_set(MCDC_ERROR, "column %s: unknown conversion %d", leaf->name, (int)leaf->conv);
text:
    out->v.s.ptr = tmp;
    out->v.s.len = strlen(tmp);
    return 0;
}

json_t *pqr_value_json(const mcdc_column *col, const mcdc_value *v)
{
    if (v->is_null)
        return json_null();
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN: return json_boolean(v->v.b);
    case MCDC_TYPE_BYTE:
    case MCDC_TYPE_SHORT:
    case MCDC_TYPE_INT:
    case MCDC_TYPE_LONG: return json_integer((json_int_t)v->v.i);
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE: {
        double d = col->type == MCDC_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        if (isnan(d))
            return json_string("NaN");
        if (isinf(d))
            return json_string(d > 0 ? "Infinity" : "-Infinity");
        if (col->type == MCDC_TYPE_FLOAT) {
            /* the double nearest the float's shortest decimal text, so it prints short */
            char t[32];
            for (int prec = 1; prec <= 9; prec++) {
                snprintf(t, sizeof t, "%.*g", prec, d);
                if (strtof(t, NULL) == v->v.f)
                    break;
            }
            d = strtod(t, NULL);
        }
        return json_real(d);
    }
    case MCDC_TYPE_STRING: return json_stringn_nocheck(v->v.s.ptr, v->v.s.len);
    default: {
        mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        json_t *j = NULL;
        if (mcdc_value_to_text(&b, col, v) == 0)
            j = json_stringn_nocheck(b.ptr ? b.ptr : "", b.len);
        mcdc_buf_dispose(&b);
        return j;
    }
    }
}

/* ---- JSON text ------------------------------------------------------------------------ */

int pqr_json_dump(mcdc_buf *out, const json_t *j)
{
    int rc = 0;
    switch (json_typeof(j)) {
    case JSON_NULL: return mcdc_buf_puts(out, "null");
    case JSON_TRUE: return mcdc_buf_puts(out, "true");
    case JSON_FALSE: return mcdc_buf_puts(out, "false");
    case JSON_INTEGER: return mcdc_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
    case JSON_REAL: {
        double d = json_real_value(j);
        char t[40];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(t, sizeof t, "%.*g", prec, d);
            if (strtod(t, NULL) == d)
                break;
        }
        return mcdc_buf_puts(out, t);
    }
    case JSON_STRING: return mcdc_json_quote(out, json_string_value(j), json_string_length(j));
    case JSON_ARRAY: {
        rc = mcdc_buf_putc(out, '[');
        for (size_t i = 0; rc == 0 && i < json_array_size(j); i++) {
            if (i)
                rc = mcdc_buf_putc(out, ',');
            if (rc == 0)
                rc = pqr_json_dump(out, json_array_get(j, i));
        }
        return rc ? rc : mcdc_buf_putc(out, ']');
    }
    case JSON_OBJECT: {
        const char *k;
        json_t *v;
        bool first = true;
        rc = mcdc_buf_putc(out, '{');
        json_object_foreach((json_t *)j, k, v) {
            if (rc == 0 && !first)
                rc = mcdc_buf_putc(out, ',');
            first = false;
            if (rc == 0)
                rc = mcdc_json_quote(out, k, strlen(k));
            if (rc == 0)
                rc = mcdc_buf_putc(out, ':');
            if (rc == 0)
                rc = pqr_json_dump(out, v);
        }
        return rc ? rc : mcdc_buf_putc(out, '}');
    }
    }
    return MCDC_ERROR;
}

/* ---- record assembly ------------------------------------------------------------------ */

static int col_err(mcdc_parquet_reader *r, const pqr_node *node, const char *why)
{
    return mcdc_error_set(MCDC_ECORRUPT, "%s: row group %" PRId64 ", field %s: %s", r->name, r->rg,
                          node->name, why);
}

static int peek_first(mcdc_parquet_reader *r, const pqr_node *node, int *rep, int *def,
                      const mcdc_pqdec_val **val)
{
    int rc = pqr_col_peek(&r->cols[node->first_leaf], rep, def, val);
    if (rc == 0)
        return col_err(r, node, "the column chunk ends inside a row");
    return rc < 0 ? rc : 0;
}

/* An absent node (null or empty): one entry in every leaf under it, all alike. */
static int consume_absent(mcdc_parquet_reader *r, const pqr_node *node, int rep, int def)
{
    for (int l = node->first_leaf; l < node->first_leaf + node->n_leaves; l++) {
        int lr, ld;
        const mcdc_pqdec_val *v;
        int rc = pqr_col_peek(&r->cols[l], &lr, &ld, &v);
        if (rc == 0)
            return col_err(r, node, "a column chunk ends inside a row");
        if (rc < 0)
            return rc;
        if (lr != rep || ld != def)
            return col_err(r, node, "the levels of its columns disagree");
        pqr_col_next(&r->cols[l]);
    }
    return 0;
}

static int read_value(mcdc_parquet_reader *r, const pqr_node *node, bool present, json_t **out);

static int read_repeated(mcdc_parquet_reader *r, const pqr_node *rn, int mode, json_t **out)
{
    int rep, def;
    const mcdc_pqdec_val *v;
    int rc = peek_first(r, rn, &rep, &def, &v);
    if (rc < 0)
        return rc;
    json_t *arr = json_array();
    if (!arr)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (def < rn->def_level) {
        rc = consume_absent(r, rn, rep, def);
        if (rc < 0) {
            json_decref(arr);
            return rc;
        }
        *out = arr;
        return 0;
    }
    for (;;) {
        json_t *e = NULL;
        if (mode == 0) { /* the repeated node is the element */
            rc = read_value(r, rn, true, &e);
        } else if (mode == 1) { /* three-level list: its only child is the element */
            rc = read_value(r, rn->children[0], false, &e);
        } else { /* map: key and value */
            json_t *k = NULL, *val = NULL;
            rc = read_value(r, rn->children[0], false, &k);
            if (rc == 0 && rn->n_children > 1)
                rc = read_value(r, rn->children[1], false, &val);
            else if (rc == 0)
                val = json_null();
            if (rc == 0) {
                e = json_object();
                if (!e || json_object_set_new(e, "key", k) < 0 ||
                    json_object_set_new(e, "value", val) < 0)
                    rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                k = val = NULL;
            }
            json_decref(k);
            json_decref(val);
        }
        if (rc < 0 || json_array_append_new(arr, e) < 0) {
            json_decref(arr);
            return rc < 0 ? rc : mcdc_error_set(MCDC_ENOMEM, "out of memory");
        }
        rc = pqr_col_peek(&r->cols[rn->first_leaf], &rep, &def, &v);
        if (rc < 0) {
            json_decref(arr);
            return rc;
        }
        if (rc == 0 || rep < rn->rep_level)
            break;
        if (rep > rn->rep_level) {
            json_decref(arr);
            return col_err(r, rn, "repetition level deeper than the field after its element");
        }
        if (def < rn->def_level) {
            json_decref(arr);
            return col_err(r, rn, "an absent element inside a list");
        }
    }
    *out = arr;
    return 0;
}

static int read_field(mcdc_parquet_reader *r, const pqr_node *node, json_t **out)
{
    if (node->repetition == MCDC_PQ_REPEATED)
        return read_repeated(r, node, 0, out);
    return read_value(r, node, false, out);
}

/* One instance of @p node; @p present: the node is a repeated one whose presence the
 * caller established (skip the null check). */
static int read_value(mcdc_parquet_reader *r, const pqr_node *node, bool present, json_t **out)
{
    int rep, def, rc;
    const mcdc_pqdec_val *v;
    *out = NULL;
    rc = peek_first(r, node, &rep, &def, &v);
    if (rc < 0)
        return rc;
    if (!present && def < node->def_level) {
        if (node->repetition != MCDC_PQ_OPTIONAL)
            return col_err(r, node, "definition level too low for a required field");
        rc = consume_absent(r, node, rep, def);
        if (rc == 0)
            *out = json_null();
        return rc;
    }
    switch (node->kind) {
    case PQR_LEAF: {
        if (!v)
            return col_err(r, node, "a value is missing where its levels say present");
        mcdc_value cell;
        char tmp[96];
        rc = pqr_leaf_value(node, v, &cell, tmp, sizeof tmp);
        if (rc < 0)
            return mcdc_error_prefix("%s: field %s", r->name, node->name);
        *out = pqr_value_json(&node->col, &cell);
        pqr_col_next(&r->cols[node->leaf_index]);
        return *out ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    case PQR_LIST:
        return read_repeated(r, node->children[0], node->elem_is_repeated ? 0 : 1, out);
    case PQR_MAP:
        return read_repeated(r, node->children[0], 2, out);
    case PQR_GROUP: {
        json_t *obj = json_object();
        if (!obj)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (size_t i = 0; i < node->n_children; i++) {
            json_t *cv = NULL;
            rc = read_field(r, node->children[i], &cv);
            if (rc < 0 || json_object_set_new_nocheck(obj, node->children[i]->name, cv) < 0) {
                json_decref(obj);
                return rc < 0 ? rc : mcdc_error_set(MCDC_ENOMEM, "out of memory");
            }
        }
        *out = obj;
        return 0;
    }
    }
    return MCDC_ERROR;
}

int pqr_assemble_field(mcdc_parquet_reader *r, const pqr_node *node, json_t **out)
{
    return read_field(r, node, out);
}
