/*
 * delta/schema.c: Delta's schema JSON (metaData.schemaString) to a type tree and back.
 *
 * Parses structs, arrays, maps and the primitive types of value.h ("decimal(p, s)" with
 * or without the space), keeps each field's nullability and metadata, and pulls out the
 * column-mapping keys (delta.columnMapping.physicalName / .id) so readers can find a
 * column by its physical name or Parquet field id. "variant" (the variantType feature) is
 * a kind of its own; types this build cannot read ("void", intervals) are refused by name. Writes the schemaString of a flat
 * mcdc_schema for new tables. Design: reference/specs.md §1.3.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "mcdc/delta.h"

#define MAX_DEPTH 64

static int parse_type(mcdc_delta_type *t, json_t *j, const char *where, int depth);

static void type_clear(mcdc_delta_type *t);

static void field_clear(mcdc_delta_field *f)
{
    free(f->name);
    free(f->physical_name);
    free(f->metadata);
    type_clear(&f->type);
}

static void type_clear(mcdc_delta_type *t)
{
    for (size_t i = 0; i < t->n_fields; i++)
        field_clear(&t->fields[i]);
    free(t->fields);
    if (t->element) {
        type_clear(t->element);
        free(t->element);
    }
    if (t->key) {
        type_clear(t->key);
        free(t->key);
    }
    memset(t, 0, sizeof *t);
}

static int parse_field(mcdc_delta_field *f, json_t *j, const char *where, int depth)
{
    f->field_id = -1;
    json_t *name = json_object_get(j, "name");
    json_t *type = json_object_get(j, "type");
    if (!json_is_string(name) || !type)
        return mcdc_error_set(MCDC_ECORRUPT, "schema %s: a field lacks name or type", where);
    f->name = strdup(json_string_value(name));
    json_t *nullable = json_object_get(j, "nullable");
    f->nullable = !nullable || !json_is_false(nullable);
    json_t *md = json_object_get(j, "metadata");
    f->metadata = md && json_is_object(md) ? json_dumps(md, JSON_COMPACT | JSON_PRESERVE_ORDER)
                                           : strdup("{}");
    const char *phys = NULL;
    if (md && json_is_object(md)) {
        json_t *p = json_object_get(md, "delta.columnMapping.physicalName");
        if (json_is_string(p))
            phys = json_string_value(p);
        json_t *id = json_object_get(md, "delta.columnMapping.id");
        if (json_is_integer(id))
            f->field_id = (int64_t)json_integer_value(id);
    }
    f->physical_name = strdup(phys ? phys : json_string_value(name));
    if (!f->name || !f->metadata || !f->physical_name)
        return mcdc_error_set(MCDC_ENOMEM, "schema: out of memory");
    char sub[256];
    snprintf(sub, sizeof sub, "%s%s%s", where, *where ? "." : "", f->name);
    return parse_type(&f->type, type, sub, depth + 1);
}

static int parse_type(mcdc_delta_type *t, json_t *j, const char *where, int depth)
{
    if (depth > MAX_DEPTH)
        return mcdc_error_set(MCDC_ECORRUPT, "schema %s: nested more than %d levels", where,
                              MAX_DEPTH);
    if (json_is_string(j) && strcmp(json_string_value(j), "variant") == 0) {
        t->kind = MCDC_DELTA_TYPE_VARIANT; /* variantType (PROTOCOL.md "Variant Data Type") */
        return 0;
    }
    if (json_is_string(j)) {
        const char *name = json_string_value(j);
        t->kind = MCDC_DELTA_TYPE_PRIMITIVE;
        if (mcdc_type_parse(&t->prim, name) < 0)
            return mcdc_error_set(MCDC_EUNSUPPORTED, "schema: column %s has type '%s', which this "
                                  "build cannot read", where, name);
        return 0;
    }
    if (!json_is_object(j))
        return mcdc_error_set(MCDC_ECORRUPT, "schema %s: type is neither a string nor an object",
                              where);
    const char *kind = json_string_value(json_object_get(j, "type"));
    if (!kind)
        return mcdc_error_set(MCDC_ECORRUPT, "schema %s: type object lacks \"type\"", where);
    if (strcmp(kind, "variant") == 0) {
        t->kind = MCDC_DELTA_TYPE_VARIANT;
        return 0;
    }
    if (strcmp(kind, "struct") == 0) {
        json_t *fields = json_object_get(j, "fields");
        if (!json_is_array(fields))
            return mcdc_error_set(MCDC_ECORRUPT, "schema %s: struct lacks fields", where);
        t->kind = MCDC_DELTA_TYPE_STRUCT;
        size_t n = json_array_size(fields);
        t->fields = calloc(n ? n : 1, sizeof *t->fields);
        if (!t->fields)
            return mcdc_error_set(MCDC_ENOMEM, "schema: out of memory");
        for (size_t i = 0; i < n; i++) {
            t->n_fields++;
            int rc = parse_field(&t->fields[i], json_array_get(fields, i), where, depth);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    if (strcmp(kind, "array") == 0) {
        t->kind = MCDC_DELTA_TYPE_ARRAY;
        json_t *cn = json_object_get(j, "containsNull");
        t->contains_null = !cn || !json_is_false(cn);
        t->element = calloc(1, sizeof *t->element);
        if (!t->element)
            return mcdc_error_set(MCDC_ENOMEM, "schema: out of memory");
        json_t *e = json_object_get(j, "elementType");
        if (!e)
            return mcdc_error_set(MCDC_ECORRUPT, "schema %s: array lacks elementType", where);
        return parse_type(t->element, e, where, depth + 1);
    }
    if (strcmp(kind, "map") == 0) {
        t->kind = MCDC_DELTA_TYPE_MAP;
        json_t *cn = json_object_get(j, "valueContainsNull");
        t->contains_null = !cn || !json_is_false(cn);
        t->key = calloc(1, sizeof *t->key);
        t->element = calloc(1, sizeof *t->element);
        if (!t->key || !t->element)
            return mcdc_error_set(MCDC_ENOMEM, "schema: out of memory");
        json_t *k = json_object_get(j, "keyType"), *v = json_object_get(j, "valueType");
        if (!k || !v)
            return mcdc_error_set(MCDC_ECORRUPT, "schema %s: map lacks keyType or valueType", where);
        int rc = parse_type(t->key, k, where, depth + 1);
        return rc < 0 ? rc : parse_type(t->element, v, where, depth + 1);
    }
    return mcdc_error_set(MCDC_EUNSUPPORTED, "schema: column %s has type '%s', which this build "
                          "cannot read", where, kind);
}

int mcdc_delta_schema_parse(mcdc_delta_schema **out, const char *json)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loads(json, 0, &jerr);
    if (!root)
        return mcdc_error_set(MCDC_ECORRUPT, "schemaString: malformed JSON at column %d: %s",
                              jerr.column, jerr.text);
    mcdc_delta_type t = { 0 };
    int rc;
    if (!json_is_object(root) || !json_is_string(json_object_get(root, "type")) ||
        strcmp(json_string_value(json_object_get(root, "type")), "struct") != 0)
        rc = mcdc_error_set(MCDC_ECORRUPT, "schemaString: the top level is not a struct");
    else
        rc = parse_type(&t, root, "", 0);
    json_decref(root);
    if (rc < 0) {
        type_clear(&t);
        return rc;
    }
    mcdc_delta_schema *s = calloc(1, sizeof *s);
    if (!s) {
        type_clear(&t);
        return mcdc_error_set(MCDC_ENOMEM, "schema: out of memory");
    }
    s->fields = t.fields;
    s->n_fields = t.n_fields;
    *out = s;
    return 0;
}

static int type_copy(mcdc_delta_type *out, const mcdc_delta_type *in);

static int field_copy(mcdc_delta_field *out, const mcdc_delta_field *in)
{
    memset(out, 0, sizeof *out);
    out->field_id = in->field_id;
    out->nullable = in->nullable;
    if ((in->name && !(out->name = strdup(in->name))) ||
        (in->physical_name && !(out->physical_name = strdup(in->physical_name))) ||
        (in->metadata && !(out->metadata = strdup(in->metadata))))
        return MCDC_ENOMEM;
    return type_copy(&out->type, &in->type);
}

/* A deep copy; on failure what was copied stays in @p out for type_clear. */
static int type_copy(mcdc_delta_type *out, const mcdc_delta_type *in)
{
    memset(out, 0, sizeof *out);
    out->kind = in->kind;
    out->prim = in->prim;
    out->prim.name = NULL; /* unused in a type (mcdc/delta.h) */
    out->contains_null = in->contains_null;
    if (in->n_fields) {
        if (!(out->fields = calloc(in->n_fields, sizeof *out->fields)))
            return MCDC_ENOMEM;
        for (size_t i = 0; i < in->n_fields; i++) {
            out->n_fields++;
            if (field_copy(&out->fields[i], &in->fields[i]) < 0)
                return MCDC_ENOMEM;
        }
    }
    if (in->element && (!(out->element = calloc(1, sizeof *out->element)) ||
                        type_copy(out->element, in->element) < 0))
        return MCDC_ENOMEM;
    if (in->key && (!(out->key = calloc(1, sizeof *out->key)) || type_copy(out->key, in->key) < 0))
        return MCDC_ENOMEM;
    return 0;
}

int mcdc_delta_schema_copy(mcdc_delta_schema **out, const mcdc_delta_schema *in)
{
    *out = NULL;
    mcdc_delta_schema *s = calloc(1, sizeof *s);
    int rc = s ? 0 : MCDC_ENOMEM;
    if (rc == 0 && in->n_fields && !(s->fields = calloc(in->n_fields, sizeof *s->fields)))
        rc = MCDC_ENOMEM;
    for (size_t i = 0; rc == 0 && i < in->n_fields; i++) {
        s->n_fields++;
        rc = field_copy(&s->fields[i], &in->fields[i]);
    }
    if (rc < 0) {
        mcdc_delta_schema_free(s);
        return mcdc_error_set(MCDC_ENOMEM, "schema: out of memory");
    }
    *out = s;
    return 0;
}

void mcdc_delta_schema_free(mcdc_delta_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_fields; i++)
        field_clear(&s->fields[i]);
    free(s->fields);
    free(s);
}

int mcdc_delta_schema_find(const mcdc_delta_schema *s, const char *name)
{
    for (size_t i = 0; s && i < s->n_fields; i++)
        if (strcasecmp(s->fields[i].name, name) == 0)
            return (int)i;
    return -1;
}

int mcdc_delta_type_to_json(mcdc_buf *b, const mcdc_delta_type *t)
{
    char name[48];
    int rc = 0;
    switch (t->kind) {
    case MCDC_DELTA_TYPE_PRIMITIVE:
        return mcdc_buf_printf(b, "\"%s\"", mcdc_type_name(name, sizeof name, &t->prim));
    case MCDC_DELTA_TYPE_VARIANT:
        return mcdc_buf_puts(b, "\"variant\"");
    case MCDC_DELTA_TYPE_ARRAY:
        rc = mcdc_buf_puts(b, "{\"type\":\"array\",\"elementType\":");
        if (!rc)
            rc = mcdc_delta_type_to_json(b, t->element);
        return rc ? rc : mcdc_buf_printf(b, ",\"containsNull\":%s}", t->contains_null ? "true" : "false");
    case MCDC_DELTA_TYPE_MAP:
        rc = mcdc_buf_puts(b, "{\"type\":\"map\",\"keyType\":");
        if (!rc)
            rc = mcdc_delta_type_to_json(b, t->key);
        if (!rc)
            rc = mcdc_buf_puts(b, ",\"valueType\":");
        if (!rc)
            rc = mcdc_delta_type_to_json(b, t->element);
        return rc ? rc
                  : mcdc_buf_printf(b, ",\"valueContainsNull\":%s}",
                                    t->contains_null ? "true" : "false");
    case MCDC_DELTA_TYPE_STRUCT:
        rc = mcdc_buf_puts(b, "{\"type\":\"struct\",\"fields\":[");
        for (size_t i = 0; rc == 0 && i < t->n_fields; i++) {
            const mcdc_delta_field *f = &t->fields[i];
            rc = mcdc_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
            if (!rc)
                rc = mcdc_json_quote(b, f->name, strlen(f->name));
            if (!rc)
                rc = mcdc_buf_puts(b, ",\"type\":");
            if (!rc)
                rc = mcdc_delta_type_to_json(b, &f->type);
            if (!rc)
                rc = mcdc_buf_printf(b, ",\"nullable\":%s,\"metadata\":%s}",
                                     f->nullable ? "true" : "false", f->metadata ? f->metadata : "{}");
        }
        return rc ? rc : mcdc_buf_puts(b, "]}");
    }
    return mcdc_error_set(MCDC_EINVAL, "delta type: unknown kind %d", (int)t->kind);
}

int mcdc_delta_schema_json_from_flat(mcdc_buf *b, const mcdc_schema *flat)
{
    char name[48];
    int rc = mcdc_buf_puts(b, "{\"type\":\"struct\",\"fields\":[");
    for (size_t i = 0; rc == 0 && i < flat->n_cols; i++) {
        const mcdc_column *c = &flat->cols[i];
        rc = mcdc_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        if (!rc)
            rc = mcdc_json_quote(b, c->name, strlen(c->name));
        if (!rc)
            rc = mcdc_buf_printf(b, ",\"type\":\"%s\",\"nullable\":%s,\"metadata\":{}}",
                                 mcdc_type_name(name, sizeof name, c), c->nullable ? "true" : "false");
    }
    return rc ? rc : mcdc_buf_puts(b, "]}");
}

int mcdc_delta_schema_to_flat(mcdc_schema **out, const mcdc_delta_schema *s)
{
    *out = NULL;
    mcdc_schema *flat = mcdc_schema_new();
    if (!flat)
        return mcdc_error_set(MCDC_ENOMEM, "schema: out of memory");
    for (size_t i = 0; i < s->n_fields; i++) {
        const mcdc_delta_field *f = &s->fields[i];
        if (f->type.kind != MCDC_DELTA_TYPE_PRIMITIVE) {
            mcdc_schema_free(flat);
            return mcdc_error_set(MCDC_EUNSUPPORTED, "schema: column %s is nested (%s)", f->name,
                                  f->type.kind == MCDC_DELTA_TYPE_STRUCT    ? "struct"
                                  : f->type.kind == MCDC_DELTA_TYPE_ARRAY   ? "array"
                                  : f->type.kind == MCDC_DELTA_TYPE_VARIANT ? "variant"
                                                                            : "map");
        }
        int rc = mcdc_schema_add(flat, f->name, f->type.prim.type, f->type.prim.precision,
                                 f->type.prim.scale, f->nullable);
        if (rc < 0) {
            mcdc_schema_free(flat);
            return rc;
        }
    }
    *out = flat;
    return 0;
}
