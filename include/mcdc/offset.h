/*
 * mcdc/offset.h: a stream offset, the position after a processed source commit.
 *
 * An offset is a commit LSN and that commit's UTC time. On disk (checkpoint files,
 * facts, the control table's inputs) it is the JSON object
 *     {"lsn": "0x" + 20 uppercase hex, "commit_ts": "YYYY-MM-DDTHH:MM:SS.mmm"}
 * (architecture §5). The commit time may be "" or absent when unknown; the offset then
 * carries no time and gives no finalization verdict.
 *
 * Caveats:
 * - commit_ts is written with milliseconds; reading accepts any ISO-8601 form that
 *   mcdc_time_parse accepts (with or without a fraction, an optional zone).
 */
#ifndef MCDC_OFFSET_H
#define MCDC_OFFSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/lsn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_offset {
    mcdc_lsn lsn;           /* the last processed commit LSN */
    int64_t  commit_ts_us;  /* its commit time, UTC microseconds; valid when has_commit_ts */
    bool     has_commit_ts; /* false when the commit time is unknown ("" on disk) */
} mcdc_offset;

/** Text size enough for an offset's JSON object, with NUL. */
#define MCDC_OFFSET_JSON_MAX 96

/** Parse an offset JSON object from @p text (@p len bytes, not NUL-terminated needed).
 *  @param[out] out  the offset; untouched on failure.
 *  @return 0; MCDC_ECORRUPT when the text is not such an object, the LSN is missing or
 *          malformed, or commit_ts is neither "" nor an ISO-8601 time. */
int mcdc_offset_parse_json(mcdc_offset *out, const char *text, size_t len);

/** Write @p o as its JSON object into @p out. Returns out. */
char *mcdc_offset_format_json(char out[MCDC_OFFSET_JSON_MAX], const mcdc_offset *o);

#ifdef __cplusplus
}
#endif
#endif
