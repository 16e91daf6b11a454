/* Unit tests for pipeline/checkpoint.c, reading without the lock: the last committed end offset of a checkpoint. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/pipeline.h"
#include "mcdc/time.h"

static char root[256];

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-ck-read-XXXXXX");
    assert_non_null(mkdtemp(root));
    char p[512];
    snprintf(p, sizeof p, "%s/offsets", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/commits", root);
    mkdir(p, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

#define OFFS(n, lsn, ts) \
    "{\"batch_id\":" #n ",\"start\":{\"lsn\":\"0x00000000000000000001\",\"commit_ts\":\"\"}," \
    "\"end\":{\"lsn\":\"" lsn "\",\"commit_ts\":\"" ts "\"},\"planned_at\":\"2026-10-01T15:00:00.000\"}"

static void test_pipeline_checkpoint_read__uses_the_newest_committed_batch(void **state)
{
    (void)state;
    put("offsets/0", OFFS(0, "0x0000000000000000000A", "2026-10-01T14:10:00.000"));
    put("offsets/1", OFFS(1, "0x0000000000000000000B", "2026-10-01T15:10:00.000"));
    put("offsets/2", OFFS(2, "0x0000000000000000000C", "2026-10-01T16:10:00.000"));
    put("commits/0", "{}");
    put("commits/1", "{}");
    put("commits/.1.tmp", "{}");
    put("commits/007", "{}");
    mcdc_offset o;
    int64_t n = -1, want;
    assert_int_equal(0, mcdc_checkpoint_read_last(&o, &n, root));
    assert_int_equal(1, n); /* batch 2 is planned, not committed */
    assert_true(o.has_commit_ts);
    assert_int_equal(0, mcdc_time_parse(&want, "2026-10-01T15:10:00"));
    assert_int_equal(want, o.commit_ts_us);
    char s[MCDC_LSN_STRLEN];
    assert_string_equal("0x0000000000000000000B", mcdc_lsn_format(s, &o.lsn));
    put("commits/10", "{}");
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_read_last(&o, &n, root));
    assert_non_null(strstr(mcdc_error_last()->message, "offsets/10: missing, but batch 10 finished"));
}

static void test_pipeline_checkpoint_read__nothing_committed_or_no_directory(void **state)
{
    (void)state;
    mcdc_offset o;
    put("offsets/0", OFFS(0, "0x0000000000000000000A", "2026-10-01T14:10:00.000"));
    assert_int_equal(MCDC_ENOTFOUND, mcdc_checkpoint_read_last(&o, NULL, root));
    assert_non_null(strstr(mcdc_error_last()->message, "no batch committed yet"));
    assert_int_equal(MCDC_ENOTFOUND, mcdc_checkpoint_read_last(&o, NULL, "/nonexistent/ck"));
    assert_non_null(strstr(mcdc_error_last()->message, "no such directory"));
}

static void test_pipeline_checkpoint_read__corrupt_offsets_refused(void **state)
{
    (void)state;
    mcdc_offset o;
    put("commits/0", "{}");
    put("offsets/0", "{\"batch_id\":0,\"start\":{\"lsn\":\"0x00000000000000000001\",\"commit_ts\":\"\"},\"end\":{\"lsn\":\"nope\",\"commit_ts\":\"\"}}");
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_read_last(&o, NULL, root));
    assert_non_null(strstr(mcdc_error_last()->message, "offsets/0: \"end\": bad lsn 'nope'"));
    put("offsets/0", "{\"batch_id\":0}");
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_read_last(&o, NULL, root));
    put("offsets/0", "{\"batch_id\":0, \"end\":");
    assert_int_equal(MCDC_ECORRUPT, mcdc_checkpoint_read_last(&o, NULL, root));
    /* an unknown commit time is an offset without a verdict, not an error */
    put("offsets/0", OFFS(0, "0x0000000000000000000A", ""));
    assert_int_equal(0, mcdc_checkpoint_read_last(&o, NULL, root));
    assert_false(o.has_commit_ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint_read__uses_the_newest_committed_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint_read__nothing_committed_or_no_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_checkpoint_read__corrupt_offsets_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
