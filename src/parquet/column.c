/*
 * parquet/column.c: one column chunk, page by page, as a stream of (repetition level,
 * definition level, value) entries.
 *
 * The chunk's range is checked against the file (R1); then each page header is parsed,
 * its body checked to lie inside the chunk, its CRC verified when
 * the header has one, decompressed into a buffer of exactly the size the header promises,
 * and decoded: levels first (v1: RLE with a length prefix or legacy BIT_PACKED; v2: RLE
 * stored uncompressed before the values), then the present values in the page's
 * encoding: every value is checked here, but dictionary-encoded values are kept as their
 * (checked) indices and PLAIN fixed-width numbers as the page's bytes, read in place
 * when the entry is (pqr_col_value). Dictionary pages fill the chunk's dictionary. From a
 * file descriptor, pages
 * are read one at a time: a column holds its dictionary and one page (compressed and
 * decoded), never the whole chunk. Every failure names the file, the column and the
 * page's offset (R4).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <zlib.h>

#include "mcdc/error.h"
#include "parquet/codec.h"
#include "parquet/reader_int.h"

int pqr_col_fail(pqr_col *c, int rc)
{
    if (c->page_off)
        mcdc_error_prefix("%s: column %s, page at byte %" PRIu64, c->r->name, c->path, c->page_off);
    else
        mcdc_error_prefix("%s: column %s", c->r->name, c->path);
    return rc;
}

#define FAIL(...) pqr_col_fail(c, mcdc_error_set(MCDC_ECORRUPT, __VA_ARGS__))

/* Forget the current page; its buffers are kept for the next one. */
static void page_reset(pqr_col *c)
{
    c->n = c->i = c->n_vals = c->vi = 0;
    c->held = PQR_VALUES_DECODED;
    mcdc_buf_clear(&c->arena);
}

/* Make *p hold at least @p need bytes (its contents are not kept). */
static int reserve(pqr_col *c, void *pp, size_t *cap, size_t need)
{
    void **p = (void **)pp;
    if (*p && need <= *cap)
        return 0;
    size_t ncap = need < 4096 ? 4096 : need;
    free(*p);
    *p = malloc(ncap);
    *cap = *p ? ncap : 0;
    if (!*p)
        return pqr_col_fail(c, mcdc_error_set(MCDC_ENOMEM, "out of memory for %zu bytes", need));
    return 0;
}

void pqr_col_close(pqr_col *c)
{
    if (!c->r)
        return;
    page_reset(c);
    mcdc_buf_dispose(&c->arena);
    free(c->body_buf);
    free(c->page_buf);
    free(c->rep);
    free(c->def);
    free(c->vals);
    free(c->idx);
    free(c->scratch);
    free(c->hdr_buf);
    free(c->dict_buf);
    free(c->dict);
    memset(c, 0, sizeof *c);
}

/* Bytes [off, off+len) of the chunk: borrowed from a memory file, else read into *buf
 * (grown as needed; *cap its size). *p is NULL when it fails. */
static int fetch(pqr_col *c, size_t off, size_t len, uint8_t **buf, size_t *cap,
                 const uint8_t **p)
{
    mcdc_parquet_reader *r = c->r;
    *p = NULL;
    if (c->chunk) {
        *p = c->chunk + off;
        return 0;
    }
    int rc = reserve(c, buf, cap, len);
    if (rc < 0)
        return rc;
    uint8_t *b = *buf;
    uint64_t at = c->chunk_off + off;
    if ((rc = mcdc_storage_file_read(r->file, b, len, at)) < 0)
        return pqr_col_fail(c, rc);
    *p = b;
    return 0;
}

int pqr_col_open(pqr_col *c, mcdc_parquet_reader *r, size_t rg, const pqr_node *leaf)
{
    memset(c, 0, sizeof *c);
    c->r = r;
    c->leaf = leaf;
    c->arena = (mcdc_buf)MCDC_BUF_INIT(0);
    const mcdc_pq_row_group *g = &r->md.row_groups[rg];
    /* dotted path for messages */
    size_t pl = 0;
    const pqr_node *chain[PQR_MAX_DEPTH + 1];
    int depth = 0;
    for (const pqr_node *n = leaf; n && n->parent && depth <= PQR_MAX_DEPTH; n = n->parent)
        chain[depth++] = n;
    for (int i = depth - 1; i >= 0 && pl + 2 < sizeof c->path; i--) {
        int w = snprintf(c->path + pl, sizeof c->path - pl, "%s%s", pl ? "." : "", chain[i]->name);
        if (w < 0)
            break;
        pl += (size_t)w;
        if (pl >= sizeof c->path)
            pl = sizeof c->path - 1;
    }
    if ((size_t)leaf->leaf_index >= g->n_columns)
        return FAIL("row group %zu has %zu column chunks, the schema %zu leaves", rg,
                    g->n_columns, r->n_leaves);
    const mcdc_pq_column_chunk *cc = &g->columns[leaf->leaf_index];
    if (cc->is_encrypted)
        return pqr_col_fail(c, mcdc_error_set(MCDC_EUNSUPPORTED, "column chunk is encrypted"));
    if (cc->file_path)
        return pqr_col_fail(c, mcdc_error_set(MCDC_EUNSUPPORTED,
                                              "column chunk lives in another file (%s)",
                                              cc->file_path));
    if (!cc->has_meta_data)
        return FAIL("column chunk of row group %zu has no metadata", rg);
    c->meta = &cc->meta_data;
    if (c->meta->type != leaf->ptype)
        return FAIL("chunk says physical type %s, the schema %s", mcdc_pq__type_name(c->meta->type),
                    mcdc_pq__type_name(leaf->ptype));
    int64_t start = c->meta->data_page_offset;
    if (c->meta->has_dictionary_page_offset && c->meta->dictionary_page_offset >= 4 &&
        c->meta->dictionary_page_offset < start)
        start = c->meta->dictionary_page_offset;
    int64_t len = c->meta->total_compressed_size;
    uint64_t data_end = r->file_len - 8; /* footer length and magic follow the data */
    if (start < 4 || len < 0 || (uint64_t)start > data_end || (uint64_t)len > data_end - (uint64_t)start)
        return FAIL("chunk of %" PRId64 " bytes at byte %" PRId64 " lies outside the file of %" PRIu64
                    " bytes",
                    len, start, r->file_len);
    c->chunk_off = (uint64_t)start;
    c->chunk_len = (size_t)len;
    c->chunk = r->mem ? r->mem + c->chunk_off : NULL;
    /* values built by DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT: as much as a page may hold */
    c->arena.max = r->opt.max_page_bytes;
    return 0;
}

/* Decode levels of one kind for @p n entries into @p out; *n_full (when not NULL) gets
 * how many equal @p max_level. */
static int levels(pqr_col *c, mcdc_pqdec_cursor *cur, int encoding, int max_level, uint8_t *out,
                  size_t n, bool v2, size_t *n_full)
{
    if (max_level == 0) {
        memset(out, 0, n);
        if (n_full)
            *n_full = n;
        return 0;
    }
    int width = 0;
    while ((1 << width) <= max_level)
        width++;
    int rc;
    /* levels are at most PQR_MAX_DEPTH (R2): width 7, so they decode into bytes as they are */
    if (v2)
        rc = mcdc_pqdec_rle_u8(cur, width, out, n);
    else if (encoding == MCDC_PQ_ENC_RLE)
        rc = mcdc_pqdec_rle_u8_prefixed(cur, width, out, n);
    else if (encoding == MCDC_PQ_ENC_BIT_PACKED) {
        rc = mcdc_pqdec_bitpacked_legacy(cur, width, c->idx, n);
        for (size_t i = 0; rc == 0 && i < n; i++)
            out[i] = (uint8_t)c->idx[i]; /* width <= 7: no bits lost */
    } else
        return FAIL("levels in encoding %s", mcdc_pq__encoding_name(encoding));
    if (rc < 0)
        return pqr_col_fail(c, rc);
    size_t full = 0;
    uint8_t top = 0;
    for (size_t i = 0; i < n; i++) {
        top = out[i] > top ? out[i] : top;
        full += out[i] == (uint8_t)max_level;
    }
    if (top > (uint8_t)max_level)
        for (size_t i = 0; i < n; i++)
            if (out[i] > (uint8_t)max_level)
                return FAIL("level %" PRIu32 " above the maximum %d", (uint32_t)out[i],
                            max_level);
    if (n_full)
        *n_full = full;
    return 0;
}

/* Decode @p n present values of the page in @p encoding from @p cur. */
static int values(pqr_col *c, mcdc_pqdec_cursor *cur, int encoding, size_t n)
{
    int pt = c->leaf->ptype;
    int32_t tl = c->leaf->type_len;
    int rc = 0;
    if (n == 0)
        return 0;
    switch (encoding) {
    case MCDC_PQ_ENC_PLAIN:
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (pt == MCDC_PQ_INT32 || pt == MCDC_PQ_INT64 || pt == MCDC_PQ_FLOAT ||
            pt == MCDC_PQ_DOUBLE) {
            /* read in place: the page's bytes are the values */
            rc = mcdc_pqdec_plain_span(cur, pt, tl, n, &c->span, &c->span_w);
            if (rc == 0)
                c->held = PQR_VALUES_SPAN;
            break;
        }
#endif
        rc = mcdc_pqdec_plain(cur, pt, tl, c->vals, n);
        break;
    case MCDC_PQ_ENC_PLAIN_DICTIONARY:
    case MCDC_PQ_ENC_RLE_DICTIONARY: {
        if (!c->has_dict)
            return FAIL("dictionary-encoded page without a dictionary page");
        if (mcdc_pqdec_left(cur) < 1)
            return FAIL("dictionary indices: bit width missing");
        int width = *cur->pos++;
        if (width > 32)
            return FAIL("dictionary indices: bit width %d above 32", width);
        rc = mcdc_pqdec_rle(cur, width, c->idx, n);
        if (rc < 0)
            break;
        for (size_t i = 0; i < n; i++)
            if (c->idx[i] >= c->n_dict)
                return FAIL("dictionary index %" PRIu32 " out of range (the dictionary has %zu "
                            "values)",
                            c->idx[i], c->n_dict);
        c->held = PQR_VALUES_DICT; /* values looked up as they are read */
        break;
    }
    case MCDC_PQ_ENC_RLE:
        if (pt != MCDC_PQ_BOOLEAN)
            return FAIL("RLE values for physical type %s", mcdc_pq__type_name(pt));
        rc = mcdc_pqdec_rle_prefixed(cur, 1, c->idx, n);
        for (size_t i = 0; rc == 0 && i < n; i++)
            c->vals[i].b = c->idx[i] != 0;
        break;
    case MCDC_PQ_ENC_DELTA_BINARY_PACKED:
        rc = mcdc_pqdec_delta_binary_vals(cur, pt, c->vals, n);
        break;
    case MCDC_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        if (pt != MCDC_PQ_BYTE_ARRAY)
            return FAIL("DELTA_LENGTH_BYTE_ARRAY for physical type %s", mcdc_pq__type_name(pt));
        rc = mcdc_pqdec_delta_length(cur, c->vals, n, c->scratch);
        break;
    case MCDC_PQ_ENC_DELTA_BYTE_ARRAY:
        if (pt != MCDC_PQ_BYTE_ARRAY && pt != MCDC_PQ_FIXED_LEN_BYTE_ARRAY)
            return FAIL("DELTA_BYTE_ARRAY for physical type %s", mcdc_pq__type_name(pt));
        rc = mcdc_pqdec_delta_byte_array(cur, c->vals, n, c->scratch,
                                         pt == MCDC_PQ_FIXED_LEN_BYTE_ARRAY ? tl : 0, &c->arena);
        break;
    case MCDC_PQ_ENC_BYTE_STREAM_SPLIT:
        rc = mcdc_pqdec_byte_stream_split(cur, pt, tl, c->vals, n, &c->arena);
        break;
    default:
        return pqr_col_fail(c, mcdc_error_set(MCDC_EUNSUPPORTED, "values in encoding %s (%d)",
                                              mcdc_pq__encoding_name(encoding), encoding));
    }
    return rc < 0 ? pqr_col_fail(c, rc) : 0;
}

/* Levels and index scratch for @p n entries. */
static int alloc_page(pqr_col *c, size_t n)
{
    size_t cnt = n ? n : 1;
    int rc = reserve(c, &c->rep, &c->rep_cap, cnt);
    if (rc == 0)
        rc = reserve(c, &c->def, &c->def_cap, cnt);
    if (rc == 0)
        rc = reserve(c, &c->idx, &c->idx_cap, cnt * sizeof *c->idx);
    return rc;
}

/* Slots for @p present values, and delta scratch when the encoding needs it. */
static int alloc_values(pqr_col *c, size_t present, int encoding)
{
    size_t cnt = present ? present : 1;
    int rc = reserve(c, &c->vals, &c->vals_cap, cnt * sizeof *c->vals);
    if (rc == 0 &&
        (encoding == MCDC_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY || encoding == MCDC_PQ_ENC_DELTA_BYTE_ARRAY))
        rc = reserve(c, &c->scratch, &c->scratch_cap, cnt * 2 * sizeof *c->scratch);
    return rc;
}

/* A cursor over the values of a data page: the @p len bytes at @p src as they are, or
 * decompressed into the page buffer (to @p out_len bytes) when @p compressed. */
static int page_cursor(pqr_col *c, const uint8_t *src, size_t len, size_t out_len, bool compressed,
                       mcdc_pqdec_cursor *cur)
{
    if (compressed) {
        int rc = mcdc_codec__decompress_ctx(&c->r->dctx, &c->page_buf, &c->page_cap, out_len,
                                            c->meta->codec, src, len);
        if (rc < 0)
            return pqr_col_fail(c, rc);
        src = c->page_buf;
        len = out_len;
    }
    *cur = mcdc_pqdec_cursor_make(src, len);
    return 0;
}

/* Decompress @p len bytes at @p src into *out (grown with the output to @p out_len bytes;
 * *cap its size). */
static int inflate_to(pqr_col *c, const uint8_t *src, size_t len, size_t out_len, uint8_t **out,
                      size_t *cap)
{
    int rc = mcdc_codec__decompress_ctx(&c->r->dctx, out, cap, out_len, c->meta->codec, src, len);
    return rc < 0 ? pqr_col_fail(c, rc) : 0;
}

static int dictionary_page(pqr_col *c, const mcdc_pq_page_header *h, const uint8_t *body)
{
    const mcdc_pq_dictionary_page_header *d = &h->dictionary_page_header;
    if (c->has_dict)
        return FAIL("a second dictionary page");
    if (d->encoding != MCDC_PQ_ENC_PLAIN && d->encoding != MCDC_PQ_ENC_PLAIN_DICTIONARY)
        return FAIL("dictionary page in encoding %s", mcdc_pq__encoding_name(d->encoding));
    if (d->num_values < 0 || (size_t)d->num_values > c->r->opt.max_page_values)
        return FAIL("dictionary of %" PRId32 " values", d->num_values);
    const uint8_t *p = body;
    if (c->meta->codec != MCDC_PQ_CODEC_UNCOMPRESSED) {
        size_t dict_cap = 0;
        int rc = inflate_to(c, body, (size_t)h->compressed_page_size,
                            (size_t)h->uncompressed_page_size, &c->dict_buf, &dict_cap);
        if (rc < 0)
            return rc;
        p = c->dict_buf;
    } else if (c->body_buf) { /* the values point into the body: keep it with the chunk */
        c->dict_buf = c->body_buf;
        c->body_buf = NULL;
        c->body_cap = 0;
    }
    size_t plen = c->meta->codec != MCDC_PQ_CODEC_UNCOMPRESSED ? (size_t)h->uncompressed_page_size
                                                                : (size_t)h->compressed_page_size;
    size_t n = (size_t)d->num_values;
    c->dict = malloc((n ? n : 1) * sizeof *c->dict);
    if (!c->dict)
        return pqr_col_fail(c, mcdc_error_set(MCDC_ENOMEM, "out of memory for a dictionary"));
    mcdc_pqdec_cursor cur = mcdc_pqdec_cursor_make(p, plen);
    int rc = mcdc_pqdec_plain(&cur, c->leaf->ptype, c->leaf->type_len, c->dict, n);
    if (rc < 0)
        return pqr_col_fail(c, rc);
    c->n_dict = n;
    c->has_dict = true;
    return 0;
}

static int data_page(pqr_col *c, const mcdc_pq_page_header *h, const uint8_t *body)
{
    bool v2 = h->type == MCDC_PQ_PAGE_DATA_V2;
    int32_t nv = v2 ? h->data_page_header_v2.num_values : h->data_page_header.num_values;
    int encoding = v2 ? h->data_page_header_v2.encoding : h->data_page_header.encoding;
    if (nv < 0 || (size_t)nv > c->r->opt.max_page_values)
        return FAIL("page of %" PRId32 " values (at most %zu)", nv, c->r->opt.max_page_values);
    size_t n = (size_t)nv;
    int rc = alloc_page(c, n);
    if (rc < 0)
        return rc;
    size_t clen = (size_t)h->compressed_page_size, ulen = (size_t)h->uncompressed_page_size;
    size_t present = 0; /* entries whose definition level is the leaf's maximum (R3) */
    mcdc_pqdec_cursor cur;
    if (!v2) {
        rc = page_cursor(c, body, clen, ulen, c->meta->codec != MCDC_PQ_CODEC_UNCOMPRESSED, &cur);
        if (rc == 0)
            rc = levels(c, &cur, h->data_page_header.repetition_level_encoding,
                        c->leaf->rep_level, c->rep, n, false, NULL);
        if (rc == 0)
            rc = levels(c, &cur, h->data_page_header.definition_level_encoding,
                        c->leaf->def_level, c->def, n, false, &present);
        if (rc < 0)
            return rc;
    } else {
        const mcdc_pq_data_page_header_v2 *d = &h->data_page_header_v2;
        if (d->repetition_levels_byte_length < 0 || d->definition_levels_byte_length < 0 ||
            (uint64_t)d->repetition_levels_byte_length + (uint64_t)d->definition_levels_byte_length >
                clen ||
            (uint64_t)d->repetition_levels_byte_length + (uint64_t)d->definition_levels_byte_length >
                ulen)
            return FAIL("level lengths %" PRId32 " + %" PRId32 " exceed the page of %zu bytes",
                        d->repetition_levels_byte_length, d->definition_levels_byte_length, clen);
        size_t rl = (size_t)d->repetition_levels_byte_length,
               dl = (size_t)d->definition_levels_byte_length;
        mcdc_pqdec_cursor lc = mcdc_pqdec_cursor_make(body, rl);
        rc = levels(c, &lc, MCDC_PQ_ENC_RLE, c->leaf->rep_level, c->rep, n, true, NULL);
        if (rc < 0)
            return rc;
        lc = mcdc_pqdec_cursor_make(body + rl, dl);
        rc = levels(c, &lc, MCDC_PQ_ENC_RLE, c->leaf->def_level, c->def, n, true, &present);
        if (rc < 0)
            return rc;
        size_t vulen = ulen - rl - dl;
        rc = page_cursor(c, body + rl + dl, clen - rl - dl, vulen,
                         d->is_compressed && c->meta->codec != MCDC_PQ_CODEC_UNCOMPRESSED && vulen > 0,
                         &cur);
        if (rc < 0)
            return rc;
    }
    if (c->leaf->rep_level > 0 && n > 0 && c->n_read == 0 && c->rep[0] != 0)
        return FAIL("first entry of the chunk continues a row (repetition level %d)", c->rep[0]);
    rc = alloc_values(c, present, encoding);
    if (rc == 0)
        rc = values(c, &cur, encoding, present);
    if (rc < 0)
        return rc;
    c->n = n;
    c->n_vals = present;
    c->i = c->vi = 0;
    return 0;
}

/* Read pages until one holds entries or the chunk ends. */
static int next_page(pqr_col *c)
{
    for (;;) {
        page_reset(c);
        if (c->done || c->pos >= c->chunk_len ||
            (c->meta->num_values >= 0 && c->n_read >= c->meta->num_values)) {
            c->done = true;
            return 0;
        }
        c->page_off = c->chunk_off + c->pos;
        mcdc_pq_page_header h;
        size_t hlen, chunk_left = c->chunk_len - c->pos;
        const uint8_t *hp;
        int rc;
        /* a descriptor's page header is read through a window that grows until it holds
         * the whole header (statistics may make one large) */
        for (size_t win = chunk_left < 4096 ? chunk_left : 4096;;) {
            rc = fetch(c, c->pos, win, &c->hdr_buf, &c->hdr_cap, &hp);
            if (rc < 0)
                return rc;
            rc = mcdc_pq__parse_page_header(&h, &hlen, hp, win, c->page_off);
            if (rc == 0 || win == chunk_left || win >= ((size_t)64 << 20) || rc != MCDC_ECORRUPT)
                break;
            win = chunk_left / 8 < win ? chunk_left : win * 8;
        }
        if (rc < 0)
            return pqr_col_fail(c, rc);
        size_t left = chunk_left - hlen;
        if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0 ||
            (size_t)h.compressed_page_size > left) {
            rc = FAIL("page of %" PRId32 " bytes overruns the column chunk (%zu bytes left)",
                      h.compressed_page_size, left);
            mcdc_pq__page_header_dispose(&h);
            return rc;
        }
        if ((size_t)h.uncompressed_page_size > c->r->opt.max_page_bytes) {
            rc = FAIL("page of %" PRId32 " bytes uncompressed (at most %zu)",
                      h.uncompressed_page_size, c->r->opt.max_page_bytes);
            mcdc_pq__page_header_dispose(&h);
            return rc;
        }
        const uint8_t *body;
        rc = fetch(c, c->pos + hlen, (size_t)h.compressed_page_size, &c->body_buf, &c->body_cap, &body);
        if (rc < 0) {
            mcdc_pq__page_header_dispose(&h);
            return rc;
        }
        if (h.has_crc) {
            uint32_t want = (uint32_t)h.crc;
            uint32_t got = (uint32_t)crc32(0L, body, (uInt)h.compressed_page_size);
            if (want != got) {
                rc = FAIL("page CRC mismatch: the header says %08" PRIx32 ", the data has %08" PRIx32,
                          want, got);
                mcdc_pq__page_header_dispose(&h);
                return rc;
            }
        }
        c->pos += hlen + (size_t)h.compressed_page_size;
        if (h.type == MCDC_PQ_PAGE_DICTIONARY) {
            if (!h.has_dictionary_page_header)
                rc = FAIL("DICTIONARY_PAGE without its header");
            else
                rc = dictionary_page(c, &h, body);
        } else if (h.type == MCDC_PQ_PAGE_DATA || h.type == MCDC_PQ_PAGE_DATA_V2) {
            if ((h.type == MCDC_PQ_PAGE_DATA && !h.has_data_page_header) ||
                (h.type == MCDC_PQ_PAGE_DATA_V2 && !h.has_data_page_header_v2))
                rc = FAIL("%s without its header", mcdc_pq__page_type_name(h.type));
            else
                rc = data_page(c, &h, body);
        } else if (h.type == MCDC_PQ_PAGE_INDEX) {
            rc = 0; /* nothing to read */
        } else {
            rc = FAIL("page of unknown type %" PRId32, h.type);
        }
        mcdc_pq__page_header_dispose(&h);
        if (rc < 0)
            return rc;
        if (c->n > 0) {
            c->n_read += (int64_t)c->n;
            return 1;
        }
    }
}

int pqr_col_peek(pqr_col *c, int *rep, int *def, const mcdc_pqdec_val **val)
{
    if (c->i >= c->n) {
        int rc = next_page(c);
        if (rc <= 0)
            return rc;
    }
    *rep = c->rep[c->i];
    *def = c->def[c->i];
    *val = *def == c->leaf->def_level ? pqr_col_value(c, c->vi, &c->one) : NULL;
    return 1;
}
