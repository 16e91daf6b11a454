/*
 * delta/optimize.c: compaction: rewrite the small files of each partition into files of
 * the target size, in one commit of removes and adds with dataChange=false (readers of
 * the change feed see no change; the rows are the same, minus rows already deleted by
 * deletion vectors).
 *
 * A file is small when it is under half the target size or carries a deletion vector;
 * a partition is compacted when it holds at least two small files (or one with a DV).
 * The commit fails with MCDC_ECONFLICT when another writer removed one of the files
 * meanwhile; the files written are then orphans, which vacuum removes once old enough.
 */
#include <stdlib.h>
#include <string.h>

#include "delta/internal.h"

typedef struct opt_build {
    const mcdc_delta_snapshot *orig;    /* the snapshot the files were read from */
    const size_t              *picked;  /* indexes into orig->files */
    size_t                     n_picked;
    const mcdc_delta_file     *added;
    size_t                     n_added;
} opt_build;

static bool is_live(const mcdc_delta_snapshot *s, const char *path)
{
    size_t lo = 0, hi = s->n_files;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->files[mid].path, path);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static int build_optimize(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n,
                          void *payload)
{
    opt_build *b = payload;
    *out = calloc(b->n_picked + b->n_added + 1, sizeof **out);
    *n = 0;
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "optimize: out of memory");
    int64_t now = mcdc_delta__now_ms();
    for (size_t i = 0; i < b->n_picked; i++) {
        const mcdc_delta_file *f = &b->orig->files[b->picked[i]];
        if (!is_live(snap, f->path))
            return mcdc_error_set(MCDC_ECONFLICT, "%s: %s was removed by another writer during "
                                  "the compaction; run optimize again", snap->table_path, f->path);
        int rc = mcdc_delta_remove_of(&(*out)[*n], f, now);
        if (rc < 0)
            return rc;
        (*out)[(*n)++].u.file.data_change = false;
    }
    for (size_t i = 0; i < b->n_added; i++) {
        int rc = mcdc_delta_file_copy(&(*out)[*n].u.file, &b->added[i]);
        if (rc < 0)
            return rc;
        (*out)[*n].kind = MCDC_DELTA_ACTION_ADD;
        (*out)[(*n)++].u.file.data_change = false;
    }
    return 0;
}

static char *part_key(const mcdc_delta_file *f)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    for (size_t i = 0; i < f->partition_values.n; i++)
        mcdc_buf_printf(&b, "%s=%c%s\x1f", f->partition_values.kv[i].key,
                        f->partition_values.kv[i].value ? 'V' : 'N',
                        f->partition_values.kv[i].value ? f->partition_values.kv[i].value : "");
    return mcdc_buf_detach(&b);
}

int mcdc_delta_optimize(const char *path, int64_t target_bytes, mcdc_delta_optimize_result *result)
{
    mcdc_delta_optimize_result res = { 0 };
    if (result)
        *result = res;
    if (target_bytes <= 0)
        target_bytes = (int64_t)128 << 20;
    mcdc_delta_snapshot *snap;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc < 0)
        return rc;
    /* pick the small files, grouped by partition */
    size_t *picked = calloc(snap->n_files + 1, sizeof *picked);
    char **keys = calloc(snap->n_files + 1, sizeof *keys);
    size_t n_picked = 0;
    if (!picked || !keys)
        rc = mcdc_error_set(MCDC_ENOMEM, "optimize: out of memory");
    for (size_t i = 0; rc == 0 && i < snap->n_files; i++) {
        keys[i] = part_key(&snap->files[i]);
        if (!keys[i])
            rc = mcdc_error_set(MCDC_ENOMEM, "optimize: out of memory");
    }
    for (size_t i = 0; rc == 0 && i < snap->n_files; i++) {
        const mcdc_delta_file *f = &snap->files[i];
        if (f->size >= target_bytes / 2 && !f->has_dv)
            continue;
        size_t small_in_part = 0;
        bool any_dv = false;
        for (size_t k = 0; k < snap->n_files; k++) {
            if (strcmp(keys[k], keys[i]) != 0)
                continue;
            if (snap->files[k].size < target_bytes / 2 || snap->files[k].has_dv)
                small_in_part++;
            any_dv |= snap->files[k].has_dv;
        }
        if (small_in_part >= 2 || any_dv)
            picked[n_picked++] = i;
    }
    mcdc_delta_writer *w = NULL;
    mcdc_delta_scan *scan = NULL;
    mcdc_delta_file *added = NULL;
    size_t n_added = 0;
    if (rc == 0 && n_picked) {
        mcdc_delta_writer_options wo = MCDC_DELTA_WRITER_OPTIONS_INIT;
        wo.target_file_bytes = target_bytes;
        rc = mcdc_delta_writer_open(&w, snap, &wo);
        if (rc == 0)
            rc = mcdc_delta_scan_open(&scan, snap, NULL);
        if (rc == 0)
            rc = mcdc_delta__scan_restrict(scan, picked, n_picked);
        const mcdc_value *row;
        while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1) {
            rc = mcdc_delta_writer_write(w, row);
            res.n_rows++;
        }
        if (rc == 0)
            rc = mcdc_delta_writer_finish(w, &added, &n_added);
    }
    if (rc == 0 && n_picked) {
        opt_build b = { snap, picked, n_picked, added, n_added };
        mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        char params[128];
        snprintf(params, sizeof params, "{\"predicate\":\"[]\",\"targetSize\":\"%lld\"}",
                 (long long)target_bytes);
        o.operation = "OPTIMIZE";
        o.operation_parameters = params;
        mcdc_delta_commit_result cr;
        rc = mcdc_delta_commit(path, build_optimize, &b, &o, &cr);
        res.version = cr.version;
        res.n_removed = (int64_t)n_picked;
        res.n_added = (int64_t)n_added;
    }
    mcdc_delta_files_free(added, n_added);
    mcdc_delta_scan_free(scan);
    mcdc_delta_writer_free(w);
    for (size_t i = 0; keys && i < snap->n_files; i++)
        free(keys[i]);
    free(keys);
    free(picked);
    if (!n_picked)
        res.version = snap->version;
    mcdc_delta_snapshot_free(snap);
    if (result)
        *result = res;
    return rc;
}
