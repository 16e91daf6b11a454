/* Unit tests for run/config.c: a config with sources, defaults, tables, include patterns
 * and options is read with its lines; unknown keys, wrong types, missing sources and YAML
 * syntax errors are refused naming the file, the line and the key; relative paths resolve
 * against the config's directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/run.h"

static char root[256], path[300];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-run-config-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(path, sizeof path, "%s/run.yaml", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_config(const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void refused(const char *text, const char *want)
{
    write_config(text);
    mcdc_run_config *c = (mcdc_run_config *)1;
    assert_int_equal(MCDC_EINVAL, mcdc_run_config_load(&c, path));
    assert_null(c);
    if (!strstr(mcdc_error_last()->message, want))
        fail_msg("'%s' not in '%s'", want, mcdc_error_last()->message);
}

static void test_run_config__reads_sources_defaults_tables(void **state)
{
    (void)state;
    write_config("warehouse: lake\n"
                 "sources:\n"
                 "  shop: {source: \"sim:shop.db\"}\n"
                 "  other: \"@conn/other.conn\"\n"
                 "defaults:\n"
                 "  facts: ops.facts\n"
                 "  trigger: interval:5s\n"
                 "  options: {failOnDataLoss: \"false\"}\n"
                 "tables:\n"
                 "  - source: shop\n"
                 "    capture_instance: dbo_orders\n"
                 "    target: bronze.orders\n"
                 "    app_id: orders-v1\n"
                 "    checkpoint: ck/orders\n"
                 "  - source: other\n"
                 "    include: [\"dbo_*\", \"sales_*\"]\n"
                 "    exclude: dbo_tmp\n"
                 "    target: \"bronze.{table}\"\n"
                 "    app_id: \"{ci}\"\n"
                 "    checkpoint: \"ck/{ci}\"\n"
                 "on_error: stop-all\n"
                 "metrics: {listen: 127.0.0.1:9464}\n");
    mcdc_run_config *c = NULL;
    assert_int_equal(0, mcdc_run_config_load(&c, path));
    char want[400];
    snprintf(want, sizeof want, "%s/lake", root);
    assert_string_equal(want, c->warehouse);
    snprintf(want, sizeof want, "%s/run-state", root);
    assert_string_equal(want, c->state_dir);
    assert_int_equal(2, c->n_sources);
    snprintf(want, sizeof want, "sim:%s/shop.db", root);
    assert_string_equal(want, c->sources[0].spec);
    snprintf(want, sizeof want, "@%s/conn/other.conn", root);
    assert_string_equal(want, c->sources[1].spec);
    assert_string_equal("ops.facts", c->defaults.value[MCDC_RUN_KEY_FACTS]);
    assert_int_equal(6, c->defaults.key_line[MCDC_RUN_KEY_FACTS]);
    assert_int_equal(1, c->defaults.n_options);
    assert_string_equal("failOnDataLoss=false", c->defaults.options[0]);
    assert_int_equal(2, c->n_entries);
    assert_string_equal("dbo_orders", c->entries[0].value[MCDC_RUN_KEY_CAPTURE_INSTANCE]);
    assert_int_equal(10, c->entries[0].line);
    assert_int_equal(2, c->entries[1].n_include);
    assert_string_equal("sales_*", c->entries[1].include[1]);
    assert_int_equal(1, c->entries[1].n_exclude);
    assert_string_equal("bronze.{table}", c->entries[1].value[MCDC_RUN_KEY_TARGET]);
    assert_true(c->stop_all);
    assert_string_equal("127.0.0.1:9464", c->metrics_listen);
    mcdc_run_config_free(c);
}

static void test_run_config__refusals_name_the_line_and_key(void **state)
{
    (void)state;
    const char *head = "sources:\n  shop: {source: \"sim:shop.db\"}\ntables:\n";
    char text[1024];
    snprintf(text, sizeof text, "%s  - source: shop\n    capture_instance: a\n    tagret: x\n", head);
    refused(text, "run.yaml line 6: unknown key 'tagret' in a table");
    snprintf(text, sizeof text, "%s  - source: shop\n    capture_instance: [a, b]\n", head);
    refused(text, "line 5: capture_instance: expected a value");
    snprintf(text, sizeof text, "%s  - source: nope\n    capture_instance: a\n", head);
    refused(text, "line 4: source: 'nope' is not among sources:");
    snprintf(text, sizeof text, "%s  - source: shop\n", head);
    refused(text, "line 4: capture_instance: missing (or include:)");
    snprintf(text, sizeof text, "%s  - source: shop\n    capture_instance: a\n    include: [\"x\"]\n", head);
    refused(text, "capture_instance and include: give one or the other");
    snprintf(text, sizeof text, "defaults:\n  capture_instance: a\n%s  - capture_instance: a\n", head);
    refused(text, "line 2: defaults: capture_instance is not a default");
    snprintf(text, sizeof text, "%s  - source: shop\n    capture_instance: a\nwarehous: x\n", head);
    refused(text, "line 6: unknown key 'warehous'");
    snprintf(text, sizeof text, "%s  - source: shop\n    capture_instance: a\non_error: sometimes\n", head);
    refused(text, "line 6: on_error: expected stop-table or stop-all");
    snprintf(text, sizeof text, "%s  - source: shop\n    include: [\"a*\"]\n    include: [\"b*\"]\n", head);
    refused(text, "line 6: include: given twice in a table");
    refused("sources:\n  shop: {source: \"sim:shop.db\"\ntables: []\n", "run.yaml line 3");
    refused("sources:\n  shop: {source: \"sim:shop.db\"}\n", "no tables");
    snprintf(text, sizeof text, "%s  - {source: shop, capture_instance: a}\ntables: []\n", head);
    refused(text, "line 5: tables: given twice");
    refused("sources:\n  shop: {source: \"sim:a\"}\n  shop: {source: \"sim:b\"}\ntables:\n"
            "  - {source: shop, capture_instance: a}\n", "line 3: source shop is defined twice");
}

static void test_run_config__missing_file(void **state)
{
    (void)state;
    mcdc_run_config *c = NULL;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_run_config_load(&c, "/nonexistent/run.yaml"));
    assert_non_null(strstr(mcdc_error_last()->message, "/nonexistent/run.yaml"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_config__reads_sources_defaults_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_config__refusals_name_the_line_and_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_config__missing_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
