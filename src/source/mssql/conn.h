/*
 * source/mssql/conn.h: the connection string of an odbc: source, parsed, checked and
 * rewritten for the ODBC driver that will get it.
 *
 * Input: the text after "odbc:", ODBC's `key=value;...` with braced values (`{a;b}}c}` is
 * "a;b}c"). Output: the string for SQLDriverConnect, plus mssql-cdc's own settings, which
 * are taken out of it. Nothing here touches the network; the driver path lookup reads the
 * file system only. Design: docs/guides/sqlserver.md (keywords), issue 15.
 *
 * Rules (each a refusal with MCDC_EINVAL, the message naming the keyword, passwords masked):
 * (K1) keywords are matched ignoring case; a keyword given twice is refused;
 * (K2) a keyword the chosen driver does not know is refused (FreeTDS silently ignores
 *      them, so a typo such as "Encrypt=yes" spelled "Encryp=yes" would quietly weaken
 *      the connection);
 * (K3) with FreeTDS, encryption (Encrypt=yes|mandatory or Encryption=require) without
 *      CAFile= is refused unless TrustServerCertificate=yes says so explicitly, because
 *      FreeTDS checks a certificate only against a given CA file;
 * (K4) without Driver= (and DSN=), FreeTDS's installed libtdsodbc.so is used, with
 *      TDS_Version=7.4 and ClientCharset=UTF-8 unless given.
 */
#ifndef MCDC_SOURCE_MSSQL_CONN_H
#define MCDC_SOURCE_MSSQL_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"

typedef enum {
    MCDC_MSSQL_ISO_READ_COMMITTED = 0,
    MCDC_MSSQL_ISO_SNAPSHOT = 1
} mcdc_mssql_isolation;

/** A parsed odbc: source. Every string is owned; free with mcdc_mssql_conn_free. */
typedef struct mcdc_mssql_conn {
    char   *odbc;             /* the string for SQLDriverConnect; holds the password: never shown */
    char   *masked;           /* the user's string with its passwords masked, for messages */
    char   *user;             /* UID= or "" (for "login failed for user 'u'") */
    char   *server;           /* Server= (or Servername=/DSN=) as given, "" when none */
    char   *database;         /* Database= or "" */
    char   *driver;           /* the driver used: a path or a name from odbcinst.ini */
    bool    is_freetds;       /* FreeTDS's driver (keywords and translations of FreeTDS) */
    char   *ca_file;          /* FreeTDS: CAFile=, written into a private freetds.conf; or NULL */
    char   *host;             /* FreeTDS with CAFile: the host that goes into that file */
    char   *time_zone;        /* sourceTimeZone=, "auto" when not given */
    int     connect_timeout_s;/* connectTimeout= (login timeout), default 30 */
    int     query_timeout_s;  /* queryTimeout=, default 300; 0 = none */
    int64_t lock_timeout_ms;  /* lockTimeoutMs= (snapshot reads of the source table), -1 none */
    mcdc_mssql_isolation isolation; /* isolationLevel=readCommitted|snapshot */
    bool    isolation_given;  /* isolationLevel= was in the string */
    int64_t page_rows;        /* pageRows=: change rows per page of a read, default 10000 */
    char   *record_dir;       /* record=DIR: the transcript's directory, or NULL */
    char   *record_dump;      /* FreeTDS's packet dump behind it (DIR/.freetds-PID.dump) */
} mcdc_mssql_conn;

/** Parse and check @p text (without "odbc:"), rewriting it for its driver.
 *  @p freetds_driver: the FreeTDS driver to name when the string names none (NULL: find
 *  it with mcdc_mssql_conn_find_freetds).
 *  @return 0; MCDC_EINVAL for a bad string (K1-K3, syntax, bad option values);
 *  MCDC_ENOTFOUND when no driver is named and FreeTDS's is not installed; MCDC_ENOMEM. */
int mcdc_mssql_conn_parse(mcdc_mssql_conn *out, const char *text, const char *freetds_driver);
/** Free what mcdc_mssql_conn_parse allocated (the struct itself is the caller's). */
void mcdc_mssql_conn_free(mcdc_mssql_conn *c);

/** The path of FreeTDS's ODBC driver (libtdsodbc.so): $MSSQL_CDC_FREETDS_DRIVER when set,
 *  else the first that exists of Debian's multiarch paths and the usual install places.
 *  Writes into @p out (@p cap bytes). @return 0; MCDC_ENOTFOUND with an install hint. */
int mcdc_mssql_conn_find_freetds(char *out, size_t cap);

/** Append @p value to @p out as a connection string value for the driver: plain when it
 *  can be, else braced. Microsoft's drivers read "}}" inside braces as one '}'; FreeTDS
 *  takes a braced value raw up to the first "};" (or a '}' at the end), so for it '}' is
 *  not doubled and a value holding "};" cannot be written.
 *  @return 0; MCDC_EINVAL for such a value (naming @p key); MCDC_ENOMEM. */
int mcdc_mssql_conn_put_value(mcdc_buf *out, const char *key, const char *value, bool for_freetds);

#endif
