/*
 * silver/changes.c: the change set of one silver apply: the latest image per key of the
 * bronze rows beyond silver's position, and what becomes of an existing silver row.
 *
 * Rules S1-S4 are in include/mcdc/silver.h. Memory is bounded by the distinct changed
 * keys, counted against a cap: one image per key (its rank, key and row in one compact
 * block, cut from large chunks; a replaced image is garbage until the chunks are
 * compacted, which happens when garbage outweighs the live images or the cap is reached),
 * one 32-byte entry per key (its 16-byte prefix, image, length and operation) and an
 * open-addressing index of 8-byte (hash half, entry) slots, so that a probe leaves the
 * slots only when the hashes agree and a key of at most 16 bytes is compared by its entry
 * alone. The sort sorts a copy of the entries (radix on the prefixes), never visiting
 * the images. Keys are the concatenated order-preserving encodings of the key columns, so
 * the index is exact for decimals and strings (never a double, never a collation) and
 * sorting the encodings sorts the keys.
 *
 * Speed (a large apply adds a million rows): add is split (silver/changes.h) into a
 * prepare that reads only what new() fixed, run on the bronze reader's thread, and the
 * probe and insert on the owner's; large blocks are mapped on huge pages, and the reader
 * faults in the next image chunk while it waits, since fresh memory is most of what
 * building a large change set costs. None of it changes the result: rows are added in
 * the order offered. No I/O; the Delta side is in apply.c. Design: anchor-features §2.7
 * steps 11-12.
 */
#include "mcdc/silver.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/mman.h>

#include "mcdc/delta.h"
#include "silver/changes.h"
#include "silver/common.h"

/* Bronze's metadata columns (anchor-features §2.3); everything else is captured. */
static const char *const bronze_meta[] = {
    "_capture_instance", "_start_lsn", "_seqval", "_operation", "_command_id", "_commit_ts",
    "_batch_id", "_snapshot", "_chunk",
};

bool mcdc_silver_is_bronze_meta(const char *name)
{
    for (size_t i = 0; i < sizeof bronze_meta / sizeof *bronze_meta; i++)
        if (strcasecmp(name, bronze_meta[i]) == 0)
            return true;
    return false;
}

static bool same_type(const mcdc_column *a, const mcdc_column *b)
{
    if (a->type != b->type)
        return false;
    return a->type != MCDC_TYPE_DECIMAL || (a->precision == b->precision && a->scale == b->scale);
}

int mcdc_silver_schema(mcdc_schema **out, const mcdc_schema *bronze, const mcdc_schema *existing)
{
    *out = NULL;
    if (mcdc_schema_find(bronze, "_start_lsn") < 0 || mcdc_schema_find(bronze, "_operation") < 0 ||
        mcdc_schema_find(bronze, "_commit_ts") < 0) {
        mcdc_error_set(MCDC_EINVAL, "bronze has no _start_lsn, _operation or _commit_ts column: "
                       "not a bronze change log");
        return mcdc_error_hint("pass the table the stream writes (--target of mssql-cdc stream)");
    }
    mcdc_schema *s = existing ? mcdc_schema_copy(existing) : mcdc_schema_new();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "silver schema: out of memory");
    int rc = 0;
    for (size_t i = 0; i < bronze->n_cols; i++) {
        const mcdc_column *c = &bronze->cols[i];
        if (mcdc_silver_is_bronze_meta(c->name))
            continue;
        int j = mcdc_schema_find(s, c->name);
        if (j >= 0) {
            if (!same_type(&s->cols[j], c) && mcdc_delta_type_widens(&s->cols[j], c)) {
                /* bronze widened the column (typeWidening): silver widens with it */
                s->cols[j].type = c->type;
                s->cols[j].precision = c->precision;
                s->cols[j].scale = c->scale;
            } else if (!same_type(&s->cols[j], c)) {
                char a[64], b[64];
                mcdc_type_name(a, sizeof a, &s->cols[j]);
                mcdc_type_name(b, sizeof b, c);
                rc = mcdc_error_set(MCDC_ESCHEMA, "column %s is %s in silver but %s in bronze",
                                    c->name, a, b);
                mcdc_error_hint("silver never changes a column's type: widen it by hand, or "
                                "rebuild silver under a new name");
                goto fail;
            }
            continue;
        }
        if ((rc = mcdc_schema_add(s, c->name, c->type, c->precision, c->scale, true)) < 0)
            goto fail;
    }
    if (!existing) {
        if ((rc = mcdc_schema_add(s, "_start_lsn", MCDC_TYPE_STRING, 0, 0, true)) < 0 ||
            (rc = mcdc_schema_add(s, "_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true)) < 0)
            goto fail;
    } else if (mcdc_schema_find(s, "_start_lsn") < 0 || mcdc_schema_find(s, "_commit_ts") < 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "silver has no _start_lsn or _commit_ts column: not a "
                            "silver table");
        mcdc_error_hint("pass a table written by mssql-cdc silver apply, or a new name");
        goto fail;
    }
    *out = s;
    return 0;
fail:
    mcdc_schema_free(s);
    return rc;
}

/* ---- Key encoding ------------------------------------------------------------------ */

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

int mcdc_silver_key_encode(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v)
{
    uint8_t tmp[17];
    if (v->is_null)
        return mcdc_buf_putc(out, 0);
    tmp[0] = 1;
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN:
        tmp[1] = v->v.b ? 1 : 0;
        return mcdc_buf_put(out, tmp, 2);
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE: {
        double d = col->type == MCDC_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        uint64_t bits;
        if (d == 0)
            d = 0; /* -0 = 0 */
        if (d != d)
            bits = UINT64_C(0x7FF8000000000000); /* one NaN, above +inf */
        else
            memcpy(&bits, &d, sizeof bits);
        bits = (bits >> 63) ? ~bits : bits ^ (UINT64_C(1) << 63);
        put_be64(tmp + 1, bits);
        return mcdc_buf_put(out, tmp, 9);
    }
    case MCDC_TYPE_DECIMAL: {
        unsigned __int128 u = (unsigned __int128)v->v.dec ^ ((unsigned __int128)1 << 127);
        put_be64(tmp + 1, (uint64_t)(u >> 64));
        put_be64(tmp + 9, (uint64_t)u);
        return mcdc_buf_put(out, tmp, 17);
    }
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: {
        /* bytes with 0x00 escaped as 00 FF, ended by 00 00: prefixes sort first */
        int rc = mcdc_buf_putc(out, 1);
        const uint8_t *p = (const uint8_t *)v->v.s.ptr;
        size_t start = 0;
        for (size_t i = 0; rc == 0 && i < v->v.s.len; i++) {
            if (p[i] != 0)
                continue;
            rc = mcdc_buf_put(out, p + start, i - start + 1);
            if (rc == 0)
                rc = mcdc_buf_putc(out, (char)0xFF);
            start = i + 1;
        }
        if (rc == 0 && v->v.s.len > start)
            rc = mcdc_buf_put(out, p + start, v->v.s.len - start);
        if (rc == 0)
            rc = mcdc_buf_put(out, "\0\0", 2);
        return rc;
    }
    default: /* BYTE, SHORT, INT, LONG, DATE, TIMESTAMP, TIMESTAMP_NTZ: int64 */
        put_be64(tmp + 1, (uint64_t)v->v.i ^ (UINT64_C(1) << 63));
        return mcdc_buf_put(out, tmp, 9);
    }
}

/* ---- The change set ---------------------------------------------------------------- */

/* One key's image. Allocated in one block without pointers (so a compaction only copies
 * it): the struct, the key bytes when longer than 16 (at IMAGE_KEY; a shorter key is its
 * entry's prefix, see sort_ent), then the row in silver's order, encoded compactly
 * (image_row() decodes it into the caller's cells, the _start_lsn text formatted from the
 * rank's LSN into the cell after the row): a null bitmap of n_cols bits (set: NULL), then each
 * non-NULL cell of a column bronze holds, by its kind (enum kind): 1/2/4/8 bytes for the
 * integer-like types, 4 or 8 for FLOAT and DOUBLE, 8 (precision <= 18) or 16 for DECIMAL,
 * a 32-bit length and the bytes for STRING and BINARY, in native byte order, unaligned.
 * An image with a value outside its column's narrow width (a file breaking its own
 * schema) is `wide`: its integer-like cells take 8 bytes, its decimals 16, so every value
 * comes back exactly as read. Kept small: fresh memory is most of what building a large
 * change set costs. */
typedef struct image {
    mcdc_silver_rank r;
    bool        matched;    /* met in silver by match() */
    bool        placed;     /* match() returned REPLACE for it once */
    bool        wide;       /* integer-like cells and decimals at full width */
    uint32_t    key_len;    /* at most MCDC_SILVER_KEY_MAX */
    uint32_t    alloc;      /* bytes of this block, counted in cs->bytes */
} image;

/* Images are cut at multiples of IMAGE_ALIGN. */
#define IMAGE_ALIGN ((size_t)8)

/* The image struct rounded up to the alignment. */
#define IMAGE_HEAD ((sizeof(image) + IMAGE_ALIGN - 1) / IMAGE_ALIGN * IMAGE_ALIGN)

/* An image's key, when longer than 16 bytes. */
#define IMAGE_KEY(im) ((uint8_t *)(im) + IMAGE_HEAD)

/* The bytes of the key an image of a key of @p len bytes stores. */
#define IMAGE_KEY_BYTES(len) ((len) > 16 ? (size_t)(len) : 0)

/* How an image stores the cell of a silver column. */
enum kind {
    K_ABSENT, /* not in bronze: always NULL, no bytes */
    K_LSN,    /* _start_lsn: the text of the rank's LSN, no bytes */
    K_BOOL, K_I8, K_I16, K_I32, K_I64, K_F32, K_F64, K_D64, K_D128,
    K_STR     /* STRING, BINARY: a uint32 length, then the bytes */
};

/* The largest image block (alloc is 32 bits). */
#define IMAGE_MAX ((size_t)UINT32_MAX / 16 * 16)

/* Large blocks (the index, the entries, image chunks) are mapped, aligned to 2 MiB and
 * marked for transparent huge pages where the system has them: random probes then miss
 * the TLB far less, and fresh image memory faults in 2 MiB at a time, not 4 KiB. Pages are
 * touched only as they are used. Smaller blocks come from malloc. */
#define HUGE_BYTES ((size_t)2 << 20)

static size_t big_round(size_t n)
{
    return n >= HUGE_BYTES ? (n + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES : n;
}

/* @p n bytes, zeroed when @p zero (mapped blocks always are); NULL when out of memory. */
static void *big_alloc(size_t n, bool zero)
{
    n = big_round(n);
    if (n < HUGE_BYTES)
        return zero ? calloc(1, n ? n : 1) : malloc(n ? n : 1);
    if (n > SIZE_MAX - HUGE_BYTES)
        return NULL;
    char *p = mmap(NULL, n + HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    size_t head = (HUGE_BYTES - (uintptr_t)p % HUGE_BYTES) % HUGE_BYTES;
    if (head)
        munmap(p, head);
    if (HUGE_BYTES - head)
        munmap(p + head + n, HUGE_BYTES - head);
#ifdef MADV_HUGEPAGE
    madvise(p + head, n, MADV_HUGEPAGE);
#endif
    return p + head;
}

/* Free a block of big_alloc(@p n). */
static void big_free(void *p, size_t n)
{
    if (!p)
        return;
    n = big_round(n);
    if (n < HUGE_BYTES)
        free(p);
    else
        munmap(p, n);
}

/* A chunk the images are cut from. Chunks grow with the change set (each as large as
 * all before it, from 1 MiB up to 8 MiB): a small apply holds little, a large one gets
 * huge pages. */
typedef struct chunk {
    struct chunk *next;
    size_t        used, cap;
    size_t        block;      /* bytes of the block (for big_free) */
    _Alignas(max_align_t) char data[];
} chunk;

#define CHUNK_BYTES     ((size_t)1 << 20)
#define CHUNK_BYTES_MAX ((size_t)8 << 20)

/* One slot of the index, 8 bytes: the high half of the key's hash (the low bits place
 * it) beside its entry (1 + index in cs->ents; 0 = empty), so that a probe leaves the
 * slots only when the hashes agree. Hence at most UINT32_MAX - 1 keys. */
typedef struct slot {
    uint32_t tag;
    uint32_t ent;
} slot;

#define SLOT_TAG(h) ((uint32_t)((h) >> 32))

/* An entry per key, in the order the keys came: the key's first 16 bytes inline
 * (big-endian, zero-padded, so that comparing them compares the keys' starts and a key of
 * at most 16 bytes is its prefix), its image, its length and the image's operation. A
 * replacing image takes over its key's entry. Sorting a copy of the entries sorts the
 * keys without visiting the images. */
typedef struct sort_ent {
    uint64_t p0, p1;
    image   *im;
    uint32_t key_len;
    uint8_t  op;
} sort_ent;

struct mcdc_silver_changes {
    mcdc_schema *bronze;      /* owned copy */
    mcdc_schema *silver;      /* owned copy */
    int         *key_b;       /* key column indices in bronze */
    int         *key_s;       /* key column indices in silver */
    size_t       n_keys;
    int         *b_of_s;      /* for each silver column: its bronze index, or -1 */
    int         *src_of_s;    /* for each silver column: the bronze index its image cell
                                 comes from (b_of_s, and _commit_ts for silver's), or -1 */
    uint8_t     *kind_of_s;   /* for each silver column: its enum kind */
    size_t       n_bitmap;    /* bytes of an image's null bitmap */
    int          i_ci, i_lsn, i_seq, i_op, i_cmd, i_ts, i_snap, i_chunk; /* bronze metadata, -1 absent */
    mcdc_lsn    *stamps;      /* opts.range_stamps, owned copy */
    int          s_lsn, s_ts; /* silver's _start_lsn and _commit_ts */
    char       **cis;         /* allowed capture instances, owned */
    size_t      *ci_len;      /* their lengths */
    size_t       n_cis;
    mcdc_silver_changes_options opts;
    slot        *slots;       /* open addressing, power of two, at most half full */
    size_t       n_slots;
    sort_ent    *ents;        /* one per key (n_images), capacity cap_ents */
    size_t       cap_ents;
    chunk       *chunks;      /* the first is being filled */
    size_t       chunk_total; /* capacity of the chunks */
    pthread_mutex_t spare_mu; /* guards the three below (prefault runs on another thread) */
    chunk       *spare;       /* a chunk of CHUNK_BYTES_MAX faulted in ahead, or NULL */
    size_t       spare_touched; /* its bytes faulted in so far */
    bool         spare_wanted;  /* set by the owner (publish_spare_wanted) */
    size_t       live, garbage; /* bytes of current and of replaced images */
    size_t       n_images;
    sort_ent    *sorted;      /* after sort(): a copy of the entries in key order */
    size_t       n_sorted;
    uint8_t     *skeys;       /* after sort(): their keys back to back, in key order */
    size_t      *skey_off;    /* n_sorted + 1 offsets into skeys; NULL when every key has
                                 skey_len bytes (one key type of fixed width) */
    size_t       skey_len;
    size_t       sorted_bytes, skeys_bytes, skey_off_bytes; /* their blocks (big_alloc) */
    mcdc_buf     keybuf;      /* scratch for encoding */
    mcdc_silver_changes_stats stats;
};

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, p, 8);
        h ^= k * UINT64_C(0xBF58476D1CE4E5B9);
        h = (h << 31 | h >> 33) * UINT64_C(0x94D049BB133111EB);
        p += 8;
        n -= 8;
    }
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k |= (uint64_t)p[i] << (8 * i);
    h ^= k * UINT64_C(0xBF58476D1CE4E5B9);
    h ^= h >> 30;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    h ^= h >> 27;
    h *= UINT64_C(0x94D049BB133111EB);
    h ^= h >> 31;
    return h;
}

static void drop_sorted(mcdc_silver_changes *cs)
{
    big_free(cs->sorted, cs->sorted_bytes);
    cs->sorted = NULL;
    cs->n_sorted = 0;
    big_free(cs->skeys, cs->skeys_bytes);
    cs->skeys = NULL;
    big_free(cs->skey_off, cs->skey_off_bytes);
    cs->skey_off = NULL;
}

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *n = c->next;
        big_free(c, c->block);
        c = n;
    }
}

/* The kind of the image cells of values of column @p c. */
static uint8_t kind_of(const mcdc_column *c)
{
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN:
        return K_BOOL;
    case MCDC_TYPE_BYTE:
        return K_I8;
    case MCDC_TYPE_SHORT:
        return K_I16;
    case MCDC_TYPE_INT:
    case MCDC_TYPE_DATE:
        return K_I32;
    case MCDC_TYPE_FLOAT:
        return K_F32;
    case MCDC_TYPE_DOUBLE:
        return K_F64;
    case MCDC_TYPE_DECIMAL:
        return c->precision <= 18 ? K_D64 : K_D128;
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        return K_STR;
    default: /* LONG, TIMESTAMP, TIMESTAMP_NTZ: int64 */
        return K_I64;
    }
}

/* Bytes of a non-NULL cell of fixed-width kind @p k (0 for the others). */
static size_t kind_width(unsigned k, bool wide)
{
    switch (k) {
    case K_BOOL:
        return 1;
    case K_I8:
        return wide ? 8 : 1;
    case K_I16:
        return wide ? 8 : 2;
    case K_I32:
        return wide ? 8 : 4;
    case K_I64:
    case K_F64:
        return 8;
    case K_F32:
        return 4;
    case K_D64:
        return wide ? 16 : 8;
    case K_D128:
        return 16;
    default:
        return 0;
    }
}

/* Whether value @p v of kind @p k fits its narrow width. */
static bool kind_fits(unsigned k, const mcdc_value *v)
{
    switch (k) {
    case K_I8:
        return v->v.i >= INT8_MIN && v->v.i <= INT8_MAX;
    case K_I16:
        return v->v.i >= INT16_MIN && v->v.i <= INT16_MAX;
    case K_I32:
        return v->v.i >= INT32_MIN && v->v.i <= INT32_MAX;
    case K_D64:
        return v->v.dec >= INT64_MIN && v->v.dec <= INT64_MAX;
    default:
        return true;
    }
}

void mcdc_silver_changes_free(mcdc_silver_changes *cs)
{
    if (!cs)
        return;
    free_chunks(cs->chunks);
    free(cs->stamps);
    big_free(cs->spare, CHUNK_BYTES_MAX);
    pthread_mutex_destroy(&cs->spare_mu);
    big_free(cs->slots, cs->n_slots * sizeof *cs->slots);
    big_free(cs->ents, cs->cap_ents * sizeof *cs->ents);
    drop_sorted(cs);
    for (size_t i = 0; i < cs->n_cis; i++)
        free(cs->cis[i]);
    free(cs->cis);
    free(cs->ci_len);
    mcdc_schema_free(cs->bronze);
    mcdc_schema_free(cs->silver);
    free(cs->key_b);
    free(cs->key_s);
    free(cs->b_of_s);
    free(cs->src_of_s);
    free(cs->kind_of_s);
    mcdc_buf_dispose(&cs->keybuf);
    free(cs);
}

int mcdc_silver_changes_new(mcdc_silver_changes **out, const mcdc_schema *bronze,
                            const mcdc_schema *silver, const char *const *keys, size_t n_keys,
                            const mcdc_silver_changes_options *opts)
{
    *out = NULL;
    mcdc_silver_changes *cs = calloc(1, sizeof *cs);
    if (!cs)
        return mcdc_error_set(MCDC_ENOMEM, "change set: out of memory");
    pthread_mutex_init(&cs->spare_mu, NULL);
    int rc = MCDC_ENOMEM;
    mcdc_silver_changes_options dflt = MCDC_SILVER_CHANGES_OPTIONS_INIT;
    cs->opts = opts ? *opts : dflt;
    if (cs->opts.max_bytes == 0)
        cs->opts.max_bytes = (size_t)4 << 30;
    cs->keybuf = (mcdc_buf)MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    cs->bronze = mcdc_schema_copy(bronze);
    cs->silver = mcdc_schema_copy(silver);
    if (!cs->bronze || !cs->silver)
        goto nomem;
    cs->i_ci = mcdc_schema_find(bronze, "_capture_instance");
    cs->i_lsn = mcdc_schema_find(bronze, "_start_lsn");
    cs->i_seq = mcdc_schema_find(bronze, "_seqval");
    cs->i_op = mcdc_schema_find(bronze, "_operation");
    cs->i_cmd = mcdc_schema_find(bronze, "_command_id");
    cs->i_ts = mcdc_schema_find(bronze, "_commit_ts");
    cs->i_snap = mcdc_schema_find(bronze, "_snapshot");
    cs->i_chunk = mcdc_schema_find(bronze, "_chunk");
    cs->s_lsn = mcdc_schema_find(silver, "_start_lsn");
    cs->s_ts = mcdc_schema_find(silver, "_commit_ts");
    if (cs->i_lsn < 0 || cs->i_op < 0 || cs->i_ts < 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "bronze has no _start_lsn, _operation or _commit_ts "
                            "column: not a bronze change log");
        goto fail;
    }
    if (cs->s_lsn < 0 || cs->s_ts < 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "silver has no _start_lsn or _commit_ts column");
        goto fail;
    }
    if (n_keys == 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "no key columns given");
        mcdc_error_hint("pass --keys k1,k2 or --source to read the capture instance's index");
        goto fail;
    }
    cs->n_keys = n_keys;
    cs->key_b = calloc(n_keys, sizeof *cs->key_b);
    cs->key_s = calloc(n_keys, sizeof *cs->key_s);
    cs->b_of_s = calloc(silver->n_cols + 1, sizeof *cs->b_of_s);
    cs->src_of_s = calloc(silver->n_cols + 1, sizeof *cs->src_of_s);
    cs->kind_of_s = calloc(silver->n_cols + 1, sizeof *cs->kind_of_s);
    if (!cs->key_b || !cs->key_s || !cs->b_of_s || !cs->src_of_s || !cs->kind_of_s)
        goto nomem;
    for (size_t k = 0; k < n_keys; k++) {
        int b = mcdc_schema_find(bronze, keys[k]);
        int s = mcdc_schema_find(silver, keys[k]);
        if (b < 0 || s < 0 || mcdc_silver_is_bronze_meta(keys[k])) {
            rc = mcdc_error_set(MCDC_EINVAL, "key column '%s' is not a captured column of bronze",
                                keys[k]);
            mcdc_error_hint("name key columns of the source table (--keys), as captured");
            goto fail;
        }
        for (size_t j = 0; j < k; j++)
            if (cs->key_b[j] == b) {
                rc = mcdc_error_set(MCDC_EINVAL, "key column '%s' is given twice", keys[k]);
                goto fail;
            }
        cs->key_b[k] = b;
        cs->key_s[k] = s;
    }
    for (size_t i = 0; i < silver->n_cols; i++) {
        int b = mcdc_schema_find(bronze, silver->cols[i].name);
        cs->b_of_s[i] = ((int)i == cs->s_lsn || (int)i == cs->s_ts ||
                         (b >= 0 && mcdc_silver_is_bronze_meta(bronze->cols[b].name))) ? -1 : b;
        cs->src_of_s[i] = (int)i == cs->s_ts ? cs->i_ts : cs->b_of_s[i];
        cs->kind_of_s[i] = (int)i == cs->s_lsn ? K_LSN
                         : cs->src_of_s[i] < 0 ? K_ABSENT
                         : kind_of(&bronze->cols[cs->src_of_s[i]]);
    }
    cs->n_bitmap = (silver->n_cols + 7) / 8;
    if (cs->opts.n_capture_instances) {
        cs->cis = calloc(cs->opts.n_capture_instances, sizeof *cs->cis);
        cs->ci_len = calloc(cs->opts.n_capture_instances, sizeof *cs->ci_len);
        if (!cs->cis || !cs->ci_len)
            goto nomem;
        for (size_t i = 0; i < cs->opts.n_capture_instances; i++) {
            cs->cis[i] = strdup(cs->opts.capture_instances[i]);
            if (!cs->cis[i])
                goto nomem;
            cs->ci_len[i] = strlen(cs->cis[i]);
            cs->n_cis++;
        }
    }
    cs->opts.capture_instances = NULL;
    if (cs->opts.n_range_stamps) {
        if (!(cs->stamps = malloc(cs->opts.n_range_stamps * sizeof *cs->stamps)))
            goto nomem;
        memcpy(cs->stamps, cs->opts.range_stamps, cs->opts.n_range_stamps * sizeof *cs->stamps);
    }
    cs->opts.range_stamps = cs->stamps;
    cs->n_slots = 1024;
    cs->slots = big_alloc(cs->n_slots * sizeof *cs->slots, true);
    cs->cap_ents = 256;
    cs->ents = big_alloc(cs->cap_ents * sizeof *cs->ents, false);
    if (!cs->slots || !cs->ents)
        goto nomem;
    cs->stats.bytes = cs->n_slots * sizeof *cs->slots + cs->cap_ents * sizeof *cs->ents;
    *out = cs;
    return 0;
nomem:
    rc = mcdc_error_set(MCDC_ENOMEM, "change set: out of memory");
fail:
    mcdc_silver_changes_free(cs);
    return rc;
}

/* mcdc_lsn_cmp inline (two big-endian loads instead of a call to memcmp): LSNs are
 * compared a few times per row on the hot paths. */
static inline int lsn_cmp(const mcdc_lsn *a, const mcdc_lsn *b)
{
    uint64_t x = 0, y = 0;
    for (int i = 0; i < 8; i++) {
        x = x << 8 | a->b[i];
        y = y << 8 | b->b[i];
    }
    if (x != y)
        return x < y ? -1 : 1;
    unsigned u = (unsigned)a->b[8] << 8 | a->b[9], v = (unsigned)b->b[8] << 8 | b->b[9];
    return u < v ? -1 : u > v;
}

/* <0, 0, >0: rank of a against b (S1); declared in silver/common.h. */
int mcdc_silver_rank_cmp(const mcdc_silver_rank *a, const mcdc_silver_rank *b)
{
    int c = lsn_cmp(&a->lsn, &b->lsn);
    if (c)
        return c;
    if (a->has_command_id != b->has_command_id)
        return a->has_command_id ? 1 : -1;
    if (a->has_command_id && a->command_id != b->command_id)
        return a->command_id < b->command_id ? -1 : 1;
    if (a->has_command_id) {
        /* one statement: a row entering the key (0, 2, 4) outranks one leaving it (1, 3) */
        bool ea = !(a->op == 1 || a->op == 3), eb = !(b->op == 1 || b->op == 3);
        if (ea != eb)
            return ea ? 1 : -1;
    }
    if (a->has_seqval != b->has_seqval)
        return a->has_seqval ? 1 : -1;
    if (a->has_seqval && (c = lsn_cmp(&a->seqval, &b->seqval)) != 0)
        return c;
    return (int)a->op - (int)b->op;
}

/* LSN text longer than this is malformed whatever it holds ("0x" and 20 digits fit). */
#define LSN_TEXT_MAX 39

static int parse_lsn_value(mcdc_lsn *out, const mcdc_value *v, const char *what)
{
    if (v->is_null)
        return mcdc_error_set(MCDC_ECORRUPT, "bronze row with a NULL %s", what);
    if (mcdc_lsn_parse_n(out, v->v.s.ptr, v->v.s.len) == 0)
        return 0;
    if (v->v.s.len == 0 || v->v.s.len > LSN_TEXT_MAX)
        return mcdc_error_set(MCDC_ECORRUPT, "bronze row with a malformed %s of %zu bytes", what,
                              v->v.s.len);
    return mcdc_error_set(MCDC_ECORRUPT, "bronze row with a malformed %s '%.*s'", what,
                          (int)v->v.s.len, v->v.s.ptr);
}

/* S4: the row's capture instance must be one of the allowed ones. */
static int check_instance(const mcdc_silver_changes *cs, const mcdc_value *r)
{
    if (!cs->n_cis)
        return 0;
    const mcdc_value *v = cs->i_ci >= 0 ? &r[cs->i_ci] : NULL;
    for (size_t i = 0; v && !v->is_null && i < cs->n_cis; i++)
        if (cs->ci_len[i] == v->v.s.len && strncasecmp(cs->cis[i], v->v.s.ptr, v->v.s.len) == 0)
            return 0;
    int n = v && !v->is_null ? (int)(v->v.s.len > 200 ? 200 : v->v.s.len) : 4;
    mcdc_error_set(MCDC_EINVAL, "bronze holds rows of capture instance '%.*s', which is not one "
                   "of this source table's instances (%s%s)", n,
                   v && !v->is_null ? v->v.s.ptr : "NULL", cs->cis[0], cs->n_cis > 1 ? ", ..." : "");
    return mcdc_error_hint("one bronze table holds one source table: pass --source so the "
                           "instances of the table are read, or list them in "
                           "--capture-instance a,b");
}

/* The hash of an entry's key (from its prefixes when they hold all of it). */
static uint64_t ent_hash(const sort_ent *e)
{
    if (e->key_len > 16)
        return hash_bytes(IMAGE_KEY(e->im), e->key_len);
    uint8_t b[16];
    put_be64(b, e->p0);
    put_be64(b + 8, e->p1);
    return hash_bytes(b, e->key_len);
}

/* Grow the index to @p n slots (a power of two above the current size). */
static int resize_slots(mcdc_silver_changes *cs, size_t n)
{
    size_t add = (n - cs->n_slots) * sizeof(slot);
    if (cs->stats.bytes + add > cs->opts.max_bytes)
        return MCDC_ENOMEM;
    slot *s = big_alloc(n * sizeof *s, true);
    if (!s)
        return MCDC_ENOMEM;
    for (size_t i = 0; i < cs->n_slots; i++) {
        if (!cs->slots[i].ent)
            continue;
        size_t j = (size_t)ent_hash(&cs->ents[cs->slots[i].ent - 1]) & (n - 1);
        while (s[j].ent)
            j = (j + 1) & (n - 1);
        s[j] = cs->slots[i];
    }
    big_free(cs->slots, cs->n_slots * sizeof *cs->slots);
    cs->slots = s;
    cs->n_slots = n;
    cs->stats.bytes += add;
    return 0;
}

static int grow_slots(mcdc_silver_changes *cs)
{
    return resize_slots(cs, cs->n_slots * 2);
}

/* Room for @p n entries (more than the current capacity). */
static int resize_ents(mcdc_silver_changes *cs, size_t n)
{
    size_t add = (n - cs->cap_ents) * sizeof(sort_ent);
    if (cs->stats.bytes + add > cs->opts.max_bytes)
        return MCDC_ENOMEM;
    sort_ent *e = big_alloc(n * sizeof *e, false);
    if (!e)
        return MCDC_ENOMEM;
    if (cs->n_images)
        memcpy(e, cs->ents, cs->n_images * sizeof *e);
    big_free(cs->ents, cs->cap_ents * sizeof *cs->ents);
    cs->ents = e;
    cs->cap_ents = n;
    cs->stats.bytes += add;
    return 0;
}

void mcdc_silver_changes_reserve(mcdc_silver_changes *cs, uint64_t n_keys)
{
    size_t n = cs->n_slots;
    while (n / 2 < n_keys && n < ((size_t)1 << 40))
        n *= 2;
    /* only what a quarter of the cap allows: a hint, never a failure */
    while (n > cs->n_slots && (n - cs->n_slots) * sizeof(slot) > cs->opts.max_bytes / 4)
        n /= 2;
    if (n > cs->n_slots && resize_slots(cs, n) < 0)
        mcdc_error_clear();
    size_t e = n / 2; /* the keys the index holds before it grows */
    while (e > cs->cap_ents && (e - cs->cap_ents) * sizeof(sort_ent) > cs->opts.max_bytes / 4)
        e /= 2;
    if (e > cs->cap_ents && resize_ents(cs, e) < 0)
        mcdc_error_clear();
}

void mcdc_silver_changes_prefetch(const mcdc_silver_changes *cs, uint64_t hash)
{
    __builtin_prefetch(&cs->slots[(size_t)hash & (cs->n_slots - 1)]);
}

static int over_cap(const mcdc_silver_changes *cs)
{
    mcdc_error_set(MCDC_ENOMEM, "the changes of this apply need more than %zu bytes of memory "
                   "(%zu distinct keys so far)", cs->opts.max_bytes, cs->n_images);
    return mcdc_error_hint("apply more often (fewer changes per call), or raise the memory cap");
}

/* The block size of the image of bronze row @p r (a multiple of the alignment), and in
 * *wide whether it needs the wide form. */
static size_t image_size(const mcdc_silver_changes *cs, const mcdc_value *r, size_t key_len,
                         bool *wide)
{
    size_t n = cs->silver->n_cols;
    size_t narrow = 0, extra = 0;
    bool w = false;
    for (size_t i = 0; i < n; i++) {
        unsigned k = cs->kind_of_s[i];
        if (k <= K_LSN)
            continue;
        const mcdc_value *v = &r[cs->src_of_s[i]];
        if (v->is_null)
            continue;
        if (k == K_STR) {
            narrow += 4 + v->v.s.len;
            continue;
        }
        narrow += kind_width(k, false);
        extra += kind_width(k, true) - kind_width(k, false);
        w = w || !kind_fits(k, v);
    }
    *wide = w;
    size_t size = IMAGE_HEAD + IMAGE_KEY_BYTES(key_len) + cs->n_bitmap + narrow +
                  (w ? extra : 0);
    return (size + IMAGE_ALIGN - 1) / IMAGE_ALIGN * IMAGE_ALIGN;
}

/* Whether a spare chunk is wanted: the chunks are at their largest, and the cap leaves
 * room for the images so far plus two more chunks. Published by the owner thread. */
static void publish_spare_wanted(mcdc_silver_changes *cs)
{
    bool want = cs->chunk_total >= CHUNK_BYTES_MAX &&
                cs->stats.bytes <= cs->opts.max_bytes &&
                cs->opts.max_bytes - cs->stats.bytes >= 2 * CHUNK_BYTES_MAX;
    pthread_mutex_lock(&cs->spare_mu);
    cs->spare_wanted = want;
    pthread_mutex_unlock(&cs->spare_mu);
}

/* The spare chunk when it holds @p size bytes (taken), else NULL. */
static chunk *take_spare(mcdc_silver_changes *cs, size_t size)
{
    pthread_mutex_lock(&cs->spare_mu);
    chunk *c = cs->spare;
    if (c && c->block - sizeof(chunk) >= size)
        cs->spare = NULL;
    else
        c = NULL;
    pthread_mutex_unlock(&cs->spare_mu);
    return c;
}

/* A new chunk of at least @p size bytes, first in the list; NULL when out of memory. */
static chunk *chunk_new(mcdc_silver_changes *cs, size_t size)
{
    size_t block = cs->chunk_total < CHUNK_BYTES ? CHUNK_BYTES
                 : cs->chunk_total > CHUNK_BYTES_MAX ? CHUNK_BYTES_MAX : cs->chunk_total;
    if (block - sizeof(chunk) < size)
        block = sizeof(chunk) + size;
    block = big_round(block); /* a mapping is used whole */
    chunk *c = block == CHUNK_BYTES_MAX ? take_spare(cs, size) : NULL;
    if (!c) {
        if (!(c = big_alloc(block, false)))
            return NULL;
        c->block = block;
    }
    c->next = cs->chunks;
    c->used = 0;
    c->cap = c->block - sizeof(chunk);
    cs->chunks = c;
    cs->chunk_total += c->cap;
    publish_spare_wanted(cs);
    return c;
}

bool mcdc_silver_changes_prefault(mcdc_silver_changes *cs)
{
    bool did = false;
    pthread_mutex_lock(&cs->spare_mu);
    if (cs->spare_wanted && !cs->spare) {
        pthread_mutex_unlock(&cs->spare_mu);
        chunk *c = big_alloc(CHUNK_BYTES_MAX, false);
        pthread_mutex_lock(&cs->spare_mu);
        if (c && (cs->spare || !cs->spare_wanted)) {
            big_free(c, CHUNK_BYTES_MAX);
        } else if (c) {
            c->block = CHUNK_BYTES_MAX;
            cs->spare = c;
            cs->spare_touched = offsetof(chunk, data);
        }
        did = c != NULL;
    }
    if (cs->spare && cs->spare_touched < CHUNK_BYTES_MAX) {
        /* one huge page at a time, so that the owner never waits long for the lock */
        volatile char *p = (volatile char *)cs->spare;
        size_t end = (cs->spare_touched / HUGE_BYTES + 1) * HUGE_BYTES;
        for (size_t at = cs->spare_touched; at < end; at += 4096)
            p[at] = 0;
        cs->spare_touched = end;
        did = true;
    }
    pthread_mutex_unlock(&cs->spare_mu);
    return did;
}

/* @p size bytes (a multiple of the alignment) from the chunks; NULL when out of memory. */
static void *chunk_alloc(mcdc_silver_changes *cs, size_t size)
{
    chunk *c = cs->chunks;
    if (!c || c->cap - c->used < size) {
        if (!(c = chunk_new(cs, size)))
            return NULL;
    }
    void *p = c->data + c->used;
    c->used += size;
    return p;
}

/* Move the live images into one new chunk, dropping the garbage. @return 0; MCDC_ENOMEM
 * (nothing changed). */
static int compact(mcdc_silver_changes *cs)
{
    chunk *old = cs->chunks;
    size_t old_total = cs->chunk_total;
    cs->chunks = NULL;
    cs->chunk_total = 0;
    chunk *c = chunk_new(cs, cs->live ? cs->live : 1);
    if (!c) {
        cs->chunks = old;
        cs->chunk_total = old_total;
        return MCDC_ENOMEM;
    }
    for (size_t i = 0; i < cs->n_images; i++) {
        image *o = cs->ents[i].im;
        image *im = (image *)(c->data + c->used);
        c->used += o->alloc;
        memcpy(im, o, o->alloc);
        cs->ents[i].im = im;
    }
    free_chunks(old);
    cs->stats.bytes -= cs->garbage;
    cs->garbage = 0;
    return 0;
}

/* Store bronze row @p r, ranked @p k, in a new image block of @p size bytes (from
 * image_size, with its @p wide). */
static image *image_new(mcdc_silver_changes *cs, const mcdc_value *r,
                        const mcdc_silver_rank *k, const uint8_t *key, size_t key_len,
                        size_t size, bool wide)
{
    size_t n = cs->silver->n_cols;
    image *im = chunk_alloc(cs, size);
    if (!im)
        return NULL;
    memset(im, 0, sizeof *im);
    im->r = *k;
    im->wide = wide;
    im->alloc = (uint32_t)size;
    im->key_len = (uint32_t)key_len;
    uint8_t *p = IMAGE_KEY(im);
    memcpy(p, key, IMAGE_KEY_BYTES(key_len));
    p += IMAGE_KEY_BYTES(key_len);
    uint8_t *nulls = p;
    memset(nulls, 0, cs->n_bitmap);
    p += cs->n_bitmap;
    for (size_t i = 0; i < n; i++) {
        unsigned kd = cs->kind_of_s[i];
        if (kd == K_LSN)
            continue;
        const mcdc_value *v = kd == K_ABSENT ? NULL : &r[cs->src_of_s[i]];
        if (!v || v->is_null) {
            nulls[i / 8] |= (uint8_t)(1u << (i % 8));
            continue;
        }
        switch (kd) {
        case K_BOOL:
            *p++ = v->v.b ? 1 : 0;
            break;
        case K_I8:
        case K_I16:
        case K_I32:
        case K_I64: {
            size_t w = kind_width(kd, wide);
            int64_t x = v->v.i;
            if (w == 1) {
                int8_t y = (int8_t)x;
                memcpy(p, &y, 1);
            } else if (w == 2) {
                int16_t y = (int16_t)x;
                memcpy(p, &y, 2);
            } else if (w == 4) {
                int32_t y = (int32_t)x;
                memcpy(p, &y, 4);
            } else {
                memcpy(p, &x, 8);
            }
            p += w;
            break;
        }
        case K_F32:
            memcpy(p, &v->v.f, 4);
            p += 4;
            break;
        case K_F64:
            memcpy(p, &v->v.d, 8);
            p += 8;
            break;
        case K_D64:
        case K_D128:
            if (kind_width(kd, wide) == 8) {
                int64_t y = (int64_t)v->v.dec;
                memcpy(p, &y, 8);
                p += 8;
            } else {
                memcpy(p, &v->v.dec, 16);
                p += 16;
            }
            break;
        default: { /* K_STR */
            uint32_t len = (uint32_t)v->v.s.len; /* the block holds it: at most IMAGE_MAX */
            memcpy(p, &len, 4);
            if (len)
                memcpy(p + 4, v->v.s.ptr, len);
            p += 4 + (size_t)len;
            break;
        }
        }
    }
    return im;
}

_Static_assert(sizeof(mcdc_value) >= MCDC_LSN_STRLEN, "the _start_lsn text fits a cell");

/* Decode image @p im's row into @p out (n_cols + 1 cells: the last holds the _start_lsn
 * text; the other strings point into the image). */
static const mcdc_value *image_row(const mcdc_silver_changes *cs, const image *im,
                                   mcdc_value *out)
{
    size_t n = cs->silver->n_cols;
    const uint8_t *p = IMAGE_KEY(im) + IMAGE_KEY_BYTES(im->key_len);
    char *lsn_text = (char *)&out[n];
    mcdc_lsn_format(lsn_text, &im->r.lsn);
    const uint8_t *nulls = p;
    p += cs->n_bitmap;
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        unsigned kd = cs->kind_of_s[i];
        mcdc_value *v = &out[i];
        if (kd == K_LSN) {
            v->v.s.ptr = lsn_text;
            v->v.s.len = MCDC_LSN_STRLEN - 1;
            continue;
        }
        if (nulls[i / 8] & (1u << (i % 8))) {
            v->is_null = true;
            continue;
        }
        switch (kd) {
        case K_BOOL:
            v->v.b = *p++ != 0;
            break;
        case K_I8:
        case K_I16:
        case K_I32:
        case K_I64: {
            size_t w = kind_width(kd, im->wide);
            if (w == 1) {
                int8_t y;
                memcpy(&y, p, 1);
                v->v.i = y;
            } else if (w == 2) {
                int16_t y;
                memcpy(&y, p, 2);
                v->v.i = y;
            } else if (w == 4) {
                int32_t y;
                memcpy(&y, p, 4);
                v->v.i = y;
            } else {
                memcpy(&v->v.i, p, 8);
            }
            p += w;
            break;
        }
        case K_F32:
            memcpy(&v->v.f, p, 4);
            p += 4;
            break;
        case K_F64:
            memcpy(&v->v.d, p, 8);
            p += 8;
            break;
        case K_D64:
        case K_D128:
            if (kind_width(kd, im->wide) == 8) {
                int64_t y;
                memcpy(&y, p, 8);
                v->v.dec = y;
                p += 8;
            } else {
                memcpy(&v->v.dec, p, 16);
                p += 16;
            }
            break;
        default: { /* K_STR */
            uint32_t len;
            memcpy(&len, p, 4);
            v->v.s.ptr = (const char *)p + 4;
            v->v.s.len = len;
            p += 4 + (size_t)len;
            break;
        }
        }
    }
    return out;
}

static uint64_t be64_at(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v = v << 8 | (i < n ? p[i] : 0);
    return v;
}

int mcdc_silver_changes_prepare(const mcdc_silver_changes *cs, const mcdc_value *r,
                                mcdc_silver_prepared *p, mcdc_buf *keys)
{
    p->take = false;
    p->key_off = keys->len;
    p->key_len = 0;
    const mcdc_value *vop = &r[cs->i_op];
    if (vop->is_null || vop->v.i < 0 || vop->v.i > 4)
        return mcdc_error_set(MCDC_ECORRUPT, "bronze row with _operation %s%lld (expected 0 to 4)",
                              vop->is_null ? "NULL" : "",
                              vop->is_null ? 0LL : (long long)vop->v.i);
    int op = (int)vop->v.i;
    int rc = check_instance(cs, r);
    if (rc < 0)
        return rc;
    mcdc_silver_rank *k = &p->rank;
    memset(k, 0, sizeof *k);
    if ((rc = parse_lsn_value(&k->lsn, &r[cs->i_lsn], "_start_lsn")) < 0)
        return rc;
    if (op == 0 && cs->opts.n_range_stamps && cs->i_chunk >= 0 && !r[cs->i_chunk].is_null &&
        (cs->i_snap < 0 || r[cs->i_snap].is_null)) {
        /* a partial backfill's row (W3): taken when its stamp is one asked for */
        bool want = false;
        for (size_t i = 0; i < cs->opts.n_range_stamps && !want; i++)
            want = lsn_cmp(&k->lsn, &cs->opts.range_stamps[i]) == 0;
        if (!want)
            return 0;
    } else if (op == 0) {
        if (!cs->opts.has_snapshot)
            return 0;
        mcdc_lsn snap = k->lsn;
        if (cs->i_snap >= 0 && !r[cs->i_snap].is_null &&
            (rc = parse_lsn_value(&snap, &r[cs->i_snap], "_snapshot")) < 0)
            return rc;
        if (lsn_cmp(&snap, &cs->opts.snapshot) != 0)
            return 0;
    } else if (cs->opts.has_after && lsn_cmp(&k->lsn, &cs->opts.after) <= 0) {
        return 0;
    }
    k->op = (uint8_t)op;
    if (cs->i_seq >= 0 && !r[cs->i_seq].is_null) {
        if ((rc = parse_lsn_value(&k->seqval, &r[cs->i_seq], "_seqval")) < 0)
            return rc;
        k->has_seqval = true;
    }
    if (cs->i_cmd >= 0 && !r[cs->i_cmd].is_null) {
        k->has_command_id = true;
        k->command_id = (int32_t)r[cs->i_cmd].v.i;
    }
    p->key_off = keys->len;
    for (size_t i = 0; i < cs->n_keys; i++)
        if ((rc = mcdc_silver_key_encode(keys, &cs->bronze->cols[cs->key_b[i]],
                                         &r[cs->key_b[i]])) < 0)
            return rc;
    p->key_len = keys->len - p->key_off;
    if (p->key_len > MCDC_SILVER_KEY_MAX)
        return mcdc_error_set(MCDC_EINVAL, "bronze row with a key of %zu bytes encoded (at most "
                              "%zu)", p->key_len, MCDC_SILVER_KEY_MAX);
    const uint8_t *key = (const uint8_t *)keys->ptr + p->key_off;
    p->hash = hash_bytes(key, p->key_len);
    p->p0 = be64_at(key, p->key_len);
    p->p1 = p->key_len > 8 ? be64_at(key + 8, p->key_len - 8) : 0;
    p->size = image_size(cs, r, p->key_len, &p->wide);
    p->take = true;
    return 0;
}

/* The entry of the key with hash @p h and bytes @p key (prefixes @p p0, @p p1), or NULL;
 * *slot_out gets its slot or the empty slot where it would go. */
static sort_ent *probe(const mcdc_silver_changes *cs, uint64_t h, const uint8_t *key,
                       size_t key_len, uint64_t p0, uint64_t p1, size_t *slot_out)
{
    size_t mask = cs->n_slots - 1, j = (size_t)h & mask;
    uint32_t tag = SLOT_TAG(h);
    for (;; j = (j + 1) & mask) {
        const slot *s = &cs->slots[j];
        if (!s->ent)
            break;
        if (s->tag != tag)
            continue;
        sort_ent *e = &cs->ents[s->ent - 1];
        if (e->key_len == key_len && e->p0 == p0 && e->p1 == p1 &&
            (key_len <= 16 || memcmp(IMAGE_KEY(e->im) + 16, key + 16, key_len - 16) == 0)) {
            *slot_out = j;
            return e;
        }
    }
    *slot_out = j;
    return NULL;
}

int mcdc_silver_changes_add_prepared(mcdc_silver_changes *cs, const mcdc_value *r,
                                     const mcdc_silver_prepared *p, const uint8_t *key)
{
    cs->stats.rows_seen++;
    if (!p->take)
        return 0;
    const mcdc_silver_rank *k = &p->rank;
    cs->stats.rows_taken++;
    if (k->op == 0)
        cs->stats.snapshot_rows++;
    else if (!cs->stats.has_max_change || lsn_cmp(&k->lsn, &cs->stats.max_change_lsn) > 0) {
        cs->stats.has_max_change = true;
        cs->stats.max_change_lsn = k->lsn;
    }
    size_t j;
    sort_ent *e = probe(cs, p->hash, key, p->key_len, p->p0, p->p1, &j);
    if (e && mcdc_silver_rank_cmp(k, &e->im->r) <= 0)
        return 0; /* an equal or higher-ranked image is already there (S1) */
    size_t size = p->size;
    if (size > IMAGE_MAX)
        return mcdc_error_set(MCDC_ENOMEM, "a bronze row of %zu bytes is too large for the "
                              "change set (at most %zu)", size, IMAGE_MAX);
    /* a replaced image stays counted (as garbage) until a compaction drops it */
    if (cs->stats.bytes + size > cs->opts.max_bytes && cs->garbage) {
        if (compact(cs) < 0)
            return mcdc_error_set(MCDC_ENOMEM, "change set: out of memory");
    }
    if (!e && (cs->n_images >= UINT32_MAX - 1 ||
               (cs->n_images == cs->cap_ents && resize_ents(cs, cs->cap_ents * 2) < 0)))
        return over_cap(cs); /* no room for one more key */
    if (cs->stats.bytes + size > cs->opts.max_bytes)
        return over_cap(cs);
    image *im = image_new(cs, r, k, key, p->key_len, size, p->wide);
    if (!im)
        return mcdc_error_set(MCDC_ENOMEM, "change set: out of memory");
    cs->stats.bytes += im->alloc;
    cs->live += im->alloc;
    if (cs->sorted)
        drop_sorted(cs);
    if (e) {
        image *old = e->im;
        cs->live -= old->alloc;
        cs->garbage += old->alloc;
        e->im = im;
        e->op = k->op;
        if (cs->garbage > cs->live && cs->garbage >= CHUNK_BYTES && compact(cs) < 0)
            return mcdc_error_set(MCDC_ENOMEM, "change set: out of memory");
        return 0;
    }
    e = &cs->ents[cs->n_images++];
    e->p0 = p->p0;
    e->p1 = p->p1;
    e->im = im;
    e->key_len = (uint32_t)p->key_len;
    e->op = k->op;
    cs->slots[j].tag = SLOT_TAG(p->hash);
    cs->slots[j].ent = (uint32_t)cs->n_images;
    cs->stats.n_keys = cs->n_images;
    if (cs->n_images * 2 > cs->n_slots && grow_slots(cs) < 0)
        return over_cap(cs); /* the image is in; only the index could not grow */
    return 0;
}

int mcdc_silver_changes_add(mcdc_silver_changes *cs, const mcdc_value *r)
{
    mcdc_silver_prepared p;
    mcdc_buf_clear(&cs->keybuf);
    int rc = mcdc_silver_changes_prepare(cs, r, &p, &cs->keybuf);
    if (rc < 0) {
        cs->stats.rows_seen++;
        return rc;
    }
    return mcdc_silver_changes_add_prepared(cs, r, &p, p.take ? (const uint8_t *)cs->keybuf.ptr +
                                                                   p.key_off : NULL);
}

void mcdc_silver_changes_get_stats(const mcdc_silver_changes *cs, mcdc_silver_changes_stats *out)
{
    *out = cs->stats;
}

size_t mcdc_silver_changes_count(const mcdc_silver_changes *cs)
{
    return cs->n_images;
}

const mcdc_schema *mcdc_silver_changes_schema(const mcdc_silver_changes *cs)
{
    return cs->silver;
}

const int *mcdc_silver_changes_key_index(const mcdc_silver_changes *cs, size_t *n_out)
{
    *n_out = cs->n_keys;
    return cs->key_s;
}

int mcdc_silver_changes_row_key(const mcdc_silver_changes *cs, mcdc_buf *out,
                                const mcdc_value *silver_row)
{
    mcdc_buf_clear(out);
    for (size_t k = 0; k < cs->n_keys; k++) {
        int rc = mcdc_silver_key_encode(out, &cs->silver->cols[cs->key_s[k]],
                                        &silver_row[cs->key_s[k]]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static image *lookup(const mcdc_silver_changes *cs, const uint8_t *key, size_t key_len)
{
    size_t j;
    uint64_t p0 = be64_at(key, key_len), p1 = key_len > 8 ? be64_at(key + 8, key_len - 8) : 0;
    sort_ent *e = probe(cs, hash_bytes(key, key_len), key, key_len, p0, p1, &j);
    return e ? e->im : NULL;
}

/* Rule S3 for a silver row whose key is @p im's (NULL: no image). */
static int decide(const mcdc_silver_changes *cs, image *im, const mcdc_value *silver_row,
                  mcdc_silver_fate *fate, const mcdc_value **image_out, mcdc_value *scratch)
{
    *fate = MCDC_SILVER_KEEP;
    *image_out = NULL;
    if (!im)
        return 0;
    im->matched = true;
    if (im->placed) {
        *fate = MCDC_SILVER_DROP; /* a second copy of a key already replaced */
        return 0;
    }
    const mcdc_value *v = &silver_row[cs->s_lsn];
    bool newer = true;
    if (!v->is_null) {
        mcdc_lsn have;
        if (mcdc_lsn_parse_n(&have, v->v.s.ptr, v->v.s.len) < 0) {
            if (v->v.s.len == 0 || v->v.s.len > LSN_TEXT_MAX)
                return mcdc_error_set(MCDC_ECORRUPT, "silver row with a malformed _start_lsn of "
                                      "%zu bytes", v->v.s.len);
            return mcdc_error_set(MCDC_ECORRUPT, "silver row with a malformed _start_lsn '%.*s'",
                                  (int)v->v.s.len, v->v.s.ptr);
        }
        newer = lsn_cmp(&im->r.lsn, &have) > 0;
    }
    if (!newer)
        return 0;
    if (im->r.op == 1 || im->r.op == 3) {
        *fate = MCDC_SILVER_DROP;
        return 0;
    }
    im->placed = true;
    *fate = MCDC_SILVER_REPLACE;
    *image_out = image_row(cs, im, scratch);
    return 0;
}

int mcdc_silver_changes_match(mcdc_silver_changes *cs, const mcdc_value *silver_row,
                              mcdc_silver_fate *fate, const mcdc_value **image_out,
                              mcdc_value *scratch)
{
    *fate = MCDC_SILVER_KEEP;
    *image_out = NULL;
    int rc = mcdc_silver_changes_row_key(cs, &cs->keybuf, silver_row);
    if (rc < 0)
        return rc;
    return decide(cs, lookup(cs, (const uint8_t *)cs->keybuf.ptr, cs->keybuf.len), silver_row,
                  fate, image_out, scratch);
}

int mcdc_silver_changes_match_key(mcdc_silver_changes *cs, const uint8_t *key, size_t key_len,
                                  const mcdc_value *silver_row, mcdc_silver_fate *fate,
                                  const mcdc_value **image_out, mcdc_value *scratch)
{
    return decide(cs, lookup(cs, key, key_len), silver_row, fate, image_out, scratch);
}

int mcdc_silver_changes_match_at(mcdc_silver_changes *cs, size_t i, const mcdc_value *silver_row,
                                 mcdc_silver_fate *fate, const mcdc_value **image_out,
                                 mcdc_value *scratch)
{
    return decide(cs, cs->sorted[i].im, silver_row, fate, image_out, scratch);
}

unsigned mcdc_silver_changes_marks(const mcdc_silver_changes *cs, size_t i)
{
    const image *im = cs->sorted[i].im;
    return (im->matched ? 1u : 0u) | (im->placed ? 2u : 0u);
}

void mcdc_silver_changes_set_marks(mcdc_silver_changes *cs, size_t i, unsigned marks)
{
    image *im = cs->sorted[i].im;
    im->matched = (marks & 1u) != 0;
    im->placed = (marks & 2u) != 0;
}

static int key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c)
        return c;
    return na < nb ? -1 : na > nb;
}

/* The key of entry @p e: its image's copy, or its prefix written to @p buf. */
static const uint8_t *ent_key(const sort_ent *e, uint8_t buf[16])
{
    if (e->key_len > 16)
        return IMAGE_KEY(e->im);
    put_be64(buf, e->p0);
    put_be64(buf + 8, e->p1);
    return buf;
}

static int sort_ent_cmp(const void *pa, const void *pb)
{
    const sort_ent *a = pa, *b = pb;
    if (a->p0 != b->p0)
        return a->p0 < b->p0 ? -1 : 1;
    if (a->p1 != b->p1)
        return a->p1 < b->p1 ? -1 : 1;
    uint8_t ba[16], bb[16];
    return key_cmp(ent_key(a, ba), a->key_len, ent_key(b, bb), b->key_len);
}

/* Sorts the entries by (p0, p1) with a least-significant-digit radix sort, one pass per
 * byte position where the entries differ (keys of one type share most high bytes, so a
 * few passes remain); the passes are stable, then each run of entries with the same 16
 * leading bytes is sorted by the whole key. The keys are distinct, so the order is total
 * and the result is the same as a comparison sort's. Falls back to qsort without memory
 * for the second buffer. */
static void sort_ents(sort_ent *e, size_t n)
{
    if (n < 2)
        return;
    sort_ent *tmp = big_alloc(n * sizeof *tmp, false);
    size_t (*cnt)[256] = calloc(16, sizeof *cnt);
    if (!tmp || !cnt) {
        big_free(tmp, n * sizeof *tmp);
        free(cnt);
        qsort(e, n, sizeof *e, sort_ent_cmp);
        return;
    }
    /* digit d: byte d of p1 for d < 8, byte d - 8 of p0 after, least significant first */
    for (size_t i = 0; i < n; i++) {
        uint64_t a = e[i].p1, b = e[i].p0;
        for (int d = 0; d < 8; d++) {
            cnt[d][(a >> (8 * d)) & 0xff]++;
            cnt[8 + d][(b >> (8 * d)) & 0xff]++;
        }
    }
    sort_ent *src = e, *dst = tmp;
    for (int d = 0; d < 16; d++) {
        size_t *c = cnt[d];
        uint64_t first = ((d < 8 ? src[0].p1 : src[0].p0) >> (8 * (d & 7))) & 0xff;
        if (c[first] == n)
            continue; /* every entry has the same byte here */
        size_t at = 0;
        for (int v = 0; v < 256; v++) {
            size_t k = c[v];
            c[v] = at;
            at += k;
        }
        int shift = 8 * (d & 7);
        if (d < 8)
            for (size_t i = 0; i < n; i++)
                dst[c[(src[i].p1 >> shift) & 0xff]++] = src[i];
        else
            for (size_t i = 0; i < n; i++)
                dst[c[(src[i].p0 >> shift) & 0xff]++] = src[i];
        sort_ent *t = src;
        src = dst;
        dst = t;
    }
    if (src != e)
        memcpy(e, src, n * sizeof *e);
    big_free(tmp, n * sizeof *tmp);
    free(cnt);
    /* keys that agree in their first 16 bytes (longer keys, or zero padding) */
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && e[j].p0 == e[i].p0 && e[j].p1 == e[i].p1)
            j++;
        if (j - i > 1)
            qsort(e + i, j - i, sizeof *e, sort_ent_cmp);
        i = j;
    }
}

int mcdc_silver_changes_sort(mcdc_silver_changes *cs)
{
    drop_sorted(cs);
    /* no more adds are expected: a spare chunk would only hold memory */
    pthread_mutex_lock(&cs->spare_mu);
    big_free(cs->spare, CHUNK_BYTES_MAX);
    cs->spare = NULL;
    cs->spare_wanted = false;
    pthread_mutex_unlock(&cs->spare_mu);
    size_t n = cs->n_images;
    size_t e_bytes = (n ? n : 1) * sizeof(sort_ent);
    sort_ent *e = big_alloc(e_bytes, false);
    if (!e)
        return mcdc_error_set(MCDC_ENOMEM, "change set: out of memory sorting %zu keys", n);
    if (n)
        memcpy(e, cs->ents, n * sizeof *e);
    sort_ents(e, n);
    size_t total = 0;
    bool same_len = true;
    for (size_t i = 0; i < n; i++) {
        total += e[i].key_len;
        same_len = same_len && e[i].key_len == e[0].key_len;
    }
    cs->skeys_bytes = total ? total : 1;
    cs->skey_off_bytes = same_len ? 0 : (n + 1) * sizeof *cs->skey_off;
    cs->skey_len = n ? e[0].key_len : 0;
    cs->skeys = big_alloc(cs->skeys_bytes, false);
    cs->skey_off = same_len ? NULL : big_alloc(cs->skey_off_bytes, false);
    if (!cs->skeys || (!same_len && !cs->skey_off)) {
        big_free(e, e_bytes);
        drop_sorted(cs);
        return mcdc_error_set(MCDC_ENOMEM, "change set: out of memory sorting %zu keys", n);
    }
    /* a key of at most 16 bytes is its entry's prefix: no visit to the image */
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = e[i].key_len;
        if (cs->skey_off)
            cs->skey_off[i] = at;
        if (len <= 16) {
            uint8_t b[16];
            put_be64(b, e[i].p0);
            put_be64(b + 8, e[i].p1);
            memcpy(cs->skeys + at, b, len);
        } else {
            memcpy(cs->skeys + at, IMAGE_KEY(e[i].im), len);
        }
        at += len;
    }
    if (cs->skey_off)
        cs->skey_off[n] = at;
    cs->sorted = e;
    cs->sorted_bytes = e_bytes;
    cs->n_sorted = n;
    return 0;
}

const uint8_t *mcdc_silver_changes_key_at(const mcdc_silver_changes *cs, size_t i, size_t *len)
{
    if (!cs->skey_off) {
        *len = cs->skey_len;
        return cs->skeys + i * cs->skey_len;
    }
    *len = cs->skey_off[i + 1] - cs->skey_off[i];
    return cs->skeys + cs->skey_off[i];
}

bool mcdc_silver_changes_is_delete_at(const mcdc_silver_changes *cs, size_t i)
{
    return cs->sorted[i].op == 1 || cs->sorted[i].op == 3;
}

void mcdc_silver_changes_at(const mcdc_silver_changes *cs, size_t i, mcdc_silver_image *out)
{
    const image *im = cs->sorted[i].im;
    out->key = mcdc_silver_changes_key_at(cs, i, &out->key_len);
    out->start_lsn = im->r.lsn;
    out->operation = im->r.op;
    out->is_delete = im->r.op == 1 || im->r.op == 3;
    out->matched = im->matched;
}

const mcdc_value *mcdc_silver_changes_row_at(const mcdc_silver_changes *cs, size_t i,
                                             mcdc_value *scratch)
{
    return image_row(cs, cs->sorted[i].im, scratch);
}

size_t mcdc_silver_changes_lower_bound(const mcdc_silver_changes *cs, const uint8_t *key,
                                       size_t key_len)
{
    size_t lo = 0, hi = cs->n_sorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, len;
        const uint8_t *k = mcdc_silver_changes_key_at(cs, mid, &len);
        if (key_cmp(k, len, key, key_len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t mcdc_silver_changes_find_sorted(const mcdc_silver_changes *cs, const uint8_t *key,
                                        size_t key_len)
{
    size_t i = mcdc_silver_changes_lower_bound(cs, key, key_len), len;
    if (i < cs->n_sorted) {
        const uint8_t *k = mcdc_silver_changes_key_at(cs, i, &len);
        if (key_cmp(k, len, key, key_len) == 0)
            return (int64_t)i;
    }
    return -1;
}

int mcdc_silver_changes_snapshot_row(const mcdc_silver_changes *cs, const mcdc_value *r,
                                     const mcdc_lsn *snapshot, mcdc_value *out,
                                     char lsn_text[MCDC_LSN_STRLEN])
{
    const mcdc_value *vop = &r[cs->i_op];
    if (vop->is_null || vop->v.i != 0)
        return 0;
    int rc = check_instance(cs, r);
    if (rc < 0)
        return rc;
    if (cs->i_chunk >= 0 && !r[cs->i_chunk].is_null && (cs->i_snap < 0 || r[cs->i_snap].is_null))
        return 0; /* a partial backfill's row: outside every snapshot (ADR 0022) */
    mcdc_lsn lsn, snap;
    if ((rc = parse_lsn_value(&lsn, &r[cs->i_lsn], "_start_lsn")) < 0)
        return rc;
    snap = lsn;
    if (cs->i_snap >= 0 && !r[cs->i_snap].is_null &&
        (rc = parse_lsn_value(&snap, &r[cs->i_snap], "_snapshot")) < 0)
        return rc;
    if (mcdc_lsn_cmp(&snap, snapshot) != 0)
        return 0;
    for (size_t i = 0; i < cs->silver->n_cols; i++) {
        int b = cs->b_of_s[i];
        if (b >= 0) {
            out[i] = r[b];
        } else {
            memset(&out[i], 0, sizeof out[i]);
            out[i].is_null = true;
        }
    }
    mcdc_lsn_format(lsn_text, &lsn);
    out[cs->s_lsn].is_null = false;
    out[cs->s_lsn].v.s.ptr = lsn_text;
    out[cs->s_lsn].v.s.len = MCDC_LSN_STRLEN - 1;
    out[cs->s_ts] = r[cs->i_ts];
    return 1;
}
