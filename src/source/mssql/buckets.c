/*
 * source/mssql/buckets.c: the SQL Server source's key_buckets (reconcile's tier 1): counts
 * and sums per key bucket over a source table, in one grouped query (statement key_buckets).
 *
 * The T-SQL computes what core/keyhash.c computes in C (include/mcdc/keyhash.h), so the
 * buckets equal the simulator's and silver's for the same rows: a single integer or date key
 * by its ordinal (days since 1970-01-01 for a date), bucketed by floor((ordinal - origin) /
 * width); any other key by its key hash (the key text built column by column in T-SQL, its
 * SHA-256 over the nvarchar's UTF-16LE bytes cut to 7 bytes), bucketed by hash % width.
 * Read-only (SELECT on the source table's key columns), never NOLOCK. The bucket arithmetic
 * uses whole-number literals rendered here (origin, width) and column names bracket-quoted,
 * never other text from the user. Design: docs/decisions/0015-reconcile-buckets-by-key-hash.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/keyhash.h"
#include "source/mssql/mssql_int.h"

#define MAX_HASH_BUCKETS ((int64_t)1 << 24)

typedef struct bucket_ctx {
    const mcdc_key_bucket_spec *spec;
    const char *sql;
    mcdc_key_bucket *b;
    size_t n, cap;
} bucket_ctx;

static int bucket_fn(mssql_source *s, void *payload)
{
    bucket_ctx *c = payload;
    c->n = 0;
    SQLHSTMT st = SQL_NULL_HSTMT;
    int rc = mssql__stmt(s, &st);
    if (rc == 0) rc = mssql__exec(s, st, c->sql, "key_buckets");
    while (rc == 0) {
        SQLRETURN r = SQLFetch(st);
        if (r == SQL_NO_DATA) break;
        if (!SQL_SUCCEEDED(r)) {
            rc = mssql__fail(s, SQL_HANDLE_STMT, st, "reading key buckets");
            break;
        }
        if (c->n == c->cap) {
            size_t nc = c->cap ? c->cap * 2 : 64;
            mcdc_key_bucket *nb = realloc(c->b, nc * sizeof *nb);
            if (!nb) {
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                break;
            }
            c->b = nb;
            c->cap = nc;
        }
        mcdc_key_bucket *k = &c->b[c->n];
        memset(k, 0, sizeof *k);
        bool null = false;
        char sum[64];
        SQLLEN len = 0;
        if ((rc = mssql__get_int64(s, st, 1, &k->bucket, &null)) < 0) break;
        if ((rc = mssql__get_int64(s, st, 2, &k->n_rows, &null)) < 0) break;
        if (!SQL_SUCCEEDED(SQLGetData(st, 3, SQL_C_CHAR, sum, sizeof sum, &len))) {
            rc = mssql__fail(s, SQL_HANDLE_STMT, st, "reading a bucket's sum");
            break;
        }
        if (len < 0 || (size_t)len >= sizeof sum || mcdc_decimal_parse(&k->key_sum, sum, (size_t)len, 38, 0) < 0) {
            rc = mcdc_error_set(MCDC_ESOURCE, "key_buckets: a bucket's sum is not a decimal(38,0)");
            break;
        }
        if (!c->spec->by_hash) {
            if ((rc = mssql__get_int64(s, st, 4, &k->key_min, &null)) < 0) break;
            if ((rc = mssql__get_int64(s, st, 5, &k->key_max, &null)) < 0) break;
        }
        c->n++;
    }
    mssql__stmt_end(st, rc);
    return rc;
}

/* The T-SQL text of one non-NULL key column @p q (bracket-quoted) of type @p col, as
 * mcdc/keyhash.h's table prints it: an nvarchar. */
static int column_text(mcdc_buf *out, const mcdc_column *col, const char *q)
{
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN: return mcdc_buf_printf(out, "CONVERT(nvarchar(1), %s)", q);
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
        return mcdc_buf_printf(out, "CONVERT(nvarchar(20), %s)", q);
    case MCDC_TYPE_DECIMAL: /* through decimal(p,s): money's own text has 2 digits, not 4 */
        return mcdc_buf_printf(out, "CONVERT(nvarchar(41), CAST(%s AS decimal(%d,%d)))", q, col->precision, col->scale);
    case MCDC_TYPE_STRING: return mcdc_buf_printf(out, "CONVERT(nvarchar(max), %s)", q);
    case MCDC_TYPE_BINARY: return mcdc_buf_printf(out, "CONVERT(nvarchar(max), %s, 1)", q);
    case MCDC_TYPE_DATE: return mcdc_buf_printf(out, "CONVERT(nvarchar(10), %s, 23)", q);
    case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ: /* a datetimeoffset counts in UTC */
        return mcdc_buf_printf(out, "CONVERT(nvarchar(20), DATEDIFF_BIG(microsecond, '19700101', %s))", q);
    default:
        return mcdc_error_set(MCDC_EUNSUPPORTED, "key column %s: a floating-point key has no key text", col->name);
    }
}

/* The key hash of a row in T-SQL: per column "-;" for NULL, else "<n>:<text>;" with n the
 * text's UTF-16 code units (DATALENGTH of an nvarchar / 2), then the first 7 bytes of
 * SHA-256 over the whole nvarchar(max) (UTF-16LE), big-endian: a bigint in [0, 2^56). */
static int hash_key(mcdc_buf *key, const mssql_plan *p, const int *idx, size_t n)
{
    int rc = mcdc_buf_puts(key, "CONVERT(bigint, SUBSTRING(HASHBYTES('SHA2_256', ");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        mcdc_buf q = MCDC_BUF_INIT(1024), t = MCDC_BUF_INIT(4096);
        if ((rc = mssql__quote(&q, p->cols[idx[i]].name, "key column")) == 0 && (rc = mcdc_buf_putc(&q, '\0')) == 0)
            rc = column_text(&t, &p->schema->cols[idx[i]], q.ptr);
        if (rc == 0)
            rc = mcdc_buf_printf(key, "%sCASE WHEN %s IS NULL THEN N'-;' ELSE CONVERT(nvarchar(20), DATALENGTH(%s) / 2) + "
                                 "N':' + %s + N';' END", i ? " + " : "", q.ptr, t.ptr, t.ptr);
        mcdc_buf_dispose(&q);
        mcdc_buf_dispose(&t);
    }
    if (rc == 0) rc = mcdc_buf_puts(key, "), 1, 7))");
    return rc;
}

int mssql__key_buckets(mcdc_source *b, const char *ci_name, const mcdc_key_bucket_spec *spec, mcdc_key_bucket **out,
                       size_t *n_out)
{
    mssql_source *s = (mssql_source *)b;
    *out = NULL;
    *n_out = 0;
    if (!spec || spec->n_keys < 1 || (!spec->by_hash && spec->n_keys != 1))
        return mcdc_error_set(MCDC_EINVAL, "key buckets: by ordinal takes one key column, by hash at least one");
    if (spec->by_hash ? (spec->width < 1 || spec->width > MAX_HASH_BUCKETS) : spec->width < 0)
        return mcdc_error_set(MCDC_EINVAL, "key buckets: width %lld out of range", (long long)spec->width);
    mssql_ci *ci;
    mssql_plan *p;
    int rc = mssql__find_ci(s, ci_name, &ci);
    if (rc == 0) rc = mssql__get_plan(s, ci, &p);
    if (rc < 0) return rc;
    int *idx = calloc(spec->n_keys, sizeof *idx);
    if (!idx) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < spec->n_keys; i++) {
        idx[i] = -1;
        for (size_t k = 0; k < p->n_cols; k++)
            if (!strcmp(p->cols[k].name, spec->keys[i])) idx[i] = (int)k;
        if (idx[i] < 0) {
            rc = mcdc_error_set(MCDC_ENOTFOUND, "capture instance %s has no column %s", ci_name, spec->keys[i]);
            break;
        }
        const mcdc_column *col = &p->schema->cols[idx[i]];
        if (spec->by_hash ? !mcdc_keyhash_type_ok(col) : !mcdc_keyhash_has_ordinal(col))
            rc = mcdc_error_set(MCDC_EINVAL, "key column %s of %s has no %s", spec->keys[i], ci_name,
                                spec->by_hash ? "key text (a floating-point key)" : "ordinal (not an integer or date)");
    }
    mcdc_buf key = MCDC_BUF_INIT(1 << 20), bucket = MCDC_BUF_INIT(1024), table = MCDC_BUF_INIT(1024),
             where = MCDC_BUF_INIT(1024), sql = MCDC_BUF_INIT(1 << 20);
    if (rc == 0 && (rc = mssql__quote(&table, ci->schema, "schema")) == 0 && (rc = mcdc_buf_putc(&table, '.')) == 0)
        rc = mssql__quote(&table, ci->table, "table");
    if (rc == 0 && spec->by_hash) {
        rc = hash_key(&key, p, idx, spec->n_keys);
        if (rc == 0) rc = mcdc_buf_printf(&bucket, "k %% %lld", (long long)spec->width);
    } else if (rc == 0) {
        const mcdc_column *col = &p->schema->cols[idx[0]];
        mcdc_buf q = MCDC_BUF_INIT(1024);
        if ((rc = mssql__quote(&q, p->cols[idx[0]].name, "key column")) == 0 && (rc = mcdc_buf_putc(&q, '\0')) == 0) {
            rc = col->type == MCDC_TYPE_DATE ? mcdc_buf_printf(&key, "CAST(DATEDIFF(day, '1970-01-01', %s) AS bigint)", q.ptr)
                                             : mcdc_buf_printf(&key, "CAST(%s AS bigint)", q.ptr);
            if (rc == 0) rc = mcdc_buf_printf(&where, " WHERE %s IS NOT NULL", q.ptr);
        }
        mcdc_buf_dispose(&q);
        /* floor((k - origin) / width): T-SQL's / truncates toward zero */
        long long o = (long long)spec->origin, w = (long long)spec->width;
        if (rc == 0)
            rc = w == 0 ? mcdc_buf_puts(&bucket, "CAST(0 AS bigint)")
                        : mcdc_buf_printf(&bucket, "(k - (%lld) - ((k - (%lld)) %% %lld + %lld) %% %lld) / %lld", o, o, w, w,
                                          w, w);
    }
    if (rc == 0) {
        mcdc_mssql_fill fill = { .table = table.ptr, .where = where.ptr ? where.ptr : "", .key = key.ptr,
                                 .bucket = bucket.ptr };
        rc = mcdc_mssql_statement_render(&sql, MCDC_MSSQL_Q_KEY_BUCKETS, &fill);
        if (rc == 0) rc = mcdc_buf_putc(&sql, '\0');
    }
    bucket_ctx c = { .spec = spec, .sql = sql.ptr };
    if (rc == 0) {
        char what[300];
        snprintf(what, sizeof what, "counting key buckets of %s.%s", ci->schema, ci->table);
        rc = mssql__retry(s, what, bucket_fn, &c);
        if (rc < 0 && s->last_kind == MSSQL_ERR_PERMISSION)
            mcdc_error_hint("a DBA grants it: GRANT SELECT ON [%s].[%s] TO [%s];", ci->schema, ci->table,
                            s->login[0] ? s->login : s->cfg.user);
    }
    if (rc == 0) {
        *out = c.b;
        *n_out = c.n;
        c.b = NULL;
    }
    free(c.b);
    free(idx);
    mcdc_buf_dispose(&key);
    mcdc_buf_dispose(&bucket);
    mcdc_buf_dispose(&table);
    mcdc_buf_dispose(&where);
    mcdc_buf_dispose(&sql);
    return rc;
}
