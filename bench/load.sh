#!/usr/bin/env bash
# Issue 14's load scenario: 4 `cgcat serve` processes on one data dir, a
# `cgcat scan` re-walking a real 5,000-project tree meanwhile, and 500
# concurrent tool calls spread over the servers (55 % one/two-word queries
# with limit 5/10/50, 15 % listings, 10 % with workspacePath — a fifth of
# those with refresh: true —, 20 % resolves). RUNS runs (default 5), one
# table row each, first with the mcp-go client (as a host would, but its
# decoding of the answers shares the 2 cores with the servers), then with
# a client that reads each answer line without decoding it (-raw: what the
# servers and the pipes allow). Each run also says on stderr how much CPU
# the servers, the scan and the client used during the burst.
#
#   bash bench/load.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/cgcat-bench}
RUNS=${RUNS:-5}
mkdir -p "$WORK" bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-gencat ./bench/cmd/gencat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient
# 7 copies of the 747-project query set: 5,229 real project directories.
bin/bench-gencat -dir "$WORK/load" -copies 7 >&2
bin/cgcat scan --config "$WORK/load/config.json" >&2

echo "machine: $(nproc) cores, $(uname -sr); $(go version | cut -d' ' -f3); $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| client | serves | calls | scan running | errors | p50 ms | p99 ms | max ms | wall ms | queue full |"
echo "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"
for client in mcp-go raw; do
  flag=""
  [ "$client" = raw ] && flag=-raw
  for i in $(seq 1 "$RUNS"); do
    printf "| %s " "$client"
    bin/bench-mcpclient load $flag -bin bin/cgcat -config "$WORK/load/config.json" -seed "$i"
  done
done
