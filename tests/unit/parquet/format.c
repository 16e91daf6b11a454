/* Unit tests for parquet/format.c: metadata round trips, the worked example and hostile
 * footers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "parquet/format.h"

static mcdc_pq_bytes bytes(const char *s, size_t n)
{
    mcdc_pq_bytes b = { malloc(n ? n : 1), n, true };
    memcpy(b.ptr, s, n);
    return b;
}

/* A footer with one row group of two columns, stats, kv and every schema feature. */
static void build(mcdc_pq_file_metadata *m)
{
    memset(m, 0, sizeof *m);
    m->version = 1;
    m->num_rows = 3;
    m->n_schema = 4;
    m->schema = calloc(4, sizeof *m->schema);
    m->schema[0] = (mcdc_pq_schema_element){ .name = strdup("schema"), .has_num_children = true,
                                             .num_children = 3 };
    mcdc_pq_schema_element *e = &m->schema[1];
    e->name = strdup("amount");
    e->has_type = true; e->type = MCDC_PQ_FIXED_LEN_BYTE_ARRAY;
    e->has_type_length = true; e->type_length = 11;
    e->has_repetition = true; e->repetition = MCDC_PQ_OPTIONAL;
    e->has_converted = true; e->converted_type = MCDC_PQ_CT_DECIMAL;
    e->has_scale = true; e->scale = 2;
    e->has_precision = true; e->precision = 25;
    e->has_field_id = true; e->field_id = 17;
    e->logical = (mcdc_pq_logical_type){ .kind = MCDC_PQ_LT_DECIMAL, .dec_scale = 2, .dec_precision = 25 };
    e = &m->schema[2];
    e->name = strdup("ts");
    e->has_type = true; e->type = MCDC_PQ_INT64;
    e->has_repetition = true; e->repetition = MCDC_PQ_REQUIRED;
    e->logical = (mcdc_pq_logical_type){ .kind = MCDC_PQ_LT_TIMESTAMP, .is_adjusted_utc = false,
                                         .unit = MCDC_PQ_UNIT_MICROS };
    e = &m->schema[3];
    e->name = strdup("b");
    e->has_type = true; e->type = MCDC_PQ_INT32;
    e->has_repetition = true; e->repetition = MCDC_PQ_OPTIONAL;
    e->has_converted = true; e->converted_type = MCDC_PQ_CT_INT_8;
    e->logical = (mcdc_pq_logical_type){ .kind = MCDC_PQ_LT_INTEGER, .int_bit_width = 8,
                                         .int_signed = true };
    m->n_row_groups = 1;
    m->row_groups = calloc(1, sizeof *m->row_groups);
    mcdc_pq_row_group *g = m->row_groups;
    g->num_rows = 3;
    g->total_byte_size = 1234;
    g->has_file_offset = true; g->file_offset = 4;
    g->has_total_compressed_size = true; g->total_compressed_size = 999;
    g->has_ordinal = true; g->ordinal = 0;
    g->n_sorting_columns = 1;
    g->sorting_columns = calloc(1, sizeof *g->sorting_columns);
    g->sorting_columns[0] = (mcdc_pq_sorting_column){ 1, true, false };
    g->n_columns = 1;
    g->columns = calloc(1, sizeof *g->columns);
    mcdc_pq_column_chunk *c = g->columns;
    c->file_offset = 4;
    c->has_meta_data = true;
    mcdc_pq_column_meta *cm = &c->meta_data;
    cm->type = MCDC_PQ_FIXED_LEN_BYTE_ARRAY;
    cm->n_encodings = 3;
    cm->encodings = malloc(3 * sizeof(int32_t));
    cm->encodings[0] = MCDC_PQ_ENC_PLAIN;
    cm->encodings[1] = MCDC_PQ_ENC_RLE;
    cm->encodings[2] = MCDC_PQ_ENC_RLE_DICTIONARY;
    cm->n_path = 1;
    cm->path = malloc(sizeof(char *));
    cm->path[0] = strdup("amount");
    cm->codec = MCDC_PQ_CODEC_SNAPPY;
    cm->num_values = 3;
    cm->total_uncompressed_size = 200;
    cm->total_compressed_size = 150;
    cm->data_page_offset = 60;
    cm->has_dictionary_page_offset = true;
    cm->dictionary_page_offset = 4;
    cm->has_statistics = true;
    cm->statistics.has_null_count = true;
    cm->statistics.null_count = 1;
    cm->statistics.min_value = bytes("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 11);
    cm->statistics.max_value = bytes("\x00\x00\x00\x00\x00\x00\x00\x00\x00\xFF\xFF", 11);
    cm->statistics.has_is_max_value_exact = true;
    cm->statistics.is_max_value_exact = true;
    cm->n_encoding_stats = 2;
    cm->encoding_stats = calloc(2, sizeof *cm->encoding_stats);
    cm->encoding_stats[0] = (mcdc_pq_encoding_stats){ MCDC_PQ_PAGE_DICTIONARY, MCDC_PQ_ENC_PLAIN, 1 };
    cm->encoding_stats[1] = (mcdc_pq_encoding_stats){ MCDC_PQ_PAGE_DATA, MCDC_PQ_ENC_RLE_DICTIONARY, 1 };
    m->n_kv = 2;
    m->kv = calloc(2, sizeof *m->kv);
    m->kv[0] = (mcdc_pq_key_value){ strdup("k1"), strdup("v1"), 2 };
    m->kv[1] = (mcdc_pq_key_value){ strdup("k2"), NULL, 0 };
    m->created_by = strdup("mssql-cdc version 0.1.0 (build mcdc)");
    m->has_column_orders = true;
    m->n_column_orders = 3;
    m->column_orders = calloc(3, sizeof(int32_t));
    m->column_orders[0] = m->column_orders[1] = m->column_orders[2] = 1;
}

static void test_parquet_format__file_metadata_round_trips(void **state)
{
    (void)state;
    mcdc_pq_file_metadata m, p;
    build(&m);
    mcdc_buf a = MCDC_BUF_INIT(1 << 20), b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_pq__write_file_metadata(&a, &m));
    assert_int_equal(0, mcdc_pq__parse_file_metadata(&p, (uint8_t *)a.ptr, a.len, 100));
    /* Writing what was parsed gives the same bytes: nothing was lost or invented. */
    assert_int_equal(0, mcdc_pq__write_file_metadata(&b, &p));
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.ptr, b.ptr, a.len);
    /* Spot checks of the parsed fields. */
    assert_int_equal(4, p.n_schema);
    assert_string_equal("amount", p.schema[1].name);
    assert_int_equal(MCDC_PQ_LT_DECIMAL, p.schema[1].logical.kind);
    assert_int_equal(25, p.schema[1].logical.dec_precision);
    assert_int_equal(11, p.schema[1].type_length);
    assert_int_equal(MCDC_PQ_LT_TIMESTAMP, p.schema[2].logical.kind);
    assert_int_equal(MCDC_PQ_UNIT_MICROS, p.schema[2].logical.unit);
    assert_false(p.schema[2].logical.is_adjusted_utc);
    assert_int_equal(8, p.schema[3].logical.int_bit_width);
    assert_true(p.schema[3].logical.int_signed);
    const mcdc_pq_column_meta *cm = &p.row_groups[0].columns[0].meta_data;
    assert_int_equal(3, cm->n_encodings);
    assert_int_equal(MCDC_PQ_ENC_RLE_DICTIONARY, cm->encodings[2]);
    assert_string_equal("amount", cm->path[0]);
    assert_int_equal(1, cm->statistics.null_count);
    assert_int_equal(11, cm->statistics.max_value.len);
    assert_int_equal(0xFF, cm->statistics.max_value.ptr[10]);
    assert_false(cm->statistics.min.set);
    assert_true(p.row_groups[0].sorting_columns[0].descending);
    assert_null(p.kv[1].value);
    assert_string_equal("v1", p.kv[0].value);
    assert_string_equal(m.created_by, p.created_by);
    assert_false(p.is_encrypted);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_pq__file_metadata_dispose(&p);
    mcdc_buf_dispose(&a);
    mcdc_buf_dispose(&b);
}

/* The worked example of format.h. */
static const uint8_t page_example[] = { 0x15, 0x00, 0x15, 0xD8, 0x0C, 0x15, 0xB0, 0x09, 0x2C,
                                        0x15, 0xC8, 0x01, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06,
                                        0x00, 0x00 };

static void test_parquet_format__page_header_matches_the_worked_example(void **state)
{
    (void)state;
    mcdc_pq_page_header h = { .type = MCDC_PQ_PAGE_DATA, .uncompressed_page_size = 812,
                              .compressed_page_size = 600, .has_data_page_header = true };
    h.data_page_header = (mcdc_pq_data_page_header){ 100, MCDC_PQ_ENC_PLAIN, MCDC_PQ_ENC_RLE,
                                                     MCDC_PQ_ENC_RLE };
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_pq__write_page_header(&b, &h));
    assert_int_equal(sizeof page_example, b.len);
    assert_memory_equal(page_example, b.ptr, b.len);
    /* Parse it back with trailing body bytes after it. */
    mcdc_buf_put(&b, "body", 4);
    mcdc_pq_page_header p;
    size_t used;
    assert_int_equal(0, mcdc_pq__parse_page_header(&p, &used, (uint8_t *)b.ptr, b.len, 0));
    assert_int_equal(sizeof page_example, used);
    assert_int_equal(812, p.uncompressed_page_size);
    assert_int_equal(100, p.data_page_header.num_values);
    assert_false(p.has_crc);
    mcdc_pq__page_header_dispose(&p);
    mcdc_buf_dispose(&b);
}

static void test_parquet_format__v2_and_dictionary_headers_round_trip(void **state)
{
    (void)state;
    mcdc_pq_page_header h = { .type = MCDC_PQ_PAGE_DATA_V2, .uncompressed_page_size = 10,
                              .compressed_page_size = 8, .has_crc = true, .crc = -5,
                              .has_data_page_header_v2 = true };
    h.data_page_header_v2 = (mcdc_pq_data_page_header_v2){ 5, 1, 5, MCDC_PQ_ENC_PLAIN, 2, 0, false };
    h.data_page_header_v2.has_statistics = true;
    h.data_page_header_v2.statistics.has_null_count = true;
    h.data_page_header_v2.statistics.null_count = 1;
    h.data_page_header_v2.statistics.max_value = bytes("zz", 2);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_pq__write_page_header(&b, &h));
    mcdc_pq_page_header p;
    size_t used;
    assert_int_equal(0, mcdc_pq__parse_page_header(&p, &used, (uint8_t *)b.ptr, b.len, 0));
    assert_int_equal(b.len, used);
    assert_true(p.has_crc);
    assert_int_equal(-5, p.crc);
    assert_false(p.data_page_header_v2.is_compressed);
    assert_int_equal(2, p.data_page_header_v2.definition_levels_byte_length);
    assert_memory_equal("zz", p.data_page_header_v2.statistics.max_value.ptr, 2);
    mcdc_pq__page_header_dispose(&p);
    mcdc_pq__page_header_dispose(&h);

    mcdc_buf_clear(&b);
    mcdc_pq_page_header d = { .type = MCDC_PQ_PAGE_DICTIONARY, .uncompressed_page_size = 4,
                              .compressed_page_size = 4, .has_dictionary_page_header = true };
    d.dictionary_page_header = (mcdc_pq_dictionary_page_header){ 1, MCDC_PQ_ENC_PLAIN, true, false };
    assert_int_equal(0, mcdc_pq__write_page_header(&b, &d));
    assert_int_equal(0, mcdc_pq__parse_page_header(&p, &used, (uint8_t *)b.ptr, b.len, 0));
    assert_int_equal(1, p.dictionary_page_header.num_values);
    assert_true(p.dictionary_page_header.has_is_sorted);
    assert_false(p.dictionary_page_header.is_sorted);
    /* Data page v2 without is_compressed means compressed. */
    mcdc_buf_dispose(&b);
}

static void test_parquet_format__every_truncated_footer_fails_cleanly(void **state)
{
    (void)state;
    mcdc_pq_file_metadata m, p;
    build(&m);
    mcdc_buf a = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_pq__write_file_metadata(&a, &m));
    for (size_t n = 0; n < a.len; n++) {
        int rc = mcdc_pq__parse_file_metadata(&p, (uint8_t *)a.ptr, n, 0);
        assert_int_equal(MCDC_ECORRUPT, rc);
        assert_non_null(strstr(mcdc_error_last()->message, "footer at byte "));
        assert_null(p.schema);
    }
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_buf_dispose(&a);
}

static void test_parquet_format__flipped_bytes_never_crash(void **state)
{
    (void)state;
    mcdc_pq_file_metadata m, p;
    build(&m);
    mcdc_buf a = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_pq__write_file_metadata(&a, &m));
    uint8_t *copy = malloc(a.len);
    uint32_t seed = 12345;
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(copy, a.ptr, a.len);
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 8) % a.len] ^= (uint8_t)(seed >> 24 | 1);
        }
        if (mcdc_pq__parse_file_metadata(&p, copy, a.len, 0) == 0)
            mcdc_pq__file_metadata_dispose(&p);
    }
    free(copy);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_buf_dispose(&a);
}

static void test_parquet_format__missing_fields_and_encryption_are_reported(void **state)
{
    (void)state;
    /* struct { 1: i32 1 } : no schema */
    const uint8_t only_version[] = { 0x15, 0x02, 0x00 };
    mcdc_pq_file_metadata p;
    assert_int_equal(MCDC_ECORRUPT, mcdc_pq__parse_file_metadata(&p, only_version, 3, 50));
    assert_string_equal("footer at byte 53: FileMetaData lacks schema", mcdc_error_last()->message);
    /* version, empty schema, num_rows 0, no row groups, encryption_algorithm {} */
    const uint8_t enc[] = { 0x15, 0x02, 0x19, 0x0C, 0x16, 0x00, 0x19, 0x0C, 0x4C, 0x00, 0x00 };
    assert_int_equal(0, mcdc_pq__parse_file_metadata(&p, enc, sizeof enc, 0));
    assert_true(p.is_encrypted);
    mcdc_pq__file_metadata_dispose(&p);
    /* Page header for a DATA_PAGE without its data_page_header. */
    const uint8_t bad_page[] = { 0x15, 0x00, 0x15, 0x02, 0x15, 0x02, 0x00 };
    mcdc_pq_page_header h;
    size_t used;
    assert_int_equal(MCDC_ECORRUPT, mcdc_pq__parse_page_header(&h, &used, bad_page, sizeof bad_page, 9));
    assert_non_null(strstr(mcdc_error_last()->message, "DATA_PAGE page without its header struct"));
    /* Negative sizes. */
    const uint8_t neg[] = { 0x15, 0x04, 0x15, 0x01, 0x15, 0x02, 0x00 };
    assert_int_equal(MCDC_ECORRUPT, mcdc_pq__parse_page_header(&h, &used, neg, sizeof neg, 0));
    assert_non_null(strstr(mcdc_error_last()->message, "negative"));
}

static void test_parquet_format__unknown_logical_type_is_marked(void **state)
{
    (void)state;
    /* version 1, schema [ {name "x", logicalType { 40: {} }} ], num_rows 0, row_groups [] */
    const uint8_t f[] = { 0x15, 0x02, 0x19, 0x1C, 0x48, 0x01, 'x', 0x6C, 0x0C, 0x50, 0x00, 0x00,
                          0x00, 0x16, 0x00, 0x19, 0x0C, 0x00 };
    mcdc_pq_file_metadata p;
    assert_int_equal(0, mcdc_pq__parse_file_metadata(&p, f, sizeof f, 0));
    assert_int_equal(MCDC_PQ_LT_UNSUPPORTED, p.schema[0].logical.kind);
    mcdc_pq__file_metadata_dispose(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_format__file_metadata_round_trips),
        cmocka_unit_test(test_parquet_format__page_header_matches_the_worked_example),
        cmocka_unit_test(test_parquet_format__v2_and_dictionary_headers_round_trip),
        cmocka_unit_test(test_parquet_format__every_truncated_footer_fails_cleanly),
        cmocka_unit_test(test_parquet_format__flipped_bytes_never_crash),
        cmocka_unit_test(test_parquet_format__missing_fields_and_encryption_are_reported),
        cmocka_unit_test(test_parquet_format__unknown_logical_type_is_marked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
