/*
 * core/proc.c: a child process of our own (see mcdc/proc.h): posix_spawn with its standard
 * output on a pipe read to its end and its standard error appended to a log file, then
 * waitpid. Never leaves a zombie: every child started is waited for. And the process's
 * malloc policy (mcdc_proc_keep_freed_memory).
 */
#include "mcdc/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

extern char **environ;

/* Why (ADR 0061): a batch allocates and frees the same few megabytes each time (row pipe
 * chunks of ~1.5 MB, Parquet column and page buffers, snappy's working memory on each
 * page). glibc's defaults map a block above 128 KiB on its own and trim the heap once
 * 128 KiB is free at its top, so every batch of a service faulted those pages in again
 * and the kernel zeroed each: in a round of 50 tables, ~30,000 page faults and a tenth of
 * the CPU; with this policy ~8,000. A long batch's buffers above 4 MiB still get their own
 * mapping, so what is kept is bounded by 32 MiB a heap. */
void mcdc_proc_keep_freed_memory(void)
{
#ifdef __GLIBC__
    const char *t = getenv("GLIBC_TUNABLES");
    if (t && strstr(t, "glibc.malloc."))
        return;
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
#endif
}

int mcdc_proc_run(int *exit_code, const char *path, const char *const *argv, mcdc_buf *out,
                  const char *err_log)
{
    MCDC_ASSERT_ARG(exit_code && path && argv && argv[0]);
    *exit_code = -1;
    int pipefd[2], status = 0;
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return mcdc_error_set(MCDC_EIO, "%s: pipe: %s", path, strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
    if (err_log)
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, path, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        return mcdc_error_set(MCDC_EIO, "%s: cannot start it: %s", path, strerror(rc));
    }
    char chunk[4096];
    ssize_t k;
    while ((k = read(pipefd[0], chunk, sizeof chunk)) > 0 || (k < 0 && errno == EINTR))
        if (k > 0 && out && mcdc_buf_put(out, chunk, (size_t)k) < 0)
            mcdc_error_clear(); /* over its max: the rest is dropped */
    close(pipefd[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return 0;
}

int mcdc_proc_self_exe(char out[MCDC_PATH_MAX])
{
    ssize_t k = readlink("/proc/self/exe", out, MCDC_PATH_MAX - 1);
    if (k <= 0)
        return mcdc_error_set(MCDC_EIO, "cannot find this program's executable: %s", strerror(errno));
    out[k] = '\0';
    return 0;
}
