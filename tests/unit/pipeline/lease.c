/* Unit tests for pipeline/lease.c, the lease object of a checkpoint on object storage
 * (L1-L4), over the storage seam's local backend (whose compare and swap is the same
 * contract as S3's conditional PUTs): a live lease of another owner is refused naming it
 * and its time left; a released or expired one is taken at once; one of a dead process of
 * this host is waited for until it expires; the holder renews it; a renewal that finds
 * another owner marks it lost. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/storage.h"
#include "mcdc/time.h"
#include "pipeline/lease.h"

static char root[256], loc[300];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-test-lease-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(loc, sizeof loc, "%s/lease", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* The lease object as text. */
static char *content(void)
{
    static char text[4096];
    mcdc_buf b = MCDC_BUF_INIT(sizeof text - 1);
    assert_int_equal(0, mcdc_storage_read(&b, NULL, loc));
    memcpy(text, b.ptr, b.len);
    text[b.len] = '\0';
    mcdc_buf_dispose(&b);
    return text;
}

/* Write a lease of owner @p owner, pid @p pid on this host, expiring @p in_us from now. */
static void plant(const char *owner, long pid, int64_t in_us)
{
    char host[96] = "", exp[MCDC_TIME_STRLEN], text[1024];
    gethostname(host, sizeof host - 1);
    mcdc_time_format(exp, mcdc_time_now_us() + in_us, 3, true);
    snprintf(text, sizeof text, "{\"version\":1,\"owner\":\"%s\",\"host\":\"%s\",\"pid\":%ld,"
             "\"expires_at\":\"%s\",\"duration_ms\":30000,\"released\":false}", owner, host, pid, exp);
    assert_int_equal(0, mcdc_storage_put(loc, text, strlen(text)));
}

/* A pid that no longer runs: a child that has exited and been reaped. */
static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    assert_true(p > 0);
    waitpid(p, NULL, 0);
    return (long)p;
}

static void test_pipeline_lease__a_live_lease_of_another_owner_is_refused(void **state)
{
    (void)state;
    mcdc_lease *a = NULL, *b = NULL;
    assert_int_equal(0, mcdc_lease_acquire(&a, loc, 30 * 1000000LL, "ck"));
    assert_non_null(strstr(content(), mcdc_lease_owner(a)));
    assert_int_equal(MCDC_ECONFLICT, mcdc_lease_acquire(&b, loc, 30 * 1000000LL, "ck"));
    assert_null(b);
    const char *msg = mcdc_error_last()->message;
    assert_non_null(strstr(msg, "checkpoint ck: another stream holds its lease: owner "));
    assert_non_null(strstr(msg, mcdc_lease_owner(a)));
    assert_true(strstr(msg, "for another 29.") || strstr(msg, "for another 30.0 s"));
    assert_non_null(strstr(mcdc_error_last()->hint, "one stream per checkpoint"));
    /* released: the next one takes it at once */
    mcdc_lease_release(a);
    assert_non_null(strstr(content(), "\"released\":true"));
    int64_t t0 = mcdc_time_mono_us();
    assert_int_equal(0, mcdc_lease_acquire(&b, loc, 30 * 1000000LL, "ck"));
    assert_true(mcdc_time_mono_us() - t0 < 1000000);
    assert_non_null(strstr(content(), mcdc_lease_owner(b)));
    mcdc_lease_release(b);
}

static void test_pipeline_lease__an_expired_lease_is_taken_over(void **state)
{
    (void)state;
    plant("elsewhere:1:00000000", (long)getpid(), -1000000); /* expired a second ago */
    mcdc_lease *l = NULL;
    assert_int_equal(0, mcdc_lease_acquire(&l, loc, 5 * 1000000LL, "ck"));
    assert_non_null(strstr(content(), mcdc_lease_owner(l)));
    assert_int_equal(0, mcdc_lease_check(l));
    mcdc_lease_release(l);
}

static void test_pipeline_lease__a_dead_holder_of_this_host_is_waited_for(void **state)
{
    (void)state;
    plant("killed:1:00000000", dead_pid(), 1500000); /* expires in 1.5 s */
    mcdc_lease *l = NULL;
    int64_t t0 = mcdc_time_mono_us();
    assert_int_equal(0, mcdc_lease_acquire(&l, loc, 5 * 1000000LL, "ck"));
    int64_t waited = mcdc_time_mono_us() - t0;
    assert_true(waited >= 1400000);
    assert_true(waited < 5000000);
    assert_non_null(strstr(content(), mcdc_lease_owner(l)));
    mcdc_lease_release(l);
}

static void test_pipeline_lease__renewed_and_lost_to_another_owner(void **state)
{
    (void)state;
    mcdc_lease *l = NULL;
    assert_int_equal(0, mcdc_lease_acquire(&l, loc, 1000000LL, "ck"));
    char first[4096];
    snprintf(first, sizeof first, "%s", content());
    usleep(1300000); /* past the first expiry: renewed every third */
    assert_string_not_equal(first, content());
    assert_non_null(strstr(content(), mcdc_lease_owner(l)));
    assert_int_equal(0, mcdc_lease_check(l));
    /* another owner writes it: the next renewal finds it and the lease is lost (L3) */
    plant("thief:1:00000000", 1, 30 * 1000000LL);
    usleep(700000);
    assert_int_equal(MCDC_ECONFLICT, mcdc_lease_check(l));
    assert_non_null(strstr(mcdc_error_last()->message, "taken over by thief:1:00000000"));
    mcdc_lease_release(l); /* leaves the other owner's lease alone (L4) */
    assert_non_null(strstr(content(), "thief:1:00000000"));
}

static void test_pipeline_lease__not_a_lease_is_corrupt(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_storage_put(loc, "{\"owner\":1}", 11));
    mcdc_lease *l = NULL;
    assert_int_equal(MCDC_ECORRUPT, mcdc_lease_acquire(&l, loc, 5 * 1000000LL, "ck"));
    assert_non_null(strstr(mcdc_error_last()->message, "not a lease"));
    assert_string_equal("{\"owner\":1}", content());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipeline_lease__a_live_lease_of_another_owner_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_lease__an_expired_lease_is_taken_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_lease__a_dead_holder_of_this_host_is_waited_for, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_lease__renewed_and_lost_to_another_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_lease__not_a_lease_is_corrupt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
