/*
 * core/offset.c: the JSON form of a stream offset (mcdc/offset.h, architecture §5).
 *
 * Guarantees: parsing never reads past len and refuses anything but an object with a
 * valid "lsn"; a missing, null or empty "commit_ts" reads as an unknown commit time.
 * Formatting always writes milliseconds, so string order of commit times is time order.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mcdc/error.h"
#include "mcdc/offset.h"
#include "mcdc/time.h"

int mcdc_offset_parse_json(mcdc_offset *out, const char *text, size_t len)
{
    json_error_t jerr;
    mcdc_offset o;
    int rc = 0;
    memset(&o, 0, sizeof o);
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return mcdc_error_set(MCDC_ECORRUPT, "offset: not JSON: %s at byte %d", jerr.text,
                              jerr.position);
    if (!json_is_object(root)) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "offset: expected a JSON object");
        goto done;
    }
    const char *lsn = json_string_value(json_object_get(root, "lsn"));
    if (!lsn) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "offset: \"lsn\" is missing or not a string");
        goto done;
    }
    if (mcdc_lsn_parse(&o.lsn, lsn) < 0) {
        char why[512];
        snprintf(why, sizeof why, "%.500s", mcdc_error_last()->message);
        rc = mcdc_error_set(MCDC_ECORRUPT, "offset: lsn '%.40s': %s", lsn, why);
        goto done;
    }
    json_t *ts = json_object_get(root, "commit_ts");
    if (ts && !json_is_null(ts)) {
        const char *s = json_string_value(ts);
        if (!s) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "offset: \"commit_ts\" is not a string");
            goto done;
        }
        if (*s) {
            if (mcdc_time_parse(&o.commit_ts_us, s) < 0) {
                char why[512];
                snprintf(why, sizeof why, "%.500s", mcdc_error_last()->message);
                rc = mcdc_error_set(MCDC_ECORRUPT, "offset: commit_ts '%.64s': %s", s, why);
                goto done;
            }
            o.has_commit_ts = true;
        }
    }
    *out = o;
done:
    json_decref(root);
    return rc;
}

char *mcdc_offset_format_json(char out[MCDC_OFFSET_JSON_MAX], const mcdc_offset *o)
{
    char lsn[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN] = "";
    mcdc_lsn_format(lsn, &o->lsn);
    if (o->has_commit_ts)
        mcdc_time_format(ts, o->commit_ts_us, 3, false);
    snprintf(out, MCDC_OFFSET_JSON_MAX, "{\"lsn\": \"%s\", \"commit_ts\": \"%s\"}", lsn, ts);
    return out;
}
