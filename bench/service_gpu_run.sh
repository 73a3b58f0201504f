#!/usr/bin/env bash
# The service as a user meets it, on a GPU machine (issue 16): a user's own kernel registered over
# the API (kernel_templates/examples/wmma_gemm, a macro-tiled WMMA GEMM) and tuned, a GEMM tuned
# with the cublasLt baseline beside it, both best kernels downloaded and launched from Python
# (client/python/examples/launch_best.py, ctypes over the driver API), and the store kept so the
# history page can be shown from a real run.
#
#   bench/service_gpu_run.sh WORK_DIR [BIN_DIR] [GEMM_BUDGET]   (BIN_DIR default build/bin)
# Output: the report on stdout; WORK_DIR/kerntune.db (the store) and WORK_DIR/daemon.log.
# Back on the build host, a screenshot of the GEMM job's page comes from a daemon started on that
# store (README, "History page").
set -uo pipefail
work=${1:?usage: service_gpu_run.sh WORK_DIR [BIN_DIR] [GEMM_BUDGET]}
bin=${2:-build/bin}
gemm_budget=${3:-64}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/bench/daemon_ready.sh"
port=${KERNTUNE_BENCH_PORT:-18090}
url=http://127.0.0.1:$port
cli=("$bin/kerntune" --server "$url")
mkdir -p "$work"
say() { echo; echo "== $* ($SECONDS s)"; }

say "kerntune service run, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true

"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/kerntune.db" --allow-user-families \
  >"$work/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true' EXIT
wait_for_daemon "$url" "$bin" "$work/daemon.log"
"${cli[@]}" devices

say "register the WMMA example over the API"
"${cli[@]}" family add "$root/kernel_templates/examples/wmma_gemm"
echo "family add exit $?"

say "tune wmma_gemm 4096x4096x4096 fp16, every variant"
"${cli[@]}" submit wmma_gemm --shape 4096x4096x4096 --dtype fp16 --budget 0 --wait
echo "submit exit $?"
"${cli[@]}" best wmma_gemm --shape 4096x4096x4096 --dtype fp16
"${cli[@]}" show 1

say "tune gemm 4096x4096x4096 bf16, budget $gemm_budget"
"${cli[@]}" submit gemm --shape 4096x4096x4096 --dtype bf16 --budget "$gemm_budget" --wait
echo "submit exit $?"
"${cli[@]}" best gemm --shape 4096x4096x4096 --dtype bf16

for problem in "gemm --dtype bf16" "wmma_gemm --dtype fp16"; do
  say "launch_best.py $problem"
  # shellcheck disable=SC2086
  python3 "$root/client/python/examples/launch_best.py" $problem --shape M=4096,N=4096,K=4096 \
    --server "$url"
  echo "launch_best exit $?"
done

say "history"
"${cli[@]}" history
