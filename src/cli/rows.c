/*
 * cli/rows.c: printing rows of a flat schema as text, jsonl or csv (see rows.h).
 *
 * Guarantees: every row ends with a newline; a failed write is MCDC_EIO naming the cause;
 * the buffer is flushed at 64 KiB and large nested cells bypass it, so output starts
 * before the reader is done and such a cell is not copied again.
 */
#include "rows.h"

#include <errno.h>
#include <string.h>

#include "mcdc/error.h"

#define FLUSH_AT ((size_t)1 << 16)

int mcdc_cli_rows_format_named(const char *name)
{
    if (!name || !strcmp(name, "text"))
        return MCDC_CLI_ROWS_TEXT;
    if (!strcmp(name, "jsonl"))
        return MCDC_CLI_ROWS_JSONL;
    if (!strcmp(name, "csv"))
        return MCDC_CLI_ROWS_CSV;
    return -1;
}

static int write_out(mcdc_cli_rows *p, const void *data, size_t n)
{
    if (n && fwrite(data, 1, n, p->f) != n)
        return mcdc_error_set(MCDC_EIO, "writing the rows failed: %s", strerror(errno));
    return 0;
}

static int flush(mcdc_cli_rows *p)
{
    int rc = write_out(p, p->out.ptr, p->out.len);
    mcdc_buf_clear(&p->out);
    return rc;
}

int mcdc_cli_rows_begin(mcdc_cli_rows *p, FILE *f, mcdc_cli_rows_format format,
                        const mcdc_schema *s, mcdc_cli_rows_nested_fn is_nested, const void *src)
{
    *p = (mcdc_cli_rows){ f, s, format, is_nested, src, MCDC_BUF_INIT(SIZE_MAX) };
    if (format == MCDC_CLI_ROWS_JSONL)
        return 0;
    bool csv = format == MCDC_CLI_ROWS_CSV;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->n_cols; i++) {
        if (i)
            rc = mcdc_buf_putc(&p->out, csv ? ',' : '\t');
        if (rc == 0 && csv) {
            mcdc_column c = { s->cols[i].name, MCDC_TYPE_STRING, 0, 0, false };
            mcdc_value v = { .is_null = false };
            v.v.s.ptr = s->cols[i].name;
            v.v.s.len = strlen(s->cols[i].name);
            rc = mcdc_value_to_csv(&p->out, &c, &v);
        } else if (rc == 0) {
            rc = mcdc_buf_puts(&p->out, s->cols[i].name);
        }
    }
    return rc ? rc : mcdc_buf_putc(&p->out, '\n');
}

/* A nested cell in jsonl: its JSON text as it is; a large one straight out. */
static int put_json_text(mcdc_cli_rows *p, const mcdc_value *v)
{
    if (v->v.s.len < FLUSH_AT)
        return mcdc_buf_put(&p->out, v->v.s.ptr, v->v.s.len);
    int rc = flush(p);
    return rc ? rc : write_out(p, v->v.s.ptr, v->v.s.len);
}

int mcdc_cli_rows_put(mcdc_cli_rows *p, const mcdc_value *row)
{
    const mcdc_schema *s = p->schema;
    bool jsonl = p->format == MCDC_CLI_ROWS_JSONL, csv = p->format == MCDC_CLI_ROWS_CSV;
    int rc = jsonl ? mcdc_buf_putc(&p->out, '{') : 0;
    for (size_t i = 0; rc == 0 && i < s->n_cols; i++) {
        const mcdc_column *c = &s->cols[i];
        const mcdc_value *v = &row[i];
        if (i)
            rc = mcdc_buf_putc(&p->out, jsonl || csv ? ',' : '\t');
        if (rc)
            break;
        if (jsonl) {
            rc = mcdc_json_quote(&p->out, c->name, strlen(c->name));
            if (rc == 0)
                rc = mcdc_buf_putc(&p->out, ':');
            if (rc == 0 && !v->is_null && p->is_nested && p->is_nested(p->src, i))
                rc = put_json_text(p, v);
            else if (rc == 0)
                rc = mcdc_value_to_json(&p->out, c, v);
        } else if (csv) {
            rc = mcdc_value_to_csv(&p->out, c, v);
        } else {
            rc = mcdc_value_to_text(&p->out, c, v);
        }
    }
    if (rc == 0 && jsonl)
        rc = mcdc_buf_putc(&p->out, '}');
    if (rc == 0)
        rc = mcdc_buf_putc(&p->out, '\n');
    if (rc == 0 && p->out.len >= FLUSH_AT)
        rc = flush(p);
    return rc;
}

int mcdc_cli_rows_end(mcdc_cli_rows *p)
{
    int rc = flush(p);
    if (fflush(p->f) != 0 && rc == 0)
        rc = mcdc_error_set(MCDC_EIO, "writing the rows failed: %s", strerror(errno));
    mcdc_buf_dispose(&p->out);
    return rc;
}
