/*
 * silver/scd2.h: the scd2 apply (scd2.c), called by mcdc_silver_apply for mode scd2 once
 * its inputs are checked. Internal to the silver layer.
 */
#ifndef MCDC_SILVER_SCD2_H
#define MCDC_SILVER_SCD2_H

#include "mcdc/silver.h"

/** One scd2 apply (see mcdc_silver_mode). Same contract and codes as mcdc_silver_apply. */
int mcdc_silver__apply_scd2(const mcdc_silver_apply_options *o, mcdc_silver_apply_result *out);

#endif
