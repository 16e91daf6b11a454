/*
 * silver/scd2.c: silver with history (`silver apply --mode scd2`, mcdc_silver_mode) and
 * silver with soft deletes (`--soft-deletes`).
 *
 * One row per version of a key: the captured columns, then _valid_from_lsn, _valid_to_lsn
 * (NULL for the current version), _valid_from_ts, _valid_to_ts (commit times, UTC) and
 * _is_current. A version is a transaction's effect on a key: the key's state after the
 * last of the transaction's changes to it by rule S1 (present with the image of an insert,
 * an update's after image or a snapshot row; absent after a delete or an update that moved
 * it away). A state equal to the one before (an update to the same values, a key inserted
 * and deleted in one transaction) opens no version; an absent state closes the current one.
 *
 * One call (each step durable before the next, as the scd1 apply):
 *   lock -> bronze's verdict, silver's position -> pin bronze -> the states of the keys
 *   changed after the position -> find their current versions in the files whose key
 *   range (tags) holds them -> one commit: those files rewritten with the versions
 *   closed, one new file of the opened versions, the position in its userMetadata ->
 *   [silver.after_merge] -> the control row's applied_lsn -> [silver.after_position] ->
 *   the verdict, capped at bronze's.
 * The position is read from silver's newest commit as well as the control row, so a crash
 * after the commit never applies a change twice; before it, nothing was written.
 * Only files holding a current version of a changed key are rewritten; versions opened go
 * into a new file sorted by key, tagged with its key range.
 * Across a re-snapshot (a whole snapshot commit of bronze at S newer than the position,
 * after a data loss; docs/decisions/0040-scd2-across-a-resnapshot.md), every key takes
 * its snapshot row, or absence, as its state at S: the states before S, then that one, then
 * the changes after S. A current version the snapshot disagrees with or lacks is closed at
 * S (every file is read for them), one it agrees with stays open, a key new in it opens at
 * S; the merge commit records the gap (lost_after, S) for as-of reads. Two re-snapshots in
 * one apply, a chunked one, and any re-snapshot under soft deletes are refused.
 * Memory: the bronze changes after the position, and one rewritten file at a time.
 *
 * Soft deletes (scd1 with --soft-deletes) use the same machinery with one row per key: the
 * key's last state after the changes (live: its image, _deleted false; deleted: the values
 * its delete removed, _deleted true, _deleted_lsn/_deleted_ts of the delete), replacing
 * silver's row of the key in its file, or in a new file for a key silver does not hold.
 */
#include "mcdc/silver.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/delta.h"
#include "mcdc/failpoint.h"
#include "mcdc/fs.h"
#include "mcdc/pipeline.h"
#include "mcdc/storage.h"
#include "mcdc/time.h"
#include "silver/common.h"
#include "silver/datafile.h"
#include "silver/rewrite.h"
#include "silver/scd2.h"

#define CONF_KEYS "mcdc.silver.keys"
#define CONF_MODE "mcdc.silver.mode"
#define CONF_SOFT "mcdc.silver.soft_deletes"
#define LOCK_NAME "_mcdc_silver_apply.lock"

static const char *const hist_cols[] = { "_valid_from_lsn", "_valid_to_lsn", "_valid_from_ts",
                                         "_valid_to_ts", "_is_current" };
enum { H_FROM, H_TO, H_FROM_TS, H_TO_TS, H_CUR, N_HIST };
/* Soft deletes (scd1 with --soft-deletes): one row per key, a deleted one kept. */
static const char *const soft_cols[] = { "_start_lsn", "_commit_ts", "_deleted", "_deleted_lsn",
                                         "_deleted_ts" };
enum { S_LSN, S_TS, S_DEL, S_DEL_LSN, S_DEL_TS, N_SOFT };

/* ---- one change, one state ------------------------------------------------------------ */

typedef struct chg {
    uint8_t    *key;
    size_t      key_len;
    mcdc_silver_rank r;
    int64_t     ts;
    size_t      order;    /* position in bronze's scan, the last tie-break */
    mcdc_value *vals;     /* the captured columns (n_cap), one allocation */
} chg;

/* A key's state after one transaction. vals NULL: absent (gone: the row it removed). */
typedef struct state {
    mcdc_lsn          lsn;
    int64_t           ts;
    const mcdc_value *vals;
    const mcdc_value *gone;
} state;

/* A changed key: its states in order, and what silver holds of it. */
typedef struct keyed {
    const uint8_t *key;
    size_t         key_len;
    state         *st;
    size_t         n_st;
    size_t         first;      /* the first state to apply (after those equal to current) */
    bool           has_cur;    /* silver holds a current version */
    bool           close;      /* ...which st[first] closes */
    bool           placed;     /* soft: its row was written (replacing silver's) */
} keyed;

typedef struct scd2 {
    const mcdc_silver_apply_options *o;
    mcdc_silver_apply_result *res;
    mcdc_delta_snapshot *bronze, *silver;
    mcdc_schema         *cap;       /* captured columns (bronze's, in order) */
    mcdc_schema         *out;       /* silver's: cap then the history columns */
    int                  key_idx[64];
    size_t               n_keys;
    chg                 *ch;
    size_t               n_ch;
    keyed               *k;
    size_t               n_k;
    mcdc_delta_file     *removes;   /* borrowed from the silver snapshot */
    size_t               n_removes;
    mcdc_delta_file     *adds;
    size_t               n_adds, cap_adds;
    uint64_t             opened, closed;
    bool                 soft;      /* scd1 with soft deletes, not history */
    /* a re-snapshot newer than the table's position (find_resnapshot; scd2 only) */
    bool                 has_resnap;
    mcdc_lsn             resnap;       /* its stamp S: every key's state there is its row */
    int64_t              resnap_ts;    /* S's commit time */
    mcdc_lsn             lost_after;   /* the last position bronze read before it (the gap
                                          is (lost_after, S)) */
} scd2;

static int rank_cmp(const chg *a, const chg *b)
{
    int c = mcdc_silver_rank_cmp(&a->r, &b->r);
    return c ? c : a->order < b->order ? -1 : a->order > b->order;
}

static int chg_cmp(const void *pa, const void *pb)
{
    const chg *a = pa, *b = pb;
    int c = mcdc_silver__key_cmp(a->key, a->key_len, b->key, b->key_len);
    return c ? c : rank_cmp(a, b);
}

static void ctx_free(scd2 *c)
{
    for (size_t i = 0; i < c->n_ch; i++) {
        free(c->ch[i].key);
        free(c->ch[i].vals);
    }
    free(c->ch);
    for (size_t i = 0; i < c->n_k; i++)
        free(c->k[i].st);
    free(c->k);
    for (size_t i = 0; i < c->n_adds; i++)
        mcdc_delta_file_clear(&c->adds[i]);
    free(c->adds);
    free(c->removes);
    mcdc_schema_free(c->cap);
    mcdc_schema_free(c->out);
    mcdc_delta_snapshot_free(c->bronze);
    mcdc_delta_snapshot_free(c->silver);
}

/* ---- schemas and the table ------------------------------------------------------------ */

static int make_schemas(scd2 *c)
{
    mcdc_schema *flat = NULL;
    int rc = mcdc_delta_schema_to_flat(&flat, c->bronze->schema);
    if (rc < 0)
        return rc;
    c->cap = mcdc_schema_new();
    c->out = mcdc_schema_new();
    if (!c->cap || !c->out)
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    for (size_t i = 0; rc == 0 && i < flat->n_cols; i++) {
        const mcdc_column *col = &flat->cols[i];
        if (mcdc_silver_is_bronze_meta(col->name))
            continue;
        if ((rc = mcdc_schema_add(c->cap, col->name, col->type, col->precision, col->scale, true)) == 0)
            rc = mcdc_schema_add(c->out, col->name, col->type, col->precision, col->scale, true);
    }
    static const mcdc_type_id ht[N_HIST] = { MCDC_TYPE_STRING, MCDC_TYPE_STRING,
                                             MCDC_TYPE_TIMESTAMP_NTZ, MCDC_TYPE_TIMESTAMP_NTZ,
                                             MCDC_TYPE_BOOLEAN };
    static const mcdc_type_id st[N_SOFT] = { MCDC_TYPE_STRING, MCDC_TYPE_TIMESTAMP_NTZ,
                                             MCDC_TYPE_BOOLEAN, MCDC_TYPE_STRING,
                                             MCDC_TYPE_TIMESTAMP_NTZ };
    for (int h = 0; rc == 0 && !c->soft && h < N_HIST; h++)
        rc = mcdc_schema_add(c->out, hist_cols[h], ht[h], 0, 0, h != H_CUR);
    for (int h = 0; rc == 0 && c->soft && h < N_SOFT; h++)
        rc = mcdc_schema_add(c->out, soft_cols[h], st[h], 0, 0, h != S_DEL);
    mcdc_schema_free(flat);
    for (size_t k = 0; rc == 0 && k < c->o->n_keys; k++) {
        int f = mcdc_schema_find(c->cap, c->o->keys[k]);
        if (f < 0 || k == 64)
            return mcdc_error_set(MCDC_EINVAL, "key %s: not a captured column of %s",
                                  c->o->keys[k], c->o->bronze_name);
        c->key_idx[k] = f;
        c->n_keys = k + 1;
    }
    return rc;
}

/* Create silver (mode scd2), or check that the one there is scd2 with our columns. */
static int prepare_silver(scd2 *c)
{
    const mcdc_silver_apply_options *o = c->o;
    int rc = mcdc_delta_snapshot_open(&c->silver, o->silver_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        mcdc_buf keys = MCDC_BUF_INIT(1 << 16);
        rc = 0;
        for (size_t i = 0; rc == 0 && i < o->n_keys; i++)
            rc = mcdc_buf_printf(&keys, "%s%s", i ? "," : "", o->keys[i]);
        mcdc_delta_map conf = { NULL, 0 };
        if (rc == 0 && (rc = mcdc_delta_map_set(&conf, CONF_KEYS, keys.ptr)) == 0 &&
            (rc = mcdc_delta_map_set(&conf, CONF_MODE, c->soft ? "scd1" : "scd2")) == 0)
            rc = mcdc_delta_map_set(&conf, "mcdc.kind", "silver");
        if (rc == 0 && c->soft)
            rc = mcdc_delta_map_set(&conf, CONF_SOFT, "true");
        if (rc == 0)
            rc = mcdc_delta_create(o->silver_path, c->out, NULL, 0, &conf, NULL);
        mcdc_delta_map_clear(&conf);
        mcdc_buf_dispose(&keys);
        if (rc == 0)
            rc = mcdc_delta_snapshot_open(&c->silver, o->silver_path, -1);
    }
    if (rc < 0)
        return rc;
    const char *mode = mcdc_delta_snapshot_config(c->silver, CONF_MODE, "scd1");
    bool soft = !strcmp(mcdc_delta_snapshot_config(c->silver, CONF_SOFT, "false"), "true");
    if (strcmp(mode, c->soft ? "scd1" : "scd2") != 0 || soft != c->soft) {
        mcdc_error_set(MCDC_EINVAL, "%s: silver was built %s, not %s", o->silver_name,
                       soft ? "with soft deletes" : !strcmp(mode, "scd2") ? "with mode scd2" : "with hard deletes",
                       c->soft ? "with soft deletes" : "with mode scd2");
        return mcdc_error_hint("apply as it was built, or into a new silver table");
    }
    mcdc_schema *have = NULL;
    if ((rc = mcdc_delta_schema_to_flat(&have, c->silver->schema)) < 0)
        return rc;
    bool same = have->n_cols == c->out->n_cols;
    for (size_t i = 0; same && i < have->n_cols; i++)
        same = !strcasecmp(have->cols[i].name, c->out->cols[i].name) &&
               have->cols[i].type == c->out->cols[i].type;
    mcdc_schema_free(have);
    if (!same) {
        mcdc_error_set(MCDC_ESCHEMA, "%s: the scd2 table's columns differ from bronze's "
                       "captured columns plus the history columns", o->silver_name);
        return mcdc_error_hint("bronze's schema changed; apply into a new scd2 table");
    }
    return 0;
}

/* ---- the position --------------------------------------------------------------------- */

/* The newest silver commit's recorded position, or none. */
static int committed_position(const char *path, bool *has, mcdc_lsn *out)
{
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, path);
    if (rc < 0)
        return rc;
    *has = false;
    for (size_t i = n; i-- > 0 && !*has;) {
        *has = mcdc_silver__meta_applied_lsn(h[i].user_metadata, out);
    }
    mcdc_delta_history_free(h, n);
    return 0;
}

/* ---- a re-snapshot ------------------------------------------------------------------- */

/* A snapshot commit of bronze (userMetadata {"snapshot", "lsn", "commit_ts", ...}): its S. */
static bool meta_snapshot(json_t *j, mcdc_lsn *lsn, int64_t *ts_us)
{
    const char *l = json_string_value(json_object_get(j, "lsn"));
    const char *t = json_string_value(json_object_get(j, "commit_ts"));
    if (!json_object_get(j, "snapshot") || !l || mcdc_lsn_parse(lsn, l) < 0) {
        mcdc_error_clear();
        return false;
    }
    *ts_us = 0;
    if (t && mcdc_time_parse(ts_us, t) < 0)
        mcdc_error_clear();
    return true;
}

/* A data commit of bronze: the position it brought bronze to (a batch's end_lsn, a
 * snapshot's lsn). */
static bool meta_position(json_t *j, mcdc_lsn *out)
{
    const char *e = json_string_value(json_object_get(j, "end_lsn"));
    if (!e)
        e = json_string_value(json_object_get(j, "lsn"));
    if (!e || mcdc_lsn_parse(out, e) < 0) {
        mcdc_error_clear();
        return false;
    }
    return true;
}

/* The re-snapshot this apply crosses (ADR 0040): a snapshot commit of the pinned bronze
 * newer than the table's position (without one: with a data commit of bronze below it, so
 * not the snapshot bronze began with), and the last position bronze read before it (the
 * gap is between). Two such snapshots, or one consistent only from a later LSN (read while
 * the source changed), are refused. */
static int find_resnapshot(scd2 *c, bool has_pos, const mcdc_lsn *pos)
{
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, c->o->bronze_path);
    if (rc < 0)
        return rc;
    json_t **meta = calloc(n ? n : 1, sizeof *meta);
    if (!meta) {
        mcdc_delta_history_free(h, n);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    bool has_low = false;
    mcdc_lsn low, l;
    for (size_t i = 0; i < n && h[i].version <= c->bronze->version; i++) {
        meta[i] = h[i].user_metadata ? json_loads(h[i].user_metadata, 0, NULL) : NULL;
        if (meta[i] && meta_position(meta[i], &l) && (!has_low || mcdc_lsn_cmp(&l, &low) < 0)) {
            low = l;
            has_low = true;
        }
    }
    const mcdc_lsn *base = has_pos ? pos : has_low ? &low : NULL;
    for (size_t i = 0; rc == 0 && base && i < n; i++) {
        int64_t ts;
        if (!meta[i] || !meta_snapshot(meta[i], &l, &ts) || mcdc_lsn_cmp(&l, base) <= 0)
            continue;
        char a[MCDC_LSN_STRLEN];
        const char *cl = json_string_value(json_object_get(meta[i], "consistent_lsn"));
        mcdc_lsn cons;
        bool later = cl && mcdc_lsn_parse(&cons, cl) == 0 && mcdc_lsn_cmp(&cons, &l) != 0;
        mcdc_error_clear();
        if (later) {
            rc = mcdc_error_set(MCDC_EUNSUPPORTED, "%s: bronze's re-snapshot at %s is consistent "
                                "only from a later LSN, so no key's state at one position is known",
                                c->o->silver_name, mcdc_lsn_format(a, &l));
            mcdc_error_hint("apply into a new scd2 table, built from the re-snapshot");
        } else if (c->has_resnap && mcdc_lsn_cmp(&l, &c->resnap) != 0) {
            rc = mcdc_error_set(MCDC_EUNSUPPORTED, "%s: bronze holds two re-snapshots newer than "
                                "the scd2 table's position", c->o->silver_name);
            mcdc_error_hint("apply after each re-snapshot; now, apply into a new scd2 table");
        } else {
            c->has_resnap = true;
            c->resnap = l;
            c->resnap_ts = ts;
        }
    }
    bool has_la = false;
    for (size_t i = 0; rc == 0 && c->has_resnap && i < n; i++)
        if (meta[i] && meta_position(meta[i], &l) && mcdc_lsn_cmp(&l, &c->resnap) < 0 &&
            (!has_la || mcdc_lsn_cmp(&l, &c->lost_after) > 0)) {
            c->lost_after = l;
            has_la = true;
        }
    if (rc < 0)
        c->has_resnap = false;
    for (size_t i = 0; i < n; i++)
        json_decref(meta[i]);
    free(meta);
    mcdc_delta_history_free(h, n);
    return rc;
}

/* ---- bronze's changes into states ----------------------------------------------------- */

static int read_changes(scd2 *c, bool has_pos, const mcdc_lsn *pos)
{
    static const char *const meta[] = { "_start_lsn", "_operation", "_command_id", "_seqval",
                                        "_commit_ts", "_capture_instance" };
    size_t n_cap = c->cap->n_cols, n_all = n_cap + 6;
    const char **names = malloc(n_all * sizeof *names);
    int *map = malloc(n_cap * sizeof *map);
    if (!names || !map) {
        free(names);
        free(map);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    for (size_t i = 0; i < n_cap; i++) {
        names[i] = c->cap->cols[i].name;
        map[i] = (int)i;
    }
    for (size_t i = 0; i < 6; i++)
        names[n_cap + i] = meta[i];
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = names;
    so.n_columns = n_all;
    mcdc_delta_scan *sc = NULL;
    int rc = mcdc_delta_scan_open(&sc, c->bronze, &so);
    const mcdc_value *r;
    size_t cap = 0, seen = 0;
    mcdc_buf kb = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        seen++;
        c->res->bronze_rows_read++;
        const mcdc_value *m = &r[n_cap];
        mcdc_lsn l;
        if (m[0].is_null || mcdc_lsn_parse_n(&l, m[0].v.s.ptr, m[0].v.s.len) < 0 || m[1].is_null) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "bronze: a row without a valid _start_lsn or _operation");
            break;
        }
        int op = (int)m[1].v.i;
        if (has_pos && mcdc_lsn_cmp(&l, pos) <= 0)
            continue;
        if (op == 0 && c->has_resnap && !mcdc_lsn_cmp(&l, &c->resnap)) {
            /* a row of the re-snapshot: the key's state at S (build_states) */
        } else if (op == 0 && has_pos) {
            char a[MCDC_LSN_STRLEN];
            rc = mcdc_error_set(MCDC_EUNSUPPORTED, "%s: bronze holds a snapshot (stamped %s) "
                                "newer than what the table was built from%s",
                                c->o->silver_name, mcdc_lsn_format(a, &l),
                                c->soft ? "" : ", and not a whole re-snapshot's");
            mcdc_error_hint(c->soft ? "soft deletes are not kept across a re-snapshot: apply into a new table"
                                    : "history across a chunked re-snapshot is not kept: apply into a new scd2 table");
            break;
        }
        if (op < 0 || op > 4) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "bronze: a row with _operation %d", op);
            break;
        }
        bool ours = false;
        for (size_t i = 0; !ours && i < c->o->n_capture_instances; i++)
            ours = !m[5].is_null && strlen(c->o->capture_instances[i]) == m[5].v.s.len &&
                   strncasecmp(c->o->capture_instances[i], m[5].v.s.ptr, m[5].v.s.len) == 0;
        if (!ours) {
            rc = mcdc_error_set(MCDC_EINVAL, "bronze holds a row of capture instance '%.*s', not "
                                "of the one given", m[5].is_null ? 4 : (int)m[5].v.s.len,
                                m[5].is_null ? "NULL" : m[5].v.s.ptr);
            break;
        }
        if (c->n_ch == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            chg *g = realloc(c->ch, nc * sizeof *g);
            if (!g) {
                rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory holding %zu changes", c->n_ch);
                break;
            }
            c->ch = g;
            cap = nc;
        }
        chg *x = &c->ch[c->n_ch];
        memset(x, 0, sizeof *x);
        mcdc_buf_clear(&kb);
        for (size_t k = 0; rc == 0 && k < c->n_keys; k++)
            rc = mcdc_silver_key_encode(&kb, &c->cap->cols[c->key_idx[k]], &r[c->key_idx[k]]);
        if (rc < 0)
            break;
        if (!(x->key = malloc(kb.len ? kb.len : 1)) || !(x->vals = mcdc_silver__values_dup(c->cap->cols, r, map, n_cap))) {
            free(x->key);
            rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory holding %zu changes", c->n_ch);
            break;
        }
        memcpy(x->key, kb.ptr, kb.len);
        x->key_len = kb.len;
        x->ts = m[4].is_null ? 0 : m[4].v.i;
        x->order = seen;
        if ((rc = mcdc_silver__rank_of(&x->r, &m[0], &m[1], &m[2], &m[3])) < 0) {
            free(x->key);
            free(x->vals);
            break;
        }
        c->n_ch++;
    }
    mcdc_buf_dispose(&kb);
    mcdc_delta_scan_free(sc);
    free(names);
    free(map);
    return rc < 0 ? rc : 0;
}

/* Append state @p s to @p k's, unless it equals the one before (an absent one: always
 * first, to close silver's current version). */
static void push_state(const scd2 *c, keyed *k, const state *s)
{
    const state *prev = k->n_st ? &k->st[k->n_st - 1] : NULL;
    if (prev && ((!prev->vals && !s->vals) ||
                 (prev->vals && s->vals &&
                  mcdc_silver__same_cells(c->cap->cols, c->cap->n_cols, prev->vals, s->vals))))
        return;
    k->st[k->n_st++] = *s;
}

/* Group the changes by key and transaction into states; equal neighbours collapse. Across
 * a re-snapshot every key changed gets a state at S: its snapshot row, or absent. */
static int build_states(scd2 *c)
{
    if (c->n_ch > 1) /* (qsort of a NULL array is undefined, even of none) */
        qsort(c->ch, c->n_ch, sizeof *c->ch, chg_cmp);
    size_t n_keys = 0;
    for (size_t i = 0; i < c->n_ch; i++)
        if (i == 0 || mcdc_silver__key_cmp(c->ch[i].key, c->ch[i].key_len, c->ch[i - 1].key, c->ch[i - 1].key_len))
            n_keys++;
    if (!(c->k = calloc(n_keys ? n_keys : 1, sizeof *c->k)))
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    for (size_t i = 0; i < c->n_ch;) {
        size_t j = i;
        while (j < c->n_ch && !mcdc_silver__key_cmp(c->ch[j].key, c->ch[j].key_len, c->ch[i].key, c->ch[i].key_len))
            j++;
        keyed *k = &c->k[c->n_k++];
        k->key = c->ch[i].key;
        k->key_len = c->ch[i].key_len;
        if (!(k->st = calloc(j - i + 1, sizeof *k->st)))
            return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        /* across a re-snapshot the key's state at S is its snapshot row, or absent */
        bool at_s = !c->has_resnap;
        for (size_t x = i; x <= j; x++) {
            if (!at_s && (x == j || mcdc_lsn_cmp(&c->ch[x].r.lsn, &c->resnap) > 0)) {
                at_s = true;
                push_state(c, k, &(state){ c->resnap, c->resnap_ts, NULL, NULL });
            }
            if (x == j)
                break;
            if (x + 1 < j && mcdc_lsn_cmp(&c->ch[x + 1].r.lsn, &c->ch[x].r.lsn) == 0)
                continue; /* not the transaction's last change to the key */
            const chg *w = &c->ch[x];
            if (!at_s && !mcdc_lsn_cmp(&w->r.lsn, &c->resnap))
                at_s = true; /* its snapshot row */
            const mcdc_value *v = (w->r.op == 1 || w->r.op == 3) ? NULL : w->vals;
            push_state(c, k, &(state){ w->r.lsn, w->ts, v, v ? NULL : w->vals }); /* absent first: closes silver's */
        }
        i = j;
    }
    return 0;
}

static keyed *find_keyed(scd2 *c, const uint8_t *key, size_t len)
{
    size_t lo = 0, hi = c->n_k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = mcdc_silver__key_cmp(c->k[mid].key, c->k[mid].key_len, key, len);
        if (!cmp)
            return &c->k[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- silver's files ------------------------------------------------------------------- */

/* Whether file @p f may hold a changed key (its key-range tags, when it has them). */
static bool may_hold(scd2 *c, const mcdc_delta_file *f)
{
    if (c->has_resnap)
        return true; /* every current version meets the snapshot */
    const char *lo = mcdc_delta_map_get(&f->tags, MCDC_SILVER_TAG_KEY_MIN, NULL);
    const char *hi = mcdc_delta_map_get(&f->tags, MCDC_SILVER_TAG_KEY_MAX, NULL);
    uint8_t *a = NULL, *b = NULL;
    size_t al = 0, bl = 0;
    if (!lo || !hi || !(a = mcdc_silver__unhex(lo, &al)) || !(b = mcdc_silver__unhex(hi, &bl))) {
        free(a);
        return true;
    }
    /* the first changed key at or above lo */
    size_t l = 0, h = c->n_k;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (mcdc_silver__key_cmp(c->k[mid].key, c->k[mid].key_len, a, al) < 0)
            l = mid + 1;
        else
            h = mid;
    }
    bool may = l < c->n_k && mcdc_silver__key_cmp(c->k[l].key, c->k[l].key_len, b, bl) <= 0;
    free(a);
    free(b);
    return may;
}

static int open_one(mcdc_delta_scan **sc, mcdc_delta_snapshot *view, mcdc_delta_file *arr,
                    const mcdc_delta_snapshot *table, const mcdc_delta_file *f)
{
    *view = *table;
    arr[0] = *f;
    view->files = arr;
    view->n_files = 1;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    return mcdc_delta_scan_open(sc, view, &so);
}

static int row_key(scd2 *c, mcdc_buf *kb, const mcdc_value *row)
{
    mcdc_buf_clear(kb);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < c->n_keys; k++)
        rc = mcdc_silver_key_encode(kb, &c->out->cols[c->key_idx[k]], &row[c->key_idx[k]]);
    return rc;
}

/* A new data file, the smallest and largest key of its rows going into its tags. */
typedef struct outfile {
    mcdc_silver_datafile *f;
    mcdc_buf              lo, hi;
    bool                  any;
} outfile;

static int out_put(scd2 *c, outfile *of, const mcdc_value *row, const uint8_t *key, size_t key_len)
{
    int rc = 0;
    if (!of->f && (rc = mcdc_silver_datafile_open(&of->f, c->o->silver_path, c->out)) < 0)
        return rc;
    if (!of->any) {
        of->lo = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
        of->hi = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
        if ((rc = mcdc_buf_put(&of->lo, key, key_len)) < 0)
            return rc;
        of->any = true;
    }
    if (mcdc_silver__key_cmp(key, key_len, (const uint8_t *)of->lo.ptr, of->lo.len) < 0) {
        mcdc_buf_clear(&of->lo);
        if ((rc = mcdc_buf_put(&of->lo, key, key_len)) < 0)
            return rc;
    }
    if (!of->hi.len || mcdc_silver__key_cmp(key, key_len, (const uint8_t *)of->hi.ptr, of->hi.len) > 0) {
        mcdc_buf_clear(&of->hi);
        if ((rc = mcdc_buf_put(&of->hi, key, key_len)) < 0)
            return rc;
    }
    return mcdc_silver_datafile_write(of->f, row);
}

static int out_close(scd2 *c, outfile *of)
{
    int rc = 0;
    if (of->f) {
        if (c->n_adds == c->cap_adds) {
            size_t nc = c->cap_adds ? c->cap_adds * 2 : 8;
            mcdc_delta_file *g = realloc(c->adds, nc * sizeof *g);
            if (!g)
                rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
            else {
                c->adds = g;
                c->cap_adds = nc;
            }
        }
        mcdc_delta_file *f = rc == 0 ? &c->adds[c->n_adds] : NULL;
        if (rc == 0 && (rc = mcdc_silver_datafile_close(of->f, f)) == 0) {
            c->n_adds++;
            char *lo = mcdc_silver__hex_of((const uint8_t *)of->lo.ptr, of->lo.len);
            char *hi = mcdc_silver__hex_of((const uint8_t *)of->hi.ptr, of->hi.len);
            if (!lo || !hi)
                rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
            if (rc == 0 && (rc = mcdc_delta_map_set(&f->tags, MCDC_SILVER_TAG_KEY_MIN, lo)) == 0)
                rc = mcdc_delta_map_set(&f->tags, MCDC_SILVER_TAG_KEY_MAX, hi);
            free(lo);
            free(hi);
        }
        mcdc_silver_datafile_free(of->f);
        of->f = NULL;
    }
    mcdc_buf_dispose(&of->lo);
    mcdc_buf_dispose(&of->hi);
    of->any = false;
    return rc;
}

/* Soft deletes: the one row of key @p k after its states (from k->first on), over
 * silver's row @p have (NULL: silver holds none). false: nothing to write (a key that never
 * existed outside a transaction). */
static bool soft_row(scd2 *c, const keyed *k, const mcdc_value *have, mcdc_value *row,
                     char (*t)[MCDC_LSN_STRLEN])
{
    size_t n_cap = c->cap->n_cols;
    const state *fin = &k->st[k->n_st - 1];
    const state *live = NULL; /* the last present state */
    for (size_t i = k->n_st; i-- > k->first;)
        if (k->st[i].vals) {
            live = &k->st[i];
            break;
        }
    if (!fin->vals && !live && !have)
        return false;
    memcpy(row, fin->vals ? fin->vals : fin->gone, n_cap * sizeof *row);
    for (int h = 0; h < N_SOFT; h++)
        row[n_cap + h].is_null = true;
    if (live) {
        mcdc_lsn_format(t[0], &live->lsn);
        row[n_cap + S_LSN] = (mcdc_value){ .is_null = false, .v.s = { t[0], strlen(t[0]) } };
        row[n_cap + S_TS] = (mcdc_value){ .is_null = false, .v.i = live->ts };
    } else if (have) { /* deleted without a new image: its last one's position stays */
        row[n_cap + S_LSN] = have[n_cap + S_LSN];
        row[n_cap + S_TS] = have[n_cap + S_TS];
    }
    row[n_cap + S_DEL] = (mcdc_value){ .is_null = false, .v.b = !fin->vals };
    if (!fin->vals) {
        mcdc_lsn_format(t[1], &fin->lsn);
        row[n_cap + S_DEL_LSN] = (mcdc_value){ .is_null = false, .v.s = { t[1], strlen(t[1]) } };
        row[n_cap + S_DEL_TS] = (mcdc_value){ .is_null = false, .v.i = fin->ts };
    }
    return true;
}

/* Soft deletes: silver's row of a changed key; the states it already holds are skipped,
 * and so is a first state equal to the row's (deleted after deleted, or a live image with
 * the row's values): as in one apply, where equal neighbours collapse, it changes nothing. */
static void soft_found(const scd2 *c, keyed *k, const mcdc_value *r, size_t n_cap)
{
    mcdc_lsn a, b;
    bool ha = !r[n_cap + S_LSN].is_null &&
              mcdc_lsn_parse_n(&a, r[n_cap + S_LSN].v.s.ptr, r[n_cap + S_LSN].v.s.len) == 0;
    bool hb = !r[n_cap + S_DEL_LSN].is_null &&
              mcdc_lsn_parse_n(&b, r[n_cap + S_DEL_LSN].v.s.ptr, r[n_cap + S_DEL_LSN].v.s.len) == 0;
    if (hb && (!ha || mcdc_lsn_cmp(&b, &a) > 0)) {
        a = b;
        ha = true;
    }
    k->has_cur = true;
    while (ha && k->first < k->n_st && mcdc_lsn_cmp(&k->st[k->first].lsn, &a) <= 0)
        k->first++;
    bool deleted = !r[n_cap + S_DEL].is_null && r[n_cap + S_DEL].v.b;
    while (k->first < k->n_st &&
           (deleted ? !k->st[k->first].vals
                    : k->st[k->first].vals &&
                          mcdc_silver__same_cells(c->cap->cols, n_cap, k->st[k->first].vals, r)))
        k->first++;
    k->close = k->first < k->n_st;
}

/* Pass 1: the current version of each changed key, and which files hold one to close. */
static int find_current(scd2 *c, bool *rewrite)
{
    mcdc_buf kb = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int rc = 0;
    for (size_t fi = 0; rc == 0 && fi < c->silver->n_files; fi++) {
        const mcdc_delta_file *f = &c->silver->files[fi];
        if (!may_hold(c, f))
            continue;
        mcdc_delta_snapshot view;
        mcdc_delta_file arr[1];
        mcdc_delta_scan *sc = NULL;
        rc = open_one(&sc, &view, arr, c->silver, f);
        const mcdc_value *r;
        size_t n_cap = c->cap->n_cols;
        while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
            rc = 0;
            if (!c->soft && (r[n_cap + H_CUR].is_null || !r[n_cap + H_CUR].v.b))
                continue;
            if ((rc = row_key(c, &kb, r)) < 0)
                break;
            keyed *k = find_keyed(c, (const uint8_t *)kb.ptr, kb.len);
            if (!k) {
                if (c->has_resnap)
                    rewrite[fi] = true; /* not in the snapshot: closed at S */
                continue;
            }
            if (c->soft) {
                if (k->has_cur) {
                    rc = mcdc_error_set(MCDC_ECORRUPT, "%s: a key has two rows (file %s)",
                                        c->o->silver_name, f->path);
                    break;
                }
                soft_found(c, k, r, n_cap);
                rewrite[fi] |= k->close;
                continue;
            }
            if (k->has_cur) {
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: a key has two current versions (file %s)",
                                    c->o->silver_name, f->path);
                break;
            }
            k->has_cur = true;
            /* states already in silver (a replay) and states equal to the current one */
            mcdc_lsn from;
            bool has_from = !r[n_cap + H_FROM].is_null &&
                            mcdc_lsn_parse_n(&from, r[n_cap + H_FROM].v.s.ptr, r[n_cap + H_FROM].v.s.len) == 0;
            while (k->first < k->n_st &&
                   ((has_from && mcdc_lsn_cmp(&k->st[k->first].lsn, &from) <= 0) ||
                    (k->st[k->first].vals && mcdc_silver__same_cells(c->cap->cols, c->cap->n_cols, k->st[k->first].vals, r))))
                k->first++;
            if (k->first < k->n_st) {
                k->close = true;
                rewrite[fi] = true;
            }
        }
        mcdc_delta_scan_free(sc);
    }
    mcdc_buf_dispose(&kb);
    return rc < 0 ? rc : 0;
}

/* Pass 2: each marked file written again with its changed keys' current versions closed. */
static int rewrite_files(scd2 *c, const bool *rewrite)
{
    size_t n_cap = c->cap->n_cols;
    mcdc_value *row = calloc(c->out->n_cols, sizeof *row);
    char (*lsn_text)[MCDC_LSN_STRLEN] = malloc(2 * MCDC_LSN_STRLEN);
    mcdc_buf kb = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    if (!row || !lsn_text || !(c->removes = calloc(c->silver->n_files ? c->silver->n_files : 1,
                                                   sizeof *c->removes))) {
        free(row);
        free(lsn_text);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    int rc = 0;
    for (size_t fi = 0; rc == 0 && fi < c->silver->n_files; fi++) {
        if (!rewrite[fi])
            continue;
        const mcdc_delta_file *f = &c->silver->files[fi];
        c->removes[c->n_removes++] = *f;
        mcdc_delta_snapshot view;
        mcdc_delta_file arr[1];
        mcdc_delta_scan *sc = NULL;
        rc = open_one(&sc, &view, arr, c->silver, f);
        outfile of;
        memset(&of, 0, sizeof of);
        const mcdc_value *r;
        while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
            rc = 0;
            c->res->silver_rows_read++;
            if ((rc = row_key(c, &kb, r)) < 0)
                break;
            const mcdc_value *w = r;
            keyed *k = (c->soft || (!r[n_cap + H_CUR].is_null && r[n_cap + H_CUR].v.b))
                           ? find_keyed(c, (const uint8_t *)kb.ptr, kb.len) : NULL;
            if (c->soft && k && k->close) {
                k->placed = true;
                if (soft_row(c, k, r, row, lsn_text)) {
                    w = row;
                    c->closed++;
                }
            } else if ((k && k->close) ||
                       (!k && c->has_resnap && !r[n_cap + H_CUR].is_null && r[n_cap + H_CUR].v.b)) {
                /* closed by its first new state, or, not in the snapshot, at S */
                const state at_s = { c->resnap, c->resnap_ts, NULL, NULL };
                const state *s = k ? &k->st[k->first] : &at_s;
                memcpy(row, r, c->out->n_cols * sizeof *row);
                row[n_cap + H_TO].is_null = false;
                mcdc_lsn_format(*lsn_text, &s->lsn);
                row[n_cap + H_TO].v.s.ptr = *lsn_text;
                row[n_cap + H_TO].v.s.len = strlen(*lsn_text);
                row[n_cap + H_TO_TS].is_null = false;
                row[n_cap + H_TO_TS].v.i = s->ts;
                row[n_cap + H_CUR].is_null = false;
                row[n_cap + H_CUR].v.b = false;
                w = row;
                c->closed++;
            }
            rc = out_put(c, &of, w, (const uint8_t *)kb.ptr, kb.len);
        }
        mcdc_delta_scan_free(sc);
        int rc2 = out_close(c, &of);
        if (rc == 0)
            rc = rc2;
    }
    mcdc_buf_dispose(&kb);
    free(row);
    free(lsn_text);
    return rc;
}

/* The versions opened: each present state from k->first on, valid until the next state. */
static int write_versions(scd2 *c)
{
    size_t n_cap = c->cap->n_cols;
    mcdc_value *row = calloc(c->out->n_cols, sizeof *row);
    char (*t)[MCDC_LSN_STRLEN] = malloc(2 * MCDC_LSN_STRLEN);
    if (!row || !t) {
        free(row);
        free(t);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    outfile of;
    memset(&of, 0, sizeof of);
    int rc = 0;
    int64_t in_file = 0;
    for (size_t i = 0; rc == 0 && i < c->n_k; i++) {
        keyed *k = &c->k[i];
        if (in_file >= c->o->target_file_rows) { /* files of about target_file_rows rows, */
            rc = out_close(c, &of);                /* a key's versions in one of them */
            in_file = 0;
            if (rc < 0)
                break;
        }
        if (c->soft) { /* a key silver does not hold yet: its one row */
            if (!k->has_cur && k->n_st && soft_row(c, k, NULL, row, t)) {
                rc = out_put(c, &of, row, k->key, k->key_len);
                c->opened++;
                in_file++;
            }
            continue;
        }
        for (size_t s = k->first; rc == 0 && s < k->n_st; s++) {
            if (!k->st[s].vals)
                continue;
            memcpy(row, k->st[s].vals, n_cap * sizeof *row);
            mcdc_lsn_format(t[0], &k->st[s].lsn);
            row[n_cap + H_FROM] = (mcdc_value){ .is_null = false, .v.s = { t[0], strlen(t[0]) } };
            row[n_cap + H_FROM_TS] = (mcdc_value){ .is_null = false, .v.i = k->st[s].ts };
            bool last = s + 1 == k->n_st;
            if (last) {
                row[n_cap + H_TO].is_null = row[n_cap + H_TO_TS].is_null = true;
            } else {
                mcdc_lsn_format(t[1], &k->st[s + 1].lsn);
                row[n_cap + H_TO] = (mcdc_value){ .is_null = false, .v.s = { t[1], strlen(t[1]) } };
                row[n_cap + H_TO_TS] = (mcdc_value){ .is_null = false, .v.i = k->st[s + 1].ts };
            }
            row[n_cap + H_CUR] = (mcdc_value){ .is_null = false, .v.b = last };
            rc = out_put(c, &of, row, k->key, k->key_len);
            c->opened++;
            in_file++;
        }
    }
    int rc2 = out_close(c, &of);
    free(row);
    free(t);
    return rc ? rc : rc2;
}

static int build_commit(const mcdc_delta_snapshot *snap, mcdc_delta_action **actions,
                        size_t *n_actions, void *payload)
{
    scd2 *c = payload;
    size_t n = c->n_removes + c->n_adds;
    mcdc_delta_action *a = calloc(n + 1, sizeof *a);
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    int rc = 0;
    size_t k = 0;
    int64_t now_ms = mcdc_time_now_us() / 1000;
    for (size_t i = 0; rc == 0 && i < c->n_removes; i++) {
        bool live = false;
        for (size_t j = 0; !live && j < snap->n_files; j++)
            live = strcmp(snap->files[j].path, c->removes[i].path) == 0;
        if (!live) {
            rc = mcdc_error_set(MCDC_ECONFLICT, "%s: file %s was removed by another writer",
                                c->o->silver_path, c->removes[i].path);
            mcdc_error_hint("run silver apply again; it starts from the new version");
            break;
        }
        rc = mcdc_delta_remove_of(&a[k++], &c->removes[i], now_ms);
    }
    for (size_t i = 0; rc == 0 && i < c->n_adds; i++) {
        a[k].kind = MCDC_DELTA_ACTION_ADD;
        rc = mcdc_delta_file_copy(&a[k].u.file, &c->adds[i]);
        k++;
    }
    if (rc < 0) {
        for (size_t i = 0; i < k; i++)
            mcdc_delta_action_clear(&a[i]);
        free(a);
        return rc;
    }
    *actions = a;
    *n_actions = k;
    return 0;
}

static int mutate_applied(mcdc_control_row *row, bool exists, void *payload)
{
    (void)exists;
    const mcdc_lsn *l = payload;
    char t[MCDC_LSN_STRLEN];
    mcdc_lsn_format(t, l);
    if (row->applied_lsn && strcmp(row->applied_lsn, t) == 0)
        return MCDC_EALREADY;
    char *n = strdup(t);
    if (!n)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    free(row->applied_lsn);
    row->applied_lsn = n;
    return 0;
}

static void lsn_max(bool *has, mcdc_lsn *acc, const mcdc_lsn *v)
{
    if (!*has || mcdc_lsn_cmp(v, acc) > 0) {
        *acc = *v;
        *has = true;
    }
}

int mcdc_silver__apply_scd2(const mcdc_silver_apply_options *o, mcdc_silver_apply_result *out)
{
    char lock_path[MCDC_PATH_MAX];
    if (snprintf(lock_path, sizeof lock_path, "%s/%s", o->silver_path, LOCK_NAME) >= (int)sizeof lock_path)
        return mcdc_error_set(MCDC_EINVAL, "%s: path too long", o->silver_path);
    int rc = mcdc_storage_mkdirs(o->silver_path);
    if (rc < 0)
        return rc;
    /* no flock on an object store: the Delta conflict check keeps two applies apart */
    mcdc_fs_lock *lock = NULL;
    if (!mcdc_storage_is_s3(o->silver_path) && (rc = mcdc_fs_lock_acquire(&lock, lock_path)) < 0) {
        if (rc == MCDC_ELOCKED)
            mcdc_error_hint("another silver apply of %s is running; wait for it", o->silver_name);
        return rc;
    }
    scd2 c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.res = out;
    c.soft = o->soft_deletes;
    bool *rewrite = NULL;
    mcdc_control_row brow, srow;
    memset(&brow, 0, sizeof brow);
    memset(&srow, 0, sizeof srow);
    /* 1-2: bronze's verdict and silver's position, before bronze is read */
    if ((rc = mcdc_control_ensure(o->control_path, NULL)) < 0)
        goto done;
    if ((rc = mcdc_control_get(&brow, o->control_path, o->bronze_name)) == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        memset(&brow, 0, sizeof brow);
        rc = 0;
    }
    if (rc < 0)
        goto done;
    if ((rc = mcdc_control_get(&srow, o->control_path, o->silver_name)) == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        memset(&srow, 0, sizeof srow);
        rc = 0;
    }
    if (rc < 0)
        goto done;
    out->finalized_until = srow.finalized_until;
    /* 3: bronze, pinned */
    if ((rc = mcdc_delta_snapshot_open(&c.bronze, o->bronze_path, -1)) == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        rc = 0;
        goto done; /* bronze_found stays false */
    }
    if (rc < 0)
        goto done;
    out->bronze_found = true;
    out->bronze_version = c.bronze->version;
    if ((rc = make_schemas(&c)) < 0 || (rc = prepare_silver(&c)) < 0)
        goto done;
    bool has_pos = false, has_c;
    mcdc_lsn pos, cpos;
    if (srow.applied_lsn && mcdc_lsn_parse(&pos, srow.applied_lsn) == 0)
        has_pos = true;
    else
        mcdc_error_clear();
    if ((rc = committed_position(o->silver_path, &has_c, &cpos)) < 0)
        goto done;
    if (has_c)
        lsn_max(&has_pos, &pos, &cpos);
    out->has_applied_lsn = has_pos;
    if (has_pos)
        out->applied_lsn = pos;
    /* 4: the states of the changed keys (across a re-snapshot: every key's state at S) */
    if (!c.soft && (rc = find_resnapshot(&c, has_pos, &pos)) < 0)
        goto done;
    if ((rc = read_changes(&c, has_pos, &pos)) < 0 || (rc = build_states(&c)) < 0)
        goto done;
    out->changed_keys = c.n_k;
    bool has_new = false;
    mcdc_lsn newpos;
    if (has_pos) {
        newpos = pos;
        has_new = true;
    }
    for (size_t i = 0; i < c.n_ch; i++)
        lsn_max(&has_new, &newpos, &c.ch[i].r.lsn);
    if (c.has_resnap)
        lsn_max(&has_new, &newpos, &c.resnap); /* (an empty snapshot holds no row) */
    out->silver_files_before = c.silver->n_files;
    /* 5: the files */
    if (!(rewrite = calloc(c.silver->n_files ? c.silver->n_files : 1, sizeof *rewrite))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        goto done;
    }
    if ((rc = find_current(&c, rewrite)) < 0 || (rc = rewrite_files(&c, rewrite)) < 0 ||
        (rc = write_versions(&c)) < 0)
        goto done;
    out->rows_inserted = c.opened;
    out->rows_updated = c.closed;
    out->silver_files_rewritten = c.n_removes;
    out->silver_files_added = c.n_adds;
    mcdc_failpoint("silver.before_merge_commit");
    if (c.n_removes || c.n_adds || c.has_resnap) { /* (a re-snapshot's gap is recorded) */
        char lt[MCDC_LSN_STRLEN];
        mcdc_buf meta = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        rc = mcdc_buf_printf(&meta, "{\"silver_apply\":{\"mode\":\"scd2\",\"bronze_version\":%lld,"
                             "\"changed_keys\":%zu,\"versions_opened\":%llu,\"versions_closed\":%llu,"
                             "\"applied_lsn\":\"%s\",\"bronze\":", (long long)c.bronze->version, c.n_k,
                             (unsigned long long)c.opened, (unsigned long long)c.closed,
                             mcdc_lsn_format(lt, &newpos));
        if (rc == 0)
            rc = mcdc_json_quote(&meta, o->bronze_name, strlen(o->bronze_name));
        char sl[MCDC_LSN_STRLEN], la[MCDC_LSN_STRLEN];
        if (rc == 0 && c.has_resnap) /* the gap: (lost_after, lsn), read by as-of reads */
            rc = mcdc_buf_printf(&meta, ",\"resnapshot\":{\"lsn\":\"%s\",\"lost_after\":\"%s\"}",
                                 mcdc_lsn_format(sl, &c.resnap), mcdc_lsn_format(la, &c.lost_after));
        if (rc == 0)
            rc = mcdc_buf_puts(&meta, "}}");
        mcdc_delta_commit_options cmo = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        cmo.operation = "MERGE";
        cmo.read_pred.op = MCDC_DELTA_PRED_ALL;
        cmo.user_metadata = meta.ptr;
        mcdc_delta_commit_result cr;
        if (rc == 0)
            rc = mcdc_delta_commit(o->silver_path, build_commit, &c, &cmo, &cr);
        mcdc_buf_dispose(&meta);
        if (rc < 0)
            goto done;
        out->silver_version = cr.version;
    } else {
        out->silver_version = c.silver->version;
    }
    mcdc_failpoint("silver.after_merge");
    /* 6: the position */
    if (has_new) {
        rc = mcdc_control_update(o->control_path, o->silver_name, mutate_applied, &newpos, NULL);
        if (rc == MCDC_EALREADY) {
            mcdc_error_clear();
            rc = 0;
        }
        if (rc < 0)
            goto done;
        out->has_applied_lsn = true;
        out->applied_lsn = newpos;
    }
    mcdc_failpoint("silver.after_position");
    /* 7: the verdict, capped at bronze's as read before bronze */
    rc = mcdc_silver__advance_verdict(o, &brow, &out->finalized_until);
done:
    free(rewrite);
    mcdc_control_row_clear(&brow);
    mcdc_control_row_clear(&srow);
    ctx_free(&c);
    mcdc_fs_lock_release(lock);
    return rc;
}
