/*
 * fuzz_core_parse: the core parsers on hostile text: LSNs, ISO-8601 times, durations,
 * decimals, option lists, connection-string masking, table names and TZif files.
 *
 * Beyond "no crash, no sanitizer report", it checks properties: whatever parses formats
 * back to text that parses to the same value; masking never lets a value after "pwd="
 * through; a TZif file that loads converts any instant without failing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/error.h"
#include "mcdc/lsn.h"
#include "mcdc/options.h"
#include "mcdc/secret.h"
#include "mcdc/time.h"
#include "mcdc/tz.h"
#include "mcdc/value.h"
#include "mcdc/warehouse.h"
#include "core/tz_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s)
{
    mcdc_lsn l, l2;
    char buf[MCDC_TIME_STRLEN + MCDC_LSN_STRLEN];
    if (mcdc_lsn_parse(&l, s) == 0) {
        mcdc_lsn_format(buf, &l);
        if (mcdc_lsn_parse(&l2, buf) != 0 || mcdc_lsn_cmp(&l, &l2) != 0)
            abort();
        mcdc_lsn_increment(&l2, &l);
        mcdc_lsn_decrement(&l2, &l);
    }
    int64_t t, t2;
    bool zone;
    if (mcdc_time_parse_ex(&t, &zone, s) == 0) {
        mcdc_time_format(buf, t, 6, true);
        if (mcdc_time_parse(&t2, buf) != 0 || t2 != t)
            abort();
        if (mcdc_time_truncate(t, MCDC_GRAN_DAY) > t || mcdc_time_truncate(t, MCDC_GRAN_MINUTE) > t)
            abort();
    }
    if (mcdc_duration_parse(&t, s) == 0 && t < 0)
        abort();
    mcdc_int128 d, d2;
    char dec[48];
    if (mcdc_decimal_parse(&d, s, strlen(s), 38, 10) == 0) {
        mcdc_decimal_format(dec, d, 10);
        if (mcdc_decimal_parse(&d2, dec, strlen(dec), 38, 10) != 0 || d != d2)
            abort();
    }
    char path[MCDC_PATH_MAX];
    mcdc_warehouse_resolve(path, "/lake", s);
}

static void check_options(const char *s)
{
    static const char *const known[] = {"batch_size", "trigger", "start_lsn", "snapshot", NULL};
    mcdc_options *o = NULL;
    if (mcdc_options_new(&o, "option", known) != 0)
        return;
    mcdc_options_add_list(o, s, ',');
    mcdc_options_add(o, s);
    bool b;
    int64_t v;
    mcdc_lsn l;
    mcdc_options_get_bool(o, "snapshot", false, &b);
    mcdc_options_get_int(o, "batch_size", 1, 1, INT64_MAX, &v);
    mcdc_options_get_duration(o, "trigger", 0, &v);
    mcdc_options_get_lsn(o, "start_lsn", NULL, &l);
    mcdc_options_free(o);
}

static void check_mask(const char *s)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    if (mcdc_secret_mask(&b, s) == 0 && b.ptr) {
        /* After masking, no "pwd=" may be followed by anything but "***". */
        for (const char *p = b.ptr; (p = strchr(p, '=')) != NULL; p++) {
            if (p - b.ptr >= 3 && !strncasecmp(p - 3, "pwd", 3) && strncmp(p + 1, "***", 3) != 0)
                abort();
        }
    }
    mcdc_buf_dispose(&b);
}

static void check_tzif(const uint8_t *data, size_t size)
{
    mcdc_tz *tz = NULL;
    if (mcdc_tz__parse(&tz, "Fuzz/Zone", data, size) != 0)
        return;
    static const int64_t probes[] = {INT64_C(-62135596800000000), -1, 0, INT64_C(1741503600000000),
                                     INT64_C(4102444800000000), INT64_C(253402300799000000)};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        int32_t off = mcdc_tz_offset_at(tz, probes[i]);
        if (off < -89999 || off > 93599 + 86400 * 7)
            abort();
        int64_t local = mcdc_tz_utc_to_local(tz, probes[i]);
        mcdc_tz_local_to_utc(tz, local, i % 2, NULL);
    }
    mcdc_tz_sequencer seq;
    mcdc_tz_sequencer_init(&seq, tz, INT64_MIN, 0);
    int64_t prev = INT64_MIN;
    for (int64_t t = INT64_C(1700000000000000); t < INT64_C(1700000000000000) + 3 * MCDC_US_PER_DAY;
         t += 37 * MCDC_US_PER_MIN) {
        int64_t u = mcdc_tz_sequencer_next(&seq, t);
        if (u < prev)
            abort(); /* never backwards along LSNs */
        prev = u;
    }
    mcdc_tz_free(tz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && !memcmp(data, "TZif", 4)) {
        check_tzif(data, size);
        return 0;
    }
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    check_text(s);
    check_options(s);
    check_mask(s);
    free(s);
    mcdc_error_clear();
    return 0;
}
