/*
 * core/failpoint.c: MCDC_FAILPOINT parsing and the kill, or the stop (see mcdc/failpoint.h).
 *
 * The specification is parsed once under pthread_once into a fixed table; after that
 * `state` says whether anything is armed, so an unarmed call is one load and one
 * branch. Pass counters are atomics, so concurrent passes count exactly once each and
 * exactly one of them is the N-th.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcdc/failpoint.h"
#include "mcdc/log.h"

#define NAME_MAX_LEN 63

typedef struct point {
    char          name[NAME_MAX_LEN + 1];
    unsigned long nth;  /* kill (or stop) on this pass, 1-based */
    bool          stop; /* "=stop": SIGSTOP instead of SIGKILL, for race tests */
    atomic_ulong  hits; /* passes so far */
} point;

enum { UNPARSED = 0, DISARMED = 1, ARMED = 2 };

static atomic_int state = UNPARSED;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static point points[MCDC_FAILPOINT_MAX];
static int n_points;
static atomic_int warned;      /* the lazy path logged a malformed value */
static int parse_rc;           /* result of parsing, replayed by mcdc_failpoint_init */
static mcdc_error parse_error; /* its message, replayed on every caller's thread */

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == ':' || c == '-';
}

static int parse_spec(const char *spec)
{
    const char *p = spec;
    n_points = 0;
    while (*p) {
        const char *start = p;
        while (name_char(*p))
            p++;
        size_t len = (size_t)(p - start);
        unsigned long nth = 1;
        if (len == 0 || len > NAME_MAX_LEN)
            return mcdc_error_set(MCDC_EINVAL, "bad MCDC_FAILPOINT '%s': expected name[@N][,name[@N]...] at '%s'",
                                  spec, start);
        if (*p == '@') {
            p++;
            nth = 0;
            const char *d = p;
            while (*p >= '0' && *p <= '9' && p - d < 10)
                nth = nth * 10 + (unsigned long)(*p++ - '0');
            if (p == d || nth == 0 || nth > 1000000000ul || (*p >= '0' && *p <= '9'))
                return mcdc_error_set(MCDC_EINVAL, "bad MCDC_FAILPOINT '%s': N after '@' must be 1 to 1000000000",
                                      spec);
        }
        bool stop = false;
        if (*p == '=') {
            if (strncmp(p, "=stop", 5) != 0 || (p[5] && p[5] != ','))
                return mcdc_error_set(MCDC_EINVAL, "bad MCDC_FAILPOINT '%s': the only action after '=' is stop",
                                      spec);
            stop = true;
            p += 5;
        }
        if (*p == ',')
            p++;
        else if (*p)
            return mcdc_error_set(MCDC_EINVAL, "bad MCDC_FAILPOINT '%s': unexpected '%c'", spec, *p);
        if (n_points == MCDC_FAILPOINT_MAX)
            return mcdc_error_set(MCDC_EINVAL, "bad MCDC_FAILPOINT '%s': more than %d points", spec,
                                  MCDC_FAILPOINT_MAX);
        memcpy(points[n_points].name, start, len);
        points[n_points].name[len] = '\0';
        points[n_points].nth = nth;
        points[n_points].stop = stop;
        atomic_init(&points[n_points].hits, 0);
        n_points++;
    }
    return 0;
}

static void parse_once(void)
{
    const char *spec = getenv("MCDC_FAILPOINT");
    mcdc_error saved = *mcdc_error_last();
    parse_rc = spec && *spec ? parse_spec(spec) : 0;
    if (parse_rc < 0) {
        parse_error = *mcdc_error_last();
        n_points = 0;
    }
    /* Leave the caller's error record as it was. */
    mcdc_error_restore(&saved);
    atomic_store(&state, n_points > 0 ? ARMED : DISARMED);
}

int mcdc_failpoint_init(void)
{
    pthread_once(&once, parse_once);
    if (parse_rc < 0) {
        mcdc_error_set(parse_rc, "%s", parse_error.message);
        return mcdc_error_hint("MCDC_FAILPOINT is for crash tests; unset it or fix its value");
    }
    return 0;
}

void mcdc_failpoint(const char *name)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == DISARMED)
        return;
    if (s == UNPARSED) {
        pthread_once(&once, parse_once);
        if (parse_rc < 0 && !atomic_exchange(&warned, 1))
            mcdc_log(MCDC_LOG_ERROR, "failpoint", "%s; no failpoint is armed", parse_error.message);
        if (atomic_load(&state) != ARMED)
            return;
    }
    for (int i = 0; i < n_points; i++) {
        if (strcmp(points[i].name, name) != 0)
            continue;
        unsigned long hit = atomic_fetch_add(&points[i].hits, 1) + 1;
        if (hit == points[i].nth && points[i].stop) {
            mcdc_log(MCDC_LOG_WARN, "failpoint", "failpoint %s reached (pass %lu): stopping the process "
                     "(SIGCONT resumes it)", name, hit);
            raise(SIGSTOP);
        } else if (hit == points[i].nth) {
            mcdc_log(MCDC_LOG_WARN, "failpoint", "failpoint %s reached (pass %lu): killing the process", name, hit);
            kill(getpid(), SIGKILL);
            for (;;)
                pause();
        }
    }
}
