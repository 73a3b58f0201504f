#!/usr/bin/env bash
# One call on the GPU machine: the GPU test suite, then end-to-end tuning through the daemon,
# from the slim binaries scripts/pack-device.sh puts in .device/bin. Logs go to $OUT:
#   bash bench/device_suite.sh [BUDGET] [SHAPE ...]
set -uo pipefail
out=${OUT:?set OUT}
bin=${KERNTUNE_BIN_DIR:-.device/bin}
budget=${1:-0}
shift $(( $# < 1 ? $# : 1 ))
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
"$bin/gpu_tests" 2>&1 | tee "$out/gpu-tests.log"
work=$(mktemp -d)
bench/tune_e2e.sh "$work" "$bin" "$budget" "$@" 2>&1 | tee "$out/e2e-report.txt"
cp "$work/daemon.log" "$out/e2e-daemon.log"
cp "$work/kerntune.db" "$out/kerntune.db" 2>/dev/null || true
