/*
 * delta/checkpoint_parquet.c: Parquet checkpoint parts and sidecars as actions.
 *
 * Each row holds one top-level column per action kind, all null but one; only the action
 * columns are read (stats_parsed and partitionValues_parsed are skipped). Rows are
 * decoded column by column (checkpoint_columns.c); a file whose layout that decoder does
 * not take goes the JSON way instead: each row from the Parquet reader as a JSON object
 * through the commit-line action parser. Both give the same actions.
 */
#include <string.h>

#include "delta/internal.h"
#include "mcdc/parquet.h"

static const char *const action_cols[] = {
    "txn", "add", "remove", "metaData", "protocol", "domainMetadata", "checkpointMetadata",
    "sidecar",
};

static int open_selected(mcdc_parquet_reader **out, const char *path)
{
    mcdc_parquet_reader *r = NULL;
    int rc = mcdc_parquet_reader_open(&r, path, NULL);
    if (rc < 0)
        return rc;
    const mcdc_schema *fs = mcdc_parquet_reader_schema(r);
    const char *sel[sizeof action_cols / sizeof action_cols[0]];
    size_t n_sel = 0;
    for (size_t i = 0; i < sizeof action_cols / sizeof action_cols[0]; i++)
        for (size_t k = 0; k < fs->n_cols; k++)
            if (strcmp(fs->cols[k].name, action_cols[i]) == 0)
                sel[n_sel++] = action_cols[i];
    if (n_sel == 0)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: not a checkpoint (no action columns)", path);
    if (rc == 0)
        rc = mcdc_parquet_reader_select(r, sel, n_sel);
    if (rc < 0) {
        mcdc_parquet_reader_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

static int read_json_rows(mcdc_parquet_reader *r, const char *path, mcdc_delta__action_cb cb,
                          void *payload)
{
    int64_t row = 0;
    int rc = 0;
    while (rc == 0) {
        json_t *j = NULL;
        rc = mcdc_parquet_reader_next_json(r, (struct json_t **)&j);
        if (rc <= 0)
            break;
        rc = 0;
        row++;
        mcdc_delta_action a;
        rc = mcdc_delta__action_from_json(&a, j);
        json_decref(j);
        if (rc < 0) {
            mcdc_error_prefix("%s: row %lld", path, (long long)row);
        } else {
            rc = cb(&a, payload);
            if (rc < 0 && !strstr(mcdc_error_last()->message, path))
                mcdc_error_prefix("%s: row %lld", path, (long long)row);
        }
        mcdc_delta_action_clear(&a);
    }
    return rc < 0 ? rc : 0;
}

int mcdc_delta__read_parquet_actions(const char *path, mcdc_delta__action_cb cb, void *payload)
{
    mcdc_parquet_reader *r = NULL;
    int rc = open_selected(&r, path);
    if (rc < 0)
        return rc;
    rc = mcdc_delta__read_parquet_columns(r, path, cb, payload);
    if (rc == 1) /* a layout the columnar decoder does not take: no row was read */
        rc = read_json_rows(r, path, cb, payload);
    mcdc_parquet_reader_free(r);
    return rc;
}

int mcdc_delta__read_parquet_actions_json(const char *path, mcdc_delta__action_cb cb,
                                          void *payload)
{
    mcdc_parquet_reader *r = NULL;
    int rc = open_selected(&r, path);
    if (rc < 0)
        return rc;
    rc = read_json_rows(r, path, cb, payload);
    mcdc_parquet_reader_free(r);
    return rc;
}
