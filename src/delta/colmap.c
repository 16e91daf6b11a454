/*
 * delta/colmap.c: column mapping ('name' mode) for the tables this library writes.
 *
 * Delta engines (Spark among them) refuse column names holding a space or one of ,;{}()=
 * newline or tab in Parquet files, and SQL Server has them often ("Order Date"). A table
 * created with such a name gets column mapping in name mode (PROTOCOL.md "Column
 * Mapping"): every field carries delta.columnMapping.id and .physicalName, the
 * configuration delta.columnMapping.mode = name and maxColumnId, the protocol the
 * columnMapping feature; data files name their columns by physical name and carry the
 * ids as Parquet field ids; stats are keyed by physical name.
 *
 * Physical names are a function of the logical name ("col-" and a UUID-shaped text of
 * SHA-256 over it), not random: a stream writes its first data file before it creates the
 * table, and the file and the table must agree. Ids are the column's position at creation
 * (1..n) and maxColumnId + k for the k-th column added later. A table that exists is
 * always asked first: its own mapping (written by any engine) wins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>

#include "delta/internal.h"

bool mcdc_delta_name_needs_mapping(const char *name)
{
    return strpbrk(name, " ,;{}()\n\t=") != NULL;
}

bool mcdc_delta__schema_needs_mapping(const mcdc_schema *s)
{
    for (size_t i = 0; i < s->n_cols; i++)
        if (mcdc_delta_name_needs_mapping(s->cols[i].name))
            return true;
    return false;
}

void mcdc_delta__physical_name(char out[48], const char *logical)
{
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_SIZE];
    static const char tag[] = "mssql-cdc column mapping:";
    sha256_init(&c);
    sha256_update(&c, sizeof tag - 1, (const uint8_t *)tag);
    sha256_update(&c, strlen(logical), (const uint8_t *)logical);
    sha256_digest(&c, sizeof d, d);
    snprintf(out, 48, "col-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", d[0],
             d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]);
}

int mcdc_delta_physical_schema(mcdc_schema **out, int32_t **ids, const char *table_path,
                               const mcdc_schema *logical)
{
    *out = NULL;
    *ids = NULL;
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, table_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        rc = 0;
    }
    if (rc < 0)
        return rc;
    bool mapped = snap ? snap->column_mapping != MCDC_DELTA_CM_NONE
                       : mcdc_delta__schema_needs_mapping(logical);
    mcdc_schema *phys = mcdc_schema_new();
    int32_t *fid = mapped ? calloc(logical->n_cols + 1, sizeof *fid) : NULL;
    if (!phys || (mapped && !fid)) {
        rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", table_path);
        goto done;
    }
    int64_t next_id = 0; /* ids of columns the table does not have yet */
    if (snap && mapped) {
        next_id = atoll(mcdc_delta_snapshot_config(snap, "delta.columnMapping.maxColumnId", "0"));
        for (size_t i = 0; i < snap->schema->n_fields; i++)
            if (snap->schema->fields[i].field_id > next_id)
                next_id = snap->schema->fields[i].field_id;
    }
    for (size_t i = 0; rc == 0 && i < logical->n_cols; i++) {
        const mcdc_column *c = &logical->cols[i];
        const char *name = c->name;
        char pn[48];
        if (mapped) {
            int at = snap ? mcdc_delta_schema_find(snap->schema, c->name) : -1;
            if (at >= 0) {
                name = snap->schema->fields[at].physical_name;
                fid[i] = (int32_t)snap->schema->fields[at].field_id;
            } else {
                mcdc_delta__physical_name(pn, c->name);
                name = pn;
                fid[i] = (int32_t)(snap ? ++next_id : (int64_t)i + 1);
            }
        }
        rc = mcdc_schema_add(phys, name, c->type, c->precision, c->scale, c->nullable);
    }
done:
    mcdc_delta_snapshot_free(snap);
    if (rc < 0) {
        mcdc_schema_free(phys);
        free(fid);
        return rc;
    }
    *out = phys;
    *ids = fid;
    return 0;
}

int mcdc_delta__schema_json_mapped(mcdc_buf *b, const mcdc_schema *flat)
{
    char name[48], pn[48];
    int rc = mcdc_buf_puts(b, "{\"type\":\"struct\",\"fields\":[");
    for (size_t i = 0; rc == 0 && i < flat->n_cols; i++) {
        const mcdc_column *c = &flat->cols[i];
        mcdc_delta__physical_name(pn, c->name);
        rc = mcdc_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        if (!rc)
            rc = mcdc_json_quote(b, c->name, strlen(c->name));
        if (!rc)
            rc = mcdc_buf_printf(b, ",\"type\":\"%s\",\"nullable\":%s,\"metadata\":{"
                                 "\"delta.columnMapping.id\":%zu,"
                                 "\"delta.columnMapping.physicalName\":\"%s\"}}",
                                 mcdc_type_name(name, sizeof name, c), c->nullable ? "true" : "false",
                                 i + 1, pn);
    }
    return rc ? rc : mcdc_buf_puts(b, "]}");
}
