#!/usr/bin/env bash
# One compile-mode job on a fresh kerntuned (SQLite in a temp folder): BIN_DIR LABEL BUDGET.
# Prints LABEL, the job's wall seconds (submit to done, from the job record), variants compiled,
# and the sum of the variants' compile_ms.
set -euo pipefail
bin=$1 label=$2 budget=${3:-48}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$bin/kerntuned" --listen 127.0.0.1:$port --db "$tmp/k.db" --families "$KT_FAMILIES" \
  --compile-threads 2 --compile-nice 0 >"$tmp/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 300); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.2; done
id=$(curl -sf -X POST -H 'Content-Type: application/json' -d "{\"family\":\"gemm\",\"shape\":{\"M\":4096,\"N\":4096,\"K\":4096},\"dtype\":\"bf16\",\"mode\":\"compile\",\"arch\":\"sm_90a\",\"budget\":$budget,\"search\":\"random\"}" http://127.0.0.1:$port/v1/jobs | jq -r .id)
start=$(date +%s.%N)
while [ "$(curl -sf http://127.0.0.1:$port/v1/jobs/$id | jq -r .status)" != done ]; do sleep 0.1; done
end=$(date +%s.%N)
curl -sf "http://127.0.0.1:$port/v1/jobs/$id/variants?limit=1000" >"$tmp/v.json"
jq -c --arg binaries "$label" --argjson wall "$(awk -v a=$start -v b=$end 'BEGIN{printf "%.2f", b-a}')" \
  --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  '{binaries: $binaries, wall_s: $wall, compiled: ([.variants[] | select(.status=="compiled")] | length),
    other: ([.variants[] | select(.status!="compiled") | .status] | group_by(.) | map({(.[0]): length}) | add),
    compile_ms_sum: ([.variants[].compile_ms] | add), load: $load}' "$tmp/v.json"
