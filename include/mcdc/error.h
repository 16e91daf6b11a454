/*
 * mcdc/error.h: error codes and the per-thread error record.
 *
 * Every mcdc function that can fail returns an int: 0 on success, a negative
 * mcdc_error_code otherwise. The layer that detects a failure records a one-line
 * message (what failed and why) and, where it knows one, a hint for the fix, in a
 * thread-local record; callers pass the code up unchanged. The CLI prints the record
 * as "mssql-cdc: error: <message>" and the hint on the next line.
 *
 * Caveats:
 * - The record is per thread: read it on the thread that got the error.
 * - Codes are append-only; a number never changes meaning.
 */
#ifndef MCDC_ERROR_H
#define MCDC_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MCDC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MCDC_PRINTF(a, b)
#endif

/** Result codes. Append only, never renumber. */
typedef enum {
    MCDC_OK           =   0,
    MCDC_ERROR        =  -1, /* anything else; see mcdc_error_last() */
    MCDC_ENOTFOUND    =  -2, /* table, file, row or version absent */
    MCDC_ECONFLICT    =  -3, /* another writer took this Delta version and it conflicts */
    MCDC_ECORRUPT     =  -4, /* input malformed; nothing was changed */
    MCDC_EINVAL       =  -5, /* bad argument, option or value from the user */
    MCDC_EUNSUPPORTED =  -6, /* a feature this build does not implement */
    MCDC_EEXISTS      =  -7, /* the thing to create is already there */
    MCDC_ELOCKED      =  -8, /* a lock is held by another process */
    MCDC_EIO          =  -9, /* the operating system refused a read, write or sync */
    MCDC_EDATALOSS    = -10, /* changes were purged before they were read */
    MCDC_ENOMEM       = -11, /* out of memory, or a size over its cap */
    MCDC_ESCHEMA      = -12, /* a schema change that needs a decision */
    MCDC_EALREADY     = -13, /* an idempotent write that was already committed */
    MCDC_ESOURCE      = -14, /* the source (SQL Server or the simulator) refused */
    MCDC_ETIMEOUT     = -15, /* a bounded retry ran out of time */
    MCDC_EPERM        = -16  /* a login or permission refused */
} mcdc_error_code;

/** The last error recorded on this thread. */
typedef struct mcdc_error {
    int  code;         /* the mcdc_error_code, 0 when clear */
    char message[1024]; /* one line: "<what>: <why>", no trailing newline */
    char hint[512];     /* how to fix it, or "" */
} mcdc_error;

/** Record an error on this thread and return @p code, so that `return mcdc_error_set(...)`
 *  reads naturally. Clears the hint. */
int mcdc_error_set(int code, const char *fmt, ...) MCDC_PRINTF(2, 3);

/** Attach a hint (how to fix it) to the current error. Returns the current code. */
int mcdc_error_hint(const char *fmt, ...) MCDC_PRINTF(1, 2);

/** Prefix the current message with "<prefix>: " (for a layer that adds the file name). */
int mcdc_error_prefix(const char *fmt, ...) MCDC_PRINTF(1, 2);

/** The record of the last error on this thread; never NULL; owned by the library and
 *  valid until the next mcdc call on this thread. */
const mcdc_error *mcdc_error_last(void);

/** Make @p e (a copy of an earlier mcdc_error_last(), taken before cleanup that may fail
 *  in its turn) this thread's error again, hint included. Returns its code. */
int mcdc_error_restore(const mcdc_error *e);

/** Forget the last error on this thread. */
void mcdc_error_clear(void);

/** A sentence for a code (static string, never NULL). */
const char *mcdc_strerror(int code);

/** Caller bugs: in debug builds abort, in release return MCDC_EINVAL naming the expression. */
#ifdef NDEBUG
#define MCDC_ASSERT_ARG(expr) \
    do { if (!(expr)) return mcdc_error_set(MCDC_EINVAL, "invalid argument: %s", #expr); } while (0)
#else
#include <assert.h>
#define MCDC_ASSERT_ARG(expr) assert(expr)
#endif

#ifdef __cplusplus
}
#endif
#endif
