/*
 * pipeline/generation.c: a stream's re-snapshot generation, the one reader and writer of
 * `<checkpoint>/generation`.
 *
 * `stream --on-data-loss resnapshot` answers changes purged before they were read with a
 * new generation: its own checkpoint `<checkpoint>/_generations/<n>` and app id
 * `<app_id>.g<n>`, started from a new snapshot. The file records which generation is live
 * and the gap that started it; every start of the stream reads it (whatever
 * --on-data-loss says), so a stream, `finalization advance --checkpoint` and the job's
 * tracker all follow the newest generation from the base checkpoint. No file is
 * generation 0: the checkpoint and app id as given.
 *
 *   {"generation": n, "started_at": "<source clock, UTC>", "lost_from_ts": "...",
 *    "lost_to_ts": "...", "lost_after": "0x...", "lost_min": "0x..."}
 *
 * Written whole through core's atomic write (temp file, fsync, rename, directory fsync):
 * a crash leaves the old generation or the new one, never a torn file. Keys are only
 * ever added; readers ignore keys they do not know. Design: anchor-features §1
 * ("data loss/resnapshot"), §3.3; docs/decisions/0023-resnapshot-generations.md.
 */
#include <jansson.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/fs.h"
#include "mcdc/storage.h"
#include "mcdc/pipeline.h"
#include "mcdc/time.h"

#define GEN_FILE "generation"

int mcdc_generation_checkpoint(char *out, size_t cap, const char *checkpoint, int64_t n)
{
    int w = n > 0 ? snprintf(out, cap, "%s/_generations/%" PRId64, checkpoint, n)
                  : snprintf(out, cap, "%s", checkpoint);
    if (w < 0 || (size_t)w >= cap)
        return mcdc_error_set(MCDC_EINVAL, "%s: path too long", checkpoint);
    return 0;
}

int mcdc_generation_app_id(char *out, size_t cap, const char *app_id, int64_t n)
{
    /* an app id that is itself a generation (orders.g2, started by hand) counts on from
     * it (orders.g3), so the family, bronze's owner, stays the same */
    size_t len = strlen(app_id), d = len;
    while (d > 0 && app_id[d - 1] >= '0' && app_id[d - 1] <= '9')
        d--;
    int64_t k = 0;
    bool suffixed = n > 0 && d < len && d >= 2 && app_id[d - 1] == 'g' && app_id[d - 2] == '.' &&
                    len - d <= 12;
    for (size_t i = d; suffixed && i < len; i++)
        k = k * 10 + (app_id[i] - '0');
    int w = !(n > 0) ? snprintf(out, cap, "%s", app_id)
          : suffixed ? snprintf(out, cap, "%.*s.g%" PRId64, (int)(d - 2), app_id, k + n)
                     : snprintf(out, cap, "%s.g%" PRId64, app_id, n);
    if (w < 0 || (size_t)w >= cap)
        return mcdc_error_set(MCDC_EINVAL, "app_id %s: too long", app_id);
    return 0;
}

static bool get_time(json_t *j, const char *key, int64_t *out)
{
    const char *t = json_string_value(json_object_get(j, key));
    return t && t[0] && mcdc_time_parse(out, t) == 0;
}

static void get_lsn(json_t *j, const char *key, mcdc_lsn *out)
{
    const char *t = json_string_value(json_object_get(j, key));
    if (!t || mcdc_lsn_parse(out, t) < 0)
        memset(out, 0, sizeof *out);
}

int mcdc_generation_read(mcdc_generation *out, const char *checkpoint)
{
    int lrc = mcdc_checkpoint_check_location(checkpoint);
    if (lrc < 0)
        return lrc;
    memset(out, 0, sizeof *out);
    char path[MCDC_PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", checkpoint, GEN_FILE) >= sizeof path)
        return mcdc_error_set(MCDC_EINVAL, "%s: path too long", checkpoint);
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    int rc = mcdc_storage_read(&b, NULL, path);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        mcdc_buf_dispose(&b);
        return 0;
    }
    if (rc < 0) {
        mcdc_buf_dispose(&b);
        return rc;
    }
    json_t *j = json_loadb(b.ptr ? b.ptr : "", b.len, 0, NULL);
    mcdc_buf_dispose(&b);
    json_t *n = json_object_get(j, "generation");
    if (!json_is_integer(n) || json_integer_value(n) < 0) {
        json_decref(j);
        mcdc_error_set(MCDC_ECORRUPT, "%s: not a generation record {generation, ...}", path);
        return mcdc_error_hint("restore the file, or remove it to go back to generation 0 "
                               "(the checkpoint and app id as given)");
    }
    out->n = json_integer_value(n);
    out->has_started_at = get_time(j, "started_at", &out->started_at_us);
    out->has_lost_from = get_time(j, "lost_from_ts", &out->lost_from_us);
    out->has_lost_to = get_time(j, "lost_to_ts", &out->lost_to_us);
    get_lsn(j, "lost_after", &out->lost_after);
    get_lsn(j, "lost_min", &out->lost_min);
    json_decref(j);
    return 0;
}

static json_t *time_or_null(bool has, int64_t us)
{
    char t[MCDC_TIME_STRLEN];
    return has ? json_string(mcdc_time_format(t, us, 3, false)) : json_null();
}

int mcdc_generation_write(const char *checkpoint, const mcdc_generation *g)
{
    int lrc = mcdc_checkpoint_check_location(checkpoint);
    if (lrc < 0)
        return lrc;
    char path[MCDC_PATH_MAX], a[MCDC_LSN_STRLEN], m[MCDC_LSN_STRLEN];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", checkpoint, GEN_FILE) >= sizeof path)
        return mcdc_error_set(MCDC_EINVAL, "%s: path too long", checkpoint);
    int rc = mcdc_storage_mkdirs(checkpoint);
    if (rc < 0)
        return rc;
    json_t *j = json_pack("{s:I,s:o,s:o,s:o,s:s,s:s}", "generation", (json_int_t)g->n,
                          "started_at", time_or_null(g->has_started_at, g->started_at_us),
                          "lost_from_ts", time_or_null(g->has_lost_from, g->lost_from_us),
                          "lost_to_ts", time_or_null(g->has_lost_to, g->lost_to_us),
                          "lost_after", mcdc_lsn_format(a, &g->lost_after),
                          "lost_min", mcdc_lsn_format(m, &g->lost_min));
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text)
        return mcdc_error_set(MCDC_ENOMEM, "generation: out of memory");
    rc = mcdc_storage_put(path, text, strlen(text));
    free(text);
    return rc;
}
