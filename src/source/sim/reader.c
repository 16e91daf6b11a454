/*
 * source/sim/reader.c: the source interface (mcdc/source.h) over a simulator database.
 *
 * Reads see only what capture processed, like SQL Server's change tables. read_changes goes
 * in pages of page_rows rows (each page its own SQLite read), so a cleanup can run between two
 * pages of one read: rows it already deleted are simply not returned. Commit times are
 * tran_end_time (server local, 1/300 s) converted to UTC by the LSN-order sequencer of
 * core/tz, seeded from the mapping entry at least 3 hours before the range, so the
 * fall-back hour is corrected and times never go backwards along LSNs; commit_times.c keeps
 * the converted entries between calls, so a question costs O(log n).
 * Snapshot key ranges are half-open: key_lo <= key < key_hi (either may be NULL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/log.h"
#include "mcdc/time.h"
#include "source/sim/commit_times.h"


typedef struct sim_source {
    mcdc_source        base;
    mcdc_sim          *sim;
    int64_t            page_rows;
    mcdc_sim_page_hook hook;
    void              *hook_payload;
    sim_commit_times   ct;      /* commit times, indexed between calls (commit_times.c) */
    bool               loaded;  /* the catalog and state were loaded at data_version: */
    int64_t            data_version;
} sim_source;

/* The catalog and state as the database holds them now. The source's connection is
 * read-only, so when SQLite's data_version (changed by every commit of another
 * connection) has not moved since the last load, what was loaded still holds: a table
 * of many capture instances is not read again at every operation. */
static int refresh(sim_source *src)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sim__stmt(src->sim, "PRAGMA data_version", "reading the data version", &st) == 0) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sim__stmt_done(src->sim, st);
    } else {
        mcdc_error_clear(); /* the catalog is loaded again */
    }
    if (src->loaded && v >= 0 && v == src->data_version)
        return 0;
    int rc = sim__load(src->sim);
    src->loaded = rc == 0 && v >= 0;
    src->data_version = v;
    return rc;
}

static sim_instance *find_ci(sim_source *src, const char *ci)
{
    sim_instance *i = sim__find_instance(src->sim, ci);
    if (!i)
        mcdc_error_set(MCDC_ENOTFOUND, "capture instance '%s' does not exist in %s", ci, src->sim->path);
    return i;
}

static sim_table *table_of(mcdc_sim *s, const sim_instance *ci)
{
    for (int i = 0; i < s->n_tables; i++)
        if (s->tables[i]->id == ci->table_id)
            return s->tables[i];
    return NULL;
}

/* Capture instance @p ci_name and its source table, after a refresh of the catalog.
 * @return 0; MCDC_ENOTFOUND for an unknown instance or one without its table. */
static int source_table_of(sim_source *src, const char *ci_name, sim_instance **ci_out,
                           sim_table **out)
{
    int rc = refresh(src);
    if (rc < 0) return rc;
    sim_instance *ci = find_ci(src, ci_name);
    if (!ci) return MCDC_ENOTFOUND;
    *ci_out = ci;
    if (!(*out = table_of(src->sim, ci)))
        return mcdc_error_set(MCDC_ENOTFOUND, "capture instance %s has no source table", ci_name);
    return 0;
}

static int commit_ts_of(sim_source *src, const mcdc_lsn *lsn, int64_t *out_us)
{
    return sim__ct_commit_ts(&src->ct, lsn, out_us);
}

/* ---- operations ---------------------------------------------------------------------------- */

static int op_max_lsn(mcdc_source *b, mcdc_lsn *out)
{
    sim_source *src = (sim_source *)b;
    mcdc_log(MCDC_LOG_DEBUG, "sim", "query: max_lsn"); /* counted by tests of the shared poll */
    int rc = refresh(src);
    return rc < 0 ? rc : sim__max_lsn(src->sim, out, NULL);
}

static int op_min_lsn(mcdc_source *b, const char *ci, mcdc_lsn *out)
{
    sim_source *src = (sim_source *)b;
    int rc = refresh(src);
    if (rc < 0) return rc;
    sim_instance *i = find_ci(src, ci);
    if (!i) return MCDC_ENOTFOUND;
    *out = mcdc_lsn_cmp(&i->start_lsn, &src->sim->st.processed) <= 0 ? i->start_lsn : mcdc_lsn_zero();
    return 0;
}

static int op_lsn_to_commit_ts(mcdc_source *b, const mcdc_lsn *lsn, int64_t *out_us)
{
    sim_source *src = (sim_source *)b;
    int rc = refresh(src);
    if (rc < 0) return rc;
    if (mcdc_lsn_cmp(lsn, &src->sim->st.processed) > 0) {
        char l[MCDC_LSN_STRLEN];
        return mcdc_error_set(MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry has start_lsn %s", mcdc_lsn_format(l, lsn));
    }
    return commit_ts_of(src, lsn, out_us);
}

static int op_nth_commit_after(mcdc_source *b, const mcdc_lsn *after, int64_t n, mcdc_lsn *out, int64_t *out_ts,
                               int64_t *found)
{
    sim_source *src = (sim_source *)b;
    mcdc_sim *s = src->sim;
    int rc = refresh(src);
    if (rc < 0) return rc;
    *found = 0;
    if (n < 1) return mcdc_error_set(MCDC_EINVAL, "nth_commit_after: n must be at least 1 (got %lld)", (long long)n);
    return sim__ct_nth_after(&src->ct, after, &s->st.processed, n, out, out_ts, found);
}

static int op_server_now(mcdc_source *b, int64_t *out_us)
{
    sim_source *src = (sim_source *)b;
    int rc = refresh(src);
    if (rc < 0) return rc;
    *out_us = src->sim->st.clock_us;
    return 0;
}

/* Copy table @p tb's capture instances to the end of @p a (at index *n). */
static int copy_instances(sim_source *src, const sim_table *tb, mcdc_capture_instance *a, size_t *n)
{
    for (int i = 0; i < tb->n_inst; i++) {
        sim_instance *ci = tb->inst[i];
        mcdc_capture_instance *e = &a[(*n)++];
        e->name = strdup(ci->name);
        e->source_schema = strdup(tb->schema);
        e->source_table = strdup(tb->name);
        e->start_lsn = mcdc_lsn_cmp(&ci->start_lsn, &src->sim->st.processed) <= 0 ? ci->start_lsn : mcdc_lsn_zero();
        e->enable_lsn = ci->start_lsn;
        e->create_ts_us = ci->create_us;
        if (!e->name || !e->source_schema || !e->source_table)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    return 0;
}

static int op_capture_instances(mcdc_source *b, const char *table, mcdc_capture_instance **out, size_t *n_out)
{
    sim_source *src = (sim_source *)b;
    char schema[129], name[129];
    *out = NULL;
    *n_out = 0;
    int rc = table ? sim_parse_table_name(table, schema, name) : 0;
    if (rc < 0 || (rc = refresh(src)) < 0) return rc;
    sim_table *tb = NULL;
    size_t cap = 1;
    if (table) {
        tb = sim__find_table(src->sim, schema, name);
        if (!tb) return mcdc_error_set(MCDC_ENOTFOUND, "table %s.%s does not exist in %s", schema, name, src->sim->path);
        cap += (size_t)tb->n_inst;
    } else {
        for (int t = 0; t < src->sim->n_tables; t++)
            cap += (size_t)src->sim->tables[t]->n_inst;
    }
    mcdc_capture_instance *a = calloc(cap, sizeof *a);
    if (!a) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    size_t n = 0;
    if (tb)
        rc = copy_instances(src, tb, a, &n);
    for (int t = 0; !tb && rc == 0 && t < src->sim->n_tables; t++)
        rc = copy_instances(src, src->sim->tables[t], a, &n);
    if (rc < 0) {
        mcdc_capture_instances_free(a, n);
        return rc;
    }
    *out = a;
    *n_out = n;
    return 0;
}

static int op_captured_columns(mcdc_source *b, const char *ci_name, mcdc_schema **out)
{
    sim_source *src = (sim_source *)b;
    *out = NULL;
    int rc = refresh(src);
    if (rc < 0) return rc;
    sim_instance *ci = find_ci(src, ci_name);
    if (!ci) return MCDC_ENOTFOUND;
    sim_table *tb = table_of(src->sim, ci);
    mcdc_schema *sc = mcdc_schema_new();
    if (!sc) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int k = 0; k < ci->n_cols; k++) {
        mcdc_column c = {0};
        sim_type_to_column(&c, &ci->cols[k].type);
        bool nullable = true;
        for (int i = 0; tb && i < tb->n_cols; i++)
            if (tb->cols[i].column_id == ci->cols[k].column_id && !tb->cols[i].dropped)
                nullable = tb->cols[i].nullable;
        if ((rc = mcdc_schema_add(sc, ci->cols[k].name, c.type, c.precision, c.scale, nullable)) < 0) {
            mcdc_schema_free(sc);
            return rc;
        }
    }
    *out = sc;
    return 0;
}

static int op_key_columns(mcdc_source *b, const char *ci_name, char ***out, size_t *n_out)
{
    sim_source *src = (sim_source *)b;
    *out = NULL;
    *n_out = 0;
    int rc = refresh(src);
    if (rc < 0) return rc;
    sim_instance *ci = find_ci(src, ci_name);
    if (!ci) return MCDC_ENOTFOUND;
    sim_table *tb = table_of(src->sim, ci);
    char **a = calloc((size_t)(tb ? tb->n_keys : 0) + 1, sizeof *a);
    if (!a) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int k = 0; tb && k < tb->n_keys; k++) {
        if (!(a[k] = strdup(tb->cols[tb->keys[k]].name))) {
            for (int j = 0; j < k; j++) free(a[j]);
            free(a);
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        }
    }
    *out = a;
    *n_out = tb ? (size_t)tb->n_keys : 0;
    return 0;
}

static int op_ddl_history(mcdc_source *b, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                          mcdc_ddl_entry **out, size_t *n_out)
{
    sim_source *src = (sim_source *)b;
    mcdc_sim *s = src->sim;
    *out = NULL;
    *n_out = 0;
    int rc = refresh(src);
    if (rc < 0) return rc;
    sim_instance *ci = find_ci(src, ci_name);
    if (!ci) return MCDC_ENOTFOUND;
    const mcdc_lsn *hi = mcdc_lsn_cmp(upto, &s->st.processed) < 0 ? upto : &s->st.processed;
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(s->db, "SELECT ddl_lsn, ddl_time_us, ddl_command, column_name FROM sim_ddl WHERE"
                            " instance_id = ? AND ddl_lsn > ? AND ddl_lsn <= ? ORDER BY ddl_lsn", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "reading DDL history");
    sqlite3_bind_int64(st, 1, ci->id);
    sim__bind_lsn(st, 2, after);
    sim__bind_lsn(st, 3, hi);
    size_t n = 0, cap = 0;
    mcdc_ddl_entry *a = NULL;
    rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            mcdc_ddl_entry *na = realloc(a, cap * sizeof *na);
            if (!na) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            a = na;
        }
        memset(&a[n], 0, sizeof a[n]);
        sim__column_lsn(st, 0, &a[n].ddl_lsn);
        a[n].ddl_time_us = mcdc_time_truncate(sqlite3_column_int64(st, 1), MCDC_GRAN_MINUTE);
        a[n].ddl_command = strdup((const char *)sqlite3_column_text(st, 2));
        if (sqlite3_column_type(st, 3) != SQLITE_NULL) a[n].column_name = strdup((const char *)sqlite3_column_text(st, 3));
        n++;
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        mcdc_ddl_entries_free(a, n);
        return rc;
    }
    *out = a;
    *n_out = n;
    return 0;
}

/* The smallest rowid of sim_ct_<id> whose start_lsn is above @p after, or -1 (S1). */
static int first_rowid_after(mcdc_sim *s, int64_t id, const mcdc_lsn *after, int64_t *out)
{
    char sql[160];
    sqlite3_stmt *bounds, *probe;
    *out = -1;
    /* two queries: SQLite answers min(rowid) or max(rowid) alone from the b-tree's ends,
     * but both in one statement scans the whole change table (every batch paid a scan) */
    int rc;
    int64_t lo = 0, hi = -1;
    for (int end = 0; end < 2; end++) {
        snprintf(sql, sizeof sql, "SELECT %s(rowid) FROM sim_ct_%lld", end ? "max" : "min", (long long)id);
        if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &bounds, NULL)) != SQLITE_OK)
            return sim__sqlite_error(s, rc, "reading changes");
        if (sqlite3_step(bounds) == SQLITE_ROW && sqlite3_column_type(bounds, 0) != SQLITE_NULL)
            *(end ? &hi : &lo) = sqlite3_column_int64(bounds, 0);
        sqlite3_finalize(bounds);
    }
    if (hi < lo) return 0;
    snprintf(sql, sizeof sql, "SELECT rowid, \"__$start_lsn\" FROM sim_ct_%lld WHERE rowid >= ? ORDER BY rowid LIMIT 1",
             (long long)id);
    if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &probe, NULL)) != SQLITE_OK) return sim__sqlite_error(s, rc, "reading changes");
    /* invariant: every row below lo is at or below after; the answer, if any, is in [lo, hi] */
    int64_t found = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        sqlite3_reset(probe);
        sqlite3_bind_int64(probe, 1, mid);
        if (sqlite3_step(probe) != SQLITE_ROW) { hi = mid - 1; continue; }
        int64_t rid = sqlite3_column_int64(probe, 0);
        mcdc_lsn l;
        sim__column_lsn(probe, 1, &l);
        if (mcdc_lsn_cmp(&l, after) > 0) {
            found = rid;
            hi = mid - 1;
        } else {
            lo = rid + 1;
        }
    }
    sqlite3_finalize(probe);
    *out = found;
    return 0;
}

static int op_read_changes(mcdc_source *b, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                           mcdc_change_cb cb, void *payload)
{
    sim_source *src = (sim_source *)b;
    mcdc_sim *s = src->sim;
    int rc = refresh(src);
    if (rc < 0) return rc;
    sim_instance *ci = find_ci(src, ci_name);
    if (!ci) return MCDC_ENOTFOUND;
    int64_t ci_id = ci->id;
    char ci_copy[128];
    snprintf(ci_copy, sizeof ci_copy, "%s", ci->name);
    mcdc_lsn hi = mcdc_lsn_cmp(upto, &s->st.processed) < 0 ? *upto : s->st.processed;
    if (mcdc_lsn_cmp(after, &hi) >= 0) return 0;
    sim_ct_read rd;
    if ((rc = sim__ct_read_begin(&src->ct, &rd, after)) < 0) return rc;
    /* the first row past after: rowid order is read order (S1), so a binary search over rowids
     * finds it without an index on __$start_lsn */
    int64_t next_rowid;
    if ((rc = first_rowid_after(s, ci_id, after, &next_rowid)) < 0) return rc;
    if (next_rowid < 0) return 0;
    sqlite3_stmt *st;
    int page = 0;
    for (;;) {
        /* the instance may have been disabled between pages */
        if (page > 0) {
            if ((rc = refresh(src)) < 0) return rc;
            ci = sim__find_instance(s, ci_copy);
            if (!ci || ci->id != ci_id) return 0;
        }
        sim_arena a = {0};
        mcdc_buf q = MCDC_BUF_INIT(1 << 20);
        mcdc_buf_puts(&q, "SELECT rowid, \"__$start_lsn\", \"__$seqval\", \"__$operation\", \"__$update_mask\", \"__$command_id\"");
        for (int k = 0; k < ci->n_cols; k++) mcdc_buf_printf(&q, ", c%d", ci->cols[k].ordinal);
        mcdc_buf_printf(&q, " FROM sim_ct_%lld WHERE rowid >= ? ORDER BY rowid LIMIT ?", (long long)ci_id);
        rc = sqlite3_prepare_v2(s->db, q.ptr, -1, &st, NULL);
        mcdc_buf_dispose(&q);
        if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "reading changes");
        sqlite3_bind_int64(st, 1, next_rowid);
        sqlite3_bind_int64(st, 2, src->page_rows);
        /* collect the page, then release the read before calling back */
        mcdc_change *rows = NULL;
        size_t n = 0, cap = 0;
        bool past_end = false;
        int64_t stepped = 0;
        while (rc == 0) {
            if (sqlite3_step(st) != SQLITE_ROW) break;
            stepped++;
            mcdc_lsn lsn;
            sim__column_lsn(st, 1, &lsn);
            next_rowid = sqlite3_column_int64(st, 0) + 1;
            if (mcdc_lsn_cmp(&lsn, &hi) > 0) { past_end = true; break; }
            if (mcdc_lsn_cmp(&lsn, after) <= 0) continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                mcdc_change *nr = realloc(rows, cap * sizeof *nr);
                if (!nr) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
                rows = nr;
            }
            mcdc_change *c = &rows[n];
            memset(c, 0, sizeof *c);
            c->start_lsn = lsn;
            sim__column_lsn(st, 2, &c->seqval);
            c->operation = sqlite3_column_int(st, 3);
            c->update_mask_len = (size_t)sqlite3_column_bytes(st, 4);
            c->update_mask = (const uint8_t *)sim_arena_strndup(&a, sqlite3_column_blob(st, 4) ? sqlite3_column_blob(st, 4) : "",
                                                                c->update_mask_len);
            c->command_id = sqlite3_column_int(st, 5);
            mcdc_value *vals = sim_arena_alloc(&a, (size_t)(ci->n_cols + 1) * sizeof *vals);
            if (!vals || !c->update_mask) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            for (int k = 0; rc == 0 && k < ci->n_cols; k++) {
                sim_val v;
                if ((rc = sim_read_col(st, 6 + k, &ci->cols[k].type, &a, &v)) == 0)
                    rc = sim_to_value(&a, &ci->cols[k].type, &v, &vals[k]);
            }
            c->values = vals;
            n++;
        }
        sqlite3_finalize(st);
        if (rc == 0 && n > 0) {
            size_t n_ok;
            int trc = sim__ct_stamp(&src->ct, &rd, rows, n, &n_ok);
            for (size_t i = 0; rc == 0 && i < n_ok; i++) rc = cb(&rows[i], payload);
            if (rc == 0) rc = trc;
        }
        free(rows);
        sim_arena_free(&a);
        if (rc != 0) return rc;
        if (past_end || stepped < src->page_rows)
            return 0;
        page++;
        if (src->hook) src->hook(page, src->hook_payload);
    }
}

static int encode_key(sim_table *tb, sim_arena *a, const mcdc_value *kv, mcdc_buf *out);

static int op_snapshot(mcdc_source *b, const char *ci_name, const mcdc_value *key_lo, const mcdc_value *key_hi,
                       mcdc_row_cb cb, void *payload)
{
    sim_source *src = (sim_source *)b;
    mcdc_sim *s = src->sim;
    sim_instance *ci = NULL;
    sim_table *tb = NULL;
    int rc = source_table_of(src, ci_name, &ci, &tb);
    if (rc < 0) return rc;
    sim_arena a = {0};
    mcdc_buf lo = MCDC_BUF_INIT(1 << 20), hi = MCDC_BUF_INIT(1 << 20), q = MCDC_BUF_INIT(1 << 20);
    /* key bounds in the order-preserving encoding */
    if (key_lo) rc = encode_key(tb, &a, key_lo, &lo);
    if (rc == 0 && key_hi) rc = encode_key(tb, &a, key_hi, &hi);
    sqlite3_stmt *st = NULL;
    if (rc == 0) {
        mcdc_buf_puts(&q, "SELECT rowid");
        for (int k = 0; k < tb->n_live; k++) mcdc_buf_printf(&q, ", c%d", tb->cols[tb->live[k]].column_id);
        /* only the bounds given, so SQLite seeks the key index (an "?1 IS NULL OR" walks it all) */
        mcdc_buf_printf(&q, " FROM sim_src_%lld WHERE %s AND %s ORDER BY __key", (long long)tb->id,
                        key_lo ? "__key >= ?1" : "?1 IS NULL", key_hi ? "__key < ?2" : "?2 IS NULL");
        if ((rc = sqlite3_prepare_v2(s->db, q.ptr, -1, &st, NULL)) != SQLITE_OK) rc = sim__sqlite_error(s, rc, "reading a snapshot");
    }
    if (rc == 0) {
        if (key_lo) sqlite3_bind_blob(st, 1, lo.ptr ? lo.ptr : "", (int)lo.len, SQLITE_STATIC);
        if (key_hi) sqlite3_bind_blob(st, 2, hi.ptr ? hi.ptr : "", (int)hi.len, SQLITE_STATIC);
        sim_val *row = calloc((size_t)tb->n_cols + 1, sizeof *row);
        mcdc_value *vals = calloc((size_t)ci->n_cols + 1, sizeof *vals);
        if (!row || !vals) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
            sim_arena ra = {0};
            rc = sim__read_row(s, tb, st, 1, &ra, row);
            for (int k = 0; rc == 0 && k < ci->n_cols; k++) {
                int idx = -1;
                for (int i = 0; i < tb->n_cols; i++)
                    if (tb->cols[i].column_id == ci->cols[k].column_id) idx = i;
                sim_val v = {0};
                if (idx >= 0 && !tb->cols[idx].dropped) v = row[idx];
                rc = sim_to_value(&ra, &ci->cols[k].type, &v, &vals[k]);
            }
            if (rc == 0) rc = cb(vals, payload);
            sim_arena_free(&ra);
        }
        free(row);
        free(vals);
    }
    sqlite3_finalize(st);
    mcdc_buf_dispose(&lo);
    mcdc_buf_dispose(&hi);
    mcdc_buf_dispose(&q);
    sim_arena_free(&a);
    return rc;
}

/* @p kv (key_columns() order) in the order-preserving key encoding of the __key column. */
static int encode_key(sim_table *tb, sim_arena *a, const mcdc_value *kv, mcdc_buf *out)
{
    int rc = 0;
    for (int k = 0; rc == 0 && k < tb->n_keys; k++) {
        sim_val v;
        const sim_type *ty = &tb->cols[tb->keys[k]].type;
        if ((rc = sim_from_value(a, ty, &kv[k], &v)) == 0) rc = sim_key_append(out, ty, &v);
    }
    return rc;
}

/* Keyset planning: the key of the row @p n places after @p from (inclusive; NULL: the
 * first or last key) in key order, one index seek and a walk of n index entries. */
static int op_key_at(mcdc_source *b, const char *ci_name, const mcdc_value *from, int64_t n, bool descending,
                     mcdc_row_cb cb, void *payload)
{
    sim_source *src = (sim_source *)b;
    mcdc_sim *s = src->sim;
    sim_instance *ci = NULL;
    sim_table *tb = NULL;
    int rc = source_table_of(src, ci_name, &ci, &tb);
    if (rc < 0) return rc;
    if (n < 0) return mcdc_error_set(MCDC_EINVAL, "key_at: n must not be negative");
    sim_arena a = {0};
    mcdc_buf lo = MCDC_BUF_INIT(1 << 20), q = MCDC_BUF_INIT(1 << 16);
    if (from) rc = encode_key(tb, &a, from, &lo);
    sqlite3_stmt *st = NULL;
    if (rc == 0) {
        mcdc_buf_puts(&q, "SELECT rowid");
        for (int k = 0; k < tb->n_live; k++) mcdc_buf_printf(&q, ", c%d", tb->cols[tb->live[k]].column_id);
        mcdc_buf_printf(&q, " FROM sim_src_%lld WHERE %s ORDER BY __key %s LIMIT 1 OFFSET ?2",
                        (long long)tb->id, !from ? "?1 IS NULL" : descending ? "__key <= ?1" : "__key >= ?1",
                        descending ? "DESC" : "ASC");
        if ((rc = sqlite3_prepare_v2(s->db, q.ptr, -1, &st, NULL)) != SQLITE_OK) rc = sim__sqlite_error(s, rc, "seeking a key");
    }
    if (rc == 0) {
        if (from) sqlite3_bind_blob(st, 1, lo.ptr ? lo.ptr : "", (int)lo.len, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, n);
        if (sqlite3_step(st) == SQLITE_ROW) {
            sim_val *row = sim_arena_alloc(&a, ((size_t)tb->n_cols + 1) * sizeof *row);
            mcdc_value *vals = sim_arena_alloc(&a, ((size_t)tb->n_keys + 1) * sizeof *vals);
            if (!row || !vals) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            if (rc == 0) rc = sim__read_row(s, tb, st, 1, &a, row);
            for (int k = 0; rc == 0 && k < tb->n_keys; k++)
                rc = sim_to_value(&a, &tb->cols[tb->keys[k]].type, &row[tb->keys[k]], &vals[k]);
            if (rc == 0) rc = cb(vals, payload);
        }
    }
    sqlite3_finalize(st);
    mcdc_buf_dispose(&lo);
    mcdc_buf_dispose(&q);
    sim_arena_free(&a);
    return rc;
}

/* Grid planning: rows with key_lo <= key < key_hi (NULL: open), counted on the key index. */
static int op_key_count(mcdc_source *b, const char *ci_name, const mcdc_value *key_lo, const mcdc_value *key_hi,
                        int64_t *out)
{
    sim_source *src = (sim_source *)b;
    mcdc_sim *s = src->sim;
    *out = 0;
    sim_instance *ci = NULL;
    sim_table *tb = NULL;
    int rc = source_table_of(src, ci_name, &ci, &tb);
    if (rc < 0) return rc;
    sim_arena a = {0};
    mcdc_buf lo = MCDC_BUF_INIT(1 << 20), hi = MCDC_BUF_INIT(1 << 20);
    char q[200];
    if (key_lo) rc = encode_key(tb, &a, key_lo, &lo);
    if (rc == 0 && key_hi) rc = encode_key(tb, &a, key_hi, &hi);
    sqlite3_stmt *st = NULL;
    if (rc == 0) {
        snprintf(q, sizeof q, "SELECT count(*) FROM sim_src_%lld WHERE %s AND %s", (long long)tb->id,
                 key_lo ? "__key >= ?1" : "?1 IS NULL", key_hi ? "__key < ?2" : "?2 IS NULL");
        if ((rc = sqlite3_prepare_v2(s->db, q, -1, &st, NULL)) != SQLITE_OK) rc = sim__sqlite_error(s, rc, "counting keys");
    }
    if (rc == 0) {
        if (key_lo) sqlite3_bind_blob(st, 1, lo.ptr ? lo.ptr : "", (int)lo.len, SQLITE_STATIC);
        if (key_hi) sqlite3_bind_blob(st, 2, hi.ptr ? hi.ptr : "", (int)hi.len, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    mcdc_buf_dispose(&lo);
    mcdc_buf_dispose(&hi);
    sim_arena_free(&a);
    return rc;
}

/* fn_cdc_map_time_to_lsn('largest less than or equal', SYSDATETIME()): the newest mapping
 * entry capture processed whose tran_end_time (server local) is at or before the clock's
 * local time. A walk down from the newest entry, which is nearly always the answer. */
static int lsn_at_or_before(sim_source *src, const int64_t *utc_us, mcdc_lsn *out)
{
    mcdc_sim *s = src->sim;
    *out = mcdc_lsn_zero();
    int rc = refresh(src);
    if (rc < 0) return rc;
    char now[32];
    sim__datetime_text(s, utc_us ? *utc_us : s->st.clock_us, now);
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(s->db, "SELECT lsn FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ?1 AND end_time <= ?2"
                            " ORDER BY lsn DESC LIMIT 1", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "mapping the clock to an LSN");
    sim__bind_lsn(st, 1, &s->st.processed);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) sim__column_lsn(st, 0, out);
    sqlite3_finalize(st);
    return 0;
}

static int op_consistent_lsn(mcdc_source *b, mcdc_lsn *out)
{
    return lsn_at_or_before((sim_source *)b, NULL, out);
}

/* fn_cdc_map_time_to_lsn('largest less than or equal', T): as consistent_lsn at T. */
static int op_time_to_lsn(mcdc_source *b, int64_t utc_us, mcdc_lsn *out)
{
    return lsn_at_or_before((sim_source *)b, &utc_us, out);
}

/* The newest mapping entry (sim_tx kinds 1-3) capture processed at or below @p lsn. */
static int op_commit_at_or_before(mcdc_source *b, const mcdc_lsn *lsn, mcdc_lsn *out, int64_t *out_us)
{
    sim_source *src = (sim_source *)b;
    mcdc_sim *s = src->sim;
    int rc = refresh(src);
    if (rc < 0) return rc;
    const mcdc_lsn *upto = mcdc_lsn_cmp(lsn, &s->st.processed) < 0 ? lsn : &s->st.processed;
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(s->db, "SELECT lsn FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ?1 ORDER BY lsn DESC LIMIT 1",
                            -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "finding the commit before an LSN");
    sim__bind_lsn(st, 1, upto);
    bool found = sqlite3_step(st) == SQLITE_ROW;
    if (found) sim__column_lsn(st, 0, out);
    sqlite3_finalize(st);
    if (!found) {
        char l[MCDC_LSN_STRLEN];
        return mcdc_error_set(MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry at or before %s", mcdc_lsn_format(l, lsn));
    }
    return commit_ts_of(src, out, out_us);
}

/* Snapshot reads here are one SQLite read transaction each, in WAL mode: they see the table
 * as of their start (SNAPSHOT isolation, which also gives all READ COMMITTED promises) and
 * never wait for a lock, so either level is honoured and a lock timeout never could be. */
static int op_snapshot_reads(mcdc_source *b, mcdc_isolation isolation, int64_t lock_timeout_ms)
{
    (void)isolation;
    if (lock_timeout_ms >= 0) {
        mcdc_error_set(MCDC_EINVAL, "%s: a lock timeout cannot apply to the simulator: its reads take no "
                       "locks (SQLite WAL readers never wait)", b->description ? b->description : "sim:");
        return mcdc_error_hint("drop the lock timeout for sim: sources; it is for odbc: (SQL Server), where "
                               "the connection string's lockTimeoutMs= sets it too");
    }
    return 0;
}

static const char *op_server_time_zone(mcdc_source *b)
{
    sim_source *src = (sim_source *)b;
    return mcdc_tz_name(src->sim->tz);
}

/* The names `sim serve` answers @@SERVERNAME and DB_NAME() with, and the file's GUID. */
static int op_identity(mcdc_source *b, mcdc_source_identity *out)
{
    sim_source *src = (sim_source *)b;
    int rc = refresh(src);
    if (rc < 0 || (rc = sim__identity_load(src->sim)) < 0) return rc;
    memset(out, 0, sizeof *out);
    snprintf(out->server, sizeof out->server, "%s", SIM_SERVER_NAME);
    snprintf(out->database, sizeof out->database, "%s", src->sim->st.db_name);
    snprintf(out->database_guid, sizeof out->database_guid, "%s", src->sim->st.database_guid);
    return 0;
}

static void op_close(mcdc_source *b)
{
    sim_source *src = (sim_source *)b;
    sim__ct_dispose(&src->ct);
    mcdc_sim_close(src->sim);
    free(src->base.description);
    free(src);
}

/* One call, one round trip: the simulator is in process, its single operations answer. */
static int op_positions(mcdc_source *b, mcdc_positions *q)
{
    return mcdc_source_positions_each(b, q);
}

/* The order of each key column: the simulator keys its tables with mcdc/key_order.h. */
static int op_key_orders(mcdc_source *b, const char *ci_name, mcdc_key_order **out, size_t *n_out)
{
    sim_source *src = (sim_source *)b;
    *out = NULL;
    *n_out = 0;
    int rc = refresh(src);
    if (rc < 0) return rc;
    sim_instance *ci = find_ci(src, ci_name);
    if (!ci) return MCDC_ENOTFOUND;
    sim_table *tb = table_of(src->sim, ci);
    mcdc_key_order *o = calloc((size_t)(tb ? tb->n_keys : 0) + 1, sizeof *o);
    if (!o) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int k = 0; tb && k < tb->n_keys; k++) {
        switch (tb->cols[tb->keys[k]].type.k) {
        case ST_CHAR: case ST_VARCHAR: case ST_NCHAR: case ST_NVARCHAR: case ST_TEXT: case ST_NTEXT:
            o[k] = MCDC_KEY_ORDER_TEXT_CI;
            break;
        case ST_UNIQUEIDENTIFIER: o[k] = MCDC_KEY_ORDER_GUID; break;
        case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: o[k] = MCDC_KEY_ORDER_BYTES; break;
        default: o[k] = MCDC_KEY_ORDER_VALUE;
        }
    }
    *out = o;
    *n_out = tb ? (size_t)tb->n_keys : 0;
    return 0;
}

static const mcdc_source_ops sim_ops = {
    op_max_lsn, op_min_lsn, op_lsn_to_commit_ts, op_nth_commit_after, op_server_now, op_capture_instances,
    op_captured_columns, op_key_columns, op_ddl_history, op_read_changes, op_snapshot, op_server_time_zone, op_close, op_key_at, op_key_count,
    sim__key_buckets, op_consistent_lsn, NULL /* take_warnings */, op_snapshot_reads, op_time_to_lsn,
    op_positions,
    op_identity,
    op_commit_at_or_before,
    op_key_orders,
};

int mcdc_sim_source_open(mcdc_source **out, const char *path)
{
    *out = NULL;
    sim_source *src = calloc(1, sizeof *src);
    if (!src) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = mcdc_sim_open_readonly(&src->sim, path);
    if (rc < 0) {
        free(src);
        return rc;
    }
    src->base.ops = &sim_ops;
    sim__ct_init(&src->ct, src->sim);
    src->base.description = malloc(strlen(path) + 5);
    if (!src->base.description) {
        op_close(&src->base);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    sprintf(src->base.description, "sim:%s", path);
    src->page_rows = 10000;
    *out = &src->base;
    return 0;
}

int mcdc_sim_source_set_paging(mcdc_source *b, int64_t page_rows, mcdc_sim_page_hook between_pages, void *payload)
{
    if (!b || b->ops != &sim_ops)
        return mcdc_error_set(MCDC_EINVAL, "paging settings apply to simulator sources only");
    if (page_rows < 1) return mcdc_error_set(MCDC_EINVAL, "page_rows must be at least 1");
    sim_source *src = (sim_source *)b;
    src->page_rows = page_rows;
    src->hook = between_pages;
    src->hook_payload = payload;
    return 0;
}

int mcdc_sim_source_set_commit_index(mcdc_source *b, bool enabled)
{
    if (!b || b->ops != &sim_ops)
        return mcdc_error_set(MCDC_EINVAL, "commit-time settings apply to simulator sources only");
    sim_source *src = (sim_source *)b;
    sim__ct_use_index(&src->ct, enabled);
    return 0;
}

int64_t mcdc_sim_source_commit_entries_fed(const mcdc_source *b)
{
    if (!b || b->ops != &sim_ops) return -1;
    return ((const sim_source *)b)->ct.n_fed;
}

int64_t mcdc_sim_source_commit_syncs(const mcdc_source *b)
{
    if (!b || b->ops != &sim_ops) return -1;
    return ((const sim_source *)b)->ct.n_synced;
}

int64_t mcdc_sim_source_pages_fetched(const mcdc_source *b)
{
    if (!b || b->ops != &sim_ops) return -1;
    int hit = 0, miss = 0, high;
    sqlite3 *db = ((const sim_source *)b)->sim->db;
    (void)sqlite3_exec(db, "PRAGMA mmap_size=0", NULL, NULL, NULL); /* every page counted */
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_HIT, &hit, &high, 0);
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &high, 0);
    return (int64_t)hit + miss;
}
