/*
 * mcdc/report.h: the monitoring report: one self-contained HTML page with inline SVG
 * charts per table, drawn from the facts table and the control table.
 *
 * The page needs no network, no script and no font files: it opens from disk in any
 * browser and can be mailed as it is. Per table it shows the rows of each batch by
 * operation, the ingestion and capture lags over time, and finalized_until against the
 * newest commit over time (both on the source's clock), then a table of the latest
 * verdicts and their freshness and, given a reconcile report table, the last reconcile of
 * each silver table (buckets matched, in flight, mismatched, the keys and chunks named).
 *
 * Caveats:
 * - Rendering is pure: mcdc_report_render() reads only the data it is given. Loading the
 *   data from Delta tables is mcdc_report_load().
 */
#ifndef MCDC_REPORT_H
#define MCDC_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** NULL for a time or lag: this value. */
#define MCDC_REPORT_NONE INT64_MIN

/** One facts row, as the report uses it. */
typedef struct mcdc_report_batch {
    char   *target;          /* facts.target: the table the batch went into (owned) */
    char   *event;           /* facts.event, or NULL for a plain batch (owned) */
    int64_t batch_id;
    int64_t rows, inserts, updates, deletes;
    int64_t end_commit_ts_us;       /* source clock (UTC); MCDC_REPORT_NONE when unknown */
    int64_t written_at_us;          /* host clock */
    int64_t capture_lag_ms;         /* MCDC_REPORT_NONE when NULL */
    int64_t ingestion_lag_ms;       /* MCDC_REPORT_NONE when NULL */
} mcdc_report_batch;

/** One verdict observation: finalized_until of a table at a moment of the source clock. */
typedef struct mcdc_report_point {
    char   *table;           /* control.table_name (owned) */
    int64_t at_us;           /* the end commit the verdict was computed from (source clock) */
    int64_t finalized_until_us;
} mcdc_report_point;

/** The latest verdict of a table (one control row). */
typedef struct mcdc_report_verdict {
    char   *table;           /* owned */
    int64_t finalized_until_us; /* MCDC_REPORT_NONE when none */
    char    end_lsn[23];     /* "0x…" or "" */
    int64_t end_commit_ts_us;
    int64_t updated_at_us;   /* host clock */
} mcdc_report_verdict;

/** The last reconcile run of a silver table, from the reconcile report table. */
typedef struct mcdc_report_reconcile {
    char   *silver;          /* as given to --silver (owned) */
    char    run_id[37];
    int64_t run_at_us;       /* host clock */
    int64_t silver_version;
    int64_t buckets, matched, in_flight, mismatched; /* bucket rows by status */
    int64_t missing, extra, different, duplicate, keys_in_flight; /* key rows by failure_type */
    int64_t chunks;          /* CHUNK_ROWS rows: chunks whose bronze rows differ from facts */
    char   *named;           /* owned: up to 10 "STATUS {key}" lines ('\n' after each) of keys
                                and chunks that mismatch, or NULL */
} mcdc_report_reconcile;

/** Everything one report shows. Build with the add functions; free with mcdc_report_data_free. */
typedef struct mcdc_report_data {
    mcdc_report_batch   *batches;  size_t n_batches;
    mcdc_report_point   *points;   size_t n_points;
    mcdc_report_verdict *verdicts; size_t n_verdicts;
    mcdc_report_reconcile *reconciles; size_t n_reconciles; /* sorted by silver */
    int64_t              generated_at_us; /* host clock, shown in the footer */
    int64_t              source_now_us;   /* the newest source time seen, for freshness */
    char                *title;           /* owned; NULL for the default */
} mcdc_report_data;

/** Copy a batch in (strings are copied). @return 0; MCDC_ENOMEM. */
int mcdc_report_add_batch(mcdc_report_data *d, const mcdc_report_batch *b);
int mcdc_report_add_point(mcdc_report_data *d, const mcdc_report_point *p);
int mcdc_report_add_verdict(mcdc_report_data *d, const mcdc_report_verdict *v);
int mcdc_report_add_reconcile(mcdc_report_data *d, const mcdc_report_reconcile *r);
/** Free what the data holds (not @p d itself); accepts NULL. */
void mcdc_report_data_free(mcdc_report_data *d);

/** Load the report's data from a facts table and a control table (paths of Delta
 *  tables). Batches come from the facts rows; the latest verdicts from the control
 *  table; the verdict over time from the control table's versions (the newest
 *  @p max_versions of them, 0 for all). Reads only.
 *  @return 0; MCDC_ENOTFOUND when a table does not exist (the message names it);
 *          MCDC_ECORRUPT, MCDC_EIO, MCDC_ENOMEM from reading. */
int mcdc_report_load(mcdc_report_data *d, const char *facts_path, const char *control_path,
                     int64_t max_versions);

/** Load the last reconcile run of each silver table from a reconcile report table (the
 *  path of a Delta table of kind reconcile, `reconcile --report`): its newest run_at per
 *  silver. Reads only.
 *  @return 0; MCDC_ENOTFOUND when it does not exist; MCDC_EINVAL for a table of another
 *          kind; MCDC_ECORRUPT, MCDC_EIO, MCDC_ENOMEM from reading. */
int mcdc_report_load_reconcile(mcdc_report_data *d, const char *reconcile_path);

/** Append the HTML page for @p d to @p out. @return 0; MCDC_ENOMEM. */
int mcdc_report_render(mcdc_buf *out, const mcdc_report_data *d);

#ifdef __cplusplus
}
#endif
#endif
