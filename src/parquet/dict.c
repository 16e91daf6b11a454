/*
 * parquet/dict.c: open-addressing hash dictionary for the column writer.
 *
 * Linear probing over a power-of-two slot table kept at most half full. Fixed-width
 * values (4, 8 or type_length bytes) sit back to back in plain, so entry i is at
 * i * width; 4- and 8-byte values are compared and hashed as integers, and growth
 * rehashes them from plain. Byte arrays keep each entry's 32-bit hash and offset, so
 * probes compare hashes before bytes and growth does not rehash values. The entry of the
 * last put is remembered, so the writer answers repeats (runs in sorted or clustered
 * data) with mcdc_pq__dict_last before hashing. The plain buffer is capped at
 * max_bytes, so memory is bounded by about twice that.
 */
#include "parquet/dict.h"

#include <stdlib.h>
#include <string.h>

void mcdc_pq__dict_init(mcdc_pq_dict *d, size_t width, size_t max_bytes)
{
    memset(d, 0, sizeof *d);
    d->byte_array = width == 0;
    d->width = width;
    d->max_bytes = max_bytes;
    d->plain = (mcdc_buf)MCDC_BUF_INIT(max_bytes + 16);
}

static uint32_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, p, 8);
        h = (h ^ k) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    uint64_t k = 0;
    if (n)
        memcpy(&k, p, n);
    h = (h ^ k) * 0x94D049BB133111EBull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (uint32_t)h;
}


/* Hash of a fixed-width value. */
static inline uint32_t hash_fixed(const uint8_t *p, size_t width)
{
    if (width == 8)
        return mcdc_pq__hash_u64(mcdc_pq__load64(p));
    if (width == 4)
        return mcdc_pq__hash_u64(mcdc_pq__load32(p));
    return hash_bytes(p, width);
}

static inline bool fixed_eq(const uint8_t *a, const uint8_t *b, size_t width)
{
    if (width == 8)
        return mcdc_pq__load64(a) == mcdc_pq__load64(b);
    if (width == 4)
        return mcdc_pq__load32(a) == mcdc_pq__load32(b);
    return mcdc_pq__bytes_eq(a, b, width);
}

const uint8_t *mcdc_pq__dict_value(const mcdc_pq_dict *d, uint32_t i, size_t *len)
{
    if (!d->byte_array) {
        *len = d->width;
        return (const uint8_t *)d->plain.ptr + (size_t)i * d->width;
    }
    const uint8_t *p = (const uint8_t *)d->plain.ptr + d->off[i];
    const uint8_t *l = p - 4;
    *len = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
    return p;
}

static int grow_slots(mcdc_pq_dict *d)
{
    size_t ncap = d->cap ? d->cap * 2 : 1024;
    uint32_t *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory growing a dictionary to %zu slots", ncap);
    const uint8_t *plain = (const uint8_t *)d->plain.ptr;
    for (uint32_t i = 0; i < d->n; i++) {
        uint32_t h = d->byte_array ? d->hash[i]
                                   : hash_fixed(plain + (size_t)i * d->width, d->width);
        size_t s = h & (ncap - 1);
        while (ns[s])
            s = (s + 1) & (ncap - 1);
        ns[s] = i + 1;
    }
    free(d->slots);
    d->slots = ns;
    d->cap = ncap;
    return 0;
}

/* Add a value not in the dictionary; @p s is its empty slot when the table has room. */
static int add(mcdc_pq_dict *d, const void *p, size_t len, uint32_t h, size_t s, uint32_t *index)
{
    size_t add = len + (d->byte_array ? 4 : 0);
    if (d->plain.len + add > d->max_bytes || d->n == UINT32_MAX - 1)
        return 1;
    int rc;
    if ((size_t)(d->n + 1) * 2 > d->cap) {
        if ((rc = grow_slots(d)) < 0)
            return rc;
        size_t mask = d->cap - 1;
        for (s = h & mask; d->slots[s]; s = (s + 1) & mask)
            ;
    }
    if (d->byte_array) {
        if (d->n == d->ent_cap) {
            size_t nc = d->ent_cap ? d->ent_cap * 2 : 1024;
            uint32_t *nh = realloc(d->hash, nc * sizeof *nh);
            if (!nh)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory growing a dictionary");
            d->hash = nh;
            uint32_t *no = realloc(d->off, nc * sizeof *no);
            if (!no)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory growing a dictionary");
            d->off = no;
            d->ent_cap = nc;
        }
        uint8_t l[4] = { (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
                         (uint8_t)(len >> 24) };
        if ((rc = mcdc_buf_grow(&d->plain, 4 + len)) < 0)
            return rc;
        memcpy(d->plain.ptr + d->plain.len, l, 4);
        d->plain.len += 4;
        d->hash[d->n] = h;
        d->off[d->n] = (uint32_t)d->plain.len;
    } else if ((rc = mcdc_buf_grow(&d->plain, len)) < 0) {
        return rc;
    }
    if (len)
        memcpy(d->plain.ptr + d->plain.len, p, len);
    d->plain.len += len;
    d->plain.ptr[d->plain.len] = 0;
    d->slots[s] = d->n + 1;
    *index = d->n++;
    d->last = d->n;
    d->last_off = d->plain.len - len;
    d->last_len = len;
    return 0;
}

int mcdc_pq__dict_put(mcdc_pq_dict *d, const void *p, size_t len, uint32_t *index, bool *is_new)
{
    const uint8_t *v = p;
    const uint8_t *plain = (const uint8_t *)d->plain.ptr;
    *is_new = false;
    uint32_t h = d->byte_array ? hash_bytes(v, len) : hash_fixed(v, d->width);
    size_t mask = d->cap - 1, s = d->cap ? h & mask : 0;
    if (d->cap) {
        for (uint32_t e; (e = d->slots[s]) != 0; s = (s + 1) & mask) {
            size_t off;
            if (!d->byte_array) {
                off = (size_t)(e - 1) * d->width;
                if (!fixed_eq(plain + off, v, d->width))
                    continue;
            } else {
                if (d->hash[e - 1] != h)
                    continue;
                size_t elen;
                off = d->off[e - 1];
                mcdc_pq__dict_value(d, e - 1, &elen);
                if (elen != len || !mcdc_pq__bytes_eq(plain + off, v, len))
                    continue;
            }
            *index = e - 1;
            d->last = e;
            d->last_off = off;
            d->last_len = len;
            return 0;
        }
    }
    int rc = add(d, p, len, h, s, index);
    *is_new = rc == 0;
    return rc;
}

void mcdc_pq__dict_reset(mcdc_pq_dict *d)
{
    if (d->cap)
        memset(d->slots, 0, d->cap * sizeof *d->slots);
    d->n = 0;
    d->last = 0;
    mcdc_buf_clear(&d->plain);
}

void mcdc_pq__dict_dispose(mcdc_pq_dict *d)
{
    if (!d)
        return;
    free(d->slots);
    free(d->hash);
    free(d->off);
    mcdc_buf_dispose(&d->plain);
    size_t w = d->width, m = d->max_bytes;
    mcdc_pq__dict_init(d, w, m);
}
