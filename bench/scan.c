/*
 * bench/scan.c: read every row of a Delta table through the scan (Parquet reader and
 * Delta scan, no writer), to time the read side of a silver rewrite on its own.
 *
 *   bench_scan TABLE [REPEAT]
 *
 * Reads the latest version REPEAT times (default 1) and prints rows, seconds (wall), CPU
 * seconds (user + system) and rows/s of each pass. The first pass also checksums every
 * cell (type-aware: the same rows give the same checksum; its time includes the hashing),
 * so two builds can be compared for output; compare the later passes for speed.
 * Example: after bench_silver DIR ..., run bench_scan DIR/silver 3.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mcdc/delta.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

/* FNV-1a over bytes. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static uint64_t cell_hash(uint64_t h, const mcdc_column *c, const mcdc_value *v)
{
    unsigned char null = v->is_null;
    h = mix(h, &null, 1);
    if (v->is_null)
        return h;
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: return mix(h, &v->v.b, sizeof v->v.b);
    case MCDC_TYPE_FLOAT: return mix(h, &v->v.f, sizeof v->v.f);
    case MCDC_TYPE_DOUBLE: return mix(h, &v->v.d, sizeof v->v.d);
    case MCDC_TYPE_DECIMAL: return mix(h, &v->v.dec, sizeof v->v.dec);
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: return mix(mix(h, &v->v.s.len, sizeof v->v.s.len), v->v.s.ptr, v->v.s.len);
    default: return mix(h, &v->v.i, sizeof v->v.i);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_scan TABLE [REPEAT]\n");
        return 2;
    }
    int repeat = argc > 2 ? atoi(argv[2]) : 1;
    for (int k = 0; k < repeat; k++) {
        double t0 = now(), c0 = cpu();
        mcdc_delta_snapshot *snap = NULL;
        mcdc_delta_scan *sc = NULL;
        if (mcdc_delta_snapshot_open(&snap, argv[1], -1) < 0 ||
            mcdc_delta_scan_open(&sc, snap, NULL) < 0) {
            fprintf(stderr, "bench_scan: %s\n", mcdc_error_last()->message);
            return 1;
        }
        const mcdc_schema *s = mcdc_delta_scan_schema(sc);
        const mcdc_value *row;
        int64_t rows = 0;
        uint64_t h = 14695981039346656037ULL;
        int rc;
        while ((rc = mcdc_delta_scan_next(sc, &row)) == 1) {
            for (size_t i = 0; k == 0 && i < s->n_cols; i++)
                h = cell_hash(h, &s->cols[i], &row[i]);
            rows++;
        }
        if (rc < 0) {
            fprintf(stderr, "bench_scan: %s\n", mcdc_error_last()->message);
            return 1;
        }
        mcdc_delta_scan_free(sc);
        mcdc_delta_snapshot_free(snap);
        double t = now() - t0, c = cpu() - c0;
        printf("scan %" PRId64 " rows  %.2f s (CPU %.2f s)  %.0f rows/s", rows, t, c,
               t > 0 ? (double)rows / t : 0.0);
        if (k == 0)
            printf("  checksum %016" PRIx64, h);
        printf("\n");
    }
    return 0;
}
