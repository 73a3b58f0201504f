#!/usr/bin/env bash
# Copies what a GPU machine needs from the build folder into .device/bin, without debug info:
# the daemon, CLI, worker, GPU test binary, the benchmark program (kt-bench, kt-copy-bandwidth)
# and the bundled shared libraries. Binaries find the
# families at <exe>/../../kernel_templates, so .device/bin works from the repository root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KERNTUNE_BUILD_DIR:-$root/build}
dest=$root/.device/bin
rm -rf "$dest" && mkdir -p "$dest"
for f in kerntuned kerntune kerntune-worker gpu_tests kt-copy-bandwidth kt-bench "$@"; do
  strip --strip-debug -o "$dest/$f" "$build/bin/$f"
done
cp -P "$build"/bin/*.so* "$dest/"
du -sh "$dest"
