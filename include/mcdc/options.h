/*
 * mcdc/options.h: `key=value` option lists with case-insensitive keys and typed getters.
 *
 * A list is built from "key=value" items (one at a time, as from repeated
 * `--option key=value`, or a whole separated list) and checked against the set of keys
 * its user declares: unknown keys are kept but reported with a warning naming them (and
 * the nearest known key, when one is near).
 * Getters turn values into booleans (true/1/yes/y, false/0/no/n, any case), bounded
 * integers, durations (mcdc/time.h) and LSNs (mcdc/lsn.h); a bad value is MCDC_EINVAL
 * with a message naming the key and the value.
 *
 * Caveats:
 * - Not thread-safe while being built; read-only use from many threads is fine.
 * - A key given twice with the same value is kept once; with different values it is an
 *   error (one setting, one spelling).
 */
#ifndef MCDC_OPTIONS_H
#define MCDC_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/error.h"
#include "mcdc/lsn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_options mcdc_options;

/** Most items one list holds. */
#define MCDC_OPTIONS_MAX 256

/** The name among @p names (@p n of them) nearest to the unknown @p given (@p len bytes):
 *  a typo of it (at most a third of its length in edits, adjacent swaps counting one,
 *  between 1 and 3; case and '_' against '-' ignored) or else the only name it is a prefix
 *  of (3 characters at least). NULL when none is near. For "did you mean" hints of
 *  unknown options, keys and commands. Cost: O(len * name length) per name. */
const char *mcdc_nearest_name(const char *given, size_t len, const char *const *names, size_t n);

/** Create an empty list.
 *  @param what        names the list in messages ("stream option"); copied.
 *  @param known_keys  NULL-terminated array of the keys its user reads (any case);
 *                     borrowed, must outlive the list; NULL to accept any key.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_options_new(mcdc_options **out, const char *what, const char *const *known_keys);
/** Free a list; accepts NULL. */
void mcdc_options_free(mcdc_options *o);

/** Add one "key=value" item (split at the first '='; spaces around the key are dropped,
 *  the value is kept as written and may be empty).
 *  @return 0; MCDC_EINVAL for a missing '=' or key, or a key already given with another
 *          value; MCDC_ENOMEM past MCDC_OPTIONS_MAX items. */
int mcdc_options_add(mcdc_options *o, const char *item);
/** Add a key and a value. Same rules and returns as mcdc_options_add. */
int mcdc_options_add_pair(mcdc_options *o, const char *key, const char *value);
/** Add every item of @p text separated by @p sep (e.g. ','); empty items are skipped. */
int mcdc_options_add_list(mcdc_options *o, const char *text, char sep);

/** Log one WARN (logger "options") per key not among the known keys, naming it and the
 *  known ones. @return how many keys were unknown. */
size_t mcdc_options_warn_unknown(const mcdc_options *o);

/** Items held. */
size_t mcdc_options_count(const mcdc_options *o);
/** Item @p i (0-based) as given; borrowed until the list is freed. @return false past the end. */
bool mcdc_options_at(const mcdc_options *o, size_t i, const char **key, const char **value);
/** True when @p key (any case) was given. */
bool mcdc_options_has(const mcdc_options *o, const char *key);

/** The value of @p key, or @p def when absent. Borrowed until the list is freed. */
const char *mcdc_options_get_str(const mcdc_options *o, const char *key, const char *def);
/** @return 0 with *out set (to @p def when absent); MCDC_EINVAL for another spelling. */
int mcdc_options_get_bool(const mcdc_options *o, const char *key, bool def, bool *out);
/** A decimal integer in [min, max] (use min 1 for "positive").
 *  @return 0 with *out set (to @p def when absent); MCDC_EINVAL for text that is not an
 *          integer or one out of range (the message gives the range). */
int mcdc_options_get_int(const mcdc_options *o, const char *key, int64_t def, int64_t min, int64_t max,
                         int64_t *out);
/** A duration (250ms, 90s, 5m, 1h, 3d) in microseconds. @return 0; MCDC_EINVAL. */
int mcdc_options_get_duration(const mcdc_options *o, const char *key, int64_t def_us, int64_t *out_us);
/** An LSN (0x + 1..20 hex digits). @return 0; MCDC_EINVAL. */
int mcdc_options_get_lsn(const mcdc_options *o, const char *key, const mcdc_lsn *def, mcdc_lsn *out);

/** Parse a boolean: true/1/yes/y or false/0/no/n in any case. @return 0; MCDC_EINVAL. */
int mcdc_options_parse_bool(bool *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
