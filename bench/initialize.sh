#!/usr/bin/env bash
# `initialize` latency of the real `cgcat serve`: process start → the
# initialize answer, with an empty catalog and with a 100k-project catalog
# (R11: initialize never waits for the catalog), and → the first tools/call
# answer (which does wait for the catalog to load). REPEAT (default 10)
# process starts each. Prints a table.
#
#   bash bench/initialize.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/cgcat-bench}
REPEAT=${REPEAT:-10}
BIG=${BIG:-100000}
mkdir -p "$WORK" bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-gencat ./bench/cmd/gencat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient
bin/bench-gencat -dir "$WORK/empty" -empty >&2
bin/bench-gencat -dir "$WORK/q$BIG" -n "$BIG" >&2

echo "machine: $(nproc) cores, $(uname -sr); $(go version | cut -d' ' -f3); $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg); binary $(du -m bin/cgcat | cut -f1) MB"
echo
echo "| catalog | starts | initialize ms (median) | min | max | first tools/call ms (median) | RSS MB after it |"
echo "|---|---:|---:|---:|---:|---:|---:|"
printf "| empty "
bin/bench-mcpclient init -bin bin/cgcat -config "$WORK/empty/config.json" -repeat "$REPEAT"
printf "| %s projects " "$BIG"
bin/bench-mcpclient init -bin bin/cgcat -config "$WORK/q$BIG/config.json" -repeat "$REPEAT"
