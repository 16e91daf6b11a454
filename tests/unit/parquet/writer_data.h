/* tests/unit/parquet/writer_data.h: deterministic rows of every type for the writer tests
 * and the DuckDB interop test (nulls, extremes, empty, long and non-ASCII strings,
 * repeats for dictionaries), and their expected CSV for DuckDB's read_csv. */
#ifndef TEST_PARQUET_WRITER_DATA_H
#define TEST_PARQUET_WRITER_DATA_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mcdc/buf.h"
#include "mcdc/time.h"
#include "mcdc/value.h"

#define WD_NCOLS 16
static const struct { const char *name; mcdc_type_id type; int p, s; const char *duck; } wd_cols[WD_NCOLS] = {
    { "b", MCDC_TYPE_BOOLEAN, 0, 0, "BOOLEAN" },
    { "i8", MCDC_TYPE_BYTE, 0, 0, "TINYINT" },
    { "i16", MCDC_TYPE_SHORT, 0, 0, "SMALLINT" },
    { "i32", MCDC_TYPE_INT, 0, 0, "INTEGER" },
    { "i64", MCDC_TYPE_LONG, 0, 0, "BIGINT" },
    { "f", MCDC_TYPE_FLOAT, 0, 0, "FLOAT" },
    { "d", MCDC_TYPE_DOUBLE, 0, 0, "DOUBLE" },
    { "dec9", MCDC_TYPE_DECIMAL, 9, 2, "DECIMAL(9,2)" },
    { "dec18", MCDC_TYPE_DECIMAL, 18, 4, "DECIMAL(18,4)" },
    { "dec38", MCDC_TYPE_DECIMAL, 38, 10, "DECIMAL(38,10)" },
    { "dec20", MCDC_TYPE_DECIMAL, 20, 0, "DECIMAL(20,0)" },
    { "s", MCDC_TYPE_STRING, 0, 0, "VARCHAR" },
    { "bin", MCDC_TYPE_BINARY, 0, 0, "BLOB" },
    { "dt", MCDC_TYPE_DATE, 0, 0, "DATE" },
    { "ts", MCDC_TYPE_TIMESTAMP, 0, 0, "TIMESTAMP WITH TIME ZONE" },
    { "ntz", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, "TIMESTAMP" },
};

static mcdc_schema *wd_schema(bool nullable)
{
    mcdc_schema *s = mcdc_schema_new();
    for (int i = 0; i < WD_NCOLS; i++)
        mcdc_schema_add(s, wd_cols[i].name, wd_cols[i].type, wd_cols[i].p, wd_cols[i].s, nullable);
    return s;
}

static uint32_t wd_hash(uint32_t a, uint32_t b)
{
    uint32_t h = a * 2654435761u ^ (b + 0x9E3779B9u) * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return h;
}

static mcdc_int128 wd_pow10(int n)
{
    mcdc_int128 x = 1;
    while (n--)
        x *= 10;
    return x;
}

/* Strings live in a static pool so values can borrow them. */
static char wd_long[5000];
static const char *const wd_words[] = { "alpha", "beta", "gamma", "ñandú €uro", "😀 emoji",
                                        "quote \" comma , end", "line\nbreak", "tab\there",
                                        "zeta", "Ω", "a", "ab", "abc", "\x7f del" };

/* The value of column c in row r; nulls only when @p nullable. */
static void wd_value(mcdc_value *v, int c, uint32_t r, bool nullable)
{
    memset(v, 0, sizeof *v);
    uint32_t h = wd_hash(r, (uint32_t)c);
    if (nullable && h % 7 == 0) {
        v->is_null = true;
        return;
    }
    int ext = r % 50 == 1 ? -1 : r % 50 == 2 ? 1 : 0; /* extremes */
    int p = wd_cols[c].p;
    switch (wd_cols[c].type) {
    case MCDC_TYPE_BOOLEAN: v->v.b = h & 8; break;
    case MCDC_TYPE_BYTE: v->v.i = ext < 0 ? -128 : ext > 0 ? 127 : (int)(h % 256) - 128; break;
    case MCDC_TYPE_SHORT: v->v.i = ext < 0 ? INT16_MIN : ext > 0 ? INT16_MAX : (int)(h % 65536) - 32768; break;
    case MCDC_TYPE_INT: v->v.i = ext < 0 ? INT32_MIN : ext > 0 ? INT32_MAX : (int32_t)h; break;
    case MCDC_TYPE_LONG: v->v.i = ext < 0 ? INT64_MIN : ext > 0 ? INT64_MAX
                                : (int64_t)((uint64_t)h << 31 ^ wd_hash(h, 3)) - (int64_t)(r % 1000); break;
    case MCDC_TYPE_FLOAT:
        v->v.f = r % 41 == 3 ? NAN : r % 43 == 4 ? -INFINITY : ext < 0 ? -3.4028235e38f
               : ext > 0 ? 1.17549435e-38f : r % 47 == 9 ? -0.0f : (float)((int32_t)h) / 1024.0f;
        break;
    case MCDC_TYPE_DOUBLE:
        v->v.d = r % 41 == 3 ? NAN : r % 43 == 4 ? INFINITY : ext < 0 ? -1.7976931348623157e308
               : ext > 0 ? 4.9e-324 : r % 47 == 9 ? 0.0 : (double)h / 7.0 - 1e9;
        break;
    case MCDC_TYPE_DECIMAL: {
        mcdc_int128 lim = wd_pow10(p) - 1;
        if (ext)
            v->v.dec = ext < 0 ? -lim : lim;
        else {
            mcdc_int128 x = ((mcdc_int128)wd_hash(h, 1) << 64 | (mcdc_int128)wd_hash(h, 2) << 32 | h) % (lim + 1);
            v->v.dec = h & 1 ? -x : x;
            if (r % 5 == 0)
                v->v.dec = (mcdc_int128)(r % 17) - 8; /* repeats */
        }
        break;
    }
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: {
        if (!wd_long[0]) {
            for (size_t i = 0; i + 1 < sizeof wd_long; i++)
                wd_long[i] = (char)('a' + i % 26);
        }
        if (r % 13 == 0) {
            v->v.s.ptr = "";
            v->v.s.len = 0;
        } else if (r % 97 == 5) {
            v->v.s.ptr = wd_long;
            v->v.s.len = 3000 + r % 1000;
        } else if (wd_cols[c].type == MCDC_TYPE_BINARY && r % 11 == 3) {
            v->v.s.ptr = "\x00\xff\x80\x01";
            v->v.s.len = 4;
        } else {
            const char *w = wd_words[h % (sizeof wd_words / sizeof *wd_words)];
            v->v.s.ptr = w;
            v->v.s.len = strlen(w);
        }
        break;
    }
    case MCDC_TYPE_DATE:
        v->v.i = ext < 0 ? mcdc_days_from_civil(1, 1, 1) : ext > 0 ? mcdc_days_from_civil(9999, 12, 31)
               : (int64_t)(h % 40000) - 10000;
        break;
    default: /* timestamps */
        v->v.i = ext < 0 ? -62135596800000000LL : ext > 0 ? 253402300799999999LL
               : (int64_t)h * 1000003LL - 2000000000000000LL;
        break;
    }
}

/* One value as a CSV field for DuckDB: NULL empty; strings quoted; binary as quoted hex;
 * timestamps as epoch microseconds; floats with enough digits to round-trip. */
static void wd_csv(mcdc_buf *out, int c, const mcdc_value *v)
{
    if (v->is_null)
        return;
    char tmp[64];
    switch (wd_cols[c].type) {
    case MCDC_TYPE_BOOLEAN: mcdc_buf_puts(out, v->v.b ? "true" : "false"); break;
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE: {
        double d = wd_cols[c].type == MCDC_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        if (isnan(d))
            mcdc_buf_puts(out, "nan");
        else if (isinf(d))
            mcdc_buf_puts(out, d < 0 ? "-inf" : "inf");
        else
            mcdc_buf_printf(out, wd_cols[c].type == MCDC_TYPE_FLOAT ? "%.9g" : "%.17g", d);
        break;
    }
    case MCDC_TYPE_DECIMAL: mcdc_buf_puts(out, mcdc_decimal_format(tmp, v->v.dec, wd_cols[c].s)); break;
    case MCDC_TYPE_STRING:
        mcdc_buf_putc(out, '"');
        for (size_t i = 0; i < v->v.s.len; i++) {
            if (v->v.s.ptr[i] == '"')
                mcdc_buf_putc(out, '"');
            mcdc_buf_putc(out, v->v.s.ptr[i]);
        }
        mcdc_buf_putc(out, '"');
        break;
    case MCDC_TYPE_BINARY:
        mcdc_buf_putc(out, '"');
        for (size_t i = 0; i < v->v.s.len; i++)
            mcdc_buf_printf(out, "%02X", (unsigned char)v->v.s.ptr[i]);
        mcdc_buf_putc(out, '"');
        break;
    case MCDC_TYPE_DATE: {
        int64_t y;
        unsigned m, d;
        mcdc_civil_from_days(v->v.i, &y, &m, &d);
        mcdc_buf_printf(out, "%04lld-%02u-%02u", (long long)y, m, d);
        break;
    }
    default: mcdc_buf_printf(out, "%lld", (long long)v->v.i); break;
    }
}

#endif
