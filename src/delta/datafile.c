/*
 * delta/datafile.c: one new data file of a table and its add action, the one writer of
 * data files (the table writer, bronze, facts, control rows and silver all use it), and
 * the add action's stats.
 *
 * Guarantees: the file gets a unique name (part-00000-<uuid>-c000<codec>.parquet) at the
 * table root; the Parquet writer writes it under a hidden temporary name, fsyncs it and
 * links it in without replacing through the storage seam, so it is whole before the add
 * action naming it exists and invisible until a commit names it. A datafile freed before
 * finish leaves no file; a finish that fails after the link removes the file. Under column
 * mapping (name mode) the file's columns, stats and partition values use physical names
 * and the columns carry their ids as Parquet field ids. Stats (numRecords, minValues,
 * maxValues, nullCount) come from the Parquet writer's exact per-column statistics:
 * decimals written exactly, timestamps truncated to milliseconds (readers widen a max by
 * 999 µs), strings longer than 32 characters get a 32-character min prefix and no max
 * (unless whole strings are asked for), booleans and binaries only a null count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta/internal.h"
#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "mcdc/storage.h"
#include "mcdc/time.h"

#define STATS_STRING_PREFIX 32

struct mcdc_delta_datafile {
    mcdc_parquet_writer *pw;        /* the open writer; NULL once closed */
    mcdc_schema         *schema;    /* owned: the file's columns (physical names) */
    char                *table;     /* owned: the table root */
    char                *rel;       /* owned: file name relative to the root */
    int64_t              rows;      /* rows written */
    int64_t              mtime;     /* add action's modificationTime; <= 0: now */
    bool                 whole_strings;
    mcdc_delta_map       partition; /* partition values */
    mcdc_delta_map       tags;      /* add action tags */
};

void mcdc_delta_datafile_free(mcdc_delta_datafile *f)
{
    if (!f)
        return;
    mcdc_parquet_writer_free(f->pw); /* an unclosed writer removes its temporary file */
    mcdc_schema_free(f->schema);
    mcdc_delta_map_clear(&f->partition);
    mcdc_delta_map_clear(&f->tags);
    free(f->table);
    free(f->rel);
    free(f);
}

static const char *codec_ext(mcdc_parquet_codec c)
{
    return c == MCDC_PARQUET_ZSTD     ? ".zstd"
           : c == MCDC_PARQUET_SNAPPY ? ".snappy"
           : c == MCDC_PARQUET_GZIP   ? ".gz"
                                      : "";
}

int mcdc_delta_datafile_open(mcdc_delta_datafile **out, const char *table_path,
                             const mcdc_schema *schema, const mcdc_delta_datafile_options *opts)
{
    *out = NULL;
    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    if (opts)
        o = *opts;
    mcdc_delta_datafile *f = calloc(1, sizeof *f);
    char uuid[37], name[96];
    snprintf(name, sizeof name, "part-00000-%s-c000%s.parquet", mcdc_delta_uuid(uuid),
             codec_ext(o.parquet.codec));
    if (!f || !(f->table = strdup(table_path)) || !(f->rel = strdup(name))) {
        mcdc_delta_datafile_free(f);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", table_path);
    }
    f->mtime = o.modification_time;
    f->whole_strings = o.whole_strings;
    int32_t *ids = NULL;
    int rc = 0;
    if (o.column_mapping) {
        rc = mcdc_delta_physical_schema(&f->schema, &ids, table_path, schema);
        o.parquet.field_ids = ids;
    } else if (!(f->schema = mcdc_schema_copy(schema))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", table_path);
    }
    if (rc == 0 && o.make_dirs)
        rc = mcdc_storage_mkdirs(table_path);
    char *abs = rc == 0 ? mcdc_delta__join(table_path, name) : NULL;
    if (rc == 0 && !abs)
        rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", table_path);
    if (rc == 0)
        rc = mcdc_parquet_writer_open(&f->pw, abs, f->schema, &o.parquet);
    free(abs);
    free(ids);
    if (rc < 0) {
        mcdc_delta_datafile_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int mcdc_delta_datafile_write(mcdc_delta_datafile *f, const mcdc_value *row)
{
    int rc = mcdc_parquet_writer_write_row(f->pw, row);
    if (rc == 0)
        f->rows++;
    return rc;
}

int mcdc_delta_datafile_write_rows(mcdc_delta_datafile *f, const mcdc_value *rows, size_t n_rows)
{
    int64_t before = mcdc_parquet_writer_rows(f->pw);
    int rc = mcdc_parquet_writer_write_rows(f->pw, rows, n_rows);
    f->rows += mcdc_parquet_writer_rows(f->pw) - before;
    return rc;
}

int64_t mcdc_delta_datafile_rows(const mcdc_delta_datafile *f)
{
    return f->rows;
}

int mcdc_delta_datafile_set_partition(mcdc_delta_datafile *f, const char *key, const char *value)
{
    return mcdc_delta_map_set(&f->partition, key, value);
}

int mcdc_delta_datafile_set_tag(mcdc_delta_datafile *f, const char *key, const char *value)
{
    return mcdc_delta_map_set(&f->tags, key, value);
}

void mcdc_delta_datafile_remove(const char *table_path, const char *rel_path)
{
    char *p = mcdc_delta__join(table_path, rel_path);
    if (p && mcdc_storage_delete(p) < 0)
        mcdc_error_clear(); /* debris for vacuum */
    free(p);
}

static int stats_json(mcdc_buf *b, const mcdc_schema *schema, const mcdc_parquet_write_result *r,
                      bool whole_strings);

static int map_copy(mcdc_delta_map *to, const mcdc_delta_map *from)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < from->n; i++)
        rc = mcdc_delta_map_set(to, from->kv[i].key, from->kv[i].value);
    return rc;
}

int mcdc_delta_datafile_finish(mcdc_delta_datafile *f, mcdc_delta_file *out)
{
    memset(out, 0, sizeof *out);
    mcdc_parquet_write_result r = { 0 };
    int rc = mcdc_parquet_writer_close(f->pw, &r);
    mcdc_parquet_writer_free(f->pw);
    f->pw = NULL;
    if (rc < 0) {
        mcdc_parquet_write_result_dispose(&r);
        return rc;
    }
    mcdc_buf st = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    rc = stats_json(&st, f->schema, &r, f->whole_strings);
    if (rc == 0) {
        out->path = strdup(f->rel); /* letters, digits, '-' and '.': nothing to encode */
        out->size = (int64_t)r.file_size;
        out->modification_time = f->mtime > 0 ? f->mtime : mcdc_delta__now_ms();
        out->deletion_timestamp = -1;
        out->data_change = true;
        out->stats = mcdc_buf_detach(&st);
        out->base_row_id = out->default_row_commit_version = -1;
        out->dv.offset = -1;
        if (!out->path || !out->stats)
            rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", f->table);
    }
    if (rc == 0)
        rc = map_copy(&out->partition_values, &f->partition);
    if (rc == 0)
        rc = map_copy(&out->tags, &f->tags);
    if (rc < 0) {
        mcdc_delta_file_clear(out);
        mcdc_delta_datafile_remove(f->table, f->rel);
    }
    mcdc_buf_dispose(&st);
    mcdc_parquet_write_result_dispose(&r);
    return rc;
}

int mcdc_delta__put_decimal(mcdc_buf *b, mcdc_int128 v, int scale)
{
    char d[48];
    return mcdc_buf_puts(b, mcdc_decimal_format(d, v, scale));
}

int mcdc_delta__put_date(mcdc_buf *b, int64_t days, bool quoted)
{
    int64_t y;
    unsigned m, dd;
    mcdc_civil_from_days(days, &y, &m, &dd);
    return mcdc_buf_printf(b, quoted ? "\"%04lld-%02u-%02u\"" : "%04lld-%02u-%02u", (long long)y, m,
                           dd);
}

/* Append one stats value as JSON; returns 1 when the value is skipped. */
static int stat_json(mcdc_buf *b, const mcdc_column *c, const mcdc_value *v, bool is_max,
                     bool whole_strings)
{
    char t[MCDC_TIME_STRLEN];
    switch (c->type) {
    case MCDC_TYPE_BYTE:
    case MCDC_TYPE_SHORT:
    case MCDC_TYPE_INT:
    case MCDC_TYPE_LONG:
        return mcdc_buf_printf(b, "%lld", (long long)v->v.i);
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE: {
        double x = c->type == MCDC_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        if (!isfinite(x))
            return 1;
        return mcdc_buf_printf(b, c->type == MCDC_TYPE_FLOAT ? "%.9g" : "%.17g", x);
    }
    case MCDC_TYPE_DECIMAL:
        return mcdc_delta__put_decimal(b, v->v.dec, c->scale);
    case MCDC_TYPE_DATE:
        return mcdc_delta__put_date(b, v->v.i, true);
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ: {
        int64_t ms_floor = v->v.i - ((v->v.i % 1000) + 1000) % 1000;
        return mcdc_buf_printf(b, "\"%s\"", mcdc_time_format(t, ms_floor, 3,
                                                              c->type == MCDC_TYPE_TIMESTAMP));
    }
    case MCDC_TYPE_STRING: {
        /* count code points; cut a min at 32, skip a long max */
        size_t cps = 0, cut = v->v.s.len;
        for (size_t i = 0; !whole_strings && i < v->v.s.len; i++) {
            if (((unsigned char)v->v.s.ptr[i] & 0xC0) != 0x80) {
                if (cps == STATS_STRING_PREFIX) {
                    cut = i;
                    break;
                }
                cps++;
            }
        }
        if (cut < v->v.s.len && is_max)
            return 1;
        return mcdc_json_quote(b, v->v.s.ptr, cut);
    }
    default:
        return 1;
    }
}

static int stats_json(mcdc_buf *b, const mcdc_schema *schema, const mcdc_parquet_write_result *r,
                      bool whole_strings)
{
    int rc = mcdc_buf_printf(b, "{\"numRecords\":%lld", (long long)r->num_rows);
    static const char *const sections[] = { "minValues", "maxValues", "nullCount" };
    for (int s = 0; rc == 0 && s < 3; s++) {
        rc = mcdc_buf_printf(b, ",\"%s\":{", sections[s]);
        bool first = true;
        for (size_t i = 0; rc == 0 && i < r->n_cols && i < schema->n_cols; i++) {
            const mcdc_column *c = &schema->cols[i];
            const mcdc_parquet_column_stats *cs = &r->cols[i];
            if (s < 2 && !cs->has_min_max)
                continue;
            size_t mark = b->len;
            rc = mcdc_buf_puts(b, first ? "" : ",");
            if (rc == 0)
                rc = mcdc_json_quote(b, c->name, strlen(c->name));
            if (rc == 0)
                rc = mcdc_buf_putc(b, ':');
            if (rc == 0) {
                if (s == 2)
                    rc = mcdc_buf_printf(b, "%lld", (long long)cs->null_count);
                else
                    rc = stat_json(b, c, s == 0 ? &cs->min : &cs->max, s == 1, whole_strings);
            }
            if (rc == 1) { /* skipped: drop the key */
                b->len = mark;
                b->ptr[b->len] = '\0';
                rc = 0;
                continue;
            }
            first = false;
        }
        if (rc == 0)
            rc = mcdc_buf_putc(b, '}');
    }
    return rc ? rc : mcdc_buf_putc(b, '}');
}

int mcdc_delta_stats_json(mcdc_buf *b, const mcdc_schema *schema, const mcdc_parquet_write_result *r)
{
    return stats_json(b, schema, r, false);
}
