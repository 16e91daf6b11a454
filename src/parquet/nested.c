/*
 * parquet/nested.c: nested schemas (structs, lists, maps) and rows given as JSON, shredded
 * into repetition and definition levels (Dremel) for the leaf columns.
 *
 * Shapes written (LogicalTypes.md, as Spark writes them):
 *   <opt|req> group NAME (LIST) { repeated group list { <element> } }
 *   <opt|req> group NAME (MAP)  { repeated group key_value { required key; <value> } }
 * Levels: an optional node adds 1 to the definition level; a list's or map's repeated
 * group adds 1 to both levels. A null or missing node gives every leaf below it one entry
 * at the parent's definition level; an empty list or map gives one entry at the list's
 * own level; a row's first entry in every leaf has repetition level 0.
 * A row is shredded whole into w->staged first, so a value that does not fit refuses the
 * row before any column sees it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/time.h"
#include "parquet/writer.h"

/* ---------------------------------------------------------------- nodes */

static mcdc_parquet_node *node_new(const char *name, int kind, bool nullable)
{
    mcdc_parquet_node *n = calloc(1, sizeof *n);
    if (!n || !(n->name = strdup(name ? name : ""))) {
        free(n);
        return NULL;
    }
    n->kind = kind;
    n->nullable = nullable;
    return n;
}

static int node_push(mcdc_parquet_node *p, mcdc_parquet_node *kid)
{
    if (p->n_kids == p->kids_cap) {
        size_t ncap = p->kids_cap ? p->kids_cap * 2 : 4;
        mcdc_parquet_node **k = realloc(p->kids, ncap * sizeof *k);
        if (!k)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        p->kids = k;
        p->kids_cap = ncap;
    }
    p->kids[p->n_kids++] = kid;
    return 0;
}

static int rename_node(mcdc_parquet_node *n, const char *name)
{
    char *s = strdup(name);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    free(n->name);
    n->name = s;
    return 0;
}

mcdc_parquet_node *mcdc_parquet_node_leaf(const char *name, const mcdc_column *type)
{
    if (!type || type->type < MCDC_TYPE_BOOLEAN || type->type > MCDC_TYPE_TIMESTAMP_NTZ ||
        (type->type == MCDC_TYPE_DECIMAL &&
         (type->precision < 1 || type->precision > 38 || type->scale < 0 ||
          type->scale > type->precision))) {
        mcdc_error_set(MCDC_EINVAL, "parquet node %s: not a valid leaf type", name ? name : "");
        return NULL;
    }
    mcdc_parquet_node *n = node_new(name, MCDC_PQ_NODE_LEAF, type->nullable);
    if (n) {
        n->type = *type;
        n->type.name = NULL;
    }
    return n;
}

mcdc_parquet_node *mcdc_parquet_node_struct(const char *name, bool nullable)
{
    return node_new(name, MCDC_PQ_NODE_STRUCT, nullable);
}

mcdc_parquet_node *mcdc_parquet_node_list(const char *name, bool nullable,
                                          mcdc_parquet_node *element)
{
    mcdc_parquet_node *n = element ? node_new(name, MCDC_PQ_NODE_LIST, nullable) : NULL;
    if (!n || rename_node(element, "element") < 0 || node_push(n, element) < 0) {
        mcdc_parquet_node_free(n);
        mcdc_parquet_node_free(element);
        return NULL;
    }
    return n;
}

mcdc_parquet_node *mcdc_parquet_node_map(const char *name, bool nullable, mcdc_parquet_node *key,
                                         mcdc_parquet_node *value)
{
    mcdc_parquet_node *n = key && value ? node_new(name, MCDC_PQ_NODE_MAP, nullable) : NULL;
    if (!n || key->kind != MCDC_PQ_NODE_LEAF || rename_node(key, "key") < 0 ||
        rename_node(value, "value") < 0) {
        mcdc_parquet_node_free(n);
        mcdc_parquet_node_free(key);
        mcdc_parquet_node_free(value);
        if (n)
            mcdc_error_set(MCDC_EINVAL, "parquet node %s: map keys must be leaves", name);
        return NULL;
    }
    key->nullable = false;
    key->type.nullable = false;
    if (node_push(n, key) < 0) {
        mcdc_parquet_node_free(n);
        mcdc_parquet_node_free(key);
        mcdc_parquet_node_free(value);
        return NULL;
    }
    if (node_push(n, value) < 0) {
        mcdc_parquet_node_free(n);
        mcdc_parquet_node_free(value);
        return NULL;
    }
    return n;
}

int mcdc_parquet_node_add(mcdc_parquet_node *parent, mcdc_parquet_node *child)
{
    int rc = 0;
    if (!parent || !child || parent->kind != MCDC_PQ_NODE_STRUCT)
        rc = mcdc_error_set(MCDC_EINVAL, "parquet node: fields can only be added to a struct");
    for (size_t i = 0; rc == 0 && i < parent->n_kids; i++)
        if (strcmp(parent->kids[i]->name, child->name) == 0)
            rc = mcdc_error_set(MCDC_EINVAL, "parquet node %s: field %s appears twice",
                                parent->name, child->name);
    if (rc == 0)
        rc = node_push(parent, child);
    if (rc < 0)
        mcdc_parquet_node_free(child);
    return rc;
}

void mcdc_parquet_node_free(mcdc_parquet_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n_kids; i++)
        mcdc_parquet_node_free(n->kids[i]);
    free(n->kids);
    free(n->name);
    free(n);
}

/* ---------------------------------------------------------------- opening */

static mcdc_parquet_node *node_copy(const mcdc_parquet_node *src)
{
    mcdc_parquet_node *n = node_new(src->name, src->kind, src->nullable);
    if (!n)
        return NULL;
    n->type = src->type;
    for (size_t i = 0; i < src->n_kids; i++) {
        mcdc_parquet_node *k = node_copy(src->kids[i]);
        if (!k || node_push(n, k) < 0) {
            mcdc_parquet_node_free(k);
            mcdc_parquet_node_free(n);
            return NULL;
        }
    }
    return n;
}

#define MAX_DEPTH 100

/* Walk the tree: levels, schema elements and leaf columns, depth first. */
static int build(mcdc_parquet_writer *w, mcdc_parquet_node *n, int parent_def, int parent_rep,
                 const char **path, size_t depth)
{
    if (depth >= MAX_DEPTH)
        return mcdc_error_set(MCDC_EINVAL, "parquet schema nested deeper than %d", MAX_DEPTH);
    if (n->kind == MCDC_PQ_NODE_STRUCT && n->n_kids == 0)
        return mcdc_error_set(MCDC_EINVAL, "parquet node %s: a struct needs at least one field",
                              n->name);
    path[depth] = n->name;
    n->def = parent_def + (n->nullable ? 1 : 0);
    n->rep = parent_rep;
    n->first_leaf = w->n_cols;
    mcdc_pq_schema_element e = { .name = n->name, .has_repetition = true,
                                 .repetition = n->nullable ? MCDC_PQ_OPTIONAL : MCDC_PQ_REQUIRED };
    int rc;
    if (n->kind == MCDC_PQ_NODE_LEAF) {
        mcdc_pq_column *c = &w->cols[w->n_cols];
        if ((rc = mcdc_pq__column_init(c, &n->type, path, depth + 1, n->def, parent_rep,
                                       &w->cfg)) < 0) {
            w->n_cols++;
            return rc;
        }
        w->n_cols++;
        mcdc_pq__column_schema_element(c, n->name, n->nullable, &e);
        n->n_leaves = 1;
        return mcdc_pq__writer_add_element(w, &e);
    }
    e.has_num_children = true;
    e.num_children = (int32_t)n->n_kids;
    if (n->kind == MCDC_PQ_NODE_STRUCT) {
        if ((rc = mcdc_pq__writer_add_element(w, &e)) < 0)
            return rc;
        for (size_t i = 0; i < n->n_kids; i++)
            if ((rc = build(w, n->kids[i], n->def, parent_rep, path, depth + 1)) < 0)
                return rc;
    } else {
        bool is_list = n->kind == MCDC_PQ_NODE_LIST;
        e.num_children = 1;
        e.has_converted = true;
        e.converted_type = is_list ? MCDC_PQ_CT_LIST : MCDC_PQ_CT_MAP;
        e.logical.kind = is_list ? MCDC_PQ_LT_LIST : MCDC_PQ_LT_MAP;
        if ((rc = mcdc_pq__writer_add_element(w, &e)) < 0)
            return rc;
        const char *gname = is_list ? "list" : "key_value";
        mcdc_pq_schema_element g = { .name = (char *)gname, .has_repetition = true,
                                     .repetition = MCDC_PQ_REPEATED, .has_num_children = true,
                                     .num_children = (int32_t)n->n_kids };
        if ((rc = mcdc_pq__writer_add_element(w, &g)) < 0)
            return rc;
        n->rep = parent_rep + 1;
        if (depth + 1 >= MAX_DEPTH)
            return mcdc_error_set(MCDC_EINVAL, "parquet schema nested deeper than %d", MAX_DEPTH);
        path[depth + 1] = gname;
        for (size_t i = 0; i < n->n_kids; i++)
            if ((rc = build(w, n->kids[i], n->def + 1, n->rep, path, depth + 2)) < 0)
                return rc;
    }
    n->n_leaves = w->n_cols - n->first_leaf;
    return 0;
}

static size_t count_leaves(const mcdc_parquet_node *n)
{
    if (n->kind == MCDC_PQ_NODE_LEAF)
        return 1;
    size_t k = 0;
    for (size_t i = 0; i < n->n_kids; i++)
        k += count_leaves(n->kids[i]);
    return k;
}

int mcdc_parquet_writer_open_nested(mcdc_parquet_writer **out, const char *path,
                                    const mcdc_parquet_node *root,
                                    const mcdc_parquet_writer_options *opts)
{
    *out = NULL;
    if (!root || root->kind != MCDC_PQ_NODE_STRUCT || root->n_kids == 0)
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: the root must be a struct with fields");
    mcdc_parquet_writer *w;
    int rc = mcdc_pq__writer_create(&w, path, opts);
    if (rc < 0)
        return rc;
    const char *names[MAX_DEPTH + 1];
    if (!(w->root = node_copy(root)) ||
        !(w->cols = calloc(count_leaves(root), sizeof *w->cols))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto fail;
    }
    w->root->nullable = false;
    w->elems[0].num_children = (int32_t)root->n_kids;
    /* The root's fields are the top-level columns: build them at depth 0. */
    w->root->def = 0;
    w->root->rep = 0;
    for (size_t i = 0; i < w->root->n_kids; i++)
        if ((rc = build(w, w->root->kids[i], 0, 0, names, 0)) < 0)
            goto fail;
    w->root->first_leaf = 0;
    w->root->n_leaves = w->n_cols;
    *out = w;
    return 0;
fail:
    mcdc_parquet_writer_free(w);
    return rc;
}

/* ---------------------------------------------------------------- shredding */

static int stage(mcdc_parquet_writer *w, size_t leaf, int rep, int def, const mcdc_value *v)
{
    if (w->n_staged == w->staged_cap) {
        size_t ncap = w->staged_cap ? w->staged_cap * 2 : 64;
        if (ncap > ((size_t)1 << 26))
            return mcdc_error_set(MCDC_EINVAL, "a nested row of more than %zu values", ncap / 2);
        mcdc_pq_staged *s = realloc(w->staged, ncap * sizeof *s);
        if (!s)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        w->staged = s;
        w->staged_cap = ncap;
    }
    mcdc_pq_staged *s = &w->staged[w->n_staged++];
    s->leaf = leaf;
    s->rep = rep;
    s->def = def;
    if (v)
        s->v = *v;
    else
        memset(&s->v, 0, sizeof s->v), s->v.is_null = true;
    return 0;
}

static int stage_nulls(mcdc_parquet_writer *w, const mcdc_parquet_node *n, int rep, int def)
{
    for (size_t i = 0; i < n->n_leaves; i++) {
        int rc = stage(w, n->first_leaf + i, rep, def, NULL);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int bad(const mcdc_parquet_node *n, const char *why)
{
    return mcdc_error_set(MCDC_EINVAL, "field %s: %s", n->name, why);
}

/* A leaf value from text: strings, binaries, decimals, dates, timestamps, numbers. */
static int leaf_from_text(const mcdc_parquet_node *n, const char *s, size_t len, mcdc_value *v)
{
    memset(v, 0, sizeof *v);
    switch (n->type.type) {
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        v->v.s.ptr = s;
        v->v.s.len = len;
        return 0;
    case MCDC_TYPE_DECIMAL:
        return mcdc_decimal_parse(&v->v.dec, s, len, n->type.precision, n->type.scale);
    case MCDC_TYPE_DATE: {
        int y, m, d, used = 0;
        if (len != strlen(s) || sscanf(s, "%d-%d-%d%n", &y, &m, &d, &used) != 3 ||
            (size_t)used != len || m < 1 || m > 12 || d < 1 || d > 31)
            return bad(n, "expected a date YYYY-MM-DD");
        v->v.i = mcdc_days_from_civil(y, (unsigned)m, (unsigned)d);
        return 0;
    }
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ:
        if (len != strlen(s))
            return bad(n, "expected a timestamp");
        return mcdc_time_parse(&v->v.i, s);
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE: {
        double d;
        if (strcmp(s, "NaN") == 0)
            d = __builtin_nan("");
        else if (strcmp(s, "Infinity") == 0)
            d = __builtin_inf();
        else if (strcmp(s, "-Infinity") == 0)
            d = -__builtin_inf();
        else
            return bad(n, "expected a number");
        if (n->type.type == MCDC_TYPE_FLOAT)
            v->v.f = (float)d;
        else
            v->v.d = d;
        return 0;
    }
    default:
        return bad(n, "expected a JSON value of its type, not a string");
    }
}

static int leaf_from_json(const mcdc_parquet_node *n, const json_t *j, mcdc_value *v)
{
    memset(v, 0, sizeof *v);
    mcdc_type_id t = n->type.type;
    bool text_ok = t != MCDC_TYPE_BOOLEAN && t != MCDC_TYPE_BYTE && t != MCDC_TYPE_SHORT &&
                   t != MCDC_TYPE_INT && t != MCDC_TYPE_LONG;
    if (json_is_string(j) && text_ok)
        return leaf_from_text(n, json_string_value(j), json_string_length(j), v);
    switch (n->type.type) {
    case MCDC_TYPE_BOOLEAN:
        if (!json_is_boolean(j))
            return bad(n, "expected a boolean");
        v->v.b = json_is_true(j);
        return 0;
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE:
        if (!json_is_number(j))
            return bad(n, "expected a number");
        if (n->type.type == MCDC_TYPE_FLOAT)
            v->v.f = (float)json_number_value(j);
        else
            v->v.d = json_number_value(j);
        return 0;
    case MCDC_TYPE_DECIMAL: {
        if (!json_is_integer(j))
            return bad(n, "expected a decimal as a string or an integer");
        mcdc_int128 x = json_integer_value(j);
        for (int i = 0; i < n->type.scale; i++)
            x *= 10;
        v->v.dec = x;
        return 0;
    }
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        return bad(n, "expected a string");
    default:
        if (!json_is_integer(j))
            return bad(n, "expected an integer");
        v->v.i = json_integer_value(j);
        return 0;
    }
}

static int shred(mcdc_parquet_writer *w, const mcdc_parquet_node *n, const json_t *j, int rep,
                 int parent_def);

static int shred_leaf(mcdc_parquet_writer *w, const mcdc_parquet_node *n, const mcdc_value *v,
                      int rep)
{
    int rc = mcdc_pq__value_check(&n->type, v, n->name);
    return rc < 0 ? rc : stage(w, n->first_leaf, rep, n->def, v);
}

static int shred_entries(mcdc_parquet_writer *w, const mcdc_parquet_node *n, const json_t *j,
                         int rep)
{
    int rc = 0;
    size_t i = 0;
    if (n->kind == MCDC_PQ_NODE_LIST) {
        if (!json_is_array(j))
            return bad(n, "expected an array");
        const json_t *e;
        json_array_foreach(j, i, e) {
            if ((rc = shred(w, n->kids[0], e, i ? n->rep : rep, n->def + 1)) < 0)
                return rc;
        }
        return i ? 0 : stage_nulls(w, n, rep, n->def);
    }
    /* A map: an object with string keys, or an array of {"key":..,"value":..}. */
    const mcdc_parquet_node *kn = n->kids[0], *vn = n->kids[1];
    if (json_is_object(j)) {
        const char *key;
        const json_t *val;
        json_object_foreach((json_t *)j, key, val) {
            mcdc_value kv;
            int r = i++ ? n->rep : rep;
            if ((rc = leaf_from_text(kn, key, strlen(key), &kv)) < 0 ||
                (rc = shred_leaf(w, kn, &kv, r)) < 0 || (rc = shred(w, vn, val, r, n->def + 1)) < 0)
                return rc;
        }
    } else if (json_is_array(j)) {
        const json_t *e;
        json_array_foreach(j, i, e) {
            int r = i ? n->rep : rep;
            const json_t *k = json_object_get(e, "key");
            if (!json_is_object(e) || !k || json_is_null(k))
                return bad(n, "map entries need a non-null \"key\"");
            if ((rc = shred(w, kn, k, r, n->def + 1)) < 0 ||
                (rc = shred(w, vn, json_object_get(e, "value"), r, n->def + 1)) < 0)
                return rc;
        }
    } else {
        return bad(n, "expected an object or an array of entries");
    }
    return i ? 0 : stage_nulls(w, n, rep, n->def);
}

static int shred(mcdc_parquet_writer *w, const mcdc_parquet_node *n, const json_t *j, int rep,
                 int parent_def)
{
    if (!j || json_is_null(j)) {
        if (!n->nullable)
            return bad(n, "null in a field that is not nullable");
        return stage_nulls(w, n, rep, parent_def);
    }
    switch (n->kind) {
    case MCDC_PQ_NODE_LEAF: {
        mcdc_value v;
        int rc = leaf_from_json(n, j, &v);
        return rc < 0 ? rc : shred_leaf(w, n, &v, rep);
    }
    case MCDC_PQ_NODE_STRUCT:
        if (!json_is_object(j))
            return bad(n, "expected an object");
        for (size_t i = 0; i < n->n_kids; i++) {
            int rc = shred(w, n->kids[i], json_object_get(j, n->kids[i]->name), rep, n->def);
            if (rc < 0)
                return rc;
        }
        return 0;
    default:
        return shred_entries(w, n, j, rep);
    }
}

int mcdc_parquet_writer_write_json(mcdc_parquet_writer *w, const void *row)
{
    MCDC_ASSERT_ARG(w && row);
    if (w->failed)
        return w->failed;
    if (w->closed || !w->root)
        return mcdc_error_set(MCDC_EINVAL, "parquet writer: %s", w->closed ? "already closed"
                              : "opened for flat rows; use mcdc_parquet_writer_write_row");
    const json_t *j = row;
    if (!json_is_object(j))
        return mcdc_error_set(MCDC_EINVAL, "row %lld: expected a JSON object", (long long)w->num_rows);
    w->n_staged = 0;
    int rc = 0;
    for (size_t i = 0; i < w->root->n_kids && rc == 0; i++)
        rc = shred(w, w->root->kids[i], json_object_get(j, w->root->kids[i]->name), 0, 0);
    if (rc < 0) {
        mcdc_error_prefix("row %lld", (long long)w->num_rows);
        return rc;
    }
    if ((rc = mcdc_pq__writer_begin_row(w)) < 0)
        return rc;
    for (size_t i = 0; i < w->n_staged; i++) {
        const mcdc_pq_staged *s = &w->staged[i];
        if ((rc = mcdc_pq__column_add(&w->cols[s->leaf], s->rep, s->def, &s->v)) < 0)
            return mcdc_pq__writer_fail(w, rc);
    }
    w->rg_rows++;
    w->num_rows++;
    return 0;
}
