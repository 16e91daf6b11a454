/* Unit tests for pipeline/checkpoint.c: the checkpoint directory (C1-C6). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/fs.h"
#include "mcdc/pipeline.h"
#include "mcdc/storage.h"
#include "mcdc/time.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mcdc-ck-test-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    strcat(dir, "/ck");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static mcdc_batch_range range(int64_t n, const char *start, const char *end)
{
    mcdc_batch_range r;
    memset(&r, 0, sizeof r);
    r.batch_id = n;
    mcdc_lsn_parse(&r.start.lsn, start);
    mcdc_lsn_parse(&r.end.lsn, end);
    r.end.has_commit_ts = true;
    mcdc_time_parse(&r.end.commit_ts_us, "2026-10-01T14:00:01.250");
    return r;
}

static mcdc_batch_commit commit(int64_t n)
{
    mcdc_batch_commit c = { n, 3 + n, -1, 0 };
    return c;
}

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_pipeline_checkpoint__new_directory_gets_metadata_and_no_batches(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "orders-v1", "dbo_orders", "bronze.orders"));
    const mcdc_checkpoint_meta *m = mcdc_checkpoint_meta_get(ck);
    assert_string_equal("orders-v1", m->app_id);
    assert_string_equal("dbo_orders", m->capture_instance);
    assert_string_equal("bronze.orders", m->target);
    assert_int_equal(36, strlen(m->id));
    mcdc_batch_range r;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_checkpoint_last_range(ck, &r));
    mcdc_batch_commit c;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_checkpoint_last_commit(ck, &c));
    mcdc_checkpoint_close(ck);
    char p[512];
    snprintf(p, sizeof p, "%s/metadata", dir);
    char *text = slurp(p);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"capture_instance\":\"dbo_orders\""));
    assert_non_null(strstr(text, "\"created_at\":\""));
}

static void test_pipeline_checkpoint__ranges_and_commits_survive_reopen(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "dbo_orders", "t"));
    mcdc_batch_range r0 = range(0, "0x00", "0x0000002D000001A00003");
    r0.start.has_commit_ts = false;
    assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r0));
    mcdc_batch_commit c0 = commit(0);
    assert_int_equal(0, mcdc_checkpoint_record_commit(ck, &c0));
    mcdc_batch_range r1 = range(1, "0x0000002D000001A00003", "0x0000002D000001B00001");
    assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r1));
    mcdc_checkpoint_close(ck);

    char p[512];
    snprintf(p, sizeof p, "%s/offsets/0", dir);
    char *text = slurp(p);
    assert_non_null(strstr(text, "\"start\":{\"lsn\":\"0x00000000000000000000\",\"commit_ts\":\"\"}"));
    assert_non_null(strstr(text, "\"end\":{\"lsn\":\"0x0000002D000001A00003\","
                                 "\"commit_ts\":\"2026-10-01T14:00:01.250\"}"));
    snprintf(p, sizeof p, "%s/commits/0", dir);
    text = slurp(p);
    assert_non_null(strstr(text, "\"bronze_version\":3,\"facts_version\":null"));

    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "DBO_ORDERS", "t"));
    mcdc_batch_range got;
    assert_int_equal(0, mcdc_checkpoint_last_range(ck, &got));
    assert_int_equal(1, got.batch_id);
    assert_int_equal(0, mcdc_lsn_cmp(&got.start.lsn, &r1.start.lsn));
    assert_int_equal(0, mcdc_lsn_cmp(&got.end.lsn, &r1.end.lsn));
    assert_true(got.end.has_commit_ts);
    assert_true(got.end.commit_ts_us == r1.end.commit_ts_us);
    mcdc_batch_commit gc;
    assert_int_equal(0, mcdc_checkpoint_last_commit(ck, &gc));
    assert_int_equal(0, gc.batch_id);
    assert_int_equal(3, gc.bronze_version);
    assert_int_equal(-1, gc.facts_version);
    mcdc_checkpoint_close(ck);
}

static void test_pipeline_checkpoint__batches_out_of_sequence_are_refused(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    mcdc_batch_range r = range(1, "0x01", "0x02");
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_range(ck, &r)); /* C3: starts at 0 */
    mcdc_batch_commit c = commit(0);
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_commit(ck, &c)); /* C2: no range */
    r.batch_id = 0;
    assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r));
    r.batch_id = 1;
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_range(ck, &r)); /* 0 not finished */
    assert_non_null(strstr(mcdc_error_last()->message, "out of sequence"));
    assert_int_equal(0, mcdc_checkpoint_record_commit(ck, &c));
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_commit(ck, &c)); /* twice */
    mcdc_checkpoint_close(ck);
}

static void test_pipeline_checkpoint__second_opener_fails_at_once(void **state)
{
    (void)state;
    mcdc_checkpoint *a = NULL, *b = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&a, dir, "a", "ci", "t"));
    assert_int_equal(MCDC_ELOCKED, mcdc_checkpoint_open(&b, dir, "a", "ci", "t"));
    assert_null(b);
    char want[64];
    snprintf(want, sizeof want, "already locked by pid %d", (int)getpid());
    assert_non_null(strstr(mcdc_error_last()->message, want));
    mcdc_checkpoint_close(a);
    assert_int_equal(0, mcdc_checkpoint_open(&b, dir, "a", "ci", "t"));
    mcdc_checkpoint_close(b);
}

/* A second writer that got past the one-writer rule (an object store with --lease off)
 * finds the batch file taken: a conflict naming it, and the winner's file unchanged (C4). */
static void test_pipeline_checkpoint__batch_taken_by_another_writer_is_a_conflict(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    char p[400];
    snprintf(p, sizeof p, "%s/offsets/0", dir);
    const char *theirs = "{\"batch_id\":0}";
    assert_int_equal(0, mcdc_storage_create(p, theirs, strlen(theirs)));
    mcdc_batch_range r0 = range(0, "0x00000000000000000000", "0x00000000000000000010");
    assert_int_equal(MCDC_ECONFLICT, mcdc_checkpoint_record_range(ck, &r0));
    assert_non_null(strstr(mcdc_error_last()->message, "batch 0 was planned by another stream meanwhile"));
    assert_string_equal(theirs, slurp(p));
    mcdc_checkpoint_close(ck);
}

/* A range recorded while the batch is read (ADR 0060): the checkpoint does not know the
 * range until _end, which records it as record_range would; a second writer's file created
 * between begin and end is the same conflict; the create's I/O error comes back on the
 * caller's thread with its message. */
static void test_pipeline_checkpoint__a_range_recorded_in_the_background(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    assert_int_equal(0, mcdc_checkpoint_record_range_end(ck, NULL));
    mcdc_batch_range r0 = range(0, "0x00000000000000000000", "0x00000000000000000010"), got;
    mcdc_checkpoint_pending *p = NULL;
    assert_int_equal(0, mcdc_checkpoint_record_range_begin(ck, &r0, &p));
    assert_non_null(p);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_checkpoint_last_range(ck, &got)); /* not yet */
    assert_int_equal(0, mcdc_checkpoint_record_range_end(ck, p));
    assert_int_equal(0, mcdc_checkpoint_last_range(ck, &got));
    assert_int_equal(0, got.batch_id);
    char path[400];
    snprintf(path, sizeof path, "%s/offsets/0", dir);
    assert_non_null(strstr(slurp(path), "\"batch_id\":0"));
    /* out of sequence: refused by begin, nothing started */
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_range_begin(ck, &r0, &p));
    assert_null(p);
    mcdc_batch_commit c0 = commit(0);
    assert_int_equal(0, mcdc_checkpoint_record_commit(ck, &c0));

    /* another writer takes batch 1 between begin and end: a conflict, theirs unchanged */
    mcdc_batch_range r1 = range(1, "0x00000000000000000010", "0x00000000000000000020");
    snprintf(path, sizeof path, "%s/offsets/1", dir);
    const char *theirs = "{\"batch_id\":1}";
    assert_int_equal(0, mcdc_storage_create(path, theirs, strlen(theirs)));
    assert_int_equal(0, mcdc_checkpoint_record_range_begin(ck, &r1, &p));
    assert_int_equal(MCDC_ECONFLICT, mcdc_checkpoint_record_range_end(ck, p));
    assert_non_null(strstr(mcdc_error_last()->message, "batch 1 was planned by another stream meanwhile"));
    assert_string_equal(theirs, slurp(path));
    assert_int_equal(0, mcdc_checkpoint_last_range(ck, &got));
    assert_int_equal(0, got.batch_id); /* still batch 0's */
    mcdc_checkpoint_close(ck);

    /* the create fails (offsets/ is a file): MCDC_EIO with its message on this thread */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(0, system(cmd));
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s/offsets' && touch '%s/offsets'", dir, dir);
    assert_int_equal(0, system(cmd));
    assert_int_equal(0, mcdc_checkpoint_record_range_begin(ck, &r0, &p));
    mcdc_error_clear();
    int rc = mcdc_checkpoint_record_range_end(ck, p);
    assert_true(rc < 0);
    assert_true(mcdc_error_last()->code == rc);
    assert_non_null(strstr(mcdc_error_last()->message, "offsets"));
    assert_int_equal(MCDC_ENOTFOUND, mcdc_checkpoint_last_range(ck, &got));
    mcdc_checkpoint_close(ck);
}

static void test_pipeline_checkpoint__reuse_for_another_stream_is_refused(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "dbo_orders", "bronze.orders"));
    mcdc_checkpoint_close(ck);
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_open(&ck, dir, "a", "dbo_orders", "bronze.other"));
    assert_non_null(strstr(mcdc_error_last()->message, "belongs to target 'bronze.orders'"));
    /* it has no batches: the hint says how to start over */
    assert_non_null(strstr(mcdc_error_last()->hint, "it holds no batch yet: to start over, remove"));
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_open(&ck, dir, "a", "dbo_orders_v2", "bronze.orders"));
    assert_non_null(strstr(mcdc_error_last()->message, "capture instance 'dbo_orders'"));
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_open(&ck, dir, "b", "dbo_orders", "bronze.orders"));
    assert_non_null(strstr(mcdc_error_last()->message, "app_id 'a'"));
    assert_null(ck);
}

static void test_pipeline_checkpoint__a_hole_is_corruption(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    char l1[32], l2[32];
    for (int i = 0; i < 3; i++) {
        snprintf(l1, sizeof l1, "0x%02X", i);
        snprintf(l2, sizeof l2, "0x%02X", i + 1);
        mcdc_batch_range r = range(i, l1, l2);
        assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r));
        mcdc_batch_commit c = commit(i);
        assert_int_equal(0, mcdc_checkpoint_record_commit(ck, &c));
    }
    mcdc_checkpoint_close(ck);
    char p[512];
    snprintf(p, sizeof p, "%s/offsets/1", dir);
    assert_int_equal(0, unlink(p));
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    assert_non_null(strstr(mcdc_error_last()->message, "batch 1 is missing"));
    /* commits ahead of offsets */
    snprintf(p, sizeof p, "%s/commits/3", dir);
    assert_int_equal(0, mcdc_fs_write_atomic(p, "{}", 2));
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
}

static void test_pipeline_checkpoint__lost_metadata_is_corruption_not_a_new_stream(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    mcdc_batch_range r = range(0, "0x00", "0x01");
    assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r));
    mcdc_checkpoint_close(ck);
    char p[512];
    snprintf(p, sizeof p, "%s/metadata", dir);
    assert_int_equal(0, unlink(p));
    /* offsets only (a batch planned, not committed): refused, and no metadata is made up */
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    assert_null(ck);
    assert_non_null(strstr(mcdc_error_last()->message, "metadata is missing, but offsets/ holds "
                                                       "batches 0 to 0"));
    assert_non_null(strstr(mcdc_error_last()->hint, "restore"));
    assert_int_equal(-1, access(p, F_OK));
    /* commits only (offsets pruned away by hand): refused too */
    char o[512], c[512];
    snprintf(o, sizeof o, "%s/offsets/0", dir);
    snprintf(c, sizeof c, "%s/commits/0", dir);
    assert_int_equal(0, rename(o, c));
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    assert_non_null(strstr(mcdc_error_last()->message, "commits/ holds batches 0 to 0"));
    assert_int_equal(-1, access(p, F_OK));
    /* an empty directory (nothing recorded yet) is still a new checkpoint */
    assert_int_equal(0, unlink(c));
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    mcdc_checkpoint_close(ck);
    assert_int_equal(0, access(p, F_OK));
}

static void test_pipeline_checkpoint__an_adoption_numbers_batches_from_its_first(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "app", "dbo_t", "bronze.t"));
    mcdc_checkpoint_adoption ad;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_checkpoint_adoption_get(ck, &ad));
    mcdc_offset after;
    memset(&after, 0, sizeof after);
    mcdc_lsn_parse(&after.lsn, "0x00000000000000000010");
    assert_int_equal(0, mcdc_checkpoint_record_adoption(ck, 5, &after, "old"));
    /* once only */
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_adoption(ck, 6, &after, "old"));
    /* its first batch is 5, not 0 (C6, C3) */
    mcdc_batch_range r0 = range(0, "0x00000000000000000010", "0x00000000000000000020");
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_range(ck, &r0));
    mcdc_batch_range r5 = range(5, "0x00000000000000000010", "0x00000000000000000020");
    assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r5));
    mcdc_checkpoint_close(ck);
    /* reopened with offsets/5 pending: not corrupt; the adoption is read back */
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "app", "dbo_t", "bronze.t"));
    assert_int_equal(0, mcdc_checkpoint_adoption_get(ck, &ad));
    assert_int_equal(5, ad.first_batch);
    assert_string_equal("old", ad.from_owner);
    assert_int_equal(0, mcdc_lsn_cmp(&after.lsn, &ad.after.lsn));
    mcdc_batch_commit c5 = commit(5);
    assert_int_equal(0, mcdc_checkpoint_record_commit(ck, &c5));
    mcdc_batch_commit lc;
    assert_int_equal(0, mcdc_checkpoint_last_commit(ck, &lc));
    assert_int_equal(5, lc.batch_id);
    assert_int_equal(MCDC_EINVAL, mcdc_checkpoint_record_adoption(ck, 9, &after, "x"));
    mcdc_checkpoint_close(ck);
    /* peek reads without locking: metadata and batches */
    bool exists = false, batches = false;
    assert_int_equal(0, mcdc_checkpoint_peek(dir, &exists, &batches));
    assert_true(exists);
    assert_true(batches);
}

static void test_pipeline_checkpoint__an_adoption_below_its_offsets_is_corruption(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "app", "dbo_t", "bronze.t"));
    mcdc_batch_range r0 = range(0, "0x00000000000000000001", "0x00000000000000000002");
    assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r0));
    mcdc_checkpoint_close(ck);
    char p[512];
    snprintf(p, sizeof p, "%s/adopted", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"first_batch\":3,\"after\":{\"lsn\":\"0x00000000000000000001\",\"commit_ts\":\"\"},"
          "\"from_owner\":\"o\"}", f);
    fclose(f);
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_open(&ck, dir, "app", "dbo_t", "bronze.t"));
    assert_null(ck);
}

static void test_pipeline_checkpoint__old_batches_are_pruned(void **state)
{
    (void)state;
    mcdc_checkpoint *ck = NULL;
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    char l1[32], l2[32];
    for (int i = 0; i < 105; i++) {
        snprintf(l1, sizeof l1, "0x%04X", i);
        snprintf(l2, sizeof l2, "0x%04X", i + 1);
        mcdc_batch_range r = range(i, l1, l2);
        assert_int_equal(0, mcdc_checkpoint_record_range(ck, &r));
        mcdc_batch_commit c = commit(i);
        assert_int_equal(0, mcdc_checkpoint_record_commit(ck, &c));
    }
    mcdc_checkpoint_close(ck);
    char p[512];
    snprintf(p, sizeof p, "%s/offsets/4", dir);
    assert_false(mcdc_fs_exists(p));
    snprintf(p, sizeof p, "%s/commits/5", dir);
    assert_true(mcdc_fs_exists(p));
    assert_int_equal(0, mcdc_checkpoint_open(&ck, dir, "a", "ci", "t"));
    mcdc_batch_commit gc;
    assert_int_equal(0, mcdc_checkpoint_last_commit(ck, &gc));
    assert_int_equal(104, gc.batch_id);
    mcdc_checkpoint_close(ck);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__new_directory_gets_metadata_and_no_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__ranges_and_commits_survive_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__batch_taken_by_another_writer_is_a_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__a_range_recorded_in_the_background, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__batches_out_of_sequence_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__second_opener_fails_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__reuse_for_another_stream_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__a_hole_is_corruption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__lost_metadata_is_corruption_not_a_new_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__an_adoption_numbers_batches_from_its_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__an_adoption_below_its_offsets_is_corruption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint__old_batches_are_pruned, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
