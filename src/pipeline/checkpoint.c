/*
 * pipeline/checkpoint.c: the stream's checkpoint directory: metadata, offsets/N,
 * commits/N and the lock (formats in include/mcdc/pipeline.h).
 *
 * Checkpoint directory invariants:
 * (C1) offsets/N is durable (temp file, fsync, link without replace, directory fsync)
 *      before anything of batch N is committed; the caller keeps this order, and may have
 *      the create run while it reads the batch (mcdc_checkpoint_record_range_begin and
 *      _end: the checkpoint records the range only once the create is done; ADR 0060).
 * (C2) commits/N exists only once bronze and facts for N are committed; the caller keeps
 *      this order, this module refuses a commit without its range.
 * (C3) N only grows: offsets/N+1 is written only after commits/N, and the numbers
 *      present are contiguous; a hole is corruption, never skipped.
 * (C4) One process at a time: locally the lock is an flock on <checkpoint>/lock, released
 *      by the kernel when the holder dies, so a killed stream never leaves a stale lock. On
 *      object storage it is the lease object <checkpoint>/lease (lease.c), renewed while
 *      the stream runs and expiring when it dies; every write here first checks the lease
 *      is still ours. Neither is a fence: (C1), (C2) and the Delta commits are each create-
 *      if-absent, so two writers let in by a lost lease (or `--lease off`) still commit
 *      each batch once.
 * (C5) metadata is written before any offsets/N and never removed: a directory holding
 *      offsets or commits without metadata is corruption (MCDC_ECORRUPT, nothing
 *      written), never a new checkpoint with a new stream id.
 * (C6) A checkpoint that adopted a bronze table (`stream --adopt`) records in
 *      <checkpoint>/adopted, before its first batch, the batch it starts at and the offset
 *      it resumes after; its batches are numbered from there (the txn versions of bronze
 *      for its app id below that are an earlier stream's). Written once, never replaced.
 *
 * Old batches are pruned: after commits/N, offsets and commits of batch N - 100 are
 * removed (commits first), so the directory stays bounded for an always-on stream.
 * Never touches anything outside <checkpoint>. Design: docs/architecture.md §3, §5.
 */
#include "mcdc/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcdc/fs.h"
#include "mcdc/log.h"
#include "mcdc/storage.h"
#include "mcdc/secret.h"
#include "mcdc/time.h"
#include "mcdc/warehouse.h"
#include "pipeline/lease.h"

#define KEEP_BATCHES 100              /* batches kept in offsets/ and commits/ */
#define MAX_STATE_FILE (1 << 20)      /* no checkpoint file is larger than this */

struct mcdc_checkpoint {
    char   *dir;          /* the checkpoint directory, as given */
    mcdc_fs_lock *lock;   /* held from open to close (a local directory) */
    mcdc_lease *lease;    /* held from open to close (object storage, unless --lease off) */
    mcdc_checkpoint_meta meta; /* strings below own the text */
    char   *meta_id, *meta_app_id, *meta_ci, *meta_target;
    int64_t first_offset, last_offset; /* offsets/ numbers present, -1 when none */
    int64_t first_commit, last_commit; /* commits/ numbers present, -1 when none */
    mcdc_batch_range last_range;       /* offsets/last_offset when last_offset >= 0 */
    mcdc_batch_commit last_commit_rec; /* commits/last_commit when last_commit >= 0 */
    bool    has_adoption;              /* <checkpoint>/adopted exists (C6) */
    mcdc_checkpoint_adoption adoption; /* its content; from_owner points at adopted_from */
    char   *adopted_from;
};

/* The first batch number of the checkpoint: 0, or where an adoption started (C6). */
static int64_t first_batch(const mcdc_checkpoint *ck)
{
    return ck->has_adoption ? ck->adoption.first_batch : 0;
}

/* ---- offsets as JSON ----------------------------------------------------------------- */

char *mcdc_offset_to_json(char *out, size_t cap, const mcdc_offset *o)
{
    char lsn[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN] = "";
    mcdc_lsn_format(lsn, &o->lsn);
    if (o->has_commit_ts)
        mcdc_time_format(ts, o->commit_ts_us, 3, false);
    snprintf(out, cap, "{\"lsn\":\"%s\",\"commit_ts\":\"%s\"}", lsn, ts);
    return out;
}

static json_t *offset_json(const mcdc_offset *o)
{
    char lsn[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN] = "";
    mcdc_lsn_format(lsn, &o->lsn);
    if (o->has_commit_ts)
        mcdc_time_format(ts, o->commit_ts_us, 3, false);
    return json_pack("{s:s,s:s}", "lsn", lsn, "commit_ts", ts);
}

static int offset_parse(mcdc_offset *out, json_t *j, const char *file, const char *key)
{
    json_t *jl = json_object_get(j, "lsn"), *jt = json_object_get(j, "commit_ts");
    if (!json_is_object(j) || !json_is_string(jl) || !json_is_string(jt))
        return mcdc_error_set(MCDC_ECORRUPT, "%s: \"%s\" is not an offset {lsn, commit_ts}",
                              file, key);
    memset(out, 0, sizeof *out);
    if (mcdc_lsn_parse(&out->lsn, json_string_value(jl)) < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: \"%s\": bad lsn '%s'", file, key,
                              json_string_value(jl));
    const char *ts = json_string_value(jt);
    if (ts[0]) {
        if (mcdc_time_parse(&out->commit_ts_us, ts) < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: \"%s\": bad commit_ts '%s'", file, key, ts);
        out->has_commit_ts = true;
    }
    return 0;
}

static const char *time_text(char buf[MCDC_TIME_STRLEN], int64_t us)
{
    return mcdc_time_format(buf, us, 3, false);
}

/* ---- files --------------------------------------------------------------------------- */

static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

static char *path_batch(const char *dir, const char *sub, int64_t n)
{
    size_t len = strlen(dir) + strlen(sub) + 32;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s/%" PRId64, dir, sub, n);
    return p;
}

/* Read and parse a JSON state file. */
static int load_json(json_t **out, const char *path)
{
    *out = NULL;
    mcdc_buf b = MCDC_BUF_INIT(MAX_STATE_FILE);
    int rc = mcdc_storage_read(&b, NULL, path);
    if (rc < 0) {
        mcdc_buf_dispose(&b);
        return rc;
    }
    json_error_t err;
    *out = json_loadb(b.ptr ? b.ptr : "", b.len, 0, &err);
    mcdc_buf_dispose(&b);
    if (!*out || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return mcdc_error_set(MCDC_ECORRUPT, "%s: not a JSON object (line %d: %s)", path,
                              err.line, err.text);
    }
    return 0;
}

/* A batch file another stream created first: two streams on one checkpoint (C4). */
static int taken(const mcdc_checkpoint *ck, const char *path, int64_t n, const char *what)
{
    mcdc_error_set(MCDC_ECONFLICT, "checkpoint %s: batch %" PRId64 " was %s by another stream "
                   "meanwhile (%s exists)", ck->dir, n, what, path);
    return mcdc_error_hint("another stream writes this checkpoint, and has this batch: nothing "
                           "was lost or doubled; keep one stream per checkpoint%s",
                           mcdc_storage_is_s3(ck->dir) ? " (its lease keeps a second one out "
                           "unless --lease off)" : "");
}

/* Write a new state file durably, never replacing one (C1, invariant 6). */
static int store_json(const char *path, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", path);
    size_t len = strlen(text);
    text[len] = '\0';
    int rc = mcdc_storage_create(path, text, len);
    free(text);
    return rc;
}

/* The numbered files of a subdirectory: first and last number, checking contiguity. */
static int scan_numbers(const char *dir, const char *sub, int64_t *first, int64_t *last)
{
    *first = *last = -1;
    char *path = path_join(dir, sub);
    if (!path)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
    uint64_t *nums = NULL;
    size_t n = 0;
    int rc = mcdc_storage_list_numbered(&nums, &n, path);
    if (rc == MCDC_ENOTFOUND && mcdc_storage_is_s3(dir)) {
        mcdc_error_clear(); /* no object under the prefix yet: an object store has no
                             * empty directories */
        rc = 0;
    }
    if (rc < 0)
        goto done;
    for (size_t i = 1; i < n; i++) {
        if (nums[i] != nums[i - 1] + 1) {
            rc = mcdc_error_set(MCDC_ECORRUPT,
                                "%s: batch %" PRIu64 " is missing between %" PRIu64 " and %"
                                PRIu64 ": the checkpoint is corrupt", path, nums[i - 1] + 1,
                                nums[i - 1], nums[i]);
            mcdc_error_hint("restore the checkpoint, or start a new one with a new app_id");
            goto done;
        }
    }
    if (n) {
        if (nums[n - 1] > (uint64_t)INT64_MAX / 2) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: batch number %" PRIu64 " is out of range",
                                path, nums[n - 1]);
            goto done;
        }
        *first = (int64_t)nums[0];
        *last = (int64_t)nums[n - 1];
    }
done:
    free(nums);
    free(path);
    return rc;
}

/* ---- offsets/N and commits/N ---------------------------------------------------------- */

static int get_i64(int64_t *out, json_t *j, const char *key, const char *file, bool nullable)
{
    json_t *v = json_object_get(j, key);
    if (nullable && (!v || json_is_null(v))) {
        *out = -1;
        return 0;
    }
    if (!json_is_integer(v))
        return mcdc_error_set(MCDC_ECORRUPT, "%s: \"%s\" is missing or not an integer", file, key);
    *out = json_integer_value(v);
    return 0;
}

static int get_time(int64_t *out, json_t *j, const char *key, const char *file)
{
    json_t *v = json_object_get(j, key);
    *out = 0;
    if (!v)
        return 0;
    if (!json_is_string(v) || mcdc_time_parse(out, json_string_value(v)) < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: \"%s\" is not a time", file, key);
    return 0;
}

static int read_range(mcdc_batch_range *out, const char *dir, int64_t n)
{
    char *path = path_batch(dir, "offsets", n);
    if (!path)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
    json_t *j = NULL;
    int rc = load_json(&j, path);
    if (rc < 0)
        goto done;
    memset(out, 0, sizeof *out);
    if ((rc = get_i64(&out->batch_id, j, "batch_id", path, false)) < 0)
        goto done;
    if (out->batch_id != n) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: records batch %" PRId64, path, out->batch_id);
        goto done;
    }
    if ((rc = offset_parse(&out->start, json_object_get(j, "start"), path, "start")) < 0 ||
        (rc = offset_parse(&out->end, json_object_get(j, "end"), path, "end")) < 0 ||
        (rc = get_time(&out->planned_at_us, j, "planned_at", path)) < 0)
        goto done;
    json_t *skip = json_object_get(j, "skipped");
    if (skip && !json_is_null(skip)) {
        const char *f = json_string_value(json_object_get(skip, "from"));
        const char *t = json_string_value(json_object_get(skip, "to"));
        if (!f || !t || mcdc_lsn_parse(&out->skip_from, f) < 0 ||
            mcdc_lsn_parse(&out->skip_to, t) < 0) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: \"skipped\" needs LSNs from and to", path);
            goto done;
        }
        out->has_skip = true;
    }
    if (mcdc_lsn_cmp(&out->end.lsn, &out->start.lsn) < 0)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: end is below start", path);
done:
    json_decref(j);
    free(path);
    return rc;
}

static int read_commit(mcdc_batch_commit *out, const char *dir, int64_t n)
{
    char *path = path_batch(dir, "commits", n);
    if (!path)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
    json_t *j = NULL;
    int rc = load_json(&j, path);
    if (rc < 0)
        goto done;
    memset(out, 0, sizeof *out);
    if ((rc = get_i64(&out->batch_id, j, "batch_id", path, false)) < 0 ||
        (rc = get_i64(&out->bronze_version, j, "bronze_version", path, true)) < 0 ||
        (rc = get_i64(&out->facts_version, j, "facts_version", path, true)) < 0 ||
        (rc = get_time(&out->committed_at_us, j, "committed_at", path)) < 0)
        goto done;
    if (out->batch_id != n)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: records batch %" PRId64, path, out->batch_id);
done:
    json_decref(j);
    free(path);
    return rc;
}

/* Scan offsets/ and commits/ and check (C3). */
static int scan_batches(mcdc_checkpoint *ck)
{
    int rc;
    if ((rc = scan_numbers(ck->dir, "offsets", &ck->first_offset, &ck->last_offset)) < 0 ||
        (rc = scan_numbers(ck->dir, "commits", &ck->first_commit, &ck->last_commit)) < 0)
        return rc;
    if (ck->last_commit >= 0 &&
        (ck->last_offset < ck->last_commit || ck->last_offset > ck->last_commit + 1))
        return mcdc_error_set(MCDC_ECORRUPT,
                              "%s: commits/%" PRId64 " does not match offsets/%" PRId64
                              ": the checkpoint is corrupt", ck->dir, ck->last_commit,
                              ck->last_offset);
    if (ck->last_commit < 0 && ck->last_offset >= 0 && ck->first_offset != ck->last_offset)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: offsets/ run to %" PRId64 " without a commit:"
                              " the checkpoint is corrupt", ck->dir, ck->last_offset);
    if (ck->first_offset >= 0 && ck->first_offset < first_batch(ck))
        return mcdc_error_set(MCDC_ECORRUPT, "%s: offsets/%" PRId64 " is below the batch %" PRId64
                              " its adoption started at: the checkpoint is corrupt", ck->dir,
                              ck->first_offset, first_batch(ck));
    if (ck->last_commit < 0 && ck->last_offset >= 0 && ck->last_offset != first_batch(ck))
        return mcdc_error_set(MCDC_ECORRUPT, "%s: offsets/%" PRId64 " without a commit before "
                              "it: the checkpoint is corrupt", ck->dir, ck->last_offset);
    if (ck->last_offset >= 0 && (rc = read_range(&ck->last_range, ck->dir, ck->last_offset)) < 0)
        return rc;
    if (ck->last_commit >= 0 &&
        (rc = read_commit(&ck->last_commit_rec, ck->dir, ck->last_commit)) < 0)
        return rc;
    if (ck->last_commit >= 0 && ck->last_commit == ck->last_offset - 1) {
        /* the range being replayed must start where the finished one ended */
        mcdc_batch_range prev;
        if ((rc = read_range(&prev, ck->dir, ck->last_commit)) < 0)
            return rc;
        if (mcdc_lsn_cmp(&prev.end.lsn, &ck->last_range.start.lsn) != 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: offsets/%" PRId64 " does not start where "
                                  "offsets/%" PRId64 " ends", ck->dir, ck->last_offset,
                                  ck->last_commit);
    }
    return 0;
}

/* ---- metadata ------------------------------------------------------------------------- */

static int new_uuid(char out[37])
{
    uint8_t r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return mcdc_error_set(MCDC_EIO, "getrandom: %s", strerror(errno));
    r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);
    r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
             r[13], r[14], r[15]);
    return 0;
}

static char *dup_str(json_t *j, const char *key)
{
    const char *s = json_string_value(json_object_get(j, key));
    return s ? strdup(s) : NULL;
}

static int load_meta(mcdc_checkpoint *ck, const char *path)
{
    json_t *j = NULL;
    int rc = load_json(&j, path);
    if (rc < 0)
        return rc;
    ck->meta_id = dup_str(j, "id");
    ck->meta_app_id = dup_str(j, "app_id");
    ck->meta_ci = dup_str(j, "capture_instance");
    ck->meta_target = dup_str(j, "target");
    if (!ck->meta_id || !ck->meta_app_id || !ck->meta_ci || !ck->meta_target)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: needs id, app_id, capture_instance and target",
                            path);
    else
        rc = get_time(&ck->meta.created_at_us, j, "created_at", path);
    json_decref(j);
    ck->meta.id = ck->meta_id;
    ck->meta.app_id = ck->meta_app_id;
    ck->meta.capture_instance = ck->meta_ci;
    ck->meta.target = ck->meta_target;
    return rc;
}

static int create_meta(const char *path, const char *app_id, const char *ci, const char *target)
{
    char id[37], ts[MCDC_TIME_STRLEN];
    int rc = new_uuid(id);
    if (rc < 0)
        return rc;
    json_t *j = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s}", "version", 1, "id", id, "app_id", app_id,
                          "capture_instance", ci, "target", target, "created_at",
                          time_text(ts, mcdc_time_now_us()));
    if (!j)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", path);
    rc = store_json(path, j);
    json_decref(j);
    if (rc == MCDC_EEXISTS) /* another creator won between our check and now: read theirs */
        mcdc_error_clear(), rc = 0;
    return rc;
}

/* A checkpoint is a local directory or an s3:// prefix; other schemes are refused. */
int mcdc_checkpoint_check_location(const char *dir)
{
    if (mcdc_storage_is_s3(dir))
        return mcdc_storage_check(dir);
    if (!mcdc_warehouse_is_uri(dir))
        return 0;
    char shown[256];
    mcdc_error_set(MCDC_EUNSUPPORTED, "checkpoint '%s': this object store is not supported; "
                   "a checkpoint is a local directory or an s3:// prefix",
                   mcdc_secret_mask_str(shown, sizeof shown, dir));
    return mcdc_error_hint("give --checkpoint a local directory (e.g. ./checkpoints/orders) or "
                           "s3://BUCKET/PREFIX");
}

/* The lease is still ours (C4); a checkpoint without one passes. */
static int lease_ok(const mcdc_checkpoint *ck)
{
    return ck->lease ? mcdc_lease_check(ck->lease) : 0;
}

/* ---- adoption (C6) ----------------------------------------------------------------------- */

static int load_adoption(mcdc_checkpoint *ck)
{
    char *p = path_join(ck->dir, "adopted");
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", ck->dir);
    int rc = 0;
    json_t *j = NULL;
    if (!mcdc_storage_exists(p))
        goto done;
    if ((rc = load_json(&j, p)) < 0 ||
        (rc = get_i64(&ck->adoption.first_batch, j, "first_batch", p, false)) < 0 ||
        (rc = offset_parse(&ck->adoption.after, json_object_get(j, "after"), p, "after")) < 0 ||
        (rc = get_time(&ck->adoption.adopted_at_us, j, "adopted_at", p)) < 0)
        goto done;
    if (ck->adoption.first_batch < 0 || ck->adoption.first_batch > INT64_MAX / 2) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: first_batch %" PRId64 " is out of range", p,
                            ck->adoption.first_batch);
        goto done;
    }
    const char *from = json_string_value(json_object_get(j, "from_owner"));
    if (!(ck->adopted_from = strdup(from ? from : ""))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", p);
        goto done;
    }
    ck->adoption.from_owner = ck->adopted_from;
    ck->has_adoption = true;
done:
    json_decref(j);
    free(p);
    return rc;
}

int mcdc_checkpoint_adoption_get(const mcdc_checkpoint *ck, mcdc_checkpoint_adoption *out)
{
    if (!ck->has_adoption)
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: adopted nothing", ck->dir);
    *out = ck->adoption;
    return 0;
}

int mcdc_checkpoint_record_adoption(mcdc_checkpoint *ck, int64_t first_batch_id,
                                    const mcdc_offset *after, const char *from_owner)
{
    MCDC_ASSERT_ARG(ck && after && from_owner && first_batch_id >= 0);
    if (ck->has_adoption || ck->last_offset >= 0)
        return mcdc_error_set(MCDC_EINVAL, "checkpoint %s: already %s", ck->dir,
                              ck->has_adoption ? "adopted a table" : "has batches");
    int lrc = lease_ok(ck);
    if (lrc < 0)
        return lrc;
    char ts[MCDC_TIME_STRLEN];
    int64_t now = mcdc_time_now_us();
    json_t *j = json_pack("{s:I,s:o,s:s,s:s}", "first_batch", (json_int_t)first_batch_id,
                          "after", offset_json(after), "from_owner", from_owner, "adopted_at",
                          time_text(ts, now));
    char *path = path_join(ck->dir, "adopted");
    int rc = (!j || !path) ? mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", ck->dir)
                           : store_json(path, j);
    json_decref(j);
    free(path);
    if (rc < 0)
        return rc;
    if (!(ck->adopted_from = strdup(from_owner)))
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", ck->dir);
    ck->adoption.first_batch = first_batch_id;
    ck->adoption.after = *after;
    ck->adoption.from_owner = ck->adopted_from;
    ck->adoption.adopted_at_us = now;
    ck->has_adoption = true;
    return 0;
}

int mcdc_checkpoint_peek(const char *dir, bool *exists, bool *has_batches)
{
    MCDC_ASSERT_ARG(dir && exists && has_batches);
    *exists = *has_batches = false;
    int rc = mcdc_checkpoint_check_location(dir);
    if (rc < 0)
        return rc;
    char *p = path_join(dir, "metadata");
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
    *exists = mcdc_storage_exists(p);
    free(p);
    const char *subs[] = { "offsets", "commits" };
    for (int i = 0; i < 2 && rc == 0 && !*has_batches; i++) {
        if (!(p = path_join(dir, subs[i])))
            return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
        if (mcdc_storage_exists(p)) {
            uint64_t *nums = NULL;
            size_t n = 0;
            rc = mcdc_storage_list_numbered(&nums, &n, p);
            *has_batches = rc == 0 && n > 0;
            free(nums);
        }
        free(p);
    }
    return rc;
}

/* ---- reading without the lock (finalization, run --status) ------------------------------ */

int mcdc_checkpoint_read_last(mcdc_offset *out, int64_t *batch_id, const char *base)
{
    MCDC_ASSERT_ARG(out && base);
    /* the newest re-snapshot generation's checkpoint (pipeline/generation.c) */
    mcdc_generation g;
    char dir[4096];
    int rc = mcdc_checkpoint_check_location(base);
    if (rc < 0)
        return rc;
    rc = mcdc_generation_read(&g, base);
    if (rc < 0 || (rc = mcdc_generation_checkpoint(dir, sizeof dir, base, g.n)) < 0)
        return rc;
    if (!mcdc_storage_exists(dir))
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no such directory", dir);
    char *p = path_join(dir, "commits");
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
    uint64_t *nums = NULL;
    size_t n = 0;
    rc = mcdc_storage_exists(p) ? mcdc_storage_list_numbered(&nums, &n, p) : 0;
    free(p);
    int64_t last = n ? (int64_t)nums[n - 1] : -1; /* sorted */
    free(nums);
    if (rc < 0)
        return rc;
    if (last < 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no batch committed yet", dir);
    /* the range of the newest finished batch (C2: a batch without its commit is replayed
     * with exactly its range, so its end is not processed yet) */
    mcdc_batch_range r;
    if ((rc = read_range(&r, dir, last)) == MCDC_ENOTFOUND) {
        char *q = path_batch(dir, "offsets", last);
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: missing, but batch %" PRId64 " finished",
                            q ? q : dir, last);
        free(q);
    }
    if (rc < 0)
        return rc;
    *out = r.end;
    if (batch_id)
        *batch_id = last;
    return 0;
}

int mcdc_checkpoint_check_target(const char *dir, const char *table)
{
    MCDC_ASSERT_ARG(dir && table);
    int lrc = mcdc_checkpoint_check_location(dir);
    if (lrc < 0)
        return lrc;
    if (!mcdc_storage_exists(dir))
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no such directory", dir);
    char *p = path_join(dir, "metadata");
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
    json_t *j = NULL;
    int rc = load_json(&j, p);
    if (rc == MCDC_ENOTFOUND)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: missing: not a stream checkpoint", p);
    const char *target = rc == 0 ? json_string_value(json_object_get(j, "target")) : NULL;
    if (rc == 0 && !target) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: no \"target\": not a stream checkpoint's "
                            "metadata", p);
    } else if (rc == 0 && strcmp(target, table) != 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "checkpoint %s: belongs to target '%s', not '%s'", dir,
                            target, table);
        mcdc_error_hint("pass --table %s, or the checkpoint of %s's stream", target, table);
    }
    json_decref(j);
    free(p);
    return rc;
}

/* ---- open / close ---------------------------------------------------------------------- */

int mcdc_checkpoint_open(mcdc_checkpoint **out, const char *dir, const char *app_id,
                         const char *capture_instance, const char *target)
{
    return mcdc_checkpoint_open_leased(out, dir, app_id, capture_instance, target,
                                       MCDC_CHECKPOINT_LEASE_DEFAULT_US);
}

/* Take the one-writer rule (C4): the flock of <dir>/lock, or on object storage the lease. */
static int take_lock(mcdc_checkpoint *ck, int64_t lease_us)
{
    char *p = path_join(ck->dir, mcdc_storage_is_s3(ck->dir) ? "lease" : "lock");
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", ck->dir);
    int rc = 0;
    if (!mcdc_storage_is_s3(ck->dir)) {
        if ((rc = mcdc_fs_lock_acquire(&ck->lock, p)) == MCDC_ELOCKED)
            mcdc_error_hint("one stream per checkpoint: stop the other stream, or give this one "
                            "its own --checkpoint and --app-id");
    } else if (lease_us == MCDC_CHECKPOINT_LEASE_OFF) {
        mcdc_log(MCDC_LOG_WARN, "checkpoint", "%s: no lease (--lease off): nothing keeps a "
                 "second stream off this checkpoint", ck->dir);
    } else {
        rc = mcdc_lease_acquire(&ck->lease, p, lease_us, ck->dir);
    }
    free(p);
    return rc;
}

int mcdc_checkpoint_lease_parse(int64_t *lease_us, const char *text, const char *subject)
{
    if (!strcmp(text, "off")) {
        *lease_us = MCDC_CHECKPOINT_LEASE_OFF;
        return 0;
    }
    int rc = mcdc_duration_parse(lease_us, text);
    if (rc == 0 && *lease_us < MCDC_CHECKPOINT_LEASE_MIN_US)
        rc = mcdc_error_set(MCDC_EINVAL, "%s is too short: a lease lasts at least 1s (it is "
                            "renewed every third of it), or off", subject);
    if (rc < 0)
        mcdc_error_hint("a lease: a duration (the default 30s, 2m) or off; it matters only for "
                        "a checkpoint on object storage (s3://)");
    return rc;
}

int mcdc_checkpoint_open_leased(mcdc_checkpoint **out, const char *dir, const char *app_id,
                                const char *capture_instance, const char *target,
                                int64_t lease_us)
{
    MCDC_ASSERT_ARG(out && dir && app_id && capture_instance && target);
    MCDC_ASSERT_ARG(lease_us == MCDC_CHECKPOINT_LEASE_OFF ||
                    lease_us >= MCDC_CHECKPOINT_LEASE_MIN_US);
    *out = NULL;
    int rc;
    char *p = NULL;
    mcdc_checkpoint *ck = calloc(1, sizeof *ck);
    if (!ck || !(ck->dir = strdup(dir))) {
        free(ck);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
    }
    if ((rc = mcdc_checkpoint_check_location(dir)) < 0)
        goto fail;
    if ((rc = mcdc_storage_mkdirs(dir)) < 0 || (rc = take_lock(ck, lease_us)) < 0)
        goto fail;
    if (!(p = path_join(dir, "metadata"))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
        goto fail;
    }
    if (!mcdc_storage_exists(p)) {
        /* (C5) metadata is written first and never removed: batches without it mean a
         * damaged checkpoint, not a new one (a new stream id would hide the loss) */
        for (int i = 0; i < 2; i++) {
            const char *sub = i ? "commits" : "offsets";
            int64_t first, last;
            rc = scan_numbers(dir, sub, &first, &last);
            if (rc == MCDC_ENOTFOUND) { /* a new directory: no subdirectory yet */
                mcdc_error_clear();
                rc = 0;
                continue;
            }
            if (rc < 0)
                goto fail;
            if (last >= 0) {
                rc = mcdc_error_set(MCDC_ECORRUPT, "checkpoint %s: metadata is missing, but "
                                    "%s/ holds batches %" PRId64 " to %" PRId64 ": the "
                                    "checkpoint is damaged", dir, sub, first, last);
                mcdc_error_hint("restore %s/metadata from a backup of the checkpoint (it names "
                                "the stream id, app_id, capture instance and target); nothing "
                                "was written", dir);
                goto fail;
            }
        }
        if ((rc = create_meta(p, app_id, capture_instance, target)) < 0)
            goto fail;
    }
    if ((rc = load_meta(ck, p)) < 0)
        goto fail;
    /* a checkpoint without batches recorded only its arguments: it can be started over */
    bool exists = false, has_batches = true;
    if (mcdc_checkpoint_peek(dir, &exists, &has_batches) < 0)
        mcdc_error_clear(), has_batches = true;
    char over[MCDC_PATH_MAX + 96] = "";
    if (!has_batches)
        snprintf(over, sizeof over, "; it holds no batch yet: to start over, remove %s", dir);
    if (strcmp(ck->meta.app_id, app_id) != 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "checkpoint %s: belongs to app_id '%s', not '%s'", dir,
                            ck->meta.app_id, app_id);
        mcdc_error_hint("a checkpoint serves one app_id: pass --app-id %s, or a new "
                        "--checkpoint%s", ck->meta.app_id, over);
        goto fail;
    }
    if (strcasecmp(ck->meta.capture_instance, capture_instance) != 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "checkpoint %s: belongs to capture instance '%s', not "
                            "'%s'", dir, ck->meta.capture_instance, capture_instance);
        mcdc_error_hint("one stream per capture instance: give this one its own --checkpoint "
                        "and --app-id%s", over);
        goto fail;
    }
    if (strcmp(ck->meta.target, target) != 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "checkpoint %s: belongs to target '%s', not '%s'", dir,
                            ck->meta.target, target);
        mcdc_error_hint("pass --target %s, or a new --checkpoint and --app-id for the new "
                        "target%s", ck->meta.target, over);
        goto fail;
    }
    free(p);
    p = NULL;
    const char *subs[] = { "offsets", "commits" };
    for (int i = 0; i < 2; i++) {
        if (!(p = path_join(dir, subs[i]))) {
            rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", dir);
            goto fail;
        }
        if ((rc = mcdc_storage_mkdirs(p)) < 0)
            goto fail;
        free(p);
        p = NULL;
    }
    if ((rc = load_adoption(ck)) < 0 || (rc = scan_batches(ck)) < 0)
        goto fail;
    *out = ck;
    return 0;
fail:
    free(p);
    mcdc_checkpoint_close(ck);
    return rc;
}

void mcdc_checkpoint_close(mcdc_checkpoint *ck)
{
    if (!ck)
        return;
    mcdc_fs_lock_release(ck->lock);
    mcdc_lease_release(ck->lease);
    free(ck->meta_id);
    free(ck->meta_app_id);
    free(ck->meta_ci);
    free(ck->meta_target);
    free(ck->adopted_from);
    free(ck->dir);
    free(ck);
}

const mcdc_checkpoint_meta *mcdc_checkpoint_meta_get(const mcdc_checkpoint *ck)
{
    return &ck->meta;
}

int mcdc_checkpoint_last_range(const mcdc_checkpoint *ck, mcdc_batch_range *out)
{
    if (ck->last_offset < 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no batch planned yet", ck->dir);
    *out = ck->last_range;
    return 0;
}

int mcdc_checkpoint_last_commit(const mcdc_checkpoint *ck, mcdc_batch_commit *out)
{
    if (ck->last_commit < 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no batch finished yet", ck->dir);
    *out = ck->last_commit_rec;
    return 0;
}

int mcdc_checkpoint_batch(const mcdc_checkpoint *ck, int64_t n, mcdc_batch_range *range,
                          mcdc_batch_commit *commit)
{
    if (n < 0 || n < ck->first_offset || n > ck->last_offset ||
        (commit && (n < ck->first_commit || n > ck->last_commit)))
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: batch %" PRId64 " is not kept",
                              ck->dir, n);
    int rc = 0;
    if (range)
        rc = n == ck->last_offset ? (*range = ck->last_range, 0) : read_range(range, ck->dir, n);
    if (rc == 0 && commit)
        rc = n == ck->last_commit ? (*commit = ck->last_commit_rec, 0)
                                  : read_commit(commit, ck->dir, n);
    return rc;
}

int mcdc_checkpoint_last_bronze_commit(const mcdc_checkpoint *ck, mcdc_batch_commit *out)
{
    for (int64_t n = ck->last_commit; n >= 0 && n >= ck->first_commit; n--) {
        mcdc_batch_commit c;
        int rc = n == ck->last_commit ? (c = ck->last_commit_rec, 0)
                                      : read_commit(&c, ck->dir, n);
        if (rc == MCDC_ENOTFOUND) /* pruned meanwhile: nothing older is kept */
            break;
        if (rc < 0)
            return rc;
        if (c.bronze_version >= 0) {
            *out = c;
            return 0;
        }
    }
    return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no kept batch recorded a bronze "
                          "version", ck->dir);
}

/* ---- writing ---------------------------------------------------------------------------- */

/* A range being recorded: offsets/N's text, written durably by a thread of its own (or by
 * the caller when it cannot start one). The thread touches only this struct: the checkpoint
 * changes in range_finish, on the caller's thread. */
struct mcdc_checkpoint_pending {
    mcdc_batch_range r;
    char            *path, *text;
    size_t           len;
    int              rc;    /* the write's outcome */
    mcdc_error       err;   /* its error, carried to the caller's thread */
    char             ctx[256];
    pthread_t        th;
    bool             threaded;
};

static void range_write(mcdc_checkpoint_pending *p)
{
    p->rc = mcdc_storage_create(p->path, p->text, p->len);
    if (p->rc < 0)
        p->err = *mcdc_error_last();
}

static void *range_main(void *arg)
{
    mcdc_checkpoint_pending *p = arg;
    mcdc_log_set_context(p->ctx);
    range_write(p);
    return NULL;
}

static void range_free(mcdc_checkpoint_pending *p)
{
    free(p->path);
    free(p->text);
    free(p);
}

/* The checks and offsets/N's text: nothing written yet. */
static int range_prepare(mcdc_checkpoint *ck, const mcdc_batch_range *r, mcdc_checkpoint_pending **out)
{
    *out = NULL;
    int64_t next = ck->last_commit >= 0 ? ck->last_commit + 1 : first_batch(ck);
    if (ck->last_offset != ck->last_commit || r->batch_id != next)
        return mcdc_error_set(MCDC_EINVAL, "checkpoint %s: batch %" PRId64 " out of sequence "
                              "(last planned %" PRId64 ", last finished %" PRId64 ")", ck->dir,
                              r->batch_id, ck->last_offset, ck->last_commit);
    int lrc = lease_ok(ck);
    if (lrc < 0)
        return lrc;
    char ts[MCDC_TIME_STRLEN], from[MCDC_LSN_STRLEN], to[MCDC_LSN_STRLEN];
    json_t *j = json_pack("{s:I,s:o,s:o,s:s}", "batch_id", (json_int_t)r->batch_id, "start",
                          offset_json(&r->start), "end", offset_json(&r->end), "planned_at",
                          time_text(ts, r->planned_at_us ? r->planned_at_us : mcdc_time_now_us()));
    if (j && r->has_skip)
        json_object_set_new(j, "skipped",
                            json_pack("{s:s,s:s}", "from", mcdc_lsn_format(from, &r->skip_from),
                                      "to", mcdc_lsn_format(to, &r->skip_to)));
    mcdc_checkpoint_pending *p = calloc(1, sizeof *p);
    if (p) {
        p->r = *r;
        p->path = path_batch(ck->dir, "offsets", r->batch_id);
        p->text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        p->len = p->text ? strlen(p->text) : 0;
    }
    json_decref(j);
    if (!p || !p->path || !p->text) {
        if (p)
            range_free(p);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", ck->dir);
    }
    *out = p;
    return 0;
}

/* After the write: the checkpoint records the range (C1), or the write's error comes back
 * on the caller's thread. Frees @p p. */
static int range_finish(mcdc_checkpoint *ck, mcdc_checkpoint_pending *p)
{
    int rc = p->rc;
    if (rc == MCDC_EEXISTS)
        rc = taken(ck, p->path, p->r.batch_id, "planned");
    else if (rc < 0) {
        mcdc_error_restore(&p->err);
    }
    if (rc == 0) {
        ck->last_offset = p->r.batch_id;
        if (ck->first_offset < 0)
            ck->first_offset = p->r.batch_id;
        ck->last_range = p->r;
    }
    range_free(p);
    return rc;
}

int mcdc_checkpoint_record_range(mcdc_checkpoint *ck, const mcdc_batch_range *r)
{
    MCDC_ASSERT_ARG(ck && r);
    mcdc_checkpoint_pending *p;
    int rc = range_prepare(ck, r, &p);
    if (rc < 0)
        return rc;
    range_write(p);
    return range_finish(ck, p);
}

int mcdc_checkpoint_record_range_begin(mcdc_checkpoint *ck, const mcdc_batch_range *r,
                                       mcdc_checkpoint_pending **out)
{
    MCDC_ASSERT_ARG(ck && r && out);
    int rc = range_prepare(ck, r, out);
    if (rc < 0)
        return rc;
    mcdc_checkpoint_pending *p = *out;
    const char *ctx = mcdc_log_context();
    snprintf(p->ctx, sizeof p->ctx, "%s", ctx ? ctx : "");
    p->threaded = pthread_create(&p->th, NULL, range_main, p) == 0;
    if (!p->threaded)
        range_write(p); /* no thread: written now, as mcdc_checkpoint_record_range does */
    return 0;
}

int mcdc_checkpoint_record_range_end(mcdc_checkpoint *ck, mcdc_checkpoint_pending *p)
{
    if (!p)
        return 0;
    if (p->threaded)
        pthread_join(p->th, NULL);
    return range_finish(ck, p);
}

static void prune(mcdc_checkpoint *ck, int64_t n)
{
    if (n < 0)
        return;
    const char *subs[] = { "commits", "offsets" }; /* commits first: never a commit alone */
    for (int i = 0; i < 2; i++) {
        char *p = path_batch(ck->dir, subs[i], n);
        if (p && mcdc_storage_delete(p) == 0) {
            if (i == 0)
                ck->first_commit = n + 1;
            else
                ck->first_offset = n + 1;
        }
        free(p);
    }
}

int mcdc_checkpoint_record_commit(mcdc_checkpoint *ck, const mcdc_batch_commit *c)
{
    MCDC_ASSERT_ARG(ck && c);
    if (c->batch_id != ck->last_offset || ck->last_commit >= c->batch_id)
        return mcdc_error_set(MCDC_EINVAL, "checkpoint %s: commit of batch %" PRId64 " out of "
                              "sequence (last planned %" PRId64 ", last finished %" PRId64 ")",
                              ck->dir, c->batch_id, ck->last_offset, ck->last_commit);
    int lrc = lease_ok(ck);
    if (lrc < 0)
        return lrc;
    char ts[MCDC_TIME_STRLEN];
    json_t *j = json_pack("{s:I,s:o,s:o,s:s}", "batch_id", (json_int_t)c->batch_id,
                          "bronze_version", c->bronze_version >= 0
                              ? json_integer(c->bronze_version) : json_null(),
                          "facts_version", c->facts_version >= 0
                              ? json_integer(c->facts_version) : json_null(),
                          "committed_at", time_text(ts, c->committed_at_us ? c->committed_at_us
                                                                          : mcdc_time_now_us()));
    char *path = path_batch(ck->dir, "commits", c->batch_id);
    int rc = (!j || !path) ? mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", ck->dir)
                           : store_json(path, j);
    if (rc == MCDC_EEXISTS)
        rc = taken(ck, path, c->batch_id, "finished");
    json_decref(j);
    free(path);
    if (rc == 0) {
        ck->last_commit = c->batch_id;
        if (ck->first_commit < 0)
            ck->first_commit = c->batch_id;
        ck->last_commit_rec = *c;
        /* prune everything older than the kept window (normally one batch) */
        while (ck->first_commit >= 0 && ck->first_commit <= c->batch_id - KEEP_BATCHES) {
            int64_t old = ck->first_commit;
            prune(ck, old);
            if (ck->first_commit == old) /* could not remove: try again next time */
                break;
        }
    }
    return rc;
}

