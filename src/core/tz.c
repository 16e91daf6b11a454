/*
 * core/tz.c: time zones read from TZif files (RFC 8536), local <-> UTC conversion and the
 * LSN-order commit-time sequencer.
 *
 * Guarantees: never reads or sets TZ, never calls localtime/tzset, keeps no global
 * state, so zones load and convert on any thread at once. A file is parsed whole into an
 * immutable mcdc_tz: the 64-bit (version 2+) block when present, else the 32-bit one; the
 * POSIX TZ footer (versions 2 to 4, including v3's hours beyond 24 and negative rule
 * times) governs instants after the last transition. Every count in a file is checked
 * against the bytes present before anything is read; a bad file is MCDC_ECORRUPT and
 * never a crash. Leap-second records (the "right/" zones) are skipped, so those zones
 * read as their POSIX counterparts. Names that could leave the zone directory ("..",
 * a leading "/") are refused as unknown. Design: docs/architecture.md §6.
 *
 * TZif layout (all integers big-endian), RFC 8536 §3:
 *   offset size  meaning
 *   0      4     magic "TZif"
 *   4      1     version: 0, '2', '3' or '4'
 *   5      15    unused
 *   20     24    six uint32 counts: isutcnt isstdcnt leapcnt timecnt typecnt charcnt
 *   44     ...   data block: timecnt transition times (4 bytes in v1, 8 in v2+),
 *                timecnt type indices (1 byte), typecnt ttinfo (int32 utoff, uint8 isdst,
 *                uint8 desigidx), charcnt designation bytes, leapcnt leap records
 *                (4 or 8 bytes time + 4 bytes correction), isstdcnt and isutcnt bytes.
 *   v2+:  a second header and data block with 8-byte times, then "\n" TZ-string "\n".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcdc/time.h"
#include "mcdc/tz.h"
#include "core/tz_internal.h"

#define ZONEINFO_DIR  "/usr/share/zoneinfo"
#define TZIF_MAX_SIZE (1u << 20) /* real files are under 4 KiB */
#define MAX_NAME      255

/* A POSIX TZ rule date: Jn (1..365, no Feb 29), n (0..365) or Mm.w.d. */
typedef struct rule_date {
    char    kind;   /* 'J', 'N' or 'M' */
    int     day;    /* J: 1..365; N: 0..365; M: weekday 0..6 (Sunday 0) */
    int     month;  /* M only: 1..12 */
    int     week;   /* M only: 1..5 (5 = last) */
    int32_t time_s; /* local seconds after midnight, -167h..167h */
} rule_date;

/* The TZ footer: a standard offset and optionally a DST offset with its two rules. */
typedef struct posix_rule {
    int32_t   std_off; /* seconds east of UTC (the POSIX sign inverted) */
    int32_t   dst_off; /* seconds east of UTC in DST */
    bool      has_dst;
    rule_date start;   /* DST starts, in standard local time */
    rule_date end;     /* DST ends, in DST local time */
} posix_rule;

struct mcdc_tz {
    char       name[MAX_NAME + 1]; /* IANA name as loaded */
    size_t     n_trans;            /* transitions */
    int64_t   *trans_s;            /* n_trans UTC seconds, ascending */
    uint8_t   *trans_type;         /* n_trans indices into type_off */
    size_t     n_types;            /* >= 1 */
    int32_t   *type_off;           /* UTC offset of each type, seconds east */
    bool       has_footer;         /* a POSIX rule follows the last transition */
    posix_rule footer;
};

/* ---- POSIX TZ strings ---- */

static bool parse_num(const char **p, int lo, int hi, int *out)
{
    int v = 0, n = 0;
    while (**p >= '0' && **p <= '9' && n < 4) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    if (n == 0 || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* [+-]hh[:mm[:ss]] with hours up to max_h; result in seconds, sign as written. */
static bool parse_hms(const char **p, int max_h, int32_t *out)
{
    int sign = 1, h, m = 0, s = 0;
    if (**p == '+' || **p == '-') {
        sign = **p == '-' ? -1 : 1;
        (*p)++;
    }
    if (!parse_num(p, 0, max_h, &h))
        return false;
    if (**p == ':') {
        (*p)++;
        if (!parse_num(p, 0, 59, &m))
            return false;
        if (**p == ':') {
            (*p)++;
            if (!parse_num(p, 0, 59, &s))
                return false;
        }
    }
    *out = sign * (h * 3600 + m * 60 + s);
    return true;
}

static bool parse_abbr(const char **p)
{
    const char *s = *p;
    if (*s == '<') {
        s++;
        while (*s && *s != '>')
            s++;
        if (*s != '>' || s - *p < 4) /* at least 3 characters inside */
            return false;
        *p = s + 1;
        return true;
    }
    while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
        s++;
    if (s - *p < 3)
        return false;
    *p = s;
    return true;
}

static bool parse_rule_date(const char **p, rule_date *r)
{
    r->time_s = 7200;
    if (**p == 'J') {
        (*p)++;
        r->kind = 'J';
        if (!parse_num(p, 1, 365, &r->day))
            return false;
    } else if (**p == 'M') {
        (*p)++;
        r->kind = 'M';
        if (!parse_num(p, 1, 12, &r->month) || *(*p)++ != '.' || !parse_num(p, 1, 5, &r->week) ||
            *(*p)++ != '.' || !parse_num(p, 0, 6, &r->day))
            return false;
    } else {
        r->kind = 'N';
        if (!parse_num(p, 0, 365, &r->day))
            return false;
    }
    if (**p == '/') {
        (*p)++;
        if (!parse_hms(p, 167, &r->time_s))
            return false;
    }
    return true;
}

/* Parse a TZ string such as "EST5EDT,M3.2.0,M11.1.0" or "<-03>3". */
static bool parse_posix(const char *s, posix_rule *r)
{
    const char *p = s;
    int32_t off;
    memset(r, 0, sizeof *r);
    if (!parse_abbr(&p) || !parse_hms(&p, 24, &off))
        return false;
    r->std_off = -off;
    if (*p == '\0')
        return true;
    if (!parse_abbr(&p))
        return false;
    r->has_dst = true;
    r->dst_off = r->std_off + 3600;
    if (*p != ',' && *p != '\0') {
        if (!parse_hms(&p, 24, &off))
            return false;
        r->dst_off = -off;
    }
    if (*p == '\0') {
        /* No rules: POSIX leaves them implementation-defined; use the US rules. */
        r->start = (rule_date){ 'M', 0, 3, 2, 7200 };
        r->end = (rule_date){ 'M', 0, 11, 1, 7200 };
        return true;
    }
    if (*p++ != ',' || !parse_rule_date(&p, &r->start) || *p++ != ',' || !parse_rule_date(&p, &r->end))
        return false;
    return *p == '\0';
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Seconds from the start of year y (local) to the rule's date and time. */
static int64_t rule_offset_in_year(const rule_date *r, int64_t y)
{
    int64_t day;
    if (r->kind == 'J') {
        day = r->day - 1;
        if (is_leap(y) && r->day >= 60)
            day++;
    } else if (r->kind == 'N') {
        day = r->day;
    } else {
        static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int64_t first = mcdc_days_from_civil(y, (unsigned)r->month, 1);
        int64_t wd_first = ((first % 7) + 7 + 4) % 7; /* 1970-01-01 was a Thursday (4) */
        int64_t d = (r->day - wd_first + 7) % 7 + (int64_t)(r->week - 1) * 7;
        int mlen = dm[r->month - 1] + (r->month == 2 && is_leap(y));
        while (d >= mlen)
            d -= 7;
        day = first - mcdc_days_from_civil(y, 1, 1) + d;
    }
    return day * 86400 + r->time_s;
}

/* Offset in force at UTC second t under the footer rule. */
static int32_t posix_offset_at(const posix_rule *r, int64_t t)
{
    if (!r->has_dst)
        return r->std_off;
    int64_t y;
    unsigned m, d;
    int64_t local = t + r->std_off;
    int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
    mcdc_civil_from_days(days, &y, &m, &d);
    /* Look at the year before, this one and the next so that rules with times beyond
     * 24h or before midnight that cross a year boundary are still seen. */
    int32_t result = r->std_off;
    int64_t best = INT64_MIN;
    for (int64_t yy = y - 1; yy <= y + 1; yy++) {
        int64_t y0 = mcdc_days_from_civil(yy, 1, 1) * 86400;
        int64_t start = y0 + rule_offset_in_year(&r->start, yy) - r->std_off;
        int64_t end = y0 + rule_offset_in_year(&r->end, yy) - r->dst_off;
        /* The latest change at or before t decides; at equal times the later rule in
         * this walk wins, so an all-year DST rule (end of one year = start of the next)
         * stays in DST. */
        if (start <= t && start >= best) {
            best = start;
            result = r->dst_off;
        }
        if (end <= t && end >= best) {
            best = end;
            result = r->std_off;
        }
    }
    return result;
}

/* ---- TZif ---- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

typedef struct tzif_header {
    char     version;
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
} tzif_header;

#define CORRUPT(why) mcdc_error_set(MCDC_ECORRUPT, "time zone %s: %s", name, why)

static int read_header(const char *name, const uint8_t *p, size_t n, tzif_header *h)
{
    if (n < 44 || memcmp(p, "TZif", 4) != 0)
        return CORRUPT("not a TZif file (no TZif magic)");
    h->version = (char)p[4];
    if (h->version != 0 && h->version != '2' && h->version != '3' && h->version != '4')
        return CORRUPT("unknown TZif version");
    h->isutcnt = be32(p + 20);
    h->isstdcnt = be32(p + 24);
    h->leapcnt = be32(p + 28);
    h->timecnt = be32(p + 32);
    h->typecnt = be32(p + 36);
    h->charcnt = be32(p + 40);
    if (h->typecnt == 0 || h->typecnt > 256 || h->charcnt == 0)
        return CORRUPT("bad count of local time types or designation bytes");
    if ((h->isutcnt != 0 && h->isutcnt != h->typecnt) || (h->isstdcnt != 0 && h->isstdcnt != h->typecnt))
        return CORRUPT("bad count of standard/UT indicators");
    if (h->timecnt > TZIF_MAX_SIZE || h->leapcnt > TZIF_MAX_SIZE || h->charcnt > TZIF_MAX_SIZE)
        return CORRUPT("counts larger than the file");
    return 0;
}

/* Bytes in a data block whose times are tsize bytes wide. */
static size_t block_size(const tzif_header *h, size_t tsize)
{
    return (size_t)h->timecnt * tsize + h->timecnt + (size_t)h->typecnt * 6 + h->charcnt +
           (size_t)h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
}

int mcdc_tz__parse(mcdc_tz **out, const char *name, const uint8_t *data, size_t n)
{
    tzif_header h;
    const uint8_t *p;
    size_t tsize = 4, avail;
    int rc;
    *out = NULL;
    if ((rc = read_header(name, data, n, &h)) < 0)
        return rc;
    p = data + 44;
    avail = n - 44;
    if (block_size(&h, 4) > avail)
        return CORRUPT("file shorter than its counts say");
    if (h.version != 0) {
        p += block_size(&h, 4);
        avail -= block_size(&h, 4);
        if ((rc = read_header(name, p, avail, &h)) < 0)
            return rc;
        p += 44;
        avail -= 44;
        tsize = 8;
        if (block_size(&h, 8) > avail)
            return CORRUPT("file shorter than its counts say");
    }

    mcdc_tz *tz = calloc(1, sizeof *tz);
    if (!tz)
        return mcdc_error_set(MCDC_ENOMEM, "time zone %s: out of memory", name);
    snprintf(tz->name, sizeof tz->name, "%s", name);
    tz->n_trans = h.timecnt;
    tz->n_types = h.typecnt;
    tz->trans_s = calloc(h.timecnt ? h.timecnt : 1, sizeof *tz->trans_s);
    tz->trans_type = calloc(h.timecnt ? h.timecnt : 1, 1);
    tz->type_off = calloc(h.typecnt, sizeof *tz->type_off);
    if (!tz->trans_s || !tz->trans_type || !tz->type_off) {
        mcdc_tz_free(tz);
        return mcdc_error_set(MCDC_ENOMEM, "time zone %s: out of memory", name);
    }
    for (size_t i = 0; i < h.timecnt; i++) {
        tz->trans_s[i] = tsize == 8 ? be64(p + i * 8) : (int64_t)(int32_t)be32(p + i * 4);
        if (i > 0 && tz->trans_s[i] <= tz->trans_s[i - 1]) {
            mcdc_tz_free(tz);
            return CORRUPT("transition times not ascending");
        }
    }
    p += (size_t)h.timecnt * tsize;
    for (size_t i = 0; i < h.timecnt; i++) {
        if (p[i] >= h.typecnt) {
            mcdc_tz_free(tz);
            return CORRUPT("transition names a local time type that does not exist");
        }
        tz->trans_type[i] = p[i];
    }
    p += h.timecnt;
    for (size_t i = 0; i < h.typecnt; i++) {
        int32_t off = (int32_t)be32(p + i * 6);
        if (off < -89999 || off > 93599 || p[i * 6 + 4] > 1 || p[i * 6 + 5] >= h.charcnt) {
            mcdc_tz_free(tz);
            return CORRUPT("bad local time type");
        }
        tz->type_off[i] = off;
    }
    p += (size_t)h.typecnt * 6;
    p += h.charcnt + (size_t)h.leapcnt * (tsize + 4) + h.isstdcnt + h.isutcnt;
    avail -= block_size(&h, tsize);

    if (h.version != 0) {
        /* Footer: "\n" TZ-string "\n" (required in v2+). An empty string means no rule. */
        char fs[256];
        const uint8_t *nl;
        if (avail < 2 || p[0] != '\n' || !(nl = memchr(p + 1, '\n', avail - 1)) || (size_t)(nl - p - 1) >= sizeof fs) {
            mcdc_tz_free(tz);
            return CORRUPT("bad TZ string footer");
        }
        memcpy(fs, p + 1, (size_t)(nl - p - 1));
        fs[nl - p - 1] = '\0';
        if (fs[0]) {
            if (!parse_posix(fs, &tz->footer)) {
                mcdc_tz_free(tz);
                return mcdc_error_set(MCDC_ECORRUPT, "time zone %s: bad TZ string footer '%s'", name, fs);
            }
            tz->has_footer = true;
        }
    }
    *out = tz;
    return 0;
}

/* A name is a relative path of [A-Za-z0-9._+-] segments, none of them "." or "..". */
static bool safe_zone_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > MAX_NAME || s[0] == '/')
        return false;
    const char *seg = s;
    for (const char *p = s;; p++) {
        if (*p == '/' || *p == '\0') {
            size_t len = (size_t)(p - seg);
            if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
                return false;
            if (*p == '\0')
                return true;
            seg = p + 1;
            continue;
        }
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '+' || c == '.'))
            return false;
    }
}

static int not_found(const char *name)
{
    mcdc_error_set(MCDC_ENOTFOUND, "unknown time zone '%s'", name);
    return mcdc_error_hint("use an IANA name (e.g. America/New_York) found under " ZONEINFO_DIR
                           " (install tzdata) or a Windows name as SQL Server reports it "
                           "(e.g. Eastern Standard Time)");
}

int mcdc_tz_load(mcdc_tz **out, const char *name)
{
    char path[sizeof ZONEINFO_DIR + MAX_NAME + 2];
    uint8_t *data = NULL;
    size_t n = 0, cap = 4096;
    int fd, rc;
    *out = NULL;
    if (!name)
        return mcdc_error_set(MCDC_EINVAL, "time zone: no name given");
    const char *iana = mcdc_tz_windows_to_iana(name);
    if (!iana)
        iana = name;
    if (!safe_zone_name(iana))
        return not_found(name);
    snprintf(path, sizeof path, "%s/%s", ZONEINFO_DIR, iana);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR)
            return not_found(name);
        return mcdc_error_set(MCDC_EIO, "time zone %s: %s: %s", name, path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return not_found(name);
    }
    for (;;) {
        if (n == cap || !data) {
            if (n >= TZIF_MAX_SIZE) {
                rc = mcdc_error_set(MCDC_ECORRUPT, "time zone %s: %s is larger than %u bytes", name, path,
                                    TZIF_MAX_SIZE);
                goto done;
            }
            cap = data ? cap * 2 : cap;
            uint8_t *nd = realloc(data, cap);
            if (!nd) {
                rc = mcdc_error_set(MCDC_ENOMEM, "time zone %s: out of memory", name);
                goto done;
            }
            data = nd;
        }
        ssize_t r = read(fd, data + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = mcdc_error_set(MCDC_EIO, "time zone %s: reading %s: %s", name, path, strerror(errno));
            goto done;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    rc = mcdc_tz__parse(out, iana, data, n);
done:
    close(fd);
    free(data);
    return rc;
}

void mcdc_tz_free(mcdc_tz *tz)
{
    if (!tz)
        return;
    free(tz->trans_s);
    free(tz->trans_type);
    free(tz->type_off);
    free(tz);
}

const char *mcdc_tz_name(const mcdc_tz *tz)
{
    return tz->name;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int32_t mcdc_tz_offset_at(const mcdc_tz *tz, int64_t utc_us)
{
    int64_t t = floor_div(utc_us, MCDC_US_PER_SEC);
    if (tz->n_trans == 0 || t < tz->trans_s[0]) {
        if (tz->n_trans == 0 && tz->has_footer)
            return posix_offset_at(&tz->footer, t);
        return tz->type_off[0];
    }
    if (t >= tz->trans_s[tz->n_trans - 1] && tz->has_footer)
        return posix_offset_at(&tz->footer, t);
    /* The last transition at or before t. */
    size_t lo = 0, hi = tz->n_trans; /* trans_s[lo] <= t < trans_s[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz->trans_s[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return tz->type_off[tz->trans_type[lo]];
}

/* Instants are clamped to ±2^62 us (about ±146,000 years) so that adding offsets and
 * days can never overflow, whatever a caller passes. */
static int64_t clamp_us(int64_t v)
{
    const int64_t lim = INT64_C(1) << 62;
    return v < -lim ? -lim : v > lim ? lim : v;
}

int64_t mcdc_tz_utc_to_local(const mcdc_tz *tz, int64_t utc_us)
{
    utc_us = clamp_us(utc_us);
    return utc_us + (int64_t)mcdc_tz_offset_at(tz, utc_us) * MCDC_US_PER_SEC;
}

/* The UTC candidates for a local time: the offsets in force a day before and a day
 * after bracket any single change; a candidate is valid when its offset is the one in
 * force at the instant it gives. */
static int local_candidates(const mcdc_tz *tz, int64_t local_us, int64_t *first, int64_t *second,
                            int32_t *off_before)
{
    local_us = clamp_us(local_us);
    int32_t ob = mcdc_tz_offset_at(tz, local_us - MCDC_US_PER_DAY);
    int32_t oa = mcdc_tz_offset_at(tz, local_us + MCDC_US_PER_DAY);
    int64_t ub = local_us - (int64_t)ob * MCDC_US_PER_SEC;
    int64_t ua = local_us - (int64_t)oa * MCDC_US_PER_SEC;
    bool vb = mcdc_tz_offset_at(tz, ub) == ob;
    bool va = mcdc_tz_offset_at(tz, ua) == oa;
    *off_before = ob;
    if (vb && va && ub != ua) {
        *first = ub < ua ? ub : ua;
        *second = ub < ua ? ua : ub;
        return 2;
    }
    if (vb || va) {
        *first = *second = vb ? ub : ua;
        return 1;
    }
    return 0;
}

int64_t mcdc_tz_local_to_utc(const mcdc_tz *tz, int64_t local_us, bool later_pass, bool *was_gap)
{
    int64_t a, b;
    int32_t ob;
    int n = local_candidates(tz, local_us, &a, &b, &ob);
    if (was_gap)
        *was_gap = n == 0;
    if (n == 0)
        return clamp_us(local_us) - (int64_t)ob * MCDC_US_PER_SEC;
    return later_pass ? b : a;
}

/* ---- the sequencer ---- */

void mcdc_tz_sequencer_init(mcdc_tz_sequencer *seq, const mcdc_tz *tz, int64_t prev_local_us, int64_t prev_utc_us)
{
    int64_t a, b;
    int32_t ob;
    if (prev_local_us != INT64_MIN)
        prev_local_us = clamp_us(prev_local_us);
    seq->tz = tz;
    seq->prev_local_us = prev_local_us;
    seq->prev_utc_us = prev_utc_us;
    seq->second_pass = false;
    /* Resuming inside a repeated hour: the predecessor tells which pass we are in. */
    if (prev_local_us != INT64_MIN && local_candidates(tz, prev_local_us, &a, &b, &ob) == 2 && prev_utc_us == b)
        seq->second_pass = true;
}

int64_t mcdc_tz_sequencer_next(mcdc_tz_sequencer *seq, int64_t local_us)
{
    int64_t a, b, utc;
    int32_t ob;
    local_us = clamp_us(local_us);
    int n = local_candidates(seq->tz, local_us, &a, &b, &ob);
    if (n == 2) {
        if (seq->prev_local_us != INT64_MIN && local_us < seq->prev_local_us - MCDC_US_PER_MIN)
            seq->second_pass = true;
        utc = seq->second_pass ? b : a;
    } else {
        seq->second_pass = false;
        utc = n == 0 ? local_us - (int64_t)ob * MCDC_US_PER_SEC : a;
    }
    /* Clock jitter (a commit reading less than a minute earlier than its predecessor)
     * must not make UTC go backwards along LSNs. */
    if (seq->prev_local_us != INT64_MIN && utc < seq->prev_utc_us)
        utc = seq->prev_utc_us;
    seq->prev_local_us = local_us;
    seq->prev_utc_us = utc;
    return utc;
}
