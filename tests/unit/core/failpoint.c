/* Unit tests for core/failpoint.c: each case runs in a forked child with its own
 * MCDC_FAILPOINT, so the parse-once state starts fresh; the parent checks how the
 * child ended (SIGKILL at the right pass, or a normal exit). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/failpoint.h"

/* Run in a child: set MCDC_FAILPOINT to spec (NULL: unset), pass "a" and "b" in the
 * order of `walk` ('a'/'b' chars), writing one byte to the pipe before each pass.
 * Returns the wait status; *passes gets how many passes began. */
static int run_child(const char *spec, const char *walk, int *passes)
{
    int fds[2];
    assert_int_equal(0, pipe(fds));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (spec)
            setenv("MCDC_FAILPOINT", spec, 1);
        else
            unsetenv("MCDC_FAILPOINT");
        for (const char *w = walk; *w; w++) {
            char name[2] = {*w, 0};
            if (write(fds[1], "x", 1) != 1)
                _exit(9);
            mcdc_failpoint(name);
        }
        _exit(mcdc_failpoint_init() == 0 ? 0 : 7);
    }
    close(fds[1]);
    char buf[64];
    ssize_t r;
    *passes = 0;
    while ((r = read(fds[0], buf, sizeof buf)) > 0)
        *passes += (int)r;
    close(fds[0]);
    int st;
    assert_int_equal(pid, waitpid(pid, &st, 0));
    return st;
}

static void expect_killed_at(const char *spec, const char *walk, int pass)
{
    int passes, st = run_child(spec, walk, &passes);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL || passes != pass)
        fail_msg("MCDC_FAILPOINT=%s walk %s: want SIGKILL at pass %d, got status %#x after %d passes", spec, walk,
                 pass, st, passes);
}

static void expect_exit(const char *spec, const char *walk, int code)
{
    int passes, st = run_child(spec, walk, &passes);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != code || passes != (int)strlen(walk))
        fail_msg("MCDC_FAILPOINT=%s walk %s: want exit %d, got status %#x", spec ? spec : "(unset)", walk, code, st);
}

static void test_core_failpoint__unset_or_empty_never_kills(void **state)
{
    (void)state;
    expect_exit(NULL, "aaabbb", 0);
    expect_exit("", "aaabbb", 0);
    expect_exit("c", "aaabbb", 0);
}

static void test_core_failpoint__first_pass_by_default(void **state)
{
    (void)state;
    expect_killed_at("a", "bbab", 3);
    expect_killed_at("b", "bbab", 1);
}

static void test_core_failpoint__nth_pass(void **state)
{
    (void)state;
    expect_killed_at("a@3", "aaaa", 3);
    expect_killed_at("a@2,b@1", "aab", 2);
    expect_killed_at("a@5,b@2", "ababab", 4);
    expect_exit("a@5", "aaaa", 0);
    expect_exit("a@2", "ab", 0);
}

/* "=stop": the child stops itself at the N-th pass of "a" and, once continued, walks on to
 * a normal exit: the parent sees it stopped after exactly N passes began. */
static void test_core_failpoint__stop_holds_the_process_until_continued(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(0, pipe(fds));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        setenv("MCDC_FAILPOINT", "b,a@2=stop", 1);
        for (int i = 0; i < 3; i++) {
            if (write(fds[1], "x", 1) != 1)
                _exit(9);
            mcdc_failpoint("a");
        }
        _exit(mcdc_failpoint_init() == 0 ? 0 : 7);
    }
    close(fds[1]);
    int st;
    assert_int_equal(pid, waitpid(pid, &st, WUNTRACED));
    assert_true(WIFSTOPPED(st));
    assert_int_equal(SIGSTOP, WSTOPSIG(st));
    char buf[8];
    assert_int_equal(2, read(fds[0], buf, sizeof buf)); /* passes 1 and 2, nothing after */
    assert_int_equal(0, kill(pid, SIGCONT));
    int passes = 2;
    ssize_t r;
    while ((r = read(fds[0], buf, sizeof buf)) > 0)
        passes += (int)r;
    close(fds[0]);
    assert_int_equal(pid, waitpid(pid, &st, 0));
    assert_true(WIFEXITED(st));
    assert_int_equal(0, WEXITSTATUS(st));
    assert_int_equal(3, passes);
}

static void test_core_failpoint__malformed_spec_is_refused(void **state)
{
    (void)state;
    static const char *bad[] = {"a@0", "a@", "a@x", "@3", "a b", "a,,b", "a@99999999999", "a@1000000001",
                                ",a", "a@-1", "a=kill", "a@2=", "a=stopx", "a=stop=stop"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_exit(bad[i], "aa", 7);
}

static void test_core_failpoint__init_message_in_this_process(void **state)
{
    (void)state;
    /* This process never called mcdc_failpoint, so the first call parses now. */
    setenv("MCDC_FAILPOINT", "bad name", 1);
    assert_int_equal(MCDC_EINVAL, mcdc_failpoint_init());
    assert_non_null(strstr(mcdc_error_last()->message, "bad MCDC_FAILPOINT 'bad name'"));
    assert_true(strlen(mcdc_error_last()->hint) > 0);
    /* Parsed once: a later change of the variable is not seen, and nothing is armed. */
    setenv("MCDC_FAILPOINT", "a", 1);
    assert_int_equal(MCDC_EINVAL, mcdc_failpoint_init());
    mcdc_failpoint("a");
    unsetenv("MCDC_FAILPOINT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_failpoint__unset_or_empty_never_kills),
        cmocka_unit_test(test_core_failpoint__first_pass_by_default),
        cmocka_unit_test(test_core_failpoint__nth_pass),
        cmocka_unit_test(test_core_failpoint__stop_holds_the_process_until_continued),
        cmocka_unit_test(test_core_failpoint__malformed_spec_is_refused),
        cmocka_unit_test(test_core_failpoint__init_message_in_this_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
