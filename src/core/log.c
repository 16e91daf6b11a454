/*
 * core/log.c: the process-wide log sink, the level threshold and the rate limiter.
 *
 * Guarantees: never prints by itself; formatting happens only for messages that pass
 * the threshold; a message longer than 4 KiB is cut, never overflows; a thread's context
 * (the table it works for) is its own copy.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <strings.h>

#include "mcdc/log.h"

static mcdc_log_sink sink_fn;       /* set before threads start */
static void *sink_payload;
static atomic_int threshold = MCDC_LOG_INFO;
static _Thread_local char context[256]; /* this thread's table, "" when none */

void mcdc_log_set_context(const char *ctx)
{
    snprintf(context, sizeof context, "%s", ctx ? ctx : "");
}

const char *mcdc_log_context(void)
{
    return context[0] ? context : NULL;
}

void mcdc_log_set_sink(mcdc_log_sink sink, void *payload)
{
    sink_fn = sink;
    sink_payload = payload;
}

void mcdc_log_set_level(mcdc_log_level level)
{
    atomic_store(&threshold, (int)level);
}

mcdc_log_level mcdc_log_get_level(void)
{
    return (mcdc_log_level)atomic_load(&threshold);
}

int mcdc_log_level_parse(mcdc_log_level *out, const char *s)
{
    if (s && !strcasecmp(s, "debug")) *out = MCDC_LOG_DEBUG;
    else if (s && !strcasecmp(s, "info")) *out = MCDC_LOG_INFO;
    else if (s && (!strcasecmp(s, "warn") || !strcasecmp(s, "warning"))) *out = MCDC_LOG_WARN;
    else if (s && !strcasecmp(s, "error")) *out = MCDC_LOG_ERROR;
    else
        return mcdc_error_set(MCDC_EINVAL, "bad log level '%s': expected debug, info, warn or error",
                              s ? s : "");
    return 0;
}

const char *mcdc_log_level_name(mcdc_log_level level)
{
    switch (level) {
    case MCDC_LOG_DEBUG: return "DEBUG";
    case MCDC_LOG_INFO:  return "INFO";
    case MCDC_LOG_WARN:  return "WARN";
    default:             return "ERROR";
    }
}

void mcdc_log(mcdc_log_level level, const char *logger, const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    if (!sink_fn || (int)level < atomic_load(&threshold))
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sink_fn(level, logger ? logger : "mcdc", line, sink_payload);
}

bool mcdc_ratelimit_allow(mcdc_ratelimit *rl, int64_t now_us)
{
    if (rl->last_us == 0 || now_us - rl->last_us >= rl->interval_us) {
        rl->last_us = now_us ? now_us : 1;
        rl->n_suppressed = 0;
        return true;
    }
    rl->n_suppressed++;
    return false;
}

void mcdc_ratelimit_reset(mcdc_ratelimit *rl)
{
    rl->last_us = 0;
    rl->n_suppressed = 0;
}
