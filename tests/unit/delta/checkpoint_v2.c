/* Unit tests for delta/checkpoint_v2.c and the delta.checkpointPolicy=v2 opt-in: a table
 * opted in gets the v2Checkpoint feature in the same commit; after 25 commits (appends
 * with txns, a compaction leaving tombstones) its checkpoints are UUID-named V2 files with
 * their add and remove rows in _delta_log/_sidecars/, _last_checkpoint names the newest
 * with its sidecars, and a cold snapshot read from it equals the snapshot replayed from
 * the JSON commits alone; vacuum leaves the sidecars; log cleanup deletes the sidecars no
 * kept checkpoint names once older than the retention and an hour, and only those; a
 * table not opted in keeps classic checkpoints. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    *state = testenv_tmpdir("cpv2");
    mcdc_delta_snapshot_cache_limit(0); /* every open is cold: read from the log */
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

static void create_conf(const char *t, const mcdc_delta_map *conf)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(s, "part", MCDC_TYPE_STRING, 0, 0, true);
    const char *parts[] = { "part" };
    assert_int_equal(0, mcdc_delta_create(t, s, parts, 1, conf, NULL));
    mcdc_schema_free(s);
}

static void create(const char *t)
{
    create_conf(t, NULL);
}

/* One append of @p n rows from @p first, as app "app" batch @p batch. */
static void append(const char *t, int64_t first, int n, int64_t batch)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_delta_writer *w;
    assert_int_equal(0, mcdc_delta_writer_open(&w, snap, NULL));
    for (int i = 0; i < n; i++) {
        mcdc_value row[2];
        memset(row, 0, sizeof row);
        row[0].v.i = first + i;
        row[1].v.s.ptr = (first + i) % 2 ? "b" : "a";
        row[1].v.s.len = 1;
        assert_int_equal(0, mcdc_delta_writer_write(w, row));
    }
    mcdc_delta_file *files;
    size_t n_files;
    assert_int_equal(0, mcdc_delta_writer_finish(w, &files, &n_files));
    mcdc_delta_writer_free(w);
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.app_id = "app";
    o.txn_version = batch;
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_append(t, files, n_files, &o, &r));
    mcdc_delta_files_free(files, n_files);
    mcdc_delta_snapshot_free(snap);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The state of a snapshot as text: protocol, configuration, txns, and the live files and
 * tombstones sorted by path, with what a checkpoint keeps of each. */
static char *state_text(const mcdc_delta_snapshot *s)
{
    size_t n = s->n_files + s->n_tombstones;
    char **lines = calloc(n + 1, sizeof *lines);
    assert_non_null(lines);
    for (size_t i = 0; i < n; i++) {
        bool add = i < s->n_files;
        const mcdc_delta_file *f = add ? &s->files[i] : &s->tombstones[i - s->n_files];
        lines[i] = malloc(4096);
        snprintf(lines[i], 4096, "%s %s size=%lld del=%lld part=%s stats=%s\n",
                 add ? "add" : "remove", f->path, (long long)f->size,
                 (long long)f->deletion_timestamp,
                 mcdc_delta_map_get(&f->partition_values, "part", NULL),
                 add && f->stats ? f->stats : "-");
    }
    qsort(lines, n, sizeof *lines, cmp_str);
    mcdc_buf b = MCDC_BUF_INIT(1 << 24);
    mcdc_buf_printf(&b, "version %lld protocol %d/%d", (long long)s->version,
                    s->protocol.min_reader_version, s->protocol.min_writer_version);
    for (size_t i = 0; i < s->protocol.n_reader_features; i++)
        mcdc_buf_printf(&b, " r:%s", s->protocol.reader_features[i]);
    for (size_t i = 0; i < s->protocol.n_writer_features; i++)
        mcdc_buf_printf(&b, " w:%s", s->protocol.writer_features[i]);
    mcdc_buf_printf(&b, "\nid %s schema %s\n", s->metadata.id, s->metadata.schema_string);
    for (size_t i = 0; i < s->metadata.configuration.n; i++)
        mcdc_buf_printf(&b, "conf %s=%s\n", s->metadata.configuration.kv[i].key,
                        s->metadata.configuration.kv[i].value);
    for (size_t i = 0; i < s->n_txns; i++)
        mcdc_buf_printf(&b, "txn %s %lld\n", s->txns[i].app_id, (long long)s->txns[i].version);
    for (size_t i = 0; i < n; i++) {
        mcdc_buf_puts(&b, lines[i]);
        free(lines[i]);
    }
    free(lines);
    mcdc_buf_putc(&b, '\0');
    char *out = strdup(b.ptr);
    mcdc_buf_dispose(&b);
    return out;
}

/* How many names in @p dir end with @p suffix and contain @p part. */
static int count_files(const char *dir, const char *part, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), m = strlen(suffix);
        if (e->d_name[0] != '.' && strstr(e->d_name, part) && l >= m &&
            strcmp(e->d_name + l - m, suffix) == 0)
            n++;
    }
    closedir(d);
    return n;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_checkpoint_v2__opt_in_sidecars_and_cold_snapshot(void **state)
{
    const char *t = *state;
    create(t); /* version 0 */
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_enable_v2_checkpoints(t, &r)); /* version 1 */
    assert_int_equal(1, r.version);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(3, snap->protocol.min_reader_version);
    assert_int_equal(7, snap->protocol.min_writer_version);
    bool rf = false, wf = false;
    for (size_t i = 0; i < snap->protocol.n_reader_features; i++)
        rf |= !strcmp(snap->protocol.reader_features[i], "v2Checkpoint");
    for (size_t i = 0; i < snap->protocol.n_writer_features; i++)
        wf |= !strcmp(snap->protocol.writer_features[i], "v2Checkpoint");
    assert_true(rf && wf);
    assert_string_equal("v2", mcdc_delta_snapshot_config(snap, "delta.checkpointPolicy", ""));
    mcdc_delta_snapshot_free(snap);
    /* again: nothing written */
    assert_int_equal(0, mcdc_delta_enable_v2_checkpoints(t, &r));
    assert_int_equal(0, mcdc_delta_latest_version(&r.version, t));
    assert_int_equal(1, r.version);

    for (int v = 2; v <= 24; v++) { /* versions 2..24 */
        append(t, v * 10, 3, v);
        /* the background checkpoint at exactly the due version, not a later one */
        assert_int_equal(0, mcdc_delta_checkpoints_wait());
    }
    mcdc_delta_optimize_result o;
    assert_int_equal(0, mcdc_delta_optimize(t, 1 << 20, &o)); /* version 25: tombstones */
    assert_int_equal(25, o.version);
    assert_int_equal(0, mcdc_delta_checkpoints_wait());

    char log[1024], sc[1100], p[1200];
    snprintf(log, sizeof log, "%s/_delta_log", t);
    snprintf(sc, sizeof sc, "%s/_sidecars", log);
    /* V2 checkpoints at 10 and 20, no classic one; one sidecar each */
    assert_int_equal(0, count_files(log, ".checkpoint.parquet", ""));
    assert_int_equal(1, count_files(log, "00000000000000000010.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(log, "00000000000000000020.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(sc, "00000000000000000010.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(sc, "00000000000000000020.checkpoint.", ".parquet"));
    snprintf(p, sizeof p, "%s/_last_checkpoint", log);
    const char *lc = read_text(p);
    assert_non_null(strstr(lc, "{\"version\":20,"));
    assert_non_null(strstr(lc, "\"v2Checkpoint\":{\"path\":\"00000000000000000020.checkpoint."));
    assert_non_null(strstr(lc, "\"sidecarFiles\":[{\"path\":\"00000000000000000020.checkpoint."
                               "0000000001.0000000001."));
    /* 38 live files (two partitions per append) at 20: 38 sidecar rows; protocol,
     * metaData, txn, checkpointMetadata and the sidecar row in the top-level file */
    assert_non_null(strstr(lc, "\"size\":43,"));
    assert_non_null(strstr(lc, "\"numOfAddFiles\":38,"));

    /* a checkpoint of 25 (by command) holds the compaction's tombstones in its sidecar */
    bool written = false;
    assert_int_equal(0, mcdc_delta_checkpoint(t, 25, &written));
    assert_true(written);
    assert_int_equal(1, count_files(sc, "00000000000000000025.checkpoint.", ".parquet"));
    /* asked again (the background writer got there first, say): not a second UUID-named
     * checkpoint of the same version */
    assert_int_equal(0, mcdc_delta_checkpoint(t, 25, &written));
    assert_false(written);
    assert_int_equal(1, count_files(log, "00000000000000000025.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(sc, "00000000000000000025.checkpoint.", ".parquet"));

    /* the cold snapshot from the checkpoint equals the one from the JSON commits alone */
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(25, snap->checkpoint_version);
    assert_true(snap->n_tombstones > 0);
    char *from_cp = state_text(snap);
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, 22));
    assert_int_equal(20, snap->checkpoint_version);
    char *from_cp22 = state_text(snap);
    mcdc_delta_snapshot_free(snap);

    char json_only[1100], cmd[4096];
    snprintf(json_only, sizeof json_only, "%s/json-only", t);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/_delta_log' && cp '%s'/*.json '%s/_delta_log/'",
             json_only, log, json_only);
    assert_int_equal(0, system(cmd));
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, json_only, -1));
    assert_int_equal(-1, snap->checkpoint_version);
    char *from_json = state_text(snap);
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, json_only, 22));
    char *from_json22 = state_text(snap);
    mcdc_delta_snapshot_free(snap);
    assert_string_equal(from_json, from_cp);
    assert_string_equal(from_json22, from_cp22);

    /* vacuum (no retention) never looks into _delta_log: the sidecars stay, the table reads */
    mcdc_delta_vacuum_result vr;
    memset(&vr, 0, sizeof vr);
    assert_int_equal(0, mcdc_delta_vacuum(t, 0, true, false, &vr));
    assert_int_equal(3, count_files(sc, ".checkpoint.", ".parquet"));
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(25, snap->checkpoint_version);
    mcdc_delta_snapshot_free(snap);
    free(from_cp);
    free(from_cp22);
    free(from_json);
    free(from_json22);
}

static void test_checkpoint_v2__classic_tables_keep_classic_checkpoints(void **state)
{
    const char *t = *state;
    create(t);
    for (int v = 1; v <= 10; v++)
        append(t, v * 10, 2, v);
    assert_int_equal(0, mcdc_delta_checkpoints_wait());
    char log[1024], sc[1100];
    snprintf(log, sizeof log, "%s/_delta_log", t);
    snprintf(sc, sizeof sc, "%s/_sidecars", log);
    assert_int_equal(1, count_files(log, "00000000000000000010.checkpoint.parquet", ""));
    assert_int_equal(0, count_files(sc, "", ".parquet"));
}

/* Set the modification time of every file in @p dir whose name contains @p part to
 * @p age_s seconds ago. */
static void age_files(const char *dir, const char *part, int age_s)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    struct timeval now;
    gettimeofday(&now, NULL);
    struct timeval tv[2] = { { now.tv_sec - age_s, 0 }, { now.tv_sec - age_s, 0 } };
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strstr(e->d_name, part))
            continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        assert_int_equal(0, utimes(p, tv));
    }
    closedir(d);
}

static void test_checkpoint_v2__cleanup_deletes_only_unreferenced_old_sidecars(void **state)
{
    const char *t = *state;
    mcdc_delta_map conf = { 0 };
    mcdc_delta_map_set(&conf, "delta.logRetentionDuration", "interval 0 seconds");
    mcdc_delta_map_set(&conf, "delta.checkpointInterval", "5");
    create_conf(t, &conf); /* version 0 */
    mcdc_delta_map_clear(&conf);
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_enable_v2_checkpoints(t, &r));
    for (int v = 2; v <= 10; v++) {
        append(t, v * 10, 3, v);
        assert_int_equal(0, mcdc_delta_checkpoints_wait());
    }
    char log[1024], sc[1100], cmd[8192];
    snprintf(log, sizeof log, "%s/_delta_log", t);
    snprintf(sc, sizeof sc, "%s/_sidecars", log);
    /* the checkpoint of 10 made the one of 5 and the commits before 10 expire; the sidecar
     * of 5, written moments ago, is left: a writer might be about to name it */
    assert_int_equal(0, count_files(log, "00000000000000000005.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(log, "00000000000000000010.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(sc, "00000000000000000005.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(sc, "00000000000000000010.checkpoint.", ".parquet"));
    /* an orphan (a writer killed before its top-level file) and a fresh unnamed one */
    snprintf(cmd, sizeof cmd, "cp '%s'/00000000000000000010.checkpoint.*.parquet '%s/orphan.parquet' "
             "&& cp '%s/orphan.parquet' '%s/fresh.parquet'", sc, sc, sc, sc);
    assert_int_equal(0, system(cmd));
    age_files(sc, ".parquet", 7200); /* two hours old, all of them */
    snprintf(cmd, sizeof cmd, "touch '%s/fresh.parquet'", sc);
    assert_int_equal(0, system(cmd));
    /* the next cleanup (a checkpoint of 10 asked again: not written twice, the log still
     * cleaned) deletes the unnamed old ones only */
    bool written = true;
    assert_int_equal(0, mcdc_delta_checkpoint(t, 10, &written));
    assert_false(written);
    assert_int_equal(0, count_files(sc, "00000000000000000005.checkpoint.", ".parquet"));
    assert_int_equal(0, count_files(sc, "orphan", ".parquet"));
    assert_int_equal(1, count_files(sc, "fresh", ".parquet"));
    assert_int_equal(1, count_files(log, "00000000000000000010.checkpoint.", ".parquet"));
    assert_int_equal(1, count_files(sc, "00000000000000000010.checkpoint.", ".parquet"));
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(10, snap->checkpoint_version);
    assert_int_equal(18, snap->n_files);
    mcdc_delta_snapshot_free(snap);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_checkpoint_v2__opt_in_sidecars_and_cold_snapshot),
        T(test_checkpoint_v2__cleanup_deletes_only_unreferenced_old_sidecars),
        T(test_checkpoint_v2__classic_tables_keep_classic_checkpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
