/*
 * parquet/colwrite.h: the writer of one leaf column: levels, values, dictionary, data pages
 * and the column chunk of the current row group, with its statistics.
 *
 * Entries arrive one at a time as (repetition level, definition level, value); a value
 * is present when the definition level equals the column's maximum. Pages are cut by the
 * writer between rows (mcdc_pq__column_page_full) so that rows never span pages.
 * Dictionary encoding is tried first; when the dictionary would pass its byte limit the
 * open page and all later pages of the chunk are PLAIN (earlier pages keep the
 * dictionary, which is written in front of the chunk). The chunk's first page decides
 * whether it pays (its indices and the dictionary against its PLAIN size); a first page
 * whose first 2048 values are all distinct gives it up at once.
 */
#ifndef MCDC_PARQUET_COLWRITE_H
#define MCDC_PARQUET_COLWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/value.h"
#include "parquet/dict.h"
#include "parquet/format.h"

/** Bytes kept free in front of a page's PLAIN values for its levels (colwrite.c W5). */
#define MCDC_PQ_VALUES_GAP 64

/** Settings shared by the columns of one writer. */
typedef struct mcdc_pq_write_config {
    int    codec;                 /* MCDC_PQ_CODEC_* */
    int    codec_level;           /* 0 = default */
    size_t page_bytes;            /* cut a page at about this many encoded bytes */
    size_t page_max_values;       /* or at this many level entries */
    bool   dictionary;            /* try dictionary encoding */
    size_t dictionary_max_bytes;  /* dictionary page body limit */
    bool   page_crc;              /* CRC-32 in page headers */
    void  *zstd_cctx;             /* ZSTD_CCtx every page of the writer reuses (ZSTD only;
                                     NULL: a fresh context per page); owned by the writer */
} mcdc_pq_write_config;

/** Running statistics of a column (one chunk, or the whole file). */
typedef struct mcdc_pq_stats {
    int64_t     null_count;
    bool        has;              /* min/max hold a value */
    int64_t     imin, imax;       /* BOOLEAN (0/1) and integers */
    double      dmin, dmax;       /* FLOAT and DOUBLE, NaN never enters */
    mcdc_int128 decmin, decmax;   /* DECIMAL */
    mcdc_buf    bmin, bmax;       /* STRING and BINARY bytes */
} mcdc_pq_stats;

typedef struct mcdc_pq_column {
    /* what the column is; set by init */
    mcdc_column  type;            /* mcdc type; name NULL */
    char       **path;            /* n_path names from the root (root excluded); owned */
    size_t       n_path;
    int          max_def, max_rep;
    int          physical;        /* MCDC_PQ_BOOLEAN .. FIXED_LEN_BYTE_ARRAY */
    int          type_length;     /* FIXED_LEN_BYTE_ARRAY bytes, else 0 */
    int          value_width;     /* PLAIN bytes per value for fixed widths, 0 for byte arrays */
    const mcdc_pq_write_config *cfg; /* borrowed from the writer */
    int          level_bits;      /* bits of one rep + def level entry, for size estimates */
    int          kind;            /* how a value becomes PLAIN bytes (colwrite.c MCDC_PQ_K_*) */
    int          check;           /* what mcdc_pq__column_check tests (MCDC_PQ_CHECK_*) */
    int64_t      check_lo, check_hi; /* MCDC_PQ_CHECK_RANGE: the type's integer range */
    mcdc_int128  check_dec;       /* MCDC_PQ_CHECK_DECIMAL: 10^precision */
    size_t       page_sure_below; /* fewer level entries than this: the page is not full */

    /* the open page */
    uint16_t    *def, *rep;       /* level entries (allocated only when max > 0) */
    size_t       n_levels, levels_cap;
    size_t       def_known;       /* entries whose def is in def[]; the rest are present */
    uint32_t    *idx;             /* dictionary indices of the present values */
    size_t       n_idx, idx_cap;
    mcdc_buf     values;          /* a gap for the levels, then the PLAIN values (BOOLEAN: one
                                     byte each, packed at flush); colwrite.c W5 */
    size_t       n_values;        /* present values in the page */
    size_t       page_raw_bytes;  /* PLAIN size of the page's dictionary-encoded values */

    /* dictionary of the chunk */
    bool         dict_on;         /* values still go to the dictionary */
    mcdc_pq_dict dict;

    /* the chunk of the current row group */
    mcdc_buf     pages;           /* data pages, headers included, compressed */
    int64_t      chunk_levels;    /* level entries in the chunk */
    int64_t      chunk_uncompressed; /* data page bytes before compression, headers included */
    int32_t      n_dict_pages, n_plain_pages; /* data pages by encoding */
    mcdc_pq_stats chunk_stats;
    mcdc_pq_stats file_stats;     /* merged from every chunk written */

    mcdc_buf     body, comp;      /* scratch for page bodies */
} mcdc_pq_column;

/** What a value of a column must be checked for (mcdc_pq__column_check). */
enum { MCDC_PQ_CHECK_NONE, MCDC_PQ_CHECK_RANGE, MCDC_PQ_CHECK_DECIMAL, MCDC_PQ_CHECK_BYTES };

/** Set up a column of mcdc type @p type at @p path (copied) with the given maximum levels.
 *  @return 0; MCDC_EINVAL for a bad type; MCDC_ENOMEM. */
int mcdc_pq__column_init(mcdc_pq_column *c, const mcdc_column *type, const char *const *path,
                         size_t n_path, int max_def, int max_rep, const mcdc_pq_write_config *cfg);
/** Free everything; accepts NULL. */
void mcdc_pq__column_dispose(mcdc_pq_column *c);

/** Fill @p e with the SchemaElement of the leaf (name borrowed from path). */
void mcdc_pq__column_schema_element(const mcdc_pq_column *c, const char *name, bool nullable,
                                    mcdc_pq_schema_element *e);
/** Check that @p v can be stored in a column of type @p type (range, precision, size).
 *  @return 0; MCDC_EINVAL naming @p what. */
int mcdc_pq__value_check(const mcdc_column *type, const mcdc_value *v, const char *what);

/** mcdc_pq__value_check for a present value of column @p c, with the limits the column
 *  computed once (the same verdicts and messages). */
static inline int mcdc_pq__column_check(const mcdc_pq_column *c, const mcdc_value *v,
                                        const char *what)
{
    switch (c->check) {
    case MCDC_PQ_CHECK_RANGE:
        if (v->v.i >= c->check_lo && v->v.i <= c->check_hi)
            return 0;
        break;
    case MCDC_PQ_CHECK_DECIMAL:
        if (v->v.dec < c->check_dec && v->v.dec > -c->check_dec)
            return 0;
        break;
    case MCDC_PQ_CHECK_BYTES:
        if (v->v.s.len <= (size_t)INT32_MAX - 1024)
            return 0;
        break;
    default:
        return 0;
    }
    return mcdc_pq__value_check(&c->type, v, what);
}

/** Append one entry. @p v is read only when @p def == max_def (it must have passed
 *  mcdc_pq__value_check). @return 0; MCDC_ENOMEM. */
int mcdc_pq__column_add(mcdc_pq_column *c, int rep, int def, const mcdc_value *v);

/** Append @p n entries of a column without repetition, the values at @p v, @p v + @p stride,
 *  ... (each a null, definition level 0, or a value checked as for mcdc_pq__column_add,
 *  level max_def). A page full after an entry is flushed before the next one, where the
 *  writer would cut it between two rows; @p full is set when the page is full after the
 *  last. @return 0; MCDC_ENOMEM; codec errors. */
int mcdc_pq__column_add_flat(mcdc_pq_column *c, const mcdc_value *v, size_t stride, size_t n,
                             bool *full);

/** Bytes of the open page as encoded so far (an estimate: levels and indices at their bit
 *  widths, PLAIN values as they are). */
static inline size_t mcdc_pq__column_page_estimate(const mcdc_pq_column *c)
{
    size_t levels = c->n_levels * (size_t)c->level_bits / 8;
    if (c->dict_on && c->n_idx) {
        uint32_t top = c->dict.n - 1;
        int width = top ? 32 - __builtin_clz(top) : 1;
        return levels + c->n_idx * (size_t)width / 8 + 1;
    }
    size_t plain = c->values.len - MCDC_PQ_VALUES_GAP;
    return levels + (c->physical == MCDC_PQ_BOOLEAN ? plain / 8 : plain);
}

/** Whether the open page has reached its size or entry limit. */
static inline bool mcdc_pq__column_page_full(const mcdc_pq_column *c)
{
    if (c->n_levels < c->page_sure_below)
        return false;
    return c->n_levels >= c->cfg->page_max_values ||
           mcdc_pq__column_page_estimate(c) >= c->cfg->page_bytes;
}

/** Encoded bytes of the chunk so far, the open page estimated. */
static inline size_t mcdc_pq__column_chunk_bytes(const mcdc_pq_column *c)
{
    return (size_t)c->chunk_uncompressed + mcdc_pq__column_page_estimate(c) +
           (c->dict_on || c->n_dict_pages ? c->dict.plain.len : 0);
}
/** Encode, compress and keep the open page. @return 0; MCDC_ENOMEM; codec errors. */
int mcdc_pq__column_flush_page(mcdc_pq_column *c);

/** Where a finished chunk goes: the writer's file. */
typedef int (*mcdc_pq_sink_fn)(void *payload, const void *p, size_t n);

/** Flush the open page, write the chunk (dictionary page, then data pages) through
 *  @p sink starting at file offset @p offset, fill @p out (ColumnChunk with meta data,
 *  statistics and owned arrays), merge the chunk statistics into the file's and reset
 *  the chunk. @return 0; the sink's error; MCDC_ENOMEM. */
int mcdc_pq__column_write_chunk(mcdc_pq_column *c, uint64_t offset, mcdc_pq_sink_fn sink,
                                void *payload, mcdc_pq_column_chunk *out, uint64_t *written);

/** Copy the file statistics out as mcdc values (strings copied with malloc).
 *  @return 0; MCDC_ENOMEM. */
int mcdc_pq__column_file_stats(const mcdc_pq_column *c, int64_t *null_count, bool *has,
                               mcdc_value *min, mcdc_value *max);

#endif
