/*
 * source/sim/login.c: SQL logins and SELECT grants of a simulator database (sim login add,
 * sim grant and its --revoke, and the check sim serve makes at LOGIN7; a session reads its
 * login's grants again at its next request when the file changed, so a revoke takes effect
 * there, as on SQL Server).
 *
 * Storage, created by the first login or grant (older files have neither table):
 *   sim_logins(name COLLATE NOCASE PRIMARY KEY, salt BLOB, hash BLOB, iterations)
 *   sim_grants(login COLLATE NOCASE, schema_name COLLATE NOCASE, object_name COLLATE NOCASE)
 * A password is never stored: only a random 16-byte salt and PBKDF2-HMAC-SHA256 of the
 * password under it (nettle). Without any login, every login is refused (sim serve --user
 * creates one). Names compare case-insensitively, as under SQL Server's default collation.
 *
 * Permissions (sim_login_can_read): a login without grants reads every object, as a
 * db_owner does; a login with grants reads only the objects granted to it. A capture
 * instance's metadata (sim_login_can_see_instance) follows SQL Server's CDC security model:
 * only a login that can SELECT its source table sees it (the sp_cdc_* procedures,
 * sys.fn_cdc_get_min_lsn, cdc.fn_cdc_get_all_changes_<ci>); a grant on the change table
 * alone reads the change table and nothing more. Gating roles are not modelled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <nettle/pbkdf2.h>
#include <nettle/memops.h>

#include "mcdc/fs.h"
#include "source/sim/login.h"

#define SALT_LEN   16
#define HASH_LEN   32
#define ITERATIONS 20000

static const char login_schema[] =
    "CREATE TABLE IF NOT EXISTS sim_logins(name TEXT PRIMARY KEY COLLATE NOCASE, salt BLOB NOT NULL,"
    " hash BLOB NOT NULL, iterations INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS sim_grants(login TEXT NOT NULL COLLATE NOCASE, schema_name TEXT NOT NULL COLLATE NOCASE,"
    " object_name TEXT NOT NULL COLLATE NOCASE, PRIMARY KEY (login, schema_name, object_name));";

static int valid_name(const char *user)
{
    size_t n = user ? strlen(user) : 0;
    if (n == 0 || n > 128)
        return mcdc_error_set(MCDC_EINVAL, "login name '%s' must have 1 to 128 characters", user ? user : ""),
               mcdc_error_hint("give --user a SQL login name such as cdc_reader");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)user[i] < 0x20 || user[i] == '\\')
            return mcdc_error_set(MCDC_EINVAL, "login name '%s' holds a control character or a backslash", user),
                   mcdc_error_hint("SQL logins are plain names; Windows logins (DOMAIN\\user) are not simulated");
    return 0;
}

static bool has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    bool yes = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static void derive(const char *password, const uint8_t *salt, int iterations, uint8_t out[HASH_LEN])
{
    pbkdf2_hmac_sha256(strlen(password), (const uint8_t *)password, (unsigned)iterations, SALT_LEN, salt, HASH_LEN, out);
}

int mcdc_sim_login_add(mcdc_sim *s, const char *user, const char *password, bool if_missing)
{
    int rc = valid_name(user);
    if (rc < 0) return rc;
    if (!password || !*password)
        return mcdc_error_set(MCDC_EINVAL, "the password of login '%s' is empty", user),
               mcdc_error_hint("write the password on the first line of the --password-file");
    if (strlen(password) > 128)
        return mcdc_error_set(MCDC_EINVAL, "the password of login '%s' is longer than 128 characters", user),
               mcdc_error_hint("SQL Server passwords have at most 128 characters");
    if ((rc = sim__begin(s)) < 0) return rc;
    if ((rc = sim__exec_sql(s, login_schema)) < 0) goto fail;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM sim_logins WHERE name = ?", -1, &st, NULL) != SQLITE_OK) {
        rc = sim__sqlite_error(s, SQLITE_ERROR, "reading logins");
        goto fail;
    }
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    bool exists = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (exists) {
        if (if_missing) { sim__rollback(s); return 0; }
        rc = mcdc_error_set(MCDC_EEXISTS, "login '%s' exists in %s", user, s->path);
        mcdc_error_hint("choose another --user; a login's password is set once");
        goto fail;
    }
    uint8_t salt[SALT_LEN], hash[HASH_LEN];
    if (getrandom(salt, sizeof salt, 0) != (ssize_t)sizeof salt) {
        rc = mcdc_error_set(MCDC_EIO, "no random bytes for the login's salt");
        goto fail;
    }
    derive(password, salt, ITERATIONS, hash);
    if (sqlite3_prepare_v2(s->db, "INSERT INTO sim_logins(name, salt, hash, iterations) VALUES(?, ?, ?, ?)", -1, &st,
                           NULL) != SQLITE_OK) {
        rc = sim__sqlite_error(s, SQLITE_ERROR, "adding a login");
        goto fail;
    }
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, salt, SALT_LEN, SQLITE_STATIC);
    sqlite3_bind_blob(st, 3, hash, HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, ITERATIONS);
    int r = sqlite3_step(st);
    sqlite3_finalize(st);
    if (r != SQLITE_DONE) {
        rc = sim__sqlite_error(s, r, "adding a login");
        goto fail;
    }
    return sim__commit(s);
fail:
    sim__rollback(s);
    return rc;
}

/* Give (@p revoke false) or take back login @p user's SELECT on @p object, in one
 * transaction; *@p changed says whether a grant was added or removed. */
static int set_grant(mcdc_sim *s, const char *user, const char *object, bool revoke, bool *changed)
{
    char schema[129], name[129];
    *changed = false;
    int rc = valid_name(user);
    if (rc < 0) return rc;
    if (!object || sim_parse_table_name(object, schema, name) < 0)
        return mcdc_error_set(MCDC_EINVAL, "object '%s' is not a name such as dbo.orders or cdc.dbo_orders_CT",
                              object ? object : ""),
               mcdc_error_hint("give --on schema.object (brackets allowed)");
    if ((rc = sim__begin(s)) < 0) return rc;
    if ((rc = sim__exec_sql(s, login_schema)) < 0) goto fail;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM sim_logins WHERE name = ?", -1, &st, NULL) != SQLITE_OK) {
        rc = sim__sqlite_error(s, SQLITE_ERROR, "reading logins");
        goto fail;
    }
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    bool exists = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!exists) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "login '%s' does not exist in %s", user, s->path);
        mcdc_error_hint("create it first with 'mssql-cdc sim login add %s --user %s --password-file F'", s->path, user);
        goto fail;
    }
    if (!revoke && !sim_login_object_exists(s, schema, name)) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "object %s.%s does not exist in %s", schema, name, s->path);
        mcdc_error_hint("grant on a source table (dbo.t), a change table (cdc.<ci>_CT) or cdc.lsn_time_mapping");
        goto fail;
    }
    const char *what = revoke ? "removing a grant" : "adding a grant";
    if (sqlite3_prepare_v2(s->db,
                           revoke ? "DELETE FROM sim_grants WHERE login = ? AND schema_name = ? AND object_name = ?"
                                  : "INSERT OR IGNORE INTO sim_grants(login, schema_name, object_name) VALUES(?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = sim__sqlite_error(s, SQLITE_ERROR, what);
        goto fail;
    }
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    int r = sqlite3_step(st);
    sqlite3_finalize(st);
    if (r != SQLITE_DONE) {
        rc = sim__sqlite_error(s, r, what);
        goto fail;
    }
    *changed = sqlite3_changes(s->db) > 0;
    return sim__commit(s);
fail:
    sim__rollback(s);
    return rc;
}

int mcdc_sim_grant(mcdc_sim *s, const char *user, const char *object)
{
    bool added;
    return set_grant(s, user, object, false, &added);
}

int mcdc_sim_revoke(mcdc_sim *s, const char *user, const char *object, bool *had)
{
    return set_grant(s, user, object, true, had);
}

bool sim_login_object_exists(mcdc_sim *s, const char *schema, const char *name)
{
    if (sim__find_table(s, schema, name)) return true;
    if (strcasecmp(schema, "cdc")) return false;
    static const char *const fixed[] = {"lsn_time_mapping", "change_tables", "captured_columns", "index_columns",
                                        "ddl_history", NULL};
    for (int i = 0; fixed[i]; i++)
        if (!strcasecmp(name, fixed[i])) return true;
    size_t n = strlen(name);
    if (n > 3 && !strcasecmp(name + n - 3, "_CT"))
        for (int i = 0; i < s->n_inst; i++)
            if (strlen(s->inst[i]->name) == n - 3 && !strncasecmp(s->inst[i]->name, name, n - 3)) return true;
    return false;
}

int mcdc_sim_login_check(const char *path, const char *user, const char *password)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = MCDC_EPERM;
    if (!user || !password) return MCDC_EPERM;
    sim__sqlite_init();
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return mcdc_error_set(MCDC_EIO, "%s: cannot open the simulator database", path);
    }
    sqlite3_busy_timeout(db, 30000);
    if (!has_table(db, "sim_logins")) {
        rc = mcdc_error_set(MCDC_EPERM, "login '%s' refused: %s has no logins", user, path);
        goto done;
    }
    if (sqlite3_prepare_v2(db, "SELECT salt, hash, iterations FROM sim_logins WHERE name = ?", -1, &st, NULL) != SQLITE_OK) {
        rc = mcdc_error_set(MCDC_EIO, "%s: reading logins: %s", path, sqlite3_errmsg(db));
        goto done;
    }
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_bytes(st, 0) != SALT_LEN || sqlite3_column_bytes(st, 1) != HASH_LEN) {
        rc = mcdc_error_set(MCDC_EPERM, "login '%s' refused: no such login", user);
        goto done;
    }
    uint8_t got[HASH_LEN];
    derive(password, sqlite3_column_blob(st, 0), sqlite3_column_int(st, 2), got);
    if (!nettle_memeql_sec(got, sqlite3_column_blob(st, 1), HASH_LEN)) {
        rc = mcdc_error_set(MCDC_EPERM, "login '%s' refused: the password does not match", user);
        goto done;
    }
    rc = 0;
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

int sim_login_grants(mcdc_sim *s, const char *user, sim_grant_list *out)
{
    memset(out, 0, sizeof *out);
    if (!has_table(s->db, "sim_grants")) return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT schema_name, object_name FROM sim_grants WHERE login = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return sim__sqlite_error(s, SQLITE_ERROR, "reading grants");
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char **nn = realloc(out->names, (size_t)(out->n + 1) * sizeof *nn);
        if (!nn) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
        out->names = nn;
        const char *sc = (const char *)sqlite3_column_text(st, 0), *ob = (const char *)sqlite3_column_text(st, 1);
        size_t len = strlen(sc) + strlen(ob) + 2;
        if (!(out->names[out->n] = malloc(len))) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
        snprintf(out->names[out->n++], len, "%s.%s", sc, ob);
    }
    sqlite3_finalize(st);
    out->restricted = out->n > 0;
    if (rc < 0) sim_login_grants_dispose(out);
    return rc;
}

void sim_login_grants_dispose(sim_grant_list *g)
{
    for (int i = 0; i < g->n; i++) free(g->names[i]);
    free(g->names);
    memset(g, 0, sizeof *g);
}

bool sim_login_can_read(const sim_grant_list *g, const char *schema, const char *name)
{
    if (!g->restricted) return true;
    size_t ns = strlen(schema);
    for (int i = 0; i < g->n; i++)
        if (!strncasecmp(g->names[i], schema, ns) && g->names[i][ns] == '.' && !strcasecmp(g->names[i] + ns + 1, name))
            return true;
    return false;
}

bool sim_login_can_see_instance(const sim_grant_list *g, const mcdc_sim *sim, const sim_instance *ci)
{
    for (int i = 0; i < sim->n_tables; i++)
        if (sim->tables[i]->id == ci->table_id)
            return sim_login_can_read(g, sim->tables[i]->schema, sim->tables[i]->name);
    return false;
}

int mcdc_sim_password_file_read(char **out, const char *path)
{
    mcdc_buf b = MCDC_BUF_INIT(4096);
    *out = NULL;
    int rc = mcdc_fs_read_all(&b, path);
    if (rc == MCDC_ENOTFOUND)
        return mcdc_error_set(MCDC_EINVAL, "password file %s does not exist", path),
               mcdc_error_hint("write the password on the first line of a file readable only by you (chmod 600)");
    if (rc < 0) {
        mcdc_buf_dispose(&b);
        return rc;
    }
    size_t n = 0;
    while (n < b.len && b.ptr[n] != '\n') n++;
    if (n > 0 && b.ptr[n - 1] == '\r') n--;
    if (n == 0) {
        mcdc_buf_dispose(&b);
        return mcdc_error_set(MCDC_EINVAL, "password file %s: the first line is empty", path),
               mcdc_error_hint("write the password on the first line (a trailing newline is not part of it)");
    }
    if (memchr(b.ptr, '\0', n)) {
        mcdc_buf_dispose(&b);
        return mcdc_error_set(MCDC_EINVAL, "password file %s: the first line holds a NUL byte", path);
    }
    *out = malloc(n + 1);
    if (!*out) {
        mcdc_buf_dispose(&b);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    memcpy(*out, b.ptr, n);
    (*out)[n] = '\0';
    memset(b.ptr, 0, b.len); /* the password does not linger in freed memory */
    mcdc_buf_dispose(&b);
    return 0;
}
