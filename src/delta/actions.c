/*
 * delta/actions.c: Delta log actions to and from JSON.
 *
 * Parses one action (a line of a commit file, or a checkpoint row rendered as JSON) into
 * mcdc_delta_action and writes actions back as the protocol spells them. Readers must
 * ignore unknown actions and unknown fields (PROTOCOL "Protocol Evolution"), so both
 * come back as UNKNOWN / are skipped; a known action missing a required field is
 * corrupt. Checkpoint rows have every action column, all null but one, and their maps
 * may come as arrays of {"key","value"}: both shapes are accepted. Longs are kept at
 * full 64-bit precision (jansson's json_int_t). Design: reference/specs.md §1.2.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcdc/delta.h"

/* ---- small helpers ------------------------------------------------------------------ */

static char *dupstr(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* A string field: NULL when absent or null; *bad when present with another type. */
static const char *str_field(json_t *o, const char *key, bool *bad)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v)) {
        *bad = true;
        return NULL;
    }
    return json_string_value(v);
}

static int64_t int_field(json_t *o, const char *key, int64_t dflt, bool *bad)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return dflt;
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    if (json_is_string(v)) { /* some writers quote longs */
        char *end;
        const char *s = json_string_value(v);
        long long x = strtoll(s, &end, 10);
        if (end != s && *end == '\0')
            return x;
    }
    *bad = true;
    return dflt;
}

static bool bool_field(json_t *o, const char *key, bool dflt, bool *bad)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return dflt;
    if (!json_is_boolean(v)) {
        *bad = true;
        return dflt;
    }
    return json_is_true(v);
}

void mcdc_delta_map_clear(mcdc_delta_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->kv[i].key);
        free(m->kv[i].value);
    }
    free(m->kv);
    m->kv = NULL;
    m->n = 0;
}

int mcdc_delta_map_set(mcdc_delta_map *m, const char *key, const char *value)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->kv[i].key, key) == 0) {
            char *v = value ? strdup(value) : NULL;
            if (value && !v)
                return mcdc_error_set(MCDC_ENOMEM, "delta map: out of memory");
            free(m->kv[i].value);
            m->kv[i].value = v;
            return 0;
        }
    }
    mcdc_delta_kv *kv = realloc(m->kv, (m->n + 1) * sizeof *kv);
    if (!kv)
        return mcdc_error_set(MCDC_ENOMEM, "delta map: out of memory");
    m->kv = kv;
    kv[m->n].key = strdup(key);
    kv[m->n].value = value ? strdup(value) : NULL;
    if (!kv[m->n].key || (value && !kv[m->n].value)) {
        free(kv[m->n].key);
        free(kv[m->n].value);
        return mcdc_error_set(MCDC_ENOMEM, "delta map: out of memory");
    }
    m->n++;
    return 0;
}

const char *mcdc_delta_map_get(const mcdc_delta_map *m, const char *key, bool *found)
{
    for (size_t i = 0; m && i < m->n; i++) {
        if (strcmp(m->kv[i].key, key) == 0) {
            if (found)
                *found = true;
            return m->kv[i].value;
        }
    }
    if (found)
        *found = false;
    return NULL;
}

/* A map field: an object of strings, or an array of {"key","value"} (checkpoint rows). */
static int map_field(mcdc_delta_map *out, json_t *o, const char *key, const char *what)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            const char *val = NULL;
            char num[32];
            if (json_is_string(x))
                val = json_string_value(x);
            else if (json_is_integer(x)) {
                snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(x));
                val = num;
            } else if (json_is_boolean(x))
                val = json_is_true(x) ? "true" : "false";
            else if (!json_is_null(x))
                return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: value of key '%s' is not a string",
                                      what, key, k);
            if (mcdc_delta_map_set(out, k, val) < 0)
                return MCDC_ENOMEM;
        }
        return 0;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            json_t *k = json_object_get(e, "key");
            json_t *x = json_object_get(e, "value");
            if (!json_is_string(k) || (x && !json_is_null(x) && !json_is_string(x)))
                return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: entry %zu is not a key/value pair",
                                      what, key, i);
            if (mcdc_delta_map_set(out, json_string_value(k),
                                   x && json_is_string(x) ? json_string_value(x) : NULL) < 0)
                return MCDC_ENOMEM;
        }
        return 0;
    }
    return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: not a map", what, key);
}

static int strlist_field(char ***out, size_t *n, bool *present, json_t *o, const char *key,
                         const char *what)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    *n = 0;
    if (present)
        *present = false;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: not an array", what, key);
    if (present)
        *present = true;
    size_t cnt = json_array_size(v);
    *out = calloc(cnt ? cnt : 1, sizeof **out);
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "%s.%s: out of memory", what, key);
    for (size_t i = 0; i < cnt; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e))
            return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: entry %zu is not a string", what, key, i);
        (*out)[i] = strdup(json_string_value(e));
        if (!(*out)[i])
            return mcdc_error_set(MCDC_ENOMEM, "%s.%s: out of memory", what, key);
        (*n)++;
    }
    return 0;
}

static void strlist_free(char **l, size_t n)
{
    if (!l)
        return;
    for (size_t i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

/* ---- parsing ------------------------------------------------------------------------ */

static int parse_dv(mcdc_delta_dv *dv, json_t *o, const char *what)
{
    bool bad = false;
    const char *st = str_field(o, "storageType", &bad);
    const char *p = str_field(o, "pathOrInlineDv", &bad);
    dv->offset = (int32_t)int_field(o, "offset", -1, &bad);
    dv->size_in_bytes = (int32_t)int_field(o, "sizeInBytes", -1, &bad);
    dv->cardinality = int_field(o, "cardinality", -1, &bad);
    if (bad || !st || strlen(st) != 1 || !p || dv->size_in_bytes < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "%s.deletionVector: missing or malformed field", what);
    dv->storage_type = st[0];
    dv->path_or_inline_dv = strdup(p);
    if (!dv->path_or_inline_dv)
        return mcdc_error_set(MCDC_ENOMEM, "%s.deletionVector: out of memory", what);
    return 0;
}

static int parse_file(mcdc_delta_file *f, json_t *o, mcdc_delta_action_kind kind)
{
    const char *what = kind == MCDC_DELTA_ACTION_ADD      ? "add"
                       : kind == MCDC_DELTA_ACTION_REMOVE ? "remove"
                                                          : "cdc";
    bool bad = false;
    int rc;
    f->size = f->modification_time = f->deletion_timestamp = -1;
    f->base_row_id = f->default_row_commit_version = -1;
    const char *path = str_field(o, "path", &bad);
    if (!path || bad)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: missing path", what);
    f->path = strdup(path);
    f->size = int_field(o, "size", -1, &bad);
    f->modification_time = int_field(o, "modificationTime", -1, &bad);
    f->deletion_timestamp = int_field(o, "deletionTimestamp", -1, &bad);
    f->data_change = bool_field(o, "dataChange", kind != MCDC_DELTA_ACTION_CDC, &bad);
    f->extended_file_metadata = bool_field(o, "extendedFileMetadata", false, &bad);
    f->base_row_id = int_field(o, "baseRowId", -1, &bad);
    f->default_row_commit_version = int_field(o, "defaultRowCommitVersion", -1, &bad);
    const char *stats = str_field(o, "stats", &bad);
    if (bad)
        return mcdc_error_set(MCDC_ECORRUPT, "%s %s: a field has the wrong type", what, path);
    if (kind == MCDC_DELTA_ACTION_ADD && f->size < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "add %s: missing size", path);
    if (stats && !(f->stats = strdup(stats)))
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", what);
    if ((rc = map_field(&f->partition_values, o, "partitionValues", what)) < 0)
        return rc;
    if ((rc = map_field(&f->tags, o, "tags", what)) < 0)
        return rc;
    json_t *dv = json_object_get(o, "deletionVector");
    if (dv && json_is_object(dv)) {
        /* a checkpoint row carries an all-null struct for "no DV" */
        json_t *st = json_object_get(dv, "storageType");
        if (st && !json_is_null(st)) {
            if ((rc = parse_dv(&f->dv, dv, what)) < 0)
                return rc;
            f->has_dv = true;
        }
    }
    if (!f->path)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", what);
    return 0;
}

static int parse_metadata(mcdc_delta_metadata *m, json_t *o)
{
    bool bad = false;
    int rc;
    const char *id = str_field(o, "id", &bad);
    const char *schema = str_field(o, "schemaString", &bad);
    if (!id || !schema || bad)
        return mcdc_error_set(MCDC_ECORRUPT, "metaData: missing id or schemaString");
    m->id = strdup(id);
    m->schema_string = strdup(schema);
    m->name = dupstr(str_field(o, "name", &bad));
    m->description = dupstr(str_field(o, "description", &bad));
    json_t *fmt = json_object_get(o, "format");
    m->format_provider = strdup(fmt && json_is_object(fmt) && str_field(fmt, "provider", &bad)
                                    ? str_field(fmt, "provider", &bad)
                                    : "parquet");
    m->created_time = int_field(o, "createdTime", -1, &bad);
    if (bad)
        return mcdc_error_set(MCDC_ECORRUPT, "metaData: a field has the wrong type");
    if (!m->id || !m->schema_string || !m->format_provider)
        return mcdc_error_set(MCDC_ENOMEM, "metaData: out of memory");
    if ((rc = strlist_field(&m->partition_columns, &m->n_partition_columns, NULL, o,
                            "partitionColumns", "metaData")) < 0)
        return rc;
    return map_field(&m->configuration, o, "configuration", "metaData");
}

static int parse_protocol(mcdc_delta_protocol *p, json_t *o)
{
    bool bad = false;
    int rc;
    int64_t r = int_field(o, "minReaderVersion", -1, &bad);
    int64_t w = int_field(o, "minWriterVersion", -1, &bad);
    if (bad || r < 0 || w < 0 || r > 1000 || w > 1000)
        return mcdc_error_set(MCDC_ECORRUPT, "protocol: missing or malformed minReaderVersion/minWriterVersion");
    p->min_reader_version = (int)r;
    p->min_writer_version = (int)w;
    if ((rc = strlist_field(&p->reader_features, &p->n_reader_features, &p->has_reader_features,
                            o, "readerFeatures", "protocol")) < 0)
        return rc;
    return strlist_field(&p->writer_features, &p->n_writer_features, &p->has_writer_features, o,
                         "writerFeatures", "protocol");
}

static int parse_txn(mcdc_delta_txn *t, json_t *o)
{
    bool bad = false;
    const char *app = str_field(o, "appId", &bad);
    t->version = int_field(o, "version", INT64_MIN, &bad);
    t->last_updated = int_field(o, "lastUpdated", -1, &bad);
    if (!app || bad || t->version == INT64_MIN)
        return mcdc_error_set(MCDC_ECORRUPT, "txn: missing or malformed appId or version");
    if (!(t->app_id = strdup(app)))
        return mcdc_error_set(MCDC_ENOMEM, "txn: out of memory");
    return 0;
}

static int parse_domain(mcdc_delta_domain *d, json_t *o)
{
    bool bad = false;
    const char *dom = str_field(o, "domain", &bad);
    const char *conf = str_field(o, "configuration", &bad);
    d->removed = bool_field(o, "removed", false, &bad);
    if (!dom || bad)
        return mcdc_error_set(MCDC_ECORRUPT, "domainMetadata: missing or malformed domain");
    d->domain = strdup(dom);
    d->configuration = strdup(conf ? conf : "");
    if (!d->domain || !d->configuration)
        return mcdc_error_set(MCDC_ENOMEM, "domainMetadata: out of memory");
    return 0;
}

static int parse_sidecar(mcdc_delta_sidecar *s, json_t *o)
{
    bool bad = false;
    const char *p = str_field(o, "path", &bad);
    s->size_in_bytes = int_field(o, "sizeInBytes", -1, &bad);
    s->modification_time = int_field(o, "modificationTime", -1, &bad);
    if (!p || bad)
        return mcdc_error_set(MCDC_ECORRUPT, "sidecar: missing path");
    if (!(s->path = strdup(p)))
        return mcdc_error_set(MCDC_ENOMEM, "sidecar: out of memory");
    return 0;
}

static const struct {
    const char            *name;
    mcdc_delta_action_kind kind;
} action_names[] = {
    { "add", MCDC_DELTA_ACTION_ADD },
    { "remove", MCDC_DELTA_ACTION_REMOVE },
    { "cdc", MCDC_DELTA_ACTION_CDC },
    { "metaData", MCDC_DELTA_ACTION_METADATA },
    { "protocol", MCDC_DELTA_ACTION_PROTOCOL },
    { "txn", MCDC_DELTA_ACTION_TXN },
    { "commitInfo", MCDC_DELTA_ACTION_COMMIT_INFO },
    { "domainMetadata", MCDC_DELTA_ACTION_DOMAIN_METADATA },
    { "checkpointMetadata", MCDC_DELTA_ACTION_CHECKPOINT_METADATA },
    { "sidecar", MCDC_DELTA_ACTION_SIDECAR },
};

/* Null, or an object whose members are all null-ish (a checkpoint row's absent struct). */
static bool nullish(json_t *v, int depth)
{
    if (!v || json_is_null(v))
        return true;
    if (!json_is_object(v) || depth > 8)
        return false;
    const char *k;
    json_t *x;
    json_object_foreach(v, k, x) {
        if (!nullish(x, depth + 1))
            return false;
    }
    return true;
}

/* Parse an already decoded JSON object (used by the checkpoint reader too). */
int mcdc_delta__action_from_json(mcdc_delta_action *out, json_t *root)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(root))
        return mcdc_error_set(MCDC_ECORRUPT, "action is not a JSON object");
    json_t *body = NULL;
    const char *body_name = NULL;
    mcdc_delta_action_kind kind = MCDC_DELTA_ACTION_UNKNOWN;
    for (size_t i = 0; i < sizeof action_names / sizeof action_names[0]; i++) {
        json_t *v = json_object_get(root, action_names[i].name);
        if (v && !json_is_null(v)) {
            if (!json_is_object(v))
                return mcdc_error_set(MCDC_ECORRUPT, "%s: not a JSON object", action_names[i].name);
            /* checkpoint rows: a struct whose fields are all null is an absent action */
            if (json_object_size(v) > 0 && nullish(v, 0))
                continue;
            if (body)
                return mcdc_error_set(MCDC_ECORRUPT, "more than one action in one line (%s and %s)",
                                      body_name, action_names[i].name);
            body = v;
            body_name = action_names[i].name;
            kind = action_names[i].kind;
        }
    }
    out->kind = kind;
    switch (kind) {
    case MCDC_DELTA_ACTION_UNKNOWN:
        return 0;
    case MCDC_DELTA_ACTION_ADD:
    case MCDC_DELTA_ACTION_REMOVE:
    case MCDC_DELTA_ACTION_CDC:
        return parse_file(&out->u.file, body, kind);
    case MCDC_DELTA_ACTION_METADATA:
        return parse_metadata(&out->u.metadata, body);
    case MCDC_DELTA_ACTION_PROTOCOL:
        return parse_protocol(&out->u.protocol, body);
    case MCDC_DELTA_ACTION_TXN:
        return parse_txn(&out->u.txn, body);
    case MCDC_DELTA_ACTION_DOMAIN_METADATA:
        return parse_domain(&out->u.domain, body);
    case MCDC_DELTA_ACTION_SIDECAR:
        return parse_sidecar(&out->u.sidecar, body);
    case MCDC_DELTA_ACTION_CHECKPOINT_METADATA: {
        bool bad = false;
        out->u.checkpoint_version = int_field(body, "version", -1, &bad);
        if (bad || out->u.checkpoint_version < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "checkpointMetadata: missing version");
        return 0;
    }
    case MCDC_DELTA_ACTION_COMMIT_INFO:
        out->u.commit_info = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!out->u.commit_info)
            return mcdc_error_set(MCDC_ENOMEM, "commitInfo: out of memory");
        return 0;
    }
    return 0;
}

int mcdc_delta_action_parse(mcdc_delta_action *out, const char *json, size_t len)
{
    json_error_t jerr;
    memset(out, 0, sizeof *out);
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return mcdc_error_set(MCDC_ECORRUPT, "malformed JSON at column %d: %s", jerr.column,
                              jerr.text);
    int rc = mcdc_delta__action_from_json(out, root);
    json_decref(root);
    return rc;
}

/* ---- freeing and copying ------------------------------------------------------------ */

void mcdc_delta_file_clear(mcdc_delta_file *f)
{
    if (!f)
        return;
    free(f->path);
    free(f->stats);
    mcdc_delta_map_clear(&f->partition_values);
    mcdc_delta_map_clear(&f->tags);
    free(f->dv.path_or_inline_dv);
    memset(f, 0, sizeof *f);
}

static int map_copy(mcdc_delta_map *out, const mcdc_delta_map *in)
{
    for (size_t i = 0; i < in->n; i++)
        if (mcdc_delta_map_set(out, in->kv[i].key, in->kv[i].value) < 0)
            return MCDC_ENOMEM;
    return 0;
}

static int strlist_copy(char ***out, char *const *in, size_t n)
{
    *out = NULL;
    if (!in)
        return 0;
    char **a = calloc(n ? n : 1, sizeof *a);
    if (!a)
        return MCDC_ENOMEM;
    *out = a;
    for (size_t i = 0; i < n; i++)
        if (!(a[i] = strdup(in[i])))
            return MCDC_ENOMEM;
    return 0;
}

int mcdc_delta_protocol_copy(mcdc_delta_protocol *out, const mcdc_delta_protocol *in)
{
    *out = *in;
    out->reader_features = out->writer_features = NULL;
    if (strlist_copy(&out->reader_features, in->reader_features, in->n_reader_features) < 0 ||
        strlist_copy(&out->writer_features, in->writer_features, in->n_writer_features) < 0) {
        mcdc_delta_action a = { .kind = MCDC_DELTA_ACTION_PROTOCOL, .u.protocol = *out };
        mcdc_delta_action_clear(&a);
        memset(out, 0, sizeof *out);
        return mcdc_error_set(MCDC_ENOMEM, "protocol: out of memory");
    }
    return 0;
}

int mcdc_delta_metadata_copy(mcdc_delta_metadata *out, const mcdc_delta_metadata *in)
{
    memset(out, 0, sizeof *out);
    out->n_partition_columns = in->n_partition_columns;
    out->created_time = in->created_time;
    out->id = dupstr(in->id);
    out->name = dupstr(in->name);
    out->description = dupstr(in->description);
    out->format_provider = dupstr(in->format_provider);
    out->schema_string = dupstr(in->schema_string);
    if ((in->id && !out->id) || (in->name && !out->name) ||
        (in->description && !out->description) ||
        (in->format_provider && !out->format_provider) ||
        (in->schema_string && !out->schema_string) ||
        strlist_copy(&out->partition_columns, in->partition_columns, in->n_partition_columns) < 0 ||
        map_copy(&out->configuration, &in->configuration) < 0) {
        mcdc_delta_action a = { .kind = MCDC_DELTA_ACTION_METADATA, .u.metadata = *out };
        if (!out->partition_columns)
            a.u.metadata.n_partition_columns = 0;
        mcdc_delta_action_clear(&a);
        memset(out, 0, sizeof *out);
        return mcdc_error_set(MCDC_ENOMEM, "metaData: out of memory");
    }
    return 0;
}

int mcdc_delta_file_copy(mcdc_delta_file *out, const mcdc_delta_file *in)
{
    *out = *in;
    out->path = out->stats = NULL;
    out->dv.path_or_inline_dv = NULL;
    memset(&out->partition_values, 0, sizeof out->partition_values);
    memset(&out->tags, 0, sizeof out->tags);
    out->path = strdup(in->path);
    out->stats = dupstr(in->stats);
    out->dv.path_or_inline_dv = dupstr(in->dv.path_or_inline_dv);
    if (!out->path || (in->stats && !out->stats) ||
        (in->dv.path_or_inline_dv && !out->dv.path_or_inline_dv) ||
        map_copy(&out->partition_values, &in->partition_values) < 0 ||
        map_copy(&out->tags, &in->tags) < 0) {
        mcdc_delta_file_clear(out);
        return mcdc_error_set(MCDC_ENOMEM, "delta file: out of memory");
    }
    return 0;
}

int mcdc_delta_remove_of(mcdc_delta_action *out, const mcdc_delta_file *f, int64_t now_ms)
{
    memset(out, 0, sizeof *out);
    int rc = mcdc_delta_file_copy(&out->u.file, f);
    if (rc < 0)
        return rc;
    out->kind = MCDC_DELTA_ACTION_REMOVE;
    out->u.file.modification_time = -1;
    out->u.file.deletion_timestamp = now_ms;
    out->u.file.data_change = true;
    out->u.file.extended_file_metadata = true;
    free(out->u.file.stats);
    out->u.file.stats = NULL;
    return 0;
}

void mcdc_delta_action_clear(mcdc_delta_action *a)
{
    if (!a)
        return;
    switch (a->kind) {
    case MCDC_DELTA_ACTION_ADD:
    case MCDC_DELTA_ACTION_REMOVE:
    case MCDC_DELTA_ACTION_CDC:
        mcdc_delta_file_clear(&a->u.file);
        break;
    case MCDC_DELTA_ACTION_METADATA: {
        mcdc_delta_metadata *m = &a->u.metadata;
        free(m->id);
        free(m->name);
        free(m->description);
        free(m->format_provider);
        free(m->schema_string);
        strlist_free(m->partition_columns, m->n_partition_columns);
        mcdc_delta_map_clear(&m->configuration);
        break;
    }
    case MCDC_DELTA_ACTION_PROTOCOL:
        strlist_free(a->u.protocol.reader_features, a->u.protocol.n_reader_features);
        strlist_free(a->u.protocol.writer_features, a->u.protocol.n_writer_features);
        break;
    case MCDC_DELTA_ACTION_TXN:
        free(a->u.txn.app_id);
        break;
    case MCDC_DELTA_ACTION_DOMAIN_METADATA:
        free(a->u.domain.domain);
        free(a->u.domain.configuration);
        break;
    case MCDC_DELTA_ACTION_SIDECAR:
        free(a->u.sidecar.path);
        break;
    case MCDC_DELTA_ACTION_COMMIT_INFO:
        free(a->u.commit_info);
        break;
    default:
        break;
    }
    memset(a, 0, sizeof *a);
}

/* ---- writing ------------------------------------------------------------------------ */

static int put_map(mcdc_buf *b, const mcdc_delta_map *m)
{
    int rc = mcdc_buf_putc(b, '{');
    for (size_t i = 0; rc == 0 && i < m->n; i++) {
        if (i)
            rc = mcdc_buf_putc(b, ',');
        if (!rc)
            rc = mcdc_json_quote(b, m->kv[i].key, strlen(m->kv[i].key));
        if (!rc)
            rc = mcdc_buf_putc(b, ':');
        if (!rc)
            rc = m->kv[i].value ? mcdc_json_quote(b, m->kv[i].value, strlen(m->kv[i].value))
                                : mcdc_buf_puts(b, "null");
    }
    return rc ? rc : mcdc_buf_putc(b, '}');
}

static int put_key_str(mcdc_buf *b, const char *key, const char *val, bool comma)
{
    int rc = mcdc_buf_printf(b, "%s\"%s\":", comma ? "," : "", key);
    return rc ? rc : mcdc_json_quote(b, val, strlen(val));
}

static int put_strlist(mcdc_buf *b, char **l, size_t n)
{
    int rc = mcdc_buf_putc(b, '[');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (i)
            rc = mcdc_buf_putc(b, ',');
        if (!rc)
            rc = mcdc_json_quote(b, l[i], strlen(l[i]));
    }
    return rc ? rc : mcdc_buf_putc(b, ']');
}

static int put_file(mcdc_buf *b, const char *name, const mcdc_delta_file *f,
                    mcdc_delta_action_kind kind)
{
    int rc = mcdc_buf_printf(b, "{\"%s\":{", name);
    if (!rc)
        rc = put_key_str(b, "path", f->path, false);
    if (!rc && (kind != MCDC_DELTA_ACTION_REMOVE || f->extended_file_metadata ||
                f->partition_values.n)) {
        rc = mcdc_buf_puts(b, ",\"partitionValues\":");
        if (!rc)
            rc = put_map(b, &f->partition_values);
    }
    if (!rc && f->size >= 0)
        rc = mcdc_buf_printf(b, ",\"size\":%lld", (long long)f->size);
    if (!rc && kind == MCDC_DELTA_ACTION_ADD)
        rc = mcdc_buf_printf(b, ",\"modificationTime\":%lld", (long long)f->modification_time);
    if (!rc && kind == MCDC_DELTA_ACTION_REMOVE && f->deletion_timestamp >= 0)
        rc = mcdc_buf_printf(b, ",\"deletionTimestamp\":%lld", (long long)f->deletion_timestamp);
    if (!rc)
        rc = mcdc_buf_printf(b, ",\"dataChange\":%s", f->data_change ? "true" : "false");
    if (!rc && kind == MCDC_DELTA_ACTION_REMOVE && f->extended_file_metadata)
        rc = mcdc_buf_puts(b, ",\"extendedFileMetadata\":true");
    if (!rc && f->stats && kind != MCDC_DELTA_ACTION_CDC)
        rc = put_key_str(b, "stats", f->stats, true);
    if (!rc && f->tags.n) {
        rc = mcdc_buf_puts(b, ",\"tags\":");
        if (!rc)
            rc = put_map(b, &f->tags);
    }
    if (!rc && f->has_dv) {
        rc = mcdc_buf_printf(b, ",\"deletionVector\":{\"storageType\":\"%c\",", f->dv.storage_type);
        if (!rc)
            rc = put_key_str(b, "pathOrInlineDv", f->dv.path_or_inline_dv, false);
        if (!rc && f->dv.offset >= 0)
            rc = mcdc_buf_printf(b, ",\"offset\":%d", (int)f->dv.offset);
        if (!rc)
            rc = mcdc_buf_printf(b, ",\"sizeInBytes\":%d,\"cardinality\":%lld}",
                                 (int)f->dv.size_in_bytes, (long long)f->dv.cardinality);
    }
    if (!rc && f->base_row_id >= 0)
        rc = mcdc_buf_printf(b, ",\"baseRowId\":%lld", (long long)f->base_row_id);
    if (!rc && f->default_row_commit_version >= 0)
        rc = mcdc_buf_printf(b, ",\"defaultRowCommitVersion\":%lld",
                             (long long)f->default_row_commit_version);
    return rc ? rc : mcdc_buf_puts(b, "}}");
}

int mcdc_delta_action_to_json(mcdc_buf *b, const mcdc_delta_action *a)
{
    int rc = 0;
    switch (a->kind) {
    case MCDC_DELTA_ACTION_ADD:
        return put_file(b, "add", &a->u.file, a->kind);
    case MCDC_DELTA_ACTION_REMOVE:
        return put_file(b, "remove", &a->u.file, a->kind);
    case MCDC_DELTA_ACTION_CDC:
        return put_file(b, "cdc", &a->u.file, a->kind);
    case MCDC_DELTA_ACTION_METADATA: {
        const mcdc_delta_metadata *m = &a->u.metadata;
        rc = mcdc_buf_puts(b, "{\"metaData\":{");
        if (!rc)
            rc = put_key_str(b, "id", m->id, false);
        if (!rc && m->name)
            rc = put_key_str(b, "name", m->name, true);
        if (!rc && m->description)
            rc = put_key_str(b, "description", m->description, true);
        if (!rc)
            rc = mcdc_buf_puts(b, ",\"format\":{\"provider\":\"parquet\",\"options\":{}}");
        if (!rc)
            rc = put_key_str(b, "schemaString", m->schema_string, true);
        if (!rc)
            rc = mcdc_buf_puts(b, ",\"partitionColumns\":");
        if (!rc)
            rc = put_strlist(b, m->partition_columns, m->n_partition_columns);
        if (!rc)
            rc = mcdc_buf_puts(b, ",\"configuration\":");
        if (!rc)
            rc = put_map(b, &m->configuration);
        if (!rc && m->created_time >= 0)
            rc = mcdc_buf_printf(b, ",\"createdTime\":%lld", (long long)m->created_time);
        return rc ? rc : mcdc_buf_puts(b, "}}");
    }
    case MCDC_DELTA_ACTION_PROTOCOL: {
        const mcdc_delta_protocol *p = &a->u.protocol;
        rc = mcdc_buf_printf(b, "{\"protocol\":{\"minReaderVersion\":%d,\"minWriterVersion\":%d",
                             p->min_reader_version, p->min_writer_version);
        if (!rc && p->has_reader_features) {
            rc = mcdc_buf_puts(b, ",\"readerFeatures\":");
            if (!rc)
                rc = put_strlist(b, p->reader_features, p->n_reader_features);
        }
        if (!rc && p->has_writer_features) {
            rc = mcdc_buf_puts(b, ",\"writerFeatures\":");
            if (!rc)
                rc = put_strlist(b, p->writer_features, p->n_writer_features);
        }
        return rc ? rc : mcdc_buf_puts(b, "}}");
    }
    case MCDC_DELTA_ACTION_TXN:
        rc = mcdc_buf_puts(b, "{\"txn\":{");
        if (!rc)
            rc = put_key_str(b, "appId", a->u.txn.app_id, false);
        if (!rc)
            rc = mcdc_buf_printf(b, ",\"version\":%lld", (long long)a->u.txn.version);
        if (!rc && a->u.txn.last_updated >= 0)
            rc = mcdc_buf_printf(b, ",\"lastUpdated\":%lld", (long long)a->u.txn.last_updated);
        return rc ? rc : mcdc_buf_puts(b, "}}");
    case MCDC_DELTA_ACTION_DOMAIN_METADATA:
        rc = mcdc_buf_puts(b, "{\"domainMetadata\":{");
        if (!rc)
            rc = put_key_str(b, "domain", a->u.domain.domain, false);
        if (!rc)
            rc = put_key_str(b, "configuration", a->u.domain.configuration, true);
        if (!rc)
            rc = mcdc_buf_printf(b, ",\"removed\":%s}}", a->u.domain.removed ? "true" : "false");
        return rc;
    case MCDC_DELTA_ACTION_COMMIT_INFO:
        rc = mcdc_buf_puts(b, "{\"commitInfo\":");
        if (!rc)
            rc = mcdc_buf_puts(b, a->u.commit_info ? a->u.commit_info : "{}");
        return rc ? rc : mcdc_buf_putc(b, '}');
    case MCDC_DELTA_ACTION_SIDECAR:
        rc = mcdc_buf_puts(b, "{\"sidecar\":{");
        if (!rc)
            rc = put_key_str(b, "path", a->u.sidecar.path, false);
        if (!rc)
            rc = mcdc_buf_printf(b, ",\"sizeInBytes\":%lld,\"modificationTime\":%lld}}",
                                 (long long)a->u.sidecar.size_in_bytes,
                                 (long long)a->u.sidecar.modification_time);
        return rc;
    case MCDC_DELTA_ACTION_CHECKPOINT_METADATA:
        return mcdc_buf_printf(b, "{\"checkpointMetadata\":{\"version\":%lld}}",
                               (long long)a->u.checkpoint_version);
    default:
        return mcdc_error_set(MCDC_EINVAL, "delta action: unknown kind %d", (int)a->kind);
    }
}
