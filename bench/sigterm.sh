#!/usr/bin/env bash
# Time from SIGTERM to exit, per command, in its longest blocking phase on
# the scan benchmark's tree (bench/scan.sh makes it): `cgcat scan` walking,
# `cgcat serve` discovering in the background, `cgcat projects` on an empty
# catalog (a slice within its budget). The cases that need a fake GBrain or
# a FIFO are timed by TestSIGTERMEndsEveryCommand (go test -v -run it
# ./cmd/cgcat/). Prints one line per case, in milliseconds.
#
#   bash bench/sigterm.sh [TREE_DIR] [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-/tmp/cgcat-bench-tree}
BIN=${2:-bin/cgcat}
[ -n "${2:-}" ] || go build -o "$BIN" ./cmd/cgcat
[ -d "$TREE" ] || { echo "no tree at $TREE: run bench/scan.sh first" >&2; exit 1; }
DATA=$(mktemp -d /tmp/cgcat-sigterm-XXXX)
trap 'rm -rf "$DATA"' EXIT
now() { date +%s%N; }

# term PID: SIGTERM, then wait for the exit; prints ms.
term() {
  local pid=$1 t0 t1
  t0=$(now); kill -TERM "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.005; done
  t1=$(now); echo $(( (t1 - t0) / 1000000 ))
}

for run in 1 2 3; do
  rm -rf "$DATA"/*
  "$BIN" scan --root "$TREE" --data-dir "$DATA/d" >/dev/null 2>&1 &
  pid=$!; sleep 1.5
  echo "scan walking (run $run): $(term $pid) ms"

  rm -rf "$DATA"/*
  mkfifo "$DATA/in"
  "$BIN" serve --root "$TREE" --data-dir "$DATA/d" <"$DATA/in" >/dev/null 2>&1 &
  pid=$!
  exec 3>"$DATA/in"
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}' >&3
  sleep 1.5
  echo "serve discovering (run $run): $(term $pid) ms"
  exec 3>&-

  rm -rf "$DATA"/*
  "$BIN" projects --root "$TREE" --data-dir "$DATA/d" >/dev/null 2>&1 &
  pid=$!; sleep 0.3
  echo "projects on an empty catalog (run $run): $(term $pid) ms"
done
