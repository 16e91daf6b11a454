/*
 * source/mssql/conn.c: parsing, checking and rewriting an odbc: connection string (see
 * conn.h for the rules K1-K4).
 *
 * Two passes: the first splits the string into attributes (unescaping braced values) and
 * finds the driver, so that the second can check each keyword against that driver's list
 * and translate Microsoft's spellings for FreeTDS. mssql-cdc's own settings
 * (connectTimeout, queryTimeout, lockTimeoutMs, isolationLevel, sourceTimeZone) are taken
 * out; everything else goes to the driver in the order given, defaults last. Every message
 * shows the string through mcdc_secret_mask (core/secret.c), never the password.
 */
#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcdc/secret.h"
#include "source/mssql/conn.h"

#define MAX_ATTRS 64
#define MAX_CONN_LEN 65536

/* What a keyword is for: the ones with a meaning here, and plain pass-through ones. */
typedef enum {
    K_PASS, K_DRIVER, K_DSN, K_SERVER, K_SERVERNAME, K_PORT, K_DATABASE, K_UID, K_PWD,
    K_ENCRYPT, K_ENCRYPTION, K_TRUST, K_CAFILE, K_TDS_VERSION, K_CHARSET,
    K_CONNECT_TIMEOUT, K_QUERY_TIMEOUT, K_LOCK_TIMEOUT, K_ISOLATION, K_PAGE_ROWS, K_TIME_ZONE, K_RECORD, K_DUMPFILE
} kw_kind;

#define F_TDS 1 /* FreeTDS knows it */
#define F_MS  2 /* Microsoft's drivers know it */
#define F_OWN 4 /* mssql-cdc's own: taken out of the string */

typedef struct keyword {
    const char *name;
    kw_kind     kind;
    int         flags;
} keyword;

static const keyword keywords[] = {
    { "Driver", K_DRIVER, F_TDS | F_MS },
    { "DSN", K_DSN, F_TDS | F_MS },
    { "Server", K_SERVER, F_TDS | F_MS },
    { "Address", K_SERVER, F_MS },
    { "Addr", K_SERVER, F_MS },
    { "Servername", K_SERVERNAME, F_TDS },
    { "Port", K_PORT, F_TDS },
    { "Database", K_DATABASE, F_TDS | F_MS },
    { "UID", K_UID, F_TDS | F_MS },
    { "PWD", K_PWD, F_TDS | F_MS },
    { "Encrypt", K_ENCRYPT, F_TDS | F_MS },
    { "Encryption", K_ENCRYPTION, F_TDS },
    { "TrustServerCertificate", K_TRUST, F_TDS | F_MS },
    { "CAFile", K_CAFILE, F_TDS },
    { "TDS_Version", K_TDS_VERSION, F_TDS },
    { "ClientCharset", K_CHARSET, F_TDS },
    { "APP", K_PASS, F_TDS | F_MS },
    { "WSID", K_PASS, F_TDS | F_MS },
    { "Language", K_PASS, F_TDS | F_MS },
    { "PacketSize", K_PASS, F_TDS | F_MS },
    { "TextSize", K_PASS, F_TDS },
    { "DumpFile", K_DUMPFILE, F_TDS },
    { "DumpFileAppend", K_PASS, F_TDS },
    { "DebugFlags", K_PASS, F_TDS },
    { "Trusted_Connection", K_PASS, F_TDS | F_MS },
    { "UseNTLMv2", K_PASS, F_TDS },
    { "REALM", K_PASS, F_TDS },
    { "ServerSPN", K_PASS, F_TDS | F_MS },
    { "ApplicationIntent", K_PASS, F_TDS | F_MS },
    { "MARS_Connection", K_PASS, F_TDS | F_MS },
    { "HostNameInCertificate", K_PASS, F_MS },
    { "ServerCertificate", K_PASS, F_MS },
    { "Authentication", K_PASS, F_MS },
    { "MultiSubnetFailover", K_PASS, F_MS },
    { "KeepAlive", K_PASS, F_MS },
    { "KeepAliveInterval", K_PASS, F_MS },
    { "ConnectRetryCount", K_PASS, F_MS },
    { "ConnectRetryInterval", K_PASS, F_MS },
    { "TransparentNetworkIPResolution", K_PASS, F_MS },
    { "AutoTranslate", K_PASS, F_MS },
    { "connectTimeout", K_CONNECT_TIMEOUT, F_OWN },
    { "queryTimeout", K_QUERY_TIMEOUT, F_OWN },
    { "lockTimeoutMs", K_LOCK_TIMEOUT, F_OWN },
    { "isolationLevel", K_ISOLATION, F_OWN },
    { "pageRows", K_PAGE_ROWS, F_OWN },
    { "sourceTimeZone", K_TIME_ZONE, F_OWN },
    { "record", K_RECORD, F_OWN },
};
#define N_KEYWORDS (sizeof keywords / sizeof keywords[0])

typedef struct attr {
    char          *key;   /* as written, trimmed */
    char          *value; /* unescaped */
    const keyword *kw;    /* NULL when unknown */
} attr;

typedef struct parsed {
    attr   a[MAX_ATTRS];
    size_t n;
} parsed;

static void parsed_free(parsed *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->a[i].key);
        if (p->a[i].value) explicit_bzero(p->a[i].value, strlen(p->a[i].value));
        free(p->a[i].value);
    }
    p->n = 0;
}

static const keyword *lookup(const char *key)
{
    for (size_t i = 0; i < N_KEYWORDS; i++)
        if (!strcasecmp(keywords[i].name, key))
            return &keywords[i];
    return NULL;
}

static char *dup_trim(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return strndup(s, n);
}

/* Split @p text into attributes. A braced value runs to the '}' not followed by another
 * '}' ("}}" is one '}'); after it only spaces may come before ';'. */
static int split(parsed *out, const char *text, const char *masked)
{
    const char *p = text;
    out->n = 0;
    while (*p) {
        while (*p == ';' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *eq = p;
        while (*eq && *eq != '=' && *eq != ';')
            eq++;
        if (*eq != '=') /* neither the text nor the string is shown: it may be the rest of a password */
            return mcdc_error_set(MCDC_EINVAL, "connection string: attribute %zu has no '=' (attributes are KEY=VALUE "
                                  "separated by ';')", out->n + 1),
                   mcdc_error_hint("a value holding ';' must be braced, e.g. PWD={a;b}");
        if (out->n == MAX_ATTRS)
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': more than %d attributes", masked, MAX_ATTRS);
        attr *a = &out->a[out->n];
        a->key = dup_trim(p, (size_t)(eq - p));
        a->value = NULL;
        if (!a->key)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        out->n++;
        if (!a->key[0])
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': an attribute has no keyword before '='", masked);
        const char *v = eq + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v == '{') {
            mcdc_buf b = MCDC_BUF_INIT(MAX_CONN_LEN);
            const char *q = v + 1;
            for (;; q++) {
                if (!*q) {
                    mcdc_buf_dispose(&b);
                    return mcdc_error_set(MCDC_EINVAL, "connection string '%s': the braced value of %s has no closing '}'",
                                          masked, a->key),
                           mcdc_error_hint("write a '}' inside braces as '}}', e.g. PWD={a}}b} for the password a}b");
                }
                if (*q == '}') {
                    if (q[1] == '}') {
                        q++;
                    } else {
                        break;
                    }
                }
                if (mcdc_buf_putc(&b, *q) < 0) {
                    mcdc_buf_dispose(&b);
                    return MCDC_ENOMEM;
                }
            }
            q++;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q && *q != ';') {
                mcdc_buf_dispose(&b);
                return mcdc_error_set(MCDC_EINVAL, "connection string '%s': text after the closing '}' of %s", masked, a->key),
                       mcdc_error_hint("write a '}' inside braces as '}}'");
            }
            a->value = b.ptr ? mcdc_buf_detach(&b) : strdup("");
            p = q;
        } else {
            const char *e = v;
            while (*e && *e != ';')
                e++;
            a->value = dup_trim(v, (size_t)(e - v));
            p = e;
        }
        if (!a->value)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    return 0;
}

int mcdc_mssql_conn_put_value(mcdc_buf *out, const char *key, const char *value, bool for_freetds)
{
    bool plain = value[0] && !strpbrk(value, ";{}= \t\r\n");
    if (plain)
        return mcdc_buf_puts(out, value);
    if (for_freetds) {
        if (strstr(value, "};"))
            return mcdc_error_set(MCDC_EINVAL, "the value of %s holds \"};\", which FreeTDS's driver cannot read", key),
                   mcdc_error_hint("change that value, or use Microsoft's driver (Driver={ODBC Driver 18 for SQL Server})");
        int rc = mcdc_buf_putc(out, '{');
        if (rc == 0) rc = mcdc_buf_puts(out, value);
        if (rc == 0) rc = mcdc_buf_putc(out, '}');
        return rc;
    }
    int rc = mcdc_buf_putc(out, '{');
    for (const char *p = value; rc == 0 && *p; p++)
        rc = *p == '}' ? mcdc_buf_puts(out, "}}") : mcdc_buf_putc(out, *p);
    if (rc == 0) rc = mcdc_buf_putc(out, '}');
    return rc;
}

int mcdc_mssql_conn_find_freetds(char *out, size_t cap)
{
    const char *env = getenv("MSSQL_CDC_FREETDS_DRIVER");
    if (env && *env) {
        if (access(env, R_OK) != 0)
            return mcdc_error_set(MCDC_ENOTFOUND, "MSSQL_CDC_FREETDS_DRIVER=%s: no such file", env),
                   mcdc_error_hint("point it at libtdsodbc.so, or unset it to use the installed one");
        snprintf(out, cap, "%s", env);
        return 0;
    }
    static const char *const patterns[] = {
        "/usr/lib/*/odbc/libtdsodbc.so", "/usr/lib/odbc/libtdsodbc.so", "/usr/lib64/libtdsodbc.so*",
        "/usr/lib/libtdsodbc.so*", "/usr/local/lib/libtdsodbc.so*", "/opt/homebrew/lib/libtdsodbc.so",
    };
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        glob_t g;
        if (glob(patterns[i], 0, NULL, &g) == 0 && g.gl_pathc > 0) {
            snprintf(out, cap, "%s", g.gl_pathv[0]);
            globfree(&g);
            return 0;
        }
        globfree(&g);
    }
    return mcdc_error_set(MCDC_ENOTFOUND, "FreeTDS's ODBC driver (libtdsodbc.so) is not installed"),
           mcdc_error_hint("install it (Debian: apt-get install tdsodbc), or name a driver with Driver=");
}

static int parse_int(int64_t *out, const attr *a, int64_t min, int64_t max, const char *masked)
{
    char *end = NULL;
    long long v = strtoll(a->value, &end, 10);
    if (!a->value[0] || *end || v < min || v > max)
        return mcdc_error_set(MCDC_EINVAL, "connection string '%s': %s=%s is not a whole number from %lld to %lld", masked,
                              a->key, a->value, (long long)min, (long long)max);
    *out = v;
    return 0;
}

static int parse_yes_no(bool *out, const attr *a, const char *masked)
{
    const char *v = a->value;
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1")) {
        *out = true;
        return 0;
    }
    if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0")) {
        *out = false;
        return 0;
    }
    return mcdc_error_set(MCDC_EINVAL, "connection string '%s': %s=%s is not yes or no", masked, a->key, v);
}

/* FreeTDS's Encryption= value for Microsoft's Encrypt=. */
static int translate_encrypt(const char **out, const attr *a, const char *masked)
{
    const char *v = a->value;
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "mandatory")) {
        *out = "require";
        return 0;
    }
    if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "optional")) {
        *out = "off";
        return 0;
    }
    if (!strcasecmp(v, "strict"))
        return mcdc_error_set(MCDC_EINVAL, "connection string '%s': Encrypt=strict (TDS 8.0) is not supported by FreeTDS 1.3",
                              masked),
               mcdc_error_hint("use Encrypt=yes with CAFile=, or Microsoft's driver (Driver={ODBC Driver 18 for SQL Server})");
    return mcdc_error_set(MCDC_EINVAL, "connection string '%s': Encrypt=%s: expected yes, no, mandatory or optional", masked, v);
}

/* True when the driver named by @p value is FreeTDS's (a path to libtdsodbc, or a name
 * from odbcinst.ini with "tds" in it, such as FreeTDS). */
static bool names_freetds(const char *value)
{
    return strcasestr(value, "tds") != NULL;
}

static int put_attr(mcdc_buf *out, const char *key, const char *value, bool freetds)
{
    int rc = 0;
    if (out->len) rc = mcdc_buf_putc(out, ';');
    if (rc == 0) rc = mcdc_buf_puts(out, key);
    if (rc == 0) rc = mcdc_buf_putc(out, '=');
    if (rc == 0) rc = mcdc_mssql_conn_put_value(out, key, value, freetds);
    return rc;
}

static int build(mcdc_mssql_conn *c, parsed *p, const char *masked, const char *freetds_driver)
{
    const attr *by[K_DUMPFILE + 1] = { 0 };
    mcdc_buf unknown = MCDC_BUF_INIT(4096);
    int rc = 0;
    /* K1: known, given once; the driver decides which list applies */
    for (size_t i = 0; i < p->n; i++) {
        attr *a = &p->a[i];
        a->kw = lookup(a->key);
        for (size_t j = 0; j < i; j++)
            if (!strcasecmp(p->a[j].key, a->key)) {
                mcdc_buf_dispose(&unknown);
                return mcdc_error_set(MCDC_EINVAL, "connection string '%s': %s and %s name the same setting", masked,
                                      p->a[j].key, a->key),
                       mcdc_error_hint("give each setting once");
            }
    }
    char found[4096];
    const char *driver = NULL;
    for (size_t i = 0; i < p->n; i++)
        if (p->a[i].kw && p->a[i].kw->kind == K_DRIVER) driver = p->a[i].value;
    if (!driver) {
        if (!freetds_driver) {
            if ((rc = mcdc_mssql_conn_find_freetds(found, sizeof found)) < 0) {
                mcdc_buf_dispose(&unknown);
                return rc;
            }
            freetds_driver = found;
        }
        driver = freetds_driver;
    }
    c->is_freetds = names_freetds(driver);
    int mask = c->is_freetds ? F_TDS : F_MS;
    /* K2: every keyword unknown to that driver, named together */
    size_t n_unknown = 0;
    for (size_t i = 0; i < p->n; i++) {
        const attr *a = &p->a[i];
        if (a->kw && (a->kw->flags & (mask | F_OWN)))
            continue;
        if (n_unknown++) mcdc_buf_puts(&unknown, ", ");
        mcdc_buf_puts(&unknown, a->key);
    }
    bool has_cafile = false;
    for (size_t i = 0; i < p->n; i++)
        if (p->a[i].kw && p->a[i].kw->kind == K_CAFILE) has_cafile = true;
    if (n_unknown) {
        mcdc_error_set(MCDC_EINVAL, "connection string '%s': unknown keyword%s for %s: %s", masked,
                       n_unknown == 1 ? "" : "s", c->is_freetds ? "FreeTDS's driver" : "Microsoft's driver", unknown.ptr);
        if (!c->is_freetds && has_cafile)
            mcdc_error_hint("Microsoft's driver checks the server certificate against the system's trust store: "
                            "install the CA there (or pin it with ServerCertificate=) instead of CAFile=");
        else if (!c->is_freetds)
            mcdc_error_hint("Microsoft's keywords: Server=HOST,PORT;Database=;UID=;PWD=;Encrypt=;TrustServerCertificate= "
                            "(see docs/guides/sqlserver.md)");
        else
            mcdc_error_hint("FreeTDS ignores keywords it does not know, so mssql-cdc refuses them; the keywords are listed "
                            "in docs/guides/sqlserver.md");
        mcdc_buf_dispose(&unknown);
        return MCDC_EINVAL;
    }
    mcdc_buf_dispose(&unknown);
    /* two spellings of one setting (Server and Address, ...) */
    for (size_t i = 0; i < p->n; i++) {
        const attr *a = &p->a[i];
        if (a->kw->kind == K_PASS) continue;
        if (by[a->kw->kind])
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': %s and %s name the same setting", masked,
                                  by[a->kw->kind]->key, a->key),
                   mcdc_error_hint("give each setting once");
        by[a->kw->kind] = a;
    }
    if (by[K_DSN])
        return mcdc_error_set(MCDC_EINVAL, "connection string '%s': DSN= is not supported", masked),
               mcdc_error_hint("name the server in the string itself: Server=HOST;Port=1433;Database=DB;UID=USER;PWD=...");

    /* mssql-cdc's own settings */
    int64_t v;
    c->connect_timeout_s = 30;
    c->query_timeout_s = 300;
    c->lock_timeout_ms = -1;
    c->isolation = MCDC_MSSQL_ISO_READ_COMMITTED;
    c->page_rows = 10000;
    if (by[K_PAGE_ROWS]) {
        if ((rc = parse_int(&v, by[K_PAGE_ROWS], 1, 10000000, masked)) < 0) return rc;
        c->page_rows = v;
    }
    if (by[K_CONNECT_TIMEOUT]) {
        if ((rc = parse_int(&v, by[K_CONNECT_TIMEOUT], 0, 3600, masked)) < 0) return rc;
        c->connect_timeout_s = (int)v;
    }
    if (by[K_QUERY_TIMEOUT]) {
        if ((rc = parse_int(&v, by[K_QUERY_TIMEOUT], 0, 86400, masked)) < 0) return rc;
        c->query_timeout_s = (int)v;
    }
    if (by[K_LOCK_TIMEOUT]) {
        if ((rc = parse_int(&v, by[K_LOCK_TIMEOUT], 0, INT32_MAX, masked)) < 0) return rc;
        c->lock_timeout_ms = v;
    }
    if (by[K_ISOLATION]) {
        const char *iso = by[K_ISOLATION]->value;
        c->isolation_given = true;
        if (!strcasecmp(iso, "readCommitted"))
            c->isolation = MCDC_MSSQL_ISO_READ_COMMITTED;
        else if (!strcasecmp(iso, "snapshot"))
            c->isolation = MCDC_MSSQL_ISO_SNAPSHOT;
        else
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': isolationLevel=%s: expected readCommitted or snapshot",
                                  masked, iso),
                   mcdc_error_hint("NOLOCK reads are never used: they can miss or double rows");
    }
    if (by[K_RECORD]) {
        const char *dir = by[K_RECORD]->value;
        struct stat st;
        if (!c->is_freetds)
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': record= needs FreeTDS's driver", masked),
                   mcdc_error_hint("leave Driver= out (FreeTDS's is used) to record a transcript");
        if (by[K_DUMPFILE])
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': record= and DumpFile= both use FreeTDS's dump", masked),
                   mcdc_error_hint("give one of them");
        if (!dir[0] || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0)
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': record=%s: not a writable directory", masked, dir),
                   mcdc_error_hint("create the directory first (mkdir -p %s)", dir);
        char dump[4096];
        snprintf(dump, sizeof dump, "%s/.freetds-%ld.dump", dir, (long)getpid());
        if (!(c->record_dir = strdup(dir)) || !(c->record_dump = strdup(dump)))
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    c->time_zone = strdup(by[K_TIME_ZONE] && by[K_TIME_ZONE]->value[0] ? by[K_TIME_ZONE]->value : "auto");
    c->user = strdup(by[K_UID] ? by[K_UID]->value : "");
    c->database = strdup(by[K_DATABASE] ? by[K_DATABASE]->value : "");
    c->server = strdup(by[K_SERVER] ? by[K_SERVER]->value : by[K_SERVERNAME] ? by[K_SERVERNAME]->value : "");
    c->driver = strdup(driver);
    if (!c->time_zone || !c->user || !c->database || !c->server || !c->driver)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");

    /* encryption (K3) */
    bool trust = false;
    if (by[K_TRUST] && (rc = parse_yes_no(&trust, by[K_TRUST], masked)) < 0) return rc;
    const char *encryption = NULL; /* FreeTDS's value */
    if (c->is_freetds) {
        if (by[K_ENCRYPT] && by[K_ENCRYPTION])
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': Encrypt= and Encryption= name the same setting", masked),
                   mcdc_error_hint("give one: Encrypt=yes|no (Microsoft's spelling) or Encryption=require|request|off (FreeTDS's)");
        if (by[K_ENCRYPT] && (rc = translate_encrypt(&encryption, by[K_ENCRYPT], masked)) < 0) return rc;
        if (by[K_ENCRYPTION]) {
            encryption = by[K_ENCRYPTION]->value;
            if (strcasecmp(encryption, "off") && strcasecmp(encryption, "request") && strcasecmp(encryption, "require"))
                return mcdc_error_set(MCDC_EINVAL, "connection string '%s': Encryption=%s: expected off, request or require",
                                      masked, encryption);
        }
        if (by[K_CAFILE]) {
            if (access(by[K_CAFILE]->value, R_OK) != 0)
                return mcdc_error_set(MCDC_EINVAL, "connection string '%s': CAFile=%s cannot be read", masked,
                                      by[K_CAFILE]->value),
                       mcdc_error_hint("CAFile names a PEM file with the certificate of the CA that signed the server's");
            if (!by[K_SERVER])
                return mcdc_error_set(MCDC_EINVAL, "connection string '%s': CAFile= needs Server=", masked);
            if (!(c->ca_file = strdup(by[K_CAFILE]->value)))
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            if (!encryption)
                encryption = "require";
        }
        if (encryption && !strcasecmp(encryption, "require") && !c->ca_file && !trust)
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': encryption without CAFile= would not check the "
                                  "server's certificate", masked),
                   mcdc_error_hint("add CAFile=/path/to/ca.pem (the CA that signed the server's certificate), or say "
                                   "TrustServerCertificate=yes to accept any certificate");
        if (by[K_CHARSET] && strcasecmp(by[K_CHARSET]->value, "UTF-8") && strcasecmp(by[K_CHARSET]->value, "UTF8"))
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': ClientCharset=%s: mssql-cdc reads text as UTF-8", masked,
                                  by[K_CHARSET]->value),
                   mcdc_error_hint("leave ClientCharset out (UTF-8 is used)");
        if (by[K_TDS_VERSION] && !strncmp(by[K_TDS_VERSION]->value, "8", 1))
            return mcdc_error_set(MCDC_EINVAL, "connection string '%s': TDS_Version=%s: FreeTDS 1.3 has no TDS 8.0", masked,
                                  by[K_TDS_VERSION]->value),
                   mcdc_error_hint("use TDS_Version=7.4 (the default)");
    }

    /* the driver's string: Driver first, then the rest as given, defaults last (K4) */
    mcdc_buf s = MCDC_BUF_INIT(MAX_CONN_LEN);
    rc = put_attr(&s, "Driver", driver, false);
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        const attr *a = &p->a[i];
        switch (a->kw->kind) {
        case K_DRIVER:
            break;
        case K_CONNECT_TIMEOUT: case K_QUERY_TIMEOUT: case K_LOCK_TIMEOUT: case K_ISOLATION: case K_PAGE_ROWS:
        case K_TIME_ZONE: case K_RECORD:
            break;
        case K_ENCRYPT:
        case K_ENCRYPTION:
            if (c->is_freetds)
                rc = put_attr(&s, "Encryption", encryption, true);
            else
                rc = put_attr(&s, a->key, a->value, false);
            break;
        case K_TRUST:
            if (!c->is_freetds) rc = put_attr(&s, a->key, a->value, false);
            break; /* FreeTDS has no such keyword: without CAFile it checks nothing anyway */
        case K_CAFILE:
            break; /* written into the private freetds.conf at connect time */
        case K_SERVER:
            if (c->is_freetds) {
                /* Microsoft's "tcp:host,port" becomes FreeTDS's Server=host;Port=port */
                const char *h = a->value;
                if (!strncasecmp(h, "tcp:", 4)) h += 4;
                const char *comma = strchr(h, ',');
                char *host = strndup(h, comma ? (size_t)(comma - h) : strlen(h));
                if (!host) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
                if (comma && by[K_PORT]) {
                    free(host);
                    rc = mcdc_error_set(MCDC_EINVAL, "connection string '%s': Server=%s and Port= both give the port",
                                        masked, a->value);
                    break;
                }
                if (c->ca_file) {
                    c->host = host; /* goes into the freetds.conf section instead */
                } else {
                    rc = put_attr(&s, "Server", host, true);
                    free(host);
                }
                if (rc == 0 && comma) rc = put_attr(&s, "Port", comma + 1, true);
            } else {
                rc = put_attr(&s, a->key, a->value, false);
            }
            break;
        default:
            rc = put_attr(&s, a->key, a->value, c->is_freetds);
            break;
        }
    }
    if (rc == 0 && c->is_freetds) {
        if (!by[K_TDS_VERSION]) rc = put_attr(&s, "TDS_Version", "7.4", true);
        if (rc == 0 && !by[K_CHARSET]) rc = put_attr(&s, "ClientCharset", "UTF-8", true);
        if (rc == 0 && encryption && !by[K_ENCRYPT] && !by[K_ENCRYPTION]) rc = put_attr(&s, "Encryption", encryption, true);
        /* record=: FreeTDS's packet dump (network only: no connection string, and the login
         * packet is never dumped), turned into the transcript by the source */
        if (rc == 0 && c->record_dump) rc = put_attr(&s, "DumpFile", c->record_dump, true);
        if (rc == 0 && c->record_dump) rc = put_attr(&s, "DebugFlags", "16", true);
    }
    if (rc < 0) {
        mcdc_buf_dispose(&s);
        return rc;
    }
    c->odbc = mcdc_buf_detach(&s);
    return c->odbc ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

int mcdc_mssql_conn_parse(mcdc_mssql_conn *out, const char *text, const char *freetds_driver)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return mcdc_error_set(MCDC_EINVAL, "source 'odbc:' has no connection string"),
               mcdc_error_hint("e.g. odbc:Server=db.example.com;Database=shop;UID=cdc_reader;PWD=...");
    if (strlen(text) > MAX_CONN_LEN)
        return mcdc_error_set(MCDC_EINVAL, "connection string longer than %d bytes", MAX_CONN_LEN);
    mcdc_buf m = MCDC_BUF_INIT(2 * MAX_CONN_LEN);
    if (mcdc_secret_mask(&m, text) < 0 || !(out->masked = m.ptr ? mcdc_buf_detach(&m) : strdup("")))
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    parsed p = { .n = 0 };
    int rc = split(&p, text, out->masked);
    if (rc == 0)
        rc = build(out, &p, out->masked, freetds_driver);
    parsed_free(&p);
    if (rc < 0) {
        mcdc_error saved = *mcdc_error_last();
        mcdc_mssql_conn_free(out);
        mcdc_error_restore(&saved);
    }
    return rc;
}

void mcdc_mssql_conn_free(mcdc_mssql_conn *c)
{
    if (!c) return;
    if (c->odbc) {
        explicit_bzero(c->odbc, strlen(c->odbc));
        free(c->odbc);
    }
    free(c->masked);
    free(c->user);
    free(c->server);
    free(c->database);
    free(c->driver);
    free(c->ca_file);
    free(c->host);
    free(c->time_zone);
    free(c->record_dir);
    free(c->record_dump);
    memset(c, 0, sizeof *c);
}
