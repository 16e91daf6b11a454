/*
 * pipeline/stream.c: the stream engine: plan, record, read, commit, report, batch after
 * batch, exactly once.
 *
 * One batch, in this order (each step is a failpoint "stream.<step>" for crash tests):
 *
 *   plan       max_lsn (an idle poll stops here: one query), capture_instances (a
 *              switch), then one positions round trip: max_lsn's commit time, the
 *              position's (the source going backwards), the batch limit's n-th commit,
 *              min_lsn (the data-loss guard); ddl_history (captured_columns after DDL)
 *   record     offsets/N, durable, its write (temp file, fsyncs, rename) on a thread of
 *              its own while the batch is read, waited for after the read and before
 *              anything of N is committed                -> after_offsets       (C1)
 *   read       (after, upto] streamed into one bronze data file, facts counted from
 *              the same rows (invariant 5)               -> mid_read (per row)
 *              then one positions round trip: min_lsn checked again (a purge between
 *              pages; 0x00 after a non-zero one, a login no longer authorized, is refused)
 *              with its commit time, max_lsn with its, the source's clock
 *              (commit times already known are not asked again): 5 round trips a batch
 *              with rows and one ddl_history, tests/unit/pipeline/stream_trips.c
 *   file       footer, fsync, publish                    -> after_data_file
 *   bronze     append with txn{app_id, N} + userMetadata -> after_bronze_commit
 *              (a batch without rows: no file, no commit)
 *   facts      the batch row (+ event rows), txn{app_id#facts, N} -> after_facts
 *   commit     commits/N                                 -> before_commit       (C2)
 *   report     progress event to listeners and --progress
 *
 * Replay (invariant 2): an offsets/N without commits/N is run again with exactly its
 * recorded range. When bronze already holds N (its txn for app_id is N or more), nothing
 * is read: the facts row comes from bronze commit N's userMetadata. A batch without
 * rows has no bronze commit and is simply read again; the data-loss guard then applies.
 *
 * The source going backwards (a restore, a failover to a lagging replica): planning checks
 * that max_lsn is not below the offset the stream read up to and that its commit still has
 * the commit time recorded (one question more; the end's commit time is not asked twice);
 * a replay checks its recorded end the same way. Either stops with MCDC_ESOURCE (exit 3)
 * before anything is written.
 *
 * Before the first write (invariant 9): mcdc_stream_check reads only (the capture
 * instance at the source, the target's kind, source table and owner in owner.c, the facts
 * table's kind, a new checkpoint against bronze's txn, --adopt's resume point); then
 * mcdc_stream_open takes (or creates) the checkpoint; only mcdc_stream_run writes tables.
 *
 * Checkpoint safety (invariant 8): the checkpoint lock; its metadata against the
 * arguments; bronze's txn for app_id (and facts' for app_id#facts) may not be above the
 * checkpoint's newest batch, or the checkpoint was deleted or rewound and the stream
 * refuses to run rather than let Delta silently skip its writes.
 *
 * Kept open (mcdc_stream_keep_open; the run layer's tables, one run per scheduling round): a
 * successful run keeps the checkpoint lock and what the checks found, and the next run
 * begins at planning, as the next trigger of one long-running stream does. The checks not
 * redone, and what keeps each one true between runs:
 *   - the generation file, the checkpoint's metadata and batches (mcdc_stream_open): only
 *     the holder of the checkpoint lock writes them (invariant 8);
 *   - bronze's and facts' txn against the checkpoint (check_txns): this stream is the one
 *     writer of its app id's batches while it holds the lock; another writer of the app id
 *     is refused by the bronze commit's txn_expect (bronze's txn must still be the one this
 *     stream wrote last) and by the writer's txn check (invariant 1);
 *   - bronze's kind, source table and owner (check_target, own_target): every bronze commit
 *     expects mcdc.owner to be this stream's family (O3: an adoption meanwhile is refused,
 *     nothing written);
 *   - the capture instance and its columns (find_capture_instance, captured_columns,
 *     prepare_bronze): every plan asks capture_instances (a switch; the instance and its
 *     table's chain gone is refused with the check's error before offsets/N is written) and
 *     ddl_history (new or changed columns, classified before anything is recorded);
 *   - the facts table's kind and existence (prepare_writes): a table's kind is recorded when
 *     it is created and never rewritten; the facts commits are conditional on their txn.
 * A failed run releases everything: the next one checks and opens again.
 *
 * Bootstrap: <checkpoint>/bootstrap records S = max_lsn before the table is read; the
 * snapshot goes to bronze with txn{app_id#snapshot, 0} and its event row to facts with
 * txn{app_id#events, 0}. A rerun that finds the snapshot reads nothing again.
 *
 * Generations (generation.c, resnapshot.c): mcdc_stream_check runs the live generation of
 * the checkpoint's generation file (its own checkpoint and app id); with --on-data-loss
 * resnapshot, a data loss ends the run loop, mcdc_stream_run records generation n+1 and
 * opens it, and the stream goes on from its new snapshot in the same process.
 * Design: docs/architecture.md §3, §5, §6; docs/guides/streaming.md.
 */
#include "mcdc/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/failpoint.h"
#include "mcdc/fs.h"
#include "mcdc/log.h"
#include "mcdc/storage.h"
#include "mcdc/time.h"
#include "pipeline/stream_int.h"

int mcdc_trigger_parse(mcdc_trigger *out, int64_t *interval_us, const char *s)
{
    *interval_us = 0;
    if (s && strcmp(s, "available-now") == 0) {
        *out = MCDC_TRIGGER_AVAILABLE_NOW;
        return 0;
    }
    if (s && strcmp(s, "once") == 0) {
        *out = MCDC_TRIGGER_ONCE;
        return 0;
    }
    if (s && strncmp(s, "interval:", 9) == 0) {
        int rc = mcdc_duration_parse(interval_us, s + 9);
        if (rc < 0)
            return rc;
        *out = MCDC_TRIGGER_INTERVAL;
        return 0;
    }
    mcdc_error_set(MCDC_EINVAL, "trigger '%s': not available-now, once or interval:DURATION",
                   s ? s : "");
    return mcdc_error_hint("for example --trigger interval:30s");
}

int mcdc_start_parse(mcdc_start_kind *out, mcdc_lsn *lsn, const char *s)
{
    if (s && strcmp(s, "earliest") == 0) {
        *out = MCDC_START_EARLIEST;
        return 0;
    }
    if (s && strcmp(s, "latest") == 0) {
        *out = MCDC_START_LATEST;
        return 0;
    }
    char buf[32];
    if (s && s[0] && strlen(s) <= 22) {
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
            snprintf(buf, sizeof buf, "%s", s);
        else
            snprintf(buf, sizeof buf, "0x%s", s);
        if (mcdc_lsn_parse(lsn, buf) == 0) {
            *out = MCDC_START_LSN;
            return 0;
        }
    }
    mcdc_error_set(MCDC_EINVAL, "starting LSN '%s': not earliest, latest or an LSN (up to 20 "
                   "hex digits)", s ? s : "");
    return mcdc_error_hint("for example --starting-lsn 0x0000002D000001A00003");
}

/* ---- small helpers ----------------------------------------------------------------------- */

char *mcdc_stream__lsn_text(char buf[MCDC_LSN_STRLEN], const mcdc_lsn *l)
{
    return mcdc_lsn_format(buf, l);
}

/* The commit time of @p lsn into @p o (has_commit_ts false when the source maps none). */
int mcdc_stream__offset_at(mcdc_stream *s, const mcdc_lsn *lsn, mcdc_offset *o)
{
    o->lsn = *lsn;
    o->has_commit_ts = false;
    o->commit_ts_us = 0;
    if (mcdc_lsn_is_zero(lsn))
        return 0;
    int rc = s->o.source->ops->lsn_to_commit_ts(s->o.source, lsn, &o->commit_ts_us);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    o->has_commit_ts = true;
    return 0;
}

int mcdc_stream__max_lsn(mcdc_stream *s, mcdc_lsn *out)
{
    return s->o.source->ops->max_lsn(s->o.source, out);
}

static int src_min_lsn(mcdc_stream *s, mcdc_lsn *out)
{
    return s->o.source->ops->min_lsn(s->o.source, s->ci, out);
}

int mcdc_stream__before_instance_start(mcdc_stream *s, mcdc_lsn *out, bool *found)
{
    *found = false;
    mcdc_lsn min;
    int rc = src_min_lsn(s, &min);
    if (rc < 0 || !mcdc_lsn_is_zero(&min) || !s->o.source->ops->capture_instances)
        return rc;
    mcdc_capture_instance *a = NULL;
    size_t n = 0;
    if ((rc = s->o.source->ops->capture_instances(s->o.source, NULL, &a, &n)) < 0)
        return rc;
    for (size_t i = 0; i < n && !*found; i++) {
        if (strcasecmp(a[i].name, s->ci) != 0 ||
            mcdc_lsn_is_zero(&a[i].enable_lsn))
            continue;
        if ((rc = mcdc_lsn_decrement(out, &a[i].enable_lsn)) < 0)
            break;
        *found = true;
    }
    mcdc_capture_instances_free(a, n);
    return rc;
}

static void emit(mcdc_stream *s, const mcdc_stream_progress *p)
{
    if (p->json && s->progress_fd >= 0) {
        size_t len = strlen(p->json);
        char *line = malloc(len + 2);
        if (line) {
            memcpy(line, p->json, len);
            line[len] = '\n';
            if (mcdc_fs_append(s->progress_fd, line, len + 1, s->o.progress_path) < 0) {
                mcdc_log(MCDC_LOG_WARN, LOGGER, "progress event not written: %s",
                         mcdc_error_last()->message);
                mcdc_error_clear();
            }
            free(line);
        }
    }
    for (int i = 0; i < s->n_listeners; i++)
        s->listeners[i].fn(p, s->listeners[i].payload);
}

/* The JSON of a progress event, like Spark's StreamingQueryProgress. */
static int progress_json(mcdc_buf *b, mcdc_stream *s, const mcdc_stream_progress *p,
                         int64_t plan_ms, int64_t wal_ms, int64_t add_ms, int64_t commit_ms)
{
    char ts[MCDC_TIME_STRLEN], o1[96], o2[96], o3[96];
    mcdc_time_format(ts, mcdc_time_now_us(), 3, true);
    double secs = p->duration_ms > 0 ? (double)p->duration_ms / 1000.0 : 0.0;
    double rate = secs > 0 ? (double)p->num_input_rows / secs : 0.0;
    int rc = mcdc_buf_printf(b, "{\"id\":\"%s\",\"runId\":\"%s\",\"name\":", s->stream_id,
                             s->run_id);
    if (rc == 0)
        rc = mcdc_json_quote(b, s->o.app_id, strlen(s->o.app_id));
    if (rc == 0)
        rc = mcdc_buf_printf(b, ",\"timestamp\":\"%s\",\"batchId\":%" PRId64
                                ",\"numInputRows\":%" PRId64 ",\"processedRowsPerSecond\":%.1f,"
                                "\"durationMs\":{\"latestOffset\":%" PRId64 ",\"walCommit\":%"
                                PRId64 ",\"addBatch\":%" PRId64 ",\"commitOffsets\":%" PRId64
                                ",\"triggerExecution\":%" PRId64 "},\"sources\":[{"
                                "\"description\":",
                             ts, p->batch_id, p->num_input_rows, rate, plan_ms, wal_ms, add_ms,
                             commit_ms, p->duration_ms);
    if (rc == 0) {
        char desc[300];
        snprintf(desc, sizeof desc, "mssql-cdc[%s]", s->ci);
        rc = mcdc_json_quote(b, desc, strlen(desc));
    }
    if (rc == 0)
        rc = mcdc_buf_printf(b, ",\"startOffset\":%s,\"endOffset\":%s,\"latestOffset\":%s,"
                                "\"numInputRows\":%" PRId64 "}],\"sink\":{\"description\":",
                             p->has_end ? mcdc_offset_to_json(o1, sizeof o1, &p->start) : "null",
                             p->has_end ? mcdc_offset_to_json(o2, sizeof o2, &p->end) : "null",
                             p->has_latest ? mcdc_offset_to_json(o3, sizeof o3, &p->latest)
                                           : "null",
                             p->num_input_rows);
    if (rc == 0) {
        char desc[1024];
        snprintf(desc, sizeof desc, "DeltaSink[%s]", s->o.target);
        rc = mcdc_json_quote(b, desc, strlen(desc));
    }
    if (rc == 0)
        rc = mcdc_buf_printf(b, ",\"numOutputRows\":%" PRId64 "}}", p->num_input_rows);
    return rc;
}

/* ---- tables ------------------------------------------------------------------------------- */

/* min_lsn answered 0x00 after a read for an instance whose min_lsn was @p before it:
 * SQL Server answers 0x00 to a caller no longer authorized to the change data (SELECT on the
 * source table revoked, or the gating role), or for an instance dropped and created again.
 * Either way the data-loss guard has nothing to compare with: refused, nothing of the
 * batch committed (a revoke during a read would otherwise hide a purge of the same
 * minutes). Between batches the plan's capture_instances, asked every time, no longer
 * lists an instance the login cannot read, and the check's error names the grant. */
static int min_lsn_lost_error(mcdc_stream *s, const mcdc_lsn *before, int64_t batch_id)
{
    char b[MCDC_LSN_STRLEN];
    mcdc_error_set(MCDC_ESOURCE, "%s: sys.fn_cdc_get_min_lsn answered 0x00000000000000000000 after "
                   "%s: the login can no longer read the instance's change data (SELECT on %s "
                   "revoked, or its gating role), or the instance was dropped and created again; "
                   "without min_lsn the data-loss guard cannot work, so nothing of batch %" PRId64
                   " is committed", s->ci, mcdc_stream__lsn_text(b, before),
                   s->source_table[0] ? s->source_table : "the source table", batch_id);
    return mcdc_error_hint("GRANT SELECT ON %s TO the stream's login (and the gating role, if the "
                           "instance has one), then run again: the batch is read again from its "
                           "start (mssql-cdc source check names what is missing)",
                           s->source_table[0] ? s->source_table : "the source table");
}

/* The txn version of @p app_id in the table at @p path (-1 when none or no table). */
static int data_loss_error(mcdc_stream *s, const mcdc_offset *after_off, const mcdc_lsn *min,
                           bool during_read)
{
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN], c[MCDC_LSN_STRLEN];
    const mcdc_lsn *after = &after_off->lsn;
    mcdc_lsn from = *after, to = *min;
    s->has_loss = true; /* where it was found: the gap of a re-snapshot (resnapshot.c) */
    s->loss_after = *after_off;
    s->loss_min = *min;
    mcdc_lsn_increment(&from, after);
    mcdc_lsn_decrement(&to, min);
    mcdc_error_set(MCDC_EDATALOSS, "%s: change data from %s to %s is gone (min_lsn is now %s): "
                   "purged by CDC cleanup%s", s->ci, mcdc_stream__lsn_text(a, &from),
                   mcdc_stream__lsn_text(b, &to), mcdc_stream__lsn_text(c, min),
                   during_read ? " while the batch was read" : " before it was read");
    return mcdc_error_hint("recover by itself with --on-data-loss resnapshot (a new snapshot "
                           "in a new generation; needs --facts); or take a new snapshot: run a "
                           "new stream with --bootstrap, a new --checkpoint and a new generation "
                           "of the app id (%s.g2) or a new --target; or skip the lost changes "
                           "with --on-data-loss skip (--option failOnDataLoss=false; needs "
                           "--facts; the gap is recorded as a data_skipped facts row)",
                           s->family[0] ? s->family : s->o.app_id);
}

/* ---- the source going backwards ------------------------------------------------------------ */

static int source_behind_error(mcdc_stream *s, const mcdc_offset *at, const mcdc_lsn *max,
                               const int64_t *now_ts, bool gone)
{
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN], t1[MCDC_TIME_STRLEN], t2[MCDC_TIME_STRLEN];
    mcdc_lsn_format(a, &at->lsn);
    mcdc_time_format(t1, at->commit_ts_us, 3, false);
    if (max)
        mcdc_error_set(MCDC_ESOURCE, "%s: the source went backwards: max_lsn is %s, below %s "
                       "(committed %s) that the stream already read up to", s->ci,
                       mcdc_lsn_format(b, max), a, t1);
    else if (gone)
        mcdc_error_set(MCDC_ESOURCE, "%s: the source went backwards: no commit has LSN %s any "
                       "more, which the stream read as committed %s", s->ci, a, t1);
    else
        mcdc_error_set(MCDC_ESOURCE, "%s: the source went backwards: LSN %s is committed %s "
                       "now, but the stream read it as committed %s", s->ci, a,
                       mcdc_time_format(t2, *now_ts, 3, false), t1);
    return mcdc_error_hint("nothing was written; the source was restored or failed over to a "
                           "replica that lags, and the commits after %s may never come back: "
                           "once the source is where it should be, take a new snapshot with "
                           "--bootstrap, a new --checkpoint and a new generation of the app id "
                           "(%s.g2)", a, s->family);
}

/* The commit at @p at (an offset the stream read up to) must still be there with the commit
 * time recorded; @p min: min_lsn just read (below it, cleanup explains a missing entry);
 * @p has_ts, @p ts: the commit time the source gives at->lsn now (asked with the plan's
 * other questions, see positions_of_plan). */
static int check_position_answer(mcdc_stream *s, const mcdc_offset *at, const mcdc_lsn *min,
                                 bool has_ts, int64_t ts)
{
    if (!at->has_commit_ts || mcdc_lsn_is_zero(&at->lsn))
        return 0; /* not a commit (a start LSN): nothing recorded to compare */
    if (!has_ts) {
        if (!mcdc_lsn_is_zero(min) && mcdc_lsn_cmp(&at->lsn, min) < 0)
            return 0; /* cleaned up: the data-loss guard speaks */
        return source_behind_error(s, at, NULL, NULL, true);
    }
    /* offsets keep milliseconds */
    char t1[MCDC_TIME_STRLEN], t2[MCDC_TIME_STRLEN];
    mcdc_time_format(t1, at->commit_ts_us, 3, false);
    mcdc_time_format(t2, ts, 3, false);
    return strcmp(t1, t2) == 0 ? 0 : source_behind_error(s, at, NULL, &ts, false);
}

/* check_position_answer, asking the commit time itself (a replay). */
static int check_position(mcdc_stream *s, const mcdc_offset *at, const mcdc_lsn *min)
{
    if (!at->has_commit_ts || mcdc_lsn_is_zero(&at->lsn))
        return 0;
    mcdc_offset now;
    int rc = mcdc_stream__offset_at(s, &at->lsn, &now);
    if (rc < 0)
        return rc;
    return check_position_answer(s, at, min, now.has_commit_ts, now.commit_ts_us);
}

/* ---- reading a batch into bronze --------------------------------------------------------- */

/* The changes of a batch lost to cleanup: [from, to), to capped at the batch's end (a batch
 * lost whole ends its gap at its end). */
typedef struct gap {
    bool     has;
    bool     certain;  /* false once a purge during the read may have taken rows */
    bool     whole;    /* min_lsn passed the batch's end: nothing of it is left to read */
    mcdc_lsn from;     /* first LSN not read */
    mcdc_lsn to;       /* min_lsn the batch resumed at, or its end */
} gap;

static void gap_extend(gap *g, const mcdc_batch_range *r, const mcdc_lsn *from,
                       const mcdc_lsn *to, bool certain)
{
    mcdc_lsn t = mcdc_lsn_cmp(to, &r->end.lsn) <= 0 ? *to : r->end.lsn;
    g->whole |= mcdc_lsn_cmp(to, &r->end.lsn) > 0;
    if (!g->has) {
        g->has = true;
        g->from = *from;
        g->to = t;
    } else {
        if (mcdc_lsn_cmp(from, &g->from) < 0)
            g->from = *from;
        if (mcdc_lsn_cmp(&t, &g->to) > 0)
            g->to = t;
    }
    g->certain &= certain;
}

/* The warnings the source raised since the last batch, as the batch row's detail
 * {"warnings": [...]} (anchor-features §2.5); *out NULL when there were none. */
static int source_warnings(mcdc_stream *s, char **out)
{
    *out = NULL;
    mcdc_source *src = s->o.source;
    char **w = NULL;
    size_t n = 0;
    if (!src->ops->take_warnings)
        return 0;
    int rc = src->ops->take_warnings(src, &w, &n);
    if (rc < 0 || n == 0) {
        free(w);
        return rc;
    }
    mcdc_buf d = MCDC_BUF_INIT(1 << 20);
    rc = mcdc_buf_puts(&d, "{\"warnings\":[");
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && i)
            rc = mcdc_buf_putc(&d, ',');
        if (rc == 0)
            rc = mcdc_json_quote(&d, w[i], strlen(w[i]));
        free(w[i]);
    }
    free(w);
    if (rc == 0)
        rc = mcdc_buf_puts(&d, "]}");
    if (rc < 0) {
        mcdc_buf_dispose(&d);
        return rc;
    }
    *out = mcdc_buf_detach(&d);
    return 0;
}

/* C1: offsets/N is durable before anything of batch N is committed. Its write, started by
 * the plan (mcdc_checkpoint_record_range_begin), overlaps the read; this waits for it. */
static int offsets_recorded(mcdc_stream *s)
{
    if (!s->pending)
        return 0;
    mcdc_checkpoint_pending *p = s->pending;
    s->pending = NULL;
    int64_t tw = mcdc_time_mono_us();
    int rc = mcdc_checkpoint_record_range_end(s->ck, p);
    s->wal_ms = (mcdc_time_mono_us() - tw) / 1000;
    if (rc == 0)
        mcdc_failpoint("stream.after_offsets");
    return rc;
}

/* A batch that failed before offsets_recorded: its write is waited for all the same (the
 * checkpoint then holds offsets/N, as when it was written before the read), keeping the
 * batch's own error. */
static void offsets_settle(mcdc_stream *s)
{
    if (!s->pending)
        return;
    mcdc_error saved = *mcdc_error_last();
    offsets_recorded(s);
    mcdc_error_restore(&saved);
}

/* The caller's read slots (mcdc_stream_options.slot_*): a batch reads its source with a
 * slot and commits without one. slot_take returns 0, or 1 when the caller is stopping. */
static int slot_take(mcdc_stream *s)
{
    return s->o.slot_acquire ? s->o.slot_acquire(s->o.slot_payload) : 0;
}

static void slot_give(mcdc_stream *s)
{
    if (s->o.slot_release)
        s->o.slot_release(s->o.slot_payload);
}

static int run_batch(mcdc_stream *s, const mcdc_batch_range *r, bool replay)
{
    int64_t t0 = mcdc_time_mono_us();
    int64_t N = r->batch_id;
    batch_metrics m = { .started_at_us = mcdc_time_now_us(), .duration_ms = -1,
                        .read_seconds = -1, .read_mb = -1 };
    mcdc_batch_facts bf = MCDC_BATCH_FACTS_INIT;
    facts_rows fr = { .n = 1 }; /* slot 0: the batch row, filled at the end */
    read_ctx x;
    int rc;
    /* a replay meets its range's DDL again (its plan was an earlier run's) */
    if (replay && mcdc_lsn_cmp(&r->start.lsn, &r->end.lsn) < 0) {
        mcdc_lsn upto = r->end.lsn; /* recorded ranges never straddle a switch */
        if ((rc = mcdc_stream__plan_instance(s, &r->start.lsn, &upto, N)) < 0 ||
            (rc = mcdc_stream__plan_ddl(s, &r->start.lsn, &r->end.lsn, N)) < 0)
            return rc;
    }
    if ((rc = mcdc_stream__read_init(&x, s)) < 0) {
        offsets_settle(s);
        return rc;
    }
    int64_t bronze_version = -1, facts_version = -1;
    /* the batch's gap (failOnDataLoss=false): one data_skipped row, inside the batch, however
     * many times cleanup moved min_lsn (planned, before the read, during it) */
    gap g = { false, true, false, { { 0 } }, { { 0 } } };
    bool mid_read_loss = false;
    mcdc_lsn read_after = r->start.lsn;
    if (r->has_skip) {
        /* recorded when planned: the gap goes into the facts with the batch, replays too */
        gap_extend(&g, r, &r->skip_from, &r->skip_to, true);
        mcdc_lsn_decrement(&read_after, &g.to);
    }

    if (replay && s->bronze_txn >= N) {
        /* invariant 2: bronze holds N; take its facts from the commit, read nothing */
        char *um = NULL;
        if ((rc = mcdc_stream__find_commit_metadata(s->o.target_path, s->o.app_id, N, &um,
                                       &bronze_version)) < 0)
            goto done;
        if ((rc = mcdc_stream__check_bronze_range(s, r, um, bronze_version)) < 0) {
            free(um);
            goto done;
        }
        int64_t bid;
        if (um && mcdc_batch_facts_parse_json(&bf, &bid, NULL, um) == 0 && bid == N) {
            mcdc_log(MCDC_LOG_INFO, LOGGER, "batch %" PRId64 ": bronze already holds it "
                     "(version %" PRId64 "); facts from its commit", N, bronze_version);
        } else {
            mcdc_error_clear();
            bf = (mcdc_batch_facts)MCDC_BATCH_FACTS_INIT;
            bf.counts_known = false;
            mcdc_log(MCDC_LOG_WARN, LOGGER, "batch %" PRId64 ": bronze holds it but its commit "
                     "information is gone (log cleanup); facts row without counts", N);
        }
        free(um);
        slot_give(s); /* nothing of the source is needed for the rest of the batch */
    } else {
        /* the data-loss guard, for ranges bronze does not hold yet */
        mcdc_lsn min, from;
        if (!replay && s->has_plan_min) /* asked by the plan a moment ago: not twice */
            min = s->plan_min;
        else if ((rc = src_min_lsn(s, &min)) < 0)
            goto done;
        s->has_plan_min = false;
        const mcdc_lsn guard_min = min; /* min_lsn before the read, for the check after it */
        if (replay) { /* planned by an earlier run: its end must still be where it was */
            mcdc_lsn mx;
            if ((rc = mcdc_stream__max_lsn(s, &mx)) < 0)
                goto done;
            if (r->end.has_commit_ts && mcdc_lsn_cmp(&mx, &r->end.lsn) < 0) {
                rc = source_behind_error(s, &r->end, &mx, NULL, false);
                goto done;
            }
            if ((rc = check_position(s, &r->end, &min)) < 0)
                goto done;
        }
        if ((rc = mcdc_lsn_increment(&from, &read_after)) < 0)
            goto done;
        if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_cmp(&from, &min) < 0) {
            /* purged after the range was recorded */
            if (s->o.fail_on_data_loss) {
                rc = data_loss_error(s, &r->start, &min, false);
                goto done;
            }
            gap_extend(&g, r, &from, &min, true);
            if (g.whole)
                read_after = r->end.lsn;
            else
                mcdc_lsn_decrement(&read_after, &g.to);
            from = g.to;
            mcdc_log(MCDC_LOG_WARN, LOGGER, "%s: changes purged before they were read; skipped "
                     "ahead (failOnDataLoss=false)", s->ci);
        }
        int64_t tr = mcdc_time_mono_us();
        x.batch_id = N;
        /* a range (L, L] (the start of a stream at latest) holds nothing: no read */
        if (mcdc_lsn_cmp(&read_after, &r->end.lsn) < 0)
            rc = s->o.source->ops->read_changes(s->o.source, s->ci, &read_after,
                                                &r->end.lsn, mcdc_stream__on_change, &x);
        if (rc < 0)
            goto done;
        m.read_seconds = (double)(mcdc_time_mono_us() - tr) / 1e6;
        m.read_mb = x.bytes / 1e6;
        bf = x.facts;
        /* after the read, in one round trip: min_lsn (a purge between two pages of the read
         * is caught here) and its commit time (the retention watermark), max_lsn and its
         * commit time, the source's clock; a commit time already known is not asked */
        mcdc_positions q = { .ask = MCDC_POS_MIN | MCDC_POS_MIN_TS | MCDC_POS_MAX |
                                    MCDC_POS_MAX_TS | MCDC_POS_NOW,
                             .ci = s->ci, .has_known_min = s->has_watermark,
                             .known_min = s->watermark.lsn, .has_known_max = s->has_latest,
                             .known_max = s->latest.lsn };
        if ((rc = mcdc_source_positions(s->o.source, &q)) < 0)
            goto done;
        min = q.min_lsn;
        if (mcdc_lsn_is_zero(&min) && !mcdc_lsn_is_zero(&guard_min)) {
            rc = min_lsn_lost_error(s, &guard_min, N);
            goto done;
        }
        if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_cmp(&from, &min) < 0) {
            if (s->o.fail_on_data_loss) {
                rc = data_loss_error(s, &r->start, &min, true);
                goto done;
            }
            mid_read_loss = true;
            gap_extend(&g, r, &from, &min, false);
        }
        if (!mcdc_lsn_is_zero(&min)) {
            /* min_lsn moves only with cleanup: its commit time is asked when it moved */
            if (!s->has_watermark || mcdc_lsn_cmp(&min, &s->watermark.lsn) != 0) {
                s->watermark = (mcdc_offset){ .lsn = min, .has_commit_ts = q.has_min_ts,
                                              .commit_ts_us = q.min_ts_us };
                s->has_watermark = true;
            }
            m.has_watermark = s->watermark.has_commit_ts;
            m.watermark_ts_us = s->watermark.commit_ts_us;
        }
        mcdc_offset mo;
        if (s->has_latest && mcdc_lsn_cmp(&q.max_lsn, &s->latest.lsn) == 0)
            mo = s->latest; /* max_lsn did not move while the batch was read */
        else
            mo = (mcdc_offset){ .lsn = q.max_lsn, .has_commit_ts = q.has_max_ts,
                                .commit_ts_us = q.max_ts_us };
        m.has_source_max = mo.has_commit_ts;
        m.source_max_ts_us = mo.commit_ts_us;
        s->has_latest = true;
        s->latest = mo;
        m.has_server_now = q.has_now;
        m.server_now_us = q.has_now ? q.now_us : 0;
        if (mid_read_loss) {
            mcdc_log(MCDC_LOG_WARN, LOGGER, "%s: CDC cleanup moved min_lsn past the start of "
                     "batch %" PRId64 " while it was read: changes may be missing "
                     "(failOnDataLoss=false; recorded as data_skipped)", s->ci, N);
        }
        /* read: the rest of the batch (its file, its commits) needs only the disk, so
         * another table may read meanwhile (run's read slots) */
        slot_give(s);
        if ((rc = offsets_recorded(s)) < 0)
            goto done;
        if (x.df) {
            mcdc_buf um = MCDC_BUF_INIT(1 << 16);
            rc = mcdc_batch_facts_to_json(&um, &bf, N, s->o.app_id, r);
            if (rc == 0)
                rc = mcdc_stream__commit_bronze(s, &x, s->o.app_id, N, um.ptr, "STREAMING UPDATE",
                                                r, &bronze_version);
            mcdc_buf_dispose(&um);
            if (rc < 0)
                goto done;
            if (bronze_version >= 0 && N > s->bronze_txn)
                s->bronze_txn = N;
            mcdc_failpoint("stream.after_bronze_commit");
        }
        m.duration_ms = (mcdc_time_mono_us() - t0) / 1000;
    }

    if (g.has && (rc = mcdc_stream__add_skip_row(&fr, s, N, &g.from, &g.to, r, g.certain)) < 0)
        goto done;
    if ((rc = mcdc_stream__add_switch_row(&fr, s, N)) < 0 ||
        (rc = mcdc_stream__add_ddl_rows(&fr, s, N)) < 0)
        goto done;
    /* (L, L]: where a stream started at latest begins; only such a batch has start = end */
    if (mcdc_lsn_cmp(&r->start.lsn, &r->end.lsn) == 0 &&
        (rc = mcdc_stream__add_start_row(&fr, s, N, r)) < 0)
        goto done;
    if (s->o.facts_path) {
        if ((rc = source_warnings(s, &m.detail)) < 0)
            goto done;
        mcdc_stream__set_batch_row(&fr, s, N, &bf, r, &m);
        if ((rc = mcdc_stream__write_facts(s, &fr, s->facts_app_id, N, &facts_version)) < 0)
            goto done;
        mcdc_failpoint("stream.after_facts");
    }
    int64_t add_ms = (mcdc_time_mono_us() - t0) / 1000, tc = mcdc_time_mono_us();
    mcdc_failpoint("stream.before_commit");
    mcdc_batch_commit c = { .batch_id = N, .bronze_version = bronze_version,
                            .facts_version = facts_version,
                            .committed_at_us = mcdc_time_now_us() };
    if ((rc = mcdc_checkpoint_record_commit(s->ck, &c)) < 0)
        goto done;
    s->has_last = true;
    s->last_end = r->end;
    s->last_batch = N;
    s->res->n_batches++;
    s->res->n_rows += bf.counts_known ? bf.rows : 0;

    mcdc_stream_progress p = { .kind = MCDC_PROGRESS_BATCH, .id = s->stream_id,
                               .run_id = s->run_id, .batch_id = N,
                               .num_input_rows = bf.counts_known ? bf.rows : 0,
                               .replayed = replay, .has_end = true, .start = r->start,
                               .end = r->end, .has_latest = s->has_latest, .latest = s->latest,
                               .duration_ms = (mcdc_time_mono_us() - t0) / 1000 +
                                              s->plan_ms + s->wal_ms,
                               .read_bytes = m.read_mb >= 0 ? x.bytes : 0,
                               .capture_instance = s->ci };
    p.has_headroom = mcdc_stream__headroom_hours(&p.headroom_hours, &m, r, &bf);
    mcdc_buf js = MCDC_BUF_INIT(1 << 16);
    if (progress_json(&js, s, &p, s->plan_ms, s->wal_ms, add_ms,
                      (mcdc_time_mono_us() - tc) / 1000) == 0)
        p.json = js.ptr;
    emit(s, &p);
    mcdc_buf_dispose(&js);
    /* a snapshot after a switch reads the source: with a slot (a stop first leaves it to
     * the next run, which finishes it: W2 in switch_snapshot.c) */
    if (s->switch_batch == N && slot_take(s) == 0 &&
        (rc = mcdc_stream__snapshot_on_switch(s)) < 0)
        goto done;
done:
    slot_give(s);
    offsets_settle(s);
    free(m.detail);
    mcdc_stream__facts_rows_clear(&fr);
    mcdc_stream__read_dispose(&x);
    return rc;
}

/* ---- planning ---------------------------------------------------------------------------- */

/* Plan the batch after @p after: *has = false when there is nothing new (an idle poll). */
static int plan_batch(mcdc_stream *s, const mcdc_offset *after, const mcdc_lsn *cap,
                      int64_t batch_id, mcdc_batch_range *out, bool *has)
{
    *has = false;
    mcdc_lsn M;
    int rc;
    if (s->has_fresh_max) { /* available-now's first plan reuses the query that set its target */
        M = s->fresh_max;
        s->has_fresh_max = false;
    } else if ((rc = mcdc_stream__max_lsn(s, &M)) < 0) {
        return rc;
    }
    /* the source went backwards: max_lsn below a position the stream read
     * up to (an offset that is a commit; a start before any commit may lie above it) */
    if (after->has_commit_ts && mcdc_lsn_cmp(&M, &after->lsn) < 0)
        return source_behind_error(s, after, &M, NULL, false);
    /* latestOffset: an idle poll costs this one query; the commit time is asked only
     * when max_lsn moved (and not at all when it is the offset already processed) */
    bool ask_m = false;
    if (mcdc_lsn_cmp(&M, &after->lsn) == 0) {
        s->latest = *after;
        s->has_latest = true;
    } else if (!s->has_latest || mcdc_lsn_cmp(&M, &s->latest.lsn) != 0) {
        ask_m = true;
    }
    mcdc_lsn upto = M;
    if (cap && mcdc_lsn_cmp(cap, &upto) < 0)
        upto = *cap;
    if (mcdc_lsn_cmp(&upto, &after->lsn) <= 0) {
        if (ask_m && (rc = mcdc_stream__offset_at(s, &M, &s->latest)) < 0)
            return rc;
        s->has_latest |= ask_m;
        return 0;
    }
    /* the instance this batch reads; a newer one's start cuts the range (ci_switch.c) */
    if ((rc = mcdc_stream__plan_instance(s, &after->lsn, &upto, batch_id)) < 0)
        return rc;
    memset(out, 0, sizeof *out);
    out->batch_id = batch_id;
    out->start = *after;
    /* the rest of the plan in one round trip: max_lsn's commit time (when it moved), the
     * commit time of the position (is the source where it was?), that of the range's end
     * when it is not max_lsn, the batch limit's n-th commit, min_lsn (the guard) */
    mcdc_positions q = { .ask = MCDC_POS_MIN | MCDC_POS_AT, .ci = s->ci };
    int i_m = -1, i_after = -1, i_upto = -1;
    if (ask_m)
        q.at[i_m = q.n_at++] = M;
    if (after->has_commit_ts && !mcdc_lsn_is_zero(&after->lsn))
        q.at[i_after = q.n_at++] = after->lsn;
    if (mcdc_lsn_cmp(&upto, &M) != 0)
        q.at[i_upto = q.n_at++] = upto;
    if (s->o.max_commits_per_batch > 0) {
        q.ask |= MCDC_POS_NTH;
        q.nth_after = after->lsn;
        q.nth_n = s->o.max_commits_per_batch;
    }
    if ((rc = mcdc_source_positions(s->o.source, &q)) < 0)
        return rc;
    if (ask_m) {
        s->latest = (mcdc_offset){ .lsn = M, .has_commit_ts = q.has_at_ts[i_m],
                                   .commit_ts_us = q.at_ts_us[i_m] };
        s->has_latest = true;
    }
    bool have_ts = false;
    if (s->o.max_commits_per_batch > 0 && q.nth_found > 0 && mcdc_lsn_cmp(&q.nth, &upto) < 0) {
        upto = q.nth;
        out->end.lsn = q.nth;
        out->end.commit_ts_us = q.nth_ts_us;
        out->end.has_commit_ts = true;
        have_ts = true;
    }
    if (!have_ts) {
        if (s->has_latest && mcdc_lsn_cmp(&upto, &s->latest.lsn) == 0)
            out->end = s->latest; /* asked above: not twice */
        else
            out->end = (mcdc_offset){ .lsn = upto, .has_commit_ts = i_upto >= 0 && q.has_at_ts[i_upto],
                                      .commit_ts_us = i_upto >= 0 ? q.at_ts_us[i_upto] : 0 };
    }
    /* the guard: increment(after) below min_lsn means purged changes */
    mcdc_lsn min = q.min_lsn, from;
    if ((rc = check_position_answer(s, after, &min, i_after >= 0 && q.has_at_ts[i_after],
                                    i_after >= 0 ? q.at_ts_us[i_after] : 0)) < 0)
        return rc;
    s->plan_min = min; /* the batch's guard before its read uses it */
    s->has_plan_min = true;
    if ((rc = mcdc_lsn_increment(&from, &after->lsn)) < 0)
        return rc;
    if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_cmp(&from, &min) < 0) {
        if (s->o.fail_on_data_loss)
            return data_loss_error(s, after, &min, false);
        out->has_skip = true;
        out->skip_from = from;
        out->skip_to = mcdc_lsn_cmp(&min, &upto) <= 0 ? min : upto;
        char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
        mcdc_lsn last;
        mcdc_lsn_decrement(&last, &out->skip_to);
        mcdc_log(MCDC_LOG_WARN, LOGGER, "%s: changes from %s to %s were purged before they were "
                 "read; skipping them (failOnDataLoss=false), recorded as data_skipped in batch %"
                 PRId64, s->ci, mcdc_stream__lsn_text(a, &from),
                 mcdc_stream__lsn_text(b, &last), batch_id);
    }
    /* DDL in the range: classified (or refused) before anything is recorded or read */
    if ((rc = mcdc_stream__plan_ddl(s, &after->lsn, &out->end.lsn, batch_id)) < 0)
        return rc;
    out->planned_at_us = mcdc_time_now_us();
    *has = true;
    return 0;
}

/* ---- bootstrap --------------------------------------------------------------------------- */

int mcdc_stream_new(mcdc_stream **out, const mcdc_stream_options *opts)
{
    MCDC_ASSERT_ARG(out && opts);
    *out = NULL;
    if (!opts->source || !opts->capture_instance || !opts->target || !opts->target_path ||
        !opts->app_id || !opts->checkpoint)
        return mcdc_error_set(MCDC_EINVAL, "stream: source, capture instance, target, app_id "
                              "and checkpoint are required");
    if (!opts->app_id[0] || strchr(opts->app_id, '#'))
        return mcdc_error_set(MCDC_EINVAL, "app_id '%s': must be non-empty and without '#' "
                              "(reserved for the facts and snapshot keys)", opts->app_id);
    if (opts->bootstrap && opts->starting_given) {
        mcdc_error_set(MCDC_EINVAL, "--bootstrap and a starting LSN: pass one or the other");
        return mcdc_error_hint("--bootstrap starts the stream at its snapshot's LSN");
    }
    if (opts->bootstrap && opts->bootstrap_mode == MCDC_BOOTSTRAP_CHUNKED && !opts->facts_path) {
        mcdc_error_set(MCDC_EINVAL, "--bootstrap-mode chunked needs a facts table");
        return mcdc_error_hint("add --facts NAME: the chunked snapshot's state is recorded there");
    }
    if (opts->on_data_loss == MCDC_ON_DATA_LOSS_RESNAPSHOT && !opts->fail_on_data_loss) {
        mcdc_error_set(MCDC_EINVAL, "--on-data-loss resnapshot and failOnDataLoss=false: pass "
                       "one or the other");
        return mcdc_error_hint("resnapshot recovers the lost changes with a new snapshot; skip "
                               "(failOnDataLoss=false) goes on without them");
    }
    if (opts->on_data_loss == MCDC_ON_DATA_LOSS_RESNAPSHOT && !opts->facts_path) {
        mcdc_error_set(MCDC_EINVAL, "--on-data-loss resnapshot needs a facts table");
        return mcdc_error_hint("add --facts NAME: the re-snapshot and its gap are recorded there");
    }
    if (opts->resnapshot_interval_us < 0)
        return mcdc_error_set(MCDC_EINVAL, "--resnapshot-interval must not be negative");
    if ((!opts->fail_on_data_loss || opts->on_data_loss == MCDC_ON_DATA_LOSS_SKIP) &&
        !opts->facts_path) {
        mcdc_error_set(MCDC_EINVAL, "failOnDataLoss=false needs a facts table");
        return mcdc_error_hint("add --facts NAME: skipped changes are recorded there as a "
                               "data_skipped row");
    }
    if ((opts->facts == NULL) != (opts->facts_path == NULL))
        return mcdc_error_set(MCDC_EINVAL, "stream: facts name and path go together");
    if (opts->trigger == MCDC_TRIGGER_INTERVAL && opts->interval_us <= 0)
        return mcdc_error_set(MCDC_EINVAL, "trigger interval must be positive");
    if (opts->max_commits_per_batch < 0)
        return mcdc_error_set(MCDC_EINVAL, "maxCommitsPerBatch must be at least 1");
    if (opts->adopt && (opts->bootstrap || opts->starting_given)) {
        mcdc_error_set(MCDC_EINVAL, "--adopt and %s: pass one or the other",
                       opts->bootstrap ? "--bootstrap" : "a starting LSN");
        return mcdc_error_hint("--adopt resumes where the table's owner left off");
    }
    mcdc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "stream: out of memory");
    s->o = *opts;
    if (s->o.on_data_loss == MCDC_ON_DATA_LOSS_SKIP)
        s->o.fail_on_data_loss = false;
    else if (!s->o.fail_on_data_loss)
        s->o.on_data_loss = MCDC_ON_DATA_LOSS_SKIP;
    s->base_app_id = opts->app_id;
    s->base_checkpoint = opts->checkpoint;
    if (s->o.idle_event_interval_us <= 0)
        s->o.idle_event_interval_us = 10 * MCDC_US_PER_SEC;
    if (s->o.poll_interval_us <= 0)
        s->o.poll_interval_us = 100000;
    if (opts->run_id)
        snprintf(s->run_id, sizeof s->run_id, "%s", opts->run_id);
    else
        mcdc_delta_uuid(s->run_id);
    s->progress_fd = -1;
    s->ddl_batch = -1;
    s->switch_batch = -1;
    *out = s;
    return 0;
}

int mcdc_stream_add_listener(mcdc_stream *s, mcdc_stream_listener_fn fn, void *payload)
{
    MCDC_ASSERT_ARG(s && fn);
    if (s->n_listeners >= MAX_LISTENERS)
        return mcdc_error_set(MCDC_EINVAL, "stream: at most %d listeners", MAX_LISTENERS);
    s->listeners[s->n_listeners].fn = fn;
    s->listeners[s->n_listeners].payload = payload;
    s->n_listeners++;
    return 0;
}

void mcdc_stream_stop(mcdc_stream *s)
{
    if (s)
        s->stop = 1;
}

/* What mcdc_stream_check and mcdc_stream_open hold, released by run or free. */
static void release_run_state(mcdc_stream *s)
{
    offsets_settle(s); /* never pending here (run_batch settles it); the thread is joined */
    mcdc_fs_close(s->progress_fd);
    s->progress_fd = -1;
    mcdc_checkpoint_close(s->ck);
    s->ck = NULL;
    mcdc_schema_free(s->captured);
    s->captured = NULL;
    mcdc_schema_free(s->bronze_schema);
    s->bronze_schema = NULL;
    mcdc_schema_free(s->bronze_missing);
    s->bronze_missing = NULL;
    mcdc_schema_free(s->bronze_widened);
    s->bronze_widened = NULL;
    free(s->bronze_map);
    s->bronze_map = NULL;
    mcdc_schema_free(s->facts_schema);
    s->facts_schema = NULL;
    mcdc_stream__ddl_clear(s);
    mcdc_stream__switch_clear(s);
    free(s->facts_app_id);
    s->facts_app_id = NULL;
    s->checked = s->opened = s->prepared = false;
}

void mcdc_stream_keep_open(mcdc_stream *s, bool keep)
{
    s->keep_open = keep;
}

void mcdc_stream_set_source(mcdc_stream *s, mcdc_source *src)
{
    s->o.source = src;
}

bool mcdc_stream_is_open(const mcdc_stream *s)
{
    return s->opened && s->prepared;
}

void mcdc_stream_close(mcdc_stream *s)
{
    if (s)
        release_run_state(s);
}

void mcdc_stream_free(mcdc_stream *s)
{
    if (!s)
        return;
    release_run_state(s);
    free(s);
}

/* Sleep until @p until_mono_us or a stop request. */
static void wait_until(mcdc_stream *s, int64_t until_mono_us)
{
    while (!s->stop) {
        int64_t left = until_mono_us - mcdc_time_mono_us();
        if (left <= 0)
            return;
        if (left > s->o.poll_interval_us)
            left = s->o.poll_interval_us;
        struct timespec ts = { (time_t)(left / 1000000), (long)(left % 1000000) * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* Where a checkpoint without offsets starts; *ready false while it cannot be known yet
 * (earliest on a capture instance capture has not processed). */
static int initial_offset(mcdc_stream *s, mcdc_offset *out, bool *ready)
{
    *ready = false;
    int rc;
    mcdc_lsn l;
    switch (s->o.starting) {
    case MCDC_START_LATEST: {
        /* on an instance capture has not reached yet, the LSN just before its start */
        bool before;
        if ((rc = mcdc_stream__before_instance_start(s, &l, &before)) < 0)
            return rc;
        if (before) {
            memset(out, 0, sizeof *out);
            out->lsn = l; /* not a commit: no commit time */
            *ready = true;
            return 0;
        }
        if ((rc = mcdc_stream__max_lsn(s, &l)) < 0)
            return rc;
        break;
    }
    case MCDC_START_LSN:
        l = s->o.starting_lsn;
        break;
    default: {
        mcdc_lsn min;
        if ((rc = src_min_lsn(s, &min)) < 0)
            return rc;
        if (mcdc_lsn_is_zero(&min)) {
            mcdc_log(MCDC_LOG_INFO, LOGGER, "%s: min_lsn is 0x00: capture has not processed "
                     "the capture instance yet; nothing to read", s->ci);
            return 0;
        }
        if ((rc = mcdc_lsn_decrement(&l, &min)) < 0)
            return rc;
    }
    }
    if ((rc = mcdc_stream__offset_at(s, &l, out)) < 0)
        return rc;
    *ready = true;
    return 0;
}

static int check_txns(mcdc_stream *s, int64_t last_planned)
{
    if (s->bronze_txn > last_planned) {
        if (last_planned < 0)
            mcdc_error_set(MCDC_EINVAL, "%s: already holds batches of app_id '%s' (up to %"
                           PRId64 ") but checkpoint %s has none: it was deleted or belongs to "
                           "another stream", s->o.target, s->o.app_id, s->bronze_txn,
                           s->o.checkpoint);
        else
            mcdc_error_set(MCDC_EINVAL, "%s: holds batch %" PRId64 " of app_id '%s' but "
                           "checkpoint %s reaches only batch %" PRId64 ": it was rewound",
                           s->o.target, s->bronze_txn, s->o.app_id, s->o.checkpoint,
                           last_planned);
        return mcdc_error_hint("Delta would skip every batch up to %" PRId64 " silently: restore "
                               "the checkpoint, or continue after bronze's last batch with "
                               "--adopt and a new --checkpoint", s->bronze_txn);
    }
    /* behind (invariant 8): a bronze restored from an older backup lost batches the
     * checkpoint says it holds; Delta would not say so, the stream would carry on.
     * Before the checkpoint is open (a new one, checked before it is created) it holds
     * no batch. */
    mcdc_batch_commit bc;
    int rc = s->ck ? mcdc_checkpoint_last_bronze_commit(s->ck, &bc)
                   : mcdc_error_set(MCDC_ENOTFOUND, "no checkpoint yet");
    if (rc == MCDC_ENOTFOUND)
        mcdc_error_clear();
    else if (rc < 0)
        return rc;
    else if (s->bronze_txn < bc.batch_id) {
        char have[48] = "no batch";
        if (s->bronze_txn >= 0)
            snprintf(have, sizeof have, "batches up to %" PRId64, s->bronze_txn);
        mcdc_error_set(MCDC_ECORRUPT, "%s: holds %s of app_id '%s' but checkpoint %s recorded "
                       "batch %" PRId64 " in its version %" PRId64 ": bronze is behind its "
                       "checkpoint (restored from an older backup?)", s->o.target, have,
                       s->o.app_id, s->o.checkpoint, bc.batch_id, bc.bronze_version);
        return mcdc_error_hint("nothing was written (going on would lose the batches bronze "
                               "lacks): restore bronze to a version holding batch %" PRId64
                               ", or take a new snapshot with --bootstrap, a new --checkpoint "
                               "and a new generation of the app id (%s.g2)", bc.batch_id,
                               s->family);
    }
    /* bronze's newest batch of app_id must be this checkpoint's (invariant 10): a finished
     * batch that wrote no bronze commit, found in bronze, is another stream's */
    mcdc_batch_range tr;
    mcdc_batch_commit tc;
    rc = s->bronze_txn >= 0 && s->ck ? mcdc_checkpoint_batch(s->ck, s->bronze_txn, &tr, &tc)
                                     : MCDC_ENOTFOUND;
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
    } else if (rc < 0) {
        return rc;
    } else if (tc.bronze_version < 0) {
        char *um = NULL;
        int64_t ver = -1;
        rc = mcdc_stream__find_commit_metadata(s->o.target_path, s->o.app_id, s->bronze_txn,
                                               &um, &ver);
        if (rc == 0)
            rc = mcdc_stream__check_bronze_range(s, &tr, um, ver);
        free(um);
        if (rc < 0)
            return rc;
    }
    if (s->o.facts_path) {
        int64_t vf = -1;
        rc = mcdc_stream__table_txn(s->o.facts_path, s->facts_app_id, &vf, NULL, NULL);
        if (rc < 0)
            return rc;
        if (vf > last_planned) {
            mcdc_error_set(MCDC_EINVAL, "%s: holds facts of batch %" PRId64 " of app_id '%s' "
                           "but checkpoint %s reaches only batch %" PRId64 ": it was deleted "
                           "or rewound", s->o.facts, vf, s->o.app_id, s->o.checkpoint,
                           last_planned);
            return mcdc_error_hint("restore the checkpoint, or start again with a new "
                                   "--app-id and --checkpoint");
        }
    }
    return 0;
}

static int run_loop(mcdc_stream *s)
{
    mcdc_batch_range last;
    bool has_range = mcdc_checkpoint_last_range(s->ck, &last) == 0;
    mcdc_batch_commit lc;
    bool has_commit = mcdc_checkpoint_last_commit(s->ck, &lc) == 0;
    mcdc_error_clear();
    int rc;
    s->last_batch = has_commit ? lc.batch_id : s->first_batch - 1;

    /* where the next batch starts: the end of the last finished one; while a batch is
     * pending (offsets/N without commits/N) its start, which is that same end */
    mcdc_offset after = { { { 0 } }, 0, false };
    bool has_after = false;
    if (has_range) {
        after = (has_commit && lc.batch_id == last.batch_id) ? last.end : last.start;
        has_after = true;
    }
    if (has_commit) {
        s->has_last = true;
        s->last_end = after;
    }

    /* adopted (C6): the first batch starts where the previous owner's last one ended */
    mcdc_checkpoint_adoption ad;
    if (!has_range && mcdc_checkpoint_adoption_get(s->ck, &ad) == 0) {
        after = ad.after;
        has_after = true;
    }
    mcdc_error_clear();

    /* the caller's slot: held at the start of a run; asked for again in a new generation */
    if (slot_take(s))
        return 0;
    /* bootstrap: only for a checkpoint that never planned a batch */
    if (!has_range && !has_after && s->o.bootstrap) {
        if ((rc = mcdc_stream__bootstrap(s, &after)) < 0)
            return rc;
        has_after = true;
    }

    mcdc_stream_progress sp = { .kind = MCDC_PROGRESS_START, .id = s->stream_id,
                                .run_id = s->run_id, .batch_id = -1, .has_end = s->has_last,
                                .end = s->last_end, .start = s->last_end };
    emit(s, &sp);

    /* replay first (invariant 2) */
    int n_done = 0;
    if (has_range && (!has_commit || lc.batch_id < last.batch_id)) {
        mcdc_log(MCDC_LOG_INFO, LOGGER, "batch %" PRId64 ": replaying the recorded range",
                 last.batch_id);
        s->plan_ms = s->wal_ms = 0; /* recorded by an earlier run */
        if ((rc = run_batch(s, &last, true)) < 0)
            return rc;
        after = last.end;
        n_done++;
    }
    /* a snapshot-on-switch an earlier run did not finish (switch_snapshot.c, W2) */
    if ((rc = mcdc_stream__snapshot_on_switch(s)) < 0)
        return rc;
    if (s->o.trigger == MCDC_TRIGGER_ONCE && n_done)
        return 0;

    /* available-now: read up to max_lsn as seen at start */
    mcdc_lsn target;
    bool has_target = s->o.trigger == MCDC_TRIGGER_AVAILABLE_NOW;
    if (has_target) {
        if ((rc = mcdc_stream__max_lsn(s, &target)) < 0)
            return rc;
        s->fresh_max = target;
        s->has_fresh_max = true;
    }

    int64_t next_trigger = mcdc_time_mono_us();
    int64_t last_event = mcdc_time_mono_us();
    bool reached = false; /* available-now: a batch of this run read up to its target */
    while (!s->stop) {
        /* available-now ends once its batches have read up to the target: no question
         * more (the first plan still asks, and checks the source against the checkpoint) */
        if (reached)
            return 0;
        if (slot_take(s))
            return 0; /* the caller is stopping */
        int64_t tstart = mcdc_time_mono_us();
        if (!has_after) {
            bool ready;
            if ((rc = initial_offset(s, &after, &ready)) < 0)
                return rc;
            has_after = ready;
            if (ready && s->o.starting == MCDC_START_LATEST) {
                /* "latest" is resolved once: offsets/0 = (L, L] records it before anything
                 * is read, so a later run goes on from L instead of resolving it again
                 * (and never reading what committed in between) */
                mcdc_batch_range r0 = { .batch_id = s->last_batch + 1, .start = after,
                                        .end = after, .planned_at_us = mcdc_time_now_us() };
                s->plan_ms = (mcdc_time_mono_us() - tstart) / 1000;
                int64_t tw = mcdc_time_mono_us();
                if ((rc = mcdc_checkpoint_record_range(s->ck, &r0)) < 0)
                    return rc;
                s->wal_ms = (mcdc_time_mono_us() - tw) / 1000;
                mcdc_failpoint("stream.after_offsets");
                if ((rc = run_batch(s, &r0, false)) < 0)
                    return rc;
                if (slot_take(s))
                    return 0;
                tstart = mcdc_time_mono_us();
            }
        }
        mcdc_batch_range r;
        bool has = false;
        if (has_after) {
            if ((rc = plan_batch(s, &after, has_target ? &target : NULL, s->last_batch + 1, &r,
                                 &has)) < 0)
                return rc;
        } else if (!s->has_latest) {
            mcdc_lsn M;
            if ((rc = mcdc_stream__max_lsn(s, &M)) == 0)
                rc = mcdc_stream__offset_at(s, &M, &s->latest), s->has_latest = rc == 0;
            if (rc < 0)
                return rc;
        }
        if (has) {
            s->plan_ms = (mcdc_time_mono_us() - tstart) / 1000;
            s->wal_ms = 0;
            if ((rc = mcdc_checkpoint_record_range_begin(s->ck, &r, &s->pending)) < 0)
                return rc;
            if ((rc = run_batch(s, &r, false)) < 0)
                return rc;
            after = r.end;
            last_event = mcdc_time_mono_us();
            if (s->o.trigger == MCDC_TRIGGER_ONCE)
                return 0;
            if (s->o.trigger == MCDC_TRIGGER_AVAILABLE_NOW) {
                reached = mcdc_lsn_cmp(&after.lsn, &target) >= 0;
                continue;
            }
        } else {
            if (s->o.trigger != MCDC_TRIGGER_INTERVAL)
                return 0;
            if (mcdc_time_mono_us() - last_event >= s->o.idle_event_interval_us) {
                mcdc_stream_progress p = { .kind = MCDC_PROGRESS_IDLE, .id = s->stream_id,
                                           .run_id = s->run_id, .batch_id = s->last_batch + 1,
                                           .has_end = s->has_last, .start = s->last_end,
                                           .end = s->last_end, .has_latest = s->has_latest,
                                           .latest = s->latest,
                                           .duration_ms = (mcdc_time_mono_us() - tstart) / 1000 };
                mcdc_buf js = MCDC_BUF_INIT(1 << 16);
                if (progress_json(&js, s, &p, p.duration_ms, 0, 0, 0) == 0)
                    p.json = js.ptr;
                emit(s, &p);
                mcdc_buf_dispose(&js);
                last_event = mcdc_time_mono_us();
            }
        }
        /* interval: the next batch starts one interval after this one started */
        next_trigger += s->o.interval_us;
        if (next_trigger < mcdc_time_mono_us())
            next_trigger = mcdc_time_mono_us();
        slot_give(s); /* no slot is held while the stream waits for its next trigger */
        wait_until(s, next_trigger);
    }
    return 0;
}

/* Check the checkpoint's batches against bronze's and facts' txn (invariant 8). */
static int check_checkpoint_txns(mcdc_stream *s)
{
    mcdc_batch_range last;
    bool has_range = mcdc_checkpoint_last_range(s->ck, &last) == 0;
    mcdc_error_clear();
    return check_txns(s, has_range ? last.batch_id : s->first_batch - 1);
}

int mcdc_stream_check(mcdc_stream *s)
{
    MCDC_ASSERT_ARG(s);
    if (s->checked)
        return 0;
    release_run_state(s);
    s->bronze_txn = -1;
    s->has_plan_min = s->has_watermark = false;
    int rc;
    /* the live generation (generation.c): read on every start, whatever --on-data-loss
     * says; generation n > 0 has its own checkpoint and app id and starts from its
     * re-snapshot */
    if ((rc = mcdc_generation_read(&s->gen, s->base_checkpoint)) < 0)
        return rc;
    if ((rc = mcdc_generation_app_id(s->gen_app_id, sizeof s->gen_app_id, s->base_app_id,
                                     s->gen.n)) < 0 ||
        (rc = mcdc_generation_checkpoint(s->gen_checkpoint, sizeof s->gen_checkpoint,
                                         s->base_checkpoint, s->gen.n)) < 0)
        return rc;
    s->o.app_id = s->gen_app_id;
    s->o.checkpoint = s->gen_checkpoint;
    if (s->gen.n > 0) {
        if (s->o.adopt) {
            mcdc_error_set(MCDC_EINVAL, "--adopt: checkpoint %s is in re-snapshot generation %"
                           PRId64 ", which continues from its own snapshot", s->base_checkpoint,
                           s->gen.n);
            return mcdc_error_hint("run without --adopt, or adopt into a new --checkpoint");
        }
        s->o.bootstrap = true; /* a new generation starts from its re-snapshot */
        s->o.starting_given = false;
    }
    if ((rc = mcdc_stream_family(s->family, sizeof s->family, s->o.app_id)) < 0)
        return rc;
    if (s->o.facts_path) {
        size_t n = strlen(s->o.app_id) + 8;
        if (!(s->facts_app_id = malloc(n)))
            return mcdc_error_set(MCDC_ENOMEM, "stream: out of memory");
        snprintf(s->facts_app_id, n, "%s#facts", s->o.app_id);
    }
    /* --progress: its directory must take the file (it is opened once the checkpoint is) */
    if (s->o.progress_path && (rc = mcdc_fs_check_writable(s->o.progress_path)) < 0) {
        mcdc_error_prefix("--progress %s", s->o.progress_path);
        mcdc_error_hint("give --progress a file in a directory that exists");
        goto fail;
    }
    /* the checkpoint's location, then the source: the capture instance exists, and its
     * columns */
    bool ck_exists = false, ck_batches = false;
    if ((rc = mcdc_checkpoint_peek(s->o.checkpoint, &ck_exists, &ck_batches)) < 0)
        goto fail;
    if ((rc = mcdc_stream__find_capture_instance(s)) < 0 ||
        (rc = s->o.source->ops->captured_columns(s->o.source, s->ci,
                                                 &s->captured)) < 0)
        goto fail;
    /* the tables: kinds, bronze's source table and owner, then bronze's schema */
    if (s->o.facts_path &&
        (rc = mcdc_table_check_kind(s->o.facts_path, s->o.facts, "facts", "--facts")) < 0)
        goto fail;
    if (s->o.adopt && ck_batches) {
        mcdc_error_set(MCDC_EINVAL, "--adopt: checkpoint %s already has batches: adopting "
                       "needs a new or empty checkpoint", s->o.checkpoint);
        rc = mcdc_error_hint("pass a new --checkpoint directory (without --adopt, this one "
                             "continues its own stream)");
        goto fail;
    }
    char adopted[MCDC_PATH_MAX];
    snprintf(adopted, sizeof adopted, "%s/adopted", s->o.checkpoint);
    bool ck_adopted = ck_exists && mcdc_storage_exists(adopted); /* then open reads its plan */
    if ((rc = mcdc_stream__check_target(s, !ck_adopted, !ck_batches)) < 0 ||
        (rc = mcdc_stream__prepare_bronze(s)) < 0)
        goto fail;
    /* a new checkpoint must not meet batches of its app id in bronze (invariant 8) */
    if (!ck_exists && !ck_batches && !s->o.adopt && (rc = check_txns(s, -1)) < 0)
        goto fail;
    s->checked = true;
    return 0;
fail:
    release_run_state(s);
    return rc;
}

int mcdc_stream_open(mcdc_stream *s)
{
    MCDC_ASSERT_ARG(s);
    if (s->opened)
        return 0;
    int rc = mcdc_stream_check(s);
    if (rc < 0)
        return rc;
    if ((rc = mcdc_checkpoint_open_leased(&s->ck, s->o.checkpoint, s->o.app_id,
                                          s->o.capture_instance, s->o.target, s->o.lease_us)) < 0)
        goto fail;
    mcdc_batch_range last;
    bool has_range = mcdc_checkpoint_last_range(s->ck, &last) == 0;
    mcdc_error_clear();
    mcdc_checkpoint_adoption ad;
    if (mcdc_checkpoint_adoption_get(s->ck, &ad) == 0) {
        s->first_batch = ad.first_batch;
    } else {
        mcdc_error_clear();
        if (s->o.adopt && has_range) { /* batches appeared since the check */
            rc = mcdc_error_set(MCDC_EINVAL, "--adopt: checkpoint %s already has batches",
                                s->o.checkpoint);
            mcdc_error_hint("pass a new --checkpoint directory");
            goto fail;
        }
        if (s->o.adopt && !s->adopt_planned &&
            (rc = mcdc_stream__check_target(s, true, !has_range)) < 0)
            goto fail;
        if (!s->o.adopt)
            s->first_batch = 0;
    }
    if ((rc = check_checkpoint_txns(s)) < 0)
        goto fail;
    snprintf(s->stream_id, sizeof s->stream_id, "%s", mcdc_checkpoint_meta_get(s->ck)->id);
    s->opened = true;
    return 0;
fail:
    release_run_state(s);
    return rc;
}

/* The writes that come before the first batch: bronze's owner (or the adoption), the facts
 * table. Bronze's new columns go into the commit of the first batch that writes rows. */
static int prepare_writes(mcdc_stream *s)
{
    int rc;
    mcdc_batch_commit lc;
    bool has_commit = mcdc_checkpoint_last_commit(s->ck, &lc) == 0;
    mcdc_error_clear();
    mcdc_checkpoint_adoption ad;
    bool adopted = mcdc_checkpoint_adoption_get(s->ck, &ad) == 0;
    mcdc_error_clear();
    if (!adopted && s->o.adopt) {
        if ((rc = mcdc_checkpoint_record_adoption(s->ck, s->first_batch, &s->adopt_after,
                                                  s->adopt_from)) < 0 ||
            (rc = mcdc_checkpoint_adoption_get(s->ck, &ad)) < 0)
            return rc;
        adopted = true;
    }
    bool adopting = adopted && !has_commit; /* before its first batch */
    if ((rc = mcdc_stream__own_target(s, adopting ? ad.from_owner : NULL)) < 0)
        return rc;
    if (s->o.facts_path) {
        if ((rc = mcdc_facts_schema(&s->facts_schema)) < 0 ||
            (rc = mcdc_stream__ensure_table(s->o.facts_path, s->facts_schema, "facts", "12",
                                            NULL)) < 0)
            return rc;
        if (adopting &&
            (rc = mcdc_stream__write_adopted_event(s, &ad.after, ad.first_batch, ad.from_owner)) < 0)
            return rc;
    }
    return 0;
}

int mcdc_stream_run(mcdc_stream *s, mcdc_stream_result *result)
{
    MCDC_ASSERT_ARG(s && result);
    memset(result, 0, sizeof *result);
    result->last_batch_id = -1;
    snprintf(result->run_id, sizeof result->run_id, "%s", s->run_id);
    s->res = result;
    s->last_batch = -1;
    int rc = mcdc_stream_open(s);
    if (rc < 0)
        goto done;
    snprintf(result->id, sizeof result->id, "%s", s->stream_id);
    if (s->o.progress_path && s->progress_fd < 0) {
        if ((rc = mcdc_fs_append_open(&s->progress_fd, s->o.progress_path)) < 0)
            goto done;
    }
    /* kept open from a successful run (mcdc_stream_keep_open): bronze's owner and the facts
     * table were written then, and only this stream writes them under the checkpoint lock */
    if (!s->prepared && (rc = prepare_writes(s)) < 0)
        goto done;
    s->prepared = true;
    for (;;) {
        s->has_loss = false;
        rc = run_loop(s);
        if (rc != MCDC_EDATALOSS || s->o.on_data_loss != MCDC_ON_DATA_LOSS_RESNAPSHOT ||
            !s->has_loss)
            break;
        /* --on-data-loss resnapshot: generation n+1, then the stream goes on in it */
        if ((rc = mcdc_stream__next_generation(s)) < 0)
            break;
        int fd = s->progress_fd;
        s->progress_fd = -1;
        release_run_state(s);
        s->progress_fd = fd;
        s->has_last = s->has_latest = s->has_fresh_max = false;
        s->first_batch = 0;
        if ((rc = mcdc_stream_open(s)) < 0 || (rc = prepare_writes(s)) < 0)
            break;
        s->prepared = true;
        snprintf(result->id, sizeof result->id, "%s", s->stream_id);
    }
done:
    result->has_end = s->has_last;
    result->end = s->last_end;
    result->last_batch_id = s->last_batch;
    {
        mcdc_stream_progress p = { .kind = MCDC_PROGRESS_TERMINATED, .id = s->stream_id,
                                   .run_id = s->run_id, .batch_id = s->last_batch,
                                   .has_end = s->has_last, .start = s->last_end,
                                   .end = s->last_end, .rc = rc };
        if (rc < 0) {
            /* listeners must not lose the error record */
            mcdc_error saved = *mcdc_error_last();
            emit(s, &p);
            mcdc_error_restore(&saved);
        } else {
            emit(s, &p);
        }
    }
    /* kept open: the lock and the checks' findings stay for the next run; a failure
     * leaves nothing (the next run checks again, as a restarted stream would) */
    if (rc < 0 || !s->keep_open)
        release_run_state(s);
    s->res = NULL;
    return rc;
}
