/*
 * cli/cmd_parquet_meta.c: `mssql-cdc parquet meta FILE`: print a Parquet file's footer:
 * schema, row groups, column chunks, encodings, codecs, sizes and statistics.
 *
 * --format json prints the document of mcdc_parquet_reader_meta_json; text prints the
 * same facts one per line. Reference: docs/reference/cli-parquet.md.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mcdc/parquet.h"

static const mcdc_opt opts[] = {
    { "format", 0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { 0 }
};

/* A scalar as text: strings bare, others as JSON. */
static void put_scalar(const json_t *v)
{
    if (json_is_string(v)) {
        fputs(json_string_value(v), stdout);
    } else {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        fputs(s ? s : "?", stdout);
        free(s);
    }
}

static void put_fields(const json_t *o, const char *const *skip)
{
    const char *k;
    json_t *v;
    bool first = true;
    json_object_foreach((json_t *)o, k, v) {
        bool skipped = false;
        for (const char *const *s = skip; *s; s++)
            skipped |= !strcmp(*s, k);
        if (skipped)
            continue;
        printf("%s%s=", first ? "" : " ", k);
        first = false;
        if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v); i++) {
                if (i)
                    putchar(',');
                put_scalar(json_array_get(v, i));
            }
        } else if (json_is_object(v)) {
            const char *k2;
            json_t *v2;
            bool f2 = true;
            putchar('{');
            json_object_foreach(v, k2, v2) {
                printf("%s%s=", f2 ? "" : " ", k2);
                put_scalar(v2);
                f2 = false;
            }
            putchar('}');
        } else {
            put_scalar(v);
        }
    }
}

static void print_text(const json_t *doc)
{
    printf("file: %s\n", json_string_value(json_object_get(doc, "file")));
    printf("size: %lld bytes\n", (long long)json_integer_value(json_object_get(doc, "file_size")));
    printf("rows: %lld\n", (long long)json_integer_value(json_object_get(doc, "num_rows")));
    if (json_object_get(doc, "created_by"))
        printf("created_by: %s\n", json_string_value(json_object_get(doc, "created_by")));
    printf("version: %lld\n", (long long)json_integer_value(json_object_get(doc, "version")));
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(doc, "key_value_metadata"), k, v) {
        printf("metadata: %s = ", k);
        put_scalar(v);
        putchar('\n');
    }
    printf("schema:\n");
    /* indent by nesting: a stack of remaining children counts */
    long long left[128];
    int depth = 0;
    json_t *schema = json_object_get(doc, "schema");
    for (size_t i = 0; i < json_array_size(schema); i++) {
        json_t *e = json_array_get(schema, i);
        printf("%*s", 2 + 2 * depth, "");
        printf("%s:", json_string_value(json_object_get(e, "name")));
        static const char *const skip[] = { "name", "num_children", NULL };
        putchar(' ');
        put_fields(e, skip);
        putchar('\n');
        if (depth > 0)
            left[depth - 1]--;
        long long nc = json_integer_value(json_object_get(e, "num_children"));
        if (nc > 0 && depth < 127) {
            left[depth++] = nc;
        } else {
            while (depth > 0 && left[depth - 1] <= 0)
                depth--;
        }
    }
    json_t *rgs = json_object_get(doc, "row_groups");
    for (size_t g = 0; g < json_array_size(rgs); g++) {
        json_t *rg = json_array_get(rgs, g);
        printf("row group %zu: ", g);
        static const char *const skip[] = { "columns", NULL };
        put_fields(rg, skip);
        putchar('\n');
        json_t *cols = json_object_get(rg, "columns");
        for (size_t c = 0; c < json_array_size(cols); c++) {
            json_t *col = json_array_get(cols, c);
            json_t *path = json_object_get(col, "path");
            printf("  column ");
            for (size_t p = 0; p < json_array_size(path); p++)
                printf("%s%s", p ? "." : "", json_string_value(json_array_get(path, p)));
            static const char *const skip2[] = { "path", NULL };
            putchar(' ');
            put_fields(col, skip2);
            putchar('\n');
        }
    }
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    const char *fmt = mcdc_cli_get(a, "format") ? mcdc_cli_get(a, "format") : "text";
    if (strcmp(fmt, "text") && strcmp(fmt, "json"))
        return mcdc_cli_usage_error(a->cmd, "--format must be text or json, not '%s'", fmt);
    mcdc_parquet_reader *r;
    if (mcdc_parquet_reader_open(&r, a->pos[0], NULL) < 0)
        return mcdc_cli_fail();
    json_t *doc;
    if (mcdc_parquet_reader_meta_json(r, &doc) < 0) {
        mcdc_parquet_reader_free(r);
        return mcdc_cli_fail();
    }
    if (!strcmp(fmt, "json")) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
    } else {
        print_text(doc);
    }
    fflush(stdout);
    json_decref(doc);
    mcdc_parquet_reader_free(r);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_parquet_meta = {
    "parquet meta",
    "print the schema, row groups, column chunks and statistics of a Parquet file",
    "FILE",
    1, 1, opts,
    "mssql-cdc parquet meta part-0001.parquet --format json",
    run
};
