/*
 * core/storage_s3.c: the S3 backend of the storage seam (locations "s3://bucket/key").
 *
 * How each guarantee of mcdc/storage.h holds on S3:
 * (S1) create-if-absent is one PUT with If-None-Match: * (never multipart or copy, which
 *      radosgw and other stores do not condition: docs/decisions/0017). 200 created it,
 *      412 means another writer has it (MCDC_EEXISTS). When an earlier attempt of the same
 *      PUT may have been applied (its answer was lost, or a 5xx came back) a 412 is checked
 *      by reading the object back: the same bytes are our own write, success. Before the
 *      first create in a bucket a probe object is created twice and the second must get
 *      412; a store that ignores the header is refused (mcdc_storage_allow_unsafe_single_writer
 *      lets one writer go on anyway).
 * (S2) An object appears whole at the end of its PUT or CompleteMultipartUpload. A streamed
 *      writer sends parts of MCDC_S3_PART_BYTES (default 8 MiB) as they fill, so at most one
 *      part is in memory; an object smaller than one part is a single PUT. A no-replace
 *      multipart object is checked absent (HEAD) just before completion: data files have
 *      unique names, so this only catches misuse.
 * (S3) ListObjectsV2 returns keys in byte order; continuation tokens page through all.
 * (S4) The change token is the size and the ETag.
 * Directories do not exist: mkdirs does nothing, and a "directory" exists while an object
 * lies under it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/s3_int.h"
#include "core/storage_int.h"
#include "mcdc/log.h"
#include "mcdc/secret.h"
#include "mcdc/time.h"

#define MAX_BUCKETS 64

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static bool            g_allow_unsafe;
static bool            g_bare_if_match; /* the store compares If-Match with the unquoted ETag */
static struct probed {
    char name[64];
    int  verdict; /* 1 honours If-None-Match, -1 ignores it (refused), 2 ignores it (allowed) */
} g_probed[MAX_BUCKETS];
static int g_n_probed;

void mcdc_storage_allow_unsafe_single_writer(bool allow)
{
    pthread_mutex_lock(&g_mu);
    g_allow_unsafe = allow;
    pthread_mutex_unlock(&g_mu);
}

bool mcdc_storage_is_s3(const char *loc)
{
    return loc && strncmp(loc, "s3://", 5) == 0;
}

/* A location split into bucket and key. */
typedef struct s3_loc {
    char bucket[64];
    char key[MCDC_PATH_MAX_S3];
} s3_loc;

static int parse(s3_loc *out, const char *loc)
{
    const char *b = loc + 5, *slash = strchr(b, '/');
    size_t bl = slash ? (size_t)(slash - b) : strlen(b);
    char shown[256]; /* a location in a message, a password in it masked */
    mcdc_secret_mask_str(shown, sizeof shown, loc);
    if (bl < 3 || bl > 63) {
        mcdc_error_set(MCDC_EINVAL, "bad S3 location '%.200s': the bucket name must be 3 to 63 characters", shown);
        return mcdc_error_hint("write s3://BUCKET/PREFIX, e.g. s3://my-lake/warehouse");
    }
    for (size_t i = 0; i < bl; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) {
            mcdc_error_set(MCDC_EINVAL, "bad S3 location '%.200s': '%c' in the bucket name", shown, c);
            return mcdc_error_hint("bucket names are lower-case letters, digits, '-' and '.'");
        }
    }
    memcpy(out->bucket, b, bl);
    out->bucket[bl] = '\0';
    const char *k = slash ? slash + 1 : "";
    size_t kl = strlen(k);
    while (kl && k[kl - 1] == '/')
        kl--;
    if (kl >= sizeof out->key)
        return mcdc_error_set(MCDC_EINVAL, "bad S3 location '%.200s…': the key is longer than %zu bytes", loc,
                              sizeof out->key - 1);
    memcpy(out->key, k, kl);
    out->key[kl] = '\0';
    return 0;
}

static void random_hex(char *out, size_t n_bytes)
{
    unsigned char r[32];
    if (n_bytes > sizeof r)
        n_bytes = sizeof r;
    if (getrandom(r, n_bytes, 0) != (ssize_t)n_bytes)
        for (size_t i = 0; i < n_bytes; i++)
            r[i] = (unsigned char)(rand() ^ (int)(uintptr_t)out);
    for (size_t i = 0; i < n_bytes; i++)
        sprintf(out + 2 * i, "%02x", r[i]);
}

static bool holds(const s3_loc *l, const void *data, size_t len);

/* ---- the probe ----------------------------------------------------------------------- */

static int put_once(const s3_loc *l, const char *key, const void *data, size_t len, bool cond, mcdc_s3_resp *rs)
{
    mcdc_s3_req rq = { .method = "PUT", .bucket = l->bucket, .key = key, .body = data ? data : "",
                       .body_len = len, .if_none_match = cond };
    return mcdc_s3__request(&rq, rs);
}

static int refuse_store(const char *bucket)
{
    mcdc_error_set(MCDC_EINVAL, "S3 bucket '%s': the store ignores If-None-Match: * (a second conditional PUT "
                   "of one key replaced it), so two writers could both commit one Delta version", bucket);
    return mcdc_error_hint("use a store that honours conditional PUTs (AWS S3, MinIO, Ceph radosgw); with only "
                           "one writer ever, --allow-unsafe-single-writer lets it go on without that protection");
}

/* Probe the bucket of @p l once per process (see S1). */
static int probe(const s3_loc *l)
{
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < g_n_probed; i++)
        if (strcmp(g_probed[i].name, l->bucket) == 0) {
            int v = g_probed[i].verdict;
            pthread_mutex_unlock(&g_mu);
            return v == -1 ? refuse_store(l->bucket) : 0;
        }
    bool allow = g_allow_unsafe;
    pthread_mutex_unlock(&g_mu);

    s3_loc pl = *l; /* the probe object, next to the object about to be created */
    char id[33];
    random_hex(id, 16);
    const char *dir_end = strrchr(l->key, '/');
    int dir_len = dir_end ? (int)(dir_end - l->key) : 0;
    if (dir_len > (int)sizeof pl.key - 64)
        return mcdc_error_set(MCDC_EINVAL, "s3://%s/%.200s…: key too long", l->bucket, l->key);
    snprintf(pl.key, sizeof pl.key, "%.*s%s.mcdc-probe-%s", dir_len, l->key, dir_end ? "/" : "", id);
    const char *key = pl.key;
    mcdc_s3_resp r1, r2;
    int rc = put_once(l, key, "probe", 5, true, &r1);
    if (rc == 0 && r1.status == 412 && r1.uncertain) {
        /* an earlier attempt of this PUT stored it (the probe's name is ours alone) */
        if (holds(&pl, "probe", 5))
            r1.status = 200;
    }
    if (rc == 0 && r1.status != 200)
        rc = mcdc_s3__fail("PUT (probe)", l->bucket, key, &r1);
    if (rc == 0)
        rc = put_once(l, key, "probe", 5, true, &r2);
    if (rc < 0)
        return rc;
    mcdc_s3_req del = { .method = "DELETE", .bucket = l->bucket, .key = key };
    mcdc_s3_resp rd;
    if (mcdc_s3__request(&del, &rd) < 0)
        mcdc_error_clear();
    int verdict;
    if (r2.status == 412)
        verdict = 1;
    else if (r2.status == 200)
        verdict = allow ? 2 : -1;
    else
        return mcdc_s3__fail("PUT (probe)", l->bucket, key, &r2);
    pthread_mutex_lock(&g_mu);
    if (g_n_probed < MAX_BUCKETS) {
        snprintf(g_probed[g_n_probed].name, sizeof g_probed[g_n_probed].name, "%s", l->bucket);
        g_probed[g_n_probed++].verdict = verdict;
    }
    pthread_mutex_unlock(&g_mu);
    if (verdict == 2)
        mcdc_log(MCDC_LOG_WARN, "s3", "bucket %s ignores If-None-Match: *; going on with one writer only "
                 "(--allow-unsafe-single-writer)", l->bucket);
    return verdict == -1 ? refuse_store(l->bucket) : 0;
}

int mcdc_storage_check(const char *loc)
{
    if (!mcdc_storage_is_s3(loc))
        return 0;
    s3_loc l;
    const mcdc_s3_config *cfg;
    int rc = parse(&l, loc);
    if (rc == 0)
        rc = mcdc_s3__config(&cfg);
    if (rc == 0) {
        /* probe as if creating an object under the location */
        size_t n = strlen(l.key);
        if (n && n + 2 < sizeof l.key)
            memcpy(l.key + n, "/x", 3);
        rc = probe(&l);
    }
    return rc;
}

/* ---- objects ------------------------------------------------------------------------- */

static void info_of(mcdc_storage_info *out, const mcdc_s3_resp *rs, uint64_t size)
{
    if (!out)
        return;
    out->size = size;
    out->mtime_ms = rs->mtime_ms;
    snprintf(out->token, sizeof out->token, "%llu:%.80s", (unsigned long long)size, rs->etag);
}

static int s3_stat(mcdc_storage_info *out, const char *loc)
{
    s3_loc l;
    int rc = parse(&l, loc);
    if (rc < 0)
        return rc;
    mcdc_s3_req rq = { .method = "HEAD", .bucket = l.bucket, .key = l.key };
    mcdc_s3_resp rs;
    if ((rc = mcdc_s3__request(&rq, &rs)) < 0)
        return rc;
    if (rs.status == 404)
        return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such object", loc);
    if (rs.status != 200)
        return mcdc_s3__fail("HEAD", l.bucket, l.key, &rs);
    info_of(out, &rs, rs.content_length);
    return 0;
}

static int s3_read(mcdc_buf *out, mcdc_storage_info *info, const char *loc)
{
    s3_loc l;
    int rc = parse(&l, loc);
    if (rc < 0)
        return rc;
    size_t start = out->len;
    mcdc_s3_req rq = { .method = "GET", .bucket = l.bucket, .key = l.key, .out = out };
    mcdc_s3_resp rs;
    if ((rc = mcdc_s3__request(&rq, &rs)) < 0)
        return rc;
    if (rs.status == 404)
        return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such object", loc);
    if (rs.status != 200) {
        out->len = start;
        return mcdc_s3__fail("GET", l.bucket, l.key, &rs);
    }
    if (out->ptr) {
        if (mcdc_buf_grow(out, 1) == 0)
            out->ptr[out->len] = '\0';
    }
    info_of(info, &rs, out->len - start);
    return 0;
}

/* The object at @p l holds exactly @p data? (a retried create that met 412) */
static bool holds(const s3_loc *l, const void *data, size_t len)
{
    mcdc_buf b = MCDC_BUF_INIT(len + 1);
    mcdc_s3_req rq = { .method = "GET", .bucket = l->bucket, .key = l->key, .out = &b };
    mcdc_s3_resp rs;
    bool same = mcdc_s3__request(&rq, &rs) == 0 && rs.status == 200 && b.len == len &&
                (len == 0 || memcmp(b.ptr, data, len) == 0);
    mcdc_buf_dispose(&b);
    mcdc_error_clear();
    return same;
}

static int create_at(const s3_loc *l, const char *loc, const void *data, size_t len)
{
    int rc = probe(l);
    if (rc < 0)
        return rc;
    mcdc_s3_resp rs;
    if ((rc = put_once(l, l->key, data, len, true, &rs)) < 0)
        return rc;
    if (rs.status == 200)
        return 0;
    if (rs.status == 412) {
        if (rs.uncertain && holds(l, data, len)) {
            mcdc_log(MCDC_LOG_DEBUG, "s3", "%s: an earlier attempt stored it", loc);
            return 0;
        }
        return mcdc_error_set(MCDC_EEXISTS, "%s: already exists", loc);
    }
    if (rs.status == 409)
        return mcdc_error_set(MCDC_EIO, "%s: a concurrent conditional write kept conflicting (HTTP 409, %d "
                              "attempts)", loc, rs.attempts);
    return mcdc_s3__fail("PUT", l->bucket, l->key, &rs);
}

static int s3_create(const char *loc, const void *data, size_t len)
{
    s3_loc l;
    int rc = parse(&l, loc);
    return rc < 0 ? rc : create_at(&l, loc, data, len);
}

static int put_at(const s3_loc *l, const void *data, size_t len)
{
    mcdc_s3_resp rs;
    int rc = put_once(l, l->key, data, len, false, &rs);
    if (rc == 0 && rs.status != 200)
        rc = mcdc_s3__fail("PUT", l->bucket, l->key, &rs);
    return rc;
}

static int s3_put(const char *loc, const void *data, size_t len)
{
    s3_loc l;
    int rc = parse(&l, loc);
    return rc < 0 ? rc : put_at(&l, data, len);
}

/* The ETag inside a change token "size:etag" (info_of), or NULL when it has none. */
static const char *etag_of(const char *token)
{
    const char *c = token ? strchr(token, ':') : NULL;
    return c && c[1] ? c + 1 : NULL;
}

static int s3_swap(mcdc_storage_info *info, const char *loc, const void *data, size_t len, const char *token)
{
    s3_loc l;
    int rc = parse(&l, loc);
    if (rc < 0)
        return rc;
    const char *etag = token ? etag_of(token) : NULL;
    if (token && !etag)
        return mcdc_error_set(MCDC_EINVAL, "%s: change token '%.100s' holds no ETag", loc, token);
    if (!token && (rc = probe(&l)) < 0)
        return rc;
    /* RFC 7232 quotes the ETag in If-Match, and AWS takes it so; radosgw 16.2 compares a
     * PUT's If-Match with the bare value (412 for the quoted one of an unchanged object).
     * A 412 for an object whose ETag is still the one given (a HEAD) means the store wants
     * the bare form: the swap is sent again so, and the process remembers it. */
    char bare[128] = "";
    pthread_mutex_lock(&g_mu);
    bool use_bare = g_bare_if_match;
    pthread_mutex_unlock(&g_mu);
    size_t el = etag ? strlen(etag) : 0;
    if (el >= 2 && etag[0] == '"' && etag[el - 1] == '"' && el - 2 < sizeof bare)
        snprintf(bare, sizeof bare, "%.*s", (int)(el - 2), etag + 1);
    mcdc_s3_req rq = { .method = "PUT", .bucket = l.bucket, .key = l.key, .body = data ? data : "",
                       .body_len = len, .if_none_match = !token, .if_match = use_bare && bare[0] ? bare : etag };
    mcdc_s3_resp rs;
    if ((rc = mcdc_s3__request(&rq, &rs)) < 0)
        return rc;
    if (rs.status == 412 && bare[0] && !use_bare) {
        mcdc_storage_info now;
        if (s3_stat(&now, loc) == 0 && strcmp(now.token, token) == 0) {
            pthread_mutex_lock(&g_mu);
            g_bare_if_match = true;
            pthread_mutex_unlock(&g_mu);
            mcdc_log(MCDC_LOG_DEBUG, "s3", "bucket %s takes If-Match with the bare ETag", l.bucket);
            rq.if_match = bare;
            if ((rc = mcdc_s3__request(&rq, &rs)) < 0)
                return rc;
        }
        mcdc_error_clear();
    }
    if (rs.status == 200) {
        info_of(info, &rs, len);
        return 0;
    }
    if (rs.status == 412 && rs.uncertain) {
        /* an earlier attempt may have written it: our bytes there are our own swap */
        mcdc_buf b = MCDC_BUF_INIT(len + 1);
        mcdc_storage_info now;
        bool same = s3_read(&b, &now, loc) == 0 && b.len == len && (len == 0 || memcmp(b.ptr, data, len) == 0);
        mcdc_buf_dispose(&b);
        mcdc_error_clear();
        if (same) {
            if (info)
                *info = now;
            return 0;
        }
    }
    if (rs.status == 412)
        return mcdc_error_set(MCDC_ECONFLICT, "%s: %s", loc, token ? "changed since it was read" : "already exists");
    if (rs.status == 404 && token)
        return mcdc_error_set(MCDC_ENOTFOUND, "%s: no such object", loc);
    if (rs.status == 409)
        return mcdc_error_set(MCDC_EIO, "%s: a concurrent conditional write kept conflicting (HTTP 409, %d "
                              "attempts)", loc, rs.attempts);
    return mcdc_s3__fail("PUT", l.bucket, l.key, &rs);
}

static int s3_del(const char *loc)
{
    s3_loc l;
    int rc = parse(&l, loc);
    if (rc < 0)
        return rc;
    mcdc_s3_req rq = { .method = "DELETE", .bucket = l.bucket, .key = l.key };
    mcdc_s3_resp rs;
    if ((rc = mcdc_s3__request(&rq, &rs)) < 0)
        return rc;
    if (rs.status != 204 && rs.status != 200 && rs.status != 404)
        return mcdc_s3__fail("DELETE", l.bucket, l.key, &rs);
    return 0;
}

static int s3_mkdirs(const char *loc)
{
    s3_loc l;
    return parse(&l, loc);
}

/* ---- ranged reads -------------------------------------------------------------------- */

typedef struct s3_file {
    mcdc_storage_file head;
    s3_loc            l;
    uint64_t          size;
} s3_file;

static int s3_file_open(mcdc_storage_file **out, mcdc_storage_info *info, const char *loc)
{
    mcdc_storage_info i;
    int rc = s3_stat(&i, loc);
    if (rc < 0)
        return rc;
    s3_file *f = calloc(1, sizeof *f);
    if (!f)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    f->head.be = &mcdc_storage__s3;
    parse(&f->l, loc);
    f->size = i.size;
    if (info)
        *info = i;
    *out = &f->head;
    return 0;
}

static int s3_file_read(mcdc_storage_file *h, void *dst, size_t len, uint64_t off)
{
    s3_file *f = (s3_file *)h;
    if (len == 0)
        return 0;
    if (off > f->size || len > f->size - off)
        return mcdc_error_set(MCDC_ECORRUPT, "s3://%s/%s: object ends at byte %llu", f->l.bucket, f->l.key,
                              (unsigned long long)f->size);
    char range[80];
    snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off, (unsigned long long)(off + len - 1));
    mcdc_buf b = MCDC_BUF_INIT(len);
    mcdc_s3_req rq = { .method = "GET", .bucket = f->l.bucket, .key = f->l.key, .range = range, .out = &b };
    mcdc_s3_resp rs;
    int rc = mcdc_s3__request(&rq, &rs);
    if (rc == 0 && rs.status != 206 && rs.status != 200)
        rc = mcdc_s3__fail("GET (range)", f->l.bucket, f->l.key, &rs);
    if (rc == 0 && b.len != len)
        rc = mcdc_error_set(MCDC_EIO, "s3://%s/%s: asked for %zu bytes at %llu, got %zu", f->l.bucket, f->l.key,
                            len, (unsigned long long)off, b.len);
    if (rc == 0)
        memcpy(dst, b.ptr, len);
    mcdc_buf_dispose(&b);
    return rc;
}

static void s3_file_close(mcdc_storage_file *h)
{
    free(h);
}

/* ---- streamed writes ----------------------------------------------------------------- */

typedef struct part {
    int  number;
    char etag[128];
} part;

typedef struct s3_writer {
    mcdc_storage_writer head;
    s3_loc              l;
    char               *loc;
    unsigned            flags;
    size_t              part_bytes;
    mcdc_buf            pending;  /* bytes not sent yet (less than one part) */
    char                upload_id[512]; /* "" until a multipart upload starts */
    part               *parts;
    size_t              n_parts, parts_cap;
    bool                done;     /* committed or failed for good */
    int                 failed;
} s3_writer;

static size_t part_bytes(void)
{
    const char *e = getenv("MCDC_S3_PART_BYTES");
    long long n = e ? strtoll(e, NULL, 10) : 0;
    if (n >= 5LL << 20 && n <= 5LL << 30)
        return (size_t)n;
    return (size_t)8 << 20;
}

static int s3_writer_open(mcdc_storage_writer **out, const char *loc, unsigned flags)
{
    s3_writer *w = calloc(1, sizeof *w);
    if (!w)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = parse(&w->l, loc);
    if (rc < 0 || !(w->loc = strdup(loc))) {
        free(w);
        return rc < 0 ? rc : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    w->head.be = &mcdc_storage__s3;
    w->flags = flags;
    w->part_bytes = part_bytes();
    w->pending = (mcdc_buf)MCDC_BUF_INIT(w->part_bytes + 1);
    *out = &w->head;
    return 0;
}

static int upload_id_cb(const char *path, const char *text, size_t len, void *payload)
{
    if (strcmp(path, "InitiateMultipartUploadResult/UploadId") == 0)
        snprintf(payload, 512, "%.*s", (int)(len < 511 ? len : 511), text);
    return 0;
}

static int send_part(s3_writer *w, const void *data, size_t len)
{
    mcdc_s3_resp rs;
    int rc;
    mcdc_buf q = MCDC_BUF_INIT(2048);
    if (!w->upload_id[0]) {
        mcdc_buf body = MCDC_BUF_INIT(4096);
        mcdc_s3_req rq = { .method = "POST", .bucket = w->l.bucket, .key = w->l.key, .query = "uploads",
                           .out = &body };
        rc = mcdc_s3__request(&rq, &rs);
        if (rc == 0 && rs.status != 200)
            rc = mcdc_s3__fail("POST (start upload)", w->l.bucket, w->l.key, &rs);
        if (rc == 0)
            rc = mcdc_s3__xml_walk(body.ptr ? body.ptr : "", body.len, upload_id_cb, w->upload_id);
        if (rc == 0 && !w->upload_id[0])
            rc = mcdc_error_set(MCDC_EIO, "s3://%s/%s: the store started an upload without an id", w->l.bucket,
                                w->l.key);
        mcdc_buf_dispose(&body);
        if (rc < 0)
            return rc;
    }
    if (w->n_parts == w->parts_cap) {
        size_t cap = w->parts_cap ? w->parts_cap * 2 : 16;
        part *p = realloc(w->parts, cap * sizeof *p);
        if (!p)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        w->parts = p;
        w->parts_cap = cap;
    }
    int number = (int)w->n_parts + 1;
    rc = mcdc_buf_printf(&q, "partNumber=%d&uploadId=", number);
    if (rc == 0)
        rc = mcdc_s3__encode(&q, w->upload_id, false);
    if (rc < 0) {
        mcdc_buf_dispose(&q);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    mcdc_s3_req rq = { .method = "PUT", .bucket = w->l.bucket, .key = w->l.key, .query = q.ptr, .body = data,
                       .body_len = len };
    rc = mcdc_s3__request(&rq, &rs);
    if (rc == 0 && rs.status != 200)
        rc = mcdc_s3__fail("PUT (part)", w->l.bucket, w->l.key, &rs);
    mcdc_buf_dispose(&q);
    if (rc < 0)
        return rc;
    w->parts[w->n_parts].number = number;
    snprintf(w->parts[w->n_parts].etag, sizeof w->parts[w->n_parts].etag, "%s", rs.etag);
    w->n_parts++;
    return 0;
}

static int s3_writer_write(mcdc_storage_writer *h, const void *data, size_t len)
{
    s3_writer *w = (s3_writer *)h;
    if (w->failed || w->done)
        return w->failed ? w->failed : mcdc_error_set(MCDC_EINVAL, "%s: written after commit", w->loc);
    const char *p = data;
    while (len) {
        size_t room = w->part_bytes - w->pending.len, n = len < room ? len : room;
        int rc = mcdc_buf_put(&w->pending, p, n);
        if (rc == 0 && w->pending.len == w->part_bytes) {
            rc = send_part(w, w->pending.ptr, w->pending.len);
            mcdc_buf_clear(&w->pending);
        }
        if (rc < 0)
            return w->failed = rc;
        p += n;
        len -= n;
    }
    return 0;
}

static void abort_upload(s3_writer *w)
{
    if (!w->upload_id[0])
        return;
    mcdc_buf q = MCDC_BUF_INIT(2048);
    if (mcdc_buf_puts(&q, "uploadId=") == 0 && mcdc_s3__encode(&q, w->upload_id, false) == 0) {
        mcdc_s3_req rq = { .method = "DELETE", .bucket = w->l.bucket, .key = w->l.key, .query = q.ptr };
        mcdc_s3_resp rs;
        mcdc_s3__request(&rq, &rs);
    }
    mcdc_error_clear();
    mcdc_buf_dispose(&q);
    w->upload_id[0] = '\0';
}

static int complete_error_cb(const char *path, const char *text, size_t len, void *payload)
{
    if (strcmp(path, "Error/Code") == 0)
        snprintf(payload, 64, "%.*s", (int)(len < 63 ? len : 63), text);
    return 0;
}

static int complete(s3_writer *w)
{
    mcdc_buf body = MCDC_BUF_INIT((size_t)1 << 24), q = MCDC_BUF_INIT(2048), ans = MCDC_BUF_INIT(1 << 20);
    int rc = mcdc_buf_puts(&body, "<CompleteMultipartUpload>");
    for (size_t i = 0; rc == 0 && i < w->n_parts; i++)
        rc = mcdc_buf_printf(&body, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", w->parts[i].number,
                             w->parts[i].etag);
    if (rc == 0)
        rc = mcdc_buf_puts(&body, "</CompleteMultipartUpload>");
    if (rc == 0 && (rc = mcdc_buf_puts(&q, "uploadId=")) == 0)
        rc = mcdc_s3__encode(&q, w->upload_id, false);
    if (rc < 0)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_s3_resp rs;
    if (rc == 0) {
        mcdc_s3_req rq = { .method = "POST", .bucket = w->l.bucket, .key = w->l.key, .query = q.ptr,
                           .body = body.ptr, .body_len = body.len, .content_type = "application/xml", .out = &ans };
        rc = mcdc_s3__request(&rq, &rs);
    }
    if (rc == 0 && rs.status == 404 && rs.uncertain && strcmp(rs.code, "NoSuchUpload") == 0) {
        /* an earlier attempt completed it; the object is there */
        mcdc_storage_info i;
        char loc[MCDC_PATH_MAX_S3 + 80];
        snprintf(loc, sizeof loc, "s3://%s/%s", w->l.bucket, w->l.key);
        rc = s3_stat(&i, loc);
    } else if (rc == 0 && rs.status != 200) {
        rc = mcdc_s3__fail("POST (complete upload)", w->l.bucket, w->l.key, &rs);
    } else if (rc == 0) {
        /* a 200 may still carry an error in its body */
        char code[64] = "";
        mcdc_s3__xml_walk(ans.ptr ? ans.ptr : "", ans.len, complete_error_cb, code);
        mcdc_error_clear();
        if (code[0])
            rc = mcdc_error_set(MCDC_EIO, "POST (complete upload) s3://%s/%s: %s", w->l.bucket, w->l.key, code);
    }
    mcdc_buf_dispose(&body);
    mcdc_buf_dispose(&q);
    mcdc_buf_dispose(&ans);
    return rc;
}

static int s3_writer_commit(mcdc_storage_writer *h)
{
    s3_writer *w = (s3_writer *)h;
    if (w->failed || w->done)
        return w->failed ? w->failed : mcdc_error_set(MCDC_EINVAL, "%s: committed twice", w->loc);
    int rc;
    if (!w->upload_id[0]) {
        const void *data = w->pending.ptr ? w->pending.ptr : "";
        rc = (w->flags & MCDC_STORAGE_NOREPLACE) ? create_at(&w->l, w->loc, data, w->pending.len)
                                                 : put_at(&w->l, data, w->pending.len);
    } else {
        rc = w->pending.len ? send_part(w, w->pending.ptr, w->pending.len) : 0;
        if (rc == 0 && (w->flags & MCDC_STORAGE_NOREPLACE)) {
            mcdc_storage_info i;
            rc = s3_stat(&i, w->loc);
            if (rc == 0)
                rc = mcdc_error_set(MCDC_EEXISTS, "%s: already exists", w->loc);
            else if (rc == MCDC_ENOTFOUND) {
                mcdc_error_clear();
                rc = 0;
            }
        }
        if (rc == 0)
            rc = complete(w);
        if (rc == 0)
            w->upload_id[0] = '\0';
    }
    mcdc_buf_dispose(&w->pending);
    w->done = true;
    if (rc < 0) {
        abort_upload(w);
        w->failed = rc;
    }
    return rc;
}

static void s3_writer_free(mcdc_storage_writer *h)
{
    s3_writer *w = (s3_writer *)h;
    abort_upload(w);
    mcdc_buf_dispose(&w->pending);
    free(w->parts);
    free(w->loc);
    free(w);
}

/* ---- listings ------------------------------------------------------------------------ */

typedef struct list_ctx {
    mcdc_storage_listing *out;
    size_t                prefix_len;
    bool                  truncated, any;
    char                  next[1024];
    char                  key[MCDC_PATH_MAX_S3];
    uint64_t              size;
    int64_t               mtime_ms;
} list_ctx;

static int list_cb(const char *path, const char *text, size_t len, void *payload)
{
    list_ctx *c = payload;
    if (strcmp(path, "ListBucketResult/Contents/Key") == 0) {
        snprintf(c->key, sizeof c->key, "%.*s", (int)len, text);
    } else if (strcmp(path, "ListBucketResult/Contents/Size") == 0) {
        c->size = strtoull(text, NULL, 10);
    } else if (strcmp(path, "ListBucketResult/Contents/LastModified") == 0) {
        char t[64];
        int64_t us = 0;
        snprintf(t, sizeof t, "%.*s", (int)(len < 63 ? len : 63), text);
        c->mtime_ms = mcdc_time_parse(&us, t) == 0 ? us / 1000 : 0;
        mcdc_error_clear();
    } else if (strcmp(path, "ListBucketResult/Contents") == 0) {
        c->any = true;
        size_t kl = strlen(c->key);
        if (kl > c->prefix_len && c->key[kl - 1] != '/') /* not a folder marker */
            if (mcdc_storage__listing_add(c->out, c->key + c->prefix_len, c->size, c->mtime_ms) < 0)
                return MCDC_ENOMEM;
        c->key[0] = '\0';
        c->size = 0;
        c->mtime_ms = 0;
    } else if (strcmp(path, "ListBucketResult/CommonPrefixes/Prefix") == 0) {
        c->any = true;
    } else if (strcmp(path, "ListBucketResult/IsTruncated") == 0) {
        c->truncated = len == 4 && memcmp(text, "true", 4) == 0;
    } else if (strcmp(path, "ListBucketResult/NextContinuationToken") == 0) {
        snprintf(c->next, sizeof c->next, "%.*s", (int)(len < sizeof c->next - 1 ? len : sizeof c->next - 1), text);
    }
    return 0;
}

static int s3_list(mcdc_storage_listing *out, const char *loc, unsigned flags)
{
    s3_loc l;
    int rc = parse(&l, loc);
    if (rc < 0)
        return rc;
    char prefix[MCDC_PATH_MAX_S3 + 2];
    snprintf(prefix, sizeof prefix, "%s%s", l.key, l.key[0] ? "/" : "");
    list_ctx c = { .out = out, .prefix_len = strlen(prefix) };
    do {
        mcdc_buf q = MCDC_BUF_INIT(8192), body = MCDC_BUF_INIT((size_t)64 << 20);
        /* parameters in byte order: libcurl 7.88 signs the query as given, and SigV4's
         * canonical query is sorted */
        rc = 0;
        if (c.next[0] && (rc = mcdc_buf_puts(&q, "continuation-token=")) == 0 &&
            (rc = mcdc_s3__encode(&q, c.next, false)) == 0)
            rc = mcdc_buf_putc(&q, '&');
        if (rc == 0 && !(flags & MCDC_STORAGE_LIST_RECURSIVE))
            rc = mcdc_buf_puts(&q, "delimiter=%2F&");
        if (rc == 0)
            rc = mcdc_buf_puts(&q, "list-type=2&prefix=");
        if (rc == 0)
            rc = mcdc_s3__encode(&q, prefix, false);
        if (rc < 0)
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        mcdc_s3_resp rs;
        if (rc == 0) {
            mcdc_s3_req rq = { .method = "GET", .bucket = l.bucket, .key = "", .query = q.ptr, .out = &body };
            rc = mcdc_s3__request(&rq, &rs);
        }
        if (rc == 0 && rs.status != 200)
            rc = mcdc_s3__fail("LIST", l.bucket, prefix, &rs);
        c.truncated = false;
        c.next[0] = '\0';
        if (rc == 0)
            rc = mcdc_s3__xml_walk(body.ptr ? body.ptr : "", body.len, list_cb, &c);
        if (rc == MCDC_ENOMEM)
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory listing %s", loc);
        mcdc_buf_dispose(&q);
        mcdc_buf_dispose(&body);
    } while (rc == 0 && c.truncated && c.next[0]);
    if (rc == 0 && !c.any)
        rc = mcdc_error_set(MCDC_ENOTFOUND, "%s: no such directory (no object under it)", loc);
    return rc;
}

static bool s3_exists(const char *loc)
{
    mcdc_storage_info i;
    if (s3_stat(&i, loc) == 0)
        return true;
    mcdc_storage_listing l = { 0 };
    bool any = s3_list(&l, loc, 0) == 0;
    mcdc_storage_listing_dispose(&l);
    mcdc_error_clear();
    return any;
}

const mcdc_storage_backend mcdc_storage__s3 = {
    .name = "s3",
    .stat = s3_stat,
    .exists = s3_exists,
    .read = s3_read,
    .create = s3_create,
    .put = s3_put,
    .swap = s3_swap,
    .del = s3_del,
    .mkdirs = s3_mkdirs,
    .file_open = s3_file_open,
    .file_read = s3_file_read,
    .file_close = s3_file_close,
    .writer_open = s3_writer_open,
    .writer_write = s3_writer_write,
    .writer_commit = s3_writer_commit,
    .writer_free = s3_writer_free,
    .list = s3_list,
};
