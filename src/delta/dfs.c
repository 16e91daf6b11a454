/*
 * delta/dfs.c: the file operations the Delta layer relies on.
 *
 * Guarantees: a file created by mcdc_delta__create_noreplace is either absent or whole
 * under its final name (temp file written and fsynced, then link(2), which fails with
 * EEXIST rather than replace), and its directory is fsynced before success is returned;
 * mcdc_delta__replace_atomic does the same with rename(2) for files that may be
 * replaced (_last_checkpoint). Reads are capped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "delta/internal.h"

char *mcdc_delta__join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    size_t n = la;
    if (la && a[la - 1] != '/')
        s[n++] = '/';
    memcpy(s + n, b, lb + 1);
    return s;
}

int64_t mcdc_delta__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int mcdc_delta__read_file(mcdc_buf *out, const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such file", path);
        return mcdc_error_set(MCDC_EIO, "%s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size > max) {
        close(fd);
        return mcdc_error_set(MCDC_ENOMEM, "%s: %lld bytes, over the cap of %zu", path,
                              (long long)st.st_size, max);
    }
    size_t want = st.st_size > 0 ? (size_t)st.st_size : 4096;
    int rc = 0;
    for (;;) {
        if ((rc = mcdc_buf_grow(out, want)) < 0)
            break;
        ssize_t n = read(fd, out->ptr + out->len, out->cap - out->len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = mcdc_error_set(MCDC_EIO, "%s: %s", path, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
        out->ptr[out->len] = '\0';
        if (out->len > max) {
            rc = mcdc_error_set(MCDC_ENOMEM, "%s: over the cap of %zu bytes", path, max);
            break;
        }
        want = 4096;
    }
    close(fd);
    return rc;
}

int mcdc_delta__fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return mcdc_error_set(MCDC_EIO, "%s: %s", dir, strerror(errno));
    int rc = fsync(fd) < 0 && errno != EINVAL ? mcdc_error_set(MCDC_EIO, "%s: fsync: %s", dir,
                                                              strerror(errno))
                                               : 0;
    close(fd);
    return rc;
}

int mcdc_delta__mkdirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "mkdir: out of memory");
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0777) < 0 && errno != EEXIST) {
                int e = errno;
                free(p);
                return mcdc_error_set(MCDC_EIO, "%s: mkdir: %s", dir, strerror(e));
            }
            *s = '/';
        }
    }
    int rc = 0;
    if (mkdir(p, 0777) < 0 && errno != EEXIST)
        rc = mcdc_error_set(MCDC_EIO, "%s: mkdir: %s", dir, strerror(errno));
    free(p);
    return rc;
}

/* Write a fsynced temp file in dir; its path goes to tmp (caller frees). */
static int write_temp(char **tmp, const char *dir, const char *name, const void *data, size_t len)
{
    char uuid[37];
    char base[128];
    snprintf(base, sizeof base, ".%s.%s.tmp", name, mcdc_delta_uuid(uuid));
    *tmp = mcdc_delta__join(dir, base);
    if (!*tmp)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return mcdc_error_set(MCDC_EIO, "%s: %s", *tmp, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(*tmp);
            return mcdc_error_set(MCDC_EIO, "%s: write: %s", *tmp, strerror(e));
        }
        p += n;
        left -= (size_t)n;
    }
    if (fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlink(*tmp);
        return mcdc_error_set(MCDC_EIO, "%s: fsync: %s", *tmp, strerror(e));
    }
    close(fd);
    return 0;
}

int mcdc_delta__create_noreplace(const char *dir, const char *name, const void *data, size_t len)
{
    char *tmp = NULL, *dst = mcdc_delta__join(dir, name);
    int rc = dst ? write_temp(&tmp, dir, name, data, len) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc == 0) {
        if (link(tmp, dst) < 0) {
            rc = errno == EEXIST ? mcdc_error_set(MCDC_EEXISTS, "%s: already exists", dst)
                                 : mcdc_error_set(MCDC_EIO, "%s: link: %s", dst, strerror(errno));
        }
        unlink(tmp);
        if (rc == 0)
            rc = mcdc_delta__fsync_dir(dir);
    }
    free(tmp);
    free(dst);
    return rc;
}

int mcdc_delta__replace_atomic(const char *dir, const char *name, const void *data, size_t len)
{
    char *tmp = NULL, *dst = mcdc_delta__join(dir, name);
    int rc = dst ? write_temp(&tmp, dir, name, data, len) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc == 0) {
        if (rename(tmp, dst) < 0) {
            rc = mcdc_error_set(MCDC_EIO, "%s: rename: %s", dst, strerror(errno));
            unlink(tmp);
        } else {
            rc = mcdc_delta__fsync_dir(dir);
        }
    }
    free(tmp);
    free(dst);
    return rc;
}

char *mcdc_delta_uuid(char out[37])
{
    unsigned char r[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, r, sizeof r) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof r) {
        /* no urandom: mix clock, pid and address bits; still unique per process call */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t a = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() << 40;
        static uint64_t counter;
        uint64_t b = ++counter ^ (uint64_t)(uintptr_t)out;
        memcpy(r, &a, 8);
        memcpy(r + 8, &b, 8);
    }
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
             r[13], r[14], r[15]);
    return out;
}
