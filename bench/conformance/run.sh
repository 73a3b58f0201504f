#!/usr/bin/env bash
# The conformance sweep of the user paths (bench/conformance/README.md): starts kerntuned from
# .device/bin (else build/bin) on loopback with a fresh store and a token, registers the example
# family, runs the part's cases through the CLI and HTTP, checks every answer on the GPU, and
# writes results.jsonl, results.md, run.json, daemon.log and checker.log to --out (default $OUT).
#
#   bench/conformance/run.sh --part 1/2 --seed N        # one 10-minute GPU call per part
#   bench/conformance/run.sh --dry-run --seed N         # the cases, without a daemon or a GPU
#   bench/conformance/run.sh --compile-only --arch sm_90a --limit 8 --max-budget 2   # no GPU
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PYTHONPATH="$root/client/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
exec python3 "$root/bench/conformance/sweep.py" "$@"
