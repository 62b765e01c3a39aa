#!/usr/bin/env bash
# Bytes and tokens per answer: what a model is handed for each common kind
# of call (a query at limit 1/5/10/50, a listing of 50, a resolve, and the
# tool list every session starts with), on the 5,229-project tree of
# bench/load.sh. Tokens are counted with the o200k_base encoding (npm
# gpt-tokenizer, installed into a temporary folder) when node and npm are
# there: the text content, the structured content (as JSON), and the whole
# line. Prints two tables.
#
#   bash bench/answers.sh [WORK_DIR] [QUERY]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/cgcat-bench}
QUERY=${2:-react}
mkdir -p "$WORK" bin
go build -o bin/cgcat ./cmd/cgcat
go build -o bin/bench-gencat ./bench/cmd/gencat
go build -o bin/bench-mcpclient ./bench/cmd/mcpclient
bin/bench-gencat -dir "$WORK/load" -copies 7 >&2
bin/cgcat scan --config "$WORK/load/config.json" >&2
OUT=$(mktemp -d /tmp/cgcat-answers.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
echo "$(date -u '+%F %H:%M UTC'), query \"$QUERY\""
echo
bin/bench-mcpclient answers -bin bin/cgcat -config "$WORK/load/config.json" -out "$OUT/answers" -query "$QUERY"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "(no node/npm: tokens not counted)"
  exit 0
fi
(cd "$OUT" && npm install --silent --no-audit --no-fund gpt-tokenizer@4.0.0 >/dev/null 2>&1) || { echo "(gpt-tokenizer not installed: tokens not counted)"; exit 0; }
cat > "$OUT/count.mjs" <<'JS'
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import fs from 'fs';
import path from 'path';
const dir = process.argv[2];
console.log('| answer | text tokens | structured tokens | line tokens |');
console.log('|---|---:|---:|---:|');
for (const f of fs.readdirSync(dir).sort()) {
  const line = fs.readFileSync(path.join(dir, f), 'utf8').trim();
  const r = JSON.parse(line).result || {};
  const text = (r.content || []).map(c => c.text || '').join('');
  const sc = r.structuredContent ? JSON.stringify(r.structuredContent) : '';
  console.log(`| ${f.replace(/\.json$/, '')} | ${encode(text).length} | ${encode(sc).length} | ${encode(line).length} |`);
}
JS
echo
node "$OUT/count.mjs" "$OUT/answers"
