/*
 * delta/checkpoint_parquet.c: Parquet checkpoint parts and sidecars as actions.
 *
 * Until the nested Parquet reader is part of the build, a Parquet checkpoint is reported
 * as unreadable (MCDC_EUNSUPPORTED); the snapshot then replays the JSON commits instead
 * when they are all still in the log (snapshot.c, invariant S2).
 */
#include "delta/internal.h"

int mcdc_delta__read_parquet_actions(const char *path, mcdc_delta__action_cb cb, void *payload)
{
    (void)cb;
    (void)payload;
    return mcdc_error_set(MCDC_EUNSUPPORTED, "%s: Parquet checkpoints cannot be read by this build",
                          path);
}
