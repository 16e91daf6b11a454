/*
 * source/sim/tsql_proc.c: system procedures, called by EXEC in a batch or by an RPC:
 *   sys.sp_cdc_help_change_data_capture [@source_schema, @source_name]
 *   sys.sp_cdc_get_captured_columns @capture_instance
 *   sys.sp_cdc_get_ddl_history @capture_instance
 *   sys.sp_spaceused [@objname]          (rows as char(20), sizes as varchar(18), as documented)
 *   sys.sp_cdc_enable_table, sys.sp_cdc_disable_table, sys.sp_cdc_cleanup_change_table
 *                                        (for smoke scripts: they write through the simulator)
 * Parameters come named (@capture_instance = ...) or in the documented order; an unknown name
 * is 8145, a missing required one 201, an unknown procedure 2812. Result columns are the ones
 * Microsoft documents for each procedure (tests/unit/source/tsql_catalog.c compares them).
 * Capture instances the login cannot read are left out, as SQL Server does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_ast.h"
#include "source/sim/tsql_sys.h"

#define SYSNAME {ST_NVARCHAR, 128, 0, 0}
#define BIN10   {ST_BINARY, 10, 0, 0}
#define NVMAX   {ST_NVARCHAR, -1, 0, 0}

const tsql_vcol tsql_proc_help_cols[] = {
    {"source_schema", SYSNAME, false}, {"source_table", SYSNAME, false}, {"capture_instance", SYSNAME, false},
    {"object_id", {ST_INT, 0, 0, 0}, false}, {"source_object_id", {ST_INT, 0, 0, 0}, false},
    {"start_lsn", BIN10, true}, {"end_lsn", BIN10, true}, {"supports_net_changes", {ST_BIT, 0, 0, 0}, true},
    {"has_drop_pending", {ST_BIT, 0, 0, 0}, true}, {"role_name", SYSNAME, true}, {"index_name", SYSNAME, true},
    {"filegroup_name", SYSNAME, true}, {"create_date", {ST_DATETIME, 0, 0, 0}, true},
    {"index_column_list", NVMAX, true}, {"captured_column_list", NVMAX, true}};
const int tsql_proc_help_ncols = 15;

const tsql_vcol tsql_proc_captured_cols[] = {
    {"source_schema", SYSNAME, false}, {"source_table", SYSNAME, false}, {"capture_instance", SYSNAME, false},
    {"column_name", SYSNAME, false}, {"column_id", {ST_INT, 0, 0, 0}, true}, {"column_ordinal", {ST_INT, 0, 0, 0}, false},
    {"data_type", SYSNAME, false}, {"character_maximum_length", {ST_INT, 0, 0, 0}, true},
    {"numeric_precision", {ST_TINYINT, 0, 0, 0}, true}, {"numeric_precision_radix", {ST_SMALLINT, 0, 0, 0}, true},
    {"numeric_scale", {ST_INT, 0, 0, 0}, true}, {"datetime_precision", {ST_SMALLINT, 0, 0, 0}, true}};
const int tsql_proc_captured_ncols = 12;

const tsql_vcol tsql_proc_ddl_cols[] = {
    {"source_schema", SYSNAME, false}, {"source_table", SYSNAME, false}, {"capture_instance", SYSNAME, false},
    {"required_column_update", {ST_BIT, 0, 0, 0}, false}, {"ddl_command", NVMAX, false},
    {"ddl_lsn", BIN10, false}, {"ddl_time", {ST_DATETIME, 0, 0, 0}, false}};
const int tsql_proc_ddl_ncols = 7;

const tsql_vcol tsql_proc_spaceused_cols[] = {
    {"name", {ST_NVARCHAR, 128, 0, 0}, true}, {"rows", {ST_CHAR, 20, 0, 0}, true},
    {"reserved", {ST_VARCHAR, 18, 0, 0}, true}, {"data", {ST_VARCHAR, 18, 0, 0}, true},
    {"index_size", {ST_VARCHAR, 18, 0, 0}, true}, {"unused", {ST_VARCHAR, 18, 0, 0}, true}};
const int tsql_proc_spaceused_ncols = 6;

/* ---- parameters ------------------------------------------------------------------------- */

typedef struct pspec {
    const char *name;
    bool        required;
} pspec;

/* Match RPC/EXEC parameters to a procedure's: out[i] for spec i, NULL when not given. */
static int match(const char *proc, const pspec *spec, int nspec, const mcdc_sim_param *ps, int n, const sim_val **out,
                 tsql_error *err)
{
    for (int i = 0; i < nspec; i++) out[i] = NULL;
    for (int i = 0; i < n; i++) {
        int at = i;
        if (ps[i].name && *ps[i].name) {
            at = -1;
            for (int k = 0; k < nspec; k++)
                if (!strcasecmp(ps[i].name, spec[k].name)) at = k;
            if (at < 0)
                return tsql_fail(err, 8145, 16, 1, 1, "%s is not a parameter for procedure %s.", ps[i].name, proc);
        } else if (at >= nspec) {
            return tsql_fail(err, 8144, 16, 2, 1, "Procedure or function %s has too many arguments specified.", proc);
        }
        out[at] = &ps[i].value;
    }
    for (int k = 0; k < nspec; k++)
        if (spec[k].required && (!out[k] || out[k]->k == V_NULL))
            return tsql_fail(err, 201, 16, 4, 1, "Procedure or function '%s' expects parameter '%s', which was not supplied.",
                             proc, spec[k].name);
    return 0;
}

static bool val_is(const sim_val *v, const char *s)
{
    return v && v->k == V_STR && strlen(s) == v->u.s.n && !strncasecmp(v->u.s.p, s, v->u.s.n);
}

static char *val_str(mcdc_sim_session *s, const sim_val *v)
{
    if (!v || v->k != V_STR) return NULL;
    return sim_arena_strndup(&s->arena, v->u.s.p, v->u.s.n);
}

static sim_val str(const char *p)
{
    sim_val v = {0};
    if (!p) return v;
    v.k = V_STR;
    v.big = true;
    v.u.s.p = p;
    v.u.s.n = strlen(p);
    return v;
}

static sim_val num(int64_t i)
{
    sim_val v = {0};
    v.k = V_INT;
    v.u.i = i;
    return v;
}

static sim_val bin(mcdc_sim_session *s, const mcdc_lsn *l)
{
    sim_val v = {0};
    char *p = sim_arena_alloc(&s->arena, 10);
    if (!p) return v;
    memcpy(p, l->b, 10);
    v.k = V_BIN;
    v.u.s.p = p;
    v.u.s.n = 10;
    return v;
}

/* One result set from values in C. */
static int emit(mcdc_sim_session *s, const tsql_vcol *cols, int ncols, const sim_val *rows, int nrows)
{
    int rc = sess_flush_done(s, true);
    if (rc < 0) return rc;
    mcdc_sim_rcol rc_cols[32];
    for (int i = 0; i < ncols; i++) rc_cols[i] = (mcdc_sim_rcol){cols[i].name, cols[i].t, cols[i].nullable, false};
    if (s->sink->columns(s->sink->payload, rc_cols, ncols)) return MCDC_ERROR;
    for (int r = 0; r < nrows; r++)
        if (s->sink->row(s->sink->payload, rows + (size_t)r * ncols, ncols)) return MCDC_ERROR;
    return sess_done(s, MCDC_SIM_DONE_STMT, s->nocount ? 0 : MCDC_SIM_DONE_COUNT, CURCMD_SELECT, nrows);
}

static sim_table *table_of(mcdc_sim *sim, const sim_instance *ci)
{
    for (int i = 0; i < sim->n_tables; i++)
        if (sim->tables[i]->id == ci->table_id) return sim->tables[i];
    return NULL;
}

static bool can_read_instance(mcdc_sim_session *s, const sim_instance *ci)
{
    return sim_login_can_see_instance(&s->grants, s->sim, ci);
}

static sim_instance *find_ci(mcdc_sim_session *s, const char *proc, const sim_val *v, tsql_error *err, int *rc)
{
    *rc = 0;
    char *name = val_str(s, v);
    sim_instance *ci = name ? sim__find_instance(s->sim, name) : NULL;
    if (!ci || !can_read_instance(s, ci)) {
        *rc = tsql_fail(err, 22985, 16, 1, 1, "Could not find the capture instance '%s' in %s. Specify a valid capture instance.",
                        name ? name : "", proc);
        (void)proc;
        return NULL;
    }
    return ci;
}

static char *bracket_list(mcdc_sim_session *s, const char *const *names, int n)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    for (int i = 0; i < n; i++) {
        mcdc_buf_puts(&b, i ? ", [" : "[");
        for (const char *p = names[i]; *p; p++) {
            mcdc_buf_putc(&b, *p);
            if (*p == ']') mcdc_buf_putc(&b, ']');
        }
        mcdc_buf_putc(&b, ']');
    }
    char *out = sim_arena_strndup(&s->arena, b.ptr ? b.ptr : "", b.len);
    mcdc_buf_dispose(&b);
    return out;
}

/* ---- the procedures ---------------------------------------------------------------------- */

static int help_cdc(mcdc_sim_session *s, const mcdc_sim_param *ps, int n, tsql_error *err)
{
    static const pspec spec[] = {{"@source_schema", false}, {"@source_name", false}};
    const sim_val *a[2];
    int rc = match("sys.sp_cdc_help_change_data_capture", spec, 2, ps, n, a, err);
    if (rc) return rc;
    if ((a[0] && a[0]->k != V_NULL) != (a[1] && a[1]->k != V_NULL))
        return tsql_fail(err, 22901, 16, 1, 1, "Source schema and source name must both be given or both be NULL.");
    mcdc_sim *sim = s->sim;
    sim_val *rows = sim_arena_alloc(&s->arena, (size_t)(sim->n_inst + 1) * 15 * sizeof *rows);
    if (!rows) return MCDC_ENOMEM;
    int nr = 0;
    for (int i = 0; i < sim->n_inst; i++) {
        sim_instance *ci = sim->inst[i];
        sim_table *t = table_of(sim, ci);
        if (!t || !can_read_instance(s, ci)) continue;
        if (a[0] && a[0]->k != V_NULL && (!val_is(a[0], t->schema) || !val_is(a[1], t->name))) continue;
        sim_val *v = rows + (size_t)nr * 15;
        v[0] = str(t->schema);
        v[1] = str(t->name);
        v[2] = str(ci->name);
        v[3] = num(ci->object_id);
        v[4] = num(t->object_id);
        mcdc_lsn zero = mcdc_lsn_zero();
        v[5] = mcdc_lsn_cmp(&ci->start_lsn, &sim->st.processed) <= 0 ? bin(s, &ci->start_lsn) : bin(s, &zero);
        v[7] = num(0);
        v[8] = (sim_val){0};
        char *ix = sim_arena_alloc(&s->arena, strlen(t->name) + 4);
        if (!ix) return MCDC_ENOMEM;
        sprintf(ix, "PK_%s", t->name);
        v[10] = str(ix);
        v[11] = (sim_val){0}; /* NULL: the database's default filegroup */
        v[12].k = V_DT;
        v[12].u.i = sim__local_ticks(sim, ci->create_us);
        const char **keys = sim_arena_alloc(&s->arena, (size_t)(t->n_keys + 1) * sizeof *keys);
        const char **capt = sim_arena_alloc(&s->arena, (size_t)(ci->n_cols + 1) * sizeof *capt);
        if (!keys || !capt) return MCDC_ENOMEM;
        for (int k = 0; k < t->n_keys; k++) keys[k] = t->cols[t->keys[k]].name;
        for (int k = 0; k < ci->n_cols; k++) capt[k] = ci->cols[k].name;
        v[13] = str(bracket_list(s, keys, t->n_keys));
        v[14] = str(bracket_list(s, capt, ci->n_cols));
        nr++;
    }
    return emit(s, tsql_proc_help_cols, 15, rows, nr);
}

static int captured_columns(mcdc_sim_session *s, const mcdc_sim_param *ps, int n, tsql_error *err)
{
    static const pspec spec[] = {{"@capture_instance", true}};
    const sim_val *a[1];
    int rc = match("sys.sp_cdc_get_captured_columns", spec, 1, ps, n, a, err);
    if (rc) return rc;
    sim_instance *ci = find_ci(s, "sys.sp_cdc_get_captured_columns", a[0], err, &rc);
    if (!ci) return rc;
    sim_table *t = table_of(s->sim, ci);
    sim_val *rows = sim_arena_alloc(&s->arena, (size_t)(ci->n_cols + 1) * 12 * sizeof *rows);
    if (!rows || !t) return MCDC_ENOMEM;
    for (int k = 0; k < ci->n_cols; k++) {
        sim_captured *c = &ci->cols[k];
        sim_val *v = rows + (size_t)k * 12;
        char tn[64];
        sim_type_format(tn, sizeof tn, &c->type);
        char *paren = strchr(tn, '(');
        if (paren) *paren = 0;
        v[0] = str(t->schema);
        v[1] = str(t->name);
        v[2] = str(ci->name);
        v[3] = str(c->name);
        bool live = false;
        for (int q = 0; q < t->n_cols; q++)
            if (t->cols[q].column_id == c->column_id && !t->cols[q].dropped) live = true;
        v[4] = live ? num(c->column_id) : (sim_val){0};
        v[5] = num(c->ordinal);
        v[6] = str(sim_arena_strndup(&s->arena, tn, strlen(tn)));
        const sim_type *ty = &c->type;
        bool strt = sim_type_is_string(ty) || ty->k == ST_BINARY || ty->k == ST_VARBINARY || ty->k == ST_ROWVERSION;
        if (strt) v[7] = num(ty->len);
        bool numt = sim_type_is_numeric(ty);
        if (numt) {
            int p = ty->k == ST_TINYINT ? 3 : ty->k == ST_SMALLINT ? 5 : ty->k == ST_INT ? 10 : ty->k == ST_BIGINT ? 19
                  : ty->k == ST_MONEY ? 19 : ty->k == ST_SMALLMONEY ? 10 : ty->k == ST_REAL ? 24 : ty->k == ST_FLOAT ? 53 : ty->prec;
            v[8] = num(p);
            v[9] = num(ty->k == ST_REAL || ty->k == ST_FLOAT ? 2 : 10);
            v[10] = num(ty->k == ST_MONEY || ty->k == ST_SMALLMONEY ? 4 : ty->k == ST_DECIMAL || ty->k == ST_NUMERIC ? ty->scale : 0);
        }
        if (ty->k == ST_DATETIME2 || ty->k == ST_TIME || ty->k == ST_DATETIMEOFFSET) v[11] = num(ty->scale);
        else if (ty->k == ST_DATETIME) v[11] = num(3);
        else if (ty->k == ST_DATE || ty->k == ST_SMALLDATETIME) v[11] = num(0);
    }
    return emit(s, tsql_proc_captured_cols, 12, rows, ci->n_cols);
}

static int ddl_history(mcdc_sim_session *s, const mcdc_sim_param *ps, int n, tsql_error *err)
{
    static const pspec spec[] = {{"@capture_instance", true}};
    const sim_val *a[1];
    int rc = match("sys.sp_cdc_get_ddl_history", spec, 1, ps, n, a, err);
    if (rc) return rc;
    sim_instance *ci = find_ci(s, "sys.sp_cdc_get_ddl_history", a[0], err, &rc);
    if (!ci) return rc;
    sim_table *t = table_of(s->sim, ci);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->sim->db, "SELECT required_column_update, ddl_command, ddl_lsn, ddl_time FROM sim_ddl"
                           " WHERE instance_id = ? AND ddl_lsn <= (SELECT processed_lsn FROM sim_state) ORDER BY ddl_lsn",
                           -1, &st, NULL) != SQLITE_OK)
        return sim__sqlite_error(s->sim, SQLITE_ERROR, "reading DDL history");
    sqlite3_bind_int64(st, 1, ci->id);
    int cap = 16, nr = 0;
    sim_val *rows = sim_arena_alloc(&s->arena, (size_t)cap * 7 * sizeof *rows);
    while (rows && sqlite3_step(st) == SQLITE_ROW) {
        if (nr == cap) {
            sim_val *nw = sim_arena_alloc(&s->arena, (size_t)cap * 2 * 7 * sizeof *nw);
            if (!nw) { rows = NULL; break; }
            memcpy(nw, rows, (size_t)cap * 7 * sizeof *nw);
            rows = nw;
            cap *= 2;
        }
        sim_val *v = rows + (size_t)nr * 7;
        v[0] = str(t->schema);
        v[1] = str(t->name);
        v[2] = str(ci->name);
        v[3] = num(sqlite3_column_int(st, 0));
        v[4] = str(sim_arena_strndup(&s->arena, (const char *)sqlite3_column_text(st, 1), (size_t)sqlite3_column_bytes(st, 1)));
        mcdc_lsn l;
        sim__column_lsn(st, 2, &l);
        v[5] = bin(s, &l);
        sim_type dt = {ST_DATETIME, 0, 0, 0};
        if (sim_read_col(st, 3, &dt, &s->arena, &v[6]) < 0) { rows = NULL; break; }
        nr++;
    }
    sqlite3_finalize(st);
    if (!rows) return MCDC_ENOMEM;
    return emit(s, tsql_proc_ddl_cols, 7, rows, nr);
}

static int spaceused(mcdc_sim_session *s, const mcdc_sim_param *ps, int n, tsql_error *err)
{
    static const pspec spec[] = {{"@objname", false}, {"@updateusage", false}, {"@mode", false}, {"@oneresultset", false},
                                 {"@include_total_xtp_storage", false}};
    const sim_val *a[5];
    int rc = match("sys.sp_spaceused", spec, 5, ps, n, a, err);
    if (rc) return rc;
    char *obj = val_str(s, a[0]);
    if (!obj)
        return tsql_fail(err, 15009, 16, 1, 1, "sp_spaceused without @objname is outside the simulator's subset; name a table.");
    char sc[129], nm[129];
    const char *table = NULL;
    char sql[200];
    if (sim_parse_table_name(obj, sc, nm) == 0) {
        sim_table *t = sim__find_table(s->sim, sc, nm);
        sim_instance *ci = NULL;
        size_t l = strlen(nm);
        if (!t && !strcasecmp(sc, "cdc") && l > 3) {
            char base[129];
            snprintf(base, sizeof base, "%.*s", (int)(l - 3), nm);
            ci = sim__find_instance(s->sim, base);
        }
        if (t) snprintf(sql, sizeof sql, "SELECT count(*) FROM sim_src_%lld", (long long)t->id), table = t->name;
        else if (ci) snprintf(sql, sizeof sql, "SELECT count(*) FROM \"cdc.%s_CT\"", ci->name), table = nm;
    }
    if (!table)
        return tsql_fail(err, 15009, 16, 1, 1, "The object '%s' does not exist in database '%s' or is invalid for this operation.",
                         obj, s->db_name);
    sqlite3_stmt *st;
    int64_t rows_n = 0;
    if (sqlite3_prepare_v2(s->sim->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        rows_n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    char rows_txt[24], kb[32];
    snprintf(rows_txt, sizeof rows_txt, "%-20lld", (long long)rows_n);
    snprintf(kb, sizeof kb, "%lld KB", (long long)((rows_n * 100 + 8191) / 8192 * 8));
    sim_val v[6] = {str(table), str(sim_arena_strndup(&s->arena, rows_txt, 20)), str(sim_arena_strndup(&s->arena, kb, strlen(kb))),
                    str(sim_arena_strndup(&s->arena, kb, strlen(kb))), str("0 KB"), str("0 KB")};
    for (int i = 1; i < 6; i++) v[i].big = false;
    return emit(s, tsql_proc_spaceused_cols, 6, v, 1);
}

static int write_refused(mcdc_sim_session *s, const char *proc, tsql_error *err)
{
    return tsql_fail(err, 22904, 16, 1, 1, "Only members of the sysadmin or db_owner role can run %s (login '%s').", proc, s->user);
}

static int enable_table(mcdc_sim_session *s, const mcdc_sim_param *ps, int n, tsql_error *err)
{
    static const pspec spec[] = {{"@source_schema", true}, {"@source_name", true}, {"@role_name", false},
                                 {"@capture_instance", false}, {"@supports_net_changes", false}, {"@index_name", false},
                                 {"@captured_column_list", false}, {"@filegroup_name", false}, {"@allow_partition_switch", false}};
    const sim_val *a[9];
    int rc = match("sys.sp_cdc_enable_table", spec, 9, ps, n, a, err);
    if (rc) return rc;
    if (s->grants.restricted) return write_refused(s, "sys.sp_cdc_enable_table", err);
    char table[300];
    snprintf(table, sizeof table, "%s.%s", val_str(s, a[0]), val_str(s, a[1]));
    if (mcdc_sim_enable_columns(s->sim, table, val_str(s, a[3]), val_str(s, a[6]), MCDC_SIM_NOW) < 0)
        return tsql_from_mcdc_error(err, 1);
    return 0;
}

static int disable_table(mcdc_sim_session *s, const mcdc_sim_param *ps, int n, tsql_error *err)
{
    static const pspec spec[] = {{"@source_schema", true}, {"@source_name", true}, {"@capture_instance", true}};
    const sim_val *a[3];
    int rc = match("sys.sp_cdc_disable_table", spec, 3, ps, n, a, err);
    if (rc) return rc;
    if (s->grants.restricted) return write_refused(s, "sys.sp_cdc_disable_table", err);
    char *ci = val_str(s, a[2]);
    if (ci && !strcasecmp(ci, "all")) {
        char *sc = val_str(s, a[0]), *nm = val_str(s, a[1]);
        sim_table *t = sc && nm ? sim__find_table(s->sim, sc, nm) : NULL;
        for (int i = 0; t && i < t->n_inst;) {
            if (mcdc_sim_disable(s->sim, t->inst[i]->name, MCDC_SIM_NOW) < 0) return tsql_from_mcdc_error(err, 1);
            sim__load(s->sim);
            t = sim__find_table(s->sim, sc, nm);
        }
        return 0;
    }
    if (mcdc_sim_disable(s->sim, ci, MCDC_SIM_NOW) < 0) return tsql_from_mcdc_error(err, 1);
    return 0;
}

static int cleanup(mcdc_sim_session *s, const mcdc_sim_param *ps, int n, tsql_error *err)
{
    static const pspec spec[] = {{"@capture_instance", true}, {"@low_water_mark", false}, {"@threshold", false},
                                 {"@fCleanupFailed", false}};
    const sim_val *a[4];
    int rc = match("sys.sp_cdc_cleanup_change_table", spec, 4, ps, n, a, err);
    if (rc) return rc;
    if (s->grants.restricted) return write_refused(s, "sys.sp_cdc_cleanup_change_table", err);
    if (!find_ci(s, "sys.sp_cdc_cleanup_change_table", a[0], err, &rc)) return rc;
    /* the low water mark as a retention: everything committed before its commit time goes */
    mcdc_lsn max;
    int64_t max_us, lwm_us = 0;
    if ((rc = sim__max_lsn(s->sim, &max, &max_us)) < 0) return rc;
    if (a[1] && a[1]->k == V_BIN && a[1]->u.s.n == 10) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->sim->db, "SELECT end_utc_us FROM sim_tx WHERE lsn = ? AND kind IN (1, 2, 3)", -1, &st, NULL) != SQLITE_OK)
            return sim__sqlite_error(s->sim, SQLITE_ERROR, "reading the mapping");
        sqlite3_bind_blob(st, 1, a[1]->u.s.p, 10, SQLITE_TRANSIENT);
        bool found = sqlite3_step(st) == SQLITE_ROW;
        if (found) lwm_us = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (!found) {
            char lo[MCDC_LSN_STRLEN], mn[MCDC_LSN_STRLEN], mx[MCDC_LSN_STRLEN];
            mcdc_lsn given, minl;
            memcpy(given.b, a[1]->u.s.p, 10);
            sim_instance *ci = sim__find_instance(s->sim, val_str(s, a[0]));
            minl = ci && mcdc_lsn_cmp(&ci->start_lsn, &s->sim->st.processed) <= 0 ? ci->start_lsn : mcdc_lsn_zero();
            return tsql_fail(err, 22964, 16, 1, 1, "LSN %s, specified as the new low endpoint for the change table associated "
                             "with capture instance '%s', is not within the Change Data Capture timeline [%s, %s].",
                             mcdc_lsn_format(lo, &given), val_str(s, a[0]), mcdc_lsn_format(mn, &minl), mcdc_lsn_format(mx, &max));
        }
    } else {
        lwm_us = max_us;
    }
    int64_t thr = a[2] && a[2]->k == V_INT ? a[2]->u.i : 5000;
    mcdc_sim_cleanup_result r;
    if (mcdc_sim_cleanup(s->sim, max_us - lwm_us, MCDC_SIM_NOW, thr, -1, &r) < 0) return tsql_from_mcdc_error(err, 1);
    return 0;
}

int tsql_call_proc(mcdc_sim_session *s, const char *proc, const mcdc_sim_param *params, int nparams, tsql_error *err)
{
    const char *b = proc;
    if (!strncasecmp(b, "master.", 7)) b += 7;
    if (!strncasecmp(b, "dbo.", 4) || !strncasecmp(b, ".", 1)) b += *b == '.' ? 1 : 4;
    bool sys = !strncasecmp(b, "sys.", 4);
    if (sys) b += 4;
    s->proc_status = 0;
    int rc = sim__load(s->sim);
    if (rc < 0) return rc;
    static const struct {
        const char *name;
        int (*fn)(mcdc_sim_session *, const mcdc_sim_param *, int, tsql_error *);
    } procs[] = {{"sp_cdc_help_change_data_capture", help_cdc}, {"sp_cdc_get_captured_columns", captured_columns},
                 {"sp_cdc_get_ddl_history", ddl_history},      {"sp_spaceused", spaceused},
                 {"sp_cdc_enable_table", enable_table},        {"sp_cdc_disable_table", disable_table},
                 {"sp_cdc_cleanup_change_table", cleanup}};
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        if (!strcasecmp(b, procs[i].name)) {
            rc = procs[i].fn(s, params, nparams, err);
            if (rc == TSQL_ESQL) { /* raised inside the procedure: it names itself, and a failure returns 1 */
                snprintf(err->proc, sizeof err->proc, "%s", procs[i].name);
                s->proc_status = 1;
            }
            return rc;
        }
    return tsql_fail(err, 2812, 16, 62, 1, "Could not find stored procedure '%s'.", proc);
}

/* EXEC [@rc =] name [[@p =] value [OUTPUT] [, ...]] in a batch. */
int tsql_run_exec(mcdc_sim_session *s, const tsql_tok *t, int n, bool implicit, tsql_error *err)
{
    int k = implicit ? 0 : 1, rc;
    const char *rc_var = NULL;
    if (k + 1 < n && t[k].k == TK_VAR && tsql_tok_is(&t[k + 1], "=")) {
        rc_var = sim_arena_strndup(&s->arena, t[k].v, t[k].vn);
        k += 2;
    }
    if (k >= n || (t[k].k != TK_ID && t[k].k != TK_QID)) return tsql_syntax(err, &t[k]);
    mcdc_buf name = MCDC_BUF_INIT(1024);
    mcdc_buf_put(&name, t[k].v, t[k].vn);
    int line = t[k].line;
    k++;
    while (k < n && tsql_tok_is(&t[k], ".")) {
        mcdc_buf_putc(&name, '.');
        k++;
        if (k < n && tsql_tok_is(&t[k], ".")) continue;
        if (k >= n || (t[k].k != TK_ID && t[k].k != TK_QID)) { mcdc_buf_dispose(&name); return tsql_syntax(err, &t[k]); }
        mcdc_buf_put(&name, t[k].v, t[k].vn);
        k++;
    }
    char *proc = sim_arena_strndup(&s->arena, name.ptr, name.len);
    mcdc_buf_dispose(&name);
    if (!proc) return MCDC_ENOMEM;
    mcdc_sim_param *ps = sim_arena_alloc(&s->arena, (size_t)(n + 1) * sizeof *ps);
    int np = 0;
    if (!ps) return MCDC_ENOMEM;
    while (k < n) {
        mcdc_sim_param *p = &ps[np];
        memset(p, 0, sizeof *p);
        if (t[k].k == TK_VAR && k + 1 < n && tsql_tok_is(&t[k + 1], "=")) {
            p->name = sim_arena_strndup(&s->arena, t[k].v, t[k].vn);
            k += 2;
        } else if (np > 0 && ps[np - 1].name) {
            return tsql_fail(err, 119, 15, 1, t[k].line, "Must pass parameter number %d and subsequent parameters as '@name = "
                             "value'. After the form '@name = value' has been used, all subsequent parameters must be passed "
                             "in the form '@name = value'.", np + 1);
        }
        bool neg = k < n && tsql_tok_is(&t[k], "-");
        if (neg) k++;
        if (k >= n) return tsql_syntax(err, &t[k]);
        if (t[k].k == TK_VAR) {
            sess_var *v = sess_var_find(s, t[k].v, t[k].vn);
            if (!v) return tsql_fail(err, 137, 15, 2, t[k].line, "Must declare the scalar variable \"%.*s\".", (int)t[k].vn, t[k].v);
            p->type = v->type;
            p->value = v->value;
        } else if (tsql_tok_is(&t[k], "NULL") || tsql_tok_is(&t[k], "DEFAULT")) {
            p->type.k = ST_INT;
        } else if (t[k].k == TK_ID || t[k].k == TK_QID) { /* a bare word is a string, as SQL Server reads it */
            p->type = (sim_type){ST_NVARCHAR, (int)t[k].vn, 0, 0};
            p->value.k = V_STR;
            p->value.u.s.p = t[k].v;
            p->value.u.s.n = t[k].vn;
        } else if (tsql_literal(&s->arena, &t[k], neg, &p->value, &p->type) < 0) {
            return tsql_syntax(err, &t[k]);
        }
        k++;
        if (k < n && (tsql_tok_is(&t[k], "OUTPUT") || tsql_tok_is(&t[k], "OUT"))) { p->output = true; k++; }
        np++;
        if (k < n && !tsql_tok_is(&t[k], ",")) return tsql_syntax(err, &t[k]);
        if (k < n) k++;
    }
    (void)line;
    const char *base = !strncasecmp(proc, "sys.", 4) ? proc + 4 : proc;
    if (!strcasecmp(base, "sp_executesql") || !strcasecmp(base, "sp_prepare") || !strcasecmp(base, "sp_execute") ||
        !strcasecmp(base, "sp_prepexec") || !strcasecmp(base, "sp_unprepare")) {
        /* as an RPC would run it, with the batch's variables set aside */
        sess_var *saved = s->vars;
        int n_saved = s->n_vars, cap_saved = s->cap_vars;
        s->vars = NULL;
        s->n_vars = s->cap_vars = 0;
        rc = sess_rpc(s, proc, 0, ps, np);
        s->vars = saved;
        s->n_vars = n_saved;
        s->cap_vars = cap_saved;
        s->in_proc = false;
        return rc;
    }
    bool was = s->in_proc;
    s->in_proc = true;
    rc = tsql_call_proc(s, proc, ps, np, err);
    s->in_proc = was;
    if (rc) return rc;
    if (rc_var) {
        sess_var *v = sess_var_find(s, rc_var, strlen(rc_var));
        if (!v) return tsql_fail(err, 137, 15, 2, line, "Must declare the scalar variable \"%s\".", rc_var);
        v->value = num(s->proc_status);
    }
    if ((rc = sess_flush_done(s, true)) < 0) return rc;
    if (s->sink->return_status(s->sink->payload, s->proc_status)) return MCDC_ERROR;
    return sess_done(s, MCDC_SIM_DONE_PROC, 0, CURCMD_EXECUTE, 0);
}
