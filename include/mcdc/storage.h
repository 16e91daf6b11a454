/*
 * mcdc/storage.h: the storage seam. Every file or object operation of the layers above
 * core (the Delta log and data files, the Parquet writer and reader, the stream's
 * checkpoint, the control table, silver, vacuum and optimize) goes through these calls.
 *
 * A location is a string: a local path ("lake/bronze/orders/_delta_log/00….json"), or an
 * object URL ("s3://bucket/prefix/…") once an object store backend is built in. Locations
 * compose like paths ("<table>/_delta_log/<name>"), so callers join them with '/'.
 *
 * Guarantees, on every backend:
 * (S1) create-if-absent (mcdc_storage_create, a writer opened with MCDC_STORAGE_NOREPLACE)
 *      never replaces: of two racing creators of one name exactly one succeeds, the other
 *      gets MCDC_EEXISTS and nothing it wrote is visible.
 * (S2) An object appears whole or not at all; after success it survives a crash (locally:
 *      temp file in the same directory, write, fsync, renameat2(RENAME_NOREPLACE) or
 *      link(2) for no-replace, rename(2) for replace, fsync of the directory).
 * (S3) A listing is sorted by name (bytewise) and complete.
 * (S4) A change token tells one object from another stored at the same name later (the
 *      device, inode, size and times locally).
 * Temp names start with "." and hold ".tmp", so listings of numbered names skip them.
 * All calls are thread-safe; handles are used by one thread at a time.
 */
#ifndef MCDC_STORAGE_H
#define MCDC_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What one object is: its size, modification time and change token. */
typedef struct mcdc_storage_info {
    uint64_t size;       /* bytes */
    int64_t  mtime_ms;   /* modification time, ms since the epoch */
    char     token[96];  /* change token (S4), NUL-terminated; "" when unknown */
} mcdc_storage_info;

/** Fill @p out for the object at @p loc.
 *  @return 0; MCDC_ENOTFOUND when absent; MCDC_EIO. */
int mcdc_storage_stat(mcdc_storage_info *out, const char *loc);

/** True when an object (or, locally, a directory) exists at @p loc. */
bool mcdc_storage_exists(const char *loc);

/** Read the whole object @p loc, appending it to @p out (whose max bounds the size).
 *  @param[out] info  when not NULL, what was read (the same object as the bytes).
 *  @return 0; MCDC_ENOTFOUND when absent; MCDC_ENOMEM over the buffer's max (the
 *  message names the object and the cap); MCDC_EIO. */
int mcdc_storage_read(mcdc_buf *out, mcdc_storage_info *info, const char *loc);

/** Create @p loc with @p len bytes only if absent (S1, S2).
 *  @return 0; MCDC_EEXISTS when the name is taken (nothing changed); MCDC_EIO. */
int mcdc_storage_create(const char *loc, const void *data, size_t len);

/** Replace (or create) @p loc with @p len bytes atomically and durably (S2).
 *  @return 0; MCDC_EIO. */
int mcdc_storage_put(const char *loc, const void *data, size_t len);

/** Compare and swap: write @p loc with @p len bytes only if it still is the object whose
 *  change token is @p token (as mcdc_storage_stat(), mcdc_storage_read() or an earlier
 *  swap gave it), or, with @p token NULL, only if it is absent. Of two racing swaps from
 *  one token exactly one succeeds (on S3 a PUT with If-Match on the ETag, or If-None-Match:
 *  *; locally an flock on a hidden lock file beside it around the check and the atomic
 *  replace, which keeps out other swaps, not plain puts). Meant for small state objects
 *  read and rewritten whole, such as the stream checkpoint's lease.
 *  @param[out] info  when not NULL, the object as written (its token for the next swap).
 *  @return 0; MCDC_ECONFLICT when the object is another than @p token names, or (token
 *  NULL) already exists: nothing changed; MCDC_ENOTFOUND when @p token is given and the
 *  object is gone; MCDC_EIO. */
int mcdc_storage_swap(mcdc_storage_info *info, const char *loc, const void *data, size_t len,
                      const char *token);

/** Remove @p loc. @return 0 (also when already absent); MCDC_EIO. */
int mcdc_storage_delete(const char *loc);

/** Make sure objects can be created under the directory @p loc (locally mkdir -p, each
 *  new directory fsynced into its parent; nothing on an object store).
 *  @return 0; MCDC_EEXISTS when a part is not a directory; MCDC_EIO. */
int mcdc_storage_mkdirs(const char *loc);

/* ---- ranged reads --------------------------------------------------------------------- */

/** An object open for reading at offsets. */
typedef struct mcdc_storage_file mcdc_storage_file;

/** Open @p loc for ranged reads.
 *  @param[out] out   the handle; close with mcdc_storage_file_close().
 *  @param[out] info  when not NULL, the object's size and token as opened.
 *  @return 0; MCDC_ENOTFOUND; MCDC_EIO. */
int mcdc_storage_file_open(mcdc_storage_file **out, mcdc_storage_info *info, const char *loc);

/** Read exactly @p len bytes at @p off into @p dst.
 *  @return 0; MCDC_ECORRUPT when the object ends first (the message names the offset);
 *  MCDC_EIO. */
int mcdc_storage_file_read(mcdc_storage_file *f, void *dst, size_t len, uint64_t off);

/** Close and free @p f; accepts NULL. */
void mcdc_storage_file_close(mcdc_storage_file *f);

/** A handle over the already open local file @p fd (borrowed: closing the handle leaves
 *  @p fd open), for readers handed a descriptor; @p name names it in messages.
 *  @param[out] info  when not NULL, its size and token (fstat).
 *  @return 0; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_storage_file_from_fd(mcdc_storage_file **out, mcdc_storage_info *info, int fd,
                              const char *name);

/* ---- streamed writes ------------------------------------------------------------------ */

/** Flags of mcdc_storage_writer_open(). */
enum {
    MCDC_STORAGE_NOREPLACE = 1 /* commit fails with MCDC_EEXISTS when the name is taken */
};

/** An object being written in pieces; visible only after mcdc_storage_writer_commit(). */
typedef struct mcdc_storage_writer mcdc_storage_writer;

/** Start writing the object @p loc (locally a hidden temp file next to it).
 *  @param[out] out  the writer; free with mcdc_storage_writer_free().
 *  @return 0; MCDC_EIO; MCDC_EINVAL when the name would not fit. */
int mcdc_storage_writer_open(mcdc_storage_writer **out, const char *loc, unsigned flags);

/** Append @p len bytes. @return 0; MCDC_EIO. */
int mcdc_storage_writer_write(mcdc_storage_writer *w, const void *data, size_t len);

/** Make the object visible under its name, durably (S2); with MCDC_STORAGE_NOREPLACE
 *  only if the name is free (S1).
 *  @return 0; MCDC_EEXISTS (nothing visible changed); MCDC_EIO. */
int mcdc_storage_writer_commit(mcdc_storage_writer *w);

/** Free @p w; a writer not committed leaves nothing behind. Accepts NULL. */
void mcdc_storage_writer_free(mcdc_storage_writer *w);

/* ---- listings ------------------------------------------------------------------------- */

/** One entry of a listing. */
typedef struct mcdc_storage_entry {
    char    *name;       /* relative to the listed directory; owned */
    uint64_t size;       /* with MCDC_STORAGE_LIST_INFO, else 0 */
    int64_t  mtime_ms;   /* with MCDC_STORAGE_LIST_INFO, else 0 */
} mcdc_storage_entry;

/** A listing, sorted by name (S3). */
typedef struct mcdc_storage_listing {
    mcdc_storage_entry *entries;
    size_t              n;
} mcdc_storage_listing;

/** Flags of mcdc_storage_list(). */
enum {
    MCDC_STORAGE_LIST_INFO = 1,     /* fill size and mtime_ms */
    MCDC_STORAGE_LIST_RECURSIVE = 2 /* objects below subdirectories too, named "d/e/f";
                                       directories themselves are not entries */
};

/** List the objects directly under the directory @p loc (subdirectories are skipped
 *  unless MCDC_STORAGE_LIST_RECURSIVE). Hidden names (temp files) are listed too: callers
 *  filter by name.
 *  @param[out] out  the listing; dispose with mcdc_storage_listing_dispose().
 *  @return 0; MCDC_ENOTFOUND when @p loc is not a directory (locally) or holds no
 *  object (on an object store); MCDC_EIO; MCDC_ENOMEM. */
int mcdc_storage_list(mcdc_storage_listing *out, const char *loc, unsigned flags);

/** The objects directly under @p loc whose names are decimal numbers (no sign, no leading
 *  zeros except "0" itself, at most 19 digits), ascending; other names are skipped (as
 *  mcdc_fs_list_numbered does for a local directory).
 *  @param[out] out    malloc'd array, caller frees with free(); NULL when empty.
 *  @param[out] n_out  its length.
 *  @return 0; MCDC_ENOTFOUND as mcdc_storage_list(); MCDC_EIO; MCDC_ENOMEM. */
int mcdc_storage_list_numbered(uint64_t **out, size_t *n_out, const char *loc);

/** Free the entries of @p l and zero it; accepts an already disposed listing. */
void mcdc_storage_listing_dispose(mcdc_storage_listing *l);

/* ---- object stores -------------------------------------------------------------------- */

/** True when @p loc names an S3 location ("s3://bucket/key"). */
bool mcdc_storage_is_s3(const char *loc);

/** Check, before the first write, that @p loc can be used: locally nothing; on S3 the
 *  location parses, the configuration and credentials are found (AWS conventions: see
 *  docs/guides/object-storage.md), and the bucket honours If-None-Match: * (a probe object
 *  created twice, the second time refused; done once per bucket and process).
 *  @return 0; MCDC_EINVAL for a bad location, missing or unsupported credentials, or a
 *  store that ignores the condition (the hint names --allow-unsafe-single-writer); MCDC_EIO
 *  when the store cannot be reached or refuses the request. */
int mcdc_storage_check(const char *loc);

/** Requests sent to S3 by this process so far (every attempt counts), by kind. */
typedef struct mcdc_storage_s3_counts {
    uint64_t get, head, put, post, del, list;
} mcdc_storage_s3_counts;

/** The counts of requests sent to S3 so far (for benchmarks and cost estimates). */
void mcdc_storage_s3_counts_get(mcdc_storage_s3_counts *out);

/** Let a store that ignores If-None-Match: * be used (by one writer only: two writers could
 *  then both commit one Delta version). Off by default. */
void mcdc_storage_allow_unsafe_single_writer(bool allow);

#ifdef __cplusplus
}
#endif
#endif
