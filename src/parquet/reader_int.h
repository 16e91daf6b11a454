/*
 * parquet/reader_int.h: the reader's internal pieces shared by reader.c (files, footers,
 * row groups, the public API), column.c (pages of one column chunk into level/value
 * entries) and assemble.c (entries into rows: mcdc_value cells and jansson trees).
 *
 * Reader invariants:
 * (R1) Every byte range taken from the file (footer, column chunk, page) is checked to lie
 *      inside the file, or inside its parent range, before it is read.
 * (R2) Schema nesting is at most PQR_MAX_DEPTH deep, so levels fit in a uint8_t and the
 *      assembler's recursion is bounded.
 * (R3) An entry's value is present exactly when its definition level is the leaf's maximum.
 * (R4) Every error names the file; errors inside a column chunk also name the column and
 *      the byte offset of the page.
 */
#ifndef MCDC_PARQUET_READER_INT_H
#define MCDC_PARQUET_READER_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcdc/buf.h"
#include "mcdc/parquet.h"
#include "mcdc/storage.h"
#include "mcdc/value.h"
#include "parquet/codec.h"
#include "parquet/decode.h"
#include "parquet/format.h"

#define PQR_MAX_DEPTH 64

/* How a node's values become cells (leaves) or JSON (groups). */
typedef enum {
    PQR_GROUP = 0,  /* a plain struct */
    PQR_LIST,       /* LIST-annotated group */
    PQR_MAP,        /* MAP / MAP_KEY_VALUE-annotated group */
    PQR_LEAF        /* a primitive */
} pqr_kind;

/* How a leaf's physical values map to an mcdc_value. */
typedef enum {
    PQR_CONV_PLAIN = 0,   /* the physical value as the column type says */
    PQR_CONV_UINT32,      /* INT32 read unsigned */
    PQR_CONV_UINT64,      /* INT64 read unsigned into a DECIMAL(20,0) */
    PQR_CONV_DATE,        /* INT32 days */
    PQR_CONV_TS_MILLIS,   /* INT64 milliseconds -> microseconds */
    PQR_CONV_TS_MICROS,
    PQR_CONV_TS_NANOS,    /* INT64 nanoseconds -> STRING with 9 fraction digits */
    PQR_CONV_INT96,       /* Julian day + nanoseconds -> TIMESTAMP microseconds */
    PQR_CONV_TIME_MILLIS, /* INT32 -> STRING "HH:MM:SS.fff" */
    PQR_CONV_TIME_MICROS, /* INT64 -> STRING "HH:MM:SS.ffffff" */
    PQR_CONV_TIME_NANOS,  /* INT64 -> STRING "HH:MM:SS.fffffffff" */
    PQR_CONV_DEC_INT,     /* INT32/INT64 unscaled decimal */
    PQR_CONV_DEC_BYTES,   /* big-endian two's-complement bytes (BYTE_ARRAY or FLBA) */
    PQR_CONV_FLOAT16,     /* FLBA(2) half float -> FLOAT */
    PQR_CONV_UUID         /* FLBA(16) -> STRING 8-4-4-4-12 */
} pqr_conv;

typedef struct pqr_node {
    char            *name;        /* borrowed from the footer's schema element */
    int              repetition;  /* MCDC_PQ_REQUIRED / OPTIONAL / REPEATED */
    pqr_kind         kind;
    int              def_level;   /* definition level of a present value of this node */
    int              rep_level;   /* repetition level of this node */
    struct pqr_node *parent;      /* NULL for the root */
    struct pqr_node **children;   /* n_children, owned array (nodes owned by the tree) */
    size_t           n_children;
    /* leaves */
    int              leaf_index;  /* index among the file's leaves (column chunks) */
    int              ptype;       /* physical type, MCDC_PQ_* */
    int32_t          type_len;    /* FIXED_LEN_BYTE_ARRAY width */
    mcdc_column      col;         /* the value-model type of a leaf (name borrowed) */
    pqr_conv         conv;
    int              first_leaf;  /* leaf index of the first leaf at or under this node */
    int              n_leaves;    /* leaves at or under this node */
    bool             elem_is_repeated; /* LIST: the repeated child itself is the element */
    bool             ts_utc;      /* nanosecond timestamps: adjusted to UTC (prints a Z) */
    int64_t          field_id;    /* the schema element's field_id, or -1 when absent */
} pqr_node;

/* How the present values of a column's current page are held. */
typedef enum {
    PQR_VALUES_DECODED = 0, /* vals[0 .. n_vals) */
    PQR_VALUES_DICT,        /* dict[idx[i]] (indices checked against the dictionary) */
    PQR_VALUES_SPAN         /* PLAIN fixed-width little-endian bytes: value i at
                             * span + i * span_w (INT32, INT64, FLOAT, DOUBLE) */
} pqr_values;

/* Reading state of one leaf column in the current row group. */
typedef struct pqr_col {
    mcdc_parquet_reader *r;         /* borrowed */
    const pqr_node      *leaf;      /* borrowed */
    const mcdc_pq_column_meta *meta;/* borrowed from the footer */
    char                 path[256]; /* dotted path, for messages */
    const uint8_t       *chunk;     /* the chunk's bytes in a memory file, NULL for a file
                                     * descriptor (pages are then read one at a time) */
    size_t               chunk_len;
    uint64_t             chunk_off; /* file offset of chunk[0] */
    size_t               pos;       /* next page header, as an offset into chunk */
    int64_t              n_read;    /* entries decoded so far in this chunk */
    bool                 done;      /* no more pages */
    /* dictionary */
    uint8_t             *dict_buf;  /* owned dictionary page bytes (decompressed, or the
                                     * body read from a descriptor), or NULL */
    mcdc_pqdec_val      *dict;      /* owned; n_dict entries pointing into dict_buf/chunk */
    uint8_t             *hdr_buf;   /* owned page header bytes read from a descriptor */
    uint8_t             *body_buf;  /* owned current page body read from a descriptor */
    size_t               hdr_cap, body_cap, page_cap; /* bytes allocated in those buffers */
    size_t               rep_cap, def_cap, idx_cap, vals_cap, scratch_cap; /* likewise */
    size_t               n_dict;
    bool                 has_dict;
    /* current data page; the buffers are reused from page to page */
    uint8_t             *page_buf;  /* owned decompressed page, or NULL */
    uint8_t             *rep, *def; /* owned levels, n entries each */
    mcdc_pqdec_val      *vals;      /* owned; n_vals present values */
    size_t               n, i;      /* entries in the page, next entry */
    size_t               n_vals, vi;/* values in the page, next value */
    uint32_t            *idx;       /* owned scratch: levels and dictionary indices */
    pqr_values           held;      /* how the page's values are held */
    const uint8_t       *span;      /* PQR_VALUES_SPAN: borrowed from the page */
    size_t               span_w;    /* PQR_VALUES_SPAN: 4 or 8 */
    mcdc_pqdec_val       one;       /* PQR_VALUES_SPAN: the value pqr_col_peek handed out */
    int64_t             *scratch;   /* owned scratch for the delta decoders */
    mcdc_buf             arena;     /* built values (DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT) */
    uint64_t             page_off;  /* file offset of the current page header */
} pqr_col;

/* How a flat projected column's entries become cells in a batch (reader.c). */
typedef enum {
    PQR_FILL_ROW = 0, /* not in batches: nested, or formatted into per-row text */
    PQR_FILL_BOOL,    /* b */
    PQR_FILL_I32,     /* i from i32 */
    PQR_FILL_U32,     /* i from i32 read unsigned */
    PQR_FILL_I64,     /* i from i64 */
    PQR_FILL_DEC32,   /* dec from i32 (an INT32 decimal) */
    PQR_FILL_DEC64,   /* dec from i64 (an INT64 decimal) */
    PQR_FILL_FLOAT,   /* f */
    PQR_FILL_DOUBLE,  /* d */
    PQR_FILL_BYTES,   /* s borrowed from the page or dictionary */
    PQR_FILL_CALL     /* pqr_leaf_value (conversions that may fail, no text) */
} pqr_fill;

/* A predicate for row-group skipping. */
typedef struct pqr_pred {
    int        leaf;       /* leaf index of the (flat, top-level) column */
    int        op;         /* MCDC_PARQUET_EQ / GE / LE */
    mcdc_value v;          /* the value; string bytes point into owned */
    char      *owned;      /* copy of a string or binary value, or NULL */
} pqr_pred;

struct mcdc_parquet_reader {
    char                 *name;       /* file name for messages (owned) */
    mcdc_storage_file    *file;       /* the object read from; NULL for a memory buffer (owned) */
    const uint8_t        *mem;        /* the whole file when opened from memory (borrowed) */
    uint64_t              file_len;
    mcdc_parquet_read_options opt;
    mcdc_pq_file_metadata md;         /* the parsed footer (owned) */
    uint8_t              *footer;     /* footer bytes (owned; md's strings are copies) */
    pqr_node             *root;       /* schema tree (owned) */
    pqr_node            **leaves;     /* n_leaves leaf nodes in column order (owned array) */
    size_t                n_leaves;
    /* projection: top-level fields read, in output order */
    pqr_node            **sel;        /* owned array of borrowed nodes */
    size_t                n_sel;
    mcdc_schema          *schema;     /* projected top-level columns (owned) */
    bool                 *sel_nested; /* n_sel: column is a group or repeated (JSON text) */
    pqr_pred             *preds;      /* owned */
    size_t                n_preds;
    /* iteration */
    int64_t               rg;         /* current row group, -1 before the first */
    int64_t               rg_row;     /* rows returned from the current row group */
    int64_t               rg_rows;    /* rows in it */
    pqr_col              *cols;       /* n_leaves entries; only projected leaves are open */
    bool                 *leaf_used;  /* n_leaves: leaf is under a projected field */
    int64_t               rg_skipped; /* row groups skipped by predicates */
    mcdc_value           *row;        /* n_sel cells of the current flat row (owned) */
    char                (*tmp)[96];   /* n_sel scratch texts for formatted cells (owned) */
    mcdc_buf              rowtext;    /* JSON text of nested cells of the current row */
    uint8_t              *fill;       /* n_sel pqr_fill kinds (owned) */
    bool                  batchable;  /* every column has a fill kind and its own leaf */
    mcdc_value           *batch;      /* batch_cap rows of n_sel cells (owned) */
    size_t                batch_cap;
    int                   sticky;     /* first error; every later call returns it */
    mcdc_codec_dctx       dctx;       /* decoder state shared by the columns' pages (owned) */
    struct pqr_leafrow   *lrow;       /* leaves.c: per projected leaf, its entries of the
                                       * current row (owned; built on first use) */
    size_t                n_lrow;
    mcdc_parquet_leaf_run *lruns;     /* n_lrow runs handed out (owned) */
};

/* reader.c */
/* Record @p rc as the reader's sticky error and return it. */
int  pqr_fail(mcdc_parquet_reader *r, int rc);
/* 1 when a row is ready (every projected leaf at its first entry), 0 at the end, or an
 * error (the sticky one of an earlier failure, or this one's). */
int  pqr_row_ready(mcdc_parquet_reader *r);

/* leaves.c */
void pqr_leaves_free(mcdc_parquet_reader *r);

/* column.c */
int  pqr_col_open(pqr_col *c, mcdc_parquet_reader *r, size_t rg, const pqr_node *leaf);
void pqr_col_close(pqr_col *c);
/* Current entry: 1 with *rep, *def and *val (NULL unless def is the leaf's maximum), 0 at
 * the end of the chunk, <0 on error. The value stays valid until the next peek. */
/* Present value @p vi of the current page, held as c->held says; a span's value is
 * decoded into *tmp. */
static inline const mcdc_pqdec_val *pqr_col_value(const struct pqr_col *c, size_t vi,
                                                  mcdc_pqdec_val *tmp)
{
    switch (c->held) {
    case PQR_VALUES_DICT: return &c->dict[c->idx[vi]];
    case PQR_VALUES_SPAN:
        if (c->span_w == 8)
            memcpy(tmp, c->span + vi * 8, 8);
        else
            memcpy(tmp, c->span + vi * 4, 4);
        return tmp;
    default: return &c->vals[vi];
    }
}
int  pqr_col_peek(pqr_col *c, int *rep, int *def, const mcdc_pqdec_val **val);
static inline void pqr_col_next(pqr_col *c)
{
    if (c->i < c->n) {
        if (c->def[c->i] == c->leaf->def_level)
            c->vi++;
        c->i++;
    }
}
/* Prefix the current error with the file, column and page offset. */
int  pqr_col_fail(pqr_col *c, int rc);

/* assemble.c */
/* The cell of a leaf from a physical value (strings borrowed or formatted into @p tmp). */
int  pqr_leaf_value(const pqr_node *leaf, const mcdc_pqdec_val *pv, mcdc_value *out,
                    char *tmp, size_t tmp_cap);
/* One instance of top-level field @p node for the current row, as JSON (new reference). */
int  pqr_assemble_field(mcdc_parquet_reader *r, const pqr_node *node, json_t **out);
/* The JSON of a cell of @p col (new reference). */
json_t *pqr_value_json(const mcdc_column *col, const mcdc_value *v);
/* JSON text with shortest round-trip numbers, keys in insertion order. */
int  pqr_json_dump(mcdc_buf *out, const json_t *j);

#endif
