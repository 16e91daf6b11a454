/* Unit tests for silver/apply.c on real Delta tables (no stream): bronze batches written
 * directly, silver applied after each and compared with a model of the source table;
 * rebuilds from a snapshot, file clustering and splitting, the position, the lock and the
 * capture-instance check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"
#include "mcdc/fs.h"
#include "mcdc/pipeline.h"
#include "mcdc/silver.h"
#include "silver/datafile.h"

#define MAXK 64

typedef struct fixture {
    char dir[256], bronze[300], silver[300], control[300];
    mcdc_schema *bschema; /* bronze's */
    int  lsn;             /* last commit LSN used */
    /* the model: the source table */
    bool present[MAXK];
    char name[MAXK][32];
    int  amount[MAXK];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mcdc-silver-apply-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->bronze, sizeof f->bronze, "%s/bronze", f->dir);
    snprintf(f->silver, sizeof f->silver, "%s/silver", f->dir);
    snprintf(f->control, sizeof f->control, "%s/control", f->dir);
    mcdc_schema *cap = mcdc_schema_new();
    assert_int_equal(0, mcdc_schema_add(cap, "id", MCDC_TYPE_INT, 0, 0, false));
    assert_int_equal(0, mcdc_schema_add(cap, "name", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(cap, "amount", MCDC_TYPE_DECIMAL, 10, 2, true));
    assert_int_equal(0, mcdc_bronze_schema(&f->bschema, cap, true));
    mcdc_schema_free(cap);
    assert_int_equal(0, mcdc_delta_create(f->bronze, f->bschema, NULL, 0, NULL, NULL));
    f->lsn = 100;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(0, system(cmd));
    mcdc_schema_free(f->bschema);
    free(f);
    return 0;
}

/* A bronze row: op, key, name, amount at commit @p lsn (seq orders rows within it). */
typedef struct brow {
    int op, id;
    const char *name;
    int amount;
    int lsn, seq, cmd;
    const char *ci;
    int snapshot; /* op 0: _snapshot */
} brow;

static char lsn_texts[4096][24];
static int lsn_next;

static const char *lsn_text(int n)
{
    char *t = lsn_texts[lsn_next++ % 4096];
    snprintf(t, 24, "0x%020X", n);
    return t;
}

static void str(mcdc_value *v, const char *s)
{
    v->is_null = !s;
    if (s) {
        v->v.s.ptr = s;
        v->v.s.len = strlen(s);
    }
}

/* Append one bronze commit holding @p rows. */
static void append(fixture *f, const brow *rows, size_t n)
{
    mcdc_silver_datafile *w = NULL;
    assert_int_equal(0, mcdc_silver_datafile_open(&w, f->bronze, f->bschema));
    size_t nc = f->bschema->n_cols;
    mcdc_value *v = calloc(nc, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const brow *r = &rows[i];
        memset(v, 0, nc * sizeof *v);
        str(&v[mcdc_schema_find(f->bschema, "_capture_instance")], r->ci ? r->ci : "dbo_t");
        str(&v[mcdc_schema_find(f->bschema, "_start_lsn")], lsn_text(r->lsn));
        str(&v[mcdc_schema_find(f->bschema, "_seqval")], r->op ? lsn_text(r->seq) : NULL);
        v[mcdc_schema_find(f->bschema, "_operation")].v.i = r->op;
        mcdc_value *cmd = &v[mcdc_schema_find(f->bschema, "_command_id")];
        cmd->is_null = r->op == 0;
        cmd->v.i = r->cmd ? r->cmd : 1;
        v[mcdc_schema_find(f->bschema, "_commit_ts")].v.i = 1790000000000000LL + r->lsn * 1000000LL;
        v[mcdc_schema_find(f->bschema, "id")].v.i = r->id;
        str(&v[mcdc_schema_find(f->bschema, "name")], r->name);
        v[mcdc_schema_find(f->bschema, "amount")].v.dec = r->amount;
        v[mcdc_schema_find(f->bschema, "_batch_id")].is_null = r->op == 0;
        str(&v[mcdc_schema_find(f->bschema, "_snapshot")], r->op == 0 ? lsn_text(r->snapshot) : NULL);
        v[mcdc_schema_find(f->bschema, "_chunk")].is_null = true;
        assert_int_equal(0, mcdc_silver_datafile_write(w, v));
    }
    free(v);
    mcdc_delta_file file;
    assert_int_equal(0, mcdc_silver_datafile_close(w, &file));
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    assert_int_equal(0, mcdc_delta_append(f->bronze, &file, 1, &co, NULL));
    mcdc_delta_file_clear(&file);
    mcdc_silver_datafile_free(w);
}

static const char *const keys_id[] = { "id" };
static const char *const ci_t[] = { "dbo_t" };

static int apply_into(fixture *f, const char *silver_name, const char *silver_path,
                      int threads, int64_t file_rows, mcdc_silver_apply_result *r)
{
    mcdc_silver_apply_options o = MCDC_SILVER_APPLY_OPTIONS_INIT;
    o.bronze_name = "bronze.t";
    o.bronze_path = f->bronze;
    o.silver_name = silver_name;
    o.silver_path = silver_path;
    o.control_path = f->control;
    o.capture_instances = ci_t;
    o.n_capture_instances = 1;
    o.keys = keys_id;
    o.n_keys = 1;
    o.target_file_rows = file_rows;
    o.threads = threads;
    return mcdc_silver_apply(&o, r);
}

static int apply(fixture *f, int64_t file_rows, mcdc_silver_apply_result *r)
{
    mcdc_silver_apply_options o = MCDC_SILVER_APPLY_OPTIONS_INIT;
    o.bronze_name = "bronze.t";
    o.bronze_path = f->bronze;
    o.silver_name = "silver.t";
    o.silver_path = f->silver;
    o.control_path = f->control;
    o.capture_instances = ci_t;
    o.n_capture_instances = 1;
    o.keys = keys_id;
    o.n_keys = 1;
    o.target_file_rows = file_rows;
    return mcdc_silver_apply(&o, r);
}

/* Silver's rows equal the model; returns the number of live silver files. */
static size_t check(fixture *f)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, f->silver, -1));
    mcdc_delta_scan *sc = NULL;
    assert_int_equal(0, mcdc_delta_scan_open(&sc, snap, NULL));
    const mcdc_schema *s = mcdc_delta_scan_schema(sc);
    int iid = mcdc_schema_find(s, "id"), iname = mcdc_schema_find(s, "name"),
        iamt = mcdc_schema_find(s, "amount"), ilsn = mcdc_schema_find(s, "_start_lsn");
    assert_true(iid == 0 && iname == 1 && iamt == 2 && ilsn == 3);
    bool seen[MAXK] = { false };
    const mcdc_value *r;
    int rc;
    while ((rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        int id = (int)r[iid].v.i;
        assert_true(id >= 0 && id < MAXK);
        if (!f->present[id] || seen[id])
            fail_msg("silver holds key %d %s", id, seen[id] ? "twice" : "deleted in the source");
        seen[id] = true;
        assert_false(r[ilsn].is_null);
        if (r[iname].v.s.len != strlen(f->name[id]) ||
            memcmp(r[iname].v.s.ptr, f->name[id], r[iname].v.s.len) != 0)
            fail_msg("key %d: name '%.*s', want '%s'", id, (int)r[iname].v.s.len,
                     r[iname].v.s.ptr, f->name[id]);
        assert_int_equal(f->amount[id], (int)r[iamt].v.dec);
    }
    assert_int_equal(0, rc);
    for (int k = 0; k < MAXK; k++)
        if (f->present[k] && !seen[k])
            fail_msg("key %d missing from silver", k);
    size_t n = snap->n_files;
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    return n;
}

static void set_row(fixture *f, int id, const char *name, int amount)
{
    f->present[id] = true;
    snprintf(f->name[id], sizeof f->name[id], "%s", name);
    f->amount[id] = amount;
}

static void test_silver_apply__bootstrap_then_changes(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    /* no silver yet and an empty bronze: nothing to apply, a silver table anyway */
    brow snap[20];
    for (int i = 0; i < 20; i++) {
        brow b = { 0, i * 2, "s", i, 100, 0, 0, NULL, 100 };
        snap[i] = b;
        set_row(f, i * 2, "s", i);
    }
    append(f, snap, 20);
    assert_int_equal(0, apply(f, 4, &r));
    assert_true(r.bronze_found && r.rebuilt && r.has_applied_lsn && r.has_snapshot_lsn);
    assert_string_equal("0x00000000000000000064", lsn_text(100));
    assert_int_equal(100, r.applied_lsn.b[9]);
    assert_int_equal(5, check(f)); /* 20 rows in files of 4 */
    /* one update in the middle touches one file */
    brow b1[] = { { 3, 10, "s", 5, 110, 1, 1, NULL, 0 }, { 4, 10, "upd", 55, 110, 1, 1, NULL, 0 } };
    append(f, b1, 2);
    set_row(f, 10, "upd", 55);
    assert_int_equal(0, apply(f, 4, &r));
    assert_false(r.rebuilt);
    assert_int_equal(1, r.changed_keys);
    assert_int_equal(1, r.silver_files_rewritten);
    assert_int_equal(1, r.silver_files_added);
    assert_int_equal(1, r.bronze_files_read); /* the snapshot file is skipped */
    assert_int_equal(5, check(f));
    /* a new key between existing ones goes into the file before it; deleting a key */
    brow b2[] = { { 2, 11, "new", 1, 120, 1, 1, NULL, 0 }, { 1, 20, "s", 10, 121, 1, 1, NULL, 0 } };
    append(f, b2, 2);
    set_row(f, 11, "new", 1);
    f->present[20] = false;
    assert_int_equal(0, apply(f, 4, &r));
    assert_int_equal(2, r.changed_keys);
    assert_true(r.silver_files_rewritten <= 2);
    assert_int_equal(5, check(f));
    /* a rerun applies nothing */
    assert_int_equal(0, apply(f, 4, &r));
    assert_int_equal(0, r.changed_keys);
    assert_int_equal(0, r.silver_files_rewritten);
    assert_int_equal(121, r.applied_lsn.b[9]);
    /* the position is in the control table */
    mcdc_control_row row;
    assert_int_equal(0, mcdc_control_get(&row, f->control, "silver.t"));
    assert_string_equal(lsn_text(121), row.applied_lsn);
    assert_string_equal(lsn_text(100), row.snapshot_lsn);
    assert_false(row.finalized_until.has); /* no facts: held */
    mcdc_control_row_clear(&row);
}

static void test_silver_apply__inserts_beyond_the_ends_and_splits(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    brow b[8];
    for (int i = 0; i < 8; i++) {
        brow x = { 2, 20 + i, "a", i, 100 + i, 1, 1, NULL, 0 };
        b[i] = x;
        set_row(f, 20 + i, "a", i);
    }
    append(f, b, 8);
    assert_int_equal(0, apply(f, 4, &r));
    assert_true(r.rebuilt); /* the first call builds silver from the changes */
    assert_int_equal(2, check(f));
    /* keys below and above every file, many of them: files grow and split */
    brow c[12];
    for (int i = 0; i < 6; i++) {
        brow lo = { 2, i, "lo", i, 200, 1 + i, 1, NULL, 0 };
        brow hi = { 2, 50 + i, "hi", i, 200, 10 + i, 1, NULL, 0 };
        c[2 * i] = lo;
        c[2 * i + 1] = hi;
        set_row(f, i, "lo", i);
        set_row(f, 50 + i, "hi", i);
    }
    append(f, c, 12);
    assert_int_equal(0, apply(f, 4, &r));
    assert_int_equal(12, r.rows_inserted);
    assert_int_equal(2, r.silver_files_rewritten);
    size_t n = check(f);
    assert_true(n >= 5 && n <= 6);
}

static void test_silver_apply__random_histories_match_the_model(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    unsigned seed = 12345;
    int lsn = 1000;
    for (int round = 0; round < 25; round++) {
        brow b[40];
        size_t n = 0;
        int commits = 1 + (int)(rand_r(&seed) % 4);
        for (int c = 0; c < commits; c++) {
            lsn += 3;
            int ops = 1 + (int)(rand_r(&seed) % 8);
            for (int o = 0; o < ops && n + 2 <= 40; o++) {
                int k = (int)(rand_r(&seed) % 40);
                int seq = o + 1;
                char *nm = f->name[k];
                if (!f->present[k]) {
                    brow x = { 2, k, "ins", round, lsn, seq, o + 1, NULL, 0 };
                    b[n++] = x;
                    set_row(f, k, "ins", round);
                } else if (rand_r(&seed) % 3 == 0) {
                    brow x = { 1, k, nm, f->amount[k], lsn, seq, o + 1, NULL, 0 };
                    b[n++] = x;
                    f->present[k] = false;
                } else if (rand_r(&seed) % 4 == 0) {
                    /* the row moves to a free key: 3 on the old key, 4 on the new one */
                    int to = 40 + (int)(rand_r(&seed) % 24);
                    if (f->present[to])
                        continue;
                    brow x = { 3, k, nm, f->amount[k], lsn, seq, o + 1, NULL, 0 };
                    brow y = { 4, to, "moved", f->amount[k], lsn, seq, o + 1, NULL, 0 };
                    b[n++] = x;
                    b[n++] = y;
                    set_row(f, to, "moved", f->amount[k]);
                    f->present[k] = false;
                } else {
                    brow x = { 3, k, nm, f->amount[k], lsn, seq, o + 1, NULL, 0 };
                    brow y = { 4, k, "upd", round * 10 + o, lsn, seq, o + 1, NULL, 0 };
                    b[n++] = x;
                    b[n++] = y;
                    set_row(f, k, "upd", round * 10 + o);
                }
            }
        }
        /* bronze files hold rows in any order */
        for (size_t i = n; i > 1; i--) {
            size_t j = rand_r(&seed) % i;
            brow t = b[i - 1];
            b[i - 1] = b[j];
            b[j] = t;
        }
        if (n)
            append(f, b, n);
        if (round % 3 == 2 || round == 24) {
            assert_int_equal(0, apply(f, 5, &r));
            check(f);
        }
    }
}

static void test_silver_apply__newer_snapshot_rebuilds(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    brow b[] = { { 2, 1, "a", 1, 100, 1, 1, NULL, 0 }, { 2, 2, "b", 2, 101, 1, 1, NULL, 0 },
                 { 2, 3, "c", 3, 102, 1, 1, NULL, 0 } };
    append(f, b, 3);
    assert_int_equal(0, apply(f, 100, &r));
    /* a re-snapshot at 200 after a purged gap in which key 2 was deleted, key 4 added */
    brow s[] = { { 0, 1, "a", 1, 200, 0, 0, NULL, 200 }, { 0, 3, "c2", 3, 200, 0, 0, NULL, 200 },
                 { 0, 4, "d", 4, 200, 0, 0, NULL, 200 } };
    append(f, s, 3);
    brow after[] = { { 4, 4, "d2", 44, 210, 1, 1, NULL, 0 } };
    append(f, after, 1);
    memset(f->present, 0, sizeof f->present);
    set_row(f, 1, "a", 1);
    set_row(f, 3, "c2", 3);
    set_row(f, 4, "d2", 44);
    assert_int_equal(0, apply(f, 100, &r));
    assert_true(r.rebuilt);
    assert_int_equal(200, r.snapshot_lsn.b[9]);
    assert_int_equal(210, r.applied_lsn.b[9]);
    check(f);
    /* the snapshot is not applied again */
    assert_int_equal(0, apply(f, 100, &r));
    assert_false(r.rebuilt);
    assert_int_equal(0, r.changed_keys);
}

static void test_silver_apply__rows_of_another_table_are_refused(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    brow b[] = { { 2, 1, "a", 1, 100, 1, 1, NULL, 0 }, { 2, 2, "b", 2, 101, 1, 1, "dbo_other", 0 } };
    append(f, b, 2);
    assert_int_equal(MCDC_EINVAL, apply(f, 100, &r));
    assert_non_null(strstr(mcdc_error_last()->message, "dbo_other"));
    /* nothing was recorded */
    mcdc_control_row row;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_control_get(&row, f->control, "silver.t"));
}

static void test_silver_apply__one_apply_at_a_time(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    char lock_path[400];
    assert_int_equal(0, mcdc_fs_mkdirs(f->silver));
    snprintf(lock_path, sizeof lock_path, "%s/_mcdc_silver_apply.lock", f->silver);
    pid_t pid = fork();
    if (pid == 0) {
        mcdc_fs_lock *l = NULL;
        if (mcdc_fs_lock_acquire(&l, lock_path) < 0)
            _exit(1);
        sleep(3);
        _exit(0);
    }
    usleep(300000);
    assert_int_equal(MCDC_ELOCKED, apply(f, 100, &r));
    kill(pid, 9);
    int st;
    waitpid(pid, &st, 0);
    assert_int_equal(0, apply(f, 100, &r));
}

static void test_silver_apply__missing_bronze_changes_nothing(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    snprintf(f->bronze, sizeof f->bronze, "%s/nope", f->dir);
    assert_int_equal(0, apply(f, 100, &r));
    assert_false(r.bronze_found);
    assert_false(r.has_applied_lsn);
}

/* Every live file of a silver table as "id,name,amount,lsn;..." in its row order, the
 * files' texts sorted and joined by '|'; with @p sorted_files, each file's ids must rise. */
static void dump_files(const char *silver, char *out, size_t cap, bool sorted_files)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, silver, -1));
    static char texts[64][2048];
    assert_true(snap->n_files <= 64);
    for (size_t i = 0; i < snap->n_files; i++) {
        mcdc_delta_snapshot view = *snap;
        view.files = &snap->files[i];
        view.n_files = 1;
        mcdc_delta_scan *sc = NULL;
        assert_int_equal(0, mcdc_delta_scan_open(&sc, &view, NULL));
        const mcdc_value *r;
        int rc, prev = -1;
        texts[i][0] = 0;
        while ((rc = mcdc_delta_scan_next(sc, &r)) == 1) {
            char line[128];
            snprintf(line, sizeof line, "%d,%.*s,%d,%.*s;", (int)r[0].v.i, (int)r[1].v.s.len,
                     r[1].v.s.ptr, (int)r[2].v.dec, (int)r[3].v.s.len, r[3].v.s.ptr);
            strncat(texts[i], line, sizeof texts[i] - strlen(texts[i]) - 1);
            if (sorted_files && (int)r[0].v.i <= prev)
                fail_msg("file %s: key %d after %d", snap->files[i].path, (int)r[0].v.i, prev);
            prev = (int)r[0].v.i;
        }
        assert_int_equal(0, rc);
        mcdc_delta_scan_free(sc);
    }
    qsort(texts, snap->n_files, sizeof texts[0], (int (*)(const void *, const void *))strcmp);
    out[0] = 0;
    for (size_t i = 0; i < snap->n_files; i++) {
        strncat(out, texts[i], cap - strlen(out) - 1);
        strncat(out, "|", cap - strlen(out) - 1);
    }
    mcdc_delta_snapshot_free(snap);
}

/* The files written do not depend on the number of threads: the same files with the same
 * rows in the same order, the same counts. */
static void test_silver_apply__threads_do_not_change_the_files(void **state)
{
    fixture *f = *state;
    char other[400];
    snprintf(other, sizeof other, "%s/silver_b", f->dir);
    static char da[65536], db[65536];
    unsigned seed = 777;
    int lsn = 1000;
    for (int round = 0; round < 8; round++) {
        brow b[40];
        size_t n = 0;
        lsn += 5;
        for (int o = 0; o < (round == 0 ? 40 : 12); o++) {
            int k = round == 0 ? o : (int)(rand_r(&seed) % 60);
            bool dup = false;
            for (size_t i = 0; i < n; i++)
                dup = dup || b[i].id == k;
            if (dup)
                continue;
            if (!f->present[k]) {
                brow x = { 2, k, "ins", round, lsn, o + 1, o + 1, NULL, 0 };
                b[n++] = x;
                set_row(f, k, "ins", round);
            } else if (rand_r(&seed) % 3 == 0) {
                brow x = { 1, k, f->name[k], f->amount[k], lsn, o + 1, o + 1, NULL, 0 };
                b[n++] = x;
                f->present[k] = false;
            } else {
                brow x = { 4, k, "upd", round * 100 + o, lsn, o + 1, o + 1, NULL, 0 };
                b[n++] = x;
                set_row(f, k, "upd", round * 100 + o);
            }
        }
        append(f, b, n);
        mcdc_silver_apply_result ra, rb;
        assert_int_equal(0, apply_into(f, "silver.t", f->silver, 1, 4, &ra));
        assert_int_equal(0, apply_into(f, "silver.b", other, 4, 4, &rb));
        check(f);
        dump_files(f->silver, da, sizeof da, true);
        dump_files(other, db, sizeof db, true);
        assert_string_equal(da, db);
        assert_int_equal(ra.silver_files_rewritten, rb.silver_files_rewritten);
        assert_int_equal(ra.silver_files_added, rb.silver_files_added);
        assert_int_equal(ra.rows_inserted, rb.rows_inserted);
        assert_int_equal(ra.rows_updated, rb.rows_updated);
        assert_int_equal(ra.rows_deleted, rb.rows_deleted);
        assert_int_equal(ra.silver_rows_read, rb.silver_rows_read);
        if (round > 0)
            assert_true(ra.silver_files_before >= 8);
    }
}

typedef struct swap_payload {
    const mcdc_delta_file *old;
    mcdc_delta_file       *repl;
} swap_payload;

static int build_swap(const mcdc_delta_snapshot *snap, mcdc_delta_action **actions,
                      size_t *n_actions, void *payload)
{
    (void)snap;
    swap_payload *p = payload;
    mcdc_delta_action *a = calloc(2, sizeof *a);
    assert_int_equal(0, mcdc_delta_remove_of(&a[0], p->old, 1));
    a[1].kind = MCDC_DELTA_ACTION_ADD;
    assert_int_equal(0, mcdc_delta_file_copy(&a[1].u.file, p->repl));
    *actions = a;
    *n_actions = 2;
    return 0;
}

/* Replace silver's file holding key 0 (keys 0..5, sorted, with range tags) by one with its
 * rows in @p order, its tags kept but @p tag (when not NULL) set to the key @p tag_key. */
static void replace_first_file(fixture *f, const int *order, const char *tag, int64_t tag_key)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, f->silver, -1));
    mcdc_schema *flat = NULL;
    assert_int_equal(0, mcdc_delta_schema_to_flat(&flat, snap->schema));
    const mcdc_delta_file *victim = NULL;
    static mcdc_value rows[8][5];
    static char names[8][32], lsns[8][32];
    int n = 0;
    for (size_t i = 0; i < snap->n_files && !victim; i++) {
        mcdc_delta_snapshot view = *snap;
        view.files = &snap->files[i];
        view.n_files = 1;
        mcdc_delta_scan *sc = NULL;
        assert_int_equal(0, mcdc_delta_scan_open(&sc, &view, NULL));
        const mcdc_value *v;
        n = 0;
        while (mcdc_delta_scan_next(sc, &v) == 1 && n < 8) {
            memcpy(rows[n], v, sizeof rows[n]);
            snprintf(names[n], 32, "%.*s", (int)v[1].v.s.len, v[1].v.s.ptr);
            snprintf(lsns[n], 32, "%.*s", (int)v[3].v.s.len, v[3].v.s.ptr);
            rows[n][1].v.s.ptr = names[n];
            rows[n][3].v.s.ptr = lsns[n];
            n++;
        }
        mcdc_delta_scan_free(sc);
        if (rows[0][0].v.i == 0)
            victim = &snap->files[i];
    }
    assert_non_null(victim);
    assert_int_equal(6, n);
    mcdc_silver_datafile *w = NULL;
    assert_int_equal(0, mcdc_silver_datafile_open(&w, f->silver, flat));
    for (int i = 0; i < n; i++)
        assert_int_equal(0, mcdc_silver_datafile_write(w, rows[order[i]]));
    mcdc_delta_file repl;
    assert_int_equal(0, mcdc_silver_datafile_close(w, &repl));
    mcdc_silver_datafile_free(w);
    for (size_t i = 0; i < victim->tags.n; i++)
        assert_int_equal(0, mcdc_delta_map_set(&repl.tags, victim->tags.kv[i].key,
                                               victim->tags.kv[i].value));
    if (tag) {
        mcdc_buf k = MCDC_BUF_INIT(64);
        mcdc_value v = { .is_null = false, .v.i = tag_key };
        assert_int_equal(0, mcdc_silver_key_encode(&k, &flat->cols[0], &v));
        char hex[64];
        for (size_t i = 0; i < k.len; i++)
            snprintf(hex + 2 * i, 3, "%02X", (unsigned char)k.ptr[i]);
        mcdc_buf_dispose(&k);
        assert_int_equal(0, mcdc_delta_map_set(&repl.tags, tag, hex));
    }
    swap_payload p = { victim, &repl };
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    assert_int_equal(0, mcdc_delta_commit(f->silver, build_swap, &p, &co, NULL));
    mcdc_delta_file_clear(&repl);
    mcdc_schema_free(flat);
    mcdc_delta_snapshot_free(snap);
}

/* A file that keeps silver's key range tags but whose rows are not sorted (another tool
 * rewrote it) is rewritten from held rows: the result is right and sorted. */
static void test_silver_apply__unsorted_file_with_a_range_is_rewritten_sorted(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    brow b[12];
    for (int i = 0; i < 12; i++) {
        brow x = { 2, i, "a", i, 100, i + 1, i + 1, NULL, 0 };
        b[i] = x;
        set_row(f, i, "a", i);
    }
    append(f, b, 12);
    assert_int_equal(0, apply(f, 6, &r));
    assert_int_equal(2, check(f));
    /* rewrite the file holding key 0 with its rows reversed, tags kept */
    static const int reversed[] = { 5, 4, 3, 2, 1, 0 };
    replace_first_file(f, reversed, NULL, 0);
    /* change keys of that file */
    brow c[] = { { 4, 2, "upd", 22, 200, 1, 1, NULL, 0 }, { 1, 4, "a", 4, 200, 2, 2, NULL, 0 } };
    append(f, c, 2);
    set_row(f, 2, "upd", 22);
    f->present[4] = false;
    assert_int_equal(0, apply(f, 6, &r));
    assert_int_equal(1, r.silver_files_rewritten);
    assert_int_equal(1, r.rows_updated);
    assert_int_equal(1, r.rows_deleted);
    check(f);
    static char d[8192];
    dump_files(f->silver, d, sizeof d, true);
}

/* A file whose rows leave the key range of its tags fails the apply with a clear error,
 * whether the first row is below the range, a later one above it, or a row below the
 * range comes out of order (streamed), or the rows are unsorted (held); nothing commits. */
static void test_silver_apply__a_row_outside_the_tags_range_fails(void **state)
{
    static const int sorted[] = { 0, 1, 2, 3, 4, 5 }, early[] = { 1, 0, 2, 3, 4, 5 },
                     reversed[] = { 5, 4, 3, 2, 1, 0 };
    struct {
        const int *order;
        const char *tag;
        int64_t key;
    } cases[] = {
        { sorted, "mcdc.silver.key_min", 1 },   /* the first row is below */
        { sorted, "mcdc.silver.key_max", 4 },   /* the last row is above */
        { early, "mcdc.silver.key_min", 1 },    /* a row below the one before and the range */
        { reversed, "mcdc.silver.key_min", 1 }, /* unsorted: held, then below the range */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (c > 0) {
            teardown(state);
            assert_int_equal(0, setup(state));
        }
        fixture *f = *state;
        mcdc_silver_apply_result r;
        brow b[12];
        for (int i = 0; i < 12; i++) {
            brow x = { 2, i, "a", i, 100, i + 1, i + 1, NULL, 0 };
            b[i] = x;
            set_row(f, i, "a", i);
        }
        append(f, b, 12);
        assert_int_equal(0, apply(f, 6, &r));
        replace_first_file(f, cases[c].order, cases[c].tag, cases[c].key);
        int64_t before = -1, after = -1;
        mcdc_delta_snapshot *snap = NULL;
        assert_int_equal(0, mcdc_delta_snapshot_open(&snap, f->silver, -1));
        before = snap->version;
        mcdc_delta_snapshot_free(snap);
        brow ch[] = { { 4, 2, "upd", 22, 200, 1, 1, NULL, 0 } };
        append(f, ch, 1);
        assert_int_equal(MCDC_ECORRUPT, apply(f, 6, &r));
        if (!strstr(mcdc_error_last()->message, "holds a key outside the key range of its tags"))
            fail_msg("case %zu: %s", c, mcdc_error_last()->message);
        assert_int_equal(0, mcdc_delta_snapshot_open(&snap, f->silver, -1));
        after = snap->version;
        mcdc_delta_snapshot_free(snap);
        assert_int_equal(before, after);
    }
}

/* A bronze file that cannot be decoded: the reading thread's error reaches the caller with
 * its message, and nothing is applied. */
static void test_silver_apply__a_damaged_bronze_file_fails_cleanly(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    brow b[] = { { 2, 1, "a", 1, 100, 1, 1, NULL, 0 }, { 2, 2, "b", 2, 100, 2, 1, NULL, 0 } };
    append(f, b, 2);
    assert_int_equal(0, apply(f, 100, &r));
    brow c[300];
    for (int i = 0; i < 300; i++) {
        brow x = { 4, i % 7, "changed", i, 200, i + 1, 1, NULL, 0 };
        c[i] = x;
    }
    append(f, c, 300);
    /* damage the newest bronze file: keep its footer, zero its pages */
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, f->bronze, -1));
    const mcdc_delta_file *newest = NULL;
    for (size_t i = 0; i < snap->n_files; i++)
        if (!newest || snap->files[i].modification_time >= newest->modification_time)
            newest = &snap->files[i];
    char *path = mcdc_delta_file_abspath(snap, newest->path);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    char zeros[64] = { 0 };
    for (long off = 4; off + 64 < newest->size / 2; off += 64) {
        assert_int_equal(0, fseek(fp, off, SEEK_SET));
        assert_int_equal(64, fwrite(zeros, 1, 64, fp));
    }
    fclose(fp);
    free(path);
    mcdc_delta_snapshot_free(snap);
    int rc = apply(f, 100, &r);
    assert_true(rc < 0);
    assert_true(mcdc_error_last()->message[0] != 0);
    mcdc_control_row row;
    assert_int_equal(0, mcdc_control_get(&row, f->control, "silver.t"));
    assert_string_equal(lsn_text(100), row.applied_lsn); /* the position did not move */
    mcdc_control_row_clear(&row);
}

/* A refused row deep in bronze (after more rows than one batch of the reader thread)
 * fails the apply with its own message, and nothing is recorded. */
static void test_silver_apply__a_refused_row_after_many_fails_the_apply(void **state)
{
    fixture *f = *state;
    mcdc_silver_apply_result r;
    static brow b[9001];
    for (int i = 0; i < 9000; i++) {
        brow x = { i < 64 ? 2 : 4, i % 64, "n", i, 100 + i / 1000, i + 1, 1, NULL, 0 };
        b[i] = x;
    }
    brow bad = { 4, 3, "x", 1, 110, 1, 1, "dbo_other", 0 };
    b[9000] = bad;
    append(f, b, 9001);
    assert_int_equal(MCDC_EINVAL, apply(f, 100, &r));
    assert_non_null(strstr(mcdc_error_last()->message, "'dbo_other'"));
    assert_int_equal(9000, r.bronze_rows_read); /* every row before it, in order */
    mcdc_control_row row;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_control_get(&row, f->control, "silver.t"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_silver_apply__##name, setup, teardown)
        T(bootstrap_then_changes),
        T(inserts_beyond_the_ends_and_splits),
        T(random_histories_match_the_model),
        T(newer_snapshot_rebuilds),
        T(rows_of_another_table_are_refused),
        T(one_apply_at_a_time),
        T(missing_bronze_changes_nothing),
        T(threads_do_not_change_the_files),
        T(unsorted_file_with_a_range_is_rewritten_sorted),
        T(a_row_outside_the_tags_range_fails),
        T(a_damaged_bronze_file_fails_cleanly),
        T(a_refused_row_after_many_fails_the_apply),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
