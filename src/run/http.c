/*
 * run/http.c: the HTTP endpoints of `mssql-cdc run` (/metrics, /healthz, /readyz) over
 * libmicrohttpd, on a thread of its own.
 *
 * Guarantees: GET only (other methods get 405); an unknown path gets 404; a body is built
 * per request by the supervisor's callback, so it is never stale; stopping waits for the
 * request in flight.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/log.h"
#include "mcdc/run.h"

struct mcdc_run_http {
    struct MHD_Daemon    *d;
    mcdc_run_http_fill_fn fill;
    void                 *payload;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *data_size, void **con_cls)
{
    (void)version;
    (void)data;
    (void)data_size;
    (void)con_cls;
    mcdc_run_http *h = cls;
    mcdc_buf body = MCDC_BUF_INIT(64u << 20);
    int status;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
        mcdc_buf_puts(&body, "GET only\n");
    } else if (strcmp(url, "/metrics") && strcmp(url, "/healthz") && strcmp(url, "/readyz")) {
        status = MHD_HTTP_NOT_FOUND;
        mcdc_buf_puts(&body, "not found: /metrics, /healthz, /readyz\n");
    } else {
        status = h->fill(url, &body, h->payload);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(body.len, body.ptr ? body.ptr : (char *)"",
                                                             MHD_RESPMEM_MUST_COPY);
    mcdc_buf_dispose(&body);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", !strcmp(url, "/metrics")
                                                   ? "text/plain; version=0.0.4; charset=utf-8"
                                                   : "text/plain; charset=utf-8");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

int mcdc_run_http_start(mcdc_run_http **out, const char *listen, mcdc_run_http_fill_fn fill,
                        void *payload)
{
    *out = NULL;
    char host[64];
    const char *colon = strrchr(listen, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    if (!colon || (size_t)(colon - listen) >= sizeof host || !end || *end || port < 0 || port > 65535) {
        mcdc_error_set(MCDC_EINVAL, "metrics listen '%s': expected HOST:PORT", listen);
        return mcdc_error_hint("for example 127.0.0.1:9464");
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
    if (inet_pton(AF_INET, strcmp(host, "localhost") ? host : "127.0.0.1", &sa.sin_addr) != 1) {
        mcdc_error_set(MCDC_EINVAL, "metrics listen '%s': host is not an IPv4 address", listen);
        return mcdc_error_hint("for example 127.0.0.1:9464, or 0.0.0.0:9464 for every interface");
    }
    sa.sin_port = htons((uint16_t)port);
    mcdc_run_http *h = calloc(1, sizeof *h);
    if (!h)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    h->fill = fill;
    h->payload = payload;
    h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port,
                            NULL, NULL, answer, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
    if (!h->d) {
        free(h);
        mcdc_error_set(MCDC_EIO, "metrics listen %s: cannot listen (in use, or not an address "
                       "of this host)", listen);
        return mcdc_error_hint("pick another port with --metrics-listen or metrics.listen");
    }
    /* port 0: the kernel's choice, said in the log so a probe or a test can find it */
    const union MHD_DaemonInfo *bound = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    mcdc_log(MCDC_LOG_INFO, "run", "metrics: listening on http://%s:%u (/metrics, /healthz, "
             "/readyz)", host, bound ? (unsigned)bound->port : (unsigned)port);
    *out = h;
    return 0;
}

void mcdc_run_http_stop(mcdc_run_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
