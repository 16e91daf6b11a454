/*
 * core/fs.c: durable file operations and the process lock (see mcdc/fs.h).
 *
 * Invariants:
 * (F1) A published file is complete: its bytes are written and fsynced under a temp
 *      name before rename/link makes it visible, and the directory is fsynced after.
 * (F2) create-without-replace never replaces: renameat2(RENAME_NOREPLACE), or link(2)
 *      where the file system lacks it, fails with EEXIST when the name is taken, so of
 *      two racing writers exactly one wins.
 * (F3) Temp names start with "." and contain ".tmp.", so numbered listings skip them.
 * Every failure names the path and the OS reason; failed writes remove their temp file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "mcdc/fs.h"
#include "mcdc/log.h"

static atomic_uint temp_counter;

#define IOERR(fmt, ...) mcdc_error_set(MCDC_EIO, fmt ": %s", __VA_ARGS__, strerror(errno))

/* Split path into its directory ("." when none) and base name. */
static int split_path(const char *path, char dir[MCDC_PATH_MAX], const char **base)
{
    size_t n = strlen(path);
    if (n == 0 || n >= MCDC_PATH_MAX)
        return mcdc_error_set(MCDC_EINVAL, "bad path '%.200s': empty or longer than %d bytes", path,
                              MCDC_PATH_MAX - 1);
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
        *base = path;
    } else if (slash == path) {
        strcpy(dir, "/");
        *base = slash + 1;
    } else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        *base = slash + 1;
    }
    if (**base == '\0')
        return mcdc_error_set(MCDC_EINVAL, "bad path '%s': names a directory, not a file", path);
    return 0;
}

int mcdc_fs_fsync_fd(int fd, const char *what)
{
    while (fsync(fd) != 0) {
        if (errno == EINTR)
            continue;
        /* Some file systems refuse fsync on directories; that is not a durability loss
         * we can do anything about. */
        if (errno == EINVAL || errno == EROFS)
            return 0;
        return IOERR("fsync %s", what);
    }
    return 0;
}

int mcdc_fs_fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return IOERR("open %s", path);
    int rc = mcdc_fs_fsync_fd(fd, path);
    close(fd);
    return rc;
}

int mcdc_fs_fsync_parent(const char *path)
{
    char dir[MCDC_PATH_MAX];
    const char *base;
    int rc = split_path(path, dir, &base);
    if (rc < 0)
        return rc;
    return mcdc_fs_fsync_path(dir);
}

int mcdc_fs_temp_open(int *out_fd, char tmp_path[MCDC_PATH_MAX], const char *path)
{
    char dir[MCDC_PATH_MAX];
    const char *base;
    int rc = split_path(path, dir, &base);
    *out_fd = -1;
    if (rc < 0)
        return rc;
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned n = atomic_fetch_add(&temp_counter, 1);
        int len = snprintf(tmp_path, MCDC_PATH_MAX, "%s/.%s.tmp.%ld.%u", dir, base, (long)getpid(), n);
        if (len < 0 || len >= MCDC_PATH_MAX)
            return mcdc_error_set(MCDC_EINVAL, "bad path '%.200s': too long for a temp name", path);
        int fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            *out_fd = fd;
            return 0;
        }
        if (errno != EEXIST)
            return IOERR("create %s", tmp_path);
    }
    return mcdc_error_set(MCDC_EIO, "create temp file for %s: every name tried exists", path);
}

static int write_all(int fd, const void *data, size_t len, const char *what)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return IOERR("write %s", what);
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Write data to a new fsynced temp file next to path. */
static int write_temp(char tmp[MCDC_PATH_MAX], const char *path, const void *data, size_t len)
{
    int fd, rc = mcdc_fs_temp_open(&fd, tmp, path);
    if (rc < 0)
        return rc;
    rc = write_all(fd, data, len, tmp);
    if (rc == 0)
        rc = mcdc_fs_fsync_fd(fd, tmp);
    if (close(fd) != 0 && rc == 0)
        rc = IOERR("close %s", tmp);
    if (rc < 0)
        unlink(tmp);
    return rc;
}

int mcdc_fs_publish_replace(const char *tmp_path, const char *path)
{
    if (rename(tmp_path, path) != 0)
        return mcdc_error_set(MCDC_EIO, "rename %s to %s: %s", tmp_path, path, strerror(errno));
    return mcdc_fs_fsync_parent(path);
}

int mcdc_fs_publish_noreplace(const char *tmp_path, const char *path)
{
#ifdef RENAME_NOREPLACE
    /* renameat2 first: no temp name to unlink afterwards, so no freed inode per publish
     * (on ext4 every recently freed inode makes the next file creation scan further). */
    if (renameat2(AT_FDCWD, tmp_path, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return mcdc_fs_fsync_parent(path);
    if (errno == EEXIST)
        return mcdc_error_set(MCDC_EEXISTS, "%s: already exists", path);
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP && errno != EOPNOTSUPP)
        return mcdc_error_set(MCDC_EIO, "rename %s to %s: %s", tmp_path, path, strerror(errno));
#endif
    /* File systems without RENAME_NOREPLACE: link(2), which fails with EEXIST. */
    if (link(tmp_path, path) != 0) {
        if (errno == EEXIST)
            return mcdc_error_set(MCDC_EEXISTS, "%s: already exists", path);
        return mcdc_error_set(MCDC_EIO, "link %s to %s: %s", tmp_path, path, strerror(errno));
    }
    /* Published: a temp name left behind is debris (hidden from listings), not a failure
     * of the publish, which callers must not retry. */
    if (unlink(tmp_path) != 0)
        mcdc_log(MCDC_LOG_WARN, "fs", "published %s but could not remove %s: %s", path, tmp_path, strerror(errno));
    return mcdc_fs_fsync_parent(path);
}

int mcdc_fs_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[MCDC_PATH_MAX];
    int rc = write_temp(tmp, path, data, len);
    if (rc < 0)
        return rc;
    rc = mcdc_fs_publish_replace(tmp, path);
    if (rc < 0)
        unlink(tmp);
    return rc;
}

int mcdc_fs_create_noreplace(const char *path, const void *data, size_t len)
{
    char tmp[MCDC_PATH_MAX];
    if (mcdc_fs_exists(path))
        return mcdc_error_set(MCDC_EEXISTS, "%s: already exists", path);
    int rc = write_temp(tmp, path, data, len);
    if (rc < 0)
        return rc;
    rc = mcdc_fs_publish_noreplace(tmp, path);
    if (rc < 0)
        unlink(tmp);
    return rc;
}

int mcdc_fs_read_all(mcdc_buf *out, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such file", path);
        return IOERR("open %s", path);
    }
    int rc = mcdc_fs_read_fd(out, fd, path);
    close(fd);
    return rc;
}

int mcdc_fs_read_fd(mcdc_buf *out, int fd, const char *path)
{
    size_t start = out->len;
    int rc = 0;
    for (;;) {
        if (!out->ptr || out->len + 1 >= out->cap) {
            if (out->len >= out->max) {
                /* Full to the cap: the file fits only if nothing is left. */
                char probe;
                ssize_t r = read(fd, &probe, 1);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r < 0)
                    rc = IOERR("read %s", path);
                else if (r > 0)
                    rc = mcdc_error_set(MCDC_ENOMEM, "%s: larger than the limit of %zu bytes", path,
                                        out->max - start);
                break;
            }
            size_t want = out->cap ? out->cap : 4096;
            if (want > out->max - out->len)
                want = out->max - out->len;
            if ((rc = mcdc_buf_grow(out, want)) < 0)
                break;
        }
        ssize_t r = read(fd, out->ptr + out->len, out->cap - out->len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = IOERR("read %s", path);
            break;
        }
        if (r == 0)
            break;
        out->len += (size_t)r;
        out->ptr[out->len] = '\0';
    }
    if (rc < 0) {
        out->len = start;
        if (out->ptr)
            out->ptr[start] = '\0';
    }
    return rc;
}

bool mcdc_fs_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int mcdc_fs_realpath(char out[MCDC_PATH_MAX], const char *path)
{
    char *r = realpath(path, NULL);
    if (!r) {
        if (errno == ENOENT || errno == ENOTDIR)
            return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such file or directory", path);
        return mcdc_error_set(MCDC_EIO, "%s: %s", path, strerror(errno));
    }
    size_t n = strlen(r);
    if (n >= MCDC_PATH_MAX) {
        free(r);
        return mcdc_error_set(MCDC_EIO, "%s: the absolute path is longer than %d bytes", path, MCDC_PATH_MAX - 1);
    }
    memcpy(out, r, n + 1);
    free(r);
    return 0;
}

int mcdc_fs_check_writable(const char *path)
{
    char dir[MCDC_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (access(dir, W_OK) != 0)
        return mcdc_error_set(MCDC_EINVAL, "cannot write in %s: %s", dir, strerror(errno));
    return 0;
}

int mcdc_fs_append_open(int *out_fd, const char *path)
{
    *out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (*out_fd < 0)
        return IOERR("open %s", path);
    return 0;
}

int mcdc_fs_append(int fd, const void *data, size_t len, const char *path)
{
    ssize_t w;
    while ((w = write(fd, data, len)) < 0 && errno == EINTR)
        ;
    if (w < 0)
        return IOERR("write %s", path);
    if ((size_t)w != len)
        return mcdc_error_set(MCDC_EIO, "write %s: short write (%zd of %zu bytes)", path, w, len);
    return 0;
}

void mcdc_fs_close(int fd)
{
    if (fd >= 0)
        close(fd);
}

int mcdc_fs_remove(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT)
        return IOERR("remove %s", path);
    return 0;
}

int mcdc_fs_mkdirs(const char *path)
{
    char p[MCDC_PATH_MAX];
    size_t n = strlen(path);
    struct stat st;
    if (n == 0 || n >= sizeof p)
        return mcdc_error_set(MCDC_EINVAL, "bad directory '%.200s': empty or too long", path);
    memcpy(p, path, n + 1);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    /* The common case, a directory that is there already (every batch of a job asks for
     * its checkpoint's and its table's): one stat, not a mkdir and a stat per component. */
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) == 0) {
            int rc = mcdc_fs_fsync_parent(p);
            if (rc < 0)
                return rc;
        } else if (errno == EEXIST) {
            if (stat(p, &st) != 0)
                return IOERR("stat %s", p);
            if (!S_ISDIR(st.st_mode))
                return mcdc_error_set(MCDC_EEXISTS, "%s: exists and is not a directory", p);
        } else {
            return IOERR("create directory %s", p);
        }
        p[i] = c;
    }
    return 0;
}

static bool numeric_name(const char *s, uint64_t *out)
{
    size_t n = strlen(s);
    uint64_t v = 0;
    if (n == 0 || n > 19 || (n > 1 && s[0] == '0'))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int mcdc_fs_list_numbered(uint64_t **out, size_t *n_out, const char *dir)
{
    DIR *d = opendir(dir);
    uint64_t *a = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    *out = NULL;
    *n_out = 0;
    if (!d) {
        if (errno == ENOENT)
            return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such directory", dir);
        return IOERR("open directory %s", dir);
    }
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        uint64_t v;
        if (!numeric_name(e->d_name, &v))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16, bytes;
            uint64_t *na;
            if (mcdc_mul_overflow(ncap, sizeof *a, &bytes) || !(na = realloc(a, bytes))) {
                free(a);
                closedir(d);
                return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory listing %zu entries", dir, n);
            }
            a = na;
            cap = ncap;
        }
        a[n++] = v;
        errno = 0;
    }
    if (errno != 0) {
        int rc = IOERR("read directory %s", dir);
        free(a);
        closedir(d);
        return rc;
    }
    closedir(d);
    if (n > 1)
        qsort(a, n, sizeof *a, cmp_u64);
    *out = a;
    *n_out = n;
    return 0;
}

struct mcdc_fs_lock {
    int fd; /* the open lock file holding the flock */
};

int mcdc_fs_lock_acquire(mcdc_fs_lock **out, const char *path)
{
    *out = NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return IOERR("open lock file %s", path);
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR)
            continue;
        if (errno == EWOULDBLOCK) {
            char txt[32] = "";
            ssize_t r = pread(fd, txt, sizeof txt - 1, 0);
            long pid = 0;
            close(fd);
            if (r > 0) {
                txt[r] = '\0';
                pid = strtol(txt, NULL, 10);
            }
            if (pid > 0)
                mcdc_error_set(MCDC_ELOCKED, "%s: already locked by pid %ld", path, pid);
            else
                mcdc_error_set(MCDC_ELOCKED, "%s: already locked by another process", path);
            return mcdc_error_hint("only one process may use it at a time: stop the other one or wait for it "
                                   "to finish");
        }
        int rc = IOERR("lock %s", path);
        close(fd);
        return rc;
    }
    /* the holder's pid, for the refusal above. Written over the old one, then cut to its
     * length, never truncated to 0 first: freeing the file's block and allocating another
     * is a synchronous discard on a file system mounted with -o discard (ext4 without a
     * journal), at every acquire; the same pid already there is not written at all */
    char txt[32], had[32];
    int len = snprintf(txt, sizeof txt, "%ld\n", (long)getpid());
    int rc = 0;
    ssize_t r = pread(fd, had, sizeof had, 0);
    if (r == len && memcmp(had, txt, (size_t)len) == 0)
        rc = 0;
    else if (pwrite(fd, txt, (size_t)len, 0) != len)
        rc = IOERR("write lock file %s", path);
    else if (ftruncate(fd, len) != 0)
        rc = IOERR("truncate lock file %s", path);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    mcdc_fs_lock *l = malloc(sizeof *l);
    if (!l) {
        close(fd);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", path);
    }
    l->fd = fd;
    *out = l;
    return 0;
}

void mcdc_fs_lock_release(mcdc_fs_lock *lock)
{
    if (!lock)
        return;
    close(lock->fd); /* closing the last descriptor drops the flock */
    free(lock);
}
