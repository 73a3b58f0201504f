#!/usr/bin/env bash
# Records whole-space jobs for kt-replay on a GPU machine: starts kerntuned from a build folder on
# a fresh database, runs one budget-0 job (every variant that survives the constraints, in
# enumeration order) per shape, then exports each as a recorded space (kerntune export).
#
#   bench/record_spaces.sh OUT_DIR [BIN_DIR] [FAMILY:DTYPE:SHAPE ...]   (BIN_DIR default build/bin)
# Default: bf16 GEMM, large (4096^3, 8192x8192x8192 is left out: its space alone takes minutes),
# skinny (decode) and unaligned shapes. Output: OUT_DIR/spaces/<family>-<dtype>-<shape>-<gpu>-<date>.json
# (copy them to tests/data/spaces/), OUT_DIR/record.log (the CLI's output), OUT_DIR/daemon.log.
# SEARCHERS (env, e.g. "local model random"): after the first problem's whole space, one job per
# searcher with 10% of its budget and a pinned job comparing the winners interleaved
# (bench/search_gpu.py, OUT_DIR/searched.json). DEADLINE_S (env): no new problem is started after
# this many seconds (what is recorded is kept). TAR=1 packs OUT_DIR/spaces into spaces.tar.gz
# (the device tool brings back at most 8 files). STOP_AT_S (env): a whole space still running
# then is left unfinished: the daemon stops (SIGTERM) and the script exits 3; run it again with
# the same OUT_DIR (kept on the machine, not in the device tool's $OUT) and the daemon resumes
# the job where it stopped (OUT_DIR/job-<shape>.id names it), for spaces longer than one call.
set -euo pipefail
out=${1:?usage: record_spaces.sh OUT_DIR [BIN_DIR] [FAMILY:DTYPE:SHAPE ...]}
bin=${2:-build/bin}
shift $(( $# < 2 ? $# : 2 ))
problems=("$@")
[ ${#problems[@]} -gt 0 ] || problems=(
  gemm:bf16:m=4096,n=4096,k=4096 gemm:bf16:m=2048,n=2048,k=2048
  gemm:bf16:m=1,n=4096,k=7168 gemm:bf16:m=16,n=4096,k=7168 gemm:bf16:m=64,n=4096,k=7168
  gemm:bf16:m=128,n=4096,k=7168 gemm:bf16:m=256,n=7168,k=2048 gemm:bf16:m=512,n=4096,k=1536
  gemm:bf16:m=1000,n=3000,k=2000 gemm:bf16:m=4095,n=4097,k=1023)
mkdir -p "$out/spaces"
port=${KERNTUNE_BENCH_PORT:-18081}
cli=("$bin/kerntune" --server "http://127.0.0.1:$port")
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' |
      grep -o 'h100\|h200\|b200\|gb200\|a100' | head -1 || true)
gpu=${gpu:-gpu}
day=$(date -u +%Y-%m-%d)

exec > >(tee -a "$out/record.log") 2>&1
echo "== recording whole spaces, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv || true
"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$out/kerntune.db" >>"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true' EXIT
source "$(dirname "$0")/daemon_ready.sh"
wait_for_daemon "http://127.0.0.1:$port" "$bin" "$out/daemon.log"
"${cli[@]}" devices

first=1
for problem in "${problems[@]}"; do
  IFS=: read -r family dtype shape <<<"$problem"
  if [ -n "${DEADLINE_S:-}" ] && (( SECONDS > DEADLINE_S )); then
    echo "== deadline ${DEADLINE_S} s passed: $problem and the rest not recorded"; break
  fi
  echo; echo "== $family $dtype $shape: the whole space"
  start=$(date +%s)
  id_file="$out/job-$family-$dtype-$(printf '%s' "$shape" | tr ',=' '_-').id"
  if [ -s "$id_file" ]; then
    id=$(cat "$id_file")
    echo "job $id: resumed (the daemon restarts unfinished jobs)"
  else
    reply=$("${cli[@]}" --json submit "$family" --shape "$shape" --dtype "$dtype" --budget 0 \
            --search exhaustive)
    id=$(printf '%s' "$reply" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    echo "$id" >"$id_file"
  fi
  while :; do
    status=$(python3 -c 'import json,sys,urllib.request as u
j = json.load(u.urlopen(sys.argv[1])); p = j["progress"]
print(j["status"]); print("%s/%s" % (p["finished"], p["total"]), file=sys.stderr)' \
             "http://127.0.0.1:$port/v1/jobs/$id" 2>>"$out/progress.log")
    [ "$status" = queued ] || [ "$status" = running ] || break
    if [ -n "${STOP_AT_S:-}" ] && (( SECONDS > STOP_AT_S )); then
      echo "== stopped at $SECONDS s with job $id $status ($(tail -1 "$out/progress.log")):" \
           "run again with OUT_DIR $out to resume it"
      exit 3
    fi
    sleep 5
  done
  echo "job $id: $status after $(( $(date +%s) - start )) s"
  name=$(printf '%s' "$shape" | sed 's/[a-z]*=//g; s/,/x/g')
  "${cli[@]}" export "$id" -o "$out/spaces/$family-$dtype-$name-$gpu-$day.json"
  if (( first )) && [ -n "${SEARCHERS:-}" ] && [ "$status" = done ]; then
    echo; echo "== searched jobs on $family $dtype $shape: ${SEARCHERS}"
    # shellcheck disable=SC2086
    python3 "$(dirname "$0")/search_gpu.py" "http://127.0.0.1:$port" "$id" "$out/searched.json" \
      $SEARCHERS || echo "search_gpu.py failed"
  fi
  first=0
done
[ "${TAR:-0}" = 1 ] && tar -C "$out" -czf "$out/spaces.tar.gz" spaces && rm -r "$out/spaces"
echo; echo "== history"
"${cli[@]}" history --limit 100
