/*
 * run/plan.c: a config's tables, expanded and resolved (mcdc_run_plan), and the check of
 * every table before anything is written.
 *
 * Guarantees: reads only. Each source is opened once to list its capture instances;
 * include patterns make one table per match (the heartbeat's instance only when named;
 * an instance a table names explicitly is skipped); defaults fill what a table leaves
 * out; templates {ci}, {schema}, {table} are filled; settings are parsed here so a bad
 * one is refused with its line; two tables with one target or one checkpoint are refused.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/pipeline.h"
#include "mcdc/run.h"
#include "mcdc/time.h"
#include "run_int.h"

#define HEARTBEAT "dbo_cdc_heartbeat"

static const char *const key_names[MCDC_RUN_NKEYS] = {
    "source", "capture_instance", "target", "app_id", "checkpoint", "facts", "control",
    "silver", "keys", "trigger", "granularity", "starting_lsn", "max_commits_per_batch",
    "bootstrap", "bootstrap_mode", "on_data_loss", "resnapshot_interval", "snapshot_on_switch",
    "lease"
};

const char *const mcdc_run__option_keys[] = {
    "failOnDataLoss", "includeCommandId", "sourceTimeZone", "schemaChangePolicy", NULL
};

const char *mcdc_run__key_name(int k)
{
    return key_names[k];
}

/* the value of key @p k for entry @p e (its own, else the default), and its line */
static const char *setting(const mcdc_run_config *c, const mcdc_run_entry *e, int k, int *line)
{
    if (e->value[k]) {
        *line = e->key_line[k];
        return e->value[k];
    }
    *line = c->defaults.key_line[k] ? c->defaults.key_line[k] : e->line;
    return c->defaults.value[k];
}

/* @p in with {ci}, {schema}, {table} filled. */
static int expand(char **out, const mcdc_run_config *c, int line, const char *key,
                  const char *in, const mcdc_capture_instance *ci)
{
    size_t cap = strlen(in) * 4 + 256, n = 0;
    char *s = malloc(cap);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (const char *p = in; *p;) {
        const char *v = NULL;
        size_t skip = 0;
        if (*p == '{') {
            const char *end = strchr(p, '}');
            size_t len = end ? (size_t)(end - p - 1) : 0;
            if (end && len == 2 && !strncmp(p + 1, "ci", 2))
                v = ci->name;
            else if (end && len == 6 && !strncmp(p + 1, "schema", 6))
                v = ci->source_schema;
            else if (end && len == 5 && !strncmp(p + 1, "table", 5))
                v = ci->source_table;
            else {
                free(s);
                mcdc_error_set(MCDC_EINVAL, "%s line %d: %s: unknown template '%.*s' in '%s'",
                               c->path, line, key, end ? (int)(len + 2) : (int)strlen(p), p, in);
                return mcdc_error_hint("templates: {ci}, {schema}, {table}");
            }
            skip = len + 2;
        }
        const char *add = v ? v : p;
        size_t alen = v ? strlen(v) : 1;
        if (n + alen + 1 > cap) {
            free(s);
            return mcdc_error_set(MCDC_EINVAL, "%s line %d: %s: too long", c->path, line, key);
        }
        memcpy(s + n, add, alen);
        n += alen;
        p += v ? skip : 1;
    }
    s[n] = 0;
    *out = s;
    return 0;
}

static bool matches_any(char *const *pats, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(pats[i], name, 0) == 0)
            return true;
    return false;
}

static bool named_exactly(char *const *pats, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(pats[i], name))
            return true;
    return false;
}

static int resolve_name(char **out, const char *warehouse, const char *name)
{
    char buf[MCDC_PATH_MAX];
    int rc = mcdc_warehouse_resolve(buf, warehouse, name);
    if (rc < 0)
        return rc;
    return (*out = strdup(buf)) ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

/* a setting's value is well-formed (so the run refuses it at its line, not later) */
static int check_value(const mcdc_run_config *c, int k, const char *v, int line)
{
    int rc = 0;
    if (k == MCDC_RUN_KEY_TRIGGER) {
        mcdc_trigger t;
        int64_t us;
        rc = mcdc_trigger_parse(&t, &us, v);
    } else if (k == MCDC_RUN_KEY_GRANULARITY) {
        mcdc_granularity g;
        rc = mcdc_finalize_granularity_parse(&g, v);
    } else if (k == MCDC_RUN_KEY_STARTING_LSN) {
        mcdc_start_kind s;
        mcdc_lsn l;
        rc = mcdc_start_parse(&s, &l, v);
    } else if (k == MCDC_RUN_KEY_BOOTSTRAP || k == MCDC_RUN_KEY_SNAPSHOT_ON_SWITCH) {
        bool b;
        if ((rc = mcdc_options_parse_bool(&b, v)) < 0)
            mcdc_error_hint("%s: true or false (the default)", key_names[k]);
    } else if (k == MCDC_RUN_KEY_LEASE) {
        int64_t us;
        char subject[80];
        snprintf(subject, sizeof subject, "'%s'", v);
        rc = mcdc_checkpoint_lease_parse(&us, v, subject);
    } else if (k == MCDC_RUN_KEY_BOOTSTRAP_MODE) {
        if (strcmp(v, "full") && strcmp(v, "chunked")) {
            rc = mcdc_error_set(MCDC_EINVAL, "'%s': expected full or chunked", v);
            mcdc_error_hint("bootstrap_mode: full (one read, the default) or chunked (a "
                            "snapshot read by `backfill`; needs facts)");
        }
    } else if (k == MCDC_RUN_KEY_ON_DATA_LOSS) {
        if (strcmp(v, "fail") && strcmp(v, "skip") && strcmp(v, "resnapshot")) {
            rc = mcdc_error_set(MCDC_EINVAL, "'%s': expected fail, skip or resnapshot", v);
            mcdc_error_hint("on_data_loss: fail (the default, the table stops with exit 4), "
                            "skip or resnapshot (both need facts)");
        }
    } else if (k == MCDC_RUN_KEY_RESNAPSHOT_INTERVAL) {
        int64_t us;
        if (strcmp(v, "0") && (rc = mcdc_duration_parse(&us, v)) < 0)
            mcdc_error_hint("resnapshot_interval: a duration (the default 7d, 12h) or 0 for "
                            "no limit");
    } else if (k == MCDC_RUN_KEY_MAX_COMMITS_PER_BATCH) {
        char *end = NULL;
        long long n = strtoll(v, &end, 10);
        if (!*v || *end || n < 1)
            rc = mcdc_error_set(MCDC_EINVAL, "'%s': not a positive integer", v);
    }
    if (rc < 0)
        mcdc_error_prefix("%s line %d: %s", c->path, line, key_names[k]);
    return rc;
}

static int add_table(mcdc_run_plan *p, size_t cap, const mcdc_run_config *c,
                     const mcdc_run_entry *e, size_t src, const mcdc_capture_instance *ci)
{
    if (p->n_tables >= cap)
        return mcdc_error_set(MCDC_ERROR, "plan: too many tables");
    mcdc_run_table *t = &p->tables[p->n_tables++];
    t->source = src;
    t->line = e->line;
    int rc;
    for (int k = 0; k < MCDC_RUN_NKEYS; k++) {
        int line;
        const char *v = k == MCDC_RUN_KEY_CAPTURE_INSTANCE ? ci->name : setting(c, e, k, &line);
        if (k == MCDC_RUN_KEY_CAPTURE_INSTANCE)
            line = e->line;
        if (!v) {
            if (k == MCDC_RUN_KEY_TARGET || k == MCDC_RUN_KEY_APP_ID || k == MCDC_RUN_KEY_CHECKPOINT) {
                mcdc_error_set(MCDC_EINVAL, "%s line %d: %s: missing", c->path, e->line,
                               key_names[k]);
                return mcdc_error_hint("give %s in the table or in defaults", key_names[k]);
            }
            continue;
        }
        if ((rc = expand(&t->value[k], c, line, key_names[k], v, ci)) < 0 ||
            (rc = check_value(c, k, t->value[k], line)) < 0)
            return rc;
    }
    const mcdc_run_entry *oe = e->n_options ? e : &c->defaults;
    mcdc_options *o = NULL;
    if ((rc = mcdc_options_new(&o, "option", mcdc_run__option_keys)) < 0)
        return rc;
    t->options = calloc(oe->n_options + 1, sizeof *t->options);
    for (size_t i = 0; t->options && rc == 0 && i < oe->n_options; i++) {
        const char *kv = oe->options[i];
        size_t klen = strcspn(kv, "=");
        bool known = false;
        for (int j = 0; mcdc_run__option_keys[j]; j++)
            known = known || (strlen(mcdc_run__option_keys[j]) == klen &&
                              !strncmp(mcdc_run__option_keys[j], kv, klen));
        if (!known) {
            rc = mcdc_error_set(MCDC_EINVAL, "%s line %d: options: unknown option '%.*s'",
                                c->path, oe->options_line, (int)klen, kv);
            mcdc_error_hint("options: failOnDataLoss, includeCommandId, sourceTimeZone, "
                            "schemaChangePolicy (the "
                            "other settings are keys of the table)");
        } else if ((rc = mcdc_options_add(o, kv)) == 0) {
            t->options[t->n_options] = strdup(kv);
            rc = t->options[t->n_options++] ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
        }
    }
    bool b;
    if (rc == 0 && ((rc = mcdc_options_get_bool(o, "failOnDataLoss", true, &b)) < 0 ||
                    (rc = mcdc_options_get_bool(o, "includeCommandId", true, &b)) < 0))
        mcdc_error_prefix("%s line %d: options", c->path, oe->options_line);
    const char *pol = rc == 0 ? mcdc_options_get_str(o, "schemaChangePolicy", NULL) : NULL;
    if (pol && strcmp(pol, "classify") && strcmp(pol, "fail")) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s line %d: options: schemaChangePolicy=%s: expected "
                            "classify or fail", c->path, oe->options_line, pol);
        mcdc_error_hint("schemaChangePolicy: classify (the default) or fail");
    }
    mcdc_options_free(o);
    if (!t->options && rc == 0)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc < 0)
        return rc;
    /* the data loss and snapshot settings, as `stream` checks its flags */
    const char *odl = t->value[MCDC_RUN_KEY_ON_DATA_LOSS], *bm = t->value[MCDC_RUN_KEY_BOOTSTRAP_MODE];
    bool boot = false, fodl = true, sos = false;
    if (t->value[MCDC_RUN_KEY_BOOTSTRAP])
        (void)mcdc_options_parse_bool(&boot, t->value[MCDC_RUN_KEY_BOOTSTRAP]);
    if (t->value[MCDC_RUN_KEY_SNAPSHOT_ON_SWITCH])
        (void)mcdc_options_parse_bool(&sos, t->value[MCDC_RUN_KEY_SNAPSHOT_ON_SWITCH]);
    for (size_t i = 0; i < t->n_options; i++)
        if (!strncmp(t->options[i], "failOnDataLoss=", 15))
            (void)mcdc_options_parse_bool(&fodl, t->options[i] + 15);
    bool has_fodl = false;
    for (size_t i = 0; i < t->n_options; i++)
        has_fodl = has_fodl || !strncmp(t->options[i], "failOnDataLoss=", 15);
    const char *why = NULL, *hint = NULL;
    if (odl && has_fodl && fodl != (strcmp(odl, "skip") != 0)) {
        why = "on_data_loss and options: failOnDataLoss disagree (failOnDataLoss: false is "
              "on_data_loss: skip)";
        hint = "give the setting once: on_data_loss";
    } else if (odl && strcmp(odl, "fail") && !t->value[MCDC_RUN_KEY_FACTS]) {
        why = !strcmp(odl, "skip") ? "on_data_loss skip needs facts (skipped changes are "
                                     "recorded there as a data_skipped row)"
                                   : "on_data_loss resnapshot needs facts (the re-snapshot and "
                                     "its gap are recorded there)";
        hint = "give facts: in the table or in defaults";
    } else if (t->value[MCDC_RUN_KEY_RESNAPSHOT_INTERVAL] && !(odl && !strcmp(odl, "resnapshot"))) {
        why = "resnapshot_interval needs on_data_loss: resnapshot";
        hint = "add on_data_loss: resnapshot, or drop resnapshot_interval";
    } else if (bm && !boot && !(odl && !strcmp(odl, "resnapshot"))) {
        why = "bootstrap_mode needs bootstrap: true (or on_data_loss: resnapshot, whose "
              "snapshots it takes)";
        hint = "add bootstrap: true, or drop bootstrap_mode";
    } else if (sos && !t->value[MCDC_RUN_KEY_FACTS]) {
        why = "snapshot_on_switch needs facts (the switch and the snapshot after it are "
              "recorded there)";
        hint = "give facts: in the table or in defaults";
    } else if (bm && !strcmp(bm, "chunked") && !t->value[MCDC_RUN_KEY_FACTS]) {
        why = "bootstrap_mode chunked needs facts (the snapshot's state is recorded there)";
        hint = "give facts: in the table or in defaults";
    }
    if (why) {
        mcdc_error_set(MCDC_EINVAL, "%s line %d: %s", c->path, e->line, why);
        return mcdc_error_hint("%s", hint);
    }
    if (t->value[MCDC_RUN_KEY_SILVER] && !t->value[MCDC_RUN_KEY_CONTROL]) {
        mcdc_error_set(MCDC_EINVAL, "%s line %d: silver: needs control (silver's position and "
                       "verdict live there)", c->path, e->line);
        return mcdc_error_hint("give control: in the table or in defaults");
    }
    if ((rc = resolve_name(&t->target_path, p->warehouse, t->value[MCDC_RUN_KEY_TARGET])) < 0 ||
        (t->value[MCDC_RUN_KEY_FACTS] &&
         (rc = resolve_name(&t->facts_path, p->warehouse, t->value[MCDC_RUN_KEY_FACTS])) < 0) ||
        (t->value[MCDC_RUN_KEY_CONTROL] &&
         (rc = resolve_name(&t->control_path, p->warehouse, t->value[MCDC_RUN_KEY_CONTROL])) < 0) ||
        (t->value[MCDC_RUN_KEY_SILVER] &&
         (rc = resolve_name(&t->silver_path, p->warehouse, t->value[MCDC_RUN_KEY_SILVER])) < 0)) {
        mcdc_error_prefix("%s line %d", c->path, e->line);
        return rc;
    }
    const char *ck = t->value[MCDC_RUN_KEY_CHECKPOINT];
    size_t len = strlen(c->dir) + strlen(ck) + 2;
    if (!(t->checkpoint_path = malloc(len)))
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (ck[0] == '/' || strstr(ck, "://") || !strcmp(c->dir, ".")) /* absolute, or s3:// */
        snprintf(t->checkpoint_path, len, "%s", ck);
    else
        snprintf(t->checkpoint_path, len, "%s/%s", c->dir, ck);
    return 0;
}

static int list_instances(mcdc_capture_instance **out, size_t *n, const mcdc_run_source *s)
{
    mcdc_source *src = NULL;
    int rc = mcdc_source_open(&src, s->spec);
    if (rc == 0)
        rc = src->ops->capture_instances(src, NULL, out, n);
    if (rc < 0)
        mcdc_error_prefix("source %s", s->name);
    mcdc_source_close(src);
    return rc;
}

/* mcdc_source_why_missing on a new connection to source @p s (its listing's is closed). */
static int why_missing(const mcdc_run_source *s, const char *ci)
{
    mcdc_source *src = NULL;
    int rc = mcdc_source_open(&src, s->spec);
    if (rc == 0)
        rc = mcdc_source_why_missing(src, ci);
    mcdc_source_close(src);
    if (rc == MCDC_ESOURCE)
        return mcdc_error_prefix("source %s", s->name);
    mcdc_error_clear();
    return 0;
}

/* The consistent sets: each target is a table of the plan, all of a set's tables come from
 * one configured source (the cut refuses tables of two databases) and share one control and
 * one facts table (the cut reads one of each). */
static int plan_consistent(mcdc_run_plan *p, const mcdc_run_config *c)
{
    if (!c->n_consistent)
        return 0;
    p->consistent_control = calloc(c->n_consistent, sizeof *p->consistent_control);
    p->consistent_facts = calloc(c->n_consistent, sizeof *p->consistent_facts);
    if (!p->consistent_control || !p->consistent_facts)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    p->n_consistent = c->n_consistent;
    for (size_t i = 0; i < c->n_consistent; i++) {
        const mcdc_run_consistent *cs = &c->consistent[i];
        const mcdc_run_table *first = NULL;
        for (size_t j = 0; j < cs->n_targets; j++) {
            const mcdc_run_table *t = NULL;
            for (size_t k = 0; k < p->n_tables && !t; k++)
                if (!strcmp(p->tables[k].value[MCDC_RUN_KEY_TARGET], cs->targets[j]))
                    t = &p->tables[k];
            if (!t) {
                mcdc_error_set(MCDC_EINVAL, "%s line %d: consistent set '%s' names %s, which is "
                               "no table's target", c->path, cs->line, cs->name, cs->targets[j]);
                return mcdc_error_hint("list targets as the tables name them (after templates)");
            }
            if (!t->control_path || !t->facts_path) {
                mcdc_error_set(MCDC_EINVAL, "%s line %d: consistent set '%s': table %s has no %s",
                               c->path, cs->line, cs->name, cs->targets[j],
                               t->control_path ? "facts" : "control");
                return mcdc_error_hint("the cut reads the facts and writes the control table: "
                                       "give every table of the set both");
            }
            if (!first) {
                first = t;
            } else if (strcmp(first->value[MCDC_RUN_KEY_SOURCE] ? first->value[MCDC_RUN_KEY_SOURCE] : "",
                              t->value[MCDC_RUN_KEY_SOURCE] ? t->value[MCDC_RUN_KEY_SOURCE] : "")) {
                /* LSNs of two databases are unrelated: the cut refuses tables of two
                 * sources (docs/decisions/0039-source-identity.md), so say it here */
                mcdc_error_set(MCDC_EINVAL, "%s line %d: consistent set '%s': %s comes from source "
                               "%s and %s from source %s", c->path, cs->line, cs->name,
                               first->value[MCDC_RUN_KEY_TARGET], first->value[MCDC_RUN_KEY_SOURCE],
                               cs->targets[j], t->value[MCDC_RUN_KEY_SOURCE]);
                return mcdc_error_hint("a consistent cut is of one database's tables: list in a set "
                                       "only tables of one source (one set per database)");
            } else if (strcmp(first->control_path, t->control_path) || strcmp(first->facts_path, t->facts_path)) {
                mcdc_error_set(MCDC_EINVAL, "%s line %d: consistent set '%s': %s and %s have other "
                               "control or facts tables", c->path, cs->line, cs->name,
                               first->value[MCDC_RUN_KEY_TARGET], cs->targets[j]);
                return mcdc_error_hint("give the tables of one set the same control and facts");
            }
        }
        if (!(p->consistent_control[i] = strdup(first->control_path)) ||
            !(p->consistent_facts[i] = strdup(first->facts_path)))
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    return 0;
}

int mcdc_run_plan_make(mcdc_run_plan **out, const mcdc_run_config *c, const char *warehouse)
{
    *out = NULL;
    mcdc_run_plan *p = calloc(1, sizeof *p);
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    p->config = c;
    p->warehouse = strdup(warehouse ? warehouse : c->warehouse ? c->warehouse : "./lake");
    mcdc_capture_instance **cis = calloc(c->n_sources + 1, sizeof *cis);
    size_t *n_cis = calloc(c->n_sources + 1, sizeof *n_cis);
    int rc = p->warehouse && cis && n_cis ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t s = 0; rc == 0 && s < c->n_sources; s++)
        rc = list_instances(&cis[s], &n_cis[s], &c->sources[s]);
    size_t cap = 0;
    for (size_t s = 0; s < c->n_sources; s++)
        cap += n_cis[s];
    cap += c->n_entries;
    if (rc == 0 && !(p->tables = calloc(cap + 1, sizeof *p->tables)))
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < c->n_entries; i++) {
        const mcdc_run_entry *e = &c->entries[i];
        int line;
        const char *sname = setting(c, e, MCDC_RUN_KEY_SOURCE, &line);
        size_t s = 0;
        while (strcmp(c->sources[s].name, sname) != 0)
            s++;
        if (e->value[MCDC_RUN_KEY_CAPTURE_INSTANCE]) {
            const char *want = e->value[MCDC_RUN_KEY_CAPTURE_INSTANCE];
            const mcdc_capture_instance *ci = NULL;
            for (size_t j = 0; j < n_cis[s]; j++)
                if (!strcmp(cis[s][j].name, want))
                    ci = &cis[s][j];
            if (!ci && (rc = why_missing(&c->sources[s], want)) < 0)
                break;
            if (!ci) {
                char have[1024] = "";
                for (size_t j = 0; j < n_cis[s]; j++)
                    snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s",
                             j ? ", " : "", cis[s][j].name);
                rc = mcdc_error_set(MCDC_EINVAL, "%s line %d: capture_instance: %s is not a "
                                    "capture instance of source %s", c->path,
                                    e->key_line[MCDC_RUN_KEY_CAPTURE_INSTANCE], want, sname);
                mcdc_error_hint("capture instances there: %s", have[0] ? have : "none");
                break;
            }
            rc = add_table(p, cap, c, e, s, ci);
            continue;
        }
        for (size_t j = 0; rc == 0 && j < n_cis[s]; j++) {
            const char *name = cis[s][j].name;
            if (!matches_any(e->include, e->n_include, name) ||
                matches_any(e->exclude, e->n_exclude, name))
                continue;
            if (!strcmp(name, HEARTBEAT) && !named_exactly(e->include, e->n_include, name))
                continue;
            bool explicit = false; /* an explicit table of the same instance wins */
            for (size_t k = 0; k < c->n_entries && !explicit; k++) {
                const mcdc_run_entry *o = &c->entries[k];
                int l2;
                const char *os = setting(c, o, MCDC_RUN_KEY_SOURCE, &l2);
                explicit = o->value[MCDC_RUN_KEY_CAPTURE_INSTANCE] && !strcmp(os, sname) &&
                           !strcmp(o->value[MCDC_RUN_KEY_CAPTURE_INSTANCE], name);
            }
            if (!explicit)
                rc = add_table(p, cap, c, e, s, &cis[s][j]);
        }
    }
    /* one target, one checkpoint per table */
    for (size_t i = 0; rc == 0 && i < p->n_tables; i++)
        for (size_t j = i + 1; rc == 0 && j < p->n_tables; j++) {
            const mcdc_run_table *a = &p->tables[i], *b = &p->tables[j];
            bool same_target = !strcmp(a->target_path, b->target_path);
            if (same_target || !strcmp(a->checkpoint_path, b->checkpoint_path)) {
                rc = mcdc_error_set(MCDC_EINVAL, "%s line %d: %s %s is also the %s of the "
                                    "table at line %d (%s)", c->path, b->line,
                                    same_target ? "target" : "checkpoint",
                                    same_target ? b->value[MCDC_RUN_KEY_TARGET]
                                                : b->value[MCDC_RUN_KEY_CHECKPOINT],
                                    same_target ? "target" : "checkpoint", a->line,
                                    a->value[MCDC_RUN_KEY_CAPTURE_INSTANCE]);
                mcdc_error_hint("give each table its own target and checkpoint (templates "
                                "{ci}, {schema}, {table} help with include:)");
            }
        }
    if (rc == 0 && p->n_tables == 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s: no capture instance matches the tables", c->path);
        mcdc_error_hint("check the include: patterns against mssql-cdc source check");
    }
    if (rc == 0)
        rc = plan_consistent(p, c);
    for (size_t s = 0; s < c->n_sources; s++)
        mcdc_capture_instances_free(cis ? cis[s] : NULL, n_cis ? n_cis[s] : 0);
    free(cis);
    free(n_cis);
    if (rc < 0) {
        mcdc_run_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void mcdc_run_plan_free(mcdc_run_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_tables; i++) {
        mcdc_run_table *t = &p->tables[i];
        for (int k = 0; k < MCDC_RUN_NKEYS; k++)
            free(t->value[k]);
        for (size_t j = 0; j < t->n_options; j++)
            free(t->options[j]);
        free(t->options);
        free(t->target_path);
        free(t->facts_path);
        free(t->control_path);
        free(t->silver_path);
        free(t->checkpoint_path);
    }
    free(p->tables);
    for (size_t i = 0; i < p->n_consistent; i++) {
        free(p->consistent_control ? p->consistent_control[i] : NULL);
        free(p->consistent_facts ? p->consistent_facts[i] : NULL);
    }
    free(p->consistent_control);
    free(p->consistent_facts);
    free(p->warehouse);
    free(p);
}

int mcdc_run__job_options(mcdc_job_options *jo, const mcdc_run_table *t, mcdc_source *src)
{
    mcdc_job_options init = MCDC_JOB_OPTIONS_INIT;
    *jo = init;
    mcdc_stream_options *so = &jo->stream;
    so->source = src;
    so->capture_instance = t->value[MCDC_RUN_KEY_CAPTURE_INSTANCE];
    so->target = t->value[MCDC_RUN_KEY_TARGET];
    so->target_path = t->target_path;
    so->facts = t->value[MCDC_RUN_KEY_FACTS];
    so->facts_path = t->facts_path;
    so->app_id = t->value[MCDC_RUN_KEY_APP_ID];
    so->checkpoint = t->checkpoint_path;
    int rc = 0;
    const char *v;
    if ((v = t->value[MCDC_RUN_KEY_TRIGGER]))
        rc = mcdc_trigger_parse(&so->trigger, &so->interval_us, v);
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_MAX_COMMITS_PER_BATCH]))
        so->max_commits_per_batch = strtoll(v, NULL, 10);
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_STARTING_LSN])) {
        rc = mcdc_start_parse(&so->starting, &so->starting_lsn, v);
        so->starting_given = true;
    }
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_BOOTSTRAP]))
        rc = mcdc_options_parse_bool(&so->bootstrap, v);
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_BOOTSTRAP_MODE]))
        so->bootstrap_mode = strcmp(v, "chunked") ? MCDC_BOOTSTRAP_FULL : MCDC_BOOTSTRAP_CHUNKED;
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_RESNAPSHOT_INTERVAL])) {
        if (!strcmp(v, "0"))
            so->resnapshot_interval_us = 0;
        else
            rc = mcdc_duration_parse(&so->resnapshot_interval_us, v);
    }
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_SNAPSHOT_ON_SWITCH]))
        rc = mcdc_options_parse_bool(&so->snapshot_on_switch, v);
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_LEASE]))
        rc = mcdc_checkpoint_lease_parse(&so->lease_us, v, v);
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_GRANULARITY]))
        rc = mcdc_finalize_granularity_parse(&jo->granularity, v);
    for (size_t i = 0; rc == 0 && i < t->n_options; i++) {
        const char *kv = t->options[i], *eq = strchr(kv, '=');
        size_t klen = (size_t)(eq - kv);
        bool b;
        if (!strncmp(kv, "failOnDataLoss", klen) && klen == 14)
            rc = mcdc_options_parse_bool(&b, eq + 1), so->fail_on_data_loss = b;
        else if (!strncmp(kv, "includeCommandId", klen) && klen == 16)
            rc = mcdc_options_parse_bool(&b, eq + 1), so->include_command_id = b;
        else if (!strncmp(kv, "sourceTimeZone", klen) && klen == 14)
            jo->source_time_zone = eq + 1;
        else if (!strncmp(kv, "schemaChangePolicy", klen) && klen == 18) {
            so->schema_change = strcmp(eq + 1, "fail") ? MCDC_SCHEMA_CHANGE_CLASSIFY
                                                       : MCDC_SCHEMA_CHANGE_FAIL;
        }
    }
    if (rc == 0 && (v = t->value[MCDC_RUN_KEY_ON_DATA_LOSS])) {
        so->on_data_loss = !strcmp(v, "skip")         ? MCDC_ON_DATA_LOSS_SKIP
                           : !strcmp(v, "resnapshot") ? MCDC_ON_DATA_LOSS_RESNAPSHOT
                                                      : MCDC_ON_DATA_LOSS_FAIL;
        if (so->on_data_loss == MCDC_ON_DATA_LOSS_SKIP)
            so->fail_on_data_loss = false;
    }
    jo->control = t->value[MCDC_RUN_KEY_CONTROL];
    jo->control_path = t->control_path;
    jo->silver = t->value[MCDC_RUN_KEY_SILVER];
    jo->silver_path = t->silver_path;
    jo->keys = t->value[MCDC_RUN_KEY_KEYS];
    return rc;
}

int mcdc_run_plan_check(const mcdc_run_plan *p,
                        void (*report)(const mcdc_run_table *t, int rc, void *payload),
                        void *payload)
{
    const mcdc_run_config *c = p->config;
    mcdc_source **srcs = calloc(c->n_sources + 1, sizeof *srcs);
    if (!srcs)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int first = 0;
    for (size_t i = 0; i < p->n_tables; i++) {
        const mcdc_run_table *t = &p->tables[i];
        int rc = 0;
        mcdc_log_set_context(t->value[MCDC_RUN_KEY_TARGET]);
        if (!srcs[t->source] && (rc = mcdc_source_open(&srcs[t->source],
                                                       c->sources[t->source].spec)) < 0)
            mcdc_error_prefix("source %s", c->sources[t->source].name);
        mcdc_job_options jo;
        mcdc_job *j = NULL;
        if (rc == 0 && (rc = mcdc_run__job_options(&jo, t, srcs[t->source])) == 0 &&
            (rc = mcdc_job_new(&j, &jo)) == 0)
            rc = mcdc_job_check(j);
        if (rc < 0)
            mcdc_error_prefix("table %s (line %d)", t->value[MCDC_RUN_KEY_TARGET], t->line);
        if (report)
            report(t, rc, payload);
        mcdc_job_free(j);
        mcdc_log_set_context(NULL);
        if (rc < 0 && first == 0) {
            first = rc;
            if (!report)
                break;
        }
    }
    for (size_t s = 0; s < c->n_sources; s++)
        mcdc_source_close(srcs[s]);
    free(srcs);
    return first;
}
