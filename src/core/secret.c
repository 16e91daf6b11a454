/*
 * core/secret.c: password masking for connection strings and URLs (see mcdc/secret.h).
 *
 * Two passes. The first masks the userinfo of every URL ("scheme://user:pass@host"): the
 * text between "://" and the last '@' of the authority, keeping the user up to its first
 * ':'. The second goes over the attributes: for each find the key (up to '='), then the
 * value (braced with "}}" escapes, quoted with doubled quotes, or plain up to ';').
 * Masked values become "***". A string with no '=' and no URL is copied unchanged. The
 * scans never read past the terminating NUL, whatever the input.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mcdc/secret.h"

/* Key suffixes that name a secret (any case). Sloppy spellings err on the side of
 * masking: "UserPwd", "odbc:PWD", "AccessToken", "AccountKey" all count. */
static const char *const SECRET_SUFFIX[] = { "pwd", "password", "passwd", "pass", "secret",
                                             "token", "key" };

/* True when text[0..len), spaces and one closing brace or quote trimmed, ends with a
 * secret's name: "PWD", "{PWD}", "Password", "x Password", "UserPwd". */
static bool ends_with_password(const char *text, size_t len)
{
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    if (len > 0 && (text[len - 1] == '}' || text[len - 1] == '"' || text[len - 1] == '\''))
        len--;
    for (size_t i = 0; i < sizeof SECRET_SUFFIX / sizeof SECRET_SUFFIX[0]; i++) {
        size_t n = strlen(SECRET_SUFFIX[i]);
        if (len >= n && !strncasecmp(text + len - n, SECRET_SUFFIX[i], n))
            return true;
    }
    return false;
}

/* In a value that is not itself a password, the first "pwd=" or "password=" (any case,
 * spaces before '=' allowed): the position just after its '=', or NULL. Catches a
 * missing ';' such as "UID=saPWD=secret". */
static const char *embedded_password(const char *v, const char *end)
{
    for (const char *eq = v; eq < end; eq++)
        if (*eq == '=' && ends_with_password(v, (size_t)(eq - v)))
            return eq + 1;
    return NULL;
}

/* End of the value starting at v: past a braced value's closing '}' or a quoted value's
 * closing quote (or the NUL when unterminated), or at the next ';' / NUL for a plain one.
 * In a braced value "}}" is one '}'; in a quoted one the quote doubled is one quote. */
static const char *value_end(const char *v)
{
    const char *p = v;
    while (*p == ' ' || *p == '\t')
        p++;
    char close = *p == '{' ? '}' : *p == '"' ? '"' : *p == '\'' ? '\'' : 0;
    if (!close) {
        p = v;
        while (*p && *p != ';')
            p++;
        return p;
    }
    for (p++; *p; p++) {
        if (*p == close) {
            if (p[1] == close) {
                p++;
                continue;
            }
            p++;
            /* Text between the closing brace and ';' belongs to the value too. */
            while (*p && *p != ';')
                p++;
            return p;
        }
    }
    return p;
}

/* The end of the userinfo of the URL whose authority starts at @p a (just after "://"):
 * its '@', or NULL when it has none. The authority ends at '/', '?', '#', a space or
 * the next "://"; the last '@' in it ends the userinfo (a raw '@' in a password is
 * common). Failing that, an '@' further on (before a space or the next URL) still counts
 * when a ':' comes before it: "user:pa/ss@host" hides "pa/ss" too. */
static const char *userinfo_end(const char *a)
{
    const char *at = NULL, *p = a;
    for (; *p && !strchr("/?# \t", *p) && strncmp(p, "://", 3) != 0; p++)
        if (*p == '@')
            at = p;
    if (at)
        return at;
    bool colon = false;
    for (p = a; *p && *p != ' ' && *p != '\t' && strncmp(p, "://", 3) != 0; p++) {
        colon |= *p == ':';
        if (*p == '@' && colon)
            at = p;
    }
    return at;
}

/* Pass 1: copy @p s to @p out with the userinfo of each URL masked ("user:***@", or
 * "***@" when there is no ':', since a lone user part may be a token). */
static int mask_urls(mcdc_buf *out, const char *s)
{
    int rc = 0;
    const char *p = s;
    while (rc == 0) {
        const char *u = strstr(p, "://");
        if (!u)
            return mcdc_buf_puts(out, p);
        const char *a = u + 3, *at = userinfo_end(a);
        rc = mcdc_buf_put(out, p, (size_t)(a - p));
        if (rc < 0 || !at) {
            p = a;
            continue;
        }
        const char *colon = memchr(a, ':', (size_t)(at - a));
        if (colon)
            rc = mcdc_buf_put(out, a, (size_t)(colon + 1 - a));
        if (rc == 0)
            rc = mcdc_buf_puts(out, "***");
        p = at;
    }
    return rc;
}

int mcdc_secret_mask(mcdc_buf *out, const char *conn)
{
    size_t start = out->len;
    mcdc_buf urls = MCDC_BUF_INIT(out->max);
    int rc = mask_urls(&urls, conn ? conn : "");
    const char *p = urls.ptr ? urls.ptr : "";
    while (*p && rc == 0) {
        const char *eq = p, *semi;
        while (*eq && *eq != '=' && *eq != ';')
            eq++;
        if (*eq != '=') { /* no value: copy the attribute (and its ';') */
            semi = *eq ? eq + 1 : eq;
            rc = mcdc_buf_put(out, p, (size_t)(semi - p));
            p = semi;
            continue;
        }
        const char *vend = value_end(eq + 1);
        const char *hidden = ends_with_password(p, (size_t)(eq - p)) ? eq + 1 : embedded_password(eq + 1, vend);
        if (hidden) {
            rc = mcdc_buf_put(out, p, (size_t)(hidden - p));
            if (rc == 0)
                rc = mcdc_buf_puts(out, "***");
        } else {
            rc = mcdc_buf_put(out, p, (size_t)(vend - p));
        }
        p = vend;
        if (rc == 0 && *p == ';') {
            rc = mcdc_buf_putc(out, ';');
            p++;
        }
    }
    mcdc_buf_dispose(&urls);
    if (rc < 0) {
        out->len = start;
        if (out->ptr)
            out->ptr[start] = '\0';
    }
    return rc;
}

char *mcdc_secret_mask_str(char *out, size_t cap, const char *conn)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    if (cap == 0)
        return out;
    if (mcdc_secret_mask(&b, conn) == 0) {
        size_t n = b.len < cap - 1 ? b.len : cap - 1;
        if (n)
            memcpy(out, b.ptr, n);
        out[n] = '\0';
    } else {
        /* Out of memory or over 1 MiB: show nothing rather than risk a password. */
        snprintf(out, cap, "%s", "(connection string hidden)");
    }
    mcdc_buf_dispose(&b);
    return out;
}
