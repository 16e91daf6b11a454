/* Unit tests for core/proc.c: a child's standard output is captured, its standard error
 * appended to the log, its exit status returned; a program that cannot start is an error
 * (or exit status 127 where the C library cannot tell). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/proc.h"

static void test_core_proc__output_captured_errors_logged_status_returned(void **state)
{
    (void)state;
    char dir[] = "/tmp/mcdc-test-proc-XXXXXX", log[64];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/err.log", dir);
    const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 7", NULL };
    mcdc_buf out = MCDC_BUF_INIT(1024);
    int ec = 0;
    assert_int_equal(0, mcdc_proc_run(&ec, "/bin/sh", argv, &out, log));
    assert_int_equal(7, ec);
    assert_int_equal(4, out.len);
    assert_memory_equal("out\n", out.ptr, 4);
    assert_int_equal(0, mcdc_proc_run(&ec, "/bin/sh", argv, NULL, log));
    mcdc_buf e = MCDC_BUF_INIT(1024);
    assert_int_equal(0, mcdc_fs_read_all(&e, log));
    assert_int_equal(8, e.len);
    assert_memory_equal("err\nerr\n", e.ptr, 8);
    mcdc_buf_dispose(&e);
    mcdc_buf_dispose(&out);
    const char *none[] = { "nope", NULL };
    /* glibc reports a failed exec from posix_spawn; where it cannot (a fork fallback, as
     * under valgrind) the child exits 127, as a shell's would */
    int rc = mcdc_proc_run(&ec, "/nonexistent/nope", none, NULL, NULL);
    assert_true((rc == MCDC_EIO && ec == -1) || (rc == 0 && ec == 127));
    char self[MCDC_PATH_MAX];
    assert_int_equal(0, mcdc_proc_self_exe(self));
    assert_true(self[0] == '/');
    unlink(log);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_proc__output_captured_errors_logged_status_returned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
