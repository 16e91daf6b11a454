/*
 * source/sim/tds/server.c: mcdc_tds_serve: the listening socket, one thread per connection
 * (at most max_connections at once; one more is closed at once), and an orderly stop.
 *
 * Stopping: the accept loop polls the listening socket and *stop every 100 ms; once *stop is
 * set it closes the listening socket, shuts every connection's socket down (so a thread
 * blocked in a read or a write returns) and waits for every connection thread to end.
 *
 * Guarantees: every option is checked before the socket is bound (mcdc_tds_check_options);
 * `ready` is called once the socket accepts, with the real port when port 0 was asked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mcdc/log.h"
#include "mcdc/sim.h"
#include "source/sim/tds/tds_int.h"

typedef struct conn_slot conn_slot;
struct conn_slot {
    int              fd;
    pthread_t        thread;
    struct server   *srv;
    conn_slot       *next;
};

typedef struct server {
    tds_server_ctx  ctx;
    tds_faults      faults;
    volatile int    stopping;
    pthread_mutex_t mu;     /* guards slots and n_active */
    pthread_cond_t  idle;   /* signalled when a connection ends */
    conn_slot      *slots;
    int             n_active;
} server;

/* ---- options ---------------------------------------------------------------------------------- */

static int split_listen(const char *listen, char host[256], char port[16])
{
    const char *colon = NULL;
    if (listen && listen[0] == '[') {
        const char *rb = strchr(listen, ']');
        if (rb && rb[1] == ':') {
            size_t n = (size_t)(rb - listen - 1);
            if (n < 256) {
                memcpy(host, listen + 1, n);
                host[n] = 0;
                colon = rb + 1;
            }
        }
    } else if (listen) {
        colon = strrchr(listen, ':');
        if (colon) {
            size_t n = (size_t)(colon - listen);
            if (n >= 256 || n == 0) colon = NULL;
            else {
                memcpy(host, listen, n);
                host[n] = 0;
            }
        }
    }
    if (!colon || !colon[1] || strlen(colon + 1) > 5 || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        atoi(colon + 1) > 65535) {
        mcdc_error_set(MCDC_EINVAL, "--listen %s: not HOST:PORT", listen ? listen : "");
        return mcdc_error_hint("give an address and a port, e.g. --listen 127.0.0.1:1433 (port 0 picks a free one)");
    }
    snprintf(port, 16, "%s", colon + 1);
    return 0;
}

static int load_faults(const mcdc_tds_server_options *o, tds_faults *fs)
{
    memset(fs, 0, sizeof *fs);
    if (o->n_faults > (int)(sizeof fs->f / sizeof fs->f[0])) {
        mcdc_error_set(MCDC_EINVAL, "--fault: %d faults given, at most 8", o->n_faults);
        return mcdc_error_hint("give at most 8 --fault options");
    }
    for (int i = 0; i < o->n_faults; i++) {
        int rc = tds_fault_parse(&fs->f[i], o->faults[i]);
        if (rc) return rc;
    }
    fs->n = o->n_faults;
    fs->repeat = o->fault_repeat;
    fs->latency_us = o->latency_us;
    return 0;
}

static int check(const mcdc_tds_server_options *o, char host[256], char port[16], tds_faults *fs, tds_tls_creds **creds)
{
    *creds = NULL;
    int rc = split_listen(o->listen, host, port);
    if (rc) return rc;
    if ((rc = load_faults(o, fs))) return rc;
    if (o->max_connections < 0) {
        mcdc_error_set(MCDC_EINVAL, "--max-connections %d: must be at least 1", o->max_connections);
        return mcdc_error_hint("give a positive number of connections, e.g. --max-connections 16");
    }
    if (o->latency_us < 0) return mcdc_error_set(MCDC_EINVAL, "--latency: must not be negative");
    if (o->product_version && (o->product_version < 13 || o->product_version > 16)) {
        mcdc_error_set(MCDC_EINVAL, "--product-version %d: not one of 13, 14, 15, 16", o->product_version);
        return mcdc_error_hint("give 13 (SQL Server 2016), 14 (2017), 15 (2019) or 16 (2022)");
    }
    if (!o->tls_cert != !o->tls_key) {
        mcdc_error_set(MCDC_EINVAL, "--tls-cert and --tls-key: one given without the other");
        return mcdc_error_hint("give both the certificate and its private key");
    }
    if (o->encryption != MCDC_TDS_ENCRYPT_OFF && !o->tls_cert) {
        mcdc_error_set(MCDC_EINVAL, "--encryption %s: needs a certificate",
                       o->encryption == MCDC_TDS_ENCRYPT_LOGIN ? "login" : "required");
        return mcdc_error_hint("give --tls-cert FILE --tls-key FILE, or --encryption off");
    }
    if (o->replay_dir) {
        tds_replay *r;
        if ((rc = tds_replay_load(&r, o->replay_dir))) return rc;
        tds_replay_free(r);
    }
    if (o->tls_cert && (rc = tds_tls_creds_load(creds, o->tls_cert, o->tls_key))) return rc;
    mcdc_sim *sim;
    if ((rc = mcdc_sim_open_readonly(&sim, o->db_path)) < 0) {
        tds_tls_creds_free(*creds);
        *creds = NULL;
        return rc;
    }
    mcdc_sim_close(sim);
    return 0;
}

int mcdc_tds_check_options(const mcdc_tds_server_options *o)
{
    char host[256], port[16];
    tds_faults fs;
    tds_tls_creds *creds;
    int rc = check(o, host, port, &fs, &creds);
    tds_tls_creds_free(creds);
    return rc;
}

/* ---- sockets ---------------------------------------------------------------------------------- */

static ssize_t sock_recv(void *p, void *buf, size_t n)
{
    int fd = *(int *)p;
    for (;;) {
        ssize_t k = recv(fd, buf, n, 0);
        if (k < 0 && errno == EINTR) continue;
        return k;
    }
}

static ssize_t sock_send(void *p, const void *buf, size_t n)
{
    int fd = *(int *)p;
    for (;;) {
        ssize_t k = send(fd, buf, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        return k;
    }
}

static bool sock_readable(void *p)
{
    struct pollfd pfd = {*(int *)p, POLLIN, 0};
    return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR));
}

static void *conn_main(void *arg)
{
    conn_slot *slot = arg;
    server *s = slot->srv;
    tds_io io = {sock_recv, sock_send, sock_readable, &slot->fd};
    tds_conn_serve(&s->ctx, &io);
    pthread_mutex_lock(&s->mu);
    for (conn_slot **pp = &s->slots; *pp; pp = &(*pp)->next) {
        if (*pp == slot) {
            *pp = slot->next;
            break;
        }
    }
    s->n_active--;
    close(slot->fd);
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
    free(slot);
    return NULL;
}

static const char *stem(const char *path, char out[256])
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, 256, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
    return out;
}

int mcdc_tds_serve(const mcdc_tds_server_options *o)
{
    server *s = calloc(1, sizeof *s);
    if (!s) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    char host[256], port[16], dbname[256];
    tds_tls_creds *creds = NULL;
    int rc = check(o, host, port, &s->faults, &creds);
    if (rc) {
        free(s);
        return rc;
    }
    pthread_mutex_init(&s->faults.mu, NULL);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    s->ctx.db_path = o->db_path;
    s->ctx.database = o->database ? o->database : stem(o->db_path, dbname);
    s->ctx.encryption = o->encryption;
    s->ctx.creds = creds;
    s->ctx.sopts = (mcdc_sim_server_options)MCDC_SIM_SERVER_OPTIONS_INIT;
    if (o->product_version) s->ctx.sopts.product_version = o->product_version;
    if (o->engine_edition) s->ctx.sopts.engine_edition = o->engine_edition;
    s->ctx.sopts.has_utc_offset = o->has_utc_offset;
    s->ctx.sopts.utc_offset_min = o->utc_offset_min;
    s->ctx.sopts.database = s->ctx.database;
    s->ctx.engine = &tds_engine_sim;
    s->ctx.faults = &s->faults;
    s->ctx.stopping = &s->stopping;
    struct addrinfo hints = {0}, *ai = NULL; /* before the first goto done, which frees it */
    if (o->replay_dir && (rc = tds_replay_load(&s->ctx.replay, o->replay_dir))) goto done;
    int max_conn = o->max_connections > 0 ? o->max_connections : 64;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int lfd = -1;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai) {
        rc = mcdc_error_set(MCDC_EINVAL, "--listen %s: %s", o->listen, gai_strerror(gai));
        mcdc_error_hint("give a numeric address or a resolvable host name");
        goto done;
    }
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        lfd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (lfd < 0) continue;
        int one = 1;
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(lfd, a->ai_addr, a->ai_addrlen) == 0 && listen(lfd, 64) == 0) break;
        close(lfd);
        lfd = -1;
    }
    if (lfd < 0) {
        rc = mcdc_error_set(MCDC_EIO, "--listen %s: cannot listen: %s", o->listen, strerror(errno));
        mcdc_error_hint("pick a free port (0 picks one) or an address of this machine");
        goto done;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(lfd, (struct sockaddr *)&ss, &sl);
    int real_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (o->ready) o->ready(host, real_port, o->ready_payload);

    while (!(o->stop && *o->stop)) {
        struct pollfd pfd = {lfd, POLLIN, 0};
        int pr = poll(&pfd, 1, 100);
        if (pr <= 0) continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_lock(&s->mu);
        if (s->n_active >= max_conn) {
            pthread_mutex_unlock(&s->mu);
            mcdc_log(MCDC_LOG_WARN, "tds", "refusing a connection: %d connections are open (--max-connections)", max_conn);
            close(fd);
            continue;
        }
        conn_slot *slot = calloc(1, sizeof *slot);
        if (!slot) {
            pthread_mutex_unlock(&s->mu);
            close(fd);
            continue;
        }
        slot->fd = fd;
        slot->srv = s;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 1 << 20);
        if (pthread_create(&slot->thread, &attr, conn_main, slot) != 0) {
            pthread_mutex_unlock(&s->mu);
            pthread_attr_destroy(&attr);
            close(fd);
            free(slot);
            continue;
        }
        pthread_attr_destroy(&attr);
        slot->next = s->slots;
        s->slots = slot;
        s->n_active++;
        pthread_mutex_unlock(&s->mu);
    }
    rc = 0;
    s->stopping = 1;
    close(lfd);
    pthread_mutex_lock(&s->mu);
    for (conn_slot *sl2 = s->slots; sl2; sl2 = sl2->next) shutdown(sl2->fd, SHUT_RDWR);
    while (s->n_active > 0) pthread_cond_wait(&s->idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
done:
    if (ai) freeaddrinfo(ai);
    tds_tls_creds_free(creds);
    tds_replay_free(s->ctx.replay);
    pthread_mutex_destroy(&s->faults.mu);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->idle);
    free(s);
    return rc;
}
