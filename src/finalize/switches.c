/*
 * finalize/switches.c: which streams have followed a capture-instance switch, from the
 * facts table.
 *
 * A DBA switching a table to a new capture instance (sql/switch_capture_instance.sql,
 * docs/guides/schema-changes.md) disables the old instance only once every stream of the
 * table has read the new one: its facts hold a capture_instance_switched row ("old ->
 * new", written in the first batch that reads the newer instance, at its start LSN S) and
 * a later batch (the batch after the cut committed, so nothing of the old instance is left
 * to read). This file folds the facts into one state per target: the newest switch row (by
 * batch id) and the newest batch of the same app id. Reads only; one scan of the facts.
 * `finalization show --facts` prints the states beside the verdicts.
 */
#include <stdlib.h>
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"

enum { C_TARGET, C_APP, C_EVENT, C_BATCH, C_MIN_LSN, C_DETAIL, N_C };

/* What the facts say of one (target, app id): its newest batch and newest switch. */
typedef struct fold {
    mcdc_switch_state st;   /* target, switch; last_batch: this app id's newest batch */
    char             *app;  /* owned; NULL for rows without an app id */
} fold;

static bool str_is(const mcdc_value *v, const char *s)
{
    if (v->is_null || !s)
        return v->is_null && !s;
    return strlen(s) == v->v.s.len && memcmp(v->v.s.ptr, s, v->v.s.len) == 0;
}

static char *dup_value(const mcdc_value *v)
{
    if (v->is_null)
        return NULL;
    char *s = malloc(v->v.s.len + 1);
    if (s) {
        memcpy(s, v->v.s.ptr, v->v.s.len);
        s[v->v.s.len] = 0;
    }
    return s;
}

static void fold_clear(fold *f)
{
    free(f->st.target);
    free(f->st.from_instance);
    free(f->st.to_instance);
    free(f->app);
}

/* "old -> new[; no longer captured ...]" into the state's instances and S. */
static int take_switch(fold *f, const mcdc_value *r)
{
    const char *d = r[C_DETAIL].is_null ? "" : r[C_DETAIL].v.s.ptr;
    size_t n = r[C_DETAIL].is_null ? 0 : r[C_DETAIL].v.s.len;
    const char *arrow = NULL;
    for (size_t i = 0; i + 4 <= n; i++)
        if (memcmp(d + i, " -> ", 4) == 0) {
            arrow = d + i;
            break;
        }
    if (!arrow)
        return 0; /* not a detail this engine writes: left out */
    const char *to = arrow + 4, *end = to;
    while (end < d + n && *end != ';')
        end++;
    char *from = strndup(d, (size_t)(arrow - d)), *into = strndup(to, (size_t)(end - to));
    if (!from || !into) {
        free(from);
        free(into);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    free(f->st.from_instance);
    free(f->st.to_instance);
    f->st.from_instance = from;
    f->st.to_instance = into;
    f->st.switch_batch = r[C_BATCH].v.i;
    size_t l = r[C_MIN_LSN].is_null ? 0 : r[C_MIN_LSN].v.s.len;
    if (l >= sizeof f->st.at_lsn)
        l = sizeof f->st.at_lsn - 1;
    memcpy(f->st.at_lsn, l ? r[C_MIN_LSN].v.s.ptr : "", l);
    f->st.at_lsn[l] = 0;
    return 0;
}

static int cmp_fold(const void *a, const void *b)
{
    const fold *x = a, *y = b;
    int c = strcmp(x->st.target, y->st.target);
    if (c)
        return c;
    return strcmp(x->app ? x->app : "", y->app ? y->app : "");
}

static int scan(fold **out, size_t *n_out, const char *facts_path)
{
    mcdc_delta_snapshot *snap = NULL;
    mcdc_delta_scan *sc = NULL;
    fold *f = NULL;
    size_t n = 0, cap = 0;
    int rc = mcdc_delta_snapshot_open(&snap, facts_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_EINVAL, "facts table %s does not exist", facts_path);
        rc = mcdc_error_hint("give the facts table the streams write (stream --facts)");
    }
    if (rc == 0 && strcmp(mcdc_delta_snapshot_config(snap, "mcdc.kind", "facts"), "facts") != 0) {
        mcdc_error_set(MCDC_EINVAL, "%s is not a facts table (mcdc.kind %s)", facts_path,
                       mcdc_delta_snapshot_config(snap, "mcdc.kind", ""));
        rc = mcdc_error_hint("give the facts table the streams write (stream --facts)");
    }
    if (rc == 0) {
        static const char *const cols[N_C] = { "target", "app_id", "event", "batch_id",
                                               "min_lsn", "detail" };
        mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
        so.columns = cols;
        so.n_columns = N_C;
        if ((rc = mcdc_delta_scan_open(&sc, snap, &so)) == MCDC_ENOTFOUND) {
            mcdc_error_set(MCDC_EINVAL, "%s is not a facts table (a column is missing)", facts_path);
            rc = mcdc_error_hint("give the facts table the streams write (stream --facts)");
        }
    }
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        bool is_batch = r[C_EVENT].is_null;
        bool is_switch = str_is(&r[C_EVENT], "capture_instance_switched");
        if (r[C_TARGET].is_null || r[C_BATCH].is_null || (!is_batch && !is_switch))
            continue;
        size_t k = 0;
        while (k < n && !(str_is(&r[C_TARGET], f[k].st.target) && str_is(&r[C_APP], f[k].app)))
            k++;
        if (k == n) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                fold *p = realloc(f, nc * sizeof *p);
                if (!p) {
                    rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                    break;
                }
                f = p;
                cap = nc;
            }
            memset(&f[n], 0, sizeof f[n]);
            f[n].st.switch_batch = f[n].st.last_batch = -1;
            f[n].st.target = dup_value(&r[C_TARGET]);
            f[n].app = dup_value(&r[C_APP]);
            n++;
            if (!f[n - 1].st.target || (!f[n - 1].app && !r[C_APP].is_null)) {
                rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
                break;
            }
        }
        int64_t b = r[C_BATCH].v.i;
        if (is_switch && b > f[k].st.switch_batch)
            rc = take_switch(&f[k], r);
        else if (is_batch && b > f[k].st.last_batch)
            f[k].st.last_batch = b;
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    *out = f;
    *n_out = n;
    return rc;
}

int mcdc_finalize_switches(mcdc_switch_state **out, size_t *n_out, const char *facts_path)
{
    MCDC_ASSERT_ARG(out && n_out && facts_path);
    *out = NULL;
    *n_out = 0;
    fold *f = NULL;
    size_t n = 0;
    int rc = scan(&f, &n, facts_path);
    mcdc_switch_state *a = rc == 0 && n ? calloc(n, sizeof *a) : NULL;
    if (rc == 0 && n && !a)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            fold_clear(&f[i]);
        free(f);
        return rc;
    }
    /* one state per target: the app id with the newest switch, its own newest batch; with
     * no switch, the newest batch of any app id */
    qsort(f, n, sizeof *f, cmp_fold);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i, best = i;
        int64_t last_any = -1;
        for (; j < n && strcmp(f[j].st.target, f[i].st.target) == 0; j++) {
            if (f[j].st.switch_batch > f[best].st.switch_batch)
                best = j;
            if (f[j].st.last_batch > last_any)
                last_any = f[j].st.last_batch;
        }
        a[m] = f[best].st;
        if (a[m].switch_batch < 0)
            a[m].last_batch = last_any;
        f[best].st.target = f[best].st.from_instance = f[best].st.to_instance = NULL;
        m++;
        for (size_t k = i; k < j; k++)
            fold_clear(&f[k]);
        i = j;
    }
    free(f);
    *out = a;
    *n_out = m;
    return 0;
}

void mcdc_switch_states_free(mcdc_switch_state *a, size_t n)
{
    for (size_t i = 0; a && i < n; i++) {
        free(a[i].target);
        free(a[i].from_instance);
        free(a[i].to_instance);
    }
    free(a);
}
