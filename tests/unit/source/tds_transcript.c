/* Unit tests for transcripts (source/sim/tds/transcript.c, respdec.c): a FreeTDS packet dump
 * becomes JSONL entries (a request split over two packets joined, PRELOGIN and LOGIN7 and the
 * login's answer left out, numbering going on across conversions), replies are decoded for
 * people (columns and types, rows, row counts, errors with number, state and class), and
 * replay answers repeats in recorded order, the last recording once they run out, and nothing
 * for a request never recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "mcdc/tds.h"
#include "source/sim/tds/tds_int.h"

/* one packet in FreeTDS's dump format: a header line, hex lines of 16 bytes, a blank line */
static void dump_packet(FILE *f, bool sending, uint8_t type, uint8_t status, const uint8_t *p, size_t n)
{
    uint8_t pk[4096];
    size_t len = n + 8;
    uint8_t h[8] = {type, status, (uint8_t)(len >> 8), (uint8_t)len, 0, 0, 1, 0};
    memcpy(pk, h, 8);
    memcpy(pk + 8, p, n);
    fprintf(f, "net.c:123:%s packet\n", sending ? "Sending" : "Received");
    for (size_t i = 0; i < len; i += 16) {
        fprintf(f, "%04zx", i);
        for (size_t k = 0; k < 16; k++) {
            if (i + k < len) fprintf(f, "%c%02x", k == 8 ? '-' : ' ', pk[i + k]);
            else fprintf(f, "   ");
        }
        fprintf(f, " |................|\n");
    }
    fprintf(f, "\n");
}

static size_t utf16(uint8_t *out, const char *s)
{
    size_t n = 0;
    for (; *s; s++) {
        out[n++] = (uint8_t)*s;
        out[n++] = 0;
    }
    return n;
}

/* ALL_HEADERS with a transaction descriptor, then the batch text */
static size_t batch(uint8_t *out, const char *sql, uint8_t tran)
{
    uint8_t hdr[22] = {22, 0, 0, 0, 18, 0, 0, 0, 2, 0, tran, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
    memcpy(out, hdr, 22);
    return 22 + utf16(out + 22, sql);
}

/* COLMETADATA (int x, nvarchar(10) y), ROW (42, 'hé' as h + e-acute), DONE with count 1 */
static size_t reply_rows(uint8_t *o)
{
    size_t n = 0;
    const uint8_t cm[] = {0x81, 2, 0, 0, 0, 0, 0, 1, 0, 0x38, 1, 'x', 0,
                          0, 0, 0, 0, 1, 0, 0xE7, 20, 0, 0x09, 0x04, 0xD0, 0x00, 0x34, 1, 'y', 0};
    memcpy(o + n, cm, sizeof cm);
    n += sizeof cm;
    const uint8_t row[] = {0xD1, 42, 0, 0, 0, 4, 0, 'h', 0, 0xE9, 0};
    memcpy(o + n, row, sizeof row);
    n += sizeof row;
    const uint8_t nbc[] = {0xD2, 0x02, 7, 0, 0, 0}; /* y NULL */
    memcpy(o + n, nbc, sizeof nbc);
    n += sizeof nbc;
    const uint8_t done[] = {0xFD, 0x10, 0, 0xC1, 0, 2, 0, 0, 0, 0, 0, 0, 0};
    memcpy(o + n, done, sizeof done);
    return n + sizeof done;
}

static json_t *load_lines(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    json_t *a = json_array();
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        json_error_t e;
        json_t *j = json_loads(line, 0, &e);
        assert_non_null(j);
        json_array_append_new(a, j);
    }
    fclose(f);
    *n = json_array_size(a);
    return a;
}

static void test_convert(void **st)
{
    (void)st;
    char dir[] = "/tmp/mcdc-transcript-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char dump[256], out[256];
    snprintf(dump, sizeof dump, "%s/d.dump", dir);
    snprintf(out, sizeof out, "%s/transcript.jsonl", dir);
    FILE *f = fopen(dump, "w");
    assert_non_null(f);
    fprintf(f, "log.c:1:Starting log file for FreeTDS 1.3.17\n");
    const uint8_t pre[] = {0, 0, 0x06, 0x01, 0, 0x20, 0xFF};
    dump_packet(f, true, TDS_PKT_PRELOGIN, 1, pre, sizeof pre);
    dump_packet(f, false, TDS_PKT_REPLY, 1, pre, sizeof pre);
    /* a LOGIN7 (FreeTDS never dumps one; left out all the same) and the login's answer */
    uint8_t login[64];
    size_t ln = utf16(login, "SECRETPW");
    dump_packet(f, true, TDS_PKT_LOGIN7, 1, login, ln);
    const uint8_t ack[] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    dump_packet(f, false, TDS_PKT_REPLY, 1, ack, sizeof ack);
    /* a batch over two packets */
    uint8_t b[512];
    size_t bn = batch(b, "SELECT x, y FROM t", 7);
    dump_packet(f, true, TDS_PKT_BATCH, 0, b, 30);
    fprintf(f, "tds->conn->collation was\n0000 00 00 00 00 00         -                        |.....|\n\n");
    dump_packet(f, true, TDS_PKT_BATCH, 1, b + 30, bn - 30);
    uint8_t r[512];
    size_t rn = reply_rows(r);
    dump_packet(f, false, TDS_PKT_REPLY, 1, r, rn);
    fclose(f);

    long off = 0;
    assert_int_equal(mcdc_tds_transcript_convert(dump, &off, out), 0);
    assert_true(off > 0);
    size_t n;
    json_t *a = load_lines(out, &n);
    assert_int_equal(n, 1);
    json_t *e = json_array_get(a, 0);
    assert_int_equal(json_integer_value(json_object_get(e, "n")), 1);
    assert_string_equal(json_string_value(json_object_get(e, "kind")), "batch");
    assert_string_equal(json_string_value(json_object_get(e, "text")), "SELECT x, y FROM t");
    /* the request is the text after ALL_HEADERS: no transaction descriptor */
    assert_int_equal(strlen(json_string_value(json_object_get(e, "request"))), 2 * (bn - 22));
    json_t *d = json_object_get(e, "decoded");
    char *ds = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(ds, "{\"errors\":[],\"results\":[{\"columns\":[{\"name\":\"x\",\"type\":\"int\"},{\"name\":\"y\",\"type\":"
                            "\"nvarchar(10)\"}],\"rows\":[[\"42\",\"h\xc3\xa9\"],[\"7\",null]]}],\"row_counts\":[2]}");
    free(ds);
    json_decref(a);

    /* the dump grows: the next conversion adds only the new exchange, numbered on */
    f = fopen(dump, "a");
    bn = batch(b, "SELECT 1/0", 0);
    dump_packet(f, true, TDS_PKT_BATCH, 1, b, bn);
    tds_wbuf w = TDS_WBUF_INIT(1 << 20);
    tds_tok_message(&w, true, 8134, 1, 16, "Divide by zero error encountered.", "srv", "", 1);
    tds_tok_done(&w, TDS_TOK_DONE, 0x02, 0, 0);
    dump_packet(f, false, TDS_PKT_REPLY, 1, w.p, w.len);
    tds_w_dispose(&w);
    fclose(f);
    assert_int_equal(mcdc_tds_transcript_convert(dump, &off, out), 0);
    a = load_lines(out, &n);
    assert_int_equal(n, 2);
    e = json_array_get(a, 1);
    assert_int_equal(json_integer_value(json_object_get(e, "n")), 2);
    json_t *err = json_array_get(json_object_get(json_object_get(e, "decoded"), "errors"), 0);
    assert_int_equal(json_integer_value(json_object_get(err, "number")), 8134);
    assert_int_equal(json_integer_value(json_object_get(err, "state")), 1);
    assert_int_equal(json_integer_value(json_object_get(err, "class")), 16);
    assert_string_equal(json_string_value(json_object_get(err, "message")), "Divide by zero error encountered.");
    json_decref(a);

    /* no login bytes anywhere: "SECRETPW" in UTF-16 would be 530045004300... */
    f = fopen(out, "r");
    char all[1 << 16];
    size_t got = fread(all, 1, sizeof all - 1, f);
    all[got] = '\0';
    fclose(f);
    assert_null(strstr(all, "5300450043005200450054005000570"));
    assert_null(strstr(all, "SECRETPW"));

    /* replay: the request bytes find their response */
    tds_replay *rp;
    assert_int_equal(tds_replay_load(&rp, dir), 0);
    const uint8_t *resp;
    size_t resp_n;
    bn = batch(b, "SELECT x, y FROM t", 9); /* another transaction descriptor: still the same request */
    assert_true(tds_replay_answer(rp, TDS_PKT_BATCH, b + 22, bn - 22, &resp, &resp_n));
    assert_int_equal(resp_n, rn);
    assert_memory_equal(resp, r, rn);
    bn = batch(b, "SELECT x, y FROM T", 0);
    assert_false(tds_replay_answer(rp, TDS_PKT_BATCH, b + 22, bn - 22, &resp, &resp_n));
    char what[200];
    tds_replay_describe(what, sizeof what, TDS_PKT_BATCH, b + 22, bn - 22);
    assert_string_equal(what, "SELECT x, y FROM T");
    tds_replay_free(rp);
    unlink(dump);
    unlink(out);
    rmdir(dir);
}

static void test_replay_order(void **st)
{
    (void)st;
    char dir[] = "/tmp/mcdc-replay-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/a.jsonl", dir);
    FILE *f = fopen(path, "w");
    /* request 0x41 0x00 ("A") answered 01, then 02; request "B" answered 03 */
    fprintf(f, "{\"n\":1,\"kind\":\"batch\",\"request\":\"4100\",\"response\":\"01\"}\n");
    fprintf(f, "{\"n\":2,\"kind\":\"batch\",\"request\":\"4200\",\"response\":\"03\"}\n");
    fprintf(f, "{\"n\":3,\"kind\":\"batch\",\"request\":\"4100\",\"response\":\"02\"}\n");
    fclose(f);
    tds_replay *rp;
    assert_int_equal(tds_replay_load(&rp, dir), 0);
    const uint8_t a[] = {0x41, 0}, bb[] = {0x42, 0};
    const uint8_t *resp;
    size_t n;
    uint8_t want[] = {1, 2, 2};
    for (int i = 0; i < 3; i++) {
        assert_true(tds_replay_answer(rp, TDS_PKT_BATCH, a, 2, &resp, &n));
        assert_int_equal(n, 1);
        assert_int_equal(resp[0], want[i]);
    }
    assert_true(tds_replay_answer(rp, TDS_PKT_BATCH, bb, 2, &resp, &n));
    assert_int_equal(resp[0], 3);
    assert_false(tds_replay_answer(rp, TDS_PKT_RPC, a, 2, &resp, &n)); /* another kind of request */
    tds_replay_free(rp);
    /* a bad line is named with its file and line */
    f = fopen(path, "a");
    fprintf(f, "{\"kind\":\"batch\",\"request\":\"4\"}\n");
    fclose(f);
    assert_int_equal(tds_replay_load(&rp, dir), MCDC_EINVAL);
    assert_non_null(strstr(mcdc_error_last()->message, "a.jsonl:4: not a transcript entry"));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convert),
        cmocka_unit_test(test_replay_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
