/*
 * core/buf.c: mcdc_buf, the capped growable byte buffer.
 *
 * Invariants: (B1) len < cap whenever ptr != NULL, and ptr[len] == '\0';
 * (B2) cap never exceeds max + 1; (B3) a failed append changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/buf.h"

int mcdc_buf_grow(mcdc_buf *b, size_t extra)
{
    size_t need, ncap;
    char *p;
    if (mcdc_add_overflow(b->len, extra, &need) || need > b->max)
        return mcdc_error_set(MCDC_ENOMEM, "buffer of %zu bytes cannot grow by %zu: limit is %zu bytes",
                              b->len, extra, b->max);
    if (need + 1 <= b->cap)
        return 0;
    ncap = b->cap ? b->cap : 64;
    while (ncap < need + 1)
        ncap = ncap > ((size_t)-1) / 2 ? need + 1 : ncap * 2;
    if (b->max < SIZE_MAX && ncap > b->max + 1)
        ncap = b->max + 1;
    p = realloc(b->ptr, ncap);
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory growing a buffer to %zu bytes", ncap);
    b->ptr = p;
    b->cap = ncap;
    b->ptr[b->len] = '\0';
    return 0;
}

int mcdc_buf_put(mcdc_buf *b, const void *data, size_t n)
{
    int rc = mcdc_buf_grow(b, n);
    if (rc < 0)
        return rc;
    if (n)
        memcpy(b->ptr + b->len, data, n);
    b->len += n;
    b->ptr[b->len] = '\0';
    return 0;
}

int mcdc_buf_puts(mcdc_buf *b, const char *s)
{
    return mcdc_buf_put(b, s, strlen(s));
}

int mcdc_buf_putc(mcdc_buf *b, char c)
{
    return mcdc_buf_put(b, &c, 1);
}

int mcdc_buf_vprintf(mcdc_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n, rc;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return mcdc_error_set(MCDC_EINVAL, "bad format string: %s", fmt);
    rc = mcdc_buf_grow(b, (size_t)n);
    if (rc < 0)
        return rc;
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int mcdc_buf_printf(mcdc_buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = mcdc_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void mcdc_buf_clear(mcdc_buf *b)
{
    b->len = 0;
    if (b->ptr)
        b->ptr[0] = '\0';
}

void mcdc_buf_dispose(mcdc_buf *b)
{
    if (!b)
        return;
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
}

char *mcdc_buf_detach(mcdc_buf *b)
{
    char *p = b->ptr;
    if (!p) {
        p = malloc(1);
        if (p)
            p[0] = '\0';
    }
    b->ptr = NULL;
    b->len = b->cap = 0;
    return p;
}
