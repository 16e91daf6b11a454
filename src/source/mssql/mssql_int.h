/*
 * source/mssql/mssql_int.h: internals shared by the SQL Server source's files.
 *
 *   conn.c        the connection string (conn.h)
 *   statements.c  every statement sent (statements.h)
 *   odbc.c        connections, diagnostics and their classes, retries, parameters, scalar reads
 *   types.c       captured columns -> schema and fetch plan; bound buffers -> mcdc_value
 *   reader.c      the mcdc_source_ops over all of it, and the commit-time clock
 *   buckets.c     key_buckets, reconcile's grouped query
 *   partitions.c  numPartitions=N: one read over N connections, delivered in order
 *
 * One connection per source, used by one thread at a time (mcdc/source.h). FreeTDS allows one
 * active result set per connection, so a statement is always read to its end (or closed)
 * before the next one runs.
 */
#ifndef MCDC_SOURCE_MSSQL_INT_H
#define MCDC_SOURCE_MSSQL_INT_H

#include <sql.h>
#include <sqlext.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcdc/log.h"
#include "mcdc/source.h"
#include "mcdc/tz.h"
#include "source/mssql/conn.h"
#include "source/mssql/statements.h"

#define MSSQL_LOGGER "source"

/* What a failure was, from its diagnostics (decides whether it is retried). */
typedef enum {
    MSSQL_ERR_NONE = 0,
    MSSQL_ERR_OTHER,      /* any other refusal: MCDC_ESOURCE, not retried */
    MSSQL_ERR_TRANSIENT,  /* SQLSTATE 08xxx, HYT00, HYT01, 40001; errors 1205, 1222 */
    MSSQL_ERR_LOGIN,      /* 18456 / 28000: login failed */
    MSSQL_ERR_PERMISSION, /* 229, 230, 262, 297, 300: a missing grant */
    MSSQL_ERR_NO_OBJECT   /* 208: invalid object name (a change table that is gone) */
} mssql_err_kind;

/* A captured column as SQL Server describes it, and how it is fetched. */
typedef struct mssql_col {
    char   *name;         /* column_name */
    int     column_id;    /* in the source table */
    int     ordinal;      /* column_ordinal in the change table */
    char    data_type[64];/* "decimal", "nvarchar", ... (lower case) */
    int     max_length;   /* character_maximum_length: -1 for (max), else characters/bytes */
    int     precision, scale, dt_precision;
    bool    nullable;
    bool    in_table;     /* still a column of the source table (a dropped one reads NULL) */
    bool    is_long;      /* (max), text, ntext, image, xml: fetched in chunks after the row */
    bool    cp1252;       /* char, varchar, text in a collation of code page 1252 (sys.columns) */
    /* fetch plan */
    SQLSMALLINT c_type;   /* SQL_C_* used to bind or get it */
    SQLLEN      width;    /* bytes per row in the bound buffer (0 for a long column) */
    size_t      text_cap; /* bytes of text a bound value is made into (time, UTF-16), else 0 */
    bool        is_time;  /* time: SQL_SS_TIME2_STRUCT made into text */
} mssql_col;

/* A capture instance as sp_cdc_help_change_data_capture lists it. */
typedef struct mssql_ci {
    char    *name, *schema, *table;
    char    *index_columns; /* index_column_list: "[a], [b]" */
    mcdc_lsn start_lsn;     /* 0 until capture processed the enable */
    int64_t  create_local_us; /* create_date, server clock */
} mssql_ci;

/* The captured columns of a capture instance, mapped and planned (refreshed by each
 * captured_columns call, loaded by the first read that needs them). */
typedef struct mssql_plan {
    char        *ci;            /* capture instance name as the server spells it */
    mssql_col   *cols;          /* captured columns, in column_ordinal order (computed ones left out) */
    size_t       n_cols;
    mcdc_schema *schema;        /* the same columns as a schema */
    bool         can_read_ct;   /* HAS_PERMS_BY_NAME on the change table said yes */
} mssql_plan;

typedef struct mssql_source {
    mcdc_source     base;
    mcdc_mssql_conn cfg;          /* parsed connection string (owned) */
    SQLHENV         env;
    SQLHDBC         dbc;          /* SQL_NULL_HDBC when not connected */
    char            conf_path[256]; /* private freetds.conf for CAFile, or "" */
    /* what the server said at connect (refreshed on each new connection) */
    char            version[64], edition[128], database[130], login[130];
    int             major, engine_edition;
    /* time zone (server clock -> UTC) */
    mcdc_tz        *tz;
    bool            tz_fixed;     /* only the offset was known (before SQL Server 2022) */
    bool            tz_warned;
    /* reads */
    int64_t         page_rows;    /* rows per page of a change read */
    int             max_retries;  /* retries of a transient failure (3) */
    int64_t         backoff_base_ms; /* first backoff is base..2*base (1000) */
    /* the last failure's class, set by mssql__fail */
    mssql_err_kind  last_kind;
    /* capture instances, loaded on first use and when a name is not found */
    mssql_ci       *ci;
    size_t          n_ci;
    bool            ci_loaded;
    mssql_plan     *plans;
    size_t          n_plans;
    mcdc_ratelimit  offset_warn;  /* the server's offset differs from the zone's */
    bool            srv_offset;   /* the last clock check found them different: commit times
                                     are converted with srv_offset_min, not the zone */
    int             srv_offset_min;
    char          **warnings;     /* raised since the last take_warnings (owned) */
    size_t          n_warnings;
    /* numPartitions=N: the connection string (a secret: never printed) to open the other
     * connections with, and those sources, opened by the first partitioned read */
    char           *conn_text;
    bool            is_sibling;   /* one of another source's partition readers */
    struct mssql_source **sibs;
    int             n_sibs;
    long            record_off;   /* record=: bytes of the dump already in the transcript */
} mssql_source;

/* ---- odbc.c ---- */

/** Connect when not connected (a new connection after a failure). */
int mssql__connect(mssql_source *s);
/** Drop the connection (the next call reconnects); with record=, its exchanges so far go
 *  into the transcript. */
void mssql__disconnect(mssql_source *s);
/** record=DIR: add the exchanges dumped since the last call to DIR/transcript.jsonl.
 *  A failure is a warning (the stream goes on). @return 0 or the failure's code. */
int mssql__record(mssql_source *s);
/** Record the failure of an ODBC call on handle @p h as the current error, classified into
 *  s->last_kind; @p what says what was being done ("reading max_lsn"). Returns the code. */
int mssql__fail(mssql_source *s, SQLSMALLINT handle_type, SQLHANDLE h, const char *what);
/** A new statement handle with the query timeout set. */
int mssql__stmt(mssql_source *s, SQLHSTMT *out);
void mssql__stmt_free(SQLHSTMT st);
/* Close a statement whose answer is short (a row, a catalog's few rows) after @p rc: on a
 * success what is left of the answer (its closing DONE tokens) is read first, so that the
 * close costs no cancel: FreeTDS cancels a statement closed before its answer was read to
 * the end, a round trip more. Never for change rows, whose rest may be long. */
void mssql__stmt_end(SQLHSTMT st, int rc);
/** Run @p fn(s, payload) with retries of transient failures on a new connection (the
 *  jittered backoff, a warning each time). @p what names the operation in messages. */
int mssql__retry(mssql_source *s, const char *what, int (*fn)(mssql_source *s, void *payload), void *payload);

/* Parameters: the value must stay where it is until the statement ran. */
int mssql__bind_lsn(mssql_source *s, SQLHSTMT st, int idx, const mcdc_lsn *lsn, SQLLEN *ind);
int mssql__bind_text(mssql_source *s, SQLHSTMT st, int idx, const char *text, SQLLEN *ind);
int mssql__bind_int64(mssql_source *s, SQLHSTMT st, int idx, const int64_t *v, SQLLEN *ind);
int mssql__bind_timestamp(mssql_source *s, SQLHSTMT st, int idx, const SQL_TIMESTAMP_STRUCT *v, SQLLEN *ind);
/** Prepare-free execution of @p sql (SQLExecDirect). */
int mssql__exec(mssql_source *s, SQLHSTMT st, const char *sql, const char *what);
/** Run statement @p q without placeholders or parameters and discard its results. */
int mssql__exec_simple(mssql_source *s, mcdc_mssql_query q, const mcdc_mssql_fill *fill);

/* Column reads of the current row (SQLGetData): *is_null set for NULL. */
int mssql__get_lsn(mssql_source *s, SQLHSTMT st, int col, mcdc_lsn *out, bool *is_null);
int mssql__get_int64(mssql_source *s, SQLHSTMT st, int col, int64_t *out, bool *is_null);
int mssql__get_text(mssql_source *s, SQLHSTMT st, int col, char *out, size_t cap, bool *is_null);
/** A datetime/datetime2 as wall-clock microseconds since 1970 (no zone). */
int mssql__get_local_us(mssql_source *s, SQLHSTMT st, int col, int64_t *out, bool *is_null);
/** A long text (nvarchar(max)) into a new string; caller frees. */
int mssql__get_text_alloc(mssql_source *s, SQLHSTMT st, int col, char **out);
/** Index (1-based) of the result column named @p name, or 0. */
int mssql__col_index(SQLHSTMT st, const char *name);

/** Wall-clock microseconds of an ODBC timestamp. */
int64_t mssql__ts_to_us(const SQL_TIMESTAMP_STRUCT *t);
/** An ODBC timestamp of wall-clock microseconds. */
void mssql__us_to_ts(SQL_TIMESTAMP_STRUCT *out, int64_t us);

/* ---- types.c ---- */

/** Whether collation @p name stores char and varchar in code page 1252 (the Latin1_General
 *  and SQL_Latin1_General_CP1 families, not their _UTF8 forms); false for NULL. */
bool mssql__collation_cp1252(const char *name);

/** Map @p c's SQL Server type to a schema column and a fetch plan (c_type, width, is_long).
 *  @return 0; MCDC_EUNSUPPORTED for a type with no mapping, naming the column and @p ci. */
int mssql__type_plan(mssql_col *c, const char *ci, mcdc_column *out);
/** The select-list expression for @p c: "c.[name]", or "CAST(NULL AS <type>) AS [name]" for
 *  a column the table no longer has (when @p for_snapshot). Appends to @p out. */
int mssql__col_expr(mcdc_buf *out, const mssql_col *c, const char *prefix, bool for_snapshot);
/** The declared type of @p c as T-SQL ("decimal(12,2)", "nvarchar(max)"), into @p out. */
void mssql__type_text(char *out, size_t cap, const mssql_col *c);
/** Append a bracket-quoted identifier; refuses ']' and control characters. */
int mssql__quote(mcdc_buf *out, const char *ident, const char *what);
/** Convert one fetched cell (@p data, @p len from the indicator) to @p out; strings point
 *  into @p data. @p scratch holds text that had to be made (time). */
int mssql__to_value(const mssql_col *c, const mcdc_column *col, const char *data, SQLLEN len, mcdc_value *out,
                    char *scratch, size_t scratch_cap);

/* ---- reader.c (for check.c) ---- */

/** (Re)load the capture instances the login can see into s->ci. */
int mssql__load_cis(mssql_source *s);
/** The capture instance @p name (exact, else the one match ignoring case); MCDC_ENOTFOUND
 *  naming the visible ones. */
int mssql__find_ci(mssql_source *s, const char *name, mssql_ci **out);
/** (Re)load the captured-column plan of @p ci. MCDC_EUNSUPPORTED for an unmapped type. */
int mssql__load_plan(mssql_source *s, const mssql_ci *ci, mssql_plan **out);
/** The cached plan of @p ci, loaded on first use. */
int mssql__get_plan(mssql_source *s, const mssql_ci *ci, mssql_plan **out);
/** Read the changes of (after, upto] on @p s's own connection, in pages (the source op
 *  read_changes without partitions); @p seed_local is the local commit time of the commit at
 *  @p after, for the commit-time sequencer, or INT64_MIN. */
int mssql__read_range(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                      int64_t seed_local, mcdc_change_cb cb, void *payload);
/** The end of the page of change rows after @p after, at most @p upto: the __$start_lsn of
 *  the pageRows-th row, or of the last one when fewer are left, so the page (after, *end]
 *  ends on a commit (statement page_end, retried). *found false when no row is left. */
int mssql__page_end(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto, mcdc_lsn *end,
                    bool *found);

/* A block of fetched change rows handed over whole by mssql__read_page: the bound arrays the
 * driver fetched into, the rows' headers and their converted values, which point into those
 * arrays. Owned by whoever holds it; never shared. */
typedef struct mssql_rows mssql_rows;
/** Takes the full block *@p io (it is the callee's now) and sets *@p io to an empty block
 *  for the read to fetch into next (recycled or from mssql__rows_new). Non-zero stops the
 *  read and is returned by it. */
typedef int (*mssql_rows_cb)(mssql_rows **io, void *payload);
/** An empty block for the capture instance's plan @p p (one fetch of rows). */
int mssql__rows_new(mssql_rows **out, const mssql_plan *p);
void mssql__rows_free(mssql_rows *b);
/** Rows in the block, and their headers (values set; borrowed from the block). */
int64_t mssql__rows_count(const mssql_rows *b);
const mcdc_change *mssql__rows_changes(const mssql_rows *b);
/** About what the block holds in memory, in bytes. */
size_t mssql__rows_bytes(const mssql_rows *b);
/** Read the page (after, end] (@p end from mssql__page_end, so no page_end is sent) on @p s's
 *  connection, handing its rows over a fetched block at a time to @p on_rows, in LSN order,
 *  starting with block *@p io. @p seeded: the commit at @p after is read with the page's
 *  commit times and seeds the commit-time sequencer (a range after the batch's first). A
 *  failure is retried as any read's page, skipping the rows already handed over. */
int mssql__read_page(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *end, bool seeded,
                     mssql_rows **io, mssql_rows_cb on_rows, void *payload);
/** read_changes with numPartitions > 1 (partitions.c). */
int mssql__read_partitioned(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                            mcdc_change_cb cb, void *payload);
/** Close the partition readers (partitions.c). */
void mssql__close_siblings(mssql_source *s);
/** Reconcile's tier 1 (buckets.c): the source op key_buckets, one grouped query. */
int mssql__key_buckets(mcdc_source *b, const char *ci, const mcdc_key_bucket_spec *spec, mcdc_key_bucket **out,
                       size_t *n_out);
/** UTC commit time of the mapping entry at @p lsn; MCDC_ENOTFOUND when none. */
int mssql__commit_ts(mssql_source *s, const mcdc_lsn *lsn, int64_t *out_us);
/** "[cdc].[<ci>_CT]"; MCDC_EINVAL for a name that cannot be quoted. */
int mssql__ct_name(mcdc_buf *out, const char *ci);
/** HAS_PERMS_BY_NAME(object, 'OBJECT', 'SELECT') = 1. */
int mcdc_mssql__has_select(mcdc_source *b, const char *object, bool *out);

#endif
