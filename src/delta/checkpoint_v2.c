/*
 * delta/checkpoint_v2.c: writing V2 checkpoints (PROTOCOL "V2 Spec") for tables with the
 * v2Checkpoint feature (turned on by delta.checkpointPolicy=v2, type_widening.c).
 *
 * A V2 checkpoint of version N is a UUID-named top-level file
 * _delta_log/N.checkpoint.<uuid>.parquet holding protocol, metaData, every txn, every live
 * domainMetadata, one checkpointMetadata {version: N} and one sidecar row per sidecar file;
 * the live adds and unexpired removes (the same rows as a classic checkpoint's) are in one
 * sidecar, _delta_log/_sidecars/N.checkpoint.0000000001.0000000001.<uuid>.parquet, named
 * in the sidecar row by its file name. A state without files has no sidecar.
 *
 * Order and atomicity: the sidecar is written first (temp file, fsync, link without
 * replace, directory fsynced: the Parquet writer), then the top-level file the same way,
 * then _last_checkpoint is replaced atomically (never backwards) with the v2Checkpoint
 * field (path, sizeInBytes, modificationTime, sidecarFiles). A reader finds checkpoints
 * by listing, and the top-level file appears only once its sidecar is durable, so a
 * kill -9 at any point leaves either no checkpoint of N, or a complete one; an orphan
 * sidecar (killed before the top-level file) is never read. Every name is new (UUIDs),
 * so two writers of the same version each leave a complete checkpoint.
 * Log cleanup deletes the sidecars that no kept checkpoint names, once older than the log
 * retention and than an hour (a sidecar exists before the file naming it: the hour keeps
 * a checkpoint another process is writing intact); a referenced one is never deleted.
 * Failpoints: delta.checkpoint.before_write, delta.checkpoint.v2.after_sidecar,
 * delta.checkpoint.before_last_checkpoint.
 * Design: docs/decisions/0049-v2-checkpoints.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta/internal.h"
#include "mcdc/failpoint.h"
#include "mcdc/parquet.h"
#include "mcdc/storage.h"

/* The sidecar at @p path: every live file and unexpired tombstone of @p s. */
static int write_sidecar(const mcdc_delta_snapshot *s, const char *path, int64_t *rows,
                         mcdc_parquet_write_result *res)
{
    mcdc_parquet_node *schema = mcdc_delta__cp_schema(MCDC_DELTA__CP_FILES);
    mcdc_parquet_writer *pw = NULL;
    mcdc_parquet_writer_options po;
    mcdc_parquet_writer_options_init(&po);
    po.codec = MCDC_PARQUET_SNAPPY;
    int rc = schema ? mcdc_parquet_writer_open_nested(&pw, path, schema, &po)
                    : mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    int64_t cutoff = mcdc_delta__cp_tombstone_cutoff(s);
    for (size_t i = 0; rc == 0 && i < s->n_files; i++)
        rc = mcdc_delta__cp_write_file(pw, &s->files[i], true, rows);
    for (size_t i = 0; rc == 0 && i < s->n_tombstones; i++) {
        if (s->tombstones[i].deletion_timestamp >= 0 &&
            s->tombstones[i].deletion_timestamp < cutoff)
            continue; /* expired tombstone */
        rc = mcdc_delta__cp_write_file(pw, &s->tombstones[i], false, rows);
    }
    if (rc == 0)
        rc = mcdc_parquet_writer_close(pw, res);
    mcdc_parquet_writer_free(pw);
    mcdc_parquet_node_free(schema);
    return rc;
}

/* The top-level file at @p path: the non-file actions, checkpointMetadata, @p sc. */
static int write_top(const mcdc_delta_snapshot *s, const char *path,
                     const mcdc_delta_sidecar *sc, int64_t *rows,
                     mcdc_parquet_write_result *res)
{
    mcdc_parquet_node *schema = mcdc_delta__cp_schema(MCDC_DELTA__CP_NONFILE | MCDC_DELTA__CP_V2);
    mcdc_parquet_writer *pw = NULL;
    mcdc_parquet_writer_options po;
    mcdc_parquet_writer_options_init(&po);
    po.codec = MCDC_PARQUET_SNAPPY;
    int rc = schema ? mcdc_parquet_writer_open_nested(&pw, path, schema, &po)
                    : mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    mcdc_delta_action a;
    if (rc == 0) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_PROTOCOL };
        a.u.protocol = s->protocol;
        rc = mcdc_delta__cp_write_action(pw, &a, rows);
    }
    if (rc == 0) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_METADATA };
        a.u.metadata = s->metadata;
        rc = mcdc_delta__cp_write_action(pw, &a, rows);
    }
    for (size_t i = 0; rc == 0 && i < s->n_txns; i++) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_TXN };
        a.u.txn = s->txns[i];
        rc = mcdc_delta__cp_write_action(pw, &a, rows);
    }
    for (size_t i = 0; rc == 0 && i < s->n_domains; i++) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_DOMAIN_METADATA };
        a.u.domain = s->domains[i];
        rc = mcdc_delta__cp_write_action(pw, &a, rows);
    }
    if (rc == 0) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_CHECKPOINT_METADATA };
        a.u.checkpoint_version = s->version;
        rc = mcdc_delta__cp_write_action(pw, &a, rows);
    }
    if (rc == 0 && sc) {
        a = (mcdc_delta_action){ .kind = MCDC_DELTA_ACTION_SIDECAR };
        a.u.sidecar = *sc;
        rc = mcdc_delta__cp_write_action(pw, &a, rows);
    }
    if (rc == 0)
        rc = mcdc_parquet_writer_close(pw, res);
    mcdc_parquet_writer_free(pw);
    mcdc_parquet_node_free(schema);
    return rc;
}

int mcdc_delta__cp_write_v2(const mcdc_delta_snapshot *s)
{
    char uuid[37], top_name[128], sc_name[128];
    snprintf(top_name, sizeof top_name, "%020lld.checkpoint.%s.parquet", (long long)s->version,
             mcdc_delta_uuid(uuid));
    snprintf(sc_name, sizeof sc_name, "%020lld.checkpoint.0000000001.0000000001.%s.parquet",
             (long long)s->version, mcdc_delta_uuid(uuid));
    char *logdir = mcdc_delta__join(s->table_path, "_delta_log");
    char *scdir = logdir ? mcdc_delta__join(logdir, "_sidecars") : NULL;
    char *sc_path = scdir ? mcdc_delta__join(scdir, sc_name) : NULL;
    char *top_path = logdir ? mcdc_delta__join(logdir, top_name) : NULL;
    int rc = sc_path && top_path ? 0 : mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    mcdc_failpoint("delta.checkpoint.before_write");

    /* 1. the sidecar, durable before anything names it */
    int64_t rows = 0, sc_rows = 0;
    mcdc_parquet_write_result sc_res = { 0 }, top_res = { 0 };
    mcdc_delta_sidecar sc = { sc_name, 0, 0 };
    bool has_sidecar = s->n_files > 0 || s->n_tombstones > 0;
    mcdc_storage_info st;
    if (rc == 0 && has_sidecar) {
        rc = mcdc_storage_mkdirs(scdir);
        if (rc == 0)
            rc = write_sidecar(s, sc_path, &sc_rows, &sc_res);
        if (rc == 0 && (rc = mcdc_storage_stat(&st, sc_path)) == 0) {
            sc.size_in_bytes = (int64_t)st.size;
            sc.modification_time = st.mtime_ms;
        }
    }
    mcdc_failpoint("delta.checkpoint.v2.after_sidecar");

    /* 2. the top-level file naming it: from here on the checkpoint is complete */
    if (rc == 0)
        rc = write_top(s, top_path, has_sidecar ? &sc : NULL, &rows, &top_res);
    int64_t top_mtime = 0;
    if (rc == 0 && mcdc_storage_stat(&st, top_path) == 0)
        top_mtime = st.mtime_ms;
    if (rc == 0)
        mcdc_error_clear(); /* no mtime: 0 in _last_checkpoint, a hint */

    /* 3. _last_checkpoint, a hint naming it */
    if (rc == 0) {
        mcdc_failpoint("delta.checkpoint.before_last_checkpoint");
        char sidecars[512] = "";
        if (has_sidecar)
            snprintf(sidecars, sizeof sidecars,
                     "{\"path\":\"%s\",\"sizeInBytes\":%lld,\"modificationTime\":%lld}", sc_name,
                     (long long)sc.size_in_bytes, (long long)sc.modification_time);
        char body[1024];
        int n = snprintf(body, sizeof body,
                         "{\"version\":%lld,\"size\":%lld,\"sizeInBytes\":%llu,\"numOfAddFiles\":%zu,"
                         "\"v2Checkpoint\":{\"path\":\"%s\",\"sizeInBytes\":%llu,"
                         "\"modificationTime\":%lld,\"sidecarFiles\":[%s]}}",
                         (long long)s->version, (long long)(rows + sc_rows),
                         (unsigned long long)top_res.file_size, s->n_files, top_name,
                         (unsigned long long)top_res.file_size, (long long)top_mtime, sidecars);
        /* never move _last_checkpoint backwards */
        if (mcdc_delta__read_last_checkpoint(s->table_path) <= s->version)
            rc = mcdc_delta__replace_atomic(logdir, "_last_checkpoint", body, (size_t)n);
    }
    mcdc_parquet_write_result_dispose(&sc_res);
    mcdc_parquet_write_result_dispose(&top_res);
    free(top_path);
    free(sc_path);
    free(scdir);
    free(logdir);
    return rc;
}

/* ---- sidecar cleanup ------------------------------------------------------------------ */

typedef struct refs {
    char  **names;
    size_t  n;
} refs;

static int collect_sidecar(mcdc_delta_action *a, void *payload)
{
    refs *r = payload;
    if (a->kind != MCDC_DELTA_ACTION_SIDECAR)
        return 0;
    const char *base = strrchr(a->u.sidecar.path, '/');
    base = base ? base + 1 : a->u.sidecar.path;
    char **n = realloc(r->names, (r->n + 1) * sizeof *n);
    if (!n)
        return mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    r->names = n;
    if (!(n[r->n] = strdup(base)))
        return mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
    r->n++;
    return 0;
}

size_t mcdc_delta__cleanup_sidecars(const mcdc_delta_snapshot *s, const mcdc_delta__listing *l,
                                    int64_t keep_from, int64_t cutoff_ms)
{
    char *logdir = mcdc_delta__join(s->table_path, "_delta_log");
    char *scdir = logdir ? mcdc_delta__join(logdir, "_sidecars") : NULL;
    mcdc_storage_listing sl = { NULL, 0 };
    refs r = { NULL, 0 };
    size_t n_deleted = 0;
    /* no _sidecars (or unlistable): nothing to do */
    int rc = scdir ? mcdc_storage_list(&sl, scdir, MCDC_STORAGE_LIST_INFO) : MCDC_ENOMEM;
    /* the sidecars every checkpoint kept by the cleanup names (multi-part ones have none) */
    for (size_t i = 0; rc == 0 && sl.n && i < l->n_cps; i++) {
        if (l->cps[i].version < keep_from || l->cps[i].kind == CP_MULTI)
            continue;
        char *p = mcdc_delta__join(logdir, l->cps[i].name);
        size_t len = strlen(l->cps[i].name);
        rc = !p ? mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory")
             : len > 5 && strcmp(l->cps[i].name + len - 5, ".json") == 0
                 ? mcdc_delta__read_json_actions(p, collect_sidecar, &r)
                 : mcdc_delta__read_parquet_actions(p, collect_sidecar, &r);
        free(p);
    }
    /* an unreferenced sidecar older than the log retention and than an hour (a checkpoint
     * being written writes its sidecar first: it is never that old) */
    int64_t cutoff = cutoff_ms;
    if (cutoff > mcdc_delta__now_ms() - 3600000)
        cutoff = mcdc_delta__now_ms() - 3600000;
    for (size_t i = 0; rc == 0 && i < sl.n; i++) {
        const char *name = sl.entries[i].name;
        size_t len = strlen(name);
        if (name[0] == '.' || strchr(name, '/') || len < 8 || strcmp(name + len - 8, ".parquet") ||
            sl.entries[i].mtime_ms >= cutoff)
            continue;
        bool referenced = false;
        for (size_t k = 0; k < r.n && !referenced; k++)
            referenced = strcmp(r.names[k], name) == 0;
        char *p = referenced ? NULL : mcdc_delta__join(scdir, name);
        if (p && mcdc_storage_delete(p) == 0)
            n_deleted++;
        free(p);
    }
    mcdc_error_clear(); /* cleanup is best effort: a failure deletes nothing more */
    for (size_t k = 0; k < r.n; k++)
        free(r.names[k]);
    free(r.names);
    mcdc_storage_listing_dispose(&sl);
    free(scdir);
    free(logdir);
    return n_deleted;
}
