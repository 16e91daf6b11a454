/*
 * delta/log.c: the _delta_log directory: listing and classifying its files, choosing a
 * checkpoint, _last_checkpoint, and reading newline-delimited JSON action files.
 *
 * File names (PROTOCOL "File Types"): NNN.json commits (20-digit versions),
 * NNN.checkpoint.parquet, NNN.checkpoint.PPPPPPPPPP.TTTTTTTTTT.parquet (multi-part),
 * NNN.checkpoint.<uuid>.json|parquet (V2). Anything else (.crc, compacted logs, temp
 * files starting with '.', _sidecars/, _staged_commits/) is ignored. Errors reading a
 * JSON action file name the file and the 1-based line.
 *
 * Invariants:
 * (L1) A commit file (and a JSON checkpoint) holds at least one action: an empty or
 *      blank file is MCDC_ECORRUPT, never an empty commit. Every reader of the log goes
 *      through mcdc_delta__parse_json_actions, so a snapshot, the history and a writer's
 *      conflict check all stop at it; a writer never commits past a corrupt version.
 * (L2) _last_checkpoint is only a hint: when it is missing the listing decides silently;
 *      when it is empty, garbled or unreadable a warning says so (once per table and
 *      process) and the listing decides.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mcdc/log.h"
#include "mcdc/storage.h"

#include "delta/internal.h"

void mcdc_delta__commit_name(char out[32], int64_t v)
{
    snprintf(out, 32, "%020lld.json", (long long)v);
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n > 0;
}

static int64_t parse_digits(const char *s, size_t n)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_cp(const void *a, const void *b)
{
    const mcdc_delta__cp_file *x = a, *y = b;
    if (x->version != y->version)
        return x->version < y->version ? -1 : 1;
    return strcmp(x->name, y->name);
}

void mcdc_delta__listing_free(mcdc_delta__listing *l)
{
    if (!l)
        return;
    free(l->commits);
    for (size_t i = 0; i < l->n_cps; i++)
        free(l->cps[i].name);
    free(l->cps);
    memset(l, 0, sizeof *l);
}

/* Classify a checkpoint name after "NNN.checkpoint." (rest = the remainder). */
static bool classify_cp(mcdc_delta__cp_file *cp, const char *rest)
{
    size_t n = strlen(rest);
    if (strcmp(rest, "parquet") == 0) {
        cp->kind = CP_CLASSIC;
        cp->part = cp->n_parts = 1;
        return true;
    }
    /* PPPPPPPPPP.TTTTTTTTTT.parquet */
    if (n == 10 + 1 + 10 + 8 && all_digits(rest, 10) && rest[10] == '.' &&
        all_digits(rest + 11, 10) && strcmp(rest + 21, ".parquet") == 0) {
        int64_t p = parse_digits(rest, 10), t = parse_digits(rest + 11, 10);
        if (p < 1 || t < 1 || p > t || t > 1000000)
            return false;
        cp->kind = CP_MULTI;
        cp->part = (int)p;
        cp->n_parts = (int)t;
        return true;
    }
    /* <uuid>.json | <uuid>.parquet */
    const char *dot = strchr(rest, '.');
    if (dot && dot - rest >= 8 && (strcmp(dot, ".json") == 0 || strcmp(dot, ".parquet") == 0)) {
        cp->kind = CP_V2_UUID;
        cp->part = cp->n_parts = 1;
        return true;
    }
    return false;
}

int mcdc_delta__list(mcdc_delta__listing *out, const char *table)
{
    memset(out, 0, sizeof *out);
    char *logdir = mcdc_delta__join(table, "_delta_log");
    if (!logdir)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_storage_listing names;
    int rc = mcdc_storage_list(&names, logdir, 0);
    if (rc < 0) {
        if (rc == MCDC_ENOTFOUND)
            rc = mcdc_error_set(MCDC_ENOTFOUND, "%s: not a Delta table (no _delta_log)", table);
        free(logdir);
        return rc;
    }
    size_t cap_c = 0, cap_p = 0;
    for (size_t i = 0; i < names.n; i++) {
        const char *nm = names.entries[i].name;
        size_t n = strlen(nm);
        if (n < 21 || !all_digits(nm, 20) || nm[20] != '.')
            continue;
        int64_t v = parse_digits(nm, 20);
        if (v < 0)
            continue;
        if (strcmp(nm + 20, ".json") == 0) {
            if (out->n_commits == cap_c) {
                cap_c = cap_c ? cap_c * 2 : 64;
                int64_t *c = realloc(out->commits, cap_c * sizeof *c);
                if (!c) {
                    rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                    break;
                }
                out->commits = c;
            }
            out->commits[out->n_commits++] = v;
        } else if (strncmp(nm + 20, ".checkpoint.", 12) == 0) {
            mcdc_delta__cp_file cp = { .version = v };
            if (!classify_cp(&cp, nm + 32))
                continue;
            if (out->n_cps == cap_p) {
                cap_p = cap_p ? cap_p * 2 : 16;
                mcdc_delta__cp_file *c = realloc(out->cps, cap_p * sizeof *c);
                if (!c) {
                    rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                    break;
                }
                out->cps = c;
            }
            cp.name = strdup(nm);
            if (!cp.name) {
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                break;
            }
            out->cps[out->n_cps++] = cp;
        }
    }
    mcdc_storage_listing_dispose(&names);
    free(logdir);
    if (rc < 0) {
        mcdc_delta__listing_free(out);
        return rc;
    }
    if (out->n_commits)
        qsort(out->commits, out->n_commits, sizeof *out->commits, cmp_i64);
    if (out->n_cps)
        qsort(out->cps, out->n_cps, sizeof *out->cps, cmp_cp);
    return 0;
}

void mcdc_delta__choose_checkpoint(mcdc_delta__cp_choice *out, const mcdc_delta__listing *l,
                                   int64_t version)
{
    out->version = -1;
    out->n_files = 0;
    /* walk versions from the newest down */
    size_t i = l->n_cps;
    while (i > 0) {
        size_t hi = i, lo = i;
        int64_t v = l->cps[i - 1].version;
        while (lo > 0 && l->cps[lo - 1].version == v)
            lo--;
        i = lo;
        if (v > version)
            continue;
        /* prefer a V2 UUID checkpoint, then classic, then a complete multi-part set */
        for (size_t k = lo; k < hi; k++) {
            if (l->cps[k].kind == CP_V2_UUID) {
                out->version = v;
                out->files[0] = &l->cps[k];
                out->n_files = 1;
                return;
            }
        }
        for (size_t k = lo; k < hi; k++) {
            if (l->cps[k].kind == CP_CLASSIC) {
                out->version = v;
                out->files[0] = &l->cps[k];
                out->n_files = 1;
                return;
            }
        }
        /* multi-part: any total T with all parts 1..T present */
        for (size_t k = lo; k < hi; k++) {
            if (l->cps[k].kind != CP_MULTI || l->cps[k].part != 1)
                continue;
            int t = l->cps[k].n_parts;
            if (t > (int)(sizeof out->files / sizeof out->files[0]))
                continue;
            size_t got = 0;
            for (int p = 1; p <= t; p++) {
                for (size_t m = lo; m < hi; m++) {
                    if (l->cps[m].kind == CP_MULTI && l->cps[m].n_parts == t &&
                        l->cps[m].part == p) {
                        out->files[got++] = &l->cps[m];
                        break;
                    }
                }
            }
            if (got == (size_t)t) {
                out->version = v;
                out->n_files = got;
                return;
            }
        }
    }
    out->n_files = 0;
}

/* Whether a warning about @p path's _last_checkpoint was already logged by this process
 * (a table is loaded many times by a stream: one warning each, not one a load). Remembers
 * up to 64 tables by hash; a collision only drops a warning. */
static bool warned_before(const char *path)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t seen[64]; /* 0: empty slot */
    static size_t next;       /* slot the next new table takes (a ring) */
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = path; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    h |= 1; /* never 0, the empty slot */
    bool found = false;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < 64 && !found; i++)
        found = seen[i] == h;
    if (!found) {
        seen[next] = h;
        next = (next + 1) % 64;
    }
    pthread_mutex_unlock(&mu);
    return found;
}

int64_t mcdc_delta__read_last_checkpoint(const char *table)
{
    char *p = mcdc_delta__join(table, "_delta_log/_last_checkpoint");
    if (!p)
        return -1;
    mcdc_buf b = MCDC_BUF_INIT(MCDC_DELTA_MAX_LASTCP_BYTES);
    int64_t v = -1;
    char why[1280] = ""; /* an error message (up to 1024 bytes) or a parse error */
    int rc = mcdc_delta__read_file(&b, p, MCDC_DELTA_MAX_LASTCP_BYTES);
    if (rc == MCDC_ENOTFOUND) {
        /* no hint: the usual case for a young table */
    } else if (rc < 0) {
        snprintf(why, sizeof why, "%s", mcdc_error_last()->message);
    } else if (b.len == 0) {
        snprintf(why, sizeof why, "the file is empty (0 bytes)");
    } else {
        json_error_t jerr;
        json_t *j = json_loadb(b.ptr, b.len, 0, &jerr);
        json_t *ver = j ? json_object_get(j, "version") : NULL;
        if (!j)
            snprintf(why, sizeof why, "not JSON: %s", jerr.text);
        else if (!json_is_integer(ver) || json_integer_value(ver) < 0)
            snprintf(why, sizeof why, "no \"version\" that is a non-negative integer");
        else
            v = (int64_t)json_integer_value(ver);
        json_decref(j);
    }
    mcdc_error_clear();
    /* (L2) _last_checkpoint is only a hint: a bad one is said, then the listing decides */
    if (why[0] && !warned_before(p))
        mcdc_log(MCDC_LOG_WARN, "delta", "%s: ignored, %s; listing _delta_log to find the "
                 "newest checkpoint instead (the next checkpoint rewrites it)", p, why);
    mcdc_buf_dispose(&b);
    free(p);
    return v;
}

int mcdc_delta__parse_json_actions(const char *name, const char *data, size_t len,
                                   mcdc_delta__action_cb cb, void *payload)
{
    int rc = 0;
    const char *p = data ? data : "", *end = p + len;
    size_t line = 0, n_actions = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        const char *s = p;
        while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        if (s < le) {
            mcdc_delta_action a;
            json_error_t jerr;
            json_t *j = json_loadb(p, (size_t)(le - p), 0, &jerr);
            if (!j) {
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: line %zu: %s: %s", name, line,
                                    nl ? "malformed JSON" : "truncated or malformed last line",
                                    jerr.text);
                break;
            }
            rc = mcdc_delta__action_from_json(&a, j);
            json_decref(j);
            if (rc < 0) {
                mcdc_error_prefix("%s: line %zu", name, line);
                mcdc_delta_action_clear(&a);
                break;
            }
            n_actions++;
            rc = cb(&a, payload);
            mcdc_delta_action_clear(&a);
            if (rc != 0) {
                if (rc < 0 && mcdc_error_last()->code == rc &&
                    !strstr(mcdc_error_last()->message, name))
                    mcdc_error_prefix("%s: line %zu", name, line);
                break;
            }
        }
        p = nl ? nl + 1 : end;
    }
    if (rc == 0 && n_actions == 0) {
        /* (L1) a commit (or a JSON checkpoint) always holds at least one action: an empty
         * file is a zeroed or truncated write, never an empty commit to skip */
        rc = len == 0 ? mcdc_error_set(MCDC_ECORRUPT, "%s: the file is empty (0 bytes): a "
                                       "truncated or zeroed write, not a commit", name)
                      : mcdc_error_set(MCDC_ECORRUPT, "%s: the file holds no action (%zu "
                                       "blank bytes): a truncated or zeroed write, not a "
                                       "commit", name, len);
        mcdc_error_hint("restore this file from a backup or a copy of the table; nothing "
                        "reads or commits past a corrupt version");
    }
    return rc;
}

int mcdc_delta__read_json_actions(const char *path, mcdc_delta__action_cb cb, void *payload)
{
    mcdc_buf b = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    int rc = mcdc_delta__read_file(&b, path, MCDC_DELTA_MAX_COMMIT_BYTES);
    if (rc == 0)
        rc = mcdc_delta__parse_json_actions(path, b.ptr, b.len, cb, payload);
    mcdc_buf_dispose(&b);
    return rc;
}
