#!/usr/bin/env bash
# The test command: installs dependencies, builds, runs every test suite. GPU tests skip
# themselves on a machine without an NVIDIA driver and GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "${KERNTUNE_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${KERNTUNE_TEST_JOBS:-2}" --timeout 600 "$@"
