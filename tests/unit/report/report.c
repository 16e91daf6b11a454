/* Unit tests for report/report.c: the page is self-contained, escapes data, and draws
 * one chart of each kind per table with the data given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/report.h"
#include "mcdc/time.h"

static int64_t at(const char *s)
{
    int64_t us = 0;
    assert_int_equal(0, mcdc_time_parse(&us, s));
    return us;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void fill(mcdc_report_data *d)
{
    const char *ends[] = {"2026-10-01T09:10:00", "2026-10-01T10:20:00", "2026-10-01T11:05:00"};
    for (int i = 0; i < 3; i++) {
        mcdc_report_batch b = {"bronze.orders", NULL, i, 10 + i, 5, 3 + i, 2, at(ends[i]),
                               at(ends[i]) + 2000000, 1500, 2500};
        assert_int_equal(0, mcdc_report_add_batch(d, &b));
        mcdc_report_point p = {"bronze.orders", at(ends[i]), mcdc_time_truncate(at(ends[i]), MCDC_GRAN_HOUR)};
        assert_int_equal(0, mcdc_report_add_point(d, &p));
    }
    mcdc_report_batch ev = {"bronze.orders", "bootstrap", 0, 100, 0, 0, 0, MCDC_REPORT_NONE, 0,
                            MCDC_REPORT_NONE, MCDC_REPORT_NONE};
    assert_int_equal(0, mcdc_report_add_batch(d, &ev));
    mcdc_report_verdict v = {"bronze.orders", at("2026-10-01T11:00:00"), "0x0000002D000001A00003",
                             at(ends[2]), at("2026-10-01T11:05:03")};
    assert_int_equal(0, mcdc_report_add_verdict(d, &v));
    d->generated_at_us = at("2026-10-01T12:00:00");
    d->source_now_us = at("2026-10-01T11:06:00");
}

static void test_report_report__page_is_self_contained_with_three_charts(void **state)
{
    (void)state;
    mcdc_report_data d = {0};
    mcdc_buf out = MCDC_BUF_INIT(1 << 24);
    fill(&d);
    assert_int_equal(0, mcdc_report_render(&out, &d));
    assert_non_null(strstr(out.ptr, "<!DOCTYPE html>"));
    assert_null(strstr(out.ptr, "<script"));
    assert_null(strstr(out.ptr, "http:"));
    assert_null(strstr(out.ptr, "https:"));
    assert_null(strstr(out.ptr, "@import"));
    assert_int_equal(3, count(out.ptr, "<svg "));
    assert_non_null(strstr(out.ptr, "data-points='3'")); /* three batches, event row left out */
    assert_non_null(strstr(out.ptr, "batch 2: 5 updates"));
    assert_non_null(strstr(out.ptr, "2026-10-01 11:00:00")); /* the verdict */
    assert_non_null(strstr(out.ptr, "<td>6m</td>"));         /* its age on the source clock */
    mcdc_buf_dispose(&out);
    mcdc_report_data_free(&d);
}

static void test_report_report__names_are_escaped(void **state)
{
    (void)state;
    mcdc_report_data d = {0};
    mcdc_buf out = MCDC_BUF_INIT(1 << 24);
    mcdc_report_verdict v = {"<b>x</b>&'\"", MCDC_REPORT_NONE, "", MCDC_REPORT_NONE, MCDC_REPORT_NONE};
    assert_int_equal(0, mcdc_report_add_verdict(&d, &v));
    d.title = strdup("t<i>");
    assert_int_equal(0, mcdc_report_render(&out, &d));
    assert_null(strstr(out.ptr, "<b>x"));
    assert_null(strstr(out.ptr, "t<i>"));
    assert_non_null(strstr(out.ptr, "&lt;b&gt;x&lt;/b&gt;&amp;&#39;&quot;"));
    assert_non_null(strstr(out.ptr, "No facts rows name this table"));
    mcdc_buf_dispose(&out);
    mcdc_report_data_free(&d);
}

/* The text of the paragraph after the heading of table @p name (a static copy). */
static const char *meta_of(const char *page, const char *name)
{
    static char buf[512];
    char h[128];
    snprintf(h, sizeof h, "<h2>%s</h2>\n<p class='meta'>", name);
    const char *p = strstr(page, h);
    assert_non_null(p);
    p += strlen(h);
    const char *e = strstr(p, "</p>");
    assert_non_null(e);
    snprintf(buf, sizeof buf, "%.*s", (int)(e - p), p);
    return buf;
}

/* A stream's bronze with only its bootstrap snapshot is the stream's change log, not "a
 * table kept from another"; silver, which no facts row names, is. */
static void test_report_report__bronze_is_the_change_log_even_before_its_first_batch(void **state)
{
    (void)state;
    mcdc_report_data d = {0};
    mcdc_buf out = MCDC_BUF_INIT(1 << 24);
    mcdc_report_batch ev = {"bronze.orders", "bootstrap", 0, 5137, 0, 0, 0, MCDC_REPORT_NONE, 0,
                            MCDC_REPORT_NONE, MCDC_REPORT_NONE};
    assert_int_equal(0, mcdc_report_add_batch(&d, &ev));
    mcdc_report_verdict vb = {"bronze.orders", MCDC_REPORT_NONE, "", MCDC_REPORT_NONE, MCDC_REPORT_NONE};
    mcdc_report_verdict vs = {"silver.orders", at("2026-10-01T10:00:00"), "0x0000002D000001A00003",
                              at("2026-10-01T10:00:00"), at("2026-10-01T10:05:00")};
    assert_int_equal(0, mcdc_report_add_verdict(&d, &vb));
    assert_int_equal(0, mcdc_report_add_verdict(&d, &vs));
    assert_int_equal(0, mcdc_report_render(&out, &d));
    assert_string_equal("The change log of a stream: no batches yet, only a bootstrap snapshot of 5137 rows; "
                        "the changes after it come as batches.", meta_of(out.ptr, "bronze.orders"));
    assert_non_null(strstr(meta_of(out.ptr, "silver.orders"), "kept from another"));
    mcdc_buf_dispose(&out);
    mcdc_report_data_free(&d);
}

static void test_report_report__change_log_counts_batches_and_rows(void **state)
{
    (void)state;
    mcdc_report_data d = {0};
    mcdc_buf out = MCDC_BUF_INIT(1 << 24);
    fill(&d);
    assert_int_equal(0, mcdc_report_render(&out, &d));
    assert_string_equal("The change log of a stream: 3 batches, 33 change rows, after a bootstrap snapshot of 100 rows.",
                        meta_of(out.ptr, "bronze.orders"));
    mcdc_buf_dispose(&out);
    mcdc_report_data_free(&d);
}

static void test_report_report__last_reconcile_per_table_with_its_keys_escaped(void **state)
{
    (void)state;
    mcdc_report_data d = {0};
    fill(&d);
    mcdc_report_reconcile ok = {"bronze.orders", "11111111-2222-3333-4444-555555555555", at("2026-10-01T11:30:00"), 7,
                                4, 3, 1, 0, 0, 0, 0, 0, 2, 0, NULL};
    mcdc_report_reconcile bad = {"silver.<o>", "66666666-2222-3333-4444-555555555555", at("2026-10-01T11:40:00"), 9,
                                 2, 1, 0, 1, 1, 0, 1, 0, 0, 0, "MISSING {\"k\":\"<x>\"}\nDIFFERENT {\"k\":2}\n"};
    assert_int_equal(0, mcdc_report_add_reconcile(&d, &ok));
    assert_int_equal(0, mcdc_report_add_reconcile(&d, &bad));
    mcdc_buf b = MCDC_BUF_INIT(1 << 24);
    assert_int_equal(0, mcdc_report_render(&b, &d));
    assert_non_null(strstr(b.ptr, "<h2>Last reconcile</h2>"));
    assert_non_null(strstr(b.ptr, "<tr><td>bronze.orders</td><td class='flight'>IN_FLIGHT</td><td>2026-10-01 11:30:00</td>"
                                  "<td>7</td><td>4</td><td>3</td><td>1</td><td>0</td><td>2 in flight</td></tr>"));
    assert_non_null(strstr(b.ptr, "<tr><td>silver.&lt;o&gt;</td><td class='bad'>MISMATCH</td><td>2026-10-01 11:40:00</td>"
                                  "<td>9</td><td>2</td><td>1</td><td>0</td><td>1</td><td>1 missing, 1 different</td></tr>"));
    assert_non_null(strstr(b.ptr, "<pre>MISSING {&quot;k&quot;:&quot;&lt;x&gt;&quot;}\nDIFFERENT {&quot;k&quot;:2}\n</pre>"));
    assert_null(strstr(b.ptr, "<x>"));
    /* the table's own section says how its last reconcile went */
    assert_non_null(strstr(b.ptr, "Last reconcile 2026-10-01 11:30:00 UTC: <span class='flight'>IN_FLIGHT</span>, 3 of 4 "
                                  "buckets matched."));
    assert_int_equal(1, count(b.ptr, "Named by the last reconcile"));
    mcdc_buf_dispose(&b);
    mcdc_report_data_free(&d);
}

static void test_report_report__empty_data_says_so(void **state)
{
    (void)state;
    mcdc_report_data d = {0};
    mcdc_buf out = MCDC_BUF_INIT(1 << 24);
    assert_int_equal(0, mcdc_report_render(&out, &d));
    assert_non_null(strstr(out.ptr, "hold no rows yet"));
    assert_int_equal(0, count(out.ptr, "<svg "));
    mcdc_buf_dispose(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_report__page_is_self_contained_with_three_charts),
        cmocka_unit_test(test_report_report__names_are_escaped),
        cmocka_unit_test(test_report_report__bronze_is_the_change_log_even_before_its_first_batch),
        cmocka_unit_test(test_report_report__change_log_counts_batches_and_rows),
        cmocka_unit_test(test_report_report__empty_data_says_so),
        cmocka_unit_test(test_report_report__last_reconcile_per_table_with_its_keys_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
