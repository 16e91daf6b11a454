/*
 * mcdc/secret.h: masking passwords in ODBC-style connection strings and URLs before they
 * reach a log line, an error message or the terminal.
 *
 * A connection string is a list of attributes `key=value` separated by ';'. A value is
 * plain text up to the next ';', a braced value `{...}` in which `}}` stands for one '}'
 * (so a braced value may hold ';', '=' and '}'), or a quoted value ("..." or '...', the
 * quote doubled inside). The value of every attribute whose key ends with PWD, Password,
 * Passwd, Pass, Secret, Token or Key (any case, spaces and a closing brace or quote
 * ignored, so also "odbc:PWD" and "{PWD}") is replaced by "***"; so is the rest of any
 * other value from such a "key=" inside it (a forgotten ';'). In a URL
 * ("scheme://user:pass@host") the userinfo is masked, keeping the user: "user:***@", or
 * "***@" when there is no ':' (a lone user part may be a token). Everything else is kept
 * byte for byte. An unterminated braced or quoted password masks the rest of the string.
 *
 * Caveats:
 * - Use it on every path that shows a source string: error messages, logs, status output.
 * - Pure functions: thread-safe.
 */
#ifndef MCDC_SECRET_H
#define MCDC_SECRET_H

#include <stddef.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Append @p conn with its passwords masked to @p out.
 *  @return 0; MCDC_ENOMEM past the buffer's cap (the buffer is left as it was). */
int mcdc_secret_mask(mcdc_buf *out, const char *conn);

/** Write @p conn with its passwords masked into @p out (@p cap bytes, NUL-terminated,
 *  cut to fit; a cut never ends inside a password since those are "***"). Returns out. */
char *mcdc_secret_mask_str(char *out, size_t cap, const char *conn);

#ifdef __cplusplus
}
#endif
#endif
