/*
 * mcdc/proc.h: running a child process of our own (the demo runs the tool's commands as a
 * user types them): its standard output captured, its standard error appended to a log;
 * and this process's own memory policy (mcdc_proc_keep_freed_memory).
 *
 * Caveats:
 * - A call blocks until the child exits; the child inherits this process's environment.
 * - Not for tables or state: the log is a local file the caller names.
 */
#ifndef MCDC_PROC_H
#define MCDC_PROC_H

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Run the program @p path with @p argv (NULL-terminated, argv[0] first) and wait for it.
 *  @param[out] exit_code  its exit status; -1 when a signal ended it.
 *  @param out      its standard output is appended here (its max bounds what is kept; the
 *                  rest is read and dropped); NULL: dropped.
 *  @param err_log  a local file its standard error is appended to (created when missing);
 *                  NULL: this process's standard error.
 *  @return 0 once it ran (whatever its exit status); MCDC_EIO when it could not start. */
int mcdc_proc_run(int *exit_code, const char *path, const char *const *argv, mcdc_buf *out,
                  const char *err_log);

/** The absolute path of this process's executable (Linux: /proc/self/exe).
 *  @return 0; MCDC_EIO naming the reason. */
int mcdc_proc_self_exe(char out[MCDC_PATH_MAX]);

/** Let this process keep the memory it frees for its next batches instead of giving it back
 *  to the kernel at once: with glibc, blocks under 4 MiB come from the heap (not a mapping
 *  of their own) and up to 32 MiB free at the top of a heap is kept. Call it once, first
 *  thing in main, before any thread starts; a program embedding the library decides its
 *  own policy. Without glibc, or when $GLIBC_TUNABLES sets a malloc tunable (the user's
 *  choice wins), it does nothing. docs/decisions/0061-keep-freed-memory.md. */
void mcdc_proc_keep_freed_memory(void);

#ifdef __cplusplus
}
#endif
#endif
