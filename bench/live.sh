#!/usr/bin/env bash
# The catalog follows the disk (issue 22): two `cgcat serve` on one data dir
# over the generated tree of bench/scan.sh (111,110 directories, 1,111
# projects), default config (refreshIntervalSeconds 600), no refresh asked:
# mkdir/mv/rm → answer in each serve (p50/p99), 100 projects at once, idle
# CPU and PSS of both serves for IDLE, watches used, and convergence after a
# storm of directories past the watcher's bound.
#
#   bash bench/live.sh [TREE_DIR]        (EVENTS=50 IDLE=60s STORM=20000)
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-/tmp/cgcat-bench-tree}
DATA=${DATA:-/tmp/cgcat-bench-live-data}
mkdir -p bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient
if [ ! -f "$TREE/.complete" ]; then
  echo "making $TREE (the tree of bench/scan.sh) ..." >&2
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
rm -rf "$DATA"
cat > "$DATA.json" <<JSON
{"version": 1, "dataDir": "$DATA", "discovery": {"roots": ["$TREE"]}, "sharing": {"roots": ["$TREE"]}}
JSON
bin/cgcat scan --config "$DATA.json" >/dev/null
echo "tree: $TREE ($(find "$TREE" -type d | wc -l) directories), $(nproc) cores, $(uname -sr), fs.inotify.max_user_watches $(cat /proc/sys/fs/inotify/max_user_watches); $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| what | who | figure | | | |"
echo "|---|---|---|---|---|---|"
bin/bench-mcpclient live -bin bin/cgcat -config "$DATA.json" -root "$TREE" -data "$DATA" \
  -events "${EVENTS:-50}" -idle "${IDLE:-60s}" -storm "${STORM:-20000}" -bulk "${BULK:-100}"
