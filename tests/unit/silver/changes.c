/* Unit tests for silver/changes.c: ranking per key (S1, S2), the merge rule (S3), the
 * capture-instance check (S4), the order-preserving key encoding and the silver schema. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/silver.h"

/* bronze: _capture_instance, _start_lsn, _seqval, _operation, _command_id, _commit_ts,
 *         id INT, name STRING, amount DECIMAL(12,2), _batch_id, _snapshot, _chunk */
enum { B_CI, B_LSN, B_SEQ, B_OP, B_CMD, B_TS, B_ID, B_NAME, B_AMT, B_BATCH, B_SNAP, B_CHUNK, B_N };

static mcdc_schema *bronze_schema(void)
{
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(0, mcdc_schema_add(s, "_capture_instance", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "_start_lsn", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "_seqval", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "_operation", MCDC_TYPE_INT, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "_command_id", MCDC_TYPE_INT, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "id", MCDC_TYPE_INT, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "name", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 12, 2, true));
    assert_int_equal(0, mcdc_schema_add(s, "_batch_id", MCDC_TYPE_INT, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "_snapshot", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "_chunk", MCDC_TYPE_INT, 0, 0, true));
    return s;
}

/* One bronze row as text; lsn/seq are small numbers turned into LSN text. */
typedef struct brow {
    const char *ci;
    int lsn, seq, op, cmd; /* seq/cmd < 0: NULL */
    int id;                /* < 0: NULL key */
    const char *name;
    long amount_cents;
    int snapshot;          /* > 0: _snapshot */
} brow;

static char text_pool[64][32];
static int text_next;

static const char *lsn_text(int n)
{
    char *t = text_pool[text_next++ % 64];
    snprintf(t, 32, "0x%020X", n);
    return t;
}

static void set_str(mcdc_value *v, const char *s)
{
    v->is_null = s == NULL;
    if (s) {
        v->v.s.ptr = s;
        v->v.s.len = strlen(s);
    }
}

static int offer(mcdc_silver_changes *cs, const brow *r)
{
    mcdc_value v[B_N];
    memset(v, 0, sizeof v);
    set_str(&v[B_CI], r->ci ? r->ci : "dbo_orders");
    set_str(&v[B_LSN], lsn_text(r->lsn));
    set_str(&v[B_SEQ], r->seq < 0 ? NULL : lsn_text(r->seq));
    v[B_OP].v.i = r->op;
    v[B_CMD].is_null = r->cmd < 0;
    v[B_CMD].v.i = r->cmd;
    v[B_TS].v.i = 1000000LL * r->lsn;
    v[B_ID].is_null = r->id < 0;
    v[B_ID].v.i = r->id;
    set_str(&v[B_NAME], r->name);
    v[B_AMT].v.dec = r->amount_cents;
    v[B_BATCH].is_null = r->op == 0;
    set_str(&v[B_SNAP], r->snapshot > 0 ? lsn_text(r->snapshot) : NULL);
    v[B_CHUNK].is_null = true;
    return mcdc_silver_changes_add(cs, v);
}

/* An in-memory silver table: rows "id|name|amount|lsn" kept as owned value copies. */
typedef struct table {
    mcdc_value rows[64][8];
    char       strs[64][2][64];
    size_t     n;
} table;

static void put_row(table *t, const mcdc_schema *s, const mcdc_value *row)
{
    assert_true(t->n < 64);
    size_t k = t->n++;
    int ns = 0;
    for (size_t i = 0; i < s->n_cols; i++) {
        t->rows[k][i] = row[i];
        if (!row[i].is_null && s->cols[i].type == MCDC_TYPE_STRING) {
            assert_true(row[i].v.s.len < 64 && ns < 2);
            memcpy(t->strs[k][ns], row[i].v.s.ptr, row[i].v.s.len);
            t->rows[k][i].v.s.ptr = t->strs[k][ns++];
        }
    }
}

/* Apply a change set to @p t the way apply.c does per file: match every row, then insert
 * the unmatched upserts in key order. */
/* Cells the tests decode images into (two at once; more than any test schema's columns). */
static mcdc_value cells_a[32], cells_b[32];

static void apply(table *t, mcdc_silver_changes *cs)
{
    const mcdc_schema *s = mcdc_silver_changes_schema(cs);
    static table out;
    memset(&out, 0, sizeof out);
    for (size_t i = 0; i < t->n; i++) {
        mcdc_silver_fate fate;
        const mcdc_value *img;
        assert_int_equal(0, mcdc_silver_changes_match(cs, t->rows[i], &fate, &img, cells_a));
        if (fate == MCDC_SILVER_REPLACE)
            assert_ptr_equal(cells_a, img);
        if (fate == MCDC_SILVER_KEEP)
            put_row(&out, s, t->rows[i]);
        else if (fate == MCDC_SILVER_REPLACE)
            put_row(&out, s, img);
    }
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    for (size_t i = 0; i < mcdc_silver_changes_count(cs); i++) {
        mcdc_silver_image im;
        mcdc_silver_changes_at(cs, i, &im);
        if (!im.matched && !im.is_delete)
            put_row(&out, s, mcdc_silver_changes_row_at(cs, i, cells_a));
    }
    t->n = 0;
    for (size_t i = 0; i < out.n; i++)
        put_row(t, s, out.rows[i]);
}

/* The table as sorted text lines "id:name:amount@lsn" joined by ' '. */
static void dump(char *buf, size_t cap, const table *t)
{
    char lines[64][96];
    for (size_t i = 0; i < t->n; i++) {
        const mcdc_value *r = t->rows[i];
        char amt[48];
        mcdc_decimal_format(amt, r[2].v.dec, 2);
        char id[24];
        if (r[0].is_null)
            strcpy(id, "null");
        else
            snprintf(id, sizeof id, "%lld", (long long)r[0].v.i);
        snprintf(lines[i], sizeof lines[i], "%s:%.*s:%s@%d", id,
                 r[1].is_null ? 4 : (int)(r[1].v.s.len > 30 ? 30 : r[1].v.s.len),
                 r[1].is_null ? "null" : r[1].v.s.ptr,
                 r[2].is_null ? "null" : amt, (int)strtol(r[3].v.s.ptr + 2, NULL, 16));
    }
    for (size_t i = 1; i < t->n; i++)
        for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
            char tmp[96];
            memcpy(tmp, lines[j], 96);
            memcpy(lines[j], lines[j - 1], 96);
            memcpy(lines[j - 1], tmp, 96);
        }
    buf[0] = 0;
    for (size_t i = 0, len = 0; i < t->n; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? " " : "", lines[i]);
        if (w < 0 || (size_t)w >= cap - len)
            break; /* the text is cut at the buffer's end */
        len += (size_t)w;
    }
}

typedef struct fixture {
    mcdc_schema *bronze;
    mcdc_schema *silver;
    table        t;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->bronze = bronze_schema();
    assert_int_equal(0, mcdc_silver_schema(&f->silver, f->bronze, NULL));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    mcdc_schema_free(f->bronze);
    mcdc_schema_free(f->silver);
    free(f);
    return 0;
}

static const char *const key_id[] = { "id" };

/* Apply @p rows (changes after @p after, or all when after < 0) to the fixture's table and
 * return its dump. */
static const char *run(fixture *f, const brow *rows, size_t n, int after)
{
    static char buf[4096];
    mcdc_silver_changes_options o = MCDC_SILVER_CHANGES_OPTIONS_INIT;
    if (after >= 0) {
        o.has_after = true;
        mcdc_lsn_parse(&o.after, lsn_text(after));
    }
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, &o));
    for (size_t i = 0; i < n; i++)
        if (offer(cs, &rows[i]) != 0)
            fail_msg("row %zu: %s", i, mcdc_error_last()->message);
    apply(&f->t, cs);
    mcdc_silver_changes_free(cs);
    dump(buf, sizeof buf, &f->t);
    return buf;
}

#define N(a) (sizeof(a) / sizeof *(a))

static void test_silver_changes__schema_is_captured_columns_then_position(void **state)
{
    fixture *f = *state;
    assert_int_equal(5, f->silver->n_cols);
    assert_string_equal("id", f->silver->cols[0].name);
    assert_string_equal("amount", f->silver->cols[2].name);
    assert_string_equal("_start_lsn", f->silver->cols[3].name);
    assert_string_equal("_commit_ts", f->silver->cols[4].name);
    /* a column bronze gained is appended after silver's own columns */
    mcdc_schema *b2 = mcdc_schema_copy(f->bronze);
    assert_int_equal(0, mcdc_schema_add(b2, "note", MCDC_TYPE_STRING, 0, 0, true));
    mcdc_schema *s2 = NULL;
    assert_int_equal(0, mcdc_silver_schema(&s2, b2, f->silver));
    assert_int_equal(6, s2->n_cols);
    assert_string_equal("note", s2->cols[5].name);
    mcdc_schema_free(s2);
    /* a column bronze widened (typeWidening) widens in silver too */
    mcdc_schema *b3 = mcdc_schema_copy(f->bronze);
    b3->cols[B_AMT].precision = 18;
    assert_int_equal(0, mcdc_silver_schema(&s2, b3, f->silver));
    assert_int_equal(18, s2->cols[2].precision);
    mcdc_schema_free(s2);
    s2 = NULL;
    /* any other type change is refused */
    b3->cols[B_AMT].type = MCDC_TYPE_STRING;
    assert_int_equal(MCDC_ESCHEMA, mcdc_silver_schema(&s2, b3, f->silver));
    assert_null(s2);
    assert_non_null(strstr(mcdc_error_last()->message, "amount"));
    mcdc_schema_free(b2);
    mcdc_schema_free(b3);
    /* a table without _start_lsn is no bronze */
    mcdc_schema *x = mcdc_schema_new();
    mcdc_schema_add(x, "id", MCDC_TYPE_INT, 0, 0, true);
    assert_int_equal(MCDC_EINVAL, mcdc_silver_schema(&s2, x, NULL));
    mcdc_schema_free(x);
}

static void test_silver_changes__insert_update_delete(void **state)
{
    fixture *f = *state;
    const brow b1[] = {
        { NULL, 10, 10, 2, 1, 1, "a", 100, 0 },
        { NULL, 10, 11, 2, 1, 2, "b", 200, 0 },
        { NULL, 12, 12, 2, 1, 3, "c", 300, 0 },
    };
    assert_string_equal("1:a:1.00@10 2:b:2.00@10 3:c:3.00@12", run(f, b1, N(b1), -1));
    const brow b2[] = {
        { NULL, 20, 20, 3, 1, 1, "a", 100, 0 },
        { NULL, 20, 20, 4, 1, 1, "A", 150, 0 }, /* S2: the 4 outranks its own 3 */
        { NULL, 21, 21, 1, 1, 2, "b", 200, 0 },
    };
    assert_string_equal("1:A:1.50@20 3:c:3.00@12", run(f, b2, N(b2), 12));
}

static void test_silver_changes__before_image_after_its_after_image_in_input(void **state)
{
    fixture *f = *state;
    /* input order does not matter: the 4 comes first in the input */
    const brow b[] = {
        { NULL, 5, 5, 2, 1, 7, "x", 1, 0 },
        { NULL, 6, 6, 4, 1, 7, "y", 2, 0 },
        { NULL, 6, 6, 3, 1, 7, "x", 1, 0 },
    };
    assert_string_equal("7:y:0.02@6", run(f, b, N(b), -1));
}

static void test_silver_changes__key_update_as_3_and_4_moves_the_row(void **state)
{
    fixture *f = *state;
    const brow b1[] = { { NULL, 5, 5, 2, 1, 1, "a", 100, 0 }, { NULL, 5, 6, 2, 1, 2, "b", 1, 0 } };
    run(f, b1, N(b1), -1);
    const brow b2[] = {
        { NULL, 9, 9, 3, 1, 1, "a", 100, 0 }, /* the row moved from key 1 ... */
        { NULL, 9, 9, 4, 1, 5, "a", 100, 0 }, /* ... to key 5 */
    };
    assert_string_equal("2:b:0.01@5 5:a:1.00@9", run(f, b2, N(b2), 5));
}

static void test_silver_changes__key_update_as_delete_and_insert(void **state)
{
    fixture *f = *state;
    const brow b1[] = { { NULL, 5, 5, 2, 1, 1, "a", 100, 0 } };
    run(f, b1, N(b1), -1);
    /* SQL Server records a primary-key update as 1 then 2 */
    const brow b2[] = { { NULL, 9, 9, 1, 1, 1, "a", 100, 0 }, { NULL, 9, 10, 2, 1, 4, "a", 100, 0 } };
    assert_string_equal("4:a:1.00@9", run(f, b2, N(b2), 5));
}

static void test_silver_changes__swap_of_two_keys_in_one_statement(void **state)
{
    fixture *f = *state;
    const brow b1[] = { { NULL, 5, 5, 2, 1, 1, "a", 1, 0 }, { NULL, 5, 6, 2, 1, 2, "b", 2, 0 } };
    run(f, b1, N(b1), -1);
    /* UPDATE ... SET id = 3 - id: row a 1->2 (seqval 9), row b 2->1 (seqval 10) */
    const brow b2[] = {
        { NULL, 9, 9, 3, 1, 1, "a", 1, 0 }, { NULL, 9, 9, 4, 1, 2, "a", 1, 0 },
        { NULL, 9, 10, 3, 1, 2, "b", 2, 0 }, { NULL, 9, 10, 4, 1, 1, "b", 2, 0 },
    };
    /* S2: within one statement a row entering a key outranks a row leaving it, whatever
     * the seqvals: key 2 holds a although b left it at a later seqval */
    assert_string_equal("1:b:0.02@9 2:a:0.01@9", run(f, b2, N(b2), 5));
    /* without _command_id the statement is unknown: log order decides (key 2 left last) */
    memset(&f->t, 0, sizeof f->t);
    brow c1[N(b1)], c2[N(b2)];
    memcpy(c1, b1, sizeof b1);
    memcpy(c2, b2, sizeof b2);
    for (size_t i = 0; i < N(c1); i++)
        c1[i].cmd = -1;
    for (size_t i = 0; i < N(c2); i++)
        c2[i].cmd = -1;
    run(f, c1, N(c1), -1);
    assert_string_equal("1:b:0.02@9", run(f, c2, N(c2), 5));
    /* a MERGE deleting key 7 and inserting a new key 7 in one statement keeps the insert */
    const brow m[] = { { NULL, 12, 12, 2, 1, 7, "new", 1, 0 }, { NULL, 12, 13, 1, 1, 7, "old", 1, 0 } };
    assert_string_equal("1:b:0.02@9 7:new:0.01@12", run(f, m, N(m), 9));
}

static void test_silver_changes__reinsert_of_a_deleted_key(void **state)
{
    fixture *f = *state;
    const brow b1[] = { { NULL, 5, 5, 2, 1, 1, "a", 100, 0 } };
    run(f, b1, N(b1), -1);
    const brow b2[] = { { NULL, 7, 7, 1, 1, 1, "a", 100, 0 }, { NULL, 8, 8, 2, 1, 1, "again", 7, 0 } };
    assert_string_equal("1:again:0.07@8", run(f, b2, N(b2), 5));
    /* and deleted then re-inserted within one transaction */
    const brow b3[] = {
        { NULL, 12, 12, 1, 1, 1, "again", 7, 0 }, { NULL, 12, 13, 2, 2, 1, "third", 9, 0 },
    };
    assert_string_equal("1:third:0.09@12", run(f, b3, N(b3), 8));
}

static void test_silver_changes__many_changes_of_one_key_in_and_across_batches(void **state)
{
    fixture *f = *state;
    brow b[40];
    for (int i = 0; i < 40; i++) {
        brow r = { NULL, 10 + i, 10 + i, i == 0 ? 2 : 4, 1, 1, "v", i, 0 };
        b[i] = r;
    }
    assert_string_equal("1:v:0.39@49", run(f, b, 40, -1));
    brow c[3] = {
        { NULL, 60, 60, 4, 1, 1, "w", 1, 0 }, { NULL, 61, 61, 1, 1, 1, "w", 1, 0 },
        { NULL, 62, 62, 2, 1, 1, "z", 5, 0 },
    };
    assert_string_equal("1:z:0.05@62", run(f, c, 3, 49));
    brow d[2] = { { NULL, 70, 70, 4, 1, 1, "u", 1, 0 }, { NULL, 71, 71, 1, 1, 1, "u", 1, 0 } };
    assert_string_equal("", run(f, d, 2, 62));
}

static void test_silver_changes__interleaved_transactions_rank_by_commit_lsn(void **state)
{
    fixture *f = *state;
    /* T1 (commit 20) wrote key 1 at seqval 15; T2 (commit 18) wrote it at seqval 17:
     * the later commit wins whatever the seqvals and the input order */
    const brow b[] = {
        { NULL, 20, 15, 2, 1, 1, "t1", 1, 0 },
        { NULL, 18, 17, 2, 1, 1, "t2", 2, 0 },
        { NULL, 18, 16, 2, 1, 2, "t2", 2, 0 },
    };
    assert_string_equal("1:t1:0.01@20 2:t2:0.02@18", run(f, b, N(b), -1));
}

static void test_silver_changes__command_id_orders_statements_of_one_transaction(void **state)
{
    fixture *f = *state;
    /* same commit: statement 2 (a delete) outranks statement 1 even with a lower seqval */
    const brow b[] = { { NULL, 20, 30, 2, 1, 1, "x", 1, 0 }, { NULL, 20, 25, 1, 2, 1, "x", 1, 0 } };
    assert_string_equal("", run(f, b, N(b), -1));
}

/* The refinement of S1 against the original order (_start_lsn, _command_id, _seqval,
 * _operation): it only acts among rows of one (_start_lsn, _command_id). */
static void test_silver_changes__entering_beats_leaving_only_within_one_command(void **state)
{
    fixture *f = *state;
    const brow base[] = { { NULL, 5, 5, 2, 1, 1, "a", 1, 0 } };
    run(f, base, N(base), -1);
    /* an update's own 3 and 4 (one seqval): the 4, in both orders */
    const brow u[] = { { NULL, 9, 9, 4, 1, 1, "a2", 2, 0 }, { NULL, 9, 9, 3, 1, 1, "a", 1, 0 } };
    assert_string_equal("1:a2:0.02@9", run(f, u, N(u), 5));
    /* two statements of one transaction: the later command wins, as in the original,
     * whatever leaves or enters (statement 2 deletes what statement 1 wrote) */
    const brow c[] = { { NULL, 12, 14, 4, 1, 1, "a3", 3, 0 }, { NULL, 12, 13, 1, 2, 1, "a2", 2, 0 } };
    assert_string_equal("", run(f, c, N(c), 9));
    /* one statement leaves the key (seqval 21) after a row entered it (seqval 20): the
     * original order would take the later 1 and lose the key; the row entering wins */
    const brow m[] = { { NULL, 15, 20, 2, 1, 1, "in", 4, 0 }, { NULL, 15, 21, 1, 1, 1, "out", 0, 0 } };
    assert_string_equal("1:in:0.04@15", run(f, m, N(m), 12));
}

static void test_silver_changes__rerun_changes_nothing_and_resurrects_nothing(void **state)
{
    fixture *f = *state;
    const brow b1[] = {
        { NULL, 5, 5, 2, 1, 1, "a", 1, 0 }, { NULL, 5, 6, 2, 1, 2, "b", 2, 0 },
        { NULL, 6, 6, 2, 1, 3, "c", 3, 0 },
    };
    run(f, b1, N(b1), -1);
    const brow b2[] = {
        { NULL, 7, 7, 1, 1, 1, "a", 1, 0 },  { NULL, 8, 8, 4, 1, 2, "B", 2, 0 },
        { NULL, 8, 9, 2, 1, 9, "new", 9, 0 }, { NULL, 9, 9, 1, 1, 9, "new", 9, 0 },
    };
    char first[256];
    snprintf(first, sizeof first, "%s", run(f, b2, N(b2), 6));
    assert_string_equal("2:B:0.02@8 3:c:0.03@6", first);
    /* a crash before the position was recorded: the same rows again */
    assert_string_equal(first, run(f, b2, N(b2), 6));
    /* and again together with what arrived since */
    const brow b3[] = {
        { NULL, 7, 7, 1, 1, 1, "a", 1, 0 },  { NULL, 8, 8, 4, 1, 2, "B", 2, 0 },
        { NULL, 8, 9, 2, 1, 9, "new", 9, 0 }, { NULL, 9, 9, 1, 1, 9, "new", 9, 0 },
        { NULL, 11, 11, 4, 1, 3, "C", 3, 0 },
    };
    assert_string_equal("2:B:0.02@8 3:C:0.03@11", run(f, b3, N(b3), 6));
}

static void test_silver_changes__older_image_never_replaces_a_newer_row(void **state)
{
    fixture *f = *state;
    const brow b1[] = { { NULL, 50, 50, 2, 1, 1, "new", 1, 0 } };
    run(f, b1, N(b1), -1);
    /* without a position: an older update and an older delete leave the newer row */
    const brow b2[] = { { NULL, 40, 40, 4, 1, 1, "old", 1, 0 } };
    assert_string_equal("1:new:0.01@50", run(f, b2, N(b2), -1));
    const brow b3[] = { { NULL, 45, 45, 1, 1, 1, "old", 1, 0 } };
    assert_string_equal("1:new:0.01@50", run(f, b3, N(b3), -1));
}

static void test_silver_changes__position_and_snapshot_select_rows(void **state)
{
    fixture *f = *state;
    mcdc_silver_changes_options o = MCDC_SILVER_CHANGES_OPTIONS_INIT;
    o.has_after = true;
    mcdc_lsn_parse(&o.after, lsn_text(30));
    o.has_snapshot = true;
    mcdc_lsn_parse(&o.snapshot, lsn_text(30));
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, &o));
    const brow b[] = {
        { NULL, 10, -1, 0, -1, 1, "old snapshot", 1, 10 }, /* another snapshot: skipped */
        { NULL, 30, -1, 0, -1, 1, "snap", 1, 30 },
        { NULL, 30, -1, 0, -1, 2, "snap", 2, 0 },          /* pre-migration: _snapshot NULL */
        { NULL, 31, -1, 0, -1, 3, "chunk", 3, 30 },         /* a chunk of S stamped later */
        { NULL, 20, 20, 2, 1, 4, "before S", 4, 0 },         /* a change at or below S: skipped */
        { NULL, 30, 30, 4, 1, 5, "at S", 5, 0 },
        { NULL, 35, 35, 4, 1, 2, "after", 22, 0 },
    };
    for (size_t i = 0; i < N(b); i++)
        assert_int_equal(0, offer(cs, &b[i]));
    mcdc_silver_changes_stats st;
    mcdc_silver_changes_get_stats(cs, &st);
    assert_int_equal(7, st.rows_seen);
    assert_int_equal(4, st.rows_taken);
    assert_int_equal(3, st.snapshot_rows);
    assert_int_equal(3, st.n_keys);
    assert_true(st.has_max_change);
    assert_int_equal(0, mcdc_lsn_cmp(&st.max_change_lsn, &(mcdc_lsn){ .b = { [9] = 35 } }));
    apply(&f->t, cs);
    char buf[512];
    dump(buf, sizeof buf, &f->t);
    assert_string_equal("1:snap:0.01@30 2:after:0.22@35 3:chunk:0.03@31", buf);
    mcdc_silver_changes_free(cs);
}

static void test_silver_changes__null_and_composite_keys(void **state)
{
    fixture *f = *state;
    static const char *const keys[] = { "name", "id" };
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, keys, 2, NULL));
    const brow b[] = {
        { NULL, 5, 5, 2, 1, -1, "k", 1, 0 },  /* (k, NULL) */
        { NULL, 6, 6, 4, 1, -1, "k", 2, 0 },  /* same key, null-safe */
        { NULL, 6, 7, 2, 1, 1, "k", 3, 0 },   /* (k, 1) another key */
        { NULL, 6, 8, 2, 1, 1, NULL, 4, 0 },  /* (NULL, 1) */
    };
    for (size_t i = 0; i < N(b); i++)
        assert_int_equal(0, offer(cs, &b[i]));
    assert_int_equal(3, mcdc_silver_changes_count(cs));
    apply(&f->t, cs);
    char buf[512];
    dump(buf, sizeof buf, &f->t);
    assert_string_equal("1:k:0.03@6 1:null:0.04@6 null:k:0.02@6", buf);
    /* key order: (NULL, 1) < (k, NULL) < (k, 1) */
    assert_true(mcdc_silver_changes_row_at(cs, 0, cells_a)[1].is_null);
    assert_true(mcdc_silver_changes_row_at(cs, 1, cells_a)[0].is_null);
    mcdc_silver_changes_free(cs);
}

static void test_silver_changes__capture_instances_are_checked(void **state)
{
    fixture *f = *state;
    static const char *const cis[] = { "dbo_orders", "dbo_orders_v2" };
    mcdc_silver_changes_options o = MCDC_SILVER_CHANGES_OPTIONS_INIT;
    o.capture_instances = cis;
    o.n_capture_instances = 2;
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, &o));
    const brow ok1 = { "DBO_Orders", 5, 5, 2, 1, 1, "a", 1, 0 };
    const brow ok2 = { "dbo_orders_v2", 6, 6, 4, 1, 1, "b", 1, 0 };
    const brow bad = { "dbo_customers", 7, 7, 2, 1, 2, "c", 1, 0 };
    assert_int_equal(0, offer(cs, &ok1));
    assert_int_equal(0, offer(cs, &ok2));
    assert_int_equal(MCDC_EINVAL, offer(cs, &bad));
    assert_non_null(strstr(mcdc_error_last()->message, "dbo_customers"));
    assert_non_null(strstr(mcdc_error_last()->hint, "--source"));
    assert_int_equal(1, mcdc_silver_changes_count(cs));
    mcdc_silver_changes_free(cs);
}

static void test_silver_changes__bad_rows_and_keys_are_refused(void **state)
{
    fixture *f = *state;
    static const char *const bad_key[] = { "_operation" };
    static const char *const missing[] = { "nope" };
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(MCDC_EINVAL, mcdc_silver_changes_new(&cs, f->bronze, f->silver, bad_key, 1, NULL));
    assert_null(cs);
    assert_int_equal(MCDC_EINVAL, mcdc_silver_changes_new(&cs, f->bronze, f->silver, missing, 1, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "'nope'"));
    assert_int_equal(MCDC_EINVAL, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 0, NULL));
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, NULL));
    mcdc_value v[B_N];
    memset(v, 0, sizeof v);
    set_str(&v[B_LSN], "0xZZ");
    v[B_OP].v.i = 2;
    assert_int_equal(MCDC_ECORRUPT, mcdc_silver_changes_add(cs, v));
    set_str(&v[B_LSN], NULL);
    assert_int_equal(MCDC_ECORRUPT, mcdc_silver_changes_add(cs, v));
    set_str(&v[B_LSN], "0x01");
    v[B_OP].v.i = 9;
    assert_int_equal(MCDC_ECORRUPT, mcdc_silver_changes_add(cs, v));
    assert_int_equal(0, mcdc_silver_changes_count(cs));
    mcdc_silver_changes_free(cs);
}

static void test_silver_changes__memory_cap_is_enforced(void **state)
{
    fixture *f = *state;
    mcdc_silver_changes_options o = MCDC_SILVER_CHANGES_OPTIONS_INIT;
    o.max_bytes = 64 * 1024;
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, &o));
    int rc = 0;
    int i;
    for (i = 0; i < 100000 && rc == 0; i++) {
        brow r = { NULL, 5, 5, 2, 1, i, "some name", i, 0 };
        rc = offer(cs, &r);
    }
    assert_int_equal(MCDC_ENOMEM, rc);
    assert_true(i > 10 && i < 2000);
    mcdc_silver_changes_stats st;
    mcdc_silver_changes_get_stats(cs, &st);
    assert_true(st.bytes <= o.max_bytes);
    mcdc_silver_changes_free(cs);
}

static void test_silver_changes__many_keys_grow_the_index(void **state)
{
    fixture *f = *state;
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, NULL));
    for (int i = 0; i < 20000; i++) {
        brow r = { NULL, 5 + i % 7, 5 + i, 2, 1, (i * 7919) % 20000, "n", i, 0 };
        assert_int_equal(0, offer(cs, &r));
    }
    assert_int_equal(20000, mcdc_silver_changes_count(cs));
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    mcdc_silver_image a, b;
    for (size_t i = 1; i < 20000; i++) {
        mcdc_silver_changes_at(cs, i - 1, &a);
        mcdc_silver_changes_at(cs, i, &b);
        assert_true(mcdc_silver_changes_row_at(cs, i - 1, cells_a)[0].v.i + 1 ==
                    mcdc_silver_changes_row_at(cs, i, cells_b)[0].v.i);
    }
    mcdc_silver_changes_at(cs, 1234, &a);
    assert_int_equal(1234, mcdc_silver_changes_find_sorted(cs, a.key, a.key_len));
    assert_int_equal(1234, mcdc_silver_changes_lower_bound(cs, a.key, a.key_len));
    mcdc_silver_changes_free(cs);
}

/* Keys of every length (empty, short, exactly 16 bytes, longer ones sharing their first
 * 16 bytes and more) come out of the sort in byte order of their encodings, which for
 * strings is the strings' order; key_at gives each image's own key. */
static void test_silver_changes__sort_orders_keys_of_every_length(void **state)
{
    fixture *f = *state;
    static const char *const keys[] = { "name", "id" };
    static const char *const prefixes[] = { "", "x", "abcdefghijklmn", "abcdefghijklmnop",
                                            "abcdefghijklmnopqrstuvwxyz-" };
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, keys, 2, NULL));
    char name[64];
    const int n = 6000;
    for (int i = 0; i < n; i++) {
        int k = (i * 7919) % n;
        snprintf(name, sizeof name, "%s%d", prefixes[k % 5], k / 5 % 50);
        brow r = { NULL, 5 + i, 5 + i, 2, 1, k / 250, name, i, 0 };
        assert_int_equal(0, offer(cs, &r));
    }
    size_t count = mcdc_silver_changes_count(cs);
    assert_true(count > 1000);
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    mcdc_silver_image a, b;
    for (size_t i = 0; i < count; i++) {
        size_t len;
        const uint8_t *key = mcdc_silver_changes_key_at(cs, i, &len);
        mcdc_silver_changes_at(cs, i, &b);
        assert_int_equal(b.key_len, len);
        assert_memory_equal(b.key, key, len);
        if (i == 0)
            continue;
        mcdc_silver_changes_at(cs, i - 1, &a);
        size_t m = a.key_len < b.key_len ? a.key_len : b.key_len;
        int c = memcmp(a.key, b.key, m);
        assert_true(c < 0 || (c == 0 && a.key_len < b.key_len));
        /* (name, id) rise: names in byte order, ids within one name */
        const mcdc_value *ra = mcdc_silver_changes_row_at(cs, i - 1, cells_a);
        const mcdc_value *rb = mcdc_silver_changes_row_at(cs, i, cells_b);
        size_t la = ra[1].v.s.len, lb = rb[1].v.s.len;
        int nc = memcmp(ra[1].v.s.ptr, rb[1].v.s.ptr, la < lb ? la : lb);
        if (nc == 0)
            nc = la < lb ? -1 : la > lb;
        assert_true(nc < 0 || (nc == 0 && ra[0].v.i < rb[0].v.i));
    }
    mcdc_silver_changes_free(cs);
}

/* Replaced images are garbage until a compaction: many changes of a few keys keep the
 * memory near the live images, and the images (strings included) survive the moves. */
static void test_silver_changes__replaced_images_are_compacted(void **state)
{
    fixture *f = *state;
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, NULL));
    char name[32];
    for (int i = 0; i < 60000; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        brow r = { NULL, 10 + i, 1, 4, 1, i % 3, name, i, 0 };
        assert_int_equal(0, offer(cs, &r));
    }
    mcdc_silver_changes_stats st;
    mcdc_silver_changes_get_stats(cs, &st);
    assert_true(st.bytes < ((size_t)3 << 20)); /* 60000 images would be ~20 MB */
    assert_int_equal(3, mcdc_silver_changes_count(cs));
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    for (int k = 0; k < 3; k++) {
        const mcdc_value *row = mcdc_silver_changes_row_at(cs, (size_t)k, cells_a);
        int last = 60000 - 3 + k;
        snprintf(name, sizeof name, "name-%d", last);
        assert_int_equal(k, row[0].v.i);
        assert_int_equal(strlen(name), row[1].v.s.len);
        assert_memory_equal(name, row[1].v.s.ptr, strlen(name));
        assert_int_equal(last, (int)row[2].v.dec);
        assert_int_equal(22, row[3].v.s.len);
        assert_int_equal(10 + last, (int)strtol(row[3].v.s.ptr + 2, NULL, 16));
    }
    mcdc_silver_changes_free(cs);
}

/* At the cap, a compaction makes room: one key changed many times never hits it. */
static void test_silver_changes__cap_counts_live_images_after_compaction(void **state)
{
    fixture *f = *state;
    mcdc_silver_changes_options o = MCDC_SILVER_CHANGES_OPTIONS_INIT;
    o.max_bytes = 64 * 1024;
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, &o));
    for (int i = 0; i < 5000; i++) {
        brow r = { NULL, 10 + i, 1, 4, 1, 7, "a longer name to fill the cap", i, 0 };
        assert_int_equal(0, offer(cs, &r));
        mcdc_silver_changes_stats st;
        mcdc_silver_changes_get_stats(cs, &st);
        assert_true(st.bytes <= o.max_bytes);
    }
    assert_int_equal(1, mcdc_silver_changes_count(cs));
    mcdc_silver_changes_free(cs);
}

/* Deciding rows by sorted index gives what the hashed match gives; marks save and restore. */
static void test_silver_changes__match_at_and_marks(void **state)
{
    fixture *f = *state;
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, NULL));
    brow rows[] = {
        { NULL, 20, 1, 4, 1, 1, "new one", 100, 0 },
        { NULL, 20, 2, 1, 1, 2, "gone", 0, 0 },
        { NULL, 20, 3, 2, 1, 3, "fresh", 300, 0 },
    };
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(0, offer(cs, &rows[i]));
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    /* a silver row of key 1 written at LSN 10 */
    mcdc_value row[5];
    memset(row, 0, sizeof row);
    row[0].v.i = 1;
    set_str(&row[1], "old one");
    row[2].v.dec = 1;
    set_str(&row[3], lsn_text(10));
    row[4].v.i = 10;
    mcdc_silver_fate fate;
    const mcdc_value *img;
    assert_int_equal(0, mcdc_silver_changes_marks(cs, 0));
    assert_int_equal(0, mcdc_silver_changes_match_at(cs, 0, row, &fate, &img, cells_a));
    assert_int_equal(MCDC_SILVER_REPLACE, fate);
    assert_int_equal(100, (int)img[2].v.dec);
    assert_int_equal(3, mcdc_silver_changes_marks(cs, 0)); /* met and placed */
    assert_int_equal(0, mcdc_silver_changes_match_at(cs, 0, row, &fate, &img, cells_a));
    assert_int_equal(MCDC_SILVER_DROP, fate); /* a second copy of the key */
    mcdc_silver_changes_set_marks(cs, 0, 0);
    mcdc_buf key = MCDC_BUF_INIT(1024);
    assert_int_equal(0, mcdc_silver_changes_row_key(cs, &key, row));
    assert_int_equal(0, mcdc_silver_changes_match_key(cs, (const uint8_t *)key.ptr, key.len, row,
                                                      &fate, &img, cells_a));
    assert_int_equal(MCDC_SILVER_REPLACE, fate); /* as if never matched */
    row[0].v.i = 2;
    assert_int_equal(0, mcdc_silver_changes_match_at(cs, 1, row, &fate, &img, cells_a));
    assert_int_equal(MCDC_SILVER_DROP, fate);
    assert_int_equal(1, mcdc_silver_changes_marks(cs, 1));
    mcdc_buf_dispose(&key);
    mcdc_silver_changes_free(cs);
}

static int enc_cmp(const mcdc_column *c, const mcdc_value *a, const mcdc_value *b)
{
    mcdc_buf x = MCDC_BUF_INIT(1024), y = MCDC_BUF_INIT(1024);
    assert_int_equal(0, mcdc_silver_key_encode(&x, c, a));
    assert_int_equal(0, mcdc_silver_key_encode(&y, c, b));
    size_t n = x.len < y.len ? x.len : y.len;
    int r = memcmp(x.ptr, y.ptr, n);
    if (r == 0)
        r = x.len < y.len ? -1 : x.len > y.len;
    mcdc_buf_dispose(&x);
    mcdc_buf_dispose(&y);
    return r < 0 ? -1 : r > 0;
}

static void test_silver_changes__key_encoding_preserves_order(void **state)
{
    (void)state;
    mcdc_column ci = { "i", MCDC_TYPE_LONG, 0, 0, true };
    mcdc_value n = { .is_null = true }, a = { 0 }, b = { 0 };
    a.v.i = -5;
    b.v.i = 3;
    assert_int_equal(-1, enc_cmp(&ci, &a, &b));
    assert_int_equal(-1, enc_cmp(&ci, &n, &a));
    a.v.i = INT64_MIN;
    b.v.i = INT64_MAX;
    assert_int_equal(-1, enc_cmp(&ci, &a, &b));
    mcdc_column cd = { "d", MCDC_TYPE_DECIMAL, 38, 2, true };
    a.v.dec = -1;
    b.v.dec = (mcdc_int128)1 << 100;
    assert_int_equal(-1, enc_cmp(&cd, &a, &b));
    b.v.dec = -1;
    assert_int_equal(0, enc_cmp(&cd, &a, &b));
    mcdc_column cs = { "s", MCDC_TYPE_STRING, 0, 0, true };
    a.v.s.ptr = "ab";
    a.v.s.len = 2;
    b.v.s.ptr = "abc";
    b.v.s.len = 3;
    assert_int_equal(-1, enc_cmp(&cs, &a, &b));
    b.v.s.ptr = "ab\0";
    b.v.s.len = 3; /* an embedded NUL sorts after the prefix */
    assert_int_equal(-1, enc_cmp(&cs, &a, &b));
    b.v.s.ptr = "a\xff";
    b.v.s.len = 2;
    assert_int_equal(-1, enc_cmp(&cs, &a, &b));
    mcdc_column cf = { "f", MCDC_TYPE_DOUBLE, 0, 0, true };
    a.v.d = -0.0;
    b.v.d = 0.0;
    assert_int_equal(0, enc_cmp(&cf, &a, &b));
    a.v.d = -2.5;
    b.v.d = -1.0;
    assert_int_equal(-1, enc_cmp(&cf, &a, &b));
    a.v.d = 1e300;
    assert_int_equal(1, enc_cmp(&cf, &a, &b));
}

/* Offer an update of key @p id whose _start_lsn and _seqval are the texts given. */
static int offer_texts(mcdc_silver_changes *cs, const char *lsn, const char *seq, int id)
{
    mcdc_value v[B_N];
    memset(v, 0, sizeof v);
    set_str(&v[B_CI], "dbo_orders");
    set_str(&v[B_LSN], lsn);
    set_str(&v[B_SEQ], seq);
    v[B_OP].v.i = 4;
    v[B_CMD].v.i = 1;
    v[B_ID].v.i = id;
    set_str(&v[B_NAME], lsn);
    v[B_BATCH].is_null = true;
    v[B_SNAP].is_null = true;
    v[B_CHUNK].is_null = true;
    return mcdc_silver_changes_add(cs, v);
}

/* LSN text ranks by its value whatever its form (case, 0X, fewer digits), in bronze rows
 * and in silver's _start_lsn; text that is not an LSN is refused, naming it. */
static void test_silver_changes__lsn_text_of_any_form_ranks_by_value(void **state)
{
    fixture *f = *state;
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, NULL));
    const char *one = "0x00000000000000000001";
    assert_int_equal(0, offer_texts(cs, "0x00000000000000000005", one, 1));
    assert_int_equal(0, offer_texts(cs, "0x000000000000000000a0", one, 1)); /* wins: 0xA0 */
    assert_int_equal(0, offer_texts(cs, "0xA", one, 1));                    /* loses: 10 */
    assert_int_equal(0, offer_texts(cs, "0x000000000000000000A0", "0x2", 1)); /* wins: seqval */
    assert_int_equal(MCDC_ECORRUPT, offer_texts(cs, "0x0000000000000000000G", one, 1));
    assert_non_null(strstr(mcdc_error_last()->message, "'0x0000000000000000000G'"));
    assert_int_equal(MCDC_ECORRUPT, offer_texts(cs, "0x00000000000000000001", "1x00000000000000000001", 1));
    assert_non_null(strstr(mcdc_error_last()->message, "_seqval"));
    assert_int_equal(MCDC_ECORRUPT, offer_texts(cs, "0x000000000000000000001", one, 1));
    /* the high bytes outrank the low ones */
    assert_int_equal(0, offer_texts(cs, "0x0000000000FFFFFFFFFF", one, 2));
    assert_int_equal(0, offer_texts(cs, "0x0000000001000000000a", one, 2));  /* wins */
    assert_int_equal(0, offer_texts(cs, "0x00000000007FFFFFFFFF", one, 2));  /* loses */
    assert_int_equal(2, mcdc_silver_changes_count(cs));
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    mcdc_silver_image hi;
    mcdc_silver_changes_at(cs, 1, &hi);
    assert_int_equal(1, hi.start_lsn.b[4]);
    assert_int_equal(0x0A, hi.start_lsn.b[9]);
    mcdc_silver_changes_free(cs);
    cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, f->silver, key_id, 1, NULL));
    assert_int_equal(0, offer_texts(cs, "0x000000000000000000a0", one, 1));
    assert_int_equal(0, offer_texts(cs, "0x000000000000000000A0", "0x2", 1));
    assert_int_equal(1, mcdc_silver_changes_count(cs));
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    mcdc_silver_image im;
    mcdc_silver_changes_at(cs, 0, &im);
    assert_int_equal(0xA0, im.start_lsn.b[9]);
    /* the winner is the row with seqval 2 (its name is its LSN text, in upper case) */
    const mcdc_value *won = mcdc_silver_changes_row_at(cs, 0, cells_a);
    assert_int_equal(22, won[1].v.s.len);
    assert_memory_equal("0x000000000000000000A0", won[1].v.s.ptr, 22);

    /* silver rows: the image (0xA0) is newer than 0x9f, not newer than 0XA0 in any case */
    const mcdc_schema *s = mcdc_silver_changes_schema(cs);
    int i_id = mcdc_schema_find(s, "id"), i_lsn = mcdc_schema_find(s, "_start_lsn");
    static const char *const older[] = { "0x0000000000000000009f", "0x9F", "0X0000000000000000009F" };
    static const char *const same[] = { "0x000000000000000000a0", "0xa0", "0X000000000000000000A0" };
    for (int k = 0; k < 6; k++) {
        mcdc_value row[8];
        memset(row, 0, sizeof row);
        row[i_id].v.i = 1;
        set_str(&row[i_lsn], k < 3 ? older[k] : same[k - 3]);
        mcdc_silver_changes_set_marks(cs, 0, 0);
        mcdc_silver_fate fate;
        const mcdc_value *img;
        assert_int_equal(0, mcdc_silver_changes_match(cs, row, &fate, &img, cells_a));
        assert_int_equal(k < 3 ? MCDC_SILVER_REPLACE : MCDC_SILVER_KEEP, fate);
    }
    mcdc_value row[8];
    memset(row, 0, sizeof row);
    row[i_id].v.i = 1;
    set_str(&row[i_lsn], "0x000000000000000000-0");
    mcdc_silver_fate fate;
    const mcdc_value *img;
    assert_int_equal(MCDC_ECORRUPT, mcdc_silver_changes_match(cs, row, &fate, &img, cells_a));
    assert_non_null(strstr(mcdc_error_last()->message, "0x000000000000000000-0"));
    mcdc_silver_changes_free(cs);
}

/* Images are stored compactly: values outside their column's width (a file breaking its
 * own schema), edge values, NULLs, empty strings and a silver column bronze lacks all come
 * back exactly as offered. */
static void test_silver_changes__images_keep_every_value_exactly(void **state)
{
    fixture *f = *state;
    mcdc_schema *silver = mcdc_schema_copy(f->silver);
    assert_int_equal(0, mcdc_schema_add(silver, "note", MCDC_TYPE_STRING, 0, 0, true));
    mcdc_silver_changes *cs = NULL;
    assert_int_equal(0, mcdc_silver_changes_new(&cs, f->bronze, silver, key_id, 1, NULL));
    mcdc_int128 big = (mcdc_int128)1000000000000000LL * 1000000000000000LL;
    struct {
        int64_t     id;
        const char *name;
        mcdc_int128 amount;
    } in[] = {
        { (int64_t)1 << 40, "wide", big },   /* id outside INT, amount outside int64 */
        { 7, NULL, -5 },
        { INT32_MIN, "", INT64_MIN },        /* the narrow widths' edges */
        { INT32_MAX, "x", -big },
    };
    for (int k = 0; k < 4; k++) {
        mcdc_value v[B_N];
        memset(v, 0, sizeof v);
        set_str(&v[B_CI], "dbo_orders");
        set_str(&v[B_LSN], lsn_text(20 + k));
        v[B_SEQ].is_null = true;
        v[B_OP].v.i = 2;
        v[B_CMD].is_null = true;
        v[B_TS].is_null = k == 1;
        v[B_TS].v.i = INT64_MIN + k;
        v[B_ID].v.i = in[k].id;
        set_str(&v[B_NAME], in[k].name);
        v[B_AMT].v.dec = in[k].amount;
        v[B_BATCH].v.i = 1;
        v[B_SNAP].is_null = true;
        v[B_CHUNK].is_null = true;
        assert_int_equal(0, mcdc_silver_changes_add(cs, v));
    }
    assert_int_equal(0, mcdc_silver_changes_sort(cs));
    int i_id = mcdc_schema_find(silver, "id"), i_name = mcdc_schema_find(silver, "name");
    int i_amt = mcdc_schema_find(silver, "amount"), i_lsn = mcdc_schema_find(silver, "_start_lsn");
    int i_ts = mcdc_schema_find(silver, "_commit_ts"), i_note = mcdc_schema_find(silver, "note");
    static const int order[] = { 2, 1, 3, 0 }; /* by id */
    for (size_t i = 0; i < 4; i++) {
        int k = order[i];
        memset(cells_a, 0xA5, sizeof cells_a);
        const mcdc_value *row = mcdc_silver_changes_row_at(cs, i, cells_a);
        assert_ptr_equal(cells_a, row);
        assert_false(row[i_id].is_null);
        assert_true(row[i_id].v.i == in[k].id);
        assert_int_equal(in[k].name == NULL, row[i_name].is_null);
        if (in[k].name) {
            assert_int_equal(strlen(in[k].name), row[i_name].v.s.len);
            assert_memory_equal(in[k].name, row[i_name].v.s.ptr, row[i_name].v.s.len);
        }
        assert_false(row[i_amt].is_null);
        assert_true(row[i_amt].v.dec == in[k].amount);
        assert_false(row[i_lsn].is_null);
        assert_int_equal(22, row[i_lsn].v.s.len);
        assert_memory_equal(lsn_text(20 + k), row[i_lsn].v.s.ptr, 22);
        assert_int_equal(k == 1, row[i_ts].is_null);
        if (k != 1)
            assert_true(row[i_ts].v.i == INT64_MIN + k);
        assert_true(row[i_note].is_null);
    }
    mcdc_silver_changes_free(cs);
    mcdc_schema_free(silver);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_silver_changes__##name, setup, teardown)
        T(schema_is_captured_columns_then_position),
        T(insert_update_delete),
        T(before_image_after_its_after_image_in_input),
        T(key_update_as_3_and_4_moves_the_row),
        T(key_update_as_delete_and_insert),
        T(swap_of_two_keys_in_one_statement),
        T(reinsert_of_a_deleted_key),
        T(many_changes_of_one_key_in_and_across_batches),
        T(interleaved_transactions_rank_by_commit_lsn),
        T(command_id_orders_statements_of_one_transaction),
        T(entering_beats_leaving_only_within_one_command),
        T(rerun_changes_nothing_and_resurrects_nothing),
        T(older_image_never_replaces_a_newer_row),
        T(position_and_snapshot_select_rows),
        T(null_and_composite_keys),
        T(capture_instances_are_checked),
        T(bad_rows_and_keys_are_refused),
        T(memory_cap_is_enforced),
        T(many_keys_grow_the_index),
        T(sort_orders_keys_of_every_length),
        T(replaced_images_are_compacted),
        T(cap_counts_live_images_after_compaction),
        T(match_at_and_marks),
        T(key_encoding_preserves_order),
        T(lsn_text_of_any_form_ranks_by_value),
        T(images_keep_every_value_exactly),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
