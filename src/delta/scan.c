/*
 * delta/scan.c: the rows of a snapshot: every live file's rows, with projection,
 * partition values filled in from the log, deletion vectors applied, and files skipped
 * when their partition values or stats prove that a simple predicate cannot match.
 *
 * Columns are found in data files by their physical name (column mapping 'name' mode) or
 * by their Parquet field id ('id' mode: a file without the id reads NULL, whatever its
 * names); a column missing from a file reads as NULL (schema evolution). Partition columns come from add.partitionValues, parsed by the
 * column's type, never from directory names. Rows are not filtered by the predicate: a
 * file that may match is returned whole (the caller filters when it needs exact rows).
 * A file with a deletion vector is read without row-group skipping so that row indexes
 * stay exact; the deleted indexes are skipped. Rows come from the Parquet reader in
 * batches; when a file's columns are the output's, in order, with nothing to fill in or
 * rename, the reader's rows are handed out as they are (no copy).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "delta/internal.h"
#include "mcdc/parquet.h"
#include "mcdc/time.h"

/* Rows asked of the Parquet reader at once. */
#define SCAN_BATCH 128

struct mcdc_delta_scan {
    const mcdc_delta_snapshot *snap;   /* borrowed */
    mcdc_schema               *schema; /* output columns (logical names, table types) */
    bool                      *nested; /* per output column: cells are JSON text */
    int                       *field;  /* per output column: index in snap->schema */
    int                       *part;   /* per output column: partition column index or -1 */
    size_t                     n_out;
    mcdc_delta_pred            pred;
    size_t                     next_file; /* index into snap->files (or into only) */
    size_t                    *only;      /* owned: the files to read, or NULL for all */
    size_t                     n_only;
    mcdc_parquet_reader       *reader;    /* the open file, or NULL */
    int                       *src;       /* per output column: index in the reader row, or -1 */
    bool                       direct;    /* the reader's rows are the output rows as they are */
    const mcdc_value          *batch;     /* rows from the reader, borrowed until its next call */
    size_t                     batch_n, batch_at, batch_width; /* rows, next, cells a row */
    mcdc_value                *row;       /* output cells */
    mcdc_value                *pvals;     /* partition values of the current file */
    char                     **pbufs;     /* owned text behind pvals (decoded binaries) */
    uint64_t                  *deleted;   /* DV rows of the current file, ascending */
    size_t                     n_deleted, at_deleted;
    int64_t                    row_index; /* index of the next row in the current file */
    char                     **renamed;   /* per output column: nested JSON with logical names */
    mcdc_column               *from;      /* per output column: the file's type when it was
                                           * written before a widening (type 0: as the table) */
    int64_t                    files_skipped;
    int                        failed;    /* sticky error */
};

static void close_file(mcdc_delta_scan *s)
{
    mcdc_parquet_reader_free(s->reader);
    s->reader = NULL;
    s->batch = NULL;
    s->batch_n = s->batch_at = 0;
    free(s->src);
    s->src = NULL;
    free(s->from);
    s->from = NULL;
    free(s->deleted);
    s->deleted = NULL;
    s->n_deleted = s->at_deleted = 0;
    for (size_t i = 0; s->pbufs && i < s->n_out; i++) {
        free(s->pbufs[i]);
        s->pbufs[i] = NULL;
    }
}

void mcdc_delta_scan_free(mcdc_delta_scan *s)
{
    if (!s)
        return;
    close_file(s);
    mcdc_schema_free(s->schema);
    free(s->nested);
    free(s->field);
    free(s->part);
    free(s->row);
    free(s->pvals);
    free(s->pbufs);
    for (size_t i = 0; s->renamed && i < s->n_out; i++)
        free(s->renamed[i]);
    free(s->renamed);
    free(s->only);
    free(s);
}

/* Parse a partition value's text into @p v for @p col. @p buf receives owned memory. */
static int parse_partition(mcdc_value *v, char **buf, const mcdc_column *col, const char *text,
                           const char *name)
{
    memset(v, 0, sizeof *v);
    if (!text || !*text) { /* null, "" and a missing key are NULL */
        v->is_null = true;
        return 0;
    }
    char *end;
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN:
        if (strcasecmp(text, "true") == 0)
            v->v.b = true;
        else if (strcasecmp(text, "false") != 0)
            goto bad;
        return 0;
    case MCDC_TYPE_BYTE:
    case MCDC_TYPE_SHORT:
    case MCDC_TYPE_INT:
    case MCDC_TYPE_LONG:
        v->v.i = strtoll(text, &end, 10);
        if (end == text || *end)
            goto bad;
        return 0;
    case MCDC_TYPE_FLOAT:
        v->v.f = strtof(text, &end);
        if (end == text || *end)
            goto bad;
        return 0;
    case MCDC_TYPE_DOUBLE:
        v->v.d = strtod(text, &end);
        if (end == text || *end)
            goto bad;
        return 0;
    case MCDC_TYPE_DECIMAL:
        if (mcdc_decimal_parse(&v->v.dec, text, strlen(text), col->precision, col->scale) < 0)
            goto bad;
        return 0;
    case MCDC_TYPE_DATE: {
        int y, m, d;
        char tail;
        if (sscanf(text, "%d-%d-%d%c", &y, &m, &d, &tail) != 3)
            goto bad;
        v->v.i = mcdc_days_from_civil(y, (unsigned)m, (unsigned)d);
        return 0;
    }
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ: {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%s", text);
        if (strlen(tmp) > 10 && tmp[10] == ' ')
            tmp[10] = 'T';
        bool has_zone;
        if (mcdc_time_parse_ex(&v->v.i, &has_zone, tmp) < 0)
            goto bad;
        return 0;
    }
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        *buf = strdup(text);
        if (!*buf)
            return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
        v->v.s.ptr = *buf;
        v->v.s.len = strlen(text);
        return 0;
    }
bad:
    return mcdc_error_set(MCDC_ECORRUPT, "partition value '%s' of column %s is not a valid %s",
                          text, name, mcdc_type_name((char[48]){ 0 }, 48, col));
}

int mcdc_delta_scan_open(mcdc_delta_scan **out, const mcdc_delta_snapshot *snap,
                         const mcdc_delta_scan_options *opts)
{
    *out = NULL;
    mcdc_delta_scan *s = calloc(1, sizeof *s);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
    s->snap = snap;
    s->schema = mcdc_schema_new();
    size_t n_all = snap->schema->n_fields;
    size_t want = opts && opts->n_columns ? opts->n_columns : n_all;
    s->nested = calloc(want + 1, sizeof *s->nested);
    s->field = calloc(want + 1, sizeof *s->field);
    s->part = calloc(want + 1, sizeof *s->part);
    s->row = calloc(want + 1, sizeof *s->row);
    s->pvals = calloc(want + 1, sizeof *s->pvals);
    s->pbufs = calloc(want + 1, sizeof *s->pbufs);
    s->renamed = calloc(want + 1, sizeof *s->renamed);
    if (!s->renamed || !s->schema || !s->nested || !s->field || !s->part || !s->row || !s->pvals || !s->pbufs) {
        mcdc_delta_scan_free(s);
        return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
    }
    if (opts)
        s->pred = opts->pred;
    for (size_t i = 0; i < want; i++) {
        int fi = opts && opts->n_columns ? mcdc_delta_schema_find(snap->schema, opts->columns[i])
                                         : (int)i;
        if (fi < 0) {
            int rc = mcdc_error_set(MCDC_ENOTFOUND, "%s: no column %s", snap->table_path,
                                    opts->columns[i]);
            mcdc_delta_scan_free(s);
            return rc;
        }
        const mcdc_delta_field *f = &snap->schema->fields[fi];
        s->field[i] = fi;
        s->part[i] = -1;
        for (size_t k = 0; k < snap->metadata.n_partition_columns; k++)
            if (strcasecmp(snap->metadata.partition_columns[k], f->name) == 0)
                s->part[i] = (int)k;
        int rc;
        if (f->type.kind == MCDC_DELTA_TYPE_PRIMITIVE) {
            rc = mcdc_schema_add(s->schema, f->name, f->type.prim.type, f->type.prim.precision,
                                 f->type.prim.scale, f->nullable);
        } else {
            s->nested[i] = true;
            rc = mcdc_schema_add(s->schema, f->name, MCDC_TYPE_STRING, 0, 0, true);
        }
        if (rc < 0) {
            mcdc_delta_scan_free(s);
            return rc;
        }
    }
    s->n_out = want;
    *out = s;
    return 0;
}

int mcdc_delta__scan_restrict(mcdc_delta_scan *s, const size_t *files, size_t n)
{
    free(s->only);
    s->only = malloc((n ? n : 1) * sizeof *s->only);
    if (!s->only)
        return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (files[i] >= s->snap->n_files)
            return mcdc_error_set(MCDC_EINVAL, "scan: file index %zu out of range", files[i]);
        s->only[i] = files[i];
    }
    s->n_only = n;
    s->next_file = 0;
    return 0;
}

const mcdc_schema *mcdc_delta_scan_schema(const mcdc_delta_scan *s)
{
    return s->schema;
}

bool mcdc_delta_scan_is_nested(const mcdc_delta_scan *s, size_t i)
{
    return i < s->n_out && s->nested[i];
}

int64_t mcdc_delta_scan_row_index(const mcdc_delta_scan *s)
{
    return s->row_index - 1;
}

int64_t mcdc_delta_scan_files_skipped(const mcdc_delta_scan *s)
{
    return s->files_skipped;
}

/* Open the next file that may match; 0 when one is open, 1 at the end, <0 on error. */
static int open_next(mcdc_delta_scan *s)
{
    const mcdc_delta_snapshot *snap = s->snap;
    while (s->next_file < (s->only ? s->n_only : snap->n_files)) {
        size_t fi = s->only ? s->only[s->next_file] : s->next_file;
        s->next_file++;
        const mcdc_delta_file *f = &snap->files[fi];
        if (s->pred.op != MCDC_DELTA_PRED_NONE && s->pred.op != MCDC_DELTA_PRED_ALL &&
            !mcdc_delta__may_match(snap, f, &s->pred)) {
            s->files_skipped++;
            continue;
        }
        char *path = mcdc_delta_file_abspath(snap, f->path);
        if (!path)
            return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
        int rc = mcdc_parquet_reader_open(&s->reader, path, NULL);
        if (rc < 0) {
            free(path);
            return rc;
        }
        if (f->has_dv) {
            rc = mcdc_delta__dv_load(&s->deleted, &s->n_deleted, snap->table_path, &f->dv);
            if (rc < 0) {
                mcdc_error_prefix("%s", path);
                free(path);
                return rc;
            }
        }
        /* map output columns to the file's columns by physical name */
        const mcdc_schema *fs = mcdc_parquet_reader_schema(s->reader);
        s->src = malloc((s->n_out + 1) * sizeof *s->src);
        s->from = calloc(s->n_out + 1, sizeof *s->from);
        const char **names = malloc((s->n_out + 1) * sizeof *names);
        if (!s->src || !s->from || !names) {
            free(names);
            free(path);
            return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
        }
        size_t n_sel = 0;
        for (size_t i = 0; i < s->n_out; i++) {
            s->src[i] = -1;
            const mcdc_delta_field *fld = &snap->schema->fields[s->field[i]];
            if (s->part[i] >= 0) {
                const char *key = snap->column_mapping != MCDC_DELTA_CM_NONE ? fld->physical_name
                                                                            : fld->name;
                bool found;
                const char *pv = mcdc_delta_map_get(&f->partition_values, key, &found);
                if (!found)
                    pv = mcdc_delta_map_get(&f->partition_values, fld->name, &found);
                rc = parse_partition(&s->pvals[i], &s->pbufs[i], &s->schema->cols[i], pv, fld->name);
                if (rc < 0) {
                    free(names);
                    mcdc_error_prefix("%s", path);
                    free(path);
                    return rc;
                }
                continue;
            }
            const char *phys = snap->column_mapping != MCDC_DELTA_CM_NONE ? fld->physical_name
                                                                         : fld->name;
            int at = -1;
            if (snap->column_mapping == MCDC_DELTA_CM_ID && fld->field_id >= 0) {
                /* 'id' mode: by Parquet field id; a file without that id reads NULL */
                for (size_t k = 0; at < 0 && k < fs->n_cols; k++)
                    if (mcdc_parquet_reader_field_id(s->reader, k) == fld->field_id)
                        at = (int)k;
            } else {
                at = mcdc_schema_find(fs, phys);
            }
            if (at >= 0) {
                s->src[i] = (int)n_sel;
                names[n_sel++] = fs->cols[at].name;
                const mcdc_column *tc = &s->schema->cols[i], *fc = &fs->cols[at];
                if (!s->nested[i] && (fc->type != tc->type || fc->scale != tc->scale) &&
                    mcdc_delta_type_widens(fc, tc))
                    s->from[i] = *fc; /* written before the column was widened */
            }
        }
        rc = n_sel ? mcdc_parquet_reader_select(s->reader, names, n_sel) : 0;
        free(names);
        free(path);
        if (rc < 0)
            return rc;
        s->row_index = 0;
        s->batch_width = mcdc_parquet_reader_schema(s->reader)->n_cols;
        s->direct = s->batch_width == s->n_out;
        for (size_t i = 0; s->direct && i < s->n_out; i++)
            s->direct = s->src[i] == (int)i && !s->from[i].type && !s->nested[i];
        return 0;
    }
    return 1;
}

/* A value of a file written before its column was widened, in the table's type
 * (PROTOCOL.md "Type Widening": readers convert such values to the wider type). */
static void widen_cell(mcdc_value *v, const mcdc_column *from, const mcdc_column *to)
{
    if (v->is_null)
        return;
    mcdc_int128 x;
    switch (to->type) {
    case MCDC_TYPE_DOUBLE:
        v->v.d = from->type == MCDC_TYPE_FLOAT ? (double)v->v.f : (double)v->v.i;
        return;
    case MCDC_TYPE_TIMESTAMP_NTZ: /* from a date: midnight of that day */
        v->v.i *= INT64_C(86400000000);
        return;
    case MCDC_TYPE_DECIMAL:
        x = from->type == MCDC_TYPE_DECIMAL ? v->v.dec : (mcdc_int128)v->v.i;
        for (int k = from->type == MCDC_TYPE_DECIMAL ? from->scale : 0; k < to->scale; k++)
            x *= 10;
        v->v.dec = x;
        return;
    default: /* integers: v.i holds every width */
        return;
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The JSON text of a variant cell: the reader's {"metadata": "0x..", "value": "0x.."}
 * decoded (delta/variant.c). A null value binary (a shredded variant) is refused. */
static int unhex(uint8_t **out, size_t *n, json_t *s)
{
    const char *t = json_string_value(s);
    size_t len = t ? strlen(t) : 0;
    *out = NULL;
    *n = 0;
    if (!t || len < 2 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || len % 2)
        return mcdc_error_set(MCDC_ECORRUPT, "variant: metadata or value is not a binary");
    uint8_t *b = malloc(len / 2 + 1);
    if (!b)
        return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
    for (size_t i = 2; i < len; i += 2) {
        int hi = hexval(t[i]), lo = hexval(t[i + 1]);
        if (hi < 0 || lo < 0) {
            free(b);
            return mcdc_error_set(MCDC_ECORRUPT, "variant: bad hex in a binary");
        }
        b[(i - 2) / 2] = (uint8_t)(hi * 16 + lo);
    }
    *out = b;
    *n = (len - 2) / 2;
    return 0;
}

static int variant_text(mcdc_buf *out, json_t *v)
{
    if (json_is_object(v) && json_is_null(json_object_get(v, "value")))
        return mcdc_error_set(MCDC_EUNSUPPORTED, "variant: a shredded value (typed_value), "
                              "which this build does not read");
    uint8_t *m = NULL, *x = NULL;
    size_t nm = 0, nx = 0;
    int rc = unhex(&m, &nm, json_object_get(v, "metadata"));
    if (rc == 0)
        rc = unhex(&x, &nx, json_object_get(v, "value"));
    if (rc == 0)
        rc = mcdc_delta__variant_to_json(out, m, nm, x, nx);
    free(m);
    free(x);
    return rc;
}

/* A primitive nested value of a file written before its field was widened, in the table's
 * type (PROTOCOL.md "Type Widening": readers convert such values): a decimal's text gets
 * the table's scale, a date becomes midnight as timestamp_ntz. Integers and floats are
 * JSON numbers either way. A new reference. */
static json_t *widen_nested(json_t *v, const mcdc_column *t)
{
    const char *x = json_string_value(v);
    if (!x)
        return json_incref(v);
    size_t n = strlen(x);
    if (t->type == MCDC_TYPE_DECIMAL) {
        const char *dot = strchr(x, '.');
        size_t frac = dot ? n - (size_t)(dot - x) - 1 : 0;
        if (t->scale <= 0 || frac >= (size_t)t->scale || n > 64)
            return json_incref(v);
        char b[128];
        snprintf(b, sizeof b, "%s%s%.*s", x, dot ? "" : ".", (int)((size_t)t->scale - frac),
                 "00000000000000000000000000000000000000");
        return json_string(b);
    }
    if (t->type == MCDC_TYPE_TIMESTAMP_NTZ && n == 10 && x[4] == '-' && x[7] == '-') {
        char b[40];
        snprintf(b, sizeof b, "%sT00:00:00.000000", x);
        return json_string(b);
    }
    return json_incref(v);
}

/* A nested value in the table's terms: struct fields under their logical names (found by
 * physical name under column mapping), in schema order, a field the file's struct lacks
 * (written before the field was added) as null, and values of widened fields in the wider
 * type. NULL when a part of it cannot be read (a variant that does not decode): the whole
 * cell fails (rename_cell), never a part of it silently. */
static json_t *rename_nested(json_t *v, const mcdc_delta_type *t, bool cm)
{
    if (!v || json_is_null(v))
        return json_incref(v);
    switch (t->kind) {
    case MCDC_DELTA_TYPE_VARIANT: {
        mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        json_t *r = variant_text(&b, v) == 0 ? json_loadb(b.ptr, b.len, JSON_DECODE_ANY, NULL) : NULL;
        mcdc_buf_dispose(&b);
        return r;
    }
    case MCDC_DELTA_TYPE_STRUCT: {
        if (!json_is_object(v))
            return json_incref(v);
        json_t *o = json_object();
        for (size_t i = 0; o && i < t->n_fields; i++) {
            const mcdc_delta_field *f = &t->fields[i];
            json_t *x = cm ? json_object_get(v, f->physical_name) : NULL;
            if (!x)
                x = json_object_get(v, f->name);
            json_t *r = x ? rename_nested(x, &f->type, cm) : json_null();
            if (!r || json_object_set_new(o, f->name, r) < 0) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    case MCDC_DELTA_TYPE_ARRAY: {
        if (!json_is_array(v))
            return json_incref(v);
        json_t *a = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            json_t *r = a ? rename_nested(x, t->element, cm) : NULL;
            if (!r || json_array_append_new(a, r) < 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    case MCDC_DELTA_TYPE_MAP: {
        if (!json_is_array(v))
            return json_incref(v);
        json_t *a = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            json_t *kv = a ? json_object() : NULL;
            json_t *k = kv ? rename_nested(json_object_get(x, "key"), t->key, cm) : NULL;
            json_t *val = k ? rename_nested(json_object_get(x, "value"), t->element, cm) : NULL;
            /* json_object_set_new takes its value also when it fails */
            bool ok = val != NULL;
            if (ok)
                ok = json_object_set_new(kv, "key", k) == 0;
            else
                json_decref(k);
            if (val && json_object_set_new(kv, "value", val) < 0)
                ok = false;
            if (!ok || json_array_append_new(a, kv) < 0) {
                if (!ok)
                    json_decref(kv);
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    default:
        return widen_nested(v, &t->prim);
    }
}

static int rename_cell(mcdc_delta_scan *s, size_t i)
{
    mcdc_value *c = &s->row[i];
    free(s->renamed[i]);
    s->renamed[i] = NULL;
    json_t *j = json_loadb(c->v.s.ptr, c->v.s.len, JSON_DECODE_ANY, NULL);
    if (!j)
        return mcdc_error_set(MCDC_ECORRUPT, "scan: nested value of column %s is not JSON",
                              s->schema->cols[i].name);
    const mcdc_delta_type *t = &s->snap->schema->fields[s->field[i]].type;
    if (t->kind == MCDC_DELTA_TYPE_VARIANT) { /* the decoded text as it is (decimals exact) */
        mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        int rc = variant_text(&b, j);
        json_decref(j);
        if (rc == 0 && mcdc_buf_putc(&b, '\0') == 0) {
            s->renamed[i] = mcdc_buf_detach(&b);
            c->v.s.ptr = s->renamed[i];
            c->v.s.len = strlen(s->renamed[i]);
        }
        mcdc_buf_dispose(&b);
        if (rc < 0)
            mcdc_error_prefix("column %s", s->schema->cols[i].name);
        return rc;
    }
    mcdc_error_clear(); /* a part that fails records why; none recorded: out of memory */
    json_t *r = rename_nested(j, t, s->snap->column_mapping != MCDC_DELTA_CM_NONE);
    json_decref(j);
    if (!r) {
        if (mcdc_error_last()->code < 0)
            return mcdc_error_prefix("column %s", s->schema->cols[i].name);
        return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
    }
    s->renamed[i] = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    json_decref(r);
    if (!s->renamed[i])
        return mcdc_error_set(MCDC_ENOMEM, "scan: out of memory");
    c->v.s.ptr = s->renamed[i];
    c->v.s.len = strlen(s->renamed[i]);
    return 0;
}

int mcdc_delta_scan_next(mcdc_delta_scan *s, const mcdc_value **row)
{
    *row = NULL;
    if (s->failed)
        return s->failed;
    for (;;) {
        if (!s->reader) {
            int rc = open_next(s);
            if (rc == 1)
                return 0;
            if (rc < 0) {
                close_file(s);
                return s->failed = rc;
            }
        }
        if (s->batch_at == s->batch_n) {
            int rc = mcdc_parquet_reader_next_batch(s->reader, SCAN_BATCH, &s->batch, &s->batch_n);
            s->batch_at = 0;
            if (rc < 0) {
                close_file(s);
                return s->failed = rc;
            }
            if (rc == 0) {
                close_file(s);
                continue;
            }
        }
        const mcdc_value *in = s->batch + s->batch_at++ * s->batch_width;
        int64_t idx = s->row_index++;
        if (s->n_deleted) {
            while (s->at_deleted < s->n_deleted && s->deleted[s->at_deleted] < (uint64_t)idx)
                s->at_deleted++;
            if (s->at_deleted < s->n_deleted && s->deleted[s->at_deleted] == (uint64_t)idx)
                continue; /* deleted by the DV */
        }
        if (s->direct) {
            *row = in;
            return 1;
        }
        for (size_t i = 0; i < s->n_out; i++) {
            if (s->part[i] >= 0)
                s->row[i] = s->pvals[i];
            else if (s->src[i] >= 0)
                s->row[i] = in[s->src[i]];
            else {
                memset(&s->row[i], 0, sizeof s->row[i]);
                s->row[i].is_null = true;
            }
            if (s->from && s->from[i].type)
                widen_cell(&s->row[i], &s->from[i], &s->schema->cols[i]);
            if (s->nested[i] && !s->row[i].is_null) {
                int rr = rename_cell(s, i);
                if (rr < 0) {
                    close_file(s);
                    return s->failed = rr;
                }
            }
        }
        *row = s->row;
        return 1;
    }
}
