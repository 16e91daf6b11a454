/*
 * mcdc/text.h: the text encodings SQL Server uses, from and to UTF-8 (the engine's strings):
 * UTF-16LE (nvarchar, names, messages, what HASHBYTES and DATALENGTH see of an nvarchar) and
 * CP1252 (varchar in the default collation SQL_Latin1_General_CP1_CI_AS).
 *
 * One decoder of UTF-8 for every encoder: overlong forms, surrogates, code points past
 * U+10FFFF and truncated sequences are malformed. The encoders never fail: a malformed byte
 * becomes U+FFFD (one code unit), and a character CP1252 cannot hold becomes '?', as SQL
 * Server converts nvarchar to varchar. The five bytes CP1252 leaves undefined (0x81 0x8D
 * 0x8F 0x90 0x9D) map to the C1 controls of the same value, as Windows' table does.
 *
 * Encoders write into a caller's array whose size the matching count gives (or the bound
 * stated), so any byte writer can use them. Pure functions, no allocation; thread-safe.
 *
 * The decoders back to UTF-8 (what a reader of SQL Server gets over the wire) never fail
 * either: a UTF-16 surrogate without its other half becomes U+FFFD (one per unpaired unit);
 * every CP1252 byte has a code point.
 */
#ifndef MCDC_TEXT_H
#define MCDC_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Decode the code point at the start of @p s (@p n >= 1 bytes); *used gets the bytes it
 *  takes (1 for a malformed byte). @return the code point, or -1 when malformed. */
int32_t mcdc_text_utf8_next(const char *s, size_t n, size_t *used);

/** Append code point @p cp (<= U+10FFFF, not a surrogate) as UTF-8 to @p out (4 bytes room).
 *  @return the bytes written (1..4). */
size_t mcdc_text_utf8_put(uint8_t *out, uint32_t cp);

/** The UTF-16 code units of UTF-8 text (a malformed byte counts one, as U+FFFD). */
size_t mcdc_text_utf16_units(const char *s, size_t n);

/** Encode UTF-8 @p s as UTF-16LE into @p out, which holds 2 * mcdc_text_utf16_units(s, n)
 *  bytes (2 * n always suffice). @return the bytes written. */
size_t mcdc_text_utf16le(uint8_t *out, const char *s, size_t n);

/** The most UTF-8 bytes @p n UTF-16 code units decode to (3 a unit). */
#define MCDC_TEXT_UTF8_OF_UTF16(n) ((n) * 3)

/** Decode @p n UTF-16 code units @p u (host byte order, as ODBC's SQLWCHAR) into UTF-8 at
 *  @p out, which holds MCDC_TEXT_UTF8_OF_UTF16(n) bytes: a surrogate pair is one 4-byte
 *  character, an unpaired surrogate U+FFFD. @return the bytes written. */
size_t mcdc_text_utf16_to_utf8(uint8_t *out, const uint16_t *u, size_t n);

/** Decode @p n bytes of CP1252 into UTF-8 at @p out, which holds 3 * n bytes.
 *  @return the bytes written. */
size_t mcdc_text_cp1252_to_utf8(uint8_t *out, const uint8_t *p, size_t n);

/** The CP1252 byte of code point @p cp, '?' when CP1252 has none. */
uint8_t mcdc_text_cp1252_byte(uint32_t cp);

/** Whether CP1252 holds code point @p cp. */
bool mcdc_text_cp1252_has(uint32_t cp);

/** The code point of CP1252 byte @p b. */
uint32_t mcdc_text_cp1252_cp(uint8_t b);

/** The CP1252 bytes of UTF-8 text: one per character (a malformed byte counts one). */
size_t mcdc_text_cp1252_len(const char *s, size_t n);

/** Encode UTF-8 @p s in CP1252 into @p out, which holds mcdc_text_cp1252_len(s, n) bytes
 *  (n always suffice). @return the bytes written. */
size_t mcdc_text_cp1252(uint8_t *out, const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
