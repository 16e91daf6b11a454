/*
 * parquet/writer.c: the Parquet file writer: a streamed storage writer (a temporary file
 * locally), flat rows, row groups, footer, and the no-replace commit into place.
 *
 * Lifecycle (each edge names its function):
 *
 *     open ──write_row*──▶ open ──close──▶ closed (file linked at path, or failed)
 *       │                    │
 *       └──── any I/O or memory error ──▶ failed (sticky: every call returns the error)
 *
 * Invariants:
 * (F1) Bytes reach the temporary file in file order; w->offset is the offset of the next.
 * (F2) A row group is written whole (all its column chunks, in schema order) before the
 *      next row of the following group is encoded; memory holds at most one row group.
 * (F3) The path shows a file only after the footer is stored durably; an existing file
 *      at the path is never replaced (the storage seam's no-replace commit: locally
 *      renameat2 RENAME_NOREPLACE or link(2), which fail with EEXIST).
 * File layout and metadata: format.h; pages: colwrite.c.
 */
#include "parquet/writer.h"
#include "mcdc/storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zstd.h>

#define OBUF_FLUSH ((size_t)1 << 20)

void mcdc_parquet_writer_options_init(mcdc_parquet_writer_options *opts)
{
    mcdc_parquet_writer_options d = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    *opts = d;
}

int mcdc_parquet_codec_parse(mcdc_parquet_codec *out, const char *name)
{
    static const struct { const char *name; mcdc_parquet_codec codec; } names[] = {
        { "snappy", MCDC_PARQUET_SNAPPY }, { "zstd", MCDC_PARQUET_ZSTD },
        { "gzip", MCDC_PARQUET_GZIP }, { "uncompressed", MCDC_PARQUET_UNCOMPRESSED },
        { "none", MCDC_PARQUET_UNCOMPRESSED },
    };
    for (size_t i = 0; name && i < sizeof names / sizeof *names; i++)
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].codec;
            return 0;
        }
    mcdc_error_set(MCDC_EINVAL, "unknown parquet codec '%s'", name ? name : "(null)");
    return mcdc_error_hint("use snappy, zstd, gzip or uncompressed");
}

int mcdc_pq__writer_fail(mcdc_parquet_writer *w, int rc)
{
    if (rc < 0 && !w->failed)
        w->failed = rc;
    return rc;
}

/* ---------------------------------------------------------------- file output */

static int write_all(mcdc_parquet_writer *w, const void *p, size_t n)
{
    return mcdc_storage_writer_write(w->out, p, n);
}

static int obuf_flush(mcdc_parquet_writer *w)
{
    int rc = w->obuf.len ? write_all(w, w->obuf.ptr, w->obuf.len) : 0;
    mcdc_buf_clear(&w->obuf);
    return rc;
}

/* The sink the column chunks are written through (F1). */
static int sink(void *payload, const void *p, size_t n)
{
    mcdc_parquet_writer *w = payload;
    int rc;
    if (n >= OBUF_FLUSH / 4) {
        if ((rc = obuf_flush(w)) < 0 || (rc = write_all(w, p, n)) < 0)
            return rc;
    } else {
        if ((rc = mcdc_buf_put(&w->obuf, p, n)) < 0)
            return rc;
        if (w->obuf.len >= OBUF_FLUSH && (rc = obuf_flush(w)) < 0)
            return rc;
    }
    w->offset += n;
    return 0;
}

static char *default_created_by(void)
{
    char buf[128];
    snprintf(buf, sizeof buf, "mssql-cdc version %s (build mcdc)", MCDC_VERSION);
    return strdup(buf);
}

int mcdc_pq__writer_create(mcdc_parquet_writer **out, const char *path,
                           const mcdc_parquet_writer_options *opts)
{
    *out = NULL;
    mcdc_parquet_writer_options defaults = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    if (!path || !*path)
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: no path given");
    if (opts->version != MCDC_PARQUET_WRITER_OPTIONS_VERSION)
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: options version %u, expected %u",
                              opts->version, MCDC_PARQUET_WRITER_OPTIONS_VERSION);
    if (opts->codec != MCDC_PARQUET_UNCOMPRESSED && opts->codec != MCDC_PARQUET_SNAPPY &&
        opts->codec != MCDC_PARQUET_GZIP && opts->codec != MCDC_PARQUET_ZSTD)
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: codec %d is not one it writes",
                              (int)opts->codec);
    if (opts->page_bytes < 1024 || opts->page_bytes > ((size_t)1 << 30) ||
        opts->row_group_bytes < opts->page_bytes || opts->page_max_values < 1 ||
        opts->page_max_values > ((size_t)1 << 26) || opts->dictionary_max_bytes > ((size_t)1 << 30))
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: page_bytes must be 1 KiB..1 GiB, "
                              "row_group_bytes at least page_bytes, page_max_values 1..64 Mi, "
                              "dictionary_max_bytes at most 1 GiB");
    mcdc_storage_info taken;
    if (mcdc_storage_stat(&taken, path) == 0)
        return mcdc_error_set(MCDC_EEXISTS, "%s: file exists", path);
    mcdc_error_clear();

    mcdc_parquet_writer *w = calloc(1, sizeof *w);
    if (!w)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    w->obuf = (mcdc_buf)MCDC_BUF_INIT(OBUF_FLUSH * 2);
    w->cfg = (mcdc_pq_write_config){ (int)opts->codec, opts->codec_level, opts->page_bytes,
                                     opts->page_max_values, opts->dictionary,
                                     opts->dictionary_max_bytes, opts->page_crc };
    w->row_group_bytes = opts->row_group_bytes;
    if (opts->codec == MCDC_PARQUET_ZSTD && !(w->cfg.zstd_cctx = ZSTD_createCCtx())) {
        free(w);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory for a ZSTD context");
    }
    w->path = strdup(path);
    w->created_by = opts->created_by ? strdup(opts->created_by) : default_created_by();
    int rc = 0;
    if (!w->path || !w->created_by)
        goto nomem;
    if (opts->n_kv) {
        if (!(w->kv = calloc(opts->n_kv, sizeof *w->kv)))
            goto nomem;
        for (size_t i = 0; i < opts->n_kv; i++, w->n_kv++) {
            if (!opts->kv[i].key) {
                rc = mcdc_error_set(MCDC_EINVAL, "parquet writer: key-value pair %zu has no key", i);
                goto fail;
            }
            w->kv[i].key = strdup(opts->kv[i].key);
            if (opts->kv[i].value) {
                w->kv[i].value = strdup(opts->kv[i].value);
                w->kv[i].value_len = strlen(opts->kv[i].value);
            }
            if (!w->kv[i].key || (opts->kv[i].value && !w->kv[i].value))
                goto nomem;
        }
    }

    /* a hidden temp file next to the target (locally): invisible to Delta and Spark readers */
    if ((rc = mcdc_storage_writer_open(&w->out, path, MCDC_STORAGE_NOREPLACE)) < 0)
        goto fail;
    if ((rc = sink(w, MCDC_PQ_MAGIC, 4)) < 0)
        goto fail;
    mcdc_pq_schema_element root = { .name = "schema", .has_num_children = true };
    if ((rc = mcdc_pq__writer_add_element(w, &root)) < 0)
        goto fail;
    *out = w;
    return 0;
nomem:
    rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
fail:
    mcdc_parquet_writer_free(w);
    return rc;
}

int mcdc_pq__writer_add_element(mcdc_parquet_writer *w, const mcdc_pq_schema_element *e)
{
    if (w->n_elems % 16 == 0) {
        mcdc_pq_schema_element *n = realloc(w->elems, (w->n_elems + 16) * sizeof *n);
        if (!n)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        w->elems = n;
    }
    w->elems[w->n_elems] = *e;
    if (!(w->elems[w->n_elems].name = strdup(e->name)))
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    w->n_elems++;
    return 0;
}

/* ---------------------------------------------------------------- row groups */

static int flush_row_group(mcdc_parquet_writer *w)
{
    if (w->rg_rows == 0)
        return 0;
    if (w->n_rgs == w->rgs_cap) {
        size_t ncap = w->rgs_cap ? w->rgs_cap * 2 : 8;
        mcdc_pq_row_group *n = realloc(w->rgs, ncap * sizeof *n);
        if (!n)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        w->rgs = n;
        w->rgs_cap = ncap;
    }
    mcdc_pq_row_group *g = &w->rgs[w->n_rgs];
    memset(g, 0, sizeof *g);
    g->columns = calloc(w->n_cols, sizeof *g->columns);
    if (!g->columns)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    w->n_rgs++; /* counted now so a failure below still frees it */
    g->n_columns = w->n_cols;
    g->num_rows = w->rg_rows;
    g->has_file_offset = true;
    g->file_offset = (int64_t)w->offset;
    g->has_ordinal = w->n_rgs - 1 <= INT16_MAX;
    g->ordinal = (int16_t)(w->n_rgs - 1);
    g->has_total_compressed_size = true;
    for (size_t i = 0; i < w->n_cols; i++) {
        uint64_t written;
        int rc = mcdc_pq__column_write_chunk(&w->cols[i], w->offset, sink, w, &g->columns[i],
                                             &written);
        if (rc < 0)
            return rc;
        g->total_byte_size += g->columns[i].meta_data.total_uncompressed_size;
        g->total_compressed_size += g->columns[i].meta_data.total_compressed_size;
    }
    w->rg_rows = 0;
    return 0;
}

int mcdc_pq__writer_begin_row(mcdc_parquet_writer *w)
{
    bool flushed = false;
    for (size_t i = 0; i < w->n_cols; i++) {
        mcdc_pq_column *c = &w->cols[i];
        if (mcdc_pq__column_page_full(c)) {
            int rc = mcdc_pq__column_flush_page(c);
            if (rc < 0)
                return mcdc_pq__writer_fail(w, rc);
            flushed = true;
        }
    }
    /* The row group grows mostly by whole pages: measure it when one was cut, and every
     * 1024 rows for columns whose pages fill slowly. */
    if (!flushed && (w->rg_rows & 1023) != 0)
        return 0;
    size_t total = 0;
    for (size_t i = 0; i < w->n_cols; i++)
        total += mcdc_pq__column_chunk_bytes(&w->cols[i]);
    if (total >= w->row_group_bytes)
        return mcdc_pq__writer_fail(w, flush_row_group(w));
    return 0;
}

/* ---------------------------------------------------------------- flat rows */

int mcdc_parquet_writer_open(mcdc_parquet_writer **out, const char *path,
                             const mcdc_schema *schema, const mcdc_parquet_writer_options *opts)
{
    *out = NULL;
    if (!schema || schema->n_cols == 0)
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: the schema has no columns");
    mcdc_parquet_writer *w;
    int rc = mcdc_pq__writer_create(&w, path, opts);
    if (rc < 0)
        return rc;
    if (!(w->schema = mcdc_schema_copy(schema)) ||
        !(w->cols = calloc(schema->n_cols, sizeof *w->cols))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto fail;
    }
    w->elems[0].num_children = (int32_t)schema->n_cols;
    for (size_t i = 0; i < schema->n_cols; i++) {
        const mcdc_column *col = &schema->cols[i];
        const char *name = col->name;
        if ((rc = mcdc_pq__column_init(&w->cols[i], col, &name, 1, col->nullable ? 1 : 0, 0,
                                       &w->cfg)) < 0) {
            w->n_cols = i + 1;
            mcdc_error_prefix("column %s", name);
            goto fail;
        }
        w->n_cols = i + 1;
        mcdc_pq_schema_element e;
        mcdc_pq__column_schema_element(&w->cols[i], name, col->nullable, &e);
        if (opts && opts->field_ids && opts->field_ids[i] >= 0) {
            e.has_field_id = true;
            e.field_id = opts->field_ids[i];
        }
        if ((rc = mcdc_pq__writer_add_element(w, &e)) < 0)
            goto fail;
    }
    *out = w;
    return 0;
fail:
    mcdc_parquet_writer_free(w);
    return rc;
}

static int check_row(const mcdc_parquet_writer *w, const mcdc_value *values)
{
    for (size_t i = 0; i < w->n_cols; i++) {
        const mcdc_pq_column *c = &w->cols[i];
        const mcdc_value *v = &values[i];
        /* flat columns: max_def is 1 when the column is nullable, else 0 */
        if (!(v->is_null ? c->max_def == 0 : c->check != MCDC_PQ_CHECK_NONE))
            continue;
        const mcdc_column *col = &w->schema->cols[i];
        if (v->is_null)
            return mcdc_error_set(MCDC_EINVAL, "row %lld, column %s: null in a column that "
                                  "is not nullable", (long long)w->num_rows, col->name);
        int rc = mcdc_pq__column_check(c, v, col->name);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int mcdc_parquet_writer_write_rows(mcdc_parquet_writer *w, const mcdc_value *values, size_t n_rows)
{
    MCDC_ASSERT_ARG(w && (values || n_rows == 0));
    if (w->failed)
        return w->failed;
    if (w->closed || !w->schema)
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: %s", w->closed ? "already closed"
                              : "opened for nested rows; use mcdc_parquet_writer_write_json");
    /* Column by column over runs of rows, each run ending where the row group is due a
     * measure (every 1024 rows) or at the last row: one column's state stays at hand for a
     * run, and a value costs no dispatch over the columns (ADR 0058). The pages are those
     * of row by row, since a flat column's page is cut after the row that filled it either
     * way; the row group is measured between runs only (row by row also measured after a
     * page cut), so it may close up to 1023 rows later. A run's rows are all checked
     * before any is written: the rows before a refused one are written, it and the rest
     * not, as row by row. */
    while (n_rows > 0) {
        int rc;
        if ((w->page_full || (w->rg_rows & 1023) == 0) && (rc = mcdc_pq__writer_begin_row(w)) < 0)
            return rc;
        size_t run = 1024 - (size_t)(w->rg_rows & 1023), ok = 0;
        if (run > n_rows)
            run = n_rows;
        int bad = 0;
        for (; ok < run; ok++)
            if ((bad = check_row(w, values + ok * w->n_cols)) < 0)
                break;
        bool full = false;
        for (size_t i = 0; i < w->n_cols && ok > 0; i++) {
            mcdc_pq_column *c = &w->cols[i];
            if ((rc = mcdc_pq__column_add_flat(c, values + i, w->n_cols, ok, &full)) < 0)
                return mcdc_pq__writer_fail(w, rc);
        }
        w->page_full = full;
        w->rg_rows += (int64_t)ok;
        w->num_rows += (int64_t)ok;
        if (bad < 0)
            return bad;
        values += ok * w->n_cols;
        n_rows -= ok;
    }
    return 0;
}

int64_t mcdc_parquet_writer_rows(const mcdc_parquet_writer *w)
{
    return w->num_rows;
}

int mcdc_parquet_writer_write_row(mcdc_parquet_writer *w, const mcdc_value *values)
{
    return mcdc_parquet_writer_write_rows(w, values, 1);
}

/* ---------------------------------------------------------------- close */

static int write_footer(mcdc_parquet_writer *w)
{
    mcdc_pq_file_metadata m = { 0 };
    m.version = 1;
    m.schema = w->elems;
    m.n_schema = w->n_elems;
    m.num_rows = w->num_rows;
    m.row_groups = w->rgs;
    m.n_row_groups = w->n_rgs;
    m.kv = w->kv;
    m.n_kv = w->n_kv;
    m.created_by = w->created_by;
    m.has_column_orders = true;
    m.n_column_orders = w->n_cols;
    m.column_orders = calloc(w->n_cols ? w->n_cols : 1, sizeof *m.column_orders);
    if (!m.column_orders)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < w->n_cols; i++)
        m.column_orders[i] = 1; /* TYPE_ORDER */
    mcdc_buf f = MCDC_BUF_INIT((size_t)1 << 31);
    int rc = mcdc_pq__write_file_metadata(&f, &m);
    free(m.column_orders);
    if (rc == 0 && f.len > UINT32_MAX)
        rc = mcdc_error_set(MCDC_EINVAL, "%s: footer of %zu bytes is over 4 GiB", w->path, f.len);
    if (rc == 0) {
        uint32_t len = (uint32_t)f.len;
        uint8_t tail[8] = { (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
                            (uint8_t)(len >> 24), 'P', 'A', 'R', '1' };
        if ((rc = sink(w, f.ptr, f.len)) == 0)
            rc = sink(w, tail, 8);
    }
    mcdc_buf_dispose(&f);
    return rc;
}

static int collect_result(mcdc_parquet_writer *w, mcdc_parquet_write_result *r)
{
    r->file_size = w->offset;
    r->num_rows = w->num_rows;
    r->n_row_groups = w->n_rgs;
    r->cols = calloc(w->n_cols ? w->n_cols : 1, sizeof *r->cols);
    if (!r->cols)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    r->n_cols = w->n_cols;
    for (size_t i = 0; i < w->n_cols; i++) {
        const mcdc_pq_column *c = &w->cols[i];
        mcdc_parquet_column_stats *s = &r->cols[i];
        s->type = c->type;
        size_t len = 0;
        for (size_t k = 0; k < c->n_path; k++)
            len += strlen(c->path[k]) + 1;
        if (!(s->path = malloc(len + 1)))
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        s->path[0] = 0;
        for (size_t k = 0; k < c->n_path; k++) {
            if (k)
                strcat(s->path, ".");
            strcat(s->path, c->path[k]);
        }
        int rc = mcdc_pq__column_file_stats(c, &s->null_count, &s->has_min_max, &s->min, &s->max);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int mcdc_parquet_writer_close(mcdc_parquet_writer *w, mcdc_parquet_write_result *result)
{
    MCDC_ASSERT_ARG(w);
    if (result)
        memset(result, 0, sizeof *result);
    if (w->closed)
        return w->failed ? w->failed : mcdc_error_set(MCDC_EINVAL, "parquet writer: already closed");
    w->closed = true;
    if (w->failed)
        return w->failed;
    int rc = flush_row_group(w);
    if (rc == 0)
        rc = write_footer(w);
    if (rc == 0)
        rc = obuf_flush(w);
    if (rc == 0) {
        /* durable, then published without replacing (locally: fsync, renameat2
         * RENAME_NOREPLACE or link(2), fsync of the directory) */
        rc = mcdc_storage_writer_commit(w->out);
        w->linked = rc == 0;
    }
    if (rc == 0 && result && (rc = collect_result(w, result)) < 0)
        mcdc_parquet_write_result_dispose(result);
    return mcdc_pq__writer_fail(w, rc);
}

void mcdc_parquet_write_result_dispose(mcdc_parquet_write_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->cols && i < r->n_cols; i++) {
        mcdc_parquet_column_stats *s = &r->cols[i];
        free(s->path);
        if (s->has_min_max &&
            (s->type.type == MCDC_TYPE_STRING || s->type.type == MCDC_TYPE_BINARY)) {
            free((char *)s->min.v.s.ptr);
            free((char *)s->max.v.s.ptr);
        }
    }
    free(r->cols);
    memset(r, 0, sizeof *r);
}

void mcdc_parquet_writer_free(mcdc_parquet_writer *w)
{
    if (!w)
        return;
    mcdc_storage_writer_free(w->out); /* not committed: nothing is left behind */
    free(w->path);
    free(w->created_by);
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    free(w->kv);
    for (size_t i = 0; i < w->n_cols; i++)
        mcdc_pq__column_dispose(&w->cols[i]);
    free(w->cols);
    for (size_t i = 0; i < w->n_elems; i++)
        free(w->elems[i].name);
    free(w->elems);
    mcdc_pq_file_metadata tmp = { 0 };
    tmp.row_groups = w->rgs;
    tmp.n_row_groups = w->n_rgs;
    mcdc_pq__file_metadata_dispose(&tmp);
    mcdc_buf_dispose(&w->obuf);
    ZSTD_freeCCtx(w->cfg.zstd_cctx);
    mcdc_schema_free(w->schema);
    mcdc_parquet_node_free(w->root);
    free(w->staged);
    free(w);
}
