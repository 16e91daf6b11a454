/*
 * bench/disk.h: refuse to measure on a memory file system.
 *
 * The benchmarks time durable writes (fsync of files and directories). On tmpfs or ramfs an
 * fsync costs nothing, so a figure taken there says nothing about a real disk. Every
 * benchmark that writes calls bench_refuse_memory_fs on its working directory before the
 * first measurement and exits 2 with the reason when the directory is in memory.
 */
#ifndef MCDC_BENCH_DISK_H
#define MCDC_BENCH_DISK_H

#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/vfs.h>
#include <unistd.h>

/** Exit 2 when DIR lives on tmpfs or ramfs (or cannot be examined); return otherwise.
 *  DIR is removed first when it is the empty directory the benchmark has just made. */
static inline void bench_refuse_memory_fs(const char *prog, const char *dir)
{
    struct statfs st;
    if (statfs(dir, &st) != 0) {
        fprintf(stderr, "%s: error: cannot examine the file system of %s\n", prog, dir);
        exit(2);
    }
    if (st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC) {
        rmdir(dir); /* fails harmlessly unless DIR is empty */
        fprintf(stderr,
                "%s: error: %s is on a memory file system (tmpfs/ramfs), where fsync costs nothing\n"
                "hint: set TMPDIR to a directory on the disk to be measured\n", prog, dir);
        exit(2);
    }
}

/** The directory benchmarks work in: $TMPDIR, else /tmp. */
static inline const char *bench_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

#endif
