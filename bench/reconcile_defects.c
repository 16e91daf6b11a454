/*
 * bench/reconcile_defects.c: plant one defect on a silver table keyed by an integer
 * order_id, for bench/reconcile_1m.sh: a Delta commit that rewrites the one file holding
 * the row (as issue 19's acceptance plants them).
 *
 *   bench_reconcile_defects SILVER KIND KEY
 *
 * KIND: change (amount + 1, or 0 when NULL), drop (the row removed), dup (the row twice),
 * extra (a copy with order_id + 100,000,000), blank (amount NULL; the row must have one).
 * The row is the one with the smallest order_id >= KEY (for blank, also with an amount).
 * Prints the JSON key reconcile must name: {"order_id":N}.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_reconcile_defects: %s: %s\n", what, mcdc_error_last()->message);
    exit(1);
}

typedef struct plant {
    mcdc_delta_file *old, *files;
    size_t           n_files;
} plant;

static int build(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n, void *payload)
{
    plant *p = payload;
    (void)snap;
    *out = calloc(p->n_files + 1, sizeof **out);
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    *n = 0;
    mcdc_delta_remove_of(&(*out)[(*n)++], p->old, 1);
    for (size_t i = 0; i < p->n_files; i++) {
        (*out)[*n].kind = MCDC_DELTA_ACTION_ADD;
        if (mcdc_delta_file_copy(&(*out)[*n].u.file, &p->files[i]) < 0)
            return MCDC_ENOMEM;
        (*n)++;
    }
    return 0;
}

static mcdc_parquet_reader *open_file(const mcdc_delta_snapshot *snap, size_t fi, int *kc, int *ac)
{
    char *path = mcdc_delta_file_abspath(snap, snap->files[fi].path);
    mcdc_parquet_reader *rd = NULL;
    if (!path || mcdc_parquet_reader_open(&rd, path, NULL) < 0)
        die("open a file");
    free(path);
    *kc = mcdc_schema_find(mcdc_parquet_reader_schema(rd), "order_id");
    *ac = mcdc_schema_find(mcdc_parquet_reader_schema(rd), "amount");
    if (*kc < 0 || *ac < 0) {
        fprintf(stderr, "bench_reconcile_defects: silver has no order_id or amount\n");
        exit(2);
    }
    return rd;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_reconcile_defects SILVER change|drop|dup|extra|blank KEY\n");
        return 2;
    }
    const char *silver = argv[1], *kind = argv[2];
    int64_t from = strtoll(argv[3], NULL, 10);
    bool blank = !strcmp(kind, "blank");
    if (strcmp(kind, "change") && strcmp(kind, "drop") && strcmp(kind, "dup") && strcmp(kind, "extra") && !blank) {
        fprintf(stderr, "bench_reconcile_defects: unknown defect %s\n", kind);
        return 2;
    }
    mcdc_delta_snapshot *snap = NULL;
    if (mcdc_delta_snapshot_open(&snap, silver, -1) < 0)
        die("silver");
    /* the row: the smallest key >= KEY (with an amount for blank), and its file */
    int64_t best = INT64_MAX;
    size_t best_file = 0;
    for (size_t fi = 0; fi < snap->n_files; fi++) {
        int kc, ac;
        mcdc_parquet_reader *rd = open_file(snap, fi, &kc, &ac);
        const mcdc_value *row;
        int rc;
        while ((rc = mcdc_parquet_reader_next(rd, &row)) == 1)
            if (!row[kc].is_null && row[kc].v.i >= from && row[kc].v.i < best && (!blank || !row[ac].is_null)) {
                best = row[kc].v.i;
                best_file = fi;
            }
        if (rc < 0)
            die("read");
        mcdc_parquet_reader_free(rd);
    }
    if (best == INT64_MAX) {
        fprintf(stderr, "bench_reconcile_defects: no row with order_id >= %" PRId64 "\n", from);
        return 2;
    }
    int kc, ac;
    mcdc_parquet_reader *rd = open_file(snap, best_file, &kc, &ac);
    mcdc_delta_writer *w = NULL;
    mcdc_delta_writer_options wo = MCDC_DELTA_WRITER_OPTIONS_INIT;
    if (mcdc_delta_writer_open(&w, snap, &wo) < 0)
        die("writer");
    size_t nc = mcdc_parquet_reader_schema(rd)->n_cols;
    mcdc_value *copy = calloc(nc, sizeof *copy);
    const mcdc_value *row;
    int rc;
    int64_t named = best;
    while ((rc = mcdc_parquet_reader_next(rd, &row)) == 1) {
        memcpy(copy, row, nc * sizeof *copy);
        if (!row[kc].is_null && row[kc].v.i == best) {
            if (!strcmp(kind, "drop"))
                continue;
            if (!strcmp(kind, "change")) {
                if (copy[ac].is_null) { copy[ac].is_null = false; copy[ac].v.dec = 0; }
                copy[ac].v.dec += 1;
            } else if (blank) {
                copy[ac].is_null = true;
            } else if (!strcmp(kind, "dup")) {
                if (mcdc_delta_writer_write(w, copy) < 0) die("write");
            } else { /* extra: the row as it is, then its copy under a new key */
                if (mcdc_delta_writer_write(w, copy) < 0) die("write");
                copy[kc].v.i += 100000000;
                named = copy[kc].v.i;
            }
        }
        if (mcdc_delta_writer_write(w, copy) < 0)
            die("write");
    }
    if (rc < 0)
        die("read");
    mcdc_parquet_reader_free(rd);
    plant p = { &snap->files[best_file], NULL, 0 };
    if (mcdc_delta_writer_finish(w, &p.files, &p.n_files) < 0)
        die("finish");
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "WRITE";
    if (mcdc_delta_commit(silver, build, &p, &o, NULL) < 0)
        die("commit");
    printf("{\"order_id\":%" PRId64 "}\n", named);
    mcdc_delta_files_free(p.files, p.n_files);
    mcdc_delta_writer_free(w);
    free(copy);
    mcdc_delta_snapshot_free(snap);
    return 0;
}
