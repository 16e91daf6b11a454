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
#include <string.h>

#include "mcdc/buf.h"

typedef struct mcdc_pq_dict {
    bool      byte_array;  /* entries carry a u32 length prefix in plain */
    size_t    width;       /* bytes per entry when !byte_array: entry i at plain + i * width */
    size_t    max_bytes;   /* plain may not grow past this */
    uint32_t *slots;       /* cap slots: 0 empty, else entry index + 1 */
    size_t    cap;         /* power of two, 0 before the first insert */
    uint32_t  n;           /* entries */
    uint32_t  last;        /* entry index + 1 of the last put, 0 none (mcdc_pq__dict_last) */
    size_t    last_off, last_len; /* where its value bytes are in plain, and their length */
    uint32_t *hash;        /* byte arrays, per entry: its hash (n used, ent_cap allocated) */
    uint32_t *off;         /* byte arrays, per entry: offset of its value bytes in plain */
    size_t    ent_cap;     /* allocated entries in hash and off */
    mcdc_buf  plain;       /* the dictionary page body (PLAIN) */
} mcdc_pq_dict;

static inline uint64_t mcdc_pq__load64(const void *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

static inline uint32_t mcdc_pq__load32(const void *p)
{
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}

/** Whether @p n bytes at @p a and @p b are equal, compared a word at a time. */
static inline bool mcdc_pq__bytes_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            if (mcdc_pq__load64(a + i) != mcdc_pq__load64(b + i))
                return false;
        return i == n || mcdc_pq__load64(a + n - 8) == mcdc_pq__load64(b + n - 8);
    }
    if (n >= 4)
        return mcdc_pq__load32(a) == mcdc_pq__load32(b) &&
               mcdc_pq__load32(a + n - 4) == mcdc_pq__load32(b + n - 4);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/** Whether a value (PLAIN bytes, as for put) is the one the last put found or added;
 *  if so @p index is set to its entry. Runs of a value (sorted or clustered data) cost a
 *  compare instead of a hash lookup. */
static inline bool mcdc_pq__dict_last(const mcdc_pq_dict *d, const void *p, size_t len,
                                      uint32_t *index)
{
    if (!d->last || len != d->last_len)
        return false;
    const uint8_t *e = (const uint8_t *)d->plain.ptr + d->last_off;
    bool eq = len == 8 ? mcdc_pq__load64(e) == mcdc_pq__load64(p)
              : len == 4 ? mcdc_pq__load32(e) == mcdc_pq__load32(p)
              : mcdc_pq__bytes_eq(e, p, len);
    if (eq)
        *index = d->last - 1;
    return eq;
}

/** The slot hash of a 4- or 8-byte value (zero-extended to 64 bits). */
static inline uint32_t mcdc_pq__hash_u64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32);
}

/** Find a 4- or 8-byte value already in a dictionary of that width, inline (the lookup
 *  of mcdc_pq__dict_put without the insert): true with its entry in @p index, which
 *  becomes the last put. False when absent or for other widths; then call put. */
static inline bool mcdc_pq__dict_find_fixed(mcdc_pq_dict *d, const void *p, size_t len,
                                            uint32_t *index)
{
    if (d->byte_array || (len != 8 && len != 4) || len != d->width || !d->cap)
        return false;
    uint64_t x = len == 8 ? mcdc_pq__load64(p) : mcdc_pq__load32(p);
    const uint8_t *plain = (const uint8_t *)d->plain.ptr;
    size_t mask = d->cap - 1;
    for (size_t s = mcdc_pq__hash_u64(x) & mask;; s = (s + 1) & mask) {
        uint32_t e = d->slots[s];
        if (!e)
            return false;
        size_t off = (size_t)(e - 1) * len;
        uint64_t y = len == 8 ? mcdc_pq__load64(plain + off) : mcdc_pq__load32(plain + off);
        if (x == y) {
            *index = e - 1;
            d->last = e;
            d->last_off = off;
            d->last_len = len;
            return true;
        }
    }
}

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
