/*
 * source/source.c: opening a source from its text form (architecture §7), the frees of
 * the interface's result types, and the position questions of a batch asked together
 * (mcdc_source_positions; one by one for a source without a positions op).
 *
 * "sim:PATH" opens the embedded simulator; "@FILE" reads the source from the first line of FILE
 * (so a password never appears in ps); "odbc:CONNECTION-STRING" is SQL Server (mcdc/mssql.h).
 * Every message that shows a source string shows it with its passwords masked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/mssql.h"
#include "mcdc/secret.h"
#include "mcdc/sim.h"
#include "mcdc/source.h"

#define MAX_SPEC_LINE 65536

static int read_first_line(const char *path, char **out)
{
    FILE *f = fopen(path, "r");
    *out = NULL;
    if (!f)
        return mcdc_error_set(MCDC_ENOTFOUND, "source file %s cannot be read", path),
               mcdc_error_hint("@FILE names a file whose first line is the source, e.g. sim:/data/db.sqlite");
    char *line = malloc(MAX_SPEC_LINE + 2);
    if (!line) {
        fclose(f);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    if (!fgets(line, MAX_SPEC_LINE + 2, f)) line[0] = '\0';
    fclose(f);
    size_t n = strlen(line);
    if (n > MAX_SPEC_LINE) {
        free(line);
        return mcdc_error_set(MCDC_EINVAL, "source file %s: the first line is longer than %d bytes", path, MAX_SPEC_LINE);
    }
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    if (n == 0) {
        free(line);
        return mcdc_error_set(MCDC_EINVAL, "source file %s: the first line is empty", path);
    }
    *out = line;
    return 0;
}

int mcdc_source_open(mcdc_source **out, const char *spec)
{
    *out = NULL;
    if (!spec || !*spec)
        return mcdc_error_set(MCDC_EINVAL, "no source given"),
               mcdc_error_hint("pass --source sim:PATH (the simulator), odbc:CONNECTION-STRING or @FILE (stream also reads $MSSQL_CDC_SOURCE)");
    if (spec[0] == '@') {
        char *line;
        int rc = read_first_line(spec + 1, &line);
        if (rc < 0) return rc;
        if (line[0] == '@') {
            free(line);
            return mcdc_error_set(MCDC_EINVAL, "source file %s names another @FILE; it must hold the source itself", spec + 1);
        }
        rc = mcdc_source_open(out, line);
        free(line);
        return rc;
    }
    if (!strncmp(spec, "sim:", 4)) {
        if (!spec[4])
            return mcdc_error_set(MCDC_EINVAL, "source 'sim:' names no database file"),
                   mcdc_error_hint("sim:PATH, e.g. sim:./demo/sim.db");
        return mcdc_sim_source_open(out, spec + 4);
    }
    if (!strncmp(spec, "odbc:", 5))
        return mcdc_mssql_source_open(out, spec + 5);
    char masked[512];
    mcdc_secret_mask_str(masked, sizeof masked, spec);
    return mcdc_error_set(MCDC_EINVAL, "unknown source '%s': expected sim:PATH, odbc:CONNECTION-STRING or @FILE", masked),
           mcdc_error_hint("e.g. --source sim:./demo/sim.db");
}

int mcdc_source_set_partitions(mcdc_source *src, int n)
{
    if (n < 1 || n > 64)
        return mcdc_error_set(MCDC_EINVAL, "numPartitions=%d: expected 1 to 64", n),
               mcdc_error_hint("give the number of connections one batch is read over, e.g. --option numPartitions=4");
    src->num_partitions = n;
    return 0;
}

void mcdc_source_close(mcdc_source *src)
{
    if (src) src->ops->close(src);
}

void mcdc_capture_instances_free(mcdc_capture_instance *a, size_t n)
{
    if (!a) return;
    for (size_t i = 0; i < n; i++) {
        free(a[i].name);
        free(a[i].source_schema);
        free(a[i].source_table);
    }
    free(a);
}

void mcdc_ddl_entries_free(mcdc_ddl_entry *a, size_t n)
{
    if (!a) return;
    for (size_t i = 0; i < n; i++) {
        free(a[i].ddl_command);
        free(a[i].column_name);
    }
    free(a);
}

/* ---- several position questions at once ------------------------------------------------- */

/* The commit time of @p lsn, *has false when no mapping entry has it (or it is zero). */
static int commit_ts(mcdc_source *src, const mcdc_lsn *lsn, bool *has, int64_t *out)
{
    *has = false;
    *out = 0;
    if (mcdc_lsn_is_zero(lsn))
        return 0;
    int rc = src->ops->lsn_to_commit_ts(src, lsn, out);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        *out = 0;
        return 0;
    }
    if (rc == 0)
        *has = true;
    return rc;
}

int mcdc_source_positions(mcdc_source *src, mcdc_positions *q)
{
    return src->ops->positions ? src->ops->positions(src, q) : mcdc_source_positions_each(src, q);
}

int mcdc_source_why_missing(mcdc_source *src, const char *ci)
{
    if (!src->ops->captured_columns)
        return 0;
    mcdc_schema *cols = NULL;
    int rc = src->ops->captured_columns(src, ci, &cols);
    mcdc_schema_free(cols);
    if (rc == MCDC_ESOURCE)
        return rc;
    mcdc_error_clear();
    return 0;
}

int mcdc_source_positions_each(mcdc_source *src, mcdc_positions *q)
{
    int rc = 0;
    q->has_max_ts = q->has_min_ts = q->has_now = false;
    if (q->ask & (MCDC_POS_MIN | MCDC_POS_MIN_TS)) {
        if ((rc = src->ops->min_lsn(src, q->ci, &q->min_lsn)) < 0)
            return rc;
        if ((q->ask & MCDC_POS_MIN_TS) &&
            !(q->has_known_min && mcdc_lsn_cmp(&q->min_lsn, &q->known_min) == 0) &&
            (rc = commit_ts(src, &q->min_lsn, &q->has_min_ts, &q->min_ts_us)) < 0)
            return rc;
    }
    if (q->ask & MCDC_POS_AT)
        for (int i = 0; i < q->n_at && i < MCDC_POS_MAX_AT; i++)
            if ((rc = commit_ts(src, &q->at[i], &q->has_at_ts[i], &q->at_ts_us[i])) < 0)
                return rc;
    if (q->ask & MCDC_POS_NTH) {
        q->nth_found = 0;
        if ((rc = src->ops->nth_commit_after(src, &q->nth_after, q->nth_n, &q->nth,
                                             &q->nth_ts_us, &q->nth_found)) < 0)
            return rc;
    }
    if (q->ask & (MCDC_POS_MAX | MCDC_POS_MAX_TS)) {
        if ((rc = src->ops->max_lsn(src, &q->max_lsn)) < 0)
            return rc;
        if ((q->ask & MCDC_POS_MAX_TS) &&
            !(q->has_known_max && mcdc_lsn_cmp(&q->max_lsn, &q->known_max) == 0) &&
            (rc = commit_ts(src, &q->max_lsn, &q->has_max_ts, &q->max_ts_us)) < 0)
            return rc;
    }
    if (q->ask & MCDC_POS_NOW) {
        if (src->ops->server_now(src, &q->now_us) == 0)
            q->has_now = true;
        else
            mcdc_error_clear();
    }
    return 0;
}
