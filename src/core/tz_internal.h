/*
 * core/tz_internal.h: tz internals shared between tz.c, tz_windows.c and the unit tests.
 */
#ifndef MCDC_CORE_TZ_INTERNAL_H
#define MCDC_CORE_TZ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mcdc/tz.h"

/** Parse TZif bytes (@p n of them) into a zone called @p name.
 *  @return 0; MCDC_ECORRUPT naming what is wrong; MCDC_ENOMEM. */
int mcdc_tz__parse(mcdc_tz **out, const char *name, const uint8_t *data, size_t n);

/** Row @p i of the Windows table: returns the Windows name and sets *iana, or NULL past
 *  the end. */
const char *mcdc_tz__windows_row(size_t i, const char **iana);

#endif
