/*
 * mcdc/fs.h: durable files: atomic replace, create-without-replace, whole-file reads,
 * mkdir -p, numbered directory listings, an exclusive process lock, fsync helpers.
 *
 * Every write that others rely on goes: temp file in the same directory, write, fsync,
 * rename (or link, to refuse replacing), fsync of the directory. Temp files are named
 * ".<name>.tmp.<pid>.<n>" so listings skip them and a crash leaves only hidden debris.
 *
 * Caveats:
 * - Atomicity holds on local POSIX file systems (ext4, xfs, btrfs, tmpfs); network file
 *   systems may not honour rename/link atomicity or flock.
 * - The lock is an flock(2) on an open file: it is released when the holder closes it or
 *   dies (even by SIGKILL). It is per open file, so a second mcdc_fs_lock_acquire of the
 *   same path in the same process also fails with MCDC_ELOCKED.
 * - All functions are thread-safe (no shared state beyond a temp-name counter).
 */
#ifndef MCDC_FS_H
#define MCDC_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Size of a buffer large enough for any path these functions build (with NUL). */
#define MCDC_PATH_MAX 4096

/** Replace (or create) @p path with @p len bytes atomically and durably: a reader sees
 *  the old file or the new one, never a mix; after return the new one survives a crash.
 *  @return 0; MCDC_EIO naming the path and the OS reason (the temp file is removed). */
int mcdc_fs_write_atomic(const char *path, const void *data, size_t len);

/** Create @p path with @p len bytes, durably, only if it does not exist yet: the file
 *  appears whole or not at all.
 *  @return 0; MCDC_EEXISTS when @p path is taken (nothing changed); MCDC_EIO. */
int mcdc_fs_create_noreplace(const char *path, const void *data, size_t len);

/** Publish an already written and fsynced file @p tmp_path as @p path without replacing
 *  (renameat2(RENAME_NOREPLACE); link(2) and unlink of the temp where the file system
 *  lacks it), then fsync the directory of @p path.
 *  @return 0; MCDC_EEXISTS when @p path is taken (the temp file is left in place for the
 *  caller to remove); MCDC_EIO. */
int mcdc_fs_publish_noreplace(const char *tmp_path, const char *path);

/** Publish @p tmp_path as @p path, replacing what is there (rename(2)), then fsync the
 *  directory. @return 0; MCDC_EIO. */
int mcdc_fs_publish_replace(const char *tmp_path, const char *path);

/** Open a new temp file next to @p path, for callers that write large files in pieces.
 *  @param[out] out_fd    the open file (O_WRONLY, O_CLOEXEC); the caller closes it.
 *  @param[out] tmp_path  its name (MCDC_PATH_MAX bytes), hidden from numbered listings.
 *  @return 0; MCDC_EIO; MCDC_EINVAL when the name would not fit. */
int mcdc_fs_temp_open(int *out_fd, char tmp_path[MCDC_PATH_MAX], const char *path);

/** Read the whole file @p path, appending it to @p out (whose cap bounds the size).
 *  @return 0; MCDC_ENOTFOUND when absent; MCDC_ENOMEM when larger than the buffer's
 *  cap (the message names the file and the cap); MCDC_EIO. */
int mcdc_fs_read_all(mcdc_buf *out, const char *path);

/** The same for the open file @p fd, read from its current offset to its end; @p path
 *  names it in messages. The caller closes @p fd. */
int mcdc_fs_read_fd(mcdc_buf *out, int fd, const char *path);

/** Create @p path and any missing parents (mode 0777 before umask), like mkdir -p.
 *  Each directory created is fsynced into its parent.
 *  @return 0 (also when it exists); MCDC_EEXISTS when a part is not a directory; MCDC_EIO. */
int mcdc_fs_mkdirs(const char *path);

/** True when @p path exists (any kind of file). */
bool mcdc_fs_exists(const char *path);

/** The absolute, canonical path of the existing @p path (symbolic links, "." and ".."
 *  resolved; realpath(3)) in @p out.
 *  @return 0; MCDC_ENOTFOUND when it does not exist; MCDC_EIO. */
int mcdc_fs_realpath(char out[MCDC_PATH_MAX], const char *path);

/** Remove the file @p path. @return 0 (also when already absent); MCDC_EIO. */
int mcdc_fs_remove(const char *path);

/** The entries of @p dir whose names are decimal numbers (no sign, no leading zeros
 *  except "0" itself, at most 19 digits), ascending. Other names (temp files, "lock",
 *  "metadata") are skipped.
 *  @param[out] out    malloc'd array, caller frees with free(); NULL when empty.
 *  @param[out] n_out  its length.
 *  @return 0; MCDC_ENOTFOUND when @p dir does not exist; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_fs_list_numbered(uint64_t **out, size_t *n_out, const char *dir);

/** fsync the open file @p fd; @p what names it in the error. @return 0; MCDC_EIO. */
int mcdc_fs_fsync_fd(int fd, const char *what);
/** fsync the file or directory at @p path. @return 0; MCDC_EIO. */
int mcdc_fs_fsync_path(const char *path);
/** fsync the directory that holds @p path ("." for a bare name). @return 0; MCDC_EIO. */
int mcdc_fs_fsync_parent(const char *path);

/* ---- local logs the user names (--progress, the demo's script): not tables ------------ */

/** Check, before the first write, that the file @p path can be created or appended to:
 *  its directory ("." for a bare name) exists and this process may write in it.
 *  @return 0; MCDC_EINVAL "cannot write in DIR: REASON" (the caller prefixes what the
 *  file is for, mcdc_error_prefix()). */
int mcdc_fs_check_writable(const char *path);

/** Open the local file @p path for appending (created when missing, mode 0666 before
 *  umask; O_APPEND, O_CLOEXEC).
 *  @param[out] out_fd  the descriptor; close with mcdc_fs_close().
 *  @return 0; MCDC_EIO naming the file and the OS reason. */
int mcdc_fs_append_open(int *out_fd, const char *path);

/** Append @p len bytes to @p fd in one write(2), so lines of writers appending to one file
 *  never interleave; @p path names it in messages. Not fsynced (a log, not state).
 *  @return 0; MCDC_EIO (a short write included). */
int mcdc_fs_append(int fd, const void *data, size_t len, const char *path);

/** Close @p fd when it is >= 0. */
void mcdc_fs_close(int fd);

/** An exclusive lock held by this process. */
typedef struct mcdc_fs_lock mcdc_fs_lock;

/** Take the exclusive lock file @p path without waiting, creating it if needed, and
 *  write this process's pid into it.
 *  @param[out] out  the held lock; release with mcdc_fs_lock_release().
 *  @return 0; MCDC_ELOCKED "<path>: already locked by pid N" when another holder has it
 *          (hint: stop that process or wait); MCDC_EIO. */
int mcdc_fs_lock_acquire(mcdc_fs_lock **out, const char *path);
/** Release and free a lock; accepts NULL. The file stays (removing it would race). */
void mcdc_fs_lock_release(mcdc_fs_lock *lock);

#ifdef __cplusplus
}
#endif
#endif
