#!/usr/bin/env bash
# One kerntuned (SQLite) and one job per shape pinned to every one-wave config of
# bench/experiments/one_wave/<shape>.json (made by one_wave_configs.py): each variant validated and timed,
# then the job's final comparison of its top variants against cublasLt at its best, interleaved.
#   OUT=DIR bash bench/experiments/one_wave/run.sh BIN_DIR SHAPE...
# Writes OUT/one-wave.log: per shape the job's answer and `kerntune show` (every variant's time).
# CONFIG_DIR=DIR takes DIR/<shape>.json instead (e.g. bench/experiments/wide_tiles), LOG_NAME names the log.
set -uo pipefail
out=${OUT:?set OUT}
bin=${1:?usage: run.sh BIN_DIR SHAPE...}
shift
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../daemon_ready.sh"
configs=${CONFIG_DIR:-$here}
log=$out/${LOG_NAME:-one-wave}.log
work=$(mktemp -d)
port=${KERNTUNE_BENCH_PORT:-18095}
url=http://127.0.0.1:$port
echo "one-wave pinned jobs, $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$log"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$log" 2>&1
"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/kt.db" --work-dir "$work/w" >"$work/daemon.log" 2>&1 &
daemon=$!
wait_for_daemon "$url" "$bin" "$work/daemon.log"
for shape in "$@"; do
  echo "=== $shape ($SECONDS s)" >>"$log"
  timeout "${JOB_S:-240}" "$bin/kerntune" --server "$url" --json submit gemm --shape "$shape" --dtype bf16 \
    --configs "@$configs/$shape.json" --wait >"$work/job.json" 2>>"$log"
  python3 - "$work/job.json" <<'PY' >>"$log"
import json, sys
job = json.load(open(sys.argv[1]))
best = job.get("best") or {}
final = best.get("final") or {}
print("job", job["id"], job["status"], "best", best.get("template"), json.dumps(best.get("config")))
print("final: ours", final.get("median_us"), "us, baseline", final.get("baseline_median_us"), "us, ratio",
      final.get("speedup"), [final.get("speedup_low"), final.get("speedup_high")])
PY
  id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$work/job.json")
  "$bin/kerntune" --server "$url" show "$id" >>"$log" 2>&1
done
kill "$daemon"; wait "$daemon" 2>/dev/null
cp "$work/daemon.log" "$out/${LOG_NAME:-one-wave}-daemon.log"
rm -rf "$work"
