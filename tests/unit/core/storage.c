/* Unit tests for the storage seam's local backend (core/storage*.c): create-if-absent
 * never replaces, put replaces, compare and swap wins only from the current token, whole and ranged reads, stat's change token, streamed
 * writers visible only after commit, sorted and recursive listings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/storage.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-test-storage-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
    static char p[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", root, name);
    return p[i];
}

static void read_is(const char *loc, const char *want)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_storage_read(&b, NULL, loc));
    assert_int_equal(strlen(want), b.len);
    assert_memory_equal(want, b.ptr, b.len);
    mcdc_buf_dispose(&b);
}

static void test_core_storage__create_never_replaces(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_storage_create(at("a"), "one", 3));
    assert_int_equal(MCDC_EEXISTS, mcdc_storage_create(at("a"), "two!", 4));
    read_is(at("a"), "one");
    assert_int_equal(0, mcdc_storage_put(at("a"), "three", 5));
    read_is(at("a"), "three");
    assert_int_equal(0, mcdc_storage_delete(at("a")));
    assert_int_equal(0, mcdc_storage_delete(at("a")));
    assert_false(mcdc_storage_exists(at("a")));
    mcdc_buf b = MCDC_BUF_INIT(16);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_storage_read(&b, NULL, at("a")));
    mcdc_buf_dispose(&b);
}

static void test_core_storage__swap_only_from_the_current_token(void **state)
{
    (void)state;
    mcdc_storage_info i1, i2, i3;
    assert_int_equal(0, mcdc_storage_swap(&i1, at("lease"), "one", 3, NULL));
    assert_int_equal(3, i1.size);
    assert_true(i1.token[0]);
    /* absent-only: a second create loses */
    assert_int_equal(MCDC_ECONFLICT, mcdc_storage_swap(NULL, at("lease"), "two", 3, NULL));
    read_is(at("lease"), "one");
    /* from the current token: wins, and the token moves on */
    assert_int_equal(0, mcdc_storage_swap(&i2, at("lease"), "two!", 4, i1.token));
    assert_string_not_equal(i1.token, i2.token);
    read_is(at("lease"), "two!");
    /* from a stale token: loses, nothing changes */
    assert_int_equal(MCDC_ECONFLICT, mcdc_storage_swap(&i3, at("lease"), "three", 5, i1.token));
    assert_non_null(strstr(mcdc_error_last()->message, "changed since it was read"));
    read_is(at("lease"), "two!");
    /* the token a read gives is the one a swap takes */
    mcdc_buf b = MCDC_BUF_INIT(64);
    assert_int_equal(0, mcdc_storage_read(&b, &i3, at("lease")));
    mcdc_buf_dispose(&b);
    assert_string_equal(i2.token, i3.token);
    assert_int_equal(0, mcdc_storage_swap(NULL, at("lease"), "four", 4, i3.token));
    read_is(at("lease"), "four");
    /* gone: not found */
    assert_int_equal(0, mcdc_storage_delete(at("lease")));
    assert_int_equal(MCDC_ENOTFOUND, mcdc_storage_swap(NULL, at("lease"), "five", 4, i3.token));
    assert_false(mcdc_storage_exists(at("lease")));
}

static void test_core_storage__read_caps_and_info(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_storage_create(at("big"), "0123456789", 10));
    mcdc_buf b = MCDC_BUF_INIT(9);
    assert_int_equal(MCDC_ENOMEM, mcdc_storage_read(&b, NULL, at("big")));
    mcdc_buf_dispose(&b);
    mcdc_buf c = MCDC_BUF_INIT(10);
    mcdc_storage_info i1, i2;
    assert_int_equal(0, mcdc_storage_read(&c, &i1, at("big")));
    assert_int_equal(10, i1.size);
    assert_true(i1.token[0] != '\0');
    assert_int_equal(0, mcdc_storage_stat(&i2, at("big")));
    assert_string_equal(i1.token, i2.token);
    /* the same name stored again is another object: another token */
    assert_int_equal(0, mcdc_storage_put(at("big"), "0123456789", 10));
    assert_int_equal(0, mcdc_storage_stat(&i2, at("big")));
    assert_string_not_equal(i1.token, i2.token);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_storage_stat(&i2, at("nope")));
    mcdc_buf_dispose(&c);
}

static void test_core_storage__ranged_reads(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_storage_create(at("r"), "abcdefgh", 8));
    mcdc_storage_file *f;
    mcdc_storage_info info;
    assert_int_equal(0, mcdc_storage_file_open(&f, &info, at("r")));
    assert_int_equal(8, info.size);
    char got[4];
    assert_int_equal(0, mcdc_storage_file_read(f, got, 3, 2));
    assert_memory_equal("cde", got, 3);
    assert_int_equal(MCDC_ECORRUPT, mcdc_storage_file_read(f, got, 4, 6));
    mcdc_storage_file_close(f);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_storage_file_open(&f, NULL, at("none")));
}

static void test_core_storage__writer_visible_only_after_commit(void **state)
{
    (void)state;
    mcdc_storage_writer *w;
    assert_int_equal(0, mcdc_storage_writer_open(&w, at("w"), MCDC_STORAGE_NOREPLACE));
    assert_int_equal(0, mcdc_storage_writer_write(w, "par", 3));
    assert_int_equal(0, mcdc_storage_writer_write(w, "quet", 4));
    assert_false(mcdc_storage_exists(at("w")));
    assert_int_equal(0, mcdc_storage_writer_commit(w));
    mcdc_storage_writer_free(w);
    read_is(at("w"), "parquet");

    /* no-replace: a second writer of the name fails and leaves the first */
    assert_int_equal(0, mcdc_storage_writer_open(&w, at("w"), MCDC_STORAGE_NOREPLACE));
    assert_int_equal(0, mcdc_storage_writer_write(w, "x", 1));
    assert_int_equal(MCDC_EEXISTS, mcdc_storage_writer_commit(w));
    mcdc_storage_writer_free(w);
    read_is(at("w"), "parquet");

    /* replace, and an abandoned writer leaves nothing */
    assert_int_equal(0, mcdc_storage_writer_open(&w, at("w"), 0));
    assert_int_equal(0, mcdc_storage_writer_write(w, "new", 3));
    assert_int_equal(0, mcdc_storage_writer_commit(w));
    mcdc_storage_writer_free(w);
    read_is(at("w"), "new");
    assert_int_equal(0, mcdc_storage_writer_open(&w, at("gone"), 0));
    assert_int_equal(0, mcdc_storage_writer_write(w, "x", 1));
    mcdc_storage_writer_free(w);
    mcdc_storage_listing l;
    assert_int_equal(0, mcdc_storage_list(&l, root, 0));
    assert_int_equal(1, l.n); /* only "w": no temp file left */
    assert_string_equal("w", l.entries[0].name);
    mcdc_storage_listing_dispose(&l);
}

static void test_core_storage__lists_sorted_and_recursive(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_storage_mkdirs(at("t/_delta_log")));
    assert_int_equal(0, mcdc_storage_mkdirs(at("t/p=1")));
    const char *names[] = { "t/b.parquet", "t/a.parquet", "t/_delta_log/00000000000000000001.json",
                            "t/_delta_log/00000000000000000000.json", "t/p=1/c.parquet" };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(0, mcdc_storage_create(at(names[i]), "12345", 5));
    mcdc_storage_listing l;
    assert_int_equal(0, mcdc_storage_list(&l, at("t"), MCDC_STORAGE_LIST_INFO));
    assert_int_equal(2, l.n);
    assert_string_equal("a.parquet", l.entries[0].name);
    assert_string_equal("b.parquet", l.entries[1].name);
    assert_int_equal(5, l.entries[1].size);
    assert_true(l.entries[1].mtime_ms > 0);
    mcdc_storage_listing_dispose(&l);
    assert_int_equal(0, mcdc_storage_list(&l, at("t"), MCDC_STORAGE_LIST_RECURSIVE));
    assert_int_equal(5, l.n);
    assert_string_equal("_delta_log/00000000000000000000.json", l.entries[0].name);
    assert_string_equal("_delta_log/00000000000000000001.json", l.entries[1].name);
    assert_string_equal("a.parquet", l.entries[2].name);
    assert_string_equal("b.parquet", l.entries[3].name);
    assert_string_equal("p=1/c.parquet", l.entries[4].name);
    mcdc_storage_listing_dispose(&l);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_storage_list(&l, at("missing"), 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_core_storage__create_never_replaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_storage__swap_only_from_the_current_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_storage__read_caps_and_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_storage__ranged_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_storage__writer_visible_only_after_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_storage__lists_sorted_and_recursive, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
