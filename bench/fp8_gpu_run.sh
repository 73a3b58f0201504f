#!/usr/bin/env bash
# One call on the GPU machine for the fp8 GEMM family: its GPU tests, the device's copy
# bandwidth, then kerntuned on a fresh database and kt-bench gemm --fp8-scaling for each scaling
# mode (each shape one budgeted job whose final comparison times our best against cuBLASLt's fp8
# GEMM with the same scales, interleaved). Runs the binaries of .device/bin
# (scripts/pack-device.sh):
#   OUT=/some/dir bash bench/fp8_gpu_run.sh [TOTAL_SECONDS]
# TOTAL_SECONDS (default 540) is shared out as deadlines. Env: GPU_TESTS (gtest filter, default
# "GemmFp8*"; "-" skips the tests), SCALINGS (default "tensor block"), FP8_SHAPES (e.g.
# "4096x4096x4096:32 64x2112x7168:24"; default the fp8 shape set, each shape with its own budget),
# FP8_REPEAT (kt-bench --repeat, default 1), FP8_DTYPE (default e4m3).
# Files in $OUT (at most 8): suite.log, gpu-tests.log, copy-bandwidth.json, daemon.log and per
# scaling mode <mode>/table.md and <mode>/gemm_fp8.json. Back on the build host, file them as
# bench/results/<date>-<gpu>-gemm-fp8/ and re-render each mode with
#   build/bin/kt-bench gemm --fp8-scaling MODE --from-json DIR/MODE/gemm_fp8.json --out-dir DIR/MODE --doc
set -uo pipefail
out=${OUT:?set OUT}
bin=${KERNTUNE_BIN_DIR:-.device/bin}
total=${1:-540}
log=$out/suite.log
port=${KERNTUNE_BENCH_PORT:-18081}
say() { echo "== $* ($SECONDS s)" | tee -a "$log"; }
for exe in kerntuned kerntune gpu_tests kt-copy-bandwidth kt-bench; do
  [ -x "$bin/$exe" ] || { echo "missing $bin/$exe (scripts/pack-device.sh)" | tee -a "$log"; exit 1; }
done
say "kerntune fp8 run, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi >>"$log" 2>&1

filter=${GPU_TESTS:-GemmFp8*}
if [ "$filter" != "-" ]; then
  say "GPU tests ($filter)"
  timeout 240 "$bin/gpu_tests" --gtest_filter="$filter" >"$out/gpu-tests.log" 2>&1
  echo "gpu_tests exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.log" | tr '\n' ' ')" | tee -a "$log"
fi

say "copy bandwidth"
"$bin/kt-copy-bandwidth" >"$out/copy-bandwidth.json" 2>>"$log"

work=$(mktemp -d)
"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/kerntune.db" >"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
url=http://127.0.0.1:$port
source "$(dirname "$0")/daemon_ready.sh"
wait_for_daemon "$url" "$bin" "$out/daemon.log"
"$bin/kerntune" --server "$url" devices >>"$log" 2>&1

read -r -a scalings <<<"${SCALINGS:-tensor block}"
shapes=()
for shape in ${FP8_SHAPES:-}; do shapes+=(--shape "$shape"); done
[ ${#shapes[@]} -eq 0 ] && shapes=(--shape-set fp8)
for i in "${!scalings[@]}"; do
  mode=${scalings[$i]}
  left=$(( total - SECONDS - 10 ))
  deadline=$(( left / (${#scalings[@]} - i) ))
  say "kt-bench gemm --fp8-scaling $mode, deadline $deadline s"
  "$bin/kt-bench" gemm --fp8-scaling "$mode" --dtype "${FP8_DTYPE:-e4m3}" --server "$url" \
    --copy-json "$out/copy-bandwidth.json" "${shapes[@]}" --repeat "${FP8_REPEAT:-1}" \
    --deadline-s "$deadline" --job-timeout-s 90 --out-dir "$out/$mode" --latest "" >>"$log" 2>&1
  echo "kt-bench gemm --fp8-scaling $mode exit $?" | tee -a "$log"
  cat "$out/$mode/table.md" >>"$log" 2>/dev/null
done
say "done"
