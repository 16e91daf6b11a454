/*
 * bench/parquet_write.c: write N rows (default 10 million) of
 *   id long, s string (~20 chars, 1000 distinct), amount decimal(12,2),
 *   ts timestamp_ntz, n integer (nullable, every 10th null)
 * with the mssql-cdc Parquet writer and print one JSON line: rows, seconds, rows/s,
 * file size and peak RSS. The same rows as bench/parquet_write.sh asks DuckDB for.
 * Usage: bench_parquet_write OUT.parquet [ROWS] [snappy|zstd|uncompressed]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/parquet.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.parquet [ROWS] [snappy|zstd|uncompressed]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    long long rows = argc > 2 ? atoll(argv[2]) : 10000000LL;
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    if (argc > 3 && mcdc_parquet_codec_parse(&o.codec, argv[3]) < 0) {
        fprintf(stderr, "%s\n", mcdc_error_last()->message);
        return 2;
    }
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(s, "s", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 12, 2, true);
    mcdc_schema_add(s, "ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true);
    mcdc_schema_add(s, "n", MCDC_TYPE_INT, 0, 0, true);
    static char names[1000][24];
    for (int i = 0; i < 1000; i++)
        snprintf(names[i], sizeof names[i], "customer_name_%06d", i);
    const int64_t base = 1704067200LL * 1000000LL; /* 2024-01-01T00:00:00 */

    unlink(path);
    double t0 = now_s();
    mcdc_parquet_writer *w;
    if (mcdc_parquet_writer_open(&w, path, s, &o) < 0) {
        fprintf(stderr, "%s\n", mcdc_error_last()->message);
        return 1;
    }
    mcdc_value row[5];
    memset(row, 0, sizeof row);
    for (long long i = 0; i < rows; i++) {
        row[0].v.i = i;
        const char *name = names[(i * 7919) % 1000];
        row[1].v.s.ptr = name;
        row[1].v.s.len = 20;
        row[2].v.dec = (i * 37) % 10000000;
        row[3].v.i = base + i * 1000000LL;
        row[4].is_null = i % 10 == 0;
        row[4].v.i = i % 1000;
        if (mcdc_parquet_writer_write_row(w, row) < 0) {
            fprintf(stderr, "%s\n", mcdc_error_last()->message);
            return 1;
        }
    }
    mcdc_parquet_write_result res;
    if (mcdc_parquet_writer_close(w, &res) < 0) {
        fprintf(stderr, "%s\n", mcdc_error_last()->message);
        return 1;
    }
    double secs = now_s() - t0;
    mcdc_parquet_writer_free(w);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"writer\":\"mcdc\",\"rows\":%lld,\"seconds\":%.3f,\"rows_per_s\":%.0f,\"bytes\":%llu,"
           "\"row_groups\":%zu,\"peak_rss_mib\":%.1f}\n",
           rows, secs, (double)rows / secs, (unsigned long long)res.file_size, res.n_row_groups,
           (double)ru.ru_maxrss / 1024.0);
    mcdc_parquet_write_result_dispose(&res);
    mcdc_schema_free(s);
    return 0;
}
