/*
 * fuzz_tds_server: the TDS server's parsing on hostile bytes: whole connections (packet
 * framing, PRELOGIN, LOGIN7, SQLBatch, RPC, transaction and attention requests) over a memory
 * transport on a fake engine, and the LOGIN7 and RPC decoders alone.
 *
 * The first input byte picks what the rest is:
 *   0  the client's whole byte stream;
 *   1  the requests after a valid PRELOGIN and LOGIN7 (so fuzzing reaches the request loop);
 *   2  a LOGIN7 record;  3  an RPC request payload (after ALL_HEADERS).
 * Beyond "no crash, no sanitizer report": every response the server writes is well framed
 * (packets of 8..32767 bytes whose lengths add up), and a LOGIN7 that parses has UTF-8
 * strings that end where they say.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/source/tds_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_framing(const tds_wbuf *out)
{
    size_t i = 0;
    while (i < out->len) {
        if (out->len - i < 8) abort();
        size_t len = (size_t)out->p[i + 2] << 8 | out->p[i + 3];
        if (len < 8 || len > TDS_MAX_PACKET + 1 || len > out->len - i) abort();
        i += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0] % 4;
    data++;
    size--;
    if (mode == 0 || mode == 1) {
        tds_wbuf in = TDS_WBUF_INIT(1 << 22);
        if (mode == 1) {
            cl_prelogin(&in, TDS_ENC_NOT_SUP);
            cl_login7(&in, "u", "secret", "d", 4096);
        }
        tds_w_put(&in, data, size);
        memio m = {in.p, in.len, 0, 0, TDS_WBUF_INIT(1 << 26)};
        fake_serve(&m, NULL);
        check_framing(&m.out);
        tds_w_dispose(&m.out);
        tds_w_dispose(&in);
    } else if (mode == 2) {
        tds_login7 l;
        if (tds_login7_parse(&l, data, size) == 0) {
            if (!l.user || !l.password || !l.database) abort();
            (void)strlen(l.user);
            tds_login7_free(&l);
        }
    } else {
        sim_arena a = {0};
        tds_rpc_call *calls;
        int n;
        if (tds_rpc_parse(&a, data, size, &calls, &n) == 0) {
            for (int i = 0; i < n; i++)
                for (int k = 0; k < calls[i].n_params; k++) {
                    const sim_val *v = &calls[i].params[k].value;
                    if ((v->k == V_STR || v->k == V_BIN) && v->u.s.n && !v->u.s.p) abort();
                }
        }
        sim_arena_free(&a);
    }
    mcdc_error_clear();
    return 0;
}
