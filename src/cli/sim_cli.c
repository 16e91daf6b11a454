/*
 * cli/sim_cli.c: option helpers shared by the sim commands (times, integers, durations,
 * output formats). Parsing only; every error is a usage error (exit 2) naming the option.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/time.h"
#include "sim_cli.h"

int mcdc_sim_cli_time(const mcdc_cli_args *a, const char *opt, int64_t *out)
{
    const char *v = mcdc_cli_get(a, opt);
    *out = MCDC_SIM_NOW;
    if (!v) return 0;
    if (mcdc_time_parse(out, v) < 0)
        return mcdc_cli_usage_error(a->cmd, "bad --%s: %s", opt, mcdc_error_last()->message);
    return 0;
}

int mcdc_sim_cli_int(const mcdc_cli_args *a, const char *opt, int64_t def, int64_t min, int64_t *out)
{
    const char *v = mcdc_cli_get(a, opt);
    *out = def;
    if (!v) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < min)
        return mcdc_cli_usage_error(a->cmd, "bad --%s '%s': expected an integer of at least %lld", opt, v, (long long)min);
    *out = x;
    return 0;
}

int mcdc_sim_cli_duration(const mcdc_cli_args *a, const char *opt, int64_t def, int64_t *out)
{
    const char *v = mcdc_cli_get(a, opt);
    *out = def;
    if (!v) return 0;
    if (mcdc_duration_parse(out, v) < 0)
        return mcdc_cli_usage_error(a->cmd, "bad --%s: %s", opt, mcdc_error_last()->message);
    return 0;
}

int mcdc_sim_cli_format(const mcdc_cli_args *a, const char *allowed, const char **out)
{
    const char *v = mcdc_cli_get(a, "format");
    *out = v ? v : "text";
    size_t n = strlen(*out);
    for (const char *p = allowed; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, *out, n)) return 0;
        p += len + (bar ? 1 : 0);
    }
    return mcdc_cli_usage_error(a->cmd, "bad --format '%s': expected %s", *out, allowed);
}
