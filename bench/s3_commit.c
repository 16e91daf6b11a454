/*
 * bench/s3_commit.c: Delta commits on S3 against a real store, with their request counts.
 *
 *   bench_s3_commit s3://BUCKET/PREFIX [N]
 *
 * (credentials and endpoint from the environment, as for mssql-cdc; bench/s3.sh starts a
 * scratch radosgw and runs it.) A new table under PREFIX gets N blind appends of a one-row
 * data file each (snapshot, write the file, commit one add: what a stream batch does per
 * table). Printed: the commit's p50 and p99 wall time, and the requests per commit by kind;
 * beside it the peer, a bare conditional PUT (If-None-Match: *) of as many bytes as one
 * commit file, through the same client: the floor every commit pays on this store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "delta/internal.h"
#include "mcdc/delta.h"
#include "mcdc/storage.h"

#include "timing.h"

static int64_t g_counter;

static int build_append(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n, void *payload)
{
    (void)payload;
    mcdc_delta_writer *w;
    int rc = mcdc_delta_writer_open(&w, snap, NULL);
    if (rc < 0)
        return rc;
    mcdc_value row[2] = { { .is_null = false }, { .is_null = false } };
    row[0].v.i = ++g_counter;
    row[1].v.s.ptr = "x";
    row[1].v.s.len = 1;
    mcdc_delta_file *files;
    size_t nf;
    if ((rc = mcdc_delta_writer_write(w, row)) == 0)
        rc = mcdc_delta_writer_finish(w, &files, &nf);
    mcdc_delta_writer_free(w);
    if (rc < 0)
        return rc;
    *out = calloc(1, sizeof **out);
    (*out)[0].kind = MCDC_DELTA_ACTION_ADD;
    mcdc_delta_file_copy(&(*out)[0].u.file, &files[0]);
    *n = 1;
    mcdc_delta_files_free(files, nf);
    return 0;
}

static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, mcdc_error_last()->message);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !mcdc_storage_is_s3(argv[1])) {
        fprintf(stderr, "usage: bench_s3_commit s3://BUCKET/PREFIX [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 100;
    if (n < 2)
        n = 2;
    char table[1024], id[37];
    snprintf(table, sizeof table, "%s/bench-%s", argv[1], mcdc_delta_uuid(id));
    if (mcdc_storage_check(table) < 0)
        die("store");
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(s, "v", MCDC_TYPE_STRING, 0, 0, true);
    if (mcdc_delta_create(table, s, NULL, 0, NULL, NULL) < 0)
        die("create");
    mcdc_schema_free(s);

    double *lat = malloc((size_t)n * sizeof *lat);
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "WRITE";
    mcdc_storage_s3_counts c0, c1;
    mcdc_storage_s3_counts_get(&c0);
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_ms();
        if (mcdc_delta_commit(table, build_append, NULL, &o, NULL) < 0)
            die("commit");
        lat[i] = bench_now_ms() - t0;
    }
    mcdc_delta_checkpoints_wait();
    mcdc_storage_s3_counts_get(&c1);
    double p50 = bench_pct(lat, (size_t)n, 0.50), p99 = bench_pct(lat, (size_t)n, 0.99);

    /* the size of one commit file: the last one */
    char name[32], peer[1100];
    mcdc_delta__commit_name(name, n);
    snprintf(peer, sizeof peer, "%s/_delta_log/%s", table, name);
    mcdc_buf b = MCDC_BUF_INIT((size_t)1 << 20);
    if (mcdc_storage_read(&b, NULL, peer) < 0)
        die("read commit");
    double *pl = malloc((size_t)n * sizeof *pl);
    for (int i = 0; i < n; i++) {
        snprintf(peer, sizeof peer, "%s/peer/%020d.json", table, i);
        double t0 = bench_now_ms();
        if (mcdc_storage_create(peer, b.ptr, b.len) < 0)
            die("peer put");
        pl[i] = bench_now_ms() - t0;
    }
    double peer_p50 = bench_pct(pl, (size_t)n, 0.50);
    double k = (double)n;
    printf("one-row append commit on S3        n=%d  p50 %8.3f ms  p99 %8.3f ms  (p50 / bare conditional PUT: %.1fx)\n",
           n, p50, p99, p50 / peer_p50);
    printf("peer: conditional PUT of %zu bytes  n=%d  p50 %8.3f ms\n", b.len, n, peer_p50);
    printf("requests per commit: %.2f PUT, %.2f GET, %.2f HEAD, %.2f LIST, %.2f POST, %.2f DELETE "
           "(checkpoints every 10 versions included)\n",
           (double)(c1.put - c0.put) / k, (double)(c1.get - c0.get) / k, (double)(c1.head - c0.head) / k,
           (double)(c1.list - c0.list) / k, (double)(c1.post - c0.post) / k, (double)(c1.del - c0.del) / k);
    mcdc_buf_dispose(&b);
    free(lat);
    free(pl);
    return 0;
}
