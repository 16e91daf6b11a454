/*
 * core/proc.c: a child process of our own (see mcdc/proc.h): posix_spawn with its standard
 * output on a pipe read to its end and its standard error appended to a log file, then
 * waitpid. Never leaves a zombie: every child started is waited for.
 */
#include "mcdc/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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
