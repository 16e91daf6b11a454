/*
 * parquet/writer.h: the writer object shared by writer.c (files, flat rows, row groups,
 * footer) and nested.c (schema trees and JSON rows). Public API: mcdc/parquet.h.
 */
#ifndef MCDC_PARQUET_WRITER_H
#define MCDC_PARQUET_WRITER_H

#include "mcdc/parquet.h"
#include "mcdc/storage.h"
#include "parquet/colwrite.h"
#include "parquet/format.h"

enum { MCDC_PQ_NODE_LEAF = 1, MCDC_PQ_NODE_STRUCT, MCDC_PQ_NODE_LIST, MCDC_PQ_NODE_MAP };

struct mcdc_parquet_node {
    char   *name;                  /* owned */
    int     kind;                  /* MCDC_PQ_NODE_* */
    bool    nullable;
    mcdc_column type;              /* leaves: the value type (name NULL) */
    struct mcdc_parquet_node **kids; /* struct fields; list: [element]; map: [key, value] */
    size_t  n_kids, kids_cap;
    /* set when a writer copies the tree */
    int     def;                   /* definition level when this node holds a value */
    int     rep;                   /* LIST/MAP: repetition level of its repeated group */
    size_t  first_leaf, n_leaves;  /* leaves below (or this leaf), in column order */
};

/* One entry of a nested row waiting to be committed. */
typedef struct mcdc_pq_staged {
    size_t     leaf;
    int        rep, def;
    mcdc_value v;                  /* strings borrowed from the JSON row */
} mcdc_pq_staged;

struct mcdc_parquet_writer {
    char    *path;                 /* final path; owned */
    mcdc_storage_writer *out;      /* the object being written (locally a hidden temp file); owned */
    bool     linked;               /* the file is at path: keep it */
    int      failed;               /* first error that left the writer unusable, or 0 */
    bool     closed;               /* close was called */
    mcdc_buf obuf;                 /* bytes waiting for the storage writer */
    uint64_t offset;               /* file offset of the next byte */

    mcdc_pq_write_config cfg;
    size_t   row_group_bytes;
    char    *created_by;           /* owned */
    mcdc_pq_key_value *kv;         /* owned copies */
    size_t   n_kv;

    mcdc_pq_column *cols;          /* leaf columns in schema order */
    size_t   n_cols;
    mcdc_pq_schema_element *elems; /* the footer schema; names owned */
    size_t   n_elems;

    mcdc_pq_row_group *rgs;        /* row groups written, for the footer */
    size_t   n_rgs, rgs_cap;
    int64_t  rg_rows, num_rows;
    bool     page_full;            /* flat writers: a column's page was full after the last row */

    mcdc_schema *schema;           /* flat writers: the columns; owned */
    mcdc_parquet_node *root;       /* nested writers: the tree with levels; owned */
    mcdc_pq_staged *staged;        /* nested writers: the row being shredded */
    size_t   n_staged, staged_cap;
};

/** Create the writer and its temporary file (no columns yet). */
int mcdc_pq__writer_create(mcdc_parquet_writer **out, const char *path,
                           const mcdc_parquet_writer_options *opts);
/** Before a row: cut full pages and, past the row group size, write the row group. */
int mcdc_pq__writer_begin_row(mcdc_parquet_writer *w);
/** Record a sticky failure and return it. */
int mcdc_pq__writer_fail(mcdc_parquet_writer *w, int rc);
/** Append a schema element (name copied). */
int mcdc_pq__writer_add_element(mcdc_parquet_writer *w, const mcdc_pq_schema_element *e);

#endif
