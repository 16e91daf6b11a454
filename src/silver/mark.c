/*
 * silver/mark.c: the deletion-vector way of a silver merge (write mode
 * deletion-vectors, docs/decisions/0045-silver-deletion-vectors.md): the rows of the
 * touched files that hold a changed key are decided as a rewrite decides them (rule S3,
 * mcdc_silver_changes_match_at), but instead of writing the file again, the rows replaced
 * or dropped join the file's deletion vector; the caller writes the replacing images into
 * one new file.
 *
 * Reading: only the key columns of each touched file, by the scan's projection, and each
 * row's index in its file from the scan (rows its current DV deletes are skipped, so a key
 * is matched in the file where it is live). `_start_lsn` is read too only when some image
 * of the file's key range is not newer than the file's maxValues._start_lsn (a replay):
 * otherwise every image is newer than every row, which is what S3 decides on. A key is
 * found among the images of the file's range by binary search: on its integer value when
 * the key is one integer column (checked against the key encoding), else on its encoding.
 *
 * Writing: the new vectors (each merged with the file's current one) go into one DV file
 * (mcdc_delta_dv_write: durable before the commit names it); each marked file gets a
 * remove of its current add and an add of the same path with the new vector, stats and
 * tags unchanged (stats describe the physical file; the key range still bounds its live
 * keys). A crash before the commit leaves an unreferenced DV file for vacuum, nothing else.
 */
#include "silver/common.h"
#include "silver/rewrite.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nomem(void)
{
    return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
}

/* The file's maxValues._start_lsn from its stats, or false. */
static bool file_max_lsn(const mcdc_delta_file *f, mcdc_lsn *out)
{
    if (!f->stats)
        return false;
    json_t *j = json_loads(f->stats, 0, NULL);
    json_t *mx = j ? json_object_get(json_object_get(j, "maxValues"), "_start_lsn") : NULL;
    bool ok = json_is_string(mx) &&
              mcdc_lsn_parse_n(out, json_string_value(mx), json_string_length(mx)) == 0;
    json_decref(j);
    return ok;
}

/* The key's integer value when @p key is the encoding of a non-NULL integer cell (01 and
 * the 64 bits big-endian with the sign bit flipped). */
static bool int_of_key(const uint8_t *key, size_t len, int64_t *out)
{
    if (len != 9 || key[0] != 1)
        return false;
    uint64_t u = 0;
    for (int i = 1; i <= 8; i++)
        u = u << 8 | key[i];
    *out = (int64_t)(u ^ ((uint64_t)1 << 63));
    return true;
}

/* Whether the key is one column whose encoding int_of_key inverts (probed). */
static bool int_key_column(const mcdc_silver_changes *cs, int *col_out)
{
    size_t n;
    const int *ki = mcdc_silver_changes_key_index(cs, &n);
    const mcdc_schema *sch = mcdc_silver_changes_schema(cs);
    if (n != 1 || ki[0] < 0 || (size_t)ki[0] >= sch->n_cols)
        return false;
    const mcdc_column *col = &sch->cols[ki[0]];
    switch (col->type) {
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
    case MCDC_TYPE_DATE: case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ: break;
    default: return false;
    }
    static const int64_t probes[] = { 0, 1, -1, 255, 256, INT64_MIN, INT64_MAX, 0x0102030405060708 };
    mcdc_buf b = MCDC_BUF_INIT(64);
    bool same = true;
    for (size_t i = 0; same && i < sizeof probes / sizeof probes[0]; i++) {
        mcdc_value v;
        memset(&v, 0, sizeof v);
        v.v.i = probes[i];
        mcdc_buf_clear(&b);
        int64_t back;
        same = mcdc_silver_key_encode(&b, col, &v) == 0 &&
               int_of_key((const uint8_t *)b.ptr, b.len, &back) && back == probes[i];
    }
    mcdc_buf_dispose(&b);
    *col_out = ki[0];
    return same;
}

/* Index of the first image whose key is above @p key. */
static size_t upper_bound(const mcdc_silver_changes *cs, const uint8_t *key, size_t len)
{
    size_t i = mcdc_silver_changes_lower_bound(cs, key, len);
    if (i < mcdc_silver_changes_count(cs)) {
        size_t il;
        const uint8_t *ik = mcdc_silver_changes_key_at(cs, i, &il);
        if (mcdc_silver__key_cmp(ik, il, key, len) == 0)
            i++;
    }
    return i;
}

typedef struct marked {
    const mcdc_delta_file *f;
    uint64_t              *rows; /* the new vector: the current one's rows and the new */
    size_t                 n;
} marked;

static int push_row(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        uint64_t *p = realloc(*v, c * sizeof *p);
        if (!p)
            return nomem();
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* Union of two ascending lists into a new one. */
static int merge_rows(uint64_t **out, size_t *n_out, const uint64_t *a, size_t na,
                      const uint64_t *b, size_t nb)
{
    uint64_t *m = malloc((na + nb + 1) * sizeof *m);
    if (!m)
        return nomem();
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        uint64_t x = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        if (i < na && a[i] == x)
            i++;
        if (j < nb && b[j] == x)
            j++;
        m[k++] = x;
    }
    *out = m;
    *n_out = k;
    return 0;
}

/* The positions in file @p t->f of the rows this merge replaces or drops. */
static int mark_file(const mcdc_silver_env *env, const mcdc_silver_target *t, unsigned char *replaced,
                     mcdc_silver_out *counts, uint64_t **pos, size_t *n_pos, mcdc_value *full,
                     mcdc_value *scratch, mcdc_buf *kb)
{
    mcdc_silver_changes *cs = env->cs;
    const mcdc_schema *sch = env->schema;
    size_t nk;
    const int *ki = mcdc_silver_changes_key_index(cs, &nk);
    int s_lsn = mcdc_schema_find(sch, "_start_lsn");
    size_t m0 = 0, m1 = mcdc_silver_changes_count(cs);
    if (t->known) {
        m0 = mcdc_silver_changes_lower_bound(cs, t->lo, t->lo_len);
        m1 = upper_bound(cs, t->hi, t->hi_len);
    }
    if (m0 >= m1)
        return 0;
    /* _start_lsn is needed only when an image is not newer than every row of the file */
    mcdc_lsn fmax;
    bool need_lsn = s_lsn < 0 || !file_max_lsn(t->f, &fmax);
    for (size_t m = m0; !need_lsn && m < m1; m++) {
        mcdc_silver_image im;
        mcdc_silver_changes_at(cs, m, &im);
        need_lsn = mcdc_lsn_cmp(&im.start_lsn, &fmax) <= 0;
    }
    /* integer keys of the range, when the key is one integer column */
    int icol = -1;
    int64_t *ikeys = NULL;
    bool ints = int_key_column(cs, &icol);
    if (ints && !(ikeys = malloc((m1 - m0) * sizeof *ikeys)))
        return nomem();
    for (size_t m = m0; ints && m < m1; m++) {
        size_t kl;
        const uint8_t *k = mcdc_silver_changes_key_at(cs, m, &kl);
        ints = int_of_key(k, kl, &ikeys[m - m0]);
    }
    const char *cols[64];
    size_t nc = 0;
    int rc = 0;
    if (nk + 1 > sizeof cols / sizeof cols[0]) {
        free(ikeys);
        return mcdc_error_set(MCDC_EINVAL, "silver: too many key columns (%zu)", nk);
    }
    for (size_t i = 0; i < nk; i++)
        cols[nc++] = sch->cols[ki[i]].name;
    if (need_lsn && s_lsn >= 0)
        cols[nc++] = "_start_lsn";
    mcdc_delta_snapshot view = *env->silver;
    mcdc_delta_file arr[1] = { *t->f };
    view.files = arr;
    view.n_files = 1;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = nc;
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, &view, &so);
    for (size_t i = 0; i < sch->n_cols; i++) {
        memset(&full[i], 0, sizeof full[i]);
        full[i].is_null = true;
    }
    size_t cap = 0;
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        counts->rows_read++;
        size_t m = m1;
        if (ints && !r[0].is_null) {
            int64_t v = r[0].v.i;
            size_t lo = 0, hi = m1 - m0;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (ikeys[mid] < v)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < m1 - m0 && ikeys[lo] == v)
                m = m0 + lo;
            if (m == m1)
                continue;
        }
        for (size_t i = 0; i < nk; i++)
            full[ki[i]] = r[i];
        if (s_lsn >= 0) {
            if (need_lsn) {
                full[s_lsn] = r[nk];
            } else {
                memset(&full[s_lsn], 0, sizeof full[s_lsn]);
                full[s_lsn].is_null = true; /* S3 sees no LSN: the image is newer */
            }
        }
        if (m == m1) {
            if ((rc = mcdc_silver_changes_row_key(cs, kb, full)) < 0)
                break;
            size_t kl = kb->len;
            const uint8_t *k = (const uint8_t *)kb->ptr;
            size_t lo = m0, hi = m1;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2, il;
                const uint8_t *ik = mcdc_silver_changes_key_at(cs, mid, &il);
                if (mcdc_silver__key_cmp(ik, il, k, kl) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t il = 0;
            const uint8_t *ik = lo < m1 ? mcdc_silver_changes_key_at(cs, lo, &il) : NULL;
            if (!ik || mcdc_silver__key_cmp(ik, il, k, kl) != 0)
                continue;
            m = lo;
        }
        mcdc_silver_fate fate;
        const mcdc_value *img;
        if ((rc = mcdc_silver_changes_match_at(cs, m, full, &fate, &img, scratch)) < 0)
            break;
        if (fate == MCDC_SILVER_KEEP)
            continue;
        if (fate == MCDC_SILVER_REPLACE) {
            replaced[m] = 1;
            counts->rows_updated++;
        } else {
            counts->rows_deleted++;
        }
        int64_t idx = mcdc_delta_scan_row_index(sc);
        if ((rc = push_row(pos, n_pos, &cap, (uint64_t)idx)) < 0)
            break;
    }
    mcdc_delta_scan_free(sc);
    free(ikeys);
    return rc < 0 ? rc : 0;
}

int mcdc_silver_mark(const mcdc_silver_env *env, const mcdc_silver_target *t, size_t n,
                     unsigned char *replaced, mcdc_silver_out *out, uint64_t *files_marked)
{
    *files_marked = 0;
    const mcdc_schema *sch = env->schema;
    mcdc_value *full = calloc(sch->n_cols + 1, sizeof *full);
    mcdc_value *scratch = calloc(sch->n_cols + 1, sizeof *scratch);
    marked *mk = calloc(n + 1, sizeof *mk);
    mcdc_buf kb = MCDC_BUF_INIT(1 << 20);
    size_t n_mk = 0;
    int rc = full && scratch && mk ? 0 : nomem();
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint64_t *pos = NULL;
        size_t n_pos = 0;
        rc = mark_file(env, &t[i], replaced, out, &pos, &n_pos, full, scratch, &kb);
        if (rc == 0 && n_pos) {
            mk[n_mk].f = t[i].f;
            /* the scan gives ascending indexes; the current DV's rows join them */
            if (t[i].f->has_dv) {
                uint64_t *have = NULL;
                size_t n_have = 0;
                rc = mcdc_delta_dv_read(&have, &n_have, env->silver_path, &t[i].f->dv);
                if (rc == 0)
                    rc = merge_rows(&mk[n_mk].rows, &mk[n_mk].n, have, n_have, pos, n_pos);
                free(have);
                free(pos);
            } else {
                mk[n_mk].rows = pos;
                mk[n_mk].n = n_pos;
            }
            pos = NULL;
            n_mk++;
        }
        free(pos);
    }
    mcdc_delta_dv *dvs = rc == 0 && n_mk ? calloc(n_mk, sizeof *dvs) : NULL;
    const uint64_t **sets = rc == 0 && n_mk ? calloc(n_mk, sizeof *sets) : NULL;
    size_t *ns = rc == 0 && n_mk ? calloc(n_mk, sizeof *ns) : NULL;
    if (rc == 0 && n_mk && (!dvs || !sets || !ns))
        rc = nomem();
    for (size_t i = 0; rc == 0 && i < n_mk; i++) {
        sets[i] = mk[i].rows;
        ns[i] = mk[i].n;
    }
    if (rc == 0 && n_mk)
        rc = mcdc_delta_dv_write(env->silver_path, sets, ns, n_mk, dvs);
    for (size_t i = 0; rc == 0 && i < n_mk; i++) {
        mcdc_delta_file add;
        if ((rc = mcdc_delta_file_copy(&add, mk[i].f)) < 0)
            break;
        mcdc_delta_dv_clear(&add.dv);
        add.has_dv = true;
        add.dv = dvs[i];
        memset(&dvs[i], 0, sizeof dvs[i]);
        add.data_change = true;
        rc = mcdc_silver_out_add(out, &add);
        mcdc_delta_file_clear(&add);
        if (rc == 0)
            rc = mcdc_silver_out_remove(out, mk[i].f);
        if (rc == 0)
            (*files_marked)++;
    }
    for (size_t i = 0; dvs && i < n_mk; i++)
        mcdc_delta_dv_clear(&dvs[i]);
    for (size_t i = 0; mk && i < n_mk; i++)
        free(mk[i].rows);
    free(dvs);
    free(sets);
    free(ns);
    free(mk);
    free(full);
    free(scratch);
    mcdc_buf_dispose(&kb);
    return rc;
}
