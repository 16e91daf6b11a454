/* Unit tests for the S3 backend (core/storage_s3.c, s3_http.c) against the loopback fake
 * tests/s3/fake_s3.py: a streamed writer larger than a part goes up as a multipart upload
 * that appears only at its commit and reads back byte for byte (ranged reads across part
 * boundaries included), also while the fake resets every 2nd upload and answers 503 to
 * every 7th request; create-if-absent refuses a taken name; a listing pages through more
 * keys than one answer holds. */
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

#include "core/s3_int.h"
#include "mcdc/error.h"
#include "mcdc/storage.h"

static pid_t g_fake = -1;

/* Start the fake with @p flags; point the S3 settings at it. */
static void fake_start(const char *flags)
{
    const char *src = getenv("MCDC_SRC");
    assert_non_null(src);
    char cmd[2048], portfile[] = "/tmp/mcdc-fake-port-XXXXXX";
    int fd = mkstemp(portfile);
    assert_true(fd >= 0);
    close(fd);
    g_fake = fork();
    assert_true(g_fake >= 0);
    if (g_fake == 0) {
        snprintf(cmd, sizeof cmd, "exec python3 '%s/tests/s3/fake_s3.py' %s > '%s'", src, flags, portfile);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 200 && !port; i++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            if (fscanf(f, "port %d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (!port)
            usleep(50000);
    }
    unlink(portfile);
    assert_true(port > 0);
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    setenv("AWS_ENDPOINT_URL", ep, 1);
    setenv("AWS_ACCESS_KEY_ID", "fakekey", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "fakesecret", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("MCDC_S3_PART_BYTES", "5242880", 1);
    setenv("MCDC_S3_MAX_ATTEMPTS", "12", 1);
    mcdc_s3__config_reset();
}

static int teardown(void **state)
{
    (void)state;
    if (g_fake > 0) {
        kill(g_fake, SIGTERM);
        waitpid(g_fake, NULL, 0);
        g_fake = -1;
    }
    return 0;
}

/* A writer of @p size pseudo-random bytes to @p loc, committed; the bytes in *out. */
static void write_big(const char *loc, size_t size, unsigned char **out)
{
    unsigned char *data = malloc(size);
    assert_non_null(data);
    uint32_t x = 12345;
    for (size_t i = 0; i < size; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (unsigned char)(x >> 16);
    }
    mcdc_storage_writer *w;
    assert_int_equal(0, mcdc_storage_writer_open(&w, loc, MCDC_STORAGE_NOREPLACE));
    for (size_t off = 0; off < size; off += 300000) {
        size_t n = size - off < 300000 ? size - off : 300000;
        int rc = mcdc_storage_writer_write(w, data + off, n);
        if (rc)
            fail_msg("write: %s", mcdc_error_last()->message);
    }
    assert_false(mcdc_storage_exists(loc)); /* not before the commit */
    int rc = mcdc_storage_writer_commit(w);
    if (rc)
        fail_msg("commit: %s", mcdc_error_last()->message);
    mcdc_storage_writer_free(w);
    *out = data;
}

static void check_back(const char *loc, const unsigned char *data, size_t size)
{
    mcdc_buf b = MCDC_BUF_INIT(size + 1);
    mcdc_storage_info info;
    assert_int_equal(0, mcdc_storage_read(&b, &info, loc));
    assert_int_equal(size, b.len);
    assert_memory_equal(data, b.ptr, size);
    assert_non_null(strstr(info.token, "-3\"")); /* a three-part multipart ETag */
    mcdc_buf_dispose(&b);
    mcdc_storage_file *f;
    assert_int_equal(0, mcdc_storage_file_open(&f, NULL, loc));
    unsigned char got[4096];
    uint64_t at = 5242880 - 1000; /* across the first part boundary */
    assert_int_equal(0, mcdc_storage_file_read(f, got, sizeof got, at));
    assert_memory_equal(data + at, got, sizeof got);
    assert_int_equal(MCDC_ECORRUPT, mcdc_storage_file_read(f, got, 10, size - 5));
    mcdc_storage_file_close(f);
}

static void test_core_storage_s3__multipart_streamed_and_read_back(void **state)
{
    (void)state;
    fake_start("");
    const char *loc = "s3://mcdc-fake/t/big.parquet";
    size_t size = 11u << 20; /* 5 + 5 + 1 MiB */
    unsigned char *data;
    write_big(loc, size, &data);
    check_back(loc, data, size);
    /* no-replace: a second writer of the name fails */
    mcdc_storage_writer *w;
    assert_int_equal(0, mcdc_storage_writer_open(&w, loc, MCDC_STORAGE_NOREPLACE));
    assert_int_equal(0, mcdc_storage_writer_write(w, data, size));
    assert_int_equal(MCDC_EEXISTS, mcdc_storage_writer_commit(w));
    mcdc_storage_writer_free(w);
    check_back(loc, data, size);
    free(data);
}

static void test_core_storage_s3__multipart_survives_resets_and_slowdowns(void **state)
{
    (void)state;
    fake_start("--reset-every 2 --slowdown-every 7");
    const char *loc = "s3://mcdc-fake/t/faulty.parquet";
    size_t size = 11u << 20;
    unsigned char *data;
    write_big(loc, size, &data);
    check_back(loc, data, size);
    free(data);
}

static void test_core_storage_s3__create_and_list_pages(void **state)
{
    (void)state;
    fake_start("--error-after-store 3 --page-keys 50");
    char loc[128];
    for (int i = 0; i < 125; i++) { /* three pages of at most 50 */
        snprintf(loc, sizeof loc, "s3://mcdc-fake/l/k%05d", i);
        int rc = mcdc_storage_create(loc, "x", 1); /* every 3rd: stored, then 500 */
        if (rc)
            fail_msg("create %s: %s", loc, mcdc_error_last()->message);
    }
    assert_int_equal(MCDC_EEXISTS, mcdc_storage_create("s3://mcdc-fake/l/k00007", "y", 1));
    mcdc_storage_listing l;
    assert_int_equal(0, mcdc_storage_list(&l, "s3://mcdc-fake/l", MCDC_STORAGE_LIST_INFO));
    size_t probes = 0;
    for (size_t i = 0; i < l.n; i++)
        probes += strncmp(l.entries[i].name, ".mcdc-probe-", 12) == 0;
    assert_int_equal(0, probes); /* the probe object was removed */
    assert_int_equal(125, l.n);
    assert_string_equal("k00000", l.entries[0].name);
    assert_string_equal("k00124", l.entries[124].name);
    assert_int_equal(1, l.entries[5].size);
    mcdc_storage_listing_dispose(&l);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_storage_list(&l, "s3://mcdc-fake/none", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_core_storage_s3__multipart_streamed_and_read_back, teardown),
        cmocka_unit_test_teardown(test_core_storage_s3__multipart_survives_resets_and_slowdowns, teardown),
        cmocka_unit_test_teardown(test_core_storage_s3__create_and_list_pages, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
