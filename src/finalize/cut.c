/*
 * finalize/cut.c: a consistent cut across tables of one database (`finalization cut`).
 *
 * SQL Server LSNs are database-wide and commit-ordered, so the tables streamed from one
 * database share one position L: each table t holds every commit up to E_t, the end of
 * its newest committed batch (the facts' batch rows, event NULL, whose target is t: this
 * moves with every batch, while the control row's end_lsn moves only with the verdict).
 * L = min E_t is then the newest LSN at which every table is complete, and an as-of-L read
 * of each gives one transactionally consistent view.
 *
 * Refused (MCDC_EINVAL, exit 2, naming the table and why):
 * - two tables whose bronze records different source identities (mcdc.source.*: LSNs of two
 *   databases are unrelated, docs/decisions/0039-source-identity.md); a table that records
 *   none (written before identities were) is allowed and reported in `unidentified`;
 * - a table with no batch row in the facts (nothing streamed yet), or no control row;
 * - L below a table's first state: its bootstrap snapshot (the `bootstrap` row's LSN, or
 *   its detail's consistent_lsn where recorded) or a stream started at `latest` (the
 *   `stream_started` row's LSN: it holds nothing before);
 * - L inside a re-snapshot's read, at or above its S (the `resnapshot` row's LSN) and
 *   below the consistent_lsn its detail records: no exact state there. A re-snapshot is no
 *   floor: the table holds its states before the gap;
 * - a table whose chunked snapshot is still open (no complete state yet): a snapshot_open
 *   row (mode chunked) with no bootstrap/resnapshot row at or above its S, as
 *   pipeline/snapshot_state.c reads it.
 * `lossless` is false when a recorded gap of a listed table begins at or below L: a
 * `data_skipped` row's, or a `resnapshot` row's, which begins above its detail's
 * lost_after (the last LSN read before it; rows without it: at the commit time
 * lost_from_ts, that time counted as inside). At or below lost_after the table holds every
 * change; above it (in the gap, or past S) changes inside the gap were never read.
 * Reads only. The facts' data files are pruned by their stats (facts_plan), so the work
 * grows with the listed tables' event rows, not with the facts table: a file whose target
 * range holds no listed table is not opened; a file of batch rows only (nullCount of event
 * = numRecords) matters only through its newest end_lsn, so those files are read newest
 * max end_lsn first and only while one may raise a listed table's end. A file without
 * usable stats is read.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/log.h"
#include "mcdc/pipeline.h"
#include "mcdc/source.h"
#include "mcdc/time.h"

enum { C_TARGET, C_EVENT, C_END_LSN, C_END_TS, C_DETAIL, C_LOST_FROM, N_C };

/* A table name at least this long may be a truncated max stat (delta/stats.c). */
#define STRING_STATS_PREFIX_CHARS 32

typedef struct table_state {
    bool     has_end;
    mcdc_lsn end;
    bool     has_end_ts;
    int64_t  end_ts_us;
    bool     has_floor;
    mcdc_lsn floor;        /* the table has no state below this */
    const char *floor_why; /* "bootstrap", "stream_started" */
    bool     has_open, has_done;
    mcdc_lsn open_S;       /* the newest chunked snapshot_open's S */
    mcdc_lsn done_S;       /* the newest bootstrap/resnapshot row's S */
    bool     has_gap;
    mcdc_lsn gap_from;     /* the lowest start of a recorded gap */
    bool     has_gap_ts;
    int64_t  gap_from_ts;  /* a re-snapshot's gap known by time only: commits after this
                              one (lost_from_ts, its last read commit's time) were lost */
    bool     has_hole;
    mcdc_lsn hole_from, hole_to; /* a re-snapshot read from S, consistent only from hole_to:
                                    no exact state in [hole_from, hole_to) */
} table_state;

static bool lsn_of(mcdc_lsn *out, const mcdc_value *v)
{
    if (v->is_null)
        return false;
    if (mcdc_lsn_parse_n(out, v->v.s.ptr, v->v.s.len) < 0) {
        mcdc_error_clear();
        return false;
    }
    return true;
}

static bool str_is(const mcdc_value *v, const char *s)
{
    return !v->is_null && v->v.s.len == strlen(s) && memcmp(v->v.s.ptr, s, v->v.s.len) == 0;
}

/* An LSN inside a detail payload ({"consistent_lsn": ...}, {"from": ...}). */
static bool detail_lsn(const mcdc_value *detail, const char *key, mcdc_lsn *out)
{
    if (detail->is_null)
        return false;
    json_t *j = json_loadb(detail->v.s.ptr, detail->v.s.len, 0, NULL);
    const char *s = json_string_value(json_object_get(j, key));
    bool ok = s && mcdc_lsn_parse(out, s) == 0;
    if (s && !ok)
        mcdc_error_clear();
    json_decref(j);
    return ok;
}

static void raise_floor(table_state *t, const mcdc_lsn *l, const char *why)
{
    if (!t->has_floor || mcdc_lsn_cmp(l, &t->floor) > 0) {
        t->floor = *l;
        t->floor_why = why;
        t->has_floor = true;
    }
}

static void note_gap(table_state *t, const mcdc_lsn *from)
{
    if (!t->has_gap || mcdc_lsn_cmp(from, &t->gap_from) < 0) {
        t->gap_from = *from;
        t->has_gap = true;
    }
}

static void take_row(table_state *t, const mcdc_value *r)
{
    mcdc_lsn end, x;
    bool has_end = lsn_of(&end, &r[C_END_LSN]);
    if (r[C_EVENT].is_null) {
        if (has_end && (!t->has_end || mcdc_lsn_cmp(&end, &t->end) > 0)) {
            t->end = end;
            t->has_end = true;
            t->has_end_ts = !r[C_END_TS].is_null;
            t->end_ts_us = r[C_END_TS].v.i;
        }
        return;
    }
    bool boot = str_is(&r[C_EVENT], "bootstrap"), resnap = str_is(&r[C_EVENT], "resnapshot");
    if (boot) {
        if (has_end)
            raise_floor(t, &end, "bootstrap");
        if (detail_lsn(&r[C_DETAIL], "consistent_lsn", &x))
            raise_floor(t, &x, "bootstrap");
    } else if (resnap) {
        /* not a floor: the table holds its states before the gap. The gap starts above
         * lost_after (recorded in the detail), or, in rows written before it was, after
         * the commit at lost_from_ts; without either, at S */
        mcdc_lsn la;
        if (detail_lsn(&r[C_DETAIL], "lost_after", &la) && mcdc_lsn_increment(&x, &la) == 0)
            note_gap(t, &x);
        else if (!r[C_LOST_FROM].is_null) {
            mcdc_error_clear();
            if (!t->has_gap_ts || r[C_LOST_FROM].v.i < t->gap_from_ts)
                t->gap_from_ts = r[C_LOST_FROM].v.i;
            t->has_gap_ts = true;
        } else if (has_end) {
            note_gap(t, &end);
        }
        if (has_end && detail_lsn(&r[C_DETAIL], "consistent_lsn", &x) && mcdc_lsn_cmp(&x, &end) > 0) {
            t->hole_from = end;
            t->hole_to = x;
            t->has_hole = true;
        }
    }
    if ((boot || resnap) && has_end && (!t->has_done || mcdc_lsn_cmp(&end, &t->done_S) > 0)) {
        t->done_S = end;
        t->has_done = true;
    }
    if (boot || resnap)
        return;
    if (str_is(&r[C_EVENT], "stream_started")) {
        if (has_end)
            raise_floor(t, &end, "stream_started");
    } else if (str_is(&r[C_EVENT], "snapshot_open")) {
        json_t *d = r[C_DETAIL].is_null ? NULL : json_loadb(r[C_DETAIL].v.s.ptr, r[C_DETAIL].v.s.len, 0, NULL);
        const char *mode = json_string_value(json_object_get(d, "mode"));
        bool chunked = !mode || strcmp(mode, "full") != 0;
        json_decref(d);
        if (chunked && has_end && (!t->has_open || mcdc_lsn_cmp(&end, &t->open_S) > 0)) {
            t->open_S = end;
            t->has_open = true;
        }
    } else if (str_is(&r[C_EVENT], "data_skipped")) {
        if (detail_lsn(&r[C_DETAIL], "from", &x))
            note_gap(t, &x);
        else if (has_end)
            note_gap(t, &end);
    }
}

/* Refuse tables of two sources; mark those that record none in @p unidentified. */
static int check_sources(const char *const *tables, const char *const *paths, size_t n,
                         bool *unidentified)
{
    mcdc_source_identity first, id;
    size_t at = n;
    for (size_t i = 0; i < n; i++) {
        mcdc_delta_snapshot *snap = NULL;
        int rc = mcdc_delta_snapshot_open(&snap, paths[i], -1);
        if (rc == MCDC_ENOTFOUND) {
            mcdc_error_clear();
            unidentified[i] = true;
            continue;
        }
        if (rc < 0)
            return rc;
        bool recorded = false;
        mcdc_bronze_source_identity(snap, &id, &recorded);
        mcdc_delta_snapshot_free(snap);
        if (!recorded) {
            unidentified[i] = true;
        } else if (at == n) {
            first = id;
            at = i;
        } else if (!mcdc_source_identity_same(&first, &id)) {
            char a[700], b[700];
            mcdc_error_set(MCDC_EINVAL, "%s and %s are tables of different sources: %s holds %s, "
                           "%s holds %s", tables[at], tables[i], tables[at],
                           mcdc_source_identity_text(a, sizeof a, &first), tables[i],
                           mcdc_source_identity_text(b, sizeof b, &id));
            return mcdc_error_hint("a consistent cut is of one database's tables (LSNs of two "
                                   "databases are unrelated): list only tables streamed from one "
                                   "source, and cut each database on its own");
        }
    }
    return 0;
}

/* ---- the facts, pruned by stats ------------------------------------------------------- */

/* What a facts file's stats say: which listed tables it may hold, whether it holds batch
 * rows only, and its newest end_lsn. */
typedef struct facts_file {
    size_t   index;      /* in snap->files */
    bool     batch_only; /* every row's event is NULL, and max_end is known */
    mcdc_lsn max_end;
} facts_file;

static bool may_hold(const char *tmin, const char *tmax, const char *t)
{
    if (tmin && strcmp(t, tmin) < 0)
        return false;
    if (tmax && strcmp(t, tmax) > 0 &&
        !(strlen(tmax) >= STRING_STATS_PREFIX_CHARS && !strncmp(t, tmax, strlen(tmax))))
        return false;
    return true;
}

/* From a file's stats: whether it may hold a row of a listed table (@p holds[i] per table),
 * and whether it holds batch rows only with a known newest end_lsn. */
static bool classify(const char *stats, const char *const *tables, size_t n, bool *holds,
                     facts_file *f)
{
    json_t *o = stats ? json_loads(stats, 0, NULL) : NULL;
    json_t *mins = json_object_get(o, "minValues"), *maxs = json_object_get(o, "maxValues");
    const char *tmin = json_string_value(json_object_get(mins, "target"));
    const char *tmax = json_string_value(json_object_get(maxs, "target"));
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any |= (holds[i] = !o || may_hold(tmin, tmax, tables[i]));
    json_t *rows = json_object_get(o, "numRecords");
    json_t *nulls = json_object_get(json_object_get(o, "nullCount"), "event");
    const char *emax = json_string_value(json_object_get(maxs, "end_lsn"));
    f->batch_only = json_is_integer(rows) && json_is_integer(nulls) &&
                    json_integer_value(rows) == json_integer_value(nulls) && emax &&
                    strlen(emax) == MCDC_LSN_STRLEN - 1 && mcdc_lsn_parse(&f->max_end, emax) == 0;
    if (!f->batch_only)
        mcdc_error_clear();
    json_decref(o);
    return any;
}

static int by_max_end_desc(const void *pa, const void *pb)
{
    const facts_file *a = pa, *b = pb;
    return -mcdc_lsn_cmp(&a->max_end, &b->max_end);
}

/* Scan @p n files of @p snap (indices @p idx) and fold their rows of the listed tables. */
static int scan_files(const mcdc_delta_snapshot *snap, const char *facts_path, const size_t *idx,
                      size_t n, const char *const *tables, size_t n_tables, table_state *st)
{
    if (!n)
        return 0;
    mcdc_delta_file *files = calloc(n, sizeof *files);
    if (!files)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        files[i] = snap->files[idx[i]];
    mcdc_delta_snapshot view = *snap; /* the same table, only these files */
    view.files = files;
    view.n_files = n;
    static const char *const cols[N_C] = { "target", "event", "end_lsn", "end_commit_ts",
                                           "detail", "lost_from_ts" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = N_C;
    mcdc_delta_scan *sc = NULL;
    int rc = mcdc_delta_scan_open(&sc, &view, &so);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_EINVAL, "%s is not a facts table (a column is missing)", facts_path);
        rc = mcdc_error_hint("give the facts table the streams write (stream --facts)");
    }
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        if (r[C_TARGET].is_null)
            continue;
        for (size_t i = 0; i < n_tables; i++)
            if (str_is(&r[C_TARGET], tables[i])) {
                take_row(&st[i], r);
                break;
            }
    }
    mcdc_delta_scan_free(sc);
    free(files);
    return rc < 0 ? rc : 0;
}

/* Every row of the listed tables that can change the cut: all files that may hold an event
 * row of one, then the batch-only files newest end first, each read only while it may
 * raise the end of a table it may hold. */
static int read_facts(mcdc_cut *out, const mcdc_delta_snapshot *snap, const char *facts_path,
                      const char *const *tables, size_t n_tables, table_state *st)
{
    size_t n = snap->n_files;
    size_t *must = calloc(n ? n : 1, sizeof *must);
    facts_file *cand = calloc(n ? n : 1, sizeof *cand);
    bool *holds = calloc(n_tables * (n ? n : 1), sizeof *holds);
    if (!must || !cand || !holds) {
        free(must);
        free(cand);
        free(holds);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    size_t n_must = 0, n_cand = 0;
    for (size_t i = 0; i < n; i++) {
        facts_file f = { .index = i };
        if (!classify(snap->files[i].stats, tables, n_tables, &holds[i * n_tables], &f))
            continue;
        if (f.batch_only)
            cand[n_cand++] = f;
        else
            must[n_must++] = i;
    }
    int rc = scan_files(snap, facts_path, must, n_must, tables, n_tables, st);
    size_t n_read = n_must;
    if (n_cand > 1)
        qsort(cand, n_cand, sizeof *cand, by_max_end_desc);
    for (size_t c = 0; rc == 0 && c < n_cand; c++) {
        const bool *h = &holds[cand[c].index * n_tables];
        bool need = false;
        for (size_t i = 0; i < n_tables && !need; i++)
            need = h[i] && (!st[i].has_end || mcdc_lsn_cmp(&cand[c].max_end, &st[i].end) > 0);
        if (!need)
            continue;
        rc = scan_files(snap, facts_path, &cand[c].index, 1, tables, n_tables, st);
        n_read++;
    }
    out->n_facts_files = n;
    out->n_facts_files_read = n_read;
    mcdc_log(MCDC_LOG_DEBUG, "cut", "%s: read %zu of %zu facts files (the rest pruned by their "
             "stats)", facts_path, n_read, n);
    free(must);
    free(cand);
    free(holds);
    return rc;
}

int mcdc_finalize_cut(mcdc_cut *out, const char *control_path, const char *facts_path,
                      const char *const *tables, const char *const *table_paths, size_t n_tables)
{
    MCDC_ASSERT_ARG(out && control_path && facts_path && tables && n_tables > 0);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n_tables; i++) {
        for (size_t k = 0; k < i; k++)
            if (!strcmp(tables[i], tables[k])) {
                mcdc_error_set(MCDC_EINVAL, "table %s is listed twice", tables[i]);
                return mcdc_error_hint("name each table once");
            }
        mcdc_control_row row;
        int rc = mcdc_control_get(&row, control_path, tables[i]);
        if (rc == MCDC_ENOTFOUND) {
            mcdc_error_set(MCDC_EINVAL, "the control table has no row for %s", tables[i]);
            return mcdc_error_hint("list the tables the streams write (their --target), "
                                   "once each has committed a batch and been advanced");
        }
        if (rc < 0)
            return rc;
        mcdc_control_row_clear(&row);
    }
    bool *unidentified = calloc(n_tables, sizeof *unidentified);
    if (!unidentified)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = table_paths ? check_sources(tables, table_paths, n_tables, unidentified) : 0;
    if (rc < 0) {
        free(unidentified);
        return rc;
    }
    table_state *st = calloc(n_tables, sizeof *st);
    if (!st) {
        free(unidentified);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    mcdc_delta_snapshot *snap = NULL;
    rc = mcdc_delta_snapshot_open(&snap, facts_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_EINVAL, "facts table %s does not exist", facts_path);
        mcdc_error_hint("give the facts table the streams write (stream --facts)");
        rc = MCDC_EINVAL;
    }
    if (rc == 0)
        rc = read_facts(out, snap, facts_path, tables, n_tables, st);
    mcdc_delta_snapshot_free(snap);

    /* L: the smallest end; every table must hold a batch and a complete state */
    size_t at = 0;
    for (size_t i = 0; rc == 0 && i < n_tables; i++) {
        if (!st[i].has_end) {
            mcdc_error_set(MCDC_EINVAL, "the facts hold no batch of %s", tables[i]);
            rc = mcdc_error_hint("run its stream (with this --facts table) until it has committed a batch");
        } else if (st[i].has_open && (!st[i].has_done || mcdc_lsn_cmp(&st[i].done_S, &st[i].open_S) < 0)) {
            mcdc_error_set(MCDC_EINVAL, "%s has a chunked snapshot still open: it has no "
                           "complete state yet", tables[i]);
            rc = mcdc_error_hint("finish it with mssql-cdc backfill, then cut again");
        } else if (mcdc_lsn_cmp(&st[i].end, &st[at].end) < 0) {
            at = i;
        }
    }
    if (rc == 0) {
        out->lsn = st[at].end;
        out->has_commit_ts = st[at].has_end_ts;
        out->commit_ts_us = st[at].end_ts_us;
        out->lossless = true;
    }
    for (size_t i = 0; rc == 0 && i < n_tables; i++) {
        if (st[i].has_floor && mcdc_lsn_cmp(&out->lsn, &st[i].floor) < 0) {
            char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
            mcdc_error_set(MCDC_EINVAL, "no consistent cut: %s holds nothing before %s (its %s), "
                           "but %s is complete only up to %s", tables[i],
                           mcdc_lsn_format(a, &st[i].floor),
                           !strcmp(st[i].floor_why, "stream_started") ? "stream started there"
                                                                       : st[i].floor_why,
                           tables[at], mcdc_lsn_format(b, &out->lsn));
            rc = mcdc_error_hint("let %s's stream catch up past that LSN, then cut again", tables[at]);
        }
        if (rc == 0 && st[i].has_hole && mcdc_lsn_cmp(&out->lsn, &st[i].hole_from) >= 0 &&
            mcdc_lsn_cmp(&out->lsn, &st[i].hole_to) < 0) {
            char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN], c[MCDC_LSN_STRLEN];
            mcdc_error_set(MCDC_EINVAL, "no consistent cut: %s was re-snapshotted from %s and is "
                           "consistent only from %s, but %s is complete only up to %s", tables[i],
                           mcdc_lsn_format(a, &st[i].hole_from), mcdc_lsn_format(b, &st[i].hole_to),
                           tables[at], mcdc_lsn_format(c, &out->lsn));
            rc = mcdc_error_hint("let %s's stream catch up past that LSN, then cut again", tables[at]);
        }
        if (st[i].has_gap && mcdc_lsn_cmp(&st[i].gap_from, &out->lsn) <= 0)
            out->lossless = false;
        /* known by time only: the commit at lost_from_ts may be the last one read or one
         * after it at the same millisecond, so that time itself counts as inside */
        if (st[i].has_gap_ts && (!out->has_commit_ts || out->commit_ts_us >= st[i].gap_from_ts))
            out->lossless = false;
    }
    if (rc == 0) {
        if (!(out->ends = calloc(n_tables, sizeof *out->ends))) {
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        } else {
            out->n_tables = n_tables;
            for (size_t i = 0; i < n_tables; i++)
                out->ends[i] = st[i].end;
            out->unidentified = unidentified;
            unidentified = NULL;
        }
    }
    free(unidentified);
    free(st);
    return rc < 0 ? rc : 0;
}

void mcdc_cut_clear(mcdc_cut *c)
{
    if (!c)
        return;
    free(c->ends);
    free(c->unidentified);
    memset(c, 0, sizeof *c);
}
