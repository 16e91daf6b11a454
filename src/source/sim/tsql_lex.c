/*
 * source/sim/tsql_lex.c: the T-SQL lexer of sim serve's engine.
 *
 * Turns a batch into tokens: identifiers (plain, [bracketed] with ]] for ], "quoted"),
 * @variables and @@functions, 'strings' and N'strings' ('' for '), numbers (integer, decimal,
 * float with an exponent), 0x binaries, operators; comments (-- to the end of the line,
 * nested block comments) are skipped. Every token keeps its place in the text, so messages
 * can quote it ("Incorrect syntax near '...'"), and its line. Values are unquoted into the
 * arena; nothing else is allocated.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql.h"

static bool ident_char(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '@' || c == '#' || c == '$' || c >= 0x80;
}

/* Copy a quoted run [p+1, q) into the arena, undoubling @p close. */
static char *unquote(sim_arena *a, const char *p, const char *q, char close, size_t *out_n)
{
    char *v = sim_arena_alloc(a, (size_t)(q - p) + 1);
    size_t n = 0;
    if (!v) return NULL;
    for (const char *r = p; r < q; r++) {
        v[n++] = *r;
        if (*r == close) r++;
    }
    v[n] = '\0';
    *out_n = n;
    return v;
}

int tsql_lex(sim_arena *a, const char *sql, size_t len, tsql_tok **out, int *n_out, tsql_error *err)
{
    const char *p = sql, *e = sql + len;
    int cap = 64, n = 0, line = 1;
    tsql_tok *toks = sim_arena_alloc(a, (size_t)cap * sizeof *toks);
    if (!toks) return MCDC_ENOMEM;
    for (;;) {
        /* blanks and comments */
        for (;;) {
            while (p < e && isspace((unsigned char)*p)) { if (*p == '\n') line++; p++; }
            if (p + 1 < e && p[0] == '-' && p[1] == '-') {
                while (p < e && *p != '\n') p++;
                continue;
            }
            if (p + 1 < e && p[0] == '/' && p[1] == '*') {
                int depth = 0;
                const char *q = p;
                while (q < e) {
                    if (q + 1 < e && q[0] == '/' && q[1] == '*') { depth++; q += 2; continue; }
                    if (q + 1 < e && q[0] == '*' && q[1] == '/') { q += 2; if (--depth == 0) break; continue; }
                    if (*q == '\n') line++;
                    q++;
                }
                if (depth > 0)
                    return tsql_fail(err, 113, 15, 1, line, "Missing end comment mark '*/'.");
                p = q;
                continue;
            }
            break;
        }
        if (n + 1 >= cap) {
            tsql_tok *nt = sim_arena_alloc(a, (size_t)cap * 2 * sizeof *nt);
            if (!nt) return MCDC_ENOMEM;
            memcpy(nt, toks, (size_t)n * sizeof *nt);
            toks = nt;
            cap *= 2;
        }
        tsql_tok *t = &toks[n];
        memset(t, 0, sizeof *t);
        t->p = p;
        t->line = line;
        if (p >= e) {
            t->k = TK_EOF;
            n++;
            break;
        }
        unsigned char c = (unsigned char)*p;
        if ((c == 'N' || c == 'n') && p + 1 < e && p[1] == '\'') {
            t->wide = true;
            p++;
            c = '\'';
        }
        if (c == '\'') {
            const char *q = p + 1;
            while (q < e && !(*q == '\'' && !(q + 1 < e && q[1] == '\''))) {
                if (*q == '\'') q++;
                else if (*q == '\n') line++;
                q++;
            }
            if (q >= e)
                return tsql_fail(err, 105, 15, 1, t->line, "Unclosed quotation mark after the character string '%.*s'.",
                                 (int)(e - p - 1 > 100 ? 100 : e - p - 1), p + 1);
            t->k = TK_STR;
            if (!(t->v = unquote(a, p + 1, q, '\'', &t->vn))) return MCDC_ENOMEM;
            p = q + 1;
        } else if (c == '0' && p + 1 < e && (p[1] == 'x' || p[1] == 'X')) {
            const char *q = p + 2;
            while (q < e && isxdigit((unsigned char)*q)) q++;
            t->k = TK_HEX;
            t->v = p + 2;
            t->vn = (size_t)(q - p - 2);
            p = q;
        } else if (isdigit(c) || (c == '.' && p + 1 < e && isdigit((unsigned char)p[1]))) {
            const char *q = p;
            t->k = TK_INT;
            while (q < e && isdigit((unsigned char)*q)) q++;
            if (q < e && *q == '.') {
                t->k = TK_DEC;
                q++;
                while (q < e && isdigit((unsigned char)*q)) q++;
            }
            if (q < e && (*q == 'e' || *q == 'E')) {
                const char *r = q + 1;
                if (r < e && (*r == '+' || *r == '-')) r++;
                if (r < e && isdigit((unsigned char)*r)) {
                    t->k = TK_FLOAT;
                    q = r;
                    while (q < e && isdigit((unsigned char)*q)) q++;
                }
            }
            t->v = p;
            t->vn = (size_t)(q - p);
            p = q;
        } else if (c == '@') {
            const char *q = p + 1;
            if (q < e && *q == '@') q++;
            while (q < e && ident_char((unsigned char)*q)) q++;
            t->k = p[1] == '@' ? TK_GLOBAL : TK_VAR;
            t->v = p;
            t->vn = (size_t)(q - p);
            p = q;
        } else if (isalpha(c) || c == '_' || c == '#' || c >= 0x80) {
            const char *q = p;
            while (q < e && ident_char((unsigned char)*q)) q++;
            t->k = TK_ID;
            t->v = p;
            t->vn = (size_t)(q - p);
            p = q;
        } else if (c == '[' || c == '"') {
            char close = c == '[' ? ']' : '"';
            const char *q = p + 1;
            while (q < e && !(*q == close && !(q + 1 < e && q[1] == close))) {
                if (*q == close) q++;
                q++;
            }
            if (q >= e)
                return tsql_fail(err, 105, 15, 1, t->line, "Unclosed quotation mark after the character string '%.*s'.",
                                 (int)(e - p - 1 > 100 ? 100 : e - p - 1), p + 1);
            t->k = TK_QID;
            if (!(t->v = unquote(a, p + 1, q, close, &t->vn))) return MCDC_ENOMEM;
            p = q + 1;
        } else {
            static const char *const two[] = {"<>", "!=", "<=", ">=", "!<", "!>", "+=", "-=", "*=", "/=", "::", NULL};
            size_t w = 1;
            for (int i = 0; two[i]; i++)
                if (p + 1 < e && p[0] == two[i][0] && p[1] == two[i][1]) w = 2;
            t->k = TK_OP;
            t->v = p;
            t->vn = w;
            p += w;
        }
        t->n = (size_t)(p - t->p);
        n++;
    }
    *out = toks;
    *n_out = n;
    return 0;
}

bool tsql_tok_is(const tsql_tok *t, const char *word)
{
    size_t n = strlen(word);
    if (t->k == TK_OP) return t->vn == n && !memcmp(t->v, word, n);
    return t->k == TK_ID && t->vn == n && !strncasecmp(t->v, word, n);
}
