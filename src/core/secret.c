/*
 * core/secret.c: password masking for connection strings (see mcdc/secret.h).
 *
 * One pass over the string: for each attribute find the key (up to '='), then the value
 * (braced with "}}" escapes, or plain up to ';'). Masked values become "***". A string
 * with no '=' at all is copied unchanged (it holds no attribute to mask). The scan never
 * reads past the terminating NUL, whatever the input.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mcdc/secret.h"

/* True when text[0..len), spaces trimmed, ends with "pwd" or "password" (any case):
 * "PWD", "Password", "odbc:PWD", "x Password" and "UserPwd" all count, so a sloppy
 * spelling errs on the side of masking. */
static bool ends_with_password(const char *text, size_t len)
{
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    return (len >= 3 && !strncasecmp(text + len - 3, "pwd", 3)) ||
           (len >= 8 && !strncasecmp(text + len - 8, "password", 8));
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

/* End of the value starting at v: past a braced value's closing '}' (or the NUL when
 * unterminated), or at the next ';' / NUL for a plain one. */
static const char *value_end(const char *v)
{
    const char *p = v;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '{') {
        p = v;
        while (*p && *p != ';')
            p++;
        return p;
    }
    for (p++; *p; p++) {
        if (*p == '}') {
            if (p[1] == '}') {
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

int mcdc_secret_mask(mcdc_buf *out, const char *conn)
{
    size_t start = out->len;
    const char *p = conn ? conn : "";
    int rc = 0;
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
