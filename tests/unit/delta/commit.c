/* Unit tests for delta/commit.c: create, append, txn idempotency, rewrites, conflicts,
 * schema evolution, and multi-process races (appends, rewrites, upserts of one key, the
 * same txn twice). Data files are not needed by the log, so file actions name files that
 * carry their "row" in tags. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static mcdc_schema *schema_id_name(void)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(s, "name", MCDC_TYPE_STRING, 0, 0, true);
    return s;
}

static int setup(void **state)
{
    char *dir = testenv_tmpdir("commit");
    char *t = malloc(strlen(dir) + 8);
    sprintf(t, "%s/t", dir);
    free(dir);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    char *t = *state;
    char *slash = strrchr(t, '/');
    *slash = '\0';
    testenv_rmrf(t);
    free(t);
    return 0;
}

static void file_with_tag(mcdc_delta_file *f, const char *key, const char *val)
{
    char uuid[37], path[64];
    memset(f, 0, sizeof *f);
    snprintf(path, sizeof path, "part-%s.parquet", mcdc_delta_uuid(uuid));
    f->path = strdup(path);
    f->size = 100;
    f->modification_time = 1;
    f->data_change = true;
    f->base_row_id = f->default_row_commit_version = -1;
    f->deletion_timestamp = -1;
    f->dv.offset = -1;
    mcdc_delta_map_set(&f->tags, key, val);
}

static int create_default(const char *t)
{
    mcdc_schema *s = schema_id_name();
    int rc = mcdc_delta_create(t, s, NULL, 0, NULL, NULL);
    mcdc_schema_free(s);
    return rc;
}

static int append_one(const char *t, const char *app, int64_t txn, mcdc_delta_commit_result *r)
{
    mcdc_delta_file f;
    file_with_tag(&f, "row", "x");
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.app_id = app;
    o.txn_version = txn;
    o.user_metadata = "{\"batch\":1}";
    o.backoff_max_ms = 20;
    int rc = mcdc_delta_append(t, &f, 1, &o, r);
    mcdc_delta_file_clear(&f);
    return rc;
}

static void test_delta_commit__create_writes_protocol_metadata_commitinfo(void **state)
{
    const char *t = *state;
    mcdc_schema *s = schema_id_name();
    mcdc_schema_add(s, "ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true);
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, NULL, &r));
    assert_int_equal(0, r.version);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(3, snap->protocol.min_reader_version);
    assert_int_equal(7, snap->protocol.min_writer_version);
    assert_string_equal("timestampNtz", snap->protocol.reader_features[0]);
    assert_string_equal("1", mcdc_delta_snapshot_config(snap, "mcdc.schema_version", "?"));
    assert_int_equal(3, snap->schema->n_fields);
    assert_int_equal(MCDC_TYPE_TIMESTAMP_NTZ, snap->schema->fields[2].type.prim.type);
    assert_int_equal(36, strlen(snap->metadata.id));
    mcdc_delta_snapshot_free(snap);
    /* a second create with the same columns takes the table; another schema is refused */
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, NULL, &r));
    mcdc_schema *other = schema_id_name();
    assert_int_equal(MCDC_EEXISTS, mcdc_delta_create(t, other, NULL, 0, NULL, &r));
    mcdc_schema_free(other);
    mcdc_schema_free(s);

    mcdc_delta_history_entry *h;
    size_t n;
    assert_int_equal(0, mcdc_delta_history(&h, &n, t));
    assert_int_equal(1, n);
    assert_string_equal("CREATE TABLE", h[0].operation);
    assert_non_null(strstr(h[0].commit_info, "\"engineInfo\":\"mssql-cdc/"));
    mcdc_delta_history_free(h, n);
}

static void test_delta_commit__never_commits_past_an_empty_version(void **state)
{
    const char *t = *state;
    assert_int_equal(0, create_default(t));
    mcdc_delta_commit_result r;
    assert_int_equal(0, append_one(t, "app", 0, &r)); /* version 1, now in the cache */
    assert_int_equal(1, r.version);
    /* version 2 zeroed (a crash of another writer's file system, a bad restore) */
    char p2[1100], p3[1100];
    snprintf(p2, sizeof p2, "%s/_delta_log/00000000000000000002.json", t);
    snprintf(p3, sizeof p3, "%s/_delta_log/00000000000000000003.json", t);
    testenv_write(p2, "");
    assert_int_equal(MCDC_ECORRUPT, append_one(t, "app", 1, &r));
    assert_non_null(strstr(mcdc_error_last()->message, "00000000000000000002.json: the file is "
                                                       "empty"));
    assert_int_equal(-1, access(p3, F_OK));
    /* and a writer that has never seen the table is refused the same way */
    assert_int_equal(MCDC_ECORRUPT, append_one(t, "other", 0, &r));
    assert_int_equal(-1, access(p3, F_OK));
    struct stat st;
    assert_int_equal(0, stat(p2, &st));
    assert_int_equal(0, st.st_size);
}

static void test_delta_commit__plain_table_uses_reader1_writer2(void **state)
{
    const char *t = *state;
    assert_int_equal(0, create_default(t));
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(1, snap->protocol.min_reader_version);
    assert_int_equal(2, snap->protocol.min_writer_version);
    assert_false(snap->protocol.has_reader_features);
    mcdc_delta_snapshot_free(snap);
}

static void test_delta_commit__txn_refuses_versions_at_or_below_recorded(void **state)
{
    const char *t = *state;
    mcdc_delta_commit_result r;
    assert_int_equal(0, create_default(t));
    assert_int_equal(0, append_one(t, "app", 5, &r));
    assert_int_equal(1, r.version);
    assert_int_equal(MCDC_EALREADY, append_one(t, "app", 5, &r));
    assert_true(r.already_committed);
    assert_non_null(strstr(mcdc_error_last()->message, "already committed"));
    assert_int_equal(MCDC_EALREADY, append_one(t, "app", 4, &r));
    assert_int_equal(0, append_one(t, "app", 6, &r));
    assert_int_equal(2, r.version);
    assert_int_equal(0, append_one(t, "other", 1, &r));
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(6, mcdc_delta_snapshot_txn(snap, "app"));
    assert_int_equal(1, mcdc_delta_snapshot_txn(snap, "other"));
    assert_int_equal(3, snap->n_files);
    mcdc_delta_snapshot_free(snap);
    mcdc_delta_history_entry *h;
    size_t n;
    assert_int_equal(0, mcdc_delta_history(&h, &n, t));
    assert_int_equal(4, n);
    assert_string_equal("{\"batch\":1}", h[1].user_metadata);
    assert_int_equal(1, h[1].n_txns);
    assert_int_equal(5, h[1].txns[0].version);
    assert_non_null(strstr(h[1].commit_info, "\"isBlindAppend\":true"));
    mcdc_delta_history_free(h, n);
}

/* build: rewrite the single live file, incrementing its tag "n" */
static int build_increment(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n,
                           void *payload)
{
    (void)payload;
    *out = calloc(2, sizeof **out);
    *n = 0;
    long cur = 0;
    if (snap->n_files == 1) {
        cur = atol(mcdc_delta_map_get(&snap->files[0].tags, "n", NULL));
        mcdc_delta_remove_of(&(*out)[(*n)++], &snap->files[0], 1);
    } else if (snap->n_files > 1) {
        return mcdc_error_set(MCDC_ECORRUPT, "more than one file: %zu", snap->n_files);
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", cur + 1);
    (*out)[*n].kind = MCDC_DELTA_ACTION_ADD;
    file_with_tag(&(*out)[*n].u.file, "n", buf);
    (*n)++;
    return 0;
}

static int rewrite(const char *t, mcdc_delta_commit_result *r)
{
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "MERGE";
    o.read_pred.op = MCDC_DELTA_PRED_ALL;
    o.backoff_max_ms = 20;
    return mcdc_delta_commit(t, build_increment, NULL, &o, r);
}

static long single_n(const char *t)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(1, snap->n_files);
    long n = atol(mcdc_delta_map_get(&snap->files[0].tags, "n", NULL));
    mcdc_delta_snapshot_free(snap);
    return n;
}

static void test_delta_commit__rewrite_removes_and_adds(void **state)
{
    const char *t = *state;
    mcdc_delta_commit_result r;
    assert_int_equal(0, create_default(t));
    assert_int_equal(0, rewrite(t, &r));
    assert_int_equal(0, rewrite(t, &r));
    assert_int_equal(2, r.version);
    assert_int_equal(2, single_n(t));
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(1, snap->n_tombstones);
    assert_true(snap->tombstones[0].extended_file_metadata);
    mcdc_delta_snapshot_free(snap);
    /* time travel */
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, 1));
    assert_int_equal(1, snap->version);
    assert_string_equal("1", mcdc_delta_map_get(&snap->files[0].tags, "n", NULL));
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_delta_snapshot_open(&snap, t, 3));
}

/* Write version files by hand to play a concurrent winner. */
static void put_version(const char *t, int64_t v, const char *lines)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log/%020lld.json", t, (long long)v);
    testenv_write(p, lines);
}

typedef struct racer {
    const char *t;
    const char *winner; /* lines for the winner version, written from build on the first call */
    int         calls;
} racer;

static int build_racing(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n,
                        void *payload)
{
    racer *r = payload;
    if (r->calls++ == 0)
        put_version(r->t, snap->version + 1, r->winner);
    *out = calloc(1, sizeof **out);
    *n = 1;
    (*out)[0].kind = MCDC_DELTA_ACTION_ADD;
    file_with_tag(&(*out)[0].u.file, "k", "1");
    return 0;
}

static int race(const char *t, const char *winner, mcdc_delta_pred pred,
                mcdc_delta_commit_result *res)
{
    racer r = { t, winner, 0 };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.read_pred = pred;
    o.backoff_max_ms = 5;
    return mcdc_delta_commit(t, build_racing, &r, &o, res);
}

static void test_delta_commit__conflicts_follow_invariant_7(void **state)
{
    const char *t = *state;
    mcdc_delta_commit_result r;
    assert_int_equal(0, create_default(t));
    mcdc_delta_pred none = { MCDC_DELTA_PRED_NONE, NULL, { true, { 0 } } };
    mcdc_delta_pred ge10 = { MCDC_DELTA_PRED_GE, "id", { false, { .i = 10 } } };
    mcdc_delta_pred eq5 = { MCDC_DELTA_PRED_EQ, "id", { false, { .i = 5 } } };

    /* a blind append against a blind append: rebase, no conflict */
    const char *add_low = "{\"add\":{\"path\":\"a.parquet\",\"partitionValues\":{},\"size\":1,"
                          "\"modificationTime\":1,\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":2,"
                          "\\\"minValues\\\":{\\\"id\\\":1},\\\"maxValues\\\":{\\\"id\\\":9},"
                          "\\\"nullCount\\\":{\\\"id\\\":0}}\"}}\n";
    assert_int_equal(0, race(t, add_low, none, &r));
    assert_int_equal(2, r.version);
    assert_int_equal(1, r.n_rebases);
    assert_int_equal(0, r.n_conflicts);
    /* a reader of id >= 10 is not disturbed by a file with ids 1..9 */
    assert_int_equal(0, race(t, add_low, ge10, &r));
    assert_int_equal(0, r.n_conflicts);
    assert_int_equal(1, r.n_rebases);
    /* but a reader of id = 5 is */
    assert_int_equal(0, race(t, add_low, eq5, &r));
    assert_int_equal(1, r.n_conflicts);
    /* a metadata change conflicts even with a blind append */
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_buf md = MCDC_BUF_INIT(1 << 20);
    mcdc_delta_action a = { .kind = MCDC_DELTA_ACTION_METADATA };
    a.u.metadata = snap->metadata;
    mcdc_delta_action_to_json(&md, &a);
    mcdc_buf_putc(&md, '\n');
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(0, race(t, md.ptr, none, &r));
    assert_int_equal(1, r.n_conflicts);
    mcdc_buf_dispose(&md);
    /* the winner recorded our txn: already committed */
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.app_id = "app";
    o.txn_version = 3;
    racer rr = { t, "{\"txn\":{\"appId\":\"app\",\"version\":3}}\n", 0 };
    assert_int_equal(MCDC_EALREADY, mcdc_delta_commit(t, build_racing, &rr, &o, &r));
    assert_true(r.already_committed);
}

static void test_delta_commit__add_columns_evolves_schema(void **state)
{
    const char *t = *state;
    mcdc_delta_commit_result r;
    assert_int_equal(0, create_default(t));
    mcdc_schema *add = mcdc_schema_new();
    mcdc_schema_add(add, "amount", MCDC_TYPE_DECIMAL, 18, 2, true);
    mcdc_schema_add(add, "id", MCDC_TYPE_LONG, 0, 0, true); /* present: skipped */
    assert_int_equal(0, mcdc_delta_add_columns(t, add, &r));
    assert_int_equal(1, r.version);
    assert_int_equal(0, mcdc_delta_add_columns(t, add, &r)); /* nothing to do */
    assert_int_equal(1, r.version);
    mcdc_schema_free(add);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(3, snap->schema->n_fields);
    assert_int_equal(18, snap->schema->fields[2].type.prim.precision);
    mcdc_delta_snapshot_free(snap);
    mcdc_schema *bad = mcdc_schema_new();
    mcdc_schema_add(bad, "name", MCDC_TYPE_LONG, 0, 0, true);
    assert_int_equal(MCDC_ESCHEMA, mcdc_delta_add_columns(t, bad, &r));
    mcdc_schema_free(bad);
}

/* ---- multi-process races ---------------------------------------------------------- */

static void wait_all(pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        int st;
        assert_int_equal(pids[i], waitpid(pids[i], &st, 0));
        assert_true(WIFEXITED(st));
        assert_int_equal(0, WEXITSTATUS(st));
    }
}

static void test_delta_commit__concurrent_appends_and_rewrites_lose_nothing(void **state)
{
    const char *t = *state;
    char t2[1024];
    snprintf(t2, sizeof t2, "%s2", t);
    assert_int_equal(0, create_default(t));
    assert_int_equal(0, create_default(t2));
    enum { PROCS = 4, EACH = 100 };
    pid_t pids[2 * PROCS];
    for (int p = 0; p < PROCS; p++) {
        if ((pids[p] = fork()) == 0) {
            for (int i = 0; i < EACH; i++) {
                char app[32];
                snprintf(app, sizeof app, "writer-%d", p);
                mcdc_delta_commit_result r;
                if (append_one(t, app, i, &r) != 0)
                    _exit(1);
            }
            _exit(0);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        if ((pids[PROCS + p] = fork()) == 0) {
            for (int i = 0; i < EACH; i++) {
                mcdc_delta_commit_result r;
                if (rewrite(t2, &r) != 0) {
                    fprintf(stderr, "rewrite: %s\n", mcdc_error_last()->message);
                    _exit(1);
                }
            }
            _exit(0);
        }
    }
    wait_all(pids, 2 * PROCS);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(PROCS * EACH, snap->version);
    assert_int_equal(PROCS * EACH, snap->n_files);
    for (int p = 0; p < PROCS; p++) {
        char app[32];
        snprintf(app, sizeof app, "writer-%d", p);
        assert_int_equal(EACH - 1, mcdc_delta_snapshot_txn(snap, app));
    }
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(PROCS * EACH, single_n(t2));
    testenv_rmrf(t2);
}

static int build_upsert(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n,
                        void *payload)
{
    (void)payload;
    *out = calloc(snap->n_files + 1, sizeof **out);
    *n = 0;
    for (size_t i = 0; i < snap->n_files; i++)
        if (mcdc_delta_map_get(&snap->files[i].tags, "key", NULL))
            mcdc_delta_remove_of(&(*out)[(*n)++], &snap->files[i], 1);
    (*out)[*n].kind = MCDC_DELTA_ACTION_ADD;
    file_with_tag(&(*out)[*n].u.file, "key", "42");
    (*n)++;
    return 0;
}

static void test_delta_commit__eight_upserts_of_one_key_leave_one_row(void **state)
{
    const char *t = *state;
    enum { PROCS = 8 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        if ((pids[p] = fork()) == 0) {
            if (create_default(t) != 0)
                _exit(2);
            mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
            o.read_pred.op = MCDC_DELTA_PRED_ALL;
            o.backoff_max_ms = 20;
            _exit(mcdc_delta_commit(t, build_upsert, NULL, &o, NULL) == 0 ? 0 : 1);
        }
    }
    wait_all(pids, PROCS);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(1, snap->n_files);
    assert_int_equal(PROCS, snap->version);
    mcdc_delta_snapshot_free(snap);
}

static void test_delta_commit__same_txn_from_two_processes_commits_once(void **state)
{
    const char *t = *state;
    assert_int_equal(0, create_default(t));
    pid_t pids[2];
    for (int p = 0; p < 2; p++) {
        if ((pids[p] = fork()) == 0) {
            mcdc_delta_commit_result r;
            int rc = append_one(t, "stream", 7, &r);
            _exit(rc == 0 || rc == MCDC_EALREADY ? 0 : 1);
        }
    }
    wait_all(pids, 2);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(1, snap->version);
    assert_int_equal(1, snap->n_files);
    assert_int_equal(7, mcdc_delta_snapshot_txn(snap, "stream"));
    mcdc_delta_snapshot_free(snap);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_delta_commit__never_commits_past_an_empty_version),
        T(test_delta_commit__create_writes_protocol_metadata_commitinfo),
        T(test_delta_commit__plain_table_uses_reader1_writer2),
        T(test_delta_commit__txn_refuses_versions_at_or_below_recorded),
        T(test_delta_commit__rewrite_removes_and_adds),
        T(test_delta_commit__conflicts_follow_invariant_7),
        T(test_delta_commit__add_columns_evolves_schema),
        T(test_delta_commit__concurrent_appends_and_rewrites_lose_nothing),
        T(test_delta_commit__eight_upserts_of_one_key_leave_one_row),
        T(test_delta_commit__same_txn_from_two_processes_commits_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
