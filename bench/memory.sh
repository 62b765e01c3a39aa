#!/usr/bin/env bash
# Memory of several `cgcat serve` processes on one 100k-project catalog
# (issue 14: ≤ 100 MB PSS each with 3 serves). Each server is started and
# asked the query set once (limit 10) and one listing, so it has touched
# what answering touches; then every server's RSS, PSS (a page shared by k
# processes counts 1/k in each), anonymous memory and the file part of its
# PSS (the mapped catalog and the binary) are read from
# /proc/PID/smaps_rollup, right away and (new servers) 30 s later: the
# server that holds the scan lease ran the first discovery pass, and the Go
# runtime returns the memory that pass used over some seconds. Linux only.
#
#   bash bench/memory.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/cgcat-bench}
SERVES=${SERVES:-3}
BIG=${BIG:-100000}
mkdir -p "$WORK" bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-gencat ./bench/cmd/gencat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient
bin/bench-gencat -dir "$WORK/q$BIG" -n "$BIG" >&2

echo "machine: $(nproc) cores, $(uname -sr); $(go version | cut -d' ' -f3); $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg); catalog $BIG projects, base file $(du -m "$WORK/q$BIG/data/views"/base-* | sort -n | tail -1 | cut -f1) MB"
echo
echo "| serves | serve | read after s | RSS MB | PSS MB | anonymous MB | PSS of files MB |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for settle in 0s 30s; do
  bin/bench-mcpclient mem -bin bin/cgcat -config "$WORK/q$BIG/config.json" -serves "$SERVES" -settle "$settle"
done
