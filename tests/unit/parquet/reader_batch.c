/* Unit tests for mcdc_parquet_reader_next_batch (parquet/reader.c): batches give the rows
 * mcdc_parquet_reader_next gives, cell for cell, with the same end and the same error,
 * on every file of parquet-testing (but one too slow to assemble) and on a file whose fifth row holds a decimal that
 * cannot be read (the batch stops before it, and the error comes on the next call). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/parquet.h"
#include "parquet/format.h"

/* Equal cells of a column of type @p t. */
static void assert_cell(const mcdc_column *c, const mcdc_value *a, const mcdc_value *b,
                        const char *file, size_t row)
{
    if (a->is_null != b->is_null)
        fail_msg("%s: row %zu, column %s: null differs", file, row, c->name);
    if (a->is_null)
        return;
    bool same;
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: same = a->v.b == b->v.b; break;
    case MCDC_TYPE_FLOAT: same = memcmp(&a->v.f, &b->v.f, sizeof a->v.f) == 0; break;
    case MCDC_TYPE_DOUBLE: same = memcmp(&a->v.d, &b->v.d, sizeof a->v.d) == 0; break;
    case MCDC_TYPE_DECIMAL: same = a->v.dec == b->v.dec; break;
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        same = a->v.s.len == b->v.s.len && (a->v.s.len == 0 ||
                                             memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0);
        break;
    default: same = a->v.i == b->v.i; break;
    }
    if (!same)
        fail_msg("%s: row %zu, column %s: values differ", file, row, c->name);
}

/* Read @p a row by row and @p b in batches of varying sizes; they must agree. Returns
 * the rows read (or the error both ended with). */
static long compare_reads(mcdc_parquet_reader *a, mcdc_parquet_reader *b, const char *file)
{
    static const size_t sizes[] = { 1, 2, 3, 7, 4096, 64 };
    const mcdc_schema *s = mcdc_parquet_reader_schema(a);
    size_t w = s->n_cols;
    long rows = 0;
    for (size_t it = 0;; it++) {
        const mcdc_value *batch, *row;
        size_t n = 99;
        int rb = mcdc_parquet_reader_next_batch(b, sizes[it % 6], &batch, &n);
        if (rb == 1) {
            assert_true(n >= 1 && n <= sizes[it % 6]);
            for (size_t k = 0; k < n; k++, rows++) {
                int ra = mcdc_parquet_reader_next(a, &row);
                if (ra != 1)
                    fail_msg("%s: row %ld: the row reader says %d, a batch holds it", file, rows,
                             ra);
                for (size_t j = 0; j < w; j++)
                    assert_cell(&s->cols[j], &row[j], &batch[k * w + j], file, (size_t)rows);
            }
            continue;
        }
        assert_int_equal(0, n);
        char msg[sizeof mcdc_error_last()->message];
        snprintf(msg, sizeof msg, "%s", rb < 0 ? mcdc_error_last()->message : "");
        int ra = mcdc_parquet_reader_next(a, &row);
        if (ra != rb)
            fail_msg("%s: after %ld rows the row reader says %d, the batch reader %d (%s)", file,
                     rows, ra, rb, msg);
        if (rb < 0)
            assert_string_equal(msg, mcdc_error_last()->message);
        /* both stay where they ended */
        assert_int_equal(rb, mcdc_parquet_reader_next_batch(b, 8, &batch, &n));
        return rb < 0 ? rb : rows;
    }
}

static void test_parquet_reader_batch__same_rows_as_row_reader_on_parquet_testing(void **state)
{
    (void)state;
    const char *src = getenv("MCDC_SRC");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/data/parquet-testing", src ? src : ".");
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("no %s", dir);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 8 || strcmp(e->d_name + l - 8, ".parquet") != 0)
            continue;
        /* a map of two 1 GiB-ish strings: a minute to assemble, and nested columns come
         * one row a batch through the row reader anyway */
        if (strncmp(e->d_name, "large_string_map", 16) == 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        mcdc_parquet_reader *a = NULL, *b = NULL;
        if (mcdc_parquet_reader_open(&a, path, NULL) < 0)
            continue; /* refused at open: nothing to compare */
        assert_int_equal(0, mcdc_parquet_reader_open(&b, path, NULL));
        compare_reads(a, b, e->d_name);
        mcdc_parquet_reader_free(a);
        mcdc_parquet_reader_free(b);
        files++;
    }
    closedir(d);
    assert_true(files > 50);
}

/* ---- a file with a bad cell --------------------------------------------------------- */

static int64_t page(mcdc_buf *f, const void *body, size_t len, int n_values)
{
    int64_t off = (int64_t)f->len;
    mcdc_pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = MCDC_PQ_PAGE_DATA;
    h.uncompressed_page_size = h.compressed_page_size = (int32_t)len;
    h.has_data_page_header = true;
    h.data_page_header.num_values = n_values;
    h.data_page_header.encoding = MCDC_PQ_ENC_PLAIN;
    h.data_page_header.definition_level_encoding = MCDC_PQ_ENC_RLE;
    h.data_page_header.repetition_level_encoding = MCDC_PQ_ENC_RLE;
    assert_int_equal(0, mcdc_pq__write_page_header(f, &h));
    mcdc_buf_put(f, body, len);
    return off;
}

static void put_u32(mcdc_buf *b, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    mcdc_buf_put(b, x, 4);
}

/* One row group of 6 rows: id INT32 required 0..5, d BYTE_ARRAY DECIMAL(38,0) required
 * with 1-byte values 0..5 except row 4's, 17 bytes that do not fit 128 bits. */
static void build(mcdc_buf *f)
{
    mcdc_buf_put(f, "PAR1", 4);
    static char *id_path[] = { "id" }, *d_path[] = { "d" };
    int32_t enc[] = { MCDC_PQ_ENC_PLAIN };
    mcdc_pq_column_chunk cols[2];
    memset(cols, 0, sizeof cols);
    int32_t ids[6] = { 0, 1, 2, 3, 4, 5 };
    mcdc_buf dv = MCDC_BUF_INIT(1 << 10);
    for (int i = 0; i < 6; i++) {
        if (i == 4) {
            put_u32(&dv, 17);
            mcdc_buf_putc(&dv, 1);
            for (int k = 0; k < 16; k++)
                mcdc_buf_putc(&dv, 0);
        } else {
            put_u32(&dv, 1);
            mcdc_buf_putc(&dv, (char)i);
        }
    }
    for (int c = 0; c < 2; c++) {
        mcdc_pq_column_meta *m = &cols[c].meta_data;
        cols[c].has_meta_data = true;
        m->type = c == 0 ? MCDC_PQ_INT32 : MCDC_PQ_BYTE_ARRAY;
        m->encodings = enc;
        m->n_encodings = 1;
        m->path = c == 0 ? id_path : d_path;
        m->n_path = 1;
        m->codec = MCDC_PQ_CODEC_UNCOMPRESSED;
        m->num_values = 6;
        int64_t start = (int64_t)f->len;
        m->data_page_offset = c == 0 ? page(f, ids, sizeof ids, 6) : page(f, dv.ptr, dv.len, 6);
        m->total_compressed_size = m->total_uncompressed_size = (int64_t)f->len - start;
        cols[c].file_offset = start;
    }
    mcdc_buf_dispose(&dv);
    mcdc_pq_row_group rg;
    memset(&rg, 0, sizeof rg);
    rg.columns = cols;
    rg.n_columns = 2;
    rg.num_rows = 6;
    rg.total_byte_size = 100;
    mcdc_pq_schema_element schema[3];
    memset(schema, 0, sizeof schema);
    schema[0].name = "schema";
    schema[0].has_num_children = true;
    schema[0].num_children = 2;
    schema[1].name = "id";
    schema[1].has_type = true;
    schema[1].type = MCDC_PQ_INT32;
    schema[1].has_repetition = true;
    schema[1].repetition = MCDC_PQ_REQUIRED;
    schema[2].name = "d";
    schema[2].has_type = true;
    schema[2].type = MCDC_PQ_BYTE_ARRAY;
    schema[2].has_repetition = true;
    schema[2].repetition = MCDC_PQ_REQUIRED;
    schema[2].has_converted = true;
    schema[2].converted_type = MCDC_PQ_CT_DECIMAL;
    schema[2].has_precision = schema[2].has_scale = true;
    schema[2].precision = 38;
    schema[2].logical.kind = MCDC_PQ_LT_DECIMAL;
    schema[2].logical.dec_precision = 38;
    mcdc_pq_file_metadata md;
    memset(&md, 0, sizeof md);
    md.version = 1;
    md.schema = schema;
    md.n_schema = 3;
    md.num_rows = 6;
    md.row_groups = &rg;
    md.n_row_groups = 1;
    md.created_by = "unit test";
    size_t foot = f->len;
    assert_int_equal(0, mcdc_pq__write_file_metadata(f, &md));
    put_u32(f, (uint32_t)(f->len - foot));
    mcdc_buf_put(f, "PAR1", 4);
}

static void check_bad_cell(const char *const *order)
{
    mcdc_buf f = MCDC_BUF_INIT(1 << 20);
    build(&f);
    mcdc_parquet_reader *a, *b;
    assert_int_equal(0, mcdc_parquet_reader_open_mem(&a, f.ptr, f.len, "t.parquet", NULL));
    assert_int_equal(0, mcdc_parquet_reader_open_mem(&b, f.ptr, f.len, "t.parquet", NULL));
    if (order) {
        assert_int_equal(0, mcdc_parquet_reader_select(a, order, 2));
        assert_int_equal(0, mcdc_parquet_reader_select(b, order, 2));
    }
    /* the batch stops before row 4 */
    const mcdc_value *rows;
    size_t n;
    assert_int_equal(1, mcdc_parquet_reader_next_batch(b, 100, &rows, &n));
    assert_int_equal(4, n);
    size_t di = order ? 0 : 1, ii = 1 - di;
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal((int64_t)k, rows[k * 2 + ii].v.i);
        assert_true(rows[k * 2 + di].v.dec == (mcdc_int128)k);
    }
    assert_int_equal(MCDC_ECORRUPT, mcdc_parquet_reader_next_batch(b, 100, &rows, &n));
    assert_int_equal(0, n);
    assert_non_null(strstr(mcdc_error_last()->message, "t.parquet: column d"));
    assert_non_null(strstr(mcdc_error_last()->message, "decimal of 17 bytes does not fit 128 bits"));
    mcdc_parquet_reader_free(b);
    assert_int_equal(0, mcdc_parquet_reader_open_mem(&b, f.ptr, f.len, "t.parquet", NULL));
    if (order)
        assert_int_equal(0, mcdc_parquet_reader_select(b, order, 2));
    assert_int_equal(MCDC_ECORRUPT, compare_reads(a, b, "t.parquet"));
    mcdc_parquet_reader_free(a);
    mcdc_parquet_reader_free(b);
    mcdc_buf_dispose(&f);
}

static void test_parquet_reader_batch__stops_before_a_bad_cell_and_gives_back_entries(void **state)
{
    (void)state;
    check_bad_cell(NULL);
}

static void test_parquet_reader_batch__bad_cell_in_the_first_column(void **state)
{
    (void)state;
    static const char *const order[] = { "d", "id" };
    check_bad_cell(order);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_reader_batch__same_rows_as_row_reader_on_parquet_testing),
        cmocka_unit_test(test_parquet_reader_batch__stops_before_a_bad_cell_and_gives_back_entries),
        cmocka_unit_test(test_parquet_reader_batch__bad_cell_in_the_first_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
