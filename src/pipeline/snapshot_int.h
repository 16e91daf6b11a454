/*
 * pipeline/snapshot_int.h: what the chunked snapshot's files share (internal).
 *
 * snapshot_keys.c turns key values into their JSON form and back and plans chunks;
 * snapshot_state.c is the one reader and writer of a chunked snapshot's recorded state
 * (the snapshot_open, snapshot_plan, snapshot_chunk and completion facts rows, and the
 * userMetadata of a wave's bronze commit); snapshot_open.c opens one for the stream;
 * backfill.c reads its chunks. Design: docs/decisions/0014-chunked-snapshot-state.md,
 * anchor-features §1 (bootstrap/backfill), §2.5.
 */
#ifndef MCDC_PIPELINE_SNAPSHOT_INT_H
#define MCDC_PIPELINE_SNAPSHOT_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcdc/source.h"
#include "pipeline/stream_int.h"

/* ---- snapshot_keys.c ------------------------------------------------------------------- */

/* The key of a capture instance: its columns and their types. */
typedef struct snap_keydef {
    size_t       n;       /* key columns */
    char       **names;   /* in key_columns() order, owned */
    mcdc_column *cols;    /* their captured columns (names borrowed from names) */
    bool         is_int;  /* one column of an integer type: grid planning */
} snap_keydef;

/* Key values decoded from JSON, with the storage their strings point into. */
typedef struct snap_keyvals {
    mcdc_value *v;        /* n values, or NULL for an open bound */
    char      **str;      /* n malloc'd strings (or NULL) the values borrow */
    size_t      n;
} snap_keyvals;

/* The key of @p ci from the source, with the types of @p captured. MCDC_EINVAL when the
 * instance has no unique index or a key column is not captured. */
int mcdc_snap__keydef(snap_keydef *out, mcdc_source *src, const char *ci,
                      const mcdc_schema *captured);
void mcdc_snap__keydef_clear(snap_keydef *k);
/* JSON of the key names. */
json_t *mcdc_snap__key_names(const snap_keydef *k);
/* JSON of how the source orders each key column (mcdc_key_order names, in key order), or
 * NULL when the source cannot tell: what lets silver place keys in chunks (rule W2). */
json_t *mcdc_snap__key_orders(mcdc_source *src, const char *ci, const snap_keydef *k);
/* JSON of a key (a scalar for one column, a list for several; dates and decimals as
 * text, binary as 0x hex); NULL values give null. */
int mcdc_snap__key_to_json(const snap_keydef *k, const mcdc_value *vals, json_t **out);
/* Values of a JSON key (null: an open bound, out->v NULL). MCDC_ECORRUPT when it does not
 * fit the key's types. */
int mcdc_snap__key_from_json(const snap_keydef *k, const json_t *j, snap_keyvals *out);
void mcdc_snap__keyvals_clear(snap_keyvals *kv);

/* The extent recorded by snapshot_open: {"kind":"int","lo","hi","rows"} or
 * {"kind":"keyset","max"}. */
int mcdc_snap__extent(mcdc_source *src, const char *ci, const snap_keydef *k, json_t **out);
/* Plan the chunks ([[lo, hi], ...], JSON keys, null = open) of at most @p chunk_rows rows
 * each (an integer key: counted on a grid; any other: keyset bounds chunk_rows keys apart)
 * and count the rows. An integer key's grid spans @p extent's [lo, hi] (the open's; NULL:
 * the table's now). MCDC_EUNSUPPORTED when the source cannot plan. */
int mcdc_snap__plan(mcdc_source *src, const char *ci, const snap_keydef *k, int64_t chunk_rows,
                    const json_t *extent, json_t **chunks, int64_t *total_rows);
/* Plan the chunks of the key range [@p lo, @p hi) (JSON keys, null = open) by keyset bounds
 * @p chunk_rows keys apart: the first chunk starts at lo, the last ends at hi, none reaches
 * outside the range; *total_rows the rows in it now. MCDC_EUNSUPPORTED when the source
 * cannot plan. */
int mcdc_snap__plan_range(mcdc_source *src, const char *ci, const snap_keydef *k, int64_t chunk_rows,
                          const json_t *lo, const json_t *hi, json_t **chunks, int64_t *total_rows);

/* ---- snapshot_state.c ------------------------------------------------------------------ */

/* One snapshot_chunk facts row. */
typedef struct snap_chunk_fact {
    int64_t chunk, wave, rows;
} snap_chunk_fact;

/* What the facts table says about a stream family's chunked snapshots of one target. */
typedef struct snap_state {
    bool        has_open;       /* a chunked snapshot_open row */
    mcdc_offset S;              /* the newest open's LSN and commit time */
    int64_t     generation;
    char       *app_id;         /* the generation's app id (malloc'd) */
    char       *kind;           /* "bootstrap" or "resnapshot" (malloc'd) */
    json_t     *open_detail;    /* its detail */
    json_t     *plan;           /* the snapshot_plan row's detail for S, or NULL */
    bool        completed;      /* a bootstrap/resnapshot row at or above S */
    bool        has_full_open;  /* a full snapshot_open without completion */
    snap_chunk_fact *chunks;    /* snapshot_chunk rows of S */
    size_t      n_chunks;
    int64_t     open_written_at_us;
} snap_state;

/* Read the state of @p family's (NULL: any family's) chunked snapshot of @p target from
 * the facts table at @p facts_path (a missing table: nothing open). */
int mcdc_snap__state_read(snap_state *out, const char *facts_path, const char *target,
                          const char *family);
void mcdc_snap__state_clear(snap_state *st);

/* The newest retention headroom of @p family's batches of @p target (facts column
 * retention_headroom_hours, with its row's written_at); *has false when none. */
int mcdc_snap__headroom(const char *facts_path, const char *target, const char *family,
                        bool *has, double *hours, int64_t *written_at_us);

/* A facts event row under construction. */
typedef struct snap_event {
    const char *event, *app_id;
    int64_t     rows;           /* < 0: NULL */
    mcdc_offset at;             /* min_lsn, end_lsn and the commit times */
    bool        has_max;        /* max_lsn differs (snapshot_chunk) */
    mcdc_lsn    max_lsn;
    int64_t     started_at_us;  /* 0: NULL */
    int64_t     duration_ms;
    double      read_seconds;   /* < 0: NULL */
    char       *detail;         /* malloc'd JSON, owned by the event */
    bool        has_lost_from, has_lost_to; /* a re-snapshot's gap (lost_from_ts, */
    int64_t     lost_from_us, lost_to_us;   /* lost_to_ts = retention_watermark_ts) */
} snap_event;

/* Write @p n event rows in one facts commit with txn{txn_app, version}; a version already
 * committed writes nothing. */
int mcdc_snap__write_events(mcdc_stream *s, snap_event *ev, size_t n, const char *txn_app,
                            int64_t version);
void mcdc_snap__events_clear(snap_event *ev, size_t n);
/* "<app_id><suffix><S>" into out. */
int mcdc_snap__key_name(char *out, size_t cap, const char *app_id, const char *suffix,
                        const mcdc_lsn *S);

#endif
