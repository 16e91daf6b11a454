/*
 * mcdc/buf.h: a growable byte buffer with a hard cap, and overflow-checked arithmetic.
 *
 * A buffer is created with a maximum size; growing past it fails with MCDC_ENOMEM and
 * leaves the buffer as it was. The contents are always NUL-terminated (the NUL is not
 * counted in len), so a buffer of text can be used as a C string.
 *
 * Caveats:
 * - Appending may move the memory: pointers into ptr are invalid after any append.
 * - Not thread-safe; one owner at a time.
 */
#ifndef MCDC_BUF_H
#define MCDC_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_buf {
    char  *ptr; /* the bytes, NUL-terminated; NULL until the first append */
    size_t len; /* bytes used, not counting the NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* growing past this many bytes fails */
} mcdc_buf;

/** Default cap: 1 GiB. */
#define MCDC_BUF_DEFAULT_MAX ((size_t)1 << 30)
#define MCDC_BUF_INIT(max_bytes) { NULL, 0, 0, (max_bytes) }

/** Make room for @p extra more bytes. @return 0; MCDC_ENOMEM past the cap. */
int mcdc_buf_grow(mcdc_buf *b, size_t extra);
/** Append @p n bytes. @return 0; MCDC_ENOMEM past the cap (buffer unchanged). */
int mcdc_buf_put(mcdc_buf *b, const void *data, size_t n);
/** Append a NUL-terminated string. */
int mcdc_buf_puts(mcdc_buf *b, const char *s);
/** Append one byte. */
int mcdc_buf_putc(mcdc_buf *b, char c);
/** Append printf-formatted text. */
int mcdc_buf_printf(mcdc_buf *b, const char *fmt, ...) MCDC_PRINTF(2, 3);
int mcdc_buf_vprintf(mcdc_buf *b, const char *fmt, va_list ap);
/** Forget the contents, keep the memory. */
void mcdc_buf_clear(mcdc_buf *b);
/** Free the memory; the buffer may be reused (its cap is kept). Accepts NULL. */
void mcdc_buf_dispose(mcdc_buf *b);
/** Take the bytes out (caller frees with free()); the buffer becomes empty. Never NULL
 *  unless out of memory: an empty buffer gives "". */
char *mcdc_buf_detach(mcdc_buf *b);

/** a + b into *out; true when it overflowed. */
static inline bool mcdc_add_overflow(size_t a, size_t b, size_t *out)
{
    return __builtin_add_overflow(a, b, out);
}
/** a * b into *out; true when it overflowed. */
static inline bool mcdc_mul_overflow(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

#ifdef __cplusplus
}
#endif
#endif
