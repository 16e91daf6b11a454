/*
 * mcdc/mssql.h: the SQL Server source (odbc:CONNECTION-STRING) and its preflight check.
 *
 * The source reads CDC over unixODBC, with FreeTDS's driver unless the string names another
 * (Driver=). It implements mcdc_source_ops (mcdc/source.h) with the statements listed in
 * docs/reference/sqlserver-queries.md; connection strings are described in
 * docs/guides/sqlserver.md.
 *
 * Caveats:
 * - One connection per source; a source is used by one thread at a time.
 * - A transient failure (dropped connection, deadlock victim, timeout) is retried on a new
 *   connection 3 times with backoff; the calls block meanwhile (up to about 15 s, plus the
 *   timeouts).
 * - With CAFile= (FreeTDS), FREETDSCONF is set for the process to a private file.
 */
#ifndef MCDC_MSSQL_H
#define MCDC_MSSQL_H

#include <stdbool.h>

#include "mcdc/buf.h"
#include "mcdc/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Open the SQL Server source for connection string @p conn (the text after "odbc:"):
 *  parse and check it, connect (retrying a transient failure), read the server's version and
 *  time zone. @return 0; MCDC_EINVAL for a bad connection string or time zone (nothing is
 *  sent); MCDC_ENOTFOUND when FreeTDS's driver is needed and not installed; MCDC_ESOURCE
 *  when the server cannot be reached or refuses the login. */
int mcdc_mssql_source_open(mcdc_source **out, const char *conn);

/** True when @p src is a SQL Server source. */
bool mcdc_mssql_source_is(const mcdc_source *src);

/** One finding of mcdc_mssql_check. */
typedef struct mcdc_check_item {
    char what[64];     /* "server", "capture instance dbo_orders", "max_lsn", ... */
    char found[512];   /* what was found */
    char fix[512];     /* what to do about it, "" when nothing */
    bool ok;           /* false: a stream cannot run until it is fixed */
} mcdc_check_item;

/** The findings of a preflight; free with mcdc_check_report_free. */
typedef struct mcdc_check_report {
    mcdc_check_item *items;
    size_t           n_items;
    bool             ok;  /* every item ok: a stream can run */
} mcdc_check_report;

/** Read-only preflight of @p src for the capture instances @p cis (all visible ones when
 *  @p n_cis is 0): server, database, CDC, instances, columns and types, permissions, time
 *  zone, max_lsn and its age, min_lsn. Problems are items, not errors.
 *  @return 0 (see report->ok); MCDC_ESOURCE when the server cannot be asked at all. */
int mcdc_mssql_check(mcdc_check_report *out, mcdc_source *src, const char *const *cis, size_t n_cis);
void mcdc_check_report_free(mcdc_check_report *r);

#ifdef __cplusplus
}
#endif
#endif
