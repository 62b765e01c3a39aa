#!/usr/bin/env bash
# Discovery latency: a new project (.codegraph/codegraph.db) appears under a
# discovery root → it is in a local_codegraph_projects answer of a running
# `cgcat serve`. Measured on real trees of the query-set catalog (scanned
# first with `cgcat scan`), one copy (747 projects) and COPIES copies:
#   - refresh: true in the first call after the project appeared (an agent
#     that did not find it asks for a refresh, then asks again);
#   - the periodic refresh alone, with the shortest interval the config
#     allows (5 s), the project appearing at a random moment of the cycle.
# With the default interval (600 s) the periodic case is the same cycle
# stretched: about interval/2 + one round on average, interval + one round
# at worst; it is reported as that expectation, not waited for.
#
#   bash bench/discovery.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/cgcat-bench}
COPIES=${COPIES:-14}
TRIALS=${TRIALS:-5}
mkdir -p "$WORK" bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-gencat ./bench/cmd/gencat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient

echo "machine: $(nproc) cores, $(uname -sr); $(go version | cut -d' ' -f3); $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
rows=()
for c in 1 "$COPIES"; do
  d="$WORK/tree$c"
  bin/bench-gencat -dir "$d" -copies "$c" >&2
  sed 's/"refreshIntervalSeconds": [0-9]*/"refreshIntervalSeconds": 5/' "$d/config.json" > "$d/config-5s.json"
  # Fill the catalog first (the server would otherwise spend its first round on it).
  scan=$(bin/cgcat scan --config "$d/config.json" --json)
  projects=$(echo "$scan" | awk -F': ' '/"projects"/ {gsub(",", "", $2); print $2}')
  dirs=$(find "$d/code" -type d | wc -l)
  # One more pass, as the server's rounds are: nothing new, every project re-read.
  t0=$(date +%s.%N); bin/cgcat scan --config "$d/config.json" >/dev/null; t1=$(date +%s.%N)
  round=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  echo "tree $d: $projects projects, $dirs directories; a full pass over it (cgcat scan, warm) ${round}s" >&2
  for mode in refresh interval; do
    cfg="$d/config.json"; what="refresh: true (interval 600 s)"
    [ "$mode" = interval ] && { cfg="$d/config-5s.json"; what="periodic refresh, interval 5 s"; }
    r=$(bin/bench-mcpclient discovery -bin bin/cgcat -config "$cfg" -root "$d/code" -mode "$mode" -trials "$TRIALS")
    rows+=("$(echo "$r" | awk -F'|' -v p="$projects" -v w="$what" -v s="$round" '{ printf "| %s | %s | %s | %s | %s | %s | %s |", p, s, w, $3, $4, $5, $6 }')")
  done
  rows+=("| $projects | $round | periodic refresh, default interval 600 s (expected, not measured) | | ≈ $(awk -v s="$round" 'BEGIN { printf "%.0f", 300 + s }') | ≈ $round | ≈ $(awk -v s="$round" 'BEGIN { printf "%.0f", 600 + s }') |")
done
echo "| projects | full pass s | how | trials | mean s | min s | max s |"
echo "|---:|---:|---|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
