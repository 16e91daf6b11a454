/*
 * delta/checkpoint_columns.c: Parquet checkpoint rows decoded column by column straight
 * into actions, with no JSON built per row.
 *
 * The leaves of the action columns are matched once per file against the fields this
 * reader knows (add.path, add.partitionValues.<group>.key, protocol.readerFeatures.<list>.
 * <element>, ...). A row's action is the action column with a leaf that is present (a
 * value, or a non-null list or map); the fields are then read from their leaves' entries.
 * The result is the same as the JSON path's (checkpoint_parquet.c): the same kinds, the
 * same defaults, the same checks and messages. A file whose known fields have a type or
 * shape this decoder does not take (a long stored as a string, a 2-level list, an action
 * column that is not a struct, ...) is reported as such so the caller reads it through
 * the JSON path instead; unknown fields only count for an action's presence, as there.
 */
#include <stdlib.h>
#include <string.h>

#include "delta/internal.h"
#include "mcdc/parquet.h"

enum { T_STR, T_INT, T_BOOL };
enum { SH_SCALAR, SH_SUB, SH_MAPK, SH_MAPV, SH_ELEM };

enum {
    S_PATH, S_SIZE, S_MTIME, S_DTS, S_DCHANGE, S_EXT, S_BRID, S_DRCV, S_STATS, S_PVK, S_PVV,
    S_TGK, S_TGV, S_DVST, S_DVP, S_DVOFF, S_DVSZ, S_DVCARD,
    S_ID, S_NAME, S_DESC, S_SCHEMA, S_PROVIDER, S_PCOLS, S_CONFK, S_CONFV, S_CTIME,
    S_MINR, S_MINW, S_RF, S_WF,
    S_APP, S_VER, S_LU,
    S_DOM, S_DCONF, S_REMOVED,
    S_CPVER,
    S_SCPATH, S_SCSIZE, S_SCMTIME,
    N_SLOTS
};

typedef struct fspec {
    const char *field, *sub;
    int         shape, type, slot;
} fspec;

static const fspec file_specs[] = {
    { "path", NULL, SH_SCALAR, T_STR, S_PATH },
    { "size", NULL, SH_SCALAR, T_INT, S_SIZE },
    { "modificationTime", NULL, SH_SCALAR, T_INT, S_MTIME },
    { "deletionTimestamp", NULL, SH_SCALAR, T_INT, S_DTS },
    { "dataChange", NULL, SH_SCALAR, T_BOOL, S_DCHANGE },
    { "extendedFileMetadata", NULL, SH_SCALAR, T_BOOL, S_EXT },
    { "baseRowId", NULL, SH_SCALAR, T_INT, S_BRID },
    { "defaultRowCommitVersion", NULL, SH_SCALAR, T_INT, S_DRCV },
    { "stats", NULL, SH_SCALAR, T_STR, S_STATS },
    { "partitionValues", NULL, SH_MAPK, T_STR, S_PVK },
    { "partitionValues", NULL, SH_MAPV, T_STR, S_PVV },
    { "tags", NULL, SH_MAPK, T_STR, S_TGK },
    { "tags", NULL, SH_MAPV, T_STR, S_TGV },
    { "deletionVector", "storageType", SH_SUB, T_STR, S_DVST },
    { "deletionVector", "pathOrInlineDv", SH_SUB, T_STR, S_DVP },
    { "deletionVector", "offset", SH_SUB, T_INT, S_DVOFF },
    { "deletionVector", "sizeInBytes", SH_SUB, T_INT, S_DVSZ },
    { "deletionVector", "cardinality", SH_SUB, T_INT, S_DVCARD },
    { NULL, NULL, 0, 0, 0 },
};
static const fspec metadata_specs[] = {
    { "id", NULL, SH_SCALAR, T_STR, S_ID },
    { "name", NULL, SH_SCALAR, T_STR, S_NAME },
    { "description", NULL, SH_SCALAR, T_STR, S_DESC },
    { "schemaString", NULL, SH_SCALAR, T_STR, S_SCHEMA },
    { "format", "provider", SH_SUB, T_STR, S_PROVIDER },
    { "partitionColumns", NULL, SH_ELEM, T_STR, S_PCOLS },
    { "configuration", NULL, SH_MAPK, T_STR, S_CONFK },
    { "configuration", NULL, SH_MAPV, T_STR, S_CONFV },
    { "createdTime", NULL, SH_SCALAR, T_INT, S_CTIME },
    { NULL, NULL, 0, 0, 0 },
};
static const fspec protocol_specs[] = {
    { "minReaderVersion", NULL, SH_SCALAR, T_INT, S_MINR },
    { "minWriterVersion", NULL, SH_SCALAR, T_INT, S_MINW },
    { "readerFeatures", NULL, SH_ELEM, T_STR, S_RF },
    { "writerFeatures", NULL, SH_ELEM, T_STR, S_WF },
    { NULL, NULL, 0, 0, 0 },
};
static const fspec txn_specs[] = {
    { "appId", NULL, SH_SCALAR, T_STR, S_APP },
    { "version", NULL, SH_SCALAR, T_INT, S_VER },
    { "lastUpdated", NULL, SH_SCALAR, T_INT, S_LU },
    { NULL, NULL, 0, 0, 0 },
};
static const fspec domain_specs[] = {
    { "domain", NULL, SH_SCALAR, T_STR, S_DOM },
    { "configuration", NULL, SH_SCALAR, T_STR, S_DCONF },
    { "removed", NULL, SH_SCALAR, T_BOOL, S_REMOVED },
    { NULL, NULL, 0, 0, 0 },
};
static const fspec cpmeta_specs[] = {
    { "version", NULL, SH_SCALAR, T_INT, S_CPVER },
    { NULL, NULL, 0, 0, 0 },
};
static const fspec sidecar_specs[] = {
    { "path", NULL, SH_SCALAR, T_STR, S_SCPATH },
    { "sizeInBytes", NULL, SH_SCALAR, T_INT, S_SCSIZE },
    { "modificationTime", NULL, SH_SCALAR, T_INT, S_SCMTIME },
    { NULL, NULL, 0, 0, 0 },
};

/* The action columns, in the order the JSON path looks for them (actions.c). */
static const struct {
    const char            *name;
    mcdc_delta_action_kind kind;
    const fspec           *specs;
} columns[] = {
    { "add", MCDC_DELTA_ACTION_ADD, file_specs },
    { "remove", MCDC_DELTA_ACTION_REMOVE, file_specs },
    { "metaData", MCDC_DELTA_ACTION_METADATA, metadata_specs },
    { "protocol", MCDC_DELTA_ACTION_PROTOCOL, protocol_specs },
    { "txn", MCDC_DELTA_ACTION_TXN, txn_specs },
    { "domainMetadata", MCDC_DELTA_ACTION_DOMAIN_METADATA, domain_specs },
    { "checkpointMetadata", MCDC_DELTA_ACTION_CHECKPOINT_METADATA, cpmeta_specs },
    { "sidecar", MCDC_DELTA_ACTION_SIDECAR, sidecar_specs },
};
#define N_COLUMNS (sizeof columns / sizeof columns[0])

typedef struct cpc_col {
    bool   selected;
    size_t first, n;        /* its leaves */
    int    leaf[N_SLOTS];   /* leaf of each known field, -1 when the file has none */
    int    defs[N_SLOTS][3];/* a map or list field: defs of the field, its entries and
                             * the leaf's value (max) */
} cpc_col;

typedef struct cpc {
    cpc_col                      col[N_COLUMNS];
    int                         *thr; /* per leaf: def level from which it makes its action
                                       * present */
    const mcdc_parquet_leaf_run *runs;
} cpc;

static bool type_ok(const mcdc_column *t, int want)
{
    switch (want) {
    case T_STR: return t->type == MCDC_TYPE_STRING;
    case T_BOOL: return t->type == MCDC_TYPE_BOOLEAN;
    default:
        return t->type == MCDC_TYPE_BYTE || t->type == MCDC_TYPE_SHORT ||
               t->type == MCDC_TYPE_INT || t->type == MCDC_TYPE_LONG;
    }
}

/* Match one leaf; false when its shape or type is one this decoder does not take. */
static bool match_leaf(cpc_col *c, const fspec *specs, const mcdc_parquet_leaf_info *li,
                       int leaf, char **comp)
{
    size_t d = li->depth;
    bool known = false;
    for (const fspec *s = specs; s->field; s++) {
        if (strcmp(s->field, comp[1]) != 0)
            continue;
        known = true;
        bool fits;
        switch (s->shape) {
        case SH_SCALAR: fits = d == 2 && li->max_rep == 0; break;
        case SH_SUB:
            if (li->kinds[1] != MCDC_PARQUET_PART_STRUCT)
                return false;
            if (d != 3 || strcmp(comp[2], s->sub) != 0)
                continue; /* another sub-field: unknown, as in the JSON path */
            fits = li->max_rep == 0;
            break;
        case SH_MAPK:
        case SH_MAPV:
            if (d != 4 || strcmp(comp[3], s->shape == SH_MAPK ? "key" : "value") != 0) {
                if (d == 4 && (strcmp(comp[3], "key") == 0 || strcmp(comp[3], "value") == 0))
                    continue;
                return false;
            }
            fits = li->kinds[1] == MCDC_PARQUET_PART_MAP && !li->repeated[1] &&
                   li->repeated[2] && !li->repeated[3] && li->max_rep == 1;
            break;
        default:
            fits = d == 4 && li->kinds[1] == MCDC_PARQUET_PART_LIST && !li->repeated[1] &&
                   li->repeated[2] && !li->repeated[3] && li->max_rep == 1;
        }
        if (!fits || !type_ok(&li->type, s->type) || c->leaf[s->slot] >= 0)
            return false;
        c->leaf[s->slot] = leaf;
        if (d == 4) {
            c->defs[s->slot][0] = li->defs[1];
            c->defs[s->slot][1] = li->defs[2];
        }
        c->defs[s->slot][2] = li->max_def;
        return true;
    }
    (void)known;
    return true;
}

/* 1 when the file's action columns can be decoded here, 0 when not, <0 on error. */
static int plan(cpc *p, mcdc_parquet_reader *r)
{
    size_t n = mcdc_parquet_reader_num_leaves(r);
    p->thr = calloc(n ? n : 1, sizeof *p->thr);
    if (!p->thr)
        return mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    for (size_t c = 0; c < N_COLUMNS; c++)
        for (int s = 0; s < N_SLOTS; s++)
            p->col[c].leaf[s] = -1;
    int ok = 1;
    for (size_t l = 0; ok == 1 && l < n; l++) {
        mcdc_parquet_leaf_info li;
        int rc = mcdc_parquet_reader_leaf_info(r, l, &li);
        if (rc < 0)
            return rc;
        if (li.depth < 2 || li.depth > 9)
            return 0;
        char *path = strdup(li.path), *comp[10], *save = NULL;
        if (!path)
            return mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
        size_t k = 0;
        for (char *t = strtok_r(path, ".", &save); t && k < 10; t = strtok_r(NULL, ".", &save))
            comp[k++] = t;
        ok = 0;
        if (k == li.depth && !li.repeated[0] && li.kinds[0] == MCDC_PARQUET_PART_STRUCT) {
            for (size_t c = 0; c < N_COLUMNS; c++) {
                if (strcmp(columns[c].name, comp[0]) != 0)
                    continue;
                cpc_col *col = &p->col[c];
                if (!col->selected) {
                    col->selected = true;
                    col->first = l;
                }
                if (col->first + col->n != l)
                    break; /* leaves of one column are contiguous */
                col->n++;
                ok = match_leaf(col, columns[c].specs, &li, (int)l, comp);
                break;
            }
        }
        /* present from: a non-null list or map (its first repeated component's parent),
         * else a value */
        p->thr[l] = li.max_def;
        for (size_t c = 1; c < li.depth; c++)
            if (li.repeated[c]) {
                p->thr[l] = li.defs[c - 1];
                break;
            }
        free(path);
    }
    return ok;
}

/* ---- field readers over the row's runs -------------------------------------------- */

static const mcdc_value *cell(const cpc *p, const cpc_col *c, int slot)
{
    int l = c->leaf[slot];
    if (l < 0 || p->runs[l].vals[0].is_null)
        return NULL;
    return &p->runs[l].vals[0];
}

static char *dupv(const mcdc_value *v)
{
    char *s = malloc(v->v.s.len + 1);
    if (s) {
        memcpy(s, v->v.s.ptr, v->v.s.len);
        s[v->v.s.len] = '\0';
    }
    return s;
}

static int64_t intv(const cpc *p, const cpc_col *c, int slot, int64_t dflt)
{
    const mcdc_value *v = cell(p, c, slot);
    return v ? v->v.i : dflt;
}

static bool boolv(const cpc *p, const cpc_col *c, int slot, bool dflt)
{
    const mcdc_value *v = cell(p, c, slot);
    return v ? v->v.b : dflt;
}

static int map_of(mcdc_delta_map *out, const cpc *p, const cpc_col *c, int ks, int vs,
                  const char *what, const char *key)
{
    int kl = c->leaf[ks], vl = c->leaf[vs];
    if (kl < 0)
        return 0;
    const mcdc_parquet_leaf_run *kr = &p->runs[kl], *vr = vl >= 0 ? &p->runs[vl] : NULL;
    if (kr->def[0] < c->defs[ks][1])
        return 0; /* null or empty */
    if (vr && vr->n != kr->n)
        return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: keys and values disagree", what, key);
    char *kb = NULL, *vb = NULL;
    for (size_t i = 0; i < kr->n; i++) {
        if (kr->vals[i].is_null)
            return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: entry %zu is not a key/value pair",
                                  what, key, i);
        kb = dupv(&kr->vals[i]);
        vb = vr && !vr->vals[i].is_null ? dupv(&vr->vals[i]) : NULL;
        int rc = !kb || (vr && !vr->vals[i].is_null && !vb)
                     ? MCDC_ENOMEM
                     : mcdc_delta_map_set(out, kb, vb);
        free(kb);
        free(vb);
        if (rc < 0)
            return rc == MCDC_ENOMEM ? mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", what) : rc;
    }
    return 0;
}

static int list_of(char ***out, size_t *n, bool *present, const cpc *p, const cpc_col *c,
                   int slot, const char *what, const char *key)
{
    *out = NULL;
    *n = 0;
    if (present)
        *present = false;
    int l = c->leaf[slot];
    if (l < 0)
        return 0;
    const mcdc_parquet_leaf_run *run = &p->runs[l];
    if (run->def[0] < c->defs[slot][0])
        return 0;
    if (present)
        *present = true;
    size_t cnt = run->def[0] < c->defs[slot][1] ? 0 : run->n;
    *out = calloc(cnt ? cnt : 1, sizeof **out);
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "%s.%s: out of memory", what, key);
    for (size_t i = 0; i < cnt; i++) {
        if (run->vals[i].is_null)
            return mcdc_error_set(MCDC_ECORRUPT, "%s.%s: entry %zu is not a string", what, key, i);
        if (!((*out)[i] = dupv(&run->vals[i])))
            return mcdc_error_set(MCDC_ENOMEM, "%s.%s: out of memory", what, key);
        (*n)++;
    }
    return 0;
}

/* ---- actions ---------------------------------------------------------------------- */

static int file_of(mcdc_delta_file *f, const cpc *p, const cpc_col *c, mcdc_delta_action_kind kind)
{
    const char *what = kind == MCDC_DELTA_ACTION_ADD ? "add" : "remove";
    int rc;
    f->size = f->modification_time = f->deletion_timestamp = -1;
    f->base_row_id = f->default_row_commit_version = -1;
    const mcdc_value *path = cell(p, c, S_PATH);
    if (!path)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: missing path", what);
    if (!(f->path = dupv(path)))
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", what);
    f->size = intv(p, c, S_SIZE, -1);
    f->modification_time = intv(p, c, S_MTIME, -1);
    f->deletion_timestamp = intv(p, c, S_DTS, -1);
    f->data_change = boolv(p, c, S_DCHANGE, true);
    f->extended_file_metadata = boolv(p, c, S_EXT, false);
    f->base_row_id = intv(p, c, S_BRID, -1);
    f->default_row_commit_version = intv(p, c, S_DRCV, -1);
    if (kind == MCDC_DELTA_ACTION_ADD && f->size < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "add %s: missing size", f->path);
    const mcdc_value *stats = cell(p, c, S_STATS);
    if (stats && !(f->stats = dupv(stats)))
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", what);
    if ((rc = map_of(&f->partition_values, p, c, S_PVK, S_PVV, what, "partitionValues")) < 0)
        return rc;
    if ((rc = map_of(&f->tags, p, c, S_TGK, S_TGV, what, "tags")) < 0)
        return rc;
    const mcdc_value *st = cell(p, c, S_DVST);
    if (st) {
        const mcdc_value *pv = cell(p, c, S_DVP);
        mcdc_delta_dv *dv = &f->dv;
        dv->offset = (int32_t)intv(p, c, S_DVOFF, -1);
        dv->size_in_bytes = (int32_t)intv(p, c, S_DVSZ, -1);
        dv->cardinality = intv(p, c, S_DVCARD, -1);
        if (st->v.s.len != 1 || memchr(st->v.s.ptr, '\0', 1) || !pv || dv->size_in_bytes < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s.deletionVector: missing or malformed field",
                                  what);
        dv->storage_type = st->v.s.ptr[0];
        if (!(dv->path_or_inline_dv = dupv(pv)))
            return mcdc_error_set(MCDC_ENOMEM, "%s.deletionVector: out of memory", what);
        f->has_dv = true;
    }
    return 0;
}

static int metadata_of(mcdc_delta_metadata *m, const cpc *p, const cpc_col *c)
{
    int rc;
    const mcdc_value *id = cell(p, c, S_ID), *schema = cell(p, c, S_SCHEMA);
    if (!id || !schema)
        return mcdc_error_set(MCDC_ECORRUPT, "metaData: missing id or schemaString");
    m->id = dupv(id);
    m->schema_string = dupv(schema);
    const mcdc_value *name = cell(p, c, S_NAME), *desc = cell(p, c, S_DESC);
    const mcdc_value *prov = cell(p, c, S_PROVIDER);
    m->name = name ? dupv(name) : NULL;
    m->description = desc ? dupv(desc) : NULL;
    m->format_provider = prov ? dupv(prov) : strdup("parquet");
    m->created_time = intv(p, c, S_CTIME, -1);
    if (!m->id || !m->schema_string || !m->format_provider || (name && !m->name) ||
        (desc && !m->description))
        return mcdc_error_set(MCDC_ENOMEM, "metaData: out of memory");
    if ((rc = list_of(&m->partition_columns, &m->n_partition_columns, NULL, p, c, S_PCOLS,
                      "metaData", "partitionColumns")) < 0)
        return rc;
    return map_of(&m->configuration, p, c, S_CONFK, S_CONFV, "metaData", "configuration");
}

static int protocol_of(mcdc_delta_protocol *pr, const cpc *p, const cpc_col *c)
{
    int rc;
    int64_t r = intv(p, c, S_MINR, -1), w = intv(p, c, S_MINW, -1);
    if (r < 0 || w < 0 || r > 1000 || w > 1000)
        return mcdc_error_set(MCDC_ECORRUPT, "protocol: missing or malformed minReaderVersion/minWriterVersion");
    pr->min_reader_version = (int)r;
    pr->min_writer_version = (int)w;
    if ((rc = list_of(&pr->reader_features, &pr->n_reader_features, &pr->has_reader_features, p,
                      c, S_RF, "protocol", "readerFeatures")) < 0)
        return rc;
    return list_of(&pr->writer_features, &pr->n_writer_features, &pr->has_writer_features, p, c,
                   S_WF, "protocol", "writerFeatures");
}

static int decode_row(mcdc_delta_action *out, const cpc *p)
{
    memset(out, 0, sizeof *out);
    const cpc_col *body = NULL;
    size_t bi = 0;
    for (size_t i = 0; i < N_COLUMNS; i++) {
        const cpc_col *c = &p->col[i];
        if (!c->selected)
            continue;
        bool present = false;
        for (size_t l = c->first; !present && l < c->first + c->n; l++)
            present = p->runs[l].def[0] >= p->thr[l];
        if (!present)
            continue;
        if (body)
            return mcdc_error_set(MCDC_ECORRUPT, "more than one action in one line (%s and %s)",
                                  columns[bi].name, columns[i].name);
        body = c;
        bi = i;
    }
    if (!body)
        return 0;
    out->kind = columns[bi].kind;
    switch (out->kind) {
    case MCDC_DELTA_ACTION_ADD:
    case MCDC_DELTA_ACTION_REMOVE: return file_of(&out->u.file, p, body, out->kind);
    case MCDC_DELTA_ACTION_METADATA: return metadata_of(&out->u.metadata, p, body);
    case MCDC_DELTA_ACTION_PROTOCOL: return protocol_of(&out->u.protocol, p, body);
    case MCDC_DELTA_ACTION_TXN: {
        mcdc_delta_txn *t = &out->u.txn;
        const mcdc_value *app = cell(p, body, S_APP);
        t->version = intv(p, body, S_VER, INT64_MIN);
        t->last_updated = intv(p, body, S_LU, -1);
        if (!app || t->version == INT64_MIN)
            return mcdc_error_set(MCDC_ECORRUPT, "txn: missing or malformed appId or version");
        if (!(t->app_id = dupv(app)))
            return mcdc_error_set(MCDC_ENOMEM, "txn: out of memory");
        return 0;
    }
    case MCDC_DELTA_ACTION_DOMAIN_METADATA: {
        mcdc_delta_domain *d = &out->u.domain;
        const mcdc_value *dom = cell(p, body, S_DOM), *conf = cell(p, body, S_DCONF);
        d->removed = boolv(p, body, S_REMOVED, false);
        if (!dom)
            return mcdc_error_set(MCDC_ECORRUPT, "domainMetadata: missing or malformed domain");
        d->domain = dupv(dom);
        d->configuration = conf ? dupv(conf) : strdup("");
        if (!d->domain || !d->configuration)
            return mcdc_error_set(MCDC_ENOMEM, "domainMetadata: out of memory");
        return 0;
    }
    case MCDC_DELTA_ACTION_CHECKPOINT_METADATA:
        out->u.checkpoint_version = intv(p, body, S_CPVER, -1);
        if (out->u.checkpoint_version < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "checkpointMetadata: missing version");
        return 0;
    case MCDC_DELTA_ACTION_SIDECAR: {
        mcdc_delta_sidecar *s = &out->u.sidecar;
        const mcdc_value *path = cell(p, body, S_SCPATH);
        s->size_in_bytes = intv(p, body, S_SCSIZE, -1);
        s->modification_time = intv(p, body, S_SCMTIME, -1);
        if (!path)
            return mcdc_error_set(MCDC_ECORRUPT, "sidecar: missing path");
        if (!(s->path = dupv(path)))
            return mcdc_error_set(MCDC_ENOMEM, "sidecar: out of memory");
        return 0;
    }
    default: return 0;
    }
}

int mcdc_delta__read_parquet_columns(mcdc_parquet_reader *r, const char *path,
                                     mcdc_delta__action_cb cb, void *payload)
{
    cpc p;
    memset(&p, 0, sizeof p);
    int rc = plan(&p, r);
    if (rc <= 0) {
        free(p.thr);
        return rc < 0 ? rc : 1;
    }
    int64_t row = 0;
    rc = 0;
    while (rc == 0) {
        rc = mcdc_parquet_reader_next_leaves(r, &p.runs);
        if (rc <= 0)
            break;
        rc = 0;
        row++;
        mcdc_delta_action a;
        rc = decode_row(&a, &p);
        if (rc < 0) {
            mcdc_error_prefix("%s: row %lld", path, (long long)row);
        } else {
            rc = cb(&a, payload);
            if (rc < 0 && !strstr(mcdc_error_last()->message, path))
                mcdc_error_prefix("%s: row %lld", path, (long long)row);
        }
        mcdc_delta_action_clear(&a);
    }
    free(p.thr);
    return rc < 0 ? rc : 0;
}
