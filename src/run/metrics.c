/*
 * run/metrics.c: the Prometheus text exposition of a run's tables (format 0.0.4), written
 * here (no client library): per table rows, bytes, batches, batch duration histogram,
 * ingestion and capture lag, verdict age, retention headroom, consecutive and total
 * failures and state; per source its queries (by operation) and errors; per process
 * uptime and resident memory.
 *
 * Guarantees: counters count from 0 in each process; label values are escaped as the
 * format says (backslash, quote, newline); every family has its HELP and TYPE lines once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mcdc/fs.h"
#include "mcdc/run.h"

const double mcdc_run_duration_bounds[MCDC_RUN_DURATION_BUCKETS] = {
    0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
};

static int label(mcdc_buf *b, const char *v)
{
    int rc = 0;
    for (const char *p = v; rc == 0 && *p; p++) {
        if (*p == '\\')
            rc = mcdc_buf_puts(b, "\\\\");
        else if (*p == '"')
            rc = mcdc_buf_puts(b, "\\\"");
        else if (*p == '\n')
            rc = mcdc_buf_puts(b, "\\n");
        else
            rc = mcdc_buf_putc(b, *p);
    }
    return rc;
}

static int head(mcdc_buf *b, const char *name, const char *type, const char *help)
{
    return mcdc_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int sample(mcdc_buf *b, const char *name, const char *suffix, const char *table,
                  const char *extra, double v)
{
    int rc = mcdc_buf_printf(b, "%s%s{table=\"", name, suffix ? suffix : "");
    if (rc == 0)
        rc = label(b, table);
    if (rc == 0)
        rc = mcdc_buf_printf(b, "\"%s} %.17g\n", extra ? extra : "", v);
    return rc;
}

static long rss_bytes(void)
{
    /* a file of the kernel's, local by nature: core's reader, not the storage seam */
    mcdc_buf b = MCDC_BUF_INIT(4096);
    long pages = 0, resident = 0;
    if (mcdc_fs_read_all(&b, "/proc/self/statm") < 0 || mcdc_buf_putc(&b, '\0') < 0 ||
        sscanf(b.ptr, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    mcdc_error_clear();
    mcdc_buf_dispose(&b);
    return resident * sysconf(_SC_PAGESIZE);
}

int mcdc_run_metrics_text(mcdc_buf *out, const mcdc_run_table_metrics *t, size_t n,
                          const mcdc_run_source_metrics *src, size_t n_src, int64_t now_us,
                          int64_t uptime_us)
{
    int rc = 0;
#define EACH for (size_t i = 0; rc == 0 && i < n; i++)
    rc = head(out, "mcdc_rows_total", "counter", "change rows committed to bronze");
    EACH rc = sample(out, "mcdc_rows_total", NULL, t[i].table, NULL, (double)t[i].rows);
    if (rc == 0)
        rc = head(out, "mcdc_batches_total", "counter", "batches committed");
    EACH rc = sample(out, "mcdc_batches_total", NULL, t[i].table, NULL, (double)t[i].batches);
    if (rc == 0)
        rc = head(out, "mcdc_bytes_total", "counter", "bytes read from the source (the facts' read_mb)");
    EACH rc = sample(out, "mcdc_bytes_total", NULL, t[i].table, NULL, t[i].bytes);
    if (rc == 0)
        rc = head(out, "mcdc_batch_duration_seconds", "histogram", "time from a batch's planning to its commit");
    EACH {
        uint64_t cum = 0;
        char le[64];
        for (int k = 0; rc == 0 && k < MCDC_RUN_DURATION_BUCKETS; k++) {
            cum += t[i].duration_buckets[k];
            snprintf(le, sizeof le, ",le=\"%g\"", mcdc_run_duration_bounds[k]);
            rc = sample(out, "mcdc_batch_duration_seconds", "_bucket", t[i].table, le, (double)cum);
        }
        if (rc == 0)
            rc = sample(out, "mcdc_batch_duration_seconds", "_bucket", t[i].table, ",le=\"+Inf\"",
                        (double)t[i].batches);
        if (rc == 0)
            rc = sample(out, "mcdc_batch_duration_seconds", "_sum", t[i].table, NULL, t[i].duration_sum_s);
        if (rc == 0)
            rc = sample(out, "mcdc_batch_duration_seconds", "_count", t[i].table, NULL, (double)t[i].batches);
    }
    if (rc == 0)
        rc = head(out, "mcdc_ingestion_lag_seconds", "gauge", "now minus the commit time of the last change committed to bronze");
    EACH if (t[i].has_end_ts)
        rc = sample(out, "mcdc_ingestion_lag_seconds", NULL, t[i].table, NULL,
                    (double)(now_us - t[i].end_ts_us) / 1e6);
    if (rc == 0)
        rc = head(out, "mcdc_capture_lag_seconds", "gauge", "the newest commit the source showed minus the last one in bronze");
    EACH if (t[i].has_end_ts && t[i].has_latest_ts)
        rc = sample(out, "mcdc_capture_lag_seconds", NULL, t[i].table, NULL,
                    (double)(t[i].latest_ts_us > t[i].end_ts_us ? t[i].latest_ts_us - t[i].end_ts_us : 0) / 1e6);
    if (rc == 0)
        rc = head(out, "mcdc_verdict_age_seconds", "gauge", "now minus the table's finalized_until");
    EACH if (t[i].has_verdict)
        rc = sample(out, "mcdc_verdict_age_seconds", NULL, t[i].table, NULL,
                    (double)(now_us - t[i].verdict_us) / 1e6);
    if (rc == 0)
        rc = head(out, "mcdc_retention_headroom_hours", "gauge", "the last batch's end minus the oldest change CDC still holds");
    EACH if (t[i].has_headroom)
        rc = sample(out, "mcdc_retention_headroom_hours", NULL, t[i].table, NULL, t[i].headroom_hours);
    if (rc == 0)
        rc = head(out, "mcdc_consecutive_failures", "gauge", "failed rounds since the last successful one");
    EACH rc = sample(out, "mcdc_consecutive_failures", NULL, t[i].table, NULL, (double)t[i].failures);
    if (rc == 0)
        rc = head(out, "mcdc_table_failures_total", "counter", "failed rounds");
    EACH rc = sample(out, "mcdc_table_failures_total", NULL, t[i].table, NULL, (double)t[i].rounds_failed);
    if (rc == 0)
        rc = head(out, "mcdc_table_state", "gauge", "1 for the table's current state");
    EACH for (int s = 0; rc == 0 && s <= MCDC_RUN_STATE_STOPPED; s++) {
        char st[64];
        snprintf(st, sizeof st, ",state=\"%s\"", mcdc_run_state_name((mcdc_run_state)s));
        rc = sample(out, "mcdc_table_state", NULL, t[i].table, st, t[i].state == (mcdc_run_state)s ? 1 : 0);
    }
#undef EACH
    if (rc == 0)
        rc = head(out, "mcdc_source_queries_total", "counter", "operations asked of the source, by operation");
    for (size_t i = 0; rc == 0 && i < n_src; i++)
        for (size_t k = 0; rc == 0 && k < src[i].n_queries; k++) {
            rc = mcdc_buf_puts(out, "mcdc_source_queries_total{source=\"");
            if (rc == 0)
                rc = label(out, src[i].source);
            if (rc == 0)
                rc = mcdc_buf_printf(out, "\",query=\"%s\"} %" PRIu64 "\n", src[i].query_names[k],
                                     src[i].queries[k]);
        }
    if (rc == 0)
        rc = head(out, "mcdc_source_errors_total", "counter", "operations of the source that failed, and failed connections");
    for (size_t i = 0; rc == 0 && i < n_src; i++) {
        rc = mcdc_buf_puts(out, "mcdc_source_errors_total{source=\"");
        if (rc == 0)
            rc = label(out, src[i].source);
        if (rc == 0)
            rc = mcdc_buf_printf(out, "\"} %" PRIu64 "\n", src[i].errors);
    }
    if (rc == 0)
        rc = mcdc_buf_printf(out, "# HELP mcdc_uptime_seconds time since the process started\n"
                             "# TYPE mcdc_uptime_seconds gauge\nmcdc_uptime_seconds %.3f\n"
                             "# HELP process_resident_memory_bytes resident memory of the process\n"
                             "# TYPE process_resident_memory_bytes gauge\n"
                             "process_resident_memory_bytes %ld\n",
                             (double)uptime_us / 1e6, rss_bytes());
    return rc;
}
