#!/usr/bin/env bash
# Scan throughput: `cgcat scan` against `find -type d` and `fdfind -u -t d`
# on the same generated tree (111,110 directories, 1,111 projects), warm
# cache, and cold cache when run as root (drop_caches). Prints a table.
#
#   bash bench/scan.sh [TREE_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-/tmp/cgcat-bench-tree}
BIN=bin/cgcat
go build -o "$BIN" ./cmd/cgcat
command -v fdfind >/dev/null || { echo "fdfind missing: apt-get install fd-find" >&2; exit 1; }

if [ ! -f "$TREE/.complete" ]; then
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
measure() { # name, command...
  local name=$1; shift
  local tf; tf=$(mktemp)
  /usr/bin/time -o "$tf" -f "%e %M" "$@" >/dev/null 2>&1
  echo "$name $(tail -1 "$tf")"; rm -f "$tf"
}
run() {
  local mode=$1
  rm -rf /tmp/cgcat-bench-data
  [ "$mode" = cold ] && { drop || { echo "| $mode | (needs root to drop caches) | | |"; return; }; }
  measure find find "$TREE" -type d
  [ "$mode" = cold ] && drop
  measure fd fdfind -u -t d . "$TREE"
  [ "$mode" = cold ] && drop
  measure cgcat "$BIN" scan --root "$TREE" --data-dir /tmp/cgcat-bench-data
}
dirs=$(find "$TREE" -type d | wc -l)
echo "tree: $TREE ($dirs directories), $(nproc) cores, $(date -u +%F)"
echo
echo "| cache | tool | seconds | dirs/s | peak RSS MiB |"
echo "|---|---|---|---|---|"
for mode in warm cold; do
  while read -r name secs kb; do
    [ -z "${secs:-}" ] && continue
    awk -v m="$mode" -v n="$name" -v s="$secs" -v k="$kb" -v d="$dirs" 'BEGIN { printf "| %s | %s | %.2f | %.0f | %.1f |\n", m, n, s, d/s, k/1024 }'
  done < <(run "$mode")
done
