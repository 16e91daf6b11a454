/*
 * pipeline/resnapshot.c: recovery from data loss (`stream --on-data-loss resnapshot`).
 *
 * When a batch finds changes purged after the checkpoint's position (at planning, before
 * its read, or while it read), the stream does not stop: it records generation n+1 in
 * the checkpoint's generation file (generation.c), with the gap (lost_from_ts: commit time
 * of the last offset read; lost_to_ts: commit time of min_lsn when the loss was found),
 * and mcdc_stream_run opens the new generation: its own checkpoint
 * `<checkpoint>/_generations/<n+1>` and app id `<app_id>.g<n+1>`, whose first run takes a
 * new snapshot in the stream's bootstrap mode (full: read now; chunked: opened, read by
 * `backfill`) and streams on after it. The generation file is the commit point: a kill
 * before it repeats the detection, a kill after it resumes generation n+1 (its snapshot
 * as any bootstrap resumes). The gap goes into the generation's snapshot_open row (kind
 * resnapshot) and its one `resnapshot` row, `txn{<app_id>#events, n+1}`.
 *
 * Anti-loop: at most one automatic re-snapshot per --resnapshot-interval, measured on the
 * source's clock from the start of the live generation; a second loss inside it stops
 * with MCDC_EDATALOSS (exit 4) naming the interval. Design: anchor-features §1 ("data
 * loss/resnapshot"), §3.3; docs/decisions/0023-resnapshot-generations.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mcdc/log.h"
#include "pipeline/stream_int.h"

static void duration_text(char *out, size_t cap, int64_t us)
{
    int64_t s = us / 1000000;
    if (s % 86400 == 0)
        snprintf(out, cap, "%" PRId64 "d", s / 86400);
    else if (s % 3600 == 0)
        snprintf(out, cap, "%" PRId64 "h", s / 3600);
    else if (s % 60 == 0)
        snprintf(out, cap, "%" PRId64 "m", s / 60);
    else
        snprintf(out, cap, "%" PRId64 "s", s);
}

int mcdc_stream__next_generation(mcdc_stream *s)
{
    mcdc_error saved = *mcdc_error_last(); /* the data loss, kept as the cause */
    int64_t now = 0;
    int rc = s->o.source->ops->server_now(s->o.source, &now);
    if (rc < 0)
        return rc;
    if (s->gen.n > 0 && s->gen.has_started_at && s->o.resnapshot_interval_us > 0 &&
        now - s->gen.started_at_us < s->o.resnapshot_interval_us) {
        char iv[32], at[MCDC_TIME_STRLEN];
        duration_text(iv, sizeof iv, s->o.resnapshot_interval_us);
        mcdc_time_format(at, s->gen.started_at_us, 3, false);
        mcdc_error_set(MCDC_EDATALOSS, "%s; a re-snapshot is refused: generation %" PRId64
                       " was started by one at %s (source clock), less than "
                       "--resnapshot-interval %s ago", saved.message, s->gen.n, at, iv);
        return mcdc_error_hint("changes are purged faster than the stream reads them: raise "
                               "the CDC retention or read more often; to re-snapshot now anyway "
                               "run again with a shorter --resnapshot-interval (0: no limit)");
    }
    mcdc_generation g;
    memset(&g, 0, sizeof g);
    g.n = s->gen.n + 1;
    g.has_started_at = true;
    g.started_at_us = now;
    g.has_lost_from = s->loss_after.has_commit_ts;
    g.lost_from_us = s->loss_after.commit_ts_us;
    g.lost_after = s->loss_after.lsn;
    g.lost_min = s->loss_min;
    mcdc_offset mo;
    if ((rc = mcdc_stream__offset_at(s, &s->loss_min, &mo)) < 0)
        return rc;
    g.has_lost_to = mo.has_commit_ts;
    g.lost_to_us = mo.commit_ts_us;
    if ((rc = mcdc_generation_write(s->base_checkpoint, &g)) < 0)
        return rc;
    char ck[MCDC_PATH_MAX], app[256], a[MCDC_LSN_STRLEN], m[MCDC_LSN_STRLEN];
    if ((rc = mcdc_generation_checkpoint(ck, sizeof ck, s->base_checkpoint, g.n)) < 0 ||
        (rc = mcdc_generation_app_id(app, sizeof app, s->base_app_id, g.n)) < 0)
        return rc;
    mcdc_log(MCDC_LOG_WARN, LOGGER, "%s: changes after %s up to %s were purged before they were "
             "read: re-snapshotting into generation %" PRId64 " (app id %s, checkpoint %s; "
             "--on-data-loss resnapshot)", s->o.capture_instance, mcdc_lsn_format(a, &g.lost_after),
             mcdc_lsn_format(m, &g.lost_min), g.n, app, ck);
    mcdc_error_clear();
    return 0;
}

void mcdc_stream__set_gap_columns(const mcdc_stream *s, mcdc_value *row)
{
    if (s->gen.n <= 0)
        return;
    if (s->gen.has_lost_from) {
        row[MCDC_FACTS_LOST_FROM_TS].is_null = false;
        row[MCDC_FACTS_LOST_FROM_TS].v.i = s->gen.lost_from_us;
    }
    if (s->gen.has_lost_to) {
        row[MCDC_FACTS_LOST_TO_TS].is_null = false;
        row[MCDC_FACTS_LOST_TO_TS].v.i = s->gen.lost_to_us;
        row[MCDC_FACTS_RETENTION_WATERMARK_TS].is_null = false;
        row[MCDC_FACTS_RETENTION_WATERMARK_TS].v.i = s->gen.lost_to_us;
    }
}

int mcdc_stream__base_key(char *out, size_t cap, const mcdc_stream *s, const char *suffix)
{
    const char *base = s->base_app_id ? s->base_app_id : s->o.app_id;
    if ((size_t)snprintf(out, cap, "%s%s", base, suffix) >= cap)
        return mcdc_error_set(MCDC_EINVAL, "app_id %s: too long", base);
    return 0;
}

static json_t *time_json(bool has, int64_t us)
{
    char t[MCDC_TIME_STRLEN];
    return has ? json_string(mcdc_time_format(t, us, 3, false)) : json_null();
}

int mcdc_stream__open_detail_gap(const mcdc_stream *s, json_t *detail)
{
    bool re = s->gen.n > 0;
    if (json_object_set_new(detail, "kind", json_string(re ? "resnapshot" : "bootstrap")) < 0 ||
        json_object_set_new(detail, "generation", json_integer(s->gen.n)) < 0 ||
        json_object_set_new(detail, "lost_from_ts", time_json(re && s->gen.has_lost_from,
                                                              s->gen.lost_from_us)) < 0 ||
        json_object_set_new(detail, "lost_to_ts", time_json(re && s->gen.has_lost_to,
                                                            s->gen.lost_to_us)) < 0)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
    return 0;
}
