/*
 * delta/snapshot.c: build a table snapshot from _delta_log (PROTOCOL "Action
 * Reconciliation").
 *
 * Folds the newest usable checkpoint at or below the target version and the JSON commits
 * after it into one mcdc_delta_snapshot: the latest protocol and metaData win, the latest
 * txn per appId wins, domains follow their latest action (removed ones drop out), and file
 * actions are keyed by (path, deletion vector id): a key is live when its newest action is
 * an add. Never writes. The snapshot comes back whole or not at all.
 *
 * Replay invariants:
 * (S1) the commits after the checkpoint are contiguous up to the target; a gap is
 *      MCDC_ECORRUPT naming the missing version.
 * (S2) a checkpoint that cannot be read makes replay fall back to an older checkpoint,
 *      or to version 0 when every commit is still there; otherwise its error stands.
 * (S3) the reader-feature gate runs on the final protocol: a table we cannot read
 *      correctly is refused (MCDC_EUNSUPPORTED naming the feature).
 * Cost: O(actions) with a hash table over file keys; one listing of _delta_log.
 * mcdc_delta_snapshot_open() itself lives in snapshot_cache.c, which calls the full load
 * here only when it has no usable cached state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "delta/internal.h"
#include "mcdc/log.h"

/* ---- replay state ------------------------------------------------------------------- */

typedef struct entry {
    mcdc_delta_file f;      /* the newest action for this key */
    bool            is_add; /* add (live) or remove (tombstone) */
    bool            own_key; /* key is owned (a file with a DV) */
    char           *key;    /* path [+ "\x1f" + dv id]: owned with a DV, else f.path */
} entry;

/* A hash slot: the key's hash beside the entry index, so a probe touches the entry (and
 * its key) only when the hashes match. */
typedef struct slot {
    uint64_t hash;
    size_t   idx; /* SIZE_MAX when empty */
} slot;

typedef struct replay {
    mcdc_delta_protocol protocol;
    bool                has_protocol;
    mcdc_delta_metadata metadata;
    bool                has_metadata;
    entry              *entries;
    size_t              n_entries, cap_entries;
    slot               *slots; /* hash slots over entries */
    size_t              n_slots;
    mcdc_delta_txn     *txns;
    size_t              n_txns, cap_txns;
    mcdc_delta_domain  *domains;
    size_t              n_domains, cap_domains;
    bool                in_checkpoint; /* actions come from a checkpoint */
} replay;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static void protocol_clear(mcdc_delta_protocol *p)
{
    mcdc_delta_action a = { .kind = MCDC_DELTA_ACTION_PROTOCOL };
    a.u.protocol = *p;
    mcdc_delta_action_clear(&a);
    memset(p, 0, sizeof *p);
}

static void metadata_clear(mcdc_delta_metadata *m)
{
    mcdc_delta_action a = { .kind = MCDC_DELTA_ACTION_METADATA };
    a.u.metadata = *m;
    mcdc_delta_action_clear(&a);
    memset(m, 0, sizeof *m);
}

static void replay_free(replay *r)
{
    if (r->has_protocol)
        protocol_clear(&r->protocol);
    if (r->has_metadata)
        metadata_clear(&r->metadata);
    for (size_t i = 0; i < r->n_entries; i++) {
        if (r->entries[i].own_key)
            free(r->entries[i].key);
        mcdc_delta_file_clear(&r->entries[i].f);
    }
    free(r->entries);
    free(r->slots);
    for (size_t i = 0; i < r->n_txns; i++)
        free(r->txns[i].app_id);
    free(r->txns);
    for (size_t i = 0; i < r->n_domains; i++) {
        free(r->domains[i].domain);
        free(r->domains[i].configuration);
    }
    free(r->domains);
    memset(r, 0, sizeof *r);
}

/* The key of @p f: its path (borrowed) without a DV, else a new string. */
static char *file_key(const mcdc_delta_file *f)
{
    if (!f->has_dv)
        return f->path;
    size_t n = strlen(f->path) + strlen(f->dv.path_or_inline_dv) + 32;
    char *k = malloc(n);
    if (!k)
        return NULL;
    if (f->dv.offset >= 0)
        snprintf(k, n, "%s\x1f%c%s@%d", f->path, f->dv.storage_type, f->dv.path_or_inline_dv,
                 (int)f->dv.offset);
    else
        snprintf(k, n, "%s\x1f%c%s", f->path, f->dv.storage_type, f->dv.path_or_inline_dv);
    return k;
}

static int rehash(replay *r, size_t n_slots)
{
    slot *s = malloc(n_slots * sizeof *s);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
    for (size_t i = 0; i < n_slots; i++)
        s[i].idx = SIZE_MAX;
    for (size_t i = 0; i < r->n_slots; i++) {
        if (r->slots[i].idx == SIZE_MAX)
            continue;
        size_t h = (size_t)r->slots[i].hash & (n_slots - 1);
        while (s[h].idx != SIZE_MAX)
            h = (h + 1) & (n_slots - 1);
        s[h] = r->slots[i];
    }
    free(r->slots);
    r->slots = s;
    r->n_slots = n_slots;
    return 0;
}

static int apply_file(replay *r, mcdc_delta_file *f, bool is_add)
{
    char *key = file_key(f);
    if (!key)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
    if ((r->n_entries + 1) * 2 > r->n_slots) {
        int rc = rehash(r, r->n_slots ? r->n_slots * 2 : 1024);
        if (rc < 0) {
            if (f->has_dv)
                free(key);
            return rc;
        }
    }
    uint64_t hv = hash_str(key);
    size_t h = (size_t)hv & (r->n_slots - 1);
    while (r->slots[h].idx != SIZE_MAX) {
        entry *e = &r->entries[r->slots[h].idx];
        if (r->slots[h].hash == hv && strcmp(e->key, key) == 0) {
            if (f->has_dv)
                free(key);
            else
                e->key = f->path; /* the old path goes with the old action */
            mcdc_delta_file_clear(&e->f);
            e->f = *f;
            e->is_add = is_add;
            memset(f, 0, sizeof *f);
            return 0;
        }
        h = (h + 1) & (r->n_slots - 1);
    }
    if (r->n_entries == r->cap_entries) {
        size_t cap = r->cap_entries ? r->cap_entries * 2 : 256;
        entry *e = realloc(r->entries, cap * sizeof *e);
        if (!e) {
            if (f->has_dv)
                free(key);
            return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
        }
        r->entries = e;
        r->cap_entries = cap;
    }
    r->slots[h].idx = r->n_entries;
    r->slots[h].hash = hv;
    entry *e = &r->entries[r->n_entries++];
    e->f = *f;
    e->is_add = is_add;
    e->own_key = f->has_dv;
    e->key = key;
    memset(f, 0, sizeof *f);
    return 0;
}

static int apply_txn(replay *r, mcdc_delta_txn *t)
{
    for (size_t i = 0; i < r->n_txns; i++) {
        if (strcmp(r->txns[i].app_id, t->app_id) == 0) {
            free(r->txns[i].app_id);
            r->txns[i] = *t;
            memset(t, 0, sizeof *t);
            return 0;
        }
    }
    if (r->n_txns == r->cap_txns) {
        size_t cap = r->cap_txns ? r->cap_txns * 2 : 8;
        mcdc_delta_txn *x = realloc(r->txns, cap * sizeof *x);
        if (!x)
            return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
        r->txns = x;
        r->cap_txns = cap;
    }
    r->txns[r->n_txns++] = *t;
    memset(t, 0, sizeof *t);
    return 0;
}

static int apply_domain(replay *r, mcdc_delta_domain *d)
{
    for (size_t i = 0; i < r->n_domains; i++) {
        if (strcmp(r->domains[i].domain, d->domain) == 0) {
            free(r->domains[i].domain);
            free(r->domains[i].configuration);
            r->domains[i] = *d;
            memset(d, 0, sizeof *d);
            return 0;
        }
    }
    if (r->n_domains == r->cap_domains) {
        size_t cap = r->cap_domains ? r->cap_domains * 2 : 8;
        mcdc_delta_domain *x = realloc(r->domains, cap * sizeof *x);
        if (!x)
            return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
        r->domains = x;
        r->cap_domains = cap;
    }
    r->domains[r->n_domains++] = *d;
    memset(d, 0, sizeof *d);
    return 0;
}

bool mcdc_delta__commit_action_allowed(const mcdc_delta_action *a)
{
    return a->kind != MCDC_DELTA_ACTION_CHECKPOINT_METADATA && a->kind != MCDC_DELTA_ACTION_SIDECAR;
}

static int apply_action(mcdc_delta_action *a, void *payload)
{
    replay *r = payload;
    switch (a->kind) {
    case MCDC_DELTA_ACTION_PROTOCOL:
        if (r->has_protocol)
            protocol_clear(&r->protocol);
        r->protocol = a->u.protocol;
        r->has_protocol = true;
        break;
    case MCDC_DELTA_ACTION_METADATA:
        if (r->has_metadata)
            metadata_clear(&r->metadata);
        r->metadata = a->u.metadata;
        r->has_metadata = true;
        break;
    case MCDC_DELTA_ACTION_ADD:
    case MCDC_DELTA_ACTION_REMOVE: {
        int rc = apply_file(r, &a->u.file, a->kind == MCDC_DELTA_ACTION_ADD);
        if (rc < 0)
            return rc;
        break;
    }
    case MCDC_DELTA_ACTION_TXN: {
        int rc = apply_txn(r, &a->u.txn);
        if (rc < 0)
            return rc;
        break;
    }
    case MCDC_DELTA_ACTION_DOMAIN_METADATA: {
        int rc = apply_domain(r, &a->u.domain);
        if (rc < 0)
            return rc;
        break;
    }
    case MCDC_DELTA_ACTION_CHECKPOINT_METADATA:
    case MCDC_DELTA_ACTION_SIDECAR:
        if (!r->in_checkpoint)
            return mcdc_error_set(MCDC_ECORRUPT, "%s action in a commit file (only checkpoints "
                                  "may hold it)", a->kind == MCDC_DELTA_ACTION_SIDECAR
                                                      ? "sidecar" : "checkpointMetadata");
        return 0; /* handled by the checkpoint reader */
    default:
        return 0; /* commitInfo, cdc and unknown actions do not change the state */
    }
    a->kind = MCDC_DELTA_ACTION_UNKNOWN; /* ownership moved into the state */
    return 0;
}

/* ---- reader features ---------------------------------------------------------------- */

static const char *const readable_features[] = {
    "columnMapping", "deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck",
    "typeWidening", "typeWidening-preview", "variantType", "variantType-preview",
};

/* Every delta.typeChanges entry of the schema (any depth) is a widening this build
 * converts (PROTOCOL.md "Type Widening", reader requirements). */
static int check_type_changes(json_t *type, int depth)
{
    if (depth > 64 || !json_is_object(type))
        return 0;
    json_t *fields = json_object_get(type, "fields");
    json_t *sub[] = { json_object_get(type, "elementType"), json_object_get(type, "keyType"),
                      json_object_get(type, "valueType") };
    for (size_t k = 0; k < 3; k++) {
        int rc = check_type_changes(sub[k], depth + 1);
        if (rc < 0)
            return rc;
    }
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        json_t *tc = json_object_get(json_object_get(f, "metadata"), "delta.typeChanges");
        size_t k;
        json_t *e;
        json_array_foreach(tc, k, e) {
            const char *from = json_string_value(json_object_get(e, "fromType"));
            const char *to = json_string_value(json_object_get(e, "toType"));
            mcdc_column a = { 0 }, b = { 0 };
            if (!from || !to || mcdc_type_parse(&a, from) < 0 || mcdc_type_parse(&b, to) < 0 ||
                !mcdc_delta_type_widens(&a, &b))
                return mcdc_error_set(MCDC_EUNSUPPORTED, "column %s: type change from %s to %s "
                                      "is not one this build reads",
                                      json_string_value(json_object_get(f, "name")),
                                      from ? from : "?", to ? to : "?");
        }
        int rc = check_type_changes(json_object_get(f, "type"), depth + 1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Column mapping is supported by reader version 2, or 3 with the columnMapping feature
 * (PROTOCOL.md "Column Mapping"); elsewhere delta.columnMapping.mode means nothing. */
static bool cm_supported(const mcdc_delta_protocol *p)
{
    if (p->min_reader_version == 2)
        return true;
    for (size_t i = 0; p->min_reader_version >= 3 && i < p->n_reader_features; i++)
        if (strcmp(p->reader_features[i], "columnMapping") == 0)
            return true;
    return false;
}

mcdc_delta_cm_mode mcdc_delta__cm_mode(const mcdc_delta_protocol *p, const mcdc_delta_map *conf)
{
    const char *mode = mcdc_delta_map_get(conf, "delta.columnMapping.mode", NULL);
    if (!mode || !cm_supported(p))
        return MCDC_DELTA_CM_NONE;
    return strcmp(mode, "name") == 0 ? MCDC_DELTA_CM_NAME
           : strcmp(mode, "id") == 0 ? MCDC_DELTA_CM_ID
                                     : MCDC_DELTA_CM_NONE;
}

int mcdc_delta_check_readable(const mcdc_delta_protocol *p, const mcdc_delta_metadata *m)
{
    if (p->min_reader_version > 3)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "table needs Delta reader version %d; this build "
                              "reads up to 3", p->min_reader_version);
    if (p->min_reader_version == 3) {
        for (size_t i = 0; i < p->n_reader_features; i++) {
            bool ok = false;
            for (size_t k = 0; k < sizeof readable_features / sizeof readable_features[0]; k++)
                ok |= strcmp(p->reader_features[i], readable_features[k]) == 0;
            if (!ok)
                return mcdc_error_set(MCDC_EUNSUPPORTED, "table needs the Delta reader feature "
                                      "'%s', which this build does not implement",
                                      p->reader_features[i]);
        }
    }
    if (m && m->schema_string && strstr(m->schema_string, "delta.typeChanges")) {
        json_t *root = json_loads(m->schema_string, 0, NULL);
        int rc = check_type_changes(root, 0);
        json_decref(root);
        if (rc < 0)
            return rc;
    }
    if (m && cm_supported(p)) {
        const char *mode = mcdc_delta_map_get(&m->configuration, "delta.columnMapping.mode", NULL);
        if (mode && strcmp(mode, "none") != 0 && strcmp(mode, "name") != 0 &&
            strcmp(mode, "id") != 0)
            return mcdc_error_set(MCDC_EUNSUPPORTED, "unknown column mapping mode '%s'", mode);
    }
    return 0;
}

/* ---- snapshot ----------------------------------------------------------------------- */

static int cmp_file_path(const void *a, const void *b)
{
    return strcmp(((const mcdc_delta_file *)a)->path, ((const mcdc_delta_file *)b)->path);
}

static int cmp_txn(const void *a, const void *b)
{
    return strcmp(((const mcdc_delta_txn *)a)->app_id, ((const mcdc_delta_txn *)b)->app_id);
}

void mcdc_delta_snapshot_free(mcdc_delta_snapshot *s)
{
    if (!s || !mcdc_delta__snapshot_unref(s))
        return;
    free(s->table_path);
    protocol_clear(&s->protocol);
    metadata_clear(&s->metadata);
    mcdc_delta_schema_free(s->schema);
    for (size_t i = 0; i < s->n_files; i++)
        mcdc_delta_file_clear(&s->files[i]);
    free(s->files);
    for (size_t i = 0; i < s->n_tombstones; i++)
        mcdc_delta_file_clear(&s->tombstones[i]);
    free(s->tombstones);
    for (size_t i = 0; i < s->n_txns; i++)
        free(s->txns[i].app_id);
    free(s->txns);
    for (size_t i = 0; i < s->n_domains; i++) {
        free(s->domains[i].domain);
        free(s->domains[i].configuration);
    }
    free(s->domains);
    free(s);
}

/* Move the replay state into a snapshot. */
static int finish(mcdc_delta_snapshot *s, replay *r)
{
    s->protocol = r->protocol;
    r->has_protocol = false;
    s->metadata = r->metadata;
    r->has_metadata = false;
    size_t n_add = 0;
    for (size_t i = 0; i < r->n_entries; i++)
        n_add += r->entries[i].is_add;
    s->files = calloc(n_add ? n_add : 1, sizeof *s->files);
    s->tombstones = calloc(r->n_entries - n_add ? r->n_entries - n_add : 1, sizeof *s->tombstones);
    if (!s->files || !s->tombstones)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
    for (size_t i = 0; i < r->n_entries; i++) {
        if (r->entries[i].is_add)
            s->files[s->n_files++] = r->entries[i].f;
        else
            s->tombstones[s->n_tombstones++] = r->entries[i].f;
        memset(&r->entries[i].f, 0, sizeof r->entries[i].f);
    }
    qsort(s->files, s->n_files, sizeof *s->files, cmp_file_path);
    size_t nd = 0;
    for (size_t i = 0; i < r->n_domains; i++) {
        if (r->domains[i].removed) {
            free(r->domains[i].domain);
            free(r->domains[i].configuration);
        } else {
            r->domains[nd++] = r->domains[i];
        }
    }
    s->domains = r->domains;
    s->n_domains = nd;
    r->domains = NULL;
    r->n_domains = 0;
    s->txns = r->txns;
    s->n_txns = r->n_txns;
    r->txns = NULL;
    r->n_txns = 0;
    if (s->n_txns)
        qsort(s->txns, s->n_txns, sizeof *s->txns, cmp_txn);
    s->column_mapping = mcdc_delta__cm_mode(&s->protocol, &s->metadata.configuration);
    return mcdc_delta_schema_parse(&s->schema, s->metadata.schema_string);
}

static bool has_commit(const mcdc_delta__listing *l, int64_t v, size_t *idx)
{
    size_t lo = 0, hi = l->n_commits;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->commits[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (idx)
        *idx = lo;
    return lo < l->n_commits && l->commits[lo] == v;
}

/* Replay from checkpoint @p cp (version -1: none) and commits up to @p target. */
static int replay_range(replay *r, const char *table, const char *logdir,
                        const mcdc_delta__listing *l, const mcdc_delta__cp_choice *cp,
                        int64_t target, bool *cp_failed)
{
    int rc = 0;
    *cp_failed = false;
    if (cp->version >= 0) {
        r->in_checkpoint = true;
        rc = mcdc_delta__read_checkpoint(table, cp, apply_action, r);
        r->in_checkpoint = false;
        if (rc < 0) {
            *cp_failed = true;
            return rc;
        }
    }
    char name[32];
    for (int64_t v = cp->version + 1; v <= target; v++) {
        if (!has_commit(l, v, NULL)) {
            if (cp->version < 0 && v == 0)
                return mcdc_error_set(MCDC_ECORRUPT, "%s: no checkpoint and no commit 0 "
                                      "(00000000000000000000.json); the log starts later",
                                      logdir);
            return mcdc_error_set(MCDC_ECORRUPT, "%s: version %lld is missing: the commits "
                                  "after version %lld are not contiguous up to %lld", logdir,
                                  (long long)v, (long long)(v - 1), (long long)target);
        }
        mcdc_delta__commit_name(name, v);
        char *path = mcdc_delta__join(logdir, name);
        if (!path)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        rc = mcdc_delta__read_json_actions(path, apply_action, r);
        free(path);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int mcdc_delta_latest_version(int64_t *out, const char *path)
{
    mcdc_delta__listing l;
    *out = -1;
    int rc = mcdc_delta__list(&l, path);
    if (rc < 0)
        return rc;
    int64_t v = -1;
    if (l.n_commits)
        v = l.commits[l.n_commits - 1];
    if (l.n_cps && l.cps[l.n_cps - 1].version > v)
        v = l.cps[l.n_cps - 1].version;
    mcdc_delta__listing_free(&l);
    if (v < 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "%s: _delta_log holds no commit", path);
    *out = v;
    return 0;
}

int mcdc_delta__snapshot_load(mcdc_delta_snapshot **out, const char *path, int64_t version,
                              mcdc_delta__file_id *id)
{
    *out = NULL;
    mcdc_delta__file_id id_before = { 0 };
    if (id)
        memset(id, 0, sizeof *id);
    mcdc_delta__listing l;
    int rc = mcdc_delta__list(&l, path);
    if (rc < 0)
        return rc;
    char *logdir = mcdc_delta__join(path, "_delta_log");
    mcdc_delta_snapshot *s = calloc(1, sizeof *s);
    replay r = { 0 };
    char *tpath = NULL;
    if (!logdir || !s) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto done;
    }
    int64_t latest = -1;
    if (l.n_commits)
        latest = l.commits[l.n_commits - 1];
    if (l.n_cps && l.cps[l.n_cps - 1].version > latest)
        latest = l.cps[l.n_cps - 1].version;
    if (latest < 0) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "%s: _delta_log holds no commit", path);
        goto done;
    }
    int64_t target = version < 0 ? latest : version;
    if (target > latest) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "%s: version %lld does not exist (latest is %lld)",
                            path, (long long)target, (long long)latest);
        goto done;
    }
    char tname[32];
    mcdc_delta__commit_name(tname, target);
    tpath = id ? mcdc_delta__join(logdir, tname) : NULL;
    if (tpath)
        mcdc_delta__file_id_of(&id_before, tpath);
    int64_t hint = mcdc_delta__read_last_checkpoint(path);
    int64_t limit = target;
    for (;;) {
        mcdc_delta__cp_choice cp;
        mcdc_delta__choose_checkpoint(&cp, &l, limit);
        if (hint >= 0 && hint <= target && cp.version >= 0 && hint > cp.version)
            mcdc_log(MCDC_LOG_DEBUG, "delta", "%s: _last_checkpoint names version %lld, which has "
                     "no complete checkpoint; using the listing", path, (long long)hint);
        if (cp.version < 0 && !has_commit(&l, 0, NULL) && l.n_commits && l.commits[0] > target) {
            rc = mcdc_error_set(MCDC_ENOTFOUND, "%s: version %lld is no longer in the log (the "
                                "oldest commit is %lld)", path, (long long)target,
                                (long long)l.commits[0]);
            goto done;
        }
        bool cp_failed;
        rc = replay_range(&r, path, logdir, &l, &cp, target, &cp_failed);
        if (rc < 0 && cp_failed) {
            /* (S2) try an older checkpoint, or the commits from 0 */
            mcdc_log(MCDC_LOG_WARN, "delta", "checkpoint %lld unusable (%s); replaying from an "
                     "older state", (long long)cp.version, mcdc_error_last()->message);
            bool older_ok = false;
            mcdc_delta__cp_choice older;
            mcdc_delta__choose_checkpoint(&older, &l, cp.version - 1);
            int64_t from = older.version;
            older_ok = true;
            for (int64_t v = from + 1; v <= cp.version; v++)
                if (!has_commit(&l, v, NULL)) {
                    older_ok = false;
                    break;
                }
            if (!older_ok)
                goto done; /* the checkpoint's own error stands */
            replay_free(&r);
            limit = cp.version - 1;
            continue;
        }
        if (rc < 0)
            goto done;
        s->checkpoint_version = cp.version;
        break;
    }
    if (!r.has_protocol || !r.has_metadata) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: version %lld has no %s action in its log state",
                            path, (long long)target, r.has_protocol ? "metaData" : "protocol");
        goto done;
    }
    if ((rc = mcdc_delta_check_readable(&r.protocol, &r.metadata)) < 0) {
        mcdc_error_prefix("%s", path);
        goto done;
    }
    s->version = target;
    s->table_path = strdup(path);
    if (!s->table_path) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto done;
    }
    rc = finish(s, &r);
    if (rc < 0)
        goto done;
    char name[32];
    mcdc_delta__commit_name(name, target);
    char *cpath = mcdc_delta__join(logdir, name);
    mcdc_delta__file_id after = { 0 };
    if (cpath)
        mcdc_delta__file_id_of(&after, cpath);
    s->timestamp_ms = after.valid ? after.mtime_ms : -1;
    free(cpath);
    /* the state can be cached only when the commit file it ends on was the same one
     * before and after the replay (no table recreated meanwhile) */
    if (id && id_before.valid && mcdc_delta__file_id_same(&id_before, &after))
        *id = after;
done:
    free(tpath);
    replay_free(&r);
    mcdc_delta__listing_free(&l);
    free(logdir);
    if (rc < 0) {
        mcdc_delta_snapshot_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int64_t mcdc_delta_snapshot_txn(const mcdc_delta_snapshot *s, const char *app_id)
{
    for (size_t i = 0; i < s->n_txns; i++)
        if (strcmp(s->txns[i].app_id, app_id) == 0)
            return s->txns[i].version;
    return -1;
}

const char *mcdc_delta_snapshot_config(const mcdc_delta_snapshot *s, const char *key,
                                       const char *dflt)
{
    bool found;
    const char *v = mcdc_delta_map_get(&s->metadata.configuration, key, &found);
    return found && v ? v : dflt;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *mcdc_delta__uri_decode(const char *log_path)
{
    size_t n = strlen(log_path);
    char *dec = malloc(n + 1);
    if (!dec)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (log_path[i] == '%' && i + 2 < n && hexval(log_path[i + 1]) >= 0 &&
            hexval(log_path[i + 2]) >= 0) {
            dec[k++] = (char)(hexval(log_path[i + 1]) * 16 + hexval(log_path[i + 2]));
            i += 2;
        } else {
            dec[k++] = log_path[i];
        }
    }
    dec[k] = '\0';
    return dec;
}

char *mcdc_delta_file_abspath(const mcdc_delta_snapshot *s, const char *log_path)
{
    char *dec = mcdc_delta__uri_decode(log_path);
    if (!dec)
        return NULL;
    const char *p = dec;
    if (strncmp(p, "file:", 5) == 0) {
        p += 5;
        while (p[0] == '/' && p[1] == '/')
            p++;
    }
    char *res;
    if (p[0] == '/')
        res = strdup(p);
    else
        res = mcdc_delta__join(s->table_path, p);
    free(dec);
    return res;
}
