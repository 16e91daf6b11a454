/*
 * core/warehouse.c: table names to directories (see mcdc/warehouse.h).
 *
 * Guarantee: a dotted name always resolves to a directory strictly inside the
 * warehouse: each part is non-empty, contains no '/' (else it is a path), no '\' and
 * no control character, so no part can be "..", "." or absolute. An "s3://bucket/prefix"
 * location (table or warehouse) is an object store location: its bucket is checked here,
 * and mcdc_storage_check finds the credentials and probes the store before anything is
 * written. Any other URI scheme ("abfss://", "file://") is refused, table or warehouse: it
 * would otherwise become a local directory named "abfss:".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/secret.h"
#include "mcdc/storage.h"
#include "mcdc/warehouse.h"

#define HINT "write a table as schema.table (e.g. bronze.orders, stored under the warehouse) or as a path " \
             "containing '/' (e.g. ./lake/bronze/orders)"

const char *mcdc_warehouse_dir(const char *flag_value)
{
    if (flag_value)
        return flag_value;
    const char *env = getenv("MSSQL_CDC_WAREHOUSE");
    return env && *env ? env : "./lake";
}

bool mcdc_warehouse_is_path(const char *name)
{
    return name && strchr(name, '/') != NULL;
}

static int bad(const char *name, const char *why)
{
    mcdc_error_set(MCDC_EINVAL, "bad table name '%s': %s", name, why);
    return mcdc_error_hint(HINT);
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

bool mcdc_warehouse_is_uri(const char *location)
{
    /* RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then "://" */
    const char *p = location;
    if (!p || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        return false;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    return strncmp(p, "://", 3) == 0;
}

/* Refuse a URI location: @p what is "table" or "warehouse". */
static int refuse_uri(const char *what, const char *location)
{
    char shown[256];
    mcdc_secret_mask_str(shown, sizeof shown, location);
    size_t n = strcspn(location, ":");
    mcdc_error_set(MCDC_EUNSUPPORTED, "%s location '%s': object storage (%.*s://) is not "
                   "supported yet; only s3:// and local directories are", what, shown, (int)(n < 32 ? n : 32),
                   location);
    return mcdc_error_hint("give a local directory: a path containing '/' (e.g. ./lake/bronze/orders), "
                           "or a dotted name under a local --warehouse DIR or --warehouse s3://BUCKET/PREFIX");
}

/* An s3:// location: "s3://" then a bucket name (3-63 of a-z 0-9 . -), then "/key" or nothing. */
static int check_s3(const char *what, const char *location)
{
    const char *b = location + 5;
    size_t n = strcspn(b, "/");
    bool ok = n >= 3 && n <= 63;
    for (size_t i = 0; ok && i < n; i++)
        ok = (b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '-' || b[i] == '.';
    if (!ok) {
        char shown[256];
        mcdc_secret_mask_str(shown, sizeof shown, location);
        mcdc_error_set(MCDC_EINVAL, "%s location '%s': not s3://BUCKET/PREFIX (a bucket name is 3 to 63 "
                       "lower-case letters, digits, '.' and '-')", what, shown);
        return mcdc_error_hint("write s3://BUCKET/PREFIX, e.g. s3://my-lake/warehouse; credentials come from "
                               "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or ~/.aws/credentials, never the URL");
    }
    return 0;
}

/* A location's scheme is allowed (none, or s3:// with a good bucket). */
static int check_scheme(const char *what, const char *location)
{
    if (!mcdc_warehouse_is_uri(location))
        return 0;
    if (strncmp(location, "s3://", 5) == 0)
        return check_s3(what, location);
    return refuse_uri(what, location);
}

int mcdc_warehouse_resolve(char out[MCDC_PATH_MAX], const char *warehouse, const char *name)
{
    out[0] = '\0';
    if (!name || !*name)
        return bad("", "empty");
    if (has_control(name)) {
        mcdc_error_set(MCDC_EINVAL, "bad table name: contains a control character");
        return mcdc_error_hint(HINT);
    }
    int rc = check_scheme("table", name);
    if (rc < 0)
        return rc;
    if (mcdc_warehouse_is_path(name)) {
        size_t n = strlen(name);
        if (n >= MCDC_PATH_MAX)
            return bad(name, "path too long");
        memcpy(out, name, n + 1);
        while (n > 1 && out[n - 1] == '/')
            out[--n] = '\0';
        return mcdc_storage_check(out);
    }
    if (strchr(name, '\\'))
        return bad(name, "'\\' is not allowed in a table name");
    if (name[0] == '.' || name[strlen(name) - 1] == '.' || strstr(name, ".."))
        return bad(name, "empty part (a leading, trailing or doubled '.'); '..' may not leave the warehouse");
    if (!warehouse || !*warehouse) {
        mcdc_error_set(MCDC_EINVAL, "bad warehouse: empty directory");
        return mcdc_error_hint("give --warehouse DIR or set MSSQL_CDC_WAREHOUSE");
    }
    if ((rc = check_scheme("warehouse", warehouse)) < 0)
        return rc;
    size_t wl = strlen(warehouse);
    while (wl > 1 && warehouse[wl - 1] == '/')
        wl--;
    if (wl == 1 && warehouse[0] == '/')
        wl = 0; /* the root: "/a/b", not "//a/b" */
    int n = snprintf(out, MCDC_PATH_MAX, "%.*s/%s", (int)wl, warehouse, name);
    if (n < 0 || n >= MCDC_PATH_MAX) {
        out[0] = '\0';
        return bad(name, "the resolved path is too long");
    }
    for (char *p = out + wl + 1; *p; p++)
        if (*p == '.')
            *p = '/';
    return mcdc_storage_check(out);
}
