#!/usr/bin/env bash
# The per-call floor over stdio (issue 27's goals: a warm call on 16
# projects p50 ≤ 0.3 ms; limit 5 on 5k projects p50 ≤ 0.5 ms; limit 50 p50 ≤
# 2 ms), with a client that speaks JSON-RPC without decoding the answers
# (bench/cmd/mcpclient raw), beside a bare ping on the same pipe. Each row:
# latency p50/p99, bytes a call, the serve's and the client's CPU a call.
#
#   bash bench/floor.sh [WORK_DIR]        N (default 2000) timed calls a row
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/cgcat-bench}
N=${N:-2000}
mkdir -p "$WORK" bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-gencat ./bench/cmd/gencat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient
echo "machine: $(nproc) cores, $(uname -sr); $(go version | cut -d' ' -f3); $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
bin/bench-gencat -dir "$WORK/q16" -n 16 >&2
bin/bench-gencat -dir "$WORK/load" -copies 7 >&2
bin/cgcat scan --config "$WORK/load/config.json" >/dev/null 2>&1
echo
echo "| catalog | limit | p50 µs | p99 µs | answer KB | serve CPU µs a call | client CPU µs a call | ping p50 µs |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
bin/bench-mcpclient raw -bin bin/cgcat -config "$WORK/q16/config.json" -n "$N" -label "16 projects" -limit 5
for l in 5 50; do
  bin/bench-mcpclient raw -bin bin/cgcat -config "$WORK/load/config.json" -n "$N" -label "5,229 projects" -limit "$l"
done
