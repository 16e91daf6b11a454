/*
 * run/config.c: the YAML config of `mssql-cdc run` (sources, defaults, tables, warehouse,
 * metrics, on_error), parsed with libyaml into mcdc_run_config.
 *
 * Guarantees: only the shape is checked here (known keys, scalars where scalars belong,
 * lists where lists belong, a source per table, capture_instance or include); nothing is
 * opened. Every refusal names the file, the line and the key. Relative paths (`@FILE`s,
 * `sim:` databases, the warehouse) resolve against the config file's directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "mcdc/fs.h"
#include "mcdc/run.h"
#include "run_int.h"


#define TABLE_KEYS "source, capture_instance, include, exclude, target, app_id, checkpoint, " \
                   "facts, control, silver, keys, trigger, granularity, starting_lsn, "      \
                   "max_commits_per_batch, bootstrap, bootstrap_mode, on_data_loss, "        \
                   "resnapshot_interval, snapshot_on_switch, lease, options"

typedef struct ctx {
    yaml_document_t doc;
    const char     *path;
} ctx;

static int line_of(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

static int bad(const ctx *c, const yaml_node_t *n, const char *hint, const char *fmt, const char *a,
               const char *b)
{
    char what[512];
    snprintf(what, sizeof what, fmt, a, b ? b : "");
    mcdc_error_set(MCDC_EINVAL, "%s line %d: %s", c->path, line_of(n), what);
    return mcdc_error_hint("%s", hint);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node(ctx *c, int id)
{
    return yaml_document_get_node(&c->doc, id);
}

/* A scalar value of @p key, copied. */
static int take_scalar(ctx *c, yaml_node_t *v, const char *key, char **out)
{
    if (!scalar(v))
        return bad(c, v, "give it a single value (quote it when it has ':' or '{')",
                   "%s: expected a value, not a list or mapping", key, NULL);
    free(*out);
    *out = strdup(scalar(v));
    return *out ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

/* A pattern list: a sequence of scalars, or one scalar. */
static int take_list(ctx *c, yaml_node_t *v, const char *key, char ***out, size_t *n)
{
    if (scalar(v)) {
        *out = calloc(1, sizeof **out);
        if (!*out || !((*out)[0] = strdup(scalar(v))))
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        *n = 1;
        return 0;
    }
    if (v->type != YAML_SEQUENCE_NODE)
        return bad(c, v, "write it as a list: [\"dbo_*\"]", "%s: expected a list", key, NULL);
    size_t cap = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    *out = calloc(cap + 1, sizeof **out);
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
        yaml_node_t *e = node(c, *it);
        if (!scalar(e))
            return bad(c, e, "each pattern is one value", "%s: expected a list of names", key, NULL);
        if (!((*out)[(*n)++] = strdup(scalar(e))))
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    return 0;
}

/* A table entry (or defaults, where capture_instance, include and exclude are refused). */
static int take_entry(ctx *c, yaml_node_t *m, mcdc_run_entry *e, bool is_defaults)
{
    const char *where = is_defaults ? "defaults" : "a table";
    if (m->type != YAML_MAPPING_NODE)
        return bad(c, m, "write it as key: value lines", "%s: expected a mapping", where, NULL);
    e->line = line_of(m);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
        const char *key = scalar(k);
        if (!key)
            return bad(c, k, "keys are names", "%s: a key that is not a name", where, NULL);
        int rc;
        for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
            const char *before = scalar(node(c, q->key));
            if (before && !strcmp(before, key))
                return bad(c, k, "give each key once", "%s: given twice in %s", key, where);
        }
        if (!strcmp(key, "include") || !strcmp(key, "exclude")) {
            if (is_defaults)
                return bad(c, k, "give include and exclude in a table",
                           "defaults: %s is not a default", key, NULL);
            bool inc = key[0] == 'i';
            if ((rc = take_list(c, v, key, inc ? &e->include : &e->exclude,
                                inc ? &e->n_include : &e->n_exclude)) < 0)
                return rc;
            continue;
        }
        if (!strcmp(key, "options")) {
            if (v->type != YAML_MAPPING_NODE)
                return bad(c, v, "write it as a mapping: options: {failOnDataLoss: \"false\"}",
                           "options: expected a mapping of source options", NULL, NULL);
            e->options_line = line_of(k);
            size_t cap = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
            e->options = calloc(cap + 1, sizeof *e->options);
            if (!e->options)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                const char *ok = scalar(node(c, q->key)), *ov = scalar(node(c, q->value));
                if (!ok || !ov)
                    return bad(c, node(c, q->key), "each option is KEY: VALUE",
                               "options: expected KEY: VALUE", NULL, NULL);
                size_t len = strlen(ok) + strlen(ov) + 2;
                char *kv = malloc(len);
                if (!kv)
                    return mcdc_error_set(MCDC_ENOMEM, "out of memory");
                snprintf(kv, len, "%s=%s", ok, ov);
                e->options[e->n_options++] = kv;
            }
            continue;
        }
        int i = 0;
        while (i < MCDC_RUN_NKEYS && strcmp(mcdc_run__key_name(i), key) != 0)
            i++;
        if (i == MCDC_RUN_NKEYS)
            return bad(c, k, "keys of a table: " TABLE_KEYS, "unknown key '%s' in %s", key, where);
        if (is_defaults && i == MCDC_RUN_KEY_CAPTURE_INSTANCE)
            return bad(c, k, "name the capture instance in each table (or use include)",
                       "defaults: %s is not a default", key, NULL);
        if ((rc = take_scalar(c, v, key, &e->value[i])) < 0)
            return rc;
        e->key_line[i] = line_of(k);
    }
    return 0;
}

/* `relative` resolved against the config's directory (absolute paths kept). */
static char *resolve_path(const char *dir, const char *relative)
{
    size_t len = strlen(dir) + strlen(relative) + 2;
    char *s = malloc(len);
    if (!s)
        return NULL;
    if (relative[0] == '/' || strstr(relative, "://") || !strcmp(dir, ".")) /* absolute, s3:// */
        snprintf(s, len, "%s", relative);
    else
        snprintf(s, len, "%s/%s", dir, relative);
    return s;
}

/* A source spec with its path resolved: sim:PATH and @FILE. */
static char *resolve_spec(const char *dir, const char *spec)
{
    if (!strncmp(spec, "sim:", 4) || spec[0] == '@') {
        size_t pre = spec[0] == '@' ? 1 : 4;
        char *p = resolve_path(dir, spec + pre);
        if (!p)
            return NULL;
        size_t len = strlen(p) + pre + 1;
        char *s = malloc(len);
        if (s)
            snprintf(s, len, "%.*s%s", (int)pre, spec, p);
        free(p);
        return s;
    }
    return strdup(spec);
}

static int take_sources(ctx *c, yaml_node_t *m, mcdc_run_config *cfg)
{
    if (m->type != YAML_MAPPING_NODE)
        return bad(c, m, "write it as NAME: {source: SPEC}", "sources: expected a mapping", NULL, NULL);
    size_t cap = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
    cfg->sources = calloc(cap + 1, sizeof *cfg->sources);
    if (!cfg->sources)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
        const char *name = scalar(k), *spec = scalar(v);
        if (!name)
            return bad(c, k, "name each source", "sources: a key that is not a name", NULL, NULL);
        if (!spec && v->type == YAML_MAPPING_NODE) {
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                const char *sk = scalar(node(c, q->key));
                if (!sk || strcmp(sk, "source") != 0)
                    return bad(c, node(c, q->key), "a source has one key: source",
                               "unknown key '%s' in source %s", sk ? sk : "?", name);
                if (!(spec = scalar(node(c, q->value))))
                    return bad(c, node(c, q->value), "give sim:PATH, odbc:... or @FILE",
                               "source %s: expected a value", name, NULL);
            }
        }
        if (!spec || !*spec)
            return bad(c, v, "give source: sim:PATH, odbc:CONNECTION-STRING or @FILE",
                       "source %s: no source", name, NULL);
        for (size_t i = 0; i < cfg->n_sources; i++)
            if (!strcmp(cfg->sources[i].name, name))
                return bad(c, k, "give each source one name", "source %s is defined twice",
                           name, NULL);
        mcdc_run_source *s = &cfg->sources[cfg->n_sources++];
        s->name = strdup(name);
        s->spec = resolve_spec(cfg->dir, spec);
        s->line = line_of(k);
        if (!s->name || !s->spec)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    return 0;
}

static int take_top(ctx *c, yaml_node_t *root, mcdc_run_config *cfg)
{
    int rc;
    bool has_tables = false;
    if (!root || root->type != YAML_MAPPING_NODE) {
        mcdc_error_set(MCDC_EINVAL, "%s: expected a mapping with sources: and tables:", c->path);
        return mcdc_error_hint("see the config format in docs/guides/operating.md");
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
        const char *key = scalar(k);
        if (!key)
            return bad(c, k, "keys are names", "a key that is not a name", NULL, NULL);
        for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < p; q++) {
            const char *before = scalar(node(c, q->key));
            if (before && !strcmp(before, key))
                return bad(c, k, "give each key once", "%s: given twice", key, NULL);
        }
        if (!strcmp(key, "sources")) {
            if ((rc = take_sources(c, v, cfg)) < 0)
                return rc;
        } else if (!strcmp(key, "defaults")) {
            if ((rc = take_entry(c, v, &cfg->defaults, true)) < 0)
                return rc;
        } else if (!strcmp(key, "tables")) {
            if (v->type != YAML_SEQUENCE_NODE)
                return bad(c, v, "write each table as a list item (- source: ...)",
                           "tables: expected a list", NULL, NULL);
            size_t cap = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
            cfg->entries = calloc(cap + 1, sizeof *cfg->entries);
            if (!cfg->entries)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
                if ((rc = take_entry(c, node(c, *it), &cfg->entries[cfg->n_entries++], false)) < 0)
                    return rc;
            has_tables = true;
        } else if (!strcmp(key, "warehouse")) {
            char *w = NULL;
            if ((rc = take_scalar(c, v, key, &w)) < 0)
                return rc;
            cfg->warehouse = strstr(w, "://") ? strdup(w) : resolve_path(cfg->dir, w);
            free(w);
            if (!cfg->warehouse)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        } else if (!strcmp(key, "state_dir")) {
            char *d = NULL;
            if ((rc = take_scalar(c, v, key, &d)) < 0)
                return rc;
            free(cfg->state_dir);
            cfg->state_dir = resolve_path(cfg->dir, d);
            free(d);
            if (!cfg->state_dir)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        } else if (!strcmp(key, "on_error")) {
            const char *s = scalar(v);
            if (!s || (strcmp(s, "stop-table") && strcmp(s, "stop-all")))
                return bad(c, v, "on_error: stop-table (the default) or stop-all",
                           "on_error: expected stop-table or stop-all", NULL, NULL);
            cfg->stop_all = !strcmp(s, "stop-all");
        } else if (!strcmp(key, "consistent")) {
            if (v->type != YAML_MAPPING_NODE)
                return bad(c, v, "write it as consistent: {NAME: [bronze.a, bronze.b]}",
                           "consistent: expected a mapping of names to lists of targets", NULL, NULL);
            size_t cap = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
            cfg->consistent = calloc(cap + 1, sizeof *cfg->consistent);
            if (!cfg->consistent)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                yaml_node_t *nk = node(c, q->key), *nv = node(c, q->value);
                const char *name = scalar(nk);
                if (!name || !*name || strchr(name, ':'))
                    return bad(c, nk, "name each set with a word (its control row is consistent:NAME)",
                               "consistent: a set needs a name without ':'", NULL, NULL);
                mcdc_run_consistent *cs = &cfg->consistent[cfg->n_consistent++];
                cs->line = line_of(nk);
                if (!(cs->name = strdup(name)))
                    return mcdc_error_set(MCDC_ENOMEM, "out of memory");
                if ((rc = take_list(c, nv, name, &cs->targets, &cs->n_targets)) < 0)
                    return rc;
                if (cs->n_targets < 2)
                    return bad(c, nv, "list two or more tables: a cut of one table is its own verdict",
                               "consistent: set '%s' lists fewer than two tables", name, NULL);
            }
        } else if (!strcmp(key, "metrics")) {
            if (v->type != YAML_MAPPING_NODE)
                return bad(c, v, "write it as metrics: {listen: HOST:PORT}",
                           "metrics: expected a mapping", NULL, NULL);
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                const char *mk = scalar(node(c, q->key));
                if (!mk || strcmp(mk, "listen") != 0)
                    return bad(c, node(c, q->key), "metrics has one key: listen",
                               "unknown key '%s' in metrics", mk ? mk : "?", NULL);
                if ((rc = take_scalar(c, node(c, q->value), "listen", &cfg->metrics_listen)) < 0)
                    return rc;
            }
        } else {
            return bad(c, k, "top-level keys: sources, defaults, tables, warehouse, state_dir, "
                       "metrics, on_error, consistent", "unknown key '%s'", key, NULL);
        }
    }
    if (!has_tables || cfg->n_entries == 0) {
        mcdc_error_set(MCDC_EINVAL, "%s: no tables", c->path);
        return mcdc_error_hint("list the tables to run under tables:");
    }
    /* each table names a known source, and one capture instance or include patterns */
    for (size_t i = 0; i < cfg->n_entries; i++) {
        mcdc_run_entry *e = &cfg->entries[i];
        const char *src = e->value[MCDC_RUN_KEY_SOURCE] ? e->value[MCDC_RUN_KEY_SOURCE]
                                                         : cfg->defaults.value[MCDC_RUN_KEY_SOURCE];
        int line = e->value[MCDC_RUN_KEY_SOURCE] ? e->key_line[MCDC_RUN_KEY_SOURCE] : e->line;
        if (!src) {
            mcdc_error_set(MCDC_EINVAL, "%s line %d: source: missing", c->path, e->line);
            return mcdc_error_hint("name one of the sources: in the table or in defaults");
        }
        bool known = false;
        for (size_t s = 0; s < cfg->n_sources; s++)
            known = known || !strcmp(cfg->sources[s].name, src);
        if (!known) {
            mcdc_error_set(MCDC_EINVAL, "%s line %d: source: '%s' is not among sources:",
                           c->path, line, src);
            return mcdc_error_hint("define it under sources: (NAME: {source: SPEC})");
        }
        bool ci = e->value[MCDC_RUN_KEY_CAPTURE_INSTANCE] != NULL;
        if (ci == (e->n_include > 0)) {
            mcdc_error_set(MCDC_EINVAL, "%s line %d: %s", c->path, e->line,
                           ci ? "capture_instance and include: give one or the other"
                              : "capture_instance: missing (or include:)");
            return mcdc_error_hint("a table names one capture instance, or include: patterns "
                                   "for one table per matching instance");
        }
        if (ci && e->n_exclude) {
            mcdc_error_set(MCDC_EINVAL, "%s line %d: exclude: needs include:", c->path, e->line);
            return mcdc_error_hint("exclude narrows an include");
        }
    }
    return 0;
}

int mcdc_run_config_load(mcdc_run_config **out, const char *path)
{
    *out = NULL;
    /* the config is a local file: its relative paths are relative to its directory */
    mcdc_buf text = MCDC_BUF_INIT(16 << 20);
    int frc = mcdc_fs_read_all(&text, path);
    if (frc < 0) {
        mcdc_buf_dispose(&text);
        mcdc_error_prefix("config");
        return mcdc_error_hint("pass the path of a YAML config (--config FILE)");
    }
    mcdc_run_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        mcdc_buf_dispose(&text);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    cfg->path = strdup(path);
    const char *slash = strrchr(path, '/');
    cfg->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    ctx c = { .path = path };
    yaml_parser_t parser;
    int rc = 0;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)(text.ptr ? text.ptr : ""), text.len);
    if (!yaml_parser_load(&parser, &c.doc)) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s line %d: %s%s%s", path,
                            (int)(parser.problem_mark.line + 1),
                            parser.problem ? parser.problem : "not YAML",
                            parser.context ? " " : "", parser.context ? parser.context : "");
        mcdc_error_hint("fix the YAML syntax (indentation, quotes around values with ': ')");
        yaml_parser_delete(&parser);
        mcdc_buf_dispose(&text);
        mcdc_run_config_free(cfg);
        return rc;
    }
    yaml_parser_delete(&parser);
    mcdc_buf_dispose(&text);
    rc = take_top(&c, yaml_document_get_root_node(&c.doc), cfg);
    yaml_document_delete(&c.doc);
    if (rc == 0 && !cfg->state_dir && !(cfg->state_dir = resolve_path(cfg->dir, "run-state")))
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc < 0) {
        mcdc_run_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

static void entry_free(mcdc_run_entry *e)
{
    for (int i = 0; i < MCDC_RUN_NKEYS; i++)
        free(e->value[i]);
    for (size_t i = 0; i < e->n_include; i++)
        free(e->include[i]);
    for (size_t i = 0; i < e->n_exclude; i++)
        free(e->exclude[i]);
    for (size_t i = 0; i < e->n_options; i++)
        free(e->options[i]);
    free(e->include);
    free(e->exclude);
    free(e->options);
}

void mcdc_run_config_free(mcdc_run_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_sources; i++) {
        free(c->sources[i].name);
        free(c->sources[i].spec);
    }
    free(c->sources);
    entry_free(&c->defaults);
    for (size_t i = 0; i < c->n_entries; i++)
        entry_free(&c->entries[i]);
    free(c->entries);
    for (size_t i = 0; i < c->n_consistent; i++) {
        free(c->consistent[i].name);
        for (size_t j = 0; j < c->consistent[i].n_targets; j++)
            free(c->consistent[i].targets[j]);
        free(c->consistent[i].targets);
    }
    free(c->consistent);
    free(c->warehouse);
    free(c->metrics_listen);
    free(c->state_dir);
    free(c->path);
    free(c->dir);
    free(c);
}
