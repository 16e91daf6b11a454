/*
 * delta/dfs.c: the file operations the Delta layer relies on, over core's storage seam
 * (mcdc/storage.h), so a table may live on a local disk or an object store.
 *
 * Guarantees: a file created by mcdc_delta__create_noreplace is either absent or whole
 * under its final name and never replaces one (locally: temp file written and fsynced,
 * then a no-replace rename or link(2), then an fsync of the directory);
 * mcdc_delta__replace_atomic replaces atomically (_last_checkpoint). Reads are capped. Failpoints: delta.commit.before_link
 * (temp commit written, not linked), delta.commit.after_link.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "delta/internal.h"
#include "mcdc/failpoint.h"
#include "mcdc/storage.h"

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
    size_t saved = out->max;
    if (max < out->max)
        out->max = max;
    int rc = mcdc_storage_read(out, NULL, path);
    out->max = saved;
    return rc;
}

int mcdc_delta__mkdirs(const char *dir)
{
    return mcdc_storage_mkdirs(dir);
}

int mcdc_delta__create_noreplace(const char *dir, const char *name, const void *data, size_t len)
{
    char *dst = mcdc_delta__join(dir, name);
    if (!dst)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_storage_writer *w = NULL;
    int rc = mcdc_storage_writer_open(&w, dst, MCDC_STORAGE_NOREPLACE);
    if (rc == 0)
        rc = mcdc_storage_writer_write(w, data, len);
    if (rc == 0) {
        mcdc_failpoint("delta.commit.before_link");
        rc = mcdc_storage_writer_commit(w);
        if (rc == 0)
            mcdc_failpoint("delta.commit.after_link");
    }
    mcdc_storage_writer_free(w);
    free(dst);
    return rc;
}

int mcdc_delta__replace_atomic(const char *dir, const char *name, const void *data, size_t len)
{
    char *dst = mcdc_delta__join(dir, name);
    if (!dst)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = mcdc_storage_put(dst, data, len);
    free(dst);
    return rc;
}

char *mcdc_delta_uuid(char out[37])
{
    unsigned char r[16];
    ssize_t got = getrandom(r, sizeof r, 0);
    if (got != (ssize_t)sizeof r) {
        /* no entropy source: mix clock, pid and address bits; still unique per process call */
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

int mcdc_delta_path_encode(mcdc_buf *out, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)path; rc == 0 && *p; p++) {
        unsigned char c = *p;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
        if (keep) {
            rc = mcdc_buf_putc(out, (char)c);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            rc = mcdc_buf_put(out, e, 3);
        }
    }
    return rc;
}
