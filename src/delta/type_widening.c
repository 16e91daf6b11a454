/*
 * delta/type_widening.c: what a writer of changing source schemas needs beside
 * evolve.c: letting a table widen (delta.enableTypeWidening with the typeWidening
 * feature, one commit; deletion vectors are turned on the same way, by
 * delta.enableDeletionVectors with the deletionVectors feature, and V2 checkpoints by
 * delta.checkpointPolicy=v2 with the v2Checkpoint feature), and an append that evolves the table to the flat schema its files
 * were written with (the change computed against the table, then made by evolve.c in the
 * append's own commit).
 *
 * Enabling is the user's decision (`mssql-cdc table set-property`): a table with the
 * feature is unreadable to engines without it, so no writer here sets it by itself; the
 * one exception is silver, which follows a bronze the user enabled. Nothing is written
 * when the table has both already. Design: PROTOCOL.md "Type Widening";
 * docs/decisions/0024-schema-changes-in-the-plan.md.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "delta/internal.h"

bool mcdc_delta_type_same(const mcdc_column *a, const mcdc_column *b)
{
    return a->type == b->type && (a->type != MCDC_TYPE_DECIMAL ||
                                  (a->precision == b->precision && a->scale == b->scale));
}

/* A reader-writer table feature and the property that turns it on. */
typedef struct feature_on {
    const char *feature, *preview, *property, *value; /* value: "true" when NULL */
} feature_on;

static int build_enable(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n_out,
                        void *payload)
{
    const feature_on *fo = payload;
    const char *value = fo->value ? fo->value : "true";
    *out = NULL;
    *n_out = 0;
    bool on = strcasecmp(mcdc_delta_snapshot_config(snap, fo->property, "false"), value) == 0;
    bool feature = mcdc_delta__supports_feature(&snap->protocol, fo->feature, fo->preview);
    if (on && feature)
        return 0;
    mcdc_delta_action *a = calloc(2, sizeof *a);
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    size_t n = 0;
    int rc = 0;
    if (!feature) {
        a[n].kind = MCDC_DELTA_ACTION_PROTOCOL;
        if ((rc = mcdc_delta__protocol_with(&a[n].u.protocol, &snap->protocol, fo->feature,
                                            true)) == 0)
            n++;
        else
            a[n].kind = MCDC_DELTA_ACTION_UNKNOWN;
    }
    if (rc == 0 && !on) {
        /* a copy of the current metaData with the property set, by its JSON */
        mcdc_delta_map conf = { NULL, 0 };
        const mcdc_delta_map *have = &snap->metadata.configuration;
        for (size_t i = 0; rc == 0 && i < have->n; i++)
            if (strcmp(have->kv[i].key, fo->property) != 0)
                rc = mcdc_delta_map_set(&conf, have->kv[i].key, have->kv[i].value);
        if (rc == 0)
            rc = mcdc_delta_map_set(&conf, fo->property, value);
        mcdc_buf tmp = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
        mcdc_delta_action cur = { .kind = MCDC_DELTA_ACTION_METADATA };
        cur.u.metadata = snap->metadata;
        cur.u.metadata.configuration = conf;
        if (rc == 0)
            rc = mcdc_delta_action_to_json(&tmp, &cur);
        if (rc == 0 && (rc = mcdc_delta_action_parse(&a[n], tmp.ptr, tmp.len)) == 0)
            n++;
        mcdc_buf_dispose(&tmp);
        mcdc_delta_map_clear(&conf);
    }
    *out = a;
    *n_out = n;
    return rc;
}

int mcdc_delta_enable_type_widening(const char *path, mcdc_delta_commit_result *result)
{
    MCDC_ASSERT_ARG(path);
    feature_on fo = { "typeWidening", "typeWidening-preview", "delta.enableTypeWidening", NULL };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "SET TBLPROPERTIES";
    o.operation_parameters = "{\"properties\":\"{\\\"delta.enableTypeWidening\\\":\\\"true\\\"}\"}";
    return mcdc_delta_commit(path, build_enable, &fo, &o, result);
}

int mcdc_delta_enable_deletion_vectors(const char *path, mcdc_delta_commit_result *result)
{
    MCDC_ASSERT_ARG(path);
    feature_on fo = { "deletionVectors", NULL, "delta.enableDeletionVectors", NULL };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "SET TBLPROPERTIES";
    o.operation_parameters = "{\"properties\":\"{\\\"delta.enableDeletionVectors\\\":\\\"true\\\"}\"}";
    return mcdc_delta_commit(path, build_enable, &fo, &o, result);
}

int mcdc_delta_enable_v2_checkpoints(const char *path, mcdc_delta_commit_result *result)
{
    MCDC_ASSERT_ARG(path);
    feature_on fo = { "v2Checkpoint", NULL, "delta.checkpointPolicy", "v2" };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "SET TBLPROPERTIES";
    o.operation_parameters = "{\"properties\":\"{\\\"delta.checkpointPolicy\\\":\\\"v2\\\"}\"}";
    return mcdc_delta_commit(path, build_enable, &fo, &o, result);
}

int mcdc_delta_append_evolving(const char *path, const mcdc_delta_file *files, size_t n_files,
                               const mcdc_schema *schema, const mcdc_delta_commit_options *opts,
                               mcdc_delta_commit_result *result)
{
    MCDC_ASSERT_ARG(path && schema);
    mcdc_delta_snapshot *snap = NULL;
    mcdc_schema *have = NULL, *add = mcdc_schema_new(), *widen = mcdc_schema_new();
    int rc = add && widen ? mcdc_delta_snapshot_open(&snap, path, -1)
                          : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc == 0)
        rc = mcdc_delta_schema_to_flat(&have, snap->schema);
    for (size_t i = 0; rc == 0 && i < schema->n_cols; i++) {
        const mcdc_column *c = &schema->cols[i];
        int k = mcdc_schema_find(have, c->name);
        if (k < 0)
            rc = mcdc_schema_add(add, c->name, c->type, c->precision, c->scale, true);
        else if (!mcdc_delta_type_same(&have->cols[k], c))
            rc = mcdc_schema_add(widen, have->cols[k].name, c->type, c->precision, c->scale,
                                 true);
    }
    if (rc == 0) {
        mcdc_delta_evolution ev = MCDC_DELTA_EVOLUTION_INIT;
        ev.add = add->n_cols ? add : NULL;
        ev.widen = widen->n_cols ? widen : NULL;
        mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        if (opts)
            o = *opts;
        if (ev.add || ev.widen)
            o.evolve = &ev;
        mcdc_schema *planned = NULL;
        if (o.evolve && (rc = mcdc_delta_evolve_plan(&planned, snap, &ev)) < 0)
            goto done;
        mcdc_schema_free(planned);
        rc = mcdc_delta_append(path, files, n_files, &o, result);
    }
done:
    mcdc_delta_snapshot_free(snap);
    mcdc_schema_free(have);
    mcdc_schema_free(add);
    mcdc_schema_free(widen);
    return rc;
}
