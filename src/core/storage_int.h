/*
 * core/storage_int.h: the backend interface behind mcdc/storage.h. storage.c picks a
 * backend by the location's scheme and calls it; each backend keeps guarantees (S1)-(S4)
 * of mcdc/storage.h. Handles start with a pointer to their backend.
 */
#ifndef MCDC_CORE_STORAGE_INT_H
#define MCDC_CORE_STORAGE_INT_H

#include "mcdc/storage.h"

typedef struct mcdc_storage_backend {
    const char *name;
    int  (*stat)(mcdc_storage_info *out, const char *loc);
    bool (*exists)(const char *loc); /* an object, or a directory (locally) or prefix holding one */
    int  (*read)(mcdc_buf *out, mcdc_storage_info *info, const char *loc);
    int  (*create)(const char *loc, const void *data, size_t len);
    int  (*put)(const char *loc, const void *data, size_t len);
    int  (*swap)(mcdc_storage_info *info, const char *loc, const void *data, size_t len,
                 const char *token);
    int  (*del)(const char *loc);
    int  (*mkdirs)(const char *loc);
    int  (*file_open)(mcdc_storage_file **out, mcdc_storage_info *info, const char *loc);
    int  (*file_read)(mcdc_storage_file *f, void *dst, size_t len, uint64_t off);
    void (*file_close)(mcdc_storage_file *f);
    int  (*writer_open)(mcdc_storage_writer **out, const char *loc, unsigned flags);
    int  (*writer_write)(mcdc_storage_writer *w, const void *data, size_t len);
    int  (*writer_commit)(mcdc_storage_writer *w);
    void (*writer_free)(mcdc_storage_writer *w);
    int  (*list)(mcdc_storage_listing *out, const char *loc, unsigned flags);
} mcdc_storage_backend;

/* The head every backend's handle starts with. */
struct mcdc_storage_file {
    const mcdc_storage_backend *be;
};
struct mcdc_storage_writer {
    const mcdc_storage_backend *be;
};

extern const mcdc_storage_backend mcdc_storage__local;
extern const mcdc_storage_backend mcdc_storage__s3;

/* Append an entry named @p name (copied) to @p l. MCDC_ENOMEM. */
int mcdc_storage__listing_add(mcdc_storage_listing *l, const char *name, uint64_t size,
                              int64_t mtime_ms);
/* Sort @p l by name, bytewise. */
void mcdc_storage__listing_sort(mcdc_storage_listing *l);

#endif
