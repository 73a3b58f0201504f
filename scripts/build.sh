#!/usr/bin/env bash
# Configures and builds kerntune into ./build (or $KERNTUNE_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KERNTUNE_BUILD_DIR:-$root/build}
jobs=${KERNTUNE_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j "$jobs"
