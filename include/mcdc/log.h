/*
 * mcdc/log.h: leveled, named logging through a sink the program installs.
 *
 * The library never prints: every message goes to the sink installed with
 * mcdc_log_set_sink() (the CLI's writes text or JSON lines to stderr). With no sink,
 * messages are dropped. Messages at a level below the threshold are dropped cheaply.
 *
 * Caveats:
 * - The sink is process-wide and may be called from any thread at once: it must be
 *   thread-safe. Install it before starting threads.
 */
#ifndef MCDC_LOG_H
#define MCDC_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MCDC_LOG_DEBUG = 10,
    MCDC_LOG_INFO  = 20,
    MCDC_LOG_WARN  = 30,
    MCDC_LOG_ERROR = 40
} mcdc_log_level;

/** A sink: receives the level, the logger name (e.g. "stream") and one formatted line. */
typedef void (*mcdc_log_sink)(mcdc_log_level level, const char *logger, const char *message,
                              void *payload);

/** Install the process-wide sink (NULL to drop everything) and its payload. */
void mcdc_log_set_sink(mcdc_log_sink sink, void *payload);
/** Messages below @p level are dropped (default MCDC_LOG_INFO). */
void mcdc_log_set_level(mcdc_log_level level);
/** The current threshold. */
mcdc_log_level mcdc_log_get_level(void);
/** Parse "debug", "info", "warn"/"warning", "error" (any case). @return 0; MCDC_EINVAL. */
int mcdc_log_level_parse(mcdc_log_level *out, const char *s);
/** "DEBUG", "INFO", "WARN" or "ERROR". */
const char *mcdc_log_level_name(mcdc_log_level level);
/** Log one message (a single line; a trailing newline is not needed). */
void mcdc_log(mcdc_log_level level, const char *logger, const char *fmt, ...) MCDC_PRINTF(3, 4);

/** Set the calling thread's context (the table it works for, e.g. "bronze.orders"; NULL
 *  or "" clears it), copied (up to 255 bytes). A sink reads it with mcdc_log_context, since
 *  it runs on the logging thread; threads a job starts take their starter's context. */
void mcdc_log_set_context(const char *ctx);
/** The calling thread's context, or NULL when none. */
const char *mcdc_log_context(void);

/** "Once, then at most every interval": a rate limiter for repeated warnings. */
typedef struct mcdc_ratelimit {
    int64_t interval_us; /* minimum time between two allowed events */
    int64_t last_us;     /* monotonic time of the last allowed event; 0 = never */
    uint64_t n_suppressed; /* events refused since the last allowed one */
} mcdc_ratelimit;

#define MCDC_RATELIMIT_INIT(interval_us) { (interval_us), 0, 0 }
/** Default for warnings: 10 minutes. */
#define MCDC_RATELIMIT_WARN_US (INT64_C(600) * 1000000)

/** True when an event at monotonic time @p now_us may be reported: the first time, and
 *  then when at least interval_us passed since the last allowed one. Not thread-safe:
 *  guard a shared limiter with the caller's lock. */
bool mcdc_ratelimit_allow(mcdc_ratelimit *rl, int64_t now_us);
/** Forget history: the next event is allowed (call after a success ends a streak). */
void mcdc_ratelimit_reset(mcdc_ratelimit *rl);

#ifdef __cplusplus
}
#endif
#endif
