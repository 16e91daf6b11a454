/*
 * source/sim/tds/packet.c: TDS packets (MS-TDS 2.2.3): reading a request message from its
 * packets and writing a response split to the negotiated packet size.
 *
 * Packet header, 8 bytes:
 *   offset size  meaning
 *   0      1     type (1 SQLBatch, 3 RPC, 4 tabular result, 6 attention, 14 TM, 16 LOGIN7, 18 PRELOGIN)
 *   1      1     status (0x01 end of message, 0x02 ignore this message)
 *   2      2     length of the packet, header included, big-endian (8..32767)
 *   4      2     SPID, big-endian (the server's session id in responses)
 *   6      1     packet id, counting from 1 within a message, modulo 256
 *   7      1     window, 0
 * Example: 04 01 00 15 00 33 01 00 + 13 payload bytes is a whole response of SPID 51.
 *
 * Guarantees: a request never grows past TDS_MAX_MESSAGE; a packet with a length below 8 or
 * above 32767 bytes, or whose type changes within a message, is MCDC_ECORRUPT (the caller
 * closes the connection). Every response packet but the last carries exactly packet_size
 * bytes; the last has the EOM bit. Whole packets wait in the connection's buffer until about
 * TDS_SEND_BATCH bytes of them are there (or the message ends), then go out in one write.
 */
#include <errno.h>
#include <string.h>

#include "source/sim/tds/tds_int.h"

/* Read exactly n bytes: 0; 1 at a clean end before the first byte; MCDC_EIO. */
static int recv_exact(tds_conn *c, uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = c->tls_phase == 2 ? tds_tls_recv(c, p + got, n - got) : c->io.recv(c->io.payload, p + got, n - got);
        if (k == 0) {
            if (got == 0) return 1;
            c->broken = true;
            return mcdc_error_set(MCDC_EIO, "the client closed the connection inside a packet");
        }
        if (k < 0) {
            c->broken = true;
            return mcdc_error_set(MCDC_EIO, "reading from the client failed");
        }
        got += (size_t)k;
    }
    return 0;
}

static int send_all(tds_conn *c, const uint8_t *p, size_t n)
{
    if (c->broken) return MCDC_EIO;
    size_t sent = 0;
    while (sent < n) {
        ssize_t k = c->tls_phase == 2 ? tds_tls_send(c, p + sent, n - sent) : c->io.send(c->io.payload, p + sent, n - sent);
        if (k <= 0) {
            c->broken = true;
            return mcdc_error_set(MCDC_EIO, "writing to the client failed");
        }
        sent += (size_t)k;
    }
    return 0;
}

int tds_read_message(tds_conn *c, uint8_t *type, tds_wbuf *msg)
{
    tds_w_clear(msg);
    bool first = true;
    for (;;) {
        uint8_t h[TDS_HDR];
        int rc = recv_exact(c, h, TDS_HDR);
        if (rc == 1 && !first) {
            c->broken = true;
            return mcdc_error_set(MCDC_EIO, "the client closed the connection inside a message");
        }
        if (rc) return rc;
        size_t len = (size_t)h[2] << 8 | h[3];
        if (len < TDS_HDR || len > TDS_MAX_PACKET + 1)
            return mcdc_error_set(MCDC_ECORRUPT, "packet length %zu is outside 8..32768", len);
        if (!first && h[0] != *type)
            return mcdc_error_set(MCDC_ECORRUPT, "packet type changed from %u to %u inside a message", *type, h[0]);
        *type = h[0];
        first = false;
        if (msg->len + (len - TDS_HDR) > TDS_MAX_MESSAGE)
            return mcdc_error_set(MCDC_ECORRUPT, "a request over %zu bytes", TDS_MAX_MESSAGE);
        uint8_t *d = tds_w_reserve(msg, len - TDS_HDR);
        if (!d && len > TDS_HDR) return msg->err;
        if (len > TDS_HDR && (rc = recv_exact(c, d, len - TDS_HDR)) != 0)
            return rc == 1 ? mcdc_error_set(MCDC_EIO, "the client closed the connection inside a packet") : rc;
        if (h[1] & TDS_ST_EOM) {
            if (h[1] & TDS_ST_IGNORE) { /* the client abandoned this message: read the next */
                tds_w_clear(msg);
                first = true;
                continue;
            }
            return 0;
        }
    }
}

void tds_out_begin(tds_conn *c, uint8_t type)
{
    tds_w_clear(&c->out);
    c->out_type = type;
    c->out_pkt_id = 1;
}

/* Append one packet (header and @p n payload bytes) to @p w. */
static void put_packet(tds_conn *c, tds_wbuf *w, const uint8_t *p, size_t n, bool last)
{
    uint8_t h[TDS_HDR] = {c->out_type, last ? TDS_ST_EOM : 0, (uint8_t)((n + TDS_HDR) >> 8), (uint8_t)(n + TDS_HDR),
                          (uint8_t)(c->spid >> 8), (uint8_t)c->spid, c->out_pkt_id++, 0};
    tds_w_put(w, h, TDS_HDR);
    if (n) tds_w_put(w, p, n);
}

/* Send the first @p n_full whole packets of c->out, then (when @p last) the rest of it as the
 * message's last packet; what was sent leaves c->out. Packets go out together, in writes of
 * about TDS_SEND_BATCH bytes framed in c->wire: one system call for many packets. */
static int send_packets(tds_conn *c, size_t n_full, bool last)
{
    size_t body = c->packet_size - TDS_HDR, off = 0, per_write = TDS_SEND_BATCH / c->packet_size;
    if (per_write < 1) per_write = 1;
    int rc = 0;
    while (rc == 0 && (n_full > 0 || last)) {
        tds_w_clear(&c->wire);
        for (size_t k = 0; k < per_write && n_full > 0; k++, n_full--, off += body)
            put_packet(c, &c->wire, c->out.p + off, body, false);
        if (n_full == 0 && last) {
            put_packet(c, &c->wire, c->out.p + off, c->out.len - off, true);
            off = c->out.len;
            last = false;
        }
        rc = c->wire.err ? c->wire.err : send_all(c, c->wire.p, c->wire.len);
    }
    if (off && off < c->out.len) memmove(c->out.p, c->out.p + off, c->out.len - off);
    c->out.len -= off;
    return rc;
}

/* The whole packets c->out holds, keeping at least one byte back so the last packet is never
 * empty of payload by accident. */
static size_t full_packets(const tds_conn *c)
{
    size_t body = c->packet_size - TDS_HDR;
    return c->out.len > body ? (c->out.len - 1) / body : 0;
}

int tds_out_flush(tds_conn *c)
{
    if (c->out.err) return c->out.err;
    size_t n = full_packets(c);
    return n * c->packet_size >= TDS_SEND_BATCH ? send_packets(c, n, false) : 0;
}

int tds_out_flush_now(tds_conn *c)
{
    if (c->out.err) return c->out.err;
    size_t n = full_packets(c);
    return n ? send_packets(c, n, false) : 0;
}

int tds_out_end(tds_conn *c)
{
    if (c->out.err) return c->out.err;
    int rc = send_packets(c, full_packets(c), true);
    tds_w_clear(&c->out);
    return rc;
}

void tds_frame(tds_wbuf *w, uint8_t type, uint16_t spid, size_t packet_size, const uint8_t *payload, size_t n)
{
    size_t body = packet_size - TDS_HDR, off = 0;
    uint8_t id = 1;
    do {
        size_t k = n - off > body ? body : n - off;
        bool last = off + k == n;
        tds_w_u8(w, type);
        tds_w_u8(w, last ? TDS_ST_EOM : 0);
        tds_w_u16be(w, (uint16_t)(k + TDS_HDR));
        tds_w_u16be(w, spid);
        tds_w_u8(w, id++);
        tds_w_u8(w, 0);
        if (k) tds_w_put(w, payload + off, k);
        off += k;
    } while (off < n);
}

/* Raw transport for the TLS handshake (records inside PRELOGIN packets): tls.c. */
int tds__send_raw(tds_conn *c, const uint8_t *p, size_t n)
{
    int saved = c->tls_phase;
    c->tls_phase = 0;
    int rc = send_all(c, p, n);
    c->tls_phase = saved;
    return rc;
}

int tds__recv_raw(tds_conn *c, uint8_t *p, size_t n)
{
    int saved = c->tls_phase;
    c->tls_phase = 0;
    int rc = recv_exact(c, p, n);
    c->tls_phase = saved;
    return rc;
}

int tds__send_raw_or_tls(tds_conn *c, const uint8_t *p, size_t n)
{
    return send_all(c, p, n);
}
