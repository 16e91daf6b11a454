/*
 * delta/commit.c: writing versions: create, commit with optimistic concurrency and txn
 * idempotency, append, schema evolution.
 *
 * A commit is built from a snapshot by the caller's build function, serialized with a
 * commitInfo and the txn, and written as version read+1 without replace
 * (mcdc_delta__create_noreplace: fsynced temp file, link(2), fsync of _delta_log). When
 * the version exists, the winning commits are read:
 *
 *     build(snapshot v) --> write v+1 --ok--> done (a due checkpoint is asked of the
 *                             |                  background writer, checkpoint_bg.c)
 *                             | EEXIST
 *                             v
 *                       read winner v+1 --no conflict--> write v+2 ... (rebase, at once)
 *                             | conflict
 *                             v
 *                       backoff with jitter --> fresh snapshot --> build again
 *
 * Commit invariants (architecture §3 invariants 1, 6, 7):
 * (W1) a txn version at or below the recorded one writes nothing (MCDC_EALREADY), checked
 *      on every fresh snapshot and on every winner that records our appId; with
 *      txn_expect, a recorded version that is neither that nor ours or above is another
 *      writer's (MCDC_ECONFLICT), checked on every fresh snapshot (a winner recording our
 *      appId forces one).
 * (W2) conflicts: a winner that changed protocol or metaData, recorded our appId, wrote a
 *      domain we write, removed a file we remove, or added (dataChange) a file whose
 *      partition values or stats may match our read predicate.
 * (W3) blind appends (no removes, no predicate) never conflict with adds and removes.
 * (W4) the retry budget bounds the whole operation (default 60 s); backoff starts at
 *      ~10 ms, doubles and is capped, each sleep jittered by ±50 %.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "delta/compact.h"
#include "delta/internal.h"
#include "mcdc/log.h"

#ifndef MCDC_VERSION
#define MCDC_VERSION "0"
#endif

/* ---- writer gate -------------------------------------------------------------------- */

static bool has_feature(char **l, size_t n, const char *f)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i], f) == 0)
            return true;
    return false;
}

static bool field_meta_has(const mcdc_delta_schema *s, const char *key)
{
    for (size_t i = 0; s && i < s->n_fields; i++)
        if (s->fields[i].metadata && strstr(s->fields[i].metadata, key))
            return true;
    return false;
}

/* Can this build write @p kind of commit to the table? (reference/specs.md §1.4) */
static int check_writable(const mcdc_delta_snapshot *s, bool removes)
{
    const mcdc_delta_protocol *p = &s->protocol;
    if (p->min_writer_version > 7)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: table needs Delta writer version %d; this "
                              "build writes up to 7", s->table_path, p->min_writer_version);
    static const char *const ok[] = { "appendOnly", "invariants", "checkConstraints",
                                      "generatedColumns", "allowColumnDefaults",
                                      "changeDataFeed", "identityColumns", "deletionVectors",
                                      "timestampNtz", "domainMetadata", "vacuumProtocolCheck",
                                      "columnMapping", "v2Checkpoint", "typeWidening",
                                      "typeWidening-preview" };
    if (p->min_writer_version == 7) {
        for (size_t i = 0; i < p->n_writer_features; i++) {
            bool known = false;
            for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
                known |= strcmp(p->writer_features[i], ok[k]) == 0;
            if (!known)
                return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: table needs the Delta writer "
                                      "feature '%s', which this build does not implement",
                                      s->table_path, p->writer_features[i]);
        }
    }
    if (field_meta_has(s->schema, "delta.invariants") ||
        field_meta_has(s->schema, "delta.generationExpression") ||
        field_meta_has(s->schema, "delta.identity."))
        return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: table has column invariants, generated or "
                              "identity columns, which this build does not enforce", s->table_path);
    for (size_t i = 0; i < s->metadata.configuration.n; i++)
        if (strncmp(s->metadata.configuration.kv[i].key, "delta.constraints.", 18) == 0)
            return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: table has CHECK constraint %s, which "
                                  "this build does not enforce", s->table_path,
                                  s->metadata.configuration.kv[i].key + 18);
    if (removes) {
        if (strcasecmp(mcdc_delta_snapshot_config(s, "delta.appendOnly", "false"), "true") == 0)
            return mcdc_error_set(MCDC_EINVAL, "%s: table is append-only (delta.appendOnly)",
                                  s->table_path);
        if (strcasecmp(mcdc_delta_snapshot_config(s, "delta.enableChangeDataFeed", "false"),
                       "true") == 0)
            return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: rewriting a table with the change data "
                                  "feed on needs cdc files, which this build does not write",
                                  s->table_path);
    }
    (void)has_feature;
    return 0;
}

/* ---- serialization ------------------------------------------------------------------ */

static int put_commit_info(mcdc_buf *b, const mcdc_delta_commit_options *o, int64_t read_version,
                           bool blind, int64_t now_ms)
{
    char uuid[37];
    int rc = mcdc_buf_printf(b, "{\"commitInfo\":{\"timestamp\":%lld,\"operation\":",
                             (long long)now_ms);
    const char *op = o->operation ? o->operation : "WRITE";
    if (!rc)
        rc = mcdc_json_quote(b, op, strlen(op));
    if (!rc) {
        rc = mcdc_buf_puts(b, ",\"operationParameters\":");
        if (!rc)
            rc = mcdc_buf_puts(b, o->operation_parameters ? o->operation_parameters : "{}");
    }
    if (!rc && read_version >= 0)
        rc = mcdc_buf_printf(b, ",\"readVersion\":%lld", (long long)read_version);
    if (!rc)
        rc = mcdc_buf_printf(b, ",\"isolationLevel\":\"%s\",\"isBlindAppend\":%s",
                             blind ? "WriteSerializable" : "Serializable", blind ? "true" : "false");
    if (!rc)
        rc = mcdc_buf_puts(b, ",\"engineInfo\":\"mssql-cdc/" MCDC_VERSION "\"");
    if (!rc)
        rc = mcdc_buf_printf(b, ",\"txnId\":\"%s\"", mcdc_delta_uuid(uuid));
    if (!rc && o->user_metadata) {
        rc = mcdc_buf_puts(b, ",\"userMetadata\":");
        if (!rc)
            rc = mcdc_json_quote(b, o->user_metadata, strlen(o->user_metadata));
    }
    return rc ? rc : mcdc_buf_puts(b, "}}\n");
}

static int serialize(mcdc_buf *b, const mcdc_delta_commit_options *o, int64_t read_version,
                     const mcdc_delta_action *acts, size_t n, bool blind)
{
    int64_t now = mcdc_delta__now_ms();
    mcdc_buf_clear(b);
    int rc = put_commit_info(b, o, read_version, blind, now);
    if (!rc && o->app_id) {
        mcdc_delta_action t = { .kind = MCDC_DELTA_ACTION_TXN };
        t.u.txn.app_id = (char *)o->app_id;
        t.u.txn.version = o->txn_version;
        t.u.txn.last_updated = now;
        rc = mcdc_delta_action_to_json(b, &t);
        if (!rc)
            rc = mcdc_buf_putc(b, '\n');
    }
    for (size_t i = 0; rc == 0 && i < o->n_txns; i++) {
        mcdc_delta_action t = { .kind = MCDC_DELTA_ACTION_TXN };
        t.u.txn.app_id = o->txns[i].app_id;
        t.u.txn.version = o->txns[i].version;
        t.u.txn.last_updated = now;
        rc = mcdc_delta_action_to_json(b, &t);
        if (!rc)
            rc = mcdc_buf_putc(b, '\n');
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (acts[i].kind == MCDC_DELTA_ACTION_COMMIT_INFO || acts[i].kind == MCDC_DELTA_ACTION_TXN)
            continue;
        rc = mcdc_delta_action_to_json(b, &acts[i]);
        if (!rc)
            rc = mcdc_buf_putc(b, '\n');
    }
    return rc;
}

static void free_actions(mcdc_delta_action *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mcdc_delta_action_clear(&a[i]);
    free(a);
}

/* ---- conflict detection ------------------------------------------------------------- */

typedef struct conflict_ctx {
    const mcdc_delta_snapshot       *snap;    /* what we read */
    const mcdc_delta_commit_options *opts;
    const mcdc_delta_action         *ours;
    size_t                           n_ours;
    int64_t                          version; /* the winner's version */
    char                             why[256]; /* "" when no conflict */
    bool                             already; /* the winner recorded our txn version */
} conflict_ctx;

static bool we_remove(const conflict_ctx *c, const char *path)
{
    for (size_t i = 0; i < c->n_ours; i++)
        if (c->ours[i].kind == MCDC_DELTA_ACTION_REMOVE && strcmp(c->ours[i].u.file.path, path) == 0)
            return true;
    return false;
}

static bool we_write_domain(const conflict_ctx *c, const char *domain)
{
    for (size_t i = 0; i < c->n_ours; i++)
        if (c->ours[i].kind == MCDC_DELTA_ACTION_DOMAIN_METADATA &&
            strcmp(c->ours[i].u.domain.domain, domain) == 0)
            return true;
    return false;
}

static int check_winner(mcdc_delta_action *a, void *payload)
{
    conflict_ctx *c = payload;
    if (c->why[0])
        return 0;
    switch (a->kind) {
    case MCDC_DELTA_ACTION_PROTOCOL:
        snprintf(c->why, sizeof c->why, "version %lld changed the protocol", (long long)c->version);
        break;
    case MCDC_DELTA_ACTION_METADATA:
        snprintf(c->why, sizeof c->why, "version %lld changed the metadata", (long long)c->version);
        break;
    case MCDC_DELTA_ACTION_TXN:
        if (c->opts->app_id && strcmp(a->u.txn.app_id, c->opts->app_id) == 0) {
            c->already = a->u.txn.version >= c->opts->txn_version;
            snprintf(c->why, sizeof c->why, "version %lld recorded txn %lld of appId %s",
                     (long long)c->version, (long long)a->u.txn.version, c->opts->app_id);
        }
        break;
    case MCDC_DELTA_ACTION_DOMAIN_METADATA:
        if (we_write_domain(c, a->u.domain.domain))
            snprintf(c->why, sizeof c->why, "version %lld wrote domain %s", (long long)c->version,
                     a->u.domain.domain);
        break;
    case MCDC_DELTA_ACTION_REMOVE:
        if (we_remove(c, a->u.file.path))
            snprintf(c->why, sizeof c->why, "version %lld removed %s, which we read",
                     (long long)c->version, a->u.file.path);
        break;
    case MCDC_DELTA_ACTION_ADD:
        if (a->u.file.data_change && mcdc_delta__may_match(c->snap, &a->u.file, &c->opts->read_pred))
            snprintf(c->why, sizeof c->why, "version %lld added %s, which may hold rows we read",
                     (long long)c->version, a->u.file.path);
        break;
    default:
        break;
    }
    return 0;
}

static void backoff_sleep(int64_t ms)
{
    unsigned seed = (unsigned)(mcdc_delta__now_ms() ^ (int64_t)getpid() << 8);
    double f = 0.5 + (double)(rand_r(&seed) % 1000) / 1000.0; /* 0.5 .. 1.5 */
    int64_t us = (int64_t)((double)ms * 1000.0 * f);
    struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* ---- commit ------------------------------------------------------------------------- */

int mcdc_delta_commit(const char *path, mcdc_delta_build_fn build, void *payload,
                      const mcdc_delta_commit_options *opts, mcdc_delta_commit_result *result)
{
    mcdc_delta_commit_options dflt = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    if (!opts)
        opts = &dflt;
    mcdc_delta_commit_result res = { -1, 0, 0, false, false };
    int64_t budget = opts->retry_budget_ms > 0 ? opts->retry_budget_ms : 60000;
    int64_t backoff = opts->backoff_start_ms > 0 ? opts->backoff_start_ms : 10;
    int64_t backoff_max = opts->backoff_max_ms > 0 ? opts->backoff_max_ms : 1000;
    int64_t deadline = mcdc_delta__now_ms() + budget;
    char *logdir = mcdc_delta__join(path, "_delta_log");
    mcdc_buf body = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    int rc = logdir ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    char last_conflict[256] = "";
    int64_t cp_interval = 10; /* delta.checkpointInterval of the table we committed to */
    bool wrote = false;       /* a version file was created */

    while (rc == 0) {
        mcdc_delta_snapshot *snap = NULL;
        mcdc_delta_action *acts = NULL;
        size_t n_acts = 0;
        rc = mcdc_delta_snapshot_open(&snap, path, -1);
        if (rc < 0)
            break;
        res.version = snap->version;
        const char *iv = mcdc_delta_snapshot_config(snap, "delta.checkpointInterval", NULL);
        cp_interval = iv && atoll(iv) > 0 ? atoll(iv) : 10;
        if (opts->app_id && mcdc_delta_snapshot_txn(snap, opts->app_id) >= opts->txn_version) {
            res.already_committed = true;
            rc = mcdc_error_set(MCDC_EALREADY, "%s: txn %lld of appId %s already committed "
                                "(recorded: %lld)", path, (long long)opts->txn_version,
                                opts->app_id, (long long)mcdc_delta_snapshot_txn(snap, opts->app_id));
            mcdc_delta_snapshot_free(snap);
            break;
        }
        if (opts->app_id && opts->txn_expect != MCDC_DELTA_TXN_ANY &&
            mcdc_delta_snapshot_txn(snap, opts->app_id) != opts->txn_expect) {
            rc = mcdc_error_set(MCDC_ECONFLICT, "%s: txn of appId %s is %lld, not %lld as last "
                                "seen: another writer uses the appId", path, opts->app_id,
                                (long long)mcdc_delta_snapshot_txn(snap, opts->app_id),
                                (long long)opts->txn_expect);
            mcdc_delta_snapshot_free(snap);
            break;
        }
        if (opts->expect_key) {
            const char *have = mcdc_delta_snapshot_config(snap, opts->expect_key, NULL);
            bool same = have && opts->expect_value ? strcmp(have, opts->expect_value) == 0
                                                   : !have && !opts->expect_value;
            if (!same) {
                rc = mcdc_error_set(MCDC_ECONFLICT, "%s: version %lld has %s = %s%s%s, this "
                                    "commit needs %s%s%s", path, (long long)snap->version,
                                    opts->expect_key, have ? "'" : "", have ? have : "(none)",
                                    have ? "'" : "", opts->expect_value ? "'" : "",
                                    opts->expect_value ? opts->expect_value : "(none)",
                                    opts->expect_value ? "'" : "");
                mcdc_delta_snapshot_free(snap);
                break;
            }
        }
        rc = build(snap, &acts, &n_acts, payload);
        if (rc == 0 && opts->evolve)
            rc = mcdc_delta__evolve_actions(snap, opts->evolve, &acts, &n_acts);
        bool removes = false;
        for (size_t i = 0; rc == 0 && i < n_acts; i++)
            removes |= acts[i].kind == MCDC_DELTA_ACTION_REMOVE;
        if (rc == 0)
            rc = check_writable(snap, removes);
        if (rc == 0 && n_acts == 0 && !opts->app_id) {
            /* nothing to write */
            free_actions(acts, n_acts);
            mcdc_delta_snapshot_free(snap);
            break;
        }
        bool blind = !removes && opts->read_pred.op == MCDC_DELTA_PRED_NONE;
        for (size_t i = 0; i < n_acts; i++)
            blind &= acts[i].kind == MCDC_DELTA_ACTION_ADD;
        if (rc == 0)
            rc = serialize(&body, opts, snap->version, acts, n_acts, blind);
        bool retry = false;
        int64_t v = snap->version + 1;
        while (rc == 0) {
            char name[32];
            mcdc_delta__commit_name(name, v);
            rc = mcdc_delta__create_noreplace(logdir, name, body.ptr, body.len);
            if (rc == 0) {
                res.version = v;
                wrote = true;
                break;
            }
            if (rc != MCDC_EEXISTS)
                break;
            mcdc_error_clear();
            rc = 0;
            conflict_ctx c = { snap, opts, acts, n_acts, v, "", false };
            char *wp = mcdc_delta__join(logdir, name);
            if (!wp) {
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                break;
            }
            rc = mcdc_delta__read_json_actions(wp, check_winner, &c);
            free(wp);
            if (rc < 0)
                break;
            if (c.already) {
                res.already_committed = true;
                res.version = v;
                rc = mcdc_error_set(MCDC_EALREADY, "%s: txn %lld of appId %s already committed "
                                    "(by version %lld)", path, (long long)opts->txn_version,
                                    opts->app_id, (long long)v);
                break;
            }
            if (c.why[0]) {
                res.n_conflicts++;
                snprintf(last_conflict, sizeof last_conflict, "%s", c.why);
                retry = true;
                break;
            }
            res.n_rebases++;
            v++;
        }
        free_actions(acts, n_acts);
        mcdc_delta_snapshot_free(snap);
        if (rc < 0 || !retry)
            break;
        if (mcdc_delta__now_ms() + backoff / 2 > deadline) {
            rc = mcdc_error_set(MCDC_ETIMEOUT, "%s: commit gave up after %d conflicts in %lld ms; "
                                "last: %s", path, res.n_conflicts, (long long)budget, last_conflict);
            mcdc_error_hint("another writer keeps changing what this operation read; retry later");
            break;
        }
        backoff_sleep(backoff);
        backoff = backoff * 2 > backoff_max ? backoff_max : backoff * 2;
    }
    if (rc == 0 && wrote && !opts->no_checkpoint)
        res.checkpointed = mcdc_delta__checkpoint_request(path, res.version, cp_interval);
    mcdc_buf_dispose(&body);
    free(logdir);
    if (result)
        *result = res;
    return rc;
}

/* ---- append ------------------------------------------------------------------------- */

typedef struct append_ctx {
    const mcdc_delta_file *files;
    size_t                 n;
    bool                   compact_due; /* auto compaction would find work after this append */
} append_ctx;

static int build_append(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n_out,
                        void *payload)
{
    append_ctx *c = payload;
    c->compact_due = mcdc_delta__compact_due(snap, c->files, c->n);
    *out = calloc(c->n ? c->n : 1, sizeof **out);
    *n_out = 0;
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "append: out of memory");
    for (size_t i = 0; i < c->n; i++) {
        int rc = mcdc_delta_file_copy(&(*out)[i].u.file, &c->files[i]);
        if (rc < 0)
            return rc;
        (*out)[i].kind = MCDC_DELTA_ACTION_ADD;
        (*n_out)++;
    }
    return 0;
}

/* Post-commit hook of an append (docs/decisions/0005): the append stands whatever
 * happens here; a compaction that lost a conflict is left for a later append. Run by the
 * append itself or, with compact_in_background, by the background writer (ADR 0046). */
void mcdc_delta__auto_compact_logged(const char *path)
{
    int64_t t0 = mcdc_delta__now_ms();
    mcdc_delta_optimize_result r;
    int rc = mcdc_delta_auto_compact(path, &r);
    if (rc == 0 && r.n_removed > 0)
        mcdc_log(MCDC_LOG_DEBUG, "delta", "%s: auto compaction at version %lld rewrote %lld "
                 "files into %lld (%lld rows) in %lld ms", path, (long long)r.version,
                 (long long)r.n_removed, (long long)r.n_added, (long long)r.n_rows,
                 (long long)(mcdc_delta__now_ms() - t0));
    else if (rc == MCDC_ECONFLICT || rc == MCDC_ETIMEOUT)
        mcdc_log(MCDC_LOG_INFO, "delta", "%s: auto compaction gave up (left for a later "
                 "append): %s", path, mcdc_error_last()->message);
    else if (rc < 0)
        mcdc_log(MCDC_LOG_WARN, "delta", "%s: auto compaction failed; the append stands: %s",
                 path, mcdc_error_last()->message);
    mcdc_error_clear();
}

int mcdc_delta_append(const char *path, const mcdc_delta_file *files, size_t n_files,
                      const mcdc_delta_commit_options *opts, mcdc_delta_commit_result *result)
{
    append_ctx c = { files, n_files, false };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (!o.operation)
        o.operation = "WRITE";
    if (!o.operation_parameters)
        o.operation_parameters = "{\"mode\":\"Append\"}";
    int rc = mcdc_delta_commit(path, build_append, &c, &o, result);
    /* with compact_in_background the append returns at once and the worker compacts on a
     * fresh snapshot (checkpoint_bg.c, B6); otherwise, or when it cannot be asked, here */
    if (rc == 0 && c.compact_due &&
        !(o.compact_in_background && mcdc_delta__compact_request(path)))
        mcdc_delta__auto_compact_logged(path);
    return rc;
}

/* ---- create ------------------------------------------------------------------------- */

static bool same_columns(const mcdc_delta_schema *s, const mcdc_schema *flat)
{
    if (s->n_fields != flat->n_cols)
        return false;
    for (size_t i = 0; i < flat->n_cols; i++) {
        const mcdc_delta_field *f = &s->fields[i];
        const mcdc_column *c = &flat->cols[i];
        if (strcasecmp(f->name, c->name) != 0 || f->type.kind != MCDC_DELTA_TYPE_PRIMITIVE ||
            f->type.prim.type != c->type ||
            (c->type == MCDC_TYPE_DECIMAL &&
             (f->type.prim.precision != c->precision || f->type.prim.scale != c->scale)))
            return false;
    }
    return true;
}

int mcdc_delta_create(const char *path, const mcdc_schema *schema,
                      const char *const *partition_columns, size_t n_partition_columns,
                      const mcdc_delta_map *configuration, mcdc_delta_commit_result *result)
{
    mcdc_delta_commit_result res = { -1, 0, 0, false, false };
    bool ntz = false;
    for (size_t i = 0; i < schema->n_cols; i++)
        ntz |= schema->cols[i].type == MCDC_TYPE_TIMESTAMP_NTZ;
    for (size_t i = 0; i < n_partition_columns; i++)
        if (mcdc_schema_find(schema, partition_columns[i]) < 0)
            return mcdc_error_set(MCDC_EINVAL, "partition column %s is not in the schema",
                                  partition_columns[i]);
    mcdc_buf b = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    mcdc_buf sj = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    char *logdir = mcdc_delta__join(path, "_delta_log");
    char uuid[37];
    mcdc_delta_action md = { .kind = MCDC_DELTA_ACTION_METADATA };
    bool mapped = mcdc_delta__schema_needs_mapping(schema); /* colmap.c */
    int rc = !logdir  ? mcdc_error_set(MCDC_ENOMEM, "out of memory")
             : mapped ? mcdc_delta__schema_json_mapped(&sj, schema)
                      : mcdc_delta_schema_json_from_flat(&sj, schema);
    if (rc < 0)
        goto done;
    md.u.metadata.id = mcdc_delta_uuid(uuid);
    md.u.metadata.schema_string = sj.ptr;
    md.u.metadata.partition_columns = (char **)partition_columns;
    md.u.metadata.n_partition_columns = n_partition_columns;
    md.u.metadata.created_time = mcdc_delta__now_ms();
    mcdc_delta_map conf = { 0 };
    for (size_t i = 0; configuration && rc == 0 && i < configuration->n; i++)
        rc = mcdc_delta_map_set(&conf, configuration->kv[i].key, configuration->kv[i].value);
    if (rc == 0 && !mcdc_delta_map_get(&conf, "mcdc.schema_version", NULL))
        rc = mcdc_delta_map_set(&conf, "mcdc.schema_version", "1");
    if (rc == 0 && mapped) {
        char n[32];
        snprintf(n, sizeof n, "%zu", schema->n_cols);
        rc = mcdc_delta_map_set(&conf, "delta.columnMapping.mode", "name");
        if (rc == 0)
            rc = mcdc_delta_map_set(&conf, "delta.columnMapping.maxColumnId", n);
    }
    md.u.metadata.configuration = conf;
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "CREATE TABLE";
    o.operation_parameters = "{}";
    if (rc == 0)
        rc = put_commit_info(&b, &o, -1, true, md.u.metadata.created_time);
    if (rc == 0)
        rc = mcdc_buf_puts(&b, ntz && mapped
                                   ? "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
                                     "\"readerFeatures\":[\"timestampNtz\",\"columnMapping\"],"
                                     "\"writerFeatures\":[\"timestampNtz\",\"columnMapping\"]}}\n"
                               : ntz ? "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
                                       "\"readerFeatures\":[\"timestampNtz\"],"
                                       "\"writerFeatures\":[\"timestampNtz\"]}}\n"
                               : mapped ? "{\"protocol\":{\"minReaderVersion\":2,\"minWriterVersion\":5}}\n"
                                        : "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n");
    if (rc == 0)
        rc = mcdc_delta_action_to_json(&b, &md);
    if (rc == 0)
        rc = mcdc_buf_putc(&b, '\n');
    mcdc_delta_map_clear(&conf);
    if (rc == 0)
        rc = mcdc_delta__mkdirs(logdir);
    if (rc == 0) {
        char name[32];
        mcdc_delta__commit_name(name, 0);
        rc = mcdc_delta__create_noreplace(logdir, name, b.ptr, b.len);
        if (rc == 0)
            res.version = 0;
    }
    if (rc == MCDC_EEXISTS) {
        /* lost the race (or the table exists): take it if it has our columns */
        mcdc_error_clear();
        mcdc_delta_snapshot *snap = NULL;
        rc = mcdc_delta_snapshot_open(&snap, path, -1);
        if (rc == 0) {
            res.version = snap->version;
            res.n_rebases = 1;
            if (!same_columns(snap->schema, schema)) {
                rc = mcdc_error_set(MCDC_EEXISTS, "%s: a table with another schema exists",
                                    path);
                mcdc_error_hint("drop the table or use a matching schema");
            }
        }
        mcdc_delta_snapshot_free(snap);
    }
done:
    mcdc_buf_dispose(&b);
    mcdc_buf_dispose(&sj);
    free(logdir);
    if (result)
        *result = res;
    return rc;
}

/* ---- schema evolution --------------------------------------------------------------- */

static int build_nothing(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n_out,
                         void *payload)
{
    (void)snap;
    (void)payload;
    *out = NULL;
    *n_out = 0;
    return 0;
}

int mcdc_delta_add_columns(const char *path, const mcdc_schema *columns,
                           mcdc_delta_commit_result *result)
{
    mcdc_delta_evolution ev = MCDC_DELTA_EVOLUTION_INIT; /* evolve.c: (E1), (E4) */
    ev.add = columns;
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "ADD COLUMNS";
    o.read_pred.op = MCDC_DELTA_PRED_NONE;
    o.evolve = &ev;
    return mcdc_delta_commit(path, build_nothing, NULL, &o, result);
}
