#!/usr/bin/env bash
# End-to-end tuning through the real daemon on a GPU machine: starts kerntuned from a build
# folder on a fresh database, submits bf16 GEMM tuning jobs with the kerntune CLI and waits,
# then prints what the daemon stored: the best config per shape with its time and its speedup
# over cuBLAS measured in the same job, and every variant of every job.
#
#   bench/tune_e2e.sh WORK_DIR [BIN_DIR] [BUDGET] [SHAPE ...]   (BIN_DIR default build/bin)
# Default shapes (M x N x K): 4096x4096x4096 and 64x4096x7168. BUDGET 0 = every variant that
# survives the manifest's constraints. Output: the report on stdout, WORK_DIR/kerntune.db and
# WORK_DIR/daemon.log.
set -euo pipefail
work=${1:?usage: tune_e2e.sh WORK_DIR [BIN_DIR] [BUDGET] [SHAPE ...]}
bin=${2:-build/bin}
budget=${3:-0}
shift $(( $# < 3 ? $# : 3 ))
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(m=4096,n=4096,k=4096 m=64,n=4096,k=7168)
mkdir -p "$work"
port=${KERNTUNE_BENCH_PORT:-18080}
cli=("$bin/kerntune" --server "http://127.0.0.1:$port")

echo "== kerntune end-to-end tuning, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv || true
echo "budget: $budget (0 = every variant that survives the constraints)"

"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/kerntune.db" >"$work/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true' EXIT
source "$(dirname "$0")/daemon_ready.sh"
wait_for_daemon "http://127.0.0.1:$port" "$bin" "$work/daemon.log"
"${cli[@]}" devices

for shape in "${shapes[@]}"; do
  echo; echo "== tuning gemm $shape bf16"
  start=$(date +%s)
  "${cli[@]}" submit gemm --shape "$shape" --dtype bf16 --budget "$budget" --wait
  echo "tuning wall time: $(( $(date +%s) - start )) s"
  "${cli[@]}" best gemm --shape "$shape" --dtype bf16
done
echo; echo "== history"
"${cli[@]}" history
for id in $(seq 1 ${#shapes[@]}); do
  echo; echo "== job $id"
  "${cli[@]}" show "$id"
done
