/*
 * parquet/dict.h: the dictionary of one column chunk being written: distinct values in
 * first-seen order, their PLAIN encoding (the dictionary page body), and a hash index.
 *
 * Values are given as their PLAIN bytes without a length prefix (4 or 8 bytes for
 * numbers, type_length for FIXED_LEN_BYTE_ARRAY, the raw bytes for BYTE_ARRAY). The
 * dictionary refuses to grow past its byte limit; the caller then writes PLAIN pages.
 * Entry order, and so the dictionary page, depends only on the values put, never on the
 * hash function or the table size.
 */
#ifndef MCDC_PARQUET_DICT_H
#define MCDC_PARQUET_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

typedef struct mcdc_pq_dict {
    bool      byte_array;  /* entries carry a u32 length prefix in plain */
    size_t    width;       /* bytes per entry when !byte_array: entry i at plain + i * width */
    size_t    max_bytes;   /* plain may not grow past this */
    uint32_t *slots;       /* cap slots: 0 empty, else entry index + 1 */
    size_t    cap;         /* power of two, 0 before the first insert */
    uint32_t  n;           /* entries */
    uint32_t  last;        /* entry index + 1 of the last put, 0 none (repeats skip the hash) */
    uint32_t *hash;        /* byte arrays, per entry: its hash (n used, ent_cap allocated) */
    uint32_t *off;         /* byte arrays, per entry: offset of its value bytes in plain */
    size_t    ent_cap;     /* allocated entries in hash and off */
    mcdc_buf  plain;       /* the dictionary page body (PLAIN) */
} mcdc_pq_dict;

/** Set up an empty dictionary for values of @p width bytes (0 = byte arrays). */
void mcdc_pq__dict_init(mcdc_pq_dict *d, size_t width, size_t max_bytes);
/** Find or add a value. @param[out] index its entry index; @param[out] is_new whether it
 *  was added. @return 0; 1 when adding it would pass max_bytes (nothing changed);
 *  MCDC_ENOMEM. Cost: O(len) expected. */
int mcdc_pq__dict_put(mcdc_pq_dict *d, const void *p, size_t len, uint32_t *index, bool *is_new);
/** Bytes of entry @p i (for BYTE_ARRAY without the prefix) and their length. */
const uint8_t *mcdc_pq__dict_value(const mcdc_pq_dict *d, uint32_t i, size_t *len);
/** Forget every entry, keep the memory. */
void mcdc_pq__dict_reset(mcdc_pq_dict *d);
/** Free the memory; accepts NULL. */
void mcdc_pq__dict_dispose(mcdc_pq_dict *d);

#endif
