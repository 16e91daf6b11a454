/*
 * delta/checkpoint.c: writing classic single-file checkpoints, _last_checkpoint, and
 * cleaning up expired log files.
 *
 * A checkpoint of version N (PROTOCOL "Checkpoints", schema in reference/specs.md §1.9)
 * holds one row per action of the state at N: protocol, metaData, every txn, every live
 * domainMetadata, every live add (dataChange false, stats as a JSON string) and every
 * remove whose deletionTimestamp is within delta.deletedFileRetentionDuration (default
 * 1 week); never commitInfo or cdc. It is written by the Parquet writer (temp file,
 * fsync, link without replace) only after N.json exists; then _last_checkpoint is
 * replaced atomically. Writers checkpoint every delta.checkpointInterval versions
 * (default 10), from the background thread of checkpoint_bg.c. Tables with the
 * v2Checkpoint feature get V2 checkpoints instead (checkpoint_v2.c, same rows, the file
 * actions in a sidecar).
 *
 * Log cleanup (PROTOCOL "Metadata Cleanup"): with delta.enableExpiredLogCleanup (default
 * true), JSON commits and checkpoints older than delta.logRetentionDuration (default 30
 * days) are deleted, but only below the newest checkpoint whose commit is itself older
 * than the cutoff, so every version still readable has a checkpoint and commits after it.
 * On a table with the v2Checkpoint feature, sidecars no kept checkpoint names that are
 * older than the cutoff and than an hour go too (checkpoint_v2.c).
 * Failpoints: delta.checkpoint.before_write, delta.checkpoint.before_last_checkpoint.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "delta/internal.h"
#include "mcdc/storage.h"
#include "mcdc/failpoint.h"
#include "mcdc/log.h"
#include "mcdc/parquet.h"

/* ---- the checkpoint schema ---------------------------------------------------------- */

static mcdc_parquet_node *leaf(const char *name, mcdc_type_id t)
{
    mcdc_column c = { NULL, t, 0, 0, true };
    return mcdc_parquet_node_leaf(name, &c);
}

static mcdc_parquet_node *str_map(const char *name)
{
    mcdc_column k = { NULL, MCDC_TYPE_STRING, 0, 0, false };
    return mcdc_parquet_node_map(name, true, mcdc_parquet_node_leaf("key", &k),
                                 leaf("value", MCDC_TYPE_STRING));
}

static mcdc_parquet_node *str_list(const char *name)
{
    return mcdc_parquet_node_list(name, true, leaf("element", MCDC_TYPE_STRING));
}

static mcdc_parquet_node *dv_node(void)
{
    mcdc_parquet_node *d = mcdc_parquet_node_struct("deletionVector", true);
    mcdc_parquet_node_add(d, leaf("storageType", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(d, leaf("pathOrInlineDv", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(d, leaf("offset", MCDC_TYPE_INT));
    mcdc_parquet_node_add(d, leaf("sizeInBytes", MCDC_TYPE_INT));
    mcdc_parquet_node_add(d, leaf("cardinality", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(d, leaf("maxRowIndex", MCDC_TYPE_LONG));
    return d;
}

static void add_nonfile(mcdc_parquet_node *root);

/* add and remove columns */
static void add_files(mcdc_parquet_node *root)
{
    mcdc_parquet_node *add = mcdc_parquet_node_struct("add", true);
    mcdc_parquet_node_add(add, leaf("path", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(add, str_map("partitionValues"));
    mcdc_parquet_node_add(add, leaf("size", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(add, leaf("modificationTime", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(add, leaf("dataChange", MCDC_TYPE_BOOLEAN));
    mcdc_parquet_node_add(add, str_map("tags"));
    mcdc_parquet_node_add(add, dv_node());
    mcdc_parquet_node_add(add, leaf("baseRowId", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(add, leaf("defaultRowCommitVersion", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(add, leaf("stats", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(root, add);

    mcdc_parquet_node *rm = mcdc_parquet_node_struct("remove", true);
    mcdc_parquet_node_add(rm, leaf("path", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(rm, leaf("deletionTimestamp", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(rm, leaf("dataChange", MCDC_TYPE_BOOLEAN));
    mcdc_parquet_node_add(rm, leaf("extendedFileMetadata", MCDC_TYPE_BOOLEAN));
    mcdc_parquet_node_add(rm, str_map("partitionValues"));
    mcdc_parquet_node_add(rm, leaf("size", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(rm, dv_node());
    mcdc_parquet_node_add(rm, leaf("baseRowId", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(rm, leaf("defaultRowCommitVersion", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(root, rm);
}

mcdc_parquet_node *mcdc_delta__cp_schema(unsigned parts)
{
    mcdc_parquet_node *root = mcdc_parquet_node_struct("spark_schema", false);
    if (parts & MCDC_DELTA__CP_NONFILE) {
        mcdc_parquet_node *txn = mcdc_parquet_node_struct("txn", true);
        mcdc_parquet_node_add(txn, leaf("appId", MCDC_TYPE_STRING));
        mcdc_parquet_node_add(txn, leaf("version", MCDC_TYPE_LONG));
        mcdc_parquet_node_add(txn, leaf("lastUpdated", MCDC_TYPE_LONG));
        mcdc_parquet_node_add(root, txn);
    }
    if (parts & MCDC_DELTA__CP_FILES)
        add_files(root); /* the classic order: txn, add, remove, metaData, ... */
    if (parts & MCDC_DELTA__CP_NONFILE)
        add_nonfile(root);
    if (parts & MCDC_DELTA__CP_V2) {
        mcdc_parquet_node *cm = mcdc_parquet_node_struct("checkpointMetadata", true);
        mcdc_parquet_node_add(cm, leaf("version", MCDC_TYPE_LONG));
        mcdc_parquet_node_add(cm, str_map("tags"));
        mcdc_parquet_node_add(root, cm);
        mcdc_parquet_node *sc = mcdc_parquet_node_struct("sidecar", true);
        mcdc_parquet_node_add(sc, leaf("path", MCDC_TYPE_STRING));
        mcdc_parquet_node_add(sc, leaf("sizeInBytes", MCDC_TYPE_LONG));
        mcdc_parquet_node_add(sc, leaf("modificationTime", MCDC_TYPE_LONG));
        mcdc_parquet_node_add(sc, str_map("tags"));
        mcdc_parquet_node_add(root, sc);
    }
    return root;
}

/* metaData, protocol and domainMetadata columns */
static void add_nonfile(mcdc_parquet_node *root)
{
    mcdc_parquet_node *md = mcdc_parquet_node_struct("metaData", true);
    mcdc_parquet_node_add(md, leaf("id", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(md, leaf("name", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(md, leaf("description", MCDC_TYPE_STRING));
    mcdc_parquet_node *fmt = mcdc_parquet_node_struct("format", true);
    mcdc_parquet_node_add(fmt, leaf("provider", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(fmt, str_map("options"));
    mcdc_parquet_node_add(md, fmt);
    mcdc_parquet_node_add(md, leaf("schemaString", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(md, str_list("partitionColumns"));
    mcdc_parquet_node_add(md, str_map("configuration"));
    mcdc_parquet_node_add(md, leaf("createdTime", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(root, md);

    mcdc_parquet_node *pr = mcdc_parquet_node_struct("protocol", true);
    mcdc_parquet_node_add(pr, leaf("minReaderVersion", MCDC_TYPE_INT));
    mcdc_parquet_node_add(pr, leaf("minWriterVersion", MCDC_TYPE_INT));
    mcdc_parquet_node_add(pr, str_list("readerFeatures"));
    mcdc_parquet_node_add(pr, str_list("writerFeatures"));
    mcdc_parquet_node_add(root, pr);

    mcdc_parquet_node *dm = mcdc_parquet_node_struct("domainMetadata", true);
    mcdc_parquet_node_add(dm, leaf("domain", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(dm, leaf("configuration", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(dm, leaf("removed", MCDC_TYPE_BOOLEAN));
    mcdc_parquet_node_add(root, dm);
}

/* ---- durations ("interval 1 week", "30 days", "7d") --------------------------------- */

int64_t mcdc_delta__interval_ms(const char *text, int64_t dflt_ms)
{
    if (!text)
        return dflt_ms;
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (strncasecmp(p, "interval", 8) == 0)
        p += 8;
    char *end;
    long long n = strtoll(p, &end, 10);
    if (end == p || n < 0)
        return dflt_ms;
    while (isspace((unsigned char)*end))
        end++;
    static const struct {
        const char *unit;
        int64_t     ms;
    } units[] = { { "millisecond", 1 }, { "ms", 1 }, { "second", 1000 }, { "s", 1000 },
                  { "minute", 60000 }, { "m", 60000 }, { "hour", 3600000 }, { "h", 3600000 },
                  { "day", 86400000 }, { "d", 86400000 }, { "week", 604800000 },
                  { "w", 604800000 } };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t l = strlen(units[i].unit);
        if (strncasecmp(end, units[i].unit, l) == 0 &&
            (end[l] == '\0' || end[l] == 's' || isspace((unsigned char)end[l])))
            return (int64_t)n * units[i].ms;
    }
    return dflt_ms;
}

/* ---- writing ------------------------------------------------------------------------ */

int mcdc_delta__cp_write_action(mcdc_parquet_writer *pw, const mcdc_delta_action *a,
                                int64_t *n_rows)
{
    mcdc_buf b = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    int rc = mcdc_delta_action_to_json(&b, a);
    json_t *j = rc == 0 ? json_loadb(b.ptr, b.len, 0, NULL) : NULL;
    if (rc == 0 && !j)
        rc = mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    if (rc == 0)
        rc = mcdc_parquet_writer_write_json(pw, j);
    json_decref(j);
    mcdc_buf_dispose(&b);
    if (rc == 0)
        (*n_rows)++;
    return rc;
}

static json_t *map_json(const mcdc_delta_map *m)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < m->n; i++)
        if (json_object_set_new(o, m->kv[i].key, m->kv[i].value ? json_string(m->kv[i].value)
                                                                : json_null()) < 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

/* Set @p key of @p o to @p v (a new reference, consumed); false when @p v is NULL. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new_nocheck(o, key, v) == 0;
}

/* The checkpoint row of a live file or a tombstone, built as JSON directly (the fields
 * mcdc_delta_action_to_json writes, without its text round trip). */
static json_t *file_row(const mcdc_delta_file *f, bool add)
{
    json_t *a = json_object();
    bool ok = a && put(a, "path", json_string(f->path));
    if (ok && (add || f->extended_file_metadata || f->partition_values.n))
        ok = put(a, "partitionValues", map_json(&f->partition_values));
    if (ok && f->size >= 0)
        ok = put(a, "size", json_integer(f->size));
    if (ok && add)
        ok = put(a, "modificationTime", json_integer(f->modification_time));
    if (ok && !add && f->deletion_timestamp >= 0)
        ok = put(a, "deletionTimestamp", json_integer(f->deletion_timestamp));
    if (ok)
        ok = put(a, "dataChange", json_boolean(add ? false : f->data_change));
    if (ok && !add && f->extended_file_metadata)
        ok = put(a, "extendedFileMetadata", json_true());
    if (ok && add && f->stats)
        ok = put(a, "stats", json_string(f->stats));
    if (ok && f->tags.n)
        ok = put(a, "tags", map_json(&f->tags));
    if (ok && f->has_dv) {
        char st[2] = { f->dv.storage_type, '\0' };
        json_t *dv = json_object();
        ok = put(a, "deletionVector", dv) && put(dv, "storageType", json_string(st)) &&
             put(dv, "pathOrInlineDv", json_string(f->dv.path_or_inline_dv)) &&
             (f->dv.offset < 0 || put(dv, "offset", json_integer(f->dv.offset))) &&
             put(dv, "sizeInBytes", json_integer(f->dv.size_in_bytes)) &&
             put(dv, "cardinality", json_integer(f->dv.cardinality));
    }
    if (ok && f->base_row_id >= 0)
        ok = put(a, "baseRowId", json_integer(f->base_row_id));
    if (ok && f->default_row_commit_version >= 0)
        ok = put(a, "defaultRowCommitVersion", json_integer(f->default_row_commit_version));
    json_t *row = ok ? json_object() : NULL;
    if (!row || !put(row, add ? "add" : "remove", a)) {
        if (!row || !ok)
            json_decref(a);
        json_decref(row);
        return NULL;
    }
    return row;
}

int mcdc_delta__cp_write_file(mcdc_parquet_writer *pw, const mcdc_delta_file *f, bool add,
                              int64_t *n_rows)
{
    json_t *j = file_row(f, add);
    int rc = j ? mcdc_parquet_writer_write_json(pw, j)
               : mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    json_decref(j);
    if (rc == 0)
        (*n_rows)++;
    return rc;
}

int64_t mcdc_delta__cp_tombstone_cutoff(const mcdc_delta_snapshot *s)
{
    return mcdc_delta__now_ms() -
           mcdc_delta__interval_ms(mcdc_delta_snapshot_config(
                                       s, "delta.deletedFileRetentionDuration", NULL),
                                   7 * 86400000LL);
}

int mcdc_delta__checkpoint_write(const mcdc_delta_snapshot *s)
{
    for (size_t i = 0; i < s->protocol.n_writer_features; i++)
        if (strcmp(s->protocol.writer_features[i], "v2Checkpoint") == 0)
            return mcdc_delta__cp_write_v2(s);
    char name[64];
    snprintf(name, sizeof name, "_delta_log/%020lld.checkpoint.parquet", (long long)s->version);
    char *path = mcdc_delta__join(s->table_path, name);
    mcdc_parquet_node *schema = mcdc_delta__cp_schema(MCDC_DELTA__CP_NONFILE |
                                                      MCDC_DELTA__CP_FILES);
    mcdc_parquet_writer *pw = NULL;
    int rc = path && schema ? 0 : mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    mcdc_parquet_writer_options po;
    mcdc_parquet_writer_options_init(&po);
    po.codec = MCDC_PARQUET_SNAPPY;
    mcdc_failpoint("delta.checkpoint.before_write");
    if (rc == 0)
        rc = mcdc_parquet_writer_open_nested(&pw, path, schema, &po);
    int64_t rows = 0;
    int64_t tomb_cutoff = mcdc_delta__cp_tombstone_cutoff(s);
    mcdc_delta_action a;
    if (rc == 0) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_PROTOCOL };
        a.u.protocol = s->protocol;
        rc = mcdc_delta__cp_write_action(pw, &a, &rows);
    }
    if (rc == 0) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_METADATA };
        a.u.metadata = s->metadata;
        rc = mcdc_delta__cp_write_action(pw, &a, &rows);
    }
    for (size_t i = 0; rc == 0 && i < s->n_txns; i++) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_TXN };
        a.u.txn = s->txns[i];
        rc = mcdc_delta__cp_write_action(pw, &a, &rows);
    }
    for (size_t i = 0; rc == 0 && i < s->n_domains; i++) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_DOMAIN_METADATA };
        a.u.domain = s->domains[i];
        rc = mcdc_delta__cp_write_action(pw, &a, &rows);
    }
    for (size_t i = 0; rc == 0 && i < s->n_files; i++)
        rc = mcdc_delta__cp_write_file(pw, &s->files[i], true, &rows);
    for (size_t i = 0; rc == 0 && i < s->n_tombstones; i++) {
        if (s->tombstones[i].deletion_timestamp >= 0 &&
            s->tombstones[i].deletion_timestamp < tomb_cutoff)
            continue; /* expired tombstone */
        rc = mcdc_delta__cp_write_file(pw, &s->tombstones[i], false, &rows);
    }
    mcdc_parquet_write_result res = { 0 };
    if (rc == 0)
        rc = mcdc_parquet_writer_close(pw, &res);
    mcdc_parquet_writer_free(pw);
    mcdc_parquet_node_free(schema);
    if (rc == MCDC_EEXISTS) {
        /* another writer checkpointed this version: its file stands, and _last_checkpoint
         * describes that file (its rows and bytes), not the rows this writer got to before
         * the refusal (none, when the name was taken at open) */
        mcdc_error_clear();
        mcdc_parquet_reader *r = NULL;
        mcdc_storage_info st;
        if ((rc = mcdc_parquet_reader_open(&r, path, NULL)) == 0) {
            rows = mcdc_parquet_reader_num_rows(r);
            res.file_size = mcdc_storage_stat(&st, path) == 0 ? st.size : 0;
        }
        mcdc_parquet_reader_free(r);
    }
    if (rc == 0) {
        mcdc_failpoint("delta.checkpoint.before_last_checkpoint");
        char body[256];
        int n = snprintf(body, sizeof body,
                         "{\"version\":%lld,\"size\":%lld,\"sizeInBytes\":%llu,\"numOfAddFiles\":%zu}",
                         (long long)s->version, (long long)rows,
                         (unsigned long long)res.file_size, s->n_files);
        char *logdir = mcdc_delta__join(s->table_path, "_delta_log");
        /* never move _last_checkpoint backwards */
        if (logdir && mcdc_delta__read_last_checkpoint(s->table_path) <= s->version)
            rc = mcdc_delta__replace_atomic(logdir, "_last_checkpoint", body, (size_t)n);
        free(logdir);
    }
    mcdc_parquet_write_result_dispose(&res);
    free(path);
    return rc;
}

int mcdc_delta_checkpoint(const char *path, int64_t version, bool *written)
{
    mcdc_delta_snapshot *s;
    if (written)
        *written = false;
    int rc = mcdc_delta_snapshot_open(&s, path, version);
    if (rc < 0)
        return rc;
    /* the version has its checkpoint already, and _last_checkpoint names it (a writer's
     * background one, say): a V2 checkpoint is named by a UUID, so writing again would only
     * add a second one. One that a crash left unnamed is written again, which names it. */
    bool have = s->checkpoint_version == s->version &&
                mcdc_delta__read_last_checkpoint(s->table_path) >= s->version;
    rc = have ? 0 : mcdc_delta__checkpoint_write(s);
    if (rc == 0) {
        if (!have)
            mcdc_delta__snapshot_checkpointed(s);
        if (written)
            *written = !have;
        rc = mcdc_delta__cleanup_log(s);
    }
    mcdc_delta_snapshot_free(s);
    return rc;
}

int mcdc_delta__cleanup_log(const mcdc_delta_snapshot *s)
{
    if (strcasecmp(mcdc_delta_snapshot_config(s, "delta.enableExpiredLogCleanup", "true"),
                   "true") != 0)
        return 0;
    int64_t cutoff = mcdc_delta__now_ms() -
                     mcdc_delta__interval_ms(mcdc_delta_snapshot_config(
                                                 s, "delta.logRetentionDuration", NULL),
                                             30 * 86400000LL);
    mcdc_delta__listing l;
    int rc = mcdc_delta__list(&l, s->table_path);
    if (rc < 0)
        return rc;
    char *logdir = mcdc_delta__join(s->table_path, "_delta_log");
    /* the newest complete checkpoint whose commit is older than the cutoff */
    int64_t keep_from = -1;
    int64_t limit = s->version;
    while (logdir) {
        mcdc_delta__cp_choice cp;
        mcdc_delta__choose_checkpoint(&cp, &l, limit);
        if (cp.version < 0)
            break;
        char name[32];
        mcdc_delta__commit_name(name, cp.version);
        char *p = mcdc_delta__join(logdir, name);
        mcdc_storage_info st;
        bool old = p && mcdc_storage_stat(&st, p) == 0 && st.mtime_ms / 1000 * 1000 < cutoff;
        free(p);
        if (old) {
            keep_from = cp.version;
            break;
        }
        limit = cp.version - 1;
    }
    size_t n_deleted = 0;
    for (size_t i = 0; keep_from > 0 && i < l.n_commits && l.commits[i] < keep_from; i++) {
        char name[32];
        mcdc_delta__commit_name(name, l.commits[i]);
        char *p = mcdc_delta__join(logdir, name);
        if (p && mcdc_storage_delete(p) == 0)
            n_deleted++;
        free(p);
    }
    for (size_t i = 0; keep_from > 0 && i < l.n_cps && l.cps[i].version < keep_from; i++) {
        char *p = mcdc_delta__join(logdir, l.cps[i].name);
        if (p && mcdc_storage_delete(p) == 0)
            n_deleted++;
        free(p);
    }
    bool v2 = false;
    for (size_t i = 0; i < s->protocol.n_writer_features; i++)
        v2 |= strcmp(s->protocol.writer_features[i], "v2Checkpoint") == 0;
    if (keep_from > 0 && v2)
        n_deleted += mcdc_delta__cleanup_sidecars(s, &l, keep_from, cutoff);
    mcdc_error_clear();
    if (n_deleted)
        mcdc_log(MCDC_LOG_INFO, "delta", "%s: removed %zu log files before version %lld "
                 "(older than the log retention)", s->table_path, n_deleted, (long long)keep_from);
    free(logdir);
    mcdc_delta__listing_free(&l);
    return 0;
}

int mcdc_delta__maybe_checkpoint(const char *path, int64_t version, int64_t interval,
                                 bool *written)
{
    *written = false;
    if (version <= 0 || interval <= 0 || version % interval != 0)
        return 0;
    mcdc_delta_snapshot *s;
    int rc = mcdc_delta_snapshot_open(&s, path, version);
    if (rc < 0)
        return rc;
    rc = mcdc_delta__checkpoint_write(s);
    if (rc == MCDC_EUNSUPPORTED) {
        mcdc_error_clear();
        rc = 0;
    } else if (rc == 0) {
        *written = true;
        mcdc_delta__snapshot_checkpointed(s);
        rc = mcdc_delta__cleanup_log(s);
    }
    mcdc_delta_snapshot_free(s);
    return rc;
}
