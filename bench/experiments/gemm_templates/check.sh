#!/usr/bin/env bash
# One GPU call, about 75 s on an H100 (fits a 300 s slot): the GEMM templates' correctness GPU
# tests (wgmma_tma_ws, wgmma_pingpong, wgmma_cp_async on ragged and unaligned shapes), a kerntuned
# job per shape of pinned.json with pinned configs (pinned.json: ours vs cuBLAS timed in the same job,
# printed per variant), then the GEMM timing GPU tests (ours beside cuBLAS in one worker).
#   scripts/pack-device.sh      # on the build host: slim binaries into .device/bin
#   OUT=/some/dir bash bench/experiments/gemm_templates/check.sh     # on the GPU host, from the repo root
# KT_BIN (default .device/bin) holds the binaries, KT_FAMILIES (default kernel_templates) the
# families. Files in $OUT: summary.log, gpu-correct.log, daemon.log, tune.log, tune.json,
# gpu-timing.log.
set -uo pipefail
here=$(dirname "$0")
bin=${KT_BIN:-.device/bin}
families=${KT_FAMILIES:-kernel_templates}
out=${OUT:?set OUT}
log=$out/summary.log
say() { echo "== $* ($SECONDS s)" | tee -a "$log"; }
say "start $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv >>"$log" 2>&1

say "GEMM correctness tests"
timeout 120 "$bin/gpu_tests" --gtest_filter='WgmmaOnGpu.EveryFeature*:PingpongOnGpu.EveryFeature*:CpAsyncOnGpu.EveryCopyWidth*' >"$out/gpu-correct.log" 2>&1
echo "exit $?" | tee -a "$log"
grep -E '^\[  (PASSED|FAILED) |^\[  FAILED|^\[       OK|Failure|first bad|: (full|smoke|launch|load|timing|repeat)' "$out/gpu-correct.log" | head -60 | tee -a "$log"

say "kerntuned pinned run"
work=$(mktemp -d)
"$bin/kerntuned" --listen 127.0.0.1:18099 --db "$work/kt.db" --families "$families" \
  --worker "$bin/kerntune-worker" >"$out/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 150); do "$bin/kerntune" --server http://127.0.0.1:18099 devices >/dev/null 2>&1 && break; sleep 0.2; done
left=$(( 235 - SECONDS ))
[ $left -gt 120 ] && left=120
timeout $(( left + 10 )) python3 "$here/pinned_jobs.py" http://127.0.0.1:18099 "$here/pinned.json" "$left" \
  "$out/tune.json" >"$out/tune.log" 2>&1
echo "tune exit $?" | tee -a "$log"
kill $daemon 2>/dev/null; wait $daemon 2>/dev/null
cut -c1-230 "$out/tune.log" | tee -a "$log"

left=$(( 288 - SECONDS ))
if [ $left -gt 15 ]; then
  say "timing tests ($left s)"
  timeout $left "$bin/gpu_tests" --gtest_filter='PingpongOnGpu.Large*:CpAsyncOnGpu.SmallN*:WgmmaOnGpu.Large*:SkinnyOnGpu.*' >"$out/gpu-timing.log" 2>&1
  echo "exit $?" | tee -a "$log"
  grep -E '^\[  (PASSED|FAILED) |^\[  FAILED|^\[       OK|Failure|\[ratio\]|cuBLAS' "$out/gpu-timing.log" | head -40 | tee -a "$log"
fi
say "done"
