/*
 * source/sim/rewind.c: sim rewind: the database as a restore to an earlier LSN leaves it
 * (a restore from backup, or a failover to a replica that lags), to test that readers
 * notice a source that went backwards.
 *
 * Everything logged after LSN L goes: change rows, mapping entries (commits, idle entries),
 * and the source tables' rows return to their state at L, undone change by change from
 * the newest back (an insert is deleted, a delete inserted again, an update set back to
 * its before image), through the table's capture instance that captures the most columns.
 * Capture's progress moves back to L when it was past it. One transaction: it happens
 * whole or not at all.
 *
 * What it will not do (each refused with MCDC_EINVAL, nothing changed): rewind past the
 * enable of a capture instance or a DDL change (the catalog would have to go back too),
 * or below an instance's start_lsn (cleanup already removed what the restore would bring
 * back); restore columns no capture instance captures (they keep their values), text and
 * ntext values of deleted or updated rows (CDC logs them NULL), or rows of tables without
 * a capture instance. The clock and the LSN allocator keep going forward (S2, S3): commits
 * after a rewind get new LSNs above the dropped ones, so an LSN a reader saw before the
 * rewind never names another commit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/sim/sim_int.h"

static int col_index(const sim_table *tb, int column_id)
{
    for (int i = 0; i < tb->n_cols; i++)
        if (tb->cols[i].column_id == column_id) return i;
    return -1;
}

static bool is_lob(const sim_type *ty) { return ty->k == ST_TEXT || ty->k == ST_NTEXT || ty->k == ST_IMAGE; }

/* The first row of @p sql (one LSN parameter ?1) as a count. */
static int count_after(mcdc_sim *s, const char *sql, const mcdc_lsn *to, int64_t *n)
{
    sqlite3_stmt *st;
    *n = 0;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "rewinding");
    sim__bind_lsn(st, 1, to);
    if (sqlite3_step(st) == SQLITE_ROW) *n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int exec_lsn(mcdc_sim *s, const char *sql, const mcdc_lsn *to, int64_t *changed)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "rewinding");
    sim__bind_lsn(st, 1, to);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sim__sqlite_error(s, rc, "rewinding");
    if (changed) *changed += sqlite3_changes(s->db);
    return 0;
}

/* The instance of @p tb that captures the most live columns, key columns included. */
static sim_instance *undo_instance(const sim_table *tb)
{
    sim_instance *best = NULL;
    int best_n = -1;
    for (int k = 0; k < tb->n_inst; k++) {
        sim_instance *ci = tb->inst[k];
        int n = 0, keys = 0;
        for (int c = 0; c < ci->n_cols; c++) {
            int i = col_index(tb, ci->cols[c].column_id);
            if (i < 0 || tb->cols[i].dropped) continue;
            n++;
            for (int j = 0; j < tb->n_keys; j++) keys += tb->keys[j] == i;
        }
        if (keys == tb->n_keys && n > best_n) {
            best = ci;
            best_n = n;
        }
    }
    return best;
}

/* Undo one change row (op, mask, captured values in @p row by table column) on @p tb. */
static int undo_change(mcdc_sim *s, sim_table *tb, const sim_instance *ci, int op, const uint8_t *mask,
                       size_t mask_len, const sim_val *row)
{
    mcdc_buf *key = &s->keybuf;
    if (key->max == 0) key->max = 1 << 20;
    int rc = sim__table_key(tb, row, key);
    if (rc < 0) return rc;
    mcdc_buf sql = MCDC_BUF_INIT(1 << 20);
    int n_set = 0;
    int set_cols[1024];
    for (int c = 0; c < ci->n_cols && n_set < 1024; c++) {
        const sim_captured *cc = &ci->cols[c];
        int i = col_index(tb, cc->column_id);
        if (i < 0 || tb->cols[i].dropped) continue;
        if (op == 3) {
            int o = cc->ordinal - 1;
            bool changed = (size_t)(o / 8) < mask_len &&
                           (mask[mask_len - 1 - (size_t)(o / 8)] >> (o % 8)) & 1u;
            if (!changed || is_lob(&cc->type)) continue; /* unchanged, or logged NULL */
        }
        set_cols[n_set++] = i;
    }
    if (op == 2) {
        mcdc_buf_printf(&sql, "DELETE FROM sim_src_%lld WHERE __key = ?", (long long)tb->id);
    } else if (op == 1) {
        mcdc_buf_printf(&sql, "INSERT INTO sim_src_%lld(__key", (long long)tb->id);
        for (int k = 0; k < n_set; k++) mcdc_buf_printf(&sql, ", c%d", tb->cols[set_cols[k]].column_id);
        mcdc_buf_puts(&sql, ") VALUES(?");
        for (int k = 0; k < n_set; k++) mcdc_buf_puts(&sql, ", ?");
        mcdc_buf_puts(&sql, ")");
    } else if (op == 3 && n_set > 0) {
        mcdc_buf_printf(&sql, "UPDATE sim_src_%lld SET ", (long long)tb->id);
        for (int k = 0; k < n_set; k++)
            mcdc_buf_printf(&sql, "%sc%d = ?", k ? ", " : "", tb->cols[set_cols[k]].column_id);
        mcdc_buf_puts(&sql, " WHERE __key = ?");
    } else {
        return 0; /* an after image: its before image sets the row back */
    }
    if (!sql.ptr) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(s->db, sql.ptr, -1, &st, NULL);
    mcdc_buf_dispose(&sql);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "rewinding a source row");
    int p = 1;
    if (op != 3) sqlite3_bind_blob(st, p++, key->ptr ? key->ptr : "", (int)key->len, SQLITE_STATIC);
    for (int k = 0; op != 2 && k < n_set; k++) sim_bind(st, p++, &tb->cols[set_cols[k]].type, &row[set_cols[k]]);
    if (op == 3) sqlite3_bind_blob(st, p++, key->ptr ? key->ptr : "", (int)key->len, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_CONSTRAINT) return sim__dup_key_error(tb, row);
    return rc == SQLITE_DONE ? 0 : sim__sqlite_error(s, rc, "rewinding a source row");
}

/* Undo the changes of @p tb after @p to, newest first (S1: rowid order is read order). */
static int undo_table(mcdc_sim *s, sim_table *tb, const mcdc_lsn *to, int64_t *n_rows)
{
    if (tb->n_inst == 0) return 0;
    sim_instance *ci = undo_instance(tb);
    if (!ci)
        return mcdc_error_set(MCDC_EINVAL, "%s: no capture instance captures every key column: its rows cannot be "
                              "rewound", tb->full);
    mcdc_buf sql = MCDC_BUF_INIT(1 << 20);
    mcdc_buf_puts(&sql, "SELECT \"__$operation\", \"__$update_mask\"");
    for (int c = 0; c < ci->n_cols; c++) mcdc_buf_printf(&sql, ", c%d", c + 1);
    mcdc_buf_printf(&sql, " FROM sim_ct_%lld WHERE \"__$start_lsn\" > ?1 ORDER BY rowid DESC", (long long)ci->id);
    if (!sql.ptr) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, sql.ptr, -1, &st, NULL);
    mcdc_buf_dispose(&sql);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "rewinding");
    sim__bind_lsn(st, 1, to);
    sim_val *row = calloc((size_t)tb->n_cols + 1, sizeof *row);
    uint8_t *mask = malloc((size_t)ci->n_cols / 8 + 2);
    sim_arena a = { 0 };
    rc = row && mask ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int r;
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        int op = sqlite3_column_int(st, 0);
        size_t mask_len = (size_t)sqlite3_column_bytes(st, 1);
        if (mask_len > (size_t)ci->n_cols / 8 + 2) mask_len = (size_t)ci->n_cols / 8 + 2;
        if (mask_len) memcpy(mask, sqlite3_column_blob(st, 1), mask_len);
        memset(row, 0, ((size_t)tb->n_cols + 1) * sizeof *row);
        sim_arena_reset(&a);
        for (int c = 0; rc == 0 && c < ci->n_cols; c++) {
            int i = col_index(tb, ci->cols[c].column_id);
            if (i >= 0) rc = sim_read_col(st, 2 + c, &ci->cols[c].type, &a, &row[i]);
        }
        if (rc == 0) rc = undo_change(s, tb, ci, op, mask, mask_len, row);
        if (rc == 0) (*n_rows)++;
    }
    if (rc == 0 && r != SQLITE_DONE) rc = sim__sqlite_error(s, r, "rewinding");
    sqlite3_finalize(st);
    sim_arena_free(&a);
    free(mask);
    free(row);
    return rc;
}

int mcdc_sim_rewind(mcdc_sim *s, const mcdc_lsn *to, mcdc_sim_rewind_result *out)
{
    memset(out, 0, sizeof *out);
    int rc = sim__begin(s);
    if (rc < 0) return rc;
    char l[MCDC_LSN_STRLEN], m[MCDC_LSN_STRLEN];
    mcdc_lsn_format(l, to);
    int64_t n;
    char q[128];
    snprintf(q, sizeof q, "SELECT count(*) FROM sim_tx WHERE lsn > ?1 AND kind IN (%d, %d)", TX_ENABLE, TX_DDL);
    if ((rc = count_after(s, q, to, &n)) < 0) goto fail;
    if (n > 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s: a capture instance was enabled or a table altered after %s: a rewind "
                            "cannot take the catalog back", s->path, l);
        mcdc_error_hint("rewind to an LSN after the last sim enable or sim ddl");
        goto fail;
    }
    for (int i = 0; i < s->n_inst; i++) {
        if (mcdc_lsn_cmp(&s->inst[i]->start_lsn, to) > 0) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s: %s starts at %s, after %s: cleanup removed what a restore to %s "
                                "would bring back", s->path, s->inst[i]->name,
                                mcdc_lsn_format(m, &s->inst[i]->start_lsn), l, l);
            mcdc_error_hint("rewind to an LSN at or after the capture instance's start_lsn (sim status shows it)");
            goto fail;
        }
    }
    for (int t = 0; t < s->n_tables; t++)
        if ((rc = undo_table(s, s->tables[t], to, &out->n_source_rows)) < 0) goto fail;
    for (int i = 0; i < s->n_inst; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "DELETE FROM sim_ct_%lld WHERE \"__$start_lsn\" > ?1", (long long)s->inst[i]->id);
        if ((rc = exec_lsn(s, sql, to, &out->n_change_rows)) < 0) goto fail;
    }
    if ((rc = exec_lsn(s, "DELETE FROM sim_tx WHERE lsn > ?1", to, &out->n_mapping_rows)) < 0) goto fail;
    if (mcdc_lsn_cmp(&s->st.processed, to) > 0) s->st.processed = *to;
    if ((rc = sim__commit(s)) < 0) goto fail;
    return sim__max_lsn(s, &out->max_lsn, NULL);
fail:
    sim__rollback(s);
    return rc;
}
