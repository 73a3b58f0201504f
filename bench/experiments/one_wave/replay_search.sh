#!/usr/bin/env bash
# The replay figures of bench/results/2026-11-27-one-wave-search/: every searcher on the committed spaces, without and with what
# a job now tells its searcher (each candidate's grid, memory-bound shapes: --families). CPU only.
# Usage (from the repository root, kt-replay built in build/):
#   bench/experiments/one_wave/replay_search.sh [OUT_DIR]
set -euo pipefail
out=${1:-bench/results/2026-11-27-one-wave-search}
replay=build/bin/kt-replay
spaces=tests/data/spaces
for seeds in 20 100; do
  "$replay" "$spaces" --seeds "$seeds" --budget 48 --json "$out/before-$seeds.json" > "$out/before-$seeds.txt"
  "$replay" "$spaces" --seeds "$seeds" --budget 48 --families kernel_templates \
    --json "$out/after-$seeds.json" > "$out/after-$seeds.txt"
done
# Warm-started learners (as jobs near a tuned shape are).
"$replay" "$spaces" --seeds 20 --budget 48 --warm-start --json "$out/before-warm-20.json" \
  > "$out/before-warm-20.txt"
"$replay" "$spaces" --seeds 20 --budget 48 --warm-start --families kernel_templates \
  --json "$out/after-warm-20.json" > "$out/after-warm-20.txt"
# Why only memory-bound shapes: the preference applied to every space.
"$replay" "$spaces" --seeds 20 --budget 48 --families kernel_templates --memory-bound yes \
  --json "$out/every-space-20.json" > "$out/every-space-20.txt"
