/*
 * parquet/reader.c: open a Parquet file, validate its footer, map its schema to the value
 * model, and hand out rows one row group at a time (public API in mcdc/parquet.h).
 *
 * Opening checks, in order: the file holds at least 12 bytes; the last four are "PAR1"
 * ("PARE" is refused as encrypted); the footer length fits between the leading magic and
 * the trailing eight bytes; the leading magic is "PAR1"; the footer parses as Thrift; the
 * schema is a tree of at most PQR_MAX_DEPTH levels whose leaves have physical types. Row
 * groups are then read one at a time: only the leaves under projected columns are opened
 * (column.c), row groups whose statistics rule out a predicate are skipped, and rows are
 * assembled (assemble.c), or, for flat projections, filled in batches column by column
 * from each column's current page (mcdc_parquet_reader_next_batch: the same cells, the
 * same errors at the same rows). Invariants R1-R4: reader_int.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/error.h"
#include "mcdc/parquet.h"
#include "parquet/reader_int.h"

/* ---- schema --------------------------------------------------------------------------- */

static void node_free(pqr_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n_children; i++)
        node_free(n->children[i]);
    free(n->children);
    free(n);
}

static bool is_int(int pt)
{
    return pt == MCDC_PQ_INT32 || pt == MCDC_PQ_INT64;
}

/* Give a leaf its value-model type and conversion. */
static void map_leaf(pqr_node *n, const mcdc_pq_schema_element *e)
{
    int pt = n->ptype;
    int lt = e->logical.kind > 0 ? e->logical.kind : 0;
    int ct = e->has_converted ? e->converted_type : -1;
    mcdc_column *c = &n->col;
    c->precision = c->scale = 0;
    /* decimals */
    if (lt == MCDC_PQ_LT_DECIMAL || (lt == 0 && ct == MCDC_PQ_CT_DECIMAL)) {
        int p = lt ? e->logical.dec_precision : (e->has_precision ? e->precision : 0);
        int s = lt ? e->logical.dec_scale : (e->has_scale ? e->scale : 0);
        bool bytes = pt == MCDC_PQ_BYTE_ARRAY || pt == MCDC_PQ_FIXED_LEN_BYTE_ARRAY;
        if (p >= 1 && p <= 38 && s >= 0 && s <= p && (is_int(pt) || bytes)) {
            c->type = MCDC_TYPE_DECIMAL;
            c->precision = p;
            c->scale = s;
            n->conv = bytes ? PQR_CONV_DEC_BYTES : PQR_CONV_DEC_INT;
            return;
        }
    }
    if (pt == MCDC_PQ_INT32 && (lt == MCDC_PQ_LT_DATE || (lt == 0 && ct == MCDC_PQ_CT_DATE))) {
        c->type = MCDC_TYPE_DATE;
        n->conv = PQR_CONV_DATE;
        return;
    }
    if (pt == MCDC_PQ_INT64 && lt == MCDC_PQ_LT_TIMESTAMP) {
        int u = e->logical.unit;
        if (u == MCDC_PQ_UNIT_NANOS) {
            c->type = MCDC_TYPE_STRING;
            n->conv = PQR_CONV_TS_NANOS;
            n->ts_utc = e->logical.is_adjusted_utc;
            return;
        }
        if (u == MCDC_PQ_UNIT_MILLIS || u == MCDC_PQ_UNIT_MICROS) {
            c->type = e->logical.is_adjusted_utc ? MCDC_TYPE_TIMESTAMP : MCDC_TYPE_TIMESTAMP_NTZ;
            n->conv = u == MCDC_PQ_UNIT_MILLIS ? PQR_CONV_TS_MILLIS : PQR_CONV_TS_MICROS;
            return;
        }
    }
    if (pt == MCDC_PQ_INT64 && lt == 0 &&
        (ct == MCDC_PQ_CT_TIMESTAMP_MILLIS || ct == MCDC_PQ_CT_TIMESTAMP_MICROS)) {
        c->type = MCDC_TYPE_TIMESTAMP;
        n->conv = ct == MCDC_PQ_CT_TIMESTAMP_MILLIS ? PQR_CONV_TS_MILLIS : PQR_CONV_TS_MICROS;
        return;
    }
    if (lt == MCDC_PQ_LT_TIME || (lt == 0 && (ct == MCDC_PQ_CT_TIME_MILLIS || ct == MCDC_PQ_CT_TIME_MICROS))) {
        int u = lt ? e->logical.unit : ct == MCDC_PQ_CT_TIME_MILLIS ? MCDC_PQ_UNIT_MILLIS : MCDC_PQ_UNIT_MICROS;
        if ((u == MCDC_PQ_UNIT_MILLIS && pt == MCDC_PQ_INT32) ||
            (u != MCDC_PQ_UNIT_MILLIS && u != 0 && pt == MCDC_PQ_INT64)) {
            c->type = MCDC_TYPE_STRING;
            n->conv = u == MCDC_PQ_UNIT_MILLIS ? PQR_CONV_TIME_MILLIS
                      : u == MCDC_PQ_UNIT_MICROS ? PQR_CONV_TIME_MICROS : PQR_CONV_TIME_NANOS;
            return;
        }
    }
    /* integers */
    int width = 0;
    bool is_signed = true;
    if (lt == MCDC_PQ_LT_INTEGER) {
        width = e->logical.int_bit_width;
        is_signed = e->logical.int_signed;
    } else if (lt == 0 && ct >= MCDC_PQ_CT_UINT_8 && ct <= MCDC_PQ_CT_INT_64) {
        static const int w[] = { 8, 16, 32, 64, 8, 16, 32, 64 };
        width = w[ct - MCDC_PQ_CT_UINT_8];
        is_signed = ct >= MCDC_PQ_CT_INT_8;
    }
    if (width && ((width <= 32 && pt == MCDC_PQ_INT32) || (width == 64 && pt == MCDC_PQ_INT64))) {
        if (is_signed) {
            c->type = width == 8 ? MCDC_TYPE_BYTE : width == 16 ? MCDC_TYPE_SHORT
                      : width == 32 ? MCDC_TYPE_INT : MCDC_TYPE_LONG;
            n->conv = PQR_CONV_PLAIN;
        } else if (width == 64) {
            c->type = MCDC_TYPE_DECIMAL;
            c->precision = 20;
            n->conv = PQR_CONV_UINT64;
        } else {
            c->type = width == 8 ? MCDC_TYPE_SHORT : width == 16 ? MCDC_TYPE_INT : MCDC_TYPE_LONG;
            n->conv = PQR_CONV_UINT32;
        }
        return;
    }
    if (pt == MCDC_PQ_BYTE_ARRAY &&
        (lt == MCDC_PQ_LT_STRING || lt == MCDC_PQ_LT_ENUM || lt == MCDC_PQ_LT_JSON ||
         (lt == 0 && (ct == MCDC_PQ_CT_UTF8 || ct == MCDC_PQ_CT_ENUM || ct == MCDC_PQ_CT_JSON)))) {
        c->type = MCDC_TYPE_STRING;
        n->conv = PQR_CONV_PLAIN;
        return;
    }
    if (pt == MCDC_PQ_FIXED_LEN_BYTE_ARRAY && lt == MCDC_PQ_LT_UUID && n->type_len == 16) {
        c->type = MCDC_TYPE_STRING;
        n->conv = PQR_CONV_UUID;
        return;
    }
    if (pt == MCDC_PQ_FIXED_LEN_BYTE_ARRAY && lt == MCDC_PQ_LT_FLOAT16 && n->type_len == 2) {
        c->type = MCDC_TYPE_FLOAT;
        n->conv = PQR_CONV_FLOAT16;
        return;
    }
    n->conv = PQR_CONV_PLAIN;
    switch (pt) {
    case MCDC_PQ_BOOLEAN: c->type = MCDC_TYPE_BOOLEAN; break;
    case MCDC_PQ_INT32: c->type = MCDC_TYPE_INT; break;
    case MCDC_PQ_INT64: c->type = MCDC_TYPE_LONG; break;
    case MCDC_PQ_INT96:
        c->type = MCDC_TYPE_TIMESTAMP;
        n->conv = PQR_CONV_INT96;
        break;
    case MCDC_PQ_FLOAT: c->type = MCDC_TYPE_FLOAT; break;
    case MCDC_PQ_DOUBLE: c->type = MCDC_TYPE_DOUBLE; break;
    default: c->type = MCDC_TYPE_BINARY; break;
    }
}

/* Build the node for schema element *pos (and its subtree). */
static int build(mcdc_parquet_reader *r, size_t *pos, pqr_node *parent, int depth, pqr_node **out)
{
    *out = NULL;
    if (*pos >= r->md.n_schema)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: element %zu missing (num_children "
                              "promises more elements than the footer has)",
                              r->name, *pos);
    if (depth > PQR_MAX_DEPTH)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: schema nests deeper than %d levels", r->name,
                              PQR_MAX_DEPTH);
    const mcdc_pq_schema_element *e = &r->md.schema[*pos];
    (*pos)++;
    pqr_node *n = calloc(1, sizeof *n);
    if (!n)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    *out = n;
    n->name = e->name;
    n->field_id = e->has_field_id ? e->field_id : -1;
    n->parent = parent;
    n->repetition = parent ? (e->has_repetition ? e->repetition : MCDC_PQ_REQUIRED) : MCDC_PQ_REQUIRED;
    if (n->repetition < 0 || n->repetition > 2)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: field %s has repetition %d", r->name,
                              n->name, n->repetition);
    n->def_level = parent ? parent->def_level + (n->repetition != MCDC_PQ_REQUIRED) : 0;
    n->rep_level = parent ? parent->rep_level + (n->repetition == MCDC_PQ_REPEATED) : 0;
    n->first_leaf = (int)r->n_leaves;
    n->col.name = n->name;
    n->col.nullable = n->repetition != MCDC_PQ_REQUIRED;
    if (e->has_num_children && e->num_children > 0) {
        if ((size_t)e->num_children > r->md.n_schema - *pos)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: field %s has %d children, only %zu "
                                  "elements follow",
                                  r->name, n->name, e->num_children, r->md.n_schema - *pos);
        n->children = calloc((size_t)e->num_children, sizeof *n->children);
        if (!n->children)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (int i = 0; i < e->num_children; i++) {
            int rc = build(r, pos, n, depth + 1, &n->children[i]);
            n->n_children = (size_t)i + 1;
            if (rc < 0)
                return rc;
        }
        /* classify LIST and MAP groups (LogicalTypes.md backward-compatibility rules) */
        int lt = e->logical.kind, ct = e->has_converted ? e->converted_type : -1;
        pqr_node *rch = n->children[0];
        bool one_repeated = n->n_children == 1 && rch->repetition == MCDC_PQ_REPEATED;
        n->kind = PQR_GROUP;
        if (one_repeated && (lt == MCDC_PQ_LT_LIST || ct == MCDC_PQ_CT_LIST)) {
            n->kind = PQR_LIST;
            size_t nl = strlen(n->name);
            n->elem_is_repeated = rch->kind == PQR_LEAF || rch->n_children != 1 ||
                                  !strcmp(rch->name, "array") ||
                                  (!strncmp(rch->name, n->name, nl) && !strcmp(rch->name + nl, "_tuple"));
        } else if (one_repeated && rch->kind != PQR_LEAF && rch->n_children <= 2 &&
                   (lt == MCDC_PQ_LT_MAP || ct == MCDC_PQ_CT_MAP || ct == MCDC_PQ_CT_MAP_KEY_VALUE)) {
            /* a map without values reads as the list of its keys (as Arrow does) */
            n->kind = rch->n_children == 1 ? PQR_LIST : PQR_MAP;
        }
    } else if (!parent) {
        return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: the root has no columns", r->name);
    } else {
        if (!e->has_type || e->type < 0 || e->type > MCDC_PQ_FIXED_LEN_BYTE_ARRAY)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: field %s is neither a group with "
                                  "children nor a primitive",
                                  r->name, n->name);
        n->kind = PQR_LEAF;
        n->ptype = e->type;
        if (n->ptype == MCDC_PQ_FIXED_LEN_BYTE_ARRAY) {
            if (!e->has_type_length || e->type_length <= 0 || e->type_length > (1 << 24))
                return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: field %s: fixed length %d",
                                      r->name, n->name, e->has_type_length ? e->type_length : -1);
            n->type_len = e->type_length;
        }
        if (r->n_leaves >= r->md.n_schema)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: too many leaves", r->name);
        n->leaf_index = (int)r->n_leaves;
        r->leaves[r->n_leaves++] = n;
        map_leaf(n, e);
    }
    n->n_leaves = (int)r->n_leaves - n->first_leaf;
    return 0;
}

/* ---- open ----------------------------------------------------------------------------- */

static int read_at(mcdc_parquet_reader *r, void *dst, size_t len, uint64_t off)
{
    if (r->mem) {
        memcpy(dst, r->mem + off, len);
        return 0;
    }
    return mcdc_storage_file_read(r->file, dst, len, off);
}

static int select_all(mcdc_parquet_reader *r);

static int open_common(mcdc_parquet_reader *r)
{
    uint8_t tail[8], head[4];
    if (r->file_len < 12)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: %" PRIu64 " bytes is too short for a Parquet file",
                              r->name, r->file_len);
    int rc = read_at(r, tail, 8, r->file_len - 8);
    if (rc == 0)
        rc = read_at(r, head, 4, 0);
    if (rc < 0)
        return rc;
    if (!memcmp(tail + 4, MCDC_PQ_MAGIC_ENCRYPTED, 4) || !memcmp(head, MCDC_PQ_MAGIC_ENCRYPTED, 4))
        return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: the file is encrypted (magic \"PARE\"), which "
                              "this reader does not support",
                              r->name),
               mcdc_error_hint("decrypt it with the tool that wrote it, then read the plain copy");
    if (memcmp(tail + 4, MCDC_PQ_MAGIC, 4))
        return mcdc_error_set(MCDC_ECORRUPT, "%s: bad magic at byte %" PRIu64
                              ": not a Parquet file (or truncated)",
                              r->name, r->file_len - 4);
    if (memcmp(head, MCDC_PQ_MAGIC, 4))
        return mcdc_error_set(MCDC_ECORRUPT, "%s: bad magic at byte 0: not a Parquet file", r->name);
    uint32_t flen = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
                    (uint32_t)tail[3] << 24;
    if ((uint64_t)flen > r->file_len - 12)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: footer length %" PRIu32 " at byte %" PRIu64
                              " goes beyond the file of %" PRIu64 " bytes",
                              r->name, flen, r->file_len - 8, r->file_len);
    if (flen > r->opt.max_footer_bytes)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: footer of %" PRIu32 " bytes exceeds the limit of %zu",
                              r->name, flen, r->opt.max_footer_bytes);
    uint64_t foff = r->file_len - 8 - flen;
    uint8_t *footer = malloc(flen ? flen : 1);
    if (!footer)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory for a footer of %" PRIu32 " bytes",
                              r->name, flen);
    rc = read_at(r, footer, flen, foff);
    if (rc == 0) {
        rc = mcdc_pq__parse_file_metadata(&r->md, footer, flen, foff);
        if (rc < 0)
            mcdc_error_prefix("%s", r->name);
    }
    free(footer);
    if (rc < 0)
        return rc;
    if (r->md.is_encrypted)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: the file is encrypted (encryption_algorithm "
                              "in the footer), which this reader does not support",
                              r->name);
    if (r->md.n_schema == 0)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: footer has an empty schema", r->name);
    r->leaves = calloc(r->md.n_schema, sizeof *r->leaves);
    if (!r->leaves)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    size_t pos = 0;
    rc = build(r, &pos, NULL, 0, &r->root);
    if (rc < 0)
        return rc;
    if (pos != r->md.n_schema)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: schema: %zu elements after the tree ends",
                              r->name, r->md.n_schema - pos);
    r->cols = calloc(r->n_leaves, sizeof *r->cols);
    r->leaf_used = calloc(r->n_leaves, sizeof *r->leaf_used);
    if (!r->cols || !r->leaf_used)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    r->rg = -1;
    return select_all(r);
}

static mcdc_parquet_reader *reader_new(const char *name, const mcdc_parquet_read_options *opt)
{
    mcdc_parquet_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->name = strdup(name ? name : "(parquet)");
    mcdc_parquet_read_options def = MCDC_PARQUET_READ_OPTIONS_INIT;
    r->opt = opt ? *opt : def;
    /* the JSON text of one row's nested cells: twice the largest page, so that a page of
     * text fits with its quoting, and at least 1 GiB */
    size_t text_max = MCDC_BUF_DEFAULT_MAX;
    if (r->opt.max_page_bytes > text_max / 2)
        text_max = r->opt.max_page_bytes <= SIZE_MAX / 2 ? 2 * r->opt.max_page_bytes : SIZE_MAX;
    r->rowtext = (mcdc_buf)MCDC_BUF_INIT(text_max);
    if (!r->name) {
        free(r);
        return NULL;
    }
    return r;
}

/* Open over @p file (taken over, closed on failure too). */
static int open_file(mcdc_parquet_reader **out, mcdc_storage_file *file, uint64_t size,
                     const char *name, const mcdc_parquet_read_options *opt)
{
    mcdc_parquet_reader *r = reader_new(name, opt);
    if (!r) {
        mcdc_storage_file_close(file);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    r->file = file;
    r->file_len = size;
    int rc = open_common(r);
    if (rc < 0) {
        mcdc_parquet_reader_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int mcdc_parquet_reader_open_fd(mcdc_parquet_reader **out, int fd, const char *name,
                                const mcdc_parquet_read_options *opt)
{
    MCDC_ASSERT_ARG(out);
    *out = NULL;
    mcdc_storage_file *f;
    mcdc_storage_info info;
    int rc = mcdc_storage_file_from_fd(&f, &info, fd, name);
    return rc < 0 ? rc : open_file(out, f, info.size, name, opt);
}

int mcdc_parquet_reader_open(mcdc_parquet_reader **out, const char *path,
                             const mcdc_parquet_read_options *opt)
{
    MCDC_ASSERT_ARG(out && path);
    *out = NULL;
    mcdc_storage_file *f;
    mcdc_storage_info info;
    int rc = mcdc_storage_file_open(&f, &info, path);
    return rc < 0 ? rc : open_file(out, f, info.size, path, opt);
}

int mcdc_parquet_reader_open_mem(mcdc_parquet_reader **out, const void *data, size_t len,
                                 const char *name, const mcdc_parquet_read_options *opt)
{
    MCDC_ASSERT_ARG(out && (data || len == 0));
    *out = NULL;
    mcdc_parquet_reader *r = reader_new(name, opt);
    if (!r)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    static const uint8_t empty[1];
    r->mem = data ? data : empty;
    r->file_len = len;
    int rc = open_common(r);
    if (rc < 0) {
        mcdc_parquet_reader_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

static void close_cols(mcdc_parquet_reader *r)
{
    for (size_t i = 0; r->cols && i < r->n_leaves; i++)
        pqr_col_close(&r->cols[i]);
}

static void free_selection(mcdc_parquet_reader *r)
{
    pqr_leaves_free(r);
    free(r->sel);
    free(r->sel_nested);
    free(r->row);
    free(r->tmp);
    free(r->fill);
    free(r->batch);
    mcdc_schema_free(r->schema);
    r->fill = NULL;
    r->batch = NULL;
    r->batch_cap = 0;
    r->sel = NULL;
    r->sel_nested = NULL;
    r->row = NULL;
    r->tmp = NULL;
    r->schema = NULL;
    r->n_sel = 0;
}

void mcdc_parquet_reader_free(mcdc_parquet_reader *r)
{
    if (!r)
        return;
    close_cols(r);
    free(r->cols);
    free(r->leaf_used);
    free_selection(r);
    for (size_t i = 0; i < r->n_preds; i++)
        if (r->preds[i].owned)
            free(r->preds[i].owned);
    free(r->preds);
    node_free(r->root);
    free(r->leaves);
    mcdc_pq__file_metadata_dispose(&r->md);
    mcdc_buf_dispose(&r->rowtext);
    mcdc_codec__dctx_dispose(&r->dctx);
    mcdc_storage_file_close(r->file);
    free(r->name);
    free(r);
}

int64_t mcdc_parquet_reader_num_rows(const mcdc_parquet_reader *r)
{
    return r->md.num_rows;
}

size_t mcdc_parquet_reader_num_row_groups(const mcdc_parquet_reader *r)
{
    return r->md.n_row_groups;
}

int64_t mcdc_parquet_reader_row_groups_skipped(const mcdc_parquet_reader *r)
{
    return r->rg_skipped;
}

/* ---- projection ----------------------------------------------------------------------- */

static bool node_nested(const pqr_node *n)
{
    return n->kind != PQR_LEAF || n->repetition == MCDC_PQ_REPEATED;
}

/* How batches make the cells of flat leaf @p n: as pqr_leaf_value would. */
static pqr_fill fill_kind(const pqr_node *n)
{
    switch (n->conv) {
    case PQR_CONV_PLAIN:
        switch (n->col.type) {
        case MCDC_TYPE_BOOLEAN: return PQR_FILL_BOOL;
        case MCDC_TYPE_BYTE:
        case MCDC_TYPE_SHORT:
        case MCDC_TYPE_INT: return PQR_FILL_I32;
        case MCDC_TYPE_LONG: return PQR_FILL_I64;
        case MCDC_TYPE_FLOAT: return PQR_FILL_FLOAT;
        case MCDC_TYPE_DOUBLE: return PQR_FILL_DOUBLE;
        default: return PQR_FILL_BYTES;
        }
    case PQR_CONV_UINT32: return PQR_FILL_U32;
    case PQR_CONV_DATE: return PQR_FILL_I32;
    case PQR_CONV_TS_MICROS: return PQR_FILL_I64;
    case PQR_CONV_DEC_INT: return n->ptype == MCDC_PQ_INT32 ? PQR_FILL_DEC32 : PQR_FILL_DEC64;
    case PQR_CONV_UINT64:
    case PQR_CONV_TS_MILLIS:
    case PQR_CONV_INT96:
    case PQR_CONV_DEC_BYTES:
    case PQR_CONV_FLOAT16: return PQR_FILL_CALL;
    default: return PQR_FILL_ROW; /* text in the row's scratch */
    }
}

static int set_selection(mcdc_parquet_reader *r, pqr_node **nodes, size_t n)
{
    free_selection(r);
    r->sel = nodes;
    r->n_sel = n;
    r->sel_nested = calloc(n ? n : 1, sizeof *r->sel_nested);
    r->row = calloc(n ? n : 1, sizeof *r->row);
    r->tmp = calloc(n ? n : 1, sizeof *r->tmp);
    r->fill = calloc(n ? n : 1, sizeof *r->fill);
    r->schema = mcdc_schema_new();
    if (r->schema)
        r->schema->cols = calloc(n ? n : 1, sizeof *r->schema->cols);
    if (!r->sel_nested || !r->row || !r->tmp || !r->fill || !r->schema || !r->schema->cols)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    memset(r->leaf_used, 0, r->n_leaves * sizeof *r->leaf_used);
    r->batchable = true;
    for (size_t i = 0; i < n; i++) {
        const pqr_node *nd = nodes[i];
        mcdc_column *c = &r->schema->cols[i];
        r->sel_nested[i] = node_nested(nd);
        *c = nd->col;
        c->name = strdup(nd->name);
        if (!c->name)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        r->schema->n_cols = i + 1;
        if (r->sel_nested[i]) {
            c->type = MCDC_TYPE_STRING;
            c->precision = c->scale = 0;
            c->nullable = true;
        }
        for (int l = nd->first_leaf; l < nd->first_leaf + nd->n_leaves; l++)
            r->leaf_used[l] = true; /* each leaf once: select refuses a column chosen twice */
        r->fill[i] = r->sel_nested[i] ? PQR_FILL_ROW : fill_kind(nd);
        if (r->fill[i] == PQR_FILL_ROW)
            r->batchable = false;
    }
    return 0;
}

static int select_all(mcdc_parquet_reader *r)
{
    size_t n = r->root->n_children;
    pqr_node **nodes = malloc((n ? n : 1) * sizeof *nodes);
    if (!nodes)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    memcpy(nodes, r->root->children, n * sizeof *nodes);
    return set_selection(r, nodes, n);
}

static pqr_node *find_top(const mcdc_parquet_reader *r, const char *name)
{
    for (size_t i = 0; i < r->root->n_children; i++)
        if (!strcmp(r->root->children[i]->name, name))
            return r->root->children[i];
    for (size_t i = 0; i < r->root->n_children; i++)
        if (!strcasecmp(r->root->children[i]->name, name))
            return r->root->children[i];
    return NULL;
}

int mcdc_parquet_reader_select(mcdc_parquet_reader *r, const char *const *names, size_t n)
{
    MCDC_ASSERT_ARG(r && (names || n == 0));
    if (r->rg >= 0)
        return mcdc_error_set(MCDC_EINVAL, "%s: columns must be chosen before the first row", r->name);
    pqr_node **nodes = malloc((n ? n : 1) * sizeof *nodes);
    if (!nodes)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        nodes[i] = find_top(r, names[i]);
        if (!nodes[i]) {
            free(nodes);
            return mcdc_error_set(MCDC_ENOTFOUND, "%s: no column named \"%s\"", r->name, names[i]);
        }
        /* one column reader per column: a column chosen twice would share it */
        for (size_t j = 0; j < i; j++)
            if (nodes[j] == nodes[i]) {
                int rc = mcdc_error_set(MCDC_EINVAL, "%s: column \"%s\" is chosen twice (as "
                                        "\"%s\" and \"%s\")", r->name, nodes[i]->name,
                                        names[j], names[i]);
                free(nodes);
                return rc;
            }
    }
    return set_selection(r, nodes, n);
}

const mcdc_schema *mcdc_parquet_reader_schema(const mcdc_parquet_reader *r)
{
    return r->schema;
}

int64_t mcdc_parquet_reader_field_id(const mcdc_parquet_reader *r, size_t i)
{
    return i < r->n_sel ? r->sel[i]->field_id : -1;
}

bool mcdc_parquet_reader_is_nested(const mcdc_parquet_reader *r, size_t i)
{
    return i < r->n_sel && r->sel_nested[i];
}

/* ---- predicates and statistics -------------------------------------------------------- */

int mcdc_parquet_reader_filter(mcdc_parquet_reader *r, const char *column, mcdc_parquet_op op,
                               const mcdc_value *v)
{
    MCDC_ASSERT_ARG(r && column && v);
    if (r->rg >= 0)
        return mcdc_error_set(MCDC_EINVAL, "%s: predicates must be set before the first row", r->name);
    pqr_node *n = find_top(r, column);
    if (!n)
        return mcdc_error_set(MCDC_ENOTFOUND, "%s: no column named \"%s\"", r->name, column);
    if (node_nested(n))
        return mcdc_error_set(MCDC_EINVAL, "%s: column %s is nested; predicates need a flat column",
                              r->name, n->name);
    if (op != MCDC_PARQUET_EQ && op != MCDC_PARQUET_GE && op != MCDC_PARQUET_LE)
        return mcdc_error_set(MCDC_EINVAL, "predicate operator %d", (int)op);
    pqr_pred *p = realloc(r->preds, (r->n_preds + 1) * sizeof *p);
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    r->preds = p;
    p = &r->preds[r->n_preds];
    memset(p, 0, sizeof *p);
    p->leaf = n->leaf_index;
    p->op = (int)op;
    p->v = *v;
    if ((n->col.type == MCDC_TYPE_STRING || n->col.type == MCDC_TYPE_BINARY) && !v->is_null) {
        p->owned = malloc(v->v.s.len ? v->v.s.len : 1);
        if (!p->owned)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        memcpy(p->owned, v->v.s.ptr, v->v.s.len);
        p->v.v.s.ptr = p->owned;
    }
    r->n_preds++;
    return 0;
}

/* Compare two non-null cells of @p col: <0, 0, >0; 2 when unordered (NaN). */
static int cell_cmp(const mcdc_column *col, const mcdc_value *a, const mcdc_value *b)
{
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN: return (int)a->v.b - (int)b->v.b;
    case MCDC_TYPE_FLOAT:
        if (isnan(a->v.f) || isnan(b->v.f))
            return 2;
        return (a->v.f > b->v.f) - (a->v.f < b->v.f);
    case MCDC_TYPE_DOUBLE:
        if (isnan(a->v.d) || isnan(b->v.d))
            return 2;
        return (a->v.d > b->v.d) - (a->v.d < b->v.d);
    case MCDC_TYPE_DECIMAL: return (a->v.dec > b->v.dec) - (a->v.dec < b->v.dec);
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: {
        size_t n = a->v.s.len < b->v.s.len ? a->v.s.len : b->v.s.len;
        int c = n ? memcmp(a->v.s.ptr, b->v.s.ptr, n) : 0;
        if (c)
            return c < 0 ? -1 : 1;
        return (a->v.s.len > b->v.s.len) - (a->v.s.len < b->v.s.len);
    }
    default: return (a->v.i > b->v.i) - (a->v.i < b->v.i);
    }
}

/* Decode a statistics bound of @p leaf into a cell; false when it cannot be used. */
static bool stat_cell(const pqr_node *leaf, const mcdc_pq_bytes *b, mcdc_value *out, char *tmp,
                      size_t cap)
{
    if (!b->set)
        return false;
    mcdc_pqdec_val pv;
    switch (leaf->conv) {
    case PQR_CONV_PLAIN: case PQR_CONV_UINT32: case PQR_CONV_UINT64: case PQR_CONV_DATE:
    case PQR_CONV_TS_MILLIS: case PQR_CONV_TS_MICROS: case PQR_CONV_DEC_INT:
    case PQR_CONV_DEC_BYTES:
        break;
    default: return false;
    }
    if (leaf->ptype == MCDC_PQ_BYTE_ARRAY || leaf->ptype == MCDC_PQ_FIXED_LEN_BYTE_ARRAY) {
        if (leaf->ptype == MCDC_PQ_FIXED_LEN_BYTE_ARRAY && b->len != (size_t)leaf->type_len)
            return false;
        if (b->len > UINT32_MAX)
            return false;
        pv.ba.ptr = b->ptr;
        pv.ba.len = (uint32_t)b->len;
    } else {
        mcdc_pqdec_cursor c = mcdc_pqdec_cursor_make(b->ptr, b->len);
        if (mcdc_pqdec_plain(&c, leaf->ptype, leaf->type_len, &pv, 1) < 0) {
            mcdc_error_clear();
            return false;
        }
    }
    if (pqr_leaf_value(leaf, &pv, out, tmp, cap) < 0) {
        mcdc_error_clear();
        return false;
    }
    return true;
}

/* Statistics bounds of a chunk that the reader can trust (new fields, or the deprecated
 * ones for types whose old order was already signed numeric). */
static void chunk_bounds(const pqr_node *leaf, const mcdc_pq_statistics *s, const mcdc_pq_bytes **mn,
                         const mcdc_pq_bytes **mx)
{
    *mn = *mx = NULL;
    if (s->min_value.set && s->max_value.set) {
        *mn = &s->min_value;
        *mx = &s->max_value;
        return;
    }
    bool signed_numeric = (leaf->ptype == MCDC_PQ_INT32 || leaf->ptype == MCDC_PQ_INT64 ||
                           leaf->ptype == MCDC_PQ_FLOAT || leaf->ptype == MCDC_PQ_DOUBLE) &&
                          leaf->conv != PQR_CONV_UINT32 && leaf->conv != PQR_CONV_UINT64;
    if (signed_numeric && s->min.set && s->max.set) {
        *mn = &s->min;
        *mx = &s->max;
    }
}

/* Whether row group @p g can hold a row matching every predicate. */
static bool rg_may_match(mcdc_parquet_reader *r, const mcdc_pq_row_group *g)
{
    for (size_t i = 0; i < r->n_preds; i++) {
        const pqr_pred *p = &r->preds[i];
        const pqr_node *leaf = r->leaves[p->leaf];
        if ((size_t)p->leaf >= g->n_columns || !g->columns[p->leaf].has_meta_data)
            continue;
        const mcdc_pq_column_meta *m = &g->columns[p->leaf].meta_data;
        if (!m->has_statistics)
            continue;
        const mcdc_pq_statistics *s = &m->statistics;
        if (p->v.is_null)
            continue;
        if (s->has_null_count && s->null_count == g->num_rows && g->num_rows > 0)
            return false; /* only nulls: no comparison holds */
        const mcdc_pq_bytes *bmn, *bmx;
        chunk_bounds(leaf, s, &bmn, &bmx);
        mcdc_value mn, mx;
        char t1[96], t2[96];
        if (!bmn || !stat_cell(leaf, bmn, &mn, t1, sizeof t1) || !stat_cell(leaf, bmx, &mx, t2, sizeof t2))
            continue;
        int c_min = cell_cmp(&leaf->col, &p->v, &mn), c_max = cell_cmp(&leaf->col, &p->v, &mx);
        if (c_min == 2 || c_max == 2)
            continue;
        if (p->op == MCDC_PARQUET_EQ && (c_min < 0 || c_max > 0))
            return false;
        if (p->op == MCDC_PARQUET_GE && c_max > 0) /* col >= v impossible when max < v */
            return false;
        if (p->op == MCDC_PARQUET_LE && c_min < 0) /* col <= v impossible when min > v */
            return false;
    }
    return true;
}

/* ---- rows ----------------------------------------------------------------------------- */

int pqr_fail(mcdc_parquet_reader *r, int rc)
{
    r->sticky = rc;
    return rc;
}

/* Make sure a row is ready in the current row group: 1, 0 at the end, <0. */
static int ensure_row(mcdc_parquet_reader *r)
{
    while (r->rg < 0 || r->rg_row >= r->rg_rows) {
        close_cols(r);
        r->rg++;
        if ((size_t)r->rg >= r->md.n_row_groups)
            return 0;
        const mcdc_pq_row_group *g = &r->md.row_groups[r->rg];
        r->rg_row = 0;
        r->rg_rows = 0;
        if (g->num_rows < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: row group %" PRId64 " has %" PRId64 " rows",
                                  r->name, r->rg, g->num_rows);
        if (g->num_rows == 0)
            continue;
        if (!rg_may_match(r, g)) {
            r->rg_skipped++;
            continue;
        }
        if (g->n_columns != r->n_leaves)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: row group %" PRId64 " has %zu column chunks, "
                                  "the schema %zu columns",
                                  r->name, r->rg, g->n_columns, r->n_leaves);
        for (size_t l = 0; l < r->n_leaves; l++) {
            if (!r->leaf_used[l])
                continue;
            int rc = pqr_col_open(&r->cols[l], r, (size_t)r->rg, r->leaves[l]);
            if (rc < 0)
                return rc;
        }
        r->rg_rows = g->num_rows;
    }
    /* every projected column must start a row here */
    for (size_t l = 0; l < r->n_leaves; l++) {
        if (!r->leaf_used[l])
            continue;
        int rep, def;
        const mcdc_pqdec_val *v;
        int rc = pqr_col_peek(&r->cols[l], &rep, &def, &v);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: row group %" PRId64 ", column %s: ends after "
                                  "%" PRId64 " of %" PRId64 " rows",
                                  r->name, r->rg, r->cols[l].path, r->rg_row, r->rg_rows);
        if (rep != 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: row group %" PRId64 ", column %s: row %" PRId64
                                  " starts with repetition level %d",
                                  r->name, r->rg, r->cols[l].path, r->rg_row, rep);
    }
    return 1;
}

/* What both ways of reading a row start with: 1 when a row is ready, else what to return
 * (0 at the end, the sticky error of an earlier failure, or this one's). */
int pqr_row_ready(mcdc_parquet_reader *r)
{
    if (r->sticky)
        return r->sticky;
    int rc = ensure_row(r);
    return rc < 0 ? pqr_fail(r, rc) : rc;
}

int mcdc_parquet_reader_next(mcdc_parquet_reader *r, const mcdc_value **row)
{
    MCDC_ASSERT_ARG(r && row);
    *row = NULL;
    int rc = pqr_row_ready(r);
    if (rc != 1)
        return rc;
    mcdc_buf_clear(&r->rowtext);
    bool any_text = false;
    for (size_t i = 0; i < r->n_sel; i++) {
        const pqr_node *nd = r->sel[i];
        mcdc_value *cell = &r->row[i];
        memset(cell, 0, sizeof *cell);
        if (!r->sel_nested[i]) {
            int rep, def;
            const mcdc_pqdec_val *v;
            pqr_col *c = &r->cols[nd->leaf_index];
            rc = pqr_col_peek(c, &rep, &def, &v);
            if (rc < 0)
                return pqr_fail(r, rc);
            if (!v) {
                cell->is_null = true;
            } else {
                rc = pqr_leaf_value(nd, v, cell, r->tmp[i], sizeof r->tmp[i]);
                if (rc < 0)
                    return pqr_fail(r, pqr_col_fail(c, rc));
            }
            pqr_col_next(c);
        } else {
            json_t *j = NULL;
            rc = pqr_assemble_field(r, nd, &j);
            if (rc < 0)
                return pqr_fail(r, rc);
            if (json_is_null(j)) {
                cell->is_null = true;
            } else {
                size_t start = r->rowtext.len;
                rc = pqr_json_dump(&r->rowtext, j);
                if (rc < 0) {
                    json_decref(j);
                    return pqr_fail(r, rc);
                }
                /* offsets now, pointers once the buffer stops moving */
                cell->v.s.ptr = (const char *)(uintptr_t)start;
                cell->v.s.len = r->rowtext.len - start;
                any_text = true;
            }
            json_decref(j);
        }
    }
    if (any_text)
        for (size_t i = 0; i < r->n_sel; i++)
            if (r->sel_nested[i] && !r->row[i].is_null)
                r->row[i].v.s.ptr = r->rowtext.ptr + (uintptr_t)r->row[i].v.s.ptr;
    r->rg_row++;
    *row = r->row;
    return 1;
}

/* ---- batches ---------------------------------------------------------------------- */

/* Fill column @p j of rows [0, n) of the batch from its column's current page (which
 * holds at least n entries) and consume those entries. @return the rows filled: n, or
 * the row whose cell failed, with *rc set. */
static size_t fill_column(mcdc_parquet_reader *r, size_t j, size_t n, int *rc)
{
    const pqr_node *nd = r->sel[j];
    pqr_col *c = &r->cols[nd->leaf_index];
    const uint8_t *def = c->def + c->i;
    size_t vi = c->vi;
    const uint8_t full = (uint8_t)nd->def_level;
    const size_t stride = r->n_sel;
    mcdc_value *out = r->batch + j;
    size_t k = 0;
    mcdc_pqdec_val one;
    const mcdc_pqdec_val *v;
    /* cells are zeroed and set in place: a cell built aside and copied costs a stalled
     * load of the bytes just stored; one loop per way the page holds its values */
#define FILL_HELD(GET, SET)                                                                \
    for (; k < n; k++, out += stride) {                                                   \
        memset(out, 0, sizeof *out);                                                       \
        if (def[k] == full) {                                                              \
            GET;                                                                           \
            SET;                                                                           \
            vi++;                                                                          \
        } else {                                                                           \
            out->is_null = true;                                                           \
        }                                                                                  \
    }
#define FILL(SET)                                                                          \
    switch (c->held) {                                                                     \
    case PQR_VALUES_DICT: FILL_HELD(v = &c->dict[c->idx[vi]], SET) break;                  \
    case PQR_VALUES_SPAN:                                                                  \
        if (c->span_w == 8)                                                                \
            FILL_HELD((memcpy(&one, c->span + vi * 8, 8), v = &one), SET)                  \
        else                                                                               \
            FILL_HELD((memcpy(&one, c->span + vi * 4, 4), v = &one), SET)                  \
        break;                                                                             \
    default: FILL_HELD(v = &c->vals[vi], SET) break;                                       \
    }
    switch ((pqr_fill)r->fill[j]) {
    case PQR_FILL_BOOL: FILL(out->v.b = v->b) break;
    case PQR_FILL_I32: FILL(out->v.i = v->i32) break;
    case PQR_FILL_U32: FILL(out->v.i = (int64_t)(uint32_t)v->i32) break;
    case PQR_FILL_I64: FILL(out->v.i = v->i64) break;
    case PQR_FILL_DEC32: FILL(out->v.dec = (mcdc_int128)v->i32) break;
    case PQR_FILL_DEC64: FILL(out->v.dec = (mcdc_int128)v->i64) break;
    case PQR_FILL_FLOAT: FILL(out->v.f = v->f) break;
    case PQR_FILL_DOUBLE: FILL(out->v.d = v->d) break;
    case PQR_FILL_BYTES: FILL(out->v.s.ptr = (const char *)v->ba.ptr; out->v.s.len = v->ba.len) break;
    case PQR_FILL_CALL:
    case PQR_FILL_ROW: /* not batchable: never asked */
        for (; k < n; k++, out += stride) {
            memset(out, 0, sizeof *out);
            if (def[k] != full) {
                out->is_null = true;
                continue;
            }
            int e = pqr_leaf_value(nd, pqr_col_value(c, vi, &one), out, NULL, 0);
            if (e < 0) {
                *rc = pqr_col_fail(c, e);
                break;
            }
            vi++;
        }
        break;
    }
#undef FILL
#undef FILL_HELD
    c->i += k;
    c->vi = vi;
    return k;
}

/* Give back the last @p drop entries column @p j consumed. */
static void unfill_column(mcdc_parquet_reader *r, size_t j, size_t drop)
{
    const pqr_node *nd = r->sel[j];
    pqr_col *c = &r->cols[nd->leaf_index];
    for (size_t e = c->i - drop; e < c->i; e++)
        c->vi -= c->def[e] == nd->def_level;
    c->i -= drop;
}

int mcdc_parquet_reader_next_batch(mcdc_parquet_reader *r, size_t max, const mcdc_value **rows,
                                   size_t *n)
{
    MCDC_ASSERT_ARG(r && rows && n && max > 0);
    *rows = NULL;
    *n = 0;
    if (!r->batchable || max == 1) {
        int rc = mcdc_parquet_reader_next(r, rows);
        *n = rc == 1;
        return rc;
    }
    int rc = pqr_row_ready(r);
    if (rc != 1)
        return rc;
    if (max > 4096)
        max = 4096;
    /* rows left in the row group, and in every column's page (flat: one entry a row) */
    size_t want = max;
    if ((uint64_t)(r->rg_rows - r->rg_row) < want)
        want = (size_t)(r->rg_rows - r->rg_row);
    for (size_t j = 0; j < r->n_sel; j++) {
        const pqr_col *c = &r->cols[r->sel[j]->leaf_index];
        if (c->n - c->i < want)
            want = c->n - c->i;
    }
    if (want > r->batch_cap) {
        size_t cap = r->batch_cap ? r->batch_cap : 64;
        while (cap < want)
            cap *= 2;
        mcdc_value *b = realloc(r->batch, cap * (r->n_sel ? r->n_sel : 1) * sizeof *b);
        if (!b)
            return pqr_fail(r, mcdc_error_set(MCDC_ENOMEM, "out of memory"));
        r->batch = b;
        r->batch_cap = cap;
    }
    /* column by column; a cell that fails cuts the batch before its row, and the
     * columns already filled give back the entries past it */
    for (size_t j = 0; j < r->n_sel; j++) {
        int err = 0;
        size_t got = fill_column(r, j, want, &err);
        if (got == want)
            continue;
        if (got == 0)
            return pqr_fail(r, err);
        for (size_t p = 0; p < j; p++)
            unfill_column(r, p, want - got);
        want = got;
    }
    r->rg_row += (int64_t)want;
    *rows = r->batch;
    *n = want;
    return 1;
}

int mcdc_parquet_reader_next_json(mcdc_parquet_reader *r, json_t **row)
{
    MCDC_ASSERT_ARG(r && row);
    *row = NULL;
    int rc = pqr_row_ready(r);
    if (rc != 1)
        return rc;
    json_t *obj = json_object();
    if (!obj)
        return pqr_fail(r, mcdc_error_set(MCDC_ENOMEM, "out of memory"));
    for (size_t i = 0; i < r->n_sel; i++) {
        json_t *j = NULL;
        rc = pqr_assemble_field(r, r->sel[i], &j);
        if (rc < 0 || json_object_set_new_nocheck(obj, r->sel[i]->name, j) < 0) {
            json_decref(obj);
            return pqr_fail(r, rc < 0 ? rc : mcdc_error_set(MCDC_ENOMEM, "out of memory"));
        }
    }
    r->rg_row++;
    *row = obj;
    return 1;
}
