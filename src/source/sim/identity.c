/*
 * source/sim/identity.c: the simulated database's identity, as SQL Server's
 * sys.database_recovery_status.database_guid gives it (docs/decisions/0039-source-identity.md).
 *
 * Guarantees: a database made by `sim init` gets a random GUID then, kept in sim_identity, so
 * two simulator files are two databases even when their names agree. A file made before
 * sim_identity existed reports a GUID derived from what never changes in it (its name, time
 * zone, first table and first transaction), the same on every open; the first open for writing
 * stores that same value, so the identity never changes under a stream.
 */
#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>

#include "source/sim/sim_int.h"

static void format_guid(const unsigned char r[16], char out[37])
{
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
             r[13], r[14], r[15]);
}

/* The stable GUID of a file without sim_identity: SHA-256 of its unchanging facts. */
static void derive_guid(mcdc_sim *s, char out[37])
{
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, 14, (const uint8_t *)"mssql-cdc-sim:");
    sha256_update(&h, strlen(s->st.db_name) + 1, (const uint8_t *)s->st.db_name);
    sha256_update(&h, strlen(s->st.time_zone) + 1, (const uint8_t *)s->st.time_zone);
    static const char *const facts[] = {
        "SELECT schema_name || '.' || table_name || ':' || created_us FROM sim_tables ORDER BY id LIMIT 1",
        "SELECT hex(lsn) || ':' || end_time FROM sim_tx ORDER BY lsn LIMIT 1",
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(s->db, facts[i], -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
            sqlite3_column_text(st, 0)) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            sha256_update(&h, (size_t)sqlite3_column_bytes(st, 0), t);
        }
        sha256_update(&h, 1, (const uint8_t *)"|");
        sqlite3_finalize(st);
    }
    unsigned char d[SHA256_DIGEST_SIZE];
    sha256_digest(&h, sizeof d, d);
    d[6] = (unsigned char)((d[6] & 0x0f) | 0x80); /* version 8: a name-based GUID */
    d[8] = (unsigned char)((d[8] & 0x3f) | 0x80);
    format_guid(d, out);
}

int sim__identity_load(mcdc_sim *s)
{
    s->st.database_guid[0] = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT database_guid FROM sim_identity WHERE id = 1", -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) == 36)
        snprintf(s->st.database_guid, sizeof s->st.database_guid, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!s->st.database_guid[0])
        derive_guid(s, s->st.database_guid);
    return 0;
}

int sim__identity_store(mcdc_sim *s, bool fresh)
{
    char guid[37];
    if (fresh) {
        unsigned char r[16];
        sqlite3_randomness(sizeof r, r);
        r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
        r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
        format_guid(r, guid);
    } else {
        snprintf(guid, sizeof guid, "%s", s->st.database_guid);
    }
    int rc = sim__exec_sql(s, "CREATE TABLE IF NOT EXISTS sim_identity(id INTEGER PRIMARY KEY CHECK (id = 1),"
                              " database_guid TEXT NOT NULL)");
    if (rc < 0) return rc;
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(s->db, "INSERT INTO sim_identity VALUES(1, ?) ON CONFLICT(id) DO NOTHING", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "recording the database GUID");
    sqlite3_bind_text(st, 1, guid, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sim__sqlite_error(s, rc, "recording the database GUID");
    return sim__identity_load(s);
}
