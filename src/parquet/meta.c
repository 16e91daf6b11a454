/*
 * parquet/meta.c: a Parquet file's footer as one JSON document (mcdc_parquet_reader_meta_json),
 * for `mssql-cdc parquet meta` and for tests.
 *
 * Reports what the footer says, decoded: the schema elements with their physical,
 * logical and converted types and the value-model type each leaf is read as; key-value
 * metadata; and per row group its size and per column chunk its path, codec, encodings,
 * offsets, sizes, value count and statistics. Statistics bounds are decoded to the
 * column's type where the reader trusts their order, else shown as "0x…" hex. Never reads
 * past the footer.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/error.h"
#include "parquet/reader_int.h"

static const char *converted_name(int ct)
{
    static const char *const names[] = { "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL",
                                         "DATE", "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS",
                                         "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32",
                                         "UINT_64", "INT_8", "INT_16", "INT_32", "INT_64", "JSON",
                                         "BSON", "INTERVAL" };
    return ct >= 0 && ct < (int)(sizeof names / sizeof *names) ? names[ct] : "?";
}

static const char *unit_name(int u)
{
    return u == MCDC_PQ_UNIT_MILLIS ? "MILLIS" : u == MCDC_PQ_UNIT_MICROS ? "MICROS"
           : u == MCDC_PQ_UNIT_NANOS ? "NANOS" : "?";
}

/* "DECIMAL(9,2)", "TIMESTAMP(MICROS,utc)", "INTEGER(8,signed)", "STRING", ... */
static json_t *logical_json(const mcdc_pq_logical_type *l)
{
    char t[64];
    switch (l->kind) {
    case MCDC_PQ_LT_STRING: return json_string("STRING");
    case MCDC_PQ_LT_MAP: return json_string("MAP");
    case MCDC_PQ_LT_LIST: return json_string("LIST");
    case MCDC_PQ_LT_ENUM: return json_string("ENUM");
    case MCDC_PQ_LT_DECIMAL:
        snprintf(t, sizeof t, "DECIMAL(%d,%d)", (int)l->dec_precision, (int)l->dec_scale);
        return json_string(t);
    case MCDC_PQ_LT_DATE: return json_string("DATE");
    case MCDC_PQ_LT_TIME:
    case MCDC_PQ_LT_TIMESTAMP:
        snprintf(t, sizeof t, "%s(%s,%s)", l->kind == MCDC_PQ_LT_TIME ? "TIME" : "TIMESTAMP",
                 unit_name(l->unit), l->is_adjusted_utc ? "utc" : "local");
        return json_string(t);
    case MCDC_PQ_LT_INTEGER:
        snprintf(t, sizeof t, "INTEGER(%d,%s)", (int)l->int_bit_width,
                 l->int_signed ? "signed" : "unsigned");
        return json_string(t);
    case MCDC_PQ_LT_UNKNOWN: return json_string("UNKNOWN");
    case MCDC_PQ_LT_JSON: return json_string("JSON");
    case MCDC_PQ_LT_BSON: return json_string("BSON");
    case MCDC_PQ_LT_UUID: return json_string("UUID");
    case MCDC_PQ_LT_FLOAT16: return json_string("FLOAT16");
    case MCDC_PQ_LT_UNSUPPORTED: return json_string("(unknown to this reader)");
    default: return NULL;
    }
}

static json_t *hex_json(const uint8_t *p, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = len > 256 ? 256 : len;
    char *s = malloc(2 * n + 6);
    if (!s)
        return NULL;
    size_t k = 0;
    s[k++] = '0';
    s[k++] = 'x';
    for (size_t i = 0; i < n; i++) {
        s[k++] = hex[p[i] >> 4];
        s[k++] = hex[p[i] & 15];
    }
    if (n < len) {
        memcpy(s + k, "...", 3);
        k += 3;
    }
    json_t *j = json_stringn(s, k);
    free(s);
    return j;
}

/* A statistics bound as a typed JSON value where its order is trusted, else hex. */
static json_t *bound_json(const pqr_node *leaf, const mcdc_pq_bytes *b)
{
    mcdc_value v;
    char tmp[96];
    if (leaf && leaf->conv != PQR_CONV_INT96 && leaf->conv != PQR_CONV_FLOAT16 &&
        leaf->conv != PQR_CONV_UUID) {
        mcdc_pqdec_val pv;
        bool ok;
        if (leaf->ptype == MCDC_PQ_BYTE_ARRAY ||
            (leaf->ptype == MCDC_PQ_FIXED_LEN_BYTE_ARRAY && b->len == (size_t)leaf->type_len)) {
            pv.ba.ptr = b->ptr;
            pv.ba.len = (uint32_t)(b->len > UINT32_MAX ? 0 : b->len);
            ok = b->len <= UINT32_MAX;
        } else {
            mcdc_pqdec_cursor c = mcdc_pqdec_cursor_make(b->ptr, b->len);
            ok = leaf->ptype != MCDC_PQ_FIXED_LEN_BYTE_ARRAY &&
                 mcdc_pqdec_plain(&c, leaf->ptype, leaf->type_len, &pv, 1) == 0 && c.pos == c.end;
        }
        if (ok && pqr_leaf_value(leaf, &pv, &v, tmp, sizeof tmp) == 0) {
            if (leaf->col.type == MCDC_TYPE_STRING) {
                json_t *j = json_stringn(v.v.s.ptr, v.v.s.len);
                if (j)
                    return j; /* else not UTF-8 (a truncated bound): hex */
            } else {
                return pqr_value_json(&leaf->col, &v);
            }
        }
        mcdc_error_clear();
    }
    return hex_json(b->ptr, b->len);
}

static int set(json_t *o, const char *k, json_t *v)
{
    return v ? json_object_set_new(o, k, v) : 0;
}

static json_t *stats_json(const pqr_node *leaf, const mcdc_pq_statistics *s)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (s->has_null_count)
        set(o, "null_count", json_integer(s->null_count));
    if (s->has_distinct_count)
        set(o, "distinct_count", json_integer(s->distinct_count));
    if (s->min_value.set)
        set(o, "min", bound_json(leaf, &s->min_value));
    if (s->max_value.set)
        set(o, "max", bound_json(leaf, &s->max_value));
    if (s->min.set)
        set(o, "min_deprecated", hex_json(s->min.ptr, s->min.len));
    if (s->max.set)
        set(o, "max_deprecated", hex_json(s->max.ptr, s->max.len));
    if (s->has_is_min_value_exact)
        set(o, "is_min_value_exact", json_boolean(s->is_min_value_exact));
    if (s->has_is_max_value_exact)
        set(o, "is_max_value_exact", json_boolean(s->is_max_value_exact));
    return o;
}

static json_t *schema_json(const mcdc_parquet_reader *r)
{
    json_t *arr = json_array();
    static const char *const reps[] = { "required", "optional", "repeated" };
    size_t leaf = 0;
    for (size_t i = 0; arr && i < r->md.n_schema; i++) {
        const mcdc_pq_schema_element *e = &r->md.schema[i];
        json_t *o = json_object();
        if (!o)
            break;
        set(o, "name", json_string(e->name));
        if (i > 0 && e->has_repetition && e->repetition >= 0 && e->repetition <= 2)
            set(o, "repetition", json_string(reps[e->repetition]));
        if (e->has_num_children)
            set(o, "num_children", json_integer(e->num_children));
        if (e->has_type)
            set(o, "physical_type", json_string(mcdc_pq__type_name(e->type)));
        if (e->has_type_length)
            set(o, "type_length", json_integer(e->type_length));
        if (e->has_converted)
            set(o, "converted_type", json_string(converted_name(e->converted_type)));
        if (e->logical.kind)
            set(o, "logical_type", logical_json(&e->logical));
        if (e->has_precision)
            set(o, "precision", json_integer(e->precision));
        if (e->has_scale)
            set(o, "scale", json_integer(e->scale));
        if (e->has_field_id)
            set(o, "field_id", json_integer(e->field_id));
        if (!e->has_num_children && e->has_type && leaf < r->n_leaves) {
            const pqr_node *n = r->leaves[leaf++];
            char t[48];
            set(o, "read_as", json_string(mcdc_type_name(t, sizeof t, &n->col)));
            set(o, "max_definition_level", json_integer(n->def_level));
            set(o, "max_repetition_level", json_integer(n->rep_level));
        }
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *chunk_json(const mcdc_parquet_reader *r, size_t idx, const mcdc_pq_column_chunk *cc)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const pqr_node *leaf = idx < r->n_leaves ? r->leaves[idx] : NULL;
    if (cc->file_path)
        set(o, "file_path", json_string(cc->file_path));
    set(o, "file_offset", json_integer(cc->file_offset));
    if (cc->is_encrypted)
        set(o, "encrypted", json_true());
    if (!cc->has_meta_data)
        return o;
    const mcdc_pq_column_meta *m = &cc->meta_data;
    json_t *path = json_array();
    for (size_t i = 0; path && i < m->n_path; i++)
        json_array_append_new(path, json_string(m->path[i] ? m->path[i] : ""));
    set(o, "path", path);
    set(o, "physical_type", json_string(mcdc_pq__type_name(m->type)));
    set(o, "codec", json_string(mcdc_pq__codec_name(m->codec)));
    json_t *enc = json_array();
    for (size_t i = 0; enc && i < m->n_encodings; i++)
        json_array_append_new(enc, json_string(mcdc_pq__encoding_name(m->encodings[i])));
    set(o, "encodings", enc);
    set(o, "num_values", json_integer(m->num_values));
    set(o, "total_compressed_size", json_integer(m->total_compressed_size));
    set(o, "total_uncompressed_size", json_integer(m->total_uncompressed_size));
    set(o, "data_page_offset", json_integer(m->data_page_offset));
    if (m->has_dictionary_page_offset)
        set(o, "dictionary_page_offset", json_integer(m->dictionary_page_offset));
    if (m->has_index_page_offset)
        set(o, "index_page_offset", json_integer(m->index_page_offset));
    if (m->has_bloom_filter_offset)
        set(o, "bloom_filter_offset", json_integer(m->bloom_filter_offset));
    if (cc->has_column_index)
        set(o, "column_index_offset", json_integer(cc->column_index_offset));
    if (cc->has_offset_index)
        set(o, "offset_index_offset", json_integer(cc->offset_index_offset));
    if (m->has_statistics)
        set(o, "statistics", stats_json(leaf && leaf->ptype == m->type ? leaf : NULL, &m->statistics));
    return o;
}

int mcdc_parquet_reader_meta_json(const mcdc_parquet_reader *r, json_t **out)
{
    MCDC_ASSERT_ARG(r && out);
    json_t *doc = json_object();
    if (!doc)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    set(doc, "file", json_string(r->name));
    set(doc, "file_size", json_integer((json_int_t)r->file_len));
    set(doc, "version", json_integer(r->md.version));
    set(doc, "num_rows", json_integer(r->md.num_rows));
    if (r->md.created_by)
        set(doc, "created_by", json_string(r->md.created_by));
    json_t *kv = json_object();
    for (size_t i = 0; kv && i < r->md.n_kv; i++) {
        const mcdc_pq_key_value *p = &r->md.kv[i];
        json_t *v = p->value ? json_stringn(p->value, p->value_len) : json_null();
        if (!v)
            v = hex_json((const uint8_t *)p->value, p->value_len);
        set(kv, p->key, v);
    }
    set(doc, "key_value_metadata", kv);
    set(doc, "schema", schema_json(r));
    json_t *rgs = json_array();
    for (size_t g = 0; rgs && g < r->md.n_row_groups; g++) {
        const mcdc_pq_row_group *rg = &r->md.row_groups[g];
        json_t *o = json_object();
        if (!o)
            break;
        set(o, "num_rows", json_integer(rg->num_rows));
        set(o, "total_byte_size", json_integer(rg->total_byte_size));
        if (rg->has_total_compressed_size)
            set(o, "total_compressed_size", json_integer(rg->total_compressed_size));
        json_t *cols = json_array();
        for (size_t c = 0; cols && c < rg->n_columns; c++)
            json_array_append_new(cols, chunk_json(r, c, &rg->columns[c]));
        set(o, "columns", cols);
        json_array_append_new(rgs, o);
    }
    set(doc, "row_groups", rgs);
    *out = doc;
    return 0;
}
