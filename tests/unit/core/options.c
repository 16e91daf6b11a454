/* Unit tests for core/options.c: key=value lists, case-insensitive keys, typed getters,
 * unknown-key warnings and errors naming key and value. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/log.h"
#include "mcdc/options.h"
#include "mcdc/time.h"

static const char *const known[] = {"batch_size", "trigger", "start_lsn", "snapshot", "name", NULL};

static char logged[8][512];
static int n_logged;

static void sink(mcdc_log_level level, const char *logger, const char *msg, void *payload)
{
    (void)payload;
    if (n_logged < 8)
        snprintf(logged[n_logged++], sizeof logged[0], "%s %s %s", mcdc_log_level_name(level), logger, msg);
}

static int setup(void **state)
{
    mcdc_options *o = NULL;
    if (mcdc_options_new(&o, "stream option", known) != 0)
        return -1;
    *state = o;
    n_logged = 0;
    mcdc_log_set_sink(sink, NULL);
    return 0;
}

static int teardown(void **state)
{
    mcdc_options_free(*state);
    mcdc_log_set_sink(NULL, NULL);
    return 0;
}

static void test_core_options__keys_are_case_insensitive(void **state)
{
    mcdc_options *o = *state;
    assert_int_equal(0, mcdc_options_add(o, "Batch_Size=500"));
    assert_int_equal(0, mcdc_options_add(o, " NAME = a=b=c"));
    assert_int_equal(0, mcdc_options_add(o, "empty="));
    assert_int_equal(3, mcdc_options_count(o));
    assert_true(mcdc_options_has(o, "batch_size"));
    assert_true(mcdc_options_has(o, "BATCH_SIZE"));
    assert_string_equal("500", mcdc_options_get_str(o, "batch_SIZE", "x"));
    assert_string_equal(" a=b=c", mcdc_options_get_str(o, "name", NULL));
    assert_string_equal("", mcdc_options_get_str(o, "EMPTY", "x"));
    assert_string_equal("dflt", mcdc_options_get_str(o, "trigger", "dflt"));
    const char *k, *v;
    assert_true(mcdc_options_at(o, 1, &k, &v));
    assert_string_equal("NAME", k);
    assert_false(mcdc_options_at(o, 3, &k, &v));
    /* Same key again: same value is fine, another value is an error naming both. */
    assert_int_equal(0, mcdc_options_add(o, "batch_size=500"));
    assert_int_equal(3, mcdc_options_count(o));
    assert_int_equal(MCDC_EINVAL, mcdc_options_add(o, "BATCH_SIZE=600"));
    assert_string_equal("stream option 'BATCH_SIZE' given twice with different values ('500' and '600')",
                        mcdc_error_last()->message);
    assert_int_equal(3, mcdc_options_count(o));
}

static void test_core_options__malformed_items_refused(void **state)
{
    mcdc_options *o = *state;
    assert_int_equal(MCDC_EINVAL, mcdc_options_add(o, "batch_size"));
    assert_string_equal("bad stream option 'batch_size': expected key=value", mcdc_error_last()->message);
    assert_true(strlen(mcdc_error_last()->hint) > 0);
    assert_int_equal(MCDC_EINVAL, mcdc_options_add(o, "=5"));
    assert_non_null(strstr(mcdc_error_last()->message, "no key"));
    assert_int_equal(MCDC_EINVAL, mcdc_options_add(o, "  =5"));
    assert_int_equal(MCDC_EINVAL, mcdc_options_add(o, "a\tb=5"));
    assert_int_equal(MCDC_EINVAL, mcdc_options_add(o, NULL));
    assert_int_equal(MCDC_EINVAL, mcdc_options_add_pair(o, "k", NULL));
    assert_int_equal(0, mcdc_options_count(o));
}

static void test_core_options__list_splits_and_skips_blanks(void **state)
{
    mcdc_options *o = *state;
    assert_int_equal(0, mcdc_options_add_list(o, "batch_size=10,, trigger=5m ,", ','));
    assert_int_equal(2, mcdc_options_count(o));
    assert_string_equal("5m ", mcdc_options_get_str(o, "trigger", NULL));
    assert_int_equal(MCDC_EINVAL, mcdc_options_add_list(o, "snapshot=y,oops", ','));
    assert_int_equal(0, mcdc_options_add_list(o, "", ','));
    assert_int_equal(0, mcdc_options_add_pair(o, "start_lsn", "0x10"));
}

static void test_core_options__booleans_in_every_spelling(void **state)
{
    mcdc_options *o = *state;
    static const char *yes[] = {"true", "TRUE", "True", "1", "yes", "YES", "y", "Y"};
    static const char *no[] = {"false", "FALSE", "0", "no", "No", "n", "N"};
    bool b;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        assert_int_equal(0, mcdc_options_parse_bool(&b, yes[i]));
        assert_true(b);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        assert_int_equal(0, mcdc_options_parse_bool(&b, no[i]));
        assert_false(b);
    }
    static const char *bad[] = {"", "2", "on", "off", "yess", "t", "f", " y", "y "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(MCDC_EINVAL, mcdc_options_parse_bool(&b, bad[i]));
    assert_int_equal(MCDC_EINVAL, mcdc_options_parse_bool(&b, NULL));

    assert_int_equal(0, mcdc_options_get_bool(o, "snapshot", true, &b));
    assert_true(b);
    assert_int_equal(0, mcdc_options_add(o, "Snapshot=No"));
    assert_int_equal(0, mcdc_options_get_bool(o, "snapshot", true, &b));
    assert_false(b);
    assert_int_equal(0, mcdc_options_add(o, "name=maybe"));
    assert_int_equal(MCDC_EINVAL, mcdc_options_get_bool(o, "NAME", false, &b));
    assert_string_equal("bad stream option name='maybe': expected true/false, 1/0, yes/no or y/n",
                        mcdc_error_last()->message);
}

static void test_core_options__integers_with_ranges(void **state)
{
    mcdc_options *o = *state;
    int64_t v;
    assert_int_equal(0, mcdc_options_get_int(o, "batch_size", 1000, 1, INT64_MAX, &v));
    assert_int_equal(1000, v);
    assert_int_equal(0, mcdc_options_add(o, "batch_size=250000"));
    assert_int_equal(0, mcdc_options_get_int(o, "batch_size", 1000, 1, INT64_MAX, &v));
    assert_int_equal(250000, v);
    static const char *bad[] = {"0", "-5", "12x", "", " 5", "1e3", "99999999999999999999", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mcdc_options *p = NULL;
        assert_int_equal(0, mcdc_options_new(&p, "option", NULL));
        assert_int_equal(0, mcdc_options_add_pair(p, "n", bad[i]));
        if (mcdc_options_get_int(p, "n", 1, 1, INT64_MAX, &v) != MCDC_EINVAL)
            fail_msg("'%s' accepted as a positive integer", bad[i]);
        assert_non_null(strstr(mcdc_error_last()->message, "an integer from 1 to"));
        mcdc_options_free(p);
    }
    mcdc_options_free(NULL);
    assert_int_equal(0, mcdc_options_add(o, "trigger=11"));
    assert_int_equal(MCDC_EINVAL, mcdc_options_get_int(o, "trigger", 1, 1, 10, &v));
    assert_string_equal("bad stream option trigger='11': expected an integer from 1 to 10", mcdc_error_last()->message);
}

static void test_core_options__durations_and_lsns(void **state)
{
    mcdc_options *o = *state;
    int64_t us;
    mcdc_lsn l, def = mcdc_lsn_from_u64(0, 7);
    char s[MCDC_LSN_STRLEN];
    assert_int_equal(0, mcdc_options_get_duration(o, "trigger", 5 * MCDC_US_PER_SEC, &us));
    assert_int_equal(5 * MCDC_US_PER_SEC, us);
    assert_int_equal(0, mcdc_options_get_lsn(o, "start_lsn", &def, &l));
    assert_int_equal(0, mcdc_lsn_cmp(&def, &l));
    assert_int_equal(0, mcdc_options_get_lsn(o, "start_lsn", NULL, &l));
    assert_true(mcdc_lsn_is_zero(&l));
    assert_int_equal(0, mcdc_options_add(o, "TRIGGER=90s"));
    assert_int_equal(0, mcdc_options_add(o, "start_lsn=0x2a"));
    assert_int_equal(0, mcdc_options_get_duration(o, "trigger", 0, &us));
    assert_int_equal(90 * MCDC_US_PER_SEC, us);
    assert_int_equal(0, mcdc_options_get_lsn(o, "Start_LSN", NULL, &l));
    assert_string_equal("0x0000000000000000002A", mcdc_lsn_format(s, &l));
    assert_int_equal(0, mcdc_options_add(o, "name=5 minutes"));
    assert_int_equal(MCDC_EINVAL, mcdc_options_get_duration(o, "name", 0, &us));
    assert_string_equal("bad stream option name='5 minutes': expected a duration such as 250ms, 90s, 5m, 1h or 3d",
                        mcdc_error_last()->message);
    assert_int_equal(MCDC_EINVAL, mcdc_options_get_lsn(o, "name", NULL, &l));
    assert_non_null(strstr(mcdc_error_last()->message, "expected an LSN"));
}

static void test_core_options__unknown_keys_warn_by_name(void **state)
{
    mcdc_options *o = *state;
    assert_int_equal(0, mcdc_options_add(o, "batch_size=1"));
    assert_int_equal(0, mcdc_options_add(o, "bacth_size=2"));
    assert_int_equal(0, mcdc_options_add(o, "Colour=red"));
    assert_int_equal(2, mcdc_options_warn_unknown(o));
    assert_int_equal(2, n_logged);
    assert_string_equal("WARN options unknown stream option 'bacth_size' is ignored; did you mean batch_size? "
                        "(known: batch_size, trigger, start_lsn, snapshot, name)",
                        logged[0]);
    assert_non_null(strstr(logged[1], "'Colour'"));
    assert_null(strstr(logged[1], "did you mean"));
    /* A list without a declared set accepts anything. */
    mcdc_options *any = NULL;
    assert_int_equal(0, mcdc_options_new(&any, "option", NULL));
    assert_int_equal(0, mcdc_options_add(any, "whatever=1"));
    assert_int_equal(0, mcdc_options_warn_unknown(any));
    mcdc_options_free(any);
}

static void test_core_options__nearest_name_of_a_typo(void **state)
{
    (void)state;
    const char *names[] = { "app-id", "capture-instance", "checkpoint", "target", "help" };
#define NEAR(s) mcdc_nearest_name(s, strlen(s), names, 5)
    assert_string_equal("app-id", NEAR("appid"));       /* a letter left out */
    assert_string_equal("app-id", NEAR("APP_ID"));      /* case and '_' for '-' */
    assert_string_equal("target", NEAR("tagret"));      /* a swap */
    assert_string_equal("checkpoint", NEAR("checkp"));  /* the start of one name */
    assert_string_equal("capture-instance", NEAR("capture-instnace"));
    assert_null(NEAR("frobnicate"));                     /* nothing near */
    assert_null(NEAR("x"));                              /* too short to guess */
    assert_null(NEAR("c"));                              /* a prefix of two names, and short */
#undef NEAR
}

static void test_core_options__cap_on_items(void **state)
{
    mcdc_options *o = *state;
    char item[32];
    for (int i = 0; i < MCDC_OPTIONS_MAX; i++) {
        snprintf(item, sizeof item, "k%d=v", i);
        assert_int_equal(0, mcdc_options_add(o, item));
    }
    assert_int_equal(MCDC_ENOMEM, mcdc_options_add(o, "one_more=v"));
    assert_int_equal(MCDC_OPTIONS_MAX, mcdc_options_count(o));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_core_options__keys_are_case_insensitive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_options__malformed_items_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_options__list_splits_and_skips_blanks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_options__booleans_in_every_spelling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_options__integers_with_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_options__durations_and_lsns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_options__unknown_keys_warn_by_name, setup, teardown),
        cmocka_unit_test(test_core_options__nearest_name_of_a_typo),
        cmocka_unit_test_setup_teardown(test_core_options__cap_on_items, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
