/* Unit tests for delta/evolve.c and the reading of widened columns in delta/scan.c: which
 * type changes are widenings; a schema evolved in one commit (new columns, widened types
 * with delta.typeChanges and the typeWidening feature); a widening refused without
 * delta.enableTypeWidening and a narrowing refused always, with nothing written; rows of
 * files written before the widening read back in the new type. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    *state = testenv_tmpdir("evolve");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

static mcdc_column col(mcdc_type_id t, int p, int s)
{
    mcdc_column c = { NULL, t, p, s, true };
    return c;
}

static void test_delta_evolve__widenings_are_the_protocols(void **state)
{
    (void)state;
    struct { mcdc_column from, to; bool widens; } cases[] = {
        { col(MCDC_TYPE_BYTE, 0, 0), col(MCDC_TYPE_SHORT, 0, 0), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_LONG, 0, 0), true },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_INT, 0, 0), false },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), true },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), false },
        { col(MCDC_TYPE_FLOAT, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), true },
        { col(MCDC_TYPE_DATE, 0, 0), col(MCDC_TYPE_TIMESTAMP_NTZ, 0, 0), true },
        { col(MCDC_TYPE_DATE, 0, 0), col(MCDC_TYPE_TIMESTAMP, 0, 0), false },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 18, 2), true },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 12, 4), true },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 11, 4), false },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 9, 2), false },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DECIMAL, 10, 0), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DECIMAL, 10, 1), false },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_DECIMAL, 20, 0), true },
        { col(MCDC_TYPE_STRING, 0, 0), col(MCDC_TYPE_INT, 0, 0), false },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_STRING, 0, 0), false },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_INT, 0, 0), false }, /* the same type */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (mcdc_delta_type_widens(&cases[i].from, &cases[i].to) != cases[i].widens)
            fail_msg("case %zu: expected %s", i, cases[i].widens ? "a widening" : "none");
    }
}

static mcdc_schema *narrow_schema(void)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_INT, 0, 0, true);
    mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 10, 2, true);
    mcdc_schema_add(s, "ratio", MCDC_TYPE_FLOAT, 0, 0, true);
    mcdc_schema_add(s, "day", MCDC_TYPE_DATE, 0, 0, true);
    mcdc_schema_add(s, "n", MCDC_TYPE_SHORT, 0, 0, true);
    return s;
}

static mcdc_schema *wide_schema(void)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 14, 4, true);
    mcdc_schema_add(s, "ratio", MCDC_TYPE_DOUBLE, 0, 0, true);
    mcdc_schema_add(s, "day", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true);
    mcdc_schema_add(s, "n", MCDC_TYPE_DOUBLE, 0, 0, true);
    mcdc_schema_add(s, "note", MCDC_TYPE_STRING, 0, 0, true);
    return s;
}

/* Append one row of the table's current schema: id, amount = id + 0.25, ratio 0.5,
 * day = id days after 1970-01-01, n = id, note (when there) "x". */
static void append_row(const char *t, int64_t id)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_schema *fs = NULL;
    assert_int_equal(0, mcdc_delta_schema_to_flat(&fs, snap->schema));
    mcdc_value row[6];
    memset(row, 0, sizeof row);
    row[0].v.i = id;
    row[1].v.dec = (mcdc_int128)id * (fs->cols[1].scale == 2 ? 100 : 10000) +
                   (fs->cols[1].scale == 2 ? 25 : 2500);
    if (fs->cols[2].type == MCDC_TYPE_FLOAT)
        row[2].v.f = 0.5f;
    else
        row[2].v.d = 0.5;
    row[3].v.i = fs->cols[3].type == MCDC_TYPE_DATE ? id : id * 86400LL * 1000000LL;
    if (fs->cols[4].type == MCDC_TYPE_DOUBLE)
        row[4].v.d = (double)id;
    else
        row[4].v.i = id;
    row[5].v.s.ptr = "x";
    row[5].v.s.len = 1;
    mcdc_delta_writer *w;
    assert_int_equal(0, mcdc_delta_writer_open(&w, snap, NULL));
    assert_int_equal(0, mcdc_delta_writer_write(w, row));
    mcdc_delta_file *files;
    size_t n_files;
    assert_int_equal(0, mcdc_delta_writer_finish(w, &files, &n_files));
    mcdc_delta_writer_free(w);
    assert_int_equal(0, mcdc_delta_append(t, files, n_files, NULL, NULL));
    mcdc_delta_files_free(files, n_files);
    mcdc_schema_free(fs);
    mcdc_delta_snapshot_free(snap);
}

/* Rows as JSON text, one per line, in file order (sorted by id by the caller's ids). */
static char *rows_text(const char *t)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_delta_scan *scan;
    assert_int_equal(0, mcdc_delta_scan_open(&scan, snap, NULL));
    const mcdc_schema *s = mcdc_delta_scan_schema(scan);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    const mcdc_value *row;
    int rc;
    char *lines[8] = { 0 };
    while ((rc = mcdc_delta_scan_next(scan, &row)) == 1) {
        mcdc_buf l = MCDC_BUF_INIT(1 << 16);
        for (size_t i = 0; i < s->n_cols; i++) {
            mcdc_value_to_json(&l, &s->cols[i], &row[i]);
            mcdc_buf_putc(&l, i + 1 < s->n_cols ? ',' : '\n');
        }
        int64_t id = row[0].v.i;
        assert_true(id >= 0 && id < 8);
        lines[id] = mcdc_buf_detach(&l);
    }
    assert_int_equal(0, rc);
    for (int i = 0; i < 8; i++) {
        if (lines[i])
            mcdc_buf_puts(&b, lines[i]);
        free(lines[i]);
    }
    mcdc_delta_scan_free(scan);
    mcdc_delta_snapshot_free(snap);
    return mcdc_buf_detach(&b);
}

static int64_t latest(const char *t)
{
    int64_t v = -1;
    assert_int_equal(0, mcdc_delta_latest_version(&v, t));
    return v;
}

static void test_delta_evolve__widening_needs_the_property_and_reads_old_files(void **state)
{
    char t[600];
    snprintf(t, sizeof t, "%s/t", (const char *)*state);
    mcdc_schema *narrow = narrow_schema(), *wide = wide_schema();
    assert_int_equal(0, mcdc_delta_create(t, narrow, NULL, 0, NULL, NULL));
    append_row(t, 1);
    int64_t v0 = latest(t);

    /* without delta.enableTypeWidening: refused, nothing written */
    assert_int_equal(MCDC_ESCHEMA, mcdc_delta_append_evolving(t, NULL, 0, wide, NULL, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "delta.enableTypeWidening"));
    assert_int_equal(v0, latest(t));

    /* enabled once: the property and the feature in one commit; twice writes nothing */
    assert_int_equal(0, mcdc_delta_enable_type_widening(t, NULL));
    assert_int_equal(v0 + 1, latest(t));
    assert_int_equal(0, mcdc_delta_enable_type_widening(t, NULL));
    assert_int_equal(v0 + 1, latest(t));

    /* a narrowing stays refused */
    mcdc_schema *back = narrow_schema();
    back->cols[1].precision = 8;
    assert_int_equal(MCDC_ESCHEMA, mcdc_delta_append_evolving(t, NULL, 0, back, NULL, NULL));
    assert_int_equal(v0 + 1, latest(t));
    mcdc_schema_free(back);

    /* the widening: one metaData commit with every change recorded */
    assert_int_equal(0, mcdc_delta_append_evolving(t, NULL, 0, wide, NULL, NULL));
    assert_int_equal(v0 + 2, latest(t));
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    const char *ss = snap->metadata.schema_string;
    assert_non_null(strstr(ss, "{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":"
                               "{\"delta.typeChanges\":[{\"fromType\":\"integer\",\"toType\":\"long\"}]}}"));
    assert_non_null(strstr(ss, "\"fromType\":\"decimal(10,2)\",\"toType\":\"decimal(14,4)\""));
    assert_non_null(strstr(ss, "\"fromType\":\"date\",\"toType\":\"timestamp_ntz\""));
    assert_non_null(strstr(ss, "{\"name\":\"note\",\"type\":\"string\""));
    bool feature = false;
    for (size_t i = 0; i < snap->protocol.n_reader_features; i++)
        feature |= strcmp(snap->protocol.reader_features[i], "typeWidening") == 0;
    assert_true(feature);
    assert_int_equal(3, snap->protocol.min_reader_version);
    assert_int_equal(7, snap->protocol.min_writer_version);
    mcdc_delta_snapshot_free(snap);

    /* the same schema again is an ordinary append; old and new rows read in the new types */
    assert_int_equal(0, mcdc_delta_append_evolving(t, NULL, 0, wide, NULL, NULL));
    assert_int_equal(v0 + 2, latest(t));
    append_row(t, 2);
    char *text = rows_text(t);
    assert_string_equal("1,\"1.2500\",0.5,\"1970-01-02T00:00:00.000000\",1,null\n"
                        "2,\"2.2500\",0.5,\"1970-01-03T00:00:00.000000\",2,\"x\"\n", text);
    free(text);
    mcdc_schema_free(narrow);
    mcdc_schema_free(wide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_evolve__widenings_are_the_protocols),
        cmocka_unit_test_setup_teardown(test_delta_evolve__widening_needs_the_property_and_reads_old_files,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
