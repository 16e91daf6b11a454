/* Unit tests for pipeline/stream.c: the engine on an in-memory source (fake_source.h):
 * batches and limits, idle polls, replays (invariant 2), data loss, checkpoint safety
 * (invariant 8), bootstrap. Bronze and facts are checked through the Delta log. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/pipeline.h"
#include "unit/pipeline/fake_source.h"

static char root[256], ck[300], bronze[300], facts[300];
static fake_source src;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-stream-test-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(ck, sizeof ck, "%s/ck", root);
    snprintf(bronze, sizeof bronze, "%s/bronze", root);
    snprintf(facts, sizeof facts, "%s/facts", root);
    fake_init(&src);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static mcdc_stream_options options(void)
{
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.source = &src.base;
    o.capture_instance = "dbo_t";
    o.target = "bronze.t";
    o.target_path = bronze;
    o.facts = "ops.facts";
    o.facts_path = facts;
    o.app_id = "t-v1";
    o.checkpoint = ck;
    return o;
}

typedef struct seen {
    int n_batches, n_replayed, n_start, n_term;
    int64_t last_batch;
    char last_json[4096];
} seen;

static void listen(const mcdc_stream_progress *p, void *payload)
{
    seen *s = payload;
    if (p->kind == MCDC_PROGRESS_BATCH) {
        s->n_batches++;
        s->n_replayed += p->replayed;
        s->last_batch = p->batch_id;
        snprintf(s->last_json, sizeof s->last_json, "%s", p->json ? p->json : "");
    } else if (p->kind == MCDC_PROGRESS_START) {
        s->n_start++;
    } else if (p->kind == MCDC_PROGRESS_TERMINATED) {
        s->n_term++;
    }
}

static int run(const mcdc_stream_options *o, mcdc_stream_result *res, seen *sn)
{
    mcdc_stream *s = NULL;
    int rc = mcdc_stream_new(&s, o);
    if (rc < 0)
        return rc;
    if (sn)
        mcdc_stream_add_listener(s, listen, sn);
    rc = mcdc_stream_run(s, res);
    mcdc_stream_free(s);
    if (rc < 0) /* shown when a check fails */
        fprintf(stderr, "# stream: %d %s\n", rc, mcdc_error_last()->message);
    return rc;
}

/* Rows in the table (stats numRecords) and the count of its versions. */
static int64_t table_rows(const char *path, int64_t *n_files)
{
    mcdc_delta_snapshot *snap = NULL;
    if (mcdc_delta_snapshot_open(&snap, path, -1) < 0)
        return -1;
    int64_t n = 0;
    for (size_t i = 0; i < snap->n_files; i++) {
        const char *p = snap->files[i].stats ? strstr(snap->files[i].stats, "\"numRecords\":") : NULL;
        if (p)
            n += atoll(p + 13);
    }
    if (n_files)
        *n_files = (int64_t)snap->n_files;
    mcdc_delta_snapshot_free(snap);
    return n;
}

static int64_t txn(const char *path, const char *app)
{
    mcdc_delta_snapshot *snap = NULL;
    if (mcdc_delta_snapshot_open(&snap, path, -1) < 0)
        return -2;
    int64_t v = mcdc_delta_snapshot_txn(snap, app);
    mcdc_delta_snapshot_free(snap);
    return v;
}

/* userMetadata of bronze's commit of batch @p n, or "" */
static const char *batch_metadata(int64_t n)
{
    static char out[2048];
    out[0] = 0;
    mcdc_delta_history_entry *h = NULL;
    size_t k = 0;
    if (mcdc_delta_history(&h, &k, bronze) < 0)
        return out;
    char want[32];
    snprintf(want, sizeof want, "\"batch_id\":%lld,", (long long)n);
    for (size_t i = 0; i < k; i++)
        if (h[i].user_metadata && strstr(h[i].user_metadata, want))
            snprintf(out, sizeof out, "%s", h[i].user_metadata);
    mcdc_delta_history_free(h, k);
    return out;
}

static void history(void)
{
    /* commits: 10 (2 rows), 20 (idle), 30 (3 rows), 40 (1 delete), 50 (2 rows) */
    fake_commit(&src, 10, 1, 2, 2);
    fake_commit(&src, 20, 300, 0, 2);
    fake_commit(&src, 30, 301, 3, 2);
    fake_commit(&src, 40, 302, 1, 1);
    fake_commit(&src, 50, 3600, 2, 2);
}

static void test_pipeline_stream__available_now_batches_by_commit_limit(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    o.max_commits_per_batch = 2;
    mcdc_stream_result res;
    seen sn = { 0 };
    assert_int_equal(0, run(&o, &res, &sn));
    assert_int_equal(3, res.n_batches);
    assert_int_equal(8, res.n_rows);
    assert_int_equal(2, res.last_batch_id);
    assert_int_equal(3, sn.n_batches);
    assert_int_equal(1, sn.n_start);
    assert_int_equal(1, sn.n_term);
    assert_int_equal(8, table_rows(bronze, NULL));
    assert_int_equal(2, txn(bronze, "t-v1"));
    assert_int_equal(2, txn(facts, "t-v1#facts"));
    int64_t nf;
    assert_int_equal(3, table_rows(facts, &nf));
    assert_int_equal(3, nf);
    assert_non_null(strstr(batch_metadata(0), "{\"rows\":2,\"min_lsn\":\"0x0000000000000000000A\""));
    assert_non_null(strstr(batch_metadata(1), "\"rows\":4,"));
    assert_non_null(strstr(batch_metadata(1), "\"deletes\":1,\"inserts\":3,\"updates\":0,"
                                              "\"batch_id\":1,\"app_id\":\"t-v1\","
                                              "\"start_lsn\":\"0x00000000000000000014\","
                                              "\"end_lsn\":\"0x00000000000000000028\"}"));
    assert_non_null(strstr(sn.last_json, "\"batchId\":2,\"numInputRows\":2"));
    assert_non_null(strstr(sn.last_json, "\"endOffset\":{\"lsn\":\"0x00000000000000000032\""));
    assert_non_null(strstr(sn.last_json, "\"runId\":\""));
    assert_true(res.has_end);

    /* nothing new: no batch, no read, one max_lsn query */
    int calls = src.n_max_lsn_calls, reads = src.n_read_calls;
    o.trigger = MCDC_TRIGGER_ONCE;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(0, res.n_batches);
    assert_int_equal(calls + 1, src.n_max_lsn_calls);
    assert_int_equal(reads, src.n_read_calls);
    assert_int_equal(2, res.last_batch_id);
}

static void test_pipeline_stream__batch_without_rows_has_facts_but_no_bronze_commit(void **state)
{
    (void)state;
    fake_commit(&src, 10, 1, 2, 2);
    mcdc_stream_options o = options();
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    int64_t before;
    assert_int_equal(0, mcdc_delta_latest_version(&before, bronze));
    fake_commit(&src, 20, 300, 0, 2); /* an idle entry */
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(1, res.n_batches);
    assert_int_equal(0, res.n_rows);
    int64_t after;
    assert_int_equal(0, mcdc_delta_latest_version(&after, bronze));
    assert_int_equal(before, after);
    assert_int_equal(1, txn(facts, "t-v1#facts"));
    assert_int_equal(2, table_rows(facts, NULL));
}

static void test_pipeline_stream__pending_range_is_replayed_exactly(void **state)
{
    (void)state;
    history();
    /* a crash after offsets/0 = (9, 20]: the rerun must read exactly that range */
    mcdc_checkpoint *c = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&c, ck, "t-v1", "dbo_t", "bronze.t"));
    mcdc_batch_range r = { 0 };
    r.batch_id = 0;
    r.start.lsn = fake_lsn(9);
    r.end.lsn = fake_lsn(20);
    assert_int_equal(0, mcdc_checkpoint_record_range(c, &r));
    mcdc_checkpoint_close(c);
    mcdc_stream_options o = options();
    o.trigger = MCDC_TRIGGER_ONCE;
    mcdc_stream_result res;
    seen sn = { 0 };
    assert_int_equal(0, run(&o, &res, &sn));
    assert_int_equal(1, sn.n_replayed);
    assert_int_equal(2, res.n_rows);
    assert_int_equal(2, table_rows(bronze, NULL));
    /* the rest follows */
    o.trigger = MCDC_TRIGGER_AVAILABLE_NOW;
    assert_int_equal(0, run(&o, &res, &sn));
    assert_int_equal(8, table_rows(bronze, NULL));
}

static void test_pipeline_stream__replay_of_a_batch_bronze_holds_reads_nothing(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    /* as if the process died before commits/0 and before the facts row */
    char p[400];
    snprintf(p, sizeof p, "%s/commits/0", ck);
    assert_int_equal(0, unlink(p));
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", facts);
    assert_int_equal(0, system(cmd));
    int reads = src.n_read_calls;
    /* the source purged everything meanwhile: a batch bronze holds is not a data loss */
    src.min_lsn = 60;
    seen sn = { 0 };
    assert_int_equal(0, run(&o, &res, &sn));
    assert_int_equal(reads, src.n_read_calls);
    assert_int_equal(1, sn.n_replayed);
    assert_int_equal(8, res.n_rows);
    assert_int_equal(8, table_rows(bronze, NULL));
    assert_int_equal(0, txn(facts, "t-v1#facts"));
}

/* A file's bytes, or "" (static buffer). */
static const char *slurp(const char *path)
{
    static char buf[8192];
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    return buf;
}

static int64_t latest(const char *path)
{
    int64_t v = -1;
    if (mcdc_delta_latest_version(&v, path) < 0)
        v = -1;
    return v;
}

static void test_pipeline_stream__replay_of_another_streams_range_is_refused(void **state)
{
    (void)state;
    history();
    /* a second checkpoint of the same app_id planned batch 0 as (9, 20] and died */
    char ck2[320];
    snprintf(ck2, sizeof ck2, "%s/ck2", root);
    mcdc_checkpoint *c = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&c, ck2, "t-v1", "dbo_t", "bronze.t"));
    mcdc_batch_range r = { 0 };
    r.start.lsn = fake_lsn(9);
    r.end.lsn = fake_lsn(20);
    assert_int_equal(0, mcdc_checkpoint_record_range(c, &r));
    mcdc_checkpoint_close(c);
    /* meanwhile the first wrote its batch 0 = (9, 50] */
    mcdc_stream_options o = options();
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_non_null(strstr(batch_metadata(0), "\"start_lsn\":\"0x00000000000000000009\","
                                              "\"end_lsn\":\"0x00000000000000000032\"}"));
    int64_t vb = latest(bronze), vf = latest(facts);
    /* before: the replay took bronze's txn 0 as its own and skipped (9, 20] */
    o.checkpoint = ck2;
    assert_int_equal(MCDC_ECONFLICT, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "batch 0 of app_id 't-v1' in bronze "
                           "(version 1) is the range (0x00000000000000000009, "
                           "0x00000000000000000032] but checkpoint"));
    assert_non_null(strstr(mcdc_error_last()->message, "recorded (0x00000000000000000009, "
                           "0x00000000000000000014]: another stream with the same app_id"));
    assert_int_equal(vb, latest(bronze));
    assert_int_equal(vf, latest(facts));
    char p[400];
    snprintf(p, sizeof p, "%s/commits/0", ck2);
    assert_int_equal(-1, access(p, F_OK));
}

/* The winner of the race: stream on ck runs to the end while the loser reads. */
static void run_winner(void *arg)
{
    (void)arg;
    mcdc_stream_options o = options();
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
}

static void test_pipeline_stream__batch_committed_meanwhile_by_another_range_is_refused(void **state)
{
    (void)state;
    history();
    char ck2[320];
    snprintf(ck2, sizeof ck2, "%s/ck2", root);
    mcdc_stream_options o = options();
    o.checkpoint = ck2;
    o.max_commits_per_batch = 2; /* batch 0 = (9, 20]; the winner's is (9, 50] */
    src.read_hook = run_winner;
    mcdc_stream_result res;
    /* before: Delta answered "already committed" and the loser went on as if it were */
    assert_int_equal(MCDC_ECONFLICT, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "another stream with the same app_id"));
    assert_int_equal(8, table_rows(bronze, NULL)); /* the winner's rows, once */
    assert_int_equal(1, table_rows(facts, NULL));
    char p[400];
    snprintf(p, sizeof p, "%s/commits/0", ck2);
    assert_int_equal(-1, access(p, F_OK));
    /* its data file was removed: bronze's directory holds the winner's file only */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | grep -c parquet) = 1", bronze);
    assert_int_equal(0, system(cmd));
}

static void test_pipeline_stream__same_range_committed_meanwhile_is_a_replay(void **state)
{
    (void)state;
    history();
    char ck2[320];
    snprintf(ck2, sizeof ck2, "%s/ck2", root);
    mcdc_stream_options o = options();
    o.checkpoint = ck2;
    src.read_hook = run_winner; /* the same range (9, 50]: the same rows */
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(8, table_rows(bronze, NULL));
}

static void test_pipeline_stream__bronze_behind_its_checkpoint_is_refused(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    o.max_commits_per_batch = 2;
    o.trigger = MCDC_TRIGGER_ONCE;
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL)); /* batch 0 */
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s/backup'", bronze, root);
    assert_int_equal(0, system(cmd));
    o.trigger = MCDC_TRIGGER_AVAILABLE_NOW;
    assert_int_equal(0, run(&o, &res, NULL)); /* batches 1 and 2 */
    assert_int_equal(2, txn(bronze, "t-v1"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s/backup' '%s'", bronze, root, bronze);
    assert_int_equal(0, system(cmd)); /* bronze restored from the older backup */
    fake_commit(&src, 60, 4000, 2, 2);
    int64_t vb = latest(bronze), vf = latest(facts);
    char p[400];
    snprintf(p, sizeof p, "%s/offsets/3", ck);
    /* before: batch 3 was written with txn 3 and batches 1 and 2 were lost for good */
    assert_int_equal(MCDC_ECORRUPT, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "bronze.t: holds batches up to 0 "
                           "of app_id 't-v1' but checkpoint"));
    assert_non_null(strstr(mcdc_error_last()->message, "recorded batch 2 in its version"));
    assert_non_null(strstr(mcdc_error_last()->hint, "restore bronze to a version holding batch 2"));
    assert_int_equal(vb, latest(bronze));
    assert_int_equal(vf, latest(facts));
    assert_int_equal(-1, access(p, F_OK));
    /* batches without rows have no bronze commit: the newest that has one counts */
    snprintf(p, sizeof p, "%s/commits/2", ck);
    assert_non_null(strstr(slurp(p), "\"bronze_version\":"));
    /* a bronze that is gone is behind too */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", bronze);
    assert_int_equal(0, system(cmd));
    assert_int_equal(MCDC_ECORRUPT, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "bronze.t: holds no batch of app_id 't-v1' but"));
}

static void test_pipeline_stream__source_gone_backwards_is_refused(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL)); /* read up to 50 */
    int64_t vb = latest(bronze), vf = latest(facts);
    /* a failover to a replica where the commit at 50 has another time, and more follow */
    src.commit_ts[4] += 7000000;
    fake_commit(&src, 60, 4000, 2, 2);
    /* before: batch 1 = (50, 60] was read as if nothing had happened */
    assert_int_equal(MCDC_ESOURCE, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "dbo_t: the source went backwards: LSN "
                           "0x00000000000000000032 is committed "));
    assert_non_null(strstr(mcdc_error_last()->message, "now, but the stream read it as committed"));
    assert_non_null(strstr(mcdc_error_last()->hint, "nothing was written"));
    assert_int_equal(vb, latest(bronze));
    assert_int_equal(vf, latest(facts));
    char p[400];
    snprintf(p, sizeof p, "%s/offsets/1", ck);
    assert_int_equal(-1, access(p, F_OK));
    /* a restore to 30: max_lsn below the position; an idle poll asks nothing more */
    src.commit_ts[4] -= 7000000;
    src.n_commits = 3;
    int calls = src.n_max_lsn_calls;
    assert_int_equal(MCDC_ESOURCE, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "max_lsn is 0x0000000000000000001E, below "
                           "0x00000000000000000032"));
    assert_int_equal(calls + 1, src.n_max_lsn_calls);
    assert_int_equal(-1, access(p, F_OK));
    /* the same source as read: no refusal, the next batch reads 60 */
    src.n_commits = 6;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(2, res.n_rows);
}

static int questions_at_read;
static void note_questions(void *arg)
{
    questions_at_read = ((fake_source *)arg)->n_questions;
}

static void test_pipeline_stream__a_batch_asks_few_questions(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    o.trigger = MCDC_TRIGGER_ONCE;
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    fake_commit(&src, 60, 4000, 2, 2);
    int before = src.n_questions;
    src.read_hook = note_questions;
    src.read_hook_arg = &src;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(1, res.n_batches);
    /* planning, up to the read (architecture §6: at most five): max_lsn, its commit time,
     * min_lsn, the commit time of the position (is the source where it was?) */
    assert_true(questions_at_read - 1 - before <= 5);
    assert_int_equal(4, questions_at_read - 1 - before);
    /* the batch as a whole: + the read, min_lsn after it, its commit time (the
     * retention watermark), max_lsn after it (its commit time is known when it did not
     * move) and the source's clock */
    assert_int_equal(9, src.n_questions - before);
    /* an idle poll asks only max_lsn */
    before = src.n_questions;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(0, res.n_batches);
    assert_int_equal(before + 1, src.n_questions);
}

static void test_pipeline_stream__purged_changes_stop_the_stream(void **state)
{
    (void)state;
    history();
    src.min_lsn = 30; /* 10 and 20 purged before the first read */
    mcdc_stream_options o = options();
    o.starting = MCDC_START_LSN;
    o.starting_given = true;
    o.starting_lsn = fake_lsn(9);
    mcdc_stream_result res;
    assert_int_equal(MCDC_EDATALOSS, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "dbo_t: change data from "
                           "0x0000000000000000000A to 0x0000000000000000001D is gone"));
    assert_non_null(strstr(mcdc_error_last()->hint, "failOnDataLoss=false"));
    char p[400];
    snprintf(p, sizeof p, "%s/offsets/0", ck);
    assert_int_equal(-1, access(p, F_OK)); /* nothing recorded */
    /* the earliest start is not a loss: after = decrement(min_lsn) */
    o = options();
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(6, res.n_rows);
}

static void test_pipeline_stream__purge_during_a_read_is_caught(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    o.starting = MCDC_START_LSN;
    o.starting_given = true;
    o.starting_lsn = fake_lsn(9);
    src.purge_after_rows = 1;
    src.purge_to = 30;
    mcdc_stream_result res;
    assert_int_equal(MCDC_EDATALOSS, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "while the batch was read"));
    assert_int_equal(-1, table_rows(bronze, NULL)); /* nothing committed */
}

/* min_lsn answered 0x00 after a read, having been 9 before it (SQL Server's answer to a
 * login whose SELECT on the source table was revoked meanwhile): the data-loss guard has
 * nothing to compare, so the batch is refused (exit 3) and nothing is committed. */
static void test_pipeline_stream__min_lsn_lost_during_a_read_is_refused(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    o.starting = MCDC_START_LSN;
    o.starting_given = true;
    o.starting_lsn = fake_lsn(9);
    src.min_lsn = 9;
    src.purge_after_rows = 1;
    src.purge_to = 0;
    mcdc_stream_result res;
    assert_int_equal(MCDC_ESOURCE, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "answered 0x00000000000000000000 after"));
    assert_non_null(strstr(mcdc_error_last()->hint, "GRANT SELECT ON"));
    assert_int_equal(-1, table_rows(bronze, NULL)); /* nothing committed */
}

static void test_pipeline_stream__fail_on_data_loss_false_records_the_gap(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    o.starting = MCDC_START_LSN;
    o.starting_given = true;
    o.starting_lsn = fake_lsn(9);
    o.fail_on_data_loss = false;
    src.min_lsn = 30;
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(6, res.n_rows);
    assert_int_equal(2, table_rows(facts, NULL)); /* the batch row and data_skipped */
    char p[400];
    snprintf(p, sizeof p, "%s/offsets/0", ck);
    FILE *f = fopen(p, "r");
    char buf[1024] = { 0 };
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(buf, "\"skipped\":{\"from\":\"0x0000000000000000000A\","
                                "\"to\":\"0x0000000000000000001E\"}"));
    o.facts = o.facts_path = NULL;
    mcdc_stream *s = NULL;
    assert_int_equal(MCDC_EINVAL, mcdc_stream_new(&s, &o));
}

static void test_pipeline_stream__deleted_checkpoint_is_refused(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    char p[400];
    snprintf(p, sizeof p, "rm -rf '%s'", ck);
    assert_int_equal(0, system(p));
    assert_int_equal(MCDC_EINVAL, run(&o, &res, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "already holds batches of app_id 't-v1'"));
    /* without a facts table too */
    assert_int_equal(0, system(p));
    o.facts = o.facts_path = NULL;
    assert_int_equal(MCDC_EINVAL, run(&o, &res, NULL));
}

static void test_pipeline_stream__bootstrap_snapshots_once(void **state)
{
    (void)state;
    history();
    src.snapshot_rows = 5;
    mcdc_stream_options o = options();
    o.bootstrap = true;
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(5, res.n_snapshot_rows);
    assert_int_equal(0, res.n_rows); /* the stream starts after S = max_lsn */
    assert_int_equal(5, table_rows(bronze, NULL));
    assert_int_equal(0, txn(bronze, "t-v1#snapshot"));
    assert_int_equal(0, txn(facts, "t-v1#events"));
    fake_commit(&src, 60, 4000, 2, 2);
    assert_int_equal(0, run(&o, &res, NULL));
    assert_int_equal(0, res.n_snapshot_rows);
    assert_int_equal(2, res.n_rows);
    assert_int_equal(7, table_rows(bronze, NULL));
    o.starting_given = true;
    mcdc_stream *s = NULL;
    assert_int_equal(MCDC_EINVAL, mcdc_stream_new(&s, &o));
}

static void test_pipeline_stream__checkpoint_of_another_stream_is_refused(void **state)
{
    (void)state;
    history();
    mcdc_stream_options o = options();
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, &res, NULL));
    o.target = "bronze.other";
    assert_int_equal(MCDC_EINVAL, run(&o, &res, NULL));
    o = options();
    o.capture_instance = "dbo_x";
    assert_int_equal(MCDC_EINVAL, run(&o, &res, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipeline_stream__available_now_batches_by_commit_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__batch_without_rows_has_facts_but_no_bronze_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__pending_range_is_replayed_exactly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__replay_of_a_batch_bronze_holds_reads_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__replay_of_another_streams_range_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__batch_committed_meanwhile_by_another_range_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__same_range_committed_meanwhile_is_a_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__bronze_behind_its_checkpoint_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__source_gone_backwards_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__a_batch_asks_few_questions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__purged_changes_stop_the_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__purge_during_a_read_is_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__min_lsn_lost_during_a_read_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__fail_on_data_loss_false_records_the_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__deleted_checkpoint_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__bootstrap_snapshots_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream__checkpoint_of_another_stream_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
