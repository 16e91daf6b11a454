/*
 * delta/configure.c: change a table's configuration (metaData.configuration) by a
 * metaData commit, optionally guarded by the value one key must have.
 *
 * The new metaData is a copy of the snapshot's (id, schema, partitioning, created time)
 * with the given keys set or removed, rebuilt from each attempt's snapshot, so a
 * concurrent change of another key is kept. A metaData commit conflicts with every
 * concurrent commit (delta/commit.c): writers that raced it retry from the new snapshot
 * and see the new configuration. Nothing is written when nothing changes.
 * Design: PROTOCOL.md "Change Metadata"; docs/decisions/0007-table-kind-and-owner.md.
 */
#include <stdlib.h>
#include <string.h>

#include "delta/internal.h"

typedef struct config_ctx {
    const mcdc_delta_map *set;
} config_ctx;

static bool same_value(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int build_config(const mcdc_delta_snapshot *snap, mcdc_delta_action **out,
                        size_t *n_out, void *payload)
{
    config_ctx *c = payload;
    *out = NULL;
    *n_out = 0;
    const mcdc_delta_map *have = &snap->metadata.configuration;
    bool changed = false;
    for (size_t i = 0; i < c->set->n; i++) {
        bool found = false;
        const char *v = mcdc_delta_map_get(have, c->set->kv[i].key, &found);
        changed |= c->set->kv[i].value ? !found || !same_value(v, c->set->kv[i].value) : found;
    }
    if (!changed)
        return 0;
    mcdc_delta_map conf = { NULL, 0 };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < have->n; i++) {
        bool found = false;
        mcdc_delta_map_get(c->set, have->kv[i].key, &found);
        if (!found)
            rc = mcdc_delta_map_set(&conf, have->kv[i].key, have->kv[i].value);
    }
    for (size_t i = 0; rc == 0 && i < c->set->n; i++)
        if (c->set->kv[i].value)
            rc = mcdc_delta_map_set(&conf, c->set->kv[i].key, c->set->kv[i].value);
    mcdc_delta_action *a = rc == 0 ? calloc(1, sizeof *a) : NULL;
    if (rc == 0 && !a)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc == 0) {
        /* a copy of the current metadata with the new configuration, by its JSON */
        mcdc_buf tmp = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
        mcdc_delta_action cur = { .kind = MCDC_DELTA_ACTION_METADATA };
        cur.u.metadata = snap->metadata;
        cur.u.metadata.configuration = conf;
        rc = mcdc_delta_action_to_json(&tmp, &cur);
        if (rc == 0)
            rc = mcdc_delta_action_parse(a, tmp.ptr, tmp.len);
        mcdc_buf_dispose(&tmp);
        if (rc == 0) {
            *out = a;
            *n_out = 1;
        } else {
            mcdc_delta_action_clear(a);
            free(a);
        }
    }
    mcdc_delta_map_clear(&conf);
    return rc;
}

int mcdc_delta_set_config(const char *path, const mcdc_delta_map *set,
                          const mcdc_delta_commit_options *opts, mcdc_delta_commit_result *result)
{
    MCDC_ASSERT_ARG(path && set);
    config_ctx c = { set };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    o.operation = opts && opts->operation ? opts->operation : "SET TBLPROPERTIES";
    o.app_id = NULL; /* a configuration change is no one's batch */
    o.read_pred.op = MCDC_DELTA_PRED_NONE;
    return mcdc_delta_commit(path, build_config, &c, &o, result);
}
