/* Unit tests for the Parquet reader (parquet/reader.c, column.c, assemble.c, meta.c) on
 * files built byte by byte here: the flat and JSON row APIs, projection, row-group
 * skipping, and every kind of damage the reader must name (bad magic, encryption, footer
 * length, bad Thrift, page past the chunk, CRC, dictionary index, decompression, short
 * columns), plus every truncation of a valid file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include "mcdc/error.h"
#include "mcdc/parquet.h"
#include "parquet/format.h"

#define HAS(msg) assert_non_null(strstr(mcdc_error_last()->message, (msg)))

/* Damage to build into the file. */
enum {
    OK = 0,
    WITH_CRC = 1,      /* pages carry a correct CRC */
    BAD_CRC = 2,       /* the first page's CRC is off by one */
    PAGE_TOO_BIG = 4,  /* the first page claims more bytes than its chunk holds */
    BAD_DICT_INDEX = 8,/* row group 0's name page indexes entry 5 of a 2-entry dictionary */
    BAD_SNAPPY = 16,   /* the id column claims SNAPPY but holds plain bytes */
    SHORT_COLUMN = 32, /* row group 1 says 4 rows, its columns hold 3 */
    HUGE_GZIP = 64,    /* the id column claims GZIP and its first page 2^31-1 bytes */
};

static void put_u32(mcdc_buf *b, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    mcdc_buf_put(b, x, 4);
}

/* Append one page (header + body) and return its file offset. */
static int64_t page(mcdc_buf *f, int type, const void *body, size_t len, int n_values,
                    int encoding, int flags, int32_t claim_extra)
{
    int64_t off = (int64_t)f->len;
    mcdc_pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = type;
    h.uncompressed_page_size = (flags & HUGE_GZIP) ? INT32_MAX : (int32_t)len;
    h.compressed_page_size = (int32_t)len + claim_extra;
    if (flags & (WITH_CRC | BAD_CRC)) {
        h.has_crc = true;
        h.crc = (int32_t)(crc32(0, body, (uInt)len) + ((flags & BAD_CRC) ? 1 : 0));
    }
    if (type == MCDC_PQ_PAGE_DICTIONARY) {
        h.has_dictionary_page_header = true;
        h.dictionary_page_header.num_values = n_values;
        h.dictionary_page_header.encoding = MCDC_PQ_ENC_PLAIN;
    } else {
        h.has_data_page_header = true;
        h.data_page_header.num_values = n_values;
        h.data_page_header.encoding = encoding;
        h.data_page_header.definition_level_encoding = MCDC_PQ_ENC_RLE;
        h.data_page_header.repetition_level_encoding = MCDC_PQ_ENC_RLE;
    }
    assert_int_equal(0, mcdc_pq__write_page_header(f, &h));
    mcdc_buf_put(f, body, len);
    return off;
}

static mcdc_pq_bytes le32(int32_t v)
{
    mcdc_pq_bytes b = { malloc(4), 4, true };
    memcpy(b.ptr, &v, 4);
    return b;
}

/* Two row groups of (id INT32 required, name UTF8 optional, dictionary-encoded):
 * rows (1,"a") (2,NULL) (3,"b") and (10,"c") (11,"c") (12,NULL); stats on id. */
static void build(mcdc_buf *f, int flags)
{
    mcdc_buf_put(f, "PAR1", 4);
    static char *id_path[] = { "id" }, *name_path[] = { "name" };
    int32_t enc_id[] = { MCDC_PQ_ENC_PLAIN }, enc_name[] = { MCDC_PQ_ENC_PLAIN, MCDC_PQ_ENC_RLE,
                                                             MCDC_PQ_ENC_RLE_DICTIONARY };
    mcdc_pq_column_chunk cols[2][2];
    mcdc_pq_row_group rgs[2];
    memset(cols, 0, sizeof cols);
    memset(rgs, 0, sizeof rgs);
    for (int g = 0; g < 2; g++) {
        int32_t base = g == 0 ? 1 : 10;
        int32_t ids[3] = { base, base + 1, base + 2 };
        mcdc_pq_column_meta *m = &cols[g][0].meta_data;
        cols[g][0].has_meta_data = true;
        m->type = MCDC_PQ_INT32;
        m->encodings = enc_id;
        m->n_encodings = 1;
        m->path = id_path;
        m->n_path = 1;
        m->codec = (flags & BAD_SNAPPY)   ? MCDC_PQ_CODEC_SNAPPY
                   : (flags & HUGE_GZIP) ? MCDC_PQ_CODEC_GZIP
                                         : MCDC_PQ_CODEC_UNCOMPRESSED;
        m->num_values = 3;
        int64_t start = (int64_t)f->len;
        m->data_page_offset = page(f, MCDC_PQ_PAGE_DATA, ids, sizeof ids, 3, MCDC_PQ_ENC_PLAIN,
                                   g == 0 ? flags : flags & WITH_CRC,
                                   (g == 0 && (flags & PAGE_TOO_BIG)) ? 100 : 0);
        m->total_compressed_size = m->total_uncompressed_size = (int64_t)f->len - start;
        m->has_statistics = true;
        m->statistics.min_value = le32(base);
        m->statistics.max_value = le32(base + 2);
        m->statistics.has_null_count = true;
        cols[g][0].file_offset = start;

        m = &cols[g][1].meta_data;
        cols[g][1].has_meta_data = true;
        m->type = MCDC_PQ_BYTE_ARRAY;
        m->encodings = enc_name;
        m->n_encodings = 3;
        m->path = name_path;
        m->n_path = 1;
        m->codec = MCDC_PQ_CODEC_UNCOMPRESSED;
        m->num_values = 3;
        start = (int64_t)f->len;
        static const uint8_t dict0[] = { 1, 0, 0, 0, 'a', 1, 0, 0, 0, 'b' };
        static const uint8_t dict1[] = { 1, 0, 0, 0, 'c' };
        /* def levels 1,0,1 (len 2: bit-packed 0b101); indices width 1: 0,1 */
        static const uint8_t data0[] = { 2, 0, 0, 0, 0x03, 0x05, 0x01, 0x03, 0x02 };
        /* def levels 1,1,0; indices of width 0 */
        static const uint8_t data1[] = { 2, 0, 0, 0, 0x03, 0x03, 0x00, 0x03 };
        /* indices width 3: 5, 0 */
        static const uint8_t data_bad[] = { 2, 0, 0, 0, 0x03, 0x05, 0x03, 0x03, 0x05, 0, 0 };
        m->has_dictionary_page_offset = true;
        m->dictionary_page_offset =
            page(f, MCDC_PQ_PAGE_DICTIONARY, g == 0 ? dict0 : dict1, g == 0 ? sizeof dict0 : sizeof dict1,
                 g == 0 ? 2 : 1, 0, flags & WITH_CRC, 0);
        const uint8_t *d = g == 0 ? ((flags & BAD_DICT_INDEX) ? data_bad : data0) : data1;
        size_t dl = g == 0 ? ((flags & BAD_DICT_INDEX) ? sizeof data_bad : sizeof data0) : sizeof data1;
        m->data_page_offset = page(f, MCDC_PQ_PAGE_DATA, d, dl, 3, MCDC_PQ_ENC_RLE_DICTIONARY,
                                   flags & WITH_CRC, 0);
        m->total_compressed_size = m->total_uncompressed_size = (int64_t)f->len - start;
        cols[g][1].file_offset = start;
        rgs[g].columns = cols[g];
        rgs[g].n_columns = 2;
        rgs[g].num_rows = (g == 1 && (flags & SHORT_COLUMN)) ? 4 : 3;
        rgs[g].total_byte_size = 100;
    }
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
    schema[2].name = "name";
    schema[2].has_type = true;
    schema[2].type = MCDC_PQ_BYTE_ARRAY;
    schema[2].has_repetition = true;
    schema[2].repetition = MCDC_PQ_OPTIONAL;
    schema[2].has_converted = true;
    schema[2].converted_type = MCDC_PQ_CT_UTF8;
    schema[2].logical.kind = MCDC_PQ_LT_STRING;
    mcdc_pq_file_metadata md;
    memset(&md, 0, sizeof md);
    md.version = 1;
    md.schema = schema;
    md.n_schema = 3;
    md.num_rows = 6;
    md.row_groups = rgs;
    md.n_row_groups = 2;
    md.created_by = "unit test";
    size_t foot = f->len;
    assert_int_equal(0, mcdc_pq__write_file_metadata(f, &md));
    put_u32(f, (uint32_t)(f->len - foot));
    mcdc_buf_put(f, "PAR1", 4);
    for (int g = 0; g < 2; g++) {
        free(cols[g][0].meta_data.statistics.min_value.ptr);
        free(cols[g][0].meta_data.statistics.max_value.ptr);
    }
}

static int open_built(mcdc_parquet_reader **r, mcdc_buf *f, int flags)
{
    *f = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
    build(f, flags);
    return mcdc_parquet_reader_open_mem(r, f->ptr, f->len, "t.parquet", NULL);
}

/* Read all rows as cells; return the count, or the error. */
static int drain(mcdc_parquet_reader *r)
{
    const mcdc_value *row;
    int rc, n = 0;
    while ((rc = mcdc_parquet_reader_next(r, &row)) == 1)
        n++;
    return rc < 0 ? rc : n;
}

static void test_parquet_reader__flat_rows_and_types(void **state)
{
    (void)state;
    mcdc_buf f;
    mcdc_parquet_reader *r;
    assert_int_equal(0, open_built(&r, &f, WITH_CRC));
    assert_int_equal(6, mcdc_parquet_reader_num_rows(r));
    assert_int_equal(2, mcdc_parquet_reader_num_row_groups(r));
    const mcdc_schema *s = mcdc_parquet_reader_schema(r);
    assert_int_equal(2, s->n_cols);
    assert_string_equal("id", s->cols[0].name);
    assert_int_equal(MCDC_TYPE_INT, s->cols[0].type);
    assert_false(s->cols[0].nullable);
    assert_int_equal(MCDC_TYPE_STRING, s->cols[1].type);
    assert_true(s->cols[1].nullable);
    static const int ids[] = { 1, 2, 3, 10, 11, 12 };
    static const char *names[] = { "a", NULL, "b", "c", "c", NULL };
    const mcdc_value *row;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(1, mcdc_parquet_reader_next(r, &row));
        assert_false(row[0].is_null);
        assert_int_equal(ids[i], row[0].v.i);
        if (!names[i]) {
            assert_true(row[1].is_null);
        } else {
            assert_false(row[1].is_null);
            assert_int_equal(1, row[1].v.s.len);
            assert_memory_equal(names[i], row[1].v.s.ptr, 1);
        }
    }
    assert_int_equal(0, mcdc_parquet_reader_next(r, &row));
    assert_int_equal(0, mcdc_parquet_reader_next(r, &row));
    mcdc_parquet_reader_free(r);
    mcdc_buf_dispose(&f);
}

static void test_parquet_reader__json_rows_projection_and_fd(void **state)
{
    (void)state;
    mcdc_buf f = MCDC_BUF_INIT(1 << 20);
    build(&f, OK);
    char path[] = "/tmp/mcdc_reader_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal((ssize_t)f.len, write(fd, f.ptr, f.len));
    mcdc_parquet_reader *r;
    assert_int_equal(0, mcdc_parquet_reader_open(&r, path, NULL));
    const char *sel[] = { "NAME" }; /* case-insensitive fallback */
    assert_int_equal(0, mcdc_parquet_reader_select(r, sel, 1));
    json_t *row;
    assert_int_equal(1, mcdc_parquet_reader_next_json(r, &row));
    char *text = json_dumps(row, JSON_COMPACT);
    assert_string_equal("{\"name\":\"a\"}", text);
    free(text);
    json_decref(row);
    assert_int_equal(1, mcdc_parquet_reader_next_json(r, &row));
    assert_true(json_is_null(json_object_get(row, "name")));
    json_decref(row);
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_reader_select(r, sel, 1)); /* after rows */
    mcdc_parquet_reader_free(r);
    /* by descriptor: the reader does not close it */
    assert_int_equal(0, mcdc_parquet_reader_open_fd(&r, fd, "by-fd.parquet", NULL));
    const char *bad[] = { "nope" };
    assert_int_equal(MCDC_ENOTFOUND, mcdc_parquet_reader_select(r, bad, 1));
    HAS("no column named \"nope\"");
    const char *twice[] = { "name", "NAME" };
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_reader_select(r, twice, 2));
    HAS("column \"name\" is chosen twice (as \"name\" and \"NAME\")");
    assert_int_equal(6, drain(r));
    mcdc_parquet_reader_free(r);
    assert_int_equal(0, close(fd));
    unlink(path);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_parquet_reader_open(&r, path, NULL));
    assert_null(r);
    mcdc_buf_dispose(&f);
}

static void test_parquet_reader__predicates_skip_row_groups(void **state)
{
    (void)state;
    mcdc_buf f;
    mcdc_parquet_reader *r;
    mcdc_value v = { .is_null = false };
    v.v.i = 11;
    assert_int_equal(0, open_built(&r, &f, OK));
    assert_int_equal(0, mcdc_parquet_reader_filter(r, "id", MCDC_PARQUET_EQ, &v));
    assert_int_equal(3, drain(r));
    assert_int_equal(1, mcdc_parquet_reader_row_groups_skipped(r));
    mcdc_parquet_reader_free(r);
    mcdc_buf_dispose(&f);

    v.v.i = 3; /* id <= 3: only the first row group */
    assert_int_equal(0, open_built(&r, &f, OK));
    assert_int_equal(0, mcdc_parquet_reader_filter(r, "id", MCDC_PARQUET_LE, &v));
    const mcdc_value *row;
    assert_int_equal(1, mcdc_parquet_reader_next(r, &row));
    assert_int_equal(1, row[0].v.i);
    assert_int_equal(3, drain(r) + 1);
    mcdc_parquet_reader_free(r);
    mcdc_buf_dispose(&f);

    v.v.i = 13; /* id >= 13: nothing */
    assert_int_equal(0, open_built(&r, &f, OK));
    assert_int_equal(0, mcdc_parquet_reader_filter(r, "id", MCDC_PARQUET_GE, &v));
    assert_int_equal(0, drain(r));
    assert_int_equal(2, mcdc_parquet_reader_row_groups_skipped(r));
    v.v.i = 12;
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_reader_filter(r, "id", MCDC_PARQUET_GE, &v));
    mcdc_parquet_reader_free(r);
    mcdc_buf_dispose(&f);

    v.v.i = 12; /* id >= 12: the second row group, whole */
    assert_int_equal(0, open_built(&r, &f, OK));
    assert_int_equal(0, mcdc_parquet_reader_filter(r, "id", MCDC_PARQUET_GE, &v));
    assert_int_equal(3, drain(r));
    mcdc_parquet_reader_free(r);
    mcdc_buf_dispose(&f);
}

static void test_parquet_reader__footer_damage_is_named(void **state)
{
    (void)state;
    mcdc_buf f = MCDC_BUF_INIT(1 << 20);
    build(&f, OK);
    mcdc_parquet_reader *r;
    char *p = malloc(f.len);
    /* bad trailing magic */
    memcpy(p, f.ptr, f.len);
    p[f.len - 1] = 'X';
    assert_int_equal(MCDC_ECORRUPT, mcdc_parquet_reader_open_mem(&r, p, f.len, "t.parquet", NULL));
    assert_null(r);
    char want[128];
    snprintf(want, sizeof want, "t.parquet: bad magic at byte %zu", f.len - 4);
    HAS(want);
    /* bad leading magic */
    memcpy(p, f.ptr, f.len);
    p[0] = 'Q';
    assert_int_equal(MCDC_ECORRUPT, mcdc_parquet_reader_open_mem(&r, p, f.len, "t.parquet", NULL));
    HAS("bad magic at byte 0");
    /* encrypted footer */
    memcpy(p, f.ptr, f.len);
    memcpy(p + f.len - 4, "PARE", 4);
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_parquet_reader_open_mem(&r, p, f.len, "t.parquet", NULL));
    HAS("encrypted");
    /* footer length beyond the file */
    memcpy(p, f.ptr, f.len);
    p[f.len - 8] = (char)0xFF;
    p[f.len - 7] = (char)0xFF;
    assert_int_equal(MCDC_ECORRUPT, mcdc_parquet_reader_open_mem(&r, p, f.len, "t.parquet", NULL));
    HAS("footer length");
    HAS("goes beyond the file");
    /* garbage Thrift: the footer's first bytes replaced */
    memcpy(p, f.ptr, f.len);
    uint32_t flen = (uint8_t)p[f.len - 8] | (uint8_t)p[f.len - 7] << 8;
    memset(p + f.len - 8 - flen, 0xEE, 6);
    assert_int_equal(MCDC_ECORRUPT, mcdc_parquet_reader_open_mem(&r, p, f.len, "t.parquet", NULL));
    HAS("t.parquet: ");
    HAS("footer");
    /* too short to be Parquet */
    assert_int_equal(MCDC_ECORRUPT, mcdc_parquet_reader_open_mem(&r, "PAR1PAR1", 8, "t.parquet", NULL));
    HAS("too short");
    free(p);
    mcdc_buf_dispose(&f);
}

static void expect_read_error(int flags, int code, const char *msg)
{
    mcdc_buf f;
    mcdc_parquet_reader *r;
    assert_int_equal(0, open_built(&r, &f, flags));
    assert_int_equal(code, drain(r));
    HAS("t.parquet: ");
    HAS(msg);
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", mcdc_error_last()->message);
    const mcdc_value *row;
    assert_int_equal(code, mcdc_parquet_reader_next(r, &row)); /* sticky */
    mcdc_parquet_reader_free(r);
    mcdc_buf_dispose(&f);
}

static void test_parquet_reader__page_damage_is_named(void **state)
{
    (void)state;
    expect_read_error(BAD_CRC, MCDC_ECORRUPT, "column id, page at byte 4: page CRC mismatch");
    expect_read_error(PAGE_TOO_BIG, MCDC_ECORRUPT, "column id, page at byte 4: page of");
    expect_read_error(PAGE_TOO_BIG, MCDC_ECORRUPT, "overruns the column chunk");
    expect_read_error(BAD_DICT_INDEX, MCDC_ECORRUPT,
                      "column name, page at byte 5"); /* the data page after the dictionary */
    expect_read_error(BAD_DICT_INDEX, MCDC_ECORRUPT,
                      "dictionary index 5 out of range (the dictionary has 2 values)");
    expect_read_error(BAD_SNAPPY, MCDC_ECORRUPT, "column id, page at byte 4: SNAPPY");
    expect_read_error(SHORT_COLUMN, MCDC_ECORRUPT, "row group 1, column id: ends after 3 of 4 rows");
    /* a size the format allows but the page's bytes cannot inflate to: refused unallocated */
    expect_read_error(HUGE_GZIP, MCDC_ECORRUPT,
                      "column id, page at byte 4: GZIP: 12 bytes cannot inflate to the "
                      "2147483647 bytes the page says (at most 12384)");
}

static void test_parquet_reader__every_truncation_fails_cleanly(void **state)
{
    (void)state;
    mcdc_buf f = MCDC_BUF_INIT(1 << 20);
    build(&f, WITH_CRC);
    for (size_t len = 0; len < f.len; len++) {
        mcdc_parquet_reader *r;
        char *p = malloc(len ? len : 1);
        memcpy(p, f.ptr, len);
        int rc = mcdc_parquet_reader_open_mem(&r, p, len, "cut.parquet", NULL);
        if (rc == 0) {
            /* the tail was cut: the magic cannot be there */
            fail_msg("a file cut to %zu of %zu bytes opened", len, f.len);
        }
        assert_true(rc == MCDC_ECORRUPT);
        HAS("cut.parquet");
        free(p);
    }
    /* every single-byte change of the data region reads or fails, never crashes */
    for (size_t i = 4; i < f.len - 8; i++) {
        char *p = malloc(f.len);
        memcpy(p, f.ptr, f.len);
        p[i] ^= 0x5A;
        mcdc_parquet_reader *r;
        if (mcdc_parquet_reader_open_mem(&r, p, f.len, "flip.parquet", NULL) == 0) {
            json_t *row;
            int rc;
            while ((rc = mcdc_parquet_reader_next_json(r, &row)) == 1)
                json_decref(row);
            assert_true(rc <= 0);
            mcdc_parquet_reader_free(r);
        }
        free(p);
    }
    mcdc_buf_dispose(&f);
}

static void test_parquet_reader__meta_document(void **state)
{
    (void)state;
    mcdc_buf f;
    mcdc_parquet_reader *r;
    assert_int_equal(0, open_built(&r, &f, WITH_CRC));
    json_t *doc;
    assert_int_equal(0, mcdc_parquet_reader_meta_json(r, &doc));
    assert_string_equal("unit test", json_string_value(json_object_get(doc, "created_by")));
    json_t *rg1 = json_array_get(json_object_get(doc, "row_groups"), 1);
    json_t *c0 = json_array_get(json_object_get(rg1, "columns"), 0);
    assert_string_equal("UNCOMPRESSED", json_string_value(json_object_get(c0, "codec")));
    json_t *st = json_object_get(c0, "statistics");
    assert_int_equal(10, json_integer_value(json_object_get(st, "min")));
    assert_int_equal(12, json_integer_value(json_object_get(st, "max")));
    json_t *name = json_array_get(json_object_get(doc, "schema"), 2);
    assert_string_equal("string", json_string_value(json_object_get(name, "read_as")));
    assert_string_equal("UTF8", json_string_value(json_object_get(name, "converted_type")));
    json_decref(doc);
    mcdc_parquet_reader_free(r);
    mcdc_buf_dispose(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_reader__flat_rows_and_types),
        cmocka_unit_test(test_parquet_reader__json_rows_projection_and_fd),
        cmocka_unit_test(test_parquet_reader__predicates_skip_row_groups),
        cmocka_unit_test(test_parquet_reader__footer_damage_is_named),
        cmocka_unit_test(test_parquet_reader__page_damage_is_named),
        cmocka_unit_test(test_parquet_reader__every_truncation_fails_cleanly),
        cmocka_unit_test(test_parquet_reader__meta_document),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
