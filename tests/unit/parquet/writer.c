/* Unit tests for parquet/writer.c, column.c, dict.c and nested.c: files, footers,
 * statistics, dictionary fallback, refusals and the no-replace publication.
 * With MCDC_PARQUET_INTEROP_DIR set, writes the files of tests/interop/parquet_write.sh
 * into that directory instead (with expected CSV and JSON) and exits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/parquet.h"
#include "parquet/format.h"
#include "unit/parquet/writer_data.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mcdc-pqw-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    return rmdir(dir);
}

static size_t count_files(void)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* Read a whole file and parse its footer. */
static uint8_t *read_footer(const char *path, mcdc_pq_file_metadata *m, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    assert_int_equal(n, fread(b, 1, (size_t)n, f));
    fclose(f);
    assert_memory_equal("PAR1", b, 4);
    assert_memory_equal("PAR1", b + n - 4, 4);
    uint32_t len = b[n - 8] | b[n - 7] << 8 | b[n - 6] << 16 | (uint32_t)b[n - 5] << 24;
    assert_true(len <= (uint32_t)n - 12);
    assert_int_equal(0, mcdc_pq__parse_file_metadata(m, b + n - 8 - len, len, (uint64_t)(n - 8 - len)));
    *size = (size_t)n;
    return b;
}

static mcdc_parquet_writer_options small_opts(void)
{
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.page_bytes = 4096;
    o.row_group_bytes = 64 * 1024;
    return o;
}

static int write_rows(const char *path, const mcdc_schema *s, uint32_t n, bool nullable,
                      const mcdc_parquet_writer_options *o, mcdc_parquet_write_result *res,
                      mcdc_buf *csv)
{
    mcdc_parquet_writer *w;
    int rc = mcdc_parquet_writer_open(&w, path, s, o);
    if (rc < 0)
        return rc;
    mcdc_value row[WD_NCOLS];
    for (uint32_t r = 0; r < n && rc == 0; r++) {
        for (int c = 0; c < WD_NCOLS; c++) {
            wd_value(&row[c], c, r, nullable);
            if (csv) {
                if (c)
                    mcdc_buf_putc(csv, ',');
                wd_csv(csv, c, &row[c]);
            }
        }
        if (csv)
            mcdc_buf_putc(csv, '\n');
        rc = mcdc_parquet_writer_write_row(w, row);
    }
    if (rc == 0)
        rc = mcdc_parquet_writer_close(w, res);
    mcdc_parquet_writer_free(w);
    return rc;
}

static void test_parquet_writer__footer_schema_and_statistics(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/all.parquet", dir);
    mcdc_schema *s = wd_schema(true);
    mcdc_parquet_writer_options o = small_opts();
    mcdc_parquet_kv kv[] = { { "k", "v" } };
    o.kv = kv;
    o.n_kv = 1;
    mcdc_parquet_write_result res;
    assert_int_equal(0, write_rows(path, s, 3000, true, &o, &res, NULL));
    assert_int_equal(3000, res.num_rows);
    assert_true(res.n_row_groups > 1);
    assert_int_equal(1, count_files()); /* the temporary file is gone */

    mcdc_pq_file_metadata m;
    size_t size;
    uint8_t *b = read_footer(path, &m, &size);
    assert_int_equal(size, res.file_size);
    assert_int_equal(3000, m.num_rows);
    assert_int_equal(res.n_row_groups, m.n_row_groups);
    assert_string_equal("mssql-cdc version " MCDC_VERSION " (build mcdc)", m.created_by);
    assert_string_equal("k", m.kv[0].key);
    assert_int_equal(1 + WD_NCOLS, m.n_schema);
    assert_int_equal(WD_NCOLS, m.n_column_orders);
    /* types as mcdc/parquet.h promises */
    assert_int_equal(MCDC_PQ_INT32, m.schema[2].type);
    assert_int_equal(MCDC_PQ_CT_INT_8, m.schema[2].converted_type);
    assert_int_equal(MCDC_PQ_INT32, m.schema[8].type);          /* dec9 */
    assert_int_equal(MCDC_PQ_INT64, m.schema[9].type);          /* dec18 */
    assert_int_equal(MCDC_PQ_FIXED_LEN_BYTE_ARRAY, m.schema[10].type);
    assert_int_equal(16, m.schema[10].type_length);             /* decimal(38) */
    assert_int_equal(9, m.schema[11].type_length);              /* decimal(20) */
    assert_int_equal(MCDC_PQ_LT_STRING, m.schema[12].logical.kind);
    assert_int_equal(MCDC_PQ_LT_NONE, m.schema[13].logical.kind); /* binary */
    assert_true(m.schema[15].logical.is_adjusted_utc);
    assert_true(m.schema[15].has_converted);
    assert_false(m.schema[16].logical.is_adjusted_utc);
    assert_false(m.schema[16].has_converted);
    int64_t rows = 0;
    for (size_t g = 0; g < m.n_row_groups; g++) {
        rows += m.row_groups[g].num_rows;
        for (size_t c = 0; c < WD_NCOLS; c++) {
            const mcdc_pq_column_meta *cm = &m.row_groups[g].columns[c].meta_data;
            assert_int_equal(m.row_groups[g].num_rows, cm->num_values);
            assert_int_equal(MCDC_PQ_CODEC_SNAPPY, cm->codec);
            assert_true(cm->statistics.has_null_count);
        }
    }
    assert_int_equal(3000, rows);

    /* File statistics against a direct computation. */
    int64_t nulls[WD_NCOLS] = { 0 }, lmin = INT64_MAX, lmax = INT64_MIN;
    mcdc_int128 dmin = 0, dmax = 0;
    bool dhas = false;
    double fmin = INFINITY, fmax = -INFINITY;
    for (uint32_t r = 0; r < 3000; r++)
        for (int c = 0; c < WD_NCOLS; c++) {
            mcdc_value v;
            wd_value(&v, c, r, true);
            nulls[c] += v.is_null;
            if (v.is_null)
                continue;
            if (c == 4) {
                lmin = v.v.i < lmin ? v.v.i : lmin;
                lmax = v.v.i > lmax ? v.v.i : lmax;
            } else if (c == 9) {
                if (!dhas || v.v.dec < dmin) dmin = v.v.dec;
                if (!dhas || v.v.dec > dmax) dmax = v.v.dec;
                dhas = true;
            } else if (c == 6 && !isnan(v.v.d)) {
                fmin = v.v.d < fmin ? v.v.d : fmin;
                fmax = v.v.d > fmax ? v.v.d : fmax;
            }
        }
    for (int c = 0; c < WD_NCOLS; c++)
        assert_int_equal(nulls[c], res.cols[c].null_count);
    assert_string_equal("i64", res.cols[4].path);
    assert_true(res.cols[4].min.v.i == lmin && res.cols[4].max.v.i == lmax);
    assert_true(res.cols[9].min.v.dec == dmin && res.cols[9].max.v.dec == dmax);
    assert_true(res.cols[6].min.v.d == fmin && res.cols[6].max.v.d == fmax);
    assert_int_equal(0, res.cols[11].min.v.s.len); /* "" is the smallest string */
    assert_int_equal(0, memcmp(res.cols[11].max.v.s.ptr, "😀 emoji", strlen("😀 emoji")));
    /* unsigned byte order: 0xF0 (emoji) sorts above 0x7F and 0x00 */
    assert_int_equal(0, memcmp(res.cols[12].max.v.s.ptr, "😀 emoji", strlen("😀 emoji")));
    assert_int_equal(0, res.cols[12].min.v.s.len);
    /* Chunk statistics: min_value of the first long chunk is 8 bytes LE. */
    const mcdc_pq_statistics *st = &m.row_groups[0].columns[4].meta_data.statistics;
    assert_int_equal(8, st->min_value.len);
    int64_t first_min;
    memcpy(&first_min, st->min_value.ptr, 8);
    assert_true(first_min == INT64_MIN);
    free(b);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_parquet_write_result_dispose(&res);
    mcdc_schema_free(s);
}

static void test_parquet_writer__refused_row_leaves_the_writer_usable(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/req.parquet", dir);
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, false);
    mcdc_schema_add(s, "b", MCDC_TYPE_BYTE, 0, 0, true);
    mcdc_schema_add(s, "d", MCDC_TYPE_DECIMAL, 4, 2, true);
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, NULL));
    mcdc_value row[3] = { { .v.i = 1 }, { .v.i = 5 }, { .v.dec = 9999 } };
    assert_int_equal(0, mcdc_parquet_writer_write_row(w, row));
    row[0].is_null = true;
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_writer_write_row(w, row));
    assert_string_equal("row 1, column id: null in a column that is not nullable",
                        mcdc_error_last()->message);
    row[0].is_null = false;
    row[1].v.i = 128;
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_writer_write_row(w, row));
    assert_string_equal("b: 128 is out of range for byte", mcdc_error_last()->message);
    row[1].v.i = -128;
    row[2].v.dec = -10000;
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_writer_write_row(w, row));
    assert_string_equal("d: -100.00 has more than 4 digits for decimal(4,2)", mcdc_error_last()->message);
    row[2].v.dec = -9999;
    assert_int_equal(0, mcdc_parquet_writer_write_row(w, row));
    mcdc_parquet_write_result res;
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    assert_int_equal(2, res.num_rows);
    assert_true(res.cols[1].min.v.i == -128 && res.cols[1].max.v.i == 5);
    assert_true(res.cols[2].min.v.dec == -9999 && res.cols[2].max.v.dec == 9999);
    mcdc_parquet_write_result_dispose(&res);
    mcdc_parquet_writer_free(w);
    mcdc_schema_free(s);
}

static void test_parquet_writer__never_replaces_and_cleans_up(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/x.parquet", dir);
    mcdc_schema *s = wd_schema(true);
    FILE *f = fopen(path, "w");
    fputs("precious", f);
    fclose(f);
    mcdc_parquet_writer *w;
    assert_int_equal(MCDC_EEXISTS, mcdc_parquet_writer_open(&w, path, s, NULL));
    assert_null(w);
    unlink(path);
    /* A file that appears while writing is not replaced; the temporary file goes. */
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, NULL));
    assert_int_equal(1, count_files());
    f = fopen(path, "w");
    fputs("precious", f);
    fclose(f);
    assert_int_equal(MCDC_EEXISTS, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    assert_int_equal(1, count_files());
    f = fopen(path, "r");
    char buf[16] = { 0 };
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal("precious", buf);
    unlink(path);
    /* Free without close leaves nothing. */
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, NULL));
    mcdc_parquet_writer_free(w);
    assert_int_equal(0, count_files());
    /* Bad options. */
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.codec = (mcdc_parquet_codec)3;
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_writer_open(&w, path, s, &o));
    mcdc_parquet_codec codec;
    assert_int_equal(0, mcdc_parquet_codec_parse(&codec, "ZSTD"));
    assert_int_equal(MCDC_PARQUET_ZSTD, codec);
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_codec_parse(&codec, "lzo"));
    mcdc_schema_free(s);
}

static void test_parquet_writer__dictionary_falls_back_to_plain_mid_chunk(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/fb.parquet", dir);
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "s", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.dictionary_max_bytes = 1000;
    o.page_max_values = 500;
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, &o));
    char buf[32];
    for (int r = 0; r < 5000; r++) {
        /* 10 distinct values at first, then ever new ones */
        int n = snprintf(buf, sizeof buf, "v%d", r < 2000 ? r % 10 : r);
        mcdc_value v = { .v.s = { buf, (size_t)n } };
        assert_int_equal(0, mcdc_parquet_writer_write_row(w, &v));
    }
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_pq_file_metadata m;
    size_t size;
    uint8_t *b = read_footer(path, &m, &size);
    const mcdc_pq_column_meta *cm = &m.row_groups[0].columns[0].meta_data;
    assert_true(cm->has_dictionary_page_offset);
    assert_int_equal(3, cm->n_encoding_stats);
    assert_int_equal(MCDC_PQ_ENC_RLE_DICTIONARY, cm->encoding_stats[1].encoding);
    assert_int_equal(MCDC_PQ_ENC_PLAIN, cm->encoding_stats[2].encoding);
    assert_int_equal(2, cm->statistics.min_value.len);
    assert_memory_equal("v0", cm->statistics.min_value.ptr, 2);
    assert_int_equal(2, cm->statistics.max_value.len); /* "v9" > "v4999" in byte order */
    assert_memory_equal("v9", cm->statistics.max_value.ptr, 2);
    assert_false(cm->statistics.min.set); /* no deprecated min for strings */
    /* The dictionary page comes first and parses. */
    mcdc_pq_page_header h;
    size_t used;
    assert_int_equal(0, mcdc_pq__parse_page_header(&h, &used, b + cm->dictionary_page_offset,
                                                   size - (size_t)cm->dictionary_page_offset,
                                                   (uint64_t)cm->dictionary_page_offset));
    assert_int_equal(MCDC_PQ_PAGE_DICTIONARY, h.type);
    assert_true(h.has_crc);
    free(b);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_schema_free(s);
}

static mcdc_parquet_node *leaf(const char *name, mcdc_type_id t, bool nullable)
{
    mcdc_column c = { .type = t, .nullable = nullable };
    return mcdc_parquet_node_leaf(name, &c);
}

/* A Delta-checkpoint-like tree: txn, add{path, partitionValues map, size, stats},
 * metaData{id, partitionColumns list, configuration map}. */
static mcdc_parquet_node *checkpoint_tree(void)
{
    mcdc_parquet_node *root = mcdc_parquet_node_struct("root", false);
    mcdc_parquet_node *txn = mcdc_parquet_node_struct("txn", true);
    mcdc_parquet_node_add(txn, leaf("appId", MCDC_TYPE_STRING, true));
    mcdc_parquet_node_add(txn, leaf("version", MCDC_TYPE_LONG, true));
    mcdc_parquet_node_add(root, txn);
    mcdc_parquet_node *add = mcdc_parquet_node_struct("add", true);
    mcdc_parquet_node_add(add, leaf("path", MCDC_TYPE_STRING, true));
    mcdc_parquet_node_add(add, mcdc_parquet_node_map("partitionValues", true,
                                                     leaf("k", MCDC_TYPE_STRING, false),
                                                     leaf("v", MCDC_TYPE_STRING, true)));
    mcdc_parquet_node_add(add, leaf("size", MCDC_TYPE_LONG, true));
    mcdc_parquet_node_add(add, leaf("dataChange", MCDC_TYPE_BOOLEAN, true));
    mcdc_parquet_node_add(add, leaf("stats", MCDC_TYPE_STRING, true));
    mcdc_parquet_node_add(root, add);
    mcdc_parquet_node *md = mcdc_parquet_node_struct("metaData", true);
    mcdc_parquet_node_add(md, leaf("id", MCDC_TYPE_STRING, true));
    mcdc_parquet_node_add(md, mcdc_parquet_node_list("partitionColumns", true,
                                                     leaf("e", MCDC_TYPE_STRING, true)));
    mcdc_parquet_node_add(md, mcdc_parquet_node_map("configuration", true,
                                                    leaf("k", MCDC_TYPE_STRING, false),
                                                    leaf("v", MCDC_TYPE_STRING, true)));
    mcdc_parquet_node_add(root, md);
    return root;
}

static const char *const checkpoint_rows[] = {
    "{\"txn\":{\"appId\":\"app\",\"version\":3}}",
    "{\"add\":{\"path\":\"a.parquet\",\"partitionValues\":{},\"size\":10,\"dataChange\":false,"
    "\"stats\":\"{\\\"numRecords\\\":1}\"}}",
    "{\"add\":{\"path\":\"b.parquet\",\"partitionValues\":{\"a\":\"x\",\"b\":null},\"size\":20,"
    "\"dataChange\":true}}",
    "{\"add\":{\"path\":\"c.parquet\",\"size\":30}}",
    "{\"metaData\":{\"id\":\"m1\",\"partitionColumns\":[],\"configuration\":"
    "[{\"key\":\"delta.appendOnly\",\"value\":\"true\"}]}}",
    "{\"metaData\":{\"id\":\"m2\",\"partitionColumns\":[\"a\",null,\"b\"]}}",
    "{}",
};

static int write_checkpoint(const char *path, mcdc_parquet_write_result *res)
{
    mcdc_parquet_node *root = checkpoint_tree();
    mcdc_parquet_writer *w;
    int rc = mcdc_parquet_writer_open_nested(&w, path, root, NULL);
    mcdc_parquet_node_free(root);
    if (rc < 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < sizeof checkpoint_rows / sizeof *checkpoint_rows; i++) {
        json_t *j = json_loads(checkpoint_rows[i], 0, NULL);
        rc = mcdc_parquet_writer_write_json(w, j);
        json_decref(j);
    }
    if (rc == 0)
        rc = mcdc_parquet_writer_close(w, res);
    mcdc_parquet_writer_free(w);
    return rc;
}

static void test_parquet_writer__nested_rows_have_the_spark_shape_and_levels(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/cp.parquet", dir);
    mcdc_parquet_write_result res;
    assert_int_equal(0, write_checkpoint(path, &res));
    assert_int_equal(7, res.num_rows);
    assert_int_equal(12, res.n_cols);
    assert_string_equal("add.partitionValues.key_value.key", res.cols[3].path);
    assert_string_equal("metaData.partitionColumns.list.element", res.cols[9].path);
    mcdc_pq_file_metadata m;
    size_t size;
    uint8_t *b = read_footer(path, &m, &size);
    /* schema: root, txn, appId, version, add, path, partitionValues, key_value, key, value,... */
    assert_string_equal("partitionValues", m.schema[6].name);
    assert_int_equal(MCDC_PQ_CT_MAP, m.schema[6].converted_type);
    assert_string_equal("key_value", m.schema[7].name);
    assert_int_equal(MCDC_PQ_REPEATED, m.schema[7].repetition);
    assert_int_equal(MCDC_PQ_REQUIRED, m.schema[8].repetition);
    /* entries per leaf: one per row, plus one per extra map/list element */
    const mcdc_pq_column_chunk *cc = m.row_groups[0].columns;
    assert_int_equal(7, cc[0].meta_data.num_values);  /* txn.appId */
    assert_int_equal(8, cc[3].meta_data.num_values);  /* partitionValues key: b has 2 */
    assert_int_equal(6, cc[3].meta_data.statistics.null_count); /* rows without entries */
    assert_int_equal(9, cc[9].meta_data.num_values);  /* partitionColumns: m2 has 3 */
    assert_int_equal(6, res.cols[0].null_count);
    assert_int_equal(10, res.cols[5].min.v.i);
    assert_int_equal(30, res.cols[5].max.v.i);
    /* A value that does not fit refuses the row and keeps the writer. */
    free(b);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_parquet_write_result_dispose(&res);

    snprintf(path, sizeof path, "%s/cp2.parquet", dir);
    mcdc_parquet_node *root = checkpoint_tree();
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, path, root, NULL));
    mcdc_parquet_node_free(root);
    json_t *j = json_loads("{\"txn\":{\"appId\":\"a\",\"version\":\"x\"}}", 0, NULL);
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_writer_write_json(w, j));
    assert_string_equal("row 0: field version: expected an integer", mcdc_error_last()->message);
    json_decref(j);
    j = json_loads("{\"add\":{\"partitionValues\":{\"k\":1}}}", 0, NULL);
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_writer_write_json(w, j));
    json_decref(j);
    j = json_loads("{\"txn\":{\"appId\":\"a\",\"version\":1}}", 0, NULL);
    assert_int_equal(0, mcdc_parquet_writer_write_json(w, j));
    json_decref(j);
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    assert_int_equal(1, res.num_rows);
    mcdc_parquet_write_result_dispose(&res);
    mcdc_parquet_writer_free(w);
}

static void test_parquet_writer__an_empty_file_is_valid(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/empty.parquet", dir);
    mcdc_schema *s = wd_schema(true);
    mcdc_parquet_write_result res;
    assert_int_equal(0, write_rows(path, s, 0, true, NULL, &res, NULL));
    assert_int_equal(0, res.num_rows);
    assert_false(res.cols[0].has_min_max);
    mcdc_pq_file_metadata m;
    size_t size;
    free(read_footer(path, &m, &size));
    assert_int_equal(0, m.n_row_groups);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_parquet_write_result_dispose(&res);
    mcdc_schema_free(s);
}

static void test_parquet_writer__float_bounds_skip_nan_and_widen_zeros(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/fl.parquet", dir);
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "zero", MCDC_TYPE_DOUBLE, 0, 0, true);
    mcdc_schema_add(s, "nan", MCDC_TYPE_FLOAT, 0, 0, true);
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, NULL));
    mcdc_value row[2] = { { .v.d = 0.0 }, { .v.f = NAN } };
    assert_int_equal(0, mcdc_parquet_writer_write_row(w, row));
    row[0].v.d = 0.0;
    row[1].is_null = true;
    assert_int_equal(0, mcdc_parquet_writer_write_row(w, row));
    mcdc_parquet_write_result res;
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    mcdc_parquet_writer_free(w);
    assert_true(res.cols[0].has_min_max);
    assert_false(res.cols[1].has_min_max); /* NaN is no bound */
    assert_int_equal(1, res.cols[1].null_count);
    mcdc_pq_file_metadata m;
    size_t size;
    free(read_footer(path, &m, &size));
    const mcdc_pq_statistics *z = &m.row_groups[0].columns[0].meta_data.statistics;
    double lo, hi;
    memcpy(&lo, z->min_value.ptr, 8);
    memcpy(&hi, z->max_value.ptr, 8);
    assert_true(lo == 0 && signbit(lo));  /* -0.0: a reader comparing -0.0 finds it */
    assert_true(hi == 0 && !signbit(hi)); /* +0.0 */
    const mcdc_pq_statistics *n = &m.row_groups[0].columns[1].meta_data.statistics;
    assert_false(n->min_value.set);
    assert_false(n->max_value.set);
    assert_int_equal(1, n->null_count);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_parquet_write_result_dispose(&res);
    mcdc_schema_free(s);
}

/* ---------------------------------------------------------------- interop files */

static int write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fwrite(text, 1, len, f);
    return fclose(f);
}

static int interop(const char *out)
{
    static const struct { const char *name; mcdc_parquet_codec codec; int variant; } files[] = {
        { "snappy", MCDC_PARQUET_SNAPPY, 0 }, { "zstd", MCDC_PARQUET_ZSTD, 0 },
        { "gzip", MCDC_PARQUET_GZIP, 0 }, { "uncompressed", MCDC_PARQUET_UNCOMPRESSED, 0 },
        { "nodict", MCDC_PARQUET_SNAPPY, 1 }, { "fallback", MCDC_PARQUET_ZSTD, 2 },
        { "required", MCDC_PARQUET_SNAPPY, 3 }, { "bigpages", MCDC_PARQUET_SNAPPY, 4 },
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[1024];
        mcdc_parquet_writer_options o = small_opts();
        o.codec = files[i].codec;
        bool nullable = files[i].variant != 3;
        if (files[i].variant == 1)
            o.dictionary = false;
        if (files[i].variant == 2)
            o.dictionary_max_bytes = 300;
        if (files[i].variant == 4)
            o = (mcdc_parquet_writer_options)MCDC_PARQUET_WRITER_OPTIONS_INIT;
        mcdc_schema *s = wd_schema(nullable);
        mcdc_buf csv = MCDC_BUF_INIT((size_t)1 << 30);
        snprintf(path, sizeof path, "%s/%s.parquet", out, files[i].name);
        unlink(path);
        int rc = write_rows(path, s, 5000, nullable, &o, NULL, &csv);
        mcdc_schema_free(s);
        if (rc < 0) {
            fprintf(stderr, "%s: %s\n", path, mcdc_error_last()->message);
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s.csv", out, files[i].name);
        write_text(path, csv.ptr ? csv.ptr : "", csv.len);
        mcdc_buf_dispose(&csv);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/checkpoint.parquet", out);
    unlink(path);
    if (write_checkpoint(path, NULL) < 0) {
        fprintf(stderr, "%s: %s\n", path, mcdc_error_last()->message);
        return 1;
    }
    /* the column list and DuckDB types for the script */
    mcdc_buf cols = MCDC_BUF_INIT(1 << 20);
    for (int c = 0; c < WD_NCOLS; c++)
        mcdc_buf_printf(&cols, "%s\t%s\n", wd_cols[c].name, wd_cols[c].duck);
    snprintf(path, sizeof path, "%s/columns.tsv", out);
    write_text(path, cols.ptr, cols.len);
    mcdc_buf_dispose(&cols);
    return 0;
}

/* Bytes of the file at @p path (malloc'd), its size in @p n. */
static uint8_t *slurp_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal((size_t)len, fread(b, 1, (size_t)len, f));
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* Rows handed over in one call are written column by column: the pages, and with one row
 * group the whole file, are those of the same rows written one at a time (nulls, long
 * strings and page cuts included). */
static void test_parquet_writer__rows_in_one_call_make_the_file_of_row_by_row(void **state)
{
    (void)state;
    enum { N = 5000 };
    mcdc_schema *s = wd_schema(true);
    mcdc_value *rows = calloc((size_t)N * WD_NCOLS, sizeof *rows);
    assert_non_null(rows);
    for (uint32_t r = 0; r < N; r++)
        for (int c = 0; c < WD_NCOLS; c++)
            wd_value(&rows[(size_t)r * WD_NCOLS + c], c, r, true);
    mcdc_parquet_writer_options o = small_opts();
    o.row_group_bytes = (size_t)1 << 30;
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/rowwise.parquet", dir);
    snprintf(b, sizeof b, "%s/colwise.parquet", dir);
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, a, s, &o));
    for (uint32_t r = 0; r < N; r++)
        assert_int_equal(0, mcdc_parquet_writer_write_row(w, &rows[(size_t)r * WD_NCOLS]));
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    assert_int_equal(0, mcdc_parquet_writer_open(&w, b, s, &o));
    /* a first call that stops short of a run, then the rest */
    assert_int_equal(0, mcdc_parquet_writer_write_rows(w, rows, 7));
    assert_int_equal(0, mcdc_parquet_writer_write_rows(w, rows + 7 * WD_NCOLS, N - 7));
    assert_int_equal(N, mcdc_parquet_writer_rows(w));
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    size_t na, nb;
    uint8_t *fa = slurp_file(a, &na), *fb = slurp_file(b, &nb);
    assert_true(na > 100000); /* many pages of 4 KiB */
    assert_int_equal(na, nb);
    assert_memory_equal(fa, fb, na);
    free(fa);
    free(fb);

    /* small row groups: the same rows, every row group's columns of equal length */
    o = small_opts();
    snprintf(b, sizeof b, "%s/colwise-rg.parquet", dir);
    assert_int_equal(0, mcdc_parquet_writer_open(&w, b, s, &o));
    assert_int_equal(0, mcdc_parquet_writer_write_rows(w, rows, N));
    mcdc_parquet_write_result res;
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    mcdc_parquet_writer_free(w);
    assert_int_equal(N, res.num_rows);
    assert_true(res.n_row_groups > 1);
    mcdc_pq_file_metadata m;
    size_t size;
    free(read_footer(b, &m, &size));
    int64_t total = 0;
    for (size_t g = 0; g < m.n_row_groups; g++) {
        total += m.row_groups[g].num_rows;
        for (size_t c = 0; c < WD_NCOLS; c++)
            assert_int_equal(m.row_groups[g].num_rows, m.row_groups[g].columns[c].meta_data.num_values);
    }
    assert_int_equal(N, total);
    mcdc_pq__file_metadata_dispose(&m);
    mcdc_parquet_write_result_dispose(&res);
    free(rows);
    mcdc_schema_free(s);
}

/* A refused row in the middle of a call: the rows before it are written, it and the rest
 * are not, the writer stays usable, and the file holds exactly the rows accepted. */
static void test_parquet_writer__a_refused_row_stops_a_call_of_many_rows(void **state)
{
    (void)state;
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "k", MCDC_TYPE_LONG, 0, 0, false);
    mcdc_schema_add(s, "small", MCDC_TYPE_BYTE, 0, 0, true);
    mcdc_schema_add(s, "name", MCDC_TYPE_STRING, 0, 0, true);
    enum { N = 3000, BAD = 1500 };
    mcdc_value *rows = calloc((size_t)N * 3, sizeof *rows);
    assert_non_null(rows);
    for (int r = 0; r < N; r++) {
        rows[r * 3].v.i = r;
        rows[r * 3 + 1].v.i = r % 100;
        rows[r * 3 + 1].is_null = r % 7 == 0;
        rows[r * 3 + 2].v.s.ptr = "x";
        rows[r * 3 + 2].v.s.len = 1;
    }
    rows[BAD * 3 + 1].is_null = false;
    rows[BAD * 3 + 1].v.i = 1000; /* out of range for a byte */
    char path[300];
    snprintf(path, sizeof path, "%s/refused.parquet", dir);
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, NULL));
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_writer_write_rows(w, rows, N));
    assert_non_null(strstr(mcdc_error_last()->message, "1000 is out of range for byte"));
    assert_int_equal(BAD, mcdc_parquet_writer_rows(w));
    /* the rest, the bad row left out */
    assert_int_equal(0, mcdc_parquet_writer_write_rows(w, rows + (BAD + 1) * 3, N - BAD - 1));
    mcdc_parquet_write_result res;
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    mcdc_parquet_writer_free(w);
    assert_int_equal(N - 1, res.num_rows);
    assert_true(res.cols[0].has_min_max);
    assert_int_equal(0, res.cols[0].min.v.i);
    assert_int_equal(N - 1, res.cols[0].max.v.i);
    assert_int_equal(99, res.cols[1].max.v.i);
    int64_t nulls = 0;
    for (int r = 0; r < N; r++)
        nulls += r != BAD && r % 7 == 0;
    assert_int_equal(nulls, res.cols[1].null_count);
    mcdc_parquet_write_result_dispose(&res);
    free(rows);
    mcdc_schema_free(s);
}

int main(void)
{
    const char *out = getenv("MCDC_PARQUET_INTEROP_DIR");
    if (out)
        return interop(out);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parquet_writer__footer_schema_and_statistics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__refused_row_leaves_the_writer_usable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__never_replaces_and_cleans_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__dictionary_falls_back_to_plain_mid_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__nested_rows_have_the_spark_shape_and_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__an_empty_file_is_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__float_bounds_skip_nan_and_widen_zeros, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__rows_in_one_call_make_the_file_of_row_by_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_writer__a_refused_row_stops_a_call_of_many_rows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
