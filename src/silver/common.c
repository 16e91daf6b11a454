/*
 * silver/common.c: the pieces the applies (apply.c, scd2.c) and the as-of reader (as_of.c)
 * share; see common.h. No state; each function stands alone.
 */
#include "silver/common.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/error.h"

int mcdc_silver__key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : na < nb ? -1 : na > nb;
}

char *mcdc_silver__hex_of(const uint8_t *p, size_t n)
{
    static const char d[] = "0123456789ABCDEF";
    char *s = malloc(2 * n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = d[p[i] >> 4];
        s[2 * i + 1] = d[p[i] & 15];
    }
    s[2 * n] = 0;
    return s;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

uint8_t *mcdc_silver__unhex(const char *s, size_t *n_out)
{
    size_t n = strlen(s);
    if (n % 2)
        return NULL;
    uint8_t *p = malloc(n / 2 + 1);
    if (!p)
        return NULL;
    for (size_t i = 0; i < n / 2; i++) {
        int a = hexval(s[2 * i]), b = hexval(s[2 * i + 1]);
        if (a < 0 || b < 0) {
            free(p);
            return NULL;
        }
        p[i] = (uint8_t)(a << 4 | b);
    }
    *n_out = n / 2;
    return p;
}

int mcdc_silver__rank_of(mcdc_silver_rank *out, const mcdc_value *start_lsn,
                         const mcdc_value *operation, const mcdc_value *command_id,
                         const mcdc_value *seqval)
{
    memset(out, 0, sizeof *out);
    if (start_lsn->is_null || mcdc_lsn_parse_n(&out->lsn, start_lsn->v.s.ptr, start_lsn->v.s.len) < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "bronze: a row without a valid _start_lsn");
    if (operation->is_null || operation->v.i < 0 || operation->v.i > 4)
        return mcdc_error_set(MCDC_ECORRUPT, "bronze: a row with _operation %s",
                              operation->is_null ? "NULL" : "outside 0-4");
    out->op = (uint8_t)operation->v.i;
    if ((out->has_command_id = !command_id->is_null))
        out->command_id = (int32_t)command_id->v.i;
    if ((out->has_seqval = !seqval->is_null) &&
        mcdc_lsn_parse_n(&out->seqval, seqval->v.s.ptr, seqval->v.s.len) < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "bronze: a row with a malformed _seqval");
    return 0;
}

static bool is_bytes(mcdc_type_id t)
{
    return t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY;
}

mcdc_value *mcdc_silver__values_dup(const mcdc_column *cols, const mcdc_value *row,
                                    const int *map, size_t n)
{
    size_t bytes = n * sizeof(mcdc_value);
    for (size_t i = 0; i < n; i++) {
        const mcdc_value *v = &row[map ? (size_t)map[i] : i];
        if (!v->is_null && is_bytes(cols[i].type))
            bytes += v->v.s.len;
    }
    mcdc_value *out = malloc(bytes ? bytes : 1);
    if (!out)
        return NULL;
    char *p = (char *)&out[n];
    for (size_t i = 0; i < n; i++) {
        out[i] = row[map ? (size_t)map[i] : i];
        if (!out[i].is_null && is_bytes(cols[i].type)) {
            if (out[i].v.s.len)
                memcpy(p, out[i].v.s.ptr, out[i].v.s.len);
            out[i].v.s.ptr = p;
            p += out[i].v.s.len;
        }
    }
    return out;
}

static bool same_value(const mcdc_column *c, const mcdc_value *a, const mcdc_value *b)
{
    if (a->is_null || b->is_null)
        return a->is_null == b->is_null;
    switch (c->type) {
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        return a->v.s.len == b->v.s.len && memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0;
    case MCDC_TYPE_BOOLEAN:
        return a->v.b == b->v.b;
    case MCDC_TYPE_FLOAT:
        return a->v.f == b->v.f;
    case MCDC_TYPE_DOUBLE:
        return a->v.d == b->v.d;
    case MCDC_TYPE_DECIMAL:
        return memcmp(&a->v.dec, &b->v.dec, sizeof a->v.dec) == 0;
    default:
        return a->v.i == b->v.i;
    }
}

bool mcdc_silver__same_cells(const mcdc_column *cols, size_t n, const mcdc_value *a,
                             const mcdc_value *b)
{
    for (size_t i = 0; i < n; i++)
        if (!same_value(&cols[i], &a[i], &b[i]))
            return false;
    return true;
}

bool mcdc_silver__meta_applied_lsn(const char *user_metadata, mcdc_lsn *out)
{
    json_t *j = user_metadata ? json_loads(user_metadata, 0, NULL) : NULL;
    const char *a = json_string_value(json_object_get(json_object_get(j, "silver_apply"),
                                                      "applied_lsn"));
    bool ok = a && mcdc_lsn_parse(out, a) == 0;
    if (a && !ok)
        mcdc_error_clear();
    json_decref(j);
    return ok;
}

int mcdc_silver__advance_verdict(const mcdc_silver_apply_options *o, const mcdc_control_row *brow,
                                 mcdc_verdict *out)
{
    if (!o->facts_path || !brow->finalized_until.has || !brow->has_end_lsn ||
        !brow->has_end_commit_ts)
        return 0;
    mcdc_offset end;
    end.lsn = brow->end_lsn;
    end.has_commit_ts = true;
    end.commit_ts_us = brow->end_commit_ts_us < brow->finalized_until.until_us
                           ? brow->end_commit_ts_us : brow->finalized_until.until_us;
    mcdc_advance_result ar;
    int rc = mcdc_control_advance(o->control_path, o->silver_name, &end, o->granularity, &ar);
    if (rc == 0)
        *out = ar.verdict;
    return rc;
}
