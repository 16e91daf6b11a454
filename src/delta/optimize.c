/*
 * delta/optimize.c: `table optimize`: rewrite the small files of each partition into
 * files of the target size, in one commit of removes and adds with dataChange=false
 * (readers of the change feed see no change; the rows are the same, minus rows already
 * deleted by deletion vectors).
 *
 * A file is small when it is under half the target size or carries a deletion vector.
 * Small files are combined in commit order (delta/compact.h), in groups of at most the
 * target size of input, so a log-like table keeps files with tight, disjoint ranges; a
 * group of one file is rewritten only to drop its deletion vector. Range tags (silver's key
 * range, delta/compact.h) are combined into the new file's, so pruning by key survives. The commit fails with
 * MCDC_ECONFLICT when another writer removed one of the files meanwhile; the files written
 * are then removed (nothing references them). The finalization control table is refused:
 * it keeps one file per row (docs/decisions/0002-control-table-one-file-per-row.md).
 */
#include <stdlib.h>
#include <string.h>

#include "delta/compact.h"
#include "delta/internal.h"

int mcdc_delta_optimize(const char *path, int64_t target_bytes, mcdc_delta_optimize_result *result)
{
    mcdc_delta_optimize_result res = { -1, 0, 0, 0 };
    if (result)
        *result = res;
    if (target_bytes <= 0)
        target_bytes = MCDC_DELTA_AC_TARGET_BYTES;
    mcdc_delta_snapshot *snap;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc < 0)
        return rc;
    res.version = snap->version;
    if (strcmp(mcdc_delta_snapshot_config(snap, "mcdc.kind", ""), "control") == 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s: a finalization control table keeps one data file "
                            "per row, so advances of different tables never conflict; it is "
                            "not compacted", path);
        mcdc_error_hint("nothing to do: the control table holds one small file per CDC-fed table "
                        "(docs/decisions/0002-control-table-one-file-per-row.md)");
        mcdc_delta_snapshot_free(snap);
        return rc;
    }
    const mcdc_delta_file **all = mcdc_delta__compact_inputs(snap, NULL, 0);
    mcdc_delta__compact_plan p;
    memset(&p, 0, sizeof p);
    rc = all ? 0 : MCDC_ENOMEM;
    if (rc == 0)
        rc = mcdc_delta__compact_plan_all(&p, all, snap->n_files, target_bytes,
                                          mcdc_delta__dv_fold_share(snap));
    if (rc == 0)
        rc = mcdc_delta__compact_run(snap, &p, false, 0, &res);
    mcdc_delta__compact_plan_free(&p);
    free(all);
    mcdc_delta_snapshot_free(snap);
    if (result)
        *result = res;
    return rc;
}
