/*
 * finalize/checkpoint.c: read a stream checkpoint's last committed end offset, for the
 * finalization job that runs where no tracker can (architecture §5).
 *
 * A checkpoint in a re-snapshot generation (`stream --on-data-loss resnapshot`) is read
 * at its newest generation's directory, which its generation file names.
 *
 * Guarantees: only reads; takes no lock; uses an offsets/<N> only when commits/<N>
 * exists (a batch without its commit is replayed with exactly its recorded range, so its
 * end is not processed yet); files over 1 MiB are refused as corrupt. Names in commits/
 * that are not plain decimal numbers (temp files) are ignored.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/pipeline.h"

#define MAX_STATE_FILE (1 << 20)

/* N when @p name is a plain decimal number without sign or leading zeros (except "0"). */
static bool batch_number(const char *name, int64_t *out)
{
    int64_t v = 0;
    size_t n = strlen(name);
    if (n == 0 || n > 18 || (n > 1 && name[0] == '0'))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (name[i] < '0' || name[i] > '9')
            return false;
        v = v * 10 + (name[i] - '0');
    }
    *out = v;
    return true;
}

static int read_small(char **out, size_t *len, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: missing", path);
        return mcdc_error_set(MCDC_EIO, "%s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size > MAX_STATE_FILE) {
        close(fd);
        return mcdc_error_set(MCDC_ECORRUPT, "%s: larger than %d bytes", path, MAX_STATE_FILE);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", path);
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    *out = buf;
    *len = got;
    return 0;
}

int mcdc_finalize_checkpoint_last(mcdc_offset *out, int64_t *batch_id, const char *base)
{
    MCDC_ASSERT_ARG(out && base);
    /* the newest re-snapshot generation's checkpoint (pipeline/generation.c) */
    mcdc_generation g;
    char dir[4096], path[4096 + 64];
    int grc = mcdc_generation_read(&g, base);
    if (grc < 0)
        return grc;
    if ((grc = mcdc_generation_checkpoint(dir, sizeof dir, base, g.n)) < 0)
        return grc;
    if (snprintf(path, sizeof path, "%s/commits", dir) >= (int)sizeof path)
        return mcdc_error_set(MCDC_EINVAL, "checkpoint path too long");
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR) {
            struct stat st;
            if (stat(dir, &st) < 0)
                return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no such directory", dir);
            return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no batch committed yet", dir);
        }
        return mcdc_error_set(MCDC_EIO, "%s: %s", path, strerror(errno));
    }
    int64_t last = -1, n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (batch_number(e->d_name, &n) && n > last)
            last = n;
    closedir(d);
    if (last < 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no batch committed yet", dir);

    snprintf(path, sizeof path, "%s/offsets/%lld", dir, (long long)last);
    char *text = NULL;
    size_t len = 0;
    int rc = read_small(&text, &len, path);
    if (rc < 0)
        return rc;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    free(text);
    if (!root)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: not JSON: %s at byte %d", path, jerr.text,
                              jerr.position);
    json_t *end = json_is_object(root) ? json_object_get(root, "end") : NULL;
    if (!json_is_object(end)) {
        json_decref(root);
        return mcdc_error_set(MCDC_ECORRUPT, "%s: no \"end\" offset object", path);
    }
    char *end_text = json_dumps(end, JSON_COMPACT);
    json_decref(root);
    if (!end_text)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", path);
    mcdc_offset o;
    rc = mcdc_offset_parse_json(&o, end_text, strlen(end_text));
    free(end_text);
    if (rc < 0)
        return mcdc_error_prefix("%s: end", path);
    *out = o;
    if (batch_id)
        *batch_id = last;
    return 0;
}

int mcdc_finalize_checkpoint_check_target(const char *dir, const char *table)
{
    MCDC_ASSERT_ARG(dir && table);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/metadata", dir) >= (int)sizeof path)
        return mcdc_error_set(MCDC_EINVAL, "checkpoint path too long");
    struct stat st;
    if (stat(dir, &st) < 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "checkpoint %s: no such directory", dir);
    char *text = NULL;
    size_t len = 0;
    int rc = read_small(&text, &len, path);
    if (rc < 0)
        return rc;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    free(text);
    const char *target = json_string_value(json_object_get(root, "target"));
    if (!target)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: no \"target\": not a stream checkpoint's "
                            "metadata", path);
    else if (strcmp(target, table) != 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "checkpoint %s: belongs to target '%s', not '%s'", dir,
                            target, table);
        mcdc_error_hint("pass --table %s, or the checkpoint of %s's stream", target, table);
    }
    json_decref(root);
    return rc;
}
