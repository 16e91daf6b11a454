# bench/lib.sh: what the benchmark scripts share. Source it; it defines:
#   bench_refuse_memory_fs DIR   exit 2 when DIR is on tmpfs or ramfs, where an fsync costs
#                                nothing and a figure says nothing about a real disk
#                                (set TMPDIR to a directory on the disk to be measured).
bench_refuse_memory_fs() {
  local fs
  fs=$(stat -f -c %T "$1") || { echo "$(basename "$0"): error: cannot examine the file system of $1" >&2; exit 2; }
  case $fs in
    tmpfs|ramfs)
      echo "$(basename "$0"): error: $1 is on a memory file system ($fs), where fsync costs nothing" >&2
      echo "hint: set TMPDIR to a directory on the disk to be measured" >&2
      exit 2 ;;
  esac
}
