/*
 * delta/evolve.c: schema evolution written in the same commit as the data it is for, and
 * the typeWidening table feature.
 *
 * mcdc_delta_append_evolving appends data files written with a flat schema that may hold
 * more than the table's: columns the table lacks are added (nullable, at the end), and a
 * column whose type the files widen is widened with the typeWidening feature. The new
 * metaData (and, when the feature is new to the table, the protocol) goes into the one
 * commit that adds the files, so no reader ever sees the files without the schema that
 * describes them, and a crash leaves both or neither. Built from each attempt's
 * snapshot: a concurrent change of the schema is met again after the conflict.
 *
 * Widening (PROTOCOL.md "Type Widening"): byte -> short -> integer -> long; float ->
 * double; byte, short, integer -> double; date -> timestamp_ntz; decimal(p,s) ->
 * decimal(p+k1, s+k2) with k1 >= k2 >= 0; byte, short, integer, long -> a decimal with
 * at least 3, 5, 10, 20 integer digits. Each change is appended to the field's
 * `delta.typeChanges` metadata ({fromType, toType}, oldest first). A table widens only
 * while its configuration has delta.enableTypeWidening=true (the feature makes it
 * unreadable to engines without it, so the user decides: mcdc_delta_enable_type_widening
 * or `mssql-cdc table set-property`). A narrowing, or any other change, is refused with
 * MCDC_ESCHEMA and nothing is written.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "delta/internal.h"

static int int_digits(mcdc_type_id t)
{
    switch (t) {
    case MCDC_TYPE_BYTE: return 3;
    case MCDC_TYPE_SHORT: return 5;
    case MCDC_TYPE_INT: return 10;
    case MCDC_TYPE_LONG: return 20;
    default: return -1;
    }
}

static int int_rank(mcdc_type_id t)
{
    switch (t) {
    case MCDC_TYPE_BYTE: return 1;
    case MCDC_TYPE_SHORT: return 2;
    case MCDC_TYPE_INT: return 3;
    case MCDC_TYPE_LONG: return 4;
    default: return 0;
    }
}

bool mcdc_delta_type_same(const mcdc_column *a, const mcdc_column *b)
{
    return a->type == b->type && (a->type != MCDC_TYPE_DECIMAL ||
                                  (a->precision == b->precision && a->scale == b->scale));
}

bool mcdc_delta_type_widens(const mcdc_column *from, const mcdc_column *to)
{
    if (mcdc_delta_type_same(from, to))
        return false;
    int rf = int_rank(from->type), rt = int_rank(to->type);
    if (rf && rt)
        return rf < rt;
    if (to->type == MCDC_TYPE_DOUBLE)
        return from->type == MCDC_TYPE_FLOAT || (rf && rf <= 3);
    if (from->type == MCDC_TYPE_DATE)
        return to->type == MCDC_TYPE_TIMESTAMP_NTZ;
    if (to->type == MCDC_TYPE_DECIMAL) {
        if (from->type == MCDC_TYPE_DECIMAL)
            return to->scale >= from->scale &&
                   to->precision - to->scale >= from->precision - from->scale;
        if (rf)
            return to->precision - to->scale >= int_digits(from->type);
    }
    return false;
}

/* ---- building the evolved metaData ------------------------------------------------------- */

typedef struct evolve_ctx {
    const mcdc_delta_file *files;
    size_t                 n;
    const mcdc_schema     *schema; /* what the files were written with */
} evolve_ctx;

/* Append {fromType, toType} to the field's delta.typeChanges. */
static int add_type_change(json_t *field, const char *from, const char *to)
{
    json_t *md = json_object_get(field, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        if (!md || json_object_set_new(field, "metadata", md) < 0)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    json_t *changes = json_object_get(md, "delta.typeChanges");
    if (!json_is_array(changes)) {
        changes = json_array();
        if (!changes || json_object_set_new(md, "delta.typeChanges", changes) < 0)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    json_t *c = json_pack("{s:s,s:s}", "fromType", from, "toType", to);
    if (!c || json_array_append_new(changes, c) < 0)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    return 0;
}

static bool has_name(char **l, size_t n, const char *f)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i], f) == 0)
            return true;
    return false;
}

/* A protocol action: the snapshot's with typeWidening as a reader and writer feature
 * (reader 3, writer 7; a table on lower versions lists the features its versions imply). */
static int protocol_with_widening(mcdc_delta_action *a, const mcdc_delta_snapshot *snap)
{
    const mcdc_delta_protocol *p = &snap->protocol;
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    int rc = mcdc_buf_puts(&b, "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
                               "\"readerFeatures\":[");
    bool first = true;
    for (size_t i = 0; rc == 0 && p->min_reader_version == 3 && i < p->n_reader_features; i++) {
        if (strcmp(p->reader_features[i], "typeWidening") == 0)
            continue;
        rc = mcdc_buf_puts(&b, first ? "" : ",");
        if (rc == 0)
            rc = mcdc_json_quote(&b, p->reader_features[i], strlen(p->reader_features[i]));
        first = false;
    }
    if (rc == 0)
        rc = mcdc_buf_puts(&b, first ? "\"typeWidening\"],\"writerFeatures\":["
                                     : ",\"typeWidening\"],\"writerFeatures\":[");
    first = true;
    if (p->min_writer_version == 7) {
        for (size_t i = 0; rc == 0 && i < p->n_writer_features; i++) {
            if (strcmp(p->writer_features[i], "typeWidening") == 0)
                continue;
            rc = mcdc_buf_puts(&b, first ? "" : ",");
            if (rc == 0)
                rc = mcdc_json_quote(&b, p->writer_features[i], strlen(p->writer_features[i]));
            first = false;
        }
    } else {
        /* the features writer versions 2 (and 3..6 as far as this writer writes them) imply */
        static const char *const implied[] = { "appendOnly", "invariants" };
        for (size_t i = 0; rc == 0 && p->min_writer_version >= 2 && i < 2; i++) {
            rc = mcdc_buf_printf(&b, "%s\"%s\"", first ? "" : ",", implied[i]);
            first = false;
        }
    }
    if (rc == 0)
        rc = mcdc_buf_puts(&b, first ? "\"typeWidening\"]}}" : ",\"typeWidening\"]}}");
    if (rc == 0)
        rc = mcdc_delta_action_parse(a, b.ptr, b.len);
    mcdc_buf_dispose(&b);
    return rc;
}

static bool protocol_has_widening(const mcdc_delta_protocol *p)
{
    return p->min_reader_version == 3 && p->min_writer_version == 7 &&
           has_name(p->reader_features, p->n_reader_features, "typeWidening") &&
           has_name(p->writer_features, p->n_writer_features, "typeWidening");
}

/* A metaData action: a copy of the snapshot's with @p root as its schema. */
static int metadata_with_schema(mcdc_delta_action *a, const mcdc_delta_snapshot *snap,
                                json_t *root)
{
    char *js = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!js)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_buf tmp = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    mcdc_delta_action cur = { .kind = MCDC_DELTA_ACTION_METADATA };
    cur.u.metadata = snap->metadata;
    cur.u.metadata.schema_string = js;
    int rc = mcdc_delta_action_to_json(&tmp, &cur);
    if (rc == 0)
        rc = mcdc_delta_action_parse(a, tmp.ptr, tmp.len);
    mcdc_buf_dispose(&tmp);
    free(js);
    return rc;
}

/* The schema JSON of @p snap evolved to hold @p want; *changed false when it already does,
 * *widened true when a type widens. */
static int evolve_schema(json_t **out, bool *changed, bool *widened,
                         const mcdc_delta_snapshot *snap, const mcdc_schema *want)
{
    *out = NULL;
    *changed = *widened = false;
    json_t *root = json_loads(snap->metadata.schema_string, 0, NULL);
    json_t *fields = root ? json_object_get(root, "fields") : NULL;
    if (!json_is_array(fields)) {
        json_decref(root);
        return mcdc_error_set(MCDC_ECORRUPT, "%s: schemaString is malformed", snap->table_path);
    }
    bool widening_on = strcasecmp(mcdc_delta_snapshot_config(snap, "delta.enableTypeWidening",
                                                             "false"), "true") == 0;
    int rc = 0;
    char t1[48], t2[48];
    for (size_t i = 0; rc == 0 && i < want->n_cols; i++) {
        const mcdc_column *col = &want->cols[i];
        int at = mcdc_delta_schema_find(snap->schema, col->name);
        if (at < 0) {
            if (snap->column_mapping != MCDC_DELTA_CM_NONE) {
                rc = mcdc_error_set(MCDC_EUNSUPPORTED, "%s: adding column %s to a table with "
                                    "column mapping is not implemented", snap->table_path,
                                    col->name);
                break;
            }
            json_t *f = json_pack("{s:s,s:s,s:b,s:{}}", "name", col->name, "type",
                                  mcdc_type_name(t1, sizeof t1, col), "nullable", 1, "metadata");
            if (!f || json_array_append_new(fields, f) < 0)
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            *changed = true;
            continue;
        }
        const mcdc_delta_field *have = &snap->schema->fields[at];
        if (have->type.kind != MCDC_DELTA_TYPE_PRIMITIVE) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s is nested in the table", snap->table_path,
                                col->name);
            break;
        }
        if (mcdc_delta_type_same(&have->type.prim, col))
            continue;
        mcdc_type_name(t1, sizeof t1, &have->type.prim);
        mcdc_type_name(t2, sizeof t2, col);
        if (!mcdc_delta_type_widens(&have->type.prim, col)) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s is %s in the table; %s is not a "
                                "widening of it", snap->table_path, col->name, t1, t2);
            mcdc_error_hint("a type the table's column cannot hold needs a new target (or a new "
                            "capture instance that keeps the old type)");
            break;
        }
        if (!widening_on) {
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s widens from %s to %s, but the table "
                                "does not have delta.enableTypeWidening=true", snap->table_path,
                                col->name, t1, t2);
            break;
        }
        json_t *f = json_array_get(fields, (size_t)at);
        if (!f || json_object_set_new(f, "type", json_string(t2)) < 0 ||
            (rc = add_type_change(f, t1, t2)) < 0) {
            if (rc == 0)
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: schemaString is malformed",
                                    snap->table_path);
            break;
        }
        *changed = *widened = true;
    }
    if (rc < 0) {
        json_decref(root);
        return rc;
    }
    *out = root;
    return 0;
}

static int build_evolving(const mcdc_delta_snapshot *snap, mcdc_delta_action **out,
                          size_t *n_out, void *payload)
{
    evolve_ctx *c = payload;
    *out = NULL;
    *n_out = 0;
    json_t *root = NULL;
    bool changed, widened;
    int rc = evolve_schema(&root, &changed, &widened, snap, c->schema);
    if (rc < 0)
        return rc;
    bool upgrade = widened && !protocol_has_widening(&snap->protocol);
    mcdc_delta_action *a = calloc(c->n + 2, sizeof *a);
    if (!a) {
        json_decref(root);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    size_t n = 0;
    if (upgrade && (rc = protocol_with_widening(&a[n], snap)) == 0)
        n++;
    if (rc == 0 && changed && (rc = metadata_with_schema(&a[n], snap, root)) == 0)
        n++;
    json_decref(root);
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        if ((rc = mcdc_delta_file_copy(&a[n].u.file, &c->files[i])) == 0) {
            a[n].kind = MCDC_DELTA_ACTION_ADD;
            n++;
        }
    }
    *out = a;
    *n_out = n;
    return rc;
}

int mcdc_delta_append_evolving(const char *path, const mcdc_delta_file *files, size_t n_files,
                               const mcdc_schema *schema, const mcdc_delta_commit_options *opts,
                               mcdc_delta_commit_result *result)
{
    MCDC_ASSERT_ARG(path && schema);
    /* without a change the ordinary append (and its compaction hook) does it */
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc < 0)
        return rc;
    json_t *root = NULL;
    bool changed = false, widened = false;
    rc = evolve_schema(&root, &changed, &widened, snap, schema);
    json_decref(root);
    mcdc_delta_snapshot_free(snap);
    if (rc < 0)
        return rc;
    if (!changed)
        return mcdc_delta_append(path, files, n_files, opts, result);
    evolve_ctx c = { files, n_files, schema };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (!o.operation)
        o.operation = "WRITE";
    if (!o.operation_parameters)
        o.operation_parameters = "{\"mode\":\"Append\",\"mergeSchema\":\"true\"}";
    return mcdc_delta_commit(path, build_evolving, &c, &o, result);
}

/* ---- enabling the feature ------------------------------------------------------------------ */

static int build_enable(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n_out,
                        void *payload)
{
    (void)payload;
    *out = NULL;
    *n_out = 0;
    bool on = strcasecmp(mcdc_delta_snapshot_config(snap, "delta.enableTypeWidening", "false"),
                         "true") == 0;
    bool feature = protocol_has_widening(&snap->protocol);
    if (on && feature)
        return 0;
    mcdc_delta_action *a = calloc(2, sizeof *a);
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    size_t n = 0;
    int rc = 0;
    if (!feature && (rc = protocol_with_widening(&a[n], snap)) == 0)
        n++;
    if (rc == 0 && !on) {
        mcdc_delta_map conf = { NULL, 0 };
        const mcdc_delta_map *have = &snap->metadata.configuration;
        for (size_t i = 0; rc == 0 && i < have->n; i++)
            if (strcmp(have->kv[i].key, "delta.enableTypeWidening") != 0)
                rc = mcdc_delta_map_set(&conf, have->kv[i].key, have->kv[i].value);
        if (rc == 0)
            rc = mcdc_delta_map_set(&conf, "delta.enableTypeWidening", "true");
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
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "SET TBLPROPERTIES";
    o.operation_parameters = "{\"properties\":\"{\\\"delta.enableTypeWidening\\\":\\\"true\\\"}\"}";
    return mcdc_delta_commit(path, build_enable, NULL, &o, result);
}
