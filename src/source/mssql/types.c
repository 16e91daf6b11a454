/*
 * source/mssql/types.c: SQL Server types -> mssql-cdc's value model, and how each is fetched.
 *
 * The map is the original design's (anchor-features §8):
 *   bit                                   BOOLEAN   SQL_C_BIT
 *   tinyint, smallint / int / bigint      SHORT / INT / LONG   SQL_C_SBIGINT
 *   real / float                          FLOAT / DOUBLE       SQL_C_FLOAT / SQL_C_DOUBLE
 *   decimal(p,s), numeric(p,s)            DECIMAL(p,s)   as text, parsed exactly
 *   money / smallmoney                    DECIMAL(19,4) / DECIMAL(10,4), as text
 *   date                                  DATE           SQL_C_TYPE_DATE
 *   datetime, datetime2, smalldatetime    TIMESTAMP_NTZ  SQL_C_TYPE_TIMESTAMP (to the
 *                                         microsecond: datetime2's 100 ns digit is cut)
 *   datetimeoffset                        TIMESTAMP (UTC)  SQL_SS_TIMESTAMPOFFSET_STRUCT
 *   time                                  STRING "HH:MM:SS.fffffff" (scale digits)
 *                                         SQL_SS_TIME2_STRUCT
 *   char, varchar, text                    STRING (UTF-8)  in a code page 1252 collation
 *                                         SQL_C_BINARY, CP1252 decoded here (ADR 0052);
 *                                         in another, SQL_C_CHAR (the driver's iconv)
 *   uniqueidentifier                       STRING          SQL_C_CHAR
 *   nchar, nvarchar, sysname, ntext, xml   STRING (UTF-8)  SQL_C_WCHAR, UTF-16 decoded here
 *                                         (ADR 0052: the driver's iconv cost a fifth of a read;
 *                                         an unpaired surrogate becomes U+FFFD)
 *   binary, varbinary, image, timestamp/rowversion   BINARY
 * The two SQL_SS structs come through SQL_C_BINARY: unixODBC and FreeTDS do not take the
 * driver-specific C types, but FreeTDS fills in their layout (checked by _Static_assert
 * below). (max) types, text, ntext, image and xml are "long": fetched after the bound
 * columns with SQLGetData in chunks. Anything else (sql_variant, geography, geometry,
 * hierarchyid, CLR types) is refused naming the column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/text.h"
#include "mcdc/time.h"
#include "source/mssql/mssql_int.h"

/* The layouts Microsoft's driver defines (sqlncli.h / msodbcsql.h), which FreeTDS fills. */
typedef struct ss_time2 {
    SQLUSMALLINT hour, minute, second;
    SQLUINTEGER  fraction; /* nanoseconds */
} ss_time2;
typedef struct ss_timestampoffset {
    SQLSMALLINT  year;
    SQLUSMALLINT month, day, hour, minute, second;
    SQLUINTEGER  fraction; /* nanoseconds */
    SQLSMALLINT  timezone_hour, timezone_minute;
} ss_timestampoffset;
_Static_assert(sizeof(ss_time2) == 12, "SQL_SS_TIME2_STRUCT is 12 bytes");
_Static_assert(sizeof(ss_timestampoffset) == 20, "SQL_SS_TIMESTAMPOFFSET_STRUCT is 20 bytes");

static bool is(const mssql_col *c, const char *t)
{
    return !strcasecmp(c->data_type, t);
}

int mssql__type_plan(mssql_col *c, const char *ci, mcdc_column *out)
{
    memset(out, 0, sizeof *out);
    out->name = c->name;
    out->nullable = c->nullable;
    c->is_long = false;
    c->width = 0;
    c->text_cap = 0;
    c->is_time = false;
    if (is(c, "bit")) {
        out->type = MCDC_TYPE_BOOLEAN;
        c->c_type = SQL_C_BIT;
        c->width = 1;
    } else if (is(c, "tinyint") || is(c, "smallint") || is(c, "int") || is(c, "bigint")) {
        out->type = is(c, "int") ? MCDC_TYPE_INT : is(c, "bigint") ? MCDC_TYPE_LONG : MCDC_TYPE_SHORT;
        c->c_type = SQL_C_SBIGINT;
        c->width = sizeof(SQLBIGINT);
    } else if (is(c, "real")) {
        out->type = MCDC_TYPE_FLOAT;
        c->c_type = SQL_C_FLOAT;
        c->width = sizeof(SQLREAL);
    } else if (is(c, "float")) {
        out->type = MCDC_TYPE_DOUBLE;
        c->c_type = SQL_C_DOUBLE;
        c->width = sizeof(SQLDOUBLE);
    } else if (is(c, "decimal") || is(c, "numeric") || is(c, "money") || is(c, "smallmoney")) {
        out->type = MCDC_TYPE_DECIMAL;
        out->precision = is(c, "money") ? 19 : is(c, "smallmoney") ? 10 : c->precision;
        out->scale = is(c, "money") || is(c, "smallmoney") ? 4 : c->scale;
        if (out->precision < 1 || out->precision > 38 || out->scale < 0 || out->scale > out->precision)
            return mcdc_error_set(MCDC_ESOURCE, "capture instance %s: column %s is %s(%d,%d), not a valid decimal", ci,
                                  c->name, c->data_type, c->precision, c->scale);
        c->c_type = SQL_C_CHAR;
        c->width = 48;
    } else if (is(c, "date")) {
        out->type = MCDC_TYPE_DATE;
        c->c_type = SQL_C_TYPE_DATE;
        c->width = sizeof(SQL_DATE_STRUCT);
    } else if (is(c, "datetime") || is(c, "datetime2") || is(c, "smalldatetime")) {
        out->type = MCDC_TYPE_TIMESTAMP_NTZ;
        c->c_type = SQL_C_TYPE_TIMESTAMP;
        c->width = sizeof(SQL_TIMESTAMP_STRUCT);
    } else if (is(c, "datetimeoffset")) {
        out->type = MCDC_TYPE_TIMESTAMP;
        c->c_type = SQL_C_BINARY;
        c->width = sizeof(ss_timestampoffset);
    } else if (is(c, "time")) {
        out->type = MCDC_TYPE_STRING;
        c->c_type = SQL_C_BINARY;
        c->width = sizeof(ss_time2);
        c->text_cap = 48;
        c->is_time = true;
    } else if ((is(c, "char") || is(c, "varchar")) && c->cp1252) {
        out->type = MCDC_TYPE_STRING;
        c->c_type = SQL_C_BINARY; /* the column's bytes: one a character */
        if (c->max_length < 0 || c->max_length > 8000) {
            c->is_long = true;
        } else {
            c->width = c->max_length > 0 ? c->max_length : 1;
            c->text_cap = (size_t)c->width * 3;
        }
    } else if (is(c, "char") || is(c, "varchar")) {
        out->type = MCDC_TYPE_STRING;
        c->c_type = SQL_C_CHAR;
        if (c->max_length < 0 || c->max_length > 8000) c->is_long = true;
        else c->width = (SQLLEN)c->max_length * 4 + 1; /* UTF-8 of n characters of any code page */
    } else if (is(c, "nchar") || is(c, "nvarchar") || is(c, "sysname")) {
        out->type = MCDC_TYPE_STRING;
        c->c_type = SQL_C_WCHAR;
        int n = is(c, "sysname") ? 128 : c->max_length; /* UTF-16 code units */
        if (n < 0 || n > 4000) {
            c->is_long = true;
        } else {
            c->width = ((SQLLEN)n + 1) * (SQLLEN)sizeof(SQLWCHAR);
            c->text_cap = MCDC_TEXT_UTF8_OF_UTF16((size_t)n) + 1;
        }
    } else if (is(c, "text")) {
        out->type = MCDC_TYPE_STRING;
        c->c_type = c->cp1252 ? SQL_C_BINARY : SQL_C_CHAR;
        c->is_long = true;
    } else if (is(c, "ntext") || is(c, "xml")) {
        out->type = MCDC_TYPE_STRING;
        c->c_type = SQL_C_WCHAR;
        c->is_long = true;
    } else if (is(c, "uniqueidentifier")) {
        out->type = MCDC_TYPE_STRING;
        c->c_type = SQL_C_CHAR;
        c->width = 37;
    } else if (is(c, "binary") || is(c, "varbinary")) {
        out->type = MCDC_TYPE_BINARY;
        c->c_type = SQL_C_BINARY;
        if (c->max_length < 0 || c->max_length > 8000) c->is_long = true;
        else c->width = c->max_length > 0 ? c->max_length : 1;
    } else if (is(c, "image")) {
        out->type = MCDC_TYPE_BINARY;
        c->c_type = SQL_C_BINARY;
        c->is_long = true;
    } else if (is(c, "timestamp") || is(c, "rowversion")) {
        out->type = MCDC_TYPE_BINARY;
        c->c_type = SQL_C_BINARY;
        c->width = 8;
    } else {
        return mcdc_error_set(MCDC_EUNSUPPORTED, "capture instance %s: column %s has type %s, which mssql-cdc cannot map",
                              ci, c->name, c->data_type),
               mcdc_error_hint("sql_variant, geography, geometry, hierarchyid and CLR types have no mapping; stream without "
                               "that column (--columns 'NAME, ...' listing the others) or capture the table without it "
                               "(sys.sp_cdc_enable_table @captured_column_list = ...)");
    }
    return 0;
}

static bool has_prefix(const char *s, const char *p)
{
    return !strncasecmp(s, p, strlen(p));
}

bool mssql__collation_cp1252(const char *name)
{
    if (!name)
        return false;
    for (const char *p = name; *p; p++) /* Latin1_General_100_CI_AS_SC_UTF8 is UTF-8 */
        if (has_prefix(p, "_UTF8"))
            return false;
    return has_prefix(name, "Latin1_General_") || has_prefix(name, "SQL_Latin1_General_CP1_") ||
           has_prefix(name, "SQL_Latin1_General_Pref_CP1_");
}

int mssql__quote(mcdc_buf *out, const char *ident, const char *what)
{
    size_t n = strlen(ident);
    if (n == 0 || n > 128)
        return mcdc_error_set(MCDC_EINVAL, "%s '%s': a name of 1 to 128 characters is needed", what, ident);
    for (const unsigned char *p = (const unsigned char *)ident; *p; p++)
        if (*p == ']' || *p < 0x20 || *p == 0x7f)
            return mcdc_error_set(MCDC_EINVAL, "%s '%s': names with ']' or control characters are not supported", what,
                                  ident);
    int rc = mcdc_buf_putc(out, '[');
    if (rc == 0) rc = mcdc_buf_puts(out, ident);
    if (rc == 0) rc = mcdc_buf_putc(out, ']');
    return rc;
}

void mssql__type_text(char *out, size_t cap, const mssql_col *c)
{
    if (is(c, "decimal") || is(c, "numeric"))
        snprintf(out, cap, "%s(%d,%d)", c->data_type, c->precision, c->scale);
    else if (is(c, "char") || is(c, "varchar") || is(c, "nchar") || is(c, "nvarchar") || is(c, "binary") ||
             is(c, "varbinary")) {
        if (c->max_length < 0) snprintf(out, cap, "%s(max)", c->data_type);
        else snprintf(out, cap, "%s(%d)", c->data_type, c->max_length > 0 ? c->max_length : 1);
    } else if ((is(c, "datetime2") || is(c, "time") || is(c, "datetimeoffset")) && c->dt_precision >= 0)
        snprintf(out, cap, "%s(%d)", c->data_type, c->dt_precision);
    else
        snprintf(out, cap, "%s", c->data_type);
}

int mssql__col_expr(mcdc_buf *out, const mssql_col *c, const char *prefix, bool for_snapshot)
{
    int rc = 0;
    if (for_snapshot && !c->in_table) {
        char t[96];
        mssql__type_text(t, sizeof t, c);
        rc = mcdc_buf_printf(out, "CAST(NULL AS %s) AS ", t);
    } else if (prefix) {
        rc = mcdc_buf_puts(out, prefix);
    }
    if (rc == 0) rc = mssql__quote(out, c->name, "column");
    return rc;
}

/* Decimal text as FreeTDS writes it ("12.30", "-.5", "1234.5678") parsed at the column's scale. */
static int parse_decimal(const mssql_col *c, const mcdc_column *col, const char *txt, size_t n, mcdc_value *out)
{
    char fixed[64];
    size_t k = 0;
    if (n >= sizeof fixed - 2)
        return mcdc_error_set(MCDC_ESOURCE, "column %s: decimal text of %zu bytes", c->name, n);
    for (size_t i = 0; i < n; i++) {
        if (txt[i] == '.' && (i == 0 || txt[i - 1] == '-')) fixed[k++] = '0';
        fixed[k++] = txt[i];
    }
    /* text with more fraction digits than the scale has only zeros there (money as 12.3400) */
    const char *dot = memchr(fixed, '.', k);
    if (dot) {
        size_t frac = k - (size_t)(dot - fixed) - 1;
        while (frac > (size_t)col->scale && fixed[k - 1] == '0') {
            k--;
            frac--;
        }
        if (frac == 0) k--;
    }
    int rc = mcdc_decimal_parse(&out->v.dec, fixed, k, col->precision, col->scale);
    if (rc < 0)
        return mcdc_error_set(MCDC_ESOURCE, "column %s: '%.*s' is not a decimal(%d,%d)", c->name, (int)n, txt,
                              col->precision, col->scale);
    return 0;
}

int mssql__to_value(const mssql_col *c, const mcdc_column *col, const char *data, SQLLEN len, mcdc_value *out,
                    char *scratch, size_t scratch_cap)
{
    memset(out, 0, sizeof *out);
    if (len == SQL_NULL_DATA) {
        out->is_null = true;
        return 0;
    }
    if (!c->is_long && (len == SQL_NO_TOTAL || len < 0 || (c->width > 0 && len > c->width)))
        return mcdc_error_set(MCDC_ESOURCE, "column %s: a value of %ld bytes is longer than its declared type", c->name,
                              (long)len);
    if (c->c_type == SQL_C_CHAR && !c->is_long && len >= c->width)
        return mcdc_error_set(MCDC_ESOURCE, "column %s: a value was cut to %ld bytes", c->name, (long)c->width - 1);
    if (c->c_type == SQL_C_WCHAR && !c->is_long) {
        /* UTF-16 in the bound buffer (the terminator's unit not counted) into UTF-8 text */
        SQLLEN units_cap = c->width / (SQLLEN)sizeof(SQLWCHAR) - 1;
        if (len % (SQLLEN)sizeof(SQLWCHAR) != 0 || len / (SQLLEN)sizeof(SQLWCHAR) > units_cap)
            return mcdc_error_set(MCDC_ESOURCE, "column %s: a value of %ld bytes is not UTF-16 of at most %ld units",
                                  c->name, (long)len, (long)units_cap);
        size_t units = (size_t)len / sizeof(SQLWCHAR);
        if (MCDC_TEXT_UTF8_OF_UTF16(units) > scratch_cap)
            return mcdc_error_set(MCDC_ERROR, "column %s: no room for the text of %zu UTF-16 units", c->name, units);
        if ((uintptr_t)data % _Alignof(SQLWCHAR) != 0) /* bound rows sit at even offsets of calloc'd arrays */
            return mcdc_error_set(MCDC_ERROR, "column %s: a UTF-16 buffer out of alignment", c->name);
        _Static_assert(sizeof(SQLWCHAR) == sizeof(uint16_t), "SQLWCHAR is a UTF-16 code unit");
        out->v.s.ptr = scratch;
        out->v.s.len = mcdc_text_utf16_to_utf8((uint8_t *)scratch, (const uint16_t *)(const void *)data, units);
        return 0;
    }
    if (c->cp1252 && c->c_type == SQL_C_BINARY && !c->is_long) {
        if ((size_t)len * 3 > scratch_cap)
            return mcdc_error_set(MCDC_ERROR, "column %s: no room for the text of %ld bytes", c->name, (long)len);
        out->v.s.ptr = scratch;
        out->v.s.len = mcdc_text_cp1252_to_utf8((uint8_t *)scratch, (const uint8_t *)data, (size_t)len);
        return 0;
    }
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN:
        out->v.b = data[0] != 0;
        return 0;
    case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG: {
        SQLBIGINT v;
        memcpy(&v, data, sizeof v);
        out->v.i = (int64_t)v;
        return 0;
    }
    case MCDC_TYPE_FLOAT:
        memcpy(&out->v.f, data, sizeof out->v.f);
        return 0;
    case MCDC_TYPE_DOUBLE:
        memcpy(&out->v.d, data, sizeof out->v.d);
        return 0;
    case MCDC_TYPE_DECIMAL:
        return parse_decimal(c, col, data, (size_t)len, out);
    case MCDC_TYPE_DATE: {
        SQL_DATE_STRUCT d;
        memcpy(&d, data, sizeof d);
        out->v.i = mcdc_days_from_civil(d.year, d.month, d.day);
        return 0;
    }
    case MCDC_TYPE_TIMESTAMP_NTZ: {
        SQL_TIMESTAMP_STRUCT t;
        memcpy(&t, data, sizeof t);
        out->v.i = mssql__ts_to_us(&t);
        return 0;
    }
    case MCDC_TYPE_TIMESTAMP: {
        ss_timestampoffset o;
        if (len != (SQLLEN)sizeof o)
            return mcdc_error_set(MCDC_ESOURCE, "column %s: a datetimeoffset of %ld bytes, not %zu", c->name, (long)len,
                                  sizeof o);
        memcpy(&o, data, sizeof o);
        SQL_TIMESTAMP_STRUCT t = { o.year, o.month, o.day, o.hour, o.minute, o.second, o.fraction };
        out->v.i = mssql__ts_to_us(&t) - ((int64_t)o.timezone_hour * 60 + o.timezone_minute) * INT64_C(60000000);
        return 0;
    }
    case MCDC_TYPE_STRING:
        if (c->is_time) {
            ss_time2 t;
            if (len != (SQLLEN)sizeof t)
                return mcdc_error_set(MCDC_ESOURCE, "column %s: a time of %ld bytes, not %zu", c->name, (long)len, sizeof t);
            memcpy(&t, data, sizeof t);
            int digits = c->dt_precision >= 0 && c->dt_precision <= 7 ? c->dt_precision : 7;
            int n = snprintf(scratch, scratch_cap, "%02u:%02u:%02u", t.hour, t.minute, t.second);
            if (digits > 0) {
                char fr[16];
                snprintf(fr, sizeof fr, "%09u", (unsigned)t.fraction);
                n += snprintf(scratch + n, scratch_cap - (size_t)n, ".%.*s", digits, fr);
            }
            out->v.s.ptr = scratch;
            out->v.s.len = (size_t)n;
            return 0;
        }
        out->v.s.ptr = data;
        out->v.s.len = (size_t)len;
        return 0;
    default:
        out->v.s.ptr = data;
        out->v.s.len = (size_t)len;
        return 0;
    }
}
