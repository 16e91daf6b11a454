/* Unit tests for delta/compact.c and the append's post-commit hook: settings follow the
 * table properties (on for bronze and facts, never for the control table); plans combine
 * runs of neighbours in commit order, deepest size tier first, within one partition and
 * the input cap; appends compact automatically without changing rows, txn versions or
 * the disjoint ranges of a log-like table; a lost conflict gives up and removes its file;
 * a failed compaction never fails the append; concurrent appenders lose nothing; with
 * compact_in_background the append returns before its compaction, which the background
 * writer runs (coalesced) and exit() waits for. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "delta/compact.h"
#include "delta/internal.h"
#include "mcdc/delta.h"
#include "mcdc/log.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    *state = testenv_tmpdir("compact");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

/* ---- settings ------------------------------------------------------------------------ */

static void settings_for(mcdc_delta__compact_settings *out, const char *const *kv, size_t n)
{
    mcdc_delta_snapshot s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(0, mcdc_delta_map_set(&s.metadata.configuration, kv[2 * i], kv[2 * i + 1]));
    mcdc_delta__compact_settings_of(out, &s);
    mcdc_delta_map_clear(&s.metadata.configuration);
}

static void test_delta_compact__settings_follow_table_properties(void **state)
{
    (void)state;
    mcdc_delta__compact_settings s;
    settings_for(&s, NULL, 0);
    assert_false(s.enabled); /* a table we did not create: Delta's default, off */
    assert_int_equal(50, s.min_num_files);
    assert_int_equal((int64_t)128 << 20, s.target_bytes);
    assert_int_equal((int64_t)64 << 20, s.min_file_bytes);
    const char *bronze[] = { "mcdc.kind", "bronze" };
    settings_for(&s, bronze, 1);
    assert_true(s.enabled);
    const char *facts[] = { "mcdc.kind", "facts" };
    settings_for(&s, facts, 1);
    assert_true(s.enabled);
    const char *off[] = { "mcdc.kind", "bronze", "delta.autoOptimize.autoCompact", "false" };
    settings_for(&s, off, 2);
    assert_false(s.enabled);
    const char *on[] = { "delta.autoOptimize.autoCompact", "AUTO", "mcdc.autoCompact.minNumFiles",
                         "7", "delta.targetFileSize", "10mb", "mcdc.autoCompact.minFileSize", "1k" };
    settings_for(&s, on, 4);
    assert_true(s.enabled);
    assert_int_equal(7, s.min_num_files);
    assert_int_equal(10 << 20, s.target_bytes);
    assert_int_equal(1024, s.min_file_bytes);
    const char *control[] = { "mcdc.kind", "control", "delta.autoOptimize.autoCompact", "true" };
    settings_for(&s, control, 2);
    assert_false(s.enabled); /* one file per row, whatever the property says */
    const char *bad[] = { "delta.autoOptimize.autoCompact", "true", "mcdc.autoCompact.minNumFiles",
                          "1", "delta.targetFileSize", "big", "mcdc.autoCompact.minFileSize", "1g" };
    settings_for(&s, bad, 4);
    assert_int_equal(50, s.min_num_files);
    assert_int_equal((int64_t)128 << 20, s.target_bytes);
    assert_int_equal((int64_t)64 << 20, s.min_file_bytes); /* over the target: default */
}

static void test_delta_compact__parse_size_accepts_units_and_refuses_junk(void **state)
{
    (void)state;
    assert_int_equal(134217728, mcdc_delta__parse_size("134217728"));
    assert_int_equal(64 << 10, mcdc_delta__parse_size("64k"));
    assert_int_equal(64 << 20, mcdc_delta__parse_size("64 MB"));
    assert_int_equal((int64_t)1 << 30, mcdc_delta__parse_size("1g"));
    assert_int_equal(100, mcdc_delta__parse_size("100b"));
    assert_int_equal(-1, mcdc_delta__parse_size("0"));
    assert_int_equal(-1, mcdc_delta__parse_size("-5"));
    assert_int_equal(-1, mcdc_delta__parse_size("12q"));
    assert_int_equal(-1, mcdc_delta__parse_size("1mbx"));
    assert_int_equal(-1, mcdc_delta__parse_size(""));
    assert_int_equal(-1, mcdc_delta__parse_size(NULL));
    assert_int_equal(-1, mcdc_delta__parse_size("99999999999999999999"));
    assert_int_equal(-1, mcdc_delta__parse_size("2000000g"));
}

/* ---- plans over synthetic files ----------------------------------------------------- */

typedef struct fileset {
    mcdc_delta_file        f[400];
    const mcdc_delta_file *p[400];
    size_t                 n;
} fileset;

/* Add a file of @p size written at @p ms (in partition @p part, or none). */
static void fs_add(fileset *s, int64_t size, int64_t ms, const char *part)
{
    mcdc_delta_file *f = &s->f[s->n];
    memset(f, 0, sizeof *f);
    char name[32];
    snprintf(name, sizeof name, "f%04zu.parquet", s->n);
    f->path = strdup(name);
    f->size = size;
    f->modification_time = ms;
    f->deletion_timestamp = -1;
    f->dv.offset = -1;
    if (part)
        mcdc_delta_map_set(&f->partition_values, "p", part);
    s->p[s->n] = f;
    s->n++;
}

static void fs_free(fileset *s)
{
    for (size_t i = 0; i < s->n; i++)
        mcdc_delta_file_clear(&s->f[i]);
    s->n = 0;
}

static mcdc_delta__compact_settings small_settings(int64_t fan_in, int64_t min_file, int64_t target)
{
    mcdc_delta__compact_settings s = { true, fan_in, target, min_file };
    return s;
}

static void test_delta_compact__plan_waits_for_min_num_files_in_a_row(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_settings st = small_settings(5, 1000, 100000);
    mcdc_delta__compact_plan p;
    /* written in reverse name order: the plan follows the times, not the names */
    for (int i = 0; i < 4; i++)
        fs_add(&s, 10, 100 - i, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(0, p.n_groups);
    mcdc_delta__compact_plan_free(&p);
    fs_add(&s, 10, 50, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(5, p.end[0]);
    size_t want[] = { 4, 3, 2, 1, 0 }; /* oldest first */
    for (int i = 0; i < 5; i++)
        assert_int_equal(want[i], p.idx[i]);
    assert_int_equal(50, p.bytes);
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_large_file_breaks_a_run(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_settings st = small_settings(5, 1000, 100000);
    mcdc_delta__compact_plan p;
    for (int i = 0; i < 4; i++)
        fs_add(&s, 10, i, NULL);
    fs_add(&s, 5000, 10, NULL); /* not small */
    for (int i = 0; i < 4; i++)
        fs_add(&s, 10, 20 + i, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(0, p.n_groups); /* 8 small files, but never 5 in a row */
    mcdc_delta__compact_plan_free(&p);
    fs_add(&s, 10, 30, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(5, p.end[0]);
    for (int i = 0; i < 5; i++)
        assert_int_equal(5 + i, p.idx[i]); /* the run after the large file */
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_skips_large_files_older_than_every_small_one(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_settings st = small_settings(3, 1000, 100000);
    mcdc_delta__compact_plan p;
    for (int i = 0; i < 200; i++)
        fs_add(&s, 5000, i, NULL);          /* a long history of large files */
    for (int i = 0; i < 3; i++)
        fs_add(&s, 10, 1000 + i, NULL);
    fs_add(&s, 5000, 2000, NULL);           /* a newer large file ends the run */
    fs_add(&s, 10, 3000, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(3, p.end[0]);
    for (int i = 0; i < 3; i++)
        assert_int_equal(200 + i, p.idx[i]);
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_takes_the_deepest_tier_and_leaves_bigger_files(void **state)
{
    (void)state;
    static fileset s;
    /* F = 4, min file 6400: tier 0 [1600, 6400), tier 1 [400, 1600), tier 2 [100, 400) */
    mcdc_delta__compact_settings st = small_settings(4, 6400, 1 << 20);
    mcdc_delta__compact_plan p;
    for (int i = 0; i < 3; i++)
        fs_add(&s, 2000, i, NULL);      /* tier 0 */
    for (int i = 0; i < 3; i++)
        fs_add(&s, 500, 10 + i, NULL);  /* tier 1 */
    for (int i = 0; i < 3; i++)
        fs_add(&s, 150, 20 + i, NULL);  /* tier 2 */
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(0, p.n_groups); /* 9 small files, fewer than 4 in each tier */
    mcdc_delta__compact_plan_free(&p);
    fs_add(&s, 150, 30, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(4, p.end[0]); /* only the four tier-2 files */
    for (int i = 0; i < 4; i++)
        assert_int_equal(6 + i, p.idx[i]);
    mcdc_delta__compact_plan_free(&p);
    /* a fourth tier-1 file after them: the tier-1 run takes the tier-2 files in it too */
    fs_free(&s);
    for (int i = 0; i < 3; i++)
        fs_add(&s, 500, i, NULL);
    for (int i = 0; i < 2; i++)
        fs_add(&s, 150, 10 + i, NULL);
    fs_add(&s, 500, 20, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(6, p.end[0]);
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_is_cut_to_the_target_input(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_settings st = small_settings(5, 1000, 350);
    mcdc_delta__compact_plan p;
    for (int i = 0; i < 10; i++)
        fs_add(&s, 100, i, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(3, p.end[0]); /* 3 x 100 <= 350 */
    assert_int_equal(300, p.bytes);
    for (int i = 0; i < 3; i++)
        assert_int_equal(i, p.idx[i]); /* the oldest */
    mcdc_delta__compact_plan_free(&p);
    /* at least two files, even past the cap */
    st.target_bytes = 50;
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(2, p.end[0]);
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_groups_stay_in_one_partition(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_settings st = small_settings(3, 1000, 100000);
    mcdc_delta__compact_plan p;
    for (int i = 0; i < 6; i++)
        fs_add(&s, 10, i, i % 2 ? "b" : "a");
    fs_add(&s, 10, 10, NULL);
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(2, p.n_groups);
    assert_int_equal(3, p.end[0]);
    assert_int_equal(6, p.end[1]);
    for (size_t g = 0; g < 2; g++) {
        const char *part = mcdc_delta_map_get(&s.f[p.idx[g * 3]].partition_values, "p", NULL);
        for (size_t i = g * 3; i < g * 3 + 3; i++)
            assert_string_equal(part, mcdc_delta_map_get(&s.f[p.idx[i]].partition_values, "p", NULL));
    }
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_orders_by_compact_tag_then_time(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_settings st = small_settings(3, 1000, 100000);
    mcdc_delta__compact_plan p;
    fs_add(&s, 10, 500, NULL);
    fs_add(&s, 10, 900, NULL); /* compacted late, but holds the oldest rows */
    mcdc_delta_map_set(&s.f[1].tags, MCDC_DELTA_TAG_ORDER, "100");
    fs_add(&s, 10, 600, NULL);
    assert_int_equal(100, mcdc_delta__file_order(&s.f[1]));
    assert_int_equal(500, mcdc_delta__file_order(&s.f[0]));
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, s.p, s.n, &st));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(1, p.idx[0]);
    assert_int_equal(0, p.idx[1]);
    assert_int_equal(2, p.idx[2]);
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_all_cuts_small_files_by_target(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_plan p;
    for (int i = 0; i < 7; i++)
        fs_add(&s, 100, i, NULL);
    fs_add(&s, 900, 50, NULL); /* not small for a target of 1000 */
    assert_int_equal(0, mcdc_delta__compact_plan_all(&p, s.p, s.n, 1000, 0));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(7, p.end[0]);
    mcdc_delta__compact_plan_free(&p);
    assert_int_equal(0, mcdc_delta__compact_plan_all(&p, s.p, s.n, 300, 0));
    /* small: under 150; groups of at most 300 bytes: 3 + 3, and a lone last file is left */
    assert_int_equal(2, p.n_groups);
    assert_int_equal(3, p.end[0]);
    assert_int_equal(6, p.end[1]);
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

static void test_delta_compact__plan_all_folds_a_deletion_vector_past_the_share(void **state)
{
    (void)state;
    static fileset s;
    mcdc_delta__compact_plan p;
    /* two big files of 100 rows with vectors deleting 10 and 30 of them, one without */
    for (int i = 0; i < 3; i++) {
        fs_add(&s, 900, i, NULL);
        s.f[i].stats = strdup("{\"numRecords\":100}");
    }
    s.f[0].has_dv = true;
    s.f[0].dv.cardinality = 10;
    s.f[1].has_dv = true;
    s.f[1].dv.cardinality = 30;
    /* share 0: every file with a vector, each alone */
    assert_int_equal(0, mcdc_delta__compact_plan_all(&p, s.p, s.n, 1000, 0));
    assert_int_equal(2, p.n_groups);
    mcdc_delta__compact_plan_free(&p);
    /* share 0.2: only the file past it */
    assert_int_equal(0, mcdc_delta__compact_plan_all(&p, s.p, s.n, 1000, 0.2));
    assert_int_equal(1, p.n_groups);
    assert_int_equal(1, p.idx[0]);
    mcdc_delta__compact_plan_free(&p);
    /* share 0.5: none */
    assert_int_equal(0, mcdc_delta__compact_plan_all(&p, s.p, s.n, 1000, 0.5));
    assert_int_equal(0, p.n_groups);
    mcdc_delta__compact_plan_free(&p);
    fs_free(&s);
}

/* ---- tables ------------------------------------------------------------------------- */

static void create(const char *t, const char *const *kv, size_t n, bool partitioned)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, false);
    mcdc_schema_add(s, "lsn", MCDC_TYPE_STRING, 0, 0, false);
    mcdc_schema_add(s, "part", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_delta_map conf = { 0 };
    for (size_t i = 0; i < n; i++)
        mcdc_delta_map_set(&conf, kv[2 * i], kv[2 * i + 1]);
    const char *parts[] = { "part" };
    assert_int_equal(0, mcdc_delta_create(t, s, parts, partitioned ? 1 : 0, &conf, NULL));
    mcdc_delta_map_clear(&conf);
    mcdc_schema_free(s);
}

static bool g_background; /* append_batch asks for compact_in_background */

/* Append rows [first, first + n) as one batch (one file per partition) with txn
 * {app, batch} when app is given. Returns the append's version. */
static int64_t append_batch(const char *t, int64_t first, int n, bool two_parts, const char *app,
                            int64_t batch)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_delta_writer *w;
    assert_int_equal(0, mcdc_delta_writer_open(&w, snap, NULL));
    for (int i = 0; i < n; i++) {
        mcdc_value row[3];
        char lsn[32];
        memset(row, 0, sizeof row);
        row[0].v.i = first + i;
        snprintf(lsn, sizeof lsn, "0x%020lld", (long long)(first + i));
        row[1].v.s.ptr = lsn;
        row[1].v.s.len = strlen(lsn);
        row[2].v.s.ptr = two_parts && (first + i) % 2 ? "b" : "a";
        row[2].v.s.len = 1;
        assert_int_equal(0, mcdc_delta_writer_write(w, row));
    }
    mcdc_delta_file *files;
    size_t n_files;
    assert_int_equal(0, mcdc_delta_writer_finish(w, &files, &n_files));
    mcdc_delta_writer_free(w);
    mcdc_delta_snapshot_free(snap);
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.app_id = app;
    o.txn_version = batch;
    o.backoff_max_ms = 20;
    o.compact_in_background = g_background;
    mcdc_delta_commit_result r;
    int rc = mcdc_delta_append(t, files, n_files, &o, &r);
    if (rc != 0)
        fprintf(stderr, "append: %s\n", mcdc_error_last()->message);
    mcdc_delta_files_free(files, n_files);
    usleep(1500); /* commit order is by modificationTime (ms): no two batches in one ms */
    return rc == 0 ? r.version : -1;
}

/* Every id of the table, in scan order; *n set. */
static int64_t *table_ids(const char *t, size_t *n)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_delta_scan *sc;
    assert_int_equal(0, mcdc_delta_scan_open(&sc, snap, NULL));
    size_t cap = 1024;
    int64_t *ids = malloc(cap * sizeof *ids);
    *n = 0;
    const mcdc_value *r;
    int rc;
    while ((rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        if (*n == cap)
            ids = realloc(ids, (cap *= 2) * sizeof *ids);
        ids[(*n)++] = r[0].v.i;
    }
    assert_int_equal(0, rc);
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    return ids;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The table holds ids 0 .. n-1, each once. */
static void assert_ids_exactly(const char *t, size_t want)
{
    size_t n;
    int64_t *ids = table_ids(t, &n);
    assert_int_equal(want, n);
    qsort(ids, n, sizeof *ids, cmp_i64);
    for (size_t i = 0; i < n; i++)
        assert_int_equal((int64_t)i, ids[i]);
    free(ids);
}

/* Live files' lsn ranges (per partition) are pairwise disjoint. Returns the number of
 * live files. */
static size_t assert_tight_ranges(const char *t)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    for (size_t i = 0; i < snap->n_files; i++) {
        json_t *a = json_loads(snap->files[i].stats, 0, NULL);
        assert_non_null(a);
        const char *lo = json_string_value(json_object_get(json_object_get(a, "minValues"), "lsn"));
        const char *hi = json_string_value(json_object_get(json_object_get(a, "maxValues"), "lsn"));
        const char *pa = mcdc_delta_map_get(&snap->files[i].partition_values, "part", NULL);
        for (size_t k = i + 1; k < snap->n_files; k++) {
            json_t *b = json_loads(snap->files[k].stats, 0, NULL);
            const char *lo2 = json_string_value(json_object_get(json_object_get(b, "minValues"), "lsn"));
            const char *hi2 = json_string_value(json_object_get(json_object_get(b, "maxValues"), "lsn"));
            const char *pb = mcdc_delta_map_get(&snap->files[k].partition_values, "part", NULL);
            if (!pa || !pb || !strcmp(pa, pb))
                assert_true(strcmp(hi, lo2) < 0 || strcmp(hi2, lo) < 0);
            json_decref(b);
        }
        json_decref(a);
    }
    size_t n = snap->n_files;
    mcdc_delta_snapshot_free(snap);
    return n;
}

static int count_parquet(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".parquet") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void test_delta_compact__appends_compact_automatically_without_changing_rows(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "4" };
    create(t, conf, 2, false);
    for (int b = 0; b < 3; b++)
        assert_true(append_batch(t, b * 5, 5, false, "app", b) > 0);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(3, snap->n_files);
    mcdc_delta_snapshot_free(snap);
    /* the fourth small file in a row: the append (version 4) is followed by OPTIMIZE (5) */
    assert_int_equal(4, append_batch(t, 15, 5, false, "app", 3));
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(5, snap->version);
    assert_int_equal(1, snap->n_files);
    assert_false(snap->files[0].data_change);
    assert_non_null(mcdc_delta_map_get(&snap->files[0].tags, MCDC_DELTA_TAG_ORDER, NULL));
    assert_int_equal(3, mcdc_delta_snapshot_txn(snap, "app")); /* txn kept */
    mcdc_delta_snapshot_free(snap);
    /* rows in commit order inside the compacted file */
    size_t n;
    int64_t *ids = table_ids(t, &n);
    assert_int_equal(20, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal((int64_t)i, ids[i]);
    free(ids);
    /* the history: OPTIMIZE, auto, removes and adds without dataChange */
    mcdc_delta_history_entry *h;
    size_t nh;
    assert_int_equal(0, mcdc_delta_history(&h, &nh, t));
    assert_string_equal("OPTIMIZE", h[nh - 1].operation);
    assert_non_null(strstr(h[nh - 1].commit_info, "\"auto\":\"true\""));
    assert_int_equal(0, h[nh - 1].n_txns);
    mcdc_delta_history_free(h, nh);
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log/00000000000000000005.json", t);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[8192];
    int adds = 0, removes = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "{\"add\""))
            adds++;
        if (strstr(line, "{\"remove\""))
            removes++;
        if (strstr(line, "{\"add\"") || strstr(line, "{\"remove\""))
            assert_non_null(strstr(line, "\"dataChange\":false"));
    }
    fclose(f);
    assert_int_equal(1, adds);
    assert_int_equal(4, removes);
    /* a replay of batch 3 is still "already committed" */
    mcdc_delta_file none;
    memset(&none, 0, sizeof none);
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.app_id = "app";
    o.txn_version = 3;
    assert_int_equal(MCDC_EALREADY, mcdc_delta_append(t, &none, 0, &o, NULL));
    mcdc_error_clear();
}

static void test_delta_compact__tiers_keep_ranges_tight_and_files_few(void **state)
{
    const char *t = *state;
    /* F = 3 and small under 64 KiB: tiny files, then merged tiers above them */
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "3",
                           "mcdc.autoCompact.minFileSize", "64k" };
    create(t, conf, 3, false);
    enum { BATCHES = 80, ROWS = 3 };
    size_t most = 0;
    for (int b = 0; b < BATCHES; b++) {
        assert_true(append_batch(t, b * ROWS, ROWS, false, "app", b) > 0);
        mcdc_delta_snapshot *snap;
        assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
        if (snap->n_files > most)
            most = snap->n_files;
        mcdc_delta_snapshot_free(snap);
    }
    assert_ids_exactly(t, BATCHES * ROWS);
    size_t n = assert_tight_ranges(t);
    /* fewer than F files per tier: tiers of 64K/3^t down to the ~1 KB files */
    assert_true(n < 3 * 8);
    assert_true(most < 3 * 8);
}

static void test_delta_compact__partitions_compact_within_themselves(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "4" };
    create(t, conf, 2, true);
    for (int b = 0; b < 4; b++)
        assert_true(append_batch(t, b * 4, 4, true, NULL, 0) > 0);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(2, snap->n_files); /* one per partition */
    for (size_t i = 0; i < 2; i++)
        assert_non_null(mcdc_delta_map_get(&snap->files[i].partition_values, "part", NULL));
    mcdc_delta_snapshot_free(snap);
    assert_ids_exactly(t, 16);
    assert_tight_ranges(t);
}

static void test_delta_compact__off_when_disabled_and_never_on_control(void **state)
{
    const char *t = *state;
    char t2[1024];
    snprintf(t2, sizeof t2, "%s/control", t);
    char t1[1024];
    snprintf(t1, sizeof t1, "%s/bronze", t);
    const char *off[] = { "mcdc.kind", "bronze", "delta.autoOptimize.autoCompact", "false",
                          "mcdc.autoCompact.minNumFiles", "2" };
    create(t1, off, 3, false);
    const char *control[] = { "mcdc.kind", "control", "delta.autoOptimize.autoCompact", "true",
                              "mcdc.autoCompact.minNumFiles", "2" };
    create(t2, control, 3, false);
    for (int b = 0; b < 4; b++) {
        assert_true(append_batch(t1, b, 1, false, NULL, 0) > 0);
        assert_true(append_batch(t2, b, 1, false, NULL, 0) > 0);
    }
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t1, -1));
    assert_int_equal(4, snap->n_files);
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t2, -1));
    assert_int_equal(4, snap->n_files);
    assert_int_equal(4, snap->version);
    mcdc_delta_snapshot_free(snap);
    /* table optimize refuses the control table and changes nothing */
    mcdc_delta_optimize_result r;
    assert_int_equal(MCDC_EINVAL, mcdc_delta_optimize(t2, 0, &r));
    assert_non_null(strstr(mcdc_error_last()->message, "one data file per row"));
    mcdc_error_clear();
    int64_t v;
    assert_int_equal(0, mcdc_delta_latest_version(&v, t2));
    assert_int_equal(4, v);
    assert_int_equal(4, count_parquet(t2));
    /* the disabled table can still be optimized by hand */
    assert_int_equal(0, mcdc_delta_optimize(t1, 0, &r));
    assert_int_equal(4, r.n_removed);
    assert_int_equal(1, r.n_added);
}

static void test_delta_compact__lost_conflict_gives_up_and_removes_its_file(void **state)
{
    const char *t = *state;
    const char *conf[] = { "mcdc.autoCompact.minNumFiles", "3" }; /* auto off: we drive it */
    create(t, conf, 1, false);
    for (int b = 0; b < 3; b++)
        assert_true(append_batch(t, b, 1, false, NULL, 0) > 0);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_delta__compact_settings st;
    mcdc_delta__compact_settings_of(&st, snap);
    const mcdc_delta_file *all[3] = { &snap->files[0], &snap->files[1], &snap->files[2] };
    mcdc_delta__compact_plan p;
    assert_int_equal(0, mcdc_delta__compact_plan_auto(&p, all, 3, &st));
    assert_int_equal(1, p.n_groups);
    /* another writer compacts the same files first */
    mcdc_delta_optimize_result r;
    assert_int_equal(0, mcdc_delta_optimize(t, 0, &r));
    assert_int_equal(3, r.n_removed);
    int files_before = count_parquet(t);
    int64_t v_before;
    assert_int_equal(0, mcdc_delta_latest_version(&v_before, t));
    int rc = mcdc_delta__compact_run(snap, &p, true, 1, &r);
    assert_int_equal(MCDC_ECONFLICT, rc);
    assert_non_null(strstr(mcdc_error_last()->message, "removed by another writer"));
    mcdc_error_clear();
    assert_int_equal(files_before, count_parquet(t)); /* its new file is gone */
    int64_t v;
    assert_int_equal(0, mcdc_delta_latest_version(&v, t));
    assert_int_equal(v_before, v);
    mcdc_delta__compact_plan_free(&p);
    mcdc_delta_snapshot_free(snap);
    assert_ids_exactly(t, 3);
}

typedef struct logged {
    int  n_warn;
    char last[1200];
} logged;

static void capture_sink(mcdc_log_level level, const char *logger, const char *message,
                         void *payload)
{
    logged *l = payload;
    (void)logger;
    if (level >= MCDC_LOG_WARN) {
        l->n_warn++;
        snprintf(l->last, sizeof l->last, "%s", message);
    }
}

static void test_delta_compact__failed_compaction_never_fails_the_append(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "3" };
    create(t, conf, 2, false);
    for (int b = 0; b < 2; b++)
        assert_true(append_batch(t, b, 1, false, "app", b) > 0);
    /* lose a data file: the compaction's scan fails */
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    char *abs = mcdc_delta_file_abspath(snap, snap->files[0].path);
    assert_int_equal(0, unlink(abs));
    free(abs);
    mcdc_delta_snapshot_free(snap);
    logged l = { 0, "" };
    mcdc_log_set_sink(capture_sink, &l);
    int64_t v = append_batch(t, 2, 1, false, "app", 2);
    mcdc_log_set_sink(NULL, NULL);
    assert_int_equal(3, v); /* the append stands */
    assert_int_equal(MCDC_OK, mcdc_error_last()->code);
    assert_int_equal(1, l.n_warn);
    assert_non_null(strstr(l.last, "auto compaction failed; the append stands"));
    int64_t latest;
    assert_int_equal(0, mcdc_delta_latest_version(&latest, t));
    assert_int_equal(3, latest);
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(2, mcdc_delta_snapshot_txn(snap, "app"));
    mcdc_delta_snapshot_free(snap);
}

static void test_delta_compact__concurrent_appenders_lose_nothing(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "4" };
    create(t, conf, 2, false);
    enum { PROCS = 4, EACH = 20 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        if ((pids[p] = fork()) == 0) {
            mcdc_log_set_sink(NULL, NULL);
            char app[32];
            snprintf(app, sizeof app, "writer-%d", p);
            for (int i = 0; i < EACH; i++)
                if (append_batch(t, (int64_t)(p * EACH + i) * 2, 2, false, app, i) < 0)
                    _exit(1);
            _exit(0);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int st;
        assert_int_equal(pids[p], waitpid(pids[p], &st, 0));
        assert_true(WIFEXITED(st));
        assert_int_equal(0, WEXITSTATUS(st));
    }
    assert_ids_exactly(t, PROCS * EACH * 2);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    for (int p = 0; p < PROCS; p++) {
        char app[32];
        snprintf(app, sizeof app, "writer-%d", p);
        assert_int_equal(EACH - 1, mcdc_delta_snapshot_txn(snap, app));
    }
    assert_true(snap->n_files < PROCS * EACH / 2);
    mcdc_delta_snapshot_free(snap);
}

/* The version of the newest commit and its operation (commitInfo.operation). */
static int64_t last_operation(const char *t, char *op, size_t cap)
{
    mcdc_delta_history_entry *h;
    size_t nh;
    assert_int_equal(0, mcdc_delta_history(&h, &nh, t));
    assert_true(nh > 0);
    snprintf(op, cap, "%s", h[nh - 1].operation);
    int64_t v = h[nh - 1].version;
    mcdc_delta_history_free(h, nh);
    return v;
}

static void test_delta_compact__background_compaction_runs_after_the_append_returns(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "4" };
    create(t, conf, 2, false);
    g_background = true;
    for (int b = 0; b < 3; b++)
        assert_true(append_batch(t, b * 5, 5, false, "app", b) > 0);
    /* the worker held: the fourth small file makes a compaction due, the append returns
     * without it (run in the append, version 5 would be the OPTIMIZE and one file left) */
    mcdc_delta__background_hold(true);
    assert_int_equal(4, append_batch(t, 15, 5, false, "app", 3));
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(4, snap->version);
    assert_int_equal(4, snap->n_files);
    mcdc_delta_snapshot_free(snap);
    /* a second request while the first waits: one compaction, of a fresh snapshot */
    assert_int_equal(5, append_batch(t, 20, 5, false, "app", 4));
    mcdc_delta__background_hold(false);
    assert_int_equal(0, mcdc_delta_checkpoints_wait());
    g_background = false;
    char op[64];
    assert_int_equal(6, last_operation(t, op, sizeof op));
    assert_string_equal("OPTIMIZE", op);
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(6, snap->version);
    assert_int_equal(1, snap->n_files);
    assert_false(snap->files[0].data_change);
    assert_int_equal(4, mcdc_delta_snapshot_txn(snap, "app")); /* txn kept */
    mcdc_delta_snapshot_free(snap);
    size_t n;
    int64_t *ids = table_ids(t, &n);
    assert_int_equal(25, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal((int64_t)i, ids[i]); /* commit order inside the compacted file */
    free(ids);
}

/* A worker that does not get to the table (held here; busy or starved of CPU in life):
 * after 50 requests the append compacts itself, so files never pile up without bound. */
static void test_delta_compact__appends_compact_themselves_past_the_backlog(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "4" };
    create(t, conf, 2, false);
    g_background = true;
    mcdc_delta__background_hold(true);
    for (int b = 0; b < 54; b++) {
        assert_true(append_batch(t, b, 1, false, "app", b) > 0);
        mcdc_delta_snapshot *snap;
        assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
        /* due from the fourth file on: requests 1..50 wait, the 51st compacts itself */
        if (b < 53)
            assert_int_equal(b + 1, snap->n_files);
        else
            assert_true(snap->n_files < 10);
        mcdc_delta_snapshot_free(snap);
    }
    mcdc_delta__background_hold(false);
    assert_int_equal(0, mcdc_delta_checkpoints_wait());
    g_background = false;
    assert_ids_exactly(t, 54);
}

static void release_hold(void)
{
    mcdc_delta__background_hold(false);
}

/* A process whose append left its compaction to the background writer and then exits
 * (exit, not _exit) leaves the compaction done, as it leaves its checkpoints. */
static void test_delta_compact__exit_waits_for_a_background_compaction(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.autoOptimize.autoCompact", "true",
                           "mcdc.autoCompact.minNumFiles", "4" };
    create(t, conf, 2, false);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        mcdc_log_set_sink(NULL, NULL);
        g_background = true;
        /* held until exit: the handler registered after the writer's runs before it */
        mcdc_delta__background_hold(true);
        for (int b = 0; b < 4; b++)
            if (append_batch(t, b * 3, 3, false, "app", b) != b + 1)
                _exit(1);
        if (atexit(release_hold) != 0)
            _exit(2);
        exit(0);
    }
    int st;
    assert_int_equal(pid, waitpid(pid, &st, 0));
    assert_true(WIFEXITED(st));
    assert_int_equal(0, WEXITSTATUS(st));
    char op[64];
    assert_int_equal(5, last_operation(t, op, sizeof op));
    assert_string_equal("OPTIMIZE", op);
    assert_ids_exactly(t, 12);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    /* on tmpfs when there is one: every commit fsyncs, which a disk makes slow */
    if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
        setenv("TMPDIR", "/dev/shm", 1);
    const struct CMUnitTest tests[] = {
        T(test_delta_compact__settings_follow_table_properties),
        T(test_delta_compact__parse_size_accepts_units_and_refuses_junk),
        T(test_delta_compact__plan_waits_for_min_num_files_in_a_row),
        T(test_delta_compact__plan_large_file_breaks_a_run),
        T(test_delta_compact__plan_skips_large_files_older_than_every_small_one),
        T(test_delta_compact__plan_takes_the_deepest_tier_and_leaves_bigger_files),
        T(test_delta_compact__plan_is_cut_to_the_target_input),
        T(test_delta_compact__plan_groups_stay_in_one_partition),
        T(test_delta_compact__plan_orders_by_compact_tag_then_time),
        T(test_delta_compact__plan_all_cuts_small_files_by_target),
        T(test_delta_compact__plan_all_folds_a_deletion_vector_past_the_share),
        T(test_delta_compact__appends_compact_automatically_without_changing_rows),
        T(test_delta_compact__tiers_keep_ranges_tight_and_files_few),
        T(test_delta_compact__partitions_compact_within_themselves),
        T(test_delta_compact__off_when_disabled_and_never_on_control),
        T(test_delta_compact__lost_conflict_gives_up_and_removes_its_file),
        T(test_delta_compact__failed_compaction_never_fails_the_append),
        T(test_delta_compact__concurrent_appenders_lose_nothing),
        T(test_delta_compact__background_compaction_runs_after_the_append_returns),
        T(test_delta_compact__exit_waits_for_a_background_compaction),
        T(test_delta_compact__appends_compact_themselves_past_the_backlog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
