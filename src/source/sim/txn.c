/*
 * source/sim/txn.c: one transaction's writes: source rows and the change rows they log.
 *
 * Each row change gets its own log record LSN (its __$seqval), allocated when the transaction
 * began (S2), so transactions that overlap interleave in seqval. Change rows are kept in memory
 * until commit, when the commit LSN (their __$start_lsn) is known; they are then inserted in
 * (command_id, seqval, operation) order (S1). An insert is op 2, a delete op 1, an update ops 3
 * and 4 sharing seqval and command_id with a mask of the changed captured columns; an update of
 * a key column is a delete and an insert. text/ntext are NULL in ops 1 and 3, and (max) types in
 * op 3 unless they changed, as SQL Server stores them. A transaction that logged no change row
 * gets no commit LSN and no mapping entry.
 *
 * A rowversion (timestamp) column is never written by the user: every insert and every update
 * of a row gives it the next value of the database's counter (@@DBTS, table sim_dbts, starting
 * after 0x7D0 as a new SQL Server database does), 8 big-endian bytes; image, like text and
 * ntext, is NULL in ops 1 and 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/time.h"
#include "source/sim/sim_int.h"

struct sim_change {
    sim_change   *next;
    sim_instance *ci;
    int           op;
    int           command_id;
    mcdc_lsn      seqval;
    uint8_t      *mask;
    size_t        mask_len;
    sim_val      *vals; /* one per captured column */
};

int sim__txn_begin(sim_txn *t, mcdc_sim *s, sim_arena *a, int64_t begin_us, int64_t commit_us)
{
    memset(t, 0, sizeof *t);
    t->s = s;
    t->arena = a;
    t->begin_us = begin_us;
    t->commit_us = commit_us;
    t->retro = sim__lsn_is_past(s, begin_us);
    t->xact = s->st.next_xact++;
    return t->retro ? sim__alloc_retro_lsn(s, begin_us, &t->begin_lsn) : sim__alloc_lsn(s, begin_us, &t->begin_lsn);
}

static int next_seqval(sim_txn *t, mcdc_lsn *out)
{
    return t->retro ? sim__alloc_retro_lsn(t->s, t->begin_us, out) : sim__alloc_lsn(t->s, t->begin_us, out);
}

static int col_index(const sim_table *tb, int column_id)
{
    for (int i = 0; i < tb->n_cols; i++)
        if (tb->cols[i].column_id == column_id)
            return i;
    return -1;
}

static bool is_lob(const sim_type *ty) { return ty->k == ST_TEXT || ty->k == ST_NTEXT || ty->k == ST_IMAGE; }

int sim__next_dbts(mcdc_sim *s, uint64_t *out)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, "CREATE TABLE IF NOT EXISTS sim_dbts(id INTEGER PRIMARY KEY CHECK (id = 1),"
                          " v INTEGER NOT NULL)", NULL, NULL, &msg);
    sqlite3_free(msg);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "creating the rowversion counter");
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(s->db, "INSERT INTO sim_dbts VALUES(1, 2001) ON CONFLICT(id) DO UPDATE SET v = v + 1"
                            " RETURNING v", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "preparing the rowversion counter");
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = (uint64_t)sqlite3_column_int64(st, 0);
    int fin = sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return sim__sqlite_error(s, fin != SQLITE_OK ? fin : rc, "advancing the rowversion counter");
    return 0;
}

/* Give every rowversion column of @p row the counter's next value. */
static int stamp_row(sim_txn *t, sim_table *tb, sim_val *row)
{
    for (int k = 0; k < tb->n_live; k++) {
        int i = tb->live[k];
        if (tb->cols[i].type.k != ST_ROWVERSION) continue;
        uint64_t v = 0;
        int rc = sim__next_dbts(t->s, &v);
        if (rc < 0) return rc;
        char *b = sim_arena_alloc(t->arena, 8);
        if (!b) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (int j = 7; j >= 0; j--, v >>= 8) b[j] = (char)(v & 0xFF);
        memset(&row[i], 0, sizeof row[i]);
        row[i].k = V_BIN;
        row[i].u.s.p = b;
        row[i].u.s.n = 8;
    }
    return 0;
}
static bool is_max(const sim_type *ty)
{
    return ty->len < 0 && (ty->k == ST_VARCHAR || ty->k == ST_NVARCHAR || ty->k == ST_VARBINARY);
}

/* Append a change row of @p ci for @p row (NULL = the before image rules apply by op). */
static int add_change(sim_txn *t, sim_table *tb, sim_instance *ci, int op, const mcdc_lsn *seqval, const sim_val *row,
                      const bool *changed)
{
    sim_change *c = sim_arena_alloc(t->arena, sizeof *c);
    if (!c) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    c->ci = ci;
    c->op = op;
    c->command_id = t->command_id;
    c->seqval = *seqval;
    c->mask_len = ci->n_cols ? (size_t)(ci->n_cols + 7) / 8 : 1;
    c->mask = sim_arena_alloc(t->arena, c->mask_len);
    c->vals = sim_arena_alloc(t->arena, (size_t)(ci->n_cols ? ci->n_cols : 1) * sizeof *c->vals);
    if (!c->mask || !c->vals) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int k = 0; k < ci->n_cols; k++) {
        const sim_captured *cc = &ci->cols[k];
        int i = col_index(tb, cc->column_id);
        bool bit_set = op == 1 || op == 2 || (changed && i >= 0 && changed[i]);
        if (bit_set) {
            int o = cc->ordinal - 1;
            c->mask[c->mask_len - 1 - (size_t)(o / 8)] |= (uint8_t)(1u << (o % 8));
        }
        if (i < 0 || tb->cols[i].dropped) continue; /* NULL */
        const sim_type *ty = &cc->type;
        if ((op == 1 || op == 3) && is_lob(ty)) continue;
        if (op == 3 && is_max(ty) && !(changed && changed[i])) continue;
        c->vals[k] = row[i];
    }
    if (t->last) t->last->next = c;
    else t->changes = c;
    t->last = c;
    t->n_changes++;
    return 0;
}

static int check_enable_order(sim_txn *t, sim_table *tb)
{
    for (int k = 0; k < tb->n_inst; k++)
        if (tb->inst[k]->create_us > t->begin_us) {
            char a[MCDC_TIME_STRLEN], b[MCDC_TIME_STRLEN];
            return mcdc_error_set(MCDC_EINVAL, "a transaction begun at %s cannot change %s: capture instance %s was enabled "
                                  "later, at %s, and SQL Server's enable waits for open transactions on its table",
                                  mcdc_time_format(a, t->begin_us, 3, true), tb->full, tb->inst[k]->name,
                                  mcdc_time_format(b, tb->inst[k]->create_us, 3, true));
        }
    return 0;
}

static int prepare(mcdc_sim *s, sqlite3_stmt **st, const char *sql)
{
    if (*st) {
        sqlite3_reset(*st);
        sqlite3_clear_bindings(*st);
        return 0;
    }
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    return rc == SQLITE_OK ? 0 : sim__sqlite_error(s, rc, "preparing a statement");
}

static int prepare_table(mcdc_sim *s, sim_table *tb, int which)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    int rc;
    sqlite3_stmt **st = which == 0 ? &tb->ins : which == 1 ? &tb->upd : which == 2 ? &tb->del : &tb->get;
    if (*st) return prepare(s, st, NULL);
    switch (which) {
    case 0:
        mcdc_buf_printf(&b, "INSERT INTO sim_src_%lld(__key", (long long)tb->id);
        for (int k = 0; k < tb->n_live; k++) mcdc_buf_printf(&b, ", c%d", tb->cols[tb->live[k]].column_id);
        mcdc_buf_puts(&b, ") VALUES(?");
        for (int k = 0; k < tb->n_live; k++) mcdc_buf_puts(&b, ", ?");
        mcdc_buf_puts(&b, ")");
        break;
    case 1:
        /* only non-key updates come here (key changes are a delete and an insert), so __key
         * and its index stay untouched */
        mcdc_buf_printf(&b, "UPDATE sim_src_%lld SET ", (long long)tb->id);
        for (int k = 0; k < tb->n_live; k++) mcdc_buf_printf(&b, "%sc%d = ?", k ? ", " : "", tb->cols[tb->live[k]].column_id);
        mcdc_buf_puts(&b, " WHERE rowid = ?");
        break;
    case 2:
        mcdc_buf_printf(&b, "DELETE FROM sim_src_%lld WHERE rowid = ?", (long long)tb->id);
        break;
    default:
        mcdc_buf_puts(&b, "SELECT rowid");
        for (int k = 0; k < tb->n_live; k++) mcdc_buf_printf(&b, ", c%d", tb->cols[tb->live[k]].column_id);
        mcdc_buf_printf(&b, " FROM sim_src_%lld WHERE rowid = ?", (long long)tb->id);
        break;
    }
    rc = b.ptr ? prepare(s, st, b.ptr) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_buf_dispose(&b);
    return rc;
}

int sim__read_row(mcdc_sim *s, sim_table *tb, sqlite3_stmt *st, int first_col, sim_arena *a, sim_val *row)
{
    (void)s;
    memset(row, 0, (size_t)tb->n_cols * sizeof *row);
    for (int k = 0; k < tb->n_live; k++) {
        int i = tb->live[k];
        int rc = sim_read_col(st, first_col + k, &tb->cols[i].type, a, &row[i]);
        if (rc < 0) return rc;
    }
    return 0;
}

int sim__dup_key_error(sim_table *tb, const sim_val *row)
{
    mcdc_buf b = MCDC_BUF_INIT(4096);
    for (int k = 0; k < tb->n_keys; k++) {
        if (k) mcdc_buf_puts(&b, ", ");
        sim_val_text(&b, &tb->cols[tb->keys[k]].type, &row[tb->keys[k]]);
    }
    int rc = mcdc_error_set(MCDC_EINVAL, "Msg 2627: Violation of PRIMARY KEY constraint 'PK_%s'. Cannot insert duplicate "
                            "key in object '%s'. The duplicate key value is (%s).", tb->name, tb->full,
                            b.ptr ? b.ptr : "");
    mcdc_buf_dispose(&b);
    return rc;
}

int sim__check_row(sim_txn *t, sim_table *tb, sim_val *row, bool is_insert)
{
    for (int k = 0; k < tb->n_live; k++) {
        int i = tb->live[k];
        if (!tb->cols[i].nullable && row[i].k == V_NULL)
            return mcdc_error_set(MCDC_EINVAL, "Msg 515: Cannot insert the value NULL into column '%s', table '%s.%s'; "
                                  "column does not allow nulls. %s fails.", tb->cols[i].name, t->s->st.db_name, tb->full,
                                  is_insert ? "INSERT" : "UPDATE");
    }
    return 0;
}

static int write_source(sim_txn *t, sim_table *tb, sqlite3_stmt *st, const sim_val *row, int64_t rowid)
{
    /* insert: (__key, columns); update by rowid: (columns, rowid) */
    int first = rowid >= 0 ? 1 : 2, rc;
    if (rowid < 0) {
        mcdc_buf *key = &t->s->keybuf;
        if (key->max == 0) key->max = 1 << 20;
        if ((rc = sim__table_key(tb, row, key)) < 0) return rc;
        sqlite3_bind_blob(st, 1, key->ptr ? key->ptr : "", (int)key->len, SQLITE_STATIC);
    }
    for (int k = 0; k < tb->n_live; k++) {
        int i = tb->live[k];
        sim_bind(st, first + k, &tb->cols[i].type, &row[i]);
    }
    if (rowid >= 0) sqlite3_bind_int64(st, first + tb->n_live, rowid);
    rc = sqlite3_step(st);
    if (rc == SQLITE_CONSTRAINT) rc = sim__dup_key_error(tb, row);
    else rc = rc == SQLITE_DONE ? 0 : sim__sqlite_error(t->s, rc, "writing a source row");
    sqlite3_reset(st);
    return rc;
}

int sim__txn_insert(sim_txn *t, sim_table *tb, sim_val *row)
{
    int rc;
    mcdc_lsn seq;
    if ((rc = check_enable_order(t, tb)) < 0 || (rc = stamp_row(t, tb, row)) < 0 ||
        (rc = sim__check_row(t, tb, row, true)) < 0 ||
        (rc = prepare_table(t->s, tb, 0)) < 0 || (rc = write_source(t, tb, tb->ins, row, -1)) < 0)
        return rc;
    t->n_rows++;
    if ((rc = next_seqval(t, &seq)) < 0) return rc;
    for (int k = 0; k < tb->n_inst; k++)
        if ((rc = add_change(t, tb, tb->inst[k], 2, &seq, row, NULL)) < 0) return rc;
    return 0;
}

int sim__txn_delete(sim_txn *t, sim_table *tb, int64_t rowid, const sim_val *old_row)
{
    int rc;
    mcdc_lsn seq;
    if ((rc = check_enable_order(t, tb)) < 0 || (rc = prepare_table(t->s, tb, 2)) < 0) return rc;
    sqlite3_bind_int64(tb->del, 1, rowid);
    rc = sqlite3_step(tb->del);
    sqlite3_reset(tb->del);
    if (rc != SQLITE_DONE) return sim__sqlite_error(t->s, rc, "deleting a source row");
    t->n_rows++;
    if ((rc = next_seqval(t, &seq)) < 0) return rc;
    for (int k = 0; k < tb->n_inst; k++)
        if ((rc = add_change(t, tb, tb->inst[k], 1, &seq, old_row, NULL)) < 0) return rc;
    return 0;
}

int sim__txn_update(sim_txn *t, sim_table *tb, int64_t rowid, const sim_val *old_row, sim_val *new_row)
{
    int rc;
    if ((rc = check_enable_order(t, tb)) < 0 || (rc = stamp_row(t, tb, new_row)) < 0 ||
        (rc = sim__check_row(t, tb, new_row, false)) < 0)
        return rc;
    bool *changed = sim_arena_alloc(t->arena, (size_t)tb->n_cols + 1);
    if (!changed) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    bool any = false;
    for (int i = 0; i < tb->n_cols; i++) {
        changed[i] = !tb->cols[i].dropped && !sim_same(&old_row[i], &new_row[i]);
        any |= changed[i];
    }
    t->n_rows++;
    if (!any) return 0; /* nothing changed: nothing logged */
    if ((rc = prepare_table(t->s, tb, 1)) < 0 || (rc = write_source(t, tb, tb->upd, new_row, rowid)) < 0) return rc;
    mcdc_lsn seq;
    if ((rc = next_seqval(t, &seq)) < 0) return rc;
    for (int k = 0; k < tb->n_inst; k++) {
        sim_instance *ci = tb->inst[k];
        bool hit = false;
        for (int c = 0; c < ci->n_cols; c++) {
            int i = col_index(tb, ci->cols[c].column_id);
            hit |= i >= 0 && changed[i];
        }
        if (!hit) continue;
        if ((rc = add_change(t, tb, ci, 3, &seq, old_row, changed)) < 0 ||
            (rc = add_change(t, tb, ci, 4, &seq, new_row, changed)) < 0)
            return rc;
    }
    return 0;
}

int sim__txn_update_keys(sim_txn *t, sim_table *tb, int n, const int64_t *rowids, sim_val **old_rows, sim_val **new_rows)
{
    int rc;
    for (int r = 0; r < n; r++)
        if ((rc = stamp_row(t, tb, new_rows[r])) < 0 || (rc = sim__check_row(t, tb, new_rows[r], false)) < 0) return rc;
    for (int r = 0; r < n; r++)
        if ((rc = sim__txn_delete(t, tb, rowids[r], old_rows[r])) < 0) return rc;
    for (int r = 0; r < n; r++) {
        if ((rc = prepare_table(t->s, tb, 0)) < 0 || (rc = write_source(t, tb, tb->ins, new_rows[r], -1)) < 0) return rc;
        mcdc_lsn seq;
        if ((rc = next_seqval(t, &seq)) < 0) return rc;
        for (int k = 0; k < tb->n_inst; k++)
            if ((rc = add_change(t, tb, tb->inst[k], 2, &seq, new_rows[r], NULL)) < 0) return rc;
    }
    t->n_rows -= n; /* each row counted once, not as a delete and an insert */
    return 0;
}

static int insert_change(sim_txn *t, const sim_change *c, const mcdc_lsn *commit)
{
    sim_instance *ci = c->ci;
    int rc;
    if (!ci->ins) {
        mcdc_buf b = MCDC_BUF_INIT(1 << 20);
        mcdc_buf_printf(&b, "INSERT INTO sim_ct_%lld VALUES(?, NULL, ?, ?, ?", (long long)ci->id);
        for (int k = 0; k < ci->n_cols; k++) mcdc_buf_puts(&b, ", ?");
        mcdc_buf_puts(&b, ", ?)");
        rc = b.ptr ? prepare(t->s, &ci->ins, b.ptr) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
        mcdc_buf_dispose(&b);
        if (rc < 0) return rc;
    }
    sqlite3_stmt *st = ci->ins;
    sim__bind_lsn(st, 1, commit);
    sim__bind_lsn(st, 2, &c->seqval);
    sqlite3_bind_int(st, 3, c->op);
    sqlite3_bind_blob(st, 4, c->mask, (int)c->mask_len, SQLITE_STATIC);
    for (int k = 0; k < ci->n_cols; k++)
        sim_bind(st, 5 + k, &ci->cols[k].type, &c->vals[k]);
    sqlite3_bind_int(st, 5 + ci->n_cols, c->command_id);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sim__sqlite_error(t->s, rc, "writing a change row");
}

int sim__txn_commit(sim_txn *t, mcdc_lsn *commit_lsn, bool *logged)
{
    *logged = false;
    *commit_lsn = mcdc_lsn_zero();
    if (t->n_changes == 0)
        return 0;
    int rc = sim__alloc_lsn(t->s, t->commit_us, commit_lsn);
    if (rc == 0) rc = sim__tx_record(t->s, commit_lsn, TX_TRAN, &t->begin_lsn, t->begin_us, t->commit_us, t->xact);
    for (const sim_change *c = t->changes; rc == 0 && c; c = c->next)
        rc = insert_change(t, c, commit_lsn);
    if (rc == 0) *logged = true;
    return rc;
}
