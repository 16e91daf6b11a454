/*
 * delta/history.c: the commit history of a table, one entry per JSON commit still in
 * the log: timestamp, operation, userMetadata, the commitInfo object and the commit's txn
 * actions. Never writes. The timestamp is commitInfo.inCommitTimestamp when present,
 * else commitInfo.timestamp, else the commit file's modification time.
 *
 * A version missing after the newest checkpoint (one a snapshot must replay) is
 * corruption, as it is for a snapshot: MCDC_ECORRUPT naming it, never a history that
 * silently skips it; commits at or below a checkpoint may be gone (log cleanup). So is an
 * empty commit file (delta/log.c (L1)).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "delta/internal.h"
#include "mcdc/storage.h"

typedef struct hctx {
    mcdc_delta_history_entry *e;
} hctx;

static int on_action(mcdc_delta_action *a, void *payload)
{
    mcdc_delta_history_entry *e = ((hctx *)payload)->e;
    if (a->kind == MCDC_DELTA_ACTION_TXN) {
        mcdc_delta_txn *t = realloc(e->txns, (e->n_txns + 1) * sizeof *t);
        if (!t)
            return mcdc_error_set(MCDC_ENOMEM, "history: out of memory");
        e->txns = t;
        t[e->n_txns++] = a->u.txn;
        a->kind = MCDC_DELTA_ACTION_UNKNOWN; /* moved */
        return 0;
    }
    if (a->kind != MCDC_DELTA_ACTION_COMMIT_INFO || e->commit_info)
        return 0;
    json_t *j = json_loads(a->u.commit_info, 0, NULL);
    if (j) {
        json_t *ict = json_object_get(j, "inCommitTimestamp");
        json_t *ts = json_object_get(j, "timestamp");
        if (json_is_integer(ict))
            e->timestamp_ms = (int64_t)json_integer_value(ict);
        else if (json_is_integer(ts))
            e->timestamp_ms = (int64_t)json_integer_value(ts);
        const char *op = json_string_value(json_object_get(j, "operation"));
        const char *um = json_string_value(json_object_get(j, "userMetadata"));
        e->operation = op ? strdup(op) : NULL;
        e->user_metadata = um ? strdup(um) : NULL;
        json_decref(j);
    }
    e->commit_info = a->u.commit_info;
    a->kind = MCDC_DELTA_ACTION_UNKNOWN; /* moved */
    return 0;
}

void mcdc_delta_history_free(mcdc_delta_history_entry *h, size_t n)
{
    for (size_t i = 0; h && i < n; i++) {
        free(h[i].operation);
        free(h[i].user_metadata);
        free(h[i].commit_info);
        for (size_t k = 0; k < h[i].n_txns; k++)
            free(h[i].txns[k].app_id);
        free(h[i].txns);
    }
    free(h);
}

int mcdc_delta_history(mcdc_delta_history_entry **out, size_t *n_out, const char *path)
{
    *out = NULL;
    *n_out = 0;
    mcdc_delta__listing l;
    int rc = mcdc_delta__list(&l, path);
    if (rc < 0)
        return rc;
    char *logdir = mcdc_delta__join(path, "_delta_log");
    mcdc_delta_history_entry *h = calloc(l.n_commits ? l.n_commits : 1, sizeof *h);
    size_t n = 0;
    if (!logdir || !h)
        rc = mcdc_error_set(MCDC_ENOMEM, "history: out of memory");
    /* the versions a snapshot must replay (after the newest checkpoint) are contiguous */
    mcdc_delta__cp_choice cp;
    mcdc_delta__choose_checkpoint(&cp, &l, INT64_MAX);
    for (size_t i = 1; rc == 0 && i < l.n_commits; i++)
        if (l.commits[i] != l.commits[i - 1] + 1 && l.commits[i] - 1 > cp.version)
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: version %lld is missing: the commits after "
                                "version %lld are not contiguous up to %lld", logdir,
                                (long long)(l.commits[i - 1] + 1), (long long)l.commits[i - 1],
                                (long long)l.commits[i]);
    if (rc == 0 && l.n_commits && l.commits[0] > cp.version + 1)
        rc = cp.version < 0
                 ? mcdc_error_set(MCDC_ECORRUPT, "%s: no checkpoint and no commit 0 "
                                  "(00000000000000000000.json); the log starts later", logdir)
                 : mcdc_error_set(MCDC_ECORRUPT, "%s: version %lld is missing: the commits "
                                  "after checkpoint %lld start at %lld", logdir,
                                  (long long)(cp.version + 1), (long long)cp.version,
                                  (long long)l.commits[0]);
    for (size_t i = 0; rc == 0 && i < l.n_commits; i++) {
        char name[32];
        mcdc_delta__commit_name(name, l.commits[i]);
        char *p = mcdc_delta__join(logdir, name);
        if (!p) {
            rc = mcdc_error_set(MCDC_ENOMEM, "history: out of memory");
            break;
        }
        mcdc_delta_history_entry *e = &h[n++];
        e->version = l.commits[i];
        e->timestamp_ms = -1;
        hctx c = { e };
        rc = mcdc_delta__read_json_actions(p, on_action, &c);
        mcdc_storage_info st;
        if (rc == 0 && e->timestamp_ms < 0) {
            if (mcdc_storage_stat(&st, p) == 0)
                e->timestamp_ms = st.mtime_ms;
            else
                mcdc_error_clear();
        }
        free(p);
    }
    free(logdir);
    mcdc_delta__listing_free(&l);
    if (rc < 0) {
        mcdc_delta_history_free(h, n);
        return rc;
    }
    *out = h;
    *n_out = n;
    return 0;
}
