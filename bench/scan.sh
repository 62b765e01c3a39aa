#!/usr/bin/env bash
# Scan throughput: `cgcat scan` (a first scan into a fresh data dir, and a
# re-scan with the data dir of the scan before) against `find -type d` and
# `fdfind -u -t d` with cgcat's default excluded names, on the same tree:
# by default a generated one (111,110 directories, 1,111 projects), or any
# tree given (e.g. /usr). Warm cache, and cold cache when run as root
# (drop_caches). Each row gives wall and CPU seconds (user + system: what a
# loaded machine does not inflate the way it inflates wall time), then
# one more run of each under `strace -f -c` gives system calls per
# directory (its own timing is not used).
#
#   bash bench/scan.sh [TREE_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
GENERATED=/tmp/cgcat-bench-tree
TREE=${1:-$GENERATED}
BIN=bin/cgcat
go build -o "$BIN" ./cmd/cgcat
command -v fdfind >/dev/null || { echo "fdfind missing: apt-get install fd-find" >&2; exit 1; }

# Only the generated tree is ever made (or remade): a tree given is used as
# it is.
if [ "$TREE" = "$GENERATED" ] && [ ! -f "$TREE/.complete" ]; then
  echo "making $TREE ..." >&2
  rm -rf "$TREE"; mkdir -p "$TREE"
  python3 - "$TREE" <<'PY'
import os, sys
root = sys.argv[1]; n = 0
def mk(d, depth):
    global n
    if depth == 5: return
    for i in range(10):
        c = os.path.join(d, f"d{i}"); os.mkdir(c); n += 1
        if n % 100 == 0:
            os.mkdir(os.path.join(c, ".codegraph"))
            open(os.path.join(c, ".codegraph", "codegraph.db"), "wb").write(b"SQLite format 3\0" + b"\0" * 200)
            open(os.path.join(c, "package.json"), "w").write('{"name":"pkg-%d","description":"project %d"}' % (n, n))
        else:
            open(os.path.join(c, "f.txt"), "w").write("x")
        mk(c, depth + 1)
mk(root, 0)
open(os.path.join(root, ".complete"), "w").write("")
PY
fi

drop() {
  if [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; then sync; echo 3 > /proc/sys/vm/drop_caches; return 0; fi
  return 1
}
DATA=$(mktemp -d /tmp/cgcat-bench-data.XXXXXX)
trap 'rm -rf "$DATA"' EXIT
EXCL=(-E .git -E node_modules -E dist -E build -E .cache)
# cmd NAME: the command line of one tool (cgcat-first starts from an empty
# data dir; cgcat-rescan uses the data dir the run before it left).
cmd() {
  case $1 in
    find) echo find "$TREE" -type d ;;
    fd) echo fdfind -u -t d "${EXCL[@]}" . "$TREE" ;;
    cgcat-first|cgcat-rescan) echo "$BIN" scan --root "$TREE" --data-dir "$DATA/d" ;;
  esac
}
measure() { # name
  local tf; tf=$(mktemp)
  [ "$1" = cgcat-first ] && rm -rf "$DATA/d"
  /usr/bin/time -o "$tf" -f "%e %U %S %M" $(cmd "$1") >/dev/null 2>&1
  echo "$1 $(tail -1 "$tf")"; rm -f "$tf"
}
syscalls() { # name: system calls of one run, all threads: all, then the
  # listing's own (open, stat, getdents, close), then the Go runtime's
  # (futex, nanosleep, sched_yield, epoll: strace's slowness inflates them)
  command -v strace >/dev/null || { echo "? ? ?"; return; }
  local tf; tf=$(mktemp)
  [ "$1" = cgcat-first ] && rm -rf "$DATA/d"
  strace -f -c -o "$tf" $(cmd "$1") >/dev/null 2>&1
  awk '$NF == "total" {all = $4}
       $NF ~ /^(openat|openat2|open|getdents64|getdents|close|fstat|newfstatat|statx|lstat|stat)$/ {ls += $4}
       $NF ~ /^(futex|nanosleep|clock_nanosleep|sched_yield|epoll_pwait|epoll_ctl|epoll_wait)$/ {rt += $4}
       END {print all, ls, rt}' "$tf"
  rm -f "$tf"
}
tools=(find fd cgcat-first cgcat-rescan)
dirs=$(find "$TREE" -type d | wc -l)
echo "tree: $TREE ($dirs directories), $(nproc) cores, $(date -u '+%F %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| cache | tool | wall s | CPU s (user + sys) | dirs/s (wall) | peak RSS MiB |"
echo "|---|---|---:|---:|---:|---:|"
for mode in warm cold; do
  if [ "$mode" = cold ] && ! drop; then echo "| cold | (needs root to drop caches) | | | | |"; continue; fi
  for t in "${tools[@]}"; do
    [ "$mode" = cold ] && drop
    read -r name secs user sys kb < <(measure "$t")
    awk -v m="$mode" -v n="$name" -v s="$secs" -v u="$user" -v y="$sys" -v k="$kb" -v d="$dirs" \
      'BEGIN { printf "| %s | %s | %.2f | %.2f (%.2f + %.2f) | %.0f | %.1f |\n", m, n, s, u+y, u, y, d/s, k/1024 }'
  done
done
echo
echo "| tool | system calls | per directory | listing (open, stat, getdents, close) per directory | Go runtime (futex, nanosleep, epoll) per directory |"
echo "|---|---:|---:|---:|---:|"
for t in "${tools[@]}"; do
  read -r n ls rt < <(syscalls "$t")
  awk -v t="$t" -v n="$n" -v l="$ls" -v r="$rt" -v d="$dirs" 'BEGIN { printf "| %s | %s | %.2f | %.2f | %.2f |\n", t, n, n/d, l/d, r/d }'
done
