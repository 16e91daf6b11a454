/* Unit tests for delta/dv_write.c: deletion vectors written here read back through dv.c
 * (hand-worked bytes, containers of every kind, 64-bit indexes, random sets), several in
 * one file; a bad set writes nothing; a corrupt byte fails the CRC; a committed DV hides
 * its rows from a scan whose row index names the file's rows; enabling deletion vectors is
 * one commit with the property and the feature. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <cmocka.h>

#include "delta/internal.h"
#include "mcdc/storage.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    *state = testenv_tmpdir("dvw");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

static size_t count_dv_files(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, "deletion_vector_", 16) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_delta_dv_write__bitmap_of_five_is_the_hand_worked_bytes(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    const uint64_t five[] = { 5 };
    assert_int_equal(0, mcdc_delta__dv_bitmap(&b, five, 1));
    const uint8_t want[] = { 0xd1, 0xd3, 0x39, 0x64, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                             0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 5, 0 };
    assert_int_equal(sizeof want, b.len);
    assert_memory_equal(want, b.ptr, sizeof want);
    mcdc_buf_dispose(&b);
}

/* Write the sets in one file, read each back, compare. */
static void round_trip(const char *table, uint64_t **sets, const size_t *ns, size_t n)
{
    mcdc_delta_dv *dv = calloc(n, sizeof *dv);
    int rc = mcdc_delta_dv_write(table, (const uint64_t *const *)sets, ns, n, dv);
    if (rc)
        fprintf(stderr, "%s\n", mcdc_error_last()->message);
    assert_int_equal(0, rc);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal('u', dv[i].storage_type);
        assert_int_equal(20, strlen(dv[i].path_or_inline_dv));
        assert_string_equal(dv[0].path_or_inline_dv, dv[i].path_or_inline_dv);
        assert_int_equal(ns[i], dv[i].cardinality);
        uint64_t *rows;
        size_t nr;
        rc = mcdc_delta_dv_read(&rows, &nr, table, &dv[i]);
        if (rc)
            fprintf(stderr, "%s\n", mcdc_error_last()->message);
        assert_int_equal(0, rc);
        assert_int_equal(ns[i], nr);
        for (size_t k = 0; k < nr; k++)
            assert_true(rows[k] == sets[i][k]);
        free(rows);
    }
    for (size_t i = 0; i < n; i++)
        mcdc_delta_dv_clear(&dv[i]);
    free(dv);
}

static void test_delta_dv_write__every_container_kind_and_64_bit_rows_read_back(void **state)
{
    const char *table = *state;
    /* an array container; a bitset (5,000 values under one key); values in several
     * containers; values above 2^32 (several buckets); the largest index */
    size_t ns[5] = { 3, 5000, 4, 4, 2 };
    uint64_t a[] = { 0, 7, 65535 };
    uint64_t *dense = malloc(5000 * sizeof *dense);
    for (size_t i = 0; i < 5000; i++)
        dense[i] = 70000 + i * 3 > 131071 ? 131071 - (4999 - i) : 70000 + i * 3;
    for (size_t i = 1; i < 5000; i++)
        assert_true(dense[i] > dense[i - 1]);
    uint64_t multi[] = { 1, 65536, 131073, 1u << 31 };
    uint64_t wide[] = { 2, (uint64_t)1 << 32, ((uint64_t)1 << 32) + 70000, (uint64_t)5 << 40 };
    uint64_t top[] = { 0, UINT64_MAX - 1 };
    uint64_t *sets[5] = { a, dense, multi, wide, top };
    round_trip(table, sets, ns, 5);
    assert_int_equal(1, count_dv_files(table));
    free(dense);
}

static void test_delta_dv_write__random_sets_read_back(void **state)
{
    const char *table = *state;
    srand(22);
    for (int round = 0; round < 40; round++) {
        size_t n = 1 + (size_t)(rand() % 4);
        uint64_t *sets[4];
        size_t ns[4];
        for (size_t i = 0; i < n; i++) {
            /* a random density: sparse up to nearly full, over up to 300,000 rows */
            size_t span = 1 + (size_t)(rand() % 300000);
            int per_mille = 1 + rand() % 1000;
            sets[i] = malloc((span + 1) * sizeof *sets[i]);
            ns[i] = 0;
            for (size_t r = 0; r < span; r++)
                if (rand() % 1000 < per_mille)
                    sets[i][ns[i]++] = r;
            if (ns[i] == 0)
                sets[i][ns[i]++] = span;
        }
        round_trip(table, sets, ns, n);
        for (size_t i = 0; i < n; i++)
            free(sets[i]);
    }
    assert_int_equal(40, count_dv_files(table));
}

static void test_delta_dv_write__unsorted_rows_write_nothing(void **state)
{
    const char *table = *state;
    uint64_t bad[] = { 3, 3 };
    const uint64_t *sets[] = { bad };
    size_t ns[] = { 2 };
    mcdc_delta_dv dv;
    assert_int_equal(MCDC_EINVAL, mcdc_delta_dv_write(table, sets, ns, 1, &dv));
    assert_non_null(strstr(mcdc_error_last()->message, "ascending"));
    assert_int_equal(0, count_dv_files(table));
}

static void test_delta_dv_write__a_flipped_byte_fails_the_crc(void **state)
{
    const char *table = *state;
    uint64_t rows[] = { 1, 2, 3 };
    const uint64_t *sets[] = { rows };
    size_t ns[] = { 3 };
    mcdc_delta_dv dv;
    assert_int_equal(0, mcdc_delta_dv_write(table, sets, ns, 1, &dv));
    char *path = mcdc_delta__dv_path(table, &dv);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_storage_read(&b, NULL, path));
    b.ptr[dv.offset + 4 + 20] ^= 1;
    assert_int_equal(0, mcdc_storage_put(path, b.ptr, b.len));
    uint64_t *out;
    size_t n;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_dv_read(&out, &n, table, &dv));
    assert_non_null(strstr(mcdc_error_last()->message, "CRC"));
    mcdc_buf_dispose(&b);
    free(path);
    mcdc_delta_dv_clear(&dv);
}

typedef struct dv_commit {
    const mcdc_delta_file *old;
    mcdc_delta_file        next;
} dv_commit;

static int build_dv(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n_out,
                    void *payload)
{
    (void)snap;
    dv_commit *c = payload;
    mcdc_delta_action *a = calloc(2, sizeof *a);
    assert_int_equal(0, mcdc_delta_remove_of(&a[0], c->old, 1));
    a[1].kind = MCDC_DELTA_ACTION_ADD;
    assert_int_equal(0, mcdc_delta_file_copy(&a[1].u.file, &c->next));
    *out = a;
    *n_out = 2;
    return 0;
}

/* Commit @p dv onto the one file of table @p t (replacing its DV). */
static void commit_dv(const char *t, const mcdc_delta_dv *dv)
{
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(1, s->n_files);
    dv_commit c = { &s->files[0], { 0 } };
    assert_int_equal(0, mcdc_delta_file_copy(&c.next, &s->files[0]));
    mcdc_delta_dv_clear(&c.next.dv);
    c.next.has_dv = true;
    c.next.dv = *dv;
    c.next.dv.path_or_inline_dv = strdup(dv->path_or_inline_dv);
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "DELETE";
    o.read_pred.op = MCDC_DELTA_PRED_ALL;
    assert_int_equal(0, mcdc_delta_commit(t, build_dv, &c, &o, NULL));
    mcdc_delta_file_clear(&c.next);
    mcdc_delta_snapshot_free(s);
}

static void test_delta_dv_write__a_committed_dv_hides_its_rows_from_the_scan(void **state)
{
    char t[600];
    snprintf(t, sizeof t, "%s/t", (const char *)*state);
    mcdc_schema *sch = mcdc_schema_new();
    mcdc_schema_add(sch, "id", MCDC_TYPE_LONG, 0, 0, true);
    assert_int_equal(0, mcdc_delta_create(t, sch, NULL, 0, NULL, NULL));
    assert_int_equal(0, mcdc_delta_enable_deletion_vectors(t, NULL));
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_delta_writer *w;
    assert_int_equal(0, mcdc_delta_writer_open(&w, s, NULL));
    for (int64_t i = 0; i < 1000; i++) {
        mcdc_value v;
        memset(&v, 0, sizeof v);
        v.v.i = i * 10;
        assert_int_equal(0, mcdc_delta_writer_write(w, &v));
    }
    mcdc_delta_file *files;
    size_t nf;
    assert_int_equal(0, mcdc_delta_writer_finish(w, &files, &nf));
    mcdc_delta_writer_free(w);
    assert_int_equal(0, mcdc_delta_append(t, files, nf, NULL, NULL));
    mcdc_delta_files_free(files, nf);
    mcdc_delta_snapshot_free(s);

    /* first DV {1, 500}, then a second one replacing it {1, 500, 999} */
    uint64_t r1[] = { 1, 500 }, r2[] = { 1, 500, 999 };
    const uint64_t *sets[] = { r1 };
    size_t ns[] = { 2 };
    mcdc_delta_dv dv;
    assert_int_equal(0, mcdc_delta_dv_write(t, sets, ns, 1, &dv));
    commit_dv(t, &dv);
    mcdc_delta_dv_clear(&dv);
    sets[0] = r2;
    ns[0] = 3;
    assert_int_equal(0, mcdc_delta_dv_write(t, sets, ns, 1, &dv));
    commit_dv(t, &dv);
    mcdc_delta_dv_clear(&dv);

    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(1, s->n_files);
    assert_true(s->files[0].has_dv);
    assert_int_equal(3, s->files[0].dv.cardinality);
    mcdc_delta_scan *sc;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    assert_int_equal(0, mcdc_delta_scan_open(&sc, s, &so));
    assert_int_equal(-1, mcdc_delta_scan_row_index(sc));
    const mcdc_value *row;
    int64_t seen = 0;
    while (mcdc_delta_scan_next(sc, &row) == 1) {
        int64_t idx = mcdc_delta_scan_row_index(sc);
        assert_true(idx != 1 && idx != 500 && idx != 999);
        assert_int_equal(idx * 10, row[0].v.i);
        seen++;
    }
    assert_int_equal(997, seen);
    mcdc_delta_scan_free(sc);
    assert_string_equal("true", mcdc_delta_snapshot_config(s, "delta.enableDeletionVectors", ""));
    bool r = false, wf = false;
    for (size_t i = 0; i < s->protocol.n_reader_features; i++)
        r |= strcmp(s->protocol.reader_features[i], "deletionVectors") == 0;
    for (size_t i = 0; i < s->protocol.n_writer_features; i++)
        wf |= strcmp(s->protocol.writer_features[i], "deletionVectors") == 0;
    assert_true(r && wf);
    assert_int_equal(3, s->protocol.min_reader_version);
    assert_int_equal(7, s->protocol.min_writer_version);
    int64_t v = s->version;
    mcdc_delta_snapshot_free(s);
    /* enabling again writes nothing */
    assert_int_equal(0, mcdc_delta_enable_deletion_vectors(t, NULL));
    int64_t v2 = -1;
    assert_int_equal(0, mcdc_delta_latest_version(&v2, t));
    assert_int_equal(v, v2);
    mcdc_schema_free(sch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_dv_write__bitmap_of_five_is_the_hand_worked_bytes),
        cmocka_unit_test_setup_teardown(
            test_delta_dv_write__every_container_kind_and_64_bit_rows_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delta_dv_write__random_sets_read_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delta_dv_write__unsorted_rows_write_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delta_dv_write__a_flipped_byte_fails_the_crc, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_dv_write__a_committed_dv_hides_its_rows_from_the_scan, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
