/* Unit tests for reconcile/reconcile.c on the simulator: a silver table built by a stream
 * and silver apply from a synthetic workload reconciles; then defects planted on silver,
 * each by a Delta commit that rewrites one file (a changed value, a missing row, an extra
 * row, a duplicated key, a NULL where the source has a value), are each named by key with
 * their status and nothing else is reported. Integer, composite (string, int), string and
 * uniqueidentifier keys. The CLI (MCDC_BIN) builds the tables and gives the exit codes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "unit/reconcile/plant.h"
#include "mcdc/reconcile.h"
#include "mcdc/source.h"

typedef struct fixture {
    char dir[256], db[300], silver[300], control[300], ci[64];
    const char *keys[4];
    size_t n_keys;
    const char *value_col; /* a decimal column to change */
    const char *null_col;  /* a nullable column to blank */
} fixture;

static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *bin(void)
{
    const char *b = getenv("MCDC_BIN");
    return b ? b : "mssql-cdc";
}

/* A simulator table @p table with @p schema and keys, a workload on it, a stream into
 * bronze and silver applied in files of 500 rows. */
static fixture *make(const char *table, const char *ci, const char *schema, const char *keys,
                     const char *value_col, const char *null_col)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mcdc-reconcile-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/db.sqlite", f->dir);
    snprintf(f->silver, sizeof f->silver, "%s/lake/silver/t", f->dir);
    snprintf(f->control, sizeof f->control, "%s/lake/ops/control", f->dir);
    snprintf(f->ci, sizeof f->ci, "%s", ci);
    char *kb = strdup(keys);
    for (char *p = strtok(kb, ","); p && f->n_keys < 4; p = strtok(NULL, ","))
        f->keys[f->n_keys++] = p;
    f->value_col = value_col;
    f->null_col = null_col;
    const char *M = bin();
    assert_int_equal(0, sh("%s sim init %s --table %s --keys %s --at 2026-10-01T13:59:00 --schema '%s' >/dev/null",
                           M, f->db, table, keys, schema));
    assert_int_equal(0, sh("%s sim capture %s --at 2026-10-01T13:59:30 >/dev/null", M, f->db));
    assert_int_equal(0, sh("%s sim workload %s --table %s --transactions 150 --rows-per-transaction 20 "
                           "--start 2026-10-01T14:00:00 --seed 3 >/dev/null", M, f->db, table));
    assert_int_equal(0, sh("%s --warehouse %s/lake stream --source sim:%s --capture-instance %s --target bronze.t "
                           "--app-id t --checkpoint %s/ck --facts ops.facts >/dev/null 2>&1", M, f->dir, f->db, ci,
                           f->dir));
    assert_int_equal(0, sh("%s --warehouse %s/lake silver apply --bronze bronze.t --silver silver.t "
                           "--capture-instance %s --keys %s --control ops.control --facts ops.facts "
                           "--target-file-rows 500 >/dev/null", M, f->dir, ci, keys));
    return f;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        sh("rm -rf %s", f->dir);
        free((char *)f->keys[0]);
        free(f);
    }
    return 0;
}

static mcdc_reconcile_result reconcile(fixture *f, double sample)
{
    mcdc_source *src = NULL;
    char spec[320];
    snprintf(spec, sizeof spec, "sim:%s", f->db);
    assert_int_equal(0, mcdc_source_open(&src, spec));
    mcdc_reconcile_options o = MCDC_RECONCILE_OPTIONS_INIT;
    o.source = src;
    o.capture_instance = f->ci;
    o.silver_name = "silver.t";
    o.silver_path = f->silver;
    o.control_path = f->control;
    o.keys = f->keys;
    o.n_keys = f->n_keys;
    o.bucket_rows = 300;
    o.sample = sample;
    o.seed = 7;
    o.has_seed = true;
    mcdc_reconcile_result r;
    assert_int_equal(0, mcdc_reconcile_run(&o, &r));
    mcdc_source_close(src);
    return r;
}

static int cli(fixture *f, const char *extra)
{
    return sh("%s --warehouse %s/lake reconcile --source sim:%s --capture-instance %s --silver silver.t "
              "--bronze bronze.t --control ops.control --bucket-rows 300 %s >%s/out.txt 2>&1",
              bin(), f->dir, f->db, f->ci, extra, f->dir);
}

/* The key of a silver row as reconcile names it: {"k": value, ...}. */
static char *key_json(const mcdc_schema *s, const mcdc_value *row, const fixture *f)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    mcdc_buf_putc(&b, '{');
    for (size_t i = 0; i < f->n_keys; i++) {
        int k = mcdc_schema_find(s, f->keys[i]);
        assert_true(k >= 0);
        if (i) mcdc_buf_putc(&b, ',');
        mcdc_json_quote(&b, f->keys[i], strlen(f->keys[i]));
        mcdc_buf_putc(&b, ':');
        mcdc_value_to_json(&b, &s->cols[k], &row[k]);
    }
    mcdc_buf_putc(&b, '}');
    return mcdc_buf_detach(&b);
}

typedef enum { CHANGE, DROP, DUP, EXTRA_ROW, BLANK } defect;

/* Plant @p d on the silver row whose key is @p target, rewriting the one file holding
 * it. Returns the key reconcile must name (for EXTRA_ROW the new key), caller frees. */
static char *plant(fixture *f, const char *target, defect d)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, f->silver, -1));
    char *named = NULL;
    for (size_t fi = 0; fi < snap->n_files && !named; fi++) {
        char *path = mcdc_delta_file_abspath(snap, snap->files[fi].path);
        mcdc_parquet_reader *rd = NULL;
        assert_int_equal(0, mcdc_parquet_reader_open(&rd, path, NULL));
        free(path);
        const mcdc_schema *s = mcdc_parquet_reader_schema(rd);
        mcdc_delta_writer *w = NULL;
        mcdc_delta_writer_options wo = MCDC_DELTA_WRITER_OPTIONS_INIT;
        assert_int_equal(0, mcdc_delta_writer_open(&w, snap, &wo));
        const mcdc_value *row;
        mcdc_value copy[64];
        char buf[128]; /* the new key of an extra row, written before the loop goes on */
        assert_true(s->n_cols <= 64);
        int rc;
        while ((rc = mcdc_parquet_reader_next(rd, &row)) == 1) {
            char *k = key_json(s, row, f);
            bool hit = strcmp(k, target) == 0;
            free(k);
            memcpy(copy, row, s->n_cols * sizeof *copy);
            if (hit) {
                named = strdup(target);
                int vc = mcdc_schema_find(s, f->value_col), nc = mcdc_schema_find(s, f->null_col);
                switch (d) {
                case CHANGE:
                    if (copy[vc].is_null) { copy[vc].is_null = false; copy[vc].v.dec = 0; }
                    copy[vc].v.dec += 1;
                    break;
                case BLANK:
                    assert_false(copy[nc].is_null);
                    copy[nc].is_null = true;
                    break;
                case DROP:
                    continue;
                case DUP:
                    assert_int_equal(0, mcdc_delta_writer_write(w, copy));
                    break;
                case EXTRA_ROW: {
                    assert_int_equal(0, mcdc_delta_writer_write(w, copy));
                    int k0 = mcdc_schema_find(s, f->keys[0]);
                    if (s->cols[k0].type == MCDC_TYPE_STRING) {
                        snprintf(buf, sizeof buf, "%.*s~", (int)copy[k0].v.s.len, copy[k0].v.s.ptr);
                        copy[k0].v.s.ptr = buf;
                        copy[k0].v.s.len = strlen(buf);
                    } else {
                        copy[k0].v.i += 1000000;
                    }
                    free(named);
                    named = key_json(s, copy, f);
                    break;
                }
                }
            }
            assert_int_equal(0, mcdc_delta_writer_write(w, copy));
        }
        assert_int_equal(0, rc);
        mcdc_parquet_reader_free(rd);
        if (named) {
            plant_state p = { &snap->files[fi], NULL, 0 };
            assert_int_equal(0, mcdc_delta_writer_finish(w, &p.files, &p.n_files));
            mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
            o.operation = "WRITE";
            assert_int_equal(0, mcdc_delta_commit(f->silver, plant_rewrite, &p, &o, NULL));
            mcdc_delta_files_free(p.files, p.n_files);
        }
        mcdc_delta_writer_free(w);
    }
    mcdc_delta_snapshot_free(snap);
    assert_non_null(named);
    return named;
}

/* Keys of silver rows number @p at (in scan order); with @p need_col, the first row at or
 * after it whose column is not NULL. */
static char *pick(fixture *f, size_t at, const char *need_col)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, f->silver, -1));
    mcdc_delta_scan *sc = NULL;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    assert_int_equal(0, mcdc_delta_scan_open(&sc, snap, &so));
    const mcdc_schema *s = mcdc_delta_scan_schema(sc);
    int nc = need_col ? mcdc_schema_find(s, need_col) : -1;
    const mcdc_value *row;
    char *k = NULL;
    for (size_t i = 0; !k && mcdc_delta_scan_next(sc, &row) == 1; i++)
        if (i >= at && (nc < 0 || !row[nc].is_null))
            k = key_json(s, row, f);
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    assert_non_null(k);
    return k;
}

static const char *status_of(const mcdc_reconcile_result *r, const char *key)
{
    for (size_t i = 0; i < r->n_keys; i++)
        if (strcmp(r->keys[i].key_json, key) == 0)
            return mcdc_reconcile_status_name(r->keys[i].status);
    return "(not named)";
}

/* The whole story for one key kind: clean, then the five defects, each named, nothing else. */
static void five_defects(fixture *f)
{
    mcdc_reconcile_result r = reconcile(f, 1.0);
    assert_true(r.silver_rows > 1000);
    assert_int_equal(r.silver_rows, r.source_rows);
    assert_true(r.buckets > 3);
    assert_int_equal(0, r.mismatched);
    assert_int_equal(r.buckets, r.matched);
    assert_int_equal(r.buckets, r.hashed);
    assert_int_equal(0, r.n_keys);
    assert_non_null(r.silver_lsn);
    mcdc_reconcile_result_clear(&r);
    assert_int_equal(0, cli(f, "--sample 1.0"));

    char *k_change = pick(f, 10, NULL), *k_drop = pick(f, 400, NULL), *k_dup = pick(f, 700, NULL);
    char *k_blank = pick(f, 900, f->null_col), *k_src = pick(f, 1200, NULL);
    char *p1 = plant(f, k_change, CHANGE), *p2 = plant(f, k_drop, DROP), *p3 = plant(f, k_dup, DUP);
    char *p4 = plant(f, k_blank, BLANK), *k_extra = plant(f, k_src, EXTRA_ROW);

    r = reconcile(f, 1.0);
    assert_int_equal(5, r.n_keys);
    assert_string_equal("DIFFERENT", status_of(&r, k_change));
    assert_string_equal("MISSING", status_of(&r, k_drop));
    assert_string_equal("DUPLICATE", status_of(&r, k_dup));
    assert_string_equal("DIFFERENT", status_of(&r, k_blank));
    assert_string_equal("EXTRA", status_of(&r, k_extra));
    assert_true(r.mismatched >= 1 && r.mismatched <= 5);
    assert_int_equal(r.buckets, r.matched + r.mismatched);
    mcdc_reconcile_result_clear(&r);

    /* without the sample, tier 1 still finds the buckets whose counts or sums differ */
    r = reconcile(f, 0.0);
    assert_string_equal("MISSING", status_of(&r, k_drop));
    assert_string_equal("DUPLICATE", status_of(&r, k_dup));
    assert_string_equal("EXTRA", status_of(&r, k_extra));
    mcdc_reconcile_result_clear(&r);

    assert_int_equal(1, cli(f, "--sample 1.0 --format json"));
    char path[400];
    snprintf(path, sizeof path, "%s/out.txt", f->dir);
    FILE *fp = fopen(path, "r");
    char out[65536];
    size_t n = fread(out, 1, sizeof out - 1, fp);
    out[n] = 0;
    fclose(fp);
    char want[512];
    snprintf(want, sizeof want, "{\"key\":%s,\"status\":\"MISSING\"}", k_drop);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "\"in_flight\":0"));
    free(k_change); free(k_drop); free(k_dup); free(k_blank); free(k_src);
    free(p1); free(p2); free(p3); free(p4); free(k_extra);
}

/* The report table of the runs so far: rows of each kind, and the statuses of key rows. */
static void report_rows(fixture *f, int64_t *n_bucket_rows, int64_t *n_key_rows, int64_t *n_mismatch, int64_t *n_runs)
{
    char path[400];
    snprintf(path, sizeof path, "%s/lake/ops/reconcile", f->dir);
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, path, -1));
    assert_string_equal("reconcile", mcdc_delta_snapshot_config(snap, "mcdc.kind", ""));
    const char *cols[] = { "run_id", "status", "failure_type", "key" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = 4;
    mcdc_delta_scan *sc = NULL;
    assert_int_equal(0, mcdc_delta_scan_open(&sc, snap, &so));
    const mcdc_value *row;
    char runs[8][40];
    *n_bucket_rows = *n_key_rows = *n_mismatch = *n_runs = 0;
    while (mcdc_delta_scan_next(sc, &row) == 1) {
        bool seen = false;
        for (int64_t i = 0; i < *n_runs; i++)
            seen |= strncmp(runs[i], row[0].v.s.ptr, row[0].v.s.len) == 0;
        if (!seen && *n_runs < 8)
            snprintf(runs[(*n_runs)++], 40, "%.*s", (int)row[0].v.s.len, row[0].v.s.ptr);
        if (!row[1].is_null) {
            (*n_bucket_rows)++;
            *n_mismatch += row[1].v.s.len == 8 && memcmp(row[1].v.s.ptr, "MISMATCH", 8) == 0;
            assert_true(row[2].is_null && row[3].is_null);
        } else {
            (*n_key_rows)++;
            assert_false(row[2].is_null || row[3].is_null);
        }
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
}

static void test_reconcile_reconcile__int_key_defects_are_each_named(void **state)
{
    fixture *f = *state = make("dbo.orders", "dbo_orders",
                               "order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL",
                               "order_id", "amount", "customer");
    five_defects(f);
    /* the report: one row per bucket and per key named, one run_id per run */
    mcdc_reconcile_result r = reconcile(f, 1.0);
    int64_t buckets = r.buckets, mismatched = r.mismatched;
    mcdc_reconcile_result_clear(&r);
    assert_int_equal(1, cli(f, "--sample 1.0 --seed 7 --report ops.reconcile"));
    assert_int_equal(1, cli(f, "--sample 1.0 --seed 7 --report ops.reconcile"));
    int64_t nb, nk, nm, runs;
    report_rows(f, &nb, &nk, &nm, &runs);
    assert_int_equal(2, runs);
    assert_int_equal(2 * buckets, nb);
    assert_int_equal(2 * 5, nk);
    assert_int_equal(2 * mismatched, nm);
}

static void test_reconcile_reconcile__composite_key_defects_are_each_named(void **state)
{
    fixture *f = *state = make("dbo.items", "dbo_items",
                               "region NVARCHAR(10) NOT NULL, code INT NOT NULL, name NVARCHAR(40) NULL, "
                               "price DECIMAL(10,2) NULL",
                               "region,code", "price", "name");
    five_defects(f);
}

static void test_reconcile_reconcile__string_key_defects_are_each_named(void **state)
{
    fixture *f = *state = make("dbo.people", "dbo_people",
                               "email NVARCHAR(60) NOT NULL, name NVARCHAR(40) NULL, score DECIMAL(8,1) NULL",
                               "email", "score", "name");
    five_defects(f);
}

static void test_reconcile_reconcile__uniqueidentifier_key_defects_are_each_named(void **state)
{
    fixture *f = *state = make("dbo.devices", "dbo_devices",
                               "device_id UNIQUEIDENTIFIER NOT NULL, label NVARCHAR(40) NULL, "
                               "weight DECIMAL(9,3) NULL",
                               "device_id", "weight", "label");
    five_defects(f);
}

static long id_of(const char *key_json)
{
    const char *c = strchr(key_json, ':');
    assert_non_null(c);
    return atol(c + 1);
}

static mcdc_reconcile_result reconcile_with_bronze(fixture *f)
{
    mcdc_source *src = NULL;
    char spec[320], bronze[320];
    snprintf(spec, sizeof spec, "sim:%s", f->db);
    snprintf(bronze, sizeof bronze, "%s/lake/bronze/t", f->dir);
    assert_int_equal(0, mcdc_source_open(&src, spec));
    mcdc_reconcile_options o = MCDC_RECONCILE_OPTIONS_INIT;
    o.source = src;
    o.capture_instance = f->ci;
    o.silver_name = "silver.t";
    o.silver_path = f->silver;
    o.control_path = f->control;
    o.bronze_path = bronze;
    o.bucket_rows = 300;
    o.sample = 1.0;
    mcdc_reconcile_result r;
    assert_int_equal(0, mcdc_reconcile_run(&o, &r));
    mcdc_source_close(src);
    return r;
}

/* Changes after silver's position are IN_FLIGHT (from the change table, then from bronze)
 * and clear once silver applies them; a defect on a key no change touched stays a
 * MISMATCH throughout, so labelling every difference in flight would fail here. */
static void test_reconcile_reconcile__changes_after_silver_are_in_flight_until_applied(void **state)
{
    fixture *f = *state = make("dbo.orders", "dbo_orders",
                               "order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL",
                               "order_id", "amount", "customer");
    const char *M = bin();
    /* every key picked before a plant rewrites a file (which reorders silver's files), so
     * the four are four different rows */
    char *kb = pick(f, 20, NULL), *kd = pick(f, 600, NULL), *ka = pick(f, 900, NULL), *ke = pick(f, 1100, NULL);
    const char *kc = "{\"order_id\":900000}";
    assert_int_equal(0, sh("%s sim exec %s --at 2026-10-01T15:00:00 \"UPDATE dbo.orders SET amount = 1.23 WHERE order_id = %ld; "
                           "INSERT INTO dbo.orders (order_id, customer, amount) VALUES (900000, N'new', 2.00); "
                           "DELETE FROM dbo.orders WHERE order_id = %ld\" >/dev/null", M, f->db, id_of(kb), id_of(kd)));
    assert_int_equal(0, sh("%s sim capture %s --at 2026-10-01T15:00:30 >/dev/null", M, f->db));
    /* only keys in flight: exit 0, each named IN_FLIGHT */
    mcdc_reconcile_result r = reconcile_with_bronze(f);
    assert_int_equal(3, r.n_keys);
    assert_string_equal("IN_FLIGHT", status_of(&r, kb));
    assert_string_equal("IN_FLIGHT", status_of(&r, kc));
    assert_string_equal("IN_FLIGHT", status_of(&r, kd));
    assert_int_equal(0, r.mismatched);
    assert_true(r.in_flight >= 1);
    mcdc_reconcile_result_clear(&r);
    assert_int_equal(0, cli(f, "--sample 1.0"));

    char *pa = plant(f, ka, CHANGE);
    r = reconcile_with_bronze(f);
    assert_int_equal(4, r.n_keys);
    assert_string_equal("DIFFERENT", status_of(&r, ka));
    assert_string_equal("IN_FLIGHT", status_of(&r, kb));
    assert_true(r.mismatched >= 1);
    mcdc_reconcile_result_clear(&r);
    assert_int_equal(1, cli(f, "--sample 1.0"));

    /* in bronze now, silver not applied yet: still in flight, told by bronze */
    assert_int_equal(0, sh("%s --warehouse %s/lake stream --source sim:%s --capture-instance dbo_orders --target bronze.t "
                           "--app-id t --checkpoint %s/ck --facts ops.facts >/dev/null 2>&1", M, f->dir, f->db, f->dir));
    /* a later change to key E, then a cleanup: the change table keeps only E's two rows, so the
     * first three are known from bronze alone */
    assert_int_equal(0, sh("%s sim exec %s --at 2026-10-01T15:10:00 \"UPDATE dbo.orders SET amount = 4.56 WHERE order_id = %ld\" "
                           ">/dev/null", M, f->db, id_of(ke)));
    assert_int_equal(0, sh("%s sim capture %s --at 2026-10-01T15:10:30 >/dev/null", M, f->db));
    assert_int_equal(0, sh("%s sim cleanup %s --retention 0s --at 2026-10-01T15:11:00 >/dev/null", M, f->db));
    assert_int_equal(0, sh("test \"$(%s sim query %s 'SELECT COUNT(*) AS n FROM cdc.dbo_orders_CT' --format csv | tail -1)\" = 2",
                           M, f->db));
    r = reconcile_with_bronze(f);
    assert_int_equal(5, r.n_keys);
    assert_string_equal("IN_FLIGHT", status_of(&r, kb));
    assert_string_equal("IN_FLIGHT", status_of(&r, kc));
    assert_string_equal("IN_FLIGHT", status_of(&r, kd));
    assert_string_equal("IN_FLIGHT", status_of(&r, ke));
    assert_string_equal("DIFFERENT", status_of(&r, ka));
    mcdc_reconcile_result_clear(&r);

    /* applied: the keys in flight clear; the defect stays */
    assert_int_equal(0, sh("%s --warehouse %s/lake silver apply --bronze bronze.t --silver silver.t "
                           "--capture-instance dbo_orders --keys order_id --control ops.control --facts ops.facts "
                           ">/dev/null", M, f->dir));
    r = reconcile_with_bronze(f);
    assert_int_equal(2, r.n_keys);
    assert_string_equal("DIFFERENT", status_of(&r, ka));
    assert_string_equal("IN_FLIGHT", status_of(&r, ke)); /* not streamed yet */
    assert_int_equal(1, r.mismatched);
    mcdc_reconcile_result_clear(&r);
    free(kb); free(kd); free(ka); free(pa); free(ke);
}

/* By ordinal a NULL key is in no bucket on either side: a --keys column holding one NULL
 * (a unique index allows one) reconciles, it is not reported MISSING. */
static void test_reconcile_reconcile__null_ordinal_key_is_left_out_on_both_sides(void **state)
{
    fixture *f = *state = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mcdc-reconcile-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/db.sqlite", f->dir);
    snprintf(f->silver, sizeof f->silver, "%s/lake/silver/t", f->dir);
    snprintf(f->control, sizeof f->control, "%s/lake/ops/control", f->dir);
    snprintf(f->ci, sizeof f->ci, "dbo_t");
    f->keys[0] = strdup("alt");
    f->n_keys = 1;
    const char *M = bin();
    assert_int_equal(0, sh("%s sim init %s --table dbo.t --keys id --at 2026-10-01T13:59:00 "
                           "--schema 'id INT NOT NULL, alt INT NULL, v NVARCHAR(10) NULL' >/dev/null", M, f->db));
    assert_int_equal(0, sh("%s sim capture %s --at 2026-10-01T13:59:30 >/dev/null", M, f->db));
    assert_int_equal(0, sh("%s sim exec %s --at 2026-10-01T14:00:00 \"INSERT INTO dbo.t VALUES (1, NULL, N'n'), "
                           "(2, 20, N'a'), (3, 30, N'b')\" >/dev/null", M, f->db));
    assert_int_equal(0, sh("%s sim capture %s --at 2026-10-01T14:00:30 >/dev/null", M, f->db));
    assert_int_equal(0, sh("%s --warehouse %s/lake stream --source sim:%s --capture-instance dbo_t --target bronze.t "
                           "--app-id t --checkpoint %s/ck --facts ops.facts --control ops.control --silver silver.t "
                           "--keys id >/dev/null 2>&1", M, f->dir, f->db, f->dir));
    mcdc_reconcile_result r = reconcile(f, 1.0);
    assert_int_equal(0, r.n_keys);
    assert_int_equal(0, r.mismatched);
    assert_int_equal(2, r.source_rows);
    mcdc_reconcile_result_clear(&r);
}

static void test_reconcile_reconcile__bad_inputs_are_usage_errors(void **state)
{
    fixture *f = *state = make("dbo.orders", "dbo_orders",
                               "order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL",
                               "order_id", "amount", "customer");
    assert_int_equal(2, cli(f, "--sample 1.5"));
    assert_int_equal(2, cli(f, "--bucket-rows 0"));
    assert_int_equal(2, cli(f, "--keys nope"));
    assert_int_equal(2, cli(f, "--format yaml"));
    int64_t cv;
    assert_int_equal(0, mcdc_delta_latest_version(&cv, f->control));
    assert_int_equal(2, cli(f, "--report ops.control"));
    int64_t cv2;
    assert_int_equal(0, mcdc_delta_latest_version(&cv2, f->control));
    assert_int_equal(cv, cv2);
    assert_int_equal(2, sh("%s --warehouse %s/lake reconcile --source sim:%s --capture-instance dbo_orders "
                           "--silver silver.none --bronze bronze.t --control ops.control >/dev/null 2>&1",
                           bin(), f->dir, f->db));
    assert_int_equal(2, sh("%s --warehouse %s/lake reconcile --source sim:%s --capture-instance dbo_orders "
                           "--silver silver.t --bronze bronze.none --control ops.control >/dev/null 2>&1",
                           bin(), f->dir, f->db));
    assert_int_equal(2, sh("%s --warehouse %s/lake reconcile --source sim:%s --capture-instance dbo_nope "
                           "--silver silver.t --bronze bronze.t --control ops.control >/dev/null 2>&1",
                           bin(), f->dir, f->db));
    /* a source without the grouped query (the SQL Server source today) is refused */
    {
        mcdc_source *src = NULL;
        char spec[320];
        snprintf(spec, sizeof spec, "sim:%s", f->db);
        assert_int_equal(0, mcdc_source_open(&src, spec));
        const mcdc_source_ops *real = src->ops;
        mcdc_source_ops without = *real;
        without.key_buckets = NULL;
        src->ops = &without;
        mcdc_reconcile_options o = MCDC_RECONCILE_OPTIONS_INIT;
        o.source = src;
        o.capture_instance = f->ci;
        o.silver_name = "silver.t";
        o.silver_path = f->silver;
        o.control_path = f->control;
        mcdc_reconcile_result r;
        assert_int_equal(MCDC_EUNSUPPORTED, mcdc_reconcile_run(&o, &r));
        assert_non_null(strstr(mcdc_error_last()->message, "not supported by this source yet"));
        src->ops = real;
        mcdc_source_close(src);
    }
    /* nothing was written: silver's version is unchanged */
    int64_t v;
    assert_int_equal(0, mcdc_delta_latest_version(&v, f->silver));
    mcdc_reconcile_result r = reconcile(f, 0.0);
    assert_int_equal(v, r.silver_version);
    assert_int_equal(0, r.mismatched);
    mcdc_reconcile_result_clear(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_reconcile_reconcile__int_key_defects_are_each_named, teardown),
        cmocka_unit_test_teardown(test_reconcile_reconcile__composite_key_defects_are_each_named, teardown),
        cmocka_unit_test_teardown(test_reconcile_reconcile__string_key_defects_are_each_named, teardown),
        cmocka_unit_test_teardown(test_reconcile_reconcile__uniqueidentifier_key_defects_are_each_named, teardown),
        cmocka_unit_test_teardown(test_reconcile_reconcile__changes_after_silver_are_in_flight_until_applied, teardown),
        cmocka_unit_test_teardown(test_reconcile_reconcile__null_ordinal_key_is_left_out_on_both_sides, teardown),
        cmocka_unit_test_teardown(test_reconcile_reconcile__bad_inputs_are_usage_errors, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
