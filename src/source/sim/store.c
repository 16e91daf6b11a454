/*
 * source/sim/store.c: the simulator's SQLite file: opening and creating it, the state row,
 * the catalog (tables, columns, capture instances), the virtual clock, LSN allocation and the
 * views that carry SQL Server's names.
 *
 * Guarantees: the file is opened in WAL mode with a busy timeout, so one writer and many
 * readers work at once; every write goes through sim__begin/sim__commit (BEGIN IMMEDIATE, the
 * state and catalog reloaded inside the lock), so two writer processes never interleave.
 * Invariants S2 and S3 (sim_int.h) are kept here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "mcdc/fs.h"
#include "mcdc/time.h"
#include "source/sim/sim_int.h"

#define SIM_FORMAT 1
/* µs from 0001-01-01 to 1970-01-01 */
#define EPOCH0_US (INT64_C(62135596800) * 1000000)

static const char schema_sql[] =
    "CREATE TABLE sim_state(id INTEGER PRIMARY KEY CHECK (id = 1), format INTEGER NOT NULL, db_name TEXT NOT NULL,"
    " time_zone TEXT NOT NULL, clock_us INTEGER NOT NULL, lsn_us INTEGER NOT NULL, lsn_slot INTEGER NOT NULL,"
    " processed_lsn BLOB NOT NULL, next_xact INTEGER NOT NULL, next_object_id INTEGER NOT NULL);"
    "CREATE TABLE sim_tables(id INTEGER PRIMARY KEY, schema_name TEXT NOT NULL, table_name TEXT NOT NULL,"
    " object_id INTEGER NOT NULL, created_us INTEGER NOT NULL);"
    "CREATE TABLE sim_columns(table_id INTEGER NOT NULL, column_id INTEGER NOT NULL, name TEXT NOT NULL,"
    " type TEXT NOT NULL, nullable INTEGER NOT NULL, key_ordinal INTEGER NOT NULL, dropped INTEGER NOT NULL,"
    " PRIMARY KEY (table_id, column_id));"
    "CREATE TABLE sim_instances(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE,"
    " table_id INTEGER NOT NULL, object_id INTEGER NOT NULL, start_lsn BLOB NOT NULL, create_us INTEGER NOT NULL,"
    " create_date TEXT NOT NULL);"
    "CREATE TABLE sim_captured(instance_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, column_id INTEGER NOT NULL,"
    " name TEXT NOT NULL, type TEXT NOT NULL, PRIMARY KEY (instance_id, ordinal));"
    "CREATE TABLE sim_tx(lsn BLOB PRIMARY KEY, kind INTEGER NOT NULL, begin_lsn BLOB NOT NULL,"
    " begin_time TEXT NOT NULL, end_time TEXT NOT NULL, end_utc_us INTEGER NOT NULL, tran_id BLOB NOT NULL)"
    " WITHOUT ROWID;"
    "CREATE TABLE sim_ddl(instance_id INTEGER NOT NULL, ddl_lsn BLOB NOT NULL, ddl_time TEXT NOT NULL,"
    " ddl_time_us INTEGER NOT NULL, ddl_command TEXT NOT NULL, column_name TEXT,"
    " required_column_update INTEGER NOT NULL);"
    "CREATE TABLE sim_retro(us INTEGER PRIMARY KEY, slot INTEGER NOT NULL);";

int sim__sqlite_error(mcdc_sim *s, int rc, const char *what)
{
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        return mcdc_error_set(MCDC_ELOCKED, "%s: %s: the database is busy (another writer holds it)", s->path, what);
    return mcdc_error_set(rc == SQLITE_NOMEM ? MCDC_ENOMEM : rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? MCDC_ECORRUPT : MCDC_EIO,
                          "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

int sim__exec_sql(mcdc_sim *s, const char *sql)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sim__sqlite_error(s, rc, "statement failed");
}

int sim__bind_lsn(sqlite3_stmt *st, int idx, const mcdc_lsn *l)
{
    return sqlite3_bind_blob(st, idx, l->b, 10, SQLITE_TRANSIENT);
}

int sim__column_lsn(sqlite3_stmt *st, int idx, mcdc_lsn *out)
{
    const void *p = sqlite3_column_blob(st, idx);
    int n = sqlite3_column_bytes(st, idx);
    memset(out->b, 0, 10);
    if (p && n > 0)
        memcpy(out->b + (n < 10 ? 10 - n : 0), p, n < 10 ? (size_t)n : 10);
    return 0;
}

static void free_table(sim_table *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_cols; i++) free(t->cols[i].name);
    free(t->cols);
    free(t->live);
    free(t->keys);
    free(t->inst);
    sqlite3_finalize(t->ins);
    sqlite3_finalize(t->upd);
    sqlite3_finalize(t->del);
    sqlite3_finalize(t->get);
    free(t->schema);
    free(t->name);
    free(t->full);
    free(t);
}

static void free_instance(sim_instance *ci)
{
    if (!ci) return;
    for (int i = 0; i < ci->n_cols; i++) free(ci->cols[i].name);
    free(ci->cols);
    sqlite3_finalize(ci->ins);
    free(ci->name);
    free(ci);
}

void sim__free_catalog(mcdc_sim *s)
{
    for (int i = 0; i < s->n_tables; i++) free_table(s->tables[i]);
    for (int i = 0; i < s->n_inst; i++) free_instance(s->inst[i]);
    free(s->tables);
    free(s->inst);
    sqlite3_finalize(s->tx_ins);
    s->tx_ins = NULL;
    s->tables = NULL;
    s->inst = NULL;
    s->n_tables = s->n_inst = 0;
}

static int load_state(mcdc_sim *s)
{
    static const char q[] = "SELECT db_name, time_zone, clock_us, lsn_us, lsn_slot, processed_lsn, next_xact,"
                            " next_object_id, format FROM sim_state WHERE id = 1";
    sqlite3_stmt *st;
    int rc = sim__stmt(s, q, "reading the simulator state", &st);
    if (rc < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "%s is not a simulator database (%s)", s->path, sqlite3_errmsg(s->db));
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sim__stmt_done(s, st);
        return mcdc_error_set(MCDC_ECORRUPT, "%s is not a simulator database (no state row)", s->path);
    }
    snprintf(s->st.db_name, sizeof s->st.db_name, "%s", (const char *)sqlite3_column_text(st, 0));
    snprintf(s->st.time_zone, sizeof s->st.time_zone, "%s", (const char *)sqlite3_column_text(st, 1));
    s->st.clock_us = sqlite3_column_int64(st, 2);
    s->st.lsn_us = sqlite3_column_int64(st, 3);
    s->st.lsn_slot = sqlite3_column_int64(st, 4);
    sim__column_lsn(st, 5, &s->st.processed);
    s->st.next_xact = sqlite3_column_int64(st, 6);
    s->st.next_object_id = sqlite3_column_int64(st, 7);
    int fmt = sqlite3_column_int(st, 8);
    sim__stmt_done(s, st);
    if (fmt != SIM_FORMAT)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: simulator format %d is not supported (this build reads %d)",
                              s->path, fmt, SIM_FORMAT);
    return 0;
}

int sim__save_state(mcdc_sim *s)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "UPDATE sim_state SET clock_us = ?, lsn_us = ?, lsn_slot = ?, processed_lsn = ?,"
                                " next_xact = ?, next_object_id = ? WHERE id = 1", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sim__sqlite_error(s, rc, "saving the simulator state");
    sqlite3_bind_int64(st, 1, s->st.clock_us);
    sqlite3_bind_int64(st, 2, s->st.lsn_us);
    sqlite3_bind_int64(st, 3, s->st.lsn_slot);
    sim__bind_lsn(st, 4, &s->st.processed);
    sqlite3_bind_int64(st, 5, s->st.next_xact);
    sqlite3_bind_int64(st, 6, s->st.next_object_id);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sim__sqlite_error(s, rc, "saving the simulator state");
}

static int load_catalog(mcdc_sim *s)
{
    sqlite3_stmt *st = NULL;
    int rc;
    sim__free_catalog(s);
    static const char q_tables[] = "SELECT id, schema_name, table_name, object_id FROM sim_tables ORDER BY id",
                      q_columns[] = "SELECT column_id, name, type, nullable, key_ordinal, dropped FROM sim_columns"
                                    " WHERE table_id = ? ORDER BY column_id",
                      q_instances[] = "SELECT id, name, table_id, object_id, start_lsn, create_us FROM sim_instances"
                                      " ORDER BY create_us, id",
                      q_captured[] = "SELECT ordinal, column_id, name, type FROM sim_captured WHERE instance_id = ?"
                                     " ORDER BY ordinal";
    /* every statement reloads the catalog: its questions stay prepared (sim__stmt) */
    if ((rc = sim__stmt(s, q_tables, "reading tables", &st)) < 0) return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sim_table *t = calloc(1, sizeof *t);
        sim_table **nt = realloc(s->tables, (size_t)(s->n_tables + 1) * sizeof *nt);
        if (!t || !nt) { free(t); if (nt) s->tables = nt; sim__stmt_done(s, st); return mcdc_error_set(MCDC_ENOMEM, "out of memory"); }
        s->tables = nt;
        s->tables[s->n_tables++] = t;
        t->id = sqlite3_column_int64(st, 0);
        t->schema = strdup((const char *)sqlite3_column_text(st, 1));
        t->name = strdup((const char *)sqlite3_column_text(st, 2));
        t->object_id = sqlite3_column_int64(st, 3);
        t->full = malloc(strlen(t->schema) + strlen(t->name) + 2);
        if (!t->schema || !t->name || !t->full) { sim__stmt_done(s, st); return mcdc_error_set(MCDC_ENOMEM, "out of memory"); }
        sprintf(t->full, "%s.%s", t->schema, t->name);
    }
    sim__stmt_done(s, st);
    if (rc != SQLITE_DONE) return sim__sqlite_error(s, rc, "reading tables");
    for (int i = 0; i < s->n_tables; i++) {
        sim_table *t = s->tables[i];
        if ((rc = sim__stmt(s, q_columns, "reading columns", &st)) < 0) return rc;
        sqlite3_bind_int64(st, 1, t->id);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            sim_column *nc = realloc(t->cols, (size_t)(t->n_cols + 1) * sizeof *nc);
            if (!nc) { sim__stmt_done(s, st); return mcdc_error_set(MCDC_ENOMEM, "out of memory"); }
            t->cols = nc;
            sim_column *c = &t->cols[t->n_cols++];
            memset(c, 0, sizeof *c);
            c->column_id = sqlite3_column_int(st, 0);
            c->name = strdup((const char *)sqlite3_column_text(st, 1));
            const char *ty = (const char *)sqlite3_column_text(st, 2);
            if (sim_type_parse(&c->type, ty, strlen(ty)) < 0) { sim__stmt_done(s, st); return MCDC_ECORRUPT; }
            c->nullable = sqlite3_column_int(st, 3);
            c->key_ordinal = sqlite3_column_int(st, 4);
            c->dropped = sqlite3_column_int(st, 5);
        }
        sim__stmt_done(s, st);
        t->live = calloc((size_t)t->n_cols + 1, sizeof(int));
        t->keys = calloc((size_t)t->n_cols + 1, sizeof(int));
        if (!t->live || !t->keys) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (int k = 0; k < t->n_cols; k++)
            if (!t->cols[k].dropped) t->live[t->n_live++] = k;
        for (int ord = 1; ord <= t->n_cols; ord++)
            for (int k = 0; k < t->n_cols; k++)
                if (t->cols[k].key_ordinal == ord) t->keys[t->n_keys++] = k;
    }
    if ((rc = sim__stmt(s, q_instances, "reading capture instances", &st)) < 0) return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sim_instance *ci = calloc(1, sizeof *ci);
        sim_instance **ni = realloc(s->inst, (size_t)(s->n_inst + 1) * sizeof *ni);
        if (!ci || !ni) { free(ci); if (ni) s->inst = ni; sim__stmt_done(s, st); return mcdc_error_set(MCDC_ENOMEM, "out of memory"); }
        s->inst = ni;
        s->inst[s->n_inst++] = ci;
        ci->id = sqlite3_column_int64(st, 0);
        ci->name = strdup((const char *)sqlite3_column_text(st, 1));
        ci->table_id = sqlite3_column_int64(st, 2);
        ci->object_id = sqlite3_column_int64(st, 3);
        sim__column_lsn(st, 4, &ci->start_lsn);
        ci->create_us = sqlite3_column_int64(st, 5);
    }
    sim__stmt_done(s, st);
    for (int i = 0; i < s->n_inst; i++) {
        sim_instance *ci = s->inst[i];
        if ((rc = sim__stmt(s, q_captured, "reading captured columns", &st)) < 0) return rc;
        sqlite3_bind_int64(st, 1, ci->id);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            sim_captured *nc = realloc(ci->cols, (size_t)(ci->n_cols + 1) * sizeof *nc);
            if (!nc) { sim__stmt_done(s, st); return mcdc_error_set(MCDC_ENOMEM, "out of memory"); }
            ci->cols = nc;
            sim_captured *c = &ci->cols[ci->n_cols++];
            c->ordinal = sqlite3_column_int(st, 0);
            c->column_id = sqlite3_column_int(st, 1);
            c->name = strdup((const char *)sqlite3_column_text(st, 2));
            const char *ty = (const char *)sqlite3_column_text(st, 3);
            if (sim_type_parse(&c->type, ty, strlen(ty)) < 0) { sim__stmt_done(s, st); return MCDC_ECORRUPT; }
        }
        sim__stmt_done(s, st);
        for (int k = 0; k < s->n_tables; k++) {
            sim_table *t = s->tables[k];
            if (t->id != ci->table_id) continue;
            sim_instance **ti = realloc(t->inst, (size_t)(t->n_inst + 1) * sizeof *ti);
            if (!ti) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            t->inst = ti;
            t->inst[t->n_inst++] = ci;
        }
    }
    return 0;
}

int sim__load(mcdc_sim *s)
{
    int rc = load_state(s);
    return rc < 0 ? rc : load_catalog(s);
}

static void sqlite_config(void)
{
    /* SQLite keeps memory statistics by default (SQLITE_DEFAULT_MEMSTATUS): every
     * sqlite3_malloc and free of every connection then takes one process-wide mutex. With
     * the tables of `run` reading on several threads, that mutex was the most contended
     * lock of the process (perf: futex waits in sqlite3Malloc). Nothing here reads the
     * statistics. Fails harmlessly (SQLITE_MISUSE) when SQLite is initialized already. */
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

void sim__sqlite_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_config);
}

static int open_db(mcdc_sim **out, const char *path, int flags)
{
    sim__sqlite_init();
    *out = NULL;
    mcdc_sim *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    int rc = sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = mcdc_error_set(MCDC_EIO, "%s: cannot open the simulator database: %s", path,
                            s->db ? sqlite3_errmsg(s->db) : "out of memory");
        mcdc_sim_close(s);
        return rc;
    }
    sqlite3_busy_timeout(s->db, 30000);
    sqlite3_extended_result_codes(s->db, 0);
    *out = s;
    return 0;
}

static int load_zone(mcdc_sim *s)
{
    mcdc_tz_free(s->tz);
    s->tz = NULL;
    return mcdc_tz_load(&s->tz, s->st.time_zone);
}

int mcdc_sim_open(mcdc_sim **out, const char *path, bool create, const char *time_zone)
{
    struct stat sb;
    mcdc_sim *s;
    *out = NULL;
    bool exists = stat(path, &sb) == 0;
    if (!exists && !create)
        return mcdc_error_set(MCDC_ENOTFOUND, "simulator database %s does not exist", path),
               mcdc_error_hint("create it with 'mssql-cdc sim init %s --table dbo.t --schema ... --keys ...'", path);
    if (exists && sb.st_size == 0 && !create)
        return mcdc_error_set(MCDC_ECORRUPT, "%s is not a simulator database (empty file)", path);
    int rc = open_db(&s, path, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0));
    if (rc < 0) return rc;
    /* reads map the file (up to 4 GiB) rather than copy each page in with a read: sim serve's
     * sessions, one connection each, share the OS's pages instead of 64 MiB caches of their own */
    if ((rc = sim__exec_sql(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;"
                               " PRAGMA mmap_size=4294967296;")) < 0)
        goto fail;
    bool has_state = false;
    {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_master WHERE name = 'sim_state'", -1, &st, NULL) != SQLITE_OK) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s is not a simulator database (%s)", path, sqlite3_errmsg(s->db));
            goto fail;
        }
        has_state = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    if (!has_state) {
        if (!create) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s is not a simulator database (no sim_state table)", path);
            goto fail;
        }
        const char *zone = time_zone && *time_zone ? time_zone : "UTC";
        mcdc_tz *tz = NULL;
        if ((rc = mcdc_tz_load(&tz, zone)) < 0) goto fail;
        mcdc_tz_free(tz);
        if ((rc = sim__exec_sql(s, "BEGIN IMMEDIATE")) < 0) goto fail;
        if ((rc = sim__exec_sql(s, schema_sql)) < 0) { sim__exec_sql(s, "ROLLBACK"); goto fail; }
        char name[129];
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t n = strcspn(base, ".");
        snprintf(name, sizeof name, "%.*s", (int)(n ? n : strlen(base)), base);
        sqlite3_stmt *st;
        sqlite3_prepare_v2(s->db, "INSERT INTO sim_state VALUES(1, ?, ?, ?, 0, 0, 0, ?, 1, 1000)", -1, &st, NULL);
        sqlite3_bind_int(st, 1, SIM_FORMAT);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, zone, -1, SQLITE_TRANSIENT);
        mcdc_lsn z = mcdc_lsn_zero();
        sim__bind_lsn(st, 4, &z);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) { rc = sim__sqlite_error(s, rc, "creating the database"); sim__exec_sql(s, "ROLLBACK"); goto fail; }
        if ((rc = sim__identity_store(s, true)) < 0) { sim__exec_sql(s, "ROLLBACK"); goto fail; }
        if ((rc = sim__exec_sql(s, "COMMIT")) < 0) goto fail;
    }
    if ((rc = sim__load(s)) < 0) goto fail;
    /* a file older than sim_identity keeps the GUID it was reported with (identity.c) */
    if ((rc = sim__identity_load(s)) < 0) goto fail;
    if (has_state) {
        sqlite3_stmt *st;
        bool stored = sqlite3_prepare_v2(s->db, "SELECT 1 FROM sim_identity", -1, &st, NULL) == SQLITE_OK &&
                      sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        if (!stored && (rc = sim__identity_store(s, false)) < 0) goto fail;
    }
    if (create && has_state && time_zone && *time_zone && strcasecmp(time_zone, s->st.time_zone)) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s: the server time zone is %s; --time-zone %s differs", path,
                            s->st.time_zone, time_zone);
        mcdc_error_hint("a server's zone is set when its database is created; leave --time-zone out or use a new file");
        goto fail;
    }
    if ((rc = load_zone(s)) < 0) goto fail;
    *out = s;
    return 0;
fail:
    mcdc_sim_close(s);
    return rc;
}

/* Remove a database file this process created, with SQLite's companions. */
static void remove_created(const char *path)
{
    static const char *const suffix[] = { "", "-wal", "-shm", "-journal" };
    char p[4096];
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++)
        if (snprintf(p, sizeof p, "%s%s", path, suffix[i]) < (int)sizeof p)
            (void)mcdc_fs_remove(p);
}

int mcdc_sim_init(mcdc_sim **out, const char *path, const char *time_zone, const char *table,
                  const char *columns, const char *keys, const char *ci, int64_t at_us)
{
    *out = NULL;
    /* claim the name first (an empty file is a new SQLite database), so the file this
     * call removes on failure is the one it created, never another process's */
    int rc = mcdc_fs_create_noreplace(path, "", 0);
    bool created = rc == 0;
    if (rc == MCDC_EEXISTS) {
        mcdc_error_clear();
        rc = 0;
    }
    if (rc < 0)
        return rc;
    mcdc_sim *s = NULL;
    rc = mcdc_sim_open(&s, path, true, time_zone);
    if (rc == 0 && table)
        rc = mcdc_sim_create_table(s, table, columns, keys, ci, at_us);
    if (rc < 0) {
        mcdc_sim_close(s);
        if (created) {
            mcdc_error saved = *mcdc_error_last(); /* the failure, not the clean-up */
            remove_created(path);
            mcdc_error_restore(&saved);
        }
        return rc;
    }
    *out = s;
    return 0;
}

int mcdc_sim_open_readonly(mcdc_sim **out, const char *path)
{
    struct stat sb;
    mcdc_sim *s;
    *out = NULL;
    if (stat(path, &sb) != 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "simulator database %s does not exist", path),
               mcdc_error_hint("create it with 'mssql-cdc sim init %s --table dbo.t --schema ... --keys ...'", path);
    int rc = open_db(&s, path, SQLITE_OPEN_READONLY);
    if (rc < 0) return rc;
    s->read_only = true;
    /* the file's pages read in place from the OS page cache (up to 1 GiB), not copied into
     * each connection's own cache: the connections of a process (run's pool, one per
     * table read at once) then share one copy, and a read costs no pread per page. The
     * simulator never truncates its file (no VACUUM), which memory-mapped I/O must not
     * meet. Advisory: a refusal leaves the ordinary reads. */
    (void)sqlite3_exec(s->db, "PRAGMA mmap_size=1073741824", NULL, NULL, NULL);
    if ((rc = sim__load(s)) < 0 || (rc = sim__identity_load(s)) < 0 || (rc = load_zone(s)) < 0) {
        mcdc_sim_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

int sim__stmt(mcdc_sim *s, const char *sql, const char *what, sqlite3_stmt **out)
{
    int free_slot = -1;
    for (int i = 0; i < SIM_STMTS; i++) {
        if (s->stmts[i].sql == sql) {
            *out = s->stmts[i].st;
            return 0;
        }
        if (!s->stmts[i].sql && free_slot < 0) free_slot = i;
    }
    int rc = sqlite3_prepare_v3(s->db, sql, -1, free_slot >= 0 ? SQLITE_PREPARE_PERSISTENT : 0, out, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, what);
    if (free_slot >= 0) { /* no slot free: the statement is finalized when given back */
        s->stmts[free_slot].sql = sql;
        s->stmts[free_slot].st = *out;
    }
    return 0;
}

void sim__stmt_done(mcdc_sim *s, sqlite3_stmt *st)
{
    for (int i = 0; i < SIM_STMTS; i++)
        if (s->stmts[i].st == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            return;
        }
    sqlite3_finalize(st);
}

void mcdc_sim_close(mcdc_sim *s)
{
    if (!s) return;
    for (int i = 0; i < SIM_STMTS; i++) sqlite3_finalize(s->stmts[i].st);
    sim__free_catalog(s);
    mcdc_tz_free(s->tz);
    if (s->db) sqlite3_close_v2(s->db);
    mcdc_buf_dispose(&s->keybuf);
    free(s->path);
    free(s);
}

int sim__begin(mcdc_sim *s)
{
    if (s->read_only)
        return mcdc_error_set(MCDC_EINVAL, "%s: opened read-only", s->path);
    int rc = sim__exec_sql(s, "BEGIN IMMEDIATE");
    if (rc < 0) return rc;
    s->in_tx = true;
    if ((rc = sim__load(s)) < 0) {
        sim__rollback(s);
        return rc;
    }
    return 0;
}

int sim__commit(mcdc_sim *s)
{
    int rc = sim__save_state(s);
    if (rc == 0) rc = sim__exec_sql(s, "COMMIT");
    if (rc < 0) {
        sim__rollback(s);
        return rc;
    }
    s->in_tx = false;
    return 0;
}

void sim__rollback(mcdc_sim *s)
{
    if (s->in_tx) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        s->in_tx = false;
    }
    /* drop prepared statements and reload what the file holds */
    mcdc_error saved = *mcdc_error_last();
    if (load_state(s) == 0) load_catalog(s);
    mcdc_error_restore(&saved);
}

int sim__advance_clock(mcdc_sim *s, int64_t at_us, int64_t *out_us)
{
    char a[MCDC_TIME_STRLEN], b[MCDC_TIME_STRLEN];
    if (at_us == MCDC_SIM_CLOCK) {
        at_us = s->st.clock_us;
    } else if (at_us == MCDC_SIM_NOW) {
        at_us = mcdc_time_now_us();
        if (at_us < s->st.clock_us) at_us = s->st.clock_us;
    } else if (at_us < s->st.clock_us) {
        return mcdc_error_set(MCDC_EINVAL, "time would go backwards: the simulator's clock is at %s and --at is %s",
                              mcdc_time_format(a, s->st.clock_us, 6, true), mcdc_time_format(b, at_us, 6, true)),
               mcdc_error_hint("give a time at or after %s (times without a zone are UTC)", a);
    }
    if (at_us < mcdc_days_from_civil(1900, 1, 2) * MCDC_US_PER_DAY || at_us >= mcdc_days_from_civil(9999, 1, 1) * MCDC_US_PER_DAY)
        return mcdc_error_set(MCDC_EINVAL, "time %s is outside what the simulator's clock holds (1900-01-02 to 9998-12-31)",
                              mcdc_time_format(a, at_us, 6, true));
    s->st.clock_us = at_us;
    *out_us = at_us;
    return 0;
}

static mcdc_lsn make_lsn(int64_t us0, int64_t slot)
{
    mcdc_lsn l;
    uint64_t u = (uint64_t)us0;
    for (int i = 7; i >= 0; i--) { l.b[i] = (uint8_t)(u & 0xFF); u >>= 8; }
    l.b[8] = (uint8_t)(slot >> 8);
    l.b[9] = (uint8_t)slot;
    return l;
}

int sim__alloc_lsn(mcdc_sim *s, int64_t at_us, mcdc_lsn *out)
{
    int64_t us0 = at_us + EPOCH0_US;
    if (us0 < s->st.lsn_us) us0 = s->st.lsn_us;
    if (us0 > s->st.lsn_us) {
        s->st.lsn_us = us0;
        s->st.lsn_slot = 1;
    } else if (++s->st.lsn_slot > 0x7FFF) {
        s->st.lsn_us++;
        s->st.lsn_slot = 1;
    }
    *out = make_lsn(s->st.lsn_us, s->st.lsn_slot);
    return 0;
}

/* An LSN at a past time (a transaction begun before the clock): slots 0x8000.. (S2). */
int sim__alloc_retro_lsn(mcdc_sim *s, int64_t at_us, mcdc_lsn *out)
{
    int64_t us0 = at_us + EPOCH0_US, slot = 0x8000;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "SELECT slot FROM sim_retro WHERE us = ?", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "allocating an LSN");
    sqlite3_bind_int64(st, 1, us0);
    if (sqlite3_step(st) == SQLITE_ROW) slot = sqlite3_column_int64(st, 0) + 1;
    sqlite3_finalize(st);
    if (slot > 0xFFFF)
        return mcdc_error_set(MCDC_EINVAL, "too many log records begun at one microsecond in the past");
    rc = sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO sim_retro(us, slot) VALUES(?, ?)", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "allocating an LSN");
    sqlite3_bind_int64(st, 1, us0);
    sqlite3_bind_int64(st, 2, slot);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sim__sqlite_error(s, rc, "allocating an LSN");
    *out = make_lsn(us0, slot);
    return 0;
}

bool sim__lsn_is_past(mcdc_sim *s, int64_t at_us)
{
    return at_us + EPOCH0_US < s->st.lsn_us;
}

int64_t sim__local_ticks(mcdc_sim *s, int64_t utc_us)
{
    int64_t local = s->tz ? mcdc_tz_utc_to_local(s->tz, utc_us) : utc_us;
    return sim_round_datetime(local * TICKS_PER_US);
}

void sim__datetime_text(mcdc_sim *s, int64_t utc_us, char out[32])
{
    sim_format_datetime(out, 32, sim__local_ticks(s, utc_us));
}

sim_table *sim__find_table(mcdc_sim *s, const char *schema, const char *name)
{
    for (int i = 0; i < s->n_tables; i++)
        if (!strcasecmp(s->tables[i]->schema, schema) && !strcasecmp(s->tables[i]->name, name))
            return s->tables[i];
    return NULL;
}

sim_instance *sim__find_instance(mcdc_sim *s, const char *name)
{
    for (int i = 0; i < s->n_inst; i++)
        if (!strcasecmp(s->inst[i]->name, name))
            return s->inst[i];
    return NULL;
}

int sim__table_key(const sim_table *t, const sim_val *row, mcdc_buf *out)
{
    mcdc_buf_clear(out);
    for (int k = 0; k < t->n_keys; k++) {
        int i = t->keys[k];
        int rc = sim_key_append(out, &t->cols[i].type, &row[i]);
        if (rc < 0) return rc;
    }
    return 0;
}

int sim__tx_record(mcdc_sim *s, const mcdc_lsn *lsn, int kind, const mcdc_lsn *begin_lsn, int64_t begin_us,
                   int64_t end_us, int64_t xact)
{
    static const char sql[] = "INSERT INTO sim_tx(lsn, kind, begin_lsn, begin_time, end_time, end_utc_us, tran_id)"
                              " VALUES(?, ?, ?, ?, ?, ?, ?)";
    sqlite3_stmt *st;
    char bt[32], et[32];
    int rc = SQLITE_OK;
    if (!s->tx_ins) rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->tx_ins, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "recording a commit");
    st = s->tx_ins;
    sqlite3_reset(st);
    sim__datetime_text(s, begin_us, bt);
    sim__datetime_text(s, end_us, et);
    sim__bind_lsn(st, 1, lsn);
    sqlite3_bind_int(st, 2, kind);
    sim__bind_lsn(st, 3, begin_lsn);
    sqlite3_bind_text(st, 4, bt, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, et, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 6, end_us);
    if (kind == TX_IDLE) {
        sqlite3_bind_blob(st, 7, "\0", 1, SQLITE_STATIC);
    } else {
        uint8_t id[10] = {0};
        uint64_t x = (uint64_t)xact;
        for (int i = 9; i >= 4; i--) { id[i] = (uint8_t)(x & 0xFF); x >>= 8; }
        sqlite3_bind_blob(st, 7, id, 10, SQLITE_TRANSIENT);
    }
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sim__sqlite_error(s, rc, "recording a commit");
}

/* ---- views ---------------------------------------------------------------------------------- */

static int qident(mcdc_buf *b, const char *name)
{
    int rc = mcdc_buf_putc(b, '"');
    for (const char *p = name; rc == 0 && *p; p++)
        rc = *p == '"' ? mcdc_buf_puts(b, "\"\"") : mcdc_buf_putc(b, *p);
    return rc ? rc : mcdc_buf_putc(b, '"');
}

#define PROCESSED "(SELECT processed_lsn FROM sim_state WHERE id = 1)"

int sim__rebuild_views(mcdc_sim *s)
{
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "SELECT name FROM sqlite_master WHERE type = 'view'", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "listing views");
    while (sqlite3_step(st) == SQLITE_ROW) {
        mcdc_buf_puts(&b, "DROP VIEW ");
        qident(&b, (const char *)sqlite3_column_text(st, 0));
        mcdc_buf_puts(&b, ";");
    }
    sqlite3_finalize(st);
    for (int i = 0; i < s->n_tables; i++) {
        sim_table *t = s->tables[i];
        mcdc_buf_puts(&b, "CREATE VIEW ");
        qident(&b, t->full);
        mcdc_buf_puts(&b, " AS SELECT ");
        for (int k = 0; k < t->n_live; k++) {
            sim_column *c = &t->cols[t->live[k]];
            mcdc_buf_printf(&b, "%sc%d AS ", k ? ", " : "", c->column_id);
            qident(&b, c->name);
        }
        if (t->n_live == 0) mcdc_buf_puts(&b, "NULL AS nothing");
        mcdc_buf_printf(&b, " FROM sim_src_%lld;", (long long)t->id);
    }
    for (int i = 0; i < s->n_inst; i++) {
        sim_instance *ci = s->inst[i];
        char name[300];
        snprintf(name, sizeof name, "cdc.%s_CT", ci->name);
        mcdc_buf_puts(&b, "CREATE VIEW ");
        qident(&b, name);
        mcdc_buf_puts(&b, " AS SELECT \"__$start_lsn\", \"__$end_lsn\", \"__$seqval\", \"__$operation\", \"__$update_mask\"");
        for (int k = 0; k < ci->n_cols; k++) {
            mcdc_buf_printf(&b, ", c%d AS ", ci->cols[k].ordinal);
            qident(&b, ci->cols[k].name);
        }
        mcdc_buf_printf(&b, ", \"__$command_id\" FROM sim_ct_%lld WHERE \"__$start_lsn\" <= " PROCESSED ";",
                        (long long)ci->id);
    }
    mcdc_buf_puts(&b,
        "CREATE VIEW \"cdc.lsn_time_mapping\" AS " SIM_MAPPING_SELECT ";"
        "CREATE VIEW \"cdc.change_tables\" AS SELECT i.object_id AS object_id, 0 AS version,"
        " t.object_id AS source_object_id, i.name AS capture_instance,"
        " CASE WHEN i.start_lsn <= " PROCESSED " THEN i.start_lsn END AS start_lsn, NULL AS end_lsn,"
        " 0 AS supports_net_changes, 0 AS has_drop_pending, NULL AS role_name, 'PK_' || t.table_name AS index_name,"
        " 'PRIMARY' AS filegroup_name, i.create_date AS create_date, 0 AS partition_switch"
        " FROM sim_instances i JOIN sim_tables t ON t.id = i.table_id;"
        "CREATE VIEW \"cdc.captured_columns\" AS SELECT i.object_id AS object_id, c.name AS column_name,"
        " c.column_id AS column_id, c.type AS column_type, c.ordinal AS column_ordinal, 0 AS is_computed"
        " FROM sim_captured c JOIN sim_instances i ON i.id = c.instance_id;"
        "CREATE VIEW \"cdc.index_columns\" AS SELECT i.object_id AS object_id, c.name AS column_name,"
        " c.key_ordinal AS index_ordinal, c.column_id AS column_id FROM sim_columns c"
        " JOIN sim_instances i ON i.table_id = c.table_id WHERE c.key_ordinal > 0;"
        "CREATE VIEW \"cdc.ddl_history\" AS SELECT t.object_id AS source_object_id, i.object_id AS object_id,"
        " d.required_column_update AS required_column_update, d.ddl_command AS ddl_command, d.ddl_lsn AS ddl_lsn,"
        " d.ddl_time AS ddl_time FROM sim_ddl d JOIN sim_instances i ON i.id = d.instance_id"
        " JOIN sim_tables t ON t.id = i.table_id WHERE d.ddl_lsn <= " PROCESSED ";");
    if (!b.ptr) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    rc = sim__exec_sql(s, b.ptr);
    mcdc_buf_dispose(&b);
    return rc;
}
