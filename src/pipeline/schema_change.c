/*
 * pipeline/schema_change.c: DDL on the source table, found before a batch reads.
 *
 * Every batch plans with the DDL history of the capture instance it reads, over its range
 * (after, upto] (one ddl_history question), and only when there is DDL with the captured
 * columns (one captured_columns question). What SQL Server does on each DDL
 * (anchor-features §4.4 item 7) and what the stream does:
 *
 *   DDL                          capture instance            stream (classify)
 *   ADD COLUMN                   unchanged: not captured     goes on; the event says so and
 *                                                            names the switch procedure
 *   DROP COLUMN                  still captured, NULL after  goes on; bronze keeps it
 *   ALTER COLUMN, a widening     converted, new type         goes on; bronze widens in the
 *                                                            batch's commit (typeWidening)
 *   ALTER COLUMN, anything else  converted, new type         MCDC_ESCHEMA before reading
 *
 * With --schema-change fail every DDL is MCDC_ESCHEMA before reading; nothing is recorded
 * for the batch, so a run with classify plans the same range and goes on. Each DDL becomes
 * one `schema_change` facts row of the batch (detail: the statement, then what the stream
 * did), written in the batch's own facts commit, so once. Bronze's widening needs
 * delta.enableTypeWidening=true on bronze (`mssql-cdc table set-property`); the check is
 * made here, before reading, and again by the commit itself.
 * Design: docs/guides/schema-changes.md; anchor-features §1 ("schema changes/CI switch").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/log.h"
#include "pipeline/stream_int.h"

/* ---- the widening rule ------------------------------------------------------------------ */

static int int_digits(mcdc_type_id t)
{
    switch (t) {
    case MCDC_TYPE_BYTE: return 3;
    case MCDC_TYPE_SHORT: return 5;
    case MCDC_TYPE_INT: return 10;
    case MCDC_TYPE_LONG: return 20;
    default: return 0;
    }
}

bool mcdc_stream__type_holds(const mcdc_column *from, const mcdc_column *to)
{
    if (mcdc_delta_type_same(from, to))
        return true;
    int df = int_digits(from->type), dt = int_digits(to->type);
    if (df && dt)
        return df <= dt;
    if (to->type == MCDC_TYPE_DOUBLE)
        return from->type == MCDC_TYPE_FLOAT || (df && df <= 10);
    if (to->type == MCDC_TYPE_DECIMAL && df)
        return to->precision - to->scale >= df;
    if (to->type == MCDC_TYPE_DECIMAL && from->type == MCDC_TYPE_DECIMAL)
        return to->scale >= from->scale &&
               to->precision - to->scale >= from->precision - from->scale;
    return from->type == MCDC_TYPE_DATE && to->type == MCDC_TYPE_TIMESTAMP_NTZ;
}

/* ---- the DDL of a batch ------------------------------------------------------------------- */

void mcdc_stream__ddl_clear(mcdc_stream *s)
{
    for (size_t i = 0; i < s->n_ddl; i++)
        free(s->ddl[i].detail);
    free(s->ddl);
    s->ddl = NULL;
    s->n_ddl = 0;
    s->ddl_batch = -1;
}

static bool contains_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, word, n) == 0)
            return true;
    return false;
}

/* The column a DDL statement names after ADD, DROP COLUMN or ALTER COLUMN, into @p out
 * ("" when none): sys.sp_cdc_get_ddl_history gives the statement, not the column. */
void mcdc_stream__ddl_column(char out[130], const char *ddl)
{
    static const char *const kw[] = { "ALTER COLUMN", "DROP COLUMN", "ADD" };
    out[0] = 0;
    for (size_t k = 0; ddl && k < sizeof kw / sizeof *kw && !out[0]; k++) {
        size_t n = strlen(kw[k]);
        for (const char *p = ddl; *p && !out[0]; p++) {
            if (strncasecmp(p, kw[k], n) != 0 || (p > ddl && p[-1] != ' ' && p[-1] != '\t') ||
                (p[n] != ' ' && p[n] != '\t' && p[n] != '['))
                continue;
            const char *q = p + n;
            while (*q == ' ' || *q == '\t')
                q++;
            if (strncasecmp(q, "COLUMN ", 7) == 0) /* ADD COLUMN x (not T-SQL, but harmless) */
                q += 7;
            char close = *q == '[' ? ']' : *q == '"' ? '"' : 0;
            if (close)
                q++;
            size_t i = 0;
            while (q[i] && i < 129 && (close ? q[i] != close : q[i] != ' ' && q[i] != '\t' &&
                                                           q[i] != ',' && q[i] != '('))
                i++;
            memcpy(out, q, i);
            out[i] = 0;
        }
    }
}

/* What the stream makes of one DDL entry, after the statement text. */
static int describe(mcdc_buf *d, mcdc_stream *s, const mcdc_ddl_entry *e, const mcdc_schema *old,
                    const mcdc_schema *now)
{
    int rc = mcdc_buf_puts(d, e->ddl_command ? e->ddl_command : "");
    char parsed[130];
    mcdc_stream__ddl_column(parsed, e->ddl_command);
    const char *col = e->column_name ? e->column_name : parsed[0] ? parsed : NULL;
    int ko = col ? mcdc_schema_find(old, col) : -1, kn = col ? mcdc_schema_find(now, col) : -1;
    char t1[48], t2[48];
    if (rc < 0 || !col)
        return rc;
    if (kn < 0 && ko < 0)
        return mcdc_buf_printf(d, " -- column %s is not captured by %s: to capture it, enable a "
                               "new capture instance with it and switch the stream to it "
                               "(sql/switch_capture_instance.sql; docs/guides/schema-changes.md)",
                               col, s->ci);
    if (kn >= 0 && contains_word(e->ddl_command ? e->ddl_command : "", "DROP COLUMN"))
        return mcdc_buf_printf(d, " -- column %s stays captured by %s and reads NULL from here on; "
                               "bronze keeps it", col, s->ci);
    int kw = col && s->bronze_widened ? mcdc_schema_find(s->bronze_widened, col) : -1;
    const mcdc_column *was = kw >= 0 ? &s->bronze_widened->cols[kw] : ko >= 0 ? &old->cols[ko] : NULL;
    if (was && kn >= 0 && !mcdc_delta_type_same(was, &now->cols[kn]))
        return mcdc_buf_printf(d, " -- column %s widened from %s to %s in bronze", col,
                               mcdc_type_name(t1, sizeof t1, was),
                               mcdc_type_name(t2, sizeof t2, &now->cols[kn]));
    if (kn >= 0 && ko < 0)
        return mcdc_buf_printf(d, " -- column %s is captured by %s now: added to bronze", col,
                               s->ci);
    if (kn >= 0)
        return mcdc_buf_printf(d, " -- column %s keeps its type %s in bronze", col,
                               mcdc_type_name(t1, sizeof t1, &now->cols[kn]));
    return 0;
}

static int ddl_fail_error(mcdc_stream *s, const mcdc_ddl_entry *e, size_t n)
{
    char l[MCDC_LSN_STRLEN];
    mcdc_error_set(MCDC_ESCHEMA, "%s: DDL on the source table at %s: %s%s (--schema-change fail)",
                   s->ci, mcdc_lsn_format(l, &e->ddl_lsn),
                   e->ddl_command ? e->ddl_command : "", n > 1 ? " (and more)" : "");
    return mcdc_error_hint("nothing of the batch was read or written; review the change "
                           "(docs/guides/schema-changes.md), then run the stream again with "
                           "--schema-change classify to go on through it");
}

void mcdc_stream__schema_hint(mcdc_stream *s)
{
    if (mcdc_error_last()->hint[0])
        return;
    mcdc_error_hint("let bronze widen its columns (engines without Delta's typeWidening feature "
                    "can no longer read it): mssql-cdc table set-property %s "
                    "delta.enableTypeWidening=true, then run the stream again; or stream to a "
                    "new --target", s->o.target);
}

/* A captured column whose new type the stream's type cannot hold. */
static int cannot_hold(mcdc_stream *s, const mcdc_column *o, const mcdc_column *n,
                       const mcdc_lsn *at)
{
    char t1[48], t2[48], l[MCDC_LSN_STRLEN];
    mcdc_error_set(MCDC_ESCHEMA, "%s: column %s changed from %s to %s at %s: the stream's %s "
                   "cannot hold every %s value", s->ci, o->name,
                   mcdc_type_name(t1, sizeof t1, o), mcdc_type_name(t2, sizeof t2, n),
                   mcdc_lsn_format(l, at), t1, t2);
    return mcdc_error_hint("nothing of the batch was read or written; the stream cannot go on "
                           "through this change: stream the table to a new --target with a new "
                           "--checkpoint and --app-id (with --bootstrap), or capture the column "
                           "again in a new capture instance (docs/guides/schema-changes.md)");
}

int mcdc_stream__take_columns(mcdc_stream *s, mcdc_schema *now)
{
    /* bronze's write schema again, from the new columns (reads only; the batch's commit
     * evolves bronze) */
    mcdc_schema *old = s->captured;
    mcdc_schema *old_bs = s->bronze_schema, *old_missing = s->bronze_missing;
    int *old_map = s->bronze_map;
    s->captured = now;
    s->bronze_schema = NULL;
    s->bronze_missing = NULL;
    s->bronze_map = NULL;
    int rc = mcdc_stream__prepare_bronze(s);
    if (rc < 0) {
        mcdc_schema_free(s->bronze_schema);
        mcdc_schema_free(s->bronze_missing);
        free(s->bronze_map);
        s->captured = old;
        s->bronze_schema = old_bs;
        s->bronze_missing = old_missing;
        s->bronze_map = old_map;
        return rc;
    }
    mcdc_schema_free(old);
    mcdc_schema_free(old_bs);
    mcdc_schema_free(old_missing);
    free(old_map);
    return 0;
}

/* The commit time of a DDL's row: that of the last commit at or before its LSN (a DDL LSN
 * is no commit's; anchor-features §2.5), none from a source that cannot tell. */
static int ddl_time(mcdc_stream *s, ddl_event *e)
{
    e->has_ts = false;
    if (!s->o.source->ops->commit_at_or_before)
        return 0;
    mcdc_lsn at;
    int rc = s->o.source->ops->commit_at_or_before(s->o.source, &e->lsn, &at, &e->commit_ts_us);
    if (rc == MCDC_ENOTFOUND || rc == MCDC_EUNSUPPORTED) {
        mcdc_error_clear();
        return 0;
    }
    e->has_ts = rc == 0;
    return rc;
}

int mcdc_stream__plan_ddl(mcdc_stream *s, const mcdc_lsn *after, const mcdc_lsn *upto,
                          int64_t batch_id)
{
    mcdc_stream__ddl_clear(s);
    if (!s->o.source->ops->ddl_history)
        return 0;
    mcdc_ddl_entry *e = NULL;
    size_t n = 0;
    mcdc_schema *now = NULL;
    int rc = s->o.source->ops->ddl_history(s->o.source, s->ci, after, upto, &e,
                                           &n);
    if (rc < 0 || n == 0)
        goto done;
    if (s->o.schema_change == MCDC_SCHEMA_CHANGE_FAIL) {
        rc = ddl_fail_error(s, &e[0], n);
        goto done;
    }
    if ((rc = s->o.source->ops->captured_columns(s->o.source, s->ci, &now)) < 0)
        goto done;
    /* the stream's columns must hold the new types (the first DDL that changed each) */
    bool changed = now->n_cols != s->captured->n_cols;
    for (size_t i = 0; i < s->captured->n_cols; i++) {
        const mcdc_column *o = &s->captured->cols[i];
        int k = mcdc_schema_find(now, o->name);
        if (k < 0) {
            changed = true;
            continue;
        }
        if (mcdc_delta_type_same(o, &now->cols[k]))
            continue;
        changed = true;
        if (!mcdc_stream__type_holds(o, &now->cols[k])) {
            const mcdc_lsn *at = &e[0].ddl_lsn;
            for (size_t j = 0; j < n; j++) {
                char c[130];
                mcdc_stream__ddl_column(c, e[j].ddl_command);
                if (strcasecmp(e[j].column_name ? e[j].column_name : c, o->name) == 0) {
                    at = &e[j].ddl_lsn;
                    break;
                }
            }
            rc = cannot_hold(s, o, &now->cols[k], at);
            goto done;
        }
    }
    /* what each DDL did, for its facts row */
    size_t n_rows = n < MAX_DDL_ROWS ? n : MAX_DDL_ROWS;
    if (!(s->ddl = calloc(n_rows, sizeof *s->ddl))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "stream: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t r = i < n_rows ? i : n_rows - 1; /* more than MAX_DDL_ROWS share the last row */
        mcdc_buf d = MCDC_BUF_INIT(1 << 16);
        if (s->ddl[r].detail)
            rc = mcdc_buf_printf(&d, "%s; ", s->ddl[r].detail);
        if (rc == 0)
            rc = describe(&d, s, &e[i], s->captured, now);
        if (rc < 0) {
            mcdc_buf_dispose(&d);
            break;
        }
        free(s->ddl[r].detail);
        s->ddl[r].detail = mcdc_buf_detach(&d);
        if (r == i)
            s->ddl[r].lsn = e[i].ddl_lsn;
        mcdc_log(MCDC_LOG_WARN, LOGGER, "batch %" PRId64 ": DDL on the source: %s", batch_id,
                 s->ddl[r].detail);
    }
    s->n_ddl = n_rows;
    s->ddl_batch = batch_id;
    for (size_t i = 0; i < n_rows && rc == 0; i++)
        rc = ddl_time(s, &s->ddl[i]);
    if (rc == 0 && changed && (rc = mcdc_stream__take_columns(s, now)) == 0)
        now = NULL;
done:
    if (rc < 0)
        mcdc_stream__ddl_clear(s);
    mcdc_schema_free(now);
    mcdc_ddl_entries_free(e, n);
    return rc;
}

int mcdc_stream__add_ddl_rows(facts_rows *f, mcdc_stream *s, int64_t batch_id)
{
    if (s->ddl_batch != batch_id)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < s->n_ddl && rc == 0; i++) {
        mcdc_offset at = { s->ddl[i].lsn, s->ddl[i].commit_ts_us, s->ddl[i].has_ts };
        rc = mcdc_stream__add_text_event_row(f, s, batch_id, "schema_change", &at,
                                             s->ddl[i].detail);
    }
    return rc;
}
