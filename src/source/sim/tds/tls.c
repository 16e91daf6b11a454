/*
 * source/sim/tds/tls.c: TLS through GnuTLS, as TDS 7.x carries it (MS-TDS 2.2.6.5, 3.3.5.2):
 * the handshake's records travel inside PRELOGIN (0x12) packets, both ways; once it is done,
 * TLS records flow straight over TCP with the TDS packets inside them. In login-only mode
 * the connection drops TLS after the LOGIN7 packet and the rest travels in the clear.
 *
 * During the handshake GnuTLS's push appends to c->hs_out; its pull first sends what is
 * pending as one PRELOGIN message (so a server flight is one message, as clients expect),
 * then hands out bytes of the client's PRELOGIN packets.
 *
 * TLS 1.2 at most (TDS 7.x with SQL Server never negotiates 1.3; see tds_tls_start).
 *
 * Guarantees: a failed handshake is MCDC_EIO (the caller closes); credentials are loaded
 * once and shared read-only by every connection.
 */
#include <errno.h>
#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/log.h"
#include "source/sim/tds/tds_int.h"

struct tds_tls_creds {
    gnutls_certificate_credentials_t x509;
};

int tds_tls_creds_load(tds_tls_creds **out, const char *cert_file, const char *key_file)
{
    *out = NULL;
    tds_tls_creds *c = calloc(1, sizeof *c);
    if (!c) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = gnutls_certificate_allocate_credentials(&c->x509);
    if (rc == GNUTLS_E_SUCCESS) rc = gnutls_certificate_set_x509_key_file(c->x509, cert_file, key_file, GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        const char *why = gnutls_strerror(rc);
        tds_tls_creds_free(c);
        mcdc_error_set(MCDC_EINVAL, "--tls-cert %s / --tls-key %s: %s", cert_file, key_file, why);
        return mcdc_error_hint("give a PEM certificate chain and its PEM private key (certtool or openssl make them)");
    }
    *out = c;
    return 0;
}

void tds_tls_creds_free(tds_tls_creds *c)
{
    if (!c) return;
    if (c->x509) gnutls_certificate_free_credentials(c->x509);
    free(c);
}

static int flush_handshake(tds_conn *c)
{
    if (!c->hs_out.len) return 0;
    tds_conn_round_trip(c); /* each server flight answers one of the client's */
    tds_wbuf f = TDS_WBUF_INIT(TDS_MAX_MESSAGE);
    tds_frame(&f, TDS_PKT_PRELOGIN, 0, TDS_DEFAULT_PACKET, c->hs_out.p, c->hs_out.len);
    int rc = f.err ? f.err : tds__send_raw(c, f.p, f.len);
    tds_w_dispose(&f);
    tds_w_clear(&c->hs_out);
    return rc;
}

static ssize_t push(gnutls_transport_ptr_t p, const void *data, size_t n)
{
    tds_conn *c = p;
    if (c->tls_phase == 1) {
        tds_w_put(&c->hs_out, data, n);
        return c->hs_out.err ? -1 : (ssize_t)n;
    }
    ssize_t k = c->io.send(c->io.payload, data, n);
    if (k < 0) gnutls_transport_set_errno(c->tls, EIO);
    return k;
}

static ssize_t pull(gnutls_transport_ptr_t p, void *data, size_t n)
{
    tds_conn *c = p;
    if (c->tls_phase != 1) {
        ssize_t k = c->io.recv(c->io.payload, data, n);
        if (k < 0) gnutls_transport_set_errno(c->tls, EIO);
        return k;
    }
    if (flush_handshake(c)) {
        gnutls_transport_set_errno(c->tls, EIO);
        return -1;
    }
    if (c->hs_in_pos >= c->hs_in_len) {
        /* the next PRELOGIN packet of the client's flight */
        uint8_t h[TDS_HDR];
        int rc = tds__recv_raw(c, h, TDS_HDR);
        if (rc == 1) return 0;
        size_t len = (size_t)h[2] << 8 | h[3];
        if (rc || h[0] != TDS_PKT_PRELOGIN || len <= TDS_HDR) {
            gnutls_transport_set_errno(c->tls, EIO);
            return -1;
        }
        tds_w_clear(&c->hs_msg);
        uint8_t *d = tds_w_reserve(&c->hs_msg, len - TDS_HDR);
        if (!d || tds__recv_raw(c, d, len - TDS_HDR)) {
            gnutls_transport_set_errno(c->tls, EIO);
            return -1;
        }
        c->hs_in = c->hs_msg.p;
        c->hs_in_len = c->hs_msg.len;
        c->hs_in_pos = 0;
    }
    size_t k = c->hs_in_len - c->hs_in_pos < n ? c->hs_in_len - c->hs_in_pos : n;
    memcpy(data, c->hs_in + c->hs_in_pos, k);
    c->hs_in_pos += k;
    return (ssize_t)k;
}

/* GnuTLS's default would select() on the transport pointer as if it were a descriptor; our
 * pull blocks until data comes, so there is always "data". */
static int pull_timeout(gnutls_transport_ptr_t p, unsigned int ms)
{
    (void)p;
    (void)ms;
    return 1;
}

int tds_tls_start(tds_conn *c, const tds_tls_creds *creds)
{
    gnutls_session_t s;
    if (gnutls_init(&s, GNUTLS_SERVER) < 0) return mcdc_error_set(MCDC_EIO, "TLS: cannot start a session");
    c->tls = s;
    c->tls_phase = 1;
    /* TLS 1.2 at most, as SQL Server speaks it inside TDS 7.x: with 1.3 the client's last
     * handshake flight has no server answer to carry it, and FreeTDS sends it after the
     * handshake, outside a PRELOGIN packet */
    int rc = gnutls_priority_set_direct(s, "NORMAL:-VERS-TLS1.3", NULL);
    if (rc >= 0) rc = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, creds->x509);
    if (rc < 0) {
        tds_tls_stop(c);
        return mcdc_error_set(MCDC_EIO, "TLS: %s", gnutls_strerror(rc));
    }
    gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
    gnutls_transport_set_ptr(s, c);
    gnutls_transport_set_push_function(s, push);
    gnutls_transport_set_pull_function(s, pull);
    gnutls_transport_set_pull_timeout_function(s, pull_timeout);
    gnutls_handshake_set_timeout(s, 30000);
    do {
        rc = gnutls_handshake(s);
    } while (rc < 0 && !gnutls_error_is_fatal(rc));
    if (rc == 0) rc = flush_handshake(c) ? GNUTLS_E_PUSH_ERROR : 0;
    if (rc < 0) {
        const char *why = gnutls_strerror(rc);
        tds_tls_stop(c);
        c->broken = true;
        mcdc_error_set(MCDC_EIO, "TLS handshake failed: %s", why);
        mcdc_log(MCDC_LOG_INFO, "tds", "%s", mcdc_error_last()->message);
        return MCDC_EIO;
    }
    c->tls_phase = 2;
    return 0;
}

void tds_tls_stop(tds_conn *c)
{
    if (c->tls) gnutls_deinit((gnutls_session_t)c->tls);
    c->tls = NULL;
    c->tls_phase = 0;
    tds_w_dispose(&c->hs_out);
    tds_w_dispose(&c->hs_msg);
    c->hs_in = NULL;
    c->hs_in_len = c->hs_in_pos = 0;
}

ssize_t tds_tls_recv(tds_conn *c, void *p, size_t n)
{
    for (;;) {
        ssize_t k = gnutls_record_recv((gnutls_session_t)c->tls, p, n);
        if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED) continue;
        if (k == GNUTLS_E_PREMATURE_TERMINATION) return 0;
        return k < 0 ? -1 : k;
    }
}

ssize_t tds_tls_send(tds_conn *c, const void *p, size_t n)
{
    for (;;) {
        ssize_t k = gnutls_record_send((gnutls_session_t)c->tls, p, n);
        if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED) continue;
        return k < 0 ? -1 : k;
    }
}

bool tds_tls_pending(tds_conn *c)
{
    return c->tls && c->tls_phase == 2 && gnutls_record_check_pending((gnutls_session_t)c->tls) > 0;
}
