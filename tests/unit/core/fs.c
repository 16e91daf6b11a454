/* Unit tests for core/fs.c: atomic replace, create-without-replace, capped reads,
 * mkdir -p, numbered listings and the process lock (checked across fork). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/fs.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-test-fs-XXXXXX");
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

static char *slurp(const char *path)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_fs_read_all(&b, path));
    return mcdc_buf_detach(&b);
}

/* Entries in dir other than "." and "..", counted. */
static int count_entries(const char *dir)
{
    char cmd[600];
    int n = 0;
    FILE *f;
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    f = popen(cmd, "r");
    assert_non_null(f);
    assert_int_equal(1, fscanf(f, "%d", &n));
    pclose(f);
    return n;
}

static void test_core_fs__write_atomic_replaces_and_leaves_no_temp(void **state)
{
    (void)state;
    const char *p = at("state.json");
    assert_int_equal(0, mcdc_fs_write_atomic(p, "one", 3));
    char *s = slurp(p);
    assert_string_equal("one", s);
    free(s);
    assert_int_equal(0, mcdc_fs_write_atomic(p, "second", 6));
    s = slurp(p);
    assert_string_equal("second", s);
    free(s);
    assert_int_equal(0, mcdc_fs_write_atomic(p, "", 0));
    s = slurp(p);
    assert_string_equal("", s);
    free(s);
    assert_int_equal(1, count_entries(root));
    /* A directory that does not exist: EIO naming the path, nothing created. */
    assert_int_equal(MCDC_EIO, mcdc_fs_write_atomic(at("missing/dir/x"), "x", 1));
    assert_non_null(strstr(mcdc_error_last()->message, "missing/dir"));
    assert_int_equal(MCDC_EINVAL, mcdc_fs_write_atomic(at("dir/"), "x", 1));
}

static void test_core_fs__create_noreplace_refuses_existing(void **state)
{
    (void)state;
    const char *p = at("00000000000000000001.json");
    assert_int_equal(0, mcdc_fs_create_noreplace(p, "winner", 6));
    assert_int_equal(MCDC_EEXISTS, mcdc_fs_create_noreplace(p, "loser", 5));
    assert_non_null(strstr(mcdc_error_last()->message, "already exists"));
    char *s = slurp(p);
    assert_string_equal("winner", s);
    free(s);
    assert_int_equal(1, count_entries(root));

    /* publish_noreplace of a prepared temp file: the loser's temp stays for the caller. */
    char tmp[MCDC_PATH_MAX];
    int fd;
    assert_int_equal(0, mcdc_fs_temp_open(&fd, tmp, p));
    assert_int_equal(4, write(fd, "late", 4));
    assert_int_equal(0, mcdc_fs_fsync_fd(fd, tmp));
    close(fd);
    assert_non_null(strstr(tmp, "/.00000000000000000001.json.tmp."));
    assert_int_equal(MCDC_EEXISTS, mcdc_fs_publish_noreplace(tmp, p));
    assert_true(mcdc_fs_exists(tmp));
    assert_int_equal(0, mcdc_fs_publish_noreplace(tmp, at("2")));
    assert_false(mcdc_fs_exists(tmp));
    s = slurp(at("2"));
    assert_string_equal("late", s);
    free(s);
    assert_int_equal(2, count_entries(root));
}

static void test_core_fs__create_noreplace_race_has_one_winner(void **state)
{
    (void)state;
    const char *p = at("race");
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            char body[2] = {(char)('a' + i), 0};
            int rc = mcdc_fs_create_noreplace(p, body, 1);
            _exit(rc == 0 ? 0 : rc == MCDC_EEXISTS ? 1 : 2);
        }
    }
    int winners = 0;
    for (int i = 0; i < 4; i++) {
        int st;
        waitpid(kids[i], &st, 0);
        assert_true(WIFEXITED(st));
        assert_int_not_equal(2, WEXITSTATUS(st));
        winners += WEXITSTATUS(st) == 0;
    }
    assert_int_equal(1, winners);
    assert_int_equal(1, count_entries(root));
}

static void test_core_fs__read_all_caps_and_not_found(void **state)
{
    (void)state;
    const char *p = at("blob");
    char data[10000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 26);
    assert_int_equal(0, mcdc_fs_write_atomic(p, data, sizeof data));
    mcdc_buf b = MCDC_BUF_INIT(sizeof data);
    assert_int_equal(0, mcdc_fs_read_all(&b, p)); /* exactly at the cap */
    assert_int_equal(sizeof data, b.len);
    assert_memory_equal(data, b.ptr, sizeof data);
    mcdc_buf_dispose(&b);

    mcdc_buf small = MCDC_BUF_INIT(9999);
    assert_int_equal(MCDC_ENOMEM, mcdc_fs_read_all(&small, p));
    assert_non_null(strstr(mcdc_error_last()->message, "larger than the limit of 9999 bytes"));
    assert_int_equal(0, small.len);
    mcdc_buf_dispose(&small);

    /* Appends after what the buffer holds. */
    mcdc_buf pre = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_buf_puts(&pre, "head:"));
    assert_int_equal(0, mcdc_fs_write_atomic(at("t"), "tail", 4));
    assert_int_equal(0, mcdc_fs_read_all(&pre, at("t")));
    assert_string_equal("head:tail", pre.ptr);
    mcdc_buf_dispose(&pre);

    mcdc_buf nb = MCDC_BUF_INIT(100);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_fs_read_all(&nb, at("nope")));
    assert_non_null(strstr(mcdc_error_last()->message, "nope: no such file"));
    mcdc_buf_dispose(&nb);
}

static void test_core_fs__mkdirs_creates_parents(void **state)
{
    (void)state;
    struct stat st;
    assert_int_equal(0, mcdc_fs_mkdirs(at("a/b/c/")));
    assert_int_equal(0, stat(at("a/b/c"), &st));
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(0, mcdc_fs_mkdirs(at("a/b/c")));
    assert_int_equal(0, mcdc_fs_write_atomic(at("a/file"), "x", 1));
    assert_int_equal(MCDC_EEXISTS, mcdc_fs_mkdirs(at("a/file/d")));
    assert_non_null(strstr(mcdc_error_last()->message, "not a directory"));
    assert_int_equal(MCDC_EINVAL, mcdc_fs_mkdirs(""));
    assert_int_equal(0, mcdc_fs_remove(at("a/file")));
    assert_int_equal(0, mcdc_fs_remove(at("a/file")));
    assert_false(mcdc_fs_exists(at("a/file")));
    assert_int_equal(0, mcdc_fs_fsync_path(at("a/b")));
    assert_int_equal(0, mcdc_fs_fsync_parent(at("a/b")));
    assert_int_equal(MCDC_EIO, mcdc_fs_fsync_path(at("zzz")));
}

static void test_core_fs__realpath_is_absolute_and_canonical(void **state)
{
    (void)state;
    char out[MCDC_PATH_MAX], want[MCDC_PATH_MAX], cwd[MCDC_PATH_MAX];
    assert_int_equal(0, mcdc_fs_mkdirs(at("a/b")));
    assert_int_equal(0, mcdc_fs_realpath(want, at("a/b")));
    assert_true(want[0] == '/');
    assert_int_equal(0, mcdc_fs_realpath(out, at("a/./b/../b/")));
    assert_string_equal(want, out);
    /* a relative path comes out absolute */
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(0, chdir(at("a")));
    assert_int_equal(0, mcdc_fs_realpath(out, "b"));
    assert_int_equal(0, chdir(cwd));
    assert_string_equal(want, out);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_fs_realpath(out, at("a/nope")));
    assert_non_null(strstr(mcdc_error_last()->message, "no such file or directory"));
}

static void test_core_fs__list_numbered_sorts_and_skips(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_fs_mkdirs(at("offsets")));
    const char *names[] = {"10", "2", "0", "100", "9", ".10.tmp.123.0", "lock", "007", "3a", "-1",
                           "18446744073709551615", "1234567890123456789"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/offsets/%s", root, names[i]);
        assert_int_equal(0, mcdc_fs_write_atomic(p, "x", 1));
    }
    uint64_t *v = NULL;
    size_t n = 0;
    assert_int_equal(0, mcdc_fs_list_numbered(&v, &n, at("offsets")));
    uint64_t want[] = {0, 2, 9, 10, 100, 1234567890123456789ull};
    assert_int_equal(6, n);
    for (size_t i = 0; i < 6; i++)
        assert_true(v[i] == want[i]);
    free(v);
    assert_int_equal(0, mcdc_fs_mkdirs(at("empty")));
    assert_int_equal(0, mcdc_fs_list_numbered(&v, &n, at("empty")));
    assert_int_equal(0, n);
    assert_null(v);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_fs_list_numbered(&v, &n, at("absent")));
}

static void test_core_fs__lock_is_exclusive_and_dies_with_holder(void **state)
{
    (void)state;
    const char *p = at("lock");
    int ready[2];
    assert_int_equal(0, pipe(ready));
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        mcdc_fs_lock *l = NULL;
        char c = mcdc_fs_lock_acquire(&l, p) == 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1)
            _exit(3);
        for (;;)
            pause(); /* killed by the parent while holding the lock */
    }
    char c = 0;
    assert_int_equal(1, read(ready[0], &c, 1));
    assert_int_equal('y', c);

    mcdc_fs_lock *l = (mcdc_fs_lock *)1;
    assert_int_equal(MCDC_ELOCKED, mcdc_fs_lock_acquire(&l, p));
    assert_null(l);
    char want[600];
    snprintf(want, sizeof want, "%s: already locked by pid %ld", p, (long)kid);
    assert_string_equal(want, mcdc_error_last()->message);
    assert_true(strlen(mcdc_error_last()->hint) > 0);

    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    assert_int_equal(0, mcdc_fs_lock_acquire(&l, p));
    char *s = slurp(p);
    char mine[32];
    snprintf(mine, sizeof mine, "%ld\n", (long)getpid());
    assert_string_equal(mine, s);
    free(s);
    /* A second acquire in the same process is refused too, naming this pid. */
    mcdc_fs_lock *l2 = NULL;
    assert_int_equal(MCDC_ELOCKED, mcdc_fs_lock_acquire(&l2, p));
    snprintf(want, sizeof want, "%s: already locked by pid %ld", p, (long)getpid());
    assert_string_equal(want, mcdc_error_last()->message);
    mcdc_fs_lock_release(l);
    assert_int_equal(0, mcdc_fs_lock_acquire(&l2, p));
    mcdc_fs_lock_release(l2);
    mcdc_fs_lock_release(NULL);
    close(ready[0]);
    close(ready[1]);
    assert_int_equal(MCDC_EIO, mcdc_fs_lock_acquire(&l, at("no/such/dir/lock")));
}

static void test_core_fs__append_writes_whole_lines_and_checks_the_directory(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_fs_check_writable(at("log")));
    assert_int_equal(MCDC_EINVAL, mcdc_fs_check_writable(at("missing/log")));
    assert_non_null(strstr(mcdc_error_last()->message, "cannot write in "));
    int a = -1, b = -1;
    assert_int_equal(0, mcdc_fs_append_open(&a, at("log")));
    assert_int_equal(0, mcdc_fs_append_open(&b, at("log")));
    assert_int_equal(0, mcdc_fs_append(a, "one\n", 4, at("log")));
    assert_int_equal(0, mcdc_fs_append(b, "two\n", 4, at("log")));
    assert_int_equal(0, mcdc_fs_append(a, "three\n", 6, at("log")));
    mcdc_fs_close(a);
    mcdc_fs_close(b);
    mcdc_fs_close(-1);
    char *text = slurp(at("log"));
    assert_string_equal("one\ntwo\nthree\n", text);
    free(text);
    assert_int_equal(MCDC_EIO, mcdc_fs_append_open(&a, at("missing/log")));
    assert_int_equal(-1, a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_core_fs__write_atomic_replaces_and_leaves_no_temp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__create_noreplace_refuses_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__create_noreplace_race_has_one_winner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__read_all_caps_and_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__mkdirs_creates_parents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__append_writes_whole_lines_and_checks_the_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__realpath_is_absolute_and_canonical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__list_numbered_sorts_and_skips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_fs__lock_is_exclusive_and_dies_with_holder, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
