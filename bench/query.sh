#!/usr/bin/env bash
# Hot local_codegraph_projects latency (p50/p99, limit 5) and memory at 1k,
# 10k and 100k catalogued projects: in process (go test -bench, through the
# real server.Frontend) and over stdio against the real `cgcat serve`. The
# catalogs repeat the query set's real metadata under varied names; the
# queries are the query set's (testdata/selection/queries.jsonl). Prints
# two tables.
#
#   bash bench/query.sh [WORK_DIR]
#
# SIZES="1000 10000" limits the sizes; BENCHTIME (default 1000x) and N
# (default 2000) set the number of timed calls.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/cgcat-bench}
SIZES=${SIZES:-"1000 10000 100000"}
BENCHTIME=${BENCHTIME:-1000x}
N=${N:-2000}
mkdir -p "$WORK" bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-gencat ./bench/cmd/gencat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $(go version | cut -d' ' -f3); $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# In process.
hundred=""
case " $SIZES " in *" 100000 "*) hundred=1 ;; esac
filter=$(echo "$SIZES" | tr ' ' '\n' | sed 's/^/n=/' | paste -sd'|')
echo "in process: CGCAT_BENCH_100K=$hundred go test ./bench/selection -run '^\$' -bench 'BenchmarkQuery/^($filter)\$/' -benchtime $BENCHTIME" >&2
out=$(CGCAT_BENCH_100K=$hundred go test ./bench/selection -run '^$' -bench "BenchmarkQuery/^($filter)\$/" -benchtime "$BENCHTIME" -timeout 2h)
echo "### In process (go test -bench BenchmarkQuery, -benchtime $BENCHTIME)"
echo
echo "| projects | measured | p50 µs | p99 µs | allocs/op | B/op | catalog load ms | catalog heap MB | process RSS MB | store KB per 1k projects |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
echo "$out" | awk '/^BenchmarkQuery\// {
  split($1, p, "/"); n = p[2]; sub("n=", "", n); m = p[3]; sub(/-[0-9]+$/, "", m)
  delete v
  for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
  printf "| %s | %s | %.0f | %.0f | %s | %s | %.0f | %.1f | %.0f | %.0f |\n", n, m, v["p50-µs"], v["p99-µs"], v["allocs/op"], v["B/op"], v["load-ms"], v["heap-MB"], v["rss-MB"], v["store-KB/1k"]
}'
echo
echo "$out" | grep -E 'p50/p99 µs by kind' | sed 's/^ *selection_test.go:[0-9]*: /- /'
echo

# Over stdio.
echo "### Over stdio (bench/cmd/mcpclient query -n $N against bin/cgcat serve)"
echo
echo "| projects | initialize ms | first tools/call ms | first discovery pass s | p50 µs | p99 µs | ping p50 µs | RSS MB | peak RSS MB |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
  bin/bench-gencat -dir "$WORK/q$n" -n "$n" >&2
  bin/bench-mcpclient query -bin bin/cgcat -config "$WORK/q$n/config.json" -n "$N" -label "$n"
done

# One call at a time on the real 5,229-project tree of bench/load.sh, pages
# of 5 and 50 (issue 14: limit 50 p50 ≤ 2 ms): with a client that does not
# decode the answers (the server and the pipe), then with mcp-go's client.
bin/bench-gencat -dir "$WORK/load" -copies 7 >&2
bin/cgcat scan --config "$WORK/load/config.json" >&2
echo
echo "### One call at a time, 5,229 real projects (bench/cmd/mcpclient raw / query -n $N)"
echo
echo "| client | limit | p50 µs | p99 µs | answer KB | serve CPU µs a call | client CPU µs a call | ping p50 µs |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for l in 5 50; do
  bin/bench-mcpclient raw -bin bin/cgcat -config "$WORK/load/config.json" -n "$N" -label raw -limit "$l"
done
for l in 5 50; do
  bin/bench-mcpclient query -bin bin/cgcat -config "$WORK/load/config.json" -n "$N" -label "mcp-go $l" -limit "$l" |
    awk -F'|' '{printf "| mcp-go | %s | %s | %s | |\n", '"$l"', $6, $7}'
done
