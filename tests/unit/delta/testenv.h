/* Shared by the delta unit tests: where the shared test data is, and temp tables. */
#ifndef MCDC_TEST_DELTA_ENV_H
#define MCDC_TEST_DELTA_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* $MCDC_SHARED when it holds testdata/, else the shared folder beside the worktrees
 * ($MCDC_SRC/../../shared for a worktree under <root>/wt/NAME). */
static inline const char *testenv_shared(void)
{
    static char buf[1024];
    struct stat st;
    const char *s = getenv("MCDC_SHARED");
    if (s) {
        snprintf(buf, sizeof buf, "%s/testdata", s);
        if (stat(buf, &st) == 0)
            return s;
    }
    const char *src = getenv("MCDC_SRC");
    snprintf(buf, sizeof buf, "%s/../../shared/testdata", src ? src : ".");
    if (stat(buf, &st) == 0) {
        buf[strlen(buf) - strlen("/testdata")] = '\0';
        return buf;
    }
    return s ? s : "../shared";
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

static inline void testenv_rmrf(const char *dir)
{
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
