/*
 * source/sim/tds/transcript.c: transcripts of TDS exchanges, written from FreeTDS's packet
 * dump by the SQL Server source's record= option and answered from by `sim serve --replay`.
 *
 * A transcript is a directory of JSONL files (transcript.jsonl when recorded here); each line
 * is one request and its response:
 *   {"n":1,"kind":"batch"|"rpc"|"tm","text":"...","calls":[{"procedure":"sp_executesql",
 *    "params":[{"name":"@p1","type":"int","value":"1"}]}],
 *    "decoded":{...respdec.c...},"request":"HEX","response":"HEX"}
 * "request" is the request's payload after ALL_HEADERS (so the transaction descriptor does
 * not take part), "response" the whole reply as the server sent it (every token: COLMETADATA,
 * ROW, DONE with row counts, ERROR with number, state and class). text, calls, params and
 * decoded (the reply's tokens as columns, rows, row counts and errors) are for people; replay matches on the request bytes, which hold exactly the statement text and
 * the parameters' names, types and values.
 * Guarantees: LOGIN7 is never in the dump (FreeTDS turns its dump off while it sends the
 * login) and any LOGIN7, PRELOGIN or ATTENTION message met is left out of the transcript, so
 * no password reaches it. Replay answers the k-th arrival of a request with its k-th
 * recording (its last one once they run out), across connections.
 */
#include <errno.h>
#include <jansson.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "source/sim/sim_int.h"
#include "source/sim/tds/tds_int.h"

/* ---- the dump ----------------------------------------------------------------------------- */

typedef struct msgbuf {
    uint8_t *p;
    size_t   len, cap;
    uint8_t  type;
    bool     open;
} msgbuf;

static int mb_put(msgbuf *m, const uint8_t *p, size_t n)
{
    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4096;
        while (cap < m->len + n) cap *= 2;
        uint8_t *q = realloc(m->p, cap);
        if (!q) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        m->p = q;
        m->cap = cap;
    }
    memcpy(m->p + m->len, p, n);
    m->len += n;
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* "0000 12 01 00 3a ...-... |ascii|": byte i at column 5 + 3i. @return bytes read, -1 if not such a line. */
static int hex_line(const char *l, uint8_t out[16])
{
    for (int i = 0; i < 4; i++)
        if (hexval(l[i]) < 0) return -1;
    if (l[4] != ' ') return -1;
    int n = 0;
    for (; n < 16; n++) {
        const char *c = l + 5 + 3 * n;
        int h = hexval(c[0]), lo = h < 0 ? -1 : hexval(c[1]);
        if (h < 0 || lo < 0) break;
        out[n] = (uint8_t)(h << 4 | lo);
        if (c[2] != ' ' && c[2] != '-') { n++; break; }
    }
    return n;
}

static char *hex_of(const uint8_t *p, size_t n)
{
    static const char d[] = "0123456789abcdef";
    char *s = malloc(2 * n + 1);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = d[p[i] >> 4];
        s[2 * i + 1] = d[p[i] & 15];
    }
    s[2 * n] = '\0';
    return s;
}

static json_t *utf16_json(const uint8_t *p, size_t n)
{
    tds_wbuf w = TDS_WBUF_INIT(TDS_MAX_MESSAGE * 2);
    tds_utf16_to_utf8(&w, p, n);
    json_t *j = w.err ? NULL : json_stringn(w.p ? (const char *)w.p : "", w.len);
    tds_w_dispose(&w);
    return j;
}

/* The people's part of an entry: text and calls with their parameters. */
static void describe(json_t *e, uint8_t type, const uint8_t *body, size_t n)
{
    if (type == TDS_PKT_BATCH) {
        json_object_set_new(e, "kind", json_string("batch"));
        json_t *t = utf16_json(body, n);
        if (t) json_object_set_new(e, "text", t);
        return;
    }
    if (type == TDS_PKT_TM) {
        tds_rd r = {body, body + n, false};
        json_object_set_new(e, "kind", json_string("tm"));
        json_object_set_new(e, "request_type", json_integer(tds_rd_u16(&r)));
        return;
    }
    json_object_set_new(e, "kind", json_string("rpc"));
    sim_arena a = {0};
    tds_rpc_call *calls = NULL;
    int nc = 0;
    if (tds_rpc_parse(&a, body, n, &calls, &nc) == 0) {
        json_t *ja = json_array();
        for (int i = 0; i < nc; i++) {
            json_t *c = json_object();
            if (calls[i].proc) json_object_set_new(c, "procedure", json_string(calls[i].proc));
            else json_object_set_new(c, "procedure_id", json_integer(calls[i].proc_id));
            json_t *ps = json_array();
            for (int k = 0; k < calls[i].n_params; k++) {
                const mcdc_sim_param *p = &calls[i].params[k];
                json_t *jp = json_object();
                char tn[96];
                sim_type_format(tn, sizeof tn, &p->type);
                if (p->name) json_object_set_new(jp, "name", json_string(p->name));
                json_object_set_new(jp, "type", json_string(tn));
                if (p->value.k == V_NULL) {
                    json_object_set_new(jp, "value", json_null());
                } else {
                    mcdc_buf b = MCDC_BUF_INIT(TDS_MAX_MESSAGE);
                    if (sim_val_text(&b, &p->type, &p->value) == 0)
                        json_object_set_new(jp, "value", json_stringn(b.ptr ? b.ptr : "", b.len));
                    mcdc_buf_dispose(&b);
                }
                if (p->output) json_object_set_new(jp, "output", json_true());
                json_array_append_new(ps, jp);
                /* the statement of sp_executesql (its first parameter) or one named @stmt */
                bool exec_sql = calls[i].proc_id == 10 || (calls[i].proc && (!strcasecmp(calls[i].proc, "sp_executesql") ||
                                                                           !strcasecmp(calls[i].proc, "sys.sp_executesql")));
                if (i == 0 && !json_object_get(e, "text") && p->value.k == V_STR &&
                    ((exec_sql && k == 0) || (p->name && !strcasecmp(p->name, "@stmt"))))
                    json_object_set_new(e, "text", json_stringn(p->value.u.s.p, p->value.u.s.n));
            }
            json_object_set_new(c, "params", ps);
            json_array_append_new(ja, c);
        }
        json_object_set_new(e, "calls", ja);
    }
    sim_arena_free(&a);
}

static int emit(FILE *out, long n, uint8_t type, const msgbuf *req, const msgbuf *resp)
{
    tds_rd r = {req->p, req->p + req->len, false};
    if (tds_skip_all_headers(&r)) return 0; /* not a request we can key */
    const uint8_t *body = r.p;
    size_t bn = (size_t)(r.end - r.p);
    json_t *e = json_object();
    json_object_set_new(e, "n", json_integer(n));
    describe(e, type, body, bn);
    char *rq = hex_of(body, bn), *rs = hex_of(resp->p ? resp->p : (const uint8_t *)"", resp->len);
    int rc = 0;
    if (!rq || !rs) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    } else {
        json_object_set_new(e, "decoded", tds_response_decode(resp->p ? resp->p : (const uint8_t *)"", resp->len));
        json_object_set_new(e, "request", json_string(rq));
        json_object_set_new(e, "response", json_string(rs));
        char *line = json_dumps(e, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (!line || fprintf(out, "%s\n", line) < 0) rc = mcdc_error_set(MCDC_EIO, "cannot write the transcript");
        free(line);
    }
    free(rq);
    free(rs);
    json_decref(e);
    return rc;
}

int mcdc_tds_transcript_convert(const char *dump_path, long *offset, const char *out_path)
{
    FILE *in = fopen(dump_path, "r");
    if (!in) return errno == ENOENT ? 0 : mcdc_error_set(MCDC_EIO, "%s: cannot read: %s", dump_path, strerror(errno));
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && st.st_size < *offset) *offset = 0; /* the driver started it anew */
    fseek(in, *offset, SEEK_SET);
    /* the entries' numbers go on from the lines already there */
    long n = 0;
    FILE *out = fopen(out_path, "r");
    if (out) {
        int ch;
        while ((ch = fgetc(out)) != EOF) n += ch == '\n';
        fclose(out);
    }
    out = fopen(out_path, "a");
    if (!out) {
        fclose(in);
        return mcdc_error_set(MCDC_EIO, "%s: cannot write: %s", out_path, strerror(errno));
    }
    msgbuf sent = {0}, recv = {0};
    int dir = 0; /* 1 sending, 2 receiving, 0 outside a packet */
    bool pending = false; /* a request waits for its response */
    uint8_t pending_type = 0;
    msgbuf pkt = {0};
    char line[512];
    int rc = 0;
    long consumed = *offset;
    for (;;) {
        bool eof = !fgets(line, sizeof line, in);
        uint8_t b[16];
        int nb = eof ? -1 : hex_line(line, b);
        if (nb >= 0 && dir) {
            if ((rc = mb_put(&pkt, b, (size_t)nb))) break;
            continue;
        }
        /* a packet ends: add it to its message */
        if (dir && pkt.len >= TDS_HDR) {
            msgbuf *m = dir == 1 ? &sent : &recv;
            if (!m->open) {
                m->len = 0;
                m->type = pkt.p[0];
                m->open = true;
            }
            size_t plen = (size_t)pkt.p[2] << 8 | pkt.p[3];
            if (plen > pkt.len) plen = pkt.len;
            if (plen > TDS_HDR && (rc = mb_put(m, pkt.p + TDS_HDR, plen - TDS_HDR))) break;
            if (pkt.p[1] & TDS_ST_EOM) {
                m->open = false;
                if (dir == 1) {
                    pending_type = m->type;
                    pending = true;
                } else {
                    if (pending && (pending_type == TDS_PKT_BATCH || pending_type == TDS_PKT_RPC || pending_type == TDS_PKT_TM)) {
                        if ((rc = emit(out, ++n, pending_type, &sent, &recv))) break;
                    }
                    /* the login's answer (its request is not in the dump) and prelogin's are left out */
                    pending = false;
                    consumed = ftell(in);
                }
            }
        }
        pkt.len = 0;
        dir = 0;
        if (eof) break;
        if (strstr(line, "Sending packet")) dir = 1;
        else if (strstr(line, "Received packet")) dir = 2;
    }
    if (rc == 0 && (fflush(out) || fsync(fileno(out)))) rc = mcdc_error_set(MCDC_EIO, "%s: cannot write: %s", out_path, strerror(errno));
    if (fclose(out) && rc == 0) rc = mcdc_error_set(MCDC_EIO, "%s: cannot write", out_path);
    fclose(in);
    *offset = consumed;
    free(sent.p);
    free(recv.p);
    free(pkt.p);
    return rc;
}

/* ---- replay ------------------------------------------------------------------------------- */

typedef struct replay_entry {
    uint8_t  type;
    uint8_t *req, *resp;
    size_t   req_n, resp_n;
    bool     used;
} replay_entry;

struct tds_replay {
    replay_entry   *e;
    size_t          n, cap;
    pthread_mutex_t mu;
};

static uint8_t *unhex(const char *s, size_t *n)
{
    size_t len = strlen(s);
    if (len % 2) return NULL;
    uint8_t *p = malloc(len / 2 + 1);
    if (!p) return NULL;
    for (size_t i = 0; i < len / 2; i++) {
        int h = hexval(s[2 * i]), l = hexval(s[2 * i + 1]);
        if (h < 0 || l < 0) { free(p); return NULL; }
        p[i] = (uint8_t)(h << 4 | l);
    }
    *n = len / 2;
    return p;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_file(tds_replay *r, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return mcdc_error_set(MCDC_EINVAL, "--replay: %s: cannot read: %s", path, strerror(errno));
    json_error_t je;
    int rc = 0;
    size_t lineno = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (line[0] == '\n') continue;
        json_t *j = json_loads(line, 0, &je);
        const char *kind = j ? json_string_value(json_object_get(j, "kind")) : NULL;
        const char *rq = j ? json_string_value(json_object_get(j, "request")) : NULL;
        const char *rs = j ? json_string_value(json_object_get(j, "response")) : NULL;
        uint8_t type = !kind ? 0 : !strcmp(kind, "batch") ? TDS_PKT_BATCH : !strcmp(kind, "rpc") ? TDS_PKT_RPC
                                 : !strcmp(kind, "tm") ? TDS_PKT_TM : 0;
        replay_entry e = {type, NULL, NULL, 0, 0, false};
        if (type && rq && rs) {
            e.req = unhex(rq, &e.req_n);
            e.resp = unhex(rs, &e.resp_n);
        }
        json_decref(j);
        if (!e.req || !e.resp) {
            free(e.req);
            free(e.resp);
            rc = mcdc_error_set(MCDC_EINVAL, "--replay: %s:%zu: not a transcript entry", path, lineno);
            mcdc_error_hint("each line is a JSON object with kind (batch, rpc or tm), request and response in hex "
                            "(docs/guides/sqlserver.md, Transcripts)");
            break;
        }
        if (r->n == r->cap) {
            size_t nc = r->cap ? r->cap * 2 : 64;
            replay_entry *ne = realloc(r->e, nc * sizeof *ne);
            if (!ne) { free(e.req); free(e.resp); rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            r->e = ne;
            r->cap = nc;
        }
        r->e[r->n++] = e;
    }
    free(line);
    fclose(f);
    return rc;
}

void tds_replay_free(tds_replay *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->e[i].req);
        free(r->e[i].resp);
    }
    free(r->e);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int tds_replay_load(tds_replay **out, const char *dir)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return mcdc_error_set(MCDC_EINVAL, "--replay %s: cannot open the directory: %s", dir, strerror(errno)),
               mcdc_error_hint("give the directory a source's record= option wrote (its *.jsonl files)");
    char **names = NULL;
    size_t nn = 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl") || de->d_name[0] == '.') continue;
        char **nx = realloc(names, (nn + 1) * sizeof *nx);
        if (!nx || !(nx[nn] = strdup(de->d_name))) { free(nx ? nx : names); names = NULL; rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); nn = 0; break; }
        names = nx;
        nn++;
    }
    closedir(d);
    tds_replay *r = calloc(1, sizeof *r);
    if (!r) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    else pthread_mutex_init(&r->mu, NULL);
    if (names) qsort(names, nn, sizeof *names, cmp_names);
    for (size_t i = 0; rc == 0 && i < nn; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = load_file(r, path);
    }
    for (size_t i = 0; i < nn; i++) free(names[i]);
    free(names);
    if (rc == 0 && r->n == 0)
        rc = mcdc_error_set(MCDC_EINVAL, "--replay %s: no recorded statement (no *.jsonl file with entries)", dir),
        mcdc_error_hint("record one with the SQL Server source's record=DIR option, or scripts/sqlserver-smoke.sh --record DIR");
    if (rc) {
        tds_replay_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

bool tds_replay_answer(tds_replay *r, uint8_t type, const uint8_t *body, size_t n, const uint8_t **resp, size_t *resp_n)
{
    pthread_mutex_lock(&r->mu);
    replay_entry *last = NULL, *hit = NULL;
    for (size_t i = 0; i < r->n && !hit; i++) {
        replay_entry *e = &r->e[i];
        if (e->type != type || e->req_n != n || memcmp(e->req, body, n)) continue;
        if (!e->used) hit = e;
        else last = e;
    }
    if (!hit) hit = last;
    if (hit) {
        hit->used = true;
        *resp = hit->resp;
        *resp_n = hit->resp_n;
    }
    pthread_mutex_unlock(&r->mu);
    return hit != NULL;
}

void tds_replay_describe(char *out, size_t cap, uint8_t type, const uint8_t *body, size_t n)
{
    json_t *e = json_object();
    describe(e, type, body, n);
    const char *text = json_string_value(json_object_get(e, "text"));
    json_t *calls = json_object_get(e, "calls");
    const char *proc = calls ? json_string_value(json_object_get(json_array_get(calls, 0), "procedure")) : NULL;
    if (text) snprintf(out, cap, "%s%s%s", proc ? proc : "", proc ? " " : "", text);
    else if (proc) snprintf(out, cap, "%s", proc);
    else if (type == TDS_PKT_TM) snprintf(out, cap, "a transaction-manager request");
    else snprintf(out, cap, "an RPC");
    json_decref(e);
}
