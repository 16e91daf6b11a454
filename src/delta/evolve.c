/*
 * delta/evolve.c: schema evolution made in the same commit as the data that needs it:
 * new nullable columns, and columns widened under the typeWidening table feature.
 *
 * A caller plans the change on a snapshot (mcdc_delta_evolve_plan: the flat schema its
 * data files are then written with) and hands the same change to the commit
 * (mcdc_delta_commit_options.evolve). The commit re-applies it to every attempt's
 * snapshot, so a retry after a conflict sees the newest schema; a change the snapshot
 * already holds is left out, so a replay writes no second metaData. Rules:
 * (E1) an added column is nullable and goes after the table's columns; one present with
 *      the same type is skipped, one present with another type is MCDC_ESCHEMA.
 * (E2) a widening is one PROTOCOL.md's Type Widening allows (mcdc_delta_type_widens), and
 *      only on a table whose configuration has delta.enableTypeWidening=true; the field's
 *      metadata gains a delta.typeChanges entry {fromType, toType}, entries already there
 *      are kept.
 * (E3) a widening commit carries a protocol with typeWidening in readerFeatures and
 *      writerFeatures (reader 3, writer 7; a table on legacy versions lists the features
 *      those versions implied) unless the table supports typeWidening or
 *      typeWidening-preview already.
 * (E4) on a column-mapped table a new column gets delta.columnMapping.id (the table's
 *      delta.columnMapping.maxColumnId + 1, which is raised) and the physical name
 *      mcdc_delta_physical_schema gives it (delta/colmap.c).
 * Design: PROTOCOL.md "Type Widening", "Column Mapping"; docs/decisions/0025.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "delta/internal.h"

bool mcdc_delta_type_widens(const mcdc_column *from, const mcdc_column *to)
{
    mcdc_type_id f = from->type, t = to->type;
    bool f_int = f == MCDC_TYPE_BYTE || f == MCDC_TYPE_SHORT || f == MCDC_TYPE_INT;
    switch (t) {
    case MCDC_TYPE_SHORT:
        return f == MCDC_TYPE_BYTE;
    case MCDC_TYPE_INT:
        return f == MCDC_TYPE_BYTE || f == MCDC_TYPE_SHORT;
    case MCDC_TYPE_LONG:
        return f_int;
    case MCDC_TYPE_DOUBLE:
        return f_int || f == MCDC_TYPE_FLOAT;
    case MCDC_TYPE_TIMESTAMP_NTZ:
        return f == MCDC_TYPE_DATE;
    case MCDC_TYPE_DECIMAL: {
        int k1, k2;
        if (f == MCDC_TYPE_DECIMAL) {
            k1 = to->precision - from->precision;
            k2 = to->scale - from->scale;
            if (k1 == 0 && k2 == 0)
                return false;
        } else if (f_int || f == MCDC_TYPE_LONG) {
            k1 = to->precision - (f == MCDC_TYPE_LONG ? 20 : 10);
            k2 = to->scale;
        } else {
            return false;
        }
        return k1 >= k2 && k2 >= 0;
    }
    default:
        return false;
    }
}

static bool same_type(const mcdc_delta_field *f, const mcdc_column *c)
{
    return f->type.kind == MCDC_DELTA_TYPE_PRIMITIVE && f->type.prim.type == c->type &&
           (c->type != MCDC_TYPE_DECIMAL ||
            (f->type.prim.precision == c->precision && f->type.prim.scale == c->scale));
}

static bool list_has(char **l, size_t n, const char *a, const char *b)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i], a) == 0 || (b && strcmp(l[i], b) == 0))
            return true;
    return false;
}

bool mcdc_delta__supports_feature(const mcdc_delta_protocol *p, const char *feature,
                                  const char *preview)
{
    return p->min_reader_version >= 3 && p->min_writer_version >= 7 &&
           list_has(p->reader_features, p->n_reader_features, feature, preview) &&
           list_has(p->writer_features, p->n_writer_features, feature, preview);
}

static int push(char ***l, size_t *n, const char *s)
{
    if (list_has(*l, *n, s, NULL))
        return 0;
    char **nl = realloc(*l, (*n + 1) * sizeof *nl);
    if (!nl)
        return mcdc_error_set(MCDC_ENOMEM, "protocol: out of memory");
    *l = nl;
    if (!(nl[*n] = strdup(s)))
        return mcdc_error_set(MCDC_ENOMEM, "protocol: out of memory");
    (*n)++;
    return 0;
}

static void protocol_clear(mcdc_delta_protocol *p)
{
    mcdc_delta_action a = { .kind = MCDC_DELTA_ACTION_PROTOCOL };
    a.u.protocol = *p;
    mcdc_delta_action_clear(&a);
    memset(p, 0, sizeof *p);
}

int mcdc_delta__protocol_with(mcdc_delta_protocol *out, const mcdc_delta_protocol *in,
                              const char *feature, bool reader)
{
    memset(out, 0, sizeof *out);
    out->min_reader_version = in->min_reader_version;
    out->min_writer_version = 7;
    int rc = 0;
    /* the features the legacy versions implied (PROTOCOL.md "Table Features") */
    if (in->min_writer_version < 7) {
        static const struct { int v; const char *f; } implied[] = {
            { 2, "appendOnly" }, { 2, "invariants" }, { 3, "checkConstraints" },
            { 4, "changeDataFeed" }, { 4, "generatedColumns" }, { 5, "columnMapping" },
            { 6, "identityColumns" },
        };
        for (size_t i = 0; rc == 0 && i < sizeof implied / sizeof *implied; i++)
            if (in->min_writer_version >= implied[i].v)
                rc = push(&out->writer_features, &out->n_writer_features, implied[i].f);
    } else {
        for (size_t i = 0; rc == 0 && i < in->n_writer_features; i++)
            rc = push(&out->writer_features, &out->n_writer_features, in->writer_features[i]);
    }
    if (rc == 0)
        rc = push(&out->writer_features, &out->n_writer_features, feature);
    out->has_writer_features = true;
    if (reader || in->min_reader_version >= 3) {
        out->min_reader_version = 3;
        out->has_reader_features = true;
        if (in->min_reader_version >= 3) {
            for (size_t i = 0; rc == 0 && i < in->n_reader_features; i++)
                rc = push(&out->reader_features, &out->n_reader_features, in->reader_features[i]);
        } else if (in->min_reader_version == 2 && rc == 0) {
            rc = push(&out->reader_features, &out->n_reader_features, "columnMapping");
        }
        if (rc == 0 && reader)
            rc = push(&out->reader_features, &out->n_reader_features, feature);
    }
    if (rc < 0)
        protocol_clear(out);
    return rc;
}

/* What applying an evolution to one snapshot gives. */
typedef struct plan {
    json_t *root;       /* the new schema (owned), NULL when nothing changes */
    bool    widened;    /* a column's type changed */
    bool    ntz;        /* a column became or was added as timestamp_ntz */
    int64_t max_id;     /* column mapping: the new maxColumnId, or -1 when not raised */
    mcdc_schema *flat;  /* the flat schema after the change (owned; may be NULL) */
} plan;

static void plan_dispose(plan *p)
{
    json_decref(p->root);
    mcdc_schema_free(p->flat);
    memset(p, 0, sizeof *p);
}

static json_t *find_field(json_t *fields, const char *name)
{
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        const char *n = json_string_value(json_object_get(f, "name"));
        if (n && strcasecmp(n, name) == 0)
            return f;
    }
    return NULL;
}

static int make_plan(plan *p, const mcdc_delta_snapshot *snap, const mcdc_delta_evolution *ev,
                     bool want_flat)
{
    memset(p, 0, sizeof *p);
    p->max_id = -1;
    const char *tp = snap->table_path;
    json_t *root = json_loads(snap->metadata.schema_string, 0, NULL);
    json_t *fields = root ? json_object_get(root, "fields") : NULL;
    if (!json_is_array(fields)) {
        json_decref(root);
        return mcdc_error_set(MCDC_ECORRUPT, "%s: schemaString is malformed", tp);
    }
    bool changed = false;
    int rc = 0;
    char from_name[48], to_name[48];
    for (size_t i = 0; ev->widen && rc == 0 && i < ev->widen->n_cols; i++) {
        const mcdc_column *c = &ev->widen->cols[i];
        int at = mcdc_delta_schema_find(snap->schema, c->name);
        if (at < 0) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: no column %s to widen", tp, c->name);
            break;
        }
        const mcdc_delta_field *f = &snap->schema->fields[at];
        if (same_type(f, c))
            continue; /* already done */
        if (f->type.kind != MCDC_DELTA_TYPE_PRIMITIVE) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s is nested; only a primitive "
                                "column widens", tp, f->name);
            break;
        }
        mcdc_type_name(from_name, sizeof from_name, &f->type.prim);
        mcdc_type_name(to_name, sizeof to_name, c);
        if (!mcdc_delta_type_widens(&f->type.prim, c)) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s is %s; a change to %s is not a "
                                "widening Delta allows", tp, f->name, from_name, to_name);
            mcdc_error_hint("write to a new target, or capture the column in a new capture "
                            "instance under another name");
            break;
        }
        const char *en = mcdc_delta_snapshot_config(snap, "delta.enableTypeWidening", "false");
        if (strcasecmp(en, "true") != 0) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s widens from %s to %s, but the table "
                                "does not have delta.enableTypeWidening=true", tp, f->name,
                                from_name, to_name);
            mcdc_error_hint("set the table property delta.enableTypeWidening=true (the "
                            "typeWidening feature then makes the table unreadable to engines "
                            "without it), or write to a new target");
            break;
        }
        json_t *jf = find_field(fields, f->name);
        json_t *md = jf ? json_object_get(jf, "metadata") : NULL;
        if (jf && !json_is_object(md)) {
            md = json_object();
            json_object_set_new(jf, "metadata", md);
        }
        json_t *tc = md ? json_object_get(md, "delta.typeChanges") : NULL;
        if (md && !json_is_array(tc)) {
            tc = json_array();
            json_object_set_new(md, "delta.typeChanges", tc);
        }
        if (!tc || json_object_set_new(jf, "type", json_string(to_name)) < 0 ||
            json_array_append_new(tc, json_pack("{s:s,s:s}", "fromType", from_name, "toType",
                                                to_name)) < 0) {
            rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", tp);
            break;
        }
        changed = p->widened = true;
        p->ntz |= c->type == MCDC_TYPE_TIMESTAMP_NTZ;
    }
    int64_t max_id = -1;
    if (snap->column_mapping != MCDC_DELTA_CM_NONE) {
        const char *m = mcdc_delta_snapshot_config(snap, "delta.columnMapping.maxColumnId", "0");
        max_id = atoll(m);
        for (size_t i = 0; i < snap->schema->n_fields; i++)
            if (snap->schema->fields[i].field_id > max_id)
                max_id = snap->schema->fields[i].field_id;
    }
    for (size_t i = 0; ev->add && rc == 0 && i < ev->add->n_cols; i++) {
        const mcdc_column *c = &ev->add->cols[i];
        int at = mcdc_delta_schema_find(snap->schema, c->name);
        if (at >= 0) {
            if (!same_type(&snap->schema->fields[at], c)) {
                mcdc_type_name(to_name, sizeof to_name, c);
                rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s to add exists with another type "
                                    "than %s", tp, c->name, to_name);
            }
            continue;
        }
        if (find_field(fields, c->name))
            continue; /* named twice in ev->add */
        if (!c->nullable) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: new column %s must be nullable", tp, c->name);
            break;
        }
        json_t *md = json_object();
        if (md && max_id >= 0) {
            char phys[48]; /* as mcdc_delta_physical_schema names it in the data files */
            mcdc_delta__physical_name(phys, c->name);
            json_object_set_new(md, "delta.columnMapping.id", json_integer(++max_id));
            json_object_set_new(md, "delta.columnMapping.physicalName", json_string(phys));
            p->max_id = max_id;
        }
        json_t *jf = md ? json_pack("{s:s,s:s,s:b,s:o}", "name", c->name, "type",
                                    mcdc_type_name(to_name, sizeof to_name, c), "nullable", 1,
                                    "metadata", md)
                        : NULL;
        if (!jf || json_array_append_new(fields, jf) < 0) {
            rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", tp);
            break;
        }
        changed = true;
        p->ntz |= c->type == MCDC_TYPE_TIMESTAMP_NTZ;
    }
    if (rc == 0 && want_flat) {
        /* the flat schema after the change, from the snapshot's and the change's columns */
        mcdc_schema *flat = NULL;
        rc = mcdc_delta_schema_to_flat(&flat, snap->schema);
        for (size_t i = 0; rc == 0 && ev->widen && i < ev->widen->n_cols; i++) {
            int at = mcdc_schema_find(flat, ev->widen->cols[i].name);
            flat->cols[at].type = ev->widen->cols[i].type;
            flat->cols[at].precision = ev->widen->cols[i].precision;
            flat->cols[at].scale = ev->widen->cols[i].scale;
        }
        for (size_t i = 0; rc == 0 && ev->add && i < ev->add->n_cols; i++) {
            const mcdc_column *c = &ev->add->cols[i];
            if (mcdc_schema_find(flat, c->name) < 0)
                rc = mcdc_schema_add(flat, c->name, c->type, c->precision, c->scale, true);
        }
        if (rc == 0)
            p->flat = flat;
        else
            mcdc_schema_free(flat);
    }
    if (rc == 0 && changed)
        p->root = root;
    else
        json_decref(root);
    return rc;
}

int mcdc_delta_evolve_plan(mcdc_schema **out, const mcdc_delta_snapshot *snap,
                           const mcdc_delta_evolution *ev)
{
    MCDC_ASSERT_ARG(out && snap && ev);
    *out = NULL;
    plan p;
    int rc = make_plan(&p, snap, ev, true);
    if (rc == 0) {
        *out = p.flat;
        p.flat = NULL;
    }
    plan_dispose(&p);
    return rc;
}

int mcdc_delta__evolve_actions(const mcdc_delta_snapshot *snap, const mcdc_delta_evolution *ev,
                               mcdc_delta_action **acts, size_t *n_acts)
{
    for (size_t i = 0; i < *n_acts; i++)
        if ((*acts)[i].kind == MCDC_DELTA_ACTION_METADATA ||
            (*acts)[i].kind == MCDC_DELTA_ACTION_PROTOCOL)
            return mcdc_error_set(MCDC_EINVAL, "%s: a commit that evolves the schema cannot also "
                                  "carry its own metaData or protocol", snap->table_path);
    plan p;
    int rc = make_plan(&p, snap, ev, false);
    if (rc < 0 || !p.root) {
        plan_dispose(&p);
        return rc;
    }
    /* (E3) the features the new schema needs that the table does not support yet */
    const char *need[2];
    size_t n_need = 0;
    if (p.ntz && !mcdc_delta__supports_feature(&snap->protocol, "timestampNtz", NULL))
        need[n_need++] = "timestampNtz";
    if (p.widened && !mcdc_delta__supports_feature(&snap->protocol, "typeWidening",
                                                   "typeWidening-preview"))
        need[n_need++] = "typeWidening";
    mcdc_delta_action *na = realloc(*acts, (*n_acts + 2) * sizeof *na);
    char *js = json_dumps(p.root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!na || !js) {
        if (na)
            *acts = na;
        free(js);
        plan_dispose(&p);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", snap->table_path);
    }
    *acts = na;
    mcdc_delta_map conf = { NULL, 0 };
    for (size_t i = 0; rc == 0 && i < snap->metadata.configuration.n; i++)
        rc = mcdc_delta_map_set(&conf, snap->metadata.configuration.kv[i].key,
                                snap->metadata.configuration.kv[i].value);
    if (rc == 0 && p.max_id >= 0) {
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)p.max_id);
        rc = mcdc_delta_map_set(&conf, "delta.columnMapping.maxColumnId", v);
    }
    if (rc == 0) {
        /* a copy of the current metadata with the new schema, by its JSON */
        mcdc_buf tmp = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
        mcdc_delta_action cur = { .kind = MCDC_DELTA_ACTION_METADATA };
        cur.u.metadata = snap->metadata;
        cur.u.metadata.schema_string = js;
        cur.u.metadata.configuration = conf;
        memset(&na[*n_acts], 0, sizeof na[*n_acts]);
        rc = mcdc_delta_action_to_json(&tmp, &cur);
        if (rc == 0)
            rc = mcdc_delta_action_parse(&na[*n_acts], tmp.ptr, tmp.len);
        mcdc_buf_dispose(&tmp);
        if (rc == 0)
            (*n_acts)++;
        else
            mcdc_delta_action_clear(&na[*n_acts]);
    }
    mcdc_delta_protocol proto = snap->protocol, next;
    bool own = false; /* proto is ours to clear */
    for (size_t k = 0; rc == 0 && k < n_need; k++) {
        rc = mcdc_delta__protocol_with(&next, &proto, need[k], true);
        if (own)
            protocol_clear(&proto);
        if (rc == 0) {
            proto = next;
            own = true;
        }
    }
    if (rc == 0 && own) {
        memset(&na[*n_acts], 0, sizeof na[*n_acts]);
        na[*n_acts].kind = MCDC_DELTA_ACTION_PROTOCOL;
        na[*n_acts].u.protocol = proto;
        (*n_acts)++;
    }
    mcdc_delta_map_clear(&conf);
    free(js);
    plan_dispose(&p);
    return rc;
}
