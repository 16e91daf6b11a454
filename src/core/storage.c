/*
 * core/storage.c: the storage seam's entry points (see mcdc/storage.h): each call picks
 * the backend for its location and forwards to it: "s3://" names the S3 backend
 * (storage_s3.c), anything else is a local path (storage_local.c). Listings are shared: building, sorting, freeing.
 */
#include <stdlib.h>
#include <string.h>

#include "core/storage_int.h"

static const mcdc_storage_backend *backend_of(const char *loc)
{
    return strncmp(loc, "s3://", 5) == 0 ? &mcdc_storage__s3 : &mcdc_storage__local;
}

int mcdc_storage_stat(mcdc_storage_info *out, const char *loc)
{
    MCDC_ASSERT_ARG(out && loc);
    memset(out, 0, sizeof *out);
    return backend_of(loc)->stat(out, loc);
}

bool mcdc_storage_exists(const char *loc)
{
    return loc && backend_of(loc)->exists(loc);
}

int mcdc_storage_read(mcdc_buf *out, mcdc_storage_info *info, const char *loc)
{
    MCDC_ASSERT_ARG(out && loc);
    if (info)
        memset(info, 0, sizeof *info);
    return backend_of(loc)->read(out, info, loc);
}

int mcdc_storage_create(const char *loc, const void *data, size_t len)
{
    MCDC_ASSERT_ARG(loc && (data || len == 0));
    return backend_of(loc)->create(loc, data, len);
}

int mcdc_storage_put(const char *loc, const void *data, size_t len)
{
    MCDC_ASSERT_ARG(loc && (data || len == 0));
    return backend_of(loc)->put(loc, data, len);
}

int mcdc_storage_swap(mcdc_storage_info *info, const char *loc, const void *data, size_t len,
                      const char *token)
{
    MCDC_ASSERT_ARG(loc && (data || len == 0));
    if (info)
        memset(info, 0, sizeof *info);
    return backend_of(loc)->swap(info, loc, data, len, token);
}

int mcdc_storage_delete(const char *loc)
{
    MCDC_ASSERT_ARG(loc);
    return backend_of(loc)->del(loc);
}

int mcdc_storage_mkdirs(const char *loc)
{
    MCDC_ASSERT_ARG(loc);
    return backend_of(loc)->mkdirs(loc);
}

int mcdc_storage_file_open(mcdc_storage_file **out, mcdc_storage_info *info, const char *loc)
{
    MCDC_ASSERT_ARG(out && loc);
    *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    return backend_of(loc)->file_open(out, info, loc);
}

int mcdc_storage_file_read(mcdc_storage_file *f, void *dst, size_t len, uint64_t off)
{
    MCDC_ASSERT_ARG(f && (dst || len == 0));
    return f->be->file_read(f, dst, len, off);
}

void mcdc_storage_file_close(mcdc_storage_file *f)
{
    if (f)
        f->be->file_close(f);
}

int mcdc_storage_writer_open(mcdc_storage_writer **out, const char *loc, unsigned flags)
{
    MCDC_ASSERT_ARG(out && loc);
    *out = NULL;
    return backend_of(loc)->writer_open(out, loc, flags);
}

int mcdc_storage_writer_write(mcdc_storage_writer *w, const void *data, size_t len)
{
    MCDC_ASSERT_ARG(w && (data || len == 0));
    return len ? w->be->writer_write(w, data, len) : 0;
}

int mcdc_storage_writer_commit(mcdc_storage_writer *w)
{
    MCDC_ASSERT_ARG(w);
    return w->be->writer_commit(w);
}

void mcdc_storage_writer_free(mcdc_storage_writer *w)
{
    if (w)
        w->be->writer_free(w);
}

int mcdc_storage_list(mcdc_storage_listing *out, const char *loc, unsigned flags)
{
    MCDC_ASSERT_ARG(out && loc);
    memset(out, 0, sizeof *out);
    int rc = backend_of(loc)->list(out, loc, flags);
    if (rc < 0)
        mcdc_storage_listing_dispose(out);
    else
        mcdc_storage__listing_sort(out);
    return rc;
}

void mcdc_storage_listing_dispose(mcdc_storage_listing *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->entries[i].name);
    free(l->entries);
    l->entries = NULL;
    l->n = 0;
}

int mcdc_storage__listing_add(mcdc_storage_listing *l, const char *name, uint64_t size,
                              int64_t mtime_ms)
{
    /* capacity: 16, then doubled whenever the count reaches a power of two past it */
    size_t n = l->n;
    if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
        mcdc_storage_entry *e = realloc(l->entries, (n ? n * 2 : 16) * sizeof *e);
        if (!e)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory listing %zu names", n);
        l->entries = e;
    }
    char *copy = strdup(name);
    if (!copy)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory listing %zu names", l->n);
    l->entries[l->n++] = (mcdc_storage_entry){ copy, size, mtime_ms };
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const mcdc_storage_entry *)a)->name, ((const mcdc_storage_entry *)b)->name);
}

void mcdc_storage__listing_sort(mcdc_storage_listing *l)
{
    if (l->n > 1)
        qsort(l->entries, l->n, sizeof *l->entries, cmp_entry);
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

int mcdc_storage_list_numbered(uint64_t **out, size_t *n_out, const char *loc)
{
    MCDC_ASSERT_ARG(out && n_out && loc);
    *out = NULL;
    *n_out = 0;
    mcdc_storage_listing l;
    int rc = mcdc_storage_list(&l, loc, 0);
    if (rc < 0)
        return rc;
    uint64_t *a = l.n ? malloc(l.n * sizeof *a) : NULL;
    if (l.n && !a) {
        mcdc_storage_listing_dispose(&l);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory listing %zu entries", loc, l.n);
    }
    size_t n = 0;
    for (size_t i = 0; i < l.n; i++)
        if (numeric_name(l.entries[i].name, &a[n]))
            n++;
    mcdc_storage_listing_dispose(&l);
    if (n > 1)
        qsort(a, n, sizeof *a, cmp_u64);
    if (n == 0) {
        free(a);
        a = NULL;
    }
    *out = a;
    *n_out = n;
    return 0;
}
