/*
 * source/sim/exec.c: running INSERT, UPDATE and DELETE statements as one transaction.
 *
 * Guarantees: the statements run in order as one SQLite transaction together with the clock
 * move; the first failure (a bad value, a NULL into a NOT NULL column, a duplicate key, an
 * unknown table or column) rolls everything back, so the file is as it was. UPDATE computes
 * every new value from the row as it was before the statement (SET a = b, b = a swaps), and
 * checks keys after the statement's deletes, as SQL Server's split updates do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/time.h"
#include "source/sim/sim_int.h"

static int find_live(const sim_table *tb, const char *name)
{
    for (int k = 0; k < tb->n_live; k++)
        if (!strcasecmp(tb->cols[tb->live[k]].name, name))
            return tb->live[k];
    return -1;
}

static int resolve(const sim_table *tb, sim_expr *e)
{
    if (!e) return 0;
    if (e->op == E_COL) {
        e->col = find_live(tb, e->name);
        if (e->col < 0)
            return mcdc_error_set(MCDC_EINVAL, "Msg 207: Invalid column name '%s'.", e->name);
    }
    int rc;
    if ((rc = resolve(tb, e->a)) < 0 || (rc = resolve(tb, e->b)) < 0 || (rc = resolve(tb, e->c)) < 0) return rc;
    for (int i = 0; i < e->n_list; i++)
        if ((rc = resolve(tb, e->list[i])) < 0) return rc;
    return 0;
}

static int lookup_table(mcdc_sim *s, const sim_stmt *st, sim_table **out)
{
    *out = sim__find_table(s, st->schema, st->table);
    if (!*out)
        return mcdc_error_set(MCDC_ENOTFOUND, "Msg 208: Invalid object name '%s.%s'.", st->schema, st->table);
    return 0;
}

static int run_insert(sim_txn *t, sim_stmt *st)
{
    sim_table *tb;
    int rc = lookup_table(t->s, st, &tb);
    if (rc < 0) return rc;
    int ncols = st->n_cols ? st->n_cols : tb->n_live;
    int *target = sim_arena_alloc(t->arena, (size_t)(ncols + 1) * sizeof *target);
    if (!target) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int c = 0; c < ncols; c++) {
        if (st->n_cols) {
            target[c] = find_live(tb, st->cols[c]);
            if (target[c] < 0) return mcdc_error_set(MCDC_EINVAL, "Msg 207: Invalid column name '%s'.", st->cols[c]);
            for (int d = 0; d < c; d++)
                if (target[d] == target[c])
                    return mcdc_error_set(MCDC_EINVAL, "Msg 264: The column name '%s' is specified more than once in the "
                                          "SET clause or column list of an INSERT. A column cannot be assigned more than "
                                          "one value in the same clause.", st->cols[c]);
        } else {
            target[c] = tb->live[c];
        }
    }
    sim_conv_ctx cx = {t->s->st.db_name, tb->full, NULL};
    for (int r = 0; r < st->n_rows; r++) {
        if (st->n_vals[r] > ncols)
            return mcdc_error_set(MCDC_EINVAL, "Msg 110: There are fewer columns in the INSERT statement than values "
                                  "specified in the VALUES clause. The number of values in the VALUES clause must match "
                                  "the number of columns specified in the INSERT statement.");
        if (st->n_vals[r] < ncols)
            return mcdc_error_set(MCDC_EINVAL, "Msg 109: There are more columns in the INSERT statement than values "
                                  "specified in the VALUES clause. The number of values in the VALUES clause must match "
                                  "the number of columns specified in the INSERT statement.");
        sim_val *row = sim_arena_alloc(t->arena, (size_t)(tb->n_cols + 1) * sizeof *row);
        if (!row) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (int c = 0; c < ncols; c++) {
            sim_val v;
            if ((rc = sim_eval(t->arena, st->rows[r][c], NULL, &v)) < 0) return rc;
            cx.column = tb->cols[target[c]].name;
            if (tb->cols[target[c]].type.k == ST_ROWVERSION && v.k != V_NULL) /* the database stamps it */
                return mcdc_error_set(MCDC_EINVAL, "Msg 273: Cannot insert an explicit value into a timestamp column. Use "
                                      "INSERT with a column list to exclude the timestamp column, or insert a DEFAULT "
                                      "into the timestamp column.");
            if ((rc = sim_convert(t->arena, &tb->cols[target[c]].type, &v, &row[target[c]], &cx)) < 0) return rc;
        }
        if ((rc = sim__txn_insert(t, tb, row)) < 0) return rc;
    }
    return 0;
}

typedef struct match {
    int64_t  rowid;
    sim_val *row;
} match;

/* Rows of @p tb matching @p where, in key order. */
static int scan(sim_txn *t, sim_table *tb, sim_expr *where, match **out, int *n_out)
{
    mcdc_buf sql = MCDC_BUF_INIT(1 << 20);
    mcdc_buf_puts(&sql, "SELECT rowid");
    for (int k = 0; k < tb->n_live; k++) mcdc_buf_printf(&sql, ", c%d", tb->cols[tb->live[k]].column_id);
    mcdc_buf_printf(&sql, " FROM sim_src_%lld ORDER BY __key", (long long)tb->id);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(t->s->db, sql.ptr, -1, &st, NULL);
    mcdc_buf_dispose(&sql);
    if (rc != SQLITE_OK) return sim__sqlite_error(t->s, rc, "reading source rows");
    sim_type *types = sim_arena_alloc(t->arena, (size_t)(tb->n_cols + 1) * sizeof *types);
    if (!types) { sqlite3_finalize(st); return mcdc_error_set(MCDC_ENOMEM, "out of memory"); }
    for (int i = 0; i < tb->n_cols; i++) types[i] = tb->cols[i].type;
    match *m = NULL;
    int n = 0, cap = 0;
    rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        sim_val *row = sim_arena_alloc(t->arena, (size_t)(tb->n_cols + 1) * sizeof *row);
        if (!row) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
        if ((rc = sim__read_row(t->s, tb, st, 1, t->arena, row)) < 0) break;
        int ok = 1;
        if (where) {
            sim_row_view rv = {row, types, tb->n_cols};
            if ((rc = sim_eval_pred(t->arena, where, &rv, &ok)) < 0) break;
        }
        if (ok != 1) continue;
        if (n == cap) {
            int nc = cap ? cap * 2 : 16;
            match *nm = sim_arena_alloc(t->arena, (size_t)nc * sizeof *nm);
            if (!nm) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            if (m) memcpy(nm, m, (size_t)n * sizeof *nm);
            m = nm;
            cap = nc;
        }
        m[n].rowid = sqlite3_column_int64(st, 0);
        m[n].row = row;
        n++;
    }
    sqlite3_finalize(st);
    *out = m;
    *n_out = n;
    return rc;
}

static int run_update(sim_txn *t, sim_stmt *st)
{
    sim_table *tb;
    int rc = lookup_table(t->s, st, &tb);
    if (rc < 0) return rc;
    int *target = sim_arena_alloc(t->arena, (size_t)(st->n_cols + 1) * sizeof *target);
    if (!target) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int c = 0; c < st->n_cols; c++) {
        target[c] = find_live(tb, st->cols[c]);
        if (target[c] < 0) return mcdc_error_set(MCDC_EINVAL, "Msg 207: Invalid column name '%s'.", st->cols[c]);
        for (int d = 0; d < c; d++)
            if (target[d] == target[c])
                return mcdc_error_set(MCDC_EINVAL, "Msg 264: The column name '%s' is specified more than once in the SET "
                                      "clause or column list of an INSERT. A column cannot be assigned more than one "
                                      "value in the same clause.", st->cols[c]);
        if (tb->cols[target[c]].type.k == ST_ROWVERSION)
            return mcdc_error_set(MCDC_EINVAL, "Msg 272: Cannot update a timestamp column.");
        if ((rc = resolve(tb, st->set[c])) < 0) return rc;
    }
    if ((rc = resolve(tb, st->where)) < 0) return rc;
    match *m;
    int n;
    if ((rc = scan(t, tb, st->where, &m, &n)) < 0) return rc;
    sim_type *types = sim_arena_alloc(t->arena, (size_t)(tb->n_cols + 1) * sizeof *types);
    int64_t *krowid = sim_arena_alloc(t->arena, (size_t)(n + 1) * sizeof *krowid);
    sim_val **kold = sim_arena_alloc(t->arena, (size_t)(n + 1) * sizeof *kold);
    sim_val **knew = sim_arena_alloc(t->arena, (size_t)(n + 1) * sizeof *knew);
    if (!types || !krowid || !kold || !knew) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int i = 0; i < tb->n_cols; i++) types[i] = tb->cols[i].type;
    sim_conv_ctx cx = {t->s->st.db_name, tb->full, NULL};
    int nk = 0;
    for (int r = 0; r < n; r++) {
        sim_val *nr = sim_arena_alloc(t->arena, (size_t)(tb->n_cols + 1) * sizeof *nr);
        if (!nr) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        memcpy(nr, m[r].row, (size_t)tb->n_cols * sizeof *nr);
        sim_row_view rv = {m[r].row, types, tb->n_cols};
        for (int c = 0; c < st->n_cols; c++) {
            sim_val v;
            if ((rc = sim_eval(t->arena, st->set[c], &rv, &v)) < 0) return rc;
            cx.column = tb->cols[target[c]].name;
            if ((rc = sim_convert(t->arena, &tb->cols[target[c]].type, &v, &nr[target[c]], &cx)) < 0) return rc;
        }
        bool key_changed = false;
        for (int k = 0; k < tb->n_keys; k++)
            key_changed |= !sim_same(&m[r].row[tb->keys[k]], &nr[tb->keys[k]]);
        if (key_changed) {
            krowid[nk] = m[r].rowid;
            kold[nk] = m[r].row;
            knew[nk] = nr;
            nk++;
        } else if ((rc = sim__txn_update(t, tb, m[r].rowid, m[r].row, nr)) < 0) {
            return rc;
        }
    }
    if (nk) return sim__txn_update_keys(t, tb, nk, krowid, kold, knew);
    return 0;
}

static int run_delete(sim_txn *t, sim_stmt *st)
{
    sim_table *tb;
    int rc = lookup_table(t->s, st, &tb);
    if (rc < 0) return rc;
    if ((rc = resolve(tb, st->where)) < 0) return rc;
    match *m;
    int n;
    if ((rc = scan(t, tb, st->where, &m, &n)) < 0) return rc;
    for (int r = 0; r < n; r++)
        if ((rc = sim__txn_delete(t, tb, m[r].rowid, m[r].row)) < 0) return rc;
    return 0;
}

int sim__exec_in_tx(mcdc_sim *s, const char *sql, int64_t begin_us, int64_t commit_us, mcdc_sim_exec_result *out)
{
    sim_arena a = {0};
    sim_stmt **stmts;
    int n, rc;
    memset(out, 0, sizeof *out);
    if ((rc = sim_parse_statements(&a, sql, &stmts, &n)) < 0) {
        sim_arena_free(&a);
        return rc;
    }
    if (begin_us == MCDC_SIM_NOW) begin_us = commit_us;
    if (begin_us > commit_us) {
        char x[MCDC_TIME_STRLEN], y[MCDC_TIME_STRLEN];
        rc = mcdc_error_set(MCDC_EINVAL, "the transaction would begin (%s) after it commits (%s)",
                            mcdc_time_format(x, begin_us, 6, true), mcdc_time_format(y, commit_us, 6, true));
        mcdc_error_hint("--begin-at must be at or before --at");
        goto done;
    }
    sim_txn t;
    if ((rc = sim__txn_begin(&t, s, &a, begin_us, commit_us)) < 0) goto done;
    for (int i = 0; i < n; i++) {
        t.command_id = i + 1;
        sim_stmt *st = stmts[i];
        rc = st->kind == S_INSERT ? run_insert(&t, st) : st->kind == S_UPDATE ? run_update(&t, st) : run_delete(&t, st);
        if (rc < 0) {
            mcdc_error_prefix("statement %d (%.*s%s)", i + 1, (int)(st->text_len > 60 ? 60 : st->text_len), st->text,
                              st->text_len > 60 ? "..." : "");
            mcdc_error_hint("the transaction was rolled back: nothing changed");
            goto done;
        }
    }
    bool logged;
    if ((rc = sim__txn_commit(&t, &out->commit_lsn, &logged)) < 0) goto done;
    out->n_rows = t.n_rows;
    out->n_changes = t.n_changes;
    out->commit_us = commit_us;
done:
    sim_arena_free(&a);
    if (rc < 0) memset(out, 0, sizeof *out);
    return rc;
}

int mcdc_sim_exec(mcdc_sim *s, const char *sql, int64_t begin_us, int64_t at_us, mcdc_sim_exec_result *out)
{
    memset(out, 0, sizeof *out);
    int rc = sim__begin(s);
    if (rc < 0) return rc;
    int64_t commit_us;
    if ((rc = sim__advance_clock(s, at_us, &commit_us)) < 0 ||
        (rc = sim__exec_in_tx(s, sql, begin_us, commit_us, out)) < 0) {
        sim__rollback(s);
        memset(out, 0, sizeof *out);
        return rc;
    }
    if ((rc = sim__commit(s)) < 0) memset(out, 0, sizeof *out);
    return rc;
}
