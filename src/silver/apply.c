/*
 * silver/apply.c: one silver apply: bronze's changes beyond silver's position merged into
 * the silver Delta table, then the position and the verdict (anchor-features §2.7;
 * architecture §3 invariants 3, 4, 7).
 *
 * Order of one call (each step durable before the next):
 *   lock -> read bronze's verdict and silver's control row -> pin bronze at its latest
 *   version -> merge commit on silver -> [silver.after_merge] -> position (applied_lsn,
 *   snapshot_lsn) -> [silver.after_position] -> verdict (capped at bronze's, read first).
 * A crash between two steps leaves the later ones undone; the next call redoes them, and
 * the merge is idempotent (rule S3 in mcdc/silver.h), so reruns converge and never
 * resurrect a deleted row. The verdict can lag silver's data, never run ahead of it.
 *
 * Merge without rewriting the world:
 * - Bronze files are skipped by their `_start_lsn` stats (LSN text of fixed width, so
 *   text order is LSN order) and `_operation` stats (snapshot files hold only 0).
 * - Every silver file this code writes is sorted by key and carries its exact key range in
 *   add.tags (mcdc.silver.key_min / key_max: the hex of the order-preserving key encoding,
 *   so no double and no truncated string is involved). A change touches only the files
 *   whose range holds its key; a new key goes into the file whose range precedes it, so
 *   ranges stay disjoint; a file past 1.5x the target size is split in key order. Files
 *   without the tags (written by another tool) are read whenever anything changed.
 * - Memory: the change set (one image per changed key) plus, per rewriting thread, the
 *   rows of one silver file at most (rewrite.c streams sorted files without holding them).
 *   A rebuild streams the snapshot's rows past the change set in file-sized sorted runs.
 * - Threads: bronze's changes are decoded and prepared (checks, LSN parses, key encoding)
 *   on a thread of their own (feed.c), which also faults in the change set's next image
 *   memory while it waits, while this one builds the change set; files with disjoint key
 *   ranges are rewritten on up to `threads` threads (rewrite.c). Neither changes what is
 *   written.
 * - Write mode deletion-vectors (docs/decisions/0045; merge_marking and mark.c): the
 *   touched files keep their bytes and get a deletion vector for the rows replaced or
 *   dropped; the new images go into one new file; small files are folded into it and a file
 *   past the fold share of deleted rows is rewritten instead.
 * - The merge is one copy-on-write commit removing the rewritten files and adding their
 *   replacements, declaring that it read the whole table (PRED_ALL): any concurrent
 *   commit that adds or removes silver files conflicts and the apply fails cleanly
 *   (MCDC_ECONFLICT); run it again.
 * Chunked snapshots (backfill waves, `_chunk` set, needs the facts table): while one is
 * open its waves are applied as they arrive (rule W1): the waves in the pinned bronze
 * (its txn <app>#snap.<S>) beyond the control row's snapshot_wave are read by their
 * files' _chunk stats and ranked with every change after S; the position records
 * open_snapshot_lsn and snapshot_wave, and the verdict is held. Once its completion row
 * is written, its S is the newest snapshot and silver is rebuilt from its rows (each
 * ranked by its wave's stamp L) and the changes after S, latest per key, deletes applied.
 * The facts are read before bronze is pinned, so what they announce is in the pin.
 */
#include "mcdc/silver.h"
#include "mcdc/storage.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mcdc/backfill.h"
#include "mcdc/delta.h"
#include "mcdc/failpoint.h"
#include "mcdc/finalize.h"
#include "mcdc/fs.h"
#include "mcdc/log.h"
#include "mcdc/pipeline.h"
#include "mcdc/time.h"
#include "silver/changes.h"
#include "silver/common.h"
#include "silver/feed.h"
#include "silver/ranges.h"
#include "silver/rewrite.h"
#include "silver/scd2.h"

#define CONF_KEYS   "mcdc.silver.keys"
#define CONF_WRITE  "mcdc.silver.write_mode"
#define CONF_FOLD   "mcdc.silver.dv_fold_share"
#define LOCK_NAME   "_mcdc_silver_apply.lock"

/* ---- the apply context ------------------------------------------------------------- */


typedef struct ctx {
    const mcdc_silver_apply_options *o;
    mcdc_silver_apply_result        *res;
    mcdc_delta_snapshot *bronze;      /* pinned */
    mcdc_schema         *bronze_flat;
    mcdc_delta_snapshot *silver;      /* latest, after creation and evolution */
    mcdc_schema         *silver_flat;
    mcdc_silver_changes *cs;
    mcdc_silver_env      env;         /* for the writes (rewrite.c) */
    mcdc_silver_out      out;         /* the files the merge commit adds and removes */
    bool                 dv;          /* write mode deletion-vectors (mark.c) */
    double               fold_share;  /* a file past this share of deleted rows is rewritten */
    uint64_t             marked;      /* files kept with a new deletion vector */
} ctx;

static void ctx_free(ctx *c)
{
    mcdc_delta_snapshot_free(c->bronze);
    mcdc_delta_snapshot_free(c->silver);
    mcdc_schema_free(c->bronze_flat);
    mcdc_schema_free(c->silver_flat);
    mcdc_silver_changes_free(c->cs);
    mcdc_silver_out_dispose(&c->out);
}

/* Scan only @p files of @p snap: a view of the snapshot sharing everything but the file
 * list. The view and the array must outlive the scan. */
static int scan_subset(mcdc_delta_scan **out, mcdc_delta_snapshot *view, mcdc_delta_file *arr,
                       const mcdc_delta_snapshot *snap, const mcdc_delta_file *const *files,
                       size_t n, const char *const *columns, size_t n_columns)
{
    *view = *snap;
    for (size_t i = 0; i < n; i++)
        arr[i] = *files[i];
    view->files = arr;
    view->n_files = n;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = columns;
    so.n_columns = n_columns;
    return mcdc_delta_scan_open(out, view, &so);
}

/* ---- bronze files: stats ----------------------------------------------------------- */

typedef struct bstats {
    bool     has_lsn;
    mcdc_lsn lsn_min, lsn_max;
    bool     has_op;
    int64_t  op_min, op_max;
    bool     has_snap;        /* _snapshot max known (some row has one) */
    mcdc_lsn snap_min, snap_max;
    bool     has_chunk_rows;  /* nullCount proves some _chunk is set */
    bool     has_chunk_range; /* _chunk min and max known */
    int64_t  chunk_min, chunk_max;
    bool     has_rows;
    int64_t  rows;            /* numRecords */
} bstats;

static bool json_lsn(mcdc_lsn *out, json_t *v)
{
    return json_is_string(v) && mcdc_lsn_parse(out, json_string_value(v)) == 0;
}

static void bronze_stats(const mcdc_delta_file *f, bstats *st)
{
    memset(st, 0, sizeof *st);
    if (!f->stats)
        return;
    json_t *j = json_loads(f->stats, 0, NULL);
    if (!j)
        return;
    json_t *mn = json_object_get(j, "minValues"), *mx = json_object_get(j, "maxValues");
    json_t *nc = json_object_get(j, "nullCount"), *nr = json_object_get(j, "numRecords");
    st->has_lsn = json_lsn(&st->lsn_min, json_object_get(mn, "_start_lsn")) &&
                  json_lsn(&st->lsn_max, json_object_get(mx, "_start_lsn"));
    json_t *a = json_object_get(mn, "_operation"), *b = json_object_get(mx, "_operation");
    if (json_is_integer(a) && json_is_integer(b)) {
        st->has_op = true;
        st->op_min = json_integer_value(a);
        st->op_max = json_integer_value(b);
    }
    st->has_snap = json_lsn(&st->snap_min, json_object_get(mn, "_snapshot")) &&
                   json_lsn(&st->snap_max, json_object_get(mx, "_snapshot"));
    if (json_is_integer(nr) && json_integer_value(nr) >= 0) {
        st->has_rows = true;
        st->rows = json_integer_value(nr);
    }
    json_t *c0 = json_object_get(mn, "_chunk"), *c1 = json_object_get(mx, "_chunk");
    if (json_is_integer(c0) && json_is_integer(c1)) {
        st->has_chunk_range = true;
        st->chunk_min = json_integer_value(c0);
        st->chunk_max = json_integer_value(c1);
    }
    json_t *cn = json_object_get(nc, "_chunk");
    if (json_is_integer(nr) && json_is_integer(cn) && json_integer_value(cn) < json_integer_value(nr))
        st->has_chunk_rows = true;
    json_decref(j);
}

/* ---- the control rows -------------------------------------------------------------- */

typedef struct position {
    bool     has_applied;
    mcdc_lsn applied;
    bool     has_snapshot;
    mcdc_lsn snapshot;
    bool     has_open;        /* open_snapshot_lsn: an open chunked snapshot being applied */
    mcdc_lsn open;
    bool     has_wave;        /* snapshot_wave: its last wave applied */
    int32_t  wave;
} position;

static int mutate_position(mcdc_control_row *row, bool exists, void *payload)
{
    const position *p = payload;
    (void)exists;
    char a[MCDC_LSN_STRLEN], s[MCDC_LSN_STRLEN];
    const char *want_a = p->has_applied ? mcdc_lsn_format(a, &p->applied) : NULL;
    const char *want_s = p->has_snapshot ? mcdc_lsn_format(s, &p->snapshot) : NULL;
    bool same_a = (!want_a && !row->applied_lsn) ||
                  (want_a && row->applied_lsn && strcmp(want_a, row->applied_lsn) == 0);
    bool same_s = (!want_s && !row->snapshot_lsn) ||
                  (want_s && row->snapshot_lsn && strcmp(want_s, row->snapshot_lsn) == 0);
    char o[MCDC_LSN_STRLEN];
    const char *want_o = p->has_open ? mcdc_lsn_format(o, &p->open) : NULL;
    bool same_o = (!want_o && !row->open_snapshot_lsn) ||
                  (want_o && row->open_snapshot_lsn && strcmp(want_o, row->open_snapshot_lsn) == 0);
    bool same_w = row->has_snapshot_wave == p->has_wave &&
                  (!p->has_wave || row->snapshot_wave == p->wave);
    if (same_a && same_s && same_o && same_w)
        return MCDC_EALREADY;
    char *na = want_a ? strdup(want_a) : NULL, *ns = want_s ? strdup(want_s) : NULL;
    char *no = want_o ? strdup(want_o) : NULL;
    if ((want_a && !na) || (want_s && !ns) || (want_o && !no)) {
        free(na);
        free(ns);
        free(no);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    free(row->applied_lsn);
    free(row->snapshot_lsn);
    free(row->open_snapshot_lsn);
    row->applied_lsn = na;
    row->snapshot_lsn = ns;
    row->open_snapshot_lsn = no;
    row->has_snapshot_wave = p->has_wave;
    row->snapshot_wave = p->wave;
    return 0;
}

static bool text_lsn(mcdc_lsn *out, const char *s)
{
    return s && mcdc_lsn_parse(out, s) == 0;
}

/* ---- snapshot points --------------------------------------------------------------- */

/* The newest bootstrap/resnapshot of @p bronze_name in the facts table (max max_lsn). */
static int facts_snapshot(const char *facts_path, const char *bronze_name, bool *has, mcdc_lsn *out)
{
    *has = false;
    mcdc_delta_snapshot *fs = NULL;
    int rc = mcdc_delta_snapshot_open(&fs, facts_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    static const char *const cols[] = { "target", "event", "max_lsn" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = 3;
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, fs, &so);
    size_t name_len = strlen(bronze_name);
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        if (r[0].is_null || r[1].is_null || r[2].is_null || r[0].v.s.len != name_len ||
            memcmp(r[0].v.s.ptr, bronze_name, name_len) != 0)
            continue;
        bool snap = (r[1].v.s.len == 9 && memcmp(r[1].v.s.ptr, "bootstrap", 9) == 0) ||
                    (r[1].v.s.len == 10 && memcmp(r[1].v.s.ptr, "resnapshot", 10) == 0);
        char t[40];
        mcdc_lsn l;
        if (!snap || r[2].v.s.len >= sizeof t)
            continue;
        memcpy(t, r[2].v.s.ptr, r[2].v.s.len);
        t[r[2].v.s.len] = 0;
        if (mcdc_lsn_parse(&l, t) < 0)
            continue;
        if (!*has || mcdc_lsn_cmp(&l, out) > 0) {
            *has = true;
            *out = l;
        }
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(fs);
    return rc;
}

/* The newest whole snapshot in bronze: max coalesce(_snapshot, _start_lsn) of op-0 rows.
 * Files whose stats show only op-0 rows answer from the stats; files that may mix
 * operations (or have no stats) are read. Refuses chunked snapshot rows. */
static int bronze_snapshot(ctx *c, const position *pos, bool *has, mcdc_lsn *out)
{
    *has = false;
    const mcdc_delta_file **read = malloc((c->bronze->n_files + 1) * sizeof *read);
    if (!read)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    size_t n_read = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->bronze->n_files; i++) {
        const mcdc_delta_file *f = &c->bronze->files[i];
        bstats st;
        bronze_stats(f, &st);
        if (st.has_op && st.op_min > 0)
            continue; /* changes only */
        if (st.has_chunk_rows && !c->o->facts_path) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s: bronze holds rows of a chunked snapshot "
                                "(_chunk set), whose state is in the facts table",
                                c->o->bronze_path);
            mcdc_error_hint("pass the stream's --facts NAME");
            break;
        }
        if (st.has_chunk_rows) { /* the point of a chunked snapshot is its facts row (S) */
            read[n_read++] = f;
            continue;
        }
        if (st.has_lsn && pos->has_snapshot && mcdc_lsn_cmp(&st.lsn_max, &pos->snapshot) <= 0 &&
            (!st.has_snap || mcdc_lsn_cmp(&st.snap_max, &pos->snapshot) <= 0))
            continue; /* nothing newer than the snapshot silver was built from */
        if (st.has_op && st.op_max == 0 && st.has_lsn) {
            mcdc_lsn p = st.lsn_max;
            if (st.has_snap && mcdc_lsn_cmp(&st.snap_max, &p) > 0)
                p = st.snap_max;
            if (!*has || mcdc_lsn_cmp(&p, out) > 0) {
                *has = true;
                *out = p;
            }
            continue;
        }
        read[n_read++] = f;
    }
    if (rc == 0 && n_read) {
        mcdc_delta_snapshot view;
        mcdc_delta_file *arr = malloc(n_read * sizeof *arr);
        mcdc_delta_scan *sc = NULL;
        static const char *const cols[] = { "_operation", "_start_lsn", "_snapshot", "_chunk" };
        rc = arr ? 0 : mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        bool with_snap = mcdc_schema_find(c->bronze_flat, "_snapshot") >= 0;
        bool with_chunk = with_snap && mcdc_schema_find(c->bronze_flat, "_chunk") >= 0;
        if (rc == 0)
            rc = scan_subset(&sc, &view, arr, c->bronze, read, n_read, cols,
                             with_chunk ? 4 : with_snap ? 3 : 2);
        const mcdc_value *r;
        while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
            rc = 0;
            if (r[0].is_null || r[0].v.i != 0 || (with_chunk && !r[3].is_null))
                continue;
            const mcdc_value *v = with_snap && !r[2].is_null ? &r[2] : &r[1];
            char t[40];
            mcdc_lsn l;
            if (v->is_null || v->v.s.len >= sizeof t)
                continue;
            memcpy(t, v->v.s.ptr, v->v.s.len);
            t[v->v.s.len] = 0;
            if (mcdc_lsn_parse(&l, t) < 0)
                continue;
            if (!*has || mcdc_lsn_cmp(&l, out) > 0) {
                *has = true;
                *out = l;
            }
        }
        if (rc == 0 && c->res)
            c->res->bronze_files_read += n_read;
        mcdc_delta_scan_free(sc);
        free(arr);
    }
    free(read);
    return rc;
}

/* ---- reading bronze into the change set -------------------------------------------- */

/* Rows handled ahead of the one being added whose index slots are fetched. */
#define PREFETCH_AHEAD 12

/* The feed's prep: on the reader thread, everything of a row that needs no change-set
 * state (checks, LSN parses, the filter, the key encoding and its hash). */
static int prep_row(void *arg, const mcdc_value *row, void *rec, mcdc_buf *extra)
{
    return mcdc_silver_changes_prepare(arg, row, rec, extra);
}

/* The feed's idle hook: while the reader waits for this thread, it faults in the memory of
 * the change set's next images. */
static bool prefault(void *arg)
{
    return mcdc_silver_changes_prefault(arg);
}

static int feed_files(ctx *c, const mcdc_delta_file **read, size_t n_read);

/* Feed every change row beyond @p after (all when !has_after) to the change set. */
static int read_changes(ctx *c, bool has_after, const mcdc_lsn *after)
{
    const mcdc_delta_file **read = malloc((c->bronze->n_files + 1) * sizeof *read);
    if (!read)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    size_t n_read = 0;
    for (size_t i = 0; i < c->bronze->n_files; i++) {
        const mcdc_delta_file *f = &c->bronze->files[i];
        bstats st;
        bronze_stats(f, &st);
        bool skip = (st.has_op && st.op_max == 0) ||
                    (has_after && st.has_lsn && mcdc_lsn_cmp(&st.lsn_max, after) <= 0);
        if (skip)
            c->res->bronze_files_skipped++;
        else
            read[n_read++] = f;
    }
    int rc = feed_files(c, read, n_read);
    free(read);
    return rc;
}

/* Feed the rows of an open chunked snapshot at @p S whose chunk is above @p after_chunk
 * (the waves that arrived since the last apply; every file of a wave holds one chunk)
 * to the change set, whose options take the op-0 rows of S. A file without chunk stats
 * is read again (its rows rank as before: applying them twice changes nothing). */
static int read_waves(ctx *c, const mcdc_lsn *S, int64_t after_chunk)
{
    const mcdc_delta_file **read = malloc((c->bronze->n_files + 1) * sizeof *read);
    if (!read)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    size_t n_read = 0;
    for (size_t i = 0; i < c->bronze->n_files; i++) {
        const mcdc_delta_file *f = &c->bronze->files[i];
        bstats st;
        bronze_stats(f, &st);
        bool take = st.has_chunk_rows && (!st.has_op || st.op_min == 0) &&
                    (!st.has_snap || (mcdc_lsn_cmp(&st.snap_min, S) <= 0 &&
                                      mcdc_lsn_cmp(S, &st.snap_max) <= 0)) &&
                    (!st.has_chunk_range || st.chunk_max > after_chunk);
        if (take)
            read[n_read++] = f;
    }
    int rc = feed_files(c, read, n_read);
    free(read);
    return rc;
}

/* Range deletes of the new waves (rule W2 in mcdc/silver.h): a key silver holds inside a
 * new chunk [lo, hi) stamped L, that the change set holds no image of at or above L (the
 * chunk's own row, or a change after L), and whose silver image has _start_lsn < L, was
 * deleted by L: a delete at L goes into the change set (ranges.c). Chunks are those above
 * @p after_chunk in waves up to @p new_wave, bounds from the snapshot_plan row (in the
 * source's key order); a chunk whose stamp is not known (no rows in its wave, or its facts
 * rows not written yet) is left to the completion's rebuild, as is a key whose order in
 * the source silver cannot know (ranges.h). Cost: one read of silver's key and _start_lsn
 * columns when a new wave arrived. */
static int range_deletes(ctx *c, int64_t after_chunk, int64_t new_wave, const mcdc_lsn *S)
{
    const mcdc_silver_apply_options *o = c->o;
    if (!o->facts_path || new_wave < 0)
        return 0;
    char *plan = NULL;
    mcdc_chunked_snapshot cs_;
    mcdc_snapshot_chunk_fact *facts = NULL;
    size_t n_facts = 0;
    int rc = mcdc_chunked_snapshot_plan(&plan, o->facts_path, o->bronze_name);
    if (rc == 0)
        rc = mcdc_chunked_snapshot_chunks(&cs_, &facts, &n_facts, o->facts_path, o->bronze_name);
    json_t *pj = plan ? json_loads(plan, 0, NULL) : NULL;
    free(plan);
    json_t *chunks = json_object_get(pj, "chunks");
    mcdc_silver_keyorder k;
    bool ok = false;
    const char *why = NULL;
    if (rc == 0 && json_is_array(chunks) && n_facts)
        rc = mcdc_silver__keyorder(&k, &ok, &why, json_object_get(pj, "keys"),
                                   json_object_get(pj, "key_order"), o->keys, o->n_keys,
                                   c->silver_flat, c->bronze_flat);
    if (rc == 0 && why)
        mcdc_log(MCDC_LOG_INFO, "silver", "%s: keys missing from the open snapshot's chunks are "
                 "deleted at its completion: %s", o->silver_name, why);
    mcdc_silver_kchunk *nc = NULL;
    int64_t *idx = NULL;
    size_t n_nc = 0;
    if (rc == 0 && ok && (!(nc = calloc(n_facts, sizeof *nc)) || !(idx = calloc(n_facts, sizeof *idx))))
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    for (size_t i = 0; rc == 0 && nc && i < n_facts; i++) {
        if (facts[i].chunk <= after_chunk || facts[i].wave > new_wave)
            continue;
        json_t *ch = json_array_get(chunks, (size_t)facts[i].chunk);
        if (!ch)
            continue;
        idx[n_nc] = facts[i].chunk;
        rc = mcdc_silver__kchunk_set(&nc[n_nc], &k, c->silver_flat, json_array_get(ch, 0),
                                     json_array_get(ch, 1));
        n_nc++;
    }
    json_decref(pj);
    /* stamps: a chunk file's rows all carry its wave's L; chunks of one wave share it */
    for (size_t f = 0; rc == 0 && n_nc && f < c->bronze->n_files; f++) {
        bstats st;
        bronze_stats(&c->bronze->files[f], &st);
        if (!st.has_chunk_rows || !st.has_chunk_range || st.chunk_min != st.chunk_max || !st.has_lsn ||
            (st.has_snap && (mcdc_lsn_cmp(&st.snap_min, S) != 0 || mcdc_lsn_cmp(&st.snap_max, S) != 0)))
            continue;
        int64_t wave = -1;
        for (size_t i = 0; i < n_facts; i++)
            if (facts[i].chunk == st.chunk_min)
                wave = facts[i].wave;
        for (size_t i = 0; i < n_nc; i++) {
            int64_t w = -1;
            for (size_t j = 0; j < n_facts; j++)
                if (facts[j].chunk == idx[i])
                    w = facts[j].wave;
            if (idx[i] == st.chunk_min || (wave >= 0 && w == wave)) {
                nc[i].has_stamp = true;
                nc[i].stamp = st.lsn_min;
            }
        }
    }
    free(facts);
    free(idx);
    size_t n_dels = 0;
    if (rc == 0 && n_nc)
        rc = mcdc_silver__chunk_deletes(c->silver, c->silver_flat, c->bronze_flat, c->cs, &k, nc,
                                        n_nc, o->capture_instances[0], &n_dels);
    mcdc_silver__kchunks_free(nc, n_nc);
    if (ok)
        mcdc_silver__keyorder_clear(&k);
    if (rc == 0 && n_dels)
        mcdc_log(MCDC_LOG_INFO, "silver", "%s: %zu keys no longer in their chunks of the open "
                 "snapshot: deleted at their chunks' stamps", o->silver_name, n_dels);
    return rc;
}

/* ---- partial backfills (rule W3) ----------------------------------------------------- */

/* One wave of a partial backfill (ADR 0022) that silver has not applied: its bronze
 * commit's txn{<app>#range.<R>, wave} and userMetadata {range_id, keys, wave, lsn: L,
 * chunks: [{chunk, lo, hi}...]}. */
typedef struct range_wave {
    const char *app;     /* borrowed from the pinned bronze's txns */
    int64_t     wave;
    mcdc_lsn    stamp;
    json_t     *um;      /* owned */
} range_wave;

typedef struct range_work {
    range_wave     *w;
    size_t          n;
    mcdc_lsn       *stamps;   /* distinct stamps, for the change set */
    size_t          n_stamps;
    mcdc_lsn        min_stamp;
    mcdc_delta_txn *marks;    /* silver's txn{<app>#range.<R>, last wave applied}, per range:
                                 recorded by the merge commit that applies them */
    size_t          n_marks;
} range_work;

static void range_work_free(range_work *rw)
{
    for (size_t i = 0; i < rw->n; i++)
        json_decref(rw->w[i].um);
    free(rw->w);
    free(rw->stamps);
    free(rw->marks);
    memset(rw, 0, sizeof *rw);
}

/* The partial backfills' waves in the pinned bronze that silver has not applied: a range's
 * bronze txn version above silver's own txn of the same appId (the marker its merge
 * commits). Bronze's log is read only when there are some. A wave whose commit is no
 * longer in the log cannot be placed and is passed over with a warning. */
static int find_range_waves(ctx *c, range_work *rw)
{
    memset(rw, 0, sizeof *rw);
    size_t n_pending = 0;
    for (size_t i = 0; i < c->bronze->n_txns; i++)
        if (strstr(c->bronze->txns[i].app_id, "#range.") &&
            c->bronze->txns[i].version > mcdc_delta_snapshot_txn(c->silver, c->bronze->txns[i].app_id))
            n_pending++;
    if (n_pending == 0)
        return 0;
    if (!(rw->marks = calloc(n_pending, sizeof *rw->marks)))
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    for (size_t i = 0; i < c->bronze->n_txns; i++) {
        const mcdc_delta_txn *t = &c->bronze->txns[i];
        if (strstr(t->app_id, "#range.") && t->version > mcdc_delta_snapshot_txn(c->silver, t->app_id)) {
            rw->marks[rw->n_marks].app_id = t->app_id;
            rw->marks[rw->n_marks].version = t->version;
            rw->n_marks++;
        }
    }
    mcdc_delta_history_entry *h = NULL;
    size_t nh = 0;
    int rc = mcdc_delta_history(&h, &nh, c->o->bronze_path);
    if (rc < 0)
        return rc;
    size_t expected = 0;
    for (size_t m = 0; m < rw->n_marks; m++)
        expected += (size_t)(rw->marks[m].version - mcdc_delta_snapshot_txn(c->silver, rw->marks[m].app_id));
    if (!(rw->w = calloc(expected + 1, sizeof *rw->w)) || !(rw->stamps = calloc(expected + 1, sizeof *rw->stamps)))
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    for (size_t e = 0; rc == 0 && e < nh; e++) {
        if (h[e].version > c->bronze->version)
            break;
        for (size_t t = 0; rc == 0 && t < h[e].n_txns; t++) {
            for (size_t m = 0; m < rw->n_marks; m++) {
                int64_t done = mcdc_delta_snapshot_txn(c->silver, rw->marks[m].app_id);
                if (strcmp(h[e].txns[t].app_id, rw->marks[m].app_id) != 0 ||
                    h[e].txns[t].version <= done || h[e].txns[t].version > rw->marks[m].version ||
                    rw->n >= expected)
                    continue;
                json_t *um = h[e].user_metadata ? json_loads(h[e].user_metadata, 0, NULL) : NULL;
                const char *L = json_string_value(json_object_get(um, "lsn"));
                range_wave *w = &rw->w[rw->n];
                if (!um || !L || mcdc_lsn_parse(&w->stamp, L) < 0 ||
                    !json_is_array(json_object_get(um, "chunks"))) {
                    json_decref(um);
                    rc = mcdc_error_set(MCDC_ECORRUPT, "%s: version %lld (txn %s, wave %lld) has "
                                        "no wave description in its userMetadata", c->o->bronze_name,
                                        (long long)h[e].version, rw->marks[m].app_id,
                                        (long long)h[e].txns[t].version);
                    break;
                }
                w->app = rw->marks[m].app_id;
                w->wave = h[e].txns[t].version;
                w->um = um;
                bool seen = false;
                for (size_t i = 0; i < rw->n_stamps && !seen; i++)
                    seen = mcdc_lsn_cmp(&rw->stamps[i], &w->stamp) == 0;
                if (!seen)
                    rw->stamps[rw->n_stamps++] = w->stamp;
                if (rw->n == 0 || mcdc_lsn_cmp(&w->stamp, &rw->min_stamp) < 0)
                    rw->min_stamp = w->stamp;
                rw->n++;
            }
        }
    }
    mcdc_delta_history_free(h, nh);
    if (rc == 0 && rw->n < expected)
        mcdc_log(MCDC_LOG_WARN, "silver", "%s: %zu waves of partial backfills are no longer in "
                 "bronze's log (cleaned up): their rows and deletes are not applied",
                 c->o->bronze_name, expected - rw->n);
    if (rc == 0)
        mcdc_log(MCDC_LOG_INFO, "silver", "%s: applying %zu waves of %zu partial backfills",
                 c->o->silver_name, rw->n, rw->n_marks);
    return rc;
}

/* Feed the rows of the waves in @p rw to the change set (whose options take the op-0 rows
 * of partial backfills at their stamps): the files holding only snapshot rows whose
 * _start_lsn range holds a stamp. Files read_changes read already (with changes in them,
 * beyond @p after) are not read again. */
static int read_range_rows(ctx *c, const range_work *rw, const mcdc_lsn *after)
{
    const mcdc_delta_file **read = malloc((c->bronze->n_files + 1) * sizeof *read);
    if (!read)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    size_t n_read = 0;
    for (size_t i = 0; i < c->bronze->n_files; i++) {
        const mcdc_delta_file *f = &c->bronze->files[i];
        bstats st;
        bronze_stats(f, &st);
        bool read_before = !(st.has_op && st.op_max == 0) &&
                           !(st.has_lsn && mcdc_lsn_cmp(&st.lsn_max, after) <= 0);
        if (read_before || (st.has_op && st.op_min > 0))
            continue;
        bool in = !st.has_lsn;
        for (size_t k = 0; !in && k < rw->n_stamps; k++)
            in = mcdc_lsn_cmp(&st.lsn_min, &rw->stamps[k]) <= 0 &&
                 mcdc_lsn_cmp(&rw->stamps[k], &st.lsn_max) <= 0;
        if (in)
            read[n_read++] = f;
    }
    int rc = feed_files(c, read, n_read);
    free(read);
    return rc;
}

/* The deletes of the waves in @p rw (rule W3): per range (its chunks are disjoint), a key
 * silver holds inside a chunk stamped L, older in silver than L and with no image at or
 * above L in the change set, is deleted at L (ranges.c); nothing outside [LO, HI). */
static int range_wave_deletes(ctx *c, const range_work *rw)
{
    int rc = 0;
    size_t total = 0;
    for (size_t m = 0; rc == 0 && m < rw->n_marks; m++) {
        size_t n_ch = 0;
        const json_t *names = NULL, *orders = NULL;
        for (size_t i = 0; i < rw->n; i++)
            if (rw->w[i].app == rw->marks[m].app_id) {
                n_ch += json_array_size(json_object_get(rw->w[i].um, "chunks"));
                names = json_object_get(rw->w[i].um, "keys");
                orders = json_object_get(rw->w[i].um, "key_order");
            }
        if (n_ch == 0)
            continue;
        mcdc_silver_keyorder k;
        bool ok = false;
        const char *why = NULL;
        if ((rc = mcdc_silver__keyorder(&k, &ok, &why, names, orders, c->o->keys, c->o->n_keys,
                                        c->silver_flat, c->bronze_flat)) < 0)
            break;
        if (!ok) {
            mcdc_log(MCDC_LOG_WARN, "silver", "%s: the partial backfill %s deletes no key "
                     "missing from its chunks: %s", c->o->silver_name, rw->marks[m].app_id, why);
            continue;
        }
        mcdc_silver_kchunk *ch = calloc(n_ch, sizeof *ch);
        size_t n = 0;
        if (!ch)
            rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        for (size_t i = 0; rc == 0 && i < rw->n; i++) {
            if (rw->w[i].app != rw->marks[m].app_id)
                continue;
            json_t *chs = json_object_get(rw->w[i].um, "chunks");
            for (size_t j = 0; rc == 0 && j < json_array_size(chs); j++) {
                json_t *e = json_array_get(chs, j);
                rc = mcdc_silver__kchunk_set(&ch[n], &k, c->silver_flat, json_object_get(e, "lo"),
                                             json_object_get(e, "hi"));
                ch[n].has_stamp = true;
                ch[n].stamp = rw->w[i].stamp;
                n++;
            }
        }
        size_t nd = 0;
        if (rc == 0)
            rc = mcdc_silver__chunk_deletes(c->silver, c->silver_flat, c->bronze_flat, c->cs, &k, ch,
                                            n, c->o->capture_instances[0], &nd);
        total += nd;
        mcdc_silver__kchunks_free(ch, n_ch);
        mcdc_silver__keyorder_clear(&k);
    }
    if (rc == 0 && total)
        mcdc_log(MCDC_LOG_INFO, "silver", "%s: %zu keys no longer in the chunks of partial "
                 "backfills: deleted at their chunks' stamps", c->o->silver_name, total);
    return rc;
}

/* Feed the rows of @p read (bronze files) to the change set, in order. */
static int feed_files(ctx *c, const mcdc_delta_file **read, size_t n_read)
{
    int rc = 0;
    uint64_t rows = 0;
    for (size_t i = 0; i < n_read; i++) {
        bstats st;
        bronze_stats(read[i], &st);
        rows += st.has_rows ? (uint64_t)st.rows : 0;
    }
    mcdc_silver_changes_reserve(c->cs, rows);
    if (n_read) {
        mcdc_delta_snapshot view;
        mcdc_delta_file *arr = malloc(n_read * sizeof *arr);
        mcdc_delta_scan *sc = NULL;
        rc = arr ? scan_subset(&sc, &view, arr, c->bronze, read, n_read, NULL, 0)
                 : mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        /* bronze is decoded and its rows prepared on a thread of their own while the
         * change set is built here */
        mcdc_silver_feed *feed = NULL;
        if (rc == 0)
            rc = mcdc_silver_feed_start(&feed, sc, prep_row, prefault, c->cs,
                                        sizeof(mcdc_silver_prepared));
        mcdc_silver_feed_batch b;
        while (rc == 0 && (rc = mcdc_silver_feed_next(feed, &b)) == 1) {
            rc = 0;
            const mcdc_silver_prepared *p = (const mcdc_silver_prepared *)(const void *)b.recs;
            for (size_t i = 0; i < b.n && i < PREFETCH_AHEAD; i++)
                if (p[i].take)
                    mcdc_silver_changes_prefetch(c->cs, p[i].hash);
            for (size_t i = 0; rc == 0 && i < b.n; i++) {
                if (i + PREFETCH_AHEAD < b.n && p[i + PREFETCH_AHEAD].take)
                    mcdc_silver_changes_prefetch(c->cs, p[i + PREFETCH_AHEAD].hash);
                c->res->bronze_rows_read++;
                const uint8_t *key = p[i].take ? (const uint8_t *)b.extra + p[i].key_off : NULL;
                rc = mcdc_silver_changes_add_prepared(c->cs, &b.rows[i * b.n_cols], &p[i], key);
            }
        }
        c->res->bronze_files_read += n_read;
        mcdc_silver_feed_free(feed);
        mcdc_delta_scan_free(sc);
        free(arr);
    }
    return rc;
}

/* ---- the merge --------------------------------------------------------------------- */

static double seconds_since(int64_t t0_us)
{
    return (double)(mcdc_time_mono_us() - t0_us) / 1e6;
}

/* Sort the change set, timed. */
static int sort_changes(ctx *c)
{
    int64_t t0 = mcdc_time_mono_us();
    int rc = mcdc_silver_changes_sort(c->cs);
    c->res->seconds_sort += seconds_since(t0);
    return rc;
}

/* Rebuild: every silver file goes; the snapshot's rows (if any) stream past the change
 * set in sorted runs; then the changed keys no snapshot row held. */
static int merge_rebuild(ctx *c, bool has_snapshot, const mcdc_lsn *snapshot)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->silver->n_files; i++)
        rc = mcdc_silver_out_remove(&c->out, &c->silver->files[i]);
    mcdc_silver_runs *runs = NULL;
    if (rc == 0)
        rc = mcdc_silver_runs_new(&runs, &c->env, &c->out);
    if (rc == 0 && has_snapshot) {
        const mcdc_delta_file **read = malloc((c->bronze->n_files + 1) * sizeof *read);
        if (!read) {
            mcdc_silver_runs_free(runs);
            return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        }
        size_t n_read = 0;
        for (size_t i = 0; i < c->bronze->n_files; i++) {
            const mcdc_delta_file *f = &c->bronze->files[i];
            bstats st;
            bronze_stats(f, &st);
            if (st.has_op && st.op_min > 0)
                continue;
            bool in_lsn = st.has_lsn && mcdc_lsn_cmp(&st.lsn_min, snapshot) <= 0 &&
                          mcdc_lsn_cmp(snapshot, &st.lsn_max) <= 0;
            bool in_snap = st.has_snap && mcdc_lsn_cmp(&st.snap_min, snapshot) <= 0 &&
                           mcdc_lsn_cmp(snapshot, &st.snap_max) <= 0;
            if (st.has_lsn && !in_lsn && !in_snap)
                continue;
            read[n_read++] = f;
        }
        mcdc_delta_snapshot view;
        mcdc_delta_file *arr = malloc((n_read + 1) * sizeof *arr);
        mcdc_delta_scan *sc = NULL;
        mcdc_value *row = calloc(c->silver_flat->n_cols + 1, sizeof *row);
        mcdc_value *img_row = calloc(c->silver_flat->n_cols + 1, sizeof *img_row);
        rc = arr && row && img_row ? scan_subset(&sc, &view, arr, c->bronze, read, n_read, NULL, 0)
                        : mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        const mcdc_value *r;
        char lsn_text[MCDC_LSN_STRLEN];
        while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
            c->res->bronze_rows_read++;
            rc = mcdc_silver_changes_snapshot_row(c->cs, r, snapshot, row, lsn_text);
            if (rc <= 0)
                continue;
            mcdc_silver_fate fate;
            const mcdc_value *img;
            rc = mcdc_silver_changes_match(c->cs, row, &fate, &img, img_row);
            if (rc == 0 && fate != MCDC_SILVER_DROP)
                rc = mcdc_silver_runs_hold(runs, fate == MCDC_SILVER_REPLACE ? img : row);
            if (rc == 0 && fate == MCDC_SILVER_REPLACE)
                c->out.rows_updated++;
            else if (rc == 0 && fate == MCDC_SILVER_DROP)
                c->out.rows_deleted++;
            else if (rc == 0)
                c->out.rows_inserted++;
            if (rc == 0 && mcdc_silver_runs_count(runs) >= c->env.target_rows)
                rc = mcdc_silver_runs_flush(runs);
        }
        c->res->bronze_files_read += n_read;
        mcdc_delta_scan_free(sc);
        free(arr);
        free(row);
        free(img_row);
        free(read);
        if (rc == 0)
            rc = mcdc_silver_runs_flush(runs);
    }
    if (rc == 0)
        rc = sort_changes(c);
    size_t n = mcdc_silver_changes_count(c->cs);
    mcdc_value *cells = rc == 0 ? calloc(c->silver_flat->n_cols + 1, sizeof *cells) : NULL;
    if (rc == 0 && !cells)
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        mcdc_silver_image im;
        mcdc_silver_changes_at(c->cs, i, &im);
        if (im.matched || im.is_delete)
            continue;
        rc = mcdc_silver_runs_hold(runs, mcdc_silver_changes_row_at(c->cs, i, cells));
        c->out.rows_inserted++;
        if (rc == 0 && mcdc_silver_runs_count(runs) >= c->env.target_rows)
            rc = mcdc_silver_runs_flush(runs);
    }
    free(cells);
    if (rc == 0)
        rc = mcdc_silver_runs_flush(runs);
    mcdc_silver_runs_free(runs);
    return rc;
}

/* Files rewritten at once: as asked, else the online CPUs, at most 8. */
static int thread_count(const mcdc_silver_apply_options *o)
{
    if (o->threads > 0)
        return o->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* A silver file and what the merge does with it. */
typedef struct sfile {
    const mcdc_delta_file *f;   /* in ctx->silver (borrowed) */
    bool     known;             /* the key range tags are present and valid */
    uint8_t *lo, *hi;           /* owned */
    size_t   lo_len, hi_len;
    bool     touched;
    size_t   first_img, n_img;  /* images whose insert target is this file (bucketed) */
} sfile;

static int sfile_lo_cmp(const void *pa, const void *pb)
{
    const sfile *a = pa, *b = pb;
    if (a->known != b->known)
        return a->known ? 1 : -1; /* files without a range first */
    if (!a->known)
        return strcmp(a->f->path, b->f->path);
    return mcdc_silver__key_cmp(a->lo, a->lo_len, b->lo, b->lo_len);
}

/* The file's row count from its add stats (the physical rows), or -1. */
static int64_t stats_rows(const mcdc_delta_file *f)
{
    if (!f->stats)
        return -1;
    json_t *j = json_loads(f->stats, 0, NULL);
    json_t *n = j ? json_object_get(j, "numRecords") : NULL;
    int64_t rows = json_is_integer(n) ? (int64_t)json_integer_value(n) : -1;
    json_decref(j);
    return rows;
}

/* A small file's live rows decided against the change set and held in @p runs (the file
 * is removed: its rows go into the merge's new file). */
static int fold_small(ctx *c, const mcdc_delta_file *f, mcdc_silver_runs *runs)
{
    mcdc_delta_snapshot view;
    mcdc_delta_file arr[1];
    mcdc_delta_scan *sc = NULL;
    int rc = scan_subset(&sc, &view, arr, c->silver, &f, 1, NULL, 0);
    mcdc_value *img_row = rc == 0 ? calloc(c->silver_flat->n_cols + 1, sizeof *img_row) : NULL;
    if (rc == 0 && !img_row)
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        c->out.rows_read++;
        mcdc_silver_fate fate;
        const mcdc_value *img;
        if ((rc = mcdc_silver_changes_match(c->cs, r, &fate, &img, img_row)) < 0)
            break;
        if (fate == MCDC_SILVER_DROP) {
            c->out.rows_deleted++;
            continue;
        }
        if (fate == MCDC_SILVER_REPLACE)
            c->out.rows_updated++;
        rc = mcdc_silver_runs_hold(runs, fate == MCDC_SILVER_REPLACE ? img : r);
    }
    mcdc_delta_scan_free(sc);
    free(img_row);
    if (rc == 0)
        rc = mcdc_silver_out_remove(&c->out, f);
    return rc;
}

enum { FILE_REWRITE = 0, FILE_MARK = 1, FILE_SMALL = 2 };

/* Deletion-vector mode (rule S3 as a rewrite; docs/decisions/0045): of the touched files
 * @p tg, one under half the target size is folded into the new file, one whose deleted
 * rows (its DV's and at most the images of its range) would pass the fold share is
 * rewritten, the others get a deletion vector (mark.c). Then one new file (split past
 * 1.5x the target) takes the images that replaced a marked row, the folded files' live
 * rows and the new keys, except those aimed at a rewritten file (written there). The
 * marks go first, so that a rewrite never inserts a key a marked file still holds. */
static int merge_marking(ctx *c, const sfile *fs, size_t nf, mcdc_silver_target *tg,
                         size_t n_tg, const size_t *target, size_t n)
{
    unsigned char *cls = calloc(nf + 1, 1), *replaced = calloc(n + 1, 1);
    mcdc_silver_target *mark = calloc(n_tg + 1, sizeof *mark), *rw = calloc(n_tg + 1, sizeof *rw);
    const mcdc_delta_file **small = calloc(n_tg + 1, sizeof *small);
    mcdc_value *cells = calloc(c->silver_flat->n_cols + 1, sizeof *cells);
    mcdc_silver_runs *runs = NULL;
    int rc = cls && replaced && mark && rw && small && cells
                 ? 0 : mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    size_t n_mark = 0, n_rw = 0, n_small = 0;
    for (size_t i = 0; rc == 0 && i < n_tg; i++) {
        const mcdc_silver_target *t = &tg[i];
        size_t fi = 0;
        while (fi < nf && fs[fi].f != t->f)
            fi++;
        int64_t rows = stats_rows(t->f);
        size_t est = n;
        if (t->known) {
            size_t lo = mcdc_silver_changes_lower_bound(c->cs, t->lo, t->lo_len);
            size_t hi = mcdc_silver_changes_lower_bound(c->cs, t->hi, t->hi_len);
            if (hi < n) {
                size_t kl;
                const uint8_t *k = mcdc_silver_changes_key_at(c->cs, hi, &kl);
                hi += mcdc_silver__key_cmp(k, kl, t->hi, t->hi_len) == 0;
            }
            est = hi - lo;
        }
        int64_t del = t->f->has_dv ? t->f->dv.cardinality : 0;
        if (rows >= 0 && (size_t)rows < c->env.target_rows / 2) {
            cls[fi] = FILE_SMALL;
            small[n_small++] = t->f;
        } else if (rows < 0 || (double)(del + (int64_t)est) > c->fold_share * (double)rows) {
            cls[fi] = FILE_REWRITE;
            rw[n_rw++] = *t;
        } else {
            cls[fi] = FILE_MARK;
            mark[n_mark++] = *t;
        }
    }
    if (rc == 0)
        rc = mcdc_silver_mark(&c->env, mark, n_mark, thread_count(c->o), replaced, &c->out,
                              &c->marked);
    if (rc == 0)
        rc = mcdc_silver_runs_new(&runs, &c->env, &c->out);
    for (size_t i = 0; rc == 0 && i < n_small; i++)
        rc = fold_small(c, small[i], runs);
    if (rc == 0 && n_rw)
        rc = mcdc_silver_rewrite(&c->env, rw, n_rw, thread_count(c->o), &c->out);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        mcdc_silver_image im;
        mcdc_silver_changes_at(c->cs, k, &im);
        if (!replaced[k]) {
            if (target[k] < nf && cls[target[k]] == FILE_REWRITE && fs[target[k]].touched)
                continue; /* the rewrite placed it */
            if (im.matched || im.is_delete)
                continue;
            c->out.rows_inserted++;
        }
        rc = mcdc_silver_runs_hold(runs, mcdc_silver_changes_row_at(c->cs, k, cells));
        if (rc == 0 && mcdc_silver_runs_count(runs) >= c->env.target_rows * 3 / 2)
            rc = mcdc_silver_runs_flush(runs);
    }
    if (rc == 0)
        rc = mcdc_silver_runs_flush(runs);
    mcdc_silver_runs_free(runs);
    free(cls);
    free(replaced);
    free(mark);
    free(rw);
    free(small);
    free(cells);
    return rc;
}

/* Incremental merge over the files whose key range holds a changed key: plan here, write
 * in rewrite.c (several files at once). */
static int merge_incremental(ctx *c)
{
    int rc = sort_changes(c);
    if (rc < 0)
        return rc;
    size_t n = mcdc_silver_changes_count(c->cs);
    if (n == 0)
        return 0;
    size_t nf = c->silver->n_files;
    sfile *fs = calloc(nf + 1, sizeof *fs);
    size_t *target = malloc(n * sizeof *target);  /* file index in fs, or nf: a new file */
    size_t *img_of = malloc(n * sizeof *img_of);
    size_t *maxhi = calloc(nf + 1, sizeof *maxhi); /* index of the max hi among fs[0..i] */
    mcdc_silver_target *tg = calloc(nf + 1, sizeof *tg);
    mcdc_silver_runs *runs = NULL;
    if (!fs || !target || !img_of || !maxhi || !tg) {
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        goto done;
    }
    for (size_t i = 0; i < nf; i++) {
        sfile *s = &fs[i];
        s->f = &c->silver->files[i];
        const char *lo = mcdc_delta_map_get(&s->f->tags, MCDC_SILVER_TAG_KEY_MIN, NULL);
        const char *hi = mcdc_delta_map_get(&s->f->tags, MCDC_SILVER_TAG_KEY_MAX, NULL);
        if (lo && hi && (s->lo = mcdc_silver__unhex(lo, &s->lo_len)) && (s->hi = mcdc_silver__unhex(hi, &s->hi_len)))
            s->known = true;
    }
    qsort(fs, nf, sizeof *fs, sfile_lo_cmp);
    size_t first_known = 0;
    while (first_known < nf && !fs[first_known].known)
        first_known++;
    for (size_t i = 0; i < first_known; i++)
        fs[i].touched = true; /* no range: may hold any key */
    /* maxhi[i]: the known file in [first_known, i] with the largest hi */
    for (size_t i = first_known; i < nf; i++) {
        maxhi[i] = i;
        if (i > first_known &&
            mcdc_silver__key_cmp(fs[maxhi[i - 1]].hi, fs[maxhi[i - 1]].hi_len, fs[i].hi, fs[i].hi_len) > 0)
            maxhi[i] = maxhi[i - 1];
    }
    for (size_t k = 0; k < n; k++) {
        /* the keys in order and the delete marks, without a visit to the images */
        size_t key_len;
        const uint8_t *key = mcdc_silver_changes_key_at(c->cs, k, &key_len);
        bool is_delete = mcdc_silver_changes_is_delete_at(c->cs, k);
        /* ub: first known file whose lo is above the key */
        size_t lo = first_known, hi = nf;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (mcdc_silver__key_cmp(fs[mid].lo, fs[mid].lo_len, key, key_len) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t ub = lo;
        size_t last = nf;
        /* every known file before ub whose hi reaches the key holds it in its range */
        for (size_t j = ub; j > first_known; j--) {
            size_t m = maxhi[j - 1];
            if (mcdc_silver__key_cmp(fs[m].hi, fs[m].hi_len, key, key_len) < 0)
                break; /* no file in [first_known, j) reaches the key */
            if (mcdc_silver__key_cmp(fs[j - 1].hi, fs[j - 1].hi_len, key, key_len) >= 0) {
                fs[j - 1].touched = true;
                if (last == nf)
                    last = j - 1;
            }
        }
        if (last == nf && !is_delete && first_known < nf) {
            last = ub > first_known ? ub - 1 : first_known; /* the gap's file */
            fs[last].touched = true;
        }
        target[k] = last;
    }
    /* bucket the images by target file */
    for (size_t k = 0; k < n; k++)
        if (target[k] < nf)
            fs[target[k]].n_img++;
    size_t at = 0;
    for (size_t i = 0; i < nf; i++) {
        fs[i].first_img = at;
        at += fs[i].n_img;
        fs[i].n_img = 0;
    }
    for (size_t k = 0; k < n; k++)
        if (target[k] < nf) {
            sfile *s = &fs[target[k]];
            img_of[s->first_img + s->n_img++] = k;
        }
    size_t n_tg = 0;
    for (size_t i = 0; i < nf; i++) {
        if (!fs[i].touched)
            continue;
        mcdc_silver_target *t = &tg[n_tg++];
        t->f = fs[i].f;
        t->known = fs[i].known;
        t->lo = fs[i].lo;
        t->lo_len = fs[i].lo_len;
        t->hi = fs[i].hi;
        t->hi_len = fs[i].hi_len;
        t->img = img_of + fs[i].first_img;
        t->n_img = fs[i].n_img;
    }
    if (c->dv) {
        rc = merge_marking(c, fs, nf, tg, n_tg, target, n);
        goto done;
    }
    rc = mcdc_silver_rewrite(&c->env, tg, n_tg, thread_count(c->o), &c->out);
    /* keys no file's range could hold (or no files at all) */
    if (rc == 0)
        rc = mcdc_silver_runs_new(&runs, &c->env, &c->out);
    mcdc_value *cells = rc == 0 ? calloc(c->silver_flat->n_cols + 1, sizeof *cells) : NULL;
    if (rc == 0 && !cells)
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    for (size_t k = 0; rc == 0 && k < n; k++) {
        if (target[k] < nf)
            continue;
        mcdc_silver_image im;
        mcdc_silver_changes_at(c->cs, k, &im);
        if (im.matched || im.is_delete)
            continue;
        rc = mcdc_silver_runs_hold(runs, mcdc_silver_changes_row_at(c->cs, k, cells));
        c->out.rows_inserted++;
        if (rc == 0 && mcdc_silver_runs_count(runs) >= c->env.target_rows * 3 / 2)
            rc = mcdc_silver_runs_flush(runs);
    }
    free(cells);
    if (rc == 0)
        rc = mcdc_silver_runs_flush(runs);
done:
    mcdc_silver_runs_free(runs);
    for (size_t i = 0; fs && i < nf; i++) {
        free(fs[i].lo);
        free(fs[i].hi);
    }
    free(fs);
    free(target);
    free(img_of);
    free(maxhi);
    free(tg);
    return rc;
}

/* The commit's actions: the build function checks that the files it removes are still
 * live in the snapshot it is given (a retry after a conflict sees a fresh one). */
static int build_merge(const mcdc_delta_snapshot *snap, mcdc_delta_action **actions,
                       size_t *n_actions, void *payload)
{
    ctx *c = payload;
    size_t n = c->out.n_removes + c->out.n_adds;
    mcdc_delta_action *a = calloc(n + 1, sizeof *a);
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    int rc = 0;
    size_t k = 0;
    int64_t now_ms = mcdc_time_now_us() / 1000;
    for (size_t i = 0; rc == 0 && i < c->out.n_removes; i++) {
        bool live = false;
        for (size_t j = 0; !live && j < snap->n_files; j++)
            live = strcmp(snap->files[j].path, c->out.removes[i]->path) == 0;
        if (!live) {
            rc = mcdc_error_set(MCDC_ECONFLICT, "%s: file %s was removed by another writer "
                                "while silver apply rewrote it", c->o->silver_path,
                                c->out.removes[i]->path);
            mcdc_error_hint("run silver apply again; it starts from the new version");
            break;
        }
        rc = mcdc_delta_remove_of(&a[k++], c->out.removes[i], now_ms);
    }
    for (size_t i = 0; rc == 0 && i < c->out.n_adds; i++) {
        a[k].kind = MCDC_DELTA_ACTION_ADD;
        rc = mcdc_delta_file_copy(&a[k].u.file, &c->out.adds[i]);
        k++;
    }
    if (rc < 0) {
        for (size_t i = 0; i < k; i++)
            mcdc_delta_action_clear(&a[i]);
        free(a);
        return rc;
    }
    *actions = a;
    *n_actions = k;
    return 0;
}

/* ---- the call ---------------------------------------------------------------------- */

static bool same_keys(const char *stored, const char *const *keys, size_t n)
{
    const char *p = stored;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(keys[i]);
        if (strncasecmp(p, keys[i], l) != 0)
            return false;
        p += l;
        if (i + 1 < n) {
            if (*p != ',')
                return false;
            p++;
        }
    }
    return *p == 0;
}

/* Create silver, or evolve its schema; check its keys. Leaves c->silver and silver_flat. */
static int prepare_silver(ctx *c)
{
    const mcdc_silver_apply_options *o = c->o;
    mcdc_delta_snapshot *s = NULL;
    int rc = mcdc_delta_snapshot_open(&s, o->silver_path, -1);
    mcdc_schema *existing = NULL, *want = NULL;
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        rc = mcdc_silver_schema(&want, c->bronze_flat, NULL);
        mcdc_buf keys = MCDC_BUF_INIT(1 << 16);
        for (size_t i = 0; rc == 0 && i < o->n_keys; i++)
            rc = mcdc_buf_printf(&keys, "%s%s", i ? "," : "", o->keys[i]);
        mcdc_delta_map conf = { NULL, 0 };
        if (rc == 0)
            rc = mcdc_delta_map_set(&conf, CONF_KEYS, keys.ptr);
        if (rc == 0)
            rc = mcdc_delta_map_set(&conf, "mcdc.kind", "silver");
        if (rc == 0)
            rc = mcdc_delta_create(o->silver_path, want, NULL, 0, &conf, NULL);
        mcdc_delta_map_clear(&conf);
        mcdc_buf_dispose(&keys);
        mcdc_schema_free(want);
        want = NULL;
        if (rc == 0)
            rc = mcdc_delta_snapshot_open(&s, o->silver_path, -1);
    }
    if (rc < 0)
        goto done;
    const char *stored = mcdc_delta_snapshot_config(s, CONF_KEYS, NULL);
    if (stored && !same_keys(stored, o->keys, o->n_keys)) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s: silver was built with keys (%s), not the ones "
                            "given", o->silver_path, stored);
        mcdc_error_hint("pass --keys %s; to start over with other keys, apply into a new "
                        "silver table (or remove %s and apply again: it is rebuilt from "
                        "bronze)", stored, o->silver_path);
        goto done;
    }
    if ((rc = mcdc_delta_schema_to_flat(&existing, s->schema)) < 0 ||
        (rc = mcdc_silver_schema(&want, c->bronze_flat, existing)) < 0)
        goto done;
    bool widens = false;
    for (size_t i = 0; i < existing->n_cols; i++)
        widens |= !mcdc_delta_type_same(&existing->cols[i], &want->cols[i]);
    if (want->n_cols > existing->n_cols || widens) {
        for (size_t i = existing->n_cols; i < want->n_cols; i++)
            mcdc_log(MCDC_LOG_INFO, "silver", "%s: adding column %s that bronze gained",
                     o->silver_path, want->cols[i].name);
        /* a column bronze widened (its typeWidening was enabled by the user): silver
         * takes the feature and widens it too (docs/guides/schema-changes.md) */
        if (widens) {
            mcdc_log(MCDC_LOG_INFO, "silver", "%s: widening the columns bronze widened",
                     o->silver_path);
            rc = mcdc_delta_enable_type_widening(o->silver_path, NULL);
        }
        if (rc == 0)
            rc = mcdc_delta_append_evolving(o->silver_path, NULL, 0, want, NULL, NULL);
        mcdc_delta_snapshot_free(s);
        s = NULL;
        if (rc == 0)
            rc = mcdc_delta_snapshot_open(&s, o->silver_path, -1);
        mcdc_schema_free(existing);
        existing = NULL;
        if (rc == 0)
            rc = mcdc_delta_schema_to_flat(&existing, s->schema);
    }
    if (rc == 0) {
        c->silver = s;
        c->silver_flat = existing;
        s = NULL;
        existing = NULL;
    }
done:
    mcdc_delta_snapshot_free(s);
    mcdc_schema_free(existing);
    mcdc_schema_free(want);
    return rc;
}

/* The write mode: as asked (recorded in mcdc.silver.write_mode, with the deletionVectors
 * feature for deletion vectors), else as recorded. Reopens c->silver when it commits. */
static int prepare_write_mode(ctx *c)
{
    const mcdc_silver_apply_options *o = c->o;
    const char *have = mcdc_delta_snapshot_config(c->silver, CONF_WRITE, "rewrite");
    bool dv = o->write_mode == MCDC_SILVER_WRITE_DEFAULT
                  ? strcmp(have, "deletion-vectors") == 0
                  : o->write_mode == MCDC_SILVER_WRITE_DELETION_VECTORS;
    const char *want = dv ? "deletion-vectors" : "rewrite";
    const char *fold = mcdc_delta_snapshot_config(c->silver, CONF_FOLD, NULL);
    c->fold_share = fold ? strtod(fold, NULL) : 0.2;
    c->dv = dv;
    bool feature = strcmp(mcdc_delta_snapshot_config(c->silver, "delta.enableDeletionVectors",
                                                     "false"), "true") == 0;
    bool record = o->write_mode != MCDC_SILVER_WRITE_DEFAULT && strcmp(have, want) != 0;
    if (!record && (!dv || feature))
        return 0;
    int rc = 0;
    if (dv && !feature) {
        mcdc_log(MCDC_LOG_INFO, "silver", "%s: turning on deletion vectors (Delta reader 3, "
                 "writer 7, feature deletionVectors)", o->silver_path);
        rc = mcdc_delta_enable_deletion_vectors(o->silver_path, NULL);
    }
    if (rc == 0 && record) {
        mcdc_delta_map set = { NULL, 0 };
        rc = mcdc_delta_map_set(&set, CONF_WRITE, want);
        if (rc == 0)
            rc = mcdc_delta_set_config(o->silver_path, &set, NULL, NULL);
        mcdc_delta_map_clear(&set);
    }
    mcdc_delta_snapshot_free(c->silver);
    c->silver = NULL;
    if (rc == 0)
        rc = mcdc_delta_snapshot_open(&c->silver, o->silver_path, -1);
    return rc;
}

static void lsn_max(bool *has, mcdc_lsn *acc, const mcdc_lsn *v)
{
    if (!*has || mcdc_lsn_cmp(v, acc) > 0) {
        *acc = *v;
        *has = true;
    }
}

/* A table's control row, or @p out left empty when the table has no row yet. */
static int control_row_or_none(mcdc_control_row *out, const char *control, const char *table)
{
    int rc = mcdc_control_get(out, control, table);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        rc = 0;
    }
    return rc;
}

/* The kind of the table at @p path must be @p want (when it exists); with @p snap_out
 * the snapshot read is kept (NULL when no table). */
static int check_table(const char *path, const char *name, const char *want, const char *flag,
                       mcdc_delta_snapshot **snap_out)
{
    if (snap_out)
        *snap_out = NULL;
    mcdc_delta_snapshot *s = NULL;
    int rc = mcdc_delta_snapshot_open(&s, path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    const char *kind = mcdc_table_kind(s, NULL);
    if (!kind || strcmp(kind, want) != 0) {
        if (kind)
            mcdc_error_set(MCDC_EINVAL, "%s %s: is a %s table, not a %s table", flag, name,
                           kind, want);
        else
            mcdc_error_set(MCDC_EINVAL, "%s %s: is not a table mssql-cdc writes", flag, name);
        rc = mcdc_error_hint("give %s a %s table, or a new name to create one", flag, want);
    }
    if (rc == 0 && snap_out)
        *snap_out = s;
    else
        mcdc_delta_snapshot_free(s);
    return rc;
}

int mcdc_silver_apply_check(const mcdc_silver_apply_options *o)
{
    if (!o || !o->bronze_name || !o->bronze_path || !o->silver_name || !o->silver_path ||
        !o->control_path || o->n_keys == 0 || o->n_capture_instances == 0)
        return mcdc_error_set(MCDC_EINVAL, "silver apply: bronze, silver, control, keys and "
                              "the capture instance are required");
    mcdc_delta_snapshot *silver = NULL, *bronze = NULL;
    int rc = check_table(o->silver_path, o->silver_name, "silver", "--silver", &silver);
    if (rc == 0 && silver) {
        const char *mode = mcdc_delta_snapshot_config(silver, "mcdc.silver.mode", "scd1");
        const char *want = o->mode == MCDC_SILVER_SCD2 ? "scd2" : "scd1";
        bool soft = !strcmp(mcdc_delta_snapshot_config(silver, "mcdc.silver.soft_deletes", "false"), "true");
        if (strcmp(mode, want) != 0) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s: silver was built with mode %s, not %s",
                                o->silver_name, mode, want);
            mcdc_error_hint("apply with --mode %s, or into a new silver table", mode);
        } else if (o->mode == MCDC_SILVER_SCD1 && soft != o->soft_deletes) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s: silver was built %s", o->silver_name,
                                soft ? "with soft deletes" : "with hard deletes");
            mcdc_error_hint("%s, or apply into a new silver table",
                            soft ? "pass --soft-deletes" : "leave out --soft-deletes");
        }
    }
    if (rc == 0 && o->write_mode == MCDC_SILVER_WRITE_DELETION_VECTORS &&
        (o->mode == MCDC_SILVER_SCD2 || o->soft_deletes)) {
        rc = mcdc_error_set(MCDC_EINVAL, "--write-mode deletion-vectors: is for scd1 with hard "
                            "deletes, not %s", o->mode == MCDC_SILVER_SCD2 ? "--mode scd2"
                                                                       : "--soft-deletes");
        mcdc_error_hint("leave out --write-mode (scd2 and soft deletes rewrite the files they "
                        "change)");
    }
    if (rc == 0 && silver) {
        const char *fold = mcdc_delta_snapshot_config(silver, CONF_FOLD, NULL);
        char *end = NULL;
        double v = fold ? strtod(fold, &end) : 0.2;
        if (fold && (end == fold || *end || !(v >= 0 && v <= 1))) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s: table property %s is '%s', not a share "
                                "between 0 and 1", o->silver_name, CONF_FOLD, fold);
            mcdc_error_hint("set it to a number like 0.2 (mssql-cdc table set-property)");
        }
    }
    if (rc == 0 && silver) {
        const char *stored = mcdc_delta_snapshot_config(silver, CONF_KEYS, NULL);
        if (stored && !same_keys(stored, o->keys, o->n_keys)) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s: silver was built with keys (%s), not the "
                                "ones given", o->silver_path, stored);
            mcdc_error_hint("pass --keys %s; to start over with other keys, apply into a new "
                            "silver table (or remove %s and apply again: it is rebuilt from "
                            "bronze)", stored, o->silver_path);
        }
    }
    if (rc == 0)
        rc = mcdc_control_check(o->control_path);
    if (rc == 0 && o->facts_path)
        rc = check_table(o->facts_path, o->facts_path, "facts", "--facts", NULL);
    if (rc == 0)
        rc = check_table(o->bronze_path, o->bronze_name, "bronze", "--bronze", &bronze);
    for (size_t i = 0; rc == 0 && bronze && i < o->n_keys; i++) {
        if (mcdc_delta_schema_find(bronze->schema, o->keys[i]) >= 0 && o->keys[i][0] != '_')
            continue;
        mcdc_buf cols = MCDC_BUF_INIT(1 << 16);
        for (size_t k = 0; k < bronze->schema->n_fields; k++)
            if (bronze->schema->fields[k].name[0] != '_')
                mcdc_buf_printf(&cols, "%s%s", cols.len ? ", " : "",
                                bronze->schema->fields[k].name);
        rc = mcdc_error_set(MCDC_EINVAL, "key %s: not a captured column of %s (it has %s)",
                            o->keys[i], o->bronze_name, cols.ptr ? cols.ptr : "none");
        mcdc_error_hint("pass --keys with columns of the source table's unique index");
        mcdc_buf_dispose(&cols);
    }
    mcdc_delta_snapshot_free(silver);
    mcdc_delta_snapshot_free(bronze);
    return rc;
}

int mcdc_silver_apply(const mcdc_silver_apply_options *o, mcdc_silver_apply_result *out)
{
    memset(out, 0, sizeof *out);
    out->bronze_version = out->silver_version = -1;
    if (!o || !o->bronze_name || !o->bronze_path || !o->silver_name || !o->silver_path ||
        !o->control_path || o->n_keys == 0 || o->n_capture_instances == 0)
        return mcdc_error_set(MCDC_EINVAL, "silver apply: bronze, silver, control, keys and "
                              "the capture instance are required");
    if (o->target_file_rows < 1)
        return mcdc_error_set(MCDC_EINVAL, "silver apply: target rows per file must be at "
                              "least 1, not %lld", (long long)o->target_file_rows);
    if (strcmp(o->bronze_name, o->silver_name) == 0 || strcmp(o->bronze_path, o->silver_path) == 0)
        return mcdc_error_set(MCDC_EINVAL, "silver apply: silver and bronze are the same table "
                              "(%s)", o->silver_name);
    char lock_path[MCDC_PATH_MAX];
    if (snprintf(lock_path, sizeof lock_path, "%s/%s", o->silver_path, LOCK_NAME) >=
        (int)sizeof lock_path)
        return mcdc_error_set(MCDC_EINVAL, "%s: path too long", o->silver_path);
    int rc = mcdc_silver_apply_check(o); /* every input before the first write */
    if (rc < 0)
        return rc;
    if (o->mode == MCDC_SILVER_SCD2 && o->soft_deletes)
        return mcdc_error_set(MCDC_EINVAL, "silver apply: soft deletes are for scd1 (an scd2 "
                              "table closes a deleted key's version)");
    if (o->mode == MCDC_SILVER_SCD2 || o->soft_deletes)
        return mcdc_silver__apply_scd2(o, out);
    rc = mcdc_storage_mkdirs(o->silver_path);
    if (rc < 0)
        return rc;
    /* On an object store there is no flock: two applies are kept apart by the Delta
     * commit's conflict check on what each read (invariant 7), as they would be here too. */
    mcdc_fs_lock *lock = NULL;
    if (!mcdc_storage_is_s3(o->silver_path) && (rc = mcdc_fs_lock_acquire(&lock, lock_path)) < 0) {
        if (rc == MCDC_ELOCKED)
            mcdc_error_hint("another silver apply of %s is running; wait for it", o->silver_name);
        return rc;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.res = out;
    mcdc_control_row brow, srow;
    memset(&brow, 0, sizeof brow);
    memset(&srow, 0, sizeof srow);
    position pos, newpos;
    memset(&pos, 0, sizeof pos);
    range_work rw;
    memset(&rw, 0, sizeof rw);

    /* 1-2: the verdicts and the position, before bronze is read */
    if ((rc = mcdc_control_ensure(o->control_path, NULL)) < 0)
        goto done;
    if ((rc = control_row_or_none(&brow, o->control_path, o->bronze_name)) < 0)
        goto done;
    if ((rc = control_row_or_none(&srow, o->control_path, o->silver_name)) < 0)
        goto done;
    pos.has_applied = text_lsn(&pos.applied, srow.applied_lsn);
    pos.has_snapshot = text_lsn(&pos.snapshot, srow.snapshot_lsn);
    pos.has_open = text_lsn(&pos.open, srow.open_snapshot_lsn);
    pos.has_wave = srow.has_snapshot_wave;
    pos.wave = srow.snapshot_wave;
    out->finalized_until = srow.finalized_until;
    out->has_applied_lsn = pos.has_applied;
    out->applied_lsn = pos.applied;
    out->has_snapshot_lsn = pos.has_snapshot;
    out->snapshot_lsn = pos.snapshot;

    /* 4 (facts first: what they announce is in the bronze pinned after them): the newest
     * completed snapshot, and a chunked one still open */
    bool has_fsnap = false;
    mcdc_lsn fsnap;
    mcdc_chunked_snapshot cso;
    memset(&cso, 0, sizeof cso);
    if (o->facts_path && ((rc = facts_snapshot(o->facts_path, o->bronze_name, &has_fsnap, &fsnap)) < 0 ||
                          (rc = mcdc_chunked_snapshot_find(&cso, o->facts_path, o->bronze_name)) < 0))
        goto done;

    /* 3: bronze, pinned */
    rc = mcdc_delta_snapshot_open(&c.bronze, o->bronze_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        rc = 0;
        goto done; /* bronze_found stays false: the previous position */
    }
    if (rc < 0)
        goto done;
    out->bronze_found = true;
    out->bronze_version = c.bronze->version;
    if ((rc = mcdc_delta_schema_to_flat(&c.bronze_flat, c.bronze->schema)) < 0)
        goto done;

    /* 5-7: the newest snapshot, and whether to rebuild */
    bool has_snap = false;
    mcdc_lsn snap;
    if ((rc = bronze_snapshot(&c, &pos, &has_snap, &snap)) < 0)
        goto done;
    if (has_fsnap)
        lsn_max(&has_snap, &snap, &fsnap);
    bool rebuild = !pos.has_applied ||
                   (has_snap && (!pos.has_snapshot || mcdc_lsn_cmp(&snap, &pos.snapshot) > 0));
    if (rebuild && !has_snap && pos.has_snapshot) {
        has_snap = true; /* a first call after a lost position: rebuild from the same one */
        snap = pos.snapshot;
    }
    /* a chunked snapshot still open (newer than every completed one): its waves are applied
     * as they arrive (rule W1 in mcdc/silver.h) and the verdict is held. A rebuild from
     * an older completed snapshot comes first; the waves follow on the next call. */
    bool waves = false;
    mcdc_lsn open_S = { { 0 } };
    int64_t after_chunk = -1, new_wave = -1;
    if (cso.is_open && (!has_snap || mcdc_lsn_cmp(&cso.snapshot, &snap) > 0)) {
        out->snapshot_open = true;
        open_S = cso.snapshot;
        waves = !rebuild || !has_snap;
        char snap_app[300], l[MCDC_LSN_STRLEN];
        snprintf(snap_app, sizeof snap_app, "%s#snap.%s", cso.app_id, mcdc_lsn_format(l, &open_S));
        new_wave = mcdc_delta_snapshot_txn(c.bronze, snap_app); /* the waves pinned */
        if (waves && !rebuild && pos.has_open && mcdc_lsn_cmp(&pos.open, &open_S) == 0 &&
            pos.has_wave &&
            (rc = mcdc_chunked_snapshot_last_chunk(o->facts_path, o->bronze_name, pos.wave,
                                                   &after_chunk)) < 0)
            goto done;
        mcdc_log(MCDC_LOG_INFO, "silver", "%s: the chunked snapshot at %s is open (%lld of %lld "
                 "chunks in bronze): %s; the verdict is held until it is complete",
                 o->bronze_name, l, (long long)cso.chunks_done, (long long)cso.chunks_total,
                 !waves ? "silver is rebuilt from the newest complete snapshot first"
                 : new_wave < 0 ? "no wave has arrived yet" : "applying the waves that arrived");
    }

    if ((rc = prepare_silver(&c)) < 0 || (rc = prepare_write_mode(&c)) < 0)
        goto done;
    out->silver_files_before = c.silver->n_files;
    /* partial backfills not applied yet (W3): with the plain incremental merge only (a
     * rebuild or an open snapshot's waves come first; their rows wait for a later call,
     * which finds them still unmarked) */
    if (!waves && !rebuild && (rc = find_range_waves(&c, &rw)) < 0)
        goto done;

    /* 8: the change set */
    mcdc_silver_changes_options co = MCDC_SILVER_CHANGES_OPTIONS_INIT;
    co.capture_instances = o->capture_instances;
    co.n_capture_instances = o->n_capture_instances;
    co.max_bytes = o->max_bytes;
    if (waves) {
        /* W1: the new waves' rows ranked with every change after S (and every change not
         * applied yet) of bronze */
        co.has_snapshot = true;
        co.snapshot = open_S;
        co.has_after = !rebuild;
        co.after = pos.applied;
        /* below S, so that W2's deletes at a wave's stamp L = S (an idle source) are taken */
        mcdc_lsn below = open_S;
        if (mcdc_lsn_decrement(&below, &open_S) < 0)
            mcdc_error_clear();
        if (co.has_after && mcdc_lsn_cmp(&below, &co.after) < 0)
            co.after = below;
    } else if (rebuild) {
        co.has_after = has_snap;
        co.after = snap;
    } else {
        co.has_after = true;
        co.after = pos.applied;
        if (rw.n) {
            /* W3: the waves' rows ranked with every change after their stamps */
            co.range_stamps = rw.stamps;
            co.n_range_stamps = rw.n_stamps;
            mcdc_lsn below = rw.min_stamp; /* the deletes at a stamp are taken too */
            if (mcdc_lsn_decrement(&below, &rw.min_stamp) < 0)
                mcdc_error_clear();
            if (!pos.has_applied || mcdc_lsn_cmp(&below, &co.after) < 0)
                co.after = below;
        }
    }
    if ((rc = mcdc_silver_changes_new(&c.cs, c.bronze_flat, c.silver_flat, o->keys, o->n_keys,
                                      &co)) < 0)
        goto done;
    c.env.silver_path = o->silver_path;
    c.env.silver = c.silver;
    c.env.schema = c.silver_flat;
    c.env.cs = c.cs;
    c.env.target_rows = (size_t)o->target_file_rows;
    int64_t t_phase = mcdc_time_mono_us();
    rc = read_changes(&c, co.has_after, &co.after);
    if (rc == 0 && waves && new_wave >= 0)
        rc = read_waves(&c, &open_S, after_chunk);
    if (rc == 0 && rw.n)
        rc = read_range_rows(&c, &rw, &co.after);
    /* the position counts the changes read from bronze, never the deletes W2 and W3 add
     * at a chunk's stamp (bronze may not hold every change up to that stamp yet) */
    mcdc_silver_changes_stats cst;
    mcdc_silver_changes_get_stats(c.cs, &cst);
    bool read_max = cst.has_max_change;
    mcdc_lsn read_max_lsn = cst.max_change_lsn;
    if (rc == 0 && waves && !rebuild && new_wave >= 0)
        rc = range_deletes(&c, after_chunk, new_wave, &open_S);
    if (rc == 0 && rw.n)
        rc = range_wave_deletes(&c, &rw);
    out->seconds_read = seconds_since(t_phase);
    if (rc < 0)
        goto done;
    mcdc_silver_changes_get_stats(c.cs, &cst);
    cst.has_max_change = read_max;
    cst.max_change_lsn = read_max_lsn;
    out->changed_keys = cst.n_keys;
    out->change_set_bytes = cst.bytes;

    /* 9-12: the merge */
    t_phase = mcdc_time_mono_us();
    if (waves)
        rc = rebuild ? merge_rebuild(&c, false, NULL) : merge_incremental(&c);
    else
        rc = rebuild ? merge_rebuild(&c, has_snap, &snap) : merge_incremental(&c);
    out->seconds_merge = seconds_since(t_phase) - out->seconds_sort;
    if (rc < 0)
        goto done;
    t_phase = mcdc_time_mono_us();
    mcdc_failpoint("silver.before_merge_commit");
    out->silver_files_rewritten = c.out.n_removes;
    out->silver_files_added = c.out.n_adds;
    out->silver_files_marked = c.marked;
    out->silver_rows_read = c.out.rows_read;
    out->rows_inserted = c.out.rows_inserted;
    out->rows_updated = c.out.rows_updated;
    out->rows_deleted = c.out.rows_deleted;
    /* The position after this merge: every bronze change at or below it is in silver
     * from this version on, none above (what an as-of read starts from). */
    newpos = pos;
    if (waves) {
        /* the open snapshot and its last wave applied; a first build from its waves and
         * the changes alone has applied everything up to its S at least */
        newpos.has_open = true;
        newpos.open = open_S;
        newpos.has_wave = new_wave >= 0;
        newpos.wave = (int32_t)new_wave;
        if (rebuild)
            lsn_max(&newpos.has_applied, &newpos.applied, &open_S);
    } else if (rebuild) {
        newpos.has_snapshot = has_snap;
        newpos.snapshot = snap;
        newpos.has_applied = false;
        newpos.has_open = newpos.has_wave = false;
        if (has_snap)
            lsn_max(&newpos.has_applied, &newpos.applied, &snap);
    }
    if (cst.has_max_change)
        lsn_max(&newpos.has_applied, &newpos.applied, &cst.max_change_lsn);
    if (pos.has_applied && !rebuild)
        lsn_max(&newpos.has_applied, &newpos.applied, &pos.applied);
    if (c.out.n_removes || c.out.n_adds || rw.n_marks) {
        mcdc_delta_commit_options cmo = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        cmo.operation = "MERGE";
        cmo.read_pred.op = MCDC_DELTA_PRED_ALL;
        cmo.txns = rw.marks; /* the partial backfills' waves applied (W3), in the same commit */
        cmo.n_txns = rw.n_marks;
        char lsn_text[MCDC_LSN_STRLEN], pos_text[MCDC_LSN_STRLEN];
        mcdc_buf meta = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        rc = mcdc_buf_printf(&meta, "{\"silver_apply\":{\"bronze_version\":%lld,\"rebuilt\":%s,"
                             "\"changed_keys\":%llu%s%s%s", (long long)c.bronze->version,
                             rebuild ? "true" : "false", (unsigned long long)cst.n_keys,
                             cst.has_max_change ? ",\"max_lsn\":\"" : "",
                             cst.has_max_change ? mcdc_lsn_format(lsn_text, &cst.max_change_lsn) : "",
                             cst.has_max_change ? "\"" : "");
        if (rc >= 0 && newpos.has_applied)
            rc = mcdc_buf_printf(&meta, ",\"applied_lsn\":\"%s\"",
                                 mcdc_lsn_format(pos_text, &newpos.applied));
        if (rc >= 0 && o->bronze_name && (rc = mcdc_buf_puts(&meta, ",\"bronze\":")) >= 0)
            rc = mcdc_json_quote(&meta, o->bronze_name, strlen(o->bronze_name));
        if (rc >= 0)
            rc = mcdc_buf_puts(&meta, "}}");
        if (rc < 0) {
            mcdc_buf_dispose(&meta);
            goto done;
        }
        cmo.user_metadata = meta.ptr;
        mcdc_delta_commit_result cr;
        rc = mcdc_delta_commit(o->silver_path, build_merge, &c, &cmo, &cr);
        mcdc_buf_dispose(&meta);
        if (rc < 0)
            goto done;
        out->silver_version = cr.version;
    } else {
        out->silver_version = c.silver->version;
    }
    out->rebuilt = rebuild;
    mcdc_failpoint("silver.after_merge");

    /* 13: the position (computed before the merge commit, which records it) */
    if (newpos.has_applied || newpos.has_snapshot) {
        rc = mcdc_control_update(o->control_path, o->silver_name, mutate_position, &newpos, NULL);
        if (rc == MCDC_EALREADY) {
            mcdc_error_clear();
            rc = 0;
        }
        if (rc < 0)
            goto done;
    }
    out->has_applied_lsn = newpos.has_applied;
    out->applied_lsn = newpos.applied;
    out->has_snapshot_lsn = newpos.has_snapshot;
    out->snapshot_lsn = newpos.snapshot;
    mcdc_failpoint("silver.after_position");

    /* 14: the verdict, capped at bronze's as read before bronze; held while a chunked
     * snapshot is open */
    if (!out->snapshot_open && (rc = mcdc_silver__advance_verdict(o, &brow, &out->finalized_until)) < 0)
        goto done;
    out->seconds_commit = seconds_since(t_phase);
done:
    if (c.cs) {
        mcdc_silver_changes_stats st;
        mcdc_silver_changes_get_stats(c.cs, &st);
        out->change_set_bytes = st.bytes;
    }
    mcdc_control_row_clear(&brow);
    mcdc_control_row_clear(&srow);
    range_work_free(&rw);
    ctx_free(&c);
    mcdc_fs_lock_release(lock);
    return rc;
}
