/*
 * parquet/format.c: serialise and parse the Parquet metadata structs of format.h.
 *
 * Writing emits fields in ascending id order and only those that are set. Parsing is
 * defensive: every read goes through the bounded Thrift reader, fields of unknown id or of
 * an unexpected wire type are skipped, required fields are checked, list sizes are capped
 * by the bytes left and by the MCDC_PQ_MAX_* limits, and a failure frees whatever was
 * built so far. Field ids and a worked example: format.h.
 */
#include "parquet/format.h"

#include <stdlib.h>
#include <string.h>

#include "parquet/thrift.h"

/* ================================================================ writing */

static void write_bytes_field(mcdc_thrift_writer *w, int16_t id, const mcdc_pq_bytes *b)
{
    if (b->set)
        mcdc_thrift__field_binary(w, id, b->ptr, b->len);
}

static void write_statistics(mcdc_thrift_writer *w, int16_t id, const mcdc_pq_statistics *s)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_STRUCT);
    mcdc_thrift__struct_begin(w);
    write_bytes_field(w, 1, &s->max);
    write_bytes_field(w, 2, &s->min);
    if (s->has_null_count)
        mcdc_thrift__field_i64(w, 3, s->null_count);
    if (s->has_distinct_count)
        mcdc_thrift__field_i64(w, 4, s->distinct_count);
    write_bytes_field(w, 5, &s->max_value);
    write_bytes_field(w, 6, &s->min_value);
    if (s->has_is_max_value_exact)
        mcdc_thrift__field_bool(w, 7, s->is_max_value_exact);
    if (s->has_is_min_value_exact)
        mcdc_thrift__field_bool(w, 8, s->is_min_value_exact);
    mcdc_thrift__struct_end(w);
}

static void write_kv_list(mcdc_thrift_writer *w, int16_t id, const mcdc_pq_key_value *kv, size_t n)
{
    mcdc_thrift__field(w, id, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(w, MCDC_THRIFT_STRUCT, n);
    for (size_t i = 0; i < n; i++) {
        mcdc_thrift__struct_begin(w);
        mcdc_thrift__field_string(w, 1, kv[i].key);
        if (kv[i].value)
            mcdc_thrift__field_binary(w, 2, kv[i].value, kv[i].value_len);
        mcdc_thrift__struct_end(w);
    }
}

static void write_logical(mcdc_thrift_writer *w, const mcdc_pq_logical_type *lt)
{
    mcdc_thrift__field(w, 10, MCDC_THRIFT_STRUCT);
    mcdc_thrift__struct_begin(w);
    switch (lt->kind) {
    case MCDC_PQ_LT_DECIMAL:
        mcdc_thrift__field(w, 5, MCDC_THRIFT_STRUCT);
        mcdc_thrift__struct_begin(w);
        mcdc_thrift__field_i32(w, 1, lt->dec_scale);
        mcdc_thrift__field_i32(w, 2, lt->dec_precision);
        mcdc_thrift__struct_end(w);
        break;
    case MCDC_PQ_LT_TIME:
    case MCDC_PQ_LT_TIMESTAMP:
        mcdc_thrift__field(w, (int16_t)lt->kind, MCDC_THRIFT_STRUCT);
        mcdc_thrift__struct_begin(w);
        mcdc_thrift__field_bool(w, 1, lt->is_adjusted_utc);
        mcdc_thrift__field(w, 2, MCDC_THRIFT_STRUCT);
        mcdc_thrift__struct_begin(w);
        mcdc_thrift__field_empty_struct(w, (int16_t)lt->unit);
        mcdc_thrift__struct_end(w);
        mcdc_thrift__struct_end(w);
        break;
    case MCDC_PQ_LT_INTEGER:
        mcdc_thrift__field(w, 10, MCDC_THRIFT_STRUCT);
        mcdc_thrift__struct_begin(w);
        mcdc_thrift__field_i8(w, 1, lt->int_bit_width);
        mcdc_thrift__field_bool(w, 2, lt->int_signed);
        mcdc_thrift__struct_end(w);
        break;
    default: /* the unit types: an empty struct */
        mcdc_thrift__field_empty_struct(w, (int16_t)lt->kind);
        break;
    }
    mcdc_thrift__struct_end(w);
}

static void write_schema_element(mcdc_thrift_writer *w, const mcdc_pq_schema_element *e)
{
    mcdc_thrift__struct_begin(w);
    if (e->has_type)
        mcdc_thrift__field_i32(w, 1, e->type);
    if (e->has_type_length)
        mcdc_thrift__field_i32(w, 2, e->type_length);
    if (e->has_repetition)
        mcdc_thrift__field_i32(w, 3, e->repetition);
    mcdc_thrift__field_string(w, 4, e->name ? e->name : "");
    if (e->has_num_children)
        mcdc_thrift__field_i32(w, 5, e->num_children);
    if (e->has_converted)
        mcdc_thrift__field_i32(w, 6, e->converted_type);
    if (e->has_scale)
        mcdc_thrift__field_i32(w, 7, e->scale);
    if (e->has_precision)
        mcdc_thrift__field_i32(w, 8, e->precision);
    if (e->has_field_id)
        mcdc_thrift__field_i32(w, 9, e->field_id);
    if (e->logical.kind > 0)
        write_logical(w, &e->logical);
    mcdc_thrift__struct_end(w);
}

static void write_column_meta(mcdc_thrift_writer *w, const mcdc_pq_column_meta *c)
{
    mcdc_thrift__struct_begin(w);
    mcdc_thrift__field_i32(w, 1, c->type);
    mcdc_thrift__field(w, 2, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(w, MCDC_THRIFT_I32, c->n_encodings);
    for (size_t i = 0; i < c->n_encodings; i++)
        mcdc_thrift__write_i32(w, c->encodings[i]);
    mcdc_thrift__field(w, 3, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(w, MCDC_THRIFT_BINARY, c->n_path);
    for (size_t i = 0; i < c->n_path; i++)
        mcdc_thrift__write_binary(w, c->path[i], strlen(c->path[i]));
    mcdc_thrift__field_i32(w, 4, c->codec);
    mcdc_thrift__field_i64(w, 5, c->num_values);
    mcdc_thrift__field_i64(w, 6, c->total_uncompressed_size);
    mcdc_thrift__field_i64(w, 7, c->total_compressed_size);
    if (c->n_kv)
        write_kv_list(w, 8, c->kv, c->n_kv);
    mcdc_thrift__field_i64(w, 9, c->data_page_offset);
    if (c->has_index_page_offset)
        mcdc_thrift__field_i64(w, 10, c->index_page_offset);
    if (c->has_dictionary_page_offset)
        mcdc_thrift__field_i64(w, 11, c->dictionary_page_offset);
    if (c->has_statistics)
        write_statistics(w, 12, &c->statistics);
    if (c->n_encoding_stats) {
        mcdc_thrift__field(w, 13, MCDC_THRIFT_LIST);
        mcdc_thrift__list_begin(w, MCDC_THRIFT_STRUCT, c->n_encoding_stats);
        for (size_t i = 0; i < c->n_encoding_stats; i++) {
            mcdc_thrift__struct_begin(w);
            mcdc_thrift__field_i32(w, 1, c->encoding_stats[i].page_type);
            mcdc_thrift__field_i32(w, 2, c->encoding_stats[i].encoding);
            mcdc_thrift__field_i32(w, 3, c->encoding_stats[i].count);
            mcdc_thrift__struct_end(w);
        }
    }
    if (c->has_bloom_filter_offset)
        mcdc_thrift__field_i64(w, 14, c->bloom_filter_offset);
    if (c->has_bloom_filter_length)
        mcdc_thrift__field_i32(w, 15, c->bloom_filter_length);
    mcdc_thrift__struct_end(w);
}

static void write_column_chunk(mcdc_thrift_writer *w, const mcdc_pq_column_chunk *c)
{
    mcdc_thrift__struct_begin(w);
    if (c->file_path)
        mcdc_thrift__field_string(w, 1, c->file_path);
    mcdc_thrift__field_i64(w, 2, c->file_offset);
    if (c->has_meta_data) {
        mcdc_thrift__field(w, 3, MCDC_THRIFT_STRUCT);
        write_column_meta(w, &c->meta_data);
    }
    if (c->has_offset_index) {
        mcdc_thrift__field_i64(w, 4, c->offset_index_offset);
        mcdc_thrift__field_i32(w, 5, c->offset_index_length);
    }
    if (c->has_column_index) {
        mcdc_thrift__field_i64(w, 6, c->column_index_offset);
        mcdc_thrift__field_i32(w, 7, c->column_index_length);
    }
    mcdc_thrift__struct_end(w);
}

static void write_row_group(mcdc_thrift_writer *w, const mcdc_pq_row_group *g)
{
    mcdc_thrift__struct_begin(w);
    mcdc_thrift__field(w, 1, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(w, MCDC_THRIFT_STRUCT, g->n_columns);
    for (size_t i = 0; i < g->n_columns; i++)
        write_column_chunk(w, &g->columns[i]);
    mcdc_thrift__field_i64(w, 2, g->total_byte_size);
    mcdc_thrift__field_i64(w, 3, g->num_rows);
    if (g->n_sorting_columns) {
        mcdc_thrift__field(w, 4, MCDC_THRIFT_LIST);
        mcdc_thrift__list_begin(w, MCDC_THRIFT_STRUCT, g->n_sorting_columns);
        for (size_t i = 0; i < g->n_sorting_columns; i++) {
            mcdc_thrift__struct_begin(w);
            mcdc_thrift__field_i32(w, 1, g->sorting_columns[i].column_idx);
            mcdc_thrift__field_bool(w, 2, g->sorting_columns[i].descending);
            mcdc_thrift__field_bool(w, 3, g->sorting_columns[i].nulls_first);
            mcdc_thrift__struct_end(w);
        }
    }
    if (g->has_file_offset)
        mcdc_thrift__field_i64(w, 5, g->file_offset);
    if (g->has_total_compressed_size)
        mcdc_thrift__field_i64(w, 6, g->total_compressed_size);
    if (g->has_ordinal)
        mcdc_thrift__field_i16(w, 7, g->ordinal);
    mcdc_thrift__struct_end(w);
}

int mcdc_pq__write_file_metadata(mcdc_buf *out, const mcdc_pq_file_metadata *m)
{
    mcdc_thrift_writer w;
    mcdc_thrift__writer_init(&w, out);
    mcdc_thrift__struct_begin(&w);
    mcdc_thrift__field_i32(&w, 1, m->version);
    mcdc_thrift__field(&w, 2, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(&w, MCDC_THRIFT_STRUCT, m->n_schema);
    for (size_t i = 0; i < m->n_schema; i++)
        write_schema_element(&w, &m->schema[i]);
    mcdc_thrift__field_i64(&w, 3, m->num_rows);
    mcdc_thrift__field(&w, 4, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(&w, MCDC_THRIFT_STRUCT, m->n_row_groups);
    for (size_t i = 0; i < m->n_row_groups; i++)
        write_row_group(&w, &m->row_groups[i]);
    if (m->n_kv)
        write_kv_list(&w, 5, m->kv, m->n_kv);
    if (m->created_by)
        mcdc_thrift__field_string(&w, 6, m->created_by);
    if (m->has_column_orders) {
        mcdc_thrift__field(&w, 7, MCDC_THRIFT_LIST);
        mcdc_thrift__list_begin(&w, MCDC_THRIFT_STRUCT, m->n_column_orders);
        for (size_t i = 0; i < m->n_column_orders; i++) {
            mcdc_thrift__struct_begin(&w);
            if (m->column_orders[i] > 0)
                mcdc_thrift__field_empty_struct(&w, (int16_t)m->column_orders[i]);
            mcdc_thrift__struct_end(&w);
        }
    }
    mcdc_thrift__struct_end(&w);
    return mcdc_thrift__writer_rc(&w);
}

int mcdc_pq__write_page_header(mcdc_buf *out, const mcdc_pq_page_header *h)
{
    mcdc_thrift_writer w;
    mcdc_thrift__writer_init(&w, out);
    mcdc_thrift__struct_begin(&w);
    mcdc_thrift__field_i32(&w, 1, h->type);
    mcdc_thrift__field_i32(&w, 2, h->uncompressed_page_size);
    mcdc_thrift__field_i32(&w, 3, h->compressed_page_size);
    if (h->has_crc)
        mcdc_thrift__field_i32(&w, 4, h->crc);
    if (h->has_data_page_header) {
        const mcdc_pq_data_page_header *d = &h->data_page_header;
        mcdc_thrift__field(&w, 5, MCDC_THRIFT_STRUCT);
        mcdc_thrift__struct_begin(&w);
        mcdc_thrift__field_i32(&w, 1, d->num_values);
        mcdc_thrift__field_i32(&w, 2, d->encoding);
        mcdc_thrift__field_i32(&w, 3, d->definition_level_encoding);
        mcdc_thrift__field_i32(&w, 4, d->repetition_level_encoding);
        if (d->has_statistics)
            write_statistics(&w, 5, &d->statistics);
        mcdc_thrift__struct_end(&w);
    }
    if (h->has_dictionary_page_header) {
        const mcdc_pq_dictionary_page_header *d = &h->dictionary_page_header;
        mcdc_thrift__field(&w, 7, MCDC_THRIFT_STRUCT);
        mcdc_thrift__struct_begin(&w);
        mcdc_thrift__field_i32(&w, 1, d->num_values);
        mcdc_thrift__field_i32(&w, 2, d->encoding);
        if (d->has_is_sorted)
            mcdc_thrift__field_bool(&w, 3, d->is_sorted);
        mcdc_thrift__struct_end(&w);
    }
    if (h->has_data_page_header_v2) {
        const mcdc_pq_data_page_header_v2 *d = &h->data_page_header_v2;
        mcdc_thrift__field(&w, 8, MCDC_THRIFT_STRUCT);
        mcdc_thrift__struct_begin(&w);
        mcdc_thrift__field_i32(&w, 1, d->num_values);
        mcdc_thrift__field_i32(&w, 2, d->num_nulls);
        mcdc_thrift__field_i32(&w, 3, d->num_rows);
        mcdc_thrift__field_i32(&w, 4, d->encoding);
        mcdc_thrift__field_i32(&w, 5, d->definition_levels_byte_length);
        mcdc_thrift__field_i32(&w, 6, d->repetition_levels_byte_length);
        if (!d->is_compressed)
            mcdc_thrift__field_bool(&w, 7, false);
        if (d->has_statistics)
            write_statistics(&w, 8, &d->statistics);
        mcdc_thrift__struct_end(&w);
    }
    mcdc_thrift__struct_end(&w);
    return mcdc_thrift__writer_rc(&w);
}

/* ================================================================ parsing */

/* Each parse_* reads one struct (after its field header or as a list element) and keeps
 * what it knows. A field whose wire type is not the expected one is skipped. */

/* Inside a switch case: skip the field and leave the case when its wire type is wrong. */
#define EXPECT(t)                                   \
    if (type != (t)) {                              \
        rc = mcdc_thrift__skip(r, type, false);     \
        break;                                      \
    }

static int nomem(const mcdc_thrift_reader *r)
{
    return mcdc_error_set(MCDC_ENOMEM, "%s at byte %llu: out of memory", r->what,
                          (unsigned long long)mcdc_thrift__reader_offset(r));
}

static int read_string(mcdc_thrift_reader *r, char **out, size_t *len_out)
{
    const uint8_t *p;
    size_t len;
    int rc = mcdc_thrift__read_binary(r, &p, &len);
    if (rc < 0)
        return rc;
    char *s = malloc(len + 1);
    if (!s)
        return nomem(r);
    memcpy(s, p, len);
    s[len] = 0;
    free(*out); /* a repeated field: the last one wins */
    *out = s;
    if (len_out)
        *len_out = len;
    return 0;
}

static int read_bytes(mcdc_thrift_reader *r, mcdc_pq_bytes *b)
{
    char *s = (char *)b->ptr;
    int rc = read_string(r, &s, &b->len);
    if (rc == 0) {
        b->ptr = (uint8_t *)s;
        b->set = true;
    }
    return rc;
}

/* Start a list field of structs or scalars: checks the element type and the caps,
 * allocates n elements of size sz (zeroed). On a type mismatch the list is skipped and
 * *n is 0. */
static int list_alloc(mcdc_thrift_reader *r, int want, size_t sz, size_t cap, void **out,
                      uint32_t *n, const char *what)
{
    int et;
    int rc = mcdc_thrift__read_list_begin(r, &et, n);
    if (rc < 0)
        return rc;
    if (et != want) {
        for (uint32_t i = 0; i < *n && rc == 0; i++)
            rc = mcdc_thrift__skip(r, et, true);
        mcdc_thrift__read_list_end(r);
        *n = 0;
        return rc < 0 ? rc : 1;
    }
    if (*n > cap) {
        mcdc_thrift__read_list_end(r);
        return mcdc_thrift__corrupt(r, "%s list of %u entries is over the limit of %zu", what,
                                    *n, cap);
    }
    *out = NULL;
    if (*n) {
        *out = calloc(*n, sz);
        if (!*out) {
            mcdc_thrift__read_list_end(r);
            return nomem(r);
        }
    }
    return 0;
}

static int parse_statistics(mcdc_thrift_reader *r, mcdc_pq_statistics *s)
{
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        bool is_bool = type == MCDC_THRIFT_BOOL_TRUE || type == MCDC_THRIFT_BOOL_FALSE;
        switch (id) {
        case 1: EXPECT(MCDC_THRIFT_BINARY); rc = read_bytes(r, &s->max); break;
        case 2: EXPECT(MCDC_THRIFT_BINARY); rc = read_bytes(r, &s->min); break;
        case 3: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &s->null_count);
                s->has_null_count = rc == 0; break;
        case 4: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &s->distinct_count);
                s->has_distinct_count = rc == 0; break;
        case 5: EXPECT(MCDC_THRIFT_BINARY); rc = read_bytes(r, &s->max_value); break;
        case 6: EXPECT(MCDC_THRIFT_BINARY); rc = read_bytes(r, &s->min_value); break;
        case 7: if (is_bool) { s->has_is_max_value_exact = true; s->is_max_value_exact = r->bool_value; }
                break;
        case 8: if (is_bool) { s->has_is_min_value_exact = true; s->is_min_value_exact = r->bool_value; }
                break;
        default: rc = mcdc_thrift__skip(r, type, false); break;
        }
    }
    mcdc_thrift__read_struct_end(r);
    return rc;
}

static int parse_kv_list(mcdc_thrift_reader *r, mcdc_pq_key_value **out, size_t *n_out)
{
    uint32_t n;
    void *arr;
    int rc = list_alloc(r, MCDC_THRIFT_STRUCT, sizeof(mcdc_pq_key_value), MCDC_PQ_MAX_KV, &arr,
                        &n, "key_value_metadata");
    if (rc != 0)
        return rc < 0 ? rc : 0;
    /* A repeated list field: drop the earlier one. */
    for (size_t i = 0; i < *n_out; i++) {
        free((*out)[i].key);
        free((*out)[i].value);
    }
    free(*out);
    *out = arr;
    *n_out = n;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        mcdc_pq_key_value *kv = &(*out)[i];
        bool has_key = false;
        const uint8_t *at = r->pos;
        rc = mcdc_thrift__read_struct_begin(r);
        for (int16_t id; rc == 0;) {
            int type;
            if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
                break;
            switch (id) {
            case 1: EXPECT(MCDC_THRIFT_BINARY); rc = read_string(r, &kv->key, NULL);
                    has_key = rc == 0; break;
            case 2: EXPECT(MCDC_THRIFT_BINARY); rc = read_string(r, &kv->value, &kv->value_len);
                    break;
            default: rc = mcdc_thrift__skip(r, type, false); break;
            }
        }
        mcdc_thrift__read_struct_end(r);
        if (rc == 0 && !has_key) {
            r->pos = at;
            rc = mcdc_thrift__corrupt(r, "KeyValue without a key");
        }
    }
    mcdc_thrift__read_list_end(r);
    return rc;
}

static int parse_time_unit(mcdc_thrift_reader *r, int *unit)
{
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        if (type == MCDC_THRIFT_STRUCT && id >= 1 && id <= 3)
            *unit = id;
        rc = mcdc_thrift__skip(r, type, false);
    }
    mcdc_thrift__read_struct_end(r);
    return rc;
}

static int parse_logical_member(mcdc_thrift_reader *r, int16_t kind, mcdc_pq_logical_type *lt)
{
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        bool is_bool = type == MCDC_THRIFT_BOOL_TRUE || type == MCDC_THRIFT_BOOL_FALSE;
        if (kind == MCDC_PQ_LT_DECIMAL && id == 1 && type == MCDC_THRIFT_I32)
            rc = mcdc_thrift__read_i32(r, &lt->dec_scale);
        else if (kind == MCDC_PQ_LT_DECIMAL && id == 2 && type == MCDC_THRIFT_I32)
            rc = mcdc_thrift__read_i32(r, &lt->dec_precision);
        else if ((kind == MCDC_PQ_LT_TIME || kind == MCDC_PQ_LT_TIMESTAMP) && id == 1 && is_bool)
            lt->is_adjusted_utc = r->bool_value;
        else if ((kind == MCDC_PQ_LT_TIME || kind == MCDC_PQ_LT_TIMESTAMP) && id == 2 &&
                 type == MCDC_THRIFT_STRUCT)
            rc = parse_time_unit(r, &lt->unit);
        else if (kind == MCDC_PQ_LT_INTEGER && id == 1 && type == MCDC_THRIFT_I8)
            rc = mcdc_thrift__read_i8(r, &lt->int_bit_width);
        else if (kind == MCDC_PQ_LT_INTEGER && id == 2 && is_bool)
            lt->int_signed = r->bool_value;
        else
            rc = mcdc_thrift__skip(r, type, false);
    }
    mcdc_thrift__read_struct_end(r);
    return rc;
}

static int parse_logical(mcdc_thrift_reader *r, mcdc_pq_logical_type *lt)
{
    memset(lt, 0, sizeof *lt);
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        if (type != MCDC_THRIFT_STRUCT) {
            rc = mcdc_thrift__skip(r, type, false);
            continue;
        }
        bool known = (id >= 1 && id <= 8) || (id >= 10 && id <= 15);
        lt->kind = known ? id : MCDC_PQ_LT_UNSUPPORTED;
        rc = parse_logical_member(r, id, lt);
    }
    mcdc_thrift__read_struct_end(r);
    return rc;
}

static int parse_schema_element(mcdc_thrift_reader *r, mcdc_pq_schema_element *e)
{
    const uint8_t *at = r->pos;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        int32_t *dst = id == 1 ? &e->type : id == 2 ? &e->type_length : id == 3 ? &e->repetition
                     : id == 5 ? &e->num_children : id == 6 ? &e->converted_type
                     : id == 7 ? &e->scale : id == 8 ? &e->precision : id == 9 ? &e->field_id
                     : NULL;
        bool *has = id == 1 ? &e->has_type : id == 2 ? &e->has_type_length
                  : id == 3 ? &e->has_repetition : id == 5 ? &e->has_num_children
                  : id == 6 ? &e->has_converted : id == 7 ? &e->has_scale
                  : id == 8 ? &e->has_precision : id == 9 ? &e->has_field_id : NULL;
        if (dst && type == MCDC_THRIFT_I32) {
            rc = mcdc_thrift__read_i32(r, dst);
            *has = rc == 0;
        } else if (id == 4 && type == MCDC_THRIFT_BINARY) {
            rc = read_string(r, &e->name, NULL);
        } else if (id == 10 && type == MCDC_THRIFT_STRUCT) {
            rc = parse_logical(r, &e->logical);
        } else {
            rc = mcdc_thrift__skip(r, type, false);
        }
    }
    mcdc_thrift__read_struct_end(r);
    if (rc == 0 && !e->name) {
        r->pos = at;
        rc = mcdc_thrift__corrupt(r, "SchemaElement without a name");
    }
    if (rc == 0 && e->has_num_children && e->num_children < 0)
        rc = mcdc_thrift__corrupt(r, "SchemaElement %s has %d children", e->name, e->num_children);
    return rc;
}

static int parse_column_meta(mcdc_thrift_reader *r, mcdc_pq_column_meta *c)
{
    const uint8_t *at = r->pos;
    unsigned seen = 0;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        uint32_t n;
        void *arr;
        switch (id) {
        case 1: EXPECT(MCDC_THRIFT_I32); rc = mcdc_thrift__read_i32(r, &c->type); break;
        case 4: EXPECT(MCDC_THRIFT_I32); rc = mcdc_thrift__read_i32(r, &c->codec); break;
        case 5: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->num_values); break;
        case 6: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->total_uncompressed_size);
                break;
        case 7: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->total_compressed_size);
                break;
        case 9: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->data_page_offset); break;
        case 10: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->index_page_offset);
                 c->has_index_page_offset = rc == 0; break;
        case 11: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->dictionary_page_offset);
                 c->has_dictionary_page_offset = rc == 0; break;
        case 14: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->bloom_filter_offset);
                 c->has_bloom_filter_offset = rc == 0; break;
        case 15: EXPECT(MCDC_THRIFT_I32); rc = mcdc_thrift__read_i32(r, &c->bloom_filter_length);
                 c->has_bloom_filter_length = rc == 0; break;
        case 8: EXPECT(MCDC_THRIFT_LIST); rc = parse_kv_list(r, &c->kv, &c->n_kv); break;
        case 12:
            EXPECT(MCDC_THRIFT_STRUCT);
            mcdc_pq__statistics_dispose(&c->statistics);
            rc = parse_statistics(r, &c->statistics);
            c->has_statistics = true;
            break;
        case 2:
            EXPECT(MCDC_THRIFT_LIST);
            rc = list_alloc(r, MCDC_THRIFT_I32, sizeof(int32_t), 1000, &arr, &n, "encodings");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            free(c->encodings);
            c->encodings = arr;
            c->n_encodings = n;
            for (uint32_t i = 0; i < n && rc == 0; i++)
                rc = mcdc_thrift__read_i32(r, &c->encodings[i]);
            mcdc_thrift__read_list_end(r);
            break;
        case 3:
            EXPECT(MCDC_THRIFT_LIST);
            rc = list_alloc(r, MCDC_THRIFT_BINARY, sizeof(char *), MCDC_PQ_MAX_SCHEMA, &arr, &n,
                            "path_in_schema");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            for (size_t i = 0; i < c->n_path; i++)
                free(c->path[i]);
            free(c->path);
            c->path = arr;
            c->n_path = n;
            for (uint32_t i = 0; i < n && rc == 0; i++)
                rc = read_string(r, &c->path[i], NULL);
            mcdc_thrift__read_list_end(r);
            break;
        case 13:
            EXPECT(MCDC_THRIFT_LIST);
            rc = list_alloc(r, MCDC_THRIFT_STRUCT, sizeof(mcdc_pq_encoding_stats), 10000, &arr, &n,
                            "encoding_stats");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            free(c->encoding_stats);
            c->encoding_stats = arr;
            c->n_encoding_stats = n;
            for (uint32_t i = 0; i < n && rc == 0; i++) {
                mcdc_pq_encoding_stats *es = &c->encoding_stats[i];
                rc = mcdc_thrift__read_struct_begin(r);
                for (int16_t fid; rc == 0;) {
                    int ft;
                    if ((rc = mcdc_thrift__read_field(r, &fid, &ft)) < 0 || ft == MCDC_THRIFT_STOP)
                        break;
                    int32_t *dst = fid == 1 ? &es->page_type : fid == 2 ? &es->encoding
                                 : fid == 3 ? &es->count : NULL;
                    rc = dst && ft == MCDC_THRIFT_I32 ? mcdc_thrift__read_i32(r, dst)
                                                      : mcdc_thrift__skip(r, ft, false);
                }
                mcdc_thrift__read_struct_end(r);
            }
            mcdc_thrift__read_list_end(r);
            break;
        default: rc = mcdc_thrift__skip(r, type, false); break;
        }
        static const int8_t wire[10] = { 0, MCDC_THRIFT_I32, MCDC_THRIFT_LIST, MCDC_THRIFT_LIST,
                                         MCDC_THRIFT_I32, MCDC_THRIFT_I64, MCDC_THRIFT_I64,
                                         MCDC_THRIFT_I64, 0, MCDC_THRIFT_I64 };
        if (rc == 0 && id >= 1 && id <= 9 && type == wire[id])
            seen |= 1u << id;
    }
    mcdc_thrift__read_struct_end(r);
    unsigned required = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) |
                        (1u << 7) | (1u << 9);
    if (rc == 0 && (seen & required) != required) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "ColumnMetaData lacks required fields");
    }
    if (rc == 0 && (c->num_values < 0 || c->total_compressed_size < 0 ||
                    c->total_uncompressed_size < 0 || c->data_page_offset < 0)) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "ColumnMetaData has a negative size or offset");
    }
    return rc;
}

static int parse_column_chunk(mcdc_thrift_reader *r, mcdc_pq_column_chunk *c)
{
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        switch (id) {
        case 1: EXPECT(MCDC_THRIFT_BINARY); rc = read_string(r, &c->file_path, NULL); break;
        case 2: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->file_offset); break;
        case 3:
            EXPECT(MCDC_THRIFT_STRUCT);
            mcdc_pq__column_meta_dispose(&c->meta_data);
            rc = parse_column_meta(r, &c->meta_data);
            c->has_meta_data = true;
            break;
        case 4: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->offset_index_offset);
                c->has_offset_index = rc == 0; break;
        case 5: EXPECT(MCDC_THRIFT_I32); rc = mcdc_thrift__read_i32(r, &c->offset_index_length);
                break;
        case 6: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &c->column_index_offset);
                c->has_column_index = rc == 0; break;
        case 7: EXPECT(MCDC_THRIFT_I32); rc = mcdc_thrift__read_i32(r, &c->column_index_length);
                break;
        case 8:
        case 9:
            c->is_encrypted = true;
            rc = mcdc_thrift__skip(r, type, false);
            break;
        default: rc = mcdc_thrift__skip(r, type, false); break;
        }
    }
    mcdc_thrift__read_struct_end(r);
    return rc;
}

static int parse_row_group(mcdc_thrift_reader *r, mcdc_pq_row_group *g)
{
    const uint8_t *at = r->pos;
    bool has_cols = false, has_rows = false;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        uint32_t n;
        void *arr;
        switch (id) {
        case 1:
            EXPECT(MCDC_THRIFT_LIST);
            if (g->columns) { rc = mcdc_thrift__corrupt(r, "RowGroup.columns repeated"); break; }
            rc = list_alloc(r, MCDC_THRIFT_STRUCT, sizeof(mcdc_pq_column_chunk),
                            MCDC_PQ_MAX_SCHEMA, &arr, &n, "columns");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            g->columns = arr;
            g->n_columns = n;
            for (uint32_t i = 0; i < n && rc == 0; i++)
                rc = parse_column_chunk(r, &g->columns[i]);
            mcdc_thrift__read_list_end(r);
            has_cols = true;
            break;
        case 2: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &g->total_byte_size); break;
        case 3: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &g->num_rows);
                has_rows = rc == 0; break;
        case 4:
            EXPECT(MCDC_THRIFT_LIST);
            rc = list_alloc(r, MCDC_THRIFT_STRUCT, sizeof(mcdc_pq_sorting_column),
                            MCDC_PQ_MAX_SCHEMA, &arr, &n, "sorting_columns");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            free(g->sorting_columns);
            g->sorting_columns = arr;
            g->n_sorting_columns = n;
            for (uint32_t i = 0; i < n && rc == 0; i++) {
                mcdc_pq_sorting_column *sc = &g->sorting_columns[i];
                rc = mcdc_thrift__read_struct_begin(r);
                for (int16_t fid; rc == 0;) {
                    int ft;
                    if ((rc = mcdc_thrift__read_field(r, &fid, &ft)) < 0 || ft == MCDC_THRIFT_STOP)
                        break;
                    bool is_bool = ft == MCDC_THRIFT_BOOL_TRUE || ft == MCDC_THRIFT_BOOL_FALSE;
                    if (fid == 1 && ft == MCDC_THRIFT_I32)
                        rc = mcdc_thrift__read_i32(r, &sc->column_idx);
                    else if (fid == 2 && is_bool)
                        sc->descending = r->bool_value;
                    else if (fid == 3 && is_bool)
                        sc->nulls_first = r->bool_value;
                    else
                        rc = mcdc_thrift__skip(r, ft, false);
                }
                mcdc_thrift__read_struct_end(r);
            }
            mcdc_thrift__read_list_end(r);
            break;
        case 5: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &g->file_offset);
                g->has_file_offset = rc == 0; break;
        case 6: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &g->total_compressed_size);
                g->has_total_compressed_size = rc == 0; break;
        case 7: EXPECT(MCDC_THRIFT_I16); rc = mcdc_thrift__read_i16(r, &g->ordinal);
                g->has_ordinal = rc == 0; break;
        default: rc = mcdc_thrift__skip(r, type, false); break;
        }
    }
    mcdc_thrift__read_struct_end(r);
    if (rc == 0 && (!has_cols || !has_rows)) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "RowGroup lacks %s", has_cols ? "num_rows" : "columns");
    }
    if (rc == 0 && g->num_rows < 0) {
        r->pos = at;
        return mcdc_thrift__corrupt(r, "RowGroup has %lld rows", (long long)g->num_rows);
    }
    return rc;
}

int mcdc_pq__parse_file_metadata(mcdc_pq_file_metadata *m, const uint8_t *p, size_t len,
                                 uint64_t base_off)
{
    mcdc_thrift_reader rd, *r = &rd;
    mcdc_thrift__reader_init(r, p, len, base_off, "footer");
    memset(m, 0, sizeof *m);
    bool has_version = false, has_schema = false, has_rows = false, has_groups = false;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        uint32_t n;
        void *arr;
        switch (id) {
        case 1: EXPECT(MCDC_THRIFT_I32); rc = mcdc_thrift__read_i32(r, &m->version);
                has_version = rc == 0; break;
        case 2:
            EXPECT(MCDC_THRIFT_LIST);
            if (m->schema) { rc = mcdc_thrift__corrupt(r, "FileMetaData.schema repeated"); break; }
            rc = list_alloc(r, MCDC_THRIFT_STRUCT, sizeof(mcdc_pq_schema_element),
                            MCDC_PQ_MAX_SCHEMA, &arr, &n, "schema");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            m->schema = arr;
            m->n_schema = n;
            for (uint32_t i = 0; i < n && rc == 0; i++)
                rc = parse_schema_element(r, &m->schema[i]);
            mcdc_thrift__read_list_end(r);
            has_schema = true;
            break;
        case 3: EXPECT(MCDC_THRIFT_I64); rc = mcdc_thrift__read_i64(r, &m->num_rows);
                has_rows = rc == 0; break;
        case 4:
            EXPECT(MCDC_THRIFT_LIST);
            if (m->row_groups) { rc = mcdc_thrift__corrupt(r, "FileMetaData.row_groups repeated"); break; }
            rc = list_alloc(r, MCDC_THRIFT_STRUCT, sizeof(mcdc_pq_row_group),
                            MCDC_PQ_MAX_ROW_GROUPS, &arr, &n, "row_groups");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            m->row_groups = arr;
            m->n_row_groups = n;
            for (uint32_t i = 0; i < n && rc == 0; i++)
                rc = parse_row_group(r, &m->row_groups[i]);
            mcdc_thrift__read_list_end(r);
            has_groups = true;
            break;
        case 5: EXPECT(MCDC_THRIFT_LIST); rc = parse_kv_list(r, &m->kv, &m->n_kv); break;
        case 6: EXPECT(MCDC_THRIFT_BINARY); rc = read_string(r, &m->created_by, NULL); break;
        case 7:
            EXPECT(MCDC_THRIFT_LIST);
            rc = list_alloc(r, MCDC_THRIFT_STRUCT, sizeof(int32_t), MCDC_PQ_MAX_SCHEMA, &arr, &n,
                            "column_orders");
            if (rc != 0) { rc = rc < 0 ? rc : 0; break; }
            free(m->column_orders);
            m->column_orders = arr;
            m->n_column_orders = n;
            m->has_column_orders = true;
            for (uint32_t i = 0; i < n && rc == 0; i++) {
                rc = mcdc_thrift__read_struct_begin(r);
                for (int16_t fid; rc == 0;) {
                    int ft;
                    if ((rc = mcdc_thrift__read_field(r, &fid, &ft)) < 0 || ft == MCDC_THRIFT_STOP)
                        break;
                    if (fid == 1 && ft == MCDC_THRIFT_STRUCT)
                        m->column_orders[i] = 1;
                    rc = mcdc_thrift__skip(r, ft, false);
                }
                mcdc_thrift__read_struct_end(r);
            }
            mcdc_thrift__read_list_end(r);
            break;
        case 8:
            m->is_encrypted = true;
            rc = mcdc_thrift__skip(r, type, false);
            break;
        default: rc = mcdc_thrift__skip(r, type, false); break;
        }
    }
    mcdc_thrift__read_struct_end(r);
    if (rc == 0 && !(has_version && has_schema && has_rows && has_groups))
        rc = mcdc_thrift__corrupt(r, "FileMetaData lacks %s",
                                  !has_version ? "version" : !has_schema ? "schema"
                                  : !has_rows ? "num_rows" : "row_groups");
    if (rc == 0 && m->num_rows < 0)
        rc = mcdc_thrift__corrupt(r, "FileMetaData has %lld rows", (long long)m->num_rows);
    if (rc < 0)
        mcdc_pq__file_metadata_dispose(m);
    return rc;
}

static int parse_data_page_header(mcdc_thrift_reader *r, mcdc_pq_data_page_header *d)
{
    unsigned seen = 0;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        int32_t *dst = id == 1 ? &d->num_values : id == 2 ? &d->encoding
                     : id == 3 ? &d->definition_level_encoding
                     : id == 4 ? &d->repetition_level_encoding : NULL;
        if (dst && type == MCDC_THRIFT_I32) {
            rc = mcdc_thrift__read_i32(r, dst);
            seen |= 1u << id;
        } else if (id == 5 && type == MCDC_THRIFT_STRUCT) {
            mcdc_pq__statistics_dispose(&d->statistics);
            rc = parse_statistics(r, &d->statistics);
            d->has_statistics = true;
        } else {
            rc = mcdc_thrift__skip(r, type, false);
        }
    }
    mcdc_thrift__read_struct_end(r);
    if (rc == 0 && (seen & 0x1E) != 0x1E)
        return mcdc_thrift__corrupt(r, "DataPageHeader lacks required fields");
    if (rc == 0 && d->num_values < 0)
        return mcdc_thrift__corrupt(r, "DataPageHeader has %d values", d->num_values);
    return rc;
}

static int parse_dictionary_page_header(mcdc_thrift_reader *r, mcdc_pq_dictionary_page_header *d)
{
    unsigned seen = 0;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        if ((id == 1 || id == 2) && type == MCDC_THRIFT_I32) {
            rc = mcdc_thrift__read_i32(r, id == 1 ? &d->num_values : &d->encoding);
            seen |= 1u << id;
        } else if (id == 3 && (type == MCDC_THRIFT_BOOL_TRUE || type == MCDC_THRIFT_BOOL_FALSE)) {
            d->has_is_sorted = true;
            d->is_sorted = r->bool_value;
        } else {
            rc = mcdc_thrift__skip(r, type, false);
        }
    }
    mcdc_thrift__read_struct_end(r);
    if (rc == 0 && (seen & 0x6) != 0x6)
        return mcdc_thrift__corrupt(r, "DictionaryPageHeader lacks required fields");
    if (rc == 0 && d->num_values < 0)
        return mcdc_thrift__corrupt(r, "DictionaryPageHeader has %d values", d->num_values);
    return rc;
}

static int parse_data_page_header_v2(mcdc_thrift_reader *r, mcdc_pq_data_page_header_v2 *d)
{
    unsigned seen = 0;
    d->is_compressed = true;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        int32_t *dst = id == 1 ? &d->num_values : id == 2 ? &d->num_nulls : id == 3 ? &d->num_rows
                     : id == 4 ? &d->encoding : id == 5 ? &d->definition_levels_byte_length
                     : id == 6 ? &d->repetition_levels_byte_length : NULL;
        if (dst && type == MCDC_THRIFT_I32) {
            rc = mcdc_thrift__read_i32(r, dst);
            seen |= 1u << id;
        } else if (id == 7 && (type == MCDC_THRIFT_BOOL_TRUE || type == MCDC_THRIFT_BOOL_FALSE)) {
            d->is_compressed = r->bool_value;
        } else if (id == 8 && type == MCDC_THRIFT_STRUCT) {
            mcdc_pq__statistics_dispose(&d->statistics);
            rc = parse_statistics(r, &d->statistics);
            d->has_statistics = true;
        } else {
            rc = mcdc_thrift__skip(r, type, false);
        }
    }
    mcdc_thrift__read_struct_end(r);
    if (rc == 0 && (seen & 0x7E) != 0x7E)
        return mcdc_thrift__corrupt(r, "DataPageHeaderV2 lacks required fields");
    if (rc == 0 && (d->num_values < 0 || d->num_nulls < 0 || d->num_rows < 0 ||
                    d->definition_levels_byte_length < 0 || d->repetition_levels_byte_length < 0))
        return mcdc_thrift__corrupt(r, "DataPageHeaderV2 has a negative count or length");
    return rc;
}

int mcdc_pq__parse_page_header(mcdc_pq_page_header *h, size_t *consumed, const uint8_t *p,
                               size_t len, uint64_t base_off)
{
    mcdc_thrift_reader rd, *r = &rd;
    mcdc_thrift__reader_init(r, p, len, base_off, "page header");
    memset(h, 0, sizeof *h);
    unsigned seen = 0;
    int rc = mcdc_thrift__read_struct_begin(r);
    for (int16_t id; rc == 0;) {
        int type;
        if ((rc = mcdc_thrift__read_field(r, &id, &type)) < 0 || type == MCDC_THRIFT_STOP)
            break;
        int32_t *dst = id == 1 ? &h->type : id == 2 ? &h->uncompressed_page_size
                     : id == 3 ? &h->compressed_page_size : id == 4 ? &h->crc : NULL;
        if (dst && type == MCDC_THRIFT_I32) {
            rc = mcdc_thrift__read_i32(r, dst);
            seen |= 1u << id;
        } else if (id == 5 && type == MCDC_THRIFT_STRUCT && !h->has_data_page_header) {
            h->has_data_page_header = true;
            rc = parse_data_page_header(r, &h->data_page_header);
        } else if (id == 7 && type == MCDC_THRIFT_STRUCT && !h->has_dictionary_page_header) {
            h->has_dictionary_page_header = true;
            rc = parse_dictionary_page_header(r, &h->dictionary_page_header);
        } else if (id == 8 && type == MCDC_THRIFT_STRUCT && !h->has_data_page_header_v2) {
            h->has_data_page_header_v2 = true;
            rc = parse_data_page_header_v2(r, &h->data_page_header_v2);
        } else {
            rc = mcdc_thrift__skip(r, type, false);
        }
    }
    mcdc_thrift__read_struct_end(r);
    h->has_crc = (seen >> 4) & 1;
    if (rc == 0 && (seen & 0xE) != 0xE)
        rc = mcdc_thrift__corrupt(r, "PageHeader lacks required fields");
    if (rc == 0 && (h->uncompressed_page_size < 0 || h->compressed_page_size < 0))
        rc = mcdc_thrift__corrupt(r, "page sizes %d/%d are negative", h->uncompressed_page_size,
                                  h->compressed_page_size);
    if (rc == 0 && ((h->type == MCDC_PQ_PAGE_DATA && !h->has_data_page_header) ||
                    (h->type == MCDC_PQ_PAGE_DICTIONARY && !h->has_dictionary_page_header) ||
                    (h->type == MCDC_PQ_PAGE_DATA_V2 && !h->has_data_page_header_v2)))
        rc = mcdc_thrift__corrupt(r, "%s page without its header struct",
                                  mcdc_pq__page_type_name(h->type));
    if (rc < 0) {
        mcdc_pq__page_header_dispose(h);
        return rc;
    }
    *consumed = (size_t)(r->pos - r->start);
    return 0;
}

/* ================================================================ disposal */

static void bytes_dispose(mcdc_pq_bytes *b)
{
    free(b->ptr);
    memset(b, 0, sizeof *b);
}

void mcdc_pq__statistics_dispose(mcdc_pq_statistics *s)
{
    if (!s)
        return;
    bytes_dispose(&s->max);
    bytes_dispose(&s->min);
    bytes_dispose(&s->max_value);
    bytes_dispose(&s->min_value);
    memset(s, 0, sizeof *s);
}

static void kv_dispose(mcdc_pq_key_value *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

void mcdc_pq__column_meta_dispose(mcdc_pq_column_meta *c)
{
    if (!c)
        return;
    free(c->encodings);
    for (size_t i = 0; i < c->n_path; i++)
        free(c->path[i]);
    free(c->path);
    kv_dispose(c->kv, c->n_kv);
    mcdc_pq__statistics_dispose(&c->statistics);
    free(c->encoding_stats);
    memset(c, 0, sizeof *c);
}

void mcdc_pq__file_metadata_dispose(mcdc_pq_file_metadata *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_schema; i++)
        free(m->schema[i].name);
    free(m->schema);
    for (size_t g = 0; g < m->n_row_groups; g++) {
        mcdc_pq_row_group *rg = &m->row_groups[g];
        for (size_t i = 0; i < rg->n_columns; i++) {
            free(rg->columns[i].file_path);
            mcdc_pq__column_meta_dispose(&rg->columns[i].meta_data);
        }
        free(rg->columns);
        free(rg->sorting_columns);
    }
    free(m->row_groups);
    kv_dispose(m->kv, m->n_kv);
    free(m->created_by);
    free(m->column_orders);
    memset(m, 0, sizeof *m);
}

void mcdc_pq__page_header_dispose(mcdc_pq_page_header *h)
{
    if (!h)
        return;
    mcdc_pq__statistics_dispose(&h->data_page_header.statistics);
    mcdc_pq__statistics_dispose(&h->data_page_header_v2.statistics);
    memset(h, 0, sizeof *h);
}

/* ================================================================ names */

const char *mcdc_pq__type_name(int type)
{
    static const char *const names[] = { "BOOLEAN", "INT32", "INT64", "INT96", "FLOAT",
                                         "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY" };
    return type >= 0 && type < 8 ? names[type] : "?";
}

const char *mcdc_pq__codec_name(int codec)
{
    static const char *const names[] = { "UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                         "BROTLI", "LZ4", "ZSTD", "LZ4_RAW" };
    return codec >= 0 && codec < 8 ? names[codec] : "?";
}

const char *mcdc_pq__encoding_name(int encoding)
{
    static const char *const names[] = { "PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE",
                                         "BIT_PACKED", "DELTA_BINARY_PACKED",
                                         "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                         "RLE_DICTIONARY", "BYTE_STREAM_SPLIT" };
    return encoding >= 0 && encoding < 10 ? names[encoding] : "?";
}

const char *mcdc_pq__page_type_name(int page_type)
{
    static const char *const names[] = { "DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE",
                                         "DATA_PAGE_V2" };
    return page_type >= 0 && page_type < 4 ? names[page_type] : "?";
}
