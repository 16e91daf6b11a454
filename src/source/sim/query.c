/*
 * source/sim/query.c: read-only queries with SQL Server's names, and the status summary.
 *
 * A query is one SELECT; names such as dbo.orders, [cdc].[dbo_orders_CT], cdc.lsn_time_mapping
 * and cdc.change_tables are rewritten to the views that carry them, and it runs on a read-only
 * connection with an authorizer that refuses every write, so a query can never change the
 * database. Result columns read from a table column keep that column's SQL Server type (decimals
 * exact, datetimes as stored, LSNs binary); computed columns take SQLite's value types.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/sim_int.h"

static bool id_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '[' || c == '"' || (unsigned char)c >= 0x80; }

/* Read one identifier part at p (plain, [bracketed] or "quoted"); returns its end. */
static const char *read_part(const char *p, char *out, size_t cap)
{
    size_t n = 0;
    if (*p == '[' || *p == '"') {
        char close = *p == '[' ? ']' : '"';
        p++;
        while (*p) {
            if (*p == close) {
                if (p[1] == close) { if (n + 1 < cap) out[n++] = close; p += 2; continue; }
                p++;
                break;
            }
            if (n + 1 < cap) out[n++] = *p;
            p++;
        }
    } else {
        while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '$' || *p == '#' || (unsigned char)*p >= 0x80)) {
            if (n + 1 < cap) out[n++] = *p;
            p++;
        }
    }
    out[n] = '\0';
    return p;
}

static const char *const cdc_views[] = {"lsn_time_mapping", "change_tables", "captured_columns", "index_columns",
                                        "ddl_history", NULL};

int sim__query_translate(mcdc_sim *s, const char *sql, mcdc_buf *out)
{
    const char *p = sql;
    int rc = 0;
    while (*p && rc == 0) {
        if (*p == '\'') {
            const char *q = p + 1;
            while (*q && !(*q == '\'' && q[1] != '\'')) q += *q == '\'' ? 2 : 1;
            if (*q) q++;
            rc = mcdc_buf_put(out, p, (size_t)(q - p));
            p = q;
            continue;
        }
        if (id_start(*p) && (p == sql || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'))) {
            char a[300], b[300];
            const char *e1 = read_part(p, a, sizeof a);
            if (*e1 == '.' && id_start(e1[1])) {
                const char *e2 = read_part(e1 + 1, b, sizeof b);
                if (*e2 != '.') {
                    char target[640] = "";
                    if (!strcasecmp(a, "cdc")) {
                        for (int i = 0; cdc_views[i]; i++)
                            if (!strcasecmp(b, cdc_views[i])) snprintf(target, sizeof target, "cdc.%s", cdc_views[i]);
                        size_t n = strlen(b);
                        for (int i = 0; !target[0] && i < s->n_inst; i++)
                            if (n == strlen(s->inst[i]->name) + 3 && !strncasecmp(b, s->inst[i]->name, n - 3) &&
                                !strcasecmp(b + n - 3, "_CT"))
                                snprintf(target, sizeof target, "cdc.%s_CT", s->inst[i]->name);
                    }
                    sim_table *t = target[0] ? NULL : sim__find_table(s, a, b);
                    if (t) snprintf(target, sizeof target, "%s", t->full);
                    if (target[0]) {
                        rc = mcdc_buf_printf(out, "\"%s\"", target);
                        p = e2;
                        continue;
                    }
                }
                rc = mcdc_buf_put(out, p, (size_t)(e2 - p));
                p = e2;
                continue;
            }
            rc = mcdc_buf_put(out, p, (size_t)(e1 - p));
            p = e1 > p ? e1 : p + 1;
            continue;
        }
        rc = mcdc_buf_putc(out, *p++);
    }
    return rc;
}

int sim__deny_writes(void *payload, int action, const char *a, const char *b, const char *c, const char *d)
{
    (void)payload; (void)a; (void)b; (void)c; (void)d;
    switch (action) {
    case SQLITE_SELECT: case SQLITE_READ: case SQLITE_FUNCTION: case SQLITE_RECURSIVE:
        return SQLITE_OK;
    default:
        return SQLITE_DENY;
    }
}

/* The SQL Server type of a result column read from a table column; false when computed. */
bool sim__origin_type(mcdc_sim *s, sqlite3_stmt *st, int i, sim_type *ty, bool *is_binary)
{
    const char *tab = sqlite3_column_table_name(st, i), *col = sqlite3_column_origin_name(st, i);
    *is_binary = false;
    memset(ty, 0, sizeof *ty);
    if (!tab || !col) return false;
    long long id;
    int k;
    if (sscanf(tab, "sim_src_%lld", &id) == 1 && sscanf(col, "c%d", &k) == 1) {
        for (int t = 0; t < s->n_tables; t++)
            if (s->tables[t]->id == id)
                for (int c = 0; c < s->tables[t]->n_cols; c++)
                    if (s->tables[t]->cols[c].column_id == k) { *ty = s->tables[t]->cols[c].type; return true; }
        return false;
    }
    if (sscanf(tab, "sim_ct_%lld", &id) == 1) {
        if (sscanf(col, "c%d", &k) == 1) {
            for (int t = 0; t < s->n_inst; t++)
                if (s->inst[t]->id == id)
                    for (int c = 0; c < s->inst[t]->n_cols; c++)
                        if (s->inst[t]->cols[c].ordinal == k) { *ty = s->inst[t]->cols[c].type; return true; }
            return false;
        }
        if (!strcmp(col, "__$operation") || !strcmp(col, "__$command_id")) { ty->k = ST_INT; return true; }
        *is_binary = true;
        return true;
    }
    if (!strcmp(col, "lsn") || !strcmp(col, "begin_lsn") || !strcmp(col, "tran_id") || !strcmp(col, "start_lsn") ||
        !strcmp(col, "ddl_lsn") || !strcmp(col, "processed_lsn")) {
        *is_binary = true;
        return true;
    }
    if (!strcmp(col, "begin_time") || !strcmp(col, "end_time") || !strcmp(col, "create_date") || !strcmp(col, "ddl_time")) {
        ty->k = ST_DATETIME;
        return true;
    }
    return false;
}

int mcdc_sim_query(mcdc_sim *s, const char *sql, mcdc_sim_row_cb cb, void *payload)
{
    mcdc_buf q = MCDC_BUF_INIT(1 << 24);
    sqlite3_stmt *st = NULL;
    mcdc_schema *sc = NULL;
    int rc = sim__load(s);
    if (rc < 0) return rc;
    if ((rc = sim__query_translate(s, sql, &q)) < 0) goto done;
    sqlite3_set_authorizer(s->db, sim__deny_writes, NULL);
    const char *tail = NULL;
    int r = sqlite3_prepare_v2(s->db, q.ptr ? q.ptr : "", -1, &st, &tail);
    sqlite3_set_authorizer(s->db, NULL, NULL);
    if (r != SQLITE_OK) {
        rc = mcdc_error_set(MCDC_EINVAL, "query refused: %s", sqlite3_errmsg(s->db));
        if (r == SQLITE_AUTH)
            mcdc_error_hint("sim query only reads; change data with 'sim exec'");
        else
            mcdc_error_hint("names: dbo.<table>, cdc.<ci>_CT, cdc.lsn_time_mapping, cdc.change_tables, "
                            "cdc.captured_columns, cdc.index_columns, cdc.ddl_history");
        goto done;
    }
    if (!st) {
        rc = mcdc_error_set(MCDC_EINVAL, "query refused: no statement");
        goto done;
    }
    while (tail && isspace((unsigned char)*tail)) tail++;
    if ((tail && *tail && *tail != ';') || !sqlite3_stmt_readonly(st)) {
        rc = mcdc_error_set(MCDC_EINVAL, "query refused: one read-only SELECT at a time");
        goto done;
    }
    int n = sqlite3_column_count(st);
    sim_type *types = calloc((size_t)n + 1, sizeof *types);
    signed char *kind = calloc((size_t)n + 1, 1); /* 1 typed, 2 binary, 0 dynamic */
    mcdc_value *vals = calloc((size_t)n + 1, sizeof *vals);
    sc = mcdc_schema_new();
    if (!types || !kind || !vals || !sc) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); goto freeall; }
    for (int i = 0; i < n; i++) {
        bool bin;
        bool typed = sim__origin_type(s, st, i, &types[i], &bin);
        kind[i] = bin ? 2 : typed ? 1 : 0;
        mcdc_column c = {0};
        if (kind[i] == 1) sim_type_to_column(&c, &types[i]);
        else c.type = bin ? MCDC_TYPE_BINARY : MCDC_TYPE_STRING;
        /* result names may repeat (a join); the schema keeps them unique with a suffix */
        char name[300];
        snprintf(name, sizeof name, "%s", sqlite3_column_name(st, i));
        for (int dup = 2; mcdc_schema_find(sc, name) >= 0; dup++)
            snprintf(name, sizeof name, "%s_%d", sqlite3_column_name(st, i), dup);
        if ((rc = mcdc_schema_add(sc, name, c.type, c.precision, c.scale, true)) < 0) goto freeall;
    }
    rc = cb(sc, NULL, payload); /* the header: names known, values not */
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        sim_arena a = {0};
        for (int i = 0; rc == 0 && i < n; i++) {
            int ct = sqlite3_column_type(st, i);
            memset(&vals[i], 0, sizeof vals[i]);
            if (ct == SQLITE_NULL) { vals[i].is_null = true; continue; }
            if (kind[i] == 1) {
                sim_val v;
                if ((rc = sim_read_col(st, i, &types[i], &a, &v)) == 0) rc = sim_to_value(&a, &types[i], &v, &vals[i]);
                continue;
            }
            if (kind[i] == 2 || ct == SQLITE_BLOB) {
                sc->cols[i].type = MCDC_TYPE_BINARY;
                vals[i].v.s.ptr = sqlite3_column_blob(st, i);
                vals[i].v.s.len = (size_t)sqlite3_column_bytes(st, i);
                if (!vals[i].v.s.ptr) vals[i].v.s.ptr = "";
            } else if (ct == SQLITE_INTEGER) {
                sc->cols[i].type = MCDC_TYPE_LONG;
                vals[i].v.i = sqlite3_column_int64(st, i);
            } else if (ct == SQLITE_FLOAT) {
                sc->cols[i].type = MCDC_TYPE_DOUBLE;
                vals[i].v.d = sqlite3_column_double(st, i);
            } else {
                sc->cols[i].type = MCDC_TYPE_STRING;
                vals[i].v.s.ptr = (const char *)sqlite3_column_text(st, i);
                vals[i].v.s.len = (size_t)sqlite3_column_bytes(st, i);
            }
        }
        if (rc == 0) rc = cb(sc, vals, payload);
        sim_arena_free(&a);
    }
    if (rc == 0 && r != SQLITE_DONE) rc = mcdc_error_set(MCDC_EINVAL, "query failed: %s", sqlite3_errmsg(s->db));
freeall:
    free(types);
    free(kind);
    free(vals);
done:
    mcdc_schema_free(sc);
    sqlite3_finalize(st);
    mcdc_buf_dispose(&q);
    return rc;
}

static int64_t count_rows(mcdc_sim *s, const char *sql, const mcdc_lsn *bind)
{
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    if (bind) sim__bind_lsn(st, 1, bind);
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int mcdc_sim_get_status(mcdc_sim *s, mcdc_sim_status *out)
{
    memset(out, 0, sizeof *out);
    int rc = sim__load(s);
    if (rc < 0 || (rc = sim__max_lsn(s, &out->max_lsn, &out->max_lsn_commit_us)) < 0) return rc;
    out->clock_us = s->st.clock_us;
    snprintf(out->time_zone, sizeof out->time_zone, "%s", s->st.time_zone);
    out->pending = count_rows(s, "SELECT count(*) FROM sim_tx WHERE lsn > ?", &s->st.processed);
    out->inst = calloc((size_t)s->n_inst + 1, sizeof *out->inst);
    if (!out->inst) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int i = 0; i < s->n_inst; i++) {
        sim_instance *ci = s->inst[i];
        mcdc_sim_instance_status *is = &out->inst[out->n_inst++];
        char sql[200];
        is->name = strdup(ci->name);
        for (int t = 0; t < s->n_tables; t++)
            if (s->tables[t]->id == ci->table_id) {
                is->table = strdup(s->tables[t]->full);
                snprintf(sql, sizeof sql, "SELECT count(*) FROM sim_src_%lld", (long long)s->tables[t]->id);
                is->source_rows = count_rows(s, sql, NULL);
            }
        is->min_lsn = mcdc_lsn_cmp(&ci->start_lsn, &s->st.processed) <= 0 ? ci->start_lsn : mcdc_lsn_zero();
        snprintf(sql, sizeof sql, "SELECT count(*) FROM sim_ct_%lld WHERE \"__$start_lsn\" <= ?", (long long)ci->id);
        is->change_rows = count_rows(s, sql, &s->st.processed);
        if (!is->name || !is->table) {
            mcdc_sim_status_dispose(out);
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        }
    }
    return 0;
}

void mcdc_sim_status_dispose(mcdc_sim_status *st)
{
    if (!st) return;
    for (size_t i = 0; i < st->n_inst; i++) {
        free(st->inst[i].name);
        free(st->inst[i].table);
    }
    free(st->inst);
    st->inst = NULL;
    st->n_inst = 0;
}
