#!/usr/bin/env bash
# First scans taken in turn (A B C A B C …) so that drift on a shared
# machine hits every tool alike: each cgcat binary given scans TREE into a
# fresh data dir, then fd lists it (`fdfind -u -t d` with cgcat's default
# excluded names). MODE: warm; cold (drop_caches before every run: needs
# root); rescan (cgcat keeps its data dir: every run after a first one is a
# re-scan). One row per run: tool, wall s, CPU s (user + system), user,
# system, load average.
#
#   bash bench/scan-paired.sh MODE TREE ROUNDS BIN...
#   e.g. bash bench/scan-paired.sh warm /tmp/cgcat-bench-tree 9 /tmp/main-cgcat bin/cgcat
set -euo pipefail
MODE=$1 TREE=$2 N=$3
shift 3
command -v fdfind >/dev/null || { echo "fdfind missing: apt-get install fd-find" >&2; exit 1; }
DATA=$(mktemp -d /tmp/cgcat-paired.XXXXXX)
trap 'rm -rf "$DATA"' EXIT
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
run() { # name command...
  local name=$1 tf; shift
  tf=$(mktemp)
  [ "$MODE" = cold ] && drop
  /usr/bin/time -o "$tf" -f "%e %U %S" "$@" >/dev/null 2>&1
  read -r e u s <"$tf"; rm -f "$tf"
  awk -v n="$name" -v e="$e" -v u="$u" -v s="$s" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "%s %.2f %.2f %.2f %.2f %s\n", n, e, u+s, u, s, l }'
}
scan() { # index binary
  [ "$MODE" = rescan ] || rm -rf "$DATA/$1"
  run "$2" "$2" scan --root "$TREE" --data-dir "$DATA/$1"
}
if [ "$MODE" = rescan ]; then i=0; for b in "$@"; do scan $i "$b" >/dev/null; i=$((i + 1)); done; fi
for _ in $(seq "$N"); do
  i=0
  for b in "$@"; do scan $i "$b"; i=$((i + 1)); done
  run fd fdfind -u -t d -E .git -E node_modules -E dist -E build -E .cache . "$TREE"
done
