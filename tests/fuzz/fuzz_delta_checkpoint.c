/*
 * fuzz_delta_checkpoint.c: libFuzzer target for the Delta checkpoint row decoders.
 *
 * Treats the input as a Parquet checkpoint part: writes it to a scratch file and reads its
 * actions twice, column by column (delta/checkpoint_columns.c, or the JSON path for a
 * layout that decoder does not take) and every row through the JSON action parser. When
 * both succeed they must give the same actions, field for field. (Either may refuse a
 * damaged file the other reads: the leaf read checks less of the levels than the JSON
 * assembler, and jansson refuses strings that are not UTF-8.) Any crash, leak, sanitizer
 * report or disagreement is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "delta/internal.h"
#include "mcdc/buf.h"

static void put_map(mcdc_buf *b, const mcdc_delta_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        mcdc_buf_printf(b, "%s=%s;", m->kv[i].key, m->kv[i].value ? m->kv[i].value : "<null>");
    mcdc_buf_putc(b, '|');
}

static void put_list(mcdc_buf *b, char **l, size_t n, bool present)
{
    mcdc_buf_printf(b, "%d[", present);
    for (size_t i = 0; i < n; i++)
        mcdc_buf_printf(b, "%s;", l[i]);
    mcdc_buf_putc(b, ']');
}

#define S(x) ((x) ? (x) : "<null>")

static int collect(mcdc_delta_action *a, void *payload)
{
    mcdc_buf *b = payload;
    mcdc_buf_printf(b, "%d:", (int)a->kind);
    switch (a->kind) {
    case MCDC_DELTA_ACTION_ADD:
    case MCDC_DELTA_ACTION_REMOVE: {
        const mcdc_delta_file *f = &a->u.file;
        mcdc_buf_printf(b, "%s %lld %lld %lld %d %d %s %lld %lld ", S(f->path),
                        (long long)f->size, (long long)f->modification_time,
                        (long long)f->deletion_timestamp, f->data_change,
                        f->extended_file_metadata, S(f->stats), (long long)f->base_row_id,
                        (long long)f->default_row_commit_version);
        put_map(b, &f->partition_values);
        put_map(b, &f->tags);
        if (f->has_dv)
            mcdc_buf_printf(b, "dv %c %s %d %d %lld", f->dv.storage_type,
                            S(f->dv.path_or_inline_dv), (int)f->dv.offset,
                            (int)f->dv.size_in_bytes, (long long)f->dv.cardinality);
        break;
    }
    case MCDC_DELTA_ACTION_METADATA: {
        const mcdc_delta_metadata *m = &a->u.metadata;
        mcdc_buf_printf(b, "%s %s %s %s %s %lld ", S(m->id), S(m->name), S(m->description),
                        S(m->format_provider), S(m->schema_string), (long long)m->created_time);
        put_list(b, m->partition_columns, m->n_partition_columns, true);
        put_map(b, &m->configuration);
        break;
    }
    case MCDC_DELTA_ACTION_PROTOCOL: {
        const mcdc_delta_protocol *p = &a->u.protocol;
        mcdc_buf_printf(b, "%d %d ", p->min_reader_version, p->min_writer_version);
        put_list(b, p->reader_features, p->n_reader_features, p->has_reader_features);
        put_list(b, p->writer_features, p->n_writer_features, p->has_writer_features);
        break;
    }
    case MCDC_DELTA_ACTION_TXN:
        mcdc_buf_printf(b, "%s %lld %lld", S(a->u.txn.app_id), (long long)a->u.txn.version,
                        (long long)a->u.txn.last_updated);
        break;
    case MCDC_DELTA_ACTION_DOMAIN_METADATA:
        mcdc_buf_printf(b, "%s %s %d", S(a->u.domain.domain), S(a->u.domain.configuration),
                        a->u.domain.removed);
        break;
    case MCDC_DELTA_ACTION_CHECKPOINT_METADATA:
        mcdc_buf_printf(b, "%lld", (long long)a->u.checkpoint_version);
        break;
    case MCDC_DELTA_ACTION_SIDECAR:
        mcdc_buf_printf(b, "%s %lld %lld", S(a->u.sidecar.path),
                        (long long)a->u.sidecar.size_in_bytes,
                        (long long)a->u.sidecar.modification_time);
        break;
    default: break;
    }
    mcdc_buf_putc(b, '\n');
    return b->len > ((size_t)8 << 20) ? -1 : 0; /* bound one input's work */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz-delta-checkpoint-%d.parquet", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t put = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || put != size)
        return 0;
    mcdc_buf a = MCDC_BUF_INIT((size_t)16 << 20), b = MCDC_BUF_INIT((size_t)16 << 20);
    int ra = mcdc_delta__read_parquet_actions(path, collect, &a);
    int rb = mcdc_delta__read_parquet_actions_json(path, collect, &b);
    if (ra == 0 && rb == 0 &&
        (a.len != b.len || (a.len && memcmp(a.ptr, b.ptr, a.len) != 0)))
        __builtin_trap();
    mcdc_buf_dispose(&a);
    mcdc_buf_dispose(&b);
    unlink(path);
    return 0;
}
