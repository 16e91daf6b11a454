/*
 * pipeline/facts.c: the facts of a batch and the two table schemas the stream writes.
 *
 * A batch's facts (rows, counts per operation, LSN and commit-time ranges) are counted
 * from the rows as they go into the bronze data file, so facts and data come from the
 * same single read (invariant 5). They travel twice: as bronze commit N's userMetadata
 * (compact JSON, anchor-features §2.4) and as the batch's row of the facts table
 * (§2.5). A replay that finds bronze already holding N takes them back from the
 * userMetadata instead of reading the source again (invariant 2). The userMetadata also
 * carries the batch's range (start_lsn, end_lsn: offsets/N's after and upto), so a
 * replay counts bronze commit N as its own only when the ranges are equal (invariant 10).
 * Design: docs/architecture.md §3, §5.
 */
#include "mcdc/pipeline.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/time.h"

void mcdc_batch_facts_add(mcdc_batch_facts *f, const mcdc_lsn *start_lsn, int operation,
                          int64_t commit_ts_us)
{
    if (f->rows == 0) {
        f->min_lsn = f->max_lsn = *start_lsn;
        f->min_commit_ts_us = f->max_commit_ts_us = commit_ts_us;
    } else {
        if (mcdc_lsn_cmp(start_lsn, &f->min_lsn) < 0)
            f->min_lsn = *start_lsn;
        if (mcdc_lsn_cmp(start_lsn, &f->max_lsn) > 0)
            f->max_lsn = *start_lsn;
        if (commit_ts_us < f->min_commit_ts_us)
            f->min_commit_ts_us = commit_ts_us;
        if (commit_ts_us > f->max_commit_ts_us)
            f->max_commit_ts_us = commit_ts_us;
    }
    f->rows++;
    if (operation == 1)
        f->deletes++;
    else if (operation == 2)
        f->inserts++;
    else if (operation == 4)
        f->updates++;
}

int mcdc_batch_facts_to_json(mcdc_buf *out, const mcdc_batch_facts *f, int64_t batch_id,
                             const char *app_id, const mcdc_batch_range *range)
{
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN], t1[MCDC_TIME_STRLEN], t2[MCDC_TIME_STRLEN];
    int rc;
    if (!f->counts_known) {
        rc = mcdc_buf_puts(out, "{\"rows\":null,\"min_lsn\":null,\"max_lsn\":null,"
                                "\"min_commit_ts\":null,\"max_commit_ts\":null,\"deletes\":null,"
                                "\"inserts\":null,\"updates\":null");
    } else if (f->rows == 0) {
        rc = mcdc_buf_puts(out, "{\"rows\":0,\"min_lsn\":null,\"max_lsn\":null,"
                                "\"min_commit_ts\":null,\"max_commit_ts\":null,\"deletes\":0,"
                                "\"inserts\":0,\"updates\":0");
    } else {
        rc = mcdc_buf_printf(out, "{\"rows\":%lld,\"min_lsn\":\"%s\",\"max_lsn\":\"%s\","
                                  "\"min_commit_ts\":\"%s\",\"max_commit_ts\":\"%s\","
                                  "\"deletes\":%lld,\"inserts\":%lld,\"updates\":%lld",
                             (long long)f->rows, mcdc_lsn_format(a, &f->min_lsn),
                             mcdc_lsn_format(b, &f->max_lsn),
                             mcdc_time_format(t1, f->min_commit_ts_us, 3, false),
                             mcdc_time_format(t2, f->max_commit_ts_us, 3, false),
                             (long long)f->deletes, (long long)f->inserts,
                             (long long)f->updates);
    }
    if (rc < 0)
        return rc;
    if ((rc = mcdc_buf_printf(out, ",\"batch_id\":%lld,\"app_id\":", (long long)batch_id)) < 0 ||
        (rc = mcdc_json_quote(out, app_id, strlen(app_id))) < 0)
        return rc;
    if (range && (rc = mcdc_buf_printf(out, ",\"start_lsn\":\"%s\",\"end_lsn\":\"%s\"",
                                       mcdc_lsn_format(a, &range->start.lsn),
                                       mcdc_lsn_format(b, &range->end.lsn))) < 0)
        return rc;
    return mcdc_buf_putc(out, '}');
}

int mcdc_batch_meta_range(const char *json, mcdc_lsn *start, mcdc_lsn *end)
{
    json_error_t err;
    json_t *j = json_loads(json ? json : "", 0, &err);
    int rc = 0;
    if (!json_is_object(j)) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "batch userMetadata: not a JSON object");
        goto done;
    }
    json_t *js = json_object_get(j, "start_lsn"), *je = json_object_get(j, "end_lsn");
    if (!js && !je) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "batch userMetadata: no start_lsn and end_lsn "
                            "(written before batches recorded their range)");
        goto done;
    }
    if (!json_is_string(js) || !json_is_string(je) ||
        mcdc_lsn_parse(start, json_string_value(js)) < 0 ||
        mcdc_lsn_parse(end, json_string_value(je)) < 0)
        rc = mcdc_error_set(MCDC_ECORRUPT, "batch userMetadata: start_lsn and end_lsn are not "
                            "both LSNs");
done:
    json_decref(j);
    return rc;
}

static int get_count(int64_t *out, bool *known, json_t *j, const char *key)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v)) {
        *known = false;
        *out = 0;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "batch userMetadata: \"%s\" is not a count", key);
    *out = json_integer_value(v);
    return 0;
}

int mcdc_batch_facts_parse_json(mcdc_batch_facts *out, int64_t *batch_id, char **app_id,
                                const char *json)
{
    mcdc_batch_facts f = MCDC_BATCH_FACTS_INIT;
    if (app_id)
        *app_id = NULL;
    *batch_id = -1;
    json_error_t err;
    json_t *j = json_loads(json ? json : "", 0, &err);
    int rc = 0;
    if (!json_is_object(j)) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "batch userMetadata: not a JSON object");
        goto done;
    }
    bool known = true;
    if ((rc = get_count(&f.rows, &known, j, "rows")) < 0 ||
        (rc = get_count(&f.deletes, &known, j, "deletes")) < 0 ||
        (rc = get_count(&f.inserts, &known, j, "inserts")) < 0 ||
        (rc = get_count(&f.updates, &known, j, "updates")) < 0)
        goto done;
    f.counts_known = known;
    if (known && f.rows > 0) {
        const char *keys[4] = { "min_lsn", "max_lsn", "min_commit_ts", "max_commit_ts" };
        const char *v[4];
        for (int i = 0; i < 4; i++) {
            v[i] = json_string_value(json_object_get(j, keys[i]));
            if (!v[i]) {
                rc = mcdc_error_set(MCDC_ECORRUPT, "batch userMetadata: \"%s\" missing", keys[i]);
                goto done;
            }
        }
        if (mcdc_lsn_parse(&f.min_lsn, v[0]) < 0 || mcdc_lsn_parse(&f.max_lsn, v[1]) < 0 ||
            mcdc_time_parse(&f.min_commit_ts_us, v[2]) < 0 ||
            mcdc_time_parse(&f.max_commit_ts_us, v[3]) < 0) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "batch userMetadata: bad LSN or commit time");
            goto done;
        }
    }
    json_t *b = json_object_get(j, "batch_id");
    if (json_is_integer(b))
        *batch_id = json_integer_value(b);
    const char *a = json_string_value(json_object_get(j, "app_id"));
    if (app_id && a && !(*app_id = strdup(a)))
        rc = mcdc_error_set(MCDC_ENOMEM, "batch userMetadata: out of memory");
    *out = f;
done:
    json_decref(j);
    return rc;
}

/* ---- schemas ------------------------------------------------------------------------------ */

int mcdc_facts_schema(mcdc_schema **out)
{
    static const struct { const char *name; mcdc_type_id type; } cols[MCDC_FACTS_N_COLUMNS] = {
        { "app_id", MCDC_TYPE_STRING },
        { "batch_id", MCDC_TYPE_LONG },
        { "rows", MCDC_TYPE_LONG },
        { "min_lsn", MCDC_TYPE_STRING },
        { "max_lsn", MCDC_TYPE_STRING },
        { "min_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ },
        { "max_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ },
        { "deletes", MCDC_TYPE_LONG },
        { "inserts", MCDC_TYPE_LONG },
        { "updates", MCDC_TYPE_LONG },
        { "started_at", MCDC_TYPE_TIMESTAMP_NTZ },
        { "duration_ms", MCDC_TYPE_LONG },
        { "source_rtt_ms", MCDC_TYPE_DOUBLE },
        { "read_seconds", MCDC_TYPE_DOUBLE },
        { "read_mb", MCDC_TYPE_DOUBLE },
        { "network_wait_ms", MCDC_TYPE_LONG },
        { "retention_watermark_ts", MCDC_TYPE_TIMESTAMP_NTZ },
        { "retention_headroom_hours", MCDC_TYPE_DOUBLE },
        { "event", MCDC_TYPE_STRING },
        { "lost_from_ts", MCDC_TYPE_TIMESTAMP_NTZ },
        { "lost_to_ts", MCDC_TYPE_TIMESTAMP_NTZ },
        { "source_max_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ },
        { "capture_lag_seconds", MCDC_TYPE_DOUBLE },
        { "ingestion_lag_seconds", MCDC_TYPE_DOUBLE },
        { "end_lsn", MCDC_TYPE_STRING },
        { "end_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ },
        { "detail", MCDC_TYPE_STRING },
        { "target", MCDC_TYPE_STRING },
        { "written_at", MCDC_TYPE_TIMESTAMP_NTZ },
    };
    *out = NULL;
    mcdc_schema *s = mcdc_schema_new();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "facts schema: out of memory");
    for (int i = 0; i < MCDC_FACTS_N_COLUMNS; i++) {
        int rc = mcdc_schema_add(s, cols[i].name, cols[i].type, 0, 0, true);
        if (rc < 0) {
            mcdc_schema_free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

static const char *const bronze_meta_names[] = {
    "_capture_instance", "_start_lsn", "_seqval", "_operation", "_command_id", "_commit_ts",
    "_batch_id", "_snapshot", "_chunk",
};

int mcdc_bronze_schema(mcdc_schema **out, const mcdc_schema *captured, bool include_command_id)
{
    *out = NULL;
    for (size_t i = 0; i < captured->n_cols; i++)
        for (size_t k = 0; k < sizeof bronze_meta_names / sizeof *bronze_meta_names; k++)
            if (strcasecmp(captured->cols[i].name, bronze_meta_names[k]) == 0) {
                mcdc_error_set(MCDC_EINVAL, "captured column '%s' is named like bronze's "
                               "metadata column %s", captured->cols[i].name,
                               bronze_meta_names[k]);
                return mcdc_error_hint("capture the table without that column, or rename it");
            }
    mcdc_schema *s = mcdc_schema_new();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "bronze schema: out of memory");
    int rc = 0;
    if ((rc = mcdc_schema_add(s, "_capture_instance", MCDC_TYPE_STRING, 0, 0, true)) < 0 ||
        (rc = mcdc_schema_add(s, "_start_lsn", MCDC_TYPE_STRING, 0, 0, true)) < 0 ||
        (rc = mcdc_schema_add(s, "_seqval", MCDC_TYPE_STRING, 0, 0, true)) < 0 ||
        (rc = mcdc_schema_add(s, "_operation", MCDC_TYPE_INT, 0, 0, true)) < 0 ||
        (include_command_id &&
         (rc = mcdc_schema_add(s, "_command_id", MCDC_TYPE_INT, 0, 0, true)) < 0) ||
        (rc = mcdc_schema_add(s, "_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true)) < 0)
        goto fail;
    for (size_t i = 0; i < captured->n_cols; i++) {
        const mcdc_column *c = &captured->cols[i];
        if ((rc = mcdc_schema_add(s, c->name, c->type, c->precision, c->scale, true)) < 0)
            goto fail;
    }
    if ((rc = mcdc_schema_add(s, "_batch_id", MCDC_TYPE_INT, 0, 0, true)) < 0 ||
        (rc = mcdc_schema_add(s, "_snapshot", MCDC_TYPE_STRING, 0, 0, true)) < 0 ||
        (rc = mcdc_schema_add(s, "_chunk", MCDC_TYPE_INT, 0, 0, true)) < 0)
        goto fail;
    *out = s;
    return 0;
fail:
    mcdc_schema_free(s);
    return rc;
}
