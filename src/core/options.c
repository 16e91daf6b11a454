/*
 * core/options.c: `key=value` lists (see mcdc/options.h).
 *
 * Items live in one array in the order given; lookups are linear and case-insensitive
 * (lists are short: at most MCDC_OPTIONS_MAX items). Every error names the list, the
 * key as the user wrote it and the value; nothing is changed by a failed add. Also the
 * nearest-name match behind every "did you mean" (unknown keys here, unknown options and
 * commands in the CLI).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/buf.h"
#include "mcdc/log.h"
#include "mcdc/options.h"
#include "mcdc/time.h"

typedef struct item {
    char *key;   /* as written, spaces trimmed; owned */
    char *value; /* as written; owned */
} item;

struct mcdc_options {
    char              *what;   /* "stream option"; owned */
    const char *const *known;  /* NULL-terminated, borrowed; NULL = any */
    item              *items;
    size_t             n, cap;
};

int mcdc_options_new(mcdc_options **out, const char *what, const char *const *known_keys)
{
    mcdc_options *o = calloc(1, sizeof *o);
    *out = NULL;
    if (!o || !(o->what = strdup(what ? what : "option"))) {
        free(o);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory creating an option list");
    }
    o->known = known_keys;
    *out = o;
    return 0;
}

void mcdc_options_free(mcdc_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->items[i].key);
        free(o->items[i].value);
    }
    free(o->items);
    free(o->what);
    free(o);
}

static const item *find(const mcdc_options *o, const char *key)
{
    for (size_t i = 0; i < o->n; i++)
        if (!strcasecmp(o->items[i].key, key))
            return &o->items[i];
    return NULL;
}

static int add_n(mcdc_options *o, const char *key, size_t key_len, const char *value)
{
    while (key_len > 0 && isspace((unsigned char)*key)) {
        key++;
        key_len--;
    }
    while (key_len > 0 && isspace((unsigned char)key[key_len - 1]))
        key_len--;
    if (key_len == 0) {
        mcdc_error_set(MCDC_EINVAL, "bad %s '=%s': no key before '='", o->what, value);
        return mcdc_error_hint("write options as key=value");
    }
    for (size_t i = 0; i < key_len; i++)
        if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
            return mcdc_error_set(MCDC_EINVAL, "bad %s key: contains a control character", o->what);
    char *k = strndup(key, key_len);
    if (!k)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory adding an option");
    const item *old = find(o, k);
    if (old) {
        int rc = 0;
        if (strcmp(old->value, value) != 0) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s '%s' given twice with different values ('%s' and '%s')", o->what,
                                k, old->value, value);
            mcdc_error_hint("give each option once");
        }
        free(k);
        return rc;
    }
    if (o->n >= MCDC_OPTIONS_MAX) {
        free(k);
        return mcdc_error_set(MCDC_ENOMEM, "too many %ss: at most %d", o->what, MCDC_OPTIONS_MAX);
    }
    if (o->n == o->cap) {
        size_t ncap = o->cap ? o->cap * 2 : 8;
        item *ni = realloc(o->items, ncap * sizeof *ni);
        if (!ni) {
            free(k);
            return mcdc_error_set(MCDC_ENOMEM, "out of memory adding an option");
        }
        o->items = ni;
        o->cap = ncap;
    }
    char *v = strdup(value);
    if (!v) {
        free(k);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory adding an option");
    }
    o->items[o->n].key = k;
    o->items[o->n].value = v;
    o->n++;
    return 0;
}

int mcdc_options_add(mcdc_options *o, const char *s)
{
    const char *eq = s ? strchr(s, '=') : NULL;
    if (!eq) {
        mcdc_error_set(MCDC_EINVAL, "bad %s '%s': expected key=value", o->what, s ? s : "");
        return mcdc_error_hint("write options as key=value, e.g. batch_size=1000");
    }
    return add_n(o, s, (size_t)(eq - s), eq + 1);
}

int mcdc_options_add_pair(mcdc_options *o, const char *key, const char *value)
{
    if (!key || !value)
        return mcdc_error_set(MCDC_EINVAL, "bad %s: key and value are required", o->what);
    return add_n(o, key, strlen(key), value);
}

int mcdc_options_add_list(mcdc_options *o, const char *text, char sep)
{
    mcdc_buf one = MCDC_BUF_INIT(1 << 20);
    int rc = 0;
    const char *p = text ? text : "";
    for (;;) {
        const char *e = strchr(p, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        mcdc_buf_clear(&one);
        if ((rc = mcdc_buf_put(&one, p, len)) < 0)
            break;
        bool blank = true;
        for (size_t i = 0; i < len; i++)
            blank = blank && isspace((unsigned char)p[i]);
        if (!blank && (rc = mcdc_options_add(o, one.ptr)) < 0)
            break;
        if (!e)
            break;
        p = e + 1;
    }
    mcdc_buf_dispose(&one);
    return rc;
}

/* ---- nearest names ------------------------------------------------------------------- */

static char fold(char c)
{
    return c == '_' ? '-' : (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Optimal string alignment distance (edits, adjacent swaps) of a[0..n) and b[0..m),
 * ignoring case and '_' against '-'; names are short, so O(n*m) on 64-byte rows. */
static size_t distance(const char *a, size_t n, const char *b, size_t m)
{
    enum { W = 64 };
    size_t d[W + 1][W + 1];
    if (n > W || m > W)
        return (size_t)-1;
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = fold(a[i - 1]) != fold(b[j - 1]);
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

const char *mcdc_nearest_name(const char *given, size_t len, const char *const *names, size_t n)
{
    const char *best = NULL, *prefix = NULL;
    size_t best_d = (size_t)-1, n_prefix = 0;
    for (size_t i = 0; i < n; i++) {
        size_t m = strlen(names[i]);
        if (len >= 3 && len < m) {
            bool is_prefix = true;
            for (size_t k = 0; k < len && is_prefix; k++)
                is_prefix = fold(given[k]) == fold(names[i][k]);
            if (is_prefix) {
                prefix = names[i];
                n_prefix++;
            }
        }
        size_t d = distance(given, len, names[i], m);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    /* A typo: at most a third of the name (at least 1, at most 3 edits) away. */
    size_t allowed = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
    if (best && best_d <= allowed)
        return best;
    return n_prefix == 1 ? prefix : NULL;
}

static bool is_known(const mcdc_options *o, const char *key)
{
    if (!o->known)
        return true;
    for (size_t i = 0; o->known[i]; i++)
        if (!strcasecmp(o->known[i], key))
            return true;
    return false;
}

size_t mcdc_options_warn_unknown(const mcdc_options *o)
{
    size_t n = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (is_known(o, o->items[i].key))
            continue;
        n++;
        char known[1024] = "";
        size_t used = 0;
        for (size_t k = 0; o->known[k] && used + 1 < sizeof known; k++) {
            size_t len = strlen(o->known[k]);
            if (used + len + 3 >= sizeof known)
                break;
            if (used) {
                memcpy(known + used, ", ", 2);
                used += 2;
            }
            memcpy(known + used, o->known[k], len + 1);
            used += len;
        }
        size_t n_known = 0;
        while (o->known[n_known])
            n_known++;
        const char *near = mcdc_nearest_name(o->items[i].key, strlen(o->items[i].key), o->known, n_known);
        mcdc_log(MCDC_LOG_WARN, "options", "unknown %s '%s' is ignored%s%s%s (known: %s)", o->what,
                 o->items[i].key, near ? "; did you mean " : "", near ? near : "", near ? "?" : "",
                 used ? known : "none");
    }
    return n;
}

size_t mcdc_options_count(const mcdc_options *o)
{
    return o->n;
}

bool mcdc_options_at(const mcdc_options *o, size_t i, const char **key, const char **value)
{
    if (i >= o->n)
        return false;
    if (key)
        *key = o->items[i].key;
    if (value)
        *value = o->items[i].value;
    return true;
}

bool mcdc_options_has(const mcdc_options *o, const char *key)
{
    return find(o, key) != NULL;
}

const char *mcdc_options_get_str(const mcdc_options *o, const char *key, const char *def)
{
    const item *it = find(o, key);
    return it ? it->value : def;
}

int mcdc_options_parse_bool(bool *out, const char *s)
{
    static const char *const yes[] = {"true", "1", "yes", "y"}, *const no[] = {"false", "0", "no", "n"};
    for (size_t i = 0; s && i < 4; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = true;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *out = false;
            return 0;
        }
    }
    return mcdc_error_set(MCDC_EINVAL, "bad boolean '%s': expected true/false, 1/0, yes/no or y/n", s ? s : "");
}

static int bad_value(const mcdc_options *o, const item *it, const char *expected)
{
    mcdc_error_set(MCDC_EINVAL, "bad %s %s='%s': expected %s", o->what, it->key, it->value, expected);
    return mcdc_error_hint("fix the value of '%s'", it->key);
}

int mcdc_options_get_bool(const mcdc_options *o, const char *key, bool def, bool *out)
{
    const item *it = find(o, key);
    if (!it) {
        *out = def;
        return 0;
    }
    if (mcdc_options_parse_bool(out, it->value) < 0)
        return bad_value(o, it, "true/false, 1/0, yes/no or y/n");
    return 0;
}

int mcdc_options_get_int(const mcdc_options *o, const char *key, int64_t def, int64_t min, int64_t max,
                         int64_t *out)
{
    const item *it = find(o, key);
    char range[96];
    if (!it) {
        *out = def;
        return 0;
    }
    snprintf(range, sizeof range, "an integer from %lld to %lld", (long long)min, (long long)max);
    const char *s = it->value;
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return bad_value(o, it, range);
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno == ERANGE || v < min || v > max)
        return bad_value(o, it, range);
    *out = v;
    return 0;
}

int mcdc_options_get_duration(const mcdc_options *o, const char *key, int64_t def_us, int64_t *out_us)
{
    const item *it = find(o, key);
    if (!it) {
        *out_us = def_us;
        return 0;
    }
    if (mcdc_duration_parse(out_us, it->value) < 0)
        return bad_value(o, it, "a duration such as 250ms, 90s, 5m, 1h or 3d");
    return 0;
}

int mcdc_options_get_lsn(const mcdc_options *o, const char *key, const mcdc_lsn *def, mcdc_lsn *out)
{
    const item *it = find(o, key);
    if (!it) {
        *out = def ? *def : mcdc_lsn_zero();
        return 0;
    }
    if (mcdc_lsn_parse(out, it->value) < 0)
        return bad_value(o, it, "an LSN: 0x and 1 to 20 hex digits");
    return 0;
}
