/*
 * source/sim/admin.c: creating tables, enabling and disabling capture instances, and the
 * schema changes of sim ddl with their DDL history.
 *
 * Guarantees: each call is one transaction (S3). Enabling commits a transaction whose LSN is the
 * instance's start_lsn; capture processes it later, and until then min_lsn reads 0x00. A table
 * has at most two instances. DDL follows SQL Server's CDC rules: ADD COLUMN leaves instances as
 * they are, DROP COLUMN keeps the column captured (NULL from then on), ALTER COLUMN converts the
 * source and change-table values (required_column_update = 1); key columns cannot be dropped or
 * altered. DDL history rows become visible when capture passes their LSN.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/time.h"
#include "source/sim/sim_int.h"

static int reload(mcdc_sim *s)
{
    int rc = sim__save_state(s);
    if (rc == 0) rc = sim__load(s);
    return rc;
}

static int step_done(mcdc_sim *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sim__sqlite_error(s, rc, what);
}

/* A timestamp column added to a table with rows: each row gets the counter's next value, in
 * row order, as SQL Server fills it. */
static int stamp_existing(mcdc_sim *s, int64_t table_id, int column_id)
{
    char sq[128];
    sqlite3_stmt *st;
    snprintf(sq, sizeof sq, "SELECT rowid FROM sim_src_%lld ORDER BY rowid", (long long)table_id);
    if (sqlite3_prepare_v2(s->db, sq, -1, &st, NULL) != SQLITE_OK) return sim__sqlite_error(s, SQLITE_ERROR, "reading rows");
    size_t n = 0, cap = 0;
    int64_t *ids = NULL;
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            int64_t *p = realloc(ids, (cap = cap ? cap * 2 : 256) * sizeof *ids);
            if (!p) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            ids = p;
        }
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    snprintf(sq, sizeof sq, "UPDATE sim_src_%lld SET c%d = ? WHERE rowid = ?", (long long)table_id, column_id);
    if (rc == 0 && sqlite3_prepare_v2(s->db, sq, -1, &st, NULL) != SQLITE_OK)
        rc = sim__sqlite_error(s, SQLITE_ERROR, "stamping rows");
    else if (rc == 0) {
        for (size_t i = 0; rc == 0 && i < n; i++) {
            uint64_t v = 0;
            unsigned char b[8];
            if ((rc = sim__next_dbts(s, &v)) < 0) break;
            for (int j = 7; j >= 0; j--, v >>= 8) b[j] = (unsigned char)(v & 0xFF);
            sqlite3_bind_blob(st, 1, b, 8, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, 2, ids[i]);
            int r = sqlite3_step(st);
            sqlite3_reset(st);
            if (r != SQLITE_DONE) rc = sim__sqlite_error(s, r, "stamping rows");
        }
        sqlite3_finalize(st);
    }
    free(ids);
    return rc;
}

/* Whether column @p name is in the comma-separated list @p list (NULL: every column). */
static bool in_column_list(const char *list, const char *name)
{
    if (!list || !*list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',' || *p == '[')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ']' && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && strncasecmp(p, name, n) == 0)
            return true;
        p = e;
        while (*p == ']' || *p == ' ')
            p++;
    }
    return false;
}

static int enable_in_tx(mcdc_sim *s, sim_table *tb, const char *ci_name, int64_t at_us,
                        const char *columns)
{
    char defname[300];
    if (!ci_name || !*ci_name) {
        snprintf(defname, sizeof defname, "%s_%s", tb->schema, tb->name);
        ci_name = defname;
    }
    size_t n = strlen(ci_name);
    if (n > 100)
        return mcdc_error_set(MCDC_EINVAL, "capture instance name '%s' is longer than 100 characters", ci_name);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)ci_name[i]) && ci_name[i] != '_')
            return mcdc_error_set(MCDC_EINVAL, "capture instance name '%s': only letters, digits and _ are allowed", ci_name);
    if (sim__find_instance(s, ci_name))
        return mcdc_error_set(MCDC_EEXISTS, "Msg 22926: Could not create a capture instance because the capture instance "
                              "name '%s' already exists in the current database. Specify an explicit unique name for "
                              "the parameter @capture_instance.", ci_name);
    if (tb->n_inst >= 2)
        return mcdc_error_set(MCDC_EINVAL, "Msg 22962: Two capture instances already exist for source table '%s'. A table "
                              "can have at most two capture instances. If the current tracking options are not "
                              "appropriate, disable change tracking for the obsolete instance by using "
                              "sys.sp_cdc_disable_table and retry the operation.", tb->full),
               mcdc_error_hint("disable one first: mssql-cdc sim disable DB --capture-instance %s", tb->inst[0]->name);
    mcdc_lsn begin, commit;
    int64_t xact = s->st.next_xact++;
    int rc;
    if ((rc = sim__alloc_lsn(s, at_us, &begin)) < 0 || (rc = sim__alloc_lsn(s, at_us, &commit)) < 0 ||
        (rc = sim__tx_record(s, &commit, TX_ENABLE, &begin, at_us, at_us, xact)) < 0)
        return rc;
    sqlite3_stmt *st;
    char created[32];
    sim__datetime_text(s, at_us, created);
    sqlite3_prepare_v2(s->db, "INSERT INTO sim_instances(name, table_id, object_id, start_lsn, create_us, create_date)"
                       " VALUES(?, ?, ?, ?, ?, ?)", -1, &st, NULL);
    sqlite3_bind_text(st, 1, ci_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, tb->id);
    sqlite3_bind_int64(st, 3, s->st.next_object_id++);
    sim__bind_lsn(st, 4, &commit);
    sqlite3_bind_int64(st, 5, at_us);
    sqlite3_bind_text(st, 6, created, -1, SQLITE_TRANSIENT);
    if ((rc = step_done(s, st, "enabling a capture instance")) < 0) return rc;
    int64_t id = sqlite3_last_insert_rowid(s->db);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    mcdc_buf_printf(&b, "CREATE TABLE sim_ct_%lld(\"__$start_lsn\" BLOB NOT NULL, \"__$end_lsn\" BLOB,"
                    " \"__$seqval\" BLOB NOT NULL, \"__$operation\" INTEGER NOT NULL, \"__$update_mask\" BLOB",
                    (long long)id);
    int n_cap = 0;
    for (int k = 0; k < tb->n_live; k++) {
        sim_column *c = &tb->cols[tb->live[k]];
        if (!in_column_list(columns, c->name))
            continue; /* @captured_column_list leaves it out */
        n_cap++;
        char ty[64];
        sim_type_format(ty, sizeof ty, &c->type);
        mcdc_buf_printf(&b, ", c%d", n_cap);
        sqlite3_prepare_v2(s->db, "INSERT INTO sim_captured VALUES(?, ?, ?, ?, ?)", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int(st, 2, n_cap);
        sqlite3_bind_int(st, 3, c->column_id);
        sqlite3_bind_text(st, 4, c->name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 5, ty, -1, SQLITE_TRANSIENT);
        if ((rc = step_done(s, st, "recording captured columns")) < 0) {
            mcdc_buf_dispose(&b);
            return rc;
        }
    }
    mcdc_buf_puts(&b, ", \"__$command_id\" INTEGER NOT NULL)");
    rc = b.ptr ? sim__exec_sql(s, b.ptr) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_buf_dispose(&b);
    return rc;
}

static int split_keys(const char *keys, char names[][129], int max, int *n)
{
    *n = 0;
    const char *p = keys;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && isspace((unsigned char)*p)) { p++; len--; }
        while (len && isspace((unsigned char)p[len - 1])) len--;
        if (len >= 2 && p[0] == '[' && p[len - 1] == ']') { p++; len -= 2; }
        if (len == 0 || len > 128 || *n >= max)
            return mcdc_error_set(MCDC_EINVAL, "bad --keys '%s': expected column names separated by commas", keys);
        snprintf(names[*n], 129, "%.*s", (int)len, p);
        (*n)++;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

int mcdc_sim_create_table(mcdc_sim *s, const char *table, const char *columns, const char *keys, const char *ci,
                          int64_t at_us)
{
    char schema[129], name[129], knames[32][129];
    sim_arena a = {0};
    sim_coldef *defs;
    int n_defs, n_keys, rc;
    if ((rc = sim_parse_table_name(table, schema, name)) < 0) return rc;
    if (!columns || !*columns)
        return mcdc_error_set(MCDC_EINVAL, "table %s needs a schema: --schema 'name TYPE [NULL|NOT NULL], ...'", table);
    if (!keys || !*keys)
        return mcdc_error_set(MCDC_EINVAL, "table %s needs key columns: --keys col[,col...]", table),
               mcdc_error_hint("capture needs a unique index; the simulator's tables have a primary key");
    if ((rc = split_keys(keys, knames, 32, &n_keys)) < 0) return rc;
    if ((rc = sim_parse_coldefs(&a, columns, &defs, &n_defs)) < 0) goto out;
    for (int i = 0; i < n_defs; i++)
        for (int j = 0; j < i; j++)
            if (!strcasecmp(defs[i].name, defs[j].name)) {
                rc = mcdc_error_set(MCDC_EINVAL, "Msg 2705: Column names in each table must be unique. Column name '%s' "
                                    "in table '%s.%s' is specified more than once.", defs[i].name, schema, name);
                goto out;
            }
    for (int i = 0, rv = -1; i < n_defs; i++)
        if (defs[i].type.k == ST_ROWVERSION) {
            if (rv >= 0) {
                rc = mcdc_error_set(MCDC_EINVAL, "Msg 2738: A table can only have one timestamp column. Because table "
                                    "'%s' already has one, the column '%s' cannot be added.", name, defs[i].name);
                goto out;
            }
            rv = i;
        }
    int key_ord[1024] = {0};
    if (n_defs > 1024) { rc = mcdc_error_set(MCDC_EINVAL, "table %s: more than 1024 columns", table); goto out; }
    for (int k = 0; k < n_keys; k++) {
        int found = -1;
        for (int i = 0; i < n_defs; i++)
            if (!strcasecmp(defs[i].name, knames[k])) found = i;
        if (found < 0) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 1911: Column name '%s' does not exist in the target table or view.", knames[k]);
            goto out;
        }
        if (key_ord[found]) {
            rc = mcdc_error_set(MCDC_EINVAL, "key column '%s' is listed twice in --keys", knames[k]);
            goto out;
        }
        sim_coldef *d = &defs[found];
        if (d->null_given && d->nullable) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 8111: Cannot define PRIMARY KEY constraint on nullable column in table "
                                "'%s'.", name);
            goto out;
        }
        if (d->type.k == ST_TEXT || d->type.k == ST_NTEXT || d->type.k == ST_IMAGE || d->type.k == ST_XML || d->type.len < 0) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 1919: Column '%s' in table '%s.%s' is of a type that is invalid for use "
                                "as a key column in an index.", d->name, schema, name);
            goto out;
        }
        d->nullable = false;
        key_ord[found] = k + 1;
    }
    if ((rc = sim__begin(s)) < 0) goto out;
    int64_t now;
    if ((rc = sim__advance_clock(s, at_us, &now)) < 0) goto fail;
    if (sim__find_table(s, schema, name)) {
        rc = mcdc_error_set(MCDC_EEXISTS, "Msg 2714: There is already an object named '%s' in the database.", name);
        goto fail;
    }
    sqlite3_stmt *st;
    sqlite3_prepare_v2(s->db, "INSERT INTO sim_tables(schema_name, table_name, object_id, created_us) VALUES(?, ?, ?, ?)",
                       -1, &st, NULL);
    sqlite3_bind_text(st, 1, schema, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, s->st.next_object_id++);
    sqlite3_bind_int64(st, 4, now);
    if ((rc = step_done(s, st, "creating a table")) < 0) goto fail;
    int64_t id = sqlite3_last_insert_rowid(s->db);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    mcdc_buf_printf(&b, "CREATE TABLE sim_src_%lld(__key BLOB NOT NULL UNIQUE", (long long)id);
    for (int i = 0; i < n_defs; i++) {
        char ty[64];
        sim_type_format(ty, sizeof ty, &defs[i].type);
        mcdc_buf_printf(&b, ", c%d", i + 1);
        sqlite3_prepare_v2(s->db, "INSERT INTO sim_columns VALUES(?, ?, ?, ?, ?, ?, 0)", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int(st, 2, i + 1);
        sqlite3_bind_text(st, 3, defs[i].name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, ty, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 5, defs[i].nullable);
        sqlite3_bind_int(st, 6, key_ord[i]);
        if ((rc = step_done(s, st, "creating a table")) < 0) { mcdc_buf_dispose(&b); goto fail; }
    }
    mcdc_buf_puts(&b, ")");
    rc = b.ptr ? sim__exec_sql(s, b.ptr) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_buf_dispose(&b);
    if (rc < 0 || (rc = reload(s)) < 0) goto fail;
    sim_table *tb = sim__find_table(s, schema, name);
    if ((rc = enable_in_tx(s, tb, ci, now, NULL)) < 0 || (rc = reload(s)) < 0 || (rc = sim__rebuild_views(s)) < 0 ||
        (rc = sim__commit(s)) < 0)
        goto fail;
    goto out;
fail:
    sim__rollback(s);
out:
    sim_arena_free(&a);
    return rc;
}

int mcdc_sim_enable(mcdc_sim *s, const char *table, const char *ci, int64_t at_us)
{
    return mcdc_sim_enable_columns(s, table, ci, NULL, at_us);
}

int mcdc_sim_enable_columns(mcdc_sim *s, const char *table, const char *ci, const char *columns,
                            int64_t at_us)
{
    char schema[129], name[129];
    int rc;
    int64_t now;
    if ((rc = sim_parse_table_name(table, schema, name)) < 0) return rc;
    if ((rc = sim__begin(s)) < 0) return rc;
    if ((rc = sim__advance_clock(s, at_us, &now)) < 0) goto fail;
    sim_table *tb = sim__find_table(s, schema, name);
    if (!tb) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "Msg 22931: Source table '%s.%s' does not exist in the current database. "
                            "Ensure that the correct database context is set.", schema, name);
        goto fail;
    }
    for (const char *p = columns; p && *p;) { /* every listed column must exist */
        while (*p == ' ' || *p == ',' || *p == '[')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ']' && *e != ' ')
            e++;
        bool known = e == p;
        for (int k = 0; k < tb->n_live && !known; k++) {
            const char *nm = tb->cols[tb->live[k]].name;
            known = strlen(nm) == (size_t)(e - p) && strncasecmp(p, nm, (size_t)(e - p)) == 0;
        }
        if (!known) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 22833: Could not enable Change Data Capture for "
                                "source table '%s': column '%.*s' in @captured_column_list does "
                                "not exist in the source table.", tb->full, (int)(e - p), p);
            goto fail;
        }
        p = e;
        while (*p == ']' || *p == ' ')
            p++;
    }
    if ((rc = enable_in_tx(s, tb, ci, now, columns)) < 0 || (rc = reload(s)) < 0 || (rc = sim__rebuild_views(s)) < 0 ||
        (rc = sim__commit(s)) < 0)
        goto fail;
    return 0;
fail:
    sim__rollback(s);
    return rc;
}

int mcdc_sim_disable(mcdc_sim *s, const char *ci_name, int64_t at_us)
{
    int rc;
    int64_t now;
    if ((rc = sim__begin(s)) < 0) return rc;
    if ((rc = sim__advance_clock(s, at_us, &now)) < 0) goto fail;
    sim_instance *ci = sim__find_instance(s, ci_name);
    if (!ci) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "Msg 22963: Parameter '@capture_instance' contains an invalid value '%s'. "
                            "Specify a valid capture instance name.", ci_name);
        goto fail;
    }
    char sql[512];
    snprintf(sql, sizeof sql, "DROP TABLE sim_ct_%lld; DELETE FROM sim_captured WHERE instance_id = %lld;"
             " DELETE FROM sim_ddl WHERE instance_id = %lld; DELETE FROM sim_instances WHERE id = %lld;",
             (long long)ci->id, (long long)ci->id, (long long)ci->id, (long long)ci->id);
    if ((rc = sim__exec_sql(s, sql)) < 0 || (rc = reload(s)) < 0 || (rc = sim__rebuild_views(s)) < 0 ||
        (rc = sim__commit(s)) < 0)
        goto fail;
    return 0;
fail:
    sim__rollback(s);
    return rc;
}

/* Convert every value of column @p col of storage table @p tbl from @p from to @p to. */
static int convert_column(mcdc_sim *s, const char *tbl, const char *col, const sim_type *from, const sim_type *to,
                          bool not_null, const sim_conv_ctx *cx)
{
    char sql[256];
    sqlite3_stmt *rd, *wr;
    snprintf(sql, sizeof sql, "SELECT rowid, %s FROM %s", col, tbl);
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &rd, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "converting a column");
    snprintf(sql, sizeof sql, "UPDATE %s SET %s = ? WHERE rowid = ?", tbl, col);
    if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &wr, NULL)) != SQLITE_OK) {
        sqlite3_finalize(rd);
        return sim__sqlite_error(s, rc, "converting a column");
    }
    /* collect first: SQLite does not promise a stable scan of a table being written */
    int64_t n = 0, cap = 0;
    int64_t *ids = NULL;
    sim_val *vals = NULL;
    sim_arena a = {0};
    rc = 0;
    while (rc == 0 && sqlite3_step(rd) == SQLITE_ROW) {
        sim_val v, c;
        if ((rc = sim_read_col(rd, 1, from, &a, &v)) < 0) break;
        if (v.k == V_NULL && not_null) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 515: Cannot insert the value NULL into column '%s', table '%s.%s'; "
                                "column does not allow nulls. UPDATE fails.", cx->column, cx->db, cx->table);
            break;
        }
        if ((rc = sim_convert(&a, to, &v, &c, cx)) < 0) break;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            int64_t *ni = realloc(ids, (size_t)cap * sizeof *ni);
            sim_val *nv = realloc(vals, (size_t)cap * sizeof *nv);
            if (ni) ids = ni;
            if (nv) vals = nv;
            if (!ni || !nv) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
        }
        ids[n] = sqlite3_column_int64(rd, 0);
        vals[n++] = c;
    }
    sqlite3_finalize(rd);
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        sim_bind(wr, 1, to, &vals[i]);
        sqlite3_bind_int64(wr, 2, ids[i]);
        int r = sqlite3_step(wr);
        sqlite3_reset(wr);
        if (r != SQLITE_DONE) rc = sim__sqlite_error(s, r, "converting a column");
    }
    sqlite3_finalize(wr);
    free(ids);
    free(vals);
    sim_arena_free(&a);
    return rc;
}

static int ddl_record(mcdc_sim *s, sim_table *tb, const mcdc_lsn *lsn, int64_t at_us, const char *sql, const char *col,
                      int changed_column_id, const sim_type *new_type)
{
    for (int k = 0; k < tb->n_inst; k++) {
        sim_instance *ci = tb->inst[k];
        int required = 0;
        for (int c = 0; c < ci->n_cols; c++)
            if (new_type && ci->cols[c].column_id == changed_column_id) required = 1;
        sqlite3_stmt *st;
        char when[32];
        int64_t minute = sim__local_ticks(s, at_us);
        minute -= minute % (60 * TICKS_PER_SEC);
        sim_format_datetime(when, sizeof when, minute);
        sqlite3_prepare_v2(s->db, "INSERT INTO sim_ddl VALUES(?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, ci->id);
        sim__bind_lsn(st, 2, lsn);
        sqlite3_bind_text(st, 3, when, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 4, at_us);
        sqlite3_bind_text(st, 5, sql, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 6, col, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 7, required);
        int rc = step_done(s, st, "recording DDL history");
        if (rc < 0) return rc;
        if (required) {
            char ty[64], tbl[64], cname[32];
            sim_type_format(ty, sizeof ty, new_type);
            for (int c = 0; c < ci->n_cols; c++) {
                if (ci->cols[c].column_id != changed_column_id) continue;
                sim_conv_ctx cx = {s->st.db_name, tb->full, ci->cols[c].name};
                snprintf(tbl, sizeof tbl, "sim_ct_%lld", (long long)ci->id);
                snprintf(cname, sizeof cname, "c%d", ci->cols[c].ordinal);
                if ((rc = convert_column(s, tbl, cname, &ci->cols[c].type, new_type, false, &cx)) < 0) return rc;
                sqlite3_prepare_v2(s->db, "UPDATE sim_captured SET type = ? WHERE instance_id = ? AND ordinal = ?", -1,
                                   &st, NULL);
                sqlite3_bind_text(st, 1, ty, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int64(st, 2, ci->id);
                sqlite3_bind_int(st, 3, ci->cols[c].ordinal);
                if ((rc = step_done(s, st, "recording DDL history")) < 0) return rc;
            }
        }
    }
    return 0;
}

int mcdc_sim_ddl(mcdc_sim *s, const char *sql, int64_t at_us)
{
    sim_arena a = {0};
    sim_ddl_stmt d;
    int rc;
    int64_t now;
    if ((rc = sim_parse_ddl(&a, sql, &d)) < 0) {
        sim_arena_free(&a);
        return rc;
    }
    if ((rc = sim__begin(s)) < 0) {
        sim_arena_free(&a);
        return rc;
    }
    if ((rc = sim__advance_clock(s, at_us, &now)) < 0) goto fail;
    sim_table *tb = sim__find_table(s, d.schema, d.table);
    if (!tb) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "Msg 4902: Cannot find the object \"%s.%s\" because it does not exist or you "
                            "do not have permissions.", d.schema, d.table);
        goto fail;
    }
    sim_column *col = NULL;
    for (int k = 0; k < tb->n_live; k++)
        if (!strcasecmp(tb->cols[tb->live[k]].name, d.col.name)) col = &tb->cols[tb->live[k]];
    char sq[512];
    int changed_id = 0;
    const sim_type *new_type = NULL;
    switch (d.kind) {
    case D_ADD: {
        if (col) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 2705: Column names in each table must be unique. Column name '%s' in "
                                "table '%s' is specified more than once.", d.col.name, tb->full);
            goto fail;
        }
        if (d.col.type.k == ST_ROWVERSION)
            for (int i = 0; i < tb->n_cols; i++)
                if (!tb->cols[i].dropped && tb->cols[i].type.k == ST_ROWVERSION) {
                    rc = mcdc_error_set(MCDC_EINVAL, "Msg 2738: A table can only have one timestamp column. Because table "
                                        "'%s' already has one, the column '%s' cannot be added.", tb->name, d.col.name);
                    goto fail;
                }
        if (!d.col.nullable && d.col.type.k != ST_ROWVERSION) { /* a timestamp column is filled below */
            sqlite3_stmt *st;
            snprintf(sq, sizeof sq, "SELECT 1 FROM sim_src_%lld LIMIT 1", (long long)tb->id);
            sqlite3_prepare_v2(s->db, sq, -1, &st, NULL);
            bool nonempty = sqlite3_step(st) == SQLITE_ROW;
            sqlite3_finalize(st);
            if (nonempty) {
                rc = mcdc_error_set(MCDC_EINVAL, "Msg 4901: ALTER TABLE only allows columns to be added that can contain "
                                    "nulls, or have a DEFAULT definition specified, or the column being added is an "
                                    "identity or timestamp column, or alternatively if none of the previous conditions "
                                    "are satisfied the table must be empty to allow addition of this column. Column '%s' "
                                    "cannot be added to non-empty table '%s' because it does not satisfy these "
                                    "conditions.", d.col.name, tb->name);
                goto fail;
            }
        }
        int id = 0;
        for (int i = 0; i < tb->n_cols; i++)
            if (tb->cols[i].column_id > id) id = tb->cols[i].column_id;
        id++;
        char ty[64];
        sim_type_format(ty, sizeof ty, &d.col.type);
        sqlite3_stmt *st;
        sqlite3_prepare_v2(s->db, "INSERT INTO sim_columns VALUES(?, ?, ?, ?, ?, 0, 0)", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, tb->id);
        sqlite3_bind_int(st, 2, id);
        sqlite3_bind_text(st, 3, d.col.name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, ty, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 5, d.col.nullable);
        if ((rc = step_done(s, st, "adding a column")) < 0) goto fail;
        snprintf(sq, sizeof sq, "ALTER TABLE sim_src_%lld ADD COLUMN c%d", (long long)tb->id, id);
        if ((rc = sim__exec_sql(s, sq)) < 0) goto fail;
        if (d.col.type.k == ST_ROWVERSION && (rc = stamp_existing(s, tb->id, id)) < 0) goto fail;
        break;
    }
    case D_DROP: case D_ALTER:
        if (!col) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 4924: ALTER TABLE %s COLUMN failed because column '%s' does not exist "
                                "in table '%s'.", d.kind == D_DROP ? "DROP" : "ALTER", d.col.name, tb->name);
            goto fail;
        }
        if (col->key_ordinal) {
            rc = mcdc_error_set(MCDC_EINVAL, "Msg 5074: The object 'PK_%s' is dependent on column '%s'. ALTER TABLE %s "
                                "COLUMN %s failed because one or more objects access this column.", tb->name, col->name,
                                d.kind == D_DROP ? "DROP" : "ALTER", col->name);
            goto fail;
        }
        changed_id = col->column_id;
        if (d.kind == D_DROP) {
            snprintf(sq, sizeof sq, "UPDATE sim_columns SET dropped = 1 WHERE table_id = %lld AND column_id = %d;"
                     " UPDATE sim_src_%lld SET c%d = NULL;", (long long)tb->id, col->column_id, (long long)tb->id,
                     col->column_id);
            if ((rc = sim__exec_sql(s, sq)) < 0) goto fail;
        } else {
            char tbl[64], cname[32], ty[64];
            sim_conv_ctx cx = {s->st.db_name, tb->full, col->name};
            snprintf(tbl, sizeof tbl, "sim_src_%lld", (long long)tb->id);
            snprintf(cname, sizeof cname, "c%d", col->column_id);
            if ((rc = convert_column(s, tbl, cname, &col->type, &d.col.type, !d.col.nullable, &cx)) < 0) goto fail;
            sim_type_format(ty, sizeof ty, &d.col.type);
            sqlite3_stmt *st;
            sqlite3_prepare_v2(s->db, "UPDATE sim_columns SET type = ?, nullable = ? WHERE table_id = ? AND column_id = ?",
                               -1, &st, NULL);
            sqlite3_bind_text(st, 1, ty, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int(st, 2, d.col.nullable);
            sqlite3_bind_int64(st, 3, tb->id);
            sqlite3_bind_int(st, 4, col->column_id);
            if ((rc = step_done(s, st, "altering a column")) < 0) goto fail;
            new_type = &d.col.type;
        }
        break;
    }
    mcdc_lsn lsn;
    if ((rc = sim__alloc_lsn(s, now, &lsn)) < 0 ||
        (rc = sim__tx_record(s, &lsn, TX_DDL, &lsn, now, now, s->st.next_xact++)) < 0 ||
        (rc = ddl_record(s, tb, &lsn, now, sql, d.col.name, changed_id, new_type)) < 0 || (rc = reload(s)) < 0 ||
        (rc = sim__rebuild_views(s)) < 0 || (rc = sim__commit(s)) < 0)
        goto fail;
    sim_arena_free(&a);
    return 0;
fail:
    sim__rollback(s);
    sim_arena_free(&a);
    return rc;
}
