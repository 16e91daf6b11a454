/* Shared by the delta unit tests: where the conformance test data is, and temp tables. */
#ifndef MCDC_TEST_DELTA_ENV_H
#define MCDC_TEST_DELTA_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcdc/delta.h"

/* The conformance files written by other engines: $MCDC_SRC/tests/data (see its
 * README.md), or tests/data under the working directory when MCDC_SRC is not set. */
static inline const char *testenv_data(void)
{
    static char buf[512];
    const char *src = getenv("MCDC_SRC");
    snprintf(buf, sizeof buf, "%s/tests/data", src ? src : ".");
    return buf;
}

/* A fresh empty directory under $TMPDIR; caller frees. */
static inline char *testenv_tmpdir(const char *tag)
{
    const char *t = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/mcdc-%s-XXXXXX", t ? t : "/tmp", tag);
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

/* Remove @p dir, once the background writers have nothing left to do: a checkpoint (every
 * tenth commit) or a compaction still running would write into the directory being removed
 * and log its failure into a later test's log capture. */
static inline void testenv_rmrf(const char *dir)
{
    mcdc_delta_checkpoints_wait();
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static inline void testenv_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

#endif
