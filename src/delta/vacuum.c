/*
 * delta/vacuum.c: remove data files no version within the retention references.
 *
 * A file under the table root is deleted only when all of these hold:
 * (V1) it is not a live file of the latest snapshot, nor a tombstone whose
 *      deletionTimestamp is within the retention (versions in the retention window still
 *      reference it), nor the deletion-vector file of either;
 * (V2) its modification time is older than the retention, so a file a writer has just
 *      written and is about to commit is never touched;
 * (V3) neither it nor any directory above it (inside the table) has a name starting with
 *      '_' or '.' (_delta_log, _change_data, temp files, checkpoints' sidecars).
 * A retention shorter than 7 days is refused unless forced. Deleting is best effort per
 * file: a file that cannot be removed is reported and the walk goes on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta/internal.h"
#include "mcdc/log.h"
#include "mcdc/storage.h"

typedef struct keep_set {
    char  **paths; /* sorted absolute paths */
    size_t  n, cap;
} keep_set;

static int keep_add(keep_set *k, char *p)
{
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "vacuum: out of memory");
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 256;
        char **v = realloc(k->paths, cap * sizeof *v);
        if (!v) {
            free(p);
            return mcdc_error_set(MCDC_ENOMEM, "vacuum: out of memory");
        }
        k->paths = v;
        k->cap = cap;
    }
    k->paths[k->n++] = p;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool keep_has(const keep_set *k, const char *p)
{
    return k->n && bsearch(&p, k->paths, k->n, sizeof *k->paths, cmp_str) != NULL;
}

static int keep_file(keep_set *k, const mcdc_delta_snapshot *s, const mcdc_delta_file *f)
{
    int rc = keep_add(k, mcdc_delta_file_abspath(s, f->path));
    if (rc == 0 && f->has_dv && f->dv.storage_type != 'i') {
        char *dvp = mcdc_delta__dv_path(s->table_path, &f->dv);
        if (dvp)
            rc = keep_add(k, dvp);
    }
    return rc;
}

typedef struct walk {
    const keep_set             *keep;
    int64_t                     cutoff_ms;
    bool                        dry_run;
    mcdc_delta_vacuum_result   *res;
} walk;

/* True when a segment of the relative name @p rel starts with '_' or '.' (V3). */
static bool hidden_below(const char *rel)
{
    for (const char *seg = rel; seg; seg = strchr(seg, '/') ? strchr(seg, '/') + 1 : NULL)
        if (*seg == '_' || *seg == '.')
            return true;
    return false;
}

static int walk_table(walk *w, const char *table)
{
    mcdc_storage_listing l;
    int rc = mcdc_storage_list(&l, table, MCDC_STORAGE_LIST_RECURSIVE | MCDC_STORAGE_LIST_INFO);
    if (rc < 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        const mcdc_storage_entry *e = &l.entries[i];
        if (hidden_below(e->name))
            continue; /* (V3) */
        char *p = mcdc_delta__join(table, e->name);
        if (!p) {
            rc = mcdc_error_set(MCDC_ENOMEM, "vacuum: out of memory");
            break;
        }
        if (!keep_has(w->keep, p) && e->mtime_ms < w->cutoff_ms) { /* (V1), (V2) */
            if (w->dry_run || mcdc_storage_delete(p) == 0) {
                w->res->n_deleted++;
                w->res->bytes_deleted += (int64_t)e->size;
            } else {
                mcdc_log(MCDC_LOG_WARN, "delta", "vacuum: %s", mcdc_error_last()->message);
                mcdc_error_clear();
                w->res->n_failed++;
            }
        } else {
            w->res->n_kept++;
        }
        free(p);
    }
    mcdc_storage_listing_dispose(&l);
    return rc;
}

int mcdc_delta_vacuum(const char *path, int64_t retention_us, bool force, bool dry_run,
                      mcdc_delta_vacuum_result *result)
{
    mcdc_delta_vacuum_result res = { 0 };
    if (result)
        *result = res;
    if (retention_us < 0)
        retention_us = 7 * 24 * 3600 * INT64_C(1000000);
    if (retention_us < 7 * 24 * 3600 * INT64_C(1000000) && !force) {
        mcdc_error_set(MCDC_EINVAL, "vacuum: a retention under 7 days could delete files that "
                       "readers of recent versions or running writers still need");
        return mcdc_error_hint("give --force to vacuum with a shorter retention anyway");
    }
    mcdc_delta_snapshot *s;
    int rc = mcdc_delta_snapshot_open(&s, path, -1);
    if (rc < 0)
        return rc;
    int64_t cutoff_ms = mcdc_delta__now_ms() - retention_us / 1000;
    keep_set k = { 0 };
    for (size_t i = 0; rc == 0 && i < s->n_files; i++)
        rc = keep_file(&k, s, &s->files[i]);
    for (size_t i = 0; rc == 0 && i < s->n_tombstones; i++)
        if (s->tombstones[i].deletion_timestamp < 0 || s->tombstones[i].deletion_timestamp >= cutoff_ms)
            rc = keep_file(&k, s, &s->tombstones[i]);
    if (rc == 0) {
        qsort(k.paths, k.n, sizeof *k.paths, cmp_str);
        walk w = { &k, cutoff_ms, dry_run, &res };
        rc = walk_table(&w, path);
    }
    for (size_t i = 0; i < k.n; i++)
        free(k.paths[i]);
    free(k.paths);
    mcdc_delta_snapshot_free(s);
    if (result)
        *result = res;
    return rc;
}
