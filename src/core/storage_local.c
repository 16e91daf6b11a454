/*
 * core/storage_local.c: the local file system backend of the storage seam, over core's
 * durable file helpers (mcdc/fs.h): a create is a fsynced temp file published with
 * renameat2(RENAME_NOREPLACE) or link(2), a put the same with rename(2), each followed by
 * an fsync of the directory; a streamed writer is a hidden temp file that only its commit
 * makes visible. The change token is the device, inode, size and modification and change
 * times of the file (S4).
 *
 * A streamed writer asks the kernel to start writing each 8 MiB written back to disk
 * (sync_file_range, Linux; advisory, errors ignored): a large data file is then mostly on
 * disk when its commit's fsync comes, which alone decides durability, so the fsync waits
 * for the last few MiB instead of the whole file (a 67 MB bronze file: 2-13 ms against
 * 33-128 ms on the shared test machine).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/storage_int.h"
#include "mcdc/fs.h"

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void info_of(mcdc_storage_info *out, const struct stat *st)
{
    out->size = (uint64_t)st->st_size;
    out->mtime_ms = ns_of(st->st_mtim) / 1000000;
    snprintf(out->token, sizeof out->token, "%" PRIx64 ":%" PRIx64 ":%" PRId64 ":%" PRId64 ":%" PRId64,
             (uint64_t)st->st_dev, (uint64_t)st->st_ino, (int64_t)st->st_size, ns_of(st->st_mtim),
             ns_of(st->st_ctim));
}

static int open_error(const char *loc)
{
    if (errno == ENOENT || errno == ENOTDIR)
        return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such file", loc);
    return mcdc_error_set(MCDC_EIO, "open %s: %s", loc, strerror(errno));
}

static int local_stat(mcdc_storage_info *out, const char *loc)
{
    struct stat st;
    if (stat(loc, &st) != 0)
        return open_error(loc);
    info_of(out, &st);
    return 0;
}

static int local_read(mcdc_buf *out, mcdc_storage_info *info, const char *loc)
{
    if (!info)
        return mcdc_fs_read_all(out, loc);
    int fd = open(loc, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return open_error(loc);
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : mcdc_error_set(MCDC_EIO, "fstat %s: %s", loc, strerror(errno));
    if (rc == 0) {
        info_of(info, &st);
        rc = mcdc_fs_read_fd(out, fd, loc);
    }
    close(fd);
    return rc;
}

/* ---- ranged reads -------------------------------------------------------------------- */

typedef struct local_file {
    mcdc_storage_file head;
    int               fd;
    bool              own_fd;
    char             *loc;
} local_file;

static int wrap_fd(mcdc_storage_file **out, mcdc_storage_info *info, int fd, bool own,
                   const char *loc)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return mcdc_error_set(MCDC_EIO, "fstat %s: %s", loc, strerror(errno));
    local_file *f = malloc(sizeof *f);
    char *copy = strdup(loc);
    if (!f || !copy) {
        free(f);
        free(copy);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    *f = (local_file){ { &mcdc_storage__local }, fd, own, copy };
    if (info)
        info_of(info, &st);
    *out = &f->head;
    return 0;
}

static int local_file_open(mcdc_storage_file **out, mcdc_storage_info *info, const char *loc)
{
    int fd = open(loc, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return open_error(loc);
    int rc = wrap_fd(out, info, fd, true, loc);
    if (rc < 0)
        close(fd);
    return rc;
}

int mcdc_storage_file_from_fd(mcdc_storage_file **out, mcdc_storage_info *info, int fd,
                              const char *name)
{
    MCDC_ASSERT_ARG(out && fd >= 0);
    *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    return wrap_fd(out, info, fd, false, name ? name : "(file)");
}

static int local_file_read(mcdc_storage_file *h, void *dst, size_t len, uint64_t off)
{
    local_file *f = (local_file *)h;
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(f->fd, (char *)dst + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return mcdc_error_set(MCDC_EIO, "%s: read at byte %" PRIu64 ": %s", f->loc, off + got,
                                  strerror(errno));
        if (n == 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: file ends at byte %" PRIu64, f->loc, off + got);
        got += (size_t)n;
    }
    return 0;
}

static void local_file_close(mcdc_storage_file *h)
{
    local_file *f = (local_file *)h;
    if (f->own_fd)
        close(f->fd);
    free(f->loc);
    free(f);
}

/* ---- streamed writes ----------------------------------------------------------------- */

typedef struct local_writer {
    mcdc_storage_writer head;
    int                 fd;        /* the temp file; -1 once closed */
    unsigned            flags;
    bool                published; /* the temp file is the object now */
    uint64_t            written;   /* bytes written */
    uint64_t            queued;    /* bytes handed to the kernel's write-back */
    int                 failed;    /* sticky error */
    char               *loc;
    char                tmp[MCDC_PATH_MAX];
} local_writer;

static int local_writer_open(mcdc_storage_writer **out, const char *loc, unsigned flags)
{
    local_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->loc = strdup(loc))) {
        free(w);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    w->head.be = &mcdc_storage__local;
    w->flags = flags;
    int rc = mcdc_fs_temp_open(&w->fd, w->tmp, loc);
    if (rc < 0) {
        free(w->loc);
        free(w);
        return rc;
    }
    *out = &w->head;
    return 0;
}

#define WRITEBACK_BYTES ((uint64_t)8 << 20)

static int local_writer_write(mcdc_storage_writer *h, const void *data, size_t len)
{
    local_writer *w = (local_writer *)h;
    if (w->failed || w->fd < 0)
        return w->failed ? w->failed : mcdc_error_set(MCDC_EINVAL, "%s: written after commit", w->loc);
    const char *p = data;
    while (len) {
        ssize_t k = write(w->fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return w->failed = mcdc_error_set(MCDC_EIO, "%s: write: %s", w->tmp, strerror(errno));
        p += k;
        len -= (size_t)k;
        w->written += (uint64_t)k;
    }
#ifdef SYNC_FILE_RANGE_WRITE
    if (w->written - w->queued >= WRITEBACK_BYTES) {
        (void)sync_file_range(w->fd, (off_t)w->queued, (off_t)(w->written - w->queued), SYNC_FILE_RANGE_WRITE);
        w->queued = w->written;
    }
#endif
    return 0;
}

static int local_writer_commit(mcdc_storage_writer *h)
{
    local_writer *w = (local_writer *)h;
    if (w->failed || w->fd < 0)
        return w->failed ? w->failed : mcdc_error_set(MCDC_EINVAL, "%s: committed twice", w->loc);
    int rc = mcdc_fs_fsync_fd(w->fd, w->tmp);
    if (close(w->fd) != 0 && rc == 0)
        rc = mcdc_error_set(MCDC_EIO, "%s: close: %s", w->tmp, strerror(errno));
    w->fd = -1;
    if (rc == 0)
        rc = (w->flags & MCDC_STORAGE_NOREPLACE) ? mcdc_fs_publish_noreplace(w->tmp, w->loc)
                                                 : mcdc_fs_publish_replace(w->tmp, w->loc);
    w->published = rc == 0;
    if (rc < 0)
        w->failed = rc;
    return rc;
}

static void local_writer_free(mcdc_storage_writer *h)
{
    local_writer *w = (local_writer *)h;
    if (w->fd >= 0)
        close(w->fd);
    if (!w->published)
        unlink(w->tmp);
    free(w->loc);
    free(w);
}

/* ---- listings ------------------------------------------------------------------------ */

static int list_dir(mcdc_storage_listing *out, const char *root, const char *rel, unsigned flags,
                    int depth)
{
    char dir[MCDC_PATH_MAX];
    int len = rel ? snprintf(dir, sizeof dir, "%s/%s", root, rel) : snprintf(dir, sizeof dir, "%s", root);
    if (len < 0 || (size_t)len >= sizeof dir)
        return mcdc_error_set(MCDC_EINVAL, "%.200s: path too long to list", root);
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR)
            return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such directory", dir);
        return mcdc_error_set(MCDC_EIO, "open directory %s: %s", dir, strerror(errno));
    }
    int rc = 0;
    struct dirent *de;
    errno = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0) {
            errno = 0;
            continue;
        }
        char name[MCDC_PATH_MAX], full[MCDC_PATH_MAX];
        int a = rel ? snprintf(name, sizeof name, "%s/%s", rel, n) : snprintf(name, sizeof name, "%s", n);
        int b = snprintf(full, sizeof full, "%s/%s", dir, n);
        if (a < 0 || b < 0 || (size_t)a >= sizeof name || (size_t)b >= sizeof full) {
            rc = mcdc_error_set(MCDC_EINVAL, "%.200s/%.200s: path too long to list", dir, n);
            break;
        }
        bool is_dir = de->d_type == DT_DIR, is_reg = de->d_type == DT_REG;
        struct stat st;
        bool have_st = false;
        if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK || (is_reg && (flags & MCDC_STORAGE_LIST_INFO))) {
            if (stat(full, &st) != 0) { /* vanished meanwhile, or a dangling link */
                errno = 0;
                continue;
            }
            have_st = true;
            is_dir = S_ISDIR(st.st_mode);
            is_reg = S_ISREG(st.st_mode);
        }
        if (is_dir) {
            if ((flags & MCDC_STORAGE_LIST_RECURSIVE) && depth < 64) {
                rc = list_dir(out, root, name, flags, depth + 1);
                if (rc == MCDC_ENOTFOUND) /* removed meanwhile */
                    rc = 0;
            }
        } else if (is_reg) {
            uint64_t size = 0;
            int64_t mtime = 0;
            if ((flags & MCDC_STORAGE_LIST_INFO) && have_st) {
                size = (uint64_t)st.st_size;
                mtime = ns_of(st.st_mtim) / 1000000;
            }
            rc = mcdc_storage__listing_add(out, name, size, mtime);
        }
        errno = 0;
    }
    if (rc == 0 && errno != 0)
        rc = mcdc_error_set(MCDC_EIO, "read directory %s: %s", dir, strerror(errno));
    closedir(d);
    return rc;
}

static int local_list(mcdc_storage_listing *out, const char *loc, unsigned flags)
{
    return list_dir(out, loc, NULL, flags, 0);
}

/* Compare and swap under an flock of ".<name>.swap.lock" beside @p loc: the check of the
 * token and the atomic replace happen with the lock held, so two swaps never both win. */
static int local_swap(mcdc_storage_info *info, const char *loc, const void *data, size_t len, const char *token)
{
    char lock[MCDC_PATH_MAX];
    const char *slash = strrchr(loc, '/');
    int dir_len = slash ? (int)(slash - loc) + 1 : 0;
    if (snprintf(lock, sizeof lock, "%.*s.%s.swap.lock", dir_len, loc, slash ? slash + 1 : loc) >= (int)sizeof lock)
        return mcdc_error_set(MCDC_EINVAL, "%s: name too long", loc);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return mcdc_error_set(MCDC_EIO, "open %s: %s", lock, strerror(errno));
    int rc = 0;
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            rc = mcdc_error_set(MCDC_EIO, "flock %s: %s", lock, strerror(errno));
            break;
        }
    mcdc_storage_info cur;
    if (rc == 0 && token) {
        rc = local_stat(&cur, loc);
        if (rc == 0 && strcmp(cur.token, token) != 0)
            rc = mcdc_error_set(MCDC_ECONFLICT, "%s: changed since it was read", loc);
        if (rc == 0)
            rc = mcdc_fs_write_atomic(loc, data, len);
    } else if (rc == 0) {
        rc = mcdc_fs_create_noreplace(loc, data, len);
        if (rc == MCDC_EEXISTS)
            rc = mcdc_error_set(MCDC_ECONFLICT, "%s: already exists", loc);
    }
    if (rc == 0 && info)
        rc = local_stat(info, loc);
    close(fd); /* releases the lock */
    return rc;
}

static int local_del(const char *loc)
{
    return mcdc_fs_remove(loc);
}

const mcdc_storage_backend mcdc_storage__local = {
    .name = "local",
    .stat = local_stat,
    .exists = mcdc_fs_exists,
    .read = local_read,
    .create = mcdc_fs_create_noreplace,
    .put = mcdc_fs_write_atomic,
    .swap = local_swap,
    .del = local_del,
    .mkdirs = mcdc_fs_mkdirs,
    .file_open = local_file_open,
    .file_read = local_file_read,
    .file_close = local_file_close,
    .writer_open = local_writer_open,
    .writer_write = local_writer_write,
    .writer_commit = local_writer_commit,
    .writer_free = local_writer_free,
    .list = local_list,
};
