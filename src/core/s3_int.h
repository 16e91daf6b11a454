/*
 * core/s3_int.h: the S3 backend's parts, shared by s3_config.c (where the settings and
 * credentials come from), s3_http.c (one signed request, with retries) and storage_s3.c
 * (the storage operations). Nothing here leaves core.
 *
 * Secrets: the secret key and session token live only in mcdc_s3_config and go to
 * libcurl; no message, log line or error ever formats them.
 */
#ifndef MCDC_CORE_S3_INT_H
#define MCDC_CORE_S3_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

/* Bytes for an S3 key with its NUL (keys are at most 1024 bytes). */
#define MCDC_PATH_MAX_S3 1025

/* Where and as whom requests go. */
typedef struct mcdc_s3_config {
    char access_key[256];
    char secret_key[256];    /* secret: never printed */
    char session_token[4096]; /* secret: never printed; "" when none */
    char region[64];
    char endpoint[512];      /* "https://host[:port]" without a trailing '/'; "" for AWS */
    bool path_style;         /* https://endpoint/bucket/key, else https://bucket.endpoint/key */
    char cred_source[64];    /* "environment", "profile NAME in ~/.aws/credentials", ... */
} mcdc_s3_config;

/* The process's configuration, read once from the environment and the AWS files (the
 * first call decides; later calls return the same). MCDC_EINVAL naming what is missing
 * or unsupported (IMDSv2, web identity, SSO, credential_process), with a hint. */
int mcdc_s3__config(const mcdc_s3_config **out);

/* Forget the configuration (tests that change the environment). */
void mcdc_s3__config_reset(void);

/* One S3 request. */
typedef struct mcdc_s3_req {
    const char *method;        /* GET, HEAD, PUT, POST, DELETE */
    const char *bucket;
    const char *key;           /* raw key (encoded here), "" for the bucket */
    const char *query;         /* percent-encoded "a=b&c=d" with the names in byte order
                                  (signed as given), or NULL */
    const void *body;          /* PUT/POST body, or NULL */
    size_t      body_len;
    bool        if_none_match; /* send If-None-Match: * */
    const char *if_match;      /* send If-Match: this ETag (quotes kept), or NULL */
    const char *range;         /* "bytes=a-b", or NULL */
    const char *content_type;  /* or NULL */
    mcdc_buf   *out;           /* response body, appended (its max caps it); NULL: dropped */
} mcdc_s3_req;

/* What came back. */
typedef struct mcdc_s3_resp {
    long     status;           /* HTTP status of the last attempt, 0 when none answered */
    char     etag[128];        /* ETag header, quotes kept */
    uint64_t content_length;
    int64_t  mtime_ms;         /* Last-Modified, or 0 */
    char     code[64];         /* S3 error code from an error body, or "" */
    int      attempts;         /* requests sent */
    bool     uncertain;        /* an earlier attempt may have been applied (it was sent and
                                  its answer lost, or a 5xx came back) */
} mcdc_s3_resp;

/* Send @p rq, retrying with jittered exponential backoff on broken connections, 500, 502,
 * 503 (SlowDown), 504 and 409 ConditionalRequestConflict (MCDC_S3_MAX_ATTEMPTS, default 8).
 * @return 0 when an answer came back (any status: the caller judges it); MCDC_EIO when
 * every attempt failed (the message names the method, the object and the last reason). */
int mcdc_s3__request(const mcdc_s3_req *rq, mcdc_s3_resp *rs);

/* The error for an unexpected answer: MCDC_EIO "<what> s3://b/k: HTTP N Code". 403 and
 * 404 on the bucket get a hint about credentials and the endpoint. */
int mcdc_s3__fail(const char *what, const char *bucket, const char *key, const mcdc_s3_resp *rs);

/* Percent-encode @p s for a URI (RFC 3986 unreserved kept, '/' kept when @p keep_slash). */
int mcdc_s3__encode(mcdc_buf *out, const char *s, bool keep_slash);

/* Walk an XML document: @p cb gets the path of each element closed ("A/B/C") and its text.
 * A non-zero return stops the walk and is returned. MCDC_ECORRUPT for bad XML. */
typedef int (*mcdc_s3_xml_cb)(const char *path, const char *text, size_t len, void *payload);
int mcdc_s3__xml_walk(const char *data, size_t len, mcdc_s3_xml_cb cb, void *payload);

#endif
