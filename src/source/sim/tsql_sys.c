/*
 * source/sim/tsql_sys.c: what the engine answers for the server itself: the CDC functions
 * (sys.fn_cdc_get_max_lsn, fn_cdc_get_min_lsn, fn_cdc_increment_lsn, fn_cdc_decrement_lsn,
 * fn_cdc_map_lsn_to_time, fn_cdc_map_time_to_lsn), SERVERPROPERTY (sql_variant), the clock
 * (SYSUTCDATETIME, SYSDATETIMEOFFSET, GETDATE, GETUTCDATE), CURRENT_TIMEZONE_ID (product
 * version 16 and up, or engine edition 5 or 8, Azure SQL: elsewhere the name does not compile,
 * as in SQL Server), DB_NAME,
 * OBJECT_ID, HAS_PERMS_BY_NAME, @@SPID/@@VERSION/@@TRANCOUNT/@@ROWCOUNT/@@ERROR, and sys.databases,
 * sys.database_recovery_status and
 * sys.dm_exec_session_wait_stats. Columns and types follow Microsoft's documentation of each
 * object (tests/unit/source/tsql_catalog.c compares them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/log.h"
#include "mcdc/time.h"
#include "source/sim/tsql_sys.h"

static const sim_type T_BIN10 = {ST_BINARY, 10, 0, 0}, T_INT = {ST_INT, 0, 0, 0}, T_DT = {ST_DATETIME, 0, 0, 0},
                      T_SYSNAME = {ST_NVARCHAR, 128, 0, 0}, T_BIT = {ST_BIT, 0, 0, 0}, T_SMALLINT = {ST_SMALLINT, 0, 0, 0},
                      T_BIGINT = {ST_BIGINT, 0, 0, 0}, T_TINYINT = {ST_TINYINT, 0, 0, 0},
                      T_NV60 = {ST_NVARCHAR, 60, 0, 0};

static bool is_fn(const tsql_expr *e, const char *full)
{
    if (!strcasecmp(e->name, full)) return true;
    const char *dot = strchr(full, '.');
    return dot && !strcasecmp(e->name, dot + 1) && !strncasecmp(full, "sys.", 4) && strncasecmp(dot + 1, "fn_cdc", 6);
}

static int nargs(tsql_error *err, tsql_expr *e, int n)
{
    if (e->nargs == n) return 0;
    return tsql_fail(err, e->nargs > n ? 8144 : 313, 16, 1, e->tok->line,
                     e->nargs > n ? "Procedure or function %s has too many arguments specified."
                                  : "An insufficient number of arguments were supplied for the procedure or function %s.",
                     e->name);
}

static int64_t now_us(mcdc_sim_session *s)
{
    int64_t now = mcdc_time_now_us();
    return now > s->sim->st.clock_us ? now : s->sim->st.clock_us;
}

static int bind_val(tsql_compile_ctx *cc, tsql_vcx *out, sim_type t, sim_val v, bool nullable)
{
    out->t = t;
    out->nullable = nullable;
    return tsql_compile_bind(cc, &t, &v, &out->sql);
}

static sim_instance *instance_named(mcdc_sim_session *s, const sim_val *v)
{
    if (v->k != V_STR) return NULL;
    for (int i = 0; i < s->sim->n_inst; i++)
        if (strlen(s->sim->inst[i]->name) == v->u.s.n && !strncasecmp(s->sim->inst[i]->name, v->u.s.p, v->u.s.n))
            return s->sim->inst[i];
    return NULL;
}

/* A constant argument: a literal or a variable's value (copied into a literal node). */
static int constant(mcdc_sim_session *s, tsql_expr **pe, const char *fn, tsql_error *err)
{
    tsql_expr *e = *pe;
    if (e->k == X_LIT || e->k == X_NULL) return 0;
    if (e->k == X_VAR) {
        sess_var *v = sess_var_find(s, e->name, strlen(e->name));
        if (!v) return tsql_fail(err, 137, 15, 2, e->tok->line, "Must declare the scalar variable \"%s\".", e->name);
        tsql_expr *c = sim_arena_alloc(&s->arena, sizeof *c);
        if (!c) return MCDC_ENOMEM;
        *c = *e;
        c->k = v->value.k == V_NULL ? X_NULL : X_LIT;
        c->lit = v->value;
        c->type = v->type;
        *pe = c;
        return 0;
    }
    return tsql_fail(err, 50000, 16, 1, e->tok->line, "%s takes a constant or a variable here (the simulator's subset).", fn);
}

int tsql_sys_function(mcdc_sim_session *s, tsql_compile_ctx *cc, tsql_expr *e, tsql_vcx *out, tsql_error *err)
{
    if ((is_fn(e, "sys.fn_cdc_get_min_lsn") || is_fn(e, "object_id") || is_fn(e, "has_perms_by_name") ||
         is_fn(e, "serverproperty") || is_fn(e, "db_id") || is_fn(e, "sys.fn_cdc_map_time_to_lsn")) && e->nargs > 0) {
        int rc = constant(s, &e->args[0], e->name, err);
        if (rc) return rc;
    }
    int rc, line = e->tok->line;
    tsql_vcx a;
    sim_val v = {0};
    if (is_fn(e, "sys.fn_cdc_get_max_lsn")) {
        if ((rc = nargs(err, e, 0))) return rc;
        mcdc_log(MCDC_LOG_DEBUG, "sim", "query: max_lsn (sys.fn_cdc_get_max_lsn)");
        mcdc_lsn l;
        int64_t us;
        if ((rc = sim__max_lsn(s->sim, &l, &us)) < 0) return rc;
        v.k = V_BIN;
        char *p = sim_arena_alloc(&s->arena, 10);
        if (!p) return MCDC_ENOMEM;
        memcpy(p, l.b, 10);
        v.u.s.p = p;
        v.u.s.n = 10;
        return bind_val(cc, out, T_BIN10, v, true);
    }
    if (is_fn(e, "sys.fn_cdc_get_min_lsn")) {
        if ((rc = nargs(err, e, 1))) return rc;
        sim_val name = e->args[0]->lit;
        sim_instance *ci = instance_named(s, &name);
        mcdc_lsn l = mcdc_lsn_zero();
        if (ci) {
            /* 0x00... to a login that may not see the instance, as SQL Server answers one "not
             * authorized to access the change data" */
            bool readable = sim_login_can_see_instance(&s->grants, s->sim, ci);
            if (readable && mcdc_lsn_cmp(&ci->start_lsn, &s->sim->st.processed) <= 0) l = ci->start_lsn;
        }
        char *p = sim_arena_alloc(&s->arena, 10);
        if (!p) return MCDC_ENOMEM;
        memcpy(p, l.b, 10);
        v.k = V_BIN;
        v.u.s.p = p;
        v.u.s.n = 10;
        return bind_val(cc, out, T_BIN10, v, true);
    }
    if (is_fn(e, "sys.fn_cdc_increment_lsn") || is_fn(e, "sys.fn_cdc_decrement_lsn")) {
        if ((rc = nargs(err, e, 1)) || (rc = tsql_compile_arg(cc, e->args[0], &T_BIN10, &a))) return rc;
        out->t = T_BIN10;
        out->nullable = true;
        out->sql = tsql_compile_fmt(cc, is_fn(e, "sys.fn_cdc_increment_lsn") ? "mc_lsn_inc(%s)" : "mc_lsn_dec(%s)", a.sql, NULL);
        return out->sql ? 0 : MCDC_ENOMEM;
    }
    if (is_fn(e, "sys.fn_cdc_map_lsn_to_time")) {
        if ((rc = nargs(err, e, 1)) || (rc = tsql_compile_arg(cc, e->args[0], &T_BIN10, &a))) return rc;
        out->t = T_DT;
        out->nullable = true;
        out->sql = tsql_compile_fmt(cc, "(SELECT tran_end_time FROM \"cdc.lsn_time_mapping\" WHERE start_lsn = %s)", a.sql, NULL);
        return out->sql ? 0 : MCDC_ENOMEM;
    }
    if (is_fn(e, "sys.fn_cdc_map_time_to_lsn")) {
        if ((rc = nargs(err, e, 2))) return rc;
        tsql_expr *op = e->args[0];
        if (op->k != X_LIT || op->lit.k != V_STR)
            return tsql_fail(err, 22986, 16, 1, line, "The relational operator must be a string.");
        char rel[64];
        snprintf(rel, sizeof rel, "%.*s", (int)(op->lit.u.s.n < 60 ? op->lit.u.s.n : 60), op->lit.u.s.p);
        if ((rc = tsql_compile_arg(cc, e->args[1], &T_DT, &a))) return rc;
        const char *f;
        if (!strcasecmp(rel, "largest less than")) f = "(SELECT max(start_lsn) FROM \"cdc.lsn_time_mapping\" WHERE tran_end_time < %s)";
        else if (!strcasecmp(rel, "largest less than or equal")) f = "(SELECT max(start_lsn) FROM \"cdc.lsn_time_mapping\" WHERE tran_end_time <= %s)";
        else if (!strcasecmp(rel, "smallest greater than")) f = "(SELECT min(start_lsn) FROM \"cdc.lsn_time_mapping\" WHERE tran_end_time > %s)";
        else if (!strcasecmp(rel, "smallest greater than or equal")) f = "(SELECT min(start_lsn) FROM \"cdc.lsn_time_mapping\" WHERE tran_end_time >= %s)";
        else return tsql_fail(err, 313, 16, 3, line, "An insufficient number of arguments were supplied for the procedure or function sys.fn_cdc_map_time_to_lsn.");
        out->t = T_BIN10;
        out->nullable = true;
        out->sql = tsql_compile_fmt(cc, f, a.sql, NULL);
        return out->sql ? 0 : MCDC_ENOMEM;
    }
    if (is_fn(e, "serverproperty")) {
        if ((rc = nargs(err, e, 1))) return rc;
        tsql_expr *p = e->args[0];
        char prop[64] = "";
        if (p->k == X_LIT && p->lit.k == V_STR) snprintf(prop, sizeof prop, "%.*s", (int)(p->lit.u.s.n < 60 ? p->lit.u.s.n : 60), p->lit.u.s.p);
        out->is_variant = true;
        out->nullable = true;
        if (!strcasecmp(prop, "ProductMajorVersion") || !strcasecmp(prop, "ProductVersion") || !strcasecmp(prop, "Edition") ||
            !strcasecmp(prop, "ProductLevel") || !strcasecmp(prop, "ServerName") || !strcasecmp(prop, "Collation")) {
            static const char *const versions[] = {"13.0.7024.30", "14.0.3465.1", "15.0.4355.3", "16.0.4135.4"};
            char txt[128];
            if (!strcasecmp(prop, "ProductMajorVersion")) snprintf(txt, sizeof txt, "%d", s->product_version);
            else if (!strcasecmp(prop, "ProductVersion")) snprintf(txt, sizeof txt, "%s", versions[s->product_version - 13]);
            else if (!strcasecmp(prop, "Edition")) snprintf(txt, sizeof txt, "%s", s->engine_edition == 5 ? "SQL Azure" : "Enterprise Edition (64-bit)");
            else if (!strcasecmp(prop, "ProductLevel")) snprintf(txt, sizeof txt, "RTM");
            else if (!strcasecmp(prop, "Collation")) snprintf(txt, sizeof txt, "SQL_Latin1_General_CP1_CI_AS");
            else snprintf(txt, sizeof txt, "%s", SIM_SERVER_NAME);
            v.k = V_STR;
            v.big = true;
            v.u.s.p = sim_arena_strndup(&s->arena, txt, strlen(txt));
            v.u.s.n = strlen(txt);
            sim_type t = {ST_NVARCHAR, 128, 0, 0};
            return bind_val(cc, out, t, v, true) < 0 ? MCDC_ENOMEM : (out->is_variant = true, 0);
        }
        if (!strcasecmp(prop, "EngineEdition")) {
            v.k = V_INT;
            v.u.i = s->engine_edition;
            return bind_val(cc, out, T_INT, v, true) < 0 ? MCDC_ENOMEM : (out->is_variant = true, 0);
        }
        v.k = V_NULL; /* unknown property: NULL, as SQL Server answers */
        return bind_val(cc, out, T_INT, v, true) < 0 ? MCDC_ENOMEM : (out->is_variant = true, 0);
    }
    if (is_fn(e, "current_timezone_id")) {
        if (s->product_version < 16 && s->engine_edition != 5 && s->engine_edition != 8) /* Azure SQL has it */
            return tsql_fail(err, 195, 15, 10, line, "'CURRENT_TIMEZONE_ID' is not a recognized built-in function name.");
        if ((rc = nargs(err, e, 0))) return rc;
        const char *z = s->sim->st.time_zone;
        v.k = V_STR;
        v.big = true;
        v.u.s.p = z;
        v.u.s.n = strlen(z);
        return bind_val(cc, out, (sim_type){ST_NVARCHAR, 256, 0, 0}, v, false);
    }
    if (is_fn(e, "sysutcdatetime") || is_fn(e, "getutcdate") || is_fn(e, "sysdatetime") || is_fn(e, "getdate") ||
        is_fn(e, "sysdatetimeoffset")) {
        if ((rc = nargs(err, e, 0))) return rc;
        int64_t us = now_us(s);
        bool utc = is_fn(e, "sysutcdatetime") || is_fn(e, "getutcdate");
        int64_t zone_local = s->has_utc_offset ? us + (int64_t)s->utc_offset_min * 60000000
                                               : s->sim->tz ? mcdc_tz_utc_to_local(s->sim->tz, us) : us;
        if (is_fn(e, "sysdatetimeoffset")) {
            int64_t local = zone_local;
            v.k = V_DTO;
            v.u.i = us * TICKS_PER_US;
            v.off = (int16_t)((local - us) / 60000000);
            return bind_val(cc, out, (sim_type){ST_DATETIMEOFFSET, 0, 0, 7}, v, false);
        }
        int64_t w = utc ? us : zone_local;
        v.k = V_DT;
        v.u.i = w * TICKS_PER_US;
        bool dt = is_fn(e, "getdate") || is_fn(e, "getutcdate");
        if (dt) v.u.i = sim_round_datetime(v.u.i);
        return bind_val(cc, out, dt ? T_DT : (sim_type){ST_DATETIME2, 0, 0, 7}, v, false);
    }
    if (is_fn(e, "suser_sname") || is_fn(e, "suser_name") || is_fn(e, "user_name")) {
        v.k = V_STR;
        v.big = true;
        v.u.s.p = s->user;
        v.u.s.n = strlen(s->user);
        return bind_val(cc, out, T_SYSNAME, v, true);
    }
    if (is_fn(e, "db_id")) {
        v.k = V_INT;
        v.u.i = 5;
        if (e->nargs == 1) {
            tsql_expr *p = e->args[0];
            if (p->k != X_LIT || p->lit.k != V_STR) v.k = V_NULL;
            else if (p->lit.u.s.n == 6 && !strncasecmp(p->lit.u.s.p, "master", 6)) v.u.i = 1;
            else if (p->lit.u.s.n != strlen(s->db_name) || strncasecmp(p->lit.u.s.p, s->db_name, p->lit.u.s.n)) v.k = V_NULL;
        }
        return bind_val(cc, out, T_SMALLINT, v, true);
    }
    if (is_fn(e, "db_name")) {
        v.k = V_STR;
        v.big = true;
        v.u.s.p = s->db_name;
        v.u.s.n = strlen(s->db_name);
        return bind_val(cc, out, T_SYSNAME, v, true);
    }
    if (is_fn(e, "object_id")) {
        if (e->nargs < 1 || e->nargs > 2) return nargs(err, e, 1);
        tsql_expr *p = e->args[0];
        v.k = V_NULL;
        if (p->k == X_LIT && p->lit.k == V_STR) {
            char nm[300], sc[129], tb[129];
            snprintf(nm, sizeof nm, "%.*s", (int)(p->lit.u.s.n < 290 ? p->lit.u.s.n : 290), p->lit.u.s.p);
            const char *q = nm;
            size_t dl = strlen(s->db_name);
            if (!strncasecmp(q, s->db_name, dl) && q[dl] == '.') q += dl + 1;
            if (sim_parse_table_name(q, sc, tb) == 0) {
                sim_table *t = sim__find_table(s->sim, sc, tb);
                if (t) { v.k = V_INT; v.u.i = t->object_id; }
                size_t n = strlen(tb);
                if (!t && !strcasecmp(sc, "cdc") && n > 3)
                    for (int i = 0; i < s->sim->n_inst; i++)
                        if (strlen(s->sim->inst[i]->name) == n - 3 && !strncasecmp(s->sim->inst[i]->name, tb, n - 3)) {
                            v.k = V_INT;
                            v.u.i = s->sim->inst[i]->object_id;
                        }
            }
        }
        return bind_val(cc, out, T_INT, v, true);
    }
    if (is_fn(e, "has_perms_by_name")) {
        if (e->nargs < 3) return nargs(err, e, 3);
        tsql_expr *p = e->args[0];
        v.k = V_INT;
        v.u.i = 1;
        if (p->k == X_LIT && p->lit.k == V_STR) {
            char nm[300], sc[129], tb[129];
            snprintf(nm, sizeof nm, "%.*s", (int)(p->lit.u.s.n < 290 ? p->lit.u.s.n : 290), p->lit.u.s.p);
            if (sim_parse_table_name(nm, sc, tb) == 0 && !sim_login_object_exists(s->sim, sc, tb)) v.k = V_NULL;
            else if (sim_parse_table_name(nm, sc, tb) == 0) v.u.i = sim_login_can_read(&s->grants, sc, tb) ? 1 : 0;
        }
        return bind_val(cc, out, T_INT, v, true);
    }
    return -1;
}

int tsql_sys_global(mcdc_sim_session *s, tsql_compile_ctx *cc, const char *name, tsql_vcx *out, tsql_error *err, int line)
{
    sim_val v = {0};
    if (!strcasecmp(name, "@@SPID")) {
        v.k = V_INT;
        v.u.i = s->spid;
        return bind_val(cc, out, T_SMALLINT, v, false);
    }
    if (!strcasecmp(name, "@@ROWCOUNT") || !strcasecmp(name, "@@ERROR")) {
        v.k = V_INT;
        v.u.i = !strcasecmp(name, "@@ERROR") ? s->last_error : s->last_rowcount;
        return bind_val(cc, out, T_INT, v, false);
    }
    if (!strcasecmp(name, "@@TRANCOUNT")) {
        v.k = V_INT;
        v.u.i = s->in_tran;
        return bind_val(cc, out, T_INT, v, false);
    }
    if (!strcasecmp(name, "@@VERSION") || !strcasecmp(name, "@@SERVERNAME") || !strcasecmp(name, "@@LANGUAGE")) {
        char txt[200];
        if (!strcasecmp(name, "@@VERSION"))
            snprintf(txt, sizeof txt, "Microsoft SQL Server %d (simulated by mssql-cdc)",
                     s->product_version == 13 ? 2016 : s->product_version == 14 ? 2017 : s->product_version == 15 ? 2019 : 2022);
        else snprintf(txt, sizeof txt, "%s", !strcasecmp(name, "@@LANGUAGE") ? s->language : SIM_SERVER_NAME);
        v.k = V_STR;
        v.big = true;
        v.u.s.n = strlen(txt);
        v.u.s.p = sim_arena_strndup(&s->arena, txt, v.u.s.n);
        return bind_val(cc, out, (sim_type){ST_NVARCHAR, 300, 0, 0}, v, false);
    }
    return tsql_fail(err, 137, 15, 2, line, "Must declare the scalar variable \"%s\".", name);
}

/* sys.databases (a documented prefix of its columns) and sys.dm_exec_session_wait_stats. */
const tsql_vcol tsql_sys_databases_cols[] = {
    {"name", {ST_NVARCHAR, 128, 0, 0}, true},          {"database_id", {ST_INT, 0, 0, 0}, false},
    {"source_database_id", {ST_INT, 0, 0, 0}, true},   {"owner_sid", {ST_VARBINARY, 85, 0, 0}, true},
    {"create_date", {ST_DATETIME, 0, 0, 0}, false},    {"compatibility_level", {ST_TINYINT, 0, 0, 0}, false},
    {"collation_name", {ST_NVARCHAR, 128, 0, 0}, true}, {"user_access", {ST_TINYINT, 0, 0, 0}, true},
    {"user_access_desc", {ST_NVARCHAR, 60, 0, 0}, true}, {"is_read_only", {ST_BIT, 0, 0, 0}, true},
    {"is_auto_close_on", {ST_BIT, 0, 0, 0}, false},    {"is_auto_shrink_on", {ST_BIT, 0, 0, 0}, true},
    {"state", {ST_TINYINT, 0, 0, 0}, true},            {"state_desc", {ST_NVARCHAR, 60, 0, 0}, true},
    /* is_cdc_enabled comes later in the documented list; it is answered after state_desc */
    {"is_cdc_enabled", {ST_BIT, 0, 0, 0}, false},
};
const int tsql_sys_databases_ncols = 15;

/* sys.database_recovery_status (a documented prefix of its columns): master's and the
 * simulated database's GUIDs (identity.c). */
static const tsql_vcol sys_recovery_cols[] = {
    {"database_id", {ST_INT, 0, 0, 0}, false},
    {"database_guid", {ST_UNIQUEIDENTIFIER, 0, 0, 0}, true},
    {"family_guid", {ST_UNIQUEIDENTIFIER, 0, 0, 0}, true},
};

const tsql_vcol tsql_sys_columns_cols[] = {
    {"object_id", {ST_INT, 0, 0, 0}, false},         {"name", {ST_NVARCHAR, 128, 0, 0}, true},
    {"column_id", {ST_INT, 0, 0, 0}, false},         {"system_type_id", {ST_TINYINT, 0, 0, 0}, false},
    {"user_type_id", {ST_INT, 0, 0, 0}, false},      {"max_length", {ST_SMALLINT, 0, 0, 0}, false},
    {"precision", {ST_TINYINT, 0, 0, 0}, false},     {"scale", {ST_TINYINT, 0, 0, 0}, false},
    {"collation_name", {ST_NVARCHAR, 128, 0, 0}, true}, {"is_nullable", {ST_BIT, 0, 0, 0}, true},
    {"is_ansi_padded", {ST_BIT, 0, 0, 0}, false},    {"is_rowguidcol", {ST_BIT, 0, 0, 0}, false},
    {"is_identity", {ST_BIT, 0, 0, 0}, false},       {"is_computed", {ST_BIT, 0, 0, 0}, false},
};
const int tsql_sys_columns_ncols = 14;

void tsql_sys_type_info(const sim_type *t, int *sys_id, int *maxlen, int *prec, int *scale)
{
    *prec = *scale = 0;
    switch (t->k) {
    case ST_BIT: *sys_id = 104; *maxlen = 1; *prec = 1; break;
    case ST_TINYINT: *sys_id = 48; *maxlen = 1; *prec = 3; break;
    case ST_SMALLINT: *sys_id = 52; *maxlen = 2; *prec = 5; break;
    case ST_INT: *sys_id = 56; *maxlen = 4; *prec = 10; break;
    case ST_BIGINT: *sys_id = 127; *maxlen = 8; *prec = 19; break;
    case ST_DECIMAL: case ST_NUMERIC:
        *sys_id = t->k == ST_DECIMAL ? 106 : 108;
        *maxlen = t->prec <= 9 ? 5 : t->prec <= 19 ? 9 : t->prec <= 28 ? 13 : 17;
        *prec = t->prec; *scale = t->scale;
        break;
    case ST_MONEY: *sys_id = 60; *maxlen = 8; *prec = 19; *scale = 4; break;
    case ST_SMALLMONEY: *sys_id = 122; *maxlen = 4; *prec = 10; *scale = 4; break;
    case ST_REAL: *sys_id = 59; *maxlen = 4; *prec = 24; break;
    case ST_FLOAT: *sys_id = 62; *maxlen = 8; *prec = 53; break;
    case ST_DATE: *sys_id = 40; *maxlen = 3; *prec = 10; break;
    case ST_TIME: *sys_id = 41; *maxlen = t->scale <= 2 ? 3 : t->scale <= 4 ? 4 : 5; *prec = 8 + (t->scale ? t->scale + 1 : 0); *scale = t->scale; break;
    case ST_DATETIME: *sys_id = 61; *maxlen = 8; *prec = 23; *scale = 3; break;
    case ST_DATETIME2: *sys_id = 42; *maxlen = t->scale <= 2 ? 6 : t->scale <= 4 ? 7 : 8; *prec = 19 + (t->scale ? t->scale + 1 : 0); *scale = t->scale; break;
    case ST_SMALLDATETIME: *sys_id = 58; *maxlen = 4; *prec = 16; break;
    case ST_DATETIMEOFFSET: *sys_id = 43; *maxlen = t->scale <= 2 ? 8 : t->scale <= 4 ? 9 : 10; *prec = 26 + (t->scale ? t->scale + 1 : 0); *scale = t->scale; break;
    case ST_CHAR: *sys_id = 175; *maxlen = t->len; break;
    case ST_VARCHAR: *sys_id = 167; *maxlen = t->len; break;
    case ST_NCHAR: *sys_id = 239; *maxlen = t->len < 0 ? -1 : t->len * 2; break;
    case ST_NVARCHAR: *sys_id = 231; *maxlen = t->len < 0 ? -1 : t->len * 2; break;
    case ST_TEXT: *sys_id = 35; *maxlen = 16; break;
    case ST_NTEXT: *sys_id = 99; *maxlen = 16; break;
    case ST_BINARY: *sys_id = 173; *maxlen = t->len; break;
    case ST_VARBINARY: *sys_id = 165; *maxlen = t->len; break;
    case ST_UNIQUEIDENTIFIER: *sys_id = 36; *maxlen = 16; break;
    case ST_XML: *sys_id = 241; *maxlen = -1; break;
    case ST_IMAGE: *sys_id = 34; *maxlen = 16; break;
    case ST_ROWVERSION: *sys_id = 189; *maxlen = 8; break;
    default: *sys_id = 0; *maxlen = 0; break;
    }
}

const tsql_vcol tsql_sys_wait_stats_cols[] = {
    {"session_id", {ST_SMALLINT, 0, 0, 0}, false},        {"wait_type", {ST_NVARCHAR, 60, 0, 0}, false},
    {"waiting_tasks_count", {ST_BIGINT, 0, 0, 0}, false}, {"wait_time_ms", {ST_BIGINT, 0, 0, 0}, false},
    {"max_wait_time_ms", {ST_BIGINT, 0, 0, 0}, false},    {"signal_wait_time_ms", {ST_BIGINT, 0, 0, 0}, false},
};
const int tsql_sys_wait_stats_ncols = 6;

int tsql_sys_object(mcdc_sim_session *s, tsql_compile_ctx *cc, const char *schema, const char *name, const char **from_sql,
                    const tsql_vcol **cols, int *ncols, tsql_error *err)
{
    (void)err;
    if (strcasecmp(schema, "sys")) return -1;
    if (!strcasecmp(name, "databases")) {
        const tsql_vcol *all = tsql_sys_databases_cols;
        sim_val rows[2 * 15];
        memset(rows, 0, sizeof rows);
        const char *names[2] = {"master", s->db_name};
        char created[32];
        sim__datetime_text(s->sim, 0, created);
        for (int r = 0; r < 2; r++) {
            sim_val *v = &rows[r * 15];
            v[0].k = V_STR; v[0].big = true; v[0].u.s.p = names[r]; v[0].u.s.n = strlen(names[r]);
            v[1].k = V_INT; v[1].u.i = r == 0 ? 1 : 5;
            v[4].k = V_DT; v[4].u.i = (int64_t)(mcdc_days_from_civil(2026, 1, 1)) * TICKS_PER_DAY;
            v[5].k = V_INT; v[5].u.i = s->product_version == 13 ? 130 : s->product_version == 14 ? 140 : s->product_version == 15 ? 150 : 160;
            v[6].k = V_STR; v[6].big = true; v[6].u.s.p = "SQL_Latin1_General_CP1_CI_AS"; v[6].u.s.n = 28;
            v[7].k = V_INT; v[7].u.i = 0;
            v[8].k = V_STR; v[8].big = true; v[8].u.s.p = "MULTI_USER"; v[8].u.s.n = 10;
            v[9].k = V_INT; v[9].u.i = 0;
            v[10].k = V_INT; v[10].u.i = 0;
            v[11].k = V_INT; v[11].u.i = 0;
            v[12].k = V_INT; v[12].u.i = 0;
            v[13].k = V_STR; v[13].big = true; v[13].u.s.p = "ONLINE"; v[13].u.s.n = 6;
            v[14].k = V_INT; v[14].u.i = r == 1;
        }
        *cols = all;
        *ncols = 15;
        return tsql_compile_vtab(cc, all, 15, rows, 2, from_sql);
    }
    if (!strcasecmp(name, "database_recovery_status")) {
        static const char master_guid[] = "5a1d0b7e-0000-4000-8000-000000000001";
        const char *guids[2] = {master_guid, s->sim->st.database_guid};
        sim_val rows[2 * 3];
        memset(rows, 0, sizeof rows);
        for (int r = 0; r < 2; r++) {
            sim_val *v = &rows[r * 3];
            v[0] = (sim_val){.k = V_INT, .u.i = r == 0 ? 1 : 5};
            v[1] = (sim_val){.k = V_STR, .u.s = {guids[r], strlen(guids[r])}};
            v[2] = v[1];
        }
        *cols = sys_recovery_cols;
        *ncols = 3;
        return tsql_compile_vtab(cc, sys_recovery_cols, 3, rows, 2, from_sql);
    }
    if (!strcasecmp(name, "columns")) {
        int nr = 0;
        for (int i = 0; i < s->sim->n_tables; i++) nr += s->sim->tables[i]->n_live;
        sim_val *rows = sim_arena_alloc(&s->arena, (size_t)(nr + 1) * 14 * sizeof *rows);
        if (!rows) return MCDC_ENOMEM;
        nr = 0;
        for (int i = 0; i < s->sim->n_tables; i++) {
            sim_table *t = s->sim->tables[i];
            if (!sim_login_can_read(&s->grants, t->schema, t->name)) continue;
            for (int k = 0; k < t->n_live; k++) {
                sim_column *c = &t->cols[t->live[k]];
                sim_val *v = rows + (size_t)nr++ * 14;
                int sys_id, maxlen, prec = 0, scale = 0;
                tsql_sys_type_info(&c->type, &sys_id, &maxlen, &prec, &scale);
                v[0] = (sim_val){.k = V_INT, .u.i = t->object_id};
                v[1] = (sim_val){.k = V_STR, .big = true, .u.s = {c->name, strlen(c->name)}};
                v[2] = (sim_val){.k = V_INT, .u.i = c->column_id};
                v[3] = (sim_val){.k = V_INT, .u.i = sys_id};
                v[4] = (sim_val){.k = V_INT, .u.i = sys_id};
                v[5] = (sim_val){.k = V_INT, .u.i = maxlen};
                v[6] = (sim_val){.k = V_INT, .u.i = prec};
                v[7] = (sim_val){.k = V_INT, .u.i = scale};
                if (sim_type_is_string(&c->type)) v[8] = (sim_val){.k = V_STR, .big = true, .u.s = {"SQL_Latin1_General_CP1_CI_AS", 28}};
                v[9] = (sim_val){.k = V_INT, .u.i = c->nullable};
                v[10] = (sim_val){.k = V_INT, .u.i = 1};
                v[11] = (sim_val){.k = V_INT, .u.i = 0};
                v[12] = (sim_val){.k = V_INT, .u.i = 0};
                v[13] = (sim_val){.k = V_INT, .u.i = 0};
            }
        }
        *cols = tsql_sys_columns_cols;
        *ncols = tsql_sys_columns_ncols;
        return tsql_compile_vtab(cc, tsql_sys_columns_cols, tsql_sys_columns_ncols, rows, nr, from_sql);
    }
    if (!strcasecmp(name, "dm_exec_session_wait_stats")) {
        *cols = tsql_sys_wait_stats_cols;
        *ncols = tsql_sys_wait_stats_ncols;
        return tsql_compile_vtab(cc, tsql_sys_wait_stats_cols, tsql_sys_wait_stats_ncols, NULL, 0, from_sql);
    }
    (void)T_TINYINT; (void)T_NV60; (void)T_BIGINT; (void)T_BIT;
    return -1;
}
