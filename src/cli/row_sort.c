/*
 * cli/row_sort.c: rows copied into memory and sorted by typed columns (see row_sort.h).
 *
 * A row is one allocation: the value array, then the bytes of its strings and binaries,
 * which the copied values point into; its position in the input is kept so that equal
 * rows keep their order (qsort alone is not stable).
 */
#include "row_sort.h"

#include <stdlib.h>
#include <string.h>

#include "mcdc/error.h"

/* The header of a row's allocation: its input position, then the values. */
typedef struct stored {
    size_t     seq;
    mcdc_value v[];
} stored;

static bool is_bytes(mcdc_type_id t)
{
    return t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY;
}

void mcdc_cli_row_sort_init(mcdc_cli_row_sort *rs, const mcdc_schema *schema, const size_t *by, size_t n_by)
{
    memset(rs, 0, sizeof *rs);
    rs->schema = schema;
    rs->by = by;
    rs->n_by = n_by;
}

int mcdc_cli_row_sort_add(mcdc_cli_row_sort *rs, const mcdc_value *row)
{
    size_t n = rs->schema->n_cols, bytes = sizeof(stored), vals;
    if (mcdc_mul_overflow(n, sizeof(mcdc_value), &vals) || mcdc_add_overflow(bytes, vals, &bytes))
        return mcdc_error_set(MCDC_ENOMEM, "a row of %zu columns is too large", n);
    for (size_t i = 0; i < n; i++)
        if (!row[i].is_null && is_bytes(rs->schema->cols[i].type) &&
            mcdc_add_overflow(bytes, row[i].v.s.len, &bytes))
            return mcdc_error_set(MCDC_ENOMEM, "a row is too large to sort in memory");
    if (rs->n_rows == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 1024;
        mcdc_value **a = realloc(rs->rows, cap * sizeof *a);
        if (!a)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory holding %zu rows to sort", rs->n_rows);
        rs->rows = a;
        rs->cap = cap;
    }
    stored *s = malloc(bytes);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory holding %zu rows to sort", rs->n_rows);
    s->seq = rs->n_rows;
    char *p = (char *)&s->v[n];
    for (size_t i = 0; i < n; i++) {
        s->v[i] = row[i];
        if (!row[i].is_null && is_bytes(rs->schema->cols[i].type)) {
            if (row[i].v.s.len)
                memcpy(p, row[i].v.s.ptr, row[i].v.s.len);
            s->v[i].v.s.ptr = p;
            p += row[i].v.s.len;
        }
    }
    rs->rows[rs->n_rows++] = s->v;
    return 0;
}

static const stored *of(const mcdc_value *v)
{
    return (const stored *)((const char *)v - offsetof(stored, v));
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

static int cmp_value(const mcdc_column *c, const mcdc_value *a, const mcdc_value *b)
{
    if (a->is_null || b->is_null)
        return CMP(!a->is_null, !b->is_null); /* NULL first */
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: return CMP(a->v.b, b->v.b);
    case MCDC_TYPE_FLOAT:   return CMP(a->v.f, b->v.f);
    case MCDC_TYPE_DOUBLE:  return CMP(a->v.d, b->v.d);
    case MCDC_TYPE_DECIMAL: return CMP(a->v.dec, b->v.dec);
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: {
        size_t n = a->v.s.len < b->v.s.len ? a->v.s.len : b->v.s.len;
        int r = n ? memcmp(a->v.s.ptr, b->v.s.ptr, n) : 0;
        return r ? (r < 0 ? -1 : 1) : CMP(a->v.s.len, b->v.s.len);
    }
    default:                return CMP(a->v.i, b->v.i);
    }
}

/* qsort has no payload argument; the set being sorted (one sort at a time: the CLI is
 * single-threaded where it sorts). */
static const mcdc_cli_row_sort *sorting;

static int cmp_rows(const void *pa, const void *pb)
{
    const mcdc_value *a = *(const mcdc_value *const *)pa, *b = *(const mcdc_value *const *)pb;
    for (size_t k = 0; k < sorting->n_by; k++) {
        size_t i = sorting->by[k];
        int r = cmp_value(&sorting->schema->cols[i], &a[i], &b[i]);
        if (r)
            return r;
    }
    return CMP(of(a)->seq, of(b)->seq);
}

void mcdc_cli_row_sort_sort(mcdc_cli_row_sort *rs)
{
    sorting = rs;
    if (rs->n_rows > 1)
        qsort(rs->rows, rs->n_rows, sizeof *rs->rows, cmp_rows);
    sorting = NULL;
}

void mcdc_cli_row_sort_free(mcdc_cli_row_sort *rs)
{
    for (size_t i = 0; i < rs->n_rows; i++)
        free((void *)of(rs->rows[i]));
    free(rs->rows);
    rs->rows = NULL;
    rs->n_rows = rs->cap = 0;
}
