/*
 * run/state.c: each table's state as a run records it, one JSON file per table in the
 * config's state directory (`state_dir:`, default run-state beside the config), read by
 * `mssql-cdc run --status` without a server.
 *
 * Guarantees: a record is replaced atomically and durably (the storage seam's put: locally
 * a temp file, fsync, rename, directory fsync), so a reader sees the old state or the new
 * one; a file that is not a state record is reported as corrupt, naming it. The record only
 * ever gains keys. The directory is read and written through the storage seam only, so it
 * may be local or an s3:// prefix like the tables.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>

#include "mcdc/run.h"
#include "mcdc/storage.h"

/* the table name as a file name: [A-Za-z0-9._-] kept, anything else '_' */
static void file_of(char out[MCDC_PATH_MAX], const char *dir, const char *table)
{
    char slug[512];
    size_t n = 0;
    for (const char *p = table; *p && n + 1 < sizeof slug; p++) {
        char ch = *p;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                  ch == '.' || ch == '-' || ch == '_';
        slug[n++] = ok ? ch : '_';
    }
    slug[n] = 0;
    snprintf(out, MCDC_PATH_MAX, "%s/%s.json", dir, slug);
}

int mcdc_run_state_write(const char *dir, const mcdc_run_table_state *st)
{
    char path[MCDC_PATH_MAX], ts[MCDC_TIME_STRLEN];
    int rc = mcdc_storage_mkdirs(dir);
    if (rc < 0)
        return rc;
    file_of(path, dir, st->table);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s, s:s, s:I, s:s, s:I, s:I, s:i}",
                          "table", st->table, "capture_instance", st->capture_instance,
                          "checkpoint", st->checkpoint, "control", st->control,
                          "control_path", st->control_path,
                          "state", mcdc_run_state_name(st->state),
                          "message", st->message ? st->message : "",
                          "pid", (json_int_t)st->pid,
                          "updated_at", mcdc_time_format(ts, st->updated_at_us, 3, true),
                          "batches", (json_int_t)st->batches, "rows", (json_int_t)st->rows,
                          "failures", st->failures);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return mcdc_error_set(MCDC_ENOMEM, "run state: out of memory");
    rc = mcdc_storage_put(path, text, strlen(text));
    free(text);
    return rc;
}

static int state_of(mcdc_run_state *out, const char *s)
{
    for (int i = 0; i <= MCDC_RUN_STATE_STOPPED; i++)
        if (!strcmp(mcdc_run_state_name((mcdc_run_state)i), s)) {
            *out = (mcdc_run_state)i;
            return 0;
        }
    return -1;
}

static int cmp_state(const void *a, const void *b)
{
    return strcmp(((const mcdc_run_table_state *)a)->table, ((const mcdc_run_table_state *)b)->table);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

int mcdc_run_state_read_all(mcdc_run_table_state **out, size_t *n_out, const char *dir)
{
    *out = NULL;
    *n_out = 0;
    mcdc_storage_listing l;
    int rc = mcdc_storage_list(&l, dir, 0);
    if (rc == MCDC_ENOTFOUND) { /* no run has written its state yet */
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    size_t cap = 0, n = 0;
    mcdc_run_table_state *a = NULL;
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        const char *name = l.entries[i].name;
        size_t len = strlen(name);
        if (name[0] == '.' || len < 6 || strcmp(name + len - 5, ".json") != 0)
            continue; /* temp files of a write in flight, other files */
        char path[MCDC_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        mcdc_buf b = MCDC_BUF_INIT(1 << 20);
        if ((rc = mcdc_storage_read(&b, NULL, path)) < 0) {
            mcdc_buf_dispose(&b);
            break;
        }
        json_error_t je;
        json_t *o = json_loadb(b.ptr ? b.ptr : "", b.len, 0, &je);
        mcdc_buf_dispose(&b);
        const char *table = NULL, *ci = NULL, *ck = NULL, *state = NULL, *msg = NULL,
                   *updated = NULL;
        json_t *jcontrol = NULL, *jcpath = NULL; /* null for a table without control */
        json_int_t pid = 0, batches = 0, rows = 0;
        int failures = 0;
        mcdc_run_state st;
        if (!o || json_unpack(o, "{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:i, s?o, s?o}",
                              "table", &table, "capture_instance", &ci, "checkpoint", &ck,
                              "state", &state, "message", &msg, "pid", &pid,
                              "updated_at", &updated, "batches", &batches, "rows", &rows,
                              "failures", &failures, "control", &jcontrol,
                              "control_path", &jcpath) != 0 ||
            state_of(&st, state) < 0) {
            json_decref(o);
            rc = mcdc_error_set(MCDC_ECORRUPT, "run state %s: not a state record", path);
            mcdc_error_hint("remove the file; the next run writes it again");
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            mcdc_run_table_state *na = realloc(a, cap * sizeof *a);
            if (!na) {
                json_decref(o);
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                break;
            }
            a = na;
        }
        mcdc_run_table_state *t = &a[n++];
        memset(t, 0, sizeof *t);
        t->table = strdup(table);
        t->capture_instance = strdup(ci);
        t->checkpoint = strdup(ck);
        t->control = dup_or_null(json_string_value(jcontrol));
        t->control_path = dup_or_null(json_string_value(jcpath));
        t->message = strdup(msg);
        t->state = st;
        t->pid = pid;
        mcdc_time_parse(&t->updated_at_us, updated);
        t->batches = batches;
        t->rows = rows;
        t->failures = failures;
        t->alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
        json_decref(o);
    }
    mcdc_storage_listing_dispose(&l);
    if (rc < 0) {
        mcdc_run_states_free(a, n);
        return rc;
    }
    if (n)
        qsort(a, n, sizeof *a, cmp_state);
    *out = a;
    *n_out = n;
    return 0;
}

void mcdc_run_states_free(mcdc_run_table_state *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(a[i].table);
        free(a[i].capture_instance);
        free(a[i].checkpoint);
        free(a[i].control);
        free(a[i].control_path);
        free(a[i].message);
    }
    free(a);
}
