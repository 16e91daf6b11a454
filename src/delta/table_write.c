/*
 * delta/table_write.c: writing rows into new data files of a table, ready for add actions.
 *
 * Rows follow the table's schema (all top-level columns, in order). Partition columns are
 * not stored in the files: rows are split by their partition values, one open data file
 * per distinct combination, and each file's add action carries the values. A file is
 * closed and a new one started once its rows pass the target size (estimated from the
 * values' sizes). Each file is one mcdc_delta_datafile (delta/datafile.c: unique name at
 * the table root, fsync and link, stats), invisible until a commit names it; a writer
 * freed without finish removes the files it wrote. Failpoint: delta.writer.file_closed
 * (a data file is complete and linked, nothing committed). A table with column mapping in
 * name mode (flat columns) is written as PROTOCOL.md "Column Mapping" asks of writers:
 * file columns under their physical names with their ids as Parquet field ids, stats and
 * partition values keyed by physical name; id mode is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "delta/internal.h"
#include "mcdc/failpoint.h"
#include "mcdc/parquet.h"
#include "mcdc/time.h"

typedef struct part_file {
    char                *key;      /* owned: the partition values as one string */
    mcdc_delta_map       values;   /* partition column -> text */
    mcdc_delta_datafile *df;       /* the open file, or NULL */
    int64_t              est_bytes; /* estimated bytes written to the open file */
} part_file;

struct mcdc_delta_writer {
    char            *table;      /* owned: table root */
    mcdc_schema     *table_schema; /* owned: all columns (flat) */
    mcdc_schema     *file_schema;  /* owned: columns stored in files */
    int             *file_col;   /* per table column: index in file_schema, or -1 */
    int             *part_col;   /* per table column: partition index, or -1 */
    size_t           n_part;
    char           **part_names; /* owned partition column names, in metadata order */
    mcdc_parquet_writer_options popts;
    int64_t          target_bytes;
    part_file       *parts;
    size_t           n_parts;
    mcdc_delta_file *done;       /* closed files' add actions */
    size_t           n_done;
    mcdc_value      *frow;       /* scratch row for the file schema */
    int32_t         *field_ids;  /* owned, per file column: delta.columnMapping.id; NULL
                                    without column mapping */
    char           **part_keys;  /* owned, per table column: the partitionValues key (the
                                    physical name under column mapping), NULL if not one */
    int              failed;     /* sticky error */
};

void mcdc_delta_writer_free(mcdc_delta_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_parts; i++) {
        mcdc_delta_datafile_free(w->parts[i].df); /* removes an unfinished file */
        free(w->parts[i].key);
        mcdc_delta_map_clear(&w->parts[i].values);
    }
    free(w->parts);
    for (size_t i = 0; i < w->n_done; i++) {
        /* written but never handed out: nobody will commit it */
        mcdc_delta_datafile_remove(w->table, w->done[i].path);
        mcdc_delta_file_clear(&w->done[i]);
    }
    free(w->done);
    for (size_t i = 0; i < w->n_part; i++)
        free(w->part_names[i]);
    free(w->part_names);
    /* part_keys has one slot per table column: freed while the table schema still is */
    for (size_t i = 0; w->part_keys && w->table_schema && i < w->table_schema->n_cols; i++)
        free(w->part_keys[i]);
    free(w->part_keys);
    mcdc_schema_free(w->table_schema);
    mcdc_schema_free(w->file_schema);
    free(w->file_col);
    free(w->part_col);
    free(w->frow);
    free(w->field_ids);
    free(w->table);
    free(w);
}

int mcdc_delta_writer_open(mcdc_delta_writer **out, const mcdc_delta_snapshot *snap,
                           const mcdc_delta_writer_options *opts)
{
    *out = NULL;
    bool cm = snap->column_mapping == MCDC_DELTA_CM_NAME;
    if (snap->column_mapping != MCDC_DELTA_CM_NONE && !cm)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: writing rows into a table with column "
                              "mapping in id mode is not supported (name mode is)",
                              snap->table_path);
    for (size_t i = 0; cm && snap->schema && i < snap->schema->n_fields; i++)
        if (snap->schema->fields[i].type.kind != MCDC_DELTA_TYPE_PRIMITIVE)
            return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: writing rows into a table with column "
                                  "mapping and a nested column (%s) is not supported",
                                  snap->table_path, snap->schema->fields[i].name);
    mcdc_delta_writer *w = calloc(1, sizeof *w);
    if (!w)
        return mcdc_error_set(MCDC_ENOMEM, "writer: out of memory");
    int rc = mcdc_delta_schema_to_flat(&w->table_schema, snap->schema);
    w->table = strdup(snap->table_path);
    w->file_schema = mcdc_schema_new();
    size_t n = w->table_schema ? w->table_schema->n_cols : 0;
    w->file_col = calloc(n + 1, sizeof *w->file_col);
    w->part_col = calloc(n + 1, sizeof *w->part_col);
    w->frow = calloc(n + 1, sizeof *w->frow);
    w->n_part = snap->metadata.n_partition_columns;
    w->part_names = calloc(w->n_part + 1, sizeof *w->part_names);
    w->part_keys = calloc(n + 1, sizeof *w->part_keys);
    if (cm)
        w->field_ids = calloc(n + 1, sizeof *w->field_ids);
    if (rc == 0 && (!w->table || !w->file_schema || !w->file_col || !w->part_col || !w->frow ||
                    !w->part_names || !w->part_keys || (cm && !w->field_ids)))
        rc = mcdc_error_set(MCDC_ENOMEM, "writer: out of memory");
    if (rc == 0 && cm && n != snap->schema->n_fields)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: the flat schema does not match the table's",
                            snap->table_path);
    for (size_t k = 0; rc == 0 && k < w->n_part; k++)
        if (!(w->part_names[k] = strdup(snap->metadata.partition_columns[k])))
            rc = mcdc_error_set(MCDC_ENOMEM, "writer: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const mcdc_column *c = &w->table_schema->cols[i];
        /* under column mapping (name mode) files and partition values use the physical
         * name, and the Parquet field id is the column's id (PROTOCOL.md "Column Mapping",
         * writer requirements) */
        const mcdc_delta_field *f = cm ? &snap->schema->fields[i] : NULL;
        const char *stored = f && f->physical_name ? f->physical_name : c->name;
        w->part_col[i] = -1;
        w->file_col[i] = -1;
        for (size_t k = 0; k < w->n_part; k++)
            if (strcasecmp(w->part_names[k], c->name) == 0)
                w->part_col[i] = (int)k;
        if (w->part_col[i] >= 0) {
            if (!(w->part_keys[i] = strdup(stored)))
                rc = mcdc_error_set(MCDC_ENOMEM, "writer: out of memory");
        } else {
            w->file_col[i] = (int)w->file_schema->n_cols;
            if (cm)
                w->field_ids[w->file_schema->n_cols] = f->field_id >= 0 && f->field_id <= INT32_MAX
                                                           ? (int32_t)f->field_id : -1;
            rc = mcdc_schema_add(w->file_schema, stored, c->type, c->precision, c->scale,
                                 c->nullable);
        }
    }
    mcdc_parquet_writer_options_init(&w->popts);
    w->popts.codec = MCDC_PARQUET_ZSTD;
    w->popts.field_ids = w->field_ids;
    if (opts && opts->no_dictionary)
        w->popts.dictionary = false;
    const char *codec = opts && opts->codec
                            ? opts->codec
                            : mcdc_delta_snapshot_config(snap, "delta.parquet.compression.codec", NULL);
    if (rc == 0 && codec)
        rc = mcdc_parquet_codec_parse(&w->popts.codec, codec);
    w->target_bytes = opts && opts->target_file_bytes > 0 ? opts->target_file_bytes
                                                          : (int64_t)128 << 20;
    if (rc == 0 && w->file_schema->n_cols == 0)
        rc = mcdc_error_set(MCDC_EINVAL, "%s: every column is a partition column", snap->table_path);
    if (rc < 0) {
        mcdc_delta_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* The text of a partition value (PROTOCOL "Partition Value Serialization"). */
static int partition_text(mcdc_buf *b, const mcdc_column *c, const mcdc_value *v)
{
    char t[MCDC_TIME_STRLEN], d[48];
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN:
        return mcdc_buf_puts(b, v->v.b ? "true" : "false");
    case MCDC_TYPE_FLOAT:
        return mcdc_buf_printf(b, "%.9g", (double)v->v.f);
    case MCDC_TYPE_DOUBLE:
        return mcdc_buf_printf(b, "%.17g", v->v.d);
    case MCDC_TYPE_DECIMAL:
        return mcdc_buf_puts(b, mcdc_decimal_format(d, v->v.dec, c->scale));
    case MCDC_TYPE_DATE: {
        int64_t y;
        unsigned m, dd;
        mcdc_civil_from_days(v->v.i, &y, &m, &dd);
        return mcdc_buf_printf(b, "%04lld-%02u-%02u", (long long)y, m, dd);
    }
    case MCDC_TYPE_TIMESTAMP:
        return mcdc_buf_puts(b, mcdc_time_format(t, v->v.i, 6, true));
    case MCDC_TYPE_TIMESTAMP_NTZ:
        mcdc_time_format(t, v->v.i, 6, false);
        t[10] = ' ';
        return mcdc_buf_puts(b, t);
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        return mcdc_buf_put(b, v->v.s.ptr, v->v.s.len);
    default:
        return mcdc_buf_printf(b, "%lld", (long long)v->v.i);
    }
}

static int64_t value_bytes(const mcdc_column *c, const mcdc_value *v)
{
    if (v->is_null)
        return 1;
    if (c->type == MCDC_TYPE_STRING || c->type == MCDC_TYPE_BINARY)
        return (int64_t)v->v.s.len + 4;
    return c->type == MCDC_TYPE_DECIMAL ? 16 : 8;
}

/* Close part @p p's file and record its add action. */
static int close_part(mcdc_delta_writer *w, part_file *p);

static int open_part_file(mcdc_delta_writer *w, part_file *p)
{
    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    o.parquet = w->popts; /* file_schema already holds physical names and field ids */
    p->est_bytes = 0;
    int rc = mcdc_delta_datafile_open(&p->df, w->table, w->file_schema, &o);
    for (size_t i = 0; rc == 0 && i < p->values.n; i++)
        rc = mcdc_delta_datafile_set_partition(p->df, p->values.kv[i].key,
                                               p->values.kv[i].value);
    return rc;
}

int mcdc_delta_writer_write(mcdc_delta_writer *w, const mcdc_value *row)
{
    if (w->failed)
        return w->failed;
    mcdc_buf key = MCDC_BUF_INIT(1 << 20);
    int rc = 0;
    int64_t bytes = 0;
    for (size_t i = 0; i < w->table_schema->n_cols; i++) {
        const mcdc_column *c = &w->table_schema->cols[i];
        bytes += value_bytes(c, &row[i]);
        if (w->part_col[i] >= 0) {
            mcdc_buf_putc(&key, row[i].is_null ? 'N' : 'V');
            if (!row[i].is_null)
                rc = partition_text(&key, c, &row[i]);
            mcdc_buf_putc(&key, '\x1f');
        } else {
            w->frow[w->file_col[i]] = row[i];
        }
    }
    part_file *p = NULL;
    for (size_t i = 0; rc == 0 && i < w->n_parts; i++)
        if (strcmp(w->parts[i].key, key.ptr ? key.ptr : "") == 0)
            p = &w->parts[i];
    if (rc == 0 && !p) {
        part_file *np = realloc(w->parts, (w->n_parts + 1) * sizeof *np);
        if (!np) {
            rc = mcdc_error_set(MCDC_ENOMEM, "writer: out of memory");
        } else {
            w->parts = np;
            p = &np[w->n_parts++];
            memset(p, 0, sizeof *p);
            p->key = strdup(key.ptr ? key.ptr : "");
            for (size_t i = 0; rc == 0 && i < w->table_schema->n_cols; i++) {
                if (w->part_col[i] < 0)
                    continue;
                mcdc_buf t = MCDC_BUF_INIT(1 << 20);
                if (!row[i].is_null)
                    rc = partition_text(&t, &w->table_schema->cols[i], &row[i]);
                if (rc == 0)
                    rc = mcdc_delta_map_set(&p->values, w->part_keys[i],
                                            row[i].is_null ? NULL : (t.ptr ? t.ptr : ""));
                mcdc_buf_dispose(&t);
            }
        }
    }
    mcdc_buf_dispose(&key);
    if (rc == 0 && !p->df)
        rc = open_part_file(w, p);
    if (rc == 0)
        rc = mcdc_delta_datafile_write(p->df, w->frow);
    if (rc == MCDC_EINVAL)
        return rc; /* the row was refused; the writer stays usable */
    if (rc == 0) {
        p->est_bytes += bytes;
        if (p->est_bytes >= w->target_bytes)
            rc = close_part(w, p);
    }
    if (rc < 0)
        w->failed = rc;
    return rc;
}

static int close_part(mcdc_delta_writer *w, part_file *p)
{
    mcdc_delta_file *d = realloc(w->done, (w->n_done + 1) * sizeof *d);
    if (!d)
        return mcdc_error_set(MCDC_ENOMEM, "writer: out of memory");
    w->done = d;
    int rc = mcdc_delta_datafile_finish(p->df, &d[w->n_done]);
    mcdc_delta_datafile_free(p->df);
    p->df = NULL;
    if (rc < 0)
        return rc;
    w->n_done++;
    mcdc_failpoint("delta.writer.file_closed");
    return 0;
}

int mcdc_delta_writer_finish(mcdc_delta_writer *w, mcdc_delta_file **files, size_t *n_files)
{
    *files = NULL;
    *n_files = 0;
    if (w->failed)
        return w->failed;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->n_parts; i++)
        if (w->parts[i].df)
            rc = close_part(w, &w->parts[i]);
    if (rc < 0)
        return w->failed = rc;
    *files = w->done;
    *n_files = w->n_done;
    w->done = NULL;
    w->n_done = 0;
    return 0;
}

void mcdc_delta_files_free(mcdc_delta_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mcdc_delta_file_clear(&files[i]);
    free(files);
}
