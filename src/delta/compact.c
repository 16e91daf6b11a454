/*
 * delta/compact.c: compaction plans and their commit, and automatic compaction after an
 * append (docs/decisions/0005-automatic-compaction.md).
 *
 * Compaction invariants:
 * (K1) Readers see the same rows: a compaction commit removes files and adds files with
 *      the same rows (minus rows a deletion vector had deleted), all with dataChange=false,
 *      and no txn: the txn versions, the history and every earlier version stay as they
 *      were.
 * (K2) Neighbours only: files are combined in commit order (modificationTime, or the
 *      order tag a compacted file inherits from its oldest input), within a partition,
 *      rows kept in that order. Auto compaction combines only runs of consecutive small
 *      files, so a log-like table (bronze: `_start_lsn` ascending with the commits) keeps
 *      files with disjoint, tight ranges that readers prune by. Files of the same
 *      millisecond are ordered by path (their order among themselves is not known).
 * (K3) Bounded work: one auto compaction reads at most the target size (128 MiB by
 *      default) of input and writes one file per group; a tiered plan rewrites each row
 *      about once per tier (log base F of min_file / file size), not once per run.
 * (K4) Losing is harmless: new files are fsynced before the commit; a commit that loses a
 *      conflict (another writer removed an input) gives up and leaves orphans for vacuum;
 *      a crash between writing and committing (failpoint delta.compact.files_written)
 *      leaves the table as it was.
 * (K5) Never on the finalization control table (mcdc.kind = control): it keeps one file
 *      per row so advances of different tables do not conflict (ADR 0002).
 */
#include "delta/compact.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "delta/internal.h"
#include "mcdc/storage.h"
#include "mcdc/failpoint.h"

/* ---- settings ----------------------------------------------------------------------- */

int64_t mcdc_delta__parse_size(const char *text)
{
    if (!text)
        return -1;
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    int64_t n = 0;
    while (isdigit((unsigned char)*p)) {
        n = n * 10 + (*p++ - '0');
        if (n > ((int64_t)1 << 50))
            return -1;
    }
    while (isspace((unsigned char)*p))
        p++;
    int shift = 0;
    switch (tolower((unsigned char)*p)) {
    case 'k': shift = 10; p++; break;
    case 'm': shift = 20; p++; break;
    case 'g': shift = 30; p++; break;
    case 'b': break;
    case '\0': break;
    default: return -1;
    }
    if (tolower((unsigned char)*p) == 'b')
        p++;
    while (isspace((unsigned char)*p))
        p++;
    if (*p || n == 0 || n > (((int64_t)1 << 50) >> shift))
        return -1;
    return n << shift;
}

void mcdc_delta__compact_settings_of(mcdc_delta__compact_settings *out,
                                     const mcdc_delta_snapshot *s)
{
    const char *kind = mcdc_delta_snapshot_config(s, "mcdc.kind", "");
    const char *ac = mcdc_delta_snapshot_config(s, "delta.autoOptimize.autoCompact", NULL);
    if (strcmp(kind, "control") == 0)
        out->enabled = false; /* (K5), whatever the property says */
    else if (ac)
        out->enabled = !strcasecmp(ac, "true") || !strcasecmp(ac, "auto") ||
                       !strcasecmp(ac, "legacy");
    else
        out->enabled = !strcmp(kind, "bronze") || !strcmp(kind, "facts");
    const char *nf = mcdc_delta_snapshot_config(s, "mcdc.autoCompact.minNumFiles", NULL);
    char *end = NULL;
    long long v = nf ? strtoll(nf, &end, 10) : 0;
    out->min_num_files = nf && end != nf && !*end && v >= 2 && v <= 1000000
                             ? (int64_t)v : MCDC_DELTA_AC_MIN_NUM_FILES;
    int64_t t = mcdc_delta__parse_size(mcdc_delta_snapshot_config(s, "delta.targetFileSize", NULL));
    out->target_bytes = t > 0 ? t : MCDC_DELTA_AC_TARGET_BYTES;
    int64_t m = mcdc_delta__parse_size(mcdc_delta_snapshot_config(s, "mcdc.autoCompact.minFileSize",
                                                                  NULL));
    out->min_file_bytes = m > 0 && m <= out->target_bytes ? m : out->target_bytes / 2;
}

int64_t mcdc_delta__file_order(const mcdc_delta_file *f)
{
    const char *t = mcdc_delta_map_get(&f->tags, MCDC_DELTA_TAG_ORDER, NULL);
    if (t) {
        char *end;
        long long v = strtoll(t, &end, 10);
        if (end != t && !*end && v >= 0)
            return (int64_t)v;
    }
    return f->modification_time >= 0 ? f->modification_time : 0;
}

/* ---- plans -------------------------------------------------------------------------- */

typedef struct cand {
    size_t                 idx;   /* index into the planned array */
    const mcdc_delta_file *f;
    char                  *key;   /* owned: partition values as one string */
    int64_t                order;
} cand;

static char *part_key(const mcdc_delta_file *f)
{
    if (f->partition_values.n == 0)
        return strdup("");
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    for (size_t i = 0; i < f->partition_values.n; i++)
        if (mcdc_buf_printf(&b, "%s=%c%s\x1f", f->partition_values.kv[i].key,
                            f->partition_values.kv[i].value ? 'V' : 'N',
                            f->partition_values.kv[i].value ? f->partition_values.kv[i].value
                                                            : "") < 0) {
            mcdc_buf_dispose(&b);
            return NULL;
        }
    return mcdc_buf_detach(&b);
}

static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    if (c)
        return c;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    return strcmp(a->f->path, b->f->path);
}

static void cands_free(cand *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        free(c[i].key);
    free(c);
}

/* What a plan looks at: for `optimize`, files under half of target or with a DV; for the
 * auto plan, small files and the larger files that may sit between them in commit order
 * (one not newer than every small file cannot break a run: skipped, so a table with many
 * old large files sorts only its few recent ones). */
typedef struct keep_arg {
    int64_t size;      /* optimize: the target; auto: min_file */
    int64_t min_order; /* auto: the oldest small file's order */
    double  dv_share;  /* optimize: a DV counts from this share of deleted rows */
} keep_arg;

/* Whether @p f has a deletion vector deleting at least @p share of its rows. */
static bool dv_past(const mcdc_delta_file *f, double share)
{
    if (!f->has_dv)
        return false;
    if (share <= 0 || !f->stats)
        return true;
    const char *p = strstr(f->stats, "\"numRecords\":");
    long long rows = p ? strtoll(p + 13, NULL, 10) : -1;
    return rows <= 0 || (double)f->dv.cardinality >= share * (double)rows;
}

double mcdc_delta__dv_fold_share(const mcdc_delta_snapshot *s)
{
    if (strcmp(mcdc_delta_snapshot_config(s, "mcdc.kind", ""), "silver") != 0)
        return 0;
    const char *v = mcdc_delta_snapshot_config(s, "mcdc.silver.dv_fold_share", NULL);
    char *end = NULL;
    double d = v ? strtod(v, &end) : 0.2;
    return v && (end == v || *end || !(d >= 0 && d <= 1)) ? 0.2 : d;
}

/* The files (those @p keep accepts) sorted by partition, then commit order. */
static int sorted_cands(cand **out, size_t *n_out, const mcdc_delta_file *const *files, size_t n,
                        bool (*keep)(const mcdc_delta_file *, const keep_arg *),
                        const keep_arg *arg)
{
    *out = NULL;
    *n_out = 0;
    cand *c = calloc(n + 1, sizeof *c);
    if (!c)
        return mcdc_error_set(MCDC_ENOMEM, "compaction: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep(files[i], arg))
            continue;
        c[k].idx = i;
        c[k].f = files[i];
        c[k].order = mcdc_delta__file_order(files[i]);
        if (!(c[k].key = part_key(files[i]))) {
            cands_free(c, k);
            return mcdc_error_set(MCDC_ENOMEM, "compaction: out of memory");
        }
        k++;
    }
    qsort(c, k, sizeof *c, cand_cmp);
    *out = c;
    *n_out = k;
    return 0;
}

static int plan_add_group(mcdc_delta__compact_plan *p, const cand *c, size_t from, size_t to,
                          size_t cap)
{
    if (p->n_idx + (to - from) > cap)
        return mcdc_error_set(MCDC_EINVAL, "compaction: plan overflow");
    for (size_t i = from; i < to; i++) {
        p->idx[p->n_idx++] = c[i].idx;
        p->bytes += c[i].f->size > 0 ? c[i].f->size : 0;
    }
    p->end[p->n_groups++] = p->n_idx;
    return 0;
}

static int plan_alloc(mcdc_delta__compact_plan *p, size_t n)
{
    memset(p, 0, sizeof *p);
    p->idx = malloc((n + 1) * sizeof *p->idx);
    p->end = malloc((n + 1) * sizeof *p->end);
    if (!p->idx || !p->end) {
        mcdc_delta__compact_plan_free(p);
        return mcdc_error_set(MCDC_ENOMEM, "compaction: out of memory");
    }
    return 0;
}

void mcdc_delta__compact_plan_free(mcdc_delta__compact_plan *p)
{
    if (!p)
        return;
    free(p->idx);
    free(p->end);
    memset(p, 0, sizeof *p);
}

static bool keep_run_member(const mcdc_delta_file *f, const keep_arg *a)
{
    return f->size < a->size || mcdc_delta__file_order(f) >= a->min_order;
}

static bool keep_small_or_dv(const mcdc_delta_file *f, const keep_arg *a)
{
    return f->size < a->size / 2 || dv_past(f, a->dv_share);
}

static int64_t fsize(const cand *c)
{
    return c->f->size > 0 ? c->f->size : 0;
}

/* Tier of a small file of @p size: the largest t with size < min_file / F^t. */
static int tier_of(int64_t size, int64_t min_file, int64_t fan_in)
{
    int t = 0;
    int64_t u = min_file;
    while (t < 16 && u / fan_in > 0 && size < u / fan_in) {
        u /= fan_in;
        t++;
    }
    return t;
}

int mcdc_delta__compact_plan_auto(mcdc_delta__compact_plan *out,
                                  const mcdc_delta_file *const *files, size_t n,
                                  const mcdc_delta__compact_settings *s)
{
    memset(out, 0, sizeof *out);
    const int64_t F = s->min_num_files >= 2 ? s->min_num_files : 2;
    const int64_t M = s->min_file_bytes > 0 ? s->min_file_bytes : 1;
    /* a quick no: fewer than F small files in the whole table */
    size_t n_small = 0;
    keep_arg ka = { M, INT64_MAX };
    for (size_t i = 0; i < n; i++) {
        if (files[i]->size >= M)
            continue;
        n_small++;
        int64_t o = mcdc_delta__file_order(files[i]);
        if (o < ka.min_order)
            ka.min_order = o;
    }
    if (n_small < (size_t)F)
        return 0;
    cand *c;
    size_t nc;
    int rc = sorted_cands(&c, &nc, files, n, keep_run_member, &ka);
    if (rc < 0)
        return rc;
    int *tier = malloc((nc + 1) * sizeof *tier);
    if (!tier || (rc = plan_alloc(out, nc)) < 0) {
        free(tier);
        cands_free(c, nc);
        return rc < 0 ? rc : mcdc_error_set(MCDC_ENOMEM, "compaction: out of memory");
    }
    int64_t budget = s->target_bytes;
    for (size_t a = 0; rc == 0 && a < nc && budget > 0;) {
        size_t b = a;
        while (b < nc && strcmp(c[b].key, c[a].key) == 0)
            b++;
        /* partition [a, b) in commit order */
        int max_tier = -1;
        for (size_t i = a; i < b; i++) {
            tier[i] = c[i].f->size < M ? tier_of(c[i].f->size, M, F) : -1;
            if (tier[i] > max_tier)
                max_tier = tier[i];
        }
        bool done = false;
        for (int t = max_tier; t >= 0 && !done; t--) {
            int64_t u = M; /* files of size >= u break a run at this tier */
            for (int k = 0; k < t; k++)
                u /= F;
            for (size_t i = a; i < b && !done;) {
                if (tier[i] < 0 || c[i].f->size >= u) {
                    i++;
                    continue;
                }
                size_t start = i;
                int64_t at_tier = 0;
                while (i < b && tier[i] >= 0 && c[i].f->size < u)
                    at_tier += tier[i++] == t;
                if (at_tier < F)
                    continue;
                /* the run [start, i), cut to the budget (at least two files) */
                size_t stop = start;
                int64_t in = 0;
                while (stop < i && (stop - start < 2 || in + fsize(&c[stop]) <= budget))
                    in += fsize(&c[stop++]);
                rc = plan_add_group(out, c, start, stop, nc);
                budget -= in;
                done = true;
            }
        }
        a = b;
    }
    free(tier);
    cands_free(c, nc);
    if (rc < 0)
        mcdc_delta__compact_plan_free(out);
    return rc;
}

int mcdc_delta__compact_plan_all(mcdc_delta__compact_plan *out,
                                 const mcdc_delta_file *const *files, size_t n,
                                 int64_t target_bytes, double dv_share)
{
    memset(out, 0, sizeof *out);
    cand *c;
    size_t nc;
    keep_arg ka = { target_bytes, 0, dv_share };
    int rc = sorted_cands(&c, &nc, files, n, keep_small_or_dv, &ka);
    if (rc < 0)
        return rc;
    if ((rc = plan_alloc(out, nc)) < 0) {
        cands_free(c, nc);
        return rc;
    }
    for (size_t a = 0; rc == 0 && a < nc;) {
        size_t b = a;
        while (b < nc && strcmp(c[b].key, c[a].key) == 0)
            b++;
        for (size_t g = a; rc == 0 && g < b;) {
            size_t stop = g;
            int64_t in = 0;
            while (stop < b && (stop == g || in + fsize(&c[stop]) <= target_bytes))
                in += fsize(&c[stop++]);
            if (stop - g >= 2 || dv_past(c[g].f, dv_share))
                rc = plan_add_group(out, c, g, stop, nc);
            g = stop;
        }
        a = b;
    }
    cands_free(c, nc);
    if (rc < 0)
        mcdc_delta__compact_plan_free(out);
    return rc;
}

/* ---- running a plan ----------------------------------------------------------------- */

typedef struct run_build {
    const mcdc_delta_snapshot     *orig;  /* the snapshot the files were read from */
    const mcdc_delta__compact_plan *plan;
    const mcdc_delta_file         *added;
    size_t                         n_added;
} run_build;

static bool is_live(const mcdc_delta_snapshot *s, const char *path)
{
    size_t lo = 0, hi = s->n_files;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->files[mid].path, path);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static int build_run(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n,
                     void *payload)
{
    run_build *b = payload;
    *out = calloc(b->plan->n_idx + b->n_added + 1, sizeof **out);
    *n = 0;
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "compaction: out of memory");
    int64_t now = mcdc_delta__now_ms();
    for (size_t i = 0; i < b->plan->n_idx; i++) {
        const mcdc_delta_file *f = &b->orig->files[b->plan->idx[i]];
        if (!is_live(snap, f->path))
            return mcdc_error_set(MCDC_ECONFLICT, "%s: %s was removed by another writer during "
                                  "the compaction", snap->table_path, f->path);
        int rc = mcdc_delta_remove_of(&(*out)[*n], f, now);
        if (rc < 0)
            return rc;
        (*out)[(*n)++].u.file.data_change = false;
    }
    for (size_t i = 0; i < b->n_added; i++) {
        int rc = mcdc_delta_file_copy(&(*out)[*n].u.file, &b->added[i]);
        if (rc < 0)
            return rc;
        (*out)[*n].kind = MCDC_DELTA_ACTION_ADD;
        (*out)[(*n)++].u.file.data_change = false;
    }
    return 0;
}

/* Whether @p v is a range tag's value: uppercase hex, an even number of digits. */
static bool range_value(const char *v)
{
    size_t n = 0;
    for (; v && v[n]; n++)
        if (!((v[n] >= '0' && v[n] <= '9') || (v[n] >= 'A' && v[n] <= 'F')))
            return false;
    return v && n % 2 == 0;
}

/* The range tags every input of group [from, to) carries, combined (smallest min, largest
 * max), set on @p f (MCDC_DELTA_RANGE_TAG_PREFIX). */
static int keep_range_tags(mcdc_delta_file *f, const mcdc_delta_snapshot *snap,
                           const mcdc_delta__compact_plan *p, size_t from, size_t to)
{
    const mcdc_delta_file *first = &snap->files[p->idx[from]];
    size_t plen = strlen(MCDC_DELTA_RANGE_TAG_PREFIX);
    for (size_t t = 0; t < first->tags.n; t++) {
        const char *key = first->tags.kv[t].key;
        size_t kl = strlen(key);
        if (strncmp(key, MCDC_DELTA_RANGE_TAG_PREFIX, plen) != 0 || kl < plen + 4 || kl > 250 ||
            strcmp(key + kl - 4, "_min") != 0)
            continue;
        char max_key[256];
        snprintf(max_key, sizeof max_key, "%.*s_max", (int)(kl - 4), key);
        const char *lo = NULL, *hi = NULL;
        bool all = true;
        for (size_t i = from; i < to && all; i++) {
            const mcdc_delta_file *g = &snap->files[p->idx[i]];
            const char *a = mcdc_delta_map_get(&g->tags, key, NULL);
            const char *b = mcdc_delta_map_get(&g->tags, max_key, NULL);
            all = range_value(a) && range_value(b);
            if (all && (!lo || strcmp(a, lo) < 0))
                lo = a;
            if (all && (!hi || strcmp(b, hi) > 0))
                hi = b;
        }
        int rc = 0;
        if (all && lo && hi && (rc = mcdc_delta_map_set(&f->tags, key, lo)) == 0)
            rc = mcdc_delta_map_set(&f->tags, max_key, hi);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Rewrite group [from, to) of the plan into new files appended to *added. */
static int rewrite_group(const mcdc_delta_snapshot *snap, const mcdc_delta__compact_plan *p,
                         size_t from, size_t to, bool is_auto, mcdc_delta_file **added,
                         size_t *n_added, int64_t *rows)
{
    mcdc_delta_writer *w = NULL;
    mcdc_delta_scan *scan = NULL;
    mcdc_delta_file *files = NULL;
    size_t n_files = 0;
    mcdc_delta_writer_options wo = MCDC_DELTA_WRITER_OPTIONS_INIT;
    wo.target_file_bytes = INT64_MAX / 4; /* one file per group: the plan bounds the input */
    wo.no_dictionary = is_auto; /* as the stream writes them: half the CPU on bronze */
    int rc = mcdc_delta_writer_open(&w, snap, &wo);
    if (rc == 0)
        rc = mcdc_delta_scan_open(&scan, snap, NULL);
    if (rc == 0)
        rc = mcdc_delta__scan_restrict(scan, p->idx + from, to - from);
    const mcdc_value *row;
    while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1) {
        rc = mcdc_delta_writer_write(w, row);
        (*rows)++;
    }
    if (rc == 0)
        rc = mcdc_delta_writer_finish(w, &files, &n_files);
    char order[32];
    snprintf(order, sizeof order, "%lld",
             (long long)mcdc_delta__file_order(&snap->files[p->idx[from]]));
    for (size_t i = 0; rc == 0 && i < n_files; i++)
        if ((rc = mcdc_delta_map_set(&files[i].tags, MCDC_DELTA_TAG_ORDER, order)) == 0)
            rc = keep_range_tags(&files[i], snap, p, from, to);
    mcdc_delta_file *grown = NULL;
    if (rc == 0 && n_files) {
        grown = realloc(*added, (*n_added + n_files) * sizeof *grown);
        if (!grown)
            rc = mcdc_error_set(MCDC_ENOMEM, "compaction: out of memory");
    }
    if (rc == 0 && n_files) {
        memcpy(grown + *n_added, files, n_files * sizeof *files);
        *added = grown;
        *n_added += n_files;
        free(files);
        files = NULL;
        n_files = 0;
    }
    mcdc_delta_files_free(files, n_files); /* on failure: the writer's files stay orphans */
    mcdc_delta_scan_free(scan);
    mcdc_delta_writer_free(w);
    return rc;
}

int mcdc_delta__compact_run(const mcdc_delta_snapshot *snap, const mcdc_delta__compact_plan *p,
                            bool is_auto, int64_t retry_budget_ms,
                            mcdc_delta_optimize_result *res)
{
    memset(res, 0, sizeof *res);
    res->version = snap->version;
    if (p->n_groups == 0)
        return 0;
    mcdc_delta_file *added = NULL;
    size_t n_added = 0;
    int rc = 0;
    for (size_t g = 0; rc == 0 && g < p->n_groups; g++)
        rc = rewrite_group(snap, p, g ? p->end[g - 1] : 0, p->end[g], is_auto, &added,
                           &n_added, &res->n_rows);
    if (rc == 0) {
        mcdc_failpoint("delta.compact.files_written");
        run_build b = { snap, p, added, n_added };
        mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        char params[160];
        snprintf(params, sizeof params, "{\"predicate\":\"[]\",\"targetSize\":\"%lld\","
                 "\"auto\":\"%s\",\"numFiles\":\"%zu\"}", (long long)p->bytes,
                 is_auto ? "true" : "false", p->n_idx);
        o.operation = "OPTIMIZE";
        o.operation_parameters = params;
        if (retry_budget_ms > 0)
            o.retry_budget_ms = retry_budget_ms;
        mcdc_delta_commit_result cr = { -1, 0, 0, false, false };
        rc = mcdc_delta_commit(snap->table_path, build_run, &b, &o, &cr);
        if (rc == 0) {
            res->version = cr.version;
            res->n_removed = (int64_t)p->n_idx;
            res->n_added = (int64_t)n_added;
        } else if (rc == MCDC_ECONFLICT || rc == MCDC_ETIMEOUT) {
            /* no version of ours was written: nobody can ever reference the new files */
            for (size_t i = 0; i < n_added; i++) {
                char *abs = mcdc_delta_file_abspath(snap, added[i].path);
                if (abs && mcdc_storage_delete(abs) < 0)
                    mcdc_error_clear(); /* debris for vacuum */
                free(abs);
            }
        }
    }
    mcdc_delta_files_free(added, n_added);
    return rc;
}

/* ---- automatic compaction ----------------------------------------------------------- */

/* Can this build rewrite the table's files at all? (flat columns, no column mapping or
 * name mode, a table that takes removes) */
static bool rewritable(const mcdc_delta_snapshot *s)
{
    if ((s->column_mapping != MCDC_DELTA_CM_NONE && s->column_mapping != MCDC_DELTA_CM_NAME) ||
        !s->schema)
        return false;
    for (size_t i = 0; i < s->schema->n_fields; i++)
        if (s->schema->fields[i].type.kind != MCDC_DELTA_TYPE_PRIMITIVE)
            return false;
    return strcasecmp(mcdc_delta_snapshot_config(s, "delta.appendOnly", "false"), "true") != 0 &&
           strcasecmp(mcdc_delta_snapshot_config(s, "delta.enableChangeDataFeed", "false"),
                      "true") != 0;
}

const mcdc_delta_file **mcdc_delta__compact_inputs(const mcdc_delta_snapshot *snap,
                                                   const mcdc_delta_file *added, size_t n_added)
{
    const mcdc_delta_file **all = malloc((snap->n_files + n_added + 1) * sizeof *all);
    if (!all) {
        mcdc_error_set(MCDC_ENOMEM, "compaction: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < snap->n_files; i++)
        all[i] = &snap->files[i];
    for (size_t i = 0; i < n_added; i++)
        all[snap->n_files + i] = &added[i];
    return all;
}

bool mcdc_delta__compact_due(const mcdc_delta_snapshot *snap, const mcdc_delta_file *added,
                             size_t n_added)
{
    mcdc_delta__compact_settings s;
    mcdc_delta__compact_settings_of(&s, snap);
    if (!s.enabled || !rewritable(snap))
        return false;
    size_t n_small = 0;
    for (size_t i = 0; i < snap->n_files; i++)
        n_small += snap->files[i].size < s.min_file_bytes;
    for (size_t i = 0; i < n_added; i++)
        n_small += added[i].size < s.min_file_bytes;
    if (n_small < (size_t)s.min_num_files)
        return false;
    size_t n = snap->n_files + n_added;
    const mcdc_delta_file **all = mcdc_delta__compact_inputs(snap, added, n_added);
    if (!all) {
        mcdc_error_clear(); /* out of memory: no compaction this time */
        return false;
    }
    mcdc_delta__compact_plan p;
    int rc = mcdc_delta__compact_plan_auto(&p, all, n, &s);
    bool due = rc == 0 && p.n_groups > 0;
    if (rc < 0)
        mcdc_error_clear(); /* out of memory: no compaction this time */
    mcdc_delta__compact_plan_free(&p);
    free(all);
    return due;
}

int mcdc_delta_auto_compact(const char *path, mcdc_delta_optimize_result *result)
{
    mcdc_delta_optimize_result res = { -1, 0, 0, 0 };
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc == 0) {
        res.version = snap->version;
        mcdc_delta__compact_settings s;
        mcdc_delta__compact_settings_of(&s, snap);
        if (s.enabled && rewritable(snap)) {
            const mcdc_delta_file **all = mcdc_delta__compact_inputs(snap, NULL, 0);
            mcdc_delta__compact_plan p;
            memset(&p, 0, sizeof p);
            rc = all ? 0 : MCDC_ENOMEM;
            if (rc == 0)
                rc = mcdc_delta__compact_plan_auto(&p, all, snap->n_files, &s);
            if (rc == 0)
                rc = mcdc_delta__compact_run(snap, &p, true, 1, &res);
            mcdc_delta__compact_plan_free(&p);
            free(all);
        }
    }
    mcdc_delta_snapshot_free(snap);
    if (result)
        *result = res;
    return rc;
}
