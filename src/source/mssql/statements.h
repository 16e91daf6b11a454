/*
 * source/mssql/statements.h: every T-SQL statement the SQL Server source sends, in one table.
 *
 * Nothing else in src/source/mssql/ writes SQL: a statement is fetched by its id and, where it
 * names a change table, a source table or column lists, rendered with those filled in
 * (identifiers validated and bracket-quoted by the caller). Parameters are ODBC markers '?',
 * bound with the types listed in `params`; LSNs travel as binary(10) both ways. The table is
 * also the DBA's list (docs/reference/sqlserver-queries.md, checked against it by
 * tests/unit/source/mssql_statements.c) and the T-SQL engine's contract: the simulator's
 * engine runs each statement, rendered with mcdc_mssql_statement_example, in its own tests.
 *
 * Placeholders in `sql`, filled by mcdc_mssql_statement_render:
 *   {ct}     the change table, [cdc].[<capture instance>_CT]
 *   {cols}   captured column expressions, each preceded by ", " (c.[a] or CAST(NULL AS int))
 *   {list}   captured column expressions for a source-table read, separated by ", "
 *   {table}  the source table, [schema].[name]
 *   {where}  " WHERE <key range>" or ""
 *   {keys}   the key columns, "[a], [b]"
 *   {n}      a whole number (SET LOCK_TIMEOUT cannot take a parameter)
 *   {key}    key_buckets: the expression summed per bucket (a key's ordinal or key hash)
 *   {bucket} key_buckets: the bucket of that value k, with whole-number literals
 */
#ifndef MCDC_SOURCE_MSSQL_STATEMENTS_H
#define MCDC_SOURCE_MSSQL_STATEMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

typedef enum {
    MCDC_MSSQL_Q_SERVER_INFO,
    MCDC_MSSQL_Q_DATABASE_CDC,
    MCDC_MSSQL_Q_TIME_ZONE_ID,
    MCDC_MSSQL_Q_SERVER_NOW,
    MCDC_MSSQL_Q_MAX_LSN,
    MCDC_MSSQL_Q_MIN_LSN,
    MCDC_MSSQL_Q_COMMIT_TIME,
    MCDC_MSSQL_Q_MAPPING_FIRST_AFTER,
    MCDC_MSSQL_Q_MAPPING_SEED,
    MCDC_MSSQL_Q_MAPPING_RANGE,
    MCDC_MSSQL_Q_NTH_COMMIT,
    MCDC_MSSQL_Q_CAPTURE_INSTANCES,
    MCDC_MSSQL_Q_CAPTURE_INSTANCES_OF,
    MCDC_MSSQL_Q_CAPTURED_COLUMNS,
    MCDC_MSSQL_Q_SOURCE_COLUMNS,
    MCDC_MSSQL_Q_DDL_HISTORY,
    MCDC_MSSQL_Q_HAS_SELECT,
    MCDC_MSSQL_Q_PAGE_END,
    MCDC_MSSQL_Q_CHANGES,
    MCDC_MSSQL_Q_SET_SNAPSHOT,
    MCDC_MSSQL_Q_SET_READ_COMMITTED,
    MCDC_MSSQL_Q_SET_LOCK_TIMEOUT,
    MCDC_MSSQL_Q_SNAPSHOT,
    MCDC_MSSQL_Q_KEY_AT,
    MCDC_MSSQL_Q_KEY_COUNT,
    MCDC_MSSQL_Q_KEY_BUCKETS,
    MCDC_MSSQL_Q_CONSISTENT_LSN,
    MCDC_MSSQL_Q_TIME_TO_LSN,
    MCDC_MSSQL_Q_POSITIONS,
    MCDC_MSSQL_Q_IDENTITY,
    MCDC_MSSQL_Q_IDENTITY_AZURE,
    MCDC_MSSQL_Q_COMMIT_AT_OR_BEFORE,
    MCDC_MSSQL_Q_COUNT
} mcdc_mssql_query;

/** One statement, with what a DBA needs to know about it. All strings are static. */
typedef struct mcdc_mssql_statement {
    const char *name;       /* "max_lsn": the heading in docs/reference/sqlserver-queries.md */
    const char *sql;        /* the text, with {placeholders} and '?' markers */
    const char *params;     /* the markers' SQL types in order ("binary(10), binary(10)"), or "" */
    const char *objects;    /* the system objects it reads */
    const char *permission; /* what the login needs for it */
    const char *purpose;    /* why mssql-cdc sends it, and when */
} mcdc_mssql_statement;

/** What fills a statement's placeholders; NULL for the ones it does not use. */
typedef struct mcdc_mssql_fill {
    const char *ct;
    const char *cols;
    const char *list;
    const char *table;
    const char *where;
    const char *keys;
    const char *key;
    const char *bucket;
    int64_t     n;
} mcdc_mssql_fill;

/** The statement @p q (never NULL for a valid id). */
const mcdc_mssql_statement *mcdc_mssql_statement_get(mcdc_mssql_query q);

/** Append statement @p q to @p out with its placeholders filled from @p fill.
 *  @return 0; MCDC_EINVAL when a placeholder it uses is not given; MCDC_ENOMEM. */
int mcdc_mssql_statement_render(mcdc_buf *out, mcdc_mssql_query q, const mcdc_mssql_fill *fill);

/** Append statement @p q rendered for an example table (dbo.orders, key order_id, captured
 *  columns order_id int and amount decimal(12,2), capture instance dbo_orders), as the T-SQL
 *  engine's tests run it. @return as mcdc_mssql_statement_render. */
int mcdc_mssql_statement_example(mcdc_buf *out, mcdc_mssql_query q);

#endif
