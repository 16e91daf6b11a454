/* Unit tests for core/tz.c and core/tz_windows.c: TZif loading, conversions on DST nights,
 * the POSIX footer for far-future instants, malformed files, Windows names and the
 * LSN-order sequencer across a repeated hour. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/time.h"
#include "mcdc/tz.h"
#include "core/tz_internal.h"

#define H MCDC_US_PER_HOUR
#define M MCDC_US_PER_MIN

static int64_t t(const char *iso)
{
    int64_t us = 0;
    assert_int_equal(0, mcdc_time_parse(&us, iso));
    return us;
}

static mcdc_tz *load(const char *name)
{
    mcdc_tz *tz = NULL;
    int rc = mcdc_tz_load(&tz, name);
    if (rc != 0)
        fail_msg("loading %s: %s", name, mcdc_error_last()->message);
    return tz;
}

/* Local -> UTC with the pass and gap flag checked. */
static void check_l2u(const mcdc_tz *tz, const char *local, bool later, const char *utc, bool gap)
{
    bool was_gap = !gap;
    int64_t got = mcdc_tz_local_to_utc(tz, t(local), later, &was_gap);
    char a[MCDC_TIME_STRLEN], b[MCDC_TIME_STRLEN];
    if (got != t(utc) || was_gap != gap)
        fail_msg("%s %s local %s: got %s gap=%d, want %s gap=%d", mcdc_tz_name(tz), later ? "later" : "earlier",
                 local, mcdc_time_format(a, got, 0, true), was_gap, mcdc_time_format(b, t(utc), 0, true), gap);
}

static void check_u2l(const mcdc_tz *tz, const char *utc, const char *local, int32_t off)
{
    char a[MCDC_TIME_STRLEN];
    int64_t got = mcdc_tz_utc_to_local(tz, t(utc));
    if (got != t(local))
        fail_msg("%s utc %s: got local %s, want %s", mcdc_tz_name(tz), utc, mcdc_time_format(a, got, 0, false),
                 local);
    assert_int_equal(off, mcdc_tz_offset_at(tz, t(utc)));
}

static void test_core_tz__new_york_2025_spring_forward(void **state)
{
    (void)state;
    mcdc_tz *tz = load("America/New_York");
    assert_string_equal("America/New_York", mcdc_tz_name(tz));
    check_u2l(tz, "2025-03-09T06:59:59Z", "2025-03-09T01:59:59", -5 * 3600);
    check_u2l(tz, "2025-03-09T07:00:00Z", "2025-03-09T03:00:00", -4 * 3600);
    assert_int_equal(-5 * 3600, mcdc_tz_offset_at(tz, t("2025-03-09T06:59:59.999999Z")));
    check_l2u(tz, "2025-03-09T01:59:59", false, "2025-03-09T06:59:59Z", false);
    check_l2u(tz, "2025-03-09T03:00:00", false, "2025-03-09T07:00:00Z", false);
    /* 02:00..02:59 does not exist: read with the offset before the gap (EST). */
    check_l2u(tz, "2025-03-09T02:30:00", false, "2025-03-09T07:30:00Z", true);
    check_l2u(tz, "2025-03-09T02:30:00", true, "2025-03-09T07:30:00Z", true);
    check_l2u(tz, "2025-03-09T02:00:00", false, "2025-03-09T07:00:00Z", true);
    mcdc_tz_free(tz);
}

static void test_core_tz__new_york_2025_fall_back(void **state)
{
    (void)state;
    mcdc_tz *tz = load("America/New_York");
    check_u2l(tz, "2025-11-02T05:59:59Z", "2025-11-02T01:59:59", -4 * 3600);
    check_u2l(tz, "2025-11-02T06:00:00Z", "2025-11-02T01:00:00", -5 * 3600);
    /* 01:00..01:59 happens twice. */
    check_l2u(tz, "2025-11-02T01:30:00", false, "2025-11-02T05:30:00Z", false);
    check_l2u(tz, "2025-11-02T01:30:00", true, "2025-11-02T06:30:00Z", false);
    check_l2u(tz, "2025-11-02T00:59:59", true, "2025-11-02T04:59:59Z", false);
    check_l2u(tz, "2025-11-02T02:00:00", false, "2025-11-02T07:00:00Z", false);
    check_l2u(tz, "2025-11-02T02:00:00", true, "2025-11-02T07:00:00Z", false);
    /* Round trip across the whole night, minute by minute. */
    for (int64_t u = t("2025-11-02T03:00:00Z"); u < t("2025-11-02T09:00:00Z"); u += M) {
        int64_t l = mcdc_tz_utc_to_local(tz, u);
        int64_t e = mcdc_tz_local_to_utc(tz, l, false, NULL), s = mcdc_tz_local_to_utc(tz, l, true, NULL);
        assert_true(e == u || s == u);
    }
    mcdc_tz_free(tz);
}

static void test_core_tz__berlin_2025_both_changes(void **state)
{
    (void)state;
    mcdc_tz *tz = load("Europe/Berlin");
    check_u2l(tz, "2025-03-30T00:59:59Z", "2025-03-30T01:59:59", 3600);
    check_u2l(tz, "2025-03-30T01:00:00Z", "2025-03-30T03:00:00", 7200);
    check_l2u(tz, "2025-03-30T02:15:00", false, "2025-03-30T01:15:00Z", true);
    check_l2u(tz, "2025-03-30T03:15:00", false, "2025-03-30T01:15:00Z", false);
    check_u2l(tz, "2025-10-26T00:59:59Z", "2025-10-26T02:59:59", 7200);
    check_u2l(tz, "2025-10-26T01:00:00Z", "2025-10-26T02:00:00", 3600);
    check_l2u(tz, "2025-10-26T02:30:00", false, "2025-10-26T00:30:00Z", false);
    check_l2u(tz, "2025-10-26T02:30:00", true, "2025-10-26T01:30:00Z", false);
    check_l2u(tz, "2025-07-01T12:00:00", true, "2025-07-01T10:00:00Z", false);
    check_l2u(tz, "2025-01-01T12:00:00", false, "2025-01-01T11:00:00Z", false);
    mcdc_tz_free(tz);
}

static void test_core_tz__sao_paulo_2018_fall_back_at_midnight(void **state)
{
    (void)state;
    mcdc_tz *tz = load("America/Sao_Paulo");
    /* 2018-02-18 00:00 -02 became 2018-02-17 23:00 -03. */
    check_u2l(tz, "2018-02-18T01:59:00Z", "2018-02-17T23:59:00", -2 * 3600);
    check_u2l(tz, "2018-02-18T02:00:00Z", "2018-02-17T23:00:00", -3 * 3600);
    check_l2u(tz, "2018-02-17T23:30:00", false, "2018-02-18T01:30:00Z", false);
    check_l2u(tz, "2018-02-17T23:30:00", true, "2018-02-18T02:30:00Z", false);
    check_l2u(tz, "2018-02-18T00:30:00", false, "2018-02-18T03:30:00Z", false);
    /* Spring forward of 2017-10-15: midnight did not exist. */
    check_l2u(tz, "2017-10-15T00:30:00", false, "2017-10-15T03:30:00Z", true);
    /* No DST since 2019: the footer is a fixed -03. */
    check_u2l(tz, "2040-01-15T12:00:00Z", "2040-01-15T09:00:00", -3 * 3600);
    mcdc_tz_free(tz);
}

static void test_core_tz__far_future_uses_footer_rule(void **state)
{
    (void)state;
    mcdc_tz *ny = load("America/New_York"), *be = load("Europe/Berlin"), *sy = load("Australia/Sydney");
    /* 2100-03-14 is the second Sunday of March 2100. */
    check_u2l(ny, "2100-03-14T06:59:00Z", "2100-03-14T01:59:00", -5 * 3600);
    check_u2l(ny, "2100-03-14T07:00:00Z", "2100-03-14T03:00:00", -4 * 3600);
    check_u2l(ny, "2100-07-04T16:00:00Z", "2100-07-04T12:00:00", -4 * 3600);
    check_l2u(ny, "2100-03-14T02:30:00", false, "2100-03-14T07:30:00Z", true);
    /* 2300: last Sundays are Mar 25 and Oct 28. */
    check_u2l(be, "2300-03-25T00:59:00Z", "2300-03-25T01:59:00", 3600);
    check_u2l(be, "2300-03-25T01:00:00Z", "2300-03-25T03:00:00", 7200);
    check_u2l(be, "2300-10-28T00:59:00Z", "2300-10-28T02:59:00", 7200);
    check_u2l(be, "2300-10-28T01:00:00Z", "2300-10-28T02:00:00", 3600);
    check_l2u(be, "2300-10-28T02:10:00", true, "2300-10-28T01:10:00Z", false);
    /* Southern hemisphere: DST spans the new year. */
    check_u2l(sy, "2090-01-01T00:00:00Z", "2090-01-01T11:00:00", 11 * 3600);
    check_u2l(sy, "2090-04-01T16:00:00Z", "2090-04-02T02:00:00", 10 * 3600);
    check_u2l(sy, "9999-12-31T12:00:00Z", "9999-12-31T23:00:00", 11 * 3600);
    mcdc_tz_free(ny);
    mcdc_tz_free(be);
    mcdc_tz_free(sy);
}

static void test_core_tz__utc_and_fixed_zones(void **state)
{
    (void)state;
    mcdc_tz *u = load("UTC"), *g = load("Etc/GMT+5");
    check_u2l(u, "2025-06-01T12:00:00Z", "2025-06-01T12:00:00", 0);
    check_l2u(u, "2025-06-01T12:00:00", true, "2025-06-01T12:00:00Z", false);
    check_u2l(g, "2025-06-01T12:00:00Z", "2025-06-01T07:00:00", -5 * 3600);
    check_u2l(g, "1900-06-01T12:00:00Z", "1900-06-01T07:00:00", -5 * 3600);
    /* Extreme instants neither overflow nor fail. */
    mcdc_tz *ny = load("America/New_York");
    assert_true(mcdc_tz_utc_to_local(ny, INT64_MAX) > 0);
    assert_true(mcdc_tz_utc_to_local(ny, INT64_MIN) < 0);
    assert_true(mcdc_tz_local_to_utc(ny, INT64_MAX, true, NULL) > 0);
    assert_true(mcdc_tz_local_to_utc(ny, INT64_MIN + 1, false, NULL) < 0);
    mcdc_tz_sequencer seq;
    mcdc_tz_sequencer_init(&seq, ny, INT64_MIN + 1, 0);
    assert_true(mcdc_tz_sequencer_next(&seq, INT64_MAX) > 0);
    mcdc_tz_free(ny);
    mcdc_tz_free(u);
    mcdc_tz_free(g);
    mcdc_tz_free(NULL);
}

static void test_core_tz__unknown_and_escaping_names_not_found(void **state)
{
    (void)state;
    static const char *bad[] = {"Mars/Olympus_Mons", "", "../../../etc/passwd", "/etc/passwd", "America/../UTC",
                                "America", "America/", "Eastern Time", "UTC\n", "America//New_York"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mcdc_tz *tz = (mcdc_tz *)1;
        int rc = mcdc_tz_load(&tz, bad[i]);
        if (rc != MCDC_ENOTFOUND)
            fail_msg("'%s': rc %d (%s)", bad[i], rc, mcdc_error_last()->message);
        assert_null(tz);
        assert_non_null(strstr(mcdc_error_last()->message, "unknown time zone"));
        assert_non_null(strstr(mcdc_error_last()->hint, "/usr/share/zoneinfo"));
    }
    mcdc_tz *tz = NULL;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_tz_load(&tz, "Mars/Olympus_Mons"));
    assert_string_equal("unknown time zone 'Mars/Olympus_Mons'", mcdc_error_last()->message);
    /* A file in the zone directory that is not TZif. */
    assert_int_equal(MCDC_ECORRUPT, mcdc_tz_load(&tz, "zone1970.tab"));
    assert_non_null(strstr(mcdc_error_last()->message, "not a TZif file"));
    assert_null(tz);
}

static void test_core_tz__windows_names_map_to_iana(void **state)
{
    (void)state;
    assert_string_equal("America/New_York", mcdc_tz_windows_to_iana("Eastern Standard Time"));
    assert_string_equal("America/New_York", mcdc_tz_windows_to_iana("EASTERN standard time"));
    assert_string_equal("Europe/Berlin", mcdc_tz_windows_to_iana("W. Europe Standard Time"));
    assert_string_equal("America/Sao_Paulo", mcdc_tz_windows_to_iana("E. South America Standard Time"));
    assert_string_equal("Etc/UTC", mcdc_tz_windows_to_iana("UTC"));
    assert_string_equal("Etc/GMT-12", mcdc_tz_windows_to_iana("UTC+12"));
    assert_string_equal("America/Mexico_City", mcdc_tz_windows_to_iana("Central Standard Time (Mexico)"));
    assert_null(mcdc_tz_windows_to_iana("Eastern Standard"));
    assert_null(mcdc_tz_windows_to_iana("America/New_York"));
    assert_null(mcdc_tz_windows_to_iana(NULL));
    mcdc_tz *tz = load("Eastern Standard Time");
    assert_string_equal("America/New_York", mcdc_tz_name(tz));
    check_l2u(tz, "2025-11-02T01:30:00", true, "2025-11-02T06:30:00Z", false);
    mcdc_tz_free(tz);
    /* Every row names a zone this system can load, and no Windows name is listed twice. */
    const char *iana, *win;
    size_t n = 0;
    for (size_t i = 0; (win = mcdc_tz__windows_row(i, &iana)) != NULL; i++, n++) {
        mcdc_tz *z = NULL;
        if (mcdc_tz_load(&z, iana) != 0)
            fail_msg("%s -> %s: %s", win, iana, mcdc_error_last()->message);
        mcdc_tz_free(z);
        assert_ptr_equal(iana, mcdc_tz_windows_to_iana(win));
    }
    assert_true(n >= 135);
}

/* ---- hand-built TZif files ---- */

typedef struct tzif_w {
    uint8_t b[2048];
    size_t  n;
} tzif_w;

static void put32(tzif_w *w, uint32_t v)
{
    w->b[w->n++] = (uint8_t)(v >> 24);
    w->b[w->n++] = (uint8_t)(v >> 16);
    w->b[w->n++] = (uint8_t)(v >> 8);
    w->b[w->n++] = (uint8_t)v;
}

static void header(tzif_w *w, char version, uint32_t timecnt, uint32_t typecnt, uint32_t charcnt)
{
    memcpy(w->b + w->n, "TZif", 4);
    w->n += 4;
    w->b[w->n++] = (uint8_t)version;
    memset(w->b + w->n, 0, 15);
    w->n += 15;
    put32(w, 0); /* isutcnt */
    put32(w, 0); /* isstdcnt */
    put32(w, 0); /* leapcnt */
    put32(w, timecnt);
    put32(w, typecnt);
    put32(w, charcnt);
}

/* A v2 zone: -1h until 2000-01-01T00:00Z, then +2h; footer as given. */
static size_t build_v2(tzif_w *w, const char *footer, uint8_t bad_type_index)
{
    w->n = 0;
    header(w, '2', 0, 1, 4); /* v1 block: one type, no transitions */
    put32(w, 0);
    w->b[w->n++] = 0;
    w->b[w->n++] = 0;
    memcpy(w->b + w->n, "UTC", 4);
    w->n += 4;
    header(w, '2', 1, 2, 8);
    put32(w, 0);
    put32(w, 946684800u);
    w->b[w->n++] = bad_type_index ? bad_type_index : 1;
    put32(w, (uint32_t)-3600);
    w->b[w->n++] = 0;
    w->b[w->n++] = 0;
    put32(w, 7200);
    w->b[w->n++] = 0;
    w->b[w->n++] = 4;
    memcpy(w->b + w->n, "AAA\0BBB", 8);
    w->n += 8;
    w->b[w->n++] = '\n';
    memcpy(w->b + w->n, footer, strlen(footer));
    w->n += strlen(footer);
    w->b[w->n++] = '\n';
    return w->n;
}

static void test_core_tz__hand_built_v2_file_and_footer(void **state)
{
    (void)state;
    tzif_w w;
    mcdc_tz *tz = NULL;
    assert_int_equal(0, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "<+02>-2", 0)));
    assert_int_equal(-3600, mcdc_tz_offset_at(tz, t("1999-12-31T23:59:59Z")));
    assert_int_equal(7200, mcdc_tz_offset_at(tz, t("2000-01-01T00:00:00Z")));
    assert_int_equal(7200, mcdc_tz_offset_at(tz, t("2500-01-01T00:00:00Z")));
    mcdc_tz_free(tz);
    /* A footer with rules with times beyond 24h and a negative one (version 3 syntax). */
    assert_int_equal(0, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1", 0)));
    assert_int_equal(-3 * 3600, mcdc_tz_offset_at(tz, t("2030-01-15T00:00:00Z")));
    assert_int_equal(-2 * 3600, mcdc_tz_offset_at(tz, t("2030-07-15T00:00:00Z")));
    mcdc_tz_free(tz);
    /* All-year DST expressed as rules (start Jan 1 00:00, end Dec 31 25:00). */
    assert_int_equal(0, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "EST5EDT,0/0,J365/25", 0)));
    assert_int_equal(-4 * 3600, mcdc_tz_offset_at(tz, t("2030-01-01T12:00:00Z")));
    assert_int_equal(-4 * 3600, mcdc_tz_offset_at(tz, t("2030-12-31T12:00:00Z")));
    assert_int_equal(-4 * 3600, mcdc_tz_offset_at(tz, t("2031-07-01T12:00:00Z")));
    mcdc_tz_free(tz);
    /* Empty footer: the last type stays in force. */
    assert_int_equal(0, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "", 0)));
    assert_int_equal(7200, mcdc_tz_offset_at(tz, t("3000-01-01T00:00:00Z")));
    mcdc_tz_free(tz);
}

static void test_core_tz__malformed_files_are_corrupt(void **state)
{
    (void)state;
    tzif_w w;
    mcdc_tz *tz = (mcdc_tz *)1;
    size_t n = build_v2(&w, "<+02>-2", 0);
    /* Every truncation is refused, never read past. */
    for (size_t cut = 0; cut < n - 1; cut++) {
        int rc = mcdc_tz__parse(&tz, "Test/Zone", w.b, cut);
        if (rc != MCDC_ECORRUPT)
            fail_msg("cut at %zu: rc %d", cut, rc);
        assert_null(tz);
    }
    assert_int_equal(MCDC_ECORRUPT, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "<+02>-2", 7)));
    assert_string_equal("time zone Test/Zone: transition names a local time type that does not exist",
                        mcdc_error_last()->message);
    assert_int_equal(MCDC_ECORRUPT, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "E", 0)));
    assert_non_null(strstr(mcdc_error_last()->message, "bad TZ string footer 'E'"));
    assert_int_equal(MCDC_ECORRUPT, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "EST5EDT,M13.1.0,M1.1.0", 0)));
    assert_int_equal(MCDC_ECORRUPT, mcdc_tz__parse(&tz, "Test/Zone", w.b, build_v2(&w, "EST5EDT,M3.2.0", 0)));
    n = build_v2(&w, "<+02>-2", 0);
    w.b[4] = '9';
    assert_int_equal(MCDC_ECORRUPT, mcdc_tz__parse(&tz, "Test/Zone", w.b, n));
    assert_non_null(strstr(mcdc_error_last()->message, "unknown TZif version"));
    n = build_v2(&w, "<+02>-2", 0);
    w.b[35] = 0xFF; /* v1 timecnt huge */
    assert_int_equal(MCDC_ECORRUPT, mcdc_tz__parse(&tz, "Test/Zone", w.b, n));
    assert_null(tz);
}

/* ---- the sequencer ---- */

static void feed(mcdc_tz_sequencer *seq, const char *local, const char *utc)
{
    char a[MCDC_TIME_STRLEN];
    int64_t got = mcdc_tz_sequencer_next(seq, t(local));
    if (got != t(utc))
        fail_msg("local %s: got %s, want %s", local, mcdc_time_format(a, got, 0, true), utc);
}

static void test_core_tz__sequencer_orders_the_repeated_hour(void **state)
{
    (void)state;
    mcdc_tz *tz = load("America/New_York");
    mcdc_tz_sequencer seq;
    mcdc_tz_sequencer_init(&seq, tz, INT64_MIN, 0);
    feed(&seq, "2025-11-02T00:59:00", "2025-11-02T04:59:00Z");
    feed(&seq, "2025-11-02T01:10:00", "2025-11-02T05:10:00Z");
    feed(&seq, "2025-11-02T01:50:00", "2025-11-02T05:50:00Z");
    feed(&seq, "2025-11-02T01:49:30", "2025-11-02T05:50:00Z"); /* jitter: held, never backwards */
    feed(&seq, "2025-11-02T01:59:30", "2025-11-02T05:59:30Z");
    assert_false(seq.second_pass);
    feed(&seq, "2025-11-02T01:00:30", "2025-11-02T06:00:30Z"); /* the clock went back */
    assert_true(seq.second_pass);
    feed(&seq, "2025-11-02T01:20:00", "2025-11-02T06:20:00Z");
    feed(&seq, "2025-11-02T01:59:59", "2025-11-02T06:59:59Z");
    feed(&seq, "2025-11-02T02:05:00", "2025-11-02T07:05:00Z");
    assert_false(seq.second_pass);
    /* A year later the first pass is taken again. */
    feed(&seq, "2026-11-01T01:30:00", "2026-11-01T05:30:00Z");
    feed(&seq, "2026-11-01T01:10:00", "2026-11-01T06:10:00Z");

    /* Resuming inside the second pass: the predecessor's UTC tells which pass. */
    mcdc_tz_sequencer_init(&seq, tz, t("2025-11-02T01:20:00"), t("2025-11-02T06:20:00Z"));
    assert_true(seq.second_pass);
    feed(&seq, "2025-11-02T01:25:00", "2025-11-02T06:25:00Z");
    mcdc_tz_sequencer_init(&seq, tz, t("2025-11-02T01:20:00"), t("2025-11-02T05:20:00Z"));
    assert_false(seq.second_pass);
    feed(&seq, "2025-11-02T01:25:00", "2025-11-02T05:25:00Z");

    /* Spring forward: a gap time is read with the offset before the gap. */
    mcdc_tz_sequencer_init(&seq, tz, INT64_MIN, 0);
    feed(&seq, "2025-03-09T01:59:00", "2025-03-09T06:59:00Z");
    feed(&seq, "2025-03-09T03:00:10", "2025-03-09T07:00:10Z");
    mcdc_tz_free(tz);
}

static void test_core_tz__sequencer_is_monotonic_over_a_day_of_commits(void **state)
{
    (void)state;
    mcdc_tz *tz = load("Europe/Berlin");
    mcdc_tz_sequencer seq;
    mcdc_tz_sequencer_init(&seq, tz, INT64_MIN, 0);
    /* A commit every 7 minutes through the fall-back night: UTC must come back exact. */
    for (int64_t u = t("2025-10-25T22:00:00Z"); u < t("2025-10-26T04:00:00Z"); u += 7 * M) {
        int64_t got = mcdc_tz_sequencer_next(&seq, mcdc_tz_utc_to_local(tz, u));
        assert_int_equal(u, got);
    }
    mcdc_tz_free(tz);
}

/* Zones loaded and used on several threads at once give the same answers as on one. */
typedef struct thread_job {
    const mcdc_tz *shared; /* one zone used by every thread */
    int64_t        sum;    /* of every conversion, to compare */
    int            ok;
} thread_job;

static void *convert_many(void *arg)
{
    thread_job *j = arg;
    mcdc_tz *own = NULL;
    j->ok = mcdc_tz_load(&own, "Europe/Berlin") == 0;
    j->sum = 0;
    for (int64_t u = INT64_C(1700000000000000); u < INT64_C(1700000000000000) + 400 * MCDC_US_PER_DAY;
         u += 3 * MCDC_US_PER_HOUR + 7) {
        j->sum += mcdc_tz_utc_to_local(j->shared, u) - u;
        j->sum += mcdc_tz_local_to_utc(own, u, true, NULL) - u;
    }
    mcdc_tz_free(own);
    return NULL;
}

static void test_core_tz__threads_share_zones(void **state)
{
    (void)state;
    mcdc_tz *ny = load("America/New_York");
    thread_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i].shared = ny;
        assert_int_equal(0, pthread_create(&th[i], NULL, convert_many, &jobs[i]));
    }
    thread_job solo = {ny, 0, 0};
    convert_many(&solo);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(0, pthread_join(th[i], NULL));
        assert_true(jobs[i].ok);
        assert_int_equal(solo.sum, jobs[i].sum);
    }
    mcdc_tz_free(ny);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_tz__new_york_2025_spring_forward),
        cmocka_unit_test(test_core_tz__new_york_2025_fall_back),
        cmocka_unit_test(test_core_tz__berlin_2025_both_changes),
        cmocka_unit_test(test_core_tz__sao_paulo_2018_fall_back_at_midnight),
        cmocka_unit_test(test_core_tz__far_future_uses_footer_rule),
        cmocka_unit_test(test_core_tz__utc_and_fixed_zones),
        cmocka_unit_test(test_core_tz__unknown_and_escaping_names_not_found),
        cmocka_unit_test(test_core_tz__windows_names_map_to_iana),
        cmocka_unit_test(test_core_tz__hand_built_v2_file_and_footer),
        cmocka_unit_test(test_core_tz__malformed_files_are_corrupt),
        cmocka_unit_test(test_core_tz__sequencer_orders_the_repeated_hour),
        cmocka_unit_test(test_core_tz__sequencer_is_monotonic_over_a_day_of_commits),
        cmocka_unit_test(test_core_tz__threads_share_zones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
