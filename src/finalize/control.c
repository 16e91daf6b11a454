/*
 * finalize/control.c: the control table on Delta: one row per table, one data file per
 * row, each advance a copy-on-write of one row (docs/decisions/0002-control-table-one-
 * file-per-row.md; columns: architecture §5, anchor-features §2.6).
 *
 * Invariants:
 * (K1) Every file this module adds holds exactly one row; its add action carries stats
 *      (numRecords 1, min = max = the row, full table_name) and the tag
 *      "mcdc.control_row" (the row as JSON, exact), so reads need only the log.
 * (K2) An advance declares the read predicate table_name = <key> and removes only the
 *      files holding that key: advances of different tables never conflict; two of the
 *      same table do, and the loser rebuilds from a fresh snapshot (two first advances
 *      end with one row).
 * (K3) The new row is computed from the snapshot it commits on; a candidate that does not
 *      move the verdict commits nothing. The verdict never moves backwards.
 * (K4) Data files are fsynced before the commit names them. A file of an attempt that
 *      lost a conflict is deleted; the file of a commit that failed for another reason
 *      is left for vacuum (the commit may have landed).
 * (K5) The first advance of a new control table creates it; concurrent first advances
 *      all succeed (one creates, the others take it and conflict as in K2), never
 *      "table not found".
 * Files written by other engines (no tag, maybe several rows) are read through their
 * Parquet data; rewriting their key moves every other row of the file to a file of its
 * own.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/failpoint.h"
#include "mcdc/finalize.h"
#include "mcdc/log.h"
#include "mcdc/parquet.h"
#include "mcdc/storage.h"

#include "finalize/control_file.h"

#define LOGGER "finalization"
#define SCHEMA_VERSION "4"
#define CHECKPOINT_INTERVAL "10"
#define TOMBSTONE_RETENTION "interval 1 hour"

enum {
    C_TABLE_NAME = 0,
    C_FINALIZED_UNTIL,
    C_END_LSN,
    C_END_COMMIT_TS,
    C_UPDATED_AT,
    C_APPLIED_LSN,
    C_SNAPSHOT_LSN,
    C_OPEN_SNAPSHOT_LSN,
    C_SNAPSHOT_WAVE,
    N_COLS
};

static const struct {
    const char  *name;
    mcdc_type_id type;
} COLS[N_COLS] = {
    { "table_name", MCDC_TYPE_STRING },
    { "finalized_until", MCDC_TYPE_TIMESTAMP_NTZ },
    { "end_lsn", MCDC_TYPE_STRING },
    { "end_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ },
    { "updated_at", MCDC_TYPE_TIMESTAMP_NTZ },
    { "applied_lsn", MCDC_TYPE_STRING },
    { "snapshot_lsn", MCDC_TYPE_STRING },
    { "open_snapshot_lsn", MCDC_TYPE_STRING },
    { "snapshot_wave", MCDC_TYPE_INT },
};

static pthread_once_t schema_once = PTHREAD_ONCE_INIT;
static mcdc_schema *control_schema;

static void build_schema(void)
{
    mcdc_schema *s = mcdc_schema_new();
    for (int i = 0; s && i < N_COLS; i++) {
        if (mcdc_schema_add(s, COLS[i].name, COLS[i].type, 0, 0, true) < 0) {
            mcdc_schema_free(s);
            s = NULL;
        }
    }
    control_schema = s;
}

const mcdc_schema *mcdc_control_schema(void)
{
    pthread_once(&schema_once, build_schema);
    return control_schema;
}

void mcdc_control_row_clear(mcdc_control_row *r)
{
    if (!r)
        return;
    free(r->table_name);
    free(r->applied_lsn);
    free(r->snapshot_lsn);
    free(r->open_snapshot_lsn);
    memset(r, 0, sizeof *r);
}

void mcdc_control_rows_free(mcdc_control_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        mcdc_control_row_clear(&rows[i]);
    free(rows);
}

static int row_copy(mcdc_control_row *out, const mcdc_control_row *in)
{
    *out = *in;
    out->table_name = in->table_name ? strdup(in->table_name) : NULL;
    out->applied_lsn = in->applied_lsn ? strdup(in->applied_lsn) : NULL;
    out->snapshot_lsn = in->snapshot_lsn ? strdup(in->snapshot_lsn) : NULL;
    out->open_snapshot_lsn = in->open_snapshot_lsn ? strdup(in->open_snapshot_lsn) : NULL;
    if ((in->table_name && !out->table_name) || (in->applied_lsn && !out->applied_lsn) ||
        (in->snapshot_lsn && !out->snapshot_lsn) ||
        (in->open_snapshot_lsn && !out->open_snapshot_lsn)) {
        mcdc_control_row_clear(out);
        return mcdc_error_set(MCDC_ENOMEM, "control row: out of memory");
    }
    return 0;
}

static void str_value(mcdc_value *v, const char *s)
{
    v->is_null = s == NULL;
    if (s) {
        v->v.s.ptr = s;
        v->v.s.len = strlen(s);
    }
}

static void ts_value(mcdc_value *v, bool has, int64_t us)
{
    v->is_null = !has;
    v->v.i = us;
}

int mcdc_control_row_values(const mcdc_control_row *r, mcdc_value out[MCDC_CONTROL_NCOLS],
                            char lsn_buf[MCDC_LSN_STRLEN])
{
    memset(out, 0, sizeof(mcdc_value) * N_COLS);
    str_value(&out[C_TABLE_NAME], r->table_name);
    ts_value(&out[C_FINALIZED_UNTIL], r->finalized_until.has, r->finalized_until.until_us);
    str_value(&out[C_END_LSN], r->has_end_lsn ? mcdc_lsn_format(lsn_buf, &r->end_lsn) : NULL);
    ts_value(&out[C_END_COMMIT_TS], r->has_end_commit_ts, r->end_commit_ts_us);
    ts_value(&out[C_UPDATED_AT], r->has_updated_at, r->updated_at_us);
    str_value(&out[C_APPLIED_LSN], r->applied_lsn);
    str_value(&out[C_SNAPSHOT_LSN], r->snapshot_lsn);
    str_value(&out[C_OPEN_SNAPSHOT_LSN], r->open_snapshot_lsn);
    out[C_SNAPSHOT_WAVE].is_null = !r->has_snapshot_wave;
    out[C_SNAPSHOT_WAVE].v.i = r->snapshot_wave;
    return 0;
}

int mcdc_control_row_to_json(mcdc_buf *out, const mcdc_control_row *r)
{
    const mcdc_schema *s = mcdc_control_schema();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "control schema: out of memory");
    mcdc_value v[N_COLS];
    char lsn[MCDC_LSN_STRLEN];
    mcdc_control_row_values(r, v, lsn);
    int rc = mcdc_buf_put(out, "{", 1);
    for (int i = 0; rc == 0 && i < N_COLS; i++) {
        if (i)
            rc = mcdc_buf_put(out, ",", 1);
        if (rc == 0)
            rc = mcdc_json_quote(out, COLS[i].name, strlen(COLS[i].name));
        if (rc == 0)
            rc = mcdc_buf_put(out, ":", 1);
        if (rc == 0)
            rc = mcdc_value_to_json(out, &s->cols[i], &v[i]);
    }
    if (rc == 0)
        rc = mcdc_buf_put(out, "}", 1);
    return rc;
}

/* ---- Reading rows ------------------------------------------------------------------- */

static int dup_str(char **out, const char *s)
{
    *out = NULL;
    if (!s)
        return 0;
    *out = strdup(s);
    return *out ? 0 : mcdc_error_set(MCDC_ENOMEM, "control row: out of memory");
}

/* A row from the JSON object of the tag (or of a Parquet row read as JSON). */
static int row_from_json(mcdc_control_row *out, json_t *o, const char *where)
{
    mcdc_control_row r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    for (int i = 0; i < N_COLS && rc == 0; i++) {
        json_t *v = json_object_get(o, COLS[i].name);
        if (!v || json_is_null(v))
            continue;
        if (COLS[i].type == MCDC_TYPE_INT) {
            if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
                json_integer_value(v) > INT32_MAX) {
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: %s is not an int", where, COLS[i].name);
                break;
            }
            r.has_snapshot_wave = true;
            r.snapshot_wave = (int32_t)json_integer_value(v);
            continue;
        }
        const char *s = json_string_value(v);
        if (!s) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: %s is not a string", where, COLS[i].name);
            break;
        }
        int64_t us = 0;
        if (COLS[i].type == MCDC_TYPE_TIMESTAMP_NTZ && mcdc_time_parse(&us, s) < 0) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: %s '%.40s' is not a timestamp", where,
                                COLS[i].name, s);
            break;
        }
        switch (i) {
        case C_TABLE_NAME: rc = dup_str(&r.table_name, s); break;
        case C_FINALIZED_UNTIL: r.finalized_until.has = true; r.finalized_until.until_us = us; break;
        case C_END_LSN:
            if (mcdc_lsn_parse(&r.end_lsn, s) < 0)
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: end_lsn '%.40s' is not an LSN", where, s);
            r.has_end_lsn = rc == 0;
            break;
        case C_END_COMMIT_TS: r.has_end_commit_ts = true; r.end_commit_ts_us = us; break;
        case C_UPDATED_AT: r.has_updated_at = true; r.updated_at_us = us; break;
        case C_APPLIED_LSN: rc = dup_str(&r.applied_lsn, s); break;
        case C_SNAPSHOT_LSN: rc = dup_str(&r.snapshot_lsn, s); break;
        case C_OPEN_SNAPSHOT_LSN: rc = dup_str(&r.open_snapshot_lsn, s); break;
        default: break;
        }
    }
    if (rc == 0 && !r.table_name)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: a row without table_name", where);
    if (rc < 0) {
        mcdc_control_row_clear(&r);
        return rc;
    }
    *out = r;
    return 0;
}

/* Rows of one file of a snapshot, appended to *rows (grown as needed). */
typedef struct row_list {
    mcdc_control_row *a;
    size_t            n, cap;
} row_list;

static int list_push(row_list *l, mcdc_control_row *r)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        mcdc_control_row *a = realloc(l->a, cap * sizeof *a);
        if (!a) {
            mcdc_control_row_clear(r);
            return mcdc_error_set(MCDC_ENOMEM, "control rows: out of memory");
        }
        l->a = a;
        l->cap = cap;
    }
    l->a[l->n++] = *r;
    memset(r, 0, sizeof *r);
    return 0;
}

static void list_free(row_list *l)
{
    mcdc_control_rows_free(l->a, l->n);
    memset(l, 0, sizeof *l);
}

static int file_rows(row_list *out, const mcdc_delta_snapshot *snap, const mcdc_delta_file *f)
{
    const char *tag = mcdc_delta_map_get(&f->tags, MCDC_CONTROL_ROW_TAG, NULL);
    char where[600];
    snprintf(where, sizeof where, "%s: control file %.400s", snap->table_path, f->path);
    if (tag) {
        json_error_t jerr;
        json_t *o = json_loads(tag, 0, &jerr);
        if (!json_is_object(o)) {
            json_decref(o);
            return mcdc_error_set(MCDC_ECORRUPT, "%s: tag %s is not a JSON object", where,
                                  MCDC_CONTROL_ROW_TAG);
        }
        mcdc_control_row r;
        int rc = row_from_json(&r, o, where);
        json_decref(o);
        if (rc == 0)
            rc = list_push(out, &r);
        return rc;
    }
    /* Written by another engine: read its Parquet data. */
    char *abs = mcdc_delta_file_abspath(snap, f->path);
    if (!abs)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", where);
    mcdc_parquet_reader *rd = NULL;
    int rc = mcdc_parquet_reader_open(&rd, abs, NULL);
    free(abs);
    while (rc == 0) {
        json_t *o = NULL;
        rc = mcdc_parquet_reader_next_json(rd, &o);
        if (rc <= 0)
            break;
        mcdc_control_row r;
        rc = row_from_json(&r, o, where);
        json_decref(o);
        if (rc == 0)
            rc = list_push(out, &r);
    }
    mcdc_parquet_reader_free(rd);
    return rc < 0 ? rc : 0;
}

/* Check that a table's schema has the control columns with their types. */
static int check_schema(const mcdc_delta_snapshot *snap)
{
    const char *kind = mcdc_delta_snapshot_config(snap, "mcdc.kind", NULL);
    if (kind && strcmp(kind, "control") != 0) {
        mcdc_error_set(MCDC_EINVAL, "%s: is a %s table, not a control table", snap->table_path,
                       kind);
        return mcdc_error_hint("give the control table's name, or a new name to create one");
    }
    for (int i = 0; i < N_COLS; i++) {
        int k = mcdc_delta_schema_find(snap->schema, COLS[i].name);
        const mcdc_delta_field *f = k >= 0 ? &snap->schema->fields[k] : NULL;
        if (!f) {
            mcdc_error_set(MCDC_EINVAL, "%s: not a control table: no column %s",
                           snap->table_path, COLS[i].name);
            return mcdc_error_hint("give the control table's name, or a new name to create one");
        }
        if (f->type.kind != MCDC_DELTA_TYPE_PRIMITIVE || f->type.prim.type != COLS[i].type)
            return mcdc_error_set(MCDC_EINVAL, "%s: not a control table: column %s has another type",
                                  snap->table_path, COLS[i].name);
    }
    return 0;
}

static int cmp_rows(const void *a, const void *b)
{
    return strcmp(((const mcdc_control_row *)a)->table_name,
                  ((const mcdc_control_row *)b)->table_name);
}

static int snapshot_rows(row_list *out, const mcdc_delta_snapshot *snap)
{
    int rc = check_schema(snap);
    for (size_t i = 0; rc == 0 && i < snap->n_files; i++)
        rc = file_rows(out, snap, &snap->files[i]);
    if (rc < 0)
        list_free(out);
    return rc;
}

static int open_control(mcdc_delta_snapshot **snap, const char *path)
{
    int rc = mcdc_delta_snapshot_open(snap, path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_ENOTFOUND, "control table %s does not exist", path);
        mcdc_error_hint("check the name; the table is created by the first advance");
    }
    return rc;
}

int mcdc_control_read_all(mcdc_control_row **rows, size_t *n_out, const char *path)
{
    MCDC_ASSERT_ARG(rows && n_out && path);
    *rows = NULL;
    *n_out = 0;
    mcdc_delta_snapshot *snap = NULL;
    int rc = open_control(&snap, path);
    if (rc < 0)
        return rc;
    row_list l = { 0 };
    rc = snapshot_rows(&l, snap);
    mcdc_delta_snapshot_free(snap);
    if (rc < 0)
        return rc;
    if (l.n > 1)
        qsort(l.a, l.n, sizeof *l.a, cmp_rows);
    *rows = l.a;
    *n_out = l.n;
    return 0;
}

/* The row of @p key among @p l (duplicates from foreign writes: the newest verdict). */
static const mcdc_control_row *find_row(const row_list *l, const char *key)
{
    const mcdc_control_row *best = NULL;
    for (size_t i = 0; i < l->n; i++) {
        const mcdc_control_row *r = &l->a[i];
        if (strcmp(r->table_name, key) != 0)
            continue;
        if (!best || (r->finalized_until.has &&
                      (!best->finalized_until.has ||
                       r->finalized_until.until_us > best->finalized_until.until_us)))
            best = r;
    }
    return best;
}

/* The hint of a missing row: the rows that exist (sorted, at most 20 named), since the
 * usual cause is a typo or a path given where the name was used. */
static void hint_rows(row_list *l)
{
    char names[400] = "";
    size_t used = 0, n_named = 0;
    bool more = false;
    if (l->n > 1)
        qsort(l->a, l->n, sizeof *l->a, cmp_rows);
    for (size_t i = 0; i < l->n && !more; i++) {
        if (i && !strcmp(l->a[i].table_name, l->a[i - 1].table_name))
            continue; /* a duplicate from a foreign write */
        if (n_named == 20) {
            more = true;
            break;
        }
        int w = snprintf(names + used, sizeof names - used, "%s%s", n_named ? ", " : "", l->a[i].table_name);
        if (w < 0 || (size_t)w >= sizeof names - used) {
            names[used] = '\0';
            more = true;
            break;
        }
        used += (size_t)w;
        n_named++;
    }
    if (l->n == 0)
        mcdc_error_hint("the control table has no rows yet: a table's first advance creates its row");
    else
        mcdc_error_hint("rows are keyed by the exact name given to advance (a name and a path are "
                        "different rows); the rows: %s%s", names, more ? ", ..." : "");
}

int mcdc_control_get(mcdc_control_row *out, const char *path, const char *table_name)
{
    MCDC_ASSERT_ARG(out && path && table_name);
    memset(out, 0, sizeof *out);
    mcdc_delta_snapshot *snap = NULL;
    int rc = open_control(&snap, path);
    if (rc < 0)
        return rc;
    row_list l = { 0 };
    rc = snapshot_rows(&l, snap);
    mcdc_delta_snapshot_free(snap);
    if (rc < 0)
        return rc;
    const mcdc_control_row *r = find_row(&l, table_name);
    if (!r) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "control table %s has no row for '%.300s'", path,
                            table_name);
        hint_rows(&l);
    } else {
        rc = row_copy(out, r);
    }
    list_free(&l);
    return rc;
}

int mcdc_control_finalized_until(mcdc_verdict *out, const char *path, const char *table_name)
{
    mcdc_control_row r;
    int rc = mcdc_control_get(&r, path, table_name);
    if (rc < 0)
        return rc;
    *out = r.finalized_until;
    mcdc_control_row_clear(&r);
    return 0;
}

int mcdc_control_is_final(bool *out, const char *path, const char *table_name,
                          int64_t period_end_us)
{
    mcdc_verdict v;
    int rc = mcdc_control_finalized_until(&v, path, table_name);
    if (rc < 0)
        return rc;
    *out = mcdc_finalize_covers(&v, period_end_us);
    return 0;
}

/* ---- Creating ----------------------------------------------------------------------- */

int mcdc_control_check(const char *path)
{
    MCDC_ASSERT_ARG(path);
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc == 0)
        rc = check_schema(snap);
    mcdc_delta_snapshot_free(snap);
    return rc;
}

int mcdc_control_ensure(const char *path, bool *created)
{
    MCDC_ASSERT_ARG(path);
    if (created)
        *created = false;
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc == 0) {
        rc = check_schema(snap);
        mcdc_delta_snapshot_free(snap);
        return rc;
    }
    if (rc != MCDC_ENOTFOUND)
        return rc;
    mcdc_error_clear();
    const mcdc_schema *s = mcdc_control_schema();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "control schema: out of memory");
    mcdc_delta_map conf = { 0 };
    rc = mcdc_delta_map_set(&conf, "mcdc.kind", "control");
    if (rc == 0)
        rc = mcdc_delta_map_set(&conf, "mcdc.schema_version", SCHEMA_VERSION);
    if (rc == 0) /* bound log replay: every read replays at most 10 JSON commits */
        rc = mcdc_delta_map_set(&conf, "delta.checkpointInterval", CHECKPOINT_INTERVAL);
    if (rc == 0) /* each advance leaves a tombstone: keep them out of checkpoints soon */
        rc = mcdc_delta_map_set(&conf, "delta.deletedFileRetentionDuration", TOMBSTONE_RETENTION);
    if (rc == 0)
        rc = mcdc_delta_map_set(&conf, "comment",
                                "completeness verdict per CDC-fed table, one row per table; "
                                "gate on finalized_until");
    mcdc_delta_commit_result res;
    memset(&res, 0, sizeof res);
    if (rc == 0)
        rc = mcdc_delta_create(path, s, NULL, 0, &conf, &res);
    mcdc_delta_map_clear(&conf);
    if (rc == MCDC_EEXISTS)
        return mcdc_error_prefix("control table %s", path);
    if (rc == 0 && created)
        *created = res.version == 0 && !res.already_committed;
    return rc;
}

/* ---- Advancing ---------------------------------------------------------------------- */

typedef struct adv_ctx {
    const char            *path;
    const char            *key;
    mcdc_control_mutate_fn mutate;
    void                  *payload;
    bool                   noop;    /* the last build found nothing to change */
    mcdc_verdict           verdict; /* the row's verdict after the last build */
    char                 **written; /* data files written by builds, absolute paths */
    size_t                 n_written;
    size_t                 last_build_first; /* index in written of the last build's first file */
} adv_ctx;

static int remember_file(adv_ctx *c, const char *abs)
{
    char **a = realloc(c->written, (c->n_written + 1) * sizeof *a);
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "control: out of memory");
    c->written = a;
    a[c->n_written] = strdup(abs);
    if (!a[c->n_written])
        return mcdc_error_set(MCDC_ENOMEM, "control: out of memory");
    c->n_written++;
    return 0;
}

/* Delete the data files of builds before the last one (they lost a conflict and are
 * named by no commit); with @p all, the last build's too (it committed nothing). (K4) */
static void drop_orphans(adv_ctx *c, bool all)
{
    size_t upto = all ? c->n_written : c->last_build_first;
    for (size_t i = 0; i < upto; i++)
        if (mcdc_storage_delete(c->written[i]) < 0)
            mcdc_error_clear(); /* debris for vacuum */
    for (size_t i = 0; i < c->n_written; i++)
        free(c->written[i]);
    free(c->written);
    c->written = NULL;
    c->n_written = 0;
}

static int push_action(mcdc_delta_action **actions, size_t *n, mcdc_delta_action *a)
{
    mcdc_delta_action *arr = realloc(*actions, (*n + 1) * sizeof *arr);
    if (!arr) {
        mcdc_delta_action_clear(a);
        return mcdc_error_set(MCDC_ENOMEM, "control: out of memory");
    }
    *actions = arr;
    arr[(*n)++] = *a;
    memset(a, 0, sizeof *a);
    return 0;
}

/* Write one row to a new data file and append its add action. (K1) */
static int add_row(adv_ctx *c, const mcdc_control_row *r, int64_t now_ms,
                   mcdc_delta_action **actions, size_t *n)
{
    mcdc_delta_action a;
    memset(&a, 0, sizeof a);
    a.kind = MCDC_DELTA_ACTION_ADD;
    char abs[4096];
    int rc = mcdc_control__write_row_file(&a.u.file, abs, sizeof abs, c->path, r, now_ms);
    if (rc == 0)
        rc = remember_file(c, abs);
    if (rc == 0)
        mcdc_failpoint("finalize.control.file_written");
    if (rc == 0)
        rc = push_action(actions, n, &a);
    else
        mcdc_delta_action_clear(&a);
    return rc;
}

static int remove_file(const mcdc_delta_file *f, int64_t now_ms, mcdc_delta_action **actions,
                       size_t *n)
{
    mcdc_delta_action a;
    memset(&a, 0, sizeof a);
    a.kind = MCDC_DELTA_ACTION_REMOVE;
    int rc = mcdc_delta_file_copy(&a.u.file, f);
    if (rc < 0)
        return rc;
    a.u.file.deletion_timestamp = now_ms;
    a.u.file.modification_time = -1;
    a.u.file.data_change = true;
    a.u.file.extended_file_metadata = true;
    free(a.u.file.stats);
    a.u.file.stats = NULL;
    mcdc_delta_map_clear(&a.u.file.tags);
    return push_action(actions, n, &a);
}

static bool newer_verdict(const mcdc_control_row *r, const mcdc_control_row *than)
{
    return r->finalized_until.has &&
           (!than->finalized_until.has || r->finalized_until.until_us > than->finalized_until.until_us);
}

/* Whether @p tag (a file's row as this module writes it: the JSON object, table_name
 * first) holds another table's row than @p key, known without parsing it: its table_name
 * is a string without escapes, so its bytes are the name, and they differ from the key's.
 * Any other form (escapes, another order, no tag) says false: the file is read. An advance
 * of one of 50 tables parsed the 49 others' rows every time (O(tables) a commit). */
static bool tag_holds_other(const char *tag, const char *key)
{
    static const char head[] = "{\"table_name\":\"";
    if (!tag || strncmp(tag, head, sizeof head - 1) != 0)
        return false;
    const char *v = tag + sizeof head - 1, *q = v;
    while (*q && *q != '"' && *q != '\\')
        q++;
    if (*q != '"')
        return false;
    size_t n = strlen(key);
    return (size_t)(q - v) != n || memcmp(v, key, n) != 0;
}

/* The Delta build callback: read the key's row from @p snap, let the caller change it,
 * and emit remove(old files) + add(new file). (K2, K3) */
static int build_update(const mcdc_delta_snapshot *snap, mcdc_delta_action **actions,
                        size_t *n_actions, void *payload)
{
    adv_ctx *c = payload;
    c->last_build_first = c->n_written;
    c->noop = false;
    int rc = check_schema(snap);
    if (rc < 0)
        return rc;
    int64_t now_ms = mcdc_time_now_us() / 1000;
    mcdc_control_row base;
    memset(&base, 0, sizeof base);
    bool have_base = false;
    /* Files holding the key: every row of them is read; the key's rows are replaced, the
     * others (foreign multi-row files) are moved to files of their own. */
    row_list keep = { 0 };
    size_t *hits = NULL, n_hits = 0;
    for (size_t i = 0; rc == 0 && i < snap->n_files; i++) {
        if (tag_holds_other(mcdc_delta_map_get(&snap->files[i].tags, MCDC_CONTROL_ROW_TAG, NULL), c->key))
            continue; /* another table's row: neither replaced nor moved */
        row_list rows = { 0 };
        rc = file_rows(&rows, snap, &snap->files[i]);
        if (rc < 0)
            break;
        bool hit = false;
        for (size_t k = 0; k < rows.n; k++)
            if (strcmp(rows.a[k].table_name, c->key) == 0)
                hit = true;
        if (hit) {
            size_t *h = realloc(hits, (n_hits + 1) * sizeof *h);
            if (!h) {
                rc = mcdc_error_set(MCDC_ENOMEM, "control: out of memory");
                list_free(&rows);
                break;
            }
            hits = h;
            hits[n_hits++] = i;
            for (size_t k = 0; rc == 0 && k < rows.n; k++) {
                mcdc_control_row *r = &rows.a[k];
                if (strcmp(r->table_name, c->key) != 0) {
                    rc = list_push(&keep, r);
                } else if (!have_base || newer_verdict(r, &base)) {
                    mcdc_control_row_clear(&base);
                    base = *r;
                    memset(r, 0, sizeof *r);
                    have_base = true;
                }
            }
        }
        list_free(&rows);
    }
    if (rc < 0)
        goto done;
    if (!have_base && (rc = dup_str(&base.table_name, c->key)) < 0)
        goto done;
    rc = c->mutate(&base, have_base, c->payload);
    c->verdict = base.finalized_until;
    if (rc == MCDC_EALREADY && n_hits <= 1 && keep.n == 0) {
        c->noop = true; /* nothing to change, and the row is already alone in its file */
        goto done;      /* MCDC_EALREADY stops the commit; mcdc_control_update knows it */
    }
    if (rc < 0 && rc != MCDC_EALREADY)
        goto done;
    mcdc_error_clear();
    rc = 0;
    if (!base.table_name || strcmp(base.table_name, c->key) != 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "control update: the key of a row cannot change");
        goto done;
    }
    for (size_t i = 0; rc == 0 && i < n_hits; i++)
        rc = remove_file(&snap->files[hits[i]], now_ms, actions, n_actions);
    if (rc == 0)
        rc = add_row(c, &base, now_ms, actions, n_actions);
    for (size_t i = 0; rc == 0 && i < keep.n; i++)
        rc = add_row(c, &keep.a[i], now_ms, actions, n_actions);
done:
    free(hits);
    list_free(&keep);
    mcdc_control_row_clear(&base);
    return rc;
}

int mcdc_control_update(const char *path, const char *table_name, mcdc_control_mutate_fn fn,
                        void *payload, mcdc_advance_result *out)
{
    MCDC_ASSERT_ARG(path && fn);
    mcdc_advance_result res;
    memset(&res, 0, sizeof res);
    if (out)
        *out = res;
    if (!table_name || !*table_name)
        return mcdc_error_set(MCDC_EINVAL, "control: empty table name");
    int rc;
    adv_ctx c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.key = table_name;
    c.mutate = fn;
    c.payload = payload;

    mcdc_delta_commit_options opts = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    opts.operation = "MCDC CONTROL UPDATE";
    opts.read_pred.op = MCDC_DELTA_PRED_EQ;
    opts.read_pred.column = "table_name";
    opts.read_pred.value.is_null = false;
    opts.read_pred.value.v.s.ptr = table_name;
    opts.read_pred.value.v.s.len = strlen(table_name);
    mcdc_delta_commit_result cr;
    memset(&cr, 0, sizeof cr);
    rc = mcdc_delta_commit(path, build_update, &c, &opts, &cr);
    if (rc == MCDC_ENOTFOUND) {
        /* (K5) first use: create the table, or take the one a concurrent first writer
         * created since the commit looked, then commit again. No second look decides
         * whether the table was missing: a writer that creates it between the two looks
         * would turn this race into a "no such table" (exit 2). An ENOTFOUND of a data
         * file comes back from the second commit unchanged. */
        mcdc_failpoint("finalize.control.first_use");
        mcdc_error_clear();
        rc = mcdc_control_ensure(path, &res.created);
        if (rc == 0)
            rc = mcdc_delta_commit(path, build_update, &c, &opts, &cr);
    }
    res.n_conflicts = cr.n_conflicts;
    res.n_rebases = cr.n_rebases;
    res.version = cr.version;
    res.verdict = c.verdict;
    if (rc == MCDC_EALREADY && c.noop) {
        mcdc_error_clear();
        drop_orphans(&c, true);
        rc = 0;
    } else if (rc == 0) {
        mcdc_failpoint("finalize.control.committed");
        drop_orphans(&c, false);
        res.wrote = true;
    } else {
        /* The commit may have landed (an I/O error after the link): keep the last
         * build's file for vacuum, drop the earlier ones. */
        drop_orphans(&c, false);
    }
    if (out)
        *out = res;
    return rc;
}

/* Advance: move finalized_until to the candidate when that is forward. */
typedef struct adv_args {
    const mcdc_offset *end;
    int64_t            candidate;
    int64_t            now_us;
} adv_args;

static int mutate_advance(mcdc_control_row *row, bool exists, void *payload)
{
    const adv_args *a = payload;
    (void)exists;
    if (!mcdc_finalize_moves(&row->finalized_until, a->candidate))
        return MCDC_EALREADY; /* K3: never backwards, nothing written */
    row->finalized_until.has = true;
    row->finalized_until.until_us = a->candidate;
    row->has_end_lsn = true;
    row->end_lsn = a->end->lsn;
    row->has_end_commit_ts = true;
    row->end_commit_ts_us = a->end->commit_ts_us;
    row->has_updated_at = true;
    row->updated_at_us = a->now_us;
    return 0;
}

int mcdc_control_advance(const char *path, const char *table_name, const mcdc_offset *end,
                         mcdc_granularity g, mcdc_advance_result *out)
{
    MCDC_ASSERT_ARG(path && end);
    if (out)
        memset(out, 0, sizeof *out);
    if (!table_name || !*table_name)
        return mcdc_error_set(MCDC_EINVAL, "advance: empty table name");
    adv_args a = { end, 0, mcdc_time_now_us() };
    int rc = mcdc_finalize_candidate(&a.candidate, end, g);
    if (rc == MCDC_ENOTFOUND)
        return mcdc_error_set(MCDC_EINVAL, "advance %.300s: the end offset has no commit time",
                              table_name);
    if (rc < 0)
        return rc;
    mcdc_advance_result r;
    rc = mcdc_control_update(path, table_name, mutate_advance, &a, &r);
    if (out)
        *out = r;
    if (rc == 0 && r.wrote) {
        char when[MCDC_TIME_STRLEN];
        mcdc_log(MCDC_LOG_DEBUG, LOGGER, "verdict of %s moved to %s (version %lld)", table_name,
                 mcdc_time_format(when, r.verdict.until_us, 0, false), (long long)r.version);
    }
    return rc;
}

int mcdc_control_store_advance(void *payload, const mcdc_offset *end, mcdc_granularity g,
                               mcdc_verdict *out)
{
    mcdc_control_target *t = payload;
    mcdc_advance_result r;
    int rc = mcdc_control_advance(t->path, t->table_name, end, g, &r);
    if (rc < 0)
        return rc;
    t->last = r;
    *out = r.verdict;
    return 0;
}

int mcdc_control_track(mcdc_tracker **out, mcdc_control_target *target, const char *run_id,
                       const mcdc_tracker_options *opts, const mcdc_offset *seed)
{
    MCDC_ASSERT_ARG(out && target && target->path);
    *out = NULL;
    if (!target->table_name || !*target->table_name)
        return mcdc_error_set(MCDC_EINVAL, "tracker: empty table name");
    int rc = mcdc_control_ensure(target->path, NULL);
    if (rc < 0)
        return rc;
    mcdc_tracker_options o = MCDC_TRACKER_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (!o.table_name)
        o.table_name = target->table_name;
    mcdc_finalize_store store = { mcdc_control_store_advance, target };
    rc = mcdc_tracker_start(out, &store, run_id, &o);
    if (rc == 0 && seed)
        mcdc_tracker_seed(*out, seed);
    return rc;
}
