/*
 * mcdc/lsn.h: SQL Server log sequence numbers.
 *
 * An LSN is 10 bytes, compared as an unsigned big-endian number, exactly as SQL Server's
 * binary(10) values compare. Text form: "0x" + 20 uppercase hex digits; parsing takes
 * "0x" + 1 to 20 hex digits in any case and left-pads with zeros.
 */
#ifndef MCDC_LSN_H
#define MCDC_LSN_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_lsn {
    uint8_t b[10]; /* big-endian: b[0] most significant */
} mcdc_lsn;

/** Text size of a formatted LSN including the NUL: "0x" + 20 + 1. */
#define MCDC_LSN_STRLEN 23

/** The zero LSN (0x00000000000000000000). */
mcdc_lsn mcdc_lsn_zero(void);
/** True when @p l is zero. */
bool mcdc_lsn_is_zero(const mcdc_lsn *l);
/** Parse "0x" + 1..20 hex digits.
 *  @return 0; MCDC_EINVAL for a missing 0x, a non-hex digit, more than 20 digits or none. */
int mcdc_lsn_parse(mcdc_lsn *out, const char *s);
/** Parse the @p len bytes at @p s (no terminating NUL needed), as mcdc_lsn_parse.
 *  @return 0; MCDC_EINVAL as mcdc_lsn_parse (a NUL among the bytes is not a hex digit). */
int mcdc_lsn_parse_n(mcdc_lsn *out, const char *s, size_t len);
/** Write "0x" + 20 uppercase hex digits into @p out (MCDC_LSN_STRLEN bytes). Returns out. */
char *mcdc_lsn_format(char out[MCDC_LSN_STRLEN], const mcdc_lsn *l);
/** <0, 0, >0 as @p a is below, equal to or above @p b. */
int mcdc_lsn_cmp(const mcdc_lsn *a, const mcdc_lsn *b);
/** *out = l + 1, as sys.fn_cdc_increment_lsn. @return 0; MCDC_EINVAL past the largest LSN. */
int mcdc_lsn_increment(mcdc_lsn *out, const mcdc_lsn *l);
/** *out = l - 1, as sys.fn_cdc_decrement_lsn. @return 0; MCDC_EINVAL below zero. */
int mcdc_lsn_decrement(mcdc_lsn *out, const mcdc_lsn *l);
/** The LSN from an unsigned 80-bit value given as high 16 and low 64 bits. */
mcdc_lsn mcdc_lsn_from_u64(uint16_t hi, uint64_t lo);

#ifdef __cplusplus
}
#endif
#endif
