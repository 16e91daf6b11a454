/*
 * core/error.c: the thread-local error record behind mcdc_error_set().
 *
 * Guarantees: setting never allocates and never fails; messages are cut to fit the
 * record rather than overflow it; the record is per thread, so threads never see each
 * other's errors.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mcdc/error.h"

static _Thread_local mcdc_error last_error;

int mcdc_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error.message, sizeof last_error.message, fmt, ap);
    va_end(ap);
    last_error.code = code;
    last_error.hint[0] = '\0';
    return code;
}

int mcdc_error_hint(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error.hint, sizeof last_error.hint, fmt, ap);
    va_end(ap);
    return last_error.code;
}

int mcdc_error_prefix(const char *fmt, ...)
{
    char prefix[512];
    size_t cap = sizeof last_error.message, plen, mlen;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    plen = strlen(prefix) + 2; /* "<prefix>: " */
    mlen = strnlen(last_error.message, cap - 1);
    if (plen + mlen > cap - 1)
        mlen = cap - 1 - plen; /* cut the old message, keep the prefix */
    memmove(last_error.message + plen, last_error.message, mlen);
    memcpy(last_error.message, prefix, plen - 2);
    memcpy(last_error.message + plen - 2, ": ", 2);
    last_error.message[plen + mlen] = '\0';
    return last_error.code;
}

int mcdc_error_restore(const mcdc_error *e)
{
    if (e != &last_error)
        last_error = *e;
    return last_error.code;
}

const mcdc_error *mcdc_error_last(void)
{
    return &last_error;
}

void mcdc_error_clear(void)
{
    memset(&last_error, 0, sizeof last_error);
}

const char *mcdc_strerror(int code)
{
    switch (code) {
    case MCDC_OK:           return "success";
    case MCDC_ERROR:        return "error";
    case MCDC_ENOTFOUND:    return "not found";
    case MCDC_ECONFLICT:    return "conflicting concurrent write";
    case MCDC_ECORRUPT:     return "corrupt or malformed input";
    case MCDC_EINVAL:       return "invalid argument or value";
    case MCDC_EUNSUPPORTED: return "not supported";
    case MCDC_EEXISTS:      return "already exists";
    case MCDC_ELOCKED:      return "locked by another process";
    case MCDC_EIO:          return "input/output error";
    case MCDC_EDATALOSS:    return "changes purged before they were read";
    case MCDC_ENOMEM:       return "out of memory or over a size limit";
    case MCDC_ESCHEMA:      return "schema change needs a decision";
    case MCDC_EALREADY:     return "already committed";
    case MCDC_ESOURCE:      return "source error";
    case MCDC_ETIMEOUT:     return "timed out";
    case MCDC_EPERM:        return "permission denied";
    default:                return "unknown error code";
    }
}
