/*
 * delta/checkpoint_read.c: read a checkpoint's actions: classic single-file and
 * multi-part Parquet checkpoints, V2 checkpoints (JSON or Parquet) and their sidecars.
 *
 * Every row of a Parquet checkpoint becomes one action (checkpoint_parquet.c: decoded from
 * its leaf columns, or for layouts that decoder does not take rendered as JSON and parsed
 * as commit lines are; both give the same actions). A V2 checkpoint's sidecar actions name Parquet
 * files in _delta_log/_sidecars/ that hold its add and remove actions; they are read
 * after the checkpoint itself. Errors name the checkpoint file.
 */
#include <stdlib.h>
#include <string.h>

#include "delta/internal.h"

typedef struct cp_ctx {
    mcdc_delta__action_cb cb;
    void                 *payload;
    char                **sidecars; /* sidecar paths collected from the checkpoint */
    size_t                n_sidecars;
} cp_ctx;

static int collect(mcdc_delta_action *a, void *payload)
{
    cp_ctx *c = payload;
    if (a->kind == MCDC_DELTA_ACTION_SIDECAR) {
        char **s = realloc(c->sidecars, (c->n_sidecars + 1) * sizeof *s);
        if (!s)
            return mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
        c->sidecars = s;
        s[c->n_sidecars++] = strdup(a->u.sidecar.path);
        if (!s[c->n_sidecars - 1])
            return mcdc_error_set(MCDC_ENOMEM, "checkpoint: out of memory");
        return 0;
    }
    if (a->kind == MCDC_DELTA_ACTION_COMMIT_INFO || a->kind == MCDC_DELTA_ACTION_CDC)
        return 0; /* never state, even if a writer put them there */
    return c->cb(a, c->payload);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int read_one(const char *path, cp_ctx *c)
{
    if (ends_with(path, ".json"))
        return mcdc_delta__read_json_actions(path, collect, c);
    return mcdc_delta__read_parquet_actions(path, collect, c);
}

int mcdc_delta__read_checkpoint(const char *table, const mcdc_delta__cp_choice *cp,
                                mcdc_delta__action_cb cb, void *payload)
{
    cp_ctx c = { cb, payload, NULL, 0 };
    char *logdir = mcdc_delta__join(table, "_delta_log");
    int rc = logdir ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < cp->n_files; i++) {
        char *p = mcdc_delta__join(logdir, cp->files[i]->name);
        rc = p ? read_one(p, &c) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
        free(p);
    }
    for (size_t i = 0; rc == 0 && i < c.n_sidecars; i++) {
        const char *sp = c.sidecars[i];
        char *p;
        if (sp[0] == '/')
            p = strdup(sp);
        else if (strncmp(sp, "file:", 5) == 0) {
            const char *q = sp + 5;
            while (q[0] == '/' && q[1] == '/')
                q++;
            p = strdup(q);
        } else {
            char *sd = mcdc_delta__join(logdir, "_sidecars");
            p = sd ? mcdc_delta__join(sd, sp) : NULL;
            free(sd);
        }
        if (!p) {
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            break;
        }
        c.sidecars[i] = NULL;
        free((char *)sp);
        /* sidecars hold only file actions; a nested sidecar would be corrupt */
        size_t before = c.n_sidecars;
        rc = read_one(p, &c);
        if (rc == 0 && c.n_sidecars != before)
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: a sidecar names another sidecar", p);
        free(p);
    }
    for (size_t i = 0; i < c.n_sidecars; i++)
        free(c.sidecars[i]);
    free(c.sidecars);
    free(logdir);
    return rc;
}
