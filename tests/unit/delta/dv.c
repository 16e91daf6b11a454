/* Unit tests for delta/dv.c: inline and on-disk deletion vectors (Spark-written), Z85
 * paths, corrupt bitmaps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "delta/internal.h"
#include "unit/delta/testenv.h"

static void test_delta_dv__inline_protocol_example(void **state)
{
    (void)state;
    mcdc_delta_dv dv = { 'i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", -1, 40, 6 };
    uint64_t *rows;
    size_t n;
    assert_int_equal(0, mcdc_delta__dv_load(&rows, &n, "/nowhere", &dv));
    assert_int_equal(6, n);
    const uint64_t want[] = { 3, 4, 7, 11, 18, 29 };
    for (size_t i = 0; i < n; i++)
        assert_int_equal(want[i], rows[i]);
    free(rows);
    dv.cardinality = 5;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta__dv_load(&rows, &n, "/nowhere", &dv));
    dv.cardinality = 6;
    char bad[64];
    strcpy(bad, dv.path_or_inline_dv);
    bad[3] = '~';
    dv.path_or_inline_dv = bad;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta__dv_load(&rows, &n, "/nowhere", &dv));
    assert_non_null(strstr(mcdc_error_last()->message, "Z85"));
}

static void test_delta_dv__spark_dv_files_decode_to_their_cardinality(void **state)
{
    (void)state;
    char table[1024];
    snprintf(table, sizeof table, "%s/delta/golden/dv-partitioned-with-checkpoint/table",
             testenv_data());
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, table, -1));
    size_t with_dv = 0;
    for (size_t i = 0; i < s->n_files; i++) {
        if (!s->files[i].has_dv)
            continue;
        with_dv++;
        uint64_t *rows;
        size_t n;
        int rc = mcdc_delta__dv_load(&rows, &n, table, &s->files[i].dv);
        if (rc)
            fprintf(stderr, "%s\n", mcdc_error_last()->message);
        assert_int_equal(0, rc);
        assert_int_equal(s->files[i].dv.cardinality, n);
        free(rows);
        char *p = mcdc_delta__dv_path(table, &s->files[i].dv);
        assert_non_null(strstr(p, "/deletion_vector_"));
        free(p);
    }
    assert_int_equal(2, with_dv);
    /* a wrong offset fails the size check or the CRC, naming the file */
    for (size_t i = 0; i < s->n_files; i++) {
        if (s->files[i].has_dv) {
            mcdc_delta_dv dv = s->files[i].dv;
            dv.offset = 2;
            uint64_t *rows;
            size_t n;
            assert_int_equal(MCDC_ECORRUPT, mcdc_delta__dv_load(&rows, &n, table, &dv));
            assert_non_null(strstr(mcdc_error_last()->message, "deletion_vector_"));
            break;
        }
    }
    mcdc_delta_snapshot_free(s);
}

/* Storage type 'p': the path is an absolute URI, so its escapes are decoded ("dv dir"
 * is written "dv%20dir"). */
static void test_delta_dv__absolute_path_is_a_uri(void **state)
{
    (void)state;
    char table[1024];
    snprintf(table, sizeof table, "%s/delta/golden/dv-partitioned-with-checkpoint/table",
             testenv_data());
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, table, -1));
    char *tmp = testenv_tmpdir("dvp");
    size_t checked = 0;
    for (size_t i = 0; i < s->n_files; i++) {
        if (!s->files[i].has_dv)
            continue;
        char *src = mcdc_delta__dv_path(table, &s->files[i].dv);
        char cmd[3000], uri[2048], plain[2048];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s/dv dir%%' && cp '%s' '%s/dv dir%%/copy-%zu.bin'",
                 tmp, src, tmp, i);
        assert_int_equal(0, system(cmd));
        free(src);
        snprintf(uri, sizeof uri, "file://%s/dv%%20dir%%25/copy-%zu.bin", tmp, i);
        snprintf(plain, sizeof plain, "%s/dv dir%%/copy-%zu.bin", tmp, i);
        mcdc_delta_dv dv = s->files[i].dv;
        dv.storage_type = 'p';
        dv.path_or_inline_dv = uri;
        char *p = mcdc_delta__dv_path(table, &dv);
        assert_string_equal(plain, p);
        free(p);
        uint64_t *rows;
        size_t n;
        assert_int_equal(0, mcdc_delta__dv_load(&rows, &n, table, &dv));
        assert_int_equal(s->files[i].dv.cardinality, n);
        free(rows);
        checked++;
    }
    assert_int_equal(2, checked);
    testenv_rmrf(tmp);
    free(tmp);
    mcdc_delta_snapshot_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_dv__inline_protocol_example),
        cmocka_unit_test(test_delta_dv__spark_dv_files_decode_to_their_cardinality),
        cmocka_unit_test(test_delta_dv__absolute_path_is_a_uri),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
