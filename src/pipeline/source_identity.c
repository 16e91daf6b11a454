/*
 * pipeline/source_identity.c: the source a bronze table holds (architecture §3 invariant 10,
 * docs/decisions/0039-source-identity.md).
 *
 * A stream records its source's identity (server, database, database_guid: never a password
 * or a connection string) in bronze's configuration when it creates bronze, and refuses,
 * before it writes anything, a bronze whose recorded identity is another database's: LSNs of
 * two databases are unrelated, so one bronze or one consistent cut must never mix them. A
 * bronze written before identities were recorded is accepted and stamped by the first stream
 * that writes it (the owner's rule O2). A source that cannot tell its identity (ops->identity
 * NULL or MCDC_EUNSUPPORTED) records and checks nothing.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "pipeline/stream_int.h"

#define KEY_SERVER   "mcdc.source.server"
#define KEY_DATABASE "mcdc.source.database"
#define KEY_GUID     "mcdc.source.database_guid"

void mcdc_bronze_source_identity(const mcdc_delta_snapshot *snap, mcdc_source_identity *out,
                                 bool *recorded)
{
    memset(out, 0, sizeof *out);
    const char *srv = mcdc_delta_snapshot_config(snap, KEY_SERVER, NULL);
    const char *db = mcdc_delta_snapshot_config(snap, KEY_DATABASE, NULL);
    const char *guid = mcdc_delta_snapshot_config(snap, KEY_GUID, NULL);
    *recorded = srv || db || guid;
    snprintf(out->server, sizeof out->server, "%s", srv ? srv : "");
    snprintf(out->database, sizeof out->database, "%s", db ? db : "");
    snprintf(out->database_guid, sizeof out->database_guid, "%s", guid ? guid : "");
}

bool mcdc_source_identity_same(const mcdc_source_identity *a, const mcdc_source_identity *b)
{
    if (a->database_guid[0] && b->database_guid[0])
        return strcasecmp(a->database_guid, b->database_guid) == 0;
    return strcasecmp(a->server, b->server) == 0 && strcasecmp(a->database, b->database) == 0;
}

char *mcdc_source_identity_text(char *out, size_t cap, const mcdc_source_identity *id)
{
    snprintf(out, cap, "server %s, database %s%s%s%s", id->server[0] ? id->server : "(unknown)",
             id->database[0] ? id->database : "(unknown)", id->database_guid[0] ? " (database_guid " : "",
             id->database_guid, id->database_guid[0] ? ")" : "");
    return out;
}

int mcdc_stream__read_identity(mcdc_stream *s)
{
    if (s->identity_read)
        return 0;
    mcdc_source *src = s->o.source;
    s->has_identity = false;
    if (src->ops->identity) {
        int rc = src->ops->identity(src, &s->identity);
        if (rc == MCDC_EUNSUPPORTED)
            mcdc_error_clear();
        else if (rc < 0)
            return rc;
        else
            s->has_identity = s->identity.server[0] || s->identity.database[0] || s->identity.database_guid[0];
    }
    s->identity_read = true;
    return 0;
}

int mcdc_stream__check_identity(mcdc_stream *s, const mcdc_delta_snapshot *snap)
{
    if (!s->has_identity)
        return 0;
    mcdc_source_identity rec;
    bool recorded = false;
    mcdc_bronze_source_identity(snap, &rec, &recorded);
    if (!recorded) {
        s->own_record = true; /* written before identities: stamp it (O2) */
        return 0;
    }
    if (mcdc_source_identity_same(&rec, &s->identity))
        return 0;
    char a[700], b[700];
    mcdc_error_set(MCDC_EINVAL, "--target %s: holds the changes of %s, not of this source (%s)",
                   s->o.target, mcdc_source_identity_text(a, sizeof a, &rec),
                   mcdc_source_identity_text(b, sizeof b, &s->identity));
    return mcdc_error_hint("one bronze per source database table: give this stream a --target of "
                           "its own (a new name creates it), or check --source names the database "
                           "the table was streamed from");
}

int mcdc_stream__identity_config(mcdc_delta_map *m, const mcdc_stream *s)
{
    if (!s->has_identity)
        return 0;
    int rc = 0;
    if (s->identity.server[0])
        rc = mcdc_delta_map_set(m, KEY_SERVER, s->identity.server);
    if (rc == 0 && s->identity.database[0])
        rc = mcdc_delta_map_set(m, KEY_DATABASE, s->identity.database);
    if (rc == 0 && s->identity.database_guid[0])
        rc = mcdc_delta_map_set(m, KEY_GUID, s->identity.database_guid);
    return rc;
}
