/*
 * core/s3_http.c: one S3 request over libcurl, signed with libcurl's SigV4
 * (CURLOPT_AWS_SIGV4 "aws:amz:REGION:s3"), retried with jittered exponential backoff.
 *
 * What libcurl 7.88 leaves to us (docs/decisions/0017): the x-amz-content-sha256 header
 * (the SHA-256 of the body, which it then signs), and percent-encoding of the path and
 * the query (it signs them as given). Retried: a broken or timed-out connection, 500,
 * 502, 503 (SlowDown), 504, and 409 ConditionalRequestConflict; every other answer is
 * the caller's to judge. A request that was sent and whose answer was lost, or that got a
 * 5xx, may have been applied: the response says so (uncertain), so a create-if-absent
 * that then meets 412 compares what is stored with what it wrote.
 * Each thread keeps one curl handle, so connections are reused between requests.
 * Secrets go to libcurl only; messages name the method, bucket, key and status.
 */
#include <curl/curl.h>
#include <expat.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/s3_int.h"
#include "mcdc/error.h"
#include "mcdc/log.h"
#include "mcdc/storage.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t g_get, g_head, g_put, g_post, g_del, g_list;

void mcdc_storage_s3_counts_get(mcdc_storage_s3_counts *out)
{
    out->get = g_get;
    out->head = g_head;
    out->put = g_put;
    out->post = g_post;
    out->del = g_del;
    out->list = g_list;
}

static void count(const mcdc_s3_req *rq)
{
    const char *m = rq->method;
    if (!strcmp(m, "GET"))
        rq->key[0] ? g_get++ : g_list++;
    else if (!strcmp(m, "HEAD"))
        g_head++;
    else if (!strcmp(m, "PUT"))
        g_put++;
    else if (!strcmp(m, "POST"))
        g_post++;
    else
        g_del++;
}
static pthread_key_t  g_handle_key;

static void handle_free(void *h)
{
    curl_easy_cleanup(h);
}

static void init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_key_create(&g_handle_key, handle_free);
}

static CURL *thread_handle(void)
{
    pthread_once(&g_once, init_once);
    CURL *h = pthread_getspecific(g_handle_key);
    if (!h && (h = curl_easy_init()) != NULL)
        pthread_setspecific(g_handle_key, h);
    return h;
}

int mcdc_s3__encode(mcdc_buf *out, const char *s, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)s; rc == 0 && *p; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~' || (keep_slash && c == '/'))
            rc = mcdc_buf_putc(out, (char)c);
        else {
            char e[3] = { '%', hex[c >> 4], hex[c & 15] };
            rc = mcdc_buf_put(out, e, 3);
        }
    }
    return rc;
}

/* ---- XML ----------------------------------------------------------------------------- */

typedef struct xml_state {
    XML_Parser     p;
    mcdc_buf       path, text;
    size_t         stack[32]; /* path lengths before each open element */
    int            depth;
    mcdc_s3_xml_cb cb;
    void          *payload;
    int            rc;
} xml_state;

static void XMLCALL xml_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    xml_state *x = ud;
    if (x->rc)
        return;
    if (x->depth >= 32) {
        x->rc = mcdc_error_set(MCDC_ECORRUPT, "S3 answer: XML nested too deeply");
        XML_StopParser(x->p, XML_FALSE);
        return;
    }
    x->stack[x->depth++] = x->path.len;
    if ((x->path.len && mcdc_buf_putc(&x->path, '/') < 0) || mcdc_buf_puts(&x->path, name) < 0)
        x->rc = MCDC_ENOMEM;
    mcdc_buf_clear(&x->text);
}

static void XMLCALL xml_end(void *ud, const XML_Char *name)
{
    (void)name;
    xml_state *x = ud;
    if (x->rc || x->depth == 0)
        return;
    int r = x->cb(x->path.ptr ? x->path.ptr : "", x->text.ptr ? x->text.ptr : "", x->text.len, x->payload);
    if (r) {
        x->rc = r;
        XML_StopParser(x->p, XML_FALSE);
    }
    x->path.len = x->stack[--x->depth];
    if (x->path.ptr)
        x->path.ptr[x->path.len] = '\0';
    mcdc_buf_clear(&x->text);
}

static void XMLCALL xml_text(void *ud, const XML_Char *s, int len)
{
    xml_state *x = ud;
    if (!x->rc && mcdc_buf_put(&x->text, s, (size_t)len) < 0)
        x->rc = MCDC_ENOMEM;
}

int mcdc_s3__xml_walk(const char *data, size_t len, mcdc_s3_xml_cb cb, void *payload)
{
    xml_state x = { .path = MCDC_BUF_INIT(4096), .text = MCDC_BUF_INIT(1 << 20), .cb = cb, .payload = payload };
    x.p = XML_ParserCreate("UTF-8");
    if (!x.p)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory for an XML parser");
    XML_SetUserData(x.p, &x);
    XML_SetElementHandler(x.p, xml_start, xml_end);
    XML_SetCharacterDataHandler(x.p, xml_text);
    if (XML_Parse(x.p, data, (int)len, XML_TRUE) == XML_STATUS_ERROR && x.rc == 0)
        x.rc = mcdc_error_set(MCDC_ECORRUPT, "S3 answer: bad XML at line %lu: %s",
                              (unsigned long)XML_GetCurrentLineNumber(x.p), XML_ErrorString(XML_GetErrorCode(x.p)));
    if (x.rc == MCDC_ENOMEM)
        mcdc_error_set(MCDC_ENOMEM, "out of memory reading an S3 answer");
    XML_ParserFree(x.p);
    mcdc_buf_dispose(&x.path);
    mcdc_buf_dispose(&x.text);
    return x.rc;
}

static int error_code_cb(const char *path, const char *text, size_t len, void *payload)
{
    if (strcmp(path, "Error/Code") == 0)
        snprintf(payload, 64, "%.*s", (int)(len < 63 ? len : 63), text);
    return 0;
}

/* ---- one attempt --------------------------------------------------------------------- */

typedef struct io {
    const char   *body;
    size_t        body_len, body_off;
    mcdc_buf     *out;
    mcdc_buf      err;      /* an error body when no out buffer was given */
    bool          too_big;
    mcdc_s3_resp *rs;
} io;

/* radosgw writes an answer's head and its body as two segments and, with Nagle on its
 * socket, holds the body until the head is acknowledged; Linux delays that ACK by up to
 * 40 ms. Asking for a quick ACK once the head is in sends the pending ACK at once (the
 * flag is not sticky, so it is set at each answer's end of head). The thread's connection
 * socket is remembered when libcurl opens it (one handle, so one connection, a thread). */
static _Thread_local curl_socket_t t_fd = CURL_SOCKET_BAD;

static int on_sockopt(void *ud, curl_socket_t fd, curlsocktype purpose)
{
    (void)ud;
    if (purpose == CURLSOCKTYPE_IPCXN)
        t_fd = fd;
    return CURL_SOCKOPT_OK;
}

static int on_close(void *ud, curl_socket_t fd)
{
    (void)ud;
    if (fd == t_fd)
        t_fd = CURL_SOCKET_BAD;
    return close(fd);
}

static void ack_now(void)
{
    if (t_fd != CURL_SOCKET_BAD) {
        int one = 1;
        (void)setsockopt(t_fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    }
}

static size_t on_read(char *dst, size_t size, size_t n, void *ud)
{
    io *o = ud;
    size_t want = size * n, left = o->body_len - o->body_off;
    if (want > left)
        want = left;
    memcpy(dst, o->body + o->body_off, want);
    o->body_off += want;
    return want;
}

static size_t on_write(char *data, size_t size, size_t n, void *ud)
{
    io *o = ud;
    size_t len = size * n;
    mcdc_buf *b = (o->out && o->rs->status >= 200 && o->rs->status < 300) ? o->out : &o->err;
    if (b == &o->err && b->len + len > b->max)
        return len; /* an error body past 64 KiB: its start is enough */
    if (mcdc_buf_put(b, data, len) < 0) {
        o->too_big = true;
        return 0;
    }
    return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    io *o = ud;
    size_t len = size * n;
    char line[512];
    size_t l = len < sizeof line - 1 ? len : sizeof line - 1;
    memcpy(line, data, l);
    line[l] = '\0';
    while (l && (line[l - 1] == '\r' || line[l - 1] == '\n'))
        line[--l] = '\0';
    if (l == 0) {
        ack_now();
    } else if (strncmp(line, "HTTP/", 5) == 0) {
        const char *sp = strchr(line, ' ');
        o->rs->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        o->rs->etag[0] = '\0';
        o->rs->content_length = 0;
        o->rs->mtime_ms = 0;
    } else if (strncasecmp(line, "etag:", 5) == 0) {
        const char *v = line + 5;
        while (*v == ' ')
            v++;
        snprintf(o->rs->etag, sizeof o->rs->etag, "%.120s", v);
    } else if (strncasecmp(line, "content-length:", 15) == 0) {
        o->rs->content_length = strtoull(line + 15, NULL, 10);
    } else if (strncasecmp(line, "last-modified:", 14) == 0) {
        time_t t = curl_getdate(line + 14, NULL);
        if (t > 0)
            o->rs->mtime_ms = (int64_t)t * 1000;
    }
    return len;
}

static void sha256_hex(char out[65], const void *data, size_t len)
{
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, len, data);
    sha256_digest(&c, sizeof d, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

/* One attempt. 0 with rs->status set when the server answered; MCDC_EIO (message set)
 * for a transport failure; *sent tells whether the request may have reached the server. */
static int attempt(const mcdc_s3_config *cfg, const mcdc_s3_req *rq, const char *url, mcdc_s3_resp *rs,
                   bool *sent)
{
    CURL *h = thread_handle();
    if (!h)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory for an HTTP handle");
    curl_easy_reset(h);
    io o = { .body = rq->body, .body_len = rq->body_len, .out = rq->out, .err = MCDC_BUF_INIT(65536), .rs = rs };
    size_t out_start = rq->out ? rq->out->len : 0;
    rs->status = 0;
    rs->code[0] = '\0';

    char sigv4[128], hash[65], h_hash[100], h_token[4200];
    snprintf(sigv4, sizeof sigv4, "aws:amz:%s:s3", cfg->region);
    sha256_hex(hash, rq->body ? rq->body : "", rq->body ? rq->body_len : 0);
    snprintf(h_hash, sizeof h_hash, "x-amz-content-sha256: %s", hash);
    struct curl_slist *hdrs = NULL;
    hdrs = curl_slist_append(hdrs, h_hash);
    /* (no "Expect:" to drop 100-continue: libcurl 7.88 signs the emptied header, and the
     * signature no longer matches) */
    if (cfg->session_token[0]) {
        snprintf(h_token, sizeof h_token, "x-amz-security-token: %s", cfg->session_token);
        hdrs = curl_slist_append(hdrs, h_token);
    }
    if (rq->if_none_match)
        hdrs = curl_slist_append(hdrs, "If-None-Match: *");
    char h_range[96], h_ct[160], h_match[160];
    if (rq->if_match) {
        snprintf(h_match, sizeof h_match, "If-Match: %.128s", rq->if_match);
        hdrs = curl_slist_append(hdrs, h_match);
    }
    if (rq->range) {
        snprintf(h_range, sizeof h_range, "Range: %s", rq->range);
        hdrs = curl_slist_append(hdrs, h_range);
    }
    if (rq->content_type) {
        snprintf(h_ct, sizeof h_ct, "Content-Type: %s", rq->content_type);
        hdrs = curl_slist_append(hdrs, h_ct);
    } else if (rq->body) {
        hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
    }

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4);
    curl_easy_setopt(h, CURLOPT_USERNAME, cfg->access_key);
    curl_easy_setopt(h, CURLOPT_PASSWORD, cfg->secret_key);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, on_close);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &o);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &o);
    if (strcmp(rq->method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (strcmp(rq->method, "PUT") == 0) {
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, &o);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rq->body_len);
    } else if (strcmp(rq->method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? (const char *)rq->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
    } else if (strcmp(rq->method, "GET") != 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    }
    CURLcode cc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    curl_easy_setopt(h, CURLOPT_USERNAME, "");
    curl_easy_setopt(h, CURLOPT_PASSWORD, "");
    int rc = 0;
    *sent = true;
    if (o.too_big) {
        rc = mcdc_error_set(MCDC_ENOMEM, "s3://%s/%s: larger than the limit of %zu bytes", rq->bucket, rq->key,
                            rq->out->max - out_start);
        rs->status = -1;
    } else if (cc != CURLE_OK) {
        *sent = cc != CURLE_COULDNT_CONNECT && cc != CURLE_COULDNT_RESOLVE_HOST;
        rc = mcdc_error_set(MCDC_EIO, "%s s3://%s/%s: %s", rq->method, rq->bucket, rq->key, curl_easy_strerror(cc));
        rs->status = 0;
    } else if (rs->status >= 300 && o.err.len) {
        mcdc_s3__xml_walk(o.err.ptr, o.err.len, error_code_cb, rs->code);
        mcdc_error_clear();
    }
    if (rc < 0 && rq->out) { /* a failed attempt leaves nothing in the caller's buffer */
        rq->out->len = out_start;
        if (rq->out->ptr)
            rq->out->ptr[out_start] = '\0';
    }
    mcdc_buf_dispose(&o.err);
    return rc;
}

static bool retryable(const mcdc_s3_resp *rs)
{
    return rs->status == 500 || rs->status == 502 || rs->status == 503 || rs->status == 504 ||
           (rs->status == 409 && strcmp(rs->code, "ConditionalRequestConflict") == 0);
}

static int max_attempts(void)
{
    const char *e = getenv("MCDC_S3_MAX_ATTEMPTS");
    long n = e ? strtol(e, NULL, 10) : 8;
    return n >= 1 && n <= 100 ? (int)n : 8;
}

static void backoff(int attempt_no)
{
    /* full jitter: a random wait in [0, min(5 s, 50 ms * 2^attempt)) */
    long cap_ms = 50L << (attempt_no < 7 ? attempt_no : 7);
    if (cap_ms > 5000)
        cap_ms = 5000;
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = (uint32_t)clock();
    long ms = (long)(r % (uint32_t)cap_ms) + 1;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int mcdc_s3__request(const mcdc_s3_req *rq, mcdc_s3_resp *rs)
{
    memset(rs, 0, sizeof *rs);
    const mcdc_s3_config *cfg;
    int rc = mcdc_s3__config(&cfg);
    if (rc < 0)
        return rc;
    mcdc_buf url = MCDC_BUF_INIT(16384);
    if (cfg->endpoint[0] && cfg->path_style)
        rc = mcdc_buf_printf(&url, "%s/%s/", cfg->endpoint, rq->bucket);
    else if (cfg->endpoint[0]) {
        const char *host = strstr(cfg->endpoint, "://") + 3;
        rc = mcdc_buf_printf(&url, "%.*s%s.%s/", (int)(host - cfg->endpoint), cfg->endpoint, rq->bucket, host);
    } else if (cfg->path_style)
        rc = mcdc_buf_printf(&url, "https://s3.%s.amazonaws.com/%s/", cfg->region, rq->bucket);
    else
        rc = mcdc_buf_printf(&url, "https://%s.s3.%s.amazonaws.com/", rq->bucket, cfg->region);
    if (rc == 0)
        rc = mcdc_s3__encode(&url, rq->key, true);
    if (rc == 0 && rq->query)
        rc = mcdc_buf_printf(&url, "?%s", rq->query);
    if (rc < 0) {
        mcdc_buf_dispose(&url);
        return mcdc_error_set(MCDC_ENOMEM, "s3://%s/%.200s: the request is too long", rq->bucket, rq->key);
    }
    int n = max_attempts();
    bool uncertain = false;
    for (int i = 0;; i++) {
        if (i)
            backoff(i);
        bool sent = false;
        count(rq);
        rc = attempt(cfg, rq, url.ptr, rs, &sent);
        rs->attempts = i + 1;
        rs->uncertain = uncertain; /* about the attempts before this one */
        if (rc == MCDC_ENOMEM || (rc == 0 && !retryable(rs)) || i + 1 >= n)
            break;
        /* a 5xx may come after the object was stored, and a lost answer may too */
        if (sent && (rc < 0 || rs->status >= 500))
            uncertain = true;
        char why[160];
        if (rc < 0)
            snprintf(why, sizeof why, "%.150s", mcdc_error_last()->message);
        else
            snprintf(why, sizeof why, "HTTP %ld %.60s", rs->status, rs->code);
        mcdc_log(MCDC_LOG_DEBUG, "s3", "%s s3://%s/%s: %s; retrying", rq->method, rq->bucket, rq->key, why);
        if (rc < 0)
            mcdc_error_clear();
    }
    mcdc_buf_dispose(&url);
    return rc;
}

int mcdc_s3__fail(const char *what, const char *bucket, const char *key, const mcdc_s3_resp *rs)
{
    mcdc_error_set(MCDC_EIO, "%s s3://%s/%s: HTTP %ld%s%s", what, bucket, key, rs->status, rs->code[0] ? " " : "",
                   rs->code);
    if (rs->status == 403)
        return mcdc_error_hint("check the credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE), the region (AWS_REGION) "
                               "and that the policy allows s3:GetObject, s3:PutObject, s3:DeleteObject and "
                               "s3:ListBucket on the bucket");
    if (rs->status == 404 && strcmp(rs->code, "NoSuchBucket") == 0)
        return mcdc_error_hint("create the bucket '%s', or check AWS_ENDPOINT_URL and the location", bucket);
    if (rs->status == 301 || rs->status == 400)
        return mcdc_error_hint("check AWS_REGION (the bucket may be in another region) and AWS_ENDPOINT_URL");
    return MCDC_EIO;
}
