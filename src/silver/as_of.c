/*
 * silver/as_of.c: a bronze or silver table as the source held it at a position, for
 * `table cat --as-of-lsn` and `--as-of-time` (mcdc/silver.h, "Reading as of a source
 * position").
 *
 * A read as of L includes the commit at L. A time T stands for the largest commit LSN
 * whose commit time is before T, found among bronze's change rows (a commit that touched
 * no row of this table changes nothing here).
 * - Bronze: its rows with _start_lsn <= L (change rows by their commit, snapshot rows by
 *   their stamp).
 * - Silver: each merge commit records the bronze position it covers (userMetadata
 *   silver_apply.applied_lsn: every bronze change at or below it is in that version, none
 *   above). The state at L is the newest silver version whose position C <= L, with
 *   bronze's changes in (C, L] applied over it, the latest per key by rule S1 and deletes
 *   removed.
 * - Silver with soft deletes (scd1, mcdc.silver.soft_deletes): from the version nearest L
 *   (forward or backward), every key changed between its position C and L takes the row
 *   the apply would give it from all its bronze changes up to L (soft_fold, the apply's
 *   fold of states), so a key deleted by L is there with _deleted true, its delete's LSN
 *   and time and its last values. The soft apply keeps no re-snapshot, so bronze's changes
 *   up to L are the key's whole history; refusals are scd1's.
 * Exact or refused (MCDC_EINVAL, naming why and what to do): L beyond what bronze holds
 * (its newest commit's end_lsn), a time after bronze's newest change (commits before it may
 * still be unread), silver without a recorded version at or before L, a snapshot inside
 * (C, L] (the state across it is the snapshot's, which this does not rebuild), or, for
 * silver, an L inside a re-snapshot's gap (check_bronze_gaps: bronze read nothing there).
 * Memory: the bronze changes in (C, L] (soft deletes: every change up to L of the keys changed
 * between C and L); silver's own rows stream file by file.
 */
#include "mcdc/silver.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/pipeline.h"
#include "mcdc/time.h"
#include "silver/common.h"

#define MAX_COLS 4096

/* Refuse with a message and a hint (how to go on); evaluates to MCDC_EINVAL. */
#define REFUSE(hint, ...) (mcdc_error_set(MCDC_EINVAL, __VA_ARGS__), mcdc_error_hint("%s", hint))

/* One bronze change kept for silver: its key bytes, its rank and its values. */
typedef struct change {
    uint8_t    *key;
    size_t      key_len;
    mcdc_silver_rank r;
    size_t      order;   /* position in bronze's scan, the last tie-break */
    int64_t     ts;      /* its _commit_ts (0 when NULL) */
    mcdc_value *row;     /* the output columns (n_out), one allocation with their bytes */
} change;

/* Changes sorted by key, one (the winner by rule S1) per key. */
typedef struct change_set {
    change *v;
    size_t  n;
} change_set;

struct mcdc_silver_as_of_reader {
    bool                 is_silver;
    bool                 is_scd2;     /* silver with history: rows valid at L */
    int                  from_col, to_col;
    mcdc_delta_snapshot *snap;        /* the table read: bronze latest, or silver at a version */
    mcdc_delta_scan     *scan;
    mcdc_schema          out_schema;  /* the first n_out columns of the scan's */
    size_t               n_out;
    mcdc_silver_as_of_result    res;
    /* bronze */
    int                  lsn_col;     /* scan index of _start_lsn */
    /* silver */
    int                  key_cols[64];
    size_t               n_keys;
    change_set           skip;        /* keys whose silver row of that version is not the
                                         state at L (sorted by key) */
    change_set           images;      /* their state at L: the winner per key (sorted) */
    size_t               next_image;  /* after silver's rows: the images left to hand out */
    bool                 silver_done;
    mcdc_buf             kbuf;
    /* silver with soft deletes */
    bool                 is_soft;
    change_set           raw;         /* every bronze change up to L of the keys in skip, in
                                         the layout of bcols (KEEP_ALL), until folded */
    mcdc_schema         *flat;        /* silver's columns, flat (bcols borrow from it) */
    const char         **bnames;      /* silver's columns but the soft-delete flags: what
                                         bronze has */
    mcdc_column         *bcols;
    size_t               n_b;
};

/* ---- small helpers -------------------------------------------------------------------- */

static int lsn_of(mcdc_lsn *out, const mcdc_value *v)
{
    if (v->is_null)
        return MCDC_ENOTFOUND;
    return mcdc_lsn_parse_n(out, v->v.s.ptr, v->v.s.len);
}

/* The names to read: @p names (the output, n_names of them), then each of @p extra not
 * among them. @p at gets the scan index of each extra. */
static int plan_names(const char **all, size_t *n_all, const char *const *names, size_t n_names,
                      const char *const *extra, size_t n_extra, int *at)
{
    if (n_names + n_extra > MAX_COLS)
        return mcdc_error_set(MCDC_EINVAL, "too many columns (%zu)", n_names + n_extra);
    size_t n = 0;
    for (size_t i = 0; i < n_names; i++)
        all[n++] = names[i];
    for (size_t e = 0; e < n_extra; e++) {
        at[e] = -1;
        for (size_t i = 0; i < n; i++)
            if (!strcasecmp(all[i], extra[e])) {
                at[e] = (int)i;
                break;
            }
        if (at[e] < 0) {
            at[e] = (int)n;
            all[n++] = extra[e];
        }
    }
    *n_all = n;
    return 0;
}

/* The LSN up to which bronze holds every commit: its newest commit's batch end_lsn (a
 * bootstrap commit: its snapshot lsn). */
static int bronze_end(const char *bronze_path, bool *has, mcdc_lsn *end)
{
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, bronze_path);
    if (rc < 0)
        return rc;
    *has = false;
    for (size_t i = n; i-- > 0 && !*has;) {
        json_t *j = h[i].user_metadata ? json_loads(h[i].user_metadata, 0, NULL) : NULL;
        const char *l = json_string_value(json_object_get(j, "end_lsn"));
        if (!l)
            l = json_string_value(json_object_get(j, "lsn"));
        if (l && mcdc_lsn_parse(end, l) == 0)
            *has = true;
        else
            mcdc_error_clear();
        json_decref(j);
    }
    mcdc_delta_history_free(h, n);
    return 0;
}

/* Bronze's re-snapshot gaps: a snapshot commit (userMetadata snapshot, lsn S) with data
 * commits below it (a batch's end_lsn, a snapshot's lsn) lost what the source committed
 * between the newest of those and S (ADR 0040). Refuses @p l strictly inside one: silver's
 * state there is not known. */
static int check_bronze_gaps(const char *bronze_path, const mcdc_lsn *l)
{
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, bronze_path);
    if (rc < 0)
        return rc;
    mcdc_lsn *pos = calloc(n ? n : 1, sizeof *pos);
    bool *has = calloc(n ? n : 1, sizeof *has), *snap = calloc(n ? n : 1, sizeof *snap);
    if (!pos || !has || !snap)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *j = h[i].user_metadata ? json_loads(h[i].user_metadata, 0, NULL) : NULL;
        const char *e = json_string_value(json_object_get(j, "end_lsn"));
        snap[i] = !e && json_object_get(j, "snapshot");
        if (!e)
            e = json_string_value(json_object_get(j, "lsn"));
        has[i] = e && mcdc_lsn_parse(&pos[i], e) == 0;
        mcdc_error_clear();
        json_decref(j);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!snap[i] || !has[i] || mcdc_lsn_cmp(l, &pos[i]) >= 0)
            continue;
        bool has_la = false;
        mcdc_lsn la;
        for (size_t k = 0; k < n; k++)
            if (has[k] && mcdc_lsn_cmp(&pos[k], &pos[i]) < 0 && (!has_la || mcdc_lsn_cmp(&pos[k], &la) > 0)) {
                la = pos[k];
                has_la = true;
            }
        if (has_la && mcdc_lsn_cmp(l, &la) > 0) {
            char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN], c[MCDC_LSN_STRLEN];
            rc = REFUSE("read at or before the gap's start, or at or after the re-snapshot",
                        "LSN %s lies in a gap of the source's history: changes after %s up to "
                        "the re-snapshot at %s were lost before they were read",
                        mcdc_lsn_format(a, l), mcdc_lsn_format(b, &la), mcdc_lsn_format(c, &pos[i]));
        }
    }
    free(pos);
    free(has);
    free(snap);
    mcdc_delta_history_free(h, n);
    return rc;
}

static int refuse_beyond(const char *what, const mcdc_lsn *l, bool has_end, const mcdc_lsn *end)
{
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
    if (!has_end)
        return REFUSE("stream at least one batch into bronze first",
                                   "%s: bronze holds no batch yet, so no state is known", what);
    return REFUSE("read at an LSN up to the one bronze holds, or "
                               "after the stream's next batch",
                               "%s: LSN %s is beyond what bronze holds (every commit up to %s)",
                               what, mcdc_lsn_format(a, l), mcdc_lsn_format(b, end));
}

/* A time T: the largest _start_lsn of a change row committed before T. @p any_after tells
 * whether bronze holds a change at or after T (else commits before T may be unread). */
static int resolve_time(const mcdc_delta_snapshot *bronze, int64_t before_us, bool *has,
                        mcdc_lsn *out, bool *any_after, int64_t *newest_us)
{
    static const char *const cols[] = { "_start_lsn", "_operation", "_commit_ts" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = 3;
    mcdc_delta_scan *sc = NULL;
    int rc = mcdc_delta_scan_open(&sc, bronze, &so);
    const mcdc_value *row;
    *has = *any_after = false;
    *newest_us = INT64_MIN;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        rc = 0;
        if (row[1].is_null || row[1].v.i == 0 || row[2].is_null)
            continue;
        if (row[2].v.i > *newest_us)
            *newest_us = row[2].v.i;
        if (row[2].v.i >= before_us) {
            *any_after = true;
            continue;
        }
        mcdc_lsn l;
        if ((rc = lsn_of(&l, &row[0])) < 0)
            break;
        if (!*has || mcdc_lsn_cmp(&l, out) > 0) {
            *out = l;
            *has = true;
        }
    }
    mcdc_delta_scan_free(sc);
    return rc < 0 ? rc : 0;
}

/* ---- silver: the recorded versions and the changes after one -------------------------- */

/* The silver version to start from: the newest whose recorded position is at or below
 * @p l, else the oldest recorded one (its position above l: read backward from it). */
static int silver_version_at(const char *silver_path, const mcdc_lsn *l, int64_t *version,
                             mcdc_lsn *covered)
{
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, silver_path);
    if (rc < 0)
        return rc;
    *version = -1;
    for (size_t i = n; i-- > 0;) {
        mcdc_lsn c;
        if (!mcdc_silver__meta_applied_lsn(h[i].user_metadata, &c))
            continue;
        *version = h[i].version; /* the oldest recorded so far, going back */
        *covered = c;
        if (mcdc_lsn_cmp(&c, l) <= 0)
            break;
    }
    mcdc_delta_history_free(h, n);
    if (*version < 0)
        return REFUSE("apply silver once more (silver versions record their position from "
                      "this release on), or read bronze",
                      "no silver version records the bronze position it covers");
    return 0;
}

/* An scd2 table's recorded re-snapshot gaps (userMetadata silver_apply.resnapshot {lsn S,
 * lost_after}): the source's changes in (lost_after, S) were never read, so no state there
 * is known. Refuses @p l inside one. */
static int check_gaps(const char *silver_path, const mcdc_lsn *l)
{
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, silver_path);
    if (rc < 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *j = h[i].user_metadata ? json_loads(h[i].user_metadata, 0, NULL) : NULL;
        json_t *g = json_object_get(json_object_get(j, "silver_apply"), "resnapshot");
        const char *gs = json_string_value(json_object_get(g, "lsn"));
        const char *ga = json_string_value(json_object_get(g, "lost_after"));
        mcdc_lsn s_, a_;
        if (gs && ga && mcdc_lsn_parse(&s_, gs) == 0 && mcdc_lsn_parse(&a_, ga) == 0 &&
            mcdc_lsn_cmp(l, &a_) > 0 && mcdc_lsn_cmp(l, &s_) < 0) {
            char x[MCDC_LSN_STRLEN];
            rc = REFUSE("read at or before the gap's start, or at or after the re-snapshot",
                        "LSN %s lies in a gap of the source's history: changes after %s up to "
                        "the re-snapshot at %s were lost before they were read",
                        mcdc_lsn_format(x, l), ga, gs);
        } else {
            mcdc_error_clear();
        }
        json_decref(j);
    }
    mcdc_delta_history_free(h, n);
    return rc;
}

static int cmp_rank(const change *a, const change *b)
{
    int c = mcdc_silver_rank_cmp(&a->r, &b->r);
    return c ? c : a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_change(const void *pa, const void *pb)
{
    const change *a = pa, *b = pb;
    int c = mcdc_silver__key_cmp(a->key, a->key_len, b->key, b->key_len);
    return c ? c : cmp_rank(a, b);
}

static void set_free(change_set *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        free(cs->v[i].key);
        free(cs->v[i].row);
    }
    free(cs->v);
    cs->v = NULL;
    cs->n = 0;
}

static const change *set_find(const change_set *cs, const uint8_t *key, size_t len)
{
    size_t lo = 0, hi = cs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const change *c = &cs->v[mid];
        int cmp = mcdc_silver__key_cmp(c->key, c->key_len, key, len);
        if (!cmp)
            return c;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Which of a key's changes load_changes keeps. */
typedef enum { KEEP_LAST, KEEP_FIRST, KEEP_ALL } keep_mode;

/* Bronze's rows in (from, to] (from NULL: from the start), of the keys in @p only (NULL:
 * every key), the winner per key into @p out, sorted by key. Without @p from a snapshot row
 * is a state like any image and @p newest_snapshot gets the newest stamp seen of any key;
 * with it a snapshot row is refused (the state across a snapshot is the snapshot's).
 * @p mode KEEP_FIRST: each key keeps its first change instead of its winner; KEEP_ALL: every
 * change, sorted by key then rank. */
static int load_changes(change_set *out, const mcdc_delta_snapshot *bronze,
                        const char *const *names, size_t n_names, const char *const *keys,
                        size_t n_keys, const mcdc_lsn *from, const mcdc_lsn *to,
                        const change_set *only, bool *has_snapshot, mcdc_lsn *newest_snapshot,
                        keep_mode mode)
{
    const char *extra[64 + 5];
    size_t n_extra = 0;
    extra[n_extra++] = "_start_lsn";
    extra[n_extra++] = "_operation";
    extra[n_extra++] = "_command_id";
    extra[n_extra++] = "_seqval";
    extra[n_extra++] = "_commit_ts";
    for (size_t k = 0; k < n_keys; k++)
        extra[n_extra++] = keys[k];
    const char **all = malloc(MAX_COLS * sizeof *all);
    int at[64 + 5];
    size_t n_all = 0;
    if (!all)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = plan_names(all, &n_all, names, n_names, extra, n_extra, at);
    mcdc_delta_scan *sc = NULL;
    if (rc == 0) {
        mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
        so.columns = all;
        so.n_columns = n_all;
        rc = mcdc_delta_scan_open(&sc, bronze, &so);
    }
    const mcdc_schema *s = rc == 0 ? mcdc_delta_scan_schema(sc) : NULL;
    size_t cap = 0, seen = 0;
    const mcdc_value *row;
    mcdc_buf kb = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        rc = 0;
        seen++;
        mcdc_lsn l;
        if ((rc = lsn_of(&l, &row[at[0]])) < 0) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "bronze: a row without a valid _start_lsn");
            break;
        }
        if ((from && mcdc_lsn_cmp(&l, from) <= 0) || mcdc_lsn_cmp(&l, to) > 0)
            continue;
        int op = row[at[1]].is_null ? -1 : (int)row[at[1]].v.i;
        if (op == 0 && !from && has_snapshot &&
            (!*has_snapshot || mcdc_lsn_cmp(&l, newest_snapshot) > 0)) {
            *newest_snapshot = l;
            *has_snapshot = true;
        }
        if (op == 0 && from) {
            char a[MCDC_LSN_STRLEN];
            rc = REFUSE("read at an LSN at or after the snapshot "
                                     "once silver has applied it, or read bronze",
                                     "a snapshot stamped %s lies between silver's recorded "
                                     "version and the LSN asked for", mcdc_lsn_format(a, &l));
            break;
        }
        if (op < 0 || op > 4) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "bronze: a row with _operation %d", op);
            break;
        }
        mcdc_buf_clear(&kb);
        for (size_t k = 0; k < n_keys && rc == 0; k++)
            rc = mcdc_silver_key_encode(&kb, &s->cols[at[5 + k]], &row[at[5 + k]]);
        if (rc < 0)
            break;
        if (only && !set_find(only, (const uint8_t *)kb.ptr, kb.len))
            continue;
        if (out->n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            change *g = realloc(out->v, nc * sizeof *g);
            if (!g) {
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory holding %zu changes", out->n);
                break;
            }
            out->v = g;
            cap = nc;
        }
        change *c = &out->v[out->n];
        memset(c, 0, sizeof *c);
        if (!(c->key = malloc(kb.len ? kb.len : 1)) ||
            !(c->row = mcdc_silver__values_dup(s->cols, row, NULL, n_names))) {
            free(c->key);
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory holding %zu changes", out->n);
            break;
        }
        memcpy(c->key, kb.ptr, kb.len);
        c->key_len = kb.len;
        c->order = seen;
        c->ts = row[at[4]].is_null ? 0 : row[at[4]].v.i;
        if ((rc = mcdc_silver__rank_of(&c->r, &row[at[0]], &row[at[1]], &row[at[2]], &row[at[3]])) < 0) {
            free(c->key);
            free(c->row);
            break;
        }
        out->n++;
    }
    mcdc_buf_dispose(&kb);
    mcdc_delta_scan_free(sc);
    free(all);
    if (rc < 0)
        return rc;
    /* sort by key then rank; keep each key's last (its winner) */
    if (out->n > 1) /* (qsort of a NULL array is undefined, even of none) */
        qsort(out->v, out->n, sizeof *out->v, cmp_change);
    if (mode == KEEP_ALL)
        return 0;
    bool keep_first = mode == KEEP_FIRST;
    /* one per key: mark first (nothing freed yet, so neighbours stay readable), then compact */
    bool *keep = calloc(out->n ? out->n : 1, sizeof *keep);
    if (!keep)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < out->n; i++) {
        size_t o = keep_first ? i - 1 : i + 1; /* the neighbour that would be kept instead */
        bool alone = keep_first ? i == 0 : i + 1 == out->n;
        keep[i] = alone || out->v[o].key_len != out->v[i].key_len ||
                  memcmp(out->v[o].key, out->v[i].key, out->v[i].key_len) != 0;
    }
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (!keep[i]) {
            free(out->v[i].key);
            free(out->v[i].row);
            continue;
        }
        out->v[w++] = out->v[i];
    }
    free(keep);
    out->n = w;
    return 0;
}

/* @p dst gets the keys of @p src (no rows): the keys whose silver row is replaced. */
static int set_copy_keys(change_set *dst, const change_set *src)
{
    dst->v = calloc(src->n ? src->n : 1, sizeof *dst->v);
    if (!dst->v)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < src->n; i++) {
        if (!(dst->v[i].key = malloc(src->v[i].key_len ? src->v[i].key_len : 1)))
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        memcpy(dst->v[i].key, src->v[i].key, src->v[i].key_len);
        dst->v[i].key_len = src->v[i].key_len;
        dst->n = i + 1;
    }
    return 0;
}

/* Backward: every key changed in (L, C] (@p changed: its first change there) takes its
 * state at L from its winner among bronze's rows up to L (@p at_l). Without one, a first
 * change that inserts says the key was absent at L; a delete or before image says it was
 * there, with an image whose own LSN bronze does not hold: refused. A winner older than the
 * newest snapshot up to L cannot tell whether the snapshot held the key: refused. */
static int check_backward(const change_set *changed, const change_set *at_l, bool has_snap,
                          const mcdc_lsn *newest_snap)
{
    for (size_t i = 0; i < changed->n; i++) {
        const change *w = set_find(at_l, changed->v[i].key, changed->v[i].key_len);
        char a[MCDC_LSN_STRLEN];
        if (!w && changed->v[i].r.op == 2)
            continue;
        if (!w)
            return REFUSE("read at a later LSN (at or after a silver version's position)",
                          "bronze holds no row at or before the LSN asked for of a key "
                          "changed after it, so its state there is not known");
        if (has_snap && w->r.op != 0 && mcdc_lsn_cmp(&w->r.lsn, newest_snap) < 0)
            return REFUSE("read at a later LSN (at or after a silver version's position)",
                          "a key changed after the LSN asked for was last changed before the "
                          "snapshot stamped %s, which may not hold it",
                          mcdc_lsn_format(a, newest_snap));
    }
    return 0;
}

/* ---- soft deletes --------------------------------------------------------------------- */

/* The columns silver --soft-deletes adds that bronze does not have. */
enum { SOFT_DELETED, SOFT_DELETED_LSN, SOFT_DELETED_TS, N_SOFT_FLAGS };
static const char *const soft_flags[N_SOFT_FLAGS] = { "_deleted", "_deleted_lsn", "_deleted_ts" };

static int soft_flag_of(const char *name)
{
    for (int f = 0; f < N_SOFT_FLAGS; f++)
        if (!strcasecmp(name, soft_flags[f]))
            return f;
    return -1;
}

/* The first change of @p cs at or after key (@p key, @p len) (cs sorted by key). */
static size_t lower_bound(const change_set *cs, const uint8_t *key, size_t len)
{
    size_t lo = 0, hi = cs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mcdc_silver__key_cmp(cs->v[mid].key, cs->v[mid].key_len, key, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool same_key(const change *a, const change *b)
{
    return !mcdc_silver__key_cmp(a->key, a->key_len, b->key, b->key_len);
}

/* Backward (the version's position above L): as check_backward, each key changed in
 * (L, C] (@p changed: its first change there) against its last change up to L in @p raw
 * (every change, sorted). */
static int soft_check_backward(const change_set *changed, const change_set *raw, bool has_snap,
                               const mcdc_lsn *newest_snap)
{
    change_set last = { NULL, 0 };
    last.v = calloc(changed->n ? changed->n : 1, sizeof *last.v);
    if (!last.v)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < changed->n; i++) {
        size_t at = lower_bound(raw, changed->v[i].key, changed->v[i].key_len);
        size_t end = at;
        while (end < raw->n && same_key(&raw->v[end], &changed->v[i]))
            end++;
        if (end > at)
            last.v[last.n++] = raw->v[end - 1]; /* borrowed: last.v is freed alone */
    }
    int rc = check_backward(changed, &last, has_snap, newest_snap);
    free(last.v);
    return rc;
}

/* Soft deletes at L: each changed key's one row from all its bronze changes up to L
 * (r->raw, in the layout of r->bnames), as `silver apply --soft-deletes` builds it from
 * those changes (scd2_check.mjs soft is the test's independent oracle): per transaction
 * the key's state after its last change (present: an insert, an after image or a snapshot
 * row; absent: a delete or a before image, with the values it removed); a state equal to
 * the one before it is dropped (the first is compared with absent). No present state: no
 * row. Else the last state's values (deleted: the values its delete removed), _start_lsn
 * and _commit_ts of the last present state, _deleted, and a deleted key's delete LSN and
 * commit time. The rows go into r->images in output layout (@p names, n_out of them). */
static int soft_fold(mcdc_silver_as_of_reader *r, const char *const *names)
{
    size_t n_out = r->n_out;
    int *from = malloc((n_out ? n_out : 1) * sizeof *from);
    mcdc_column *oc = calloc(n_out ? n_out : 1, sizeof *oc);
    mcdc_value *tmp = calloc(n_out ? n_out : 1, sizeof *tmp);
    int *cmp = malloc((r->n_b ? r->n_b : 1) * sizeof *cmp);
    mcdc_column *ccols = calloc(r->n_b ? r->n_b : 1, sizeof *ccols);
    int rc = 0;
    if (!from || !oc || !tmp || !cmp || !ccols)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int lsn_at = -1;
    size_t n_cmp = 0;
    for (size_t j = 0; rc == 0 && j < r->n_b; j++) {
        if (!strcasecmp(r->bnames[j], "_start_lsn"))
            lsn_at = (int)j;
        if (!strcasecmp(r->bnames[j], "_start_lsn") || !strcasecmp(r->bnames[j], "_commit_ts"))
            continue;
        ccols[n_cmp] = r->bcols[j];
        cmp[n_cmp++] = (int)j;
    }
    if (rc == 0 && lsn_at < 0)
        rc = mcdc_error_set(MCDC_ECORRUPT, "silver with soft deletes has no _start_lsn column");
    static const mcdc_type_id flag_type[N_SOFT_FLAGS] = { MCDC_TYPE_BOOLEAN, MCDC_TYPE_STRING,
                                                          MCDC_TYPE_TIMESTAMP_NTZ };
    for (size_t i = 0; rc == 0 && i < n_out; i++) {
        int f = soft_flag_of(names[i]);
        from[i] = f >= 0 ? -1 - f : -1000;
        if (f >= 0) {
            oc[i].type = flag_type[f];
            continue;
        }
        for (size_t j = 0; j < r->n_b && from[i] == -1000; j++)
            if (!strcasecmp(names[i], r->bnames[j])) {
                from[i] = (int)j;
                oc[i] = r->bcols[j];
            }
        if (from[i] == -1000)
            rc = mcdc_error_set(MCDC_EINVAL, "column %s: not a column of the silver table", names[i]);
    }
    /* the captured cells of a change, for the equality of two states */
    mcdc_value *a = calloc(n_cmp ? n_cmp : 1, sizeof *a), *b = calloc(n_cmp ? n_cmp : 1, sizeof *b);
    if (rc == 0 && (!a || !b))
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    size_t cap = 0;
    const change_set *raw = &r->raw;
    for (size_t i = 0; rc == 0 && i < raw->n;) {
        size_t j = i;
        while (j < raw->n && same_key(&raw->v[j], &raw->v[i]))
            j++;
        const change *prev = NULL, *live = NULL;
        bool prev_present = false;
        for (size_t x = i; x < j; x++) {
            if (x + 1 < j && !mcdc_lsn_cmp(&raw->v[x + 1].r.lsn, &raw->v[x].r.lsn))
                continue; /* not the transaction's last change to the key */
            const change *w = &raw->v[x];
            bool present = !(w->r.op == 1 || w->r.op == 3);
            if (!present && !prev_present)
                continue;
            if (present && prev_present) {
                for (size_t c = 0; c < n_cmp; c++) {
                    a[c] = prev->row[cmp[c]];
                    b[c] = w->row[cmp[c]];
                }
                if (mcdc_silver__same_cells(ccols, n_cmp, a, b))
                    continue;
            }
            prev = w;
            prev_present = present;
            if (present)
                live = w;
        }
        if (live) {
            const change *fin = prev;
            for (size_t c = 0; c < n_out; c++) {
                int src = from[c];
                mcdc_value *v = &tmp[c];
                v->is_null = true;
                if (src >= 0) {
                    bool pos = !strcasecmp(r->bnames[src], "_start_lsn") ||
                               !strcasecmp(r->bnames[src], "_commit_ts");
                    *v = (pos ? live : fin)->row[src];
                } else if (-1 - src == SOFT_DELETED) {
                    *v = (mcdc_value){ .is_null = false, .v.b = !prev_present };
                } else if (!prev_present && -1 - src == SOFT_DELETED_LSN) {
                    *v = fin->row[lsn_at];
                } else if (!prev_present && -1 - src == SOFT_DELETED_TS) {
                    *v = (mcdc_value){ .is_null = false, .v.i = fin->ts };
                }
            }
            if (r->images.n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                change *g = realloc(r->images.v, nc * sizeof *g);
                if (!g) {
                    rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                    break;
                }
                r->images.v = g;
                cap = nc;
            }
            change *o = &r->images.v[r->images.n];
            memset(o, 0, sizeof *o);
            o->r.op = 2;
            if (!(o->key = malloc(fin->key_len ? fin->key_len : 1)) ||
                !(o->row = mcdc_silver__values_dup(oc, tmp, NULL, n_out))) {
                free(o->key);
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                break;
            }
            memcpy(o->key, fin->key, fin->key_len);
            o->key_len = fin->key_len;
            r->images.n++;
        }
        i = j;
    }
    free(a);
    free(b);
    free(from);
    free(oc);
    free(tmp);
    free(cmp);
    free(ccols);
    return rc;
}

/* ---- the reader ----------------------------------------------------------------------- */

static int split_keys(char *copy, const char **keys, size_t *n_keys)
{
    *n_keys = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n_keys == 64)
            return mcdc_error_set(MCDC_EINVAL, "silver has more than 64 key columns");
        keys[(*n_keys)++] = t;
    }
    return *n_keys ? 0 : mcdc_error_set(MCDC_EINVAL, "silver records no key columns");
}

int mcdc_silver_as_of_open(mcdc_silver_as_of_reader **out, const char *path, const mcdc_silver_as_of *at,
                    const char *const *columns, size_t n_columns)
{
    *out = NULL;
    if (!at || at->version != 1 || !path)
        return mcdc_error_set(MCDC_EINVAL, "as-of read: bad options");
    mcdc_silver_as_of_reader *r = calloc(1, sizeof *r);
    if (!r)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    r->res.table_version = -1;
    r->kbuf.max = MCDC_BUF_DEFAULT_MAX;
    mcdc_delta_snapshot *latest = NULL, *bronze = NULL;
    const char **names = NULL;
    char *keys_copy = NULL;
    int rc = mcdc_delta_snapshot_open(&latest, path, -1);
    if (rc < 0)
        goto fail;
    const char *kind = mcdc_delta_snapshot_config(latest, "mcdc.kind", "");
    const char *bronze_path;
    if (!strcmp(kind, "bronze")) {
        bronze_path = path;
    } else if (!strcmp(kind, "silver") || mcdc_delta_snapshot_config(latest, "mcdc.silver.keys", NULL)) {
        r->is_silver = true;
        if (!(bronze_path = at->bronze_path)) {
            rc = REFUSE("name its bronze table (--bronze NAME)",
                                     "an as-of read of silver needs its bronze table");
            goto fail;
        }
    } else {
        rc = REFUSE("use --as-of-version for other tables",
                                 "as-of reads by source position are for bronze and silver "
                                 "tables (this one's mcdc.kind is '%s')", *kind ? kind : "unset");
        goto fail;
    }
    if (bronze_path == path) {
        bronze = latest;
        latest = NULL;
    } else if ((rc = mcdc_delta_snapshot_open(&bronze, bronze_path, -1)) < 0) {
        goto fail;
    } else if (strcmp(mcdc_delta_snapshot_config(bronze, "mcdc.kind", ""), "bronze") != 0) {
        rc = REFUSE("name the bronze table silver is applied from",
                                 "%s is not a bronze table", bronze_path);
        goto fail;
    }

    /* the position asked for, and whether bronze can answer it */
    bool has_end = false;
    mcdc_lsn end;
    if ((rc = bronze_end(bronze_path, &has_end, &end)) < 0)
        goto fail;
    mcdc_lsn l;
    if (at->by_time) {
        bool has, any_after;
        int64_t newest;
        if ((rc = resolve_time(bronze, at->before_us, &has, &l, &any_after, &newest)) < 0)
            goto fail;
        if (!any_after) {
            char t[40], n[40];
            rc = REFUSE("read at an earlier time or by LSN, or after "
                                     "the stream has read past the time",
                                     "bronze holds no change at or after %s (its newest is "
                                     "at %s), so commits before that time may still be unread",
                                     mcdc_time_format(t, at->before_us, 3, false),
                                     newest == INT64_MIN ? "none"
                                                         : mcdc_time_format(n, newest, 3, false));
            goto fail;
        }
        if (!has) {
            char t[40];
            rc = REFUSE("read at a later time",
                                     "bronze holds no change committed before %s",
                                     mcdc_time_format(t, at->before_us, 3, false));
            goto fail;
        }
    } else {
        l = at->lsn;
        if (!has_end || mcdc_lsn_cmp(&l, &end) > 0) {
            rc = refuse_beyond("as-of read", &l, has_end, &end);
            goto fail;
        }
    }
    r->res.lsn = l;
    if (r->is_silver && (rc = check_bronze_gaps(bronze_path, &l)) < 0)
        goto fail;

    const mcdc_delta_snapshot *shape = r->is_silver ? latest : bronze;
    if (!(names = malloc(MAX_COLS * sizeof *names))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto fail;
    }
    size_t n_names = 0;
    if (columns) {
        if (n_columns > MAX_COLS) {
            rc = mcdc_error_set(MCDC_EINVAL, "too many columns (%zu)", n_columns);
            goto fail;
        }
        for (size_t i = 0; i < n_columns; i++)
            names[n_names++] = columns[i];
    } else {
        for (size_t i = 0; i < shape->schema->n_fields && n_names < MAX_COLS; i++)
            names[n_names++] = shape->schema->fields[i].name;
    }
    r->n_out = n_names;

    const char *extra[64];
    int pos[64];
    size_t n_extra = 0;
    mcdc_delta_snapshot *table = NULL;
    r->is_scd2 = r->is_silver &&
                 !strcmp(mcdc_delta_snapshot_config(latest, "mcdc.silver.mode", "scd1"), "scd2");
    r->is_soft = r->is_silver && !r->is_scd2 &&
                 !strcmp(mcdc_delta_snapshot_config(latest, "mcdc.silver.soft_deletes", "false"), "true");
    if (!r->is_silver) {
        extra[n_extra++] = "_start_lsn";
        table = bronze;
        bronze = NULL;
        r->res.table_version = table->version;
    } else if (r->is_scd2) {
        /* every version is in the table: the rows valid at L, once silver covers L */
        int64_t v;
        mcdc_lsn covered;
        mcdc_lsn top = { { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF } };
        if ((rc = silver_version_at(path, &top, &v, &covered)) < 0)
            goto fail;
        if (mcdc_lsn_cmp(&covered, &l) < 0) {
            char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
            rc = REFUSE("run silver apply --mode scd2 first, then read",
                        "the scd2 table covers bronze up to %s, not yet LSN %s",
                        mcdc_lsn_format(a, &covered), mcdc_lsn_format(b, &l));
            goto fail;
        }
        if ((rc = check_gaps(path, &l)) < 0)
            goto fail;
        extra[n_extra++] = "_valid_from_lsn";
        extra[n_extra++] = "_valid_to_lsn";
        table = latest;
        latest = NULL;
        r->res.table_version = table->version;
    } else {
        if (!(keys_copy = strdup(mcdc_delta_snapshot_config(latest, "mcdc.silver.keys", "")))) {
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            goto fail;
        }
        const char *keys[64];
        size_t n_keys;
        if ((rc = split_keys(keys_copy, keys, &n_keys)) < 0)
            goto fail;
        int64_t v;
        mcdc_lsn covered;
        if ((rc = silver_version_at(path, &l, &v, &covered)) < 0)
            goto fail;
        if (r->is_soft) {
            /* the keys changed between the version's position C and L take their row at L
             * from all their bronze changes up to L (folded once the scan is open) */
            bool fwd = mcdc_lsn_cmp(&covered, &l) <= 0;
            const mcdc_lsn *lo = fwd ? &covered : &l, *hi = fwd ? &l : &covered;
            if (mcdc_lsn_cmp(lo, hi) < 0 &&
                (rc = load_changes(&r->skip, bronze, NULL, 0, keys, n_keys, lo, hi, NULL, NULL,
                                   NULL, KEEP_FIRST)) < 0)
                goto fail;
            if ((rc = mcdc_delta_schema_to_flat(&r->flat, latest->schema)) < 0)
                goto fail;
            r->bnames = malloc((r->flat->n_cols ? r->flat->n_cols : 1) * sizeof *r->bnames);
            r->bcols = calloc(r->flat->n_cols ? r->flat->n_cols : 1, sizeof *r->bcols);
            if (!r->bnames || !r->bcols) {
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                goto fail;
            }
            for (size_t i = 0; i < r->flat->n_cols; i++)
                if (soft_flag_of(r->flat->cols[i].name) < 0) {
                    r->bcols[r->n_b] = r->flat->cols[i];
                    r->bnames[r->n_b++] = r->flat->cols[i].name;
                }
            bool has_snap = false;
            mcdc_lsn newest_snap;
            if (r->skip.n && (rc = load_changes(&r->raw, bronze, r->bnames, r->n_b, keys, n_keys,
                                                NULL, &l, &r->skip, &has_snap, &newest_snap,
                                                KEEP_ALL)) < 0)
                goto fail;
            if (!fwd && (rc = soft_check_backward(&r->skip, &r->raw, has_snap, &newest_snap)) < 0)
                goto fail;
            r->res.bronze_changes = r->raw.n;
        } else if (mcdc_lsn_cmp(&covered, &l) <= 0) {
            /* forward: the version's rows, then bronze's changes in (C, L] over them */
            if ((rc = load_changes(&r->images, bronze, names, n_names, keys, n_keys, &covered,
                                   &l, NULL, NULL, NULL, KEEP_LAST)) < 0)
                goto fail;
            r->res.bronze_changes = r->images.n;
            if ((rc = set_copy_keys(&r->skip, &r->images)) < 0)
                goto fail;
        } else {
            /* backward: the keys changed in (L, C] take their state at L from bronze's
             * rows up to L (the latest per key; a delete or before image: absent) */
            if ((rc = load_changes(&r->skip, bronze, NULL, 0, keys, n_keys, &l, &covered, NULL,
                                   NULL, NULL, KEEP_FIRST)) < 0)
                goto fail;
            bool has_snap = false;
            mcdc_lsn newest_snap;
            if ((rc = load_changes(&r->images, bronze, names, n_names, keys, n_keys, NULL, &l,
                                   &r->skip, &has_snap, &newest_snap, KEEP_LAST)) < 0)
                goto fail;
            r->res.bronze_changes = r->skip.n;
            if ((rc = check_backward(&r->skip, &r->images, has_snap, &newest_snap)) < 0)
                goto fail;
        }
        if ((rc = mcdc_delta_snapshot_open(&table, path, v)) < 0) {
            mcdc_error_hint("silver version %lld is the state to start from; its files may "
                            "have been vacuumed", (long long)v);
            goto fail;
        }
        r->res.table_version = v;
        for (size_t k = 0; k < n_keys; k++)
            extra[n_extra++] = keys[k];
        r->n_keys = n_keys;
    }
    const char **all = malloc(MAX_COLS * sizeof *all);
    size_t n_all = 0;
    if (!all) {
        mcdc_delta_snapshot_free(table);
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = plan_names(all, &n_all, names, n_names, extra, n_extra, pos)) == 0) {
        mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
        so.columns = all;
        so.n_columns = n_all;
        rc = mcdc_delta_scan_open(&r->scan, table, &so);
    }
    free(all);
    r->snap = table;
    if (rc < 0)
        goto fail;
    if (r->is_scd2) {
        r->from_col = pos[0];
        r->to_col = pos[1];
    } else if (r->is_silver) {
        for (size_t k = 0; k < r->n_keys; k++)
            r->key_cols[k] = pos[k];
    } else {
        r->lsn_col = pos[0];
    }
    const mcdc_schema *s = mcdc_delta_scan_schema(r->scan);
    r->out_schema.cols = s->cols;
    r->out_schema.n_cols = r->n_out;
    if (r->is_soft) {
        if ((rc = soft_fold(r, names)) < 0)
            goto fail;
        set_free(&r->raw);
    }
    free(names);
    free(keys_copy);
    mcdc_delta_snapshot_free(latest);
    mcdc_delta_snapshot_free(bronze);
    *out = r;
    return 0;
fail:
    free(names);
    free(keys_copy);
    mcdc_delta_snapshot_free(latest);
    mcdc_delta_snapshot_free(bronze);
    mcdc_silver_as_of_free(r);
    return rc;
}

const mcdc_schema *mcdc_silver_as_of_schema(const mcdc_silver_as_of_reader *r)
{
    return &r->out_schema;
}

bool mcdc_silver_as_of_is_nested(const mcdc_silver_as_of_reader *r, size_t i)
{
    return mcdc_delta_scan_is_nested(r->scan, i);
}

const mcdc_silver_as_of_result *mcdc_silver_as_of_get_result(const mcdc_silver_as_of_reader *r)
{
    return &r->res;
}

int mcdc_silver_as_of_next(mcdc_silver_as_of_reader *r, const mcdc_value **row)
{
    int rc;
    while (!r->silver_done && (rc = mcdc_delta_scan_next(r->scan, row)) == 1) {
        if (r->is_scd2) {
            mcdc_lsn from, to;
            if (lsn_of(&from, &(*row)[r->from_col]) < 0)
                return mcdc_error_set(MCDC_ECORRUPT, "scd2 silver: a row without a valid _valid_from_lsn");
            if (mcdc_lsn_cmp(&from, &r->res.lsn) > 0)
                continue;
            if (!(*row)[r->to_col].is_null) {
                if (lsn_of(&to, &(*row)[r->to_col]) < 0)
                    return mcdc_error_set(MCDC_ECORRUPT, "scd2 silver: a malformed _valid_to_lsn");
                if (mcdc_lsn_cmp(&to, &r->res.lsn) <= 0)
                    continue;
            }
            return 1;
        }
        if (!r->is_silver) {
            mcdc_lsn l;
            if (lsn_of(&l, &(*row)[r->lsn_col]) < 0)
                return mcdc_error_set(MCDC_ECORRUPT, "bronze: a row without a valid _start_lsn");
            if (mcdc_lsn_cmp(&l, &r->res.lsn) <= 0)
                return 1;
            continue;
        }
        mcdc_buf_clear(&r->kbuf);
        const mcdc_schema *s = mcdc_delta_scan_schema(r->scan);
        for (size_t k = 0; k < r->n_keys; k++)
            if ((rc = mcdc_silver_key_encode(&r->kbuf, &s->cols[r->key_cols[k]],
                                             &(*row)[r->key_cols[k]])) < 0)
                return rc;
        if (!set_find(&r->skip, (const uint8_t *)r->kbuf.ptr, r->kbuf.len))
            return 1;
    }
    if (!r->silver_done) {
        if (rc < 0)
            return rc;
        r->silver_done = true;
    }
    while (r->next_image < r->images.n) {
        const change *c = &r->images.v[r->next_image++];
        if (c->r.op == 0 || c->r.op == 2 || c->r.op == 4) {
            *row = c->row;
            return 1;
        }
    }
    return 0;
}

void mcdc_silver_as_of_free(mcdc_silver_as_of_reader *r)
{
    if (!r)
        return;
    mcdc_delta_scan_free(r->scan);
    mcdc_delta_snapshot_free(r->snap);
    set_free(&r->skip);
    set_free(&r->images);
    set_free(&r->raw);
    free(r->bnames);
    free(r->bcols);
    mcdc_schema_free(r->flat);
    mcdc_buf_dispose(&r->kbuf);
    free(r);
}

int mcdc_silver_as_of_bronze_name(char **out, const char *silver_path)
{
    *out = NULL;
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, silver_path);
    if (rc < 0)
        return rc;
    for (size_t i = n; i-- > 0 && !*out;) {
        json_t *j = h[i].user_metadata ? json_loads(h[i].user_metadata, 0, NULL) : NULL;
        const char *b = json_string_value(json_object_get(json_object_get(j, "silver_apply"),
                                                          "bronze"));
        if (b && !(*out = strdup(b)))
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        json_decref(j);
    }
    mcdc_delta_history_free(h, n);
    return rc;
}
