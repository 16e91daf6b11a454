/* Unit test for the reader's memory bound: a 96 MiB file of 2 MiB row groups is read by
 * `mssql-cdc parquet cat` (a child process, so its peak RSS can be measured alone) in far
 * less memory than the file: the reader streams row groups and pages from the file
 * descriptor instead of loading the file or its chunks whole. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/parquet.h"

#define RSS_LIMIT_KB (16 * 1024) /* a sixth of the file (it takes about 7 MiB) */

/* Under AddressSanitizer freed memory waits in a quarantine of up to 256 MiB, so the peak
 * says nothing about the reader there: only the plain build checks it. */
#if defined(__SANITIZE_ADDRESS__)
#define MEASURED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEASURED 0
#endif
#endif
#ifndef MEASURED
#define MEASURED 1
#endif
/* there, a smaller file keeps the test fast */
#define FILE_BYTES ((off_t)(MEASURED ? 96 : 16) << 20)

static void test_parquet_reader_memory__a_large_file_is_read_in_bounded_memory(void **state)
{
    (void)state;
    const char *bin = getenv("MCDC_BIN");
    assert_non_null(bin);
    char dir[] = "/tmp/mcdc_reader_memory_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/big.parquet", dir);

    /* 200-byte strings that neither repeat nor compress: the file is as large as its data */
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(0, mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, false));
    assert_int_equal(0, mcdc_schema_add(s, "s", MCDC_TYPE_STRING, 0, 0, false));
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.codec = MCDC_PARQUET_UNCOMPRESSED;
    o.dictionary = false;
    o.row_group_bytes = (size_t)2 << 20;
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, &o));
    char text[201];
    uint64_t x = 88172645463325252ull;
    long long rows = FILE_BYTES / 212;
    for (long long i = 0; i < rows; i++) {
        for (int k = 0; k < 200; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            text[k] = (char)('a' + x % 26);
        }
        mcdc_value v[2] = { { .is_null = false }, { .is_null = false } };
        v[0].v.i = i;
        v[1].v.s.ptr = text;
        v[1].v.s.len = 200;
        assert_int_equal(0, mcdc_parquet_writer_write_row(w, v));
    }
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_schema_free(s);
    struct stat st;
    assert_int_equal(0, stat(path, &st));
    assert_true(st.st_size >= FILE_BYTES);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl(bin, bin, "parquet", "cat", "--format", "csv", path, (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(pid, waitpid(pid, &status, 0));
    assert_true(WIFEXITED(status));
    assert_int_equal(0, WEXITSTATUS(status));
    struct rusage ru;
    assert_int_equal(0, getrusage(RUSAGE_CHILDREN, &ru));
    print_message("file %lld bytes, %lld rows; parquet cat peak RSS %ld KiB\n",
                  (long long)st.st_size, rows, ru.ru_maxrss);
    if (MEASURED)
        assert_true(ru.ru_maxrss < RSS_LIMIT_KB);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_reader_memory__a_large_file_is_read_in_bounded_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
